/*
 * p4_explain.c - decode raw PMU MSR writes and flag inconsistencies
 * (see p4_explain.h). Everything is derived from the tables: the counter
 * <-> ESCR binding (p4_escr_for_select), the event table (p4_event_by_escr)
 * and the cascade links (p4_cascade_find).
 */
#include "pmu/p4_encode.h"
#include "pmu/p4_events.h"
#include "pmu/p4_explain.h"
#include "pmu/p4_pebs.h"
#include "pmu/p4_regs.h"
#include "pmu/p4_tables.h"
#include "pmu/p4_text.h"
#include "pmu/p4_uncore.h"

struct p4_ex {
	const struct p4_caps *caps;
	bool ht;
	void (*line)(void *ctx, const char *s);
	void *ctx;
	int problems;
	uint64_t escr[P4_NESCR];
	uint64_t escr_written;			/* bit per enum p4_escr */
	uint64_t cccr[P4_NCOUNTER];
	uint64_t ctr[P4_NCOUNTER];
	uint32_t cccr_written, ctr_written;
};

static void p4_ex_out(struct p4_ex *x, bool problem, const char *fmt, ...) KPRINTF_FORMAT(3, 4);

static void p4_ex_out(struct p4_ex *x, bool problem, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n = 0;

	if (problem) {
		buf[0] = '!';
		buf[1] = ' ';
		n = 2;
		x->problems++;
	} else {
		buf[0] = buf[1] = ' ';
		n = 2;
	}
	va_start(ap, fmt);
	kvsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	va_end(ap);
	x->line(x->ctx, buf);
}

static const char *p4_lps(uint64_t escr)
{
	static const char *const names[16] = {
		"nobody (no OS/USR bit set)", "LP1 user", "LP1 kernel", "LP1 user+kernel",
		"LP0 user", "LP0 user, LP1 user", "LP0 user, LP1 kernel", "LP0 user, LP1 all",
		"LP0 kernel", "LP0 kernel, LP1 user", "LP0 kernel, LP1 kernel",
		"LP0 kernel, LP1 all", "LP0 user+kernel", "LP0 all, LP1 user",
		"LP0 all, LP1 kernel", "both LPs, user+kernel",
	};
	return names[escr & 0xf];
}

static const char *p4_lps_nonht(uint64_t escr)
{
	static const char *const names[4] = { "nothing (no OS/USR bit set)", "user", "kernel",
					      "user+kernel" };
	return names[(escr >> 2) & 3];
}

/* A thread-independent event's T-bits under HT (SDM Table 18-67, p4_encode.h). */
static const char *p4_lps_ti(uint64_t escr)
{
	static const char *const names[4] = {
		"nothing (no OS/USR bit set)",
		"both LPs while LP0 or LP1 is in kernel mode (TI event, Table 18-67)",
		"both LPs while LP0 or LP1 is in user mode (TI event, Table 18-67)",
		"both LPs at all times (TI event, Table 18-67)",
	};
	return names[p4_ti_cpls(escr)];
}

/* Whom ESCR e holding v counts: by LP and CPL, or for a TI event by Table 18-67. */
static const char *p4_ex_who(const struct p4_ex *x, enum p4_escr e, uint64_t v)
{
	enum p4_event ev;

	if (!x->ht)
		return p4_lps_nonht(v);
	if (p4_event_by_escr(e, (unsigned)field_get(ESCR_EVENT_SELECT, v), &ev) &&
	    (p4_events[ev].flags & P4_EVF_TI))
		return p4_lps_ti(v);
	return p4_lps(v);
}

/* "instr_retired:NBOGUSNTAG:NBOGUSTAG" or "no event 2AH on CRU_ESCR2"; flags odd mask bits. */
static void p4_ex_event(struct p4_text *t, enum p4_escr e, uint64_t v, uint16_t *undefined)
{
	unsigned sel = (unsigned)field_get(ESCR_EVENT_SELECT, v);
	uint16_t mask = (uint16_t)field_get(ESCR_EVENT_MASK, v);
	enum p4_event ev;

	*undefined = 0;
	if (!p4_event_by_escr(e, sel, &ev)) {
		p4_text_add(t, "no event with select %02XH on %s", sel, p4_escrs[e].name);
		return;
	}
	p4_text_add(t, "%s", p4_events[ev].name);
	for (unsigned k = 0; k < P4_NMASK_BITS; k++) {
		if (!(mask & P4_EVMASK(k)))
			continue;
		if (p4_events[ev].masks[k])
			p4_text_add(t, ":%s", p4_events[ev].masks[k]);
		else
			*undefined |= P4_EVMASK(k);
	}
}

/* Other events with the same select in the same group: "instr_retired on CRU_ESCR0/1". */
static void p4_ex_same_select(struct p4_ex *x, enum p4_escr e, unsigned sel)
{
	char buf[200];
	struct p4_text t;
	int n = 0;

	p4_text_init(&t, buf, sizeof(buf));
	for (int i = 0; i < P4_NEVENT; i++) {
		const struct p4_event_desc *ev = &p4_events[i];
		enum p4_escr any = ev->escrs[0] != P4_ESCR_NONE ? ev->escrs[0] : ev->escrs[1];

		if (ev->event_select != sel || p4_event_uses_escr((enum p4_event)i, e) ||
		    p4_escrs[any].group != p4_escrs[e].group)
			continue;
		p4_text_add(&t, "%s%s on", n++ ? ", " : "", ev->name);
		for (int side = 0; side < 2; side++)
			if (ev->escrs[side] != P4_ESCR_NONE)
				p4_text_add(&t, " %s", p4_escrs[ev->escrs[side]].name);
	}
	if (n)
		p4_ex_out(x, false, "    (event select %02XH means %s)", sel, buf);
}

static void p4_ex_escr_write(struct p4_ex *x, enum p4_escr e, uint64_t v)
{
	char buf[160];
	struct p4_text t;
	uint16_t undefined;

	p4_text_init(&t, buf, sizeof(buf));
	p4_ex_event(&t, e, v, &undefined);
	p4_ex_out(x, false, "%s <- %08llXH: %s, counts %s%s", p4_escrs[e].name,
		  (unsigned long long)v, buf, p4_ex_who(x, e, v),
		  (v & ESCR_TAG_ENABLE) ? ", tags uops" : "");
	p4_ex_same_select(x, e, (unsigned)field_get(ESCR_EVENT_SELECT, v));
	if (!(p4_escrs[e].models & x->caps->escr_models))
		p4_ex_out(x, true, "%s does not exist on this model: WRMSR raises #GP",
			  p4_escrs[e].name);
	if (undefined)
		p4_ex_out(x, true, "%s: event-mask bits %04XH are not defined for this event",
			  p4_escrs[e].name, undefined);
	if (v & ESCR_RESERVED)
		p4_ex_out(x, true, "%s: reserved bits set (%llXH)", p4_escrs[e].name,
			  (unsigned long long)(v & ESCR_RESERVED));
	if (!x->ht && (v & (ESCR_T1_OS | ESCR_T1_USR)))
		p4_ex_out(x, true, "%s: T1 bits are reserved without Hyper-Threading", p4_escrs[e].name);
	x->escr[e] = v;
	x->escr_written |= UINT64_C(1) << e;
}

/* Which counter starts c: the bit-30 partner or the bit-11 source. */
static bool p4_ex_starter(const struct p4_ex *x, enum p4_counter c, uint64_t v,
			  const struct p4_cascade_link **link)
{
	*link = NULL;
	for (int i = 0; i < P4_NCASCADE_LINKS; i++) {
		const struct p4_cascade_link *l = &p4_cascade_links[i];

		if (l->to == c && ((l->extended && (v & CCCR_EXT_CASCADE)) ||
				   (!l->extended && (v & CCCR_CASCADE))))
			*link = l;
	}
	return *link != NULL;
}

static void p4_ex_cccr_checks(struct p4_ex *x, enum p4_counter c, uint64_t v)
{
	const struct p4_cascade_link *l;
	unsigned sel = (unsigned)field_get(CCCR_ESCR_SELECT, v);

	if (p4_escr_for_select(c, sel) == P4_ESCR_NONE)
		p4_ex_out(x, true, "counter %d: ESCR select %u names no ESCR for this counter", c, sel);
	if (v & CCCR_RESERVED)
		p4_ex_out(x, true, "counter %d: reserved CCCR bits set (%llXH)", c,
			  (unsigned long long)(v & CCCR_RESERVED));
	if ((v & CCCR_EXT_CASCADE) && !p4_ex_starter(x, c, v & CCCR_EXT_CASCADE, &l))
		p4_ex_out(x, true, "counter %d: bit 11 is reserved on this CCCR (Table 18-65)", c);
	else if ((v & CCCR_EXT_CASCADE) && !x->caps->ext_cascade)
		p4_ex_out(x, true, "counter %d: no extended cascading on this model (bit 11 reserved)", c);
	if ((v & CCCR_CASCADE) && !p4_ex_starter(x, c, v & CCCR_CASCADE, &l))
		p4_ex_out(x, true, "counter %d: bit 30 cascade has no partner for this counter", c);
	if (!x->ht && field_get(CCCR_ACTIVE_THREAD, v) != CCCR_AT_ANY)
		p4_ex_out(x, true, "counter %d: bits 17:16 must be 11b without Hyper-Threading", c);
	if (!x->ht && (v & CCCR_OVF_PMI_T1))
		p4_ex_out(x, true, "counter %d: OVF_PMI_T1 is reserved without Hyper-Threading", c);
	if (!(v & CCCR_COMPARE) && (v & (CCCR_COMPLEMENT | CCCR_EDGE | CCCR_THRESHOLD)))
		p4_ex_out(x, true, "counter %d: complement/edge/threshold need Compare (bit 18)", c);
}

static void p4_ex_cccr_write(struct p4_ex *x, enum p4_counter c, uint64_t v)
{
	static const char *const at[4] = { "none", "single", "both", "any" };
	unsigned sel = (unsigned)field_get(CCCR_ESCR_SELECT, v);
	enum p4_escr e = p4_escr_for_select(c, sel);
	const struct p4_cascade_link *l;
	char buf[200];
	struct p4_text t;

	p4_text_init(&t, buf, sizeof(buf));
	p4_text_add(&t, "%s", (v & CCCR_ENABLE) ? "enabled" : "disabled");
	if (v & CCCR_COMPARE)
		p4_text_add(&t, ", compare %s %u%s", (v & CCCR_COMPLEMENT) ? "<=" : ">",
			    (unsigned)field_get(CCCR_THRESHOLD, v), (v & CCCR_EDGE) ? " edge" : "");
	if (v & CCCR_FORCE_OVF)
		p4_text_add(&t, ", FORCE_OVF");
	if (v & (CCCR_OVF_PMI_T0 | CCCR_OVF_PMI_T1))
		p4_text_add(&t, ", PMI to %s%s", (v & CCCR_OVF_PMI_T0) ? "LP0" : "",
			    (v & CCCR_OVF_PMI_T1) ? ((v & CCCR_OVF_PMI_T0) ? "+LP1" : "LP1") : "");
	if (p4_ex_starter(x, c, v, &l))
		p4_text_add(&t, ", %s: starts when counter %d overflows", l->name, l->from);
	if (v & CCCR_OVF)
		p4_text_add(&t, ", OVF set");
	p4_ex_out(x, false, "%s (counter %d) <- %08llXH: select %u = %s, active thread %s, %s",
		  p4_counters[c].cccr_name, c, (unsigned long long)v, sel,
		  e == P4_ESCR_NONE ? "(none)" : p4_escrs[e].name,
		  at[field_get(CCCR_ACTIVE_THREAD, v)], buf);
	p4_ex_cccr_checks(x, c, v);
	x->cccr[c] = v;
	x->cccr_written |= P4_CTR(c);
}

static void p4_ex_counter_write(struct p4_ex *x, enum p4_counter c, uint64_t v)
{
	uint64_t v40 = v & P4_COUNTER_MASK;

	p4_ex_out(x, false, "%s (counter %d) <- %llXH", p4_counters[c].name, c, (unsigned long long)v);
	if (v != v40)
		p4_ex_out(x, true, "counter %d: bits 63:40 set; the counter is 40 bits wide", c);
	if (!(v40 & BIT(39)) && (v40 & BIT(31)))
		p4_ex_out(x, true, "counter %d: %llXH is positive in the 40-bit counter: it overflows "
			  "after %llu events, not %llu; write %llXH", c, (unsigned long long)v40,
			  (unsigned long long)((1ull << 40) - v40),
			  (unsigned long long)((1ull << 32) - (v40 & 0xffffffffull)),
			  (unsigned long long)(v40 | BITS(39, 32)));
	x->ctr[c] = v40;
	x->ctr_written |= P4_CTR(c);
}

static void p4_ex_uncore_line(void *ctx, bool problem, const char *s)
{
	p4_ex_out(ctx, problem, "%s", s);
}

/* PEBS_ENABLE and MATRIX_VERT, with the replay-tagging metrics they select (PMU reference 5.5). */
static void p4_ex_pebs_write(struct p4_ex *x, const struct p4_msr_write *w)
{
	uint64_t sel = w->value & (PEBS_ENABLE_METRICS | PEBS_ENABLE_UOP_TAG);
	bool vert = w->msr == MSR_PEBS_MATRIX_VERT;
	char names[160];
	struct p4_text t;

	p4_text_init(&t, names, sizeof(names));
	for (unsigned i = 0; i < P4_NREPLAY_METRIC; i++) {
		const struct p4_replay_metric *m = &p4_replay_metrics[i];

		if (vert ? m->matrix_vert == w->value : m->pebs_enable == sel)
			p4_text_add(&t, "%s%s", t.len ? " | " : "", m->name);
	}
	if (vert)
		p4_ex_out(x, false, "PEBS_MATRIX_VERT <- %llXH%s%s", (unsigned long long)w->value,
			  t.len ? ": as for " : "", names);
	else
		p4_ex_out(x, false, "PEBS_ENABLE <- %llXH: metrics %llXH%s%s%s%s%s",
			  (unsigned long long)w->value,
			  (unsigned long long)(w->value & PEBS_ENABLE_METRICS),
			  (w->value & PEBS_ENABLE_UOP_TAG) ? ", UOP_Tag" : "",
			  (w->value & PEBS_ENABLE_MY_THR) ? ", PEBS for the writing LP" : "",
			  (w->value & PEBS_ENABLE_OTH_THR) ? ", PEBS for the other LP" : "",
			  t.len ? ": replay metric " : "", names);
}

static void p4_ex_write(struct p4_ex *x, const struct p4_msr_write *w)
{
	enum p4_counter c;
	enum p4_escr e;

	if (p4_counter_by_msr(w->msr, &c))
		p4_ex_counter_write(x, c, w->value);
	else if (p4_cccr_by_msr(w->msr, &c))
		p4_ex_cccr_write(x, c, w->value);
	else if (p4_escr_by_msr(w->msr, &e))
		p4_ex_escr_write(x, e, w->value);
	else if (w->msr == MSR_PEBS_ENABLE || w->msr == MSR_PEBS_MATRIX_VERT)
		p4_ex_pebs_write(x, w);
	else if (w->msr >= MSR_P4_UNCORE_FIRST && w->msr <= MSR_P4_UNCORE_LAST)
		p4_unc_describe(x->caps, w->msr, w->value, p4_ex_uncore_line, x);
	else if (p4_msr_is_pmu(w->msr))
		p4_ex_out(x, false, "%XH <- %llXH (PMU MSR, not decoded)", w->msr,
			  (unsigned long long)w->value);
	else
		p4_ex_out(x, true, "%XH <- %llXH: not a NetBurst PMU MSR", w->msr,
			  (unsigned long long)w->value);
}

static bool p4_ex_live(const struct p4_ex *x, int c)
{
	return (x->cccr_written & P4_CTR(c)) &&
	       (x->cccr[c] & (CCCR_ENABLE | CCCR_CASCADE | CCCR_EXT_CASCADE));
}

static enum p4_escr p4_ex_escr_of(const struct p4_ex *x, int c)
{
	return p4_escr_for_select((enum p4_counter)c, (unsigned)field_get(CCCR_ESCR_SELECT, x->cccr[c]));
}

/* "instr_retired:... for LP1 user+kernel" of counter c. */
static void p4_ex_what(const struct p4_ex *x, int c, char *buf, size_t n)
{
	enum p4_escr e = p4_ex_escr_of(x, c);
	struct p4_text t;
	uint16_t undefined;

	p4_text_init(&t, buf, n);
	if (e == P4_ESCR_NONE) {
		p4_text_add(&t, "nothing (invalid ESCR select)");
		return;
	}
	p4_ex_event(&t, e, x->escr[e], &undefined);
	p4_text_add(&t, " for %s via %s", p4_ex_who(x, e, x->escr[e]), p4_escrs[e].name);
}

static void p4_ex_counters(struct p4_ex *x)
{
	char what[200];

	for (int c = 0; c < P4_NCOUNTER; c++) {
		enum p4_escr e;

		if (!p4_ex_live(x, c))
			continue;
		e = p4_ex_escr_of(x, c);
		p4_ex_what(x, c, what, sizeof(what));
		p4_ex_out(x, false, "counter %d counts %s", c, what);
		if (e != P4_ESCR_NONE && !(x->escr_written & (UINT64_C(1) << e)))
			p4_ex_out(x, true, "counter %d: %s is never written here", c, p4_escrs[e].name);
		for (int d = c + 1; d < P4_NCOUNTER; d++)
			if (p4_ex_live(x, d) && p4_ex_escr_of(x, d) == e && e != P4_ESCR_NONE)
				p4_ex_out(x, true, "counters %d and %d both count through %s, which holds "
					  "one setting: they cannot count different events or logical "
					  "processors", c, d, p4_escrs[e].name);
	}
}

static void p4_ex_unused_escrs(struct p4_ex *x)
{
	for (int e = 0; e < P4_NESCR; e++) {
		bool used = false;

		if (!(x->escr_written & (UINT64_C(1) << e)) || x->escr[e] == 0)
			continue;
		for (int c = 0; c < P4_NCOUNTER; c++)
			if (p4_ex_live(x, c) && p4_ex_escr_of(x, c) == (enum p4_escr)e)
				used = true;
		if (used)
			continue;
		p4_ex_out(x, true, "%s is written but no enabled or armed CCCR selects it", p4_escrs[e].name);
		for (int c = 0; c < P4_NCOUNTER; c++) {
			enum p4_escr cur;

			if (!p4_ex_live(x, c) || !(p4_escrs[e].counters & P4_CTR(c)))
				continue;
			cur = p4_ex_escr_of(x, c);
			p4_ex_out(x, true, "counter %d selects %u = %s; %s would need select %u", c,
				  (unsigned)field_get(CCCR_ESCR_SELECT, x->cccr[c]),
				  cur == P4_ESCR_NONE ? "(none)" : p4_escrs[cur].name,
				  p4_escrs[e].name, p4_escrs[e].select);
		}
	}
}

static void p4_ex_cascades(struct p4_ex *x)
{
	char what[200];

	for (int c = 0; c < P4_NCOUNTER; c++) {
		const struct p4_cascade_link *l;
		uint64_t n;

		if (!p4_ex_live(x, c) || !p4_ex_starter(x, (enum p4_counter)c, x->cccr[c], &l))
			continue;
		if (x->cccr[c] & CCCR_ENABLE)
			p4_ex_out(x, true, "counter %d is enabled already: its cascade start has no effect", c);
		if (!p4_ex_live(x, l->from)) {
			p4_ex_out(x, true, "counter %d waits for counter %d (%s), which is not counting",
				  c, l->from, l->name);
			continue;
		}
		n = (1ull << 40) - x->ctr[l->from];
		p4_ex_what(x, l->from, what, sizeof(what));
		p4_ex_out(x, false, "counter %d starts after %llu events of counter %d: %s", c,
			  (unsigned long long)n, l->from, what);
		if (p4_ex_escr_of(x, c) == p4_ex_escr_of(x, l->from))
			p4_ex_out(x, true, "counter %d and its starter %d count the same ESCR setting, so "
				  "the start does not depend on another thread or event", c, l->from);
		if (x->caps->cascade_pmi_erratum && (x->cccr[c] & (CCCR_OVF_PMI_T0 | CCCR_OVF_PMI_T1)))
			p4_ex_out(x, true, "counter %d: no PMI in cascade mode on this part (erratum, "
				  "SDM 18.15.5.7)", c);
	}
}

int p4_explain(const struct p4_msr_write *w, unsigned n, const struct p4_caps *caps, bool ht,
	       void (*line)(void *ctx, const char *s), void *ctx)
{
	static struct p4_ex x;	/* zeroed per call; not re-entrant */

	x = (struct p4_ex){ .caps = caps, .ht = ht, .line = line, .ctx = ctx };
	for (unsigned i = 0; i < n; i++)
		p4_ex_write(&x, &w[i]);
	p4_ex_out(&x, false, "final state:");
	p4_ex_counters(&x);
	p4_ex_unused_escrs(&x);
	p4_ex_cascades(&x);
	return x.problems;
}
