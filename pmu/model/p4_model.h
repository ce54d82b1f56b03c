/*
 * p4_model.h - a software NetBurst PMU behind struct msr_bus.
 *
 * The model holds the PMU registers of one core (18 counters, 18 CCCRs, the
 * ESCRs of the configured model, PEBS_ENABLE, PEBS_MATRIX_VERT,
 * TC_PRECISE_EVENT, IA32_DS_AREA per logical processor, the PMU bits of
 * IA32_MISC_ENABLE and, optionally, the uncore set) and counts events that
 * the caller injects, following the SDM's filter order (PMU reference 2.2):
 * ESCR event select + mask -> ESCR T0/T1 OS/USR -> CCCR ESCR select ->
 * compare/complement/threshold -> edge, gated by the active-thread field,
 * then counting, 40-bit wrap, OVF, cascades and PMI requests.
 *
 * Inputs besides the bus: which logical processors (LPs) are active, each
 * LP's current CPL, events (p4_model_event) and the clock (p4_model_tick).
 * Events between two ticks belong to one clock cycle. See p4_model.c for
 * every decision the manual leaves open.
 */
#ifndef NBPROF_PMU_MODEL_P4_MODEL_H
#define NBPROF_PMU_MODEL_P4_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "pmu/msr_bus.h"
#include "pmu/p4_caps.h"
#include "pmu/p4_events.h"
#include "pmu/p4_pebs.h"
#include "pmu/p4_regs.h"
#include "pmu/p4_tables.h"
#include "pmu/p4_uncore.h"

#define P4_MODEL_NLP		2	/* logical processors of a Hyper-Threaded core */
#define P4_MODEL_NUNCORE	8	/* 107CCH-107D3H */
#define P4_MODEL_CPL_CURRENT	0xffu	/* p4_model_event: use the LP's current CPL */

/* Set of ESCRs that observe an event (p4_model_event_raw). */
#define P4_MODEL_ESCR(e)	(UINT64_C(1) << (e))

struct p4_model;

/*
 * Fault injection, to see tests of the PMU fail (e.g. `selftest --inject`):
 * what a broken or unexpected part would do.
 */
struct p4_model_faults {
	uint32_t dead;			/* counters (bit n) that never count */
	uint32_t rdpmc;			/* counters (bit n) whose RDPMC reads 1 more than RDMSR */
	bool erratum_flip;		/* the cascade-PMI erratum the other way round from caps */
	uint32_t stuck_escr;		/* MSR of an ESCR whose bits, once set, stay set (0: none) */
	uint32_t stuck_ovf;		/* counters (bit n) whose CCCR.OVF, once set, cannot be cleared */
};

/* Called once per PMI request, with the LP that OVF_PMI_T0/T1 names. */
typedef void p4_model_pmi_fn(struct p4_model *m, unsigned lp, void *ctx);

/*
 * Memory access for PEBS (the DS save area and the PEBS buffer, at the
 * addresses software wrote): copy len bytes at addr into or out of buf.
 * 0, or -1 when the range is not accessible (then nothing is written).
 */
typedef int p4_model_mem_fn(void *ctx, uint64_t addr, void *buf, unsigned len, bool write);

#define P4_MODEL_NO_LP		0xffu	/* m->ev_lp outside an event */

struct p4_model_config {
	struct p4_sig sig;		/* family must be 0FH */
	bool ht;			/* two LPs share this PMU (else LP0 only) */
	bool bts_unavailable;		/* IA32_MISC_ENABLE[11] */
	bool pebs_unavailable;		/* IA32_MISC_ENABLE[12] */
	bool uncore;			/* the part has the L3/FSB set of caps.uncore */
	p4_model_pmi_fn *raise_pmi;	/* may be NULL */
	void *ctx;
	p4_model_mem_fn *mem;		/* PEBS memory; NULL: PEBS records fail (pebs_faults) */
	void *mem_ctx;
	/*
	 * The code runs in 32-bit protected mode, not IA-32e mode: with a part
	 * that reports no DTES64 (caps.dtes64) the PEBS assist then uses the
	 * 32-bit DS layout, else the 64-bit one (p4_ds_form_for, PMU reference 5.1).
	 */
	bool legacy_mode;
	/*
	 * A counter a cascade started: false, its CCCR Enable bit is set by the
	 * start (reads 1); true, the CCCR reads back as written and the start
	 * is hidden state (p4_model.c, "Starts").
	 */
	bool cascade_enable_hidden;
	/*
	 * Called when a PEBS assist cannot reach LP lp's DS save area or
	 * buffer at `addr` (IA32_DS_AREA 0 or unmapped): on hardware a fault
	 * inside the microcode assist (SDM 18.15.7 asks for a valid DS area;
	 * what follows is undefined). May be NULL; m->pebs_faults counts it.
	 */
	void (*machine_fault)(struct p4_model *m, unsigned lp, uint64_t addr, void *ctx);
};

struct p4_model {
	struct msr_bus bus;		/* first member: hand &m->bus to pmu code */
	struct p4_model_config cfg;
	struct p4_caps caps;

	/* Registers, as software sees them. */
	uint64_t counter[P4_NCOUNTER];	/* 40 bits */
	uint64_t cccr[P4_NCOUNTER];
	uint64_t escr[P4_NESCR];
	uint64_t pebs_enable, pebs_matrix_vert, tc_precise_event;
	uint64_t misc_enable;		/* bits other than 7, 11, 12 as last written */
	uint64_t ds_area[P4_MODEL_NLP];
	uint8_t pebs_lps;		/* LPs (bit 0/1) whose PEBS MY_THR/OTH_THR enabled */
	uint64_t uncore[P4_MODEL_NUNCORE];

	/* Inputs. */
	bool active[P4_MODEL_NLP];	/* not halted, not waiting for SIPI */
	uint8_t cpl[P4_MODEL_NLP];
	unsigned bus_lp;		/* LP on whose behalf bus accesses run */
	struct p4_pebs_record pebs_regs[P4_MODEL_NLP]; /* each LP's current instruction */
	uint8_t ev_lp;			/* LP of the event being counted, or P4_MODEL_NO_LP */

	/* Hidden state. */
	uint32_t started;		/* counters started by a cascade (bit n) */
	uint32_t edge_prev;		/* comparator output of the last cycle */
	uint8_t pmi_due[P4_NCOUNTER];	/* LPs (bit 0/1) owed a PMI on the next count */
	uint32_t pmi_wait[P4_NCOUNTER];	/* events still to count before that PMI (skid) */
	uint8_t cycle_input[P4_NCOUNTER]; /* compare mode: this cycle's input, 0..15 */
	uint64_t cycles;		/* cycles closed by p4_model_tick */

	/*
	 * Routing, kept up to date on every CCCR write and cascade start
	 * (p4_model_route): which running counters read each ESCR, which
	 * running counters compare, which CCCRs hold OVF, and which counters
	 * each counter starts by a cascade (from p4_cascade_links[]).
	 */
	uint32_t escr_ctrs[P4_NESCR];	/* running counters whose CCCR selects ESCR e */
	uint8_t ctr_route[P4_NCOUNTER];	/* the ESCR counter n is in, or P4_ESCR_NONE */
	uint32_t cmp_running;		/* running counters in compare mode */
	uint32_t ovf_set;		/* counters whose CCCR has OVF */
	uint32_t cascade_waiting;	/* stopped counters whose CCCR lets a cascade start them */
	uint32_t cascade_armed;		/* of those, the ones a running counter's overflow starts */
	uint32_t cascade_to[P4_NCOUNTER]; /* counters that n's overflow may start */
	uint64_t ev_escrs[P4_NEVENT];	/* ESCRs that observe each event (P4_MODEL_ESCR set) */
	uint64_t ev_missing[(P4_NEVENT + 63) / 64]; /* events this part lacks (bit per event) */
	uint64_t ti_select[P4_NESCR];	/* event selects that name a TI event on ESCR e (bit) */

	/* Statistics for tests and the shell. */
	uint64_t pmi_count[P4_MODEL_NLP];
	uint64_t pmi_suppressed;	/* PMIs lost to the cascade-mode erratum */
	uint64_t overflows[P4_NCOUNTER];
	uint64_t examined;		/* counters the event path looked at (routing check) */
	uint64_t uncore_wraps[P4_MODEL_NUNCORE]; /* 32-bit wraps of each uncore count */
	uint64_t pebs_records[P4_MODEL_NLP];	/* PEBS records written */
	uint64_t pebs_lost[P4_MODEL_NLP];	/* PEBS records not written: buffer full */
	uint64_t pebs_pmis[P4_MODEL_NLP];	/* PMIs raised at the PEBS threshold */
	uint64_t pebs_faults;			/* DS area or buffer not accessible */

	struct p4_model_faults faults;	/* injected (p4_model_set_faults); zero at reset */
	uint32_t skid;			/* PMI skid in events (p4_model_set_skid); kept at reset */
};

/* The DS save-area layout this part's PEBS assist uses (PMU reference 5.1). */
enum p4_ds_form p4_model_ds_form(const struct p4_model *m);

/* Power-on state; 0, or -1 when cfg->sig is not family 0FH. */
int p4_model_init(struct p4_model *m, const struct p4_model_config *cfg);
void p4_model_reset(struct p4_model *m);

/* LP state inputs; -1 (and nothing changed) on a bad LP or CPL. */
int p4_model_set_active(struct p4_model *m, unsigned lp, bool active);
int p4_model_set_cpl(struct p4_model *m, unsigned lp, unsigned cpl);
int p4_model_set_bus_lp(struct p4_model *m, unsigned lp);

/*
 * n occurrences of event `ev` with event-mask bits `mask` (bit k = ESCR bit
 * 9 + k) on LP `lp` at CPL `cpl` (or P4_MODEL_CPL_CURRENT), in the current
 * cycle. Observed by the event's ESCRs (p4_events[ev].escrs). -1 on bad
 * input (LP, CPL, event, or an event this model does not have).
 */
int p4_model_event(struct p4_model *m, unsigned lp, unsigned cpl, enum p4_event ev,
		   uint16_t mask, uint64_t n);

/* The same with the observing ESCRs (P4_MODEL_ESCR set) and event select given. */
int p4_model_event_raw(struct p4_model *m, unsigned lp, unsigned cpl, uint64_t escrs,
		       unsigned event_select, uint16_t mask, uint64_t n);

/*
 * The registers of the instruction LP `lp` is retiring (flags, linear IP,
 * general registers in enum p4_pebs_reg order): what a PEBS record written
 * for an event of that instruction holds (PMU reference 5.2). -1 on a bad LP.
 */
int p4_model_set_pebs_regs(struct p4_model *m, unsigned lp, const struct p4_pebs_record *r);

/*
 * Front-end tagging (PMU reference 5.6): an instruction of LP lp at CPL cpl
 * retires with `loads` load and `stores` store µops. Those that an ESCR
 * holding uop_type with TAGLOADS / TAGSTORES and the LP's T-bit for that
 * CPL tags count once each as front_end_event NBOGUS, at retirement. The
 * upstream ESCR tags whether or not a counter reads it (uop_type itself
 * never increments a counter). Returns the tagged µops (the instruction
 * is then a tagged one for instr_retired NBOGUSTAG), or -1 on a bad LP or
 * CPL.
 */
int p4_model_retire_mem(struct p4_model *m, unsigned lp, unsigned cpl, unsigned loads,
			unsigned stores);

/*
 * Execution tagging (PMU reference 5.7): `uops` µops of upstream event ev (one
 * of the FIRM events, P4_EVF_UPSTREAM_TAG: packed_SP_uop ... x87_SIMD_moves_uop)
 * retire on LP lp at CPL cpl. They count as ev with all its mask bits, and a
 * FIRM ESCR holding ev with Tag enable and the LP's T-bit tags them with its
 * tag value; execution_event NBOGUSn then counts each µop whose tag has bit
 * n (NBOGUSn is mask bit n). -1 on bad input or an event that cannot tag.
 */
int p4_model_retire_exec(struct p4_model *m, unsigned lp, unsigned cpl, enum p4_event ev,
			 unsigned uops);

/*
 * The same for µops of only some of ev's mask bits (x87_SIMD_moves_uop:
 * ALLP2 loads, ALLP0 stores and moves); -1 also for no or undefined bits.
 */
int p4_model_retire_exec_mask(struct p4_model *m, unsigned lp, unsigned cpl, enum p4_event ev,
			      uint16_t mask, unsigned uops);

/*
 * One stepped instruction as the core model (the memory system, timing,
 * predictor and trace cache) turned it into event increments, for
 * p4_model_apply: a step's data flows one way, into the PMU model, which
 * decides itself what depends on its own state - which of the
 * instruction's loads and stores the front end tags (PMU reference 5.6),
 * hence instr_retired's NBOGUSTAG or NBOGUSNTAG, the execution tags of
 * its x87/SIMD µops (5.7) and the registers a PEBS record takes (5.2).
 */
struct p4_event_inc {
	enum p4_event ev;
	uint16_t mask;		/* 0 with instr_retired: the bit tagging decides */
	uint32_t n;
};

#define P4_STEP_INCS	32	/* more in one step are applied in several batches */

/* n occurrences of an uncore unit's event with attributes attrs (p4_model_uncore_event). */
struct p4_unc_inc {
	enum p4_unc_unit unit;
	uint32_t n;
	uint64_t attrs;
};

#define P4_STEP_UNC	4	/* a step's uncore increments (IBUSQ fill, eviction; EFSB other, own) */

/*
 * A step's replayed µops by the causes the replay-tagging metrics select
 * (PMU reference 5.5): loads that missed L1 (1stL_cache_load_miss_retired),
 * L2 (2ndL...), the DTLB (DTLB_load/store_miss_retired), and loads the MOB
 * replayed for a store-forward (MOB_load_replay_retired). Which of them
 * replay_event NBOGUS counts depends on PEBS_ENABLE and PEBS_MATRIX_VERT
 * (p4_model_replay_tagged).
 */
struct p4_replay_in {
	uint32_t l1_load, l2_load, dtlb_load, dtlb_store, mob_load;
};

/* struct p4_step_batch.parts: what it holds besides inc[] (each applied once). */
#define P4_STEP_TAG	1u	/* the tagging inputs: regs, loads, stores, exec */
#define P4_STEP_REPLAY	2u	/* replay */
#define P4_STEP_UNCORE	4u	/* unc[0..nunc) */

struct p4_step_batch {
	/* set before anything is added: n = done = parts = 0 (one word, every step) */
	uint8_t n, done;	/* increments in inc[], applied of them */
	uint8_t parts;		/* P4_STEP_TAG | P4_STEP_REPLAY | P4_STEP_UNCORE */
	bool tagged;		/* the front end tagged one of the instruction's µops (the apply's) */
	uint8_t lp, cpl;	/* who retired it: set before the apply */
	uint8_t nunc;		/* uncore increments in unc[] */
	uint16_t exec_mask;	/* exec's µops' mask bits, 0: all of them */
	enum p4_event exec;	/* the upstream event of its x87/SIMD µop, or P4_NEVENT */
	uint32_t loads, stores;	/* its load and store µops */
	const struct p4_pebs_record *regs;	/* the registers a PEBS record takes, or NULL */
	struct p4_replay_in replay;
	struct p4_unc_inc unc[P4_STEP_UNC];
	struct p4_event_inc inc[P4_STEP_INCS];
};

/*
 * Apply b (under the caller's PMU lock): first, with P4_STEP_TAG, the PEBS
 * registers, the tagged loads and stores and the x87/SIMD µop (setting
 * b->tagged), then inc[done..n) in order, at most `limit` occurrences in
 * all (an increment is split at the limit), and after the last of them
 * the replay-tagged µops (P4_STEP_REPLAY) and the uncore's unc[]
 * (P4_STEP_UNCORE). Each part is applied once (its bit is cleared). Returns the increments'
 * occurrences applied; b->done == b->n when all are. The caller sends the
 * PMIs the model raised between two calls, so that no counter wraps twice
 * before its interrupt.
 */
uint64_t p4_model_apply(struct p4_model *m, struct p4_step_batch *b, uint64_t limit);

/* The µops of r that the replay-tagging metric programmed now tags (replay_event NBOGUS). */
uint32_t p4_model_replay_tagged(const struct p4_model *m, const struct p4_replay_in *r);

/* Close the current cycle and run `cycles` - 1 more cycles without events. */
void p4_model_tick(struct p4_model *m, uint64_t cycles);

/* RDPMC with ECX = ecx: 0 and EDX:EAX in *value, or MSR_BUS_EFAULT (#GP). */
int p4_model_rdpmc(const struct p4_model *m, uint32_t ecx, uint64_t *value);

/*
 * n occurrences of an uncore `unit` event (p4_uncore.h) with attributes
 * `attrs` (control-word bit positions: thread, type, snoop result, state,
 * ...), for the whole package. Counted by every register of the unit whose
 * upper 32 bits are non-zero and whose fields match; the low 32 bits wrap
 * (m->uncore_wraps[]) unless Saturate is set. P4_UNC_IBUSQ_LAT adds n
 * (weighted cycles) to IFSB_CNTR7 while IFSB_CTL6 bit 26 is set. -1 when
 * the part has no uncore set or the unit belongs to the other set.
 */
int p4_model_uncore_event(struct p4_model *m, enum p4_unc_unit unit, uint64_t attrs, uint64_t n);

/* Does uncore register i (0..7, 107CCH + i) count now? */
bool p4_model_uncore_counting(const struct p4_model *m, unsigned i);

/* Inject faults (a zeroed struct heals the model). */
void p4_model_set_faults(struct p4_model *m, const struct p4_model_faults *f);

/*
 * PMI skid: the PMI an overflow owes is raised on the (skid + 1)-th event
 * after the overflow, not the first (p4_model.c, "Overflow, PMI"). 0 is the
 * manual's own reading; P4_MODEL_SKID_MAX the largest accepted.
 */
#define P4_MODEL_SKID_MAX	1024u
int p4_model_set_skid(struct p4_model *m, uint32_t skid);

/* Does counter n count now (enabled, or started by a cascade, and not dead)? */
bool p4_model_running(const struct p4_model *m, enum p4_counter n);
/*
 * Increments until the first running counter overflows (at least 1): so
 * many cycles can be fed in one call before a cascade may start (a counter
 * adds at most one a cycle from RUNNING or from its comparator).
 */
uint64_t p4_model_to_overflow(const struct p4_model *m);

/* Level of the PMI request to `lp`: some CCCR with OVF and OVF_PMI for it. */
bool p4_model_pmi_asserted(const struct p4_model *m, unsigned lp);

#endif
