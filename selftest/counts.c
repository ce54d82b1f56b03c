/*
 * selftest/counts.c - the counting checks of `selftest`: every counter, every
 * ESCR on every counter it drives, uops bounds, OS/USR, and the T0/T1 cells
 * of Table 18-66. How each expectation is made: selftest.c's opening comment.
 */
#include "lib/printf.h"
#include "lib/string.h"
#include "pmu/p4_regs.h"
#include "prof/perf.h"
#include "selftest/selftest.h"
#include "selftest/internal.h"

/* ---- counters: every counter counts through an ESCR it can use -------------- */

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

/* FSB_ESCR1 is unusable below signature F27H (PMU reference 1.2 note 2):
 * BPU_ESCR1's cycles then. */
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

static void st_judge_counter(struct st *t, unsigned i, enum st_kind k, uint64_t delta,
			     const struct st_meas *last)
{
	struct selftest_result *r = st_new(t, "counters");
	const struct st_ctr q = st_counter_ctr(&st_counter_rows[i]);

	st_name_slot(t, r, i, q.spec);
	if (k == ST_CYCLES) {
		struct selftest_result added = *r;

		selftest_judge_cycles(r, last->totals[i], WL_LOOP_K * ST_N2 + WL_LOOP_C, last->tsc);
		/* a stuck value passes a range: loop N2's extra instructions add cycles */
		selftest_judge_cycles_added(&added, delta, st_expect(ST_INSTR));
		if (r->status == SELFTEST_PASS && added.status == SELFTEST_FAIL) {
			*r = added;
			ksnprintf(r->measured, sizeof(r->measured), "%llu, %llu more than loop %u",
				  (unsigned long long)last->totals[i], (unsigned long long)delta,
				  ST_N1);
		}
	} else {
		selftest_judge_exact(r, delta, st_expect(k));
		ksnprintf(r->note, sizeof(r->note), "loop %u minus loop %u", ST_N2, ST_N1);
	}
	st_emit(t, r);
}

/*
 * Did any of the 18 counters count the difference between loop ST_N1 and
 * loop ST_N2 (cycles, branches, instructions at OS and USR)? A counter that
 * reads the same value after both counted nothing, whatever it reads. When
 * none did, one line says so before the rest, and every later FAIL names
 * the cause (st_emit).
 */
static void st_any_counted(struct st *t, const uint64_t *d)
{
	struct selftest_result *r;

	for (unsigned i = 0; i < P4_NCOUNTER; i++)
		if (d[i])
			return;
	t->nothing_counted = true;
	r = st_new(t, "counters");
	ksnprintf(r->name, sizeof(r->name), "no counter counted: counters 0-17, loop %u minus "
		  "loop %u", ST_N2, ST_N1);
	r->status = SELFTEST_FAIL;
	ksnprintf(r->measured, sizeof(r->measured), "all 0");
	ksnprintf(r->expected, sizeof(r->expected), "cycles, branches, instructions");
	ksnprintf(r->note, sizeof(r->note), "%s", perf_info()->probe_failed ? perf_info()->probe :
		  "every counter read 0 after a counting run");
	st_emit(t, r);
}

int st_counters(struct st *t)
{
	struct st_ctr q[P4_NCOUNTER];
	uint64_t d[P4_MAX_REQUESTS];
	struct st_meas last;

	for (unsigned i = 0; i < P4_NCOUNTER; i++)
		q[i] = st_counter_ctr(&st_counter_rows[i]);
	if (st_plan(t, q, P4_NCOUNTER) || st_delta(t, 0, 0, d, &last))
		return -1;
	st_any_counted(t, d);
	for (unsigned i = 0; i < P4_NCOUNTER; i++)
		st_judge_counter(t, i, st_counter_rows[i].kind, d[i], &last);
	return 0;
}

/* ---- privilege: OS/USR qualification (ring 0 vs ring 3) -------------------- */

int st_privilege(struct st *t)
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
			if (!counts && d[1 - i] == 0)	/* a 0 means something only beside a count */
				st_no_evidence(r, "the other counter counted nothing at this ring either");
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

/* The deltas of both ESCR bit pairs in the 4 contexts (LP0/LP1, ring 0/3): d[bit][ctx]. */
struct st_cells {
	uint64_t d[4][4];
	uint64_t total[4][4], tsc[4][4];
	unsigned counter[4];
};

/* The cell that counts in ctx (LP ctx/2 at ring 0 or 3): bit Tlp_OS or Tlp_USR. */
static unsigned st_counting_bit(unsigned ctx)
{
	return 2 * (ctx / 2) + ctx % 2;
}

static void st_judge_cell(struct st *t, const struct st_cells *c, unsigned k, unsigned ctx)
{
	struct selftest_result *r = st_new(t, "threads");
	unsigned lp = ctx / 2, j = st_counting_bit(ctx);
	int ring = ctx % 2 ? 3 : 0;

	ksnprintf(r->name, sizeof(r->name), "counter %u %s only, loop on LP%u ring %d",
		  c->counter[k], st_tbit_names[k], lp, ring);
	/*
	 * LP0 waits at CPL 0 while LP1 works, and the wait loop's own
	 * instructions count under T0_OS: on hardware, and in the model too,
	 * which steps the kernel's code in the counting window
	 * (arch/x86/step.h). Their number follows how long LP1 takes, so it is
	 * judged per TSC cycle over the run of loop ST_N2, not as a difference
	 * (selftest_judge_wait_cell).
	 */
	if (k == 0 && lp == 1) {
		selftest_judge_wait_cell(r, c->total[k][ctx], c->tsc[k][ctx]);
	} else {
		selftest_judge_exact(r, c->d[k][ctx], st_tbit_counts(k, lp, ring) ?
				     st_expect(ST_INSTR) : 0);
		ksnprintf(r->note, sizeof(r->note), "instr_retired, loop %u minus loop %u", ST_N2,
			  ST_N1);
		if (k != j && c->d[j][ctx] == 0)	/* a 0 means something only beside a count */
			st_no_evidence(r, "the counting cell of this LP and ring counted nothing "
				       "either");
	}
	st_emit(t, r);
}

int st_threads(struct st *t)
{
	static struct st_cells c;
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
			if (st_delta(t, ctx % 2 ? 3 : 0, ctx / 2, d, &last))
				return -1;
			for (unsigned i = 0; i < 2; i++) {
				c.d[2 * pair + i][ctx] = d[i];
				c.total[2 * pair + i][ctx] = last.totals[i];
				c.tsc[2 * pair + i][ctx] = last.tsc;
				c.counter[2 * pair + i] = q[i].counter;
			}
		}
	}
	for (unsigned pair = 0; pair < 2; pair++)	/* in the order they ran */
		for (unsigned ctx = 0; ctx < 4; ctx++)
			for (unsigned i = 0; i < 2; i++)
				st_judge_cell(t, &c, 2 * pair + i, ctx);
	return 0;
}

/* ---- escrs: every ESCR reaches every counter it drives ------------------------ */

/*
 * The "always true" count (PMU reference 2.4, the old Linux NMI watchdog's
 * trick): event select 3FH with Compare and Complement at threshold 15
 * counts every cycle, since at most 15 events occur in one (SDM 18.15.5.2).
 * Through each ESCR it must give cycles on each counter the ESCR drives
 * (PMU reference 3.1), which checks the whole ESCR-select map.
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

int st_escrs(struct st *t)
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
				"(PMU reference 1.2 note 2)");
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
 * the manual. Skipped where the backend has no input for them (perf_event_source;
 * the model's core model feeds both).
 */
int st_uops(struct st *t)
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
		selftest_judge_uops(r, d[i], d[0]);
		if (d[0] == 0)
			st_no_evidence(r, "instr_retired counted nothing: no bound to judge by");
		st_emit(t, r);
	}
	return 0;
}
