/*
 * selftest.c - prove at boot that each interrupt path the PMU code will
 * rely on delivers: fixed IPIs (how the PMU model raises a PMI on the LVT PC
 * vector), NMI IPIs (a PMI with NMI delivery; sent by APIC ID without the
 * self shorthand, QEMU notes P10) and the LAPIC timer. Interrupts are
 * enabled only inside the short wait windows; everything else stays masked.
 *
 * It also proves that an NMI taken on a guarded RDMSR (one with an
 * exception-table entry, extable.h) runs the NMI handler and leaves the
 * RDMSR to execute: a PMI by NMI can land on any instruction. The landing is
 * made exact with NMI blocking: from the delivery of an NMI until the next
 * IRET further NMIs are held pending (SDM Vol. 3A 6.7.1). The first NMI's
 * handler sends a second NMI to itself and points its return address at
 * the RDMSR, so the second NMI is taken with RIP = the RDMSR.
 */
#include <stdbool.h>
#include <stddef.h>

#include "arch/x86/console.h"
#include "arch/x86/cpu.h"
#include "arch/x86/extable.h"
#include "arch/x86/idt.h"
#include "arch/x86/lapic.h"
#include "arch/x86/msr.h"
#include "arch/x86/selftest.h"
#include "arch/x86/timer.h"

/*
 * How long each boot check waits for its interrupt: microseconds suffice on
 * a machine, but QEMU on a busy host may hold a guest's timer callback for
 * many milliseconds (a 1 ms timer once missed a 10 ms bound there). The
 * wait ends as soon as the interrupt comes.
 */
#define SELFTEST_WAIT_US	100000
#define NMI_PROBE_OK		0	/* the RDMSR executed */
#define NMI_PROBE_SKIPPED	1	/* its fixup ran instead: treated as faulting */
#define NMI_PROBE_NO_NMI	2	/* no NMI ended the spin loop */

/*
 * int selftest_nmi_probe(uint32_t msr, uint64_t *value,
 *                        volatile uint32_t *icr_lo, uint32_t icr);
 *
 * Loads ECX with msr, sends an NMI by storing icr to *icr_lo, then spins
 * (at most 2^24 PAUSEs) until the NMI handler moves the return address
 * from the spin loop to the guarded RDMSR, which reads msr into *value.
 * Returns one of NMI_PROBE_*. The RDMSR is guarded like msr_read_safe's.
 * Its inner labels are assembler-local (no symbols of their own, so every
 * address in it is named selftest_nmi_probe+N); selftest_nmi_labels()
 * hands their addresses to the C side.
 */
int selftest_nmi_probe(uint32_t msr, uint64_t *value, volatile uint32_t *icr_lo, uint32_t icr);
void selftest_nmi_labels(uint64_t *spin, uint64_t *spin_end, uint64_t *rdmsr);
static uint64_t selftest_nmi_spin, selftest_nmi_spin_end, selftest_nmi_rdmsr;

/* The probe itself is assembly of the mode: arch/x86/64/nmiprobe.S (x86-64), arch/x86/32/nmiprobe.S (ia32). */

/* What the NMI handler saw during the probe. */
static struct {
	volatile unsigned entries;
	volatile uint64_t rip[2];	/* saved RIP of the first two entries */
} nmi_probe;

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

static void selftest_nmi_on_probe(struct trap_frame *f)
{
	unsigned n = nmi_probe.entries++;

	if (n < 2)
		nmi_probe.rip[n] = f->rip;
	if (n == 0 && f->rip >= selftest_nmi_spin &&
	    f->rip < selftest_nmi_spin_end) {
		/* Held pending until our IRET, then taken before the RDMSR runs. */
		lapic_send_nmi(lapic_id());
		f->rip = selftest_nmi_rdmsr;
	}
}

/* Wait (bounded) until the NMI handler has run `entries` times. */
static void selftest_nmi_wait(unsigned entries)
{
	uint64_t end = rdtsc() + SELFTEST_WAIT_US * (timer_tsc_hz() / 1000000);

	while (nmi_probe.entries < entries && rdtsc() < end)
		cpu_pause();
}

/*
 * Run the probe on IA32_APIC_BASE (1BH, present on every CPU with a local
 * APIC). Correct: two handler entries, the second at the RDMSR, and the
 * RDMSR returns what msr_read_safe reads.
 */
static bool selftest_nmi_on_guarded_rdmsr(void)
{
	volatile uint32_t *icr_lo;
	uint64_t got = 0, want = 0;
	uint32_t icr;
	int r;

	selftest_nmi_labels(&selftest_nmi_spin, &selftest_nmi_spin_end, &selftest_nmi_rdmsr);
	nmi_probe.entries = 0;
	nmi_probe.rip[0] = nmi_probe.rip[1] = 0;
	if (msr_read_safe(MSR_IA32_APIC_BASE, &want) != 0)
		return false;
	idt_set_handler(VEC_NMI, selftest_nmi_on_probe);
	icr = lapic_nmi_prepare(lapic_id(), &icr_lo);
	r = selftest_nmi_probe(MSR_IA32_APIC_BASE, &got, icr_lo, icr);
	selftest_nmi_wait(2);	/* a late second NMI still finds this handler */
	idt_set_handler(VEC_NMI, NULL);
	if (r == NMI_PROBE_OK && nmi_probe.entries == 2 &&
	    nmi_probe.rip[1] == selftest_nmi_rdmsr && got == want)
		return true;
	kprintf("lapic: NMI on a guarded RDMSR: %s, handler ran %u times, second at %#llx "
		"(RDMSR at %#llx), read %#llx, msr_read_safe %#llx\n",
		r == NMI_PROBE_OK ? "RDMSR executed" :
		r == NMI_PROBE_SKIPPED ? "RDMSR skipped as faulting" : "no NMI in time",
		nmi_probe.entries, (unsigned long long)nmi_probe.rip[1],
		(unsigned long long)selftest_nmi_rdmsr, (unsigned long long)got,
		(unsigned long long)want);
	return false;
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
	bool self, own, nmi, tmr, nmi_msr;

	if (!lapic_present() || !timer_tsc_hz())
		return 0;
	self = selftest_expect(LAPIC_IPI_VECTOR, send_self);
	own = selftest_expect(LAPIC_IPI_VECTOR, send_own_id);
	nmi = selftest_expect(VEC_NMI, send_nmi);
	tmr = selftest_expect(LAPIC_TIMER_VECTOR, start_timer);
	lapic_timer_stop();
	nmi_msr = selftest_nmi_on_guarded_rdmsr();
	kprintf("lapic: id %u at %#llx, self-IPI %s, IPI by id %s, NMI by id %s, timer %s, "
		"NMI on a guarded RDMSR %s; rdpmc 0: %s\n",
		(unsigned)lapic_id(), (unsigned long long)lapic_base(), verdict(self, &failed),
		verdict(own, &failed), verdict(nmi, &failed), verdict(tmr, &failed),
		verdict(nmi_msr, &failed), rdpmc_safe(0, &pmc) ? "faults (caught)" : "ok");
	return failed;
}
