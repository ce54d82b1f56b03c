/*
 * timer.c - calibrate the TSC and the local APIC timer against the 8254 PIT.
 *
 * PIT channel 2 is the one whose gate software controls (port 61H bit 0)
 * and whose output it can read (port 61H bit 5), without an interrupt.
 * Mode 0 ("interrupt on terminal count") drives OUT2 low when the count is
 * loaded and high when it reaches zero, so the time between loading
 * PIT_CAL_COUNT and OUT2 going high is PIT_CAL_COUNT / 1193182 s (Intel
 * 8254 data sheet; the PC's PIT input clock is 1.193182 MHz). The TSC and the
 * APIC current-count register are sampled at both ends of that window.
 */
#include "arch/x86/cpu.h"
#include "arch/x86/io.h"
#include "arch/x86/lapic.h"
#include "arch/x86/timer.h"

#define PIT_HZ			1193182u
#define PIT_CAL_MS		20u
#define PIT_CAL_COUNT		(PIT_HZ * PIT_CAL_MS / 1000u)	/* 23863, fits 16 bits */
#define PIT_CH2_DATA		0x42
#define PIT_MODE_CMD		0x43
#define PIT_CMD_CH2_LOHI_MODE0	0xb0	/* channel 2, lobyte/hibyte, mode 0, binary */
#define PORT61			0x61
#define PORT61_GATE2		0x01
#define PORT61_SPEAKER		0x02
#define PORT61_OUT2		0x20
#define PIT_POLL_LIMIT		50000000u	/* ~seconds of port reads: give up */

static uint64_t tsc_hz, lapic_hz;

bool timer_calibrate(void)
{
	uint8_t p61 = inb(PORT61);
	uint64_t t0, t1;
	uint32_t a0 = 0, a1 = 0, polls = 0;

	/* Gate off and speaker off while loading, then gate on to start counting. */
	outb(PORT61, p61 & ~(PORT61_GATE2 | PORT61_SPEAKER));
	outb(PIT_MODE_CMD, PIT_CMD_CH2_LOHI_MODE0);
	outb(PIT_CH2_DATA, PIT_CAL_COUNT & 0xff);
	outb(PIT_CH2_DATA, PIT_CAL_COUNT >> 8);
	if (lapic_present())
		lapic_timer_start(0xffffffffu, 0, false);

	outb(PORT61, (p61 & ~PORT61_SPEAKER) | PORT61_GATE2);
	t0 = rdtsc();
	if (lapic_present())
		a0 = lapic_read(LAPIC_TIMER_CURRENT);
	while (!(inb(PORT61) & PORT61_OUT2))
		if (++polls == PIT_POLL_LIMIT)
			break;
	t1 = rdtsc();
	if (lapic_present()) {
		a1 = lapic_read(LAPIC_TIMER_CURRENT);
		lapic_timer_stop();
	}
	outb(PORT61, p61 & ~(PORT61_GATE2 | PORT61_SPEAKER));
	if (polls == PIT_POLL_LIMIT)
		return false;
	tsc_hz = (t1 - t0) * PIT_HZ / PIT_CAL_COUNT;
	lapic_hz = (uint64_t)(a0 - a1) * PIT_HZ / PIT_CAL_COUNT;
	return true;
}

uint64_t timer_tsc_hz(void)
{
	return tsc_hz;
}

uint64_t timer_lapic_hz(void)
{
	return lapic_hz;
}

void timer_udelay(uint64_t us)
{
	uint64_t end = rdtsc() + us * (tsc_hz ? tsc_hz : 1000000000u) / 1000000u;

	while (rdtsc() < end)
		cpu_pause();
}
