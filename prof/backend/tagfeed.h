/*
 * tagfeed.h - what the model needs from one stepped instruction for PEBS
 * and tagging (PMU reference 5.2, 5.6, 5.7): its registers (for the record a
 * PEBS overflow writes), its load and store µops (from arch/x86/insn.c's
 * insn_mem_decode) and its x87/SIMD class (arch/x86/insn_simd.c). The model adapter calls
 * tagfeed_step() once per step, before the step's events.
 */
#ifndef NBPROF_PROF_TAGFEED_H
#define NBPROF_PROF_TAGFEED_H

#include "arch/x86/hooks.h"
#include "arch/x86/idt.h"
#include "pmu/model/p4_model.h"

/* Loads and stores of the stepped instruction (0 and 0 when not decodable). */
void tagfeed_mem_uops(const struct step_info *s, unsigned *loads, unsigned *stores);

/*
 * Under the PMU lock: hand m the instruction's registers (f: the workload's
 * frame after it; the linear IP is s->rip) and its tagged µops. Returns the
 * instr_retired mask bit the instruction retires as: NBOGUSTAG when the
 * front end tagged one of its µops, else NBOGUSNTAG.
 */
uint16_t tagfeed_step(struct p4_model *m, const struct step_info *s, const struct trap_frame *f);

/*
 * The microcode loads real parts tag for an exception of this vector, which
 * its faulting instruction did not retire: a page fault's 5 (pmu/model/
 * p4_core.h P4_CORE_PF_LOADS), 0 for the others (no measurement).
 */
unsigned tagfeed_fault_loads(unsigned vector);

/* Under the PMU lock: the registers and tagged loads of an exception (hooks.h fault). */
void tagfeed_fault(struct p4_model *m, const struct step_fault *f);

#endif
