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
#include "lib/printf.h"
#include "lib/string.h"

#define MEM_LOW_LIMIT	UINT64_C(0x100000)
/* End of what a pointer reaches: 4 GiB with 32-bit pointers, no limit with 64-bit ones. */
#define MEM_POINTER_LIMIT	(sizeof(uintptr_t) < 8 ? UINT64_C(1) << 32 : UINT64_MAX)

static const struct boot_region *regions;
static uint32_t nregions;
static struct mem_free free_list = { .lo = MEM_LOW_LIMIT, .hi = MEM_POINTER_LIMIT };
static uint64_t reclaimed;

/*
 * Hand [base, base + size) to the allocator, less the fixed-address window
 * (mem.h); a range already free is not taken twice.
 */
static void mem_add_range(uint64_t base, uint64_t size)
{
	uint64_t end = base + size, wlo = MEM_FIXED_LO, whi = MEM_FIXED_LO + MEM_FIXED_SIZE;

	if (end <= wlo || base >= whi) {
		memfree_add(&free_list, base, size);
		return;
	}
	if (base < wlo)
		memfree_add(&free_list, base, wlo - base);
	if (end > whi)
		memfree_add(&free_list, whi, end - whi);
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

static const char *mem_type_name(enum boot_mem_type t)
{
	switch (t) {
	case BMEM_LOADER:	return "the kernel or its loader's data";
	case BMEM_BOOT:		return "firmware boot-services memory";
	case BMEM_ACPI:
	case BMEM_ACPI_NVS:	return "ACPI tables";
	case BMEM_MMIO:		return "device memory";
	default:		return "reserved memory";
	}
}

int mem_fixed_check(char *why, size_t n)
{
	uint64_t at = MEM_FIXED_LO, end = MEM_FIXED_LO + MEM_FIXED_SIZE;

	for (uint32_t i = 0; i < nregions && at < end; i++) {
		const struct boot_region *r = &regions[i];

		if (r->base + r->size <= at)
			continue;
		if (r->base > at)
			break;		/* a hole in the map: no RAM there */
		if (r->type != BMEM_FREE && !(r->type == BMEM_BOOT && reclaimed)) {
			ksnprintf(why, n, "%#llx..%#llx holds %s on this machine",
				  (unsigned long long)r->base, (unsigned long long)(r->base + r->size),
				  mem_type_name(r->type));
			return -1;
		}
		at = r->base + r->size;
	}
	if (at < end) {
		ksnprintf(why, n, "%#llx..%#llx is not RAM on this machine", (unsigned long long)at,
			  (unsigned long long)end);
		return -1;
	}
	return 0;
}
