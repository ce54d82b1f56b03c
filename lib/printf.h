/*
 * printf.h - formatted output for the kernel and the shell, without libc.
 *
 * One formatter (kvprintf_cb) writes characters through a callback; the
 * buffer variants are built on it. Supported: conversions d i u o x X c s p %,
 * flags - 0 + space #, field width and .precision (both may be *), and the
 * length modifiers hh h l ll z j t. The rules follow C11 7.21.6.1, so the
 * host's snprintf is the test oracle; %p prints 0x<hex> ("(nil)" for NULL,
 * as glibc does) and %s of NULL prints "(null)". An unknown conversion is
 * copied to the output as written.
 *
 * Portable: compiled freestanding in the kernel and on the host for tests.
 */
#ifndef NBPROF_LIB_PRINTF_H
#define NBPROF_LIB_PRINTF_H

#include <stdarg.h>
#include <stddef.h>

#define KPRINTF_FORMAT(fmt_idx, arg_idx) __attribute__((format(printf, fmt_idx, arg_idx)))

/* Format into out(ctx, c), one character at a time; returns the count written. */
int kvprintf_cb(void (*out)(void *ctx, char c), void *ctx, const char *fmt, va_list ap);

/*
 * snprintf semantics: writes at most n - 1 characters plus a NUL (nothing when
 * n == 0) and returns the length the whole output would have had.
 */
int kvsnprintf(char *buf, size_t n, const char *fmt, va_list ap);
int ksnprintf(char *buf, size_t n, const char *fmt, ...) KPRINTF_FORMAT(3, 4);

#endif
