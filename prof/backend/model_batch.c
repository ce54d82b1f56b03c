/*
 * model_batch.c - batching of the model backend's step feed (portable: the
 * kernel's adapter and tests/host/test_model_batch.c).
 *
 * The two events every step feeds - instr_retired NBOGUSNTAG and
 * global_power_events RUNNING - and the clock are added up here while
 * nothing can tell the difference, and reach the model in one call each
 * (model_batch_flush) before anything can: before every register access
 * (so reads see exact counts), before every other kind of input (another LP
 * or CPL, begin, end, synthetic), and before the count that would overflow
 * a counter, which is then fed on its own step so that the PMI lands on
 * that instruction. Allowed only while no counter compares (compare mode
 * works on each cycle's input, PMU reference 9.12), none owes a PMI on its
 * next count, and none waits for a cascade; the budget keeps the pending
 * events below the nearest overflow of any running counter. PMU lock held
 * throughout. What every step runs (model_batch_enter, model_batch_takes,
 * model_clock_advance) is inline in prof/model_adapter.h.
 */
#include "pmu/p4_regs.h"
#include "pmu/p4_tables.h"
#include "prof/backend/model_adapter.h"

uint64_t model_batch_budget(const struct p4_model *m)
{
	if (m->cmp_running)
		return 0;
	for (unsigned c = 0; c < P4_NCOUNTER; c++) {
		if (m->pmi_due[c])
			return 0;
		if (m->ctr_route[c] == P4_ESCR_NONE && (m->cccr[c] & (CCCR_CASCADE | CCCR_EXT_CASCADE)))
			return 0;
	}
	return p4_model_to_overflow(m) - 1;	/* the overflowing count itself goes unbatched */
}

void model_batch_flush_now(struct model_batch *b, struct p4_model *m)
{
	if (b->instr)
		p4_model_event(m, b->lp, b->cpl, P4_EV_INSTR_RETIRED,
			       P4_EVMASK(P4_INSTR_RETIRED_NBOGUSNTAG), b->instr);
	if (b->clk)
		p4_model_event(m, b->lp, b->cpl, P4_EV_GLOBAL_POWER_EVENTS,
			       P4_EVMASK(P4_GLOBAL_POWER_EVENTS_RUNNING), b->clk);
	if (b->ticks)
		p4_model_tick(m, b->ticks);
	if (b->instr | b->clk | b->ticks)
		b->budget_dirty = true;
	b->instr = b->clk = b->ticks = 0;
}
