/*
 * nbprof_count.h - counting markers for a program built without the SDK:
 * a static Linux program (`musl-gcc -static`, `gcc -static`) that wants
 * nbprof's stat and record to count only part of it. Include it (with
 * `-I sdk`) and bracket the code to count:
 *
 *	nb_count_start();
 *	work();
 *	nb_count_stop();
 *
 * Including it defines the symbol NB_COUNT_REGION (nbprof_abi.h), which
 * tells the kernel to start the program with counting off; without this
 * header a Linux program is counted whole, from its first instruction to
 * its exit. Each marker is one `int 0x82` (the SDK's call gate, nbprof_abi.h)
 * with its two register loads, inlined where it is called. Only the
 * markers: a program built this way makes Linux system calls for
 * everything else (docs/guide/programs.md).
 */
#ifndef NBPROF_SDK_COUNT_H
#define NBPROF_SDK_COUNT_H

#include "nbprof_abi.h"

/* The region label, weak so that every file may include this header. */
__asm__(".pushsection .text." NB_STRINGIFY(NB_COUNT_REGION) ",\"ax\",@progbits\n\t"
	".weak " NB_STRINGIFY(NB_COUNT_REGION) "\n\t"
	".type " NB_STRINGIFY(NB_COUNT_REGION) ", @function\n"
	NB_STRINGIFY(NB_COUNT_REGION) ":\n\t"
	"ret\n\t"
	".size " NB_STRINGIFY(NB_COUNT_REGION) ", 1\n\t"
	".popsection");

static inline void nb_count_mark(unsigned long on)
{
	unsigned long call = NB_CALL_COUNT;

	__asm__ volatile("int $" NB_STRINGIFY(NB_CALL_VECTOR)
			 : "+a"(call), "+D"(on) : : "memory");
}

/* Counting on: stat and record count from here. */
static inline void nb_count_start(void)
{
	nb_count_mark(1);
}

/* Counting off. */
static inline void nb_count_stop(void)
{
	nb_count_mark(0);
}

#endif
