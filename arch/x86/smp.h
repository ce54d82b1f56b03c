/*
 * smp.h - start the other logical processors and run work on them.
 *
 * LP0 (the BSP) runs the shell. Every other LP the kernel finds (ACPI MADT,
 * else the MP table, else CPUID: arch/x86/topology.h) is started with
 * INIT-SIPI-SIPI and then
 * sits in a `sti; hlt` loop until smp_call() hands it a function and wakes
 * it with a fixed IPI on SMP_WAKE_VECTOR. The function runs guarded on that
 * LP, with interrupts disabled (as shell commands do on LP0): an exception
 * inside it is reported (naming the LP), ends only that run, and the LP
 * goes back to idle. LP0 is never disturbed by it.
 *
 * smp_call/smp_wait are meant to be used from one LP at a time (the shell's
 * LP0); a target runs one function at a time.
 */
#ifndef NBPROF_ARCH_X86_SMP_H
#define NBPROF_ARCH_X86_SMP_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/bootinfo.h"
#include "arch/x86/percpu.h"

/* Fixed IPI that wakes an idle LP (local APIC sources 240-254, idt.c's map). */
#define SMP_WAKE_VECTOR		0xf2

enum smp_error {
	SMP_ENOLP = -1,		/* no such LP, or it is not started (offline, dead) */
	SMP_EBUSY = -2,		/* the LP is still running earlier work */
	SMP_ESELF = -3,		/* the calling LP itself: run the function directly */
	SMP_EFAULT = -4,	/* smp_wait: an exception ended the work (smp_fault_vector) */
	SMP_ETIMEDOUT = -5,	/* smp_wait_us: still running */
};

/*
 * LP0's per-CPU entry and GS base. Right after gdt_init() (which zeroes the
 * GS base) and before anything else that asks percpu_this().
 */
void smp_init_bsp(void);

/*
 * Find the other LPs, start them one by one and check each runs work and
 * wakes on an IPI; one boot-log line per LP. Needs lapic_init and
 * timer_calibrate. Registers the LP list for the shell (topo_set_lp_ops).
 * Returns the number of LPs running (1 = LP0 alone).
 */
unsigned smp_start(const struct bootinfo *bi);

unsigned smp_count(void);			/* LPs known, started or not */
const struct percpu *smp_lp(unsigned index);	/* NULL past the end */
unsigned smp_this_lp(void);

/* Start fn(arg) on LP lp and return at once: 0 or enum smp_error. */
int smp_call(unsigned lp, void (*fn)(void *arg), void *arg);
bool smp_is_busy(unsigned lp);

/* Wait until LP lp is idle: 0, SMP_EFAULT, or SMP_ENOLP (no such LP / it died). */
int smp_wait(unsigned lp);
/* The same with a time limit: SMP_ETIMEDOUT when the work still runs. */
int smp_wait_us(unsigned lp, uint64_t us);

/* Vector of the exception that ended LP lp's last work, or -1. */
int smp_fault_vector(unsigned lp);

#endif
