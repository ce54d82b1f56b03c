/*
 * console.c - the kernel console on the polled serial port, and on the
 * machine's screen and keyboard (nbprof.cfg console = serial|screen|both).
 *
 * Output converts "\n" to CR LF (serial terminals expect both). Input is
 * polled; bytes that arrive while a command runs are read by the Ctrl-C
 * check and queued in a small ring so the shell still sees them later.
 * The screen gets the same characters into its grid in RAM (screen.h);
 * they are drawn before the console waits for input and, while a command
 * runs, at its Ctrl-C checks now and then (console_flush), so the serial
 * output costs what it did. Typed bytes come from the UART and the
 * keyboard alike. Without a UART (console_init found none) the serial
 * port is neither written nor read: a missing UART's status register
 * reads FFH, which would look like endless input.
 *
 * Both logical processors print (a workload's fault report on LP1, the
 * shell on LP0), so output goes through one lock: a kprintf or a
 * console_write comes out whole. The lock belongs to an LP and may be
 * taken again by the same LP (an exception or NMI report while that LP
 * was printing). An LP that died holding it cannot hang the other one:
 * after CONSOLE_SPIN_MAX pauses the waiter prints anyway.
 */
#include "arch/x86/console.h"
#include "arch/x86/cpu.h"
#include "arch/x86/io.h"
#include "arch/x86/kbd.h"
#include "arch/x86/percpu.h"
#include "arch/x86/screen.h"
#include "arch/x86/serial.h"

#define CONSOLE_RX_RING		64
#define CTRL_C			0x03
#define CONSOLE_SPIN_MAX	50000000u
#define SCREEN_FLUSH_TSC	(UINT64_C(1) << 27)	/* about 50 ms at 2.5 GHz */

/* Where the console writes and reads. */
static struct {
	bool serial_out, serial_in;	/* a UART answered, and console has serial */
	bool screen, kbd;
	uint64_t next_flush;		/* TSC before which a running command does not redraw */
} con = { .serial_out = true, .serial_in = true };

/* The output lock: one LP's line at a time, retaken by its owner. */
static struct {
	volatile uint32_t owner;	/* LP index + 1; 0 = free */
	unsigned depth;			/* nesting of the owner */
} out_lock;

/* Bytes the Ctrl-C poll (console_interrupted) read past, kept for the reader. */
static struct {
	unsigned char buf[CONSOLE_RX_RING];
	unsigned head, tail;		/* head: next to read; tail: next to write */
} rx;

bool console_init(uint16_t port, uint32_t baud)
{
	bool ok = serial_init(port, baud);

	con.serial_out = con.serial_in = ok;
	return ok;
}

void console_use(bool serial, bool screen, bool keyboard)
{
	con.serial_out = con.serial_out && serial;
	con.serial_in = con.serial_in && serial;
	con.screen = screen;
	con.kbd = keyboard;
}

bool console_has_serial(void)
{
	return con.serial_out;
}

static void console_lock(void)
{
	uint32_t me = percpu_this()->index + 1, free_ = 0;

	if (__atomic_load_n(&out_lock.owner, __ATOMIC_ACQUIRE) == me) {
		out_lock.depth++;
		return;
	}
	for (unsigned spins = 0; spins < CONSOLE_SPIN_MAX; spins++) {
		free_ = 0;
		if (__atomic_compare_exchange_n(&out_lock.owner, &free_, me, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			break;
		cpu_pause();
	}
	__atomic_store_n(&out_lock.owner, me, __ATOMIC_RELAXED);	/* taken, or stolen from a dead LP */
	out_lock.depth = 1;
}

static void console_unlock(void)
{
	if (--out_lock.depth == 0)
		__atomic_store_n(&out_lock.owner, 0, __ATOMIC_RELEASE);
}

static void console_putc_locked(char c)
{
	if (con.serial_out) {
		if (c == '\n')
			serial_putc('\r');
		serial_putc(c);
	}
	if (con.screen)
		screen_putc(c);
}

/*
 * Draw the screen. A running command redraws again only after
 * SCREEN_FLUSH_TSC or eight times what this redraw took, whichever is
 * longer: a full redraw of a large framebuffer is a million pixel writes,
 * slow where the firmware left it uncached, and must not eat more than
 * about a ninth of a long command's time.
 */
void console_flush(void)
{
	uint64_t t0, cost;

	if (!con.screen)
		return;
	t0 = rdtsc();
	console_lock();
	screen_flush();
	console_unlock();
	cost = rdtsc() - t0;
	con.next_flush = rdtsc() + (cost * 8 > SCREEN_FLUSH_TSC ? cost * 8 : SCREEN_FLUSH_TSC);
}

/* One byte from the UART or the keyboard, or -1. */
static int console_rx_nowait(void)
{
	int c = con.serial_in ? serial_getc_nowait() : -1;

	if (c < 0 && con.kbd)
		c = kbd_getc_nowait();
	return c;
}

void console_putc(char c)
{
	console_lock();
	console_putc_locked(c);
	console_unlock();
}

void console_write(const char *s, size_t n)
{
	console_lock();
	while (n--)
		console_putc_locked(*s++);
	console_unlock();
}

static void console_out(void *ctx, char c)
{
	(void)ctx;
	console_putc_locked(c);
}

int kvprintf(const char *fmt, va_list ap)
{
	int n;

	console_lock();
	n = kvprintf_cb(console_out, NULL, fmt, ap);
	console_unlock();
	return n;
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

	if (rx.head != rx.tail) {
		c = rx.buf[rx.head % CONSOLE_RX_RING];
		rx.head++;
		return c;
	}
	console_flush();
	while ((c = console_rx_nowait()) < 0)
		;
	return c;
}

int console_getc_until(uint64_t tsc_deadline)
{
	int c;

	if (rx.head != rx.tail) {
		c = rx.buf[rx.head % CONSOLE_RX_RING];
		rx.head++;
		return c;
	}
	console_flush();
	while ((c = console_rx_nowait()) < 0)
		if (rdtsc() >= tsc_deadline)
			return -1;
	return c;
}

bool console_poll_interrupt(void)
{
	if (con.screen && rdtsc() >= con.next_flush)
		console_flush();
	return console_poll_ctrl_c();
}

bool console_poll_ctrl_c(void)
{
	bool seen = false;
	int c;

	while ((c = console_rx_nowait()) >= 0) {
		if (c == CTRL_C) {
			seen = true;
			continue;
		}
		if (rx.tail - rx.head < CONSOLE_RX_RING)
			rx.buf[rx.tail++ % CONSOLE_RX_RING] = (unsigned char)c;
	}
	return seen;
}
