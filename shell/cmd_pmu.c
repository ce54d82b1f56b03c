/*
 * cmd_pmu.c - shell commands over the PMU tables: `events [PATTERN]`.
 *
 * The text comes from pmu/ (p4_events_list, p4_unc_list for the uncore
 * units), so the listing and the tables cannot disagree; this file only
 * chooses the CPU's capabilities (events a model lacks are marked), puts a
 * header over a list, and marks each event's row with where the active PMU
 * backend takes it from (plat_event_source: under the software model
 * "[real: stepped]" and "[real: TSC]" for the events it counts from what
 * the stepped code really does, "[memory model]" and "[cost model]" for
 * those its models derive, "[synthetic]" for those only the `synthetic`
 * workload emits; `pmu` lists every event's model input in full).
 */
#include "lib/parse.h"
#include "pmu/p4_events.h"
#include "pmu/p4_spec.h"
#include "pmu/p4_text.h"
#include "pmu/p4_uncore.h"
#include "shell/cmds.h"
#include "shell/platform.h"

#define PMU_LINE_MAX	240

static const char pmu_header[] =
	"event  code sel  ESCRs(counters)  TS|TI flags  [source]";

/* The source label of an event row (a line that starts with an event name), or NULL. */
static const char *pmu_source_of(const char *s)
{
	enum p4_event ev;
	unsigned n = 0;
	const char *src;

	while (s[n] && s[n] != ' ')
		n++;
	if (n == 0 || !p4_event_by_name(s, n, &ev) || !(src = plat_event_source((unsigned)ev)))
		return NULL;
	if (parse_streq(src, "stepped") || parse_streq(src, "TSC"))
		return parse_streq(src, "TSC") ? "[real: TSC]" : "[real: stepped]";
	if (parse_streq(src, "memory model") || parse_streq(src, "cost model"))
		return parse_streq(src, "cost model") ? "[cost model]" : "[memory model]";
	return parse_streq(src, "synthetic") || parse_streq(src, "none") ? "[synthetic]" : NULL;
}

static void pmu_line(void *ctx, const char *s)
{
	struct shell *sh = ctx;
	const char *src = pmu_source_of(s);

	shell_puts(sh, s);
	if (src) {
		shell_puts(sh, " ");
		shell_puts(sh, src);
	}
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

/* True when p4_events_list prints a table for pattern (not one event's details). */
static bool pmu_is_table(const char *pattern)
{
	unsigned n = (unsigned)parse_strlen(pattern), matched = 0;
	enum p4_event ev;

	if (p4_event_by_name(pattern, n, &ev) || p4_alias_by_name(pattern, n))
		return false;
	for (int e = 0; e < P4_NEVENT; e++)
		if (p4_text_contains(p4_events[e].name, parse_strlen(p4_events[e].name), pattern))
			matched++;
	return matched > 1;
}

int cmd_events(struct shell *sh, int argc, char **argv)
{
	const char *pattern = argc == 2 ? argv[1] : "";
	struct p4_caps caps;
	const struct p4_caps *cp;
	bool table;
	int core, unc;

	if (argc > 2)
		return shell_error(sh, "usage: events [PATTERN]");
	cp = pmu_this_cpu(&caps);
	table = pmu_is_table(pattern);
	if (table)
		shell_printf(sh, "%s\n", pmu_header);
	core = p4_events_list(pattern, cp, pmu_line, sh);
	unc = p4_unc_list(pattern, cp, pmu_line, sh);
	if (core == 0 && unc == 0)
		return shell_error(sh, "no event matches '%s' (try 'events' for the list)", argv[1]);
	if (table && plat_event_source(P4_EV_INSTR_RETIRED) &&
	    !parse_streq(plat_event_source(P4_EV_INSTR_RETIRED), "hardware"))
		shell_printf(sh, "# model: [real: ...] from the workload's steps, [memory model] "
			     "and [cost model] from the models they feed, [synthetic] from "
			     "'synthetic' only\n");
	return 0;
}
