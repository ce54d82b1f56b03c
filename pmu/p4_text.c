/*
 * p4_text.c - bounded appending on top of kvsnprintf (lib/printf.c).
 */
#include <stdarg.h>

#include "pmu/p4_text.h"

void p4_text_init(struct p4_text *t, char *buf, size_t size)
{
	t->buf = buf;
	t->size = size;
	t->len = 0;
	t->want = 0;
	if (size)
		buf[0] = '\0';
}

void p4_text_add(struct p4_text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->size == 0)
		return;
	va_start(ap, fmt);
	n = kvsnprintf(t->buf + t->len, t->size - t->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	t->want += (size_t)n;
	t->len += (size_t)n;
	if (t->len >= t->size)
		t->len = t->size - 1;
}

static int p4_text_lower(int c)
{
	return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c;
}

int p4_text_contains(const char *s, size_t len, const char *needle)
{
	size_t m = 0;

	while (needle[m])
		m++;
	if (m == 0)
		return 1;
	for (size_t i = 0; i + m <= len; i++) {
		size_t j = 0;

		while (j < m && p4_text_lower(s[i + j]) == p4_text_lower(needle[j]))
			j++;
		if (j == m)
			return 1;
	}
	return 0;
}
