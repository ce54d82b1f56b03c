/*
 * p4_uncore_list.c - the uncore units as an `events`-style listing, built
 * only from p4_unc_units[] and the register tables (p4_uncore.c).
 */
#include "lib/parse.h"
#include "pmu/p4_text.h"
#include "pmu/p4_uncore.h"

/* "MSR_IFSB_BUSQ0 MSR_IFSB_BUSQ1" */
static void unc_list_regs(struct p4_text *t, enum p4_unc_unit u)
{
	enum p4_uncore set = p4_unc_units[u].set;

	for (unsigned i = 0; i < P4_UNC_NREG; i++) {
		const struct p4_unc_reg *r = p4_unc_reg_at(set, i);

		if (r->unit == u)
			p4_text_add(t, " %s (%XH, RDPMC %u)", r->name, r->msr, P4_UNC_RDPMC_FIRST + i);
	}
}

static void unc_list_short(enum p4_unc_unit u, const struct p4_caps *caps,
			   void (*line)(void *ctx, const char *s), void *ctx)
{
	const struct p4_unc_unit_desc *d = &p4_unc_units[u];
	char buf[320], why[160];
	struct p4_text t;

	p4_text_init(&t, buf, sizeof(buf));
	p4_text_add(&t, "%-10s %-9s", d->name, d->set == P4_UNCORE_EMON_L3 ? "EMON_L3" : "IFSB/EFSB");
	for (unsigned i = 0; i < d->nfields; i++)
		p4_text_add(&t, " %s", d->fields[i].name);
	if (caps && !p4_unc_available(caps, u, why, sizeof(why)))
		p4_text_add(&t, "  [not on this part]");
	line(ctx, buf);
}

static void unc_list_long(enum p4_unc_unit u, const struct p4_caps *caps,
			  void (*line)(void *ctx, const char *s), void *ctx)
{
	const struct p4_unc_unit_desc *d = &p4_unc_units[u];
	char buf[320], why[160];
	struct p4_text t;

	p4_text_init(&t, buf, sizeof(buf));
	p4_text_add(&t, "%s: uncore, package-wide; registers:", d->name);
	unc_list_regs(&t, u);
	line(ctx, buf);
	for (unsigned i = 0; i < d->nfields; i++) {
		const struct p4_unc_field *f = &d->fields[i];
		unsigned lo = (unsigned)__builtin_ctzll(f->mask);
		unsigned hi = 63 - (unsigned)__builtin_clzll(f->mask);

		p4_text_init(&t, buf, sizeof(buf));
		p4_text_add(&t, hi == lo ? "  %-14s bit %u" : "  %-14s bits %u:%u", f->name, hi, lo);
		p4_text_add(&t, "  %s", f->what);
		line(ctx, buf);
	}
	ksnprintf(buf, sizeof(buf), "  source: %s", d->source);
	line(ctx, buf);
	if (caps && !p4_unc_available(caps, u, why, sizeof(why)))
		line(ctx, why);
}

int p4_unc_list(const char *pattern, const struct p4_caps *caps,
		void (*line)(void *ctx, const char *s), void *ctx)
{
	size_t plen = pattern ? parse_strlen(pattern) : 0;
	enum p4_unc_unit exact = p4_unc_unit_by_name(pattern ? pattern : "", plen);
	int n = 0;

	if (exact != P4_NUNC_UNIT) {
		unc_list_long(exact, caps, line, ctx);
		return 1;
	}
	for (unsigned u = 0; u < P4_NUNC_UNIT; u++) {
		const char *name = p4_unc_units[u].name;

		if (plen && !p4_text_contains(name, parse_strlen(name), pattern))
			continue;
		unc_list_short((enum p4_unc_unit)u, caps, line, ctx);
		n++;
	}
	return n;
}
