/*
 * pebs.h - the kernel's PEBS buffers: one DS save area and one PEBS buffer
 * per logical processor (pmu/p4_pebs.h for the layouts; the 64-bit form in
 * the x86-64 kernel, the 32-bit one in the ia32 kernel, PMU reference 5.1),
 * their set-up before a
 * sampling run, and the drain the PMI handler runs when the PEBS index has
 * reached the interrupt threshold.
 *
 * PEBS availability: CPUID.1:EDX[21] (DS) and IA32_MISC_ENABLE bit 7 set,
 * bit 12 clear (PMU reference 5.1), read through the PMU backend's bus (the
 * model serves its own IA32_MISC_ENABLE); the model stands in for a
 * NetBurst part with DS, whatever CPUID the emulator reports.
 */
#ifndef NBPROF_PROF_PEBS_H
#define NBPROF_PROF_PEBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pmu/p4_pebs.h"

struct p4_plan;

#define PEBS_NLP		2
#define PEBS_RECORDS_MAX	128	/* records per LP's buffer */
#define PEBS_RECORDS_DEFAULT	64

/* 0 when PEBS can be used with the current backend, else -1 with the reason. */
int pebs_check(char *err, size_t n);

/*
 * Prepare LP lp's DS area for a run: `records` slots (2..PEBS_RECORDS_MAX),
 * the interrupt threshold p4_ds_threshold_below(records) records below
 * the maximum (several records short, as the SDM asks), counter reset
 * -period. The area is written to IA32_DS_AREA by pebs_load() on that LP.
 */
int pebs_prepare(unsigned lp, unsigned records, uint64_t period, char *err, size_t n);

/* On LP lp itself: IA32_DS_AREA <- its area (prepared) or 0. 0, or -1 on a fault. */
int pebs_load(unsigned lp);

/* On the calling LP: IA32_DS_AREA <- 0. */
void pebs_unload(void);

/*
 * Clear, in MSR_PEBS_ENABLE, the PEBS bits of the LPs in `lps` (bit n = LP
 * n) as seen from the calling LP, and nothing else: the sibling's PEBS and
 * any replay-tagging bits stay (PMU reference 5.5).
 */
void pebs_disable(unsigned lps);

/* Is LP lp's buffer prepared for the current run? */
bool pebs_armed(unsigned lp);

/* Forget the run: areas unarmed (IA32_DS_AREA is cleared by each LP's pebs_load). */
void pebs_release(void);

typedef void pebs_record_fn(void *ctx, unsigned lp, const struct p4_pebs_record *r);

/*
 * Hand every record written since the last drain to fn, in order, and
 * reset the index to the base. A buffer found full (index at the maximum)
 * is counted in pebs_stats()->full[lp]. Returns the records drained.
 */
unsigned pebs_drain(unsigned lp, pebs_record_fn *fn, void *ctx);

/*
 * pebs_drain from the PMI handler, while the count runs: LP lp's PEBS
 * counter (plan's PEBS slot for lp) stopped through its CCCR meanwhile and
 * its CCCR written back after, the counter itself untouched, so the
 * drain's own tagged loads and stores cannot overflow it with PEBS off;
 * on LP0 its PEBS enable bit is also cleared and set again after (the
 * SDM's DS interrupt service routine), while LP1 leaves the shared
 * MSR_PEBS_ENABLE alone (SDM 18.16.3: one LP modifies its thread bits).
 * Nothing is written when the buffer is empty.
 */
unsigned pebs_drain_live(const struct p4_plan *plan, unsigned lp, pebs_record_fn *fn, void *ctx);

/*
 * The records written to LP lp's buffer since its last drain, when they
 * have reached its interrupt threshold; else 0 (and when none is armed).
 * ctx is not used: the signature is the PMI handler's (prof/perf.h
 * perf_pebs_refilled_fn), which record hands it.
 */
unsigned pebs_refilled(void *ctx, unsigned lp);

struct pebs_stats {
	uint64_t records[PEBS_NLP];	/* drained */
	uint64_t drains[PEBS_NLP];	/* drains that found records */
	uint64_t full[PEBS_NLP];	/* drains that found the buffer full */
};
const struct pebs_stats *pebs_stats(void);
void pebs_reset_stats(void);

/*
 * Memory access for the model's PEBS assist (p4_model_mem_fn): only the
 * DS areas and buffers above are reachable; anything else is -1.
 */
int pebs_mem(void *ctx, uint64_t addr, void *buf, unsigned len, bool write);

/*
 * Raw set-ups (the shell's `pebs` command, with registers written by hand):
 * LP lp's prepared area (0 when none), its PEBS fields, record k of those
 * written since the base (-1 past the index), forgetting one LP's area,
 * and the size of one record in the kernel's layout.
 */
uint64_t pebs_area_addr(unsigned lp);
int pebs_fields(unsigned lp, struct p4_ds_pebs *p);
int pebs_record_at(unsigned lp, unsigned k, struct p4_pebs_record *r);
void pebs_forget(unsigned lp);
unsigned pebs_record_bytes(void);

#endif
