/*
 * p4_uncore_spec.c - uncore event specs, control-word encoding and the
 * `explain` decoding of writes to 107CCH-107D3H (see p4_uncore.h).
 *
 * A spec is "UNIT[:FIELD=N|:FLAG|:saturate]...", the field names being
 * those of p4_unc_units[] (p4_uncore.c). Defaults: multi-bit "any of"
 * fields all ones, "equal" fields 0 (= any). One-bit "any of" fields (t0,
 * t1, own, other) are alternatives: naming some selects just those, naming
 * none selects all. On units whose attributes are alternatives (EFSB, FSB:
 * "if one of the attribute matches") naming any field selects just the
 * fields named. Bad input changes nothing and names the column.
 */
#include "pmu/p4_text.h"
#include "pmu/p4_uncore.h"

struct unc_tok {
	const char *s;
	unsigned pos, len;
};

struct unc_parse {
	const struct p4_unc_unit_desc *d;
	uint64_t ctl;		/* values of fields given */
	uint64_t given;		/* masks of fields given */
	bool sat;
};

static int unc_lc(int c)
{
	return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c;
}

static bool unc_is(const char *s, unsigned len, const char *word)
{
	unsigned i;

	for (i = 0; i < len; i++)
		if (word[i] == '\0' || unc_lc(s[i]) != word[i])
			return false;
	return word[i] == '\0';
}

static unsigned unc_width(uint64_t mask)
{
	return (unsigned)__builtin_popcountll(mask);
}

static bool unc_flag(const struct p4_unc_field *f)
{
	return f->match == P4_UNC_ANY_OF && unc_width(f->mask) == 1;
}

/* Decimal, 0x hex or H-suffix hex, at most max. */
static bool unc_num(const char *s, unsigned len, uint64_t max, uint64_t *out)
{
	unsigned i = 0, base = 10;
	uint64_t x = 0;

	if (len >= 2 && s[0] == '0' && unc_lc(s[1]) == 'x') {
		base = 16;
		i = 2;
	} else if (len >= 1 && unc_lc(s[len - 1]) == 'h') {
		base = 16;
		len--;
	}
	if (i >= len)
		return false;
	for (; i < len; i++) {
		int c = unc_lc(s[i]);
		unsigned dg;

		if (c >= '0' && c <= '9')
			dg = (unsigned)(c - '0');
		else if (base == 16 && c >= 'a' && c <= 'f')
			dg = (unsigned)(c - 'a' + 10);
		else
			return false;
		if (x > (max - dg) / base)
			return false;
		x = x * base + dg;
	}
	*out = x;
	return true;
}

static int unc_fail(struct p4_spec_error *err, const struct unc_tok *t, const char *msg,
		    const char *what)
{
	err->pos = t->pos;
	err->len = t->len;
	ksnprintf(err->msg, sizeof(err->msg), "column %u: %s '%.*s'%s", t->pos + 1, msg,
		  (int)t->len, t->s, what);
	return -1;
}

static void unc_valid_fields(const struct p4_unc_unit_desc *d, char *buf, size_t n)
{
	struct p4_text t;

	p4_text_init(&t, buf, n);
	p4_text_add(&t, "; valid:");
	for (unsigned i = 0; i < d->nfields; i++)
		p4_text_add(&t, unc_width(d->fields[i].mask) == 1 ? " %s" : " %s=N",
			    d->fields[i].name);
	if (d->saturate)
		p4_text_add(&t, " saturate");
	if (d->nfields == 0 && !d->saturate)
		p4_text_add(&t, " nothing (the unit has no sub-event fields)");
}

static const struct p4_unc_field *unc_field(const struct p4_unc_unit_desc *d, const char *s,
					    unsigned len)
{
	for (unsigned i = 0; i < d->nfields; i++)
		if (unc_is(s, len, d->fields[i].name))
			return &d->fields[i];
	return NULL;
}

/* One FIELD, FIELD=N or saturate token. */
static int unc_token(struct unc_parse *p, const struct unc_tok *t, struct p4_spec_error *err)
{
	const struct p4_unc_field *f;
	unsigned klen = 0;
	uint64_t v = 1, max;
	char valid[200];

	while (klen < t->len && t->s[klen] != '=')
		klen++;
	if (p->d->saturate && klen == t->len && unc_is(t->s, t->len, "saturate")) {
		p->sat = true;
		return 0;
	}
	unc_valid_fields(p->d, valid, sizeof(valid));
	f = unc_field(p->d, t->s, klen);
	if (!f)
		return unc_fail(err, t, "unknown sub-event field", valid);
	if (p->given & f->mask)
		return unc_fail(err, t, "field given twice:", "");
	if (klen == t->len && unc_width(f->mask) != 1)
		return unc_fail(err, t, "field needs a value (FIELD=N):", valid);
	max = f->mask >> __builtin_ctzll(f->mask);
	if (klen < t->len && !unc_num(t->s + klen + 1, t->len - klen - 1, max, &v)) {
		ksnprintf(valid, sizeof(valid), " (0 to 0x%llx)", (unsigned long long)max);
		return unc_fail(err, t, "value is not a number that fits the field:", valid);
	}
	p->given |= f->mask;
	p->ctl |= field_prep(f->mask, v);
	return 0;
}

/* The control word: given fields, then the defaults of the rest (see the top). */
static int unc_finish(const struct unc_parse *p, uint64_t *ctl, struct p4_spec_error *err,
		      const struct unc_tok *unit_tok)
{
	const struct p4_unc_unit_desc *d = p->d;
	bool flag_named = false;
	uint64_t c = p->ctl | d->must_one | (p->sat ? d->saturate : 0);

	if (d->needs_field && !p->given)
		return unc_fail(err, unit_tok, "name at least one sub-event field of",
				": it counts occurrences of the fields named");
	for (unsigned i = 0; i < d->nfields; i++)
		if (unc_flag(&d->fields[i]) && (p->given & d->fields[i].mask))
			flag_named = true;
	for (unsigned i = 0; i < d->nfields; i++) {
		const struct p4_unc_field *f = &d->fields[i];

		if ((p->given & f->mask) || f->match != P4_UNC_ANY_OF)
			continue;
		if (!d->all_match && p->given)
			continue;
		if (unc_flag(f) && flag_named)
			continue;
		c |= f->mask;
	}
	*ctl = c;
	return 0;
}

bool p4_unc_spec_is(const char *text)
{
	unsigned len = 0;

	while (text[len] && text[len] != ':')
		len++;
	return p4_unc_unit_by_name(text, len) != P4_NUNC_UNIT;
}

int p4_unc_spec_parse(const char *text, const struct p4_caps *caps, struct p4_unc_spec *out,
		      struct p4_spec_error *err)
{
	struct unc_parse p = { 0 };
	struct unc_tok unit = { text, 0, 0 };
	enum p4_unc_unit u;
	unsigned pos;
	uint64_t ctl = 0;
	char why[160];

	while (text[unit.len] && text[unit.len] != ':')
		unit.len++;
	u = p4_unc_unit_by_name(text, unit.len);
	if (u == P4_NUNC_UNIT)
		return unc_fail(err, &unit, "unknown uncore unit",
				"; valid: ibusq isnpq efsb ibusq_lat gbusq gsnpq fsb");
	if (caps && !p4_unc_available(caps, u, why, sizeof(why))) {
		err->pos = 0;
		err->len = unit.len;
		ksnprintf(err->msg, sizeof(err->msg), "column 1: %s", why);
		return -1;
	}
	p.d = &p4_unc_units[u];
	for (pos = unit.len; text[pos] == ':';) {
		struct unc_tok t = { text + pos + 1, pos + 1, 0 };

		while (t.s[t.len] && t.s[t.len] != ':')
			t.len++;
		if (t.len == 0)
			return unc_fail(err, &t, "empty field", "");
		if (unc_token(&p, &t, err))
			return -1;
		pos += 1 + t.len;
	}
	if (unc_finish(&p, &ctl, err, &unit))
		return -1;
	out->unit = u;
	out->ctl = ctl;
	return 0;
}

/* A field printed as a bare name (1) or name=value. */
static void unc_put(struct p4_text *t, const struct p4_unc_field *f, uint64_t ctl)
{
	uint64_t v = field_get(f->mask, ctl);

	if (unc_width(f->mask) == 1 && v == 1)
		p4_text_add(t, ":%s", f->name);
	else
		p4_text_add(t, ":%s=%s%llx", f->name, v > 9 ? "0x" : "", (unsigned long long)v);
}

static void unc_format_all_match(struct p4_text *t, const struct p4_unc_unit_desc *d, uint64_t c)
{
	bool any_flag_off = false, any_flag_on = false;

	for (unsigned i = 0; i < d->nfields; i++) {
		const struct p4_unc_field *f = &d->fields[i];

		if (unc_flag(f)) {
			any_flag_off |= (c & f->mask) == 0;
			any_flag_on |= (c & f->mask) != 0;
		} else if ((c & f->mask) != (f->match == P4_UNC_ANY_OF ? f->mask : 0)) {
			unc_put(t, f, c);
		}
	}
	for (unsigned i = 0; any_flag_off && i < d->nfields; i++)
		if (unc_flag(&d->fields[i]) && (!any_flag_on || (c & d->fields[i].mask)))
			unc_put(t, &d->fields[i], c);
}

static void unc_format_one_match(struct p4_text *t, const struct p4_unc_unit_desc *d, uint64_t c)
{
	uint64_t all = 0;
	bool none = true;

	for (unsigned i = 0; i < d->nfields; i++) {
		all |= d->fields[i].mask;
		none &= (c & d->fields[i].mask) == 0;
	}
	if ((c & all) == all && !d->needs_field)
		return;		/* the default */
	for (unsigned i = 0; i < d->nfields; i++)
		if (none || (c & d->fields[i].mask))
			unc_put(t, &d->fields[i], c);
}

int p4_unc_spec_format(const struct p4_unc_spec *s, char *buf, size_t n)
{
	const struct p4_unc_unit_desc *d = &p4_unc_units[s->unit];
	struct p4_text t;

	p4_text_init(&t, buf, n);
	p4_text_add(&t, "%s", d->name);
	if (d->all_match)
		unc_format_all_match(&t, d, s->ctl);
	else
		unc_format_one_match(&t, d, s->ctl);
	if (d->saturate && (s->ctl & d->saturate))
		p4_text_add(&t, ":saturate");
	return (int)t.len;
}

uint64_t p4_unc_encode(const struct p4_unc_spec *s, uint32_t preset)
{
	if (s->unit == P4_UNC_IBUSQ_LAT)
		return IFSB_CTL6_ENABLE;
	return (s->ctl & UNC_CONTROL) | preset;
}

/* ---- explain ------------------------------------------------------------ */

struct unc_out {
	void (*line)(void *ctx, bool problem, const char *s);
	void *ctx;
	int problems;
};

static void unc_problem(struct unc_out *o, const char *what, uint64_t bits)
{
	char buf[200];

	ksnprintf(buf, sizeof(buf), "%s (bits %llXH)", what, (unsigned long long)bits);
	o->line(o->ctx, true, buf);
	o->problems++;
}

/* An "any of" field with no bit set: occurrences that carry the attribute never match. */
static void unc_field_zero(struct unc_out *o, const struct p4_unc_field *f)
{
	char buf[200];

	ksnprintf(buf, sizeof(buf), "field %s is 0: no occurrence carrying it is counted (%s)",
		  f->name, f->what);
	o->line(o->ctx, true, buf);
	o->problems++;
}

static void unc_describe_event(struct unc_out *o, const struct p4_unc_reg *r, uint64_t v)
{
	const struct p4_unc_unit_desc *d = &p4_unc_units[r->unit];
	struct p4_unc_spec s = { r->unit, v & UNC_CONTROL };
	uint64_t fields = 0, flags = 0;
	char spec[160], buf[320];

	p4_unc_spec_format(&s, spec, sizeof(spec));
	ksnprintf(buf, sizeof(buf), "%s <- %llXH: count %08llXH, %s, %s%s", r->name,
		  (unsigned long long)v, (unsigned long long)(v & UNC_COUNT), spec,
		  (v & UNC_CONTROL) ? "counting (upper 32 bits non-zero)" :
				      "stopped (upper 32 bits zero)",
		  d->verified ? "" : " [field positions UNVERIFIED]");
	o->line(o->ctx, false, buf);
	if (!(v & UNC_CONTROL))
		return;
	for (unsigned i = 0; i < d->nfields; i++)
		fields |= d->fields[i].mask;
	if (v & d->reserved)
		unc_problem(o, "reserved bits set", v & d->reserved);
	if ((v & d->must_one) != d->must_one)
		unc_problem(o, "must be written as 1 (SDM) but are clear", d->must_one & ~v);
	if (!d->all_match && !(v & fields))
		unc_problem(o, "no sub-event selected, so it counts nothing", fields);
	for (unsigned i = 0; d->all_match && i < d->nfields; i++) {
		const struct p4_unc_field *f = &d->fields[i];

		if (unc_flag(f))
			flags |= f->mask;
		else if (f->match == P4_UNC_ANY_OF && !(v & f->mask))
			unc_field_zero(o, f);
	}
	if (flags && !(v & flags))
		unc_problem(o, "none of the one-bit selectors (t0, t1) is set, so it counts nothing",
			    flags);
}

int p4_unc_describe(const struct p4_caps *caps, uint32_t msr, uint64_t v,
		    void (*line)(void *ctx, bool problem, const char *s), void *ctx)
{
	const struct p4_unc_reg *r = p4_unc_reg_find(caps->uncore, msr);
	struct unc_out o = { line, ctx, 0 };
	char buf[200], sig[8];

	if (!r) {
		p4_sig_format(&caps->sig, sig, sizeof(sig));
		ksnprintf(buf, sizeof(buf), "%XH <- %llXH: %s has no uncore counters (%s)", msr,
			  (unsigned long long)v, sig, caps->uncore_name);
		line(ctx, true, buf);
		return 1;
	}
	switch (r->role) {
	case P4_UNC_EVENT:
		unc_describe_event(&o, r, v);
		break;
	case P4_UNC_LAT_CTL:
		ksnprintf(buf, sizeof(buf), "%s <- %llXH: IBUSQ latency count %s (bit 26)", r->name,
			  (unsigned long long)v, (v & IFSB_CTL6_ENABLE) ? "on" : "frozen");
		line(ctx, false, buf);
		break;
	case P4_UNC_LAT_COUNT:
		ksnprintf(buf, sizeof(buf), "%s <- %llXH: IBUSQ latency count (64 bits)", r->name,
			  (unsigned long long)v);
		line(ctx, false, buf);
		break;
	}
	return o.problems;
}
