/*
 * p4_assist.h - the floating-point assists of a NetBurst core: which x87
 * instructions need one (x87_assist FPSU, FPSO, POAO, POAU, PREA) and how
 * many SSE/SSE2 inputs ask for one (SSE_input_assist ALL), judged from the
 * operand values before the instruction and its result after it (PMU
 * reference 4.1, 4.2; the SDM's descriptions are quoted in p4_assist.c).
 *
 * The values come as two FXSAVE images (SDM Vol. 2A FXSAVE, Table 3-53:
 * FCW at byte 0, FSW 2, the abridged tag byte 4, MXCSR 24, ST(i) at
 * 32 + 16i, XMMi at 160 + 16i) and the bytes of the memory operand; which
 * operands the instruction reads and writes comes from the decoder
 * (arch/x86/insn_simd.c, insn_fp_op) as a struct p4_fp_op.
 *
 * Pure: compiled on the host for tests/host/test_assist.c.
 */
#ifndef NBPROF_PMU_MODEL_P4_ASSIST_H
#define NBPROF_PMU_MODEL_P4_ASSIST_H

#include <stdbool.h>
#include <stdint.h>

/* FXSAVE image offsets (SDM Vol. 2A, FXSAVE, Table 3-53 / 3-56). */
#define P4_FX_FCW	0
#define P4_FX_FSW	2
#define P4_FX_FTW	4	/* abridged: bit i set = physical register i valid */
#define P4_FX_MXCSR	24
#define P4_FX_ST0	32
#define P4_FX_XMM0	160
#define P4_FX_SIZE	512

/* x87 status word (SDM Vol. 1 8.1.3) and MXCSR (10.2.3) bits used here. */
#define P4_FSW_IE	0x0001u
#define P4_FSW_DE	0x0002u
#define P4_FSW_OE	0x0008u
#define P4_FSW_UE	0x0010u
#define P4_FSW_SF	0x0040u
#define P4_FSW_C1	0x0200u
#define P4_FSW_TOP_SHIFT 11
#define P4_MXCSR_DAZ	0x0040u

/* The class of one floating-point value. */
enum p4_fpclass {
	P4_FP_ZERO,
	P4_FP_DENORMAL,		/* exponent 0, significand not 0 (also x87 pseudo-denormals) */
	P4_FP_NORMAL,
	P4_FP_INF,
	P4_FP_NAN,
	P4_FP_UNSUPPORTED,	/* x87 unnormals, pseudo-infinities and pseudo-NaNs */
};

enum p4_fpclass p4_fp_class32(uint32_t v);
enum p4_fpclass p4_fp_class64(uint64_t v);
/* An x87 extended value: 64-bit significand (bit 63 the J bit), sign and 15-bit exponent. */
enum p4_fpclass p4_fp_class80(uint64_t significand, uint16_t sign_exp);

/* Formats of a memory operand. */
enum p4_fp_fmt {
	P4_FMT_NONE,
	P4_FMT_F32, P4_FMT_F64, P4_FMT_F80,
	P4_FMT_I16, P4_FMT_I32,		/* x87 integer operands (FIADD ...): never denormal */
};

enum p4_fp_kind { P4_FPK_NONE, P4_FPK_X87, P4_FPK_SSE };

/* x87: what the value rules look at (a compare has no result, FCHS/FABS/FXAM raise no #D). */
#define P4_FPF_NO_DENORMAL	0x01u	/* takes no denormal-operand assist (FCHS, FABS, FXAM, FCMOV) */
#define P4_FPF_NO_RESULT	0x02u	/* writes no result (compares, FTST, FXAM, FCMOV) */
#define P4_FPF_EXACT_ZERO	0x04u	/* a zero from nonzero inputs is exact (FADD x, -x; FPREM; FRNDINT) */

/*
 * The floating-point operands of one instruction, as the decoder sees it.
 * x87: the ST registers read (relative to TOP before it), the memory
 * operand's format, the stack change (pushes, pops) and where the result
 * is after it (ST index after, or -1). SSE: the element size and count
 * per source (a scalar op reads element 0 only), the XMM registers read:
 * xmm[0] the ModRM reg operand when the operation reads it (ADDPS, not
 * SQRTPS), xmm[1] the r/m operand, -1 when it is memory (mem_fmt F32 or
 * F64) or not read.
 */
struct p4_fp_op {
	uint8_t kind;			/* enum p4_fp_kind */
	uint8_t flags;			/* P4_FPF_* */
	uint8_t mem_fmt;		/* enum p4_fp_fmt, P4_FMT_NONE: no memory operand */
	uint8_t nst;			/* x87: ST registers read, st[0..nst) */
	uint8_t st[2];
	int8_t result;			/* x87: ST index of the result after it, -1 none */
	uint8_t push, pop;		/* x87: registers pushed and popped */
	uint8_t esize, nelem;		/* SSE: 4 or 8 bytes, 1 (scalar), 2 or 4 (packed) */
	int8_t xmm[2];			/* SSE: XMM registers read, -1 none */
};

/* Bytes of the memory operand (0 for none). */
unsigned p4_fp_mem_bytes(const struct p4_fp_op *op);

/*
 * x87_assist's mask bits (P4_EVMASK of P4_X87_ASSIST_*) for one retired
 * x87 instruction: before and after are its FXSAVE images, mem the bytes
 * of its memory operand (p4_fp_mem_bytes of them; NULL when unread). 0:
 * it needed no assist.
 */
uint16_t p4_x87_assist(const struct p4_fp_op *op, const uint8_t *before, const uint8_t *after,
		       const void *mem);

/*
 * SSE_input_assist requests of one SSE/SSE2 arithmetic instruction: the
 * denormal source elements it reads, 0 while MXCSR.DAZ is set (before: its
 * FXSAVE image, mem as above).
 */
unsigned p4_sse_input_assists(const struct p4_fp_op *op, const uint8_t *before, const void *mem);

/* Clockticks one assist adds to its instruction (p4_assist.c gives the reasoning). */
#define P4_ASSIST_CLOCKS	200u

#endif
