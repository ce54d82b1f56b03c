/*
 * p4_sbuf.c - the store buffer, the MOB's load checks and the WC buffers
 * (p4_sbuf.h).
 *
 * Sources:
 *  [OPT]  IA-32 Intel Architecture Optimization Reference Manual (248966-013),
 *         ch. 1 "Loads and Stores": "48 load buffers and 24 store buffers",
 *         footnote: model 3 has "more than 24"; "Store Forwarding": the
 *         load's bytes a subset of the store's, the same linear address,
 *         a store that does not wrap a cache line; ch. 2 Figure 2-2 and
 *         Coding Rules 18/19: same start, contained, and a 128-bit forward
 *         16-byte aligned; "Aliasing Cases": models 0-2 conflict on
 *         identical bits 15:6 ("64K aliasing"), model 3 on bits 21:6, and
 *         the second reference "cannot begin until the first one is kicked
 *         out of the cache"; ch. 6 "The Non-temporal Store Instructions".
 *  [ET]   ExtremeTech, "More to Prescott than meets the eye" (Intel's
 *         Prescott briefing): 32 stores outstanding "versus 24 in past
 *         P4s", write-combining buffers "eight (from six)".
 *  [SDM]  Vol. 3A 11.3.1: the P4's WC buffer is several 64-byte buffers,
 *         a full one is written in one burst; 11.3 (WC): partly filled
 *         buffers are written at SFENCE, MFENCE, CPUID, a LOCK instruction
 *         or an interrupt. Event masks (PMU reference 4.1, SDM Table
 *         A-9/19-28): MOB_load_replay NO_STA "unknown store address",
 *         NO_STD "unknown store data", PARTIAL_DATA "partially overlapped
 *         data access between the load and store", UNALGN_ADDR "the lower
 *         4 bits of the linear address do not match between the load and
 *         store"; memory_cancel ST_RB_FULL "no store request buffer is
 *         available", 64K_CONF "conflicts due to 64K aliasing";
 *         resource_stall SBFULL "a stall due to lack of store buffers";
 *         WC_Buffer WCB_EVICTS "evictions of all causes", WCB_FULL_EVICT
 *         "eviction: no WC buffer is available".
 *  [ITJ]  Marr et al., "Hyper-Threading Technology Architecture and
 *         Microarchitecture", Intel Technology Journal 6(1), 2002, the
 *         allocator: at most 63 re-order buffer entries, 24 load buffers
 *         and 12 store buffer entries per logical processor.
 *  [VT]   VTune's Pentium 4 advice, "Blocked store forwards": a store that
 *         cannot be forwarded "can cause a stall the length of the pipeline".
 *
 * Families as in p4_core.c: models 0-2 Northwood-class (24 store buffers,
 * 6 WC buffers, bits 15:6), 3, 4 and 6 Prescott-class (32, 8, bits 21:6).
 * The sources name model 3 only; models 4 and 6 (the same core) take its
 * figures, as p4_core.c's family does.
 *
 * The model, per instruction (time in sixths of a clock, the core model's):
 * - A store takes an entry when its instruction issues; with every entry
 *   held by a store that has not committed by then, it waits until the
 *   oldest one commits: one memory_cancel ST_RB_FULL ("replayed because
 *   no store request buffer is available") and the clocks waited as
 *   resource_stall SBFULL (the waits summed exactly, each whole clock of
 *   the sum counted once).
 * - Stores commit in order after retirement: commit = max(retire, the
 *   previous store's commit) + the cost of where the memory model found
 *   its line: 1 clock in L1 (one store a clock, [OPT] "up to one load and
 *   one store may be issued for each cycle"), else the part's load-to-use
 *   of the level (L2, L3, memory: the RFO), p4_core.c's figures. Commits
 *   do not overlap: the harder reading. A non-temporal store commits in 1
 *   clock into a WC buffer (no RFO, [OPT] ch. 6).
 * - A load checks the stores not yet committed when its address is ready,
 *   youngest first; the first that overlaps it or conflicts with it decides:
 *   - overlapping, its address not yet known: NO_STA, the load waits for it;
 *   - forwardable ([OPT]: the same start, the load's bytes within the
 *     store's, a store within one line, a 16-byte load 16-byte aligned):
 *     the data comes at max(address ready, store data ready) + the L1
 *     latency, with NO_STD when the store's data was not ready;
 *   - not forwardable: UNALGN_ADDR when the starts differ (in bits 3:0:
 *     overlapping accesses of at most 16 bytes whose starts differ differ
 *     there), else PARTIAL_DATA; the load is replayed until the store
 *     has committed and then pays the penalty: its data comes at
 *     max(address ready, the store's commit) + the penalty;
 *   - no overlap, the same bits alias_top:6 and another line: memory_cancel
 *     64K_CONF, the data at the later of the store's commit + L1 and the
 *     address + L1 ([OPT]: it cannot begin until the store is done).
 *   Only the youngest matching store is looked at (a load whose bytes come
 *   from two stores finds the younger one short: PARTIAL_DATA).
 * - The forwarding penalty is the pipeline's length [VT]: 20 clocks on the
 *   Northwood-class hyper-pipeline and 31 on Prescott's (Intel's published
 *   depths); no measured figure was in reach. Counting it from the store's
 *   commit rather than from the load's address is the harder reading (the
 *   ROB would otherwise hide it behind the store's retirement).
 * - WC buffers: a non-temporal store joins the buffer of its 64-byte line,
 *   or takes a free one, or evicts the oldest (WCB_EVICTS and
 *   WCB_FULL_EVICT: no buffer was available); a buffer whose 64 bytes are
 *   all written is evicted at once (WCB_EVICTS: the SDM lets the processor
 *   write a filled buffer; the model does it at once); p4_sbuf_wc_drain
 *   evicts every buffer in use (WCB_EVICTS each).
 * With Hyper-Threading each LP has its own half of the entries ([ITJ]: the
 * allocator lets a logical processor hold at most 12 of the 24 store
 * buffer entries; the same halving taken for Prescott's 32), and its loads
 * check its own stores (the caller keeps a buffer per LP, limit set to
 * half); the WC buffers stay one set for the core (the caller's first
 * buffer): no source says they are split, and shared is the harder
 * reading. Not modelled: a REP string's stores (timed by its rate
 * in p4_core.c), NO_STA for a load past a store that does not overlap it
 * (NetBurst speculates loads past stores not predicted to alias, [OPT]).
 */
#include "pmu/model/p4_sbuf.h"

static const struct p4_sbuf_part p4_sbuf_northwood = {
	.entries = 24, .wc_buffers = 6, .alias_top = 15, .sf_penalty = 20,
};

static const struct p4_sbuf_part p4_sbuf_prescott = {
	.entries = 32, .wc_buffers = 8, .alias_top = 21, .sf_penalty = 31,
};

#define SIXTHS		6u

const struct p4_sbuf_part *p4_sbuf_part_for(const struct p4_sig *sig)
{
	return sig->model <= 2 ? &p4_sbuf_northwood : &p4_sbuf_prescott;
}

void p4_sbuf_init(struct p4_sbuf *b, const struct p4_sbuf_part *p)
{
	*b = (struct p4_sbuf){ .p = p, .limit = p->entries };
}

static inline uint64_t sbuf_max(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* Drop the stores that committed by `now` (commits are in order: the oldest first). */
static void sbuf_retire(struct p4_sbuf *b, uint64_t now)
{
	while (b->n && b->e[b->head].commit <= now) {
		b->head = (b->head + 1u) % P4_SBUF_MAX;
		b->n--;
	}
}

static bool sbuf_forwards(const struct p4_sbuf_entry *s, uint64_t addr, uint16_t size)
{
	return s->addr == addr && size <= s->size &&
	       (s->addr >> 6) == ((s->addr + s->size - 1u) >> 6) && !(size == 16 && (addr & 15u));
}

uint64_t p4_sbuf_load(struct p4_sbuf *b, uint64_t addr, uint16_t size, uint64_t at, uint64_t l1,
		      struct p4_sbuf_out *o)
{
	uint64_t amask = ((UINT64_C(1) << (b->p->alias_top + 1u)) - 1u) & ~UINT64_C(63);

	sbuf_retire(b, at);
	for (unsigned k = b->n; k-- > 0;) {
		const struct p4_sbuf_entry *s = &b->e[(b->head + k) % P4_SBUF_MAX];

		if (addr < s->addr + s->size && s->addr < addr + size) {
			if (s->addr_ready > at) {
				o->no_sta++;
				at = s->addr_ready;
			}
			if (sbuf_forwards(s, addr, size)) {
				o->no_std += s->data_ready > at;
				return sbuf_max(at, s->data_ready) + l1;
			}
			if ((s->addr ^ addr) & 15u)
				o->unalgn_addr++;
			else
				o->partial_data++;
			return sbuf_max(at, s->commit) + (uint64_t)b->p->sf_penalty * SIXTHS;
		}
		if (((s->addr ^ addr) & amask) == 0 && (s->addr >> 6) != (addr >> 6)) {
			o->conf_64k++;
			return sbuf_max(at, s->commit) + l1;
		}
	}
	return 0;
}

uint64_t p4_sbuf_alloc(struct p4_sbuf *b, uint64_t issue, struct p4_sbuf_out *o)
{
	uint64_t free_at;

	sbuf_retire(b, issue);
	if (b->n < b->limit)
		return issue;
	free_at = b->e[b->head].commit;
	o->st_rb_full++;
	o->sbfull += (uint32_t)((b->stalled + free_at - issue) / SIXTHS - b->stalled / SIXTHS);
	b->stalled += free_at - issue;
	sbuf_retire(b, free_at);
	return free_at;
}

void p4_sbuf_store(struct p4_sbuf *b, uint64_t addr, uint16_t size, uint64_t addr_ready,
		   uint64_t data_ready, uint64_t retire, uint64_t cost)
{
	struct p4_sbuf_entry *s;

	if (b->n == P4_SBUF_MAX) {		/* only without p4_sbuf_alloc: keep the youngest */
		b->head = (b->head + 1u) % P4_SBUF_MAX;
		b->n--;
	}
	s = &b->e[(b->head + b->n) % P4_SBUF_MAX];
	b->n++;
	b->last_commit = sbuf_max(retire, b->last_commit) + cost;
	*s = (struct p4_sbuf_entry){ .addr = addr, .size = size, .addr_ready = addr_ready,
				     .data_ready = data_ready, .commit = b->last_commit };
}

/* Evict WC buffer i (the others keep their order). */
static void sbuf_wc_evict(struct p4_sbuf *b, unsigned i, struct p4_sbuf_out *o)
{
	o->wcb_evicts++;
	for (unsigned j = i + 1u; j < b->nwcb; j++)
		b->wcb[j - 1u] = b->wcb[j];
	b->nwcb--;
}

/* Bytes [from, from + n) of a 64-byte line as a mask (n >= 1, from + n <= 64). */
static uint64_t sbuf_bytes(unsigned from, unsigned n)
{
	uint64_t m = n >= 64u ? ~UINT64_C(0) : (UINT64_C(1) << n) - 1u;

	return m << from;
}

void p4_sbuf_wc_store(struct p4_sbuf *b, uint64_t addr, uint16_t size, struct p4_sbuf_out *o)
{
	while (size) {		/* a store that crosses a line writes two buffers */
		uint64_t line = addr >> 6;
		unsigned from = (unsigned)(addr & 63u), n = 64u - from < size ? 64u - from : size;
		unsigned i = 0;

		while (i < b->nwcb && b->wcb[i].line != line)
			i++;
		if (i == b->nwcb) {
			if (b->nwcb == b->p->wc_buffers) {
				o->wcb_full_evicts++;
				sbuf_wc_evict(b, 0, o);
			}
			i = b->nwcb++;
			b->wcb[i] = (struct p4_wcb){ .line = line };
		}
		b->wcb[i].bytes |= sbuf_bytes(from, n);
		if (b->wcb[i].bytes == ~UINT64_C(0))
			sbuf_wc_evict(b, i, o);
		addr += n;
		size = (uint16_t)(size - n);
	}
}

void p4_sbuf_wc_drain(struct p4_sbuf *b, struct p4_sbuf_out *o)
{
	o->wcb_evicts = (uint8_t)(o->wcb_evicts + b->nwcb);
	b->nwcb = 0;
}
