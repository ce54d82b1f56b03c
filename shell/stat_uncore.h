/*
 * stat_uncore.h - `stat -e ibusq:...`: the L3/FSB uncore counters of the
 * 64-bit Xeon MP with L3 (107CCH-107D3H, pmu/p4_uncore.h), counted next to
 * the core events: their specs parsed and given registers here, then put
 * into the count's plan (plan.unc), which perf_count_start and
 * perf_count_stop start and stop with the core counters, under the PMU lock.
 */
#ifndef NBPROF_SHELL_STAT_UNCORE_H
#define NBPROF_SHELL_STAT_UNCORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pmu/p4_alloc.h"
#include "pmu/p4_caps.h"
#include "pmu/p4_uncore.h"
#include "shell/stat_opts.h"

struct stat_unc_event {
	struct p4_unc_spec spec;
	const char *text;		/* the -e argument */
	unsigned reg;			/* 0..7: MSR 107CCH + reg, RDPMC 18 + reg */
	uint64_t total;			/* this run's 64-bit count (perf_count.unc_total) */
};

struct stat_unc {
	unsigned n;
	uint8_t used;			/* registers taken (p4_unc_alloc) */
	struct stat_unc_event ev[P4_UNC_NREG];
};

/*
 * Move the uncore specs out of o->ev into *u (parsed, checked against caps,
 * given registers); the core events stay in o->ev. 0, or -1 with the reason
 * (a bad spec, a part without the unit, no register left) and o unchanged.
 */
int stat_unc_take(struct stat_opts *o, const struct p4_caps *caps, struct stat_unc *u,
		  char *err, size_t n);

/* Put the uncore events into plan->unc, in order, each counting from 0 (p4_unc_encode). */
void stat_unc_plan(const struct stat_unc *u, struct p4_plan *plan);

/*
 * The error of a count whose uncore event `failed` (perf_count.unc_failed)
 * could not be started, naming the event.
 */
void stat_unc_start_error(const struct stat_unc *u, int failed, char *err, size_t n);

#endif
