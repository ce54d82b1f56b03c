/*
 * step.h - the single-step engine: one #DB per retired workload instruction.
 *
 * See step.c for what is stepped, how instructions are attributed and what
 * the cycles of a step mean. The engine keeps one state per logical
 * processor: each LP steps its own workload.
 */
#ifndef NBPROF_ARCH_X86_STEP_H
#define NBPROF_ARCH_X86_STEP_H

/*
 * entry.S's exit-stamp protocol: a handler that sets its frame's vector
 * slot to TRAP_EXIT_STAMP and the error-code slot to the address of a
 * uint64_t gets the TSC read right before the IRETQ stored there. (No
 * vector is 256 or more.) The #DB path also hands the handler the TSC read
 * first thing on entry, in the error-code slot.
 */
#define TRAP_EXIT_STAMP		0x100

#ifndef __ASSEMBLY__
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpu.h"
#include "arch/x86/hooks.h"
#include "arch/x86/idt.h"
#include "arch/x86/regs.h"
#include "pmu/model/p4_assist.h"

#define STEP_POLL_INTERVAL	65536	/* steps between Ctrl-C polls */
#define STEP_CAL_NOPS		64	/* stepped (and timed) nops of the calibration */

struct step_run {
	uint64_t entry;			/* the workload's first instruction */
	uint64_t stop_rip;		/* arriving here (the return address) ends stepping */
	uint64_t text_start, text_end;	/* workload code: only these bytes are decoded */
	uint8_t lp;
	const struct workload_hooks *h;	/* may be NULL */
	struct step_counts *counts;	/* stepping counts are added here */
	bool (*interrupted)(void);	/* polled every STEP_POLL_INTERVAL steps */
	void (*abort)(struct trap_frame *f);	/* send the frame back to the runner */
};

/* What stepping costs on one LP, measured once by stepping nops (step.c). */
struct step_calibration {
	bool done;
	uint64_t step_nop;	/* TSC from one #DB's exit stamp to the next #DB's entry stamp, around a nop */
	uint64_t nop;		/* TSC of one nop run unstepped */
	uint64_t overhead;	/* step_nop - nop: subtracted from every step */
};

/*
 * Arm the engine for the calling LP (installs the shared #DB handler, which
 * then stays; the first call on an LP calibrates it). The runner then sets
 * TF on entry.
 */
void step_begin(const struct step_run *r);

/*
 * Nothing counts for the rest of the run on any LP (every counter stopped
 * for good, as the storm guard stops them): each LP's workload goes on
 * unstepped from its next Ctrl-C poll, as it runs on a Pentium 4, instead
 * of being stepped for nothing to its end.
 */
void step_quiet(void);

/* Disarm the calling LP's engine. True when the run was aborted by Ctrl-C. */
bool step_end(void);

/*
 * For handlers that a stepped workload can enter without a #DB in between
 * (the int 0x81 gate, interrupts that wake HLT): account the instruction
 * that retired since the last trap, if any, and time the next step from
 * this handler's IRETQ. A no-op when not stepping.
 */
void step_sync(struct trap_frame *f);

/*
 * An exception handler's first word on a fault (arch/x86/idt.c): when the
 * faulting instruction is one this LP steps, its hooks' fault (hooks.h)
 * learns of it. A no-op when not stepping.
 */
void step_fault(struct trap_frame *f);

/*
 * The interrupted workload's frame while this LP's #DB handler runs (the
 * step hook included), else NULL. prof/perf.c uses it so that a model PMI
 * raised from the step hook samples the workload, not the handler.
 */
struct trap_frame *step_frame(void);
/* The same for the LP with percpu index cpu (the caller's own: a handler that has it). */
struct trap_frame *step_frame_of(unsigned cpu);

/*
 * The counting window: from step_window_begin() to step_window_end() every
 * instruction the calling LP retires is stepped - kernel code too, at CPL 0,
 * reported to h->step as LP lp's (a stepped workload's own instructions
 * still go to its run's hooks). Not stepped: interrupt and exception
 * handlers (their gates clear TF; the IRET restores it), a held region
 * (step_hold), and the #DB handler itself. step_window_begin sets TF in the
 * caller's RFLAGS; step_window_end clears it.
 */
void step_window_begin(const struct workload_hooks *h, uint8_t lp);
void step_window_end(void);
bool step_window_open(void);

/*
 * Code that stands for one instruction of the hardware (the model's
 * register accesses) or whose length depends on timing (a spin wait) runs
 * unstepped: step_hold() clears TF and returns the RFLAGS before;
 * step_release() with them sets TF again if it was set and the window is
 * still open.
 */
uint64_t step_hold(void);
void step_release(uint64_t flags);

/*
 * For a gate that leaves the interrupted context for good (the ring-3 exit
 * gate): in the counting window, report the instruction that entered it
 * and step the rest of the handler. A no-op outside the window.
 */
void step_gate_enter(struct trap_frame *f);

/*
 * An interrupt handler in the counting window (the PMI handler, by its
 * vector or by NMI): a Pentium 4 retires its instructions at CPL 0 while
 * the counters run, so it is stepped and reported like the window's other
 * kernel code, from its dispatcher to its IRET - when it interrupted
 * stepped code (f's TF set) or the step handler itself (an NMI the model
 * sent from a step). The interrupted context's stepping resumes after the
 * IRET as it was. A no-op outside the window and inside a stepped handler.
 */
void step_handler_enter(struct trap_frame *f);
/* Is the LP with percpu index cpu inside a stepped handler (its IRET not yet retired)? */
bool step_in_handler_of(unsigned cpu);
/*
 * While the LP with percpu index cpu steps a handler: the workload frame
 * step_frame_of() gave when the handler came in (an NMI in the step
 * handler), else NULL.
 */
struct trap_frame *step_handler_frame_of(unsigned cpu);
/*
 * The stepped handlers of the LP with percpu index cpu since its counting
 * window last opened: how many, their instructions from the dispatcher to
 * the IRET, and their tails - the instructions after the first
 * step_handler_mark() in a handler (the model marks a CCCR write that
 * restarts a counter with OVF_PMI) up to and with the IRET: what a sampler counting
 * CPL 0 counts of the handler after its reload, the first restarted of a
 * PMI that restarts several counting the longest (pmu/p4_alloc.h
 * P4_PMI_TAIL_MAX).
 */
struct step_handler_stats {
	uint64_t handlers, insns;
	uint64_t tails, tail_sum, tail_max;
	/* the timer ticks stepped like a PMI's handler (step_handler_enter): how many, their instructions */
	uint64_t ticks, tick_insns;
};
const struct step_handler_stats *step_handler_stats_of(unsigned cpu);
/*
 * The LAPIC timer's tick in the model's time, for the calling LP: while it
 * steps a counting window, the timer's vector is sent to it (a self-IPI)
 * each period TSC cycles of its workload's stepped time, as step_take
 * times each step (the time a Pentium 4 would have taken; the kernel's
 * steps, which carry the model's own work, do not advance it), and the
 * tick's handler is
 * stepped to its IRET like a PMI's: its instructions count at CPL 0, as a
 * Pentium 4 counts a timer interrupt inside the window. A periodic LAPIC
 * timer would fire by the stepped run's own time, hundreds of times too
 * often. 0 stops it. The caller installs the vector's handler.
 */
void step_tick_every(uint64_t period);
/*
 * A clock for timing code inside handlers: the TSC, except inside a
 * handler the model steps, where it advances only with the handler's own
 * time (its instructions as step_take times them, and what it ran held),
 * as if it ran unstepped. Two readings inside one handler give its time.
 * Inline: on a Pentium 4 (no LP steps a handler) a load, a test and the
 * RDTSC. Inside a stepped handler the call into step_handler_clock_stepped
 * stands for the RDTSC, and the step engine reports nothing of that
 * function, which a Pentium 4 never runs (step.c STEP_SEAM_CLOCK).
 */
extern volatile uint32_t step_handlers_stepped;	/* a bit per percpu index: steps a handler */
uint64_t step_handler_clock_stepped(void);

static inline __attribute__((always_inline)) uint64_t step_handler_clock(void)
{
	if (__builtin_expect(!step_handlers_stepped, 1))
		return rdtsc();
	return step_handler_clock_stepped();
}
/* Inside a stepped handler: the tail starts after this point (the first). A no-op elsewhere. */
void step_handler_mark(void);
/*
 * The calling LP's stepped time: the TSC cycles of every instruction the
 * step engine has reported for it (its workloads, the kernel's code in the
 * counting window, the handlers it stepped), each as step_take timed it -
 * the time it would have taken unstepped. Neither the step engine nor the
 * model's own work advances it (the seam's accesses and the spans run
 * held, step_hold, report no cycles), nor does code it does not step.
 * Only differences mean anything.
 */
uint64_t step_lp_clock(void);


/*
 * The seam (pmu/msr_bus.h): under the model a PMU register access is a call
 * into the model's bus functions, read and write, where a Pentium 4 runs
 * the hardware bus (arch/x86/msr.c msr_hw_bus): its call, a few moves, one
 * RDMSR or WRMSR and a RET. In the counting window a call that enters read
 * or write is reported as the hardware bus would retire it - the
 * instructions msr_hw_bus's own function retires, found once per LP by
 * stepping it on MSR msr (read, then the value read written back: a
 * register the model stands for, so the hardware's own is idle) - and the
 * model's function itself, its call into the model included, is not
 * reported at all. Set once by the model backend; NULL entries: no seam.
 */
void step_seam_set(const void *read, const void *write, uint32_t msr);
/* The hardware bus's instructions per access as the seam reports them (0: not measured). */
void step_seam_lengths(unsigned *read, unsigned *write);
/*
 * Glue a backend needs in the kernel's own code and a Pentium 4 never runs
 * (prof/perf.c: the model's time inside a PMI handler): a call into fn is
 * reported as its CALL alone, nothing of fn and what it calls (as the
 * clock's, step_handler_clock). Up to four functions; again: no change.
 */
void step_seam_glue(const void *fn);
/*
 * The instructions of a PMI's way in - its stub, isr_common and the
 * dispatcher up to the stepped handler - that the window reports at the
 * handler's start, for a PMI by vector (VEC_NMI or the LVT PC's fixed
 * vector) that interrupted code at cpl; measured when the seam is set (0:
 * not measured).
 */
unsigned step_entry_length(unsigned vector, unsigned cpl);

/* The calling LP's calibration (calibrating it first if needed). */
const struct step_calibration *step_calibrate(void);

/*
 * Operand values for the assist events (pmu/model/p4_assist.h), asked for
 * by the step hook only while they are counted, so that stepping pays
 * nothing for them otherwise. In the hook of the instruction at rip,
 * step_fp_step() looks at the next one (next_rip, with the registers of
 * the trap in front of it): an x87 or SSE/SSE2 arithmetic instruction
 * (arch/x86/insn_simd.c insn_fp_op) gets the FXSAVE image of the x87/SSE
 * state before it runs and the bytes of its memory operand (read only
 * where the page tables map them for its CPL); in its own hook, one step
 * later, the image after it. The kernel never touches that state itself
 * (-mgeneral-regs-only, arch/x86/fpu.h), so the images are the workload's.
 */
struct step_fp {
	const uint8_t *before, *after;	/* FXSAVE images (512 bytes) */
	uint64_t rip;			/* the instruction they belong to */
	bool valid;
	bool mem_read;			/* mem holds its memory operand */
	struct p4_fp_op op;
	uint8_t mem[16];
};

/*
 * Can the images be taken: CR4.OSFXSR set (else FXSAVE leaves the XMM
 * registers out) and the areas 16-byte aligned (FXSAVE's #GP otherwise)?
 */
bool step_fp_usable(void);
/*
 * In the step hook of the instruction at rip, execution going on at
 * next_rip: rip's operands and images if they were taken one step before
 * (else NULL); next_rip's are taken now. Valid until the next call.
 */
const struct step_fp *step_fp_step(uint64_t rip, uint64_t next_rip);

#endif /* __ASSEMBLY__ */
#endif
