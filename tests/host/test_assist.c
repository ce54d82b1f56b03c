/*
 * test_assist.c - the floating-point assists (pmu/model/p4_assist.c) on
 * hand-made bit patterns: the value classes of single, double and
 * extended formats at their edges (SDM Vol. 1 4.2.2, 8.2.2), the x87
 * rules on FXSAVE images built by hand (denormal inputs, underflow to a
 * denormal and to zero, overflow, divide-by-zero that is not one, stack
 * underflow and overflow by tags and by FSW.SF/C1, sticky flags), the SSE
 * count per denormal element and DAZ; and the decoder's operand rows
 * (arch/x86/insn_simd.c insn_fp_op) on hand-assembled encodings.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "arch/x86/insn_simd.h"
#include "pmu/model/p4_assist.h"
#include "pmu/p4_events.h"

#define PREA	P4_EVMASK(P4_X87_ASSIST_PREA)
#define POAU	P4_EVMASK(P4_X87_ASSIST_POAU)
#define POAO	P4_EVMASK(P4_X87_ASSIST_POAO)
#define FPSU	P4_EVMASK(P4_X87_ASSIST_FPSU)
#define FPSO	P4_EVMASK(P4_X87_ASSIST_FPSO)

/* Extended values: significand, sign and exponent. */
struct x80 { uint64_t m; uint16_t se; };

static const struct x80 X_ONE = { UINT64_C(0x8000000000000000), 0x3fff };
static const struct x80 X_TWO = { UINT64_C(0x8000000000000000), 0x4000 };
static const struct x80 X_ZERO = { 0, 0 };
static const struct x80 X_DEN = { UINT64_C(0x0000000000000001), 0x0000 };	/* smallest denormal */
static const struct x80 X_TINY = { UINT64_C(0x8000000000000000), 0x0001 };	/* smallest normal */
static const struct x80 X_HUGE = { UINT64_C(0xffffffffffffffff), 0x7ffe };	/* largest finite */
static const struct x80 X_INF = { UINT64_C(0x8000000000000000), 0x7fff };

static void classes(void **state)
{
	assert_int_equal(p4_fp_class32(0x00000000), P4_FP_ZERO);
	assert_int_equal(p4_fp_class32(0x80000000), P4_FP_ZERO);
	assert_int_equal(p4_fp_class32(0x00000001), P4_FP_DENORMAL);	/* 2^-149 */
	assert_int_equal(p4_fp_class32(0x807fffff), P4_FP_DENORMAL);	/* -(2^-126 - 2^-149) */
	assert_int_equal(p4_fp_class32(0x00800000), P4_FP_NORMAL);	/* 2^-126 */
	assert_int_equal(p4_fp_class32(0x7f7fffff), P4_FP_NORMAL);	/* FLT_MAX */
	assert_int_equal(p4_fp_class32(0x7f800000), P4_FP_INF);
	assert_int_equal(p4_fp_class32(0x7fc00000), P4_FP_NAN);
	assert_int_equal(p4_fp_class64(UINT64_C(0x0000000000000001)), P4_FP_DENORMAL);
	assert_int_equal(p4_fp_class64(UINT64_C(0x000fffffffffffff)), P4_FP_DENORMAL);
	assert_int_equal(p4_fp_class64(UINT64_C(0x0010000000000000)), P4_FP_NORMAL);	/* DBL_MIN */
	assert_int_equal(p4_fp_class64(UINT64_C(0x8000000000000000)), P4_FP_ZERO);
	assert_int_equal(p4_fp_class64(UINT64_C(0xfff0000000000000)), P4_FP_INF);
	assert_int_equal(p4_fp_class64(UINT64_C(0x7ff8000000000000)), P4_FP_NAN);
	assert_int_equal(p4_fp_class80(X_DEN.m, X_DEN.se), P4_FP_DENORMAL);
	assert_int_equal(p4_fp_class80(X_TINY.m, X_TINY.se), P4_FP_NORMAL);
	assert_int_equal(p4_fp_class80(X_TINY.m, 0x0000), P4_FP_DENORMAL);	/* pseudo-denormal */
	assert_int_equal(p4_fp_class80(0, 0x8000), P4_FP_ZERO);
	assert_int_equal(p4_fp_class80(X_INF.m, X_INF.se), P4_FP_INF);
	assert_int_equal(p4_fp_class80(UINT64_C(0xc000000000000000), 0x7fff), P4_FP_NAN);
	assert_int_equal(p4_fp_class80(UINT64_C(0x4000000000000000), 0x3fff), P4_FP_UNSUPPORTED);
	assert_int_equal(p4_fp_class80(0, 0x7fff), P4_FP_UNSUPPORTED);	/* pseudo-infinity */
}

/* An FXSAVE image with TOP = top, registers ST(0..) = v[] (tagged valid), FSW flags fsw. */
static void image(uint8_t *fx, unsigned top, const struct x80 *v, unsigned n, uint16_t fsw)
{
	uint16_t w = (uint16_t)(fsw | (top << P4_FSW_TOP_SHIFT));

	memset(fx, 0, P4_FX_SIZE);
	fx[P4_FX_FSW] = (uint8_t)w;
	fx[P4_FX_FSW + 1] = (uint8_t)(w >> 8);
	fx[P4_FX_MXCSR] = 0x80;
	fx[P4_FX_MXCSR + 1] = 0x1f;
	for (unsigned i = 0; i < n; i++) {
		memcpy(fx + P4_FX_ST0 + 16 * i, &v[i].m, 8);
		memcpy(fx + P4_FX_ST0 + 16 * i + 8, &v[i].se, 2);
		fx[P4_FX_FTW] |= (uint8_t)(1u << ((top + i) & 7));
	}
}

static const struct p4_fp_op FMUL_ST1 = {	/* fmul st, st(1): D8 C9 */
	.kind = P4_FPK_X87, .nst = 2, .st = { 0, 1 }, .result = 0, .xmm = { -1, -1 },
};

static uint8_t before[P4_FX_SIZE], after[P4_FX_SIZE];

static uint16_t x87(const struct p4_fp_op *op, const struct x80 *in, unsigned nin,
		    const struct x80 *out, unsigned nout, uint16_t fsw_after, const void *mem)
{
	image(before, 5, in, nin, 0);
	image(after, 5, out, nout, fsw_after);
	return p4_x87_assist(op, before, after, mem);
}

static void x87_values(void **state)
{
	struct x80 in[2], out[2];
	struct p4_fp_op fadd_m32 = { .kind = P4_FPK_X87, .nst = 1, .mem_fmt = P4_FMT_F32,
				     .result = 0, .flags = P4_FPF_EXACT_ZERO };
	struct p4_fp_op fsub = FMUL_ST1;
	uint32_t f32_den = 0x00000001, f32_one = 0x3f800000;
	uint64_t f64_den = 0x000fffffffffffff;
	struct p4_fp_op fmul_m64 = { .kind = P4_FPK_X87, .nst = 1, .mem_fmt = P4_FMT_F64, .result = 0 };

	fsub.flags = P4_FPF_EXACT_ZERO;
	/* 1 * 2 = 2: nothing */
	in[0] = X_ONE, in[1] = X_TWO, out[0] = X_TWO, out[1] = X_TWO;
	assert_int_equal(x87(&FMUL_ST1, in, 2, out, 2, 0, NULL), 0);
	/* a denormal register input: PREA */
	in[0] = X_DEN;
	out[0] = X_DEN;		/* denormal * 2 stays denormal: also an output underflow */
	assert_int_equal(x87(&FMUL_ST1, in, 2, out, 2, 0, NULL), PREA | POAU);
	/* FADD m32 with a single denormal: PREA though its extended form is normal */
	in[0] = X_ONE, out[0] = X_ONE;
	assert_int_equal(x87(&fadd_m32, in, 1, out, 1, 0, &f32_den), PREA);
	assert_int_equal(x87(&fadd_m32, in, 1, out, 1, 0, &f32_one), 0);
	assert_int_equal(x87(&fmul_m64, in, 1, out, 1, 0, &f64_den), PREA);
	assert_int_equal(x87(&fadd_m32, in, 1, out, 1, 0, NULL), 0);	/* unread memory: unknown */
	/* smallest normal * smallest normal = 0 after rounding: underflow to zero */
	in[0] = X_TINY, in[1] = X_TINY, out[0] = X_ZERO, out[1] = X_TINY;
	assert_int_equal(x87(&FMUL_ST1, in, 2, out, 2, 0, NULL), POAU);
	/* x - x = 0 is exact: no underflow */
	in[0] = X_TWO, in[1] = X_TWO, out[0] = X_ZERO, out[1] = X_TWO;
	assert_int_equal(x87(&fsub, in, 2, out, 2, 0, NULL), 0);
	/* 0 * 2 = 0: a zero input, no underflow */
	in[0] = X_ZERO, out[0] = X_ZERO;
	assert_int_equal(x87(&FMUL_ST1, in, 2, out, 2, 0, NULL), 0);
	/* largest * 2 = infinity: overflow */
	in[0] = X_HUGE, in[1] = X_TWO, out[0] = X_INF, out[1] = X_TWO;
	assert_int_equal(x87(&FMUL_ST1, in, 2, out, 2, 0, NULL), POAO);
	/* 2 / 0 = infinity: divide-by-zero, no overflow */
	in[0] = X_TWO, in[1] = X_ZERO, out[0] = X_INF, out[1] = X_ZERO;
	assert_int_equal(x87(&FMUL_ST1, in, 2, out, 2, 0, NULL), 0);
	/* infinity * 2: no overflow from an infinite input */
	in[0] = X_INF, in[1] = X_TWO, out[0] = X_INF;
	assert_int_equal(x87(&FMUL_ST1, in, 2, out, 2, 0, NULL), 0);
}

static void x87_flags(void **state)
{
	struct x80 in[2] = { X_ONE, X_TWO }, out[2] = { X_TWO, X_TWO };

	/* newly set OE / UE count (an unmasked overflow leaves a wrapped result) */
	assert_int_equal(x87(&FMUL_ST1, in, 2, out, 2, P4_FSW_OE, NULL), POAO);
	assert_int_equal(x87(&FMUL_ST1, in, 2, out, 2, P4_FSW_UE, NULL), POAU);
	/* sticky: set before and after tells nothing */
	image(before, 5, in, 2, P4_FSW_OE | P4_FSW_UE | P4_FSW_SF);
	image(after, 5, out, 2, P4_FSW_OE | P4_FSW_UE | P4_FSW_SF);
	assert_int_equal(p4_x87_assist(&FMUL_ST1, before, after, NULL), 0);
	/* SF newly set: C1 tells overflow from underflow */
	assert_int_equal(x87(&FMUL_ST1, in, 2, out, 2, P4_FSW_SF | P4_FSW_IE, NULL), FPSU);
	assert_int_equal(x87(&FMUL_ST1, in, 2, out, 2, P4_FSW_SF | P4_FSW_IE | P4_FSW_C1, NULL),
			 FPSO);
}

static void x87_stack(void **state)
{
	struct x80 in[9], out[9];
	struct p4_fp_op fld1 = { .kind = P4_FPK_X87, .push = 1, .result = 0 };

	for (unsigned i = 0; i < 9; i++)
		in[i] = X_ONE, out[i] = X_ONE;
	/* ST(1) empty, tags alone (SF sticky from before): underflow, judged on nothing else */
	in[0] = X_DEN;
	image(before, 5, in, 1, P4_FSW_SF);
	image(after, 5, in, 1, P4_FSW_SF);
	assert_int_equal(p4_x87_assist(&FMUL_ST1, before, after, NULL), FPSU);
	/* a push onto a full stack: overflow; onto 7 registers: none */
	image(before, 0, in + 1, 8, 0);
	image(after, 7, out, 8, 0);
	assert_int_equal(p4_x87_assist(&fld1, before, after, NULL), FPSO);
	image(before, 1, in + 1, 7, 0);
	image(after, 0, out, 8, 0);
	assert_int_equal(p4_x87_assist(&fld1, before, after, NULL), 0);
	/* TOP wraps: physical registers (top + i) & 7 */
	image(before, 7, in + 1, 2, 0);		/* ST(0) = R7, ST(1) = R0 */
	image(after, 7, out, 2, 0);
	assert_int_equal(p4_x87_assist(&FMUL_ST1, before, after, NULL), 0);
}

static void sse(void **state)
{
	/* addps xmm0, xmm1: element 1 of xmm0 and elements 0 and 3 of xmm1 denormal */
	struct p4_fp_op addps = { .kind = P4_FPK_SSE, .esize = 4, .nelem = 4, .xmm = { 0, 1 } };
	struct p4_fp_op addss = addps, sqrtsd_m = { .kind = P4_FPK_SSE, .esize = 8, .nelem = 1,
						  .xmm = { -1, -1 }, .mem_fmt = P4_FMT_F64 };
	struct p4_fp_op addpd_m = { .kind = P4_FPK_SSE, .esize = 8, .nelem = 2, .xmm = { 2, -1 },
				    .mem_fmt = P4_FMT_F64 };
	uint32_t x0[4] = { 0x3f800000, 0x00000010, 0x3f800000, 0 };
	uint32_t x1[4] = { 0x807fffff, 0x00800000, 0x7f800000, 0x00000001 };
	uint64_t m[2] = { UINT64_C(0x0000000000000001), UINT64_C(0x3ff0000000000000) };
	uint64_t x2[2] = { UINT64_C(0x000fffffffffffff), UINT64_C(0x000fffffffffffff) };

	addss.nelem = 1;
	image(before, 0, NULL, 0, 0);
	memcpy(before + P4_FX_XMM0, x0, 16);
	memcpy(before + P4_FX_XMM0 + 16, x1, 16);
	memcpy(before + P4_FX_XMM0 + 32, x2, 16);
	assert_int_equal(p4_sse_input_assists(&addps, before, NULL), 3);
	assert_int_equal(p4_sse_input_assists(&addss, before, NULL), 1);	/* element 0 of xmm1 */
	assert_int_equal(p4_sse_input_assists(&sqrtsd_m, before, m), 1);
	assert_int_equal(p4_sse_input_assists(&addpd_m, before, m), 3);	/* xmm2: 2, memory: 1 */
	assert_int_equal(p4_fp_mem_bytes(&addpd_m), 16);
	assert_int_equal(p4_fp_mem_bytes(&sqrtsd_m), 8);
	/* MXCSR.DAZ: denormal inputs are zeros, no assist */
	before[P4_FX_MXCSR] |= P4_MXCSR_DAZ;
	assert_int_equal(p4_sse_input_assists(&addps, before, NULL), 0);
	assert_int_equal(p4_sse_input_assists(&addpd_m, before, m), 0);
	/* an x87 description is no SSE one, and the reverse */
	assert_int_equal(p4_sse_input_assists(&FMUL_ST1, before, NULL), 0);
	assert_int_equal(p4_x87_assist(&addps, before, before, NULL), 0);
}

/* insn_fp_op of bytes[0..n), through the decoder's prefix scan (insn_opcode). */
static bool fp_op(const uint8_t *b, size_t n, struct p4_fp_op *o)
{
	struct insn_opcode c;

	if (insn_opcode(b, n, true, &c))
		return insn_fp_op(&c, o);
	*o = (struct p4_fp_op){ .kind = P4_FPK_NONE, .result = -1, .xmm = { -1, -1 } };
	return false;
}

#define FP(op, ...)	fp_op((const uint8_t[]){ __VA_ARGS__ }, \
			      sizeof((const uint8_t[]){ __VA_ARGS__ }), op)

static void decoder(void **state)
{
	struct p4_fp_op o;

	assert_true(FP(&o, 0xd8, 0xc9));			/* fmul st, st(1) */
	assert_int_equal(o.kind, P4_FPK_X87);
	assert_int_equal(o.nst, 2);
	assert_int_equal(o.st[1], 1);
	assert_int_equal(o.result, 0);
	assert_true(FP(&o, 0xd8, 0x06));			/* fadd dword [rsi] */
	assert_int_equal(o.mem_fmt, P4_FMT_F32);
	assert_int_equal(o.flags, P4_FPF_EXACT_ZERO);
	assert_true(FP(&o, 0xdc, 0x0e));			/* fmul qword [rsi] */
	assert_int_equal(o.mem_fmt, P4_FMT_F64);
	assert_int_equal(o.result, 0);
	assert_true(FP(&o, 0xde, 0xc9));			/* fmulp st(1), st */
	assert_int_equal(o.pop, 1);
	assert_int_equal(o.result, 0);				/* ST(1) before is ST(0) after */
	assert_true(FP(&o, 0xdc, 0xca));			/* fmul st(2), st */
	assert_int_equal(o.result, 2);
	assert_true(FP(&o, 0xde, 0xd9));			/* fcompp */
	assert_int_equal(o.pop, 2);
	assert_int_equal(o.flags, P4_FPF_NO_RESULT);
	assert_false(FP(&o, 0xde, 0xda));			/* no such form */
	assert_true(FP(&o, 0xda, 0x06));			/* fiadd dword [rsi] */
	assert_int_equal(o.mem_fmt, P4_FMT_I32);
	assert_true(FP(&o, 0xd9, 0xe8));			/* fld1 */
	assert_int_equal(o.push, 1);
	assert_int_equal(o.nst, 0);
	assert_true(FP(&o, 0xd9, 0xfd));			/* fscale */
	assert_int_equal(o.nst, 2);
	assert_false(FP(&o, 0xd9, 0xe2));			/* reserved */
	assert_false(FP(&o, 0xd9, 0xc1));			/* fld st(1): a move */
	assert_false(FP(&o, 0xdd, 0xd9));			/* fstp st(1) */
	assert_int_equal(o.kind, P4_FPK_NONE);
	assert_true(FP(&o, 0x0f, 0x58, 0xc1));			/* addps xmm0, xmm1 */
	assert_int_equal(o.kind, P4_FPK_SSE);
	assert_int_equal(o.esize, 4);
	assert_int_equal(o.nelem, 4);
	assert_int_equal(o.xmm[0], 0);
	assert_int_equal(o.xmm[1], 1);
	assert_true(FP(&o, 0x66, 0x45, 0x0f, 0x59, 0xc1));	/* mulpd xmm8, xmm9 */
	assert_int_equal(o.esize, 8);
	assert_int_equal(o.nelem, 2);
	assert_int_equal(o.xmm[0], 8);
	assert_int_equal(o.xmm[1], 9);
	assert_true(FP(&o, 0x45, 0x66, 0x0f, 0x59, 0xc1));	/* REX not next to 0FH: mulpd xmm0, xmm1 */
	assert_int_equal(o.xmm[0], 0);
	assert_int_equal(o.xmm[1], 1);
	assert_true(FP(&o, 0xf2, 0x0f, 0x51, 0x06));		/* sqrtsd xmm0, [rsi] */
	assert_int_equal(o.nelem, 1);
	assert_int_equal(o.xmm[0], -1);
	assert_int_equal(o.xmm[1], -1);
	assert_int_equal(o.mem_fmt, P4_FMT_F64);
	assert_true(FP(&o, 0xf3, 0x0f, 0x53, 0xc1));		/* rcpss */
	assert_false(FP(&o, 0x66, 0x0f, 0x53, 0xc1));		/* no RCPPD */
	assert_false(FP(&o, 0x0f, 0x57, 0xc1));			/* xorps: no FP input */
	assert_false(FP(&o, 0x66, 0x0f, 0xfe, 0xc1));		/* paddd xmm: integer */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(classes),
		cmocka_unit_test(x87_values),
		cmocka_unit_test(x87_flags),
		cmocka_unit_test(x87_stack),
		cmocka_unit_test(sse),
		cmocka_unit_test(decoder),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
