/*
 * insn.h - portable x86 decoder for the single-step engine: branch kinds
 * and memory operands.
 *
 * Given the bytes at a retired instruction's address, insn_classify() tells
 * whether it is a branch and of which kind, and how long it is when the
 * length matters for "taken" (the branch forms and the string instructions
 * that a REP prefix repeats). Opcodes follow the SDM Vol. 2 opcode map
 * (Appendix A, Tables ). The decoder knows legacy prefixes,
 * REX, the one-byte and 0F two-byte maps as far as branches need, and
 * ModRM/SIB/displacement sizes for FF /2 /3 /4 /5. insn_classify() does
 * not give general instruction lengths: for non-branches its len is 0
 * unless the instruction is a REP string operation (insn_length() does).
 *
 * insn_mem_decode() decodes a whole instruction (length included) and, given
 * the register file at the moment it is about to execute, computes each
 * memory operand's linear address, size and access kind, for the common
 * integer ISA (see insn.c for the exact list); anything else is reported
 * as unknown, never guessed.
 *
 * Pure logic: no hardware, compiled on the host for tests/host/test_insn.c.
 */
#ifndef NBPROF_ARCH_X86_INSN_H
#define NBPROF_ARCH_X86_INSN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pmu/model/p4_core.h"

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
	bool flush_tlb;		/* MOV to CR3 (0F 22 /3): flushes the TLBs (SDM Vol. 3A 4.10.4.1) */
	/*
	 * Its execution-tagging class, decoded here once so that the step
	 * engine's decode cache keeps it beside the rest: insn_simd.h's enum
	 * insn_simd in the low four bits, enum insn_simd_move above them
	 * (INSN_SIMD_OF, INSN_SIMD_MOVE_OF). One byte: the struct stays the
	 * 8 bytes every stepped instruction copies.
	 */
	uint8_t simd;
};

#define INSN_SIMD_OF(simd)	((unsigned)(simd) & 15u)
#define INSN_SIMD_MOVE_OF(simd)	((unsigned)(simd) >> 4)

/*
 * An instruction's opcode as the decoder's prefix scan leaves it: the map
 * (one-byte, or 0FH two-byte), the opcode byte in it, the mandatory prefix
 * (the last of 66H, F2H, F3H) and the REX byte right before the opcode,
 * and the byte after the opcode (the ModRM byte, for the forms that have
 * one) when the buffer holds it. arch/x86/insn_simd.c reads its classes
 * from this, so that prefixes are skipped in one place.
 */
enum insn_map { INSN_MAP_ONE, INSN_MAP_0F };

struct insn_opcode {
	uint8_t map;		/* enum insn_map */
	uint8_t op;
	uint8_t pfx;		/* 66H, F2H, F3H or 0 */
	uint8_t rex;		/* 40H-4FH in 64-bit code, else 0 */
	uint8_t modrm;		/* the byte after the opcode, when has_modrm */
	bool has_modrm;
};

/*
 * The opcode of the instruction at bytes[0..n) (mode64: 64-bit code, where
 * 40H-4FH are REX). False when the bytes end in the prefixes, or in a 0FH
 * escape before its second byte.
 */
bool insn_opcode(const uint8_t *bytes, size_t n, bool mode64, struct insn_opcode *out);

/*
 * Classify the instruction at bytes[0..n). mode64 selects 64-bit decoding
 * (REX prefixes; 48 41 etc.). Returns false when the bytes run out before
 * the instruction ends or the prefixes exceed 15 bytes (out unspecified).
 */
bool insn_classify(const uint8_t *bytes, size_t n, bool mode64, struct insn_class *out);

/* "cond", "jmp", "jmp-ind", "call", "call-ind", "ret", "other", "-" for INSN_NOT_BRANCH. */
const char *insn_branch_name(enum insn_branch b);

/* ---- memory operands ------------------------------------------------------------ */

/* General registers in their encoding order (SDM Vol. 2 Table 2-2, REX.B/X/R extend to 8-15). */
enum insn_reg {
	INSN_RAX, INSN_RCX, INSN_RDX, INSN_RBX, INSN_RSP, INSN_RBP, INSN_RSI, INSN_RDI,
	INSN_R8, INSN_R9, INSN_R10, INSN_R11, INSN_R12, INSN_R13, INSN_R14, INSN_R15,
	INSN_NREGS
};

/* Segment registers in their Sreg encoding order (SDM Vol. 2 3.1.1.1: ES=0 ... GS=5). */
enum insn_seg { INSN_ES, INSN_CS, INSN_SS, INSN_DS, INSN_FS, INSN_GS, INSN_NSEGS };

/*
 * The register file before the instruction executes. In 64-bit mode only
 * the FS and GS bases are used (the others count as 0, SDM Vol. 3A 3.2.4);
 * in 32-bit mode every segment's base is added.
 */
struct insn_regs {
	uint64_t gpr[INSN_NREGS];
	uint64_t rip;			/* address of the instruction itself */
	uint64_t seg_base[INSN_NSEGS];
};

enum insn_access {
	INSN_LOAD = 1,
	INSN_STORE = 2,
	INSN_LOAD_STORE = 3,		/* read-modify-write of one operand */
};

struct insn_mem_op {
	uint64_t addr;			/* linear address */
	uint16_t size;			/* bytes */
	enum insn_access access;
};

#define INSN_MAX_MEM_OPS	2	/* e.g. MOVS: load and store; PUSH m: load and store */

enum insn_mem_status {
	INSN_MEM_OK,			/* len and ops[0..nops) valid (nops may be 0) */
	INSN_MEM_UNKNOWN,		/* accesses not known; len > 0 if the length is */
	INSN_MEM_TRUNCATED,		/* the bytes end inside the instruction, or > 15 bytes */
};

struct insn_mem {
	enum insn_mem_status status;
	uint8_t len;			/* bytes, when status is INSN_MEM_OK */
	uint8_t nops;
	struct insn_mem_op op[INSN_MAX_MEM_OPS];
	/*
	 * What the core's timing model needs (pmu/model/p4_core.h): the
	 * instruction's uop class, the registers it reads and writes, its
	 * address registers and its counting quirks - decoded here, from the
	 * same prefixes and ModRM, also when the accesses are unknown (x87,
	 * SSE memory forms) as long as the opcode is; zero otherwise.
	 */
	struct p4_insn core;
};

/*
 * Decode the instruction at bytes[0..n) (mode64: 64-bit code) as it would
 * execute with *regs. Returns out->status. A REP string instruction is
 * one iteration (the step engine traps once per iteration): its operands
 * are at the current RSI/RDI, and none when the count register is 0.
 * The registers must be those before the instruction runs: under single-
 * stepping, the frame of the trap that stops in front of it (where
 * step.c classifies the next instruction), not the frame after it.
 */
enum insn_mem_status insn_mem_decode(const uint8_t *bytes, size_t n, bool mode64,
				     const struct insn_regs *regs, struct insn_mem *out);

/*
 * The linear address of the ModRM memory operand of the instruction at
 * bytes[0..n) with *regs (the same address arithmetic as insn_mem_decode),
 * also for the forms whose accesses insn_mem_decode leaves unknown (x87
 * and SSE memory forms). False when it has no memory operand or the
 * opcode is not known.
 */
bool insn_rm_addr(const uint8_t *bytes, size_t n, bool mode64, const struct insn_regs *regs,
		  uint64_t *addr);

/*
 * Length in bytes of the instruction at bytes[0..n), from the same tables
 * (registers play no part); 0 when the opcode is unknown or the bytes end
 * early.
 */
size_t insn_length(const uint8_t *bytes, size_t n, bool mode64);

/* "load", "store", "load+store", or "?" */
const char *insn_access_name(enum insn_access a);

#endif
