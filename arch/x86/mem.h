/*
 * mem.h - physical memory: the boot memory map and a page allocator.
 */
#ifndef NBPROF_ARCH_X86_MEM_H
#define NBPROF_ARCH_X86_MEM_H

#include <stddef.h>
#include <stdint.h>

#include "arch/x86/bootinfo.h"

#define MEM_PAGE_SIZE	4096u

/*
 * The addresses static Linux executables are linked at (GNU ld's default
 * text start: 0x400000 for x86-64, 0x8048000 for i386), kept out of the
 * allocator from boot so that such a program's image can lie at the
 * addresses it was linked for (workload/program.h): 4 MiB from
 * MEM_FIXED_LO of the kernel's own mode (below 0x800000, where OVMF keeps
 * ACPI memory). Never handed out, whether or not RAM backs it;
 * mem_fixed_check() says whether it is usable.
 */
#define MEM_FIXED_LO_64		UINT64_C(0x400000)
#define MEM_FIXED_LO_32		UINT64_C(0x8000000)
#define MEM_FIXED_SIZE		(UINT64_C(4) << 20)
#define MEM_FIXED_LO		(UINTPTR_MAX > 0xffffffffu ? MEM_FIXED_LO_64 : MEM_FIXED_LO_32)

struct mem_summary {
	uint64_t total;			/* RAM: every type but MMIO and reserved */
	uint64_t conventional;		/* free at boot (EfiConventionalMemory) */
	uint64_t boot_services;		/* firmware boot-services memory */
	uint64_t boot_reclaimed;	/* ... of it handed to the allocator */
	uint64_t kernel;		/* image + boot/ allocations */
	uint64_t acpi;			/* ACPI tables and NVS */
	uint64_t reserved;		/* runtime services, reserved, unusable */
	uint64_t mmio;
	uint64_t free;			/* what the allocator still has */
	uint64_t largest_free;		/* largest contiguous free run */
	uint64_t top;			/* end of the highest region of any type */
};

/* Take the map from boot/; the allocator starts with the free regions above 1 MiB. */
void mem_init(const struct bootinfo *bi);

/*
 * Hand boot-services memory to the allocator. Only after the kernel runs on
 * its own stack, GDT, IDT and page tables (QEMU notes P4).
 */
void mem_reclaim_boot(void);

/* n contiguous zeroed pages, 0 when none; freed with mem_free_pages. */
uint64_t mem_alloc_pages(size_t n);
uint64_t mem_alloc_page(void);
void mem_free_pages(uint64_t base, size_t n);

void mem_get_summary(struct mem_summary *s);

/*
 * Is [MEM_FIXED_LO, + MEM_FIXED_SIZE) free RAM that nothing else holds
 * (conventional memory, or boot-services memory once reclaimed)? 0, or -1
 * with the first conflict named in why.
 */
int mem_fixed_check(char *why, size_t n);
uint32_t mem_nregions(void);
const struct boot_region *mem_region(uint32_t i);

#endif
