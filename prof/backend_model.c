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
 *   stores, prof/tagfeed.c), instr_completed NBOGUS where the model has it,
 *   branch_retired (MMTP when taken, MMNP when not: there is no predictor to
 *   observe, so nothing is ever mispredicted) and retired_branch_type
 *   (perf_branch_type below); its fetch and memory operands go through the
 *   memory-system model (prof/memfeed.c: TLB, cache, bus, replay-tag and
 *   uncore events); while PEBS or tagging is programmed, prof/tagfeed.c
 *   takes the step's registers (PEBS records), its tagged loads/stores
 *   (front_end_event) and its x87/SIMD class (the FIRM events and
 *   execution_event); and global_power_events RUNNING gets the cost
 *   model's clockticks for it (p4_cost.c; `pmu clock tsc` feeds the step's
 *   TSC cycles instead). The synthetic workload's int 0x81 feeds its spec's
 *   event. Kernel code outside the workload is never seen. The PMU lock is
 *   taken once per step and the PMIs the step raised are sent once, after
 *   it (earlier only when the events fed in the step reach
 *   perf_feed_chunk(), so that no counter wraps twice before its
 *   interrupt): a PMI lands on the instruction whose events raised it.
 * - The memory model is emptied when a counting run starts, so each run
 *   starts cold and two runs of one workload count alike.
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
#include "arch/x86/mem.h"
#include "arch/x86/mode.h"
#include "arch/x86/percpu.h"
#include "arch/x86/step.h"
#include "arch/x86/user.h"
#include "lib/parse.h"
#include "lib/printf.h"
#include "pmu/model/p4_model.h"
#include "pmu/p4_regs.h"
#include "pmu/p4_spec.h"
#include "pmu/p4_tables.h"
#include "arch/x86/paging.h"
#include "prof/backend.h"
#include "prof/backend_model.h"
#include "prof/memfeed.h"
#include "prof/pebs.h"
#include "prof/tagfeed.h"

#define MODEL_IRQ_WAIT	100000u		/* pause loops a PMI the model sent may take */
#define MODEL_NO_APIC	UINT32_MAX

struct model_bus {
	struct msr_bus bus;		/* first member */
};

static struct p4_model model;
static volatile uint64_t bus_tsc[PERCPU_MAX];	/* TSC each LP spent in model register accesses */
static uint64_t bus_call_tsc;		/* a call's cost outside the timed part (model_calibrate) */
static struct model_bus locked_bus;
/*
 * LPs the model asked to interrupt, by the LP whose model call raised the
 * request: that LP sends them right after its call (model_pmi_flush), so a
 * PMI raised by an LP's own step is delivered by that LP at that step, never
 * by the sibling at some other moment.
 */
static volatile uint32_t pmi_pending[P4_MODEL_NLP];
static uint32_t lp_apic[P4_MODEL_NLP] = { MODEL_NO_APIC, MODEL_NO_APIC };
static uint64_t model_clock;		/* cycles ticked into the model: the core's clock */
static uint64_t lp_clock[P4_MODEL_NLP];	/* each stepping LP's position on that clock */
static char label[24];
static uint64_t live_ev[(P4_NEVENT + 63) / 64];	/* events a counter may count (model_live_update) */
static bool live_dirty = true;		/* a register was written since live_ev was computed */
static bool live_mem;			/* some event of the memory model is live */
static bool tag_live;			/* PEBS, tagging or a FIRM event is programmed */
static struct p4_mem *mem;		/* the memory system of the selected part (model_mem_get) */
static struct memfeed_ctx feed;		/* the feed's view of it (prof/memfeed.h) */
static bool mem_ready;			/* mem holds a part (p4_mem_init succeeded) */
static bool mem_touched;		/* accesses went in since the last flush */
static bool want_l3;			/* the next selection models the Xeon MP with L3 */
static enum perf_model_clock clock_src = PERF_CLOCK_MODEL;

/* ---- batching ------------------------------------------------------------------ */

/*
 * The two events every step feeds - instr_retired NBOGUSNTAG and
 * global_power_events RUNNING - and the clock are added up here while
 * nothing can tell the difference, and reach the model in one call each
 * (batch_flush) before anything can: before every register access (so
 * reads see exact counts), before every other kind of input (another LP or
 * CPL, begin, end, synthetic), and before the count that would overflow a
 * counter, which is then fed on its own step so that the PMI lands on
 * that instruction. Allowed only while no counter compares (compare mode
 * works on each cycle's input, fact sheet 9.12), none owes a PMI on its
 * next count, and none waits for a cascade; the budget keeps the pending
 * events below the nearest overflow of any running counter. PMU lock held
 * throughout.
 */
struct model_batch {
	unsigned lp, cpl;
	uint64_t instr, clk, ticks;	/* pending events and cycles */
	uint64_t budget;		/* pending events allowed, 0: none (batch_budget) */
	bool budget_dirty;
};

static struct model_batch batch = { .budget_dirty = true };

static uint64_t batch_budget(void)
{
	uint64_t best = UINT64_MAX;

	if (model.cmp_running)
		return 0;
	for (unsigned c = 0; c < P4_NCOUNTER; c++) {
		uint64_t d;

		if (model.pmi_due[c])
			return 0;
		if (model.ctr_route[c] == P4_ESCR_NONE) {
			if (model.cccr[c] & (CCCR_CASCADE | CCCR_EXT_CASCADE))
				return 0;
			continue;
		}
		d = (model.cccr[c] & CCCR_FORCE_OVF) ? 1 : (P4_COUNTER_MASK - model.counter[c]) + 1;
		best = d < best ? d : best;
	}
	return best - 1;		/* the overflowing count itself goes unbatched */
}

static void batch_flush_now(void)
{
	struct model_batch *b = &batch;

	if (b->instr)
		p4_model_event(&model, b->lp, b->cpl, P4_EV_INSTR_RETIRED,
			       P4_EVMASK(P4_INSTR_RETIRED_NBOGUSNTAG), b->instr);
	if (b->clk)
		p4_model_event(&model, b->lp, b->cpl, P4_EV_GLOBAL_POWER_EVENTS,
			       P4_EVMASK(P4_GLOBAL_POWER_EVENTS_RUNNING), b->clk);
	if (b->ticks)
		p4_model_tick(&model, b->ticks);
	if (b->instr | b->clk | b->ticks)
		b->budget_dirty = true;
	b->instr = b->clk = b->ticks = 0;
}

/* Hand the pending events to the model (nothing to do, the common case, costs one test). */
static inline void batch_flush(void)
{
	if (batch.instr | batch.clk | batch.ticks)
		batch_flush_now();
}

/* Can n more events of this step (at lp, cpl) wait in the batch? */
static bool batch_takes(unsigned lp, unsigned cpl, uint64_t n)
{
	struct model_batch *b = &batch;

	if (lp != b->lp || cpl != b->cpl) {
		batch_flush();
		b->lp = lp;
		b->cpl = cpl;
	}
	if (b->budget_dirty) {
		b->budget = batch_budget();
		b->budget_dirty = false;
	}
	if (b->instr + b->clk + n < b->budget)
		return true;
	batch_flush();
	return false;
}
static bool no_pebs;			/* `pmu backend model ... nopebs` */
static struct { bool set; unsigned lp; uint64_t addr; } machine_fault; /* since run_begin */

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
	batch_flush();
	p4_model_set_bus_lp(&model, perf_this_lp());	/* DS_AREA, PEBS_ENABLE: per LP */
	r = msr_bus_read(&model.bus, msr, value);
	if (r == 0 && (inj_unflagged | inj_reloads))
		model_inject_read(msr, value);
	perf_unlock();
	bus_tsc[percpu_this()->index] += rdtsc() - t + bus_call_tsc;
	return r;
}

/* Events the memory model drives (memfeed.c), on the parts that have them. */
static bool model_memory_event(enum p4_event ev)
{
	switch (ev) {
	case P4_EV_ITLB_REFERENCE:
	case P4_EV_PAGE_WALK_TYPE:
	case P4_EV_BSQ_CACHE_REFERENCE:
	case P4_EV_IOQ_ALLOCATION:
	case P4_EV_IOQ_ACTIVE_ENTRIES:
	case P4_EV_BSQ_ALLOCATION:
	case P4_EV_FSB_DATA_ACTIVITY:
	case P4_EV_REPLAY_EVENT:
	case P4_EV_FRONT_END_EVENT:
		return true;
	default:
		return false;
	}
}

/*
 * Which events a counter counts now or may count after a cascade starts it
 * (PMU lock held): an event is live when one of its ESCRs feeds a running
 * counter and selects it (event select, fact sheet 2.2); while a counter
 * waits for a cascade, every event with an ESCR is (its start happens
 * inside the model, with no register write to tell). Recomputed at the
 * first step after a register write, so that the step feed skips the
 * events the model would only look at and drop.
 */
static bool model_uop_tags(unsigned k);
static bool model_live(enum p4_event ev);

/*
 * Does a step need prof/tagfeed.c? Only while PEBS is enabled, the front
 * end tags loads or stores (uop_type on a RAT ESCR), an ESCR marks µops
 * for execution tagging, or a FIRM event (x87/SIMD classes and moves) is counted:
 * otherwise the tagging feed would decode every instruction for nothing.
 */
static void model_tag_live_update(void)
{
	static const enum p4_event firm[] = {
		P4_EV_X87_FP_UOP, P4_EV_64BIT_MMX_UOP, P4_EV_128BIT_MMX_UOP, P4_EV_PACKED_SP_UOP,
		P4_EV_PACKED_DP_UOP, P4_EV_SCALAR_SP_UOP, P4_EV_SCALAR_DP_UOP,
		P4_EV_X87_SIMD_MOVES_UOP,
	};
	bool live = model.pebs_enable != 0 || model_uop_tags(P4_UOP_TYPE_TAGLOADS) ||
		    model_uop_tags(P4_UOP_TYPE_TAGSTORES) || model_live(P4_EV_EXECUTION_EVENT) ||
		    model_live(P4_EV_FRONT_END_EVENT);

	for (unsigned e = 0; e < P4_NESCR; e++)
		live |= (model.escr[e] & ESCR_TAG_ENABLE) != 0;
	for (unsigned i = 0; i < sizeof(firm) / sizeof(firm[0]); i++)
		live |= model_live(firm[i]);
	tag_live = live;
}

static void model_live_update(void)
{
	uint64_t escrs = 0;
	bool all = false;

	for (unsigned c = 0; c < P4_NCOUNTER; c++) {
		if (model.ctr_route[c] != P4_ESCR_NONE)
			escrs |= P4_MODEL_ESCR(model.ctr_route[c]);
		else if (model.cccr[c] & (CCCR_CASCADE | CCCR_EXT_CASCADE))
			all = true;
	}
	for (unsigned w = 0; w < sizeof(live_ev) / sizeof(live_ev[0]); w++)
		live_ev[w] = 0;
	for (unsigned ev = 0; ev < P4_NEVENT; ev++) {
		uint64_t left = model.ev_escrs[ev] & (all ? ~UINT64_C(0) : escrs);
		bool live = false;

		while (left && !live) {
			unsigned e = (unsigned)__builtin_ctzll(left);

			left &= left - 1;
			live = all || field_get(ESCR_EVENT_SELECT, model.escr[e]) ==
				      p4_events[ev].event_select;
		}
		if (live)
			live_ev[ev / 64] |= UINT64_C(1) << (ev % 64);
	}
	live_mem = false;
	for (unsigned ev = 0; ev < P4_NEVENT; ev++)
		live_mem |= model_memory_event((enum p4_event)ev) &&
			    ((live_ev[ev / 64] >> (ev % 64)) & 1u);
	model_tag_live_update();
	live_dirty = false;
}

static bool model_live(enum p4_event ev)
{
	return (live_ev[ev / 64] >> (ev % 64)) & 1u;
}

static int model_bus_write(struct msr_bus *bus, uint32_t msr, uint64_t value)
{
	uint64_t t = rdtsc();
	int r = 0;

	(void)bus;
	perf_lock();
	batch_flush();
	p4_model_set_bus_lp(&model, perf_this_lp());
	if (!model_inject_drops(msr))
		r = msr_bus_write(&model.bus, msr, value);
	live_dirty = true;
	batch.budget_dirty = true;
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
	case PERF_FAULT_STUCK:
		f.stuck_escr = arg;
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
	batch_flush();		/* the counts read must include the batched events */
	r = p4_model_rdpmc(&model, ecx, value);
	perf_unlock();
	return r;
}

/* ---- PMI delivery ------------------------------------------------------------- */

static void model_raise(struct p4_model *m, unsigned lp, void *ctx)
{
	(void)m;
	(void)ctx;
	__atomic_fetch_or(&pmi_pending[perf_this_lp()], 1u << lp, __ATOMIC_RELAXED);
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

	while ((lps = __atomic_exchange_n(&pmi_pending[me], 0, __ATOMIC_RELAXED)) != 0)
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
	batch_flush();
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
	pmi_pending[0] = pmi_pending[1] = 0;
	machine_fault.set = false;
	if (mem_ready && mem_touched) {
		p4_mem_flush(mem);
		memfeed_reset(&feed);
		mem_touched = false;
	}
}

static void model_run_end(void)
{
	perf_lock();
	batch_flush();
	perf_unlock();
	pmi_pending[0] = pmi_pending[1] = 0;
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
		batch_flush();
		p4_model_event(&model, lp, cpl, ev, mask, k);
		batch.budget_dirty = true;
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
	batch_flush();
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
	batch_flush();
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
		if (batch.budget)	/* batch_takes ran this step: no counter compares */
			batch.ticks += *pos - model_clock;
		else
			p4_model_tick(&model, *pos - model_clock);
		model_clock = *pos;
	}
}

/*
 * The step's feed: the PMU lock held throughout, PMIs flushed only when the
 * events fed since the last flush could make a counter wrap twice.
 */
struct step_feed {
	unsigned lp, cpl;
	uint64_t fed, chunk;
};

static void step_event(struct step_feed *sf, enum p4_event ev, uint16_t mask, uint64_t n)
{
	if (n == 0 || !model_live(ev))
		return;			/* nothing counts it: the model would look and add nothing */
	if (sf->fed + n > sf->chunk) {
		perf_unlock();
		model_pmi_flush();
		if (n > sf->chunk) {		/* a long REP string, `pmu clock tsc` */
			model_feed(sf->lp, sf->cpl, ev, mask, n);
			perf_lock();
			sf->fed = 0;
			return;
		}
		perf_lock();
		sf->fed = 0;
	}
	p4_model_event(&model, sf->lp, sf->cpl, ev, mask, n);
	batch.budget_dirty = true;
	sf->fed += n;
}

/* instr_retired NBOGUSNTAG or global_power_events RUNNING: batched when it can be. */
static void step_batched(struct step_feed *sf, enum p4_event ev, uint16_t mask, uint64_t n,
			 uint64_t *pending)
{
	if (n == 0 || !model_live(ev))
		return;
	if (batch_takes(sf->lp, sf->cpl, n)) {
		*pending += n;
		return;
	}
	step_event(sf, ev, mask, n);
}

static void step_retired(struct step_feed *sf, const struct step_info *s, uint16_t retired)
{
	uint16_t type;

	if (retired == P4_EVMASK(P4_INSTR_RETIRED_NBOGUSNTAG))
		step_batched(sf, P4_EV_INSTR_RETIRED, retired, 1, &batch.instr);
	else
		step_event(sf, P4_EV_INSTR_RETIRED, retired, 1);	/* front-end tagged */
	if (model.caps.instr_completed)
		step_event(sf, P4_EV_INSTR_COMPLETED, P4_EVMASK(P4_INSTR_COMPLETED_NBOGUS), 1);
	if (s->branch == INSN_NOT_BRANCH)
		return;
	step_event(sf, P4_EV_BRANCH_RETIRED,
		   P4_EVMASK(s->taken ? P4_BRANCH_RETIRED_MMTP : P4_BRANCH_RETIRED_MMNP), 1);
	if ((type = model_branch_type(s->branch)) != 0)
		step_event(sf, P4_EV_RETIRED_BRANCH_TYPE, type, 1);
}

/*
 * Front-end tagging (fact sheet 5.6): does a RAT ESCR select uop_type with
 * mask bit k (TAGLOADS, TAGSTORES)? Tagged uops are then counted by
 * front_end_event NBOGUS when they retire. The ESCR's T-bits are not
 * consulted: the model tags the uops of both LPs alike.
 */
static bool model_uop_tags(unsigned k)
{
	static const enum p4_escr rat[] = { P4_RAT_ESCR0, P4_RAT_ESCR1 };

	for (unsigned i = 0; i < sizeof(rat) / sizeof(rat[0]); i++) {
		uint64_t v = model.escr[rat[i]];

		if (field_get(ESCR_EVENT_SELECT, v) == p4_events[P4_EV_UOP_TYPE].event_select &&
		    (field_get(ESCR_EVENT_MASK, v) & P4_EVMASK(k)))
			return true;
	}
	return false;
}

/* The memory model's events for one instruction; its clockticks in *cycles. */
static void step_memory(struct step_feed *sf, struct perf_inputs *in, const struct step_info *s,
			uint64_t *cycles)
{
	struct memfeed f;
	struct memfeed_event ev[MEMFEED_MAX_EVENTS];
	struct memfeed_uncore unc[MEMFEED_MAX_UNCORE];
	unsigned n;

	memfeed_step(&feed, s, &f);
	mem_touched = true;
	in->mem_unknown += !f.known;
	*cycles = f.cycles;
	if (!live_mem && !model.cfg.uncore)
		return;			/* only the clockticks are wanted */
	n = memfeed_events(&f, model.pebs_enable, model.pebs_matrix_vert, ev, MEMFEED_MAX_EVENTS);
	for (unsigned i = 0; i < n; i++) {
		step_event(sf, ev[i].ev, ev[i].mask, ev[i].n);
		if (ev[i].n)
			in->mem_fed[ev[i].ev / 64] |= UINT64_C(1) << (ev[i].ev % 64);
	}
	/* front_end_event's tagged µops are counted by prof/tagfeed.c (tag_live) */
	if (!model.cfg.uncore)
		return;
	n = memfeed_uncore(&f, s->lp, unc, MEMFEED_MAX_UNCORE);
	for (unsigned i = 0; i < n; i++)
		p4_model_uncore_event(&model, unc[i].unit, unc[i].attrs, unc[i].n);
}

static void model_step(void *ctx, const struct step_info *s)
{
	struct perf_inputs *in = ctx;
	struct step_feed sf = { .lp = s->lp, .cpl = s->cpl, .chunk = perf_feed_chunk() };
	uint64_t cycles = 0;
	uint16_t retired = P4_EVMASK(P4_INSTR_RETIRED_NBOGUSNTAG);

	in->steps++;
	in->branches += s->branch != INSN_NOT_BRANCH;
	perf_lock();
	if (live_dirty)
		model_live_update();
	if (batch.lp != s->lp || batch.cpl != s->cpl) {
		batch_flush();
		batch.lp = s->lp;
		batch.cpl = s->cpl;
	}
	if (batch.budget_dirty) {
		batch.budget = batch_budget();
		batch.budget_dirty = false;
	}
	if (!batch.budget)
		batch_flush();		/* nothing may wait this step, the clock included */
	p4_model_set_cpl(&model, s->lp, s->cpl);
	if (tag_live) {		/* PEBS registers, tagging: fed unbatched, in order */
		batch_flush();
		retired = tagfeed_step(&model, s, step_frame());
		batch.budget_dirty = true;
	}
	step_retired(&sf, s, retired);
	if (mem_ready)
		step_memory(&sf, in, s, &cycles);
	if (clock_src == PERF_CLOCK_TSC || !mem_ready)
		cycles = s->cycles;
	if (cycles) {
		in->cycles += cycles;
		step_batched(&sf, P4_EV_GLOBAL_POWER_EVENTS, P4_EVMASK(P4_GLOBAL_POWER_EVENTS_RUNNING),
			     cycles, &batch.clk);
		model_clock_advance(s->lp, cycles);
	}
	perf_unlock();
	model_pmi_flush();
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
		return clock_src == PERF_CLOCK_TSC || !mem_ready ? PERF_SOURCE_TSC : PERF_SOURCE_COST;
	default:
		if (p4_events[ev].flags & P4_EVF_UPSTREAM_TAG)
			return PERF_SOURCE_STEP;	/* the FIRM events: x87/SIMD class */
		if (mem_ready && model_memory_event(ev)) {
			/* fed by `synthetic` alone unless the memory model fed it too this run */
			bool fed = in && ((in->mem_fed[ev / 64] >> (ev % 64)) & 1u);
			bool syn = in && in->synthetic &&
				   (in->synthetic_mixed || in->synthetic_event == ev);

			return syn && !fed ? PERF_SOURCE_SYNTHETIC : PERF_SOURCE_MEMORY;
		}
		if (in && in->synthetic && (in->synthetic_mixed || in->synthetic_event == ev))
			return PERF_SOURCE_SYNTHETIC;
		return PERF_SOURCE_NONE;
	}
}

/* ---- selection and status -------------------------------------------------------- */

static unsigned model_page_shift(void *ctx, uint64_t addr)
{
	(void)ctx;
	return paging_page_shift(addr);
}

/*
 * The memory model's state (1.3 MB, sized for the largest part) from the
 * page allocator at the first selection, not in .bss: the ia32 image stores
 * its .bss in the file. NULL when there is no memory for it (then no memory
 * model: clockticks from the TSC, and its events have no input).
 */
static struct p4_mem *model_mem_get(void)
{
	if (!mem) {
		uint64_t a = mem_alloc_pages((sizeof(struct p4_mem) + MEM_PAGE_SIZE - 1) / MEM_PAGE_SIZE);

		mem = (struct p4_mem *)(uintptr_t)a;
	}
	return mem;
}

/* The first PEBS assist that could not reach its DS area since the run began. */
static void model_machine_fault(struct p4_model *m, unsigned lp, uint64_t addr, void *ctx)
{
	(void)m;
	(void)ctx;
	if (machine_fault.set)
		return;
	machine_fault.set = true;
	machine_fault.lp = lp;
	machine_fault.addr = addr;
}

static bool model_fault_text(char *buf, size_t n)
{
	if (!machine_fault.set)
		return false;
	ksnprintf(buf, n, "machine fault: the PEBS assist of LP%u could not reach its DS save area "
		  "or buffer at %llXH (IA32_DS_AREA %s); a real machine faults inside the assist",
		  machine_fault.lp, (unsigned long long)machine_fault.addr,
		  model.ds_area[machine_fault.lp] ? "unmapped" : "0");
	machine_fault.set = false;	/* reported once */
	return true;
}

/*
 * The CPU as the model's signature is (caps): CPUID.1 DS on every NetBurst
 * part, DTES64 on models 3, 4 and 6, and IA32_MISC_ENABLE as the model
 * reads it (bit 7 set, bit 12 as `nopebs` says, bit 11 set: the model has
 * no branch trace store). QEMU's own CPUID has neither DS nor DTES64.
 */
static void model_cpu_view(struct cpu_info *ci)
{
	ci->ds = true;
	ci->dtes64 = model.caps.dtes64;
	ci->misc_enable_ok = model_bus_read(NULL, MSR_IA32_MISC_ENABLE, &ci->misc_enable) == 0;
	if (!ci->misc_enable_ok)
		ci->misc_enable = 0;
}

static int model_select(const struct p4_sig *sig, bool ht, struct p4_caps *caps, char *err, size_t n)
{
	struct p4_model_config cfg = { .sig = *sig, .ht = ht, .raise_pmi = model_raise,
				       .mem = pebs_mem, .pebs_unavailable = no_pebs,
				       .bts_unavailable = true,	/* no BTS in the model */
				       .legacy_mode = !MODE_IS_64,
				       .machine_fault = model_machine_fault };
	char sigtext[8];

	if (!p4_caps_lookup(sig, caps))
		return ksnprintf(err, n, "the model needs a family 0FH signature such as 0F_04"), -1;
	if (want_l3 && !p4_mem_part_lookup(sig, P4_MEM_XEON_MP_L3))
		return ksnprintf(err, n, "no Xeon MP with an L3 has signature %02X_%02X (the L3 parts are "
				 "models 2, 3, 4 and 6)", sig->family, sig->model), -1;
	cfg.uncore = want_l3 && caps->uncore != P4_UNCORE_NONE;
	if (p4_model_init(&model, &cfg) != 0)
		return ksnprintf(err, n, "the model needs a family 0FH signature such as 0F_04"), -1;
	mem_ready = model_mem_get() && p4_mem_init(mem, sig, want_l3 ? P4_MEM_XEON_MP_L3 : P4_MEM_DESKTOP,
						   model_page_shift, NULL) == 0;
	memfeed_init(&feed, mem);
	mem_touched = false;
	locked_bus.bus = (struct msr_bus){ .read = model_bus_read, .write = model_bus_write };
	model_calibrate();
	p4_model_set_active(&model, 0, true);	/* LP0 runs the shell */
	p4_model_set_active(&model, 1, false);	/* the sibling halts until it runs a workload */
	*caps = model.caps;
	pmi_pending[0] = pmi_pending[1] = 0;
	live_dirty = true;
	p4_sig_format(sig, sigtext, sizeof(sigtext));
	ksnprintf(label, sizeof(label), "model %s%s", sigtext, want_l3 ? " L3" : "");
	return 0;
}

/* ---- settings (backend_model.h) -------------------------------------------------- */

void perf_model_set_l3(bool l3)
{
	want_l3 = l3;
}

bool perf_model_l3(void)
{
	return want_l3;
}

void perf_model_set_clock(enum perf_model_clock c)
{
	clock_src = c;
}

enum perf_model_clock perf_model_clock(void)
{
	return clock_src;
}

const char *perf_model_clock_name(enum perf_model_clock c)
{
	return c == PERF_CLOCK_TSC ? "tsc" : "model";
}

static void model_geom(char *buf, size_t n, const char *what, const struct p4_cache_geom *g)
{
	if (g->size)
		ksnprintf(buf, n, ", %s %u KB %u-way", what, (unsigned)(g->size / 1024u),
			  (unsigned)g->ways);
	else
		ksnprintf(buf, n, "%s", "");
}

void perf_model_mem_describe(char *buf, size_t n)
{
	const struct p4_mem_part *p = mem ? mem->part : NULL;
	char l1[32], l2[32], l3[32];

	if (!mem_ready || !p) {
		ksnprintf(buf, n, "%s", "");
		return;
	}
	model_geom(l1, sizeof(l1), "L1D", &p->l1d);
	model_geom(l2, sizeof(l2), "L2", &p->l2);
	model_geom(l3, sizeof(l3), "L3", &p->l3);
	ksnprintf(buf, n, "memory model: %s%s%s%s, DTLB %u, ITLB %u; clockticks: %s", p->name,
		  l1, l2, l3, (unsigned)p->dtlb.entries, (unsigned)p->itlb.entries,
		  clock_src == PERF_CLOCK_TSC ? "TSC (measured)" : "cost model (a model)");
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
	.bus_tsc = bus_tsc,
	.describe = model_describe,
	.cpu_view = model_cpu_view,
	.machine_fault = model_fault_text,
};
