/*
 * test_report.c - prof/report.c: top list, annotate and perf-script text.
 *
 * A made-up symbol table (alpha, beta, gamma) and hand-placed samples give
 * counts whose percentages are simple fractions; the script lines are
 * checked against the perf-script shape report.h documents and the field
 * rules stackcollapse-perf.pl applies (header regex, "+0x" offsets,
 * "(dso)", blank line after each stack).
 */
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "prof/report.h"

struct fsym {
	uint64_t start, end;
	const char *name;
};

static const struct fsym fsyms[] = {
	{ 0x1000, 0x1100, "alpha" },
	{ 0x1100, 0x1180, "beta" },
	{ 0x1180, 0x1200, "gamma" },
};

static const char *fake_lookup(void *ctx, uint64_t addr, uint64_t *off)
{
	for (size_t i = 0; i < sizeof(fsyms) / sizeof(fsyms[0]); i++)
		if (addr >= fsyms[i].start && addr < fsyms[i].end) {
			*off = addr - fsyms[i].start;
			return fsyms[i].name;
		}
	return NULL;
}

static const struct report_syms syms = { .lookup = fake_lookup };

#define MAXLINES 200
static char lines[MAXLINES][REPORT_LINE_MAX];
static int nlines;

static void collect(void *ctx, const char *text)
{
	assert_true(nlines < MAXLINES);
	snprintf(lines[nlines++], REPORT_LINE_MAX, "%s", text);
}

static const struct report_out out = { .line = collect };

static uint64_t mem[2048];
static struct sample_store store;
static const struct sample_store *stores[] = { &store };
static const struct sample_event events[] = { { "instr_retired", 1000 }, { "clockticks", 50000 } };
static struct sample_run run = {
	.stores = stores, .nstores = 1, .events = events, .nevents = 2,
	.comm = "loop", .tsc_hz = 2000000000, .tsc_start = 1000,
};
static struct report_entry scratch[64];

static void add(uint64_t ip, uint8_t event, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct sample s = { .ip = ip, .event = event, .tsc = 1000 + i };

		assert_int_equal(sample_store_append(&store, &s), SAMPLE_STORED);
	}
}

/* alpha 6 (two addresses), beta 3, gamma 1, unknown 0x5000 2: 12 samples of event 0. */
static int setup(void **state)
{
	nlines = 0;
	assert_int_equal(sample_store_init(&store, mem, sizeof(mem), SAMPLE_STOP_WHEN_FULL, 1), 0);
	add(0x1010, 0, 4);
	add(0x1020, 0, 2);
	add(0x1104, 0, 3);
	add(0x1180, 0, 1);
	add(0x5000, 0, 2);
	return 0;
}

static int body_start(void)
{
	for (int i = 0; i < nlines; i++)
		if (lines[i][0] != '#')
			return i;
	return nlines;
}

static void assert_row(int i, const char *pct, const char *count, const char *what)
{
	char want[REPORT_LINE_MAX];

	snprintf(want, sizeof(want), "  %7s %9s  %s", pct, count, what);
	assert_string_equal(lines[i], want);
}

static void top_by_symbol(void **state)
{
	struct report_opts o = { .sort = REPORT_SORT_SYM, .event = REPORT_ALL_EVENTS };
	int b;

	assert_int_equal(report_top(&run, &o, &syms, scratch, 64, &out), 12);
	assert_string_equal(lines[0], "# 12 samples, sorted by symbol");
	b = body_start();
	assert_int_equal(nlines - b, 4);
	assert_row(b + 0, "50.00%", "6", "alpha");
	assert_row(b + 1, "25.00%", "3", "beta");
	assert_row(b + 2, "16.67%", "2", "0x5000");	/* 2/12 rounds up */
	assert_row(b + 3, "8.33%", "1", "gamma");
}

static void top_limit_and_ip_sort(void **state)
{
	struct report_opts o = { .sort = REPORT_SORT_IP, .limit = 2, .event = REPORT_ALL_EVENTS };
	int b;

	assert_int_equal(report_top(&run, &o, &syms, scratch, 64, &out), 12);
	b = body_start();
	assert_row(b + 0, "33.33%", "4", "0x0000000000001010  alpha+0x10");
	assert_row(b + 1, "25.00%", "3", "0x0000000000001104  beta+0x4");
	assert_string_equal(lines[b + 2], "# 3 more rows not shown (limit 2)");
	assert_int_equal(nlines, b + 3);
}

static void top_filters_by_event(void **state)
{
	struct report_opts o = { .sort = REPORT_SORT_SYM, .event = 1 };
	int b;

	add(0x1190, 1, 3);
	assert_int_equal(report_top(&run, &o, &syms, scratch, 64, &out), 3);
	b = body_start();
	assert_row(b, "100.00%", "3", "gamma");
	assert_int_equal(nlines, b + 1);
	assert_non_null(strstr(lines[1], "clockticks, period 50000"));
}

static void full_table_folds_into_other(void **state)
{
	struct report_opts o = { .sort = REPORT_SORT_SYM, .event = REPORT_ALL_EVENTS };
	uint64_t sum = 0;
	int b;

	/* Four keys, two rows: every sample must still be counted. */
	assert_int_equal(report_top(&run, &o, &syms, scratch, 2, &out), 12);
	b = body_start();
	assert_int_equal(nlines - b, 3);
	for (int i = b; i < nlines; i++) {
		unsigned long long n;

		assert_int_equal(sscanf(lines[i] + 10, "%llu", &n), 1);
		sum += n;
	}
	assert_int_equal(sum, 12);
	assert_non_null(strstr(lines[nlines - 1], "[other]"));
	assert_int_equal(report_top(&run, &o, &syms, scratch, 0, &out), -1);
}

static unsigned fake_bytes(void *ctx, uint64_t addr, uint8_t *buf, unsigned max)
{
	if (addr != 0x1104)
		return 0;
	buf[0] = 0x48;
	buf[1] = 0x89;
	buf[2] = 0xe5;
	return 3;
}

static void annotate_one_function(void **state)
{
	const struct report_bytes bytes = { .read = fake_bytes };

	add(0x1100, 0, 1);
	assert_int_equal(report_annotate(&run, "beta", REPORT_ALL_EVENTS, &syms, &bytes, scratch, 64, &out), 4);
	assert_string_equal(lines[0], "# beta at 0x1100: 4 of 13 samples, 2 addresses");
	assert_int_equal(nlines, 4);
	/* Ascending addresses; percentages of the function's own samples. */
	assert_string_equal(lines[2], "  +0x0000  0x0000000000001100         1   25.00%  ");
	assert_string_equal(lines[3], "  +0x0004  0x0000000000001104         3   75.00%  48 89 e5");
	nlines = 0;
	assert_int_equal(report_annotate(&run, "delta", REPORT_ALL_EVENTS, &syms, NULL, scratch, 64, &out), 0);
	assert_string_equal(lines[0], "# no samples in delta (13 samples in all)");
}

/* --- script ---------------------------------------------------------------- */

static void script_shape(void **state)
{
	struct sample s = {
		.tsc = 1000 + 3000000000u,	/* 1.5 s at 2 GHz */
		.ip = 0x1010, .lp = 1, .event = 0, .nchain = 3,
		/* 0x1100 is beta's first byte but, as a return address, the call
		 * before it is alpha's last instruction. */
		.chain = { 0x1100, 0x1190, 0x9000 },
	};

	report_script_sample(&run, &s, &syms, &out);
	assert_int_equal(nlines, 6);
	assert_string_equal(lines[0], "loop 0/1 [001] 1.500000: 1000 instr_retired:");
	assert_string_equal(lines[1], "\t            1010 alpha+0x10 (nbprof)");
	assert_string_equal(lines[2], "\t            1100 alpha+0x100 (nbprof)");
	assert_string_equal(lines[3], "\t            1190 gamma+0x10 (nbprof)");
	assert_string_equal(lines[4], "\t            9000 [unknown] (nbprof)");
	assert_string_equal(lines[5], "");
}

/*
 * The patterns stackcollapse-perf.pl and speedscope's perf importer use:
 * a record header starts with a non-blank comm of two or more characters,
 * blanks, a pid (optionally "/tid") and blanks, and must carry a
 * "secs.frac:" time and end in "event:"; a frame line is
 * /^\s*(\w+)\s*(.+) \((\S*)\)/ and a "+0x<hex>" suffix is stripped.
 */
static void script_lines_match_collapse_patterns(void **state)
{
	regex_t head, time, ev, frame, off;
	int frames = 0, blanks = 0, heads = 0;

	assert_int_equal(regcomp(&head, "^([^[:space:]].+)[[:space:]]+([0-9]+)/*([0-9]+)*[[:space:]]+", REG_EXTENDED), 0);
	assert_int_equal(regcomp(&time, "[[:space:]]+[0-9]+\\.[0-9]+:[[:space:]]+", REG_EXTENDED), 0);
	assert_int_equal(regcomp(&ev, "[^[:space:]]+:[[:space:]]*$", REG_EXTENDED), 0);
	assert_int_equal(regcomp(&frame, "^[[:space:]]*([[:alnum:]_]+)[[:space:]]*(.+) \\(([^[:space:]]*)\\)", REG_EXTENDED), 0);
	assert_int_equal(regcomp(&off, "\\+0x[0-9a-f]+$", REG_EXTENDED), 0);
	run.comm = "two words";		/* blanks would split the comm field */
	assert_int_equal(report_script(&run, &syms, &out), 12);
	for (int i = 0; i < nlines; i++) {
		const char *l = lines[i];

		if (l[0] == '\0') {
			blanks++;
		} else if (l[0] != '\t') {
			heads++;
			assert_int_equal(regexec(&head, l, 0, NULL, 0), 0);
			assert_int_equal(regexec(&time, l, 0, NULL, 0), 0);
			assert_int_equal(regexec(&ev, l, 0, NULL, 0), 0);
			assert_int_equal(strncmp(l, "two_words 0/1 ", 14), 0);
		} else {
			regmatch_t m[4];
			char sym[128];

			frames++;
			assert_int_equal(regexec(&frame, l, 4, m, 0), 0);
			assert_int_equal(strncmp(l + m[3].rm_so, "nbprof", 6), 0);
			snprintf(sym, sizeof(sym), "%.*s", (int)(m[2].rm_eo - m[2].rm_so), l + m[2].rm_so);
			if (strcmp(sym, "[unknown]") != 0)
				assert_int_equal(regexec(&off, sym, 0, NULL, 0), 0);
		}
	}
	run.comm = "loop";
	assert_int_equal(heads, 12);
	assert_int_equal(frames, 12);
	assert_int_equal(blanks, 12);
	regfree(&head);
	regfree(&time);
	regfree(&ev);
	regfree(&frame);
	regfree(&off);
}

static void script_short_comm_and_unknown_event(void **state)
{
	struct sample s = { .tsc = 0, .ip = 0x5000, .lp = 0, .event = 7 };

	run.comm = "x";			/* one character would not match the header regex */
	report_script_sample(&run, &s, &syms, &out);
	run.comm = "loop";
	assert_string_equal(lines[0], "nbprof 0/0 [000] 0.000000: 0 event7:");
}

static bool stop_after_two(void *ctx)
{
	return nlines >= 2 * 3;
}

static void script_stops_when_asked(void **state)
{
	const struct report_out o = { .line = collect, .stop = stop_after_two };

	assert_int_equal(report_script(&run, &syms, &o), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(top_by_symbol, setup),
		cmocka_unit_test_setup(top_limit_and_ip_sort, setup),
		cmocka_unit_test_setup(top_filters_by_event, setup),
		cmocka_unit_test_setup(full_table_folds_into_other, setup),
		cmocka_unit_test_setup(annotate_one_function, setup),
		cmocka_unit_test_setup(script_shape, setup),
		cmocka_unit_test_setup(script_lines_match_collapse_patterns, setup),
		cmocka_unit_test_setup(script_short_comm_and_unknown_event, setup),
		cmocka_unit_test_setup(script_stops_when_asked, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
