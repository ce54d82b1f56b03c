/*
 * p4_model_pebs.c - the PEBS assist and front-end tagging of the software
 * NetBurst PMU.
 *
 * PMU reference 5.1-5.3 and SDM 18.16.3, with the model's decisions:
 * - PEBS is armed for LP t when MSR_PEBS_ENABLE has t's bit (MY_THR or
 *   OTH_THR, relative to the LP that wrote it; the model keeps the
 *   absolute LPs in m->pebs_lps), and only on counter 16 for LP0 and
 *   counter 17 for LP1 (IQ_CCCR4 / IQ_CCCR5), for an event of LP t whose
 *   counter's ESCR holds a PEBS-capable event (front_end_event,
 *   execution_event, replay_event).
 * - On such an overflow the model reads LP t's DS save area at
 *   IA32_DS_AREA[t] in the layout the part uses (p4_ds_form_for: 64-bit
 *   when the signature reports DTES64, models 3, 4 and 6, or in IA-32e
 *   mode; 32-bit only on models 0-2 outside IA-32e), writes one record
 *   (flags, linear IP, general registers of the instruction that caused
 *   the event: p4_model_set_pebs_regs) at the PEBS index, advances the
 *   index, and reloads the counter from the counter-reset field. It never
 *   writes past the absolute maximum: a record that does not fit is
 *   counted in m->pebs_lost[t] and the index stays (the buffer does not
 *   wrap).
 * - The overflow itself stays an overflow (p4_model.c overflow()): CCCR.OVF
 *   is set and the LPs its OVF_PMI bits name get a PMI on the next count,
 *   for every record. The SDM's PEBS set-up lists no OVF_PMI, and perfmon2
 *   saw "a spurious interrupt for every counter overflow" on real P4s when
 *   it set OVF_PMI on IQ_CCCR4; whether OVF is set is not written down, and
 *   the model takes the reading that is harder on software (set).
 * - The threshold PMI: when a record moves the index from below the
 *   interrupt threshold to or past it, LP t gets raise_pmi() (the same LVT
 *   PC vector, PMU reference 5.2 "DS ISR"); m->pebs_pmis[t] counts them. A
 *   handler that drains the buffer resets the index to the base. With a
 *   PMI skid (p4_model_set_skid) the threshold PMI comes one record late,
 *   on the record after the one that reached the threshold, when the
 *   buffer has room for it: the manual gives its latency no more than the
 *   overflow PMI's, and software must drain before the buffer is full. A
 *   threshold PMI raised while the LP's LVT PC entry is masked (its own
 *   handler running) is lost, not held for the unmask as a sticky OVF is
 *   re-raised: nothing in the manual says the buffer's interrupt waits, and
 *   losing it is the harder reading (the kernel looks after its unmask,
 *   prof/perf.c perf_pebs_refilled).
 * - A DS area or buffer the memory callback cannot reach (IA32_DS_AREA 0,
 *   or unmapped): a machine fault (cfg.machine_fault; on hardware a fault
 *   inside the assist, undefined), nothing is written, the counter is
 *   reloaded from 0 (no reset value could be read) and m->pebs_faults
 *   counts it.
 */
#include "pmu/model/p4_model.h"
#include "pmu/model/p4_model_internal.h"
#include "pmu/p4_pebs.h"

/* The PEBS counter of each LP (SDM 18.16.3). */
static bool pebs_counter_lp(enum p4_counter n, unsigned *lp)
{
	if (n != P4_IQ_COUNTER4 && n != P4_IQ_COUNTER5)
		return false;
	*lp = n == P4_IQ_COUNTER4 ? 0 : 1;
	return true;
}

/* Does counter n's ESCR hold front_end_event, execution_event or replay_event? */
static bool pebs_event(const struct p4_model *m, enum p4_counter n)
{
	enum p4_escr e = m->ctr_route[n];
	enum p4_event ev;

	if (e >= P4_NESCR)
		return false;
	if (!p4_event_by_escr(e, (unsigned)field_get(ESCR_EVENT_SELECT, m->escr[e]), &ev))
		return false;
	return (p4_events[ev].flags & P4_EVF_PEBS) != 0;
}

static int mem(struct p4_model *m, uint64_t addr, void *buf, unsigned len, bool write)
{
	if (!m->cfg.mem)
		return -1;
	return m->cfg.mem(m->cfg.mem_ctx, addr, buf, len, write);
}

static void pebs_pmi(struct p4_model *m, unsigned lp)
{
	m->pebs_pmis[lp]++;
	m->pmi_count[lp]++;
	if (m->cfg.raise_pmi)
		m->cfg.raise_pmi(m, lp, m->cfg.ctx);
}

static void pebs_fault(struct p4_model *m, unsigned lp, uint64_t addr)
{
	m->pebs_faults++;
	if (m->cfg.machine_fault)
		m->cfg.machine_fault(m, lp, addr, m->cfg.ctx);
}

enum p4_ds_form p4_model_ds_form(const struct p4_model *m)
{
	return p4_ds_form_for(m->caps.dtes64, !m->cfg.legacy_mode);
}

/* Write one record for LP lp into its DS buffer; the counter's new value. */
static uint64_t pebs_record(struct p4_model *m, unsigned lp)
{
	enum p4_ds_form form = p4_model_ds_form(m);
	const struct p4_ds_layout *l = &p4_ds_layouts[form];
	uint8_t area[0x50], rec[144];
	struct p4_ds_pebs p;
	uint64_t next;

	if (mem(m, m->ds_area[lp], area, l->size, false) != 0) {
		pebs_fault(m, lp, m->ds_area[lp]);
		return 0;
	}
	p4_ds_get_pebs(form, area, &p);
	if (p.index < p.base || p.index + l->record_size > p.max) {
		m->pebs_lost[lp]++;
		return p.reset;
	}
	p4_pebs_record_encode(form, &m->pebs_regs[lp], rec);
	if (mem(m, p.index, rec, l->record_size, true) != 0) {
		pebs_fault(m, lp, p.index);
		return p.reset;
	}
	next = p.index + l->record_size;
	p4_ds_put(form, area, P4_DS_PEBS_INDEX, next);
	if (mem(m, m->ds_area[lp] + l->field_off[P4_DS_PEBS_INDEX],
		area + l->field_off[P4_DS_PEBS_INDEX], l->word, true) != 0) {
		pebs_fault(m, lp, m->ds_area[lp]);
		return p.reset;
	}
	m->pebs_records[lp]++;
	if (m->skid && p.threshold + l->record_size <= p.max)
		p.threshold += l->record_size;	/* with skid: one record late */
	if (p.index < p.threshold && next >= p.threshold)
		pebs_pmi(m, lp);
	return p.reset;
}

bool p4_model_pebs_assist(struct p4_model *m, enum p4_counter n)
{
	unsigned lp;

	if (!pebs_counter_lp(n, &lp) || m->ev_lp != lp || !(m->pebs_lps & (1u << lp)) ||
	    m->cfg.pebs_unavailable || !pebs_event(m, n))
		return false;
	m->counter[n] = pebs_record(m, lp) & P4_COUNTER_MASK;
	return true;
}

int p4_model_set_pebs_regs(struct p4_model *m, unsigned lp, const struct p4_pebs_record *r)
{
	if (lp >= p4_model_nlp(m))
		return -1;
	m->pebs_regs[lp] = *r;
	return 0;
}

/* ---- front-end tagging (PMU reference 5.6) ---------------------------------- */

/*
 * ESCR `side` of upstream event d as LP lp at CPL cpl sees it: its value in
 * *v when it exists, holds d's event select and the LP's T-bit for that CPL.
 */
static bool upstream_escr(const struct p4_model *m, const struct p4_event_desc *d, unsigned side,
			  unsigned lp, unsigned cpl, uint64_t *v)
{
	enum p4_escr e = d->escrs[side];

	if (e == P4_ESCR_NONE || !p4_model_escr_exists(m, e))
		return false;
	*v = m->escr[e];
	return field_get(ESCR_EVENT_SELECT, *v) == d->event_select &&
	       (*v & p4_model_thread_bit(lp, cpl));
}

/* The uop_type TAGLOADS / TAGSTORES mask bits in force for LP lp at CPL cpl. */
static uint16_t front_end_tags(const struct p4_model *m, unsigned lp, unsigned cpl)
{
	const struct p4_event_desc *d = &p4_events[P4_EV_UOP_TYPE];
	uint16_t tags = 0;

	for (unsigned side = 0; side < 2; side++) {
		uint64_t v;

		if (upstream_escr(m, d, side, lp, cpl, &v))
			tags |= (uint16_t)field_get(ESCR_EVENT_MASK, v);
	}
	return tags;
}

int p4_model_retire_mem(struct p4_model *m, unsigned lp, unsigned cpl, unsigned loads,
			unsigned stores)
{
	uint16_t tags;
	uint64_t tagged = 0;

	if (lp >= p4_model_nlp(m) || cpl > 3)
		return -1;
	tags = front_end_tags(m, lp, cpl);
	if (tags & P4_EVMASK(P4_UOP_TYPE_TAGLOADS))
		tagged += loads;
	if (tags & P4_EVMASK(P4_UOP_TYPE_TAGSTORES))
		tagged += stores;
	if (tagged == 0)
		return 0;
	if (p4_model_event(m, lp, cpl, P4_EV_FRONT_END_EVENT,
			   P4_EVMASK(P4_FRONT_END_EVENT_NBOGUS), tagged) != 0)
		return -1;
	return (int)tagged;
}

/* ---- execution tagging (PMU reference 5.7) ----------------------------------- */

/*
 * The tag bits the FIRM ESCRs put on one µop of upstream event `ev` with
 * mask bits `mask` of LP lp at CPL cpl: an ESCR holding ev's event select
 * and one of those mask bits with Tag enable (bit 4) and the LP's T-bit for
 * that CPL contributes its tag value (bits 8:5).
 */
static unsigned exec_tags(const struct p4_model *m, enum p4_event ev, uint16_t mask, unsigned lp,
			  unsigned cpl)
{
	const struct p4_event_desc *d = &p4_events[ev];
	unsigned tags = 0;

	for (unsigned side = 0; side < 2; side++) {
		uint64_t v;

		if (upstream_escr(m, d, side, lp, cpl, &v) && (v & ESCR_TAG_ENABLE) &&
		    (field_get(ESCR_EVENT_MASK, v) & mask))
			tags |= (unsigned)field_get(ESCR_TAG_VALUE, v);
	}
	return tags;
}

int p4_model_retire_exec(struct p4_model *m, unsigned lp, unsigned cpl, enum p4_event ev,
			 unsigned uops)
{
	if (ev >= P4_NEVENT)
		return -1;
	return p4_model_retire_exec_mask(m, lp, cpl, ev, p4_events[ev].default_mask, uops);
}

int p4_model_retire_exec_mask(struct p4_model *m, unsigned lp, unsigned cpl, enum p4_event ev,
			      uint16_t mask, unsigned uops)
{
	unsigned tags;
	int r;

	if (lp >= p4_model_nlp(m) || cpl > 3 || ev >= P4_NEVENT ||
	    !(p4_events[ev].flags & P4_EVF_UPSTREAM_TAG) ||
	    !mask || (mask & ~p4_event_valid_mask(ev)))
		return -1;
	if (uops == 0)
		return 0;
	/* The upstream event counts its µops where a counter reads one of their mask bits. */
	r = p4_model_event(m, lp, cpl, ev, mask, uops);
	tags = exec_tags(m, ev, mask, lp, cpl);
	if (r == 0 && tags)	/* NBOGUSn = mask bit n <-> tag bit n (PMU reference 5.7) */
		r = p4_model_event(m, lp, cpl, P4_EV_EXECUTION_EVENT, (uint16_t)tags, uops);
	return r;
}
