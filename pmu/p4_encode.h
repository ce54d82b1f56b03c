/*
 * p4_encode.h - ESCR and CCCR values from an event spec (PMU reference 2.1,
 * 2.2, 2.3; SDM Table 18-66 for the T0/T1 OS/USR bits).
 *
 * Pure functions: no table is changed, no register is touched. The bit
 * positions come from p4_regs.h and are checked against the manual's own
 * values (Example 18-2: 04000603H, 04038800H) in tests/host/test_encode.c.
 */
#ifndef NBPROF_PMU_P4_ENCODE_H
#define NBPROF_PMU_P4_ENCODE_H

#include <stdbool.h>
#include <stdint.h>

#include "pmu/p4_regs.h"
#include "pmu/p4_spec.h"
#include "pmu/p4_regs.h"
#include "pmu/p4_tables.h"

/* Which logical processors' events an ESCR counts. */
enum p4_lp {
	P4_LP0,
	P4_LP1,
	P4_LP_BOTH,
};

/* Who receives the overflow PMI. */
enum p4_pmi {
	P4_PMI_AUTO,	/* the counted LP when the request samples (LP0 for BOTH), else none */
	P4_PMI_NONE,
	P4_PMI_LP0,
	P4_PMI_LP1,
	P4_PMI_BOTH,
};

/* Everything a CCCR holds, in words. */
struct p4_cccr_cfg {
	unsigned escr_select;
	bool enable;
	unsigned active_thread;		/* CCCR_AT_*; forced to 11b on non-HT parts */
	bool compare, complement, edge, force_ovf;
	unsigned threshold;
	bool pmi_t0, pmi_t1;
	bool cascade;			/* bit 30 */
	bool ext_cascade;		/* bit 11 */
};

/*
 * ESCR value: event select, mask, tag, and the OS/USR bits of the counted
 * LP(s). On a part without HT only T0_OS/T0_USR exist (T1 bits reserved),
 * so lp must be P4_LP0 there.
 */
uint64_t p4_escr_encode(const struct p4_spec *spec, enum p4_lp lp, bool ht);

uint64_t p4_cccr_encode(const struct p4_cccr_cfg *cfg, bool ht);

/* The CCCR filter settings a spec asks for (compare, threshold, ...). */
void p4_cccr_from_spec(const struct p4_spec *spec, struct p4_cccr_cfg *cfg);

/*
 * The logical processor (SMT ID) whose PMI handler takes the overflows of a
 * counter with this CCCR: the one OVF_PMI_T0/T1 names (PMU reference 6, 8),
 * LP0 when both or neither are set. Each counter thus has exactly one
 * owner: the handler of one LP stops, totals, samples and reloads it, and
 * the other LP's handler, interrupted by the same overflow when both bits
 * are set, leaves it alone; an unflagged counter is polled from LP0.
 */
static inline unsigned p4_cccr_pmi_lp(uint64_t cccr)
{
	return (cccr & CCCR_OVF_PMI_T1) && !(cccr & CCCR_OVF_PMI_T0);
}

/* Counter value that overflows on the n-th event (Example 18-1: -n in 40 bits). */
static inline uint64_t p4_counter_preset(uint64_t n)
{
	return (0 - n) & P4_COUNTER_MASK;	/* inline: the PMI handler's path */
}

/*
 * Thread-independent (TI) events: SDM Vol. 3B Table 18-67 "Effect of Logical
 * Processor and CPL Qualification for Non-logical-Processor-specific (TI)
 * Events" (Table 18-30 in the 2008 editions). A TI event cannot be put on
 * one LP, so its ESCR's four T-bits do not pick a thread: every one of the
 * table's 16 cells reads as "counts while T0 or T1 is at a CPL that one of
 * the set bits names" - no bit: zero count; only USR bits: "while (a) T0 in
 * USR or (b) T1 in USR"; only OS bits: "while (a) T0 in OS or (b) T1 in OS";
 * an OS and a USR bit, of either thread: "irrespective of CPL, T0, T1".
 * (The current edition prints the last row's label as "T0_OS/T0_USR = 0";
 * the row order 00, 01, 11, 10 makes it 10.)
 *
 * p4_ti_cpls(): which of P4_TI_OS / P4_TI_USR the ESCR value selects.
 * p4_ti_counts(): does a TI event count now, given whether some LP is at
 * CPL 0 (some_os) and whether some LP is at CPL 1-3 (some_usr)?
 */
#define P4_TI_OS	1u
#define P4_TI_USR	2u
unsigned p4_ti_cpls(uint64_t escr);
bool p4_ti_counts(uint64_t escr, bool some_os, bool some_usr);

#endif
