/*
 * p4_text.h - bounded text building for messages and listings.
 *
 * A struct p4_text appends formatted pieces into a caller's buffer and
 * always stays NUL-terminated; output past the end is dropped (and counted
 * in `want`, so a test can see a truncation).
 */
#ifndef NBPROF_PMU_P4_TEXT_H
#define NBPROF_PMU_P4_TEXT_H

#include <stddef.h>

#include "lib/printf.h"

struct p4_text {
	char *buf;
	size_t size;
	size_t len;	/* characters stored, < size */
	size_t want;	/* characters asked for */
};

void p4_text_init(struct p4_text *t, char *buf, size_t size);
void p4_text_add(struct p4_text *t, const char *fmt, ...) KPRINTF_FORMAT(2, 3);

/* Case-insensitive: does s[0..len) contain the NUL-terminated needle? */
int p4_text_contains(const char *s, size_t len, const char *needle);

#endif
