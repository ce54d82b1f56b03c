/*
 * fpu.c - enable x87, MMX and SSE/SSE2 on a logical processor (fpu.h).
 *
 * SDM Vol. 3A 13.1.4 "Initialization of the SSE Extensions" (12.1.3 in the
 * 2008 editions) and its Table 13-1: set CR4.OSFXSR (bit 9) and
 * CR4.OSXMMEXCPT (bit 10), clear CR0.EM (bit 2, else every SSE instruction
 * raises #UD) and set CR0.MP (bit 1, required with SSE and for MMX); CR0.TS
 * (bit 3) clear, else the first x87/MMX/SSE instruction raises #NM. Setting
 * OSFXSR without CPUID.1:EDX.FXSR[24] raises #GP (13.1.3), so CR4 is
 * changed only when FXSR, SSE[25] and SSE2[26] are all reported. CR0.NE
 * (bit 5): x87 errors as #MF, not through the external FERR# pin (SDM
 * 9.2.1). FNINIT leaves the x87 unit with every exception masked (SDM
 * Vol. 1 8.1.5), so the workloads' arithmetic cannot fault.
 *
 * The sibling gets the BSP's CR0 and CR4 from the start-up trampoline, but
 * calls fpu_init_lp() itself too: each LP's state is its own.
 */
#include "arch/x86/cpu.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/fpu.h"
#include "arch/x86/percpu.h"

#define FPU_NEEDS	(CPUID_1_EDX_FPU | CPUID_1_EDX_MMX | CPUID_1_EDX_FXSR | \
			 CPUID_1_EDX_SSE | CPUID_1_EDX_SSE2)

static bool ready[PERCPU_MAX];

static void fpu_write_cr0(unsigned long v)
{
	__asm__ volatile("mov %0, %%cr0" : : "r"(v) : "memory");
}

static void fpu_write_cr4(unsigned long v)
{
	__asm__ volatile("mov %0, %%cr4" : : "r"(v) : "memory");
}

void fpu_init_lp(void)
{
	unsigned long cr0 = (unsigned long)read_cr0();
	bool simd = (cpuid_count(1, 0).edx & FPU_NEEDS) == FPU_NEEDS;

	fpu_write_cr0((cr0 | CR0_MP | CR0_NE) & ~(unsigned long)(CR0_EM | CR0_TS));
	if (simd)
		fpu_write_cr4((unsigned long)read_cr4() | CR4_OSFXSR | CR4_OSXMMEXCPT);
	__asm__ volatile("fninit" : : : "memory");
	ready[percpu_this()->index % PERCPU_MAX] = simd;
}

bool fpu_simd_ready(void)
{
	return ready[percpu_this()->index % PERCPU_MAX];
}
