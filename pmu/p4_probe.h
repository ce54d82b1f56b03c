/*
 * p4_probe.h - does this machine's NetBurst PMU count? The hardware
 * backend's only question before it takes over, asked once.
 */
#ifndef NBPROF_PMU_P4_PROBE_H
#define NBPROF_PMU_P4_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pmu/msr_bus.h"

struct p4_probe_env {
	struct msr_bus *bus;		/* the machine's MSRs */
	bool misc_ok;			/* IA32_MISC_ENABLE could be read */
	uint64_t misc_enable;		/* its value */
	bool ht;			/* encode for a Hyper-Threaded part */
	void (*wait)(void *ctx);	/* let counter 0 run for a while */
	void *ctx;
};

/*
 * 0 when counter 0 counts global_power_events:RUNNING over env->wait(),
 * else -1 with the reason in why. No PMU register is touched unless
 * IA32_MISC_ENABLE was read and its bit 7 (performance monitoring
 * available, fact sheet 1) is set; the registers it wrote are zeroed again.
 */
int p4_probe(const struct p4_probe_env *env, char *why, size_t n);

#endif
