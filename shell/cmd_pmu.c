/*
 * cmd_pmu.c - shell commands over the PMU tables: `events [PATTERN]`.
 *
 * The text comes from pmu/ (p4_events_list), so the listing and the tables
 * cannot disagree; this file only chooses the CPU's capabilities (events a
 * model lacks are marked) and writes the lines.
 */
#include "pmu/p4_spec.h"
#include "shell/cmds.h"
#include "shell/platform.h"

static void pmu_line(void *ctx, const char *s)
{
	struct shell *sh = ctx;

	shell_puts(sh, s);
	shell_puts(sh, "\n");
}

/* The capabilities of this CPU, or NULL when it is not NetBurst (then nothing is marked). */
static const struct p4_caps *pmu_this_cpu(struct p4_caps *caps)
{
	struct cpu_info ci;
	struct p4_sig sig;

	plat_cpu_info(&ci);
	if (!ci.is_netburst)
		return NULL;
	sig.family = (uint8_t)ci.display_family;
	sig.model = ci.display_model;
	sig.stepping = ci.stepping;
	return p4_caps_lookup(&sig, caps) ? caps : NULL;
}

int cmd_events(struct shell *sh, int argc, char **argv)
{
	struct p4_caps caps;

	if (argc > 2)
		return shell_error(sh, "usage: events [PATTERN]");
	if (p4_events_list(argc == 2 ? argv[1] : NULL, pmu_this_cpu(&caps), pmu_line, sh) == 0)
		return shell_error(sh, "no event matches '%s' (try 'events' for the list)", argv[1]);
	return 0;
}
