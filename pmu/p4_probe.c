/*
 * p4_probe.c - the hardware backend's probe: IA32_MISC_ENABLE bit 7 first,
 * then counter 0 on FSB_ESCR0 with global_power_events:RUNNING (a clock
 * that always counts while the core runs, fact sheet 4.1), read before and
 * after env->wait() and judged against the TSC cycles in between.
 */
#include "lib/printf.h"
#include "pmu/p4_encode.h"
#include "pmu/p4_probe.h"
#include "pmu/p4_regs.h"
#include "pmu/p4_spec.h"
#include "pmu/p4_tables.h"

/* The difference of the two reads against the TSC cycles between them. */
static enum p4_probe_verdict probe_judge(uint64_t v0, uint64_t v1, uint64_t tsc, char *why,
					 size_t n)
{
	uint64_t d = (v1 - v0) & P4_COUNTER_MASK;
	uint64_t lo = tsc / P4_PROBE_MIN_SHARE;

	if (v0 == v1)
		return ksnprintf(why, n, "probe: counter 0 read %llXH before and after %llu TSC "
				 "cycles of work: it does not count", (unsigned long long)v0,
				 (unsigned long long)tsc), P4_PROBE_DEAD;
	if (d < lo || d > tsc)
		return ksnprintf(why, n, "probe: counter 0 counted %llu cycles in %llu TSC cycles "
				 "of work, expected %llu..%llu", (unsigned long long)d,
				 (unsigned long long)tsc, (unsigned long long)lo,
				 (unsigned long long)tsc), P4_PROBE_DEAD;
	return P4_PROBE_COUNTS;
}

/* Counter 0 running global_power_events:RUNNING; nonzero when an access raised #GP. */
static int probe_start(const struct p4_probe_env *env, const struct p4_spec *spec)
{
	struct p4_cccr_cfg cfg = { .escr_select = p4_escrs[P4_FSB_ESCR0].select, .enable = true,
				   .active_thread = CCCR_AT_ANY };
	int bad = 0;

	bad |= msr_bus_write(env->bus, MSR_BPU_CCCR0, 0);
	bad |= msr_bus_write(env->bus, p4_escrs[P4_FSB_ESCR0].msr,
			     p4_escr_encode(spec, P4_LP0, env->ht));
	bad |= msr_bus_write(env->bus, MSR_BPU_COUNTER0, 0);
	bad |= msr_bus_write(env->bus, MSR_BPU_CCCR0, p4_cccr_encode(&cfg, env->ht));
	return bad;
}

enum p4_probe_verdict p4_probe(const struct p4_probe_env *env, char *why, size_t n)
{
	struct p4_spec spec;
	struct p4_spec_error e;
	uint64_t v0 = 0, v1 = 0, t0, t1;
	int bad;

	if (!env->misc_ok)
		return ksnprintf(why, n, "IA32_MISC_ENABLE unreadable: no PMU register touched"),
		       P4_PROBE_ABSENT;
	if (!(env->misc_enable & MISC_ENABLE_PERFMON))
		return ksnprintf(why, n, "IA32_MISC_ENABLE bit 7 (perfmon available) clear: no PMU "
				 "register touched"), P4_PROBE_ABSENT;
	if (p4_spec_parse("global_power_events:RUNNING", NULL, &spec, &e))
		return ksnprintf(why, n, "probe spec: %s", e.msg), P4_PROBE_ABSENT;
	bad = probe_start(env, &spec);
	t0 = env->now(env->ctx);
	bad |= msr_bus_read(env->bus, MSR_BPU_COUNTER0, &v0);
	env->wait(env->ctx);
	bad |= msr_bus_read(env->bus, MSR_BPU_COUNTER0, &v1);
	t1 = env->now(env->ctx);
	msr_bus_write(env->bus, MSR_BPU_CCCR0, 0);
	msr_bus_write(env->bus, p4_escrs[P4_FSB_ESCR0].msr, 0);
	if (bad)
		return ksnprintf(why, n, "probe: a PMU MSR access raised #GP"), P4_PROBE_ABSENT;
	return probe_judge(v0 & P4_COUNTER_MASK, v1 & P4_COUNTER_MASK, t1 - t0, why, n);
}
