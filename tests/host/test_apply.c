/*
 * test_apply.c - register write order of p4_pmu_reset / p4_apply / p4_stop,
 * checked on a recording bus: CCCRs zeroed first, ESCRs only where the
 * model has them, CCCR disabled before its counter is touched, counters
 * written twice (Intel 249199 N15) and masked to 40 bits, read-back
 * mismatches counted.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

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

static void apply_one_event(void **state)
{
	/* fact sheet 2.4: global_power_events RUNNING on FSB_ESCR0 / counter 0 */
	static const struct recbus_write want[] = {
		{ 0x360, 0 }, { 0x3a2, 0x2600020c }, { 0x300, 0xffffffff38ull },
		{ 0x300, 0xffffffff38ull }, { 0x360, 0x0403d000 },
	};
	struct p4_plan plan = plan_of("global_power_events:running:period=200", false);
	struct p4_apply_result res;
	struct recbus rb;

	recbus_init(&rb);
	p4_apply(&rb.bus, &plan, &res);
	assert_int_equal(rb.nlog, 5);
	for (unsigned i = 0; i < 5; i++) {
		assert_int_equal(rb.log[i].msr, want[i].msr);
		assert_int_equal(rb.log[i].value, want[i].value);
	}
	assert_int_equal(res.mismatches, 0);
	assert_int_equal(res.faults, 0);
	assert_int_equal(res.writes, 5);

	recbus_clear_log(&rb);
	p4_stop(&rb.bus, &plan, &res);
	assert_int_equal(rb.nlog, 1);
	assert_int_equal(rb.log[0].msr, 0x360);
	assert_int_equal(rb.log[0].value, 0);
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
	assert_int_equal(res.faults, 2);	/* the write and the read-back of FSB_ESCR0 */
}

static void pebs_enable_before_cccr(void **state)
{
	struct p4_plan plan = plan_of("replay_event:nbogus:period=1000", true);
	struct p4_apply_result res;
	struct recbus rb;

	recbus_init(&rb);
	p4_apply(&rb.bus, &plan, &res);
	assert_int_equal(rb.nlog, 6);
	assert_int_equal(rb.log[0].msr, 0x370);		/* IQ_CCCR4 off */
	assert_int_equal(rb.log[1].msr, 0x3cc);		/* CRU_ESCR2 */
	assert_int_equal(rb.log[1].value, 0x1200020c);	/* fact sheet 2.4 */
	assert_int_equal(rb.log[2].msr, 0x310);
	assert_int_equal(rb.log[3].msr, 0x310);
	assert_int_equal(rb.log[4].msr, 0x3f1);
	assert_int_equal(rb.log[4].value, 0x02000000);	/* bit 25, MY_THR */
	assert_int_equal(rb.log[5].msr, 0x370);
	assert_int_equal(rb.log[5].value, 0x0403b000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reset_order),
		cmocka_unit_test(apply_one_event),
		cmocka_unit_test(readback_mismatch_and_faults_counted),
		cmocka_unit_test(faults_are_counted),
		cmocka_unit_test(pebs_enable_before_cccr),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
