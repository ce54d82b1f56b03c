/*
 * selftestgen.c - a `selftest` report block made on the host by the
 * kernel's own portable formatter (selftest/report.c), for the tests
 * of tools/selftest-report and nbprof-decode --selftest.
 *
 *	selftestgen [-n N] [-s SEED] block|truth
 *
 * N results (default 40) with pseudo-random statuses, values and notes
 * (fixed seed), some holding '|' or a tab, which the block must clean;
 * with N >= 12 the last six are the later checks as the kernel's own
 * judgements make them (PEBS, uncore, the T0_OS wait cell, the restore
 * check naming a register), passing or failing by the seed.
 *   block  what a serial log of `selftest` holds: the human lines, the
 *          NBS: block and the summary line, with other text around it
 *   truth  one line per result: group, status, name, measured, expected,
 *          note, separated by tabs, as the results were before framing
 *   qr C   the same block as the texts of QR codes of at most C characters
 *          each (selftest/report_qr.c), one a line, as `selftest --qr` shows
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "selftest/report_qr.h"
#include "selftest/selftest.h"

#define MAXN	SELFTEST_MAX_RESULTS

static const char *const groups[] = { "counters", "privilege", "threads", "overflow",
				      "cascade", "rdpmc", "pebs" };
static struct selftest_result res[MAXN];
static uint32_t rng = 1;

static uint32_t next_rand(void)
{
	rng = rng * 1103515245u + 12345u;
	return rng >> 8;
}

static void make_result(struct selftest_result *r, unsigned i)
{
	uint64_t want = next_rand() % 5000, got = want;
	unsigned kind = next_rand() % 8;

	*r = (struct selftest_result){ .group = groups[(i * 7 / MAXN) % 7] };
	snprintf(r->name, sizeof(r->name), "counter %u check %u%s", i % 18, i,
		 i % 11 == 3 ? " a|b" : "");
	if (kind == 0) {
		selftest_skip(r, i % 2 ? "not implemented yet" : "no Hyper-Threading\ahere");
		return;
	}
	if (kind == 1)
		got += 1 + next_rand() % 7;
	if (kind == 2)
		selftest_judge_range(r, got, want / 3, want + 100);
	else
		selftest_judge_exact(r, got, want);
	if (next_rand() % 2)
		snprintf(r->note, sizeof(r->note), "loop %u minus loop %u", 150 + i, 50);
}

/* The later checks, made by the kernel's judgements (selftest/judge.c). */
static void make_later(struct selftest_result *r)
{
	static const struct selftest_loads l = { 0, 1, 0, 2, { 0xc, 0x1e, 0x1f } };
	uint64_t ip[51], bad = next_rand() % 2;

	for (unsigned k = 0; k < 51; k++)
		ip[k] = 0x1000 + (k == 20 && bad ? 0x10 : 0xc);
	r[0] = (struct selftest_result){ .group = "pebs", .name = "counter 16 PEBS records" };
	selftest_judge_exact(&r[0], 51 - bad, 51);
	r[1] = (struct selftest_result){ .group = "pebs", .name = "counter 16 PEBS record IPs" };
	selftest_judge_pebs_ips(&r[1], &l, 256, 1, 5, ip, 51, 51, 0x1000);
	r[2] = (struct selftest_result){ .group = "uncore", .name = "MSR_IFSB_BUSQ0 (107CCH) ibusq" };
	selftest_judge_uncore(&r[2], 256 - bad, 256);
	r[3] = (struct selftest_result){ .group = "uncore", .name = "MSR_EFSB_DRDY0 (107D0H)" };
	selftest_judge_uncore(&r[3], 600, 256);
	r[4] = (struct selftest_result){ .group = "threads", .name = "counter 12 T0_OS only" };
	selftest_judge_wait_cell(&r[4], bad ? 0 : 4000, 2500);
	r[5] = (struct selftest_result){ .group = "restore", .name = "PMU registers as before" };
	selftest_judge_exact(&r[5], 82 + !bad, 83);
	snprintf(r[5].note, sizeof(r[5].note), "%s", bad ? "differ: MSR_ALF_ESCR0 (3CAH)" :
		 "ESCRs, CCCRs, stopped counters, PEBS, DS area, MISC_ENABLE read back");
}

static void out_line(void *ctx, const char *line)
{
	printf("%s\r\n", line);
}

static const struct selftest_machine machine = {
		.signature = 0xf29, .display = "0F_02H", .stepping = 9,
		.brand = "Intel(R) Pentium(R) 4 CPU 2.80GHz", .ucode_ok = true, .ucode = 0x2e,
		.misc_ok = true, .misc_enable = 0x00000000000c0089ull,
};

static void print_block(unsigned n)
{
	struct selftest_totals t = { 0 };
	char line[SELFTEST_LINE_MAX];

	printf("nbprof> selftest\r\nselftest: PMU conformance test (nbprof)\r\n");
	for (unsigned i = 0; i < n; i++) {
		selftest_count(&t, &res[i]);
		selftest_format(&res[i], false, line, sizeof(line));
		printf("%s\r\n", line);
	}
	selftest_block(&machine, "hardware 0F_02H stepping 9 with HT", res, n, out_line, NULL);
	printf("selftest: %u passed, %u failed, %u skipped\r\nnbprof> \r\n", t.passed, t.failed,
	       t.skipped);
}

static int print_codes(unsigned n, size_t chars)
{
	static struct selftest_qr p;
	static char text[8192];
	unsigned count;

	selftest_qr_reset(&p);
	selftest_block(&machine, "hardware 0F_02H stepping 9 with HT", res, n, selftest_qr_line, &p);
	if (selftest_qr_pack(&p) || !(count = selftest_qr_count(&p, chars)))
		return 1;
	for (unsigned k = 1; k <= count; k++) {
		if (selftest_qr_code(&p, chars, k, text, sizeof(text)) < 0)
			return 1;
		printf("%s\n", text);
	}
	return 0;
}

static void print_truth(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		printf("%s\t%s\t%s\t%s\t%s\t%s\n", res[i].group, selftest_status_name(res[i].status),
		       res[i].name, res[i].measured, res[i].expected, res[i].note);
}

int main(int argc, char **argv)
{
	unsigned n = 40;
	int i = 1;

	for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (!strcmp(argv[i], "-n"))
			n = (unsigned)strtoul(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "-s"))
			rng = (uint32_t)strtoul(argv[i + 1], NULL, 0);
	}
	if (i >= argc || n > MAXN) {
		fprintf(stderr, "usage: selftestgen [-n N (<= %d)] [-s SEED] block|truth|qr CHARS\n", MAXN);
		return 2;
	}
	for (unsigned k = 0; k < n; k++)
		make_result(&res[k], k);
	if (n >= 12)
		make_later(&res[n - 6]);
	if (!strcmp(argv[i], "block"))
		print_block(n);
	else if (!strcmp(argv[i], "truth"))
		print_truth(n);
	else if (!strcmp(argv[i], "qr") && i + 1 < argc)
		return print_codes(n, strtoul(argv[i + 1], NULL, 0));
	else
		return 2;
	return 0;
}
