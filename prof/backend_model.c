/*
 * backend_model.c - the software model of the PMU (pmu/model/) as a
 * backend: everything the model needs and the hardware does not, in one
 * adapter behind the ops of prof/backend.h.
 *
 * - Its bus: the model's registers under the PMU lock (both LPs feed and
 *   program one model), plus the quirk injection of `record --inject`.
 * - Its event feed: the workload hooks. Each stepped instruction is fed at
 *   the LP (SMT ID, T0/T1) and CPL that retired it: instr_retired
 *   NBOGUSNTAG (NBOGUSTAG when the front end tagged one of its loads or
 *   stores, prof/tagfeed.c), instr_completed NBOGUS where the model has
 *   it, branch_retired (MMTP when taken, MMNP when not: there is no
 *   predictor to observe, so nothing is ever mispredicted) and
 *   retired_branch_type (perf_branch_type below), global_power_events
 *   RUNNING from the step's TSC cycles, and through prof/tagfeed.c the
 *   step's registers (PEBS records), its tagged loads/stores
 *   (front_end_event) and its x87/SIMD class (the FIRM events and
 *   execution_event). The synthetic workload's int 0x81 feeds its spec's
 *   event. Nothing else: no cache, TLB, bus or replay event has a real
 *   source in QEMU, and kernel code outside the workload is never seen.
 * - Its interrupts: the model's raise_pmi() only records the request; after
 *   the model call returns (never inside it: the handler rewrites model
 *   registers) the request becomes a real interrupt on the LP that
 *   OVF_PMI_T0/T1 names, as that LP's LVT PC entry says - a fixed IPI with
 *   its vector or an NMI, never with the self shorthand (uefi-qemu-notes
 *   P10) - after setting the entry's mask bit, as NetBurst does when it
 *   delivers a PMI (fact sheet 6). A request while the entry is masked
 *   waits; when the handler unmasks and the model still asserts, the PMI is
 *   sent again.
 * - The active-thread input (CCCR bits 17:16, fact sheet 2.2: a halted LP
 *   is inactive): LP0 runs the shell and is always active; the sibling from
 *   its workload's begin hook to its end hook.
 *
 * README "How a sample is taken" tells which context a model PMI
 * interrupts (the workload's, through the step handler's frame).
 */
#include "arch/x86/cpu.h"
#include "arch/x86/lapic.h"
#include "arch/x86/percpu.h"
#include "arch/x86/step.h"
#include "arch/x86/user.h"
#include "lib/parse.h"
#include "lib/printf.h"
#include "pmu/model/p4_model.h"
#include "pmu/p4_regs.h"
#include "pmu/p4_spec.h"
#include "pmu/p4_tables.h"
#include "prof/backend.h"
#include "prof/pebs.h"
#include "prof/tagfeed.h"

#define MODEL_IRQ_WAIT	100000u		/* pause loops a PMI the model sent may take */
#define MODEL_NO_APIC	UINT32_MAX

struct model_bus {
	struct msr_bus bus;		/* first member */
};

static struct p4_model model;
static uint64_t bus_tsc[PERCPU_MAX];	/* TSC each LP spent in model register accesses */
static uint64_t bus_call_tsc;		/* a call's cost outside the timed part (model_calibrate) */
static struct model_bus locked_bus;
static volatile uint32_t pmi_pending;	/* LPs the model asked to interrupt */
static uint32_t lp_apic[P4_MODEL_NLP] = { MODEL_NO_APIC, MODEL_NO_APIC };
static uint64_t model_clock;		/* cycles ticked into the model: the core's clock */
static uint64_t lp_clock[P4_MODEL_NLP];	/* each stepping LP's position on that clock */
static char label[24];
static bool no_pebs;			/* `pmu backend model ... nopebs` */

/* ---- the bus, and quirk injection ------------------------------------------- */

/*
 * `record --inject` (running count only): the next inj_unflagged reads of a
 * CCCR with OVF set return it without OVF, as on the parts that overflow
 * without setting the flag (fact sheet 6); the next inj_reloads reloads
 * lose their counter writes until the handler reads the counter back, as
 * erratum N15 would. The model's state is unchanged otherwise, so the
 * handler's workarounds are what keeps counts exact.
 */
static unsigned inj_unflagged, inj_reloads;
static bool inj_dropping, inj_retry;	/* writes being lost; the rewrite after the read-back */
static unsigned inj_nomask;	/* PMIs still to deliver without the LVT PC auto-mask */

static void model_inject_read(uint32_t msr, uint64_t *value)
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

static bool model_inject_drops(uint32_t msr)
{
	enum p4_counter c;

	if (!inj_reloads || !p4_counter_by_msr(msr, &c))
		return false;
	if (inj_retry) {
		inj_retry = false;
		return false;
	}
	inj_dropping = true;
	return true;
}

static int model_bus_read(struct msr_bus *bus, uint32_t msr, uint64_t *value)
{
	uint64_t t = rdtsc();
	int r;

	(void)bus;
	perf_lock();
	p4_model_set_bus_lp(&model, perf_this_lp());	/* DS_AREA, PEBS_ENABLE: per LP */
	r = msr_bus_read(&model.bus, msr, value);
	if (r == 0 && (inj_unflagged | inj_reloads))
		model_inject_read(msr, value);
	perf_unlock();
	bus_tsc[percpu_this()->index] += rdtsc() - t + bus_call_tsc;
	return r;
}

static int model_bus_write(struct msr_bus *bus, uint32_t msr, uint64_t value)
{
	uint64_t t = rdtsc();
	int r = 0;

	(void)bus;
	perf_lock();
	p4_model_set_bus_lp(&model, perf_this_lp());
	if (!model_inject_drops(msr))
		r = msr_bus_write(&model.bus, msr, value);
	perf_unlock();
	bus_tsc[percpu_this()->index] += rdtsc() - t + bus_call_tsc;
	return r;
}

static uint64_t model_bus_tsc_raw(void)
{
	return bus_tsc[percpu_this()->index];
}

/*
 * What a bus call costs outside the part the wrappers time (the call, the
 * prologue and epilogue, the bookkeeping), so that bus_tsc covers whole
 * calls: the least over a few timed reads.
 */
static void model_calibrate(void)
{
	uint64_t v, best = UINT64_MAX;

	bus_call_tsc = 0;
	for (unsigned k = 0; k < 8; k++) {
		uint64_t in = model_bus_tsc_raw(), t = rdtsc();

		msr_bus_read(&locked_bus.bus, MSR_BPU_COUNTER0, &v);
		t = rdtsc() - t - (model_bus_tsc_raw() - in);
		best = t < best ? t : best;
	}
	bus_call_tsc = best;
}

static uint64_t model_bus_tsc(void)
{
	return bus_tsc[percpu_this()->index];
}

static struct msr_bus *model_get_bus(void)
{
	return &locked_bus.bus;
}

static int model_inject(unsigned unflagged, unsigned reloads, char *err, size_t n)
{
	if (!perf_counting())
		return ksnprintf(err, n, "quirks are injected into the model's running count only"), -1;
	perf_lock();
	inj_unflagged = unflagged;
	inj_reloads = reloads;
	inj_dropping = inj_retry = false;
	perf_unlock();
	return 0;
}

static int model_inject_fault(enum perf_fault kind, uint32_t arg, char *err, size_t n)
{
	struct p4_model_faults f;

	perf_lock();
	f = model.faults;
	switch (kind) {
	case PERF_FAULT_DEAD:
		f.dead = arg;
		break;
	case PERF_FAULT_RDPMC:
		f.rdpmc = arg;
		break;
	case PERF_FAULT_ERRATUM:
		f.erratum_flip = arg != 0;
		break;
	case PERF_FAULT_NOMASK:
		inj_nomask = arg;
		break;
	}
	p4_model_set_faults(&model, &f);
	perf_unlock();
	return 0;
}

static int model_rdpmc(uint32_t ecx, uint64_t *value)
{
	int r;

	perf_lock();
	r = p4_model_rdpmc(&model, ecx, value);
	perf_unlock();
	return r;
}

/* ---- PMI delivery ------------------------------------------------------------- */

static void model_raise(struct p4_model *m, unsigned lp, void *ctx)
{
	(void)m;
	(void)ctx;
	__atomic_fetch_or(&pmi_pending, 1u << lp, __ATOMIC_RELAXED);
}

/* The workload's frame while this LP runs its #DB handler or its int 0x81 gate, else NULL. */
static struct trap_frame *model_wl_frame(void)
{
	struct trap_frame *f = step_frame();

	return f ? f : user_gate_frame();
}

/* The APIC ID of the LP with SMT ID lp in LP0's core, or MODEL_NO_APIC. */
static uint32_t model_lp_apic(unsigned lp)
{
	const struct percpu *me = percpu_get(0);

	if (lp >= P4_MODEL_NLP)
		return MODEL_NO_APIC;
	if (lp_apic[lp] != MODEL_NO_APIC || !me)
		return lp_apic[lp];
	if (lp == me->topo.smt)
		return lp_apic[lp] = me->apic_id;
	for (unsigned i = 1; i < percpu_count(); i++) {
		const struct percpu *pc = percpu_get(i);

		if (pc->topo.smt == lp && pc->topo.core == me->topo.core &&
		    pc->topo.package == me->topo.package &&
		    (pc->state == LP_IDLE || pc->state == LP_RUNNING))
			return lp_apic[lp] = pc->apic_id;
	}
	return MODEL_NO_APIC;
}

/* Let a pending fixed interrupt in when the caller runs with interrupts off. */
static void model_irq_window(uint64_t seen)
{
	struct perf_pmi_stats *st = perf_pmi_stats();

	if (read_rflags() & RFLAGS_IF)
		return;
	cpu_sti();
	for (unsigned i = 0; i < MODEL_IRQ_WAIT && st->interrupts == seen; i++)
		cpu_pause();
	cpu_cli();
	if (st->interrupts == seen)
		st->late++;
}

/* Inside the step handler: wait until the NMI just sent has been handled (handoff). */
static void model_nmi_wait(uint64_t seen)
{
	struct perf_pmi_stats *st = perf_pmi_stats();

	for (unsigned i = 0; i < MODEL_IRQ_WAIT && st->interrupts == seen; i++)
		cpu_pause();
	if (st->interrupts == seen)
		st->late++;
}

/*
 * Deliver one PMI to lp as its LVT PC entry says; wait: may open an
 * interrupt window. A fixed IPI to this LP while it steps a workload that
 * runs with IF = 1 is taken right after the #DB handler's IRETQ, at the
 * workload's next instruction; otherwise it is waited for here, and the
 * handler takes the workload's frame (a handoff).
 */
static void model_pmi_send(unsigned lp, bool wait)
{
	struct perf_pmi_stats *st = perf_pmi_stats();
	struct trap_frame *wf = model_wl_frame();
	uint32_t lvt, apic = model_lp_apic(lp);
	uint64_t seen = st->interrupts;
	bool self = lp == perf_this_lp();

	if (apic == MODEL_NO_APIC) {
		st->dropped++;
		return;
	}
	perf_lock();		/* against the target's handler unmasking at the same time */
	lvt = perf_lvt(lp);
	if (!(lvt & LAPIC_LVT_MASKED) && inj_nomask)
		inj_nomask--;		/* fault injection: a part that does not auto-mask */
	else if (!(lvt & LAPIC_LVT_MASKED))
		perf_lvt_automask(lp);
	perf_unlock();
	if (lvt & LAPIC_LVT_MASKED) {
		st->deferred++;
		return;
	}
	if ((lvt & LAPIC_LVT_DELIVERY_MODE) == LAPIC_LVT_DELIVERY_NMI) {
		lapic_send_nmi(apic);
		if (self && wf && wait)
			model_nmi_wait(seen);
		return;
	}
	lapic_send_ipi(apic, (uint8_t)(lvt & LAPIC_LVT_VECTOR));
	if (!self || (wf && (wf->rflags & RFLAGS_IF)))
		return;
	if (wait)
		model_irq_window(seen);
}

static bool model_resumes_with_if(void)
{
	struct trap_frame *wf = model_wl_frame();

	return wf && (wf->rflags & RFLAGS_IF);
}

static void model_pmi_flush(void)
{
	unsigned me = perf_this_lp();
	uint32_t lps, lvt;

	while ((lps = __atomic_exchange_n(&pmi_pending, 0, __ATOMIC_RELAXED)) != 0)
		for (unsigned lp = 0; lp < P4_MODEL_NLP; lp++)
			if (lps & (1u << lp))
				model_pmi_send(lp, true);
	/*
	 * A fixed PMI the sibling sent to this LP (its entry is masked until our
	 * handler runs) waits while this LP runs with interrupts off, e.g. in
	 * its own step handler: let it in now, as hardware would at the next
	 * instruction.
	 */
	lvt = perf_lvt(me);
	if (perf_counting() && (lvt & LAPIC_LVT_MASKED) &&
	    (lvt & LAPIC_LVT_DELIVERY_MODE) != LAPIC_LVT_DELIVERY_NMI &&
	    !(read_rflags() & RFLAGS_IF) && !model_resumes_with_if())
		model_irq_window(perf_pmi_stats()->interrupts);
}

/* After the handler unmasked: a model still asserting (sticky OVF) interrupts again. */
static void model_unmasked(unsigned lp)
{
	uint64_t t = rdtsc();
	bool again;

	perf_lock();
	again = p4_model_pmi_asserted(&model, lp);
	perf_unlock();
	if (again) {
		perf_pmi_stats()->reraised++;
		model_pmi_send(lp, false);
	}
	bus_tsc[percpu_this()->index] += rdtsc() - t + bus_call_tsc;
}

static void model_run_begin(void)
{
	pmi_pending = 0;
}

static void model_run_end(void)
{
	pmi_pending = 0;
	inj_unflagged = inj_reloads = 0;
	inj_dropping = inj_retry = false;
}

/* ---- the event feed ------------------------------------------------------------ */

/* n events in pieces no counter can wrap twice in, each followed by its PMIs. */
static void model_feed(unsigned lp, unsigned cpl, enum p4_event ev, uint16_t mask, uint64_t n)
{
	uint64_t chunk = perf_feed_chunk();

	while (n > 0) {
		uint64_t k = n < chunk ? n : chunk;

		perf_lock();
		p4_model_event(&model, lp, cpl, ev, mask, k);
		perf_unlock();
		model_pmi_flush();
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
 * Direct JMP and other branches (INT, IRET, LOOP) set no type bit.
 */
static uint16_t model_branch_type(enum insn_branch b)
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

static void model_begin(struct perf_inputs *in, uint8_t lp)
{
	(void)in;
	perf_lock();
	p4_model_set_active(&model, lp, true);
	if (lp < P4_MODEL_NLP)
		lp_clock[lp] = model_clock;	/* its workload starts now on the core's clock */
	perf_unlock();
}

static void model_end(struct perf_inputs *in, uint8_t lp)
{
	(void)in;
	model_pmi_flush();
	perf_lock();
	p4_model_set_cpl(&model, lp, 0);	/* back in the kernel */
	/* LP0 goes back to the shell (running); the sibling goes back to HLT (inactive). */
	p4_model_set_active(&model, lp, percpu_this()->index == 0);
	perf_unlock();
}

/*
 * One core, one clock (PMU lock held). Each LP's stepped cycles move its
 * own position, which its begin hook set to the core's clock; the model's
 * clock follows the LP furthest ahead. So two LPs stepping at once tick the
 * cycles they share once, not once each (compare-mode counts stay those of
 * one core), a run that starts after another has ended continues from
 * there, and a single LP ticks exactly its step cycles.
 */
static void model_clock_advance(unsigned lp, uint64_t cycles)
{
	uint64_t *pos = &lp_clock[lp < P4_MODEL_NLP ? lp : 0];

	*pos += cycles;
	if (*pos > model_clock) {
		p4_model_tick(&model, *pos - model_clock);
		model_clock = *pos;
	}
}

static void model_step(void *ctx, const struct step_info *s)
{
	struct perf_inputs *in = ctx;
	uint16_t type, retired;

	in->steps++;
	perf_lock();
	p4_model_set_cpl(&model, s->lp, s->cpl);
	retired = tagfeed_step(&model, s, step_frame());	/* PEBS registers, tagging */
	perf_unlock();
	model_pmi_flush();
	model_feed(s->lp, s->cpl, P4_EV_INSTR_RETIRED, retired, 1);
	if (model.caps.instr_completed)
		model_feed(s->lp, s->cpl, P4_EV_INSTR_COMPLETED,
			   P4_EVMASK(P4_INSTR_COMPLETED_NBOGUS), 1);
	if (s->branch != INSN_NOT_BRANCH) {
		in->branches++;
		model_feed(s->lp, s->cpl, P4_EV_BRANCH_RETIRED,
			   P4_EVMASK(s->taken ? P4_BRANCH_RETIRED_MMTP : P4_BRANCH_RETIRED_MMNP), 1);
		if ((type = model_branch_type(s->branch)) != 0)
			model_feed(s->lp, s->cpl, P4_EV_RETIRED_BRANCH_TYPE, type, 1);
	}
	if (s->cycles) {
		in->cycles += s->cycles;
		model_feed(s->lp, s->cpl, P4_EV_GLOBAL_POWER_EVENTS,
			   P4_EVMASK(P4_GLOBAL_POWER_EVENTS_RUNNING), s->cycles);
		perf_lock();
		model_clock_advance(s->lp, s->cycles);
		perf_unlock();
		model_pmi_flush();
	}
}

static void model_synthetic(void *ctx, uint8_t lp, uint8_t cpl, const char *text, uint64_t n)
{
	struct perf_inputs *in = ctx;
	struct p4_spec spec;
	struct p4_spec_error e;

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
	model_feed(lp, cpl, spec.event, spec.mask, n);
}

static enum perf_source model_source(enum p4_event ev, const struct perf_inputs *in)
{
	switch (ev) {
	case P4_EV_INSTR_RETIRED:
	case P4_EV_INSTR_COMPLETED:
	case P4_EV_BRANCH_RETIRED:
	case P4_EV_RETIRED_BRANCH_TYPE:
	case P4_EV_FRONT_END_EVENT:	/* tagged loads/stores (prof/tagfeed.c) */
	case P4_EV_EXECUTION_EVENT:	/* tagged x87/SIMD µops */
		return PERF_SOURCE_STEP;
	case P4_EV_GLOBAL_POWER_EVENTS:
		return PERF_SOURCE_TSC;
	default:
		if (p4_events[ev].flags & P4_EVF_UPSTREAM_TAG)
			return PERF_SOURCE_STEP;	/* the FIRM events: x87/SIMD class */
		if (in && in->synthetic && (in->synthetic_mixed || in->synthetic_event == ev))
			return PERF_SOURCE_SYNTHETIC;
		return PERF_SOURCE_NONE;
	}
}

/* ---- selection and status -------------------------------------------------------- */

static int model_select(const struct p4_sig *sig, bool ht, struct p4_caps *caps, char *err, size_t n)
{
	struct p4_model_config cfg = { .sig = *sig, .ht = ht, .raise_pmi = model_raise,
				       .mem = pebs_mem, .pebs_unavailable = no_pebs,
				       .ds32 = sizeof(void *) == 4 };	/* ia32: no IA-32e */
	char sigtext[8];

	if (!p4_caps_lookup(sig, caps) || p4_model_init(&model, &cfg) != 0)
		return ksnprintf(err, n, "the model needs a family 0FH signature such as 0F_04"), -1;
	locked_bus.bus = (struct msr_bus){ .read = model_bus_read, .write = model_bus_write };
	model_calibrate();
	p4_model_set_active(&model, 0, true);	/* LP0 runs the shell */
	p4_model_set_active(&model, 1, false);	/* the sibling halts until it runs a workload */
	*caps = model.caps;
	pmi_pending = 0;
	p4_sig_format(sig, sigtext, sizeof(sigtext));
	ksnprintf(label, sizeof(label), "model %s", sigtext);
	return 0;
}

void perf_model_set_pebs_unavailable(bool unavailable)
{
	no_pebs = unavailable;
}

static const char *model_msr_label(void)
{
	return label;
}

static void model_describe(char *buf, size_t n)
{
	ksnprintf(buf, n, "model requests OVF_PMI_T0 %llu, OVF_PMI_T1 %llu; PEBS records written "
		  "%llu, lost to a full buffer %llu (since the model was selected)",
		  (unsigned long long)model.pmi_count[0], (unsigned long long)model.pmi_count[1],
		  (unsigned long long)(model.pebs_records[0] + model.pebs_records[1]),
		  (unsigned long long)(model.pebs_lost[0] + model.pebs_lost[1]));
}

const struct perf_backend_ops perf_backend_model = {
	.name = "model",
	.steps_workloads = true,
	.select = model_select,
	.bus = model_get_bus,
	.msr_label = model_msr_label,
	.begin = model_begin,
	.end = model_end,
	.step = model_step,
	.synthetic = model_synthetic,
	.run_begin = model_run_begin,
	.run_end = model_run_end,
	.unmasked = model_unmasked,
	.source = model_source,
	.inject = model_inject,
	.inject_fault = model_inject_fault,
	.rdpmc = model_rdpmc,
	.bus_tsc = model_bus_tsc,
	.describe = model_describe,
};
