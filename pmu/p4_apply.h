/*
 * p4_apply.h - write a plan to the PMU through struct msr_bus, safely.
 *
 * p4_pmu_reset(): all 18 CCCRs to 0 first (stops counting and clears the
 * sticky OVF, so stale counters from a previous kernel - also the sibling
 * LP's - stop raising PMIs: PMU reference 9.6), then every ESCR the model has
 * (never IQ_ESCR0/1 on models >= 3: #GP), then PEBS_ENABLE and
 * PEBS_MATRIX_VERT.
 *
 * p4_apply(): (1) each planned CCCR to 0 - disable and clear OVF before
 * touching its counter (PMU reference 9.16, 5.8 step 2); (2) each ESCR once;
 * (3) each counter's preset, masked to 40 bits, written twice (Intel 249199
 * erratum N15); (4) MSR_PEBS_ENABLE and MSR_PEBS_MATRIX_VERT, read and
 * written back with the plan's bits set and the sibling's PEBS bits kept
 * (PMU reference 5.5, Linux's FIXME): a plan's replay metric replaces the
 * metric bits and MATRIX_VERT (one plan programs both LPs' counters), and,
 * for a PEBS request, MY_THR or OTH_THR for its LP as seen from
 * plan->writer_lp (PMU reference 5.3, SDM 18.16.3) - only when
 * plan->ds_area_set says the DS save area is in place, otherwise PEBS is
 * not enabled and res->pebs_refused is set (PEBS writes through an unset
 * IA32_DS_AREA would land anywhere); (5) the CCCRs of
 * cascaded counters (armed, Enable clear) before those that enable, so a
 * starter cannot overflow before its partner is armed. Then every written
 * ESCR and CCCR is read back and mismatches are counted; a CCCR's OVF bit
 * is not compared (the counter may have overflowed since it was enabled),
 * nor, for a cascaded counter, its Enable and cascade bits (a start may
 * have changed them).
 */
#ifndef NBPROF_PMU_P4_APPLY_H
#define NBPROF_PMU_P4_APPLY_H

#include "pmu/msr_bus.h"
#include "pmu/p4_alloc.h"
#include "pmu/p4_caps.h"
#include "pmu/p4_regs.h"
#include "pmu/p4_tables.h"

struct p4_apply_result {
	unsigned writes;	/* WRMSRs issued */
	unsigned faults;	/* accesses that returned MSR_BUS_EFAULT */
	unsigned mismatches;	/* ESCR/CCCR read back different from what was written */
	bool pebs_refused;	/* a PEBS request without plan->ds_area_set: not enabled */
};

void p4_pmu_reset(struct msr_bus *bus, const struct p4_caps *caps, struct p4_apply_result *res);
void p4_apply(struct msr_bus *bus, const struct p4_plan *plan, struct p4_apply_result *res);
/*
 * p4_apply with every CCCR left as its enabled value minus Enable (bit 12):
 * all is programmed and nothing counts until each CCCR is written with its
 * plan value (slot.cccr_value, cascaded partners first) - a counting gate
 * opened right before a workload and shut right after it (prof/perf.h
 * perf_count_arm), so that the kernel's own setup is not counted.
 */
void p4_apply_gated(struct msr_bus *bus, const struct p4_plan *plan, struct p4_apply_result *res);

/*
 * The plan's uncore counters (plan->unc, p4_alloc.h). A register counts in
 * its low 32 bits once its upper 32 bits are written non-zero and stops
 * when they are written 0 (SDM 18.20; PMU reference 1.4); the 32-bit count
 * is extended to 64 bits by polling (p4_unc_extend), exact while fewer than
 * 2^32 events pass between two polls. The registers are package-wide: a
 * count includes every LP's transactions its control word selects. No
 * read-back check: on hardware the low half may count between the write
 * and the read.
 *
 * p4_unc_start(): write each register's start value in plan order; when a
 * write faults, write 0 to those already started and return the index of
 * the one that faulted; -1 when every one started.
 * p4_unc_poll(): read each low half and extend totals[plan->unc_n] (a
 * register that faults keeps its total).
 * p4_unc_stop(): poll a last time, then write 0 to every register.
 */
int p4_unc_start(struct msr_bus *bus, const struct p4_plan *plan);
void p4_unc_poll(struct msr_bus *bus, const struct p4_plan *plan, uint64_t *totals);
void p4_unc_stop(struct msr_bus *bus, const struct p4_plan *plan, uint64_t *totals);

/* Stop the plan's counters: CCCR <- 0 (Enable and OVF cleared). */
void p4_stop(struct msr_bus *bus, const struct p4_plan *plan, struct p4_apply_result *res);

/* Read counter c (40 bits). 0 or MSR_BUS_EFAULT. */
static inline int p4_counter_read(struct msr_bus *bus, enum p4_counter c, uint64_t *value)
{
	uint64_t v;
	int r = msr_bus_read(bus, p4_counters[c].msr, &v);	/* inline: the PMI handler's path */

	if (r == 0)
		*value = v & P4_COUNTER_MASK;
	return r;
}


/*
 * Stop slot i's counter on its null event (slot.cccr_quiet): OVF cleared,
 * cascade bits too. Enable and the cascade bits clear: stopped under either
 * reading of a cascade start; p4_cccr_restart's value restarts it.
 * Inline, as the two below: the PMI handler's path.
 */
static inline int p4_counter_quiet(struct msr_bus *bus, const struct p4_plan *plan, unsigned i)
{
	return msr_bus_write(bus, p4_counters[plan->slot[i].counter].cccr_msr,
			     plan->slot[i].cccr_quiet);
}

/*
 * The CCCR that restarts slot i's counter after its overflow: its
 * programmed value, except that a cascaded counter (which has started, or
 * it could not have overflowed) gets Enable set and its cascade bits
 * clear, so it runs whichever way the hardware shows a start (SDM Example
 * 18-1: "automatically enabled"; p4_model.c "Starts").
 */
static inline uint64_t p4_cccr_restart(const struct p4_plan *plan, unsigned i)
{
	uint64_t v = plan->slot[i].cccr_value;

	if (!plan->slot[i].link)
		return v;
	return (v | CCCR_ENABLE) & ~(CCCR_CASCADE | CCCR_EXT_CASCADE);
}

/*
 * Reload slot i's counter, stopped by p4_counter_quiet, with value (the
 * overflow handler): written twice (N15), read back and written once more
 * when it still differs (counted in *mismatches), then `cccr` written back.
 * p4_counter_reload_msr: the same by the counter's and its CCCR's MSR numbers;
 * p4_counter_load_msr: all but the CCCR write (the overflow handler
 * restarts its counters last, prof/perf.c).
 */
static inline __attribute__((always_inline)) void p4_counter_load_msr(struct msr_bus *bus,
									uint32_t msr, uint64_t value,
									uint64_t *mismatches)
{
	uint64_t v = value & P4_COUNTER_MASK, got = 0;

	msr_bus_write(bus, msr, v);
	msr_bus_write(bus, msr, v);		/* Intel 249199 erratum N15 */
	if (msr_bus_read(bus, msr, &got) == 0 && (got & P4_COUNTER_MASK) != v) {
		(*mismatches)++;		/* N15 struck despite the double write */
		msr_bus_write(bus, msr, v);
	}
}

static inline void p4_counter_reload_msr(struct msr_bus *bus, uint32_t msr, uint32_t cccr_msr,
					 uint64_t value, uint64_t cccr, uint64_t *mismatches)
{
	p4_counter_load_msr(bus, msr, value, mismatches);
	msr_bus_write(bus, cccr_msr, cccr);
}

static inline void p4_counter_reload(struct msr_bus *bus, const struct p4_plan *plan, unsigned i,
				     uint64_t value, uint64_t cccr, uint64_t *mismatches)
{
	const struct p4_counter_desc *d = &p4_counters[plan->slot[i].counter];

	p4_counter_reload_msr(bus, d->msr, d->cccr_msr, value, cccr, mismatches);
}

/*
 * The counter's value from a read while it ran (`running`) and a read
 * after it was stopped (`stopped`), Xeon MP erratum O9 (PMU reference 6):
 * stopping on the carry from bit 31 to 32 loses that carry, so the
 * stopped value may be 2^32 short. Events between the reads are fewer
 * than 2^32, so running + (stopped - running) mod 2^32 is exact either way.
 */
static inline uint64_t p4_counter_settle(uint64_t running, uint64_t stopped)
{
	return (running + ((stopped - running) & UINT64_C(0xffffffff))) & P4_COUNTER_MASK;
}

#endif
