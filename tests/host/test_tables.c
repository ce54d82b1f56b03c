/*
 * test_tables.c - invariants of the NetBurst tables and spot checks against
 * the PMU reference (netburst-pmu.md sections 1, 3.1, 4, 7).
 *
 * Expected values are typed in here from the PMU reference, independently of
 * pmu/p4_tables.c and pmu/p4_events.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <cmocka.h>

#include "pmu/p4_caps.h"
#include "pmu/p4_events.h"
#include "pmu/p4_regs.h"
#include "pmu/p4_tables.h"

static enum p4_escr escr_named(const char *name)
{
	for (int e = 0; e < P4_NESCR; e++)
		if (strcmp(p4_escrs[e].name, name) == 0)
			return (enum p4_escr)e;
	fail_msg("no ESCR %s", name);
	return P4_ESCR_NONE;
}

static void counters_have_manual_addresses(void **state)
{
	static const enum p4_group groups[18] = {
		P4_GROUP_BPU, P4_GROUP_BPU, P4_GROUP_BPU, P4_GROUP_BPU,
		P4_GROUP_MS, P4_GROUP_MS, P4_GROUP_MS, P4_GROUP_MS,
		P4_GROUP_FLAME, P4_GROUP_FLAME, P4_GROUP_FLAME, P4_GROUP_FLAME,
		P4_GROUP_IQ, P4_GROUP_IQ, P4_GROUP_IQ, P4_GROUP_IQ, P4_GROUP_IQ, P4_GROUP_IQ,
	};

	for (int n = 0; n < P4_NCOUNTER; n++) {
		enum p4_counter c;

		assert_int_equal(p4_counters[n].msr, 0x300 + n);
		assert_int_equal(p4_counters[n].cccr_msr, 0x360 + n);
		assert_int_equal(p4_counters[n].group, groups[n]);
		assert_true(p4_counter_by_msr(0x300 + n, &c));
		assert_int_equal(c, n);
		assert_true(p4_cccr_by_msr(0x360 + n, &c));
		assert_int_equal(c, n);
	}
	assert_string_equal(p4_counters[16].cccr_name, "MSR_IQ_CCCR4");
}

static void escr_names_and_addresses_unique(void **state)
{
	int n = 0;

	for (int a = 0; a < P4_NESCR; a++) {
		n++;
		for (int b = a + 1; b < P4_NESCR; b++) {
			assert_true(strcmp(p4_escrs[a].name, p4_escrs[b].name) != 0);
			assert_true(p4_escrs[a].msr != p4_escrs[b].msr);
		}
		/* PMU reference 1.2 note 4: 3BFH, 3C6H, 3C7H, 3CEH-3DFH are not ESCRs. */
		assert_true(p4_escrs[a].msr >= 0x3a0 && p4_escrs[a].msr <= 0x3e1);
		assert_true(p4_escrs[a].msr != 0x3bf && p4_escrs[a].msr != 0x3c6 &&
			    p4_escrs[a].msr != 0x3c7);
		assert_false(p4_escrs[a].msr >= 0x3ce && p4_escrs[a].msr <= 0x3df);
	}
	assert_int_equal(n, 45);
}

static void escr_counters_within_one_group(void **state)
{
	for (int e = 0; e < P4_NESCR; e++) {
		assert_true(p4_escrs[e].counters != 0);
		for (int c = 0; c < P4_NCOUNTER; c++)
			if (p4_escrs[e].counters & P4_CTR(c))
				assert_int_equal(p4_counters[c].group, p4_escrs[e].group);
	}
}

/*
 * The even/odd rule: an ESCR at an even address drives the first counter
 * pair of its group (plus counter 16 in IQ) and has a partner at address+1
 * with the same select driving the second pair (plus 17); the exceptions
 * are the rows of p4_escr_exceptions[].
 */
static bool is_exception(enum p4_escr e)
{
	for (int i = 0; i < P4_NESCR_EXCEPTIONS; i++)
		if (p4_escr_exceptions[i].escr == e)
			return true;
	return false;
}

static void escr_even_odd_rule(void **state)
{
	static const uint32_t lo[P4_NGROUPS] = {
		[P4_GROUP_BPU] = 0x3, [P4_GROUP_MS] = 0x30, [P4_GROUP_FLAME] = 0x300,
		[P4_GROUP_IQ] = 0x13000,
	};
	static const uint32_t hi[P4_NGROUPS] = {
		[P4_GROUP_BPU] = 0xc, [P4_GROUP_MS] = 0xc0, [P4_GROUP_FLAME] = 0xc00,
		[P4_GROUP_IQ] = 0x2c000,
	};
	int exceptions = 0;

	for (int e = 0; e < P4_NESCR; e++) {
		const struct p4_escr_desc *d = &p4_escrs[e];
		enum p4_escr partner;

		if (d->msr & 1) {
			assert_int_equal(d->counters, hi[d->group]);
			continue;
		}
		assert_int_equal(d->counters, lo[d->group]);
		if (!p4_escr_by_msr(d->msr + 1, &partner)) {
			assert_true(is_exception((enum p4_escr)e));
			exceptions++;
			continue;
		}
		assert_int_equal(p4_escrs[partner].select, d->select);
		assert_int_equal(p4_escrs[partner].group, d->group);
	}
	assert_int_equal(exceptions, P4_NESCR_EXCEPTIONS);
	assert_int_equal(p4_escr_exceptions[0].escr, P4_SSU_ESCR0);
}

/* PMU reference 3.1, per-counter view. */
static void per_counter_select_map(void **state)
{
	static const char *const bpu[8] = { "BPU", "IS", "MOB", "ITLB", "PMH", "IX", "FSB", "BSU" };
	static const char *const ms[8] = { "MS", "TC", "TBPU" };
	static const char *const flame[8] = { "FLAME", "FIRM", "SAAT", "U2L", NULL, "DAC" };
	static const char *const iq_lo[8] = { "IQ_ESCR0", "ALF_ESCR0", "RAT_ESCR0", "SSU_ESCR0",
					      "CRU_ESCR0", "CRU_ESCR2", "CRU_ESCR4" };
	static const char *const iq_hi[8] = { "IQ_ESCR1", "ALF_ESCR1", "RAT_ESCR1", NULL,
					      "CRU_ESCR1", "CRU_ESCR3", "CRU_ESCR5" };

	for (int c = 0; c < P4_NCOUNTER; c++) {
		for (unsigned sel = 0; sel < 8; sel++) {
			enum p4_escr got = p4_escr_for_select((enum p4_counter)c, sel);
			char want[24] = "";
			const char *const *row;
			int side = (c % 4) >= 2;

			if (c < 4)
				row = bpu;
			else if (c < 8)
				row = ms;
			else if (c < 12)
				row = flame;
			else
				row = NULL;
			if (row && row[sel])
				snprintf(want, sizeof(want), "%s_ESCR%d", row[sel], side);
			if (c >= 12) {
				bool high = c == 14 || c == 15 || c == 17;
				const char *n = high ? iq_hi[sel] : iq_lo[sel];

				if (n)
					snprintf(want, sizeof(want), "%s", n);
			}
			if (want[0] == '\0') {
				assert_int_equal(got, P4_ESCR_NONE);
			} else {
				assert_int_not_equal(got, P4_ESCR_NONE);
				assert_string_equal(p4_escrs[got].name, want);
			}
		}
	}
}

static void every_escr_reachable(void **state)
{
	for (int e = 0; e < P4_NESCR; e++) {
		bool found = false;

		for (int c = 0; c < P4_NCOUNTER; c++)
			if (p4_escr_for_select((enum p4_counter)c, p4_escrs[e].select) == (enum p4_escr)e)
				found = true;
		assert_true(found);
	}
}

static void escr_models(void **state)
{
	assert_int_equal(p4_escrs[escr_named("IQ_ESCR0")].models, P4_MODELS_0_2);
	assert_int_equal(p4_escrs[escr_named("IQ_ESCR1")].models, P4_MODELS_0_2);
	assert_int_equal(p4_escrs[escr_named("CRU_ESCR4")].msr, 0x3e0);
	assert_int_equal(p4_escrs[escr_named("FSB_ESCR1")].msr, 0x3a3);
	assert_int_equal(p4_escrs[escr_named("ALF_ESCR1")].msr, 0x3cb);
	assert_true(p4_msr_is_pmu(0x3f1));
	assert_false(p4_msr_is_pmu(0x3bf));
	assert_false(p4_msr_is_pmu(0x1a0));
}

static void event_names_unique(void **state)
{
	for (int a = 0; a < P4_NEVENT; a++) {
		assert_non_null(p4_events[a].name);
		assert_non_null(p4_events[a].desc);
		for (int b = a + 1; b < P4_NEVENT; b++)
			assert_true(strcasecmp(p4_events[a].name, p4_events[b].name) != 0);
		for (int k = 0; k < P4_NMASK_BITS; k++)
			for (int j = k + 1; j < P4_NMASK_BITS; j++)
				if (p4_events[a].masks[k] && p4_events[a].masks[j])
					assert_true(strcasecmp(p4_events[a].masks[k],
							       p4_events[a].masks[j]) != 0);
	}
}

static void event_escrs_consistent(void **state)
{
	for (int i = 0; i < P4_NEVENT; i++) {
		const struct p4_event_desc *ev = &p4_events[i];
		int n = 0;

		for (int side = 0; side < 2; side++) {
			enum p4_escr e = ev->escrs[side];

			if (e == P4_ESCR_NONE)
				continue;
			n++;
			assert_int_equal(p4_escrs[e].select, ev->escr_select);
			assert_int_equal(p4_escrs[e].msr & 1, side);
			if (ev->escrs[0] != P4_ESCR_NONE)
				assert_int_equal(p4_escrs[e].group, p4_escrs[ev->escrs[0]].group);
		}
		assert_true(n > 0);
		assert_true(ev->event_select <= 0x3f);
	}
}

static void event_masks_consistent(void **state)
{
	for (int i = 0; i < P4_NEVENT; i++) {
		const struct p4_event_desc *ev = &p4_events[i];
		uint16_t valid = p4_event_valid_mask((enum p4_event)i);

		assert_true(valid != 0);
		assert_int_equal(ev->default_mask & ~valid, 0);
		if (ev->flags & P4_EVF_NEEDS_MASK)
			assert_int_equal(ev->default_mask, 0);
		else
			assert_int_not_equal(ev->default_mask, 0);
		for (int g = 0; g < 2; g++) {
			assert_int_equal(ev->exclusive[g] & ~valid, 0);
			/* the default respects the exclusions */
			assert_true(__builtin_popcount(ev->exclusive[g] & ev->default_mask) <= 1);
		}
		if (ev->flags & P4_EVF_PEBS)
			assert_true(ev->flags & P4_EVF_AT_RETIREMENT);
		if (ev->flags & P4_EVF_AT_RETIREMENT) {
			assert_int_equal(p4_escrs[ev->escrs[0]].group, P4_GROUP_IQ);
			assert_false(ev->flags & P4_EVF_TI);	/* PMU reference 4.2: all TS */
		}
	}
}

/* No two events share an (ESCR, event select): explain can name the event. */
static void escr_and_select_identify_event(void **state)
{
	for (int a = 0; a < P4_NEVENT; a++) {
		for (int side = 0; side < 2; side++) {
			enum p4_escr e = p4_events[a].escrs[side];
			enum p4_event found;

			if (e == P4_ESCR_NONE)
				continue;
			assert_true(p4_event_by_escr(e, p4_events[a].event_select, &found));
			assert_int_equal(found, a);
		}
	}
}

static void check_event(const char *name, unsigned evsel, unsigned esel, const char *e0,
			const char *e1)
{
	enum p4_event ev;

	assert_true(p4_event_by_name(name, strlen(name), &ev));
	assert_int_equal(p4_events[ev].event_select, evsel);
	assert_int_equal(p4_events[ev].escr_select, esel);
	if (e0)
		assert_string_equal(p4_escrs[p4_events[ev].escrs[0]].name, e0);
	else
		assert_int_equal(p4_events[ev].escrs[0], P4_ESCR_NONE);
	if (e1)
		assert_string_equal(p4_escrs[p4_events[ev].escrs[1]].name, e1);
	else
		assert_int_equal(p4_events[ev].escrs[1], P4_ESCR_NONE);
}

static void check_mask(const char *event, const char *mask, unsigned bit)
{
	enum p4_event ev;
	unsigned k;

	assert_true(p4_event_by_name(event, strlen(event), &ev));
	assert_true(p4_event_mask_by_name(ev, mask, strlen(mask), &k));
	assert_int_equal(k, bit);
}

/* Values typed in from PMU reference 4.1-4.3. */
static void spot_checks_against_fact_sheet(void **state)
{
	check_event("TC_deliver_mode", 0x01, 1, "TC_ESCR0", "TC_ESCR1");
	check_mask("TC_deliver_mode", "IB", 7);
	check_event("ITLB_reference", 0x18, 3, "ITLB_ESCR0", "ITLB_ESCR1");
	check_mask("itlb_reference", "hit_uc", 2);
	check_event("memory_cancel", 0x02, 5, "DAC_ESCR0", "DAC_ESCR1");
	check_mask("memory_cancel", "64K_CONF", 3);
	check_event("BSQ_cache_reference", 0x0c, 7, "BSU_ESCR0", "BSU_ESCR1");
	check_mask("BSQ_cache_reference", "RD_2ndL_MISS", 8);
	check_mask("BSQ_cache_reference", "WR_2ndL_MISS", 10);
	check_event("IOQ_allocation", 0x03, 6, "FSB_ESCR0", "FSB_ESCR1");
	check_mask("IOQ_allocation", "PREFETCH", 15);
	check_event("IOQ_active_entries", 0x1a, 6, NULL, "FSB_ESCR1");
	check_event("FSB_data_activity", 0x17, 6, "FSB_ESCR0", "FSB_ESCR1");
	check_event("BSQ_allocation", 0x05, 7, "BSU_ESCR0", NULL);
	check_mask("BSQ_allocation", "MEM_TYPE2", 13);
	check_event("BSQ_active_entries", 0x06, 7, NULL, "BSU_ESCR1");
	check_event("SSE_input_assist", 0x34, 1, "FIRM_ESCR0", "FIRM_ESCR1");
	check_mask("x87_FP_uop", "ALL", 15);
	check_event("x87_SIMD_moves_uop", 0x2e, 1, "FIRM_ESCR0", "FIRM_ESCR1");
	check_mask("x87_SIMD_moves_uop", "ALLP2", 4);
	check_event("128bit_MMX_uop", 0x1a, 1, "FIRM_ESCR0", "FIRM_ESCR1");
	check_event("TC_misc", 0x06, 1, "TC_ESCR0", "TC_ESCR1");
	check_mask("TC_misc", "FLUSH", 4);
	check_event("global_power_events", 0x13, 6, "FSB_ESCR0", "FSB_ESCR1");
	check_mask("global_power_events", "RUNNING", 0);
	check_event("tc_ms_xfer", 0x05, 0, "MS_ESCR0", "MS_ESCR1");
	check_event("retired_mispred_branch_type", 0x05, 2, "TBPU_ESCR0", "TBPU_ESCR1");
	check_mask("retired_branch_type", "INDIRECT", 4);
	check_event("resource_stall", 0x01, 1, "ALF_ESCR0", "ALF_ESCR1");
	check_mask("resource_stall", "SBFULL", 5);
	check_event("WC_Buffer", 0x05, 5, "DAC_ESCR0", "DAC_ESCR1");
	check_event("front_end_event", 0x08, 5, "CRU_ESCR2", "CRU_ESCR3");
	check_event("execution_event", 0x0c, 5, "CRU_ESCR2", "CRU_ESCR3");
	check_mask("execution_event", "BOGUS3", 7);
	check_event("replay_event", 0x09, 5, "CRU_ESCR2", "CRU_ESCR3");
	check_event("instr_retired", 0x02, 4, "CRU_ESCR0", "CRU_ESCR1");
	check_mask("instr_retired", "NBOGUSNTAG", 0);
	check_mask("instr_retired", "BOGUSTAG", 3);
	check_event("uops_retired", 0x01, 4, "CRU_ESCR0", "CRU_ESCR1");
	check_event("uop_type", 0x02, 2, "RAT_ESCR0", "RAT_ESCR1");
	check_mask("uop_type", "TAGSTORES", 2);
	check_event("branch_retired", 0x06, 5, "CRU_ESCR2", "CRU_ESCR3");
	check_mask("branch_retired", "MMTM", 3);
	check_event("mispred_branch_retired", 0x03, 4, "CRU_ESCR0", "CRU_ESCR1");
	check_event("x87_assist", 0x03, 5, "CRU_ESCR2", "CRU_ESCR3");
	check_mask("x87_assist", "PREA", 4);
	check_event("machine_clear", 0x02, 5, "CRU_ESCR2", "CRU_ESCR3");
	check_mask("machine_clear", "CLEAR", 0);
	check_mask("machine_clear", "MOCLEAR", 2);	/* DISPUTED: libpfm's bits */
	check_mask("machine_clear", "SMCLEAR", 6);
	check_event("instr_completed", 0x07, 4, "CRU_ESCR0", "CRU_ESCR1");
	assert_int_equal(p4_events[P4_EV_INSTR_COMPLETED].need, P4_NEED_INSTR_COMPLETED);
	assert_int_equal(P4_NEVENT, 47);
}

static void flags_against_fact_sheet(void **state)
{
	assert_true(p4_events[P4_EV_TC_DELIVER_MODE].flags & P4_EVF_TI);
	assert_true(p4_events[P4_EV_FSB_DATA_ACTIVITY].flags & P4_EVF_TI);
	assert_false(p4_events[P4_EV_GLOBAL_POWER_EVENTS].flags & P4_EVF_TI);
	assert_true(p4_events[P4_EV_REPLAY_EVENT].flags & P4_EVF_PEBS);
	assert_true(p4_events[P4_EV_FRONT_END_EVENT].flags & P4_EVF_PEBS);
	assert_true(p4_events[P4_EV_EXECUTION_EVENT].flags & P4_EVF_PEBS);
	assert_false(p4_events[P4_EV_INSTR_RETIRED].flags & P4_EVF_PEBS);
	assert_true(p4_events[P4_EV_IOQ_ALLOCATION].flags & P4_EVF_WANTS_EDGE);
	assert_true(p4_events[P4_EV_UOP_TYPE].flags & P4_EVF_TAG_ONLY);
	for (int e = 0; e < P4_NEVENT; e++)
		if (e != P4_EV_INSTR_COMPLETED)
			assert_int_equal(p4_events[e].need, P4_NEED_NONE);
}

/*
 * SDM Vol. 3B Table 19-34 "Event Mask Qualification for Logical Processors"
 * (Table A-15 in the 2008 editions), typed in: TS or TI for every mask bit
 * of every event it lists. Every event it lists is wholly TS or wholly TI,
 * so one flag per event holds it. Not in the table: BSQ_active_entries
 * (TS here) and the libpfm4-only b2b_cycles, bnr, snoop, response (TI here,
 * FreeBSD pm_is_ti_event).
 */
static const char *const table_19_34_ti[] = {
	"SSE_input_assist", "64bit_MMX_uop", "packed_DP_uop", "packed_SP_uop",
	"scalar_DP_uop", "scalar_SP_uop", "128bit_MMX_uop", "x87_FP_uop",
	"x87_SIMD_moves_uop", "FSB_data_activity", "page_walk_type", "TC_deliver_mode",
	"WC_Buffer",
};
static const char *const table_19_34_ts[] = {
	"BPU_fetch_request", "BSQ_allocation", "BSQ_cache_reference", "memory_cancel",
	"IOQ_allocation", "IOQ_active_entries", "global_power_events", "ITLB_reference",
	"MOB_load_replay", "uop_type", "load_port_replay", "store_port_replay",
	"memory_complete", "retired_mispred_branch_type", "retired_branch_type", "tc_ms_xfer",
	"tc_misc", "uop_queue_writes", "resource_stall", "instr_retired", "machine_clear",
	"front_end_event", "replay_event", "execution_event", "x87_assist", "branch_retired",
	"mispred_branch_retired", "uops_retired", "instr_completed",
};

static void ts_ti_against_table_19_34(void **state)
{
	enum p4_event ev;
	unsigned listed = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(table_19_34_ti) / sizeof(table_19_34_ti[0]); i++, listed++) {
		assert_true(p4_event_by_name(table_19_34_ti[i], strlen(table_19_34_ti[i]), &ev));
		if (!(p4_events[ev].flags & P4_EVF_TI))
			fail_msg("%s is TI in Table 19-34", table_19_34_ti[i]);
	}
	for (size_t i = 0; i < sizeof(table_19_34_ts) / sizeof(table_19_34_ts[0]); i++, listed++) {
		assert_true(p4_event_by_name(table_19_34_ts[i], strlen(table_19_34_ts[i]), &ev));
		if (p4_events[ev].flags & P4_EVF_TI)
			fail_msg("%s is TS in Table 19-34", table_19_34_ts[i]);
	}
	/* The table lists all but the five events named above. */
	assert_int_equal(listed + 5, P4_NEVENT);
	assert_false(p4_events[P4_EV_BSQ_ACTIVE_ENTRIES].flags & P4_EVF_TI);
}

static void lookups_case_insensitive(void **state)
{
	enum p4_event ev;
	unsigned k;

	assert_true(p4_event_by_name("INSTR_RETIRED", 13, &ev));
	assert_int_equal(ev, P4_EV_INSTR_RETIRED);
	assert_true(p4_event_by_name("instr_retired:xyz", 13, &ev));
	assert_false(p4_event_by_name("instr_retire", 12, &ev));
	assert_false(p4_event_by_name("instr_retiredx", 14, &ev));
	assert_true(p4_event_mask_by_name(P4_EV_INSTR_RETIRED, "nbogustag", 9, &k));
	assert_int_equal(k, 1);
}

/* PMU reference 7, 1.2 note 2, 2.3. */
static void caps_by_signature(void **state)
{
	struct p4_caps c;
	char buf[8];

	assert_false(p4_caps_lookup(&(struct p4_sig){ 6, 15, 1 }, &c));

	assert_true(p4_caps_lookup(&(struct p4_sig){ 15, 1, 9 }, &c));
	assert_true(c.iq_escr01);
	assert_false(c.ext_cascade);
	assert_false(c.cascade_pmi_erratum);
	assert_false(c.fsb_escr1_ok);
	assert_int_equal(c.nescr, 45);
	assert_true(p4_caps_lookup(&(struct p4_sig){ 15, 0, 0x0a }, &c));
	assert_true(c.cascade_pmi_erratum);

	assert_true(p4_caps_lookup(&(struct p4_sig){ 15, 2, 6 }, &c));
	assert_true(c.ext_cascade && c.cascade_pmi_erratum && c.iq_escr01);
	assert_false(c.fsb_escr1_ok);
	assert_false(c.instr_completed);
	assert_true(p4_caps_lookup(&(struct p4_sig){ 15, 2, 7 }, &c));	/* F27H */
	assert_true(c.fsb_escr1_ok);

	assert_true(p4_caps_lookup(&(struct p4_sig){ 15, 3, 4 }, &c));
	assert_false(c.iq_escr01);
	assert_true(c.ext_cascade && c.instr_completed && c.fsb_escr1_ok);
	assert_false(c.cascade_pmi_erratum);
	assert_int_equal(c.nescr, 43);
	assert_int_equal(c.uncore, P4_UNCORE_IFSB_EFSB);

	assert_true(p4_caps_lookup(&(struct p4_sig){ 15, 4, 1 }, &c));
	assert_int_equal(c.uncore, P4_UNCORE_IFSB_EFSB);
	assert_true(c.instr_completed);
	assert_true(p4_caps_lookup(&(struct p4_sig){ 15, 6, 5 }, &c));
	assert_int_equal(c.uncore, P4_UNCORE_EMON_L3);
	assert_string_equal(c.uncore_name, "EMON_L3");
	assert_true(c.ext_cascade && c.instr_completed);
	assert_true(p4_caps_lookup(&(struct p4_sig){ 15, 2, 9 }, &c));
	assert_int_equal(c.uncore, P4_UNCORE_NONE);

	assert_true(p4_caps_lookup(&(struct p4_sig){ 15, 5, 0 }, &c));
	assert_false(c.known_model);
	assert_false(c.ext_cascade || c.instr_completed || c.iq_escr01);

	p4_sig_format(&(struct p4_sig){ 15, 2, 0 }, buf, sizeof(buf));
	assert_string_equal(buf, "0F_02H");
}

/* The ESCR set the caps select matches the table's model masks. */
static void caps_escr_count_matches_table(void **state)
{
	for (uint8_t m = 0; m <= 6; m++) {
		struct p4_caps c;
		int n = 0;

		assert_true(p4_caps_lookup(&(struct p4_sig){ 15, m, 1 }, &c));
		for (int e = 0; e < P4_NESCR; e++)
			if (p4_escrs[e].models & c.escr_models)
				n++;
		assert_int_equal(n, c.nescr);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(counters_have_manual_addresses),
		cmocka_unit_test(escr_names_and_addresses_unique),
		cmocka_unit_test(escr_counters_within_one_group),
		cmocka_unit_test(escr_even_odd_rule),
		cmocka_unit_test(per_counter_select_map),
		cmocka_unit_test(every_escr_reachable),
		cmocka_unit_test(escr_models),
		cmocka_unit_test(event_names_unique),
		cmocka_unit_test(event_escrs_consistent),
		cmocka_unit_test(event_masks_consistent),
		cmocka_unit_test(escr_and_select_identify_event),
		cmocka_unit_test(spot_checks_against_fact_sheet),
		cmocka_unit_test(flags_against_fact_sheet),
		cmocka_unit_test(ts_ti_against_table_19_34),
		cmocka_unit_test(lookups_case_insensitive),
		cmocka_unit_test(caps_by_signature),
		cmocka_unit_test(caps_escr_count_matches_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
