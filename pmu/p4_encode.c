/*
 * p4_encode.c - ESCR/CCCR encodings (see p4_encode.h).
 *
 * Thread qualification (SDM Table 18-66): for a thread-specific event the
 * count on LPn depends only on Tn_OS/Tn_USR, so counting LP1 means setting
 * T1_OS/T1_USR and leaving T0 clear (Example 18-2's 04000603H). On parts
 * without HT, CCCR bits 17:16 are reserved and must be 11b (SDM figure;
 * Linux, OProfile, FreeBSD and perfctr all force it), and only OVF_PMI
 * (bit 26, the T0 position) exists. Thread-independent events combine the
 * four bits instead (Table 18-67, p4_encode.h).
 */
#include "pmu/p4_encode.h"
#include "pmu/p4_regs.h"

uint64_t p4_escr_encode(const struct p4_spec *spec, enum p4_lp lp, bool ht)
{
	const struct p4_event_desc *ev = &p4_events[spec->event];
	uint64_t v = field_prep(ESCR_EVENT_SELECT, ev->event_select) |
		     field_prep(ESCR_EVENT_MASK, spec->mask);
	bool t0 = lp == P4_LP0 || lp == P4_LP_BOTH || !ht;
	bool t1 = ht && (lp == P4_LP1 || lp == P4_LP_BOTH);

	if (spec->tag_value)
		v |= ESCR_TAG_ENABLE | field_prep(ESCR_TAG_VALUE, spec->tag_value);
	if (t0 && spec->os)
		v |= ESCR_T0_OS;
	if (t0 && spec->usr)
		v |= ESCR_T0_USR;
	if (t1 && spec->os)
		v |= ESCR_T1_OS;
	if (t1 && spec->usr)
		v |= ESCR_T1_USR;
	return v;
}

uint64_t p4_cccr_encode(const struct p4_cccr_cfg *cfg, bool ht)
{
	uint64_t v = field_prep(CCCR_ESCR_SELECT, cfg->escr_select) |
		     field_prep(CCCR_ACTIVE_THREAD, ht ? cfg->active_thread : CCCR_AT_ANY) |
		     field_prep(CCCR_THRESHOLD, cfg->threshold);

	if (cfg->enable)
		v |= CCCR_ENABLE;
	if (cfg->compare || cfg->complement || cfg->edge || cfg->threshold)
		v |= CCCR_COMPARE;
	if (cfg->complement)
		v |= CCCR_COMPLEMENT;
	if (cfg->edge)
		v |= CCCR_EDGE;
	if (cfg->force_ovf)
		v |= CCCR_FORCE_OVF;
	if (cfg->pmi_t0)
		v |= CCCR_OVF_PMI_T0;
	if (cfg->pmi_t1 && ht)
		v |= CCCR_OVF_PMI_T1;
	if (cfg->cascade)
		v |= CCCR_CASCADE;
	if (cfg->ext_cascade)
		v |= CCCR_EXT_CASCADE;
	return v;
}

void p4_cccr_from_spec(const struct p4_spec *spec, struct p4_cccr_cfg *cfg)
{
	cfg->escr_select = p4_events[spec->event].escr_select;
	cfg->active_thread = CCCR_AT_ANY;
	cfg->compare = spec->compare;
	cfg->complement = spec->complement;
	cfg->edge = spec->edge;
	cfg->threshold = spec->threshold;
	cfg->force_ovf = spec->force_ovf;
}

unsigned p4_ti_cpls(uint64_t escr)
{
	return ((escr & (ESCR_T0_OS | ESCR_T1_OS)) ? P4_TI_OS : 0) |
	       ((escr & (ESCR_T0_USR | ESCR_T1_USR)) ? P4_TI_USR : 0);
}

bool p4_ti_counts(uint64_t escr, bool some_os, bool some_usr)
{
	unsigned c = p4_ti_cpls(escr);

	return ((c & P4_TI_OS) && some_os) || ((c & P4_TI_USR) && some_usr);
}
