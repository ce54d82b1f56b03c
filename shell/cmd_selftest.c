/*
 * cmd_selftest.c - the `selftest` command: a conformance test of the PMU
 * of this machine (selftest/selftest.c holds the checks).
 *
 * It prints a header naming the machine (CPUID signature and stepping,
 * brand string, microcode revision, IA32_MISC_ENABLE, boot path and PMU
 * backend), one PASS / FAIL / SKIP line per check as it completes, the
 * report block of CRC-checked `NBS:` lines (selftest/selftest.h) that
 * tools/nbprof-decode turns back into a report, and last the summary line
 * "selftest: N passed, N failed, N skipped", followed by "; no counter
 * counted" when none did and "; on the software model, ..." when the
 * report is the model's. Ctrl-C stops it (a stepped run polls it, an
 * unstepped one's watchdog tick does, workload/workloads.c); the PMU registers
 * are written back either way.
 *
 * The report block is also kept as the texts of QR codes
 * (selftest/report_qr.h): `selftest --qr` shows them on the machine's own
 * screen after the summary line, one at a time, and `qr` shows the last
 * report's codes again.
 */
#include "lib/parse.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "pmu/p4_tables.h"
#include "prof/perf.h"
#include "lib/qr.h"
#include "selftest/report_qr.h"
#include "selftest/selftest.h"
#include "shell/cmds.h"
#include "shell/platform.h"
#include "shell/shell.h"

struct selftest_cmd {
	struct shell *sh;
	struct selftest_opts o;
	struct selftest_machine mach;
	struct selftest_totals totals;
	struct selftest_result results[SELFTEST_MAX_RESULTS];
	char line[SELFTEST_LINE_MAX];
	char err[160];
	bool qr;			/* --qr: the codes on the screen at the end */
};

static struct selftest_cmd stc;
static struct selftest_qr stq;		/* the last report, for `qr` */
static struct qr stq_symbol;

/* ---- options ------------------------------------------------------------- */

/* Is msr an ESCR of the PMU backend's model (--inject stuck=)? */
static bool selftest_is_escr(uint32_t msr)
{
	enum p4_escr e;

	return p4_escr_by_msr(msr, &e) && (p4_escrs[e].models & perf_info()->caps.escr_models);
}

static int selftest_parse_inject(struct shell *sh, const char *arg, struct selftest_opts *o)
{
	static const struct { const char *name; enum selftest_inject kind; uint64_t max; } kinds[] = {
		{ "unflagged=", SELFTEST_INJECT_UNFLAGGED, 1000 },
		{ "n15=", SELFTEST_INJECT_N15, 1000 },
		{ "dead=", SELFTEST_INJECT_DEAD, 17 },
		{ "rdpmc=", SELFTEST_INJECT_RDPMC, 17 },
		{ "nomask=", SELFTEST_INJECT_NOMASK, 1000 },
		{ "erratum=", SELFTEST_INJECT_ERRATUM, 1 },
		{ "stuck=", SELFTEST_INJECT_STUCK, 0xffffffff },
	};
	const char *why = "";
	uint64_t v;

	for (unsigned k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		const char *p = arg, *q = kinds[k].name;

		while (*q && *p == *q)
			p++, q++;
		if (*q)
			continue;
		if (!parse_u64(p, kinds[k].max, &v, &why))
			return shell_error(sh, "--inject %s: %s", arg, why);
		if (kinds[k].kind == SELFTEST_INJECT_STUCK && !selftest_is_escr((uint32_t)v))
			return shell_error(sh, "--inject %s: not an ESCR of this model", arg);
		o->inject = kinds[k].kind;
		o->inject_arg = (unsigned)v;
		return 0;
	}
	return shell_error(sh, "--inject %s: expected unflagged=N, n15=N, dead=COUNTER, "
			   "rdpmc=COUNTER, nomask=N, erratum=1 or stuck=ESCR_MSR", arg);
}

static int selftest_parse(struct shell *sh, int argc, char **argv, struct selftest_opts *o,
			  bool *qr)
{
	*o = (struct selftest_opts){ 0 };
	*qr = false;
	for (int i = 1; i < argc; i++) {
		if (parse_streq(argv[i], "--qr"))
			*qr = true;
		else if (parse_streq(argv[i], "--quick"))
			o->quick = true;
		else if (parse_streq(argv[i], "--verbose"))
			o->verbose = true;
		else if (parse_streq(argv[i], "--replace"))
			o->replace = true;
		else if (parse_streq(argv[i], "--inject") && i + 1 < argc) {
			if (selftest_parse_inject(sh, argv[++i], o))
				return 1;
		} else
			return shell_error(sh, "selftest: unknown argument '%s' (usage: selftest "
					   "[--quick] [--verbose] [--replace] [--qr] [--inject KIND=N])", argv[i]);
	}
	return 0;
}

/* ---- output -------------------------------------------------------------- */

static void selftest_emit(void *ctx, const struct selftest_result *r)
{
	struct selftest_cmd *c = ctx;

	selftest_count(&c->totals, r);
	selftest_format(r, c->o.verbose, c->line, sizeof(c->line));
	shell_printf(c->sh, "%s\n", c->line);
}

static bool selftest_interrupted(void *ctx)
{
	return plat_interrupted();
}

static void selftest_backend(char *buf, size_t n)
{
	const struct perf_info *pi = perf_info();
	char sig[8];

	if (pi->backend == PERF_BACKEND_NONE) {
		ksnprintf(buf, n, "none");
		return;
	}
	p4_sig_format(&pi->sig, sig, sizeof(sig));
	ksnprintf(buf, n, "%s %s stepping %u %s", perf_backend_name(pi->backend), sig,
		  pi->sig.stepping, pi->ht ? "with HT" : "without HT");
}

/* How the machine booted, as `cpu` prints it (the boot information). */
static void selftest_boot(struct shell *sh)
{
	struct cpu_info ci;

	plat_cpu_info(&ci);
	if (ci.booted_by && ci.kernel_mode)
		shell_printf(sh, "boot: %s; nbprof runs in %s\n", ci.booted_by, ci.kernel_mode);
	else
		shell_puts(sh, "boot: not recorded\n");
}

static void selftest_header(struct selftest_cmd *c)
{
	const struct selftest_machine *m = &c->mach;
	char backend[64];

	selftest_backend(backend, sizeof(backend));
	shell_printf(c->sh, "selftest: PMU conformance test (nbprof)\n");
	shell_printf(c->sh, "machine: CPUID %08XH (%s stepping %u), \"%s\"\n", m->signature,
		     m->display, m->stepping, m->brand[0] ? m->brand : "no brand string");
	if (m->ucode_ok)
		shell_printf(c->sh, "microcode: revision %08XH (IA32_BIOS_SIGN_ID)\n", m->ucode);
	else
		shell_puts(c->sh, "microcode: IA32_BIOS_SIGN_ID unreadable\n");
	if (m->misc_ok)
		shell_printf(c->sh, "IA32_MISC_ENABLE: %016llXH\n", (unsigned long long)m->misc_enable);
	else
		shell_puts(c->sh, "IA32_MISC_ENABLE: unreadable\n");
	selftest_boot(c->sh);
	shell_printf(c->sh, "PMU backend %s (%s)\n", backend, perf_info()->reason);
}

/* The "no counter counted" line of st_counters (selftest/counts.c) is among the results. */
static bool selftest_nothing_counted(const struct selftest_result *r, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (r[i].status == SELFTEST_FAIL && strncmp(r[i].name, "no counter counted", 18) == 0)
			return true;
	return false;
}

static void selftest_line(void *ctx, const char *line)
{
	shell_printf(ctx, "%s\n", line);
}

/* ---- the report as QR codes on the screen ----------------------------------- */

/*
 * Codes of version 25 at most: 117 modules, which a phone reads from a
 * photo of the whole screen when each module is 4 pixels or more.
 */
#define SELFTEST_QR_VERSION_MAX	25
#define SELFTEST_QR_QUIET_SMALL	2	/* on a screen of fewer than 100 modules (VGA text) */
#define KEY_ESC			0x1b

/*
 * Show the last report's codes, one at a time: any key the next, Esc (or
 * the end of input) back to the shell. The largest version the screen
 * shows; level M, or L below version 10, where a code holds little.
 */
static int selftest_show_codes(struct shell *sh, const char *who)
{
	static char text[QR_CODEWORDS_MAX * 2];
	unsigned room = plat_qr_room(), quiet, count;
	enum qr_ecc ecc;
	size_t chars;
	int v;

	if (!stq.zlen)
		return shell_error(sh, "%s: %s", who, stq.full ? "the report is too long for QR codes"
				   : "no selftest report yet (run selftest)");
	quiet = room >= 100 ? QR_QUIET : SELFTEST_QR_QUIET_SMALL;
	for (v = SELFTEST_QR_VERSION_MAX; v >= QR_VERSION_MIN; v--)
		if ((unsigned)QR_SIZE(v) + 2 * quiet <= room)
			break;
	if (v < QR_VERSION_MIN)
		return shell_error(sh, "%s: no screen to show QR codes on%s", who,
				   room ? " (too small)" : " (nbprof.cfg console = serial, or none found)");
	ecc = v < 10 ? QR_ECC_L : QR_ECC_M;
	chars = qr_capacity_alnum(v, ecc);
	count = selftest_qr_count(&stq, chars);
	shell_printf(sh, "%s: the report is on the screen as %u QR code%s; any key shows the next, "
		     "Esc returns to the shell (tools/selftest-report reads a photo of each)\n", who,
		     count, count == 1 ? "" : "s");
	for (unsigned k = 1; k <= count; k++) {
		char caption[160];
		int len = selftest_qr_code(&stq, chars, k, text, sizeof(text)), key;

		if (len < 0 || qr_encode(&stq_symbol, text, (size_t)len, ecc, 1, v, -1)) {
			plat_qr_end();
			return shell_error(sh, "%s: code %u of %u does not fit", who, k, count);
		}
		ksnprintf(caption, sizeof(caption), "nbprof selftest report\nQR code %u of %u\n%s\n"
			  "Esc: back to the shell", k, count,
			  k < count ? "any key: the next code" : "any key: done");
		plat_qr_show(&stq_symbol, quiet, caption);
		shell_printf(sh, "%s: code %u of %u on the screen\n", who, k, count);
		key = sh->io.getc(sh->io.ctx);
		if (key < 0 || key == KEY_ESC)
			break;
	}
	plat_qr_end();
	return 0;
}

static int cmd_selftest(struct shell *sh, int argc, char **argv)
{
	struct selftest_cmd *c = &stc;
	bool interrupted = false;
	char backend[64];
	int n;

	c->sh = sh;
	c->totals = (struct selftest_totals){ 0 };
	if (selftest_parse(sh, argc, argv, &c->o, &c->qr))
		return 1;
	c->o.emit = selftest_emit;
	c->o.interrupted = selftest_interrupted;
	c->o.ctx = c;
	selftest_machine(&c->mach);
	selftest_header(c);
	n = selftest_run(&c->o, c->results, SELFTEST_MAX_RESULTS, &interrupted, c->err,
			 sizeof(c->err));
	if (n < 0)
		return shell_error(sh, "selftest: %s", c->err);
	if (interrupted)
		shell_printf(sh, "selftest: stopped (%s); the PMU registers were restored\n",
			     c->err[0] ? c->err : "interrupted");
	selftest_backend(backend, sizeof(backend));
	selftest_block(&c->mach, backend, c->results, (unsigned)n, selftest_line, sh);
	selftest_qr_reset(&stq);
	selftest_block(&c->mach, backend, c->results, (unsigned)n, selftest_qr_line, &stq);
	selftest_qr_pack(&stq);
	shell_printf(sh, "selftest: %u passed, %u failed, %u skipped%s%s%s\n", c->totals.passed,
		     c->totals.failed, c->totals.skipped, interrupted ? " (incomplete)" : "",
		     selftest_nothing_counted(c->results, (unsigned)n) ? "; no counter counted" : "",
		     perf_info()->backend == PERF_BACKEND_MODEL ?
		     "; on the software model, not this machine's PMU" : "");
	if (c->qr && selftest_show_codes(sh, "selftest"))
		return 1;
	return c->totals.failed || interrupted;
}

static int cmd_qr(struct shell *sh, int argc, char **argv)
{
	if (argc > 1)
		return shell_error(sh, "qr: unknown argument '%s' (usage: qr)", argv[1]);
	return selftest_show_codes(sh, "qr");
}

static const struct shell_cmd selftest_cmds[] = {
	{ "selftest", "selftest [--quick] [--verbose] [--replace] [--qr] [--inject KIND=N]",
	  "check this machine's PMU against the manual",
	  "Programs every counter, ESCR pairing, privilege and thread filter, the\n"
	  "overflow flag, FORCE_OVF, the 40-bit wrap, PMIs in both delivery modes,\n"
	  "the LVT PC auto-mask, cascades (bit 30 and CASCNTxINTOy), the cascade-PMI\n"
	  "erratum, RDPMC, PEBS and the uncore L3/FSB counters, runs built-in\n"
	  "workloads with known counts and prints PASS, FAIL or SKIP with the\n"
	  "measured value next to the expected one. The NBS: lines at the end are\n"
	  "the report for tools/nbprof-decode; please send them in from real\n"
	  "NetBurst machines. The PMU registers are restored. The PEBS check is a\n"
	  "`record` run: it is skipped while a recording of yours is held.\n"
	  "  --quick     each exact difference from one pair of runs (default: the\n"
	  "              smaller counts of two)\n"
	  "  --verbose   show how each expectation is made\n"
	  "  --replace   run the PEBS check even though it replaces your last recording\n"
	  "  --qr        then show the report as QR codes on the screen (`qr`)\n"
	  "  --inject    model backend only, to see the checks fail: unflagged=N\n"
	  "              overflows leave OVF clear, n15=N reloads lose their writes,\n"
	  "              dead=C counter C never counts, rdpmc=C RDPMC of counter C\n"
	  "              reads wrong, nomask=N PMIs leave LVT PC unmasked, erratum=1\n"
	  "              the cascade-PMI erratum the other way round, stuck=MSR the\n"
	  "              ESCR at MSR keeps every bit once set (the restore fails)\n",
	  cmd_selftest },
	{ "qr", "qr", "show the last selftest report as QR codes on the screen",
	  "Shows the NBS: lines of the last `selftest` as QR codes on this machine's\n"
	  "own screen, one at a time: any key shows the next, Esc returns to the\n"
	  "shell. Photograph each (or read it with a phone's QR reader and send the\n"
	  "text); tools/selftest-report turns the photos or the text back into the\n"
	  "report and checks every line's CRC. The report is compressed (zlib),\n"
	  "in base45, cut into codes numbered k of n.\n",
	  cmd_qr },
};

int selftest_add_commands(struct shell *sh)
{
	return shell_add_commands(sh, selftest_cmds, sizeof(selftest_cmds) / sizeof(selftest_cmds[0]));
}
