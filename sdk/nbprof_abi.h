/*
 * nbprof_abi.h - the contract between nbprof and a program run by it: the
 * gate a program calls through, its call numbers and their limits, and the
 * symbol the start file marks counted programs with (the nbprof SDK).
 *
 * One place for these numbers: programs get them through nbprof.h, the
 * start file (crt0.S) includes this file, and so does the kernel
 * (arch/x86/user.h, workload/program.h). Only #defines, so that C and
 * assembly can both include it; it includes nothing.
 *
 * A call: `int $NB_CALL_VECTOR` (a DPL-3 gate, so ring 3 may use it) with
 * RAX = the call number, the arguments in RDI and RSI and the result in RAX
 * (EAX, EDI, ESI in i386 code, with the same numbers). Exit needs no call:
 * the start file returns to the kernel's runner.
 */
#ifndef NBPROF_SDK_ABI_H
#define NBPROF_SDK_ABI_H

#define NB_CALL_VECTOR	0x82

/* Write RSI bytes at RDI to nbprof's console: RSI, or -1 when they are not readable. */
#define NB_CALL_WRITE	1
#define NB_WRITE_MAX	4096	/* bytes in one write call; more: -1 */

/* RDI 1: counting on, 0: counting off (the markers nb_count_start/stop); 0. */
#define NB_CALL_COUNT	2

/*
 * The label crt0.S puts on nb_count_start. A program whose symbol table has
 * it (it calls nb_count_start, so the linker kept the function) starts with
 * counting off.
 */
#define NB_COUNT_REGION	nb_count_region

/* A macro's value as a C string: NB_STRINGIFY(NB_CALL_VECTOR) is "0x82". */
#define NB_STRINGIFY_(x)	#x
#define NB_STRINGIFY(x)		NB_STRINGIFY_(x)

#endif
