/*
 * selftest.c - the checks of `selftest`, run through the counting API.
 *
 * Every check builds its own plan (pmu/ encoder: an ESCR value from an
 * event spec, a CCCR value from a struct p4_cccr_cfg) on counters and ESCRs
 * it names itself, so that all 18 counters are tried, counter 1 included
 * (the allocator avoids it, p4_alloc.h), and runs a built-in workload inside
 * perf_count_start()/perf_count_stop(). Expectations:
 *
 * - Exact counts come from differences: `loop N` retires 3N + 6
 *   instructions with N conditional branches (prof/workload.h), so the
 *   count of loop N2 minus that of loop N1 is 3 (N2 - N1) instructions and
 *   N2 - N1 branches whatever the runner around the workload adds, on the
 *   hardware as in the model. Each difference is taken between the smallest
 *   counts of the repeats (something else running, e.g. SMM, only adds).
 * - Cycles have no exact count: clockticks and the compare/complement
 *   "always true" cycle count (fact sheet 2.4, 9.12) must lie between a third
 *   of the instructions (NetBurst retires at most 3 uops a cycle, SDM Vol. 1
 *   2.2.2.4; every instruction is at least one uop) and the TSC cycles of
 *   the whole count (the TSC ticks at the highest core clock).
 * - Overflow: OVF is set on the wrap and stays set (sticky) until software
 *   clears it (fact sheet 2.2); FORCE_OVF makes every increment an overflow
 *   (SDM CCCR text); with a preset of -P a sampling counter overflows every
 *   P events and the PMI comes with the next event (fact sheet 2.2), so
 *   3N + 6 instructions give floor((3N + 6 - 1) / P) interrupts; NetBurst
 *   masks LVT PC when it delivers a PMI (fact sheet 6, 9.2).
 * - Cascades: a counter with bit 30 (or CASCNTxINTOy, bit 11, Table 18-65)
 *   and Enable clear starts counting at the next event after its starter
 *   overflows (SDM 18.15.5.6, Example 18-1), so counting the same event it
 *   ends with the starter's count minus the starter's period (cycles: up to
 *   ST_READ_SLACK more, as it is read after its starter, and ST_START_LAG
 *   less; both allowances are this file's, not the manual's).
 * - The cascade-PMI erratum (SDM 18.15.5.7, fact sheet 2.3): no PMI from a
 *   counter in cascade mode on 0F_02 and on 0F_00/0F_01 above stepping 09H,
 *   as pmu/p4_caps.c predicts for the signature of the PMU backend.
 * - Thread qualification: an event on LP t at CPL c counts when ESCR bit
 *   Tt_OS (c = 0) or Tt_USR (c > 0) is set (Table 18-66).
 *
 * On the model backend the workloads are single-stepped (as in `stat`) and
 * RDPMC is the model's (perf_rdpmc); fault injection (perf_inject(): no
 * OVF, lost reloads; perf_inject_fault(): a dead counter, a wrong RDPMC, no
 * LVT PC auto-mask, the erratum flipped) makes the matching checks fail.
 * The PMU registers are saved first and written back at the end, also
 * after Ctrl-C.
 */
#include "arch/x86/cpu.h"
#include "arch/x86/lapic.h"
#include "arch/x86/msr.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "pmu/p4_apply.h"
#include "pmu/p4_encode.h"
#include "pmu/p4_regs.h"
#include "prof/perf.h"
#include "prof/selftest.h"

#define MSR_IA32_BIOS_SIGN_ID	0x8b	/* SDM Vol. 3A 9.11.7.1: microcode revision in 63:32 */

#define ST_N1		50		/* loop sizes of the exact differences */
#define ST_N2		150
#define ST_PMI_N	1015		/* 3051 instructions: 30 PMIs at period 100 */
#define ST_PMI_PERIOD	100
#define ST_CASCADE_N	200		/* 606 instructions, 200 conditional branches */
#define ST_READ_SLACK	2048		/* cycles between reading two counters */
#define ST_START_LAG	64		/* cycles a cascade may take to start its counter */
#define ST_NO_FROM	(-1)
#define ST_ALWAYS_SELECT 0x3f		/* "any non-zero event select" (fact sheet 2.4) */

/* One counter of a plan: where, what, and how it starts. */
struct st_ctr {
	enum p4_counter counter;
	enum p4_escr escr;
	const char *spec;
	uint64_t period;	/* overflow after this many events (0: plain counting) */
	int from;		/* plan index of the counter that starts it, or ST_NO_FROM */
	bool pmi;		/* OVF_PMI_T0 */
	uint8_t tbits;		/* non-zero: ESCR bits 3:0 exactly this */
	bool always;		/* spec unused: the always-true cycle count (st_escrs) */
};

/* What one counting run measured. */
struct st_meas {
	uint64_t totals[P4_MAX_REQUESTS];
	uint64_t tsc;
	uint64_t interrupts, by_vector, by_nmi, unflagged, mismatches;
};

struct st;
typedef void st_between_fn(struct st *t, const struct perf_count *sess);

struct st {
	const struct selftest_opts *o;
	struct selftest_result *out;
	unsigned max, n;
	bool stop;		/* Ctrl-C, or a workload did not run */
	char *err;
	size_t errlen;
	struct p4_plan plan;
	st_between_fn *between;	/* called after the workload, before the count stops */
	bool irq;		/* run the workload with IF = 1, so a PMI by vector lands in it */
	/* overflow hook statistics */
	unsigned hook_calls, hook_masked;
	/* the sticky-OVF and FORCE_OVF observations */
	uint64_t ovf[3], raw;
	/* saved PMU state */
	uint64_t save_ctr[P4_NCOUNTER], save_cccr[P4_NCOUNTER], save_escr[P4_NESCR];
	uint64_t save_pebs, save_matrix;
	enum perf_pmi_mode save_mode;
};

/* ---- results ------------------------------------------------------------- */

static struct selftest_result *st_new(struct st *t, const char *group)
{
	static struct selftest_result spare;
	struct selftest_result *r = t->n < t->max ? &t->out[t->n] : &spare;

	*r = (struct selftest_result){ .group = group };
	return r;
}

static void st_emit(struct st *t, struct selftest_result *r)
{
	if (r != &t->out[t->n < t->max ? t->n : 0] || t->n >= t->max)
		return;
	t->n++;
	if (t->o->emit)
		t->o->emit(t->o->ctx, r);
}

static void st_skip(struct st *t, const char *group, const char *name, const char *why)
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
static int st_add(struct st *t, const struct st_ctr *q)
{
	const struct perf_info *pi = perf_info();
	static struct p4_spec_error e;
	const struct p4_cascade_link *link = NULL;
	struct p4_plan *p = &t->plan;
	struct p4_cccr_cfg cfg;
	struct p4_spec spec;
	unsigned i = p->n;

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

static int st_plan(struct st *t, const struct st_ctr *q, unsigned n)
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

static int st_args(struct st *t, uint64_t n, struct workload_args *a)
{
	const struct workload *w = workload_find("loop");
	char num[24], *argv[1] = { num };

	ksnprintf(num, sizeof(num), "%llu", (unsigned long long)n);
	if (!w || workload_parse_args(w, 1, argv, a, t->err, t->errlen))
		return t->stop = true, -1;
	return 0;
}

/* Run `loop n` at ring on LP lp (0 or 1) with the model's hooks; 0 when it ran. */
static int st_workload(struct st *t, uint64_t n, int ring, unsigned lp)
{
	static struct workload_job jobs[2];
	static struct perf_inputs in[2];
	static struct workload_args a;
	struct workload_hooks h[2];

	if (st_args(t, n, &a))
		return -1;
	for (unsigned k = 0; k < 2; k++) {
		perf_hooks(&in[k], &h[k]);
		jobs[k] = (struct workload_job){ .a = k == lp ? &a : NULL, .ring = ring,
						 .step = perf_steps_workloads(), .h = &h[k] };
	}
	if (workload_run_lps(jobs, WORKLOAD_TOGETHER) || jobs[lp].res.status != WORKLOAD_OK) {
		ksnprintf(t->err, t->errlen, "loop %llu on LP%u: %s", (unsigned long long)n, lp,
			  jobs[lp].res.status == WORKLOAD_INTERRUPTED ? "interrupted" :
			  jobs[lp].res.error[0] ? jobs[lp].res.error : "did not complete");
		t->stop = true;
		return -1;
	}
	return 0;
}

static void st_inject(struct st *t)
{
	char err[96];

	if (t->o->inject == SELFTEST_INJECT_UNFLAGGED)
		perf_inject(t->o->inject_arg, 0, err, sizeof(err));
	else if (t->o->inject == SELFTEST_INJECT_N15)
		perf_inject(0, t->o->inject_arg, err, sizeof(err));
}

/* One counting run of t->plan over `loop n`; inject: apply the quirk injection. */
static int st_measure(struct st *t, uint64_t n, int ring, unsigned lp, uint64_t reload,
		      bool inject, struct st_meas *m)
{
	static struct perf_count sess;
	const struct perf_pmi_stats *p = &perf_info()->pmi;
	struct perf_pmi_stats before = *p;
	uint64_t t0, flags;
	int r;

	if (st_interrupted(t))
		return ksnprintf(t->err, t->errlen, "interrupted"), -1;
	t0 = rdtsc();
	if (perf_count_start(&sess, &t->plan, reload, t->err, t->errlen))
		return -1;
	if (inject)
		st_inject(t);
	flags = read_rflags();
	if (t->irq)
		cpu_sti();	/* as record does: with IF = 0 a fixed PMI would wait for the end */
	r = st_workload(t, n, ring, lp);
	if (t->irq && !(flags & RFLAGS_IF))
		cpu_cli();
	if (r == 0 && t->between)
		t->between(t, &sess);
	perf_count_stop(&sess, m->totals);
	m->tsc = rdtsc() - t0;
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
static int st_delta(struct st *t, int ring, unsigned lp, uint64_t *d, struct st_meas *last)
{
	uint64_t lo[P4_MAX_REQUESTS], hi[P4_MAX_REQUESTS];

	if (st_min_run(t, ST_N1, ring, lp, lo, last) || st_min_run(t, ST_N2, ring, lp, hi, last))
		return -1;
	for (unsigned i = 0; i < t->plan.n; i++)
		d[i] = hi[i] >= lo[i] ? hi[i] - lo[i] : 0;
	return 0;
}

static void st_name_slot(struct st *t, struct selftest_result *r, unsigned i, const char *what)
{
	const struct p4_slot *s = &t->plan.slot[i];

	ksnprintf(r->name, sizeof(r->name), "counter %u %s via %s: %s", s->counter,
		  p4_counters[s->counter].name, p4_escrs[s->escr].name, what);
}

/* ---- counters: every counter counts through an ESCR it can use -------------- */

enum st_kind { ST_INSTR, ST_BRANCH, ST_CYCLES };

struct st_counter_row {
	enum p4_counter counter;
	enum p4_escr escr;
	const char *spec;
	enum st_kind kind;
};

static const struct st_counter_row st_counter_rows[P4_NCOUNTER] = {
	{ P4_BPU_COUNTER0, P4_FSB_ESCR0, "global_power_events:RUNNING", ST_CYCLES },
	{ P4_BPU_COUNTER1, P4_FSB_ESCR0, "global_power_events:RUNNING", ST_CYCLES },
	{ P4_BPU_COUNTER2, P4_FSB_ESCR1, "global_power_events:RUNNING", ST_CYCLES },
	{ P4_BPU_COUNTER3, P4_FSB_ESCR1, "global_power_events:RUNNING", ST_CYCLES },
	{ P4_MS_COUNTER0, P4_TBPU_ESCR0, "retired_branch_type:CONDITIONAL", ST_BRANCH },
	{ P4_MS_COUNTER1, P4_TBPU_ESCR0, "retired_branch_type:CONDITIONAL", ST_BRANCH },
	{ P4_MS_COUNTER2, P4_TBPU_ESCR1, "retired_branch_type:CONDITIONAL", ST_BRANCH },
	{ P4_MS_COUNTER3, P4_TBPU_ESCR1, "retired_branch_type:CONDITIONAL", ST_BRANCH },
	/* no FLAME event occurs in an integer loop: the always-true cycle count */
	{ P4_FLAME_COUNTER0, P4_FIRM_ESCR0, "x87_FP_uop:cmp=15:compl", ST_CYCLES },
	{ P4_FLAME_COUNTER1, P4_FIRM_ESCR0, "x87_FP_uop:cmp=15:compl", ST_CYCLES },
	{ P4_FLAME_COUNTER2, P4_FIRM_ESCR1, "x87_FP_uop:cmp=15:compl", ST_CYCLES },
	{ P4_FLAME_COUNTER3, P4_FIRM_ESCR1, "x87_FP_uop:cmp=15:compl", ST_CYCLES },
	{ P4_IQ_COUNTER0, P4_CRU_ESCR0, "instr_retired", ST_INSTR },
	{ P4_IQ_COUNTER1, P4_CRU_ESCR2, "branch_retired", ST_BRANCH },
	{ P4_IQ_COUNTER2, P4_CRU_ESCR1, "instr_retired", ST_INSTR },
	{ P4_IQ_COUNTER3, P4_CRU_ESCR3, "branch_retired", ST_BRANCH },
	{ P4_IQ_COUNTER4, P4_CRU_ESCR0, "instr_retired", ST_INSTR },
	{ P4_IQ_COUNTER5, P4_CRU_ESCR1, "instr_retired", ST_INSTR },
};

/* FSB_ESCR1 is unusable below signature F27H (fact sheet 1.2 note 2): BPU_ESCR1's cycles then. */
static struct st_ctr st_counter_ctr(const struct st_counter_row *row)
{
	struct st_ctr q = { .counter = row->counter, .escr = row->escr, .spec = row->spec,
			    .from = ST_NO_FROM };

	if (row->escr == P4_FSB_ESCR1 && !perf_info()->caps.fsb_escr1_ok) {
		q.escr = P4_BPU_ESCR1;
		q.spec = "BPU_fetch_request:cmp=15:compl";
	}
	return q;
}

static uint64_t st_expect(enum st_kind k)
{
	return k == ST_INSTR ? WL_LOOP_K * (ST_N2 - ST_N1) : ST_N2 - ST_N1;
}

static void st_judge_counter(struct st *t, unsigned i, enum st_kind k, uint64_t delta,
			     const struct st_meas *last)
{
	struct selftest_result *r = st_new(t, "counters");
	const struct st_ctr q = st_counter_ctr(&st_counter_rows[i]);

	st_name_slot(t, r, i, q.spec);
	if (k == ST_CYCLES) {
		/* at most 3 instructions retire per cycle; no more cycles than TSC ticks */
		selftest_judge_range(r, last->totals[i], (WL_LOOP_K * ST_N2 + WL_LOOP_C) / 3,
				     last->tsc);
		ksnprintf(r->note, sizeof(r->note), "cycles over loop %u: instructions/3 .. TSC", ST_N2);
	} else {
		selftest_judge_exact(r, delta, st_expect(k));
		ksnprintf(r->note, sizeof(r->note), "loop %u minus loop %u", ST_N2, ST_N1);
	}
	st_emit(t, r);
}

static int st_counters(struct st *t)
{
	struct st_ctr q[P4_NCOUNTER];
	uint64_t d[P4_MAX_REQUESTS];
	struct st_meas last;

	for (unsigned i = 0; i < P4_NCOUNTER; i++)
		q[i] = st_counter_ctr(&st_counter_rows[i]);
	if (st_plan(t, q, P4_NCOUNTER) || st_delta(t, 0, 0, d, &last))
		return -1;
	for (unsigned i = 0; i < P4_NCOUNTER; i++)
		st_judge_counter(t, i, st_counter_rows[i].kind, d[i], &last);
	return 0;
}

/* ---- privilege: OS/USR qualification (ring 0 vs ring 3) -------------------- */

static int st_privilege(struct st *t)
{
	static const struct st_ctr q[] = {
		{ .counter = P4_IQ_COUNTER0, .escr = P4_CRU_ESCR0, .spec = "instr_retired:k",
		  .from = ST_NO_FROM },
		{ .counter = P4_IQ_COUNTER2, .escr = P4_CRU_ESCR1, .spec = "instr_retired:u",
		  .from = ST_NO_FROM },
	};
	uint64_t d[P4_MAX_REQUESTS];
	struct st_meas last;

	if (st_plan(t, q, 2))
		return -1;
	for (int ring = 0; ring <= 3; ring += 3) {
		if (st_delta(t, ring, 0, d, &last))
			return -1;
		for (unsigned i = 0; i < 2; i++) {
			struct selftest_result *r = st_new(t, "privilege");
			bool counts = (i == 0) == (ring == 0);

			st_name_slot(t, r, i, q[i].spec);
			ksnprintf(r->name + strlen(r->name), sizeof(r->name) - strlen(r->name),
				  ", ring %d", ring);
			selftest_judge_exact(r, d[i], counts ? st_expect(ST_INSTR) : 0);
			ksnprintf(r->note, sizeof(r->note), "loop %u minus loop %u", ST_N2, ST_N1);
			st_emit(t, r);
		}
	}
	return 0;
}

/* ---- threads: the T0/T1 OS/USR cells of Table 18-66 ----------------------- */

static const uint64_t st_tbits[4] = { ESCR_T0_OS, ESCR_T0_USR, ESCR_T1_OS, ESCR_T1_USR };
static const char *const st_tbit_names[4] = { "T0_OS", "T0_USR", "T1_OS", "T1_USR" };

/* Does ESCR bit k count an event of LP lp at ring (the rule before Table 18-66)? */
static bool st_tbit_counts(unsigned k, unsigned lp, int ring)
{
	return k / 2 == lp && (k % 2 == 0) == (ring == 0);
}

static void st_judge_cell(struct st *t, unsigned i, unsigned k, unsigned lp, int ring, uint64_t d)
{
	struct selftest_result *r = st_new(t, "threads");

	ksnprintf(r->name, sizeof(r->name), "counter %u %s only, loop on LP%u ring %d",
		  t->plan.slot[i].counter, st_tbit_names[k], lp, ring);
	/*
	 * LP0 waits at CPL 0 while LP1 works. A backend fed by stepping sees
	 * only the workload, so T0_OS gains nothing from the wait there; on
	 * hardware the wait loop's own instructions make that cell inexact.
	 */
	if (k == 0 && lp == 1 && !perf_steps_workloads()) {
		selftest_skip(r, "LP0 runs the kernel's wait loop at CPL 0 meanwhile: not exact");
	} else {
		selftest_judge_exact(r, d, st_tbit_counts(k, lp, ring) ? st_expect(ST_INSTR) : 0);
		ksnprintf(r->note, sizeof(r->note), "instr_retired, loop %u minus loop %u", ST_N2,
			  ST_N1);
	}
	st_emit(t, r);
}

static int st_threads(struct st *t)
{
	const char *why = "";
	uint64_t d[P4_MAX_REQUESTS];
	struct st_meas last;

	if (!perf_info()->ht || workload_sibling(&why) < 0) {
		st_skip(t, "threads", "T0/T1 cells of Table 18-66", perf_info()->ht ? why :
			"no Hyper-Threading: the PMU serves one logical processor");
		return 0;
	}
	for (unsigned pair = 0; pair < 2; pair++) {
		const struct st_ctr q[2] = {
			{ .counter = P4_IQ_COUNTER0, .escr = P4_CRU_ESCR0, .spec = "instr_retired",
			  .from = ST_NO_FROM, .tbits = (uint8_t)st_tbits[2 * pair] },
			{ .counter = P4_IQ_COUNTER2, .escr = P4_CRU_ESCR1, .spec = "instr_retired",
			  .from = ST_NO_FROM, .tbits = (uint8_t)st_tbits[2 * pair + 1] },
		};

		if (st_plan(t, q, 2))
			return -1;
		for (unsigned ctx = 0; ctx < 4; ctx++) {
			unsigned lp = ctx / 2;
			int ring = ctx % 2 ? 3 : 0;

			if (st_delta(t, ring, lp, d, &last))
				return -1;
			for (unsigned i = 0; i < 2; i++)
				st_judge_cell(t, i, 2 * pair + i, lp, ring, d[i]);
		}
	}
	return 0;
}

/* ---- escrs: every ESCR reaches every counter it drives ------------------------ */

/*
 * The "always true" count (fact sheet 2.4, the old Linux NMI watchdog's
 * trick): event select 3FH with Compare and Complement at threshold 15
 * counts every cycle, since at most 15 events occur in one (SDM 18.15.5.2).
 * Through each ESCR it must give cycles on each counter the ESCR drives
 * (fact sheet 3.1), which checks the whole ESCR-select map.
 */
static bool st_escr_usable(enum p4_escr e)
{
	return e != P4_FSB_ESCR1 || perf_info()->caps.fsb_escr1_ok;
}

static void st_judge_escr(struct st *t, enum p4_escr e, const struct st_meas *m)
{
	struct selftest_result *r = st_new(t, "escrs");
	uint64_t lo = (WL_LOOP_K * ST_N2 + WL_LOOP_C) / 3;
	size_t used = 0;
	bool ok = true;

	ksnprintf(r->name, sizeof(r->name), "%s (select %u) -> counters", p4_escrs[e].name,
		  p4_escrs[e].select);
	for (unsigned i = 0; i < t->plan.n; i++) {
		if (t->plan.slot[i].escr != e)
			continue;
		ok &= m->totals[i] >= lo && m->totals[i] <= m->tsc;
		ksnprintf(r->name + strlen(r->name), sizeof(r->name) - strlen(r->name), " %u",
			  t->plan.slot[i].counter);
		used += (size_t)ksnprintf(r->measured + used, sizeof(r->measured) - used, "%s%llu",
					  used ? " " : "", (unsigned long long)m->totals[i]);
		if (used >= sizeof(r->measured))
			used = sizeof(r->measured) - 1;
	}
	r->status = ok ? SELFTEST_PASS : SELFTEST_FAIL;
	ksnprintf(r->expected, sizeof(r->expected), "each %llu..%llu", (unsigned long long)lo,
		  (unsigned long long)m->tsc);
	ksnprintf(r->note, sizeof(r->note), "event select 3FH, cmp=15:compl: cycles over loop %u",
		  ST_N2);
	st_emit(t, r);
}

/* Add ESCR e on every counter it drives; false when one is taken already. */
static int st_escr_add(struct st *t, enum p4_escr e, uint32_t *used)
{
	struct st_ctr q = { .escr = e, .spec = "always-true", .from = ST_NO_FROM, .always = true };

	if (p4_escrs[e].counters & *used)
		return 1;
	for (unsigned c = 0; c < P4_NCOUNTER; c++) {
		if (!(p4_escrs[e].counters & P4_CTR(c)))
			continue;
		q.counter = c;
		if (st_add(t, &q))
			return -1;
	}
	*used |= p4_escrs[e].counters;
	return 0;
}

/* One run of ESCRs that drive disjoint counters; done[] marks those taken. */
static int st_escr_run(struct st *t, bool *done, enum p4_escr *in, unsigned *nin)
{
	uint32_t used = 0;
	int r;

	t->plan = (struct p4_plan){ .ht = perf_info()->ht };
	*nin = 0;
	for (unsigned e = 0; e < P4_NESCR; e++) {
		if (done[e] || (r = st_escr_add(t, e, &used)) > 0)
			continue;
		if (r < 0)
			return -1;
		done[e] = true;
		in[(*nin)++] = e;
	}
	return 0;
}

static int st_escrs(struct st *t)
{
	bool done[P4_NESCR];
	enum p4_escr in[P4_NESCR];
	unsigned nin;
	struct st_meas m;

	for (unsigned e = 0; e < P4_NESCR; e++) {
		done[e] = true;
		if (!(p4_escrs[e].models & perf_info()->caps.escr_models))
			continue;	/* not on this model (IQ_ESCR0/1 on models 3-6) */
		if (!st_escr_usable(e))
			st_skip(t, "escrs", p4_escrs[e].name, "not usable below signature F27H "
				"(fact sheet 1.2 note 2)");
		else
			done[e] = false;
	}
	for (;;) {
		if (st_escr_run(t, done, in, &nin))
			return -1;
		if (nin == 0)
			return 0;
		if (st_measure(t, ST_N2, 0, 0, 0, false, &m))
			return -1;
		for (unsigned k = 0; k < nin; k++)
			st_judge_escr(t, in[k], &m);
	}
}

/* ---- uops: documented lower bounds ---------------------------------------------- */

/*
 * Every instruction is at least one uop, and every retired uop went through
 * the uop queue: uops_retired and uop_queue_writes grow at least as much as
 * instr_retired between loop N1 and loop N2. Neither has an upper bound in
 * the manual. The model has no input for them (perf_event_source).
 */
static int st_uops(struct st *t)
{
	static const struct st_ctr q[] = {
		{ .counter = P4_IQ_COUNTER2, .escr = P4_CRU_ESCR1, .spec = "instr_retired",
		  .from = ST_NO_FROM },
		{ .counter = P4_IQ_COUNTER0, .escr = P4_CRU_ESCR0, .spec = "uops_retired",
		  .from = ST_NO_FROM },
		{ .counter = P4_MS_COUNTER0, .escr = P4_MS_ESCR0, .spec = "uop_queue_writes",
		  .from = ST_NO_FROM },
	};
	uint64_t d[P4_MAX_REQUESTS];
	struct st_meas last;

	if (perf_event_source(P4_EV_UOPS_RETIRED, NULL) == PERF_SOURCE_NONE) {
		st_skip(t, "uops", "uops_retired, uop_queue_writes >= instr_retired",
			"the model has no input for uop events");
		return 0;
	}
	if (st_plan(t, q, 3) || st_delta(t, 0, 0, d, &last))
		return -1;
	for (unsigned i = 1; i < 3; i++) {
		struct selftest_result *r = st_new(t, "uops");

		st_name_slot(t, r, i, q[i].spec);
		selftest_judge_range(r, d[i], d[0], UINT64_MAX);
		ksnprintf(r->note, sizeof(r->note), "at least instr_retired's %llu, loop %u minus "
			  "loop %u", (unsigned long long)d[0], ST_N2, ST_N1);
		st_emit(t, r);
	}
	return 0;
}

/* ---- overflow: OVF, FORCE_OVF, the 40-bit wrap ------------------------------- */

static void st_read_ovf(struct st *t, unsigned k)
{
	uint64_t v = 0;

	msr_bus_read(perf_bus(), p4_counters[t->plan.slot[0].counter].cccr_msr, &v);
	t->ovf[k] = (v & CCCR_OVF) != 0;
}

/* After the workload: OVF now, after more events, and after software cleared it. */
static void st_sticky_between(struct st *t, const struct perf_count *sess)
{
	const struct p4_slot *s = &t->plan.slot[0];

	st_read_ovf(t, 0);
	p4_counter_read(perf_bus(), s->counter, &t->raw);
	if (st_workload(t, 10, 0, 0) == 0)
		st_read_ovf(t, 1);
	msr_bus_write(perf_bus(), p4_counters[s->counter].cccr_msr, s->cccr_value & ~CCCR_OVF);
	st_read_ovf(t, 2);
}

static void st_force_between(struct st *t, const struct perf_count *sess)
{
	st_read_ovf(t, 0);
	p4_counter_read(perf_bus(), t->plan.slot[0].counter, &t->raw);
}

static void st_judge_flag(struct st *t, const char *name, uint64_t got, uint64_t want,
			  const char *note)
{
	struct selftest_result *r = st_new(t, "overflow");

	ksnprintf(r->name, sizeof(r->name), "counter %u %s", t->plan.slot[0].counter, name);
	selftest_judge_exact(r, got, want);
	ksnprintf(r->note, sizeof(r->note), "%s", note);
	st_emit(t, r);
}

static int st_sticky(struct st *t)
{
	static const struct st_ctr q = { .counter = P4_IQ_COUNTER4, .escr = P4_CRU_ESCR0,
					 .spec = "instr_retired:k", .from = ST_NO_FROM };
	struct st_meas m;
	int r;

	if (st_plan(t, &q, 1))
		return -1;
	t->ovf[0] = t->ovf[1] = t->ovf[2] = 2;
	t->between = st_sticky_between;
	r = st_measure(t, ST_N1, 0, 0, p4_counter_preset(20), false, &m);
	t->between = NULL;
	if (r)
		return -1;
	st_judge_flag(t, "CCCR.OVF set by the wrap (preset -20, loop 50)", t->ovf[0], 1,
		      "1 = set");
	st_judge_flag(t, "CCCR.OVF sticky over 36 more events", t->ovf[1], 1, "1 = set");
	st_judge_flag(t, "CCCR.OVF cleared by writing the CCCR", t->ovf[2], 0, "0 = clear");
	return 0;
}

/* The 40-bit wrap: counting across FF_FFFF_FFFFH -> 0 loses nothing. */
static int st_wrap(struct st *t)
{
	static const struct st_ctr q = { .counter = P4_IQ_COUNTER4, .escr = P4_CRU_ESCR0,
					 .spec = "instr_retired:k", .from = ST_NO_FROM };
	struct st_meas m1, m2;
	struct selftest_result *r;

	if (st_plan(t, &q, 1) || st_measure(t, ST_N1, 0, 0, p4_counter_preset(20), false, &m1) ||
	    st_measure(t, ST_N2, 0, 0, p4_counter_preset(20), false, &m2))
		return -1;
	r = st_new(t, "overflow");
	ksnprintf(r->name, sizeof(r->name), "counter 16 40-bit wrap from FFFFFFFFECH");
	selftest_judge_exact(r, m2.totals[0] - m1.totals[0], st_expect(ST_INSTR));
	ksnprintf(r->note, sizeof(r->note), "loop %u minus loop %u, both wrapping", ST_N2, ST_N1);
	st_emit(t, r);
	return 0;
}

static int st_force_ovf(struct st *t)
{
	static const struct st_ctr q = { .counter = P4_IQ_COUNTER4, .escr = P4_CRU_ESCR0,
					 .spec = "instr_retired:k:force_ovf", .from = ST_NO_FROM };
	struct selftest_result *r;
	struct st_meas m;
	int rc;

	if (st_plan(t, &q, 1))
		return -1;
	t->ovf[0] = 2;
	t->raw = 0;
	t->between = st_force_between;
	rc = st_measure(t, 1, 0, 0, 0, false, &m);
	t->between = NULL;
	if (rc)
		return -1;
	r = st_new(t, "overflow");
	ksnprintf(r->name, sizeof(r->name), "counter 16 FORCE_OVF: OVF without a wrap");
	r->status = t->ovf[0] == 1 && t->raw > 0 && t->raw < BIT(39) ? SELFTEST_PASS : SELFTEST_FAIL;
	ksnprintf(r->measured, sizeof(r->measured), "OVF %llu at count %llu",
		  (unsigned long long)t->ovf[0], (unsigned long long)t->raw);
	ksnprintf(r->expected, sizeof(r->expected), "OVF 1 at a count below 2^39");
	st_emit(t, r);
	return 0;
}

static int st_overflow_flags(struct st *t)
{
	if (st_sticky(t) || st_wrap(t))
		return -1;
	return st_force_ovf(t);
}

/* ---- overflow: PMIs in both delivery modes, LVT auto-mask, workarounds ------- */

/* The sample sink: counts the overflows handled and whether LVT PC was masked meanwhile. */
static uint64_t st_sink(void *ctx, struct trap_frame *f, const struct perf_overflow *ov)
{
	struct st *t = ctx;

	t->hook_calls++;
	if (!lapic_present() || (lapic_read(LAPIC_LVT_PMC) & LAPIC_LVT_MASKED))
		t->hook_masked++;
	return ov->reload;
}

static void st_pmi_result(struct st *t, const char *mode, const char *what, uint64_t got,
			  uint64_t want, const char *note)
{
	struct selftest_result *r = st_new(t, "overflow");

	ksnprintf(r->name, sizeof(r->name), "counter 16 %s, PMI by %s", what, mode);
	selftest_judge_exact(r, got, want);
	ksnprintf(r->note, sizeof(r->note), "%s", note);
	st_emit(t, r);
}

static void st_pmi_judge(struct st *t, enum perf_pmi_mode mode, const struct st_meas *m)
{
	const uint64_t instr = WL_LOOP_K * ST_PMI_N + WL_LOOP_C;
	const uint64_t want = (instr - 1) / ST_PMI_PERIOD;
	const char *name = mode == PERF_PMI_NMI ? "NMI" : "vector F8H";
	char note[96];

	ksnprintf(note, sizeof(note), "ring-3 loop %u, period %u; %llu by vector, %llu by NMI",
		  ST_PMI_N, ST_PMI_PERIOD, (unsigned long long)m->by_vector,
		  (unsigned long long)m->by_nmi);
	st_pmi_result(t, name, "PMIs", mode == PERF_PMI_NMI ? m->by_nmi : m->by_vector, want, note);
	st_pmi_result(t, name, "64-bit count with reloads", m->totals[0], instr,
		      "instr_retired:u");
	st_pmi_result(t, name, "LVT PC masked at handler entry", t->hook_masked, t->hook_calls,
		      "NetBurst masks LVT PC when it delivers a PMI");
	st_pmi_result(t, name, "overflows without CCCR.OVF", m->unflagged, 0,
		      "found by bit 39 instead (fact sheet 6)");
	st_pmi_result(t, name, "reloads read back different", m->mismatches, 0,
		      "counter writes lost (Intel 249199 erratum N15)");
}

static int st_pmis(struct st *t)
{
	static const struct st_ctr q = { .counter = P4_IQ_COUNTER4, .escr = P4_CRU_ESCR0,
					 .spec = "instr_retired:u", .period = ST_PMI_PERIOD,
					 .from = ST_NO_FROM, .pmi = true };
	static const enum perf_pmi_mode modes[2] = { PERF_PMI_FIXED, PERF_PMI_NMI };
	struct st_meas m;
	int r = 0;

	if (st_plan(t, &q, 1))
		return -1;
	perf_set_sink(st_sink, t);
	t->irq = true;
	for (unsigned k = 0; k < 2 && r == 0; k++) {
		perf_set_pmi_mode(modes[k]);
		t->hook_calls = t->hook_masked = 0;
		r = st_measure(t, ST_PMI_N, 3, 0, 0, true, &m);
		if (r == 0)
			st_pmi_judge(t, modes[k], &m);
	}
	t->irq = false;
	perf_set_sink(NULL, NULL);
	perf_set_pmi_mode(t->save_mode);
	return r;
}

/* ---- cascading: bit 30 pairs, CASCNTxINTOy, the cascade-PMI erratum ----------- */

/* What a block's counters count in the cascade checks, and the starter's period. */
struct st_block_event {
	enum p4_escr escr0, escr1;	/* for counters of the ESCR0 / ESCR1 side */
	const char *spec;
	uint64_t period;
	bool exact;			/* retirement event: exact; cycles: within ST_READ_SLACK */
};

static const struct st_block_event st_block_events[P4_NGROUPS] = {
	[P4_GROUP_BPU] = { P4_FSB_ESCR0, P4_FSB_ESCR1, "global_power_events:RUNNING", 256, false },
	[P4_GROUP_MS] = { P4_TBPU_ESCR0, P4_TBPU_ESCR1, "retired_branch_type:CONDITIONAL", 40,
			  true },
	[P4_GROUP_FLAME] = { P4_FIRM_ESCR0, P4_FIRM_ESCR1, "x87_FP_uop:cmp=15:compl", 256, false },
	[P4_GROUP_IQ] = { P4_CRU_ESCR0, P4_CRU_ESCR1, "instr_retired", 100, true },
};

/* Counters of an ESCR1 side: 2,3 / 6,7 / 10,11 / 14,15,17 (fact sheet 3.1). */
static bool st_escr1_side(enum p4_counter c)
{
	return c == P4_IQ_COUNTER5 || (c < P4_IQ_COUNTER4 && (c & 2));
}

static struct st_ctr st_block_ctr(enum p4_counter c, uint64_t period, int from)
{
	const struct st_block_event *b = &st_block_events[p4_counters[c].group];
	struct st_ctr q = { .counter = c, .escr = st_escr1_side(c) ? b->escr1 : b->escr0,
			    .spec = b->spec, .period = period, .from = from };

	if (q.escr == P4_FSB_ESCR1 && !perf_info()->caps.fsb_escr1_ok) {
		q.escr = P4_BPU_ESCR1;	/* fact sheet 1.2 note 2, as in st_counter_ctr */
		q.spec = "BPU_fetch_request:cmp=15:compl";
	}
	return q;
}

static void st_judge_cascade(struct st *t, unsigned from, unsigned to, const struct st_meas *m)
{
	const struct p4_slot *s = &t->plan.slot[to];
	const struct st_block_event *b = &st_block_events[p4_counters[s->counter].group];
	uint64_t k = t->plan.req[from].spec.period;
	uint64_t want = m->totals[from] > k ? m->totals[from] - k : 0;
	struct selftest_result *r = st_new(t, "cascade");

	ksnprintf(r->name, sizeof(r->name), "%s %u -> %u (%s)",
		  s->link->extended ? s->link->name : "bit 30", t->plan.slot[from].counter,
		  s->counter, p4_group_names[p4_counters[s->counter].group]);
	if (m->totals[from] <= k) {	/* the starter never overflowed: nothing was started */
		r->status = SELFTEST_FAIL;
		ksnprintf(r->measured, sizeof(r->measured), "%llu, starter at %llu",
			  (unsigned long long)m->totals[to], (unsigned long long)m->totals[from]);
		ksnprintf(r->expected, sizeof(r->expected), "a starter past its period %llu",
			  (unsigned long long)k);
	} else if (b->exact)
		selftest_judge_exact(r, m->totals[to], want);
	else
		/* read after its starter: up to ST_READ_SLACK more, ST_START_LAG less */
		selftest_judge_range(r, m->totals[to], want > ST_START_LAG ? want - ST_START_LAG : 0,
				     want + ST_READ_SLACK);
	ksnprintf(r->note, sizeof(r->note), "%s: starter's count %llu minus its period %llu",
		  b->spec, (unsigned long long)m->totals[from], (unsigned long long)k);
	st_emit(t, r);
}

/* One run of several cascades: pairs[2k] starts pairs[2k + 1]. */
static int st_cascade_run(struct st *t, const enum p4_counter *pairs, unsigned npairs)
{
	struct st_ctr q[P4_MAX_REQUESTS];
	struct st_meas m;

	for (unsigned k = 0; k < npairs; k++) {
		const struct st_block_event *b = &st_block_events[p4_counters[pairs[2 * k]].group];

		q[2 * k] = st_block_ctr(pairs[2 * k], b->period, ST_NO_FROM);
		q[2 * k + 1] = st_block_ctr(pairs[2 * k + 1], 0, (int)(2 * k));
	}
	if (st_plan(t, q, 2 * npairs) || st_measure(t, ST_CASCADE_N, 0, 0, 0, false, &m))
		return -1;
	for (unsigned k = 0; k < npairs; k++)
		st_judge_cascade(t, 2 * k, 2 * k + 1, &m);
	return 0;
}

/* Every bit-30 link of p4_cascade_links[] (SDM 18.15.5.6), grouped into three runs. */
static const enum p4_counter st_bit30_runs[3][16] = {
	{ 0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11, 12, 14, 13, 15 },
	{ 2, 0, 3, 1, 6, 4, 7, 5, 10, 8, 11, 9, 14, 12, 15, 13 },
	{ 14, 16, 15, 17 },
};
static const unsigned st_bit30_npairs[3] = { 8, 8, 2 };

/* The CASCNTxINTOy links (Table 18-65), grouped into runs that do not share a counter. */
static const enum p4_counter st_ext_runs[3][4] = {
	{ P4_IQ_COUNTER4, P4_IQ_COUNTER0, P4_IQ_COUNTER5, P4_IQ_COUNTER3 },
	{ P4_IQ_COUNTER5, P4_IQ_COUNTER4 },
	{ P4_IQ_COUNTER4, P4_IQ_COUNTER5 },
};
static const unsigned st_ext_npairs[3] = { 2, 1, 1 };

static int st_cascades(struct st *t)
{
	for (unsigned k = 0; k < 3; k++)
		if (st_cascade_run(t, st_bit30_runs[k], st_bit30_npairs[k]))
			return -1;
	if (!perf_info()->caps.ext_cascade) {
		st_skip(t, "cascade", "CASCNTxINTOy (CCCR bit 11)", "this model has no extended "
			"cascading (SDM 18.15.5.7: 0F_02, 0F_03, 0F_04, 0F_06 only)");
		return 0;
	}
	for (unsigned k = 0; k < 3; k++)
		if (st_cascade_run(t, st_ext_runs[k], st_ext_npairs[k]))
			return -1;
	return 0;
}

static void st_erratum_between(struct st *t, const struct perf_count *sess)
{
	uint64_t v = 0;

	msr_bus_read(perf_bus(), p4_counters[t->plan.slot[1].counter].cccr_msr, &v);
	t->ovf[0] = (v & CCCR_OVF) != 0;
}

/*
 * Counter 16, started by 14 through bit 30, samples every 20 instructions
 * with OVF_PMI_T0. Without the erratum its overflows interrupt (the handler
 * clears OVF and reloads); with it none does and OVF stays set.
 */
static int st_erratum(struct st *t)
{
	const struct perf_info *pi = perf_info();
	const struct st_ctr q[2] = {
		{ .counter = P4_IQ_COUNTER2, .escr = P4_CRU_ESCR1, .spec = "instr_retired",
		  .period = 50, .from = ST_NO_FROM },
		{ .counter = P4_IQ_COUNTER4, .escr = P4_CRU_ESCR0, .spec = "instr_retired",
		  .period = 20, .from = 0, .pmi = true },
	};
	bool erratum = pi->caps.cascade_pmi_erratum;
	struct selftest_result *r;
	struct st_meas m;
	char sig[8];
	int rc;

	if (st_plan(t, q, 2))
		return -1;
	t->ovf[0] = 2;
	t->between = st_erratum_between;
	t->irq = true;
	rc = st_measure(t, ST_CASCADE_N, 0, 0, 0, false, &m);
	t->irq = false;
	t->between = NULL;
	if (rc)
		return -1;
	p4_sig_format(&pi->sig, sig, sizeof(sig));
	r = st_new(t, "cascade");
	ksnprintf(r->name, sizeof(r->name), "PMI from cascaded counter 16 (bit 30 from 14)");
	r->status = (erratum ? m.interrupts == 0 && t->ovf[0] == 1 : m.interrupts > 0)
		    ? SELFTEST_PASS : SELFTEST_FAIL;
	ksnprintf(r->measured, sizeof(r->measured), "%llu PMI(s), OVF %llu: %s",
		  (unsigned long long)m.interrupts, (unsigned long long)t->ovf[0],
		  m.interrupts ? "no erratum" : t->ovf[0] == 1 ? "erratum" : "no overflow");
	ksnprintf(r->expected, sizeof(r->expected), erratum ? "0 PMIs, OVF 1: erratum" :
		  "1 or more PMIs: no erratum");
	ksnprintf(r->note, sizeof(r->note), "%s stepping %u: %s (SDM 18.15.5.7)", sig,
		  pi->sig.stepping, erratum ? "erratum predicted, no PMI in cascade mode" :
		  "no cascade-PMI erratum predicted");
	st_emit(t, r);
	return 0;
}

static int st_cascading(struct st *t)
{
	if (st_cascades(t))
		return -1;
	return st_erratum(t);
}

/* ---- RDPMC against RDMSR -------------------------------------------------------- */

static void st_rdpmc_result(struct st *t, bool fast, unsigned good, const char *bad)
{
	struct selftest_result *r = st_new(t, "rdpmc");

	ksnprintf(r->name, sizeof(r->name), "RDPMC %s read = RDMSR, counters 0-17",
		  fast ? "fast (ECX bit 31: EAX only)" : "full (40 bits)");
	selftest_judge_exact(r, good, P4_NCOUNTER);
	ksnprintf(r->note, sizeof(r->note), "%s%s", bad[0] ? "differ: counter" : "", bad);
	st_emit(t, r);
}

static int st_rdpmc_check(struct st *t)
{
	struct msr_bus *bus = perf_bus();
	char bad[2][80] = { "", "" };
	unsigned good[2] = { 0, 0 };

	for (unsigned c = 0; c < P4_NCOUNTER; c++) {
		uint64_t want = (((uint64_t)(0xa0 + c) << 32) | (0x12345600u + c)) & P4_COUNTER_MASK;
		uint64_t msr = ~0ull, full = ~0ull, fast = ~0ull;

		msr_bus_write(bus, p4_counters[c].cccr_msr, 0);
		msr_bus_write(bus, p4_counters[c].msr, want);
		p4_counter_read(bus, c, &msr);
		if (perf_rdpmc(c, &full) == 0 && full == msr)
			good[0]++;
		else
			ksnprintf(bad[0] + strlen(bad[0]), sizeof(bad[0]) - strlen(bad[0]), " %u", c);
		if (perf_rdpmc(c | (uint32_t)BIT(31), &fast) == 0 && fast == (uint32_t)msr)
			good[1]++;
		else
			ksnprintf(bad[1] + strlen(bad[1]), sizeof(bad[1]) - strlen(bad[1]), " %u", c);
		msr_bus_write(bus, p4_counters[c].msr, 0);
	}
	st_rdpmc_result(t, false, good[0], bad[0]);
	st_rdpmc_result(t, true, good[1], bad[1]);
	return 0;
}

/* ---- not implemented yet ---------------------------------------------------------- */

static int st_pebs(struct st *t)
{
	uint64_t misc = 0;

	if (perf_info()->backend == PERF_BACKEND_HW && cpu_read_misc_enable(&misc) == 0 &&
	    (misc & MISC_ENABLE_PEBS_UNAVAIL))
		st_skip(t, "pebs", "PEBS", "IA32_MISC_ENABLE bit 12: PEBS unavailable on this part");
	else
		st_skip(t, "pebs", "PEBS", "PEBS sampling is not implemented yet");
	return 0;
}

static int st_uncore(struct st *t)
{
	const struct p4_caps *c = &perf_info()->caps;
	char why[112];

	if (c->uncore == P4_UNCORE_NONE)
		ksnprintf(why, sizeof(why), "this model has no uncore counters");
	else
		ksnprintf(why, sizeof(why), "%s counters (%s): nbprof does not count with them yet",
			  c->uncore_name, c->uncore_note);
	st_skip(t, "uncore", "uncore L3/FSB counters", why);
	return 0;
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
	msr_bus_read(bus, MSR_PEBS_ENABLE, &t->save_pebs);
	msr_bus_read(bus, MSR_PEBS_MATRIX_VERT, &t->save_matrix);
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
	msr_bus_write(bus, MSR_PEBS_ENABLE, t->save_pebs);
	msr_bus_write(bus, MSR_PEBS_MATRIX_VERT, t->save_matrix);
	for (unsigned c = 0; c < P4_NCOUNTER; c++)
		msr_bus_write(bus, p4_counters[c].cccr_msr, t->save_cccr[c]);
	perf_set_pmi_mode(t->save_mode);
	perf_set_sink(NULL, NULL);
	if (st_fault_kind(t->o->inject) >= 0)
		perf_inject_fault((enum perf_fault)st_fault_kind(t->o->inject), 0, t->err, t->errlen);
}

/* How many of the saved ESCRs and CCCRs read back as saved (counters of stopped CCCRs too). */
static void st_verify_restore(struct st *t)
{
	struct msr_bus *bus = perf_bus();
	unsigned good = 0, total = 0;
	uint64_t v;

	for (unsigned e = 0; e < P4_NESCR; e++) {
		if (!st_escr_exists(e))
			continue;
		total++;
		good += msr_bus_read(bus, p4_escrs[e].msr, &v) == 0 && v == t->save_escr[e];
	}
	for (unsigned c = 0; c < P4_NCOUNTER; c++) {
		total++;
		good += msr_bus_read(bus, p4_counters[c].cccr_msr, &v) == 0 && v == t->save_cccr[c];
		if (t->save_cccr[c] & CCCR_ENABLE)
			continue;	/* a running counter has moved on */
		total++;
		good += p4_counter_read(bus, c, &v) == 0 && v == t->save_ctr[c];
	}
	struct selftest_result *r = st_new(t, "restore");

	ksnprintf(r->name, sizeof(r->name), "PMU registers as before the selftest");
	selftest_judge_exact(r, good, total);
	ksnprintf(r->note, sizeof(r->note), "ESCRs, CCCRs and stopped counters read back");
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
	st_save(t);
	if (st_fault_kind(o->inject) >= 0 &&
	    perf_inject_fault((enum perf_fault)st_fault_kind(o->inject), st_fault_arg(o), err, n))
		return -1;
	return 0;
}

int selftest_run(const struct selftest_opts *opts, struct selftest_result *out, unsigned max,
		 bool *interrupted, char *err, size_t n)
{
	static struct st t;

	t = (struct st){ .o = opts, .out = out, .max = max, .err = err, .errlen = n };
	err[0] = '\0';
	if (st_setup(&t, err, n))
		return -1;
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
