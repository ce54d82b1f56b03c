/*
 * p4_probe.c - the hardware backend's probe: IA32_MISC_ENABLE bit 7 first,
 * then counter 0 on FSB_ESCR0 with global_power_events:RUNNING (a clock
 * that always counts while the core runs, fact sheet 4.1) for env->wait().
 */
#include "lib/printf.h"
#include "pmu/p4_encode.h"
#include "pmu/p4_probe.h"
#include "pmu/p4_regs.h"
#include "pmu/p4_spec.h"
#include "pmu/p4_tables.h"

int p4_probe(const struct p4_probe_env *env, char *why, size_t n)
{
	struct p4_spec spec;
	struct p4_spec_error e;
	struct p4_cccr_cfg cfg = { .escr_select = p4_escrs[P4_FSB_ESCR0].select, .enable = true,
				   .active_thread = CCCR_AT_ANY };
	uint32_t escr = p4_escrs[P4_FSB_ESCR0].msr;
	uint64_t v = 0;
	int bad = 0;

	if (!env->misc_ok)
		return ksnprintf(why, n, "IA32_MISC_ENABLE unreadable: no PMU register touched"), -1;
	if (!(env->misc_enable & MISC_ENABLE_PERFMON))
		return ksnprintf(why, n, "IA32_MISC_ENABLE bit 7 (perfmon available) clear: no PMU register touched"), -1;
	if (p4_spec_parse("global_power_events:RUNNING", NULL, &spec, &e))
		return ksnprintf(why, n, "probe spec: %s", e.msg), -1;
	bad |= msr_bus_write(env->bus, MSR_BPU_CCCR0, 0);
	bad |= msr_bus_write(env->bus, escr, p4_escr_encode(&spec, P4_LP0, env->ht));
	bad |= msr_bus_write(env->bus, MSR_BPU_COUNTER0, 0);
	bad |= msr_bus_write(env->bus, MSR_BPU_CCCR0, p4_cccr_encode(&cfg, env->ht));
	env->wait(env->ctx);
	bad |= msr_bus_read(env->bus, MSR_BPU_COUNTER0, &v);
	msr_bus_write(env->bus, MSR_BPU_CCCR0, 0);
	msr_bus_write(env->bus, escr, 0);
	if (bad)
		return ksnprintf(why, n, "probe: a PMU MSR access raised #GP"), -1;
	if ((v & P4_COUNTER_MASK) == 0)
		return ksnprintf(why, n, "probe: counter 0 (global_power_events) stayed 0"), -1;
	return 0;
}
