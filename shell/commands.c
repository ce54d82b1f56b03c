/*
 * commands.c - the built-in command table and the small commands.
 *
 * Every command checks all of its arguments before it does anything, and
 * a bad argument produces exactly one "error: ..." line. MSR numbers and
 * values are printed in the manual's notation (1A0H, 0000000000000001H).
 */
#include "pmu/p4_tables.h"
#include "shell/cmds.h"
#include "shell/platform.h"

_Static_assert(SHELL_LINE_MAX - 1 == 255 && PARSE_MAX_ARGS == 32,
	       "`help help` states these limits in words");

const struct shell_cmd shell_builtin_cmds[] = {
	{ "help", "help [CMD]", "list the commands, or explain one",
	  "Without an argument, lists every command with a one-line summary.\n"
	  "With CMD, shows its usage and details.\n"
	  "A command line holds at most 255 characters and 32 words (the command\n"
	  "and its arguments); a longer line is refused whole, with an error.\n", cmd_help },
	{ "cpu", "cpu", "identify the processor and its PMU capabilities",
	  "Shows the vendor, DisplayFamily_DisplayModel (e.g. 0F_04H) and stepping,\n"
	  "brand string, Hyper-Threading and cores, EM64T, DS/DTES64, the\n"
	  "IA32_MISC_ENABLE bits 7 (perfmon available), 11 (BTS unavailable) and\n"
	  "12 (PEBS unavailable), the TSC frequency, the APIC id, the build id\n"
	  "and the model-dependent NetBurst PMU capabilities.\n", cmd_cpu },
	{ "mem", "mem [map]", "summarise the memory map, or list it",
	  "Without an argument, totals the firmware memory map by kind and shows\n"
	  "the RAM still free. `mem map` lists every region.\n", cmd_mem },
	{ "msr", "msr read [--cpu 0|1] ADDR | msr write [--cpu 0|1] ADDR VALUE [--force] | msr trace on|off",
	  "read or write a model-specific register, or trace PMU writes",
	  "Numbers may be written 0x1A0, 1A0H (the manual's notation) or decimal.\n"
	  "`msr write` only accepts NetBurst PMU registers (counters, CCCRs, ESCRs,\n"
	  "PEBS and DS MSRs, the uncore range) unless --force is given.\n"
	  "An MSR that does not exist is reported as #GP, not a crash.\n"
	  "PMU registers are served by the active PMU backend: with the software\n"
	  "model (QEMU) they read and write the model, shown as [model ...], and\n"
	  "a register the configured CPU model lacks raises the model's #GP.\n"
	  "--cpu 1 runs the RDMSR/WRMSR on LP1, LP0's Hyper-Threading sibling\n"
	  "(--cpu 0: LP0, the default): IA32_DS_AREA is per LP, and MSR_PEBS_ENABLE's\n"
	  "MY_THR (bit 25) / OTH_THR (bit 26) mean the writing or reading LP and the\n"
	  "other one (PMU reference 5.3). Refused without a sibling or while it is busy.\n"
	  "`msr trace on` prints every PMU register write, e.g.\n"
	  "  wrmsr 36CH <- 04038800H (MSR_IQ_CCCR0)\n", cmd_msr },
	{ "fault", "fault de|ud|gp|pf|int3 [--halt]", "raise an exception on purpose",
	  "Raises #DE (divide error), #UD (invalid opcode), #GP (general\n"
	  "protection), #PF (page fault) or int3 (breakpoint) to show that the\n"
	  "kernel reports it and returns to the prompt.\n"
	  "--halt raises it outside the guard that protects commands, as if it\n"
	  "happened in the kernel itself: the report is printed and the machine\n"
	  "halts (int3 still resumes).\n", cmd_fault },
	{ "events", "events [PATTERN]", "list the NetBurst events, or describe one",
	  "Without PATTERN, lists every event with its ESCRs and counters. PATTERN\n"
	  "picks the events whose name contains it (case-insensitive); when one\n"
	  "event matches, its mask bits and details are shown. Events this CPU\n"
	  "model lacks are marked. Under the model each row ends with its input:\n"
	  "[real: stepped], [real: TSC], [memory model], [cost model], or\n"
	  "[synthetic] for events only the synthetic workload feeds.\n",
	  cmd_events },
	{ "reboot", "reboot", "restart the machine", "Resets the machine.\n", cmd_reboot },
	{ "poweroff", "poweroff", "switch the machine off",
	  "Powers the machine off (in QEMU: exits through isa-debug-exit).\n", cmd_poweroff },
};

const size_t shell_builtin_ncmds = sizeof(shell_builtin_cmds) / sizeof(shell_builtin_cmds[0]);

/* --- help ------------------------------------------------------------------ */

int cmd_help(struct shell *sh, int argc, char **argv)
{
	const struct shell_cmd *cmd;

	if (argc > 2)
		return shell_error(sh, "help takes at most one argument (usage: help [CMD])");
	if (argc == 2) {
		cmd = shell_find(sh, argv[1]);
		if (cmd == NULL)
			return shell_error(sh, "unknown command '%s' (try 'help')", argv[1]);
		shell_printf(sh, "usage: %s\n%s\n\n%s", cmd->synopsis, cmd->summary, cmd->help);
		return 0;
	}
	shell_puts(sh, "commands:\n");
	for (unsigned t = 0; t < sh->ntables; t++)
		for (size_t i = 0; i < sh->tables[t].n; i++)
			shell_printf(sh, "  %-10s %s\n", sh->tables[t].cmds[i].name,
				     sh->tables[t].cmds[i].summary);
	shell_printf(sh, "type 'help CMD' for details; a line holds at most %d characters and %d words\n",
		     SHELL_LINE_MAX - 1, PARSE_MAX_ARGS);
	return 0;
}

/* --- msr ------------------------------------------------------------------- */

/* The SDM name of a PMU MSR, or NULL. */
static const char *cmd_msr_name(uint32_t msr)
{
	enum p4_counter c;
	enum p4_escr e;

	if (p4_counter_by_msr(msr, &c))
		return p4_counters[c].name;
	if (p4_cccr_by_msr(msr, &c))
		return p4_counters[c].cccr_name;
	if (p4_escr_by_msr(msr, &e))
		return p4_escrs[e].name;
	return NULL;
}

/* Where an access runs: `--cpu N` (-1: not given, LP0 and no LP in the output). */
struct cmd_msr_access {
	int cpu;
	bool write;
	uint32_t msr;
	uint64_t v;
	int rc;
};

static void cmd_msr_show(struct shell *sh, const char *verb, const struct cmd_msr_access *a)
{
	const char *name = cmd_msr_name(a->msr);
	const char *backend = plat_msr_backend(a->msr);

	shell_printf(sh, "MSR %XH %s %016llXH", a->msr, verb, (unsigned long long)a->v);
	if (name != NULL)
		shell_printf(sh, " (%s)", name);
	if (backend != NULL)
		shell_printf(sh, " [%s]", backend);
	if (a->cpu >= 0)
		shell_printf(sh, " on LP%d", a->cpu);
	shell_puts(sh, "\n");
}

/* On the chosen LP: the one RDMSR or WRMSR (through the PMU backend for PMU registers). */
static void cmd_msr_access_fn(void *arg)
{
	struct cmd_msr_access *a = arg;

	a->rc = a->write ? plat_msr_write(a->msr, a->v) : plat_msr_read(a->msr, &a->v);
}

/*
 * Run the access on its LP. Static: a sibling that overran the wait still
 * finds its argument. 0, or 1 after printing the error.
 */
static int cmd_msr_access(struct shell *sh, struct cmd_msr_access *in)
{
	static struct cmd_msr_access a;
	const char *why = "";

	a = *in;
	if (plat_run_on_lp(a.cpu > 0 ? (unsigned)a.cpu : 0, cmd_msr_access_fn, &a, &why))
		return shell_error(sh, "msr %s --cpu %d: %s", a.write ? "write" : "read", a.cpu, why);
	*in = a;
	return 0;
}

/* `--cpu 0|1` at argv[*i]; 0, or 1 after printing the error. */
static int cmd_msr_cpu(struct shell *sh, int argc, char **argv, int *i, int *cpu)
{
	const char *a = *i + 1 < argc ? argv[++*i] : "";

	if (!parse_streq(a, "0") && !parse_streq(a, "1"))
		return shell_error(sh, "--cpu wants 0 or 1 (LP0 or its Hyper-Threading sibling), not '%s'", a);
	*cpu = a[0] - '0';
	return 0;
}

static int cmd_msr_read(struct shell *sh, int argc, char **argv)
{
	struct cmd_msr_access a = { .cpu = -1 };
	const char *err, *pos = NULL;

	for (int i = 2; i < argc; i++) {
		if (parse_streq(argv[i], "--cpu")) {
			if (cmd_msr_cpu(sh, argc, argv, &i, &a.cpu))
				return 1;
		} else if (argv[i][0] == '-' && argv[i][1] == '-') {
			return shell_error(sh, "unknown option '%s' (only --cpu)", argv[i]);
		} else if (pos) {
			return shell_error(sh, "usage: msr read [--cpu 0|1] ADDR");
		} else {
			pos = argv[i];
		}
	}
	if (!pos)
		return shell_error(sh, "usage: msr read [--cpu 0|1] ADDR");
	if (!parse_u32(pos, &a.msr, &err))
		return shell_error(sh, "bad MSR address '%s': %s", pos, err);
	if (cmd_msr_access(sh, &a))
		return 1;
	if (a.rc != 0)
		return shell_error(sh, "rdmsr %XH: #GP (MSR not present%s%s)", a.msr,
				   plat_msr_backend(a.msr) ? " on " : "",
				   plat_msr_backend(a.msr) ? plat_msr_backend(a.msr) : "");
	cmd_msr_show(sh, "=", &a);
	return 0;
}

static int cmd_msr_write(struct shell *sh, int argc, char **argv)
{
	struct cmd_msr_access a = { .cpu = -1, .write = true };
	const char *pos[2], *err;
	int npos = 0;
	bool force = false;

	for (int i = 2; i < argc; i++) {
		if (parse_streq(argv[i], "--force")) {
			force = true;
		} else if (parse_streq(argv[i], "--cpu")) {
			if (cmd_msr_cpu(sh, argc, argv, &i, &a.cpu))
				return 1;
		} else if (argv[i][0] == '-' && argv[i][1] == '-') {
			return shell_error(sh, "unknown option '%s' (only --cpu and --force)", argv[i]);
		} else if (npos == 2) {
			return shell_error(sh, "usage: msr write [--cpu 0|1] ADDR VALUE [--force]");
		} else {
			pos[npos++] = argv[i];
		}
	}
	if (npos != 2)
		return shell_error(sh, "usage: msr write [--cpu 0|1] ADDR VALUE [--force]");
	if (!parse_u32(pos[0], &a.msr, &err))
		return shell_error(sh, "bad MSR address '%s': %s", pos[0], err);
	if (!parse_u64(pos[1], UINT64_MAX, &a.v, &err))
		return shell_error(sh, "bad value '%s': %s", pos[1], err);
	if (!force && !p4_msr_is_pmu(a.msr))
		return shell_error(sh, "MSR %XH is not a NetBurst PMU register; add --force to write it anyway",
				   a.msr);
	if (cmd_msr_access(sh, &a))
		return 1;
	if (a.rc != 0)
		return shell_error(sh, "wrmsr %XH: #GP (MSR not present or value refused)", a.msr);
	cmd_msr_show(sh, "<-", &a);
	return 0;
}

static int cmd_msr_trace(struct shell *sh, int argc, char **argv)
{
	bool on;

	if (argc != 3 || !(parse_streq(argv[2], "on") || parse_streq(argv[2], "off")))
		return shell_error(sh, "usage: msr trace on|off");
	on = parse_streq(argv[2], "on");
	if (plat_msr_trace(on) != 0)
		return shell_error(sh, "no PMU backend to trace (see 'pmu')");
	shell_printf(sh, "msr trace: %s\n", on ? "on" : "off");
	return 0;
}

int cmd_msr(struct shell *sh, int argc, char **argv)
{
	if (argc < 2)
		return shell_error(sh, "usage: msr read [--cpu 0|1] ADDR | msr write [--cpu 0|1] ADDR VALUE "
				   "[--force] | msr trace on|off");
	if (parse_streq(argv[1], "read"))
		return cmd_msr_read(sh, argc, argv);
	if (parse_streq(argv[1], "write"))
		return cmd_msr_write(sh, argc, argv);
	if (parse_streq(argv[1], "trace"))
		return cmd_msr_trace(sh, argc, argv);
	return shell_error(sh, "unknown msr operation '%s' (expected read, write or trace)", argv[1]);
}

/* --- fault ----------------------------------------------------------------- */

struct cmd_fault_kind {
	const char *name;
	const char *what;
	enum plat_fault_kind kind;
};

static const struct cmd_fault_kind cmd_fault_kinds[] = {
	{ "de", "#DE (divide error)", PLAT_FAULT_DE },
	{ "ud", "#UD (invalid opcode)", PLAT_FAULT_UD },
	{ "gp", "#GP (general protection)", PLAT_FAULT_GP },
	{ "pf", "#PF (page fault)", PLAT_FAULT_PF },
	{ "int3", "#BP (int3 breakpoint)", PLAT_FAULT_INT3 },
};

#define CMD_NFAULT_KINDS (sizeof(cmd_fault_kinds) / sizeof(cmd_fault_kinds[0]))

int cmd_fault(struct shell *sh, int argc, char **argv)
{
	const struct cmd_fault_kind *k = NULL;
	bool halt = argc == 3 && parse_streq(argv[2], "--halt");

	if (argc == 3 && !halt && argv[2][0] == '-')
		return shell_error(sh, "unknown fault option '%s' (valid: --halt)", argv[2]);
	if (argc != 2 && !halt)
		return shell_error(sh, "usage: fault de|ud|gp|pf|int3 [--halt]");
	for (size_t i = 0; i < CMD_NFAULT_KINDS; i++)
		if (parse_streq(argv[1], cmd_fault_kinds[i].name))
			k = &cmd_fault_kinds[i];
	if (k == NULL)
		return shell_error(sh, "unknown fault kind '%s' (valid: de, ud, gp, pf, int3)", argv[1]);
	shell_printf(sh, "raising %s%s\n", k->what, halt ? " outside the command guard" : "");
	if ((halt ? plat_fault_unguarded(k->kind) : plat_fault(k->kind)) != 0)
		return shell_error(sh, "%s was not raised", k->what);
	/* Only a trap such as int3 comes back here: its handler resumes after the instruction. */
	shell_printf(sh, "%s handled, execution resumed\n", k->what);
	return 0;
}

/* --- reboot / poweroff ----------------------------------------------------- */

int cmd_reboot(struct shell *sh, int argc, char **argv)
{
	if (argc != 1)
		return shell_error(sh, "reboot takes no arguments");
	shell_puts(sh, "rebooting\n");
	plat_reboot();
	return shell_error(sh, "reboot failed: the machine is still running");
}

int cmd_poweroff(struct shell *sh, int argc, char **argv)
{
	if (argc != 1)
		return shell_error(sh, "poweroff takes no arguments");
	shell_puts(sh, "powering off\n");
	plat_poweroff();
	return shell_error(sh, "poweroff failed: the machine is still running");
}
