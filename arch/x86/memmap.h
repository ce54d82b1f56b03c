/*
 * memmap.h - the firmware's memory map made safe to use, and the page
 * allocator's list of free ranges.
 *
 * Firmware maps are not trusted: BIOS E820 maps of the era report
 * overlapping entries, and a RAM entry may cover an ACPI NVS or reserved
 * one. memmap_normalize turns any list of regions into one sorted by base,
 * without overlaps, where a byte claimed by two regions takes the type the
 * kernel may do less with (the higher enum boot_mem_type: free RAM is the
 * lowest, reserved the highest), adjacent regions of one type are merged
 * and free RAM is cut to whole pages. The free-range list hands a page
 * out once: a range that overlaps one already free is refused.
 *
 * Portable (host-tested, fuzzed); boot/ and arch/x86/mem.c use it.
 */
#ifndef NBPROF_ARCH_X86_MEMMAP_H
#define NBPROF_ARCH_X86_MEMMAP_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/bootinfo.h"

#define MEMMAP_PAGE	4096u

/*
 * Normalise in[0..n) into out (at most max regions; what does not fit is
 * left out, which only loses memory). Returns the number of regions in out.
 */
uint32_t memmap_normalize(const struct boot_region *in, uint32_t n, struct boot_region *out,
			  uint32_t max);

/*
 * The Multiboot (0.6.96, 3.3) memory map: entries of a u32 size (of the
 * rest of the entry, at least 20), u64 base, u64 length, u32 type. Reads
 * map[0..len) into out as regions (type 1 = free RAM, 3 = ACPI, 4 = NVS,
 * anything else reserved) and stops at the first entry that is too small
 * or runs past the end. When out is full, RAM is what is left out: a later
 * non-RAM entry takes the place of a RAM one (a RAM entry kept over a
 * reserved one left out would hand reserved memory out), so an overflow
 * only loses memory. Returns the number of regions; *entries = entries read.
 */
#define MB_MMAP_ENTRY_MIN	20
uint32_t memmap_multiboot(const uint8_t *map, uint32_t len, struct boot_region *out,
			  uint32_t max, uint32_t *entries);

/* --- the sibling's start-up page (legacy BIOS) ------------------------------------- */

/*
 * The BIOS data area's two words about the top of conventional memory: the
 * EBDA's segment at 40EH and the base memory size in KiB at 413H (what
 * INT 12H returns). The BIOS puts its EBDA at the top of conventional memory
 * and usually lowers 413H below it, but E820 need not report either: Linux's
 * arch/x86/kernel/ebda.c (reserve_bios_regions) keeps everything from
 * min(413H, EBDA) to 1 MiB away from its own use because Dell BIOSes leave
 * the EBDA out of 413H, and a PXE stack left resident lowers 413H only.
 */
struct bda_low {
	uint16_t ebda_seg;	/* 40EH: segment of the EBDA */
	uint16_t base_kib;	/* 413H: KiB of conventional memory */
};

#define MEMMAP_LOW_LIMIT	0x9f000u	/* 636 KiB: Linux's absolute maximum (ebda.c) */
#define MEMMAP_BDA_MIN		0x20000u	/* 128 KiB: "less than this is insane" (ebda.c) */

/*
 * The page for the sibling's start-up code: the highest page that is free
 * RAM in regions[0..n) and lies below MEMMAP_LOW_LIMIT, below 413H's size
 * and below the EBDA, and is not page 0 (the real-mode IVT). A BDA value
 * under MEMMAP_BDA_MIN or above the limit is not believed (ebda.c's rule), so
 * garbage leaves the E820 rule alone. bda may be NULL (no BDA: UEFI).
 * Returns 0 when there is no such page.
 */
uint64_t memmap_low_page(const struct boot_region *regions, uint32_t n, const struct bda_low *bda);

/* --- the free-range list ------------------------------------------------------------ */

#define MEM_MAX_FREE	512

struct mem_range {
	uint64_t base, size;
};

struct mem_free {
	struct mem_range r[MEM_MAX_FREE];	/* sorted by base, coalesced, disjoint */
	uint32_t n;
	uint64_t lo, hi;			/* only [lo, hi) is ever handed out */
};

/*
 * Add [base, base + size), clipped to [lo, hi) and to whole pages; false
 * when it overlaps a free range (a second free: nothing is added) or the
 * list is full.
 */
bool memfree_add(struct mem_free *f, uint64_t base, uint64_t size);

/* Take bytes (a multiple of the page) first-fit; 0 when no range holds them. */
uint64_t memfree_take(struct mem_free *f, uint64_t bytes);

#endif
