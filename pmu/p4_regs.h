/*
 * p4_regs.h - NetBurst PMU register numbers and bit layouts.
 *
 * The only bit-layout header of the PMU code. Field positions follow the SDM
 * ESCR and CCCR figures as transcribed in the PMU reference (netburst-pmu.md
 * section 2): ESCR event select 30:25, event mask 24:9, tag 8:4, T0/T1 OS/USR
 * 3:0; CCCR OVF 31, cascade 30, OVF_PMI_T1 27, OVF_PMI_T0 26, FORCE_OVF 25,
 * edge 24, threshold 23:20, complement 19, compare 18, active thread 17:16,
 * ESCR select 15:13, enable 12, extended cascade 11 (IQ block only).
 * MSR addresses: PMU reference section 1 (SDM Table 18-63, edk2 Pentium4Msr.h).
 */
#ifndef NBPROF_PMU_P4_REGS_H
#define NBPROF_PMU_P4_REGS_H

#include <stdint.h>

#define BIT(n)		(UINT64_C(1) << (n))
#define BITS(hi, lo)	(((~UINT64_C(0)) >> (63 - (hi))) & ~(BIT(lo) - 1))

/* Place v into the field described by mask; v must fit (checked by callers' tests). */
static inline uint64_t field_prep(uint64_t mask, uint64_t v)
{
	return (v << __builtin_ctzll(mask)) & mask;
}

/*
 * field_prep for a field below bit 32, in 32-bit arithmetic: the 32-bit
 * kernel does field_prep's 64-bit shift and mask in register pairs.
 */
static inline uint32_t field_prep32(uint64_t mask, uint32_t v)
{
	return (v << __builtin_ctzll(mask)) & (uint32_t)mask;
}

static inline uint64_t field_get(uint64_t mask, uint64_t reg)
{
	return (reg & mask) >> __builtin_ctzll(mask);
}

static inline int field_fits(uint64_t mask, uint64_t v)
{
	return (v & ~(mask >> __builtin_ctzll(mask))) == 0;
}

/* Counters: MSR 300H + n, CCCRs: MSR 360H + n, n = 0..17 (also the RDPMC index). */
#define P4_NCOUNTERS		18
#define MSR_P4_COUNTER_BASE	0x300
#define MSR_P4_CCCR_BASE	0x360
#define MSR_BPU_COUNTER0	0x300
#define MSR_IQ_COUNTER0		0x30c
#define MSR_IQ_COUNTER4		0x310
#define MSR_IQ_COUNTER5		0x311
#define MSR_BPU_CCCR0		0x360
#define MSR_IQ_CCCR0		0x36c
#define MSR_IQ_CCCR4		0x370
#define MSR_IQ_CCCR5		0x371

#define P4_COUNTER_WIDTH	40
#define P4_COUNTER_MASK		BITS(39, 0)

/* Other PMU MSRs (PMU reference 1.3). */
#define MSR_IA32_MISC_ENABLE	0x1a0
#define MSR_TC_PRECISE_EVENT	0x3f0
#define MSR_PEBS_ENABLE		0x3f1
#define MSR_PEBS_MATRIX_VERT	0x3f2
#define MATRIX_VERT_LOADS	BIT(0)		/* PMU reference 5.4: the metric tags loads */
#define MATRIX_VERT_STORES	BIT(1)		/* ... and stores */
#define MSR_IA32_DS_AREA	0x600

#define MISC_ENABLE_PERFMON	BIT(7)	/* performance monitoring available (RO) */
#define MISC_ENABLE_BTS_UNAVAIL	BIT(11)
#define MISC_ENABLE_PEBS_UNAVAIL BIT(12)

#define PEBS_ENABLE_METRICS	BITS(16, 0)	/* replay-tag metric select, 12:0 plus 15/16 */
#define PEBS_ENABLE_1STL	BIT(0)		/* PMU reference 5.5: 1stL_cache_load_miss_retired */
#define PEBS_ENABLE_2NDL	BIT(1)		/* 2ndL_cache_load_miss_retired */
#define PEBS_ENABLE_DTLB	BIT(2)		/* DTLB_load/store/all_miss_retired */
#define PEBS_ENABLE_MOB		BIT(9)		/* MOB_load_replay_retired */
#define PEBS_ENABLE_UOP_TAG	BIT(24)
#define PEBS_ENABLE_MY_THR	BIT(25)
#define PEBS_ENABLE_OTH_THR	BIT(26)

/* Uncore L3/FSB MSRs of the Xeon MP parts (PMU reference 1.4). */
#define MSR_P4_UNCORE_FIRST	0x107cc
#define MSR_P4_UNCORE_LAST	0x107d3
/* Models 3, 4 with L3 (SDM Table 35-42 names; the figures say IFSB_IBUSQx, IFSB_ISNPQx). */
#define MSR_IFSB_BUSQ0		0x107cc
#define MSR_IFSB_BUSQ1		0x107cd
#define MSR_IFSB_SNPQ0		0x107ce
#define MSR_IFSB_SNPQ1		0x107cf
#define MSR_EFSB_DRDY0		0x107d0
#define MSR_EFSB_DRDY1		0x107d1
#define MSR_IFSB_CTL6		0x107d2
#define MSR_IFSB_CNTR7		0x107d3
/* Model 6 (Xeon 7100): MSR_EMON_L3_CTR_CTL0..7 at the same addresses. */
#define MSR_EMON_L3_CTR_CTL0	0x107cc

#define UNC_COUNT		BITS(31, 0)	/* 32-bit event count */
#define UNC_CONTROL		BITS(63, 32)	/* control word; non-zero starts counting */
#define IFSB_CTL6_ENABLE	BIT(26)		/* IBUSQ latency count on (SDM 18.20) */

/* ESCR fields. */
#define ESCR_T1_USR		BIT(0)
#define ESCR_T1_OS		BIT(1)
#define ESCR_T0_USR		BIT(2)
#define ESCR_T0_OS		BIT(3)
#define ESCR_TAG_ENABLE		BIT(4)
#define ESCR_TAG_VALUE		BITS(8, 5)
#define ESCR_EVENT_MASK		BITS(24, 9)
#define ESCR_EVENT_SELECT	BITS(30, 25)
#define ESCR_RESERVED		(BIT(31) | BITS(63, 32))

/* CCCR fields. */
#define CCCR_EXT_CASCADE	BIT(11)		/* CASCNTxINTOy, IQ CCCRs 0,3,4,5 on 0F_02/03/04/06 */
#define CCCR_ENABLE		BIT(12)
#define CCCR_ESCR_SELECT	BITS(15, 13)
#define CCCR_ACTIVE_THREAD	BITS(17, 16)
#define CCCR_COMPARE		BIT(18)
#define CCCR_COMPLEMENT		BIT(19)
#define CCCR_THRESHOLD		BITS(23, 20)
#define CCCR_EDGE		BIT(24)
#define CCCR_FORCE_OVF		BIT(25)
#define CCCR_OVF_PMI_T0		BIT(26)
#define CCCR_OVF_PMI_T1		BIT(27)
#define CCCR_CASCADE		BIT(30)
#define CCCR_OVF		BIT(31)
#define CCCR_RESERVED		(BITS(10, 0) | BITS(29, 28) | BITS(63, 32))

/* CCCR active-thread encodings (SDM HT CCCR text, PMU reference 2.2). */
#define CCCR_AT_NONE		0	/* count when no LP is active */
#define CCCR_AT_SINGLE		1	/* exactly one LP active */
#define CCCR_AT_BOTH		2	/* both LPs active */
#define CCCR_AT_ANY		3	/* at least one; required value on non-HT parts */

_Static_assert((CCCR_ESCR_SELECT & CCCR_THRESHOLD) == 0, "CCCR fields overlap");
_Static_assert((ESCR_EVENT_MASK & ESCR_EVENT_SELECT) == 0, "ESCR fields overlap");
_Static_assert(CCCR_ACTIVE_THREAD == 0x30000, "active thread is bits 17:16");

#endif
