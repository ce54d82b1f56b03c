/*
 * p4_uncore.h - the L3/FSB uncore counters at MSRs 107CCH-107D3H.
 *
 * Two register sets share the eight addresses (PMU reference 1.4; p4_caps
 * says which one a signature has):
 *   IFSB/EFSB, family 0FH models 3 and 4 with an L3 (64-bit Xeon MP with up
 *     to 8 MB L3, SDM 2008 Vol. 3B 18.20 / 2016 18.17): IBUSQ0/1, ISNPQ0/1,
 *     EFSB DRDY0/1, the IBUSQ latency control IFSB_CTL6 and its 64-bit
 *     counter IFSB_CNTR7.
 *   EMON_L3, model 6 (Dual-Core Xeon 7100): EMON_L3_CTR_CTL0-7, GBUSQ
 *     (0/1), GSNPQ (2/3) and FSB (4-7) (SDM 2016 18.21 / 2008 18.24).
 * Every event register holds a 32-bit count in bits 31:0 and its control
 * word in bits 63:32; counting starts once software writes a non-zero
 * value into the upper 32 bits (SDM). The registers are shared by the
 * whole package (PMU reference 1.4, 8). RDPMC reads the low 32 bits with
 * ECX = 18-25 and returns EDX = 0 (SDM 18.20; the 18 -> 107CCH ... 25 ->
 * 107D3H order is UNVERIFIED, PMU reference 1.4).
 *
 * A control word is described by a table of named sub-event fields (bit
 * masks in MSR positions 63:32). A field either lists alternatives, any of
 * which may match (type, snoop result, state, thread: "if all six bits are
 * set, event count will include all transaction types"), or holds an
 * encoding where 0 means "match any" (Fill_Eviction, Cross_Snoop, core
 * select). GBUSQ/GSNPQ count when all attributes match, the FSB sub-event
 * mask when one of them does (SDM 18.21.2-18.21.4). Each unit row says
 * whether its bit positions come from the manual's text or only from its
 * figure (then UNVERIFIED: the copies seen of the IFSB/EFSB figures give
 * the field names and bit labels but no text, see p4_uncore.c).
 */
#ifndef NBPROF_PMU_P4_UNCORE_H
#define NBPROF_PMU_P4_UNCORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pmu/p4_caps.h"
#include "pmu/p4_regs.h"
#include "pmu/p4_spec.h"

#define P4_UNC_NREG		8	/* 107CCH-107D3H */
#define P4_UNC_RDPMC_FIRST	18	/* RDPMC index of 107CCH */
#define P4_UNC_MAXFIELDS	16

enum p4_unc_unit {
	P4_UNC_IBUSQ,		/* MSR_IFSB_IBUSQ0/1, 107CCH/107CDH */
	P4_UNC_ISNPQ,		/* MSR_IFSB_ISNPQ0/1, 107CEH/107CFH */
	P4_UNC_EFSB,		/* MSR_EFSB_DRDY0/1, 107D0H/107D1H */
	P4_UNC_IBUSQ_LAT,	/* MSR_IFSB_CTL6 107D2H + MSR_IFSB_CNTR7 107D3H */
	P4_UNC_GBUSQ,		/* MSR_EMON_L3_CTR_CTL0/1 */
	P4_UNC_GSNPQ,		/* MSR_EMON_L3_CTR_CTL2/3 */
	P4_UNC_FSB,		/* MSR_EMON_L3_CTR_CTL4-7 */
	P4_NUNC_UNIT,
};

enum p4_unc_match {
	P4_UNC_ANY_OF,		/* the occurrence's bits must meet the field's */
	P4_UNC_EQUAL,		/* 0 = any, else the occurrence's value must equal it */
};

enum p4_unc_role {
	P4_UNC_EVENT,		/* 32-bit count + control word */
	P4_UNC_LAT_CTL,		/* IFSB_CTL6: bit 26 enables IFSB_CNTR7 */
	P4_UNC_LAT_COUNT,	/* IFSB_CNTR7: 64-bit counter */
};

struct p4_unc_field {
	const char *name;	/* spec key, lower case */
	uint64_t mask;		/* MSR bit positions (within 63:32) */
	enum p4_unc_match match;
	const char *what;	/* one line from the manual */
};

struct p4_unc_unit_desc {
	const char *name;	/* spec name: "ibusq" */
	enum p4_uncore set;	/* register set that has it */
	bool all_match;		/* all fields must match (else one is enough) */
	bool verified;		/* bit positions from the manual's text */
	bool needs_field;	/* a spec must name a sub-event (no useful default) */
	uint64_t must_one;	/* bits software must write as 1 */
	uint64_t saturate;	/* Saturate bit, or 0 */
	uint64_t reserved;	/* bits of 63:32 that no field names */
	const char *source;
	unsigned nfields;
	struct p4_unc_field fields[P4_UNC_MAXFIELDS];
};

struct p4_unc_reg {
	const char *name;	/* SDM name, e.g. "MSR_IFSB_IBUSQ0" */
	uint32_t msr;
	enum p4_unc_unit unit;
	enum p4_unc_role role;
};

extern const struct p4_unc_unit_desc p4_unc_units[P4_NUNC_UNIT];

/* The register at `msr` in register set `set`, or NULL. */
const struct p4_unc_reg *p4_unc_reg_find(enum p4_uncore set, uint32_t msr);

/* Register i (0..7, = RDPMC index - 18) of `set`, or NULL. */
const struct p4_unc_reg *p4_unc_reg_at(enum p4_uncore set, unsigned i);

/* The unit named `name` (case-insensitive, len bytes), or P4_NUNC_UNIT. */
enum p4_unc_unit p4_unc_unit_by_name(const char *name, size_t len);

/*
 * Can this part count `unit`? true, or false with the reason in why (a
 * sentence naming the part and the parts that have it).
 */
bool p4_unc_available(const struct p4_caps *caps, enum p4_unc_unit unit, char *why, size_t n);

/*
 * Does a register of `unit` holding control word `ctl` (MSR bits 63:32)
 * count an occurrence with attributes `attrs` (same positions)? The
 * memory-system model describes each occurrence by its attributes.
 */
bool p4_unc_matches(enum p4_unc_unit unit, uint64_t ctl, uint64_t attrs);

/*
 * A free register for `unit` on this part: the index (0..7, MSR 107CCH +
 * index, RDPMC 18 + index) of the first register of the unit whose bit is
 * clear in `used`; for P4_UNC_IBUSQ_LAT the counter IFSB_CNTR7 (7), whose
 * control is IFSB_CTL6 (6, also taken). -1 when the part lacks the unit or
 * all its registers are used.
 */
int p4_unc_alloc(const struct p4_caps *caps, enum p4_unc_unit unit, uint8_t used);

/*
 * 64-bit extension of a 32-bit count read by polling: `prev` is the
 * extended value at the last poll, `now` the low 32 bits read now. Exact
 * as long as fewer than 2^32 events happen between two polls.
 */
static inline uint64_t p4_unc_extend(uint64_t prev, uint32_t now)
{
	return prev + (uint32_t)(now - (uint32_t)prev);
}

/*
 * `events`-style listing of the uncore units: one line per unit whose name
 * contains PATTERN (NULL or "" = all), or, for an exact unit name, its
 * registers, fields with their bits and the source of the layout. Units
 * the part lacks (caps non-NULL) are marked. Returns the units listed.
 */
int p4_unc_list(const char *pattern, const struct p4_caps *caps,
		void (*line)(void *ctx, const char *s), void *ctx);

/* ---- specs: UNIT[:FIELD=N|:FLAG]... ---------------------------------------- */

/*
 * "ibusq", "isnpq:snoop=0x4:t0", "efsb:own", "gbusq:type=0x3f:fill_eviction=1",
 * "fsb:drdy:dbsy", "ibusq_lat". A field with more than one bit takes a
 * value (FIELD=N, decimal, 0x or H hex); a one-bit field is a flag (FIELD
 * alone). :saturate sets the Saturate bit. Fields not given keep their
 * default: every ANY_OF field all ones (count everything), every EQUAL
 * field 0 ("any"); on the FSB unit, whose attributes are alternatives,
 * naming any field replaces the default. must_one bits are always set.
 */
struct p4_unc_spec {
	enum p4_unc_unit unit;
	uint64_t ctl;		/* the control word, MSR bits 63:32 */
};

/* Does text start with an uncore unit name (then parse it with p4_unc_spec_parse)? */
bool p4_unc_spec_is(const char *text);

/* 0 with *out filled, or -1 with *err (and *out untouched). caps may be NULL. */
int p4_unc_spec_parse(const char *text, const struct p4_caps *caps, struct p4_unc_spec *out,
		      struct p4_spec_error *err);

/* Canonical text: unit, then every field that differs from the default. */
int p4_unc_spec_format(const struct p4_unc_spec *s, char *buf, size_t n);

/*
 * The MSR value that starts counting from `preset` (low 32 bits) for an
 * event unit; for P4_UNC_IBUSQ_LAT the IFSB_CTL6 value (bit 26).
 */
uint64_t p4_unc_encode(const struct p4_unc_spec *s, uint32_t preset);

/*
 * Lines on a write of `v` to uncore MSR `msr` for `caps` (`explain`):
 * register, count, fields, whether it counts; then one line per problem
 * (absent register, reserved bits, must-be-1 bits clear, nothing
 * selected), with problem = true. Returns the number of problems.
 */
int p4_unc_describe(const struct p4_caps *caps, uint32_t msr, uint64_t v,
		    void (*line)(void *ctx, bool problem, const char *s), void *ctx);

#endif
