/*
 * test_model_pebs.c - the software PMU's PEBS assist (PMU reference 5.1-5.3,
 * SDM 18.16.3), planned and programmed by the real pmu/ code (p4_alloc,
 * p4_apply) through the model's bus, with a byte array as guest memory:
 * one record per overflow of a PEBS counter, holding the registers of the
 * instruction whose event overflowed it, at the PEBS index, in the 64-bit
 * and the 32-bit layout; the counter reloaded from the counter-reset
 * field; the PMI when the index reaches the threshold; nothing written
 * past the absolute maximum and every lost record counted; MY_THR and
 * OTH_THR relative to the LP that wrote PEBS_ENABLE; no record for other
 * counters, other LPs or events that cannot drive PEBS.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "pmu/model/p4_model.h"
#include "pmu/p4_alloc.h"
#include "pmu/p4_apply.h"
#include "pmu/p4_pebs.h"

#define MEM_BASE	0x100000u
#define MEM_SIZE	0x8000u
#define DS_AREA(lp)	(MEM_BASE + 0x100u * (lp))
#define BUF(lp)		(MEM_BASE + 0x1000u + 0x2000u * (lp))

static uint8_t memory[MEM_SIZE];
static unsigned pmis[2];

static int mem_access(void *ctx, uint64_t addr, void *buf, unsigned len, bool write)
{
	(void)ctx;
	if (addr < MEM_BASE || addr + len > MEM_BASE + MEM_SIZE)
		return -1;
	if (write)
		memcpy(memory + (addr - MEM_BASE), buf, len);
	else
		memcpy(buf, memory + (addr - MEM_BASE), len);
	return 0;
}

static void count_pmi(struct p4_model *m, unsigned lp, void *ctx)
{
	(void)m;
	(void)ctx;
	pmis[lp]++;
}

static unsigned faults[2];
static uint64_t fault_addr;

static void count_fault(struct p4_model *m, unsigned lp, uint64_t addr, void *ctx)
{
	(void)m;
	(void)ctx;
	faults[lp]++;
	fault_addr = addr;
}

/*
 * ds32: a Northwood (0F_02, no DTES64) outside IA-32e mode, the one case
 * of the 32-bit layout; else a Prescott 0F_04 (DTES64: 64-bit layout).
 */
static void model_new(struct p4_model *m, bool ds32)
{
	struct p4_model_config cfg = {
		.sig = { 0x0f, ds32 ? 2 : 4, ds32 ? 9 : 1 }, .ht = true, .raise_pmi = count_pmi,
		.mem = mem_access, .legacy_mode = ds32, .machine_fault = count_fault,
	};

	memset(memory, 0, sizeof(memory));
	pmis[0] = pmis[1] = 0;
	faults[0] = faults[1] = 0;
	fault_addr = 0;
	assert_int_equal(p4_model_init(m, &cfg), 0);
}

/* LP lp's DS area: `records` record slots, threshold `below` short of them. */
static struct p4_ds_pebs ds_setup(struct p4_model *m, unsigned lp, enum p4_ds_form form,
				  unsigned records, unsigned below, uint64_t period)
{
	const struct p4_ds_layout *l = &p4_ds_layouts[form];
	struct p4_ds_pebs p;
	const char *why;

	assert_int_equal(p4_ds_plan(form, BUF(lp), (uint64_t)records * l->record_size +
				    l->max_slack, below, 0 - period, &p, &why), 0);
	p4_ds_put_pebs(form, memory + (DS_AREA(lp) - MEM_BASE), &p);
	assert_int_equal(p4_model_set_bus_lp(m, lp), 0);
	assert_int_equal(msr_bus_write(&m->bus, MSR_IA32_DS_AREA, DS_AREA(lp)), 0);
	return p;
}

/* Plan spec as a PEBS request for LP lp and apply it from LP writer. */
static struct p4_plan program(struct p4_model *m, const char *spec, unsigned lp, unsigned writer,
			      bool pebs)
{
	struct p4_caps caps = m->caps;
	struct p4_alloc_ctx ctx = { &caps, true, P4_SPLIT_GLOBAL };
	struct p4_request r = { 0 };
	struct p4_spec_error serr;
	struct p4_alloc_error err;
	struct p4_apply_result res;
	struct p4_plan plan;

	assert_int_equal(p4_spec_parse(spec, NULL, &r.spec, &serr), 0);
	r.lp = lp ? P4_LP1 : P4_LP0;
	r.role = pebs ? P4_ROLE_PEBS : P4_ROLE_COUNT;
	if (p4_alloc_plan(&ctx, &r, 1, &plan, &err))
		fail_msg("%s", err.msg);
	plan.writer_lp = (uint8_t)writer;
	plan.ds_area_set = true;
	assert_int_equal(p4_model_set_bus_lp(m, writer), 0);
	p4_apply(&m->bus, &plan, &res);
	assert_int_equal(res.faults + res.mismatches, 0);
	assert_false(res.pebs_refused);
	return plan;
}

/* n events of front_end_event NBOGUS on LP lp, instruction i at IP 0x400000 + 0x10 * i. */
static void retire(struct p4_model *m, unsigned lp, unsigned first, unsigned n)
{
	for (unsigned i = first; i < first + n; i++) {
		struct p4_pebs_record r = { { 0 } };

		r.reg[P4_PEBS_FLAGS] = 0x202;
		r.reg[P4_PEBS_IP] = 0x400000 + 0x10 * i;
		r.reg[P4_PEBS_AX] = i;
		r.reg[P4_PEBS_R15] = UINT64_C(0xf15f15f15) + i;
		assert_int_equal(p4_model_set_pebs_regs(m, lp, &r), 0);
		assert_int_equal(p4_model_event(m, lp, 0, P4_EV_FRONT_END_EVENT,
						P4_EVMASK(P4_FRONT_END_EVENT_NBOGUS), 1), 0);
	}
}

static struct p4_ds_pebs ds_now(unsigned lp, enum p4_ds_form form)
{
	struct p4_ds_pebs p;

	p4_ds_get_pebs(form, memory + (DS_AREA(lp) - MEM_BASE), &p);
	return p;
}

static void record_at(unsigned lp, enum p4_ds_form form, unsigned k, struct p4_pebs_record *r)
{
	p4_pebs_record_decode(form, memory + (BUF(lp) - MEM_BASE) +
			      k * p4_ds_layouts[form].record_size, r);
}

/* Period 3, 10 slots, threshold 2 short: 8th record raises the PMI. */
static void records_hold_the_overflowing_instruction(void **state)
{
	static struct p4_model m;
	struct p4_pebs_record r;
	struct p4_ds_pebs p;

	model_new(&m, false);
	ds_setup(&m, 0, P4_DS_64, 10, 2, 3);
	program(&m, "front_end_event:nbogus:period=3", 0, 0, true);
	retire(&m, 0, 0, 21);			/* events 3, 6, ... 21: 7 records */
	p = ds_now(0, P4_DS_64);
	assert_int_equal(p4_ds_written(P4_DS_64, &p), 7);
	assert_int_equal(m.pebs_records[0], 7);
	for (unsigned k = 0; k < 7; k++) {
		record_at(0, P4_DS_64, k, &r);
		/* the 3rd, 6th, ... event: instruction 2, 5, 8, ... */
		assert_true(r.reg[P4_PEBS_IP] == 0x400000 + 0x10 * (3 * k + 2));
		assert_true(r.reg[P4_PEBS_AX] == 3 * k + 2);
		assert_true(r.reg[P4_PEBS_FLAGS] == 0x202);
		assert_true(r.reg[P4_PEBS_R15] == UINT64_C(0xf15f15f15) + 3 * k + 2);
	}
	/* no OVF_PMI on the PEBS counter: no PMI yet (threshold at record 8) */
	assert_int_equal(pmis[0], 0);
	retire(&m, 0, 21, 3);			/* 8th record: index reaches the threshold */
	assert_int_equal(pmis[0], 1);
	assert_int_equal(m.pebs_pmis[0], 1);
	assert_int_equal(pmis[1], 0);
	/* the counter was reloaded from the reset field: -3 after each record */
	assert_true(m.counter[P4_IQ_COUNTER4] == ((UINT64_C(0) - 3) & P4_COUNTER_MASK));
	retire(&m, 0, 24, 6);			/* records 9, 10: the buffer is full */
	assert_int_equal(pmis[0], 1);		/* the threshold is crossed once */
	retire(&m, 0, 30, 3 * 5);		/* 5 more overflows: lost, counted */
	assert_int_equal(m.pebs_records[0], 10);
	assert_int_equal(m.pebs_lost[0], 5);
	p = ds_now(0, P4_DS_64);
	assert_true(p.index == p.max);		/* never past the maximum */
	for (unsigned i = 0; i < 144; i++)	/* nothing after the last slot */
		assert_int_equal(memory[BUF(0) - MEM_BASE + 10 * 144 + i], 0);
}

/* A drained buffer (index back at the base) fills again and interrupts again. */
static void drain_rearms(void **state)
{
	static struct p4_model m;
	struct p4_ds_pebs p;

	model_new(&m, false);
	p = ds_setup(&m, 0, P4_DS_64, 4, 1, 2);
	program(&m, "replay_event:nbogus:period=2", 0, 0, true);
	for (unsigned i = 0; i < 6; i++)
		assert_int_equal(p4_model_event(&m, 0, 0, P4_EV_REPLAY_EVENT, 1, 1), 0);
	assert_int_equal(pmis[0], 1);		/* 3rd record reached the threshold */
	p4_ds_put(P4_DS_64, memory + (DS_AREA(0) - MEM_BASE), P4_DS_PEBS_INDEX, p.base);
	for (unsigned i = 0; i < 6; i++)
		assert_int_equal(p4_model_event(&m, 0, 0, P4_EV_REPLAY_EVENT, 1, 1), 0);
	assert_int_equal(pmis[0], 2);
	assert_int_equal(m.pebs_records[0], 6);
	assert_int_equal(m.pebs_lost[0], 0);
}

/* With a PMI skid the threshold PMI comes one record late (p4_model_pebs.c), never losing one. */
static void threshold_pmi_one_record_late_with_skid(void **state)
{
	static struct p4_model m;

	model_new(&m, false);
	assert_int_equal(p4_model_set_skid(&m, 8), 0);
	ds_setup(&m, 0, P4_DS_64, 10, 2, 3);
	program(&m, "front_end_event:nbogus:period=3", 0, 0, true);
	retire(&m, 0, 0, 24);			/* 8 records: the threshold reached */
	assert_int_equal(pmis[0], 0);
	retire(&m, 0, 24, 3);			/* the 9th: now */
	assert_int_equal(pmis[0], 1);
	retire(&m, 0, 27, 3);			/* the 10th fills the buffer: nothing lost yet */
	assert_int_equal(pmis[0], 1);
	assert_int_equal(m.pebs_records[0], 10);
	assert_int_equal(m.pebs_lost[0], 0);
}

/* PMU reference 5.2, 32-bit form: 40-byte records, EIP at 04H. */
static void thirty_two_bit_records(void **state)
{
	static struct p4_model m;
	struct p4_pebs_record r;
	struct p4_ds_pebs p;

	model_new(&m, true);
	ds_setup(&m, 0, P4_DS_32, 5, 1, 4);
	program(&m, "front_end_event:nbogus:period=4", 0, 0, true);
	retire(&m, 0, 0, 8);
	p = ds_now(0, P4_DS_32);
	assert_true(p.index == BUF(0) + 2 * 40);
	record_at(0, P4_DS_32, 1, &r);
	assert_true(r.reg[P4_PEBS_IP] == 0x400000 + 0x10 * 7);
	assert_int_equal(memory[BUF(0) - MEM_BASE + 40 + 4], 0x70);
	assert_true(r.reg[P4_PEBS_R15] == 0);	/* not in the 32-bit record */
}

/*
 * SDM 18.16.3: MY_THR / OTH_THR name the writer's LP and the other one.
 * LP1's PEBS on counter 17, written once from LP1 (MY_THR) and once from
 * LP0 (OTH_THR): records for LP1's events only, into LP1's DS area.
 */
static void my_thr_and_oth_thr(void **state)
{
	static struct p4_model m;
	uint64_t v;

	for (unsigned writer = 0; writer < 2; writer++) {
		model_new(&m, false);
		ds_setup(&m, 0, P4_DS_64, 8, 1, 2);
		ds_setup(&m, 1, P4_DS_64, 8, 1, 2);
		program(&m, "front_end_event:nbogus:period=2", 1, writer, true);
		assert_int_equal(m.pebs_lps, 2);
		assert_int_equal(p4_model_set_bus_lp(&m, writer), 0);
		assert_int_equal(msr_bus_read(&m.bus, MSR_PEBS_ENABLE, &v), 0);
		assert_true(v == (PEBS_ENABLE_UOP_TAG |
				  (writer == 1 ? PEBS_ENABLE_MY_THR : PEBS_ENABLE_OTH_THR)));
		assert_int_equal(p4_model_set_bus_lp(&m, writer ^ 1), 0);
		assert_int_equal(msr_bus_read(&m.bus, MSR_PEBS_ENABLE, &v), 0);
		assert_true(v == (PEBS_ENABLE_UOP_TAG |
				  (writer == 1 ? PEBS_ENABLE_OTH_THR : PEBS_ENABLE_MY_THR)));
		retire(&m, 0, 0, 10);		/* LP0's events: not counted by 17's T1 ESCR */
		retire(&m, 1, 0, 10);
		assert_int_equal(m.pebs_records[0], 0);
		assert_int_equal(m.pebs_records[1], 5);
		assert_int_equal(p4_ds_written(P4_DS_64, &(struct p4_ds_pebs){
			.base = BUF(1), .index = ds_now(1, P4_DS_64).index }), 5);
	}
	/* Bits written from LP1 as MY_THR arm LP1 only; LP0's PEBS stays off. */
	model_new(&m, false);
	assert_int_equal(p4_model_set_bus_lp(&m, 1), 0);
	assert_int_equal(msr_bus_write(&m.bus, MSR_PEBS_ENABLE, PEBS_ENABLE_MY_THR), 0);
	assert_int_equal(m.pebs_lps, 2);
}

/*
 * Not PEBS: the same counter with PEBS_ENABLE cleared, or LP1's events on
 * an LP0 PEBS counter counting both LPs - ordinary overflows, OVF set.
 */
static void ordinary_overflows_stay_ordinary(void **state)
{
	static struct p4_model m;

	model_new(&m, false);
	ds_setup(&m, 0, P4_DS_64, 8, 1, 2);
	program(&m, "front_end_event:nbogus:period=2", 0, 0, true);
	assert_int_equal(msr_bus_write(&m.bus, MSR_PEBS_ENABLE, 0), 0);
	retire(&m, 0, 0, 2);
	assert_int_equal(m.pebs_records[0], 0);
	assert_true(m.cccr[P4_IQ_COUNTER4] & CCCR_OVF);
	assert_int_equal(m.overflows[P4_IQ_COUNTER4], 1);
	/* PEBS unavailable (IA32_MISC_ENABLE[12]): the model never writes records */
	{
		struct p4_model_config cfg = m.cfg;

		cfg.pebs_unavailable = true;
		assert_int_equal(p4_model_init(&m, &cfg), 0);
		ds_setup(&m, 0, P4_DS_64, 8, 1, 2);
		program(&m, "front_end_event:nbogus:period=2", 0, 0, true);
		retire(&m, 0, 0, 4);
		assert_int_equal(m.pebs_records[0], 0);
		assert_int_equal(m.overflows[P4_IQ_COUNTER4], 1);	/* then it wraps on */
		assert_true(m.cccr[P4_IQ_COUNTER4] & CCCR_OVF);
	}
	/* A DS area the memory does not hold: counted, nothing written */
	model_new(&m, false);
	assert_int_equal(msr_bus_write(&m.bus, MSR_IA32_DS_AREA, 0x10), 0);
	program(&m, "front_end_event:nbogus:period=2", 0, 0, true);
	retire(&m, 0, 0, 4);
	assert_int_equal(m.pebs_faults, 1);	/* reloaded from 0: no reset value */
	assert_int_equal(m.pebs_records[0], 0);
	assert_int_equal(faults[0], 1);		/* a machine fault, reported */
	assert_true(fault_addr == 0x10);
}

/*
 * PMU reference 5.1: the layout follows DTES64 and IA-32e mode, not the
 * width of the code. A Prescott (DTES64) in 32-bit protected mode writes
 * 144-byte records through the 64-bit area; a Northwood outside IA-32e
 * the 32-bit one; any part in IA-32e mode the 64-bit one.
 */
static void layout_follows_dtes64(void **state)
{
	static struct p4_model m;
	struct p4_model_config cfg;

	model_new(&m, false);
	cfg = m.cfg;
	cfg.legacy_mode = true;			/* 0F_04 in the 32-bit kernel */
	assert_int_equal(p4_model_init(&m, &cfg), 0);
	assert_int_equal(p4_model_ds_form(&m), P4_DS_64);
	ds_setup(&m, 0, P4_DS_64, 4, 1, 2);
	program(&m, "front_end_event:nbogus:period=2", 0, 0, true);
	retire(&m, 0, 0, 4);
	assert_true(ds_now(0, P4_DS_64).index == BUF(0) + 2 * 144);
	model_new(&m, true);
	assert_int_equal(p4_model_ds_form(&m), P4_DS_32);
	cfg = m.cfg;
	cfg.legacy_mode = false;		/* 0F_02 has no IA-32e; the rule still holds */
	assert_int_equal(p4_model_init(&m, &cfg), 0);
	assert_int_equal(p4_model_ds_form(&m), P4_DS_64);
}

/*
 * A PEBS counter whose CCCR has OVF_PMI: every overflow sets OVF and
 * interrupts (perfmon2 on real P4s: "a spurious interrupt for every
 * counter overflow"), besides writing its record.
 */
static void ovf_pmi_on_a_pebs_counter_interrupts_each_time(void **state)
{
	static struct p4_model m;
	uint64_t cccr;

	model_new(&m, false);
	ds_setup(&m, 0, P4_DS_64, 10, 2, 3);
	program(&m, "front_end_event:nbogus:period=3", 0, 0, true);
	assert_int_equal(msr_bus_read(&m.bus, p4_counters[P4_IQ_COUNTER4].cccr_msr, &cccr), 0);
	assert_int_equal(cccr & (CCCR_OVF_PMI_T0 | CCCR_OVF_PMI_T1), 0);	/* none planned */
	assert_int_equal(msr_bus_write(&m.bus, p4_counters[P4_IQ_COUNTER4].cccr_msr,
				       cccr | CCCR_OVF_PMI_T0), 0);
	retire(&m, 0, 0, 3 * 4 + 1);		/* 4 records, then the count after the 4th */
	assert_int_equal(m.pebs_records[0], 4);
	assert_int_equal(pmis[0], 4);
	assert_true(m.cccr[P4_IQ_COUNTER4] & CCCR_OVF);
	assert_int_equal(m.overflows[P4_IQ_COUNTER4], 4);
}

/*
 * Front-end tagging (PMU reference 5.6): uop_type TAGLOADS tags load µops and
 * front_end_event NBOGUS counts them at retirement. A loop whose every
 * third instruction loads (i % 3 == 1) and every fifth stores: with
 * TAGLOADS only, PEBS records land on loads alone, every 2nd load.
 */
static void tagged_loads_only(void **state)
{
	static struct p4_model m;
	struct p4_caps caps;
	struct p4_alloc_ctx ctx = { &caps, true, P4_SPLIT_GLOBAL };
	struct p4_request r[2];
	struct p4_spec_error serr;
	struct p4_alloc_error err;
	struct p4_apply_result res;
	struct p4_plan plan;
	struct p4_pebs_record rec;
	unsigned loads = 0;

	memset(r, 0, sizeof(r));
	model_new(&m, false);
	caps = m.caps;
	ds_setup(&m, 0, P4_DS_64, 32, 1, 2);
	assert_int_equal(p4_spec_parse("uop_type:tagloads", NULL, &r[0].spec, &serr), 0);
	assert_int_equal(p4_spec_parse("front_end_event:nbogus:period=2", NULL, &r[1].spec,
				       &serr), 0);
	r[1].role = P4_ROLE_PEBS;
	if (p4_alloc_plan(&ctx, r, 2, &plan, &err))
		fail_msg("%s", err.msg);
	plan.ds_area_set = true;
	assert_int_equal(p4_model_set_bus_lp(&m, 0), 0);
	p4_apply(&m.bus, &plan, &res);
	assert_false(res.pebs_refused);
	for (unsigned i = 0; i < 30; i++) {
		struct p4_pebs_record regs = { { 0 } };
		unsigned ld = i % 3 == 1, st = i % 5 == 0;

		regs.reg[P4_PEBS_IP] = 0x500000 + i;
		p4_model_set_pebs_regs(&m, 0, &regs);
		assert_int_equal(p4_model_retire_mem(&m, 0, 3, ld, st), (int)ld);	/* loads only */
		loads += ld;
	}
	assert_int_equal(loads, 10);
	assert_int_equal(m.pebs_records[0], loads / 2);
	for (unsigned k = 0; k < loads / 2; k++) {
		record_at(0, P4_DS_64, k, &rec);
		/* the (2k+2)th load: instruction 3 * (2k + 1) + 1 */
		assert_true(rec.reg[P4_PEBS_IP] == 0x500000 + 3 * (2 * k + 1) + 1);
	}
	/* Without an ESCR tagging them, no load counts. */
	model_new(&m, false);
	assert_int_equal(p4_model_retire_mem(&m, 0, 0, 5, 5), 0);
	assert_int_equal(m.overflows[P4_IQ_COUNTER4], 0);
	assert_int_equal(p4_model_retire_mem(&m, 2, 0, 1, 0), -1);
}

/* A fresh model (0F_04) with the counting requests specs[0..n) planned and applied from LP0. */
static struct p4_plan plan_specs(struct p4_model *m, const char *const *specs, unsigned n)
{
	struct p4_caps caps;
	struct p4_alloc_ctx ctx = { &caps, true, P4_SPLIT_GLOBAL };
	struct p4_request r[P4_MAX_REQUESTS];
	struct p4_spec_error serr;
	struct p4_alloc_error err;
	struct p4_apply_result res;
	struct p4_plan plan;

	memset(r, 0, sizeof(r));
	model_new(m, false);
	caps = m->caps;
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(p4_spec_parse(specs[i], NULL, &r[i].spec, &serr), 0);
	if (p4_alloc_plan(&ctx, r, n, &plan, &err))
		fail_msg("%s", err.msg);
	p4_apply(&m->bus, &plan, &res);
	assert_int_equal(res.faults + res.mismatches, 0);
	return plan;
}

/* Counter value of a plan's slot k (read over the bus, as the kernel would). */
static uint64_t slot_count(struct p4_model *m, const struct p4_plan *plan, unsigned k)
{
	uint64_t v = 0;

	assert_int_equal(msr_bus_read(&m->bus, MSR_P4_COUNTER_BASE + plan->slot[k].counter, &v), 0);
	return (v - plan->slot[k].preset) & P4_COUNTER_MASK;
}

/*
 * A step's batch (p4_model_apply): the PMU model decides the tagging. With
 * uop_type TAGLOADS, an instruction that loads retires as instr_retired
 * NBOGUSTAG, one that does not as NBOGUSNTAG; the batch says neither, only
 * its loads and stores (instr_retired with mask 0). The increments count
 * as fed one by one, and a limit splits them: the rest follows on the
 * next call, nothing counted twice or lost.
 */
static void step_batch_tags_and_splits(void **state)
{
	static struct p4_model m;
	static const char *const spec[3] = { "uop_type:tagloads", "instr_retired:nbogustag",
					     "branch_retired:mmtp" };
	struct p4_plan plan = plan_specs(&m, spec, 3);
	struct p4_step_batch b;
	struct p4_pebs_record regs = { { 0 } };

	(void)state;
	for (unsigned i = 0; i < 30; i++) {
		memset(&b, 0, sizeof(b));
		b.lp = 0;
		b.cpl = 3;
		b.parts = P4_STEP_TAG;
		b.regs = &regs;
		b.loads = i % 3 == 1;
		b.stores = i % 5 == 0;
		b.exec = P4_NEVENT;
		b.inc[b.n++] = (struct p4_event_inc){ .ev = P4_EV_INSTR_RETIRED, .mask = 0, .n = 1 };
		if (i % 2)
			b.inc[b.n++] = (struct p4_event_inc){ .ev = P4_EV_BRANCH_RETIRED,
							      .mask = P4_EVMASK(P4_BRANCH_RETIRED_MMTP),
							      .n = 1 };
		assert_int_equal(p4_model_apply(&m, &b, UINT64_MAX), b.n);
		assert_int_equal(b.done, b.n);
		assert_int_equal(b.tagged, i % 3 == 1);
		assert_int_equal(b.parts, 0);
	}
	assert_int_equal(slot_count(&m, &plan, 1), 10);		/* the loading tenth */
	assert_int_equal(slot_count(&m, &plan, 2), 15);
	/* a limit of 4 over 5 + 3: the branch split 4 | 1, then 1 + 3 */
	memset(&b, 0, sizeof(b));
	b.cpl = 3;
	b.exec = P4_NEVENT;
	b.inc[0] = (struct p4_event_inc){ .ev = P4_EV_BRANCH_RETIRED,
					  .mask = P4_EVMASK(P4_BRANCH_RETIRED_MMTP), .n = 5 };
	b.inc[1] = (struct p4_event_inc){ .ev = P4_EV_INSTR_RETIRED,
					  .mask = P4_EVMASK(P4_INSTR_RETIRED_NBOGUSTAG), .n = 3 };
	b.n = 2;
	assert_int_equal(p4_model_apply(&m, &b, 4), 4);
	assert_int_equal(b.done, 0);
	assert_int_equal(slot_count(&m, &plan, 2), 19);
	assert_int_equal(slot_count(&m, &plan, 1), 10);
	assert_int_equal(p4_model_apply(&m, &b, 0), 0);	/* nothing when nothing may */
	assert_int_equal(p4_model_apply(&m, &b, 100), 4);
	assert_int_equal(b.done, 2);
	assert_int_equal(slot_count(&m, &plan, 2), 20);
	assert_int_equal(slot_count(&m, &plan, 1), 13);
	assert_int_equal(p4_model_apply(&m, &b, 100), 0);	/* all applied: nothing again */
	assert_int_equal(slot_count(&m, &plan, 2), 20);
}

/*
 * Execution tagging (PMU reference 5.7): packed_SP_uop with tag value 1 and
 * x87_FP_uop with tag value 2 on the FIRM ESCRs; execution_event NBOGUS0
 * counts the µops tagged with bit 0, NBOGUS1 those with bit 1; untagged
 * classes (scalar_DP_uop here) reach neither.
 */
static void execution_tagging(void **state)
{
	static const char *const specs[] = { "packed_SP_uop:ALL:TAG0", "x87_FP_uop:ALL:TAG1",
					     "execution_event:NBOGUS0", "execution_event:NBOGUS1" };
	static struct p4_model m;
	struct p4_plan plan = plan_specs(&m, specs, 4);
	uint64_t want[4] = { 5, 3, 5, 3 };

	assert_int_equal(p4_model_retire_exec(&m, 0, 3, P4_EV_PACKED_SP_UOP, 5), 0);
	assert_int_equal(p4_model_retire_exec(&m, 0, 3, P4_EV_X87_FP_UOP, 3), 0);
	assert_int_equal(p4_model_retire_exec(&m, 0, 3, P4_EV_SCALAR_DP_UOP, 4), 0);
	for (unsigned i = 0; i < 4; i++) {
		uint64_t got = (m.counter[plan.slot[i].counter] - plan.slot[i].preset) &
			       P4_COUNTER_MASK;

		if (got != want[i])
			fail_msg("%s: %llu, want %llu (counter %u, ESCR %s = %llx)", specs[i],
				 (unsigned long long)got, (unsigned long long)want[i],
				 plan.slot[i].counter, p4_escrs[plan.slot[i].escr].name,
				 (unsigned long long)m.escr[plan.slot[i].escr]);
	}
	/* Only the FIRM events can tag. */
	assert_int_equal(p4_model_retire_exec(&m, 0, 0, P4_EV_INSTR_RETIRED, 1), -1);
}

/*
 * x87_SIMD_moves_uop (PMU reference 4.2): ALLP2 counts load µops, ALLP0 store
 * and move µops, each only on an ESCR holding its bit; with Tag enable an
 * ESCR tags only the µops of the bits it holds (execution_event NBOGUS2).
 * The event is TI (SDM Table 19-34): with T0_OS and T0_USR set it counts
 * LP1's µops too ("irrespective of CPL, T0, T1", Table 18-67), while the
 * tagging follows the tagging LP's own T-bit.
 */
static void simd_moves_by_mask_bit(void **state)
{
	static const char *const specs[] = { "x87_SIMD_moves_uop:ALLP2:TAG2",
					     "execution_event:NBOGUS2", "x87_SIMD_moves_uop:ALLP0" };
	static struct p4_model m;
	struct p4_plan plan = plan_specs(&m, specs, 3);
	uint64_t want[3] = { 4, 4, 5 + 7 };
	const uint16_t allp0 = P4_EVMASK(P4_X87_SIMD_MOVES_UOP_ALLP0);
	const uint16_t allp2 = P4_EVMASK(P4_X87_SIMD_MOVES_UOP_ALLP2);

	(void)state;
	assert_int_equal(p4_model_retire_exec_mask(&m, 0, 3, P4_EV_X87_SIMD_MOVES_UOP, allp2, 4), 0);
	assert_int_equal(p4_model_retire_exec_mask(&m, 1, 3, P4_EV_X87_SIMD_MOVES_UOP, allp0, 7), 0);
	assert_int_equal(p4_model_retire_exec_mask(&m, 0, 3, P4_EV_X87_SIMD_MOVES_UOP, allp0, 5), 0);
	for (unsigned i = 0; i < 3; i++) {
		uint64_t got = (m.counter[plan.slot[i].counter] - plan.slot[i].preset) &
			       P4_COUNTER_MASK;

		if (got != want[i])
			fail_msg("%s: %llu, want %llu", specs[i], (unsigned long long)got,
				 (unsigned long long)want[i]);
	}
	assert_int_equal(p4_model_retire_exec_mask(&m, 0, 3, P4_EV_X87_SIMD_MOVES_UOP, 0, 1), -1);
	assert_int_equal(p4_model_retire_exec_mask(&m, 0, 3, P4_EV_X87_SIMD_MOVES_UOP, 1, 1), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(records_hold_the_overflowing_instruction),
		cmocka_unit_test(drain_rearms),
		cmocka_unit_test(threshold_pmi_one_record_late_with_skid),
		cmocka_unit_test(thirty_two_bit_records),
		cmocka_unit_test(my_thr_and_oth_thr),
		cmocka_unit_test(ordinary_overflows_stay_ordinary),
		cmocka_unit_test(layout_follows_dtes64),
		cmocka_unit_test(ovf_pmi_on_a_pebs_counter_interrupts_each_time),
		cmocka_unit_test(tagged_loads_only),
		cmocka_unit_test(step_batch_tags_and_splits),
		cmocka_unit_test(execution_tagging),
		cmocka_unit_test(simd_moves_by_mask_bit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
