/*
 * power.h - reset and power-off without firmware services.
 */
#ifndef NBPROF_ARCH_X86_POWER_H
#define NBPROF_ARCH_X86_POWER_H

#include <stdbool.h>
#include <stdint.h>

/* QEMU's isa-debug-exit device (-device isa-debug-exit,iobase=0xf4,iosize=0x04). */
#define QEMU_DEBUG_EXIT_PORT	0xf4

/* True when QEMU's fw_cfg interface answers with its "QEMU" signature. */
bool power_is_qemu(void);

/* Keyboard-controller reset, then the PCI reset-control register. Returns on failure. */
void power_reboot(void);

/*
 * QEMU: write status to isa-debug-exit (QEMU exits with (status << 1) | 1).
 * Elsewhere: ACPI S5 via the FADT's PM1 control blocks. Returns a one-line
 * reason on failure.
 */
const char *power_off(uint64_t rsdp, uint8_t qemu_status);

#endif
