/*
 * cmd_workload.c - the `workloads`, `run` and `run-pair` shell commands.
 *
 * `workloads` prints the table of workload/workload.c: each workload's
 * synopsis, what it exercises, its parameters with defaults and ranges, and
 * its exact instruction count. `run` runs one workload once without any
 * counting hooks and prints what the run itself observed: stepped
 * instructions and branches (with --step), TSC cycles, the return value,
 * synthetic occurrences, and any fault.
 *
 * Hyper-Threading: `run --cpu 1` runs the workload on LP0's sibling (the
 * shell stays on LP0 and waits), `--cpu both` the same workload on both LPs
 * at once, and `run-pair A ARGS -- B ARGS` workload A on LP0 and B on the
 * sibling, started together. Ctrl-C stops both. Without a sibling, --cpu 1
 * and run-pair are refused with the reason and --cpu both runs on LP0 only.
 * --feed hands the run to the PMU model (the hooks stat uses) without
 * programming anything: what counts is whatever the PMU registers hold
 * (e.g. after `msr write`), which is how raw register sequences are tried.
 */
#include "arch/x86/progress.h"
#include "prof/perf.h"
#include "workload/workload.h"
#include "shell/cmds.h"
#include "shell/shell.h"

#define RUN_USAGE	"run [--cpu 0|1|both] [--ring 0|3] [--step] [--feed] [--quiet] [--no-watchdog] " \
			"WORKLOAD [ARGS]"
#define PAIR_USAGE	"run-pair [--ring 0|3] [--step] [--feed] [--quiet] WORKLOAD_A [ARGS] -- " \
			"[--ring 0|3] [--step] WORKLOAD_B [ARGS]"

enum run_cpu {
	RUN_CPU_0,
	RUN_CPU_1,
	RUN_CPU_BOTH,
};

static void cmd_workloads_param(struct shell *sh, const struct workload_param *p)
{
	switch (p->kind) {
	case WP_CHOICE:
		shell_printf(sh, "      %-8s %s (default %s)\n", p->name, p->help, p->choices[p->def]);
		break;
	case WP_TEXT:
		shell_printf(sh, "      %-8s %s\n", p->name, p->help);
		break;
	default:
		shell_printf(sh, "      %-8s %s: %llu..%llu, default %llu\n", p->name, p->help,
			     (unsigned long long)p->min, (unsigned long long)p->max,
			     (unsigned long long)p->def);
		break;
	}
}

/* The help text, indented. */
static void cmd_workloads_help(struct shell *sh, const char *text)
{
	const char *line = text;

	for (const char *c = text; *c; c++) {
		if (*c != '\n')
			continue;
		shell_printf(sh, "      %.*s\n", (int)(c - line), line);
		line = c + 1;
	}
}

static int cmd_workloads(struct shell *sh, int argc, char **argv)
{
	char syn[96];

	if (argc > 1)
		return shell_error(sh, "workloads takes no arguments");
	shell_puts(sh, "workloads (usage: " RUN_USAGE "):\n");
	for (unsigned i = 0; i < WL_NWORKLOADS; i++) {
		const struct workload *w = &workload_table[i];

		workload_synopsis(w, syn, sizeof(syn));
		shell_printf(sh, "  %-34s %s\n", syn, w->exercises);
		for (unsigned p = 0; p < w->nparams; p++)
			cmd_workloads_param(sh, &w->params[p]);
		cmd_workloads_help(sh, w->help);
		if (w->ring3_refusal)
			shell_printf(sh, "      ring 0 only: %s\n", w->ring3_refusal);
	}
	return 0;
}

struct run_opts {
	int ring;
	bool ring_given;
	bool step, feed, quiet, no_watchdog;
	enum run_cpu cpu;
	int first;	/* argv index of the workload name */
	int end;	/* argv index after its last argument */
};

/* One option at argv[*i]; 0, or 1 after printing the error. */
static int cmd_run_option(struct shell *sh, int argc, char **argv, int *i, struct run_opts *o,
			  bool cpu_ok, const char *usage)
{
	const char *a = argv[*i];

	if (parse_streq(a, "--step")) {
		o->step = true;
	} else if (parse_streq(a, "--feed")) {
		o->feed = true;
	} else if (parse_streq(a, "--quiet")) {
		o->quiet = true;
	} else if (parse_streq(a, "--no-watchdog")) {
		o->no_watchdog = true;
	} else if (parse_streq(a, "--ring")) {
		if (*i + 1 >= argc)
			return shell_error(sh, "--ring needs 0 or 3 (usage: %s)", usage);
		a = argv[++*i];
		if (!parse_streq(a, "0") && !parse_streq(a, "3"))
			return shell_error(sh, "--ring: '%s' is not 0 or 3", a);
		o->ring = a[0] - '0';
		o->ring_given = true;
	} else if (cpu_ok && parse_streq(a, "--cpu")) {
		a = *i + 1 < argc ? argv[++*i] : "";
		if (parse_streq(a, "0"))
			o->cpu = RUN_CPU_0;
		else if (parse_streq(a, "1"))
			o->cpu = RUN_CPU_1;
		else if (parse_streq(a, "both"))
			o->cpu = RUN_CPU_BOTH;
		else
			return shell_error(sh, "--cpu wants 0, 1 or both, not '%s'", a);
	} else {
		return shell_error(sh, "%s: unknown option '%s' (usage: %s)", argv[0], a, usage);
	}
	return 0;
}

/* Options from argv[start]; the workload's words run to the end or to a "--" when pair. */
static int cmd_run_options(struct shell *sh, int argc, char **argv, int start, bool pair,
			   struct run_opts *o)
{
	const char *usage = pair ? PAIR_USAGE : RUN_USAGE;
	int i;

	for (i = start; i < argc && argv[i][0] == '-' && !parse_streq(argv[i], "--"); i++)
		if (cmd_run_option(sh, argc, argv, &i, o, !pair, usage))
			return 1;
	if (!pair && i < argc && parse_streq(argv[i], "--"))
		i++;
	if (i >= argc || parse_streq(argv[i], "--"))
		return shell_error(sh, "%s: missing WORKLOAD (usage: %s; see 'workloads')", argv[0], usage);
	o->first = i;
	for (o->end = i; o->end < argc && !(pair && parse_streq(argv[o->end], "--")); o->end++)
		;
	return 0;
}

static void cmd_run_report(struct shell *sh, const struct workload_args *a, const struct run_opts *o,
			   const struct workload_result *r)
{
	shell_printf(sh, "workload: %s, ring %d, lp %u%s\n", a->w->name, o->ring, r->lp,
		     o->step ? ", stepped" : "");
	if (o->step) {
		shell_printf(sh, "instructions: %llu (CPL %u)\n", (unsigned long long)r->step.instructions,
			     r->cpl);
		shell_printf(sh, "branches: taken %llu, not taken %llu\n", (unsigned long long)r->step.taken,
			     (unsigned long long)r->step.not_taken);
		shell_printf(sh, "conditional: taken %llu, not taken %llu\n",
			     (unsigned long long)r->step.cond_taken, (unsigned long long)r->step.cond_not_taken);
		shell_puts(sh, "by kind:");
		for (unsigned k = INSN_COND; k < INSN_NBRANCH_KINDS; k++)
			shell_printf(sh, " %s %llu", insn_branch_name((enum insn_branch)k),
				     (unsigned long long)r->step.branches[k]);
		shell_puts(sh, "\n");
		shell_printf(sh, "workload cycles: %llu (TSC, stepping overhead excluded)\n",
			     (unsigned long long)r->step.step_cycles);
	}
	shell_printf(sh, "tsc cycles: %llu\n", (unsigned long long)r->tsc_cycles);
	if (r->ticks)	/* the unstepped run's Ctrl-C watchdog (workload/workloads.c) */
		shell_printf(sh, "watchdog ticks: %llu (kernel code: counted at :k)\n",
			     (unsigned long long)r->ticks);
	if (a->w->id == WL_SYNTHETIC)
		shell_printf(sh, "synthetic: %llu x %s (int 0x81)\n", (unsigned long long)r->synthetic,
			     a->spec);
	if (r->status == WORKLOAD_OK && a->w->id != WL_EMPTY && a->w->id != WL_SYNTHETIC)
		shell_printf(sh, "returned: %llu\n", (unsigned long long)r->ret);
}

static int cmd_run_parse(struct shell *sh, char **argv, struct run_opts *o,
			 struct workload_args *a)
{
	const struct workload *w = workload_find(argv[o->first]);
	char err[160];

	if (!w)
		return shell_error(sh, "%s: unknown workload '%s' (see 'workloads')", argv[0],
				   argv[o->first]);
	if (workload_parse_args(w, o->end - o->first - 1, argv + o->first + 1, a, err, sizeof(err)))
		return shell_error(sh, "%s", err);
	if (!o->ring_given)
		o->ring = workload_default_ring(w);
	return 0;
}

/* One LP's outcome: its report, or an error line; 0 when it ran to the end. */
static int cmd_run_outcome(struct shell *sh, const struct workload_args *a, const struct run_opts *o,
			   const struct workload_result *r, const char *who)
{
	const char *name = a->w->name;

	if (r->status == WORKLOAD_REFUSED)
		return shell_error(sh, "%s%s: %s", who, name, r->error);
	cmd_run_report(sh, a, o, r);
	if (r->status == WORKLOAD_FAULTED)
		return shell_error(sh, "%s%s faulted at ring %d: vector %d (%s)", who, name, o->ring,
				   r->fault_vector, r->fault_vector == 14 ? "#PF" : r->fault_vector == 13 ?
				   "#GP" : "see the report above");
	if (r->status == WORKLOAD_INTERRUPTED) {
		char why[160];

		return shell_error(sh, "%s%s: %s (counts above are partial)", who, name,
				   workload_stop_reason(r, why, sizeof(why)));
	}
	return 0;
}

/*
 * Run a[0] on LP0 and a[1] on the sibling (either may be NULL) and report
 * each. --feed: the model's hooks, stepped (the model learns from steps).
 */
static int cmd_run_jobs(struct shell *sh, const struct workload_args *a[2], struct run_opts o[2])
{
	static struct workload_job jobs[2];
	static struct perf_inputs in[2];
	static struct workload_hooks h[2];
	char fault[192];
	int bad = 0;

	for (int k = 0; k < 2; k++) {
		if (o[k].feed && perf_steps_workloads())
			o[k].step = true;
		perf_hooks(&in[k], &h[k]);
		jobs[k] = (struct workload_job){ .a = a[k], .ring = o[k].ring, .step = o[k].step,
						 .h = o[k].feed ? &h[k] : NULL };
	}
	progress_set_quiet(o[0].quiet || o[1].quiet);
	workload_set_watchdog(!o[0].no_watchdog && !o[1].no_watchdog);
	bad = workload_run_lps(jobs, WORKLOAD_TOGETHER);
	workload_set_watchdog(true);
	progress_set_quiet(false);
	if (bad)
		return shell_error(sh, "%s: %s", a[1]->w->name, jobs[1].res.error);
	if (perf_machine_fault(fault, sizeof(fault)))	/* a real machine would not be back */
		return shell_error(sh, "run: %s", fault);
	for (int k = 0; k < 2; k++) {
		char who[8] = "";

		if (!a[k])
			continue;
		if (a[0] && a[1])
			shell_printf(sh, "LP%d:\n", k);
		if (k == 1 || a[1])
			ksnprintf(who, sizeof(who), "LP%d: ", k);
		bad |= cmd_run_outcome(sh, a[k], &o[k], &jobs[k].res, who);
	}
	return bad;
}

static int cmd_run(struct shell *sh, int argc, char **argv)
{
	struct run_opts o[2] = { { .ring = 0 } };
	struct workload_args args;
	const struct workload_args *a[2] = { NULL, NULL };
	const char *why = "";

	if (cmd_run_options(sh, argc, argv, 1, false, &o[0]) || cmd_run_parse(sh, argv, &o[0], &args))
		return 1;
	o[1] = o[0];
	if (o[0].cpu != RUN_CPU_0 && workload_sibling(&why) < 0) {
		if (o[0].cpu == RUN_CPU_1)
			return shell_error(sh, "run --cpu 1: %s", why);
		shell_printf(sh, "note: %s; running on LP0 only\n", why);
		o[0].cpu = RUN_CPU_0;
	}
	a[0] = o[0].cpu != RUN_CPU_1 ? &args : NULL;
	a[1] = o[0].cpu != RUN_CPU_0 ? &args : NULL;
	return cmd_run_jobs(sh, a, o);
}

static int cmd_run_pair(struct shell *sh, int argc, char **argv)
{
	struct run_opts o[2] = { { .ring = 0 } };
	static struct workload_args args[2];
	const struct workload_args *a[2] = { &args[0], &args[1] };
	const char *why = "";

	if (cmd_run_options(sh, argc, argv, 1, true, &o[0]) || cmd_run_parse(sh, argv, &o[0], &args[0]))
		return 1;
	if (o[0].end >= argc)
		return shell_error(sh, "run-pair: missing '-- WORKLOAD_B' (usage: " PAIR_USAGE ")");
	o[1] = (struct run_opts){ .ring = o[0].ring, .ring_given = o[0].ring_given, .step = o[0].step,
				   .feed = o[0].feed };
	if (cmd_run_options(sh, argc, argv, o[0].end + 1, true, &o[1]))
		return 1;
	if (o[1].end < argc)
		return shell_error(sh, "run-pair: only one '--' (usage: " PAIR_USAGE ")");
	if (cmd_run_parse(sh, argv, &o[1], &args[1]))
		return 1;
	if (workload_sibling(&why) < 0)
		return shell_error(sh, "run-pair: %s", why);
	return cmd_run_jobs(sh, a, o);
}

static const struct shell_cmd workload_cmds[] = {
	{ "workloads", "workloads", "list the built-in workloads and their parameters",
	  "Lists every workload with its parameters (default and range), what it\n"
	  "exercises and its exact retired-instruction count.\n", cmd_workloads },
	{ "run", RUN_USAGE, "run a workload once (ring 0 or 3, optionally single-stepped)",
	  "--ring 3 runs it in user mode: only its code, its stack and its buffer are\n"
	  "user-accessible; a fault is reported and the shell carries on.\n"
	  "WORKLOAD may be a loaded program ('programs'), which runs in ring 3 unless\n"
	  "--ring 0; unstepped, Ctrl-C or its time limit (programs --timeout) stops it.\n"
	  "--step single-steps it (RFLAGS.TF, one #DB per instruction) and prints the\n"
	  "retired instructions and branches (taken / not taken, by kind). Only the\n"
	  "workload's own instructions are stepped: not the runner, not interrupt or\n"
	  "gate handlers. A REP string instruction counts once. Ctrl-C stops a stepped\n"
	  "run (checked every 65536 instructions), and an unstepped one at the next\n"
	  "tick of its LAPIC timer watchdog (every 100 ms; run prints how many ticks\n"
	  "fell in the run: their kernel code counts at :k on the hardware).\n"
	  "--no-watchdog: no such tick; Ctrl-C and the time limit then do not work,\n"
	  "and an unstepped run that never ends needs a reset.\n"
	  "--quiet: no progress line during a long stepped run.\n"
	  "--cpu 1 runs it on LP0's Hyper-Threading sibling (the shell stays on LP0),\n"
	  "--cpu both on both LPs at once. --feed feeds the PMU model (stepped) without\n"
	  "programming it, so raw 'msr write' set-ups count the run.\n",
	  cmd_run },
	{ "run-pair", PAIR_USAGE, "run workload A on LP0 and B on its sibling, started together",
	  "Both LPs of the Hyper-Threaded core run at once: A on LP0, B on LP1.\n"
	  "Options before A apply to both; options right after '--' apply to B only.\n"
	  "Ctrl-C stops both. Refused (with the reason) when there is no sibling.\n",
	  cmd_run_pair },
};

int workload_add_commands(struct shell *sh)
{
	return shell_add_commands(sh, workload_cmds, sizeof(workload_cmds) / sizeof(workload_cmds[0]));
}
