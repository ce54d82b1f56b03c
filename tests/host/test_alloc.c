/*
 * test_alloc.c - the (ESCR, counter) planner.
 *
 * Besides hand-written cases from the PMU reference, every pair and every
 * triple of events is checked against an independent brute-force search
 * written here from the binding rules (PMU reference 3.1, quirks of 9.5 and
 * 1.2 note 2), and every plan found is checked for its invariants.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "pmu/p4_alloc.h"
#include "pmu/p4_regs.h"

static struct p4_caps caps_of(uint8_t model, uint8_t stepping)
{
	struct p4_caps c;

	assert_true(p4_caps_lookup(&(struct p4_sig){ 15, model, stepping }, &c));
	return c;
}

static struct p4_request req_of(const char *spec, enum p4_lp lp)
{
	struct p4_request r = { 0 };
	struct p4_spec_error err;

	if (p4_spec_parse(spec, NULL, &r.spec, &err))
		fail_msg("%s: %s", spec, err.msg);
	r.lp = lp;
	return r;
}

static void single_event_non_ht(void **state)
{
	struct p4_caps caps = caps_of(4, 1);
	struct p4_alloc_ctx ctx = { &caps, false, P4_SPLIT_GLOBAL };
	struct p4_request r = req_of("global_power_events:running:period=1000", P4_LP0);
	struct p4_plan plan;
	struct p4_alloc_error err;

	assert_int_equal(p4_alloc_plan(&ctx, &r, 1, &plan, &err), 0);
	assert_int_equal(plan.slot[0].escr, P4_FSB_ESCR0);
	assert_int_equal(plan.slot[0].counter, P4_BPU_COUNTER0);
	assert_int_equal(plan.slot[0].escr_value, 0x2600020c);	/* PMU reference 2.4 */
	assert_int_equal(plan.slot[0].cccr_value, 0x0403d000);	/* sampling: OVF_PMI_T0 */
	assert_int_equal(plan.slot[0].preset, (1ull << 40) - 1000);
}

/* F3: FORCE_OVF with a PMI at CPL 0 livelocks a real P4: refused; at :u, or without a PMI, fine. */
static void force_ovf_with_a_pmi_only_at_user_level(void **state)
{
	struct p4_caps caps = caps_of(4, 1);
	struct p4_alloc_ctx ctx = { &caps, false, P4_SPLIT_GLOBAL };
	struct p4_request r = req_of("instr_retired:force_ovf", P4_LP0);
	struct p4_plan plan;
	struct p4_alloc_error err;

	r.pmi = P4_PMI_LP0;
	assert_int_equal(p4_alloc_plan(&ctx, &r, 1, &plan, &err), -1);
	assert_non_null(strstr(err.msg, "FORCE_OVF with an overflow PMI counts at CPL 0"));
	r = req_of("instr_retired:k:force_ovf", P4_LP0);
	r.pmi = P4_PMI_LP0;
	assert_int_equal(p4_alloc_plan(&ctx, &r, 1, &plan, &err), -1);
	r = req_of("instr_retired:u:force_ovf", P4_LP0);
	r.pmi = P4_PMI_LP0;
	assert_int_equal(p4_alloc_plan(&ctx, &r, 1, &plan, &err), 0);
	assert_true(plan.slot[0].cccr_value & CCCR_FORCE_OVF);
	r = req_of("instr_retired:k:force_ovf", P4_LP0);	/* no PMI: the flag alone */
	r.pmi = P4_PMI_NONE;
	assert_int_equal(p4_alloc_plan(&ctx, &r, 1, &plan, &err), 0);
}

/*
 * G1/G4: a sampler counting CPL 0 whose period is no longer than the
 * handler's tail (P4_PMI_TAIL_MAX) is refused for the same reason; one
 * event more, or :u, or a cascade starter's "after N", is fine. Each other
 * CPL-0 sampler of the plan lengthens the bound by P4_PMI_TAIL_EACH (the
 * same PMI may restart them after it); a :u sampler does not.
 */
static void short_kernel_periods_are_refused(void **state)
{
	struct p4_caps caps = caps_of(4, 1);
	struct p4_alloc_ctx ctx = { &caps, false, P4_SPLIT_GLOBAL };
	struct p4_request r = req_of("instr_retired:period=32", P4_LP0), two[2];
	struct p4_plan plan;
	struct p4_alloc_error err;
	char text[320];

	assert_int_equal(P4_PMI_TAIL_MAX, 32);
	assert_int_equal(P4_PMI_TAIL_EACH, 16);
	assert_int_equal(p4_alloc_plan(&ctx, &r, 1, &plan, &err), -1);
	assert_non_null(strstr(err.msg, "a period of at most 32 counted at CPL 0"));
	assert_non_null(strstr(err.msg, "use a period above 32, or count at :u"));
	r = req_of("instr_retired:k:period=20", P4_LP0);
	assert_int_equal(p4_alloc_plan(&ctx, &r, 1, &plan, &err), -1);
	r = req_of("global_power_events:running:period=1", P4_LP0);
	assert_int_equal(p4_alloc_plan(&ctx, &r, 1, &plan, &err), -1);
	r = req_of("instr_retired:period=33", P4_LP0);
	assert_int_equal(p4_alloc_plan(&ctx, &r, 1, &plan, &err), 0);
	r = req_of("instr_retired:u:period=1", P4_LP0);
	assert_int_equal(p4_alloc_plan(&ctx, &r, 1, &plan, &err), 0);
	/* two CPL-0 samplers: 32 + 16 */
	two[0] = req_of("instr_retired:period=48", P4_LP0);
	two[1] = req_of("branch_retired:mmtp:period=1000", P4_LP0);
	assert_int_equal(p4_alloc_plan(&ctx, two, 2, &plan, &err), -1);
	assert_non_null(strstr(err.msg, "a period of at most 48 counted at CPL 0"));
	assert_non_null(strstr(err.msg, "with 2 counters that count CPL 0 and interrupt"));
	two[0] = req_of("instr_retired:period=49", P4_LP0);
	assert_int_equal(p4_alloc_plan(&ctx, two, 2, &plan, &err), 0);
	two[0] = req_of("instr_retired:period=33", P4_LP0);
	two[1] = req_of("branch_retired:mmtp:u:period=1000", P4_LP0);	/* :u: not counted */
	assert_int_equal(p4_alloc_plan(&ctx, two, 2, &plan, &err), 0);
	two[0] = req_of("instr_retired:period=5", P4_LP0);	/* starts #1 after 5 */
	two[1] = req_of("branch_retired:mmtp", P4_LP0);
	two[1].role = P4_ROLE_CASCADE;
	two[1].started_by = 0;
	assert_int_equal(p4_alloc_plan(&ctx, two, 2, &plan, &err), 0);
	assert_null(p4_pmi_refusal(&two[0].spec, false, 1, text, sizeof(text)));	/* no PMI */
	assert_non_null(p4_pmi_refusal(&two[0].spec, true, 1, text, sizeof(text)));
	assert_int_equal(p4_pmi_tail_bound(0), 32);
	assert_int_equal(p4_pmi_tail_bound(3), 64);
}

static void counter_1_is_never_used(void **state)
{
	struct p4_caps caps = caps_of(4, 1);
	struct p4_alloc_ctx ctx = { &caps, false, P4_SPLIT_GLOBAL };
	struct p4_request r[4] = {
		req_of("global_power_events", P4_LP0), req_of("ITLB_reference", P4_LP0),
		req_of("BPU_fetch_request", P4_LP0), req_of("MOB_load_replay", P4_LP0),
	};
	struct p4_plan plan;
	struct p4_alloc_error err;

	assert_int_equal(p4_alloc_plan(&ctx, r, 3, &plan, &err), 0);
	for (int i = 0; i < 3; i++)
		assert_int_not_equal(plan.slot[i].counter, P4_BPU_COUNTER1);
	assert_int_equal(p4_alloc_plan(&ctx, r, 4, &plan, &err), -1);
	assert_int_equal(err.nconflict, 4);
	assert_non_null(strstr(err.msg, "only 3 counters can count them: 0 2 3"));
}

static void fsb_escr1_below_f27h(void **state)
{
	struct p4_caps old = caps_of(2, 6), newer = caps_of(2, 7);
	struct p4_alloc_ctx ctx = { &old, false, P4_SPLIT_GLOBAL };
	struct p4_request r = req_of("IOQ_active_entries", P4_LP0);
	struct p4_plan plan;
	struct p4_alloc_error err;

	assert_int_equal(p4_alloc_plan(&ctx, &r, 1, &plan, &err), -1);
	assert_non_null(strstr(err.msg, "#1 IOQ_active_entries"));
	assert_non_null(strstr(err.msg, "none of its ESCRs is usable"));
	ctx.caps = &newer;
	assert_int_equal(p4_alloc_plan(&ctx, &r, 1, &plan, &err), 0);
	assert_int_equal(plan.slot[0].escr, P4_FSB_ESCR1);
	assert_int_equal(plan.slot[0].counter, P4_BPU_COUNTER2);
}

static void model_gating(void **state)
{
	struct p4_caps northwood = caps_of(2, 9), prescott = caps_of(3, 3);
	struct p4_alloc_ctx ctx = { &northwood, false, P4_SPLIT_GLOBAL };
	struct p4_request r = req_of("instr_completed", P4_LP0);
	struct p4_plan plan;
	struct p4_alloc_error err;

	assert_int_equal(p4_alloc_plan(&ctx, &r, 1, &plan, &err), -1);
	assert_non_null(strstr(err.msg, "models 3, 4, 6"));
	ctx.caps = &prescott;
	assert_int_equal(p4_alloc_plan(&ctx, &r, 1, &plan, &err), 0);
	assert_int_equal(plan.slot[0].escr, P4_CRU_ESCR0);
}

static void escr_shared_only_by_identical_settings(void **state)
{
	struct p4_caps caps = caps_of(4, 1);
	struct p4_alloc_ctx ctx = { &caps, false, P4_SPLIT_GLOBAL };
	struct p4_request same[7], diff[3];
	struct p4_plan plan;
	struct p4_alloc_error err;

	for (int i = 0; i < 7; i++)
		same[i] = req_of("instr_retired", P4_LP0);
	/* six counters (12-17) reach CRU_ESCR0/1; identical settings share them */
	assert_int_equal(p4_alloc_plan(&ctx, same, 6, &plan, &err), 0);
	assert_int_equal(p4_alloc_plan(&ctx, same, 7, &plan, &err), -1);

	diff[0] = req_of("instr_retired:nbogusntag", P4_LP0);
	diff[1] = req_of("instr_retired:nbogustag", P4_LP0);
	diff[2] = req_of("instr_retired:bogusntag", P4_LP0);
	assert_int_equal(p4_alloc_plan(&ctx, diff, 2, &plan, &err), 0);
	assert_int_not_equal(plan.slot[0].escr, plan.slot[1].escr);
	assert_int_equal(p4_alloc_plan(&ctx, diff, 3, &plan, &err), -1);
	assert_int_equal(err.nconflict, 3);
	assert_non_null(strstr(err.msg, "compete for CRU_ESCR0 CRU_ESCR1 with different settings"));
}

static void ht_splits(void **state)
{
	struct p4_caps caps = caps_of(4, 1);
	struct p4_alloc_ctx ctx = { &caps, true, P4_SPLIT_LINUX };
	struct p4_request r[3] = {
		req_of("instr_retired", P4_LP1), req_of("instr_retired", P4_LP0),
		req_of("IOQ_active_entries", P4_LP0),
	};
	struct p4_plan plan;
	struct p4_alloc_error err;

	assert_int_equal(p4_alloc_plan(&ctx, r, 3, &plan, &err), 0);
	assert_int_equal(plan.slot[0].escr, P4_CRU_ESCR1);
	assert_true(plan.slot[0].counter == 14 || plan.slot[0].counter == 15 ||
		    plan.slot[0].counter == 17);
	assert_int_equal(plan.slot[0].escr_value & 0xf, 0x3);	/* T1_OS|T1_USR */
	assert_int_equal(plan.slot[1].escr, P4_CRU_ESCR0);
	assert_int_equal(plan.slot[1].escr_value & 0xf, 0xc);	/* T0_OS|T0_USR */
	assert_int_equal(plan.slot[2].escr, P4_FSB_ESCR1);	/* single-ESCR event: shared */

	ctx.split = P4_SPLIT_GLOBAL;
	assert_int_equal(p4_alloc_plan(&ctx, r, 1, &plan, &err), 0);
	assert_int_equal(plan.slot[0].escr, P4_CRU_ESCR0);	/* any ESCR may count LP1 */
	assert_int_equal(plan.slot[0].escr_value & 0xf, 0x3);

	ctx.ht = false;
	assert_int_equal(p4_alloc_plan(&ctx, r, 1, &plan, &err), -1);
	assert_non_null(strstr(err.msg, "Hyper-Threading"));
}

static void pebs_counters(void **state)
{
	struct p4_caps caps = caps_of(4, 1);
	struct p4_alloc_ctx ctx = { &caps, true, P4_SPLIT_GLOBAL };
	struct p4_request r[3] = {
		req_of("replay_event:nbogus:period=1000", P4_LP0),
		req_of("front_end_event:period=1000", P4_LP1),
		req_of("execution_event:period=1000", P4_LP0),
	};
	struct p4_plan plan;
	struct p4_alloc_error err;

	for (int i = 0; i < 3; i++)
		r[i].role = P4_ROLE_PEBS;
	assert_int_equal(p4_alloc_plan(&ctx, r, 2, &plan, &err), 0);
	assert_int_equal(plan.slot[0].counter, P4_IQ_COUNTER4);	/* IQ_CCCR4 for LP0 */
	assert_int_equal(plan.slot[1].counter, P4_IQ_COUNTER5);	/* IQ_CCCR5 for LP1 */
	assert_true(plan.pebs);
	assert_int_equal(p4_alloc_plan(&ctx, r, 3, &plan, &err), -1);
	assert_int_equal(err.nconflict, 2);
	assert_int_equal(err.conflict[0], 0);
	assert_int_equal(err.conflict[1], 2);

	r[0] = req_of("instr_retired", P4_LP0);
	r[0].role = P4_ROLE_PEBS;
	assert_int_equal(p4_alloc_plan(&ctx, r, 1, &plan, &err), -1);
	assert_non_null(strstr(err.msg, "PEBS works only"));
}

static void cascade_pairs(void **state)
{
	struct p4_caps caps = caps_of(4, 1);
	struct p4_alloc_ctx ctx = { &caps, false, P4_SPLIT_GLOBAL };
	struct p4_request r[2] = {
		req_of("global_power_events:period=200", P4_LP0),
		req_of("ITLB_reference:period=400", P4_LP0),
	};
	struct p4_plan plan;
	struct p4_alloc_error err;

	r[1].role = P4_ROLE_CASCADE;
	r[1].started_by = 0;
	assert_int_equal(p4_alloc_plan(&ctx, r, 2, &plan, &err), 0);
	assert_non_null(p4_cascade_find(plan.slot[0].counter, plan.slot[1].counter));
	assert_true(plan.slot[1].cccr_value & (1u << 30));	/* cascade */
	assert_false(plan.slot[1].cccr_value & (1u << 12));	/* waits, disabled */
	assert_true(plan.slot[0].cccr_value & (1u << 12));
	assert_false(plan.slot[0].cccr_value & (1u << 26));	/* the starter gives no PMI */
	assert_true(plan.slot[1].cccr_value & (1u << 26));

	/* no link between the MS and BPU groups */
	r[0] = req_of("tc_ms_xfer:period=200", P4_LP0);
	assert_int_equal(p4_alloc_plan(&ctx, r, 2, &plan, &err), -1);
	assert_int_equal(err.nconflict, 2);
	assert_non_null(strstr(err.msg, "linked for cascading"));
}

/* ---- exhaustive pairs and triples against an independent brute force ---- */

static bool bf_ok_escr(const struct p4_caps *caps, enum p4_escr e)
{
	if (e == P4_ESCR_NONE)
		return false;
	if (e == P4_IQ_ESCR0 || e == P4_IQ_ESCR1)
		return caps->iq_escr01;
	if (e == P4_FSB_ESCR1)
		return caps->fsb_escr1_ok;
	return true;
}

static bool bf_search(const struct p4_caps *caps, const enum p4_event *ev, const uint64_t *val,
		      unsigned n, unsigned i, uint32_t used, int *escr_owner)
{
	if (i == n)
		return true;
	for (int side = 0; side < 2; side++) {
		enum p4_escr e = p4_events[ev[i]].escrs[side];

		if (!bf_ok_escr(caps, e) || (escr_owner[e] >= 0 && val[escr_owner[e]] != val[i]))
			continue;
		for (int c = 0; c < P4_NCOUNTER; c++) {
			int saved = escr_owner[e];

			if (c == 1 || (used & (1u << c)) || !(p4_escrs[e].counters & (1u << c)))
				continue;
			escr_owner[e] = (int)i;
			if (bf_search(caps, ev, val, n, i + 1, used | (1u << c), escr_owner))
				return true;
			escr_owner[e] = saved;
		}
	}
	return false;
}

static void check_plan(const struct p4_plan *plan)
{
	for (unsigned i = 0; i < plan->n; i++) {
		assert_true(p4_event_uses_escr(plan->req[i].spec.event, plan->slot[i].escr));
		assert_true(p4_escrs[plan->slot[i].escr].counters & (1u << plan->slot[i].counter));
		for (unsigned k = i + 1; k < plan->n; k++) {
			assert_int_not_equal(plan->slot[i].counter, plan->slot[k].counter);
			if (plan->slot[i].escr == plan->slot[k].escr)
				assert_int_equal(plan->slot[i].escr_value, plan->slot[k].escr_value);
		}
	}
}

static void compare_with_brute_force(const struct p4_caps *caps, const enum p4_event *ev, unsigned n)
{
	struct p4_alloc_ctx ctx = { caps, false, P4_SPLIT_GLOBAL };
	struct p4_request r[3] = { 0 };
	uint64_t val[3];
	int owner[P4_NESCR];
	struct p4_plan plan;
	struct p4_alloc_error err;
	bool bf;
	int got;

	for (unsigned i = 0; i < n; i++) {
		r[i].spec = (struct p4_spec){ .event = ev[i], .mask = p4_event_valid_mask(ev[i]),
					      .usr = true, .os = true };
		val[i] = p4_escr_encode(&r[i].spec, P4_LP0, false);
	}
	for (int e = 0; e < P4_NESCR; e++)
		owner[e] = -1;
	if (p4_events[ev[0]].need && !caps->instr_completed)
		return;
	bf = bf_search(caps, ev, val, n, 0, 0, owner);
	got = p4_alloc_plan(&ctx, r, n, &plan, &err);
	for (unsigned i = 0; i < n; i++)
		if (p4_events[ev[i]].need && !caps->instr_completed)
			bf = false;
	if ((got == 0) != bf)
		fail_msg("%s/%s/%s: planner %d, brute force %d (%s)", p4_events[ev[0]].name,
			 p4_events[ev[1 % n]].name, p4_events[ev[2 % n]].name, got, bf, err.msg);
	if (got == 0)
		check_plan(&plan);
	else
		assert_true(err.nconflict >= 1 && err.nconflict <= n);
}

static void all_pairs_and_triples(void **state)
{
	static const uint8_t models[][2] = { { 2, 5 }, { 4, 1 } };

	for (unsigned m = 0; m < 2; m++) {
		struct p4_caps caps = caps_of(models[m][0], models[m][1]);

		for (int a = 0; a < P4_NEVENT; a++)
			for (int b = a; b < P4_NEVENT; b++) {
				enum p4_event ev[3] = { a, b, b };

				compare_with_brute_force(&caps, ev, 2);
				for (int c = b; c < P4_NEVENT; c += 3) {
					ev[2] = c;
					compare_with_brute_force(&caps, ev, 3);
				}
			}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(single_event_non_ht),
		cmocka_unit_test(counter_1_is_never_used),
		cmocka_unit_test(force_ovf_with_a_pmi_only_at_user_level),
		cmocka_unit_test(short_kernel_periods_are_refused),
		cmocka_unit_test(fsb_escr1_below_f27h),
		cmocka_unit_test(model_gating),
		cmocka_unit_test(escr_shared_only_by_identical_settings),
		cmocka_unit_test(ht_splits),
		cmocka_unit_test(pebs_counters),
		cmocka_unit_test(cascade_pairs),
		cmocka_unit_test(all_pairs_and_triples),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
