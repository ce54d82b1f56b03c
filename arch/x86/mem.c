/*
 * mem.c - the memory map and a first-fit page allocator.
 *
 * The allocator keeps free physical ranges, sorted and coalesced, in a
 * fixed array (arch/x86/memmap.c: a range that overlaps a free one is
 * refused, so no page is handed out twice). The map boot/ hands over is
 * normalised (memmap_normalize: sorted, no overlaps, non-RAM wins). It starts with the conventional memory above 1 MiB (the
 * first MiB holds the AP trampoline page and legacy areas) and gains the
 * firmware's boot-services memory once mem_reclaim_boot() says nothing
 * lives there any more. Memory is identity mapped, so a physical address is
 * also a pointer - in the ia32 kernel only below 4 GiB, so RAM above that
 * (MEM_POINTER_LIMIT) is never handed out there.
 */
#include "arch/x86/mem.h"
#include "arch/x86/memmap.h"
#include "lib/string.h"

#define MEM_LOW_LIMIT	UINT64_C(0x100000)
/* End of what a pointer reaches: 4 GiB with 32-bit pointers, no limit with 64-bit ones. */
#define MEM_POINTER_LIMIT	(sizeof(uintptr_t) < 8 ? UINT64_C(1) << 32 : UINT64_MAX)

static const struct boot_region *regions;
static uint32_t nregions;
static struct mem_free free_list = { .lo = MEM_LOW_LIMIT, .hi = MEM_POINTER_LIMIT };
static uint64_t reclaimed;

/* Hand [base, base + size) to the allocator; a range already free is not taken twice. */
static void mem_add_range(uint64_t base, uint64_t size)
{
	memfree_add(&free_list, base, size);
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
	uint64_t base = n ? memfree_take(&free_list, bytes) : 0;

	if (base)
		memset((void *)(uintptr_t)base, 0, bytes);
	return base;
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
	for (uint32_t i = 0; i < free_list.n; i++) {
		s->free += free_list.r[i].size;
		if (free_list.r[i].size > s->largest_free)
			s->largest_free = free_list.r[i].size;
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
