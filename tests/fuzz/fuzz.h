/*
 * fuzz.h - what the libFuzzer harnesses in tests/fuzz/ share.
 *
 * Each harness is one file defining LLVMFuzzerTestOneInput over one parser
 * of the portable sources (the Makefile's PORTABLE_SRCS, built with clang,
 * ASan and UBSan into build/fuzz/). A harness checks the parser's stated
 * contract with fuzz_check(), so a wrong answer fails like a crash does.
 * Input copies are heap blocks of the exact size, so an over-read is an
 * ASan report, not a silent read of the next byte.
 */
#ifndef NBPROF_TESTS_FUZZ_FUZZ_H
#define NBPROF_TESTS_FUZZ_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmu/p4_caps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken contract: print what and abort, which libFuzzer reports as a crash. */
#define fuzz_check(cond)							\
	do {									\
		if (!(cond)) {							\
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,	\
				__LINE__, #cond);				\
			abort();						\
		}								\
	} while (0)

/* data[0..size) as a NUL-terminated heap string (cut at the first NUL). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (s == NULL)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* The CPU models nbprof knows (PMU reference 1.2), picked by one input byte. */
static inline void fuzz_caps(uint8_t pick, struct p4_caps *caps)
{
	static const uint8_t models[] = { 0, 1, 2, 3, 4, 6 };
	struct p4_sig sig = { 0x0f, models[pick % sizeof(models)], (uint8_t)(pick >> 4) };

	if (!p4_caps_lookup(&sig, caps))
		abort();
}

#endif
