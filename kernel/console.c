/*
 * console.c - the kernel console on the polled serial port.
 *
 * Output converts "\n" to CR LF (serial terminals expect both). Input is
 * polled; bytes that arrive while a command runs are read by the Ctrl-C
 * check and queued in a small ring so the shell still sees them later.
 */
#include "arch/x86/serial.h"
#include "kernel/console.h"

#define CONSOLE_RX_RING	64
#define CTRL_C		0x03

static unsigned char rx_ring[CONSOLE_RX_RING];
static unsigned rx_head, rx_tail;	/* head: next to read; tail: next to write */

bool console_init(uint16_t port, uint32_t baud)
{
	return serial_init(port, baud);
}

void console_putc(char c)
{
	if (c == '\n')
		serial_putc('\r');
	serial_putc(c);
}

void console_write(const char *s, size_t n)
{
	while (n--)
		console_putc(*s++);
}

static void console_out(void *ctx, char c)
{
	(void)ctx;
	console_putc(c);
}

int kvprintf(const char *fmt, va_list ap)
{
	return kvprintf_cb(console_out, NULL, fmt, ap);
}

int kprintf(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = kvprintf(fmt, ap);
	va_end(ap);
	return n;
}

int console_getc(void)
{
	int c;

	if (rx_head != rx_tail) {
		c = rx_ring[rx_head % CONSOLE_RX_RING];
		rx_head++;
		return c;
	}
	while ((c = serial_getc_nowait()) < 0)
		;
	return c;
}

bool console_poll_interrupt(void)
{
	bool seen = false;
	int c;

	while ((c = serial_getc_nowait()) >= 0) {
		if (c == CTRL_C) {
			seen = true;
			continue;
		}
		if (rx_tail - rx_head < CONSOLE_RX_RING)
			rx_ring[rx_tail++ % CONSOLE_RX_RING] = (unsigned char)c;
	}
	return seen;
}
