/*
 * test_apply.c - register write order of p4_pmu_reset / p4_apply / p4_stop,
 * checked on a recording bus: CCCRs zeroed first, ESCRs only where the
 * model has them, CCCR disabled before its counter is touched, counters
 * written twice (Intel 249199 N15) and masked to 40 bits, read-back
 * mismatches counted - except the CCCR's sticky OVF bit, which a counter
 * that overflows while the plan is applied sets on its own.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "pmu/model/p4_model.h"
#include "pmu/p4_apply.h"
#include "pmu/p4_regs.h"
#include "tests/host/recbus.h"

static struct p4_caps caps_of(uint8_t model, uint8_t stepping)
{
	struct p4_caps c;

	assert_true(p4_caps_lookup(&(struct p4_sig){ 15, model, stepping }, &c));
	return c;
}

static void reset_order(void **state)
{
	struct p4_caps prescott = caps_of(4, 1), northwood = caps_of(2, 9);
	struct p4_apply_result res;
	struct recbus rb;
	unsigned k;

	recbus_init(&rb);
	p4_pmu_reset(&rb.bus, &prescott, &res);
	assert_int_equal(rb.nlog, 18 + 43 + 2);
	for (k = 0; k < 18; k++)
		assert_int_equal(rb.log[k].msr, 0x360 + k);	/* all CCCRs first */
	for (; k < 18 + 43; k++) {
		assert_true(rb.log[k].msr >= 0x3a0 && rb.log[k].msr <= 0x3e1);
		assert_true(rb.log[k].msr != 0x3ba && rb.log[k].msr != 0x3bb);
	}
	assert_int_equal(rb.log[k].msr, 0x3f1);
	assert_int_equal(rb.log[k + 1].msr, 0x3f2);
	for (k = 0; k < rb.nlog; k++)
		assert_int_equal(rb.log[k].value, 0);
	assert_int_equal(res.writes, rb.nlog);

	recbus_init(&rb);
	p4_pmu_reset(&rb.bus, &northwood, &res);
	assert_int_equal(rb.nlog, 18 + 45 + 2);
}

static struct p4_plan plan_of(const char *spec, bool pebs)
{
	struct p4_caps caps = caps_of(4, 1);
	struct p4_alloc_ctx ctx = { &caps, false, P4_SPLIT_GLOBAL };
	struct p4_request r = { 0 };
	struct p4_spec_error serr;
	struct p4_alloc_error err;
	struct p4_plan plan;

	assert_int_equal(p4_spec_parse(spec, NULL, &r.spec, &serr), 0);
	r.role = pebs ? P4_ROLE_PEBS : P4_ROLE_COUNT;
	if (p4_alloc_plan(&ctx, &r, 1, &plan, &err))
		fail_msg("%s", err.msg);
	return plan;
}

static bool refuse_iq_escrs(uint32_t msr)
{
	return msr == 0x3ba || msr == 0x3bb;	/* IQ_ESCR0/1: not on models 3-6 */
}

/*
 * A plan that takes every ESCR an IQ counter has on model 4 leaves its null
 * select at 0, IQ_ESCR0, which model 4 lacks: applying it writes no IQ ESCR
 * (selftest's ESCR check failed "programming the PMU failed: 2 faulting
 * accesses" on the model's #GP).
 */
static void missing_null_escr_is_not_cleared(void **state)
{
	struct p4_plan plan = plan_of("instr_retired", false);
	struct p4_apply_result res;
	struct recbus rb;

	plan.slot[0].cccr_quiet = 0;	/* select 0: IQ_ESCR0 for an IQ counter */
	assert_true(plan.slot[0].counter >= P4_IQ_COUNTER0);
	recbus_init(&rb);
	rb.refuse = refuse_iq_escrs;
	p4_apply(&rb.bus, &plan, &res);
	assert_int_equal(res.faults, 0);
	for (unsigned i = 0; i < rb.nlog; i++)
		assert_false(refuse_iq_escrs(rb.log[i].msr));
}

static void apply_one_event(void **state)
{
	/* PMU reference 2.4: global_power_events RUNNING on FSB_ESCR0 / counter 0 */
	/* BPU_ESCR0 (select 0), the null event's ESCR, cleared first (F13) */
	static const struct recbus_write want[] = {
		{ 0x3b2, 0 }, { 0x360, 0 }, { 0x3a2, 0x2600020c }, { 0x300, 0xffffffff38ull },
		{ 0x300, 0xffffffff38ull }, { 0x360, 0x0403d000 },
	};
	struct p4_plan plan = plan_of("global_power_events:running:period=200", false);
	struct p4_apply_result res;
	struct recbus rb;

	recbus_init(&rb);
	p4_apply(&rb.bus, &plan, &res);
	assert_int_equal(rb.nlog, 6);
	for (unsigned i = 0; i < 6; i++) {
		assert_int_equal(rb.log[i].msr, want[i].msr);
		assert_int_equal(rb.log[i].value, want[i].value);
	}
	assert_int_equal(res.mismatches, 0);
	assert_int_equal(res.faults, 0);
	assert_int_equal(res.writes, 6);

	recbus_clear_log(&rb);
	p4_stop(&rb.bus, &plan, &res);
	assert_int_equal(rb.nlog, 1);
	assert_int_equal(rb.log[0].msr, 0x360);
	assert_int_equal(rb.log[0].value, 0);
}

/* p4_apply_gated: the same writes, the CCCR's last one without Enable, and no mismatch. */
static void apply_gated_leaves_enable_clear(void **state)
{
	struct p4_plan plan = plan_of("global_power_events:running:period=200", false);
	struct p4_apply_result res;
	struct recbus rb;

	recbus_init(&rb);
	p4_apply_gated(&rb.bus, &plan, &res);
	assert_int_equal(rb.nlog, 6);
	assert_int_equal(rb.log[5].msr, 0x360);
	assert_int_equal(rb.log[5].value, 0x0403d000 & ~CCCR_ENABLE);
	assert_int_equal(plan.slot[0].cccr_value, 0x0403d000);	/* what the gate writes to open */
	assert_int_equal(res.mismatches, 0);
	assert_int_equal(res.faults, 0);
}

static void readback_mismatch_and_faults_counted(void **state)
{
	struct p4_plan plan = plan_of("global_power_events:running:period=200", false);
	struct p4_apply_result res;
	struct recbus rb;
	uint64_t v;

	recbus_init(&rb);
	rb.corrupt_msr = 0x360;
	rb.corrupt_xor = CCCR_ENABLE;	/* the Enable bit does not stick */
	p4_apply(&rb.bus, &plan, &res);
	assert_int_equal(res.mismatches, 1);

	recbus_init(&rb);
	rb.refuse = NULL;
	rb.corrupt_msr = 0x3a2;
	rb.corrupt_xor = 1;
	p4_apply(&rb.bus, &plan, &res);
	assert_int_equal(res.mismatches, 1);

	/* the counter reads back masked to 40 bits */
	recbus_init(&rb);
	rb.bus.write(&rb.bus, 0x300, 0xffffffffffffff38ull);
	assert_int_equal(p4_counter_read(&rb.bus, P4_BPU_COUNTER0, &v), 0);
	assert_int_equal(v, 0xffffffff38ull);
}

/*
 * A counter enabled with FORCE_OVF (or a short period) may overflow before
 * the read-back: OVF (CCCR bit 31, sticky) is then set by the hardware, not
 * lost from the write, and is no mismatch. Any other difference still is.
 */
static void ovf_set_during_apply_is_no_mismatch(void **state)
{
	struct p4_plan plan = plan_of("global_power_events:running:force_ovf", false);
	struct p4_apply_result res;
	struct recbus rb;

	assert_true(plan.slot[0].cccr_value & CCCR_FORCE_OVF);
	assert_false(plan.slot[0].cccr_value & CCCR_OVF);
	recbus_init(&rb);
	rb.corrupt_msr = 0x360;
	rb.corrupt_xor = CCCR_OVF;		/* OVF reads back set */
	p4_apply(&rb.bus, &plan, &res);
	assert_int_equal(res.mismatches, 0);
	assert_int_equal(res.faults, 0);

	recbus_init(&rb);
	rb.corrupt_msr = 0x360;
	rb.corrupt_xor = CCCR_OVF | CCCR_ENABLE;	/* OVF set, but Enable lost */
	p4_apply(&rb.bus, &plan, &res);
	assert_int_equal(res.mismatches, 1);

	/* an ESCR's bit 31 is reserved, not OVF: still compared */
	recbus_init(&rb);
	rb.corrupt_msr = 0x3a2;
	rb.corrupt_xor = BIT(31);
	p4_apply(&rb.bus, &plan, &res);
	assert_int_equal(res.mismatches, 1);
}

/* The model behind a bus on which the core runs one cycle per access. */
struct running_bus {
	struct msr_bus bus;		/* first member */
	struct p4_model *m;
};

static void running_bus_cycle(struct p4_model *m)
{
	assert_int_equal(p4_model_event(m, 0, 3, P4_EV_GLOBAL_POWER_EVENTS,
					P4_EVMASK(P4_GLOBAL_POWER_EVENTS_RUNNING), 1), 0);
	p4_model_tick(m, 1);
}

static int running_bus_read(struct msr_bus *bus, uint32_t msr, uint64_t *value)
{
	struct running_bus *rb = (struct running_bus *)bus;

	running_bus_cycle(rb->m);
	return msr_bus_read(&rb->m->bus, msr, value);
}

static int running_bus_write(struct msr_bus *bus, uint32_t msr, uint64_t value)
{
	struct running_bus *rb = (struct running_bus *)bus;
	int r = msr_bus_write(&rb->m->bus, msr, value);

	running_bus_cycle(rb->m);
	return r;
}

/* The same on the PMU model: the counter really overflows between enable and read-back. */
static void model_overflow_during_apply_is_no_mismatch(void **state)
{
	/* the cycles of a ring-3 workload (running_bus_cycle) */
	static const char *const specs[] = {
		"global_power_events:running:force_ovf",
		"global_power_events:running:u:period=1",	/* :k: refused (P4_PMI_TAIL_MAX) */
	};
	struct p4_model_config cfg = { .sig = { 15, 4, 1 } };

	for (unsigned i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		struct p4_plan plan = plan_of(specs[i], false);
		struct p4_model m;
		struct running_bus rb = { { running_bus_read, running_bus_write }, &m };
		struct p4_apply_result res;
		enum p4_counter c = plan.slot[0].counter;

		assert_int_equal(p4_model_init(&m, &cfg), 0);
		p4_apply(&rb.bus, &plan, &res);
		assert_true(m.cccr[c] & CCCR_OVF);	/* it did overflow */
		assert_true(m.overflows[c] >= 1);
		assert_int_equal(res.faults, 0);
		assert_int_equal(res.mismatches, 0);
	}
}

static bool refuse_escrs(uint32_t msr)
{
	return msr >= 0x3a0 && msr <= 0x3e1;
}

static void faults_are_counted(void **state)
{
	struct p4_plan plan = plan_of("global_power_events:running", false);
	struct p4_apply_result res;
	struct recbus rb;

	recbus_init(&rb);
	rb.refuse = refuse_escrs;
	p4_apply(&rb.bus, &plan, &res);
	/* the null event's BPU_ESCR0 cleared, FSB_ESCR0 written and read back */
	assert_int_equal(res.faults, 3);
}

/*
 * F6: counter 12 starts counter 14 (bit 30). The verify leaves the cascaded
 * CCCR's Enable out (SDM Example 18-1: the start "automatically enables"
 * it, and a short starter may overflow during the verify); the stop writes
 * the partner before the starter, so the partner counts nothing of the
 * kernel's code between the two writes.
 */
static void cascade_verify_and_stop_order(void **state)
{
	struct p4_caps caps = caps_of(4, 1);
	struct p4_alloc_ctx ctx = { &caps, false, P4_SPLIT_GLOBAL };
	struct p4_request r[2];
	struct p4_spec_error serr;
	struct p4_alloc_error err;
	struct p4_apply_result res;
	struct p4_plan plan;
	struct recbus rb;

	memset(r, 0, sizeof(r));
	assert_int_equal(p4_spec_parse("instr_retired:period=10", NULL, &r[0].spec, &serr), 0);
	assert_int_equal(p4_spec_parse("instr_retired", NULL, &r[1].spec, &serr), 0);
	r[1].role = P4_ROLE_CASCADE;
	r[1].started_by = 0;
	if (p4_alloc_plan(&ctx, r, 2, &plan, &err))
		fail_msg("%s", err.msg);
	assert_non_null(plan.slot[1].link);
	assert_false(plan.slot[1].cccr_value & CCCR_ENABLE);
	recbus_init(&rb);
	rb.corrupt_msr = p4_counters[plan.slot[1].counter].cccr_msr;
	rb.corrupt_xor = CCCR_ENABLE;		/* started during the verify: Enable reads 1 */
	p4_apply(&rb.bus, &plan, &res);
	assert_int_equal(res.mismatches, 0);
	recbus_clear_log(&rb);
	p4_stop(&rb.bus, &plan, &res);
	assert_int_equal(rb.nlog, 2);
	assert_int_equal(rb.log[0].msr, p4_counters[plan.slot[1].counter].cccr_msr);
	assert_int_equal(rb.log[1].msr, p4_counters[plan.slot[0].counter].cccr_msr);
	/* the restart value after its overflow: Enable set, the cascade bits clear */
	assert_int_equal(p4_cccr_restart(&plan, 1),
			 (plan.slot[1].cccr_value | CCCR_ENABLE) & ~(CCCR_CASCADE | CCCR_EXT_CASCADE));
	assert_int_equal(p4_cccr_restart(&plan, 0), plan.slot[0].cccr_value);
	/*
	 * G7: a start that also clears the partner's Cascade bit (whether
	 * hardware does is not written down) is no mismatch either; the same
	 * bit read back wrong on the starter, which is not linked, still is.
	 */
	recbus_init(&rb);
	rb.corrupt_msr = p4_counters[plan.slot[1].counter].cccr_msr;
	rb.corrupt_xor = CCCR_ENABLE | CCCR_CASCADE;
	p4_apply(&rb.bus, &plan, &res);
	assert_int_equal(res.mismatches, 0);
	recbus_init(&rb);
	rb.corrupt_msr = p4_counters[plan.slot[0].counter].cccr_msr;
	rb.corrupt_xor = CCCR_CASCADE;
	p4_apply(&rb.bus, &plan, &res);
	assert_int_equal(res.mismatches, 1);
}

static void pebs_enable_before_cccr(void **state)
{
	struct p4_plan plan = plan_of("replay_event:nbogus:period=1000", true);
	struct p4_apply_result res;
	struct recbus rb;

	plan.ds_area_set = true;
	recbus_init(&rb);
	p4_apply(&rb.bus, &plan, &res);
	assert_false(res.pebs_refused);
	assert_int_equal(rb.nlog, 7);
	assert_int_equal(rb.log[0].msr, 0x3ca);		/* ALF_ESCR0, the null event's, cleared */
	assert_int_equal(rb.log[0].value, 0);
	assert_int_equal(rb.log[1].msr, 0x370);		/* IQ_CCCR4 off */
	assert_int_equal(rb.log[2].msr, 0x3cc);		/* CRU_ESCR2 */
	assert_int_equal(rb.log[2].value, 0x1200020c);	/* PMU reference 2.4 */
	assert_int_equal(rb.log[3].msr, 0x310);
	assert_int_equal(rb.log[4].msr, 0x310);
	assert_int_equal(rb.log[5].msr, 0x3f1);
	assert_int_equal(rb.log[5].value, 0x03000000);	/* bit 25, MY_THR, and bit 24 (F10) */
	assert_int_equal(rb.log[6].msr, 0x370);
	assert_int_equal(rb.log[6].value, 0x0003b000);	/* no OVF_PMI on a PEBS counter (F4) */
}

/* Without a DS save area in place PEBS_ENABLE is left alone, and said so. */
static void pebs_refused_without_ds_area(void **state)
{
	struct p4_plan plan = plan_of("front_end_event:nbogus:period=1000", true);
	struct p4_apply_result res;
	struct recbus rb;

	recbus_init(&rb);
	p4_apply(&rb.bus, &plan, &res);
	assert_true(res.pebs_refused);
	for (unsigned k = 0; k < rb.nlog; k++)
		assert_int_not_equal(rb.log[k].msr, 0x3f1);
	/* a plan without PEBS is never refused */
	plan = plan_of("front_end_event:nbogus:period=1000", false);
	p4_apply(&rb.bus, &plan, &res);
	assert_false(res.pebs_refused);
}

/*
 * SDM 18.16.3: the bits are relative to the writing LP. LP1's PEBS written
 * from LP0 is OTH_THR; the sibling's MY_THR and metric bits stay set.
 */
static void pebs_enable_relative_and_kept(void **state)
{
	struct p4_plan plan = plan_of("execution_event:nbogus0:t1:period=1000", true);
	struct p4_apply_result res;
	struct recbus rb;

	plan.req[0].lp = P4_LP1;
	plan.ds_area_set = true;
	plan.writer_lp = 0;
	recbus_init(&rb);
	msr_bus_write(&rb.bus, 0x3f1, 0x01000001);	/* the sibling's replay metric */
	msr_bus_write(&rb.bus, 0x3f2, 0x1);
	recbus_clear_log(&rb);
	p4_apply(&rb.bus, &plan, &res);
	assert_int_equal(recbus_value(&rb, 0x3f1), 0x01000001 | 0x04000000);
	assert_int_equal(recbus_value(&rb, 0x3f2), 0x1);
	/* the same LP1 request written from LP1 is MY_THR */
	plan.writer_lp = 1;
	recbus_init(&rb);
	p4_apply(&rb.bus, &plan, &res);
	assert_int_equal(recbus_value(&rb, 0x3f1), 0x03000000);
	/* a replay metric replaces an older one; thread bits stay; none without PEBS */
	plan = plan_of("replay_event:nbogus", false);
	plan.pebs_metric = 0x01000004;
	plan.matrix_vert = 0x2;
	recbus_init(&rb);
	msr_bus_write(&rb.bus, 0x3f1, 0x05000001);	/* old metric, sibling's OTH_THR */
	msr_bus_write(&rb.bus, 0x3f2, 0x1);
	p4_apply(&rb.bus, &plan, &res);
	assert_int_equal(recbus_value(&rb, 0x3f1), 0x05000004);
	assert_int_equal(recbus_value(&rb, 0x3f2), 0x2);
}

/*
 * The handler's reload (O8, N15): the CCCR goes to a null event first -
 * counter 0 with FSB_ESCR0 (select 6) in the plan gets select 0, the
 * unused BPU_ESCR0 (PMU reference 2.1 counter/ESCR table) - then the counter
 * twice, then the CCCR value the caller gives.
 */
static void reload_quiets_the_counter_first(void **state)
{
	struct p4_plan plan = plan_of("global_power_events:RUNNING", false);
	static const struct recbus_write want[] = {
		{ 0x360, 0 },				/* BPU_CCCR0: select 0, Enable clear */
		{ 0x300, 0xffffffff9cull },		/* -100 in 40 bits, twice */
		{ 0x300, 0xffffffff9cull },
		{ 0x360, 0x3d000 },			/* the caller's CCCR back */
	};
	struct recbus rb;
	uint64_t mism = 0;

	assert_int_equal(plan.slot[0].counter, P4_BPU_COUNTER0);
	assert_int_equal(plan.slot[0].escr, P4_FSB_ESCR0);
	recbus_init(&rb);
	assert_int_equal(p4_counter_quiet(&rb.bus, &plan, 0), 0);
	p4_counter_reload(&rb.bus, &plan, 0, -UINT64_C(100), 0x3d000, &mism);
	assert_int_equal(rb.nlog, 4);
	for (unsigned i = 0; i < rb.nlog; i++) {
		assert_int_equal(rb.log[i].msr, want[i].msr);
		assert_int_equal(rb.log[i].value, want[i].value);
	}
	assert_int_equal(mism, 0);
}

/* A counter that reads back different after the two writes is written a third time. */
static void reload_rewrites_a_lost_write(void **state)
{
	struct p4_plan plan = plan_of("global_power_events:RUNNING", false);
	struct recbus rb;
	uint64_t mism = 0;

	recbus_init(&rb);
	rb.corrupt_msr = 0x300;
	rb.corrupt_xor = 1;
	p4_counter_reload(&rb.bus, &plan, 0, 1000, 0x3d000, &mism);
	assert_int_equal(mism, 1);
	assert_int_equal(rb.nlog, 4);
	assert_int_equal(rb.log[2].msr, 0x300);
	assert_int_equal(rb.log[2].value, 1000);
	assert_int_equal(rb.log[3].msr, 0x360);
}

/* Quiet selects skip ESCRs in the plan and the IQ_ESCRs later models lack. */
static void quiet_select_avoids_used_and_missing_escrs(void **state)
{
	struct p4_plan plan = plan_of("instr_retired", false);	/* CRU_ESCR0/1, select 4 */

	assert_int_equal(plan.slot[0].escr, P4_CRU_ESCR0);	/* an IQ-block counter (12, 13 or 16) */
	/* select 0 is IQ_ESCR0/1 (models 0-2 only): select 1, ALF_ESCR */
	assert_int_equal(p4_cccr_quiet(&plan, 0), UINT64_C(1) << 13);
	plan = plan_of("global_power_events:RUNNING", false);
	plan.slot[0].escr = P4_BPU_ESCR0;	/* pretend select 0 is taken */
	assert_int_equal(p4_cccr_quiet(&plan, 0), UINT64_C(1) << 13);	/* IS_ESCR0 */
}

/* O9: a stop on the carry from bit 31 to bit 32 reads 2^32 short; the running read fixes it. */
static void settle_recovers_a_lost_carry(void **state)
{
	assert_int_equal(p4_counter_settle(0x00fffffff0ull, 0x0100000010ull), 0x0100000010ull);
	assert_int_equal(p4_counter_settle(0x00fffffff0ull, 0x0000000010ull), 0x0100000010ull);
	assert_int_equal(p4_counter_settle(0xfffffffff0ull, 0xff00000005ull), 0x0000000005ull);
	assert_int_equal(p4_counter_settle(1234, 1234), 1234);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cascade_verify_and_stop_order),
		cmocka_unit_test(reset_order),
		cmocka_unit_test(apply_one_event),
		cmocka_unit_test(apply_gated_leaves_enable_clear),
		cmocka_unit_test(readback_mismatch_and_faults_counted),
		cmocka_unit_test(ovf_set_during_apply_is_no_mismatch),
		cmocka_unit_test(model_overflow_during_apply_is_no_mismatch),
		cmocka_unit_test(faults_are_counted),
		cmocka_unit_test(pebs_enable_before_cccr),
		cmocka_unit_test(pebs_refused_without_ds_area),
		cmocka_unit_test(pebs_enable_relative_and_kept),
		cmocka_unit_test(reload_quiets_the_counter_first),
		cmocka_unit_test(reload_rewrites_a_lost_write),
		cmocka_unit_test(quiet_select_avoids_used_and_missing_escrs),
		cmocka_unit_test(missing_null_escr_is_not_cleared),
		cmocka_unit_test(settle_recovers_a_lost_carry),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
