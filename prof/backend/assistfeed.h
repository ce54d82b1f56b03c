/*
 * assistfeed.h - the floating-point assists of one stepped instruction
 * (x87_assist, SSE_input_assist), from the operand values the step engine
 * kept before it ran and its state after (arch/x86/step.h struct step_fp),
 * judged by pmu/model/p4_assist.c. Only while one of the two events is
 * live (model_feed.c, struct model_live assist): the step engine watches
 * operands only then.
 */
#ifndef NBPROF_PROF_ASSISTFEED_H
#define NBPROF_PROF_ASSISTFEED_H

#include <stdint.h>

#include "arch/x86/hooks.h"

struct assistfeed {
	uint16_t x87;		/* x87_assist mask bits of the instruction, 0: none */
	unsigned sse;		/* SSE_input_assist requests */
};

/* The assists of the instruction s (in its step hook); false when it had no operands taken. */
bool assistfeed_step(const struct step_info *s, struct assistfeed *out);

#endif
