/*
 * insn_simd.c - floating-point and SIMD classes of x86 instructions (see
 * insn_simd.h). Opcode ranges from the SDM Vol. 2 opcode maps (Appendix A:
 * one-byte map D8H-DFH escape to x87; two-byte map 0FH 51H-5FH SSE/SSE2
 * arithmetic with the mandatory prefix selecting PS/PD/SS/SD, 0FH 60H-6BH,
 * 74H-76H, D1H-FEH MMX/SSE2 integer arithmetic with 66H selecting XMM;
 * the data moves: x87 D9H/DBH/DDH/DFH by ModRM reg, 0FH 10H-17H, 28H/29H,
 * 2BH, 6EH/6FH, 7EH/7FH, D6H, E7H). The prefixes, REX and the opcode map
 * are the decoder's (arch/x86/insn.c insn_opcode): this file only sorts
 * opcodes.
 */
#include "arch/x86/insn_simd.h"


/* x87 arithmetic: D8H, DAH, DCH, DEH (all forms); D9H E0H-FFH (FCHS ... FCOS). */
static bool x87_arith(const struct insn_opcode *o)
{
	if (o->op == 0xd8 || o->op == 0xda || o->op == 0xdc || o->op == 0xde)
		return o->has_modrm;
	return o->op == 0xd9 && o->has_modrm && o->modrm >= 0xe0;
}

/* A one-byte x87 escape (D8H-DFH)? */
static bool x87_escape(const struct insn_opcode *o)
{
	return o->map == INSN_MAP_ONE && o->op >= 0xd8 && o->op <= 0xdf;
}

/* 0FH xx: SSE/SSE2 floating-point arithmetic (SQRT, RSQRT, RCP, AND..XOR, ADD..MAX). */
static bool sse_fp_arith(uint8_t op2)
{
	return op2 >= 0x51 && op2 <= 0x5f && op2 != 0x5a && op2 != 0x5b;
}

/* 0FH xx: MMX / SSE2 integer arithmetic (not the moves 6EH/6FH/7EH/7FH/D6H/D7H/E7H/F7H). */
static bool simd_int_arith(uint8_t op2)
{
	if ((op2 >= 0x60 && op2 <= 0x6b) || (op2 >= 0x74 && op2 <= 0x76))
		return true;
	if (op2 < 0xd1 || op2 > 0xfe)
		return false;
	return op2 != 0xd6 && op2 != 0xd7 && op2 != 0xe7 && op2 != 0xf7 && op2 != 0xf0;
}

enum insn_simd insn_simd_class(const struct insn_opcode *o)
{
	uint8_t p = o->pfx;

	if (x87_escape(o))
		return x87_arith(o) ? INSN_SIMD_X87 : INSN_SIMD_NONE;
	if (o->map != INSN_MAP_0F)
		return INSN_SIMD_NONE;
	if (sse_fp_arith(o->op))
		return p == 0x66 ? INSN_SIMD_PACKED_DP : p == 0xf3 ? INSN_SIMD_SCALAR_SP :
		       p == 0xf2 ? INSN_SIMD_SCALAR_DP : INSN_SIMD_PACKED_SP;
	if (simd_int_arith(o->op) && (p == 0 || p == 0x66))
		return p == 0x66 ? INSN_SIMD_MMX128 : INSN_SIMD_MMX64;
	return INSN_SIMD_NONE;
}

/* x87 escape op with ModRM m: a data load, store or register move (insn_simd.h)? */
static enum insn_simd_move x87_move(uint8_t op, uint8_t m)
{
	unsigned reg = (m >> 3) & 7;

	if ((m & 0xc0) == 0xc0) {	/* FLD ST(i); FST/FSTP ST(i) */
		if ((op == 0xd9 && reg == 0) || (op == 0xdd && (reg == 2 || reg == 3)))
			return INSN_SIMD_MOVE_STORE;
		return INSN_SIMD_MOVE_NONE;
	}
	switch (op) {
	case 0xd9:	/* FLD m32 / FST, FSTP m32 */
	case 0xdd:	/* FLD m64 / FST, FSTP m64 */
		return reg == 0 ? INSN_SIMD_MOVE_LOAD : (reg == 2 || reg == 3) ?
		       INSN_SIMD_MOVE_STORE : INSN_SIMD_MOVE_NONE;
	case 0xdb:	/* FILD m32, FLD m80 / FIST, FISTP m32, FSTP m80 */
		return (reg == 0 || reg == 5) ? INSN_SIMD_MOVE_LOAD :
		       (reg == 2 || reg == 3 || reg == 7) ? INSN_SIMD_MOVE_STORE : INSN_SIMD_MOVE_NONE;
	case 0xdf:	/* FILD m16, FBLD, FILD m64 / FIST, FISTP m16, FBSTP, FISTP m64 */
		return (reg == 0 || reg == 4 || reg == 5) ? INSN_SIMD_MOVE_LOAD :
		       (reg == 2 || reg == 3 || reg == 6 || reg == 7) ? INSN_SIMD_MOVE_STORE :
		       INSN_SIMD_MOVE_NONE;
	default:
		return INSN_SIMD_MOVE_NONE;
	}
}

/* 0FH op2 with ModRM m and mandatory prefix p: a SIMD data move (insn_simd.h)? */
static enum insn_simd_move simd_move(uint8_t op2, uint8_t m, uint8_t p)
{
	bool reg = (m & 0xc0) == 0xc0;

	switch (op2) {
	case 0x10: case 0x12: case 0x16: case 0x28: case 0x6e: case 0x6f:
		return reg ? INSN_SIMD_MOVE_STORE : INSN_SIMD_MOVE_LOAD;
	case 0x7e:	/* F3: MOVQ xmm, xmm/m64 (a load); else MOVD r/m32, mm/xmm (a store) */
		return p == 0xf3 && !reg ? INSN_SIMD_MOVE_LOAD : INSN_SIMD_MOVE_STORE;
	case 0x11: case 0x13: case 0x17: case 0x29: case 0x2b: case 0x7f: case 0xe7:
		return INSN_SIMD_MOVE_STORE;
	case 0xd6:	/* 66: MOVQ xmm/m64, xmm */
		return p == 0x66 ? INSN_SIMD_MOVE_STORE : INSN_SIMD_MOVE_NONE;
	default:
		return INSN_SIMD_MOVE_NONE;
	}
}

enum insn_simd_move insn_simd_move(const struct insn_opcode *o)
{
	if (!o->has_modrm)
		return INSN_SIMD_MOVE_NONE;
	if (x87_escape(o))
		return x87_move(o->op, o->modrm);
	if (o->map != INSN_MAP_0F)
		return INSN_SIMD_MOVE_NONE;
	return simd_move(o->op, o->modrm, o->pfx);
}

/* x87 D9H E0H-FFH (insn_fp_op): FCHS ... FCOS, as struct p4_fp_op rows. */
static bool x87_d9(uint8_t m, struct p4_fp_op *o)
{
	static const int8_t row[32][5] = {	/* nst, push, pop, result, flags */
		[0x00] = { 1, 0, 0, -1, P4_FPF_NO_DENORMAL | P4_FPF_NO_RESULT },	/* FCHS */
		[0x01] = { 1, 0, 0, -1, P4_FPF_NO_DENORMAL | P4_FPF_NO_RESULT },	/* FABS */
		[0x04] = { 1, 0, 0, -1, P4_FPF_NO_RESULT },			/* FTST */
		[0x05] = { 0, 0, 0, -1, P4_FPF_NO_DENORMAL | P4_FPF_NO_RESULT },	/* FXAM */
		[0x08] = { 0, 1, 0, 0, 0 }, [0x09] = { 0, 1, 0, 0, 0 },	/* FLD1, FLDL2T */
		[0x0a] = { 0, 1, 0, 0, 0 }, [0x0b] = { 0, 1, 0, 0, 0 },	/* FLDL2E, FLDPI */
		[0x0c] = { 0, 1, 0, 0, 0 }, [0x0d] = { 0, 1, 0, 0, 0 },	/* FLDLG2, FLDLN2 */
		[0x0e] = { 0, 1, 0, 0, 0 },					/* FLDZ */
		[0x10] = { 1, 0, 0, 0, 0 },					/* F2XM1 */
		[0x11] = { 2, 0, 1, 0, 0 },					/* FYL2X */
		[0x12] = { 1, 1, 0, 1, 0 },					/* FPTAN */
		[0x13] = { 2, 0, 1, 0, 0 },					/* FPATAN */
		[0x14] = { 1, 1, 0, 0, 0 },					/* FXTRACT */
		[0x15] = { 2, 0, 0, 0, P4_FPF_EXACT_ZERO },			/* FPREM1 */
		[0x16] = { 0, 0, 0, -1, P4_FPF_NO_RESULT },			/* FDECSTP */
		[0x17] = { 0, 0, 0, -1, P4_FPF_NO_RESULT },			/* FINCSTP */
		[0x18] = { 2, 0, 0, 0, P4_FPF_EXACT_ZERO },			/* FPREM */
		[0x19] = { 2, 0, 1, 0, 0 },					/* FYL2XP1 */
		[0x1a] = { 1, 0, 0, 0, 0 },					/* FSQRT */
		[0x1b] = { 1, 1, 0, 1, 0 },					/* FSINCOS: sin in ST(1) */
		[0x1c] = { 1, 0, 0, 0, P4_FPF_EXACT_ZERO },			/* FRNDINT */
		[0x1d] = { 2, 0, 0, 0, 0 },					/* FSCALE */
		[0x1e] = { 1, 0, 0, 0, 0 },					/* FSIN */
		[0x1f] = { 1, 0, 0, 0, 0 },					/* FCOS */
	};
	static const uint32_t valid = 0xfffffff3u & ~(UINT32_C(1) << 0x0f) & ~(UINT32_C(3) << 6);
	const int8_t *r = row[m - 0xe0];

	if (!((valid >> (m - 0xe0)) & 1u))
		return false;
	o->nst = (uint8_t)r[0];
	o->st[1] = 1;
	o->push = (uint8_t)r[1];
	o->pop = (uint8_t)r[2];
	o->result = r[3];
	o->flags = (uint8_t)r[4];
	return true;
}

/* x87 arithmetic D8H-DEH (insn_fp_op); m: the ModRM byte. */
static bool x87_op(uint8_t op, uint8_t m, struct p4_fp_op *o)
{
	unsigned reg = (m >> 3) & 7, rm = m & 7;
	bool mem = (m & 0xc0) != 0xc0;
	static const uint8_t fmt[4] = { P4_FMT_F32, P4_FMT_I32, P4_FMT_F64, P4_FMT_I16 };

	o->kind = P4_FPK_X87;
	o->result = -1;
	if (op == 0xd9)
		return !mem && m >= 0xe0 && x87_d9(m, o);
	if (op == 0xda && !mem) {
		if (m == 0xe9) {		/* FUCOMPP */
			*o = (struct p4_fp_op){ .kind = P4_FPK_X87, .nst = 2, .st = { 0, 1 },
						.pop = 2, .result = -1, .flags = P4_FPF_NO_RESULT };
			return true;
		}
		if (m >= 0xe0)
			return false;
		/* FCMOVcc ST(0), ST(i): a move; only its stack may fault */
		*o = (struct p4_fp_op){ .kind = P4_FPK_X87, .nst = 2, .st = { 0, (uint8_t)rm },
					.result = -1, .flags = P4_FPF_NO_DENORMAL | P4_FPF_NO_RESULT };
		return true;
	}
	if (op != 0xd8 && op != 0xda && op != 0xdc && op != 0xde)
		return false;
	if (reg == 2 || reg == 3) {		/* FCOM, FCOMP (and FICOM..., DC/DE aliases) */
		o->flags = P4_FPF_NO_RESULT;
		o->pop = reg == 3;
		if (op == 0xde && !mem) {
			if (reg == 3 && rm != 1)
				return false;
			o->pop = reg == 3 ? 2 : 1;	/* FCOMPP; FCOMP5 */
			if (reg == 3)
				rm = 1;
		}
	} else if (reg == 0 || reg == 4 || reg == 5) {
		o->flags = P4_FPF_EXACT_ZERO;	/* FADD, FSUB, FSUBR: x - x is an exact 0 */
	}
	o->st[0] = 0;
	if (mem) {
		o->nst = 1;
		o->mem_fmt = fmt[(op - 0xd8) >> 1];
		if (!(o->flags & P4_FPF_NO_RESULT))
			o->result = 0;
		return true;
	}
	o->nst = 2;
	o->st[1] = (uint8_t)rm;
	if (o->flags & P4_FPF_NO_RESULT)
		return true;
	if (op == 0xd8) {
		o->result = 0;
	} else {			/* DC, DE: ST(i) is the destination; DE pops after */
		o->pop = op == 0xde;
		o->result = (int8_t)(rm - o->pop);
		if (o->result < 0)
			o->result = -1;	/* FADDP ST(0), ST(0): the result is popped */
	}
	return true;
}

bool insn_fp_op(const struct insn_opcode *c, struct p4_fp_op *o)
{
	uint8_t op2 = c->op, m = c->modrm, p = c->pfx, rex = c->rex;

	*o = (struct p4_fp_op){ .kind = P4_FPK_NONE, .result = -1, .xmm = { -1, -1 } };
	if (!c->has_modrm)
		return false;
	if (x87_escape(c)) {
		if (x87_op(c->op, m, o))
			return true;
		*o = (struct p4_fp_op){ .kind = P4_FPK_NONE, .result = -1, .xmm = { -1, -1 } };
		return false;
	}
	if (c->map != INSN_MAP_0F || !sse_fp_arith(op2) || (op2 >= 0x54 && op2 <= 0x57))
		return false;		/* not arithmetic, or the logic ops: no floating-point input */
	if ((op2 == 0x52 || op2 == 0x53) && (p == 0x66 || p == 0xf2))
		return false;		/* RSQRT, RCP: PS and SS only */
	o->kind = P4_FPK_SSE;
	o->esize = (p == 0x66 || p == 0xf2) ? 8 : 4;
	o->nelem = p == 0xf3 || p == 0xf2 ? 1 : (uint8_t)(16 / o->esize);
	if (op2 > 0x53)			/* two sources: ADD, MUL, SUB, MIN, DIV, MAX */
		o->xmm[0] = (int8_t)(((m >> 3) & 7) | ((rex & 4) ? 8 : 0));
	if ((m & 0xc0) == 0xc0)
		o->xmm[1] = (int8_t)((m & 7) | ((rex & 1) ? 8 : 0));
	else
		o->mem_fmt = o->esize == 8 ? P4_FMT_F64 : P4_FMT_F32;
	return true;
}
