/*
 * cpu.h - thin wrappers for x86 control registers, CPUID, TSC and
 * interrupt-flag instructions, and CPU identification (cpu.c).
 */
#ifndef NBPROF_ARCH_X86_CPU_H
#define NBPROF_ARCH_X86_CPU_H

#include <stdint.h>

#include "arch/x86/cpuid.h"
#include "arch/x86/regs.h"



static inline struct cpuid_regs cpuid_count(uint32_t leaf, uint32_t subleaf)
{
	struct cpuid_regs r;

	__asm__ volatile("cpuid"
			 : "=a"(r.eax), "=b"(r.ebx), "=c"(r.ecx), "=d"(r.edx)
			 : "a"(leaf), "c"(subleaf));
	return r;
}

static inline __attribute__((always_inline)) uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static inline uint64_t read_cr0(void)
{
	unsigned long v;	/* the register's width in either mode */

	__asm__ volatile("mov %%cr0, %0" : "=r"(v));
	return v;
}

static inline uint64_t read_cr2(void)
{
	unsigned long v;	/* the register's width in either mode */

	__asm__ volatile("mov %%cr2, %0" : "=r"(v));
	return v;
}

static inline uint64_t read_cr3(void)
{
	unsigned long v;	/* the register's width in either mode */

	__asm__ volatile("mov %%cr3, %0" : "=r"(v));
	return v;
}

static inline void write_cr3(uint64_t v)
{
	__asm__ volatile("mov %0, %%cr3" : : "r"((unsigned long)v) : "memory");
}

static inline uint64_t read_cr4(void)
{
	unsigned long v;	/* the register's width in either mode */

	__asm__ volatile("mov %%cr4, %0" : "=r"(v));
	return v;
}

static inline uint64_t read_rflags(void)
{
	unsigned long v;

	__asm__ volatile("pushf; pop %0" : "=r"(v));
	return v;
}

static inline void cpu_cli(void)
{
	__asm__ volatile("cli" : : : "memory");
}

static inline void cpu_sti(void)
{
	__asm__ volatile("sti" : : : "memory");
}

static inline void cpu_pause(void)
{
	__asm__ volatile("pause");
}

/* Execute CPUID for every leaf struct cpuid_raw records (arch/x86/cpuid.h). */
void cpu_read_cpuid(struct cpuid_raw *raw);

/* IA32_MISC_ENABLE through the #GP-safe path: 0 or MSR_BUS_EFAULT. */
int cpu_read_misc_enable(uint64_t *value);

/* CPUID.1:ECX[31]: a hypervisor runs us (the bit is 0 on every Intel processor). */
bool cpu_in_hypervisor(void);

/* Remember how the kernel was started (enum boot_method, bootinfo.h; a Multiboot
 * loader's name or "") for cpu_identify(). */
void cpu_set_boot_method(uint32_t method, const char *loader_name);

/* Decoded CPUID plus IA32_MISC_ENABLE (read safely), TSC frequency, APIC id, boot and mode. */
void cpu_identify(struct cpu_info *out);

#endif
