/*
 * workloads.c - run a built-in workload once, at CPL 0 or 3, optionally
 * single-stepped, and feed the counting side's hooks.
 *
 * The bodies are in arch/x86/64/workloads.S, the table in workload.c, ring-3
 * entry in arch/x86/user.c and stepping in arch/x86/step.c. A run:
 *   resources (memwalk buffer, user stack, LAPIC wake-up timer for halt)
 *   -> guarded { begin hook; TSC; [step_begin]; call at CPL 0 or 3 }
 *   -> TSC; [step_end]; ring-3 cleanup; end hook; resources freed.
 * The guarded run catches any exception inside the workload (the report
 * is printed by idt.c); the run then ends as WORKLOAD_FAULTED with the
 * vector, and the end hook still runs.
 *
 * RFLAGS.IF: the workload starts with the caller's IF (the shell runs with
 * interrupts disabled; a caller that wants PMI interrupts to land inside
 * the workload enables them first). `halt` enables interrupts itself
 * around HLT and restores IF.
 *
 * Ctrl-C: a stepped run polls it every STEP_POLL_INTERVAL instructions and
 * ends as WORKLOAD_INTERRUPTED. An unstepped run (a user's program, or a
 * built-in workload other than `halt`) runs with RFLAGS.IF set and the
 * LAPIC timer as its watchdog, which polls the serial port (LP0) or
 * wl_stop (the sibling) and sends the run to its exit on Ctrl-C; `halt`
 * (at most 10 s) keeps its wake-up timer and is not interruptible. The
 * watchdog's ticks are kernel code inside the run (counted under :k on the
 * hardware): a built-in's tick is WORKLOAD_TICK_US apart, rare beside the
 * microseconds of a selftest loop. Only programs have a time limit. Each
 * tick also calls the hooks' tick, which reads the counts that must not
 * wrap unseen (the 32-bit uncore counters, prof/perf.c).
 *
 * Two logical processors (Hyper-Threading): every piece of run state is
 * per LP - the wl_run below lives on the running LP's stack, the step
 * engine, the ring-3 exit context and the synthetic gate are per LP
 * (arch/x86/step.c, user.c, workloads.S) and so is the user stack - so
 * LP0 and its sibling can each run a workload at the same time
 * (workload_run_lps). Only LP0 reads the serial port: it polls Ctrl-C and
 * raises wl_stop, which the sibling's stepper polls instead. Shared IDT
 * handlers (#DB, the halt wake-up timer) are installed once and stay.
 */
#include "arch/x86/console.h"
#include "arch/x86/cpu.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/fpu.h"
#include "arch/x86/idt.h"
#include "arch/x86/lapic.h"
#include "arch/x86/mem.h"
#include "arch/x86/paging.h"
#include "arch/x86/percpu.h"
#include "arch/x86/smp.h"
#include "arch/x86/step.h"
#include "arch/x86/timer.h"
#include "arch/x86/user.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "workload/linux.h"
#include "workload/program.h"
#include "workload/snippet_run.h"
#include "workload/workload.h"

#define USER_STACK_PAGES	4	/* 16 KiB: calls DEPTH 256 needs 4 KiB */
#define HALT_WAKE_US		100	/* LAPIC timer period while halting */
#define US_PER_S		UINT64_C(1000000)
#define PAIR_POLL_US		20000	/* LP0 polls Ctrl-C this often while the sibling runs */
#define PROGRAM_TICK_US		100000	/* an unstepped program's watchdog tick */
#define WL_PROBE_PAGES		512	/* 2 MiB opened to ring 3 once at boot (workload_init) */
#define WORKLOAD_TICK_US	100000	/* an unstepped built-in workload's watchdog tick */

/* Workload bodies (arch/x86/64/workloads.S). */
#define WL_FN(name) extern char name[] __attribute__((visibility("hidden")))
WL_FN(wl_empty);
WL_FN(wl_loop);
WL_FN(wl_branch_taken);
WL_FN(wl_branch_nottaken);
WL_FN(wl_branch_alternate);
WL_FN(wl_branch_random);
WL_FN(wl_calls);
WL_FN(wl_indirect);
WL_FN(wl_memwalk);
WL_FN(wl_chase);
WL_FN(wl_copy);
WL_FN(wl_spin);
WL_FN(wl_halt);
WL_FN(wl_synthetic);
WL_FN(wl_fault_user);
WL_FN(wl_fpmix);
WL_FN(wl_fpassist);
WL_FN(wl_st_forward);
WL_FN(wl_st_alias);
WL_FN(wl_st_stride);
WL_FN(wl_st_nt);
WL_FN(wl_smc);

static char *const branch_fns[BRANCH_NPATTERNS] = {
	[BRANCH_TAKEN] = wl_branch_taken,
	[BRANCH_NOT_TAKEN] = wl_branch_nottaken,
	[BRANCH_ALTERNATE] = wl_branch_alternate,
	[BRANCH_RANDOM] = wl_branch_random,
};

/* What fault-user reads: kernel data, never user-accessible. */
static const uint64_t wl_kernel_word = UINT64_C(0x6e6270726f66);

/* One run's state; static because the gates and hooks reach it. */
struct wl_run {
	const struct workload_args *a;
	const struct workload_hooks *h;
	struct workload_result *res;
	int ring;
	bool step;
	struct wl_call call;
	struct user_run user;
	uint64_t buf, buf_pages;
	uint64_t tsc0;
	const struct program *prog;	/* WL_PROGRAM */
	bool linux_abi;			/* prog is a fixed-address Linux program */
	struct linux_proc lx;		/* ... its heap, mappings and stack */
	uint64_t entry_sp;		/* ... its stack pointer at entry */
	bool watchdog;			/* an unstepped program: Ctrl-C and time limit by timer */
	uint64_t deadline;		/* TSC at which the watchdog stops it */
};

static uint64_t user_stack[PERCPU_MAX];	/* one per LP, allocated on first use */
static struct wl_run *watched[PERCPU_MAX];	/* the LP's program run under the watchdog */
static struct wl_run *stepping[PERCPU_MAX];	/* the LP's stepped program run with a limit */
static struct program_limits limits = {
	.stepped_s = PROGRAM_STEP_LIMIT_S, .unstepped_s = PROGRAM_TIME_LIMIT_S,
};
static volatile bool wl_stop;			/* Ctrl-C seen by LP0 during a pair run */

/*
 * The logical processor the PMU knows this LP as: its SMT ID (T0/T1 are
 * "the SMT bit of the APIC ID", PMU reference 8), which arch/x86/topology.c
 * derived from CPUID's shape (PMU reference 7) - not APIC ID arithmetic.
 */
static uint8_t workload_lp(void)
{
	return (uint8_t)percpu_this()->topo.smt;
}

/* Polled by the stepper: LP0 reads the serial port, the sibling follows LP0. */
static bool workload_interrupted(void)
{
	if (percpu_this()->index != 0)
		return wl_stop;
	if (!console_poll_ctrl_c())	/* inside the run: no screen redraw (console.h) */
		return false;
	wl_stop = true;
	return true;
}

static int workload_refuse(struct workload_result *res, const char *fmt, const char *why)
{
	res->status = WORKLOAD_REFUSED;
	ksnprintf(res->error, sizeof(res->error), fmt, why);
	return res->status;
}

static uint64_t workload_ticks(uint64_t usec)
{
	return usec * (timer_tsc_hz() / US_PER_S);
}

/* --- Linux programs (workload/linux.h) ------------------------------------------- */

/* The program's memory: the window and the arena (identity mapped, opened to ring 3 for the run). */
static uint8_t *workload_linux_user(void *ctx, uint64_t addr, uint64_t len)
{
	const struct wl_run *r = ctx;

	return linux_owns(&r->lx, addr, len) ? (uint8_t *)(uintptr_t)addr : NULL;
}

static void workload_linux_write(void *ctx, const char *s, size_t n)
{
	(void)ctx;
	console_write(s, n);
}

static uint64_t workload_linux_now(void *ctx)
{
	uint64_t hz = timer_tsc_hz(), t = rdtsc();

	(void)ctx;
	if (!hz)
		return 0;
	return t / hz * UINT64_C(1000000000) + t % hz * UINT64_C(1000000000) / hz;
}

static int workload_linux_tls(void *ctx, uint64_t base, uint32_t limit, uint32_t flags,
			      uint32_t *entry)
{
	(void)ctx;
	return mode_user_tls(base, limit, flags, entry);
}

static const struct linux_ops *workload_linux_ops(struct wl_run *r)
{
	static struct linux_ops ops[PERCPU_MAX];
	struct linux_ops *o = &ops[percpu_this()->index];

	*o = (struct linux_ops){ .ctx = r, .user = workload_linux_user, .write = workload_linux_write,
				 .now_ns = workload_linux_now, .set_tls = workload_linux_tls };
	return o;
}

/*
 * A Linux program's system call: registers in (x86-64: RAX, RDI, RSI, RDX,
 * R10, R8, R9; i386: EAX, EBX, ECX, EDX, ESI, EDI, EBP) and the result out
 * in RAX. Exit, or a call nbprof does not answer, sends the program to its
 * exit; the second ends the run with the call's number and name.
 */
static void workload_linux_gate(void *ctx, struct trap_frame *f)
{
	struct wl_run *r = ctx;
	struct linux_call c = { .nr = f->rax };
	const char *name;

	step_sync(f);
	if (r->lx.bits == 64) {
		uint64_t a[6] = { f->rdi, f->rsi, f->rdx, f->r10, f->r8, f->r9 };

		memcpy(c.a, a, sizeof(a));
	} else {
		uint64_t a[6] = { f->rbx, f->rcx, f->rdx, f->rsi, f->rdi, f->rbp };

		memcpy(c.a, a, sizeof(a));
	}
	switch (linux_syscall(&r->lx, workload_linux_ops(r), &c)) {
	case LINUX_CONTINUE:
		f->rax = r->lx.bits == 64 ? c.ret : (uint32_t)c.ret;
		return;
	case LINUX_EXIT:
		f->rax = (uint64_t)r->lx.status;
		break;
	case LINUX_UNKNOWN:
		name = linux_call_name(r->lx.bits, c.nr);
		r->res->status = WORKLOAD_REFUSED;
		ksnprintf(r->res->error, sizeof(r->res->error), "system call %llu (%s) at %#llx: "
			  "nbprof does not answer it (see 'help programs')",
			  (unsigned long long)c.nr, name ? name : "no such call",
			  (unsigned long long)(f->rip - 2));
		f->rax = (uint64_t)-1;
		break;
	}
	user_redirect_exit(f);
}

/* A fixed-address Linux program: its image, heap and stack in the window; no argument registers. */
static int workload_linux_setup(struct wl_run *r)
{
	char err[96];
	uint8_t rnd[LINUX_RANDOM_BYTES];
	uint64_t t = rdtsc();

	for (unsigned i = 0; i < LINUX_RANDOM_BYTES; i++, t = t * 6364136223846793005u + 1)
		rnd[i] = (uint8_t)(t >> 56);
	if (r->ring != 3)
		return workload_refuse(r->res, "%s", "a Linux program runs at ring 3 only: its system "
				       "calls come from there (SYSCALL, int 0x80)");
	r->linux_abi = true;
	if (program_prepare_fixed(r->prog, r->a, workload_linux_ops(r), &r->lx, rnd,
				  cpuid_count(1, 0).edx, &r->call.fn, &r->entry_sp, err, sizeof(err))) {
		r->linux_abi = false;
		return workload_refuse(r->res, "%s", err);
	}
	return 0;
}

/* A user's program: a fresh image, argc in RDI and argv in RSI (SysV ABI). */
static int workload_program_setup(struct wl_run *r)
{
	char err[96];

	struct program *p = (struct program *)program_of(r->a->w);

	if (!p)
		return workload_refuse(r->res, "%s", "the program is no longer loaded");
	if (__atomic_exchange_n(&p->running, 1, __ATOMIC_ACQUIRE))
		return workload_refuse(r->res, "%s", "it is running on the other LP: a program has "
				       "one .data and .bss, so it runs on one LP at a time");
	r->prog = p;
	if (p->layout.fixed)
		return workload_linux_setup(r);
	if (program_prepare(r->prog, r->a, &r->call.fn, &r->call.arg[1], err, sizeof(err)))
		return workload_refuse(r->res, "%s", err);
	r->call.arg[0] = r->a->argc;
	return 0;
}

/*
 * chase's pointers: one per 64-byte line of buf, each to the next line
 * (linear) or to line (a * i + c) mod lines (random; lines a power of two):
 * with a = 1 mod 4 and c odd that map is one cycle through every line
 * (Hull-Dobell), in an order that jumps across the buffer. One pass over
 * the lines, so that the set-up the model steps stays short.
 */
#define CHASE_LINE	64u
#define CHASE_A		UINT64_C(0x5851f42d4c957f2d)
#define CHASE_C		UINT64_C(0x14057b7ef767814f)

static void workload_chase_fill(uintptr_t buf, uint64_t lines, bool random)
{
	for (uint64_t i = 0; i < lines; i++) {
		uint64_t next = random ? (CHASE_A * i + CHASE_C) & (lines - 1) : (i + 1) % lines;

		*(uintptr_t *)(buf + (uintptr_t)(i * CHASE_LINE)) = buf + (uintptr_t)(next * CHASE_LINE);
	}
}

/*
 * `stores MODE N`: the function, its stride and the buffer it needs: a page
 * for forward, 4 MiB and a page for alias, N strides for the others.
 */
static int workload_stores_setup(struct wl_run *r, enum stores_mode mode, uint64_t n)
{
	static char *const fn[STORES_NMODES] = {
		[STORES_FORWARD] = wl_st_forward, [STORES_ALIAS] = wl_st_alias,
		[STORES_FILL] = wl_st_stride, [STORES_NT] = wl_st_nt, [STORES_NTSPARSE] = wl_st_nt,
	};
	static const uint64_t stride[STORES_NMODES] = {
		[STORES_FILL] = 64, [STORES_NT] = 4, [STORES_NTSPARSE] = 64,
	};
	uint64_t bytes = mode == STORES_FORWARD ? MEM_PAGE_SIZE
			 : mode == STORES_ALIAS ? (UINT64_C(4) << 20) + MEM_PAGE_SIZE : n * stride[mode];

	r->buf_pages = (bytes + MEM_PAGE_SIZE - 1) / MEM_PAGE_SIZE;
	r->buf = mem_alloc_pages(r->buf_pages);
	if (!r->buf)
		return workload_refuse(r->res, "stores: %s", "cannot allocate the buffer");
	r->call.fn = (uintptr_t)fn[mode];
	r->call.arg[0] = r->buf;
	r->call.arg[1] = n;
	r->call.arg[2] = stride[mode];
	return 0;
}

/* Function and arguments; resources. 0, or a refusal. */
static int workload_setup(struct wl_run *r)
{
	const uint64_t *v = r->a->v;
	uint64_t *arg = r->call.arg;

	switch (r->a->w->id) {
	case WL_EMPTY:	r->call.fn = (uintptr_t)wl_empty; break;
	case WL_LOOP:	r->call.fn = (uintptr_t)wl_loop; arg[0] = v[0]; break;
	case WL_BRANCH:
		r->call.fn = (uintptr_t)branch_fns[v[0]];
		arg[0] = v[1];
		arg[1] = v[2];
		break;
	case WL_CALLS:	r->call.fn = (uintptr_t)wl_calls; arg[0] = v[0]; arg[1] = v[1]; break;
	case WL_INDIRECT: r->call.fn = (uintptr_t)wl_indirect; arg[0] = v[0]; break;
	case WL_MEMWALK:
		r->buf_pages = (v[0] + MEM_PAGE_SIZE - 1) / MEM_PAGE_SIZE;
		r->buf = mem_alloc_pages(r->buf_pages);
		if (!r->buf)
			return workload_refuse(r->res, "memwalk: %s", "cannot allocate the buffer");
		r->call.fn = (uintptr_t)wl_memwalk;
		arg[0] = r->buf;
		arg[1] = v[0];
		arg[2] = v[1];
		arg[3] = v[2];
		break;
	case WL_CHASE:
		r->buf_pages = (v[1] + MEM_PAGE_SIZE - 1) / MEM_PAGE_SIZE;
		r->buf = mem_alloc_pages(r->buf_pages);
		if (!r->buf)
			return workload_refuse(r->res, "chase: %s", "cannot allocate the buffer");
		if (v[0] && (v[1] / CHASE_LINE & (v[1] / CHASE_LINE - 1)))
			return workload_refuse(r->res, "chase: %s", "random needs SIZE / 64 to be a "
					       "power of two (its order is a full-period LCG)");
		workload_chase_fill(r->buf, v[1] / CHASE_LINE, v[0] != 0);
		r->call.fn = (uintptr_t)wl_chase;
		arg[0] = r->buf;
		arg[1] = v[2];
		break;
	case WL_COPY:
		r->buf_pages = (2 * v[0] + MEM_PAGE_SIZE - 1) / MEM_PAGE_SIZE;
		r->buf = mem_alloc_pages(r->buf_pages);
		if (!r->buf)
			return workload_refuse(r->res, "copy: %s", "cannot allocate the buffer");
		r->call.fn = (uintptr_t)wl_copy;
		arg[0] = r->buf;
		arg[1] = v[0];
		break;
	case WL_STORES:
		return workload_stores_setup(r, (enum stores_mode)v[0], v[1]);
	case WL_SPIN:
	case WL_HALT:
		if (!timer_tsc_hz())
			return workload_refuse(r->res, "%s: the TSC rate is unknown (calibration failed)",
					       r->a->w->name);
		if (r->a->w->id == WL_HALT && !lapic_present())
			return workload_refuse(r->res, "%s", "halt: no local APIC timer to wake up");
		r->call.fn = (uintptr_t)(r->a->w->id == WL_SPIN ? wl_spin : wl_halt);
		arg[0] = workload_ticks(v[0]);
		break;
	case WL_SYNTHETIC: r->call.fn = (uintptr_t)wl_synthetic; arg[0] = v[1]; break;
	case WL_FAULT_USER: r->call.fn = (uintptr_t)wl_fault_user; arg[0] = (uintptr_t)&wl_kernel_word; break;
	case WL_SNIPPET: r->call.fn = snippet_entry(); break;
	case WL_FPMIX:
		if (!fpu_simd_ready())
			return workload_refuse(r->res, "fpmix: %s", "this logical processor has no "
					       "x87, MMX, SSE and SSE2 (CPUID.1:EDX bits 0, 23-26) to enable");
		r->call.fn = (uintptr_t)wl_fpmix;
		arg[0] = v[0];
		break;
	case WL_FPASSIST:
		if (!fpu_simd_ready())
			return workload_refuse(r->res, "fpassist: %s", "this logical processor has no "
					       "x87, MMX, SSE and SSE2 (CPUID.1:EDX bits 0, 23-26) to enable");
		r->call.fn = (uintptr_t)wl_fpassist;
		arg[0] = v[0];
		arg[1] = v[1] ? 0x1fc0 : 0x1f80;	/* MXCSR: DAZ is bit 6 (SDM Vol. 1 10.2.3.4) */
		break;
	case WL_SMC:	r->call.fn = (uintptr_t)wl_smc; arg[0] = v[0]; break;
	case WL_PROGRAM:
		return workload_program_setup(r);
	default:
		return workload_refuse(r->res, "%s", "unknown workload");
	}
	return 0;
}

/* int 0x81 from the synthetic workload. */
static void workload_synthetic_gate(void *ctx, struct trap_frame *f)
{
	struct wl_run *r = ctx;
	const struct workload_hooks *h = r->h;

	step_sync(f);
	r->res->synthetic++;
	if (h && h->synthetic)
		h->synthetic(h->ctx, r->res->lp, (uint8_t)(f->cs & 3), r->a->spec, 1);
}

/* write(buf, len): the bytes must be readable at the program's own CPL. */
static uint64_t workload_program_write(struct trap_frame *f)
{
	uint64_t buf = f->rdi, len = f->rsi;

	if (len > NB_WRITE_MAX || (len && !paging_is_mapped(buf, len, (f->cs & 3) == 3)))
		return (uint64_t)-1;
	console_write((const char *)(uintptr_t)buf, (size_t)len);
	return len;
}

/* int 0x82 from a program: console output and counting markers. */
static void workload_program_gate(void *ctx, struct trap_frame *f)
{
	struct wl_run *r = ctx;
	const struct workload_hooks *h = r->h;

	step_sync(f);
	switch (f->rax) {
	case NB_CALL_WRITE:
		f->rax = workload_program_write(f);
		break;
	case NB_CALL_COUNT:
		if (h && h->mark)
			h->mark(h->ctx, r->res->lp, f->rdi != 0);
		f->rax = 0;
		break;
	default:
		f->rax = (uint64_t)-1;
	}
}

static void workload_abort(struct trap_frame *f)
{
	if ((f->cs & 3) == 3)
		user_redirect_exit(f);
	else
		f->rip = (uint64_t)(uintptr_t)wl_ring0_abort;
}

/*
 * LAPIC timer: during `halt` only a wake-up; during an unstepped program
 * (which runs with RFLAGS.IF set, so the tick lands in its code) the
 * watchdog: Ctrl-C or the time limit sends the program to its exit.
 */
static void workload_tick(struct trap_frame *f)
{
	struct wl_run *r = watched[percpu_this()->index];

	if (!r) {
		step_sync(f);
		return;
	}
	r->res->ticks++;
	if (r->h && r->h->tick)
		r->h->tick(r->h->ctx, r->res->lp);
	/* at CPL 0 only inside the workload's own text: elsewhere (a gate) the next tick */
	if ((f->cs & 3) == 0 && !r->prog && (f->rip < (uintptr_t)__workload_text_start ||
					     f->rip >= (uintptr_t)__workload_text_end))
		return;
	if (!r->res->timed_out && rdtsc() >= r->deadline)
		r->res->timed_out = true;
	else if (!workload_interrupted())
		return;
	r->res->status = WORKLOAD_INTERRUPTED;
	workload_abort(f);
}

void workload_set_limits(const struct program_limits *l)
{
	limits = *l;
}

void workload_get_limits(struct program_limits *l)
{
	*l = limits;
}

/*
 * A stepped program is polled by the stepper: Ctrl-C, and (with a
 * calibrated TSC) the stepping limit, after which it is stopped as one
 * that never returns from main (workload_stop_reason says so).
 */
static bool workload_step_interrupted(void)
{
	struct wl_run *r = stepping[percpu_this()->index];

	if (r && rdtsc() >= r->deadline) {
		r->res->timed_out = true;
		return true;
	}
	return workload_interrupted();
}

static void workload_step_limit_arm(struct wl_run *r)
{
	unsigned lp = percpu_this()->index;

	stepping[lp] = NULL;
	if (!r->prog || !limits.stepped_s || !timer_tsc_hz())
		return;
	r->deadline = rdtsc() + (uint64_t)limits.stepped_s * timer_tsc_hz();
	stepping[lp] = r;
}

static void workload_step_begin(struct wl_run *r)
{
	struct step_run s = {
		.entry = r->call.fn,
		.stop_rip = r->ring == 3 ? (uintptr_t)wl_user_exit : (uintptr_t)wl_ring0_return,
		.text_start = r->prog ? r->prog->base + r->prog->layout.text_lo
				      : (uintptr_t)__workload_text_start,
		.text_end = r->prog ? r->prog->base + r->prog->layout.text_hi
				    : (uintptr_t)__workload_text_end,
		.lp = r->res->lp, .h = r->h, .counts = &r->res->step,
		.interrupted = workload_step_interrupted, .abort = workload_abort,
	};

	workload_step_limit_arm(r);
	step_begin(&s);
}

static int workload_guarded(void *arg)
{
	struct wl_run *r = arg;

	if (r->h && r->h->begin)
		r->h->begin(r->h->ctx, r->res->lp);
	if (r->prog && r->h && r->h->mark && program_has_symbol(r->prog, PROGRAM_REGION_SYMBOL))
		r->h->mark(r->h->ctx, r->res->lp, false);	/* counts only between its markers */
	if (r->step)
		workload_step_begin(r);
	r->tsc0 = rdtsc();
	r->res->ret = r->ring == 3 ? user_call(&r->call) : wl_call_ring0(&r->call);
	return 0;
}

/* The caller runs the LAPIC timer itself (record's polling): it is not the watchdog's. */
static bool workload_timer_taken(void)
{
	return !(lapic_read(LAPIC_LVT_TIMER) & LAPIC_LVT_MASKED) && lapic_read(LAPIC_TIMER_INITIAL);
}

/*
 * An unstepped run cannot be polled by the stepper: it runs with interrupts
 * enabled and the LAPIC timer as its watchdog (Ctrl-C; a program also stops
 * after its unstepped limit, PROGRAM_TIME_LIMIT_S seconds unless `programs
 * --timeout unstepped=S` set another). `halt` keeps its own wake-up timer.
 * Without a calibrated TSC or a local APIC a run has neither.
 */
static bool watchdog_off;	/* workload_set_watchdog */

void workload_set_watchdog(bool on)
{
	watchdog_off = !on;
}

static void workload_watchdog(struct wl_run *r)
{
	if (r->step || watchdog_off || r->a->w->id == WL_HALT || !lapic_present() || !timer_tsc_hz() ||
	    !timer_lapic_hz() || workload_timer_taken())
		return;
	r->watchdog = true;
	r->deadline = r->prog ? rdtsc() + (uint64_t)limits.unstepped_s * timer_tsc_hz() : UINT64_MAX;
	r->res->limit_s = limits.unstepped_s;
	r->call.rflags |= RFLAGS_IF;
}

static int workload_prepare_ring(struct wl_run *r)
{
	uint64_t rflags = read_rflags() & ~RFLAGS_TF;

	if (r->step)
		rflags |= RFLAGS_TF;
	r->call.rflags = rflags;
	workload_watchdog(r);
	if (r->ring != 3)
		return 0;
	unsigned lp = percpu_this()->index;

	if (!user_stack[lp])
		user_stack[lp] = mem_alloc_pages(USER_STACK_PAGES);
	if (!user_stack[lp])
		return workload_refuse(r->res, "%s", "cannot allocate the user stack");
	r->user = (struct user_run){
		.fn = r->call.fn, .arg = { r->call.arg[0], r->call.arg[1], r->call.arg[2], r->call.arg[3] },
		.rflags = r->call.rflags,
		.stack_base = user_stack[lp], .stack_size = USER_STACK_PAGES * MEM_PAGE_SIZE,
		.extra_base = r->linux_abi ? r->lx.arena_lo : r->buf,
		.extra_len = r->linux_abi ? LINUX_ARENA_SIZE : r->buf_pages * MEM_PAGE_SIZE,
		.prog_base = r->linux_abi ? r->lx.lo : r->prog ? r->prog->base : 0,
		.prog_len = r->linux_abi ? r->lx.hi - r->lx.lo
			    : r->prog ? r->prog->pages * MEM_PAGE_SIZE : 0,
		.entry_sp = r->linux_abi ? r->entry_sp : 0,
		.linux_abi = r->linux_abi,
	};
	if (user_prepare(&r->user, &r->call))
		return workload_refuse(r->res, "%s", "cannot make the workload pages user-accessible");
	return 0;
}

static void workload_timer(struct wl_run *r, bool on)
{
	uint64_t us = !r->watchdog ? HALT_WAKE_US : r->prog ? PROGRAM_TICK_US : WORKLOAD_TICK_US;

	if (r->a->w->id != WL_HALT && !r->watchdog)
		return;
	if (on) {
		watched[percpu_this()->index] = r->watchdog ? r : NULL;
		/* shared by both LPs' runs, so it stays installed */
		idt_set_handler(LAPIC_TIMER_VECTOR, workload_tick);
		lapic_timer_start((uint32_t)(timer_lapic_hz() / (US_PER_S / us)), LAPIC_TIMER_VECTOR,
				  true);
	} else {
		lapic_timer_stop();
		watched[percpu_this()->index] = NULL;
	}
}


static void workload_execute(struct wl_run *r)
{
	struct workload_result *res = r->res;
	int g;

	workload_timer(r, true);
	user_set_synthetic(workload_synthetic_gate, r);
	user_set_call(workload_program_gate, r);
	if (r->linux_abi)
		user_set_linux(workload_linux_gate, r);
	user_set_gate(r->h);
	g = arch_run_guarded(workload_guarded, r);
	if (g == ARCH_GUARD_FAULTED)
		user_gate_shut();	/* a fault left the workload before the runner's shut */
	user_set_gate(NULL);
	res->tsc_cycles = rdtsc() - r->tsc0;
	if (r->step && step_end())
		res->status = WORKLOAD_INTERRUPTED;
	stepping[percpu_this()->index] = NULL;
	if (r->ring == 3)
		user_cleanup(&r->user);
	user_set_synthetic(NULL, NULL);
	user_set_call(NULL, NULL);
	if (r->linux_abi)
		user_set_linux(NULL, NULL);
	workload_timer(r, false);
	if (g == ARCH_GUARD_FAULTED) {
		res->status = WORKLOAD_FAULTED;
		res->fault_vector = arch_last_guard_vector();
	}
	if (r->h && r->h->end)
		r->h->end(r->h->ctx, res->lp);
}

/*
 * Every LP's user stack, allocated at boot rather than by the first ring-3
 * run: an allocation zeroes its pages, and one inside a counting window
 * would make the first run of a command count more than the next ones.
 */
void workload_init(void)
{
	uint64_t probe;

	for (unsigned i = 0; i < percpu_count() && i < PERCPU_MAX; i++)
		if (!user_stack[i])
			user_stack[i] = mem_alloc_pages(USER_STACK_PAGES);
	/*
	 * The same for the page tables: opening a page to ring 3 splits the
	 * large page around it once (arch/x86/64/paging.c, arch/x86/32/paging.c). Open the workload text,
	 * each user stack and the first free 2 MiB (where a workload's buffer
	 * comes from) once now.
	 */
	user_init();		/* the ring-3 gates, installed on the first run otherwise */
	probe = mem_alloc_pages(WL_PROBE_PAGES);
	for (unsigned i = 0; i < percpu_count() && i < PERCPU_MAX; i++) {
		struct user_run u = {
			.fn = (uintptr_t)wl_empty, .stack_base = user_stack[i],
			.stack_size = USER_STACK_PAGES * MEM_PAGE_SIZE,
			.extra_base = probe, .extra_len = probe ? WL_PROBE_PAGES * MEM_PAGE_SIZE : 0,
		};
		struct wl_call c;

		if (user_stack[i] && user_prepare(&u, &c) == 0)
			user_cleanup(&u);
	}
	if (probe)
		mem_free_pages(probe, WL_PROBE_PAGES);
}

int workload_run(const struct workload_args *a, int ring, bool step,
		 const struct workload_hooks *h, struct workload_result *res)
{
	struct wl_run r = { .a = a, .h = h, .res = res, .ring = ring, .step = step };

	*res = (struct workload_result){ .status = WORKLOAD_OK, .fault_vector = -1,
					 .cpl = (uint8_t)ring, .lp = workload_lp() };
	if (ring != 0 && ring != 3)
		return workload_refuse(res, "%s", "the ring must be 0 or 3");
	if (ring == 3 && a->w->ring3_refusal)
		return workload_refuse(res, "cannot run at ring 3: %s", a->w->ring3_refusal);
	user_init();
	if (workload_setup(&r) == 0 && workload_prepare_ring(&r) == 0) {
		workload_execute(&r);
	}
	if (r.buf)
		mem_free_pages(r.buf, r.buf_pages);
	if (r.linux_abi)
		program_release_fixed();
	if (r.prog)
		__atomic_store_n(&((struct program *)r.prog)->running, 0, __ATOMIC_RELEASE);
	return res->status;
}

/* --- two logical processors ------------------------------------------------------ */

int workload_sibling(const char **why)
{
	const struct percpu *me = percpu_get(0);

	for (unsigned i = 1; i < smp_count(); i++) {
		const struct percpu *pc = smp_lp(i);

		if (pc->topo.package != me->topo.package || pc->topo.core != me->topo.core ||
		    pc->topo.smt == me->topo.smt)
			continue;
		if (pc->state == LP_IDLE || pc->state == LP_RUNNING)
			return (int)i;
		*why = "LP0's Hyper-Threading sibling did not start (see 'cpu')";
		return -1;
	}
	*why = smp_count() > 1 ? "no Hyper-Threading sibling: the other logical processors are "
				 "separate cores with their own PMU"
			       : "no Hyper-Threading sibling: this machine has one logical processor";
	return -1;
}

static void workload_job_fn(void *arg)
{
	struct workload_job *j = arg;

	workload_run(j->a, j->ring, j->step, j->h, &j->res);
}

static void workload_job_refuse(struct workload_job *j, const char *why)
{
	j->res = (struct workload_result){ .fault_vector = -1 };
	workload_refuse(&j->res, "%s", why);
}

/*
 * Wait for the sibling's job, polling Ctrl-C on LP0 (the sibling never
 * reads the UART). In the model's counting window the wait is not stepped
 * (step_hold): how many pause loops it takes depends on how long the
 * sibling runs, so its count would be noise; a Pentium 4 counts them at
 * CPL 0 all the same (docs/guide/counting.md).
 */
static void workload_job_wait(unsigned sib, struct workload_job *j)
{
	bool irq_off = !(read_rflags() & RFLAGS_IF);
	uint64_t held;
	int r;

	/* LP0 takes interrupts while it waits: a PMI the sibling's events raise for LP0 (T0). */
	if (irq_off)
		cpu_sti();
	held = step_hold();
	while ((r = smp_wait_us(sib, PAIR_POLL_US)) == SMP_ETIMEDOUT)
		if (console_poll_ctrl_c())
			wl_stop = true;
	step_release(held);
	if (irq_off)
		cpu_cli();
	if (r == SMP_EFAULT || r == SMP_ENOLP) {
		j->res.status = WORKLOAD_FAULTED;
		j->res.fault_vector = smp_fault_vector(sib);
	}
}

static int workload_job_start(int sib, struct workload_job *j)
{
	j->res = (struct workload_result){ .status = WORKLOAD_OK, .fault_vector = -1 };
	if (smp_call((unsigned)sib, workload_job_fn, j) == 0)
		return 0;
	workload_job_refuse(j, "LP0's sibling is busy");
	return -1;
}

int workload_run_lps(struct workload_job jobs[2], enum workload_start start)
{
	const char *why = "";
	int sib = -1;
	bool lp1_started = false;

	wl_stop = false;
	if (jobs[1].a) {
		sib = workload_sibling(&why);
		if (sib < 0) {
			workload_job_refuse(&jobs[1], why);
			return -1;
		}
		if (start == WORKLOAD_TOGETHER) {
			if (workload_job_start(sib, &jobs[1]))
				return -1;
			lp1_started = true;
		}
	}
	if (jobs[0].a)
		workload_run(jobs[0].a, jobs[0].ring, jobs[0].step, jobs[0].h, &jobs[0].res);
	if (jobs[1].a && !lp1_started) {
		if (wl_stop || (jobs[0].a && jobs[0].res.status == WORKLOAD_INTERRUPTED)) {
			jobs[1].res = (struct workload_result){ .status = WORKLOAD_INTERRUPTED,
								.fault_vector = -1 };
			return 0;
		}
		if (workload_job_start(sib, &jobs[1]))
			return -1;
		lp1_started = true;
	}
	if (lp1_started)
		workload_job_wait((unsigned)sib, &jobs[1]);
	return 0;
}
