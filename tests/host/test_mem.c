/*
 * test_mem.c - the memory-system model and its cost model against answers
 * computed by hand from the geometry (p4_mem.c's rows).
 *
 * Geometry used below: 0F_02H has an 8 KB 4-way L1D with 64-byte lines
 * (32 sets: addresses 2 KB apart share a set), a 512 KB 8-way L2 of
 * 128-byte sectors (512 sets: 64 KB apart share a set) and 64-entry TLBs.
 * 0F_04H Xeon MP with L3: 1 MB 8-way L2 (1024 sets: 128 KB apart share a
 * set) and an 8 MB 8-way L3.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "arch/x86/insn.h"
#include "pmu/model/p4_mem.h"

#define BASE		UINT64_C(0x40000000)
#define KB		1024u

static struct p4_mem mem, mem2;	/* ~1.3 MB each: static, not on the stack */

static const struct p4_sig sig_northwood = { 0x0f, 0x02, 9 };
static const struct p4_sig sig_prescott = { 0x0f, 0x03, 4 };
static const struct p4_sig sig_potomac = { 0x0f, 0x04, 1 };

struct totals {
	unsigned n, l1_miss, l2_miss, l3_miss, tlb_miss, bus_read, bus_rfo, wb;
	unsigned hit[P4_NLEVELS];
	uint64_t cycles;
};

static void add(struct totals *t, const struct p4_mem_result *r)
{
	t->n++;
	t->l1_miss += r->l1_miss;
	t->l2_miss += r->l2_miss;
	t->l3_miss += r->l3_miss;
	t->tlb_miss += r->tlb_miss;
	t->bus_read += r->bus_read;
	t->bus_rfo += r->bus_rfo;
	t->wb += r->bus_writeback;
	for (int i = 0; i < P4_NLEVELS; i++)
		t->hit[i] += r->hit[i];
	t->cycles += r->cycles;
}

static struct p4_mem_result one(struct p4_mem *m, enum p4_mem_kind k, uint64_t addr, uint32_t size)
{
	struct p4_mem_result r;

	assert_int_equal(p4_mem_access(m, k, addr, size, &r), 0);
	return r;
}

/* One pass of byte loads over [base, base + bytes) at a stride. */
static struct totals walk(struct p4_mem *m, uint64_t base, uint64_t bytes, uint64_t stride)
{
	struct totals t = { 0 };

	for (uint64_t off = 0; off < bytes; off += stride) {
		struct p4_mem_result r = one(m, P4_MEM_LOAD, base + off, 1);

		add(&t, &r);
	}
	return t;
}

static void init(struct p4_mem *m, const struct p4_sig *sig, enum p4_mem_variant v)
{
	assert_int_equal(p4_mem_init(m, sig, v, NULL, NULL), 0);
}

/*
 * 16 KB = 2x L1 at a 64-byte stride: 256 lines, 8 per L1 set against 4
 * ways, so LRU evicts each line before it comes round again - every access
 * misses L1 in every pass. L2 (512 KB) holds it all: the first pass misses
 * once per 128-byte sector (128 bus reads, the adjacent line arriving with
 * each), later passes hit L2 every time.
 */
static void walk_twice_l1_misses_every_access(void **state)
{
	(void)state;
	init(&mem, &sig_northwood, P4_MEM_DESKTOP);
	struct totals p1 = walk(&mem, BASE, 16 * KB, 64);

	assert_int_equal(p1.n, 256);
	assert_int_equal(p1.l1_miss, 256);
	assert_int_equal(p1.l2_miss, 128);
	assert_int_equal(p1.hit[P4_LVL_L2], 128);
	assert_int_equal(p1.hit[P4_LVL_MEM], 128);
	assert_int_equal(p1.bus_read, 128);
	assert_int_equal(p1.tlb_miss, 4);		/* four 4 KiB pages */
	for (int pass = 2; pass <= 3; pass++) {
		struct totals p = walk(&mem, BASE, 16 * KB, 64);

		assert_int_equal(p.l1_miss, 256);
		assert_int_equal(p.hit[P4_LVL_L1], 0);
		assert_int_equal(p.hit[P4_LVL_L2], 256);
		assert_int_equal(p.bus_read, 0);
		assert_int_equal(p.tlb_miss, 0);
	}
}

/* The control: a walk of exactly the L1 size hits L1 on every access after the first pass. */
static void walk_of_l1_size_hits_after_first_pass(void **state)
{
	(void)state;
	init(&mem, &sig_northwood, P4_MEM_DESKTOP);
	struct totals p1 = walk(&mem, BASE, 8 * KB, 64);
	struct totals p2 = walk(&mem, BASE, 8 * KB, 64);

	assert_int_equal(p1.l1_miss, 128);
	assert_int_equal(p2.l1_miss, 0);
	assert_int_equal(p2.hit[P4_LVL_L1], 128);
}

/* Prescott's 16 KB 8-way L1: 32 KB at 64 bytes misses everywhere, 16 KB does not. */
static void walk_twice_l1_on_prescott(void **state)
{
	(void)state;
	init(&mem, &sig_prescott, P4_MEM_DESKTOP);
	walk(&mem, BASE, 32 * KB, 64);
	assert_int_equal(walk(&mem, BASE, 32 * KB, 64).l1_miss, 512);
	init(&mem, &sig_prescott, P4_MEM_DESKTOP);
	walk(&mem, BASE, 16 * KB, 64);
	assert_int_equal(walk(&mem, BASE, 16 * KB, 64).l1_miss, 0);
}

/* One access per page over 65 pages (DTLB: 64 entries, LRU): every access misses. */
static void dtlb_one_access_per_page_misses_every_time(void **state)
{
	(void)state;
	init(&mem, &sig_northwood, P4_MEM_DESKTOP);
	for (int pass = 0; pass < 3; pass++) {
		struct totals t = walk(&mem, BASE, 65 * 4096, 4096);

		assert_int_equal(t.n, 65);
		assert_int_equal(t.tlb_miss, 65);
	}
	/* Control: 64 pages miss only in the first pass. */
	init(&mem, &sig_northwood, P4_MEM_DESKTOP);
	assert_int_equal(walk(&mem, BASE, 64 * 4096, 4096).tlb_miss, 64);
	assert_int_equal(walk(&mem, BASE, 64 * 4096, 4096).tlb_miss, 0);
}

/* With 2 MiB pages (the kernel's own map) 512 4 KiB-strided accesses are one translation. */
static unsigned large_pages(void *ctx, uint64_t addr)
{
	(void)ctx;
	(void)addr;
	return 21;
}

static void large_pages_share_one_tlb_entry(void **state)
{
	(void)state;
	assert_int_equal(p4_mem_init(&mem, &sig_northwood, P4_MEM_DESKTOP, large_pages, NULL), 0);
	assert_int_equal(walk(&mem, BASE, 2048 * KB, 4096).tlb_miss, 1);
	assert_int_equal(walk(&mem, BASE + 2048 * KB, 4096, 4096).tlb_miss, 1);
}

/* Fetches use the ITLB and skip L1D; loads use the DTLB. */
static void fetch_uses_itlb_and_l2(void **state)
{
	(void)state;
	init(&mem, &sig_northwood, P4_MEM_DESKTOP);
	struct p4_mem_result f = one(&mem, P4_MEM_FETCH, BASE, 4);
	struct p4_mem_result l = one(&mem, P4_MEM_LOAD, BASE, 4);

	assert_int_equal(f.tlb_miss, 1);
	assert_int_equal(f.l1_miss, 0);
	assert_int_equal(f.hit[P4_LVL_MEM], 1);
	assert_int_equal(l.tlb_miss, 1);	/* a separate DTLB */
	assert_int_equal(l.l1_miss, 1);
	assert_int_equal(l.hit[P4_LVL_L2], 1);	/* the fetch brought the line into L2 */
	f = one(&mem, P4_MEM_FETCH, BASE + 64, 4);
	assert_int_equal(f.tlb_miss, 0);
	assert_int_equal(f.hit[P4_LVL_L2], 1);	/* adjacent line of the sector */
}

/* Sectored L2: the adjacent line comes with a miss, or (switch off) only the tag does. */
static void l2_sectors(void **state)
{
	(void)state;
	init(&mem, &sig_northwood, P4_MEM_DESKTOP);
	struct p4_mem_result a = one(&mem, P4_MEM_LOAD, BASE + 64, 1);
	struct p4_mem_result b = one(&mem, P4_MEM_LOAD, BASE, 1);
	struct p4_mem_result c = one(&mem, P4_MEM_LOAD, BASE + 128, 1);

	assert_int_equal(a.l2_miss, 1);
	assert_int_equal(a.bus_read, 1);
	assert_int_equal(b.l1_miss, 1);
	assert_int_equal(b.l2_miss, 0);		/* other half of the sector */
	assert_int_equal(b.hit[P4_LVL_L2], 1);
	assert_int_equal(b.l2_hit_modified, 0);	/* clean: E */
	assert_int_equal(c.l2_miss, 1);		/* next sector */

	init(&mem, &sig_northwood, P4_MEM_DESKTOP);
	mem.adjacent_line = false;
	a = one(&mem, P4_MEM_LOAD, BASE, 1);
	b = one(&mem, P4_MEM_LOAD, BASE + 64, 1);
	c = one(&mem, P4_MEM_LOAD, BASE + 64, 1);
	assert_int_equal(a.l2_sector_hit, 0);
	assert_int_equal(b.l2_miss, 1);
	assert_int_equal(b.l2_sector_hit, 1);	/* tag present, line not */
	assert_int_equal(b.bus_read, 1);
	assert_int_equal(c.hit[P4_LVL_L1], 1);
}

/*
 * Eviction drops the whole sector and writes back each dirty line: stores to
 * both lines of one sector, then 8 more sectors in the same L2 set (64 KB
 * apart) push it out: two 64-byte writebacks.
 */
static void l2_eviction_writes_back_dirty_lines(void **state)
{
	struct p4_mem_result r;
	unsigned wb = 0;

	(void)state;
	init(&mem, &sig_northwood, P4_MEM_DESKTOP);
	r = one(&mem, P4_MEM_STORE, BASE, 8);
	assert_int_equal(r.bus_rfo, 1);
	assert_int_equal(r.bus_read, 0);
	r = one(&mem, P4_MEM_STORE, BASE + 64, 8);
	assert_int_equal(r.bus_rfo, 0);		/* sector already filled */
	for (unsigned i = 1; i <= 7; i++)
		wb += one(&mem, P4_MEM_LOAD, BASE + i * 64 * KB, 1).bus_writeback;
	assert_int_equal(wb, 0);			/* 8 ways: still resident */
	r = one(&mem, P4_MEM_LOAD, BASE + 8 * 64 * KB, 1);
	assert_int_equal(r.bus_writeback, 2);
	r = one(&mem, P4_MEM_LOAD, BASE + 64, 1);
	assert_int_equal(r.l2_miss, 1);		/* gone from L2 */
}

/* L1 is write-through without write-allocate: a store miss leaves L1 without the line. */
static void stores_do_not_allocate_in_l1(void **state)
{
	(void)state;
	init(&mem, &sig_northwood, P4_MEM_DESKTOP);
	struct p4_mem_result s = one(&mem, P4_MEM_STORE, BASE, 4);
	struct p4_mem_result l = one(&mem, P4_MEM_LOAD, BASE, 4);
	struct p4_mem_result s2 = one(&mem, P4_MEM_STORE, BASE, 4);

	assert_int_equal(s.l1_miss, 1);
	assert_int_equal(s.hit[P4_LVL_MEM], 1);
	assert_int_equal(l.l1_miss, 1);
	assert_int_equal(l.hit[P4_LVL_L2], 1);
	assert_int_equal(l.l2_hit_modified, 1);	/* the store made the L2 line dirty: M */
	assert_int_equal(s2.hit[P4_LVL_L1], 1);
	assert_int_equal(s2.l2_miss, 0);
}

/*
 * LRU order in one L1 set (lines 2 KB apart): fill A0..A3, touch A0, load
 * A4: the least recently used, A1, goes. Then A0, A2, A3 hit and A1 misses,
 * which evicts A4 (now the least recent).
 */
static void lru_evicts_least_recently_used(void **state)
{
	uint64_t a[5];

	(void)state;
	init(&mem, &sig_northwood, P4_MEM_DESKTOP);
	for (int i = 0; i < 5; i++)
		a[i] = BASE + (uint64_t)i * 2 * KB;
	for (int i = 0; i < 4; i++)
		assert_int_equal(one(&mem, P4_MEM_LOAD, a[i], 1).l1_miss, 1);
	assert_int_equal(one(&mem, P4_MEM_LOAD, a[0], 1).l1_miss, 0);
	assert_int_equal(one(&mem, P4_MEM_LOAD, a[4], 1).l1_miss, 1);
	assert_int_equal(one(&mem, P4_MEM_LOAD, a[0], 1).l1_miss, 0);
	assert_int_equal(one(&mem, P4_MEM_LOAD, a[2], 1).l1_miss, 0);
	assert_int_equal(one(&mem, P4_MEM_LOAD, a[3], 1).l1_miss, 0);
	assert_int_equal(one(&mem, P4_MEM_LOAD, a[1], 1).l1_miss, 1);
	assert_int_equal(one(&mem, P4_MEM_LOAD, a[4], 1).l1_miss, 1);
}

/* Line- and page-crossing accesses are two pieces, each looked up. */
static void splits_count_twice(void **state)
{
	(void)state;
	init(&mem, &sig_northwood, P4_MEM_DESKTOP);
	struct p4_mem_result r = one(&mem, P4_MEM_LOAD, BASE + 60, 8);

	assert_int_equal(r.pieces, 2);
	assert_true(r.split_line);
	assert_false(r.split_page);
	assert_int_equal(r.l1_miss, 2);
	assert_int_equal(r.tlb_miss, 1);		/* same page: the second piece hits */
	assert_int_equal(r.tlb_hit, 1);
	r = one(&mem, P4_MEM_LOAD, BASE + 4092, 8);
	assert_true(r.split_page);
	assert_int_equal(r.tlb_miss, 1);		/* the first page was there */
	assert_int_equal(r.tlb_hit, 1);
	r = one(&mem, P4_MEM_LOAD, BASE + 63, 1);
	assert_int_equal(r.pieces, 1);
	r = one(&mem, P4_MEM_LOAD, BASE + 0x10000 + 8188, 8);
	assert_int_equal(r.tlb_miss, 2);		/* two fresh pages */
	assert_int_equal(r.page_walks, 2);
}

/* L3 (0F_04H Xeon MP): a line pushed out of L2 comes back from L3 without the bus. */
static void l3_catches_l2_victims(void **state)
{
	struct totals t = { 0 };

	(void)state;
	init(&mem, &sig_potomac, P4_MEM_XEON_MP_L3);
	for (unsigned i = 0; i < 9; i++) {	/* 9 sectors in one 8-way L2 set */
		struct p4_mem_result r = one(&mem, P4_MEM_LOAD, BASE + i * 128 * KB, 1);

		add(&t, &r);
	}
	assert_int_equal(t.l3_miss, 9);
	assert_int_equal(t.bus_read, 9);
	struct p4_mem_result r = one(&mem, P4_MEM_LOAD, BASE + 64, 1);	/* L1 kept the line at BASE, not +64 */

	assert_int_equal(r.l2_miss, 1);
	assert_int_equal(r.hit[P4_LVL_L3], 1);
	assert_int_equal(r.bus_read, 0);
	/* A dirty L2 victim goes into L3, not to the bus. */
	init(&mem, &sig_potomac, P4_MEM_XEON_MP_L3);
	one(&mem, P4_MEM_STORE, BASE, 4);
	unsigned wb = 0, l3wb = 0;

	for (unsigned i = 1; i <= 8; i++) {
		r = one(&mem, P4_MEM_LOAD, BASE + i * 128 * KB, 1);
		wb += r.bus_writeback;
		l3wb += r.l3_writeback;
	}
	assert_int_equal(l3wb, 1);
	assert_int_equal(wb, 0);
	r = one(&mem, P4_MEM_LOAD, BASE, 4);		/* the store never allocated in L1 */
	assert_int_equal(r.hit[P4_LVL_L3], 1);
	assert_int_equal(r.l3_hit_modified, 1);
	/* Without the L3 the same stream writes to memory. */
	init(&mem2, &sig_prescott, P4_MEM_DESKTOP);
	one(&mem2, P4_MEM_STORE, BASE, 4);
	wb = 0;
	for (unsigned i = 1; i <= 8; i++)
		wb += one(&mem2, P4_MEM_LOAD, BASE + i * 128 * KB, 1).bus_writeback;
	assert_int_equal(wb, 1);
}

/*
 * Cost model on 0F_02H (L2 latency 7, no L3): a load from memory costs
 * 7 + 12 + 12 * 15 = 199 core clocks, plus 30 for its page walk; the same
 * line's neighbour then costs the L2 latency, 7; stores cost only walks.
 * An instruction of 4 uops adds ceil(4 / 3) = 2.
 */
static void cost_model_by_hand(void **state)
{
	(void)state;
	init(&mem, &sig_northwood, P4_MEM_DESKTOP);
	struct p4_mem_result acc[2];

	acc[0] = one(&mem, P4_MEM_LOAD, BASE, 4);
	assert_int_equal(acc[0].cycles, 199 + 30);
	acc[1] = one(&mem, P4_MEM_LOAD, BASE + 64, 4);
	assert_int_equal(acc[1].cycles, 7);
	assert_int_equal(p4_cost_insn(4, acc, 2), 2 + 229 + 7);
	assert_int_equal(p4_cost_insn(0, NULL, 0), 1);
	assert_int_equal(p4_cost_insn(3, NULL, 0), 1);
	assert_int_equal(p4_cost_insn(7, NULL, 0), 3);
	assert_int_equal(p4_cost_uops(0, 0), 1);
	assert_int_equal(p4_cost_uops(1, 1), 4);	/* add %eax,(%rsi): load, add, store address, store data */
	assert_int_equal(one(&mem, P4_MEM_LOAD, BASE, 4).cycles, 0);	/* L1 hit */
	assert_int_equal(one(&mem, P4_MEM_STORE, BASE + 8192 * 4, 4).cycles, 30);
	/* With an L3 (latency 32) a memory load pays 32 + 12 + 180. */
	init(&mem, &sig_potomac, P4_MEM_XEON_MP_L3);
	assert_int_equal(one(&mem, P4_MEM_LOAD, BASE, 4).cycles, 224 + 30);
}

/* The same stream on two fresh models gives the same cycles, access by access. */
static void deterministic(void **state)
{
	uint64_t x = 12345, a = 0, b = 0;

	(void)state;
	init(&mem, &sig_potomac, P4_MEM_XEON_MP_L3);
	init(&mem2, &sig_potomac, P4_MEM_XEON_MP_L3);
	for (int i = 0; i < 20000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint64_t addr = BASE + (x % (16 * 1024 * KB));
		enum p4_mem_kind k = (enum p4_mem_kind)(x >> 60) % P4_MEM_NKINDS;

		a += one(&mem, k, addr, 8).cycles;
		b += one(&mem2, k, addr, 8).cycles;
	}
	assert_true(a > 0);
	assert_true(a == b);
	p4_mem_flush(&mem);
	assert_int_equal(one(&mem, P4_MEM_LOAD, BASE, 1).l1_miss, 1);
}

/* Geometry rows, and bad input refused with nothing changed. */
static void parts_and_bad_input(void **state)
{
	static const struct { struct p4_sig sig; enum p4_mem_variant v; uint32_t l1, l2, l3; uint16_t l1w; } rows[] = {
		{ { 0x0f, 0, 0 }, P4_MEM_DESKTOP, 8 * KB, 256 * KB, 0, 4 },
		{ { 0x0f, 2, 0 }, P4_MEM_DESKTOP, 8 * KB, 512 * KB, 0, 4 },
		{ { 0x0f, 3, 0 }, P4_MEM_DESKTOP, 16 * KB, 1024 * KB, 0, 8 },
		{ { 0x0f, 4, 0 }, P4_MEM_DESKTOP, 16 * KB, 2048 * KB, 0, 8 },
		{ { 0x0f, 4, 0 }, P4_MEM_XEON_MP_L3, 16 * KB, 1024 * KB, 8192 * KB, 8 },
		{ { 0x0f, 6, 0 }, P4_MEM_XEON_MP_L3, 16 * KB, 1024 * KB, 4096 * KB, 8 },
	};
	struct p4_mem_result r;

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct p4_mem_part *p = p4_mem_part_lookup(&rows[i].sig, rows[i].v);

		assert_non_null(p);
		assert_int_equal(p->l1d.size, rows[i].l1);
		assert_int_equal(p->l1d.ways, rows[i].l1w);
		assert_int_equal(p->l2.size, rows[i].l2);
		assert_int_equal(p->l2.lines_per_sector, 2);
		assert_int_equal(p->l3.size, rows[i].l3);
		assert_int_equal(p->dtlb.entries, 64);
		assert_int_equal(p->itlb.entries, 64);
	}
	init(&mem, &sig_northwood, P4_MEM_DESKTOP);
	memcpy(&mem2, &mem, sizeof(mem));
	assert_int_equal(p4_mem_init(&mem, &(struct p4_sig){ 0x0f, 5, 0 }, P4_MEM_DESKTOP, NULL, NULL), -1);
	assert_int_equal(p4_mem_init(&mem, &(struct p4_sig){ 0x06, 2, 0 }, P4_MEM_DESKTOP, NULL, NULL), -1);
	assert_int_equal(p4_mem_access(&mem, P4_MEM_LOAD, BASE, 0, &r), -1);
	assert_int_equal(p4_mem_access(&mem, P4_MEM_LOAD, BASE, 65, &r), -1);
	assert_int_equal(p4_mem_access(&mem, P4_MEM_NKINDS, BASE, 1, &r), -1);
	assert_int_equal(p4_mem_access(&mem, P4_MEM_LOAD, UINT64_MAX, 2, &r), -1);
	assert_memory_equal(&mem, &mem2, sizeof(mem));
}

/*
 * wl_memwalk (arch/x86/64/workloads.S) as gas assembles it (objdump -d of
 * build/k/arch/x86/64/workloads.o): 36 bytes, the loop body at 0CH-1BH.
 */
static const uint8_t memwalk[] = {
	0x55, 0x48, 0x89, 0xe5, 0x31, 0xc0, 0x49, 0x89, 0xcb,		/* push; mov; xor; mov */
	0x45, 0x31, 0xd2,						/* 09: xor %r10d,%r10d */
	0x46, 0x0f, 0xb6, 0x04, 0x17,					/* 0c: movzbl (%rdi,%r10,1),%r8d */
	0x4c, 0x01, 0xc0, 0x49, 0x01, 0xd2, 0x49, 0x39, 0xf2, 0x72, 0xf0,	/* add; add; cmp; jb */
	0x49, 0x83, 0xeb, 0x01, 0x75, 0xe7, 0x5d, 0xc3,		/* 1c: sub; jne; pop; ret */
};

#define WL_CODE		UINT64_C(0x200000)	/* where the bytes are taken to live */
#define WL_STACK	UINT64_C(0x7ff000)

/* One stepped instruction: its fetch, then its decoded memory operands, into the model. */
static void feed(struct p4_mem *m, unsigned off, struct insn_regs *r, struct totals *fetch, struct totals *data)
{
	struct insn_mem d;
	struct p4_mem_result res;

	r->rip = WL_CODE + off;
	assert_int_equal(insn_mem_decode(&memwalk[off], sizeof(memwalk) - off, true, r, &d), INSN_MEM_OK);
	assert_int_equal(p4_mem_access(m, P4_MEM_FETCH, r->rip, d.len, &res), 0);
	add(fetch, &res);
	for (unsigned k = 0; k < d.nops; k++) {
		enum p4_mem_kind kind = d.op[k].access == INSN_LOAD ? P4_MEM_LOAD : P4_MEM_STORE;

		assert_int_equal(p4_mem_access(m, kind, d.op[k].addr, d.op[k].size, &res), 0);
		add(data, &res);
	}
}

/*
 * The decoder feeding the model: wl_memwalk(buf, 16 KB, 64, 3) on 0F_02H,
 * its registers advanced by hand as the instructions would. Data: the
 * push (a store: L1 miss without allocation, an RFO), 3 x 256 byte loads,
 * each an L1 miss (16 KB = 2x L1 at 64 bytes, as above), the pop (the
 * push's line, in L2 only) and the ret (the slot above, at WL_STACK: a new
 * line on a new page). Code: 36 bytes in one 64-byte line, so one ITLB
 * miss and one line from memory, then L2 hits (no trace-cache model).
 */
static void decoded_memwalk_stream(void **state)
{
	struct totals fetch = { 0 }, data = { 0 };
	struct insn_regs r = { 0 };
	unsigned loads_missing = 0;

	(void)state;
	init(&mem, &sig_northwood, P4_MEM_DESKTOP);
	r.gpr[INSN_RSP] = WL_STACK;
	r.gpr[INSN_RDI] = BASE;
	r.gpr[INSN_RSI] = 16 * KB;
	r.gpr[INSN_RDX] = 64;
	r.gpr[INSN_RCX] = 3;
	feed(&mem, 0x00, &r, &fetch, &data);		/* push %rbp */
	r.gpr[INSN_RSP] -= 8;
	for (unsigned off = 0x01; off < 0x0c; off += off == 0x01 ? 3 : off == 0x04 ? 2 : 3)
		feed(&mem, off, &r, &fetch, &data);	/* mov, xor, mov, xor */
	for (unsigned pass = 0; pass < 3; pass++) {
		r.gpr[INSN_R10] = 0;
		do {
			unsigned before = data.l1_miss;

			feed(&mem, 0x0c, &r, &fetch, &data);	/* the load */
			loads_missing += data.l1_miss - before;
			feed(&mem, 0x11, &r, &fetch, &data);
			feed(&mem, 0x14, &r, &fetch, &data);
			r.gpr[INSN_R10] += 64;
			feed(&mem, 0x17, &r, &fetch, &data);
			feed(&mem, 0x1a, &r, &fetch, &data);
		} while (r.gpr[INSN_R10] < 16 * KB);
		feed(&mem, 0x1c, &r, &fetch, &data);
		feed(&mem, 0x20, &r, &fetch, &data);
	}
	feed(&mem, 0x22, &r, &fetch, &data);		/* pop %rbp */
	r.gpr[INSN_RSP] += 8;
	feed(&mem, 0x23, &r, &fetch, &data);		/* ret: reads the return address at WL_STACK */

	assert_int_equal(loads_missing, 3 * 256);
	assert_int_equal(data.n, 1 + 3 * 256 + 2);
	assert_int_equal(data.l1_miss, data.n);		/* nothing hits L1: see below */
	assert_int_equal(data.hit[P4_LVL_L1], 0);
	assert_int_equal(data.hit[P4_LVL_L2], 2 * 256 + 128 + 1);	/* passes 2-3, odd lines of pass 1, the pop */
	assert_int_equal(data.hit[P4_LVL_MEM], 1 + 128 + 1);	/* the push's RFO, 128 sectors, the ret */
	assert_int_equal(data.bus_rfo, 1);
	assert_int_equal(data.tlb_miss, 1 + 4 + 1);	/* 7FExxxH, four data pages, 7FFxxxH */
	assert_int_equal(fetch.n, 5 + 3 * (256 * 5 + 2) + 2);
	assert_int_equal(fetch.tlb_miss, 1);
	assert_int_equal(fetch.hit[P4_LVL_MEM], 1);
	assert_int_equal(fetch.hit[P4_LVL_L2], fetch.n - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(walk_twice_l1_misses_every_access),
		cmocka_unit_test(walk_of_l1_size_hits_after_first_pass),
		cmocka_unit_test(walk_twice_l1_on_prescott),
		cmocka_unit_test(dtlb_one_access_per_page_misses_every_time),
		cmocka_unit_test(large_pages_share_one_tlb_entry),
		cmocka_unit_test(fetch_uses_itlb_and_l2),
		cmocka_unit_test(l2_sectors),
		cmocka_unit_test(l2_eviction_writes_back_dirty_lines),
		cmocka_unit_test(stores_do_not_allocate_in_l1),
		cmocka_unit_test(lru_evicts_least_recently_used),
		cmocka_unit_test(splits_count_twice),
		cmocka_unit_test(l3_catches_l2_victims),
		cmocka_unit_test(cost_model_by_hand),
		cmocka_unit_test(deterministic),
		cmocka_unit_test(parts_and_bad_input),
		cmocka_unit_test(decoded_memwalk_stream),
	};

	return cmocka_run_group_tests_name("mem", tests, NULL, NULL);
}
