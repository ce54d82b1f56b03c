/*
 * stat_opts.c - option parsing for `stat` and `explain` (see stat_opts.h).
 *
 * Every check happens before anything runs: a bad option, a missing value,
 * a ring other than 0 or 3, a repeat count outside 1..STAT_MAX_REPEATS or a
 * preset that is not negative in 40 bits each give one reason and leave
 * *o unspecified (the command then does nothing).
 */
#include "lib/parse.h"
#include "lib/printf.h"
#include "pmu/p4_regs.h"
#include "shell/stat_opts.h"

#define STAT_PRESET_MIN		BIT(39)	/* bit 39 set: "still negative" (PMU reference 6) */

static int stat_fail(char *err, size_t errlen, const char *fmt, const char *arg)
{
	ksnprintf(err, errlen, fmt, arg);
	return -1;
}

/* The value of option argv[*i] (the next word); NULL when missing. */
static const char *stat_value(int argc, char *const argv[], int *i)
{
	if (*i + 1 >= argc)
		return NULL;
	return argv[++*i];
}

/* "N:SPEC" of --after. */
static int stat_after(const char *v, struct stat_event_opt *ev, char *err, size_t errlen)
{
	char num[24];
	size_t k = 0;
	const char *why;

	while (v[k] && v[k] != ':' && k < sizeof(num) - 1) {
		num[k] = v[k];
		k++;
	}
	num[k] = '\0';
	if (v[k] != ':' || v[k + 1] == '\0')
		return stat_fail(err, errlen, "--after wants N:SPEC (e.g. 4096:instr_retired), not '%s'", v);
	if (!parse_u64(num, P4_COUNTER_MASK >> 1, &ev->after, &why) || ev->after == 0)
		return stat_fail(err, errlen, "--after: N must be 1 .. 2^39-1, not '%s'", num);
	ev->after_spec = v + k + 1;
	return 0;
}

static int stat_number(const char *opt, const char *v, uint64_t min, uint64_t max, uint64_t *out,
		       char *err, size_t errlen)
{
	const char *why;

	if (v == NULL)
		return stat_fail(err, errlen, "%s needs a value", opt);
	if (!parse_u64(v, max, out, &why) || *out < min) {
		ksnprintf(err, errlen, "%s: bad value '%s' (%llu .. %llu)", opt, v,
			  (unsigned long long)min, (unsigned long long)max);
		return -1;
	}
	return 0;
}

/* One option at argv[*i]; 1 when it was "--" and 2 "--pair" (options end), 0 otherwise, -1 on error. */
static int stat_option(int argc, char *const argv[], int *i, struct stat_opts *o, char *err,
		       size_t errlen)
{
	const char *a = argv[*i], *v;
	uint64_t x;

	if (parse_streq(a, "--"))
		return 1;
	if (parse_streq(a, "--quiet")) {
		o->quiet = true;
		return 0;
	}
	if (parse_streq(a, "--no-watchdog")) {
		o->no_watchdog = true;
		return 0;
	}
	if (parse_streq(a, "-e")) {
		if ((v = stat_value(argc, argv, i)) == NULL)
			return stat_fail(err, errlen, "%s needs an event spec", a);
		if (o->nev == STAT_MAX_EVENTS)
			return stat_fail(err, errlen, "at most 8 -e options%s", "");
		o->ev[o->nev++] = (struct stat_event_opt){ .spec = v };
		return 0;
	}
	if (parse_streq(a, "--after")) {
		if ((v = stat_value(argc, argv, i)) == NULL)
			return stat_fail(err, errlen, "%s needs N:SPEC", a);
		if (o->nev == 0 || o->ev[o->nev - 1].after)
			return stat_fail(err, errlen, "--after '%s' must follow the -e it delays", v);
		return stat_after(v, &o->ev[o->nev - 1], err, errlen);
	}
	if (parse_streq(a, "-r")) {
		if (stat_number(a, stat_value(argc, argv, i), 1, STAT_MAX_REPEATS, &x, err, errlen))
			return -1;
		o->repeats = (unsigned)x;
		return 0;
	}
	if (parse_streq(a, "--ring")) {
		if ((v = stat_value(argc, argv, i)) == NULL || !(parse_streq(v, "0") || parse_streq(v, "3")))
			return stat_fail(err, errlen, "--ring wants 0 or 3, not '%s'", v ? v : "");
		o->ring = v[0] - '0';
		o->ring_given = true;
		return 0;
	}
	if (parse_streq(a, "--cpu")) {
		v = stat_value(argc, argv, i);
		if (v && parse_streq(v, "0"))
			o->cpu = STAT_CPU_0;
		else if (v && parse_streq(v, "1"))
			o->cpu = STAT_CPU_1;
		else if (v && parse_streq(v, "both"))
			o->cpu = STAT_CPU_BOTH;
		else
			return stat_fail(err, errlen, "--cpu wants 0, 1 or both, not '%s'", v ? v : "");
		return 0;
	}
	if (parse_streq(a, "--stagger")) {
		o->stagger = true;
		return 0;
	}
	if (parse_streq(a, "--pair"))
		return 2;
	if (parse_streq(a, "--baseline")) {
		o->baseline = true;
		return 0;
	}
	if (parse_streq(a, "--preset")) {
		if (stat_number(a, stat_value(argc, argv, i), STAT_PRESET_MIN, P4_COUNTER_MASK, &o->preset,
				err, errlen))
			return -1;
		o->preset_set = true;
		return 0;
	}
	return stat_fail(err, errlen, "unknown option '%s' (see 'help stat')", a);
}

/* After --pair: A's words up to "--", then [--ring 0|3] and B's words. */
static int stat_pair(int argc, char *const argv[], int i, struct stat_opts *o, char *err,
		     size_t errlen)
{
	int k;

	if (o->cpu != STAT_CPU_0)
		return stat_fail(err, errlen, "--pair runs A on LP0 and B on LP1: drop --cpu%s", "");
	if (i >= argc || parse_streq(argv[i], "--"))
		return stat_fail(err, errlen, "--pair needs WORKLOAD_A [ARGS] -- WORKLOAD_B [ARGS]%s", "");
	for (k = i; k < argc && !parse_streq(argv[k], "--"); k++)
		;
	o->workload = i;
	o->workload_end = k;
	if (k >= argc)
		return stat_fail(err, errlen, "--pair: missing '-- WORKLOAD_B' after '%s'", argv[i]);
	k++;
	if (k < argc && parse_streq(argv[k], "--ring")) {
		const char *v = stat_value(argc, argv, &k);

		if (!v || !(parse_streq(v, "0") || parse_streq(v, "3")))
			return stat_fail(err, errlen, "--ring wants 0 or 3, not '%s'", v ? v : "");
		o->ring_pair = v[0] - '0';
		o->ring_pair_given = true;
		k++;
	}
	if (k >= argc)
		return stat_fail(err, errlen, "--pair: no WORKLOAD_B after '--'%s", "");
	for (int m = k; m < argc; m++)
		if (parse_streq(argv[m], "--"))
			return stat_fail(err, errlen, "--pair: only one '--' (between A and B)%s", "");
	o->pair = k;
	return 0;
}

int stat_opts_parse(int argc, char *const argv[], struct stat_opts *o, char *err, size_t errlen)
{
	int i;

	*o = (struct stat_opts){ .repeats = STAT_DEFAULT_REPEATS, .workload = -1 };
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		int r = stat_option(argc, argv, &i, o, err, errlen);

		if (r < 0)
			return -1;
		if (r == 2) {
			o->ring_pair = o->ring;
			return stat_pair(argc, argv, i + 1, o, err, errlen);
		}
		if (r > 0) {
			i++;
			break;
		}
	}
	if (i >= argc)
		return stat_fail(err, errlen, "no workload given (try 'workloads')%s", "");
	if (o->stagger)
		return stat_fail(err, errlen, "--stagger orders the two workloads of --pair%s", "");
	o->workload = i;
	o->workload_end = argc;
	return 0;
}

/* ---- :t0= / :t1= ---------------------------------------------------------- */

static int stat_lc(int c)
{
	return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c;
}

/* Token s[0..len) is "tX=P": 0 or 1 in *lp and the set in *priv; -1 bad P; 1 not such a token. */
static int stat_tbits_token(const char *s, size_t len, unsigned *lp, uint8_t *priv)
{
	if (len < 3 || stat_lc(s[0]) != 't' || (s[1] != '0' && s[1] != '1') || s[2] != '=')
		return 1;
	*lp = (unsigned)(s[1] - '0');
	*priv = 0;
	if (len == 4 && s[3] == '-')
		return 0;
	if (len == 3)
		return -1;
	for (size_t k = 3; k < len; k++) {
		int c = stat_lc(s[k]);

		if (c == 'u')
			*priv |= STAT_PRIV_USR;
		else if (c == 'k')
			*priv |= STAT_PRIV_OS;
		else
			return -1;
	}
	return 0;
}

int stat_split_tbits(const char *spec, char *out, size_t n, struct stat_tbits *tb, char *err,
		     size_t errlen)
{
	size_t o = 0, start = 0, end;

	*tb = (struct stat_tbits){ 0 };
	for (;;) {
		unsigned lp;
		uint8_t priv;
		int r;

		for (end = start; spec[end] && spec[end] != ':'; end++)
			;
		r = start == 0 ? 1 : stat_tbits_token(spec + start, end - start, &lp, &priv);
		if (r < 0)
			return stat_fail(err, errlen, "'%s': :t0=/:t1= take u, k, uk or -", spec);
		if (r == 0) {
			tb->given = true;
			if (lp)
				tb->t1 = priv;
			else
				tb->t0 = priv;
		} else {
			for (size_t k = start ? start - 1 : 0; k < end; k++) {
				if (o + 1 >= n)
					return stat_fail(err, errlen, "spec '%s' is too long", spec);
				out[o++] = spec[k];
			}
		}
		if (!spec[end])
			break;
		start = end + 1;
	}
	out[o] = '\0';
	return 0;
}

uint64_t stat_tbits_escr(const struct stat_tbits *tb)
{
	uint64_t v = 0;

	if (tb->t0 & STAT_PRIV_OS)
		v |= ESCR_T0_OS;
	if (tb->t0 & STAT_PRIV_USR)
		v |= ESCR_T0_USR;
	if (tb->t1 & STAT_PRIV_OS)
		v |= ESCR_T1_OS;
	if (tb->t1 & STAT_PRIV_USR)
		v |= ESCR_T1_USR;
	return v;
}

/* ---- explain MSR=VALUE ------------------------------------------------------ */

int stat_parse_writes(int argc, char *const argv[], struct p4_msr_write *w, unsigned max,
		      unsigned *n, char *err, size_t errlen)
{
	*n = 0;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *why;
		char left[24];
		size_t k = 0;

		while (a[k] && a[k] != '=' && k < sizeof(left) - 1) {
			left[k] = a[k];
			k++;
		}
		left[k] = '\0';
		if (a[k] != '=')
			return stat_fail(err, errlen, "'%s' is not MSR=VALUE (e.g. 36CH=04038800H)", a);
		if (*n == max)
			return stat_fail(err, errlen, "too many writes (at most 16)%s", "");
		if (!parse_u32(left, &w[*n].msr, &why) ||
		    !parse_u64(a + k + 1, UINT64_MAX, &w[*n].value, &why))
			return stat_fail(err, errlen, "'%s': bad number (0x1A0, 1A0H or decimal)", a);
		(*n)++;
	}
	if (*n == 0)
		return stat_fail(err, errlen, "usage: explain MSR=VALUE ... (e.g. 3B8H=04000603H)%s", "");
	return 0;
}

/* ---- requests ----------------------------------------------------------------- */

static int stat_parse_one(const char *text, const struct p4_caps *caps, struct p4_spec *spec,
			  struct stat_tbits *tb, char *err, size_t errlen)
{
	char buf[STAT_SPEC_MAX];
	struct p4_spec_error e;

	if (stat_split_tbits(text, buf, sizeof(buf), tb, err, errlen))
		return -1;
	if (p4_spec_parse(buf, caps, spec, &e)) {
		ksnprintf(err, errlen, "'%s': %s", text, e.msg);
		return -1;
	}
	if (spec->period || spec->pebs) {
		ksnprintf(err, errlen, "'%s': stat counts; :period= and :pebs are for sampling", text);
		return -1;
	}
	return 0;
}

/* Append one request; its index, or -1 when there is no room. */
static int stat_add(struct stat_reqs *r, const struct p4_spec *spec, const struct stat_tbits *tb,
		    char *err, size_t errlen)
{
	struct p4_request *q;

	if (r->n == P4_MAX_REQUESTS)
		return stat_fail(err, errlen, "more than 18 events: the PMU has 18 counters%s", "");
	q = &r->req[r->n];
	*q = (struct p4_request){ .spec = *spec, .pmi = P4_PMI_LP0, .role = P4_ROLE_COUNT };
	q->lp = spec->thread == P4_THREAD_T1 ? P4_LP1 : spec->thread == P4_THREAD_T0 ? P4_LP0 : r->lp;
	if (q->lp == P4_LP1)
		q->pmi = P4_PMI_LP1;	/* LP1's handler extends LP1's counter */
	r->tbits[r->n] = *tb;
	return (int)r->n++;
}

/* Request k counts only after request `from` has seen n events. */
static void stat_cascade(struct stat_reqs *r, const struct p4_caps *caps, unsigned from,
			 unsigned k, uint64_t n)
{
	r->req[from].spec.period = n;
	r->starter[from] = true;
	r->req[k].role = P4_ROLE_CASCADE;
	r->req[k].started_by = (uint8_t)from;
	r->req[k].spec.after = 0;
	if (caps->cascade_pmi_erratum) {
		r->req[k].pmi = P4_PMI_NONE;
		r->pmi_lost[k] = true;
	}
}

static int stat_add_event(const struct stat_event_opt *ev, const struct p4_caps *caps,
			  struct stat_reqs *r, char *err, size_t errlen)
{
	struct p4_spec spec, first;
	struct stat_tbits tb, tb_first;
	int from = -1, k;

	if (stat_parse_one(ev->spec, caps, &spec, &tb, err, errlen))
		return -1;
	if (ev->after && spec.after)
		return stat_fail(err, errlen, "'%s': give :after= or --after, not both", ev->spec);
	if (ev->after) {
		if (stat_parse_one(ev->after_spec, caps, &first, &tb_first, err, errlen))
			return -1;
		if (first.after)
			return stat_fail(err, errlen, "'%s': an --after event cannot itself wait", ev->after_spec);
		if ((from = stat_add(r, &first, &tb_first, err, errlen)) < 0)
			return -1;
	} else if (spec.after) {
		from = (int)r->n - 1;
		if (from < 0 || r->defaults)
			return stat_fail(err, errlen, "'%s': :after=N needs an -e before it to wait for",
					 ev->spec);
		if (r->starter[from] || r->req[from].role == P4_ROLE_CASCADE)
			return stat_fail(err, errlen, "'%s': the event before it already takes part in a "
					 "cascade", ev->spec);
	}
	if ((k = stat_add(r, &spec, &tb, err, errlen)) < 0)
		return -1;
	if (from >= 0)
		stat_cascade(r, caps, (unsigned)from, (unsigned)k, ev->after ? ev->after : spec.after);
	return 0;
}

int stat_build_requests(const struct stat_opts *o, const struct p4_caps *caps,
			struct stat_reqs *out, char *err, size_t errlen)
{
	static const struct stat_event_opt defaults[] = {
		{ .spec = "global_power_events:RUNNING" },
		{ .spec = "instr_retired" },
	};
	const struct stat_event_opt *ev = o->ev;
	unsigned nev = o->nev;

	*out = (struct stat_reqs){ .lp = o->pair > 0 || o->cpu == STAT_CPU_BOTH ? P4_LP_BOTH :
					 o->cpu == STAT_CPU_1 ? P4_LP1 : P4_LP0 };
	if (nev == 0) {
		ev = defaults;
		nev = sizeof(defaults) / sizeof(defaults[0]);
	}
	for (unsigned i = 0; i < nev; i++)
		if (stat_add_event(&ev[i], caps, out, err, errlen))
			return -1;
	out->defaults = o->nev == 0;
	return 0;
}

int stat_apply_tbits(const struct stat_reqs *r, struct p4_plan *plan, char *err, size_t errlen)
{
	for (unsigned i = 0; i < plan->n; i++) {
		uint64_t bits = stat_tbits_escr(&r->tbits[i]);

		if (!r->tbits[i].given)
			continue;
		if (!plan->ht && (bits & (ESCR_T1_OS | ESCR_T1_USR))) {
			ksnprintf(err, errlen, "#%u: T1 bits exist only with Hyper-Threading (ESCR bits 1:0 "
				  "are reserved; try 'pmu backend model 0F_04 ht')", i + 1);
			return -1;
		}
		plan->slot[i].escr_value = (plan->slot[i].escr_value & ~BITS(3, 0)) | bits;
	}
	for (unsigned i = 0; i < plan->n; i++)
		for (unsigned k = 0; k < i; k++)
			if (plan->slot[k].escr == plan->slot[i].escr &&
			    plan->slot[k].escr_value != plan->slot[i].escr_value) {
				ksnprintf(err, errlen, "#%u and #%u share %s but need different T0/T1 bits",
					  k + 1, i + 1, p4_escrs[plan->slot[i].escr].name);
				return -1;
			}
	return 0;
}

/* ---- signatures ------------------------------------------------------------------- */

static int stat_hex(int c)
{
	c = stat_lc(c);
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Two hex digits at s; -1 when they are not. */
static int stat_hex2(const char *s)
{
	int hi = stat_hex(s[0]), lo = hi < 0 ? -1 : stat_hex(s[1]);

	return lo < 0 ? -1 : hi * 16 + lo;
}

int stat_parse_sig(const char *s, struct p4_sig *out)
{
	int fam = stat_hex2(s), mod = fam < 0 || s[2] != '_' ? -1 : stat_hex2(s + 3), step = 1;
	const char *p = s + 5;

	if (mod < 0)
		return -1;
	if (stat_lc(*p) == 'h')
		p++;
	if (*p == ':') {
		step = stat_hex(p[1]);
		if (step < 0 || p[2] != '\0')
			return -1;
	} else if (*p != '\0') {
		return -1;
	}
	*out = (struct p4_sig){ (uint8_t)fam, (uint8_t)mod, (uint8_t)step };
	return 0;
}

void stat_opts_rings(struct stat_opts *o, const struct workload *a, const struct workload *b)
{
	if (!o->ring_given)
		o->ring = workload_default_ring(a);
	if (b && !o->ring_pair_given)
		o->ring_pair = o->ring_given ? o->ring : workload_default_ring(b);
}
