/*
 * p4_caps.c - NetBurst capabilities by CPUID signature, as data rows.
 *
 * p4_model_rows[] gives what every stepping of a DisplayModel has;
 * p4_stepping_rows[] then switches single capabilities off (or on) for a
 * model/stepping range. Sources, PMU reference:
 *   IQ_ESCR0/1 models 0-2 only ......... 1.2 (edk2 Pentium4Msr.h, perfctr)
 *   extended cascading 0F_02/03/04/06 .. 2.3 and 7 (SDM 2016 text)
 *   cascade PMI erratum ................ 2.3 (SDM): 0F_02, 0F_00/0F_01 stepping > 09H
 *   instr_completed models 3, 4, 6 ..... 4.3 and 7 (Linux, perfctr)
 *   FSB_ESCR1 below F27H ............... 1.2 note 2 (SDM IOQ_allocation text;
 *                                        other events on it UNVERIFIED, so avoid all)
 *   uncore set ......................... 1.4 (edk2 model availability, SDM figures)
 *   OVF_PMI_T1 on 0F_04 stepping 4 ..... 9.9 (old Linux NMI watchdog)
 *   part names ......................... 7 (Linux intel-family.h; others UNVERIFIED)
 * Models 5 and above 6 are not documented NetBurst models; they get the
 * most conservative set (no IQ_ESCR0/1, no extended cascading, no
 * instr_completed) and known_model = false.
 */
#include "pmu/p4_caps.h"
#include "pmu/p4_tables.h"


struct p4_model_row {
	uint8_t model;
	bool iq_escr01;
	bool ext_cascade;
	bool instr_completed;
	enum p4_uncore uncore;
	const char *uncore_note;
	const char *part_name;
};

enum p4_step_cap {
	P4_STEP_CASCADE_PMI_ERRATUM,	/* sets cascade_pmi_erratum */
	P4_STEP_NO_FSB_ESCR1,		/* clears fsb_escr1_ok */
	P4_STEP_PMI_T1_UNRELIABLE,	/* sets pmi_t1_unreliable */
};

struct p4_stepping_row {
	uint8_t model;
	uint8_t step_lo, step_hi;	/* inclusive */
	enum p4_step_cap cap;
};

static const struct p4_model_row p4_model_rows[] = {
	{ 0, true, false, false, P4_UNCORE_NONE, "",
	  "early Pentium 4 (Willamette) / Xeon (Foster)" },
	{ 1, true, false, false, P4_UNCORE_NONE, "",
	  "Pentium 4 / Celeron (Willamette), Xeon / Xeon MP (Foster)" },
	{ 2, true, true, false, P4_UNCORE_NONE, "",
	  "Pentium 4 (Northwood), Xeon DP (Prestonia), Xeon MP / P4 EE (Gallatin)" },
	{ 3, false, true, true, P4_UNCORE_IFSB_EFSB, "64-bit Xeon MP with L3 only",
	  "Pentium 4 (Prescott), Xeon (Nocona)" },
	{ 4, false, true, true, P4_UNCORE_IFSB_EFSB, "64-bit Xeon MP with L3 only",
	  "Pentium 4 (Prescott, Prescott 2M), Pentium D 8xx (Smithfield), "
	  "Xeon (Nocona, Irwindale, Paxville, Potomac)" },
	{ 6, false, true, true, P4_UNCORE_EMON_L3, "Dual-Core Xeon 7100 (Tulsa) only",
	  "Pentium 4 6x1 (Cedar Mill), Pentium D 9xx (Presler), Xeon 5000 (Dempsey), "
	  "Xeon 7100 (Tulsa)" },
};

/* Used for DisplayModel 5 and > 6: nothing that is not on every model. */
static const struct p4_model_row p4_unknown_row = {
	0xff, false, false, false, P4_UNCORE_NONE, "", "unknown NetBurst model"
};

static const struct p4_stepping_row p4_stepping_rows[] = {
	{ 0, 0x0a, 0xff, P4_STEP_CASCADE_PMI_ERRATUM },
	{ 1, 0x0a, 0xff, P4_STEP_CASCADE_PMI_ERRATUM },
	{ 2, 0x00, 0xff, P4_STEP_CASCADE_PMI_ERRATUM },
	{ 0, 0x00, 0xff, P4_STEP_NO_FSB_ESCR1 },
	{ 1, 0x00, 0xff, P4_STEP_NO_FSB_ESCR1 },
	{ 2, 0x00, 0x06, P4_STEP_NO_FSB_ESCR1 },
	{ 4, 0x04, 0x04, P4_STEP_PMI_T1_UNRELIABLE },
};

static const char *const p4_uncore_names[] = {
	[P4_UNCORE_NONE] = "none",
	[P4_UNCORE_IFSB_EFSB] = "IFSB/EFSB",
	[P4_UNCORE_EMON_L3] = "EMON_L3",
};

static const struct p4_model_row *p4_model_row_find(uint8_t model)
{
	for (unsigned i = 0; i < sizeof(p4_model_rows) / sizeof(p4_model_rows[0]); i++)
		if (p4_model_rows[i].model == model)
			return &p4_model_rows[i];
	return &p4_unknown_row;
}

static void p4_caps_apply_stepping(const struct p4_stepping_row *r, struct p4_caps *c)
{
	switch (r->cap) {
	case P4_STEP_CASCADE_PMI_ERRATUM:
		c->cascade_pmi_erratum = true;
		break;
	case P4_STEP_NO_FSB_ESCR1:
		c->fsb_escr1_ok = false;
		break;
	case P4_STEP_PMI_T1_UNRELIABLE:
		c->pmi_t1_unreliable = true;
		break;
	}
}

bool p4_caps_lookup(const struct p4_sig *sig, struct p4_caps *out)
{
	const struct p4_model_row *row;
	struct p4_caps c = { 0 };

	if (sig->family != P4_FAMILY)
		return false;
	row = p4_model_row_find(sig->model);
	c.sig = *sig;
	c.known_model = row != &p4_unknown_row;
	c.iq_escr01 = row->iq_escr01;
	c.ext_cascade = row->ext_cascade;
	c.instr_completed = row->instr_completed;
	c.fsb_escr1_ok = true;
	c.dtes64 = c.known_model && row->model >= 3;
	c.limit_cpuid = c.dtes64;
	c.nescr = row->iq_escr01 ? 45 : 43;
	/* ESCR presence: models 0-2 have all 45, every other model the 43 of 3-6. */
	c.escr_models = row->iq_escr01 ? P4_MODEL(0) : P4_MODEL(6);
	c.uncore = row->uncore;
	c.uncore_name = p4_uncore_names[row->uncore];
	c.uncore_note = row->uncore_note;
	c.part_name = row->part_name;
	for (unsigned i = 0; i < sizeof(p4_stepping_rows) / sizeof(p4_stepping_rows[0]); i++) {
		const struct p4_stepping_row *r = &p4_stepping_rows[i];

		if (r->model == sig->model && sig->stepping >= r->step_lo &&
		    sig->stepping <= r->step_hi)
			p4_caps_apply_stepping(r, &c);
	}
	*out = c;
	return true;
}

void p4_sig_format(const struct p4_sig *sig, char *buf, unsigned n)
{
	static const char hex[] = "0123456789ABCDEF";
	char tmp[7] = {
		hex[(sig->family >> 4) & 15], hex[sig->family & 15], '_',
		hex[(sig->model >> 4) & 15], hex[sig->model & 15], 'H', '\0'
	};

	if (n == 0)
		return;
	for (unsigned i = 0; i < n; i++) {
		buf[i] = i < sizeof(tmp) ? tmp[i] : '\0';
		if (buf[i] == '\0')
			return;
	}
	buf[n - 1] = '\0';
}
