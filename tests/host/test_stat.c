/*
 * test_stat.c - the pure side of `stat` and `explain`: statistics, option
 * parsing, the :t0=/:t1= qualifiers, MSR=VALUE words, and the requests a
 * command line turns into (defaults, cascades, conflicts).
 *
 * Expected values come from the definitions: nanoBench's trimmed mean
 * drops floor(n/5) values at each end; ESCR bits 3:0 are T0_OS T0_USR
 * T1_OS T1_USR (PMU reference 2.1); cascade links and the cascade-PMI erratum
 * of 0F_02 from SDM 18.15.5.6/18.15.5.7.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "lib/stats.h"
#include "pmu/p4_caps.h"
#include "pmu/p4_regs.h"
#include "shell/stat_opts.h"

static char err[1024];

/* ---- statistics ---------------------------------------------------------- */

static void stats_odd_count(void **state)
{
	uint64_t v[] = { 9, 1, 5 };
	struct stats_summary s;

	stats_summarise(v, 3, &s);
	assert_int_equal(s.min, 100);
	assert_int_equal(s.median, 500);
	assert_int_equal(s.max, 900);
	assert_int_equal(s.trimmed, 0);		/* fewer than 5 values: nothing dropped */
	assert_int_equal(s.tmean, 500);
}

static void stats_even_median_is_midpoint(void **state)
{
	uint64_t v[] = { 4, 1, 2, 3 };
	struct stats_summary s;

	stats_summarise(v, 4, &s);
	assert_int_equal(s.median, 250);
	assert_int_equal(s.tmean, 250);
}

static void stats_trimmed_mean_drops_a_fifth_each_end(void **state)
{
	/* 10 values: drop 2 low (1, 2) and 2 high (1000, 2000); mean of 10..15 = 12.5 */
	uint64_t v[] = { 2000, 10, 11, 1, 12, 13, 1000, 14, 15, 2 };
	struct stats_summary s;

	stats_summarise(v, 10, &s);
	assert_int_equal(s.trimmed, 2);
	assert_int_equal(s.tmean, 1250);
	assert_int_equal(s.min, 100);
	assert_int_equal(s.max, 200000);
	assert_int_equal(s.median, 1250);	/* (12 + 13) / 2 */
}

static void stats_subtract_and_format(void **state)
{
	char buf[32];
	struct stats_summary s = { .min = 300, .median = 450, .tmean = 433, .max = 900 };

	stats_subtract(&s, 500);
	stats_format(s.min, buf, sizeof(buf));
	assert_string_equal(buf, "-2");
	stats_format(s.median, buf, sizeof(buf));
	assert_string_equal(buf, "-0.50");
	stats_format(s.tmean, buf, sizeof(buf));
	assert_string_equal(buf, "-0.67");
	stats_format(s.max, buf, sizeof(buf));
	assert_string_equal(buf, "4");
	stats_format(300550, buf, sizeof(buf));
	assert_string_equal(buf, "3005.50");
}

/* ---- options --------------------------------------------------------------- */

static int parse(struct stat_opts *o, const char *line)
{
	static char copy[512];
	static char *argv[32];
	int argc = 0;
	char *p = copy;

	strcpy(copy, line);
	while (*p) {
		while (*p == ' ')
			*p++ = '\0';
		if (!*p)
			break;
		argv[argc++] = p;
		while (*p && *p != ' ')
			p++;
	}
	return stat_opts_parse(argc, argv, o, err, sizeof(err));
}

static void opts_defaults(void **state)
{
	struct stat_opts o;

	assert_int_equal(parse(&o, "stat loop 100"), 0);
	assert_int_equal(o.nev, 0);
	assert_int_equal(o.repeats, 1);
	assert_int_equal(o.ring, 0);
	assert_false(o.baseline);
	assert_false(o.preset_set);
	assert_int_equal(o.workload, 1);
}

static void opts_all(void **state)
{
	struct stat_opts o;

	assert_int_equal(parse(&o, "stat -e instr_retired:u -e branch_retired --after 4096:instr_retired "
				   "-r 7 --ring 3 --baseline --preset 0xFFFFFFFF00 -- loop 5"), 0);
	assert_int_equal(o.nev, 2);
	assert_string_equal(o.ev[0].spec, "instr_retired:u");
	assert_int_equal(o.ev[0].after, 0);
	assert_string_equal(o.ev[1].spec, "branch_retired");
	assert_int_equal(o.ev[1].after, 4096);
	assert_string_equal(o.ev[1].after_spec, "instr_retired");
	assert_int_equal(o.repeats, 7);
	assert_int_equal(o.ring, 3);
	assert_true(o.baseline);
	assert_true(o.preset_set);
	assert_int_equal(o.preset, 0xFFFFFFFF00ull);
	assert_int_equal(o.workload, 15);	/* argv[15] = "loop" */
}

static void opts_errors(void **state)
{
	struct stat_opts o;

	assert_int_equal(parse(&o, "stat -x loop"), -1);
	assert_non_null(strstr(err, "unknown option '-x'"));
	assert_int_equal(parse(&o, "stat -e instr_retired"), -1);
	assert_non_null(strstr(err, "no workload"));
	assert_int_equal(parse(&o, "stat -r 0 loop"), -1);
	assert_int_equal(parse(&o, "stat -r 257 loop"), -1);
	assert_int_equal(parse(&o, "stat --ring 2 loop"), -1);
	assert_non_null(strstr(err, "0 or 3"));
	assert_int_equal(parse(&o, "stat --after 10:instr_retired -e x loop"), -1);
	assert_non_null(strstr(err, "must follow"));
	assert_int_equal(parse(&o, "stat -e a --after 10 loop"), -1);
	assert_int_equal(parse(&o, "stat -e a --after 0:b loop"), -1);
	/* below 2^39 the preset is not negative in 40 bits */
	assert_int_equal(parse(&o, "stat --preset 0x7FFFFFFFFF loop"), -1);
	assert_int_equal(parse(&o, "stat --preset 0x10000000000 loop"), -1);
	assert_int_equal(parse(&o, "stat -e"), -1);
}

/* ---- :t0= / :t1= ------------------------------------------------------------- */

static void tbits_split(void **state)
{
	char out[96];
	struct stat_tbits tb;

	assert_int_equal(stat_split_tbits("instr_retired:t0=u:NBOGUSNTAG:T1=k", out, sizeof(out), &tb,
					  err, sizeof(err)), 0);
	assert_string_equal(out, "instr_retired:NBOGUSNTAG");
	assert_true(tb.given);
	assert_int_equal(tb.t0, STAT_PRIV_USR);
	assert_int_equal(tb.t1, STAT_PRIV_OS);
	/* PMU reference 2.1: T0_USR = bit 2, T1_OS = bit 1 */
	assert_int_equal(stat_tbits_escr(&tb), 0x4 | 0x2);

	assert_int_equal(stat_split_tbits("instr_retired:t0=uk:t1=-", out, sizeof(out), &tb, err,
					  sizeof(err)), 0);
	assert_int_equal(stat_tbits_escr(&tb), 0x8 | 0x4);
	assert_int_equal(stat_split_tbits("instr_retired:t0", out, sizeof(out), &tb, err, sizeof(err)), 0);
	assert_string_equal(out, "instr_retired:t0");
	assert_false(tb.given);
	assert_int_equal(stat_split_tbits("instr_retired:t0=x", out, sizeof(out), &tb, err,
					  sizeof(err)), -1);
	assert_int_equal(stat_split_tbits("instr_retired:t1=", out, sizeof(out), &tb, err,
					  sizeof(err)), -1);
}

/* ---- explain words ------------------------------------------------------------- */

static void writes_manual_notation(void **state)
{
	char a[] = "3B8H=04000603H", b[] = "0x36c=0x04038800", c[] = "784=1";
	char *argv[] = { a, b, c };
	struct p4_msr_write w[4];
	unsigned n;

	assert_int_equal(stat_parse_writes(3, argv, w, 4, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 3);
	assert_int_equal(w[0].msr, 0x3b8);
	assert_int_equal(w[0].value, 0x04000603);
	assert_int_equal(w[1].msr, 0x36c);
	assert_int_equal(w[1].value, 0x04038800);
	assert_int_equal(w[2].msr, 784);
	assert_int_equal(stat_parse_writes(1, (char *[]){ "36CH" }, w, 4, &n, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "MSR=VALUE"));
	assert_int_equal(stat_parse_writes(1, (char *[]){ "36CH=zz" }, w, 4, &n, err, sizeof(err)), -1);
	assert_int_equal(stat_parse_writes(0, NULL, w, 4, &n, err, sizeof(err)), -1);
}

/* ---- requests and plans ---------------------------------------------------------- */

static void caps_for(uint8_t model, uint8_t stepping, struct p4_caps *caps)
{
	struct p4_sig sig = { 0x0f, model, stepping };

	assert_true(p4_caps_lookup(&sig, caps));
}

static int plan(const char *line, const struct p4_caps *caps, bool ht, struct stat_reqs *r,
		struct p4_plan *p)
{
	struct stat_opts o;
	struct p4_alloc_ctx ctx = { .caps = caps, .ht = ht, .split = P4_SPLIT_GLOBAL };
	struct p4_alloc_error e;

	assert_int_equal(parse(&o, line), 0);
	if (stat_build_requests(&o, caps, r, err, sizeof(err)))
		return -1;
	if (p4_alloc_plan(&ctx, r->req, r->n, p, &e)) {
		strcpy(err, e.msg);
		return -2;
	}
	return stat_apply_tbits(r, p, err, sizeof(err));
}

/* --cpu and --pair (Hyper-Threading): parsing, and whose events a plain spec counts. */
static void opts_cpu_and_pair(void **state)
{
	struct stat_opts o;

	assert_int_equal(parse(&o, "stat --cpu 1 loop 5"), 0);
	assert_int_equal(o.cpu, STAT_CPU_1);
	assert_int_equal(o.pair, 0);
	assert_int_equal(o.workload_end, 5);	/* argc: no pair */
	assert_int_equal(parse(&o, "stat -e instr_retired --ring 3 --stagger --pair loop 5 -- --ring 0 "
				   "calls 2 3"), 0);
	assert_int_equal(o.workload, 7);	/* loop */
	assert_int_equal(o.workload_end, 9);	/* the "--" */
	assert_int_equal(o.pair, 12);		/* calls */
	assert_int_equal(o.ring, 3);
	assert_int_equal(o.ring_pair, 0);
	assert_true(o.stagger);
	assert_int_equal(parse(&o, "stat --pair loop 5 -- loop 6"), 0);
	assert_int_equal(o.ring_pair, 0);
	assert_int_equal(parse(&o, "stat --cpu 2 loop"), -1);
	assert_non_null(strstr(err, "0, 1 or both"));
	assert_int_equal(parse(&o, "stat --pair loop 5"), -1);
	assert_non_null(strstr(err, "missing '-- WORKLOAD_B'"));
	assert_int_equal(parse(&o, "stat --pair loop 5 --"), -1);
	assert_int_equal(parse(&o, "stat --pair loop 5 -- loop 1 -- loop 2"), -1);
	assert_int_equal(parse(&o, "stat --cpu 1 --pair loop 5 -- loop 1"), -1);
	assert_int_equal(parse(&o, "stat --stagger loop 5"), -1);
}

static void requests_follow_the_target_lp(void **state)
{
	struct p4_caps caps;
	struct stat_reqs r;
	struct stat_opts o;

	caps_for(4, 1, &caps);
	assert_int_equal(parse(&o, "stat -e instr_retired -e instr_retired:t0 --cpu 1 loop 5"), 0);
	assert_int_equal(stat_build_requests(&o, &caps, &r, err, sizeof(err)), 0);
	assert_int_equal(r.req[0].lp, P4_LP1);
	assert_int_equal(r.req[0].pmi, P4_PMI_LP1);	/* LP1's handler extends LP1's counter */
	assert_int_equal(r.req[1].lp, P4_LP0);
	assert_int_equal(r.req[1].pmi, P4_PMI_LP0);
	assert_int_equal(parse(&o, "stat -e instr_retired --pair loop 5 -- loop 6"), 0);
	assert_int_equal(stat_build_requests(&o, &caps, &r, err, sizeof(err)), 0);
	assert_int_equal(r.req[0].lp, P4_LP_BOTH);
}

/*
 * Example 18-2's intent under the per-thread split (PMU reference 3.2, 2.3):
 * LP0's instr_retired on counter 16 / CRU_ESCR0, LP1's on 17 / CRU_ESCR1
 * (the manual's 04000603H), started by CASCNT4INTO5.
 */
static void requests_example_18_2_working_pair(void **state)
{
	struct p4_caps caps;
	struct stat_reqs r;
	struct stat_opts o;
	struct p4_plan p;
	struct p4_alloc_error e;
	struct p4_alloc_ctx ctx = { .caps = &caps, .ht = true, .split = P4_SPLIT_LINUX };

	caps_for(4, 1, &caps);
	assert_int_equal(parse(&o, "stat -e instr_retired:t1 --after 4096:instr_retired:t0 --pair "
				   "loop 1 -- loop 1"), 0);
	assert_int_equal(stat_build_requests(&o, &caps, &r, err, sizeof(err)), 0);
	assert_int_equal(p4_alloc_plan(&ctx, r.req, r.n, &p, &e), 0);
	assert_int_equal(p.slot[0].counter, P4_IQ_COUNTER4);
	assert_int_equal(p.slot[0].escr, P4_CRU_ESCR0);
	assert_int_equal(p.slot[0].escr_value, 0x0400060C);
	assert_int_equal(p.slot[1].counter, P4_IQ_COUNTER5);
	assert_int_equal(p.slot[1].escr, P4_CRU_ESCR1);
	assert_int_equal(p.slot[1].escr_value, 0x04000603);
	assert_true(p.slot[1].cccr_value & CCCR_EXT_CASCADE);
	assert_false(p.slot[1].cccr_value & CCCR_ENABLE);
	assert_int_equal(p.slot[0].preset, (UINT64_C(1) << 40) - 4096);
}

static void requests_default_pair(void **state)
{
	struct p4_caps caps;
	struct stat_reqs r;
	struct p4_plan p;

	caps_for(4, 1, &caps);
	assert_int_equal(plan("stat loop 10", &caps, false, &r, &p), 0);
	assert_true(r.defaults);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.req[0].spec.event, P4_EV_GLOBAL_POWER_EVENTS);
	assert_int_equal(r.req[1].spec.event, P4_EV_INSTR_RETIRED);
	/* PMU reference 2.4: global_power_events lives on FSB_ESCR0/1, instr_retired on CRU_ESCR0/1 */
	assert_true(p.slot[0].escr == P4_FSB_ESCR0 || p.slot[0].escr == P4_FSB_ESCR1);
	assert_true(p.slot[1].escr == P4_CRU_ESCR0 || p.slot[1].escr == P4_CRU_ESCR1);
	/* every counting request interrupts LP0 on overflow (the 64-bit extension) */
	assert_true(p.slot[0].cccr_value & CCCR_OVF_PMI_T0);
	assert_true(p.slot[1].cccr_value & CCCR_OVF_PMI_T0);
	assert_true(p.slot[1].cccr_value & CCCR_ENABLE);
}

static void requests_after_makes_a_cascade(void **state)
{
	struct p4_caps caps;
	struct stat_reqs r;
	struct p4_plan p;

	caps_for(4, 1, &caps);
	assert_int_equal(plan("stat -e instr_retired --after 100:instr_retired loop 10", &caps, false,
			      &r, &p), 0);
	assert_int_equal(r.n, 2);
	assert_true(r.starter[0]);
	assert_int_equal(r.req[0].spec.period, 100);
	assert_int_equal(r.req[1].role, P4_ROLE_CASCADE);
	assert_int_equal(r.req[1].started_by, 0);
	/* Example 18-1: the starter is preset to -N (40 bits) */
	assert_int_equal(p.slot[0].preset, (UINT64_C(1) << 40) - 100);
	assert_non_null(p.slot[1].link);
	assert_int_equal(p.slot[1].link->from, p.slot[0].counter);
	assert_false(p.slot[1].cccr_value & CCCR_ENABLE);	/* waits for the starter */
	assert_true(p.slot[1].cccr_value & (CCCR_CASCADE | CCCR_EXT_CASCADE));

	/* the same with :after=N on the second -e */
	assert_int_equal(plan("stat -e instr_retired:u -e instr_retired:after=7 loop 10", &caps, false,
			      &r, &p), 0);
	assert_int_equal(r.req[0].spec.period, 7);
	assert_int_equal(r.req[1].role, P4_ROLE_CASCADE);
}

static void requests_cascade_on_erratum_part_counts_40_bits(void **state)
{
	struct p4_caps caps;
	struct stat_reqs r;
	struct p4_plan p;

	caps_for(2, 5, &caps);		/* 0F_02: no PMI in cascade mode (SDM 18.15.5.7) */
	assert_int_equal(plan("stat -e instr_retired --after 5:instr_retired loop 10", &caps, false,
			      &r, &p), 0);
	assert_true(r.pmi_lost[1]);
	assert_false(p.slot[1].cccr_value & (CCCR_OVF_PMI_T0 | CCCR_OVF_PMI_T1));
}

static void requests_errors(void **state)
{
	struct p4_caps caps;
	struct stat_reqs r;
	struct p4_plan p;

	caps_for(4, 1, &caps);
	assert_int_equal(plan("stat -e nosuch loop", &caps, false, &r, &p), -1);
	assert_non_null(strstr(err, "'nosuch'"));
	assert_int_equal(plan("stat -e instr_retired:period=100 loop", &caps, false, &r, &p), -1);
	assert_non_null(strstr(err, "sampling"));
	assert_int_equal(plan("stat -e instr_retired:after=5 loop", &caps, false, &r, &p), -1);
	assert_non_null(strstr(err, "needs an -e before"));
	/* three ESCR settings, two CRU ESCRs (PMU reference 3.1): the planner names all three */
	assert_int_equal(plan("stat -e instr_retired:u -e instr_retired:k -e instr_retired:u:k:NBOGUSTAG "
			      "loop", &caps, false, &r, &p), -2);
	assert_non_null(strstr(err, "#1"));
	assert_non_null(strstr(err, "#2"));
	assert_non_null(strstr(err, "#3"));
	/* T1 bits are reserved without Hyper-Threading (PMU reference 2.1) */
	assert_int_equal(plan("stat -e instr_retired:t1=u loop", &caps, false, &r, &p), -1);
	assert_non_null(strstr(err, "Hyper-Threading"));
}

static void requests_tbits_reach_the_escr(void **state)
{
	struct p4_caps caps;
	struct stat_reqs r;
	struct p4_plan p;

	caps_for(4, 1, &caps);
	assert_int_equal(plan("stat -e instr_retired:t0=k:t1=u loop", &caps, true, &r, &p), 0);
	assert_int_equal(p.slot[0].escr_value & 0xf, 0x8 | 0x1);
	assert_int_equal(plan("stat -e instr_retired:t0=-:t1=- loop", &caps, true, &r, &p), 0);
	assert_int_equal(p.slot[0].escr_value & 0xf, 0);
}

static void sig_notation(void **state)
{
	struct p4_sig sig;

	assert_int_equal(stat_parse_sig("0F_04", &sig), 0);
	assert_int_equal(sig.family, 0x0f);
	assert_int_equal(sig.model, 4);
	assert_int_equal(sig.stepping, 1);
	assert_int_equal(stat_parse_sig("0f_02H:9", &sig), 0);
	assert_int_equal(sig.model, 2);
	assert_int_equal(sig.stepping, 9);
	assert_int_equal(stat_parse_sig("06_0F", &sig), 0);
	assert_int_equal(sig.family, 6);
	assert_int_equal(stat_parse_sig("0F04", &sig), -1);
	assert_int_equal(stat_parse_sig("0F_04X", &sig), -1);
	assert_int_equal(stat_parse_sig("0F_04:", &sig), -1);
	assert_int_equal(stat_parse_sig("", &sig), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stats_odd_count),
		cmocka_unit_test(stats_even_median_is_midpoint),
		cmocka_unit_test(stats_trimmed_mean_drops_a_fifth_each_end),
		cmocka_unit_test(stats_subtract_and_format),
		cmocka_unit_test(opts_defaults),
		cmocka_unit_test(opts_all),
		cmocka_unit_test(opts_errors),
		cmocka_unit_test(tbits_split),
		cmocka_unit_test(writes_manual_notation),
		cmocka_unit_test(requests_default_pair),
		cmocka_unit_test(requests_after_makes_a_cascade),
		cmocka_unit_test(requests_cascade_on_erratum_part_counts_40_bits),
		cmocka_unit_test(requests_errors),
		cmocka_unit_test(requests_tbits_reach_the_escr),
		cmocka_unit_test(sig_notation),
		cmocka_unit_test(opts_cpu_and_pair),
		cmocka_unit_test(requests_follow_the_target_lp),
		cmocka_unit_test(requests_example_18_2_working_pair),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
