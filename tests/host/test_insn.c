/*
 * test_insn.c - the branch classifier against hand-assembled instructions.
 *
 * Each byte sequence is written from the SDM Vol. 2 opcode map (Appendix A,
 * Tables) and ModRM/SIB tables (2-1 to 2-3); the expected kind and
 * length come from those tables, not from running the decoder.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "arch/x86/insn.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(classifies_every_case),
		cmocka_unit_test(all_sixteen_conditions),
		cmocka_unit_test(truncated_bytes_are_refused),
		cmocka_unit_test(fifteen_prefixes_are_too_long),
		cmocka_unit_test(names),
	};

	return cmocka_run_group_tests_name("insn", tests, NULL, NULL);
}
