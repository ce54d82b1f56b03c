/*
 * p4_model_msr.c - the register side of the software NetBurst PMU.
 *
 * The msr_bus seam (which MSRs exist on the configured signature, which
 * bits are reserved, what reads back), RDPMC, and the power-on state. The
 * decisions behind each rule are listed at the top of p4_model.c.
 */
#include "pmu/model/p4_model.h"
#include "pmu/model/p4_model_internal.h"
#include "pmu/p4_pebs.h"

#define TC_PRECISE_EVENT_RESET	0xfc00	/* perfctr's observed default (PMU reference 1.3) */
#define MISC_ENABLE_RO		(MISC_ENABLE_PERFMON | MISC_ENABLE_BTS_UNAVAIL | \
				 MISC_ENABLE_PEBS_UNAVAIL)
#define PEBS_ENABLE_VALID	(BITS(12, 0) | BIT(15) | BIT(16) | PEBS_ENABLE_UOP_TAG | \
				 PEBS_ENABLE_MY_THR | PEBS_ENABLE_OTH_THR)
#define LOW32_ONLY_RESERVED	BITS(63, 32)

static struct p4_model *model_of(struct msr_bus *bus)
{
	return (struct p4_model *)bus;	/* bus is the first member */
}

static bool uncore_exists(const struct p4_model *m)
{
	return m->cfg.uncore && m->caps.uncore != P4_UNCORE_NONE;
}

/* ---- register checks ---------------------------------------------------- */

static uint64_t escr_reserved(const struct p4_model *m)
{
	return ESCR_RESERVED | (m->cfg.ht ? 0 : ESCR_T1_USR | ESCR_T1_OS);
}

static uint64_t cccr_reserved(const struct p4_model *m, enum p4_counter n)
{
	uint64_t r = CCCR_RESERVED;

	if (!m->caps.ext_cascade || !p4_model_has_ext_source(n))
		r |= CCCR_EXT_CASCADE;
	if (!m->cfg.ht)
		r |= CCCR_OVF_PMI_T1;
	return r;
}

static uint64_t pebs_enable_reserved(const struct p4_model *m)
{
	return ~PEBS_ENABLE_VALID | (m->cfg.ht ? 0 : PEBS_ENABLE_OTH_THR);
}

/*
 * IA32_DS_AREA holds a linear address: on the models that can run IA-32e
 * mode (3, 4, 6) it must be canonical (bits 63:47 all equal), elsewhere
 * bits 63:32 are reserved. A write that breaks it raises #GP (the reading
 * harder on software; the SDM's MSR table gives the field, not the check).
 */
static bool ds_area_bad(const struct p4_model *m, uint64_t v)
{
	uint64_t top;

	if (!m->caps.dtes64)
		return (v >> 32) != 0;
	top = v >> 47;
	return top != 0 && top != (UINT64_MAX >> 47);
}

/* IA32_MISC_ENABLE bit 22 (Limit CPUID MaxVal): models 3, 4, 6 only (PMU reference 1.3). */
static uint64_t misc_enable_reserved(const struct p4_model *m)
{
	return m->caps.limit_cpuid ? 0 : BIT(22);
}

/* ---- MSR access --------------------------------------------------------- */

static int read_other(struct p4_model *m, uint32_t msr, uint64_t *v)
{
	switch (msr) {
	case MSR_IA32_MISC_ENABLE:
		*v = (m->misc_enable & ~MISC_ENABLE_RO) | MISC_ENABLE_PERFMON |
		     (m->cfg.bts_unavailable ? MISC_ENABLE_BTS_UNAVAIL : 0) |
		     (m->cfg.pebs_unavailable ? MISC_ENABLE_PEBS_UNAVAIL : 0);
		return 0;
	case MSR_TC_PRECISE_EVENT:
		*v = m->tc_precise_event;
		return 0;
	case MSR_PEBS_ENABLE:	/* thread bits as the reading LP sees them */
		*v = m->pebs_enable;
		for (unsigned lp = 0; lp < P4_MODEL_NLP; lp++)
			if (m->pebs_lps & (1u << lp))
				*v |= p4_pebs_thr_bit(m->bus_lp, lp);
		return 0;
	case MSR_PEBS_MATRIX_VERT:
		*v = m->pebs_matrix_vert;
		return 0;
	case MSR_IA32_DS_AREA:
		*v = m->ds_area[m->bus_lp];
		return 0;
	}
	if (msr >= MSR_P4_UNCORE_FIRST && msr <= MSR_P4_UNCORE_LAST && uncore_exists(m)) {
		*v = m->uncore[msr - MSR_P4_UNCORE_FIRST];
		return 0;
	}
	return MSR_BUS_EFAULT;
}

static int model_read(struct msr_bus *bus, uint32_t msr, uint64_t *v)
{
	struct p4_model *m = model_of(bus);
	enum p4_counter c;
	enum p4_escr e;

	if (p4_counter_by_msr(msr, &c)) {
		*v = m->counter[c];
		return 0;
	}
	if (p4_cccr_by_msr(msr, &c)) {
		*v = m->cccr[c];
		return 0;
	}
	if (p4_escr_by_msr(msr, &e)) {
		if (!p4_model_escr_exists(m, e))
			return MSR_BUS_EFAULT;
		*v = m->escr[e];
		return 0;
	}
	return read_other(m, msr, v);
}

static void write_cccr(struct p4_model *m, enum p4_counter n, uint64_t v)
{
	if (((m->faults.stuck_ovf >> n) & 1u) && (m->cccr[n] & CCCR_OVF))
		v |= CCCR_OVF;		/* fault injection: its PMI request never goes away */
	m->cccr[n] = v;
	p4_model_cccr_written(m, n);
}

static int write_store(uint64_t *reg, uint64_t v, uint64_t reserved)
{
	if (v & reserved)
		return MSR_BUS_EFAULT;
	*reg = v;
	return 0;
}

static int write_other(struct p4_model *m, uint32_t msr, uint64_t v)
{
	switch (msr) {
	case MSR_IA32_MISC_ENABLE:
		if (v & misc_enable_reserved(m))
			return MSR_BUS_EFAULT;
		m->misc_enable = v & ~MISC_ENABLE_RO;
		return 0;
	case MSR_TC_PRECISE_EVENT:
		return write_store(&m->tc_precise_event, v, LOW32_ONLY_RESERVED);
	case MSR_PEBS_ENABLE:	/* MY_THR/OTH_THR: relative to the writing LP (5.3) */
		if (v & pebs_enable_reserved(m))
			return MSR_BUS_EFAULT;
		m->pebs_lps = (uint8_t)p4_pebs_thr_lps(m->bus_lp, v);
		m->pebs_enable = v & ~(PEBS_ENABLE_MY_THR | PEBS_ENABLE_OTH_THR);
		return 0;
	case MSR_PEBS_MATRIX_VERT:
		return write_store(&m->pebs_matrix_vert, v, LOW32_ONLY_RESERVED);
	case MSR_IA32_DS_AREA:
		if (ds_area_bad(m, v))
			return MSR_BUS_EFAULT;
		m->ds_area[m->bus_lp] = v;
		return 0;
	}
	if (msr >= MSR_P4_UNCORE_FIRST && msr <= MSR_P4_UNCORE_LAST && uncore_exists(m)) {
		m->uncore[msr - MSR_P4_UNCORE_FIRST] = v;
		return 0;
	}
	return MSR_BUS_EFAULT;
}

static int model_write(struct msr_bus *bus, uint32_t msr, uint64_t v)
{
	struct p4_model *m = model_of(bus);
	enum p4_counter c;
	enum p4_escr e;

	if (p4_counter_by_msr(msr, &c)) {
		m->counter[c] = v & P4_COUNTER_MASK;
		m->pmi_due[c] = 0;
		return 0;
	}
	if (p4_cccr_by_msr(msr, &c)) {
		if (v & cccr_reserved(m, c))
			return MSR_BUS_EFAULT;
		write_cccr(m, c, v);
		return 0;
	}
	if (p4_escr_by_msr(msr, &e)) {
		if (!p4_model_escr_exists(m, e))
			return MSR_BUS_EFAULT;
		if (m->faults.stuck_escr == msr)
			v |= m->escr[e];	/* fault injection: its set bits stick at 1 */
		return write_store(&m->escr[e], v, escr_reserved(m));
	}
	return write_other(m, msr, v);
}

/* ---- RDPMC, state inputs, init ------------------------------------------ */

int p4_model_rdpmc(const struct p4_model *m, uint32_t ecx, uint64_t *value)
{
	bool fast = (ecx & BIT(31)) != 0;	/* EDX forced to 0 (SDM RDPMC) */
	uint32_t idx = ecx & ~(uint32_t)BIT(31);

	if (idx < P4_NCOUNTER) {
		uint64_t v = m->counter[idx] + ((m->faults.rdpmc >> idx) & 1);	/* fault injection */

		*value = fast ? (uint32_t)v : v & P4_COUNTER_MASK;
		return 0;
	}
	/* Uncore: indices 18-25, 32 bits, EDX 0 (SDM 18.20); order UNVERIFIED. */
	if (idx < P4_NCOUNTER + P4_MODEL_NUNCORE && uncore_exists(m)) {
		*value = (uint32_t)m->uncore[idx - P4_NCOUNTER];
		return 0;
	}
	return MSR_BUS_EFAULT;
}

int p4_model_set_bus_lp(struct p4_model *m, unsigned lp)
{
	if (lp >= p4_model_nlp(m))
		return -1;
	m->bus_lp = lp;
	return 0;
}

void p4_model_reset(struct p4_model *m)
{
	for (unsigned c = 0; c < P4_NCOUNTER; c++) {
		m->counter[c] = 0;
		m->cccr[c] = 0;
		m->pmi_due[c] = 0;
		m->pmi_wait[c] = 0;
		m->cycle_input[c] = 0;
		m->overflows[c] = 0;
	}
	for (unsigned e = 0; e < P4_NESCR; e++)
		m->escr[e] = 0;
	for (unsigned u = 0; u < P4_MODEL_NUNCORE; u++) {
		m->uncore[u] = 0;
		m->uncore_wraps[u] = 0;
	}
	for (unsigned lp = 0; lp < P4_MODEL_NLP; lp++) {
		m->ds_area[lp] = 0;
		m->active[lp] = lp < p4_model_nlp(m);
		m->cpl[lp] = 0;
		m->pmi_count[lp] = 0;
		m->pebs_records[lp] = 0;
		m->pebs_lost[lp] = 0;
		m->pebs_pmis[lp] = 0;
	}
	m->pebs_enable = 0;
	m->pebs_lps = 0;
	m->pebs_faults = 0;
	m->ev_lp = P4_MODEL_NO_LP;
	m->pebs_matrix_vert = 0;
	m->tc_precise_event = TC_PRECISE_EVENT_RESET;
	m->misc_enable = 0;
	m->bus_lp = 0;
	m->started = 0;
	m->edge_prev = 0;
	m->cycles = 0;
	m->pmi_suppressed = 0;
	m->examined = 0;
	m->faults = (struct p4_model_faults){ 0 };
	p4_model_route_all(m);
}

int p4_model_init(struct p4_model *m, const struct p4_model_config *cfg)
{
	struct p4_caps caps;

	if (!p4_caps_lookup(&cfg->sig, &caps))
		return -1;
	m->bus.read = model_read;
	m->bus.write = model_write;
	m->cfg = *cfg;
	m->caps = caps;
	m->skid = 0;		/* the manual's reading until p4_model_set_skid */
	p4_model_reset(m);
	return 0;
}
