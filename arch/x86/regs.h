/*
 * regs.h - architectural register bits the kernel uses, each defined once
 * (SDM Vol. 3A 2.3 "System flags in the EFLAGS register"). PMU registers,
 * IA32_MISC_ENABLE included, are pmu/p4_regs.h's; local APIC registers are
 * lapic.h's.
 */
#ifndef NBPROF_ARCH_X86_REGS_H
#define NBPROF_ARCH_X86_REGS_H

#include <stdint.h>

#define RFLAGS_RESERVED1	(UINT64_C(1) << 1)	/* always 1 */
#define RFLAGS_TF		(UINT64_C(1) << 8)	/* trap flag: single-step */
#define RFLAGS_IF		(UINT64_C(1) << 9)	/* interrupts enabled */
#define RFLAGS_IOPL		(UINT64_C(3) << 12)
#define RFLAGS_RF		(UINT64_C(1) << 16)	/* resume: suppress one instruction breakpoint */

#endif
