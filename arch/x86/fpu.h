/*
 * fpu.h - x87, MMX and SSE/SSE2 made usable on a logical processor, for
 * the workloads that execute them (the `fpmix` workload: the execution-
 * tagging events count its x87/SIMD µops). The kernel's own C code is
 * built with -mgeneral-regs-only and never touches this state, so no
 * interrupt handler saves it.
 */
#ifndef NBPROF_ARCH_X86_FPU_H
#define NBPROF_ARCH_X86_FPU_H

#include <stdbool.h>
#include <stdint.h>

/*
 * On the calling LP: CR0.EM and CR0.TS clear, CR0.MP and CR0.NE set, and
 * with FXSR, SSE and SSE2 present CR4.OSFXSR and CR4.OSXMMEXCPT set; then
 * FNINIT. Call once on every LP before it runs a workload.
 */
void fpu_init_lp(void);

/* Did fpu_init_lp() on the calling LP find and enable x87, MMX, SSE and SSE2? */
bool fpu_simd_ready(void);

/*
 * FXSAVE the calling LP's x87/MMX/SSE state into area (512 bytes, 16-byte
 * aligned: SDM Vol. 2A FXSAVE, #GP otherwise); the state is left as it was.
 */
static inline void fpu_fxsave(void *area)
{
	__asm__ volatile("fxsave %0" : "=m"(*(uint8_t (*)[512])area));
}

#endif
