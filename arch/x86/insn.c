/*
 * insn.c - the x86 decoder: branch kinds, instruction lengths and memory
 * operands, from one set of prefix, ModRM and opcode-map routines.
 *
 * The single-step engine (arch/x86/step.c) calls insn_classify() for every
 * retired workload instruction; the memory-system model (pmu/model/p4_mem.c)
 * is meant to be fed by insn_mem_decode() on the same instruction with the
 * trap frame's registers (second half of this file); annotate takes byte
 * counts from insn_length(). For a branch count only this is decoded:
 *
 *  - legacy prefixes (F0 F2 F3 2E 36 3E 26 64 65 66 67) and, in 64-bit
 *    mode, one REX prefix (40-4F) right before the opcode;
 *  - one-byte opcodes (SDM Vol. 2 Table A-2): Jcc 70-7F, JMP EB/E9/EA,
 *    CALL E8/9A, RET C3/C2/CB/CA, LOOPNE/LOOPE/LOOP/JrCXZ E0-E3,
 *    INT3 CC, INT n CD, INTO CE, IRET CF, INT1 F1, group 5 FF /2 /3 /4 /5,
 *    and the string instructions a REP prefix repeats (6C-6F, A4-A7, AA-AF);
 *  - two-byte opcodes (Table A-3): Jcc 0F 80-8F, SYSCALL 0F 05,
 *    SYSRET 0F 07, SYSENTER 0F 34, SYSEXIT 0F 35;
 *  - ModRM, SIB and displacement sizes (Tables 2-1 to 2-3) for group 5.
 *
 * Branch displacement sizes follow Intel's rule for 64-bit mode: near
 * branches always take rel32 there and a 66 prefix does not shorten them
 * (SDM Vol. 2 JMP/Jcc/CALL, "64-bit mode" notes; AMD differs). In 32-bit
 * mode a 66 prefix selects rel16. Far direct JMP/CALL (EA, 9A) and INTO
 * are invalid in 64-bit mode and classify as non-branches there.
 */
#include "arch/x86/insn.h"
#include "arch/x86/insn_simd.h"

_Static_assert(INSN_SIMD_SCALAR_DP < 16 && INSN_SIMD_MOVE_STORE < 16,
	       "struct insn_class packs both SIMD classes into one byte");
_Static_assert(sizeof(struct insn_class) == 8, "a stepped instruction copies its class: 8 bytes");

#define INSN_MAX_LEN	15

struct insn_cursor {
	const uint8_t *p;
	size_t n, i;
	bool opsize16, addr16, rep, mode64, lock;
	uint8_t pfx;		/* the last of 66, F2, F3 (mandatory prefixes of SSE), else 0 */
	bool addr32;		/* 67 in 64-bit mode: 32-bit addressing */
	uint8_t rex;		/* the REX byte right before the opcode, else 0 */
	int8_t seg;		/* segment override (enum insn_seg), or -1 */
};

static bool insn_byte(struct insn_cursor *c, uint8_t *b)
{
	if (c->i >= c->n || c->i >= INSN_MAX_LEN)
		return false;
	*b = c->p[c->i++];
	return true;
}

static bool insn_is_legacy_prefix(uint8_t b)
{
	switch (b) {
	case 0xf0: case 0xf2: case 0xf3:
	case 0x2e: case 0x36: case 0x3e: case 0x26: case 0x64: case 0x65:
	case 0x66: case 0x67:
		return true;
	default:
		return false;
	}
}

/* Segment-override prefixes (SDM Vol. 2 2.1.1, group 2). */
static void insn_note_segment(struct insn_cursor *c, uint8_t b)
{
	static const struct { uint8_t prefix; int8_t seg; } segs[] = {
		{ 0x26, INSN_ES }, { 0x2e, INSN_CS }, { 0x36, INSN_SS },
		{ 0x3e, INSN_DS }, { 0x64, INSN_FS }, { 0x65, INSN_GS },
	};

	for (size_t k = 0; k < sizeof(segs) / sizeof(segs[0]); k++)
		if (segs[k].prefix == b)
			c->seg = segs[k].seg;
}

/* Consume prefixes; *op receives the first opcode byte. */
static bool insn_prefixes(struct insn_cursor *c, uint8_t *op)
{
	uint8_t b;

	for (;;) {
		if (!insn_byte(c, &b))
			return false;
		if (insn_is_legacy_prefix(b)) {
			c->opsize16 |= b == 0x66;
			c->addr16 |= b == 0x67 && !c->mode64;
			c->addr32 |= b == 0x67 && c->mode64;
			c->rep |= b == 0xf2 || b == 0xf3;
			c->lock |= b == 0xf0;
			if (b == 0x66 || b == 0xf2 || b == 0xf3)
				c->pfx = b;
			c->rex = 0;	/* a REX not right before the opcode is ignored (SDM Vol. 2 2.2.1) */
			insn_note_segment(c, b);
			continue;
		}
		if (c->mode64 && (b & 0xf0) == 0x40) {	/* REX: W does not change branch sizes */
			c->rex = b;
			continue;
		}
		*op = b;
		return true;
	}
}

/* Skip n immediate/displacement bytes. */
static bool insn_skip(struct insn_cursor *c, size_t n)
{
	uint8_t b;

	while (n--)
		if (!insn_byte(c, &b))
			return false;
	return true;
}

/* Skip ModRM (already read as modrm), SIB and displacement. */
static bool insn_modrm_tail(struct insn_cursor *c, uint8_t modrm)
{
	unsigned mod = modrm >> 6, rm = modrm & 7;
	uint8_t sib;

	if (mod == 3)
		return true;
	if (c->addr16) {	/* Table 2-1 */
		if (mod == 0)
			return insn_skip(c, rm == 6 ? 2 : 0);
		return insn_skip(c, mod == 1 ? 1 : 2);
	}
	if (rm == 4) {		/* Table 2-2/2-3: SIB follows */
		if (!insn_byte(c, &sib))
			return false;
		if (mod == 0 && (sib & 7) == 5)
			return insn_skip(c, 4);
	} else if (mod == 0 && rm == 5) {
		return insn_skip(c, 4);	/* disp32 (RIP-relative in 64-bit mode) */
	}
	return insn_skip(c, mod == 1 ? 1 : mod == 2 ? 4 : 0);
}

/* Near relative branch displacement: rel32, or rel16 with 66 outside 64-bit mode. */
static size_t insn_rel_size(const struct insn_cursor *c)
{
	return c->opsize16 && !c->mode64 ? 2 : 4;
}

static bool insn_finish(struct insn_cursor *c, size_t tail, enum insn_branch kind,
			struct insn_class *out)
{
	if (!insn_skip(c, tail))
		return false;
	out->branch = kind;
	out->len = (uint8_t)c->i;
	return true;
}

static bool insn_group5(struct insn_cursor *c, struct insn_class *out)
{
	static const enum insn_branch kinds[8] = {
		[2] = INSN_CALL_INDIRECT, [3] = INSN_CALL_INDIRECT,
		[4] = INSN_JMP_INDIRECT, [5] = INSN_JMP_INDIRECT,
	};
	uint8_t modrm;

	if (!insn_byte(c, &modrm))
		return false;
	if (kinds[(modrm >> 3) & 7] == INSN_NOT_BRANCH)
		return true;		/* INC/DEC/PUSH: not a branch, len 0 */
	if (!insn_modrm_tail(c, modrm))
		return false;
	out->branch = kinds[(modrm >> 3) & 7];
	out->len = (uint8_t)c->i;
	return true;
}

static bool insn_two_byte(struct insn_cursor *c, struct insn_class *out)
{
	uint8_t op;

	if (!insn_byte(c, &op))
		return false;
	if (op >= 0x80 && op <= 0x8f)
		return insn_finish(c, insn_rel_size(c), INSN_COND, out);
	if (op == 0x05 || op == 0x07 || op == 0x34 || op == 0x35)
		return insn_finish(c, 0, INSN_OTHER_BRANCH, out);
	if (op == 0x22) {		/* MOV CRn, r: register operand only */
		uint8_t modrm;

		if (!insn_byte(c, &modrm))
			return false;
		out->flush_tlb = ((modrm >> 3) & 7) == 3;
	}
	return true;
}

static bool insn_is_string_op(uint8_t op)
{
	return (op >= 0x6c && op <= 0x6f) || (op >= 0xa4 && op <= 0xa7) || (op >= 0xaa && op <= 0xaf);
}

static bool insn_one_byte(struct insn_cursor *c, uint8_t op, struct insn_class *out)
{
	size_t far = (c->opsize16 ? 2 : 4) + 2;	/* ptr16:16 or ptr16:32 */

	if (op >= 0x70 && op <= 0x7f)
		return insn_finish(c, 1, INSN_COND, out);
	if (op >= 0xe0 && op <= 0xe3)
		return insn_finish(c, 1, INSN_OTHER_BRANCH, out);
	switch (op) {
	case 0x0f: return insn_two_byte(c, out);
	case 0xeb: return insn_finish(c, 1, INSN_JMP, out);
	case 0xe9: return insn_finish(c, insn_rel_size(c), INSN_JMP, out);
	case 0xe8: return insn_finish(c, insn_rel_size(c), INSN_CALL, out);
	case 0xea: return c->mode64 || insn_finish(c, far, INSN_JMP, out);
	case 0x9a: return c->mode64 || insn_finish(c, far, INSN_CALL, out);
	case 0xc3: case 0xcb: return insn_finish(c, 0, INSN_RET, out);
	case 0xc2: case 0xca: return insn_finish(c, 2, INSN_RET, out);
	case 0xcc: case 0xcf: case 0xf1: return insn_finish(c, 0, INSN_OTHER_BRANCH, out);
	case 0xcd: return insn_finish(c, 1, INSN_OTHER_BRANCH, out);
	case 0xce: return c->mode64 || insn_finish(c, 0, INSN_OTHER_BRANCH, out);
	case 0xff: return insn_group5(c, out);
	default: break;
	}
	if (c->rep && insn_is_string_op(op)) {
		out->rep_string = true;
		out->len = (uint8_t)c->i;
	}
	return true;
}

/* The opcode view (struct insn_opcode) of a cursor just past the first opcode byte op. */
static bool insn_opcode_at(const struct insn_cursor *c, uint8_t op, struct insn_opcode *o)
{
	struct insn_cursor k = *c;
	uint8_t b;

	*o = (struct insn_opcode){ .map = INSN_MAP_ONE, .op = op, .pfx = k.pfx, .rex = k.rex };
	if (op == 0x0f) {
		if (!insn_byte(&k, &o->op))
			return false;
		o->map = INSN_MAP_0F;
	}
	o->has_modrm = insn_byte(&k, &b);
	o->modrm = o->has_modrm ? b : 0;
	return true;
}

bool insn_opcode(const uint8_t *bytes, size_t n, bool mode64, struct insn_opcode *out)
{
	struct insn_cursor c = { .p = bytes, .n = n, .mode64 = mode64, .seg = -1 };
	uint8_t op;

	return insn_prefixes(&c, &op) && insn_opcode_at(&c, op, out);
}

bool insn_classify(const uint8_t *bytes, size_t n, bool mode64, struct insn_class *out)
{
	struct insn_cursor c = { .p = bytes, .n = n, .mode64 = mode64, .seg = -1 };
	struct insn_opcode o;
	uint8_t op;

	*out = (struct insn_class){ .branch = INSN_NOT_BRANCH };
	if (!insn_prefixes(&c, &op))
		return false;
	if (insn_opcode_at(&c, op, &o))
		out->simd = (uint8_t)(insn_simd_class(&o) | (unsigned)insn_simd_move(&o) << 4);
	return insn_one_byte(&c, op, out);
}

const char *insn_branch_name(enum insn_branch b)
{
	static const char *const names[INSN_NBRANCH_KINDS] = {
		[INSN_NOT_BRANCH] = "-",	   [INSN_COND] = "cond",
		[INSN_JMP] = "jmp",		   [INSN_JMP_INDIRECT] = "jmp-ind",
		[INSN_CALL] = "call",		   [INSN_CALL_INDIRECT] = "call-ind",
		[INSN_RET] = "ret",		   [INSN_OTHER_BRANCH] = "other",
	};

	return (unsigned)b < INSN_NBRANCH_KINDS ? names[b] : "?";
}

/*
 * ---- memory operands ---------------------------------------------------------------
 *
 * insn_mem_decode() walks the same prefixes, then looks the opcode up in
 * insn_map1[] (one-byte map, SDM Vol. 2 Table A-2) or insn_map2[] (0F map,
 * Table A-3); ModRM-selected groups (Table A-6) in insn_groups[]. A row
 * says whether a ModRM byte follows, what the r/m operand does to memory
 * when it is a memory operand (load, store, both), the operand size, the
 * immediate's size and any implicit access (stack, string, moffs). Rows
 * left out are unknown. Known:
 *  - ALU 00-3D (ADD OR ADC SBB AND SUB XOR CMP; CMP only reads), TEST
 *    84/85/A8/A9, XCHG 86/87, MOV 88-8C/8E, C6/C7 /0, A0-A3 (moffs), B0-BF,
 *    LEA 8D (no access), MOVSXD 63, IMUL 69/6B/0F AF, groups 1 (80-83),
 *    2 (C0/C1/D0-D3), 3 (F6/F7), 4 (FE), 5 (FF /0 /1 /2 /4 /6), 1A (8F /0),
 *    8 (0F BA), 9 (0F C7 /1 CMPXCHG8B/16B);
 *  - stack: PUSH/POP reg (50-5F), PUSH imm (68/6A), PUSHF/POPF (9C/9D),
 *    CALL E8 and FF /2, RET C3/C2, LEAVE C9, PUSH/POP r/m (FF /6, 8F /0);
 *  - strings: MOVS CMPS STOS LODS SCAS (A4-A7, AA-AF), one iteration;
 *  - 0F: CMOVcc (the operand is read whatever the condition, SDM CMOVcc),
 *    SETcc, MOVZX/MOVSX, BSF/BSR, CMPXCHG, XADD, SHLD/SHRD, NOP r/m
 *    (0F 1F: no access), BSWAP, Jcc, RDTSC, CPUID;
 *  - no memory: Jcc/JMP/LOOP, NOP/PAUSE/XCHG reg, CBW/CWD, SAHF/LAHF,
 *    HLT, CMC/CLC/STC/CLI/STI/CLD/STD, INC/DEC reg (40-4F, 32-bit code).
 * Unknown on purpose, but with their length (status unknown, len set):
 * INT n/INT3/INT1/IRET/SYSCALL/SYSRET/SYSENTER/SYSEXIT and far transfers
 * (their stack accesses belong to another privilege level or segment),
 * INS/OUTS/IN/OUT, ENTER, XLAT, BT/BTS/BTR/BTC with a register bit offset
 * and a memory operand (the bit offset moves the address), x87 memory
 * forms (register forms, D8-DF with mod 11, access nothing), UD2,
 * system instructions (0F 00/01/06-09/20-23/30/32/33, prefetches, group
 * 15) and PUSH/POP FS/GS. MMX, SSE and SSE2 (0F 10-17, 28-2F, 50-7F, C2,
 * C4-C6, D0-FE): a register form has no access, a memory form is unknown
 * with its length (MASKMOVQ/MASKMOVDQU, 0F F7, stores through rDI: unknown
 * with its length in both forms). Unknown with no length: every other opcode (0F 38/3A,
 * VEX, ...), and invalid group rows.
 *
 * Addresses (SDM Vol. 2 2.1.5, Tables 2-1 to 2-3): base + index * scale +
 * displacement, RIP-relative from the next instruction (mod 00 r/m 101 in
 * 64-bit mode), truncated to the address size (64, 32 with 67, or 16 with
 * 67 in 32-bit code, Table 2-1 forms); plus the segment base (default DS,
 * SS for RSP/RBP-based forms, or the override). String destinations always
 * use ES (no override). POP r/m with an RSP base uses RSP after the pop
 * (SDM POP: "If the destination operand uses ESP as a base register, the
 * address is computed after the POP has incremented ESP").
 */

enum insn_osz {
	OSZ_V,			/* 16/32/64 by 66 and REX.W */
	OSZ_B,			/* byte */
	OSZ_W,			/* word */
	OSZ_D,			/* dword */
	OSZ_STACK,		/* 64 (16 with 66) in 64-bit mode, else 32 (16 with 66) */
	OSZ_NEAR,		/* near branch target: 64 in 64-bit mode, else as OSZ_V */
};

enum insn_imm { IMM_NONE, IMM_B, IMM_W, IMM_Z, IMM_V, IMM_REL8, IMM_REL, IMM_ENTER };

enum insn_form {
	F_RM,			/* only the r/m operand, as .acc says (or nothing) */
	F_PUSH, F_POP,		/* implicit stack store / load */
	F_PUSH_RM, F_POP_RM,	/* FF /6, 8F /0 */
	F_CALL, F_CALL_RM,	/* E8; FF /2 */
	F_JMP_RM,		/* FF /4: loads the target */
	F_RET, F_LEAVE,
	F_MOVS, F_CMPS, F_STOS, F_LODS, F_SCAS,
	F_MOFFS,		/* A0-A3: absolute address of address size */
	F_BT_REG,		/* memory form unknown */
	F_REG_ONLY,		/* x87, MMX/SSE: register form no access, memory form unknown */
	F_CX8,			/* CMPXCHG8B/16B: 8 or 16 bytes */
	F_NT_STORE,		/* non-temporal stores: MOVNTI, MOVNTPS/PD, MOVNTQ/DQ, MASKMOVQ/DQU */
};

enum insn_group {
	G_NONE, G_1, G_1A, G_2, G_3B, G_3V, G_4, G_5, G_8, G_9, G_11, INSN_NGROUPS
};

struct insn_desc {
	bool valid;
	bool len_only;		/* length known, memory accesses not modelled: unknown with len */
	bool modrm;
	uint8_t acc;		/* enum insn_access of a memory r/m operand; 0 = no access */
	uint8_t osz;		/* enum insn_osz */
	uint8_t imm;		/* enum insn_imm */
	uint8_t form;		/* enum insn_form */
	uint8_t group;		/* enum insn_group: the row for ModRM.reg overrides acc, imm, form */
};

#define D_NONE			{ .valid = true }
#define D_IMM(i)		{ .valid = true, .imm = (i) }
#define D_RM(a, s)		{ .valid = true, .modrm = true, .acc = (a), .osz = (s) }
#define D_RMI(a, s, i)		{ .valid = true, .modrm = true, .acc = (a), .osz = (s), .imm = (i) }
#define D_GRP(g, s, i)		{ .valid = true, .modrm = true, .osz = (s), .imm = (i), .group = (g) }
#define D_FORM(f, s)		{ .valid = true, .osz = (s), .form = (f) }
#define D_LEN(i)		{ .valid = true, .len_only = true, .imm = (i) }
#define D_LENRM(i)		{ .valid = true, .len_only = true, .modrm = true, .imm = (i) }
#define D_REGONLY(i)		{ .valid = true, .modrm = true, .imm = (i), .form = F_REG_ONLY }
#define D_NT			{ .valid = true, .modrm = true, .acc = INSN_STORE, .osz = OSZ_V, \
				  .form = F_NT_STORE }
#define D_ALU(b, a)		[(b)] = D_RM(a, OSZ_B), [(b) + 1] = D_RM(a, OSZ_V), \
				[(b) + 2] = D_RM(INSN_LOAD, OSZ_B), [(b) + 3] = D_RM(INSN_LOAD, OSZ_V), \
				[(b) + 4] = D_IMM(IMM_B), [(b) + 5] = D_IMM(IMM_Z)

static const struct insn_desc insn_map1[256] = {
	D_ALU(0x00, INSN_LOAD_STORE), D_ALU(0x08, INSN_LOAD_STORE),	/* ADD, OR */
	D_ALU(0x10, INSN_LOAD_STORE), D_ALU(0x18, INSN_LOAD_STORE),	/* ADC, SBB */
	D_ALU(0x20, INSN_LOAD_STORE), D_ALU(0x28, INSN_LOAD_STORE),	/* AND, SUB */
	D_ALU(0x30, INSN_LOAD_STORE), D_ALU(0x38, INSN_LOAD),		/* XOR, CMP */
	[0x40 ... 0x4f] = D_NONE,		/* INC/DEC reg (32-bit code; REX in 64-bit) */
	[0x50 ... 0x57] = D_FORM(F_PUSH, OSZ_STACK),
	[0x58 ... 0x5f] = D_FORM(F_POP, OSZ_STACK),
	[0x63] = D_RM(INSN_LOAD, OSZ_D),	/* MOVSXD r, r/m32 */
	[0x68] = { .valid = true, .osz = OSZ_STACK, .imm = IMM_Z, .form = F_PUSH },
	[0x69] = D_RMI(INSN_LOAD, OSZ_V, IMM_Z),
	[0x6a] = { .valid = true, .osz = OSZ_STACK, .imm = IMM_B, .form = F_PUSH },
	[0x6b] = D_RMI(INSN_LOAD, OSZ_V, IMM_B),
	[0x6c ... 0x6f] = D_LEN(IMM_NONE),	/* INS/OUTS */
	[0x70 ... 0x7f] = D_IMM(IMM_REL8),
	[0x80] = D_GRP(G_1, OSZ_B, IMM_B), [0x81] = D_GRP(G_1, OSZ_V, IMM_Z),
	[0x83] = D_GRP(G_1, OSZ_V, IMM_B),
	[0x84] = D_RM(INSN_LOAD, OSZ_B), [0x85] = D_RM(INSN_LOAD, OSZ_V),
	[0x86] = D_RM(INSN_LOAD_STORE, OSZ_B), [0x87] = D_RM(INSN_LOAD_STORE, OSZ_V),
	[0x88] = D_RM(INSN_STORE, OSZ_B), [0x89] = D_RM(INSN_STORE, OSZ_V),
	[0x8a] = D_RM(INSN_LOAD, OSZ_B), [0x8b] = D_RM(INSN_LOAD, OSZ_V),
	[0x8c] = D_RM(INSN_STORE, OSZ_W),	/* MOV r/m16, Sreg */
	[0x8d] = D_RM(0, OSZ_V),		/* LEA: address only */
	[0x8e] = D_RM(INSN_LOAD, OSZ_W),	/* MOV Sreg, r/m16 */
	[0x8f] = D_GRP(G_1A, OSZ_STACK, IMM_NONE),
	[0x90 ... 0x99] = D_NONE,		/* NOP/PAUSE, XCHG reg, CBW/CWD */
	[0x9c] = D_FORM(F_PUSH, OSZ_STACK), [0x9d] = D_FORM(F_POP, OSZ_STACK),
	[0x9e] = D_NONE, [0x9f] = D_NONE,	/* SAHF, LAHF */
	[0xa0] = { .valid = true, .acc = INSN_LOAD, .osz = OSZ_B, .form = F_MOFFS },
	[0xa1] = { .valid = true, .acc = INSN_LOAD, .osz = OSZ_V, .form = F_MOFFS },
	[0xa2] = { .valid = true, .acc = INSN_STORE, .osz = OSZ_B, .form = F_MOFFS },
	[0xa3] = { .valid = true, .acc = INSN_STORE, .osz = OSZ_V, .form = F_MOFFS },
	[0xa4] = D_FORM(F_MOVS, OSZ_B), [0xa5] = D_FORM(F_MOVS, OSZ_V),
	[0xa6] = D_FORM(F_CMPS, OSZ_B), [0xa7] = D_FORM(F_CMPS, OSZ_V),
	[0xa8] = D_IMM(IMM_B), [0xa9] = D_IMM(IMM_Z),
	[0xaa] = D_FORM(F_STOS, OSZ_B), [0xab] = D_FORM(F_STOS, OSZ_V),
	[0xac] = D_FORM(F_LODS, OSZ_B), [0xad] = D_FORM(F_LODS, OSZ_V),
	[0xae] = D_FORM(F_SCAS, OSZ_B), [0xaf] = D_FORM(F_SCAS, OSZ_V),
	[0xb0 ... 0xb7] = D_IMM(IMM_B), [0xb8 ... 0xbf] = D_IMM(IMM_V),
	[0xc0] = D_GRP(G_2, OSZ_B, IMM_B), [0xc1] = D_GRP(G_2, OSZ_V, IMM_B),
	[0xc2] = { .valid = true, .osz = OSZ_NEAR, .imm = IMM_W, .form = F_RET },
	[0xc3] = D_FORM(F_RET, OSZ_NEAR),
	[0xc6] = D_GRP(G_11, OSZ_B, IMM_B), [0xc7] = D_GRP(G_11, OSZ_V, IMM_Z),
	[0xc8] = D_LEN(IMM_ENTER),
	[0xc9] = D_FORM(F_LEAVE, OSZ_STACK),
	[0xca] = D_LEN(IMM_W), [0xcb] = D_LEN(IMM_NONE),	/* far RET */
	[0xcc] = D_LEN(IMM_NONE), [0xcd] = D_LEN(IMM_B), [0xcf] = D_LEN(IMM_NONE),	/* INT3, INT n, IRET */
	[0xd0] = D_GRP(G_2, OSZ_B, IMM_NONE), [0xd1] = D_GRP(G_2, OSZ_V, IMM_NONE),
	[0xd2] = D_GRP(G_2, OSZ_B, IMM_NONE), [0xd3] = D_GRP(G_2, OSZ_V, IMM_NONE),
	[0xd7] = D_LEN(IMM_NONE),		/* XLAT */
	[0xd8 ... 0xdf] = D_REGONLY(IMM_NONE),	/* x87: register forms access no memory */
	[0xe0 ... 0xe3] = D_IMM(IMM_REL8),	/* LOOPcc, JrCXZ */
	[0xe4 ... 0xe7] = D_LEN(IMM_B), [0xec ... 0xef] = D_LEN(IMM_NONE),	/* IN, OUT */
	[0xe8] = { .valid = true, .osz = OSZ_NEAR, .imm = IMM_REL, .form = F_CALL },
	[0xe9] = D_IMM(IMM_REL), [0xeb] = D_IMM(IMM_REL8),
	[0xf1] = D_LEN(IMM_NONE),		/* INT1 */
	[0xf4] = D_NONE, [0xf5] = D_NONE,	/* HLT, CMC */
	[0xf6] = D_GRP(G_3B, OSZ_B, IMM_NONE), [0xf7] = D_GRP(G_3V, OSZ_V, IMM_NONE),
	[0xf8 ... 0xfd] = D_NONE,		/* CLC STC CLI STI CLD STD */
	[0xfe] = D_GRP(G_4, OSZ_B, IMM_NONE), [0xff] = D_GRP(G_5, OSZ_V, IMM_NONE),
};

static const struct insn_desc insn_map2[256] = {
	[0x00 ... 0x01] = D_LENRM(IMM_NONE),	/* groups 6, 7 (LGDT, LIDT, SWAPGS...) */
	[0x05 ... 0x09] = D_LEN(IMM_NONE),	/* SYSCALL CLTS SYSRET INVD WBINVD */
	[0x0b] = D_LEN(IMM_NONE),		/* UD2 */
	[0x0d] = D_LENRM(IMM_NONE), [0x18] = D_LENRM(IMM_NONE),	/* prefetches */
	[0x1e] = D_RM(0, OSZ_V),		/* NOP r/m (ENDBR64 with F3) */
	[0x1f] = D_RM(0, OSZ_V),		/* NOP r/m: no access */
	[0x20 ... 0x23] = D_LENRM(IMM_NONE),	/* MOV to/from CR, DR */
	[0x30] = D_LEN(IMM_NONE), [0x32 ... 0x35] = D_LEN(IMM_NONE),	/* WRMSR RDMSR RDPMC SYSENTER SYSEXIT */
	[0xa0 ... 0xa1] = D_LEN(IMM_NONE), [0xa8 ... 0xa9] = D_LEN(IMM_NONE),	/* PUSH/POP FS, GS */
	[0xae] = D_LENRM(IMM_NONE),		/* group 15: FXSAVE, fences */
	[0xb8] = D_RM(INSN_LOAD, OSZ_V),	/* POPCNT (F3) */
	[0x31] = D_NONE, [0xa2] = D_NONE,	/* RDTSC, CPUID */
	[0x40 ... 0x4f] = D_RM(INSN_LOAD, OSZ_V),	/* CMOVcc */
	[0x80 ... 0x8f] = D_IMM(IMM_REL),
	[0x90 ... 0x9f] = D_RM(INSN_STORE, OSZ_B),	/* SETcc */
	[0xa3] = { .valid = true, .modrm = true, .osz = OSZ_V, .form = F_BT_REG },
	[0xab] = { .valid = true, .modrm = true, .osz = OSZ_V, .form = F_BT_REG },
	[0xb3] = { .valid = true, .modrm = true, .osz = OSZ_V, .form = F_BT_REG },
	[0xbb] = { .valid = true, .modrm = true, .osz = OSZ_V, .form = F_BT_REG },
	[0xa4] = D_RMI(INSN_LOAD_STORE, OSZ_V, IMM_B), [0xa5] = D_RM(INSN_LOAD_STORE, OSZ_V),
	[0xac] = D_RMI(INSN_LOAD_STORE, OSZ_V, IMM_B), [0xad] = D_RM(INSN_LOAD_STORE, OSZ_V),
	[0xaf] = D_RM(INSN_LOAD, OSZ_V),	/* IMUL r, r/m */
	[0xb0] = D_RM(INSN_LOAD_STORE, OSZ_B), [0xb1] = D_RM(INSN_LOAD_STORE, OSZ_V),
	[0xb6] = D_RM(INSN_LOAD, OSZ_B), [0xb7] = D_RM(INSN_LOAD, OSZ_W),	/* MOVZX */
	[0xba] = D_GRP(G_8, OSZ_V, IMM_B),
	[0xbc] = D_RM(INSN_LOAD, OSZ_V), [0xbd] = D_RM(INSN_LOAD, OSZ_V),	/* BSF, BSR */
	[0xbe] = D_RM(INSN_LOAD, OSZ_B), [0xbf] = D_RM(INSN_LOAD, OSZ_W),	/* MOVSX */
	/* MMX, SSE, SSE2 (Table A-3; the mandatory prefix 66/F2/F3 only picks the form) */
	[0x10 ... 0x17] = D_REGONLY(IMM_NONE), [0x28 ... 0x2a] = D_REGONLY(IMM_NONE),
	[0x2c ... 0x2f] = D_REGONLY(IMM_NONE),
	[0x50 ... 0x6f] = D_REGONLY(IMM_NONE), [0x70 ... 0x73] = D_REGONLY(IMM_B),	/* PSHUF*, shifts by imm8 */
	[0x74 ... 0x76] = D_REGONLY(IMM_NONE), [0x77] = D_NONE,	/* PCMPEQ*, EMMS */
	[0x7e ... 0x7f] = D_REGONLY(IMM_NONE), [0xc2] = D_REGONLY(IMM_B),	/* MOVD/MOVQ, CMPPS */
	[0xc4 ... 0xc6] = D_REGONLY(IMM_B), [0xd0 ... 0xe6] = D_REGONLY(IMM_NONE),
	[0xe8 ... 0xf6] = D_REGONLY(IMM_NONE),
	[0xf7] = D_NT,				/* MASKMOVQ/MASKMOVDQU: an implicit store at DS:rDI */
	[0x2b] = D_NT, [0xe7] = D_NT,		/* MOVNTPS/MOVNTPD, MOVNTQ/MOVNTDQ */
	[0xc3] = D_NT,				/* MOVNTI */
	[0xf8 ... 0xfe] = D_REGONLY(IMM_NONE),
	[0xc0] = D_RM(INSN_LOAD_STORE, OSZ_B), [0xc1] = D_RM(INSN_LOAD_STORE, OSZ_V),	/* XADD */
	[0xc7] = D_GRP(G_9, OSZ_V, IMM_NONE),
	[0xc8 ... 0xcf] = D_NONE,		/* BSWAP */
};

/* Group rows by ModRM.reg (Table A-6); imm here adds to the opcode row's (only group 3 has one). */
#define G_ROW(a)		{ .valid = true, .acc = (a) }
#define G_ROWI(a, i)		{ .valid = true, .acc = (a), .imm = (i) }
#define G_ROWF(a, f)		{ .valid = true, .acc = (a), .form = (f) }
#define G_LEN			{ .valid = true, .len_only = true }
#define RMW			INSN_LOAD_STORE

static const struct insn_desc insn_groups[INSN_NGROUPS][8] = {
	[G_1] = { G_ROW(RMW), G_ROW(RMW), G_ROW(RMW), G_ROW(RMW),
		  G_ROW(RMW), G_ROW(RMW), G_ROW(RMW), G_ROW(INSN_LOAD) },	/* /7 CMP */
	[G_1A] = { [0] = G_ROWF(INSN_STORE, F_POP_RM) },
	[G_2] = { G_ROW(RMW), G_ROW(RMW), G_ROW(RMW), G_ROW(RMW),
		  G_ROW(RMW), G_ROW(RMW), G_ROW(RMW), G_ROW(RMW) },
	[G_3B] = { G_ROWI(INSN_LOAD, IMM_B), G_ROWI(INSN_LOAD, IMM_B), G_ROW(RMW), G_ROW(RMW),
		   G_ROW(INSN_LOAD), G_ROW(INSN_LOAD), G_ROW(INSN_LOAD), G_ROW(INSN_LOAD) },
	[G_3V] = { G_ROWI(INSN_LOAD, IMM_Z), G_ROWI(INSN_LOAD, IMM_Z), G_ROW(RMW), G_ROW(RMW),
		   G_ROW(INSN_LOAD), G_ROW(INSN_LOAD), G_ROW(INSN_LOAD), G_ROW(INSN_LOAD) },
	[G_4] = { G_ROW(RMW), G_ROW(RMW) },
	[G_5] = { [0] = G_ROW(RMW), [1] = G_ROW(RMW), [2] = G_ROWF(INSN_LOAD, F_CALL_RM),
		  [3] = G_LEN, [4] = G_ROWF(INSN_LOAD, F_JMP_RM), [5] = G_LEN,
		  [6] = G_ROWF(INSN_LOAD, F_PUSH_RM) },	/* /3 /5: far CALL/JMP */
	[G_8] = { [4] = G_ROW(INSN_LOAD), [5] = G_ROW(RMW), [6] = G_ROW(RMW), [7] = G_ROW(RMW) },
	[G_9] = { [1] = G_ROWF(RMW, F_CX8) },
	[G_11] = { [0] = G_ROW(INSN_STORE) },
};

/* A decoded ModRM memory operand, before RIP-relative resolution. */
struct insn_ea {
	bool mem;		/* mod != 3 */
	bool rip_rel;
	int8_t base, index;	/* enum insn_reg, or -1 */
	uint8_t scale;
	int64_t disp;
	int8_t seg;		/* default segment (DS or SS) */
	bool bp16, bx16, si16, di16;	/* 16-bit forms (Table 2-1) */
};

struct insn_dec {
	struct insn_cursor c;
	const struct insn_regs *regs;
	struct insn_desc d;	/* opcode row merged with its group row */
	struct insn_ea ea;
	uint8_t modrm;
	uint8_t osz_bytes;	/* operand size in bytes */
	uint64_t moffs;
	struct insn_mem *out;
	bool map2;		/* the opcode is in the 0F map */
	uint8_t op;
};

/* Little-endian immediate/displacement of n bytes, sign-extended. */
static bool insn_read_signed(struct insn_cursor *c, unsigned n, int64_t *v)
{
	uint64_t u = 0;
	uint8_t b;

	for (unsigned k = 0; k < n; k++) {
		if (!insn_byte(c, &b))
			return false;
		u |= (uint64_t)b << (8 * k);
	}
	if (n < 8 && (u >> (8 * n - 1)) & 1)
		u |= ~UINT64_C(0) << (8 * n);
	*v = (int64_t)u;
	return true;
}

static unsigned insn_addr_bytes(const struct insn_cursor *c)
{
	if (c->mode64)
		return c->addr32 ? 4 : 8;
	return c->addr16 ? 2 : 4;
}

static uint8_t insn_operand_bytes(const struct insn_cursor *c, enum insn_osz osz)
{
	bool w = (c->rex & 0x08) != 0;

	switch (osz) {
	case OSZ_B: return 1;
	case OSZ_W: return 2;
	case OSZ_D: return 4;
	case OSZ_STACK: return c->opsize16 ? 2 : c->mode64 ? 8 : 4;
	case OSZ_NEAR: if (c->mode64) return 8;	/* fall through */
	default: return w ? 8 : c->opsize16 ? 2 : 4;	/* OSZ_V */
	}
}

/* Table 2-1: 16-bit ModRM forms. */
static bool insn_ea16(struct insn_cursor *c, unsigned mod, unsigned rm, struct insn_ea *ea)
{
	static const uint8_t forms[8] = { 0x5, 0x9, 0x6, 0xa, 0x1, 0x8, 0x2, 0x4 };	/* bit0 SI, bit1 BP, bit2 BX, bit3 DI */
	unsigned f = forms[rm];

	ea->si16 = f & 1;
	ea->bp16 = f & 2;
	ea->bx16 = f & 4;
	ea->di16 = f & 8;
	if (mod == 0 && rm == 6) {
		ea->bp16 = false;
		return insn_read_signed(c, 2, &ea->disp);
	}
	ea->seg = ea->bp16 ? INSN_SS : INSN_DS;
	return mod == 0 || insn_read_signed(c, mod == 1 ? 1 : 2, &ea->disp);
}

/* Tables 2-2 and 2-3 (with REX.B/REX.X), and RIP-relative in 64-bit mode. */
static bool insn_ea32(struct insn_cursor *c, unsigned mod, unsigned rm, struct insn_ea *ea)
{
	uint8_t sib;

	if (rm == 4) {
		if (!insn_byte(c, &sib))
			return false;
		unsigned idx = ((sib >> 3) & 7) | ((c->rex & 0x02) ? 8 : 0);

		ea->index = idx == INSN_RSP ? -1 : (int8_t)idx;
		ea->scale = (uint8_t)(1u << (sib >> 6));
		if (mod == 0 && (sib & 7) == 5)
			return insn_read_signed(c, 4, &ea->disp);	/* no base */
		ea->base = (int8_t)((sib & 7) | ((c->rex & 0x01) ? 8 : 0));
	} else if (mod == 0 && rm == 5) {
		ea->rip_rel = c->mode64;
		return insn_read_signed(c, 4, &ea->disp);
	} else {
		ea->base = (int8_t)(rm | ((c->rex & 0x01) ? 8 : 0));
	}
	if (ea->base == INSN_RSP || ea->base == INSN_RBP)
		ea->seg = INSN_SS;
	return mod == 0 || insn_read_signed(c, mod == 1 ? 1 : 4, &ea->disp);
}

static bool insn_modrm_ea(struct insn_cursor *c, uint8_t modrm, struct insn_ea *ea)
{
	unsigned mod = modrm >> 6, rm = modrm & 7;

	*ea = (struct insn_ea){ .mem = mod != 3, .base = -1, .index = -1, .scale = 1, .seg = INSN_DS };
	if (mod == 3)
		return true;
	return c->addr16 ? insn_ea16(c, mod, rm, ea) : insn_ea32(c, mod, rm, ea);
}

static uint64_t insn_trunc(uint64_t v, unsigned bytes)
{
	return bytes >= 8 ? v : v & ((UINT64_C(1) << (8 * bytes)) - 1);
}

/* Segment base + offset, as the mode adds them (64-bit mode: FS and GS only). */
static uint64_t insn_linear(const struct insn_dec *x, int seg, uint64_t off)
{
	uint64_t base = x->regs->seg_base[seg];

	if (x->c.mode64)
		return seg == INSN_FS || seg == INSN_GS ? base + off : off;
	return (uint32_t)(base + off);
}

static int insn_seg_of(const struct insn_dec *x, int dflt)
{
	return x->c.seg >= 0 ? x->c.seg : dflt;
}

/* Effective address of the ModRM operand; rsp_adjust is added to an RSP base (POP r/m). */
static uint64_t insn_ea_addr(const struct insn_dec *x, int64_t rsp_adjust)
{
	const struct insn_ea *ea = &x->ea;
	const uint64_t *r = x->regs->gpr;
	unsigned ab = insn_addr_bytes(&x->c);
	uint64_t off = (uint64_t)ea->disp;

	if (x->c.addr16) {
		off += (ea->bx16 ? r[INSN_RBX] : 0) + (ea->bp16 ? r[INSN_RBP] : 0) +
		       (ea->si16 ? r[INSN_RSI] : 0) + (ea->di16 ? r[INSN_RDI] : 0);
	} else if (ea->rip_rel) {
		off += x->regs->rip + x->c.i;
	} else {
		if (ea->base >= 0)
			off += r[ea->base] + (ea->base == INSN_RSP ? (uint64_t)rsp_adjust : 0);
		if (ea->index >= 0)
			off += insn_trunc(r[ea->index], ab) * ea->scale;
	}
	return insn_linear(x, insn_seg_of(x, ea->seg), insn_trunc(off, ab));
}

static void insn_add_op(struct insn_dec *x, uint64_t addr, unsigned size, enum insn_access a)
{
	struct insn_mem *o = x->out;

	o->op[o->nops++] = (struct insn_mem_op){ .addr = addr, .size = (uint16_t)size, .access = a };
}

/* The stack slot at RSP + delta (SS, stack address size). */
static uint64_t insn_stack(const struct insn_dec *x, int64_t delta)
{
	unsigned sb = x->c.mode64 ? 8 : 4;	/* 32-bit code: a 32-bit stack assumed (SS.B = 1) */

	return insn_linear(x, INSN_SS, insn_trunc(x->regs->gpr[INSN_RSP] + (uint64_t)delta, sb));
}

static size_t insn_imm_bytes(const struct insn_dec *x, enum insn_imm imm)
{
	switch (imm) {
	case IMM_B: case IMM_REL8: return 1;
	case IMM_W: return 2;
	case IMM_ENTER: return 3;	/* imm16, imm8 */
	case IMM_Z: return x->osz_bytes == 2 ? 2 : 4;
	case IMM_V: return x->osz_bytes;
	case IMM_REL: return insn_rel_size(&x->c);
	default: return 0;
	}
}

/* The count register of a REP prefix, at the address size (SDM REP: CX, ECX or RCX). */
static uint64_t insn_rep_count(const struct insn_dec *x)
{
	return insn_trunc(x->regs->gpr[INSN_RCX], insn_addr_bytes(&x->c));
}

/* One iteration of a string instruction: source DS:RSI (overridable), destination ES:RDI. */
static void insn_string(struct insn_dec *x, enum insn_form f)
{
	unsigned ab = insn_addr_bytes(&x->c), sz = x->osz_bytes;
	uint64_t src = insn_linear(x, insn_seg_of(x, INSN_DS), insn_trunc(x->regs->gpr[INSN_RSI], ab));
	uint64_t dst = insn_linear(x, INSN_ES, insn_trunc(x->regs->gpr[INSN_RDI], ab));

	if (x->c.rep && insn_rep_count(x) == 0)
		return;			/* REP with a zero count touches nothing */
	if (f == F_MOVS || f == F_CMPS || f == F_LODS)
		insn_add_op(x, src, sz, INSN_LOAD);
	if (f == F_MOVS || f == F_STOS)
		insn_add_op(x, dst, sz, INSN_STORE);
	if (f == F_CMPS || f == F_SCAS)
		insn_add_op(x, dst, sz, INSN_LOAD);
}

/*
 * The non-temporal stores (SDM Vol. 2: MOVNTI, MOVNTPS, MOVNTPD, MOVNTQ,
 * MOVNTDQ, MASKMOVQ, MASKMOVDQU), marked for the write-combining buffers
 * (p4_insn.nt, pmu/model/p4_sbuf.c): MOVNTI stores the operand size (4, or
 * 8 with REX.W); 0F 2B 16 bytes; 0F E7 8 (MOVNTQ) or 16 with 66
 * (MOVNTDQ); MASKMOVQ 8 and MASKMOVDQU 16 bytes at DS:rDI (its register
 * form; every byte counted as written, the mask's value being unknown
 * here). Their other forms are #UD: unknown.
 */
static bool insn_nt_store(struct insn_dec *x)
{
	bool x66 = x->c.pfx == 0x66, mem = x->ea.mem;
	unsigned ab = insn_addr_bytes(&x->c);

	x->out->core.nt = 1;
	switch (x->op) {
	case 0xc3:
		if (mem)
			insn_add_op(x, insn_ea_addr(x, 0), x->osz_bytes == 8 ? 8 : 4, INSN_STORE);
		return mem;
	case 0xf7:
		if (!mem)
			insn_add_op(x, insn_linear(x, insn_seg_of(x, INSN_DS),
						   insn_trunc(x->regs->gpr[INSN_RDI], ab)),
				    x66 ? 16 : 8, INSN_STORE);
		return !mem;
	default:		/* 2B, E7 */
		if (mem)
			insn_add_op(x, insn_ea_addr(x, 0), x->op == 0xe7 && !x66 ? 8 : 16, INSN_STORE);
		return mem;
	}
}

/* Implicit stack accesses and the r/m operand, in execution order. False: unknown form. */
static bool insn_operands(struct insn_dec *x)
{
	enum insn_form f = (enum insn_form)x->d.form;
	unsigned sz = x->osz_bytes;
	unsigned near = insn_operand_bytes(&x->c, OSZ_NEAR);
	unsigned stk = insn_operand_bytes(&x->c, OSZ_STACK);
	bool mem = x->ea.mem;

	switch (f) {
	case F_PUSH: insn_add_op(x, insn_stack(x, -(int64_t)sz), sz, INSN_STORE); return true;
	case F_POP: insn_add_op(x, insn_stack(x, 0), sz, INSN_LOAD); return true;
	case F_RET: insn_add_op(x, insn_stack(x, 0), near, INSN_LOAD); return true;
	case F_CALL: insn_add_op(x, insn_stack(x, -(int64_t)near), near, INSN_STORE); return true;
	case F_LEAVE:
		insn_add_op(x, insn_linear(x, INSN_SS, x->regs->gpr[INSN_RBP]), sz, INSN_LOAD);
		return true;
	case F_MOVS: case F_CMPS: case F_STOS: case F_LODS: case F_SCAS:
		insn_string(x, f);
		return true;
	case F_MOFFS:
		insn_add_op(x, insn_linear(x, insn_seg_of(x, INSN_DS), x->moffs), sz, x->d.acc);
		return true;
	case F_CALL_RM:
		if (mem)
			insn_add_op(x, insn_ea_addr(x, 0), near, INSN_LOAD);
		insn_add_op(x, insn_stack(x, -(int64_t)near), near, INSN_STORE);
		return true;
	case F_JMP_RM:
		if (mem)
			insn_add_op(x, insn_ea_addr(x, 0), near, INSN_LOAD);
		return true;
	case F_PUSH_RM:
		if (mem)
			insn_add_op(x, insn_ea_addr(x, 0), stk, INSN_LOAD);
		insn_add_op(x, insn_stack(x, -(int64_t)stk), stk, INSN_STORE);
		return true;
	case F_POP_RM:
		insn_add_op(x, insn_stack(x, 0), stk, INSN_LOAD);
		if (mem)
			insn_add_op(x, insn_ea_addr(x, stk), stk, INSN_STORE);
		return true;
	case F_BT_REG:
	case F_REG_ONLY:
		return !mem;		/* memory form: the bit offset moves the address */
	case F_CX8:
		if (!mem)
			return false;	/* register form is #UD */
		insn_add_op(x, insn_ea_addr(x, 0), (x->c.rex & 0x08) ? 16 : 8, INSN_LOAD_STORE);
		return true;
	case F_NT_STORE:
		return insn_nt_store(x);
	default:		/* F_RM */
		if (mem && x->d.acc)
			insn_add_op(x, insn_ea_addr(x, 0), sz, x->d.acc);
		return true;
	}
}

/* Opcode row (and group row), ModRM with its address bytes, immediates. */
static bool insn_mem_parse(struct insn_dec *x, uint8_t op, bool *known)
{
	struct insn_cursor *c = &x->c;
	const struct insn_desc *row = &insn_map1[op];
	size_t imm;

	*known = false;
	if (op == 0x0f) {
		if (!insn_byte(c, &op))
			return false;
		row = &insn_map2[op];
		x->map2 = true;
	}
	x->op = op;
	x->d = *row;
	if (!x->d.valid || (row == &insn_map1[0x63] && !c->mode64))
		return true;		/* unknown; 63 outside 64-bit mode is ARPL */
	if (x->d.modrm) {
		if (!insn_byte(c, &x->modrm) || !insn_modrm_ea(c, x->modrm, &x->ea))
			return false;
		if (x->d.group) {
			const struct insn_desc *g = &insn_groups[x->d.group][(x->modrm >> 3) & 7];

			if (!g->valid)
				return true;
			x->d.acc = g->acc;
			x->d.form = g->form;
			x->d.len_only = g->len_only;
			if (g->imm)
				x->d.imm = g->imm;
		}
	}
	x->osz_bytes = insn_operand_bytes(c, (enum insn_osz)x->d.osz);
	if (x->d.form == F_MOFFS) {
		int64_t v;

		if (!insn_read_signed(c, insn_addr_bytes(c), &v))
			return false;
		x->moffs = insn_trunc((uint64_t)v, insn_addr_bytes(c));
	}
	imm = insn_imm_bytes(x, (enum insn_imm)x->d.imm);
	if (!insn_skip(c, imm))
		return false;
	*known = true;
	return true;
}

/*
 * ---- the core's view: uop class and register operands ---------------------------
 *
 * insn_core() describes the decoded instruction for the timing model
 * (pmu/model/p4_core.c holds the latencies of each class): which
 * registers it reads and writes (general registers with REX, the flags,
 * the x87 stack as one register, XMM and MM registers), its address
 * registers, and the counting quirks of real parts ([WD] in p4_core.c):
 * instructions INSTR_RETIRED counts as two (FLDCW, FLDENV, FRSTOR, EMMS,
 * MASKMOVQ, CVTPD2PI/CVTTPD2PI with a memory operand, SFENCE, MFENCE) and
 * the microcode loads and stores the tagged-µop events count for x87 state,
 * unaligned SSE moves, fences, CPUID, CLFLUSH and POP FS/GS. What it does
 * not know stays class P4_U_OTHER (one ALU uop) reading the registers of
 * its operands.
 */
#define CR(n)		((uint8_t)(P4_R_GPR + (n)))

struct insn_core_ops {
	uint8_t reg, rm;		/* ModRM.reg and the r/m register (P4_R_NONE for memory) */
	unsigned sub;			/* ModRM.reg as a group's row */
	bool mem;
};

/*
 * The class and registers; a read of the destination or of the flags goes
 * into a free source slot, so that the core's step reads two sources and
 * tests no flag in the common case (P4_IF_DST_READ / P4_IF_FLAGS_IN stay
 * only where both slots are taken).
 */
static void insn_core_set(struct p4_insn *k, unsigned cls, uint8_t dst, uint8_t s0, uint8_t s1,
			  unsigned flags)
{
	uint8_t src[2] = { s0, s1 };

	if ((flags & P4_IF_DST_READ) && dst != P4_R_NONE) {
		unsigned i = src[1] == P4_R_NONE ? 1 : src[0] == P4_R_NONE ? 0 : 2;

		if (i < 2) {
			src[i] = dst;
			flags &= ~P4_IF_DST_READ;
		}
	} else {
		flags &= ~P4_IF_DST_READ;
	}
	if (flags & P4_IF_FLAGS_IN) {
		unsigned i = src[1] == P4_R_NONE ? 1 : src[0] == P4_R_NONE ? 0 : 2;

		if (i < 2) {
			src[i] = P4_R_FLAGS;
			flags &= ~P4_IF_FLAGS_IN;
		}
	}
	k->cls = (uint8_t)cls;
	k->dst = dst;
	k->src[0] = src[0];
	k->src[1] = src[1];
	k->flags = (uint8_t)(k->flags | flags);
}

/* ALU r/m, reg / reg, r/m / accumulator, imm (00-3F, group 1); sub: the operation (0 ADD ... 7 CMP). */
static void insn_core_alu(struct p4_insn *k, unsigned sub, uint8_t dst, uint8_t other)
{
	unsigned cls = sub == 2 || sub == 3 ? P4_U_ALU_CARRY : P4_U_ALU;
	unsigned fl = P4_IF_FLAGS_OUT | (sub == 2 || sub == 3 ? P4_IF_FLAGS_IN : 0);

	if (sub == 7)		/* CMP: no result */
		insn_core_set(k, cls, P4_R_NONE, dst, other, fl);
	else
		insn_core_set(k, cls, dst, other, P4_R_NONE, fl | P4_IF_DST_READ);
}

/* x87 (D8-DF): arithmetic on ST as one register; the quirks of the state instructions. */
static void insn_core_x87(const struct insn_dec *x, const struct insn_core_ops *o,
			  struct p4_insn *k)
{
	static const uint8_t arith[8] = {
		P4_U_X87_ADD, P4_U_X87_MUL, P4_U_X87_ADD, P4_U_X87_ADD,
		P4_U_X87_ADD, P4_U_X87_ADD, P4_U_X87_DIV, P4_U_X87_DIV,
	};
	uint8_t op = x->op;
	unsigned sub = o->sub, modrm = x->modrm;

	if (op == 0xd8 || op == 0xdc || op == 0xde || ((op == 0xda || op == 0xde) && o->mem)) {
		insn_core_set(k, arith[sub], P4_R_ST, P4_R_NONE, P4_R_NONE, P4_IF_DST_READ);
		return;
	}
	insn_core_set(k, P4_U_X87_MOVE, P4_R_ST, P4_R_NONE, P4_R_NONE, P4_IF_DST_READ);
	if (!o->mem) {
		if (op == 0xd9 && modrm >= 0xf0)	/* transcendental, FSQRT: the long ones */
			k->cls = P4_U_X87_DIV;
		return;
	}
	switch (op << 3 | sub) {
	case 0xd9 << 3 | 3:	/* FSTP m32 */
		k->uc_loads = 2;
		k->uc_stores = 2;
		return;
	case 0xd9 << 3 | 4:	/* FLDENV */
		k->uc_loads = 7;
		k->flags |= P4_IF_RETIRES_TWO;
		return;
	case 0xd9 << 3 | 5:	/* FLDCW */
		k->flags |= P4_IF_RETIRES_TWO;
		return;
	case 0xd9 << 3 | 6:	/* FNSTENV */
		k->uc_stores = 7;
		return;
	case 0xdb << 3 | 5:	/* FLD m80 */
		k->uc_loads = 2;
		return;
	case 0xdb << 3 | 7: case 0xdf << 3 | 6:	/* FSTP m80, FBSTP */
		k->uc_stores = 2;
		return;
	case 0xdd << 3 | 4:	/* FRSTOR */
		k->uc_loads = 23;
		k->flags |= P4_IF_RETIRES_TWO;
		return;
	case 0xdd << 3 | 6:	/* FNSAVE */
		k->uc_stores = 23;
		return;
	default:
		return;
	}
}

/* One-byte map. */
static void insn_core_map1(const struct insn_dec *x, const struct insn_core_ops *o,
			   struct p4_insn *k)
{
	uint8_t op = x->op, emb = CR((op & 7) | ((x->c.rex & 1) ? 8 : 0));
	uint8_t rax = CR(INSN_RAX), rsp = CR(INSN_RSP), dst_rm = o->mem ? P4_R_NONE : o->rm;

	if (op < 0x40 && (op & 7) < 6) {
		unsigned sub = op >> 3;

		if ((op & 7) < 2)
			insn_core_alu(k, sub, dst_rm, o->reg);
		else if ((op & 7) < 4)
			insn_core_alu(k, sub, o->reg, o->rm);
		else
			insn_core_alu(k, sub, rax, P4_R_NONE);
		if (o->mem && (op & 7) < 2 && sub != 7 && x->c.lock)
			k->cls = P4_U_LOCKED;
		return;
	}
	if (op >= 0x70 && op <= 0x7f) {
		insn_core_set(k, P4_U_BRANCH, P4_R_NONE, P4_R_NONE, P4_R_NONE, P4_IF_FLAGS_IN);
		return;
	}
	if (op >= 0xb0 && op <= 0xbf) {		/* MOV reg, imm */
		insn_core_set(k, P4_U_ALU, CR((op & 7) | ((x->c.rex & 1) ? 8 : 0)), P4_R_NONE,
			      P4_R_NONE, 0);
		return;
	}
	if (op >= 0xd8 && op <= 0xdf) {
		insn_core_x87(x, o, k);
		return;
	}
	switch (op) {
	case 0x40 ... 0x4f:	/* INC/DEC reg (32-bit code) */
		insn_core_set(k, P4_U_ALU, emb, P4_R_NONE, P4_R_NONE, P4_IF_DST_READ | P4_IF_FLAGS_OUT);
		return;
	case 0x50 ... 0x57: case 0x68: case 0x6a: case 0x9c:	/* PUSH */
		insn_core_set(k, P4_U_STORE, rsp, op <= 0x57 ? emb : op == 0x9c ? P4_R_FLAGS : P4_R_NONE,
			      P4_R_NONE, P4_IF_DST_READ);
		return;
	case 0x58 ... 0x5f:	/* POP */
		insn_core_set(k, P4_U_LOAD, emb, P4_R_NONE, P4_R_NONE, 0);
		return;
	case 0x63: case 0x8a: case 0x8b:	/* MOVSXD, MOV reg, r/m */
		insn_core_set(k, o->mem ? P4_U_LOAD : P4_U_ALU, o->reg, o->rm, P4_R_NONE, 0);
		return;
	case 0x69: case 0x6b:
		insn_core_set(k, P4_U_IMUL, o->reg, o->rm, P4_R_NONE, P4_IF_FLAGS_OUT);
		return;
	case 0x80: case 0x81: case 0x83:
		insn_core_alu(k, o->sub, dst_rm, P4_R_NONE);
		if (o->mem && o->sub != 7 && x->c.lock)
			k->cls = P4_U_LOCKED;
		return;
	case 0x84: case 0x85: case 0xa8: case 0xa9:	/* TEST */
		insn_core_set(k, P4_U_ALU, P4_R_NONE, op >= 0xa8 ? rax : o->reg, o->rm, P4_IF_FLAGS_OUT);
		return;
	case 0x86: case 0x87:	/* XCHG: with memory, locked */
		insn_core_set(k, o->mem ? P4_U_LOCKED : P4_U_ALU, o->reg, o->rm, P4_R_NONE, P4_IF_DST_READ);
		return;
	case 0x88: case 0x89: case 0xc6: case 0xc7:	/* MOV r/m, reg / imm */
		insn_core_set(k, o->mem ? P4_U_STORE : P4_U_ALU, dst_rm,
			      op >= 0xc6 ? P4_R_NONE : o->reg, P4_R_NONE, 0);
		return;
	case 0x8d:		/* LEA: the address registers are sources, nothing is loaded */
		insn_core_set(k, x->ea.index >= 0 || x->ea.si16 || x->ea.di16 ? P4_U_LEA_SCALED : P4_U_ALU,
			      o->reg, k->addr[0], k->addr[1], 0);
		k->addr[0] = k->addr[1] = P4_R_NONE;
		return;
	case 0xc8:		/* ENTER imm16, imm8: the nesting level L is its last byte */
		/*
		 * Architecturally a push of RBP, L - 1 frame pointers copied
		 * (a load and a store each) and the new frame pointer pushed
		 * when L > 0; real parts tag one store more per level (ISPASS
		 * 2013 data: "enter +1 per nesting level"). The stack pointer
		 * and RBP are written.
		 */
		{
			unsigned lvl = x->c.i > 0 ? x->c.p[x->c.i - 1] & 31u : 0;

			k->uc_stores = (uint8_t)((lvl ? lvl + 1 : 1) + lvl);
			k->uc_loads = (uint8_t)(lvl > 1 ? lvl - 1 : 0);
			insn_core_set(k, P4_U_STORE, rsp, CR(INSN_RBP), P4_R_NONE, P4_IF_DST_READ);
		}
		return;
	case 0x8f: case 0xc9:	/* POP r/m, LEAVE */
		insn_core_set(k, P4_U_LOAD, op == 0xc9 ? CR(INSN_RBP) : dst_rm, P4_R_NONE, P4_R_NONE, 0);
		return;
	case 0x91 ... 0x97:	/* XCHG eAX, reg */
		insn_core_set(k, P4_U_ALU, emb, rax, P4_R_NONE, P4_IF_DST_READ);
		return;
	case 0x98: case 0x99:	/* CBW/CWDE/CDQE, CWD/CDQ/CQO */
		insn_core_set(k, P4_U_ALU, op == 0x98 ? rax : CR(INSN_RDX), rax, P4_R_NONE, 0);
		return;
	case 0x9d: case 0xfc: case 0xfd:	/* POPF, CLD, STD */
		insn_core_set(k, P4_U_FLAGS_SLOW, P4_R_FLAGS, P4_R_NONE, P4_R_NONE, 0);
		return;
	case 0xa0: case 0xa1:
		insn_core_set(k, P4_U_LOAD, rax, P4_R_NONE, P4_R_NONE, 0);
		return;
	case 0xa2: case 0xa3:
		insn_core_set(k, P4_U_STORE, P4_R_NONE, rax, P4_R_NONE, 0);
		return;
	case 0xa4 ... 0xa7: case 0xaa ... 0xaf: {
		static const uint8_t rep[16] = {
			[0x4] = P4_U_REP_MOVS, [0x5] = P4_U_REP_MOVS, [0x6] = P4_U_REP_CMPS,
			[0x7] = P4_U_REP_CMPS, [0xa] = P4_U_REP_STOS, [0xb] = P4_U_REP_STOS,
			[0xc] = P4_U_REP_LODS, [0xd] = P4_U_REP_LODS, [0xe] = P4_U_REP_LODS,
			[0xf] = P4_U_REP_LODS,
		};

		insn_core_set(k, x->c.rep ? rep[op & 15] : P4_U_STRING, P4_R_NONE, CR(INSN_RSI),
			      CR(INSN_RDI), 0);
		return;
	}
	case 0xc0: case 0xc1: case 0xd0 ... 0xd3: {	/* group 2 */
		static const uint8_t cls[8] = {
			P4_U_ROT, P4_U_ROT, P4_U_ALU_CARRY, P4_U_ALU_CARRY,
			P4_U_SHIFT, P4_U_SHIFT, P4_U_SHIFT, P4_U_SHIFT,
		};
		bool by_cl = op >= 0xd2;

		insn_core_set(k, by_cl ? P4_U_SHIFT_CL : cls[o->sub], dst_rm, by_cl ? CR(INSN_RCX) : P4_R_NONE,
			      P4_R_NONE, P4_IF_DST_READ | P4_IF_FLAGS_OUT |
			      (o->sub == 2 || o->sub == 3 ? P4_IF_FLAGS_IN : 0));
		return;
	}
	case 0xc2: case 0xc3: case 0xe8: case 0xe9: case 0xeb:	/* RET, CALL, JMP */
		insn_core_set(k, P4_U_BRANCH, P4_R_NONE, P4_R_NONE, P4_R_NONE, 0);
		return;
	case 0xe0 ... 0xe3:	/* LOOPcc, JrCXZ */
		insn_core_set(k, P4_U_BRANCH, CR(INSN_RCX), P4_R_NONE, P4_R_NONE,
			      P4_IF_DST_READ | (op < 0xe2 ? P4_IF_FLAGS_IN : 0));
		return;
	case 0xf5: case 0xf8: case 0xf9:	/* CMC CLC STC */
		insn_core_set(k, P4_U_ALU, P4_R_FLAGS, P4_R_NONE, P4_R_NONE, 0);
		return;
	case 0xf6: case 0xf7: {	/* group 3 */
		static const uint8_t cls[8] = {
			P4_U_ALU, P4_U_ALU, P4_U_ALU, P4_U_ALU, P4_U_MUL, P4_U_MUL, P4_U_DIV, P4_U_DIV,
		};

		if (o->sub < 2)
			insn_core_set(k, P4_U_ALU, P4_R_NONE, o->rm, P4_R_NONE, P4_IF_FLAGS_OUT);
		else if (o->sub < 4)
			insn_core_set(k, P4_U_ALU, dst_rm, P4_R_NONE, P4_R_NONE,
				      P4_IF_DST_READ | P4_IF_FLAGS_OUT);
		else
			insn_core_set(k, cls[o->sub], rax, o->rm, CR(INSN_RDX),
				      P4_IF_DST_READ | P4_IF_FLAGS_OUT);
		return;
	}
	case 0xfe: case 0xff:	/* groups 4 and 5 */
		if (o->sub < 2)
			insn_core_set(k, x->c.lock && o->mem ? P4_U_LOCKED : P4_U_ALU, dst_rm, P4_R_NONE,
				      P4_R_NONE, P4_IF_DST_READ | P4_IF_FLAGS_OUT);
		else if (o->sub == 6)
			insn_core_set(k, P4_U_STORE, rsp, o->rm, P4_R_NONE, P4_IF_DST_READ);
		else
			insn_core_set(k, P4_U_BRANCH, P4_R_NONE, o->rm, P4_R_NONE, 0);
		return;
	default:
		return;
	}
}

/* SSE/SSE2 arithmetic by opcode (0F 51-5F), with 0 for the logic and moves among them. */
static uint8_t insn_core_sse(uint8_t op)
{
	switch (op) {
	case 0x51: case 0x5e: return P4_U_SSE_DIV;	/* SQRT, DIV */
	case 0x59: return P4_U_SSE_MUL;
	case 0x58: case 0x5a: case 0x5b: case 0x5c: case 0x5d: case 0x5f: return P4_U_SSE_ADD;
	default: return P4_U_SIMD_INT;			/* AND ANDN OR XOR, RSQRT RCP */
	}
}

/* The 0F map. */
static void insn_core_map2(const struct insn_dec *x, const struct insn_core_ops *o,
			   struct p4_insn *k)
{
	uint8_t op = x->op, pfx = x->c.pfx, dst_rm = o->mem ? P4_R_NONE : o->rm;
	uint8_t rax = CR(INSN_RAX);
	unsigned reg = x->modrm >> 3 & 7, rm = x->modrm & 7;
	bool xmm = op < 0x60 || op == 0xc2 || op == 0xc6 || pfx != 0;
	uint8_t vbase = xmm ? P4_R_XMM : P4_R_MM;
	uint8_t vreg = (uint8_t)(vbase + (reg | ((x->c.rex & 4) ? 8 : 0)) % (xmm ? 16 : 8));
	uint8_t vrm = o->mem ? P4_R_NONE : (uint8_t)(vbase + (rm | ((x->c.rex & 1) ? 8 : 0)) % (xmm ? 16 : 8));

	if (op >= 0x80 && op <= 0x8f) {
		insn_core_set(k, P4_U_BRANCH, P4_R_NONE, P4_R_NONE, P4_R_NONE, P4_IF_FLAGS_IN);
		return;
	}
	if (op >= 0x40 && op <= 0x4f) {
		insn_core_set(k, P4_U_CMOV, o->reg, o->rm, P4_R_NONE, P4_IF_DST_READ | P4_IF_FLAGS_IN);
		return;
	}
	if (op >= 0x90 && op <= 0x9f) {
		insn_core_set(k, o->mem ? P4_U_STORE : P4_U_ALU, dst_rm, P4_R_FLAGS, P4_R_NONE, 0);
		return;
	}
	if ((op >= 0x51 && op <= 0x5f) || op == 0xc2) {
		insn_core_set(k, op == 0xc2 ? P4_U_SSE_ADD : insn_core_sse(op), vreg, vrm, P4_R_NONE,
			      P4_IF_DST_READ);
		return;
	}
	if ((op >= 0x60 && op <= 0x6d) || (op >= 0x70 && op <= 0x76) || op >= 0xd0 || op == 0xc6) {
		if (op == 0xf7)		/* MASKMOVQ (a quirk), MASKMOVDQU (two stores) */
			pfx == 0x66 ? (void)(k->uc_stores = 2) : (void)(k->flags |= P4_IF_RETIRES_TWO);
		if (op == 0xf0 && pfx == 0xf2 && o->mem)	/* LDDQU */
			k->uc_loads = 2;
		insn_core_set(k, P4_U_SIMD_INT, vreg, vrm, P4_R_NONE, P4_IF_DST_READ);
		return;
	}
	switch (op) {
	case 0x10: case 0x12: case 0x16: case 0x28: case 0x6f:	/* SIMD loads and moves */
		if (o->mem && ((op == 0x10 && pfx == 0x66) || (op == 0x6f && pfx == 0xf3)))
			k->uc_loads = 2;	/* MOVUPD, MOVDQU loads */
		insn_core_set(k, o->mem ? P4_U_LOAD : P4_U_SIMD_INT, vreg, vrm, P4_R_NONE, 0);
		return;
	case 0x11: case 0x13: case 0x17: case 0x29: case 0x2b: case 0x7f: case 0xe7:
		if (o->mem && op == 0x11) {	/* MOVUPS/MOVUPD stores: two stores, MOVUPS also a load */
			k->uc_stores = (pfx == 0 || pfx == 0x66) ? 2 : 0;
			k->uc_loads = pfx == 0 ? 1 : 0;
		}
		if (o->mem && op == 0x7f && pfx == 0xf3)
			k->uc_stores = 2;	/* MOVDQU store */
		insn_core_set(k, o->mem ? P4_U_STORE : P4_U_SIMD_INT, o->mem ? P4_R_NONE : vrm, vreg,
			      P4_R_NONE, 0);
		return;
	case 0x2a: case 0x2c: case 0x2d:	/* conversions */
		if (op != 0x2a && pfx == 0x66 && o->mem)
			k->flags |= P4_IF_RETIRES_TWO;	/* CVTPD2PI / CVTTPD2PI m128 */
		insn_core_set(k, P4_U_SSE_ADD, op == 0x2a ? vreg : o->reg, op == 0x2a ? o->rm : vrm,
			      P4_R_NONE, 0);
		return;
	case 0x2e: case 0x2f:	/* UCOMIS, COMIS */
		insn_core_set(k, P4_U_SSE_ADD, P4_R_NONE, vreg, vrm, P4_IF_FLAGS_OUT);
		return;
	case 0x6e: case 0x7e:	/* MOVD/MOVQ between general and vector registers */
		if (op == 0x7e && pfx == 0xf3)
			insn_core_set(k, o->mem ? P4_U_LOAD : P4_U_SIMD_INT, vreg, vrm, P4_R_NONE, 0);
		else if (op == 0x6e)
			insn_core_set(k, o->mem ? P4_U_LOAD : P4_U_SIMD_INT, vreg, o->rm, P4_R_NONE, 0);
		else
			insn_core_set(k, o->mem ? P4_U_STORE : P4_U_SIMD_INT, dst_rm, vreg, P4_R_NONE, 0);
		return;
	case 0x77:		/* EMMS */
		k->flags |= P4_IF_RETIRES_TWO;
		insn_core_set(k, P4_U_SIMD_INT, P4_R_NONE, P4_R_NONE, P4_R_NONE, 0);
		return;
	case 0x31:		/* RDTSC */
		insn_core_set(k, P4_U_RDTSC, rax, P4_R_NONE, P4_R_NONE, 0);
		return;
	case 0xa2:		/* CPUID: serializing, one microcode store */
		k->uc_stores = 1;
		insn_core_set(k, P4_U_CPUID, rax, rax, P4_R_NONE, P4_IF_SERIAL);
		return;
	case 0xa1: case 0xa9:	/* POP FS, POP GS */
		k->uc_loads = 2;
		insn_core_set(k, P4_U_LOAD, P4_R_NONE, P4_R_NONE, P4_R_NONE, 0);
		return;
	case 0xae:		/* group 15 */
		if (!o->mem && reg >= 5) {	/* LFENCE, MFENCE, SFENCE */
			insn_core_set(k, reg == 6 ? P4_U_MFENCE : P4_U_FENCE, P4_R_NONE, P4_R_NONE,
				      P4_R_NONE, P4_IF_SERIAL);
			if (reg >= 6) {
				k->flags |= P4_IF_RETIRES_TWO;
				k->uc_stores = 1;
			}
		} else if (o->mem) {
			static const uint8_t ld[8] = { [1] = 26 }, st[8] = { [0] = 25, [7] = 1 };

			k->uc_loads = ld[reg];		/* FXRSTOR */
			k->uc_stores = st[reg];		/* FXSAVE, CLFLUSH */
		}
		return;
	case 0xaf:		/* IMUL r, r/m */
		insn_core_set(k, P4_U_IMUL, o->reg, o->rm, P4_R_NONE, P4_IF_DST_READ | P4_IF_FLAGS_OUT);
		return;
	case 0xa4: case 0xa5: case 0xac: case 0xad:	/* SHLD, SHRD */
		insn_core_set(k, P4_U_SHIFT_CL, dst_rm, o->reg, P4_R_NONE, P4_IF_DST_READ | P4_IF_FLAGS_OUT);
		return;
	case 0xb0: case 0xb1: case 0xc0: case 0xc1: case 0xc7:	/* CMPXCHG, XADD, CMPXCHG8B */
		insn_core_set(k, x->c.lock && o->mem ? P4_U_LOCKED : P4_U_ALU, dst_rm, o->reg, rax,
			      P4_IF_DST_READ | P4_IF_FLAGS_OUT);
		return;
	case 0xb6: case 0xb7: case 0xbe: case 0xbf:	/* MOVZX, MOVSX */
		insn_core_set(k, o->mem ? P4_U_LOAD : P4_U_ALU, o->reg, o->rm, P4_R_NONE, 0);
		return;
	case 0xc8 ... 0xcf:	/* BSWAP: a shift-unit op */
		insn_core_set(k, P4_U_SHIFT, CR((op & 7) | ((x->c.rex & 1) ? 8 : 0)), P4_R_NONE, P4_R_NONE,
			      P4_IF_DST_READ);
		return;
	default:
		return;
	}
}

static void insn_core(const struct insn_dec *x, struct p4_insn *k)
{
	struct insn_core_ops o = { .reg = P4_R_NONE, .rm = P4_R_NONE };
	const struct insn_ea *ea = &x->ea;

	*k = (struct p4_insn){ 0 };
	if (x->d.modrm) {
		unsigned mod = x->modrm >> 6;

		o.sub = x->modrm >> 3 & 7;
		o.reg = CR(o.sub | ((x->c.rex & 4) ? 8 : 0));
		o.mem = mod != 3;
		if (!o.mem)
			o.rm = CR((x->modrm & 7) | ((x->c.rex & 1) ? 8 : 0));
		else if (x->c.addr16) {
			k->addr[0] = ea->bx16 ? CR(INSN_RBX) : ea->bp16 ? CR(INSN_RBP) : P4_R_NONE;
			k->addr[1] = ea->si16 ? CR(INSN_RSI) : ea->di16 ? CR(INSN_RDI) : P4_R_NONE;
		} else {
			k->addr[0] = ea->base >= 0 ? CR(ea->base) : P4_R_NONE;
			k->addr[1] = ea->index >= 0 ? CR(ea->index) : P4_R_NONE;
		}
	}
	if (x->map2)
		insn_core_map2(x, &o, k);
	else
		insn_core_map1(x, &o, k);
	if (k->cls == P4_U_BRANCH && x->c.i > 0 && (x->c.p[x->c.i - 1] & 0x80) &&
	    (x->d.imm == IMM_REL8 || x->d.imm == IMM_REL))
		k->flags |= P4_IF_BACKWARD;	/* the displacement's last byte holds its sign */
	if (k->cls == P4_U_DIV || k->cls == P4_U_X87_DIV || k->cls == P4_U_SSE_DIV)
		k->flags |= P4_IF_DIVIDER;	/* not pipelined on either family (T = L, p4_core.c) */
	if (k->cls >= P4_U_REP_MOVS)
		k->flags |= P4_IF_REP;
}

enum insn_mem_status insn_mem_decode(const uint8_t *bytes, size_t n, bool mode64,
				     const struct insn_regs *regs, struct insn_mem *out)
{
	struct insn_dec x = {
		.c = { .p = bytes, .n = n, .mode64 = mode64, .seg = -1 },
		.regs = regs, .out = out,
	};
	bool known;
	uint8_t op;

	*out = (struct insn_mem){ .status = INSN_MEM_TRUNCATED };
	if (!insn_prefixes(&x.c, &op) || !insn_mem_parse(&x, op, &known))
		return out->status;
	out->status = INSN_MEM_UNKNOWN;
	if (!known)
		return out->status;
	out->len = (uint8_t)x.c.i;	/* RIP-relative operands need it first */
	insn_core(&x, &out->core);
	if (x.d.len_only || !insn_operands(&x)) {
		out->nops = 0;		/* unknown accesses, known length */
		return out->status;
	}
	out->status = INSN_MEM_OK;
	return out->status;
}

bool insn_rm_addr(const uint8_t *bytes, size_t n, bool mode64, const struct insn_regs *regs,
		  uint64_t *addr)
{
	struct insn_mem out;
	struct insn_dec x = {
		.c = { .p = bytes, .n = n, .mode64 = mode64, .seg = -1 },
		.regs = regs, .out = &out,
	};
	bool known;
	uint8_t op;

	if (!insn_prefixes(&x.c, &op) || !insn_mem_parse(&x, op, &known) || !known ||
	    !x.d.modrm || !x.ea.mem)
		return false;
	*addr = insn_ea_addr(&x, 0);	/* after the whole instruction: RIP-relative needs its end */
	return true;
}

const char *insn_access_name(enum insn_access a)
{
	switch (a) {
	case INSN_LOAD: return "load";
	case INSN_STORE: return "store";
	case INSN_LOAD_STORE: return "load+store";
	default: return "?";
	}
}

size_t insn_length(const uint8_t *bytes, size_t n, bool mode64)
{
	static const struct insn_regs zero;
	struct insn_mem m;

	insn_mem_decode(bytes, n, mode64, &zero, &m);
	return m.status == INSN_MEM_TRUNCATED ? 0 : m.len;
}
