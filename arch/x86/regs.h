/*
 * regs.h - architectural register bits and MSR numbers the kernel uses, each
 * defined once: EFLAGS (SDM Vol. 3A 2.3 "System flags in the EFLAGS
 * register"), CR0 and CR4 (Vol. 3A 2.5 "Control registers"), IA32_EFER
 * (Vol. 3A 2.2.1), the FS and GS base MSRs (Vol. 3A 3.2.4) and
 * IA32_APIC_BASE (Vol. 3A 10.4.4). PMU registers, IA32_MISC_ENABLE
 * included, are pmu/p4_regs.h's; local APIC registers and ICR bits are
 * lapic.h's; page-table entry bits paging.h's; descriptors and gates gdt.h's.
 *
 * The control-register and MSR constants are plain numbers, so assembly
 * (the start-up trampolines) includes this file too.
 */
#ifndef NBPROF_ARCH_X86_REGS_H
#define NBPROF_ARCH_X86_REGS_H

#define CR0_PE			0x00000001	/* protection enable */
#define CR0_MP			0x00000002	/* monitor coprocessor */
#define CR0_EM			0x00000004	/* x87 emulation: #NM on every FPU instruction */
#define CR0_TS			0x00000008	/* task switched: #NM on the next FPU/MMX/SSE use */
#define CR0_NE			0x00000020	/* x87 errors as #MF */
#define CR0_PG			0x80000000	/* paging */

#define CR4_PAE			0x00000020
#define CR4_OSFXSR		0x00000200	/* FXSAVE/FXRSTOR and SSE enabled */
#define CR4_OSXMMEXCPT		0x00000400	/* SIMD floating-point exceptions as #XM */

#define MSR_IA32_APIC_BASE	0x1b
#define MSR_IA32_EFER		0xc0000080
#define EFER_LMA		0x00000400	/* read-only status: never written back */
#define EFER_SCE		0x00000001	/* SYSCALL/SYSRET enable */
/* SYSCALL's MSRs (SDM Vol. 3A 5.8.8): selectors, 64-bit entry, RFLAGS mask */
#define MSR_IA32_STAR		0xc0000081
#define MSR_IA32_LSTAR		0xc0000082
#define MSR_IA32_FMASK		0xc0000084
#define MSR_IA32_FS_BASE	0xc0000100
#define MSR_IA32_GS_BASE	0xc0000101

#ifndef __ASSEMBLY__
#include <stdint.h>

#define RFLAGS_RESERVED1	(UINT64_C(1) << 1)	/* always 1 */
#define RFLAGS_TF		(UINT64_C(1) << 8)	/* trap flag: single-step */
#define RFLAGS_IF		(UINT64_C(1) << 9)	/* interrupts enabled */
#define RFLAGS_DF		(UINT64_C(1) << 10)	/* direction flag (SDM Vol. 1 3.4.3.2) */
#define RFLAGS_IOPL		(UINT64_C(3) << 12)
#define RFLAGS_NT		(UINT64_C(1) << 14)	/* nested task */
#define RFLAGS_RF		(UINT64_C(1) << 16)	/* resume: suppress one instruction breakpoint */
#define RFLAGS_AC		(UINT64_C(1) << 18)	/* alignment check */
#endif

#endif
