/*
 * p4_tables.c - counters, CCCRs and ESCRs of the NetBurst PMU as const data.
 *
 * Addresses: PMU reference 1.1/1.2. Select values and reachable counters:
 * PMU reference 3.1 (perfctr's 18x8 map taken from the manual, libpfm3 and SDM
 * Table 18-63 agree). ESCR0-side ESCRs drive counters 0,1 / 4,5 / 8,9 /
 * 12,13,16 of their group; ESCR1-side ones 2,3 / 6,7 / 10,11 / 14,15,17.
 * SSU_ESCR0 has no ESCR1 partner (3BFH is a Linux guess, PMU reference 1.2
 * note 1). IQ_ESCR0/1 exist on models 0-2 only (edk2 Pentium4Msr.h).
 */
#include "pmu/p4_regs.h"
#include "pmu/p4_tables.h"

#define BPU_LO	(P4_CTR(0) | P4_CTR(1))
#define BPU_HI	(P4_CTR(2) | P4_CTR(3))
#define MS_LO	(P4_CTR(4) | P4_CTR(5))
#define MS_HI	(P4_CTR(6) | P4_CTR(7))
#define FLAME_LO (P4_CTR(8) | P4_CTR(9))
#define FLAME_HI (P4_CTR(10) | P4_CTR(11))
#define IQ_LO	(P4_CTR(12) | P4_CTR(13) | P4_CTR(16))
#define IQ_HI	(P4_CTR(14) | P4_CTR(15) | P4_CTR(17))

const char *const p4_group_names[P4_NGROUPS] = {
	[P4_GROUP_BPU] = "BPU",
	[P4_GROUP_MS] = "MS",
	[P4_GROUP_FLAME] = "FLAME",
	[P4_GROUP_IQ] = "IQ",
};

const struct p4_escr_exception p4_escr_exceptions[P4_NESCR_EXCEPTIONS] = {
	{ P4_SSU_ESCR0, "no ESCR1 partner: 3BFH is not an ESCR (PMU reference 1.2 note 1)" },
};

const struct p4_counter_desc p4_counters[P4_NCOUNTER] = {
	[P4_BPU_COUNTER0] = { "MSR_BPU_COUNTER0", "MSR_BPU_CCCR0", 0x300, 0x360, P4_GROUP_BPU },
	[P4_BPU_COUNTER1] = { "MSR_BPU_COUNTER1", "MSR_BPU_CCCR1", 0x301, 0x361, P4_GROUP_BPU },
	[P4_BPU_COUNTER2] = { "MSR_BPU_COUNTER2", "MSR_BPU_CCCR2", 0x302, 0x362, P4_GROUP_BPU },
	[P4_BPU_COUNTER3] = { "MSR_BPU_COUNTER3", "MSR_BPU_CCCR3", 0x303, 0x363, P4_GROUP_BPU },
	[P4_MS_COUNTER0] = { "MSR_MS_COUNTER0", "MSR_MS_CCCR0", 0x304, 0x364, P4_GROUP_MS },
	[P4_MS_COUNTER1] = { "MSR_MS_COUNTER1", "MSR_MS_CCCR1", 0x305, 0x365, P4_GROUP_MS },
	[P4_MS_COUNTER2] = { "MSR_MS_COUNTER2", "MSR_MS_CCCR2", 0x306, 0x366, P4_GROUP_MS },
	[P4_MS_COUNTER3] = { "MSR_MS_COUNTER3", "MSR_MS_CCCR3", 0x307, 0x367, P4_GROUP_MS },
	[P4_FLAME_COUNTER0] = { "MSR_FLAME_COUNTER0", "MSR_FLAME_CCCR0", 0x308, 0x368, P4_GROUP_FLAME },
	[P4_FLAME_COUNTER1] = { "MSR_FLAME_COUNTER1", "MSR_FLAME_CCCR1", 0x309, 0x369, P4_GROUP_FLAME },
	[P4_FLAME_COUNTER2] = { "MSR_FLAME_COUNTER2", "MSR_FLAME_CCCR2", 0x30a, 0x36a, P4_GROUP_FLAME },
	[P4_FLAME_COUNTER3] = { "MSR_FLAME_COUNTER3", "MSR_FLAME_CCCR3", 0x30b, 0x36b, P4_GROUP_FLAME },
	[P4_IQ_COUNTER0] = { "MSR_IQ_COUNTER0", "MSR_IQ_CCCR0", 0x30c, 0x36c, P4_GROUP_IQ },
	[P4_IQ_COUNTER1] = { "MSR_IQ_COUNTER1", "MSR_IQ_CCCR1", 0x30d, 0x36d, P4_GROUP_IQ },
	[P4_IQ_COUNTER2] = { "MSR_IQ_COUNTER2", "MSR_IQ_CCCR2", 0x30e, 0x36e, P4_GROUP_IQ },
	[P4_IQ_COUNTER3] = { "MSR_IQ_COUNTER3", "MSR_IQ_CCCR3", 0x30f, 0x36f, P4_GROUP_IQ },
	[P4_IQ_COUNTER4] = { "MSR_IQ_COUNTER4", "MSR_IQ_CCCR4", 0x310, 0x370, P4_GROUP_IQ },
	[P4_IQ_COUNTER5] = { "MSR_IQ_COUNTER5", "MSR_IQ_CCCR5", 0x311, 0x371, P4_GROUP_IQ },
};

const struct p4_escr_desc p4_escrs[P4_NESCR] = {
	[P4_BSU_ESCR0] = { "BSU_ESCR0", 0x3a0, P4_GROUP_BPU, 7, BPU_LO, P4_MODELS_ALL },
	[P4_BSU_ESCR1] = { "BSU_ESCR1", 0x3a1, P4_GROUP_BPU, 7, BPU_HI, P4_MODELS_ALL },
	[P4_FSB_ESCR0] = { "FSB_ESCR0", 0x3a2, P4_GROUP_BPU, 6, BPU_LO, P4_MODELS_ALL },
	[P4_FSB_ESCR1] = { "FSB_ESCR1", 0x3a3, P4_GROUP_BPU, 6, BPU_HI, P4_MODELS_ALL },
	[P4_FIRM_ESCR0] = { "FIRM_ESCR0", 0x3a4, P4_GROUP_FLAME, 1, FLAME_LO, P4_MODELS_ALL },
	[P4_FIRM_ESCR1] = { "FIRM_ESCR1", 0x3a5, P4_GROUP_FLAME, 1, FLAME_HI, P4_MODELS_ALL },
	[P4_FLAME_ESCR0] = { "FLAME_ESCR0", 0x3a6, P4_GROUP_FLAME, 0, FLAME_LO, P4_MODELS_ALL },
	[P4_FLAME_ESCR1] = { "FLAME_ESCR1", 0x3a7, P4_GROUP_FLAME, 0, FLAME_HI, P4_MODELS_ALL },
	[P4_DAC_ESCR0] = { "DAC_ESCR0", 0x3a8, P4_GROUP_FLAME, 5, FLAME_LO, P4_MODELS_ALL },
	[P4_DAC_ESCR1] = { "DAC_ESCR1", 0x3a9, P4_GROUP_FLAME, 5, FLAME_HI, P4_MODELS_ALL },
	[P4_MOB_ESCR0] = { "MOB_ESCR0", 0x3aa, P4_GROUP_BPU, 2, BPU_LO, P4_MODELS_ALL },
	[P4_MOB_ESCR1] = { "MOB_ESCR1", 0x3ab, P4_GROUP_BPU, 2, BPU_HI, P4_MODELS_ALL },
	[P4_PMH_ESCR0] = { "PMH_ESCR0", 0x3ac, P4_GROUP_BPU, 4, BPU_LO, P4_MODELS_ALL },
	[P4_PMH_ESCR1] = { "PMH_ESCR1", 0x3ad, P4_GROUP_BPU, 4, BPU_HI, P4_MODELS_ALL },
	[P4_SAAT_ESCR0] = { "SAAT_ESCR0", 0x3ae, P4_GROUP_FLAME, 2, FLAME_LO, P4_MODELS_ALL },
	[P4_SAAT_ESCR1] = { "SAAT_ESCR1", 0x3af, P4_GROUP_FLAME, 2, FLAME_HI, P4_MODELS_ALL },
	[P4_U2L_ESCR0] = { "U2L_ESCR0", 0x3b0, P4_GROUP_FLAME, 3, FLAME_LO, P4_MODELS_ALL },
	[P4_U2L_ESCR1] = { "U2L_ESCR1", 0x3b1, P4_GROUP_FLAME, 3, FLAME_HI, P4_MODELS_ALL },
	[P4_BPU_ESCR0] = { "BPU_ESCR0", 0x3b2, P4_GROUP_BPU, 0, BPU_LO, P4_MODELS_ALL },
	[P4_BPU_ESCR1] = { "BPU_ESCR1", 0x3b3, P4_GROUP_BPU, 0, BPU_HI, P4_MODELS_ALL },
	[P4_IS_ESCR0] = { "IS_ESCR0", 0x3b4, P4_GROUP_BPU, 1, BPU_LO, P4_MODELS_ALL },
	[P4_IS_ESCR1] = { "IS_ESCR1", 0x3b5, P4_GROUP_BPU, 1, BPU_HI, P4_MODELS_ALL },
	[P4_ITLB_ESCR0] = { "ITLB_ESCR0", 0x3b6, P4_GROUP_BPU, 3, BPU_LO, P4_MODELS_ALL },
	[P4_ITLB_ESCR1] = { "ITLB_ESCR1", 0x3b7, P4_GROUP_BPU, 3, BPU_HI, P4_MODELS_ALL },
	[P4_CRU_ESCR0] = { "CRU_ESCR0", 0x3b8, P4_GROUP_IQ, 4, IQ_LO, P4_MODELS_ALL },
	[P4_CRU_ESCR1] = { "CRU_ESCR1", 0x3b9, P4_GROUP_IQ, 4, IQ_HI, P4_MODELS_ALL },
	[P4_IQ_ESCR0] = { "IQ_ESCR0", 0x3ba, P4_GROUP_IQ, 0, IQ_LO, P4_MODELS_0_2 },
	[P4_IQ_ESCR1] = { "IQ_ESCR1", 0x3bb, P4_GROUP_IQ, 0, IQ_HI, P4_MODELS_0_2 },
	[P4_RAT_ESCR0] = { "RAT_ESCR0", 0x3bc, P4_GROUP_IQ, 2, IQ_LO, P4_MODELS_ALL },
	[P4_RAT_ESCR1] = { "RAT_ESCR1", 0x3bd, P4_GROUP_IQ, 2, IQ_HI, P4_MODELS_ALL },
	[P4_SSU_ESCR0] = { "SSU_ESCR0", 0x3be, P4_GROUP_IQ, 3, IQ_LO, P4_MODELS_ALL },
	[P4_MS_ESCR0] = { "MS_ESCR0", 0x3c0, P4_GROUP_MS, 0, MS_LO, P4_MODELS_ALL },
	[P4_MS_ESCR1] = { "MS_ESCR1", 0x3c1, P4_GROUP_MS, 0, MS_HI, P4_MODELS_ALL },
	[P4_TBPU_ESCR0] = { "TBPU_ESCR0", 0x3c2, P4_GROUP_MS, 2, MS_LO, P4_MODELS_ALL },
	[P4_TBPU_ESCR1] = { "TBPU_ESCR1", 0x3c3, P4_GROUP_MS, 2, MS_HI, P4_MODELS_ALL },
	[P4_TC_ESCR0] = { "TC_ESCR0", 0x3c4, P4_GROUP_MS, 1, MS_LO, P4_MODELS_ALL },
	[P4_TC_ESCR1] = { "TC_ESCR1", 0x3c5, P4_GROUP_MS, 1, MS_HI, P4_MODELS_ALL },
	[P4_IX_ESCR0] = { "IX_ESCR0", 0x3c8, P4_GROUP_BPU, 5, BPU_LO, P4_MODELS_ALL },
	[P4_IX_ESCR1] = { "IX_ESCR1", 0x3c9, P4_GROUP_BPU, 5, BPU_HI, P4_MODELS_ALL },
	[P4_ALF_ESCR0] = { "ALF_ESCR0", 0x3ca, P4_GROUP_IQ, 1, IQ_LO, P4_MODELS_ALL },
	[P4_ALF_ESCR1] = { "ALF_ESCR1", 0x3cb, P4_GROUP_IQ, 1, IQ_HI, P4_MODELS_ALL },
	[P4_CRU_ESCR2] = { "CRU_ESCR2", 0x3cc, P4_GROUP_IQ, 5, IQ_LO, P4_MODELS_ALL },
	[P4_CRU_ESCR3] = { "CRU_ESCR3", 0x3cd, P4_GROUP_IQ, 5, IQ_HI, P4_MODELS_ALL },
	[P4_CRU_ESCR4] = { "CRU_ESCR4", 0x3e0, P4_GROUP_IQ, 6, IQ_LO, P4_MODELS_ALL },
	[P4_CRU_ESCR5] = { "CRU_ESCR5", 0x3e1, P4_GROUP_IQ, 6, IQ_HI, P4_MODELS_ALL },
};

/*
 * Bit 30 (SDM 18.15.5.6): 0<->2 and 1<->3 in every block, so
 * 4<->6, 5<->7, 8<->10, 9<->11, 12<->14, 13<->15; in IQ counter 16 only from
 * 14 and 17 only from 15, and 16/17 start nothing through bit 30.
 * Bit 11 (Table 18-65): CASCNT4INTO0, CASCNT5INTO3, CASCNT5INTO4, CASCNT4INTO5
 * ("counter 4" = IQ counter 4 = counter 16).
 */
const struct p4_cascade_link p4_cascade_links[P4_NCASCADE_LINKS] = {
	{ 2, 0, false, "cascade" }, { 0, 2, false, "cascade" },
	{ 3, 1, false, "cascade" }, { 1, 3, false, "cascade" },
	{ 6, 4, false, "cascade" }, { 4, 6, false, "cascade" },
	{ 7, 5, false, "cascade" }, { 5, 7, false, "cascade" },
	{ 10, 8, false, "cascade" }, { 8, 10, false, "cascade" },
	{ 11, 9, false, "cascade" }, { 9, 11, false, "cascade" },
	{ 14, 12, false, "cascade" }, { 12, 14, false, "cascade" },
	{ 15, 13, false, "cascade" }, { 13, 15, false, "cascade" },
	{ 14, 16, false, "cascade" }, { 15, 17, false, "cascade" },
	{ 16, 12, true, "CASCNT4INTO0" }, { 17, 15, true, "CASCNT5INTO3" },
	{ 17, 16, true, "CASCNT5INTO4" }, { 16, 17, true, "CASCNT4INTO5" },
};

const struct p4_cascade_link *p4_cascade_find(enum p4_counter from, enum p4_counter to)
{
	for (int i = 0; i < P4_NCASCADE_LINKS; i++)
		if (p4_cascade_links[i].from == from && p4_cascade_links[i].to == to)
			return &p4_cascade_links[i];
	return NULL;
}

enum p4_escr p4_escr_for_select(enum p4_counter counter, unsigned sel)
{
	for (int e = 0; e < P4_NESCR; e++)
		if (p4_escrs[e].select == sel && (p4_escrs[e].counters & P4_CTR(counter)))
			return (enum p4_escr)e;
	return P4_ESCR_NONE;
}

bool p4_counter_by_msr(uint32_t msr, enum p4_counter *out)
{
	if (msr < MSR_P4_COUNTER_BASE || msr >= MSR_P4_COUNTER_BASE + P4_NCOUNTER)
		return false;
	*out = (enum p4_counter)(msr - MSR_P4_COUNTER_BASE);
	return true;
}

bool p4_cccr_by_msr(uint32_t msr, enum p4_counter *out)
{
	if (msr < MSR_P4_CCCR_BASE || msr >= MSR_P4_CCCR_BASE + P4_NCOUNTER)
		return false;
	*out = (enum p4_counter)(msr - MSR_P4_CCCR_BASE);
	return true;
}

bool p4_escr_by_msr(uint32_t msr, enum p4_escr *out)
{
	for (int e = 0; e < P4_NESCR; e++) {
		if (p4_escrs[e].msr == msr) {
			*out = (enum p4_escr)e;
			return true;
		}
	}
	return false;
}

bool p4_msr_is_pmu(uint32_t msr)
{
	enum p4_counter c;
	enum p4_escr e;

	if (p4_counter_by_msr(msr, &c) || p4_cccr_by_msr(msr, &c) || p4_escr_by_msr(msr, &e))
		return true;
	switch (msr) {
	case MSR_TC_PRECISE_EVENT:
	case MSR_PEBS_ENABLE:
	case MSR_PEBS_MATRIX_VERT:
	case MSR_IA32_DS_AREA:
		return true;
	}
	return msr >= MSR_P4_UNCORE_FIRST && msr <= MSR_P4_UNCORE_LAST;
}
