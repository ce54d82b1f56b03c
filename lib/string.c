/*
 * string.c - freestanding memory and string functions.
 *
 * gcc emits calls to memcpy/memset/memmove/memcmp for struct copies and
 * initialisers even with -ffreestanding, so these must exist. The loops are
 * compiled without loop-pattern distribution: otherwise gcc would turn the
 * body of memset into a call to memset.
 */
#include <stdint.h>

#include "lib/string.h"

#define NO_BUILTIN_LOOPS __attribute__((optimize("no-tree-loop-distribute-patterns")))

/* REP MOVSD, then REP MOVSB for the tail (SDM Vol. 2B, MOVS), as memset below. */
void *memcpy(void *dst, const void *src, size_t n)
{
	void *d = dst;
	const void *s = src;
	size_t words = n / 4, bytes = n % 4;

	__asm__ volatile("rep movsl" : "+D"(d), "+S"(s), "+c"(words) : : "memory");
	__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(bytes) : : "memory");
	return dst;
}

NO_BUILTIN_LOOPS void *memmove(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	if (d == s || n == 0)
		return dst;
	if ((uintptr_t)d < (uintptr_t)s) {
		while (n--)
			*d++ = *s++;
	} else {
		while (n--)
			d[n] = s[n];
	}
	return dst;
}

/*
 * REP STOSD, then REP STOSB for the tail (SDM Vol. 2B, STOS; the ABI keeps
 * DF clear): a page is 1024 stores, not a loop of 4096, which matters where
 * the model steps kernel code (a counting window zeroes buffers).
 */
void *memset(void *dst, int c, size_t n)
{
	void *d = dst;
	size_t words = n / 4, bytes = n % 4;
	uint32_t v = (uint32_t)(unsigned char)c * UINT32_C(0x01010101);

	__asm__ volatile("rep stosl" : "+D"(d), "+c"(words) : "a"(v) : "memory");
	__asm__ volatile("rep stosb" : "+D"(d), "+c"(bytes) : "a"(v) : "memory");
	return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;

	for (; n; n--, x++, y++)
		if (*x != *y)
			return *x - *y;
	return 0;
}

size_t strlen(const char *s)
{
	const char *p = s;

	while (*p)
		p++;
	return (size_t)(p - s);
}

size_t strnlen(const char *s, size_t max)
{
	size_t n = 0;

	while (n < max && s[n])
		n++;
	return n;
}

int strcmp(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return (unsigned char)*a - (unsigned char)*b;
}

int strncmp(const char *a, const char *b, size_t n)
{
	for (; n; n--, a++, b++) {
		if (*a != *b)
			return (unsigned char)*a - (unsigned char)*b;
		if (!*a)
			break;
	}
	return 0;
}

char *strchr(const char *s, int c)
{
	for (;; s++) {
		if (*s == (char)c)
			return (char *)s;
		if (!*s)
			return NULL;
	}
}

char *strrchr(const char *s, int c)
{
	const char *last = NULL;

	for (;; s++) {
		if (*s == (char)c)
			last = s;
		if (!*s)
			return (char *)last;
	}
}

char *strcpy(char *dst, const char *src)
{
	char *d = dst;

	while ((*d++ = *src++))
		;
	return dst;
}

NO_BUILTIN_LOOPS char *strncpy(char *dst, const char *src, size_t n)
{
	size_t i = 0;

	for (; i < n && src[i]; i++)
		dst[i] = src[i];
	for (; i < n; i++)
		dst[i] = '\0';
	return dst;
}

char *strcat(char *dst, const char *src)
{
	strcpy(dst + strlen(dst), src);
	return dst;
}
