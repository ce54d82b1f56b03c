/*
 * p4_sbuf.h - the NetBurst store buffer, the memory order buffer's checks
 * of a load against older stores, and the write-combining buffers of
 * non-temporal stores (p4_sbuf.c cites every figure).
 *
 * Time is the core model's (pmu/model/p4_core.h: sixths of a clock). The
 * step feed (prof/backend/memfeed.c) asks, for each load of an
 * instruction, when its data can be ready given the stores still in the
 * buffer (p4_sbuf_load), makes a store wait for a free entry
 * (p4_sbuf_alloc), and hands each store to the buffer once its instruction
 * retired (p4_sbuf_store), where it commits in order at the cost of where
 * its line is. What happened is summed in struct p4_sbuf_out: the MOB's
 * replays, the cancels, the stall clocks and the WC buffers' evictions.
 *
 * Pure: no hardware, compiled on the host for tests/host/test_sbuf.c.
 */
#ifndef NBPROF_PMU_MODEL_P4_SBUF_H
#define NBPROF_PMU_MODEL_P4_SBUF_H

#include <stdbool.h>
#include <stdint.h>

#include "pmu/p4_caps.h"

#define P4_SBUF_MAX		32u	/* the largest part's store buffer */
#define P4_WCB_MAX		8u	/* the largest part's write-combining buffers */

/* A part family's figures (p4_sbuf.c). */
struct p4_sbuf_part {
	uint8_t entries;		/* store buffer entries */
	uint8_t wc_buffers;		/* 64-byte write-combining buffers */
	uint8_t alias_top;		/* the data conflict's address bits: alias_top:6 */
	uint8_t sf_penalty;		/* clocks a load waits when forwarding fails */
};

/* One store in the buffer (times in sixths). */
struct p4_sbuf_entry {
	uint64_t addr;
	uint64_t addr_ready, data_ready;	/* when its address and its data were known */
	uint64_t commit;		/* when it left the buffer (written to L1/L2 or a WC buffer) */
	uint16_t size;
};

struct p4_wcb {
	uint64_t line;			/* address >> 6 */
	uint64_t bytes;			/* a bit per byte written */
};

struct p4_sbuf {
	const struct p4_sbuf_part *p;
	unsigned limit;			/* the entries its LP may hold: p->entries, or half with HT */
	struct p4_sbuf_entry e[P4_SBUF_MAX];	/* a ring, oldest at head */
	unsigned head, n;
	uint64_t last_commit;		/* the youngest store's commit */
	uint64_t stalled;		/* time stores waited for an entry, in all (sixths) */
	struct p4_wcb wcb[P4_WCB_MAX];	/* oldest first */
	unsigned nwcb;
};

/* What one instruction met (counts of occurrences; sbfull in clocks). */
struct p4_sbuf_out {
	uint8_t no_sta, no_std, partial_data, unalgn_addr;	/* MOB_load_replay */
	uint8_t st_rb_full, conf_64k;				/* memory_cancel */
	uint8_t wcb_evicts, wcb_full_evicts;			/* WC_Buffer */
	uint32_t sbfull;					/* resource_stall SBFULL, clocks */
};

/* The figures of a family-0FH signature: Northwood-class (models 0-2) or Prescott-class. */
const struct p4_sbuf_part *p4_sbuf_part_for(const struct p4_sig *sig);

void p4_sbuf_init(struct p4_sbuf *b, const struct p4_sbuf_part *p);

/*
 * A load of size bytes at addr whose address is ready at `at`: the
 * earliest time its data can be ready because of the older stores still
 * in the buffer (0: none constrains it), l1 the part's L1 load-to-use in
 * sixths. Counts the replay or cancel in *o.
 */
uint64_t p4_sbuf_load(struct p4_sbuf *b, uint64_t addr, uint16_t size, uint64_t at, uint64_t l1,
		      struct p4_sbuf_out *o);

/*
 * A store's instruction wants to issue at `issue`: when it can, having
 * waited for the oldest store to leave a full buffer (counted in *o).
 */
uint64_t p4_sbuf_alloc(struct p4_sbuf *b, uint64_t issue, struct p4_sbuf_out *o);

/*
 * The store retired at `retire` (its address and data known at addr_ready,
 * data_ready); it commits after the older stores, taking `cost` sixths.
 */
void p4_sbuf_store(struct p4_sbuf *b, uint64_t addr, uint16_t size, uint64_t addr_ready,
		   uint64_t data_ready, uint64_t retire, uint64_t cost);

/* A non-temporal store of size bytes at addr into the WC buffers (evictions in *o). */
void p4_sbuf_wc_store(struct p4_sbuf *b, uint64_t addr, uint16_t size, struct p4_sbuf_out *o);

/* A fence, a serializing or locked instruction: every WC buffer in use is evicted. */
void p4_sbuf_wc_drain(struct p4_sbuf *b, struct p4_sbuf_out *o);

#endif
