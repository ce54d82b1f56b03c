/*
 * p4_alloc.h - choose an ESCR and a counter for each event request.
 *
 * Pure: p4_alloc_plan() reads the tables and the requests and fills a plan;
 * p4_apply() (p4_apply.h) is what writes registers.
 *
 * Rules honoured (PMU reference 3, 2.3, 5.1, 9; issue 3):
 *   - an event uses one of its ESCRs, and an ESCR drives only its counters;
 *   - ESCRs missing on the model (IQ_ESCR0/1 on models >= 3) and events the
 *     model lacks (instr_completed) are never offered;
 *   - one ESCR holds one setting: two requests share it only when their
 *     ESCR values are identical; a counter serves one request;
 *   - Hyper-Threading split (PMU reference 3.2): P4_SPLIT_GLOBAL (default) is
 *     FreeBSD's global arbitration - one plan covers both LPs, so any ESCR
 *     may count either LP through its T0/T1 bits; P4_SPLIT_LINUX is Linux
 *     perf's static halves (LP0: ESCR0 side and counters 0,1/4,5/8,9/
 *     12,13,16; LP1: ESCR1 side and 2,3/6,7/10,11/14,15,17; events with a
 *     single ESCR are shared), for when each LP programs its own half;
 *   - cascades follow p4_cascade_links[] (bit 30 pairs; bit 11 only with
 *     ext_cascade), and a cascaded counter with a PMI is refused on parts
 *     with the cascade PMI erratum (SDM 18.15.5.7);
 *   - PEBS uses counter 16 (IQ_CCCR4) for LP0 and 17 (IQ_CCCR5) for LP1
 *     (SDM 18.16.3), only for front_end/execution/replay_event;
 *   - quirk rows (p4_quirks[] in p4_alloc.c): counter 1 is not offered
 *     (Linux, UNVERIFIED) and FSB_ESCR1 not below signature F27H.
 * The search tries every choice with pruning and stops at the first
 * complete assignment; requests that sample or take part in a cascade try
 * counters 16/17 first (SDM: "frequently used in event-based sampling";
 * extended cascading exists to let them start others), the rest 12-15 first.
 */
#ifndef NBPROF_PMU_P4_ALLOC_H
#define NBPROF_PMU_P4_ALLOC_H

#include <stdbool.h>
#include <stdint.h>

#include "pmu/p4_caps.h"
#include "pmu/p4_encode.h"
#include "pmu/p4_spec.h"
#include "pmu/p4_tables.h"
#include "pmu/p4_uncore.h"

#define P4_MAX_REQUESTS		18

enum p4_role {
	P4_ROLE_COUNT,		/* plain counting or sampling */
	P4_ROLE_CASCADE,	/* starts when request `started_by` overflows */
	P4_ROLE_PEBS,		/* PEBS sampling: counter 16 (LP0) / 17 (LP1) */
};

enum p4_split {
	P4_SPLIT_GLOBAL,
	P4_SPLIT_LINUX,
};

struct p4_request {
	struct p4_spec spec;	/* event, mask, filters; spec.period = overflow after n events */
	enum p4_lp lp;		/* whose events are counted */
	enum p4_pmi pmi;
	enum p4_role role;
	uint8_t started_by;	/* P4_ROLE_CASCADE: index of the starting request */
};

struct p4_alloc_ctx {
	const struct p4_caps *caps;
	bool ht;		/* Hyper-Threading enabled: two LPs share this PMU */
	enum p4_split split;
};

struct p4_slot {
	enum p4_escr escr;
	enum p4_counter counter;
	uint64_t escr_value;
	uint64_t cccr_value;	/* as written last (with Enable unless cascaded) */
	uint64_t preset;	/* counter value written before enabling */
	uint64_t cccr_quiet;	/* the CCCR the counter is written under (p4_cccr_quiet) */
	const struct p4_cascade_link *link;	/* how it is started, or NULL */
};

/*
 * An uncore counter of a plan (p4_uncore.h): register reg (0..7, MSR
 * 107CCH + reg, RDPMC 18 + reg), started with `start` (p4_unc_encode: the
 * control word in 63:32, the count's preset in 31:0). The registers are
 * the package's, outside the core counters' allocation: p4_unc_alloc
 * picks them.
 */
struct p4_unc_slot {
	uint8_t reg;
	uint64_t start;
};

struct p4_plan {
	unsigned n;
	bool ht;
	bool pebs;		/* a PEBS request: PEBS_ENABLE MY_THR/OTH_THR for its LP */
	/*
	 * Set by the caller before p4_apply (p4_pebs.h): the LP that executes
	 * the writes (MY_THR/OTH_THR are relative to it), whether that PEBS
	 * LP's IA32_DS_AREA points at a prepared save area (without it
	 * p4_apply refuses to enable PEBS), and the replay-tagging bits
	 * (PEBS_ENABLE metric bits + UOP_Tag, MATRIX_VERT) of a metric.
	 */
	uint8_t writer_lp;
	bool ds_area_set;
	uint32_t pebs_metric, matrix_vert;
	/*
	 * A replay-tagging metric's extra upstream ESCR (MOB and split
	 * metrics, PMU reference 5.5): planned like a slot's ESCR (no request may
	 * use it), written by p4_apply; none when metric_escr_value is 0 (or
	 * metric_escr is P4_ESCR_NONE).
	 */
	enum p4_escr metric_escr;
	uint64_t metric_escr_value;
	struct p4_request req[P4_MAX_REQUESTS];
	struct p4_slot slot[P4_MAX_REQUESTS];
	unsigned unc_n;			/* uncore counters, started and stopped with the rest */
	struct p4_unc_slot unc[P4_UNC_NREG];
};

struct p4_alloc_error {
	unsigned nconflict;			/* requests named in msg */
	uint8_t conflict[P4_MAX_REQUESTS];	/* their indices */
	char msg[512];
};

/*
 * The CCCR value a counter is written under (Xeon MP erratum O8, PMU reference
 * 6): Enable and Compare clear, and the ESCR select naming an ESCR of the
 * counter's block that the plan does not use - it is zero, so the counter's
 * input is a null event. Select 0 when every ESCR is in use (never with
 * P4_MAX_REQUESTS below the eight ESCRs a counter reaches).
 */
uint64_t p4_cccr_quiet(const struct p4_plan *plan, unsigned i);
/* True when the plan programs ESCR e (a replay metric's upstream ESCR too). */
bool p4_plan_uses(const struct p4_plan *plan, enum p4_escr e);
/* The index of the plan's PEBS request for logical processor lp (0 or 1), or -1. */
int p4_plan_pebs_idx(const struct p4_plan *plan, unsigned lp);

/*
 * The overflow handler's tail: the events a sampler counting CPL 0 counts
 * of the handler's own code after its reload restarted it, up to the
 * handler's IRET (prof/perf.c: the restart is the last thing of the
 * interrupt's exit). A period no longer than that overflows again before
 * the handler returns, and the next PMI follows the IRET with no
 * instruction of the interrupted code in between: an endless storm (PMU
 * reference 6). P4_PMI_TAIL_MAX bounds the tail in instructions on both
 * kernels when the PMI restarts one counter; each other counter the same
 * PMI restarts after it adds up to P4_PMI_TAIL_EACH (the handler restarts
 * those that count CPL 0 last, so only they can follow one another).
 * `make bench` measures the tail (tools/dev/bench.py) and
 * tests/qemu/test_storm.py checks the bounds against the kernels as built.
 * Events that count more than one per instruction (clockticks, µops) can
 * need longer periods: the storm guard (prof/perf.h PERF_STORM_PMIS) stops
 * those at run time.
 */
#define P4_PMI_TAIL_MAX		32u
#define P4_PMI_TAIL_EACH	16u

/* The tail bound for a plan with ksamplers CPL-0 samplers (counters that count CPL 0 with a PMI). */
static inline uint64_t p4_pmi_tail_bound(unsigned ksamplers)
{
	return P4_PMI_TAIL_MAX + (uint64_t)P4_PMI_TAIL_EACH * (ksamplers > 1 ? ksamplers - 1 : 0);
}

/*
 * The one rule for samplers (stat, record, bench and selftest's own plans):
 * NULL when spec may sample with an overflow PMI (pmi) in a plan with
 * ksamplers CPL-0 samplers (spec's own included), else why not, in buf
 * (n bytes) or a constant: with CPL 0 counted, FORCE_OVF (every increment
 * overflows) or a period of at most p4_pmi_tail_bound(ksamplers).
 */
const char *p4_pmi_refusal(const struct p4_spec *spec, bool pmi, unsigned ksamplers, char *buf,
			   size_t n);

/* 0 with *plan filled, or -1 with *err naming the conflicting requests. */
int p4_alloc_plan(const struct p4_alloc_ctx *ctx, const struct p4_request *reqs, unsigned n,
		  struct p4_plan *plan, struct p4_alloc_error *err);

#endif
