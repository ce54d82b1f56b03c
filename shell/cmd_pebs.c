/*
 * cmd_pebs.c - `pebs`: a DS save area for PEBS records written by hand.
 *
 * `record` sets PEBS up and takes it down by itself; this command is for
 * raw set-ups with `msr write` (e.g. MSR_PEBS_ENABLE written from LP1,
 * whose MY_THR / OTH_THR bits are relative to the writing LP, fact sheet
 * 5.3). `pebs area` prepares the kernel's DS save area of one LP (prof/
 * pebs.h: the kernel mode's layout, fact sheet 5.2) and writes its address
 * to IA32_DS_AREA on that LP itself, since the MSR is per LP; `pebs show`
 * lists the records the processor (or the model) wrote since, without
 * draining them; `pebs off` writes 0 to that LP's IA32_DS_AREA. A `record`
 * run replaces and removes these areas.
 */
#include "arch/x86/ksyms.h"
#include "lib/parse.h"
#include "prof/pebs.h"
#include "shell/cmds.h"
#include "shell/platform.h"
#include "shell/shell.h"

#define PEBS_USAGE	"pebs area [--cpu 0|1] RECORDS PERIOD | pebs show [--cpu 0|1] | pebs off [--cpu 0|1]"

struct pebs_cmd {
	unsigned lp;
	const char *pos[2];
	int npos;
};

/* Options and positional words after the subcommand; 0, or 1 after printing the error. */
static int pebs_parse(struct shell *sh, int argc, char **argv, struct pebs_cmd *c)
{
	for (int i = 2; i < argc; i++) {
		if (parse_streq(argv[i], "--cpu")) {
			const char *a = i + 1 < argc ? argv[++i] : "";

			if (!parse_streq(a, "0") && !parse_streq(a, "1"))
				return shell_error(sh, "--cpu wants 0 or 1, not '%s'", a);
			c->lp = (unsigned)(a[0] - '0');
		} else if (argv[i][0] == '-' && argv[i][1] == '-') {
			return shell_error(sh, "unknown option '%s' (usage: %s)", argv[i], PEBS_USAGE);
		} else if (c->npos == 2) {
			return shell_error(sh, "usage: %s", PEBS_USAGE);
		} else {
			c->pos[c->npos++] = argv[i];
		}
	}
	return 0;
}

/* On the LP itself: IA32_DS_AREA <- its area (or 0 when forgotten). */
static void pebs_load_fn(void *arg)
{
	int *rc = arg;

	*rc = pebs_load(rc[1] ? 1 : 0);
}

static int pebs_load_on(struct shell *sh, unsigned lp)
{
	static int rc[2];	/* static: the sibling may still write it after a timeout */
	const char *why = "";

	rc[0] = 0;
	rc[1] = (int)lp;
	if (plat_run_on_lp(lp, pebs_load_fn, rc, &why))
		return shell_error(sh, "pebs: LP%u: %s", lp, why);
	if (rc[0])
		return shell_error(sh, "pebs: writing IA32_DS_AREA on LP%u faulted", lp);
	return 0;
}

static int pebs_area(struct shell *sh, const struct pebs_cmd *c)
{
	uint64_t records, period;
	struct p4_ds_pebs p;
	const char *err;
	char why[96];

	if (c->npos != 2)
		return shell_error(sh, "usage: %s", PEBS_USAGE);
	if (!parse_u64(c->pos[0], PEBS_RECORDS_MAX, &records, &err))
		return shell_error(sh, "bad RECORDS '%s': %s", c->pos[0], err);
	if (!parse_u64(c->pos[1], UINT64_C(1) << 39, &period, &err) || period == 0)
		return shell_error(sh, "bad PERIOD '%s': %s", c->pos[1], period ? err : "must be 1 or more");
	if (pebs_check(why, sizeof(why)) || pebs_prepare(c->lp, (unsigned)records, period, why, sizeof(why)))
		return shell_error(sh, "pebs: %s", why);
	if (pebs_load_on(sh, c->lp)) {
		pebs_forget(c->lp);
		return 1;
	}
	pebs_fields(c->lp, &p);
	shell_printf(sh, "pebs: LP%u IA32_DS_AREA <- %llXH: %llu record slots of %u bytes from %llXH, "
		     "interrupt threshold %llXH, counter reset %010llXH\n", c->lp,
		     (unsigned long long)pebs_area_addr(c->lp), (unsigned long long)records,
		     pebs_record_bytes(), (unsigned long long)p.base, (unsigned long long)p.threshold,
		     (unsigned long long)p.reset);
	return 0;
}

static int pebs_show(struct shell *sh, const struct pebs_cmd *c)
{
	struct p4_pebs_record r;
	struct p4_ds_pebs p;
	unsigned k;

	if (c->npos != 0)
		return shell_error(sh, "usage: %s", PEBS_USAGE);
	if (pebs_fields(c->lp, &p))
		return shell_error(sh, "pebs: LP%u has no DS area (see 'pebs area')", c->lp);
	shell_printf(sh, "pebs: LP%u DS area %llXH: base %llXH, index %llXH, maximum %llXH, threshold %llXH\n",
		     c->lp, (unsigned long long)pebs_area_addr(c->lp), (unsigned long long)p.base,
		     (unsigned long long)p.index, (unsigned long long)p.max, (unsigned long long)p.threshold);
	for (k = 0; pebs_record_at(c->lp, k, &r) == 0; k++) {
		uint64_t ip = r.reg[P4_PEBS_IP], off = 0;
		const char *sym = ksym_lookup(ip, &off);

		shell_printf(sh, "  #%u IP %llx %s+%#llx flags %016llXH\n", k, (unsigned long long)ip,
			     sym ? sym : "?", (unsigned long long)off,
			     (unsigned long long)r.reg[P4_PEBS_FLAGS]);
	}
	shell_printf(sh, "pebs: LP%u %u record(s)\n", c->lp, k);
	return 0;
}

static int cmd_pebs(struct shell *sh, int argc, char **argv)
{
	struct pebs_cmd c = { 0 };

	if (argc < 2)
		return shell_error(sh, "usage: %s", PEBS_USAGE);
	if (pebs_parse(sh, argc, argv, &c))
		return 1;
	if (parse_streq(argv[1], "area"))
		return pebs_area(sh, &c);
	if (parse_streq(argv[1], "show"))
		return pebs_show(sh, &c);
	if (!parse_streq(argv[1], "off"))
		return shell_error(sh, "unknown pebs operation '%s' (expected area, show or off)", argv[1]);
	if (c.npos != 0)
		return shell_error(sh, "usage: %s", PEBS_USAGE);
	pebs_forget(c.lp);
	if (pebs_load_on(sh, c.lp))
		return 1;
	shell_printf(sh, "pebs: LP%u IA32_DS_AREA <- 0\n", c.lp);
	return 0;
}

static const struct shell_cmd pebs_cmds[] = {
	{ "pebs", PEBS_USAGE, "a PEBS DS save area for registers written by hand",
	  "For raw set-ups with 'msr write' ('record' sets PEBS up by itself):\n"
	  "  pebs area [--cpu 0|1] RECORDS PERIOD   prepare the kernel's DS save\n"
	  "      area of LP0 or LP1 (RECORDS slots, 2..128, the interrupt threshold a\n"
	  "      tenth of them, at least 2, below the maximum, counter reset -PERIOD)\n"
	  "      in the DS layout the CPU uses, and write its\n"
	  "      address to IA32_DS_AREA on that LP (a per-LP MSR, fact sheet 5.2)\n"
	  "  pebs show [--cpu 0|1]   the area's fields and every record written since,\n"
	  "      with its linear IP and flags (the buffer is left as it is)\n"
	  "  pebs off [--cpu 0|1]    IA32_DS_AREA <- 0 on that LP\n"
	  "MSR_PEBS_ENABLE's MY_THR / OTH_THR are relative to the writing LP: write\n"
	  "it with 'msr write --cpu 1 3F1H ...' to enable PEBS from LP1. A 'record'\n"
	  "run replaces these areas and removes them when it ends.\n", cmd_pebs },
};

int pebs_add_commands(struct shell *sh)
{
	return shell_add_commands(sh, pebs_cmds, sizeof(pebs_cmds) / sizeof(pebs_cmds[0]));
}
