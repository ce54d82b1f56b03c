/*
 * fuzz_explain.c - `explain` (pmu/p4_explain.c) and its argument parser.
 *
 * Byte 0 picks the CPU model, Hyper-Threading and the input's form:
 *   text   "MSR=VALUE ..." words as typed, through stat_parse_writes;
 *   binary 9-byte records {u8 register, u64 value}, the register byte
 *          choosing a counter, CCCR or ESCR of the tables (or an MSR
 *          outside them), so every field of every register is reached.
 * Contract checked: explain prints NUL-terminated lines of bounded length
 * and counts as problems exactly the lines that start with "! ".
 */
#include "lib/parse.h"
#include "pmu/p4_explain.h"
#include "pmu/p4_tables.h"
#include "shell/stat_opts.h"
#include "tests/fuzz/fuzz.h"

#define EXPLAIN_MAX	64

static void explain_line(void *ctx, const char *s)
{
	int *problems = ctx;

	fuzz_check(strlen(s) < 1024);
	if (strncmp(s, "! ", 2) == 0)
		(*problems)++;
}

static void explain_run(const struct p4_msr_write *w, unsigned n, const struct p4_caps *caps,
			bool ht)
{
	int problems = 0;
	int r = p4_explain(w, n, caps, ht, explain_line, &problems);

	fuzz_check(r == problems);
}

/* The register byte: counters, CCCRs and ESCRs by index, else a raw MSR near them. */
static uint32_t explain_msr(uint8_t b)
{
	if (b < P4_NCOUNTER)
		return p4_counters[b].msr;
	b -= P4_NCOUNTER;
	if (b < P4_NCOUNTER)
		return p4_counters[b].cccr_msr;
	b -= P4_NCOUNTER;
	if (b < P4_NESCR)
		return p4_escrs[b].msr;
	return 0x300 + b;
}

static unsigned explain_binary(const uint8_t *d, size_t size, struct p4_msr_write *w)
{
	unsigned n = 0;

	for (; size >= 9 && n < EXPLAIN_MAX; d += 9, size -= 9) {
		uint64_t v = 0;

		for (int i = 8; i >= 1; i--)
			v = v << 8 | d[i];
		w[n].msr = explain_msr(d[0]);
		w[n++].value = v;
	}
	return n;
}

static unsigned explain_text(const uint8_t *d, size_t size, struct p4_msr_write *w)
{
	char *line = fuzz_cstr(d, size), *argv[PARSE_MAX_ARGS + 1], err[256];
	const char *perr;
	int argc = parse_tokenize(line, argv, PARSE_MAX_ARGS, &perr);
	unsigned n = 0;

	if (argc > 0 && stat_parse_writes(argc, argv, w, EXPLAIN_MAX, &n, err, sizeof(err)) != 0) {
		fuzz_check(memchr(err, '\0', sizeof(err)) != NULL);
		n = 0;
	}
	fuzz_check(n <= EXPLAIN_MAX && (argc <= 0 || n == 0 || n == (unsigned)argc));
	free(line);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct p4_caps caps;
	struct p4_msr_write w[EXPLAIN_MAX];
	unsigned n;

	if (size < 1)
		return 0;
	fuzz_caps(data[0], &caps);
	if (data[0] & 0x40)
		n = explain_binary(data + 1, size - 1, w);
	else
		n = explain_text(data + 1, size - 1, w);
	if (n > 0)
		explain_run(w, n, &caps, (data[0] & 0x80) != 0);
	return 0;
}
