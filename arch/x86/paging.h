/*
 * paging.h - the kernel's own identity-mapped page tables.
 */
#ifndef NBPROF_ARCH_X86_PAGING_H
#define NBPROF_ARCH_X86_PAGING_H

#include <stdbool.h>
#include <stdint.h>

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

/* Make [base, base + len) uncached (PCD|PWT) at 2 MiB granularity. */
int paging_set_uncached(uint64_t base, uint64_t len);

#endif
