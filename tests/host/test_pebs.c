/*
 * test_pebs.c - pmu/p4_pebs.c against PMU reference section 5: PEBS
 * availability, both DS save area layouts (offsets, sizes), both PEBS
 * record layouts, buffer planning (threshold whole records below the
 * maximum, 32-bit maximum one byte past whole records), the PEBS_ENABLE
 * thread bits relative to the writing LP, and the replay metric table.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "pmu/p4_alloc.h"
#include "pmu/p4_apply.h"
#include "pmu/p4_explain.h"
#include "pmu/p4_pebs.h"
#include "pmu/p4_regs.h"
#include "pmu/p4_spec.h"
#include "pmu/p4_tagging.h"
#include "tests/host/recbus.h"

static void availability(void **state)
{
	uint32_t ds = P4_CPUID1_EDX_DS;

	assert_null(p4_pebs_unavailable(ds, MISC_ENABLE_PERFMON));
	assert_non_null(strstr(p4_pebs_unavailable(0, MISC_ENABLE_PERFMON), "EDX[21]"));
	assert_non_null(strstr(p4_pebs_unavailable(ds, 0), "bit 7"));
	assert_non_null(strstr(p4_pebs_unavailable(ds, MISC_ENABLE_PERFMON |
						     MISC_ENABLE_PEBS_UNAVAIL), "bit 12"));
	/* bit 11 is BTS's: it leaves PEBS alone */
	assert_null(p4_pebs_unavailable(ds, MISC_ENABLE_PERFMON | MISC_ENABLE_BTS_UNAVAIL));
}

/* PMU reference 5.2 tables, field by field. */
static void ds_area_offsets(void **state)
{
	static const uint8_t off32[] = { 0x00, 0x04, 0x08, 0x0c, 0x10, 0x14, 0x18, 0x1c, 0x20 };
	static const uint8_t off64[] = { 0x00, 0x08, 0x10, 0x18, 0x20, 0x28, 0x30, 0x38, 0x40 };
	uint8_t a[0x50];

	for (unsigned f = 0; f < P4_DS_NFIELD; f++) {
		assert_int_equal(p4_ds_layouts[P4_DS_32].field_off[f], off32[f]);
		assert_int_equal(p4_ds_layouts[P4_DS_64].field_off[f], off64[f]);
	}
	assert_int_equal(p4_ds_layouts[P4_DS_32].size, 0x30);
	assert_int_equal(p4_ds_layouts[P4_DS_64].size, 0x50);
	/* The reset field is 64 bits wide in the 32-bit form, 40 bits used. */
	memset(a, 0xee, sizeof(a));
	p4_ds_put(P4_DS_32, a, P4_DS_PEBS_RESET, UINT64_C(0xffffffffffffff9d));
	assert_int_equal(a[0x20], 0x9d);
	assert_int_equal(a[0x24], 0xff);
	assert_int_equal(a[0x25], 0);
	assert_int_equal(a[0x28], 0xee);
	assert_int_equal(p4_ds_get(P4_DS_32, a, P4_DS_PEBS_RESET), UINT64_C(0xffffffff9d));
	/* A 32-bit pointer field touches 4 bytes only. */
	p4_ds_put(P4_DS_32, a, P4_DS_PEBS_INDEX, 0x12345678);
	assert_int_equal(a[0x14], 0x78);
	assert_int_equal(a[0x17], 0x12);
	assert_int_equal(a[0x18], 0xee);
	p4_ds_put(P4_DS_64, a, P4_DS_PEBS_INDEX, UINT64_C(0x1122334455667788));
	assert_int_equal(a[0x28], 0x88);
	assert_int_equal(a[0x2f], 0x11);
	assert_true(p4_ds_get(P4_DS_64, a, P4_DS_PEBS_INDEX) == UINT64_C(0x1122334455667788));
}

static void record_layouts(void **state)
{
	struct p4_pebs_record r, back;
	uint8_t buf[144];

	assert_int_equal(p4_ds_layouts[P4_DS_32].record_size, 40);
	assert_int_equal(p4_ds_layouts[P4_DS_64].record_size, 144);
	for (unsigned k = 0; k < P4_PEBS_NREG; k++)
		r.reg[k] = UINT64_C(0x0101010101010101) * (k + 1);
	memset(buf, 0, sizeof(buf));
	p4_pebs_record_encode(P4_DS_64, &r, buf);
	/* 64-bit: RFLAGS 00H, RIP 08H, RAX 10H, RSP 48H, R8 50H, R15 88H */
	assert_int_equal(buf[0x00], 1);
	assert_int_equal(buf[0x08], 2);
	assert_int_equal(buf[0x10], 3);
	assert_int_equal(buf[0x48], 10);
	assert_int_equal(buf[0x50], 11);
	assert_int_equal(buf[0x88], 18);
	assert_int_equal(buf[0x8f], 18);
	p4_pebs_record_decode(P4_DS_64, buf, &back);
	assert_memory_equal(&back, &r, sizeof(r));

	memset(buf, 0, sizeof(buf));
	p4_pebs_record_encode(P4_DS_32, &r, buf);
	/* 32-bit: EFLAGS 00H, linear IP 04H, EAX 08H, EBP 20H, ESP 24H, size 28H */
	assert_int_equal(buf[0x04], 2);
	assert_int_equal(buf[0x08], 3);
	assert_int_equal(buf[0x20], 9);
	assert_int_equal(buf[0x24], 10);
	assert_int_equal(buf[0x27], 10);
	assert_int_equal(buf[0x28], 0);		/* nothing past 40 bytes */
	p4_pebs_record_decode(P4_DS_32, buf, &back);
	assert_true(back.reg[P4_PEBS_IP] == UINT64_C(0x02020202));
	assert_true(back.reg[P4_PEBS_R8] == 0);
}

/*
 * Every byte its own value: a word read or written in the wrong order, or
 * at the wrong offset, shows.
 */
static void words_are_little_endian(void **state)
{
	struct p4_pebs_record r, back;
	uint8_t buf[144], area[0x50];

	(void)state;
	for (unsigned i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 7 + 1);
	p4_pebs_record_decode(P4_DS_64, buf, &r);
	for (unsigned k = 0; k < P4_PEBS_NREG; k++) {
		uint64_t want = 0;

		for (unsigned j = 0; j < 8; j++)
			want |= (uint64_t)buf[k * 8 + j] << (8 * j);
		assert_true(r.reg[k] == want);
	}
	p4_pebs_record_decode(P4_DS_32, buf, &back);
	for (unsigned k = 0; k < P4_PEBS_NREG; k++) {
		uint64_t want = 0;

		for (unsigned j = 0; k < 10 && j < 4; j++)
			want |= (uint64_t)buf[k * 4 + j] << (8 * j);
		assert_true(back.reg[k] == want);	/* R8-R15: 0 in the 32-bit form */
	}
	memset(area, 0, sizeof(area));
	p4_ds_put(P4_DS_64, area, P4_DS_PEBS_INDEX, UINT64_C(0x8877665544332211));
	assert_int_equal(area[0x28], 0x11);
	assert_int_equal(area[0x2f], 0x88);
	assert_true(p4_ds_get(P4_DS_64, area, P4_DS_PEBS_INDEX) == UINT64_C(0x8877665544332211));
	memset(area, 0, sizeof(area));
	p4_ds_put(P4_DS_32, area, P4_DS_PEBS_INDEX, UINT64_C(0x8877665544332211));
	assert_int_equal(area[0x14], 0x11);
	assert_int_equal(area[0x17], 0x44);
	assert_int_equal(area[0x18], 0);	/* a 32-bit field: four bytes */
	assert_true(p4_ds_get(P4_DS_32, area, P4_DS_PEBS_INDEX) == 0x44332211);
}

static void buffer_plan(void **state)
{
	struct p4_ds_pebs p;
	const char *why = NULL;

	/* 64-bit: 10 records of 144 in 1500 bytes, threshold 2 below the maximum. */
	assert_int_equal(p4_ds_plan(P4_DS_64, 0x10000, 1500, 2, UINT64_C(-100), &p, &why), 0);
	assert_true(p.base == 0x10000 && p.index == 0x10000);
	assert_true(p.max == 0x10000 + 10 * 144);
	assert_true(p.threshold == 0x10000 + 8 * 144);
	assert_true(p.reset == UINT64_C(0xffffffff9c));
	assert_int_equal(p4_ds_capacity(P4_DS_64, &p), 10);
	assert_int_equal((p.max - p.threshold) % 144, 0);
	/* 32-bit: maximum one byte past whole 40-byte records. */
	assert_int_equal(p4_ds_plan(P4_DS_32, 0x2000, 401, 1, 0, &p, &why), 0);
	assert_true(p.max == 0x2000 + 400 + 1);
	assert_true(p.threshold == 0x2000 + 9 * 40);
	assert_int_equal(p4_ds_capacity(P4_DS_32, &p), 10);
	assert_int_equal(p4_ds_plan(P4_DS_32, 0x2000, 400, 1, 0, &p, &why), 0);
	assert_int_equal(p4_ds_capacity(P4_DS_32, &p), 9);
	/* Refusals. */
	assert_int_equal(p4_ds_plan(P4_DS_64, 0, 2 * 144, 2, 0, &p, &why), -1);
	assert_non_null(strstr(why, "too small"));
	assert_int_equal(p4_ds_plan(P4_DS_64, 0, 100 * 144, 0, 0, &p, &why), -1);
	assert_non_null(strstr(why, "at least one record"));
	/* Form choice (5.1): DTES64 or IA-32e mode selects the 64-bit layout. */
	assert_int_equal(p4_ds_form_for(false, false), P4_DS_32);
	assert_int_equal(p4_ds_form_for(true, false), P4_DS_64);
	assert_int_equal(p4_ds_form_for(false, true), P4_DS_64);
}

static void pebs_area_round_trip(void **state)
{
	struct p4_ds_pebs p, q;
	const char *why;
	uint8_t a[0x50];

	assert_int_equal(p4_ds_plan(P4_DS_64, 0xabc000, 4096, 3, UINT64_C(-7), &p, &why), 0);
	memset(a, 0x5a, sizeof(a));
	p4_ds_put_pebs(P4_DS_64, a, &p);
	for (unsigned i = 0; i < 0x20; i++)
		assert_int_equal(a[i], 0);		/* BTS fields cleared */
	p4_ds_get_pebs(P4_DS_64, a, &q);
	assert_memory_equal(&p, &q, sizeof(p));
	p.index += 144;
	assert_int_equal(p4_ds_written(P4_DS_64, &p), 1);
}

/* SDM 18.16.3: relative to the LP executing the WRMSR, not T0/T1. */
static void thread_bits(void **state)
{
	assert_true(p4_pebs_thr_bit(0, 0) == PEBS_ENABLE_MY_THR);
	assert_true(p4_pebs_thr_bit(1, 1) == PEBS_ENABLE_MY_THR);
	assert_true(p4_pebs_thr_bit(0, 1) == PEBS_ENABLE_OTH_THR);
	assert_true(p4_pebs_thr_bit(1, 0) == PEBS_ENABLE_OTH_THR);
	assert_int_equal(p4_pebs_thr_lps(0, PEBS_ENABLE_MY_THR), 1);
	assert_int_equal(p4_pebs_thr_lps(1, PEBS_ENABLE_MY_THR), 2);
	assert_int_equal(p4_pebs_thr_lps(0, PEBS_ENABLE_OTH_THR), 2);
	assert_int_equal(p4_pebs_thr_lps(1, PEBS_ENABLE_OTH_THR), 1);
	assert_int_equal(p4_pebs_thr_lps(1, PEBS_ENABLE_MY_THR | PEBS_ENABLE_OTH_THR), 3);
	assert_int_equal(p4_pebs_thr_lps(0, PEBS_ENABLE_UOP_TAG | 0x1), 0);
}

/* PMU reference 5.5, the "Linux value written" and MATRIX_VERT columns. */
static void replay_metrics(void **state)
{
	static const struct { const char *name; uint32_t pe, mv; } want[] = {
		{ "1stL_cache_load_miss_retired", 0x01000001, 0x1 },
		{ "2ndL_cache_load_miss_retired", 0x01000002, 0x1 },
		{ "DTLB_load_miss_retired", 0x01000004, 0x1 },
		{ "DTLB_store_miss_retired", 0x01000004, 0x2 },
		{ "DTLB_all_miss_retired", 0x01000004, 0x3 },
		{ "Tagged_mispred_branch", 0x01018000, 0x10 },
		{ "MOB_load_replay_retired", 0x01000200, 0x1 },
		{ "split_load_retired", 0x01000400, 0x1 },
		{ "split_store_retired", 0x01000400, 0x2 },
	};
	const struct p4_replay_metric *m;

	for (unsigned i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		m = p4_replay_metric_by_name(want[i].name, (unsigned)strlen(want[i].name));
		assert_non_null(m);
		assert_int_equal(m->pebs_enable, want[i].pe);
		assert_int_equal(m->matrix_vert, want[i].mv);
		assert_true(m->pebs_enable & PEBS_ENABLE_UOP_TAG);
		assert_false(m->pebs_enable & (PEBS_ENABLE_MY_THR | PEBS_ENABLE_OTH_THR));
		assert_int_equal(m->pebs_enable & ~(PEBS_ENABLE_METRICS | PEBS_ENABLE_UOP_TAG), 0);
		assert_int_equal(m->extra == P4_NEVENT, m->extra_escr == P4_ESCR_NONE);
		if (m->extra != P4_NEVENT)
			assert_true(p4_event_uses_escr(m->extra, m->extra_escr));
	}
	m = p4_replay_metric_by_name("split_load_retired", 18);
	assert_int_equal(m->extra, P4_EV_LOAD_PORT_REPLAY);
	assert_int_equal(m->extra_escr, P4_SAAT_ESCR1);
	m = p4_replay_metric_by_name("SPLIT_STORE_RETIRED", 19);
	assert_int_equal(m->extra, P4_EV_STORE_PORT_REPLAY);
	assert_int_equal(m->extra_escr, P4_SAAT_ESCR0);
	m = p4_replay_metric_by_name("MOB_load_replay_retired", 23);
	assert_int_equal(m->extra_mask, (1u << 4) | (1u << 5));	/* PARTIAL_DATA, UNALGN_ADDR */
	assert_null(p4_replay_metric_by_name("1stL_cache_load_miss", 20));
}

static int plan_specs(const char *const *specs, unsigned n, struct p4_plan *plan,
		      struct p4_alloc_error *err)
{
	static struct p4_caps caps;
	struct p4_alloc_ctx ctx = { &caps, false, P4_SPLIT_GLOBAL };
	struct p4_request r[4];
	struct p4_spec_error serr;

	assert_true(p4_caps_lookup(&(struct p4_sig){ 15, 4, 1 }, &caps));
	memset(r, 0, sizeof(r));
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(p4_spec_parse(specs[i], &caps, &r[i].spec, &serr), 0);
	return p4_alloc_plan(&ctx, r, n, plan, err);
}

/*
 * A metric name is replay_event NBOGUS plus the metric's PEBS_ENABLE and
 * MATRIX_VERT (PMU reference 5.5: 1stL_cache_load_miss_retired 01000001H and
 * 1H), ORed in by p4_apply; the split metrics also program their upstream
 * ESCR, which no other event may then take; one metric per plan.
 */
static void metrics_are_planned(void **state)
{
	static const char *const one[] = { "1stL_cache_load_miss_retired" };
	static const char *const split[] = { "split_load_retired:u" };
	static const char *const two[] = { "1stL_cache_load_miss_retired",
					   "DTLB_load_miss_retired" };
	static const char *const taken[] = { "load_port_replay:split_ld:u",
					     "load_port_replay:split_ld:k",
					     "split_load_retired" };
	struct p4_spec spec;
	struct p4_spec_error serr;
	struct p4_alloc_error err;
	struct p4_apply_result res;
	struct p4_plan plan;
	struct recbus rb;
	char text[96];

	assert_int_equal(p4_spec_parse("1stl_cache_load_miss_retired", NULL, &spec, &serr), 0);
	assert_int_equal(spec.event, P4_EV_REPLAY_EVENT);
	assert_int_equal(spec.mask, P4_EVMASK(P4_REPLAY_EVENT_NBOGUS));
	p4_spec_format(&spec, text, sizeof(text));
	assert_string_equal(text, "1stL_cache_load_miss_retired:NBOGUS:u:k");

	assert_int_equal(plan_specs(one, 1, &plan, &err), 0);
	assert_int_equal(plan.pebs_metric, 0x01000001);
	assert_int_equal(plan.matrix_vert, 0x1);
	assert_int_equal(plan.metric_escr, P4_ESCR_NONE);
	recbus_init(&rb);
	p4_apply(&rb.bus, &plan, &res);
	assert_int_equal(recbus_value(&rb, MSR_PEBS_ENABLE), 0x01000001);
	assert_int_equal(recbus_value(&rb, MSR_PEBS_MATRIX_VERT), 0x1);
	assert_int_equal(res.faults + res.mismatches, 0);

	assert_int_equal(plan_specs(split, 1, &plan, &err), 0);
	assert_int_equal(plan.pebs_metric, 0x01000400);
	assert_int_equal(plan.metric_escr, P4_SAAT_ESCR1);
	/* load_port_replay (event select 04H) SPLIT_LD (mask bit 1), T0_USR */
	assert_int_equal(plan.metric_escr_value, (0x04u << 25) | (1u << 10) | ESCR_T0_USR);
	recbus_init(&rb);
	p4_apply(&rb.bus, &plan, &res);
	assert_int_equal(recbus_value(&rb, p4_escrs[P4_SAAT_ESCR1].msr), plan.metric_escr_value);

	assert_int_equal(plan_specs(two, 2, &plan, &err), -1);
	assert_non_null(strstr(err.msg, "one replay-tagging metric at a time"));
	assert_int_equal(plan_specs(taken, 3, &plan, &err), -1);
	assert_non_null(strstr(err.msg, "upstream ESCR is taken"));
}

/*
 * F4, F10: a PEBS request gets no OVF_PMI even when one is asked for (one
 * PMI per record on hardware), and PEBS_ENABLE gets bit 24 besides MY_THR
 * (the non-HT set-up text's "Enable PEBS flag", perfmon2's 25|24|0).
 */
static void pebs_counter_programming(void **state)
{
	static struct p4_caps caps;
	struct p4_alloc_ctx ctx = { &caps, false, P4_SPLIT_GLOBAL };
	struct p4_request r = { .lp = P4_LP0, .pmi = P4_PMI_LP0, .role = P4_ROLE_PEBS };
	struct p4_spec_error serr;
	struct p4_alloc_error err;
	struct p4_apply_result res;
	struct p4_plan plan;
	struct recbus rb;

	assert_true(p4_caps_lookup(&(struct p4_sig){ 15, 4, 1 }, &caps));
	assert_int_equal(p4_spec_parse("front_end_event:nbogus:period=100", &caps, &r.spec, &serr), 0);
	r.spec.pebs = true;
	if (p4_alloc_plan(&ctx, &r, 1, &plan, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(plan.slot[0].counter, P4_IQ_COUNTER4);
	assert_int_equal(plan.slot[0].cccr_value & (CCCR_OVF_PMI_T0 | CCCR_OVF_PMI_T1), 0);
	plan.ds_area_set = true;
	recbus_init(&rb);
	p4_apply(&rb.bus, &plan, &res);
	assert_int_equal(res.faults + res.mismatches, 0);
	assert_int_equal(recbus_value(&rb, MSR_PEBS_ENABLE), PEBS_ENABLE_MY_THR | PEBS_ENABLE_UOP_TAG);
}

/* F7: the threshold several records short of the maximum (about 90 %). */
static void threshold_several_records_short(void **state)
{
	struct p4_ds_pebs p;
	const char *why;

	assert_int_equal(p4_ds_threshold_below(2), 1);
	assert_int_equal(p4_ds_threshold_below(8), 2);
	assert_int_equal(p4_ds_threshold_below(64), 6);
	assert_int_equal(p4_ds_threshold_below(128), 12);
	assert_int_equal(p4_ds_plan(P4_DS_64, 0x1000, 8 * 144, p4_ds_threshold_below(8), 0, &p,
				    &why), 0);
	assert_true(p.threshold == 0x1000 + 6 * 144);
	assert_true(p.max == 0x1000 + 8 * 144);
}

/*
 * The tagging rules stat, record and selftest share (PMU reference 5.6, 5.7):
 * front_end_event without a uop_type request for its LP, and an
 * execution_event slot no FIRM event tags, would count 0.
 */
static void tagging_rules(void **state)
{
	static struct p4_caps caps;
	struct p4_request r[3];
	struct p4_spec_error serr;
	struct p4_request t;
	char why[192];

	assert_true(p4_caps_lookup(&(struct p4_sig){ 15, 4, 1 }, &caps));
	memset(r, 0, sizeof(r));
	assert_int_equal(p4_spec_parse("front_end_event:nbogus:u", &caps, &r[0].spec, &serr), 0);
	assert_int_equal(p4_tag_frontend_untagged(r, 1), 0);
	assert_true(p4_tag_why(r, 1, why, sizeof(why)));
	assert_non_null(strstr(why, "#1 front_end_event counts only the uops the front end tags"));
	assert_int_equal(p4_tag_frontend_tagger(&caps, &r[0], &t), 0);
	assert_int_equal(t.spec.event, P4_EV_UOP_TYPE);
	assert_int_equal(t.spec.mask, P4_EVMASK(P4_UOP_TYPE_TAGLOADS) | P4_EVMASK(P4_UOP_TYPE_TAGSTORES));
	assert_true(t.spec.usr && !t.spec.os);		/* the tagged event's privilege */
	assert_int_equal(t.pmi, P4_PMI_NONE);
	r[1] = t;
	assert_int_equal(p4_tag_frontend_untagged(r, 2), -1);
	assert_false(p4_tag_why(r, 2, why, sizeof(why)));
	r[1].lp = P4_LP1;				/* a tagger for the other LP does not do */
	assert_int_equal(p4_tag_frontend_untagged(r, 2), 0);

	memset(r, 0, sizeof(r));
	assert_int_equal(p4_spec_parse("execution_event:nbogus1", &caps, &r[0].spec, &serr), 0);
	assert_int_equal(p4_tag_exec_untagged(r, 1), 1);
	assert_true(p4_tag_why(r, 1, why, sizeof(why)));
	assert_non_null(strstr(why, "nothing tags with bit 1; add one, e.g. -e x87_FP_uop:TAG1"));
	assert_int_equal(p4_spec_parse("x87_FP_uop:TAG1", &caps, &r[1].spec, &serr), 0);
	assert_int_equal(p4_tag_exec_untagged(r, 2), -1);
}

static void collect_line(void *ctx, const char *line)
{
	char *out = ctx;
	size_t len = strlen(out);

	snprintf(out + len, 2048 - len, "%s\n", line);
}

/* explain names the metric a PEBS_ENABLE / MATRIX_VERT value selects. */
static void explain_names_metrics(void **state)
{
	struct p4_caps caps;
	char out[2048];
	struct p4_msr_write w[2] = { { MSR_PEBS_ENABLE, 0x01000001 },
				     { MSR_PEBS_MATRIX_VERT, 0x2 } };

	assert_true(p4_caps_lookup(&(struct p4_sig){ 15, 4, 1 }, &caps));
	out[0] = '\0';
	p4_explain(w, 2, &caps, false, collect_line, out);
	assert_non_null(strstr(out, "PEBS_ENABLE <- 1000001H: metrics 1H, UOP_Tag: replay metric "
			       "1stL_cache_load_miss_retired\n"));
	assert_non_null(strstr(out, "PEBS_MATRIX_VERT <- 2H: as for DTLB_store_miss_retired | "
			       "split_store_retired\n"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(availability),
		cmocka_unit_test(ds_area_offsets),
		cmocka_unit_test(record_layouts),
		cmocka_unit_test(words_are_little_endian),
		cmocka_unit_test(buffer_plan),
		cmocka_unit_test(pebs_area_round_trip),
		cmocka_unit_test(thread_bits),
		cmocka_unit_test(replay_metrics),
		cmocka_unit_test(metrics_are_planned),
		cmocka_unit_test(explain_names_metrics),
		cmocka_unit_test(pebs_counter_programming),
		cmocka_unit_test(threshold_several_records_short),
		cmocka_unit_test(tagging_rules),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
