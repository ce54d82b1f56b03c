/*
 * lapic.c - local APIC in xAPIC mode (SDM Vol. 3A chapter 10).
 *
 * The base address comes from IA32_APIC_BASE (1BH) bits 35:12; bit 11 is
 * the global enable. The page is identity mapped (uncached, arch paging).
 * Enabling sets SVR bit 8 with the spurious vector; the LVT entries the
 * version register reports (timer, thermal, PMC, LINT0, LINT1, error, and
 * CMCI when max LVT >= 6) are all masked, so nothing interrupts until a
 * user unmasks its own entry.
 */
#include "arch/x86/cpu.h"
#include "arch/x86/lapic.h"
#include "arch/x86/msr.h"
#include "arch/x86/paging.h"

#define APIC_BASE_ENABLE	(UINT64_C(1) << 11)
#define APIC_BASE_ADDR_MASK	UINT64_C(0x0000000ffffff000)
#define SVR_APIC_ENABLE		(1u << 8)
#define TIMER_DIVIDE_BY_1	0xb

static volatile uint32_t *apic;
static uint64_t apic_phys;

uint32_t lapic_read(enum lapic_reg reg)
{
	return apic[reg / 4];
}

void lapic_write(enum lapic_reg reg, uint32_t v)
{
	apic[reg / 4] = v;
}

bool lapic_irr_pending(uint8_t vector)
{
	return (lapic_read((enum lapic_reg)(LAPIC_IRR0 + 0x10 * (vector / 32))) >> (vector % 32)) & 1u;
}

bool lapic_present(void)
{
	return apic != 0;
}

uint64_t lapic_base(void)
{
	return apic_phys;
}

uint32_t lapic_id(void)
{
	return lapic_read(LAPIC_ID) >> 24;
}

unsigned lapic_max_lvt(void)
{
	return (lapic_read(LAPIC_VERSION) >> 16) & 0xff;
}

void lapic_eoi(void)
{
	if (apic)
		lapic_write(LAPIC_EOI, 0);
}

bool lapic_init(void)
{
	uint64_t base;

	if (!(cpuid_count(1, 0).edx & CPUID_1_EDX_APIC))
		return false;
	base = msr_read(MSR_IA32_APIC_BASE);
	if (!(base & APIC_BASE_ENABLE)) {
		base |= APIC_BASE_ENABLE;
		msr_write(MSR_IA32_APIC_BASE, base);
	}
	apic_phys = base & APIC_BASE_ADDR_MASK;
	apic = (volatile uint32_t *)(uintptr_t)apic_phys;
	paging_set_uncached(apic_phys, 4096);	/* no-op when already inside FEC00000H-FEFFFFFFH */

	lapic_write(LAPIC_LVT_TIMER, LAPIC_LVT_MASKED);
	lapic_write(LAPIC_LVT_PMC, LAPIC_LVT_MASKED | LAPIC_PMI_VECTOR);
	lapic_write(LAPIC_LVT_LINT0, LAPIC_LVT_MASKED);
	lapic_write(LAPIC_LVT_LINT1, LAPIC_LVT_MASKED);
	lapic_write(LAPIC_LVT_ERROR, LAPIC_LVT_MASKED | LAPIC_ERROR_VECTOR);
	if (lapic_max_lvt() >= 5)
		lapic_write(LAPIC_LVT_THERMAL, LAPIC_LVT_MASKED);
	if (lapic_max_lvt() >= 6)
		lapic_write(LAPIC_LVT_CMCI, LAPIC_LVT_MASKED);
	lapic_write(LAPIC_TPR, 0);
	lapic_write(LAPIC_SVR, SVR_APIC_ENABLE | LAPIC_SPURIOUS_VECTOR);
	/* ESR is write-then-read (SDM 10.5.3); clear what the firmware left. */
	lapic_write(LAPIC_ESR, 0);
	lapic_write(LAPIC_ESR, 0);
	lapic_eoi();
	return true;
}

static void lapic_icr_wait(void)
{
	while (lapic_read(LAPIC_ICR_LO) & ICR_DELIVERY_PENDING)
		cpu_pause();
}

static void lapic_icr_send(uint32_t apic_id, uint32_t low)
{
	lapic_icr_wait();
	lapic_write(LAPIC_ICR_HI, apic_id << 24);
	lapic_write(LAPIC_ICR_LO, low);	/* the write to the low half sends */
	lapic_icr_wait();
}

void lapic_self_ipi(uint8_t vector)
{
	lapic_icr_send(0, ICR_SHORTHAND_SELF | ICR_LEVEL_ASSERT | ICR_DELIVERY_FIXED | vector);
}

void lapic_send_ipi(uint32_t apic_id, uint8_t vector)
{
	lapic_icr_send(apic_id, ICR_LEVEL_ASSERT | ICR_DELIVERY_FIXED | vector);
}

void lapic_send_nmi(uint32_t apic_id)
{
	lapic_icr_send(apic_id, ICR_LEVEL_ASSERT | ICR_DELIVERY_NMI);
}

uint32_t lapic_nmi_prepare(uint32_t apic_id, volatile uint32_t **icr_lo)
{
	lapic_icr_wait();
	lapic_write(LAPIC_ICR_HI, apic_id << 24);
	*icr_lo = &apic[LAPIC_ICR_LO / 4];
	return ICR_LEVEL_ASSERT | ICR_DELIVERY_NMI;
}

void lapic_timer_start(uint32_t count, uint8_t vector, bool periodic)
{
	lapic_write(LAPIC_TIMER_DIVIDE, TIMER_DIVIDE_BY_1);
	lapic_write(LAPIC_LVT_TIMER, (vector ? vector : LAPIC_LVT_MASKED) |
				     (periodic ? LAPIC_TIMER_PERIODIC : 0));
	lapic_write(LAPIC_TIMER_INITIAL, count);
}

void lapic_timer_stop(void)
{
	lapic_write(LAPIC_TIMER_INITIAL, 0);
	lapic_write(LAPIC_LVT_TIMER, LAPIC_LVT_MASKED);
}
