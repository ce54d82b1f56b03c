/*
 * perf.c - counting on the target: backend choice, counting runs with 64-bit
 * totals, overflow interrupts, the PMU write trace, and the model's inputs.
 *
 * Backend (chosen at boot, `pmu backend` overrides): the hardware PMU only
 * on a NetBurst signature (family 0FH) whose IA32_MISC_ENABLE bit 7
 * (performance monitoring available) is set AND whose counter 0 really
 * counts global_power_events:RUNNING during a short spin; QEMU's family-15
 * CPUs read PMU MSRs as 0 and drop writes, so they get the model
 * (pmu/model/) with the CPU's signature and Hyper-Threading flag. On a CPU
 * that is not NetBurst there is no backend until `pmu backend model SIG`.
 * Both backends are reached through one struct msr_bus, wrapped by a trace
 * that prints every PMU register write (`msr trace on`).
 *
 * Overflow interrupts. The model's raise_pmi() only records the request;
 * right after the model call returns (never inside it: the handler rewrites
 * model registers) the request becomes a real interrupt on the target LP,
 * the way the hardware's LVT Performance Counter entry would send it: the
 * entry is read, its mask bit set (NetBurst masks LVT PC when it delivers a
 * PMI, fact sheet 6 and 9.2, so the handler's unmask matters), and either a
 * fixed IPI with the entry's vector or an NMI IPI goes to the LP's APIC ID -
 * NMIs never with the self shorthand, which the Pentium 4 rejects
 * (uefi-qemu-notes P10). A request while the entry is masked waits; when the
 * handler unmasks and the model still asserts (p4_model_pmi_asserted), the
 * PMI is sent again.
 *
 * Which context a model PMI interrupts. The model is fed from the step hook,
 * inside the #DB handler, but the PMI must sample the workload as on
 * hardware, where it interrupts the instruction after the overflow. So:
 * - fixed vector, workload running with IF = 1 (record does that): the IPI
 *   only becomes pending in the handler (IF = 0 there) and is taken right
 *   after the #DB handler's IRETQ, at the workload's next instruction - the
 *   frame is the workload's own, with no help;
 * - NMI (cannot be held back), or fixed with the workload at IF = 0 (stat):
 *   the PMI is sent and waited for inside the step handler, and the PMI
 *   handler takes as interrupted frame the workload's #DB frame
 *   (step_frame(), non-NULL only while this LP's #DB handler runs) - a
 *   handoff, counted in pmi.handoffs.
 * The int 0x81 gate feeds the model too (synthetic events, and the int's
 * own step_sync): while its handler runs, user_gate_frame() is the
 * workload's frame and serves exactly as step_frame() does (perf_wl_frame).
 * Either way the same handler, overflow scan and sample hook run as on
 * hardware. Outside the step handler a fixed IPI from a caller with
 * interrupts off opens a short interrupt window until it has been taken.
 *
 * The handler (vector LAPIC_PMI_VECTOR or NMI) looks at every counter of the
 * running count: overflowed is CCCR.OVF, or - Linux's and OProfile's
 * "unflagged" test - bit 39 clear on a counter that was written negative.
 * It adds the events since the last write to the 64-bit base, rewrites the
 * CCCR without OVF and without Enable, reloads the counter twice (Intel
 * 249199 erratum N15) while it is stopped (Xeon MP erratum O8), restores
 * the CCCR, and only then unmasks LVT PC (OVF cleared first, fact sheet
 * 9.1). The LAPIC EOI for the vector is sent by the interrupt dispatcher
 * (arch/x86/idt.c); an NMI needs none.
 *
 * Hyper-Threading (two LPs, one model). Both LPs feed the model from their
 * own step hooks, each event at the LP (its SMT ID, T0/T1) and CPL that
 * produced it, so every model call - events, ticks, CPL and active-thread
 * inputs, register accesses through the bus - runs under model_lock. The
 * lock belongs to an LP and may be retaken by it; it is never held while a
 * PMI is sent or waited for. The active-thread input (CCCR bits 17:16, fact
 * sheet 2.2: a halted LP is inactive) follows the LPs: LP0 runs the shell
 * and is always active; the sibling is active from its workload's begin hook
 * to its end hook and halted otherwise. Each LP has its own LVT PC (fact
 * sheet 6, 8): the model's view of both is lp_lvt[], which the sender
 * auto-masks (on the target's behalf: LP0 cannot write LP1's local APIC)
 * and the target's own handler unmasks (mirroring it into its real LVT PC).
 * A PMI goes to the LP that OVF_PMI_T0/T1 names; that LP's handler scans
 * only the counters it owns (perf_slot_lp: OVF_PMI_T1 alone = LP1, else
 * LP0), so no overflow is taken by both LPs and none is lost: a request
 * while the target's entry is masked waits for its unmask, which re-raises
 * it while the model still asserts. An NMI that arrives while its LP holds
 * model_lock (mid model call) is recorded and handled when the lock is
 * released.
 *
 * What the model counts. Real inputs, from single-stepping the workload
 * (prof/workload.h): instr_retired NBOGUSNTAG per instruction,
 * instr_completed NBOGUS on models that have it, branch_retired and
 * retired_branch_type per branch, and global_power_events RUNNING from the
 * TSC cycles of each step (plus p4_model_tick for the model's clock, which
 * the LPs share: perf_clock_advance), each at the LP and CPL that executed
 * the instruction. There is no branch
 * predictor to observe, so every branch counts as predicted: MMTP when
 * taken, MMNP when not; mispredictions never happen. retired_branch_type
 * gets CONDITIONAL for Jcc, CALL for direct and indirect calls, RETURN for
 * returns, and INDIRECT for returns, indirect calls and indirect jumps (the
 * SDM event table's wording, see perf_branch_type; the fact sheet lists only
 * the bit names); direct JMP and other branches (INT, IRET, LOOP) set no
 * type bit.
 * Synthetic input: the `synthetic SPEC N` workload's occurrences, injected
 * with the spec's event and mask at the CPL and LP of its int 0x81. Nothing
 * else: no cache, TLB, bus, replay, uop or front-end event has a real source
 * in QEMU, and kernel code outside the workload (the stepper, the handlers,
 * stat itself) is never seen by the model.
 */
#include "arch/x86/console.h"
#include "arch/x86/cpu.h"
#include "arch/x86/idt.h"
#include "arch/x86/lapic.h"
#include "arch/x86/msr.h"
#include "arch/x86/percpu.h"
#include "arch/x86/step.h"
#include "arch/x86/user.h"
#include "lib/parse.h"
#include "pmu/p4_apply.h"
#include "pmu/p4_encode.h"
#include "pmu/p4_regs.h"
#include "pmu/p4_spec.h"
#include "prof/perf.h"

#define PERF_PROBE_TSC		200000u	/* cycles the probe lets counter 0 run */
#define PERF_IRQ_WAIT		100000u	/* pause loops a fixed IPI may take */
#define LVT_DELIVERY_MODE	(7u << 8)
#define LVT_VECTOR		0xffu
#define PERF_NO_APIC		UINT32_MAX

struct perf_trace_bus {
	struct msr_bus bus;		/* first member */
	struct msr_bus *inner;
};

static struct perf_info info;
static struct p4_model model;
static struct perf_trace_bus trace_bus;
static struct perf_count *active;
static volatile uint32_t pmi_pending;	/* LPs the model asked to interrupt */
static perf_overflow_fn *overflow_hook;
static void *overflow_ctx;
static uint32_t lp_apic[P4_MODEL_NLP] = { PERF_NO_APIC, PERF_NO_APIC };
static volatile uint32_t lp_lvt[P4_MODEL_NLP];	/* each LP's LVT PC as model PMIs see it */
static volatile uint32_t model_owner;		/* LP index + 1 holding model_lock; 0 = free */
static unsigned model_depth;
static volatile bool nmi_deferred[PERCPU_MAX];
static uint64_t model_clock;			/* cycles ticked into the model: the core's clock */
static uint64_t lp_clock[P4_MODEL_NLP];	/* each stepping LP's position on that clock */

static void perf_pmi_handler(struct trap_frame *f);

/* The workload's frame while this LP runs its #DB handler or its int 0x81 gate, else NULL. */
static struct trap_frame *perf_wl_frame(void)
{
	struct trap_frame *f = step_frame();

	return f ? f : user_gate_frame();
}

/* ---- Hyper-Threading: whose LP, the model lock ----------------------------- */

/* The LP the PMU knows the calling LP as (T0/T1: its SMT ID, fact sheet 8). */
static unsigned perf_this_lp(void)
{
	unsigned smt = percpu_this()->topo.smt;

	return smt < P4_MODEL_NLP ? smt : 0;
}

static bool perf_lock_mine(void)
{
	return __atomic_load_n(&model_owner, __ATOMIC_ACQUIRE) == percpu_this()->index + 1;
}

static void perf_lock(void)
{
	uint32_t me = percpu_this()->index + 1, free_ = 0;

	if (perf_lock_mine()) {
		model_depth++;
		return;
	}
	while (!__atomic_compare_exchange_n(&model_owner, &free_, me, false, __ATOMIC_ACQUIRE,
					    __ATOMIC_RELAXED)) {
		free_ = 0;
		cpu_pause();
	}
	model_depth = 1;
}

static void perf_unlock(void)
{
	unsigned idx = percpu_this()->index;

	if (--model_depth > 0)
		return;
	__atomic_store_n(&model_owner, 0, __ATOMIC_RELEASE);
	if (nmi_deferred[idx]) {	/* an NMI came while this LP was inside the model */
		nmi_deferred[idx] = false;
		perf_pmi_handler(perf_wl_frame());
	}
}

/* The APIC ID of the LP with SMT ID lp in LP0's core, or PERF_NO_APIC. */
static uint32_t perf_lp_apic(unsigned lp)
{
	const struct percpu *me = percpu_get(0);

	if (lp >= P4_MODEL_NLP)
		return PERF_NO_APIC;
	if (lp_apic[lp] != PERF_NO_APIC || !me)
		return lp_apic[lp];
	for (unsigned i = 1; i < percpu_count(); i++) {
		const struct percpu *pc = percpu_get(i);

		if (pc->topo.smt == lp && pc->topo.core == me->topo.core &&
		    pc->topo.package == me->topo.package &&
		    (pc->state == LP_IDLE || pc->state == LP_RUNNING))
			return lp_apic[lp] = pc->apic_id;
	}
	return PERF_NO_APIC;
}

/* LP lp's LVT PC: the model's copy, and the real entry when lp is the calling LP. */
static void perf_lvt_set(unsigned lp, uint32_t v)
{
	lp_lvt[lp] = v;
	if (lp == perf_this_lp() && lapic_present())
		lapic_write(LAPIC_LVT_PMC, v);
}

const struct perf_info *perf_info(void)
{
	return &info;
}

const char *perf_backend_name(enum perf_backend b)
{
	switch (b) {
	case PERF_BACKEND_HW:		return "hardware";
	case PERF_BACKEND_MODEL:	return "model";
	default:			return "none";
	}
}

struct msr_bus *perf_bus(void)
{
	return info.backend == PERF_BACKEND_NONE ? NULL : &trace_bus.bus;
}

struct p4_model *perf_model(void)
{
	return info.backend == PERF_BACKEND_MODEL ? &model : NULL;
}

void perf_set_trace(bool on)
{
	info.trace = on;
}

/* ---- the traced bus ------------------------------------------------------ */

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

/*
 * Quirk injection (model backend, running count only: perf_inject): the
 * next inj_unflagged reads of a CCCR with OVF set return it without OVF,
 * as on the parts that overflow without setting the flag (fact sheet 6);
 * the next inj_reloads reloads lose their counter writes until the handler
 * reads the counter back, as erratum N15 would. Model state is unchanged
 * otherwise, so the handler's workarounds are what keeps counts exact.
 */
static unsigned inj_unflagged, inj_reloads;
static bool inj_dropping, inj_retry;	/* writes being lost; the rewrite after the read-back */

static void perf_inject_read(uint32_t msr, uint64_t *value)
{
	enum p4_counter c;

	if (inj_unflagged && (*value & CCCR_OVF) && p4_cccr_by_msr(msr, &c)) {
		inj_unflagged--;
		*value &= ~CCCR_OVF;
	} else if (inj_dropping && p4_counter_by_msr(msr, &c)) {
		inj_dropping = false;
		inj_retry = true;
		inj_reloads--;
	}
}

static bool perf_inject_drops(uint32_t msr)
{
	enum p4_counter c;

	if (!p4_counter_by_msr(msr, &c))
		return false;
	if (inj_retry) {
		inj_retry = false;
		return false;
	}
	if (!inj_reloads)
		return false;
	inj_dropping = true;
	return true;
}

int perf_inject(unsigned unflagged, unsigned reloads, char *err, size_t n)
{
	if (!perf_model() || !active || !active->running)
		return ksnprintf(err, n, "quirks are injected into the model's running count only"), -1;
	perf_lock();
	inj_unflagged = unflagged;
	inj_reloads = reloads;
	inj_dropping = inj_retry = false;
	perf_unlock();
	return 0;
}

static int perf_trace_read(struct msr_bus *bus, uint32_t msr, uint64_t *value)
{
	int r;

	perf_lock();
	r = msr_bus_read(((struct perf_trace_bus *)bus)->inner, msr, value);
	if (r == 0)
		perf_inject_read(msr, value);
	perf_unlock();
	return r;
}

static int perf_trace_write(struct msr_bus *bus, uint32_t msr, uint64_t value)
{
	int r;
	char name[32];

	perf_lock();
	r = perf_inject_drops(msr) ? 0 : msr_bus_write(((struct perf_trace_bus *)bus)->inner, msr, value);
	perf_unlock();

	if (info.trace && p4_msr_is_pmu(msr)) {
		perf_msr_name(msr, name, sizeof(name));
		kprintf("wrmsr %XH <- %08llXH (%s)%s\n", msr, (unsigned long long)value, name,
			r ? " #GP" : "");
	}
	return r;
}

/* ---- PMI delivery (model) --------------------------------------------------- */

static void perf_model_raise(struct p4_model *m, unsigned lp, void *ctx)
{
	(void)m;
	(void)ctx;
	__atomic_fetch_or(&pmi_pending, 1u << lp, __ATOMIC_RELAXED);
}

/* Let a pending fixed interrupt in when the caller runs with interrupts off. */
static void perf_irq_window(uint64_t seen)
{
	if (read_rflags() & RFLAGS_IF)
		return;
	cpu_sti();
	for (unsigned i = 0; i < PERF_IRQ_WAIT && info.pmi.interrupts == seen; i++)
		cpu_pause();
	cpu_cli();
	if (info.pmi.interrupts == seen)
		info.pmi.late++;
}

/* Inside the step handler: wait until the NMI just sent has been handled (handoff). */
static void perf_nmi_wait(uint64_t seen)
{
	for (unsigned i = 0; i < PERF_IRQ_WAIT && info.pmi.interrupts == seen; i++)
		cpu_pause();
	if (info.pmi.interrupts == seen)
		info.pmi.late++;
}

/* Deliver one model PMI to lp as its LVT PC entry says; wait: may open an interrupt window. */
static void perf_pmi_send(unsigned lp, bool wait)
{
	struct trap_frame *wf = perf_wl_frame();
	uint32_t lvt, apic = perf_lp_apic(lp);
	uint64_t seen = info.pmi.interrupts;
	bool self = lp == perf_this_lp();

	if (apic == PERF_NO_APIC) {
		info.pmi.dropped++;
		return;
	}
	perf_lock();		/* against the target's handler unmasking at the same time */
	lvt = lp_lvt[lp];
	if (!(lvt & LAPIC_LVT_MASKED))
		perf_lvt_set(lp, lvt | LAPIC_LVT_MASKED);	/* NetBurst auto-mask */
	perf_unlock();
	if (lvt & LAPIC_LVT_MASKED) {
		info.pmi.deferred++;
		return;
	}
	if ((lvt & LVT_DELIVERY_MODE) == LAPIC_LVT_DELIVERY_NMI) {
		lapic_send_nmi(apic);
		if (self && wf && wait)
			perf_nmi_wait(seen);
		return;
	}
	lapic_send_ipi(apic, (uint8_t)(lvt & LVT_VECTOR));
	if (!self)
		return;		/* the sibling takes it in its own context */
	if (wf && (wf->rflags & RFLAGS_IF))
		return;		/* taken right after the #DB handler's IRETQ */
	if (wait)
		perf_irq_window(seen);
}

/* In the step handler, and the workload resumes with IF = 1: a pending fixed PMI lands there. */
static bool perf_resumes_with_if(void)
{
	struct trap_frame *wf = perf_wl_frame();

	return wf && (wf->rflags & RFLAGS_IF);
}

static void perf_pmi_flush(void)
{
	uint32_t lps;

	unsigned me = perf_this_lp();

	while ((lps = __atomic_exchange_n(&pmi_pending, 0, __ATOMIC_RELAXED)) != 0)
		for (unsigned lp = 0; lp < P4_MODEL_NLP; lp++)
			if (lps & (1u << lp))
				perf_pmi_send(lp, true);
	/*
	 * A fixed PMI the sibling sent to this LP (its entry is masked until our
	 * handler runs) waits while this LP runs with interrupts off, e.g. in
	 * its own step handler: let it in now, as hardware would at the next
	 * instruction.
	 */
	if (active && active->running && (lp_lvt[me] & LAPIC_LVT_MASKED) &&
	    (lp_lvt[me] & LVT_DELIVERY_MODE) != LAPIC_LVT_DELIVERY_NMI &&
	    !(read_rflags() & RFLAGS_IF) && !perf_resumes_with_if())
		perf_irq_window(info.pmi.interrupts);
}

/* ---- the overflow handler ------------------------------------------------- */

void perf_set_overflow_hook(perf_overflow_fn *fn, void *ctx)
{
	overflow_hook = fn;
	overflow_ctx = ctx;
}

/* The LP whose handler takes a counter's overflows: the one OVF_PMI names (T0 when both). */
static unsigned perf_slot_lp(const struct p4_slot *slot)
{
	return (slot->cccr_value & CCCR_OVF_PMI_T1) && !(slot->cccr_value & CCCR_OVF_PMI_T0);
}

static void perf_overflow_one(struct perf_count *s, unsigned i, struct trap_frame *f)
{
	struct msr_bus *bus = perf_bus();
	const struct p4_slot *slot = &s->plan.slot[i];
	uint32_t cccr_msr = p4_counters[slot->counter].cccr_msr;
	uint64_t cccr = 0, raw = 0;
	bool ovf, unflagged;

	if (perf_slot_lp(slot) != perf_this_lp())
		return;		/* the sibling's counter: its own PMI handler takes it */
	if (msr_bus_read(bus, cccr_msr, &cccr) || p4_counter_read(bus, slot->counter, &raw))
		return;
	ovf = (cccr & CCCR_OVF) != 0;
	unflagged = !ovf && (s->start[i] & BIT(39)) && !(raw & BIT(39));
	if (!ovf && !unflagged)
		return;
	info.pmi.overflows++;
	info.pmi.unflagged += unflagged;
	s->overflows[i]++;
	s->base[i] += (raw - s->start[i]) & P4_COUNTER_MASK;
	if (overflow_hook && f)
		overflow_hook(overflow_ctx, f, i);
	/* Stop and clear OVF, reload twice (N15) while stopped (O8), restart. */
	msr_bus_write(bus, cccr_msr, slot->cccr_value & ~(CCCR_OVF | CCCR_ENABLE));
	msr_bus_write(bus, p4_counters[slot->counter].msr, s->reload[i]);
	msr_bus_write(bus, p4_counters[slot->counter].msr, s->reload[i]);
	if (p4_counter_read(bus, slot->counter, &raw) == 0 &&
	    (raw & P4_COUNTER_MASK) != (s->reload[i] & P4_COUNTER_MASK)) {
		info.pmi.mismatches++;	/* N15 struck despite the double write */
		msr_bus_write(bus, p4_counters[slot->counter].msr, s->reload[i]);
	}
	s->start[i] = s->reload[i];
	msr_bus_write(bus, cccr_msr, slot->cccr_value);
}

/* OVF is clear now; unmasking cannot re-trigger for the counters handled. */
static void perf_pmi_unmask(void)
{
	unsigned lp = perf_this_lp();
	bool again;

	perf_lock();
	perf_lvt_set(lp, lp_lvt[lp] & ~LAPIC_LVT_MASKED);
	again = perf_model() && p4_model_pmi_asserted(&model, lp);
	perf_unlock();
	if (again) {
		info.pmi.reraised++;
		perf_pmi_send(lp, false);
	}
}

static void perf_scan(struct trap_frame *f)
{
	if (active && active->running)
		for (unsigned i = 0; i < active->plan.n; i++)
			perf_overflow_one(active, i, f);
}

/* TSC since t0 spent handling: in all, and the calling LP's own share (throttling). */
static void perf_pmi_time(uint64_t t0)
{
	uint64_t dt = rdtsc() - t0;

	__atomic_fetch_add(&info.pmi.tsc_total, dt, __ATOMIC_RELAXED);
	info.pmi.lp_tsc[perf_this_lp()] += dt;
}

static void perf_pmi_handler(struct trap_frame *f)
{
	uint64_t t0 = rdtsc();
	struct trap_frame *wf = perf_wl_frame();

	if (perf_lock_mine()) {		/* an NMI inside a model call: after the lock (perf_unlock) */
		nmi_deferred[percpu_this()->index] = true;
		return;
	}
	__atomic_fetch_add(&info.pmi.interrupts, 1, __ATOMIC_RELAXED);
	info.pmi.lp_interrupts[perf_this_lp()]++;
	if (wf && wf != f) {
		info.pmi.handoffs++;	/* landed in the step handler: sample the workload */
		f = wf;
	}
	perf_lock();
	perf_scan(f);
	perf_unlock();
	perf_pmi_unmask();
	perf_pmi_time(t0);
}

/* The two ways in, counted apart so that `pmu` shows which delivery the LVT PC entry chose. */
static void perf_pmi_vector(struct trap_frame *f)
{
	__atomic_fetch_add(&info.pmi.by_vector, 1, __ATOMIC_RELAXED);
	perf_pmi_handler(f);
}

static void perf_pmi_nmi(struct trap_frame *f)
{
	__atomic_fetch_add(&info.pmi.by_nmi, 1, __ATOMIC_RELAXED);
	perf_pmi_handler(f);
}

void perf_poll(struct trap_frame *f)
{
	uint64_t t0 = rdtsc();
	bool lapic = lapic_present();

	info.pmi.polls++;
	perf_lock();		/* as in perf_pmi_handler: the sibling may be inside the model */
	if (lapic)
		perf_lvt_set(perf_this_lp(), lp_lvt[perf_this_lp()] | LAPIC_LVT_MASKED);
	perf_scan(f);
	perf_unlock();
	if (lapic && active && active->running)
		perf_pmi_unmask();
	perf_pmi_time(t0);
}

static uint32_t perf_lvt_value(bool masked)
{
	uint32_t v = info.pmi_mode == PERF_PMI_NMI ? LAPIC_LVT_DELIVERY_NMI : LAPIC_PMI_VECTOR;

	return masked ? v | LAPIC_LVT_MASKED : v;
}

void perf_set_pmi_mode(enum perf_pmi_mode mode)
{
	info.pmi_mode = mode;
	for (unsigned lp = 0; lp < P4_MODEL_NLP; lp++)
		perf_lvt_set(lp, perf_lvt_value(!(active && active->running)));
}

/* ---- counting runs -------------------------------------------------------------- */

static bool perf_is_starter(const struct p4_plan *plan, unsigned i)
{
	for (unsigned k = 0; k < plan->n; k++)
		if (plan->req[k].role == P4_ROLE_CASCADE && plan->req[k].started_by == i)
			return true;
	return false;
}

int perf_count_start(struct perf_count *s, const struct p4_plan *plan, uint64_t reload,
		       char *err, size_t n)
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
	if ((P4_COUNTER_MASK - (reload & P4_COUNTER_MASK)) + 1 < s->chunk)
		s->chunk = (P4_COUNTER_MASK - (reload & P4_COUNTER_MASK)) + 1;
	pmi_pending = 0;
	active = s;
	s->running = true;
	for (unsigned lp = 0; lp < P4_MODEL_NLP; lp++)
		perf_lvt_set(lp, perf_lvt_value(false));
	p4_apply(bus, &s->plan, &res);
	if (res.faults || res.mismatches) {
		perf_count_stop(s, NULL);
		ksnprintf(err, n, "programming the PMU failed: %u faulting access(es), %u register(s) "
			  "read back different", res.faults, res.mismatches);
		return -1;
	}
	return 0;
}

void perf_count_stop(struct perf_count *s, uint64_t *totals)
{
	struct msr_bus *bus = perf_bus();
	struct p4_apply_result res;
	uint64_t raw[P4_MAX_REQUESTS] = { 0 };

	for (unsigned i = 0; i < s->plan.n; i++)
		if (p4_counter_read(bus, s->plan.slot[i].counter, &raw[i]))
			raw[i] = s->start[i];
	p4_stop(bus, &s->plan, &res);
	for (unsigned lp = 0; lp < P4_MODEL_NLP; lp++)
		perf_lvt_set(lp, perf_lvt_value(true));
	s->running = false;
	active = NULL;
	pmi_pending = 0;
	inj_unflagged = inj_reloads = 0;
	inj_dropping = inj_retry = false;
	for (unsigned i = 0; totals && i < s->plan.n; i++)
		totals[i] = s->base[i] + ((raw[i] - s->start[i]) & P4_COUNTER_MASK);
}

/* ---- feeding the model ----------------------------------------------------------- */

/* n events, in pieces no counter can wrap twice in, each followed by its PMIs. */
static void perf_feed(unsigned lp, unsigned cpl, enum p4_event ev, uint16_t mask, uint64_t n)
{
	uint64_t chunk = active ? active->chunk : n;

	while (n > 0) {
		uint64_t k = n < chunk ? n : chunk;

		perf_lock();
		p4_model_event(&model, lp, cpl, ev, mask, k);
		perf_unlock();
		perf_pmi_flush();
		n -= k;
	}
}

/*
 * retired_branch_type mask bits (fact sheet 4.1) for one retired branch, per
 * the SDM's event table (Vol. 3B Table A-9, the fact sheet's SDM-2008
 * source): CONDITIONAL "conditional jumps", CALL "direct or indirect
 * calls", RETURN "return branches", INDIRECT "returns, indirect calls, or
 * indirect jumps". So an indirect call sets CALL and INDIRECT, a return
 * RETURN and INDIRECT. (libpfm4 describes CALL as "indirect call branches";
 * the SDM text and the optimization manual's "all calls: all direct and
 * indirect calls" metric say direct calls count too, and that is followed.)
 */
static uint16_t perf_branch_type(enum insn_branch b)
{
	switch (b) {
	case INSN_COND:
		return P4_EVMASK(P4_RETIRED_BRANCH_TYPE_CONDITIONAL);
	case INSN_CALL:
		return P4_EVMASK(P4_RETIRED_BRANCH_TYPE_CALL);
	case INSN_CALL_INDIRECT:
		return P4_EVMASK(P4_RETIRED_BRANCH_TYPE_CALL) |
		       P4_EVMASK(P4_RETIRED_BRANCH_TYPE_INDIRECT);
	case INSN_RET:
		return P4_EVMASK(P4_RETIRED_BRANCH_TYPE_RETURN) |
		       P4_EVMASK(P4_RETIRED_BRANCH_TYPE_INDIRECT);
	case INSN_JMP_INDIRECT:
		return P4_EVMASK(P4_RETIRED_BRANCH_TYPE_INDIRECT);
	default:
		return 0;
	}
}

static void perf_hook_begin(void *ctx, uint8_t lp)
{
	if (!perf_model())
		return;
	perf_lock();
	p4_model_set_active(&model, lp, true);
	if (lp < P4_MODEL_NLP) {
		perf_lvt_set(lp, lp_lvt[lp]);	/* this LP's own LVT PC, as the model sees it */
		lp_clock[lp] = model_clock;	/* its workload starts now on the core's clock */
	}
	perf_unlock();
}

static void perf_hook_end(void *ctx, uint8_t lp)
{
	if (!perf_model())
		return;
	perf_pmi_flush();
	perf_lock();
	p4_model_set_cpl(&model, lp, 0);	/* back in the kernel */
	/* LP0 goes back to the shell (running); the sibling goes back to HLT (inactive). */
	p4_model_set_active(&model, lp, percpu_this()->index == 0);
	perf_unlock();
}

/*
 * One core, one clock (model_lock held). Each LP's stepped cycles move its
 * own position, which its begin hook set to the core's clock; the model's
 * clock follows the LP furthest ahead. So two LPs stepping at once tick the
 * cycles they share once, not once each (compare-mode counts stay those of
 * one core), a run that starts after another has ended continues from
 * there, and a single LP ticks exactly its step cycles.
 */
static void perf_clock_advance(unsigned lp, uint64_t cycles)
{
	uint64_t *pos = &lp_clock[lp < P4_MODEL_NLP ? lp : 0];

	*pos += cycles;
	if (*pos > model_clock) {
		p4_model_tick(&model, *pos - model_clock);
		model_clock = *pos;
	}
}

static void perf_hook_step(void *ctx, const struct step_info *s)
{
	struct perf_inputs *in = ctx;
	uint16_t type;

	if (!perf_model())
		return;
	in->steps++;
	perf_lock();
	p4_model_set_cpl(&model, s->lp, s->cpl);
	perf_unlock();
	perf_feed(s->lp, s->cpl, P4_EV_INSTR_RETIRED, P4_EVMASK(P4_INSTR_RETIRED_NBOGUSNTAG), 1);
	if (model.caps.instr_completed)
		perf_feed(s->lp, s->cpl, P4_EV_INSTR_COMPLETED,
			  P4_EVMASK(P4_INSTR_COMPLETED_NBOGUS), 1);
	if (s->branch != INSN_NOT_BRANCH) {
		in->branches++;
		perf_feed(s->lp, s->cpl, P4_EV_BRANCH_RETIRED,
			  P4_EVMASK(s->taken ? P4_BRANCH_RETIRED_MMTP : P4_BRANCH_RETIRED_MMNP), 1);
		if ((type = perf_branch_type(s->branch)) != 0)
			perf_feed(s->lp, s->cpl, P4_EV_RETIRED_BRANCH_TYPE, type, 1);
	}
	if (s->cycles) {
		in->cycles += s->cycles;
		perf_feed(s->lp, s->cpl, P4_EV_GLOBAL_POWER_EVENTS,
			  P4_EVMASK(P4_GLOBAL_POWER_EVENTS_RUNNING), s->cycles);
		perf_lock();
		perf_clock_advance(s->lp, s->cycles);
		perf_unlock();
		perf_pmi_flush();
	}
}

static void perf_hook_synthetic(void *ctx, uint8_t lp, uint8_t cpl, const char *text, uint64_t n)
{
	struct perf_inputs *in = ctx;
	struct p4_spec spec;
	struct p4_spec_error e;

	if (!perf_model())
		return;
	if (p4_spec_parse(text, &model.caps, &spec, &e)) {
		in->synthetic_bad += n;
		return;
	}
	if (in->synthetic == 0)
		ksnprintf(in->synthetic_spec, sizeof(in->synthetic_spec), "%s", text);
	else if (!parse_streq(in->synthetic_spec, text))
		in->synthetic_mixed = true;
	in->synthetic_event = spec.event;
	in->synthetic += n;
	perf_feed(lp, cpl, spec.event, spec.mask, n);
}

void perf_hooks(struct perf_inputs *in, struct workload_hooks *h)
{
	*in = (struct perf_inputs){ 0 };
	*h = (struct workload_hooks){
		.ctx = in,
		.begin = perf_hook_begin,
		.end = perf_hook_end,
		.step = perf_hook_step,
		.synthetic = perf_hook_synthetic,
	};
}

enum perf_source perf_event_source(enum p4_event ev, const struct perf_inputs *in)
{
	switch (ev) {
	case P4_EV_INSTR_RETIRED:
	case P4_EV_INSTR_COMPLETED:
	case P4_EV_BRANCH_RETIRED:
	case P4_EV_RETIRED_BRANCH_TYPE:
		return PERF_SOURCE_STEP;
	case P4_EV_GLOBAL_POWER_EVENTS:
		return PERF_SOURCE_TSC;
	default:
		if (in && in->synthetic && (in->synthetic_mixed || in->synthetic_event == ev))
			return PERF_SOURCE_SYNTHETIC;
		return PERF_SOURCE_NONE;
	}
}

/* ---- backend choice ------------------------------------------------------------- */

static void perf_use(enum perf_backend b, struct msr_bus *inner)
{
	struct p4_apply_result res;

	if (active)
		perf_count_stop(active, NULL);
	info.backend = b;
	trace_bus.inner = inner;
	/* Zero every CCCR first: stale counters keep PMIs asserted (fact sheet 9.6). */
	if (inner)
		p4_pmu_reset(&trace_bus.bus, &info.caps, &res);
}

int perf_select_model(const struct p4_sig *sig, bool ht, char *err, size_t n)
{
	struct p4_model_config cfg = {
		.sig = *sig, .ht = ht, .raise_pmi = perf_model_raise,
	};
	struct p4_caps caps;

	if (!p4_caps_lookup(sig, &caps) || p4_model_init(&model, &cfg) != 0) {
		ksnprintf(err, n, "the model needs a family 0FH signature such as 0F_04");
		return -1;
	}
	p4_model_set_active(&model, 0, true);	/* LP0 runs the shell */
	p4_model_set_active(&model, 1, false);	/* the sibling halts until it runs a workload */
	info.sig = *sig;
	info.ht = ht;
	info.caps = model.caps;
	perf_use(PERF_BACKEND_MODEL, &model.bus);
	return 0;
}

/* Does counter 0 count global_power_events:RUNNING on this CPU? 0 = yes, else why not in err. */
static int perf_probe_hw(bool ht, char *err, size_t n)
{
	struct p4_spec spec;
	struct p4_spec_error e;
	struct p4_cccr_cfg cfg = { .escr_select = p4_escrs[P4_FSB_ESCR0].select, .enable = true,
				   .active_thread = CCCR_AT_ANY };
	uint64_t v = 0, end;
	int bad = 0;

	if (p4_spec_parse("global_power_events:RUNNING", NULL, &spec, &e))
		return ksnprintf(err, n, "probe spec: %s", e.msg), -1;
	bad |= msr_write_safe(MSR_BPU_CCCR0, 0);
	bad |= msr_write_safe(p4_escrs[P4_FSB_ESCR0].msr, p4_escr_encode(&spec, P4_LP0, ht));
	bad |= msr_write_safe(MSR_BPU_COUNTER0, 0);
	bad |= msr_write_safe(MSR_BPU_CCCR0, p4_cccr_encode(&cfg, ht));
	end = rdtsc() + PERF_PROBE_TSC;
	while (rdtsc() < end)
		cpu_pause();
	bad |= msr_read_safe(MSR_BPU_COUNTER0, &v);
	msr_write_safe(MSR_BPU_CCCR0, 0);
	msr_write_safe(p4_escrs[P4_FSB_ESCR0].msr, 0);
	if (bad)
		return ksnprintf(err, n, "probe: a PMU MSR access raised #GP"), -1;
	if ((v & P4_COUNTER_MASK) == 0)
		return ksnprintf(err, n, "probe: counter 0 (global_power_events) stayed 0 over %u "
				 "TSC cycles", PERF_PROBE_TSC), -1;
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

/* Why the hardware PMU cannot be used, or "" when it can. */
static void perf_hw_refusal(char *why, size_t n)
{
	struct cpu_info ci;
	struct p4_sig sig;
	bool ht;
	char probe[128] = "";

	why[0] = '\0';
	if (!perf_cpu(&ci, &sig, &ht)) {
		ksnprintf(why, n, "%s is not a NetBurst CPU (family 0FH)", ci.display);
		return;
	}
	if (perf_probe_hw(ht, probe, sizeof(probe)) == 0 && ci.misc_enable_ok &&
	    (ci.misc_enable & MISC_ENABLE_PERFMON))
		return;
	ksnprintf(why, n, "%s%s%s",
		  !ci.misc_enable_ok ? "IA32_MISC_ENABLE unreadable; " :
		  !(ci.misc_enable & MISC_ENABLE_PERFMON) ?
			"IA32_MISC_ENABLE bit 7 (perfmon available) clear; " : "",
		  probe[0] ? probe : "", "");
}

int perf_select_hw(char *err, size_t n)
{
	struct cpu_info ci;
	struct p4_sig sig;
	bool ht;

	perf_hw_refusal(err, n);
	if (err[0])
		return -1;
	perf_cpu(&ci, &sig, &ht);
	p4_caps_lookup(&sig, &info.caps);
	info.sig = sig;
	info.ht = ht;
	perf_use(PERF_BACKEND_HW, &msr_hw_bus);
	return 0;
}

void perf_init(void)
{
	struct cpu_info ci;
	struct p4_sig sig;
	bool ht;
	char why[192], err[96], sigtext[8];

	trace_bus.bus = (struct msr_bus){ .read = perf_trace_read, .write = perf_trace_write };
	lp_apic[0] = lapic_present() ? lapic_id() : PERF_NO_APIC;
	idt_set_handler(LAPIC_PMI_VECTOR, perf_pmi_vector);
	idt_set_handler(VEC_NMI, perf_pmi_nmi);
	info.pmi_mode = PERF_PMI_FIXED;
	for (unsigned lp = 0; lp < P4_MODEL_NLP; lp++)
		perf_lvt_set(lp, perf_lvt_value(true));
	perf_hw_refusal(why, sizeof(why));
	if (!why[0] && perf_select_hw(err, sizeof(err)) == 0) {
		ksnprintf(info.reason, sizeof(info.reason), "NetBurst, IA32_MISC_ENABLE bit 7 set, "
			  "and counter 0 counted in the probe");
	} else if (perf_cpu(&ci, &sig, &ht) && perf_select_model(&sig, ht, err, sizeof(err)) == 0) {
		ksnprintf(info.reason, sizeof(info.reason), "%s", why);
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
