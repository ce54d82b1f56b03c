/*
 * test_model_route.c - the software PMU routes each event only to the
 * counters that can count it.
 *
 * The model keeps, per ESCR, the set of running counters whose CCCR selects
 * that ESCR (updated on CCCR writes and cascade starts), and m->examined
 * counts the counters the event path looks at. These tests check the work
 * done per event (not the 18-counter scan of a plain implementation) and,
 * after long random sequences of register writes, events and overflows,
 * that the routing state equals what the registers say.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "pmu/model/p4_model.h"

#define MSR_CRU_ESCR0	0x3b8
#define MSR_CRU_ESCR3	0x3cd
#define NBOGUSNTAG	P4_EVMASK(P4_INSTR_RETIRED_NBOGUSNTAG)
#define MMTP		P4_EVMASK(P4_BRANCH_RETIRED_MMTP)
#define TBITS		(ESCR_T0_OS | ESCR_T0_USR)

static void model_new(struct p4_model *m, uint8_t model, bool ht)
{
	struct p4_model_config cfg = { .sig = { 0x0f, model, 1 }, .ht = ht };

	assert_int_equal(p4_model_init(m, &cfg), 0);
}

static void wr(struct p4_model *m, uint32_t msr, uint64_t v)
{
	assert_int_equal(msr_bus_write(&m->bus, msr, v), 0);
}

static uint64_t ctr(struct p4_model *m, unsigned n)
{
	uint64_t v = 0;

	assert_int_equal(msr_bus_read(&m->bus, MSR_P4_COUNTER_BASE + n, &v), 0);
	return v;
}

static uint64_t escr_val(unsigned evsel, uint16_t mask)
{
	return field_prep(ESCR_EVENT_SELECT, evsel) | field_prep(ESCR_EVENT_MASK, mask) | TBITS;
}

static uint64_t cccr_val(unsigned escr_sel, uint64_t flags)
{
	return field_prep(CCCR_ESCR_SELECT, escr_sel) |
	       field_prep(CCCR_ACTIVE_THREAD, CCCR_AT_ANY) | flags;
}

/* An ESCR of model 4 that counter c can read, other than CRU_ESCR0/1. */
static enum p4_escr other_escr(enum p4_counter c)
{
	for (unsigned e = 0; e < P4_NESCR; e++)
		if ((p4_escrs[e].counters & P4_CTR(c)) && (p4_escrs[e].models & P4_MODEL(4)) &&
		    e != P4_CRU_ESCR0 && e != P4_CRU_ESCR1)
			return (enum p4_escr)e;
	return P4_ESCR_NONE;
}

/*
 * All 18 counters enabled, counter 12 on CRU_ESCR0 with instr_retired (event
 * select 02H, PMU reference 4.2), the other 17 on other ESCRs: an instr_retired
 * event looks at counter 12 only. With nothing enabled it looks at none.
 */
static void event_examines_only_its_counters(void **state)
{
	struct p4_model m;

	(void)state;
	model_new(&m, 4, false);
	for (unsigned i = 0; i < 100; i++)
		assert_int_equal(p4_model_event(&m, 0, 3, P4_EV_INSTR_RETIRED, NBOGUSNTAG, 1), 0);
	assert_int_equal(m.examined, 0);

	for (unsigned c = 0; c < P4_NCOUNTER; c++) {
		enum p4_escr e = c == 12 ? P4_CRU_ESCR0 : other_escr(c);

		assert_int_not_equal(e, P4_ESCR_NONE);
		wr(&m, p4_escrs[e].msr, c == 12 ? escr_val(0x02, NBOGUSNTAG) : escr_val(0x3f, 1));
		wr(&m, MSR_P4_CCCR_BASE + c, cccr_val(p4_escrs[e].select, CCCR_ENABLE));
	}
	for (unsigned i = 0; i < 1000; i++)
		assert_int_equal(p4_model_event(&m, 0, 3, P4_EV_INSTR_RETIRED, NBOGUSNTAG, 1), 0);
	assert_int_equal(ctr(&m, 12), 1000);
	assert_int_equal(m.examined, 1000);

	/* An ESCR whose fields do not take the event costs no counter visit. */
	wr(&m, MSR_CRU_ESCR0, escr_val(0x02, P4_EVMASK(P4_INSTR_RETIRED_BOGUSTAG)));
	assert_int_equal(p4_model_event(&m, 0, 3, P4_EV_INSTR_RETIRED, NBOGUSNTAG, 1), 0);
	assert_int_equal(m.examined, 1000);

	/* Disabling the counter takes it out of the route. */
	wr(&m, MSR_CRU_ESCR0, escr_val(0x02, NBOGUSNTAG));
	wr(&m, MSR_P4_CCCR_BASE + 12, cccr_val(4, 0));
	assert_int_equal(p4_model_event(&m, 0, 3, P4_EV_INSTR_RETIRED, NBOGUSNTAG, 5), 0);
	assert_int_equal(m.examined, 1000);
	assert_int_equal(ctr(&m, 12), 1000);
}

/* Example 18-1's pair: counter 14 joins branch_retired's route when 12's overflow starts it. */
static void cascade_start_joins_route(void **state)
{
	struct p4_model m;

	(void)state;
	model_new(&m, 4, false);
	wr(&m, MSR_CRU_ESCR0, escr_val(0x02, NBOGUSNTAG));
	wr(&m, MSR_CRU_ESCR3, escr_val(0x06, MMTP));
	wr(&m, MSR_P4_COUNTER_BASE + 12, P4_COUNTER_MASK);	/* -1 */
	wr(&m, MSR_P4_CCCR_BASE + 14, cccr_val(5, CCCR_CASCADE));
	wr(&m, MSR_P4_CCCR_BASE + 12, cccr_val(4, CCCR_ENABLE));
	assert_int_equal(p4_model_event(&m, 0, 3, P4_EV_BRANCH_RETIRED, MMTP, 3), 0);
	assert_int_equal(m.examined, 0);
	assert_int_equal(p4_model_event(&m, 0, 3, P4_EV_INSTR_RETIRED, NBOGUSNTAG, 1), 0);
	assert_int_equal(m.examined, 1);
	assert_true(p4_model_running(&m, 14));
	assert_int_equal(p4_model_event(&m, 0, 3, P4_EV_BRANCH_RETIRED, MMTP, 3), 0);
	assert_int_equal(m.examined, 2);
	assert_int_equal(ctr(&m, 14), 3);
	assert_true(m.ovf_set & P4_CTR(12));
	assert_true(p4_model_pmi_asserted(&m, 0) == false);	/* no OVF_PMI bit */
}

/* The routing state, recomputed from the registers alone. */
static void check_routing(const struct p4_model *m)
{
	uint32_t seen = 0, cmp = 0, ovf = 0;

	for (unsigned c = 0; c < P4_NCOUNTER; c++) {
		uint64_t v = m->cccr[c];
		enum p4_escr e = p4_escr_for_select(c, (unsigned)field_get(CCCR_ESCR_SELECT, v));
		bool run = p4_model_running(m, c);

		if (e != P4_ESCR_NONE && !(p4_escrs[e].models & m->caps.escr_models))
			e = P4_ESCR_NONE;
		if (run && e != P4_ESCR_NONE) {
			assert_true(m->escr_ctrs[e] & P4_CTR(c));
			seen |= P4_CTR(c);
		}
		if (run && (v & CCCR_COMPARE))
			cmp |= P4_CTR(c);
		if (v & CCCR_OVF)
			ovf |= P4_CTR(c);
	}
	for (unsigned e = 0; e < P4_NESCR; e++) {
		assert_int_equal(m->escr_ctrs[e] & ~seen, 0);
		seen &= ~m->escr_ctrs[e];	/* each counter in one ESCR's set only */
	}
	assert_int_equal(seen, 0);
	assert_int_equal(m->cmp_running, cmp);
	assert_int_equal(m->ovf_set, ovf);
}

static uint32_t lcg(uint32_t *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

/* A random CCCR value: fields and flags, sometimes reserved bits (refused). */
static uint64_t random_cccr(uint32_t *s)
{
	uint64_t flags[] = { CCCR_ENABLE, CCCR_COMPARE, CCCR_COMPLEMENT, CCCR_CASCADE,
			     CCCR_EXT_CASCADE, CCCR_OVF, CCCR_OVF_PMI_T0, CCCR_FORCE_OVF, BIT(3) };
	uint64_t v = field_prep(CCCR_ESCR_SELECT, lcg(s) & 7) |
		     field_prep(CCCR_ACTIVE_THREAD, lcg(s) & 3) |
		     field_prep(CCCR_THRESHOLD, lcg(s) & 15);

	for (unsigned i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (lcg(s) % 3 == 0)
			v |= flags[i];
	return v;
}

/* Random writes, events and ticks on 0F_02 (HT, extended cascading): the routing stays exact. */
static void routing_matches_registers(void **state)
{
	static const enum p4_event evs[] = { P4_EV_INSTR_RETIRED, P4_EV_BRANCH_RETIRED,
					     P4_EV_GLOBAL_POWER_EVENTS, P4_EV_BPU_FETCH_REQUEST };
	uint32_t seed = 12345;
	uint64_t overflows = 0;
	struct p4_model m;

	(void)state;
	model_new(&m, 2, true);
	for (unsigned k = 0; k < 4; k++)
		for (unsigned i = 0; i < 2; i++)
			wr(&m, p4_escrs[p4_events[evs[k]].escrs[i]].msr,
			   field_prep(ESCR_EVENT_SELECT, p4_events[evs[k]].event_select) |
			   ESCR_EVENT_MASK | ESCR_T0_OS | ESCR_T0_USR | ESCR_T1_USR);
	for (unsigned i = 0; i < 20000; i++) {
		unsigned c = lcg(&seed) % P4_NCOUNTER;

		switch (lcg(&seed) % 4) {
		case 0:
			(void)msr_bus_write(&m.bus, MSR_P4_CCCR_BASE + c, random_cccr(&seed));
			break;
		case 1:
			wr(&m, MSR_P4_COUNTER_BASE + c, P4_COUNTER_MASK - (lcg(&seed) & 7));
			break;
		case 2:
			(void)p4_model_event(&m, lcg(&seed) & 1, lcg(&seed) & 3,
					     evs[lcg(&seed) % 4], (uint16_t)lcg(&seed), lcg(&seed) % 9);
			break;
		default:
			p4_model_tick(&m, 1 + lcg(&seed) % 5);
			break;
		}
		check_routing(&m);
	}
	/* The walk did reach the interesting states: overflows, cascades, visits. */
	for (unsigned c = 0; c < P4_NCOUNTER; c++)
		overflows += m.overflows[c];
	assert_true(overflows > 100);
	assert_true(m.examined > 500);
	p4_model_reset(&m);
	check_routing(&m);
	assert_int_equal(m.examined, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(event_examines_only_its_counters),
		cmocka_unit_test(cascade_start_joins_route),
		cmocka_unit_test(routing_matches_registers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
