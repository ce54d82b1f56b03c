/*
 * p4_spec.c - parse and print libpfm4-style event specs (see p4_spec.h).
 *
 * The parser walks the ':'-separated tokens once. The first token names the
 * event; every later token is a mask bit of that event or a modifier. Any
 * bad token ends the parse with one message that gives its column and the
 * tokens that would have been valid there; *out is written only on success.
 */
#include "lib/parse.h"
#include "pmu/p4_pebs.h"
#include "pmu/p4_spec.h"
#include "pmu/p4_text.h"

struct p4_tok {
	const char *s;
	unsigned pos, len;
};

static const char p4_spec_modifiers[] =
	"u k t0 t1 cmp=N compl edge noedge force_ovf pebs period=N after=N";

#define EVM(ev, bit)	P4_EVMASK(P4_##ev##_##bit)

/*
 * Linux's P4 backend binds the generic events so (p4_general_events): the
 * same event and mask bits here; bus-cycles also sets CCCR edge and compare
 * there, which FSB_data_activity gets here by default (P4_EVF_WANTS_EDGE).
 * cpu-cycles and branches are perf's own synonyms of cycles and
 * branch-instructions.
 */
const struct p4_alias p4_aliases[P4_NALIAS] = {
	{ "cycles", P4_EV_GLOBAL_POWER_EVENTS, EVM(GLOBAL_POWER_EVENTS, RUNNING),
	  "non-halted clock cycles" },
	{ "cpu-cycles", P4_EV_GLOBAL_POWER_EVENTS, EVM(GLOBAL_POWER_EVENTS, RUNNING),
	  "perf's synonym of cycles" },
	{ "clockticks", P4_EV_GLOBAL_POWER_EVENTS, EVM(GLOBAL_POWER_EVENTS, RUNNING),
	  "the manuals' name for non-halted clockticks" },
	{ "instructions", P4_EV_INSTR_RETIRED,
	  EVM(INSTR_RETIRED, NBOGUSNTAG) | EVM(INSTR_RETIRED, BOGUSNTAG),
	  "retired instructions, untagged, bogus ones too" },
	{ "cache-references", P4_EV_BSQ_CACHE_REFERENCE,
	  EVM(BSQ_CACHE_REFERENCE, RD_2NDL_HITS) | EVM(BSQ_CACHE_REFERENCE, RD_2NDL_HITE) |
	  EVM(BSQ_CACHE_REFERENCE, RD_2NDL_HITM) | EVM(BSQ_CACHE_REFERENCE, RD_3RDL_HITS) |
	  EVM(BSQ_CACHE_REFERENCE, RD_3RDL_HITE) | EVM(BSQ_CACHE_REFERENCE, RD_3RDL_HITM),
	  "L2 and L3 read hits" },
	{ "cache-misses", P4_EV_BSQ_CACHE_REFERENCE,
	  EVM(BSQ_CACHE_REFERENCE, RD_2NDL_MISS) | EVM(BSQ_CACHE_REFERENCE, RD_3RDL_MISS) |
	  EVM(BSQ_CACHE_REFERENCE, WR_2NDL_MISS),
	  "L2 and L3 read misses, L2 write misses" },
	{ "branch-instructions", P4_EV_RETIRED_BRANCH_TYPE,
	  EVM(RETIRED_BRANCH_TYPE, CONDITIONAL) | EVM(RETIRED_BRANCH_TYPE, CALL) |
	  EVM(RETIRED_BRANCH_TYPE, RETURN) | EVM(RETIRED_BRANCH_TYPE, INDIRECT),
	  "retired branches of every type" },
	{ "branches", P4_EV_RETIRED_BRANCH_TYPE,
	  EVM(RETIRED_BRANCH_TYPE, CONDITIONAL) | EVM(RETIRED_BRANCH_TYPE, CALL) |
	  EVM(RETIRED_BRANCH_TYPE, RETURN) | EVM(RETIRED_BRANCH_TYPE, INDIRECT),
	  "perf's synonym of branch-instructions" },
	{ "branch-misses", P4_EV_MISPRED_BRANCH_RETIRED, EVM(MISPRED_BRANCH_RETIRED, NBOGUS),
	  "retired mispredicted branches" },
	{ "bus-cycles", P4_EV_FSB_DATA_ACTIVITY,
	  EVM(FSB_DATA_ACTIVITY, DRDY_DRV) | EVM(FSB_DATA_ACTIVITY, DRDY_OWN),
	  "bus ready clocks this processor drives, edges" },
};

static int p4_lc(int c)
{
	return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c;
}

static bool p4_tok_is(const struct p4_tok *t, const char *word)
{
	unsigned i;

	for (i = 0; i < t->len; i++)
		if (word[i] == '\0' || p4_lc(t->s[i]) != word[i])
			return false;
	return word[i] == '\0';
}

/* "key=value" token: on a match *val names the value. */
static bool p4_tok_key(const struct p4_tok *t, const char *key, struct p4_tok *val)
{
	unsigned i;

	for (i = 0; key[i]; i++)
		if (i >= t->len || p4_lc(t->s[i]) != key[i])
			return false;
	if (i >= t->len || t->s[i] != '=')
		return false;
	val->s = t->s + i + 1;
	val->pos = t->pos + i + 1;
	val->len = t->len - i - 1;
	return true;
}

/* Decimal, 0x hex or manual-style hex with an H suffix. */
static bool p4_parse_num(const struct p4_tok *v, uint64_t max, uint64_t *out)
{
	unsigned i = 0, end = v->len, base = 10;
	uint64_t x = 0;

	if (end >= 2 && v->s[0] == '0' && p4_lc(v->s[1]) == 'x') {
		base = 16;
		i = 2;
	} else if (end >= 1 && p4_lc(v->s[end - 1]) == 'h') {
		base = 16;
		end--;
	}
	if (i >= end)
		return false;
	for (; i < end; i++) {
		int c = p4_lc(v->s[i]);
		unsigned d;

		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else
			return false;
		if (x > (max - d) / base)
			return false;
		x = x * base + d;
	}
	*out = x;
	return true;
}

const struct p4_alias *p4_alias_by_name(const char *name, unsigned len)
{
	struct p4_tok t = { name, 0, len };

	for (unsigned i = 0; i < P4_NALIAS; i++)
		if (p4_tok_is(&t, p4_aliases[i].name))
			return &p4_aliases[i];
	return NULL;
}

static int p4_spec_fail(struct p4_spec_error *err, const struct p4_tok *t, const char *what)
{
	struct p4_text m;

	p4_text_init(&m, err->msg, sizeof(err->msg));
	p4_text_add(&m, "column %u: %s '%.*s'", t->pos + 1, what, (int)t->len, t->s);
	err->pos = t->pos;
	err->len = t->len;
	return -1;
}

static bool p4_event_name_has(int e, const char *key)
{
	const char *n = p4_events[e].name;
	size_t len = 0;

	while (n[len])
		len++;
	return p4_text_contains(n, len, key);
}

/* Append "; valid: <names...>" of close event names, or all of them. */
static void p4_spec_event_choices(struct p4_spec_error *err, const struct p4_tok *t)
{
	struct p4_text m = { err->msg, sizeof(err->msg), 0, 0 };
	char key[4] = { 0 };
	int close = 0;

	while (m.len < m.size && err->msg[m.len])
		m.len++;
	for (unsigned i = 0; i < 3 && i < t->len; i++)
		key[i] = (char)p4_lc(t->s[i]);
	for (int e = 0; e < P4_NEVENT; e++)
		if (t->len >= 3 && p4_event_name_has(e, key))
			close++;
	for (unsigned a = 0; a < P4_NALIAS; a++)
		if (t->len >= 3 && p4_text_contains(p4_aliases[a].name,
						    parse_strlen(p4_aliases[a].name), key))
			close++;
	p4_text_add(&m, "; valid events%s:", close ? " like it" : "");
	for (int e = 0; e < P4_NEVENT; e++)
		if (!close || p4_event_name_has(e, key))
			p4_text_add(&m, " %s", p4_events[e].name);
	for (unsigned a = 0; a < P4_NALIAS; a++)
		if (!close || p4_text_contains(p4_aliases[a].name,
					       parse_strlen(p4_aliases[a].name), key))
			p4_text_add(&m, " %s", p4_aliases[a].name);
}

static void p4_spec_mask_choices(struct p4_spec_error *err, enum p4_event ev)
{
	struct p4_text m = { err->msg, sizeof(err->msg), 0, 0 };

	while (m.len < m.size && err->msg[m.len])
		m.len++;
	p4_text_add(&m, "; valid for %s:", p4_events[ev].name);
	for (unsigned k = 0; k < P4_NMASK_BITS; k++)
		if (p4_events[ev].masks[k])
			p4_text_add(&m, " %s", p4_events[ev].masks[k]);
	if (p4_events[ev].flags & P4_EVF_UPSTREAM_TAG)
		p4_text_add(&m, " TAG0 TAG1 TAG2 TAG3");
	p4_text_add(&m, " %s", p4_spec_modifiers);
}

static void p4_spec_hint(struct p4_spec_error *err, const char *hint)
{
	struct p4_text m = { err->msg, sizeof(err->msg), 0, 0 };

	while (m.len < m.size && err->msg[m.len])
		m.len++;
	p4_text_add(&m, "; %s", hint);
}

/* TAG0..TAG3 on events that may tag (fact sheet 5.7, libpfm4's pseudo-masks). */
static bool p4_spec_tag(const struct p4_tok *t, struct p4_spec *s)
{
	static const char *const tags[4] = { "tag0", "tag1", "tag2", "tag3" };

	if (!(p4_events[s->event].flags & P4_EVF_UPSTREAM_TAG))
		return false;
	for (unsigned i = 0; i < 4; i++) {
		if (p4_tok_is(t, tags[i])) {
			s->tag_value |= (uint8_t)(1u << i);
			return true;
		}
	}
	return false;
}

/* Returns 1 when t was a modifier and applied, 0 when not a modifier, -1 on error. */
static int p4_spec_modifier(const struct p4_tok *t, struct p4_spec *s, bool *edge_set,
			    struct p4_spec_error *err)
{
	struct p4_tok v;
	uint64_t x;

	if (p4_tok_is(t, "u")) {
		s->usr = true;
	} else if (p4_tok_is(t, "k")) {
		s->os = true;
	} else if (p4_tok_is(t, "t0") || p4_tok_is(t, "t1")) {
		enum p4_thread th = p4_tok_is(t, "t0") ? P4_THREAD_T0 : P4_THREAD_T1;

		if (s->thread != P4_THREAD_DEFAULT && s->thread != th)
			return p4_spec_fail(err, t, "only one of t0 and t1 may be given:");
		s->thread = th;
	} else if (p4_tok_key(t, "cmp", &v)) {
		if (!p4_parse_num(&v, 15, &x))
			return p4_spec_fail(err, &v, "cmp= wants a threshold 0-15, not");
		s->threshold = (uint8_t)x;
		s->compare = true;
	} else if (p4_tok_is(t, "compl")) {
		s->complement = s->compare = true;
	} else if (p4_tok_is(t, "edge") || p4_tok_is(t, "noedge")) {
		s->edge = p4_tok_is(t, "edge");
		*edge_set = true;
	} else if (p4_tok_is(t, "force_ovf")) {
		s->force_ovf = true;
	} else if (p4_tok_is(t, "pebs")) {
		if (!(p4_events[s->event].flags & P4_EVF_PEBS)) {
			p4_spec_fail(err, t, "PEBS is not possible for this event:");
			p4_spec_hint(err, "only front_end_event, execution_event and replay_event "
					  "can use PEBS (SDM 18.16.3)");
			return -1;
		}
		s->pebs = true;
	} else if (p4_tok_key(t, "period", &v)) {
		if (!p4_parse_num(&v, P4_PERIOD_MAX, &x) || x == 0)
			return p4_spec_fail(err, &v, "period= wants 1 .. 2^39-1, not");
		s->period = x;
	} else if (p4_tok_key(t, "after", &v)) {
		if (!p4_parse_num(&v, P4_PERIOD_MAX, &x) || x == 0)
			return p4_spec_fail(err, &v, "after= wants 1 .. 2^39-1, not");
		s->after = x;
	} else {
		return 0;
	}
	return 1;
}

static int p4_spec_event(const struct p4_tok *t, const struct p4_caps *caps, struct p4_spec *s,
			 struct p4_spec_error *err)
{
	if (t->len == 0) {
		p4_spec_fail(err, t, "missing event name");
		p4_spec_event_choices(err, t);
		return -1;
	}
	if (!p4_event_by_name(t->s, t->len, &s->event)) {
		const struct p4_replay_metric *m = p4_replay_metric_by_name(t->s, t->len);
		const struct p4_alias *a = p4_alias_by_name(t->s, t->len);

		if (a) {	/* its event and mask bits, as if spelled out */
			s->event = a->event;
			s->mask = a->mask;
			return 0;
		}
		if (m) {	/* replay_event with the metric's tagging (fact sheet 5.5) */
			s->event = P4_EV_REPLAY_EVENT;
			s->metric = (uint8_t)(m - p4_replay_metrics + 1);
			return 0;
		}
		p4_spec_fail(err, t, "unknown event");
		p4_spec_event_choices(err, t);
		return -1;
	}
	if (caps && p4_events[s->event].need == P4_NEED_INSTR_COMPLETED && !caps->instr_completed) {
		char sig[8];

		p4_sig_format(&caps->sig, sig, sizeof(sig));
		p4_spec_fail(err, t, "not available on this CPU:");
		p4_spec_hint(err, "instr_completed exists on models 3, 4 and 6 only");
		p4_spec_hint(err, sig);
		return -1;
	}
	return 0;
}

/* Checks that need the whole spec; `last` points at the end for the column. */
static int p4_spec_finish(struct p4_spec *s, const struct p4_tok *last, bool edge_set,
			  struct p4_spec_error *err)
{
	const struct p4_event_desc *ev = &p4_events[s->event];

	/*
	 * A tag without mask bits tags the event's default µops (ALL): with an
	 * empty event mask the upstream ESCR would select, and so tag, nothing
	 * (fact sheet 5.7: each set tag bit marks µops of the upstream event).
	 */
	if (s->mask == 0) {
		if (ev->flags & P4_EVF_NEEDS_MASK) {
			p4_spec_fail(err, last, "this event needs explicit mask bits after");
			p4_spec_mask_choices(err, s->event);
			return -1;
		}
		s->mask = ev->default_mask;
		s->mask_default = true;
	}
	if (!edge_set && (ev->flags & P4_EVF_WANTS_EDGE))
		s->edge = true;
	if (s->edge)
		s->compare = true;
	if (!s->usr && !s->os)
		s->usr = s->os = true;
	return 0;
}

int p4_spec_parse(const char *text, const struct p4_caps *caps, struct p4_spec *out,
		  struct p4_spec_error *err)
{
	struct p4_spec s = { 0 };
	struct p4_tok t = { text, 0, 0 };
	bool edge_set = false;
	unsigned pos = 0;

	while (text[pos] && text[pos] != ':')
		pos++;
	t.len = pos;
	if (p4_spec_event(&t, caps, &s, err))
		return -1;
	while (text[pos] == ':') {
		unsigned k;
		int r;

		t.s = text + pos + 1;
		t.pos = pos + 1;
		for (t.len = 0; t.s[t.len] && t.s[t.len] != ':'; t.len++)
			;
		pos = t.pos + t.len;
		if (t.len == 0) {
			p4_spec_fail(err, &t, "empty token");
			p4_spec_mask_choices(err, s.event);
			return -1;
		}
		if (p4_event_mask_by_name(s.event, t.s, t.len, &k)) {
			uint16_t bit = P4_EVMASK(k);

			for (int g = 0; g < 2; g++) {
				if ((p4_events[s.event].exclusive[g] & bit) &&
				    (p4_events[s.event].exclusive[g] & s.mask & ~bit)) {
					p4_spec_fail(err, &t, "mask bit excludes one given before:");
					p4_spec_hint(err, p4_events[s.event].note);
					return -1;
				}
			}
			s.mask |= bit;
			continue;
		}
		if (p4_spec_tag(&t, &s))
			continue;
		r = p4_spec_modifier(&t, &s, &edge_set, err);
		if (r < 0)
			return -1;
		if (r == 0) {
			p4_spec_fail(err, &t, "unknown mask or modifier");
			p4_spec_mask_choices(err, s.event);
			return -1;
		}
	}
	t.s = text + pos;
	t.pos = pos;
	t.len = 0;
	if (p4_spec_finish(&s, &t, edge_set, err))
		return -1;
	*out = s;
	return 0;
}

int p4_spec_format(const struct p4_spec *spec, char *buf, size_t n)
{
	const struct p4_event_desc *ev = &p4_events[spec->event];
	struct p4_text t;

	p4_text_init(&t, buf, n);
	p4_text_add(&t, "%s", spec->metric ? p4_replay_metrics[spec->metric - 1].name : ev->name);
	for (unsigned k = 0; k < P4_NMASK_BITS; k++)
		if ((spec->mask & P4_EVMASK(k)) && ev->masks[k])
			p4_text_add(&t, ":%s", ev->masks[k]);
	for (unsigned i = 0; i < 4; i++)
		if (spec->tag_value & (1u << i))
			p4_text_add(&t, ":TAG%u", i);
	if (spec->usr)
		p4_text_add(&t, ":u");
	if (spec->os)
		p4_text_add(&t, ":k");
	if (spec->thread != P4_THREAD_DEFAULT)
		p4_text_add(&t, ":t%d", spec->thread == P4_THREAD_T1);
	if (spec->compare && (spec->threshold || (!spec->complement && !spec->edge)))
		p4_text_add(&t, ":cmp=%u", spec->threshold);
	if (spec->complement)
		p4_text_add(&t, ":compl");
	if (spec->edge)
		p4_text_add(&t, ":edge");
	else if (ev->flags & P4_EVF_WANTS_EDGE)
		p4_text_add(&t, ":noedge");	/* else parsing turns the default edge back on */
	if (spec->force_ovf)
		p4_text_add(&t, ":force_ovf");
	if (spec->pebs)
		p4_text_add(&t, ":pebs");
	if (spec->period)
		p4_text_add(&t, ":period=%llu", (unsigned long long)spec->period);
	if (spec->after)
		p4_text_add(&t, ":after=%llu", (unsigned long long)spec->after);
	return (int)t.want;
}
