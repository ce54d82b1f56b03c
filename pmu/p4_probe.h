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
	void (*wait)(void *ctx);	/* known work: the core runs for a while */
	uint64_t (*now)(void *ctx);	/* the TSC */
	void *ctx;
};

/* What the probe found. */
enum p4_probe_verdict {
	P4_PROBE_COUNTS = 0,	/* counter 0 counted the work, within the bounds */
	P4_PROBE_ABSENT = -1,	/* no PMU claimed: IA32_MISC_ENABLE unreadable, bit 7 clear, #GP */
	P4_PROBE_DEAD = -2,	/* the registers are there, the counter did not count the work */
};

/*
 * Counter 0 counts global_power_events:RUNNING (every cycle the core is
 * not stopped) over env->wait(): read once before and once after it, the
 * difference must lie between P4_PROBE_MIN_SHARE-th of the TSC cycles
 * between the two reads and those TSC cycles (a core cycle is no shorter
 * than a TSC tick: SDM Vol. 3B, "Time-Stamp Counter"). A counter that does
 * not move, a bit that sticks, or one that counts faster than the clock
 * fails. No PMU register is touched unless IA32_MISC_ENABLE was read and
 * its bit 7 (performance monitoring available) is set; the registers it
 * wrote are zeroed again. Returns the verdict, why says it in words.
 */
#define P4_PROBE_MIN_SHARE	16	/* this file's allowance: clock modulation, a slower core clock */
enum p4_probe_verdict p4_probe(const struct p4_probe_env *env, char *why, size_t n);

#endif
