/*
 * model_feed.c - the model backend's event feed: the workload hooks.
 *
 * Each stepped instruction is fed at the LP (SMT ID, T0/T1) and CPL that
 * retired it: instr_retired NBOGUSNTAG (NBOGUSTAG when the front end tagged
 * one of its loads or stores, prof/backend/tagfeed.c), instr_completed NBOGUS where
 * the model has it (instr_retired twice for the instructions real parts count
 * as two), branch_retired (MMTP/MMNP, or MMTM/MMNM when the core model's
 * predictor mispredicted it), mispred_branch_retired, retired_branch_type and
 * retired_mispred_branch_type (model_branch_type below), uops_retired; its
 * fetch and memory operands go through the memory-system model and then the
 * core's timing model (prof/backend/memfeed.c, pmu/model/p4_core.c: TLB,
 * cache, bus, replay-tag and uncore events, clockticks, uops, mispredicts);
 * while PEBS or tagging is programmed,
 * prof/backend/tagfeed.c takes the step's registers (PEBS records), its tagged
 * loads/stores (front_end_event) and its x87/SIMD class (the FIRM events
 * and execution_event); while x87_assist or SSE_input_assist is counted,
 * prof/backend/assistfeed.c judges its floating-point operands (the
 * assists, and their clockticks); and global_power_events RUNNING gets the core
 * model's clockticks for it (p4_core.c; `pmu clock tsc` feeds the step's
 * TSC cycles instead). The synthetic workload's int 0x81 feeds its spec's
 * event. A step's data flows one way (model_feed_step): its events are
 * collected in one struct p4_step_batch, which the PMU model applies
 * (pmu/model/p4_step.c, deciding the tagging), then its cycles tick the
 * model's clock. The PMU lock is taken once per step and the PMIs the step
 * raised are sent once, after it (earlier only when the events fed in the
 * step reach perf_feed_chunk(), so that no counter wraps twice before its
 * interrupt): a PMI lands on the instruction whose events raised it. The
 * two events every step feeds wait across steps (prof/backend/model_batch.c)
 * while nothing can tell.
 *
 * The active-thread input (CCCR bits 17:16, PMU reference 2.2: a halted LP is
 * inactive): LP0 runs the shell and is always active; the sibling from its
 * workload's begin hook to its end hook.
 */
#include "arch/x86/step.h"
#include "lib/parse.h"
#include "lib/printf.h"
#include "pmu/p4_regs.h"
#include "pmu/p4_spec.h"
#include "pmu/p4_tables.h"
#include "prof/backend.h"
#include "prof/backend/assistfeed.h"
#include "prof/backend/model_adapter.h"
#include "prof/backend/tagfeed.h"

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
	case P4_EV_BSQ_ACTIVE_ENTRIES:
	case P4_EV_FSB_DATA_ACTIVITY:
	case P4_EV_REPLAY_EVENT:
	case P4_EV_FRONT_END_EVENT:
	case P4_EV_LOAD_PORT_REPLAY:
	case P4_EV_STORE_PORT_REPLAY:
	case P4_EV_MEMORY_COMPLETE:
	case P4_EV_MOB_LOAD_REPLAY:	/* the store buffer (pmu/model/p4_sbuf.c) */
	case P4_EV_MEMORY_CANCEL:
	case P4_EV_RESOURCE_STALL:
	case P4_EV_WC_BUFFER:
	case P4_EV_BPU_FETCH_REQUEST:	/* the trace cache (pmu/model/p4_tc.c) */
	case P4_EV_TC_MISC:
	case P4_EV_MACHINE_CLEAR:
		return true;
	default:
		return false;
	}
}

static bool model_live(const struct model_adapter *a, enum p4_event ev)
{
	return (a->live.ev[ev / 64] >> (ev % 64)) & 1u;
}

/*
 * Front-end tagging (PMU reference 5.6): does a RAT ESCR select uop_type with
 * mask bit k (TAGLOADS, TAGSTORES)? Tagged uops are then counted by
 * front_end_event NBOGUS when they retire. The ESCR's T-bits are not
 * consulted: the model tags the uops of both LPs alike.
 */
static bool model_uop_tags(const struct p4_model *m, unsigned k)
{
	static const enum p4_escr rat[] = { P4_RAT_ESCR0, P4_RAT_ESCR1 };

	for (unsigned i = 0; i < sizeof(rat) / sizeof(rat[0]); i++) {
		uint64_t v = m->escr[rat[i]];

		if (field_get(ESCR_EVENT_SELECT, v) == p4_events[P4_EV_UOP_TYPE].event_select &&
		    (field_get(ESCR_EVENT_MASK, v) & P4_EVMASK(k)))
			return true;
	}
	return false;
}

/*
 * The FIRM events the tagging feed counts (prof/backend/tagfeed.c): each
 * instruction's x87/SIMD class and its data moves. SSE_input_assist, the
 * other FIRM event, is not among them: an assist depends on the operand
 * values (denormals), which prof/backend/assistfeed.c judges (step_assists).
 */
static const enum p4_event model_firm[] = {
	P4_EV_X87_FP_UOP, P4_EV_64BIT_MMX_UOP, P4_EV_128BIT_MMX_UOP, P4_EV_PACKED_SP_UOP,
	P4_EV_PACKED_DP_UOP, P4_EV_SCALAR_SP_UOP, P4_EV_SCALAR_DP_UOP,
	P4_EV_X87_SIMD_MOVES_UOP,
};

static bool model_firm_fed(enum p4_event ev)
{
	for (unsigned i = 0; i < sizeof(model_firm) / sizeof(model_firm[0]); i++)
		if (model_firm[i] == ev)
			return true;
	return false;
}

/*
 * Does a step need prof/backend/tagfeed.c? Only while PEBS is enabled, the front
 * end tags loads or stores (uop_type on a RAT ESCR), an ESCR marks µops
 * for execution tagging, or a FIRM event (x87/SIMD classes and moves) is counted:
 * otherwise the tagging feed would decode every instruction for nothing.
 */
static bool model_tag_live(const struct model_adapter *a)
{
	const struct p4_model *m = &a->model;
	bool live = m->pebs_enable != 0 || model_uop_tags(m, P4_UOP_TYPE_TAGLOADS) ||
		    model_uop_tags(m, P4_UOP_TYPE_TAGSTORES) ||
		    model_live(a, P4_EV_EXECUTION_EVENT) || model_live(a, P4_EV_FRONT_END_EVENT);

	for (unsigned e = 0; e < P4_NESCR; e++)
		live |= (m->escr[e] & ESCR_TAG_ENABLE) != 0;
	for (unsigned i = 0; i < sizeof(model_firm) / sizeof(model_firm[0]); i++)
		live |= model_live(a, model_firm[i]);
	return live;
}

/*
 * Which events a counter counts now or may count after a cascade starts it
 * (PMU lock held): an event is live when one of its ESCRs feeds a running
 * counter and selects it (event select, PMU reference 2.2); while a counter
 * waits for a cascade, every event with an ESCR is (its start happens
 * inside the model, with no register write to tell). Recomputed at the
 * first step after a register write, so that the step feed skips the
 * events the model would only look at and drop.
 */
void model_live_update(struct model_adapter *a)
{
	const struct p4_model *m = &a->model;
	uint64_t escrs = 0;
	bool all = false;

	for (unsigned c = 0; c < P4_NCOUNTER; c++) {
		if (m->ctr_route[c] != P4_ESCR_NONE)
			escrs |= P4_MODEL_ESCR(m->ctr_route[c]);
		else if (m->cccr[c] & (CCCR_CASCADE | CCCR_EXT_CASCADE))
			all = true;
	}
	for (unsigned w = 0; w < sizeof(a->live.ev) / sizeof(a->live.ev[0]); w++)
		a->live.ev[w] = 0;
	for (unsigned ev = 0; ev < P4_NEVENT; ev++) {
		uint64_t left = m->ev_escrs[ev] & (all ? ~UINT64_C(0) : escrs);
		bool live = false;

		while (left && !live) {
			unsigned e = (unsigned)__builtin_ctzll(left);

			left &= left - 1;
			live = all || field_get(ESCR_EVENT_SELECT, m->escr[e]) ==
				      p4_events[ev].event_select;
		}
		if (live)
			a->live.ev[ev / 64] |= UINT64_C(1) << (ev % 64);
	}
	a->live.mem = false;
	for (unsigned ev = 0; ev < P4_NEVENT; ev++)
		a->live.mem |= model_memory_event((enum p4_event)ev) && model_live(a, (enum p4_event)ev);
	a->feed.wc_live = model_live(a, P4_EV_WC_BUFFER);	/* the WC buffers' model */
	a->live.tag = model_tag_live(a);
	a->live.core = model_live(a, P4_EV_UOPS_RETIRED) || model_live(a, P4_EV_UOP_QUEUE_WRITES) ||
		       model_live(a, P4_EV_TC_MS_XFER) || model_live(a, P4_EV_TC_DELIVER_MODE);
	a->live.assist = (model_live(a, P4_EV_X87_ASSIST) || model_live(a, P4_EV_SSE_INPUT_ASSIST)) &&
			 step_fp_usable();
	a->live.slow = a->live.tag || a->live.assist;
	a->live.dirty = false;
}

/* n events in pieces no counter can wrap twice in, each followed by its PMIs. */
static void model_feed(struct model_adapter *a, unsigned lp, unsigned cpl, enum p4_event ev,
		       uint16_t mask, uint64_t n)
{
	uint64_t chunk = perf_feed_chunk();

	while (n > 0) {
		uint64_t k = n < chunk ? n : chunk;

		perf_lock();
		model_batch_flush(&a->batch, &a->model);
		p4_model_event(&a->model, lp, cpl, ev, mask, k);
		a->batch.budget_dirty = true;
		perf_unlock();
		model_pmi_flush(&a->pmi);
		n -= k;
	}
}

/*
 * retired_branch_type mask bits (PMU reference 4.1) for one retired branch, per
 * the SDM's event table (Vol. 3B Table A-9, the PMU reference's SDM-2008
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

/*
 * A workload begins on this LP. The sibling's counting window opens here
 * (LP0's is the counting run's): its kernel code up to its end hook is
 * stepped too.
 */
void model_feed_begin(struct perf_inputs *in, uint8_t lp)
{
	struct model_adapter *a = &model_adapter;
	uint64_t held = step_hold();
	unsigned me = percpu_this()->index;

	(void)in;
	perf_lock();
	model_batch_flush(&a->batch, &a->model);
	p4_model_set_active(&a->model, lp, true);
	if (lp < P4_MODEL_NLP)
		a->lp_clock[lp] = a->clock;	/* its workload starts now on the core's clock */
	perf_unlock();
	if (perf_counting() && !step_window_open()) {
		a->hook_win[me] = true;
		step_window_begin(&a->khooks[lp < P4_MODEL_NLP ? lp : 0], lp);
		return;
	}
	step_release(held);
}

void model_feed_end(struct perf_inputs *in, uint8_t lp)
{
	struct model_adapter *a = &model_adapter;
	uint64_t held = step_hold();
	unsigned me = percpu_this()->index;

	(void)in;
	if (a->hook_win[me]) {
		a->hook_win[me] = false;
		step_window_end();
	}
	model_pmi_flush(&a->pmi);
	perf_lock();
	model_batch_flush(&a->batch, &a->model);
	p4_model_set_cpl(&a->model, lp, 0);	/* back in the kernel */
	/* LP0 goes back to the shell (running); the sibling goes back to HLT (inactive). */
	p4_model_set_active(&a->model, lp, me == 0);
	perf_unlock();
	step_release(held);
}

/* The step feed's helpers, inline under -Os too: every stepped instruction runs them. */
#define STEP_FEED_INLINE	static inline __attribute__((always_inline))

/*
 * The step's feed: the PMU lock held throughout; the step's events collected
 * in one batch (struct p4_step_batch) that the PMU model applies
 * (step_apply), PMIs flushed only when the events fed since the last flush
 * could make a counter wrap twice.
 */
struct step_feed {
	struct p4_step_batch *b;
	unsigned lp, cpl;
	uint64_t fed, chunk;		/* chunk: perf_feed_chunk(), 0 until first needed */
};

/* Ask for the chunk once per step, when something is fed. */
static uint64_t step_chunk(struct step_feed *sf)
{
	if (!sf->chunk)
		sf->chunk = perf_feed_chunk();
	return sf->chunk;
}

/* Hand the batch to the PMU model, in pieces of at most a chunk, each followed by its PMIs. */
static __attribute__((noinline)) void step_apply(struct step_feed *sf)
{
	struct model_adapter *a = &model_adapter;
	struct p4_step_batch *b = sf->b;
	uint64_t chunk = step_chunk(sf);

	b->lp = (uint8_t)sf->lp;
	b->cpl = (uint8_t)sf->cpl;
	for (;;) {
		sf->fed += p4_model_apply(&a->model, b, chunk - sf->fed);
		if (b->done == b->n)
			break;
		perf_unlock();
		model_pmi_flush(&a->pmi);
		perf_lock();
		sf->fed = 0;
	}
	b->n = b->done = 0;
	a->batch.budget_dirty = true;
}

/* An increment that does not fit: the batch full, or more than one entry holds. */
static __attribute__((noinline)) void step_add_slow(struct step_feed *sf, enum p4_event ev,
						    uint16_t mask, uint64_t n)
{
	struct p4_step_batch *b = sf->b;

	while (n) {
		uint32_t k = n < UINT32_MAX ? (uint32_t)n : UINT32_MAX;

		if (b->n == P4_STEP_INCS)
			step_apply(sf);
		b->inc[b->n++] = (struct p4_event_inc){ .ev = ev, .mask = mask, .n = k };
		n -= k;
	}
}

/* One event of the step, into the batch; inline the test that skips what nothing counts. */
STEP_FEED_INLINE void step_event(struct step_feed *sf, enum p4_event ev, uint16_t mask, uint64_t n)
{
	struct p4_step_batch *b = sf->b;

	if (n == 0 || !model_live(&model_adapter, ev))
		return;			/* nothing counts it: the model would look and add nothing */
	if (__builtin_expect(b->n == P4_STEP_INCS || n > UINT32_MAX, 0)) {
		step_add_slow(sf, ev, mask, n);
		return;
	}
	b->inc[b->n++] = (struct p4_event_inc){ .ev = ev, .mask = mask, .n = (uint32_t)n };
}

/* The step's cycles, after its batch: fed at once, by the same chunk rule. */
static void step_event_now(struct step_feed *sf, enum p4_event ev, uint16_t mask, uint64_t n)
{
	struct model_adapter *a = &model_adapter;
	uint64_t chunk = step_chunk(sf);

	if (sf->fed + n > chunk) {
		perf_unlock();
		model_pmi_flush(&a->pmi);
		if (n > chunk) {		/* `pmu clock tsc`, a long walk */
			model_feed(a, sf->lp, sf->cpl, ev, mask, n);
			perf_lock();
			sf->fed = 0;
			return;
		}
		perf_lock();
		sf->fed = 0;
	}
	p4_model_event(&a->model, sf->lp, sf->cpl, ev, mask, n);
	a->batch.budget_dirty = true;
	sf->fed += n;
}

/*
 * instr_retired NBOGUSNTAG or global_power_events RUNNING: left waiting
 * across steps (struct model_batch) when it can be, else into the step's
 * batch (now: false) or fed at once (the cycles, after the batch).
 */
STEP_FEED_INLINE void step_batched(struct step_feed *sf, enum p4_event ev, uint16_t mask,
				  uint64_t n, uint64_t *pending, bool now)
{
	struct model_adapter *a = &model_adapter;

	if (n == 0 || !model_live(a, ev))
		return;
	if (model_batch_takes(&a->batch, &a->model, sf->lp, sf->cpl, n)) {
		*pending += n;
		return;
	}
	if (now)
		step_event_now(sf, ev, mask, n);
	else
		step_event(sf, ev, mask, n);
}

/*
 * A step's cycles: global_power_events RUNNING (an event a cycle) and the
 * clock (p4_model_tick, which closes the cycles compare-mode counters
 * count). Fed as two calls, a cascade started inside one of them would be
 * wrong by up to the step's cycles: a partner counting RUNNING started by
 * a compare-mode starter's tick would miss the rest of the step, and a
 * compare-mode partner started inside the RUNNING call would count the
 * cycles before its start (selftest's BPU cascades on 0F_02, whose first
 * step takes hundreds of clocks). While a running counter may start
 * another (cascade_armed), the cycles go in runs that end one short of the
 * nearest overflow, and that cycle alone, as the hardware counts them (SDM
 * Example 18-1: the partner "begins counting" at the overflow).
 */
static __attribute__((noinline)) void step_cycles_apart(struct step_feed *sf, uint64_t cycles)
{
	struct model_adapter *a = &model_adapter;

	while (cycles) {
		uint64_t to = p4_model_to_overflow(&a->model);
		uint64_t n = to > 2 ? to - 1 : 1;

		n = n < cycles ? n : cycles;
		step_batched(sf, P4_EV_GLOBAL_POWER_EVENTS, P4_EVMASK(P4_GLOBAL_POWER_EVENTS_RUNNING), n,
			     &a->batch.clk, true);
		model_clock_advance(&a->batch, &a->model, &a->clock, a->lp_clock, sf->lp, n);
		cycles -= n;
	}
}

STEP_FEED_INLINE void step_cycles(struct step_feed *sf, uint64_t cycles)
{
	struct model_adapter *a = &model_adapter;

	if (__builtin_expect(a->model.cascade_armed != 0, 0)) {
		step_cycles_apart(sf, cycles);
		return;
	}
	step_batched(sf, P4_EV_GLOBAL_POWER_EVENTS, P4_EVMASK(P4_GLOBAL_POWER_EVENTS_RUNNING), cycles,
		     &a->batch.clk, true);
	model_clock_advance(&a->batch, &a->model, &a->clock, a->lp_clock, sf->lp, cycles);
}

/* retired_mispred_branch_type's bits (PMU reference 4.1) for a branch type's (model_branch_type). */
static uint16_t model_mispred_type(uint16_t type)
{
	uint16_t m = 0;

	if (type & P4_EVMASK(P4_RETIRED_BRANCH_TYPE_CONDITIONAL))
		m |= P4_EVMASK(P4_RETIRED_MISPRED_BRANCH_TYPE_CONDITIONAL);
	if (type & P4_EVMASK(P4_RETIRED_BRANCH_TYPE_CALL))
		m |= P4_EVMASK(P4_RETIRED_MISPRED_BRANCH_TYPE_CALL);
	if (type & P4_EVMASK(P4_RETIRED_BRANCH_TYPE_RETURN))
		m |= P4_EVMASK(P4_RETIRED_MISPRED_BRANCH_TYPE_RETURN);
	if (type & P4_EVMASK(P4_RETIRED_BRANCH_TYPE_INDIRECT))
		m |= P4_EVMASK(P4_RETIRED_MISPRED_BRANCH_TYPE_INDIRECT);
	return m;
}

/*
 * The core model's front-end events of one instruction: uops_retired; its
 * uops written to the uop queue from the trace cache (FROM_TC_BUILD when
 * the front end built it, pmu/model/p4_tc.c) or, for a microcoded
 * instruction, the microcode ROM (then one tc_ms_xfer); TC_deliver_mode
 * for each of its clockticks, in the mode of each LP: its own (B when
 * built, else D) and the sibling's (I when inactive, else B while its
 * last instruction was built, D otherwise). The mask bit is LP0's state
 * times three plus LP1's (D 0, B 1, I 2): DD 0 ... IB 7 (PMU reference 4.1).
 */
_Static_assert(P4_TC_DELIVER_MODE_DB == 0 * 3 + 1 && P4_TC_DELIVER_MODE_BD == 1 * 3 + 0 &&
	       P4_TC_DELIVER_MODE_BI == 1 * 3 + 2 && P4_TC_DELIVER_MODE_IB == 2 * 3 + 1,
	       "TC_deliver_mode's bits are LP0's state x 3 + LP1's");

static void step_core(struct step_feed *sf, const struct step_info *s, const struct memfeed *f)
{
	const struct model_adapter *a = &model_adapter;
	bool rom = p4_core_microcoded(&s->core), built = f->tc >= P4_TC_BUILD;
	unsigned me = built ? 1u : 0u, other = !a->model.active[sf->lp ? 0 : 1] ? 2u
					       : a->feed.tc->lp[sf->lp ? 0 : 1].build ? 1u : 0u;
	unsigned mode = sf->lp ? other * 3u + me : me * 3u + other;

	step_event(sf, P4_EV_UOPS_RETIRED, P4_EVMASK(P4_UOPS_RETIRED_NBOGUS), f->uops);
	step_event(sf, P4_EV_UOP_QUEUE_WRITES,
		   P4_EVMASK(rom ? P4_UOP_QUEUE_WRITES_FROM_ROM : built ? P4_UOP_QUEUE_WRITES_FROM_TC_BUILD
									 : P4_UOP_QUEUE_WRITES_FROM_TC_DELIVER),
		   f->uops);
	step_event(sf, P4_EV_TC_MS_XFER, P4_EVMASK(P4_TC_MS_XFER_CISC), rom);
	step_event(sf, P4_EV_TC_DELIVER_MODE, P4_EVMASK(mode), f->cycles);
}

/*
 * The retirement events of one instruction: instr_retired (twice for the
 * instructions real parts count as two, p4_core.c's quirks; instr_completed
 * once, as the ISPASS 2013 data show it), branch_retired by direction and
 * prediction (the core model's predictor), mispred_branch_retired,
 * retired_branch_type, retired_mispred_branch_type, uops_retired.
 */
static void step_retired(struct step_feed *sf, const struct step_info *s, const struct memfeed *f)
{
	uint16_t type;
	unsigned n = 1u + ((s->core.flags & P4_IF_RETIRES_TWO) != 0);
	bool mis = f && f->mispredicted;

	if (!model_adapter.live.tag)
		step_batched(sf, P4_EV_INSTR_RETIRED, P4_EVMASK(P4_INSTR_RETIRED_NBOGUSNTAG), n,
			     &model_adapter.batch.instr, false);
	else	/* mask 0: the PMU model's tagging decides NBOGUSTAG (p4_model_apply) */
		step_event(sf, P4_EV_INSTR_RETIRED, 0, n);
	if (model_adapter.model.caps.instr_completed)
		step_event(sf, P4_EV_INSTR_COMPLETED, P4_EVMASK(P4_INSTR_COMPLETED_NBOGUS), 1);
	if (f && model_adapter.live.core)
		step_core(sf, s, f);
	if (s->branch == INSN_NOT_BRANCH)
		return;
	step_event(sf, P4_EV_BRANCH_RETIRED,
		   P4_EVMASK(s->taken ? (mis ? P4_BRANCH_RETIRED_MMTM : P4_BRANCH_RETIRED_MMTP)
				      : (mis ? P4_BRANCH_RETIRED_MMNM : P4_BRANCH_RETIRED_MMNP)), 1);
	type = model_branch_type(s->branch);
	if (type)
		step_event(sf, P4_EV_RETIRED_BRANCH_TYPE, type, 1);
	if (!mis)
		return;
	step_event(sf, P4_EV_MISPRED_BRANCH_RETIRED, P4_EVMASK(P4_MISPRED_BRANCH_RETIRED_NBOGUS), 1);
	if (type)
		step_event(sf, P4_EV_RETIRED_MISPRED_BRANCH_TYPE, model_mispred_type(type), 1);
}

/*
 * The floating-point assists of one instruction (prof/backend/assistfeed.c):
 * x87_assist once with its mask bits, SSE_input_assist per request, and
 * the clockticks they add (P4_ASSIST_CLOCKS each, pmu/model/p4_assist.c;
 * returned, the step's cycles carry them) to the model's clock (not to
 * `pmu clock tsc`'s, which measures). Judged
 * only while one of the two is live, so that an uncounted run pays
 * nothing: their cost is then not charged either (docs/guide/model.md).
 */
static __attribute__((noinline)) uint64_t step_assists(struct step_feed *sf,
						       const struct step_info *s)
{
	struct model_adapter *a = &model_adapter;
	struct assistfeed as;

	if (!assistfeed_step(s, &as))
		return 0;
	if (as.x87)
		step_event(sf, P4_EV_X87_ASSIST, as.x87, 1);
	step_event(sf, P4_EV_SSE_INPUT_ASSIST, P4_EVMASK(P4_SSE_INPUT_ASSIST_ALL), as.sse);
	if (a->clock_src == PERF_CLOCK_TSC || !a->mem_ready)
		return 0;
	return ((as.x87 != 0) + (uint64_t)as.sse) * P4_ASSIST_CLOCKS;
}

/* The memory and core models' events for one instruction; its clockticks in f->cycles. */
STEP_FEED_INLINE void step_memory(struct step_feed *sf, struct perf_inputs *in,
				 const struct step_info *s, struct memfeed *f)
{
	struct model_adapter *a = &model_adapter;
	struct memfeed_event ev[MEMFEED_MAX_EVENTS];
	unsigned n;

	memfeed_step(&a->feed, s, f);
	a->mem_touched = true;
	in->mem_unknown += !f->known;
	if (!a->live.mem && !a->model.cfg.uncore)
		return;			/* only the clockticks are wanted */
	n = memfeed_events(f, ev, MEMFEED_MAX_EVENTS);
	for (unsigned i = 0; i < n; i++) {
		step_event(sf, ev[i].ev, ev[i].mask, ev[i].n);
		if (ev[i].n)
			in->mem_fed[ev[i].ev / 64] |= UINT64_C(1) << (ev[i].ev % 64);
	}
	n = memfeed_sbuf_events(&a->feed, f, ev, MEMFEED_MAX_EVENTS);
	for (unsigned i = 0; i < n; i++) {
		step_event(sf, ev[i].ev, ev[i].mask, ev[i].n);
		if (ev[i].n)
			in->mem_fed[ev[i].ev / 64] |= UINT64_C(1) << (ev[i].ev % 64);
	}
	if (model_live(a, P4_EV_REPLAY_EVENT)) {	/* the PMU model tags the replays it selects */
		struct p4_replay_in *r = &sf->b->replay;

		memfeed_replay(&a->feed, f, r);
		if (r->l1_load | r->l2_load | r->dtlb_load | r->dtlb_store | r->mob_load)
			sf->b->parts |= P4_STEP_REPLAY;
		/* marked as the memory model's input only when the programmed metric tags some */
		if (p4_model_replay_tagged(&a->model, r))
			in->mem_fed[P4_EV_REPLAY_EVENT / 64] |= UINT64_C(1) << (P4_EV_REPLAY_EVENT % 64);
	}
	/* front_end_event's tagged µops are counted by prof/backend/tagfeed.c (live.tag) */
	if (!a->model.cfg.uncore)
		return;
	sf->b->nunc = (uint8_t)memfeed_uncore(f, s->lp, sf->b->unc, P4_STEP_UNC);
	if (sf->b->nunc)
		sf->b->parts |= P4_STEP_UNCORE;
}

/* Is one of the model's counters running (its kernel share counts, struct perf_window)? */
static bool model_any_running(const struct p4_model *m)
{
	for (unsigned c = 0; c < P4_NCOUNTER; c++)
		if (p4_model_running(m, (enum p4_counter)c))
			return true;
	return false;
}

/*
 * One stepped instruction (a workload's, or ctx's counting window's:
 * model_feed_kernel_step). Its data flows one way: the step engine decoded
 * it (step_info), the core model (memfeed.c and p4_core.c's timing,
 * predictor and trace cache; tagfeed.c's and assistfeed.c's inputs) turns
 * it into one batch of event increments, the PMU model applies the batch
 * (p4_model_apply, which decides the tagging), then its cycles tick the
 * model's clock.
 */
void model_feed_step(void *ctx, const struct step_info *s)
{
	struct model_adapter *a = &model_adapter;
	struct perf_inputs *in = ctx;
	struct p4_step_batch b;		/* only its header is set: the increments are written as added */
	struct p4_pebs_record regs;
	struct step_feed sf = { .b = &b, .lp = s->lp, .cpl = s->cpl };
	uint64_t cycles = 0, assist = 0;
	struct memfeed f;

	b.n = b.done = b.parts = 0;
	b.tagged = false;
	in->steps++;
	in->branches += s->branch != INSN_NOT_BRANCH;
	perf_lock();
	if (a->live.dirty)
		model_live_update(a);
	model_batch_enter(&a->batch, &a->model, s->lp, s->cpl);
	if (a->model.cpl[s->lp & (P4_MODEL_NLP - 1)] != s->cpl)	/* most steps stay at one CPL */
		p4_model_set_cpl(&a->model, s->lp, s->cpl);
	if (a->live.slow) {		/* one test for the feeds most runs never need */
		if (a->live.tag) {	/* PEBS registers, tagging: nothing waits across steps */
			model_batch_flush(&a->batch, &a->model);
			tagfeed_step(s, step_frame(), &b, &regs);
		}
		if (a->live.assist)
			assist = step_assists(&sf, s);
	}
	if (a->mem_ready) {
		step_memory(&sf, in, s, &f);
		cycles = f.cycles + assist;
	}
	step_retired(&sf, s, a->mem_ready ? &f : NULL);
	if (b.n | b.parts)
		step_apply(&sf);
	if (a->clock_src == PERF_CLOCK_TSC || !a->mem_ready)
		cycles = s->cycles;
	if (cycles) {
		in->cycles += cycles;
		step_cycles(&sf, cycles);
	}
	perf_unlock();
	model_pmi_flush(&a->pmi);
}

/*
 * A stepped instruction faulted (hooks.h fault; ctx: a workload's
 * perf_inputs or a window's, unused): it did not retire, but real parts
 * tag its exception's microcode loads (tagfeed_fault), counted at the
 * faulting instruction's CPL. Only while tagging is live.
 */
void model_feed_fault(void *ctx, const struct step_fault *f)
{
	struct model_adapter *a = &model_adapter;
	struct p4_step_batch b;
	struct p4_pebs_record regs;

	(void)ctx;
	b.n = b.done = b.parts = 0;
	b.tagged = false;
	b.lp = f->lp;
	b.cpl = f->cpl;
	perf_lock();
	if (a->live.dirty)
		model_live_update(a);
	if (a->live.tag && tagfeed_fault(f, &b, &regs)) {
		model_batch_flush(&a->batch, &a->model);
		p4_model_apply(&a->model, &b, 0);
		a->batch.budget_dirty = true;
	}
	perf_unlock();
	model_pmi_flush(&a->pmi);
}

/*
 * A kernel instruction in the counting window: fed as a workload's, and
 * its share of the window taken while a counter ran (struct perf_window).
 * Counters start and stop in the model's register accesses, which run
 * between two steps (step_hold), so asking after the feed is the same as
 * before it.
 */
void model_feed_kernel_step(void *ctx, const struct step_info *s)
{
	struct perf_window *w = ctx;
	bool running;

	model_feed_step(&w->in, s);
	perf_lock();
	running = model_any_running(&model_adapter.model);
	perf_unlock();
	if (running) {
		w->running_cpl0 += s->cpl == 0;
		w->running_cpl3 += s->cpl == 3;
	}
}

static void model_feed_synthetic_held(void *ctx, uint8_t lp, uint8_t cpl, const char *text,
				      uint64_t n);

/*
 * The model's own work, unstepped (step_hold) like a register access: the
 * gate that calls it is stepped in the counting window (a ring-3 run's int
 * 0x81, arch/x86/step.c), and a Pentium 4 has no such feed to run.
 */
void model_feed_synthetic(void *ctx, uint8_t lp, uint8_t cpl, const char *text, uint64_t n)
{
	uint64_t held = step_hold();

	model_feed_synthetic_held(ctx, lp, cpl, text, n);
	step_release(held);
}

static void model_feed_synthetic_held(void *ctx, uint8_t lp, uint8_t cpl, const char *text, uint64_t n)
{
	struct model_adapter *a = &model_adapter;
	struct perf_inputs *in = ctx;
	struct p4_spec spec;
	struct p4_spec_error e;

	if (p4_spec_parse(text, &a->model.caps, &spec, &e)) {
		in->synthetic_bad += n;
		return;
	}
	if (in->synthetic == 0)
		ksnprintf(in->synthetic_spec, sizeof(in->synthetic_spec), "%s", text);
	else if (!parse_streq(in->synthetic_spec, text))
		in->synthetic_mixed = true;
	in->synthetic_event = spec.event;
	in->synthetic += n;
	model_feed(a, lp, cpl, spec.event, spec.mask, n);
}

enum perf_source model_feed_source(enum p4_event ev, const struct perf_inputs *in)
{
	const struct model_adapter *a = &model_adapter;

	switch (ev) {
	case P4_EV_INSTR_RETIRED:
	case P4_EV_INSTR_COMPLETED:
	case P4_EV_BRANCH_RETIRED:
	case P4_EV_RETIRED_BRANCH_TYPE:
	case P4_EV_FRONT_END_EVENT:	/* tagged loads/stores (prof/backend/tagfeed.c) */
	case P4_EV_EXECUTION_EVENT:	/* tagged x87/SIMD µops */
		return PERF_SOURCE_STEP;
	case P4_EV_X87_ASSIST:		/* operand values (prof/backend/assistfeed.c) */
	case P4_EV_SSE_INPUT_ASSIST:
		if (in && in->synthetic && (in->synthetic_mixed || in->synthetic_event == ev))
			return PERF_SOURCE_SYNTHETIC;
		return PERF_SOURCE_STEP;
	case P4_EV_GLOBAL_POWER_EVENTS:
		return a->clock_src == PERF_CLOCK_TSC || !a->mem_ready ? PERF_SOURCE_TSC
								       : PERF_SOURCE_COST;
	case P4_EV_UOPS_RETIRED:	/* the core model (p4_core.c): uops and its predictor */
	case P4_EV_UOP_QUEUE_WRITES:
	case P4_EV_TC_MS_XFER:
	case P4_EV_TC_DELIVER_MODE:
	case P4_EV_MISPRED_BRANCH_RETIRED:
	case P4_EV_RETIRED_MISPRED_BRANCH_TYPE:
		if (in && in->synthetic && (in->synthetic_mixed || in->synthetic_event == ev))
			return PERF_SOURCE_SYNTHETIC;
		return a->mem_ready ? PERF_SOURCE_COST : PERF_SOURCE_NONE;
	default:
		if (model_firm_fed(ev))
			return PERF_SOURCE_STEP;	/* the FIRM events: x87/SIMD class */
		if (a->mem_ready && model_memory_event(ev)) {
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
