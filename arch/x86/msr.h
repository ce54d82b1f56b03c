/*
 * msr.h - model-specific registers with #GP recovery, and RDPMC.
 *
 * The *_safe calls never fault: a #GP (or #UD for RDPMC) is caught through
 * the exception fixup table and turned into MSR_BUS_EFAULT
 * (pmu/msr_bus.h). msr_hw_bus is the hardware implementation of the PMU's
 * register seam.
 */
#ifndef NBPROF_ARCH_X86_MSR_H
#define NBPROF_ARCH_X86_MSR_H

#include <stdint.h>

#include "arch/x86/regs.h"	/* the architectural MSRs' numbers */
#include "pmu/msr_bus.h"
#include "pmu/p4_regs.h"	/* MSR_IA32_MISC_ENABLE and its PMU bits */

/* 0, or MSR_BUS_EFAULT when the instruction faulted (*value unchanged then). */
int msr_read_safe(uint32_t msr, uint64_t *value);
int msr_write_safe(uint32_t msr, uint64_t value);
int rdpmc_safe(uint32_t index, uint64_t *value);

/* Plain RDMSR/WRMSR for registers that exist on every supported CPU. */
uint64_t msr_read(uint32_t msr);
void msr_write(uint32_t msr, uint64_t value);

extern struct msr_bus msr_hw_bus;

#endif
