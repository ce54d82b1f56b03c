/*
 * perf.c - counting on the target, the same for every backend: backend
 * choice, counting runs with 64-bit totals, the overflow interrupt and its
 * poll, each LP's LVT PC, the PMU lock and the register-write trace. What a
 * backend does differently is behind its ops (prof/backend.h); nothing here
 * asks which one it is.
 *
 * The overflow path runs one way (docs/dev/sampling-path.md): the LVT
 * PC vector or the NMI enters perf_pmi_handler, which takes the PMU lock
 * once, and for each overflowed counter the calling LP owns (p4_cccr_pmi_lp:
 * OVF_PMI_T1 alone = LP1, else LP0) stops it on a null event, settles its
 * value from a read before and after the stop (Xeon MP errata O8/O9, PMU
 * reference 6), adds the events since the last write to its 64-bit base, calls
 * the sample sink once, reloads it twice (N15) with what the sink returned
 * and restarts it. Then the LP unmasks its own LVT PC (OVF was cleared
 * first, PMU reference 6: NetBurst masks the entry when it delivers a PMI) and
 * the backend may re-raise. "Overflowed" is CCCR.OVF, or - Linux's and
 * OProfile's "unflagged" test - bit 39 clear on a counter that was written
 * negative. The LAPIC EOI for the vector is sent by the interrupt
 * dispatcher (arch/x86/idt.c); an NMI needs none.
 *
 * Hyper-Threading: each LP has its own LVT PC (PMU reference 6, 8); LP0 sets
 * the entries' values when a count starts, and each LP writes its own entry
 * when its workload begins (the workload hooks), so the sibling takes the
 * PMIs OVF_PMI_T1 sends it on hardware and in the model alike. The PMU lock
 * belongs to an LP and may be retaken by it; an NMI that arrives while its
 * LP holds the lock is handled when the lock is released, so a count's
 * stop, a poll or a model call is never cut in two by the handler.
 */
#include "arch/x86/console.h"
#include "arch/x86/cpu.h"
#include "arch/x86/idt.h"
#include "arch/x86/lapic.h"
#include "arch/x86/percpu.h"
#include "arch/x86/step.h"
#include "arch/x86/timer.h"
#include "arch/x86/user.h"
#include "lib/printf.h"
#include "pmu/p4_apply.h"
#include "pmu/p4_encode.h"
#include "pmu/p4_regs.h"
#include "prof/backend.h"
#include "prof/perf.h"
#include "prof/storm.h"

#define PERF_NLP	2		/* logical processors sharing one PMU (T0, T1) */

struct perf_trace_bus {
	struct msr_bus bus;		/* first member */
	struct msr_bus *inner;
};

/* The backend in use: its ops and what perf_use asked of them once. */
static struct {
	const struct perf_backend_ops *ops;	/* NULL: no backend */
	const volatile uint64_t *bus_tsc;	/* ops->bus_tsc, or NULL (also without a backend) */
	bool glue;				/* bus_tsc or ops->unmasked: perf_glue_unmasked */
	struct perf_trace_bus trace;		/* `pmu trace` around ops->bus() (trace.inner) */
} be;
static struct perf_info info;
/* Where the overflow path delivers: the running count, the sample sink, the PEBS hook. */
static struct {
	struct perf_count *count;	/* the running count; NULL: none */
	perf_sink_fn *sink;
	void *sink_ctx;
	perf_pebs_fn *pebs_hook;
	perf_pebs_refilled_fn *pebs_refilled;
	void *pebs_ctx;
	bool stopping;			/* perf_count_stop's poll runs (struct perf_overflow at_stop) */
} run;

/* Each LP's LVT PC entry as set; an LP writes only its own. */
static struct {
	volatile uint32_t lp[PERF_NLP];
	bool have_lapic;		/* lapic_present(), asked once at perf_init */
} lvt;

/*
 * The PMU lock: one LP at a time, retaken by its owner; NMIs that land
 * meanwhile wait. Each LP's acquisitions beyond its first (nested) are
 * counted apart from the owner, so that code which interrupts the first
 * acquisition or the release and takes the lock nested - the model's step
 * handler, which steps the kernel's own code in the counting window
 * (arch/x86/step.h) and feeds the model under the lock - leaves it as it
 * found it: with one depth set after the acquisition, a #DB between the two
 * made the nested release free the lock the interrupted code had just
 * taken, and a PMI then reloaded a counter inside perf_count_stop between
 * its two reads (a total 2^32 too large).
 */
static struct {
	volatile uint32_t owner;	/* LP index + 1 holding it; 0 = free */
	/*
	 * A bit per percpu index: an NMI came while it held the lock. Beside
	 * owner, so that a release checks it through the same base (the PMI
	 * exit's tail, perf_exit_last); only the holder sets its own bit.
	 */
	volatile uint32_t nmi_deferred;
	unsigned nested[PERCPU_MAX];
} pmu_lock;

_Static_assert(PERCPU_MAX <= 32, "pmu_lock.nmi_deferred has a bit per LP");

#define PERF_PENDING_WAIT	100000u	/* pause loops a pending PMI may take to come in */

static void perf_pmi_handler(struct trap_frame *f, uint64_t *by);

/* ---- the PMU lock, the LPs ---------------------------------------------------- */

/* The LP (SMT ID T0/T1) of a percpu block: perf_this_lp's rule. */
static inline unsigned perf_lp_of(const struct percpu *p)
{
	return p->topo.smt < PERF_NLP ? p->topo.smt : 0;
}

unsigned perf_this_lp(void)
{
	return perf_lp_of(percpu_this());
}

/* Take the PMU lock for the LP whose percpu index + 1 is me (it does not hold it). */
static inline void perf_lock_take(uint32_t me)
{
	uint32_t free_ = 0;

	if (!__atomic_compare_exchange_n(&pmu_lock.owner, &free_, me, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED)) {
		/* a wait as long as the sibling takes: not stepped (arch/x86/step.h) */
		uint64_t held = step_hold();

		do {
			free_ = 0;
			cpu_pause();
		} while (!__atomic_compare_exchange_n(&pmu_lock.owner, &free_, me, false,
						      __ATOMIC_ACQUIRE, __ATOMIC_RELAXED));
		step_release(held);
	}
}

bool perf_lock_held(void)
{
	return __atomic_load_n(&pmu_lock.owner, __ATOMIC_ACQUIRE) == percpu_this()->index + 1;
}

/* The lock was not free: this LP's own (nested), or the sibling's (a wait). */
static __attribute__((noinline)) void perf_lock_busy(uint32_t me)
{
	if (__atomic_load_n(&pmu_lock.owner, __ATOMIC_ACQUIRE) == me) {
		pmu_lock.nested[me - 1]++;
		return;
	}
	perf_lock_take(me);
}

/* Free is the common case (every stepped instruction takes it): one attempt inline. */
void perf_lock(void)
{
	uint32_t me = percpu_this()->index + 1, free_ = 0;

	if (!__atomic_compare_exchange_n(&pmu_lock.owner, &free_, me, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		perf_lock_busy(me);
}

/* An NMI came while LP idx held the lock: its handler runs now (out of line: rare). */
static __attribute__((noinline, cold)) void perf_unlock_deferred(unsigned idx)
{
	/* stepped in the counting window when the code releasing the lock is: a P4 counts it */
	__atomic_fetch_and(&pmu_lock.nmi_deferred, ~(UINT32_C(1) << idx), __ATOMIC_RELAXED);
	perf_pmi_handler(NULL, NULL);
	idt_exit_call_now();	/* not the interrupt's exit: its restart now */
}

/* Release one level of the PMU lock held by the LP with percpu index idx. */
static inline void perf_unlock_as(unsigned idx)
{
	if (pmu_lock.nested[idx] > 0) {
		pmu_lock.nested[idx]--;
		return;
	}
	__atomic_store_n(&pmu_lock.owner, 0, __ATOMIC_RELEASE);
	if (pmu_lock.nmi_deferred & UINT32_C(1) << idx)
		perf_unlock_deferred(idx);
}

/* The caller holds the lock: its owner field names the caller (no percpu lookup per step). */
void perf_unlock(void)
{
	uint32_t owner = __atomic_load_n(&pmu_lock.owner, __ATOMIC_RELAXED);

	if (owner)		/* not held: nothing to release */
		perf_unlock_as(owner - 1);
}

/* LP lp's LVT PC: the value, and the real entry when lp is the calling LP. */
static void perf_lvt_write(unsigned lp, uint32_t v)
{
	lvt.lp[lp] = v;
	if (lp == perf_this_lp() && lvt.have_lapic)
		lapic_write(LAPIC_LVT_PMC, v);
}

uint32_t perf_lvt(unsigned lp)
{
	return lp < PERF_NLP ? lvt.lp[lp] : LAPIC_LVT_MASKED;
}

void perf_lvt_automask(unsigned lp)
{
	if (lp < PERF_NLP)
		perf_lvt_write(lp, lvt.lp[lp] | LAPIC_LVT_MASKED);
}

static uint32_t perf_lvt_value(bool masked)
{
	uint32_t v = info.pmi_mode == PERF_PMI_NMI ? LAPIC_LVT_DELIVERY_NMI : LAPIC_PMI_VECTOR;

	return masked ? v | LAPIC_LVT_MASKED : v;
}

/* Inline on the overflow path (the 32-bit kernel's -Os would call them). */
static inline __attribute__((always_inline)) bool perf_counting_here(void)
{
	return run.count && run.count->running;
}

bool perf_counting(void)
{
	return perf_counting_here();
}

uint64_t perf_feed_chunk(void)
{
	return run.count ? run.count->chunk : UINT64_C(1) << 39;
}

struct perf_pmi_stats *perf_pmi_stats(void)
{
	return &info.pmi;
}

/* ---- backend queries ------------------------------------------------------------- */

const struct perf_info *perf_info(void)
{
	return &info;
}

const char *perf_backend_name(enum perf_backend b)
{
	switch (b) {
	case PERF_BACKEND_HW:		return perf_backend_hw.name;
	case PERF_BACKEND_MODEL:	return perf_backend_model.name;
	default:			return "none";
	}
}

/* The overflow path takes its count's (perf_count.gate_bus, this when the count began). */
struct msr_bus *perf_bus(void)
{
	if (!be.ops)
		return NULL;
	return info.trace ? &be.trace.bus : be.trace.inner;	/* be.ops->bus(), asked at perf_use */
}

bool perf_steps_workloads(void)
{
	return be.ops && be.ops->steps_workloads;
}

const struct perf_window *perf_window_inputs(unsigned lp)
{
	return be.ops && be.ops->window_inputs ? be.ops->window_inputs(lp) : NULL;
}

const char *perf_msr_label(void)
{
	return be.ops && be.ops->msr_label ? be.ops->msr_label() : NULL;
}

void perf_describe(char *buf, size_t n)
{
	if (be.ops)
		be.ops->describe(buf, n);
	else if (n)
		buf[0] = '\0';
}

int perf_inject(unsigned unflagged, unsigned reloads, char *err, size_t n)
{
	if (!perf_can_inject())
		return ksnprintf(err, n, "only the model can be made to misbehave"), -1;
	return be.ops->inject(unflagged, reloads, err, n);
}

bool perf_can_inject(void)
{
	return be.ops && be.ops->inject;
}

int perf_inject_fault(enum perf_fault kind, uint32_t arg, char *err, size_t n)
{
	if (!be.ops || !be.ops->inject_fault)
		return ksnprintf(err, n, "only the model can be made to misbehave"), -1;
	return be.ops->inject_fault(kind, arg, err, n);
}

void perf_cpu_identify(struct cpu_info *ci)
{
	cpu_identify(ci);
	if (be.ops && be.ops->cpu_view)
		be.ops->cpu_view(ci);
}

bool perf_machine_fault(char *buf, size_t n)
{
	return be.ops && be.ops->machine_fault && be.ops->machine_fault(buf, n);
}

int perf_rdpmc(uint32_t ecx, uint64_t *value)
{
	return be.ops && be.ops->rdpmc ? be.ops->rdpmc(ecx, value) : MSR_BUS_EFAULT;
}

enum perf_source perf_event_source(enum p4_event ev, const struct perf_inputs *in)
{
	return be.ops ? be.ops->source(ev, in) : PERF_SOURCE_NONE;
}

/* ---- the traced bus (only while `msr trace on`) -------------------------------- */

static void perf_msr_name(uint32_t msr, char *buf, size_t n)
{
	enum p4_counter c;
	enum p4_escr e;

	if (p4_counter_by_msr(msr, &c))
		ksnprintf(buf, n, "%s", p4_counters[c].name);
	else if (p4_cccr_by_msr(msr, &c))
		ksnprintf(buf, n, "%s", p4_counters[c].cccr_name);
	else if (p4_escr_by_msr(msr, &e))
		ksnprintf(buf, n, "MSR_%s", p4_escrs[e].name);
	else if (msr == MSR_PEBS_ENABLE)
		ksnprintf(buf, n, "MSR_PEBS_ENABLE");
	else if (msr == MSR_PEBS_MATRIX_VERT)
		ksnprintf(buf, n, "MSR_PEBS_MATRIX_VERT");
	else if (msr == MSR_TC_PRECISE_EVENT)
		ksnprintf(buf, n, "MSR_TC_PRECISE_EVENT");
	else if (msr == MSR_IA32_DS_AREA)
		ksnprintf(buf, n, "IA32_DS_AREA");
	else
		ksnprintf(buf, n, "uncore");
}

static int perf_trace_read(struct msr_bus *bus, uint32_t msr, uint64_t *value)
{
	return msr_bus_read(((struct perf_trace_bus *)bus)->inner, msr, value);
}

static int perf_trace_write(struct msr_bus *bus, uint32_t msr, uint64_t value)
{
	int r = msr_bus_write(((struct perf_trace_bus *)bus)->inner, msr, value);
	char name[32];

	if (p4_msr_is_pmu(msr)) {
		perf_msr_name(msr, name, sizeof(name));
		kprintf("wrmsr %XH <- %08llXH (%s)%s%s\n", msr, (unsigned long long)value, name,
			r ? " #GP" : "", perf_this_lp() ? " on LP1" : "");
	}
	return r;
}

void perf_set_trace(bool on)
{
	info.trace = on;
}

/* ---- the overflow path ------------------------------------------------------------ */

void perf_set_sink(perf_sink_fn *fn, void *ctx)
{
	run.sink = fn;
	run.sink_ctx = ctx;
}

/* The LP whose handler takes a counter's overflows (pmu/p4_encode.h). */
static unsigned perf_slot_lp(const struct p4_slot *slot)
{
	return p4_cccr_pmi_lp(slot->cccr_value);
}

/* Counter i of the running count, if it overflowed: total it, sample it, reload it. */
static inline __attribute__((always_inline)) void
perf_overflow_body(struct msr_bus *bus, struct perf_count *s, unsigned i, unsigned cpu,
		   struct trap_frame *f, uint32_t *restart)
{
	const struct p4_counter_desc *d = &p4_counters[s->plan.slot[i].counter];
	uint32_t msr = d->msr, cccr_msr = d->cccr_msr;
	uint64_t cccr, running, stopped, start = s->start[i], next = s->reload[i];	/* read below */
	struct perf_overflow ov;
	bool unflagged;

	/*
	 * The counter before its CCCR: the counter still runs (at CPL 0 it counts
	 * this code), and an overflow between two reads in the other order left
	 * OVF clear beside a wrapped value, which the bit-39 workaround below took
	 * for an overflow without OVF. In this order that overflow shows as OVF.
	 */
	if (msr_bus_read(bus, msr, &running) || msr_bus_read(bus, cccr_msr, &cccr))
		return;
	running &= P4_COUNTER_MASK;
	unflagged = !(cccr & CCCR_OVF) && (start & BIT(39)) && !(running & BIT(39));
	if (!(cccr & CCCR_OVF) && !unflagged)
		return;
	/* Stopped, OVF cleared (p4_counter_quiet) before the value is taken: no event falls between. */
	msr_bus_write(bus, cccr_msr, s->plan.slot[i].cccr_quiet);
	if (msr_bus_read(bus, msr, &stopped))
		stopped = running;
	ov.idx = i;
	ov.cpu = cpu;
	ov.reload = next;
	ov.at_stop = run.stopping;
	ov.raw = p4_counter_settle(running, stopped & P4_COUNTER_MASK);
	ov.events = (ov.raw - start) & P4_COUNTER_MASK;
	info.pmi.overflows++;
	if (unflagged && !s->shut)	/* the gate's shut cleared OVF itself */
		info.pmi.unflagged++;	/* a branch: the 32-bit kernel's 8-byte add of a bool is 14 */
	s->overflows[i]++;
	s->last_events[i] = ov.events;
	s->base[i] += ov.events;
	if (run.sink)	/* f NULL (a replayed NMI, a poll): the sink counts it unattributed */
		next = run.sink(run.sink_ctx, f, &ov);
	if (restart) {		/* restarted at the interrupt's exit (perf_exit_restart) */
		p4_counter_load_msr(bus, msr, next, &info.pmi.mismatches);
		*restart |= UINT32_C(1) << i;
	} else {
		p4_counter_reload_msr(bus, msr, cccr_msr, next,
				      s->shut ? s->plan.slot[i].cccr_quiet : p4_cccr_restart(&s->plan, i),
				      &info.pmi.mismatches);
	}
	s->start[i] = next & P4_COUNTER_MASK;
}

/* perf_overflow_body out of line, its counter restarted at once: the poll's and the stop's. */
static __attribute__((noinline)) void perf_overflow_one(struct msr_bus *bus, struct perf_count *s,
							unsigned i, struct trap_frame *f)
{
	perf_overflow_body(bus, s, i, percpu_this()->index, f, NULL);
}

/*
 * The poll's scan of every counter the calling LP owns (PMU lock held):
 * pmi_mask, set when the count started; the PMI handler runs the same
 * loop inline, its restarts left for its exit. A PEBS counter is not the
 * handler's: the assist reloads it from the DS counter-reset field and its
 * samples are the records (pebs_hook), so an OVF it may hold is neither a
 * sample nor events to add (record_pebs_stop counts its records).
 */
static void perf_scan(unsigned lp, struct trap_frame *f)
{
	if (!perf_counting_here())
		return;
	for (uint32_t m = run.count->pmi_mask[lp]; m; m &= m - 1)
		perf_overflow_one(run.count->gate_bus, run.count, (unsigned)__builtin_ctz(m), f);
}

/*
 * TSC since t0 (step_handler_clock) spent handling: in all, and the calling
 * LP's own share (throttling). A handler the model steps is timed as if it
 * ran unstepped.
 */
static inline __attribute__((always_inline)) void perf_pmi_time(unsigned lp, uint64_t t0)
{
	uint64_t dt = step_handler_clock() - t0;

	info.pmi.tsc_total += dt;	/* under the PMU lock, as every perf_pmi_stats count */
	info.pmi.lp_tsc[lp] += dt;
}

/*
 * The workload's frame while the LP with percpu index cpu (the caller) runs
 * its #DB handler or its int 0x81 gate, else NULL.
 */
static struct trap_frame *perf_wl_frame(unsigned cpu)
{
	struct trap_frame *f = step_handler_frame_of(cpu);

	if (!f)		/* the handler is not stepped: the step handler's own frame, if any */
		f = step_frame_of(cpu);

	return f ? f : user_gate_frame_of(cpu);
}

/* After the unmask: the backend's re-raise, and its share of this handler since b0. */
static void perf_pmi_unmasked(unsigned lp, unsigned cpu, uint64_t b0)
{
	if (be.ops->unmasked)
		be.ops->unmasked(lp);
	if (be.bus_tsc) {
		uint64_t dt = be.bus_tsc[cpu] - b0;

		info.pmi.backend_tsc += dt;
		info.pmi.lp_backend_tsc[lp] += dt;
	}
}

/* ---- the storm guard (prof/storm.h) ------------------------------------------------ */

static struct perf_storm_lp storm[PERF_NLP];
static struct perf_storm_lp tick_storm[PERF_NLP];	/* the poll tick's (perf_poll_tick) */
static unsigned tick_hz;		/* perf_tick's rate; 0: stopped */
static uint64_t tick_tsc;		/* its period in TSC cycles (0: the TSC is not calibrated) */

/*
 * A storm on LP lp (PMU lock held): every counter of the count stops (its
 * quiet CCCR: Enable clear, OVF clear, so no PMI stays asserted), and the
 * request whose overflows kept coming is kept for the error. The LVT PC
 * entry stays masked (the caller does not unmask).
 */
static __attribute__((noinline, cold)) void perf_storm(struct perf_count *s, unsigned lp,
							unsigned pebs)
{
	struct msr_bus *bus = perf_bus();
	unsigned worst = 0;
	int pebs_idx = pebs ? p4_plan_pebs_idx(&s->plan, lp) : -1;

	for (unsigned i = 0; i < s->plan.n; i++) {
		msr_bus_write(bus, p4_counters[s->plan.slot[i].counter].cccr_msr,
			      s->plan.slot[i].cccr_quiet);
		if ((s->pmi_mask[lp] >> i) & 1u && s->last_events[i] >= s->last_events[worst])
			worst = i;
	}
	/* the PEBS buffer's interrupt (no overflow): its request, the one this LP's assist feeds */
	if (pebs_idx >= 0)
		worst = (unsigned)pebs_idx;
	s->storm_pebs = pebs;
	s->storm = true;
	s->storm_lp = (uint8_t)lp;
	s->storm_idx = (uint8_t)worst;
	s->storm_events = s->last_events[worst];
	s->storm_pmis = storm[lp].same + 1;
	step_quiet();		/* the model: nothing left to step for */
}

/*
 * After a PMI's drain and its LVT PC entry's unmask (PMU lock held): true
 * when the handler's own tagged uops since the drain refilled LP lp's PEBS
 * buffer to its threshold - the buffer's interrupt came while the entry
 * was masked and is lost, and every threshold interrupt would bring the
 * next: a storm, found at its first PMI. The entry is masked again.
 */
static __attribute__((noinline, cold)) bool perf_pebs_refilled(struct perf_count *s, unsigned lp)
{
	unsigned n = run.pebs_refilled(run.pebs_ctx, lp);

	if (!n)
		return false;
	perf_lvt_automask(lp);
	perf_storm(s, lp, n);
	s->storm_pebs_early = true;
	return true;
}

/*
 * The counters a PMI handler restarts, written at the very end of its
 * interrupt's exit (idt.h idt_exit_call), so that what a counter counting
 * CPL 0 counts of the handler after its restart - the tail, pmu/p4_alloc.h
 * P4_PMI_TAIL_MAX - is only the way out: after the last CCCR write, its
 * return, the lock's release, the caller-saved registers' pops and the
 * IRET (tests/qemu/test_storm.py, `make bench`). By percpu index; the
 * handler fills it under the PMU lock, the exit call empties it.
 */
static struct perf_exit {
	uint8_t lp, cpu;
	bool owed;			/* bus0 holds the model's work before the last restart */
	uint64_t bus0;
	struct perf_storm_lp *storm;	/* the LP's storm guard: the handler ends here */
	struct msr_bus *bus;
	const struct perf_restarts *list;	/* the count's own (all overflowed), or `some` */
	struct perf_restarts some;
} exits[PERCPU_MAX];

_Static_assert(PERCPU_MAX <= 32, "exits_owed has a bit per LP");
static uint32_t exits_owed;	/* percpu indices with perf_exit.owed set (PERCPU_MAX <= 32) */

/* All but the last restart of a handler that restarts more than one counter. */
static __attribute__((noinline)) void perf_exit_leading(const struct perf_exit *e)
{
	const struct perf_restarts *r = e->list;

	for (unsigned i = 0; i + 1u < r->n; i++)
		msr_bus_write(e->bus, r->msr[i], r->on[i]);
}

/* The lock is free again: this LP's deferred NMI, if it had one (perf_exit_last). */
static __attribute__((noinline, cold)) void perf_exit_deferred(void)
{
	unsigned idx = percpu_this()->index;

	if (pmu_lock.nmi_deferred & UINT32_C(1) << idx)
		perf_unlock_deferred(idx);
}

/*
 * The last restart, apart and reached by a tail call, and the release of
 * the handler's lock (not nested: perf_exit_restart), held until its
 * counters run again: a stop on the other LP waits for it, and a counter
 * both LPs feed loses none of the sibling's events while it is stopped.
 * After the write only the release, one check of the deferred NMIs (any
 * LP's: the cold path sees whether one is this LP's) and the return: the
 * lock's two words share one base.
 */
static __attribute__((noinline)) void perf_exit_last(const struct perf_exit *e, unsigned last)
{
	msr_bus_write(e->bus, e->list->msr[last], e->list->on[last]);
	__atomic_store_n(&pmu_lock.owner, 0, __ATOMIC_RELEASE);
	if (pmu_lock.nmi_deferred)
		perf_exit_deferred();
}

/* More than one restart, or the lock taken by a section the NMI came into (perf_exit_restart). */
static __attribute__((noinline)) void perf_exit_more(const struct perf_exit *e, unsigned cpu)
{
	unsigned last = e->list->n - 1u;

	if (last)
		perf_exit_leading(e);
	if (pmu_lock.nested[cpu]) {	/* not the handler's own acquisition: one level only */
		msr_bus_write(e->bus, e->list->msr[last], e->list->on[last]);
		perf_unlock_as(cpu);
		return;
	}
	perf_exit_last(e, last);	/* a tail call */
}

static void perf_glue_exit(struct perf_exit *e, unsigned cpu);

/*
 * The common case, one restart and the handler's own lock, calls nothing
 * but by tail calls, so that it saves no register (the way out is the
 * handler's too).
 */
static void perf_exit_restart(void)
{
	unsigned cpu = percpu_this()->index;
	struct perf_exit *e = &exits[cpu];

	perf_storm_end(e->storm, rdtsc());
	if (be.bus_tsc)		/* the model: its work for the restart is the handler's (perf_exit_owed) */
		perf_glue_exit(e, cpu);
	if (e->list->n != 1u || pmu_lock.nested[cpu])
		perf_exit_more(e, cpu);
	else
		perf_exit_last(e, 0);
}

/*
 * The model's work in the last exit restart of the LP with percpu index
 * cpu, settled as PMI handler time (as it was while the restart lay inside
 * the handler): on the model a register write is the backend's work, which
 * the handler's time includes (`record`'s throttle weighs it). Taken when
 * the next PMI comes or the count stops: between the two, only the restart
 * uses the bus on that LP. On hardware nothing is owed (no backend time).
 */
static void perf_exit_owed(unsigned cpu)
{
	struct perf_exit *e = &exits[cpu];
	uint64_t dt;

	if (!e->owed || !be.bus_tsc)
		return;
	e->owed = false;
	__atomic_fetch_and(&exits_owed, ~(UINT32_C(1) << (cpu & 31)), __ATOMIC_RELAXED);
	dt = be.bus_tsc[cpu] - e->bus0;
	info.pmi.tsc_total += dt;
	info.pmi.lp_tsc[e->lp] += dt;
	info.pmi.backend_tsc += dt;
	info.pmi.lp_backend_tsc[e->lp] += dt;
}

/*
 * The glue of a backend with time or a re-raise of its own (the model: its
 * bus_tsc, its unmasked hook) in the PMI handler: what the model's register
 * accesses cost is the handler's time, settled when the next PMI comes
 * (perf_exit_owed). A Pentium 4 runs none of it, only the test before each
 * call, and the step engine reports nothing of it (step_seam_glue, set by
 * perf_use) beyond the CALL: the model's count of the handler is what a
 * Pentium 4 counts.
 */
static uint64_t glue_b0[PERCPU_MAX];	/* the backend's bus time at the handler's entry */

static __attribute__((noinline)) void perf_glue_enter(unsigned cpu)
{
	perf_exit_owed(cpu);
	glue_b0[cpu] = be.bus_tsc[cpu];
}

static __attribute__((noinline)) void perf_glue_unmasked(unsigned lp, unsigned cpu)
{
	perf_pmi_unmasked(lp, cpu, be.bus_tsc ? glue_b0[cpu] : 0);
}

static __attribute__((noinline)) void perf_glue_exit(struct perf_exit *e, unsigned cpu)
{
	e->bus0 = be.bus_tsc[cpu];
	e->owed = true;
	__atomic_fetch_or(&exits_owed, UINT32_C(1) << (cpu & 31), __ATOMIC_RELAXED);
}

/*
 * What a handler's exit restart needs of each LP that does not change
 * while a count runs (its SMT ID, the bus, its storm guard): set when the
 * count starts, not at every PMI (perf_restart).
 */
static void perf_exits_init(struct msr_bus *bus)
{
	for (unsigned i = 0; i < percpu_count() && i < PERCPU_MAX; i++) {
		unsigned lp = perf_lp_of(percpu_get(i));

		exits[i].cpu = (uint8_t)i;
		exits[i].lp = (uint8_t)lp;
		exits[i].bus = bus;
		exits[i].storm = &storm[lp];
	}
}

/*
 * The restarts of s's requests, in the order the overflow handler leaves
 * them for its exit: those that count CPL 0 last, for the first of them
 * restarted counts the restarts after it (P4_PMI_TAIL_EACH each).
 */
static void perf_restart_plan(struct perf_count *s)
{
	const struct p4_plan *plan = &s->plan;

	for (unsigned lp = 0; lp < 2; lp++) {
		struct perf_restarts *r = &s->restarts[lp];

		r->n = 0;
		for (int os = 0; os < 2; os++)
			for (unsigned i = 0; i < plan->n; i++) {
				if (!((s->pmi_mask[lp] >> i) & 1u) ||
				    ((plan->slot[i].escr_value & (ESCR_T0_OS | ESCR_T1_OS)) != 0) != os)
					continue;
				r->idx[r->n] = (uint8_t)i;
				r->msr[r->n] = p4_counters[plan->slot[i].counter].cccr_msr;
				r->on[r->n++] = p4_cccr_restart(plan, i);
			}
	}
}

/*
 * Leave the running count's counters in mask to restart at this
 * interrupt's exit, in perf_restart_plan's order. False when there is none
 * (the handler then ends here for the storm guard).
 */
static inline __attribute__((always_inline)) bool perf_restart(struct percpu *me, unsigned cpu,
								 unsigned lp, uint32_t mask)
{
	struct perf_exit *e = &exits[cpu];	/* its LP, bus and storm guard: perf_exits_init */
	const struct perf_restarts *all = &run.count->restarts[lp];

	if (mask == run.count->pmi_mask[lp]) {
		e->list = all;
	} else {
		struct perf_restarts *r = &e->some;

		r->n = 0;
		for (unsigned k = 0; k < all->n; k++)
			if ((mask >> all->idx[k]) & 1u) {
				r->msr[r->n] = all->msr[k];
				r->on[r->n++] = all->on[k];
			}
		e->list = r;
	}
	if (!e->list->n)
		return false;
	idt_exit_call_on(me, perf_exit_restart);
	return true;
}

/*
 * The overflow interrupt. by: the count of its way in (perf_pmi_stats
 * by_vector or by_nmi), NULL for a deferred one's second call. Every
 * count is a plain add under the PMU lock (held by this LP when an NMI is
 * deferred): the 32-bit kernel has no 8-byte atomic add short of a
 * CMPXCHG8B loop.
 */
static void perf_pmi_handler(struct trap_frame *f, uint64_t *by)
{
	uint32_t restart = 0;
	unsigned drained = 0;	/* PEBS records */
	uint64_t t0 = step_handler_clock(), tw = rdtsc();
	struct percpu *me = percpu_this();
	unsigned cpu = me->index, lp = perf_lp_of(me);
	struct perf_count *s;
	struct trap_frame *wf;
	bool counting;

	if (__atomic_load_n(&pmu_lock.owner, __ATOMIC_ACQUIRE) == cpu + 1) {
		/* an NMI inside a locked section: after it (perf_unlock) */
		__atomic_fetch_or(&pmu_lock.nmi_deferred, UINT32_C(1) << cpu, __ATOMIC_RELAXED);
		if (by)
			(*by)++;
		return;
	}
	perf_lock_take(cpu + 1);	/* not held by this LP: tested above */
	if (by)
		(*by)++;
	info.pmi.interrupts++;
	info.pmi.lp_interrupts[lp]++;
	wf = perf_wl_frame(cpu);
	if (wf && wf != f) {
		info.pmi.handoffs++;	/* landed in the step handler or the gate: sample the workload */
		f = wf;
	}
	if (be.bus_tsc)		/* a backend with time of its own (the model) */
		perf_glue_enter(cpu);
	/* perf_scan's loop, inline; the count's bus is perf_bus's (perf_count_begin), not asked again */
	s = run.count;
	counting = s && s->running;
	for (uint32_t m = counting ? s->pmi_mask[lp] : 0; m; m &= m - 1)
		perf_overflow_body(s->gate_bus, s, (unsigned)__builtin_ctz(m), cpu, f, &restart);
	if (run.pebs_hook)
		drained = run.pebs_hook(run.pebs_ctx, lp, f);
	if (counting && f && perf_storm_seen(&storm[lp], f, tw)) {
		perf_storm(s, lp, restart ? 0 : drained);
		counting = false;	/* the entry stays masked, nothing restarts */
	}
	if (counting) {		/* OVF is clear now: unmasking cannot re-trigger for these */
		lvt.lp[lp] &= ~LAPIC_LVT_MASKED;	/* perf_lvt_write on the calling LP */
		if (lvt.have_lapic)
			lapic_write(LAPIC_LVT_PMC, lvt.lp[lp]);
		if (be.glue)
			perf_glue_unmasked(lp, cpu);
		if (drained && run.pebs_refilled)
			counting = !perf_pebs_refilled(s, lp);
	}
	perf_pmi_time(lp, t0);
	/*
	 * The counters restart at the very end of the interrupt's exit
	 * (perf_exit_restart). A shut gate (perf_gate_shut) stays shut.
	 */
	/*
	 * A restart left for the exit keeps the lock until it is done
	 * (perf_exit_last): a counter both LPs feed is stopped until then, and
	 * the sibling's events must wait for it, not be lost.
	 */
	if (counting && !s->shut && perf_restart(me, cpu, lp, restart))
		return;
	perf_storm_end(&storm[lp], rdtsc());
	perf_unlock_as(cpu);
}

/* The two ways in, counted apart so that `pmu` shows which delivery the LVT PC entry chose. */
static void perf_pmi_vector(struct trap_frame *f)
{
	perf_pmi_handler(f, &info.pmi.by_vector);
}

static void perf_pmi_nmi(struct trap_frame *f)
{
	perf_pmi_handler(f, &info.pmi.by_nmi);
}

void perf_poll(struct trap_frame *f)
{
	uint64_t t0 = step_handler_clock();
	unsigned lp = perf_this_lp();

	perf_lock();		/* as the handler: no PMI takes the same counter meanwhile */
	info.pmi.polls++;
	perf_scan(lp, f);
	perf_pmi_time(lp, t0);
	perf_unlock();
}

/*
 * The tick's storm guard: the same test as the PMI's (prof/storm.h), on
 * the tick's own state. A periodic timer whose poll outlasts its period
 * (an LAPIC clock far faster than the processor executes, as in an
 * emulator whose clocks count instructions) is taken again right after
 * each IRET: the workload makes no progress, and Ctrl-C is not read. The
 * count and the tick stop; perf_storm_text says why.
 */
void perf_poll_tick(struct trap_frame *f)
{
	uint64_t tw = rdtsc();
	unsigned lp = perf_this_lp();
	struct perf_storm_lp *g = &tick_storm[lp];
	/* the last tick's poll, and the time from its entry to this one's (read before the test) */
	uint64_t took = g->exit - g->entry, every = tw - g->entry;

	perf_poll(f);
	if (f && perf_storm_seen(g, f, tw)) {
		perf_lock();
		if (perf_counting_here() && !run.count->storm) {	/* a tick pending at the stop: once */
			run.count->storm_tick_hz = tick_hz;
			run.count->storm_tick_period = tick_tsc;
			run.count->storm_tick_tsc = took;
			run.count->storm_tick_every = every;
			perf_storm(run.count, lp, 0);
			run.count->storm_pmis = g->same + 1;	/* the ticks in a row, not PMIs */
		}
		perf_unlock();
		perf_tick(0);
	}
	perf_storm_end(g, rdtsc());
}

uint64_t perf_clock(void)
{
	if (be.ops && be.ops->clock)
		return be.ops->clock();
	return rdtsc();
}

bool perf_tick(unsigned hz)
{
	if (!be.ops || !be.ops->tick)
		return false;
	tick_hz = hz;
	tick_tsc = hz ? timer_tsc_hz() / hz : 0;
	be.ops->tick(hz);
	return true;
}

void perf_set_pebs_hook(perf_pebs_fn *fn, perf_pebs_refilled_fn *refilled, void *ctx)
{
	perf_lock();
	run.pebs_hook = fn;
	run.pebs_refilled = refilled;
	run.pebs_ctx = ctx;
	perf_unlock();
}

void perf_set_pmi_mode(enum perf_pmi_mode mode)
{
	info.pmi_mode = mode;
	for (unsigned lp = 0; lp < PERF_NLP; lp++)
		perf_lvt_write(lp, perf_lvt_value(!perf_counting()));
}

/* ---- counting runs ------------------------------------------------------------------ */

/*
 * The gate's argument (struct workload_hooks gate_ctx): the armed count,
 * or NULL when the running count has no gate.
 */
static struct perf_gate {
	struct perf_count *s;
} gate;


static bool perf_is_starter(const struct p4_plan *plan, unsigned i)
{
	for (unsigned k = 0; k < plan->n; k++)
		if (plan->req[k].role == P4_ROLE_CASCADE && plan->req[k].started_by == i)
			return true;
	return false;
}

static int perf_count_begin(struct perf_count *s, const struct p4_plan *plan, uint64_t reload,
			    bool gated, char *err, size_t n)
{
	struct msr_bus *bus = perf_bus();
	struct p4_apply_result res;

	if (!bus)
		return ksnprintf(err, n, "no PMU backend"), -1;
	*s = (struct perf_count){ .plan = *plan, .chunk = UINT64_C(1) << 39 };
	for (unsigned i = 0; i < plan->n; i++) {
		bool period = plan->req[i].spec.period != 0;

		/* A sampling counter reloads its period; a cascade starter, once
		 * it has started its partner, just keeps counting. */
		s->reload[i] = period && !perf_is_starter(plan, i) ? plan->slot[i].preset
								   : reload & P4_COUNTER_MASK;
		s->start[i] = period ? plan->slot[i].preset : s->reload[i];
		s->plan.slot[i].preset = s->start[i];
	}
	for (unsigned i = 0; i < plan->n; i++)
		if (plan->req[i].role != P4_ROLE_PEBS)
			s->pmi_mask[perf_slot_lp(&plan->slot[i])] |= UINT32_C(1) << i;
	perf_restart_plan(s);
	perf_exits_init(bus);
	/* The gate's writes in p4_apply's and p4_stop's order: cascaded partners first. */
	s->gate_bus = bus;
	s->gate_plain = true;
	for (unsigned i = 0; i < plan->n; i++)
		if (plan->slot[i].link)
			s->gate_plain = false;
	for (int pass = 0; gated && pass < 2; pass++)
		for (unsigned i = 0; i < plan->n; i++)
			if ((plan->slot[i].link != NULL) == (pass == 0)) {
				s->gate_msr[s->gate_n] = p4_counters[plan->slot[i].counter].cccr_msr;
				s->gate_on[s->gate_n] = plan->slot[i].cccr_value;
				s->gate_off[s->gate_n++] = plan->slot[i].cccr_quiet;
			}
	if ((P4_COUNTER_MASK - (reload & P4_COUNTER_MASK)) + 1 < s->chunk)
		s->chunk = (P4_COUNTER_MASK - (reload & P4_COUNTER_MASK)) + 1;
	perf_lock();
	s->unc_failed = p4_unc_start(bus, &s->plan);
	if (s->unc_failed >= 0) {
		perf_unlock();
		return ksnprintf(err, n, "writing uncore register %XH failed",
				 (unsigned)(MSR_P4_UNCORE_FIRST + plan->unc[s->unc_failed].reg)), -1;
	}
	run.count = s;
	s->running = true;
	for (unsigned lp = 0; lp < PERF_NLP; lp++)
		storm[lp] = tick_storm[lp] = (struct perf_storm_lp){ 0 };
	if (be.ops->run_begin)
		be.ops->run_begin();
	for (unsigned lp = 0; lp < PERF_NLP; lp++)
		perf_lvt_write(lp, perf_lvt_value(false));
	if (gated)
		p4_apply_gated(bus, &s->plan, &res);
	else
		p4_apply(bus, &s->plan, &res);
	gate.s = s->gate_n ? s : NULL;
	perf_unlock();
	if (res.pebs_refused) {
		perf_count_stop(s, NULL);
		ksnprintf(err, n, "PEBS not enabled: no DS save area is set up for its logical "
			  "processor (IA32_DS_AREA)");
		return -1;
	}
	if (res.faults || res.mismatches) {
		perf_count_stop(s, NULL);
		ksnprintf(err, n, "programming the PMU failed: %u faulting access(es), %u register(s) "
			  "read back different", res.faults, res.mismatches);
		return -1;
	}
	return 0;
}

int perf_count_start(struct perf_count *s, const struct p4_plan *plan, uint64_t reload,
		     char *err, size_t n)
{
	return perf_count_begin(s, plan, reload, false, err, n);
}

int perf_count_arm(struct perf_count *s, const struct p4_plan *plan, uint64_t reload,
		   char *err, size_t n)
{
	return perf_count_begin(s, plan, reload, true, err, n);
}

/*
 * The gate (perf_count_arm), from the workload runner: no lock, nothing
 * but the CCCR writes, as they are what a Pentium 4 counts of the kernel
 * around a workload. No PMI can come before the gate opens (nothing
 * counts); after it shuts, a PMI's handler finds `shut` and leaves the
 * counters stopped.
 */
static __attribute__((noinline)) void perf_gate_write(const struct perf_count *s, const uint64_t *v,
						     unsigned from, unsigned to)
{
	for (unsigned k = from; k < to; k++)
		msr_bus_write(s->gate_bus, s->gate_msr[k], v[k]);
}

/*
 * No frame pointer in the two (a sample inside them unwinds one frame
 * short): a frame is three instructions more before the first write.
 */
#define PERF_GATE_LEAN	__attribute__((optimize("omit-frame-pointer")))

/*
 * Open: the last write a tail call, so that the workload follows its
 * WRMSR closely. Shut: one counter's write a tail call and nothing before
 * it but the checks (several: all in perf_gate_write). Both leave their
 * frame to the bus function they jump to.
 */
static HOOK_GATE_FN PERF_GATE_LEAN void perf_gate_open(void *ctx)
{
	const struct perf_count *s = ((struct perf_gate *)ctx)->s;
	unsigned last;

	if (!s || s->marked)
		return;
	last = s->gate_n - 1u;
	if (last)
		perf_gate_write(s, s->gate_on, 0, last);
	msr_bus_write(s->gate_bus, s->gate_msr[last], s->gate_on[last]);
}

/*
 * A program's marker, from the call gate's entry stub (hooks.h mark_fast):
 * for an armed count without cascades (whose started partners need
 * perf_hook_mark's reads) the gate's writes, so that a marker costs a
 * Pentium 4's count what the gate costs. 1: not done here.
 */
static HOOK_GATE_FN PERF_GATE_LEAN int perf_gate_mark(void *ctx, int on)
{
	struct perf_count *s = ((struct perf_gate *)ctx)->s;

	if (!s || !s->gate_plain)
		return 1;
	s->marked = true;
	if (on) {		/* the last write last, the first first: as open and shut */
		unsigned last = s->gate_n - 1u;

		s->shut = false;
		if (last)
			perf_gate_write(s, s->gate_on, 0, last);
		msr_bus_write(s->gate_bus, s->gate_msr[last], s->gate_on[last]);
	} else {
		s->shut = true;
		msr_bus_write(s->gate_bus, s->gate_msr[0], s->gate_off[0]);
		if (s->gate_n > 1)
			perf_gate_write(s, s->gate_off, 1, s->gate_n);
	}
	return 0;
}

static HOOK_GATE_FN PERF_GATE_LEAN void perf_gate_shut(void *ctx)
{
	struct perf_count *s = ((struct perf_gate *)ctx)->s;

	if (!s)
		return;
	s->shut = true;
	if (s->gate_n > 1)
		perf_gate_write(s, s->gate_off, 0, s->gate_n);
	else
		msr_bus_write(s->gate_bus, s->gate_msr[0], s->gate_off[0]);
}

/*
 * A counter the stop's poll looks at: one whose overflow owes a PMI. A
 * counter without one (a cascade starter, whose overflow only starts its
 * partner) wraps at most once in a run, which the 40-bit difference of the
 * totals keeps; stopping and reloading it there would lose the events of
 * those instructions while its partner, still running, counts them. A PEBS
 * counter's overflows are its records (perf_scan).
 */
static bool perf_polled_at_stop(const struct p4_plan *plan, unsigned i)
{
	return plan->req[i].role != P4_ROLE_PEBS && plan->req[i].pmi != P4_PMI_NONE;
}

/*
 * Where a sample found at the stop is put: the first instruction of the
 * code that stopped its counter, at CPL 0 on the stop's own stack - the
 * gate's shut for an armed count (perf_count_arm), else perf_count_stop.
 */
static inline __attribute__((always_inline)) struct trap_frame perf_stop_frame(const struct perf_count *s)
{
	struct trap_frame f = { 0 };
	uint16_t cs;

	__asm__ volatile("mov %%cs, %0" : "=r"(cs));
	f.rip = s->gate_n ? (uintptr_t)perf_gate_shut : (uintptr_t)perf_count_stop;
	f.cs = cs;
	f.rflags = read_rflags();
	f.rsp = (uintptr_t)__builtin_frame_address(0);
	f.rbp = (uintptr_t)__builtin_frame_address(0);
	return f;
}

/*
 * Under the PMU lock, so an overflow interrupt cannot run between the reads
 * and the stop (on this LP it waits for perf_unlock, and then finds no
 * count; the sibling's waits for the lock): the events since each counter's
 * last write are running-read then stopped-read (O9), and a counter that
 * wrapped once since then is still right modulo 2^40.
 */
void perf_count_stop(struct perf_count *s, uint64_t *totals)
{
	struct msr_bus *bus = perf_bus();
	struct p4_apply_result res;
	uint64_t running[P4_MAX_REQUESTS] = { 0 }, stopped;

	perf_lock();	/* after any restart a PMI left for its exit (perf_exit_last) */
	for (uint32_t m = exits_owed; m; m &= m - 1)
		perf_exit_owed((unsigned)__builtin_ctz(m));
	/*
	 * An overflow whose PMI has not been taken yet - a fixed-vector PMI
	 * held while its LP ran with IF = 0, one still masked, or one a skid
	 * left owed when the gate shut - is found here, as a poll would: its
	 * events are added and its sample is the stop's: a PMI that came late
	 * would have landed in the code that stopped the counters (the gate's
	 * shut, or this stop). Otherwise a wrap would be lost.
	 */
	if (s == run.count) {
		struct trap_frame here = perf_stop_frame(s);

		run.stopping = true;
		for (unsigned i = 0; i < s->plan.n; i++)
			if (perf_polled_at_stop(&s->plan, i))
				perf_overflow_one(bus, s, i, &here);
		run.stopping = false;
	}
	for (unsigned i = 0; i < s->plan.n; i++)
		if (p4_counter_read(bus, s->plan.slot[i].counter, &running[i]))
			running[i] = s->start[i];
	p4_stop(bus, &s->plan, &res);
	/*
	 * A PEBS counter is reloaded by the assist whenever it writes a record,
	 * also between the two reads (kernel code at :k has tagged loads): its
	 * stopped value alone is what came after its last reload, and the O9
	 * settling would take a reload for a lost carry (2^32 too many).
	 */
	for (unsigned i = 0; i < s->plan.n; i++)
		if (p4_counter_read(bus, s->plan.slot[i].counter, &stopped) == 0)
			running[i] = s->plan.req[i].role == P4_ROLE_PEBS ? stopped & P4_COUNTER_MASK
					: p4_counter_settle(running[i], stopped);
	for (unsigned lp = 0; lp < PERF_NLP; lp++)
		perf_lvt_write(lp, perf_lvt_value(true));
	s->running = false;
	run.count = NULL;
	gate.s = NULL;
	if (be.ops->run_end)
		be.ops->run_end();
	p4_unc_stop(bus, &s->plan, s->unc_total);
	perf_unlock();
	for (unsigned i = 0; totals && i < s->plan.n; i++)
		totals[i] = s->base[i] + ((running[i] - s->start[i]) & P4_COUNTER_MASK);
}

void perf_take_pending(void)
{
	if (!lvt.have_lapic || (read_rflags() & RFLAGS_IF) || !lapic_irr_pending(LAPIC_PMI_VECTOR))
		return;
	cpu_sti();
	for (unsigned i = 0; i < PERF_PENDING_WAIT && lapic_irr_pending(LAPIC_PMI_VECTOR); i++)
		cpu_pause();
	cpu_cli();
}

/* ---- workload hooks ------------------------------------------------------------------- */

/* Each LP writes its own LVT PC entry, on hardware and in the model alike. */
static void perf_hook_begin(void *ctx, uint8_t lp)
{
	if (lp < PERF_NLP) {
		perf_lock();
		perf_lvt_write(lp, lvt.lp[lp]);
		perf_unlock();
	}
	if (be.ops && be.ops->begin)
		be.ops->begin(ctx, lp);
}

static void perf_hook_end(void *ctx, uint8_t lp)
{
	if (be.ops && be.ops->end)
		be.ops->end(ctx, lp);
}

/*
 * A program's counting marker (sdk/nbprof.h nb_count): off writes each of
 * the LP's counters' CCCR with Enable (bit 12) clear, which stops it (PMU
 * reference 2.1-2.2: an ESCR counts only through an enabled CCCR); on writes
 * the CCCR as programmed. Under the model a stopped counter takes no input.
 * A cascaded counter whose starter has overflowed has started: it is
 * written with p4_cccr_restart's value (Enable and cascade bits clear when
 * off), since its programmed value (Cascade set, Enable clear) would arm it
 * again for a start that its starter, reloaded, will not give for ~2^40
 * events.
 */
static bool perf_mark_started(struct perf_count *s, unsigned i)
{
	const struct p4_plan *plan = &s->plan;
	unsigned from = plan->req[i].started_by;
	uint64_t c = 0, own = 0;

	if (!plan->slot[i].link || from >= plan->n)
		return false;
	/* The starter's OVF (cleared by a marker's or the handler's write, hence `started`),
	 * its handled overflows, or the partner's Enable set by the start. */
	if (s->overflows[from] ||
	    (msr_bus_read(perf_bus(), p4_counters[plan->slot[from].counter].cccr_msr, &c) == 0 &&
	     (c & CCCR_OVF)) ||
	    (msr_bus_read(perf_bus(), p4_counters[plan->slot[i].counter].cccr_msr, &own) == 0 &&
	     (own & CCCR_ENABLE)))
		s->started |= UINT32_C(1) << i;
	return s->started & (UINT32_C(1) << i);
}

static void perf_hook_mark(void *ctx, uint8_t lp, bool on)
{
	struct msr_bus *bus = perf_bus();
	uint64_t v[P4_MAX_REQUESTS];
	struct perf_count *s = run.count;

	(void)ctx;
	if (!bus)
		return;
	if (s)
		s->marked = true;	/* the markers open and close the count, not the gate */
	perf_lock();
	/* Every value before any write: a starter's write clears the OVF that says it started. */
	for (unsigned i = 0; s && i < s->plan.n; i++) {
		v[i] = perf_mark_started(s, i) ? p4_cccr_restart(&s->plan, i) : s->plan.slot[i].cccr_value;
		if (!on)
			v[i] &= ~CCCR_ENABLE;
	}
	for (unsigned i = 0; s && i < s->plan.n; i++)
		if (perf_slot_lp(&s->plan.slot[i]) == lp)
			msr_bus_write(bus, p4_counters[s->plan.slot[i].counter].cccr_msr, v[i]);
	perf_unlock();
}

/*
 * A watchdog tick of an unstepped run (workload_hooks.tick): the uncore
 * counts are read and extended (p4_unc_poll). They are 32 bits, and the
 * extension is exact only while fewer than 2^32 events pass between two
 * reads (p4_uncore.h): a tick every 100 ms or less keeps a count of bus
 * clocks far below that, where the stop's read alone would lose 2^32 per
 * wrap of a long run.
 */
static void perf_hook_tick(void *ctx, uint8_t lp)
{
	struct msr_bus *bus = perf_bus();

	(void)ctx;
	(void)lp;
	if (!bus)
		return;
	perf_lock();
	if (run.count && run.count->plan.unc_n)
		p4_unc_poll(bus, &run.count->plan, run.count->unc_total);
	perf_unlock();
}

void perf_hooks(struct perf_inputs *in, struct workload_hooks *h)
{
	*in = (struct perf_inputs){ 0 };
	*h = (struct workload_hooks){
		.ctx = in,
		.begin = perf_hook_begin,
		.end = perf_hook_end,
		.step = be.ops ? be.ops->step : NULL,
		.synthetic = be.ops ? be.ops->synthetic : NULL,
		.fault = be.ops ? be.ops->fault : NULL,
		.mark = perf_hook_mark,
		.tick = perf_hook_tick,
		.open = perf_gate_open,
		.shut = perf_gate_shut,
		.mark_fast = perf_gate_mark,
		.gate_ctx = &gate,
	};
}

/* ---- backend choice ---------------------------------------------------------------------- */

static int perf_use(const struct perf_backend_ops *b, enum perf_backend id, const struct p4_sig *sig,
		    bool ht, char *err, size_t n)
{
	struct p4_apply_result res;
	struct p4_caps caps;

	if (run.count)
		perf_count_stop(run.count, NULL);
	if (b->select(sig, ht, &caps, err, n))
		return -1;
	be.ops = b;
	be.bus_tsc = b->bus_tsc;
	be.glue = b->bus_tsc || b->unmasked;
	if (be.glue) {		/* what a Pentium 4 never runs: not reported when stepped */
		step_seam_glue((const void *)perf_glue_enter);
		step_seam_glue((const void *)perf_glue_unmasked);
		step_seam_glue((const void *)perf_glue_exit);
	}
	if (b->clock)
		step_seam_glue((const void *)b->clock);
	info.backend = id;
	info.sig = *sig;
	info.ht = ht;
	info.caps = caps;
	info.probe_failed = id == PERF_BACKEND_HW &&
			    perf_hw_probe(info.probe, sizeof(info.probe)) != P4_PROBE_COUNTS;
	if (id != PERF_BACKEND_HW)
		info.probe[0] = '\0';
	be.trace.inner = b->bus();
	/* Zero every CCCR first: stale counters keep PMIs asserted (PMU reference 6). */
	p4_pmu_reset(b->bus(), &info.caps, &res);
	return 0;
}

int perf_select_model(const struct p4_sig *sig, bool ht, char *err, size_t n)
{
	if (perf_use(&perf_backend_model, PERF_BACKEND_MODEL, sig, ht, err, n))
		return -1;
	ksnprintf(info.reason, sizeof(info.reason), "chosen with 'pmu backend model'");
	return 0;
}

static bool perf_cpu(struct cpu_info *ci, struct p4_sig *sig, bool *ht)
{
	cpu_identify(ci);
	sig->family = (uint8_t)ci->display_family;
	sig->model = ci->display_model;
	sig->stepping = ci->stepping;
	*ht = ci->threads_per_core > 1;
	return ci->is_netburst;
}

int perf_select_hw(char *err, size_t n)
{
	struct cpu_info ci;
	struct p4_sig sig;
	bool ht;

	if (!perf_cpu(&ci, &sig, &ht))
		return ksnprintf(err, n, "%s is not a NetBurst CPU (family 0FH)", ci.display), -1;
	if (perf_use(&perf_backend_hw, PERF_BACKEND_HW, &sig, ht, err, n))
		return -1;
	if (info.probe_failed)
		ksnprintf(info.reason, sizeof(info.reason), "probe FAILED: %s; 'pmu backend model' "
			  "selects the software model", info.probe);
	else
		ksnprintf(info.reason, sizeof(info.reason), "NetBurst, IA32_MISC_ENABLE bit 7 set, "
			  "and counter 0 counted in the probe");
	return 0;
}

void perf_init(void)
{
	struct cpu_info ci;
	struct p4_sig sig;
	bool ht, netburst;
	char why[200], err[96], sigtext[8];

	be.trace.bus = (struct msr_bus){ .read = perf_trace_read, .write = perf_trace_write };
	lvt.have_lapic = lapic_present();
	idt_set_handler(LAPIC_PMI_VECTOR, perf_pmi_vector);
	idt_set_handler(VEC_NMI, perf_pmi_nmi);
	info.pmi_mode = PERF_PMI_FIXED;
	for (unsigned lp = 0; lp < PERF_NLP; lp++)
		perf_lvt_write(lp, perf_lvt_value(true));
	netburst = perf_cpu(&ci, &sig, &ht);
	/*
	 * The rule: a NetBurst CPU gets the hardware backend (and its PMU is
	 * reset) whatever the probe says; a failed probe stays visible in the
	 * reason, `cpu`, `pmu` and `selftest`. The model is chosen here only when
	 * no NetBurst PMU exists at all: under a hypervisor (CPUID.1:ECX[31])
	 * whose IA32_MISC_ENABLE is unreadable or has bit 7 clear (QEMU's), as
	 * prof/backend/hw.c refuses then; otherwise only on `pmu backend model`.
	 */
	if (perf_select_hw(why, sizeof(why)) == 0) {
		/* the reason says what the probe found */
	} else if (netburst && perf_select_model(&sig, ht, err, sizeof(err)) == 0) {
		ksnprintf(info.reason, sizeof(info.reason), "%s: the software model", why);
	} else {
		info.backend = PERF_BACKEND_NONE;
		ksnprintf(info.reason, sizeof(info.reason), "%s; 'pmu backend model 0F_04' selects a "
			  "software model", why);
	}
	p4_sig_format(&info.sig, sigtext, sizeof(sigtext));
	kprintf("pmu: backend %s%s%s%s: %s\n", perf_backend_name(info.backend),
		info.backend != PERF_BACKEND_NONE ? " " : "",
		info.backend != PERF_BACKEND_NONE ? sigtext : "",
		info.backend != PERF_BACKEND_NONE ? (info.ht ? " with HT" : " without HT") : "",
		info.reason);
}
