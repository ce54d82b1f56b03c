/*
 * console.h - the kernel console: the serial port, CRLF line ends, kprintf.
 */
#ifndef NBPROF_ARCH_X86_CONSOLE_H
#define NBPROF_ARCH_X86_CONSOLE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/printf.h"

/*
 * Bring up the UART; false when no UART answers at port (COM1 is kept then,
 * and until a later call succeeds the serial port is not used at all).
 */
bool console_init(uint16_t port, uint32_t baud);
/* Which sides the console uses (nbprof.cfg console =): serial only if a UART answered. */
void console_use(bool serial, bool screen, bool keyboard);
bool console_has_serial(void);
/* Draw pending screen output now (before a halt; waiting for input does it anyway). */
void console_flush(void);
void console_putc(char c);			/* "\n" goes out as CR LF */
void console_write(const char *s, size_t n);
int kprintf(const char *fmt, ...) KPRINTF_FORMAT(1, 2);
int kvprintf(const char *fmt, va_list ap);

/* Next input byte, waiting for it. */
int console_getc(void);
/* Next input byte, or -1 once the TSC has reached tsc_deadline. */
int console_getc_until(uint64_t tsc_deadline);

/*
 * Poll the UART while a command runs: true when Ctrl-C (03H) arrived. Other
 * bytes are kept, in order, for console_getc().
 */
bool console_poll_interrupt(void);
/*
 * The same without the screen's due redraw: for polls inside a count (the
 * watchdog tick, the stepper), where a redraw - about 4000 writes to VGA
 * text memory - would be counted as the workload's kernel time (G12).
 */
bool console_poll_ctrl_c(void);

#endif
