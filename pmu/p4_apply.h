/*
 * p4_apply.h - write a plan to the PMU through struct msr_bus, safely.
 *
 * p4_pmu_reset(): all 18 CCCRs to 0 first (stops counting and clears the
 * sticky OVF, so stale counters from a previous kernel - also the sibling
 * LP's - stop raising PMIs: fact sheet 9.6), then every ESCR the model has
 * (never IQ_ESCR0/1 on models >= 3: #GP), then PEBS_ENABLE and
 * PEBS_MATRIX_VERT.
 *
 * p4_apply(): (1) each planned CCCR to 0 - disable and clear OVF before
 * touching its counter (fact sheet 9.16, 5.8 step 2); (2) each ESCR once;
 * (3) each counter's preset, masked to 40 bits, written twice (Intel 249199
 * erratum N15); (4) PEBS_ENABLE MY_THR when a PEBS request is planned
 * (fact sheet 5.3: bit 25, relative to the writing LP); (5) the CCCRs of
 * cascaded counters (armed, Enable clear) before those that enable, so a
 * starter cannot overflow before its partner is armed. Then every written
 * ESCR and CCCR is read back and mismatches are counted.
 */
#ifndef NBPROF_PMU_P4_APPLY_H
#define NBPROF_PMU_P4_APPLY_H

#include "pmu/msr_bus.h"
#include "pmu/p4_alloc.h"
#include "pmu/p4_caps.h"

struct p4_apply_result {
	unsigned writes;	/* WRMSRs issued */
	unsigned faults;	/* accesses that returned MSR_BUS_EFAULT */
	unsigned mismatches;	/* ESCR/CCCR read back different from what was written */
};

void p4_pmu_reset(struct msr_bus *bus, const struct p4_caps *caps, struct p4_apply_result *res);
void p4_apply(struct msr_bus *bus, const struct p4_plan *plan, struct p4_apply_result *res);

/* Stop the plan's counters: CCCR <- 0 (Enable and OVF cleared). */
void p4_stop(struct msr_bus *bus, const struct p4_plan *plan, struct p4_apply_result *res);

/* Read counter c (40 bits). 0 or MSR_BUS_EFAULT. */
int p4_counter_read(struct msr_bus *bus, enum p4_counter c, uint64_t *value);

#endif
