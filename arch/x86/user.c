/*
 * user.c - ring-3 entry and exit for workloads, and the DPL-3 gates.
 *
 * A ring-3 run (SDM Vol. 3A 5.5, 6.12.1):
 *  1. user_prepare() opens the workload pages (linker.ld's .wltext), the
 *     user stack and an optional buffer to user mode (paging_set_user, U/S
 *     at 4 KiB granularity) and puts the exit trampoline's address on top of
 *     the user stack as the workload's return address;
 *  2. user_call() (workloads.S) saves the kernel state, sets TSS.RSP0 just
 *     below it and IRETQs to CS 0x23 / SS 0x1b;
 *  3. the workload's ret lands in wl_user_exit, whose `int 0x80` enters
 *     user_exit_gate(), which calls user_return(): user_call() returns;
 *  4. user_cleanup() closes the pages again, so outside a ring-3 run the
 *     kernel is supervisor-only, and reloads the kernel data selectors (an
 *     exception from ring 3 leaves SS null; the guarded run's unwind does
 *     not restore selectors).
 *
 * idt.c builds every gate with DPL 0 except int3. Gates 0x80 and 0x81 must
 * be reachable by `int n` at CPL 3 (a DPL-0 gate would raise #GP instead),
 * so user_init() raises their DPL to 3 (idt_gate_user(), arch/x86/64/gdt.c / 32/gdt.c).
 *
 * Two LPs (Hyper-Threading) may be in ring-3 runs at once. Each has its own
 * stack and buffer pages, but the workload text is one range in the one
 * set of page tables: it is opened by the first run and closed by the last
 * (user_text.users), and every change to the page tables is made under
 * user_text.lock. A run that finds the text already open still gets its own TLB
 * flushed (paging_set_user on its stack reloads CR3 on this LP), since the
 * other LP's change flushed only that LP's TLB.
 * The "in a run" flag, the synthetic-gate callback and the gate's published
 * frame are per LP.
 */
#include <stddef.h>

#include "arch/x86/cpu.h"
#include "arch/x86/gdt.h"
#include "arch/x86/hooks.h"
#include "arch/x86/idt.h"
#include "arch/x86/mode.h"
#include "arch/x86/msr.h"
#include "arch/x86/paging.h"
#include "arch/x86/percpu.h"
#include "arch/x86/regs.h"
#include "arch/x86/step.h"
#include "arch/x86/user.h"

_Static_assert(offsetof(struct percpu, wl_ring0_rsp) == PERCPU_WL_RING0_RSP, "percpu layout");
_Static_assert(offsetof(struct percpu, user_kernel_rsp) == PERCPU_USER_KERNEL_RSP, "percpu layout");
_Static_assert(offsetof(struct percpu, gate_open) == PERCPU_GATE_OPEN, "percpu layout");
_Static_assert(offsetof(struct percpu, gate_shut) == PERCPU_GATE_SHUT, "percpu layout");
_Static_assert(offsetof(struct percpu, gate_ctx) == PERCPU_GATE_CTX, "percpu layout");
_Static_assert(offsetof(struct percpu, gate_mark) == PERCPU_GATE_MARK, "percpu layout");

#if MODE_IS_64
_Static_assert(offsetof(struct percpu, syscall_user_rsp) == PERCPU_SYSCALL_URSP, "percpu layout");
#endif

void user_return(uint64_t rax, uint64_t kernel_ds) __attribute__((noreturn));

static bool user_ready;

/* Each LP's gate handlers (int 0x81, int 0x82) and the frame one of them is handling. */
static struct user_lp {
	void (*synth_fn)(void *ctx, struct trap_frame *f);
	void *synth_ctx;
	void (*call_fn)(void *ctx, struct trap_frame *f);
	void *call_ctx;
	void (*linux_fn)(void *ctx, struct trap_frame *f);
	void *linux_ctx;
	bool syscall_on;		/* x86-64: this LP's SYSCALL MSRs are set */
	struct trap_frame *frame;	/* the gate's frame while its handler runs */
} user_lps[PERCPU_MAX];

/* The ring-3 text pages (see the top): who has them open, and the lock for changing them. */
static struct {
	volatile uint32_t lock;
	unsigned users;			/* LPs in a ring-3 run (text pages open) */
} user_text;

static void user_lock_take(void)
{
	while (__atomic_exchange_n(&user_text.lock, 1, __ATOMIC_ACQUIRE))
		cpu_pause();
}

static void user_lock_drop(void)
{
	__atomic_store_n(&user_text.lock, 0, __ATOMIC_RELEASE);
}

/*
 * Call a gate's callback with the workload's frame published through
 * user_gate_frame() while it runs: the callback may reach the PMU (the
 * model may raise a PMI from it), and the PMI then samples the workload,
 * not the gate. The frame is set before the call and cleared after it, as
 * an NMI on this LP sees them.
 */
static void user_gate_call(unsigned lp, void (*fn)(void *ctx, struct trap_frame *f), void *ctx,
			   struct trap_frame *f)
{
	__atomic_store_n(&user_lps[lp].frame, f, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	fn(ctx, f);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&user_lps[lp].frame, NULL, __ATOMIC_RELAXED);
}

/*
 * A Linux program's system call (int 0x80 in the ia32 kernel, SYSCALL in
 * the x86-64 one): published like the 0x82 gate's frame, since a call may
 * reach the PMU (the counting markers go through 0x82, but a stepped run
 * syncs its stepper here).
 */
static void user_linux_gate(struct trap_frame *f)
{
	unsigned lp = percpu_this()->index;

	if ((f->cs & 3) != 3 || !user_lps[lp].linux_fn)
		return;
	user_gate_call(lp, user_lps[lp].linux_fn, user_lps[lp].linux_ctx, f);
}

/* int 0x80: a ring-3 workload has returned (RAX is its result), or an i386 Linux call. */
static void user_exit_gate(struct trap_frame *f)
{
	struct percpu *pc = percpu_this();

	if ((f->cs & 3) != 3 || !pc->user_in_run)
		return;		/* not from a ring-3 run: ignore */
	/* the x86-64 kernel's Linux programs use SYSCALL: there only the trampoline comes here */
	if (!MODE_IS_64 && f->rip != (uint64_t)(uintptr_t)wl_user_exit + USER_EXIT_INSN_LEN) {
		user_linux_gate(f);
		return;
	}
	step_gate_enter(f);	/* in the counting window: the way back is kernel code */
	pc->user_in_run = false;
	user_return(f->rax, GDT_KERNEL_DS);
}

/*
 * int 0x81: one synthetic event occurrence, at the caller's CPL. While the
 * callback runs (it feeds the PMU model, which may raise a PMI), the
 * workload's frame is published through user_gate_frame(), so that the PMI
 * samples the workload and not this handler.
 */
static void user_synth_gate(struct trap_frame *f)
{
	unsigned lp = percpu_this()->index;

	if (!user_lps[lp].synth_fn)
		return;
	user_gate_call(lp, user_lps[lp].synth_fn, user_lps[lp].synth_ctx, f);
}

/*
 * int 0x82: a program's call. The frame is published like the 0x81 gate's,
 * since a marker reprograms the PMU and the model may raise a PMI from it.
 */
static void user_call_gate(struct trap_frame *f)
{
	unsigned lp = percpu_this()->index;

	if (!user_lps[lp].call_fn) {
		f->rax = (uint64_t)-1;
		return;
	}
	user_gate_call(lp, user_lps[lp].call_fn, user_lps[lp].call_ctx, f);
}

void user_set_linux(void (*fn)(void *ctx, struct trap_frame *f), void *ctx)
{
	unsigned lp = percpu_this()->index;

	user_lps[lp].linux_fn = fn;
	user_lps[lp].linux_ctx = ctx;
}

/*
 * SYSCALL on this LP (SDM Vol. 3A 5.8.8): EFER.SCE, the kernel's CS (SS is
 * CS + 8) in STAR[47:32], SYSRET's base in STAR[63:48] (user SS = base + 8,
 * CS = base + 16: gdt.h's order; the entry returns by IRETQ all the same),
 * the entry in LSTAR, and FMASK clearing IF, TF, DF, NT and AC at entry
 * as an interrupt gate would (IF, TF, NT) and as the C code expects (DF,
 * AC). The PMU model's register seam is for PMU registers: these go to
 * the processor.
 */
static void user_syscall_on(void)
{
#if MODE_IS_64
	unsigned lp = percpu_this()->index;

	if (user_lps[lp].syscall_on)
		return;
	msr_write(MSR_IA32_STAR, (uint64_t)GDT_KERNEL_CS << 32 |
				 (uint64_t)((GDT_USER_DS - 8) | GDT_RPL3) << 48);
	msr_write(MSR_IA32_LSTAR, (uint64_t)(uintptr_t)syscall_entry);
	msr_write(MSR_IA32_FMASK, RFLAGS_IF | RFLAGS_TF | RFLAGS_DF | RFLAGS_NT | RFLAGS_AC);
	msr_write(MSR_IA32_EFER, msr_read(MSR_IA32_EFER) | EFER_SCE);	/* LMA reads back as set */
	user_lps[lp].syscall_on = true;
#endif
}

void user_set_call(void (*fn)(void *ctx, struct trap_frame *f), void *ctx)
{
	unsigned lp = percpu_this()->index;

	user_lps[lp].call_fn = fn;
	user_lps[lp].call_ctx = ctx;
}

struct trap_frame *user_gate_frame_of(unsigned cpu)
{
	return __atomic_load_n(&user_lps[cpu].frame, __ATOMIC_RELAXED);
}

struct trap_frame *user_gate_frame(void)
{
	return user_gate_frame_of(percpu_this()->index);
}

static HOOK_GATE_FN void user_gate_none(void *ctx)
{
	(void)ctx;
}

static HOOK_GATE_FN int user_gate_no_mark(void *ctx, int on)
{
	(void)ctx;
	(void)on;
	return 1;	/* not taken: the gate's common path */
}

/* Never NULL once a run was prepared on this LP: the runners call them through %gs. */
void user_set_gate(const struct workload_hooks *h)
{
	struct percpu *pc = percpu_this();

	pc->gate_open = (uintptr_t)(h && h->open ? h->open : user_gate_none);
	pc->gate_shut = (uintptr_t)(h && h->shut ? h->shut : user_gate_none);
	pc->gate_mark = (uintptr_t)(h && h->mark_fast ? h->mark_fast : user_gate_no_mark);
	pc->gate_ctx = (uintptr_t)(h ? h->gate_ctx : NULL);
}

void user_gate_shut(void)
{
	const struct percpu *pc = percpu_this();

	if (pc->gate_shut)
		((HOOK_GATE_FN void (*)(void *))(uintptr_t)pc->gate_shut)((void *)(uintptr_t)pc->gate_ctx);
}

void user_init(void)
{
	if (user_ready)
		return;
	idt_set_handler(USER_EXIT_VECTOR, user_exit_gate);
	idt_set_handler(USER_SYNTH_VECTOR, user_synth_gate);
	idt_set_handler(USER_CALL_VECTOR, user_call_gate);
	idt_set_handler(USER_SYSCALL_VECTOR, user_linux_gate);
	/* its own entry stub: a counting marker's fast path before the common one */
	idt_gate_set(USER_CALL_VECTOR, (uint64_t)(uintptr_t)user_call_entry, 0, true);
	/* its own entry stub: the gate shuts before the common entry path runs */
	idt_gate_set(USER_EXIT_VECTOR, (uint64_t)(uintptr_t)user_exit_entry, 0, true);
	idt_gate_user(USER_SYNTH_VECTOR);
	user_ready = true;
}

void user_set_synthetic(void (*fn)(void *ctx, struct trap_frame *f), void *ctx)
{
	unsigned lp = percpu_this()->index;

	user_lps[lp].synth_fn = fn;
	user_lps[lp].synth_ctx = ctx;
}

/* Open or close this run's pages; the text only for the first / last user. */
static int user_open(const struct user_run *r, bool open)
{
	uint64_t text = (uint64_t)(uintptr_t)__workload_text_start;
	uint64_t text_len = (uint64_t)(uintptr_t)__workload_text_end - text;
	int err = 0;

	bool last;

	user_lock_take();
	last = open ? user_text.users++ == 0 : user_text.users > 0 && --user_text.users == 0;
	if (last)
		err |= paging_set_user(text, text_len, open);
	err |= paging_set_user(r->stack_base, r->stack_size, open);
	if (r->extra_len)
		err |= paging_set_user(r->extra_base, r->extra_len, open);
	/* a program may run on both LPs at once: its pages close with the last run */
	if (r->prog_len && (open || last))
		err |= paging_set_user(r->prog_base, r->prog_len, open);
	user_lock_drop();
	return err ? -1 : 0;
}

int user_prepare(const struct user_run *r, struct wl_call *c)
{
	uint64_t top = (r->stack_base + r->stack_size) & ~UINT64_C(15);

	if (user_open(r, true)) {
		user_open(r, false);
		return -1;
	}
	if (r->linux_abi)
		user_syscall_on();
	/* At entry RSP points at the return address, 8 mod 16 as after a call. */
	if (!r->entry_sp)
		*(uint64_t *)(uintptr_t)(top - 8) = (uint64_t)(uintptr_t)wl_user_exit;
	*c = (struct wl_call){
		.fn = r->fn,
		.arg = { r->arg[0], r->arg[1], r->arg[2], r->arg[3] },
		.rflags = (r->rflags | RFLAGS_RESERVED1) & ~RFLAGS_IOPL,
		.rsp = r->entry_sp ? r->entry_sp : top - 8,
		.raw = r->entry_sp != 0,
		.cs = GDT_USER_CS | GDT_RPL3,
		.ss = GDT_USER_DS | GDT_RPL3,
	};
	percpu_this()->user_in_run = true;
	return 0;
}

void user_cleanup(const struct user_run *r)
{
	uint16_t ds = GDT_KERNEL_DS;

	percpu_this()->user_in_run = false;
	__asm__ volatile("mov %0, %%ds\n\tmov %0, %%es\n\tmov %0, %%ss" : : "r"(ds) : "memory");
	tss_set_rsp0(0);
	if (r->linux_abi)
		mode_user_tls_clear();
	user_open(r, false);
}

void user_redirect_exit(struct trap_frame *f)
{
	f->rip = (uint64_t)(uintptr_t)wl_user_exit;
}
