/*
 * ksyms.h - the kernel's embedded symbol table (text symbols only).
 *
 * tools/gensyms generates the table from the first link (see linker.ld and
 * the Makefile); entries hold link addresses (offsets from ImageBase),
 * sorted ascending. ksym_lookup() takes a runtime address.
 */
#ifndef NBPROF_ARCH_X86_KSYMS_H
#define NBPROF_ARCH_X86_KSYMS_H

#include <stdint.h>

struct ksym {
	uint64_t addr;		/* link address (offset from ImageBase) */
	const char *name;
};

extern const struct ksym ksym_table[];
extern const uint32_t ksym_count;
extern const uint64_t ksym_text_start, ksym_text_end;

/*
 * Name of the function containing runtime address addr, and addr's offset
 * into it; NULL when addr is outside the kernel's text.
 */
const char *ksym_lookup(uint64_t addr, uint64_t *offset);

/* Runtime address of the kernel image (ImageBase). */
uint64_t ksym_image_base(void);

#endif
