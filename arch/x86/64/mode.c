/*
 * arch/x86/64/mode.c - what the x86-64 kernel does its own way (mode.h; the ia32
 * twin is arch/x86/32/mode.c).
 */
#include <stdint.h>

#include "arch/x86/arch.h"
#include "arch/x86/mode.h"
#include "arch/x86/msr.h"
#include "arch/x86/percpu.h"
#include "arch/x86/regs.h"

void mode_set_percpu_base(struct percpu *pc)
{
	msr_write(MSR_IA32_GS_BASE, (uint64_t)(uintptr_t)pc);
}

int mode_user_tls(uint64_t base, uint32_t limit, uint32_t flags, uint32_t *entry)
{
	(void)limit, (void)flags, (void)entry;
	if (base >= UINT64_C(0x0000800000000000))
		return -1;	/* not canonical: WRMSR would #GP (SDM Vol. 3A 3.2.4) */
	msr_write(MSR_IA32_FS_BASE, base);
	return 0;
}

void mode_user_tls_clear(void)
{
	msr_write(MSR_IA32_FS_BASE, 0);
}

/* The BSP's EFER (LME, NXE) without LMA, which the processor sets itself. */
uint64_t mode_ap_efer(void)
{
	return msr_read(MSR_IA32_EFER) & ~EFER_LMA;
}

void arch_raise_gp(void)
{
	/* A non-canonical address: #GP(0), not #PF (SDM Vol. 3A 3.3.7.1). */
	__asm__ volatile("movabsq $0x8000000000000000, %%rcx\n\t"
			 "movq (%%rcx), %%rax"
			 : : : "rax", "rcx", "memory");
}
