/*
 * test_probe.c - the hardware backend's probe (pmu/p4_probe.c): it touches
 * no PMU register unless IA32_MISC_ENABLE bit 7 says there is a PMU, it
 * refuses a counter that does not count, accepts one that does (the model,
 * ticked by the wait), and leaves what it wrote zeroed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "pmu/model/p4_model.h"
#include "pmu/p4_probe.h"
#include "pmu/p4_regs.h"
#include "tests/host/recbus.h"

static void no_wait(void *ctx)
{
	(void)ctx;
}

/* A running core: clockticks of global_power_events:RUNNING, as the kernel's model feed gives. */
static void tick_model(void *ctx)
{
	p4_model_event(ctx, 0, 0, P4_EV_GLOBAL_POWER_EVENTS,
		       P4_EVMASK(P4_GLOBAL_POWER_EVENTS_RUNNING), 1000);
	p4_model_tick(ctx, 1000);
}

static void misc_bit7_clear_touches_nothing(void **state)
{
	struct recbus rb;
	struct p4_probe_env env = { .misc_ok = true, .misc_enable = MISC_ENABLE_BTS_UNAVAIL |
				    MISC_ENABLE_PEBS_UNAVAIL, .wait = no_wait };
	char why[128];

	recbus_init(&rb);
	env.bus = &rb.bus;
	assert_int_equal(p4_probe(&env, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "bit 7"));
	assert_int_equal(rb.nlog, 0);
	assert_int_equal(rb.reads, 0);

	env.misc_ok = false;
	env.misc_enable = MISC_ENABLE_PERFMON;	/* a value that was not read counts for nothing */
	assert_int_equal(p4_probe(&env, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "unreadable"));
	assert_int_equal(rb.nlog, 0);
}

static void counter_that_stays_zero_is_refused_and_cleaned_up(void **state)
{
	struct recbus rb;
	struct p4_probe_env env = { .misc_ok = true, .misc_enable = MISC_ENABLE_PERFMON,
				    .wait = no_wait };
	char why[128];

	recbus_init(&rb);
	env.bus = &rb.bus;
	assert_int_equal(p4_probe(&env, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "stayed 0"));
	assert_true(rb.nlog >= 6);
	assert_int_equal(recbus_value(&rb, MSR_BPU_CCCR0), 0);
	assert_int_equal(recbus_value(&rb, 0x3a2), 0);		/* FSB_ESCR0 */
}

static void counting_pmu_is_accepted(void **state)
{
	static struct p4_model m;
	struct p4_model_config cfg = { .sig = { 0x0f, 4, 1 } };
	struct p4_probe_env env = { .misc_ok = true, .misc_enable = MISC_ENABLE_PERFMON,
				    .wait = tick_model, .ctx = &m };
	char why[128] = "";

	assert_int_equal(p4_model_init(&m, &cfg), 0);
	p4_model_set_active(&m, 0, true);
	env.bus = &m.bus;
	assert_int_equal(p4_probe(&env, why, sizeof(why)), 0);
	assert_int_equal(m.cccr[0], 0);		/* stopped again */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(misc_bit7_clear_touches_nothing),
		cmocka_unit_test(counter_that_stays_zero_is_refused_and_cleaned_up),
		cmocka_unit_test(counting_pmu_is_accepted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
