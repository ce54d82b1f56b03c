/*
 * hooks.h - what a run under observation reports: the contract between the
 * code that runs a workload (the step engine, the int 0x81 gate, the
 * runner) and whoever counts it (a PMU backend's event feed).
 */
#ifndef NBPROF_ARCH_X86_HOOKS_H
#define NBPROF_ARCH_X86_HOOKS_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/insn.h"

struct step_info {
	uint64_t rip;		/* the instruction that just retired */
	uint64_t next_rip;	/* where execution continues */
	uint8_t cpl, lp;
	enum insn_branch branch;
	bool taken;		/* next_rip != fall-through (branches only) */
	bool flush_tlb;		/* it wrote CR3: every TLB entry is gone (no global pages here) */
	uint8_t simd;		/* its execution-tagging class (insn.h struct insn_class, INSN_SIMD_OF) */
	uint64_t cycles;	/* TSC cycles spent in the workload since the previous step
				   (trap-handler time excluded) */
	/*
	 * What the instruction touched (step.c decodes it with insn_mem_decode
	 * and the registers of the trap in front of it): its length (0 when
	 * unknown; the fetch is rip .. rip + len), and its memory operands when
	 * mem_status is INSN_MEM_OK. A REP string instruction ran rep_iters
	 * iterations (else rep_iters is 1): mem[] are the first iteration's
	 * operands, and each later iteration's are mem_stride bytes further
	 * (negative with RFLAGS.DF set).
	 */
	uint8_t len;
	enum insn_mem_status mem_status;
	uint8_t nmem;
	struct insn_mem_op mem[INSN_MAX_MEM_OPS];
	uint32_t rep_iters;
	int32_t mem_stride;
	/* its uop class and register operands, for the core's timing model (insn_mem_decode) */
	struct p4_insn core;
};

/*
 * The counting gate's functions take their argument in a register on the
 * 32-bit kernel too (EAX, EDX: regparm(2)), as the 64-bit one does: the
 * runners call them with one instruction to load it (user.h user_set_gate).
 */
#if defined(__i386__)
#define HOOK_GATE_FN	__attribute__((regparm(2)))
#else
#define HOOK_GATE_FN
#endif

/*
 * An exception the instruction at rip raised while it was stepped (it did
 * not retire): the step engine reports it before the exception's handler
 * unwinds the run (step.h step_fault). frame: the exception's.
 */
struct trap_frame;
struct step_fault {
	uint64_t rip;
	uint8_t cpl, lp, vector;
	const struct trap_frame *frame;
};

struct workload_hooks {
	void *ctx;
	void (*begin)(void *ctx, uint8_t lp);	/* right before the first workload instruction */
	void (*end)(void *ctx, uint8_t lp);	/* right after the workload is left (also after a fault) */
	void (*step)(void *ctx, const struct step_info *s);	/* per retired instruction, when stepping */
	void (*synthetic)(void *ctx, uint8_t lp, uint8_t cpl, const char *spec, uint64_t n);
	void (*fault)(void *ctx, const struct step_fault *f);	/* a stepped instruction faulted */
	/* a program's start/stop counting marker (sdk/nbprof.h), inside the int 0x82 gate */
	void (*mark)(void *ctx, uint8_t lp, bool on);
	/*
	 * a watchdog tick of an unstepped run (the LAPIC timer, every 100 ms
	 * or less): a periodic point for counts that must be read before they
	 * wrap (the 32-bit uncore counters)
	 */
	void (*tick)(void *ctx, uint8_t lp);
	/*
	 * The counting gate: open right before the workload's first
	 * instruction, from the runner (arch/x86/64/workloads.S and 32/:
	 * wl_call_ring0, user_call), shut first thing after it returns (the
	 * runner's return path, the ring-3 exit gate's entry). Anything else
	 * runs outside them. NULL: none.
	 */
	HOOK_GATE_FN void (*open)(void *gate_ctx);
	HOOK_GATE_FN void (*shut)(void *gate_ctx);
	/*
	 * A program's counting marker (sdk/nbprof.h nb_count_start/stop) on the
	 * call gate's entry stub, before its common path: 0 when it did the
	 * marker's work, else the common path (mark) does it.
	 */
	HOOK_GATE_FN int (*mark_fast)(void *gate_ctx, int on);
	void *gate_ctx;
};

/*
 * Any hook may be NULL. begin and end run in the caller's context (its
 * RFLAGS.IF); step runs inside the #DB handler, fault inside the
 * exception's handler, synthetic inside the
 * int 0x81 gate and tick inside the timer interrupt, all with interrupts
 * disabled. The workload itself starts
 * with the caller's RFLAGS.IF (the shell runs with IF = 0).
 */

/* What the step engine counted over one run. */
struct step_counts {
	uint64_t instructions;		/* retired workload instructions (REP string op = 1) */
	uint64_t step_cycles;		/* sum of step_info.cycles */
	uint64_t branches[INSN_NBRANCH_KINDS];	/* retired, by kind ([INSN_NOT_BRANCH] unused) */
	uint64_t taken, not_taken;	/* over all branch kinds */
	uint64_t cond_taken, cond_not_taken;
};

#endif
