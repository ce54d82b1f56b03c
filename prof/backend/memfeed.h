/*
 * memfeed.h - what one stepped instruction does in the memory-system
 * model (pmu/model/p4_mem.h), and the PMU events that makes.
 *
 * The model backend (prof/backend/model.c) calls memfeed_step() with each
 * struct step_info the step engine reports: the instruction fetch and
 * every memory operand (each iteration of a REP string instruction) go
 * through p4_mem_access(), the outcomes are summed in struct memfeed, and
 * the core's timing model (pmu/model/p4_core.c) turns the decoded
 * instruction, where its loads were found and its branch into clockticks,
 * uops and a mispredict. memfeed_events() then lists the
 * occurrences, with the mask bits of the event table (PMU reference 4.1),
 * that the backend puts in the step's batch (struct p4_step_batch, which
 * the PMU model applies); memfeed_replay() the replayed µops the model's
 * replay tagging may count, memfeed_uncore() the occurrences of the L3/FSB
 * uncore units. docs/guide/model.md
 * tells which event comes from where and what is not modelled.
 *
 * Portable: no hardware, compiled on the host for tests/host/test_memfeed.c.
 */
#ifndef NBPROF_PROF_MEMFEED_H
#define NBPROF_PROF_MEMFEED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/hooks.h"
#include "pmu/model/p4_core.h"
#include "pmu/model/p4_mem.h"
#include "pmu/model/p4_model.h"
#include "pmu/model/p4_sbuf.h"
#include "pmu/model/p4_tc.h"
#include "pmu/p4_events.h"
#include "pmu/p4_uncore.h"

/* One instruction's outcome in the memory model (all counts over its accesses' pieces). */
struct memfeed {
	bool known;			/* the operands were decoded (else only the fetch was modelled) */
	bool mispredicted;		/* its branch was mispredicted (p4_core.c's predictor) */
	uint8_t load_level;		/* deepest level a load reached (enum p4_mem_level), 0xff: none */
	uint8_t fetch_level;		/* deepest level the fetch reached, 0xff: not fetched */
	bool sbuf;			/* the store buffer's outcome is in memfeed_ctx.sbo */
	uint8_t tc;			/* the trace cache's outcome (enum p4_tc_outcome), 0: no fetch */
	uint8_t smc_clears;		/* a store into code the trace cache held: a machine clear
					   (0 or 1: it empties the trace cache) */
	uint8_t clear_cycles;		/* the clocks that clear holds the front end */
	uint32_t uops;			/* the core model's uops (p4_core.c), all iterations */
	uint32_t loads, stores;		/* load and store operands (a read-modify-write is both) */
	uint32_t load_l1_miss;		/* loads with a piece that missed L1 */
	uint32_t load_l2_miss;		/* loads with a piece that missed L2 */
	uint32_t load_dtlb_miss, store_dtlb_miss;	/* operands with a piece that missed the DTLB */
	uint32_t split_loads, split_stores;	/* operands that cross a 64-byte line */
	uint32_t itlb_hit, itlb_miss;	/* fetch pieces */
	uint32_t dtlb_walks, itlb_walks;
	/* BSQ_cache_reference reads: L2 and L3 lookups of loads and fetches */
	uint32_t l2_hite, l2_hitm, l2_miss, l3_hite, l3_hitm, l3_miss;
	uint32_t bus_read, bus_rfo, bus_writeback;	/* transactions leaving the package */
	uint32_t l3_fill_miss;		/* L3 misses of every kind (loads, fetches, stores) */
	uint64_t penalty;		/* the accesses' penalties (p4_cost_access): a REP string's misses */
	uint64_t cycles;		/* clockticks from the core's timing model (p4_core.c) */
};

/*
 * The memory model with what the feed remembers between instructions: the
 * last fetch, repeated without a lookup while nothing can have changed its
 * outcome (memfeed.c). memfeed_init() after p4_mem_init(), memfeed_reset()
 * after p4_mem_flush().
 */
struct memfeed_ctx {
	struct p4_mem *mem;
	struct p4_core core;		/* the core's timing model, of the memory model's part */
	bool fetch_valid;		/* fetch_feed may be repeated */
	uint64_t fetch_first, fetch_last;	/* its first and last byte's 64-byte lines */
	struct memfeed fetch_feed;	/* what the last fetch lookup gave (memfeed_fetch) */
	/*
	 * The store buffer of each LP (p4_sbuf.c: with HT each holds half the
	 * entries) and, in sb[0], the core's WC buffers.
	 */
	struct p4_sbuf sb[2];
	bool ht;			/* the two LPs share the core: halve the buffers (memfeed_init) */
	struct p4_sbuf_out sbo;		/* what they did in the last step that used them */
	bool wc_live;			/* WC_Buffer is counted: model the WC buffers */
	uint8_t nst;			/* this step's stores looked up so far */
	uint8_t st_level[INSN_MAX_MEM_OPS];	/* where each was found (enum p4_mem_level) */
	uint64_t st_line;		/* the line of the last store the buffer took, + 1 */
	struct p4_tc *tc;		/* the trace cache (pmu/model/p4_tc.c): mem->tc, emptied with the rest */
};

/*
 * ht: the core runs two LPs (Hyper-Threading), so each store buffer holds
 * half the entries. memfeed_reset() also empties the core model
 * (scoreboard, predictor): a run starts cold.
 */
void memfeed_init(struct memfeed_ctx *c, struct p4_mem *m, bool ht);
void memfeed_reset(struct memfeed_ctx *c);

/*
 * Model the instruction of *s in c's memory model and fill *out. The fetch (s->rip,
 * s->len) is modelled when the length is known; the operands when
 * s->mem_status is INSN_MEM_OK. An instruction whose operands are not
 * known costs its base cycle and its fetch only (out->known false).
 */
void memfeed_step(struct memfeed_ctx *c, const struct step_info *s, struct memfeed *out);

/* One occurrence batch for p4_model_event(). */
struct memfeed_event {
	enum p4_event ev;
	uint16_t mask;
	uint32_t n;
};

#define MEMFEED_MAX_EVENTS	40

/* The PMU events of *f (n > 0 only), in a fixed order; returns how many. */
unsigned memfeed_events(const struct memfeed *f, struct memfeed_event *out, unsigned max);

/*
 * The store buffer's events of the step c just modelled into *f (none when
 * it had no memory operand and the WC buffers are not modelled):
 * MOB_load_replay by cause, memory_cancel ST_RB_FULL and 64K_CONF,
 * resource_stall SBFULL (clocks), WC_Buffer WCB_EVICTS and WCB_FULL_EVICT.
 * Returns how many.
 */
unsigned memfeed_sbuf_events(const struct memfeed_ctx *c, const struct memfeed *f,
			     struct memfeed_event *out, unsigned max);

/*
 * The step's replayed µops by cause (struct p4_replay_in): which of them
 * replay_event NBOGUS counts, PEBS_ENABLE and PEBS_MATRIX_VERT decide in
 * the PMU model (p4_model_replay_tagged, PMU reference 5.5).
 */
void memfeed_replay(const struct memfeed_ctx *c, const struct memfeed *f, struct p4_replay_in *r);

/*
 * The IBUSQ and EFSB occurrences of *f for the LP (0/1) that ran it, at
 * most max of them (P4_STEP_UNC are all there can be); returns how many.
 */
unsigned memfeed_uncore(const struct memfeed *f, unsigned lp, struct p4_unc_inc *out,
			unsigned max);

#endif
