/*
 * tagfeed.h - what the model needs from one stepped instruction for PEBS
 * and tagging (PMU reference 5.2, 5.6, 5.7): its registers (for the record a
 * PEBS overflow writes), its load and store µops (from arch/x86/insn.c's
 * insn_mem_decode) and its x87/SIMD class (arch/x86/insn_simd.c), for the
 * step's batch (struct p4_step_batch). The model adapter calls tagfeed_step()
 * once per step while tagging is live.
 */
#ifndef NBPROF_PROF_TAGFEED_H
#define NBPROF_PROF_TAGFEED_H

#include "arch/x86/hooks.h"
#include "arch/x86/idt.h"
#include "pmu/model/p4_model.h"

/* Loads and stores of the stepped instruction (0 and 0 when not decodable). */
void tagfeed_mem_uops(const struct step_info *s, unsigned *loads, unsigned *stores);

/*
 * The instruction's tagging inputs into b (struct p4_step_batch, which the
 * PMU model applies): its registers into *regs (f: the workload's frame
 * after it; the linear IP is s->rip), its load and store µops, its
 * x87/SIMD µop. The model decides which are tagged, hence whether it
 * retires as instr_retired NBOGUSTAG or NBOGUSNTAG.
 */
void tagfeed_step(const struct step_info *s, const struct trap_frame *f, struct p4_step_batch *b,
		  struct p4_pebs_record *regs);

/*
 * The microcode loads real parts tag for an exception of this vector, which
 * its faulting instruction did not retire: a page fault's 5 (pmu/model/
 * p4_core.h P4_CORE_PF_LOADS), 0 for the others (no measurement).
 */
unsigned tagfeed_fault_loads(unsigned vector);

/*
 * The registers and microcode loads of an exception (hooks.h fault) into
 * b and *regs; false when it has none to tag (b unchanged).
 */
bool tagfeed_fault(const struct step_fault *f, struct p4_step_batch *b,
		   struct p4_pebs_record *regs);

#endif
