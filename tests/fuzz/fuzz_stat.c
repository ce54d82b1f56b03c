/*
 * fuzz_stat.c - `stat` options (shell/stat_opts.c) through to a counter plan.
 *
 * Byte 0 picks the CPU model and Hyper-Threading, the rest is a command
 * line, tokenised as the shell does. Accepted options go on through
 * stat_build_requests, the allocator and stat_apply_tbits, as `stat` runs
 * them. Contract checked: every error message is a NUL-terminated line;
 * accepted options have their workload inside argv and at most
 * STAT_MAX_EVENTS events; every request built stays within P4_MAX_REQUESTS.
 * Each word is also run through stat_split_tbits and stat_parse_sig.
 */
#include "lib/parse.h"
#include "pmu/p4_alloc.h"
#include "shell/stat_opts.h"
#include "tests/fuzz/fuzz.h"

/* One line, unless it quotes a line break the input itself held. */
static bool input_has_lf;

static void stat_check_err(const char *err, size_t n)
{
	fuzz_check(memchr(err, '\0', n) != NULL);
	fuzz_check(input_has_lf || strchr(err, '\n') == NULL);
}

static void stat_plan(const struct stat_opts *o, const struct p4_caps *caps, bool ht)
{
	struct p4_alloc_ctx ctx = { .caps = caps, .ht = ht, .split = P4_SPLIT_GLOBAL };
	struct p4_alloc_error e;
	static struct stat_reqs r;
	static struct p4_plan plan;
	char err[256];

	if (stat_build_requests(o, caps, &r, err, sizeof(err)) != 0) {
		stat_check_err(err, sizeof(err));
		return;
	}
	fuzz_check(r.n >= 1 && r.n <= P4_MAX_REQUESTS);
	if (p4_alloc_plan(&ctx, r.req, r.n, &plan, &e) != 0)
		return;
	if (stat_apply_tbits(&r, &plan, err, sizeof(err)) != 0)
		stat_check_err(err, sizeof(err));
}

static void stat_words(int argc, char **argv)
{
	struct stat_tbits tb;
	struct p4_sig sig;
	char out[STAT_SPEC_MAX], err[256];

	for (int i = 0; i < argc; i++) {
		if (stat_split_tbits(argv[i], out, sizeof(out), &tb, err, sizeof(err)) == 0)
			fuzz_check(strlen(out) <= strlen(argv[i]));
		else
			stat_check_err(err, sizeof(err));
		stat_parse_sig(argv[i], &sig);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct p4_caps caps;
	struct stat_opts o;
	char *argv[PARSE_MAX_ARGS + 1], *line, err[256];
	const char *perr;
	int argc;

	if (size < 1)
		return 0;
	fuzz_caps(data[0], &caps);
	line = fuzz_cstr(data + 1, size - 1);
	input_has_lf = strchr(line, '\n') != NULL;
	argc = parse_tokenize(line, argv, PARSE_MAX_ARGS, &perr);
	if (argc > 0) {
		if (stat_opts_parse(argc, argv, &o, err, sizeof(err)) == 0) {
			fuzz_check(o.nev <= STAT_MAX_EVENTS);
			fuzz_check(o.workload > 0 && o.workload < argc);
			fuzz_check(o.pair == 0 || (o.pair > o.workload && o.pair < argc));
			stat_plan(&o, &caps, (data[0] & 0x80) != 0);
		} else {
			stat_check_err(err, sizeof(err));
		}
		stat_words(argc, argv);
	}
	free(line);
	return 0;
}
