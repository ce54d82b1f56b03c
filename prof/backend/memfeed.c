/*
 * memfeed.c - one stepped instruction through the memory-system model,
 * and the PMU events its outcome makes (see memfeed.h).
 *
 * Which access counts where (mask bits as PMU reference 4.1 names them; the
 * choices the manual leaves open are the model's, listed here and in
 * docs/guide/model.md):
 * - ITLB_reference HIT / MISS: each fetch piece by its ITLB outcome; HIT_UC
 *   never (the model knows no uncacheable code).
 * - page_walk_type DTMISS / ITMISS: one per DTLB / ITLB miss (p4_mem: a
 *   miss is one walk).
 * - BSQ_cache_reference: the reads that reach L2 - loads that missed L1
 *   and instruction fetches (every fetch, delivered from the trace cache
 *   or not: the model keeps its fetches as they were before it had a trace
 *   cache) - by outcome: RD_2ndL_HITE (a clean line: the model fills
 *   reads in E), RD_2ndL_HITM (a dirty one), RD_2ndL_MISS; the L2 misses
 *   of a part with an L3 likewise as RD_3rdL_HITE / HITM / MISS. Never:
 *   RD_2ndL_HITS / RD_3rdL_HITS (one package, so no line is Shared), and
 *   WR_2ndL_MISS (a write-back from L1 missing L2: L1 is write-through).
 *   Stores (written through to L2) are not counted: the model does not
 *   report their L2 state.
 * - Bus transactions (each L2 miss below the last cache level, each dirty
 *   line written back): IOQ_allocation and BSQ_allocation one per
 *   transaction; IOQ_active_entries bus_cycles_memory (p4_cost.c) per
 *   transaction, the bus clocks its entry is modelled as active;
 *   FSB_data_activity 2 per 64-byte line (8 chunks of 8 bytes on a
 *   quad-pumped bus are 2 bus clocks): DRDY_OTHER / DBSY_OTHER for reads
 *   (memory drives the data), DRDY_DRV|DRDY_OWN / DBSY_DRV|DBSY_OWN for
 *   write-backs. The IOQ masks are ALL_READ or ALL_WRITE with MEM_WB and
 *   OWN; the 5-bit request type field (4:0) is not modelled and stays 0.
 *   BSQ_allocation: REQ_LEN0|REQ_LEN1 (a full line), REQ_CACHE_TYPE,
 *   MEM_TYPE1|MEM_TYPE2 (WB, 110B), REQ_DEM_TYPE for demand reads and
 *   RFOs, REQ_TYPE0 for an RFO (read invalidate), REQ_TYPE1 for a write-
 *   back (the field's encodings are UNVERIFIED).
 * - replay_event NBOGUS (the replay-tagging metrics, PMU reference 5.5):
 *   memfeed_replay() gives the candidates, one uop per operand - the loads
 *   that missed L1, those that missed L2, the loads and stores that missed
 *   the DTLB, the loads the MOB replayed with PARTIAL_DATA or UNALGN_ADDR
 *   (MOB_load_replay_retired's masks) - and the PMU model tags those that
 *   PEBS_ENABLE and PEBS_MATRIX_VERT select (pmu/model/p4_step.c).
 * - MOB_load_replay, memory_cancel, resource_stall SBFULL, WC_Buffer: the
 *   store buffer's model (pmu/model/p4_sbuf.c tells each mask's cause);
 *   the WC buffers only while WC_Buffer is counted (memfeed_ctx.wc_live).
 * - The trace cache (pmu/model/p4_tc.c, looked up for each fetch before
 *   its operands): BPU_fetch_request TCMISS, machine_clear SMCLEAR and
 *   CLEAR, TC_misc FLUSH (memfeed_tc_events below).
 * - front_end_event NBOGUS: prof/backend/tagfeed.c gives the loads and
 *   stores, and the PMU model tags them (p4_model_retire_mem).
 * - Uncore (IFSB/EFSB, Xeon MP with L3): IBUSQ one per L3 miss (an L3
 *   fill: Fill_match, snoop clean) and one per dirty line L3 writes back
 *   (Eviction_match), with the T0/T1 bit of the LP; EFSB (DRDY) 2 per line
 *   as for FSB_data_activity, Other for reads, Own for write-backs. Type
 *   and L3-state bits: all set (the model does not tell the types and
 *   states apart, so any selection of them matches). UNVERIFIED positions
 *   as in p4_uncore.c.
 */
#include "pmu/p4_regs.h"
#include "prof/backend/memfeed.h"

#define FSB_CLOCKS_PER_LINE	2u		/* 64 bytes, 8 bytes x 4 per bus clock */

/* Uncore attribute positions (p4_uncore.c's IBUSQ and EFSB rows). */
#define IBUSQ_T0		BIT(36)
#define IBUSQ_T1		BIT(37)
#define IBUSQ_TYPES		BITS(45, 38)
#define IBUSQ_SNOOP_CLEAN	BIT(46)
#define IBUSQ_L3_STATES		BITS(55, 49)
#define IBUSQ_EVICTION		BIT(56)
#define IBUSQ_FILL		BIT(57)
#define EFSB_OWN		BIT(32)
#define EFSB_OTHER		BIT(33)

/* ---- modelling one instruction ---------------------------------------------- */

/*
 * The fetch short cut. A fetch of the same lines as the previous fetch,
 * with no L2 access in between (every store writes through to L2; a load
 * reaches it when it misses L1), finds what the previous one left: the
 * ITLB entries in front (only fetches use the ITLB) and the lines in L2,
 * at the front of their sets. Looking them up again would change nothing,
 * so the previous outcome, which was then all hits, is repeated as is:
 * the same events and the same (zero) penalty as the lookup would give
 * (kept as the memfeed it made; an all-hit fetch sets only its ITLB hits,
 * its L2 hits and its level, which start each step's memfeed).
 */
void memfeed_init(struct memfeed_ctx *c, struct p4_mem *m, bool ht)
{
	c->mem = m;
	c->wc_live = false;		/* until model_live_update says WC_Buffer is counted */
	c->tc = &m->tc;
	c->ht = ht;
	memfeed_reset(c);
}

void memfeed_reset(struct memfeed_ctx *c)
{
	c->fetch_valid = false;
	p4_core_init(&c->core, p4_core_part_for(&c->mem->sig));
	for (unsigned lp = 0; lp < 2; lp++) {
		p4_sbuf_init(&c->sb[lp], p4_sbuf_part_for(&c->mem->sig));
		if (c->ht)
			c->sb[lp].limit /= 2;
	}
	c->st_line = 0;
	p4_tc_flush(c->tc);
}

/* The deepest level a result's pieces were found at. */
static uint8_t memfeed_level(const struct p4_mem_result *r)
{
	return r->hit[P4_LVL_MEM] ? P4_LVL_MEM : r->hit[P4_LVL_L3] ? P4_LVL_L3
	       : r->hit[P4_LVL_L2] ? P4_LVL_L2 : P4_LVL_L1;
}

static bool memfeed_all_hits(const struct p4_mem_result *r)
{
	return r->tlb_miss == 0 && r->hit[P4_LVL_L2] == r->pieces && r->page_walks == 0;
}

static inline __attribute__((always_inline)) void memfeed_add(struct memfeed *f,
							     const struct p4_mem_result *r)
{
	bool read = r->kind != P4_MEM_STORE;

	f->dtlb_walks += r->kind != P4_MEM_FETCH ? r->page_walks : 0;
	f->itlb_walks += r->kind == P4_MEM_FETCH ? r->page_walks : 0;
	if (read) {
		f->l2_hite += r->hit[P4_LVL_L2] - r->l2_hit_modified;
		f->l2_hitm += r->l2_hit_modified;
		f->l2_miss += r->l2_miss;
		f->l3_hite += r->hit[P4_LVL_L3] - r->l3_hit_modified;
		f->l3_hitm += r->l3_hit_modified;
		f->l3_miss += r->l3_miss;
	}
	f->l3_fill_miss += r->l3_miss;
	f->bus_read += r->bus_read;
	f->bus_rfo += r->bus_rfo;
	f->bus_writeback += r->bus_writeback;
	f->cycles += r->cycles;
}

/* Does the fetch of *s repeat the previous one, all hits (the short cut above)? */
static bool memfeed_fetch_repeats(const struct memfeed_ctx *c, const struct step_info *s)
{
	return s->len && c->fetch_valid && s->rip >> 6 == c->fetch_first &&
	       (s->rip + s->len - 1u) >> 6 == c->fetch_last;
}

/* Look the fetch up; *f holds nothing else yet, so what it gets is the fetch's own outcome. */
static void memfeed_fetch(struct memfeed_ctx *c, const struct step_info *s, struct memfeed *f)
{
	struct p4_mem_result r;

	if (!s->len || p4_mem_access(c->mem, P4_MEM_FETCH, s->rip, s->len, &r) != 0)
		return;
	f->itlb_hit += r.tlb_hit;
	f->itlb_miss += r.tlb_miss;
	f->fetch_level = memfeed_level(&r);
	memfeed_add(f, &r);
	c->fetch_first = s->rip >> 6;
	c->fetch_last = (s->rip + s->len - 1u) >> 6;
	c->fetch_feed = *f;
	c->fetch_valid = memfeed_all_hits(&r);
}

/* One access of one operand; false when the model refuses it (size). */
static bool memfeed_access(struct memfeed_ctx *c, enum p4_mem_kind kind, uint64_t addr,
			   uint16_t size, struct memfeed *f)
{
	struct p4_mem_result r;

	if (p4_mem_access(c->mem, kind, addr, size, &r) != 0)
		return false;
	if (kind == P4_MEM_STORE || r.l1_miss)
		c->fetch_valid = false;		/* L2 was looked up: its order may have changed */
	if (kind == P4_MEM_LOAD) {
		uint8_t lvl = memfeed_level(&r);

		if (f->load_level == 0xff || lvl > f->load_level)
			f->load_level = lvl;
		f->loads++;
		f->split_loads += r.split_line;
		f->load_l1_miss += r.l1_miss != 0;
		f->load_l2_miss += r.l2_miss != 0;
		f->load_dtlb_miss += r.tlb_miss != 0;
	} else {
		if (c->nst < INSN_MAX_MEM_OPS)
			c->st_level[c->nst++] = memfeed_level(&r);
		f->stores++;
		f->smc_clears |= p4_tc_store(c->tc, addr, size);
		f->split_stores += r.split_line;
		f->store_dtlb_miss += r.tlb_miss != 0;
	}
	memfeed_add(f, &r);
	return true;
}

/* One iteration's operands, delta bytes past the decoded addresses; false: one was refused. */
static bool memfeed_operands(struct memfeed_ctx *c, const struct step_info *s, int64_t delta,
			     struct memfeed *f)
{
	bool ok = true;

	for (unsigned i = 0; i < s->nmem && i < INSN_MAX_MEM_OPS; i++) {
		const struct insn_mem_op *op = &s->mem[i];
		uint64_t a = op->addr + (uint64_t)delta;

		if (op->access & INSN_LOAD)
			ok &= memfeed_access(c, P4_MEM_LOAD, a, op->size, f);
		if (op->access & INSN_STORE)
			ok &= memfeed_access(c, P4_MEM_STORE, a, op->size, f);
	}
	return ok;
}

/*
 * The store short cut, for a REP string whose one operand is a store (REP
 * STOS: a memset). An iteration that stores into the same 64-byte lines as
 * the one before it, which found them all in place (DTLB entry, lines,
 * nothing on the bus, no cycles), finds them so again: nothing else was
 * looked up in between, and a hit leaves the line and entry where they
 * were. The previous outcome is repeated as is, as for fetches above; a
 * 48 MiB memset asks the model once per line instead of once per store.
 */
static bool memfeed_quiet(const struct p4_mem_result *r)
{
	return r->tlb_miss == 0 && r->page_walks == 0 && r->l2_miss == 0 && r->l3_miss == 0 &&
	       r->bus_read == 0 && r->bus_rfo == 0 && r->bus_writeback == 0 && r->cycles == 0;
}

static __attribute__((noinline)) bool memfeed_rep_stores(struct memfeed_ctx *c, const struct step_info *s, uint32_t iters,
			       struct memfeed *f)
{
	const struct insn_mem_op *op = &s->mem[0];
	struct p4_mem_result r = { 0 };
	uint64_t first = 0, last = 0;
	bool same = false;

	for (uint32_t i = 0; i < iters; i++) {
		uint64_t a = op->addr + (uint64_t)((int64_t)i * s->mem_stride);
		uint64_t l0 = a >> 6, l1 = (a + op->size - 1u) >> 6;

		if (!(same && l0 == first && l1 == last)) {
			if (p4_mem_access(c->mem, P4_MEM_STORE, a, op->size, &r) != 0)
				return false;
			f->smc_clears |= p4_tc_store(c->tc, a, op->size);
		}
		same = memfeed_quiet(&r);
		first = l0;
		last = l1;
		f->stores++;
		f->store_dtlb_miss += r.tlb_miss != 0;
		memfeed_add(f, &r);
	}
	c->fetch_valid = false;		/* L2 was looked up: its order may have changed */
	return true;
}

/* The core's branch kinds (p4_core.h) by the step engine's. */
static const uint8_t memfeed_branch[INSN_NBRANCH_KINDS] = {
	[INSN_NOT_BRANCH] = P4_BR_NONE,		[INSN_COND] = P4_BR_COND,
	[INSN_JMP] = P4_BR_DIRECT,		[INSN_JMP_INDIRECT] = P4_BR_INDIRECT,
	[INSN_CALL] = P4_BR_CALL,		[INSN_CALL_INDIRECT] = P4_BR_CALL_INDIRECT,
	[INSN_RET] = P4_BR_RETURN,		[INSN_OTHER_BRANCH] = P4_BR_OTHER,
};

/* ---- the store buffer (pmu/model/p4_sbuf.c) ------------------------------------ */

/* When the instruction's address registers are ready, from its issue. */
static inline uint64_t memfeed_addr_ready(const struct memfeed_ctx *c, const struct step_info *s,
					  uint64_t issue)
{
	const uint64_t *ready = c->core.ready;

	return p4_core_max(p4_core_max(issue, ready[s->core.addr[0]]), ready[s->core.addr[1]]);
}

/* The loads' checks against the older stores: when their data can be ready (0: unconstrained). */
static inline uint64_t memfeed_sb_loads(struct memfeed_ctx *c, const struct step_info *s, uint64_t at,
				 struct memfeed *f)
{
	uint64_t l1 = (uint64_t)c->core.p->load_lat[P4_LVL_L1] * P4_CORE_SIXTHS, data = 0;

	for (unsigned i = 0; i < s->nmem && i < INSN_MAX_MEM_OPS; i++)
		if (s->mem[i].access & INSN_LOAD)
			data = p4_core_max(data, p4_sbuf_load(&c->sb[s->lp & 1], s->mem[i].addr, s->mem[i].size,
							      at, l1, &c->sbo));
	return data;
}

/*
 * The instruction's stores into the buffer, after it retired: each commits
 * in 1 clock in L1, or the part's load-to-use of the level its line was
 * found at when it is the first store to that line (the next ones to the
 * same line join it); a non-temporal store in 1 clock, into the WC buffers.
 */
static void memfeed_sb_stores(struct memfeed_ctx *c,
							const struct step_info *s,
							uint64_t addr_ready, uint64_t data_ready,
							struct memfeed *f)
{
	unsigned j = 0;

	for (unsigned i = 0; i < s->nmem && i < INSN_MAX_MEM_OPS; i++) {
		const struct insn_mem_op *op = &s->mem[i];
		uint64_t cost = 1, line = (op->addr >> 6) + 1u;
		uint8_t lvl;

		if (!(op->access & INSN_STORE))
			continue;
		lvl = j < c->nst ? c->st_level[j++] : P4_LVL_L1;
		if (s->core.nt) {
			if (c->wc_live)
				p4_sbuf_wc_store(&c->sb[0], op->addr, op->size, &c->sbo);
		} else if (lvl != P4_LVL_L1 && line != c->st_line) {
			cost = c->core.p->load_lat[lvl];
		}
		c->st_line = line;
		p4_sbuf_store(&c->sb[s->lp & 1], op->addr, op->size, addr_ready, data_ready, c->core.retire,
			      cost * P4_CORE_SIXTHS);
	}
}

/*
 * Before the core steps an instruction with memory operands: its store's
 * entry (the instruction issues no sooner than one is free), the address's
 * readiness (*addr_ready) and when its loads' data can be ready (returned).
 */
static inline uint64_t memfeed_sb_before(struct memfeed_ctx *c, const struct step_info *s,
					 struct memfeed *f, uint64_t *addr_ready)
{
	uint64_t issue = p4_core_issue(&c->core, &s->core);

	if (f->stores) {
		uint64_t at = p4_sbuf_alloc(&c->sb[s->lp & 1], issue, &c->sbo);

		c->core.front = p4_core_max(c->core.front, at);
		issue = p4_core_max(issue, at);
	}
	*addr_ready = memfeed_addr_ready(c, s, issue);
	return f->loads ? memfeed_sb_loads(c, s, *addr_ready, f) : 0;
}

/* Fences, CPUID and locked instructions write out the WC buffers ([SDM] 11.3). */
static inline bool memfeed_drains_wc(const struct p4_insn *x)
{
	return x->cls == P4_U_MFENCE || x->cls == P4_U_FENCE || x->cls == P4_U_CPUID ||
	       x->cls == P4_U_LOCKED;
}

/* The core's timing of the instruction, after data_ready for its loads; returns its done. */
static inline __attribute__((always_inline)) uint64_t memfeed_timing(struct memfeed_ctx *c,
								  const struct step_info *s,
								  uint32_t iters, struct memfeed *f,
								  uint64_t data_ready)
{
	uint32_t walks = f->dtlb_walks + f->itlb_walks;
	struct p4_core_out out;

	if (__builtin_expect(p4_core_needs_slow(&s->core, f->loads, walks, f->fetch_level) ||
			     ((f->tc >= P4_TC_BUILD) | f->smc_clears), 0)) {
		struct p4_core_in in = {
			.insn = &s->core, .load_level = f->load_level, .fetch_level = f->fetch_level,
			.walks = walks, .loads = f->loads, .stores = f->stores,
			.data_ready = data_ready, .tc = f->tc, .clear = f->smc_clears != 0,
		};

		if (s->core.flags & P4_IF_REP) {
			in.load_level = 0xff;	/* a fetch beyond L2 is in the penalty */
			in.fetch_level = f->fetch_level <= P4_LVL_L2 ? f->fetch_level : 0xff;
			in.walks = 0;
			in.iters = iters;
			in.size = s->nmem ? s->mem[0].size : 0;
			in.penalty = f->penalty;
		}
		p4_core_step(&c->core, &in, &out);
		f->clear_cycles = (uint8_t)(f->smc_clears ? p4_core_clear_clocks(&c->core) : 0);
	} else {
		p4_core_fast(&c->core, &s->core, f->stores, &out);
	}
	f->cycles = out.cycles;
	f->uops = out.uops;
	f->mispredicted = s->branch != INSN_NOT_BRANCH &&
			  p4_core_predict(&c->core, &s->core, memfeed_branch[s->branch], s->taken, s->rip,
					  s->next_rip, s->rip + s->len, out.done);
	return out.done;
}

/*
 * An instruction with memory operands, or any while the WC buffers are
 * modelled: timed with the store buffer around it (its entry, its loads'
 * checks before; its stores into the buffer and the WC drain after).
 * Out of line: the steps without operands do not pay for it.
 */
static __attribute__((noinline)) void memfeed_timing_sb(struct memfeed_ctx *c,
							const struct step_info *s,
							uint32_t iters, struct memfeed *f)
{
	/* loads alone with the buffer empty meet nothing: skip them */
	bool sb = (f->stores != 0 || (f->loads != 0 && c->sb[s->lp & 1].n != 0)) &&
		  !(s->core.flags & P4_IF_REP);
	uint64_t addr_ready = 0, data_ready = 0, done;

	c->sbo = (struct p4_sbuf_out){ 0 };
	f->sbuf = true;
	if (sb)
		data_ready = memfeed_sb_before(c, s, f, &addr_ready);
	done = memfeed_timing(c, s, iters, f, data_ready);
	if (sb && f->stores)
		memfeed_sb_stores(c, s, addr_ready, done, f);
	if (c->wc_live && memfeed_drains_wc(&s->core))
		p4_sbuf_wc_drain(&c->sb[0], &c->sbo);
	c->nst = 0;
}

/*
 * The core's timing of the instruction, from what the memory model found.
 * A REP string's misses, walks and fetch are in its penalty (the memory
 * model's, p4_cost.c), the rest the core's own.
 */
static inline __attribute__((always_inline)) void memfeed_core(struct memfeed_ctx *c,
							      const struct step_info *s,
							      uint32_t iters, struct memfeed *f)
{
	if (__builtin_expect((f->loads | f->stores | c->wc_live) != 0, 0))
		memfeed_timing_sb(c, s, iters, f);
	else
		memfeed_timing(c, s, iters, f, 0);
}

/*
 * The trace cache's part in an instruction the current line does not
 * deliver (p4_tc.h): its uop slots, as the core model counts its uops
 * (one iteration's operands; one slot for a microcode-ROM instruction),
 * and whether it ends a line (a taken branch).
 */
static __attribute__((noinline)) uint8_t memfeed_tc(struct memfeed_ctx *c, const struct step_info *s)
{
	unsigned slots = 1;

	if (!s->len)
		return P4_TC_NONE;	/* not fetched: the length is unknown */
	if (!p4_core_microcoded(&s->core)) {
		slots = c->core.p->row[s->core.cls].uops;
		for (unsigned i = 0; s->mem_status == INSN_MEM_OK && i < s->nmem &&
				     i < INSN_MAX_MEM_OPS; i++)
			slots += ((s->mem[i].access & INSN_LOAD) != 0) +
				 2u * ((s->mem[i].access & INSN_STORE) != 0);
	}
	return (uint8_t)p4_tc_fetch(c->tc, s->lp, s->rip, s->len, slots,
				    s->branch != INSN_NOT_BRANCH && s->taken);
}

void memfeed_step(struct memfeed_ctx *c, const struct step_info *s, struct memfeed *out)
{
	struct memfeed *f = out;	/* filled in place: no copy per step */
	uint32_t iters = s->rep_iters ? s->rep_iters : 1;

	if (memfeed_fetch_repeats(c, s)) {
		/* the same events and penalty as a lookup would give: all hits, nothing else */
		*f = (struct memfeed){
			.load_level = 0xff, .fetch_level = c->fetch_feed.fetch_level,
			.itlb_hit = c->fetch_feed.itlb_hit, .l2_hite = c->fetch_feed.l2_hite,
			.l2_hitm = c->fetch_feed.l2_hitm,
		};
	} else {
		*f = (struct memfeed){ .load_level = 0xff, .fetch_level = 0xff };
		memfeed_fetch(c, s, f);
	}
	f->tc = P4_TC_DELIVER;
	if (__builtin_expect(!p4_tc_deliver(c->tc, p4_tc_cursor(c->tc, s->lp), s->rip, s->len), 0))
		f->tc = memfeed_tc(c, s);
	f->known = s->mem_status == INSN_MEM_OK;
	if (f->known && s->nmem) {
		if (iters > 1 && s->nmem == 1 && s->mem[0].access == INSN_STORE)
			f->known = memfeed_rep_stores(c, s, iters, f);
		else
			for (uint32_t i = 0; i < iters && f->known; i++)
				f->known = memfeed_operands(c, s, (int64_t)i * s->mem_stride, f);
	} else {
		iters = s->core.cls >= P4_U_REP_MOVS ? iters : 1;
	}
	f->penalty = f->cycles;		/* memfeed_add summed the accesses' penalties there */
	memfeed_core(c, s, iters, f);
	if (s->flush_tlb) {		/* the kernel's CR3 reload (paging_set_user): after it, cold TLBs */
		p4_mem_flush_tlbs(c->mem);
		c->fetch_valid = false;
	}
}

/* ---- events --------------------------------------------------------------------- */

struct memfeed_list {
	struct memfeed_event *ev;
	unsigned n, max;
};

static void memfeed_put(struct memfeed_list *l, enum p4_event ev, uint16_t mask, uint32_t n)
{
	if (n && l->n < l->max)
		l->ev[l->n++] = (struct memfeed_event){ ev, mask, n };
}

#define M(k)	P4_EVMASK(k)

static void memfeed_tlb_events(const struct memfeed *f, struct memfeed_list *l)
{
	memfeed_put(l, P4_EV_ITLB_REFERENCE, M(P4_ITLB_REFERENCE_HIT), f->itlb_hit);
	memfeed_put(l, P4_EV_ITLB_REFERENCE, M(P4_ITLB_REFERENCE_MISS), f->itlb_miss);
	memfeed_put(l, P4_EV_PAGE_WALK_TYPE, M(P4_PAGE_WALK_TYPE_DTMISS), f->dtlb_walks);
	memfeed_put(l, P4_EV_PAGE_WALK_TYPE, M(P4_PAGE_WALK_TYPE_ITMISS), f->itlb_walks);
}

/*
 * The trace cache's (pmu/model/p4_tc.c): BPU_fetch_request TCMISS per
 * lookup that missed; per store into code it held (self-modifying code)
 * machine_clear SMCLEAR once and CLEAR for each clock the clear holds the
 * front end (p4_core_clear_clocks), TC_misc FLUSH twice (the event counts
 * each flush twice, PMU reference 4.1).
 */
static void memfeed_tc_events(const struct memfeed *f, struct memfeed_list *l)
{
	memfeed_put(l, P4_EV_BPU_FETCH_REQUEST, M(P4_BPU_FETCH_REQUEST_TCMISS), f->tc == P4_TC_MISS);
	memfeed_put(l, P4_EV_MACHINE_CLEAR, M(P4_MACHINE_CLEAR_SMCLEAR), f->smc_clears);
	memfeed_put(l, P4_EV_MACHINE_CLEAR, M(P4_MACHINE_CLEAR_CLEAR), f->clear_cycles);
	memfeed_put(l, P4_EV_TC_MISC, M(P4_TC_MISC_FLUSH), 2u * f->smc_clears);
}

static void memfeed_cache_events(const struct memfeed *f, struct memfeed_list *l)
{
	enum p4_event e = P4_EV_BSQ_CACHE_REFERENCE;

	memfeed_put(l, e, M(P4_BSQ_CACHE_REFERENCE_RD_2NDL_HITE), f->l2_hite);
	memfeed_put(l, e, M(P4_BSQ_CACHE_REFERENCE_RD_2NDL_HITM), f->l2_hitm);
	memfeed_put(l, e, M(P4_BSQ_CACHE_REFERENCE_RD_2NDL_MISS), f->l2_miss);
	memfeed_put(l, e, M(P4_BSQ_CACHE_REFERENCE_RD_3RDL_HITE), f->l3_hite);
	memfeed_put(l, e, M(P4_BSQ_CACHE_REFERENCE_RD_3RDL_HITM), f->l3_hitm);
	memfeed_put(l, e, M(P4_BSQ_CACHE_REFERENCE_RD_3RDL_MISS), f->l3_miss);
}

static void memfeed_bus_events(const struct memfeed *f, struct memfeed_list *l)
{
	uint32_t reads = f->bus_read + f->bus_rfo, wb = f->bus_writeback;
	uint16_t ioq_common = M(P4_IOQ_ALLOCATION_MEM_WB) | M(P4_IOQ_ALLOCATION_OWN);
	uint16_t bsq_line = M(P4_BSQ_ALLOCATION_REQ_LEN0) | M(P4_BSQ_ALLOCATION_REQ_LEN1) |
			    M(P4_BSQ_ALLOCATION_REQ_CACHE_TYPE) | M(P4_BSQ_ALLOCATION_MEM_TYPE1) |
			    M(P4_BSQ_ALLOCATION_MEM_TYPE2);
	uint32_t bus_clocks = p4_cost_params.bus_cycles_memory;
	uint32_t bsq_wb = bus_clocks * p4_cost_params.core_per_bus_clock;

	memfeed_put(l, P4_EV_IOQ_ALLOCATION, ioq_common | M(P4_IOQ_ALLOCATION_ALL_READ), reads);
	memfeed_put(l, P4_EV_IOQ_ALLOCATION, ioq_common | M(P4_IOQ_ALLOCATION_ALL_WRITE), wb);
	memfeed_put(l, P4_EV_IOQ_ACTIVE_ENTRIES, ioq_common | M(P4_IOQ_ACTIVE_ENTRIES_ALL_READ),
		    reads * bus_clocks);
	memfeed_put(l, P4_EV_IOQ_ACTIVE_ENTRIES, ioq_common | M(P4_IOQ_ACTIVE_ENTRIES_ALL_WRITE),
		    wb * bus_clocks);
	memfeed_put(l, P4_EV_BSQ_ALLOCATION, bsq_line | M(P4_BSQ_ALLOCATION_REQ_DEM_TYPE),
		    f->bus_read);
	memfeed_put(l, P4_EV_BSQ_ALLOCATION, bsq_line | M(P4_BSQ_ALLOCATION_REQ_DEM_TYPE) |
		    M(P4_BSQ_ALLOCATION_REQ_TYPE0), f->bus_rfo);
	memfeed_put(l, P4_EV_BSQ_ALLOCATION, bsq_line | M(P4_BSQ_ALLOCATION_REQ_TYPE1), wb);
	/*
	 * BSQ_active_entries: the entries active, each clock, of the requests
	 * BSQ_allocation counts, with its masks (PMU reference 4.1), so that
	 * active / allocated is the mean latency the SDM says it measures. An
	 * entry lives from its allocation to the end of its data transfer: a
	 * read or RFO the bus round trip and the memory's 12 bus clocks, a
	 * write-back those 12 bus clocks (the figures of IOQ_active_entries
	 * and of the cost model, p4_cost.c), in core clocks. One request at a
	 * time: the model issues no two misses together, so the 15-entry clip
	 * never applies.
	 */
	memfeed_put(l, P4_EV_BSQ_ACTIVE_ENTRIES, bsq_line | M(P4_BSQ_ACTIVE_ENTRIES_REQ_DEM_TYPE),
		    f->bus_read * (bsq_wb + p4_cost_params.bus_round_trip));
	memfeed_put(l, P4_EV_BSQ_ACTIVE_ENTRIES, bsq_line | M(P4_BSQ_ACTIVE_ENTRIES_REQ_DEM_TYPE) |
		    M(P4_BSQ_ACTIVE_ENTRIES_REQ_TYPE0), f->bus_rfo * (bsq_wb + p4_cost_params.bus_round_trip));
	memfeed_put(l, P4_EV_BSQ_ACTIVE_ENTRIES, bsq_line | M(P4_BSQ_ACTIVE_ENTRIES_REQ_TYPE1),
		    wb * bsq_wb);
	memfeed_put(l, P4_EV_FSB_DATA_ACTIVITY, M(P4_FSB_DATA_ACTIVITY_DRDY_OTHER) |
		    M(P4_FSB_DATA_ACTIVITY_DBSY_OTHER), reads * FSB_CLOCKS_PER_LINE);
	memfeed_put(l, P4_EV_FSB_DATA_ACTIVITY, M(P4_FSB_DATA_ACTIVITY_DRDY_DRV) |
		    M(P4_FSB_DATA_ACTIVITY_DRDY_OWN) | M(P4_FSB_DATA_ACTIVITY_DBSY_DRV) |
		    M(P4_FSB_DATA_ACTIVITY_DBSY_OWN), wb * FSB_CLOCKS_PER_LINE);
}

/*
 * Accesses that cross a 64-byte line: a split load is replayed at the load
 * port and a split store at the store port (the SDM's split_load_retired and
 * split_store_retired metrics count them so, PMU reference 4.1/5.5), and
 * memory_complete counts each split completed (LSC, SSC).
 */
static void memfeed_split_events(const struct memfeed *f, struct memfeed_list *l)
{
	memfeed_put(l, P4_EV_LOAD_PORT_REPLAY, M(P4_LOAD_PORT_REPLAY_SPLIT_LD), f->split_loads);
	memfeed_put(l, P4_EV_STORE_PORT_REPLAY, M(P4_STORE_PORT_REPLAY_SPLIT_ST), f->split_stores);
	memfeed_put(l, P4_EV_MEMORY_COMPLETE, M(P4_MEMORY_COMPLETE_LSC), f->split_loads);
	memfeed_put(l, P4_EV_MEMORY_COMPLETE, M(P4_MEMORY_COMPLETE_SSC), f->split_stores);
}

void memfeed_replay(const struct memfeed_ctx *c, const struct memfeed *f, struct p4_replay_in *r)
{
	r->l1_load = f->load_l1_miss;
	r->l2_load = f->load_l2_miss;
	r->dtlb_load = f->load_dtlb_miss;
	r->dtlb_store = f->store_dtlb_miss;
	/* MOB_load_replay_retired (PMU reference 5.5): the loads replayed for those two causes */
	r->mob_load = f->sbuf ? (uint32_t)c->sbo.partial_data + c->sbo.unalgn_addr : 0;
}

unsigned memfeed_events(const struct memfeed *f, struct memfeed_event *out, unsigned max)
{
	struct memfeed_list l = { out, 0, max };

	memfeed_tlb_events(f, &l);
	memfeed_tc_events(f, &l);
	memfeed_cache_events(f, &l);
	memfeed_bus_events(f, &l);
	memfeed_split_events(f, &l);
	return l.n;
}

unsigned memfeed_sbuf_events(const struct memfeed_ctx *c, const struct memfeed *f,
			     struct memfeed_event *out, unsigned max)
{
	struct memfeed_list l = { out, 0, max };
	const struct p4_sbuf_out *o = &c->sbo;

	if (!f->sbuf)
		return 0;
	memfeed_put(&l, P4_EV_MOB_LOAD_REPLAY, M(P4_MOB_LOAD_REPLAY_NO_STA), o->no_sta);
	memfeed_put(&l, P4_EV_MOB_LOAD_REPLAY, M(P4_MOB_LOAD_REPLAY_NO_STD), o->no_std);
	memfeed_put(&l, P4_EV_MOB_LOAD_REPLAY, M(P4_MOB_LOAD_REPLAY_PARTIAL_DATA), o->partial_data);
	memfeed_put(&l, P4_EV_MOB_LOAD_REPLAY, M(P4_MOB_LOAD_REPLAY_UNALGN_ADDR), o->unalgn_addr);
	memfeed_put(&l, P4_EV_MEMORY_CANCEL, M(P4_MEMORY_CANCEL_ST_RB_FULL), o->st_rb_full);
	memfeed_put(&l, P4_EV_MEMORY_CANCEL, M(P4_MEMORY_CANCEL_64K_CONF), o->conf_64k);
	memfeed_put(&l, P4_EV_RESOURCE_STALL, M(P4_RESOURCE_STALL_SBFULL), o->sbfull);
	memfeed_put(&l, P4_EV_WC_BUFFER, M(P4_WC_BUFFER_WCB_EVICTS), o->wcb_evicts);
	memfeed_put(&l, P4_EV_WC_BUFFER, M(P4_WC_BUFFER_WCB_FULL_EVICT), o->wcb_full_evicts);
	return l.n;
}

unsigned memfeed_uncore(const struct memfeed *f, unsigned lp, struct p4_unc_inc *out,
			unsigned max)
{
	uint64_t t = lp ? IBUSQ_T1 : IBUSQ_T0, any = IBUSQ_TYPES | IBUSQ_L3_STATES;
	unsigned n = 0;
	const struct p4_unc_inc all[P4_STEP_UNC] = {
		{ P4_UNC_IBUSQ, f->l3_fill_miss, t | any | IBUSQ_SNOOP_CLEAN | IBUSQ_FILL },
		{ P4_UNC_IBUSQ, f->bus_writeback, t | any | IBUSQ_SNOOP_CLEAN | IBUSQ_EVICTION },
		{ P4_UNC_EFSB, (f->bus_read + f->bus_rfo) * FSB_CLOCKS_PER_LINE, EFSB_OTHER },
		{ P4_UNC_EFSB, f->bus_writeback * FSB_CLOCKS_PER_LINE, EFSB_OWN },
	};

	for (unsigned i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (all[i].n && n < max)
			out[n++] = all[i];
	return n;
}
