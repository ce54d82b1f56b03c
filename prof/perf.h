/*
 * perf.h - the PMU as the running kernel sees it: which backend counts
 * (the hardware PMU or the software model behind the same struct msr_bus),
 * counting runs with 64-bit totals, overflow interrupts, the write
 * trace, and the workload hooks that feed the model.
 */
#ifndef NBPROF_PROF_PERF_H
#define NBPROF_PROF_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pmu/model/p4_model.h"
#include "pmu/msr_bus.h"
#include "pmu/p4_alloc.h"
#include "pmu/p4_caps.h"
#include "prof/workload.h"

enum perf_backend {
	PERF_BACKEND_NONE,	/* not a NetBurst CPU and no model selected */
	PERF_BACKEND_HW,
	PERF_BACKEND_MODEL,
};

enum perf_pmi_mode {
	PERF_PMI_FIXED,		/* LVT PC: vector LAPIC_PMI_VECTOR, fixed delivery */
	PERF_PMI_NMI,		/* LVT PC: NMI delivery */
};

/* Counters of what the overflow path did (shown by `pmu`, checked by tests). */
struct perf_pmi_stats {
	uint64_t interrupts;	/* PMI handler entries */
	uint64_t overflows;	/* counters found overflowed */
	uint64_t unflagged;	/* overflowed without CCCR.OVF (bit 39 test, fact sheet 6) */
	uint64_t reraised;	/* model still asserting at unmask: PMI sent again */
	uint64_t deferred;	/* model PMI while LVT PC was masked */
	uint64_t dropped;	/* model PMI for an LP that is not running */
	uint64_t late;		/* fixed IPI not taken within the wait window */
	uint64_t lp_interrupts[2];	/* handler entries on LP0 / LP1 (T0 / T1) */
	uint64_t mismatches;	/* reloaded counter read back different: written again */
	uint64_t handoffs;	/* PMI taken inside the step handler: sampled the workload's frame */
	uint64_t polls;		/* perf_poll() scans (cascade-PMI erratum) */
	uint64_t tsc_total;	/* TSC spent in PMI handlers and polls */
	uint64_t by_vector;	/* entries through the LVT PC vector (fixed delivery) */
	uint64_t by_nmi;	/* entries through the NMI vector (NMI delivery) */
	uint64_t lp_tsc[2];	/* tsc_total's part on LP0 / LP1 (T0 / T1): each LP's own share */
};

struct perf_info {
	enum perf_backend backend;
	struct p4_sig sig;
	bool ht;			/* the PMU is shared by two LPs */
	struct p4_caps caps;
	char reason[192];		/* why this backend */
	enum perf_pmi_mode pmi_mode;
	bool trace;
	struct perf_pmi_stats pmi;
};

/* At boot, after the LAPIC and the interrupt self-test: choose and print. */
void perf_init(void);

const struct perf_info *perf_info(void);
const char *perf_backend_name(enum perf_backend b);

/* Switch backends; -1 with err when impossible (nothing changed then). */
int perf_select_hw(char *err, size_t n);
int perf_select_model(const struct p4_sig *sig, bool ht, char *err, size_t n);

/* The bus PMU code uses (tracing wrapper over hardware or model), or NULL. */
struct msr_bus *perf_bus(void);
/* The model, when it is the backend. */
struct p4_model *perf_model(void);

void perf_set_trace(bool on);
void perf_set_pmi_mode(enum perf_pmi_mode mode);

/*
 * A counting run. Each counter starts at start[i] (the plan's preset for
 * a cascade starter, else the reload value) and is reloaded with reload[i]
 * by the overflow handler, which adds the events since the last write to
 * base[i]; the 64-bit total is base + (counter - start) mod 2^40.
 */
struct perf_count {
	struct p4_plan plan;
	uint64_t start[P4_MAX_REQUESTS];
	uint64_t reload[P4_MAX_REQUESTS];
	uint64_t base[P4_MAX_REQUESTS];
	uint64_t overflows[P4_MAX_REQUESTS];
	uint64_t chunk;			/* largest model input fed in one call */
	bool running;
};

/* Reload value for plain counting: bit 39 set, 2^39 events per interrupt. */
#define PERF_RELOAD_DEFAULT	(UINT64_C(1) << 39)

/*
 * Program and start. A request with spec.period (a sampler) starts at and
 * reloads -period; a cascade starter starts at -N; every other counter
 * starts at and reloads `reload`.
 */
int perf_count_start(struct perf_count *s, const struct p4_plan *plan, uint64_t reload,
		       char *err, size_t n);
/* Read (before stopping: Xeon MP erratum O9), stop, and fill totals[plan.n]. */
void perf_count_stop(struct perf_count *s, uint64_t *totals);

/*
 * Called by the overflow handler (LVT PC vector or NMI, interrupts off) for
 * each overflowed counter of the running count, after its 64-bit base was
 * updated and before it is reloaded: idx is the plan index, f the
 * interrupted frame. For sampling; NULL removes the hook.
 */
struct trap_frame;
typedef void perf_overflow_fn(void *ctx, struct trap_frame *f, unsigned idx);
void perf_set_overflow_hook(perf_overflow_fn *fn, void *ctx);

/*
 * The overflow handler's scan without an interrupt, for counters that
 * cannot raise one (the cascade-PMI erratum, fact sheet 2.3): called from
 * a timer interrupt with the interrupted frame. LVT PC is masked during the
 * scan, so a PMI (NMI) cannot handle the same counter at the same time.
 */
void perf_poll(struct trap_frame *f);

/*
 * Model backend, during a running count: make the next `unflagged`
 * overflows read as CCCR.OVF clear and the next `reloads` reloads lose
 * their counter writes until read back (N15), so that the handler's
 * workarounds (pmi.unflagged, pmi.mismatches) are exercised. -1 with err
 * otherwise.
 */
int perf_inject(unsigned unflagged, unsigned reloads, char *err, size_t n);

/* What fed the model during a run (model backend). */
struct perf_inputs {
	uint64_t steps;			/* stepped instructions */
	uint64_t branches;		/* of which branches */
	uint64_t cycles;		/* TSC cycles fed as clockticks */
	uint64_t synthetic;		/* synthetic occurrences */
	uint64_t synthetic_bad;		/* synthetic occurrences whose spec did not parse */
	char synthetic_spec[WORKLOAD_SPEC_MAX];
	enum p4_event synthetic_event;
	bool synthetic_mixed;		/* more than one spec was seen */
};

/* Hooks for workload_run(); they feed the model (ignored on hardware). */
void perf_hooks(struct perf_inputs *in, struct workload_hooks *h);

/* Event sources of the model, for labelling counts. */
enum perf_source {
	PERF_SOURCE_STEP,	/* stepped instructions and branches (real) */
	PERF_SOURCE_TSC,	/* clockticks from TSC deltas (real) */
	PERF_SOURCE_SYNTHETIC,
	PERF_SOURCE_NONE,	/* the model has nothing that produces it */
};

enum perf_source perf_event_source(enum p4_event ev, const struct perf_inputs *in);


#endif
