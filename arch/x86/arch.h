/*
 * arch.h - the architecture entry points the rest of the kernel uses.
 *
 * arch/x86 is the only code with inline asm, port I/O or RDMSR. The other
 * headers of this directory describe one device each; this one collects
 * the few calls boot/ and kmain need to bring the machine up.
 */
#ifndef NBPROF_ARCH_X86_ARCH_H
#define NBPROF_ARCH_X86_ARCH_H

#include <stdint.h>

#include "arch/x86/mode.h"

/*
 * Disable interrupts, switch RSP to top (16-byte aligned) and call fn(arg).
 * Used once, right after ExitBootServices, to leave the firmware's stack.
 */
void arch_call_on_stack(uint64_t top, void (*fn)(void *), void *arg) __attribute__((noreturn));

/* Stop this CPU for good (interrupts off, hlt loop). */
void arch_halt(void) __attribute__((noreturn));

/* Deliberate faults for the shell's `fault` command (each raises exactly one exception). */
void arch_raise_de(void);
void arch_raise_ud(void);
void arch_raise_gp(void);
void arch_raise_pf(void);
void arch_raise_bp(void);

/* Address arch_raise_pf() touches: canonical, never mapped. */
#define ARCH_UNMAPPED_ADDR	UINT64_C(MODE_UNMAPPED_ADDR)	/* mode.h */

#endif
