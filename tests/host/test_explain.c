/*
 * test_explain.c - the manual's Example 18-2 (SDM 18.15.5.7), as printed and
 * as intended.
 *
 * As printed, the example cannot work (issue 3, fact sheet 2.3): IQ_CCCR4's
 * 00039000H selects CRU_ESCR0 (select 4), not the CRU_ESCR2 written in step 5;
 * event select 2 on CRU_ESCR2 is machine_clear; counters 12 and 16 both
 * reach instr_retired only through CRU_ESCR0 and so cannot count different
 * LPs; counter 12 (CASCNT4INTO0) is started by counter 16, which counts the
 * same LP1 setting; and FFFFF000H is not -4096 in a 40-bit counter.
 *
 * As intended ("sample LP1's instr_retired after LP0 has retired 4096"),
 * the planner puts the sampler on counter 16 through CRU_ESCR0 (the
 * manual's 04000603H) with CASCNT5INTO4, and the LP0 count on counter 17
 * through CRU_ESCR1 (the manual's step-5 value 0400060CH, step-6 CCCR value
 * 00039000H). The sampler's CCCR is then exactly the manual's 04038800H.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "pmu/p4_alloc.h"
#include "pmu/p4_apply.h"
#include "pmu/p4_explain.h"
#include "tests/host/recbus.h"

struct out {
	int n;
	char all[16384];
};

static void collect(void *ctx, const char *s)
{
	struct out *o = ctx;
	size_t len = strlen(o->all);

	o->n++;
	snprintf(o->all + len, sizeof(o->all) - len, "%s\n", s);
}

static void has(const struct out *o, const char *needle)
{
	if (!strstr(o->all, needle))
		fail_msg("missing '%s' in:\n%s", needle, o->all);
}

static const struct p4_msr_write example_printed[] = {
	{ 0x30c, 0 },			/* step 1: counter 12 <- 0 */
	{ 0x3b8, 0x04000603 },		/* step 2: MSR_CRU_ESCR0 */
	{ 0x36c, 0x04038800 },		/* step 3: MSR_IQ_CCCR0 */
	{ 0x310, 0xfffff000 },		/* step 4: counter 16 */
	{ 0x3cc, 0x0400060c },		/* step 5: MSR_CRU_ESCR2 */
	{ 0x370, 0x00039000 },		/* step 6: MSR_IQ_CCCR4 */
};

static struct p4_caps caps_of(uint8_t model, uint8_t stepping)
{
	struct p4_caps c;

	assert_true(p4_caps_lookup(&(struct p4_sig){ 15, model, stepping }, &c));
	return c;
}

static void example_as_printed_is_flagged(void **state)
{
	struct p4_caps caps = caps_of(4, 1);
	struct out o = { 0 };
	int problems = p4_explain(example_printed, 6, &caps, true, collect, &o);

	/* decoding */
	has(&o, "CRU_ESCR0 <- 04000603H: instr_retired:NBOGUSNTAG:NBOGUSTAG, counts LP1 user+kernel");
	has(&o, "MSR_IQ_CCCR0 (counter 12) <- 04038800H: select 4 = CRU_ESCR0");
	has(&o, "PMI to LP0, CASCNT4INTO0: starts when counter 16 overflows");
	/* flaw: event select 2 on CRU_ESCR2 is machine_clear */
	has(&o, "CRU_ESCR2 <- 0400060CH: machine_clear:CLEAR");
	has(&o, "(event select 02H means instr_retired on CRU_ESCR0 CRU_ESCR1");
	has(&o, "! CRU_ESCR2: event-mask bits 0002H are not defined");
	/* flaw: IQ_CCCR4 select 4 = CRU_ESCR0, not CRU_ESCR2 */
	has(&o, "MSR_IQ_CCCR4 (counter 16) <- 00039000H: select 4 = CRU_ESCR0");
	has(&o, "! CRU_ESCR2 is written but no enabled or armed CCCR selects it");
	has(&o, "! counter 16 selects 4 = CRU_ESCR0; CRU_ESCR2 would need select 5");
	/* flaw: counters 12 and 16 share CRU_ESCR0 */
	has(&o, "! counters 12 and 16 both count through CRU_ESCR0");
	/* flaw: counter 12 starts from counter 16, which counts LP1 too */
	has(&o, "counter 12 starts after 1095216664576 events of counter 16: "
		"instr_retired:NBOGUSNTAG:NBOGUSTAG for LP1");
	has(&o, "! counter 12 and its starter 16 count the same ESCR setting");
	/* flaw: FFFFF000H is not -4096 in 40 bits (2^40 - 0xFFFFF000 events) */
	has(&o, "! counter 16: FFFFF000H is positive in the 40-bit counter: it overflows after "
		"1095216664576 events, not 4096; write FFFFFFF000H");
	assert_int_equal(problems, 7);
}

/* On 0F_02 the cascaded counter's PMI is also lost (SDM erratum). */
static void example_on_northwood_adds_erratum(void **state)
{
	struct p4_caps caps = caps_of(2, 9);
	struct out o = { 0 };
	int problems = p4_explain(example_printed, 6, &caps, true, collect, &o);

	has(&o, "! counter 12: no PMI in cascade mode on this part");
	assert_int_equal(problems, 8);
}

/* Models 0/1 have no extended cascading: bit 11 is reserved. */
static void example_on_willamette_has_no_bit_11(void **state)
{
	struct p4_caps caps = caps_of(1, 3);
	struct out o = { 0 };

	p4_explain(example_printed, 6, &caps, true, collect, &o);
	has(&o, "! counter 12: no extended cascading on this model");
}

/* The scenario in user terms: LP0 counts 4096 instructions, then LP1 is sampled. */
static int plan_intent(const struct p4_caps *caps, struct p4_plan *plan, struct p4_alloc_error *err)
{
	struct p4_request req[2] = { 0 };
	struct p4_spec_error serr;
	struct p4_alloc_ctx ctx = { .caps = caps, .ht = true, .split = P4_SPLIT_GLOBAL };

	assert_int_equal(p4_spec_parse("instr_retired:nbogusntag:nbogustag:period=4096", caps,
				       &req[0].spec, &serr), 0);
	req[0].lp = P4_LP0;
	assert_int_equal(p4_spec_parse("instr_retired:nbogusntag:nbogustag", caps, &req[1].spec,
				       &serr), 0);
	req[1].lp = P4_LP1;
	req[1].role = P4_ROLE_CASCADE;
	req[1].started_by = 0;
	req[1].pmi = P4_PMI_LP0;	/* as the manual's OVF_PMI in 04038800H */
	return p4_alloc_plan(&ctx, req, 2, plan, err);
}

static void example_as_intended_write_sequence(void **state)
{
	static const struct recbus_write want[] = {
		/* the null events' ALF_ESCR1 and ALF_ESCR0 cleared (an older plan's event
		 * may be left in them), then IQ_CCCR5 and IQ_CCCR4 off on that null event
		 * (Xeon MP erratum O8): ESCR select 1, the unused ALF_ESCR (select 0 names
		 * IQ_ESCR0/1, which models 3 and later lack) */
		{ 0x3cb, 0 },
		{ 0x3ca, 0 },
		{ 0x371, 0x2000 },
		{ 0x370, 0x2000 },
		{ 0x3b9, 0x0400060c },		/* CRU_ESCR1: instr_retired, LP0 (step 5's value) */
		{ 0x3b8, 0x04000603 },		/* CRU_ESCR0: instr_retired, LP1 (step 2) */
		{ 0x311, 0xfffffff000ull },	/* counter 17 = -4096 in 40 bits, twice (N15) */
		{ 0x311, 0xfffffff000ull },
		{ 0x310, 0 },			/* counter 16 = 0 (step 1's value), twice */
		{ 0x310, 0 },
		{ 0x370, 0x04038800 },		/* IQ_CCCR4: step 3's value; bit 11 = CASCNT5INTO4 */
		{ 0x371, 0x00039000 },		/* IQ_CCCR5: step 6's value, enables the starter */
	};
	struct p4_caps caps = caps_of(4, 1);
	struct p4_plan plan;
	struct p4_alloc_error err;
	struct p4_apply_result res;
	struct recbus rb;
	struct p4_msr_write log[RECBUS_MAX_LOG];
	struct out o = { 0 };

	if (plan_intent(&caps, &plan, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(plan.slot[1].counter, P4_IQ_COUNTER4);
	assert_int_equal(plan.slot[1].escr, P4_CRU_ESCR0);
	assert_int_equal(plan.slot[0].counter, P4_IQ_COUNTER5);
	assert_int_equal(plan.slot[0].escr, P4_CRU_ESCR1);
	assert_string_equal(plan.slot[1].link->name, "CASCNT5INTO4");

	recbus_init(&rb);
	p4_apply(&rb.bus, &plan, &res);
	assert_int_equal(rb.nlog, sizeof(want) / sizeof(want[0]));
	for (unsigned i = 0; i < rb.nlog; i++) {
		assert_int_equal(rb.log[i].msr, want[i].msr);
		assert_int_equal(rb.log[i].value, want[i].value);
	}
	assert_int_equal(res.mismatches, 0);
	assert_int_equal(res.faults, 0);

	/* explain agrees with the plan and finds nothing wrong */
	for (unsigned i = 0; i < rb.nlog; i++)
		log[i] = (struct p4_msr_write){ rb.log[i].msr, rb.log[i].value };
	assert_int_equal(p4_explain(log, rb.nlog, &caps, true, collect, &o), 0);
	has(&o, "counter 16 starts after 4096 events of counter 17: "
		"instr_retired:NBOGUSNTAG:NBOGUSTAG for LP0 user+kernel via CRU_ESCR1");
	has(&o, "counter 16 counts instr_retired:NBOGUSNTAG:NBOGUSTAG for LP1 user+kernel via CRU_ESCR0");
}

/* Without extended cascading the planner falls back to bit 30 (14 -> 16). */
static void example_intent_without_extended_cascading(void **state)
{
	struct p4_caps caps = caps_of(1, 3);
	struct p4_plan plan;
	struct p4_alloc_error err;

	if (plan_intent(&caps, &plan, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(plan.slot[1].counter, P4_IQ_COUNTER4);
	assert_int_equal(plan.slot[0].counter, P4_IQ_COUNTER2);
	assert_false(plan.slot[1].link->extended);
	assert_true(plan.slot[1].cccr_value & (1u << 30));
	assert_false(plan.slot[1].cccr_value & (1u << 11));
}

/* On 0F_02 a cascaded counter raises no PMI: the planner refuses. */
static void example_intent_refused_on_northwood(void **state)
{
	struct p4_caps caps = caps_of(2, 9);
	struct p4_plan plan;
	struct p4_alloc_error err;

	assert_int_equal(plan_intent(&caps, &plan, &err), -1);
	assert_non_null(strstr(err.msg, "#2 instr_retired:NBOGUSNTAG:NBOGUSTAG:u:k on LP1"));
	assert_non_null(strstr(err.msg, "erratum"));
	assert_int_equal(err.nconflict, 1);
	assert_int_equal(err.conflict[0], 1);
}

/*
 * A thread-independent event's T-bits mean what Table 18-67 says, not whose
 * events count: page_walk_type DTMISS (TI) on PMH_ESCR0 (3ACH, select 01H,
 * mask bit 0) with T0_USR alone counts while LP0 or LP1 is in user mode.
 */
static void explain_ti_event_bits(void **state)
{
	static const struct p4_msr_write w[] = {
		{ 0x3ac, 0x02000204 },		/* PMH_ESCR0: page_walk_type:DTMISS, T0_USR */
		{ 0x360, 0x00039000 },		/* counter 0, select 4 = PMH_ESCR0, enabled */
		{ 0x3b8, 0x04000204 },		/* CRU_ESCR0: instr_retired (TS), T0_USR */
		{ 0x36c, 0x00039000 },		/* counter 12, select 4 = CRU_ESCR0 */
	};
	struct p4_caps caps = caps_of(4, 1);
	struct out o = { 0 }, nonht = { 0 };

	assert_int_equal(p4_explain(w, 4, &caps, true, collect, &o), 0);
	has(&o, "PMH_ESCR0 <- 02000204H: page_walk_type:DTMISS, counts both LPs while LP0 or "
		"LP1 is in user mode (TI event, Table 18-67)");
	has(&o, "CRU_ESCR0 <- 04000204H: instr_retired:NBOGUSNTAG, counts LP0 user");
	has(&o, "counter 0 counts page_walk_type:DTMISS for both LPs while LP0 or LP1 is in "
		"user mode (TI event, Table 18-67) via PMH_ESCR0");
	assert_int_equal(p4_explain(w, 4, &caps, false, collect, &nonht), 0);
	has(&nonht, "PMH_ESCR0 <- 02000204H: page_walk_type:DTMISS, counts user");
}

static void explain_odd_writes(void **state)
{
	static const struct p4_msr_write w[] = {
		{ 0x3ba, 0x0400000c },		/* IQ_ESCR0: absent on model 4 */
		{ 0x361, 0x00035000 },		/* counter 1, select 2 = MOB_ESCR0 never written */
		{ 0x364, 0x0001f000 },		/* counter 4: select 7 is invalid there */
		{ 0x1a0, 1 },			/* not a PMU MSR */
	};
	struct p4_caps caps = caps_of(4, 1);
	struct out o = { 0 };
	int problems = p4_explain(w, 4, &caps, false, collect, &o);

	has(&o, "! IQ_ESCR0 does not exist on this model");
	has(&o, "! counter 1: MOB_ESCR0 is never written here");
	has(&o, "! counter 4: ESCR select 7 names no ESCR for this counter");
	has(&o, "! counter 4: bits 17:16 must be 11b without Hyper-Threading");
	has(&o, "! 1A0H <- 1H: not a NetBurst PMU MSR");
	has(&o, "! IQ_ESCR0 is written but no enabled or armed CCCR selects it");
	assert_int_equal(problems, 6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(example_as_printed_is_flagged),
		cmocka_unit_test(example_on_northwood_adds_erratum),
		cmocka_unit_test(example_on_willamette_has_no_bit_11),
		cmocka_unit_test(example_as_intended_write_sequence),
		cmocka_unit_test(example_intent_without_extended_cascading),
		cmocka_unit_test(example_intent_refused_on_northwood),
		cmocka_unit_test(explain_odd_writes),
		cmocka_unit_test(explain_ti_event_bits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
