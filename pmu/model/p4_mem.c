/*
 * p4_mem.c - caches and TLBs of a NetBurst part, as a deterministic model.
 *
 * Sources, cited per parameter in p4_mem_rows[] below:
 *  [T312] SDM Vol. 2A, CPUID, Table 3-12 "Encoding of CPUID Leaf 2
 *         Descriptors" (descriptor meanings);
 *  [EX31] SDM Vol. 2A, CPUID, the leaf-2 example of a Pentium 4: EAX
 *         665B5001H, EDX 007A7000H = descriptors 50H, 5BH, 66H, 70H, 7AH;
 *  [OPT]  IA-32 Intel Architecture Optimization Reference Manual (order
 *         248966; the edition covering CPUID models 0-3/4/6), section
 *         1 "Cache" and Table 1-1 "Pentium 4 and Intel Xeon Processor Cache
 *         Parameters" (capacity, ways, line size, latency, write policy by
 *         CPUID model; footnote 1: "Each read due to a cache miss fetches a
 *         sector, consisting of two adjacent cache lines; a write operation
 *         is 64 bytes"; "Levels in the cache hierarchy are not inclusive";
 *         "All caches use a pseudo-LRU replacement algorithm");
 *  [X004] SDM Vol. 3B 18.20 (2016 edition): the 64-bit Xeon MP with
 *         up to 8-MByte L3 is family 0FH model 3 or 4, Figure 18-50 "3rd
 *         Level Cache 8 or 4-way" between the IOQ and the system bus;
 *  [DUMP] CPUID leaf-2 values read on real parts in public CPUID dumps:
 *         0F_29H 665B5001H/007B7040H, 0F_34H 605B5001H/007C7040H,
 *         0F_43H 605B5001H/007D7040H. Not in the manual: which descriptors a
 *         model reports is UNVERIFIED for parts no dump covers.
 * Nothing in the PMU reference (docs/reference/netburst-pmu.md) gives cache sizes; it
 * is silent on the memory hierarchy except the L3 uncore registers.
 *
 * Model decisions (the manual does not settle them):
 * - Replacement is true LRU per set. The parts use pseudo-LRU [OPT] whose
 *   exact tree is undocumented; LRU gives hand-computable answers.
 * - Sectors: L2 and L3 keep one tag per 128-byte sector of two 64-byte
 *   lines, with a valid and a dirty bit per line [T312 "2 lines per
 *   sector", OPT footnote 1]. A miss fills the whole sector (the adjacent
 *   line comes with it, [OPT] footnote 1) unless m->adjacent_line is
 *   cleared (the BIOS "adjacent sector prefetch" switch), when it fills
 *   only the 64-byte line and a later access to the other line finds the
 *   tag present but the line invalid (l2_sector_hit). An eviction drops
 *   the whole sector and writes back each dirty line (64 bytes per write,
 *   [OPT] footnote 1).
 * - L1 is write-through [OPT]: stores never make L1 lines dirty and write
 *   through to L2. A store that misses L1 does not allocate in L1 (no
 *   write-allocate, UNVERIFIED). L2 and L3 are write-back with write-
 *   allocate; a store that misses them is a read-for-ownership (RFO).
 * - Not inclusive [OPT]: evicting an L2 sector leaves L1 alone. With an L3,
 *   L2 misses look up L3 and fill both; dirty L2 lines go into L3
 *   (allocating there); L3 misses and dirty L3 evictions go to the bus.
 * - Instruction fetches look up the ITLB, then L2 and below: the trace
 *   cache is not modelled (it holds uops, not lines).
 * - TLBs: 64 entries each for 4 KiB and large pages alike [T312 50H, 5BH];
 *   the descriptors give no associativity, so fully associative LRU
 *   (UNVERIFIED). A miss is one page walk; the walk's own loads do not go
 *   through the modelled caches. Pages are 4 KiB unless the caller's
 *   page_shift callback says 2 MiB: the kernel maps itself with 2 MiB pages
 *   and only ring-3 ranges with 4 KiB pages (arch/x86/64/paging.c).
 * - Line states: a dirty line is Modified, every other valid line
 *   Exclusive. With one package modelled no other agent caches a line, so
 *   Shared never occurs (UNVERIFIED that the parts fill reads in E; the
 *   BSQ_cache_reference masks tell HITS/HITE/HITM apart, PMU reference 4.1).
 * - Caches are indexed and tagged by the address given (linear); the
 *   kernel's map is the identity, so linear = physical there.
 */
#include "pmu/model/p4_mem.h"

#define KB			1024u
#define MB			(1024u * 1024u)
#define PAGE_SHIFT_4K		12u
#define PAGE_SHIFT_2M		21u
#define L1_LINE			64u	/* every NetBurst cache has 64-byte lines [OPT] */
#define P4_MEM_MAX_SIZE		64u	/* one access touches at most two lines */

struct p4_mem_row {
	uint8_t model;
	enum p4_mem_variant variant;
	struct p4_mem_part part;
};

/* Geometry shorthands: L1 data (64-byte lines, unsectored), L2/L3 (sectored), TLB (fully assoc.). */
#define L1D(sz, w)	{ .size = (sz), .ways = (w), .line = 64, .lines_per_sector = 1 }
#define SECT(sz, w)	{ .size = (sz), .ways = (w), .line = 64, .lines_per_sector = 2 }
#define TLB64		{ .entries = 64, .ways = 64 }

static const struct p4_mem_row p4_mem_rows[] = {
	/*
	 * Models 0, 1 (Willamette): L1D 8 KB 4-way [T312 66H, EX31; OPT First
	 * (Model 0,1,2) 8 KB 4 ways, 2 clocks]; L2 256 KB 8-way sectored [T312
	 * 7AH, EX31; OPT Second (Model 0,1,2) 7 clocks]; ITLB 64 [T312 50H],
	 * DTLB 64 [T312 5BH] (EX31).
	 */
	{ 0, P4_MEM_DESKTOP, { "0F_00H Willamette", L1D(8 * KB, 4), SECT(256 * KB, 8), { 0 },
			       TLB64, TLB64, 2, 7, 0 } },
	{ 1, P4_MEM_DESKTOP, { "0F_01H Willamette", L1D(8 * KB, 4), SECT(256 * KB, 8), { 0 },
			       TLB64, TLB64, 2, 7, 0 } },
	/*
	 * Model 2 (Northwood): as model 1 but a 512 KB L2 [OPT footnote 2:
	 * "model encoding value of 2 have a second level cache of 512 KB"; T312
	 * 7BH; DUMP 0F_29H].
	 */
	{ 2, P4_MEM_DESKTOP, { "0F_02H Northwood", L1D(8 * KB, 4), SECT(512 * KB, 8), { 0 },
			       TLB64, TLB64, 2, 7, 0 } },
	/*
	 * Xeon MP of models 0-2 (Foster MP, Gallatin): L3 "0, 512 KB, 1 MB or
	 * 2 MB", 8 ways, 64-byte sectored lines, 14 clocks [OPT Third (Model
	 * 0,1,2)]; the model takes 1 MB on models 0/1 and 2 MB on model 2 [T312
	 * 23H, 25H: 8-way, 2 lines per sector]; which part has which size is
	 * UNVERIFIED.
	 */
	{ 0, P4_MEM_XEON_MP_L3, { "0F_00H Xeon MP (Foster MP)", L1D(8 * KB, 4), SECT(256 * KB, 8),
				  SECT(1 * MB, 8), TLB64, TLB64, 2, 7, 14 } },
	{ 1, P4_MEM_XEON_MP_L3, { "0F_01H Xeon MP (Foster MP)", L1D(8 * KB, 4), SECT(256 * KB, 8),
				  SECT(1 * MB, 8), TLB64, TLB64, 2, 7, 14 } },
	{ 2, P4_MEM_XEON_MP_L3, { "0F_02H Xeon MP (Gallatin)", L1D(8 * KB, 4), SECT(512 * KB, 8),
				  SECT(2 * MB, 8), TLB64, TLB64, 2, 7, 14 } },
	/*
	 * Model 3 (Prescott): L1D 16 KB 8-way, 4 clocks [OPT First (Model 3);
	 * T312 60H; DUMP 0F_34H]; L2 1 MB 8-way sectored, 18 clocks [OPT Second
	 * (Model 3, 4); T312 7CH].
	 */
	{ 3, P4_MEM_DESKTOP, { "0F_03H Prescott", L1D(16 * KB, 8), SECT(1 * MB, 8), { 0 },
			       TLB64, TLB64, 4, 18, 0 } },
	/*
	 * Model 4 (Prescott 2M): L1D as model 3 (DUMP 0F_43H: 60H; OPT lists
	 * L1 only up to model 3); L2 2 MB 8-way, 20 clocks [OPT Second (Model
	 * 3, 4, 6) 2 MB, footnote 1 = sectored; T312 7DH; DUMP 0F_43H]. Model 4
	 * also covers 1 MB-L2 parts; the model takes the 2 MB one.
	 */
	{ 4, P4_MEM_DESKTOP, { "0F_04H Prescott 2M", L1D(16 * KB, 8), SECT(2 * MB, 8), { 0 },
			       TLB64, TLB64, 4, 20, 0 } },
	/*
	 * Models 3, 4 with L3 (64-bit Xeon MP with up to 8 MB L3 [X004]): L3
	 * 8 MB 8-way [X004 "8 or 4-way"; T312 47H "8 MByte, 8-way, 64 byte
	 * line"], sectored like every NetBurst L2/L3 row of [OPT] (47H itself
	 * does not say: UNVERIFIED); L2 1 MB [OPT Second (Model 3, 4)]. L3
	 * latency: no source in reach gives it for these parts (UNVERIFIED);
	 * the model takes the L2's 18 plus the 14 clocks [OPT] gives the L3 of
	 * models 0-2, since this L3 sits behind the L2 = 32.
	 */
	{ 3, P4_MEM_XEON_MP_L3, { "0F_03H Xeon MP with L3", L1D(16 * KB, 8), SECT(1 * MB, 8),
				  SECT(8 * MB, 8), TLB64, TLB64, 4, 18, 32 } },
	{ 4, P4_MEM_XEON_MP_L3, { "0F_04H Xeon MP with L3 (Potomac)", L1D(16 * KB, 8), SECT(1 * MB, 8),
				  SECT(8 * MB, 8), TLB64, TLB64, 4, 18, 32 } },
	/*
	 * Model 6 (Cedar Mill, Presler): L2 2 MB, 20 clocks [OPT Second (Model
	 * 3, 4, 6)]; L1D as model 4 (UNVERIFIED: no source covers model 6's L1).
	 */
	{ 6, P4_MEM_DESKTOP, { "0F_06H Cedar Mill", L1D(16 * KB, 8), SECT(2 * MB, 8), { 0 },
			       TLB64, TLB64, 4, 20, 0 } },
	/*
	 * Model 6 Xeon MP (7100, Tulsa): L3 4 MB 16-way [T312 49H names "Intel
	 * Xeon processor MP, Family 0FH, Model 06H"]; sectoring, the 1 MB L2
	 * per core and the L3 latency (32, as models 3/4) are UNVERIFIED.
	 */
	{ 6, P4_MEM_XEON_MP_L3, { "0F_06H Xeon MP 7100 (Tulsa)", L1D(16 * KB, 8), SECT(1 * MB, 8),
				  SECT(4 * MB, 16), TLB64, TLB64, 4, 18, 32 } },
};

const struct p4_mem_part *p4_mem_part_lookup(const struct p4_sig *sig, enum p4_mem_variant v)
{
	if (sig->family != P4_FAMILY)
		return NULL;
	for (size_t i = 0; i < sizeof(p4_mem_rows) / sizeof(p4_mem_rows[0]); i++)
		if (p4_mem_rows[i].model == sig->model && p4_mem_rows[i].variant == v)
			return &p4_mem_rows[i].part;
	return NULL;
}

/* ---- set-associative arrays ------------------------------------------------------- */

static uint8_t log2u(uint32_t v)
{
	uint8_t n = 0;

	while (v > 1) {
		v >>= 1;
		n++;
	}
	return n;
}

static void cache_setup(struct p4_cache *c, const struct p4_cache_geom *g, struct p4_mem_way *store)
{
	uint32_t block = g->size ? (uint32_t)g->line * g->lines_per_sector : 1;

	c->g = *g;
	c->sets = g->size ? g->size / (block * g->ways) : 0;
	c->block_shift = log2u(block);
	c->line_shift = log2u(g->line ? g->line : 1);
	c->way = store;
}

static bool cache_present(const struct p4_cache *c)
{
	return c->sets != 0;
}

static struct p4_mem_way *cache_set(const struct p4_cache *c, uint64_t block)
{
	return &c->way[(block % c->sets) * c->g.ways];
}

/* Bit of the line that addr falls in, within its sector. */
static uint8_t cache_line_bit(const struct p4_cache *c, uint64_t addr)
{
	unsigned idx = (unsigned)((addr >> c->line_shift) & (c->g.lines_per_sector - 1u));

	return (uint8_t)(1u << idx);
}

/* Move way i of set to the front (most recently used); returns the front. */
static struct p4_mem_way *cache_touch(struct p4_mem_way *set, unsigned i)
{
	struct p4_mem_way w = set[i];

	for (; i > 0; i--)
		set[i] = set[i - 1];
	set[0] = w;
	return &set[0];
}

/* The way holding addr's sector, moved to the front, or NULL. */
static struct p4_mem_way *cache_lookup(const struct p4_cache *c, uint64_t addr)
{
	uint64_t block = addr >> c->block_shift;
	struct p4_mem_way *set = cache_set(c, block);

	for (unsigned i = 0; i < c->g.ways; i++)
		if (set[i].valid && set[i].tag == block)
			return cache_touch(set, i);
	return NULL;
}

/* Put addr's sector in front of its set; *victim receives the way pushed out. */
static struct p4_mem_way *cache_insert(const struct p4_cache *c, uint64_t addr, struct p4_mem_way *victim)
{
	uint64_t block = addr >> c->block_shift;
	struct p4_mem_way *set = cache_set(c, block);
	struct p4_mem_way *front;

	*victim = set[c->g.ways - 1u];
	front = cache_touch(set, c->g.ways - 1u);
	*front = (struct p4_mem_way){ .tag = block };
	return front;
}

static uint8_t popcount8(uint8_t v)
{
	uint8_t n = 0;

	for (; v; v &= (uint8_t)(v - 1))
		n++;
	return n;
}

/* ---- TLBs ------------------------------------------------------------------------ */

static unsigned mem_page_shift(const struct p4_mem *m, uint64_t addr)
{
	unsigned s = m->page_shift ? m->page_shift(m->page_ctx, addr) : PAGE_SHIFT_4K;

	return s == PAGE_SHIFT_2M ? PAGE_SHIFT_2M : PAGE_SHIFT_4K;
}

/* True on a hit; a miss installs the translation in front (LRU order). */
static bool tlb_access(struct p4_tlb *t, uint64_t addr, unsigned shift)
{
	struct p4_tlb_entry e = { .vpn = addr >> shift, .shift = (uint8_t)shift };
	unsigned i, n = t->g.entries;

	for (i = 0; i < n; i++)
		if (t->e[i].shift == shift && t->e[i].vpn == e.vpn)
			break;
	bool hit = i < n;

	if (!hit)
		i = n - 1u;
	for (; i > 0; i--)
		t->e[i] = t->e[i - 1];
	t->e[0] = e;
	return hit;
}

/* ---- the hierarchy ---------------------------------------------------------------- */

/* A sector leaves L3: its dirty lines go to memory. */
static void l3_evicted(const struct p4_mem_way *v, struct p4_mem_result *r)
{
	r->bus_writeback += popcount8(v->dirty);
}

/* Dirty L2 lines of an evicted sector: into L3 if there is one, else to memory. */
static void l2_evicted(struct p4_mem *m, const struct p4_mem_way *v, struct p4_mem_result *r)
{
	uint64_t addr = v->tag << m->l2.block_shift;
	struct p4_mem_way *w, victim;

	if (!v->dirty)
		return;
	if (!cache_present(&m->l3)) {
		r->bus_writeback += popcount8(v->dirty);
		return;
	}
	r->l3_writeback += popcount8(v->dirty);
	w = cache_lookup(&m->l3, addr);
	if (!w) {
		w = cache_insert(&m->l3, addr, &victim);
		l3_evicted(&victim, r);
	}
	w->valid |= v->dirty;
	w->dirty |= v->dirty;
}

/* The fill of a missing line: its bit, plus its sector neighbour when adjacent_line is on. */
static uint8_t mem_fill_mask(const struct p4_mem *m, const struct p4_cache *c, uint64_t addr)
{
	uint8_t all = (uint8_t)((1u << c->g.lines_per_sector) - 1u);

	return m->adjacent_line ? all : cache_line_bit(c, addr);
}

/* An L2 miss: L3 or the bus supplies the line. Returns where it was found. */
static enum p4_mem_level mem_below_l2(struct p4_mem *m, enum p4_mem_kind kind, uint64_t addr,
				      struct p4_mem_result *r)
{
	struct p4_mem_way *w, victim;

	if (cache_present(&m->l3)) {
		w = cache_lookup(&m->l3, addr);
		if (w && (w->valid & cache_line_bit(&m->l3, addr))) {
			r->l3_hit_modified += (w->dirty & cache_line_bit(&m->l3, addr)) != 0;
			return P4_LVL_L3;
		}
		r->l3_miss++;
		if (!w) {
			w = cache_insert(&m->l3, addr, &victim);
			l3_evicted(&victim, r);
		}
		w->valid |= mem_fill_mask(m, &m->l3, addr);
	}
	if (kind == P4_MEM_STORE)
		r->bus_rfo++;
	else
		r->bus_read++;
	return P4_LVL_MEM;
}

/* Look addr's line up in L2, filling it on a miss; returns where it was found. */
static enum p4_mem_level mem_l2(struct p4_mem *m, enum p4_mem_kind kind, uint64_t addr,
				struct p4_mem_result *r)
{
	uint8_t bit = cache_line_bit(&m->l2, addr);
	struct p4_mem_way *w = cache_lookup(&m->l2, addr), victim;
	enum p4_mem_level lvl = P4_LVL_L2;

	if (w && (w->valid & bit)) {
		r->l2_hit_modified += (w->dirty & bit) != 0;
	} else {
		r->l2_miss++;
		if (w)
			r->l2_sector_hit++;
		lvl = mem_below_l2(m, kind, addr, r);	/* leaves L2 alone: w stays valid */
		if (!w) {
			w = cache_insert(&m->l2, addr, &victim);
			l2_evicted(m, &victim, r);
		}
		w->valid |= mem_fill_mask(m, &m->l2, addr);
	}
	if (kind == P4_MEM_STORE)
		w->dirty |= bit;
	return lvl;
}

/* One piece: an access within one 64-byte line (and so within one page). */
static void mem_piece(struct p4_mem *m, enum p4_mem_kind kind, uint64_t addr, struct p4_mem_result *r)
{
	struct p4_tlb *tlb = kind == P4_MEM_FETCH ? &m->itlb : &m->dtlb;
	struct p4_mem_way victim;
	enum p4_mem_level lvl;
	bool l1_hit = false;

	if (tlb_access(tlb, addr, mem_page_shift(m, addr))) {
		r->tlb_hit++;
	} else {
		r->tlb_miss++;
		r->page_walks++;
	}
	if (kind != P4_MEM_FETCH) {
		l1_hit = cache_lookup(&m->l1d, addr) != NULL;
		if (!l1_hit)
			r->l1_miss++;
	}
	if (l1_hit && kind == P4_MEM_LOAD) {
		r->hit[P4_LVL_L1]++;
		return;
	}
	/* L1 misses and fetches go on to L2, and so do stores: L1 is write-through. */
	lvl = mem_l2(m, kind, addr, r);
	r->hit[l1_hit ? P4_LVL_L1 : lvl]++;
	if (kind == P4_MEM_LOAD)
		cache_insert(&m->l1d, addr, &victim)->valid = 1;	/* clean: write-through */
}

int p4_mem_access(struct p4_mem *m, enum p4_mem_kind kind, uint64_t addr, uint32_t size,
		  struct p4_mem_result *r)
{
	uint64_t last = addr + size - 1u;

	if ((unsigned)kind >= P4_MEM_NKINDS || size == 0 || size > P4_MEM_MAX_SIZE || last < addr)
		return -1;
	*r = (struct p4_mem_result){ .kind = kind, .pieces = 1 };
	mem_piece(m, kind, addr, r);
	if (addr / L1_LINE != last / L1_LINE) {
		r->pieces = 2;
		r->split_line = true;
		r->split_page = addr >> mem_page_shift(m, addr) != last >> mem_page_shift(m, last);
		mem_piece(m, kind, last & ~(uint64_t)(L1_LINE - 1u), r);
	}
	r->cycles = p4_cost_access(m, r);
	return 0;
}

/* ---- set-up ------------------------------------------------------------------------- */

static bool mem_fits(const struct p4_cache_geom *g, uint32_t max_blocks)
{
	if (!g->size)
		return true;
	return g->ways <= P4_MEM_MAX_WAYS &&
	       g->size / ((uint32_t)g->line * g->lines_per_sector) <= max_blocks;
}

/* Empty the ways the part's geometry uses (the rest of the storage is never looked at). */
static void cache_flush(struct p4_cache *c)
{
	for (size_t i = 0; i < (size_t)c->sets * c->g.ways; i++)
		c->way[i] = (struct p4_mem_way){ 0 };
}

void p4_mem_flush_tlbs(struct p4_mem *m)
{
	for (size_t i = 0; i < P4_MEM_MAX_TLB; i++)
		m->dtlb.e[i] = m->itlb.e[i] = (struct p4_tlb_entry){ 0 };
}

void p4_mem_flush(struct p4_mem *m)
{
	cache_flush(&m->l1d);
	cache_flush(&m->l2);
	cache_flush(&m->l3);
	p4_mem_flush_tlbs(m);
}

int p4_mem_init(struct p4_mem *m, const struct p4_sig *sig, enum p4_mem_variant v,
		p4_mem_page_shift_fn *page_shift, void *page_ctx)
{
	const struct p4_mem_part *p = p4_mem_part_lookup(sig, v);

	if (!p || !mem_fits(&p->l1d, P4_MEM_MAX_L1_LINES) || !mem_fits(&p->l2, P4_MEM_MAX_L2_SECTORS) ||
	    !mem_fits(&p->l3, P4_MEM_MAX_L3_SECTORS) || p->dtlb.entries > P4_MEM_MAX_TLB ||
	    p->itlb.entries > P4_MEM_MAX_TLB)
		return -1;
	m->sig = *sig;
	m->part = p;
	m->adjacent_line = true;
	m->page_shift = page_shift;
	m->page_ctx = page_ctx;
	cache_setup(&m->l1d, &p->l1d, m->l1_store);
	cache_setup(&m->l2, &p->l2, m->l2_store);
	cache_setup(&m->l3, &p->l3, m->l3_store);
	m->dtlb.g = p->dtlb;
	m->itlb.g = p->itlb;
	p4_mem_flush(m);
	return 0;
}
