/*
 * selftest/overflow.c - the overflow checks of `selftest`: OVF, FORCE_OVF,
 * the 40-bit wrap, PMIs in both delivery modes with the LVT PC auto-mask,
 * cascades and the cascade-PMI erratum, and RDPMC. How each expectation is
 * made: selftest.c's opening comment.
 */
#include "arch/x86/cpu.h"
#include "arch/x86/lapic.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "pmu/p4_apply.h"
#include "pmu/p4_encode.h"
#include "pmu/p4_regs.h"
#include "prof/perf.h"
#include "selftest/selftest.h"
#include "selftest/internal.h"

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
	if (t->ovf[0] != 1)	/* never set: clearing it shows nothing */
		st_judge_flag(t, "CCCR.OVF cleared by writing the CCCR", t->ovf[0], 1,
			      "OVF was never set, so its clearing cannot be seen");
	else
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

int st_overflow_flags(struct st *t)
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

	/*
	 * An overflow the count's stop found (at_stop; or one without a frame)
	 * is no PMI: the last period's PMI had not come when the workload ended
	 * (a part whose PMI comes some events late), and no delivery masked the
	 * entry. Only PMIs are judged.
	 */
	if (!f || ov->at_stop)
		return ov->reload;
	t->hook_calls++;
	if (!lapic_present() || (lapic_read(LAPIC_LVT_PMC) & LAPIC_LVT_MASKED))
		t->hook_masked++;
	return ov->reload;
}

/* period: judge got as a PMI count over `want` events (a range); 0: exactly want. */
static void st_pmi_result(struct st *t, const char *mode, const char *what, uint64_t got,
			  uint64_t want, uint64_t period, const char *note)
{
	struct selftest_result *r = st_new(t, "overflow");

	ksnprintf(r->name, sizeof(r->name), "counter 16 %s, PMI by %s", what, mode);
	if (period)
		selftest_judge_pmis(r, got, want, period, ST_SKID_MAX);
	else
		selftest_judge_exact(r, got, want);
	ksnprintf(r->note, sizeof(r->note), "%s", note);
	st_emit(t, r);
}

/* LVT PC masked at each handler entry: judged only on PMIs that arrived. */
static void st_pmi_mask(struct st *t, const char *mode)
{
	struct selftest_result *r = st_new(t, "overflow");

	ksnprintf(r->name, sizeof(r->name), "counter 16 LVT PC masked at handler entry, PMI by %s",
		  mode);
	selftest_judge_exact(r, t->hook_masked, t->hook_calls);
	ksnprintf(r->note, sizeof(r->note), "NetBurst masks LVT PC when it delivers a PMI");
	if (t->hook_calls == 0) {
		r->status = SELFTEST_FAIL;
		ksnprintf(r->expected, sizeof(r->expected), "PMIs to look at");
		ksnprintf(r->note, sizeof(r->note), "no PMI reached the handler: nothing to judge");
	}
	st_emit(t, r);
}

static void st_pmi_judge(struct st *t, enum perf_pmi_mode mode, const struct st_meas *m)
{
	/* counted at ring 3 (:u): the loop and the exit trampoline's int 0x80 */
	const uint64_t instr = WL_LOOP_K * ST_PMI_N + WL_LOOP_C + WL_USER_EXIT_INSTR;
	const char *name = mode == PERF_PMI_NMI ? "NMI" : "vector F8H";
	char note[112];

	ksnprintf(note, sizeof(note), "ring-3 loop %u + exit, period %u, skid 0..%u; %llu by vector, "
		  "%llu by NMI", ST_PMI_N, ST_PMI_PERIOD, ST_SKID_MAX,
		  (unsigned long long)m->by_vector, (unsigned long long)m->by_nmi);
	st_pmi_result(t, name, "PMIs", mode == PERF_PMI_NMI ? m->by_nmi : m->by_vector, instr,
		      ST_PMI_PERIOD, note);
	/*
	 * Overflows found by bit 39 with CCCR.OVF clear and reloads that read
	 * back different (Intel 249199 erratum N15) are documented NetBurst
	 * behaviour the handler works around (PMU reference 6): informational, in
	 * the note of the count they would spoil, which stays exact.
	 */
	ksnprintf(note, sizeof(note), "instr_retired:u; informational: %llu overflows without "
		  "CCCR.OVF, %llu reloads read back different (N15)",
		  (unsigned long long)m->unflagged, (unsigned long long)m->mismatches);
	st_pmi_result(t, name, "64-bit count with reloads", m->totals[0], instr, 0, note);
	st_pmi_mask(t, name);
}

int st_pmis(struct st *t)
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

/*
 * What a block's counters count in the cascade checks, and the starter's
 * period. Every event is qualified USR (:u) and the loop runs at ring 3:
 * the kernel stops a pair with two CCCR writes (p4_stop, partner first), and
 * kernel code between them would count for the starter alone, on hardware
 * as in the model, which steps that code. At ring 3 the pair sees the same
 * events from the start on, so the partner's count is the starter's past
 * its period, less the events of the overflow's cycle it may miss: SDM
 * Example 18-1 says only that the partner "begins counting", and
 * instr_retired can add up to three a cycle (selftest_judge_partner). The
 * loop's conditional branches are three instructions apart, so at most one
 * retires a cycle: retired_branch_type is judged exactly.
 */
struct st_block_event {
	enum p4_escr escr0, escr1;	/* for counters of the ESCR0 / ESCR1 side */
	const char *spec;
	uint64_t period;
	uint8_t per_cycle;		/* retirement event: at most this many a cycle (0: cycles,
					 * within ST_READ_SLACK) */
};

static const struct st_block_event st_block_events[P4_NGROUPS] = {
	[P4_GROUP_BPU] = { P4_FSB_ESCR0, P4_FSB_ESCR1, "global_power_events:RUNNING:u", 256, 0 },
	[P4_GROUP_MS] = { P4_TBPU_ESCR0, P4_TBPU_ESCR1, "retired_branch_type:CONDITIONAL:u", 40,
			  1 },
	[P4_GROUP_FLAME] = { P4_FIRM_ESCR0, P4_FIRM_ESCR1, "x87_FP_uop:cmp=15:compl:u", 256, 0 },
	[P4_GROUP_IQ] = { P4_CRU_ESCR0, P4_CRU_ESCR1, "instr_retired:u", 100, 3 },
};

/* Counters of an ESCR1 side: 2,3 / 6,7 / 10,11 / 14,15,17 (PMU reference 3.1). */
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
		q.escr = P4_BPU_ESCR1;	/* PMU reference 1.2 note 2, as in st_counter_ctr */
		q.spec = "BPU_fetch_request:cmp=15:compl:u";
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
	} else if (b->per_cycle)
		selftest_judge_partner(r, m->totals[to], want, b->per_cycle);
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
	if (st_plan(t, q, 2 * npairs) || st_measure(t, ST_CASCADE_N, 3, 0, 0, false, &m))
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
 * clears OVF and reloads); with it none does and OVF stays set. Both count
 * at :u over a ring-3 loop: at CPL 0 the handler's own instructions after
 * the reload would overflow a period-20 counter again before it returned,
 * and on a part without the erratum the PMIs would never end
 * (pmu/p4_alloc.h P4_PMI_TAIL_MAX, which st_add enforces).
 */
static int st_erratum(struct st *t)
{
	const struct perf_info *pi = perf_info();
	const struct st_ctr q[2] = {
		{ .counter = P4_IQ_COUNTER2, .escr = P4_CRU_ESCR1, .spec = "instr_retired:u",
		  .period = 50, .from = ST_NO_FROM },
		{ .counter = P4_IQ_COUNTER4, .escr = P4_CRU_ESCR0, .spec = "instr_retired:u",
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
	rc = st_measure(t, ST_CASCADE_N, 3, 0, 0, false, &m);
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

int st_cascading(struct st *t)
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

int st_rdpmc_check(struct st *t)
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
