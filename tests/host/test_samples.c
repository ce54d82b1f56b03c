/*
 * test_samples.c - prof/samples.c: the per-LP ring and the frame walker.
 *
 * Expected counts follow from the record sizes samples.h documents (4 words
 * plus one per return address) and the two modes' rules: stop mode keeps
 * the first samples that fit and counts every later one as dropped; wrap
 * mode keeps the newest and counts each evicted one as overwritten. Every
 * sample carries its sequence number in the TSC so order can be checked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "prof/jitter.h"
#include "prof/samples.h"

#define WORDS(n)	((n) * sizeof(uint64_t))

static uint64_t mem[4096];

static struct sample mk(uint64_t seq, unsigned nchain)
{
	struct sample s = {
		.tsc = seq, .ip = 0x100000 + seq, .rflags = 0x246, .rsp = 0x8000 - seq,
		.event = (uint8_t)(seq % 3), .cpl = (uint8_t)(seq % 4 == 0 ? 3 : 0),
		.nchain = (uint8_t)nchain,
	};

	for (unsigned i = 0; i < nchain && i < SAMPLE_MAX_CHAIN; i++)
		s.chain[i] = 0x200000 + seq * 64 + i;
	return s;
}

static void check_accounting(const struct sample_store *st)
{
	struct sample_iter it;
	struct sample s;
	uint64_t n = 0;

	sample_iter_init(&it, st);
	while (sample_iter_next(&it, &s))
		n++;
	assert_int_equal(n, st->held);
	assert_int_equal(st->stored, st->held + st->overwritten);
	assert_true(st->used <= st->cap);
}

static void init_rejects_too_small_region(void **state)
{
	struct sample_store st;

	assert_int_equal(sample_store_init(&st, mem, WORDS(SAMPLE_MAX_WORDS) - 1, SAMPLE_WRAP, 0), -1);
	assert_int_equal(sample_store_init(&st, NULL, sizeof(mem), SAMPLE_WRAP, 0), -1);
	assert_int_equal(sample_store_init(&st, mem, WORDS(SAMPLE_MAX_WORDS), SAMPLE_WRAP, 0), 0);
	assert_int_equal(st.cap, SAMPLE_MAX_WORDS);
	/* An unaligned start loses the bytes up to the next 8-byte boundary. */
	assert_int_equal(sample_store_init(&st, (char *)mem + 3, WORDS(100), SAMPLE_WRAP, 0), 0);
	assert_ptr_equal(st.buf, &mem[1]);
	assert_int_equal(st.cap, 99);
	assert_int_equal(sample_record_bytes(0), 40);
	assert_int_equal(sample_record_bytes(3), 64);
	assert_int_equal(sample_record_bytes(99), 8 * SAMPLE_MAX_WORDS);
}

static void record_fields_round_trip(void **state)
{
	struct sample_store st;
	struct sample_iter it;
	struct sample in = mk(7, 5), out;

	in.rflags = UINT64_C(0xffffffff00200246);	/* upper half reserved: not kept */
	in.cpl = 3;
	in.event = 17;
	in.lp = 9;					/* the store's LP wins */
	in.weight = UINT64_C(0xffffffffff) + 1;		/* a 40-bit counter's events and more */
	assert_int_equal(sample_store_init(&st, mem, sizeof(mem), SAMPLE_STOP_WHEN_FULL, 2), 0);
	assert_int_equal(sample_store_append(&st, &in), SAMPLE_STORED);
	sample_iter_init(&it, &st);
	assert_true(sample_iter_next(&it, &out));
	assert_int_equal(out.tsc, in.tsc);
	assert_int_equal(out.ip, in.ip);
	assert_int_equal(out.rsp, in.rsp);
	assert_int_equal(out.weight, in.weight);
	assert_int_equal(out.rflags, 0x00200246);
	assert_int_equal(out.lp, 2);
	assert_int_equal(out.event, 17);
	assert_int_equal(out.cpl, 3);
	assert_int_equal(out.nchain, 5);
	assert_memory_equal(out.chain, in.chain, 5 * sizeof(uint64_t));
	assert_false(sample_iter_next(&it, &out));
	assert_int_equal(st.used, 5 + 5);
}

static void chain_longer_than_limit_is_clamped(void **state)
{
	struct sample_store st;
	struct sample_iter it;
	struct sample in = mk(1, SAMPLE_MAX_CHAIN), out;

	in.nchain = 200;
	assert_int_equal(sample_store_init(&st, mem, sizeof(mem), SAMPLE_WRAP, 0), 0);
	assert_int_equal(sample_store_append(&st, &in), SAMPLE_STORED);
	assert_int_equal(st.used, SAMPLE_MAX_WORDS);
	sample_iter_init(&it, &st);
	assert_true(sample_iter_next(&it, &out));
	assert_int_equal(out.nchain, SAMPLE_MAX_CHAIN);
	assert_int_equal(out.chain[SAMPLE_MAX_CHAIN - 1], in.chain[SAMPLE_MAX_CHAIN - 1]);
}

static void stop_mode_keeps_first_and_counts_drops(void **state)
{
	struct sample_store st;
	struct sample_iter it;
	struct sample s;

	/* 50 words hold exactly 10 chainless records. */
	assert_int_equal(sample_store_init(&st, mem, WORDS(50), SAMPLE_STOP_WHEN_FULL, 0), 0);
	for (uint64_t i = 0; i < 25; i++) {
		struct sample in = mk(i, 0);

		assert_int_equal(sample_store_append(&st, &in), i < 10 ? SAMPLE_STORED : SAMPLE_DROPPED);
	}
	assert_int_equal(st.held, 10);
	assert_int_equal(st.stored, 10);
	assert_int_equal(st.dropped, 15);
	assert_int_equal(st.overwritten, 0);
	assert_int_equal(sample_store_offered(&st), 25);
	assert_true(st.stopped);
	sample_iter_init(&it, &st);
	for (uint64_t i = 0; i < 10; i++) {
		assert_true(sample_iter_next(&it, &s));
		assert_int_equal(s.tsc, i);
	}
	assert_false(sample_iter_next(&it, &s));
}

static void stop_mode_stops_at_first_misfit(void **state)
{
	struct sample_store st;

	/* 10 words: two 4-word records; the third would need 2 words of
	 * padding plus 4 at the start, which are taken: dropped, and from then
	 * on even a record that would fit is refused. */
	assert_int_equal(sample_store_init(&st, mem, WORDS(SAMPLE_MAX_WORDS), SAMPLE_STOP_WHEN_FULL, 0), 0);
	st.cap = 10;
	for (uint64_t i = 0; i < 3; i++) {
		struct sample in = mk(i, 0);

		sample_store_append(&st, &in);
	}
	assert_int_equal(st.held, 2);
	assert_int_equal(st.dropped, 1);
	assert_true(st.stopped);
	{
		struct sample small = mk(9, 0);

		st.cap = 100;	/* room now, but the store has stopped */
		assert_int_equal(sample_store_append(&st, &small), SAMPLE_DROPPED);
	}
	assert_int_equal(st.dropped, 2);
	assert_int_equal(st.held, 2);
}

static void wrap_mode_keeps_newest(void **state)
{
	struct sample_store st;
	struct sample_iter it;
	struct sample s;

	assert_int_equal(sample_store_init(&st, mem, WORDS(50), SAMPLE_WRAP, 1), 0);
	for (uint64_t i = 0; i < 25; i++) {
		struct sample in = mk(i, 0);

		assert_int_equal(sample_store_append(&st, &in), SAMPLE_STORED);
	}
	assert_int_equal(st.held, 10);
	assert_int_equal(st.stored, 25);
	assert_int_equal(st.overwritten, 15);
	assert_int_equal(st.dropped, 0);
	assert_false(st.stopped);
	sample_iter_init(&it, &st);
	for (uint64_t i = 15; i < 25; i++) {
		assert_true(sample_iter_next(&it, &s));
		assert_int_equal(s.tsc, i);
		assert_int_equal(s.lp, 1);
	}
	assert_false(sample_iter_next(&it, &s));
}

static void wrap_mode_pads_at_the_end(void **state)
{
	struct sample_store st;
	struct sample_iter it;
	struct sample s;

	/* 10 words, 4-word records: 0 at 0, 1 at 4; 2 needs padding (words 8-9)
	 * and words 0-3, so 0 is evicted; 3 goes to 4-7 after evicting 1. */
	assert_int_equal(sample_store_init(&st, mem, WORDS(SAMPLE_MAX_WORDS), SAMPLE_WRAP, 0), 0);
	st.cap = 10;
	for (uint64_t i = 0; i < 4; i++) {
		struct sample in = mk(i, 0);

		assert_int_equal(sample_store_append(&st, &in), SAMPLE_STORED);
	}
	assert_int_equal(st.held, 2);
	assert_int_equal(st.overwritten, 2);
	sample_iter_init(&it, &st);
	assert_true(sample_iter_next(&it, &s));
	assert_int_equal(s.tsc, 2);
	assert_true(sample_iter_next(&it, &s));
	assert_int_equal(s.tsc, 3);
	assert_false(sample_iter_next(&it, &s));
}

/* A fixed pseudo-random walk over record sizes; checks the invariants throughout. */
static void wrap_mode_mixed_sizes_keep_a_suffix(void **state)
{
	struct sample_store st;
	uint32_t x = 12345;

	assert_int_equal(sample_store_init(&st, mem, WORDS(200), SAMPLE_WRAP, 0), 0);
	for (uint64_t i = 0; i < 5000; i++) {
		struct sample in, s;
		struct sample_iter it;
		uint64_t expect, words = 0;

		x = x * 1103515245u + 12345u;
		in = mk(i, (x >> 16) % (SAMPLE_MAX_CHAIN + 1));
		assert_int_equal(sample_store_append(&st, &in), SAMPLE_STORED);
		check_accounting(&st);
		/* What is held is exactly the newest `held` samples, in order. */
		expect = i + 1 - st.held;
		sample_iter_init(&it, &st);
		while (sample_iter_next(&it, &s)) {
			assert_int_equal(s.tsc, expect++);
			words += 4 + s.nchain;
			assert_int_equal(s.chain[0], s.nchain ? 0x200000 + s.tsc * 64 : s.chain[0]);
		}
		assert_int_equal(expect, i + 1);
		assert_true(words <= st.cap);
		/*
		 * Once wrapping, the ring stays nearly full: before the last
		 * eviction less than padding + one record (< 2 max records) was
		 * free, one eviction frees at most one more, and padding in
		 * the ring is under one record: fewer than 4 max records idle.
		 */
		if (st.overwritten)
			assert_true(words + 4 * SAMPLE_MAX_WORDS >= st.cap);
	}
	assert_int_equal(st.stored, 5000);
	assert_int_equal(st.dropped, 0);
}

static void nested_append_is_refused_and_counted(void **state)
{
	struct sample_store st;
	struct sample in = mk(1, 0);

	assert_int_equal(sample_store_init(&st, mem, sizeof(mem), SAMPLE_WRAP, 0), 0);
	st.busy = 1;		/* as if an NMI arrived in the middle of an append */
	assert_int_equal(sample_store_append(&st, &in), SAMPLE_NESTED);
	assert_int_equal(st.nested, 1);
	assert_int_equal(st.held, 0);
	assert_int_equal(st.busy, 1);	/* left to the interrupted append */
	st.busy = 0;
	assert_int_equal(sample_store_append(&st, &in), SAMPLE_STORED);
	assert_int_equal(st.busy, 0);
	assert_int_equal(sample_store_offered(&st), 2);
}

/*
 * Every way out of an append leaves busy clear: the usual one, padding and
 * eviction (wrap), a drop (stop); else the next sample would be counted nested.
 */
static void every_append_path_clears_busy(void **state)
{
	struct sample_store st;

	assert_int_equal(sample_store_init(&st, mem, WORDS(SAMPLE_MAX_WORDS), SAMPLE_WRAP, 0), 0);
	st.cap = 12;		/* 5-word records: the third pads words 10-11 and evicts */
	for (uint64_t i = 0; i < 4; i++) {
		struct sample in = mk(i, 0);

		assert_int_equal(sample_store_append(&st, &in), SAMPLE_STORED);
		assert_int_equal(st.busy, 0);
	}
	assert_int_equal(st.overwritten, 2);
	assert_int_equal(sample_store_init(&st, mem, WORDS(SAMPLE_MAX_WORDS), SAMPLE_STOP_WHEN_FULL, 0), 0);
	st.cap = 12;
	for (uint64_t i = 0; i < 4; i++) {
		struct sample in = mk(i, 0);

		assert_int_equal(sample_store_append(&st, &in), i < 2 ? SAMPLE_STORED : SAMPLE_DROPPED);
		assert_int_equal(st.busy, 0);
	}
	assert_int_equal(st.dropped, 2);
	assert_int_equal(st.nested, 0);
}

static void reset_keeps_memory_and_mode(void **state)
{
	struct sample_store st;
	struct sample in = mk(1, 3);

	assert_int_equal(sample_store_init(&st, mem, WORDS(50), SAMPLE_STOP_WHEN_FULL, 5), 0);
	for (int i = 0; i < 20; i++)
		sample_store_append(&st, &in);
	assert_true(st.stopped);
	sample_store_reset(&st);
	assert_int_equal(st.held + st.stored + st.dropped + st.used, 0);
	assert_false(st.stopped);
	assert_int_equal(st.cap, 50);
	assert_int_equal(st.lp, 5);
	assert_int_equal(st.mode, SAMPLE_STOP_WHEN_FULL);
	assert_int_equal(sample_store_append(&st, &in), SAMPLE_STORED);
}

static void run_iterates_all_stores_and_sums(void **state)
{
	static uint64_t m1[80], m2[80];
	struct sample_store a, b, sum;
	const struct sample_store *stores[] = { &a, NULL, &b };
	struct sample_run run = { .stores = stores, .nstores = 3 };
	struct sample_run_iter ri;
	struct sample s;
	int n = 0;

	assert_int_equal(sample_store_init(&a, m1, sizeof(m1), SAMPLE_STOP_WHEN_FULL, 0), 0);
	assert_int_equal(sample_store_init(&b, m2, sizeof(m2), SAMPLE_WRAP, 1), 0);
	for (uint64_t i = 0; i < 20; i++) {
		struct sample in = mk(i, 0);

		sample_store_append(&a, &in);
		sample_store_append(&b, &in);
	}
	sample_run_iter_init(&ri, &run);
	while (sample_run_iter_next(&ri, &s)) {
		assert_int_equal(s.lp, n < 16 ? 0 : 1);
		n++;
	}
	assert_int_equal(n, 32);
	sample_run_totals(&run, &sum);
	assert_int_equal(sum.held, 32);
	assert_int_equal(sum.stored, 16 + 20);
	assert_int_equal(sum.dropped, 4);
	assert_int_equal(sum.overwritten, 4);
}

/* --- frame walker over a fake stack ---------------------------------------- */

static uintptr_t stack[128];

static bool in_stack(void *ctx, uint64_t addr, uint64_t len)
{
	uint64_t lo = (uintptr_t)stack, hi = lo + sizeof(stack);

	(*(int *)ctx)++;
	return addr >= lo && addr <= hi && len <= hi - addr;
}

static uint64_t slot(unsigned i)
{
	return (uintptr_t)&stack[i];
}

/* Frames at stack[4], [8], [12], ... each linking to the next; n frames. */
static void build_chain(unsigned n)
{
	memset(stack, 0, sizeof(stack));
	for (unsigned f = 0; f < n; f++) {
		unsigned at = 4 + 4 * f;

		stack[at] = f + 1 < n ? (uintptr_t)slot(at + 4) : 0;
		stack[at + 1] = 0x1000 + f;
	}
}

static void walker_follows_chain_to_its_end(void **state)
{
	uint64_t chain[SAMPLE_MAX_CHAIN];
	int calls = 0;

	build_chain(5);
	assert_int_equal(sample_walk_frames(slot(4), chain, SAMPLE_MAX_CHAIN, in_stack, &calls), 5);
	for (unsigned i = 0; i < 5; i++)
		assert_int_equal(chain[i], 0x1000 + i);
	assert_int_equal(calls, 5);	/* every frame read was checked first */
}

/*
 * wl_calls_level's bytes (arch/x86/64/workloads.S, as objdump shows them):
 * push %rbp; mov %rsp,%rbp; test %rdi,%rdi; jz 2f; sub $1,%rdi;
 * call wl_calls_level; 2: pop %rbp; ret
 */
static const uint8_t calls_level[] = {
	0x55, 0x48, 0x89, 0xe5, 0x48, 0x85, 0xff, 0x74, 0x09, 0x48, 0x83, 0xef, 0x01,
	0xe8, 0xee, 0xff, 0xff, 0xff, 0x5d, 0xc3,
};

static void prologue_and_ret_find_the_return_address(void **state)
{
	static const uint8_t endbr[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x8b, 0xec, 0x90 };
	static const uint8_t noframe[] = { 0x48, 0x89, 0xf8, 0xc3 };	/* mov %rdi,%rax; ret */
	const uint64_t n = sizeof(calls_level);

	assert_int_equal(sample_prologue_ret(calls_level, n, 0), 0);		/* at push rbp */
	assert_int_equal(sample_prologue_ret(calls_level, n, 1), (int)sizeof(uintptr_t));
	assert_int_equal(sample_prologue_ret(calls_level, n, 4), -1);		/* frame set up */
	assert_int_equal(sample_prologue_ret(calls_level, n, 13), -1);		/* the call */
	assert_int_equal(sample_prologue_ret(calls_level, n, 18), -1);		/* pop rbp */
	assert_int_equal(sample_prologue_ret(calls_level, n, 19), 0);		/* ret */
	assert_int_equal(sample_prologue_ret(endbr, sizeof(endbr), 0), -1);	/* endbr64 first */
	assert_int_equal(sample_prologue_ret(endbr, sizeof(endbr), 4), 0);
	assert_int_equal(sample_prologue_ret(endbr, sizeof(endbr), 5), (int)sizeof(uintptr_t));
	assert_int_equal(sample_prologue_ret(endbr, sizeof(endbr), 8), -1);
	assert_int_equal(sample_prologue_ret(noframe, sizeof(noframe), 0), -1);	/* no prologue */
	assert_int_equal(sample_prologue_ret(noframe, sizeof(noframe), 3), 0);
	assert_int_equal(sample_prologue_ret(calls_level, n, n), -1);		/* out of range */
	assert_int_equal(sample_prologue_ret(NULL, 0, 0), -1);
}

/* gcc -O2 -fno-omit-frame-pointer: a leaf that needs no stack gets no frame (walk). */
static const uint8_t walk_leaf[] = {
	0x48, 0x85, 0xff, 0x74, 0x2b, 0x31, 0xc0, 0x31, 0xc9,		/* test, je, xor, xor */
	0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00,			/* nopl */
	0x48, 0x89, 0xca, 0x48, 0xc1, 0xea, 0x03, 0x48, 0x31, 0xc2,	/* 10: mov, shr, xor */
	0x48, 0x83, 0xc0, 0x01, 0x48, 0x01, 0xd1, 0x48, 0x39, 0xc7,	/* add, add, cmp */
	0x75, 0xea, 0x48, 0x89, 0xc8, 0xc3,				/* jne, mov, ret */
};

static void frameless_leaf_has_its_return_address_at_rsp(void **state)
{
	static const uint8_t pushes[] = { 0x53, 0x48, 0x89, 0xf8, 0x5b, 0xc3 };	/* push rbx */
	static const uint8_t subrsp[] = { 0x48, 0x83, 0xec, 0x08, 0x90, 0xc3 };	/* sub $8,%rsp */
	static const uint8_t leasp[] = { 0x48, 0x8d, 0x64, 0x24, 0xf8, 0x90 };	/* lea -8(%rsp),%rsp */
	static const uint8_t movsp[] = { 0x48, 0x89, 0xec, 0x90 };		/* mov %rbp,%rsp */
	static const uint8_t r12[] = { 0x49, 0x89, 0xfc, 0x90 };		/* mov %rdi,%r12 */
	static const uint8_t call[] = { 0xe8, 0, 0, 0, 0, 0x90 };

	for (uint64_t off = 0; off < sizeof(walk_leaf); off++) {
		/* every instruction boundary: the decoder walks to it, else -1 */
		static const uint8_t starts[] = { 0, 3, 5, 7, 9, 16, 19, 23, 26, 30, 33, 36, 38,
						  41 };
		bool boundary = memchr(starts, (int)off, sizeof(starts)) != NULL;

		assert_int_equal(sample_leaf_ret(walk_leaf, off, true), boundary ? 0 : -1);
	}
	assert_int_equal(sample_leaf_ret(calls_level, 4, true), -1);	/* push rbp: a frame */
	assert_int_equal(sample_leaf_ret(pushes, 4, true), -1);
	assert_int_equal(sample_leaf_ret(pushes, 0, true), 0);		/* nothing run yet */
	assert_int_equal(sample_leaf_ret(subrsp, 4, true), -1);
	assert_int_equal(sample_leaf_ret(leasp, 5, true), -1);
	assert_int_equal(sample_leaf_ret(movsp, 3, true), -1);
	assert_int_equal(sample_leaf_ret(r12, 3, true), 0);		/* REX.B: r12, not RSP */
	assert_int_equal(sample_leaf_ret(call, 5, true), -1);
	assert_int_equal(sample_leaf_ret(NULL, 0, true), -1);
}

static void stack_walk_puts_the_direct_caller_first(void **state)
{
	uint64_t chain[SAMPLE_MAX_CHAIN];
	int calls = 0;

	build_chain(3);			/* frames at [4], [8], [12]: callers 0x1000.. */
	stack[1] = 0x2000;		/* the return address a call just pushed */
	stack[0] = slot(4);		/* ... and the caller's RBP pushed above it */
	/* at push rbp: RSP = &stack[1]; RBP is still the caller's frame */
	assert_int_equal(sample_walk_stack(slot(1), slot(4), 0, chain, 32, in_stack, &calls), 4);
	assert_int_equal(chain[0], 0x2000);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(chain[1 + i], 0x1000 + i);
	/* at mov rbp, rsp: RSP = &stack[0], the return address one word up */
	assert_int_equal(sample_walk_stack(slot(0), slot(4), (int)sizeof(uintptr_t), chain, 32,
					   in_stack, &calls), 4);
	assert_int_equal(chain[0], 0x2000);
	/* frame set up: the plain walk */
	assert_int_equal(sample_walk_stack(slot(0), slot(4), -1, chain, 32, in_stack, &calls), 3);
	assert_int_equal(chain[0], 0x1000);
	/* depth bound counts the return address; an unreadable RSP adds nothing */
	assert_int_equal(sample_walk_stack(slot(1), slot(4), 0, chain, 2, in_stack, &calls), 2);
	assert_int_equal(chain[1], 0x1000);
	assert_int_equal(sample_walk_stack(8, slot(4), 0, chain, 32, in_stack, &calls), 3);
	assert_int_equal(chain[0], 0x1000);
}

static void jitter_spreads_periods_reproducibly(void **state)
{
	struct period_jitter a, b, c, none;
	uint64_t sum = 0, lo = UINT64_MAX, hi = 0;
	unsigned same = 0, distinct = 0;
	static bool seen[21];

	jitter_init(&a, 7, 0, 50);
	jitter_init(&b, 7, 0, 50);
	jitter_init(&c, 8, 0, 50);
	jitter_init(&none, 7, 0, 0);
	for (int i = 0; i < 10000; i++) {
		uint64_t p = jitter_period(&a, 10, 1000);

		assert_int_equal(jitter_period(&b, 10, 1000), p);	/* same seed, same periods */
		same += jitter_period(&c, 10, 1000) == p;
		assert_int_equal(jitter_period(&none, 10, 1000), 10);	/* no jitter */
		assert_true(p >= 5 && p <= 15);				/* 10 +- 50 % */
		seen[p] = true;
		sum += p;
		lo = p < lo ? p : lo;
		hi = p > hi ? p : hi;
	}
	for (int p = 0; p <= 20; p++)
		distinct += seen[p];
	assert_int_equal(distinct, 11);				/* every value of 5 .. 15 */
	assert_true(sum > 10000 * 10 - 1000 && sum < 10000 * 10 + 1000);	/* mean 10 */
	assert_true(same < 2000);				/* another seed, another stream */
	/* bounds: never 0, never above max, the percentage clamped to JITTER_PCT_MAX */
	jitter_init(&a, 1, 1, 100);
	assert_int_equal(a.pct, JITTER_PCT_MAX);
	for (int i = 0; i < 1000; i++) {
		uint64_t p = jitter_period(&a, 1, 1000);

		assert_int_equal(p, 1);
		assert_true(jitter_period(&a, 1000, 1100) <= 1100);
	}
}

static void walker_respects_depth_bounds(void **state)
{
	uint64_t chain[SAMPLE_MAX_CHAIN + 8];
	int calls = 0;

	build_chain(30);
	assert_int_equal(sample_walk_frames(slot(4), chain, 3, in_stack, &calls), 3);
	assert_int_equal(chain[2], 0x1002);
	assert_int_equal(sample_walk_frames(slot(4), chain, 0, in_stack, &calls), 0);
	/* 31 frames would fit the array only with a larger limit: clamped to 32. */
	memset(stack, 0, sizeof(stack));
	for (unsigned f = 0; f < 60; f++) {
		stack[2 * f] = (uintptr_t)slot(2 * f + 2);
		stack[2 * f + 1] = 0x2000 + f;
	}
	stack[118] = 0;
	assert_int_equal(sample_walk_frames(slot(0), chain, 100, in_stack, &calls), SAMPLE_MAX_CHAIN);
	assert_int_equal(chain[SAMPLE_MAX_CHAIN - 1], 0x2000 + SAMPLE_MAX_CHAIN - 1);
}

static void walker_stops_on_bad_frames(void **state)
{
	uint64_t chain[SAMPLE_MAX_CHAIN];
	int calls = 0;

	/* Cycle: a frame pointing at itself yields its return address once. */
	build_chain(3);
	stack[8] = (uintptr_t)slot(8);
	assert_int_equal(sample_walk_frames(slot(4), chain, 32, in_stack, &calls), 2);
	/* Pointing back down the stack. */
	build_chain(3);
	stack[8] = (uintptr_t)slot(4);
	assert_int_equal(sample_walk_frames(slot(4), chain, 32, in_stack, &calls), 2);
	/* Out of the readable region: the callback refuses, nothing is read. */
	build_chain(3);
	stack[8] = (uintptr_t)slot(0) + sizeof(stack) + 64;
	assert_int_equal(sample_walk_frames(slot(4), chain, 32, in_stack, &calls), 2);
	/* Last frame straddling the end of the region. */
	build_chain(2);
	stack[4] = (uintptr_t)slot(127);
	assert_int_equal(sample_walk_frames(slot(4), chain, 32, in_stack, &calls), 1);
	/* Misaligned and null frame pointers, zero return address. */
	build_chain(3);
	assert_int_equal(sample_walk_frames(slot(4) + 1, chain, 32, in_stack, &calls), 0);
	assert_int_equal(sample_walk_frames(0, chain, 32, in_stack, &calls), 0);
	stack[9] = 0;
	assert_int_equal(sample_walk_frames(slot(4), chain, 32, in_stack, &calls), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(init_rejects_too_small_region),
		cmocka_unit_test(record_fields_round_trip),
		cmocka_unit_test(chain_longer_than_limit_is_clamped),
		cmocka_unit_test(stop_mode_keeps_first_and_counts_drops),
		cmocka_unit_test(stop_mode_stops_at_first_misfit),
		cmocka_unit_test(wrap_mode_keeps_newest),
		cmocka_unit_test(wrap_mode_pads_at_the_end),
		cmocka_unit_test(every_append_path_clears_busy),
		cmocka_unit_test(wrap_mode_mixed_sizes_keep_a_suffix),
		cmocka_unit_test(nested_append_is_refused_and_counted),
		cmocka_unit_test(reset_keeps_memory_and_mode),
		cmocka_unit_test(run_iterates_all_stores_and_sums),
		cmocka_unit_test(walker_follows_chain_to_its_end),
		cmocka_unit_test(prologue_and_ret_find_the_return_address),
		cmocka_unit_test(frameless_leaf_has_its_return_address_at_rsp),
		cmocka_unit_test(jitter_spreads_periods_reproducibly),
		cmocka_unit_test(stack_walk_puts_the_direct_caller_first),
		cmocka_unit_test(walker_respects_depth_bounds),
		cmocka_unit_test(walker_stops_on_bad_frames),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
