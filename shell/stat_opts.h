/*
 * stat_opts.h - the pure parsing behind `stat` and `explain`.
 *
 *   stat [-e SPEC [--after N:SPEC]]... [-r N] [--ring 0|3] [--baseline]
 *        [--preset VALUE] [--cpu 0|1|both] [--] WORKLOAD [ARGS]
 *   stat ... [--stagger] --pair WORKLOAD_A [ARGS] -- [--ring 0|3] WORKLOAD_B [ARGS]
 *
 * Hyper-Threading: --cpu picks the LP that runs the workload (and whose
 * events a spec without :t0/:t1 counts); --pair runs A on LP0 and B on LP1
 * at the same time (each spec without :t0/:t1 counts both LPs), or, with
 * --stagger, B once A has ended. A --ring right after the "--" is B's own.
 *
 * Options end at the first word that is not an option (the workload's
 * name) or after "--". --after applies to the -e before it: that event
 * counts only after N occurrences of the --after event (cascading). A spec
 * may also carry the stat-only qualifiers :t0=P and :t1=P (P one of u, k,
 * uk, -), which set the ESCR's four T0/T1 OS/USR bits directly so that every
 * cell of SDM Table 18-66 can be programmed; they are removed before the
 * spec reaches p4_spec_parse(). Nothing here touches hardware.
 */
#ifndef NBPROF_SHELL_STAT_OPTS_H
#define NBPROF_SHELL_STAT_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "workload/workload.h"

#include "pmu/p4_alloc.h"
#include "pmu/p4_explain.h"

#define STAT_MAX_EVENTS		8	/* -e options (each may add an --after event) */
#define STAT_MAX_REPEATS	256
#define STAT_DEFAULT_REPEATS	1
#define STAT_SPEC_MAX		96

struct stat_event_opt {
	const char *spec;		/* the -e argument as typed */
	uint64_t after;			/* 0: not cascaded */
	const char *after_spec;		/* the event counted N times first */
};

enum stat_cpu {
	STAT_CPU_0,
	STAT_CPU_1,
	STAT_CPU_BOTH,
};

struct stat_opts {
	unsigned nev;
	struct stat_event_opt ev[STAT_MAX_EVENTS];
	unsigned repeats;
	int ring;			/* 0 or 3 */
	bool baseline;
	bool preset_set;
	uint64_t preset;		/* --preset: 40-bit start and reload value */
	int workload;			/* argv index of the workload's name */
	enum stat_cpu cpu;		/* --cpu (a pair runs on both) */
	bool stagger;			/* --stagger: B starts when A has ended */
	int workload_end;		/* argv index after A's last argument (argc without --pair) */
	int pair;			/* --pair: argv index of B's name, else 0 */
	int ring_pair;			/* B's ring (default: --ring's) */
	bool quiet;			/* --quiet: no progress line during long runs */
	bool no_watchdog;		/* --no-watchdog: unstepped runs without the Ctrl-C tick */
	bool ring_given, ring_pair_given;	/* --ring was on the line (for A / for B) */
};

/* Parse argv[1..argc); 0, or -1 with one reason in err. */
int stat_opts_parse(int argc, char *const argv[], struct stat_opts *o, char *err, size_t errlen);

/*
 * The rings of workloads a and b (b NULL without --pair) that no --ring
 * chose: workload_default_ring() (a user's program runs in ring 3), and B
 * takes A's --ring when it has none of its own.
 */
void stat_opts_rings(struct stat_opts *o, const struct workload *a, const struct workload *b);

/* T0/T1 privilege override of a spec: bit 0 = USR, bit 1 = OS. */
#define STAT_PRIV_USR		1u
#define STAT_PRIV_OS		2u

struct stat_tbits {
	bool given;			/* some :t0= or :t1= was present */
	uint8_t t0, t1;			/* STAT_PRIV_* sets */
};

/*
 * Copy spec into out without its :t0=P / :t1=P tokens and report them.
 * 0, or -1 with err (bad P, or the result does not fit).
 */
int stat_split_tbits(const char *spec, char *out, size_t n, struct stat_tbits *tb, char *err,
		     size_t errlen);

/* ESCR bits 3:0 (T0_OS T0_USR T1_OS T1_USR) for an override. */
uint64_t stat_tbits_escr(const struct stat_tbits *tb);

/*
 * `explain` arguments: each "MSR=VALUE" (0x1A0, 1A0H or decimal on either
 * side) into w[]. 0 with *n set, or -1 with err naming the bad word.
 */
int stat_parse_writes(int argc, char *const argv[], struct p4_msr_write *w, unsigned max,
		      unsigned *n, char *err, size_t errlen);

/*
 * The counting requests of a parsed command line: the default pair
 * (global_power_events:RUNNING, instr_retired) when no -e was given; for an
 * event with --after N:SPEC (or :after=N, which names the request before
 * it) a starter request counting SPEC with period N - its counter is
 * preset to -N and overflows on the N-th occurrence - followed by the
 * event itself as a cascaded request (p4_alloc picks bit 30 or bit 11, or
 * refuses). Every request gets OVF_PMI for the 64-bit extension -
 * to the LP whose events it counts (OVF_PMI_T1 for an LP1-only request,
 * else OVF_PMI_T0), so each LP's handler extends its own counters - except
 * a cascaded one on a part with the cascade-PMI erratum, which then counts
 * 40 bits only (SDM 18.15.5.7). A spec without :t0/:t1 counts the LP(s)
 * that --cpu / --pair run the workload on. :period= and :pebs are refused
 * (stat counts; it does not sample).
 */
struct stat_reqs {
	unsigned n;
	bool defaults;
	enum p4_lp lp;			/* LPs a spec without :t0/:t1 counts (--cpu, --pair) */
	struct p4_request req[P4_MAX_REQUESTS];
	struct stat_tbits tbits[P4_MAX_REQUESTS];
	bool starter[P4_MAX_REQUESTS];
	bool pmi_lost[P4_MAX_REQUESTS];	/* cascaded on an erratum part: 40 bits only */
};

int stat_build_requests(const struct stat_opts *o, const struct p4_caps *caps,
			struct stat_reqs *out, char *err, size_t errlen);

/*
 * Put the :t0=/:t1= overrides into the plan's ESCR values. -1 with err when
 * a T1 bit is asked for without Hyper-Threading (reserved bits, #GP) or two
 * requests sharing an ESCR would need different values.
 */
int stat_apply_tbits(const struct stat_reqs *r, struct p4_plan *plan, char *err, size_t errlen);

/* "0F_04", "0F_04H" or "0F_02H:9" (stepping, hex; default 1). 0, or -1. */
int stat_parse_sig(const char *s, struct p4_sig *out);

#endif
