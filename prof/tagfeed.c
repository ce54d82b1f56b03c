/*
 * tagfeed.c - per stepped instruction, the registers and the load/store
 * µops the model's PEBS assist and front-end tagging need (tagfeed.h).
 *
 * Registers: the step trap comes after the instruction, so the record gets
 * the registers as the instruction left them, with the linear IP of the
 * instruction itself; fact sheet 5.2: the values are nominally those at
 * the start of the instruction "but may be partially updated". Loads and
 * stores: one µop per memory operand access (a read-modify-write operand
 * counts as one load and one store), decoded with the frame's registers
 * (only the kinds are used, so post-instruction addresses do not matter).
 * Execution tagging: the instruction's x87/MMX/SSE class (insn_simd.h) is
 * one µop of the matching upstream event (fact sheet 5.7).
 */
#include "arch/x86/insn.h"
#include "arch/x86/insn_simd.h"
#include "prof/tagfeed.h"

#define TAGFEED_INSN_MAX	15

static void tagfeed_regs(const struct trap_frame *f, struct insn_regs *r)
{
	*r = (struct insn_regs){ .rip = f->rip };
	r->gpr[INSN_RAX] = f->rax;
	r->gpr[INSN_RCX] = f->rcx;
	r->gpr[INSN_RDX] = f->rdx;
	r->gpr[INSN_RBX] = f->rbx;
	r->gpr[INSN_RSP] = f->rsp;
	r->gpr[INSN_RBP] = f->rbp;
	r->gpr[INSN_RSI] = f->rsi;
	r->gpr[INSN_RDI] = f->rdi;
	r->gpr[INSN_R8] = f->r8;
	r->gpr[INSN_R9] = f->r9;
	r->gpr[INSN_R10] = f->r10;
	r->gpr[INSN_R11] = f->r11;
	r->gpr[INSN_R12] = f->r12;
	r->gpr[INSN_R13] = f->r13;
	r->gpr[INSN_R14] = f->r14;
	r->gpr[INSN_R15] = f->r15;
}

void tagfeed_mem_uops(const struct step_info *s, const struct trap_frame *f, unsigned *loads,
		      unsigned *stores)
{
	struct insn_regs regs;
	struct insn_mem mem;

	*loads = *stores = 0;
	if (!f)
		return;
	tagfeed_regs(f, &regs);
	regs.rip = s->rip;
	if (insn_mem_decode((const uint8_t *)(uintptr_t)s->rip, TAGFEED_INSN_MAX, true, &regs,
			    &mem) != INSN_MEM_OK)
		return;
	for (unsigned i = 0; i < mem.nops; i++) {
		if (mem.op[i].access & INSN_LOAD)
			(*loads)++;
		if (mem.op[i].access & INSN_STORE)
			(*stores)++;
	}
}

/* The upstream event of an instruction's SIMD/x87 class (fact sheet 5.7), or P4_NEVENT. */
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

	return ev[insn_simd_class((const uint8_t *)(uintptr_t)s->rip, TAGFEED_INSN_MAX)];
}

void tagfeed_step(struct p4_model *m, const struct step_info *s, const struct trap_frame *f)
{
	enum p4_event exec;
	struct p4_pebs_record r = { { 0 } };
	unsigned loads, stores;

	if (f) {
		r.reg[P4_PEBS_FLAGS] = f->rflags;
		r.reg[P4_PEBS_AX] = f->rax;
		r.reg[P4_PEBS_BX] = f->rbx;
		r.reg[P4_PEBS_CX] = f->rcx;
		r.reg[P4_PEBS_DX] = f->rdx;
		r.reg[P4_PEBS_SI] = f->rsi;
		r.reg[P4_PEBS_DI] = f->rdi;
		r.reg[P4_PEBS_BP] = f->rbp;
		r.reg[P4_PEBS_SP] = f->rsp;
		r.reg[P4_PEBS_R8] = f->r8;
		r.reg[P4_PEBS_R9] = f->r9;
		r.reg[P4_PEBS_R10] = f->r10;
		r.reg[P4_PEBS_R11] = f->r11;
		r.reg[P4_PEBS_R12] = f->r12;
		r.reg[P4_PEBS_R13] = f->r13;
		r.reg[P4_PEBS_R14] = f->r14;
		r.reg[P4_PEBS_R15] = f->r15;
	}
	r.reg[P4_PEBS_IP] = s->rip;
	p4_model_set_pebs_regs(m, s->lp, &r);
	tagfeed_mem_uops(s, f, &loads, &stores);
	if (loads | stores)
		p4_model_retire_mem(m, s->lp, s->cpl, loads, stores);
	if ((exec = tagfeed_exec_event(s)) != P4_NEVENT)
		p4_model_retire_exec(m, s->lp, s->cpl, exec, 1);
}
