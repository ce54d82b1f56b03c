/*
 * workloads.c - run a built-in workload once, at CPL 0 or 3, optionally
 * single-stepped, and feed the counting side's hooks.
 *
 * The bodies are in arch/x86/workloads.S, the table in workload.c, ring-3
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
 * ends as WORKLOAD_INTERRUPTED. Unstepped runs are not interruptible; their
 * parameter ranges keep them short (spin/halt at most 10 s; loop 2^32-1
 * iterations is about 13 G instructions, the longest).
 */
#include "arch/x86/cpu.h"
#include "arch/x86/idt.h"
#include "arch/x86/lapic.h"
#include "arch/x86/step.h"
#include "arch/x86/timer.h"
#include "arch/x86/user.h"
#include "kernel/cpuid.h"
#include "kernel/mem.h"
#include "kernel/printf.h"
#include "kernel/workload.h"
#include "shell/platform.h"

#define USER_STACK_PAGES	4	/* 16 KiB: calls DEPTH 256 needs 4 KiB */
#define HALT_WAKE_US		100	/* LAPIC timer period while halting */
#define US_PER_S		UINT64_C(1000000)

/* Workload bodies (arch/x86/workloads.S). */
#define WL_FN(name) extern char name[] __attribute__((visibility("hidden")))
WL_FN(wl_empty);
WL_FN(wl_loop);
WL_FN(wl_branch_taken);
WL_FN(wl_branch_nottaken);
WL_FN(wl_branch_alternate);
WL_FN(wl_branch_random);
WL_FN(wl_calls);
WL_FN(wl_memwalk);
WL_FN(wl_copy);
WL_FN(wl_spin);
WL_FN(wl_halt);
WL_FN(wl_synthetic);
WL_FN(wl_fault_user);

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
};

static uint64_t user_stack;

static uint8_t workload_lp(void)
{
	struct cpuid_raw raw;
	struct cpu_info ci;

	cpu_read_cpuid(&raw);
	cpuid_decode(&raw, &ci);
	return ci.threads_per_core > 1 ? (uint8_t)(ci.initial_apic_id % ci.threads_per_core) : 0;
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
	case WL_COPY:
		r->buf_pages = (2 * v[0] + MEM_PAGE_SIZE - 1) / MEM_PAGE_SIZE;
		r->buf = mem_alloc_pages(r->buf_pages);
		if (!r->buf)
			return workload_refuse(r->res, "copy: %s", "cannot allocate the buffer");
		r->call.fn = (uintptr_t)wl_copy;
		arg[0] = r->buf;
		arg[1] = v[0];
		break;
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

/* LAPIC timer during `halt`: only a wake-up. */
static void workload_halt_tick(struct trap_frame *f)
{
	step_sync(f);
}

static void workload_abort(struct trap_frame *f)
{
	if ((f->cs & 3) == 3)
		user_redirect_exit(f);
	else
		f->rip = (uint64_t)(uintptr_t)wl_ring0_abort;
}

static void workload_step_begin(struct wl_run *r)
{
	struct step_run s = {
		.entry = r->call.fn,
		.stop_rip = r->ring == 3 ? (uintptr_t)wl_user_exit : (uintptr_t)wl_ring0_return,
		.text_start = (uintptr_t)__workload_text_start,
		.text_end = (uintptr_t)__workload_text_end,
		.lp = r->res->lp, .h = r->h, .res = r->res,
		.interrupted = plat_interrupted, .abort = workload_abort,
	};

	step_begin(&s);
}

static int workload_guarded(void *arg)
{
	struct wl_run *r = arg;

	if (r->h && r->h->begin)
		r->h->begin(r->h->ctx, r->res->lp);
	if (r->step)
		workload_step_begin(r);
	r->tsc0 = rdtsc();
	r->res->ret = r->ring == 3 ? user_call(&r->call) : wl_call_ring0(&r->call);
	return 0;
}

static int workload_prepare_ring(struct wl_run *r)
{
	uint64_t rflags = read_rflags() & ~RFLAGS_TF;

	if (r->step)
		rflags |= RFLAGS_TF;
	r->call.rflags = rflags;
	if (r->ring != 3)
		return 0;
	if (!user_stack)
		user_stack = mem_alloc_pages(USER_STACK_PAGES);
	if (!user_stack)
		return workload_refuse(r->res, "%s", "cannot allocate the user stack");
	r->user = (struct user_run){
		.fn = r->call.fn, .arg = { r->call.arg[0], r->call.arg[1], r->call.arg[2], r->call.arg[3] },
		.rflags = r->call.rflags,
		.stack_base = user_stack, .stack_size = USER_STACK_PAGES * MEM_PAGE_SIZE,
		.extra_base = r->buf, .extra_len = r->buf_pages * MEM_PAGE_SIZE,
	};
	if (user_prepare(&r->user, &r->call))
		return workload_refuse(r->res, "%s", "cannot make the workload pages user-accessible");
	return 0;
}

static void workload_timer(struct wl_run *r, bool on)
{
	if (r->a->w->id != WL_HALT)
		return;
	if (on) {
		idt_set_handler(LAPIC_TIMER_VECTOR, workload_halt_tick);
		lapic_timer_start((uint32_t)(timer_lapic_hz() / (US_PER_S / HALT_WAKE_US)),
				  LAPIC_TIMER_VECTOR, true);
	} else {
		lapic_timer_stop();
		idt_set_handler(LAPIC_TIMER_VECTOR, NULL);
	}
}

static void workload_execute(struct wl_run *r)
{
	struct workload_result *res = r->res;
	int g;

	workload_timer(r, true);
	user_set_synthetic(workload_synthetic_gate, r);
	g = arch_run_guarded(workload_guarded, r);
	res->tsc_cycles = rdtsc() - r->tsc0;
	if (r->step && step_end())
		res->status = WORKLOAD_INTERRUPTED;
	if (r->ring == 3)
		user_cleanup(&r->user);
	user_set_synthetic(NULL, NULL);
	workload_timer(r, false);
	if (g == ARCH_GUARD_FAULTED) {
		res->status = WORKLOAD_FAULTED;
		res->fault_vector = arch_last_guard_vector();
	}
	if (r->h && r->h->end)
		r->h->end(r->h->ctx, res->lp);
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
	return res->status;
}
