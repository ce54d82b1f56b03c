/*
 * nbprof.h - what a program run by nbprof may call (the nbprof SDK).
 *
 * A program is a static, position-independent executable built on the
 * host with this header, crt0.S and program.ld (see
 * docs/guide/programs.md): x86-64 for the 64-bit kernel, i386 (nbprof-cc -m32)
 * for the 32-bit one. nbprof calls its entry like a C function,
 * main(argc, argv) under the System V ABI; returning from main, or
 * nb_exit(), ends the run with that status. There is no C library: the
 * calls below are all the kernel offers, through the DPL-3 gate
 * `int 0x82` (nbprof_abi.h has the gate and its call numbers), so they
 * work in ring 3 (the default) and in ring 0 (`--ring 0`), and
 * nb_printf, which formats in the program and writes through that gate.
 */
#ifndef NBPROF_SDK_H
#define NBPROF_SDK_H

#include <stdarg.h>
#include <stdint.h>

#include "nbprof_abi.h"

static inline long nb_call(long nr, long a, long b)
{
	long r;

	__asm__ volatile("int $" NB_STRINGIFY(NB_CALL_VECTOR)
			 : "=a"(r) : "a"(nr), "D"(a), "S"(b) : "memory");
	return r;
}

/* Write len bytes (at most NB_WRITE_MAX) to nbprof's console; len, or -1 when buf is not readable. */
static inline long nb_write(const void *buf, unsigned long len)
{
	return nb_call(NB_CALL_WRITE, (long)buf, (long)len);
}

/* Write a NUL-terminated string. */
static inline long nb_puts(const char *s)
{
	unsigned long n = 0;

	while (s[n])
		n++;
	return nb_write(s, n);
}

/*
 * Formatted output (sdk/nbprintf.c, linked by nbprof-cc): printf's
 * conversions d i u x X o c s p % with flags - 0 + space #, width, precision
 * and the length modifiers hh h l ll z j t; no floating point. nb_printf
 * writes to nbprof's console and returns the characters written;
 * nb_snprintf writes at most n - 1 of them and a NUL into buf and returns
 * the length the whole text has, as snprintf does.
 */
int nb_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int nb_vprintf(const char *fmt, va_list ap);
int nb_snprintf(char *buf, unsigned long n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int nb_vsnprintf(char *buf, unsigned long n, const char *fmt, va_list ap);

/* The time-stamp counter (RDTSC; not serialising). */
static inline uint64_t nb_rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

/*
 * Counting markers (crt0.S). A program that calls nb_count_start() (so the
 * linker keeps it and its symbol nb_count_region) is counted by stat and
 * record only between nb_count_start() and nb_count_stop(): counting starts
 * switched off. Each call is a few instructions of its own (the call, a
 * mov or two, the int 0x82 and the ret), all outside the counted region
 * when markers bracket it: start's ret and stop's first instructions count.
 */
void nb_count_start(void);
void nb_count_stop(void);

/* End the run now with status, from any depth (crt0.S). */
void nb_exit(int status) __attribute__((noreturn));

/* The program's entry, called by crt0.S. */
int main(int argc, char **argv);

#endif
