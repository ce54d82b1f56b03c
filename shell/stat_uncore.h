/*
 * stat_uncore.h - `stat -e ibusq:...`: the L3/FSB uncore counters of the
 * 64-bit Xeon MP with L3 (107CCH-107D3H, pmu/p4_uncore.h), counted next to
 * the core events.
 */
#ifndef NBPROF_SHELL_STAT_UNCORE_H
#define NBPROF_SHELL_STAT_UNCORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pmu/msr_bus.h"
#include "pmu/p4_caps.h"
#include "pmu/p4_uncore.h"
#include "shell/stat_opts.h"

struct stat_unc_event {
	struct p4_unc_spec spec;
	const char *text;		/* the -e argument */
	unsigned reg;			/* 0..7: MSR 107CCH + reg, RDPMC 18 + reg */
	uint64_t total;			/* this run's 64-bit count (p4_unc_extend) */
	uint32_t low;			/* the low half at the last poll */
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

/* Zero each count and start it (a non-zero upper half starts it, SDM 18.20). 0, or -1 with err. */
int stat_unc_start(struct stat_unc *u, struct msr_bus *bus, char *err, size_t n);

/* Read each low half and extend the 64-bit totals; call before 2^32 events can pass. */
void stat_unc_poll(struct stat_unc *u, struct msr_bus *bus);

/* Poll a last time and stop every count (upper half 0). */
void stat_unc_stop(struct stat_unc *u, struct msr_bus *bus);

#endif
