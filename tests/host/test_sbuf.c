/*
 * test_sbuf.c - pmu/model/p4_sbuf.c against figures worked out by hand:
 * forwarding, the MOB's replays by cause, 64K aliasing, a full store
 * buffer and the write-combining buffers; and through prof/backend/
 * memfeed.c, a store followed by a wider load and a non-temporal line.
 *
 * Time is in sixths of a clock. Northwood-class (0F_02): 24 entries, 6 WC
 * buffers, conflicts on bits 15:6, a failed forward waits 20 clocks (120
 * sixths); Prescott-class (0F_04): 32, 8, bits 21:6, 31 clocks. The L1
 * load-to-use passed in is 2 clocks (12 sixths).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "pmu/model/p4_sbuf.h"
#include "prof/backend/memfeed.h"

#define L1	12u
#define BUF	UINT64_C(0x40000000)
#define CODE	UINT64_C(0x100000)

static const struct p4_sig nw = { 0x0f, 0x02, 9 }, pr = { 0x0f, 0x04, 1 };
static struct p4_sbuf sb;
static struct p4_mem mem;		/* large: static */

/* One store at 0x1000 (4 bytes): address known at 0, data at 6, retired at 60, commits at 66. */
static void one_store(const struct p4_sig *sig, uint64_t addr_ready)
{
	p4_sbuf_init(&sb, p4_sbuf_part_for(sig));
	p4_sbuf_store(&sb, 0x1000, 4, addr_ready, 6, 60, 6);
}

static void part_figures_follow_the_family(void **state)
{
	const struct p4_sbuf_part *a = p4_sbuf_part_for(&nw), *b = p4_sbuf_part_for(&pr);

	(void)state;
	assert_int_equal(a->entries, 24);
	assert_int_equal(a->wc_buffers, 6);
	assert_int_equal(a->alias_top, 15);
	assert_int_equal(a->sf_penalty, 20);
	assert_int_equal(b->entries, 32);
	assert_int_equal(b->wc_buffers, 8);
	assert_int_equal(b->alias_top, 21);
	assert_int_equal(b->sf_penalty, 31);
}

static void a_covered_load_forwards(void **state)
{
	struct p4_sbuf_out o = { 0 };

	(void)state;
	one_store(&nw, 0);
	/* same start and size, address at 12, data ready since 6: 12 + 12 */
	assert_int_equal(p4_sbuf_load(&sb, 0x1000, 4, 12, L1, &o), 24);
	/* a smaller load from the same start forwards too */
	assert_int_equal(p4_sbuf_load(&sb, 0x1000, 2, 12, L1, &o), 24);
	assert_memory_equal(&o, &(struct p4_sbuf_out){ 0 }, sizeof(o));
	/* the data is not ready at 3: NO_STD, the data at 6 + 12 */
	assert_int_equal(p4_sbuf_load(&sb, 0x1000, 4, 3, L1, &o), 18);
	assert_int_equal(o.no_std, 1);
	/* after the store committed (66) nothing constrains the load */
	assert_int_equal(p4_sbuf_load(&sb, 0x1000, 8, 66, L1, &o), 0);
	assert_int_equal(o.partial_data, 0);
}

static void failed_forwards_replay_by_cause(void **state)
{
	struct p4_sbuf_out o = { 0 };

	(void)state;
	one_store(&nw, 0);
	/* wider than the store: PARTIAL_DATA, max(12, commit 66) + 120 */
	assert_int_equal(p4_sbuf_load(&sb, 0x1000, 8, 12, L1, &o), 186);
	assert_int_equal(o.partial_data, 1);
	/* inside the store but from another start: UNALGN_ADDR */
	assert_int_equal(p4_sbuf_load(&sb, 0x1002, 2, 12, L1, &o), 186);
	assert_int_equal(o.unalgn_addr, 1);
	/* still before the commit: the same; the store's address and data play no part */
	assert_int_equal(p4_sbuf_load(&sb, 0x1001, 1, 60, L1, &o), 186);
	assert_int_equal(p4_sbuf_load(&sb, 0x1000, 8, 65, L1, &o), 186);
	assert_int_equal(o.unalgn_addr, 2);
	assert_int_equal(o.partial_data, 2);
	assert_int_equal(o.no_sta + o.no_std + o.conf_64k, 0);

	/* a store that wraps a line forwards nothing; a 16-byte load must be 16-aligned */
	p4_sbuf_init(&sb, p4_sbuf_part_for(&nw));
	p4_sbuf_store(&sb, 0x103c, 8, 0, 0, 60, 6);
	p4_sbuf_store(&sb, 0x2008, 16, 0, 0, 60, 6);
	o = (struct p4_sbuf_out){ 0 };
	assert_int_equal(p4_sbuf_load(&sb, 0x103c, 4, 12, L1, &o), 66 + 120);
	assert_int_equal(p4_sbuf_load(&sb, 0x2008, 16, 12, L1, &o), 72 + 120);	/* commits 66, 72 */
	assert_int_equal(o.partial_data, 2);
	assert_int_equal(p4_sbuf_load(&sb, 0x2008, 8, 12, L1, &o), 24);	/* 8 of them: forwarded */
}

static void an_unknown_store_address_holds_the_load(void **state)
{
	struct p4_sbuf_out o = { 0 };

	(void)state;
	one_store(&nw, 30);
	/* address known only at 30: NO_STA, then forwarded at 30 + 12 */
	assert_int_equal(p4_sbuf_load(&sb, 0x1000, 4, 12, L1, &o), 42);
	assert_int_equal(o.no_sta, 1);
	assert_int_equal(o.no_std, 0);
	/* a load elsewhere is not held (speculated past the store) */
	assert_int_equal(p4_sbuf_load(&sb, 0x3000, 4, 12, L1, &o), 0);
	assert_int_equal(o.no_sta, 1);
}

static void aliasing_64k_waits_for_the_store(void **state)
{
	struct p4_sbuf_out o = { 0 };

	(void)state;
	one_store(&nw, 0);
	/* 0x11000: bits 15:6 as 0x1000's, another line: 64K_CONF, max(12, 66) + 12 */
	assert_int_equal(p4_sbuf_load(&sb, 0x11000, 4, 12, L1, &o), 78);
	assert_int_equal(p4_sbuf_load(&sb, 0x21010, 4, 12, L1, &o), 78);
	assert_int_equal(o.conf_64k, 2);
	/* the same line, other bytes: no conflict; another set of bits 15:6: none */
	assert_int_equal(p4_sbuf_load(&sb, 0x1010, 4, 12, L1, &o), 0);
	assert_int_equal(p4_sbuf_load(&sb, 0x11040, 4, 12, L1, &o), 0);
	assert_int_equal(o.conf_64k, 2);
	/* Prescott-class: bits 21:6, so 0x21000 differs (bit 17) and 0x401000 conflicts */
	one_store(&pr, 0);
	o = (struct p4_sbuf_out){ 0 };
	assert_int_equal(p4_sbuf_load(&sb, 0x21000, 4, 12, L1, &o), 0);
	assert_int_equal(p4_sbuf_load(&sb, 0x401000, 4, 12, L1, &o), 78);
	assert_int_equal(o.conf_64k, 1);
}

static void a_full_buffer_stalls_the_store(void **state)
{
	struct p4_sbuf_out o = { 0 };

	(void)state;
	/* 24 stores missing to memory (339 clocks each, Northwood's), all retired at 0 */
	p4_sbuf_init(&sb, p4_sbuf_part_for(&nw));
	for (unsigned k = 0; k < 24; k++) {
		assert_int_equal(p4_sbuf_alloc(&sb, 0, &o), 0);
		p4_sbuf_store(&sb, 0x1000 + 64u * k, 4, 0, 0, 0, 339u * 6);
	}
	assert_int_equal(o.st_rb_full, 0);
	/* the 25th at 100 waits for the first commit, 2034: 1934 sixths, 322 whole clocks */
	assert_int_equal(p4_sbuf_alloc(&sb, 100, &o), 2034);
	assert_int_equal(o.st_rb_full, 1);
	assert_int_equal(o.sbfull, 322);
	p4_sbuf_store(&sb, 0x9000, 4, 0, 0, 2034, 6);
	/* the 26th at 2040 waits for the second, at 4068: 2028 more, 3962 sixths in all, 660 */
	assert_int_equal(p4_sbuf_alloc(&sb, 2040, &o), 4068);
	assert_int_equal(o.st_rb_full, 2);
	assert_int_equal(o.sbfull, 660);
	/* the last one commits after every older one: 24 x 2034 + 6 */
	assert_int_equal(sb.last_commit, 24u * 2034 + 6);
}

static void wc_buffers_evict_full_lines_and_the_oldest(void **state)
{
	struct p4_sbuf_out o = { 0 };

	(void)state;
	p4_sbuf_init(&sb, p4_sbuf_part_for(&nw));
	for (unsigned i = 0; i < 4; i++)	/* one line, 16 bytes at a time */
		p4_sbuf_wc_store(&sb, BUF + 16u * i, 16, &o);
	assert_int_equal(o.wcb_evicts, 1);	/* filled: written at once */
	assert_int_equal(o.wcb_full_evicts, 0);
	assert_int_equal(sb.nwcb, 0);
	for (unsigned i = 1; i <= 7; i++)	/* 7 lines, 4 bytes each, with 6 buffers */
		p4_sbuf_wc_store(&sb, BUF + 64u * i, 4, &o);
	assert_int_equal(o.wcb_full_evicts, 1);
	assert_int_equal(o.wcb_evicts, 2);
	assert_int_equal(sb.wcb[0].line, (BUF >> 6) + 2);	/* line 1 went, the oldest */
	p4_sbuf_wc_store(&sb, BUF + 64u * 8 - 4, 8, &o);	/* lines 7 and 8: line 8 needs one */
	assert_int_equal(o.wcb_full_evicts, 2);
	p4_sbuf_wc_drain(&sb, &o);
	assert_int_equal(o.wcb_evicts, 3 + 6);
	assert_int_equal(sb.nwcb, 0);
}

/* A 4-byte instruction at rip with one operand, through memfeed (0F_04: Prescott-class). */
static struct step_info insn(uint64_t rip, enum insn_access acc, uint64_t addr, uint16_t size)
{
	struct step_info s = { .rip = rip, .len = 4, .mem_status = INSN_MEM_OK, .rep_iters = 1,
			       .nmem = 1 };

	s.mem[0] = (struct insn_mem_op){ .addr = addr, .size = size, .access = acc };
	return s;
}

static bool has_event(const struct memfeed_ctx *c, const struct memfeed *f, enum p4_event e,
		      uint16_t mask, uint32_t n)
{
	struct memfeed_event ev[MEMFEED_MAX_EVENTS];
	unsigned k = memfeed_sbuf_events(c, f, ev, MEMFEED_MAX_EVENTS);

	for (unsigned i = 0; i < k; i++)
		if (ev[i].ev == e && ev[i].mask == mask)
			return ev[i].n == n;
	return n == 0;
}

/* Clockticks of a store at BUF then a load of size at BUF, the load's memfeed in *f. */
static uint64_t store_then_load(struct memfeed_ctx *c, uint16_t size, struct memfeed *f)
{
	struct step_info st = insn(CODE, INSN_STORE, BUF, 4), ld = insn(CODE + 4, INSN_LOAD, BUF, size);
	struct step_info warm = insn(CODE, INSN_LOAD, BUF, 8);
	uint64_t cycles;

	assert_int_equal(p4_mem_init(&mem, &pr, P4_MEM_DESKTOP, NULL, NULL), 0);
	memfeed_init(c, &mem, false);
	memfeed_step(c, &warm, f);	/* the line in L1: the store commits in one clock */
	memfeed_step(c, &st, f);
	cycles = f->cycles;
	memfeed_step(c, &ld, f);
	return cycles + f->cycles;
}

static void memfeed_counts_a_wider_load_after_a_store(void **state)
{
	struct memfeed_ctx c;
	struct memfeed f;
	uint64_t fwd, failed;

	(void)state;
	fwd = store_then_load(&c, 4, &f);
	assert_int_equal(c.sbo.partial_data + c.sbo.unalgn_addr + c.sbo.no_std, 0);
	failed = store_then_load(&c, 8, &f);
	assert_int_equal(c.sbo.partial_data, 1);
	assert_true(has_event(&c, &f, P4_EV_MOB_LOAD_REPLAY,
			      P4_EVMASK(P4_MOB_LOAD_REPLAY_PARTIAL_DATA), 1));
	/* the failed forward costs at least the Prescott-class penalty, 31 clocks */
	assert_true(failed >= fwd + 31);

	/* MOB_load_replay_retired's candidates (PMU reference 5.5): the failed forward's load */
	struct p4_replay_in r;

	memfeed_replay(&c, &f, &r);
	assert_int_equal(r.mob_load, 1);
	/* a step with no memory operand reports nothing of the buffer's */
	const struct step_info alu = { .rip = CODE, .len = 4, .mem_status = INSN_MEM_OK, .rep_iters = 1 };

	memfeed_step(&c, &alu, &f);
	assert_false(f.sbuf);
	assert_true(has_event(&c, &f, P4_EV_MOB_LOAD_REPLAY,
			      P4_EVMASK(P4_MOB_LOAD_REPLAY_PARTIAL_DATA), 0));
}

static void memfeed_movnti_fills_wc_buffers_only_when_counted(void **state)
{
	struct memfeed_ctx c;
	struct memfeed f;
	unsigned evicts = 0;

	(void)state;
	for (unsigned live = 0; live < 2; live++) {
		assert_int_equal(p4_mem_init(&mem, &pr, P4_MEM_DESKTOP, NULL, NULL), 0);
		memfeed_init(&c, &mem, false);
		c.wc_live = live;
		evicts = 0;
		for (unsigned i = 0; i < 64; i++) {	/* movnti over 4 lines, 4 bytes at a time */
			struct step_info s = insn(CODE, INSN_STORE, BUF + 4u * i, 4);

			s.core.nt = 1;
			memfeed_step(&c, &s, &f);
			evicts += c.sbo.wcb_evicts;
			assert_int_equal(c.sbo.wcb_full_evicts, 0);
		}
		assert_int_equal(evicts, live ? 4 : 0);
	}
}

/*
 * With Hyper-Threading each LP holds half the store buffer ([ITJ] in
 * p4_sbuf.c): LP0's stores to cold lines (each commit a memory access, in
 * order) fill its 16 of Prescott's 32 entries and its 17th waits, while
 * LP1's store finds its own half empty - one LP's stores never stall the
 * other's, whatever order their steps come in.
 */
static void ht_gives_each_lp_half_the_store_buffer(void **state)
{
	struct memfeed_ctx c;
	struct memfeed f;
	unsigned full = 0;

	(void)state;
	assert_int_equal(p4_mem_init(&mem, &pr, P4_MEM_DESKTOP, NULL, NULL), 0);
	memfeed_init(&c, &mem, false);
	assert_int_equal(c.sb[0].limit, 32);
	assert_int_equal(c.sb[1].limit, 32);
	memfeed_init(&c, &mem, true);
	assert_int_equal(c.sb[0].limit, 16);
	assert_int_equal(c.sb[1].limit, 16);
	for (unsigned i = 0; i < 16; i++) {
		struct step_info st = insn(CODE, INSN_STORE, BUF + 4096u * i, 4);

		memfeed_step(&c, &st, &f);
		full += c.sbo.st_rb_full;
	}
	assert_int_equal(full, 0);
	assert_int_equal(c.sb[0].n, 16);
	struct step_info other = insn(CODE, INSN_STORE, BUF + 4096u * 40, 4);

	other.lp = 1;
	memfeed_step(&c, &other, &f);
	assert_int_equal(c.sbo.st_rb_full, 0);	/* LP1's half was empty */
	assert_int_equal(c.sb[1].n, 1);
	struct step_info more = insn(CODE, INSN_STORE, BUF + 4096u * 16, 4);

	memfeed_step(&c, &more, &f);
	assert_int_equal(c.sbo.st_rb_full, 1);	/* LP0's half was full */
	assert_true(has_event(&c, &f, P4_EV_MEMORY_CANCEL, P4_EVMASK(P4_MEMORY_CANCEL_ST_RB_FULL), 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(part_figures_follow_the_family),
		cmocka_unit_test(a_covered_load_forwards),
		cmocka_unit_test(failed_forwards_replay_by_cause),
		cmocka_unit_test(an_unknown_store_address_holds_the_load),
		cmocka_unit_test(aliasing_64k_waits_for_the_store),
		cmocka_unit_test(a_full_buffer_stalls_the_store),
		cmocka_unit_test(wc_buffers_evict_full_lines_and_the_oldest),
		cmocka_unit_test(memfeed_counts_a_wider_load_after_a_store),
		cmocka_unit_test(memfeed_movnti_fills_wc_buffers_only_when_counted),
		cmocka_unit_test(ht_gives_each_lp_half_the_store_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
