/*
 * memmap.c - the memory map normalised, and the free-range list (memmap.h).
 *
 * The normalisation is the one Linux's e820__update_table does for the
 * same BIOS maps: cut the address space at every region's start and end,
 * give each piece the strictest type any region claims for it, merge.
 * O(n^2) on at most BOOT_MAX_REGIONS regions, once at boot.
 */
#include "arch/x86/memmap.h"

static uint64_t region_end(const struct boot_region *r)
{
	return r->base + r->size < r->base ? UINT64_MAX : r->base + r->size;
}

/* A type the kernel does not know is reserved. */
static int type_of(const struct boot_region *r)
{
	return r->type < BMEM_NTYPES ? (int)r->type : BMEM_RESERVED;
}

/* The strictest type of the regions that hold address a; -1 when none does. */
static int type_at(const struct boot_region *in, uint32_t n, uint64_t a)
{
	int t = -1;

	for (uint32_t i = 0; i < n; i++)
		if (in[i].size && a >= in[i].base && a < region_end(&in[i]) && type_of(&in[i]) > t)
			t = type_of(&in[i]);
	return t;
}

/* The first region start or end above a, or UINT64_MAX. */
static uint64_t next_cut(const struct boot_region *in, uint32_t n, uint64_t a)
{
	uint64_t c = UINT64_MAX;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t b = in[i].base, e = region_end(&in[i]);

		if (!in[i].size)
			continue;
		if (b > a && b < c)
			c = b;
		if (e > a && e < c)
			c = e;
	}
	return c;
}

/* Append [b, e) of type t, merging with the last region; free RAM in whole pages only. */
static uint32_t emit(struct boot_region *out, uint32_t k, uint32_t max, uint64_t b, uint64_t e,
		     int t)
{
	struct boot_region *last = k ? &out[k - 1] : 0;

	if (last && (int)last->type == t && region_end(last) == b) {
		last->size = e - last->base;
		return k;
	}
	if (k == max)
		return k;
	out[k] = (struct boot_region){ .base = b, .size = e - b, .type = (uint32_t)t };
	return k + 1;
}

/* Free RAM cut inward to whole pages; regions that end up empty are dropped. */
static uint32_t pages_only(struct boot_region *out, uint32_t k)
{
	uint32_t w = 0;

	for (uint32_t i = 0; i < k; i++) {
		struct boot_region r = out[i];

		if (r.type == BMEM_FREE) {
			uint64_t b = (r.base + MEMMAP_PAGE - 1) & ~(uint64_t)(MEMMAP_PAGE - 1);
			uint64_t e = region_end(&r) & ~(uint64_t)(MEMMAP_PAGE - 1);

			if (r.base > UINT64_MAX - (MEMMAP_PAGE - 1) || e <= b)
				continue;
			r.base = b, r.size = e - b;
		}
		out[w++] = r;
	}
	return w;
}

uint32_t memmap_normalize(const struct boot_region *in, uint32_t n, struct boot_region *out,
			  uint32_t max)
{
	uint64_t a = UINT64_MAX;
	uint32_t k = 0;

	for (uint32_t i = 0; i < n; i++)
		if (in[i].size && in[i].base < a)
			a = in[i].base;
	while (a != UINT64_MAX) {
		uint64_t c = next_cut(in, n, a);
		int t = type_at(in, n, a);

		if (t >= 0)
			k = emit(out, k, max, a, c, t);
		a = c;
	}
	return pages_only(out, k);
}

static uint64_t rd_le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = n; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

static uint32_t mb_type(uint64_t type)
{
	switch (type) {
	case 1:		return BMEM_FREE;
	case 3:		return BMEM_ACPI;
	case 4:		return BMEM_ACPI_NVS;
	default:	return BMEM_RESERVED;
	}
}

/*
 * Keep r in out[0..k) (max entries). A full table loses RAM, never what is
 * not RAM: a RAM entry over a reserved one that was left out would hand
 * the reserved memory out. So a non-RAM entry takes the place of the last
 * RAM one; when there is none, no RAM is kept to cover it.
 */
static uint32_t mb_keep(struct boot_region *out, uint32_t k, uint32_t max, struct boot_region r)
{
	if (k < max) {
		out[k] = r;
		return k + 1;
	}
	if (r.type == BMEM_FREE)
		return k;
	for (uint32_t i = k; i-- > 0;)
		if (out[i].type == BMEM_FREE) {
			out[i] = r;
			break;
		}
	return k;
}

uint32_t memmap_multiboot(const uint8_t *map, uint32_t len, struct boot_region *out,
			  uint32_t max, uint32_t *entries)
{
	uint64_t off = 0;
	uint32_t k = 0;

	*entries = 0;
	while (off + 4 <= len) {
		uint64_t size = rd_le(map + off, 4);
		const uint8_t *e = map + off + 4;

		if (size < MB_MMAP_ENTRY_MIN || size > len - off - 4)
			break;
		(*entries)++;
		if (rd_le(e + 8, 8))
			k = mb_keep(out, k, max, (struct boot_region){ .base = rd_le(e, 8),
					.size = rd_le(e + 8, 8), .type = mb_type(rd_le(e + 16, 4)) });
		off += 4 + size;
	}
	return k;
}

/* --- the sibling's start-up page ------------------------------------------------------ */

/* A BDA address believed as a top of usable conventional memory, else the limit. */
static uint64_t bda_cap(uint64_t addr, uint64_t limit)
{
	return addr >= MEMMAP_BDA_MIN && addr < limit ? addr : limit;
}

uint64_t memmap_low_page(const struct boot_region *regions, uint32_t n, const struct bda_low *bda)
{
	uint64_t limit = MEMMAP_LOW_LIMIT, best = 0;

	if (bda) {
		limit = bda_cap((uint64_t)bda->base_kib << 10, limit);
		limit = bda_cap((uint64_t)bda->ebda_seg << 4, limit);
	}
	limit &= ~(uint64_t)(MEMMAP_PAGE - 1);
	for (uint32_t i = 0; i < n; i++) {
		const struct boot_region *r = &regions[i];
		uint64_t top = region_end(r);

		if (r->type != BMEM_FREE || r->base >= limit)
			continue;
		if (top > limit)
			top = limit;
		top &= ~(uint64_t)(MEMMAP_PAGE - 1);
		/* page 0 holds the real-mode IVT; never the start-up page */
		if (top >= r->base + MEMMAP_PAGE && top - MEMMAP_PAGE > best &&
		    top - MEMMAP_PAGE >= MEMMAP_PAGE)
			best = top - MEMMAP_PAGE;
	}
	return best;
}

/* --- the free-range list ------------------------------------------------------------ */

static void range_remove(struct mem_free *f, uint32_t i)
{
	for (uint32_t j = i; j + 1 < f->n; j++)
		f->r[j] = f->r[j + 1];
	f->n--;
}

static void range_insert(struct mem_free *f, uint32_t i, uint64_t base, uint64_t size)
{
	for (uint32_t j = f->n; j > i; j--)
		f->r[j] = f->r[j - 1];
	f->r[i] = (struct mem_range){ base, size };
	f->n++;
}

bool memfree_add(struct mem_free *f, uint64_t base, uint64_t size)
{
	uint64_t end = base + size < base ? UINT64_MAX : base + size;
	uint32_t i = 0;

	base = base < f->lo ? f->lo : base;
	end = end > f->hi ? f->hi : end;
	if (base > UINT64_MAX - (MEMMAP_PAGE - 1))
		return true;		/* nothing of it may be handed out */
	base = (base + MEMMAP_PAGE - 1) & ~(uint64_t)(MEMMAP_PAGE - 1);
	end &= ~(uint64_t)(MEMMAP_PAGE - 1);
	if (end <= base)
		return true;
	size = end - base;
	while (i < f->n && f->r[i].base < base)
		i++;
	if ((i > 0 && f->r[i - 1].base + f->r[i - 1].size > base) || (i < f->n && end > f->r[i].base))
		return false;
	if (i > 0 && f->r[i - 1].base + f->r[i - 1].size == base) {
		f->r[i - 1].size += size;
		if (i < f->n && end == f->r[i].base) {
			f->r[i - 1].size += f->r[i].size;
			range_remove(f, i);
		}
		return true;
	}
	if (i < f->n && end == f->r[i].base) {
		f->r[i].base = base;
		f->r[i].size += size;
		return true;
	}
	if (f->n == MEM_MAX_FREE)
		return false;
	range_insert(f, i, base, size);
	return true;
}

uint64_t memfree_take(struct mem_free *f, uint64_t bytes)
{
	if (bytes == 0 || bytes % MEMMAP_PAGE)
		return 0;
	for (uint32_t i = 0; i < f->n; i++) {
		struct mem_range *r = &f->r[i];
		uint64_t base = r->base;

		if (r->size < bytes)
			continue;
		r->base += bytes;
		r->size -= bytes;
		if (r->size == 0)
			range_remove(f, i);
		return base;
	}
	return 0;
}
