/*
 * p4_model_uncore.c - the L3/FSB uncore counters of the software PMU.
 *
 * The eight registers at 107CCH-107D3H (p4_uncore.h) exist when
 * cfg.uncore is set and caps.uncore names a register set; they are one
 * copy for the package, read and written alike by both logical processors
 * (PMU reference 1.4, 8), so nothing here depends on m->bus_lp. The
 * memory-system model reports each uncore occurrence through
 * p4_model_uncore_event() with the occurrence's attributes in the control
 * word's bit positions; every event register of that unit whose upper 32
 * bits are non-zero ("counting starts after software writes a non-zero
 * value to one or more of the upper 32 bits", SDM 18.20) and whose fields
 * match (p4_unc_matches) adds n to its low 32 bits, which wrap at 2^32
 * (the upper half is left alone), or with Saturate set stop at FFFFFFFFH
 * (the bit's name; its behaviour is not described: UNVERIFIED). Writing
 * zero to the upper half stops the count again. The IBUSQ latency counter
 * IFSB_CNTR7 (64 bits) adds n while IFSB_CTL6 bit 26 is set (SDM 18.20).
 * Register writes keep all 64 bits: reserved bits are not refused because
 * most IFSB/EFSB positions are UNVERIFIED (`explain` reports them).
 */
#include "pmu/model/p4_model.h"
#include "pmu/model/p4_model_internal.h"

static bool uncore_present(const struct p4_model *m)
{
	return m->cfg.uncore && m->caps.uncore != P4_UNCORE_NONE;
}

static void uncore_count(struct p4_model *m, unsigned i, uint64_t n)
{
	uint64_t v = m->uncore[i], low = v & UNC_COUNT, sum = low + n;
	const struct p4_unc_reg *r = p4_unc_reg_at(m->caps.uncore, i);

	if (p4_unc_units[r->unit].saturate & v) {
		if (sum > UNC_COUNT || sum < low)
			sum = UNC_COUNT;
	} else {
		m->uncore_wraps[i] += sum >> 32;	/* n < 2^63: no 64-bit carry */
	}
	m->uncore[i] = (v & UNC_CONTROL) | (sum & UNC_COUNT);
}

int p4_model_uncore_event(struct p4_model *m, enum p4_unc_unit unit, uint64_t attrs, uint64_t n)
{
	if (!uncore_present(m) || unit >= P4_NUNC_UNIT || p4_unc_units[unit].set != m->caps.uncore)
		return -1;
	for (unsigned i = 0; i < P4_UNC_NREG; i++) {
		const struct p4_unc_reg *r = p4_unc_reg_at(m->caps.uncore, i);
		uint64_t ctl = m->uncore[i] & UNC_CONTROL;

		if (r->unit != unit)
			continue;
		if (r->role == P4_UNC_EVENT && ctl && p4_unc_matches(unit, ctl, attrs))
			uncore_count(m, i, n);
		if (r->role == P4_UNC_LAT_COUNT &&
		    (m->uncore[MSR_IFSB_CTL6 - MSR_P4_UNCORE_FIRST] & IFSB_CTL6_ENABLE))
			m->uncore[i] += n;
	}
	return 0;
}

bool p4_model_uncore_counting(const struct p4_model *m, unsigned i)
{
	const struct p4_unc_reg *r;

	if (!uncore_present(m) || !(r = p4_unc_reg_at(m->caps.uncore, i)))
		return false;
	if (r->role == P4_UNC_EVENT)
		return (m->uncore[i] & UNC_CONTROL) != 0;
	if (r->role == P4_UNC_LAT_COUNT)
		return (m->uncore[MSR_IFSB_CTL6 - MSR_P4_UNCORE_FIRST] & IFSB_CTL6_ENABLE) != 0;
	return false;
}
