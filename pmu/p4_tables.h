/*
 * p4_tables.h - the NetBurst PMU as data: counters, CCCRs, ESCRs, events.
 *
 * Every table is const and keyed by an enum; nothing writes to a table at
 * run time. One set of tables serves the encoder, the allocator, the model,
 * the shell's `events`/`explain` commands and the tests.
 *
 * Facts: docs/reference/netburst-pmu.md sections 1 (addresses), 3.1
 * (ESCR -> select value -> counters, cross-checked against perfctr's map
 * copied from the manual, libpfm3 and SDM Table 18-63) and 4 (events).
 */
#ifndef NBPROF_PMU_P4_TABLES_H
#define NBPROF_PMU_P4_TABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum p4_group {
	P4_GROUP_BPU,
	P4_GROUP_MS,
	P4_GROUP_FLAME,
	P4_GROUP_IQ,
	P4_NGROUPS
};

/* Counter n is MSR 300H + n, its CCCR 360H + n, and RDPMC index n. */
enum p4_counter {
	P4_BPU_COUNTER0, P4_BPU_COUNTER1, P4_BPU_COUNTER2, P4_BPU_COUNTER3,
	P4_MS_COUNTER0, P4_MS_COUNTER1, P4_MS_COUNTER2, P4_MS_COUNTER3,
	P4_FLAME_COUNTER0, P4_FLAME_COUNTER1, P4_FLAME_COUNTER2, P4_FLAME_COUNTER3,
	P4_IQ_COUNTER0, P4_IQ_COUNTER1, P4_IQ_COUNTER2, P4_IQ_COUNTER3,
	P4_IQ_COUNTER4, P4_IQ_COUNTER5,
	P4_NCOUNTER
};

/* ESCRs in address order (PMU reference 1.2). */
enum p4_escr {
	P4_BSU_ESCR0, P4_BSU_ESCR1, P4_FSB_ESCR0, P4_FSB_ESCR1,
	P4_FIRM_ESCR0, P4_FIRM_ESCR1, P4_FLAME_ESCR0, P4_FLAME_ESCR1,
	P4_DAC_ESCR0, P4_DAC_ESCR1, P4_MOB_ESCR0, P4_MOB_ESCR1,
	P4_PMH_ESCR0, P4_PMH_ESCR1, P4_SAAT_ESCR0, P4_SAAT_ESCR1,
	P4_U2L_ESCR0, P4_U2L_ESCR1, P4_BPU_ESCR0, P4_BPU_ESCR1,
	P4_IS_ESCR0, P4_IS_ESCR1, P4_ITLB_ESCR0, P4_ITLB_ESCR1,
	P4_CRU_ESCR0, P4_CRU_ESCR1, P4_IQ_ESCR0, P4_IQ_ESCR1,
	P4_RAT_ESCR0, P4_RAT_ESCR1, P4_SSU_ESCR0,
	P4_MS_ESCR0, P4_MS_ESCR1, P4_TBPU_ESCR0, P4_TBPU_ESCR1,
	P4_TC_ESCR0, P4_TC_ESCR1, P4_IX_ESCR0, P4_IX_ESCR1,
	P4_ALF_ESCR0, P4_ALF_ESCR1, P4_CRU_ESCR2, P4_CRU_ESCR3,
	P4_CRU_ESCR4, P4_CRU_ESCR5,
	P4_NESCR,
	P4_ESCR_NONE = P4_NESCR
};

/* Bit m set = present on DisplayModel m (family 0FH models 0..6). */
#define P4_MODEL(m)		(1u << (m))
#define P4_MODELS_ALL		0x7fu
#define P4_MODELS_0_2		(P4_MODEL(0) | P4_MODEL(1) | P4_MODEL(2))

#define P4_CTR(c)		(1u << (c))

struct p4_counter_desc {
	const char *name;	/* SDM counter name, e.g. "MSR_IQ_COUNTER4" */
	const char *cccr_name;	/* e.g. "MSR_IQ_CCCR4" */
	uint32_t msr;
	uint32_t cccr_msr;
	enum p4_group group;
};

struct p4_escr_desc {
	const char *name;	/* SDM name without the MSR_ prefix, e.g. "CRU_ESCR0" */
	uint32_t msr;
	enum p4_group group;
	uint8_t select;		/* value of CCCR[15:13] that names this ESCR */
	uint32_t counters;	/* P4_CTR() mask of counters that can use it */
	uint32_t models;	/* P4_MODEL() mask of models that have it */
};

/*
 * ESCRs that break the pairing rule "ESCR0 at an even address with its
 * ESCR1 partner at address + 1, same select value, driving the first /
 * second counter pair of the group": each row says why.
 */
struct p4_escr_exception {
	enum p4_escr escr;
	const char *why;
};

#define P4_NESCR_EXCEPTIONS 1

extern const struct p4_escr_exception p4_escr_exceptions[P4_NESCR_EXCEPTIONS];
extern const struct p4_counter_desc p4_counters[P4_NCOUNTER];

/*
 * Cascade links: the overflow of `from` starts `to` when `to`'s CCCR has
 * the cascade bit 30 (extended = false) or bit 11 (extended = true, named
 * `name`, Table 18-65; only on parts with p4_caps.ext_cascade).
 */
struct p4_cascade_link {
	enum p4_counter from, to;
	bool extended;
	const char *name;
};

#define P4_NCASCADE_LINKS 22

extern const struct p4_cascade_link p4_cascade_links[P4_NCASCADE_LINKS];

/* The link that lets `from` start `to`, or NULL. */
const struct p4_cascade_link *p4_cascade_find(enum p4_counter from, enum p4_counter to);
extern const struct p4_escr_desc p4_escrs[P4_NESCR];
extern const char *const p4_group_names[P4_NGROUPS];

/* The ESCR that CCCR `counter` reaches with ESCR-select `sel`, or P4_ESCR_NONE. */
enum p4_escr p4_escr_for_select(enum p4_counter counter, unsigned sel);

/* Lookup by MSR address; return false when the address is not of that kind. */
bool p4_counter_by_msr(uint32_t msr, enum p4_counter *out);
bool p4_cccr_by_msr(uint32_t msr, enum p4_counter *out);
bool p4_escr_by_msr(uint32_t msr, enum p4_escr *out);

/*
 * True for the MSRs a PMU user may write: counters, CCCRs, ESCRs (of any
 * model), TC_PRECISE_EVENT, PEBS_ENABLE, PEBS_MATRIX_VERT, IA32_DS_AREA and
 * the uncore range 107CCH-107D3H. IA32_MISC_ENABLE is not in the set.
 */
bool p4_msr_is_pmu(uint32_t msr);

#endif
