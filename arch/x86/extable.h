/*
 * extable.h - exception fixup table.
 *
 * An instruction that may fault on purpose (RDMSR of a missing MSR, RDPMC
 * with a bad index) is tagged with EXTABLE_ENTRY(insn, fixup): when insn
 * raises #GP or #UD, the handler resumes at fixup instead of reporting.
 * Other vectors (an NMI or a #DB trap whose saved RIP is insn) run their
 * handlers as anywhere else and return to insn (arch/x86/idt.c).
 * Entries are two PC-relative 32-bit offsets, so the table needs no load-time
 * relocation; linker.ld gathers .ex_table between __ex_table_start/_end.
 */
#ifndef NBPROF_ARCH_X86_EXTABLE_H
#define NBPROF_ARCH_X86_EXTABLE_H

#include <stdint.h>

#define EXTABLE_ENTRY(insn, fixup)			\
	".pushsection .ex_table, \"aw\"\n\t"		\
	".balign 4\n\t"					\
	".long (" #insn ") - .\n\t"			\
	".long (" #fixup ") - .\n\t"			\
	".popsection\n\t"

/* Recovery address for a fault at rip, or 0 when rip is not in the table. */
uint64_t extable_fixup(uint64_t rip);

#endif
