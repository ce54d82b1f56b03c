/*
 * p4_caps.h - what a NetBurst part can do, from its CPUID signature.
 *
 * The capabilities differ by DisplayModel (and a few by stepping): which
 * ESCRs exist (IQ_ESCR0/1 on models 0-2 only), extended cascading (CCCR bit
 * 11 on 0F_02/03/04/06), instr_completed (models 3, 4, 6), the cascade-mode
 * PMI erratum (0F_02, and 0F_00/0F_01 steppings above 09H), FSB_ESCR1 (not
 * below signature F27H) and the uncore L3/FSB register set at 107CCH-107D3H.
 * p4_caps.c holds these as rows of data (PMU reference sections 1.2, 1.4, 2.3,
 * 7 and 9); nothing here is a special case in code.
 */
#ifndef NBPROF_PMU_P4_CAPS_H
#define NBPROF_PMU_P4_CAPS_H

#include <stdbool.h>
#include <stdint.h>

/* DisplayFamily / DisplayModel / stepping as the manual writes 0F_02H. */
struct p4_sig {
	uint8_t family;
	uint8_t model;
	uint8_t stepping;
};

/* Which register set the model uses at 107CCH-107D3H (PMU reference 1.4). */
enum p4_uncore {
	P4_UNCORE_NONE,
	P4_UNCORE_IFSB_EFSB,	/* models 3, 4: 64-bit Xeon MP with L3 only */
	P4_UNCORE_EMON_L3,	/* model 6: Dual-Core Xeon 7100 (Tulsa) only */
};

struct p4_caps {
	struct p4_sig sig;
	bool known_model;		/* DisplayModel is one of 0,1,2,3,4,6 */
	bool iq_escr01;			/* MSR_IQ_ESCR0/1 (3BAH/3BBH) exist */
	bool ext_cascade;		/* CCCR bit 11 CASCNTxINTOy (Table 18-65) */
	bool cascade_pmi_erratum;	/* no PMI from a counter in (ext.) cascade mode */
	bool instr_completed;		/* event instr_completed exists */
	bool fsb_escr1_ok;		/* FSB_ESCR1 usable (signature >= F27H) */
	bool pmi_t1_unreliable;		/* OVF_PMI_T1 reported unsupported (PMU reference 9.9) */
	/*
	 * CPUID.1:ECX[2] DTES64 as the part reports it (models 3, 4, 6: Prescott
	 * and later; public /proc/cpuinfo dumps of 0F_03, 0F_04 and 0F_06 parts,
	 * 32-bit-only ones included, list "dtes64"), and IA32_MISC_ENABLE[22]
	 * Limit CPUID MaxVal (models 3, 4, 6: edk2 Pentium4Msr.h). Every
	 * NetBurst part reports CPUID.1:EDX[21] DS.
	 */
	bool dtes64;
	bool limit_cpuid;
	uint8_t nescr;			/* ESCRs present: 45 or 43 */
	uint32_t escr_models;		/* P4_MODEL() bit to test p4_escrs[].models with */
	enum p4_uncore uncore;
	const char *uncore_name;	/* "none", "IFSB/EFSB", "EMON_L3" */
	const char *uncore_note;	/* on which parts of the model the set exists */
	const char *part_name;		/* likely parts (a guess from the model alone) */
};

#define P4_FAMILY	0x0f	/* NetBurst: CPUID display family 0FH */

/* Fill *out for a family-0FH signature; false (and *out untouched) otherwise. */
bool p4_caps_lookup(const struct p4_sig *sig, struct p4_caps *out);

/* The manual's notation, "0F_02H", into buf (at least 7 bytes). */
void p4_sig_format(const struct p4_sig *sig, char *buf, unsigned n);

#endif
