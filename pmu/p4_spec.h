/*
 * p4_spec.h - libpfm4-style event specifications.
 *
 *   EVENT[:MASK]...[:u][:k][:t0|:t1][:cmp=N][:compl][:edge|:noedge]
 *        [:force_ovf][:pebs][:period=N][:after=N]
 *
 * Case-insensitive. MASK is a mask-bit name of the event (p4_events.h), or
 * TAG0..TAG3 on events that may set an execution tag. No mask bit gives the
 * event's default mask (mask_default is then true so callers can show it).
 * :u/:k pick CPL 1-3 / CPL 0 (neither given: both). :t0/:t1 pick the logical
 * processor counted (not given: the caller's choice). :cmp=N sets the CCCR
 * threshold (0-15), :compl the complement, :edge the edge detector; each
 * turns on CCCR compare. Events marked P4_EVF_WANTS_EDGE get :edge unless
 * :noedge is given. :period=N is the sampling period (1 .. 2^39-1, Linux's
 * limit, so bit 39 stays a "still negative" flag, fact sheet 6).
 * :after=N asks for the count to start only after N events of the previous
 * spec (cascading; the planner decides whether it can be done).
 */
#ifndef NBPROF_PMU_P4_SPEC_H
#define NBPROF_PMU_P4_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pmu/p4_caps.h"
#include "pmu/p4_events.h"

#define P4_PERIOD_MAX		((UINT64_C(1) << 39) - 1)

enum p4_thread {
	P4_THREAD_DEFAULT,	/* not given in the spec */
	P4_THREAD_T0,
	P4_THREAD_T1,
};

struct p4_spec {
	enum p4_event event;
	uint16_t mask;
	bool mask_default;	/* mask came from the table's default */
	uint8_t tag_value;	/* ESCR[8:5]; tag enable when non-zero */
	bool usr, os;
	enum p4_thread thread;
	bool compare, complement, edge, force_ovf, pebs;
	uint8_t threshold;
	uint64_t period;	/* 0 = counting, no sampling */
	uint64_t after;		/* 0 = not cascaded */
	uint8_t metric;		/* replay-tagging metric: 1 + index in p4_replay_metrics[], 0 none */
};

struct p4_spec_error {
	unsigned pos;		/* byte offset of the bad token in the spec */
	unsigned len;		/* its length */
	char msg[768];		/* "column N: ... ; valid: ..." */
};

/*
 * perf's generic event names (cycles, instructions, ...) as Linux's P4
 * backend maps them (p4_general_events in arch/x86/events/intel/p4.c), plus
 * the manuals' "clockticks": the name stands for its event and mask bits,
 * and the spec goes on with mask bits and modifiers as usual
 * ("cycles:u:period=100000").
 */
struct p4_alias {
	const char *name;
	enum p4_event event;
	uint16_t mask;
	const char *what;	/* perf's meaning, for the listing */
};

#define P4_NALIAS	10
extern const struct p4_alias p4_aliases[P4_NALIAS];

/* The alias named by name[0..len) (case-insensitive), or NULL. */
const struct p4_alias *p4_alias_by_name(const char *name, unsigned len);

/* Parse `text`; 0 on success, -1 with *err filled (and *out untouched). caps may be NULL. */
int p4_spec_parse(const char *text, const struct p4_caps *caps, struct p4_spec *out,
		  struct p4_spec_error *err);

/* Canonical form, e.g. "instr_retired:NBOGUSNTAG:NBOGUSTAG:u:k"; returns the length. */
int p4_spec_format(const struct p4_spec *spec, char *buf, size_t n);

/*
 * `events [PATTERN]`: one line per event whose name contains PATTERN
 * (case-insensitive; NULL or "" = all), or, when exactly one event matches,
 * its full description. Events the CPU lacks (caps non-NULL) are marked.
 * The generic names (p4_aliases) whose names contain PATTERN follow under a
 * heading; a PATTERN that is a generic name shows what it stands for and
 * its event's description. Returns the number of events and generic names
 * matched (the whole list counts the events only).
 */
int p4_events_list(const char *pattern, const struct p4_caps *caps,
		   void (*line)(void *ctx, const char *s), void *ctx);

#endif
