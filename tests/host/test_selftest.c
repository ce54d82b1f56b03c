/*
 * test_selftest.c - the portable half of `selftest` (selftest/report.c)
 * and the model's fault injection it uses (dead counter, RDPMC, erratum).
 *
 * The judgements with documented bounds (selftest/judge.c) get values
 * on both sides of each bound, worked out by hand from the bound's text.
 *
 * The NBS: lines are checked against the format selftest.h describes, with
 * a parser and a bitwise CRC-32 written here (the reflected polynomial
 * EDB88320H, preset and final inversion of IEEE 802.3), so a mismatch
 * between description and encoder fails.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pmu/model/p4_model.h"
#include "pmu/p4_regs.h"
#include "selftest/selftest.h"

static uint32_t crc_bitwise(const char *p, size_t n)
{
	uint32_t c = 0xffffffff;

	for (size_t i = 0; i < n; i++) {
		c ^= (uint8_t)p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (c & 1 ? 0xedb88320 : 0);
	}
	return ~c;
}

/* Split an NBS: line into fields (after the prefix, before the CRC); checks the CRC. */
static int parse_line(const char *line, char fields[][128], unsigned max)
{
	const char *body = line + strlen(SELFTEST_PREFIX), *last = strrchr(line, '|');
	unsigned n = 0;
	char crc[9];

	assert_int_equal(strncmp(line, SELFTEST_PREFIX, strlen(SELFTEST_PREFIX)), 0);
	assert_non_null(last);
	assert_int_equal(strlen(last + 1), 8);
	snprintf(crc, sizeof(crc), "%08X", crc_bitwise(body, (size_t)(last - body)));
	assert_string_equal(last + 1, crc);
	for (const char *p = body; p <= last && n < max; n++) {
		const char *q = strchr(p, '|');
		size_t len = (size_t)(q - p);

		assert_true(len < 128);
		memcpy(fields[n], p, len);
		fields[n][len] = '\0';
		p = q + 1;
		if (q == last)
			return (int)n + 1;
	}
	return (int)n;
}

static void judge_exact_and_range(void **state)
{
	struct selftest_result r = { .group = "counters" };

	selftest_judge_exact(&r, 300, 300);
	assert_int_equal(r.status, SELFTEST_PASS);
	assert_string_equal(r.measured, "300");
	assert_string_equal(r.expected, "300");
	selftest_judge_exact(&r, 0, 300);
	assert_int_equal(r.status, SELFTEST_FAIL);
	selftest_judge_range(&r, 152, 152, 1000);
	assert_int_equal(r.status, SELFTEST_PASS);
	assert_string_equal(r.expected, "152..1000");
	selftest_judge_range(&r, 1000, 152, 1000);
	assert_int_equal(r.status, SELFTEST_PASS);
	selftest_judge_range(&r, 151, 152, 1000);
	assert_int_equal(r.status, SELFTEST_FAIL);
	selftest_judge_range(&r, 1001, 152, 1000);
	assert_int_equal(r.status, SELFTEST_FAIL);
	selftest_judge_range(&r, 300, 300, UINT64_MAX);
	assert_int_equal(r.status, SELFTEST_PASS);
	assert_string_equal(r.expected, ">= 300");
	selftest_judge_range(&r, 299, 300, UINT64_MAX);
	assert_int_equal(r.status, SELFTEST_FAIL);
}

static void totals_and_skip(void **state)
{
	struct selftest_result r[3] = { { .group = "a" }, { .group = "b" }, { .group = "c" } };
	struct selftest_totals t = { 0 };

	selftest_judge_exact(&r[0], 1, 1);
	selftest_judge_exact(&r[1], 1, 2);
	selftest_skip(&r[2], "not implemented yet");
	for (int i = 0; i < 3; i++)
		selftest_count(&t, &r[i]);
	assert_int_equal(t.passed, 1);
	assert_int_equal(t.failed, 1);
	assert_int_equal(t.skipped, 1);
	assert_string_equal(r[2].note, "not implemented yet");
	assert_string_equal(selftest_status_name(r[2].status), "SKIP");
}

static void human_line_shows_both_values(void **state)
{
	struct selftest_result r = { .group = "counters", .name = "counter 12" };
	char buf[SELFTEST_LINE_MAX];

	selftest_judge_exact(&r, 299, 300);
	snprintf(r.note, sizeof(r.note), "loop 150 minus loop 50");
	selftest_format(&r, false, buf, sizeof(buf));
	/* a failure always shows how the expectation was made */
	assert_non_null(strstr(buf, "FAIL"));
	assert_non_null(strstr(buf, "measured 299, expected 300 (loop 150 minus loop 50)"));
	selftest_judge_exact(&r, 300, 300);
	selftest_format(&r, false, buf, sizeof(buf));
	assert_null(strstr(buf, "loop 150"));
	selftest_format(&r, true, buf, sizeof(buf));
	assert_non_null(strstr(buf, "(loop 150 minus loop 50)"));
}

static void frame_fields_and_crc(void **state)
{
	struct selftest_result r = { .group = "cascade", .name = "bit 30 0 -> 2 (BPU)" };
	char line[SELFTEST_LINE_MAX], f[10][128];

	selftest_judge_range(&r, 45511, 43463, 47559);
	snprintf(r.note, sizeof(r.note), "a|b\tc");	/* '|' and a control character */
	assert_true(selftest_frame_result(line, sizeof(line), 7, &r) > 0);
	assert_int_equal(parse_line(line, f, 10), 8);
	assert_string_equal(f[0], "7");
	assert_string_equal(f[1], "check");
	assert_string_equal(f[2], "cascade");
	assert_string_equal(f[3], "PASS");
	assert_string_equal(f[4], "bit 30 0 -> 2 (BPU)");
	assert_string_equal(f[5], "45511");
	assert_string_equal(f[6], "43463..47559");
	assert_string_equal(f[7], "a/b?c");
}

static void frame_corruption_and_space(void **state)
{
	const char *fields[] = { "end", "79", "0", "2", "84" };
	char line[SELFTEST_LINE_MAX], small[24];
	int n = selftest_frame(line, sizeof(line), 83, fields, 5);
	char *last;

	assert_int_equal(n, (int)strlen(line));
	assert_int_equal(strncmp(line, "NBS:83|end|79|0|2|84|", 21), 0);
	/* one changed digit no longer matches the CRC */
	last = strrchr(line, '|');
	line[8] = line[8] == '7' ? '8' : '7';
	assert_int_not_equal(crc_bitwise(line + 4, (size_t)(last - line - 4)),
			     (uint32_t)strtoul(last + 1, NULL, 16));
	assert_int_equal(selftest_frame(small, sizeof(small), 83, fields, 5), -1);
}

static void model_dead_counter_never_counts(void **state)
{
	static struct p4_model m;
	struct p4_model_config cfg = { .sig = { 0x0f, 4, 1 } };
	/* instr_retired NBOGUSNTAG on CRU_ESCR0 (T0_OS|T0_USR), counters 12 and 16 (select 4) */
	uint64_t escr = (UINT64_C(2) << 25) | (UINT64_C(1) << 9) | ESCR_T0_OS | ESCR_T0_USR;
	uint64_t cccr = CCCR_ENABLE | (UINT64_C(4) << 13) | (UINT64_C(3) << 16);
	uint64_t v12, v16;

	assert_int_equal(p4_model_init(&m, &cfg), 0);
	assert_int_equal(msr_bus_write(&m.bus, 0x3b8, escr), 0);
	assert_int_equal(msr_bus_write(&m.bus, MSR_IQ_CCCR0, cccr), 0);
	assert_int_equal(msr_bus_write(&m.bus, MSR_IQ_CCCR4, cccr), 0);
	p4_model_set_faults(&m, &(struct p4_model_faults){ .dead = 1u << P4_IQ_COUNTER0 });
	assert_int_equal(p4_model_event(&m, 0, 0, P4_EV_INSTR_RETIRED, 1, 7), 0);
	msr_bus_read(&m.bus, MSR_IQ_COUNTER0, &v12);
	msr_bus_read(&m.bus, MSR_IQ_COUNTER4, &v16);
	assert_int_equal(v12, 0);
	assert_int_equal(v16, 7);
	p4_model_set_faults(&m, &(struct p4_model_faults){ 0 });
	assert_int_equal(p4_model_event(&m, 0, 0, P4_EV_INSTR_RETIRED, 1, 7), 0);
	msr_bus_read(&m.bus, MSR_IQ_COUNTER0, &v12);
	assert_int_equal(v12, 7);
	p4_model_set_faults(&m, &(struct p4_model_faults){ .dead = 1u << P4_IQ_COUNTER4 });
	p4_model_reset(&m);	/* power-on heals it */
	assert_int_equal(m.faults.dead, 0);
}

/* RDPMC of a faulty counter reads one more; the others still equal the counter. */
static void model_rdpmc_fault(void **state)
{
	static struct p4_model m;
	struct p4_model_config cfg = { .sig = { 0x0f, 4, 1 } };
	uint64_t v;

	assert_int_equal(p4_model_init(&m, &cfg), 0);
	assert_int_equal(msr_bus_write(&m.bus, MSR_IQ_COUNTER4, 0xab12345678ull), 0);
	assert_int_equal(msr_bus_write(&m.bus, MSR_IQ_COUNTER5, 0xab12345678ull), 0);
	p4_model_set_faults(&m, &(struct p4_model_faults){ .rdpmc = 1u << P4_IQ_COUNTER4 });
	assert_int_equal(p4_model_rdpmc(&m, 16, &v), 0);
	assert_int_equal(v, 0xab12345679ull);
	assert_int_equal(p4_model_rdpmc(&m, 16 | 0x80000000u, &v), 0);
	assert_int_equal(v, 0x12345679u);
	assert_int_equal(p4_model_rdpmc(&m, 17, &v), 0);
	assert_int_equal(v, 0xab12345678ull);
}

/*
 * The erratum flipped: 0F_04 (no erratum) then loses the PMI of a counter
 * in cascade mode, as 0F_02 does (SDM 18.15.5.7).
 */
static void model_erratum_flip(void **state)
{
	static struct p4_model m;
	struct p4_model_config cfg = { .sig = { 0x0f, 4, 1 } };
	uint64_t escr = (UINT64_C(2) << 25) | (UINT64_C(1) << 9) | ESCR_T0_OS | ESCR_T0_USR;
	/* counter 12 in cascade mode (bit 30), started: OVF_PMI_T0, ESCR select 4 */
	uint64_t cccr = CCCR_ENABLE | CCCR_CASCADE | CCCR_OVF_PMI_T0 | (UINT64_C(4) << 13) |
			(UINT64_C(3) << 16);

	assert_int_equal(p4_model_init(&m, &cfg), 0);
	assert_int_equal(msr_bus_write(&m.bus, 0x3b8, escr), 0);
	assert_int_equal(msr_bus_write(&m.bus, MSR_IQ_COUNTER0, P4_COUNTER_MASK), 0);
	assert_int_equal(msr_bus_write(&m.bus, MSR_IQ_CCCR0, cccr), 0);
	p4_model_event(&m, 0, 0, P4_EV_INSTR_RETIRED, 1, 2);	/* overflow, then one more */
	assert_int_equal(m.pmi_count[0], 1);
	p4_model_set_faults(&m, &(struct p4_model_faults){ .erratum_flip = true });
	assert_int_equal(msr_bus_write(&m.bus, MSR_IQ_COUNTER0, P4_COUNTER_MASK), 0);
	assert_int_equal(msr_bus_write(&m.bus, MSR_IQ_CCCR0, cccr), 0);
	p4_model_event(&m, 0, 0, P4_EV_INSTR_RETIRED, 1, 2);
	assert_int_equal(m.pmi_count[0], 1);
	assert_int_equal(m.pmi_suppressed, 1);
}

/*
 * Cycles over `loop 100` (3 x 100 + 6 = 306 instructions): at least
 * 306 / 3 = 102, at most the TSC ticks of the run (here 1000).
 */
static void judge_cycles_bounds(void **state)
{
	struct selftest_result r = { .group = "counters" };

	selftest_judge_cycles(&r, 101, 306, 1000);
	assert_int_equal(r.status, SELFTEST_FAIL);		/* > 3 instructions a cycle */
	assert_string_equal(r.expected, "102..1000");
	selftest_judge_cycles(&r, 102, 306, 1000);
	assert_int_equal(r.status, SELFTEST_PASS);
	selftest_judge_cycles(&r, 1000, 306, 1000);
	assert_int_equal(r.status, SELFTEST_PASS);
	selftest_judge_cycles(&r, 1001, 306, 1000);
	assert_int_equal(r.status, SELFTEST_FAIL);		/* more cycles than TSC ticks */
	assert_string_equal(r.measured, "1001");
	selftest_judge_cycles(&r, 0, 306, 1000);
	assert_int_equal(r.status, SELFTEST_FAIL);		/* a counter that never counts */
	assert_non_null(strstr(r.note, "306 instructions/3 .. TSC"));
}

/*
 * The cycles a longer run adds: half of instructions/3 and more pass (the
 * window's stalls can hide part of the extra retirement time: judge.c), a
 * counter that adds less or nothing fails.
 */
static void judge_cycles_added_bound(void **state)
{
	struct selftest_result r = { .group = "counters" };

	selftest_judge_cycles_added(&r, 99, 300);	/* the model's reading on 0F_02 */
	assert_int_equal(r.status, SELFTEST_PASS);
	selftest_judge_cycles_added(&r, 50, 300);
	assert_int_equal(r.status, SELFTEST_PASS);
	assert_string_equal(r.expected, ">= 50");
	selftest_judge_cycles_added(&r, 49, 300);
	assert_int_equal(r.status, SELFTEST_FAIL);
	assert_string_equal(r.measured, "49");
	selftest_judge_cycles_added(&r, 0, 300);	/* a stuck counter */
	assert_int_equal(r.status, SELFTEST_FAIL);
	assert_non_null(strstr(r.note, "300 more instructions: at least half of their 100 cycles"));
}

/*
 * G7: an instr_retired cascade partner may miss up to two events of the
 * cycle its starter overflowed in (three retire a cycle), never count more
 * than the starter past its period; one event a cycle stays exact.
 */
static void judge_partner_bounds(void **state)
{
	struct selftest_result r = { .group = "cascade" };

	selftest_judge_partner(&r, 406, 406, 3);
	assert_int_equal(r.status, SELFTEST_PASS);
	assert_string_equal(r.expected, "404..406");
	selftest_judge_partner(&r, 404, 406, 3);
	assert_int_equal(r.status, SELFTEST_PASS);		/* two of the cycle missed */
	selftest_judge_partner(&r, 403, 406, 3);
	assert_int_equal(r.status, SELFTEST_FAIL);
	selftest_judge_partner(&r, 407, 406, 3);
	assert_int_equal(r.status, SELFTEST_FAIL);		/* more than the starter saw */
	selftest_judge_partner(&r, 1, 1, 3);
	assert_int_equal(r.status, SELFTEST_PASS);
	assert_string_equal(r.expected, "0..1");
	selftest_judge_partner(&r, 159, 160, 1);
	assert_int_equal(r.status, SELFTEST_FAIL);		/* one a cycle: exact */
	assert_string_equal(r.expected, "160");
}

/*
 * G3: selftest's PMI count over 3052 events at period 100: 30 with the PMI
 * on the next event, 18 when every PMI comes 64 events late; more than 30
 * or fewer than 18 fail.
 */
static void judge_pmis_allows_skid(void **state)
{
	struct selftest_result r = { .group = "overflow" };

	selftest_judge_pmis(&r, 30, 3052, 100, 64);
	assert_int_equal(r.status, SELFTEST_PASS);
	assert_string_equal(r.expected, "18..30");
	selftest_judge_pmis(&r, 18, 3052, 100, 64);
	assert_int_equal(r.status, SELFTEST_PASS);
	selftest_judge_pmis(&r, 31, 3052, 100, 64);
	assert_int_equal(r.status, SELFTEST_FAIL);
	selftest_judge_pmis(&r, 17, 3052, 100, 64);
	assert_int_equal(r.status, SELFTEST_FAIL);
	selftest_judge_pmis(&r, 22, 3052, 100, 32);		/* 3052 / 133 = 22 */
	assert_int_equal(r.status, SELFTEST_PASS);
	selftest_judge_pmis(&r, 30, 3052, 100, 0);
	assert_string_equal(r.expected, "30..30");
}

/* uops between loop 50 and loop 150: at least the 300 instructions retired. */
static void judge_uops_bound(void **state)
{
	struct selftest_result r = { .group = "uops" };

	selftest_judge_uops(&r, 299, 300);
	assert_int_equal(r.status, SELFTEST_FAIL);
	assert_string_equal(r.expected, ">= 300");
	selftest_judge_uops(&r, 300, 300);
	assert_int_equal(r.status, SELFTEST_PASS);
	selftest_judge_uops(&r, 450, 300);
	assert_int_equal(r.status, SELFTEST_PASS);
	selftest_judge_uops(&r, 0, 300);
	assert_int_equal(r.status, SELFTEST_FAIL);
	assert_non_null(strstr(r.note, "instr_retired's 300"));
}

/* T0_OS while LP0 waits for LP1 over 1000 TSC cycles: 1 .. 3000 instructions. */
static void judge_wait_cell_bounds(void **state)
{
	struct selftest_result r = { .group = "threads" };

	selftest_judge_wait_cell(&r, 0, 1000);
	assert_int_equal(r.status, SELFTEST_FAIL);		/* T0_OS does not count LP0 */
	assert_string_equal(r.expected, "1..3000");
	selftest_judge_wait_cell(&r, 1, 1000);
	assert_int_equal(r.status, SELFTEST_PASS);
	selftest_judge_wait_cell(&r, 3000, 1000);
	assert_int_equal(r.status, SELFTEST_PASS);
	selftest_judge_wait_cell(&r, 3001, 1000);
	assert_int_equal(r.status, SELFTEST_FAIL);		/* counts more than LP0 can retire */
	selftest_judge_wait_cell(&r, 5, UINT64_MAX / 2);	/* 3 x TSC saturates */
	assert_int_equal(r.status, SELFTEST_PASS);
}

/* wl_memwalk's loads as workloads.S (x86-64) and arch/x86/32/workloads.S list them, offsets made up. */
static const struct selftest_loads loads64 = { 0, 1, 0, 2, { 0xc, 0x1e, 0x1f } };
static const struct selftest_loads loads32 = { 1, 3, 1, 2, { 3, 8, 0xe, 0x11, 0x16, 0x1b, 0x1c } };

static void nth_load_follows_the_listing(void **state)
{
	/* memwalk 4096 16: 256 movzbl, then pop and ret = 258 */
	assert_int_equal(selftest_load_count(&loads64, 256, 1), 258);
	assert_int_equal(selftest_nth_load(&loads64, 256, 1, 0), -1);
	assert_int_equal(selftest_nth_load(&loads64, 256, 1, 5), 0);
	assert_int_equal(selftest_nth_load(&loads64, 256, 1, 256), 0);
	assert_int_equal(selftest_nth_load(&loads64, 256, 1, 257), 1);
	assert_int_equal(selftest_nth_load(&loads64, 256, 1, 258), 2);
	assert_int_equal(selftest_nth_load(&loads64, 256, 1, 259), -1);
	/* ia32, 4 loads a pass, 2 passes: 1 + 2 x (4 x 3 + 1) + 2 = 29 */
	assert_int_equal(selftest_load_count(&loads32, 4, 2), 29);
	assert_int_equal(selftest_nth_load(&loads32, 4, 2, 1), 0);	/* the buffer argument */
	assert_int_equal(selftest_nth_load(&loads32, 4, 2, 2), 1);	/* movzbl */
	assert_int_equal(selftest_nth_load(&loads32, 4, 2, 4), 3);	/* size argument */
	assert_int_equal(selftest_nth_load(&loads32, 4, 2, 5), 1);
	assert_int_equal(selftest_nth_load(&loads32, 4, 2, 13), 3);	/* 4th iteration's cmp */
	assert_int_equal(selftest_nth_load(&loads32, 4, 2, 14), 4);	/* pass count */
	assert_int_equal(selftest_nth_load(&loads32, 4, 2, 15), 1);	/* pass 2 */
	assert_int_equal(selftest_nth_load(&loads32, 4, 2, 27), 4);
	assert_int_equal(selftest_nth_load(&loads32, 4, 2, 28), 5);	/* pop */
	assert_int_equal(selftest_nth_load(&loads32, 4, 2, 29), 6);	/* ret */
	assert_int_equal(selftest_nth_load(&loads32, 4, 2, 30), -1);
}

/* PEBS period 5 over memwalk 4096 16: 258 / 5 = 51 records, all at the movzbl (+CH). */
static void judge_pebs_ips_on_the_load(void **state)
{
	struct selftest_result r = { .group = "pebs" };
	uint64_t ip[51];

	for (unsigned k = 0; k < 51; k++)
		ip[k] = 0x1000 + 0xc;
	selftest_judge_pebs_ips(&r, &loads64, 256, 1, 5, ip, 51, 51, 0x1000);
	assert_int_equal(r.status, SELFTEST_PASS);
	assert_string_equal(r.measured, "51");
	ip[9] = 0x1010;						/* one record skidded */
	selftest_judge_pebs_ips(&r, &loads64, 256, 1, 5, ip, 51, 51, 0x1000);
	assert_int_equal(r.status, SELFTEST_FAIL);
	assert_string_equal(r.measured, "50");
	assert_string_equal(r.note, "record 10 at +10H, the load is at +CH");
	ip[9] = 0x100c;
	selftest_judge_pebs_ips(&r, &loads64, 256, 1, 5, ip, 50, 51, 0x1000);
	assert_int_equal(r.status, SELFTEST_FAIL);		/* a record missing */
	selftest_judge_pebs_ips(&r, &loads64, 256, 1, 5, ip, 0, 51, 0x1000);
	assert_int_equal(r.status, SELFTEST_FAIL);		/* none at all */
	/* period 129: loads 129 (a movzbl) and 258 (the ret) */
	ip[0] = 0x100c;
	ip[1] = 0x101f;
	selftest_judge_pebs_ips(&r, &loads64, 256, 1, 129, ip, 2, 2, 0x1000);
	assert_int_equal(r.status, SELFTEST_PASS);
	ip[1] = 0x100c;
	selftest_judge_pebs_ips(&r, &loads64, 256, 1, 129, ip, 2, 2, 0x1000);
	assert_int_equal(r.status, SELFTEST_FAIL);
}

static void judge_uncore_bound(void **state)
{
	struct selftest_result r = { .group = "uncore" };

	selftest_judge_uncore(&r, 256, 256);
	assert_int_equal(r.status, SELFTEST_PASS);
	selftest_judge_uncore(&r, 300, 256);
	assert_int_equal(r.status, SELFTEST_PASS);
	assert_string_equal(r.expected, ">= 256");
	selftest_judge_uncore(&r, 255, 256);
	assert_int_equal(r.status, SELFTEST_FAIL);
	assert_string_equal(r.note, "at least the core's L3 read misses "
			    "(BSQ_cache_reference:RD_3rdL_MISS 256), SDM 18.20");
}

/* An ESCR with stuck bits: a write sets bits but clears none; healed, it writes again. */
static void model_stuck_escr(void **state)
{
	static struct p4_model m;
	struct p4_model_config cfg = { .sig = { 0x0f, 4, 1 } };
	uint64_t v;

	assert_int_equal(p4_model_init(&m, &cfg), 0);
	p4_model_set_faults(&m, &(struct p4_model_faults){ .stuck_escr = 0x3ca });
	assert_int_equal(msr_bus_write(&m.bus, 0x3ca, 0x7e00000c), 0);
	assert_int_equal(msr_bus_write(&m.bus, 0x3ca, 0x00000204), 0);
	msr_bus_read(&m.bus, 0x3ca, &v);
	assert_int_equal(v, 0x7e00020c);
	assert_int_equal(msr_bus_write(&m.bus, 0x3cb, 0x0c), 0);	/* its neighbour is fine */
	assert_int_equal(msr_bus_write(&m.bus, 0x3cb, 0), 0);
	msr_bus_read(&m.bus, 0x3cb, &v);
	assert_int_equal(v, 0);
	p4_model_set_faults(&m, &(struct p4_model_faults){ 0 });
	assert_int_equal(msr_bus_write(&m.bus, 0x3ca, 0), 0);
	msr_bus_read(&m.bus, 0x3ca, &v);
	assert_int_equal(v, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(judge_exact_and_range),
		cmocka_unit_test(totals_and_skip),
		cmocka_unit_test(human_line_shows_both_values),
		cmocka_unit_test(frame_fields_and_crc),
		cmocka_unit_test(frame_corruption_and_space),
		cmocka_unit_test(model_dead_counter_never_counts),
		cmocka_unit_test(model_rdpmc_fault),
		cmocka_unit_test(model_erratum_flip),
		cmocka_unit_test(judge_cycles_bounds),
		cmocka_unit_test(judge_cycles_added_bound),
		cmocka_unit_test(judge_uops_bound),
		cmocka_unit_test(judge_partner_bounds),
		cmocka_unit_test(judge_pmis_allows_skid),
		cmocka_unit_test(judge_wait_cell_bounds),
		cmocka_unit_test(nth_load_follows_the_listing),
		cmocka_unit_test(judge_pebs_ips_on_the_load),
		cmocka_unit_test(judge_uncore_bound),
		cmocka_unit_test(model_stuck_escr),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
