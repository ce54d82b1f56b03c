/*
 * serial.h - polled 16550 UART (COM1 by default).
 */
#ifndef NBPROF_ARCH_X86_SERIAL_H
#define NBPROF_ARCH_X86_SERIAL_H

#include <stdbool.h>
#include <stdint.h>

#define SERIAL_COM1		0x3f8
#define SERIAL_CLOCK_BAUD	115200	/* baud = 115200 / divisor */

/* Program port for baud 8N1, FIFOs on, no interrupts. False if no UART answers there. */
bool serial_init(uint16_t port, uint32_t baud);
void serial_putc(char c);
/* A received byte, or -1 when none is waiting. */
int serial_getc_nowait(void);
uint16_t serial_port(void);
uint32_t serial_baud(void);

#endif
