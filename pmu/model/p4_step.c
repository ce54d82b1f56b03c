/*
 * p4_step.c - the PMU model's side of a stepped instruction: applying the
 * batch of event increments the core model made of it (p4_model.h
 * struct p4_step_batch), the tagging decisions included.
 */
#include "pmu/model/p4_model.h"
#include "pmu/p4_tables.h"

uint32_t p4_model_replay_tagged(const struct p4_model *m, const struct p4_replay_in *r)
{
	uint64_t pebs = m->pebs_enable, vert = m->pebs_matrix_vert;
	uint32_t n = 0;

	if (!(pebs & PEBS_ENABLE_UOP_TAG))
		return 0;
	if (vert & MATRIX_VERT_LOADS) {
		if (pebs & PEBS_ENABLE_1STL)
			n += r->l1_load;
		if (pebs & PEBS_ENABLE_2NDL)
			n += r->l2_load;
		if (pebs & PEBS_ENABLE_DTLB)
			n += r->dtlb_load;
		if (pebs & PEBS_ENABLE_MOB)
			n += r->mob_load;
	}
	if ((vert & MATRIX_VERT_STORES) && (pebs & PEBS_ENABLE_DTLB))
		n += r->dtlb_store;
	return n;
}

/* The tagging inputs: PEBS registers, tagged loads and stores, the x87/SIMD µop. */
static void p4_step_tags(struct p4_model *m, struct p4_step_batch *b)
{
	if (b->regs)
		p4_model_set_pebs_regs(m, b->lp, b->regs);
	if (b->loads | b->stores)
		b->tagged = p4_model_retire_mem(m, b->lp, b->cpl, b->loads, b->stores) > 0;
	if (b->exec == P4_NEVENT)
		;
	else if (b->exec_mask)
		p4_model_retire_exec_mask(m, b->lp, b->cpl, b->exec, b->exec_mask, 1);
	else
		p4_model_retire_exec(m, b->lp, b->cpl, b->exec, 1);
}

uint64_t p4_model_apply(struct p4_model *m, struct p4_step_batch *b, uint64_t limit)
{
	uint64_t applied = 0;

	if (b->parts & P4_STEP_TAG)
		p4_step_tags(m, b);
	b->parts &= (uint8_t)~P4_STEP_TAG;
	while (b->done < b->n && applied < limit) {
		struct p4_event_inc *e = &b->inc[b->done];
		uint64_t k = e->n <= limit - applied ? e->n : limit - applied;
		uint16_t mask = e->mask;

		if (!mask && e->ev == P4_EV_INSTR_RETIRED)	/* PMU reference 5.6: NBOGUSTAG */
			mask = P4_EVMASK(b->tagged ? P4_INSTR_RETIRED_NBOGUSTAG
						   : P4_INSTR_RETIRED_NBOGUSNTAG);
		p4_model_event(m, b->lp, b->cpl, e->ev, mask, k);
		applied += k;
		e->n -= (uint32_t)k;
		b->done += e->n == 0;
	}
	if (b->done < b->n || !b->parts)
		return applied;
	if (b->parts & P4_STEP_REPLAY) {
		uint32_t n = p4_model_replay_tagged(m, &b->replay);

		if (n)
			p4_model_event(m, b->lp, b->cpl, P4_EV_REPLAY_EVENT,
				       P4_EVMASK(P4_REPLAY_EVENT_NBOGUS), n);
	}
	for (unsigned i = 0; (b->parts & P4_STEP_UNCORE) && i < b->nunc; i++)
		p4_model_uncore_event(m, b->unc[i].unit, b->unc[i].attrs, b->unc[i].n);
	b->parts = 0;
	return applied;
}
