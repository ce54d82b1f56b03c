/*
 * p4_assist.c - floating-point assists from operand values (p4_assist.h).
 *
 * The events (SDM Vol. 3B Table A-9 for the NetBurst events, the PMU
 * reference's source; PMU reference 4.1 and 4.2 list them):
 * - x87_assist (at-retirement): "retired x87 instructions that required
 *   special handling", mask FPSU "handle FP stack underflow", FPSO "handle
 *   FP stack overflow", POAO "handle x87 output overflow", POAU "handle x87
 *   output underflow", PREA "handle x87 input assist". One count per
 *   retired instruction whose assists meet the ESCR's mask (the model
 *   counts an event when its mask bits meet the ESCR's).
 * - SSE_input_assist ALL: "the number of times an assist is requested to
 *   handle problems with input operands for SSE/SSE2/SSE3 operations, most
 *   notably denormal source operands when the DAZ bit is not set". The
 *   manual does not say whether a packed instruction with several
 *   denormal elements requests one assist or one per element; the model
 *   takes the harder reading and counts one request per denormal source
 *   element the instruction's format reads (a scalar op reads element 0
 *   of each source, a packed one all of them; ADDPS with two denormal
 *   elements in one source and one in the other: 3).
 *
 * The x87 rules, judged per instruction from the values (the exception
 * flags in FSW are sticky, so a flag already set before tells nothing;
 * one newly set does, and counts too):
 * - FPSU: a source register is empty (its tag bit clear), or FSW.SF newly
 *   set with C1 clear (SDM Vol. 1 8.5.1.1: C1 0 for underflow, 1 for
 *   overflow);
 * - FPSO: a push onto a register that is not empty, or SF newly set with
 *   C1 set; an instruction with a stack fault is judged on nothing else
 *   (its result is the indefinite QNaN);
 * - PREA: a source is a denormal (the register's 80-bit value, or the
 *   memory operand in its own format: a single or double denormal is one
 *   even though its extended form is normal, SDM Vol. 1 8.5.2 "denormal
 *   operand exception"); FCHS, FABS, FXAM and FCMOV raise no #D and get
 *   none;
 * - POAU: the result is a denormal, or a zero from finite nonzero inputs
 *   where no exact zero is possible (a multiply, divide, square root or
 *   scale: FADD of x and -x, FPREM and FRNDINT give exact zeros), or
 *   FSW.UE newly set;
 * - POAO: the result is an infinity from finite nonzero inputs (a zero
 *   input makes the infinity a divide-by-zero), or FSW.OE newly set.
 *
 * Cost: no measured figure for a NetBurst assist is in the sources at
 * hand (docs/reference/calibration.md has none); Intel's VTune help on
 * "FP Assists" says the microcode sequences "might be hundreds of
 * instructions long". The model charges P4_ASSIST_CLOCKS = 200 clockticks
 * per assist (per x87 instruction that needs one, per SSE request), the
 * harder reading of "hundreds" over the 100-odd often quoted.
 */
#include "pmu/model/p4_assist.h"
#include "pmu/p4_events.h"

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)rd16(p) | ((uint32_t)rd16(p + 2) << 16);
}

static uint64_t rd64(const uint8_t *p)
{
	return (uint64_t)rd32(p) | ((uint64_t)rd32(p + 4) << 32);
}

enum p4_fpclass p4_fp_class32(uint32_t v)
{
	uint32_t e = (v >> 23) & 0xff, f = v & 0x7fffff;

	if (e == 0)
		return f ? P4_FP_DENORMAL : P4_FP_ZERO;
	if (e == 0xff)
		return f ? P4_FP_NAN : P4_FP_INF;
	return P4_FP_NORMAL;
}

enum p4_fpclass p4_fp_class64(uint64_t v)
{
	uint64_t e = (v >> 52) & 0x7ff, f = v & ((UINT64_C(1) << 52) - 1);

	if (e == 0)
		return f ? P4_FP_DENORMAL : P4_FP_ZERO;
	if (e == 0x7ff)
		return f ? P4_FP_NAN : P4_FP_INF;
	return P4_FP_NORMAL;
}

/* SDM Vol. 1 8.2.2, Table 8-3: the J bit (63) must be set above exponent 0. */
enum p4_fpclass p4_fp_class80(uint64_t m, uint16_t se)
{
	unsigned e = se & 0x7fffu;
	bool j = (m >> 63) != 0;
	uint64_t f = m & ~(UINT64_C(1) << 63);

	if (e == 0)
		return m ? P4_FP_DENORMAL : P4_FP_ZERO;	/* J set: a pseudo-denormal, still #D */
	if (!j)
		return P4_FP_UNSUPPORTED;
	if (e == 0x7fff)
		return f ? P4_FP_NAN : P4_FP_INF;
	return P4_FP_NORMAL;
}

unsigned p4_fp_mem_bytes(const struct p4_fp_op *op)
{
	static const uint8_t bytes[] = {
		[P4_FMT_NONE] = 0, [P4_FMT_F32] = 4, [P4_FMT_F64] = 8, [P4_FMT_F80] = 10,
		[P4_FMT_I16] = 2, [P4_FMT_I32] = 4,
	};

	if (op->mem_fmt >= sizeof(bytes))
		return 0;
	if (op->kind == P4_FPK_SSE && op->mem_fmt != P4_FMT_NONE)
		return (unsigned)op->esize * op->nelem;
	return bytes[op->mem_fmt];
}

/* The class of a memory operand in its format (integers: zero or normal). */
static enum p4_fpclass mem_class(enum p4_fp_fmt fmt, const uint8_t *p)
{
	switch (fmt) {
	case P4_FMT_F32: return p4_fp_class32(rd32(p));
	case P4_FMT_F64: return p4_fp_class64(rd64(p));
	case P4_FMT_F80: return p4_fp_class80(rd64(p), rd16(p + 8));
	case P4_FMT_I16: return rd16(p) ? P4_FP_NORMAL : P4_FP_ZERO;
	case P4_FMT_I32: return rd32(p) ? P4_FP_NORMAL : P4_FP_ZERO;
	default: return P4_FP_NORMAL;
	}
}

static enum p4_fpclass st_class(const uint8_t *fx, unsigned i)
{
	const uint8_t *p = fx + P4_FX_ST0 + 16 * i;

	return p4_fp_class80(rd64(p), rd16(p + 8));
}

static bool fp_finite(enum p4_fpclass c)
{
	return c == P4_FP_ZERO || c == P4_FP_DENORMAL || c == P4_FP_NORMAL;
}

uint16_t p4_x87_assist(const struct p4_fp_op *op, const uint8_t *before, const uint8_t *after,
		       const void *mem)
{
	uint16_t fb = rd16(before + P4_FX_FSW), fa = rd16(after + P4_FX_FSW);
	uint16_t raised = (uint16_t)(fa & ~fb);
	unsigned top = (fb >> P4_FSW_TOP_SHIFT) & 7u, tags = before[P4_FX_FTW];
	uint16_t a = 0;
	bool fin = true, nonzero = true;
	enum p4_fpclass c[3];
	unsigned n = 0;

	if (op->kind != P4_FPK_X87)
		return 0;
	for (unsigned k = 0; k < op->nst && k < 2; k++)
		if (!((tags >> ((top + op->st[k]) & 7u)) & 1u))
			a |= P4_EVMASK(P4_X87_ASSIST_FPSU);
	if (op->push && ((tags >> ((top - 1u) & 7u)) & 1u))
		a |= P4_EVMASK(P4_X87_ASSIST_FPSO);
	if (raised & P4_FSW_SF)
		a |= P4_EVMASK((fa & P4_FSW_C1) ? P4_X87_ASSIST_FPSO : P4_X87_ASSIST_FPSU);
	if (a)
		return a;		/* a stack fault: the result is the indefinite QNaN */
	for (unsigned k = 0; k < op->nst && k < 2; k++)
		c[n++] = st_class(before, op->st[k]);
	if (op->mem_fmt != P4_FMT_NONE && mem)
		c[n++] = mem_class((enum p4_fp_fmt)op->mem_fmt, (const uint8_t *)mem);
	for (unsigned k = 0; k < n; k++) {
		if (c[k] == P4_FP_DENORMAL && !(op->flags & P4_FPF_NO_DENORMAL))
			a |= P4_EVMASK(P4_X87_ASSIST_PREA);
		fin &= fp_finite(c[k]);
		nonzero &= c[k] != P4_FP_ZERO;
	}
	if (raised & P4_FSW_UE)
		a |= P4_EVMASK(P4_X87_ASSIST_POAU);
	if (raised & P4_FSW_OE)
		a |= P4_EVMASK(P4_X87_ASSIST_POAO);
	if (op->result >= 0 && !(op->flags & P4_FPF_NO_RESULT) && fin) {
		enum p4_fpclass r = st_class(after, (unsigned)op->result & 7u);

		if (r == P4_FP_DENORMAL ||
		    (r == P4_FP_ZERO && nonzero && n > 0 && !(op->flags & P4_FPF_EXACT_ZERO)))
			a |= P4_EVMASK(P4_X87_ASSIST_POAU);
		if (r == P4_FP_INF && nonzero)
			a |= P4_EVMASK(P4_X87_ASSIST_POAO);
	}
	return a;
}

unsigned p4_sse_input_assists(const struct p4_fp_op *op, const uint8_t *before, const void *mem)
{
	unsigned n = 0;

	if (op->kind != P4_FPK_SSE || (rd32(before + P4_FX_MXCSR) & P4_MXCSR_DAZ))
		return 0;
	for (unsigned s = 0; s < 2; s++) {
		const uint8_t *src;

		if (op->xmm[s] >= 0)
			src = before + P4_FX_XMM0 + 16 * (unsigned)op->xmm[s];
		else if (s == 1 && op->mem_fmt != P4_FMT_NONE && mem)
			src = (const uint8_t *)mem;	/* the r/m source in memory */
		else
			continue;
		for (unsigned e = 0; e < op->nelem; e++) {
			const uint8_t *p = src + e * op->esize;

			n += (op->esize == 8 ? p4_fp_class64(rd64(p)) : p4_fp_class32(rd32(p))) ==
			     P4_FP_DENORMAL;
		}
	}
	return n;
}
