/*
 * cmd_bench.c - `bench`: snippet benchmarks in the manner of nanoBench.
 *
 *   bench [-e SPEC]... [--init HEX] [-u U] [-n N] [-w W] [-r R] [--ring 0|3] CODEHEX
 *
 * The snippet (hex bytes) is wrapped in a loop (workload/snippet.h: N
 * iterations of U copies, counter in R15, which the snippet must leave
 * alone), loaded into the snippet area in the workload text and run as the
 * `snippet` workload, so stepping (the model), rings and counting work as
 * for every workload. Each event group is measured W + R times with unroll
 * U and W + R times with 2U; the W warm-up runs are discarded. Run r of U
 * and run r of 2U give one per-iteration value (count(2U) - count(U)) /
 * (N * U): the loop, the init code and the measurement's own start/stop
 * cancel. min / median / 20-80 % trimmed mean are over the R values.
 *
 * Events that do not fit the PMU at once are measured in successive groups:
 * as many as p4_alloc places together, in order. Everything (hex, sizes,
 * events, groups) is checked before anything runs. Interrupts are off
 * during the measurement; overflow-interrupt entries (perf_info()->pmi:
 * all, and those delivered as NMIs) are compared before and after, and the
 * output says whether any happened or the runs disagree. Other NMIs have
 * no counter in the kernel and are not seen here.
 */
#include "arch/x86/cpu.h"
#include "arch/x86/regs.h"
#include "lib/parse.h"
#include "lib/printf.h"
#include "lib/stats.h"
#include "pmu/p4_alloc.h"
#include "pmu/p4_spec.h"
#include "prof/perf.h"
#include "workload/snippet.h"
#include "workload/snippet_run.h"
#include "shell/cmds.h"
#include "shell/shell.h"
#include "shell/stat_opts.h"

#define BENCH_MAX_EVENTS	16
#define BENCH_MAX_RUNS		64
#define BENCH_DEFAULT_U		1
#define BENCH_DEFAULT_N		100
#define BENCH_DEFAULT_W		1
#define BENCH_DEFAULT_R		5
#define BENCH_MODE64		(sizeof(void *) == 8)	/* the kernel's own mode: its code's */

struct bench_opts {
	unsigned nev;
	const char *ev[BENCH_MAX_EVENTS];
	const char *init_hex, *code_hex;
	uint64_t u, n, w, r;
	int ring;
};

struct bench_group {
	unsigned first, nev;		/* -e options [first, first + nev) */
	struct p4_plan plan;
};

struct bench_state {
	struct bench_opts o;
	uint8_t init[SNIPPET_HEX_MAX], body[SNIPPET_HEX_MAX];
	struct snippet_code code;
	uint8_t gen[SNIPPET_AREA_SIZE];
	unsigned ngroups;
	struct bench_group group[BENCH_MAX_EVENTS];
	struct workload_args args;
	/* totals[unroll 0 = U, 1 = 2U][run][request] */
	uint64_t totals[2][BENCH_MAX_RUNS][P4_MAX_REQUESTS];
	uint64_t pmis, nmis;
	struct perf_inputs in;
	char err[600];
};

static struct bench_state bs;

/* ---- options ------------------------------------------------------------ */

static int bench_number(const char *opt, const char *s, uint64_t lo, uint64_t hi, uint64_t *out,
			char *err, size_t n)
{
	const char *why = "";

	if (!s || !parse_u64(s, hi, out, &why) || *out < lo) {
		ksnprintf(err, n, "%s: must be %llu..%llu", opt, (unsigned long long)lo,
			  (unsigned long long)hi);
		return -1;
	}
	return 0;
}

static int bench_option(struct bench_opts *o, const char *opt, const char *val, char *err, size_t n)
{
	uint64_t ring;

	if (!val) {
		ksnprintf(err, n, "%s needs a value", opt);
		return -1;
	}
	if (parse_streq(opt, "-e")) {
		if (o->nev == BENCH_MAX_EVENTS) {
			ksnprintf(err, n, "at most %u events", BENCH_MAX_EVENTS);
			return -1;
		}
		o->ev[o->nev++] = val;
		return 0;
	}
	if (parse_streq(opt, "--init")) {
		o->init_hex = val;
		return 0;
	}
	if (parse_streq(opt, "-u"))
		return bench_number(opt, val, 1, SNIPPET_U_MAX / 2, &o->u, err, n);
	if (parse_streq(opt, "-n"))
		return bench_number(opt, val, 1, SNIPPET_N_MAX, &o->n, err, n);
	if (parse_streq(opt, "-w"))
		return bench_number(opt, val, 0, BENCH_MAX_RUNS, &o->w, err, n);
	if (parse_streq(opt, "-r"))
		return bench_number(opt, val, 1, BENCH_MAX_RUNS, &o->r, err, n);
	if (parse_streq(opt, "--ring")) {
		if (bench_number(opt, val, 0, 3, &ring, err, n) || (ring != 0 && ring != 3)) {
			ksnprintf(err, n, "--ring: must be 0 or 3");
			return -1;
		}
		o->ring = (int)ring;
		return 0;
	}
	ksnprintf(err, n, "unknown option '%s'", opt);
	return -1;
}

static int bench_parse(int argc, char **argv, struct bench_opts *o, char *err, size_t n)
{
	*o = (struct bench_opts){ .u = BENCH_DEFAULT_U, .n = BENCH_DEFAULT_N,
				  .w = BENCH_DEFAULT_W, .r = BENCH_DEFAULT_R, .init_hex = "" };
	for (int k = 1; k < argc; k++) {
		if (argv[k][0] != '-') {
			if (o->code_hex) {
				ksnprintf(err, n, "one CODEHEX only ('%s' is extra)", argv[k]);
				return -1;
			}
			o->code_hex = argv[k];
			continue;
		}
		if (bench_option(o, argv[k], k + 1 < argc ? argv[k + 1] : NULL, err, n))
			return -1;
		k++;
	}
	if (!o->code_hex) {
		ksnprintf(err, n, "no CODEHEX (usage: bench [-e SPEC]... [--init HEX] [-u U] [-n N] "
			  "[-w W] [-r R] [--ring 0|3] CODEHEX)");
		return -1;
	}
	return 0;
}

/* ---- checking ----------------------------------------------------------- */

static int bench_code(struct shell *sh)
{
	size_t ni = 0, nb = 0;

	if (snippet_parse_hex(bs.o.init_hex, bs.init, sizeof(bs.init), &ni, bs.err, sizeof(bs.err)))
		return shell_error(sh, "--init: %s", bs.err);
	if (snippet_parse_hex(bs.o.code_hex, bs.body, sizeof(bs.body), &nb, bs.err, sizeof(bs.err)))
		return shell_error(sh, "CODEHEX: %s", bs.err);
	if (nb == 0)
		return shell_error(sh, "CODEHEX: the snippet is empty");
	if (snippet_check_boundary(bs.init, ni, BENCH_MODE64, bs.err, sizeof(bs.err)) < 0)
		return shell_error(sh, "--init: %s", bs.err);
	if (snippet_check_boundary(bs.body, nb, BENCH_MODE64, bs.err, sizeof(bs.err)) < 0)
		return shell_error(sh, "CODEHEX: %s", bs.err);
	bs.code = (struct snippet_code){ .mode64 = BENCH_MODE64, .init = bs.init, .ninit = ni,
					 .body = bs.body, .nbody = nb };
	/* 2U is the larger of the two: if it fits, U does */
	if (!snippet_build(&bs.code, (unsigned)(2 * bs.o.u), bs.o.n, bs.gen, sizeof(bs.gen), bs.err,
			   sizeof(bs.err)))
		return shell_error(sh, "%s", bs.err);
	return 0;
}

/* Requests for -e options [first, first + k) (the default pair when there are none). */
static int bench_plan(unsigned first, unsigned k, struct p4_plan *plan, struct p4_alloc_error *ae)
{
	const struct perf_info *pi = perf_info();
	/* PMU reference 3.2: with HT, LP0's events on the ESCR0 half, as stat plans them */
	struct p4_alloc_ctx ctx = { .caps = &pi->caps, .ht = pi->ht,
				    .split = pi->ht ? P4_SPLIT_LINUX : P4_SPLIT_GLOBAL };
	static struct stat_opts so;
	static struct stat_reqs reqs;

	so = (struct stat_opts){ .nev = k, .repeats = 1, .ring = bs.o.ring };
	for (unsigned i = 0; i < k; i++)
		so.ev[i].spec = bs.o.ev[first + i];
	if (stat_build_requests(&so, &pi->caps, &reqs, bs.err, sizeof(bs.err)))
		return -2;
	return p4_alloc_plan(&ctx, reqs.req, reqs.n, plan, ae) ? -1 : 0;
}

/* Successive groups: the longest prefix of the rest that p4_alloc places. */
static int bench_groups(struct shell *sh)
{
	static struct p4_alloc_error ae;
	unsigned first = 0;

	bs.ngroups = 0;
	do {
		unsigned left = bs.o.nev - first, k = left < STAT_MAX_EVENTS ? left : STAT_MAX_EVENTS;
		struct bench_group *g = &bs.group[bs.ngroups];
		int r;

		while ((r = bench_plan(first, k, &g->plan, &ae)) == -1 && k > 1)
			k--;
		if (r == -2)
			return shell_error(sh, "%s", bs.err);
		if (r == -1)
			return shell_error(sh, "-e %s: %s", bs.o.ev[first], ae.msg);
		g->first = first;
		g->nev = k;
		bs.ngroups++;
		first += k;
	} while (first < bs.o.nev);
	return 0;
}

static int bench_prepare(struct shell *sh, int argc, char **argv)
{
	const struct workload *w = workload_find("snippet");

	if (bench_parse(argc, argv, &bs.o, bs.err, sizeof(bs.err)))
		return shell_error(sh, "%s", bs.err);
	if (perf_info()->backend == PERF_BACKEND_NONE)
		return shell_error(sh, "no PMU backend: %s", perf_info()->reason);
	if (bs.o.w + bs.o.r > BENCH_MAX_RUNS)
		return shell_error(sh, "-w plus -r: at most %u runs", BENCH_MAX_RUNS);
	if (bench_code(sh) || bench_groups(sh))
		return 1;
	if (!w || workload_parse_args(w, 0, NULL, &bs.args, bs.err, sizeof(bs.err)))
		return shell_error(sh, "no 'snippet' workload");
	return 0;
}

/* ---- running ------------------------------------------------------------ */

static int bench_status(struct shell *sh, const struct workload_result *res)
{
	switch (res->status) {
	case WORKLOAD_OK:
		return 0;
	case WORKLOAD_FAULTED:
		return shell_error(sh, "the snippet faulted (vector %d); nothing measured",
				   res->fault_vector);
	case WORKLOAD_INTERRUPTED:
		return shell_error(sh, "interrupted; nothing measured");
	default:
		return shell_error(sh, "%s", res->error);
	}
}

static int bench_once(struct shell *sh, const struct p4_plan *plan, uint64_t *totals)
{
	static struct perf_count sess;
	static struct workload_result res;
	struct workload_hooks h;

	perf_hooks(&bs.in, &h);
	if (perf_count_start(&sess, plan, PERF_RELOAD_DEFAULT, bs.err, sizeof(bs.err)))
		return shell_error(sh, "%s", bs.err);
	workload_run(&bs.args, bs.o.ring, perf_steps_workloads(), &h, &res);
	perf_count_stop(&sess, totals);
	return bench_status(sh, &res);
}

/* One group: W + R runs at unroll U, then W + R at 2U. */
static int bench_group_run(struct shell *sh, const struct bench_group *g)
{
	static uint64_t scratch[P4_MAX_REQUESTS];

	for (unsigned x = 0; x < 2; x++) {
		size_t len = snippet_build(&bs.code, (unsigned)(bs.o.u << x), bs.o.n, bs.gen,
					   sizeof(bs.gen), bs.err, sizeof(bs.err));

		if (!len || snippet_load(bs.gen, len, bs.err, sizeof(bs.err)))
			return shell_error(sh, "%s", bs.err);
		for (unsigned k = 0; k < bs.o.w + bs.o.r; k++)
			if (bench_once(sh, &g->plan, k < bs.o.w ? scratch : bs.totals[x][k - bs.o.w]))
				return 1;
	}
	return 0;
}

/* ---- printing ----------------------------------------------------------- */

/* Always two decimals ("1.00"): a value x STATS_SCALE, never negative (see below). */
static void bench_fmt(int64_t centi, char *buf, size_t n)
{
	ksnprintf(buf, n, "%llu.%02llu", (unsigned long long)centi / 100,
		  (unsigned long long)centi % 100);
}

/* Per-iteration x 100 of a summary figure of the differences (itself x 100, >= 0). */
static int64_t bench_scale(int64_t centi_diff)
{
	uint64_t d = bs.o.n * bs.o.u;

	return (int64_t)(((uint64_t)centi_diff + d / 2) / d);	/* rounded to the hundredth */
}

/*
 * Summary of request i's R differences count(2U) - count(U); a negative one
 * (*negative) counts as 0. The runs agree when every difference is the same.
 */
static void bench_summary(unsigned i, struct stats_summary *s, bool *negative, bool *agree)
{
	static uint64_t d[BENCH_MAX_RUNS];

	*negative = false;
	*agree = true;
	for (unsigned k = 0; k < bs.o.r; k++) {
		uint64_t c1 = bs.totals[0][k][i], c2 = bs.totals[1][k][i];

		*negative |= c2 < c1;
		d[k] = c2 >= c1 ? c2 - c1 : 0;
		*agree &= d[k] == d[0];
	}
	stats_summarise(d, (unsigned)bs.o.r, s);
	s->min = bench_scale(s->min);
	s->median = bench_scale(s->median);
	s->tmean = bench_scale(s->tmean);
	s->max = bench_scale(s->max);
}

static bool bench_print_group(struct shell *sh, unsigned gi)
{
	const struct bench_group *g = &bs.group[gi];
	bool all_agree = true;

	for (unsigned i = 0; i < g->plan.n; i++) {
		struct stats_summary s;
		char spec[128], b[3][24];
		bool neg, agree;

		bench_summary(i, &s, &neg, &agree);
		all_agree &= agree && !neg;
		bench_fmt(s.min, b[0], sizeof(b[0]));
		bench_fmt(s.median, b[1], sizeof(b[1]));
		bench_fmt(s.tmean, b[2], sizeof(b[2]));
		p4_spec_format(&g->plan.req[i].spec, spec, sizeof(spec));
		shell_printf(sh, "%12s %12s %12s  %s  group %u counter %u%s%s\n", b[0], b[1], b[2],
			     spec, gi + 1, g->plan.slot[i].counter, agree ? "" : " [runs disagree]",
			     neg ? " [a 2U count was below its U count: clamped to 0]" : "");
	}
	return all_agree;
}

static void bench_print(struct shell *sh)
{
	const struct perf_info *pi = perf_info();
	bool agree = true;
	char sig[8];

	p4_sig_format(&pi->sig, sig, sizeof(sig));
	shell_printf(sh, "bench: %u snippet bytes, %u init bytes, unroll %llu and %llu, loop %llu, "
		     "%llu warm-up + %llu measured runs, ring %d\n", (unsigned)bs.code.nbody,
		     (unsigned)bs.code.ninit, (unsigned long long)bs.o.u,
		     (unsigned long long)(2 * bs.o.u), (unsigned long long)bs.o.n,
		     (unsigned long long)bs.o.w, (unsigned long long)bs.o.r, bs.o.ring);
	shell_printf(sh, "backend: %s %s%s; per iteration = (count(2U) - count(U)) / (N*U)\n",
		     perf_backend_name(pi->backend), sig,
		     perf_steps_workloads() ? " (stepped: counts come from the executed instructions)"
					    : "");
	shell_printf(sh, "%12s %12s %12s  event\n", "min", "median", "tmean");
	for (unsigned gi = 0; gi < bs.ngroups; gi++)
		agree &= bench_print_group(sh, gi);
	shell_printf(sh, "interference: %s (PMIs %llu, NMIs %llu during the runs; %s)\n",
		     bs.pmis || bs.nmis || !agree ? "yes" : "none", (unsigned long long)bs.pmis,
		     (unsigned long long)bs.nmis, agree ? "all runs agree" : "runs disagree");
}

/* ---- bench -------------------------------------------------------------- */

static int cmd_bench(struct shell *sh, int argc, char **argv)
{
	uint64_t pmi0, nmi0, rflags;
	int r = 0;

	if (bench_prepare(sh, argc, argv))
		return 1;
	pmi0 = perf_info()->pmi.interrupts;
	nmi0 = perf_info()->pmi.by_nmi;
	rflags = read_rflags();
	cpu_cli();
	for (unsigned gi = 0; gi < bs.ngroups && !r; gi++)
		r = bench_group_run(sh, &bs.group[gi]);
	if (rflags & RFLAGS_IF)
		cpu_sti();
	if (r)
		return 1;
	bs.pmis = perf_info()->pmi.interrupts - pmi0;
	bs.nmis = perf_info()->pmi.by_nmi - nmi0;
	bench_print(sh);
	return 0;
}

static const struct shell_cmd bench_cmds[] = {
	{ "bench", "bench [-e SPEC]... [--init HEX] [-u U] [-n N] [-w W] [-r R] [--ring 0|3] CODEHEX",
	  "measure a code snippet per iteration (nanoBench style)",
	  "CODEHEX is the snippet's machine code as hex (e.g. 01d8 = add eax, ebx); --init\n"
	  "code runs once before the loop. The loop runs N times (default 100) a body of U\n"
	  "copies (default 1) with its counter in R15 (ia32: on the stack): the snippet\n"
	  "must not change R15 or RSP. Each event group runs W warm-up (default 1) and R measured (default 5)\n"
	  "times with unroll U and with 2U; per iteration = (count(2U) - count(U)) / (N*U),\n"
	  "so loop and measurement overhead cancel. Events that do not fit at once are\n"
	  "measured in successive groups. Without -e: global_power_events:RUNNING and\n"
	  "instr_retired. Interrupts are off while measuring. The generated loop must fit\n"
	  "the 3 KiB snippet area. The host command 'tools/nbprof bench --asm TEXT'\n"
	  "assembles Intel-syntax text for you.\n",
	  cmd_bench },
};

int bench_add_commands(struct shell *sh)
{
	return shell_add_commands(sh, bench_cmds, sizeof(bench_cmds) / sizeof(bench_cmds[0]));
}
