/*
 * p4_model.c - the NetBurst PMU of one core, in software: counting.
 *
 * p4_model_msr.c holds the register side (the msr_bus seam, RDPMC, reset).
 *
 * Sources: PMU reference sections 1-3, 6, 8, 9
 * (docs/reference/netburst-pmu.md) and the SDM (cascading 18.15.5.6, Example 18-1,
 * extended cascading 18.15.5.7, Example 18-2, Tables 18-65 and 18-66).
 * Where the manual leaves a behaviour open, the model decides as follows.
 *
 * Registers and #GP
 * - An MSR the configured part lacks raises #GP (MSR_BUS_EFAULT): IQ_ESCR0/1
 *   except on models 0-2 (p4_escrs[].models, edk2), 3BFH always (SSU_ESCR1
 *   is a Linux guess, PMU reference 1.2 note 1), and the uncore range unless
 *   cfg.uncore and caps.uncore say the part has it.
 * - Writing a set reserved bit raises #GP (the SDM figures mark them
 *   reserved; the model follows WRMSR's general rule). Reserved: ESCR 31 and
 *   63:32; CCCR 10:0, 29:28, 63:32; CCCR bit 11 except on IQ_CCCR0/3/4/5 of
 *   parts with extended cascading (Table 18-65: "MSR_IQ_CCCR1|2:11
 *   Reserved"; SDM 18.15.5.7 names 0F_02/03/04/06); on parts without HT the
 *   T1 bits of ESCRs (1:0), OVF_PMI_T1 (CCCR 27) and PEBS_ENABLE 26 (PMU
 *   reference 2.1, 2.2, 5.3); PEBS_ENABLE 13, 14, 23:17, 63:27 (PMU reference 5.3).
 *   PEBS_MATRIX_VERT and TC_PRECISE_EVENT: only 63:32 (their bit lists are
 *   UNVERIFIED, PMU reference 5.4). MISC_ENABLE bits 7, 11, 12 are read-only:
 *   writes to them are ignored, other bits read back as written.
 * - CCCR bits 17:16 on a part without HT "must be 11b" (SDM figure): the
 *   model accepts any value, because 00b is the reset value and software
 *   zeroes CCCRs at init, but a CCCR whose field is not 11b counts nothing.
 * - A CCCR ESCR-select value that names no ESCR for that counter, or an ESCR
 *   the model lacks, is accepted and counts nothing.
 * - Counter writes keep bits 39:0; bits 63:40 are ignored (PMU reference 6:
 *   sign-extended writes work for OProfile and FreeBSD; UNVERIFIED).
 * - IA32_DS_AREA is per LP (PMU reference 1.3/8 "believed per-LP", UNVERIFIED);
 *   bus accesses act for LP m->bus_lp. TC_PRECISE_EVENT resets to FC00H
 *   (the value perfctr observed, PMU reference 1.3); everything else to 0.
 *
 * Counting
 * - Thread/privilege: a thread-specific (TS) event on LP t at CPL c counts
 *   when the ESCR bit Tt_OS (c = 0) or Tt_USR (c > 0) is set - the rule
 *   stated before Table 18-66, which every cell of the table spells out. A
 *   thread-independent (TI) event counts while some LP is at a CPL that one
 *   of the four bits names, whichever LP caused it (Table 18-67, 2008
 *   editions Table 18-30; p4_ti_counts()). Which events are TI: p4_events[]
 *   flags (SDM Table 19-34), looked up by the ESCR and event select the
 *   ESCR holds. The LP causing
 *   the event is at the CPL the caller gives, the other LP at its current
 *   one (a halted LP keeps its CPL, see below).
 * - Active thread (HT): 00 none, 01 one LP active, 10 both, 11 at least one
 *   (SDM HT CCCR text), evaluated at each event and each cycle close.
 *   Without HT the field has no function beyond the 11b rule above.
 * - Without Compare, a counter adds each qualifying event; n events of one
 *   call are n successive increments, so an overflow in the middle of a call
 *   starts cascaded counters that then see the rest of the call. (A batch
 *   convenience: real hardware adds at most 15 per cycle, SDM 18.15.5.2.)
 * - With Compare, the qualifying events of a cycle form one input value,
 *   capped at 15 (four input lines, SDM 18.15.5.2), examined when the cycle
 *   closes: out = input > threshold, or input <= threshold with Complement;
 *   with Edge the counter adds 1 only when out rises (false in the previous
 *   cycle, true now). A cycle without events still has input 0, so
 *   Complement counts it - but only when the cycle is "qualified": some LP
 *   is at a CPL its ESCR T-bits select ("counts while T0 in USR", Table
 *   18-66), which is what lets the Linux cycles alias (PMU reference 9.12)
 *   honour :u/:k. A halted LP keeps its CPL; whether halted cycles count is
 *   the active-thread field's business alone (so "none" can count cycles in
 *   which both LPs are halted). Edge history restarts at 0 on every CCCR
 *   write and when a cascade starts the counter.
 * - FORCE_OVF: every increment is an overflow (SDM CCCR text).
 * - Fault injection (p4_model_set_faults): a dead counter never counts, as a
 *   broken one would (its registers still read and write); RDPMC of a
 *   faulty counter reads one more than the counter; the erratum can be
 *   flipped, so the part does what its signature does not predict; an ESCR
 *   can have bits stuck at 1 (a write sets bits but cannot clear them), so
 *   software that restores it finds it changed; a CCCR's OVF can stick
 *   once set, so its PMI request never goes away (the endless PMIs of
 *   stale counter state, PMU reference 6) and the storm guard must end it.
 *
 * Overflow, PMI, cascades
 * - Overflow is the increment that wraps FF_FFFF_FFFFH to 0 (or any
 *   increment with FORCE_OVF): CCCR.OVF is set (sticky) and cascades start.
 * - The PMI follows the SDM CCCR text "the PMI is generated on the next
 *   event count after the counter has overflowed" (PMU reference 2.2; SDM
 *   18.18.6.8: preset -99, overflow after 99 events, interrupt on the 100th):
 *   the LPs named by OVF_PMI_T0/T1 at overflow time get raise_pmi() when the
 *   counter next increments. A counter write cancels a PMI still owed.
 * - Skid (p4_model_set_skid, `pmu skid N`): the manual puts the PMI on the
 *   next event but also says that "events and PMIs are separated by
 *   microarchitectural latency" and gives no figure (PMU reference 6). With
 *   skid S the PMI is raised on the (S + 1)-th event after the overflow:
 *   the counter goes on counting S events past the overflow before the
 *   handler can stop it, as a part with a delivery latency of S events
 *   would. S = 0 is the manual's CCCR text; any S is a part the manual
 *   allows, and software must work for all of them (a range, not an exact
 *   PMI count: selftest/overflow.c).
 * - Erratum (SDM 18.15.5.7, PMU reference 2.3): on caps.cascade_pmi_erratum
 *   parts a counter whose own CCCR has bit 30 or bit 11 set raises no PMI;
 *   OVF is still set. Counted in m->pmi_suppressed.
 * - "Starts": a counter whose CCCR has Cascade (bit 30) or a CASCNTxINTOy
 *   bit (bit 11) set and Enable clear is started when its source overflows
 *   and counts from the next event on. What its CCCR reads then is not
 *   written down; SDM Example 18-1 says only that the counter "is
 *   automatically enabled". Two readings, chosen by cfg.cascade_enable_hidden:
 *   - false (the default, and the harder one on software): the start sets
 *     the CCCR's Enable bit, which then reads 1 (a verify that expects the
 *     written value fails), and a later CCCR write decides anew: one that
 *     writes Enable 0 back (a handler restoring the value it programmed)
 *     stops the counter;
 *   - true: the CCCR still reads back as written, and the counter stays
 *     started until a CCCR write clears both bits 30 and 11.
 *   Which counter starts which is p4_cascade_links[]
 *   (p4_tables.c): bit 30: 0<->2, 1<->3 per block, 12<->14, 13<->15, 16 only
 *   from 14, 17 only from 15 (18.15.5.6); bit 11: 12 from 16, 15 from 17,
 *   16 from 17, 17 from 16 (Table 18-65). test_model.c checks those links
 *   against its own transcription of the manual.
 *
 * Routing (speed)
 * - An event never scans the 18 counters. Each CCCR write and each cascade
 *   start recomputes that counter's place in m->escr_ctrs[] (the running
 *   counters whose CCCR selects a given ESCR), m->cmp_running and
 *   m->ovf_set; an event visits only the counters of the ESCRs that observe
 *   it and whose event select, mask and T-bits take it, the clock only the
 *   compare-mode counters, the PMI level only CCCRs with OVF, and an
 *   overflow only the counters p4_cascade_links[] lets it start.
 *   m->examined counts the counters the event path looked at.
 */
#include "pmu/model/p4_model.h"
#include "pmu/model/p4_model_internal.h"
#include "pmu/p4_encode.h"

#define CTR_BIT(n)	(1u << (n))

#define INPUT_MAX	15u
#define LP_BIT(lp)	(1u << (lp))

/* An event as the ESCRs see it. */
struct model_ev {
	uint64_t escrs;		/* P4_MODEL_ESCR set */
	unsigned select;
	uint16_t mask;
	unsigned lp, cpl;
};

/* The lowest counter in the non-empty set *left, taken out of it. */
static enum p4_counter pop_ctr(uint32_t *left)
{
	enum p4_counter c = (enum p4_counter)__builtin_ctz(*left);

	*left &= *left - 1;
	return c;
}

unsigned p4_model_nlp(const struct p4_model *m)
{
	return m->cfg.ht ? P4_MODEL_NLP : 1;
}

bool p4_model_escr_exists(const struct p4_model *m, enum p4_escr e)
{
	return (p4_escrs[e].models & m->caps.escr_models) != 0;
}

bool p4_model_has_ext_source(enum p4_counter n)
{
	for (unsigned i = 0; i < P4_NCASCADE_LINKS; i++)
		if (p4_cascade_links[i].extended && p4_cascade_links[i].to == n)
			return true;
	return false;
}

/* ---- counting helpers --------------------------------------------------- */

static bool counts_at_all(const struct p4_model *m, enum p4_counter n)
{
	/* Non-HT parts require active thread 11b (SDM CCCR figure). */
	return m->cfg.ht || field_get(CCCR_ACTIVE_THREAD, m->cccr[n]) == CCCR_AT_ANY;
}

bool p4_model_running(const struct p4_model *m, enum p4_counter n)
{
	if (n >= P4_NCOUNTER)
		return false;
	if (!(m->cccr[n] & CCCR_ENABLE) && !(m->started & CTR_BIT(n)))
		return false;
	if (m->faults.dead & CTR_BIT(n))
		return false;
	return counts_at_all(m, n);
}

void p4_model_set_faults(struct p4_model *m, const struct p4_model_faults *f)
{
	m->faults = *f;
	m->faults.dead &= CTR_BIT(P4_NCOUNTER) - 1;
	m->faults.rdpmc &= CTR_BIT(P4_NCOUNTER) - 1;
	m->faults.stuck_ovf &= CTR_BIT(P4_NCOUNTER) - 1;
	p4_model_route_all(m);	/* the routing tables follow p4_model_running() */
}

int p4_model_set_skid(struct p4_model *m, uint32_t skid)
{
	if (skid > P4_MODEL_SKID_MAX)
		return -1;
	m->skid = skid;
	return 0;
}

/* Does this part lose PMIs of counters in cascade mode (caps, unless a fault flips it)? */
static bool cascade_pmi_erratum(const struct p4_model *m)
{
	return m->caps.cascade_pmi_erratum != m->faults.erratum_flip;
}

static bool active_thread_ok(const struct p4_model *m, enum p4_counter n)
{
	unsigned nact = 0;

	if (!m->cfg.ht)
		return true;
	for (unsigned lp = 0; lp < P4_MODEL_NLP; lp++)
		nact += m->active[lp];
	switch (field_get(CCCR_ACTIVE_THREAD, m->cccr[n])) {
	case CCCR_AT_NONE:
		return nact == 0;
	case CCCR_AT_SINGLE:
		return nact == 1;
	case CCCR_AT_BOTH:
		return nact == 2;
	default:
		return nact >= 1;
	}
}

/* The ESCR counter n reads, or P4_ESCR_NONE. */
static enum p4_escr counter_escr(const struct p4_model *m, enum p4_counter n)
{
	enum p4_escr e = p4_escr_for_select(n, (unsigned)field_get(CCCR_ESCR_SELECT, m->cccr[n]));

	if (e == P4_ESCR_NONE || !p4_model_escr_exists(m, e))
		return P4_ESCR_NONE;
	return e;
}

/* Does ESCR e hold a thread-independent event (Table 18-67 applies)? */
static bool escr_ti(const struct p4_model *m, enum p4_escr e)
{
	return (m->ti_select[e] >> field_get(ESCR_EVENT_SELECT, m->escr[e])) & 1;
}

/*
 * Table 18-67 for ESCR e now: is some LP at a CPL its T-bits name? LP lp is
 * taken to be at CPL cpl (the LP causing an event), the others at theirs.
 */
static bool ti_qualified(const struct p4_model *m, enum p4_escr e, unsigned lp, unsigned cpl)
{
	bool os = false, usr = false;

	for (unsigned t = 0; t < p4_model_nlp(m); t++) {
		unsigned c = t == lp ? cpl : m->cpl[t];

		os |= c == 0;
		usr |= c != 0;
	}
	return p4_ti_counts(m->escr[e], os, usr);
}

/* Do ESCR e's event select, mask and T-bits take ev? */
static bool escr_matches(const struct p4_model *m, enum p4_escr e, const struct model_ev *ev)
{
	uint64_t v = m->escr[e];

	if (field_get(ESCR_EVENT_SELECT, v) != ev->select)
		return false;
	if (!(field_get(ESCR_EVENT_MASK, v) & ev->mask))
		return false;
	if (v & p4_model_thread_bit(ev->lp, ev->cpl))
		return true;	/* TS by Table 18-66; TI too, the causing LP is at a named CPL */
	return escr_ti(m, e) && ti_qualified(m, e, ev->lp, ev->cpl);
}

/* Is a cycle without events qualified for counter n (see header)? */
static bool cycle_qualified(const struct p4_model *m, enum p4_counter n)
{
	enum p4_escr e = counter_escr(m, n);

	if (e == P4_ESCR_NONE)
		return false;
	if (escr_ti(m, e))
		return ti_qualified(m, e, P4_MODEL_NO_LP, 0);
	for (unsigned lp = 0; lp < p4_model_nlp(m); lp++)
		if (m->escr[e] & p4_model_thread_bit(lp, m->cpl[lp]))
			return true;
	return false;
}

static bool compare_mode(const struct p4_model *m, enum p4_counter n)
{
	return (m->cccr[n] & CCCR_COMPARE) != 0;
}

/* Increments until the next overflow (1 with FORCE_OVF). */
static uint64_t to_overflow(const struct p4_model *m, enum p4_counter n)
{
	if (m->cccr[n] & CCCR_FORCE_OVF)
		return 1;
	return (P4_COUNTER_MASK - m->counter[n]) + 1;
}

/* ---- routing ------------------------------------------------------------ */

static void set_ctr_bit(uint32_t *set, enum p4_counter n, bool on)
{
	*set = on ? *set | CTR_BIT(n) : *set & ~CTR_BIT(n);
}

/* Recompute counter n's routing from its CCCR and m->started. */
static void route_counter(struct p4_model *m, enum p4_counter n)
{
	bool run = p4_model_running(m, n);
	enum p4_escr e = run ? counter_escr(m, n) : P4_ESCR_NONE;
	enum p4_escr old;

	if (n >= P4_NCOUNTER)
		return;
	old = (enum p4_escr)m->ctr_route[n];
	if (old != P4_ESCR_NONE)
		m->escr_ctrs[old] &= ~CTR_BIT(n);
	if (e != P4_ESCR_NONE)
		m->escr_ctrs[e] |= CTR_BIT(n);
	m->ctr_route[n] = (uint8_t)e;
	set_ctr_bit(&m->cmp_running, n, run && compare_mode(m, n));
	set_ctr_bit(&m->ovf_set, n, (m->cccr[n] & CCCR_OVF) != 0);
	set_ctr_bit(&m->cascade_waiting, n,
		    !run && (m->cccr[n] & (CCCR_CASCADE | CCCR_EXT_CASCADE)) != 0);
	m->cascade_armed = 0;
	if (m->cascade_waiting)
		for (unsigned c = 0; c < P4_NCOUNTER; c++)
			if (m->ctr_route[c] != P4_ESCR_NONE)
				m->cascade_armed |= m->cascade_to[c] & m->cascade_waiting;
}

uint64_t p4_model_to_overflow(const struct p4_model *m)
{
	uint64_t best = UINT64_MAX;

	for (unsigned c = 0; c < P4_NCOUNTER; c++)
		if (m->ctr_route[c] != P4_ESCR_NONE) {
			uint64_t d = to_overflow(m, (enum p4_counter)c);

			best = d < best ? d : best;
		}
	return best;
}

/* The ESCRs that observe each event on this part, and the events it lacks. */
static void route_events(struct p4_model *m)
{
	for (unsigned w = 0; w < sizeof(m->ev_missing) / sizeof(m->ev_missing[0]); w++)
		m->ev_missing[w] = 0;
	for (unsigned e = 0; e < P4_NESCR; e++)
		m->ti_select[e] = 0;
	for (unsigned ev = 0; ev < P4_NEVENT; ev++) {
		const struct p4_event_desc *d = &p4_events[ev];
		uint64_t escrs = 0;

		for (unsigned i = 0; i < 2; i++)
			if (d->escrs[i] != P4_ESCR_NONE)
				escrs |= P4_MODEL_ESCR(d->escrs[i]);
		if (d->flags & P4_EVF_TAG_ONLY)
			escrs = 0;	/* uop_type only tags uops, it never counts (PMU reference 4.2) */
		m->ev_escrs[ev] = escrs;
		for (unsigned i = 0; i < 2; i++)
			if ((d->flags & P4_EVF_TI) && d->escrs[i] != P4_ESCR_NONE)
				m->ti_select[d->escrs[i]] |= UINT64_C(1) << d->event_select;
		if (d->need == P4_NEED_INSTR_COMPLETED && !m->caps.instr_completed)
			m->ev_missing[ev / 64] |= UINT64_C(1) << (ev % 64);
	}
}

void p4_model_route_all(struct p4_model *m)
{
	route_events(m);
	for (unsigned e = 0; e < P4_NESCR; e++)
		m->escr_ctrs[e] = 0;
	for (unsigned c = 0; c < P4_NCOUNTER; c++) {
		m->ctr_route[c] = P4_ESCR_NONE;
		m->cascade_to[c] = 0;
	}
	m->cmp_running = m->ovf_set = m->cascade_waiting = m->cascade_armed = 0;
	for (unsigned i = 0; i < P4_NCASCADE_LINKS; i++)
		m->cascade_to[p4_cascade_links[i].from] |= CTR_BIT(p4_cascade_links[i].to);
	for (unsigned c = 0; c < P4_NCOUNTER; c++)
		route_counter(m, c);
}

/* The LPs whose PMI request CCCR value v asserts (OVF with OVF_PMI_Tx, erratum aside). */
static uint8_t pmi_request(const struct p4_model *m, uint64_t v)
{
	uint8_t lps = 0;

	if (!(v & CCCR_OVF))
		return 0;
	if (m->caps.cascade_pmi_erratum && (v & (CCCR_CASCADE | CCCR_EXT_CASCADE)))
		return 0;
	if (v & CCCR_OVF_PMI_T0)
		lps |= LP_BIT(0);
	if (v & CCCR_OVF_PMI_T1)
		lps |= LP_BIT(1);
	return lps;
}

void p4_model_cccr_written(struct p4_model *m, enum p4_counter n)
{
	if (!(m->cccr[n] & (CCCR_CASCADE | CCCR_EXT_CASCADE)))
		m->started &= ~CTR_BIT(n);
	m->edge_prev &= ~CTR_BIT(n);
	m->cycle_input[n] = 0;
	/*
	 * OVF keeps the PMI request asserted until software clears it (PMU
	 * reference 8): clearing OVF, or the OVF_PMI bit of an LP, before the next
	 * count withdraws the PMI still due from this counter.
	 */
	m->pmi_due[n] &= pmi_request(m, m->cccr[n]);
	route_counter(m, n);
}

/* ---- overflow, PMI, cascade --------------------------------------------- */

/* Start every counter that `src` cascades into (p4_cascade_links[]). */
static void cascade_start(struct p4_model *m, enum p4_counter src)
{
	for (uint32_t left = m->cascade_to[src]; left;) {
		enum p4_counter to = pop_ctr(&left);
		const struct p4_cascade_link *l = p4_cascade_find(src, to);
		uint64_t bit = l->extended ? CCCR_EXT_CASCADE : CCCR_CASCADE;
		uint64_t c = m->cccr[to];

		if (!(c & bit) || (c & CCCR_ENABLE) || (m->started & CTR_BIT(to)))
			continue;
		if (m->cfg.cascade_enable_hidden)
			m->started |= CTR_BIT(to);
		else
			m->cccr[to] |= CCCR_ENABLE;	/* "automatically enabled" */
		m->edge_prev &= ~CTR_BIT(to);
		m->cycle_input[to] = 0;
		route_counter(m, to);
	}
}

static void overflow(struct p4_model *m, enum p4_counter n)
{
	uint64_t c = m->cccr[n];
	uint8_t lps = 0;

	/* A PEBS assist writes its record and reloads the counter; the rest follows. */
	p4_model_pebs_assist(m, n);
	m->cccr[n] |= CCCR_OVF;
	m->ovf_set |= CTR_BIT(n);
	m->overflows[n]++;
	if (c & CCCR_OVF_PMI_T0)
		lps |= LP_BIT(0);
	if (c & CCCR_OVF_PMI_T1)
		lps |= LP_BIT(1);
	if (lps && cascade_pmi_erratum(m) && (c & (CCCR_CASCADE | CCCR_EXT_CASCADE))) {
		m->pmi_suppressed++;
		lps = 0;
	}
	if (!m->pmi_due[n])		/* a PMI still owed keeps its event (skid > period) */
		m->pmi_wait[n] = m->skid;
	m->pmi_due[n] |= lps;
	cascade_start(m, n);
}

static void deliver_pmi(struct p4_model *m, enum p4_counter n)
{
	uint8_t lps = m->pmi_due[n];

	m->pmi_due[n] = 0;
	for (unsigned lp = 0; lp < P4_MODEL_NLP; lp++) {
		if (!(lps & LP_BIT(lp)))
			continue;
		m->pmi_count[lp]++;
		if (m->cfg.raise_pmi)
			m->cfg.raise_pmi(m, lp, m->cfg.ctx);
	}
}

/*
 * Add `step` increments to counter n. Callers keep step <= to_overflow(n),
 * so at most the last increment overflows; the loop only guards that rule.
 */
static void counter_add(struct p4_model *m, enum p4_counter n, uint64_t step)
{
	while (step > 0) {
		uint64_t to = to_overflow(m, n);
		uint64_t k = step < to ? step : to;

		if (m->pmi_due[n]) {
			/* the count after the overflow, or skid counts after it */
			if (m->pmi_wait[n] >= k) {
				m->pmi_wait[n] -= (uint32_t)k;
			} else {
				k = m->pmi_wait[n] + 1;		/* up to the PMI's own event */
				m->counter[n] = (m->counter[n] + k) & P4_COUNTER_MASK;
				step -= k;
				deliver_pmi(m, n);
				if (k == to)
					overflow(m, n);
				continue;
			}
		}
		m->counter[n] = (m->counter[n] + k) & P4_COUNTER_MASK;
		step -= k;
		if (k == to)
			overflow(m, n);
	}
}

/* ---- events ------------------------------------------------------------- */

/* Running counters that ev reaches: those of each observing ESCR that takes it. */
static uint32_t event_targets(const struct p4_model *m, const struct model_ev *ev)
{
	uint64_t escrs = ev->escrs;
	uint32_t cand = 0;

	while (escrs) {
		unsigned e = (unsigned)__builtin_ctzll(escrs);

		escrs &= escrs - 1;
		if (e < P4_NESCR && m->escr_ctrs[e] && escr_matches(m, (enum p4_escr)e, ev))
			cand |= m->escr_ctrs[e];
	}
	return cand;
}

static void route_event(struct p4_model *m, const struct model_ev *ev, uint64_t n)
{
	while (n > 0) {
		uint32_t direct = 0, cmp = 0;
		uint64_t step = n;

		/* Recomputed per step: an overflow may have started a cascade. */
		for (uint32_t left = event_targets(m, ev); left;) {
			enum p4_counter c = pop_ctr(&left);

			m->examined++;
			if (compare_mode(m, c)) {
				cmp |= CTR_BIT(c);
			} else if (active_thread_ok(m, c)) {
				uint64_t to = to_overflow(m, c);

				direct |= CTR_BIT(c);
				step = to < step ? to : step;
			}
		}
		if (!direct && !cmp)
			return;
		for (uint32_t left = direct | cmp; left;) {
			enum p4_counter c = pop_ctr(&left);

			if (cmp & CTR_BIT(c)) {
				uint64_t in = m->cycle_input[c] + step;

				m->cycle_input[c] = (uint8_t)(in > INPUT_MAX ? INPUT_MAX : in);
			}
			if (direct & CTR_BIT(c))
				counter_add(m, c, step);
		}
		n -= step;
	}
}

static int check_lp_cpl(const struct p4_model *m, unsigned lp, unsigned *cpl)
{
	if (lp >= p4_model_nlp(m))
		return -1;
	if (*cpl == P4_MODEL_CPL_CURRENT)
		*cpl = m->cpl[lp];
	return *cpl <= 3 ? 0 : -1;
}

int p4_model_event_raw(struct p4_model *m, unsigned lp, unsigned cpl, uint64_t escrs,
		       unsigned event_select, uint16_t mask, uint64_t n)
{
	struct model_ev ev = { escrs, event_select, mask, lp, cpl };

	if (check_lp_cpl(m, lp, &ev.cpl) != 0 || event_select > field_get(ESCR_EVENT_SELECT, ~0ull))
		return -1;
	m->ev_lp = (uint8_t)lp;
	route_event(m, &ev, n);
	m->ev_lp = P4_MODEL_NO_LP;
	return 0;
}

int p4_model_event(struct p4_model *m, unsigned lp, unsigned cpl, enum p4_event ev,
		   uint16_t mask, uint64_t n)
{
	if (ev >= P4_NEVENT || (m->ev_missing[ev / 64] & (UINT64_C(1) << (ev % 64))))
		return -1;
	return p4_model_event_raw(m, lp, cpl, m->ev_escrs[ev], p4_events[ev].event_select, mask, n);
}

/* ---- clock -------------------------------------------------------------- */

/* Comparator output of counter n for this cycle's input. */
static bool compare_out(const struct p4_model *m, enum p4_counter n)
{
	unsigned in = m->cycle_input[n];
	unsigned thr = (unsigned)field_get(CCCR_THRESHOLD, m->cccr[n]);

	if (in == 0 && !cycle_qualified(m, n))
		return false;
	if (m->cccr[n] & CCCR_COMPLEMENT)
		return in <= thr;
	return in > thr;
}

static void close_cycle(struct p4_model *m)
{
	/* Counters a cascade starts during this close begin with the next cycle. */
	for (uint32_t left = m->cmp_running; left;) {
		enum p4_counter c = pop_ctr(&left);
		bool out, fire;

		out = compare_out(m, c);
		fire = out && (!(m->cccr[c] & CCCR_EDGE) || !(m->edge_prev & CTR_BIT(c)));
		m->edge_prev = out ? m->edge_prev | CTR_BIT(c) : m->edge_prev & ~CTR_BIT(c);
		m->cycle_input[c] = 0;
		if (fire && active_thread_ok(m, c))
			counter_add(m, c, 1);
	}
	m->cycles++;
}

/*
 * How many empty cycles can pass in one step: none (0) when some counter
 * needs a cycle of its own (edge state to change, a PMI owed, an overflow
 * due); else the counters that add 1 per cycle get the same amount.
 */
static uint64_t empty_bulk(const struct p4_model *m, uint64_t limit, uint32_t *adders)
{
	uint64_t bulk = limit;

	*adders = 0;
	for (uint32_t left = m->cmp_running; left;) {
		enum p4_counter c = pop_ctr(&left);
		bool out, prev = (m->edge_prev & CTR_BIT(c)) != 0;

		out = compare_out(m, c);
		if (out != prev)
			return 0;
		if (!out || (m->cccr[c] & CCCR_EDGE) || !active_thread_ok(m, c))
			continue;
		if (m->pmi_due[c] || to_overflow(m, c) <= 1)
			return 0;
		if (to_overflow(m, c) - 1 < bulk)
			bulk = to_overflow(m, c) - 1;
		*adders |= CTR_BIT(c);
	}
	return bulk;
}

void p4_model_tick(struct p4_model *m, uint64_t cycles)
{
	if (cycles == 0)
		return;
	close_cycle(m);
	cycles--;
	while (cycles > 0) {
		uint32_t adders;
		uint64_t bulk = empty_bulk(m, cycles, &adders);

		if (bulk == 0) {
			close_cycle(m);
			cycles--;
			continue;
		}
		for (uint32_t left = adders; left;)
			m->counter[pop_ctr(&left)] += bulk;	/* stays below the wrap */
		m->cycles += bulk;
		cycles -= bulk;
	}
}

bool p4_model_pmi_asserted(const struct p4_model *m, unsigned lp)
{
	uint64_t bit = lp == 0 ? CCCR_OVF_PMI_T0 : CCCR_OVF_PMI_T1;

	if (lp >= p4_model_nlp(m))
		return false;
	for (uint32_t left = m->ovf_set; left;) {
		enum p4_counter c = pop_ctr(&left);
		uint64_t v = m->cccr[c];

		if (!(v & bit))
			continue;
		if (cascade_pmi_erratum(m) && (v & (CCCR_CASCADE | CCCR_EXT_CASCADE)))
			continue;
		return true;
	}
	return false;
}

int p4_model_set_active(struct p4_model *m, unsigned lp, bool active)
{
	if (lp >= p4_model_nlp(m))
		return -1;
	m->active[lp] = active;
	return 0;
}

int p4_model_set_cpl(struct p4_model *m, unsigned lp, unsigned cpl)
{
	if (lp >= p4_model_nlp(m) || cpl > 3)
		return -1;
	m->cpl[lp] = (uint8_t)cpl;
	return 0;
}
