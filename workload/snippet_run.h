/*
 * snippet_run.h - the kernel side of snippet benchmarks: put generated code
 * into the snippet area so the `snippet` workload runs it.
 */
#ifndef NBPROF_PROF_SNIPPET_RUN_H
#define NBPROF_PROF_SNIPPET_RUN_H

#include <stddef.h>
#include <stdint.h>

/* Copy code[0..n) to the snippet area. 0, or -1 with err when it does not fit. */
int snippet_load(const uint8_t *code, size_t n, char *err, size_t errlen);

/* The snippet workload's entry point (the area's first byte). */
uintptr_t snippet_entry(void);

#endif
