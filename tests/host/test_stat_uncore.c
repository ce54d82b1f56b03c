/*
 * test_stat_uncore.c - shell/stat_uncore.c against the software model's
 * uncore set (0F_04H with cfg.uncore): specs taken out of the -e list,
 * registers given and put into the plan, and that plan's uncore part
 * started and stopped through the bus as perf_count_start/stop do
 * (pmu/p4_apply.c: p4_unc_start, p4_unc_poll, p4_unc_stop), the 32-bit
 * counts extended to 64 bits across a wrap by polling.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "pmu/model/p4_model.h"
#include "pmu/p4_apply.h"
#include "pmu/p4_regs.h"
#include "shell/stat_uncore.h"

#define IBUSQ_T0_FILL	((UINT64_C(1) << 36) | (UINT64_C(0xff) << 38) | (UINT64_C(1) << 46) | \
			 (UINT64_C(0x7f) << 49) | (UINT64_C(1) << 57))

static struct p4_model model;

static void model_l3(bool uncore, uint8_t mdl)
{
	struct p4_model_config cfg = { .sig = { 0x0f, mdl, 1 }, .uncore = uncore };

	assert_int_equal(p4_model_init(&model, &cfg), 0);
}

static struct p4_plan plan;

/* The uncore part of a plan, as stat puts it there (the core part is not needed here). */
static void plan_of(const struct stat_unc *u)
{
	plan = (struct p4_plan){ 0 };
	stat_unc_plan(u, &plan);
}

static void opts(struct stat_opts *o, const char *const *specs, unsigned n)
{
	*o = (struct stat_opts){ .nev = n };
	for (unsigned i = 0; i < n; i++)
		o->ev[i] = (struct stat_event_opt){ .spec = specs[i] };
}

static void take_keeps_core_events(void **state)
{
	static const char *const specs[] = { "instr_retired", "ibusq", "efsb:other", "ibusq:fill=1" };
	struct stat_opts o;
	struct stat_unc u;
	char err[200];

	(void)state;
	model_l3(true, 4);
	opts(&o, specs, 4);
	assert_int_equal(stat_unc_take(&o, &model.caps, &u, err, sizeof(err)), 0);
	assert_int_equal(o.nev, 1);
	assert_string_equal(o.ev[0].spec, "instr_retired");
	assert_int_equal(u.n, 3);
	assert_int_equal(u.ev[0].reg, 0);	/* IFSB_BUSQ0 */
	assert_int_equal(u.ev[1].reg, 4);	/* EFSB_DRDY0 */
	assert_int_equal(u.ev[2].reg, 1);	/* IFSB_BUSQ1 */
}

/* stat_unc_plan: every uncore event into plan.unc, in order, counting from 0. */
static void plan_holds_the_uncore_events(void **state)
{
	static const char *const specs[] = { "ibusq", "efsb:other", "ibusq:fill=1" };
	struct stat_opts o;
	struct stat_unc u;
	char err[200];

	(void)state;
	model_l3(true, 4);
	opts(&o, specs, 3);
	assert_int_equal(stat_unc_take(&o, &model.caps, &u, err, sizeof(err)), 0);
	plan_of(&u);
	assert_int_equal(plan.unc_n, 3);
	for (unsigned i = 0; i < 3; i++) {
		assert_int_equal(plan.unc[i].reg, u.ev[i].reg);
		assert_int_equal(plan.unc[i].start, p4_unc_encode(&u.ev[i].spec, 0));
		assert_int_equal((uint32_t)plan.unc[i].start, 0);	/* counts from 0 */
		assert_true(plan.unc[i].start >> 32 != 0);		/* a control word: it counts */
	}
	assert_int_equal(plan.unc[0].reg, 0);	/* IBUSQ0 */
	assert_int_equal(plan.unc[2].reg, 1);	/* IBUSQ1: the first is taken */
}

static void take_refuses_with_the_reason(void **state)
{
	static const char *const three[] = { "ibusq", "ibusq", "ibusq" };
	static const char *const bad[] = { "instr_retired", "ibusq:nosuch" };
	static const char *const lat[] = { "ibusq_lat" };
	struct stat_opts o;
	struct stat_unc u;
	char err[200];

	(void)state;
	model_l3(true, 4);
	opts(&o, three, 3);
	assert_int_equal(stat_unc_take(&o, &model.caps, &u, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "taken"));
	assert_int_equal(o.nev, 3);			/* unchanged */
	opts(&o, bad, 2);
	assert_int_equal(stat_unc_take(&o, &model.caps, &u, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "nosuch"));
	assert_int_equal(o.nev, 2);
	opts(&o, lat, 1);
	assert_int_equal(stat_unc_take(&o, &model.caps, &u, err, sizeof(err)), -1);
	model_l3(false, 2);				/* 0F_02: no uncore set at all */
	opts(&o, three, 1);
	assert_int_equal(stat_unc_take(&o, &model.caps, &u, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "0F_02H"));
}

static void counts_and_stops(void **state)
{
	static const char *const specs[] = { "ibusq:t0", "ibusq:t1" };
	struct stat_opts o;
	struct stat_unc u;
	char err[200];
	uint64_t v, totals[P4_UNC_NREG] = { 0 };

	(void)state;
	model_l3(true, 4);
	opts(&o, specs, 2);
	assert_int_equal(stat_unc_take(&o, &model.caps, &u, err, sizeof(err)), 0);
	plan_of(&u);
	assert_int_equal(p4_unc_start(&model.bus, &plan), -1);
	assert_int_equal(p4_model_uncore_event(&model, P4_UNC_IBUSQ, IBUSQ_T0_FILL, 7), 0);
	p4_unc_stop(&model.bus, &plan, totals);
	assert_int_equal(totals[0], 7);
	assert_int_equal(totals[1], 0);			/* T1_match only: a T0 fill does not count */
	assert_int_equal(msr_bus_read(&model.bus, MSR_P4_UNCORE_FIRST, &v), 0);
	assert_int_equal(v, 0);				/* stopped: the whole register written 0 */
	p4_model_uncore_event(&model, P4_UNC_IBUSQ, IBUSQ_T0_FILL, 5);
	assert_int_equal(msr_bus_read(&model.bus, MSR_P4_UNCORE_FIRST, &v), 0);
	assert_int_equal(v, 0);				/* nothing counted while stopped */
}

static void extends_across_the_32_bit_wrap(void **state)
{
	static const char *const specs[] = { "ibusq" };
	struct stat_opts o;
	struct stat_unc u;
	char err[200];
	uint64_t v, totals[P4_UNC_NREG] = { 0 };

	(void)state;
	model_l3(true, 4);
	opts(&o, specs, 1);
	assert_int_equal(stat_unc_take(&o, &model.caps, &u, err, sizeof(err)), 0);
	plan_of(&u);
	assert_int_equal(p4_unc_start(&model.bus, &plan), -1);
	for (unsigned k = 0; k < 5; k++) {		/* 5 x 3e9 events: four wraps */
		p4_model_uncore_event(&model, P4_UNC_IBUSQ, IBUSQ_T0_FILL, UINT64_C(3000000000));
		p4_unc_poll(&model.bus, &plan, totals);
	}
	assert_int_equal(msr_bus_read(&model.bus, MSR_P4_UNCORE_FIRST, &v), 0);
	assert_int_equal((uint32_t)v, (uint32_t)UINT64_C(15000000000));	/* the register wrapped */
	p4_unc_stop(&model.bus, &plan, totals);
	assert_true(model.uncore_wraps[0] >= 3);
	assert_int_equal(totals[0], UINT64_C(15000000000));
}

static void start_fails_cleanly_without_the_registers(void **state)
{
	static const char *const specs[] = { "ibusq" };
	struct stat_opts o;
	struct stat_unc u;
	char err[200];

	(void)state;
	model_l3(false, 4);		/* caps say IFSB/EFSB, but this model has no L3 part */
	opts(&o, specs, 1);
	assert_int_equal(stat_unc_take(&o, &model.caps, &u, err, sizeof(err)), 0);
	plan_of(&u);
	assert_int_equal(p4_unc_start(&model.bus, &plan), 0);	/* the first one faulted */
	stat_unc_start_error(&u, 0, err, sizeof(err));
	assert_string_equal(err, "'ibusq': writing 107CCH failed: this part has no uncore counters "
			    "(the model has them on 0F_03/0F_04 with an L3: 'pmu backend model 0F_04 l3')");
}

/* The model's bus, except that writes to one MSR fault. */
static uint32_t faulting_msr;

static int faulting_read(struct msr_bus *bus, uint32_t msr, uint64_t *v)
{
	return msr_bus_read(&model.bus, msr, v);
}

static int faulting_write(struct msr_bus *bus, uint32_t msr, uint64_t v)
{
	return msr == faulting_msr ? MSR_BUS_EFAULT : msr_bus_write(&model.bus, msr, v);
}

static struct msr_bus faulting_bus = { .read = faulting_read, .write = faulting_write };

/* A start that faults half-way stops the registers it already started. */
static void start_fault_stops_what_started(void **state)
{
	static const char *const specs[] = { "ibusq", "isnpq" };
	struct stat_opts o;
	struct stat_unc u;
	char err[200];
	uint64_t v;

	(void)state;
	model_l3(true, 4);
	opts(&o, specs, 2);
	assert_int_equal(stat_unc_take(&o, &model.caps, &u, err, sizeof(err)), 0);
	plan_of(&u);
	faulting_msr = MSR_P4_UNCORE_FIRST + plan.unc[1].reg;
	assert_int_equal(p4_unc_start(&faulting_bus, &plan), 1);
	assert_int_equal(msr_bus_read(&model.bus, MSR_P4_UNCORE_FIRST + plan.unc[0].reg, &v), 0);
	assert_int_equal(v, 0);				/* the first one stopped again */
	assert_int_equal(p4_model_uncore_event(&model, P4_UNC_IBUSQ, IBUSQ_T0_FILL, 3), 0);
	assert_int_equal(msr_bus_read(&model.bus, MSR_P4_UNCORE_FIRST + plan.unc[0].reg, &v), 0);
	assert_int_equal(v, 0);				/* and does not count */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(take_keeps_core_events),
		cmocka_unit_test(take_refuses_with_the_reason),
		cmocka_unit_test(counts_and_stops),
		cmocka_unit_test(extends_across_the_32_bit_wrap),
		cmocka_unit_test(start_fails_cleanly_without_the_registers),
		cmocka_unit_test(start_fault_stops_what_started),
		cmocka_unit_test(plan_holds_the_uncore_events),
	};

	return cmocka_run_group_tests_name("stat_uncore", tests, NULL, NULL);
}
