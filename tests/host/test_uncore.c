/*
 * test_uncore.c - the L3/FSB uncore counters at 107CCH-107D3H: register
 * tables, field layouts against the manual's text, availability by
 * signature, specs, encoding, `explain` decoding and the model.
 *
 * Expected numbers are the manual's: addresses 107CCH-107D3H, RDPMC 18-25
 * with EDX = 0, count in 31:0, counting once the upper 32 bits are
 * non-zero, IFSB_CTL6 bit 26, and the model-6 field positions of SDM 2016
 * 18.21.2-18.21.4 (transcribed here, independently of p4_uncore.c). The
 * IFSB/EFSB sub-field positions are UNVERIFIED readings of figures; their
 * tests check the rules (disjoint, inside 63:32), not the positions.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "pmu/model/p4_model.h"
#include "pmu/p4_explain.h"
#include "pmu/p4_uncore.h"

static struct p4_caps caps_of(uint8_t model)
{
	struct p4_sig sig = { 0x0f, model, 1 };
	struct p4_caps c;

	assert_true(p4_caps_lookup(&sig, &c));
	return c;
}

static const struct p4_unc_field *field(enum p4_unc_unit u, const char *name)
{
	const struct p4_unc_unit_desc *d = &p4_unc_units[u];

	for (unsigned i = 0; i < d->nfields; i++)
		if (strcmp(d->fields[i].name, name) == 0)
			return &d->fields[i];
	fail_msg("unit %s has no field %s", d->name, name);
	return NULL;
}

static uint64_t spec_ctl(const char *text, uint8_t model)
{
	struct p4_caps c = caps_of(model);
	struct p4_unc_spec s;
	struct p4_spec_error e;

	if (p4_unc_spec_parse(text, &c, &s, &e))
		fail_msg("%s: %s", text, e.msg);
	return s.ctl;
}

static void spec_bad(const char *text, uint8_t model, unsigned col, const char *needle)
{
	struct p4_caps c = caps_of(model);
	struct p4_unc_spec s = { P4_UNC_FSB, 0x1234 };
	struct p4_spec_error e;

	assert_int_equal(p4_unc_spec_parse(text, &c, &s, &e), -1);
	if (e.pos + 1 != col || !strstr(e.msg, needle))
		fail_msg("%s: pos %u, msg '%s'", text, e.pos, e.msg);
	assert_int_equal(s.unit, P4_UNC_FSB);	/* untouched */
	assert_int_equal(s.ctl, 0x1234);
}

/* 107CCH + i is register i of both sets; the SDM names (Table 35-42, 18.21). */
static void register_tables(void **state)
{
	static const char *const ifsb[] = { "MSR_IFSB_BUSQ0", "MSR_IFSB_BUSQ1", "MSR_IFSB_SNPQ0",
					    "MSR_IFSB_SNPQ1", "MSR_EFSB_DRDY0", "MSR_EFSB_DRDY1",
					    "MSR_IFSB_CTL6", "MSR_IFSB_CNTR7" };
	static const enum p4_unc_unit ifsb_unit[] = { P4_UNC_IBUSQ, P4_UNC_IBUSQ, P4_UNC_ISNPQ,
						      P4_UNC_ISNPQ, P4_UNC_EFSB, P4_UNC_EFSB,
						      P4_UNC_IBUSQ_LAT, P4_UNC_IBUSQ_LAT };
	static const enum p4_unc_unit emon_unit[] = { P4_UNC_GBUSQ, P4_UNC_GBUSQ, P4_UNC_GSNPQ,
						      P4_UNC_GSNPQ, P4_UNC_FSB, P4_UNC_FSB,
						      P4_UNC_FSB, P4_UNC_FSB };

	(void)state;
	for (unsigned i = 0; i < 8; i++) {
		const struct p4_unc_reg *a = p4_unc_reg_find(P4_UNCORE_IFSB_EFSB, 0x107cc + i);
		const struct p4_unc_reg *b = p4_unc_reg_find(P4_UNCORE_EMON_L3, 0x107cc + i);
		char name[32];

		assert_non_null(a);
		assert_non_null(b);
		assert_int_equal(a->msr, 0x107cc + i);
		assert_string_equal(a->name, ifsb[i]);
		assert_int_equal(a->unit, ifsb_unit[i]);
		assert_int_equal(b->msr, 0x107cc + i);
		snprintf(name, sizeof(name), "MSR_EMON_L3_CTR_CTL%u", i);
		assert_string_equal(b->name, name);
		assert_int_equal(b->unit, emon_unit[i]);
		assert_ptr_equal(p4_unc_reg_at(P4_UNCORE_IFSB_EFSB, i), a);
	}
	assert_int_equal(p4_unc_reg_find(P4_UNCORE_IFSB_EFSB, 0x107d2)->role, P4_UNC_LAT_CTL);
	assert_int_equal(p4_unc_reg_find(P4_UNCORE_IFSB_EFSB, 0x107d3)->role, P4_UNC_LAT_COUNT);
	assert_null(p4_unc_reg_find(P4_UNCORE_IFSB_EFSB, 0x107cb));
	assert_null(p4_unc_reg_find(P4_UNCORE_IFSB_EFSB, 0x107d4));
	assert_null(p4_unc_reg_find(P4_UNCORE_NONE, 0x107cc));
	assert_null(p4_unc_reg_at(P4_UNCORE_EMON_L3, 8));
}

/* Every unit: fields disjoint, inside the control half, and with Saturate,
 * must-be-1 and reserved bits they cover 63:32 exactly once. */
static void field_layouts_partition_control_word(void **state)
{
	(void)state;
	for (unsigned u = 0; u < P4_NUNC_UNIT; u++) {
		const struct p4_unc_unit_desc *d = &p4_unc_units[u];
		uint64_t all = d->saturate | d->must_one | d->reserved;

		assert_int_equal(__builtin_popcountll(d->saturate) +
				 __builtin_popcountll(d->must_one) +
				 __builtin_popcountll(d->reserved), __builtin_popcountll(all));
		for (unsigned i = 0; i < d->nfields; i++) {
			uint64_t m = d->fields[i].mask;

			assert_int_equal(m & ~BITS(63, 32), 0);
			assert_int_not_equal(m, 0);
			assert_int_equal(m & all, 0);
			all |= m;
		}
		assert_int_equal(p4_unc_unit_by_name(d->name, strlen(d->name)), u);
		if (u != P4_UNC_IBUSQ_LAT)
			assert_int_equal(all, BITS(63, 32));
	}
}

/* Model 6 positions as SDM 2016 18.21.2-18.21.4 states them in its text. */
static void emon_l3_layout_matches_manual(void **state)
{
	static const struct { enum p4_unc_unit u; const char *name; unsigned hi, lo; } text[] = {
		{ P4_UNC_GBUSQ, "agent", 35, 32 },	{ P4_UNC_GBUSQ, "data_flow", 37, 36 },
		{ P4_UNC_GBUSQ, "type", 43, 38 },	{ P4_UNC_GBUSQ, "snoop", 46, 44 },
		{ P4_UNC_GBUSQ, "l3_state", 53, 47 },	{ P4_UNC_GBUSQ, "core_select", 55, 54 },
		{ P4_UNC_GBUSQ, "fill_eviction", 57, 56 }, { P4_UNC_GBUSQ, "cross_snoop", 58, 58 },
		{ P4_UNC_GSNPQ, "agent", 37, 32 },	{ P4_UNC_GSNPQ, "type", 43, 38 },
		{ P4_UNC_GSNPQ, "snoop", 46, 44 },	{ P4_UNC_FSB, "fsb_type", 37, 32 },
		{ P4_UNC_FSB, "l_clear", 38, 38 },	{ P4_UNC_FSB, "l_hit", 39, 39 },
		{ P4_UNC_FSB, "l_hitm", 40, 40 },	{ P4_UNC_FSB, "l_defer", 41, 41 },
		{ P4_UNC_FSB, "l_retry", 42, 42 },	{ P4_UNC_FSB, "l_snoop_stall", 43, 43 },
		{ P4_UNC_FSB, "dbsy", 44, 44 },	{ P4_UNC_FSB, "drdy", 45, 45 },
		{ P4_UNC_FSB, "bnr", 46, 46 },		{ P4_UNC_FSB, "ioq_empty", 47, 47 },
		{ P4_UNC_FSB, "ioq_full", 48, 48 },	{ P4_UNC_FSB, "ioq_active", 49, 49 },
	};

	(void)state;
	for (unsigned i = 0; i < sizeof(text) / sizeof(text[0]); i++)
		assert_int_equal(field(text[i].u, text[i].name)->mask, BITS(text[i].hi, text[i].lo));
	assert_int_equal(p4_unc_units[P4_UNC_FSB].must_one, BIT(58));	/* "must set to 1" */
	assert_int_equal(field(P4_UNC_GBUSQ, "fill_eviction")->match, P4_UNC_EQUAL);
	assert_true(p4_unc_units[P4_UNC_GBUSQ].all_match);	/* "if all eight attributes match" */
	assert_false(p4_unc_units[P4_UNC_FSB].all_match);	/* "if one of the attribute matches" */
	assert_int_equal(p4_unc_units[P4_UNC_GBUSQ].nfields, 8);
	assert_int_equal(p4_unc_units[P4_UNC_GSNPQ].nfields, 6);	/* "six attributes" */
	assert_false(p4_unc_units[P4_UNC_IBUSQ].verified);
	assert_false(p4_unc_units[P4_UNC_ISNPQ].verified);
	assert_false(p4_unc_units[P4_UNC_EFSB].verified);
}

/* Models 3/4 have IFSB/EFSB, model 6 EMON_L3, the others none (PMU reference 1.4, 7). */
static void availability_by_signature(void **state)
{
	struct p4_caps c;
	char why[160];

	(void)state;
	c = caps_of(4);
	assert_true(p4_unc_available(&c, P4_UNC_IBUSQ, why, sizeof(why)));
	assert_true(p4_unc_available(&c, P4_UNC_IBUSQ_LAT, why, sizeof(why)));
	assert_false(p4_unc_available(&c, P4_UNC_GBUSQ, why, sizeof(why)));
	assert_non_null(strstr(why, "0F_04H has IFSB/EFSB uncore counters"));
	assert_non_null(strstr(why, "model 6"));
	c = caps_of(3);
	assert_true(p4_unc_available(&c, P4_UNC_EFSB, why, sizeof(why)));
	c = caps_of(6);
	assert_true(p4_unc_available(&c, P4_UNC_FSB, why, sizeof(why)));
	assert_false(p4_unc_available(&c, P4_UNC_ISNPQ, why, sizeof(why)));
	for (uint8_t model = 0; model <= 2; model++) {
		c = caps_of(model);
		for (unsigned u = 0; u < P4_NUNC_UNIT; u++)
			assert_false(p4_unc_available(&c, (enum p4_unc_unit)u, why, sizeof(why)));
	}
	c = caps_of(2);
	assert_false(p4_unc_available(&c, P4_UNC_IBUSQ, why, sizeof(why)));
	assert_string_equal(why, "ibusq: 0F_02H has no uncore counters; ibusq are on family 0FH "
			    "models 3 and 4 with an L3 (64-bit Xeon MP)");
}

static void spec_defaults_and_fields(void **state)
{
	uint64_t t0 = field(P4_UNC_IBUSQ, "t0")->mask, t1 = field(P4_UNC_IBUSQ, "t1")->mask;
	uint64_t type = field(P4_UNC_IBUSQ, "type")->mask, snoop = field(P4_UNC_IBUSQ, "snoop")->mask;
	uint64_t l3 = field(P4_UNC_IBUSQ, "l3_state")->mask, fill = field(P4_UNC_IBUSQ, "fill")->mask;
	uint64_t own = field(P4_UNC_EFSB, "own")->mask, other = field(P4_UNC_EFSB, "other")->mask;

	(void)state;
	assert_int_equal(spec_ctl("ibusq", 4), t0 | t1 | type | snoop | l3);
	assert_int_equal(spec_ctl("IBUSQ:t0", 4), t0 | type | snoop | l3);
	assert_int_equal(spec_ctl("ibusq:t1=0", 4), type | snoop | l3);
	assert_int_equal(spec_ctl("ibusq:type=3:snoop=4h:fill:saturate", 3),
			 t0 | t1 | field_prep(type, 3) | field_prep(snoop, 4) | l3 | fill | BIT(59));
	assert_int_equal(spec_ctl("efsb", 4), own | other);
	assert_int_equal(spec_ctl("efsb:own", 4), own);
	assert_int_equal(spec_ctl("fsb:drdy:dbsy", 6), BIT(58) | BIT(45) | BIT(44));
	assert_int_equal(spec_ctl("gbusq:fill_eviction=3:core_select=1", 6),
			 BITS(53, 32) | BITS(57, 56) | BIT(54));
	assert_int_equal(spec_ctl("ibusq_lat", 4), 0);

	spec_bad("ibusq:bogus", 4, 7, "unknown sub-event field 'bogus'; valid: t0 t1 type=N");
	spec_bad("ibusq:type=0x100", 4, 7, "fits the field: 'type=0x100' (0 to 0xff)");
	spec_bad("ibusq:type", 4, 7, "needs a value");
	spec_bad("ibusq:t0:t0", 4, 10, "given twice");
	spec_bad("ibusq:", 4, 7, "empty field");
	spec_bad("ibusq_lat:saturate", 4, 11, "the unit has no sub-event fields");
	spec_bad("l3:foo", 4, 1, "unknown uncore unit 'l3'");
	spec_bad("fsb", 6, 1, "name at least one sub-event field");
	spec_bad("ibusq", 2, 1, "0F_02H has no uncore counters");
	spec_bad("gbusq", 4, 1, "0F_04H has IFSB/EFSB uncore counters");
	assert_true(p4_unc_spec_is("isnpq:t0"));
	assert_true(p4_unc_spec_is("FSB"));
	assert_false(p4_unc_spec_is("instr_retired"));
	assert_false(p4_unc_spec_is("fsb_data_activity"));
}

static uint32_t lcg(uint32_t *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

/* format -> parse gives the same control word, for random words of every unit. */
static void spec_format_round_trip(void **state)
{
	uint32_t seed = 7;
	char buf[200];

	(void)state;
	for (unsigned u = 0; u < P4_NUNC_UNIT; u++) {
		const struct p4_unc_unit_desc *d = &p4_unc_units[u];
		uint8_t model = d->set == P4_UNCORE_EMON_L3 ? 6 : 4;

		for (unsigned k = 0; k < 500; k++) {
			struct p4_unc_spec s = { (enum p4_unc_unit)u, d->must_one };

			for (unsigned i = 0; i < d->nfields; i++)
				s.ctl |= ((uint64_t)lcg(&seed) << 32 | lcg(&seed) << 8) & d->fields[i].mask;
			if (lcg(&seed) & 1)
				s.ctl |= d->saturate;
			if (d->needs_field && s.ctl == d->must_one)
				continue;
			p4_unc_spec_format(&s, buf, sizeof(buf));
			if (spec_ctl(buf, model) != s.ctl)
				fail_msg("%s: %llx -> '%s'", d->name, (unsigned long long)s.ctl, buf);
		}
	}
	assert_int_equal(p4_unc_spec_format(&(struct p4_unc_spec){ P4_UNC_IBUSQ,
			 spec_ctl("ibusq:t0:snoop=1", 4) }, buf, sizeof(buf)), 16);
	assert_string_equal(buf, "ibusq:snoop=1:t0");
}

static void encode_control_word(void **state)
{
	struct p4_unc_spec s = { P4_UNC_ISNPQ, spec_ctl("isnpq:t1", 4) };

	(void)state;
	assert_int_equal(p4_unc_encode(&s, 0xfffffff0u), s.ctl | 0xfffffff0u);
	assert_int_not_equal(p4_unc_encode(&s, 0) & UNC_CONTROL, 0);	/* starts counting */
	s.unit = P4_UNC_IBUSQ_LAT;
	assert_int_equal(p4_unc_encode(&s, 0), BIT(26));
}

struct lines {
	char text[16][256];
	unsigned n;
};

static void collect(void *ctx, const char *s)
{
	struct lines *l = ctx;

	if (l->n < 16)
		snprintf(l->text[l->n], sizeof(l->text[0]), "%s", s);
	l->n++;
}

static int explain1(uint8_t model, uint32_t msr, uint64_t v, struct lines *l)
{
	struct p4_caps c = caps_of(model);
	struct p4_msr_write w = { msr, v };

	memset(l, 0, sizeof(*l));
	return p4_explain(&w, 1, &c, true, collect, l);
}

static void explain_decodes_uncore_writes(void **state)
{
	struct p4_unc_spec s = { P4_UNC_IBUSQ, spec_ctl("ibusq:t0", 4) };
	struct lines l;

	(void)state;
	assert_int_equal(explain1(4, 0x107cc, p4_unc_encode(&s, 0x10), &l), 0);
	assert_non_null(strstr(l.text[0], "MSR_IFSB_BUSQ0 <- "));
	assert_non_null(strstr(l.text[0], "count 00000010H, ibusq:t0, counting"));
	assert_non_null(strstr(l.text[0], "UNVERIFIED"));
	assert_int_equal(explain1(4, 0x107cd, 0x55, &l), 0);
	assert_non_null(strstr(l.text[0], "stopped (upper 32 bits zero)"));
	assert_int_equal(explain1(4, 0x107cc, p4_unc_encode(&s, 0) | BIT(63), &l), 1);
	assert_non_null(strstr(l.text[1], "! reserved bits set (bits 8000000000000000H)"));
	assert_int_equal(explain1(4, 0x107cd, BIT(47), &l), 3);	/* type, l3_state, t0/t1 */
	assert_non_null(strstr(l.text[1], "! field type is 0: no occurrence carrying it is counted"));
	assert_non_null(strstr(l.text[3], "! none of the one-bit selectors (t0, t1) is set"));
	assert_int_equal(explain1(4, 0x107d2, BIT(26), &l), 0);
	assert_non_null(strstr(l.text[0], "MSR_IFSB_CTL6 <- 4000000H: IBUSQ latency count on"));
	assert_int_equal(explain1(2, 0x107cc, BIT(40), &l), 1);
	assert_non_null(strstr(l.text[0], "! 107CCH <- 10000000000H: 0F_02H has no uncore counters"));
	assert_int_equal(explain1(6, 0x107d0, BIT(45), &l), 1);
	assert_non_null(strstr(l.text[0], "MSR_EMON_L3_CTR_CTL4"));
	assert_non_null(strstr(l.text[1], "must be written as 1"));
	assert_int_equal(explain1(6, 0x107d0, BIT(58), &l), 1);
	assert_non_null(strstr(l.text[1], "no sub-event selected"));
}

static void list_units(void **state)
{
	struct p4_caps c4 = caps_of(4);
	struct lines l = { 0 };

	(void)state;
	assert_int_equal(p4_unc_list(NULL, &c4, collect, &l), P4_NUNC_UNIT);
	assert_non_null(strstr(l.text[0], "ibusq      IFSB/EFSB t0 t1 type snoop l3_state eviction fill"));
	assert_null(strstr(l.text[0], "not on this part"));
	assert_non_null(strstr(l.text[4], "gbusq"));
	assert_non_null(strstr(l.text[4], "[not on this part]"));
	memset(&l, 0, sizeof(l));
	assert_int_equal(p4_unc_list("snpq", NULL, collect, &l), 2);	/* isnpq, gsnpq */
	memset(&l, 0, sizeof(l));
	assert_int_equal(p4_unc_list("GBUSQ", &c4, collect, &l), 1);
	assert_non_null(strstr(l.text[0], "MSR_EMON_L3_CTR_CTL0 (107CCH, RDPMC 18)"));
	assert_non_null(strstr(l.text[0], "MSR_EMON_L3_CTR_CTL1 (107CDH, RDPMC 19)"));
	assert_non_null(strstr(l.text[1], "agent          bits 35:32"));
	assert_non_null(strstr(l.text[8], "cross_snoop    bit 58"));
	assert_non_null(strstr(l.text[9], "source: SDM 18.21.2"));
	assert_non_null(strstr(l.text[7], "fill_eviction  bits 57:56"));
	assert_int_equal(l.n, 11);	/* header, 8 fields, source, why not here */
	memset(&l, 0, sizeof(l));
	assert_int_equal(p4_unc_list("nothing", NULL, collect, &l), 0);
}

/* ---- the model ---------------------------------------------------------- */

static void model_new(struct p4_model *m, uint8_t model, bool uncore)
{
	struct p4_model_config cfg = { .sig = { 0x0f, model, 1 }, .ht = true, .uncore = uncore };

	assert_int_equal(p4_model_init(m, &cfg), 0);
}

static void wr(struct p4_model *m, uint32_t msr, uint64_t v)
{
	assert_int_equal(msr_bus_write(&m->bus, msr, v), 0);
}

static uint64_t rd(struct p4_model *m, uint32_t msr)
{
	uint64_t v = 0;

	assert_int_equal(msr_bus_read(&m->bus, msr, &v), 0);
	return v;
}

static uint64_t attr(enum p4_unc_unit u, const char *name)
{
	return field(u, name)->mask;
}

/* Registers per unit: two each for IBUSQ/ISNPQ/EFSB/GBUSQ/GSNPQ, four for FSB. */
static void alloc_registers(void **state)
{
	struct p4_caps c4 = caps_of(4), c6 = caps_of(6), c2 = caps_of(2);

	(void)state;
	assert_int_equal(p4_unc_alloc(&c4, P4_UNC_IBUSQ, 0), 0);
	assert_int_equal(p4_unc_alloc(&c4, P4_UNC_IBUSQ, 0x01), 1);
	assert_int_equal(p4_unc_alloc(&c4, P4_UNC_IBUSQ, 0x03), -1);
	assert_int_equal(p4_unc_alloc(&c4, P4_UNC_ISNPQ, 0x04), 3);
	assert_int_equal(p4_unc_alloc(&c4, P4_UNC_EFSB, 0), 4);
	assert_int_equal(p4_unc_alloc(&c4, P4_UNC_IBUSQ_LAT, 0), 7);
	assert_int_equal(p4_unc_alloc(&c4, P4_UNC_IBUSQ_LAT, 0x40), -1);	/* CTL6 taken */
	assert_int_equal(p4_unc_alloc(&c4, P4_UNC_GBUSQ, 0), -1);
	assert_int_equal(p4_unc_alloc(&c6, P4_UNC_FSB, 0x70), 7);
	assert_int_equal(p4_unc_alloc(&c6, P4_UNC_FSB, 0xf0), -1);
	assert_int_equal(p4_unc_alloc(&c2, P4_UNC_IBUSQ, 0), -1);
}

/* Polling extends the 32-bit count across wraps, as long as polls are < 2^32 events apart. */
static void extend_across_wrap(void **state)
{
	struct p4_model m;
	uint64_t ext = 0, total = 0, ctl = spec_ctl("efsb", 4);
	uint32_t seed = 3;

	(void)state;
	model_new(&m, 4, true);
	wr(&m, MSR_EFSB_DRDY1, ctl);
	for (unsigned i = 0; i < 64; i++) {
		uint64_t n = (lcg(&seed) * UINT64_C(300)) % UINT64_C(0xffffffff);	/* < 2^32 */
		uint64_t v;

		assert_int_equal(p4_model_uncore_event(&m, P4_UNC_EFSB, attr(P4_UNC_EFSB, "own"), n), 0);
		total += n;
		assert_int_equal(p4_model_rdpmc(&m, 18 + 5, &v), 0);
		ext = p4_unc_extend(ext, (uint32_t)v);
		assert_int_equal(ext, total);
	}
	assert_true(total > UINT64_C(1) << 33);	/* several wraps happened */
	assert_int_equal(p4_unc_extend(UINT64_C(0x1fffffff0), 0x10), UINT64_C(0x200000010));
}

/* Counting starts with a non-zero upper half (SDM 18.20) and stops without one. */
static void model_counts_after_upper_write(void **state)
{
	struct p4_model m;
	uint64_t ctl = spec_ctl("ibusq", 4), t0 = attr(P4_UNC_IBUSQ, "t0");

	(void)state;
	model_new(&m, 4, true);
	wr(&m, MSR_IFSB_BUSQ0, 5);
	assert_int_equal(p4_model_uncore_event(&m, P4_UNC_IBUSQ, t0, 3), 0);
	assert_int_equal(rd(&m, MSR_IFSB_BUSQ0), 5);
	assert_false(p4_model_uncore_counting(&m, 0));
	wr(&m, MSR_IFSB_BUSQ0, ctl | 5);
	assert_true(p4_model_uncore_counting(&m, 0));
	assert_int_equal(p4_model_uncore_event(&m, P4_UNC_IBUSQ, t0, 3), 0);
	assert_int_equal(rd(&m, MSR_IFSB_BUSQ0), ctl | 8);
	assert_int_equal(rd(&m, MSR_IFSB_BUSQ1), 0);	/* not started */
	wr(&m, MSR_IFSB_BUSQ0, 8);			/* upper half zero again */
	assert_int_equal(p4_model_uncore_event(&m, P4_UNC_IBUSQ, t0, 3), 0);
	assert_int_equal(rd(&m, MSR_IFSB_BUSQ0), 8);
	/* Other units' events do not reach it. */
	wr(&m, MSR_IFSB_BUSQ0, ctl);
	assert_int_equal(p4_model_uncore_event(&m, P4_UNC_ISNPQ, 0, 3), 0);
	assert_int_equal(rd(&m, MSR_IFSB_BUSQ0), ctl);
}

/* Sub-event matching: thread bits and Fill_match pick the occurrences. */
static void model_fields_select_occurrences(void **state)
{
	struct p4_model m;
	uint64_t t0 = attr(P4_UNC_IBUSQ, "t0"), t1 = attr(P4_UNC_IBUSQ, "t1");
	uint64_t fill = attr(P4_UNC_IBUSQ, "fill");
	uint64_t own = attr(P4_UNC_EFSB, "own"), other = attr(P4_UNC_EFSB, "other");

	(void)state;
	model_new(&m, 4, true);
	wr(&m, MSR_IFSB_BUSQ0, spec_ctl("ibusq:t0", 4));
	wr(&m, MSR_IFSB_BUSQ1, spec_ctl("ibusq:fill", 4));
	wr(&m, MSR_EFSB_DRDY0, spec_ctl("efsb:other", 4));
	p4_model_uncore_event(&m, P4_UNC_IBUSQ, t0, 2);
	p4_model_uncore_event(&m, P4_UNC_IBUSQ, t1 | fill, 7);
	p4_model_uncore_event(&m, P4_UNC_EFSB, own, 4);
	p4_model_uncore_event(&m, P4_UNC_EFSB, other, 9);
	assert_int_equal(rd(&m, MSR_IFSB_BUSQ0) & UNC_COUNT, 2);
	assert_int_equal(rd(&m, MSR_IFSB_BUSQ1) & UNC_COUNT, 7);
	assert_int_equal(rd(&m, MSR_EFSB_DRDY0) & UNC_COUNT, 9);
}

/* 32-bit count: wraps into bit 32 of nothing (the control half stays), or saturates. */
static void model_wrap_and_saturate(void **state)
{
	struct p4_model m;
	uint64_t ctl = spec_ctl("isnpq", 4), sat = spec_ctl("isnpq:saturate", 4);

	(void)state;
	model_new(&m, 4, true);
	wr(&m, MSR_IFSB_SNPQ0, ctl | 0xfffffffeu);
	wr(&m, MSR_IFSB_SNPQ1, sat | 0xfffffffeu);
	assert_int_equal(p4_model_uncore_event(&m, P4_UNC_ISNPQ, 0, 3), 0);
	assert_int_equal(rd(&m, MSR_IFSB_SNPQ0), ctl | 1);
	assert_int_equal(m.uncore_wraps[2], 1);
	assert_int_equal(rd(&m, MSR_IFSB_SNPQ1), sat | 0xffffffffu);
	assert_int_equal(m.uncore_wraps[3], 0);
	/* Polling every < 2^32 events extends the count to 64 bits exactly. */
	wr(&m, MSR_IFSB_SNPQ0, ctl);
	m.uncore_wraps[2] = 0;
	for (unsigned i = 0; i < 5; i++)
		p4_model_uncore_event(&m, P4_UNC_ISNPQ, 0, UINT64_C(0xc0000000));
	assert_int_equal(m.uncore_wraps[2] * (UINT64_C(1) << 32) + (rd(&m, MSR_IFSB_SNPQ0) & UNC_COUNT),
			 5 * UINT64_C(0xc0000000));
}

/* RDPMC 18-25: the low 32 bits, EDX = 0 (SDM 18.20); one copy for both LPs. */
static void model_rdpmc_and_sharing(void **state)
{
	struct p4_model m;
	uint64_t v;

	(void)state;
	model_new(&m, 4, true);
	for (unsigned i = 0; i < 8; i++)
		wr(&m, 0x107cc + i, (UINT64_C(0xa0) + i) << 32 | (0x80000000u + i));
	for (unsigned i = 0; i < 8; i++) {
		assert_int_equal(p4_model_rdpmc(&m, 18 + i, &v), 0);
		assert_int_equal(v >> 32, 0);			/* EDX */
		assert_int_equal(v, 0x80000000u + i);
	}
	assert_int_equal(p4_model_set_bus_lp(&m, 1), 0);
	assert_int_equal(rd(&m, MSR_IFSB_BUSQ1), UINT64_C(0xa1) << 32 | 0x80000001u);
	wr(&m, MSR_IFSB_BUSQ1, 0);				/* LP1 writes ... */
	assert_int_equal(p4_model_set_bus_lp(&m, 0), 0);
	assert_int_equal(rd(&m, MSR_IFSB_BUSQ1), 0);		/* ... LP0 sees it */
	assert_int_equal(p4_model_rdpmc(&m, 26, &v), MSR_BUS_EFAULT);
}

/* IFSB_CNTR7 adds weighted cycles while IFSB_CTL6 bit 26 is set (SDM 18.20). */
static void model_ibusq_latency(void **state)
{
	struct p4_model m;
	uint64_t v;

	(void)state;
	model_new(&m, 3, true);
	wr(&m, MSR_IFSB_CNTR7, UINT64_C(0x1fffffff0));
	assert_int_equal(p4_model_uncore_event(&m, P4_UNC_IBUSQ_LAT, 0, 100), 0);
	assert_int_equal(rd(&m, MSR_IFSB_CNTR7), UINT64_C(0x1fffffff0));
	wr(&m, MSR_IFSB_CTL6, IFSB_CTL6_ENABLE);
	assert_true(p4_model_uncore_counting(&m, 7));
	assert_int_equal(p4_model_uncore_event(&m, P4_UNC_IBUSQ_LAT, 0, 0x20), 0);
	assert_int_equal(rd(&m, MSR_IFSB_CNTR7), UINT64_C(0x200000010));	/* 64 bits */
	assert_int_equal(p4_model_rdpmc(&m, 25, &v), 0);
	assert_int_equal(v, 0x10);
	wr(&m, MSR_IFSB_CTL6, 0);					/* frozen */
	p4_model_uncore_event(&m, P4_UNC_IBUSQ_LAT, 0, 5);
	assert_int_equal(rd(&m, MSR_IFSB_CNTR7), UINT64_C(0x200000010));
}

/* Parts without the set: #GP on the MSRs and RDPMC, events refused. */
static void model_refuses_without_uncore(void **state)
{
	struct p4_model m;
	uint64_t v = 77;

	(void)state;
	model_new(&m, 2, true);
	assert_int_equal(msr_bus_read(&m.bus, MSR_IFSB_BUSQ0, &v), MSR_BUS_EFAULT);
	assert_int_equal(msr_bus_write(&m.bus, MSR_IFSB_BUSQ0, BIT(40)), MSR_BUS_EFAULT);
	assert_int_equal(p4_model_rdpmc(&m, 18, &v), MSR_BUS_EFAULT);
	assert_int_equal(p4_model_uncore_event(&m, P4_UNC_IBUSQ, 0, 1), -1);
	assert_int_equal(v, 77);
	model_new(&m, 4, false);		/* 0F_04H without an L3 */
	assert_int_equal(msr_bus_read(&m.bus, MSR_IFSB_BUSQ0, &v), MSR_BUS_EFAULT);
	assert_int_equal(p4_model_uncore_event(&m, P4_UNC_IBUSQ, 0, 1), -1);
	model_new(&m, 4, true);
	assert_int_equal(p4_model_uncore_event(&m, P4_UNC_GBUSQ, 0, 1), -1);
	assert_int_equal(p4_model_uncore_event(&m, P4_NUNC_UNIT, 0, 1), -1);
}

/* Model 6: GBUSQ needs all attributes (Fill_Eviction encoded), FSB one of them. */
static void model_emon_l3(void **state)
{
	struct p4_model m;
	uint64_t fe = attr(P4_UNC_GBUSQ, "fill_eviction");
	uint64_t drdy = attr(P4_UNC_FSB, "drdy"), bnr = attr(P4_UNC_FSB, "bnr");

	(void)state;
	model_new(&m, 6, true);
	wr(&m, 0x107cc, spec_ctl("gbusq:fill_eviction=1", 6));
	wr(&m, 0x107cd, spec_ctl("gbusq", 6));
	wr(&m, 0x107d0, spec_ctl("fsb:drdy:dbsy", 6));
	p4_model_uncore_event(&m, P4_UNC_GBUSQ, field_prep(fe, 1), 4);
	p4_model_uncore_event(&m, P4_UNC_GBUSQ, field_prep(fe, 2), 6);
	p4_model_uncore_event(&m, P4_UNC_FSB, drdy, 5);
	p4_model_uncore_event(&m, P4_UNC_FSB, bnr, 8);
	assert_int_equal(rd(&m, 0x107cc) & UNC_COUNT, 4);
	assert_int_equal(rd(&m, 0x107cd) & UNC_COUNT, 10);
	assert_int_equal(rd(&m, 0x107d0) & UNC_COUNT, 5);
	assert_int_equal(p4_model_uncore_event(&m, P4_UNC_IBUSQ, 0, 1), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(register_tables),
		cmocka_unit_test(field_layouts_partition_control_word),
		cmocka_unit_test(emon_l3_layout_matches_manual),
		cmocka_unit_test(availability_by_signature),
		cmocka_unit_test(spec_defaults_and_fields),
		cmocka_unit_test(spec_format_round_trip),
		cmocka_unit_test(encode_control_word),
		cmocka_unit_test(explain_decodes_uncore_writes),
		cmocka_unit_test(list_units),
		cmocka_unit_test(alloc_registers),
		cmocka_unit_test(extend_across_wrap),
		cmocka_unit_test(model_counts_after_upper_write),
		cmocka_unit_test(model_fields_select_occurrences),
		cmocka_unit_test(model_wrap_and_saturate),
		cmocka_unit_test(model_rdpmc_and_sharing),
		cmocka_unit_test(model_ibusq_latency),
		cmocka_unit_test(model_refuses_without_uncore),
		cmocka_unit_test(model_emon_l3),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
