/*
 * lapic.h - the local APIC in xAPIC (MMIO) mode.
 *
 * Vectors the kernel assigns to local APIC sources (see the map in idt.c).
 * Every LVT entry stays masked until its user unmasks it.
 */
#ifndef NBPROF_ARCH_X86_LAPIC_H
#define NBPROF_ARCH_X86_LAPIC_H

#include <stdbool.h>
#include <stdint.h>

#define LAPIC_TIMER_VECTOR	0xf0
#define LAPIC_IPI_VECTOR	0xf1	/* general-purpose fixed IPI (tests, wakeups) */
#define LAPIC_PMI_VECTOR	0xf8	/* LVT performance counter, fixed delivery */
#define LAPIC_ERROR_VECTOR	0xfe
#define LAPIC_SPURIOUS_VECTOR	0xff

/* Register offsets from the APIC base (SDM Vol. 3A Table 10-1). */
enum lapic_reg {
	LAPIC_ID = 0x020,
	LAPIC_VERSION = 0x030,
	LAPIC_TPR = 0x080,
	LAPIC_EOI = 0x0b0,
	LAPIC_SVR = 0x0f0,
	LAPIC_IRR0 = 0x200,	/* IRR: 8 registers of 32 vectors, 10H apart (SDM Vol. 3A 10.8.4) */
	LAPIC_ESR = 0x280,
	LAPIC_LVT_CMCI = 0x2f0,
	LAPIC_ICR_LO = 0x300,
	LAPIC_ICR_HI = 0x310,
	LAPIC_LVT_TIMER = 0x320,
	LAPIC_LVT_THERMAL = 0x330,
	LAPIC_LVT_PMC = 0x340,
	LAPIC_LVT_LINT0 = 0x350,
	LAPIC_LVT_LINT1 = 0x360,
	LAPIC_LVT_ERROR = 0x370,
	LAPIC_TIMER_INITIAL = 0x380,
	LAPIC_TIMER_CURRENT = 0x390,
	LAPIC_TIMER_DIVIDE = 0x3e0,
};

/*
 * The interrupt command register's low half (SDM Vol. 3A 10.6.1, Figure
 * 10-12): delivery mode 10:8 (the LVT entries' encoding, 10.5.1), delivery
 * status 12, level 14, destination shorthand 19:18; physical destination
 * mode (bit 11 clear), the APIC ID in the high half's 31:24.
 */
#define ICR_DELIVERY_FIXED	(0u << 8)
#define ICR_DELIVERY_NMI	(4u << 8)
#define ICR_DELIVERY_INIT	(5u << 8)
#define ICR_DELIVERY_STARTUP	(6u << 8)	/* vector = the start-up code's page number */
#define ICR_DELIVERY_PENDING	(1u << 12)
#define ICR_LEVEL_ASSERT	(1u << 14)
#define ICR_SHORTHAND_SELF	(1u << 18)

#define LAPIC_LVT_MASKED	(1u << 16)
#define LAPIC_LVT_DELIVERY_NMI	ICR_DELIVERY_NMI	/* the same encoding */
#define LAPIC_LVT_DELIVERY_MODE	(7u << 8)
#define LAPIC_LVT_VECTOR	0xffu
#define LAPIC_TIMER_PERIODIC	(1u << 17)

/* Enable the APIC (base from IA32_APIC_BASE), mask every LVT. False if CPUID says none. */
bool lapic_init(void);
bool lapic_present(void);
uint64_t lapic_base(void);
uint32_t lapic_read(enum lapic_reg reg);
void lapic_write(enum lapic_reg reg, uint32_t v);
uint32_t lapic_id(void);
/* Is a fixed interrupt with this vector pending (requested, not yet taken) here? */
bool lapic_irr_pending(uint8_t vector);
unsigned lapic_max_lvt(void);
void lapic_eoi(void);

/* Fixed IPI to this CPU (destination shorthand "self"). */
void lapic_self_ipi(uint8_t vector);
/* Fixed IPI to the CPU with this APIC ID. */
void lapic_send_ipi(uint32_t apic_id, uint8_t vector);
/*
 * NMI to the CPU with this APIC ID, never with the self shorthand: the SDM
 * lists self + NMI as invalid on Pentium 4 and Xeon (QEMU notes P10).
 */
void lapic_send_nmi(uint32_t apic_id);
/*
 * The same NMI, split for code that must send it from a known instruction:
 * addresses the ICR to apic_id and returns the value that, stored to
 * *icr_lo (the ICR's low half), sends it.
 */
uint32_t lapic_nmi_prepare(uint32_t apic_id, volatile uint32_t **icr_lo);

/* Timer: divide by 1, count down from count, raise vector (masked if vector == 0). */
void lapic_timer_start(uint32_t count, uint8_t vector, bool periodic);
void lapic_timer_stop(void);

#endif
