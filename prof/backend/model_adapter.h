/*
 * model_adapter.h - the state of the model backend (prof/backend/model.c)
 * in one struct, and the parts of the adapter that live in their own files:
 *
 * - prof/backend/model_batch.c: batching of the events every step feeds (portable,
 *   tested on the host: tests/host/test_model_batch.c);
 * - prof/backend/model_pmi.c: delivering the model's PMI requests as interrupts
 *   (tests/host/test_model_pmi.c);
 * - prof/backend/model_feed.c: the event feed from the workload hooks;
 * - prof/backend/model.c: the bus with its quirk and fault injection, the
 *   selection of a part, the settings and the ops table.
 *
 * There is one adapter (model_adapter below); its functions take the part
 * of the state they work on, so that each part can be tested alone.
 */
#ifndef NBPROF_PROF_MODEL_ADAPTER_H
#define NBPROF_PROF_MODEL_ADAPTER_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/hooks.h"
#include "arch/x86/percpu.h"
#include "pmu/model/p4_mem.h"
#include "pmu/model/p4_model.h"
#include "prof/backend/model.h"
#include "prof/backend/memfeed.h"
#include "prof/perf.h"

#define MODEL_NO_APIC	UINT32_MAX

/*
 * The two events every step feeds - instr_retired NBOGUSNTAG and
 * global_power_events RUNNING - and the clock, added up while nothing can
 * tell the difference (prof/backend/model_batch.c).
 */
struct model_batch {
	unsigned lp, cpl;
	uint64_t instr, clk, ticks;	/* pending events and cycles */
	uint64_t budget;		/* pending events allowed, 0: none (model_batch_budget) */
	bool budget_dirty;
};

/* PMI delivery (prof/backend/model_pmi.c). */
struct model_pmi {
	/*
	 * LPs the model asked to interrupt, by the LP whose model call raised
	 * the request: that LP sends them right after its call
	 * (model_pmi_flush), so a PMI raised by an LP's own step is delivered
	 * by that LP at that step, never by the sibling at some other moment.
	 */
	volatile uint32_t pending[P4_MODEL_NLP];
	uint32_t lp_apic[P4_MODEL_NLP];	/* APIC ID by SMT ID, found once; MODEL_NO_APIC: not yet */
	unsigned nomask;		/* PMIs still to deliver without the LVT PC auto-mask */
};

/* `record --inject` quirks (prof/backend/model.c). */
struct model_inject {
	unsigned unflagged, reloads;
	bool dropping, retry;		/* writes being lost; the rewrite after the read-back */
};

/* Which events the running counters may count (prof/backend/model_feed.c, model_live_update). */
struct model_live {
	uint64_t ev[(P4_NEVENT + 63) / 64];
	bool dirty;			/* a register was written since ev was computed */
	bool mem;			/* some event of the memory model is live */
	bool tag;			/* PEBS, tagging or a FIRM event is programmed */
	bool core;			/* a front-end event of the core model is live (step_core) */
	bool assist;			/* x87_assist or SSE_input_assist is live (assistfeed.c) */
	bool slow;			/* tag or assist: one test per step when neither */
};

struct model_adapter {
	struct p4_model model;
	struct msr_bus bus;		/* the locked bus handed to the PMU code */
	volatile uint64_t bus_tsc[PERCPU_MAX];	/* TSC each LP spent in model register accesses */
	uint64_t bus_call_tsc;		/* a call's cost outside the timed part (model_calibrate) */
	struct model_batch batch;
	struct model_pmi pmi;
	struct model_inject inj;
	struct model_live live;
	uint64_t clock;			/* cycles ticked into the model: the core's clock */
	uint64_t lp_clock[P4_MODEL_NLP];	/* each stepping LP's position on that clock */
	char label[24];
	/* the memory system of the selected part (model_mem_get), and the feed's view of it */
	struct p4_mem *mem;
	struct memfeed_ctx feed;
	bool mem_ready;			/* mem holds a part (p4_mem_init succeeded) */
	bool mem_touched;		/* accesses went in since the last flush */
	/*
	 * The counting window (arch/x86/step.h): the kernel's own instructions
	 * are fed through these hooks, into kin[lp] (not the workload run's
	 * inputs); LP0's window is the counting run, the sibling's lasts from
	 * its workload's begin hook to its end hook (hook_win).
	 */
	struct perf_window kin[P4_MODEL_NLP];
	struct workload_hooks khooks[P4_MODEL_NLP];
	bool hook_win[PERCPU_MAX];
	/* settings for the next selection and the feed (prof/backend/model.h) */
	bool want_l3;			/* the next selection models the Xeon MP with L3 */
	uint32_t skid;			/* PMI skid in events (`pmu skid`), kept across selections */
	bool no_pebs;			/* `pmu backend model ... nopebs` */
	enum perf_model_clock clock_src;
	/* the first PEBS assist that could not reach its DS area, until reported */
	struct { bool set; unsigned lp; uint64_t addr; } fault;
};

extern struct model_adapter model_adapter;

/* ---- prof/backend/model_batch.c (PMU lock held throughout) -------------------------------- */

/* Pending events allowed now: one less than the nearest overflow, 0 when none may wait. */
uint64_t model_batch_budget(const struct p4_model *m);
/* Hand the pending events to the model (nothing pending, the common case, costs one test). */
void model_batch_flush_now(struct model_batch *b, struct p4_model *m);
static inline void model_batch_flush(struct model_batch *b, struct p4_model *m)
{
	if (b->instr | b->clk | b->ticks)
		model_batch_flush_now(b, m);
}
/* Start a step at lp, cpl: flush what another LP or CPL left pending, renew the budget. */
static inline void model_batch_at(struct model_batch *b, struct p4_model *m, unsigned lp,
				  unsigned cpl)
{
	if (lp != b->lp || cpl != b->cpl) {
		model_batch_flush(b, m);
		b->lp = lp;
		b->cpl = cpl;
	}
	if (b->budget_dirty) {
		b->budget = model_batch_budget(m);
		b->budget_dirty = false;
	}
}

/* The same, and nothing waits this step when nothing may (the clock included). */
static inline void model_batch_enter(struct model_batch *b, struct p4_model *m, unsigned lp,
				     unsigned cpl)
{
	model_batch_at(b, m, lp, cpl);
	if (!b->budget)
		model_batch_flush(b, m);
}

/*
 * Can n more events of this step (at lp, cpl) wait in the batch? Flushes
 * when not. Inline, as model_clock_advance: every stepped instruction
 * comes here.
 */
static inline bool model_batch_takes(struct model_batch *b, struct p4_model *m, unsigned lp,
				     unsigned cpl, uint64_t n)
{
	model_batch_at(b, m, lp, cpl);
	if (b->instr + b->clk + n < b->budget)
		return true;
	model_batch_flush(b, m);
	return false;
}

/*
 * One core, one clock: LP lp's stepped cycles move its own position
 * (lp_clock[lp]); the model's clock (*clock) follows the LP furthest ahead,
 * through the batch when it takes events this step. So two LPs stepping at
 * once tick the cycles they share once, not once each (compare-mode counts
 * stay those of one core), a run that starts after another has ended
 * continues from there, and a single LP ticks exactly its step cycles.
 */
static inline void model_clock_advance(struct model_batch *b, struct p4_model *m, uint64_t *clock,
				       uint64_t lp_clock[P4_MODEL_NLP], unsigned lp,
				       uint64_t cycles)
{
	uint64_t *pos = &lp_clock[lp < P4_MODEL_NLP ? lp : 0];

	*pos += cycles;
	if (*pos > *clock) {
		if (b->budget)		/* model_batch_takes ran this step: no counter compares */
			b->ticks += *pos - *clock;
		else
			p4_model_tick(m, *pos - *clock);
		*clock = *pos;
	}
}

/* ---- prof/backend/model_pmi.c --------------------------------------------------------------- */

void model_pmi_reset(struct model_pmi *p);
/* The model's raise_pmi: record the request (ctx: the struct model_pmi). */
void model_raise(struct p4_model *m, unsigned lp, void *ctx);
/* Send the requests the calling LP's model calls raised, and let a sibling's fixed PMI in. */
void model_pmi_flush_now(struct model_pmi *p);
/* The same; inline the test for no request at all, every step's case. */
static inline void model_pmi_flush(struct model_pmi *p)
{
	for (unsigned lp = 0; lp < P4_MODEL_NLP; lp++)
		if (__atomic_load_n(&p->pending[lp], __ATOMIC_RELAXED)) {
			model_pmi_flush_now(p);
			return;
		}
}
/* After the handler unmasked lp's entry with the model still asserting: send it again, once. */
void model_pmi_resend(struct model_pmi *p, unsigned lp);
/* Deliver one PMI to lp as its LVT PC entry says; wait: may open an interrupt window. */
/* false: held for later (the target is in a stepped handler), the caller keeps it pending */
bool model_pmi_send(struct model_pmi *p, unsigned lp, bool wait);

/* ---- prof/backend/model_feed.c --------------------------------------------------------------- */

/* Which events a running counter may count, after a register write (PMU lock held). */
void model_live_update(struct model_adapter *a);
void model_feed_begin(struct perf_inputs *in, uint8_t lp);
void model_feed_end(struct perf_inputs *in, uint8_t lp);
void model_feed_step(void *ctx, const struct step_info *s);
/* A stepped instruction faulted (hooks.h fault): what real parts count of the fault itself. */
void model_feed_fault(void *ctx, const struct step_fault *f);
/* The same for a kernel instruction of the counting window (ctx: struct perf_window). */
void model_feed_kernel_step(void *ctx, const struct step_info *s);
void model_feed_synthetic(void *ctx, uint8_t lp, uint8_t cpl, const char *text, uint64_t n);
enum perf_source model_feed_source(enum p4_event ev, const struct perf_inputs *in);

#endif
