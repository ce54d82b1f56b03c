/*
 * cmd_record.c - the sampling commands: `record`, `report`, `annotate`,
 * `script` and `dump`.
 *
 * record parses everything before touching the PMU: its own options, the
 * event options through stat's parser (shell/stat_opts.c: -e, --after,
 * --ring, cascades, T-bits), the workload's arguments, the plan
 * (p4_alloc). Every event that is not a cascade starter samples with the
 * same period. The other four commands read the last recording
 * (record_last()) with the portable readers in prof/report.c and
 * prof/dump.c.
 */
#include "arch/x86/console.h"
#include "arch/x86/insn.h"
#include "arch/x86/ksyms.h"
#include "arch/x86/mode.h"
#include "arch/x86/percpu.h"
#include "arch/x86/progress.h"
#include "arch/x86/timer.h"
#include "lib/parse.h"
#include "pmu/p4_spec.h"
#include "prof/dump.h"
#include "prof/jitter.h"
#include "pmu/p4_tagging.h"
#include "prof/pebs.h"
#include "workload/program.h"
#include "prof/record.h"
#include "prof/report.h"
#include "shell/cmds.h"
#include "shell/platform.h"
#include "shell/shell.h"
#include "shell/stat_opts.h"

#define REC_ERR_MAX		600
#define REC_MAX_WORDS		(SHELL_LINE_MAX / 2 + 2)
#define REC_DEFAULT_FREQ	4000u		/* perf record's default, for clockticks */
#define REC_DEFAULT_PERIOD	100000u		/* other events */
#define REC_MAX_FREQ		100000u
#define REC_REPORT_ROWS		4096u
#define REC_DUMP_PROGRESS	256u		/* frames between progress lines */
#define REC_DEFAULT_EVENT	"global_power_events:RUNNING"
#define REC_DEFAULT_SEED	1u		/* --jitter without --seed */

struct rec_opts {
	struct stat_opts so;		/* -e/--after/--ring/--cpu/--stagger/--pair, stat's parser */
	uint64_t period, freq, buffer, throttle, floor_n;
	uint64_t jitter, seed;			/* --jitter PCT, --seed N */
	bool seed_set;
	uint64_t inject_unflagged, inject_n15;	/* --inject: model quirks (perf_inject) */
	bool inject_stuck_ovf;		/* --inject stuck-ovf: a model fault */
	uint64_t pebs_records;		/* --pebs-buffer N: PEBS record slots per LP */
	bool pebs;			/* --pebs: every -e event samples by PEBS */
	bool pebs_drain_end;		/* --pebs-drain-at-end: PMIs leave the buffer alone */
	bool period_set, freq_set, buffer_set, callchain, wrap, floor, quiet, no_watchdog;
	enum perf_pmi_mode pmi;
	int workload;			/* argv index of the (first) workload's name */
	int workload_end;		/* argv index after its last argument */
	int pair;			/* --pair: argv index of B's name, else 0 */
};

struct rec_state {
	struct rec_opts o;
	struct stat_reqs reqs;
	struct record_cfg cfg;
	struct record_result res;
	struct workload_args args, args_b;
	char *words[REC_MAX_WORDS];
	char pebs_spec[STAT_MAX_EVENTS][STAT_SPEC_MAX];	/* -e specs with :pebs taken out */
	bool pebs_ev[STAT_MAX_EVENTS];			/* ... which had it */
	bool tagger[P4_MAX_REQUESTS];			/* uop_type added for front-end tagging */
	struct report_entry scratch[REC_REPORT_ROWS];
	struct dump_enc enc;
	char err[REC_ERR_MAX];
};

static struct rec_state rc;

/* ---- record's options -------------------------------------------------------- */

static int rec_fail(struct shell *sh, const char *opt, const char *why)
{
	return shell_error(sh, "record: %s: %s", opt, why);
}

/* SIZE with an optional K or M suffix. */
static bool rec_parse_size(const char *s, uint64_t *out)
{
	char tmp[32];
	size_t n = parse_strlen(s);
	uint64_t scale = 1;
	const char *why;

	if (n == 0 || n >= sizeof(tmp))
		return false;
	for (size_t i = 0; i <= n; i++)
		tmp[i] = s[i];
	if (tmp[n - 1] == 'K' || tmp[n - 1] == 'k')
		scale = 1024;
	else if (tmp[n - 1] == 'M' || tmp[n - 1] == 'm')
		scale = 1024 * 1024;
	if (scale != 1)
		tmp[n - 1] = '\0';
	if (!parse_u64(tmp, UINT64_MAX / scale, out, &why))
		return false;
	*out *= scale;
	return true;
}

static int rec_number(struct shell *sh, int argc, char **argv, int *k, uint64_t min, uint64_t max,
		      uint64_t *out)
{
	const char *opt = argv[*k], *why = "missing value";

	if (*k + 1 >= argc)
		return rec_fail(sh, opt, why);
	(*k)++;
	if (!parse_u64(argv[*k], max, out, &why) || *out < min) {
		shell_error(sh, "record: %s %s: expected %llu .. %llu", opt, argv[*k],
			    (unsigned long long)min, (unsigned long long)max);
		return 1;
	}
	return 0;
}

/* A word stat's parser understands: copy it (and its value) for stat_opts_parse. */
static int rec_stat_word(struct shell *sh, int argc, char **argv, int *k, int *nw)
{
	if (*k + 1 >= argc)
		return rec_fail(sh, argv[*k], "missing value");
	if (*nw + 2 >= REC_MAX_WORDS - 2)
		return rec_fail(sh, argv[*k], "too many options");
	rc.words[(*nw)++] = argv[*k];
	rc.words[(*nw)++] = argv[++(*k)];
	return 0;
}

/* --pair A ARGS -- [--ring R] B ARGS: the rest of the line goes to stat's parser as is. */
static int rec_pair_words(struct shell *sh, int argc, char **argv, int k, int *nw)
{
	struct rec_opts *o = &rc.o;
	int delta;

	if (*nw + (argc - k) > REC_MAX_WORDS)
		return rec_fail(sh, argv[k], "too many words");
	delta = *nw - k;		/* words index = argv index + delta */
	for (int m = k; m < argc; m++)
		rc.words[(*nw)++] = argv[m];
	if (stat_opts_parse(*nw, rc.words, &o->so, rc.err, sizeof(rc.err)))
		return shell_error(sh, "record: %s", rc.err);
	o->workload = o->so.workload - delta;
	o->workload_end = o->so.workload_end - delta;
	o->pair = o->so.pair - delta;
	return 0;
}

/*
 * --inject unflagged=N | n15=N: quirks the model then shows (prof/perf.h,
 * perf_inject); --inject stuck-ovf: a fault, every CCCR.OVF sticks once set
 * (prof/perf.h PERF_FAULT_STUCK_OVF), which only the storm guard ends.
 */
static int rec_inject(struct shell *sh, int argc, char **argv, int *k)
{
	static const char *const kinds[] = { "unflagged=", "n15=" };
	uint64_t *dst[] = { &rc.o.inject_unflagged, &rc.o.inject_n15 };
	const char *v, *why;

	if (*k + 1 >= argc)
		return rec_fail(sh, argv[*k], "missing value");
	v = argv[++(*k)];
	if (parse_streq(v, "stuck-ovf")) {
		rc.o.inject_stuck_ovf = true;
		return 0;
	}
	for (unsigned i = 0; i < 2; i++) {
		size_t n = parse_strlen(kinds[i]), j = 0;

		while (j < n && v[j] == kinds[i][j])
			j++;
		if (j < n)
			continue;
		if (!parse_u64(v + n, 1000000, dst[i], &why))
			return shell_error(sh, "record: --inject %s: expected %sN, N 0 .. 1000000", v,
					   kinds[i]);
		return 0;
	}
	return shell_error(sh, "record: --inject %s: expected unflagged=N, n15=N or stuck-ovf", v);
}

static int rec_option(struct shell *sh, int argc, char **argv, int *k, int *nw)
{
	struct rec_opts *o = &rc.o;
	const char *a = argv[*k];

	if (parse_streq(a, "-e") || parse_streq(a, "--after") || parse_streq(a, "--ring") ||
	    parse_streq(a, "--cpu"))
		return rec_stat_word(sh, argc, argv, k, nw);
	if (parse_streq(a, "--stagger")) {
		if (*nw + 1 >= REC_MAX_WORDS - 2)
			return rec_fail(sh, a, "too many options");
		rc.words[(*nw)++] = argv[*k];
		return 0;
	}
	if (parse_streq(a, "-c"))
		return o->period_set = true, rec_number(sh, argc, argv, k, 1, P4_PERIOD_MAX, &o->period);
	if (parse_streq(a, "-F"))
		return o->freq_set = true, rec_number(sh, argc, argv, k, 1, REC_MAX_FREQ, &o->freq);
	if (parse_streq(a, "--throttle"))
		return rec_number(sh, argc, argv, k, 1, 100, &o->throttle);
	if (parse_streq(a, "--jitter"))
		return rec_number(sh, argc, argv, k, 1, JITTER_PCT_MAX, &o->jitter);
	if (parse_streq(a, "--seed"))
		return o->seed_set = true, rec_number(sh, argc, argv, k, 0, UINT64_MAX, &o->seed);
	if (parse_streq(a, "--nmi") || parse_streq(a, "--vector")) {
		o->pmi = parse_streq(a, "--nmi") ? PERF_PMI_NMI : PERF_PMI_FIXED;
		return 0;
	}
	if (parse_streq(a, "--no-watchdog")) {
		o->no_watchdog = true;
		return 0;
	}
	if (parse_streq(a, "--quiet")) {
		o->quiet = true;
		return 0;
	}
	if (parse_streq(a, "-g") || parse_streq(a, "--wrap")) {
		*(parse_streq(a, "-g") ? &o->callchain : &o->wrap) = true;
		return 0;
	}
	if (parse_streq(a, "--inject"))
		return rec_inject(sh, argc, argv, k);
	if (parse_streq(a, "--pebs"))
		return o->pebs = true, 0;
	if (parse_streq(a, "--pebs-drain-at-end"))
		return o->pebs_drain_end = true, 0;
	if (parse_streq(a, "--pebs-buffer"))
		return rec_number(sh, argc, argv, k, 2, PEBS_RECORDS_MAX, &o->pebs_records);
	if (parse_streq(a, "--buffer")) {
		if (*k + 1 >= argc)
			return rec_fail(sh, a, "missing value");
		if (!rec_parse_size(argv[++(*k)], &o->buffer))
			return shell_error(sh, "record: --buffer %s: expected bytes, e.g. 4096, 64K, 16M",
					   argv[*k]);
		o->buffer_set = true;
		return 0;
	}
	return shell_error(sh, "record: unknown option '%s' (see 'help record')", a);
}

static int rec_parse(struct shell *sh, int argc, char **argv)
{
	struct rec_opts *o = &rc.o;
	int k, nw = 1;

	*o = (struct rec_opts){ .pmi = PERF_PMI_NMI, .throttle = RECORD_THROTTLE_DEFAULT,
				.workload = -1 };
	rc.words[0] = argv[0];
	for (k = 1; k < argc && o->workload < 0; k++) {
		if (parse_streq(argv[k], "--pair")) {
			if (o->period_set && o->freq_set)
				break;
			return rec_pair_words(sh, argc, argv, k, &nw);
		}
		if (parse_streq(argv[k], "--"))
			o->workload = k + 1 < argc ? k + 1 : argc;
		else if (argv[k][0] == '-' && argv[k][1] != '\0')
			{ if (rec_option(sh, argc, argv, &k, &nw)) return 1; }
		else
			o->workload = k;
	}
	if (o->period_set && o->freq_set)
		return shell_error(sh, "record: give -c PERIOD or -F FREQ, not both");
	if (o->workload < 0 || o->workload >= argc)
		return shell_error(sh, "record: name a workload (see 'workloads')");
	o->workload_end = argc;
	rc.words[nw++] = "--";
	rc.words[nw++] = argv[o->workload];
	if (stat_opts_parse(nw, rc.words, &o->so, rc.err, sizeof(rc.err)))
		return shell_error(sh, "record: %s", rc.err);
	return 0;
}

/* ---- planning -------------------------------------------------------------------- */

static bool rec_all_clockticks(void)
{
	for (unsigned i = 0; i < rc.reqs.n; i++)
		if (!rc.reqs.starter[i] && rc.reqs.req[i].spec.event != P4_EV_GLOBAL_POWER_EVENTS)
			return false;
	return true;
}

static int rec_period(struct shell *sh, uint64_t *p)
{
	uint64_t hz = timer_tsc_hz();
	uint64_t freq = rc.o.freq_set ? rc.o.freq : REC_DEFAULT_FREQ;

	if (rc.o.period_set) {
		*p = rc.o.period;
		return 0;
	}
	if (!rec_all_clockticks()) {
		if (rc.o.freq_set)
			return shell_error(sh, "record: -F needs clockticks (global_power_events), whose "
					   "rate is the TSC's; give -c PERIOD for other events");
		*p = REC_DEFAULT_PERIOD;
		return 0;
	}
	if (hz == 0)
		return shell_error(sh, "record: the TSC is not calibrated; give -c PERIOD");
	*p = hz / freq ? hz / freq : 1;
	if (*p > P4_PERIOD_MAX)
		*p = P4_PERIOD_MAX;
	return 0;
}

/*
 * With work on both LPs (--pair, --cpu both), an event without :t0/:t1
 * would count both LPs' events on one counter whose PMI goes to one LP,
 * which would then sample its own context for the other LP's events. So a
 * sampling event is split into one request per LP, each on that LP's half
 * and interrupting that LP (OVF_PMI_T0/T1).
 */
static int rec_split_lps(struct shell *sh)
{
	struct stat_reqs *r = &rc.reqs;
	unsigned n0 = r->n;

	for (unsigned i = 0; i < n0; i++) {
		struct p4_request *q = &r->req[i];

		if (r->starter[i] || q->lp != P4_LP_BOTH)
			continue;
		if (q->role == P4_ROLE_CASCADE || r->tbits[i].given)
			return shell_error(sh, "record: #%u would sample both LPs' events on one counter "
					   "(its PMI goes to one LP): name the LP with :t0 or :t1", i + 1);
		if (r->n == P4_MAX_REQUESTS)
			return shell_error(sh, "record: one counter per LP and event: more than %d "
					   "requests", P4_MAX_REQUESTS);
		q->lp = P4_LP0;
		q->pmi = P4_PMI_LP0;
		q->spec.thread = P4_THREAD_T0;
		r->req[r->n] = *q;
		r->req[r->n].lp = P4_LP1;
		r->req[r->n].pmi = P4_PMI_LP1;
		r->req[r->n].spec.thread = P4_THREAD_T1;
		r->tbits[r->n] = r->tbits[i];
		r->starter[r->n] = false;
		r->pmi_lost[r->n] = r->pmi_lost[i];
		r->n++;
	}
	return 0;
}

/* True when spec has the modifier mod (":mod" followed by ':' or its end; case-insensitive). */
static bool rec_has_modifier(const char *spec, const char *mod)
{
	size_t n = parse_strlen(mod);

	for (const char *s = spec; *s; s++) {
		size_t i = 0;

		if (*s != ':')
			continue;
		while (i < n && s[1 + i] && (s[1 + i] | 0x20) == (mod[i] | 0x20))
			i++;
		if (i == n && (mod[n - 1] == '=' || s[1 + n] == ':' || s[1 + n] == '\0'))
			return true;
	}
	return false;
}

/* ---- PEBS (PMU reference 5): :pebs, --pebs, and the tagging the events need ----- */

static bool rec_word_is(const char *w, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n && name[i]; i++)
		if ((w[i] | 0x20) != name[i])
			return false;
	return i == n && name[i] == '\0';
}

/* Copy spec without its ":pebs" words; true when it had one. */
static bool rec_strip_pebs(const char *spec, char *out, size_t n)
{
	size_t o = 0;
	bool had = false;

	for (const char *w = spec; *w;) {
		const char *e = w;

		while (*e && *e != ':')
			e++;
		if (w != spec && rec_word_is(w, (size_t)(e - w), "pebs")) {
			had = true;
		} else {
			if (w != spec && o + 1 < n)
				out[o++] = ':';
			for (const char *c = w; c < e && o + 1 < n; c++)
				out[o++] = *c;
		}
		w = *e ? e + 1 : e;
	}
	out[o] = '\0';
	return had;
}

static void rec_pebs_specs(void)
{
	struct stat_opts *so = &rc.o.so;

	for (unsigned i = 0; i < so->nev; i++) {
		rc.pebs_ev[i] = rec_strip_pebs(so->ev[i].spec, rc.pebs_spec[i], STAT_SPEC_MAX) ||
				rc.o.pebs;
		so->ev[i].spec = rc.pebs_spec[i];
	}
}

/* Event i of -e samples by PEBS: counter 16/17 (p4_alloc), records drained by the PMI. */
static int rec_pebs_roles(struct shell *sh)
{
	struct stat_opts *so = &rc.o.so;

	for (unsigned i = 0; i < so->nev; i++) {
		struct p4_request *q = &rc.reqs.req[i];

		if (!rc.pebs_ev[i])
			continue;
		if (so->ev[i].after || rc.reqs.n != so->nev)
			return shell_error(sh, "record: PEBS events cannot be cascaded (--after)");
		if (!(p4_events[q->spec.event].flags & P4_EVF_PEBS))
			return shell_error(sh, "record: '%s': PEBS works only with front_end_event, "
					   "execution_event and replay_event (SDM 18.16.3)",
					   so->ev[i].spec);
		q->role = P4_ROLE_PEBS;
		q->spec.pebs = true;
	}
	return 0;
}

/*
 * front_end_event counts µops the front end tagged (PMU reference 5.6): unless
 * the user gave one, add uop_type TAGLOADS:TAGSTORES for the same LP
 * (pmu/p4_tagging.h). It takes a counter but never increments it.
 */
static int rec_add_taggers(struct shell *sh)
{
	int i;

	while ((i = p4_tag_frontend_untagged(rc.reqs.req, rc.reqs.n)) >= 0) {
		if (rc.reqs.n == P4_MAX_REQUESTS)
			return shell_error(sh, "record: no room for the uop_type tagging request");
		if (p4_tag_frontend_tagger(&perf_info()->caps, &rc.reqs.req[i],
					   &rc.reqs.req[rc.reqs.n]))
			return shell_error(sh, "record: uop_type cannot be parsed");
		rc.reqs.tbits[rc.reqs.n] = rc.reqs.tbits[i];
		rc.reqs.starter[rc.reqs.n] = false;
		rc.reqs.pmi_lost[rc.reqs.n] = false;
		rc.tagger[rc.reqs.n++] = true;
	}
	return 0;
}

/*
 * Execution tagging (PMU reference 5.7): execution_event's NBOGUSn / BOGUSn
 * count the uops an upstream FIRM event tags with bit n. A slot that no
 * request tags would record nothing, so it is refused; the tagging
 * upstream events are taggers (counted, never sampled).
 */
static bool rec_exec_tagger(const struct p4_request *q)
{
	if (!(p4_events[q->spec.event].flags & P4_EVF_UPSTREAM_TAG) || !q->spec.tag_value)
		return false;
	for (unsigned i = 0; i < rc.reqs.n; i++)
		if (rc.reqs.req[i].spec.event == P4_EV_EXECUTION_EVENT)
			return true;
	return false;
}

static int rec_check_exec_tags(struct shell *sh)
{
	char why[192];

	if (!p4_tag_why(rc.reqs.req, rc.reqs.n, why, sizeof(why)))
		return 0;
	return shell_error(sh, "record: %s", why);
}

static int rec_requests(struct shell *sh)
{
	const struct perf_info *pi = perf_info();
	struct stat_opts *so = &rc.o.so;
	uint64_t period = 0;

	for (unsigned i = 0; i < so->nev; i++) {
		if (rec_has_modifier(so->ev[i].spec, "period="))
			return shell_error(sh, "record: '%s': give the period with -c PERIOD",
					   so->ev[i].spec);
	}
	if (so->nev == 0) {
		so->nev = 1;
		so->ev[0] = (struct stat_event_opt){ .spec = REC_DEFAULT_EVENT };
	}
	rec_pebs_specs();
	if (stat_build_requests(so, &pi->caps, &rc.reqs, rc.err, sizeof(rc.err)))
		return shell_error(sh, "record: %s", rc.err);
	for (unsigned i = 0; i < P4_MAX_REQUESTS; i++)
		rc.tagger[i] = false;
	if (rec_pebs_roles(sh) || rec_split_lps(sh) || rec_add_taggers(sh) ||
	    rec_check_exec_tags(sh) || rec_period(sh, &period))
		return 1;
	for (unsigned i = 0; i < rc.reqs.n; i++) {
		struct p4_request *q = &rc.reqs.req[i];
		bool lp_names = rc.cfg.job[1].args != NULL && q->lp != P4_LP_BOTH;

		if (q->spec.event == P4_EV_UOP_TYPE || rec_exec_tagger(q))
			rc.tagger[i] = true;	/* tags µops for a downstream event: no samples */
		rc.cfg.sampler[i] = !rc.reqs.starter[i] && !rc.tagger[i];
		rc.cfg.polled[i] = rc.cfg.sampler[i] && rc.reqs.pmi_lost[i];
		if (rc.cfg.sampler[i])
			q->spec.period = period;
		if (rc.cfg.polled[i])
			q->pmi = P4_PMI_NONE;
		/* with work on LP1, names say whose events: perf's "event.qualifier" style */
		ksnprintf(rc.cfg.name[i], RECORD_NAME_MAX, "%s%s%s", p4_events[q->spec.event].name,
			  !lp_names ? "" : q->lp == P4_LP1 ? ".t1" : ".t0",
			  q->role == P4_ROLE_PEBS ? ":pebs" : "");
	}
	return 0;
}

/* A workload and its arguments: argv[wl], argv[wl + 1 .. end). */
static int rec_workload(struct shell *sh, int argc, char **argv, int wl, int end,
			struct workload_args *out)
{
	const struct workload *w;

	(void)argc;
	if (!(w = workload_find(argv[wl])))
		return shell_error(sh, "record: unknown workload '%s' (try 'workloads')", argv[wl]);
	if (workload_parse_args(w, end - wl - 1, argv + wl + 1, out, rc.err, sizeof(rc.err)))
		return shell_error(sh, "record: %s", rc.err);
	return 0;
}

/* Which LP runs what (stat's --cpu/--pair rules); a sibling is needed for LP1. */
static int rec_jobs(struct shell *sh)
{
	struct stat_opts *so = &rc.o.so;
	const char *why = "";
	bool lp1 = so->cpu != STAT_CPU_0 || so->pair > 0;

	if (lp1 && workload_sibling(&why) < 0) {
		if (so->cpu != STAT_CPU_BOTH)
			return shell_error(sh, "record: %s: %s", so->pair > 0 ? "--pair" : "--cpu 1", why);
		shell_printf(sh, "note: %s; recording LP0 only\n", why);
		so->cpu = STAT_CPU_0;
		lp1 = false;
	}
	if (lp1 && !perf_info()->ht)
		return shell_error(sh, "record: the PMU backend is not shared by two LPs (no "
				   "Hyper-Threading): try 'pmu backend model 0F_04 ht'");
	rc.cfg.job[0] = (struct record_job){ .args = so->cpu != STAT_CPU_1 ? &rc.args : NULL,
					     .ring = so->ring };
	rc.cfg.job[1] = (struct record_job){
		.args = so->pair > 0 ? &rc.args_b : so->cpu != STAT_CPU_0 ? &rc.args : NULL,
		.ring = so->pair > 0 ? so->ring_pair : so->ring,
	};
	rc.cfg.stagger = so->stagger;
	return 0;
}

static int rec_prepare(struct shell *sh, int argc, char **argv)
{
	const struct perf_info *pi = perf_info();
	/* as stat: with HT each LP's events on its own half (PMU reference 3.2) */
	struct p4_alloc_ctx ctx = { .caps = &pi->caps, .ht = pi->ht,
				    .split = pi->ht ? P4_SPLIT_LINUX : P4_SPLIT_GLOBAL };
	static struct p4_alloc_error aerr;

	if (rec_parse(sh, argc, argv))
		return 1;
	if (pi->backend == PERF_BACKEND_NONE)
		return shell_error(sh, "record: no PMU backend: %s", pi->reason);
	if (rec_workload(sh, argc, argv, rc.o.workload, rc.o.workload_end, &rc.args) ||
	    (rc.o.pair > 0 && rec_workload(sh, argc, argv, rc.o.pair, argc, &rc.args_b)))
		return 1;
	stat_opts_rings(&rc.o.so, rc.args.w, rc.o.pair > 0 ? rc.args_b.w : NULL);
	rc.cfg = (struct record_cfg){ 0 };
	if (rec_jobs(sh) || rec_requests(sh))
		return 1;
	if (p4_alloc_plan(&ctx, rc.reqs.req, rc.reqs.n, &rc.cfg.plan, &aerr))
		return shell_error(sh, "record: %s", aerr.msg);
	if (stat_apply_tbits(&rc.reqs, &rc.cfg.plan, rc.err, sizeof(rc.err)))
		return shell_error(sh, "record: %s", rc.err);
	rc.cfg.pmi = rc.o.pmi;
	rc.cfg.callchain = rc.o.callchain;
	rc.cfg.wrap = rc.o.wrap;
	rc.cfg.buffer = (size_t)rc.o.buffer;
	rc.cfg.throttle_pct = (unsigned)rc.o.throttle;
	rc.cfg.jitter_pct = (unsigned)rc.o.jitter;
	rc.cfg.seed = rc.o.seed_set ? rc.o.seed : REC_DEFAULT_SEED;
	if (rc.o.seed_set && !rc.o.jitter)
		return shell_error(sh, "record: --seed: only with --jitter PCT (it seeds the jitter)");
	rc.cfg.inject_unflagged = (unsigned)rc.o.inject_unflagged;
	rc.cfg.inject_n15 = (unsigned)rc.o.inject_n15;
	rc.cfg.inject_stuck_ovf = rc.o.inject_stuck_ovf;
	rc.cfg.pebs_records = (unsigned)rc.o.pebs_records;
	rc.cfg.pebs_drain_end = rc.o.pebs_drain_end;
	if ((rc.o.pebs_records || rc.o.pebs_drain_end) && !rc.cfg.plan.pebs)
		return shell_error(sh, "record: --pebs-buffer and --pebs-drain-at-end need a PEBS "
				   "event (EVENT:pebs or --pebs)");
	if ((rc.cfg.inject_unflagged || rc.cfg.inject_n15 || rc.cfg.inject_stuck_ovf) &&
	    !perf_can_inject())
		return shell_error(sh, "record: --inject: only the model can be made to misbehave "
				   "('pmu backend model SIG')");
	if (rc.o.buffer_set && rc.o.buffer < sample_record_bytes(SAMPLE_MAX_CHAIN))
		return shell_error(sh, "record: --buffer: at least %zu bytes (one sample with a full "
				   "call chain)", sample_record_bytes(SAMPLE_MAX_CHAIN));
	return 0;
}

/* ---- record's summary ---------------------------------------------------------- */

static void rec_print_events(struct shell *sh)
{
	const struct p4_plan *plan = &rc.cfg.plan;
	char spec[128];

	for (unsigned i = 0; i < plan->n; i++) {
		const struct p4_slot *slot = &plan->slot[i];

		p4_spec_format(&plan->req[i].spec, spec, sizeof(spec));
		shell_printf(sh, "  #%u %s counter %u (%s)", i, spec, slot->counter,
			     p4_counters[slot->counter].name);
		if (rc.tagger[i] && plan->req[i].spec.event == P4_EV_UOP_TYPE)
			shell_puts(sh, ": front-end tagging (tags loads and stores, never counts)");
		else if (rc.tagger[i])
			shell_printf(sh, ": execution tagging (tag value %XH), no samples",
				     plan->req[i].spec.tag_value);
		else if (!rc.cfg.sampler[i])
			shell_printf(sh, ": cascade starter after %llu events, no samples",
				     (unsigned long long)plan->req[i].spec.period);
		else
			shell_printf(sh, ": period %llu%s%s", (unsigned long long)rc.res.period[i],
				     rc.res.period[i] != plan->req[i].spec.period ? " (raised by throttling)" : "",
				     rc.cfg.polled[i] ? ", no PMI: OVF polled" : "");
		if (rc.cfg.sampler[i] && rc.cfg.jitter_pct)
			shell_printf(sh, ", jitter +-%u%% (seed %llu)", rc.cfg.jitter_pct,
				     (unsigned long long)rc.cfg.seed);
		shell_puts(sh, "\n");
	}
}

static void rec_print_erratum(struct shell *sh)
{
	char sig[8];

	p4_sig_format(&perf_info()->sig, sig, sizeof(sig));
	shell_printf(sh, "erratum: %s stepping %u raises no PMI from a cascaded counter (SDM 18.15.5.7);"
		     " its OVF flag is polled by the LAPIC timer at %u Hz instead\n", sig,
		     perf_info()->sig.stepping, RECORD_POLL_HZ);
}

static void rec_print_cost(struct shell *sh, const struct record_result *r)
{
	uint64_t hz = timer_tsc_hz();

	shell_printf(sh, "duration: %llu TSC cycles", (unsigned long long)r->tsc_cycles);
	if (hz)
		shell_printf(sh, " (%llu us)", (unsigned long long)(r->tsc_cycles / (hz / 1000000 ? hz / 1000000 : 1)));
	if (r->steps)
		shell_printf(sh, ", %llu stepped instructions", (unsigned long long)r->steps);
	shell_printf(sh, "\nstore: %zu bytes per LP (%s), ", r->buffer,
		     rc.cfg.wrap ? "wrap" : "stop when full");
	if (r->store_n)		/* prof/record.c RECORD_STORE_TIMED */
		shell_printf(sh, "append %llu TSC cycles per sample (mean of 1 in 16)\n",
			     (unsigned long long)(r->store_tsc / r->store_n));
	else	/* a PEBS drain's appends are not timed */
		shell_printf(sh, r->totals.stored ? "appends not timed (PEBS records)\n"
						  : "no sample appended\n");
}

/* Where the workloads ran, as stat says it. */
static void rec_print_where(struct shell *sh)
{
	const struct record_job *j = rc.cfg.job;

	if (rc.o.pair > 0)
		shell_printf(sh, "A on LP0 (ring %d), %s on LP1 (ring %d)", j[0].ring,
			     rc.cfg.stagger ? "then B" : "B", j[1].ring);
	else
		shell_printf(sh, "ring %d, %s", j[0].args ? j[0].ring : j[1].ring,
			     !j[1].args ? "LP0" : !j[0].args ? "LP1" : "LP0 and LP1");
}

static void rec_print_lps(struct shell *sh, const struct record_result *r)
{
	static const char *const status[] = { "ok", "faulted", "interrupted", "refused" };

	if (!rc.cfg.job[1].args)
		return;
	shell_puts(sh, "samples by LP:");
	for (unsigned k = 0; k < 2; k++)
		if (r->job_status[k] >= 0)
			shell_printf(sh, " LP%u (T%u) %llu (%s)", k, r->job_lp[k],
				     (unsigned long long)r->lp_stored[k],
				     r->job_status[k] <= WORKLOAD_REFUSED ? status[r->job_status[k]] : "?");
	shell_printf(sh, "; PMIs handled on LP0 %llu, on LP1 %llu\n",
		     (unsigned long long)r->pmi.lp_interrupts[0],
		     (unsigned long long)r->pmi.lp_interrupts[1]);
	/* Each LP throttles on its own handlers' time (record.c). */
	shell_puts(sh, "throttled by LP:");
	for (unsigned k = 0; k < 2; k++)
		if (r->job_status[k] >= 0)
			shell_printf(sh, " LP%u %llu (PMI time %llu TSC cycles)", k,
				     (unsigned long long)r->lp_throttled[k],
				     (unsigned long long)r->pmi.lp_tsc[r->job_lp[k] & 1]);
	shell_puts(sh, "\n");
}

/*
 * Each sampling event's count over the run beside the weights of its
 * samples: they agree up to the events after the last sample (fewer than
 * a period), which no sample stands for.
 */
static void rec_print_counted(struct shell *sh)
{
	const struct sample_run *run = record_last();
	uint64_t in[P4_MAX_REQUESTS] = { 0 };
	struct sample_run_iter ri;
	struct sample s;

	if (!run)
		return;
	sample_run_iter_init(&ri, run);
	while (sample_run_iter_next(&ri, &s))
		if (s.event < P4_MAX_REQUESTS)
			in[s.event] += sample_weight(run, &s);
	for (unsigned i = 0; i < rc.cfg.plan.n; i++)
		if (rc.cfg.sampler[i])
			shell_printf(sh, "events: #%u %s%llu counted, %llu in its samples\n", i,
				     rc.res.counted_low[i] ? "at least " : "",
				     (unsigned long long)rc.res.counted[i], (unsigned long long)in[i]);
}

/*
 * Skid: request q samples an event by interrupt, request p the same event
 * (mask, LP, period) by PEBS, on the same run. A PEBS sample's IP is the
 * instruction that caused the event (PMU reference 5.2), so the PEBS IPs are
 * where the event happens; an interrupt-based sample's skid is the
 * distance in bytes from its IP to the nearest PEBS IP (0: it landed on
 * such an instruction).
 */
static void rec_print_skid(struct shell *sh, const struct sample_run *run, unsigned q, unsigned p)
{
	static uint64_t at[64];
	unsigned nat = 0, nq = 0, np = 0, zero = 0;
	struct sample_run_iter ri;
	struct sample smp;
	uint64_t sum = 0, max = 0;

	sample_run_iter_init(&ri, run);
	while (sample_run_iter_next(&ri, &smp)) {
		unsigned k = 0;

		if (smp.event != p)
			continue;
		np++;
		while (k < nat && at[k] != smp.ip)
			k++;
		if (k == nat && nat < 64)
			at[nat++] = smp.ip;
	}
	sample_run_iter_init(&ri, run);
	while (nat && sample_run_iter_next(&ri, &smp)) {
		uint64_t best = UINT64_MAX;

		if (smp.event != q)
			continue;
		for (unsigned k = 0; k < nat; k++) {
			uint64_t d = smp.ip > at[k] ? smp.ip - at[k] : at[k] - smp.ip;

			best = d < best ? d : best;
		}
		nq++;
		zero += best == 0;
		sum += best;
		max = best > max ? best : max;
	}
	shell_printf(sh, "skid: #%u (interrupt) %u samples, %u at a PEBS IP, mean %llu bytes, max "
		     "%llu bytes from the nearest; #%u (PEBS) %u samples at %u distinct IPs\n", q, nq,
		     zero, (unsigned long long)(nq ? sum / nq : 0), (unsigned long long)max, p, np,
		     nat);
}

static void rec_print_pebs(struct shell *sh, const struct record_result *r)
{
	const struct p4_plan *plan = &rc.cfg.plan;
	const struct sample_run *run = record_last();
	char detail[160];
	unsigned slots = rc.cfg.pebs_records ? rc.cfg.pebs_records : PEBS_RECORDS_DEFAULT;

	if (!plan->pebs)
		return;
	shell_printf(sh, "PEBS: %llu records drained in %llu drains (%u slots per LP, threshold "
		     "%u records below the maximum), buffer found full %llu time(s)\n",
		     (unsigned long long)r->pebs_records, (unsigned long long)r->pebs_drains,
		     slots, p4_ds_threshold_below(slots), (unsigned long long)r->pebs_full);
	perf_describe(detail, sizeof(detail));
	if (detail[0])
		shell_printf(sh, "PEBS backend: %s\n", detail);
	for (unsigned q = 0; run && q < plan->n; q++)
		for (unsigned p = 0; p < plan->n; p++)
			if (rc.cfg.sampler[q] && plan->req[q].role != P4_ROLE_PEBS &&
			    plan->req[p].role == P4_ROLE_PEBS &&
			    plan->req[q].spec.event == plan->req[p].spec.event &&
			    plan->req[q].spec.mask == plan->req[p].spec.mask &&
			    plan->req[q].lp == plan->req[p].lp && r->period[q] == r->period[p])
				rec_print_skid(sh, run, q, p);
}


static void rec_summary(struct shell *sh, int argc, char **argv)
{
	const struct record_result *r = &rc.res;
	const struct sample_store *t = &r->totals;

	shell_puts(sh, "record:");
	for (int k = rc.o.workload; k < argc; k++)
		shell_printf(sh, " %s", argv[k]);
	shell_puts(sh, " (");
	rec_print_where(sh);
	shell_printf(sh, ", PMI by %s%s)\n", rc.cfg.pmi == PERF_PMI_NMI ? "NMI" : "vector F8H",
		     rc.cfg.callchain ? ", call chains" : "");
	rec_print_events(sh);
	if (r->polling)
		rec_print_erratum(sh);
	shell_printf(sh, "samples: %llu stored, %llu held, %llu lost (%llu dropped: buffer full, "
		     "%llu nested, %llu unattributed), %llu overwritten\n",
		     (unsigned long long)t->stored, (unsigned long long)t->held,
		     (unsigned long long)(t->dropped + t->nested + r->unattributed),
		     (unsigned long long)t->dropped, (unsigned long long)t->nested,
		     (unsigned long long)r->unattributed, (unsigned long long)t->overwritten);
	rec_print_counted(sh);
	rec_print_lps(sh, r);
	rec_print_pebs(sh, r);
	shell_printf(sh, "throttled: %llu\n", (unsigned long long)r->throttled);
	shell_printf(sh, "workarounds fired: %llu unflagged overflow(s), %llu read-back mismatch(es)\n",
		     (unsigned long long)r->pmi.unflagged, (unsigned long long)r->pmi.mismatches);
	shell_printf(sh, "PMIs: %llu (%llu taken in the step handler with the workload's frame), "
		     "overflows %llu, polls %llu, late %llu\n",
		     (unsigned long long)r->pmi.interrupts, (unsigned long long)r->pmi.handoffs,
		     (unsigned long long)r->pmi.overflows, (unsigned long long)r->pmi.polls,
		     (unsigned long long)r->pmi.late);
	if (r->pmi.interrupts && !r->pmi.polls)
		shell_printf(sh, "PMI handler: %llu TSC cycles per PMI from entry to exit, %llu of them "
			     "in the %s backend's own work\n",
			     (unsigned long long)(r->pmi.tsc_total / r->pmi.interrupts),
			     (unsigned long long)(r->pmi.backend_tsc / r->pmi.interrupts),
			     perf_backend_name(perf_info()->backend));
	rec_print_cost(sh, r);
}

static int rec_floor(struct shell *sh, int argc, char **argv)
{
	uint64_t n = 100, regs, store;
	const char *why;

	if (argc > 3 || (argc == 3 && !parse_u64(argv[2], UINT64_MAX, &n, &why)))
		return shell_error(sh, "usage: record --floor [N]");
	if (record_floor((unsigned)(n > 1000 ? 1000 : n), &regs, &store, rc.err, sizeof(rc.err)))
		return shell_error(sh, "record --floor: %s", rc.err);
	shell_printf(sh, "floor: registers %llu TSC cycles (4 RDMSR, 4 WRMSR, LVT PC read+write, EOI), "
		     "store %llu TSC cycles (one append to an empty store), medians of %llu\n",
		     (unsigned long long)regs, (unsigned long long)store, (unsigned long long)n);
	return 0;
}

static int cmd_record(struct shell *sh, int argc, char **argv)
{
	int r;

	if (argc >= 2 && parse_streq(argv[1], "--floor"))
		return rec_floor(sh, argc, argv);
	if (rec_prepare(sh, argc, argv))
		return 1;
	progress_set_quiet(rc.o.quiet);
	workload_set_watchdog(!rc.o.no_watchdog);
	r = record_run(&rc.cfg, &rc.res, rc.err, sizeof(rc.err));
	workload_set_watchdog(true);
	progress_set_quiet(false);
	if (r)
		return shell_error(sh, "record: %s", rc.err);
	if (rc.res.status == WORKLOAD_REFUSED)
		return shell_error(sh, "record: %s", rc.res.error[0] ? rc.res.error : "workload refused");
	rec_summary(sh, argc, argv);
	if (rc.res.status == WORKLOAD_FAULTED)
		return shell_error(sh, "record: the workload faulted (vector %d); samples kept",
				   rc.res.fault_vector);
	if (rc.res.status == WORKLOAD_INTERRUPTED)
		return shell_error(sh, "record: %s; samples so far kept",
				   rc.res.error[0] ? rc.res.error : "interrupted");
	return 0;
}

/* ---- readers -------------------------------------------------------------------- */

static const char *rec_lookup(void *ctx, uint64_t addr, uint64_t *offset)
{
	(void)ctx;
	return ksym_lookup(addr, offset);
}

static void rec_line(void *ctx, const char *text)
{
	shell_printf(ctx, "%s\n", text);
}

static bool rec_stop(void *ctx)
{
	(void)ctx;
	return plat_interrupted();
}

static const struct report_syms rec_syms = { .lookup = rec_lookup };

static const struct sample_run *rec_run(struct shell *sh)
{
	const struct sample_run *run = record_last();

	if (!run)
		shell_error(sh, "%s: no recording yet: run 'record WORKLOAD' first", "samples");
	return run;
}

/* "--cpu N" at argv[*k]: the LP (SMT ID, T0/T1) whose samples to keep. */
static bool rec_cpu_opt(int argc, char **argv, int *k, int *lp)
{
	if (!parse_streq(argv[*k], "--cpu") || *k + 1 >= argc ||
	    !(parse_streq(argv[*k + 1], "0") || parse_streq(argv[*k + 1], "1")))
		return false;
	*lp = argv[++(*k)][0] - '0';
	return true;
}

/* The run with only LP lp's store (lp < 0: all of them). */
static const struct sample_run *rec_lp_run(const struct sample_run *run, int lp)
{
	static const struct sample_store *only[PERCPU_MAX];
	static struct sample_run sub;

	if (lp < 0)
		return run;
	sub = *run;
	sub.nstores = run->nstores < PERCPU_MAX ? run->nstores : PERCPU_MAX;
	for (uint32_t i = 0; i < sub.nstores; i++)
		only[i] = run->stores[i] && run->stores[i]->lp == (uint8_t)lp ? run->stores[i] : NULL;
	sub.stores = only;
	return &sub;
}

/* "# samples by LP: LP0 N, LP1 M" when more than one LP has a store. */
static void rec_lp_header(struct shell *sh, const struct sample_run *run)
{
	unsigned n = 0;

	for (uint32_t i = 0; i < run->nstores; i++)
		n += run->stores[i] != NULL;
	if (n < 2)
		return;
	shell_puts(sh, "# samples by LP:");
	for (uint32_t i = 0, first = 1; i < run->nstores; i++)
		if (run->stores[i]) {
			shell_printf(sh, "%s LP%u %llu held", first ? "" : ",", run->stores[i]->lp,
				     (unsigned long long)run->stores[i]->held);
			first = 0;
		}
	shell_puts(sh, "\n");
}

static int cmd_report(struct shell *sh, int argc, char **argv)
{
	struct report_opts o = { .sort = REPORT_SORT_SYM, .limit = 0, .event = REPORT_ALL_EVENTS };
	struct report_out out = { .ctx = sh, .line = rec_line, .stop = rec_stop };
	const struct sample_run *run;
	uint64_t v;
	const char *why;
	int lp = -1;

	for (int k = 1; k < argc; k++) {
		if (rec_cpu_opt(argc, argv, &k, &lp))
			continue;
		if (parse_streq(argv[k], "--sort") && k + 1 < argc &&
		    (parse_streq(argv[k + 1], "sym") || parse_streq(argv[k + 1], "ip"))) {
			o.sort = parse_streq(argv[++k], "ip") ? REPORT_SORT_IP : REPORT_SORT_SYM;
		} else if (parse_streq(argv[k], "--limit") && k + 1 < argc &&
			   parse_u64(argv[k + 1], UINT32_MAX, &v, &why)) {
			o.limit = (uint32_t)v;
			k++;
		} else {
			return shell_error(sh, "usage: report [--sort sym|ip] [--limit N] [--cpu 0|1]");
		}
	}
	if (!(run = rec_run(sh)))
		return 1;
	if (lp < 0)
		rec_lp_header(sh, run);
	report_top(rec_lp_run(run, lp), &o, &rec_syms, rc.scratch, REC_REPORT_ROWS, &out);
	return 0;
}

/* Instruction bytes for annotate: as many as the decoder's length (arch/x86/insn.c). */
static unsigned rec_read_bytes(void *ctx, uint64_t addr, uint8_t *buf, unsigned max)
{
	const uint8_t *p = (const uint8_t *)(uintptr_t)addr;
	uint64_t off;
	unsigned n;

	(void)ctx;
	if (!ksym_lookup(addr, &off))
		return 0;
	n = (unsigned)insn_length(p, max, MODE_IS_64);
	for (unsigned i = 0; i < n && i < max; i++)
		buf[i] = p[i];
	return n < max ? n : max;
}

static void rec_symbol_match(void *ctx, uint64_t value, uint64_t size, const char *name)
{
	const char **want = ctx;

	(void)value, (void)size;
	if (*want && parse_streq(*want, name))
		*want = NULL;
}

/* True when name is a function of the kernel (arch/x86/ksyms.h) or of a loaded program's ELF. */
static bool rec_symbol_known(const char *name)
{
	const char *want = name;

	for (uint32_t i = 0; i < ksym_count; i++)
		if (parse_streq(ksym_get(i).name, name))
			return true;
	for (unsigned i = 0; i < PROGRAM_MAX && want; i++) {
		const struct program *p = program_slot(i);

		if (p->used && !p->layout.flat)
			program_elf_symbols(p->file, p->file_len, rec_symbol_match, &want);
	}
	return want == NULL;
}

static int cmd_annotate(struct shell *sh, int argc, char **argv)
{
	struct report_out out = { .ctx = sh, .line = rec_line, .stop = rec_stop };
	struct report_bytes bytes = { .read = rec_read_bytes };
	const struct sample_run *run;
	int k = 1, lp = -1;

	if (argc == 4 && rec_cpu_opt(argc, argv, &k, &lp))
		k++;		/* SYMBOL follows --cpu N */
	else if (argc != 2)
		return shell_error(sh, "usage: annotate [--cpu 0|1] SYMBOL");
	if (!(run = rec_run(sh)))
		return 1;
	if (!rec_symbol_known(argv[k]))
		return shell_error(sh, "annotate: unknown symbol '%s' ('report' lists sampled ones)",
				   argv[k]);
	report_annotate(rec_lp_run(run, lp), argv[k], REPORT_ALL_EVENTS, &rec_syms, &bytes,
			rc.scratch, REC_REPORT_ROWS, &out);
	return 0;
}

static int cmd_script(struct shell *sh, int argc, char **argv)
{
	struct report_out out = { .ctx = sh, .line = rec_line, .stop = rec_stop };
	const struct sample_run *run;
	int k = 1, lp = -1;

	if (argc > 3 || (argc > 1 && !rec_cpu_opt(argc, argv, &k, &lp)))
		return shell_error(sh, "usage: script [--cpu 0|1]");
	if (!(run = rec_run(sh)))
		return 1;
	report_script(rec_lp_run(run, lp), &rec_syms, &out);
	return 0;
}

static void rec_dump_info(struct dump_info *d, const struct sample_run *run)
{
	struct cpu_info ci;
	const struct perf_info *pi = perf_info();

	plat_cpu_info(&ci);
	*d = (struct dump_info){
		.family = pi->sig.family, .model = pi->sig.model, .stepping = pi->sig.stepping,
		.signature = ci.signature, .image_base = ksym_image_base(),
		.text_start = ksym_text_start, .text_end = ksym_text_end,
		.symtab_crc = dump_symtab_crc_get(ksym_get, ksym_count), .symtab_count = ksym_count,
		.run_id = run->tsc_start, .ip_bits = MODE_BITS,
		.build_id = ci.build_id, .build_id_len = ci.build_id_len,
	};
}

/*
 * One "NBP:" line per loaded program, so the host names samples in it from
 * the program's ELF: name, the runtime address of its link address 0, its
 * image span and the CRC-32 of its file (which ELF it was), CRC-framed
 * (program_nbp_line).
 */
static void rec_dump_programs(struct shell *sh)
{
	char line[PROGRAM_NBP_LINE_MAX];

	for (unsigned i = 0; i < PROGRAM_MAX; i++) {
		const struct program *p = program_slot(i);

		if (p->used && program_nbp_line(p, line, sizeof(line)) > 0)
			shell_printf(sh, "%s\n", line);
	}
}

static int cmd_dump(struct shell *sh, int argc, char **argv)
{
	struct report_out out = { .ctx = sh, .line = rec_line };
	const struct sample_run *run;
	struct dump_info info;
	uint64_t from = 0;
	uint32_t frames = 0;
	const char *why;
	int r;

	if (argc == 3 && parse_streq(argv[1], "--from")) {
		if (!parse_u64(argv[2], UINT32_MAX, &from, &why))
			return shell_error(sh, "dump: --from %s: not a frame number", argv[2]);
	} else if (argc != 1) {
		return shell_error(sh, "usage: dump [--from N]");
	}
	if (!(run = rec_run(sh)))
		return 1;
	rec_dump_info(&info, run);
	r = dump_begin(&rc.enc, run, &info, (uint32_t)from);
	if (r == -2 && dump_begin(&rc.enc, run, &info, 0) == 0)
		return shell_error(sh, "dump: --from %llu: the dump has %u frames (0 .. %u)",
				   (unsigned long long)from, dump_total_frames(&rc.enc),
				   dump_total_frames(&rc.enc) - 1);
	if (r)
		return shell_error(sh, "dump: the header does not fit a frame blob");
	shell_printf(sh, "# dump: %u frames, frames %llu.. follow\n", dump_total_frames(&rc.enc),
		     (unsigned long long)from);
	rec_dump_programs(sh);
	while (dump_next(&rc.enc, &out)) {
		if (++frames % REC_DUMP_PROGRESS == 0)
			shell_printf(sh, "# dump: frame %u of %u\n", rc.enc.seq, dump_total_frames(&rc.enc));
		if (plat_interrupted())
			return shell_error(sh, "dump: stopped after frame %u; 'dump --from %u' resumes",
					   rc.enc.seq - 1, rc.enc.seq);
	}
	shell_printf(sh, "# dump: done, %u frames\n", dump_total_frames(&rc.enc));
	return 0;
}

static const struct shell_cmd record_cmds[] = {
	{ "record", "record [-e SPEC [--after N:SPEC]]... [-c PERIOD | -F FREQ] [--nmi|--vector] [-g] "
		    "[--ring 0|3] [--wrap] [--buffer SIZE] [--throttle PCT] [--jitter PCT [--seed N]] "
		    "[--quiet] [--no-watchdog] [--pebs] [--pebs-buffer N] [--pebs-drain-at-end] "
		    "[--cpu 0|1|both] [--] "
		    "WORKLOAD [ARGS] | record ... [--stagger] --pair A [ARGS] -- [--ring 0|3] B [ARGS]",
	  "sample a workload (perf record style)",
	  "Runs WORKLOAD once and takes a sample (TSC, LP, event, RIP, CPL, RFLAGS,\n"
	  "RSP, call chain with -g) every PERIOD events of each -e event. Then\n"
	  "'report', 'annotate', 'script' and 'dump' show the samples.\n"
	  "  -e SPEC        event (see 'events') or perf's generic name (cycles,\n"
	  "                 instructions, ...: 'events' lists them); default\n"
	  "                 global_power_events:RUNNING (clockticks). --after N:SPEC / :after=N cascade as in 'stat';\n"
	  "                 the starter takes no samples.\n"
	  "  -c PERIOD      events per sample (1 .. 2^39-1); default: clockticks at -F 4000,\n"
	  "                 other events 100000; a sample weighs PERIOD + 1 events\n"
	  "  -F FREQ        samples per second of clockticks: PERIOD = TSC Hz / FREQ\n"
	  "  --nmi          PMI as NMI (default): samples land in interrupt-masked code too\n"
	  "  --vector       PMI on vector F8H; the workload then runs with interrupts on\n"
	  "                 (LP0 only: LP1 runs with IF = 0 and would take none)\n"
	  "  -g             frame-pointer call chains (up to 32 return addresses)\n"
	  "  --ring 0|3     run the workload in ring 0 (default) or ring 3\n"
	  "  --wrap         when the store is full, overwrite the oldest samples\n"
	  "                 (default: stop and count every further sample as dropped)\n"
	  "  --buffer SIZE  use only SIZE bytes (K, M suffixes) of the LP's store;\n"
	  "                 a sample without call chain takes 40 bytes\n"
	  "  --throttle PCT raise the periods (x2) when PMI handling takes more than PCT\n"
	  "                 percent of the time (default 25); PEBS periods stay\n"
	  "  --quiet        no progress line (see 'help stat')\n"
	  "  --no-watchdog  no Ctrl-C tick in an unstepped run (see 'help stat')\n"
	  "  --jitter PCT   periods drawn from PERIOD +- PCT% (1..90): use it on loops\n"
	  "  --seed N       the jitter's seed (default 1)\n"
	  "  --inject unflagged=N | n15=N   (model) the next N overflows leave CCCR.OVF\n"
	  "                 clear / the next N reloads lose their writes (erratum N15):\n"
	  "                 the handler's workarounds must keep the samples exact\n"
	  "  --inject stuck-ovf   (model) CCCR.OVF cannot be cleared once set, so the\n"
	  "                 PMIs never end: the storm guard must stop the count\n"
	  "  --floor [N]    time the overflow path's unavoidable register accesses and\n"
	  "                 one store append to an empty store (TSC cycles, medians of N)\n"
	  "PEBS (front_end_event, execution_event, replay_event; PMU reference 5):\n"
	  "  EVENT:pebs / --pebs   sample by PEBS on counter 16 (LP0) / 17 (LP1): each\n"
	  "                 sample is a PEBS record's linear IP and registers, the\n"
	  "                 instruction that caused the event (script marks the event\n"
	  "                 ':pebs'); front_end_event gets uop_type TAGLOADS:TAGSTORES\n"
	  "                 unless a uop_type event is given; execution_event needs an\n"
	  "                 upstream FIRM event with the tag (e.g. x87_FP_uop:TAG0),\n"
	  "                 which tags and is not sampled. A record weighs PERIOD\n"
	  "                 events (written as the counter overflows), an interrupt\n"
	  "                 sample PERIOD + 1 (its PMI comes on the next event): an\n"
	  "                 interrupt-sampled twin of the same event takes fewer\n"
	  "                 samples, and record reports its skid.\n"
	  "  --pebs-buffer N  PEBS record slots per LP (2 .. 128, default 64); the PMI\n"
	  "                 comes a tenth of the buffer (at least 2 records) below the\n"
	  "                 maximum and drains the buffer with PEBS off meanwhile\n"
	  "  --pebs-drain-at-end  PMIs leave the buffer alone: a full buffer then shows\n"
	  "                 its loss (records the processor could not write)\n"
	  "Hyper-Threading (as in 'stat'):\n"
	  "  --cpu 0|1|both run the workload on LP0, its sibling LP1, or both\n"
	  "  --pair A ARGS -- [--ring R] B ARGS   A on LP0 and B on LP1 together (last\n"
	  "                 option); --stagger starts B when A has ended (exact order)\n"
	  "Each LP takes the samples of its own events into its own store: a spec\n"
	  "without :t0/:t1 becomes one counter per LP running work, each interrupting\n"
	  "its own LP (OVF_PMI_T0/T1); report/script show the LP of every sample.\n"
	  "SDM Example 18-2, LP1's instructions sampled after LP0's first 4096:\n"
	  "  record -e instr_retired:t1:u -c 49 --after 4096:instr_retired:t0:u\n"
	  "         --ring 3 --stagger --pair loop 1400 -- loop 100\n"
	  "(counter 16 on CRU_ESCR0 starts counter 17 on CRU_ESCR1, CASCNT4INTO5).\n"
	  "On parts with the cascade-PMI erratum (0F_02; 0F_00/0F_01 stepping > 9) a\n"
	  "cascaded sampling counter raises no PMI: its OVF flag is polled from the\n"
	  "LAPIC timer instead, and record says so. The summary shows samples, lost\n"
	  "samples, throttling, workarounds fired (unflagged overflows, counter\n"
	  "read-back mismatches), the duration, and the store's size with the mean\n"
	  "time of an append (the first and every 16th after it are timed; a PEBS\n"
	  "drain's appends are not).\n",
	  cmd_record },
	{ "report", "report [--sort sym|ip] [--limit N] [--cpu 0|1]", "top list of the last recording",
	  "Samples of the last 'record' by function (--sort sym, default) or by\n"
	  "instruction address (--sort ip), most first, with percentages; symbols\n"
	  "come from the kernel's embedded table. --limit N shows the first N rows.\n"
	  "When two LPs took samples, a '# samples by LP' line counts each LP's;\n"
	  "--cpu 0|1 reports only the samples LP0 (T0) or LP1 (T1) took.\n",
	  cmd_report },
	{ "annotate", "annotate [--cpu 0|1] SYMBOL", "per-instruction samples of one function",
	  "For each sampled address in SYMBOL: offset, address, samples, percent and\n"
	  "the instruction bytes - enough to join with 'objdump -d' on the host\n"
	  "(tools/nbprof-decode --annotate does). --cpu 0|1 counts only the samples\n"
	  "LP0 (T0) or LP1 (T1) took.\n",
	  cmd_annotate },
	{ "script", "script [--cpu 0|1]", "the last recording as perf-script text",
	  "One block per sample as 'perf script' prints it: 'comm 0/LP [LP] secs: period\n"
	  "event:' then one line per frame (address, symbol+offset, (nbprof)) and a\n"
	  "blank line; LP (tid and [cpu]) is the logical processor that took the\n"
	  "sample (T0 = 0, T1 = 1). --cpu 0|1 prints one LP's samples only.\n"
	  "FlameGraph's stackcollapse-perf.pl and speedscope read it.\n",
	  cmd_script },
	{ "dump", "dump [--from N]", "the last recording as framed base64 for the serial link",
	  "Prints the recording as numbered 'NBD:' lines, each a base64 frame with a\n"
	  "CRC-32: a header (CPU signature, events, periods, symbol table checksum),\n"
	  "delta-encoded samples and a trailer with the totals. Capture the serial\n"
	  "output and run 'tools/nbprof-decode capture.log --flamegraph out.svg'.\n"
	  "--from N resends the header and frames N onwards after a broken transfer.\n"
	  "Lines starting with '#' are progress; Ctrl-C stops between frames.\n",
	  cmd_dump },
};

int record_add_commands(struct shell *sh)
{
	return shell_add_commands(sh, record_cmds, sizeof(record_cmds) / sizeof(record_cmds[0]));
}
