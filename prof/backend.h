/*
 * backend.h - a PMU backend is one const table of operations (the shape of
 * Linux's struct x86_pmu and hwpmc's class ops). prof/perf.c runs counting,
 * the overflow interrupt and polling through it and never asks which
 * backend it has: the hardware (prof/backend/hw.c) and the software model with
 * its adapter (prof/backend/model.c) differ only in what these operations do.
 *
 * Also declared here: the few services perf.c offers its backends (the PMU
 * lock, the LPs' LVT PC entries, the interrupt statistics).
 */
#ifndef NBPROF_PROF_BACKEND_H
#define NBPROF_PROF_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pmu/msr_bus.h"
#include "pmu/p4_caps.h"
#include "prof/perf.h"

struct perf_backend_ops {
	const char *name;		/* "hardware", "model" */
	/* Its events are fed from single-stepping the workload (workloads then run stepped). */
	bool steps_workloads;
	/*
	 * Make this backend usable for the CPU with signature sig (its own
	 * checks first: the hardware backend touches no PMU register before
	 * IA32_MISC_ENABLE says there is one). 0, or -1 with the reason.
	 */
	int (*select)(const struct p4_sig *sig, bool ht, struct p4_caps *caps, char *err, size_t n);
	struct msr_bus *(*bus)(void);	/* the PMU registers (asked once, when chosen) */
	/* Text shown with `msr` for PMU registers it serves instead of the machine, or NULL. */
	const char *(*msr_label)(void);
	/* Its event feed, called from the workload hooks (workload/workload.h); NULL: none. */
	void (*begin)(struct perf_inputs *in, uint8_t lp);
	void (*end)(struct perf_inputs *in, uint8_t lp);
	void (*step)(void *in, const struct step_info *s);	/* in: struct perf_inputs */
	void (*synthetic)(void *in, uint8_t lp, uint8_t cpl, const char *spec, uint64_t n);
	void (*fault)(void *in, const struct step_fault *f);	/* a stepped instruction faulted */
	/* What it fed of LP lp's kernel code in the last run's counting window; NULL: none. */
	const struct perf_window *(*window_inputs)(unsigned lp);
	/* A counting run starts / has stopped (interrupts of the old run are forgotten). */
	void (*run_begin)(void);
	void (*run_end)(void);
	/* The calling LP has just unmasked its LVT PC (perf_pmi_handler's last step). */
	void (*unmasked)(unsigned lp);
	enum perf_source (*source)(enum p4_event ev, const struct perf_inputs *in);
	/* Quirk injection into the running count; NULL where it cannot be done. */
	int (*inject)(unsigned unflagged, unsigned reloads, char *err, size_t n);
	/* Fault injection (perf_inject_fault); NULL where it cannot be done. */
	int (*inject_fault)(enum perf_fault kind, uint32_t arg, char *err, size_t n);
	/* RDPMC with ECX = ecx (the instruction, or the model's): 0, or MSR_BUS_EFAULT. */
	int (*rdpmc)(uint32_t ecx, uint64_t *value);
	/*
	 * TSC each LP (by percpu index) has spent inside this backend (its bus,
	 * unmasked) so far; NULL: not measured. Data, not a call: the PMI
	 * handler reads it twice per interrupt.
	 */
	const volatile uint64_t *bus_tsc;
	/*
	 * The calling LP's periodic tick in its workload's own time: the LAPIC
	 * timer's vector hz times a second of it (the caller installs the
	 * handler); 0 stops it. The hardware's is the LAPIC timer (wall time
	 * is the workload's); a backend that runs workloads stepped supplies
	 * one in the time they would take unstepped (prof/record.c's poll).
	 */
	void (*tick)(unsigned hz);
	/*
	 * The calling LP's clock in its workload's own time, for shares of
	 * that time (record's throttle weighs its PMI handlers' time against
	 * it); NULL: the TSC, as on a Pentium 4. A backend that steps
	 * workloads, hundreds of times slower than they would run, gives the
	 * time of what it stepped (arch/x86/step.h step_lp_clock), which its
	 * own work does not advance. Called inside the PMI handler: never
	 * stepped (prof/perf.c perf_use).
	 */
	uint64_t (*clock)(void);
	/* One line of backend detail for `pmu` (may be empty). */
	void (*describe)(char *buf, size_t n);
	/*
	 * What CPUID.1 (DS, DTES64) and IA32_MISC_ENABLE say of the PMU this
	 * backend is, written over *ci (cpu_identify's); NULL: the CPU's own.
	 */
	void (*cpu_view)(struct cpu_info *ci);
	/*
	 * A machine fault the PMU caused since the run began or the last
	 * call (a PEBS assist that could not reach its DS save area), as one
	 * line in buf, reported once; false when none. NULL: the backend
	 * cannot tell (a real machine stops).
	 */
	bool (*machine_fault)(char *buf, size_t n);
};

extern const struct perf_backend_ops perf_backend_hw;
extern const struct perf_backend_ops perf_backend_model;

/* ---- services of prof/perf.c for the backends ------------------------------ */

/*
 * The PMU lock: one LP at a time programs the PMU, handles an overflow or
 * (model) runs a model call. It may be retaken by the LP that holds it; an
 * NMI that arrives on that LP meanwhile is handled when it is released.
 */
void perf_lock(void);
void perf_unlock(void);
/* Does the calling LP hold it (an NMI it sends itself then waits for the release)? */
bool perf_lock_held(void);

/* The PMU's name for the calling LP: its SMT ID, T0 = 0, T1 = 1 (PMU reference 8). */
unsigned perf_this_lp(void);

/* LP lp's LVT PC entry as the PMU code last set it (each LP programs its own). */
uint32_t perf_lvt(unsigned lp);
/* Set LP lp's entry's mask bit, as NetBurst does when it delivers a PMI (PMU reference 6). */
void perf_lvt_automask(unsigned lp);

/* True while a counting run is programmed. */
bool perf_counting(void);
/* The most events one feed may add: no counter of the running count can wrap twice in it. */
uint64_t perf_feed_chunk(void);

/* The interrupt statistics, for the backend's own entries (late, deferred, ...). */
struct perf_pmi_stats *perf_pmi_stats(void);

#endif
