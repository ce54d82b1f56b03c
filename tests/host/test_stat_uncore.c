/*
 * test_stat_uncore.c - shell/stat_uncore.c against the software model's
 * uncore set (0F_04H with cfg.uncore): specs taken out of the -e list,
 * registers given, counting started and stopped through the bus, and the
 * 32-bit counts extended to 64 bits across a wrap by polling.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "pmu/model/p4_model.h"
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
	uint64_t v;

	(void)state;
	model_l3(true, 4);
	opts(&o, specs, 2);
	assert_int_equal(stat_unc_take(&o, &model.caps, &u, err, sizeof(err)), 0);
	assert_int_equal(stat_unc_start(&u, &model.bus, err, sizeof(err)), 0);
	assert_int_equal(p4_model_uncore_event(&model, P4_UNC_IBUSQ, IBUSQ_T0_FILL, 7), 0);
	stat_unc_stop(&u, &model.bus);
	assert_int_equal(u.ev[0].total, 7);
	assert_int_equal(u.ev[1].total, 0);		/* T1_match only: a T0 fill does not count */
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
	uint64_t v;

	(void)state;
	model_l3(true, 4);
	opts(&o, specs, 1);
	assert_int_equal(stat_unc_take(&o, &model.caps, &u, err, sizeof(err)), 0);
	assert_int_equal(stat_unc_start(&u, &model.bus, err, sizeof(err)), 0);
	for (unsigned k = 0; k < 5; k++) {		/* 5 x 3e9 events: four wraps */
		p4_model_uncore_event(&model, P4_UNC_IBUSQ, IBUSQ_T0_FILL, UINT64_C(3000000000));
		stat_unc_poll(&u, &model.bus);
	}
	assert_int_equal(msr_bus_read(&model.bus, MSR_P4_UNCORE_FIRST, &v), 0);
	assert_int_equal((uint32_t)v, (uint32_t)UINT64_C(15000000000));	/* the register wrapped */
	stat_unc_stop(&u, &model.bus);
	assert_true(model.uncore_wraps[0] >= 3);
	assert_int_equal(u.ev[0].total, UINT64_C(15000000000));
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
	assert_int_equal(stat_unc_start(&u, &model.bus, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "l3"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(take_keeps_core_events),
		cmocka_unit_test(take_refuses_with_the_reason),
		cmocka_unit_test(counts_and_stops),
		cmocka_unit_test(extends_across_the_32_bit_wrap),
		cmocka_unit_test(start_fails_cleanly_without_the_registers),
	};

	return cmocka_run_group_tests_name("stat_uncore", tests, NULL, NULL);
}
