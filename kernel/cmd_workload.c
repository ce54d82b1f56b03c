/*
 * cmd_workload.c - the `workloads` and `run` shell commands.
 *
 * `workloads` prints the table of kernel/workload.c: each workload's
 * synopsis, what it exercises, its parameters with defaults and ranges, and
 * its exact instruction count. `run` runs one workload once without any
 * counting hooks and prints what the run itself observed: stepped
 * instructions and branches (with --step), TSC cycles, the return value,
 * synthetic occurrences, and any fault.
 */
#include "kernel/workload.h"
#include "shell/shell.h"

#define RUN_USAGE	"run [--ring 0|3] [--step] WORKLOAD [ARGS]"

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
	bool step;
	int first;	/* argv index of the workload name */
};

static int cmd_run_options(struct shell *sh, int argc, char **argv, struct run_opts *o)
{
	int i;

	*o = (struct run_opts){ .ring = 0 };
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (parse_streq(argv[i], "--")) {
			i++;
			break;
		}
		if (parse_streq(argv[i], "--step")) {
			o->step = true;
		} else if (parse_streq(argv[i], "--ring")) {
			if (i + 1 >= argc)
				return shell_error(sh, "--ring needs 0 or 3 (usage: " RUN_USAGE ")");
			i++;
			if (!parse_streq(argv[i], "0") && !parse_streq(argv[i], "3"))
				return shell_error(sh, "--ring: '%s' is not 0 or 3", argv[i]);
			o->ring = argv[i][0] - '0';
		} else {
			return shell_error(sh, "run: unknown option '%s' (usage: " RUN_USAGE ")", argv[i]);
		}
	}
	if (i >= argc)
		return shell_error(sh, "run: missing WORKLOAD (usage: " RUN_USAGE "; see 'workloads')");
	o->first = i;
	return 0;
}

static void cmd_run_report(struct shell *sh, const struct workload_args *a, const struct run_opts *o,
			   const struct workload_result *r)
{
	shell_printf(sh, "workload: %s, ring %d, lp %u%s\n", a->w->name, o->ring, r->lp,
		     o->step ? ", stepped" : "");
	if (o->step) {
		shell_printf(sh, "instructions: %llu (CPL %u)\n", (unsigned long long)r->instructions,
			     r->cpl);
		shell_printf(sh, "branches: taken %llu, not taken %llu\n", (unsigned long long)r->taken,
			     (unsigned long long)r->not_taken);
		shell_printf(sh, "conditional: taken %llu, not taken %llu\n",
			     (unsigned long long)r->cond_taken, (unsigned long long)r->cond_not_taken);
		shell_puts(sh, "by kind:");
		for (unsigned k = INSN_COND; k < INSN_NBRANCH_KINDS; k++)
			shell_printf(sh, " %s %llu", insn_branch_name((enum insn_branch)k),
				     (unsigned long long)r->branches[k]);
		shell_puts(sh, "\n");
		shell_printf(sh, "workload cycles: %llu (TSC, stepping overhead excluded)\n",
			     (unsigned long long)r->step_cycles);
	}
	shell_printf(sh, "tsc cycles: %llu\n", (unsigned long long)r->tsc_cycles);
	if (a->w->id == WL_SYNTHETIC)
		shell_printf(sh, "synthetic: %llu x %s (int 0x81)\n", (unsigned long long)r->synthetic,
			     a->spec);
	if (r->status == WORKLOAD_OK && a->w->id != WL_EMPTY && a->w->id != WL_SYNTHETIC)
		shell_printf(sh, "returned: %llu\n", (unsigned long long)r->ret);
}

static int cmd_run(struct shell *sh, int argc, char **argv)
{
	struct run_opts o;
	struct workload_args a;
	struct workload_result r;
	const struct workload *w;
	char err[160];

	if (cmd_run_options(sh, argc, argv, &o))
		return 1;
	w = workload_find(argv[o.first]);
	if (!w)
		return shell_error(sh, "run: unknown workload '%s' (see 'workloads')", argv[o.first]);
	if (workload_parse_args(w, argc - o.first - 1, argv + o.first + 1, &a, err, sizeof(err)))
		return shell_error(sh, "%s", err);
	workload_run(&a, o.ring, o.step, NULL, &r);
	if (r.status == WORKLOAD_REFUSED)
		return shell_error(sh, "%s: %s", w->name, r.error);
	cmd_run_report(sh, &a, &o, &r);
	if (r.status == WORKLOAD_FAULTED)
		return shell_error(sh, "%s faulted at ring %d: vector %d (%s)", w->name, o.ring,
				   r.fault_vector, r.fault_vector == 14 ? "#PF" : r.fault_vector == 13 ? "#GP" : "see the report above");
	if (r.status == WORKLOAD_INTERRUPTED)
		return shell_error(sh, "%s: interrupted by Ctrl-C (counts above are partial)", w->name);
	return 0;
}

static const struct shell_cmd workload_cmds[] = {
	{ "workloads", "workloads", "list the built-in workloads and their parameters",
	  "Lists every workload with its parameters (default and range), what it\n"
	  "exercises and its exact retired-instruction count.\n", cmd_workloads },
	{ "run", RUN_USAGE, "run a workload once (ring 0 or 3, optionally single-stepped)",
	  "--ring 3 runs it in user mode: only its code, its stack and its buffer are\n"
	  "user-accessible; a fault is reported and the shell carries on.\n"
	  "--step single-steps it (RFLAGS.TF, one #DB per instruction) and prints the\n"
	  "retired instructions and branches (taken / not taken, by kind). Only the\n"
	  "workload's own instructions are stepped: not the runner, not interrupt or\n"
	  "gate handlers. A REP string instruction counts once. Ctrl-C stops a stepped\n"
	  "run (checked every 65536 instructions); unstepped runs are not interruptible.\n",
	  cmd_run },
};

int workload_add_commands(struct shell *sh)
{
	return shell_add_commands(sh, workload_cmds, sizeof(workload_cmds) / sizeof(workload_cmds[0]));
}
