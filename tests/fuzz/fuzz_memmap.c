/*
 * fuzz_memmap.c - a Multiboot memory map as GRUB hands it over, read by
 * memmap_multiboot, normalised by memmap_normalize and given to the page
 * allocator's free list (arch/x86/memmap.c), as boot/multiboot.c and
 * arch/x86/mem.c do.
 *
 * The input is the map's bytes (entries of size, base, length, type);
 * its last byte also says which sizes to allocate, the one before it how
 * many regions the table holds (the kernel's 503, or 1..64 so that a short
 * map overflows it too). Contract checked
 * (memmap.h): the walk ends, and reads no byte past the map (a heap block
 * of exactly its length); the normalised map is sorted, disjoint, free
 * RAM in whole pages, and every region's type is the strictest of the
 * regions read at its first and last byte; no page is handed out twice,
 * none that is not RAM in the whole raw map, entries the full table left
 * out included (no non-RAM entry touches it, RAM entries cover all of it) and none below the allocator's floor; a range
 * freed back is refused the second time.
 */
#include "arch/x86/memmap.h"
#include "tests/fuzz/fuzz.h"

#define FLOOR	UINT64_C(0x100000)
#define TAKES	256

#define KERNEL_MAX	(BOOT_MAX_REGIONS - 1 - BOOT_MAX_FILES)	/* boot/multiboot.c */

static struct boot_region raw[BOOT_MAX_REGIONS], out[BOOT_MAX_REGIONS], *all;
static struct mem_free f;

static uint64_t end_of(const struct boot_region *r)
{
	return r->base + r->size < r->base ? UINT64_MAX : r->base + r->size;
}

static int strictest_at(uint32_t n, uint64_t a)
{
	int t = -1;

	for (uint32_t i = 0; i < n; i++) {
		int ty = raw[i].type < BMEM_NTYPES ? (int)raw[i].type : BMEM_RESERVED;

		if (raw[i].size && a >= raw[i].base && a < end_of(&raw[i]) && ty > t)
			t = ty;
	}
	return t;
}

/* [a, e) is RAM in the whole map: no other type touches it, RAM entries cover it. */
static bool is_ram(uint32_t n, uint64_t a, uint64_t e)
{
	for (uint32_t i = 0; i < n; i++)
		if (all[i].size && all[i].type != BMEM_FREE && all[i].base < e && end_of(&all[i]) > a)
			return false;
	while (a < e) {
		uint64_t next = a;

		for (uint32_t i = 0; i < n; i++)
			if (all[i].size && all[i].type == BMEM_FREE && all[i].base <= a &&
			    end_of(&all[i]) > a && end_of(&all[i]) > next)
				next = end_of(&all[i]);
		if (next == a)
			return false;
		a = next;
	}
	return true;
}

static void check_normalised(uint32_t n, uint32_t k)
{
	for (uint32_t i = 0; i < k; i++) {
		fuzz_check(out[i].size > 0);
		if (i)
			fuzz_check(out[i].base >= end_of(&out[i - 1]));
		if (out[i].type == BMEM_FREE)
			fuzz_check(out[i].base % MEMMAP_PAGE == 0 && out[i].size % MEMMAP_PAGE == 0);
		fuzz_check(strictest_at(n, out[i].base) == (int)out[i].type);
		fuzz_check(strictest_at(n, end_of(&out[i]) - 1) == (int)out[i].type);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *map = malloc(size ? size : 1);
	uint64_t got[TAKES][2];
	uint32_t entries, nall, n, k, m = 0, cap = size / 24 + 1;
	uint8_t sizes = size ? data[size - 1] : 0;
	uint8_t table = size > 1 ? data[size - 2] : 0;
	uint32_t max = table & 0x80 ? 1 + (table & 63) : KERNEL_MAX;

	all = malloc(cap * sizeof(*all));
	if (all == NULL)
		abort();
	memcpy(map, data, size);
	nall = memmap_multiboot(map, (uint32_t)size, all, cap, &entries);
	fuzz_check(nall <= entries && (uint64_t)entries * 24 <= size);
	n = memmap_multiboot(map, (uint32_t)size, raw, max, &entries);
	fuzz_check(n <= max && n <= nall);
	k = memmap_normalize(raw, n, out, BOOT_MAX_REGIONS);
	check_normalised(n, k);
	f = (struct mem_free){ .lo = FLOOR, .hi = UINT64_MAX };
	for (uint32_t i = 0; i < k; i++)
		if (out[i].type == BMEM_FREE)
			memfree_add(&f, out[i].base, out[i].size);
	for (unsigned t = 0; t < TAKES; t++) {
		uint64_t bytes = (uint64_t)(1 + ((sizes >> (t % 8)) & 3)) * MEMMAP_PAGE;
		uint64_t a = memfree_take(&f, bytes);

		if (!a)
			continue;
		fuzz_check(a >= FLOOR && a % MEMMAP_PAGE == 0 && a + bytes > a);
		fuzz_check(is_ram(nall, a, a + bytes));
		for (uint32_t j = 0; j < m; j++)
			fuzz_check(a + bytes <= got[j][0] || got[j][0] + got[j][1] <= a);
		got[m][0] = a, got[m][1] = bytes, m++;
	}
	if (m) {	/* a free, then the same free again: the second is refused */
		fuzz_check(memfree_add(&f, got[0][0], got[0][1]));
		fuzz_check(!memfree_add(&f, got[0][0], got[0][1]));
	}
	free(map);
	free(all);
	return 0;
}
