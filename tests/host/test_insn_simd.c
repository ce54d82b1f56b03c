/*
 * test_insn_simd.c - arch/x86/insn_simd.c on hand-assembled encodings (SDM
 * Vol. 2 instruction pages): each SIMD/x87 arithmetic class, the mandatory
 * prefixes, REX, and the moves and x87 loads that are no class; the data
 * moves of x87_SIMD_moves_uop (insn_simd_move).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "arch/x86/insn_simd.h"

/* The class and the move of bytes[0..n), through the decoder's prefix scan (insn_opcode). */
static enum insn_simd simd_class(const uint8_t *b, size_t n, bool mode64)
{
	struct insn_opcode o;

	return insn_opcode(b, n, mode64, &o) ? insn_simd_class(&o) : INSN_SIMD_NONE;
}

static enum insn_simd_move simd_move(const uint8_t *b, size_t n, bool mode64)
{
	struct insn_opcode o;

	return insn_opcode(b, n, mode64, &o) ? insn_simd_move(&o) : INSN_SIMD_MOVE_NONE;
}

#define CLASS(...)	simd_class((const uint8_t[]){ __VA_ARGS__ }, \
				   sizeof((const uint8_t[]){ __VA_ARGS__ }), true)

static void classes(void **state)
{
	assert_int_equal(CLASS(0x0f, 0x58, 0xc1), INSN_SIMD_PACKED_SP);		/* addps */
	assert_int_equal(CLASS(0x66, 0x0f, 0x58, 0xc1), INSN_SIMD_PACKED_DP);	/* addpd */
	assert_int_equal(CLASS(0xf3, 0x0f, 0x59, 0xc1), INSN_SIMD_SCALAR_SP);	/* mulss */
	assert_int_equal(CLASS(0xf2, 0x0f, 0x5e, 0xc1), INSN_SIMD_SCALAR_DP);	/* divsd */
	assert_int_equal(CLASS(0x66, 0x41, 0x0f, 0x51, 0xc0), INSN_SIMD_PACKED_DP); /* sqrtpd REX */
	/* a REX before a legacy prefix is ignored (SDM Vol. 2 2.2.1): still addpd */
	assert_int_equal(CLASS(0x41, 0x66, 0x0f, 0x58, 0xc1), INSN_SIMD_PACKED_DP);
	assert_int_equal(CLASS(0x0f, 0xfe, 0xc1), INSN_SIMD_MMX64);		/* paddd mm */
	assert_int_equal(CLASS(0x66, 0x0f, 0xfe, 0xc1), INSN_SIMD_MMX128);	/* paddd xmm */
	assert_int_equal(CLASS(0x0f, 0x74, 0xc1), INSN_SIMD_MMX64);		/* pcmpeqb mm */
	assert_int_equal(CLASS(0xd8, 0xc1), INSN_SIMD_X87);			/* fadd st, st(1) */
	assert_int_equal(CLASS(0xde, 0xc9), INSN_SIMD_X87);			/* fmulp */
	assert_int_equal(CLASS(0xd9, 0xfa), INSN_SIMD_X87);			/* fsqrt */
}

static void not_arithmetic(void **state)
{
	assert_int_equal(CLASS(0xd9, 0xc1), INSN_SIMD_NONE);		/* fld st(1) */
	assert_int_equal(CLASS(0xdd, 0xd9), INSN_SIMD_NONE);		/* fstp st(1) */
	assert_int_equal(CLASS(0x0f, 0x28, 0xc1), INSN_SIMD_NONE);	/* movaps */
	assert_int_equal(CLASS(0x66, 0x0f, 0x6f, 0xc1), INSN_SIMD_NONE);	/* movdqa */
	assert_int_equal(CLASS(0x0f, 0x7e, 0xc0), INSN_SIMD_NONE);	/* movd */
	assert_int_equal(CLASS(0xf3, 0x0f, 0xfe, 0xc1), INSN_SIMD_NONE);	/* no such form */
	assert_int_equal(CLASS(0x48, 0x01, 0xd8), INSN_SIMD_NONE);	/* add rax, rbx */
	assert_int_equal(CLASS(0x90), INSN_SIMD_NONE);
	assert_int_equal(CLASS(0x66, 0x0f), INSN_SIMD_NONE);		/* truncated */
	assert_int_equal(simd_class((const uint8_t *)"", 0, true), INSN_SIMD_NONE);
	/* 32-bit code: 41H is INC ECX, not REX: no class for the bytes after it */
	assert_int_equal(simd_class((const uint8_t[]){ 0x41, 0x0f, 0x58, 0xc1 }, 4, false),
			 INSN_SIMD_NONE);
	assert_int_equal(simd_class((const uint8_t[]){ 0x66, 0x0f, 0x58, 0xc1 }, 4, false),
			 INSN_SIMD_PACKED_DP);
}

/*
 * The fpmix workload's set-up and loop instructions (arch/x86/64/workloads.S,
 * as GNU as encodes them; objdump -d of the kernel shows the same bytes):
 * the documented mix, and nothing for the moves, loads and control.
 */
static void fpmix_instructions(void **state)
{
	static const struct { uint8_t b[5], n; enum insn_simd want; } fp[] = {
		{ { 0x0f, 0xae, 0x14, 0x24 }, 4, INSN_SIMD_NONE },		/* ldmxcsr (%rsp) */
		{ { 0xdb, 0xe3 }, 2, INSN_SIMD_NONE },				/* fninit */
		{ { 0x0f, 0x6e, 0xc0 }, 3, INSN_SIMD_NONE },			/* movd %eax,%mm0 */
		{ { 0x66, 0x0f, 0x6e, 0xc8 }, 4, INSN_SIMD_NONE },		/* movd %eax,%xmm1 */
		{ { 0xdb, 0x04, 0x24 }, 3, INSN_SIMD_NONE },			/* fildl (%rsp) */
		{ { 0xd8, 0xc1 }, 2, INSN_SIMD_X87 },				/* fadd %st(1),%st */
		{ { 0xdd, 0xd8 }, 2, INSN_SIMD_NONE },				/* fstp %st(0) */
		{ { 0x0f, 0xfa, 0xc1 }, 3, INSN_SIMD_MMX64 },			/* psubd %mm1,%mm0 */
		{ { 0x0f, 0x77 }, 2, INSN_SIMD_NONE },				/* emms */
		{ { 0x66, 0x0f, 0xef, 0xc1 }, 4, INSN_SIMD_MMX128 },		/* pxor %xmm1,%xmm0 */
		{ { 0x0f, 0x5f, 0xc1 }, 3, INSN_SIMD_PACKED_SP },		/* maxps */
		{ { 0x66, 0x0f, 0x5d, 0xc1 }, 4, INSN_SIMD_PACKED_DP },		/* minpd */
		{ { 0xf3, 0x0f, 0x51, 0xc1 }, 4, INSN_SIMD_SCALAR_SP },		/* sqrtss */
		{ { 0xf2, 0x0f, 0x5c, 0xc1 }, 4, INSN_SIMD_SCALAR_DP },		/* subsd */
	};

	for (size_t i = 0; i < sizeof(fp) / sizeof(fp[0]); i++) {
		assert_int_equal(simd_class(fp[i].b, fp[i].n, true), fp[i].want);
		assert_int_equal(simd_class(fp[i].b, fp[i].n, false), fp[i].want);
	}
}

#define MOVE(...)	simd_move((const uint8_t[]){ __VA_ARGS__ }, \
				  sizeof((const uint8_t[]){ __VA_ARGS__ }), true)

/* x87_SIMD_moves_uop's loads (ALLP2) and stores/moves (ALLP0), SDM Vol. 2 encodings. */
static void data_moves(void **state)
{
	(void)state;
	/* x87: loads from memory, stores to memory, register moves */
	assert_int_equal(MOVE(0xd9, 0x06), INSN_SIMD_MOVE_LOAD);		/* fld m32 (%rsi) */
	assert_int_equal(MOVE(0xdd, 0x06), INSN_SIMD_MOVE_LOAD);		/* fld m64 */
	assert_int_equal(MOVE(0xdb, 0x2e), INSN_SIMD_MOVE_LOAD);		/* fld m80 */
	assert_int_equal(MOVE(0xdf, 0x2e), INSN_SIMD_MOVE_LOAD);		/* fild m64 */
	assert_int_equal(MOVE(0xdf, 0x26), INSN_SIMD_MOVE_LOAD);		/* fbld */
	assert_int_equal(MOVE(0xd9, 0x1e), INSN_SIMD_MOVE_STORE);		/* fstp m32 */
	assert_int_equal(MOVE(0xdb, 0x3e), INSN_SIMD_MOVE_STORE);		/* fstp m80 */
	assert_int_equal(MOVE(0xdf, 0x3e), INSN_SIMD_MOVE_STORE);		/* fistp m64 */
	assert_int_equal(MOVE(0xdf, 0x36), INSN_SIMD_MOVE_STORE);		/* fbstp */
	assert_int_equal(MOVE(0xd9, 0xc1), INSN_SIMD_MOVE_STORE);		/* fld st(1) */
	assert_int_equal(MOVE(0xdd, 0xd9), INSN_SIMD_MOVE_STORE);		/* fstp st(1) */
	/* x87 control and arithmetic are no moves */
	assert_int_equal(MOVE(0xd9, 0x2e), INSN_SIMD_MOVE_NONE);		/* fldcw */
	assert_int_equal(MOVE(0xd9, 0x3e), INSN_SIMD_MOVE_NONE);		/* fnstcw */
	assert_int_equal(MOVE(0xd9, 0xc9), INSN_SIMD_MOVE_NONE);		/* fxch st(1) */
	assert_int_equal(MOVE(0xd9, 0xe8), INSN_SIMD_MOVE_NONE);		/* fld1 */
	assert_int_equal(MOVE(0xd8, 0x06), INSN_SIMD_MOVE_NONE);		/* fadd m32 */
	/* SIMD: memory source, memory destination, register to register */
	assert_int_equal(MOVE(0x0f, 0x28, 0x06), INSN_SIMD_MOVE_LOAD);		/* movaps (%rsi) */
	assert_int_equal(MOVE(0x66, 0x0f, 0x6f, 0x06), INSN_SIMD_MOVE_LOAD);	/* movdqa (%rsi) */
	assert_int_equal(MOVE(0xf3, 0x0f, 0x7e, 0x06), INSN_SIMD_MOVE_LOAD);	/* movq (%rsi), xmm */
	assert_int_equal(MOVE(0xf2, 0x0f, 0x10, 0x06), INSN_SIMD_MOVE_LOAD);	/* movsd (%rsi) */
	assert_int_equal(MOVE(0x0f, 0x29, 0x06), INSN_SIMD_MOVE_STORE);		/* movaps to (%rsi) */
	assert_int_equal(MOVE(0x0f, 0x7f, 0x06), INSN_SIMD_MOVE_STORE);		/* movq mm to mem */
	assert_int_equal(MOVE(0x0f, 0x7e, 0x06), INSN_SIMD_MOVE_STORE);		/* movd mm to mem */
	assert_int_equal(MOVE(0x66, 0x0f, 0xd6, 0x06), INSN_SIMD_MOVE_STORE);	/* movq xmm to mem */
	assert_int_equal(MOVE(0x66, 0x0f, 0xe7, 0x06), INSN_SIMD_MOVE_STORE);	/* movntdq */
	assert_int_equal(MOVE(0x0f, 0x28, 0xc1), INSN_SIMD_MOVE_STORE);		/* movaps reg */
	assert_int_equal(MOVE(0x0f, 0x7e, 0xc0), INSN_SIMD_MOVE_STORE);		/* movd mm0 -> eax */
	/* not moves: arithmetic, control, other opcodes, truncated */
	assert_int_equal(MOVE(0x0f, 0x58, 0xc1), INSN_SIMD_MOVE_NONE);		/* addps */
	assert_int_equal(MOVE(0x0f, 0xae, 0x14, 0x24), INSN_SIMD_MOVE_NONE);	/* ldmxcsr */
	assert_int_equal(MOVE(0x0f, 0x77), INSN_SIMD_MOVE_NONE);			/* emms */
	assert_int_equal(MOVE(0x0f, 0xd6, 0x06), INSN_SIMD_MOVE_NONE);		/* no 66: undefined */
	assert_int_equal(MOVE(0x48, 0x89, 0xd8), INSN_SIMD_MOVE_NONE);		/* mov rax, rbx */
	assert_int_equal(MOVE(0x0f, 0x28), INSN_SIMD_MOVE_NONE);			/* truncated */
	assert_int_equal(simd_move((const uint8_t[]){ 0xd9 }, 1, true), INSN_SIMD_MOVE_NONE);
}

/*
 * fpmix's moves (arch/x86/64/workloads.S): before the loop four MOVD into MM
 * and XMM registers (register moves, ALLP0); each iteration two FILD from
 * the stack (loads, ALLP2) and two FSTP ST(0) (register moves, ALLP0).
 */
static void fpmix_moves(void **state)
{
	static const struct { uint8_t b[5], n; enum insn_simd_move want; } fp[] = {
		{ { 0x0f, 0xae, 0x14, 0x24 }, 4, INSN_SIMD_MOVE_NONE },		/* ldmxcsr (%rsp) */
		{ { 0xdb, 0xe3 }, 2, INSN_SIMD_MOVE_NONE },			/* fninit */
		{ { 0x0f, 0x6e, 0xc0 }, 3, INSN_SIMD_MOVE_STORE },		/* movd %eax,%mm0 */
		{ { 0x66, 0x0f, 0x6e, 0xc8 }, 4, INSN_SIMD_MOVE_STORE },	/* movd %eax,%xmm1 */
		{ { 0xdb, 0x04, 0x24 }, 3, INSN_SIMD_MOVE_LOAD },		/* fildl (%rsp) */
		{ { 0xdd, 0xd8 }, 2, INSN_SIMD_MOVE_STORE },			/* fstp %st(0) */
		{ { 0x0f, 0x77 }, 2, INSN_SIMD_MOVE_NONE },			/* emms */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(fp) / sizeof(fp[0]); i++) {
		assert_int_equal(simd_move(fp[i].b, fp[i].n, true), fp[i].want);
		assert_int_equal(simd_move(fp[i].b, fp[i].n, false), fp[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(classes),
		cmocka_unit_test(not_arithmetic),
		cmocka_unit_test(fpmix_instructions),
		cmocka_unit_test(data_moves),
		cmocka_unit_test(fpmix_moves),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
