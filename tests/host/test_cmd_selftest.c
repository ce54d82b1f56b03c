/*
 * test_cmd_selftest.c - the `selftest` command on the host: its options,
 * its output (header, one line per result, the NBS: block, the summary as
 * the last line) and its status, through the real shell and the profiling
 * stand-in of fake_prof.c. The checks themselves (the files of selftest/) need
 * the machine; here selftest_run() and selftest_machine() are stand-ins
 * that record the options and hand back chosen results, so what the
 * command makes of them is checked exactly. Bad input must print one error
 * line and run nothing.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "prof/perf.h"
#include "selftest/selftest.h"
#include "shell/cmds.h"
#include "shell/shell.h"
#include "tests/host/fake_platform.h"
#include "tests/host/fake_prof.h"

static char out[32768];
static size_t out_len;
static struct shell sh;

/* ---- the stand-ins for the kernel half -------------------------------------- */

static struct {
	unsigned calls;
	struct selftest_opts opts;		/* as the command passed them */
	int ret;				/* -1: refuse with "no PMU here" */
	bool interrupt;				/* report Ctrl-C after the results */
	bool dead;				/* the results of a PMU where nothing counted */
} run;

static void make_results(struct selftest_result *r)
{
	r[0] = (struct selftest_result){ .group = "counters", .name = "counter 12 instr_retired" };
	selftest_judge_exact(&r[0], 300, 300);
	r[1] = (struct selftest_result){ .group = "counters", .name = "counter 13 branch|retired" };
	selftest_judge_exact(&r[1], 99, 100);
	snprintf(r[1].note, sizeof(r[1].note), "loop 150 minus loop 50");
	r[2] = (struct selftest_result){ .group = "cascade", .name = "bit 30 0 -> 2 (BPU)" };
	selftest_judge_range(&r[2], 500, 400, 600);
	r[3] = (struct selftest_result){ .group = "pebs", .name = "PEBS" };
	selftest_skip(&r[3], "IA32_MISC_ENABLE bit 12: PEBS unavailable");
	if (run.dead) {		/* st_counters' line (selftest/counts.c) */
		r[0] = (struct selftest_result){ .group = "counters",
			.name = "no counter counted: counters 0-17, loop 150 minus loop 50" };
		selftest_judge_exact(&r[0], 0, 1);
	}
}

int selftest_run(const struct selftest_opts *opts, struct selftest_result *out_r, unsigned max,
		 bool *interrupted, char *err, size_t n)
{
	run.calls++;
	run.opts = *opts;
	if (run.ret < 0)
		return snprintf(err, n, "no PMU here"), -1;
	assert_true(max >= 4);
	make_results(out_r);
	for (unsigned i = 0; i < 4; i++)
		opts->emit(opts->ctx, &out_r[i]);
	*interrupted = run.interrupt;
	if (run.interrupt)
		snprintf(err, n, "interrupted");
	return 4;
}

void selftest_machine(struct selftest_machine *m)
{
	*m = (struct selftest_machine){ .signature = 0xf29, .display = "0F_02H", .stepping = 9,
					.brand = "Intel(R) Pentium(R) 4 CPU 2.80GHz",
					.ucode_ok = true, .ucode = 0x2e, .misc_ok = true,
					.misc_enable = 0x89 };
}

/* ---- the shell ------------------------------------------------------------------ */

static const char *keys;	/* what the keyboard sends while codes are shown */

static int no_input(void *ctx)
{
	return keys && *keys ? (unsigned char)*keys++ : -1;
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
	fake_plat.cpu.booted_by = "legacy BIOS (Multiboot, nbprof32.elf, loaded by GRUB 2.06)";
	fake_plat.cpu.kernel_mode = "32-bit protected mode";
	memset(&run, 0, sizeof(run));
	keys = NULL;
	shell_init(&sh, &io);
	assert_int_equal(selftest_add_commands(&sh), 0);
	assert_int_equal(perf_select_model(&(struct p4_sig){ 0x0f, 2, 9 }, true, err, sizeof(err)),
			 0);
	return 0;
}

static int cmd(const char *line)
{
	out_len = 0;
	out[0] = '\0';
	return shell_execute(&sh, line);
}

static unsigned count_lines(const char *prefix)
{
	unsigned n = 0;

	for (const char *p = out; (p = strstr(p, prefix)) != NULL; p++)
		if (p == out || p[-1] == '\n')
			n++;
	return n;
}

/* ---- options --------------------------------------------------------------------- */

static void bad_arguments_run_nothing(void **state)
{
	static const char *const lines[] = {
		"selftest --bogus", "selftest --inject", "selftest --inject dead=18",
		"selftest --inject rdpmc=x", "selftest --inject hot=1", "selftest quick",
		"selftest --inject stuck=", "selftest --inject stuck=3ca",
		"selftest --inject stuck=0x300", "selftest --inject stuck=0x107cc",
	};

	for (unsigned i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		assert_int_not_equal(cmd(lines[i]), 0);
		assert_int_equal(strncmp(out, "error: ", 7), 0);
		/* one line */
		assert_non_null(strchr(out, '\n'));
		assert_null(strchr(strchr(out, '\n') + 1, '\n'));
	}
	assert_int_equal(run.calls, 0);
}

static void options_reach_the_runner(void **state)
{
	cmd("selftest --quick --verbose --replace --inject rdpmc=5");
	assert_int_equal(run.calls, 1);
	assert_true(run.opts.quick && run.opts.verbose && run.opts.replace);
	assert_int_equal(run.opts.inject, SELFTEST_INJECT_RDPMC);
	assert_int_equal(run.opts.inject_arg, 5);
	cmd("selftest --inject erratum=1");
	assert_false(run.opts.quick || run.opts.verbose || run.opts.replace);
	assert_int_equal(run.opts.inject, SELFTEST_INJECT_ERRATUM);
	cmd("selftest --inject nomask=1000");
	assert_int_equal(run.opts.inject, SELFTEST_INJECT_NOMASK);
	assert_int_equal(run.opts.inject_arg, 1000);
	cmd("selftest --inject stuck=0x3ca");
	assert_int_equal(run.opts.inject, SELFTEST_INJECT_STUCK);
	assert_int_equal(run.opts.inject_arg, 0x3ca);
	cmd("selftest --inject stuck=3CAH");
	assert_int_equal(run.opts.inject_arg, 0x3ca);
	cmd("selftest");
	assert_int_equal(run.opts.inject, SELFTEST_INJECT_NONE);
}

/* ---- output ---------------------------------------------------------------------- */

static void header_results_block_and_summary(void **state)
{
	const char *last;

	assert_int_equal(cmd("selftest"), 1);		/* one check failed */
	assert_non_null(strstr(out, "machine: CPUID 00000F29H (0F_02H stepping 9), "
				    "\"Intel(R) Pentium(R) 4 CPU 2.80GHz\"\n"));
	assert_non_null(strstr(out, "microcode: revision 0000002EH (IA32_BIOS_SIGN_ID)\n"));
	assert_non_null(strstr(out, "IA32_MISC_ENABLE: 0000000000000089H\n"));
	assert_non_null(strstr(out, "PMU backend model 0F_02H stepping 9 with HT"));
	/* the boot line is the boot information's, as `cpu` prints it */
	assert_non_null(strstr(out, "\nboot: legacy BIOS (Multiboot, nbprof32.elf, loaded by GRUB "
				    "2.06); nbprof runs in 32-bit protected mode\n"));
	assert_null(strstr(out, "UEFI x86-64 application"));
	assert_non_null(strstr(out, "\nPASS  counters   counter 12 instr_retired: measured 300, "
				    "expected 300\n"));
	assert_non_null(strstr(out, "\nFAIL  counters   counter 13 branch|retired: measured 99, "
				    "expected 100 (loop 150 minus loop 50)\n"));
	assert_non_null(strstr(out, "\nSKIP  pebs       PEBS: IA32_MISC_ENABLE bit 12: PEBS "
				    "unavailable\n"));
	/* begin, machine, 4 checks, end */
	assert_int_equal(count_lines("NBS:"), 7);
	assert_non_null(strstr(out, "\nNBS:0|begin|1|4|"));
	assert_non_null(strstr(out, "|check|counters|FAIL|counter 13 branch/retired|99|100|"));
	assert_non_null(strstr(out, "\nNBS:6|end|2|1|1|7|"));
	last = strrchr(out, '\n');
	while (last > out && last[-1] != '\n')
		last--;
	/* a report made on the model says so in its summary */
	assert_string_equal(last, "selftest: 2 passed, 1 failed, 1 skipped; on the software model, "
			    "not this machine's PMU\n");
}

static void nothing_counted_is_named_in_the_summary(void **state)
{
	const char *last;

	run.dead = true;
	assert_int_equal(cmd("selftest"), 1);
	last = strrchr(out, '\n');
	while (last > out && last[-1] != '\n')
		last--;
	assert_string_equal(last, "selftest: 1 passed, 2 failed, 1 skipped; no counter counted; "
			    "on the software model, not this machine's PMU\n");
}

static void interrupted_run_says_so(void **state)
{
	run.interrupt = true;
	assert_int_not_equal(cmd("selftest"), 0);
	assert_non_null(strstr(out, "selftest: stopped (interrupted); the PMU registers were "
				    "restored\n"));
	assert_non_null(strstr(out, "selftest: 2 passed, 1 failed, 1 skipped (incomplete); on the "
				    "software model"));
	assert_int_equal(count_lines("NBS:"), 7);	/* what ran is still reported */
}

static void refused_run_is_one_error(void **state)
{
	run.ret = -1;
	assert_int_not_equal(cmd("selftest"), 0);
	assert_non_null(strstr(out, "error: selftest: no PMU here\n"));
	assert_int_equal(count_lines("NBS:"), 0);
	assert_null(strstr(out, "passed"));
}

/* ---- QR codes --------------------------------------------------------------------- */

static void qr_before_any_report_is_an_error(void **state)
{
	fake_plat.qr_room = 50;
	assert_int_not_equal(cmd("qr"), 0);
	assert_string_equal(out, "error: qr: no selftest report yet (run selftest)\n");
	assert_int_not_equal(cmd("qr now"), 0);
	assert_int_equal(strncmp(out, "error: qr: unknown argument 'now'", 33), 0);
	assert_int_equal(fake_plat.qr_shown, 0);
}

static void codes_one_at_a_time_until_esc(void **state)
{
	char want[64];
	unsigned n;

	fake_plat.qr_room = 25;		/* version 1 with a quiet zone of 2: many small codes */
	keys = " x\033";
	assert_int_equal(cmd("selftest --qr"), 1);	/* the status is still the checks' */
	assert_int_equal(count_lines("NBS:"), 7);	/* the serial report as before */
	assert_non_null(strstr(out, "selftest: the report is on the screen as "));
	n = (unsigned)atoi(strstr(out, "on the screen as ") + 17);
	assert_true(n > 3);
	/* three keys: the first two show the next code, Esc ends */
	assert_int_equal(fake_plat.qr_shown, 3);
	assert_int_equal(fake_plat.qr_ends, 1);
	assert_int_equal(fake_plat.qr_version, 1);
	assert_int_equal(fake_plat.qr_quiet, 2);
	snprintf(want, sizeof(want), "selftest: code 3 of %u on the screen\n", n);
	assert_non_null(strstr(out, want));
	snprintf(want, sizeof(want), "QR code 3 of %u\n", n);
	assert_non_null(strstr(fake_plat.qr_caption, want));
	assert_non_null(strstr(fake_plat.qr_caption, "Esc: back to the shell"));

	/* `qr` shows them again, here to the end of input */
	keys = "";
	assert_int_equal(cmd("qr"), 0);
	assert_int_equal(fake_plat.qr_shown, 4);
	assert_int_equal(fake_plat.qr_ends, 2);
	assert_non_null(strstr(out, "qr: code 1 of "));
	assert_int_equal(count_lines("NBS:"), 0);

	/* a big screen: level M, a larger version, one code */
	fake_plat.qr_room = 150;
	keys = "\033";
	assert_int_equal(cmd("qr"), 0);
	assert_non_null(strstr(out, "as 1 QR code;"));
	assert_int_equal(fake_plat.qr_quiet, 4);
	assert_true(strstr(fake_plat.qr_caption, "any key: done") != NULL);
}

static void no_screen_no_codes(void **state)
{
	fake_plat.qr_room = 0;
	assert_int_equal(cmd("selftest --qr"), 1);
	assert_int_equal(count_lines("NBS:"), 7);
	assert_non_null(strstr(out, "error: selftest: no screen to show QR codes on (nbprof.cfg "
				    "console = serial, or none found)\n"));
	assert_int_equal(fake_plat.qr_shown, 0);
	fake_plat.qr_room = 20;		/* smaller than version 1 with its quiet zone */
	assert_int_not_equal(cmd("qr"), 0);
	assert_non_null(strstr(out, "(too small)"));
	assert_int_equal(fake_plat.qr_shown, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(qr_before_any_report_is_an_error, setup),
		cmocka_unit_test_setup(bad_arguments_run_nothing, setup),
		cmocka_unit_test_setup(options_reach_the_runner, setup),
		cmocka_unit_test_setup(header_results_block_and_summary, setup),
		cmocka_unit_test_setup(interrupted_run_says_so, setup),
		cmocka_unit_test_setup(nothing_counted_is_named_in_the_summary, setup),
		cmocka_unit_test_setup(refused_run_is_one_error, setup),
		cmocka_unit_test_setup(codes_one_at_a_time_until_esc, setup),
		cmocka_unit_test_setup(no_screen_no_codes, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
