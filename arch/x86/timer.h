/*
 * timer.h - TSC and local APIC timer frequencies, measured against the PIT.
 */
#ifndef NBPROF_ARCH_X86_TIMER_H
#define NBPROF_ARCH_X86_TIMER_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Measure both against PIT channel 2 (about 20 ms). Needs lapic_init()
 * first for the APIC timer; false when the PIT never finished.
 */
bool timer_calibrate(void);
uint64_t timer_tsc_hz(void);		/* 0 when not calibrated */
uint64_t timer_lapic_hz(void);		/* APIC timer counts per second at divide-by-1 */

/* Busy-wait using the TSC (needs timer_calibrate()). */
void timer_udelay(uint64_t us);

#endif
