/*
 * record.h - sampling runs: a counting run whose overflows become samples.
 *
 * record_run() programs the plan through prof/perf.c (the same counting
 * run `stat` uses), installs the overflow hook, runs the workload once on
 * LP0, on its Hyper-Threading sibling, or one workload on each
 * (workload_run_lps), and leaves the samples in the stores of the LPs that
 * took them, where `report`, `annotate`, `script` and `dump` read them
 * (record_last()). See record.c for the overflow path, the erratum
 * polling, throttling and where the store memory comes from.
 */
#ifndef NBPROF_PROF_RECORD_H
#define NBPROF_PROF_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prof/perf.h"
#include "prof/samples.h"

#define RECORD_NAME_MAX		32
#define RECORD_THROTTLE_DEFAULT	25u	/* percent of CPU time PMI handling may take */
#define RECORD_THROTTLE_WINDOW	16u	/* samples between throttle checks */
#define RECORD_POLL_HZ		10000u	/* LAPIC timer polls of OVF (erratum path) */

/* One logical processor's part of a run: what it runs (args NULL: it idles). */
struct record_job {
	const struct workload_args *args;
	int ring;
};

/* What to record; record_run() copies what it keeps. */
struct record_cfg {
	struct p4_plan plan;			/* periods already in plan.req[i].spec.period */
	bool sampler[P4_MAX_REQUESTS];		/* takes samples (a cascade starter does not) */
	bool polled[P4_MAX_REQUESTS];		/* no PMI (erratum): OVF polled by the timer */
	char name[P4_MAX_REQUESTS][RECORD_NAME_MAX];	/* event names for script/dump */
	enum perf_pmi_mode pmi;
	bool callchain;				/* -g: walk frame pointers */
	bool wrap;				/* overwrite the oldest samples when full */
	struct record_job job[2];		/* [0] LP0 (the shell's), [1] its HT sibling */
	bool stagger;				/* job[1] starts when job[0] has ended */
	size_t buffer;				/* store bytes per LP; 0 = the LP's whole share */
	unsigned throttle_pct;			/* 1..100; 100 = never throttle */
	unsigned jitter_pct;			/* 0: fixed periods; else +- PCT (prof/jitter.h) */
	uint64_t seed;				/* --seed: the jitter's generator */
	unsigned inject_unflagged, inject_n15;	/* model quirks (perf_inject) */
	bool inject_stuck_ovf;		/* model fault: every CCCR.OVF sticks once set (a storm) */
	unsigned pebs_records;			/* PEBS buffer slots per LP (PEBS requests) */
	bool pebs_drain_end;			/* drain after the run only: a full buffer loses */
};

/* What a run did, for record's summary (and the tests). */
struct record_result {
	int status;				/* enum workload_status: the first job not OK */
	int fault_vector;
	char error[96];
	int job_status[2];			/* each job's enum workload_status (-1: no job) */
	uint8_t job_lp[2];			/* the SMT ID (T0/T1) each job ran as */
	uint64_t lp_stored[2];			/* samples stored by each job's LP */
	struct sample_store totals;		/* counts of the stores added up */
	uint64_t unattributed;			/* polled periods that ended outside the workload */
	uint64_t throttled;			/* times the periods were raised */
	uint64_t lp_throttled[2];		/* ... by each job's LP */
	uint64_t period[P4_MAX_REQUESTS];	/* periods at the end (raised by throttling) */
	uint64_t counted[P4_MAX_REQUESTS];	/* each event's 64-bit count over the run */
	bool counted_low[P4_MAX_REQUESTS];	/* the count is a lower bound (PEBS records lost) */
	bool polling;
	struct perf_pmi_stats pmi;		/* this run's share of perf_info()->pmi */
	uint64_t tsc_cycles;			/* workload duration */
	uint64_t store_tsc, store_n;		/* time in sample_store_append: the 1 in 16 timed */
	size_t buffer;				/* store bytes used per LP */
	uint64_t steps;				/* stepped instructions (model), both LPs */
	uint64_t pebs_records;			/* PEBS records drained into samples */
	uint64_t pebs_drains, pebs_full;	/* drains; drains that found the buffer full */
};

/*
 * Record once. 0 with *res filled (res->status tells how the workload
 * ended), or -1 with err when nothing was started (then the previous
 * recording is kept).
 */
int record_run(const struct record_cfg *cfg, struct record_result *res, char *err, size_t n);

/* The last recording, or NULL when there is none. */
const struct sample_run *record_last(void);

/* How many recordings have been made: each record_run() that ends changes it. */
uint64_t record_generation(void);

/* Bytes of sample store each LP owns (carved at the first record); 0 when none. */
size_t record_store_bytes(void);

/*
 * The floor of the overflow path on this machine: n times, the register
 * accesses the handler cannot avoid (2 RDMSR + 4 WRMSR of one counter and
 * its CCCR, LVT PC read and write, EOI) as real instructions, plus one
 * sample_store_append into a scratch store. Medians in TSC cycles.
 */
int record_floor(unsigned n, uint64_t *regs_tsc, uint64_t *store_tsc, char *err, size_t errlen);


#endif
