/*
 * insn_simd.c - floating-point and SIMD classes of x86 instructions (see
 * insn_simd.h). Opcode ranges from the SDM Vol. 2 opcode maps (Appendix A:
 * one-byte map D8H-DFH escape to x87; two-byte map 0FH 51H-5FH SSE/SSE2
 * arithmetic with the mandatory prefix selecting PS/PD/SS/SD, 0FH 60H-6BH,
 * 74H-76H, D1H-FEH MMX/SSE2 integer arithmetic with 66H selecting XMM;
 * the data moves: x87 D9H/DBH/DDH/DFH by ModRM reg, 0FH 10H-17H, 28H/29H,
 * 2BH, 6EH/6FH, 7EH/7FH, D6H, E7H).
 */
#include "arch/x86/insn_simd.h"


/* x87 arithmetic: D8H, DAH, DCH, DEH (all forms); D9H E0H-FFH (FCHS ... FCOS). */
static bool x87_arith(uint8_t op, const uint8_t *rest, size_t n)
{
	if (op == 0xd8 || op == 0xda || op == 0xdc || op == 0xde)
		return n >= 1;
	return op == 0xd9 && n >= 1 && rest[0] >= 0xe0;
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

static bool legacy_prefix(uint8_t b)
{
	return b == 0x66 || b == 0x67 || b == 0xf0 || b == 0xf2 || b == 0xf3 || b == 0x2e ||
	       b == 0x36 || b == 0x3e || b == 0x26 || b == 0x64 || b == 0x65;
}

/* Skip legacy prefixes (noting the last mandatory one) and REX; the opcode's index. */
static size_t opcode_at(const uint8_t *b, size_t n, bool mode64, uint8_t *mandatory)
{
	size_t i = 0;

	*mandatory = 0;
	while (i < n && i < 15 && legacy_prefix(b[i])) {
		if (b[i] == 0x66 || b[i] == 0xf2 || b[i] == 0xf3)
			*mandatory = b[i];
		i++;
	}
	if (mode64 && i < n && (b[i] & 0xf0) == 0x40)
		i++;			/* REX */
	return i;
}

enum insn_simd insn_simd_class(const uint8_t *b, size_t n, bool mode64)
{
	uint8_t mandatory;
	size_t i = opcode_at(b, n, mode64, &mandatory);

	if (i >= n)
		return INSN_SIMD_NONE;
	if (b[i] >= 0xd8 && b[i] <= 0xdf)
		return x87_arith(b[i], b + i + 1, n - i - 1) ? INSN_SIMD_X87 : INSN_SIMD_NONE;
	if (b[i] != 0x0f || i + 1 >= n)
		return INSN_SIMD_NONE;
	if (sse_fp_arith(b[i + 1]))
		return mandatory == 0x66 ? INSN_SIMD_PACKED_DP : mandatory == 0xf3 ? INSN_SIMD_SCALAR_SP :
		       mandatory == 0xf2 ? INSN_SIMD_SCALAR_DP : INSN_SIMD_PACKED_SP;
	if (simd_int_arith(b[i + 1]) && (mandatory == 0 || mandatory == 0x66))
		return mandatory == 0x66 ? INSN_SIMD_MMX128 : INSN_SIMD_MMX64;
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

enum insn_simd_move insn_simd_move(const uint8_t *b, size_t n, bool mode64)
{
	uint8_t mandatory;
	size_t i = opcode_at(b, n, mode64, &mandatory);

	if (i + 1 >= n)
		return INSN_SIMD_MOVE_NONE;
	if (b[i] >= 0xd8 && b[i] <= 0xdf)
		return x87_move(b[i], b[i + 1]);
	if (b[i] != 0x0f || i + 2 >= n)
		return INSN_SIMD_MOVE_NONE;
	return simd_move(b[i + 1], b[i + 2], mandatory);
}
