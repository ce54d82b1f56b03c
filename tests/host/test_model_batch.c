/*
 * test_model_batch.c - prof/backend/model_batch.c, the model backend's batching of
 * the events every step feeds, against the real model.
 *
 * What the batch promises (model_batch.c): nothing can tell it from feeding
 * each step on its own. So a counter reads the same after a flush, and an
 * overflow, its OVF bit and its PMI ("on the next event count after the
 * counter has overflowed", CCCR text, PMU reference 6) land on the same step
 * as without the batch; events never change LP or CPL while they wait; no
 * event waits while a counter compares (compare mode judges each cycle's
 * input), owes a PMI, waits for a cascade or is forced to overflow; and the
 * clock of two LPs stepping at once is the clock of one core.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "pmu/p4_regs.h"
#include "prof/backend/model_adapter.h"

#define MSR_CRU_ESCR0	0x3b8
#define MSR_CRU_ESCR2	0x3cc
#define NEG(n)		((UINT64_C(0) - (n)) & P4_COUNTER_MASK)
#define NBOGUSNTAG	P4_EVMASK(P4_INSTR_RETIRED_NBOGUSNTAG)

static unsigned pmis[2];		/* PMI requests of the batched and the plain model */

static void log_pmi(struct p4_model *m, unsigned lp, void *ctx)
{
	(void)m;
	(void)lp;
	(*(unsigned *)ctx)++;
}

static void model_new(struct p4_model *m, unsigned *log)
{
	struct p4_model_config cfg = { .sig = { 0x0f, 4, 1 }, .raise_pmi = log_pmi, .ctx = log };

	*log = 0;
	assert_int_equal(p4_model_init(m, &cfg), 0);
	p4_model_set_active(m, 0, true);
}

static void wr(struct p4_model *m, uint32_t msr, uint64_t v)
{
	assert_int_equal(msr_bus_write(&m->bus, msr, v), 0);
}

static uint64_t rd(struct p4_model *m, uint32_t msr)
{
	uint64_t v = 0;

	assert_int_equal(msr_bus_read(&m->bus, msr, &v), 0);
	return v;
}

static uint64_t escr_val(unsigned evsel, uint16_t mask, uint64_t tbits)
{
	return field_prep(ESCR_EVENT_SELECT, evsel) | field_prep(ESCR_EVENT_MASK, mask) | tbits;
}

static uint64_t cccr_val(unsigned escr_sel, uint64_t flags)
{
	return field_prep(CCCR_ESCR_SELECT, escr_sel) |
	       field_prep(CCCR_ACTIVE_THREAD, CCCR_AT_ANY) | flags;
}

/* instr_retired on counter 12 (CRU_ESCR0) with the T0 bits tbits, preset -period. */
static void program_instr(struct p4_model *m, uint64_t tbits, uint64_t period, uint64_t flags)
{
	wr(m, MSR_CRU_ESCR0, escr_val(0x02, NBOGUSNTAG, tbits));
	wr(m, MSR_P4_COUNTER_BASE + 12, NEG(period));
	wr(m, MSR_P4_CCCR_BASE + 12, cccr_val(4, CCCR_ENABLE | flags));
}

/* One retired instruction as prof/backend/model_feed.c feeds it: batched when the batch takes it. */
static void step(struct model_batch *b, struct p4_model *m, unsigned lp, unsigned cpl)
{
	model_batch_enter(b, m, lp, cpl);
	if (model_batch_takes(b, m, lp, cpl, 1)) {
		b->instr++;
		return;
	}
	assert_int_equal(p4_model_event(m, lp, cpl, P4_EV_INSTR_RETIRED, NBOGUSNTAG, 1), 0);
	b->budget_dirty = true;
}

/*
 * 1000 steps with a sampling period of 100: the batched model raises each
 * PMI on the very step the plain one does, and reads the same whenever it
 * is read (a read flushes first, as model_bus_read does).
 */
static void batch_is_invisible(void **state)
{
	struct p4_model batched, plain;
	struct model_batch b = { .budget_dirty = true };
	unsigned waited = 0;

	(void)state;
	model_new(&batched, &pmis[0]);
	model_new(&plain, &pmis[1]);
	program_instr(&batched, ESCR_T0_OS | ESCR_T0_USR, 100, CCCR_OVF_PMI_T0);
	program_instr(&plain, ESCR_T0_OS | ESCR_T0_USR, 100, CCCR_OVF_PMI_T0);
	for (unsigned i = 1; i <= 1000; i++) {
		step(&b, &batched, 0, 3);
		assert_int_equal(p4_model_event(&plain, 0, 3, P4_EV_INSTR_RETIRED, NBOGUSNTAG, 1), 0);
		waited += b.instr != 0;
		assert_int_equal(pmis[0], pmis[1]);
		if (i % 37 == 0 || pmis[0] != pmis[1]) {
			model_batch_flush(&b, &batched);
			assert_int_equal(rd(&batched, MSR_P4_COUNTER_BASE + 12),
					 rd(&plain, MSR_P4_COUNTER_BASE + 12));
			assert_int_equal(rd(&batched, MSR_P4_CCCR_BASE + 12),
					 rd(&plain, MSR_P4_CCCR_BASE + 12));
		}
	}
	assert_true(waited > 500);		/* the batch did take most steps */
	assert_int_equal(pmis[1], 1);		/* sticky OVF: one PMI until software clears it */
	assert_true(rd(&batched, MSR_P4_CCCR_BASE + 12) & CCCR_OVF);
}

/* The budget: one below the nearest overflow of any running counter. */
static void budget_nearest_overflow(void **state)
{
	struct p4_model m;
	unsigned log;

	(void)state;
	model_new(&m, &log);
	assert_int_equal(model_batch_budget(&m), UINT64_MAX - 1);	/* nothing counts */
	program_instr(&m, ESCR_T0_OS | ESCR_T0_USR, 50, 0);
	assert_int_equal(model_batch_budget(&m), 49);
	wr(&m, MSR_CRU_ESCR2, escr_val(0x06, P4_EVMASK(P4_BRANCH_RETIRED_MMTP), ESCR_T0_OS));
	wr(&m, MSR_P4_COUNTER_BASE + 13, NEG(10));
	wr(&m, MSR_P4_CCCR_BASE + 13, cccr_val(5, CCCR_ENABLE));
	assert_int_equal(model_batch_budget(&m), 9);
}

/* Nothing waits when a counter is forced to overflow, compares, owes a PMI or waits for a cascade. */
static void budget_zero(void **state)
{
	struct p4_model m;
	unsigned log;

	(void)state;
	model_new(&m, &log);
	program_instr(&m, ESCR_T0_OS | ESCR_T0_USR, 1000, CCCR_FORCE_OVF);
	assert_int_equal(model_batch_budget(&m), 0);

	model_new(&m, &log);
	program_instr(&m, ESCR_T0_OS | ESCR_T0_USR, 1000, CCCR_COMPARE |
		      field_prep(CCCR_THRESHOLD, 1));
	assert_int_equal(model_batch_budget(&m), 0);

	model_new(&m, &log);
	program_instr(&m, ESCR_T0_OS | ESCR_T0_USR, 1, CCCR_OVF_PMI_T0);
	assert_int_equal(model_batch_budget(&m), 0);	/* the overflowing count itself */
	assert_int_equal(p4_model_event(&m, 0, 0, P4_EV_INSTR_RETIRED, NBOGUSNTAG, 1), 0);
	assert_int_equal(log, 0);
	assert_int_equal(model_batch_budget(&m), 0);	/* owes its PMI on the next count */

	model_new(&m, &log);
	program_instr(&m, ESCR_T0_OS | ESCR_T0_USR, 1000, 0);
	wr(&m, MSR_P4_CCCR_BASE + 14, cccr_val(4, CCCR_CASCADE));	/* waits for counter 12 */
	assert_int_equal(model_batch_budget(&m), 0);
}

/* Pending events are fed at the LP and CPL that retired them: a change flushes first. */
static void batch_keeps_lp_and_cpl(void **state)
{
	struct p4_model m;
	struct model_batch b = { .budget_dirty = true };
	unsigned log;

	(void)state;
	model_new(&m, &log);
	program_instr(&m, ESCR_T0_USR, 1000, 0);	/* user instructions of T0 only */
	for (unsigned i = 0; i < 5; i++)
		step(&b, &m, 0, 3);
	assert_int_equal(b.instr, 5);
	for (unsigned i = 0; i < 7; i++)
		step(&b, &m, 0, 0);
	assert_int_equal(b.instr, 7);
	assert_int_equal(b.cpl, 0);
	for (unsigned i = 0; i < 3; i++)
		step(&b, &m, 1, 3);
	model_batch_flush(&b, &m);
	assert_int_equal(rd(&m, MSR_P4_COUNTER_BASE + 12), NEG(1000) + 5);
}

/* One core, one clock: two LPs' steps tick the cycles they share once. */
static void clock_one_core(void **state)
{
	struct p4_model m;
	struct model_batch b = { .budget_dirty = true };
	uint64_t clock = 1000, lp_clock[P4_MODEL_NLP] = { 1000, 1000 };
	unsigned log;

	(void)state;
	model_new(&m, &log);
	model_batch_enter(&b, &m, 0, 3);
	assert_true(model_batch_takes(&b, &m, 0, 3, 1));
	model_clock_advance(&b, &m, &clock, lp_clock, 0, 100);
	assert_int_equal(clock, 1100);
	assert_int_equal(b.ticks, 100);
	model_clock_advance(&b, &m, &clock, lp_clock, 1, 60);	/* behind LP0: nothing new */
	assert_int_equal(clock, 1100);
	model_clock_advance(&b, &m, &clock, lp_clock, 1, 60);
	assert_int_equal(clock, 1120);
	assert_int_equal(b.ticks, 120);
	model_batch_flush(&b, &m);
	assert_int_equal(b.ticks, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(batch_is_invisible),
		cmocka_unit_test(budget_nearest_overflow),
		cmocka_unit_test(budget_zero),
		cmocka_unit_test(batch_keeps_lp_and_cpl),
		cmocka_unit_test(clock_one_core),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
