/*
 * mem.c - the memory map and a first-fit page allocator.
 *
 * The allocator keeps free physical ranges, sorted and coalesced, in a
 * fixed array. It starts with the conventional memory above 1 MiB (the
 * first MiB holds the AP trampoline page and legacy areas) and gains the
 * firmware's boot-services memory once mem_reclaim_boot() says nothing
 * lives there any more. Memory is identity mapped, so a physical address is
 * also a pointer - in the ia32 kernel only below 4 GiB, so RAM above that
 * (MEM_POINTER_LIMIT) is never handed out there.
 */
#include "arch/x86/mem.h"
#include "lib/string.h"

#define MEM_MAX_FREE	512
#define MEM_LOW_LIMIT	UINT64_C(0x100000)
/* End of what a pointer reaches: 4 GiB with 32-bit pointers, no limit with 64-bit ones. */
#define MEM_POINTER_LIMIT	(sizeof(uintptr_t) < 8 ? UINT64_C(1) << 32 : UINT64_MAX)

struct mem_range {
	uint64_t base, size;
};

static const struct boot_region *regions;
static uint32_t nregions;
static struct mem_range free_ranges[MEM_MAX_FREE];
static uint32_t nfree;
static uint64_t reclaimed;

static void mem_remove_range(uint32_t i)
{
	memmove(&free_ranges[i], &free_ranges[i + 1], (nfree - i - 1) * sizeof(free_ranges[0]));
	nfree--;
}

/* Insert [base, base + size) keeping the list sorted and merging neighbours. */
static void mem_add_range(uint64_t base, uint64_t size)
{
	uint32_t i = 0;

	if (base >= MEM_POINTER_LIMIT)
		return;
	if (size > MEM_POINTER_LIMIT - base)
		size = MEM_POINTER_LIMIT - base;
	if (base < MEM_LOW_LIMIT) {
		if (base + size <= MEM_LOW_LIMIT)
			return;
		size -= MEM_LOW_LIMIT - base;
		base = MEM_LOW_LIMIT;
	}
	while (i < nfree && free_ranges[i].base < base)
		i++;
	if (i > 0 && free_ranges[i - 1].base + free_ranges[i - 1].size == base) {
		free_ranges[i - 1].size += size;
		if (i < nfree && base + size == free_ranges[i].base) {
			free_ranges[i - 1].size += free_ranges[i].size;
			mem_remove_range(i);
		}
		return;
	}
	if (i < nfree && base + size == free_ranges[i].base) {
		free_ranges[i].base = base;
		free_ranges[i].size += size;
		return;
	}
	if (nfree == MEM_MAX_FREE)
		return;		/* leaks the range; cannot happen with a sane map */
	memmove(&free_ranges[i + 1], &free_ranges[i], (nfree - i) * sizeof(free_ranges[0]));
	free_ranges[i] = (struct mem_range){ base, size };
	nfree++;
}

void mem_init(const struct bootinfo *bi)
{
	regions = bi->regions;
	nregions = bi->nregions;
	for (uint32_t i = 0; i < nregions; i++)
		if (regions[i].type == BMEM_FREE)
			mem_add_range(regions[i].base, regions[i].size);
}

void mem_reclaim_boot(void)
{
	if (reclaimed)
		return;
	for (uint32_t i = 0; i < nregions; i++) {
		if (regions[i].type != BMEM_BOOT)
			continue;
		mem_add_range(regions[i].base, regions[i].size);
		reclaimed += regions[i].size;
	}
}

uint64_t mem_alloc_pages(size_t n)
{
	uint64_t bytes = (uint64_t)n * MEM_PAGE_SIZE;

	if (n == 0)
		return 0;
	for (uint32_t i = 0; i < nfree; i++) {
		struct mem_range *r = &free_ranges[i];
		uint64_t base = r->base;

		if (r->size < bytes)
			continue;
		r->base += bytes;
		r->size -= bytes;
		if (r->size == 0)
			mem_remove_range(i);
		memset((void *)(uintptr_t)base, 0, bytes);
		return base;
	}
	return 0;
}

uint64_t mem_alloc_page(void)
{
	return mem_alloc_pages(1);
}

void mem_free_pages(uint64_t base, size_t n)
{
	if (n)
		mem_add_range(base, (uint64_t)n * MEM_PAGE_SIZE);
}

void mem_get_summary(struct mem_summary *s)
{
	*s = (struct mem_summary){ .boot_reclaimed = reclaimed };
	for (uint32_t i = 0; i < nregions; i++) {
		const struct boot_region *r = &regions[i];
		uint64_t end = r->base + r->size;

		switch (r->type) {
		case BMEM_FREE:		s->conventional += r->size; break;
		case BMEM_BOOT:		s->boot_services += r->size; break;
		case BMEM_LOADER:	s->kernel += r->size; break;
		case BMEM_ACPI:
		case BMEM_ACPI_NVS:	s->acpi += r->size; break;
		case BMEM_MMIO:		s->mmio += r->size; break;
		default:		s->reserved += r->size; break;
		}
		if (r->type != BMEM_MMIO && r->type != BMEM_RESERVED)
			s->total += r->size;
		if (end > s->top)
			s->top = end;
	}
	for (uint32_t i = 0; i < nfree; i++) {
		s->free += free_ranges[i].size;
		if (free_ranges[i].size > s->largest_free)
			s->largest_free = free_ranges[i].size;
	}
}

uint32_t mem_nregions(void)
{
	return nregions;
}

const struct boot_region *mem_region(uint32_t i)
{
	return i < nregions ? &regions[i] : NULL;
}
