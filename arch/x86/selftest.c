/*
 * selftest.c - prove at boot that each interrupt path the PMU code will
 * rely on delivers: fixed IPIs (how the PMU model raises a PMI on the LVT PC
 * vector), NMI IPIs (a PMI with NMI delivery; sent by APIC ID without the
 * self shorthand, uefi-qemu-notes P10) and the LAPIC timer. Interrupts are
 * enabled only inside the short wait windows; everything else stays masked.
 */
#include <stdbool.h>
#include <stddef.h>

#include "arch/x86/console.h"
#include "arch/x86/cpu.h"
#include "arch/x86/idt.h"
#include "arch/x86/lapic.h"
#include "arch/x86/msr.h"
#include "arch/x86/selftest.h"
#include "arch/x86/timer.h"

#define SELFTEST_WAIT_US	10000

static volatile unsigned hits;

static void selftest_count(struct trap_frame *f)
{
	(void)f;
	hits++;
}

/* Run send() with interrupts enabled; true when the handler ran once. */
static bool selftest_expect(uint8_t vector, void (*send)(void))
{
	uint64_t end;

	hits = 0;
	idt_set_handler(vector, selftest_count);
	send();
	cpu_sti();
	end = rdtsc() + SELFTEST_WAIT_US * (timer_tsc_hz() / 1000000);
	while (hits == 0 && rdtsc() < end)
		cpu_pause();
	cpu_cli();
	idt_set_handler(vector, NULL);
	return hits == 1;
}

static void send_self(void)
{
	lapic_self_ipi(LAPIC_IPI_VECTOR);
}

static void send_own_id(void)
{
	lapic_send_ipi(lapic_id(), LAPIC_IPI_VECTOR);
}

static void send_nmi(void)
{
	lapic_send_nmi(lapic_id());
}

static void start_timer(void)
{
	lapic_timer_start((uint32_t)(timer_lapic_hz() / 1000), LAPIC_TIMER_VECTOR, false);
}

static const char *verdict(bool ok, int *failed)
{
	*failed += !ok;
	return ok ? "ok" : "FAILED";
}

int arch_selftest_interrupts(void)
{
	int failed = 0;
	uint64_t pmc;
	bool self, own, nmi, tmr;

	if (!lapic_present() || !timer_tsc_hz())
		return 0;
	self = selftest_expect(LAPIC_IPI_VECTOR, send_self);
	own = selftest_expect(LAPIC_IPI_VECTOR, send_own_id);
	nmi = selftest_expect(VEC_NMI, send_nmi);
	tmr = selftest_expect(LAPIC_TIMER_VECTOR, start_timer);
	lapic_timer_stop();
	kprintf("lapic: id %u at %#llx, self-IPI %s, IPI by id %s, NMI by id %s, timer %s; "
		"rdpmc 0: %s\n",
		(unsigned)lapic_id(), (unsigned long long)lapic_base(), verdict(self, &failed),
		verdict(own, &failed), verdict(nmi, &failed), verdict(tmr, &failed),
		rdpmc_safe(0, &pmc) ? "faults (caught)" : "ok");
	return failed;
}
