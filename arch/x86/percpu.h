/*
 * percpu.h - per-logical-processor data.
 *
 * One struct percpu per LP the kernel knows, indexed by LP number (LP0 is
 * the BSP, which runs the shell). Each LP finds its own entry through its
 * GS base (IA32_GS_BASE, set by arch/x86/smp.c right after the LP loads its
 * GDT; a GS selector load zeroes the base, so nothing after that may load
 * GS). The first member points at the entry itself, so `mov %gs:0` yields
 * it in one load.
 *
 * Fields marked "idt.c" hold the guarded-run state of that LP, so that an
 * exception on one LP unwinds only that LP's guarded run. Fields marked
 * "smp.c" are the work-dispatch mailbox: the owner LP writes work_fn and
 * work_arg, then publishes them by setting state to LP_RUNNING with a
 * release store; the target LP reads them after an acquire load.
 */
#ifndef NBPROF_ARCH_X86_PERCPU_H
#define NBPROF_ARCH_X86_PERCPU_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/topology.h"

#define PERCPU_MAX	TOPO_MAX_LPS
#define PERCPU_NIST	3		/* NMI, #DF, #MC: gdt.h IST_NMI..IST_MC */

struct percpu {
	struct percpu *self;		/* must stay first: %gs:0 */
	unsigned index;
	uint32_t apic_id;
	struct topo_id topo;
	volatile uint32_t state;	/* enum lp_state */

	/* idt.c: guarded runs and exception reports on this LP */
	void *guard_top;		/* innermost struct guard_ctx */
	int guard_vector;		/* vector that ended the last guarded run, or -1 */
	int exception_depth;

	/* smp.c: dispatched work */
	void (*work_fn)(void *arg);
	void *work_arg;
	volatile int work_vector;	/* -1, or the vector of the exception that ended the last work */
	volatile uint64_t calls, faults, wakeups;

	/* stacks (tops, 16-byte aligned); 0 for LP0, which keeps boot/'s */
	uint64_t stack_top;
	uint64_t ist_top[PERCPU_NIST];
	uint64_t start_tsc;		/* TSC when the LP reported alive after SIPI */

	/*
	 * arch/x86/64/workloads.S and user.c: this LP's workload runner, so that
	 * both LPs can run a workload at once (offsets in arch/x86/user.h).
	 */
	uint64_t wl_ring0_rsp;		/* wl_call_ring0's frame, for an aborted ring-0 run */
	uint64_t user_kernel_rsp;	/* kernel RSP saved by user_call() for user_return() */
	uint64_t gate_open, gate_shut;	/* the counting gate's functions (user_set_gate) */
	uint64_t gate_ctx;		/* and their argument */
	uint64_t gate_mark;		/* a program's marker, fast (user_set_gate) */
	bool user_in_run;		/* a ring-3 run is open on this LP */
	uint64_t syscall_user_rsp;	/* x86-64 SYSCALL entry (64/entry.S): the user RSP it saved */
	uint64_t exit_fn;		/* idt_exit_call: run at the end of this interrupt's exit */
};

/* Append an LP; NULL when PERCPU_MAX are known. LP0 must be added first. */
struct percpu *percpu_add(uint32_t apic_id, const struct topo_id *id);

unsigned percpu_count(void);
struct percpu *percpu_get(unsigned index);	/* NULL past the end */

/* LP0's entry, valid (for idt.c's guard state) even before percpu_add. */
struct percpu *percpu_boot(void);

/*
 * This LP's entry: GS:0 holds a pointer to it once smp_init_bsp() has set
 * GS (arch/x86/smp.c), percpu_boot() before. Inline: the PMI handler asks
 * several times per interrupt.
 */
extern bool percpu_gs_ready;

static inline __attribute__((always_inline)) struct percpu *percpu_this(void)
{
	struct percpu *p;

	if (!percpu_gs_ready)
		return percpu_boot();
	__asm__ volatile("mov %%gs:0, %0" : "=r"(p));	/* either mode: mode.h */
	return p;
}

#endif
