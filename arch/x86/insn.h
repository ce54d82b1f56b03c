/*
 * insn.h - portable x86 branch classifier for the single-step engine.
 *
 * Given the bytes at a retired instruction's address, insn_classify() tells
 * whether it is a branch and of which kind, and how long it is when the
 * length matters for "taken" (the branch forms and the string instructions
 * that a REP prefix repeats). Opcodes follow the SDM Vol. 2 opcode map
 * (Appendix A, Tables ). The decoder knows legacy prefixes,
 * REX, the one-byte and 0F two-byte maps as far as branches need, and
 * ModRM/SIB/displacement sizes for FF /2 /3 /4 /5. It does not decode
 * general instruction lengths: for non-branches len is 0 unless the
 * instruction is a REP string operation.
 *
 * Pure logic: no hardware, compiled on the host for tests/host/test_insn.c.
 */
#ifndef NBPROF_ARCH_X86_INSN_H
#define NBPROF_ARCH_X86_INSN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum insn_branch {
	INSN_NOT_BRANCH,
	INSN_COND,		/* Jcc 70-7F, 0F 80-8F */
	INSN_JMP,		/* EB, E9 (EA in 32-bit code) */
	INSN_JMP_INDIRECT,	/* FF /4, FF /5 */
	INSN_CALL,		/* E8 */
	INSN_CALL_INDIRECT,	/* FF /2, FF /3 */
	INSN_RET,		/* C3, C2, CB, CA */
	INSN_OTHER_BRANCH,	/* LOOP/LOOPcc/JrCXZ E0-E3, INT n/INT3/INTO, IRET, SYSCALL, SYSRET, SYSENTER, SYSEXIT */
	INSN_NBRANCH_KINDS
};

struct insn_class {
	enum insn_branch branch;
	uint8_t len;		/* bytes, for branches and REP string ops; else 0 */
	bool rep_string;	/* F2/F3 prefix on MOVS/CMPS/STOS/LODS/SCAS/INS/OUTS */
};

/*
 * Classify the instruction at bytes[0..n). mode64 selects 64-bit decoding
 * (REX prefixes; 48 41 etc.). Returns false when the bytes run out before
 * the instruction ends or the prefixes exceed 15 bytes (out unspecified).
 */
bool insn_classify(const uint8_t *bytes, size_t n, bool mode64, struct insn_class *out);

/* "cond", "jmp", "jmp-ind", "call", "call-ind", "ret", "other", "-" for INSN_NOT_BRANCH. */
const char *insn_branch_name(enum insn_branch b);

#endif
