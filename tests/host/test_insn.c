/*
 * test_insn.c - the branch classifier against hand-assembled instructions.
 *
 * Each byte sequence is written from the SDM Vol. 2 opcode map (Appendix A,
 * Tables) and ModRM/SIB tables (2-1 to 2-3); the expected kind and
 * length come from those tables, not from running the decoder.
 *
 * The memory-operand decoder is checked the same way: hand-assembled
 * encodings (the ModRM/SIB bytes spelled out next to each) with a register
 * file of distinct values, the expected address worked out by hand; and on
 * the built-in workloads' own bytes (arch/x86/64/workloads.S as assembled by
 * gas, `objcopy -O binary -j .wltext`), whose instruction boundaries come
 * from `objdump -d`, an independent decoder.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "arch/x86/insn.h"
#include "arch/x86/insn_simd.h"

struct insn_case {
	const char *what;
	uint8_t bytes[16];
	uint8_t n;
	bool mode64;
	enum insn_branch kind;
	uint8_t len;		/* expected for branches and REP string ops */
	bool rep;
};

static const struct insn_case cases[] = {
	/* Jcc */
	{ "jnz rel8", { 0x75, 0xfe }, 2, true, INSN_COND, 2, false },
	{ "jo rel8", { 0x70, 0x00 }, 2, true, INSN_COND, 2, false },
	{ "jg rel8", { 0x7f, 0x10 }, 2, true, INSN_COND, 2, false },
	{ "jnz rel32", { 0x0f, 0x85, 1, 2, 3, 4 }, 6, true, INSN_COND, 6, false },
	{ "jo rel32", { 0x0f, 0x80, 0, 0, 0, 0 }, 6, true, INSN_COND, 6, false },
	{ "jg rel32", { 0x0f, 0x8f, 0, 0, 0, 0 }, 6, true, INSN_COND, 6, false },
	{ "66 jnz rel32 in 64-bit mode", { 0x66, 0x0f, 0x85, 0, 0, 0, 0 }, 7, true, INSN_COND, 7, false },
	{ "66 jnz rel16 in 32-bit mode", { 0x66, 0x0f, 0x85, 0, 0 }, 5, false, INSN_COND, 5, false },
	{ "cs-hinted jz", { 0x2e, 0x74, 0x05 }, 3, true, INSN_COND, 3, false },
	{ "ds-hinted jz", { 0x3e, 0x74, 0x05 }, 3, true, INSN_COND, 3, false },
	/* JMP / CALL direct */
	{ "jmp rel8", { 0xeb, 0xfe }, 2, true, INSN_JMP, 2, false },
	{ "jmp rel32", { 0xe9, 0, 0, 0, 0 }, 5, true, INSN_JMP, 5, false },
	{ "66 jmp rel16 in 32-bit mode", { 0x66, 0xe9, 0, 0 }, 4, false, INSN_JMP, 4, false },
	{ "call rel32", { 0xe8, 0x10, 0, 0, 0 }, 5, true, INSN_CALL, 5, false },
	{ "rex.w call rel32", { 0x48, 0xe8, 0, 0, 0, 0 }, 6, true, INSN_CALL, 6, false },
	{ "jmp far ptr16:32 (32-bit)", { 0xea, 1, 2, 3, 4, 0x08, 0 }, 7, false, INSN_JMP, 7, false },
	{ "call far ptr16:32 (32-bit)", { 0x9a, 1, 2, 3, 4, 0x08, 0 }, 7, false, INSN_CALL, 7, false },
	{ "jmp far EA invalid in 64-bit", { 0xea, 1, 2, 3, 4, 0x08, 0 }, 7, true, INSN_NOT_BRANCH, 0, false },
	/* group 5 indirect */
	{ "call *%rax (FF /2, mod 3)", { 0xff, 0xd0 }, 2, true, INSN_CALL_INDIRECT, 2, false },
	{ "call *%r11 (REX.B)", { 0x41, 0xff, 0xd3 }, 3, true, INSN_CALL_INDIRECT, 3, false },
	{ "call *disp32(%rip)", { 0xff, 0x15, 0, 0, 0, 0 }, 6, true, INSN_CALL_INDIRECT, 6, false },
	{ "call far *(%rax) (FF /3)", { 0xff, 0x18 }, 2, true, INSN_CALL_INDIRECT, 2, false },
	{ "jmp *%rax (REX.W, FF /4)", { 0x48, 0xff, 0xe0 }, 3, true, INSN_JMP_INDIRECT, 3, false },
	{ "jmp *disp32 (SIB, no base)", { 0xff, 0x24, 0x25, 0, 0, 0, 0 }, 7, true, INSN_JMP_INDIRECT, 7, false },
	{ "jmp *8(%rsp) (SIB + disp8)", { 0xff, 0x64, 0x24, 0x08 }, 4, true, INSN_JMP_INDIRECT, 4, false },
	{ "jmp *disp32(%rax)", { 0xff, 0xa0, 0, 0, 0, 0 }, 6, true, INSN_JMP_INDIRECT, 6, false },
	{ "jmp *(%rax,%rbx,8) (SIB, mod 0)", { 0xff, 0x24, 0xd8 }, 3, true, INSN_JMP_INDIRECT, 3, false },
	{ "jmp far *disp32(%rip) (FF /5)", { 0xff, 0x2d, 0, 0, 0, 0 }, 6, true, INSN_JMP_INDIRECT, 6, false },
	{ "call [disp16] (67, 16-bit addressing)", { 0x67, 0xff, 0x16, 0x34, 0x12 }, 5, false,
	  INSN_CALL_INDIRECT, 5, false },
	{ "call [bx+si+disp8] (67)", { 0x67, 0xff, 0x50, 0x10 }, 4, false, INSN_CALL_INDIRECT, 4, false },
	{ "inc (FF /0) is not a branch", { 0xff, 0xc0 }, 2, true, INSN_NOT_BRANCH, 0, false },
	{ "push (FF /6) is not a branch", { 0xff, 0x30 }, 2, true, INSN_NOT_BRANCH, 0, false },
	/* returns */
	{ "ret", { 0xc3 }, 1, true, INSN_RET, 1, false },
	{ "ret imm16", { 0xc2, 0x08, 0x00 }, 3, true, INSN_RET, 3, false },
	{ "far ret", { 0xcb }, 1, true, INSN_RET, 1, false },
	{ "far ret imm16", { 0xca, 0x10, 0x00 }, 3, true, INSN_RET, 3, false },
	{ "rep ret", { 0xf3, 0xc3 }, 2, true, INSN_RET, 2, false },
	{ "rex.w far ret (lretq)", { 0x48, 0xcb }, 2, true, INSN_RET, 2, false },
	/* other branches */
	{ "loop", { 0xe2, 0xfe }, 2, true, INSN_OTHER_BRANCH, 2, false },
	{ "loopne", { 0xe0, 0xfe }, 2, true, INSN_OTHER_BRANCH, 2, false },
	{ "loope", { 0xe1, 0xfe }, 2, true, INSN_OTHER_BRANCH, 2, false },
	{ "jrcxz", { 0xe3, 0x02 }, 2, true, INSN_OTHER_BRANCH, 2, false },
	{ "int 0x81", { 0xcd, 0x81 }, 2, true, INSN_OTHER_BRANCH, 2, false },
	{ "int3", { 0xcc }, 1, true, INSN_OTHER_BRANCH, 1, false },
	{ "int1", { 0xf1 }, 1, true, INSN_OTHER_BRANCH, 1, false },
	{ "into (32-bit)", { 0xce }, 1, false, INSN_OTHER_BRANCH, 1, false },
	{ "into invalid in 64-bit", { 0xce }, 1, true, INSN_NOT_BRANCH, 0, false },
	{ "iretq", { 0x48, 0xcf }, 2, true, INSN_OTHER_BRANCH, 2, false },
	{ "syscall", { 0x0f, 0x05 }, 2, true, INSN_OTHER_BRANCH, 2, false },
	{ "sysret", { 0x0f, 0x07 }, 2, true, INSN_OTHER_BRANCH, 2, false },
	{ "sysenter", { 0x0f, 0x34 }, 2, true, INSN_OTHER_BRANCH, 2, false },
	{ "sysexit", { 0x0f, 0x35 }, 2, true, INSN_OTHER_BRANCH, 2, false },
	/* not branches */
	{ "nop", { 0x90 }, 1, true, INSN_NOT_BRANCH, 0, false },
	{ "add $1, %rax", { 0x48, 0x83, 0xc0, 0x01 }, 4, true, INSN_NOT_BRANCH, 0, false },
	{ "ud2", { 0x0f, 0x0b }, 2, true, INSN_NOT_BRANCH, 0, false },
	{ "cmovz (0F 44)", { 0x0f, 0x44, 0xc1 }, 3, true, INSN_NOT_BRANCH, 0, false },
	{ "setz (0F 94)", { 0x0f, 0x94, 0xc0 }, 3, true, INSN_NOT_BRANCH, 0, false },
	{ "dec eax (48) then jmp rel8 in 32-bit mode", { 0x48, 0xeb, 0x00 }, 3, false,
	  INSN_NOT_BRANCH, 0, false },
	/* REP string operations */
	{ "rep movsb", { 0xf3, 0xa4 }, 2, true, INSN_NOT_BRANCH, 2, true },
	{ "rep stosq", { 0xf3, 0x48, 0xab }, 3, true, INSN_NOT_BRANCH, 3, true },
	{ "repne scasb", { 0xf2, 0xae }, 2, true, INSN_NOT_BRANCH, 2, true },
	{ "rep insb", { 0xf3, 0x6c }, 2, true, INSN_NOT_BRANCH, 2, true },
	{ "rep outsd", { 0xf3, 0x6f }, 2, true, INSN_NOT_BRANCH, 2, true },
	{ "rep cmpsb", { 0xf3, 0xa6 }, 2, true, INSN_NOT_BRANCH, 2, true },
	{ "rep lodsb", { 0xf3, 0xac }, 2, true, INSN_NOT_BRANCH, 2, true },
	{ "movsb without rep", { 0xa4 }, 1, true, INSN_NOT_BRANCH, 0, false },
	{ "rep nop (pause) is not a string op", { 0xf3, 0x90 }, 2, true, INSN_NOT_BRANCH, 0, false },
};

static void classifies_every_case(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct insn_case *c = &cases[i];
		struct insn_class out;

		bool ok = insn_classify(c->bytes, c->n, c->mode64, &out);

		if (!ok || out.branch != c->kind || out.len != c->len || out.rep_string != c->rep)
			print_message("case failed: %s\n", c->what);
		assert_true(ok);
		assert_int_equal(out.branch, c->kind);
		assert_int_equal(out.len, c->len);
		assert_int_equal(out.rep_string, c->rep);
	}
}

/* MOV to CR3 flushes the TLBs; MOV from CR3, to CR0 or CR4 and other 0F opcodes do not. */
static void cr3_writes_are_flagged(void **state)
{
	static const struct { const char *what; uint8_t b[4]; size_t n; bool m64, flush; } c[] = {
		{ "mov %rax,%cr3", { 0x0f, 0x22, 0xd8 }, 3, true, true },
		{ "mov %r9,%cr3", { 0x41, 0x0f, 0x22, 0xd9 }, 4, true, true },
		{ "mov %eax,%cr3 (32-bit)", { 0x0f, 0x22, 0xd8 }, 3, false, true },
		{ "mov %cr3,%rax", { 0x0f, 0x20, 0xd8 }, 3, true, false },
		{ "mov %rax,%cr0", { 0x0f, 0x22, 0xc0 }, 3, true, false },
		{ "mov %rax,%cr4", { 0x0f, 0x22, 0xe0 }, 3, true, false },
		{ "wrmsr", { 0x0f, 0x30 }, 2, true, false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct insn_class out;

		assert_true(insn_classify(c[i].b, c[i].n, c[i].m64, &out));
		if (out.flush_tlb != c[i].flush)
			print_message("case failed: %s\n", c[i].what);
		assert_int_equal(out.flush_tlb, c[i].flush);
	}
}

/*
 * The execution-tagging class comes with the classification (decoded once,
 * kept in the step engine's decode cache): the same as insn_simd_class and
 * insn_simd_move give for the bytes' opcode (insn_opcode), and NONE for
 * integer code.
 */
static void classify_gives_the_simd_class(void **state)
{
	static const struct {
		const char *what;
		uint8_t b[8];
		size_t n;
		bool m64;
		enum insn_simd simd;
		enum insn_simd_move move;
	} c[] = {
		{ "addsd %xmm1,%xmm0", { 0xf2, 0x0f, 0x58, 0xc1 }, 4, true, INSN_SIMD_SCALAR_DP,
		  INSN_SIMD_MOVE_NONE },
		{ "addps %xmm1,%xmm0", { 0x0f, 0x58, 0xc1 }, 3, false, INSN_SIMD_PACKED_SP,
		  INSN_SIMD_MOVE_NONE },
		{ "fadd %st(1),%st", { 0xd8, 0xc1 }, 2, false, INSN_SIMD_X87, INSN_SIMD_MOVE_NONE },
		{ "movaps (%rax),%xmm0", { 0x0f, 0x28, 0x00 }, 3, true, INSN_SIMD_NONE,
		  INSN_SIMD_MOVE_LOAD },
		{ "movaps %xmm0,(%rax)", { 0x0f, 0x29, 0x00 }, 3, true, INSN_SIMD_NONE,
		  INSN_SIMD_MOVE_STORE },
		{ "add %ecx,%eax", { 0x01, 0xc8 }, 2, false, INSN_SIMD_NONE, INSN_SIMD_MOVE_NONE },
		{ "jne .", { 0x75, 0xfe }, 2, true, INSN_SIMD_NONE, INSN_SIMD_MOVE_NONE },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct insn_class out;
		struct insn_opcode o;

		assert_true(insn_classify(c[i].b, c[i].n, c[i].m64, &out));
		if (INSN_SIMD_OF(out.simd) != c[i].simd || INSN_SIMD_MOVE_OF(out.simd) != c[i].move)
			print_message("case failed: %s\n", c[i].what);
		assert_int_equal(INSN_SIMD_OF(out.simd), c[i].simd);
		assert_int_equal(INSN_SIMD_MOVE_OF(out.simd), c[i].move);
		assert_true(insn_opcode(c[i].b, c[i].n, c[i].m64, &o));
		assert_int_equal(INSN_SIMD_OF(out.simd), insn_simd_class(&o));
		assert_int_equal(INSN_SIMD_MOVE_OF(out.simd), insn_simd_move(&o));
	}
}

/* Every Jcc opcode in both maps is conditional, each of the 16 conditions. */
static void all_sixteen_conditions(void **state)
{
	(void)state;
	for (unsigned cc = 0; cc < 16; cc++) {
		uint8_t short_form[2] = { (uint8_t)(0x70 + cc), 0 };
		uint8_t near_form[6] = { 0x0f, (uint8_t)(0x80 + cc), 0, 0, 0, 0 };
		struct insn_class out;

		assert_true(insn_classify(short_form, sizeof(short_form), true, &out));
		assert_int_equal(out.branch, INSN_COND);
		assert_int_equal(out.len, 2);
		assert_true(insn_classify(near_form, sizeof(near_form), true, &out));
		assert_int_equal(out.branch, INSN_COND);
		assert_int_equal(out.len, 6);
	}
}

static void truncated_bytes_are_refused(void **state)
{
	static const uint8_t call[5] = { 0xe8, 0, 0, 0, 0 };
	static const uint8_t jcc[2] = { 0x0f, 0x85 };
	static const uint8_t ff[6] = { 0xff, 0x15, 0, 0, 0, 0 };
	struct insn_class out;

	(void)state;
	assert_false(insn_classify(call, 3, true, &out));
	assert_false(insn_classify(jcc, 1, true, &out));
	assert_false(insn_classify(jcc, 2, true, &out));
	assert_false(insn_classify(ff, 5, true, &out));
	assert_false(insn_classify(ff, 0, true, &out));
	assert_true(insn_classify(ff, 6, true, &out));
}

/* 15 bytes is the architectural limit (SDM Vol. 2 2.3.11): 15 prefixes leave no opcode. */
static void fifteen_prefixes_are_too_long(void **state)
{
	uint8_t bytes[20];
	struct insn_class out;

	(void)state;
	for (unsigned i = 0; i < sizeof(bytes); i++)
		bytes[i] = 0x66;
	bytes[14] = 0xc3;
	assert_true(insn_classify(bytes, sizeof(bytes), true, &out));	/* 14 prefixes + ret */
	assert_int_equal(out.branch, INSN_RET);
	assert_int_equal(out.len, 15);
	bytes[14] = 0x66;
	bytes[15] = 0xc3;
	assert_false(insn_classify(bytes, sizeof(bytes), true, &out));
}

static void names(void **state)
{
	(void)state;
	assert_string_equal(insn_branch_name(INSN_COND), "cond");
	assert_string_equal(insn_branch_name(INSN_RET), "ret");
	assert_string_equal(insn_branch_name(INSN_NOT_BRANCH), "-");
	assert_string_equal(insn_branch_name(INSN_NBRANCH_KINDS), "?");
}

/* ---- memory operands ------------------------------------------------------------- */

#define RIP		UINT64_C(0x100000)
#define FS_BASE		UINT64_C(0x10000000)
#define GS_BASE		UINT64_C(0x20000000)

static struct insn_regs regs64(void)
{
	struct insn_regs r = { .rip = RIP };

	r.gpr[INSN_RAX] = 0x1000;
	r.gpr[INSN_RCX] = 0x10;
	r.gpr[INSN_RDX] = 0x40;
	r.gpr[INSN_RBX] = 0x2000;
	r.gpr[INSN_RSP] = 0x7ff0;
	r.gpr[INSN_RBP] = 0x8000;
	r.gpr[INSN_RSI] = 0x3000;
	r.gpr[INSN_RDI] = 0x4000;
	r.gpr[INSN_R8] = 0x5000;
	r.gpr[INSN_R9] = 0x6000;
	r.gpr[INSN_R10] = 0x20;
	r.seg_base[INSN_FS] = FS_BASE;
	r.seg_base[INSN_GS] = GS_BASE;
	r.seg_base[INSN_DS] = 0x999000;	/* ignored in 64-bit mode */
	r.seg_base[INSN_SS] = 0x999000;
	return r;
}

struct mem_case {
	const char *what;
	uint8_t bytes[16];
	uint8_t n;
	uint8_t len;
	uint8_t nops;
	struct insn_mem_op op[INSN_MAX_MEM_OPS];
};

#define LD	INSN_LOAD
#define ST	INSN_STORE
#define RMW	INSN_LOAD_STORE

/* 64-bit code, regs64(): RSP 7FF0H, so a push writes 7FE8H and a pop reads 7FF0H. */
static const struct mem_case mem_cases[] = {
	/* ModRM 44 = mod 01 reg 000 r/m 100 (SIB); SIB 8B = x4, index RCX, base RBX; disp8 10H */
	{ "mov 0x10(%rbx,%rcx,4),%eax", { 0x8b, 0x44, 0x8b, 0x10 }, 4, 4, 1, { { 0x2050, 4, LD } } },
	/* REX.W 89 /r, ModRM 45 = mod 01 reg RAX r/m RBP, disp8 -8 */
	{ "mov %rax,-8(%rbp)", { 0x48, 0x89, 0x45, 0xf8 }, 4, 4, 1, { { 0x7ff8, 8, ST } } },
	{ "add %eax,(%rsi)", { 0x01, 0x06 }, 2, 2, 1, { { 0x3000, 4, RMW } } },
	{ "cmp %eax,(%rsi) only reads", { 0x39, 0x06 }, 2, 2, 1, { { 0x3000, 4, LD } } },
	{ "sub (%rsi),%al", { 0x2a, 0x06 }, 2, 2, 1, { { 0x3000, 1, LD } } },
	/* 83 /7 ib with ModRM 3D = mod 00 reg 7 r/m 101: RIP + len (8) + disp32 100H */
	{ "cmpq $5,0x100(%rip)", { 0x48, 0x83, 0x3d, 0x00, 0x01, 0, 0, 0x05 }, 8, 8, 1,
	  { { RIP + 8 + 0x100, 8, LD } } },
	/* C7 /0 id, RIP-relative: the imm32 counts in the length before the address */
	{ "movl $7,0x20(%rip)", { 0xc7, 0x05, 0x20, 0, 0, 0, 7, 0, 0, 0 }, 10, 10, 1,
	  { { RIP + 10 + 0x20, 4, ST } } },
	{ "movw $7,(%rbx)", { 0x66, 0xc7, 0x03, 7, 0 }, 5, 5, 1, { { 0x2000, 2, ST } } },
	{ "movb $7,(%rbx)", { 0xc6, 0x03, 7 }, 3, 3, 1, { { 0x2000, 1, ST } } },
	{ "lea 8(%rax),%rdx: no access", { 0x48, 0x8d, 0x50, 0x08 }, 4, 4, 0, { { 0 } } },
	{ "add $1,%rax: no access", { 0x48, 0x83, 0xc0, 0x01 }, 4, 4, 0, { { 0 } } },
	{ "push %rbp", { 0x55 }, 1, 1, 1, { { 0x7fe8, 8, ST } } },
	{ "push %r12", { 0x41, 0x54 }, 2, 2, 1, { { 0x7fe8, 8, ST } } },
	{ "pop %rbp", { 0x5d }, 1, 1, 1, { { 0x7ff0, 8, LD } } },
	{ "push %bp (66)", { 0x66, 0x55 }, 2, 2, 1, { { 0x7fee, 2, ST } } },
	{ "push $1", { 0x6a, 0x01 }, 2, 2, 1, { { 0x7fe8, 8, ST } } },
	{ "push $imm32", { 0x68, 1, 2, 3, 4 }, 5, 5, 1, { { 0x7fe8, 8, ST } } },
	{ "pushfq", { 0x9c }, 1, 1, 1, { { 0x7fe8, 8, ST } } },
	{ "popfq", { 0x9d }, 1, 1, 1, { { 0x7ff0, 8, LD } } },
	{ "call rel32", { 0xe8, 0, 0, 0, 0 }, 5, 5, 1, { { 0x7fe8, 8, ST } } },
	{ "ret", { 0xc3 }, 1, 1, 1, { { 0x7ff0, 8, LD } } },
	{ "ret $16", { 0xc2, 0x10, 0x00 }, 3, 3, 1, { { 0x7ff0, 8, LD } } },
	{ "leave", { 0xc9 }, 1, 1, 1, { { 0x8000, 8, LD } } },
	{ "call *%r8 (41 FF /2)", { 0x41, 0xff, 0xd0 }, 3, 3, 1, { { 0x7fe8, 8, ST } } },
	{ "call *8(%rax)", { 0xff, 0x50, 0x08 }, 3, 3, 2, { { 0x1008, 8, LD }, { 0x7fe8, 8, ST } } },
	{ "jmp *%r9", { 0x41, 0xff, 0xe1 }, 3, 3, 0, { { 0 } } },
	{ "jmp *(%rax)", { 0xff, 0x20 }, 2, 2, 1, { { 0x1000, 8, LD } } },
	{ "pushq (%rbx) (FF /6)", { 0xff, 0x33 }, 2, 2, 2, { { 0x2000, 8, LD }, { 0x7fe8, 8, ST } } },
	/* 8F /0, ModRM 44 SIB 24 (base RSP) disp8 8: RSP after the pop, 7FF8H, + 8 */
	{ "popq 8(%rsp)", { 0x8f, 0x44, 0x24, 0x08 }, 4, 4, 2, { { 0x7ff0, 8, LD }, { 0x8000, 8, ST } } },
	{ "incl (%rax)", { 0xff, 0x00 }, 2, 2, 1, { { 0x1000, 4, RMW } } },
	{ "decb (%rax)", { 0xfe, 0x08 }, 2, 2, 1, { { 0x1000, 1, RMW } } },
	{ "notb (%rbx)", { 0xf6, 0x13 }, 2, 2, 1, { { 0x2000, 1, RMW } } },
	{ "testb $1,(%rbx)", { 0xf6, 0x03, 0x01 }, 3, 3, 1, { { 0x2000, 1, LD } } },
	{ "testl $1,(%rbx)", { 0xf7, 0x03, 1, 0, 0, 0 }, 6, 6, 1, { { 0x2000, 4, LD } } },
	{ "mull (%rbx)", { 0xf7, 0x23 }, 2, 2, 1, { { 0x2000, 4, LD } } },
	{ "shll $3,(%rax)", { 0xc1, 0x20, 0x03 }, 3, 3, 1, { { 0x1000, 4, RMW } } },
	{ "shrb (%rax)", { 0xd0, 0x28 }, 2, 2, 1, { { 0x1000, 1, RMW } } },
	{ "xchg %ecx,(%rdi)", { 0x87, 0x0f }, 2, 2, 1, { { 0x4000, 4, RMW } } },
	{ "imul $3,(%rsi),%eax", { 0x6b, 0x06, 0x03 }, 3, 3, 1, { { 0x3000, 4, LD } } },
	{ "movslq (%rsi),%rax", { 0x48, 0x63, 0x06 }, 3, 3, 1, { { 0x3000, 4, LD } } },
	/* strings: one iteration at the current RSI/RDI (RCX = 10H) */
	{ "rep movsb", { 0xf3, 0xa4 }, 2, 2, 2, { { 0x3000, 1, LD }, { 0x4000, 1, ST } } },
	{ "movsq", { 0x48, 0xa5 }, 2, 2, 2, { { 0x3000, 8, LD }, { 0x4000, 8, ST } } },
	{ "stosl", { 0xab }, 1, 1, 1, { { 0x4000, 4, ST } } },
	{ "lodsw", { 0x66, 0xad }, 2, 2, 1, { { 0x3000, 2, LD } } },
	{ "scasb", { 0xae }, 1, 1, 1, { { 0x4000, 1, LD } } },
	{ "repne scasb", { 0xf2, 0xae }, 2, 2, 1, { { 0x4000, 1, LD } } },
	{ "cmpsb", { 0xa6 }, 1, 1, 2, { { 0x3000, 1, LD }, { 0x4000, 1, LD } } },
	{ "fs: movsb (source overridable)", { 0x64, 0xa4 }, 2, 2, 2,
	  { { FS_BASE + 0x3000, 1, LD }, { 0x4000, 1, ST } } },
	{ "fs: stosb (destination is always ES)", { 0x64, 0xaa }, 2, 2, 1, { { 0x4000, 1, ST } } },
	/* segments: SIB 25 = no base, no index, disp32 */
	{ "mov %fs:0x28,%rax", { 0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0 }, 9, 9, 1,
	  { { FS_BASE + 0x28, 8, LD } } },
	{ "mov %gs:(%rax),%ecx", { 0x65, 0x8b, 0x08 }, 3, 3, 1, { { GS_BASE + 0x1000, 4, LD } } },
	{ "ds: ignored in 64-bit mode", { 0x3e, 0x8b, 0x08 }, 3, 3, 1, { { 0x1000, 4, LD } } },
	{ "movabs 0x1122334455667788,%al", { 0xa0, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11 }, 9, 9, 1,
	  { { UINT64_C(0x1122334455667788), 1, LD } } },
	{ "mov %eax,0x1234 (67 A3 moffs32)", { 0x67, 0xa3, 0x34, 0x12, 0, 0 }, 6, 6, 1, { { 0x1234, 4, ST } } },
	/* 0F map */
	{ "cmovz (%rax),%ecx reads always", { 0x0f, 0x44, 0x08 }, 3, 3, 1, { { 0x1000, 4, LD } } },
	{ "sete (%rax)", { 0x0f, 0x94, 0x00 }, 3, 3, 1, { { 0x1000, 1, ST } } },
	{ "movzwl (%rsi),%eax", { 0x0f, 0xb7, 0x06 }, 3, 3, 1, { { 0x3000, 2, LD } } },
	{ "movsbq (%rsi),%rax", { 0x48, 0x0f, 0xbe, 0x06 }, 4, 4, 1, { { 0x3000, 1, LD } } },
	{ "lock cmpxchg %ecx,(%rdi)", { 0xf0, 0x0f, 0xb1, 0x0f }, 4, 4, 1, { { 0x4000, 4, RMW } } },
	{ "xadd %rax,(%rdi)", { 0x48, 0x0f, 0xc1, 0x07 }, 4, 4, 1, { { 0x4000, 8, RMW } } },
	{ "cmpxchg16b (%rdi)", { 0x48, 0x0f, 0xc7, 0x0f }, 4, 4, 1, { { 0x4000, 16, RMW } } },
	{ "btl $3,(%rdi)", { 0x0f, 0xba, 0x27, 0x03 }, 4, 4, 1, { { 0x4000, 4, LD } } },
	{ "btsl $3,(%rdi)", { 0x0f, 0xba, 0x2f, 0x03 }, 4, 4, 1, { { 0x4000, 4, RMW } } },
	{ "bt %eax,%edi: register form", { 0x0f, 0xa3, 0xc7 }, 3, 3, 0, { { 0 } } },
	{ "nopw 0(%rax,%rax,1)", { 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 }, 6, 6, 0, { { 0 } } },
	{ "jnz rel32", { 0x0f, 0x85, 0, 0, 0, 0 }, 6, 6, 0, { { 0 } } },
	{ "movabs $imm64,%rax", { 0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8 }, 10, 10, 0, { { 0 } } },
	{ "mov $imm32,%r8d", { 0x41, 0xb8, 1, 0, 0, 0 }, 6, 6, 0, { { 0 } } },
	{ "pause", { 0xf3, 0x90 }, 2, 2, 0, { { 0 } } },
	{ "rdtsc", { 0x0f, 0x31 }, 2, 2, 0, { { 0 } } },
	{ "mov 0x10(%r8,%r10,2),%rax (REX.WXB)", { 0x4b, 0x8b, 0x44, 0x50, 0x10 }, 5, 5, 1,
	  { { 0x5000 + 0x40 + 0x10, 8, LD } } },
	{ "mov (%r13),%eax: mod 01 disp8 0 (r/m 101 + REX.B)", { 0x41, 0x8b, 0x45, 0x00 }, 4, 4, 1,
	  { { 0, 4, LD } } },
};

static void check_mem(const struct mem_case *c, const struct insn_mem *m)
{
	if (m->status != INSN_MEM_OK || m->len != c->len || m->nops != c->nops)
		print_message("case failed: %s (status %d len %u nops %u)\n", c->what, m->status, m->len, m->nops);
	assert_int_equal(m->status, INSN_MEM_OK);
	assert_int_equal(m->len, c->len);
	assert_int_equal(m->nops, c->nops);
	for (unsigned k = 0; k < c->nops; k++) {
		if (m->op[k].addr != c->op[k].addr || m->op[k].size != c->op[k].size)
			print_message("case failed: %s op %u: %llx/%u\n", c->what, k,
				      (unsigned long long)m->op[k].addr, m->op[k].size);
		assert_int_equal(m->op[k].addr, c->op[k].addr);
		assert_int_equal(m->op[k].size, c->op[k].size);
		assert_int_equal(m->op[k].access, c->op[k].access);
	}
}

static void mem_operands_by_hand(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(mem_cases) / sizeof(mem_cases[0]); i++) {
		struct insn_regs r = regs64();
		struct insn_mem m;

		insn_mem_decode(mem_cases[i].bytes, mem_cases[i].n, true, &r, &m);
		check_mem(&mem_cases[i], &m);
	}
}

/* 67 in 64-bit mode: 32-bit addressing truncates the address (and RIP-relative becomes EIP-relative). */
static void addr32_in_64bit_mode_truncates(void **state)
{
	static const uint8_t eax[] = { 0x67, 0x8b, 0x08 };		/* mov (%eax),%ecx */
	static const uint8_t rax[] = { 0x8b, 0x08 };			/* mov (%rax),%ecx */
	struct insn_regs r = regs64();
	struct insn_mem m;

	(void)state;
	r.gpr[INSN_RAX] = UINT64_C(0x100001000);
	assert_int_equal(insn_mem_decode(eax, sizeof(eax), true, &r, &m), INSN_MEM_OK);
	assert_int_equal(m.op[0].addr, 0x1000);
	assert_int_equal(insn_mem_decode(rax, sizeof(rax), true, &r, &m), INSN_MEM_OK);
	assert_int_equal(m.op[0].addr, UINT64_C(0x100001000));
}

/* A REP string instruction with a zero count does nothing (SDM REP: the count is checked first). */
static void rep_with_zero_count_touches_nothing(void **state)
{
	static const uint8_t rep_movsb[] = { 0xf3, 0xa4 }, movsb[] = { 0xa4 }, rep_movsb32[] = { 0xf3, 0x67, 0xa4 };
	struct insn_regs r = regs64();
	struct insn_mem m;

	(void)state;
	r.gpr[INSN_RCX] = 0;
	assert_int_equal(insn_mem_decode(rep_movsb, sizeof(rep_movsb), true, &r, &m), INSN_MEM_OK);
	assert_int_equal(m.nops, 0);
	assert_int_equal(insn_mem_decode(movsb, sizeof(movsb), true, &r, &m), INSN_MEM_OK);
	assert_int_equal(m.nops, 2);		/* without REP the count does not matter */
	r.gpr[INSN_RCX] = UINT64_C(1) << 32;	/* ECX = 0 under 32-bit addressing */
	assert_int_equal(insn_mem_decode(rep_movsb32, sizeof(rep_movsb32), true, &r, &m), INSN_MEM_OK);
	assert_int_equal(m.nops, 0);
	assert_int_equal(insn_mem_decode(rep_movsb, sizeof(rep_movsb), true, &r, &m), INSN_MEM_OK);
	assert_int_equal(m.nops, 2);
}

/* 32-bit code: segment bases are added, stack operations are 4 bytes, 67 selects Table 2-1. */
static void mem_operands_32bit(void **state)
{
	struct insn_regs r = regs64();
	struct insn_mem m;
	/* 8B 45 04: ModRM mod 01 reg EAX r/m EBP, disp8 4: SS-relative */
	static const uint8_t ebp[] = { 0x8b, 0x45, 0x04 };
	static const uint8_t eax[] = { 0x8b, 0x08 };
	/* 67 8B 40 02: Table 2-1 mod 01 r/m 000 = [BX+SI]+disp8 */
	static const uint8_t bxsi[] = { 0x67, 0x8b, 0x40, 0x02 };
	/* 67 8B 46 02: mod 01 r/m 110 = [BP]+disp8, SS */
	static const uint8_t bp16[] = { 0x67, 0x8b, 0x46, 0x02 };
	static const uint8_t push[] = { 0x50 }, arpl[] = { 0x63, 0x06 }, inc[] = { 0x40 };

	(void)state;
	r.seg_base[INSN_SS] = 0x100000;
	r.seg_base[INSN_DS] = 0x200000;
	assert_int_equal(insn_mem_decode(ebp, sizeof(ebp), false, &r, &m), INSN_MEM_OK);
	assert_int_equal(m.op[0].addr, 0x100000 + 0x8004);
	assert_int_equal(insn_mem_decode(eax, sizeof(eax), false, &r, &m), INSN_MEM_OK);
	assert_int_equal(m.op[0].addr, 0x201000);
	r.gpr[INSN_RBX] = 0xf000;		/* F000H + 3000H + 2 wraps to 16 bits: 2002H */
	assert_int_equal(insn_mem_decode(bxsi, sizeof(bxsi), false, &r, &m), INSN_MEM_OK);
	assert_int_equal(m.len, 4);
	assert_int_equal(m.op[0].addr, 0x200000 + 0x2002);
	assert_int_equal(insn_mem_decode(bp16, sizeof(bp16), false, &r, &m), INSN_MEM_OK);
	assert_int_equal(m.op[0].addr, 0x100000 + 0x8002);
	assert_int_equal(insn_mem_decode(push, sizeof(push), false, &r, &m), INSN_MEM_OK);
	assert_int_equal(m.op[0].addr, 0x100000 + 0x7fec);
	assert_int_equal(m.op[0].size, 4);
	assert_int_equal(insn_mem_decode(arpl, sizeof(arpl), false, &r, &m), INSN_MEM_UNKNOWN);
	assert_int_equal(insn_mem_decode(inc, sizeof(inc), false, &r, &m), INSN_MEM_OK);
	assert_int_equal(m.nops, 0);
}

/*
 * x87 and MMX/SSE/SSE2 register forms (the fpmix workload's, SDM Vol. 2
 * Tables ):
 * known, no memory access, with their lengths (mandatory prefix, imm8).
 */
static void simd_register_forms(void **state)
{
	static const struct { const char *what; uint8_t bytes[5]; uint8_t n; } ok[] = {
		{ "addps %xmm1,%xmm0", { 0x0f, 0x58, 0xc1 }, 3 },
		{ "sqrtsd %xmm1,%xmm0", { 0xf2, 0x0f, 0x51, 0xc1 }, 4 },
		{ "paddd %xmm1,%xmm0", { 0x66, 0x0f, 0xfe, 0xc1 }, 4 },
		{ "movd %eax,%mm0", { 0x0f, 0x6e, 0xc0 }, 3 },
		{ "psrlq $7,%mm2", { 0x0f, 0x73, 0xd2, 0x07 }, 4 },
		{ "cmpps $0,%xmm1,%xmm0", { 0x0f, 0xc2, 0xc1, 0x00 }, 4 },
		{ "pinsrw $1,%eax,%mm0", { 0x0f, 0xc4, 0xc0, 0x01 }, 4 },
		{ "emms", { 0x0f, 0x77 }, 2 },
		{ "fadd %st(1),%st", { 0xd8, 0xc1 }, 2 }, { "fstp %st(0)", { 0xdd, 0xd8 }, 2 },
		{ "fninit", { 0xdb, 0xe3 }, 2 },
		{ "addpd %xmm9,%xmm8 (REX)", { 0x66, 0x45, 0x0f, 0x58, 0xc1 }, 5 },
	};
	struct insn_regs r = regs64();
	struct insn_mem m;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		enum insn_mem_status st = insn_mem_decode(ok[i].bytes, ok[i].n, true, &r, &m);

		if (st != INSN_MEM_OK || m.len != ok[i].n)
			print_message("case failed: %s (status %d, len %u)\n", ok[i].what, st, m.len);
		assert_int_equal(st, INSN_MEM_OK);
		assert_int_equal(m.nops, 0);
		assert_int_equal(m.len, ok[i].n);
		assert_int_equal(insn_length(ok[i].bytes, ok[i].n, true), ok[i].n);
	}
	/* a cut-off imm8 is truncated, not guessed */
	assert_int_equal(insn_mem_decode(ok[4].bytes, 3, true, &r, &m), INSN_MEM_TRUNCATED);
	/* memory forms stay unknown, with their length: fildl (%rsp) */
	assert_int_equal(insn_mem_decode((const uint8_t[]){ 0xdb, 0x04, 0x24 }, 3, true, &r, &m),
			 INSN_MEM_UNKNOWN);
	assert_int_equal(m.len, 3);
}

/*
 * Unknown opcodes and forms are reported as unknown with no operands; the
 * length is still given where the tables know it (len 0 where they do not).
 */
static void unknown_is_never_guessed(void **state)
{
	static const struct { const char *what; uint8_t bytes[4]; uint8_t n, len; } unk[] = {
		{ "int $0x81", { 0xcd, 0x81 }, 2, 2 }, { "int3", { 0xcc }, 1, 1 },
		{ "syscall", { 0x0f, 0x05 }, 2, 2 }, { "iretq", { 0x48, 0xcf }, 2, 2 },
		{ "ud2", { 0x0f, 0x0b }, 2, 2 }, { "fld (%rax) (D9 /0)", { 0xd9, 0x00 }, 2, 2 },
		{ "in (%dx),%al", { 0xec }, 1, 1 }, { "out %al,$0x80", { 0xe6, 0x80 }, 2, 2 },
		{ "insb", { 0x6c }, 1, 1 }, { "enter $0,$0", { 0xc8, 0, 0, 0 }, 4, 4 },
		{ "xlat", { 0xd7 }, 1, 1 }, { "wrmsr", { 0x0f, 0x30 }, 2, 2 },
		{ "lgdt (%rax) (0F 01 /2)", { 0x0f, 0x01, 0x10 }, 3, 3 },
		{ "mov %cr3,%rax", { 0x0f, 0x20, 0xd8 }, 3, 3 },
		{ "far call *(%rax) (FF /3)", { 0xff, 0x18 }, 2, 2 },
		{ "bt %eax,(%rdi)", { 0x0f, 0xa3, 0x07 }, 3, 3 },
		{ "cmpxchg8b register form", { 0x0f, 0xc7, 0xc8 }, 3, 3 },
		{ "FF /7", { 0xff, 0x38 }, 2, 0 }, { "8F /1", { 0x8f, 0x08 }, 2, 0 },
		{ "movaps (%rax),%xmm0", { 0x0f, 0x28, 0x00 }, 3, 3 }, { "push %es (06)", { 0x06 }, 1, 0 },
		{ "maskmovq memory form (#UD)", { 0x0f, 0xf7, 0x00 }, 3, 3 },
		{ "movnti register form (#UD)", { 0x0f, 0xc3, 0xc0 }, 3, 3 },
		{ "pshufb %mm1,%mm0 (0F 38 map)", { 0x0f, 0x38, 0x00, 0xc1 }, 4, 0 },
		{ "VEX (C5)", { 0xc5, 0xf8, 0x77 }, 3, 0 },
	};
	struct insn_regs r = regs64();
	struct insn_mem m;

	(void)state;
	for (size_t i = 0; i < sizeof(unk) / sizeof(unk[0]); i++) {
		enum insn_mem_status st = insn_mem_decode(unk[i].bytes, unk[i].n, true, &r, &m);

		if (st != INSN_MEM_UNKNOWN || m.len != unk[i].len)
			print_message("case failed: %s (status %d, len %u)\n", unk[i].what, st, m.len);
		assert_int_equal(st, INSN_MEM_UNKNOWN);
		assert_int_equal(m.nops, 0);
		assert_int_equal(m.len, unk[i].len);
		assert_int_equal(insn_length(unk[i].bytes, unk[i].n, true), unk[i].len);
	}
}

/*
 * The non-temporal stores (SDM Vol. 2): one store of their size, marked nt
 * for the write-combining buffers; MASKMOVQ/MASKMOVDQU store at DS:rDI.
 */
static void non_temporal_stores(void **state)
{
	static const struct {
		const char *what;
		uint8_t bytes[6];
		unsigned n;
		uint64_t addr;
		uint16_t size;
	} nt[] = {
		{ "movnti %eax,(%rbx)", { 0x0f, 0xc3, 0x03 }, 3, 0x2000, 4 },
		{ "movnti %rax,8(%rbx)", { 0x48, 0x0f, 0xc3, 0x43, 0x08 }, 5, 0x2008, 8 },
		{ "movntps %xmm0,(%rax)", { 0x0f, 0x2b, 0x00 }, 3, 0x1000, 16 },
		{ "movntpd %xmm0,(%rax)", { 0x66, 0x0f, 0x2b, 0x00 }, 4, 0x1000, 16 },
		{ "movntq %mm0,(%rax)", { 0x0f, 0xe7, 0x00 }, 3, 0x1000, 8 },
		{ "movntdq %xmm0,(%rax)", { 0x66, 0x0f, 0xe7, 0x00 }, 4, 0x1000, 16 },
		{ "maskmovq %mm1,%mm0", { 0x0f, 0xf7, 0xc1 }, 3, 0x4000, 8 },
		{ "maskmovdqu %xmm1,%xmm0", { 0x66, 0x0f, 0xf7, 0xc1 }, 4, 0x4000, 16 },
	};
	struct insn_regs r = regs64();
	struct insn_mem m;

	(void)state;
	for (size_t i = 0; i < sizeof(nt) / sizeof(nt[0]); i++) {
		enum insn_mem_status st = insn_mem_decode(nt[i].bytes, nt[i].n, true, &r, &m);

		if (st != INSN_MEM_OK || m.nops != 1 || m.op[0].addr != nt[i].addr ||
		    m.op[0].size != nt[i].size || !m.core.nt)
			print_message("case failed: %s\n", nt[i].what);
		assert_int_equal(st, INSN_MEM_OK);
		assert_int_equal(m.len, nt[i].n);
		assert_int_equal(m.nops, 1);
		assert_int_equal(m.op[0].addr, nt[i].addr);
		assert_int_equal(m.op[0].size, nt[i].size);
		assert_int_equal(m.op[0].access, INSN_STORE);
		assert_int_equal(m.core.nt, 1);
	}
	assert_int_equal(insn_mem_decode((const uint8_t[]){ 0x89, 0x03 }, 2, true, &r, &m), INSN_MEM_OK);
	assert_int_equal(m.core.nt, 0);		/* mov %eax,(%rbx): an ordinary store */
}

static void truncated_mem_bytes(void **state)
{
	static const uint8_t sib[] = { 0x8b, 0x44, 0x8b, 0x10 };
	static const uint8_t imm[] = { 0xc7, 0x05, 0x20, 0, 0, 0, 7, 0, 0, 0 };
	struct insn_regs r = regs64();
	struct insn_mem m;

	(void)state;
	for (size_t n = 0; n < sizeof(sib); n++)
		assert_int_equal(insn_mem_decode(sib, n, true, &r, &m), INSN_MEM_TRUNCATED);
	for (size_t n = 0; n < sizeof(imm); n++)
		assert_int_equal(insn_mem_decode(imm, n, true, &r, &m), INSN_MEM_TRUNCATED);
	assert_int_equal(insn_mem_decode(imm, sizeof(imm), true, &r, &m), INSN_MEM_OK);
	assert_int_equal(insn_length(imm, sizeof(imm), true), 10);
	assert_int_equal(insn_length(imm, sizeof(imm) - 1, true), 0);
	assert_string_equal(insn_access_name(INSN_LOAD_STORE), "load+store");
	assert_string_equal(insn_access_name(0), "?");
}

/* .wltext of arch/x86/64/workloads.S as gas assembles it (objcopy -O binary -j .wltext). */
static const uint8_t wltext[] = {
	0xc3, 0x55, 0x48, 0x89, 0xe5, 0x48, 0x89, 0xf9, 0x31, 0xc0, 0x48, 0x83, 0xc0, 0x01, 0x48, 0x83,
	0xe9, 0x01, 0x75, 0xf6, 0x5d, 0xc3, 0x55, 0x48, 0x89, 0xe5, 0x48, 0x89, 0xf9, 0x31, 0xc0, 0x49,
	0x89, 0xf1, 0x41, 0xb8, 0x01, 0x00, 0x00, 0x00, 0x41, 0xb8, 0x01, 0x00, 0x00, 0x00, 0x4d, 0x85,
	0xc0, 0x75, 0x04, 0x48, 0x83, 0xc0, 0x01, 0x48, 0x83, 0xe9, 0x01, 0x75, 0xeb, 0x5d, 0xc3, 0x55,
	0x48, 0x89, 0xe5, 0x48, 0x89, 0xf9, 0x31, 0xc0, 0x49, 0x89, 0xf1, 0x41, 0xb8, 0x01, 0x00, 0x00,
	0x00, 0x45, 0x31, 0xc0, 0x4d, 0x85, 0xc0, 0x75, 0x04, 0x48, 0x83, 0xc0, 0x01, 0x48, 0x83, 0xe9,
	0x01, 0x75, 0xee, 0x5d, 0xc3, 0x55, 0x48, 0x89, 0xe5, 0x48, 0x89, 0xf9, 0x31, 0xc0, 0x49, 0x89,
	0xf1, 0x41, 0xb8, 0x01, 0x00, 0x00, 0x00, 0x41, 0x83, 0xf0, 0x01, 0x4d, 0x85, 0xc0, 0x75, 0x04,
	0x48, 0x83, 0xc0, 0x01, 0x48, 0x83, 0xe9, 0x01, 0x75, 0xed, 0x5d, 0xc3, 0x55, 0x48, 0x89, 0xe5,
	0x48, 0x89, 0xf9, 0x31, 0xc0, 0x49, 0x89, 0xf1, 0x41, 0xb8, 0x01, 0x00, 0x00, 0x00, 0x4d, 0x89,
	0xca, 0x49, 0xc1, 0xe2, 0x0d, 0x4d, 0x31, 0xd1, 0x4d, 0x89, 0xca, 0x49, 0xc1, 0xea, 0x07, 0x4d,
	0x31, 0xd1, 0x4d, 0x89, 0xca, 0x49, 0xc1, 0xe2, 0x11, 0x4d, 0x31, 0xd1, 0x4d, 0x89, 0xc8, 0x41,
	0x83, 0xe0, 0x01, 0x4d, 0x85, 0xc0, 0x75, 0x04, 0x48, 0x83, 0xc0, 0x01, 0x48, 0x83, 0xe9, 0x01,
	0x75, 0xcc, 0x5d, 0xc3, 0x55, 0x48, 0x89, 0xe5, 0x53, 0x41, 0x54, 0x48, 0x89, 0xfb, 0x49, 0x89,
	0xf4, 0x48, 0x8d, 0x7b, 0xff, 0xe8, 0x0b, 0x00, 0x00, 0x00, 0x49, 0x83, 0xec, 0x01, 0x75, 0xf1,
	0x41, 0x5c, 0x5b, 0x5d, 0xc3, 0x55, 0x48, 0x89, 0xe5, 0x48, 0x85, 0xff, 0x74, 0x09, 0x48, 0x83,
	0xef, 0x01, 0xe8, 0xee, 0xff, 0xff, 0xff, 0x5d, 0xc3, 0x55, 0x48, 0x89, 0xe5, 0x48, 0x89, 0xf9,
	0x31, 0xc0, 0x4c, 0x8d, 0x05, 0x17, 0x00, 0x00, 0x00, 0x4c, 0x8d, 0x0d, 0x08, 0x00, 0x00, 0x00,
	0x41, 0xff, 0xd0, 0x41, 0xff, 0xe1, 0x0f, 0x0b, 0x48, 0x83, 0xe9, 0x01, 0x75, 0xf2, 0x5d, 0xc3,
	0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xc0, 0x01, 0x5d, 0xc3, 0x55, 0x48, 0x89, 0xe5, 0x31, 0xc0,
	0x49, 0x89, 0xcb, 0x45, 0x31, 0xd2, 0x46, 0x0f, 0xb6, 0x04, 0x17, 0x4c, 0x01, 0xc0, 0x49, 0x01,
	0xd2, 0x49, 0x39, 0xf2, 0x72, 0xf0, 0x49, 0x83, 0xeb, 0x01, 0x75, 0xe7, 0x5d, 0xc3, 0x55, 0x48,
	0x89, 0xe5, 0x48, 0x89, 0xf1, 0x48, 0x89, 0xfe, 0x48, 0x01, 0xcf, 0xf3, 0xa4, 0x48, 0x89, 0xc8,
	0x5d, 0xc3, 0x55, 0x48, 0x89, 0xe5, 0x0f, 0x31, 0x48, 0xc1, 0xe2, 0x20, 0x48, 0x09, 0xd0, 0x49,
	0x89, 0xc1, 0xf3, 0x90, 0x0f, 0x31, 0x48, 0xc1, 0xe2, 0x20, 0x48, 0x09, 0xd0, 0x4c, 0x29, 0xc8,
	0x48, 0x39, 0xf8, 0x72, 0xed, 0x5d, 0xc3, 0x55, 0x48, 0x89, 0xe5, 0x9c, 0x0f, 0x31, 0x48, 0xc1,
	0xe2, 0x20, 0x48, 0x09, 0xd0, 0x49, 0x89, 0xc1, 0xfb, 0xf4, 0xfa, 0x0f, 0x31, 0x48, 0xc1, 0xe2,
	0x20, 0x48, 0x09, 0xd0, 0x4c, 0x29, 0xc8, 0x48, 0x39, 0xf8, 0x72, 0xec, 0x9d, 0x5d, 0xc3, 0x55,
	0x48, 0x89, 0xe5, 0x48, 0x89, 0xf9, 0xcd, 0x81, 0x48, 0x83, 0xe9, 0x01, 0x75, 0xf8, 0x5d, 0xc3,
	0x55, 0x48, 0x89, 0xe5, 0x48, 0x8b, 0x07, 0x5d, 0xc3, 0xcc, 0xcd, 0x80, 0x0f, 0x0b,
};

/* Function starts (objdump -d) and the instruction count objdump shows in each. */
static const struct { const char *name; uint16_t start; uint8_t insns; } wl_funcs[] = {
	{ "wl_empty", 0x000, 1 }, { "wl_loop", 0x001, 9 },
	{ "wl_branch_taken", 0x016, 14 }, { "wl_branch_nottaken", 0x03f, 14 },
	{ "wl_branch_alternate", 0x065, 14 }, { "wl_branch_random", 0x08c, 24 },
	{ "wl_calls", 0x0d4, 14 }, { "wl_calls_level", 0x0f5, 8 },
	{ "wl_indirect", 0x109, 13 }, { "wl_indirect_leaf", 0x130, 5 },
	{ "wl_memwalk", 0x13a, 14 }, { "wl_copy", 0x15e, 9 },
	{ "wl_spin", 0x172, 15 }, { "wl_halt", 0x197, 19 },
	{ "wl_synthetic", 0x1bf, 8 }, { "wl_fault_user", 0x1d0, 5 },
	{ "wl_user_trampoline", 0x1d9, 1 }, { "wl_user_exit", 0x1da, 2 }, { "end", sizeof(wltext), 0 },
};

/* Instructions of .wltext that are unknown on purpose (int/ud2), with their objdump length. */
static const struct { uint16_t off; uint8_t len; } wl_unknown[] = {
	{ 0x126, 2 }, { 0x1c6, 2 }, { 0x1d9, 1 }, { 0x1da, 2 }, { 0x1dc, 2 },
};

static int wl_unknown_len(size_t off)
{
	for (size_t k = 0; k < sizeof(wl_unknown) / sizeof(wl_unknown[0]); k++)
		if (wl_unknown[k].off == off)
			return wl_unknown[k].len;
	return -1;
}

/*
 * Every workload decodes instruction by instruction from its first byte to
 * the next function's first byte, with objdump's instruction count; only
 * the int/ud2 instructions are unknown.
 */
static void workload_bytes_decode_end_to_end(void **state)
{
	struct insn_regs r = regs64();
	struct insn_mem m;

	(void)state;
	for (size_t f = 0; f + 1 < sizeof(wl_funcs) / sizeof(wl_funcs[0]); f++) {
		size_t off = wl_funcs[f].start, end = wl_funcs[f + 1].start;
		unsigned count = 0;

		while (off < end) {
			enum insn_mem_status st = insn_mem_decode(&wltext[off], sizeof(wltext) - off, true, &r, &m);
			int ulen = wl_unknown_len(off);

			if (ulen > 0) {
				assert_int_equal(st, INSN_MEM_UNKNOWN);
				assert_int_equal(m.len, ulen);	/* int/ud2: length known, accesses not */
				off += (size_t)ulen;
			} else {
				if (st != INSN_MEM_OK)
					print_message("%s+%#zx: status %d\n", wl_funcs[f].name, off - wl_funcs[f].start, st);
				assert_int_equal(st, INSN_MEM_OK);
				off += m.len;
			}
			count++;
		}
		if (off != end || count != wl_funcs[f].insns)
			print_message("%s: ended at %#zx, %u instructions\n", wl_funcs[f].name, off, count);
		assert_int_equal(off, end);
		assert_int_equal(count, wl_funcs[f].insns);
	}
}

/* The workloads' memory instructions, with the registers they run with. */
static void workload_memory_operands(void **state)
{
	struct insn_regs r = regs64();
	struct insn_mem m;

	(void)state;
	/* wl_memwalk+0xc: 46 0f b6 04 17 movzbl (%rdi,%r10,1),%r8d: RDI 4000H + R10 20H */
	assert_int_equal(insn_mem_decode(&wltext[0x146], 5, true, &r, &m), INSN_MEM_OK);
	assert_int_equal(m.len, 5);
	assert_int_equal(m.nops, 1);
	assert_int_equal(m.op[0].addr, 0x4020);
	assert_int_equal(m.op[0].size, 1);
	assert_int_equal(m.op[0].access, INSN_LOAD);
	/* wl_copy+0xd: f3 a4 rep movsb, one iteration */
	assert_int_equal(insn_mem_decode(&wltext[0x16b], 2, true, &r, &m), INSN_MEM_OK);
	assert_int_equal(m.nops, 2);
	assert_int_equal(m.op[0].addr, 0x3000);
	assert_int_equal(m.op[1].addr, 0x4000);
	assert_int_equal(m.op[1].access, INSN_STORE);
	/* wl_indirect+0x9: 4c 8d 05 17 00 00 00 lea 0x17(%rip),%r8: no access */
	r.rip = 0x112;
	assert_int_equal(insn_mem_decode(&wltext[0x112], 7, true, &r, &m), INSN_MEM_OK);
	assert_int_equal(m.nops, 0);
	/* wl_indirect+0x17: 41 ff d0 call *%r8: the return address is pushed */
	assert_int_equal(insn_mem_decode(&wltext[0x120], 3, true, &r, &m), INSN_MEM_OK);
	assert_int_equal(m.nops, 1);
	assert_int_equal(m.op[0].addr, 0x7fe8);
	assert_int_equal(m.op[0].access, INSN_STORE);
	/* wl_fault_user+0x4: 48 8b 07 mov (%rdi),%rax */
	assert_int_equal(insn_mem_decode(&wltext[0x1d4], 3, true, &r, &m), INSN_MEM_OK);
	assert_int_equal(m.op[0].addr, 0x4000);
	assert_int_equal(m.op[0].size, 8);
	/* wl_halt+0x4: 9c pushfq */
	assert_int_equal(insn_mem_decode(&wltext[0x19b], 1, true, &r, &m), INSN_MEM_OK);
	assert_int_equal(m.op[0].addr, 0x7fe8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(classifies_every_case),
		cmocka_unit_test(cr3_writes_are_flagged),
		cmocka_unit_test(classify_gives_the_simd_class),
		cmocka_unit_test(all_sixteen_conditions),
		cmocka_unit_test(truncated_bytes_are_refused),
		cmocka_unit_test(fifteen_prefixes_are_too_long),
		cmocka_unit_test(names),
		cmocka_unit_test(mem_operands_by_hand),
		cmocka_unit_test(addr32_in_64bit_mode_truncates),
		cmocka_unit_test(rep_with_zero_count_touches_nothing),
		cmocka_unit_test(mem_operands_32bit),
		cmocka_unit_test(simd_register_forms),
		cmocka_unit_test(unknown_is_never_guessed),
		cmocka_unit_test(non_temporal_stores),
		cmocka_unit_test(truncated_mem_bytes),
		cmocka_unit_test(workload_bytes_decode_end_to_end),
		cmocka_unit_test(workload_memory_operands),
	};

	return cmocka_run_group_tests_name("insn", tests, NULL, NULL);
}
