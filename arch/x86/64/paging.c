/*
 * paging.c - identity-mapped 4-level page tables with 2 MiB pages.
 *
 * After ExitBootServices the firmware's page tables live in boot-services
 * memory (QEMU notes P4); the kernel builds its own before reclaiming
 * that memory. Layout: one PML4, one PDPT (so at most 512 GiB, far beyond a
 * NetBurst board), one page directory per GiB of 2 MiB pages. The first
 * 2 MiB use a page table instead so that page 0 stays unmapped and a NULL
 * dereference faults. The range always extends to 4 GiB so the local APIC
 * and I/O APIC (FEC00000H-FEFFFFFFH) are mapped; those pages are uncached.
 * All entries are supervisor-only; paging_set_user() opens a range for ring
 * 3 by setting U/S at every level (SDM Vol. 3A 4.6: access rights combine
 * across levels). It works on 4 KiB pages: a 2 MiB page that the range
 * covers only in part is first split into a page table with the same
 * attributes (kept split afterwards), so ring 3 sees exactly the range.
 *
 * paging_is_mapped() walks whatever tables CR3 holds (arch/x86/pagewalk.c),
 * not the layout this file builds, so it stays right for split pages, user
 * ranges and the firmware's tables alike.
 */
#include <stddef.h>

#include "arch/x86/cpu.h"
#include "arch/x86/paging.h"

#define MAP_MIN_TOP	(UINT64_C(4) << 30)
#define MAP_MAX_TOP	(UINT64_C(512) << 30)

static uint64_t *pml4, *pdpt;
static uint64_t mapped_top;
static paging_alloc_fn page_alloc;

static uint64_t *table_at(uint64_t entry)
{
	return (uint64_t *)(uintptr_t)(entry & PTE_ADDR);
}

/* The 2 MiB-level entry for addr, or NULL outside the map or in the first 2 MiB. */
static uint64_t *pd_entry(uint64_t addr)
{
	uint64_t *pd;

	if (!pdpt || addr >= mapped_top)
		return NULL;
	pd = table_at(pdpt[addr / PAGE_1G]);
	return &pd[(addr / PAGE_2M) % 512];
}

static int paging_map_low(uint64_t *pd, paging_alloc_fn alloc)
{
	uint64_t pt_page = alloc();
	uint64_t *pt = (uint64_t *)(uintptr_t)pt_page;

	if (!pt_page)
		return -1;
	for (unsigned i = 1; i < 512; i++)	/* entry 0 stays absent: page 0 unmapped */
		pt[i] = i * PAGE_4K | PTE_P | PTE_RW;
	pd[0] = pt_page | PTE_P | PTE_RW;
	return 0;
}

int paging_init(uint64_t top, paging_alloc_fn alloc)
{
	uint64_t pml4_page = alloc(), pdpt_page = alloc();
	uint64_t ngb;

	if (!pml4_page || !pdpt_page)
		return -1;
	top = top < MAP_MIN_TOP ? MAP_MIN_TOP : top;
	top = top > MAP_MAX_TOP ? MAP_MAX_TOP : top;
	ngb = (top + PAGE_1G - 1) / PAGE_1G;
	pml4 = (uint64_t *)(uintptr_t)pml4_page;
	pdpt = (uint64_t *)(uintptr_t)pdpt_page;
	page_alloc = alloc;
	for (uint64_t g = 0; g < ngb; g++) {
		uint64_t pd_page = alloc();
		uint64_t *pd = (uint64_t *)(uintptr_t)pd_page;

		if (!pd_page)
			return -1;
		for (unsigned i = 0; i < 512; i++)
			pd[i] = (g * PAGE_1G + i * PAGE_2M) | PTE_P | PTE_RW | PTE_PS;
		if (g == 0 && paging_map_low(pd, alloc))
			return -1;
		pdpt[g] = pd_page | PTE_P | PTE_RW;
	}
	pml4[0] = pdpt_page | PTE_P | PTE_RW;
	mapped_top = ngb * PAGE_1G;
	paging_set_uncached(APIC_MMIO_BASE, APIC_MMIO_END - APIC_MMIO_BASE);
	write_cr3(pml4_page);
	return 0;
}

uint64_t paging_mapped_top(void)
{
	return mapped_top;
}

static void paging_flush(void)
{
	write_cr3(read_cr3());
}

/* A 2 MiB page becomes a page table of 4 KiB pages with the same bits (paging.h). */
static int paging_split(uint64_t *e)
{
	uint64_t pt_page = page_alloc ? page_alloc() : 0;

	if (!pt_page)
		return -1;
	paging_split_2m(e, (uint64_t *)(uintptr_t)pt_page);
	return 0;
}

int paging_set_user(uint64_t base, uint64_t len, bool user)
{
	uint64_t end = base + len;

	if (!pdpt || end < base || end > mapped_top)
		return -1;
	pml4[0] |= PTE_US;
	for (uint64_t a = base & ~(PAGE_4K - 1); a < end; a += PAGE_4K) {
		uint64_t *e = pd_entry(a), *pt;

		pdpt[a / PAGE_1G] |= PTE_US;
		if ((*e & PTE_PS) && (a % PAGE_2M != 0 || end - a < PAGE_2M) && paging_split(e))
			return -1;
		if (*e & PTE_PS) {	/* the whole 2 MiB page is in the range */
			*e = user ? *e | PTE_US : *e & ~PTE_US;
			a += PAGE_2M - PAGE_4K;
			continue;
		}
		*e |= PTE_US;
		pt = &table_at(*e)[(a / PAGE_4K) % 512];
		if (*pt & PTE_P)	/* page 0 stays absent */
			*pt = user ? *pt | PTE_US : *pt & ~PTE_US;
	}
	paging_flush();
	return 0;
}

int paging_set_uncached(uint64_t base, uint64_t len)
{
	uint64_t end = base + len;

	if (!pdpt || end < base || end > mapped_top)
		return -1;
	for (uint64_t a = base & ~(PAGE_2M - 1); a < end; a += PAGE_2M) {
		uint64_t *e = pd_entry(a);

		if (*e & PTE_PS)
			*e |= PTE_PCD | PTE_PWT;
	}
	if (read_cr3() == (uint64_t)(uintptr_t)pml4)
		paging_flush();
	return 0;
}

unsigned paging_page_shift(uint64_t addr)
{
	const uint64_t *e = pd_entry(addr);

	return e && (*e & PTE_PS) ? 21u : 12u;
}

/* A paging-structure entry: tables are identity-mapped, so a physical address is readable. */
static uint64_t paging_read_live(void *ctx, uint64_t table, unsigned index)
{
	(void)ctx;
	return ((const volatile uint64_t *)(uintptr_t)table)[index];
}

bool paging_is_mapped(uint64_t addr, uint64_t len, bool user)
{
	return paging_walk_mapped(read_cr3(), addr, len, user, paging_read_live, NULL);
}
