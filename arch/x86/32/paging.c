/*
 * arch/x86/32/paging.c - the ia32 kernel's identity map: PAE paging with 2 MiB pages,
 * the 32-bit twin of 64/paging.c.
 *
 * Why PAE and not 32-bit paging with 4 MiB (PSE) pages: PAE entries are the
 * 64-bit entries of the x86-64 kernel's page directories (SDM Vol. 3A 4.4,
 * Tables 4-9 to 4-11: P, R/W, U/S, PWT, PCD, PS at the same bits) and its
 * pages are 2 MiB as there, so splitting a large page for a ring-3 range
 * and the uncached APIC window work exactly as in paging.c. Every NetBurst
 * processor has PAE (CPUID.01H:EDX bit 6; PMU reference section 1 lists no
 * exception), and OVMF ia32 hands over with paging off, so nothing of the
 * firmware's has to be undone.
 *
 * Layout: one page-directory-pointer table of four entries (SDM 4.4.1, 32-
 * byte aligned, below 4 GiB since CR3 holds only bits 31:5), one page
 * directory per GiB, all of 0-4 GiB mapped, so the local APIC and I/O APIC
 * (FEC00000H-FEFFFFFFH, uncached here) are too. The first 2 MiB use a page
 * table so that page 0 stays unmapped and a NULL dereference faults.
 * PDPTEs have no R/W or U/S bits (SDM Table 4-8: reserved, must be 0), so
 * paging_set_user() sets U/S in the PDEs and PTEs only. The processor
 * loads the four PDPTEs when CR3 is written (SDM 4.4.1), which the flush
 * after every change does.
 */
#include <stddef.h>

#include "arch/x86/cpu.h"
#include "arch/x86/paging.h"

#define MAP_TOP		(UINT64_C(4) << 30)

static uint64_t pdpt[4] __attribute__((aligned(32)));
static uint64_t mapped_top;
static paging_alloc_fn page_alloc;

static uint64_t *table_at(uint64_t entry)
{
	return (uint64_t *)(uintptr_t)(entry & PTE_ADDR);
}

/* The 2 MiB-level entry for addr, or NULL outside the map. */
static uint64_t *pd_entry(uint64_t addr)
{
	if (addr >= mapped_top)
		return NULL;
	return &table_at(pdpt[addr / PAGE_1G])[(addr / PAGE_2M) % 512];
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

/*
 * PAE on: with paging off (as OVMF ia32 leaves it) set CR4.PAE, load CR3,
 * set CR0.PG (SDM Vol. 3A 9.9.1); if paging was on, off first, since
 * CR4.PAE may not change while it is (SDM 4.1.2). The code runs identity
 * mapped in both, so the switch needs no jump. CR0.EM and CR0.TS are
 * cleared and CR0.MP set on the way, so that the one workload using MMX
 * registers (wl_branch_random, arch/x86/32/workloads.S) neither traps to #UD nor #NM.
 */
static void paging_enable_pae(uint64_t cr3)
{
	uint32_t cr0 = (uint32_t)read_cr0();
	uint32_t cr4 = (uint32_t)read_cr4() | CR4_PAE;

	if (cr0 & CR0_PG)
		__asm__ volatile("movl %0, %%cr0" : : "r"(cr0 & ~CR0_PG) : "memory");
	__asm__ volatile("movl %0, %%cr4" : : "r"(cr4) : "memory");
	write_cr3(cr3);
	cr0 = (cr0 | CR0_PG | CR0_MP) & ~(CR0_EM | CR0_TS);
	__asm__ volatile("movl %0, %%cr0" : : "r"(cr0) : "memory");
}

int paging_init(uint64_t top, paging_alloc_fn alloc)
{
	(void)top;	/* 32-bit linear addresses: always exactly 0-4 GiB */
	page_alloc = alloc;
	for (uint64_t g = 0; g < 4; g++) {
		uint64_t pd_page = alloc();
		uint64_t *pd = (uint64_t *)(uintptr_t)pd_page;

		if (!pd_page || pd_page >= MAP_TOP)
			return -1;
		for (unsigned i = 0; i < 512; i++)
			pd[i] = (g * PAGE_1G + i * PAGE_2M) | PTE_P | PTE_RW | PTE_PS;
		if (g == 0 && paging_map_low(pd, alloc))
			return -1;
		pdpt[g] = pd_page | PTE_P;
	}
	mapped_top = MAP_TOP;
	paging_set_uncached(APIC_MMIO_BASE, APIC_MMIO_END - APIC_MMIO_BASE);
	paging_enable_pae((uint64_t)(uintptr_t)pdpt);
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

	if (!mapped_top || end < base || end > mapped_top)
		return -1;
	for (uint64_t a = base & ~(PAGE_4K - 1); a < end; a += PAGE_4K) {
		uint64_t *e = pd_entry(a), *pt;

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

	if (!pdpt[0] || end < base || end > MAP_TOP)
		return -1;
	for (uint64_t a = base & ~(PAGE_2M - 1); a < end; a += PAGE_2M) {
		uint64_t *e = &table_at(pdpt[a / PAGE_1G])[(a / PAGE_2M) % 512];

		if (*e & PTE_PS)
			*e |= PTE_PCD | PTE_PWT;
	}
	if (mapped_top && read_cr3() == (uint64_t)(uintptr_t)pdpt)
		paging_flush();
	return 0;
}

unsigned paging_page_shift(uint64_t addr)
{
	const uint64_t *e = pd_entry(addr);

	return e && (*e & PTE_PS) ? 21u : 12u;
}

static uint64_t paging_read_live(void *ctx, uint64_t table, unsigned index)
{
	(void)ctx;
	return ((const volatile uint64_t *)(uintptr_t)table)[index];
}

/* Before paging_init the firmware runs without paging: everything is reachable. */
bool paging_is_mapped(uint64_t addr, uint64_t len, bool user)
{
	if (!(read_cr0() & CR0_PG))
		return addr + (len ? len - 1 : 0) >= addr && addr + len <= MAP_TOP;
	return paging_walk_mapped_pae(read_cr3(), addr, len, user, paging_read_live, NULL);
}
