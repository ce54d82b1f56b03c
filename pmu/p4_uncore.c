/*
 * p4_uncore.c - the uncore register sets and their sub-event fields, as data.
 *
 * Sources (PMU reference 1.4 and the SDM pages it cites):
 * - Addresses, names, model availability, "shared": SDM Table 35-42 (2016)
 *   "MSRs Unique to 64-bit Intel Xeon Processor MP with Up to an 8 MB L3
 *   Cache", edk2 Pentium4Msr.h.
 * - IFSB/EFSB: SDM 2008 Vol. 3B 18.20 (manualshelf pages 133-135), 2016
 *   18.17 (xem pages 744-745): "the lower 32-bits ... are treated as 32 bit
 *   performance counter registers", "counting starts after software writes
 *   a non-zero value to one or more of the upper 32 bits", "the count is
 *   enabled by setting MSR_IFSB_CTRL6[bit 26] to 1 ... MSR_IFSB_CNTR7 acts
 *   as a 64-bit event counter". The sub-event fields are given only by
 *   Figures 18-49 to 18-52 (2008 numbering): field names and bit labels,
 *   no text. Bit positions below read those labels in the manner of the
 *   model-6 figures, whose text gives the positions (Saturate above the
 *   event mask, reserved 63:60, snoop result clean/HIT/HITM as three bits,
 *   seven state bits): every IFSB/EFSB position other than 31:0, 63:32 and
 *   CTL6 bit 26 is UNVERIFIED. The IBUSQ figure (2008 Figure 18-49, 2016
 *   Figure 18-51; both copies read) draws two cells "1 1" inside the
 *   otherwise reserved 35:32 and labels 32, 33, 34 and 35 there; the ISNPQ
 *   figure has the same labels without the 1s. The labels fit either 34:33
 *   or 33:32 (or 35:34) as the two cells, and no text names them. The
 *   reading followed: they are a drawing of fixed bits whose position the
 *   manual does not give, so they are written 0 as the rest of 35:32
 *   (`reserved` below) - a guess at a position could set a reserved bit
 *   instead. If they must be 1, IBUSQ counts nothing on hardware, and the
 *   selftest's uncore check (selftest/pebs.c) then FAILs: its lower
 *   bound needs the core's own L3 read misses to be non-zero.
 * - EMON_L3 (model 6): SDM 2016 18.21.2-18.21.4 text (xem pages 748-750):
 *   GBUSQ Agent_Select 35:32, Data_Flow 37:36, Type_Match 43:38,
 *   Snoop_Match 46:44, L3_State 53:47, Core_Module_Select 55:54,
 *   Fill_Eviction 57:56, Cross_Snoop 58, "if all eight attributes match";
 *   GSNPQ Agent_Select 37:32, Type_Match 43:38, Snoop_Match 46:44 (the
 *   rest of its text was cut off in the copy seen: L2_State 53:47,
 *   Core_Select 55:54 and Block_Snoop 56 are read from Figure 18-58,
 *   UNVERIFIED); FSB "bit 58: must set to 1", FSB_Submask 57:32 with its
 *   bits 49:32 named, "if one of the attribute matches". Saturate at bit 59
 *   and reserved 63:60 are read from the figures (UNVERIFIED).
 */
#include "pmu/p4_uncore.h"
#include "pmu/p4_text.h"

#define UNC_RSVD_HI	BITS(63, 60)

const struct p4_unc_unit_desc p4_unc_units[P4_NUNC_UNIT] = {
	[P4_UNC_IBUSQ] = {
		.name = "ibusq", .set = P4_UNCORE_IFSB_EFSB, .all_match = true,
		.saturate = BIT(59), .reserved = UNC_RSVD_HI | BIT(58) | BITS(35, 32),
		.source = "SDM Figure 18-49 (2008) / 18-51 (2016), positions UNVERIFIED",
		.nfields = 7,
		.fields = {
			{ "t0", BIT(36), P4_UNC_ANY_OF, "T0_match: transactions of logical processor 0" },
			{ "t1", BIT(37), P4_UNC_ANY_OF, "T1_match: transactions of logical processor 1" },
			{ "type", BITS(45, 38), P4_UNC_ANY_OF, "Type_match: transaction types" },
			{ "snoop", BITS(48, 46), P4_UNC_ANY_OF, "Snoop_match: clean, HIT, HITM" },
			{ "l3_state", BITS(55, 49), P4_UNC_ANY_OF, "L3_state_match: L3 line states" },
			{ "eviction", BIT(56), P4_UNC_EQUAL, "Eviction_match: only L3 evictions" },
			{ "fill", BIT(57), P4_UNC_EQUAL, "Fill_match: only L3 fills" },
		},
	},
	[P4_UNC_ISNPQ] = {
		.name = "isnpq", .set = P4_UNCORE_IFSB_EFSB, .all_match = true,
		.saturate = BIT(59), .reserved = UNC_RSVD_HI | BITS(58, 56) | BITS(35, 32),
		.source = "SDM Figure 18-50 (2008) / 18-52 (2016), positions UNVERIFIED",
		.nfields = 6,
		.fields = {
			{ "t0", BIT(36), P4_UNC_ANY_OF, "T0_match: snoops for logical processor 0" },
			{ "t1", BIT(37), P4_UNC_ANY_OF, "T1_match: snoops for logical processor 1" },
			{ "agent", BITS(39, 38), P4_UNC_ANY_OF, "Agent_match: snooping agents" },
			{ "type", BITS(45, 40), P4_UNC_ANY_OF, "Type_match: transaction types" },
			{ "snoop", BITS(48, 46), P4_UNC_ANY_OF, "Snoop_match: clean, HIT, HITM" },
			{ "l3_state", BITS(55, 49), P4_UNC_ANY_OF, "L3_state_match: L3 line states" },
		},
	},
	[P4_UNC_EFSB] = {
		.name = "efsb", .set = P4_UNCORE_IFSB_EFSB, .all_match = false,
		.saturate = BIT(59), .reserved = UNC_RSVD_HI | BITS(58, 34),
		.source = "SDM Figure 18-51 (2008) / 18-53 (2016), positions UNVERIFIED",
		.nfields = 2,
		.fields = {
			{ "own", BIT(32), P4_UNC_ANY_OF, "Own: DRDY asserted by this processor" },
			{ "other", BIT(33), P4_UNC_ANY_OF, "Other: DRDY asserted by other agents" },
		},
	},
	[P4_UNC_IBUSQ_LAT] = {
		.name = "ibusq_lat", .set = P4_UNCORE_IFSB_EFSB, .all_match = true,
		.verified = true,
		.source = "SDM 18.20 (2008): CTL6 bit 26 enables, CNTR7 counts 64 bits",
		.nfields = 0,
	},
	[P4_UNC_GBUSQ] = {
		.name = "gbusq", .set = P4_UNCORE_EMON_L3, .all_match = true, .verified = true,
		.saturate = BIT(59), .reserved = UNC_RSVD_HI,
		.source = "SDM 18.21.2 (2016) / 18.24.2 (2008) text; Saturate from the figure",
		.nfields = 8,
		.fields = {
			{ "agent", BITS(35, 32), P4_UNC_ANY_OF, "Agent_Select: logical processors" },
			{ "data_flow", BITS(37, 36), P4_UNC_ANY_OF, "Data_Flow: demand (36), prefetch (37)" },
			{ "type", BITS(43, 38), P4_UNC_ANY_OF, "Type_Match: transaction types" },
			{ "snoop", BITS(46, 44), P4_UNC_ANY_OF, "Snoop_Match: clean, HIT, HITM" },
			{ "l3_state", BITS(53, 47), P4_UNC_ANY_OF, "L3_State: coherency states" },
			{ "core_select", BITS(55, 54), P4_UNC_EQUAL, "Core_Module_Select: 0 any core" },
			{ "fill_eviction", BITS(57, 56), P4_UNC_EQUAL,
			  "Fill_Eviction: 0 any, 1 fills, 2 fills without, 3 with eviction" },
			{ "cross_snoop", BIT(58), P4_UNC_EQUAL, "Cross_Snoop: 0 any, 1 cross snoops" },
		},
	},
	[P4_UNC_GSNPQ] = {
		.name = "gsnpq", .set = P4_UNCORE_EMON_L3, .all_match = true,
		.saturate = BIT(59), .reserved = UNC_RSVD_HI | BITS(58, 57),
		.source = "SDM 18.21.3 (2016) text for 46:32; 56:47 from the figure, UNVERIFIED",
		.nfields = 6,
		.fields = {
			{ "agent", BITS(37, 32), P4_UNC_ANY_OF,
			  "Agent_Select: LPs (35:32), other agent (36), central agent (37)" },
			{ "type", BITS(43, 38), P4_UNC_ANY_OF, "Type_Match: transaction types" },
			{ "snoop", BITS(46, 44), P4_UNC_ANY_OF, "Snoop_Match: clean, HIT, HITM" },
			{ "l2_state", BITS(53, 47), P4_UNC_ANY_OF, "L2_State: coherency states" },
			{ "core_select", BITS(55, 54), P4_UNC_EQUAL, "Core_Select: 0 any core" },
			{ "block_snoop", BIT(56), P4_UNC_EQUAL, "Block_Snoop" },
		},
	},
	[P4_UNC_FSB] = {
		.name = "fsb", .set = P4_UNCORE_EMON_L3, .all_match = false, .verified = true,
		.needs_field = true,
		.must_one = BIT(58), .saturate = BIT(59), .reserved = UNC_RSVD_HI,
		.source = "SDM 18.21.4 (2016) / 18.24.4 (2008) text; Saturate from the figure",
		.nfields = 14,
		.fields = {
			{ "fsb_type", BITS(37, 32), P4_UNC_ANY_OF, "FSB_type: transaction types" },
			{ "l_clear", BIT(38), P4_UNC_ANY_OF, "FSB_L_clear: clean snoop results" },
			{ "l_hit", BIT(39), P4_UNC_ANY_OF, "FSB_L_hit: HIT snoop results" },
			{ "l_hitm", BIT(40), P4_UNC_ANY_OF, "FSB_L_hitm: HITM snoop results" },
			{ "l_defer", BIT(41), P4_UNC_ANY_OF, "FSB_L_defer: DEFER responses" },
			{ "l_retry", BIT(42), P4_UNC_ANY_OF, "FSB_L_retry: RETRY responses" },
			{ "l_snoop_stall", BIT(43), P4_UNC_ANY_OF, "FSB_L_snoop_stall: snoop stalls" },
			{ "dbsy", BIT(44), P4_UNC_ANY_OF, "FSB_DBSY: DBSY without a concurrent DRDY" },
			{ "drdy", BIT(45), P4_UNC_ANY_OF, "FSB_DRDY: DRDY assertions" },
			{ "bnr", BIT(46), P4_UNC_ANY_OF, "FSB_BNR: BNR assertions" },
			{ "ioq_empty", BIT(47), P4_UNC_ANY_OF, "FSB_IOQ_empty: bus clocks, IOQ empty" },
			{ "ioq_full", BIT(48), P4_UNC_ANY_OF, "FSB_IOQ_full: bus clocks, IOQ full" },
			{ "ioq_active", BIT(49), P4_UNC_ANY_OF, "FSB_IOQ_active: bus clocks, IOQ busy" },
			{ "submask_hi", BITS(57, 50), P4_UNC_ANY_OF,
			  "FSB_Submask 57:50 (names not in the copy seen)" },
		},
	},
};

static const struct p4_unc_reg p4_unc_ifsb_regs[P4_UNC_NREG] = {
	{ "MSR_IFSB_BUSQ0", MSR_IFSB_BUSQ0, P4_UNC_IBUSQ, P4_UNC_EVENT },
	{ "MSR_IFSB_BUSQ1", MSR_IFSB_BUSQ1, P4_UNC_IBUSQ, P4_UNC_EVENT },
	{ "MSR_IFSB_SNPQ0", MSR_IFSB_SNPQ0, P4_UNC_ISNPQ, P4_UNC_EVENT },
	{ "MSR_IFSB_SNPQ1", MSR_IFSB_SNPQ1, P4_UNC_ISNPQ, P4_UNC_EVENT },
	{ "MSR_EFSB_DRDY0", MSR_EFSB_DRDY0, P4_UNC_EFSB, P4_UNC_EVENT },
	{ "MSR_EFSB_DRDY1", MSR_EFSB_DRDY1, P4_UNC_EFSB, P4_UNC_EVENT },
	{ "MSR_IFSB_CTL6", MSR_IFSB_CTL6, P4_UNC_IBUSQ_LAT, P4_UNC_LAT_CTL },
	{ "MSR_IFSB_CNTR7", MSR_IFSB_CNTR7, P4_UNC_IBUSQ_LAT, P4_UNC_LAT_COUNT },
};

static const struct p4_unc_reg p4_unc_emon_regs[P4_UNC_NREG] = {
	{ "MSR_EMON_L3_CTR_CTL0", MSR_EMON_L3_CTR_CTL0 + 0, P4_UNC_GBUSQ, P4_UNC_EVENT },
	{ "MSR_EMON_L3_CTR_CTL1", MSR_EMON_L3_CTR_CTL0 + 1, P4_UNC_GBUSQ, P4_UNC_EVENT },
	{ "MSR_EMON_L3_CTR_CTL2", MSR_EMON_L3_CTR_CTL0 + 2, P4_UNC_GSNPQ, P4_UNC_EVENT },
	{ "MSR_EMON_L3_CTR_CTL3", MSR_EMON_L3_CTR_CTL0 + 3, P4_UNC_GSNPQ, P4_UNC_EVENT },
	{ "MSR_EMON_L3_CTR_CTL4", MSR_EMON_L3_CTR_CTL0 + 4, P4_UNC_FSB, P4_UNC_EVENT },
	{ "MSR_EMON_L3_CTR_CTL5", MSR_EMON_L3_CTR_CTL0 + 5, P4_UNC_FSB, P4_UNC_EVENT },
	{ "MSR_EMON_L3_CTR_CTL6", MSR_EMON_L3_CTR_CTL0 + 6, P4_UNC_FSB, P4_UNC_EVENT },
	{ "MSR_EMON_L3_CTR_CTL7", MSR_EMON_L3_CTR_CTL0 + 7, P4_UNC_FSB, P4_UNC_EVENT },
};

const struct p4_unc_reg *p4_unc_reg_at(enum p4_uncore set, unsigned i)
{
	if (i >= P4_UNC_NREG)
		return NULL;
	switch (set) {
	case P4_UNCORE_IFSB_EFSB:
		return &p4_unc_ifsb_regs[i];
	case P4_UNCORE_EMON_L3:
		return &p4_unc_emon_regs[i];
	default:
		return NULL;
	}
}

const struct p4_unc_reg *p4_unc_reg_find(enum p4_uncore set, uint32_t msr)
{
	if (msr < MSR_P4_UNCORE_FIRST || msr > MSR_P4_UNCORE_LAST)
		return NULL;
	return p4_unc_reg_at(set, msr - MSR_P4_UNCORE_FIRST);
}

static int p4_unc_lc(int c)
{
	return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c;
}

enum p4_unc_unit p4_unc_unit_by_name(const char *name, size_t len)
{
	for (unsigned u = 0; u < P4_NUNC_UNIT; u++) {
		const char *n = p4_unc_units[u].name;
		size_t i = 0;

		while (i < len && n[i] && p4_unc_lc(name[i]) == n[i])
			i++;
		if (i == len && n[i] == '\0')
			return (enum p4_unc_unit)u;
	}
	return P4_NUNC_UNIT;
}

bool p4_unc_available(const struct p4_caps *caps, enum p4_unc_unit unit, char *why, size_t n)
{
	static const char *const where[] = {
		[P4_UNCORE_NONE] = "no NetBurst part",
		[P4_UNCORE_IFSB_EFSB] = "family 0FH models 3 and 4 with an L3 (64-bit Xeon MP)",
		[P4_UNCORE_EMON_L3] = "family 0FH model 6 Dual-Core Xeon 7100",
	};
	const struct p4_unc_unit_desc *d;
	char sig[8];

	if (unit >= P4_NUNC_UNIT) {
		ksnprintf(why, n, "unknown uncore unit");
		return false;
	}
	d = &p4_unc_units[unit];
	if (caps->uncore == d->set)
		return true;
	p4_sig_format(&caps->sig, sig, sizeof(sig));
	ksnprintf(why, n, "%s: %s has %s uncore counters; %s are on %s", d->name, sig,
		  caps->uncore == P4_UNCORE_NONE ? "no" : caps->uncore_name, d->name, where[d->set]);
	return false;
}

int p4_unc_alloc(const struct p4_caps *caps, enum p4_unc_unit unit, uint8_t used)
{
	for (unsigned i = 0; i < P4_UNC_NREG; i++) {
		const struct p4_unc_reg *r = p4_unc_reg_at(caps->uncore, i);

		if (!r || r->unit != unit || r->role == P4_UNC_LAT_CTL || (used & (1u << i)))
			continue;
		if (r->role == P4_UNC_LAT_COUNT && (used & (1u << (i - 1))))
			continue;	/* its control register is taken */
		return (int)i;
	}
	return -1;
}

bool p4_unc_matches(enum p4_unc_unit unit, uint64_t ctl, uint64_t attrs)
{
	const struct p4_unc_unit_desc *d;

	if (unit >= P4_NUNC_UNIT)
		return false;
	d = &p4_unc_units[unit];
	for (unsigned i = 0; i < d->nfields; i++) {
		const struct p4_unc_field *f = &d->fields[i];
		uint64_t a = attrs & f->mask, c = ctl & f->mask;

		if (!d->all_match) {
			if (a & c)
				return true;	/* "if one of the attribute matches" */
			continue;
		}
		if (f->match == P4_UNC_ANY_OF && a && !(a & c))
			return false;
		if (f->match == P4_UNC_EQUAL && c && c != a)
			return false;
	}
	return d->all_match;
}
