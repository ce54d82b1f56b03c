/*
 * test_model_random.c - random register programs and event feeds against
 * the software NetBurst PMU (pmu/model/), checked by invariants.
 *
 * Each program boots a model of a random known signature (fact sheet 1.2:
 * models 0, 1, 2, 3, 4, 6), with or without Hyper-Threading, and runs a
 * few dozen random steps through the model's msr_bus and inputs: counter
 * presets (often a few events short of the 40-bit wrap), CCCRs with every
 * field (ESCR select, active thread, compare/complement/threshold/edge,
 * FORCE_OVF, OVF_PMI_T0/T1, cascade bits 30 and 11, OVF), ESCRs, the other
 * PMU MSRs, valid and reserved-bit values, events raw and by name, clock
 * ticks, LP activity and CPL changes, and an overflow handler's "clear
 * OVF". After every step:
 *
 *   - a write that #GPs (MSR_BUS_EFAULT) changed nothing in the model;
 *     one that was accepted reads back as written (counters: bits 39:0);
 *   - a counter only goes down through a write to it or an overflow (the
 *     wrap; fact sheet 6: 40 bits), and a step other than an event, a tick
 *     or a write to it leaves it alone;
 *   - every overflow is visible as CCCR.OVF (sticky until software writes
 *     the CCCR, fact sheet 8) and, when its OVF_PMI bit named an LP, the
 *     LP got its PMI or still has it due - unless the cascade-mode erratum
 *     (fact sheet 2.3) swallowed it, which the model counts;
 *   - no PMI is due from a counter whose OVF is clear: OVF is what keeps
 *     the PMI request asserted (fact sheet 8), so software clearing it
 *     withdraws the request;
 *   - a PMI is raised only for an LP whose request is asserted
 *     (p4_model_pmi_asserted) at that moment.
 *
 * Seeds are fixed, so a failure names its seed and step and reproduces.
 * ASan and UBSan watch for the rest.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "pmu/model/p4_model.h"
#include "pmu/p4_events.h"
#include "pmu/p4_regs.h"
#include "pmu/p4_tables.h"

#define PROGRAMS	5000
#define STEPS		48
#define EVENTS_MAX	4096	/* per event step: FORCE_OVF makes every one an overflow */

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	/* xorshift64* (Vigna) */
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * UINT64_C(2685821657736338717);
}

static uint64_t below(struct rng *r, uint64_t n)
{
	return rnd(r) % n;
}

static bool chance(struct rng *r, unsigned percent)
{
	return below(r, 100) < percent;
}

/* --- the run's state, as the checks need it -------------------------------- */

/* What the programs reached, so the test proves it tested something. */
struct reach {
	uint64_t overflows, pmis, gps, accepted, cascade_starts, ovf_cleared_with_pmi_due;
};

static struct reach reach;

struct run {
	struct p4_model m;
	struct rng r;
	uint64_t seed;
	unsigned step;
	const char *what;		/* the step's kind, for failure messages */
	enum p4_event programmed[4];	/* events set up lately, fed most often */
	uint16_t programmed_mask[4];
	uint64_t pmis_raised[P4_MODEL_NLP];
};

static void fail_at(const struct run *run, const char *msg, unsigned n)
{
	fail_msg("seed %llu step %u (%s), counter %u: %s", (unsigned long long)run->seed, run->step,
		 run->what, n, msg);
}

static void on_pmi(struct p4_model *m, unsigned lp, void *ctx)
{
	struct run *run = ctx;

	run->pmis_raised[lp]++;
	if (!p4_model_pmi_asserted(m, lp))
		fail_at(run, "PMI raised while no CCCR asserts it", lp);
}

static const uint8_t known_models[] = { 0, 1, 2, 3, 4, 6 };

static void run_boot(struct run *run, uint64_t seed)
{
	struct p4_model_config cfg = { .sig = { 0x0f, 0, 0 } };

	memset(run, 0, sizeof(*run));
	run->seed = seed;
	run->r.s = seed * UINT64_C(0x9e3779b97f4a7c15) + 1;
	cfg.sig.model = known_models[below(&run->r, sizeof(known_models))];
	cfg.sig.stepping = (uint8_t)below(&run->r, 16);
	cfg.ht = chance(&run->r, 60);
	cfg.uncore = chance(&run->r, 30);
	cfg.cascade_enable_hidden = chance(&run->r, 50);	/* both readings of a start */
	cfg.raise_pmi = on_pmi;
	cfg.ctx = run;
	assert_int_equal(p4_model_init(&run->m, &cfg), 0);
}

/* --- random register values ------------------------------------------------ */

static uint64_t rand_counter_value(struct rng *r)
{
	switch (below(r, 4)) {
	case 0:
		return (P4_COUNTER_MASK + 1 - 1 - below(r, 64)) & P4_COUNTER_MASK;	/* a few short of the wrap */
	case 1:
		return below(r, 1000);
	case 2:
		return rnd(r) & P4_COUNTER_MASK;
	default:
		return rnd(r);		/* bits 63:40 set: ignored (fact sheet 6) */
	}
}

static uint64_t rand_cccr(struct run *run)
{
	struct rng *r = &run->r;
	uint64_t v = field_prep(CCCR_ESCR_SELECT, below(r, 8)) |
		     field_prep(CCCR_ACTIVE_THREAD, chance(r, 70) ? CCCR_AT_ANY : below(r, 4)) |
		     field_prep(CCCR_THRESHOLD, below(r, 16));

	v |= chance(r, 80) ? CCCR_ENABLE : 0;
	v |= chance(r, 25) ? CCCR_COMPARE : 0;
	v |= chance(r, 15) ? CCCR_COMPLEMENT : 0;
	v |= chance(r, 15) ? CCCR_EDGE : 0;
	v |= chance(r, 10) ? CCCR_FORCE_OVF : 0;
	v |= chance(r, 60) ? CCCR_OVF_PMI_T0 : 0;
	v |= run->m.cfg.ht && chance(r, 40) ? CCCR_OVF_PMI_T1 : 0;
	v |= chance(r, 20) ? CCCR_CASCADE : 0;
	v |= chance(r, 10) ? CCCR_EXT_CASCADE : 0;	/* reserved on most CCCRs and parts */
	v |= chance(r, 10) ? CCCR_OVF : 0;
	if (chance(r, 8))
		v |= BIT(below(r, 64));			/* anything, reserved bits included */
	return v;
}

static uint64_t rand_escr(struct run *run)
{
	struct rng *r = &run->r;
	uint64_t v = field_prep(ESCR_EVENT_SELECT, below(r, 64)) |
		     field_prep(ESCR_EVENT_MASK, rnd(r) & 0xffff) | (rnd(r) & 0xf);

	if (!run->m.cfg.ht && chance(r, 70))
		v &= ~(uint64_t)(ESCR_T1_USR | ESCR_T1_OS);	/* mostly valid without HT */
	if (chance(r, 20))
		v |= field_prep(ESCR_TAG_VALUE, below(r, 16)) | ESCR_TAG_ENABLE;
	if (chance(r, 8))
		v |= BIT(below(r, 64));
	return v;
}

/* --- steps ----------------------------------------------------------------- */

/* What a write must leave behind when accepted: the register reads back so. */
static void check_write(struct run *run, uint32_t msr, uint64_t v, uint64_t readback_mask,
			const struct p4_model *before)
{
	struct p4_model *m = &run->m;
	int r = m->bus.write(&m->bus, msr, v);
	uint64_t back;

	if (r != 0) {
		reach.gps++;
		assert_int_equal(r, MSR_BUS_EFAULT);
		if (memcmp(before, m, sizeof(*m)) != 0)
			fail_at(run, "a write that raised #GP changed the model", msr);
		return;
	}
	reach.accepted++;
	if (readback_mask != 0) {
		assert_int_equal(m->bus.read(&m->bus, msr, &back), 0);
		if (back != (v & readback_mask))
			fail_at(run, "an accepted write does not read back", msr);
	}
}

static void step_write(struct run *run, const struct p4_model *before, uint32_t *written_ctr)
{
	struct rng *r = &run->r;
	enum p4_counter c = (enum p4_counter)below(r, P4_NCOUNTER);
	static const uint32_t others[] = { MSR_PEBS_ENABLE, MSR_PEBS_MATRIX_VERT,
					   MSR_TC_PRECISE_EVENT, MSR_P4_UNCORE_FIRST + 2 };

	switch (below(r, 5)) {
	case 0:
		run->what = "counter write";
		*written_ctr |= 1u << c;
		check_write(run, p4_counters[c].msr, rand_counter_value(r), P4_COUNTER_MASK, before);
		break;
	case 1:
	case 2:
		run->what = "CCCR write";
		check_write(run, p4_counters[c].cccr_msr, rand_cccr(run), ~UINT64_C(0), before);
		break;
	case 3: {
		enum p4_escr e = (enum p4_escr)below(r, P4_NESCR);

		run->what = "ESCR write";
		check_write(run, p4_escrs[e].msr, rand_escr(run), ~UINT64_C(0), before);
		break;
	}
	default:
		run->what = "other PMU MSR write";
		check_write(run, others[below(r, 4)], chance(r, 50) ? rnd(r) : rnd(r) & 0xffff,
			    0, before);
		break;
	}
}

/* Make a counter that c's overflow starts wait for it (cascade bit, Enable clear). */
static void program_cascade(struct run *run, struct p4_model *before, enum p4_counter c)
{
	struct rng *r = &run->r;
	unsigned k = (unsigned)below(r, P4_NCASCADE_LINKS);
	const struct p4_cascade_link *l = &p4_cascade_links[k];
	uint64_t cccr;

	for (unsigned i = 0; i < P4_NCASCADE_LINKS && l->from != c; i++)
		l = &p4_cascade_links[(k + i) % P4_NCASCADE_LINKS];
	if (l->from != c)
		return;
	cccr = (rand_cccr(run) & ~(CCCR_ENABLE | CCCR_CASCADE | CCCR_EXT_CASCADE)) |
	       (l->extended ? CCCR_EXT_CASCADE : CCCR_CASCADE);
	memcpy(before, &run->m, sizeof(run->m));
	check_write(run, p4_counters[l->to].cccr_msr, cccr, ~UINT64_C(0), before);
}

/*
 * Set one event up as software would: its ESCR (event select, a mask
 * taken from the event's defined bits, T0/T1 bits), a counter that ESCR
 * drives, the counter preset and its CCCR naming the ESCR. Each write
 * goes through check_write, so a #GP (no T1 bits without HT, bit 11 on a
 * CCCR without CASCNTxINTOy) is checked the same way.
 */
static void step_program(struct run *run, struct p4_model *before, uint32_t *written_ctr)
{
	struct rng *r = &run->r;
	struct p4_model *m = &run->m;
	enum p4_event ev;
	const struct p4_event_desc *d;
	enum p4_escr e;

	do {
		ev = (enum p4_event)below(r, P4_NEVENT);
		d = &p4_events[ev];
		e = d->escrs[below(r, 2)];
		if (e == P4_ESCR_NONE)
			e = d->escrs[0];
	} while (e == P4_ESCR_NONE);
	uint16_t mask = chance(r, 60) ? d->default_mask : (uint16_t)rnd(r);
	uint32_t ctrs;
	enum p4_counter c;
	uint64_t escr, cccr;

	ctrs = p4_escrs[e].counters;
	do
		c = (enum p4_counter)below(r, P4_NCOUNTER);
	while (!(ctrs & (1u << c)));
	escr = field_prep(ESCR_EVENT_SELECT, d->event_select) | field_prep(ESCR_EVENT_MASK, mask) |
	       (m->cfg.ht ? rnd(r) & 0xf : (rnd(r) & 0xc) | ESCR_T0_USR);
	cccr = (rand_cccr(run) & ~(CCCR_ESCR_SELECT | BIT(below(r, 64)))) |
	       field_prep(CCCR_ESCR_SELECT, p4_escrs[e].select);
	run->programmed[below(r, 4)] = ev;
	run->programmed_mask[below(r, 4)] = mask;
	run->what = "program an event";
	*written_ctr |= 1u << c;
	check_write(run, p4_escrs[e].msr, escr, ~UINT64_C(0), before);
	memcpy(before, m, sizeof(*m));	/* each write is checked on its own */
	check_write(run, p4_counters[c].msr, rand_counter_value(r), P4_COUNTER_MASK, before);
	memcpy(before, m, sizeof(*m));	/* each write is checked on its own */
	check_write(run, p4_counters[c].cccr_msr, cccr, ~UINT64_C(0), before);
	if (chance(r, 40))
		program_cascade(run, before, c);
}

/* An overflow handler's first move: clear OVF in the CCCRs that have it. */
static void step_clear_ovf(struct run *run)
{
	struct p4_model *m = &run->m;

	run->what = "clear OVF";
	for (unsigned c = 0; c < P4_NCOUNTER; c++) {
		if (!(m->cccr[c] & CCCR_OVF) || !chance(&run->r, 70))
			continue;
		reach.ovf_cleared_with_pmi_due += m->pmi_due[c] != 0;
		assert_int_equal(m->bus.write(&m->bus, p4_counters[c].cccr_msr, m->cccr[c] & ~CCCR_OVF), 0);
	}
}

static void step_event(struct run *run)
{
	struct rng *r = &run->r;
	struct p4_model *m = &run->m;
	unsigned lp = (unsigned)below(r, P4_MODEL_NLP);
	unsigned cpl = chance(r, 50) ? P4_MODEL_CPL_CURRENT : (unsigned)below(r, 5);
	uint64_t n = chance(r, 80) ? 1 + below(r, 16) : 1 + below(r, EVENTS_MAX);

	if (chance(r, 60)) {
		unsigned k = (unsigned)below(r, 4);

		run->what = "event of a programmed kind";
		p4_model_event(m, lp, cpl, run->programmed[k],
			       chance(r, 70) ? run->programmed_mask[k] : (uint16_t)rnd(r), n);
	} else if (chance(r, 50)) {
		run->what = "event";
		p4_model_event(m, lp, cpl, (enum p4_event)below(r, P4_NEVENT + 2),
			       (uint16_t)rnd(r), n);
	} else {
		run->what = "raw event";
		p4_model_event_raw(m, lp, cpl, rnd(r) & ((UINT64_C(1) << P4_NESCR) - 1),
				   (unsigned)below(r, 64), (uint16_t)rnd(r), n);
	}
}

static void step_input(struct run *run)
{
	struct rng *r = &run->r;
	struct p4_model *m = &run->m;
	unsigned lp = (unsigned)below(r, 3);

	switch (below(r, 4)) {
	case 0:
		run->what = "tick";
		p4_model_tick(m, 1 + below(r, chance(r, 80) ? 8 : EVENTS_MAX));
		break;
	case 1:
		run->what = "set active";
		p4_model_set_active(m, lp, chance(r, 70));
		break;
	case 2:
		run->what = "set CPL";
		p4_model_set_cpl(m, lp, (unsigned)below(r, 5));
		break;
	default:
		run->what = "set bus LP";
		p4_model_set_bus_lp(m, lp);
		break;
	}
}

/* --- invariants ------------------------------------------------------------ */

static bool erratum_swallows(const struct p4_model *m, uint64_t cccr)
{
	return m->caps.cascade_pmi_erratum && (cccr & (CCCR_CASCADE | CCCR_EXT_CASCADE));
}

static void check_counter(struct run *run, const struct p4_model *b, unsigned n, bool written,
			  bool may_count)
{
	const struct p4_model *m = &run->m;
	uint64_t ovf = m->overflows[n] - b->overflows[n];

	if (written)
		return;
	if (!may_count && (m->counter[n] != b->counter[n] || ovf != 0))
		fail_at(run, "counter changed without an event, tick or write", n);
	if (m->counter[n] < b->counter[n] && ovf == 0)
		fail_at(run, "counter went down without an overflow", n);
	if (ovf == 0)
		return;
	if (!(m->cccr[n] & CCCR_OVF) && (m->cccr[n] == b->cccr[n] || !(b->cccr[n] & CCCR_OVF)))
		fail_at(run, "overflow without CCCR.OVF", n);
}

/* An overflow whose CCCR routed a PMI: raised, still due, or counted as swallowed. */
static void check_overflow_pmi(struct run *run, const struct p4_model *b, unsigned n,
			       uint64_t raised_total)
{
	const struct p4_model *m = &run->m;
	uint64_t c = b->cccr[n] & m->cccr[n];
	bool routed = (c & (CCCR_OVF_PMI_T0 | CCCR_OVF_PMI_T1)) != 0;

	if (m->overflows[n] == b->overflows[n] || !routed || !(m->cccr[n] & CCCR_OVF))
		return;
	if (m->pmi_due[n] == 0 && raised_total == 0 && m->pmi_suppressed == b->pmi_suppressed &&
	    !erratum_swallows(m, m->cccr[n]))
		fail_at(run, "overflow with OVF_PMI neither raised a PMI nor left one due", n);
}

static void check_step(struct run *run, const struct p4_model *b, uint32_t written, bool may_count)
{
	const struct p4_model *m = &run->m;
	uint64_t raised = 0;

	for (unsigned lp = 0; lp < P4_MODEL_NLP; lp++) {
		raised += m->pmi_count[lp] - b->pmi_count[lp];
		reach.pmis += m->pmi_count[lp] - b->pmi_count[lp];
		if (m->pmi_count[lp] != run->pmis_raised[lp])
			fail_at(run, "pmi_count disagrees with raise_pmi calls", lp);
	}
	reach.cascade_starts += __builtin_popcount(m->started & ~b->started);
	for (unsigned n = 0; n < P4_NCOUNTER; n++)	/* a start that set Enable */
		reach.cascade_starts += !((written >> n) & 1) && (m->cccr[n] & CCCR_ENABLE) &&
					!(b->cccr[n] & CCCR_ENABLE);
	for (unsigned n = 0; n < P4_NCOUNTER; n++) {
		reach.overflows += m->overflows[n] - b->overflows[n];
		check_counter(run, b, n, (written >> n) & 1, may_count);
		check_overflow_pmi(run, b, n, raised);
		if (m->pmi_due[n] != 0 && !(m->cccr[n] & CCCR_OVF))
			fail_at(run, "PMI due while the counter's OVF is clear", n);
		if (m->counter[n] > P4_COUNTER_MASK)
			fail_at(run, "counter wider than 40 bits", n);
	}
}

static void run_program(uint64_t seed)
{
	static struct run run;
	static struct p4_model before;

	run_boot(&run, seed);
	for (run.step = 0; run.step < STEPS; run.step++) {
		uint32_t written = 0;
		bool may_count = false;
		uint64_t kind = below(&run.r, 10);

		memcpy(&before, &run.m, sizeof(before));
		if (kind < 2) {
			step_write(&run, &before, &written);
		} else if (kind < 4) {
			step_program(&run, &before, &written);
		} else if (kind < 7) {
			step_event(&run);
			may_count = true;
		} else if (kind < 9) {
			step_input(&run);
			may_count = true;	/* ticks close cycles (compare mode) */
		} else {
			step_clear_ovf(&run);
		}
		check_step(&run, &before, written, may_count);
	}
}

static void random_programs(void **state)
{
	memset(&reach, 0, sizeof(reach));
	for (uint64_t seed = 1; seed <= PROGRAMS; seed++)
		run_program(seed);
	print_message("%d programs: %llu writes accepted, %llu #GP, %llu overflows, %llu PMIs, "
		      "%llu cascade starts, OVF cleared %llu times with a PMI due\n", PROGRAMS,
		      (unsigned long long)reach.accepted, (unsigned long long)reach.gps,
		      (unsigned long long)reach.overflows, (unsigned long long)reach.pmis,
		      (unsigned long long)reach.cascade_starts,
		      (unsigned long long)reach.ovf_cleared_with_pmi_due);
	/* the generator must reach every behaviour the invariants are about */
	assert_true(reach.gps > 100 && reach.accepted > 1000);
	assert_true(reach.overflows > 1000 && reach.pmis > 100);
	assert_true(reach.cascade_starts > 10 && reach.ovf_cleared_with_pmi_due > 10);
}

/*
 * The invariant the random programs found broken: software clears OVF
 * (an overflow handler, or a stop) before the counter's next event; the
 * PMI that was due on that event must not be raised any more.
 */
static void clearing_ovf_withdraws_the_pmi(void **state)
{
	static struct run run;
	struct p4_model *m = &run.m;
	const struct p4_event_desc *ev = &p4_events[P4_EV_INSTR_RETIRED];
	uint64_t cccr = CCCR_ENABLE | field_prep(CCCR_ESCR_SELECT, ev->escr_select) |
			field_prep(CCCR_ACTIVE_THREAD, CCCR_AT_ANY) | CCCR_OVF_PMI_T0;
	uint64_t escr = field_prep(ESCR_EVENT_SELECT, ev->event_select) |
			field_prep(ESCR_EVENT_MASK, P4_EVMASK(P4_INSTR_RETIRED_NBOGUSNTAG)) |
			ESCR_T0_OS | ESCR_T0_USR;

	run_boot(&run, 0);
	run.what = "clear OVF before the next event";
	assert_int_equal(m->bus.write(&m->bus, p4_escrs[ev->escrs[0]].msr, escr), 0);
	assert_int_equal(m->bus.write(&m->bus, p4_counters[P4_IQ_COUNTER0].msr, P4_COUNTER_MASK), 0);
	assert_int_equal(m->bus.write(&m->bus, p4_counters[P4_IQ_COUNTER0].cccr_msr, cccr), 0);
	/* -1: the first event overflows; the PMI is due on the next one (fact sheet 2.2) */
	p4_model_event(m, 0, 0, P4_EV_INSTR_RETIRED, P4_EVMASK(P4_INSTR_RETIRED_NBOGUSNTAG), 1);
	assert_true(m->cccr[P4_IQ_COUNTER0] & CCCR_OVF);
	assert_true(p4_model_pmi_asserted(m, 0));
	assert_int_equal(m->bus.write(&m->bus, p4_counters[P4_IQ_COUNTER0].cccr_msr, cccr), 0);
	assert_false(p4_model_pmi_asserted(m, 0));
	p4_model_event(m, 0, 0, P4_EV_INSTR_RETIRED, P4_EVMASK(P4_INSTR_RETIRED_NBOGUSNTAG), 5);
	assert_int_equal(m->pmi_count[0], 0);
	assert_int_equal(m->counter[P4_IQ_COUNTER0], 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(clearing_ovf_withdraws_the_pmi),
		cmocka_unit_test(random_programs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
