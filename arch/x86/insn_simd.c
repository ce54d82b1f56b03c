/*
 * insn_simd.c - floating-point and SIMD classes of x86 instructions (see
 * insn_simd.h). Opcode ranges from the SDM Vol. 2 opcode maps (Appendix A:
 * one-byte map D8H-DFH escape to x87; two-byte map 0FH 51H-5FH SSE/SSE2
 * arithmetic with the mandatory prefix selecting PS/PD/SS/SD, 0FH 60H-6BH,
 * 74H-76H, D1H-FEH MMX/SSE2 integer arithmetic with 66H selecting XMM).
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

enum insn_simd insn_simd_class(const uint8_t *b, size_t n, bool mode64)
{
	uint8_t mandatory = 0;
	size_t i = 0;

	while (i < n && i < 15 && legacy_prefix(b[i])) {
		if (b[i] == 0x66 || b[i] == 0xf2 || b[i] == 0xf3)
			mandatory = b[i];
		i++;
	}
	if (mode64 && i < n && (b[i] & 0xf0) == 0x40)
		i++;			/* REX */
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
