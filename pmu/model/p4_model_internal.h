/*
 * p4_model_internal.h - what the two halves of the software PMU share.
 * Not for use outside pmu/model/.
 */
#ifndef NBPROF_PMU_MODEL_P4_MODEL_INTERNAL_H
#define NBPROF_PMU_MODEL_P4_MODEL_INTERNAL_H

#include "pmu/model/p4_model.h"
#include "pmu/p4_regs.h"

/* Logical processors of the configured core: 2 with HT, else 1. */
unsigned p4_model_nlp(const struct p4_model *m);

/* Does ESCR e exist on the configured model (p4_escrs[].models)? */
bool p4_model_escr_exists(const struct p4_model *m, enum p4_escr e);

/* Does CCCR n have a CASCNTxINTOy meaning for bit 11 (Table 18-65)? */
bool p4_model_has_ext_source(enum p4_counter n);

/* Hidden state to reset after software wrote CCCR n (already stored). */
void p4_model_cccr_written(struct p4_model *m, enum p4_counter n);

/*
 * Counter n overflowed on an event of LP m->ev_lp: when PEBS is armed for
 * it, write the PEBS record, reload the counter and return true (the
 * overflow is then not an ordinary one). p4_model_pebs.c.
 */
bool p4_model_pebs_assist(struct p4_model *m, enum p4_counter n);

/* The ESCR T0/T1 OS/USR bit that selects LP lp at CPL cpl (Table 18-66). */
static inline uint64_t p4_model_thread_bit(unsigned lp, unsigned cpl)
{
	if (lp == 0)
		return cpl == 0 ? ESCR_T0_OS : ESCR_T0_USR;
	return cpl == 0 ? ESCR_T1_OS : ESCR_T1_USR;
}

/* Rebuild all routing state from the registers (after reset). */
void p4_model_route_all(struct p4_model *m);

#endif
