/*
 * assistfeed.c - one stepped instruction's floating-point assists
 * (assistfeed.h): the step engine's images before and after it, its memory
 * operand, judged by pmu/model/p4_assist.c. A memory operand the engine
 * could not read (not mapped for its CPL) is left out: its instruction
 * would fault, and nothing of it retires.
 */
#include "arch/x86/step.h"
#include "prof/backend/assistfeed.h"

bool assistfeed_step(const struct step_info *s, struct assistfeed *out)
{
	const struct step_fp *p = step_fp_step(s->rip, s->next_rip);
	const void *mem;

	out->x87 = 0;
	out->sse = 0;
	if (!p)
		return false;
	mem = p->mem_read ? p->mem : NULL;
	if (p->op.kind == P4_FPK_X87)
		out->x87 = p4_x87_assist(&p->op, p->before, p->after, mem);
	else
		out->sse = p4_sse_input_assists(&p->op, p->before, mem);
	return true;
}
