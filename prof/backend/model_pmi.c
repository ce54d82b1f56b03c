/*
 * model_pmi.c - the model backend's interrupts: the model's raise_pmi()
 * only records the request; after the model call returns (never inside it:
 * the handler rewrites model registers) the request becomes a real
 * interrupt on the LP that OVF_PMI_T0/T1 names, as that LP's LVT PC entry
 * says - a fixed IPI with its vector or an NMI, never with the self
 * shorthand (QEMU notes P10) - after setting the entry's mask bit, as
 * NetBurst does when it delivers a PMI (PMU reference 6). A request while the
 * entry is masked waits; when the handler unmasks and the model still
 * asserts, the PMI is sent again (prof/backend/model.c, model_unmasked).
 *
 * Delivery is the APIC's, nothing kinder: a fixed-vector PMI is held while
 * the LP runs with IF = 0 (SDM Vol. 3A 6.8.1) - a workload stepped with
 * IF = 0, the sibling's jobs, the kernel's own code with interrupts off -
 * and taken wherever IF next becomes 1; only an NMI gets through. No
 * interrupt window is opened for it.
 *
 * docs/dev/sampling-path.md tells which context a model PMI
 * interrupts (the workload's, through the step handler's frame).
 * tests/host/test_model_pmi.c runs this file on the host.
 */
#include "arch/x86/cpu.h"
#include "arch/x86/lapic.h"
#include "arch/x86/step.h"
#include "arch/x86/user.h"
#include "prof/backend.h"
#include "prof/backend/model_adapter.h"

#define MODEL_IRQ_WAIT	100000u		/* pause loops a PMI the model sent may take */

void model_pmi_reset(struct model_pmi *p)
{
	for (unsigned lp = 0; lp < P4_MODEL_NLP; lp++)
		p->pending[lp] = 0;
}

void model_raise(struct p4_model *m, unsigned lp, void *ctx)
{
	struct model_pmi *p = ctx;

	(void)m;
	__atomic_fetch_or(&p->pending[perf_this_lp()], 1u << lp, __ATOMIC_RELAXED);
}

/* The workload's frame while this LP runs its #DB handler or its int 0x81 gate, else NULL. */
static struct trap_frame *model_wl_frame(void)
{
	struct trap_frame *f = step_frame();

	return f ? f : user_gate_frame();
}

/* The APIC ID of the LP with SMT ID lp in LP0's core, or MODEL_NO_APIC. */
static uint32_t model_lp_apic(struct model_pmi *p, unsigned lp)
{
	const struct percpu *me = percpu_get(0);

	if (lp >= P4_MODEL_NLP)
		return MODEL_NO_APIC;
	if (p->lp_apic[lp] != MODEL_NO_APIC || !me)
		return p->lp_apic[lp];
	if (lp == me->topo.smt)
		return p->lp_apic[lp] = me->apic_id;
	for (unsigned i = 1; i < percpu_count(); i++) {
		const struct percpu *pc = percpu_get(i);

		if (pc->topo.smt == lp && pc->topo.core == me->topo.core &&
		    pc->topo.package == me->topo.package &&
		    (pc->state == LP_IDLE || pc->state == LP_RUNNING))
			return p->lp_apic[lp] = pc->apic_id;
	}
	return MODEL_NO_APIC;
}

/* Inside the step handler: wait until the NMI just sent has been handled (handoff). */
static void model_nmi_wait(uint64_t seen)
{
	struct perf_pmi_stats *st = perf_pmi_stats();

	for (unsigned i = 0; i < MODEL_IRQ_WAIT && st->interrupts == seen; i++)
		cpu_pause();
	if (st->interrupts == seen)
		st->late++;
}

/*
 * Send the PMI through the interrupt command register, leaving it as the
 * interrupted code had it: a P4 raises a PMI through LVT PC without
 * touching the ICR, but the model's IPI writes its destination (ICR high)
 * and then its command (ICR low). Kernel code stepped in the counting
 * window may sit between those two writes of its own IPI (smp_call's
 * wake-up of the sibling): without the restore, its command went to this
 * PMI's destination, the sibling never woke and LP0 waited for it forever
 * (a period-1 record of a pair, a PMI after every instruction).
 */
static void model_pmi_deliver(uint32_t apic, uint32_t lvt)
{
	uint32_t icr_hi = lapic_read(LAPIC_ICR_HI);

	if ((lvt & LAPIC_LVT_DELIVERY_MODE) == LAPIC_LVT_DELIVERY_NMI)
		lapic_send_nmi(apic);
	else
		lapic_send_ipi(apic, (uint8_t)(lvt & LAPIC_LVT_VECTOR));
	lapic_write(LAPIC_ICR_HI, icr_hi);
}

/*
 * A fixed IPI to this LP while it steps a workload that runs with IF = 1 is
 * taken right after the #DB handler's IRETQ, at the workload's next
 * instruction; with IF = 0 it stays pending in the local APIC until IF is
 * set (the count's stop then finds the overflow, perf_count_stop). An NMI
 * to this LP inside the step handler is waited for here, and the handler
 * takes the workload's frame (a handoff).
 */
/* The percpu index of the LP with this APIC ID, or -1. */
static int model_apic_cpu(uint32_t apic)
{
	for (unsigned i = 0; i < percpu_count(); i++)
		if (percpu_get(i)->apic_id == apic)
			return (int)i;
	return -1;
}

/*
 * Held: the target LP is inside a stepped handler (arch/x86/step.h) whose
 * IRET has not retired. A processor would take this PMI after that IRET;
 * sent now, it would nest in the handler, since the step traps' own IRETs
 * unblock NMIs, and an NMI on the IST stack would overwrite the one it
 * interrupts. The request stays pending (model_pmi_flush_now) and goes out
 * at the first flush after the handler's IRET - the next step at the
 * latest, or at once for a handler the model's NMI entered from the step
 * handler, whose send loop then finds it again.
 */
static bool model_pmi_held(uint32_t apic)
{
	int cpu = model_apic_cpu(apic);

	return cpu >= 0 && step_in_handler_of((unsigned)cpu);
}

bool model_pmi_send(struct model_pmi *p, unsigned lp, bool wait)
{
	struct perf_pmi_stats *st = perf_pmi_stats();
	struct trap_frame *wf = model_wl_frame();
	uint32_t lvt, apic = model_lp_apic(p, lp);
	uint64_t seen = st->interrupts;
	bool self = lp == perf_this_lp();

	if (apic == MODEL_NO_APIC) {
		st->dropped++;
		return true;
	}
	perf_lock();		/* against the target's handler unmasking at the same time */
	lvt = perf_lvt(lp);
	if (!(lvt & LAPIC_LVT_MASKED) && model_pmi_held(apic)) {
		perf_unlock();
		st->held++;
		return false;
	}
	if (!(lvt & LAPIC_LVT_MASKED) && p->nomask)
		p->nomask--;		/* fault injection: a part that does not auto-mask */
	else if (!(lvt & LAPIC_LVT_MASKED))
		perf_lvt_automask(lp);
	perf_unlock();
	if (lvt & LAPIC_LVT_MASKED) {
		st->deferred++;
		return true;
	}
	model_pmi_deliver(apic, lvt);
	/* held: the handler defers it to the release (perf_unlock), waiting is in vain */
	if ((lvt & LAPIC_LVT_DELIVERY_MODE) == LAPIC_LVT_DELIVERY_NMI && self && wf && wait &&
	    !perf_lock_held())
		model_nmi_wait(seen);
	return true;
}

void model_pmi_flush_now(struct model_pmi *p)
{
	unsigned me = perf_this_lp();
	uint32_t lps, held = 0;

	/* A fixed PMI the sibling sent this LP is taken when IF is next 1, not here. */
	while ((lps = __atomic_exchange_n(&p->pending[me], 0, __ATOMIC_RELAXED)) != 0)
		for (unsigned lp = 0; lp < P4_MODEL_NLP; lp++)
			if ((lps & (1u << lp)) && !model_pmi_send(p, lp, true))
				held |= 1u << lp;
	if (held)		/* for the next flush (model_pmi_held) */
		__atomic_fetch_or(&p->pending[me], held, __ATOMIC_RELAXED);
}

void model_pmi_resend(struct model_pmi *p, unsigned lp)
{
	/*
	 * A request for lp still pending on this LP is this same assertion:
	 * forgotten, or the next model_pmi_flush would send a second PMI for
	 * one overflow, which the handler - its entry unmasked again by then -
	 * would take and find nothing to handle.
	 */
	__atomic_fetch_and(&p->pending[perf_this_lp()], ~(1u << lp), __ATOMIC_RELAXED);
	if (!model_pmi_send(p, lp, false))
		__atomic_fetch_or(&p->pending[perf_this_lp()], 1u << lp, __ATOMIC_RELAXED);
}
