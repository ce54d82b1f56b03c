/*
 * test_encode.c - ESCR/CCCR encodings against the manual's printed values
 * (SDM Example 18-2: 04000603H, 04038800H, 00039000H) and the worked
 * encodings of PMU reference 2.4, plus Table 18-66's T0/T1 OS/USR bits.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "pmu/p4_encode.h"
#include "pmu/p4_regs.h"

static struct p4_spec spec(const char *text)
{
	struct p4_spec s;
	struct p4_spec_error err;

	if (p4_spec_parse(text, NULL, &s, &err))
		fail_msg("%s: %s", text, err.msg);
	return s;
}

/* CCCR of PMU reference 2.4: Enable, active thread 11b, OVF_PMI_T0 and the spec's filters. */
static uint64_t cccr_for(const struct p4_spec *s, enum p4_escr escr)
{
	struct p4_cccr_cfg cfg = { 0 };

	p4_cccr_from_spec(s, &cfg);
	cfg.escr_select = p4_escrs[escr].select;
	cfg.enable = true;
	cfg.pmi_t0 = true;
	return p4_cccr_encode(&cfg, false);
}

static void example_18_2_values(void **state)
{
	struct p4_spec s = spec("instr_retired:nbogusntag:nbogustag");
	struct p4_cccr_cfg cfg = { 0 };

	/* Step 2: LP1-only instr_retired NBOGUSNTAG|NBOGUSTAG. */
	assert_int_equal(p4_escr_encode(&s, P4_LP1, true), 0x04000603);
	/* Step 5's value: the same event qualified to LP0. */
	assert_int_equal(p4_escr_encode(&s, P4_LP0, true), 0x0400060c);

	/* Step 3: CASCNT4INTO0 + OVF_PMI(_T0), ESCR select 4, Enable clear. */
	p4_cccr_from_spec(&s, &cfg);
	cfg.escr_select = 4;
	cfg.ext_cascade = true;
	cfg.pmi_t0 = true;
	assert_int_equal(p4_cccr_encode(&cfg, true), 0x04038800);

	/* Step 6: Enable, select 4, no PMI. */
	cfg.ext_cascade = false;
	cfg.pmi_t0 = false;
	cfg.enable = true;
	assert_int_equal(p4_cccr_encode(&cfg, true), 0x00039000);
}

static void fact_sheet_worked_encodings(void **state)
{
	struct p4_spec s;

	s = spec("global_power_events:running");
	assert_int_equal(p4_escr_encode(&s, P4_LP0, false), 0x2600020c);
	assert_int_equal(cccr_for(&s, P4_FSB_ESCR0), 0x0403d000);

	s = spec("instr_retired:nbogusntag:nbogustag");
	assert_int_equal(p4_escr_encode(&s, P4_LP0, false), 0x0400060c);
	assert_int_equal(cccr_for(&s, P4_CRU_ESCR0), 0x04039000);

	s = spec("mispred_branch_retired:nbogus");
	assert_int_equal(p4_escr_encode(&s, P4_LP0, false), 0x0600020c);

	s = spec("branch_retired:mmnp:mmnm:mmtp:mmtm");
	assert_int_equal(p4_escr_encode(&s, P4_LP0, false), 0x0c001e0c);
	assert_int_equal(cccr_for(&s, P4_CRU_ESCR2), 0x0403b000);

	s = spec("BSQ_cache_reference:rd_2ndl_miss:rd_3rdl_miss:wr_2ndl_miss");
	assert_int_equal(p4_escr_encode(&s, P4_LP0, false), 0x180e000c);
	assert_int_equal(cccr_for(&s, P4_BSU_ESCR0), 0x0403f000);

	s = spec("execution_event:nbogus0:nbogus1:nbogus2:nbogus3:bogus0:bogus1:bogus2:bogus3:"
		 "compl:cmp=15");
	assert_int_equal(p4_escr_encode(&s, P4_LP0, false), 0x1801fe0c);
	assert_int_equal(cccr_for(&s, P4_CRU_ESCR2), 0x04ffb000);

	s = spec("replay_event:nbogus");
	assert_int_equal(p4_escr_encode(&s, P4_LP0, false), 0x1200020c);
	assert_int_equal(cccr_for(&s, P4_CRU_ESCR2), 0x0403b000);
}

/* Table 18-66: the count on LPn depends only on Tn_OS / Tn_USR. */
static void thread_and_privilege_bits(void **state)
{
	struct p4_spec s = spec("uops_retired:nbogus:u");

	assert_int_equal(p4_escr_encode(&s, P4_LP0, true) & 0xf, ESCR_T0_USR);
	assert_int_equal(p4_escr_encode(&s, P4_LP1, true) & 0xf, ESCR_T1_USR);
	assert_int_equal(p4_escr_encode(&s, P4_LP_BOTH, true) & 0xf, ESCR_T0_USR | ESCR_T1_USR);
	s = spec("uops_retired:nbogus:k");
	assert_int_equal(p4_escr_encode(&s, P4_LP1, true) & 0xf, ESCR_T1_OS);
	assert_int_equal(p4_escr_encode(&s, P4_LP_BOTH, true) & 0xf, ESCR_T0_OS | ESCR_T1_OS);
	/* No HT: T1 bits are reserved; only T0 (= OS/USR) exist. */
	s = spec("uops_retired:nbogus");
	assert_int_equal(p4_escr_encode(&s, P4_LP1, false) & 0xf, ESCR_T0_OS | ESCR_T0_USR);
	assert_int_equal(p4_escr_encode(&s, P4_LP_BOTH, false) & 0xf, ESCR_T0_OS | ESCR_T0_USR);
}

/* Which LP's handler owns a counter: the one OVF_PMI names, LP0 when both or neither. */
static void pmi_owner_lp(void **state)
{
	struct p4_cccr_cfg c = { .enable = true, .active_thread = CCCR_AT_ANY };

	(void)state;
	assert_int_equal(p4_cccr_pmi_lp(p4_cccr_encode(&c, true)), 0);		/* polled */
	c.pmi_t0 = true;
	assert_int_equal(p4_cccr_pmi_lp(p4_cccr_encode(&c, true)), 0);
	c.pmi_t1 = true;
	assert_int_equal(p4_cccr_pmi_lp(p4_cccr_encode(&c, true)), 0);		/* both: LP0 */
	c.pmi_t0 = false;
	assert_int_equal(p4_cccr_pmi_lp(p4_cccr_encode(&c, true)), 1);		/* T1 alone */
	/* The other CCCR bits do not move it: OVF, cascade, FORCE_OVF, Enable. */
	assert_int_equal(p4_cccr_pmi_lp(CCCR_OVF_PMI_T1 | CCCR_OVF | CCCR_CASCADE | CCCR_FORCE_OVF |
					CCCR_ENABLE), 1);
	assert_int_equal(p4_cccr_pmi_lp(~(uint64_t)CCCR_OVF_PMI_T0), 1);
	assert_int_equal(p4_cccr_pmi_lp(~(uint64_t)CCCR_OVF_PMI_T1), 0);
}

static void cccr_fields(void **state)
{
	struct p4_spec s = spec("execution_event:nbogus0:cmp=1:edge");
	struct p4_cccr_cfg cfg = { 0 };
	uint64_t v;

	p4_cccr_from_spec(&s, &cfg);
	v = p4_cccr_encode(&cfg, true);
	assert_true(v & CCCR_COMPARE);
	assert_true(v & CCCR_EDGE);
	assert_false(v & CCCR_COMPLEMENT);
	assert_int_equal(field_get(CCCR_THRESHOLD, v), 1);
	assert_int_equal(field_get(CCCR_ESCR_SELECT, v), 5);

	cfg = (struct p4_cccr_cfg){ .escr_select = 4, .active_thread = CCCR_AT_SINGLE,
				    .pmi_t1 = true, .force_ovf = true, .cascade = true };
	/* HT: the active-thread field and OVF_PMI_T1 are kept. */
	assert_int_equal(p4_cccr_encode(&cfg, true), 0x4a018000);
	/* No HT: bits 17:16 must be 11b and OVF_PMI_T1 is reserved. */
	assert_int_equal(p4_cccr_encode(&cfg, false), 0x42038000);
	assert_int_equal(p4_cccr_encode(&cfg, false) & CCCR_RESERVED, 0);
}

/* Example 18-1: a counter preset to -200 overflows on the 200th event. */
static void presets_are_negative_in_40_bits(void **state)
{
	assert_int_equal(p4_counter_preset(200), 0xffffffff38ull);
	assert_int_equal(p4_counter_preset(4096), 0xfffffff000ull);
	assert_int_equal(p4_counter_preset(4096) + 4096, 1ull << 40);
	assert_int_equal(p4_counter_preset(P4_PERIOD_MAX) & (1ull << 39), 1ull << 39);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(example_18_2_values),
		cmocka_unit_test(fact_sheet_worked_encodings),
		cmocka_unit_test(thread_and_privilege_bits),
		cmocka_unit_test(cccr_fields),
		cmocka_unit_test(pmi_owner_lp),
		cmocka_unit_test(presets_are_negative_in_40_bits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
