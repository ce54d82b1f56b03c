/*
 * stat_uncore.c - the uncore counters under `stat` (see stat_uncore.h).
 *
 * The registers are started and stopped with the count (perf_count_start,
 * perf_count_stop: pmu/p4_apply.h says how a register counts), so their
 * 32-bit counts are read once, when the run ends: under the model one
 * stepped instruction adds a handful of uncore events, so no run comes near
 * 2^32. The registers are package-wide, shared by both LPs: the counts
 * include every LP's transactions that the control word selects.
 */
#include "lib/printf.h"
#include "pmu/p4_regs.h"
#include "shell/stat_uncore.h"

static int unc_fail(char *err, size_t n, const char *text, const char *why)
{
	ksnprintf(err, n, "'%s': %s", text, why);
	return -1;
}

static int unc_add(struct stat_unc *u, const char *text, const struct p4_caps *caps,
		   char *err, size_t n)
{
	struct p4_spec_error e;
	struct p4_unc_spec spec;
	char why[160];
	int reg;

	if (p4_unc_spec_parse(text, caps, &spec, &e))
		return unc_fail(err, n, text, e.msg);
	if (!p4_unc_available(caps, spec.unit, why, sizeof(why)))
		return unc_fail(err, n, text, why);
	if (spec.unit == P4_UNC_IBUSQ_LAT)
		return unc_fail(err, n, text, "the IBUSQ latency counter is not counted by stat");
	reg = p4_unc_alloc(caps, spec.unit, u->used);
	if (reg < 0)
		return unc_fail(err, n, text, "every register of this unit is taken");
	u->used |= (uint8_t)(1u << reg);
	u->ev[u->n++] = (struct stat_unc_event){ .spec = spec, .text = text, .reg = (unsigned)reg };
	return 0;
}

int stat_unc_take(struct stat_opts *o, const struct p4_caps *caps, struct stat_unc *u,
		  char *err, size_t n)
{
	unsigned keep = 0;

	*u = (struct stat_unc){ 0 };
	for (unsigned i = 0; i < o->nev; i++) {
		if (!p4_unc_spec_is(o->ev[i].spec))
			continue;
		if (o->ev[i].after)
			return unc_fail(err, n, o->ev[i].spec, "uncore counters cannot cascade");
		if (unc_add(u, o->ev[i].spec, caps, err, n))
			return -1;
	}
	for (unsigned i = 0; i < o->nev; i++)
		if (!p4_unc_spec_is(o->ev[i].spec))
			o->ev[keep++] = o->ev[i];
	o->nev = keep;
	return 0;
}

void stat_unc_plan(const struct stat_unc *u, struct p4_plan *plan)
{
	plan->unc_n = u->n;
	for (unsigned i = 0; i < u->n; i++)
		plan->unc[i] = (struct p4_unc_slot){ .reg = (uint8_t)u->ev[i].reg,
						     .start = p4_unc_encode(&u->ev[i].spec, 0) };
}

void stat_unc_start_error(const struct stat_unc *u, int failed, char *err, size_t n)
{
	const struct stat_unc_event *e = &u->ev[failed];

	ksnprintf(err, n, "'%s': writing %XH failed: this part has no uncore counters "
		  "(the model has them on 0F_03/0F_04 with an L3: 'pmu backend model "
		  "0F_04 l3')", e->text, (unsigned)(MSR_P4_UNCORE_FIRST + e->reg));
}
