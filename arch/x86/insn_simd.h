/*
 * insn_simd.h - the floating-point and SIMD class of an x86 instruction,
 * for the NetBurst execution-tagging events (packed_SP_uop ... x87_FP_uop,
 * PMU reference 5.7; SDM Vol. 3B Table A-9 describes each event).
 *
 * Pure: sorts the opcode the decoder found (struct insn_opcode, from
 * arch/x86/insn.c's prefix scan: map, opcode, mandatory prefix, REX, ModRM). Only arithmetic counts, as the events' descriptions say: x87
 * loads, stores, register moves and control (FLD, FST, FXCH, FLDCW, ...)
 * are not x87_FP_uop (SDM note 2 of x87_FP_uop), and SIMD moves (MOVAPS,
 * MOVD, MOVQ, ...) belong to x87_SIMD_moves_uop: insn_simd_move() sorts
 * those. Each instruction counts as one µop of its class (a model
 * choice: the events count µops, and the decoder does not know how many
 * a NetBurst part makes of it).
 */
#ifndef NBPROF_ARCH_X86_INSN_SIMD_H
#define NBPROF_ARCH_X86_INSN_SIMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/insn.h"
#include "pmu/model/p4_assist.h"

enum insn_simd {
	INSN_SIMD_NONE,
	INSN_SIMD_X87,		/* x87 arithmetic: x87_FP_uop */
	INSN_SIMD_MMX64,	/* integer SIMD on MMX registers: 64bit_MMX_uop */
	INSN_SIMD_MMX128,	/* integer SIMD on XMM registers (66H): 128bit_MMX_uop */
	INSN_SIMD_PACKED_SP,	/* e.g. ADDPS: packed_SP_uop */
	INSN_SIMD_PACKED_DP,	/* e.g. ADDPD (66H): packed_DP_uop */
	INSN_SIMD_SCALAR_SP,	/* e.g. ADDSS (F3H): scalar_SP_uop */
	INSN_SIMD_SCALAR_DP,	/* e.g. ADDSD (F2H): scalar_DP_uop */
};

/* The class of an instruction's opcode (INSN_SIMD_NONE when none, or its ModRM is missing). */
enum insn_simd insn_simd_class(const struct insn_opcode *o);

/*
 * x87_SIMD_moves_uop (PMU reference 4.2: ALLP2 "x87/SIMD load µops", ALLP0
 * "x87/SIMD store/move µops"; SDM Table 19-32 pairs both bits as
 * X87_SIMD_memory_moves_retired). Which instructions are such moves is not
 * listed anywhere seen (UNVERIFIED); the model takes the x87 and SIMD data
 * moves of the SDM Vol. 2 opcode maps:
 *   load: FLD/FILD/FBLD from memory; MOVUPS/MOVSS/MOVUPD/MOVSD, MOVLPS/
 *         MOVHPS/MOVLPD/MOVHPD, MOVAPS/MOVAPD, MOVD, MOVQ, MOVDQA/MOVDQU
 *         with a memory source;
 *   move: FST/FSTP/FIST/FISTP/FBSTP to memory, FLD ST(i), FST/FSTP ST(i);
 *         the SIMD moves above with a memory destination (and MOVNTPS,
 *         MOVNTQ, MOVNTDQ, MOVQ xmm store 66 0F D6) or between registers.
 * Control and state (FNINIT, FLDCW, LDMXCSR, FXSAVE, EMMS ...) is neither.
 */
enum insn_simd_move {
	INSN_SIMD_MOVE_NONE,
	INSN_SIMD_MOVE_LOAD,	/* ALLP2 */
	INSN_SIMD_MOVE_STORE,	/* ALLP0: a store, or a register-to-register move */
};

enum insn_simd_move insn_simd_move(const struct insn_opcode *o);

/*
 * The floating-point operands of an x87 or SSE/SSE2 arithmetic instruction
 * (the x87 and the packed/scalar SP/DP classes above, less the SSE logic
 * ops ANDPS..XORPS, which read no floating-point value), for the assist
 * events (pmu/model/p4_assist.h): which ST or XMM registers it reads, its
 * memory operand's format, its stack change and where its result goes
 * (SDM Vol. 2 opcode maps, Tables for the x87 escapes).
 * False (op->kind P4_FPK_NONE) for anything else. The memory operand's
 * address is insn_rm_addr's (arch/x86/insn.h).
 */
bool insn_fp_op(const struct insn_opcode *o, struct p4_fp_op *op);

#endif
