/*
 * test_model_pmi.c - prof/backend/model_pmi.c, how the model backend turns the
 * model's PMI requests into interrupts, on the host: the real model raising
 * its requests, two simulated logical processors (T0, T1) with a local APIC
 * each, and a record of the NMIs and fixed IPIs sent.
 *
 * What the file promises: a request is sent by the LP whose model call
 * raised it, after that call, once; to the LP that OVF_PMI_T0/T1 names, at
 * its APIC ID; as its LVT PC entry says (NMI, or a fixed IPI with the
 * entry's vector); the entry's mask bit is set on delivery (PMU reference 6)
 * unless a fault injection says the part does not; a request while the
 * entry is masked waits (counted as deferred); a request for an LP that
 * does not run is dropped and counted.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "arch/x86/lapic.h"
#include "arch/x86/percpu.h"
#include "arch/x86/step.h"
#include "arch/x86/user.h"
#include "pmu/p4_regs.h"
#include "prof/backend.h"
#include "prof/backend/model_adapter.h"

#define MSR_CRU_ESCR0	0x3b8
#define NEG(n)		((UINT64_C(0) - (n)) & P4_COUNTER_MASK)
#define NBOGUSNTAG	P4_EVMASK(P4_INSTR_RETIRED_NBOGUSNTAG)
#define PMI_VECTOR	0xf0u

/* ---- two logical processors of one core, and what was sent ------------------------ */

static struct percpu lps[2];
static unsigned nlps = 2;
static unsigned cur;			/* the LP running now (its SMT ID) */
static uint32_t lvt[2];			/* each LP's LVT PC entry */
static struct perf_pmi_stats stats;
static bool counting = true;
bool percpu_gs_ready;

struct sent {
	bool nmi;
	uint32_t apic;
	uint8_t vector;
};

static struct sent sent[16];
static unsigned nsent;

struct percpu *percpu_boot(void)
{
	return &lps[cur];
}

unsigned percpu_count(void)
{
	return nlps;
}

struct percpu *percpu_get(unsigned index)
{
	return index < nlps ? &lps[index] : NULL;
}

static uint32_t icr_hi;			/* the ICR's destination half, as the sends leave it */

uint32_t lapic_read(enum lapic_reg reg)
{
	return reg == LAPIC_ICR_HI ? icr_hi : 0;
}

void lapic_write(enum lapic_reg reg, uint32_t v)
{
	if (reg == LAPIC_ICR_HI)
		icr_hi = v;
}

void lapic_send_nmi(uint32_t apic_id)
{
	icr_hi = apic_id << 24;		/* lapic.c: the destination first, then the command */
	if (nsent < 16)
		sent[nsent] = (struct sent){ .nmi = true, .apic = apic_id };
	nsent++;
}

void lapic_send_ipi(uint32_t apic_id, uint8_t vector)
{
	icr_hi = apic_id << 24;
	if (nsent < 16)
		sent[nsent] = (struct sent){ .apic = apic_id, .vector = vector };
	nsent++;
}

struct trap_frame *step_frame(void)
{
	return NULL;
}

static bool in_handler[2];		/* each LP (percpu index) inside a stepped handler */

bool step_in_handler_of(unsigned cpu)
{
	return cpu < 2 && in_handler[cpu];
}

struct trap_frame *user_gate_frame(void)
{
	return NULL;
}

void perf_lock(void)
{
}

void perf_unlock(void)
{
}

bool perf_lock_held(void)
{
	return false;
}

unsigned perf_this_lp(void)
{
	return cur;
}

uint32_t perf_lvt(unsigned lp)
{
	return lvt[lp];
}

void perf_lvt_automask(unsigned lp)
{
	lvt[lp] |= LAPIC_LVT_MASKED;
}

bool perf_counting(void)
{
	return counting;
}

struct perf_pmi_stats *perf_pmi_stats(void)
{
	return &stats;
}

/* ---- set-up ---------------------------------------------------------------------- */

static struct model_pmi pmi;
static struct p4_model model;

static int setup(void **state)
{
	struct p4_model_config cfg = { .sig = { 0x0f, 4, 1 }, .ht = true, .raise_pmi = model_raise,
				       .ctx = &pmi };

	(void)state;
	memset(lps, 0, sizeof(lps));
	for (unsigned i = 0; i < 2; i++) {
		lps[i] = (struct percpu){ .self = &lps[i], .index = i, .apic_id = 6 + i,
					  .state = LP_IDLE };
		lps[i].topo.smt = i;
	}
	lps[0].state = LP_RUNNING;
	nlps = 2;
	cur = 0;
	nsent = 0;
	counting = true;
	in_handler[0] = in_handler[1] = false;
	stats = (struct perf_pmi_stats){ 0 };
	pmi = (struct model_pmi){ .lp_apic = { MODEL_NO_APIC, MODEL_NO_APIC } };
	lvt[0] = lvt[1] = LAPIC_LVT_DELIVERY_NMI;
	assert_int_equal(p4_model_init(&model, &cfg), 0);
	p4_model_set_active(&model, 0, true);
	p4_model_set_active(&model, 1, true);
	return 0;
}

static void wr(uint32_t msr, uint64_t v)
{
	assert_int_equal(msr_bus_write(&model.bus, msr, v), 0);
}

/* instr_retired on counter 12 for both LPs, preset -period, PMIs to the LPs in ovf_pmi. */
static void program(uint64_t period, uint64_t ovf_pmi)
{
	wr(MSR_CRU_ESCR0, field_prep(ESCR_EVENT_SELECT, 0x02) | field_prep(ESCR_EVENT_MASK, NBOGUSNTAG) |
			  ESCR_T0_OS | ESCR_T0_USR | ESCR_T1_OS | ESCR_T1_USR);
	wr(MSR_P4_COUNTER_BASE + 12, NEG(period));
	wr(MSR_P4_CCCR_BASE + 12, field_prep(CCCR_ESCR_SELECT, 4) |
				   field_prep(CCCR_ACTIVE_THREAD, CCCR_AT_ANY) | CCCR_ENABLE | ovf_pmi);
}

static void instr(unsigned lp, uint64_t n)
{
	assert_int_equal(p4_model_event(&model, lp, 3, P4_EV_INSTR_RETIRED, NBOGUSNTAG, n), 0);
}

/* ---- tests ----------------------------------------------------------------------- */

/* The model's request is only recorded; the flush after the call sends it, once, as an NMI. */
static void request_sent_after_the_call(void **state)
{
	(void)state;
	program(10, CCCR_OVF_PMI_T0);
	instr(0, 10);				/* overflow: the PMI is owed to the next count */
	assert_int_equal(pmi.pending[0], 0);
	instr(0, 1);
	assert_int_equal(pmi.pending[0], 1u << 0);
	assert_int_equal(nsent, 0);		/* nothing inside the model call */
	model_pmi_flush(&pmi);
	assert_int_equal(nsent, 1);
	assert_true(sent[0].nmi);
	assert_int_equal(sent[0].apic, 6);
	assert_true(lvt[0] & LAPIC_LVT_MASKED);	/* auto-masked on delivery */
	assert_int_equal(pmi.pending[0], 0);
	model_pmi_flush(&pmi);
	assert_int_equal(nsent, 1);		/* sent once */
}

/*
 * The handler unmasks while the model still asserts (backend_model.c,
 * model_unmasked) and a request for the same assertion is still pending:
 * one PMI, not a second one from the next flush once the entry is unmasked.
 */
static void resend_forgets_the_pending_request(void **state)
{
	(void)state;
	program(10, CCCR_OVF_PMI_T0);
	instr(0, 11);				/* overflow and the next count: requested */
	assert_int_equal(pmi.pending[0], 1u << 0);
	model_pmi_resend(&pmi, 0);
	assert_int_equal(nsent, 1);
	lvt[0] &= ~LAPIC_LVT_MASKED;		/* its handler ran and unmasked */
	model_pmi_flush(&pmi);
	assert_int_equal(nsent, 1);
}

/* OVF_PMI_T1: the PMI goes to the sibling's APIC ID, as a fixed IPI with its entry's vector. */
static void routed_to_t1_fixed(void **state)
{
	(void)state;
	lvt[1] = PMI_VECTOR;			/* fixed delivery */
	program(5, CCCR_OVF_PMI_T1);
	instr(0, 6);				/* T0's instructions overflow it, T1 is interrupted */
	assert_int_equal(pmi.pending[0], 1u << 1);	/* raised by T0's call: T0 sends it */
	cur = 1;
	model_pmi_flush(&pmi);			/* T1's own flush has nothing to send */
	assert_int_equal(nsent, 0);
	cur = 0;
	model_pmi_flush(&pmi);
	assert_int_equal(nsent, 1);
	assert_false(sent[0].nmi);
	assert_int_equal(sent[0].apic, 7);
	assert_int_equal(sent[0].vector, PMI_VECTOR);
	assert_true(lvt[1] & LAPIC_LVT_MASKED);
	assert_false(lvt[0] & LAPIC_LVT_MASKED);
}

/* Both OVF_PMI bits: one interrupt for each LP. */
static void both_lps(void **state)
{
	(void)state;
	program(5, CCCR_OVF_PMI_T0 | CCCR_OVF_PMI_T1);
	instr(0, 6);
	model_pmi_flush(&pmi);
	assert_int_equal(nsent, 2);
	assert_int_equal(sent[0].apic, 6);
	assert_int_equal(sent[1].apic, 7);
}

/* A masked entry holds the PMI (deferred); it is not sent behind the handler's back. */
static void masked_entry_defers(void **state)
{
	(void)state;
	lvt[0] |= LAPIC_LVT_MASKED;
	model_pmi_send(&pmi, 0, true);
	assert_int_equal(nsent, 0);
	assert_int_equal(stats.deferred, 1);
	lvt[0] &= ~LAPIC_LVT_MASKED;
	model_pmi_send(&pmi, 0, true);
	assert_int_equal(nsent, 1);
	assert_int_equal(stats.deferred, 1);
}

/*
 * An LP inside a stepped handler (arch/x86/step.h) is not interrupted: a
 * request for it stays pending, once, for the first flush after the
 * handler's IRET; its entry is not masked meanwhile. The sibling's own
 * requests go out as usual.
 */
static void held_while_the_target_steps_a_handler(void **state)
{
	(void)state;
	program(10, CCCR_OVF_PMI_T0 | CCCR_OVF_PMI_T1);
	in_handler[0] = true;
	instr(0, 11);
	model_pmi_flush(&pmi);
	assert_int_equal(nsent, 1);		/* T1's went */
	assert_int_equal(sent[0].apic, 7);
	assert_int_equal(stats.held, 1);
	assert_false(lvt[0] & LAPIC_LVT_MASKED);
	assert_int_equal(pmi.pending[0], 1u << 0);	/* kept for later, once */
	model_pmi_flush(&pmi);
	assert_int_equal(nsent, 1);
	assert_int_equal(stats.held, 2);
	model_pmi_resend(&pmi, 0);		/* the handler's unmask while still inside */
	assert_int_equal(nsent, 1);
	assert_int_equal(pmi.pending[0], 1u << 0);
	in_handler[0] = false;			/* its IRET retired */
	model_pmi_flush(&pmi);
	assert_int_equal(nsent, 2);
	assert_int_equal(sent[1].apic, 6);
	assert_true(lvt[0] & LAPIC_LVT_MASKED);
	assert_int_equal(pmi.pending[0], 0);
}

/* `record --inject nomask=N`: the next N PMIs leave the entry unmasked, then auto-mask again. */
static void nomask_injection(void **state)
{
	(void)state;
	pmi.nomask = 2;
	model_pmi_send(&pmi, 0, true);
	assert_false(lvt[0] & LAPIC_LVT_MASKED);
	model_pmi_send(&pmi, 0, true);
	assert_false(lvt[0] & LAPIC_LVT_MASKED);
	assert_int_equal(pmi.nomask, 0);
	model_pmi_send(&pmi, 0, true);
	assert_true(lvt[0] & LAPIC_LVT_MASKED);
	assert_int_equal(nsent, 3);
}

/* An LP that does not run (its sibling never started) cannot be interrupted: dropped, counted. */
static void absent_lp_dropped(void **state)
{
	(void)state;
	lps[1].state = LP_OFFLINE;
	model_pmi_send(&pmi, 1, true);
	assert_int_equal(nsent, 0);
	assert_int_equal(stats.dropped, 1);
	nlps = 1;
	model_pmi_send(&pmi, 1, true);
	assert_int_equal(stats.dropped, 2);
	model_pmi_send(&pmi, 0, true);		/* LP0 is always there */
	assert_int_equal(nsent, 1);
}

/* The sibling's APIC ID is looked up once: a later change of its state does not lose it. */
static void apic_found_once(void **state)
{
	(void)state;
	model_pmi_send(&pmi, 1, true);
	assert_int_equal(pmi.lp_apic[1], 7);
	lps[1].apic_id = 99;
	lvt[1] = LAPIC_LVT_DELIVERY_NMI;
	model_pmi_send(&pmi, 1, true);
	assert_int_equal(sent[1].apic, 7);
}

/* A run's end forgets the requests still pending (model_run_end / run_begin). */
/*
 * A PMI the model sends while the interrupted code is between the two
 * halves of its own IPI (destination written, command not yet: smp_call's
 * wake-up of the sibling, stepped in the counting window) leaves the ICR's
 * destination as that code wrote it: a P4 raises a PMI without the ICR.
 */
static void pmi_leaves_the_icr_destination(void **state)
{
	static const uint32_t lvts[] = { LAPIC_LVT_DELIVERY_NMI, LAPIC_PMI_VECTOR };

	(void)state;
	for (unsigned i = 0; i < 2; i++) {
		lvt[0] = lvts[i];
		program(1, CCCR_OVF_PMI_T0);
		icr_hi = 7u << 24;		/* the sibling's APIC ID, its wake-up under way */
		instr(0, 2);
		model_pmi_flush(&pmi);
		assert_int_equal(nsent, i + 1);
		assert_int_equal(sent[i].apic, 6);	/* the PMI went to LP0 ... */
		assert_int_equal(icr_hi, 7u << 24);	/* ... and the wake-up still goes to LP1 */
	}
}

static void reset_forgets(void **state)
{
	(void)state;
	program(1, CCCR_OVF_PMI_T0 | CCCR_OVF_PMI_T1);
	instr(0, 2);
	assert_int_not_equal(pmi.pending[0], 0);
	model_pmi_reset(&pmi);
	model_pmi_flush(&pmi);
	assert_int_equal(nsent, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(request_sent_after_the_call, setup),
		cmocka_unit_test_setup(resend_forgets_the_pending_request, setup),
		cmocka_unit_test_setup(routed_to_t1_fixed, setup),
		cmocka_unit_test_setup(both_lps, setup),
		cmocka_unit_test_setup(masked_entry_defers, setup),
		cmocka_unit_test_setup(nomask_injection, setup),
		cmocka_unit_test_setup(held_while_the_target_steps_a_handler, setup),
		cmocka_unit_test_setup(absent_lp_dropped, setup),
		cmocka_unit_test_setup(apic_found_once, setup),
		cmocka_unit_test_setup(reset_forgets, setup),
		cmocka_unit_test_setup(pmi_leaves_the_icr_destination, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
