/*
 * idt.h - interrupt descriptor table, trap frames, guarded runs.
 */
#ifndef NBPROF_ARCH_X86_IDT_H
#define NBPROF_ARCH_X86_IDT_H

#include <stdbool.h>
#include <stdint.h>
#include "arch/x86/percpu.h"

/* Saved by entry.S (isr_common) in this order; the CPU pushed rip..ss. */
struct trap_frame {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t vector, error;
	uint64_t rip, cs, rflags, rsp, ss;
};

/* Exception vectors (SDM Vol. 3A Table 6-1) the kernel names in code. */
enum x86_vector {
	VEC_DE = 0,
	VEC_DB = 1,
	VEC_NMI = 2,
	VEC_BP = 3,
	VEC_UD = 6,
	VEC_DF = 8,
	VEC_GP = 13,
	VEC_PF = 14,
	VEC_MC = 18,
	VEC_FIRST_EXTERNAL = 32,
};

typedef void (*trap_handler_fn)(struct trap_frame *f);

/* Build and load the IDT (all 256 vectors). Needs gdt_init() first. */
void idt_init(void);

/* Load the IDT idt_init() built on this CPU (the other logical processors share it). */
void idt_load(void);

/*
 * Route a vector to fn. For an exception vector (< 32, e.g. #DB for single
 * stepping, NMI for PMIs) fn replaces the report and the frame resumes when
 * fn returns; for vectors >= 32 the dispatcher sends the LAPIC EOI after fn.
 * An NMI's fn may change the frame's RIP and RFLAGS, not its general
 * registers: the 32-bit kernel does not write those back after an NMI
 * (arch/x86/32/entry.S T_VEC_NMI).
 */
void idt_set_handler(uint8_t vector, trap_handler_fn fn);
/*
 * From an interrupt or exception handler: call fn as the very last thing
 * of this interrupt's exit on this LP, after every register but the
 * caller-saved ones is restored, right before those and the IRET (the
 * entry's isr_common; a nested interrupt's exit runs it if it comes first).
 * One per LP; fn must be short and must not block. A handler that is
 * counted by what it retires after an action - the PMI handler after a
 * counter's restart - does the action here.
 */
void idt_exit_call(void (*fn)(void));
/* idt_exit_call for the LP whose percpu block pc is (the caller's), inline. */
extern uint32_t isr_exit_pending __attribute__((visibility("hidden")));
static inline void idt_exit_call_on(struct percpu *pc, void (*fn)(void))
{
	if (!pc->exit_fn)
		__atomic_fetch_add(&isr_exit_pending, 1, __ATOMIC_RELAXED);
	pc->exit_fn = (uintptr_t)fn;
}
/* The same, if it is still pending on this LP, now (a handler run outside an interrupt). */
void idt_exit_call_now(void);

/* The address of vector's entry stub (where its gate points unless idt_gate_set moved it). */
uint64_t idt_stub(unsigned vector);

/* "#GP", "#PF", ... or "INT" for vectors >= 32. */
const char *idt_vector_mnemonic(unsigned vector);

/* Interrupts seen on vectors nobody handles (counted, then ignored). */
uint64_t idt_unhandled_count(void);

#define ARCH_GUARD_FAULTED	(-4096)

/*
 * Run fn(arg). If an exception hits inside it, the report is printed and
 * arch_run_guarded returns ARCH_GUARD_FAULTED (callee-saved registers, stack
 * and RFLAGS restored); otherwise fn's return value. Nestable. An exception
 * outside any guarded run halts the machine with the report. NMI and #MC are
 * never unwound.
 */
int arch_run_guarded(int (*fn)(void *), void *arg);

/*
 * Leave the calling LP's innermost guarded run at once: its
 * arch_run_guarded returns ret, the frames in between abandoned as after a
 * fault. For a trap handler that has seen what it was waiting for
 * (arch/x86/step.c measures an interrupt's entry path this way).
 */
void arch_guard_leave(int ret) __attribute__((noreturn));

/* Vector of the last exception that ended a guarded run (or -1). */
int arch_last_guard_vector(void);

/*
 * Run fn(arg) outside every guarded run of this LP: an exception in it is
 * reported and then halts (LP0: the kernel) as any exception outside a
 * command does. Only `fault KIND --halt` uses it, to show that path.
 */
int arch_run_unguarded(int (*fn)(void *), void *arg);

#endif
