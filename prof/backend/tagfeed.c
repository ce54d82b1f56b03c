/*
 * tagfeed.c - per stepped instruction, the registers and the load/store
 * µops the model's PEBS assist and front-end tagging need (tagfeed.h).
 *
 * Registers: the step trap comes after the instruction, so the record gets
 * the registers as the instruction left them, with the linear IP of the
 * instruction itself; PMU reference 5.2: the values are nominally those at
 * the start of the instruction "but may be partially updated". Loads and
 * stores: one µop per memory operand access (a read-modify-write operand
 * counts as one load and one store), from the operands the step engine
 * already decoded (step_info.mem; only their kinds are used here) - except
 * where real parts count microcode operations (pmu/model/p4_core.c, the
 * ISPASS 2013 data): a REP string's (a 1 KiB REP MOVSB is 64 loads and 64
 * stores, REP STOS one store per 16 bytes), x87 state saves and restores,
 * unaligned SSE moves, fences, CPUID, POP FS/GS (step_info.core).
 * Execution tagging: the instruction's x87/MMX/SSE class (insn_simd.h, which
 * the step engine decoded with the rest: step_info.simd) is one µop of the
 * matching upstream event (PMU reference 5.7); an x87/SIMD data move
 * (INSN_SIMD_MOVE_OF) is one x87_SIMD_moves_uop µop, ALLP2 for a load,
 * ALLP0 otherwise.
 */
#include "arch/x86/insn.h"
#include "arch/x86/insn_simd.h"
#include "prof/backend/tagfeed.h"

#include <stddef.h>

#define TF(r)	((uint8_t)(offsetof(struct trap_frame, r) / sizeof(uint64_t)))

/* ... and in a PEBS record's order (flags, IP, then RAX, RBX, RCX, RDX, ...). */
static const uint8_t tagfeed_rec[P4_PEBS_NREG] = {
	TF(rflags), TF(rip), TF(rax), TF(rbx), TF(rcx), TF(rdx), TF(rsi), TF(rdi), TF(rbp),
	TF(rsp), TF(r8), TF(r9), TF(r10), TF(r11), TF(r12), TF(r13), TF(r14), TF(r15),
};

static uint64_t tagfeed_slot(const struct trap_frame *f, uint8_t slot)
{
	return ((const uint64_t *)f)[slot];
}

/* REP string kinds of pmu/model/p4_core.c's microcode counts, by the decoder's class. */
static char tagfeed_rep_kind(const struct step_info *s)
{
	switch (s->core.cls) {
	case P4_U_REP_MOVS: return 'm';
	case P4_U_REP_STOS: return 's';
	case P4_U_REP_CMPS: return 'c';
	default: return 'l';		/* lods, scas */
	}
}

void tagfeed_mem_uops(const struct step_info *s, unsigned *loads, unsigned *stores)
{
	*loads = *stores = 0;
	if (s->core.cls >= P4_U_REP_MOVS) {	/* a REP string: its microcode operations */
		unsigned size = s->nmem ? s->mem[0].size : 1;

		p4_core_rep_tags(tagfeed_rep_kind(s), s->rep_iters, size, s->mem_stride < 0, loads,
				 stores);
		return;
	}
	if (s->core.uc_loads | s->core.uc_stores) {	/* x87 state, unaligned SSE moves, fences... */
		*loads = s->core.uc_loads;
		*stores = s->core.uc_stores;
		return;
	}
	if (s->mem_status != INSN_MEM_OK)
		return;
	for (unsigned i = 0; i < s->nmem; i++) {
		if (s->mem[i].access & INSN_LOAD)
			(*loads)++;
		if (s->mem[i].access & INSN_STORE)
			(*stores)++;
	}
}

/* The upstream event of an instruction's SIMD/x87 class (PMU reference 5.7), or P4_NEVENT. */
static enum p4_event tagfeed_exec_event(const struct step_info *s)
{
	static const enum p4_event ev[] = {
		[INSN_SIMD_NONE] = P4_NEVENT,
		[INSN_SIMD_X87] = P4_EV_X87_FP_UOP,
		[INSN_SIMD_MMX64] = P4_EV_64BIT_MMX_UOP,
		[INSN_SIMD_MMX128] = P4_EV_128BIT_MMX_UOP,
		[INSN_SIMD_PACKED_SP] = P4_EV_PACKED_SP_UOP,
		[INSN_SIMD_PACKED_DP] = P4_EV_PACKED_DP_UOP,
		[INSN_SIMD_SCALAR_SP] = P4_EV_SCALAR_SP_UOP,
		[INSN_SIMD_SCALAR_DP] = P4_EV_SCALAR_DP_UOP,
	};

	unsigned c = INSN_SIMD_OF(s->simd);

	return c < sizeof(ev) / sizeof(ev[0]) ? ev[c] : P4_NEVENT;
}

/* x87_SIMD_moves_uop's mask bit for an instruction's data move (insn_simd_move), or 0. */
static uint16_t tagfeed_move_mask(const struct step_info *s)
{
	switch (INSN_SIMD_MOVE_OF(s->simd)) {
	case INSN_SIMD_MOVE_LOAD:	return P4_EVMASK(P4_X87_SIMD_MOVES_UOP_ALLP2);
	case INSN_SIMD_MOVE_STORE:	return P4_EVMASK(P4_X87_SIMD_MOVES_UOP_ALLP0);
	default:			return 0;
	}
}

/* The registers a PEBS record takes (f: the frame, may be NULL), with IP rip. */
static void tagfeed_regs(const struct trap_frame *f, uint64_t rip, struct p4_pebs_record *r)
{
	for (unsigned i = 0; i < P4_PEBS_NREG; i++)
		r->reg[i] = f ? tagfeed_slot(f, tagfeed_rec[i]) : 0;
	r->reg[P4_PEBS_IP] = rip;
}

unsigned tagfeed_fault_loads(unsigned vector)
{
	return vector == VEC_PF ? P4_CORE_PF_LOADS : 0;
}

bool tagfeed_fault(const struct step_fault *f, struct p4_step_batch *b,
		   struct p4_pebs_record *regs)
{
	unsigned loads = tagfeed_fault_loads(f->vector);

	if (!loads)
		return false;
	tagfeed_regs(f->frame, f->rip, regs);
	b->parts |= P4_STEP_TAG;
	b->regs = regs;
	b->loads = loads;
	b->stores = 0;
	b->exec = P4_NEVENT;
	b->exec_mask = 0;
	return true;
}

void tagfeed_step(const struct step_info *s, const struct trap_frame *f, struct p4_step_batch *b,
		  struct p4_pebs_record *regs)
{
	unsigned loads, stores;

	tagfeed_regs(f, s->rip, regs);
	tagfeed_mem_uops(s, &loads, &stores);
	b->parts |= P4_STEP_TAG;
	b->regs = regs;
	b->loads = loads;
	b->stores = stores;
	b->exec = tagfeed_exec_event(s);
	b->exec_mask = 0;
	if (b->exec == P4_NEVENT && (b->exec_mask = tagfeed_move_mask(s)) != 0)
		b->exec = P4_EV_X87_SIMD_MOVES_UOP;
}
