/*
 * test_probe.c - the hardware backend's probe (pmu/p4_probe.c): it touches
 * no PMU register unless IA32_MISC_ENABLE bit 7 says there is a PMU, it
 * refuses a counter that does not count, one stuck at a non-zero value, one
 * that counts faster than the TSC or far slower, accepts one that counts
 * the work (the model, ticked by the wait), and leaves what it wrote zeroed.
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

/* The probe's world: a TSC the wait moves on, and a model core running `cycles` meanwhile. */
struct probe_world {
	struct p4_model *m;
	uint64_t tsc, wait_tsc, cycles;
};

static void world_wait(void *ctx)
{
	struct probe_world *w = ctx;

	w->tsc += w->wait_tsc;
	if (w->m && w->cycles) {
		p4_model_event(w->m, 0, 0, P4_EV_GLOBAL_POWER_EVENTS,
			       P4_EVMASK(P4_GLOBAL_POWER_EVENTS_RUNNING), w->cycles);
		p4_model_tick(w->m, w->cycles);
	}
}

static uint64_t world_now(void *ctx)
{
	return ((struct probe_world *)ctx)->tsc;
}

static void no_wait(void *ctx)
{
	world_wait(ctx);
}

static void misc_bit7_clear_touches_nothing(void **state)
{
	struct recbus rb;
	struct probe_world w = { .wait_tsc = 1000 };
	struct p4_probe_env env = { .misc_ok = true, .misc_enable = MISC_ENABLE_BTS_UNAVAIL |
				    MISC_ENABLE_PEBS_UNAVAIL, .wait = no_wait, .now = world_now,
				    .ctx = &w };
	char why[160];

	recbus_init(&rb);
	env.bus = &rb.bus;
	assert_int_equal(p4_probe(&env, why, sizeof(why)), P4_PROBE_ABSENT);
	assert_non_null(strstr(why, "bit 7"));
	assert_int_equal(rb.nlog, 0);
	assert_int_equal(rb.reads, 0);

	env.misc_ok = false;
	env.misc_enable = MISC_ENABLE_PERFMON;	/* a value that was not read counts for nothing */
	assert_int_equal(p4_probe(&env, why, sizeof(why)), P4_PROBE_ABSENT);
	assert_non_null(strstr(why, "unreadable"));
	assert_int_equal(rb.nlog, 0);
}

static void counter_that_stays_zero_is_refused_and_cleaned_up(void **state)
{
	struct recbus rb;
	struct probe_world w = { .wait_tsc = 200000 };
	struct p4_probe_env env = { .misc_ok = true, .misc_enable = MISC_ENABLE_PERFMON,
				    .wait = no_wait, .now = world_now, .ctx = &w };
	char why[160];

	recbus_init(&rb);
	env.bus = &rb.bus;
	assert_int_equal(p4_probe(&env, why, sizeof(why)), P4_PROBE_DEAD);
	assert_non_null(strstr(why, "does not count"));
	assert_true(rb.nlog >= 6);
	assert_int_equal(recbus_value(&rb, MSR_BPU_CCCR0), 0);
	assert_int_equal(recbus_value(&rb, 0x3a2), 0);		/* FSB_ESCR0 */
}

/* A counter whose bits stick: it reads the same non-zero value before and after the work. */
static void stuck_counter_is_refused(void **state)
{
	struct recbus rb;
	struct probe_world w = { .wait_tsc = 200000 };
	struct p4_probe_env env = { .misc_ok = true, .misc_enable = MISC_ENABLE_PERFMON,
				    .wait = no_wait, .now = world_now, .ctx = &w };
	char why[160];

	recbus_init(&rb);
	rb.corrupt_msr = MSR_BPU_COUNTER0;
	rb.corrupt_xor = 0x1000;	/* written 0, reads 1000H: bit 12 stuck at 1 */
	env.bus = &rb.bus;
	assert_int_equal(p4_probe(&env, why, sizeof(why)), P4_PROBE_DEAD);
	assert_non_null(strstr(why, "1000H before and after"));
}

static bool refuse_all(uint32_t msr)
{
	return msr >= 0x300 && msr < 0x400;
}

static void gp_on_pmu_registers_is_absent(void **state)
{
	struct recbus rb;
	struct probe_world w = { .wait_tsc = 200000 };
	struct p4_probe_env env = { .misc_ok = true, .misc_enable = MISC_ENABLE_PERFMON,
				    .wait = no_wait, .now = world_now, .ctx = &w };
	char why[160];

	recbus_init(&rb);
	rb.refuse = refuse_all;
	env.bus = &rb.bus;
	assert_int_equal(p4_probe(&env, why, sizeof(why)), P4_PROBE_ABSENT);
	assert_non_null(strstr(why, "#GP"));
}

/* The model's counter 0 runs `cycles` while the TSC moves `tsc`: the verdict. */
static enum p4_probe_verdict probe_model(uint64_t cycles, uint64_t tsc, char *why, size_t n)
{
	static struct p4_model m;
	struct p4_model_config cfg = { .sig = { 0x0f, 4, 1 } };
	struct probe_world w = { .m = &m, .wait_tsc = tsc, .cycles = cycles };
	struct p4_probe_env env = { .misc_ok = true, .misc_enable = MISC_ENABLE_PERFMON,
				    .wait = world_wait, .now = world_now, .ctx = &w };
	enum p4_probe_verdict v;

	assert_int_equal(p4_model_init(&m, &cfg), 0);
	p4_model_set_active(&m, 0, true);
	env.bus = &m.bus;
	v = p4_probe(&env, why, n);
	assert_int_equal(m.cccr[0], 0);		/* stopped again */
	return v;
}

static void counting_pmu_is_accepted(void **state)
{
	char why[160] = "";

	assert_int_equal(probe_model(1000, 1000, why, sizeof(why)), P4_PROBE_COUNTS);
	/* the lower bound: a sixteenth of the TSC cycles */
	assert_int_equal(probe_model(1000 / P4_PROBE_MIN_SHARE, 1000, why, sizeof(why)),
			 P4_PROBE_COUNTS);
}

static void counts_outside_the_clock_are_refused(void **state)
{
	char why[160] = "";

	assert_int_equal(probe_model(1001, 1000, why, sizeof(why)), P4_PROBE_DEAD);
	assert_non_null(strstr(why, "counted 1001 cycles in 1000 TSC cycles"));
	assert_int_equal(probe_model(1000 / P4_PROBE_MIN_SHARE - 1, 1000, why, sizeof(why)),
			 P4_PROBE_DEAD);
	assert_non_null(strstr(why, "expected 62..1000"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(misc_bit7_clear_touches_nothing),
		cmocka_unit_test(counter_that_stays_zero_is_refused_and_cleaned_up),
		cmocka_unit_test(stuck_counter_is_refused),
		cmocka_unit_test(gp_on_pmu_registers_is_absent),
		cmocka_unit_test(counting_pmu_is_accepted),
		cmocka_unit_test(counts_outside_the_clock_are_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
