/*
 * selftest/internal.h - what the files of `selftest` share (selftest/selftest.c:
 * the runner; selftest/counts.c: counters, ESCRs, uops, privilege, threads;
 * selftest/overflow.c: overflow, PMIs, cascades, RDPMC; selftest/pebs.c:
 * PEBS and the uncore counters). Not for use
 * outside them; selftest.c's opening comment says how expectations are made.
 */
#ifndef NBPROF_PROF_SELFTEST_INTERNAL_H
#define NBPROF_PROF_SELFTEST_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pmu/p4_alloc.h"
#include "prof/perf.h"
#include "selftest/selftest.h"

#define ST_N1		50		/* loop sizes of the exact differences */
#define ST_N2		150
#define ST_PMI_N	1015		/* 3051 + 1 (the exit) at ring 3: 30 PMIs at period 100 */
#define ST_PMI_PERIOD	100
/*
 * The latest a PMI may come, in events after the one the manual names (the
 * next after the overflow): the manual gives no figure (PMU reference 6),
 * so the checks that count PMIs accept any skid up to this, the largest
 * the model is checked with (`pmu skid 64`, tests/qemu/test_selftest.py).
 * A part whose PMIs come later FAILs them, which is worth a report.
 */
#define ST_SKID_MAX	64
#define ST_CASCADE_N	200		/* 606 instructions (+ the exit at ring 3), 200 conditional branches */
#define ST_READ_SLACK	2048		/* cycles between reading two counters */
#define ST_START_LAG	64		/* cycles a cascade may take to start its counter */
#define ST_NO_FROM	(-1)
#define ST_ALWAYS_SELECT 0x3f		/* "any non-zero event select" (PMU reference 2.4) */

/* A PMU register outside the counters, CCCRs and ESCRs that selftest saves and restores. */
struct st_reg {
	uint32_t msr;
	const char *name;
	uint64_t value;
	bool stopped;		/* compared after the restore (a running uncore count moves on) */
	bool read_only;		/* compared, never written (IA32_MISC_ENABLE) */
};

/* IA32_MISC_ENABLE, PEBS_ENABLE, MATRIX_VERT, IA32_DS_AREA, the 8 uncore registers */
#define ST_NOTHER	12

/* One counter of a plan: where, what, and how it starts. */
struct st_ctr {
	enum p4_counter counter;
	enum p4_escr escr;
	const char *spec;
	uint64_t period;	/* overflow after this many events (0: plain counting) */
	int from;		/* plan index of the counter that starts it, or ST_NO_FROM */
	bool pmi;		/* OVF_PMI_T0 */
	uint8_t tbits;		/* non-zero: ESCR bits 3:0 exactly this */
	bool always;		/* spec unused: the always-true cycle count (st_escrs) */
};

/* What one counting run measured. */
struct st_meas {
	uint64_t totals[P4_MAX_REQUESTS];
	uint64_t tsc;
	uint64_t interrupts, by_vector, by_nmi, unflagged, mismatches;
};

struct st;
typedef void st_between_fn(struct st *t, const struct perf_count *sess);

struct st {
	const struct selftest_opts *o;
	struct selftest_result *out;
	unsigned max, n;
	bool stop;		/* Ctrl-C, or a workload did not run */
	bool nothing_counted;	/* no counter counted loop ST_N2 (st_counters): FAILs say so */
	char *err;
	size_t errlen;
	struct p4_plan plan;
	st_between_fn *between;	/* called after the workload, before the count stops */
	bool irq;		/* run the workload with IF = 1, so a PMI by vector lands in it */
	/* overflow hook statistics */
	unsigned hook_calls, hook_masked;
	/* the sticky-OVF and FORCE_OVF observations */
	uint64_t ovf[3], raw;
	/* saved PMU state */
	uint64_t save_ctr[P4_NCOUNTER], save_cccr[P4_NCOUNTER], save_escr[P4_NESCR];
	struct st_reg save_other[ST_NOTHER];
	unsigned nother;
	enum perf_pmi_mode save_mode;
};

enum st_kind { ST_INSTR, ST_BRANCH, ST_CYCLES };

/* Results: a slot in the output (st_new), then handed on (st_emit). */
struct selftest_result *st_new(struct st *t, const char *group);
void st_emit(struct st *t, struct selftest_result *r);
void st_skip(struct st *t, const char *group, const char *name, const char *why);
/* r judged PASS on a 0 that means nothing (no event beside it): FAIL with why. */
void st_no_evidence(struct selftest_result *r, const char *why);

/* Add one counter to t->plan; -1 with t->err when the combination is impossible. */
int st_add(struct st *t, const struct st_ctr *q);

/* t->plan from q[0..n), null-event CCCRs included; -1 with t->err as st_add. */
int st_plan(struct st *t, const struct st_ctr *q, unsigned n);

/* `loop n` at ring on LP lp; 0 when it ran (else t->stop, t->err). */
int st_workload(struct st *t, uint64_t n, int ring, unsigned lp);

/* A workload's arguments from text; -1 with t->err (and t->stop). */
int st_parse_args(struct st *t, const char *name, int argc, char **argv, struct workload_args *a);

/* Run a (parsed) at ring on LP lp; 0 when it ran (else t->stop, t->err). */
int st_run_args(struct st *t, const struct workload_args *a, int ring, unsigned lp);

/* One counting run of t->plan over `loop n`; inject: the per-count quirk injection. */
int st_measure(struct st *t, uint64_t n, int ring, unsigned lp, uint64_t reload, bool inject,
	       struct st_meas *m);

/* d[i] = count(loop ST_N2) - count(loop ST_N1), smallest of the repeats. */
int st_delta(struct st *t, int ring, unsigned lp, uint64_t *d, struct st_meas *last);

/* "counter 12 MSR_IQ_COUNTER0 via CRU_ESCR0: what" for slot i. */
void st_name_slot(struct st *t, struct selftest_result *r, unsigned i, const char *what);

/* What ST_N2 - ST_N1 iterations of `loop` add: 3 instructions or 1 branch each. */
uint64_t st_expect(enum st_kind k);

/* The checks (0, or -1 with t->err / t->stop). */
int st_counters(struct st *t);
int st_escrs(struct st *t);
int st_uops(struct st *t);
int st_privilege(struct st *t);
int st_threads(struct st *t);
int st_overflow_flags(struct st *t);
int st_pmis(struct st *t);
int st_cascading(struct st *t);
int st_rdpmc_check(struct st *t);
int st_pebs(struct st *t);
int st_uncore(struct st *t);

#endif
