/*
 * stat_uncore.c - the uncore counters under `stat` (see stat_uncore.h).
 *
 * A register counts in its low 32 bits once software writes a non-zero
 * value to its upper 32 bits, and stops when they are written 0 (SDM 18.20;
 * PMU reference 1.4). stat zeroes and starts each register before the run and
 * stops it after; the 32-bit count is extended to 64 bits by polling
 * (p4_unc_extend), which is exact while fewer than 2^32 events pass between
 * two polls. stat polls when the run ends: under the model one stepped
 * instruction adds a handful of uncore events, so no run comes near 2^32.
 * The registers are package-wide, shared by both LPs: the counts include
 * every LP's transactions that the control word selects.
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

int stat_unc_start(struct stat_unc *u, struct msr_bus *bus, char *err, size_t n)
{
	for (unsigned i = 0; i < u->n; i++) {
		struct stat_unc_event *e = &u->ev[i];
		uint32_t msr = MSR_P4_UNCORE_FIRST + e->reg;

		e->total = 0;
		e->low = 0;
		if (msr_bus_write(bus, msr, p4_unc_encode(&e->spec, 0)) != 0) {
			ksnprintf(err, n, "'%s': writing %XH failed: this part has no uncore counters "
				  "(the model has them on 0F_03/0F_04 with an L3: 'pmu backend model "
				  "0F_04 l3')", e->text, (unsigned)msr);
			stat_unc_stop(u, bus);
			return -1;
		}
	}
	return 0;
}

void stat_unc_poll(struct stat_unc *u, struct msr_bus *bus)
{
	for (unsigned i = 0; i < u->n; i++) {
		struct stat_unc_event *e = &u->ev[i];
		uint64_t v;

		if (msr_bus_read(bus, MSR_P4_UNCORE_FIRST + e->reg, &v) != 0)
			continue;
		e->total = p4_unc_extend(e->total, (uint32_t)v);
		e->low = (uint32_t)v;
	}
}

void stat_unc_stop(struct stat_unc *u, struct msr_bus *bus)
{
	stat_unc_poll(u, bus);
	for (unsigned i = 0; i < u->n; i++)
		msr_bus_write(bus, MSR_P4_UNCORE_FIRST + u->ev[i].reg, 0);
}
