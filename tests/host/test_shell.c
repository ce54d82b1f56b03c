/*
 * test_shell.c - tokenizer, number parsing, line editor, dispatcher and
 * every built-in command, against a scripted shell_io and the fake platform.
 *
 * Expected command output is what the command's contract says (the MSR
 * notation "MSR 1A0H = 0000000000000001H", one "error: ..." line per bad
 * input) and what the PMU reference says about the CPU (section 7: 0F_04H has
 * no IQ_ESCR0/1, has extended cascading and instr_completed).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "pmu/p4_regs.h"
#include "shell/shell.h"
#include "tests/host/fake_platform.h"

/* --- scripted io ----------------------------------------------------------- */

struct fake_io {
	const char *in;
	size_t in_len, in_pos;
	char out[16384];
	size_t out_len;
};

static int fake_getc(void *ctx)
{
	struct fake_io *f = ctx;

	if (f->in_pos == f->in_len)
		return -1;
	return (unsigned char)f->in[f->in_pos++];
}

static void fake_write(void *ctx, const char *s, size_t n)
{
	struct fake_io *f = ctx;

	assert_true(f->out_len + n < sizeof(f->out));
	memcpy(f->out + f->out_len, s, n);
	f->out_len += n;
	f->out[f->out_len] = '\0';
}

static struct fake_io fio;
static struct shell sh;

static int setup(void **state)
{
	struct shell_io io = { .ctx = &fio, .getc = fake_getc, .write = fake_write };

	memset(&fio, 0, sizeof(fio));
	fake_platform_reset();
	shell_init(&sh, &io);
	return 0;
}

static void feed(const char *bytes)
{
	fio.in = bytes;
	fio.in_len = strlen(bytes);
	fio.in_pos = 0;
}

static void clear_output(void)
{
	fio.out_len = 0;
	fio.out[0] = '\0';
}

/* Feed bytes, read one line, return it (static storage of the shell). */
static const char *readline_of(const char *bytes)
{
	feed(bytes);
	clear_output();
	assert_true(shell_readline(&sh) >= 0);
	return sh.line;
}

static int run(const char *line)
{
	clear_output();
	return shell_execute(&sh, line);
}

static void assert_output_has(const char *s)
{
	if (strstr(fio.out, s) == NULL)
		fail_msg("output lacks '%s':\n%s", s, fio.out);
}

/* Exactly one line, starting with "error: " and containing s. */
static void assert_one_error(int status, const char *s)
{
	assert_int_not_equal(status, 0);
	assert_int_equal(strncmp(fio.out, "error: ", 7), 0);
	assert_non_null(strchr(fio.out, '\n'));
	assert_int_equal(strchr(fio.out, '\n')[1], '\0');
	assert_output_has(s);
}

/* --- tokenizer ------------------------------------------------------------- */

static void tokenize_blanks(void **state)
{
	char buf[] = "  msr  read\t1a0h  ";
	char *argv[PARSE_MAX_ARGS + 1];
	const char *err = NULL;

	assert_int_equal(parse_tokenize(buf, argv, PARSE_MAX_ARGS, &err), 3);
	assert_string_equal(argv[0], "msr");
	assert_string_equal(argv[1], "read");
	assert_string_equal(argv[2], "1a0h");
	assert_null(argv[3]);
}

static void tokenize_quotes(void **state)
{
	char buf[] = "say \"a  b\"c \"\" x\"y z\"";
	char *argv[PARSE_MAX_ARGS + 1];
	const char *err = NULL;

	assert_int_equal(parse_tokenize(buf, argv, PARSE_MAX_ARGS, &err), 4);
	assert_string_equal(argv[0], "say");
	assert_string_equal(argv[1], "a  bc");
	assert_string_equal(argv[2], "");
	assert_string_equal(argv[3], "xy z");
}

static void tokenize_errors(void **state)
{
	char buf1[] = "say \"abc";
	char buf2[] = "a b c d e";
	char buf3[] = " \t ";
	char *argv[PARSE_MAX_ARGS + 1];
	const char *err = NULL;

	assert_int_equal(parse_tokenize(buf1, argv, PARSE_MAX_ARGS, &err), -1);
	assert_string_equal(err, "unterminated quote");
	err = NULL;
	assert_int_equal(parse_tokenize(buf2, argv, 4, &err), -1);
	assert_string_equal(err, "too many words on the line (see 'help help')");
	assert_int_equal(parse_tokenize(buf3, argv, PARSE_MAX_ARGS, &err), 0);
}

/* A line of exactly PARSE_MAX_ARGS words is taken whole (a record line with a pair and
 * several events), one more is refused. */
static void tokenize_takes_max_words(void **state)
{
	char buf[SHELL_LINE_MAX * 2] = "";
	char *argv[PARSE_MAX_ARGS + 1];
	const char *err = NULL;

	(void)state;
	for (int i = 0; i < PARSE_MAX_ARGS; i++)
		strcat(buf, "w ");
	assert_int_equal(parse_tokenize(buf, argv, PARSE_MAX_ARGS, &err), PARSE_MAX_ARGS);
	buf[0] = '\0';
	for (int i = 0; i <= PARSE_MAX_ARGS; i++)
		strcat(buf, "w ");
	assert_int_equal(parse_tokenize(buf, argv, PARSE_MAX_ARGS, &err), -1);
	assert_non_null(err);
}

/* --- numbers --------------------------------------------------------------- */

static void numbers_accepted(void **state)
{
	static const struct { const char *s; uint64_t v; } ok[] = {
		{ "0x1A0", 0x1a0 }, { "0X1a0", 0x1a0 }, { "1A0H", 0x1a0 }, { "1a0h", 0x1a0 },
		{ "416", 416 }, { "0", 0 }, { "0h", 0 }, { "FC00H", 0xfc00 }, { "107CCH", 0x107cc },
		{ "0xFFFFFFFFFFFFFFFF", UINT64_MAX }, { "18446744073709551615", UINT64_MAX },
		{ "FFFFFFFFFFFFFFFFH", UINT64_MAX }, { "007", 7 },
	};
	const char *err;
	uint64_t v;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		err = NULL;
		if (!parse_u64(ok[i].s, UINT64_MAX, &v, &err))
			fail_msg("'%s' refused: %s", ok[i].s, err);
		assert_int_equal(v, ok[i].v);
	}
}

static void numbers_refused(void **state)
{
	static const char *const bad[] = {
		"", "0x", "H", "h", "12z", "-1", "+1", " 1", "1 ", "0x1A0H", "1A0", "0x-1", "1_000",
		"0b101", "12hh",
	};
	const char *err;
	uint64_t v = 12345;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err = NULL;
		if (parse_u64(bad[i], UINT64_MAX, &v, &err))
			fail_msg("'%s' accepted as %llu", bad[i], (unsigned long long)v);
		assert_non_null(err);
		assert_int_equal(v, 12345);	/* untouched */
	}
	assert_true(!parse_u64("1A0", UINT64_MAX, &v, &err));
	assert_non_null(strstr(err, "0x or an H suffix"));
}

static void numbers_overflow(void **state)
{
	const char *err = NULL;
	uint64_t v;
	uint32_t w;

	assert_false(parse_u64("0x10000000000000000", UINT64_MAX, &v, &err));
	assert_string_equal(err, "number too large");
	assert_false(parse_u64("18446744073709551616", UINT64_MAX, &v, &err));
	assert_false(parse_u64("10000000000000000H", UINT64_MAX, &v, &err));
	assert_false(parse_u64("99999999999999999999999", UINT64_MAX, &v, &err));
	assert_true(parse_u32("4294967295", &w, &err));
	assert_int_equal(w, UINT32_MAX);
	assert_false(parse_u32("0x100000000", &w, &err));
	assert_string_equal(err, "number too large");
	assert_true(parse_u64("255", 255, &v, &err));
	assert_false(parse_u64("256", 255, &v, &err));
	assert_false(parse_u64("5", 0, &v, &err));
	assert_true(parse_u64("0", 0, &v, &err));
}

/* --- line editor ----------------------------------------------------------- */

static void editor_plain_line_and_prompt(void **state)
{
	assert_string_equal(readline_of("help\r"), "help");
	assert_string_equal(fio.out, "nbprof> help\n");
	assert_int_equal(sh.len, 4);
}

static void editor_line_endings(void **state)
{
	feed("a\r\nb\rc\n\n");
	assert_int_equal(shell_readline(&sh), 1);
	assert_string_equal(sh.line, "a");
	assert_int_equal(shell_readline(&sh), 1);	/* the LF of CRLF is not a second line */
	assert_string_equal(sh.line, "b");
	assert_int_equal(shell_readline(&sh), 1);
	assert_string_equal(sh.line, "c");
	assert_int_equal(shell_readline(&sh), 0);	/* LF LF is two lines */
	assert_int_equal(shell_readline(&sh), SHELL_EOF);
}

static void editor_backspace_and_del(void **state)
{
	assert_string_equal(readline_of("helq\bp\r"), "help");
	assert_string_equal(fio.out, "nbprof> helq\b \bp\n");
	assert_string_equal(readline_of("cpX\x7fu\r"), "cpu");
	assert_string_equal(readline_of("\b\b\x7fmem\r"), "mem");
	assert_string_equal(fio.out, "nbprof> mem\n");	/* nothing to erase: no output */
}

static void editor_ctrl_u(void **state)
{
	assert_string_equal(readline_of("garbage\x15" "cpu\r"), "cpu");
	assert_output_has("garbage\b \b\b \b\b \b\b \b\b \b\b \b\b \bcpu\n");
}

static void editor_ctrl_c(void **state)
{
	assert_string_equal(readline_of("junk\x03" "cpu\r"), "cpu");
	assert_string_equal(fio.out, "nbprof> junk^C\nnbprof> cpu\n");
	/* the abandoned line is not in the history */
	assert_int_equal(sh.hist_count, 1);
}

static void editor_ignores_other_escapes_and_controls(void **state)
{
	/* right arrow, Ctrl-left (CSI 1;5D), F1 (SS3 P), Alt-x, Ctrl-A, tab */
	assert_string_equal(readline_of("a\x1b[Cb\x1b[1;5Dc\x1bOPd\x1bxe\x01\tf\r"), "abcdef");
	assert_string_equal(fio.out, "nbprof> abcdef\n");
}

static void editor_eof(void **state)
{
	feed("");
	assert_int_equal(shell_readline(&sh), SHELL_EOF);
	feed("partial");
	assert_int_equal(shell_readline(&sh), SHELL_EOF);
	feed("x\x1b[");
	assert_int_equal(shell_readline(&sh), SHELL_EOF);
}

/* An input of n copies of ch followed by tail, in buf. */
static const char *repeat_then(char *buf, size_t cap, char ch, size_t n, const char *tail)
{
	assert_true(n + strlen(tail) < cap);
	memset(buf, ch, n);
	strcpy(buf + n, tail);
	return buf;
}

static void editor_longest_line_fits(void **state)
{
	char in[400];

	feed(repeat_then(in, sizeof(in), 'a', SHELL_LINE_MAX - 1, "\r"));
	assert_int_equal(shell_readline(&sh), SHELL_LINE_MAX - 1);
	assert_int_equal(strlen(sh.line), SHELL_LINE_MAX - 1);
	assert_null(strchr(fio.out, '\a'));
}

static void editor_overlong_line_is_an_error(void **state)
{
	char in[400];

	feed(repeat_then(in, sizeof(in), 'a', SHELL_LINE_MAX, "\rcpu\r"));
	assert_int_equal(shell_readline(&sh), 0);
	assert_string_equal(sh.line, "");
	/* one bell where the line overflowed, one error line after Enter */
	assert_int_equal(strchr(fio.out, '\a') - fio.out, strlen(SHELL_PROMPT) + SHELL_LINE_MAX - 1);
	assert_null(strchr(strchr(fio.out, '\a') + 1, '\a'));
	assert_non_null(strstr(fio.out, "\a\nerror: line too long (max 255 characters)\n"));
	assert_int_equal(sh.hist_count, 0);
	/* the next line is read normally */
	assert_int_equal(shell_readline(&sh), 3);
	assert_string_equal(sh.line, "cpu");
}

static void editor_overlong_command_runs_nothing(void **state)
{
	char in[400], want[600];

	/* cut at 255 characters, this would still be a valid `cpu` */
	feed(repeat_then(in, sizeof(in), ' ', 297, "\r"));
	memcpy(in, "cpu", 3);
	shell_run(&sh);
	snprintf(want, sizeof(want), "%s%.*s\a\nerror: line too long (max 255 characters)\n%s",
		 SHELL_PROMPT, SHELL_LINE_MAX - 1, in, SHELL_PROMPT);
	assert_string_equal(fio.out, want);
}

static void editor_overlong_discards_edits_until_enter(void **state)
{
	char in[400];

	/* backspace and history keys after the overflow change nothing */
	readline_of("older\r");
	feed(repeat_then(in, sizeof(in), 'b', 300, "\b\b\x7f\x1b[A\r"));
	clear_output();
	assert_int_equal(shell_readline(&sh), 0);
	assert_output_has("error: line too long");
	assert_null(strstr(fio.out, "older"));
	/* Ctrl-C abandons an overlong line without an error */
	feed(repeat_then(in, sizeof(in), 'c', 300, "\x03ok\r"));
	clear_output();
	assert_int_equal(shell_readline(&sh), 2);
	assert_string_equal(sh.line, "ok");
	assert_null(strstr(fio.out, "error"));
}

static void editor_swallows_osc_and_dcs(void **state)
{
	/* OSC ended by BEL and by ST; DCS (DECRQSS reply); APC, PM, SOS */
	assert_string_equal(readline_of("ab\x1b]0;title\x07" "cd\r"), "abcd");
	assert_string_equal(fio.out, "nbprof> abcd\n");
	assert_string_equal(readline_of("x\x1b]8;;http://e.x/\x1b\\y\r"), "xy");
	assert_string_equal(readline_of("\x1bP1$r0m\x1b\\" "cpu\r"), "cpu");
	assert_string_equal(readline_of("\x1b_apc\x1b\\\x1b^pm\x1b\\\x1bXsos\x1b\\z\r"), "z");
	/* a control string may hold CR and LF: they do not end the line */
	assert_string_equal(readline_of("\x1bPq\r\n#0\x1b\\ok\r"), "ok");
	/* ESC + other byte ends the string and starts a new sequence */
	assert_string_equal(readline_of("\x1b]junk\x1b[Cmem\r"), "mem");
	/* Ctrl-C leaves a string that never ends */
	assert_string_equal(readline_of("\x1b]stuck\x03" "cpu\r"), "cpu");
	assert_string_equal(fio.out, "nbprof> ^C\nnbprof> cpu\n");
}

static void editor_swallows_long_csi(void **state)
{
	char in[300];

	/* 40 parameter bytes, then the final byte */
	strcpy(in, "a\x1b[");
	for (int i = 0; i < 20; i++)
		strcat(in, "1;");
	strcat(in, "5Db\r");
	assert_string_equal(readline_of(in), "ab");
	assert_string_equal(fio.out, "nbprof> ab\n");
	/* charset designation (ESC ( B) and a run of ESC bytes */
	assert_string_equal(readline_of("\x1b(Bc\x1b\x1b\x1b\x1b[Cd\r"), "cd");
	/* a long run of ESC costs no stack */
	{
		static char many[200000];

		memset(many, 0x1b, sizeof(many) - 4);
		strcpy(many + sizeof(many) - 4, "[Ce");
		feed(many);
		clear_output();
		assert_int_equal(shell_readline(&sh), SHELL_EOF);
		assert_int_equal(sh.len, 1);
	}
}

static void editor_esc_then_enter_keeps_enter(void **state)
{
	feed("ls\x1b\rcpu\x1b[1\rmem\x1b(\r");
	assert_int_equal(shell_readline(&sh), 2);
	assert_string_equal(sh.line, "ls");
	assert_int_equal(shell_readline(&sh), 3);	/* CR inside a CSI */
	assert_string_equal(sh.line, "cpu");
	assert_int_equal(shell_readline(&sh), 3);	/* CR after an intermediate byte */
	assert_string_equal(sh.line, "mem");
	/* ESC then Ctrl-C and ESC then backspace are those keys */
	assert_string_equal(readline_of("x\x1b\x03y\x1b\bz\r"), "z");
	assert_string_equal(fio.out, "nbprof> x^C\nnbprof> y\b \bz\n");
}

static void history_up_down(void **state)
{
	readline_of("one\r");
	readline_of("two\r");
	assert_string_equal(readline_of("\x1b[A\r"), "two");
	assert_string_equal(readline_of("\x1b[A\x1b[A\r"), "one");
	assert_string_equal(readline_of("\x1b[A\x1b[A\x1b[A\x1b[A\r"), "one");	/* stops at the oldest */
	assert_string_equal(readline_of("ab\x1b[A\x1b[B\r"), "ab");		/* down returns the typed line */
	assert_string_equal(readline_of("\x1b[B\r"), "");			/* down at the bottom: nothing */
	/* history is now one, two, one, ab; each step erases the visible line and draws the entry */
	assert_string_equal(readline_of("\x1b[A\x1b[A\x1b[A\r"), "two");
	assert_string_equal(fio.out, "nbprof> ab\b \b\b \bone\b \b\b \b\b \btwo\n");
}

static void history_no_duplicate_of_previous(void **state)
{
	readline_of("first\r");
	readline_of("same\r");
	readline_of("same\r");
	assert_int_equal(sh.hist_count, 2);	/* first, same */
	assert_string_equal(readline_of("\x1b[A\x1b[A\r"), "first");
	readline_of("first\r");		/* not a duplicate of the previous entry */
	assert_int_equal(sh.hist_count, 3);
}

static void history_keeps_sixteen(void **state)
{
	char line[16], keys[20 * 3 + 2] = "";

	for (int i = 1; i <= 20; i++) {
		snprintf(line, sizeof(line), "cmd%d\r", i);
		readline_of(line);
	}
	assert_int_equal(sh.hist_count, SHELL_HISTORY);
	for (int i = 0; i < 17; i++)
		strcat(keys, "\x1b[A");
	strcat(keys, "\r");
	/* 20 lines entered, 16 kept: the oldest reachable is cmd5 */
	assert_string_equal(readline_of(keys), "cmd5");
}

/* --- dispatcher ------------------------------------------------------------ */

static void unknown_command(void **state)
{
	int st = run("frobnicate now");

	assert_string_equal(fio.out, "error: unknown command 'frobnicate' (try 'help')\n");
	assert_int_not_equal(st, 0);
	assert_int_equal(fake_plat.nreads + fake_plat.nwrites + fake_plat.nfaults, 0);
}

static void empty_line_and_bad_quote(void **state)
{
	assert_int_equal(run("   "), 0);
	assert_string_equal(fio.out, "");
	assert_one_error(run("msr read \"1a0"), "unterminated quote");
	assert_int_equal(fake_plat.nreads, 0);
}

static void help_lists_everything(void **state)
{
	static const char *const names[] = { "help", "cpu", "mem", "msr", "fault", "events", "reboot",
					     "poweroff" };

	assert_int_equal(run("help"), 0);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char want[32];

		snprintf(want, sizeof(want), "\n  %s ", names[i]);
		assert_output_has(want);
	}
	assert_int_equal(run("help msr"), 0);
	assert_output_has("usage: msr read [--cpu 0|1] ADDR | msr write [--cpu 0|1] ADDR VALUE [--force] | "
			  "msr trace on|off\n");
	assert_output_has("--force");
	assert_one_error(run("help nosuch"), "unknown command 'nosuch'");
	assert_one_error(run("help a b"), "at most one argument");
}

static void help_states_the_limits(void **state)
{
	char want[64];

	snprintf(want, sizeof(want), "at most %d characters and %d words", SHELL_LINE_MAX - 1,
		 PARSE_MAX_ARGS);
	assert_int_equal(run("help"), 0);
	assert_output_has(want);
	assert_int_equal(run("help help"), 0);
	assert_output_has(want);
}

static int cmd_hello(struct shell *s, int argc, char **argv)
{
	shell_printf(s, "hello %d\n", argc);
	return 7;
}

static const struct shell_cmd extra_cmds[] = {
	{ "hello", "hello [ARGS]", "say hello", "Says hello.\n", cmd_hello },
};

static void extra_command_table(void **state)
{
	assert_int_equal(shell_add_commands(&sh, extra_cmds, 1), 0);
	assert_int_equal(run("hello a \"b c\""), 7);
	assert_string_equal(fio.out, "hello 3\n");
	run("help");
	assert_output_has("  hello      say hello\n");
	assert_ptr_equal(shell_find(&sh, "hello"), &extra_cmds[0]);
	assert_null(shell_find(&sh, "hell"));
}

static void run_loop_until_eof(void **state)
{
	feed("bogus\rhelp cpu\r");
	clear_output();
	shell_run(&sh);
	assert_output_has("nbprof> bogus\nerror: unknown command 'bogus' (try 'help')\nnbprof> help cpu\nusage: cpu\n");
	assert_int_equal(sh.last_status, 0);
}

/* --- msr ------------------------------------------------------------------- */

static void msr_read_present(void **state)
{
	fake_msr_set(MSR_IA32_MISC_ENABLE, 1);
	assert_int_equal(run("msr read 1A0H"), 0);
	assert_string_equal(fio.out, "MSR 1A0H = 0000000000000001H\n");
	assert_int_equal(run("msr read 0x1a0"), 0);
	assert_string_equal(fio.out, "MSR 1A0H = 0000000000000001H\n");
	assert_int_equal(run("msr read 416"), 0);
	assert_string_equal(fio.out, "MSR 1A0H = 0000000000000001H\n");
}

static void msr_read_names_pmu_registers(void **state)
{
	fake_msr_set(MSR_IQ_CCCR4, 0x3000);
	assert_int_equal(run("msr read 370h"), 0);
	assert_string_equal(fio.out, "MSR 370H = 0000000000003000H (MSR_IQ_CCCR4)\n");
}

static void msr_read_faulting(void **state)
{
	assert_one_error(run("msr read 802H"), "error: rdmsr 802H: #GP (MSR not present)");
	assert_int_equal(fake_plat.nreads, 1);
}

static void msr_read_from_model_backend(void **state)
{
	fake_plat.msr_backend = "model 0F_04H";
	fake_msr_set(MSR_IQ_CCCR4, 0x3000);
	assert_int_equal(run("msr read 370h"), 0);
	assert_string_equal(fio.out, "MSR 370H = 0000000000003000H (MSR_IQ_CCCR4) [model 0F_04H]\n");
	/* IQ_ESCR0 (3BAH) exists on models 0-2 only (PMU reference 1.2): the model's #GP */
	assert_one_error(run("msr read 3BAH"), "error: rdmsr 3BAH: #GP (MSR not present on model 0F_04H)");
}

static void msr_trace_switch(void **state)
{
	assert_int_equal(run("msr trace on"), 0);
	assert_true(fake_plat.trace);
	assert_string_equal(fio.out, "msr trace: on\n");
	assert_int_equal(run("msr trace off"), 0);
	assert_false(fake_plat.trace);
	assert_one_error(run("msr trace maybe"), "usage: msr trace on|off");
	assert_one_error(run("msr trace"), "usage: msr trace on|off");
	fake_plat.no_pmu = true;
	assert_one_error(run("msr trace on"), "no PMU backend to trace");
	assert_false(fake_plat.trace);
}

static void msr_read_bad_args(void **state)
{
	assert_one_error(run("msr read zz"), "bad MSR address 'zz': not a number");
	assert_one_error(run("msr read 0x100000000"), "number too large");
	assert_one_error(run("msr read"), "usage: msr read [--cpu 0|1] ADDR");
	assert_one_error(run("msr read 1 2"), "usage: msr read [--cpu 0|1] ADDR");
	assert_one_error(run("msr"), "usage: msr read");
	assert_one_error(run("msr peek 1"), "unknown msr operation 'peek' (expected read, write or trace)");
	assert_int_equal(fake_plat.nreads, 0);
}

static void msr_write_pmu(void **state)
{
	fake_msr_set(MSR_BPU_CCCR0, 0);
	assert_int_equal(run("msr write 360H 0x1000"), 0);
	assert_int_equal(fake_msr_get(MSR_BPU_CCCR0, 99), 0x1000);
	assert_string_equal(fio.out, "MSR 360H <- 0000000000001000H (MSR_BPU_CCCR0)\n");
}

static void msr_write_refused_without_force(void **state)
{
	fake_msr_set(MSR_IA32_MISC_ENABLE, 0x80);
	assert_one_error(run("msr write 1A0H 0"), "MSR 1A0H is not a NetBurst PMU register; add --force");
	assert_int_equal(fake_plat.nwrites, 0);
	assert_int_equal(fake_msr_get(MSR_IA32_MISC_ENABLE, 0), 0x80);

	assert_int_equal(run("msr write 1A0H 0 --force"), 0);
	assert_int_equal(fake_msr_get(MSR_IA32_MISC_ENABLE, 99), 0);
	assert_int_equal(run("msr write --force 1A0H 81h"), 0);
	assert_int_equal(fake_msr_get(MSR_IA32_MISC_ENABLE, 99), 0x81);
}

static void msr_write_faulting(void **state)
{
	/* 3BAH (IQ_ESCR0) is a PMU register, but absent on this fake CPU */
	assert_one_error(run("msr write 3BAH 1"), "wrmsr 3BAH: #GP");
	assert_int_equal(fake_plat.nwrites, 1);
}

static void msr_write_bad_args(void **state)
{
	fake_msr_set(MSR_BPU_CCCR0, 5);
	assert_one_error(run("msr write 360H"), "usage: msr write [--cpu 0|1] ADDR VALUE [--force]");
	assert_one_error(run("msr write 360H 1 2"), "usage: msr write");
	assert_one_error(run("msr write 360H zz"), "bad value 'zz'");
	assert_one_error(run("msr write 360H 0x10000000000000000"), "number too large");
	assert_one_error(run("msr write x 1"), "bad MSR address 'x'");
	assert_one_error(run("msr write 360H 1 --forse"), "unknown option '--forse'");
	assert_int_equal(fake_plat.nwrites, 0);
	assert_int_equal(fake_msr_get(MSR_BPU_CCCR0, 99), 5);
}

/* `--cpu 1`: the access runs on LP1 (plat_run_on_lp), and the line says so. */
static void msr_on_lp1(void **state)
{
	fake_plat.msr_backend = "model 0F_04H";
	fake_msr_set(MSR_PEBS_ENABLE, 0);
	assert_int_equal(run("msr write --cpu 1 3F1H 02000000H"), 0);
	assert_int_equal(fake_plat.lp_calls[1], 1);
	assert_int_equal(fake_msr_get(MSR_PEBS_ENABLE, 99), 0x02000000);
	assert_string_equal(fio.out, "MSR 3F1H <- 0000000002000000H [model 0F_04H] on LP1\n");
	assert_int_equal(run("msr read 3F1H --cpu 1"), 0);
	assert_int_equal(fake_plat.lp_calls[1], 2);
	assert_string_equal(fio.out, "MSR 3F1H = 0000000002000000H [model 0F_04H] on LP1\n");
	assert_int_equal(run("msr read --cpu 0 3F1H"), 0);	/* LP0 named when asked for */
	assert_int_equal(fake_plat.lp_calls[0], 1);
	assert_output_has("on LP0\n");
}

/* No sibling, or a busy one: one error line, nothing written. */
static void msr_on_lp1_refused(void **state)
{
	fake_msr_set(MSR_PEBS_ENABLE, 5);
	fake_plat.lp1_refusal = "no Hyper-Threading sibling: this machine has one logical processor";
	assert_one_error(run("msr write --cpu 1 3F1H 0"),
			 "error: msr write --cpu 1: no Hyper-Threading sibling: this machine has one");
	assert_one_error(run("msr read --cpu 1 3F1H"), "error: msr read --cpu 1: no Hyper-Threading");
	fake_plat.lp1_refusal = "LP1 is busy (it still runs earlier work)";
	assert_one_error(run("msr write --cpu 1 3F1H 0"), "msr write --cpu 1: LP1 is busy");
	assert_int_equal(fake_plat.nwrites, 0);
	assert_int_equal(fake_msr_get(MSR_PEBS_ENABLE, 99), 5);
	assert_one_error(run("msr read --cpu 2 3F1H"), "--cpu wants 0 or 1");
	assert_one_error(run("msr write 3F1H 0 --cpu"), "--cpu wants 0 or 1");
	assert_one_error(run("msr read --cpus 1 3F1H"), "unknown option '--cpus' (only --cpu)");
	assert_int_equal(fake_plat.nreads + fake_plat.nwrites, 0);
}

/* --- fault, reboot, poweroff ----------------------------------------------- */

static void fault_kinds(void **state)
{
	static const struct { const char *arg; enum plat_fault_kind kind; const char *name; } k[] = {
		{ "de", PLAT_FAULT_DE, "#DE" }, { "ud", PLAT_FAULT_UD, "#UD" },
		{ "gp", PLAT_FAULT_GP, "#GP" }, { "pf", PLAT_FAULT_PF, "#PF" },
		{ "int3", PLAT_FAULT_INT3, "int3" },
	};
	char line[32];

	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		snprintf(line, sizeof(line), "fault %s", k[i].arg);
		assert_int_equal(run(line), 0);
		assert_int_equal(fake_plat.last_fault, k[i].kind);
		assert_int_equal(fake_plat.nfaults, i + 1);
		assert_output_has(k[i].name);
	}
}

static void fault_bad_kind(void **state)
{
	assert_one_error(run("fault xx"), "unknown fault kind 'xx' (valid: de, ud, gp, pf, int3)");
	assert_one_error(run("fault"), "usage: fault de|ud|gp|pf|int3");
	assert_one_error(run("fault de ud"), "usage: fault");
	assert_one_error(run("fault DE"), "unknown fault kind 'DE'");
	assert_int_equal(fake_plat.nfaults, 0);
}

static void fault_halt_option(void **state)
{
	assert_int_equal(run("fault gp --halt"), 0);
	assert_int_equal(fake_plat.last_fault, PLAT_FAULT_GP);
	assert_int_equal(fake_plat.nunguarded, 1);
	assert_output_has("outside the command guard");
	assert_int_equal(run("fault pf"), 0);		/* without the option: guarded */
	assert_int_equal(fake_plat.nunguarded, 1);
	assert_int_equal(fake_plat.nfaults, 2);
	assert_one_error(run("fault gp --hlt"), "unknown fault option '--hlt' (valid: --halt)");
	assert_one_error(run("fault --halt gp"), "usage: fault de|ud|gp|pf|int3 [--halt]");
	assert_one_error(run("fault gp --halt x"), "usage: fault de|ud|gp|pf|int3 [--halt]");
	assert_int_equal(fake_plat.nfaults, 2);
}

static void reboot_and_poweroff(void **state)
{
	assert_one_error(run("reboot now"), "reboot takes no arguments");
	assert_one_error(run("poweroff -f"), "poweroff takes no arguments");
	assert_int_equal(fake_plat.nreboots + fake_plat.npoweroffs, 0);
	/* the fake returns, which on the machine means the method failed */
	assert_int_not_equal(run("reboot"), 0);
	assert_int_equal(fake_plat.nreboots, 1);
	assert_output_has("reboot failed");
	assert_int_not_equal(run("poweroff"), 0);
	assert_int_equal(fake_plat.npoweroffs, 1);
}

/* --- cpu ------------------------------------------------------------------- */

static uint32_t pack4(const char *s)
{
	return (uint32_t)(uint8_t)s[0] | (uint32_t)(uint8_t)s[1] << 8 |
	       (uint32_t)(uint8_t)s[2] << 16 | (uint32_t)(uint8_t)s[3] << 24;
}

/* A Prescott 0F41H with HT; vendor and signature encoded as the SDM describes. */
static void fake_prescott(void)
{
	struct cpuid_raw r = { 0 };

	r.leaf0.eax = 5;
	r.leaf0.ebx = pack4("Genu");
	r.leaf0.edx = pack4("ineI");
	r.leaf0.ecx = pack4("ntel");
	r.leaf1.eax = 0xf41;
	r.leaf1.ebx = 2u << 16;
	r.leaf1.edx = CPUID_1_EDX_HTT | CPUID_1_EDX_DS | CPUID_1_EDX_TSC;
	r.leaf1.ecx = CPUID_1_ECX_DTES64;
	r.ext[0].eax = CPUID_EXT_BASE + 1;
	r.ext[1].edx = CPUID_81_EDX_LM;
	cpuid_decode(&r, &fake_plat.cpu);
	fake_plat.cpu.misc_enable_ok = true;
	fake_plat.cpu.misc_enable = CPU_MISC_PERFMON | CPU_MISC_BTS_UNAVAIL;
	fake_plat.cpu.tsc_hz = 3400123000;
	fake_plat.cpu.lapic_ok = true;
}

static void cpu_prescott(void **state)
{
	fake_prescott();
	assert_int_equal(run("cpu"), 0);
	assert_output_has("vendor        GenuineIntel\n");
	assert_output_has("0F_04H stepping 1");
	assert_output_has("HTT           yes, 2 logical processors per package\n");
	assert_output_has("cores         1 per package, 2 threads per core\n");
	assert_output_has("EM64T         yes\n");
	assert_output_has("DS / DTES64   yes / yes\n");
	assert_output_has("bit 7  perfmon available   yes\n");
	assert_output_has("bit 11 BTS unavailable     yes\n");
	assert_output_has("bit 12 PEBS unavailable    no\n");
	/* PMU reference 5.1: DS present, bit 7 set, bit 12 clear -> PEBS; bit 11 set -> no BTS */
	assert_output_has("DS/PEBS/BTS   yes / yes / no\n");
	assert_output_has("TSC           3400.123 MHz\n");
	/* PMU reference section 7: model 4 lost IQ_ESCR0/1, has extended cascading and instr_completed */
	assert_output_has("  IQ_ESCR0/1              no\n");
	assert_output_has("  ESCRs                   43\n");
	assert_output_has("  extended cascading      yes\n");
	assert_output_has("  instr_completed         yes\n");
	assert_output_has("  cascade PMI erratum     no\n");
	assert_int_equal(strstr(fio.out, "error"), NULL);
}

static void cpu_northwood_caps(void **state)
{
	fake_prescott();
	fake_plat.cpu.display_model = 2;	/* 0F_02H: IQ_ESCR0/1 present, cascade PMI erratum */
	fake_plat.cpu.stepping = 9;
	assert_int_equal(run("cpu"), 0);
	assert_output_has("  IQ_ESCR0/1              yes\n");
	assert_output_has("  cascade PMI erratum     yes\n");
	assert_output_has("  instr_completed         no\n");
}

static void cpu_misc_enable_unreadable(void **state)
{
	fake_prescott();
	fake_plat.cpu.misc_enable_ok = false;
	fake_plat.cpu.tsc_hz = 0;
	assert_int_equal(run("cpu"), 0);
	assert_output_has("MISC_ENABLE   unreadable");
	assert_null(strstr(fio.out, "perfmon available"));
	assert_output_has("DS/PEBS/BTS   yes / unknown / unknown\n");
	assert_output_has("not calibrated");
}

/* PMU reference 5.1: each of DS, bit 7, bit 11 and bit 12 can take PEBS or BTS away. */
static void cpu_pebs_bts_availability(void **state)
{
	fake_prescott();
	fake_plat.cpu.misc_enable = CPU_MISC_PERFMON;
	assert_int_equal(run("cpu"), 0);
	assert_output_has("DS/PEBS/BTS   yes / yes / yes\n");
	fake_plat.cpu.misc_enable = CPU_MISC_PERFMON | CPU_MISC_PEBS_UNAVAIL;
	assert_int_equal(run("cpu"), 0);
	assert_output_has("DS/PEBS/BTS   yes / no / yes\n");
	fake_plat.cpu.misc_enable = 0;		/* perfmon not available: no PEBS */
	assert_int_equal(run("cpu"), 0);
	assert_output_has("DS/PEBS/BTS   yes / no / yes\n");
	fake_plat.cpu.misc_enable = CPU_MISC_PERFMON;
	fake_plat.cpu.ds = false;		/* no DS save area: neither */
	assert_int_equal(run("cpu"), 0);
	assert_output_has("DS/PEBS/BTS   no / no / no\n");
}

static void cpu_not_netburst(void **state)
{
	fake_prescott();
	fake_plat.cpu.display_family = 6;
	fake_plat.cpu.display_model = 0x0f;
	fake_plat.cpu.is_netburst = false;
	assert_int_equal(run("cpu"), 0);
	assert_output_has("not a NetBurst CPU (family 06H");
	assert_null(strstr(fio.out, "extended cascading"));
}

static void cpu_takes_no_arguments(void **state)
{
	assert_one_error(run("cpu -v"), "cpu takes no arguments");
}

/* --- mem ------------------------------------------------------------------- */

static void mem_summary_and_map(void **state)
{
	fake_plat.mem.nregions = 3;
	fake_plat.mem.bytes[MEM_USABLE] = 126ull << 20;
	fake_plat.mem.regions[MEM_USABLE] = 2;
	fake_plat.mem.bytes[MEM_RESERVED] = 256ull << 10;
	fake_plat.mem.regions[MEM_RESERVED] = 1;
	fake_plat.mem.free_bytes = 100ull << 20;
	fake_plat.mem.highest_addr = 0x8000000;
	fake_plat.regions[0] = (struct mem_region){ 0, 0xa0000, MEM_USABLE };
	fake_plat.regions[1] = (struct mem_region){ 0xf0000, 0x10000, MEM_RESERVED };
	fake_plat.nregions = 2;

	assert_int_equal(run("mem"), 0);
	assert_output_has("3 regions, usable RAM up to 8000000H");
	assert_output_has("usable      2 regions  126 MiB\n");
	assert_output_has("reserved    1 regions  256 KiB\n");
	assert_output_has("free RAM      100 MiB\n");

	assert_int_equal(run("mem map"), 0);
	assert_output_has("0000000000000000-000000000009FFFF  usable   640 KiB\n");
	assert_output_has("00000000000F0000-00000000000FFFFF  reserved 64 KiB\n");
	assert_one_error(run("mem mop"), "unknown mem argument 'mop'");
	assert_one_error(run("mem map x"), "usage: mem [map]");
}

/* --- events ---------------------------------------------------------------- */

static void events_list_and_filter(void **state)
{
	unsigned lines = 0;

	fake_prescott();
	assert_int_equal(run("events retired"), 0);
	for (const char *p = fio.out; (p = strchr(p, '\n')) != NULL; p++)
		lines++;
	assert_true(lines >= 2);
	assert_output_has("instr_retired");
	assert_output_has("branch_retired");
	assert_null(strstr(fio.out, "ITLB_reference"));
	assert_int_equal(run("events"), 0);
	assert_output_has("ITLB_reference");
	assert_output_has("instr_retired");
}

static void events_marks_what_the_model_lacks(void **state)
{
	/* PMU reference section 7: instr_completed exists on models 3, 4, 6 only */
	fake_prescott();
	assert_int_equal(run("events instr_completed"), 0);
	assert_output_has("instr_completed");
	assert_null(strstr(fio.out, "not on this CPU"));
	fake_plat.cpu.display_model = 2;
	assert_int_equal(run("events instr_completed"), 0);
	assert_output_has("not on this CPU");
}

static void events_list_has_a_header_and_the_sources(void **state)
{
	fake_prescott();
	fake_plat.event_source = "stepped";
	assert_int_equal(run("events retired"), 0);
	assert_true(strncmp(fio.out, "event ", 6) == 0);	/* the header comes first */
	assert_output_has("[source]");
	assert_output_has("[real: stepped]");
	assert_output_has("# model:");
	fake_plat.event_source = "synthetic";
	assert_int_equal(run("events"), 0);
	assert_output_has("[synthetic]");
	assert_null(strstr(fio.out, "[real: stepped]"));
	fake_plat.event_source = "hardware";	/* the hardware backend: no marks, no legend */
	assert_int_equal(run("events"), 0);
	assert_null(strstr(fio.out, "[synthetic]"));
	assert_null(strstr(fio.out, "# model:"));
	/* one event's details: no header, its row first */
	assert_int_equal(run("events instr_retired"), 0);
	assert_true(strncmp(fio.out, "instr_retired ", 14) == 0);
}

static void events_bad_args(void **state)
{
	fake_prescott();
	assert_one_error(run("events zzzz"), "no event matches 'zzzz'");
	assert_one_error(run("events a b"), "usage: events [PATTERN]");
}

#define T(f) cmocka_unit_test_setup(f, setup)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(tokenize_blanks), T(tokenize_quotes), T(tokenize_errors), T(tokenize_takes_max_words),
		T(numbers_accepted), T(numbers_refused), T(numbers_overflow),
		T(editor_plain_line_and_prompt), T(editor_line_endings), T(editor_backspace_and_del),
		T(editor_ctrl_u), T(editor_ctrl_c), T(editor_ignores_other_escapes_and_controls),
		T(editor_eof), T(editor_longest_line_fits), T(editor_overlong_line_is_an_error),
		T(editor_overlong_command_runs_nothing), T(editor_overlong_discards_edits_until_enter),
		T(editor_swallows_osc_and_dcs), T(editor_swallows_long_csi),
		T(editor_esc_then_enter_keeps_enter), T(help_states_the_limits),
		T(history_up_down), T(history_no_duplicate_of_previous), T(history_keeps_sixteen),
		T(unknown_command), T(empty_line_and_bad_quote), T(help_lists_everything),
		T(extra_command_table), T(run_loop_until_eof),
		T(msr_read_present), T(msr_read_names_pmu_registers), T(msr_read_faulting),
		T(msr_read_from_model_backend), T(msr_trace_switch),
		T(msr_read_bad_args), T(msr_write_pmu), T(msr_write_refused_without_force),
		T(msr_write_faulting), T(msr_write_bad_args), T(msr_on_lp1), T(msr_on_lp1_refused),
		T(fault_kinds), T(fault_bad_kind), T(fault_halt_option), T(reboot_and_poweroff),
		T(cpu_prescott), T(cpu_northwood_caps), T(cpu_misc_enable_unreadable),
		T(cpu_pebs_bts_availability),
		T(cpu_not_netburst), T(cpu_takes_no_arguments),
		T(mem_summary_and_map),
		T(events_list_and_filter), T(events_marks_what_the_model_lacks), T(events_bad_args),
		T(events_list_has_a_header_and_the_sources),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
