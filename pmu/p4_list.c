/*
 * p4_list.c - the `events [PATTERN]` listing, built only from p4_events[]
 * and p4_escrs[] so that the listing cannot disagree with the tables.
 */
#include "lib/parse.h"
#include "pmu/p4_pebs.h"
#include "pmu/p4_spec.h"
#include "pmu/p4_text.h"

static bool p4_event_name_is(int e, const char *pattern)
{
	enum p4_event found;

	return p4_event_by_name(pattern, (unsigned)parse_strlen(pattern), &found) && (int)found == e;
}

static bool p4_list_available(enum p4_event ev, const struct p4_caps *caps)
{
	if (!caps)
		return true;
	if (p4_events[ev].need == P4_NEED_INSTR_COMPLETED && !caps->instr_completed)
		return false;
	return true;
}

/* "CRU_ESCR0(12,13,16)" */
static void p4_list_escr(struct p4_text *t, enum p4_escr e)
{
	bool first = true;

	if (e == P4_ESCR_NONE) {
		p4_text_add(t, "-");
		return;
	}
	p4_text_add(t, "%s(", p4_escrs[e].name);
	for (int c = 0; c < P4_NCOUNTER; c++) {
		if (p4_escrs[e].counters & P4_CTR(c)) {
			p4_text_add(t, first ? "%d" : ",%d", c);
			first = false;
		}
	}
	p4_text_add(t, ")");
}

static void p4_list_flags(struct p4_text *t, const struct p4_event_desc *ev)
{
	p4_text_add(t, " %s", (ev->flags & P4_EVF_TI) ? "TI" : "TS");
	if (ev->flags & P4_EVF_AT_RETIREMENT)
		p4_text_add(t, " retirement");
	if (ev->flags & P4_EVF_PEBS)
		p4_text_add(t, " PEBS");
	if (ev->flags & P4_EVF_TAG_ONLY)
		p4_text_add(t, " tag-only");
	if (ev->flags & P4_EVF_WANTS_EDGE)
		p4_text_add(t, " edge");
	if (ev->need == P4_NEED_INSTR_COMPLETED)
		p4_text_add(t, " models-3/4/6");
}

static void p4_list_summary(enum p4_event e, const struct p4_caps *caps,
			    void (*line)(void *ctx, const char *s), void *ctx)
{
	const struct p4_event_desc *ev = &p4_events[e];
	char buf[200];
	struct p4_text t;

	p4_text_init(&t, buf, sizeof(buf));
	p4_text_add(&t, "%-28s %02XH sel %u  ", ev->name, ev->event_select, ev->escr_select);
	p4_list_escr(&t, ev->escrs[0]);
	p4_text_add(&t, " / ");
	p4_list_escr(&t, ev->escrs[1]);
	p4_list_flags(&t, ev);
	if (!p4_list_available(e, caps))
		p4_text_add(&t, " (not on this CPU)");
	line(ctx, buf);
}

static void p4_list_detail(enum p4_event e, const struct p4_caps *caps,
			   void (*line)(void *ctx, const char *s), void *ctx)
{
	const struct p4_event_desc *ev = &p4_events[e];
	char buf[200];
	struct p4_text t;

	p4_list_summary(e, caps, line, ctx);
	p4_text_init(&t, buf, sizeof(buf));
	p4_text_add(&t, "  %s", ev->desc);
	line(ctx, buf);
	p4_text_init(&t, buf, sizeof(buf));
	p4_text_add(&t, "  masks (* = default):");
	for (unsigned k = 0; k < P4_NMASK_BITS; k++) {
		if (!ev->masks[k])
			continue;
		if (t.len > 78) {	/* keep serial lines short */
			line(ctx, buf);
			p4_text_init(&t, buf, sizeof(buf));
			p4_text_add(&t, "   ");
		}
		p4_text_add(&t, " %s%s=%u", ev->masks[k],
			    (ev->default_mask & P4_EVMASK(k)) ? "*" : "", k);
	}
	if (ev->flags & P4_EVF_UPSTREAM_TAG)
		p4_text_add(&t, " TAG0..TAG3");
	line(ctx, buf);
	if (ev->note) {
		p4_text_init(&t, buf, sizeof(buf));
		p4_text_add(&t, "  note: %s", ev->note);
		line(ctx, buf);
	}
}

/* One replay-tagging metric (fact sheet 5.5): what stat and record program for it. */
static void p4_list_metric(const struct p4_replay_metric *m,
			   void (*line)(void *ctx, const char *s), void *ctx)
{
	char buf[200];
	struct p4_text t;

	p4_text_init(&t, buf, sizeof(buf));
	p4_text_add(&t, "%-28s replay_event:NBOGUS, PEBS_ENABLE %08XH, MATRIX_VERT %XH", m->name,
		    m->pebs_enable, m->matrix_vert);
	if (m->extra != P4_NEVENT)
		p4_text_add(&t, ", %s on %s", p4_events[m->extra].name, p4_escrs[m->extra_escr].name);
	line(ctx, buf);
}

/* The metrics whose names contain pattern; how many. */
static int p4_list_metrics(const char *pattern, void (*line)(void *ctx, const char *s), void *ctx)
{
	int n = 0;

	for (unsigned i = 0; i < P4_NREPLAY_METRIC; i++) {
		const struct p4_replay_metric *m = &p4_replay_metrics[i];

		if (!p4_text_contains(m->name, parse_strlen(m->name), pattern))
			continue;
		if (n++ == 0)
			line(ctx, "replay-tagging metrics (count replay_event with PEBS_ENABLE bit 24, "
			     "fact sheet 5.5):");
		p4_list_metric(m, line, ctx);
	}
	return n;
}

/* "cycles  global_power_events:RUNNING  non-halted clock cycles" */
static void p4_list_alias(const struct p4_alias *a, void (*line)(void *ctx, const char *s),
			  void *ctx)
{
	struct p4_spec s = { .event = a->event, .mask = a->mask };
	char spec[96], buf[200];
	struct p4_text t;

	s.edge = s.compare = (p4_events[a->event].flags & P4_EVF_WANTS_EDGE) != 0;
	p4_spec_format(&s, spec, sizeof(spec));
	p4_text_init(&t, buf, sizeof(buf));
	p4_text_add(&t, "%-28s %s  (%s)", a->name, spec, a->what);
	line(ctx, buf);
}

/* The generic names that contain pattern under their heading; how many. */
static int p4_list_aliases(const char *pattern, void (*line)(void *ctx, const char *s),
			   void *ctx)
{
	int n = 0;

	for (unsigned i = 0; i < P4_NALIAS; i++) {
		const struct p4_alias *a = &p4_aliases[i];

		if (!p4_text_contains(a->name, parse_strlen(a->name), pattern))
			continue;
		if (n++ == 0)
			line(ctx, "perf's generic names, as Linux's P4 backend maps them "
			     "(p4_general_events):");
		p4_list_alias(a, line, ctx);
	}
	return n;
}

int p4_events_list(const char *pattern, const struct p4_caps *caps,
		   void (*line)(void *ctx, const char *s), void *ctx)
{
	int matched = 0, only = 0;

	if (!pattern)
		pattern = "";
	const struct p4_alias *alias = p4_alias_by_name(pattern, (unsigned)parse_strlen(pattern));

	if (pattern[0] && p4_replay_metric_by_name(pattern, (unsigned)parse_strlen(pattern)))
		return p4_list_metrics(pattern, line, ctx);
	if (pattern[0] && alias) {
		p4_list_alias(alias, line, ctx);
		p4_list_detail(alias->event, caps, line, ctx);
		return 1;
	}
	for (int e = 0; e < P4_NEVENT; e++) {
		if (p4_event_name_is(e, pattern)) {
			p4_list_detail((enum p4_event)e, caps, line, ctx);
			return 1;
		}
	}
	for (int e = 0; e < P4_NEVENT; e++) {
		if (p4_text_contains(p4_events[e].name, parse_strlen(p4_events[e].name), pattern)) {
			matched++;
			only = e;
		}
	}
	if (matched == 1) {
		p4_list_detail((enum p4_event)only, caps, line, ctx);
		return 1 + p4_list_aliases(pattern, line, ctx);
	}
	for (int e = 0; e < P4_NEVENT; e++)
		if (p4_text_contains(p4_events[e].name, parse_strlen(p4_events[e].name), pattern))
			p4_list_summary((enum p4_event)e, caps, line, ctx);
	if (!pattern[0]) {
		p4_list_metrics(pattern, line, ctx);	/* the whole list names them too */
		p4_list_aliases(pattern, line, ctx);
		return matched;
	}
	return matched + p4_list_aliases(pattern, line, ctx);
}
