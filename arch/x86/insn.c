/*
 * insn.c - classify the instruction at an address as a branch (or not).
 *
 * The single-step engine (arch/x86/step.c) calls this for every retired
 * workload instruction. Only what a branch count needs is decoded:
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

#define INSN_MAX_LEN	15

struct insn_cursor {
	const uint8_t *p;
	size_t n, i;
	bool opsize16, addr16, rep, mode64;
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
			c->rep |= b == 0xf2 || b == 0xf3;
			continue;
		}
		if (c->mode64 && (b & 0xf0) == 0x40)	/* REX: W does not change branch sizes */
			continue;
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

bool insn_classify(const uint8_t *bytes, size_t n, bool mode64, struct insn_class *out)
{
	struct insn_cursor c = { .p = bytes, .n = n, .mode64 = mode64 };
	uint8_t op;

	*out = (struct insn_class){ .branch = INSN_NOT_BRANCH };
	if (!insn_prefixes(&c, &op))
		return false;
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
