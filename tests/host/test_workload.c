/*
 * test_workload.c - the workload table and argument parsing (workload/workload.c).
 *
 * Expectations come from the table's documented parameters: names, defaults,
 * ranges, and the one-error-line rule for bad input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "workload/workload.h"

static int parse(const char *name, int argc, char **argv, struct workload_args *a, char *err)
{
	const struct workload *w = workload_find(name);

	assert_non_null(w);
	return workload_parse_args(w, argc, argv, a, err, 160);
}

static void every_workload_is_found_by_name(void **state)
{
	static const char *const names[] = { "empty", "loop", "branch", "calls", "indirect",
					     "memwalk", "copy", "spin", "halt", "synthetic",
					     "fault-user", "snippet", "fpmix", "chase", "fpassist",
					     "stores", "smc" };

	(void)state;
	assert_int_equal(sizeof(names) / sizeof(names[0]), WL_NWORKLOADS);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct workload *w = workload_find(names[i]);

		assert_non_null(w);
		assert_string_equal(w->name, names[i]);
		assert_ptr_equal(&workload_table[w->id], w);
	}
	assert_null(workload_find("loops"));
	assert_null(workload_find(""));
}

static void defaults_fill_omitted_parameters(void **state)
{
	struct workload_args a;
	char err[160];

	(void)state;
	assert_int_equal(parse("loop", 0, NULL, &a, err), 0);
	assert_int_equal(a.v[0], 1000);
	assert_int_equal(parse("memwalk", 0, NULL, &a, err), 0);
	assert_int_equal(a.v[0], 64 * 1024);
	assert_int_equal(a.v[1], 64);
	assert_int_equal(a.v[2], 1);
	assert_int_equal(parse("branch", 0, NULL, &a, err), 0);
	assert_int_equal(a.v[0], BRANCH_ALTERNATE);
}

static void numbers_in_every_spelling(void **state)
{
	char *hex[] = { "0x3E8" }, *manual[] = { "3E8H" }, *dec[] = { "1000" };
	struct workload_args a;
	char err[160];

	(void)state;
	assert_int_equal(parse("loop", 1, hex, &a, err), 0);
	assert_int_equal(a.v[0], 1000);
	assert_int_equal(parse("loop", 1, manual, &a, err), 0);
	assert_int_equal(a.v[0], 1000);
	assert_int_equal(parse("loop", 1, dec, &a, err), 0);
	assert_int_equal(a.v[0], 1000);
}

static void branch_patterns_and_seed(void **state)
{
	char *args[] = { "random", "500", "0x2545F4914F6CDD1D" };
	char *taken[] = { "taken" };
	struct workload_args a;
	char err[160];

	(void)state;
	assert_int_equal(parse("branch", 3, args, &a, err), 0);
	assert_int_equal(a.v[0], BRANCH_RANDOM);
	assert_int_equal(a.v[1], 500);
	assert_true(a.v[2] == UINT64_C(0x2545F4914F6CDD1D));
	assert_int_equal(parse("branch", 1, taken, &a, err), 0);
	assert_int_equal(a.v[0], BRANCH_TAKEN);
	assert_int_equal(a.v[1], 1000);
}

static void sizes_take_k_and_m(void **state)
{
	char *args[] = { "4M", "4k", "3" };
	struct workload_args a;
	char err[160];

	(void)state;
	assert_int_equal(parse("memwalk", 3, args, &a, err), 0);
	assert_int_equal(a.v[0], 4 << 20);
	assert_int_equal(a.v[1], 4096);
	assert_int_equal(a.v[2], 3);
}

static void synthetic_needs_a_spec(void **state)
{
	char *args[] = { "bsq_cache_reference:rd_2ndl_miss", "25" };
	struct workload_args a;
	char err[160];

	(void)state;
	assert_int_equal(parse("synthetic", 2, args, &a, err), 0);
	assert_string_equal(a.spec, "bsq_cache_reference:rd_2ndl_miss");
	assert_int_equal(a.v[1], 25);
	assert_int_equal(parse("synthetic", 0, NULL, &a, err), -1);
	assert_string_equal(err, "synthetic: missing SPEC (usage: synthetic SPEC [N])");
}

/* A spec that does not parse is refused before anything runs, *out untouched. */
static void synthetic_refuses_a_bad_spec(void **state)
{
	static const char *const bad[] = { "nosuch", "instr_retired:NOSUCHMASK", "replay_event:" };
	struct workload_args a = { .v = { 7, 7, 7 } };
	char err[160];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *args[] = { (char *)bad[i], "5" };

		assert_int_equal(parse("synthetic", 2, args, &a, err), -1);
		assert_non_null(strstr(err, "synthetic: SPEC: '"));
		assert_non_null(strstr(err, bad[i]));
		assert_null(strchr(err, '\n'));
		assert_int_equal(a.v[1], 7);
	}
}

/* One error, naming the workload and the parameter; *out untouched. */
static void bad_arguments_give_one_clear_error(void **state)
{
	static const struct {
		const char *name;
		const char *arg[3];
		int argc;
		const char *err_start;
	} bad[] = {
		{ "loop", { "0" }, 1, "loop: N: must be 1..4294967295" },
		{ "loop", { "4294967296" }, 1, "loop: N: must be 1..4294967295" },
		{ "loop", { "ten" }, 1, "loop: N: " },
		{ "loop", { "1", "2" }, 2, "loop: too many arguments (usage: loop [N])" },
		{ "branch", { "sometimes" }, 1,
		  "branch: PATTERN: 'sometimes' is not one of taken, nottaken, alternate, random" },
		{ "branch", { "random", "10", "0" }, 3, "branch: SEED: must be 1.." },
		{ "calls", { "257" }, 1, "calls: DEPTH: must be 1..256" },
		{ "memwalk", { "65M" }, 1, "memwalk: SIZE: must be 1..67108864" },
		{ "memwalk", { "1K", "0" }, 2, "memwalk: STRIDE: must be 1.." },
		{ "memwalk", { "K" }, 1, "memwalk: SIZE: " },
		{ "spin", { "10000001" }, 1, "spin: USEC: must be 1..10000000" },
		{ "empty", { "1" }, 1, "empty: too many arguments (usage: empty)" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct workload_args a = { .v = { 77, 77, 77 } };
		char err[160] = "";

		assert_int_equal(parse(bad[i].name, bad[i].argc, (char **)bad[i].arg, &a, err), -1);
		if (strncmp(err, bad[i].err_start, strlen(bad[i].err_start)) != 0)
			print_message("got '%s', want '%s...'\n", err, bad[i].err_start);
		assert_true(strncmp(err, bad[i].err_start, strlen(bad[i].err_start)) == 0);
		assert_null(strchr(err, '\n'));
		assert_int_equal(a.v[0], 77);
	}
}

static void synopsis_brackets_optional_parameters(void **state)
{
	char buf[96];

	(void)state;
	workload_synopsis(workload_find("memwalk"), buf, sizeof(buf));
	assert_string_equal(buf, "memwalk [SIZE] [STRIDE] [PASSES]");
	workload_synopsis(workload_find("synthetic"), buf, sizeof(buf));
	assert_string_equal(buf, "synthetic SPEC [N]");
}

static void only_halt_is_refused_at_ring3(void **state)
{
	(void)state;
	for (unsigned i = 0; i < WL_NWORKLOADS; i++)
		assert_true((workload_table[i].ring3_refusal != NULL) == (i == WL_HALT));
}

/* Why an interrupted run stopped: Ctrl-C, an unstepped time limit, a stepped program's limit. */
static void stop_reasons(void **state)
{
	struct workload_result r = { .status = WORKLOAD_INTERRUPTED };
	char buf[160];

	(void)state;
	assert_string_equal(workload_stop_reason(&r, buf, sizeof(buf)), "interrupted by Ctrl-C");
	r.timed_out = true;
	r.limit_s = 60;
	workload_stop_reason(&r, buf, sizeof(buf));
	/* which limit fired, and the command that raises it */
	assert_string_equal(buf, "stopped at its unstepped time limit, 60 s (programs --timeout "
			    "unstepped=SECONDS)");
	assert_true(strlen(buf) < 96);
	r.step.instructions = 123456789;
	workload_stop_reason(&r, buf, sizeof(buf));
	assert_non_null(strstr(buf, "still running after 123456789 instructions: no return from main?"));
	assert_non_null(strstr(buf, "(programs --timeout)"));
	assert_true(strlen(buf) < 96);	/* fits record's error line (prof/record.h) */
}

/* `programs --timeout SPEC`: the stepped limit alone (as before), either or both by name. */
static void limits_parse(void **state)
{
	const struct program_limits now = { .stepped_s = 10, .unstepped_s = 60 };
	static const struct {
		const char *spec;
		unsigned stepped, unstepped;
	} good[] = {
		{ "5", 5, 60 }, { "0", 0, 60 }, { "86400", 86400, 60 }, { "stepped=20", 20, 60 },
		{ "0x10", 16, 60 },
		{ "unstepped=600", 10, 600 }, { "stepped=0,unstepped=86400", 0, 86400 },
		{ "unstepped=3,stepped=4", 4, 3 },
	};
	/* out of range, unknown, repeated, empty, trailing text: refused, nothing changed */
	static const char *const bad[] = {
		"unstepped=0", "unstepped=86401", "86401", "99999999999", "stepped=x", "-1", "hw=5",
		"5,stepped=6", "unstepped=1,unstepped=2", "unstepped=5,", ",", "", "unstepped=",
		"stepped", "5s", "5 ", "stepped=5;unstepped=6",
	};

	(void)state;
	for (unsigned i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct program_limits out;
		char spec[32];

		strcpy(spec, good[i].spec);
		assert_int_equal(workload_parse_limits(spec, &now, &out), 0);
		assert_int_equal(out.stepped_s, good[i].stepped);
		assert_int_equal(out.unstepped_s, good[i].unstepped);
	}
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct program_limits out;
		char spec[32];

		strcpy(spec, bad[i]);
		assert_int_equal(workload_parse_limits(spec, &now, &out), -1);
		assert_int_equal(out.stepped_s, 10);
		assert_int_equal(out.unstepped_s, 60);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_workload_is_found_by_name),
		cmocka_unit_test(stop_reasons),
		cmocka_unit_test(limits_parse),
		cmocka_unit_test(defaults_fill_omitted_parameters),
		cmocka_unit_test(numbers_in_every_spelling),
		cmocka_unit_test(branch_patterns_and_seed),
		cmocka_unit_test(sizes_take_k_and_m),
		cmocka_unit_test(synthetic_needs_a_spec),
		cmocka_unit_test(synthetic_refuses_a_bad_spec),
		cmocka_unit_test(bad_arguments_give_one_clear_error),
		cmocka_unit_test(synopsis_brackets_optional_parameters),
		cmocka_unit_test(only_halt_is_refused_at_ring3),
	};

	return cmocka_run_group_tests_name("workload", tests, NULL, NULL);
}
