/*
 * test_memfeed.c - prof/backend/memfeed.c: stepped instructions through the memory
 * model, the events their outcomes make, and the fetch short cut.
 *
 * Geometry (p4_mem.c): 0F_04H desktop, L1D 16 KB 8-way with 64-byte lines,
 * L2 2 MB 8-way of 128-byte sectors, 64-entry TLBs, L2 latency 20; 0F_04H
 * Xeon MP: L2 1 MB, L3 8 MB. Cost model (p4_cost.c), the penalties a REP
 * string's misses pay: memory 20 + 12 + 12 * 15 = 212 after a 20-clock L2, a
 * page walk 30. Clockticks come from the core model (p4_core.c, Prescott-
 * class for 0F_04H: REP MOVS 62 sixths of a clock per 64 bytes, memory 375
 * and a walk 17).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "prof/backend/memfeed.h"

#define CODE		UINT64_C(0x100000)
#define BUF		UINT64_C(0x40000000)
#define MEM_COST	212u
#define WALK		30u

static struct p4_mem mem, mem2;		/* large: static */
static const struct p4_sig sig04 = { 0x0f, 0x04, 1 };

static void setup(struct memfeed_ctx *c, struct p4_mem *m, enum p4_mem_variant v)
{
	assert_int_equal(p4_mem_init(m, &sig04, v, NULL, NULL), 0);
	memfeed_init(c, m, false);
}

/* A 4-byte instruction at rip with one operand (access 0: none). */
static struct step_info insn(uint64_t rip, enum insn_access acc, uint64_t addr, uint16_t size)
{
	struct step_info s = { .rip = rip, .len = 4, .mem_status = INSN_MEM_OK, .rep_iters = 1 };

	if (acc) {
		s.nmem = 1;
		s.mem[0] = (struct insn_mem_op){ .addr = addr, .size = size, .access = acc };
	}
	return s;
}

static void walk_twice_l1_counts_every_load(void **state)
{
	struct memfeed_ctx c;
	struct memfeed f;
	unsigned misses = 0, loads = 0;

	(void)state;
	setup(&c, &mem, P4_MEM_DESKTOP);
	for (unsigned pass = 0; pass < 3; pass++) {
		for (uint64_t a = 0; a < 32 * 1024; a += 64) {
			struct step_info s = insn(CODE, INSN_LOAD, BUF + a, 1);

			memfeed_step(&c, &s, &f);
			assert_true(f.known);
			misses += f.load_l1_miss;
			loads += f.loads;
		}
	}
	assert_int_equal(loads, 3 * 512);
	assert_int_equal(misses, 3 * 512);	/* 16 lines per set cycling through 8 ways */
}

static void rep_iterations_follow_the_stride(void **state)
{
	struct memfeed_ctx c;
	struct memfeed f;
	struct step_info s = insn(CODE, INSN_LOAD, BUF, 1);

	(void)state;
	setup(&c, &mem, P4_MEM_DESKTOP);
	s.nmem = 2;				/* MOVSB: load [rsi], store [rdi] */
	s.mem[1] = (struct insn_mem_op){ .addr = BUF + 8192, .size = 1, .access = INSN_STORE };
	s.rep_iters = 256;
	s.mem_stride = 1;
	s.core = (struct p4_insn){ .cls = P4_U_REP_MOVS, .flags = P4_IF_REP };	/* as the decoder has it */
	memfeed_step(&c, &s, &f);
	assert_int_equal(f.loads, 256);
	assert_int_equal(f.stores, 256);
	assert_int_equal(f.load_l1_miss, 4);	/* 256 bytes = 4 lines */
	assert_int_equal(f.l2_miss, 2 + 1);	/* 2 source sectors + the code sector */
	/* penalties: 2 sectors x (212 + 20) + code 212 + 3 walks (code, src, dst) */
	assert_int_equal(f.penalty, 2 * (MEM_COST + 20) + MEM_COST + 3 * WALK);
	/* the core: 256 bytes at 62 sixths per 64, then the penalties */
	assert_int_equal(f.cycles, ((256 * 62 + 63) / 64 + 6 * f.penalty) / 6);
	/* DF set: the same bytes walked downwards from the last one */
	setup(&c, &mem, P4_MEM_DESKTOP);
	s.mem[0].addr = BUF + 255;
	s.mem[1].addr = BUF + 8192 + 255;
	s.mem_stride = -1;
	memfeed_step(&c, &s, &f);
	assert_int_equal(f.load_l1_miss, 4);
}

/* The same stream with and without the fetch short cut gives the same totals. */
static void fetch_short_cut_changes_nothing(void **state)
{
	struct memfeed_ctx a, b;
	struct memfeed fa, fb;
	uint64_t sum_a[4] = { 0 }, sum_b[4] = { 0 };

	(void)state;
	setup(&a, &mem, P4_MEM_DESKTOP);
	setup(&b, &mem2, P4_MEM_DESKTOP);
	for (unsigned i = 0; i < 40000; i++) {
		uint64_t rip = CODE + (i % 5) * 4 + (i % 7 == 0 ? 60 : 0);	/* some fetches split lines */
		enum insn_access acc = i % 3 == 0 ? INSN_LOAD : i % 11 == 0 ? INSN_STORE : 0;
		struct step_info s = insn(rip, acc, BUF + (uint64_t)(i * 4160u) % (4u << 20), 4);

		memfeed_step(&a, &s, &fa);
		b.fetch_valid = false;		/* b always looks up */
		memfeed_step(&b, &s, &fb);
		sum_a[0] += fa.cycles, sum_b[0] += fb.cycles;
		sum_a[1] += fa.itlb_hit + 1000u * fa.itlb_miss, sum_b[1] += fb.itlb_hit + 1000u * fb.itlb_miss;
		sum_a[2] += fa.l2_hite + 7u * fa.l2_hitm + 1000u * fa.l2_miss;
		sum_b[2] += fb.l2_hite + 7u * fb.l2_hitm + 1000u * fb.l2_miss;
		sum_a[3] += fa.bus_read + fa.bus_writeback, sum_b[3] += fb.bus_read + fb.bus_writeback;
	}
	assert_memory_equal(sum_a, sum_b, sizeof(sum_a));
	assert_true(sum_a[2] > 0);
}

/*
 * REP STOS (one store operand) with the store short cut: the same stores,
 * misses, bus traffic and cycles as the same stores fed one at a time,
 * each looked up (a memset of 8 pages from cold, then again warm, and an
 * unaligned one whose stores straddle lines).
 */
static void rep_store_short_cut_changes_nothing(void **state)
{
	static const struct { uint64_t addr; uint16_t size; uint32_t n; } runs[] = {
		{ BUF, 4, 8192 }, { BUF, 4, 8192 }, { BUF + 4096 + 62, 4, 3000 }, { BUF + 1, 1, 700 },
	};
	struct memfeed_ctx a, b;
	struct memfeed fa, fb;

	(void)state;
	setup(&a, &mem, P4_MEM_DESKTOP);
	setup(&b, &mem2, P4_MEM_DESKTOP);
	for (unsigned k = 0; k < sizeof(runs) / sizeof(runs[0]); k++) {
		struct step_info s = insn(CODE, INSN_STORE, runs[k].addr, runs[k].size);
		uint64_t sum_b[6] = { 0 }, sum_a[6];

		s.rep_iters = runs[k].n;
		s.mem_stride = runs[k].size;
		memfeed_step(&a, &s, &fa);
		assert_true(fa.known);
		for (uint32_t i = 0; i < runs[k].n; i++) {
			struct step_info one = insn(CODE, INSN_STORE,
						    runs[k].addr + (uint64_t)i * runs[k].size, runs[k].size);

			memfeed_step(&b, &one, &fb);
			sum_b[0] += fb.stores, sum_b[1] += fb.store_dtlb_miss;
			sum_b[2] += fb.bus_rfo + 1000u * fb.bus_writeback, sum_b[3] += fb.l3_fill_miss;
			sum_b[4] += fb.penalty;
			sum_b[5] += fb.dtlb_walks;
		}
		sum_a[0] = fa.stores, sum_a[1] = fa.store_dtlb_miss;
		sum_a[2] = fa.bus_rfo + 1000u * fa.bus_writeback, sum_a[3] = fa.l3_fill_miss;
		sum_a[4] = fa.penalty;	/* both fetched the code cold on their first step */
		sum_a[5] = fa.dtlb_walks;
		assert_memory_equal(sum_a, sum_b, sizeof(sum_a));
		assert_int_equal(fa.stores, runs[k].n);
	}
}

static const struct memfeed_event *find(const struct memfeed_event *ev, unsigned n,
					enum p4_event e, uint16_t mask)
{
	for (unsigned i = 0; i < n; i++)
		if (ev[i].ev == e && ev[i].mask == mask)
			return &ev[i];
	return NULL;
}

static void events_carry_the_table_masks(void **state)
{
	struct memfeed f = { .itlb_hit = 3, .itlb_miss = 1, .dtlb_walks = 2, .itlb_walks = 1,
			     .l2_hite = 4, .l2_hitm = 1, .l2_miss = 5, .bus_read = 5, .bus_writeback = 2,
			     .load_l1_miss = 6, .load_l2_miss = 5, .load_dtlb_miss = 2,
			     .store_dtlb_miss = 1 };
	struct memfeed_event ev[MEMFEED_MAX_EVENTS];
	const struct memfeed_event *e;
	unsigned n;

	(void)state;
	n = memfeed_events(&f, ev, MEMFEED_MAX_EVENTS);
	assert_non_null(e = find(ev, n, P4_EV_ITLB_REFERENCE, P4_EVMASK(P4_ITLB_REFERENCE_MISS)));
	assert_int_equal(e->n, 1);
	assert_non_null(e = find(ev, n, P4_EV_PAGE_WALK_TYPE, P4_EVMASK(P4_PAGE_WALK_TYPE_DTMISS)));
	assert_int_equal(e->n, 2);
	assert_non_null(e = find(ev, n, P4_EV_BSQ_CACHE_REFERENCE,
				 P4_EVMASK(P4_BSQ_CACHE_REFERENCE_RD_2NDL_HITM)));
	assert_int_equal(e->n, 1);
	assert_non_null(e = find(ev, n, P4_EV_BSQ_CACHE_REFERENCE,
				 P4_EVMASK(P4_BSQ_CACHE_REFERENCE_RD_2NDL_MISS)));
	assert_int_equal(e->n, 5);
	assert_null(find(ev, n, P4_EV_BSQ_CACHE_REFERENCE,
			 P4_EVMASK(P4_BSQ_CACHE_REFERENCE_RD_3RDL_MISS)));	/* n = 0: left out */
	assert_null(find(ev, n, P4_EV_REPLAY_EVENT, P4_EVMASK(P4_REPLAY_EVENT_NBOGUS)));
	for (unsigned i = 0; i < n; i++)
		if (ev[i].ev == P4_EV_FSB_DATA_ACTIVITY)
			assert_int_equal(ev[i].n, (ev[i].mask & P4_EVMASK(P4_FSB_DATA_ACTIVITY_DRDY_OWN))
						  ? 2 * 2 : 5 * 2);	/* 2 bus clocks per line */
	/*
	 * BSQ_active_entries: per clock, so active / allocated is each request's
	 * life in core clocks: 5 reads of (12 round trip + 12 bus clocks x 15)
	 * and 2 write-backs of 12 bus clocks x 15, under BSQ_allocation's masks
	 */
	for (unsigned i = 0; i < n; i++) {
		const struct memfeed_event *a;

		if (ev[i].ev != P4_EV_BSQ_ACTIVE_ENTRIES)
			continue;
		assert_non_null(a = find(ev, n, P4_EV_BSQ_ALLOCATION, ev[i].mask));
		assert_int_equal(ev[i].n, a->n * ((ev[i].mask & P4_EVMASK(P4_BSQ_ALLOCATION_REQ_DEM_TYPE))
						  ? 12 + 12 * 15 : 12 * 15));
	}
	assert_non_null(e = find(ev, n, P4_EV_BSQ_ACTIVE_ENTRIES,
				 P4_EVMASK(P4_BSQ_ACTIVE_ENTRIES_REQ_TYPE1) |
				 P4_EVMASK(P4_BSQ_ACTIVE_ENTRIES_REQ_LEN0) |
				 P4_EVMASK(P4_BSQ_ACTIVE_ENTRIES_REQ_LEN1) |
				 P4_EVMASK(P4_BSQ_ACTIVE_ENTRIES_REQ_CACHE_TYPE) |
				 P4_EVMASK(P4_BSQ_ACTIVE_ENTRIES_MEM_TYPE1) |
				 P4_EVMASK(P4_BSQ_ACTIVE_ENTRIES_MEM_TYPE2)));
	assert_int_equal(e->n, 2 * 180);
	/* a list too short is cut, never overrun */
	assert_int_equal(memfeed_events(&f, ev, 2), 2);
	/* no replay_event in the list: the PMU model tags the replays (replay_candidates_...) */
	assert_null(find(ev, n, P4_EV_REPLAY_EVENT, P4_EVMASK(P4_REPLAY_EVENT_NBOGUS)));
}

/*
 * The replay-tagging metrics (PMU reference 5.5): memfeed gives the replayed
 * µops by cause, the PMU model counts those PEBS_ENABLE (bit 24 and a
 * metric bit) and PEBS_MATRIX_VERT (loads, stores) select.
 */
static void replay_candidates_are_tagged_by_the_pmu_model(void **state)
{
	struct memfeed f = { .load_l1_miss = 6, .load_l2_miss = 5, .load_dtlb_miss = 2,
			     .store_dtlb_miss = 1 };
	static struct memfeed_ctx c;
	static struct p4_model m;
	struct p4_model_config cfg = { .sig = { 0x0f, 4, 1 } };
	struct p4_replay_in r;

	(void)state;
	memfeed_replay(&c, &f, &r);
	assert_int_equal(r.l1_load, 6);
	assert_int_equal(r.l2_load, 5);
	assert_int_equal(r.dtlb_load, 2);
	assert_int_equal(r.dtlb_store, 1);
	assert_int_equal(r.mob_load, 0);		/* no store-buffer outcome this step */
	assert_int_equal(p4_model_init(&m, &cfg), 0);
	m.pebs_enable = 0x01000001, m.pebs_matrix_vert = 1;	/* 1stL_cache_load_miss_retired */
	assert_int_equal(p4_model_replay_tagged(&m, &r), 6);
	m.pebs_enable = 0x01000002;				/* 2ndL */
	assert_int_equal(p4_model_replay_tagged(&m, &r), 5);
	m.pebs_enable = 0x01000004, m.pebs_matrix_vert = 3;	/* DTLB_all_miss_retired */
	assert_int_equal(p4_model_replay_tagged(&m, &r), 3);
	m.pebs_matrix_vert = 2;					/* DTLB_store_miss_retired */
	assert_int_equal(p4_model_replay_tagged(&m, &r), 1);
	m.pebs_enable = 0x00000001, m.pebs_matrix_vert = 1;	/* no UOP_Tag bit */
	assert_int_equal(p4_model_replay_tagged(&m, &r), 0);
	r.mob_load = 2;
	m.pebs_enable = 0x01000200;				/* MOB_load_replay_retired */
	assert_int_equal(p4_model_replay_tagged(&m, &r), 2);
}

static void uncore_counts_l3_misses_per_lp(void **state)
{
	struct memfeed_ctx c;
	struct memfeed f;
	struct p4_unc_inc u[P4_STEP_UNC];
	unsigned n, l3 = 0;

	(void)state;
	setup(&c, &mem, P4_MEM_XEON_MP_L3);
	for (uint64_t a = 0; a < 64 * 128; a += 128) {
		struct step_info s = insn(CODE, INSN_LOAD, BUF + a, 8);

		memfeed_step(&c, &s, &f);
		l3 += f.l3_miss;
		n = memfeed_uncore(&f, 1, u, P4_STEP_UNC);
		for (unsigned i = 0; i < n; i++) {
			if (u[i].unit == P4_UNC_IBUSQ) {
				assert_int_equal(u[i].n, f.l3_fill_miss);
				assert_true(u[i].attrs & (UINT64_C(1) << 37));	/* T1_match */
				assert_false(u[i].attrs & (UINT64_C(1) << 36));
			}
		}
	}
	assert_int_equal(l3, 64 + 1);		/* 64 sectors + the code */
}

/* A write to CR3 (paging_set_user's reload) leaves both TLBs empty: the next access walks. */
static void cr3_write_empties_the_tlbs(void **state)
{
	struct memfeed_ctx c;
	struct memfeed f;
	struct step_info ld = insn(CODE, INSN_LOAD, BUF, 4), cr3 = insn(CODE + 4, 0, 0, 0);

	(void)state;
	setup(&c, &mem, P4_MEM_DESKTOP);
	memfeed_step(&c, &ld, &f);
	assert_int_equal(f.dtlb_walks, 1);
	assert_int_equal(f.itlb_walks, 1);
	memfeed_step(&c, &ld, &f);
	assert_int_equal(f.dtlb_walks + f.itlb_walks, 0);	/* both entries in place */
	memfeed_step(&c, &cr3, &f);
	assert_int_equal(f.itlb_walks, 0);	/* its own fetch: before the write */
	cr3.flush_tlb = true;
	memfeed_step(&c, &cr3, &f);
	memfeed_step(&c, &ld, &f);
	assert_int_equal(f.dtlb_walks, 1);
	assert_int_equal(f.itlb_walks, 1);
	assert_int_equal(f.load_l1_miss, 0);	/* the caches keep their lines */
}

static void unknown_operands_cost_the_base_and_fetch(void **state)
{
	struct memfeed_ctx c;
	struct memfeed f;
	struct step_info s = insn(CODE, 0, 0, 0);

	(void)state;
	setup(&c, &mem, P4_MEM_DESKTOP);
	s.mem_status = INSN_MEM_UNKNOWN;
	memfeed_step(&c, &s, &f);
	assert_false(f.known);
	/* the core: the fetch from memory and its ITLB walk hold the front end, then one uop */
	assert_int_equal(f.cycles, p4_core_part_for(&sig04)->load_lat[P4_LVL_MEM] +
				   p4_core_part_for(&sig04)->page_walk + 1);
	memfeed_step(&c, &s, &f);
	assert_in_range(f.cycles, 0, 1);	/* behind the first: no new stall */
	/* an operand the model refuses (over 64 bytes) makes the instruction unknown */
	s = insn(CODE, INSN_LOAD, BUF, 512);
	memfeed_step(&c, &s, &f);
	assert_false(f.known);
}

/* Three one-uop instructions of 4 bytes at CODE, the last a jmp back: one trace line. */
static uint64_t tc_pass(struct memfeed_ctx *c, uint8_t out[3])
{
	uint64_t cycles = 0;

	for (unsigned i = 0; i < 3; i++) {
		struct step_info s = insn(CODE + 4 * i, 0, 0, 0);
		struct memfeed f;

		if (i == 2) {
			s.branch = INSN_JMP;
			s.taken = true;
			s.next_rip = CODE;
		}
		memfeed_step(c, &s, &f);
		out[i] = f.tc;
		cycles += f.cycles;
	}
	return cycles;
}

/*
 * From an idle core (p4_core_init: nothing in flight, so nothing hides the
 * front end's wait), a delivered pass issues its 3 uops in a clock and the
 * last is done 10 sixths in: 1 clock. Built from L2 (the TC flushed, the code
 * warm in L2): the miss waits the L2 load-to-use (28 on Prescott-class), then
 * the decoder takes one instruction a clock, and the last is done a clock
 * after its decode: 28 + 2 + 1 = 31 clocks.
 */
static void trace_cache_misses_decode_from_l2(void **state)
{
	struct memfeed_ctx c;
	uint8_t o[3];
	struct memfeed_event ev[MEMFEED_MAX_EVENTS];
	struct memfeed f = { .tc = P4_TC_MISS };
	unsigned n;

	(void)state;
	setup(&c, &mem, P4_MEM_DESKTOP);
	tc_pass(&c, o);				/* cold: from memory */
	assert_int_equal(o[0], P4_TC_MISS);
	assert_int_equal(o[1], P4_TC_BUILD);
	assert_int_equal(o[2], P4_TC_BUILD);
	for (unsigned i = 0; i < 4; i++) {
		p4_core_init(&c.core, c.core.p);
		assert_int_equal(tc_pass(&c, o), 1);
		assert_int_equal(o[0] + o[1] + o[2], 3 * P4_TC_DELIVER);
	}
	p4_core_init(&c.core, c.core.p);
	p4_tc_flush(c.tc);
	assert_int_equal(tc_pass(&c, o), 31);
	assert_int_equal(o[0], P4_TC_MISS);
	p4_core_init(&c.core, c.core.p);
	assert_int_equal(tc_pass(&c, o), 1);
	/* a miss is one BPU_fetch_request TCMISS; nothing else of the trace cache's */
	n = memfeed_events(&f, ev, MEMFEED_MAX_EVENTS);
	assert_int_equal(n, 1);
	assert_int_equal(find(ev, n, P4_EV_BPU_FETCH_REQUEST,
			      P4_EVMASK(P4_BPU_FETCH_REQUEST_TCMISS))->n, 1);
}

/*
 * A store into code the trace cache holds (self-modifying code) clears the
 * machine and flushes the trace cache: machine_clear SMCLEAR once, CLEAR for
 * the 30 clocks it holds the front end, TC_misc FLUSH twice (the event counts
 * a flush twice). The code after it is built again, and waits for the clear.
 */
static void a_store_into_held_code_clears_the_machine(void **state)
{
	struct memfeed_ctx c;
	uint8_t o[3];
	struct memfeed f;
	struct memfeed_event ev[MEMFEED_MAX_EVENTS];
	struct step_info st = insn(CODE + 0x1000, INSN_STORE, CODE + 5, 1), data;
	unsigned n;

	(void)state;
	setup(&c, &mem, P4_MEM_DESKTOP);
	tc_pass(&c, o);
	tc_pass(&c, o);
	memfeed_step(&c, &st, &f);
	assert_int_equal(f.tc, P4_TC_MISS);		/* the store itself was not held */
	assert_int_equal(f.smc_clears, 1);
	assert_int_equal(f.clear_cycles, 30);
	n = memfeed_events(&f, ev, MEMFEED_MAX_EVENTS);
	assert_int_equal(find(ev, n, P4_EV_MACHINE_CLEAR, P4_EVMASK(P4_MACHINE_CLEAR_SMCLEAR))->n, 1);
	assert_int_equal(find(ev, n, P4_EV_MACHINE_CLEAR, P4_EVMASK(P4_MACHINE_CLEAR_CLEAR))->n, 30);
	assert_int_equal(find(ev, n, P4_EV_TC_MISC, P4_EVMASK(P4_TC_MISC_FLUSH))->n, 2);
	assert_null(find(ev, n, P4_EV_MACHINE_CLEAR, P4_EVMASK(P4_MACHINE_CLEAR_MOCLEAR)));
	/*
	 * The loop again, built: its front end waits the clear's 30 clocks from the
	 * store's retirement, then as in trace_cache_misses_decode_from_l2 (28 + 2 + 1):
	 * 61 clocks after the store retired, 61 or 62 whole clocks as its sixths fall.
	 */
	assert_in_range(tc_pass(&c, o), 30 + 31, 30 + 32);
	assert_int_equal(o[0], P4_TC_MISS);
	/* the same store again after the pass: the line is held again, another clear */
	memfeed_step(&c, &st, &f);
	assert_int_equal(f.smc_clears, 1);
	/* stores into data, or into code not held since the flush, clear nothing */
	data = insn(CODE + 0x1004, INSN_STORE, BUF, 8);
	memfeed_step(&c, &data, &f);
	assert_int_equal(f.smc_clears, 0);
	memfeed_step(&c, &st, &f);
	assert_int_equal(f.smc_clears, 0);
	n = memfeed_events(&f, ev, MEMFEED_MAX_EVENTS);
	assert_null(find(ev, n, P4_EV_MACHINE_CLEAR, P4_EVMASK(P4_MACHINE_CLEAR_SMCLEAR)));
	assert_null(find(ev, n, P4_EV_TC_MISC, P4_EVMASK(P4_TC_MISC_FLUSH)));
}

/* A load and a store across a 64-byte line: split, replayed at their ports, completed as splits. */
static void split_accesses_are_replayed_and_completed(void **state)
{
	struct memfeed_ctx c;
	struct memfeed f;
	struct memfeed_event ev[MEMFEED_MAX_EVENTS];
	struct step_info ld = insn(CODE, INSN_LOAD, BUF + 62, 4), st = insn(CODE, INSN_STORE, BUF + 60, 4);
	unsigned n;

	(void)state;
	setup(&c, &mem, P4_MEM_DESKTOP);
	memfeed_step(&c, &ld, &f);
	assert_int_equal(f.split_loads, 1);
	assert_int_equal(f.split_stores, 0);
	n = memfeed_events(&f, ev, MEMFEED_MAX_EVENTS);
	assert_non_null(find(ev, n, P4_EV_LOAD_PORT_REPLAY, P4_EVMASK(P4_LOAD_PORT_REPLAY_SPLIT_LD)));
	assert_int_equal(find(ev, n, P4_EV_MEMORY_COMPLETE, P4_EVMASK(P4_MEMORY_COMPLETE_LSC))->n, 1);
	assert_null(find(ev, n, P4_EV_STORE_PORT_REPLAY, P4_EVMASK(P4_STORE_PORT_REPLAY_SPLIT_ST)));
	memfeed_step(&c, &st, &f);		/* 60..63: within the line */
	assert_int_equal(f.split_stores, 0);
	st.mem[0].addr = BUF + 126;
	memfeed_step(&c, &st, &f);
	assert_int_equal(f.split_stores, 1);
	n = memfeed_events(&f, ev, MEMFEED_MAX_EVENTS);
	assert_int_equal(find(ev, n, P4_EV_STORE_PORT_REPLAY, P4_EVMASK(P4_STORE_PORT_REPLAY_SPLIT_ST))->n, 1);
	assert_int_equal(find(ev, n, P4_EV_MEMORY_COMPLETE, P4_EVMASK(P4_MEMORY_COMPLETE_SSC))->n, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(walk_twice_l1_counts_every_load),
		cmocka_unit_test(rep_iterations_follow_the_stride),
		cmocka_unit_test(fetch_short_cut_changes_nothing),
		cmocka_unit_test(rep_store_short_cut_changes_nothing),
		cmocka_unit_test(events_carry_the_table_masks),
		cmocka_unit_test(replay_candidates_are_tagged_by_the_pmu_model),
		cmocka_unit_test(uncore_counts_l3_misses_per_lp),
		cmocka_unit_test(unknown_operands_cost_the_base_and_fetch),
		cmocka_unit_test(cr3_write_empties_the_tlbs),
		cmocka_unit_test(split_accesses_are_replayed_and_completed),
		cmocka_unit_test(trace_cache_misses_decode_from_l2),
		cmocka_unit_test(a_store_into_held_code_clears_the_machine),
	};

	return cmocka_run_group_tests_name("memfeed", tests, NULL, NULL);
}
