/*
 * perf.h - the PMU as the running kernel sees it: which backend counts
 * (the hardware PMU or the software model behind the same struct msr_bus,
 * prof/backend.h), counting runs with 64-bit totals, the overflow interrupt
 * and its sample sink, the write trace, and the workload hooks that feed a
 * backend. Nothing here depends on which backend is in use.
 */
#ifndef NBPROF_PROF_PERF_H
#define NBPROF_PROF_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pmu/msr_bus.h"
#include "pmu/p4_alloc.h"
#include "pmu/p4_caps.h"
#include "pmu/p4_probe.h"
#include "workload/workload.h"
#include "pmu/p4_events.h"

enum perf_backend {
	PERF_BACKEND_NONE,	/* not a NetBurst CPU and no model selected */
	PERF_BACKEND_HW,
	PERF_BACKEND_MODEL,
};

enum perf_pmi_mode {
	PERF_PMI_FIXED,		/* LVT PC: vector LAPIC_PMI_VECTOR, fixed delivery */
	PERF_PMI_NMI,		/* LVT PC: NMI delivery */
};

/* Counters of what the overflow path did (shown by `pmu`, checked by tests). */
struct perf_pmi_stats {
	uint64_t interrupts;	/* PMI handler entries */
	uint64_t overflows;	/* counters found overflowed */
	uint64_t unflagged;	/* overflowed without CCCR.OVF (bit 39 test, PMU reference 6) */
	uint64_t reraised;	/* model still asserting at unmask: PMI sent again */
	uint64_t deferred;	/* model PMI while LVT PC was masked */
	uint64_t dropped;	/* model PMI for an LP that is not running */
	uint64_t late;		/* fixed IPI not taken within the wait window */
	uint64_t held;		/* model PMI held until a stepped handler's IRET (arch/x86/step.h) */
	uint64_t lp_interrupts[2];	/* handler entries on LP0 / LP1 (T0 / T1) */
	uint64_t mismatches;	/* reloaded counter read back different: written again */
	uint64_t handoffs;	/* PMI taken inside the step handler: sampled the workload's frame */
	uint64_t polls;		/* perf_poll() scans (cascade-PMI erratum) */
	uint64_t tsc_total;	/* TSC spent in PMI handlers and polls */
	uint64_t by_vector;	/* entries through the LVT PC vector (fixed delivery) */
	uint64_t by_nmi;	/* entries through the NMI vector (NMI delivery) */
	uint64_t lp_tsc[2];	/* tsc_total's part on LP0 / LP1 (T0 / T1): each LP's own share */
	uint64_t backend_tsc;	/* tsc_total's part inside the backend (its bus, its re-raise) */
	uint64_t lp_backend_tsc[2];	/* backend_tsc's part on LP0 / LP1 (T0 / T1) */
};

struct perf_info {
	enum perf_backend backend;
	struct p4_sig sig;
	bool ht;			/* the PMU is shared by two LPs */
	struct p4_caps caps;
	char reason[256];		/* why this backend */
	bool probe_failed;		/* the hardware backend, whose probe did not see counter 0 count */
	char probe[160];		/* the probe's verdict in words (hardware backend) */
	enum perf_pmi_mode pmi_mode;
	bool trace;
	struct perf_pmi_stats pmi;
};

/* At boot, after the LAPIC and the interrupt self-test: choose and print. */
void perf_init(void);

const struct perf_info *perf_info(void);
const char *perf_backend_name(enum perf_backend b);

/*
 * The hardware probe's verdict (pmu/p4_probe.h) and its words; taken when
 * the hardware backend was first selected.
 */
enum p4_probe_verdict perf_hw_probe(char *why, size_t n);

/* Switch backends; -1 with err when impossible (nothing changed then). */
int perf_select_hw(char *err, size_t n);
int perf_select_model(const struct p4_sig *sig, bool ht, char *err, size_t n);
/* The model's IA32_MISC_ENABLE bit 12 (PEBS unavailable) from its next selection on. */
void perf_model_set_pebs_unavailable(bool unavailable);

/* The bus PMU code uses (the backend's, wrapped by the trace while it is on), or NULL. */
struct msr_bus *perf_bus(void);
/* The backend's events come from single-stepping workloads: run them stepped. */
bool perf_steps_workloads(void);
/*
 * What the backend fed of LP lp's own kernel code in the last counting
 * run's window (the model steps it, arch/x86/step.h), or NULL when it feeds
 * none (the hardware backend; lp out of range).
 */
const struct perf_window *perf_window_inputs(unsigned lp);
/* How `msr` labels PMU registers the backend serves instead of the machine, or NULL. */
const char *perf_msr_label(void);
/* One line of backend detail for `pmu` ("" when none). */
void perf_describe(char *buf, size_t n);

void perf_set_trace(bool on);
void perf_set_pmi_mode(enum perf_pmi_mode mode);

/*
 * A counting run. Each counter starts at start[i] (the plan's preset for
 * a cascade starter, else the reload value) and is reloaded with reload[i]
 * by the overflow handler, which adds the events since the last write to
 * base[i]; the 64-bit total is base + (counter - start) mod 2^40.
 */
struct perf_count {
	struct p4_plan plan;
	uint64_t start[P4_MAX_REQUESTS];
	uint64_t reload[P4_MAX_REQUESTS];
	uint64_t base[P4_MAX_REQUESTS];
	uint64_t overflows[P4_MAX_REQUESTS];
	uint64_t unc_total[P4_UNC_NREG];	/* the plan's uncore counts (plan.unc), 64-bit */
	int unc_failed;			/* plan.unc index whose start faulted, or -1 */
	uint64_t chunk;			/* largest model input fed in one call */
	uint32_t pmi_mask[2];		/* per LP (T0, T1): the counters its handler scans */
	/*
	 * The overflow handler's restarts (perf.c perf_restart), worked out when
	 * the count starts, per LP: the requests of pmi_mask in the order they
	 * restart (those that count CPL 0 last), and each one's CCCR and
	 * restarting value. A handler whose PMI finds all of them overflowed
	 * (one counter's, the common case) leaves this list to its exit as it is.
	 */
	struct perf_restarts {
		uint8_t n;
		uint8_t idx[P4_MAX_REQUESTS];
		uint32_t msr[P4_MAX_REQUESTS];
		uint64_t on[P4_MAX_REQUESTS];
	} restarts[2];
	uint32_t started;		/* cascaded counters a marker found started (bit i) */
	bool running;
	/*
	 * The counting gate (perf_count_arm): the CCCR writes that open it
	 * (gate_on) and shut it (gate_off), cascaded partners first; none for
	 * a count perf_count_start started. shut: the gate was shut (the PMI
	 * handler and the stop's poll then reload a counter without
	 * restarting it); marked: a program's marker took over (it opens).
	 */
	uint8_t gate_n;
	bool shut, marked;
	bool gate_plain;		/* no cascades: a marker is the gate's writes (perf_gate_mark) */
	struct msr_bus *gate_bus;	/* perf_bus() at the start: the gate's and the overflow path's */
	uint32_t gate_msr[P4_MAX_REQUESTS];
	uint64_t gate_on[P4_MAX_REQUESTS], gate_off[P4_MAX_REQUESTS];
	/* An interrupt storm stopped the count (perf.c, perf_storm): what it saw. */
	bool storm;
	uint8_t storm_lp;
	uint8_t storm_idx;		/* the request whose overflow kept coming back */
	uint64_t storm_events;		/* its events between two of those PMIs: none the workload's */
	uint64_t storm_pmis;		/* PMIs in a row with the interrupted state unchanged */
	/*
	 * A PEBS buffer's storm: no counter overflowed at the PMIs, and their
	 * drains found records (this many at the last) - written by the
	 * handler's own tagged uops at CPL 0; storm_idx is the PEBS request.
	 */
	uint32_t storm_pebs;
	bool storm_pebs_early;		/* ... found at the first PMI, after its drain (part of a cycle) */
	/*
	 * Not a PMI storm but the poll tick's (perf_poll_tick): its rate, and
	 * in TSC cycles its period, its poll's time and the time from one
	 * tick's entry to the next's.
	 */
	uint32_t storm_tick_hz;
	uint64_t storm_tick_period, storm_tick_tsc, storm_tick_every;
	uint64_t last_events[P4_MAX_REQUESTS];	/* each request's events at its last overflow */
};

/* A PEBS buffer's size in records, and the records it takes up to its threshold. */
struct perf_pebs_size {
	unsigned slots, threshold;
};

/* The storm guard: prof/storm.h. pebs: the count's PEBS buffers (NULL: none). */
void perf_storm_text(const struct perf_count *s, const char *spec,
		     const struct perf_pebs_size *pebs, char *buf, size_t n);

/* Reload value for plain counting: bit 39 set, 2^39 events per interrupt. */
#define PERF_RELOAD_DEFAULT	(UINT64_C(1) << 39)

/*
 * Program and start, under the PMU lock. A request with spec.period (a
 * sampler) starts at and reloads -period; a cascade starter starts at -N;
 * every other counter starts at and reloads `reload`. The plan's uncore
 * counters (plan.unc) start first (p4_unc_start); when one faults nothing
 * else is programmed, s->unc_failed names it and -1 is returned.
 */
int perf_count_start(struct perf_count *s, const struct p4_plan *plan, uint64_t reload,
		       char *err, size_t n);
/*
 * perf_count_start, but with the counters armed and not counting
 * (p4_apply_gated): the workload runner opens the gate right before the
 * workload's first instruction and shuts it first thing after it returns
 * (the hooks' open and shut, perf_hooks), so that a Pentium 4 counts of the
 * kernel only those few instructions (docs/guide/counting.md). For a run
 * on one logical processor; perf_count_stop then reads and stops as ever.
 */
int perf_count_arm(struct perf_count *s, const struct p4_plan *plan, uint64_t reload,
		     char *err, size_t n);
/*
 * Read (before stopping: Xeon MP erratum O9), stop, and fill totals[plan.n];
 * then, last, read and stop the uncore counters into s->unc_total.
 */
void perf_count_stop(struct perf_count *s, uint64_t *totals);
/*
 * Take a fixed-vector PMI an earlier run left pending in this LP's local
 * APIC, before a run reads its interrupt counts: one sent while the LP ran
 * with IF = 0 (the kernel's code after the workload, in the counting
 * window) waits there (SDM Vol. 3A 6.8.1) after that run's stop has taken
 * its overflow, and would otherwise be taken as the next run's PMI. No
 * effect with IF = 1 (it was taken) or nothing pending.
 */
void perf_take_pending(void);

/*
 * The overflow path runs one way: the interrupt (LVT PC vector or NMI) or a
 * poll finds an overflowed counter of the running count, stops it, adds its
 * events to the 64-bit total, and calls the sample sink once; the sink
 * returns the value to reload the counter with (usually ov->reload) and
 * never touches the PMU itself. f is the interrupted workload's frame (NULL,
 * or a caller's "no context" frame, from a poll without one).
 */
struct trap_frame;
struct perf_overflow {
	unsigned idx;		/* plan index */
	unsigned cpu;		/* the percpu index of the LP that found it (the caller's) */
	uint64_t raw;		/* the counter as it stopped (40 bits) */
	uint64_t events;	/* events counted since the counter was last loaded */
	uint64_t reload;	/* what it is reloaded with unless the sink says otherwise */
	bool at_stop;		/* found by the count's stop, not by a PMI (f: the stop's) */
};
typedef uint64_t perf_sink_fn(void *ctx, struct trap_frame *f, const struct perf_overflow *ov);
void perf_set_sink(perf_sink_fn *fn, void *ctx);

/*
 * PEBS (prof/pebs.h): the PMI handler calls fn after its counter scan, on
 * the interrupted LP with the PMU lock held, so that a PEBS buffer that
 * reached its threshold is drained (a PEBS PMI sets no CCCR.OVF); it
 * returns the records it drained (the storm guard's evidence). After a
 * drain, once its LVT PC entry is unmasked, the handler asks refilled for
 * the records written since, if they reached the threshold: the handler's
 * own tagged uops did, with the entry masked (the buffer's interrupt
 * lost), and every threshold interrupt would do it again - a storm
 * (prof/storm.h). NULL: none.
 */
typedef unsigned perf_pebs_fn(void *ctx, unsigned lp, struct trap_frame *f);
typedef unsigned perf_pebs_refilled_fn(void *ctx, unsigned lp);
void perf_set_pebs_hook(perf_pebs_fn *fn, perf_pebs_refilled_fn *refilled, void *ctx);

/*
 * The overflow handler's scan without an interrupt, for counters that
 * cannot raise one (the cascade-PMI erratum, PMU reference 2.3): called from
 * a timer interrupt with the interrupted frame. LVT PC is masked during the
 * scan, so a PMI (NMI) cannot handle the same counter at the same time.
 */
void perf_poll(struct trap_frame *f);
/*
 * perf_poll from the backend's periodic tick (perf_tick), with the tick's
 * own storm guard (prof/storm.h): ticks that leave the interrupted code no
 * time stop the count and the tick, and the command ends with
 * perf_storm_text's error.
 */
void perf_poll_tick(struct trap_frame *f);
/*
 * The calling LP's poll tick: the LAPIC timer's vector hz times a second of
 * its workload's own time, as the backend keeps it (backend.h tick: the
 * LAPIC timer on a Pentium 4, the step engine's tick under the model); the
 * caller installs the vector's handler. 0 stops it. False: no backend.
 */
bool perf_tick(unsigned hz);
/*
 * The calling LP's clock for shares of its time (prof/backend.h clock):
 * the TSC on a Pentium 4, under the model the time of the instructions it
 * stepped for the LP. Only differences mean anything.
 */
uint64_t perf_clock(void);

/*
 * Model backend, during a running count: make the next `unflagged`
 * overflows read as CCCR.OVF clear and the next `reloads` reloads lose
 * their counter writes until read back (N15), so that the handler's
 * workarounds (pmi.unflagged, pmi.mismatches) are exercised. -1 with err
 * otherwise.
 */
int perf_inject(unsigned unflagged, unsigned reloads, char *err, size_t n);
/* Whether the backend can do that. */
bool perf_can_inject(void);
/*
 * Model backend: faults that last until they are injected again with arg 0
 * (-1 with err elsewhere), to see tests of the PMU fail.
 */
enum perf_fault {
	PERF_FAULT_DEAD,	/* arg: counters (bit n) that never count */
	PERF_FAULT_RDPMC,	/* arg: counters (bit n) whose RDPMC differs from RDMSR */
	PERF_FAULT_NOMASK,	/* arg: PMIs delivered without masking LVT PC */
	PERF_FAULT_ERRATUM,	/* arg 1: the cascade-PMI erratum opposite to the signature's */
	PERF_FAULT_STUCK,	/* arg: MSR of an ESCR whose set bits stick at 1 (0: none) */
	PERF_FAULT_STUCK_OVF,	/* arg: counters (bit n) whose CCCR.OVF cannot be cleared once set */
};
int perf_inject_fault(enum perf_fault kind, uint32_t arg, char *err, size_t n);

struct cpu_info;
/*
 * cpu_identify() as the selected PMU backend is (the model's DS, DTES64 and
 * IA32_MISC_ENABLE for its signature; the hardware's own): `cpu`, PEBS
 * availability and the DS layout read this one view.
 */
void perf_cpu_identify(struct cpu_info *ci);

/* A machine fault the PMU caused since the count started, as one line; false: none known. */
bool perf_machine_fault(char *buf, size_t n);

/* RDPMC with ECX = ecx on the backend (the instruction, or the model's). 0 or MSR_BUS_EFAULT. */
int perf_rdpmc(uint32_t ecx, uint64_t *value);

/* What fed the model during a run (model backend). */
struct perf_inputs {
	uint64_t steps;			/* stepped instructions */
	uint64_t branches;		/* of which branches */
	uint64_t cycles;		/* TSC cycles fed as clockticks */
	uint64_t synthetic;		/* synthetic occurrences */
	uint64_t synthetic_bad;		/* synthetic occurrences whose spec did not parse */
	char synthetic_spec[WORKLOAD_SPEC_MAX];
	enum p4_event synthetic_event;
	bool synthetic_mixed;		/* more than one spec was seen */
	uint64_t mem_unknown;		/* stepped instructions whose memory operands were not decoded */
	uint64_t mem_fed[(P4_NEVENT + 63) / 64];	/* events the memory model fed (bit per event) */
};

/*
 * What the model stepped of one LP's kernel code in a counting window
 * (arch/x86/step.h): all of it (in), and of it the instructions fed while
 * one of the model's counters was running, by the CPL they retired at
 * (0; 3: the ring-3 exit trampoline's int 0x80). A counter programmed
 * alone counts, of these, exactly what its ESCR's OS/USR (T0/T1) bits
 * select: tests subtract that share to check a workload's own count.
 */
struct perf_window {
	struct perf_inputs in;
	uint64_t running_cpl0;
	uint64_t running_cpl3;
};

/*
 * Hooks for workload_run(): each LP programs its own LVT PC when its
 * workload begins, and the backend's event feed (the model's) runs in them.
 */
void perf_hooks(struct perf_inputs *in, struct workload_hooks *h);

/* Event sources of the model, for labelling counts. */
enum perf_source {
	PERF_SOURCE_STEP,	/* stepped instructions and branches (real) */
	PERF_SOURCE_TSC,	/* clockticks from TSC deltas (real) */
	PERF_SOURCE_SYNTHETIC,
	PERF_SOURCE_NONE,	/* the model has nothing that produces it */
	PERF_SOURCE_HW,		/* counted by the processor itself */
	PERF_SOURCE_MEMORY,	/* the memory-system model fed by the stepped accesses */
	PERF_SOURCE_COST,	/* clockticks from the cost model (a model, not a measurement) */
};

enum perf_source perf_event_source(enum p4_event ev, const struct perf_inputs *in);


#endif
