/*
 * p4_apply.c - the only PMU code that writes registers (see p4_apply.h):
 * programming a plan, stopping it, and the overflow handler's reload with
 * the errata workarounds (N15, O8, O9). Every step is a loop of writes; the
 * decisions were made in p4_alloc.c.
 */
#include "pmu/p4_apply.h"
#include "pmu/p4_pebs.h"
#include "pmu/p4_regs.h"

static void p4_wr(struct msr_bus *bus, uint32_t msr, uint64_t v, struct p4_apply_result *res)
{
	res->writes++;
	if (msr_bus_write(bus, msr, v) != 0)
		res->faults++;
}

/* Read msr back and count a fault, or a mismatch in the bits outside `ignore`. */
static void p4_verify(struct msr_bus *bus, uint32_t msr, uint64_t want, uint64_t ignore,
		      struct p4_apply_result *res)
{
	uint64_t got = ~want;

	if (msr_bus_read(bus, msr, &got) != 0)
		res->faults++;
	else if ((got & ~ignore) != (want & ~ignore))
		res->mismatches++;
}

void p4_pmu_reset(struct msr_bus *bus, const struct p4_caps *caps, struct p4_apply_result *res)
{
	*res = (struct p4_apply_result){ 0 };
	for (int c = 0; c < P4_NCOUNTER; c++)
		p4_wr(bus, p4_counters[c].cccr_msr, 0, res);
	for (int e = 0; e < P4_NESCR; e++)
		if (p4_escrs[e].models & caps->escr_models)
			p4_wr(bus, p4_escrs[e].msr, 0, res);
	p4_wr(bus, MSR_PEBS_ENABLE, 0, res);
	p4_wr(bus, MSR_PEBS_MATRIX_VERT, 0, res);
}

/* True when an earlier slot already programs the same ESCR. */
static bool p4_escr_seen(const struct p4_plan *plan, unsigned i)
{
	for (unsigned k = 0; k < i; k++)
		if (plan->slot[k].escr == plan->slot[i].escr)
			return true;
	return false;
}

/*
 * Set `bits` in a shared MSR, replacing only the bits in `field` and
 * keeping the rest (the sibling's PEBS thread bits).
 */
static void p4_set_in(struct msr_bus *bus, uint32_t msr, uint64_t field, uint64_t bits,
		      struct p4_apply_result *res)
{
	uint64_t cur = 0;

	if (!bits)
		return;
	if (msr_bus_read(bus, msr, &cur) != 0)
		res->faults++;
	else if (((cur & ~field) | bits) != cur)
		p4_wr(bus, msr, (cur & ~field) | bits, res);
}

static void p4_apply_pebs(struct msr_bus *bus, const struct p4_plan *plan,
			  struct p4_apply_result *res)
{
	uint64_t bits = plan->pebs_metric;

	for (unsigned i = 0; plan->pebs && i < plan->n; i++) {
		if (plan->req[i].role != P4_ROLE_PEBS)
			continue;
		if (!plan->ds_area_set)
			res->pebs_refused = true;
		/*
		 * Bit 24 as well as MY_THR/OTH_THR: the 2008 SDM's non-HT PEBS
		 * set-up says "Set the Enable PEBS flag (bit 24)", and perfmon2
		 * wrote bits 25|24|0 on real non-HT P4s (PMU reference 5.3,
		 * DISPUTED). Without metric bits it tags nothing, so writing both
		 * serves either reading.
		 */
		else
			bits |= PEBS_ENABLE_UOP_TAG |
				p4_pebs_thr_bit(plan->writer_lp, plan->req[i].lp == P4_LP1 ? 1 : 0);
	}
	/* metric_escr_value 0: none (a plan built field by field leaves both zero) */
	if (plan->metric_escr_value && plan->metric_escr != P4_ESCR_NONE)
		p4_wr(bus, p4_escrs[plan->metric_escr].msr, plan->metric_escr_value, res);
	/* A plan's metric replaces an older one: one plan programs both LPs' counters. */
	p4_set_in(bus, MSR_PEBS_ENABLE, plan->pebs_metric ? PEBS_ENABLE_METRICS : 0, bits, res);
	p4_set_in(bus, MSR_PEBS_MATRIX_VERT, ~UINT64_C(0), plan->matrix_vert, res);
}

/* The ESCR slot i's null event selects (p4_cccr_quiet), or P4_ESCR_NONE. */
static enum p4_escr p4_null_escr(const struct p4_plan *plan, unsigned i)
{
	return p4_escr_for_select(plan->slot[i].counter,
				  (unsigned)field_get(CCCR_ESCR_SELECT, plan->slot[i].cccr_quiet));
}

/*
 * The null events' ESCRs cleared: one the plan does not use may still hold
 * an older plan's event (p4_stop leaves ESCRs as they are), and a counter
 * "stopped" on it would count that event (Xeon MP erratum O8 asks for a
 * null event while the counter is written).
 */
static void p4_clear_null_escrs(struct msr_bus *bus, const struct p4_plan *plan,
				struct p4_apply_result *res)
{
	for (unsigned i = 0; i < plan->n; i++) {
		enum p4_escr e = p4_null_escr(plan, i);
		bool seen = false;

		for (unsigned k = 0; k < i; k++)
			seen |= p4_null_escr(plan, k) == e;
		/* p4_cccr_quiet's ESCRs exist on every model; a hand-built plan's may not */
		if (e != P4_ESCR_NONE && p4_escrs[e].models == P4_MODELS_ALL && !seen &&
		    !p4_plan_uses(plan, e))
			p4_wr(bus, p4_escrs[e].msr, 0, res);
	}
}

static void p4_apply_do(struct msr_bus *bus, const struct p4_plan *plan, struct p4_apply_result *res,
			bool gated)
{
	uint64_t off = gated ? CCCR_ENABLE : 0;

	*res = (struct p4_apply_result){ 0 };
	p4_clear_null_escrs(bus, plan, res);
	/* Every counter stopped on a null event before anything is written (O8). */
	for (unsigned i = 0; i < plan->n; i++)
		p4_wr(bus, p4_counters[plan->slot[i].counter].cccr_msr, plan->slot[i].cccr_quiet, res);
	for (unsigned i = 0; i < plan->n; i++)
		if (!p4_escr_seen(plan, i))
			p4_wr(bus, p4_escrs[plan->slot[i].escr].msr, plan->slot[i].escr_value, res);
	for (unsigned i = 0; i < plan->n; i++) {
		uint32_t msr = p4_counters[plan->slot[i].counter].msr;
		uint64_t v = plan->slot[i].preset & P4_COUNTER_MASK;

		/* Intel 249199 erratum N15: a counter write may not stick; write twice. */
		p4_wr(bus, msr, v, res);
		p4_wr(bus, msr, v, res);
	}
	p4_apply_pebs(bus, plan, res);
	for (int pass = 0; pass < 2; pass++)
		for (unsigned i = 0; i < plan->n; i++)
			if ((plan->slot[i].link != NULL) == (pass == 0))
				p4_wr(bus, p4_counters[plan->slot[i].counter].cccr_msr,
				      plan->slot[i].cccr_value & ~off, res);
	/*
	 * The CCCRs are enabled by now: with FORCE_OVF or a short period a
	 * counter may already have overflowed and the hardware set its sticky
	 * OVF (CCCR bit 31, PMU reference 2.2), so OVF is left out of the CCCR
	 * comparison. An ESCR has no OVF; all its bits are compared.
	 */
	for (unsigned i = 0; i < plan->n; i++) {
		/*
		 * A cascaded counter's Enable is the hardware's once its starter
		 * overflowed (SDM Example 18-1, "automatically enabled"), which
		 * a short period may have made happen already: left out too, and
		 * so are its cascade bits, which a start may clear as well (the
		 * manual does not say; UNVERIFIED either way).
		 */
		uint64_t ignore = CCCR_OVF | (plan->slot[i].link ? CCCR_ENABLE | CCCR_CASCADE |
								 CCCR_EXT_CASCADE : 0);

		if (!p4_escr_seen(plan, i))
			p4_verify(bus, p4_escrs[plan->slot[i].escr].msr, plan->slot[i].escr_value, 0,
				  res);
		p4_verify(bus, p4_counters[plan->slot[i].counter].cccr_msr,
			  plan->slot[i].cccr_value & ~off, ignore, res);
	}
}

void p4_apply(struct msr_bus *bus, const struct p4_plan *plan, struct p4_apply_result *res)
{
	p4_apply_do(bus, plan, res, false);
}

void p4_apply_gated(struct msr_bus *bus, const struct p4_plan *plan, struct p4_apply_result *res)
{
	p4_apply_do(bus, plan, res, true);
}

void p4_stop(struct msr_bus *bus, const struct p4_plan *plan, struct p4_apply_result *res)
{
	*res = (struct p4_apply_result){ 0 };
	/*
	 * Cascaded counters first: a partner stopped after its starter would
	 * count the kernel's next instructions meanwhile (its starter no
	 * longer moves once stopped, so stopping it second loses nothing).
	 */
	for (int pass = 0; pass < 2; pass++)
		for (unsigned i = 0; i < plan->n; i++)
			if ((plan->slot[i].link != NULL) == (pass == 0))
				p4_wr(bus, p4_counters[plan->slot[i].counter].cccr_msr, 0, res);
}

/* ---- the uncore counters ------------------------------------------------------ */

static uint32_t p4_unc_msr(const struct p4_plan *plan, unsigned i)
{
	return MSR_P4_UNCORE_FIRST + plan->unc[i].reg;
}

int p4_unc_start(struct msr_bus *bus, const struct p4_plan *plan)
{
	for (unsigned i = 0; i < plan->unc_n; i++) {
		if (msr_bus_write(bus, p4_unc_msr(plan, i), plan->unc[i].start) != 0) {
			for (unsigned k = 0; k < i; k++)
				msr_bus_write(bus, p4_unc_msr(plan, k), 0);
			return (int)i;
		}
	}
	return -1;
}

void p4_unc_poll(struct msr_bus *bus, const struct p4_plan *plan, uint64_t *totals)
{
	for (unsigned i = 0; i < plan->unc_n; i++) {
		uint64_t v;

		if (msr_bus_read(bus, p4_unc_msr(plan, i), &v) == 0)
			totals[i] = p4_unc_extend(totals[i], (uint32_t)v);
	}
}

void p4_unc_stop(struct msr_bus *bus, const struct p4_plan *plan, uint64_t *totals)
{
	p4_unc_poll(bus, plan, totals);
	for (unsigned i = 0; i < plan->unc_n; i++)
		msr_bus_write(bus, p4_unc_msr(plan, i), 0);
}
