/*
 * ksyms.h - the kernel's embedded symbol table (text symbols only).
 *
 * tools/build/gensyms generates the table from the first link (see linker.ld and
 * the Makefile); entries hold link addresses (offsets from ImageBase),
 * sorted ascending. ksym_lookup() takes a runtime address. The generated
 * table holds no pointers - names are offsets into one string blob - so it
 * needs no load-time relocations (each would cost 24 bytes of .rela).
 */
#ifndef NBPROF_ARCH_X86_KSYMS_H
#define NBPROF_ARCH_X86_KSYMS_H

#include <stdint.h>

/* One symbol, as lookups and the recording's symbol checksum see it. */
struct ksym {
	uint64_t addr;		/* link address (offset from ImageBase) */
	const char *name;
};

/* One row of the generated table. */
struct ksym_entry {
	uint32_t addr;		/* link address (offset from ImageBase) */
	uint32_t name;		/* offset of the NUL-terminated name in ksym_names */
};

extern const struct ksym_entry ksym_table[];
extern const char ksym_names[];
extern const uint32_t ksym_count;
extern const uint64_t ksym_text_start, ksym_text_end;

/* Row i (< ksym_count) of the table. */
struct ksym ksym_get(uint32_t i);

/*
 * Name of the function containing runtime address addr, and addr's offset
 * into it; NULL when addr is outside the kernel's text.
 */
const char *ksym_lookup(uint64_t addr, uint64_t *offset);

/*
 * Lookup for addresses outside the kernel's text (user programs, which
 * prof/ loads): ksym_lookup() asks it when the kernel has no symbol.
 */
typedef const char *ksym_fallback_fn(uint64_t addr, uint64_t *offset);
void ksym_set_fallback(ksym_fallback_fn *fn);

/* Runtime address of the kernel image (ImageBase). */
uint64_t ksym_image_base(void);

#endif
