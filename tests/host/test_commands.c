/*
 * test_commands.c - the profiling commands (stat, pmu, record, run) on the
 * host, through the same shell and the fake runtime of fake_prof.c: the
 * real model is programmed by the real plan and apply sequence, a workload
 * feeds it a known stream, and the printed counts must be that stream.
 * Bad input must print one error and run nothing.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "shell/cmds.h"
#include "shell/shell.h"
#include "tests/host/fake_platform.h"
#include "tests/host/fake_prof.h"
#include "prof/perf.h"

static char out[65536];
static size_t out_len;
static struct shell sh;

static int no_input(void *ctx)
{
	return -1;
}

static void collect(void *ctx, const char *s, size_t n)
{
	assert_true(out_len + n < sizeof(out));
	memcpy(out + out_len, s, n);
	out_len += n;
	out[out_len] = '\0';
}

static int setup(void **state)
{
	struct shell_io io = { .getc = no_input, .write = collect };
	char err[96];

	fake_platform_reset();
	fake_prof_reset();
	shell_init(&sh, &io);
	assert_int_equal(perf_add_commands(&sh), 0);
	assert_int_equal(record_add_commands(&sh), 0);
	assert_int_equal(workload_add_commands(&sh), 0);
	assert_int_equal(perf_select_model(&(struct p4_sig){ 0x0f, 4, 1 }, false, err, sizeof(err)), 0);
	return 0;
}

/* Run one command line; its output is in out[]. */
static int cmd(const char *line)
{
	out_len = 0;
	out[0] = '\0';
	return shell_execute(&sh, line);
}

/* The count printed for the event row that contains name. */
static unsigned long long count_of(const char *name)
{
	const char *p = strstr(out, name);
	const char *line = p;

	assert_non_null(p);
	while (line > out && line[-1] != '\n')
		line--;
	return strtoull(line, NULL, 10);
}

static void stat_prints_the_fed_stream(void **state)
{
	fake_prof.steps = 1000;
	fake_prof.branch_every = 4;
	assert_int_equal(cmd("stat -e instr_retired -e branch_retired loop 10"), 0);
	assert_int_equal(count_of("instr_retired:NBOGUSNTAG:NBOGUSTAG:u:k"), 1000);
	assert_int_equal(count_of("branch_retired:"), 250);
	assert_non_null(strstr(out, "[real: stepped]"));
	assert_int_equal(fake_prof.runs, 1);
	assert_true(fake_prof.last_step);	/* the model backend steps its workloads */
}

static void stat_privilege_filters_follow_the_ring(void **state)
{
	fake_prof.steps = 777;
	assert_int_equal(cmd("stat -e instr_retired:u -e instr_retired:k --ring 3 loop 1"), 0);
	assert_int_equal(fake_prof.last_ring, 3);
	assert_int_equal(count_of("instr_retired:NBOGUSNTAG:NBOGUSTAG:u "), 777);
	assert_int_equal(count_of("instr_retired:NBOGUSNTAG:NBOGUSTAG:k "), 0);
}

static void stat_repeats_give_statistics(void **state)
{
	fake_prof.steps = 50;
	assert_int_equal(cmd("stat -r 5 -e instr_retired loop 1"), 0);
	assert_int_equal(fake_prof.runs, 5);
	assert_non_null(strstr(out, "5 runs"));
	assert_non_null(strstr(out, "median"));
}

static void bad_spec_is_one_error_and_runs_nothing(void **state)
{
	assert_int_not_equal(cmd("stat -e instr_retired:nbogus loop 1"), 0);
	assert_non_null(strstr(out, "error: 'instr_retired:nbogus': column 15: unknown mask"));
	assert_null(strchr(strchr(out, '\n') + 1, '\n'));	/* one line */
	assert_int_equal(fake_prof.runs, 0);
	assert_int_equal(fake_prof.starts, 0);
}

static void impossible_combination_is_refused_with_the_reason(void **state)
{
	assert_int_not_equal(cmd("stat -e instr_retired -e uops_retired -e branch_retired "
				 "-e mispred_branch_retired -e x87_assist -e machine_clear loop 10"), 0);
	assert_non_null(strstr(out, "error: cannot place together"));
	assert_int_equal(fake_prof.runs, 0);
}

/*
 * --preset reloads every counter at each overflow: 16 events before the
 * wrap is a 16-event period, refused at CPL 0 (pmu/p4_alloc.h) before
 * anything runs, and so is 32 (the tail's bound); at :u it runs, and 33 events
 * from the wrap runs at :k.
 */
static void stat_short_preset_at_cpl0_is_refused(void **state)
{
	(void)state;
	assert_int_not_equal(cmd("stat --preset 0xFFFFFFFFF0 -e instr_retired loop 1"), 0);
	assert_non_null(strstr(out, "error: stat: --preset FFFFFFFFF0H reloads #0 every 16 events"));
	assert_non_null(strstr(out, "a period of at most 32 counted at CPL 0"));
	assert_int_equal(fake_prof.runs, 0);
	assert_int_not_equal(cmd("stat --preset 0xFFFFFFFFE0 -e instr_retired loop 1"), 0);
	assert_int_equal(fake_prof.runs, 0);
	assert_int_equal(cmd("stat --preset 0xFFFFFFFFF0 --ring 3 -e instr_retired:u loop 1"), 0);
	assert_int_equal(cmd("stat --preset 0xFFFFFFFFDF -e instr_retired loop 1"), 0);
}

static void unknown_workload_and_bad_arguments(void **state)
{
	assert_int_not_equal(cmd("stat -e instr_retired nosuchwork"), 0);
	assert_non_null(strstr(out, "error:"));
	assert_int_not_equal(cmd("run --ring 5 loop 1"), 0);
	assert_non_null(strstr(out, "error:"));
	assert_int_not_equal(cmd("stat --cpu 1 loop 1"), 0);	/* no sibling */
	assert_non_null(strstr(out, "sibling"));
	assert_int_equal(fake_prof.runs, 0);
}

static void run_reports_the_stepped_instructions(void **state)
{
	fake_prof.steps = 42;
	assert_int_equal(cmd("run --step loop 1"), 0);
	assert_int_equal(fake_prof.runs, 1);
	assert_non_null(strstr(out, "instructions: 42"));
	assert_false(fake_prof.last_quiet);
	assert_int_equal(cmd("run --step --quiet loop 1"), 0);	/* no progress line */
	assert_true(fake_prof.last_quiet);
	assert_false(fake_prof.quiet);
	assert_non_null(strstr(out, "instructions: 42"));
}

static void record_refuses_pebs_with_its_own_reason(void **state)
{
	/* PEBS samples only the at-retirement events (SDM 18.16.3), by record's own rule */
	assert_int_not_equal(cmd("record -e instr_retired:pebs -c 97 loop 10"), 0);
	assert_non_null(strstr(out, "error: record: 'instr_retired"));
	assert_non_null(strstr(out, "PEBS works only with front_end_event, execution_event and "
				    "replay_event"));
	assert_null(strstr(out, "stat counts"));
	assert_null(strchr(strchr(out, '\n') + 1, '\n'));	/* one line */
	assert_int_not_equal(cmd("record -e front_end_event:pebs --after 10:instr_retired -c 9 "
				 "loop 10"), 0);
	assert_non_null(strstr(out, "PEBS events cannot be cascaded"));
	assert_int_equal(fake_prof.records, 0);
}

static void stat_quiet_turns_progress_off_for_its_run_only(void **state)
{
	fake_prof.steps = 10;
	assert_int_equal(cmd("stat -e instr_retired loop 1"), 0);
	assert_false(fake_prof.last_quiet);
	assert_int_equal(cmd("stat --quiet -e instr_retired loop 1"), 0);
	assert_true(fake_prof.last_quiet);		/* off while the workload ran */
	assert_false(fake_prof.quiet);			/* and on again afterwards */
	assert_int_equal(count_of("instr_retired:"), 10);	/* the output is the same */
	assert_int_equal(cmd("stat -e instr_retired loop 1"), 0);
	assert_false(fake_prof.last_quiet);
}

static void pmu_shows_the_backend(void **state)
{
	assert_int_equal(cmd("pmu"), 0);
	assert_true(strncmp(out, "backend: model", 14) == 0);
	assert_non_null(strstr(out, "0F_04H"));
	/* the backend's sentence whole at its longest: it was cut at "lost to a full buffer 0 (" */
	assert_non_null(strstr(out, "; model requests OVF_PMI_T0 18446744073709551615, OVF_PMI_T1 "
			       "18446744073709551615; PEBS records written 18446744073709551615, "
			       "lost to a full buffer 18446744073709551615 (since the model was "
			       "selected)\n"));
}

static void record_options_are_checked_before_anything_runs(void **state)
{
	static const char *const bad[] = {
		"record -c 0 loop 1",
		"record -e instr_retired -c 10 -F 100 loop 1",
		"record --buffer 1 loop 1",
		"record --throttle 0 loop 1",
		"record --cpu 1 loop 10",
		"record --pair loop 1",
		"record -e instr_retired:nbogus loop 1",
		"record --inject unflagged=x loop 1",
		"record --jitter 0 loop 1",
		"record --jitter 91 loop 1",
		"record --seed 5 -c 10 loop 1",		/* a seed without --jitter */
		"record --jitter 20 --seed x loop 1",
		"record nosuchwork",
	};

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_not_equal(cmd(bad[i]), 0);
		if (strncmp(out, "error: ", 7) != 0)
			fail_msg("'%s' printed: %s", bad[i], out);
	}
	assert_int_equal(fake_prof.records, 0);
	assert_int_equal(fake_prof.runs, 0);
	/* a good command line gets as far as sampling, which only the target does */
	assert_int_not_equal(cmd("record -e instr_retired -c 129 loop 10"), 0);
	assert_int_equal(fake_prof.records, 1);
	assert_int_not_equal(cmd("report"), 0);		/* nothing recorded */
	assert_non_null(strstr(out, "error:"));
}

#define T(f) cmocka_unit_test_setup(f, setup)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(stat_prints_the_fed_stream),
		T(stat_privilege_filters_follow_the_ring),
		T(stat_repeats_give_statistics),
		T(bad_spec_is_one_error_and_runs_nothing),
		T(impossible_combination_is_refused_with_the_reason),
		T(unknown_workload_and_bad_arguments),
		T(stat_short_preset_at_cpl0_is_refused),
		T(run_reports_the_stepped_instructions),
		T(pmu_shows_the_backend),
		T(record_options_are_checked_before_anything_runs),
		T(record_refuses_pebs_with_its_own_reason),
		T(stat_quiet_turns_progress_off_for_its_run_only),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
