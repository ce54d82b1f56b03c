/*
 * paging.h - the kernel's own identity-mapped page tables: 4-level paging
 * in the x86-64 kernel (paging.c), PAE paging in the ia32 kernel
 * (arch/x86/32/paging.c); both with 2 MiB pages, so the interface is the same.
 */
#ifndef NBPROF_ARCH_X86_PAGING_H
#define NBPROF_ARCH_X86_PAGING_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Paging-structure entry bits, the same in PAE and 4-level paging (SDM
 * Vol. 3A 4.4 and 4.5): present, writable, user, write-through, cache
 * disable, page size (a 2 MiB or 1 GiB page, not a table), and the
 * address of the page or next table (bits 51:12; PAE's PDPTEs use P,
 * PWT, PCD and the address only).
 */
#define PTE_P		(UINT64_C(1) << 0)
#define PTE_RW		(UINT64_C(1) << 1)
#define PTE_US		(UINT64_C(1) << 2)
#define PTE_PWT		(UINT64_C(1) << 3)
#define PTE_PCD		(UINT64_C(1) << 4)
#define PTE_PS		(UINT64_C(1) << 7)
#define PTE_ADDR	UINT64_C(0x000ffffffffff000)

#define PAGE_4K		UINT64_C(0x1000)
#define PAGE_2M		UINT64_C(0x200000)
#define PAGE_1G		UINT64_C(0x40000000)

/* The I/O APIC and local APIC pages (FEC00000H-FEFFFFFFH): mapped uncached (PCD, PWT). */
#define APIC_MMIO_BASE	UINT64_C(0xfec00000)
#define APIC_MMIO_END	UINT64_C(0xff000000)

/* A zeroed 4 KiB page (physical = virtual), or 0 when memory ran out. */
typedef uint64_t (*paging_alloc_fn)(void);

/*
 * Identity-map [0, max(top, 4 GiB)) and switch CR3 to it. Returns 0, or -1
 * when alloc failed (the firmware's tables then stay in use).
 */
int paging_init(uint64_t top, paging_alloc_fn alloc);

/* End of the identity map (0 before paging_init). */
uint64_t paging_mapped_top(void);

/*
 * Allow (or forbid) ring-3 access to the 2 MiB pages covering
 * [base, base + len). For later ring-3 workloads; the kernel is
 * supervisor-only until then.
 */
int paging_set_user(uint64_t base, uint64_t len, bool user);

/*
 * Replace the 2 MiB page that the page-directory entry *e maps by the page
 * table at pt (512 entries, physical = virtual address): 512 4 KiB pages
 * of the same frames with the same P/RW/US/PWT/PCD bits (bits 0-4 mean the
 * same at both levels; the 2 MiB PAT bit 12 is never set here). *e then
 * points at pt and keeps P/RW/US: the 4 KiB entries decide. The same in
 * PAE and 4-level paging (both paging twins use it).
 */
void paging_split_2m(uint64_t *e, uint64_t *pt);

/* Make [base, base + len) uncached (PCD|PWT) at 2 MiB granularity. */
int paging_set_uncached(uint64_t base, uint64_t len);

/*
 * Can [addr, addr + len) be read without a page fault, according to the
 * page tables CR3 points at now (the kernel's, or the firmware's before
 * paging_init)? Every page the range touches must be present at each level
 * of the walk; with user, also user-accessible (U/S set at every level, SDM
 * Vol. 3A 4.6), as a ring-3 access needs. len 0 counts as 1 byte; a range
 * that wraps or leaves the canonical address space is not mapped.
 */
bool paging_is_mapped(uint64_t addr, uint64_t len, bool user);

/*
 * The page size that maps addr in the kernel's tables, as a shift: 21 for a
 * 2 MiB page, 12 for a 4 KiB one (the first 2 MiB, ranges split by
 * paging_set_user) and for addresses outside the map.
 */
unsigned paging_page_shift(uint64_t addr);

/*
 * The walk behind paging_is_mapped, portable (arch/x86/pagewalk.c, also
 * built on the host): root is CR3's table address, and read(ctx, table, i)
 * returns entry i (0-511) of the paging structure at physical address
 * table.
 */
typedef uint64_t (*paging_read_fn)(void *ctx, uint64_t table, unsigned index);

bool paging_walk_mapped(uint64_t root, uint64_t addr, uint64_t len, bool user,
			paging_read_fn read, void *ctx);

/*
 * The same for PAE paging (the ia32 kernel, arch/x86/32/paging.c): root is
 * CR3 (PDPT at bits 31:5), index 0-3 at the PDPT, 0-511 below; a range
 * that ends above 4 GiB is not mapped.
 */
bool paging_walk_mapped_pae(uint64_t root, uint64_t addr, uint64_t len, bool user,
			    paging_read_fn read, void *ctx);

#endif
