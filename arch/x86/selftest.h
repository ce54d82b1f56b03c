/*
 * selftest.h - boot-time checks that interrupt delivery works.
 */
#ifndef NBPROF_ARCH_X86_SELFTEST_H
#define NBPROF_ARCH_X86_SELFTEST_H

/*
 * Send a fixed self-IPI, a fixed IPI to our own APIC ID, an NMI IPI to our
 * own APIC ID and a one-shot LAPIC timer interrupt, take an NMI on a
 * guarded RDMSR (the handler must run, the RDMSR must execute), and try
 * RDPMC; print one line with the outcome of each. Needs idt_init, lapic_init and
 * timer_calibrate. Returns the number of checks that failed.
 */
int arch_selftest_interrupts(void);

#endif
