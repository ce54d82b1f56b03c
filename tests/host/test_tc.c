/*
 * test_tc.c - pmu/model/p4_tc.c, the trace cache, against outcomes worked
 * out by hand from its rules: lines of 6 uop slots and 6 instructions that
 * end at a taken branch, found by their first instruction, 256 sets of 8
 * ways (set = bits 6-13 of the head: heads 16 KB apart share a set), LRU;
 * a store into code a line holds flushes everything.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "pmu/model/p4_tc.h"

#define CODE		UINT64_C(0x100000)
#define SET_PERIOD	(UINT64_C(1) << 14)	/* 256 sets x 64 bytes */

static struct p4_tc tc;			/* large: static */

/* One instruction through the trace cache, as the memory feed does it. */
static enum p4_tc_outcome step(unsigned lp, uint64_t rip, unsigned len, unsigned slots, bool taken)
{
	if (p4_tc_deliver(&tc, p4_tc_cursor(&tc, lp), rip, len))
		return P4_TC_DELIVER;
	return p4_tc_fetch(&tc, lp, rip, len, slots, taken);
}

/* The loop workload's body: add (3 bytes), sub (4), jnz back (2), one uop each. */
static unsigned loop_pass(unsigned lp, unsigned *misses, unsigned *built)
{
	enum p4_tc_outcome o[3] = {
		step(lp, CODE, 3, 1, false), step(lp, CODE + 3, 4, 1, false),
		step(lp, CODE + 7, 2, 1, true),
	};
	unsigned delivered = 0;

	for (unsigned i = 0; i < 3; i++) {
		*misses += o[i] == P4_TC_MISS;
		*built += o[i] == P4_TC_BUILD;
		delivered += o[i] == P4_TC_DELIVER;
	}
	return delivered;
}

static void cold_loop_misses_once_then_delivers(void **state)
{
	unsigned misses = 0, built = 0;

	(void)state;
	p4_tc_flush(&tc);
	assert_int_equal(loop_pass(0, &misses, &built), 0);
	assert_int_equal(misses, 1);		/* one line: 3 slots, ended by the taken jnz */
	assert_int_equal(built, 2);
	assert_int_equal(p4_tc_lines(&tc), 1);
	for (unsigned i = 0; i < 100; i++)
		assert_int_equal(loop_pass(0, &misses, &built), 3);
	assert_int_equal(misses, 1);
	assert_int_equal(built, 2);
}

static void a_line_holds_six_slots(void **state)
{
	(void)state;
	p4_tc_flush(&tc);
	/* seven one-uop instructions of 2 bytes: 6 in the first line, the 7th starts another */
	for (unsigned i = 0; i < 7; i++)
		assert_int_equal(step(0, CODE + 2 * i, 2, 1, false),
				 i == 0 || i == 6 ? P4_TC_MISS : P4_TC_BUILD);
	/* 2 + 3 slots fit, a 4-slot instruction (a store with a load) does not: 2 lines */
	p4_tc_flush(&tc);
	assert_int_equal(step(0, CODE, 2, 2, false), P4_TC_MISS);
	assert_int_equal(step(0, CODE + 2, 2, 3, false), P4_TC_BUILD);
	assert_int_equal(step(0, CODE + 4, 2, 4, false), P4_TC_MISS);
	/* more than 6 slots take a line alone, as 6 */
	p4_tc_flush(&tc);
	assert_int_equal(step(0, CODE, 2, 9, false), P4_TC_MISS);
	assert_int_equal(step(0, CODE + 2, 2, 1, false), P4_TC_MISS);
	assert_int_equal(p4_tc_lines(&tc), 2);
}

static void a_branch_the_other_way_looks_up_its_target(void **state)
{
	(void)state;
	p4_tc_flush(&tc);
	/* built with a not-taken jcc at CODE + 2: one line of three */
	step(0, CODE, 2, 1, false);
	step(0, CODE + 2, 2, 1, false);
	assert_int_equal(step(0, CODE + 4, 2, 1, true), P4_TC_BUILD);
	/* the line again, now the jcc goes to CODE + 0x40: a lookup there misses */
	assert_int_equal(step(0, CODE, 2, 1, false), P4_TC_DELIVER);
	assert_int_equal(step(0, CODE + 2, 2, 1, true), P4_TC_DELIVER);
	assert_int_equal(step(0, CODE + 0x40, 2, 1, true), P4_TC_MISS);
	/* and back to the start: delivered from the first line */
	assert_int_equal(step(0, CODE, 2, 1, false), P4_TC_DELIVER);
	assert_int_equal(p4_tc_lines(&tc), 2);
}

static void eight_ways_then_lru(void **state)
{
	(void)state;
	p4_tc_flush(&tc);
	/* nine one-instruction lines (each a taken jmp) whose heads share a set */
	for (unsigned i = 0; i < 9; i++)
		assert_int_equal(step(0, CODE + i * SET_PERIOD, 2, 1, true), P4_TC_MISS);
	assert_int_equal(p4_tc_lines(&tc), 8);	/* the ninth evicted the first */
	assert_int_equal(step(0, CODE + 8 * SET_PERIOD, 2, 1, true), P4_TC_DELIVER);
	assert_int_equal(step(0, CODE + 1 * SET_PERIOD, 2, 1, true), P4_TC_DELIVER);
	/* the first again: a miss, evicting the least recently used, the third */
	assert_int_equal(step(0, CODE, 2, 1, true), P4_TC_MISS);
	assert_int_equal(step(0, CODE + 2 * SET_PERIOD, 2, 1, true), P4_TC_MISS);
	assert_int_equal(step(0, CODE + 1 * SET_PERIOD, 2, 1, true), P4_TC_DELIVER);
	/* a head in the next set does not compete */
	assert_int_equal(step(0, CODE + 64, 2, 1, true), P4_TC_MISS);
	assert_int_equal(p4_tc_lines(&tc), 9);
}

static void a_store_into_held_code_flushes_everything(void **state)
{
	unsigned misses = 0, built = 0;

	(void)state;
	p4_tc_flush(&tc);
	loop_pass(0, &misses, &built);		/* the line holds CODE .. CODE + 8 */
	step(0, CODE + 0x2000, 2, 1, true);	/* and another line elsewhere */
	assert_false(p4_tc_store(&tc, CODE + 9, 8));	/* just past the loop's bytes */
	assert_false(p4_tc_store(&tc, CODE - 8, 8));	/* just before */
	assert_false(p4_tc_store(&tc, CODE + 0x100, 4));	/* code never fetched */
	assert_false(p4_tc_store(&tc, CODE + 4 * 1024 * 1024 + 4, 1));	/* the filter's alias */
	assert_int_equal(p4_tc_lines(&tc), 2);
	assert_true(p4_tc_store(&tc, CODE + 1, 8));	/* overlaps the loop's bytes 1-8 */
	assert_int_equal(p4_tc_lines(&tc), 0);		/* the whole TC, SDM Vol. 3A 11.6 */
	assert_false(p4_tc_store(&tc, CODE + 1, 8));	/* nothing held: nothing to clear */
	/* the loop is built again: one miss */
	misses = built = 0;
	assert_int_equal(loop_pass(0, &misses, &built), 0);
	assert_int_equal(misses, 1);
	assert_true(p4_tc_store(&tc, CODE + 7, 1));	/* the last byte held (jnz's opcode) */
	/* a store spanning more than 1 KB over the line, from below */
	loop_pass(0, &misses, &built);
	assert_true(p4_tc_store(&tc, CODE - 2048, 4096));
}

static void evicted_lines_leave_the_store_filter(void **state)
{
	(void)state;
	p4_tc_flush(&tc);
	for (unsigned i = 0; i < 9; i++)
		step(0, CODE + i * SET_PERIOD, 2, 1, true);
	/* the first line was evicted: a store into its bytes hits nothing */
	assert_false(p4_tc_store(&tc, CODE, 2));
	assert_int_equal(p4_tc_lines(&tc), 8);
	assert_true(p4_tc_store(&tc, CODE + SET_PERIOD, 2));
}

static void the_logical_processors_share_lines(void **state)
{
	unsigned misses = 0, built = 0;

	(void)state;
	p4_tc_flush(&tc);
	loop_pass(0, &misses, &built);
	assert_int_equal(loop_pass(1, &misses, &built), 3);	/* LP1 finds LP0's line */
	/* LP0 building a new line does not move LP1 */
	assert_int_equal(step(1, CODE, 3, 1, false), P4_TC_DELIVER);
	assert_int_equal(step(0, CODE + 0x400, 2, 1, false), P4_TC_MISS);
	assert_int_equal(step(1, CODE + 3, 4, 1, false), P4_TC_DELIVER);
	assert_int_equal(step(0, CODE + 0x402, 2, 1, false), P4_TC_BUILD);
	assert_true(tc.lp[0].build);
	assert_false(tc.lp[1].build);
	assert_int_equal(misses, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cold_loop_misses_once_then_delivers),
		cmocka_unit_test(a_line_holds_six_slots),
		cmocka_unit_test(a_branch_the_other_way_looks_up_its_target),
		cmocka_unit_test(eight_ways_then_lru),
		cmocka_unit_test(a_store_into_held_code_flushes_everything),
		cmocka_unit_test(evicted_lines_leave_the_store_filter),
		cmocka_unit_test(the_logical_processors_share_lines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
