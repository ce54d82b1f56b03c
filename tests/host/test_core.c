/*
 * test_core.c - pmu/model/p4_core.c fed by the step engine's decoder
 * (arch/x86/insn.c): dependent chains cost the latencies measured on real
 * parts (InstLatx64, cited in p4_core.c), pointer chases their load-to-use,
 * the branch predictor and its penalty, the quirks the decoder flags.
 *
 * A chain's cost is measured as bench does: the clockticks of 2N copies
 * less those of N, over N, so that the warm-up cancels.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "arch/x86/insn.h"
#include "pmu/model/p4_core.h"
#include "pmu/model/p4_mem.h"

static struct p4_core core;		/* large: static */
static const struct p4_sig nw = { 0x0f, 0x02, 9 }, pr = { 0x0f, 0x04, 3 };

static struct p4_insn decode(const uint8_t *b, size_t n)
{
	static const struct insn_regs regs;
	struct insn_mem m;

	insn_mem_decode(b, n, true, &regs, &m);
	assert_int_not_equal(m.status, INSN_MEM_TRUNCATED);
	return m.core;
}

/* Clockticks of `copies` copies of one instruction (loads found at level, 0xff: none). */
static uint64_t run(const uint8_t *b, size_t n, unsigned copies, uint8_t level, uint8_t walks)
{
	struct p4_insn k = decode(b, n);
	struct p4_core_in in = { .insn = &k, .load_level = level, .walks = walks,
				 .fetch_level = P4_LVL_L2, .iters = 1, .loads = level != 0xff };
	struct p4_core_out out;
	uint64_t sum = 0;

	for (unsigned i = 0; i < copies; i++) {
		p4_core_step(&core, &in, &out);
		sum += out.cycles;
	}
	return sum;
}

/* Per-copy cost of a chain on the part of sig, times 100 (two decimals, as bench shows). */
static uint64_t per_copy_x100(const struct p4_sig *sig, const uint8_t *b, size_t n, uint8_t level,
			      uint8_t walks)
{
	uint64_t one, two;

	p4_core_init(&core, p4_core_part_for(sig));
	one = run(b, n, 200, level, walks);
	p4_core_init(&core, p4_core_part_for(sig));
	two = run(b, n, 400, level, walks);
	return (two - one) * 100 / 200;
}

static void dependent_chains_cost_the_measured_latencies(void **state)
{
	static const struct {
		const char *what;
		uint8_t b[4];
		size_t n;
		uint64_t nw, pr;	/* x100 */
	} rows[] = {
		{ "imul eax, eax", { 0x0f, 0xaf, 0xc0 }, 3, 1500, 1000 },
		{ "add eax, ebx", { 0x01, 0xd8 }, 2, 50, 100 },
		{ "shl eax, 3", { 0xc1, 0xe0, 0x03 }, 3, 400, 100 },
		{ "fadd st0, st0", { 0xd8, 0xc0 }, 2, 500, 600 },
		{ "addsd xmm0, xmm0", { 0xf2, 0x0f, 0x58, 0xc0 }, 4, 400, 500 },
		{ "mulsd xmm0, xmm0", { 0xf2, 0x0f, 0x59, 0xc0 }, 4, 600, 700 },
		{ "fmul st0, st0", { 0xd8, 0xc8 }, 2, 700, 800 },
		{ "adc eax, ebx", { 0x11, 0xd8 }, 2, 700, 1000 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		print_message("%s\n", rows[i].what);
		assert_int_equal(per_copy_x100(&nw, rows[i].b, rows[i].n, 0xff, 0), rows[i].nw);
		assert_int_equal(per_copy_x100(&pr, rows[i].b, rows[i].n, 0xff, 0), rows[i].pr);
	}
}

static void independent_adds_retire_three_a_clock(void **state)
{
	static const uint8_t add_eax_imm[] = { 0x83, 0xc1, 0x01 };	/* add ecx, 1: a chain */
	static const uint8_t mov_imm[] = { 0xb8, 1, 0, 0, 0 };		/* mov eax, 1: none */

	(void)state;
	assert_int_equal(per_copy_x100(&nw, add_eax_imm, 3, 0xff, 0), 50);
	/* 3 uops retire a clock: one third each (the difference over 200 rounds down) */
	assert_in_range(per_copy_x100(&nw, mov_imm, 5, 0xff, 0), 33, 34);
	assert_in_range(per_copy_x100(&pr, mov_imm, 5, 0xff, 0), 33, 34);
}

static void pointer_chases_cost_the_load_to_use(void **state)
{
	static const uint8_t chase[] = { 0x48, 0x8b, 0x00 };	/* mov rax, [rax] */

	(void)state;
	assert_int_equal(per_copy_x100(&nw, chase, 3, P4_LVL_L1, 0), 200);
	assert_int_equal(per_copy_x100(&pr, chase, 3, P4_LVL_L1, 0), 400);
	assert_int_equal(per_copy_x100(&nw, chase, 3, P4_LVL_L2, 0), 1900);
	assert_int_equal(per_copy_x100(&pr, chase, 3, P4_LVL_L2, 0), 2800);
	/* a random chase over 16 MiB: memory and a DTLB miss each */
	assert_int_equal(per_copy_x100(&nw, chase, 3, P4_LVL_MEM, 1), 36500);
	assert_int_equal(per_copy_x100(&pr, chase, 3, P4_LVL_MEM, 1), 39200);
}

/* A conditional branch at rip, backward or forward, taken or not; its mispredict. */
static bool branch(uint64_t rip, bool backward, bool taken, uint32_t *cycles)
{
	uint8_t b[2] = { 0x75, backward ? 0xf0 : 0x10 };	/* jnz */
	struct p4_insn k = decode(b, 2);
	struct p4_core_in in = { .insn = &k, .load_level = 0xff, .fetch_level = P4_LVL_L2,
				 .iters = 1 };
	struct p4_core_out out;
	uint64_t target = taken ? rip + 2 + (backward ? -16 : 16) : rip + 2;
	bool mis;

	p4_core_step(&core, &in, &out);
	mis = p4_core_predict(&core, &k, P4_BR_COND, taken, rip, target, rip + 2, out.done);
	if (cycles)
		*cycles = out.cycles;
	return mis;
}

static void static_prediction_then_history(void **state)
{
	(void)state;
	p4_core_init(&core, p4_core_part_for(&nw));
	assert_true(branch(0x1000, false, true, NULL));		/* BTB miss: forward not taken */
	assert_false(branch(0x2000, true, true, NULL));		/* BTB miss: backward taken */
	assert_true(branch(0x3000, true, false, NULL));
	/* a loop branch taken again and again: predicted once the counter learned it */
	for (int i = 0; i < 20; i++)
		branch(0x4000, true, true, NULL);
	assert_false(branch(0x4000, true, true, NULL));
}

static void random_branches_mispredict_half_and_cost_the_penalty(void **state)
{
	static const uint8_t alu[] = { 0x01, 0xd8 };
	uint64_t x = 12345, mis = 0, cyc_rand = 0, cyc_taken = 0;

	(void)state;
	p4_core_init(&core, p4_core_part_for(&nw));
	for (int i = 0; i < 2000; i++) {
		uint32_t c;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		cyc_rand += run(alu, 2, 4, 0xff, 0);
		mis += branch(0x5000, false, x & 1, &c);
		cyc_rand += c;
	}
	assert_in_range(mis, 800, 1200);
	p4_core_init(&core, p4_core_part_for(&nw));
	for (int i = 0; i < 2000; i++) {
		uint32_t c;

		cyc_taken += run(alu, 2, 4, 0xff, 0);
		branch(0x5000, false, true, &c);
		cyc_taken += c;
	}
	/* each mispredict costs the 30-clock penalty (>= 24 measured), give or take the overlap */
	assert_in_range((cyc_rand - cyc_taken) / mis, 24, 32);
}

static void decoder_flags_the_quirks(void **state)
{
	static const uint8_t fldcw[] = { 0xd9, 0x28 }, mfence[] = { 0x0f, 0xae, 0xf0 },
			     emms[] = { 0x0f, 0x77 }, movups_st[] = { 0x0f, 0x11, 0x00 },
			     fsave[] = { 0xdd, 0x30 }, add[] = { 0x01, 0xd8 },
			     frstor[] = { 0xdd, 0x20 }, lfence[] = { 0x0f, 0xae, 0xe8 },
			     enter0[] = { 0xc8, 0x10, 0x00, 0x00 }, enter1[] = { 0xc8, 0x10, 0x00, 0x01 },
			     enter3[] = { 0xc8, 0x10, 0x00, 0x03 };
	struct p4_insn k;

	(void)state;
	assert_true(decode(fldcw, 2).flags & P4_IF_RETIRES_TWO);
	assert_true(decode(emms, 2).flags & P4_IF_RETIRES_TWO);
	k = decode(mfence, 3);
	assert_true(k.flags & P4_IF_RETIRES_TWO);
	assert_int_equal(k.uc_stores, 1);
	assert_false(decode(lfence, 3).flags & P4_IF_RETIRES_TWO);
	k = decode(movups_st, 3);
	assert_int_equal(k.uc_loads, 1);
	assert_int_equal(k.uc_stores, 2);
	assert_int_equal(decode(fsave, 2).uc_stores, 23);
	k = decode(frstor, 2);
	assert_int_equal(k.uc_loads, 23);
	assert_true(k.flags & P4_IF_RETIRES_TWO);
	/* ENTER: a store per nesting level beyond the architectural ones */
	k = decode(enter0, 4);
	assert_int_equal(k.uc_stores, 1);
	assert_int_equal(k.uc_loads, 0);
	k = decode(enter1, 4);
	assert_int_equal(k.uc_stores, 3);		/* push rbp, push the frame pointer, +1 */
	k = decode(enter3, 4);
	assert_int_equal(k.uc_stores, 7);		/* 1 + 2 copies + 1, +3 */
	assert_int_equal(k.uc_loads, 2);
	k = decode(add, 2);
	assert_int_equal(k.flags & P4_IF_RETIRES_TWO, 0);
	assert_int_equal(k.dst, P4_R_GPR + 0);
	assert_int_equal(k.src[0], P4_R_GPR + 3);
	assert_int_equal(k.src[1], P4_R_GPR + 0);	/* the destination is read: a chain */
}

static void rep_strings_count_microcode_operations(void **state)
{
	unsigned l, s;

	(void)state;
	p4_core_rep_tags('m', 1024, 1, false, &l, &s);
	assert_int_equal(l, 64);
	assert_int_equal(s, 64);
	p4_core_rep_tags('m', 65535, 1, false, &l, &s);
	assert_int_equal(l, 4155);
	p4_core_rep_tags('m', 64, 1, false, &l, &s);
	assert_int_equal(l, 4);
	p4_core_rep_tags('m', 2, 1, false, &l, &s);
	assert_int_equal(l, 3);
	p4_core_rep_tags('m', 5, 1, false, &l, &s);
	assert_int_equal(l, 8);
	p4_core_rep_tags('m', 4096, 4, false, &l, &s);	/* 16 KiB of dwords */
	assert_int_equal(l, 1024);
	p4_core_rep_tags('s', 16384, 1, false, &l, &s);
	assert_int_equal(s, 1024);
	assert_int_equal(l, 0);
	p4_core_rep_tags('s', 100, 4, true, &l, &s);
	assert_int_equal(s, 100);
	p4_core_rep_tags('c', 10, 1, false, &l, &s);
	assert_int_equal(l, 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dependent_chains_cost_the_measured_latencies),
		cmocka_unit_test(independent_adds_retire_three_a_clock),
		cmocka_unit_test(pointer_chases_cost_the_load_to_use),
		cmocka_unit_test(static_prediction_then_history),
		cmocka_unit_test(random_branches_mispredict_half_and_cost_the_penalty),
		cmocka_unit_test(decoder_flags_the_quirks),
		cmocka_unit_test(rep_strings_count_microcode_operations),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
