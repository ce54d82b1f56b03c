/*
 * gdt.h - the kernel's GDT and TSS.
 *
 * Selector map (SDM Vol. 3A 3.4.5; the user code/data order suits SYSRET,
 * which takes SS = STAR[63:48] + 8 and CS = STAR[63:48] + 16). The ia32
 * kernel (arch/x86/32/gdt.c) uses the same selectors with 32-bit code segments, an
 * 8-byte TSS descriptor and two more entries: 0x30, whose base is the LP's
 * struct percpu (its GS), and 0x38, the TLS segment an i386 Linux program
 * asks for with set_thread_area and loads into its own GS:
 *
 *	0x00  null
 *	0x08  ring-0 code, 64-bit
 *	0x10  ring-0 data
 *	0x18  ring-3 data            (selector 0x1b with RPL 3)
 *	0x20  ring-3 code, 64-bit    (selector 0x23 with RPL 3)
 *	0x28  TSS (16-byte descriptor)
 */
#ifndef NBPROF_ARCH_X86_GDT_H
#define NBPROF_ARCH_X86_GDT_H

#define GDT_KERNEL_CS	0x08
#define GDT_KERNEL_DS	0x10
#define GDT_USER_DS	0x18
#define GDT_USER_CS	0x20
#define GDT_TSS		0x28
#define GDT_PERCPU	0x30	/* ia32 only */
#define GDT_USER_TLS	0x38	/* ia32 only */
#define GDT_RPL3	3

/*
 * Flat segment descriptors, base 0 and limit 4 GiB (SDM Vol. 3A 3.4.5,
 * Figure 3-8): present, the DPL, code (execute/read) or data (read/write),
 * and L for 64-bit code or D for 32-bit code. Plain numbers: the start-up
 * trampolines' GDTs (assembly) hold the same descriptors.
 */
#define DESC_KERNEL_CODE64	0x00af9a000000ffff	/* P, DPL0, code exec/read, L */
#define DESC_KERNEL_CODE32	0x00cf9a000000ffff	/* P, DPL0, code exec/read, D */
#define DESC_KERNEL_DATA	0x00cf92000000ffff	/* P, DPL0, data read/write */
#define DESC_USER_CODE64	0x00affa000000ffff	/* P, DPL3, code exec/read, L */
#define DESC_USER_CODE32	0x00cffa000000ffff	/* P, DPL3, code exec/read, D */
#define DESC_USER_DATA		0x00cff2000000ffff	/* P, DPL3, data read/write */
/* The TSS descriptor's type byte: present, type 9 (32-bit TSS; in IA-32e mode the 64-bit TSS). */
#define TSS_TYPE_AVAILABLE	0x89

/*
 * IDT gates (SDM Vol. 3A 6.11, 6.14.1): type byte of an interrupt gate
 * (present, DPL 0, type 0xE: 32-bit, or 64-bit in IA-32e mode), the DPL
 * bits that let `int n` reach it from ring 3, and the IDT's size.
 */
#define GATE_INTERRUPT		0x8e
#define GATE_DPL3		0x60
#define IDT_NVECTORS		256

#ifndef __ASSEMBLY__
#include <stdbool.h>
#include <stdint.h>

/* IST slots (1-based, as the IDT gate's IST field counts them). */
#define IST_NMI		1
#define IST_DF		2
#define IST_MC		3

/* Load the GDT and TSS; ist_top[i] is the top of the stack for IST slot i + 1. */
void gdt_init(const uint64_t ist_top[3]);

/*
 * The same for logical processor lp (arch/x86/percpu.h), with its own GDT and
 * TSS; gdt_init() is gdt_init_lp(0, ...). -1 when lp is out of range.
 * Loading the GDT zeroes GS, and with it the GS base (percpu.h).
 */
int gdt_init_lp(unsigned lp, const uint64_t ist_top[3]);

/*
 * The IDT's gates, in the mode's format (SDM Vol. 3A 6.11, 6.14.1): vector
 * goes to handler through an interrupt gate with the kernel's CS, on IST
 * slot ist (0: none; the ia32 kernel has no IST and ignores it), DPL 3 when
 * user (reachable by `int n` at CPL 3), else DPL 0. idt_gate_load() loads
 * the one IDT on this LP.
 */
void idt_gate_set(unsigned vector, uint64_t handler, unsigned ist, bool user);
void idt_gate_user(unsigned vector);
void idt_gate_load(void);

/*
 * Stack this LP's CPU switches to on an interrupt from ring 3. It starts as 0:
 * code that enters ring 3 must first point it at a free part of its own
 * kernel stack (below its current RSP), or the first interrupt from ring 3
 * faults.
 */
void tss_set_rsp0(uint64_t rsp0);

#endif /* __ASSEMBLY__ */
#endif
