/*
 * cmd_pmu.c - shell commands over the PMU tables: `events [PATTERN]`.
 *
 * The text comes from pmu/ (p4_events_list, p4_unc_list for the uncore
 * units), so the listing and the tables cannot disagree; this file only
 * chooses the CPU's capabilities (events a model lacks are marked) and
 * writes the lines (`pmu` says where the software model's counts of each
 * event come from).
 */
#include "pmu/p4_events.h"
#include "pmu/p4_spec.h"
#include "pmu/p4_uncore.h"
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
	const struct p4_caps *cp = pmu_this_cpu(&caps);
	const char *pattern = argc == 2 ? argv[1] : NULL;
	int core, unc;

	if (argc > 2)
		return shell_error(sh, "usage: events [PATTERN]");
	core = p4_events_list(pattern, cp, pmu_line, sh);
	unc = p4_unc_list(pattern, cp, pmu_line, sh);
	if (core == 0 && unc == 0)
		return shell_error(sh, "no event matches '%s' (try 'events' for the list)", argv[1]);
	return 0;
}
