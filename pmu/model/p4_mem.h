/*
 * p4_mem.h - a deterministic model of the NetBurst memory hierarchy.
 *
 * L1 data cache, unified L2 (sectored), the L3 of the Xeon MP parts, DTLB
 * and ITLB, sized per CPU model from the rows of p4_mem.c's part table
 * (each parameter cited there), plus a cost model that turns an
 * instruction's uops and its accesses' outcomes into clockticks. It is a
 * model: it knows no prefetcher other than the adjacent-line fetch of a
 * sector, no store buffer (p4_sbuf.c models it beside), no replays and no
 * second LP.
 * The same inputs always give the same outputs; nothing is allocated
 * (struct p4_mem is sized for the largest part).
 *
 * Use: p4_mem_init(&m, &sig, P4_MEM_DESKTOP, NULL) once, then one
 * p4_mem_access() per memory operand (load, store) and per instruction
 * fetch; p4_cost_insn() turns the results of one instruction into cycles.
 * An access that crosses a cache line or a page boundary is two accesses
 * (result.pieces == 2) and both are counted in the result.
 */
#ifndef NBPROF_PMU_MODEL_P4_MEM_H
#define NBPROF_PMU_MODEL_P4_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pmu/model/p4_tc.h"
#include "pmu/p4_caps.h"

/* The largest part the state must hold (p4_mem.c checks every row against these). */
#define P4_MEM_MAX_L1_LINES	256u		/* 16 KB / 64 B */
#define P4_MEM_MAX_L2_SECTORS	16384u		/* 2 MB / 128 B */
#define P4_MEM_MAX_L3_SECTORS	65536u		/* 8 MB / 128 B */
#define P4_MEM_MAX_TLB		64u
#define P4_MEM_MAX_WAYS		16u

enum p4_mem_kind {
	P4_MEM_LOAD,
	P4_MEM_STORE,
	P4_MEM_FETCH,		/* instruction fetch: ITLB, then L2 (the trace cache: p4_tc.h) */
	P4_MEM_NKINDS
};

/* Which variant of a model's parts: the model number alone does not say whether there is an L3. */
enum p4_mem_variant {
	P4_MEM_DESKTOP,		/* Pentium 4 / Pentium D / Xeon DP of the model: no L3 */
	P4_MEM_XEON_MP_L3,	/* the Xeon MP of the model, with its L3 (models 2, 3, 4, 6) */
};

/* One cache level's geometry. */
struct p4_cache_geom {
	uint32_t size;			/* bytes; 0 = no such level */
	uint16_t ways;
	uint16_t line;			/* bytes per line (64 on every NetBurst cache) */
	uint8_t lines_per_sector;	/* 2: one tag covers two adjacent lines (L2, L3) */
};

struct p4_tlb_geom {
	uint16_t entries;
	uint16_t ways;			/* == entries: fully associative */
};

/* A part's memory system: a row of p4_mem.c's table. */
struct p4_mem_part {
	const char *name;
	struct p4_cache_geom l1d, l2, l3;
	struct p4_tlb_geom dtlb, itlb;
	uint8_t l1_latency, l2_latency, l3_latency;	/* load-to-use, core clocks */
};

/* Caller's answer to "which page size maps addr": 12 (4 KiB) or 21 (2 MiB). */
typedef unsigned p4_mem_page_shift_fn(void *ctx, uint64_t addr);

struct p4_mem_way {
	uint64_t tag;			/* address >> log2(line * lines_per_sector) */
	uint8_t valid;			/* bit per line of the sector; 0 = way empty */
	uint8_t dirty;			/* bit per line (L2, L3: write-back) */
};

/* One set-associative array; ways of a set are kept in LRU order, most recent first. */
struct p4_cache {
	struct p4_cache_geom g;
	uint32_t sets;
	uint8_t block_shift;		/* log2(line * lines_per_sector) */
	uint8_t line_shift;		/* log2(line) */
	struct p4_mem_way *way;		/* sets * g.ways entries, into struct p4_mem's storage */
};

struct p4_tlb_entry {
	uint64_t vpn;			/* addr >> shift */
	uint8_t shift;			/* 0 = empty */
};

struct p4_tlb {
	struct p4_tlb_geom g;
	struct p4_tlb_entry e[P4_MEM_MAX_TLB];	/* LRU order, most recent first */
};

struct p4_mem {
	struct p4_sig sig;
	const struct p4_mem_part *part;
	bool adjacent_line;		/* a miss fills the whole sector (default on) */
	p4_mem_page_shift_fn *page_shift;	/* NULL: 4 KiB pages everywhere */
	void *page_ctx;
	struct p4_cache l1d, l2, l3;
	struct p4_tlb dtlb, itlb;
	struct p4_mem_way l1_store[P4_MEM_MAX_L1_LINES];
	struct p4_mem_way l2_store[P4_MEM_MAX_L2_SECTORS];
	struct p4_mem_way l3_store[P4_MEM_MAX_L3_SECTORS];
	struct p4_tc tc;		/* the trace cache's storage (p4_tc.h; prof/backend/memfeed.c drives it) */
};

/*
 * Outcome of one p4_mem_access(), counted over its pieces (an access that
 * crosses a line or page boundary is two pieces). Each piece is looked up
 * in the TLB of its kind, then in L1 (loads and stores), L2, L3, memory;
 * hit[] counts where each piece was found, so its entries add up to
 * pieces. A store found in L1 still writes through to L2: what that does
 * there shows in l2_miss, bus_rfo and the write-backs, not in hit[].
 */
enum p4_mem_level { P4_LVL_L1, P4_LVL_L2, P4_LVL_L3, P4_LVL_MEM, P4_NLEVELS };

struct p4_mem_result {
	enum p4_mem_kind kind;
	uint8_t pieces;			/* 1, or 2 for a line- or page-split access */
	bool split_line, split_page;
	uint8_t hit[P4_NLEVELS];	/* pieces found at each level */
	uint8_t l1_miss, l2_miss, l3_miss;	/* lookups that missed each level */
	uint8_t l2_sector_hit;		/* L2 misses whose sector tag was present (line not valid) */
	uint8_t l2_hit_modified;	/* L2 hits on a dirty line (state M; other hits are E) */
	uint8_t l3_hit_modified;	/* the same for L3 */
	uint8_t tlb_hit, tlb_miss;	/* DTLB for loads/stores, ITLB for fetches */
	uint8_t page_walks;		/* one per TLB miss */
	uint8_t bus_read, bus_rfo;	/* read and read-for-ownership transactions */
	uint8_t bus_writeback;		/* dirty 64-byte lines written to memory */
	uint8_t l3_writeback;		/* dirty L2 lines written into L3 */
	uint32_t cycles;		/* penalty from the cost model (p4_cost_access) */
};

/*
 * Set up *m for a family-0FH signature and variant. page_shift may be NULL
 * (4 KiB pages). Returns 0, or -1 for a signature or variant with no row
 * (m untouched).
 */
int p4_mem_init(struct p4_mem *m, const struct p4_sig *sig, enum p4_mem_variant v,
		p4_mem_page_shift_fn *page_shift, void *page_ctx);

/* Empty every cache and TLB (the geometry stays). */
void p4_mem_flush(struct p4_mem *m);
/* Empty both TLBs, as a write to CR3 does when no page is global (SDM Vol. 3A 4.10.4.1). */
void p4_mem_flush_tlbs(struct p4_mem *m);

/*
 * One memory access of size bytes (1..4096) at linear address addr. Returns
 * 0 with *r filled, or -1 (nothing changed) for a bad kind or size.
 */
int p4_mem_access(struct p4_mem *m, enum p4_mem_kind kind, uint64_t addr, uint32_t size,
		  struct p4_mem_result *r);

/* The part row that p4_mem_init would pick, or NULL. */
const struct p4_mem_part *p4_mem_part_lookup(const struct p4_sig *sig, enum p4_mem_variant v);

/* ---- cost model (p4_cost.c) ------------------------------------------------------ */

/*
 * The clocktick cost model's parameters: one const table, p4_cost_params
 * in p4_cost.c, with the reasoning for each number. A model, not a
 * measurement of any part.
 */
struct p4_cost_params {
	uint8_t uops_per_cycle;		/* retirement width */
	uint8_t bus_round_trip;		/* core clocks to reach the bus and back */
	uint8_t bus_cycles_memory;	/* bus clocks for a memory read */
	uint8_t core_per_bus_clock;	/* core clocks per bus clock */
	uint8_t page_walk;		/* core clocks per page walk */
};

extern const struct p4_cost_params p4_cost_params;

/* Penalty of one access (also stored in r->cycles by p4_mem_access). */
uint32_t p4_cost_access(const struct p4_mem *m, const struct p4_mem_result *r);

/*
 * A uop count for an instruction the model knows only by its accesses:
 * one for the operation, one per load, two per store (store address and
 * store data). A model for callers without a uop table.
 */
static inline unsigned p4_cost_uops(unsigned loads, unsigned stores)
{
	return 1u + loads + 2u * stores;
}

/* Base cycles of uops: max(1, ceil(uops / width)). Inline: the model's step feed. */
static inline uint64_t p4_cost_base(unsigned uops)
{
	unsigned per = p4_cost_params.uops_per_cycle;
	uint64_t cycles = (uops + per - 1u) / per;

	return cycles ? cycles : 1;
}

/* Clockticks of one instruction: base cycles from its uops plus each access's penalty. */
uint64_t p4_cost_insn(unsigned uops, const struct p4_mem_result *acc, size_t nacc);

#endif
