/*
 * test_model.c - the software NetBurst PMU against the manual.
 *
 * Every expected number below comes from the SDM or the PMU reference
 * (cited at each test), never from running the model: Example 18-1
 * (cascading counts), Example 18-2 (extended cascading, as intended and as
 * printed), Table 18-66 (all 16 thread/privilege cells), Table 18-67 (the
 * same for thread-independent events, all 16 cells), the CCCR field
 * texts (compare/complement/threshold/edge, FORCE_OVF, active thread, PMI
 * "on the next event count after the counter has overflowed"), the ESCR
 * availability table (PMU reference 1.2) and the cascade-mode PMI erratum.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "pmu/model/p4_model.h"

#define MSR_CRU_ESCR0	0x3b8
#define MSR_CRU_ESCR1	0x3b9
#define MSR_IQ_ESCR0	0x3ba
#define MSR_SSU_ESCR1	0x3bf	/* does not exist (PMU reference 1.2 note 1) */
#define MSR_CRU_ESCR2	0x3cc
#define MSR_CRU_ESCR3	0x3cd
#define NEG(n)		((UINT64_C(0) - (n)) & P4_COUNTER_MASK)	/* -n in 40 bits */

/* Event-mask bits used below (PMU reference 4.2). */
#define NBOGUSNTAG	P4_EVMASK(P4_INSTR_RETIRED_NBOGUSNTAG)
#define MMTP		P4_EVMASK(P4_BRANCH_RETIRED_MMTP)

struct pmi_log {
	unsigned n;
	unsigned lp[16];
};

static void log_pmi(struct p4_model *m, unsigned lp, void *ctx)
{
	struct pmi_log *log = ctx;

	(void)m;
	if (log->n < 16)
		log->lp[log->n] = lp;
	log->n++;
}

static struct pmi_log pmis;

static bool enable_hidden = true;	/* the reading of a cascade start (p4_model.c "Starts") */

static void model_new(struct p4_model *m, uint8_t model, uint8_t stepping, bool ht)
{
	struct p4_model_config cfg = {
		.sig = { 0x0f, model, stepping }, .ht = ht,
		.raise_pmi = log_pmi, .ctx = &pmis, .cascade_enable_hidden = enable_hidden,
	};

	pmis.n = 0;
	assert_int_equal(p4_model_init(m, &cfg), 0);
}

static void wr(struct p4_model *m, uint32_t msr, uint64_t v)
{
	assert_int_equal(msr_bus_write(&m->bus, msr, v), 0);
}

static uint64_t rd(struct p4_model *m, uint32_t msr)
{
	uint64_t v = 0xdeadbeef;

	assert_int_equal(msr_bus_read(&m->bus, msr, &v), 0);
	return v;
}

static uint64_t ctr(struct p4_model *m, unsigned n)
{
	return rd(m, MSR_P4_COUNTER_BASE + n);
}

static uint64_t cccr(struct p4_model *m, unsigned n)
{
	return rd(m, MSR_P4_CCCR_BASE + n);
}

/* ESCR and CCCR values from the field layout of PMU reference 2.1/2.2. */
static uint64_t escr_val(unsigned evsel, uint16_t mask, uint64_t tbits)
{
	return field_prep(ESCR_EVENT_SELECT, evsel) | field_prep(ESCR_EVENT_MASK, mask) | tbits;
}

static uint64_t cccr_val(unsigned escr_sel, uint64_t flags)
{
	return field_prep(CCCR_ESCR_SELECT, escr_sel) |
	       field_prep(CCCR_ACTIVE_THREAD, CCCR_AT_ANY) | flags;
}

static void instr(struct p4_model *m, unsigned lp, unsigned cpl, uint64_t n)
{
	assert_int_equal(p4_model_event(m, lp, cpl, P4_EV_INSTR_RETIRED, NBOGUSNTAG, n), 0);
}

/* The helpers reproduce the SDM's own Example 18-2 values (PMU reference 2.3). */
static void helpers_match_manual(void **state)
{
	(void)state;
	assert_int_equal(escr_val(0x02, 0x3, ESCR_T1_OS | ESCR_T1_USR), 0x04000603);
	assert_int_equal(cccr_val(4, CCCR_OVF_PMI_T0 | CCCR_EXT_CASCADE), 0x04038800);
	assert_int_equal(cccr_val(4, CCCR_ENABLE), 0x00039000);
}

/*
 * Example 18-1: X preset -200 counts A, Y (Cascade set, Enable clear) preset
 * -400 counts B. X overflows on the 200th A, Y then starts and overflows on
 * its 400th B. X = counter 12 (instr_retired, CRU_ESCR0), Y = counter 14,
 * its cascade partner (SDM 18.15.5.6), B = branch_retired on CRU_ESCR3.
 */
static void example_18_1_nested(void **state)
{
	struct p4_model m;

	(void)state;
	model_new(&m, 4, 1, false);
	wr(&m, MSR_CRU_ESCR0, escr_val(0x02, NBOGUSNTAG, ESCR_T0_OS | ESCR_T0_USR));
	wr(&m, MSR_CRU_ESCR3, escr_val(0x06, MMTP, ESCR_T0_OS | ESCR_T0_USR));
	wr(&m, MSR_P4_COUNTER_BASE + 12, NEG(200));
	wr(&m, MSR_P4_COUNTER_BASE + 14, NEG(400));
	wr(&m, MSR_P4_CCCR_BASE + 14, cccr_val(5, CCCR_CASCADE | CCCR_OVF_PMI_T0));
	wr(&m, MSR_P4_CCCR_BASE + 12, cccr_val(4, CCCR_ENABLE));

	/* B before X overflows: Y is not counting yet. */
	assert_int_equal(p4_model_event(&m, 0, 3, P4_EV_BRANCH_RETIRED, MMTP, 50), 0);
	instr(&m, 0, 3, 199);
	assert_false(cccr(&m, 12) & CCCR_OVF);
	assert_false(p4_model_running(&m, 14));
	assert_int_equal(ctr(&m, 14), NEG(400));

	instr(&m, 0, 3, 1);			/* the 200th A */
	assert_true(cccr(&m, 12) & CCCR_OVF);
	assert_int_equal(ctr(&m, 12), 0);
	assert_true(p4_model_running(&m, 14));
	assert_false(cccr(&m, 14) & CCCR_ENABLE);	/* reads back as written */
	enable_hidden = false;				/* the other reading: */
	model_new(&m, 4, 1, false);
	enable_hidden = true;
	wr(&m, MSR_CRU_ESCR0, escr_val(0x02, NBOGUSNTAG, ESCR_T0_OS | ESCR_T0_USR));
	wr(&m, MSR_CRU_ESCR3, escr_val(0x06, MMTP, ESCR_T0_OS | ESCR_T0_USR));
	wr(&m, MSR_P4_COUNTER_BASE + 12, NEG(200));
	wr(&m, MSR_P4_COUNTER_BASE + 14, NEG(400));
	wr(&m, MSR_P4_CCCR_BASE + 14, cccr_val(5, CCCR_CASCADE | CCCR_OVF_PMI_T0));
	wr(&m, MSR_P4_CCCR_BASE + 12, cccr_val(4, CCCR_ENABLE));
	instr(&m, 0, 3, 200);
	assert_true(p4_model_running(&m, 14));
	assert_true(cccr(&m, 14) & CCCR_ENABLE);	/* "automatically enabled": reads 1 */

	/* X keeps counting and wraps on (the example's "count indefinitely"). */
	instr(&m, 0, 3, 5);
	assert_int_equal(ctr(&m, 12), 5);
	assert_int_equal(ctr(&m, 14), NEG(400));	/* A is not Y's event */

	assert_int_equal(p4_model_event(&m, 0, 3, P4_EV_BRANCH_RETIRED, MMTP, 399), 0);
	assert_false(cccr(&m, 14) & CCCR_OVF);
	assert_int_equal(p4_model_event(&m, 0, 3, P4_EV_BRANCH_RETIRED, MMTP, 1), 0);
	assert_true(cccr(&m, 14) & CCCR_OVF);	/* exactly the 400th B */
	assert_int_equal(ctr(&m, 14), 0);

	/* "Y would typically be set up to generate an interrupt": on the next B. */
	assert_int_equal(pmis.n, 0);
	assert_int_equal(p4_model_event(&m, 0, 3, P4_EV_BRANCH_RETIRED, MMTP, 1), 0);
	assert_int_equal(pmis.n, 1);
	assert_int_equal(pmis.lp[0], 0);
}

/*
 * Example 18-1, last paragraph: one event on both counters doubles the
 * range. X (counter 0 preset 0) wraps after 2^40 events; Y (counter 2,
 * cascaded) then holds the events beyond that, so the pair has counted
 * 2^40 + Y. Both count itlb_reference (ITLB_ESCR0 for 0, ITLB_ESCR1 for 2).
 */
static void example_18_1_doubled_range(void **state)
{
	struct p4_model m;
	uint64_t escr = escr_val(0x18, P4_EVMASK(P4_ITLB_REFERENCE_HIT), ESCR_T0_OS | ESCR_T0_USR);
	uint16_t hit = P4_EVMASK(P4_ITLB_REFERENCE_HIT);

	(void)state;
	model_new(&m, 2, 5, false);
	wr(&m, 0x3b6, escr);			/* ITLB_ESCR0 */
	wr(&m, 0x3b7, escr);			/* ITLB_ESCR1 */
	wr(&m, MSR_P4_CCCR_BASE + 2, cccr_val(3, CCCR_CASCADE));
	assert_int_equal(m.cascade_armed, 0);	/* nothing runs that would start it */
	wr(&m, MSR_P4_CCCR_BASE + 0, cccr_val(3, CCCR_ENABLE));
	/* Y waits for X's overflow: the feed gives cycles apart up to it (model_feed.c) */
	assert_int_equal(m.cascade_waiting, 1u << 2);
	assert_int_equal(m.cascade_armed, 1u << 2);
	assert_int_equal(p4_model_to_overflow(&m), P4_COUNTER_MASK + 1);

	assert_int_equal(p4_model_event(&m, 0, 0, P4_EV_ITLB_REFERENCE, hit, P4_COUNTER_MASK), 0);
	assert_int_equal(ctr(&m, 0), P4_COUNTER_MASK);
	assert_false(p4_model_running(&m, 2));
	assert_int_equal(p4_model_event(&m, 0, 0, P4_EV_ITLB_REFERENCE, hit, 1), 0);
	assert_true(cccr(&m, 0) & CCCR_OVF);
	assert_int_equal(m.cascade_waiting, 0);
	assert_int_equal(m.cascade_armed, 0);
	assert_int_equal(ctr(&m, 2), 0);	/* the overflowing event is X's */
	assert_int_equal(p4_model_event(&m, 0, 0, P4_EV_ITLB_REFERENCE, hit, 1000), 0);
	assert_int_equal(ctr(&m, 2), 1000);	/* total = 2^40 + 1000 */
}

/*
 * Which counter starts which through bit 30 (SDM 18.15.5.6): 0<->2 and
 * 1<->3 in each block, 16 only from 14, 17 only from 15, never 14 from 16.
 */
static const uint8_t cascade_pairs[][2] = {	/* { source, started } */
	{ 0, 2 }, { 2, 0 }, { 1, 3 }, { 3, 1 }, { 4, 6 }, { 6, 4 }, { 5, 7 }, { 7, 5 },
	{ 8, 10 }, { 10, 8 }, { 9, 11 }, { 11, 9 }, { 12, 14 }, { 14, 12 },
	{ 13, 15 }, { 15, 13 }, { 14, 16 }, { 15, 17 },
};

/* Extended cascading, Table 18-65: CASCNT4INTO0 etc. ("4" = counter 16). */
static const uint8_t ext_pairs[][2] = {
	{ 16, 12 }, { 17, 15 }, { 17, 16 }, { 16, 17 },
};

static bool pair_listed(const uint8_t (*pairs)[2], size_t n, unsigned src, unsigned dst)
{
	for (size_t i = 0; i < n; i++)
		if (pairs[i][0] == src && pairs[i][1] == dst)
			return true;
	return false;
}

/* Make `src` overflow once (FORCE_OVF) and report whether `dst` started. */
static bool starts(uint8_t model, unsigned src, unsigned dst, uint64_t dst_bit)
{
	struct p4_model m;
	enum p4_escr e = P4_ESCR_NONE;
	unsigned sel;

	model_new(&m, model, 1, false);
	for (sel = 0; sel < 8; sel++) {
		e = p4_escr_for_select(src, sel);
		if (e != P4_ESCR_NONE && (p4_escrs[e].models & P4_MODEL(model)))
			break;
	}
	assert_int_not_equal(e, P4_ESCR_NONE);
	wr(&m, p4_escrs[e].msr, escr_val(0x01, 1, ESCR_T0_OS));
	if (msr_bus_write(&m.bus, MSR_P4_CCCR_BASE + dst, cccr_val(0, dst_bit)) != 0)
		return false;	/* bit 11 reserved there */
	wr(&m, MSR_P4_CCCR_BASE + src, cccr_val(sel, CCCR_ENABLE | CCCR_FORCE_OVF));
	assert_int_equal(p4_model_event_raw(&m, 0, 0, P4_MODEL_ESCR(e), 0x01, 1, 1), 0);
	assert_true(cccr(&m, src) & CCCR_OVF);
	return p4_model_running(&m, dst);
}

static void cascade_pairs_all(void **state)
{
	(void)state;
	for (unsigned s = 0; s < P4_NCOUNTER; s++) {
		for (unsigned d = 0; d < P4_NCOUNTER; d++) {
			if (s == d)
				continue;
			assert_int_equal(starts(4, s, d, CCCR_CASCADE),
					 pair_listed(cascade_pairs, 18, s, d));
			assert_int_equal(starts(4, s, d, CCCR_EXT_CASCADE),
					 pair_listed(ext_pairs, 4, s, d));
			/* 0F_01 has no extended cascading (SDM 18.15.5.7). */
			assert_false(starts(1, s, d, CCCR_EXT_CASCADE));
		}
	}
}

/*
 * Example 18-2 as intended: sample LP1's retired instructions after LP0 has
 * retired 4096. Counter 16 (CRU_ESCR0, LP0) preset -4096 and enabled;
 * counter 17 (CRU_ESCR1, LP1) with CASCNT4INTO5, Enable clear, OVF_PMI_T0.
 * With `swap`, the mirror plan: 17 counts LP0, 16 samples with CASCNT5INTO4.
 */
static void example_18_2_intended_plan(struct p4_model *m, bool swap)
{
	unsigned first = swap ? 17 : 16, sampler = swap ? 16 : 17;
	uint32_t first_escr = swap ? MSR_CRU_ESCR1 : MSR_CRU_ESCR0;
	uint32_t sampler_escr = swap ? MSR_CRU_ESCR0 : MSR_CRU_ESCR1;

	wr(m, first_escr, 0x0400060c);		/* instr_retired NBOGUS*, LP0 (PMU reference 2.4) */
	wr(m, sampler_escr, 0x04000603);	/* the same, LP1 (Example 18-2 step 2) */
	wr(m, MSR_P4_COUNTER_BASE + sampler, NEG(9));	/* PMI at the 10th (SDM 18.18.6.8) */
	wr(m, MSR_P4_CCCR_BASE + sampler, 0x04038800);	/* bit 11, OVF_PMI_T0, select 4 */
	wr(m, MSR_P4_COUNTER_BASE + first, NEG(4096));
	wr(m, MSR_P4_CCCR_BASE + first, 0x00039000);	/* Enable, select 4 */
}

static void example_18_2_run(uint8_t model, bool swap, unsigned expect_pmis)
{
	struct p4_model m;
	unsigned first = swap ? 17 : 16, sampler = swap ? 16 : 17;

	model_new(&m, model, 1, true);
	example_18_2_intended_plan(&m, swap);

	instr(&m, 1, 3, 100);			/* LP1 before the 4096th: not sampled */
	instr(&m, 0, 3, 4095);
	instr(&m, 1, 0, 7);
	assert_false(p4_model_running(&m, sampler));
	assert_int_equal(ctr(&m, sampler), NEG(9));
	assert_false(cccr(&m, first) & CCCR_OVF);

	instr(&m, 0, 3, 1);			/* LP0's 4096th */
	assert_true(cccr(&m, first) & CCCR_OVF);
	assert_true(p4_model_running(&m, sampler));
	instr(&m, 0, 3, 50);			/* LP0 no longer matters to the sampler */
	assert_int_equal(ctr(&m, sampler), NEG(9));
	instr(&m, 1, 3, 1);
	assert_int_equal(ctr(&m, sampler), NEG(8));
	instr(&m, 1, 0, 8);			/* 9 LP1 instructions: overflow */
	assert_true(cccr(&m, sampler) & CCCR_OVF);
	assert_int_equal(pmis.n, 0);
	instr(&m, 1, 3, 1);			/* the 10th: PMI, to LP0 (OVF_PMI_T0) */
	assert_int_equal(pmis.n, expect_pmis);
	assert_int_equal(m.pmi_suppressed, 1 - expect_pmis);
	if (expect_pmis)
		assert_int_equal(pmis.lp[0], 0);
}

static void example_18_2_intended(void **state)
{
	(void)state;
	example_18_2_run(4, false, 1);		/* 0F_04: CASCNT4INTO5 */
	example_18_2_run(4, true, 1);		/* 0F_04: CASCNT5INTO4 */
	example_18_2_run(6, false, 1);
	/* 0F_02: same counts, but no PMI in extended-cascade mode (erratum). */
	example_18_2_run(2, false, 0);
	example_18_2_run(2, true, 0);
}

/*
 * Example 18-2 as printed, on 0F_04 with HT. Counter 16 selects CRU_ESCR0
 * (IQ_CCCR4 = 00039000H, select 4; PMU reference 3.1), which step 2 made
 * LP1-qualified instr_retired; CRU_ESCR2 (step 5) is selected by nobody and
 * select 2 there is machine_clear. FFFFF000H as a 64-bit write leaves bits
 * 39:32 zero, so counter 16 is 00_FFFF_F000H, 2^40 - 2^32 + 4096 events
 * from overflow rather than 4096.
 */
static void example_18_2_printed_program(struct p4_model *m, uint64_t ctr16)
{
	wr(m, MSR_P4_COUNTER_BASE + 12, 0);
	wr(m, MSR_CRU_ESCR0, 0x04000603);
	wr(m, MSR_P4_CCCR_BASE + 12, 0x04038800);
	wr(m, MSR_P4_COUNTER_BASE + 16, ctr16);
	wr(m, MSR_CRU_ESCR2, 0x0400060c);
	wr(m, MSR_P4_CCCR_BASE + 16, 0x00039000);
}

static void example_18_2_as_printed(void **state)
{
	struct p4_model m;

	(void)state;
	model_new(&m, 4, 1, true);
	example_18_2_printed_program(&m, 0xfffff000);
	assert_int_equal(ctr(&m, 16), 0x00fffff000);

	instr(&m, 0, 3, 4096);			/* LP0's instructions: not seen */
	assert_int_equal(ctr(&m, 16), 0x00fffff000);
	assert_int_equal(p4_model_event(&m, 0, 3, P4_EV_MACHINE_CLEAR,
					P4_EVMASK(P4_MACHINE_CLEAR_CLEAR), 10), 0);
	assert_int_equal(ctr(&m, 16), 0x00fffff000);

	instr(&m, 1, 3, 4096);			/* LP1's are counted, no overflow */
	assert_int_equal(ctr(&m, 16), 0x0100000000);
	assert_false(cccr(&m, 16) & CCCR_OVF);
	assert_false(p4_model_running(&m, 12));

	/* Even with -4096 in 40 bits, it is LP1's 4096th that starts counter 12, */
	model_new(&m, 4, 1, true);
	example_18_2_printed_program(&m, NEG(4096));
	instr(&m, 0, 3, 5000);
	assert_false(p4_model_running(&m, 12));
	instr(&m, 1, 3, 4096);
	assert_true(cccr(&m, 16) & CCCR_OVF);
	assert_true(p4_model_running(&m, 12));
	/* and counter 12 then counts LP1 (CRU_ESCR0 again), never LP0. */
	instr(&m, 0, 3, 30);
	instr(&m, 1, 3, 3);
	assert_int_equal(ctr(&m, 12), 3);
}

/*
 * Table 18-66, transcribed. Rows T0_OS/T0_USR, columns T1_OS/T1_USR, both in
 * the table's order 00, 01, 11, 10. Each cell: which of T0 in OS, T0 in USR,
 * T1 in OS, T1 in USR count. Cell (01, 10) is printed "(a) T0 in OS or
 * (b) T1 in OS"; with T0_OS = 0 that contradicts the rule stated above the
 * table ("depends only on the setting of the T0_USR and T0_OS flags") and
 * repeats cell (10, 10), so this test follows the rule: T0 in USR or T1 in OS.
 */
enum { T0OS = 1, T0USR = 2, T1OS = 4, T1USR = 8 };
static const uint8_t pair_order[4][2] = { { 0, 0 }, { 0, 1 }, { 1, 1 }, { 1, 0 } };	/* OS, USR */
static const uint8_t table_18_66[4][4] = {
	/* T0 00 */ { 0, T1USR, T1OS | T1USR, T1OS },
	/* T0 01 */ { T0USR, T0USR | T1USR, T0USR | T1OS | T1USR, T0USR | T1OS },
	/* T0 11 */ { T0OS | T0USR, T0OS | T0USR | T1USR, T0OS | T0USR | T1OS | T1USR,
		      T0OS | T0USR | T1OS },
	/* T0 10 */ { T0OS, T0OS | T1USR, T0OS | T1OS | T1USR, T0OS | T1OS },
};

static void table_18_66_all_cells(void **state)
{
	(void)state;
	for (unsigned r = 0; r < 4; r++) {
		for (unsigned c = 0; c < 4; c++) {
			struct p4_model m;
			uint64_t bits = 0, expect = 0;
			uint8_t cell = table_18_66[r][c];

			if (pair_order[r][0]) bits |= ESCR_T0_OS;
			if (pair_order[r][1]) bits |= ESCR_T0_USR;
			if (pair_order[c][0]) bits |= ESCR_T1_OS;
			if (pair_order[c][1]) bits |= ESCR_T1_USR;
			model_new(&m, 3, 4, true);
			wr(&m, MSR_CRU_ESCR0, escr_val(0x02, NBOGUSNTAG, bits));
			wr(&m, MSR_P4_CCCR_BASE + 12, cccr_val(4, CCCR_ENABLE));
			instr(&m, 0, 0, 1);		/* T0 in OS */
			instr(&m, 0, 3, 10);		/* T0 in USR (CPL 1-3) */
			instr(&m, 0, 1, 20);
			instr(&m, 1, 0, 100);		/* T1 in OS */
			instr(&m, 1, 3, 1000);		/* T1 in USR */
			instr(&m, 1, 2, 2000);
			expect += (cell & T0OS) ? 1 : 0;
			expect += (cell & T0USR) ? 30 : 0;
			expect += (cell & T1OS) ? 100 : 0;
			expect += (cell & T1USR) ? 3000 : 0;
			assert_int_equal(ctr(&m, 12), expect);
		}
	}
}

/*
 * Table 18-67 ("... for Non-logical-Processor-specific (TI) Events"; Table
 * 18-30 in the 2008 editions), transcribed cell by cell as printed, in the
 * same row/column order as Table 18-66 above. A cell is what it counts
 * "while": Z zero count, U "(a) T0 in USR or (b) T1 in USR", O "(a) T0 in
 * OS or (b) T1 in OS", A "irrespective of CPL, T0, T1". (The current
 * edition labels the last row "T0_OS/T0_USR = 0"; by the row order it is 10.)
 */
enum { Z, U, O, A };
static const uint8_t table_18_67[4][4] = {
	/* T0 00 */ { Z, U, A, O },
	/* T0 01 */ { U, U, A, A },
	/* T0 11 */ { A, A, A, A },
	/* T0 10 */ { O, A, A, O },
};

/* Does a cell count while T0 is at CPL c0 and T1 at CPL c1? */
static bool ti_cell_counts(uint8_t cell, unsigned c0, unsigned c1)
{
	switch (cell) {
	case U: return c0 != 0 || c1 != 0;
	case O: return c0 == 0 || c1 == 0;
	case A: return true;
	default: return false;
	}
}

/*
 * page_walk_type DTMISS (TI in p4_events[]: PMH_ESCR0, select 01H, counter
 * 0). For each cell and each of the four CPL combinations of T0 and T1, an
 * event caused by LP0 and one caused by LP1 - the table does not depend on
 * which LP caused it, and a TS event would (instr_retired, the same cells,
 * shows the difference at the end).
 */
static void table_18_67_all_cells(void **state)
{
	static const unsigned cpls[2] = { 0, 3 };
	const struct p4_event_desc *d = &p4_events[P4_EV_PAGE_WALK_TYPE];

	(void)state;
	assert_true(d->flags & P4_EVF_TI);
	assert_int_equal(d->escrs[0], P4_PMH_ESCR0);
	for (unsigned r = 0; r < 4; r++) {
		for (unsigned c = 0; c < 4; c++) {
			struct p4_model m;
			uint64_t bits = 0, expect = 0, weight = 1;

			if (pair_order[r][0]) bits |= ESCR_T0_OS;
			if (pair_order[r][1]) bits |= ESCR_T0_USR;
			if (pair_order[c][0]) bits |= ESCR_T1_OS;
			if (pair_order[c][1]) bits |= ESCR_T1_USR;
			model_new(&m, 3, 4, true);
			wr(&m, p4_escrs[P4_PMH_ESCR0].msr, escr_val(d->event_select, 1, bits));
			wr(&m, MSR_P4_CCCR_BASE + 0, cccr_val(d->escr_select, CCCR_ENABLE));
			for (unsigned s0 = 0; s0 < 2; s0++) {
				for (unsigned s1 = 0; s1 < 2; s1++) {
					assert_int_equal(p4_model_set_cpl(&m, 0, cpls[s0]), 0);
					assert_int_equal(p4_model_set_cpl(&m, 1, cpls[s1]), 0);
					for (unsigned lp = 0; lp < 2; lp++, weight *= 3) {
						assert_int_equal(p4_model_event(&m, lp, P4_MODEL_CPL_CURRENT,
										P4_EV_PAGE_WALK_TYPE, 1, weight), 0);
						if (ti_cell_counts(table_18_67[r][c], cpls[s0], cpls[s1]))
							expect += weight;
					}
				}
			}
			assert_int_equal(ctr(&m, 0), expect);
		}
	}
}

/*
 * The difference in one cell: T0_USR alone. instr_retired (TS) counts only
 * LP0's user-mode instructions; page_walk_type (TI) also counts LP1's walk
 * while LP1 is in USR and LP0 in OS ("T1 in USR"), and LP0's kernel walk
 * while LP1 is in USR.
 */
static void table_18_67_differs_from_18_66(void **state)
{
	struct p4_model m;
	const struct p4_event_desc *d = &p4_events[P4_EV_PAGE_WALK_TYPE];

	(void)state;
	model_new(&m, 3, 4, true);
	wr(&m, p4_escrs[P4_PMH_ESCR0].msr, escr_val(d->event_select, 1, ESCR_T0_USR));
	wr(&m, MSR_P4_CCCR_BASE + 0, cccr_val(d->escr_select, CCCR_ENABLE));
	wr(&m, MSR_CRU_ESCR0, escr_val(0x02, NBOGUSNTAG, ESCR_T0_USR));
	wr(&m, MSR_P4_CCCR_BASE + 12, cccr_val(4, CCCR_ENABLE));
	assert_int_equal(p4_model_set_cpl(&m, 0, 0), 0);
	assert_int_equal(p4_model_set_cpl(&m, 1, 3), 0);
	instr(&m, 1, P4_MODEL_CPL_CURRENT, 5);		/* T1 in USR: TS ignores it */
	instr(&m, 0, P4_MODEL_CPL_CURRENT, 7);		/* T0 in OS: TS ignores it */
	assert_int_equal(p4_model_event(&m, 1, P4_MODEL_CPL_CURRENT, P4_EV_PAGE_WALK_TYPE, 1, 5), 0);
	assert_int_equal(p4_model_event(&m, 0, P4_MODEL_CPL_CURRENT, P4_EV_PAGE_WALK_TYPE, 1, 7), 0);
	assert_int_equal(ctr(&m, 12), 0);
	assert_int_equal(ctr(&m, 0), 12);
	assert_int_equal(p4_model_set_cpl(&m, 1, 0), 0);	/* both in OS: nothing */
	assert_int_equal(p4_model_event(&m, 1, P4_MODEL_CPL_CURRENT, P4_EV_PAGE_WALK_TYPE, 1, 100), 0);
	assert_int_equal(ctr(&m, 0), 12);
}

/* Without HT there is no T1: a TI event counts by T0's bits and LP0's CPL alone. */
static void table_18_67_without_ht(void **state)
{
	struct p4_model m;
	const struct p4_event_desc *d = &p4_events[P4_EV_PAGE_WALK_TYPE];

	(void)state;
	model_new(&m, 3, 4, false);
	wr(&m, p4_escrs[P4_PMH_ESCR0].msr, escr_val(d->event_select, 1, ESCR_T0_USR));
	wr(&m, MSR_P4_CCCR_BASE + 0, cccr_val(d->escr_select, CCCR_ENABLE));
	assert_int_equal(p4_model_event(&m, 0, 0, P4_EV_PAGE_WALK_TYPE, 1, 4), 0);
	assert_int_equal(p4_model_event(&m, 0, 3, P4_EV_PAGE_WALK_TYPE, 1, 9), 0);
	assert_int_equal(ctr(&m, 0), 9);
}

/* Compare counter 12 on execution_event (CRU_ESCR2, select 5), LP0 OS+USR. */
static void cmp_setup(struct p4_model *m, uint64_t flags, unsigned thr)
{
	model_new(m, 4, 1, false);
	wr(m, MSR_CRU_ESCR2, escr_val(0x0c, 0xff, ESCR_T0_OS | ESCR_T0_USR));
	wr(m, MSR_P4_CCCR_BASE + 12, cccr_val(5, CCCR_ENABLE | CCCR_COMPARE | flags |
					       field_prep(CCCR_THRESHOLD, thr)));
}

/* One cycle per entry: that many events, then the cycle closes. */
static uint64_t cmp_run(struct p4_model *m, const unsigned *in, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (in[i])
			assert_int_equal(p4_model_event(m, 0, 3, P4_EV_EXECUTION_EVENT,
						P4_EVMASK(P4_EXECUTION_EVENT_NBOGUS0), in[i]), 0);
		p4_model_tick(m, 1);
	}
	return ctr(m, 12);
}

/*
 * SDM 18.15.5.2 and the CCCR field texts: with Compare, a cycle whose input
 * is > threshold (Complement clear) or <= threshold (set) adds exactly 1;
 * Edge adds 1 only on a false-to-true change of that comparison.
 */
static void threshold_complement_edge(void **state)
{
	static const unsigned in[] = { 0, 1, 2, 3, 4, 3, 0, 5 };
	struct p4_model m;

	(void)state;
	cmp_setup(&m, 0, 2);			/* > 2: cycles 3, 4, 3, 5 */
	assert_int_equal(cmp_run(&m, in, 8), 4);
	cmp_setup(&m, CCCR_COMPLEMENT, 2);	/* <= 2: 0, 1, 2, 0 */
	assert_int_equal(cmp_run(&m, in, 8), 4);
	cmp_setup(&m, CCCR_EDGE, 2);		/* F F F T T T F T: two rises */
	assert_int_equal(cmp_run(&m, in, 8), 2);
	cmp_setup(&m, CCCR_EDGE | CCCR_COMPLEMENT, 2);	/* T T T F F F T F */
	assert_int_equal(cmp_run(&m, in, 8), 2);

	/* The input is 0..15 (four input lines): 20 events read as 15. */
	cmp_setup(&m, 0, 15);
	assert_int_equal(cmp_run(&m, (const unsigned[]){ 20 }, 1), 0);
	cmp_setup(&m, CCCR_COMPLEMENT, 15);
	assert_int_equal(cmp_run(&m, (const unsigned[]){ 20 }, 1), 1);

	/* Without Compare, threshold and Edge do nothing: each event counts. */
	model_new(&m, 4, 1, false);
	wr(&m, MSR_CRU_ESCR2, escr_val(0x0c, 0xff, ESCR_T0_OS | ESCR_T0_USR));
	wr(&m, MSR_P4_CCCR_BASE + 12, cccr_val(5, CCCR_ENABLE | CCCR_EDGE |
						field_prep(CCCR_THRESHOLD, 9)));
	assert_int_equal(cmp_run(&m, in, 8), 18);
}

/*
 * Complement with threshold 15 counts every qualified cycle (the old Linux
 * watchdog clock, PMU reference 2.4/9.12: CRU_ESCR0 7E00000CH, IQ_CCCR0
 * 04FF9000H). Cycles qualify through the ESCR's CPL bits (Table 18-66
 * "counts while T0 in USR").
 */
static void complement_counts_idle_cycles(void **state)
{
	struct p4_model m;

	(void)state;
	model_new(&m, 4, 1, false);
	wr(&m, MSR_CRU_ESCR0, 0x7e00000c);
	wr(&m, MSR_P4_CCCR_BASE + 12, 0x04ff9000);
	p4_model_tick(&m, 1000);
	assert_int_equal(ctr(&m, 12), 1000);

	/* USR only: cycles at CPL 0 do not count. */
	wr(&m, MSR_P4_CCCR_BASE + 12, 0);
	wr(&m, MSR_CRU_ESCR0, 0x7e000004);
	wr(&m, MSR_P4_CCCR_BASE + 12, 0x04ff9000);
	assert_int_equal(p4_model_set_cpl(&m, 0, 0), 0);
	p4_model_tick(&m, 500);
	assert_int_equal(ctr(&m, 12), 1000);
	assert_int_equal(p4_model_set_cpl(&m, 0, 3), 0);
	p4_model_tick(&m, 500);
	assert_int_equal(ctr(&m, 12), 1500);

	/* Long runs wrap exactly once: preset -10, 25 cycles -> OVF, value 15. */
	wr(&m, MSR_P4_COUNTER_BASE + 12, NEG(10));
	p4_model_tick(&m, 25);
	assert_int_equal(ctr(&m, 12), 15);
	assert_true(cccr(&m, 12) & CCCR_OVF);
	assert_int_equal(m.overflows[12], 1);
	assert_int_equal(pmis.n, 1);		/* OVF_PMI_T0, on the 11th cycle */
}

/*
 * Active thread (SDM HT CCCR text): 00 none - neither LP active; 01 single -
 * exactly one; 10 both; 11 any - at least one. Idle-cycle clock on both
 * threads' bits, 10 cycles per LP state.
 */
static void active_thread_field(void **state)
{
	static const bool act[4][2] = { { false, false }, { true, false }, { false, true },
					{ true, true } };
	static const bool expect[4][4] = {	/* [field][state] */
		[CCCR_AT_NONE] = { true, false, false, false },
		[CCCR_AT_SINGLE] = { false, true, true, false },
		[CCCR_AT_BOTH] = { false, false, false, true },
		[CCCR_AT_ANY] = { false, true, true, true },
	};

	(void)state;
	for (unsigned at = 0; at < 4; at++) {
		for (unsigned s = 0; s < 4; s++) {
			struct p4_model m;

			model_new(&m, 3, 4, true);
			wr(&m, MSR_CRU_ESCR0, 0x7e00000f);
			wr(&m, MSR_P4_CCCR_BASE + 12, (0x04ff9000 & ~CCCR_ACTIVE_THREAD) |
				field_prep(CCCR_ACTIVE_THREAD, at));
			p4_model_set_active(&m, 0, act[s][0]);
			p4_model_set_active(&m, 1, act[s][1]);
			p4_model_tick(&m, 10);
			assert_int_equal(ctr(&m, 12), expect[at][s] ? 10 : 0);
		}
	}
}

static void active_thread_events(void **state)
{
	struct p4_model m;

	(void)state;
	model_new(&m, 3, 4, true);
	wr(&m, MSR_CRU_ESCR0, escr_val(0x02, NBOGUSNTAG, ESCR_T0_OS | ESCR_T0_USR));
	wr(&m, MSR_P4_CCCR_BASE + 12, (cccr_val(4, CCCR_ENABLE) & ~CCCR_ACTIVE_THREAD) |
		field_prep(CCCR_ACTIVE_THREAD, CCCR_AT_BOTH));
	p4_model_set_active(&m, 1, false);
	instr(&m, 0, 3, 5);
	assert_int_equal(ctr(&m, 12), 0);
	p4_model_set_active(&m, 1, true);
	instr(&m, 0, 3, 5);
	assert_int_equal(ctr(&m, 12), 5);
}

/* FORCE_OVF: "forces a counter overflow on every counter increment". */
static void force_ovf(void **state)
{
	struct p4_model m;

	(void)state;
	model_new(&m, 4, 1, false);
	wr(&m, MSR_CRU_ESCR0, escr_val(0x02, NBOGUSNTAG, ESCR_T0_OS | ESCR_T0_USR));
	wr(&m, MSR_P4_COUNTER_BASE + 12, 100);
	wr(&m, MSR_P4_CCCR_BASE + 12, cccr_val(4, CCCR_ENABLE | CCCR_FORCE_OVF |
						CCCR_OVF_PMI_T0));
	instr(&m, 0, 3, 1);
	assert_true(cccr(&m, 12) & CCCR_OVF);
	assert_int_equal(ctr(&m, 12), 101);
	assert_int_equal(pmis.n, 0);		/* PMI on the next count */
	instr(&m, 0, 3, 4);
	assert_int_equal(m.overflows[12], 5);
	assert_int_equal(pmis.n, 4);
	assert_int_equal(ctr(&m, 12), 105);
}

/*
 * 40-bit counters (PMU reference 1.1, 6); sticky OVF (SDM: "must be explicitly
 * cleared by software"); PMI timing (SDM 18.18.6.8: preset -99, "overflow
 * after it counts 99 events and generate an interrupt on the next (100th)").
 */
static void wrap_sticky_ovf_and_pmi_timing(void **state)
{
	struct p4_model m;
	uint64_t cfg = cccr_val(4, CCCR_ENABLE | CCCR_OVF_PMI_T0);

	(void)state;
	model_new(&m, 4, 1, false);
	wr(&m, MSR_P4_COUNTER_BASE + 12, UINT64_C(0x123456789abcdef0));
	assert_int_equal(ctr(&m, 12), UINT64_C(0x789abcdef0));

	wr(&m, MSR_CRU_ESCR0, escr_val(0x02, NBOGUSNTAG, ESCR_T0_OS | ESCR_T0_USR));
	wr(&m, MSR_P4_COUNTER_BASE + 12, NEG(99));
	assert_int_equal(ctr(&m, 12), UINT64_C(0xffffffff9d));
	wr(&m, MSR_P4_CCCR_BASE + 12, cfg);
	instr(&m, 0, 3, 98);
	assert_int_equal(ctr(&m, 12), P4_COUNTER_MASK);
	assert_false(cccr(&m, 12) & CCCR_OVF);
	instr(&m, 0, 3, 1);			/* 99th: FF_FFFF_FFFFH -> 0 */
	assert_int_equal(ctr(&m, 12), 0);
	assert_true(cccr(&m, 12) & CCCR_OVF);
	assert_true(p4_model_pmi_asserted(&m, 0));
	assert_int_equal(pmis.n, 0);
	instr(&m, 0, 3, 1);			/* 100th: the PMI */
	assert_int_equal(pmis.n, 1);
	instr(&m, 0, 3, 1000);
	assert_int_equal(pmis.n, 1);
	assert_true(cccr(&m, 12) & CCCR_OVF);	/* sticky */
	wr(&m, MSR_P4_CCCR_BASE + 12, cfg);	/* software clears it */
	assert_false(cccr(&m, 12) & CCCR_OVF);
	assert_false(p4_model_pmi_asserted(&m, 0));
	assert_int_equal(ctr(&m, 12), 1001);

	/* A counter write (a new period) cancels a PMI still owed. */
	wr(&m, MSR_P4_COUNTER_BASE + 12, NEG(1));
	instr(&m, 0, 3, 1);
	assert_true(cccr(&m, 12) & CCCR_OVF);
	wr(&m, MSR_P4_COUNTER_BASE + 12, NEG(5));
	instr(&m, 0, 3, 1);
	assert_int_equal(pmis.n, 1);
}

/* OVF_PMI_T0/T1 route the PMI to LP0/LP1, both when both are set (PMU reference 6). */
/*
 * Skid S: the PMI comes on the (S + 1)-th event after the overflow, in one
 * batch or event by event alike; the counter has counted them; a skid
 * longer than the period keeps the first PMI's event (FORCE_OVF overflows
 * on every event and still interrupts); a counter write still cancels it.
 */
static void pmi_skid(void **state)
{
	struct p4_model m;
	uint64_t cfg = cccr_val(4, CCCR_ENABLE | CCCR_OVF_PMI_T0);

	(void)state;
	for (unsigned batch = 0; batch < 2; batch++) {
		model_new(&m, 4, 1, false);
		assert_int_equal(p4_model_set_skid(&m, 32), 0);
		wr(&m, MSR_CRU_ESCR0, escr_val(0x02, NBOGUSNTAG, ESCR_T0_OS | ESCR_T0_USR));
		wr(&m, MSR_P4_COUNTER_BASE + 12, NEG(99));
		wr(&m, MSR_P4_CCCR_BASE + 12, cfg);
		instr(&m, 0, 3, 99);			/* the overflow */
		assert_true(cccr(&m, 12) & CCCR_OVF);
		if (batch) {
			instr(&m, 0, 3, 32);
			assert_int_equal(pmis.n, 0);
			instr(&m, 0, 3, 50);		/* the 33rd event after it is in this batch */
		} else {
			for (unsigned i = 0; i < 32; i++)
				instr(&m, 0, 3, 1);
			assert_int_equal(pmis.n, 0);
			instr(&m, 0, 3, 1);		/* the 33rd */
			assert_int_equal(pmis.n, 1);
			instr(&m, 0, 3, 49);
		}
		assert_int_equal(pmis.n, 1);
		assert_int_equal(ctr(&m, 12), 82);	/* nothing lost to the split */
	}
	/* FORCE_OVF: every event overflows; the PMI still comes, 5 events on */
	model_new(&m, 4, 1, false);
	assert_int_equal(p4_model_set_skid(&m, 4), 0);
	wr(&m, MSR_CRU_ESCR0, escr_val(0x02, NBOGUSNTAG, ESCR_T0_OS | ESCR_T0_USR));
	wr(&m, MSR_P4_CCCR_BASE + 12, cfg | CCCR_FORCE_OVF);
	instr(&m, 0, 3, 5);
	assert_int_equal(pmis.n, 0);
	instr(&m, 0, 3, 1);
	assert_int_equal(pmis.n, 1);
	/* a counter write cancels the PMI still owed, skid or not */
	wr(&m, MSR_P4_CCCR_BASE + 12, cfg);
	wr(&m, MSR_P4_COUNTER_BASE + 12, NEG(1));
	instr(&m, 0, 3, 1);
	wr(&m, MSR_P4_COUNTER_BASE + 12, NEG(50));
	instr(&m, 0, 3, 10);
	assert_int_equal(pmis.n, 1);
	assert_int_equal(p4_model_set_skid(&m, P4_MODEL_SKID_MAX + 1), -1);
	assert_int_equal(m.skid, 4);
}

static void pmi_routing(void **state)
{
	static const uint64_t bits[3] = { CCCR_OVF_PMI_T0, CCCR_OVF_PMI_T1,
					  CCCR_OVF_PMI_T0 | CCCR_OVF_PMI_T1 };
	struct p4_model m;

	(void)state;
	for (unsigned i = 0; i < 3; i++) {
		model_new(&m, 4, 1, true);
		wr(&m, MSR_CRU_ESCR1, escr_val(0x02, NBOGUSNTAG, ESCR_T1_OS | ESCR_T1_USR));
		wr(&m, MSR_P4_COUNTER_BASE + 14, NEG(1));
		wr(&m, MSR_P4_CCCR_BASE + 14, cccr_val(4, CCCR_ENABLE | bits[i]));
		instr(&m, 1, 3, 2);
		assert_int_equal(m.pmi_count[0], (bits[i] & CCCR_OVF_PMI_T0) ? 1 : 0);
		assert_int_equal(m.pmi_count[1], (bits[i] & CCCR_OVF_PMI_T1) ? 1 : 0);
		assert_int_equal(pmis.n, i == 2 ? 2 : 1);
	}
}

/*
 * Cascade-mode PMI erratum (SDM 18.15.5.7): no PMI from a counter in cascade
 * mode on 0F_02 and on 0F_00/0F_01 steppings above 09H; OVF still sets.
 */
static unsigned cascade_pmis(uint8_t model, uint8_t stepping)
{
	struct p4_model m;

	model_new(&m, model, stepping, false);
	wr(&m, MSR_CRU_ESCR0, escr_val(0x02, NBOGUSNTAG, ESCR_T0_OS | ESCR_T0_USR));
	wr(&m, MSR_CRU_ESCR1, escr_val(0x02, NBOGUSNTAG, ESCR_T0_OS | ESCR_T0_USR));
	wr(&m, MSR_P4_COUNTER_BASE + 12, NEG(1));
	wr(&m, MSR_P4_COUNTER_BASE + 14, NEG(2));
	wr(&m, MSR_P4_CCCR_BASE + 14, cccr_val(4, CCCR_CASCADE | CCCR_OVF_PMI_T0));
	wr(&m, MSR_P4_CCCR_BASE + 12, cccr_val(4, CCCR_ENABLE));
	instr(&m, 0, 3, 4);	/* 12 overflows at 1; 14 at 3, PMI due at 4 */
	assert_true(cccr(&m, 14) & CCCR_OVF);
	return pmis.n;
}

static void cascade_pmi_erratum(void **state)
{
	(void)state;
	assert_int_equal(cascade_pmis(2, 7), 0);
	assert_int_equal(cascade_pmis(1, 0x0a), 0);
	assert_int_equal(cascade_pmis(0, 0x0a), 0);
	assert_int_equal(cascade_pmis(1, 0x09), 1);
	assert_int_equal(cascade_pmis(4, 1), 1);
	assert_int_equal(cascade_pmis(3, 4), 1);
	assert_int_equal(cascade_pmis(6, 5), 1);
}

/*
 * An event counts only through an ESCR of its own unit holding its event
 * select, with an intersecting mask (PMU reference 2.2 filter order). Select 2
 * is instr_retired on CRU_ESCR0/1 but machine_clear on CRU_ESCR2/3 (4.2).
 */
static void escr_matching(void **state)
{
	struct p4_model m;
	uint16_t bogus = P4_EVMASK(P4_INSTR_RETIRED_BOGUSNTAG);

	(void)state;
	model_new(&m, 4, 1, false);
	wr(&m, MSR_CRU_ESCR0, escr_val(0x02, NBOGUSNTAG, ESCR_T0_OS | ESCR_T0_USR));
	wr(&m, MSR_CRU_ESCR2, escr_val(0x02, P4_EVMASK(P4_MACHINE_CLEAR_CLEAR),
				       ESCR_T0_OS | ESCR_T0_USR));
	wr(&m, MSR_P4_CCCR_BASE + 12, cccr_val(4, CCCR_ENABLE));	/* CRU_ESCR0 */
	wr(&m, MSR_P4_CCCR_BASE + 13, cccr_val(5, CCCR_ENABLE));	/* CRU_ESCR2 */
	assert_int_equal(p4_model_event(&m, 0, 3, P4_EV_UOPS_RETIRED, 1, 7), 0);
	assert_int_equal(p4_model_event(&m, 0, 3, P4_EV_MISPRED_BRANCH_RETIRED, 1, 7), 0);
	assert_int_equal(p4_model_event(&m, 0, 3, P4_EV_INSTR_RETIRED, bogus, 7), 0);
	assert_int_equal(ctr(&m, 12), 0);
	assert_int_equal(ctr(&m, 13), 0);
	instr(&m, 0, 3, 3);
	assert_int_equal(p4_model_event(&m, 0, 3, P4_EV_INSTR_RETIRED, NBOGUSNTAG | bogus, 2), 0);
	assert_int_equal(ctr(&m, 12), 5);
	assert_int_equal(ctr(&m, 13), 0);
	assert_int_equal(p4_model_event(&m, 0, 0, P4_EV_MACHINE_CLEAR,
					P4_EVMASK(P4_MACHINE_CLEAR_CLEAR), 4), 0);
	assert_int_equal(ctr(&m, 12), 5);
	assert_int_equal(ctr(&m, 13), 4);
	/* uop_type only tags uops: nothing ever counts it (PMU reference 4.2). */
	wr(&m, 0x3bc, escr_val(0x02, 0x6, ESCR_T0_OS | ESCR_T0_USR));	/* RAT_ESCR0 */
	wr(&m, MSR_P4_CCCR_BASE + 16, cccr_val(2, CCCR_ENABLE));
	assert_int_equal(p4_model_event(&m, 0, 3, P4_EV_UOP_TYPE, 0x6, 9), 0);
	assert_int_equal(ctr(&m, 16), 0);
}

/* PMU reference 1.2: IQ_ESCR0/1 only on models 0-2; 3BFH never exists. */
static void nonexistent_msrs(void **state)
{
	struct p4_model m;
	uint64_t v = 77;

	(void)state;
	for (uint8_t model = 0; model <= 6; model++) {
		bool iq = model <= 2;

		if (model == 5)
			continue;
		model_new(&m, model, 1, false);
		assert_int_equal(msr_bus_read(&m.bus, MSR_IQ_ESCR0, &v), iq ? 0 : MSR_BUS_EFAULT);
		assert_int_equal(msr_bus_write(&m.bus, MSR_IQ_ESCR0 + 1, 0), iq ? 0 : MSR_BUS_EFAULT);
		assert_int_equal(msr_bus_read(&m.bus, MSR_SSU_ESCR1, &v), MSR_BUS_EFAULT);
		assert_int_equal(msr_bus_write(&m.bus, MSR_SSU_ESCR1, 0), MSR_BUS_EFAULT);
		assert_int_equal(msr_bus_read(&m.bus, 0x3c6, &v), MSR_BUS_EFAULT);
		assert_int_equal(msr_bus_read(&m.bus, 0x107cc, &v), MSR_BUS_EFAULT);
		assert_int_equal(msr_bus_read(&m.bus, 0x312, &v), MSR_BUS_EFAULT);
	}
	v = 77;
	model_new(&m, 4, 1, false);
	assert_int_equal(msr_bus_read(&m.bus, MSR_IQ_ESCR0, &v), MSR_BUS_EFAULT);
	assert_int_equal(v, 77);		/* a failed read leaves *value alone */
	assert_int_equal(m.caps.nescr, 43);

	/* Counter 12 selecting IQ_ESCR0 (select 0) on model 4 counts nothing. */
	wr(&m, MSR_P4_CCCR_BASE + 12, cccr_val(0, CCCR_ENABLE | CCCR_COMPARE | CCCR_COMPLEMENT));
	p4_model_tick(&m, 10);
	assert_int_equal(ctr(&m, 12), 0);
}

/* Reserved bits (PMU reference 2.1, 2.2, 5.3; Table 18-65). Failed writes change nothing. */
static void reserved_bits(void **state)
{
	struct p4_model m;

	(void)state;
	model_new(&m, 4, 1, true);
	wr(&m, MSR_CRU_ESCR0, 0x0400060c);
	assert_int_equal(msr_bus_write(&m.bus, MSR_CRU_ESCR0, 0x8400060c), MSR_BUS_EFAULT);
	assert_int_equal(msr_bus_write(&m.bus, MSR_CRU_ESCR0, BIT(32) | 0x0c), MSR_BUS_EFAULT);
	assert_int_equal(rd(&m, MSR_CRU_ESCR0), 0x0400060c);
	assert_int_equal(msr_bus_write(&m.bus, MSR_P4_CCCR_BASE + 12, cccr_val(4, BIT(0))),
			 MSR_BUS_EFAULT);
	assert_int_equal(msr_bus_write(&m.bus, MSR_P4_CCCR_BASE + 12, cccr_val(4, BIT(28))),
			 MSR_BUS_EFAULT);
	assert_int_equal(cccr(&m, 12), 0);
	/* Bit 11: "MSR_IQ_CCCR1|2:11 Reserved"; no meaning outside the IQ block. */
	assert_int_equal(msr_bus_write(&m.bus, MSR_P4_CCCR_BASE + 13, CCCR_EXT_CASCADE),
			 MSR_BUS_EFAULT);
	assert_int_equal(msr_bus_write(&m.bus, MSR_P4_CCCR_BASE + 14, CCCR_EXT_CASCADE),
			 MSR_BUS_EFAULT);
	assert_int_equal(msr_bus_write(&m.bus, MSR_P4_CCCR_BASE + 0, CCCR_EXT_CASCADE),
			 MSR_BUS_EFAULT);
	for (unsigned n = 12; n < 18; n++)
		if (n != 13 && n != 14)
			wr(&m, MSR_P4_CCCR_BASE + n, CCCR_EXT_CASCADE);
	/* ... and reserved everywhere on a part without extended cascading. */
	model_new(&m, 1, 3, true);
	assert_int_equal(msr_bus_write(&m.bus, MSR_P4_CCCR_BASE + 12, 0x04038800),
			 MSR_BUS_EFAULT);
	/* PEBS_ENABLE: 13, 14, 23:17, 63:27 reserved. */
	wr(&m, MSR_PEBS_ENABLE, 0x07018001);
	assert_int_equal(msr_bus_write(&m.bus, MSR_PEBS_ENABLE, BIT(13)), MSR_BUS_EFAULT);
	assert_int_equal(msr_bus_write(&m.bus, MSR_PEBS_ENABLE, BIT(27)), MSR_BUS_EFAULT);
	assert_int_equal(rd(&m, MSR_PEBS_ENABLE), 0x07018001);
}

/* Without HT: T1 bits, OVF_PMI_T1 and OTH_THR are reserved; 17:16 must be 11b. */
static void non_ht_rules(void **state)
{
	struct p4_model m;

	(void)state;
	model_new(&m, 2, 9, false);
	assert_int_equal(msr_bus_write(&m.bus, MSR_CRU_ESCR0, 0x04000603), MSR_BUS_EFAULT);
	assert_int_equal(msr_bus_write(&m.bus, MSR_P4_CCCR_BASE + 12,
				       cccr_val(4, CCCR_OVF_PMI_T1)), MSR_BUS_EFAULT);
	assert_int_equal(msr_bus_write(&m.bus, MSR_PEBS_ENABLE, PEBS_ENABLE_OTH_THR),
			 MSR_BUS_EFAULT);
	assert_int_equal(p4_model_event(&m, 1, 3, P4_EV_INSTR_RETIRED, NBOGUSNTAG, 1), -1);

	wr(&m, MSR_CRU_ESCR0, 0x0400060c);
	wr(&m, MSR_P4_CCCR_BASE + 12, 0);	/* the reset value is writable */
	wr(&m, MSR_P4_CCCR_BASE + 12, 0x00009000);	/* Enable, select 4, field 00b */
	instr(&m, 0, 3, 10);
	assert_int_equal(ctr(&m, 12), 0);
	wr(&m, MSR_P4_CCCR_BASE + 12, 0x00039000);	/* field 11b */
	instr(&m, 0, 3, 10);
	assert_int_equal(ctr(&m, 12), 10);
}

/* RDPMC (PMU reference 6; SDM 18.20 for 18-25): index n, bit 31 = low 32 bits. */
static void rdpmc(void **state)
{
	struct p4_model m;
	struct p4_model_config cfg = { .sig = { 0x0f, 6, 8 }, .uncore = true };
	uint64_t v = 5;

	(void)state;
	model_new(&m, 4, 1, false);
	wr(&m, MSR_P4_COUNTER_BASE + 12, UINT64_C(0xab12345678));
	assert_int_equal(p4_model_rdpmc(&m, 12, &v), 0);
	assert_int_equal(v, UINT64_C(0xab12345678));
	assert_int_equal(p4_model_rdpmc(&m, 12 | 0x80000000u, &v), 0);
	assert_int_equal(v, 0x12345678);
	assert_int_equal(p4_model_rdpmc(&m, 17, &v), 0);
	assert_int_equal(v, 0);
	v = 5;
	assert_int_equal(p4_model_rdpmc(&m, 18, &v), MSR_BUS_EFAULT);
	assert_int_equal(p4_model_rdpmc(&m, 0x40000000u, &v), MSR_BUS_EFAULT);
	assert_int_equal(v, 5);

	assert_int_equal(p4_model_init(&m, &cfg), 0);
	wr(&m, 0x107cc, UINT64_C(0x1234567800000042));
	assert_int_equal(p4_model_rdpmc(&m, 18, &v), 0);
	assert_int_equal(v, 0x42);
	assert_int_equal(p4_model_rdpmc(&m, 26, &v), MSR_BUS_EFAULT);
}

/*
 * Item 5, reserved bits: IA32_DS_AREA canonical on the IA-32e-capable
 * models (3, 4, 6), 32 bits on models 0-2; IA32_MISC_ENABLE bit 22 (Limit
 * CPUID MaxVal) only on models 3, 4, 6. A write that breaks it is #GP and
 * changes nothing.
 */
static void ds_area_and_misc_enable_reserved_bits(void **state)
{
	struct p4_model m;
	uint64_t v;

	(void)state;
	model_new(&m, 4, 1, false);
	wr(&m, MSR_IA32_DS_AREA, UINT64_C(0xffff800000001000));	/* canonical */
	wr(&m, MSR_IA32_DS_AREA, UINT64_C(0x00007ffffffff000));
	assert_int_equal(msr_bus_write(&m.bus, MSR_IA32_DS_AREA, UINT64_C(0x0000800000000000)),
			 MSR_BUS_EFAULT);
	assert_int_equal(rd(&m, MSR_IA32_DS_AREA), UINT64_C(0x00007ffffffff000));
	wr(&m, MSR_IA32_MISC_ENABLE, BIT(22));
	assert_int_equal(rd(&m, MSR_IA32_MISC_ENABLE), BIT(22) | MISC_ENABLE_PERFMON);
	model_new(&m, 2, 9, false);
	wr(&m, MSR_IA32_DS_AREA, UINT64_C(0xfffff000));
	assert_int_equal(msr_bus_write(&m.bus, MSR_IA32_DS_AREA, UINT64_C(0x100000000)),
			 MSR_BUS_EFAULT);
	assert_int_equal(msr_bus_write(&m.bus, MSR_IA32_MISC_ENABLE, BIT(22)), MSR_BUS_EFAULT);
	assert_int_equal(msr_bus_read(&m.bus, MSR_IA32_MISC_ENABLE, &v), 0);
	assert_false(v & BIT(22));
}

/* IA32_MISC_ENABLE: bit 7 set (PMU present), 11/12 per part, all three RO. */
static void misc_enable_and_others(void **state)
{
	struct p4_model m;
	struct p4_model_config cfg = { .sig = { 0x0f, 3, 4 }, .ht = true,
				       .pebs_unavailable = true };
	struct p4_sig not_p4 = { 6, 15, 1 };

	(void)state;
	model_new(&m, 4, 1, false);
	assert_int_equal(rd(&m, MSR_IA32_MISC_ENABLE), MISC_ENABLE_PERFMON);
	wr(&m, MSR_IA32_MISC_ENABLE, BIT(3) | MISC_ENABLE_PEBS_UNAVAIL);
	assert_int_equal(rd(&m, MSR_IA32_MISC_ENABLE), BIT(3) | MISC_ENABLE_PERFMON);
	assert_int_equal(rd(&m, MSR_TC_PRECISE_EVENT), 0xfc00);

	assert_int_equal(p4_model_init(&m, &cfg), 0);
	assert_int_equal(rd(&m, MSR_IA32_MISC_ENABLE),
			 MISC_ENABLE_PERFMON | MISC_ENABLE_PEBS_UNAVAIL);
	/* IA32_DS_AREA is per LP (PMU reference 1.3 "believed per-LP"). */
	wr(&m, MSR_IA32_DS_AREA, 0x1000);
	assert_int_equal(p4_model_set_bus_lp(&m, 1), 0);
	assert_int_equal(rd(&m, MSR_IA32_DS_AREA), 0);
	wr(&m, MSR_IA32_DS_AREA, 0x2000);
	assert_int_equal(p4_model_set_bus_lp(&m, 0), 0);
	assert_int_equal(rd(&m, MSR_IA32_DS_AREA), 0x1000);

	cfg.sig = not_p4;
	assert_int_equal(p4_model_init(&m, &cfg), -1);
}

/* A started counter keeps running when its handler clears OVF; a write
 * clearing the cascade bit stops it. Bad inputs change nothing. */
static void started_counter_lifecycle(void **state)
{
	struct p4_model m;
	uint64_t y = cccr_val(4, CCCR_CASCADE);

	(void)state;
	model_new(&m, 4, 1, false);
	wr(&m, MSR_CRU_ESCR0, escr_val(0x02, NBOGUSNTAG, ESCR_T0_OS | ESCR_T0_USR));
	wr(&m, MSR_CRU_ESCR1, escr_val(0x02, NBOGUSNTAG, ESCR_T0_OS | ESCR_T0_USR));
	wr(&m, MSR_P4_COUNTER_BASE + 12, NEG(1));
	wr(&m, MSR_P4_CCCR_BASE + 14, y);
	wr(&m, MSR_P4_CCCR_BASE + 12, cccr_val(4, CCCR_ENABLE));
	instr(&m, 0, 3, 3);
	assert_int_equal(ctr(&m, 14), 2);
	wr(&m, MSR_P4_CCCR_BASE + 14, y);	/* e.g. clearing OVF */
	instr(&m, 0, 3, 1);
	assert_int_equal(ctr(&m, 14), 3);
	wr(&m, MSR_P4_CCCR_BASE + 14, cccr_val(4, 0));	/* Cascade and Enable clear */
	assert_false(p4_model_running(&m, 14));
	instr(&m, 0, 3, 1);
	assert_int_equal(ctr(&m, 14), 3);
	/* The other reading: the start set Enable, and writing the value back stops it. */
	enable_hidden = false;
	model_new(&m, 4, 1, false);
	enable_hidden = true;
	wr(&m, MSR_CRU_ESCR0, escr_val(0x02, NBOGUSNTAG, ESCR_T0_OS | ESCR_T0_USR));
	wr(&m, MSR_CRU_ESCR1, escr_val(0x02, NBOGUSNTAG, ESCR_T0_OS | ESCR_T0_USR));
	wr(&m, MSR_P4_COUNTER_BASE + 12, NEG(1));
	wr(&m, MSR_P4_CCCR_BASE + 14, y);
	wr(&m, MSR_P4_CCCR_BASE + 12, cccr_val(4, CCCR_ENABLE));
	instr(&m, 0, 3, 3);
	assert_int_equal(ctr(&m, 14), 2);
	assert_true(cccr(&m, 14) & CCCR_ENABLE);
	wr(&m, MSR_P4_CCCR_BASE + 14, y);	/* the programmed value: Enable 0 */
	instr(&m, 0, 3, 1);
	assert_int_equal(ctr(&m, 14), 2);
	wr(&m, MSR_P4_CCCR_BASE + 14, cccr_val(4, CCCR_ENABLE));	/* Enable 1, Cascade clear */
	instr(&m, 0, 3, 1);
	assert_int_equal(ctr(&m, 14), 3);

	assert_int_equal(p4_model_event(&m, 0, 4, P4_EV_INSTR_RETIRED, NBOGUSNTAG, 1), -1);
	assert_int_equal(p4_model_event(&m, 0, 3, P4_NEVENT, NBOGUSNTAG, 1), -1);
	assert_int_equal(p4_model_set_cpl(&m, 0, 7), -1);
	assert_int_equal(p4_model_set_active(&m, 1, true), -1);
	/* instr_completed exists on models 3, 4, 6 only (PMU reference 4.3). */
	assert_int_equal(p4_model_event(&m, 0, 3, P4_EV_INSTR_COMPLETED, 1, 1), 0);
	model_new(&m, 2, 9, false);
	assert_int_equal(p4_model_event(&m, 0, 3, P4_EV_INSTR_COMPLETED, 1, 1), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ds_area_and_misc_enable_reserved_bits),
		cmocka_unit_test(helpers_match_manual),
		cmocka_unit_test(example_18_1_nested),
		cmocka_unit_test(example_18_1_doubled_range),
		cmocka_unit_test(cascade_pairs_all),
		cmocka_unit_test(example_18_2_intended),
		cmocka_unit_test(example_18_2_as_printed),
		cmocka_unit_test(table_18_66_all_cells),
		cmocka_unit_test(table_18_67_all_cells),
		cmocka_unit_test(table_18_67_differs_from_18_66),
		cmocka_unit_test(table_18_67_without_ht),
		cmocka_unit_test(threshold_complement_edge),
		cmocka_unit_test(complement_counts_idle_cycles),
		cmocka_unit_test(active_thread_field),
		cmocka_unit_test(active_thread_events),
		cmocka_unit_test(force_ovf),
		cmocka_unit_test(wrap_sticky_ovf_and_pmi_timing),
		cmocka_unit_test(pmi_skid),
		cmocka_unit_test(pmi_routing),
		cmocka_unit_test(cascade_pmi_erratum),
		cmocka_unit_test(escr_matching),
		cmocka_unit_test(nonexistent_msrs),
		cmocka_unit_test(reserved_bits),
		cmocka_unit_test(non_ht_rules),
		cmocka_unit_test(rdpmc),
		cmocka_unit_test(misc_enable_and_others),
		cmocka_unit_test(started_counter_lifecycle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
