/*
 * test_snippet.c - bench's code generator and difference arithmetic
 * (workload/snippet.c).
 *
 * The generated function is checked three ways: its bytes against the
 * listing in workload/snippet.h (encodings from the SDM Vol. 2 pages), its
 * instruction boundaries with the kernel's own decoder (insn_length), and
 * by running it on this x86-64 host: a snippet that adds 1 to RAX after an
 * init that clears it returns N * U, and one that clobbers every
 * callee-saved register but R15 leaves them as they were.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <cmocka.h>

#include "arch/x86/insn.h"
#include "workload/snippet.h"

static uint8_t buf[SNIPPET_AREA_SIZE];
static char err[256];

static const uint8_t add_rax_1[] = { 0x48, 0x83, 0xc0, 0x01 };	/* add rax, 1 */
static const uint8_t xor_eax[] = { 0x31, 0xc0 };		/* xor eax, eax */

static void hex_parses_pairs_of_either_case(void **state)
{
	uint8_t out[4];
	size_t n = 99;

	(void)state;
	assert_int_equal(snippet_parse_hex("01d8aBFf", out, sizeof(out), &n, err, sizeof(err)), 0);
	assert_int_equal(n, 4);
	assert_int_equal(out[0], 0x01);
	assert_int_equal(out[1], 0xd8);
	assert_int_equal(out[2], 0xab);
	assert_int_equal(out[3], 0xff);
	assert_int_equal(snippet_parse_hex("", out, sizeof(out), &n, err, sizeof(err)), 0);
	assert_int_equal(n, 0);
}

static void bad_hex_is_an_error_that_writes_nothing(void **state)
{
	uint8_t out[4] = { 0x11, 0x22, 0x33, 0x44 };
	size_t n = 99;

	(void)state;
	assert_int_equal(snippet_parse_hex("01d", out, sizeof(out), &n, err, sizeof(err)), -1);
	assert_string_equal(err, "odd number of hex digits (3): bytes are two digits each");
	assert_int_equal(snippet_parse_hex("01 d8", out, sizeof(out), &n, err, sizeof(err)), -1);
	assert_string_equal(err, "' ' at position 3 is not a hex digit");
	assert_int_equal(snippet_parse_hex("0x01", out, sizeof(out), &n, err, sizeof(err)), -1);
	assert_string_equal(err, "'x' at position 2 is not a hex digit");
	assert_int_equal(snippet_parse_hex("0102030405", out, sizeof(out), &n, err, sizeof(err)), -1);
	assert_string_equal(err, "5 bytes, at most 4");
	assert_int_equal(n, 99);
	assert_int_equal(out[0], 0x11);
	assert_int_equal(out[3], 0x44);
}

static void generated_bytes_follow_the_listing(void **state)
{
	static const uint8_t body[] = { 0x01, 0xd8 };	/* add eax, ebx */
	static const uint8_t want[] = {
		0x53, 0x55, 0x41, 0x54, 0x41, 0x55, 0x41, 0x56, 0x41, 0x57,
		0x31, 0xc0,				/* init */
		0x49, 0xc7, 0xc7, 0x2a, 0x00, 0x00, 0x00,	/* mov r15, 42 */
		0x01, 0xd8, 0x01, 0xd8, 0x01, 0xd8,	/* U = 3 copies */
		0x49, 0xff, 0xcf,			/* dec r15 */
		0x0f, 0x85, 0xf1, 0xff, 0xff, 0xff,	/* jnz -15: back to the first copy */
		0x41, 0x5f, 0x41, 0x5e, 0x41, 0x5d, 0x41, 0x5c, 0x5d, 0x5b, 0xc3,
	};
	struct snippet_code c = { true, xor_eax, sizeof(xor_eax), body, sizeof(body) };
	size_t len;

	(void)state;
	len = snippet_build(&c, 3, 42, buf, sizeof(buf), err, sizeof(err));
	assert_int_equal(len, sizeof(want));
	assert_int_equal(snippet_size(&c, 3), sizeof(want));
	assert_memory_equal(buf, want, sizeof(want));
}

static void ia32_keeps_the_counter_on_the_stack(void **state)
{
	static const uint8_t body[] = { 0x01, 0xd8 };	/* add eax, ebx */
	static const uint8_t want[] = {
		0x53, 0x55, 0x56, 0x57,			/* push ebx, ebp, esi, edi */
		0x68, 0x05, 0x00, 0x00, 0x00,		/* push 5 */
		0x01, 0xd8, 0x01, 0xd8,			/* U = 2 copies */
		0xff, 0x0c, 0x24,			/* dec dword [esp] */
		0x0f, 0x85, 0xf3, 0xff, 0xff, 0xff,	/* jnz -13 */
		0x83, 0xc4, 0x04,			/* add esp, 4 */
		0x5f, 0x5e, 0x5d, 0x5b, 0xc3,
	};
	struct snippet_code c = { false, NULL, 0, body, sizeof(body) };
	size_t len = snippet_build(&c, 2, 5, buf, sizeof(buf), err, sizeof(err)), at = 0;

	(void)state;
	assert_int_equal(len, sizeof(want));
	assert_int_equal(snippet_size(&c, 2), sizeof(want));
	assert_memory_equal(buf, want, sizeof(want));
	while (at < len && insn_length(buf + at, len - at, false))
		at += insn_length(buf + at, len - at, false);
	assert_int_equal(at, len);
	/* 41 is INC ECX in 32-bit mode, a one-byte instruction, not a prefix */
	assert_int_equal(snippet_check_boundary((const uint8_t *)"\x41\x83\xc0", 3, false, err,
						sizeof(err)), -1);
	assert_string_equal(err, "the instruction at byte 1 is cut off (needs 3 bytes, has 2)");
}

static void every_instruction_boundary_decodes(void **state)
{
	struct snippet_code c = { true, xor_eax, sizeof(xor_eax), add_rax_1, sizeof(add_rax_1) };
	size_t len = snippet_build(&c, 5, 1000, buf, sizeof(buf), err, sizeof(err)), at = 0;
	unsigned count = 0;

	(void)state;
	assert_true(len > 0);
	while (at < len) {
		size_t l = insn_length(buf + at, len - at, true);

		assert_true(l > 0);
		at += l;
		count++;
	}
	assert_int_equal(at, len);
	/* 6 push, 1 init, mov, 5 copies, dec, jnz, 6 pop, ret */
	assert_int_equal(count, 6 + 1 + 1 + 5 + 2 + 7);
}

static void a_cut_off_instruction_is_found(void **state)
{
	static const uint8_t whole[] = { 0x01, 0xd8, 0x48, 0x83, 0xc0, 0x01 };	/* add; add rax, 1 */
	static const uint8_t cut[] = { 0x01, 0xd8, 0x48, 0x83, 0xc0 };		/* imm8 missing */
	static const uint8_t sse[] = { 0x0f, 0x58, 0xc1 };	/* addps %xmm1,%xmm0 */
	static const uint8_t ssse3[] = { 0x0f, 0x38, 0x00, 0xc1 };	/* pshufb: not in the decoder's tables */

	(void)state;
	assert_int_equal(snippet_check_boundary(whole, sizeof(whole), true, err, sizeof(err)), 0);
	assert_int_equal(snippet_check_boundary(cut, sizeof(cut), true, err, sizeof(err)), -1);
	assert_string_equal(err, "the instruction at byte 2 is cut off (needs 4 bytes, has 3)");
	assert_int_equal(snippet_check_boundary(whole, 1, true, err, sizeof(err)), -1);
	assert_string_equal(err, "the instruction at byte 0 is cut off (needs 2 bytes, has 1)");
	assert_int_equal(snippet_check_boundary(ssse3, sizeof(ssse3), true, err, sizeof(err)), 1);
	assert_int_equal(snippet_check_boundary(sse, sizeof(sse), true, err, sizeof(err)), 0);
	assert_int_equal(snippet_check_boundary(sse, 2, true, err, sizeof(err)), -1);
	assert_string_equal(err, "the instruction at byte 0 is cut off (needs 3 bytes, has 2)");
	assert_int_equal(snippet_check_boundary(whole, 0, true, err, sizeof(err)), 0);
}

static void limits_are_errors(void **state)
{
	struct snippet_code c = { true, NULL, 0, add_rax_1, sizeof(add_rax_1) };

	(void)state;
	assert_int_equal(snippet_build(&c, 0, 10, buf, sizeof(buf), err, sizeof(err)), 0);
	assert_int_equal(snippet_build(&c, 1, 0, buf, sizeof(buf), err, sizeof(err)), 0);
	assert_int_equal(snippet_build(&c, 1, SNIPPET_N_MAX + 1, buf, sizeof(buf), err, sizeof(err)), 0);
	assert_int_equal(snippet_build(&c, SNIPPET_U_MAX + 1, 1, buf, sizeof(buf), err, sizeof(err)), 0);
	/* 1000 x 4 bytes plus 37 bytes of loop */
	assert_int_equal(snippet_build(&c, 1000, 1, buf, sizeof(buf), err, sizeof(err)), 0);
	assert_string_equal(err, "the generated code (4037 bytes: 1000 x 4 snippet bytes, 0 init and "
			    "37 of loop) does not fit the 3072-byte snippet area");
	/* the largest unroll that fits: 758 x 4 + 37 = 3069 */
	assert_int_equal(snippet_build(&c, 759, 1, buf, sizeof(buf), err, sizeof(err)), 0);
	assert_int_equal(snippet_build(&c, 758, 1, buf, sizeof(buf), err, sizeof(err)), 3069);
}

/* Copy to an executable page and call it. */
static uint64_t run(const uint8_t *code, size_t len)
{
	uint8_t *page = mmap(NULL, SNIPPET_AREA_SIZE, PROT_READ | PROT_WRITE | PROT_EXEC,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t r;

	assert_true(page != MAP_FAILED);
	memcpy(page, code, len);
	r = ((uint64_t (*)(void))(uintptr_t)page)();
	munmap(page, SNIPPET_AREA_SIZE);
	return r;
}

static void generated_loop_runs_n_times_u(void **state)
{
	static const struct { unsigned u; uint64_t n; } cases[] = { { 1, 1 }, { 1, 100 }, { 4, 25 },
								     { 7, 1000 }, { 758, 3 } };
	struct snippet_code c = { true, xor_eax, sizeof(xor_eax), add_rax_1, sizeof(add_rax_1) };

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = snippet_build(&c, cases[i].u, cases[i].n, buf, sizeof(buf), err, sizeof(err));

		assert_true(len > 0);
		assert_int_equal(run(buf, len), cases[i].n * cases[i].u);
	}
}

static void callee_saved_registers_survive(void **state)
{
	/* xor ebx,ebx; xor ebp,ebp; xor r12d..r14d; mov eax, 7 */
	static const uint8_t body[] = { 0x31, 0xdb, 0x31, 0xed, 0x45, 0x31, 0xe4, 0x45, 0x31, 0xed,
					0x45, 0x31, 0xf6, 0xb8, 0x07, 0x00, 0x00, 0x00 };
	struct snippet_code c = { true, NULL, 0, body, sizeof(body) };
	size_t len = snippet_build(&c, 3, 5, buf, sizeof(buf), err, sizeof(err));
	uint64_t rbx = 0x1111, ret;

	(void)state;
	assert_true(len > 0);
	/* a value kept in RBX across the call (the caller's code relies on the others too) */
	__asm__ volatile("" : "+b"(rbx));
	ret = run(buf, len);
	__asm__ volatile("" : "+b"(rbx));
	assert_int_equal(ret, 7);
	assert_int_equal(rbx, 0x1111);
}

static void difference_gives_hundredths(void **state)
{
	(void)state;
	assert_int_equal(snippet_per_iter(1000, 1100, 100, 1), 100);		/* 1.00 */
	assert_int_equal(snippet_per_iter(5000, 5400, 20, 4), 500);		/* 5.00 */
	assert_int_equal(snippet_per_iter(10, 11, 3, 1), 33);			/* 0.33 */
	assert_int_equal(snippet_per_iter(10, 12, 3, 1), 67);			/* 0.67 */
	assert_int_equal(snippet_per_iter(0, 1, 200, 1), 1);			/* 0.005 -> 0.01 */
	assert_int_equal(snippet_per_iter(0, 1, 201, 1), 0);
	assert_int_equal(snippet_per_iter(1100, 1000, 100, 1), -100);		/* -1.00 */
	assert_int_equal(snippet_per_iter(7, 7, 100, 4), 0);
	/* overhead cancels: (k*2UN + C) - (k*UN + C) = k*UN */
	for (unsigned k = 1; k <= 5; k++)
		assert_int_equal(snippet_per_iter(k * 4 * 25 + 123, k * 8 * 25 + 123, 25, 4), k * 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hex_parses_pairs_of_either_case),
		cmocka_unit_test(bad_hex_is_an_error_that_writes_nothing),
		cmocka_unit_test(generated_bytes_follow_the_listing),
		cmocka_unit_test(ia32_keeps_the_counter_on_the_stack),
		cmocka_unit_test(every_instruction_boundary_decodes),
		cmocka_unit_test(a_cut_off_instruction_is_found),
		cmocka_unit_test(limits_are_errors),
		cmocka_unit_test(generated_loop_runs_n_times_u),
		cmocka_unit_test(callee_saved_registers_survive),
		cmocka_unit_test(difference_gives_hundredths),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
