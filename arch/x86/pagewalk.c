/*
 * pagewalk.c - is a linear address range mapped? A walk of 4-level paging
 * structures (SDM Vol. 3A 4.5, Figure 4-8 and Tables 4-15 to 4-20).
 *
 * Pure logic over tables read through a callback, so the host tests can
 * feed it hand-built tables (tests/host/test_paging.c); arch/x86/64/paging.c
 * reads the live ones (identity-mapped: a table's physical address is its
 * address). Per level the entry must have P (bit 0); PS (bit 7) in a PDPTE
 * maps a 1 GiB page and in a PDE a 2 MiB page, ending the walk early. A
 * user access also needs U/S (bit 2) at every level it passes, since the
 * access rights combine across levels (SDM 4.6.1). Addresses must be
 * canonical (bits 63:47 all equal) or the access faults with #GP.
 */
#include <stddef.h>

#include "arch/x86/paging.h"

static bool walk_canonical(uint64_t a)
{
	uint64_t top = a >> 47;

	return top == 0 || top == (UINT64_C(1) << 17) - 1;
}

/* Bytes mapped from addr to the end of its page, or 0 when addr is not mapped. */
static uint64_t walk_one(uint64_t root, uint64_t addr, bool user, paging_read_fn read, void *ctx)
{
	uint64_t table = root & PTE_ADDR;

	for (int level = 3; level >= 0; level--) {
		unsigned shift = 12 + 9 * (unsigned)level;
		uint64_t e = read(ctx, table, (unsigned)(addr >> shift) & 511);
		uint64_t size = UINT64_C(1) << shift;

		if (!(e & PTE_P) || (user && !(e & PTE_US)))
			return 0;
		/* PS means a large page in a PDPTE (1 GiB) or PDE (2 MiB); a PTE maps 4 KiB. */
		if (level == 0 || ((level == 1 || level == 2) && (e & PTE_PS)))
			return size - (addr & (size - 1));
		table = e & PTE_ADDR;
	}
	return 0;
}

/*
 * PAE paging (SDM Vol. 3A 4.4, Figure 4-5 and Tables 4-8 to 4-11), the ia32
 * kernel's: CR3 bits 31:5 locate four PDPTEs (linear bits 31:30), then a
 * page directory (bits 29:21; PS maps 2 MiB) and a page table (bits 20:12).
 * PDPTEs have no R/W or U/S bits, so a user access needs U/S in the PDE
 * and, below it, the PTE only.
 */
static uint64_t walk_one_pae(uint64_t root, uint64_t addr, bool user, paging_read_fn read,
			     void *ctx)
{
	uint64_t pdpte = read(ctx, root & UINT64_C(0xffffffe0), (unsigned)(addr >> 30) & 3);
	uint64_t pde, pte;

	if (!(pdpte & PTE_P))
		return 0;
	pde = read(ctx, pdpte & PTE_ADDR, (unsigned)(addr >> 21) & 511);
	if (!(pde & PTE_P) || (user && !(pde & PTE_US)))
		return 0;
	if (pde & PTE_PS)
		return (UINT64_C(1) << 21) - (addr & ((UINT64_C(1) << 21) - 1));
	pte = read(ctx, pde & PTE_ADDR, (unsigned)(addr >> 12) & 511);
	if (!(pte & PTE_P) || (user && !(pte & PTE_US)))
		return 0;
	return UINT64_C(4096) - (addr & 4095);
}

bool paging_walk_mapped_pae(uint64_t root, uint64_t addr, uint64_t len, bool user,
			    paging_read_fn read, void *ctx)
{
	uint64_t last = addr + (len ? len - 1 : 0);

	if (last < addr || last > UINT32_MAX)
		return false;
	for (uint64_t a = addr;;) {
		uint64_t n = walk_one_pae(root, a, user, read, ctx);

		if (n == 0)
			return false;
		if (last - a < n)
			return true;
		a += n;
	}
}

bool paging_walk_mapped(uint64_t root, uint64_t addr, uint64_t len, bool user,
			paging_read_fn read, void *ctx)
{
	uint64_t last = addr + (len ? len - 1 : 0);

	if (last < addr || !walk_canonical(addr) || !walk_canonical(last) ||
	    (addr >> 47) != (last >> 47))
		return false;
	for (uint64_t a = addr;;) {
		uint64_t n = walk_one(root, a, user, read, ctx);

		if (n == 0)
			return false;
		if (last - a < n)
			return true;
		a += n;
	}
}

void paging_split_2m(uint64_t *e, uint64_t *pt)
{
	uint64_t base = *e & PTE_ADDR & ~(PAGE_2M - 1);
	uint64_t bits = *e & (PTE_P | PTE_RW | PTE_US | PTE_PWT | PTE_PCD);

	for (unsigned i = 0; i < 512; i++)
		pt[i] = (base + i * PAGE_4K) | bits;
	*e = (uint64_t)(uintptr_t)pt | (*e & (PTE_P | PTE_RW | PTE_US));
}
