/*
 * selftest.c - the checks of `selftest`, run through the counting API: the
 * runner (plans, counting runs, results, saving and restoring the PMU).
 * The checks themselves are in selftest/counts.c, selftest/overflow.c and
 * selftest/pebs.c (PEBS, uncore); bounds are judged in selftest/judge.c.
 *
 * Every check builds its own plan (pmu/ encoder: an ESCR value from an
 * event spec, a CCCR value from a struct p4_cccr_cfg) on counters and ESCRs
 * it names itself, so that all 18 counters are tried, counter 1 included
 * (the allocator avoids it, p4_alloc.h), and runs a built-in workload inside
 * perf_count_start()/perf_count_stop(). Expectations:
 *
 * - Exact counts come from differences: `loop N` retires 3N + 6
 *   instructions with N conditional branches (workload/workload.h), so the
 *   count of loop N2 minus that of loop N1 is 3 (N2 - N1) instructions and
 *   N2 - N1 branches whatever the runner around the workload adds, on the
 *   hardware as in the model: the runner's own path inside the counting
 *   window is the same for both (st_measure parses N before the count
 *   starts), so its instructions and branches at CPL 0 cancel. Each
 *   difference is taken between the smallest counts of the repeats
 *   (something else running, e.g. SMM, only adds).
 * - Cycles have no exact count: clockticks and the compare/complement
 *   "always true" cycle count (PMU reference 2.4, 9.12) must lie between a third
 *   of the instructions (NetBurst retires at most three uops a cycle: IA-32
 *   Optimization Reference Manual 248966, chapter 1, "Up to three uops may
 *   be retired per cycle"; every instruction is at least one uop) and the
 *   TSC cycles of the whole count (the TSC ticks with the core clock, or at
 *   its highest rate on later models: SDM Vol. 3B, "Time-Stamp Counter").
 * - Overflow: OVF is set on the wrap and stays set (sticky) until software
 *   clears it (PMU reference 2.2); FORCE_OVF makes every increment an overflow
 *   (SDM CCCR text); with a preset of -P a sampling counter overflows every
 *   P events and the PMI comes with the next event (PMU reference 2.2), so
 *   3N + 6 instructions give floor((3N + 6 - 1) / P) interrupts; NetBurst
 *   masks LVT PC when it delivers a PMI (PMU reference 6, 9.2).
 * - Cascades: a counter with bit 30 (or CASCNTxINTOy, bit 11, Table 18-65)
 *   and Enable clear starts counting at the next event after its starter
 *   overflows (SDM 18.15.5.6, Example 18-1), so counting the same event it
 *   ends with the starter's count minus the starter's period (instr_retired:
 *   up to 2 fewer, the rest of the overflow's cycle, which the manual does
 *   not say the partner counts; selftest_judge_partner). Both count at
 *   ring 3 only (:u), the loop's events: the kernel starts and stops them
 *   with separate CCCR writes, and its code between those would count for
 *   one of the two alone (cycles: up to
 *   ST_READ_SLACK more, as it is read after its starter, and ST_START_LAG
 *   less; both allowances are this file's, not the manual's).
 * - The cascade-PMI erratum (SDM 18.15.5.7, PMU reference 2.3): no PMI from a
 *   counter in cascade mode on 0F_02 and on 0F_00/0F_01 above stepping 09H,
 *   as pmu/p4_caps.c predicts for the signature of the PMU backend.
 * - Thread qualification: an event on LP t at CPL c counts when ESCR bit
 *   Tt_OS (c = 0) or Tt_USR (c > 0) is set (Table 18-66).
 *
 * On the model backend the workloads are single-stepped (as in `stat`) and
 * RDPMC is the model's (perf_rdpmc); fault injection (perf_inject(): no
 * OVF, lost reloads; perf_inject_fault(): a dead counter, a wrong RDPMC, no
 * LVT PC auto-mask, the erratum flipped, an ESCR whose bits stick) makes
 * the matching checks fail. The PMU registers (counters, CCCRs, ESCRs,
 * PEBS_ENABLE, MATRIX_VERT, IA32_DS_AREA, the uncore set where the part
 * has it) are saved first and written back at the end, also after Ctrl-C;
 * the last check reads them back, IA32_MISC_ENABLE too, and names each one
 * that differs.
 */
#include "arch/x86/cpu.h"
#include "arch/x86/msr.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "pmu/p4_apply.h"
#include "pmu/p4_encode.h"
#include "pmu/p4_regs.h"
#include "pmu/p4_uncore.h"
#include "prof/perf.h"
#include "selftest/selftest.h"
#include "selftest/internal.h"

#define MSR_IA32_BIOS_SIGN_ID	0x8b	/* SDM Vol. 3A 9.11.7.1, Table 9-11: revision in 63:32 */

/* ---- results ------------------------------------------------------------- */

struct selftest_result *st_new(struct st *t, const char *group)
{
	static struct selftest_result spare;
	struct selftest_result *r = t->n < t->max ? &t->out[t->n] : &spare;

	*r = (struct selftest_result){ .group = group };
	return r;
}

void st_no_evidence(struct selftest_result *r, const char *why)
{
	if (r->status != SELFTEST_PASS)
		return;
	r->status = SELFTEST_FAIL;
	ksnprintf(r->expected + strlen(r->expected), sizeof(r->expected) - strlen(r->expected),
		  " beside a count");
	ksnprintf(r->note, sizeof(r->note), "no evidence: %s", why);
}

/* A FAIL after "no counter counted" names that cause first. */
static void st_name_cause(struct st *t, struct selftest_result *r)
{
	char note[sizeof(r->note)];

	if (!t->nothing_counted || r->status != SELFTEST_FAIL ||
	    strncmp(r->name, "no counter counted", 18) == 0)
		return;
	ksnprintf(note, sizeof(note), "no counter counted; %s", r->note);
	ksnprintf(r->note, sizeof(r->note), "%s", note);
}

/* Keep r (made by st_new) and hand it to the caller; one past the table is dropped. */
void st_emit(struct st *t, struct selftest_result *r)
{
	if (t->n >= t->max || r != &t->out[t->n])
		return;
	st_name_cause(t, r);
	t->n++;
	if (t->o->emit)
		t->o->emit(t->o->ctx, r);
}

void st_skip(struct st *t, const char *group, const char *name, const char *why)
{
	struct selftest_result *r = st_new(t, group);

	ksnprintf(r->name, sizeof(r->name), "%s", name);
	selftest_skip(r, why);
	st_emit(t, r);
}

/* ---- plans --------------------------------------------------------------- */

static bool st_escr_ok(const struct p4_caps *caps, enum p4_escr e, enum p4_counter c,
		       const struct p4_spec *spec)
{
	const struct p4_event_desc *d = &p4_events[spec->event];

	return (p4_escrs[e].counters & P4_CTR(c)) && (p4_escrs[e].models & caps->escr_models) &&
	       (d->escrs[0] == e || d->escrs[1] == e);
}

static void st_cccr_cfg(const struct st_ctr *q, const struct p4_spec *spec,
			const struct p4_cascade_link *link, struct p4_cccr_cfg *cfg)
{
	*cfg = (struct p4_cccr_cfg){ 0 };
	p4_cccr_from_spec(spec, cfg);
	cfg->escr_select = p4_escrs[q->escr].select;
	cfg->enable = link == NULL;
	cfg->pmi_t0 = q->pmi;
	cfg->cascade = link && !link->extended;
	cfg->ext_cascade = link && link->extended;
}

/*
 * The always-true count as a spec: Compare, Complement, threshold 15, OS and
 * USR. Its event is not used: st_add() writes the ESCR value itself (event
 * select ST_ALWAYS_SELECT), and a counting run reads only the slot's values
 * and the spec's period.
 */
static void st_always_spec(struct p4_spec *spec)
{
	*spec = (struct p4_spec){ .usr = true, .os = true, .compare = true, .complement = true,
				  .threshold = 15 };
}

/* Add one counter to t->plan; -1 with t->err when the combination is impossible. */
int st_add(struct st *t, const struct st_ctr *q)
{
	const struct perf_info *pi = perf_info();
	static struct p4_spec_error e;
	const struct p4_cascade_link *link = NULL;
	struct p4_plan *p = &t->plan;
	struct p4_cccr_cfg cfg;
	struct p4_spec spec;
	char text[320];
	const char *why;
	unsigned i = p->n, k;

	if (q->always)
		st_always_spec(&spec);
	else if (i >= P4_MAX_REQUESTS || p4_spec_parse(q->spec, &pi->caps, &spec, &e))
		return ksnprintf(t->err, t->errlen, "plan: '%s': %s", q->spec, e.msg), -1;
	if (i >= P4_MAX_REQUESTS || !(q->always ? (p4_escrs[q->escr].counters & P4_CTR(q->counter))
						: st_escr_ok(&pi->caps, q->escr, q->counter, &spec)))
		return ksnprintf(t->err, t->errlen, "plan: %s cannot count %s on counter %u",
				 p4_escrs[q->escr].name, q->spec, q->counter), -1;
	if (q->from != ST_NO_FROM &&
	    !(link = p4_cascade_find(p->slot[q->from].counter, q->counter)))
		return ksnprintf(t->err, t->errlen, "plan: no cascade from %u to %u",
				 p->slot[q->from].counter, q->counter), -1;
	spec.period = q->period;
	if (q->tbits)		/* the ESCR's own T-bits decide what it counts */
		spec.os = (q->tbits & (ESCR_T0_OS | ESCR_T1_OS)) != 0;
	/* the rule stat and record obey (pmu/p4_alloc.h), for this one and those its tail lengthens */
	k = q->pmi && spec.os;
	for (unsigned j = 0; j < i; j++)
		k += p->req[j].pmi != P4_PMI_NONE && p->req[j].spec.os;
	why = p4_pmi_refusal(&spec, q->pmi, k, text, sizeof(text));
	for (unsigned j = 0; !why && j < i; j++)
		why = p4_pmi_refusal(&p->req[j].spec, p->req[j].pmi != P4_PMI_NONE, k, text, sizeof(text));
	if (why)
		return ksnprintf(t->err, t->errlen, "plan: %s: %s", q->spec, why), -1;
	st_cccr_cfg(q, &spec, link, &cfg);
	p->req[i] = (struct p4_request){
		.spec = spec, .lp = P4_LP0, .pmi = q->pmi ? P4_PMI_LP0 : P4_PMI_NONE,
		.role = link ? P4_ROLE_CASCADE : P4_ROLE_COUNT,
		.started_by = (uint8_t)(link ? q->from : 0),
	};
	p->slot[i] = (struct p4_slot){
		.escr = q->escr, .counter = q->counter, .link = link,
		.escr_value = p4_escr_encode(&spec, P4_LP0, pi->ht),
		.cccr_value = p4_cccr_encode(&cfg, pi->ht),
		.preset = q->period ? p4_counter_preset(q->period) : 0,
	};
	if (q->always)
		p->slot[i].escr_value = field_prep(ESCR_EVENT_SELECT, ST_ALWAYS_SELECT) |
					ESCR_T0_OS | ESCR_T0_USR;
	if (q->tbits)
		p->slot[i].escr_value = (p->slot[i].escr_value & ~BITS(3, 0)) | q->tbits;
	p->n++;
	return 0;
}

/* The null-event CCCRs counters are written under (p4_cccr_quiet), once the plan is whole. */
static void st_quiet(struct p4_plan *p)
{
	for (unsigned i = 0; i < p->n; i++)
		p->slot[i].cccr_quiet = p4_cccr_quiet(p, i);
}

int st_plan(struct st *t, const struct st_ctr *q, unsigned n)
{
	t->plan = (struct p4_plan){ .ht = perf_info()->ht };
	for (unsigned i = 0; i < n; i++)
		if (st_add(t, &q[i]))
			return -1;
	st_quiet(&t->plan);
	return 0;
}

/* ---- running ------------------------------------------------------------- */

static bool st_interrupted(struct st *t)
{
	if (!t->stop && t->o->interrupted && t->o->interrupted(t->o->ctx))
		t->stop = true;
	return t->stop;
}

/* Run workload a at ring on LP lp (0 or 1) with the model's hooks; 0 when it ran. */
int st_run_args(struct st *t, const struct workload_args *a, int ring, unsigned lp)
{
	static struct workload_job jobs[2];
	static struct perf_inputs in[2];
	struct workload_hooks h[2];

	for (unsigned k = 0; k < 2; k++) {
		perf_hooks(&in[k], &h[k]);
		jobs[k] = (struct workload_job){ .a = k == lp ? a : NULL, .ring = ring,
						 .step = perf_steps_workloads(), .h = &h[k] };
	}
	if (workload_run_lps(jobs, WORKLOAD_TOGETHER) || jobs[lp].res.status != WORKLOAD_OK) {
		ksnprintf(t->err, t->errlen, "%s on LP%u: %s", a->w->name, lp,
			  jobs[lp].res.status == WORKLOAD_INTERRUPTED ? "interrupted" :
			  jobs[lp].res.error[0] ? jobs[lp].res.error : "did not complete");
		t->stop = true;
		return -1;
	}
	return 0;
}

/* `name` with its arguments argv[0..argc) into *a; -1 with t->err (and t->stop). */
int st_parse_args(struct st *t, const char *name, int argc, char **argv, struct workload_args *a)
{
	const struct workload *w = workload_find(name);

	if (!w || workload_parse_args(w, argc, argv, a, t->err, t->errlen))
		return t->stop = true, -1;
	return 0;
}

/* `loop n`'s arguments into *a; -1 with t->err (and t->stop). */
static int st_loop_args(struct st *t, uint64_t n, struct workload_args *a)
{
	char num[24], *argv[1] = { num };

	ksnprintf(num, sizeof(num), "%llu", (unsigned long long)n);
	return st_parse_args(t, "loop", 1, argv, a);
}

/* Run `loop n` at ring on LP lp (0 or 1) with the model's hooks; 0 when it ran. */
int st_workload(struct st *t, uint64_t n, int ring, unsigned lp)
{
	static struct workload_args a;

	if (st_loop_args(t, n, &a))
		return -1;
	return st_run_args(t, &a, ring, lp);
}

static void st_inject(struct st *t)
{
	char err[96];

	if (t->o->inject == SELFTEST_INJECT_UNFLAGGED)
		perf_inject(t->o->inject_arg, 0, err, sizeof(err));
	else if (t->o->inject == SELFTEST_INJECT_N15)
		perf_inject(0, t->o->inject_arg, err, sizeof(err));
}

/*
 * One counting run of t->plan over `loop n`; inject: apply the quirk
 * injection. The loop's argument is formatted and parsed before the count
 * starts: inside the window the kernel's path is the same for every n (a
 * longer number would add instructions and branches at CPL 0 that the
 * hardware counts and the exact differences would take for the loop's).
 */
int st_measure(struct st *t, uint64_t n, int ring, unsigned lp, uint64_t reload,
		      bool inject, struct st_meas *m)
{
	static struct perf_count sess;
	static struct workload_args a;
	const struct perf_pmi_stats *p = &perf_info()->pmi;
	struct perf_pmi_stats before;
	uint64_t t0, flags;
	int r;

	if (t->irq)
		perf_take_pending();	/* not one of this run's PMIs */
	before = *p;

	if (st_interrupted(t))
		return ksnprintf(t->err, t->errlen, "interrupted"), -1;
	if (st_loop_args(t, n, &a))
		return -1;
	t0 = rdtsc();
	if (perf_count_start(&sess, &t->plan, reload, t->err, t->errlen))
		return -1;
	if (inject)
		st_inject(t);
	flags = read_rflags();
	if (t->irq)
		cpu_sti();	/* as record does: with IF = 0 a fixed PMI would wait for the end */
	r = st_run_args(t, &a, ring, lp);
	if (t->irq && !(flags & RFLAGS_IF))
		cpu_cli();
	if (r == 0 && t->between)
		t->between(t, &sess);
	perf_count_stop(&sess, m->totals);
	m->tsc = rdtsc() - t0;
	if (sess.storm) {	/* the count stopped itself: nothing it counted can be judged */
		perf_storm_text(&sess, t->plan.req[sess.storm_idx].spec.event < P4_NEVENT ?
				p4_events[t->plan.req[sess.storm_idx].spec.event].name : "", NULL,
				t->err, t->errlen);
		t->stop = true;
		return -1;
	}
	m->interrupts = p->interrupts - before.interrupts;
	m->by_vector = p->by_vector - before.by_vector;
	m->by_nmi = p->by_nmi - before.by_nmi;
	m->unflagged = p->unflagged - before.unflagged;
	m->mismatches = p->mismatches - before.mismatches;
	return r;
}

static unsigned st_reps(const struct st *t)
{
	return t->o->quick ? 1 : 2;
}

/* Smallest totals of the repeats of loop n; m gets the last run (TSC, PMIs). */
static int st_min_run(struct st *t, uint64_t n, int ring, unsigned lp, uint64_t *min,
		      struct st_meas *m)
{
	for (unsigned r = 0; r < st_reps(t); r++) {
		if (st_measure(t, n, ring, lp, 0, false, m))
			return -1;
		for (unsigned i = 0; i < t->plan.n; i++)
			if (r == 0 || m->totals[i] < min[i])
				min[i] = m->totals[i];
	}
	return 0;
}

/* d[i] = count(loop ST_N2) - count(loop ST_N1) for every counter of t->plan. */
int st_delta(struct st *t, int ring, unsigned lp, uint64_t *d, struct st_meas *last)
{
	uint64_t lo[P4_MAX_REQUESTS], hi[P4_MAX_REQUESTS];

	if (st_min_run(t, ST_N1, ring, lp, lo, last) || st_min_run(t, ST_N2, ring, lp, hi, last))
		return -1;
	for (unsigned i = 0; i < t->plan.n; i++)
		d[i] = hi[i] >= lo[i] ? hi[i] - lo[i] : 0;
	return 0;
}

void st_name_slot(struct st *t, struct selftest_result *r, unsigned i, const char *what)
{
	const struct p4_slot *s = &t->plan.slot[i];

	ksnprintf(r->name, sizeof(r->name), "counter %u %s via %s: %s", s->counter,
		  p4_counters[s->counter].name, p4_escrs[s->escr].name, what);
}


uint64_t st_expect(enum st_kind k)
{
	return k == ST_INSTR ? WL_LOOP_K * (ST_N2 - ST_N1) : ST_N2 - ST_N1;
}

/* ---- the PMU as it was ------------------------------------------------------------ */

/* The backend fault an injection asks for, or -1 (none, or one injected per count). */
static int st_fault_kind(enum selftest_inject k)
{
	switch (k) {
	case SELFTEST_INJECT_DEAD:	return PERF_FAULT_DEAD;
	case SELFTEST_INJECT_RDPMC:	return PERF_FAULT_RDPMC;
	case SELFTEST_INJECT_NOMASK:	return PERF_FAULT_NOMASK;
	case SELFTEST_INJECT_ERRATUM:	return PERF_FAULT_ERRATUM;
	case SELFTEST_INJECT_STUCK:	return PERF_FAULT_STUCK;
	default:			return -1;
	}
}

static uint32_t st_fault_arg(const struct selftest_opts *o)
{
	if (o->inject == SELFTEST_INJECT_DEAD || o->inject == SELFTEST_INJECT_RDPMC)
		return 1u << o->inject_arg;
	return o->inject_arg;
}


static bool st_escr_exists(enum p4_escr e)
{
	return (p4_escrs[e].models & perf_info()->caps.escr_models) != 0;
}

/* The registers besides counters, CCCRs and ESCRs: those that read back (uncore: on parts with it). */
static void st_save_other(struct st *t)
{
	static const struct { uint32_t msr; const char *name; bool read_only; } regs[] = {
		{ MSR_IA32_MISC_ENABLE, "IA32_MISC_ENABLE", true },
		{ MSR_PEBS_ENABLE, "MSR_PEBS_ENABLE", false },
		{ MSR_PEBS_MATRIX_VERT, "MSR_PEBS_MATRIX_VERT", false },
		{ MSR_IA32_DS_AREA, "IA32_DS_AREA", false },
	};
	struct msr_bus *bus = perf_bus();
	struct st_reg *o = t->save_other;
	uint64_t v;

	t->nother = 0;
	for (unsigned i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		if (msr_bus_read(bus, regs[i].msr, &v) == 0)
			o[t->nother++] = (struct st_reg){ .msr = regs[i].msr, .name = regs[i].name,
							  .value = v, .stopped = true,
							  .read_only = regs[i].read_only };
	for (unsigned i = 0; i < P4_UNC_NREG && t->nother < ST_NOTHER; i++) {
		const struct p4_unc_reg *u = p4_unc_reg_at(perf_info()->caps.uncore, i);

		if (u && msr_bus_read(bus, u->msr, &v) == 0)
			o[t->nother++] = (struct st_reg){ .msr = u->msr, .name = u->name, .value = v,
							  .stopped = u->role == P4_UNC_LAT_COUNT ||
								     (v >> 32) == 0 };
	}
}

static void st_save(struct st *t)
{
	struct msr_bus *bus = perf_bus();

	for (unsigned c = 0; c < P4_NCOUNTER; c++) {
		p4_counter_read(bus, c, &t->save_ctr[c]);
		msr_bus_read(bus, p4_counters[c].cccr_msr, &t->save_cccr[c]);
	}
	for (unsigned e = 0; e < P4_NESCR; e++)
		if (st_escr_exists(e))
			msr_bus_read(bus, p4_escrs[e].msr, &t->save_escr[e]);
	st_save_other(t);
	t->save_mode = perf_info()->pmi_mode;
}

/* CCCRs off first (nothing counts while the rest is written), the CCCRs last. */
static void st_restore(struct st *t)
{
	struct msr_bus *bus = perf_bus();

	for (unsigned c = 0; c < P4_NCOUNTER; c++)
		msr_bus_write(bus, p4_counters[c].cccr_msr, 0);
	for (unsigned e = 0; e < P4_NESCR; e++)
		if (st_escr_exists(e))
			msr_bus_write(bus, p4_escrs[e].msr, t->save_escr[e]);
	for (unsigned c = 0; c < P4_NCOUNTER; c++) {
		msr_bus_write(bus, p4_counters[c].msr, t->save_ctr[c]);
		msr_bus_write(bus, p4_counters[c].msr, t->save_ctr[c]);	/* N15 */
	}
	for (unsigned i = 0; i < t->nother; i++)
		if (!t->save_other[i].read_only)
			msr_bus_write(bus, t->save_other[i].msr, t->save_other[i].value);
	for (unsigned c = 0; c < P4_NCOUNTER; c++)
		msr_bus_write(bus, p4_counters[c].cccr_msr, t->save_cccr[c]);
	perf_set_pmi_mode(t->save_mode);
	perf_set_sink(NULL, NULL);
	if (st_fault_kind(t->o->inject) >= 0)
		perf_inject_fault((enum perf_fault)st_fault_kind(t->o->inject), 0, t->err, t->errlen);
}

/* One register compared: counted in *good, named in r->note when it differs. */
static void st_compare(struct selftest_result *r, uint32_t msr, const char *prefix,
		       const char *name, int rc, uint64_t got, uint64_t want, unsigned *good)
{
	size_t used = strlen(r->note);

	if (rc == 0 && got == want) {
		(*good)++;
		return;
	}
	ksnprintf(r->note + used, sizeof(r->note) - used, "%s%s%s (%XH)", used ? ", " : "differ: ",
		  prefix, name, (unsigned)msr);
}

static bool st_uncore_saved(const struct st *t)
{
	for (unsigned i = 0; i < t->nother; i++)
		if (t->save_other[i].msr >= MSR_P4_UNCORE_FIRST &&
		    t->save_other[i].msr <= MSR_P4_UNCORE_LAST)
			return true;
	return false;
}

/* How many of the saved registers read back as saved (counters of stopped CCCRs too). */
static void st_verify_restore(struct st *t)
{
	struct msr_bus *bus = perf_bus();
	struct selftest_result *r = st_new(t, "restore");
	unsigned good = 0, total = 0;
	uint64_t v = 0;
	int rc;

	for (unsigned e = 0; e < P4_NESCR; e++) {
		if (!st_escr_exists(e))
			continue;
		total++;
		rc = msr_bus_read(bus, p4_escrs[e].msr, &v);
		st_compare(r, p4_escrs[e].msr, "MSR_", p4_escrs[e].name, rc, v, t->save_escr[e], &good);
	}
	for (unsigned c = 0; c < P4_NCOUNTER; c++) {
		total++;
		rc = msr_bus_read(bus, p4_counters[c].cccr_msr, &v);
		st_compare(r, p4_counters[c].cccr_msr, "", p4_counters[c].cccr_name, rc, v,
			   t->save_cccr[c], &good);
		if (t->save_cccr[c] & CCCR_ENABLE)
			continue;	/* a running counter has moved on */
		total++;
		rc = p4_counter_read(bus, c, &v);
		st_compare(r, p4_counters[c].msr, "", p4_counters[c].name, rc, v, t->save_ctr[c], &good);
	}
	for (unsigned i = 0; i < t->nother; i++) {
		const struct st_reg *o = &t->save_other[i];

		if (!o->stopped)
			continue;
		total++;
		rc = msr_bus_read(bus, o->msr, &v);
		st_compare(r, o->msr, "", o->name, rc, v, o->value, &good);
	}
	ksnprintf(r->name, sizeof(r->name), "PMU registers as before the selftest");
	selftest_judge_exact(r, good, total);
	if (!r->note[0])
		ksnprintf(r->note, sizeof(r->note), "ESCRs, CCCRs, stopped counters, PEBS, DS area, "
			  "MISC_ENABLE%s read back", st_uncore_saved(t) ? ", uncore" : "");
	st_emit(t, r);
}

/* ---- the checks ------------------------------------------------------------------- */

struct st_check {
	const char *group;
	int (*run)(struct st *t);
};

static const struct st_check st_checks[] = {
	{ "counters", st_counters },
	{ "escrs", st_escrs },
	{ "uops", st_uops },
	{ "privilege", st_privilege },
	{ "threads", st_threads },
	{ "overflow", st_overflow_flags },
	{ "overflow", st_pmis },
	{ "cascade", st_cascading },
	{ "rdpmc", st_rdpmc_check },
	{ "pebs", st_pebs },
	{ "uncore", st_uncore },
};

/* A check that could not program the PMU fails with the reason; true when everything stops. */
static bool st_not_run(struct st *t, const struct st_check *c)
{
	struct selftest_result *r;

	if (t->stop)
		return true;
	r = st_new(t, c->group);
	ksnprintf(r->name, sizeof(r->name), "the %s checks could not run", c->group);
	r->status = SELFTEST_FAIL;
	ksnprintf(r->expected, sizeof(r->expected), "programmed and run");
	ksnprintf(r->note, sizeof(r->note), "%s", t->err);
	st_emit(t, r);
	t->err[0] = '\0';
	return false;
}

static bool st_stuck_ok(unsigned msr)
{
	enum p4_escr e;

	return p4_escr_by_msr(msr, &e) && st_escr_exists(e);
}

static int st_setup(struct st *t, char *err, size_t n)
{
	const struct selftest_opts *o = t->o;

	if (!perf_bus())
		return ksnprintf(err, n, "no PMU backend: %s", perf_info()->reason), -1;
	if (o->inject != SELFTEST_INJECT_NONE && !perf_can_inject())
		return ksnprintf(err, n, "--inject needs the model backend ('pmu backend model')"), -1;
	if ((o->inject == SELFTEST_INJECT_DEAD || o->inject == SELFTEST_INJECT_RDPMC) &&
	    o->inject_arg >= P4_NCOUNTER)
		return ksnprintf(err, n, "--inject: the counter is 0-17"), -1;
	if (o->inject == SELFTEST_INJECT_STUCK && !st_stuck_ok(o->inject_arg))
		return ksnprintf(err, n, "--inject stuck=%XH: not an ESCR of this model", o->inject_arg),
		       -1;
	st_save(t);
	if (st_fault_kind(o->inject) >= 0 &&
	    perf_inject_fault((enum perf_fault)st_fault_kind(o->inject), st_fault_arg(o), err, n))
		return -1;
	return 0;
}

/*
 * The boot probe's verdict on the hardware backend, first: a FAIL when it
 * did not see counter 0 count. The checks then run on the hardware all the
 * same (the registers, the restore), never on the model in its place.
 */
static void st_probe_result(struct st *t)
{
	const struct perf_info *pi = perf_info();
	struct selftest_result *r;

	if (pi->backend != PERF_BACKEND_HW)
		return;
	r = st_new(t, "probe");
	ksnprintf(r->name, sizeof(r->name), "counter 0 counts global_power_events in the boot probe");
	r->status = pi->probe_failed ? SELFTEST_FAIL : SELFTEST_PASS;
	ksnprintf(r->measured, sizeof(r->measured), "%s", pi->probe_failed ? "FAILED" : "counted");
	ksnprintf(r->expected, sizeof(r->expected), "counted (1/%u .. 1 per TSC cycle)",
		  P4_PROBE_MIN_SHARE);
	ksnprintf(r->note, sizeof(r->note), "%s", pi->probe);
	st_emit(t, r);
}

int selftest_run(const struct selftest_opts *opts, struct selftest_result *out, unsigned max,
		 bool *interrupted, char *err, size_t n)
{
	static struct st t;

	t = (struct st){ .o = opts, .out = out, .max = max, .err = err, .errlen = n };
	err[0] = '\0';
	if (st_setup(&t, err, n))
		return -1;
	st_probe_result(&t);
	for (unsigned i = 0; i < sizeof(st_checks) / sizeof(st_checks[0]); i++) {
		if (st_interrupted(&t) || (st_checks[i].run(&t) && st_not_run(&t, &st_checks[i])))
			break;
	}
	st_restore(&t);
	if (!t.stop)
		st_verify_restore(&t);
	*interrupted = t.stop;
	return (int)t.n;
}

void selftest_machine(struct selftest_machine *m)
{
	struct cpu_info ci;
	uint64_t rev = 0;

	cpu_identify(&ci);
	*m = (struct selftest_machine){ .signature = ci.signature, .stepping = ci.stepping,
					.misc_ok = ci.misc_enable_ok, .misc_enable = ci.misc_enable };
	ksnprintf(m->display, sizeof(m->display), "%s", ci.display);
	ksnprintf(m->brand, sizeof(m->brand), "%s", ci.brand);
	/* SDM Vol. 3A 9.11.7.1: write 0 to IA32_BIOS_SIGN_ID, CPUID(1), then read it. */
	if (msr_write_safe(MSR_IA32_BIOS_SIGN_ID, 0) == 0) {
		(void)cpuid_count(1, 0);
		m->ucode_ok = msr_read_safe(MSR_IA32_BIOS_SIGN_ID, &rev) == 0;
		m->ucode = (uint32_t)(rev >> 32);
	}
}
