/*
 * test_spec.c - event specs and the `events` listing.
 *
 * Expected mask values come from the fact sheet's event tables (4.1-4.3);
 * the default-mask rule is the one stated in pmu/p4_events.h.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "pmu/p4_spec.h"

static struct p4_spec parse_ok(const char *text, const struct p4_caps *caps)
{
	struct p4_spec s;
	struct p4_spec_error err;

	if (p4_spec_parse(text, caps, &s, &err) != 0)
		fail_msg("%s: %s", text, err.msg);
	return s;
}

/* Parse must fail at `pos`, leave *out alone, and mention `needle`. */
static void parse_bad(const char *text, const struct p4_caps *caps, unsigned pos,
		      const char *needle)
{
	struct p4_spec s, before;
	struct p4_spec_error err;

	memset(&s, 0xa5, sizeof(s));
	before = s;
	assert_int_equal(p4_spec_parse(text, caps, &s, &err), -1);
	assert_int_equal(err.pos, pos);
	assert_memory_equal(&s, &before, sizeof(s));
	if (!strstr(err.msg, needle))
		fail_msg("'%s' lacks '%s'", err.msg, needle);
	assert_null(strchr(err.msg, '\n'));
}

static void issue_examples(void **state)
{
	struct p4_spec s = parse_ok("instr_retired:nbogusntag:nbogustag:u", NULL);

	assert_int_equal(s.event, P4_EV_INSTR_RETIRED);
	assert_int_equal(s.mask, 0x3);		/* bits 0 and 1 */
	assert_false(s.mask_default);
	assert_true(s.usr);
	assert_false(s.os);
	assert_int_equal(s.thread, P4_THREAD_DEFAULT);

	s = parse_ok("global_power_events:running", NULL);
	assert_int_equal(s.event, P4_EV_GLOBAL_POWER_EVENTS);
	assert_int_equal(s.mask, 0x1);
	assert_true(s.usr && s.os);

	s = parse_ok("execution_event:nbogus0:cmp=1:edge", NULL);
	assert_int_equal(s.event, P4_EV_EXECUTION_EVENT);
	assert_int_equal(s.mask, 0x1);
	assert_true(s.compare && s.edge);
	assert_false(s.complement);
	assert_int_equal(s.threshold, 1);
}

static void case_insensitive_and_modifiers(void **state)
{
	struct p4_spec s = parse_ok("INSTR_Retired:NBOGUSTAG:K:T1:compl:period=1000H:force_ovf",
				    NULL);

	assert_int_equal(s.mask, 0x2);
	assert_true(s.os);
	assert_false(s.usr);
	assert_int_equal(s.thread, P4_THREAD_T1);
	assert_true(s.complement && s.compare);
	assert_int_equal(s.period, 4096);
	assert_true(s.force_ovf);

	s = parse_ok("uops_retired:period=0x1000:after=4096:t0", NULL);
	assert_int_equal(s.period, 4096);
	assert_int_equal(s.after, 4096);
	assert_int_equal(s.thread, P4_THREAD_T0);
	s = parse_ok("replay_event:nbogus:pebs", NULL);
	assert_true(s.pebs);
	s = parse_ok("packed_SP_uop:all:tag0:tag2", NULL);
	assert_int_equal(s.tag_value, 0x5);
	/* a tag alone selects the default mask (ALL): an empty mask would tag nothing */
	s = parse_ok("x87_FP_uop:tag0", NULL);
	assert_int_equal(s.tag_value, 0x1);
	assert_int_equal(s.mask, p4_events[P4_EV_X87_FP_UOP].default_mask);
	assert_true(s.mask_default);
}

static void default_masks(void **state)
{
	struct p4_spec s = parse_ok("instr_retired", NULL);
	char buf[128];

	assert_true(s.mask_default);
	assert_int_equal(s.mask, 0x3);		/* NBOGUSNTAG|NBOGUSTAG, SDM Example 18-2 */
	assert_true(s.usr && s.os);
	p4_spec_format(&s, buf, sizeof(buf));
	assert_string_equal(buf, "instr_retired:NBOGUSNTAG:NBOGUSTAG:u:k");

	s = parse_ok("branch_retired", NULL);
	assert_int_equal(s.mask, 0xf);		/* all of MMNP MMNM MMTP MMTM */
	s = parse_ok("BSQ_cache_reference", NULL);
	assert_int_equal(s.mask, 0x73f);	/* bits 0-5, 8, 9, 10 */
	s = parse_ok("machine_clear", NULL);
	assert_int_equal(s.mask, 0x1);		/* CLEAR */
	s = parse_ok("IOQ_allocation", NULL);
	assert_int_equal(s.mask & 0x1f, 0x01);	/* request type field 00001b */
	assert_true(s.edge && s.compare);	/* SDM: use Edge for IOQ_allocation */
	s = parse_ok("IOQ_allocation:noedge", NULL);
	assert_false(s.edge);
	s = parse_ok("SSE_input_assist", NULL);
	assert_int_equal(s.mask, 0x8000);	/* ALL = bit 15 */
}

static void bad_tokens_point_at_themselves(void **state)
{
	parse_bad("instr_retired:nbogus:u", NULL, 14, "column 15");
	parse_bad("instr_retired:nbogus:u", NULL, 14, "NBOGUSNTAG NBOGUSTAG BOGUSNTAG BOGUSTAG");
	parse_bad("instr_retird:u", NULL, 0, "instr_retired");
	parse_bad("zzz", NULL, 0, "global_power_events");
	parse_bad("", NULL, 0, "missing event name");
	parse_bad("instr_retired::u", NULL, 14, "empty token");
	parse_bad("execution_event:cmp=16", NULL, 20, "0-15");
	parse_bad("execution_event:cmp=x", NULL, 20, "0-15");
	parse_bad("instr_retired:t0:t1", NULL, 17, "only one of t0 and t1");
	parse_bad("instr_retired:period=0", NULL, 21, "period=");
	parse_bad("instr_retired:period=1099511627776", NULL, 21, "period=");	/* 2^40 */
	parse_bad("instr_retired:pebs", NULL, 14, "PEBS");
	parse_bad("instr_retired:tag0", NULL, 14, "unknown mask");
	parse_bad("FSB_data_activity:drdy_own:dbsy_drv:drdy_other", NULL, 36, "exclu");
	parse_bad("BSQ_allocation:u", NULL, 16, "REQ_TYPE0");
}

static void model_gating(void **state)
{
	struct p4_caps northwood, prescott;
	struct p4_spec s;

	assert_true(p4_caps_lookup(&(struct p4_sig){ 15, 2, 9 }, &northwood));
	assert_true(p4_caps_lookup(&(struct p4_sig){ 15, 3, 4 }, &prescott));
	parse_bad("instr_completed:nbogus", &northwood, 0, "models 3, 4 and 6");
	s = parse_ok("instr_completed:nbogus", &prescott);
	assert_int_equal(s.event, P4_EV_INSTR_COMPLETED);
	s = parse_ok("instr_completed", NULL);
	assert_int_equal(s.mask, 0x1);
}

static void format_round_trips(void **state)
{
	static const char *const specs[] = {
		"instr_retired:NBOGUSNTAG:u:t1",
		"execution_event:NBOGUS0:u:k:cmp=1:edge",
		"execution_event:NBOGUS0:NBOGUS1:u:k:cmp=15:compl",
		"replay_event:NBOGUS:k:pebs:period=4096",
		"packed_SP_uop:ALL:TAG1:u:k",
	};
	char buf[160];

	for (unsigned i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		struct p4_spec s = parse_ok(specs[i], NULL), again;

		p4_spec_format(&s, buf, sizeof(buf));
		assert_string_equal(buf, specs[i]);
		again = parse_ok(buf, NULL);
		assert_memory_equal(&s, &again, sizeof(s));
	}
}

/* Found by tests/fuzz/fuzz_spec.c: :noedge on an event that wants the edge
 * detector was dropped by the canonical form, which then re-parsed with edge on. */
static void format_keeps_noedge(void **state)
{
	static const char *const specs[] = { "IOQ_allocation:noedge", "IOQ_allocation:u:noedge:cmp=3" };
	char buf[160];

	for (unsigned i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		struct p4_spec s = parse_ok(specs[i], NULL), again;

		assert_false(s.edge);
		p4_spec_format(&s, buf, sizeof(buf));
		assert_non_null(strstr(buf, ":noedge"));
		again = parse_ok(buf, NULL);
		assert_true(s.mask_default && !again.mask_default);	/* the default mask is spelled out */
		again.mask_default = true;
		assert_memory_equal(&s, &again, sizeof(s));
	}
	/* the default (edge on) still formats as :edge */
	{
		struct p4_spec s = parse_ok("IOQ_allocation", NULL);

		assert_true(s.edge);
		p4_spec_format(&s, buf, sizeof(buf));
		assert_non_null(strstr(buf, ":edge"));
		assert_null(strstr(buf, "noedge"));
		assert_true(parse_ok(buf, NULL).edge);
	}
}

struct lines {
	int n;
	char all[8192];
};

static void collect(void *ctx, const char *s)
{
	struct lines *l = ctx;
	size_t len = strlen(l->all);

	l->n++;
	snprintf(l->all + len, sizeof(l->all) - len, "%s\n", s);
}

static void events_listing(void **state)
{
	struct lines l = { 0 };
	struct p4_caps northwood;

	assert_int_equal(p4_events_list(NULL, NULL, collect, &l), 47);
	/* and the 9 replay metrics and the 10 generic names under their headings */
	assert_int_equal(l.n, 47 + 1 + 9 + 1 + 10);
	/* fact sheet 5.5: 1stL_cache_load_miss_retired is 01000001H with MATRIX_VERT 1H */
	assert_non_null(strstr(l.all, "1stL_cache_load_miss_retired replay_event:NBOGUS, "
			       "PEBS_ENABLE 01000001H, MATRIX_VERT 1H"));
	assert_non_null(strstr(l.all, "split_load_retired           replay_event:NBOGUS, "
			       "PEBS_ENABLE 01000400H, MATRIX_VERT 1H, load_port_replay on SAAT_ESCR1"));
	assert_non_null(strstr(l.all, "global_power_events"));
	assert_non_null(strstr(l.all, "FSB_ESCR1(2,3)"));

	memset(&l, 0, sizeof(l));
	/* names containing "retired": instr_, uops_, branch_, mispred_branch_,
	 * retired_mispred_branch_type, retired_branch_type */
	assert_int_equal(p4_events_list("RETIRED", NULL, collect, &l), 6);
	assert_int_equal(l.n, 6);

	memset(&l, 0, sizeof(l));
	assert_int_equal(p4_events_list("branch_retired", NULL, collect, &l), 1);
	assert_non_null(strstr(l.all, "MMNP*=0"));
	assert_non_null(strstr(l.all, "CRU_ESCR2(12,13,16) / CRU_ESCR3(14,15,17)"));

	memset(&l, 0, sizeof(l));
	assert_true(p4_caps_lookup(&(struct p4_sig){ 15, 2, 9 }, &northwood));
	assert_int_equal(p4_events_list("instr_completed", &northwood, collect, &l), 1);
	assert_non_null(strstr(l.all, "not on this CPU"));

	memset(&l, 0, sizeof(l));
	assert_int_equal(p4_events_list("nosuchevent", NULL, collect, &l), 0);
	assert_int_equal(l.n, 0);
}

/*
 * perf's generic names bind as Linux's P4 backend binds them
 * (p4_general_events in arch/x86/events/intel/p4.c), bit for bit; the
 * expected masks are the SDM's mask bit numbers of the NetBurst events
 * (RUNNING 0; NBOGUSNTAG 0, BOGUSNTAG 2; RD_2ndL_HITS..
 * RD_3rdL_HITM 0-5, RD_2ndL_MISS 8, RD_3rdL_MISS 9, WR_2ndL_MISS 10;
 * CONDITIONAL..INDIRECT 1-4; NBOGUS 0; DRDY_DRV 0, DRDY_OWN 1).
 */
static void generic_names(void **state)
{
	static const struct {
		const char *name;
		enum p4_event ev;
		uint16_t mask;
	} want[] = {
		{ "cycles", P4_EV_GLOBAL_POWER_EVENTS, 0x1 },
		{ "cpu-cycles", P4_EV_GLOBAL_POWER_EVENTS, 0x1 },
		{ "clockticks", P4_EV_GLOBAL_POWER_EVENTS, 0x1 },
		{ "instructions", P4_EV_INSTR_RETIRED, 0x5 },
		{ "cache-references", P4_EV_BSQ_CACHE_REFERENCE, 0x3f },
		{ "cache-misses", P4_EV_BSQ_CACHE_REFERENCE, 0x700 },
		{ "branch-instructions", P4_EV_RETIRED_BRANCH_TYPE, 0x1e },
		{ "branches", P4_EV_RETIRED_BRANCH_TYPE, 0x1e },
		{ "branch-misses", P4_EV_MISPRED_BRANCH_RETIRED, 0x1 },
		{ "bus-cycles", P4_EV_FSB_DATA_ACTIVITY, 0x3 },
	};
	struct p4_spec s;
	char buf[128];

	assert_int_equal(sizeof(want) / sizeof(want[0]), P4_NALIAS);
	for (unsigned i = 0; i < P4_NALIAS; i++) {
		s = parse_ok(want[i].name, NULL);
		assert_int_equal(s.event, want[i].ev);
		assert_int_equal(s.mask, want[i].mask);
		assert_false(s.mask_default);
		assert_true(s.usr && s.os);
	}
	/* Linux sets CCCR edge and compare for bus-cycles */
	s = parse_ok("bus-cycles", NULL);
	assert_true(s.edge && s.compare);
	/* modifiers follow the name; case does not matter */
	s = parse_ok("Cycles:u:period=100000", NULL);
	assert_int_equal(s.event, P4_EV_GLOBAL_POWER_EVENTS);
	assert_true(s.usr);
	assert_false(s.os);
	assert_int_equal(s.period, 100000);
	s = parse_ok("instructions:k:t1", NULL);
	assert_int_equal(s.mask, 0x5);
	assert_true(s.os && !s.usr);
	assert_int_equal(s.thread, P4_THREAD_T1);
	/* mask bits add to the name's: the canonical form spells them out */
	s = parse_ok("instructions:NBOGUSTAG", NULL);
	assert_int_equal(s.mask, 0x7);
	s = parse_ok("cache-misses:u", NULL);
	p4_spec_format(&s, buf, sizeof(buf));
	assert_string_equal(buf, "BSQ_cache_reference:RD_2ndL_MISS:RD_3rdL_MISS:WR_2ndL_MISS:u");
	/* a bad modifier after a name is reported at its column */
	parse_bad("cycles:bogus", NULL, 7, "unknown mask or modifier");
	/* a near miss offers the generic names like it, not b2b_cycles alone */
	parse_bad("cycle", NULL, 0, " cycles");
	parse_bad("cycle", NULL, 0, "bus-cycles");
	parse_bad("cycle", NULL, 0, "b2b_cycles");
}

static void generic_names_listed(void **state)
{
	struct lines l = { 0 };

	assert_int_equal(p4_events_list("clockticks", NULL, collect, &l), 1);
	assert_non_null(strstr(l.all, "clockticks                   global_power_events:RUNNING  ("));
	assert_non_null(strstr(l.all, "cycles the processor is not stopped"));	/* the event's detail */

	memset(&l, 0, sizeof(l));
	assert_int_equal(p4_events_list("bus-cycles", NULL, collect, &l), 1);
	assert_non_null(strstr(l.all, "FSB_data_activity:DRDY_DRV:DRDY_OWN:edge"));

	/* "misses" names no event, two generic names */
	memset(&l, 0, sizeof(l));
	assert_int_equal(p4_events_list("misses", NULL, collect, &l), 2);
	assert_int_equal(l.n, 3);
	assert_non_null(strstr(l.all, "\nbranch-misses "));
	assert_non_null(strstr(l.all, "\ncache-misses "));

	/* the whole list names every one */
	memset(&l, 0, sizeof(l));
	p4_events_list(NULL, NULL, collect, &l);
	for (unsigned i = 0; i < P4_NALIAS; i++) {
		char row[40];

		snprintf(row, sizeof(row), "\n%-28s ", p4_aliases[i].name);
		assert_non_null(strstr(l.all, row));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(issue_examples),
		cmocka_unit_test(case_insensitive_and_modifiers),
		cmocka_unit_test(default_masks),
		cmocka_unit_test(bad_tokens_point_at_themselves),
		cmocka_unit_test(model_gating),
		cmocka_unit_test(format_round_trips),
		cmocka_unit_test(format_keeps_noedge),
		cmocka_unit_test(events_listing),
		cmocka_unit_test(generic_names),
		cmocka_unit_test(generic_names_listed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
