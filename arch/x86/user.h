/*
 * user.h - calling workload code at CPL 0 or CPL 3, and the two DPL-3 gates.
 *
 * Ring 3 (SDM Vol. 3A 5.8.x, 6.12.1): user_call() saves the kernel's
 * callee-saved registers and RSP, points TSS.RSP0 a little below that RSP
 * (the stack below is free while the workload runs, so every interrupt or
 * exception from ring 3 lands there), and IRETQs to the workload with CS
 * 0x23, SS 0x1b and the user stack. The workload returns into
 * wl_user_exit, a user-accessible trampoline that executes `int 0x80`;
 * that DPL-3 gate calls user_return(), which restores the saved kernel
 * state and makes user_call() return the workload's RAX. A fault at CPL 3
 * goes through the normal exception report and the guarded run's unwind
 * (arch_run_guarded), which needs only the RSP0 stack to be valid.
 *
 * Gate 0x81 is the synthetic-event gate: also DPL 3, so `int 0x81` works at
 * either CPL; its handler calls the function set with user_set_synthetic()
 * and meanwhile publishes the workload's frame (user_gate_frame()).
 *
 * Linux programs (workload/linux.h) call the kernel with `int 0x80` in
 * the ia32 kernel, through the same DPL-3 gate as the exit trampoline: the
 * gate tells the two apart by the return address, which only the
 * trampoline's own `int 0x80` has (wl_user_exit + 2). In the x86-64 kernel
 * they use SYSCALL (IA32_LSTAR = syscall_entry, 64/entry.S), which enters
 * the common interrupt path with the vector USER_SYSCALL_VECTOR, a gate
 * that stays DPL 0 so that `int` cannot reach it. Either way the function
 * set with user_set_linux() handles the call.
 *
 * Ring 0: wl_call_ring0() loads the same struct wl_call's RFLAGS with POPFQ
 * right before `call fn`, so a TF set there traps first after the call
 * (the call itself is runner code and is not stepped).
 */
#ifndef NBPROF_ARCH_X86_USER_H
#define NBPROF_ARCH_X86_USER_H

#include "sdk/nbprof_abi.h"

#define USER_EXIT_VECTOR	0x80
#define USER_SYNTH_VECTOR	0x81
#define USER_CALL_VECTOR	NB_CALL_VECTOR	/* a program's calls: RAX = call number */
#define USER_SYSCALL_VECTOR	0x84	/* the SYSCALL entry's frames (DPL 0: no `int` reaches it) */
#define USER_EXIT_INSN_LEN	2	/* the trampoline's `int $0x80` (CD 80) */

/* struct percpu offsets of this LP's runner state, read through %gs: mode.h */
#include "arch/x86/mode.h"

/* struct wl_call offsets for workloads.S */
#define WC_FN		0
#define WC_ARG0		8
#define WC_ARG1		16
#define WC_ARG2		24
#define WC_ARG3		32
#define WC_RFLAGS	40
#define WC_RSP		48
#define WC_CS		56
#define WC_SS		64
#define WC_RAW		72	/* nonzero: enter with RSP as given, nothing pushed (ia32 user_call) */

#ifndef __ASSEMBLY__
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/idt.h"

struct wl_call {
	uint64_t fn;
	uint64_t arg[4];	/* RDI, RSI, RDX, RCX */
	uint64_t rflags;	/* the workload's initial RFLAGS (TF when stepping) */
	uint64_t rsp;		/* ring 3: user stack pointer at entry (return address on top) */
	uint64_t cs, ss;	/* ring 3: user selectors (RPL 3) */
	uint64_t raw;		/* ring 3: RSP is a Linux process's initial stack, used as it is */
};

_Static_assert(offsetof(struct wl_call, rflags) == WC_RFLAGS, "wl_call layout");
_Static_assert(offsetof(struct wl_call, ss) == WC_SS, "wl_call layout");
_Static_assert(offsetof(struct wl_call, raw) == WC_RAW, "wl_call layout");

/* Bounds of the workload pages (linker.ld) and the trampoline in them. */
extern char __workload_text_start[] __attribute__((visibility("hidden")));
extern char __workload_text_end[] __attribute__((visibility("hidden")));
extern char wl_user_exit[] __attribute__((visibility("hidden")));
/* The ring-3 exit gate's and call gate's entry stubs (arch/x86/64/entry.S, 32/entry.S). */
extern char user_exit_entry[] __attribute__((visibility("hidden")));
extern char user_call_entry[] __attribute__((visibility("hidden")));
#if defined(__x86_64__)
/* The SYSCALL instruction's entry (arch/x86/64/entry.S): a Linux program's system calls. */
extern char syscall_entry[] __attribute__((visibility("hidden")));
#endif
/* Where a ring-0 workload returns to, and where an aborted one is sent. */
extern char wl_ring0_return[] __attribute__((visibility("hidden")));
extern char wl_ring0_abort[] __attribute__((visibility("hidden")));

/* Call c->fn at CPL 0 with c->rflags; returns its RAX. */
uint64_t wl_call_ring0(const struct wl_call *c);

/*
 * Run fn(args) at CPL 3 on a stack of stack_size bytes at stack_base (made
 * user-accessible for the call, as are the workload pages and extra
 * [extra_base, +extra_len) when extra_len != 0). rflags: the workload's
 * initial RFLAGS (IOPL stays 0). Returns the workload's RAX; -1 and no run
 * when the pages could not be opened. Faults unwind through the caller's
 * guarded run; call user_cleanup() after an unwind.
 */
struct user_run {
	uint64_t fn, arg[4], rflags;
	uint64_t stack_base, stack_size;
	uint64_t extra_base, extra_len;
	uint64_t prog_base, prog_len;	/* a user program's pages (workload/program.h), or 0 */
	uint64_t entry_sp;		/* a Linux program: its initial stack pointer (no return address) */
	bool linux_abi;			/* a Linux program: its system calls on, its TLS cleared after */
};

int user_prepare(const struct user_run *r, struct wl_call *c);
uint64_t user_call(const struct wl_call *c);
void user_cleanup(const struct user_run *r);

/*
 * The counting gate of this LP's next runs (struct workload_hooks open,
 * shut and mark_fast, called with gate_ctx; NULL hooks: none). The runners
 * call them through the LP's percpu slots (PERCPU_GATE_OPEN, _SHUT), one
 * instruction each; the ring-3 exit gate's entry stub calls shut before
 * anything else (arch/x86/64/entry.S, 32/entry.S user_exit_entry).
 * user_gate_shut() calls shut from C.
 */
struct workload_hooks;
void user_set_gate(const struct workload_hooks *h);
void user_gate_shut(void);

/* Install the DPL-3 gates 0x80, 0x81 and 0x82 and the SYSCALL frames' handler (idempotent). */
void user_init(void);

/*
 * Function the 0x81 gate calls with the frame of the `int 0x81` (NULL:
 * ignore), for the calling LP only: each LP runs its own workload.
 */
void user_set_synthetic(void (*fn)(void *ctx, struct trap_frame *f), void *ctx);

/*
 * Function the 0x82 gate calls (a program's calls; NULL: the gate returns
 * -1 in RAX), for the calling LP only.
 */
void user_set_call(void (*fn)(void *ctx, struct trap_frame *f), void *ctx);

/*
 * Function that handles a Linux program's system calls (int 0x80 in the
 * ia32 kernel, SYSCALL in the x86-64 one; NULL: none), for the calling LP.
 * It sets f->rax; user_redirect_exit(f) ends the program.
 */
void user_set_linux(void (*fn)(void *ctx, struct trap_frame *f), void *ctx);

/*
 * The frame of the `int 0x81` whose handler this LP is running (the
 * workload's context: RIP after the int, its CPL and RFLAGS), else NULL.
 * Like step_frame() for the #DB handler: prof/perf.c takes it as the
 * interrupted context of a PMI that the synthetic callback raised.
 */
struct trap_frame *user_gate_frame(void);
/* The same for the LP with percpu index cpu (the caller's own). */
struct trap_frame *user_gate_frame_of(unsigned cpu);

/* Redirect a ring-3 frame to the exit trampoline (used to abort a run). */
void user_redirect_exit(struct trap_frame *f);

#endif
#endif
