/*
 * test_printf.c - lib/printf.c against the host C library's snprintf.
 *
 * Both follow C11 7.21.6.1, so glibc is the oracle for every supported
 * conversion, flag, width, precision and length modifier. The few
 * behaviours C leaves open (%p, %s of NULL, unknown conversions) are checked
 * against printf.h's own description.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "lib/printf.h"

/* The tests use flag combinations C defines but GCC flags as redundant. */
#pragma GCC diagnostic ignored "-Wformat"
#pragma GCC diagnostic ignored "-Wformat-truncation"
#pragma GCC diagnostic ignored "-Wformat-overflow"

/* Format with both, compare text and return value; evaluates the arguments twice. */
#define SAME(...)							\
	do {								\
		char want_[256], got_[256];				\
		int wn_ = snprintf(want_, sizeof(want_), __VA_ARGS__);	\
		int gn_ = ksnprintf(got_, sizeof(got_), __VA_ARGS__);	\
		assert_string_equal(got_, want_);			\
		assert_int_equal(gn_, wn_);				\
	} while (0)

static void signed_decimal(void **state)
{
	SAME("%d", 0);
	SAME("%d", 42);
	SAME("%d", -42);
	SAME("%i", INT_MAX);
	SAME("%i", INT_MIN);
	SAME("[%5d]", -42);
	SAME("[%-5d]", 42);
	SAME("[%05d]", -42);
	SAME("[%+d] [%+d]", 5, -5);
	SAME("[% d] [% d]", 5, -5);
	SAME("[%+ d]", 5);
	SAME("[%.3d]", 7);
	SAME("[%.3d]", -7);
	SAME("[%8.3d]", -7);
	SAME("[%-8.3d]", 7);
	SAME("[%08.3d]", 7);	/* 0 flag ignored with a precision */
	SAME("[%.0d]", 0);
	SAME("[%5.0d]", 0);
	SAME("[%+.0d]", 0);
	SAME("[%-05d]", 3);	/* - beats 0 */
}

static void length_modifiers(void **state)
{
	SAME("%hhd %hhu %hhx", (signed char)-1, (unsigned char)255, (unsigned char)0xab);
	SAME("%hhd", 300);	/* converted to signed char */
	SAME("%hd %hu", (short)-32768, (unsigned short)65535);
	SAME("%hd", 70000);
	SAME("%ld %lu", LONG_MIN, ULONG_MAX);
	SAME("%lld %llu %llx", LLONG_MIN, ULLONG_MAX, 0x0123456789abcdefULL);
	SAME("%zu %zx %zd", (size_t)SIZE_MAX, (size_t)0x1000, (ptrdiff_t)-5);
	SAME("%jd %ju", INTMAX_MIN, UINTMAX_MAX);
	SAME("%td %tx", (ptrdiff_t)-123456789, (ptrdiff_t)0xbeef);
}

static void unsigned_and_hex(void **state)
{
	SAME("%u", 0u);
	SAME("%u", UINT_MAX);
	SAME("%x %X", 0xdeadbeefu, 0xdeadbeefu);
	SAME("[%#x] [%#X] [%#x]", 0x1a0u, 0x1a0u, 0u);
	SAME("[%#10x] [%#-10x] [%#010x]", 0x1a0u, 0x1a0u, 0x1a0u);
	SAME("[%#.6x]", 0x1a0u);
	SAME("[%016llX]", 0x1ULL);
	SAME("[%08X]", 0xf41u);
	SAME("[%.0x] [%#.0x]", 0u, 0u);
	SAME("%o %#o %#o %#.0o", 8u, 8u, 0u, 0u);
	SAME("[%#5o] [%#.4o]", 7u, 7u);
	SAME("%llo", ULLONG_MAX);
}

static void chars_and_strings(void **state)
{
	SAME("%c%c%c", 'a', 'b', 'c');
	SAME("[%3c] [%-3c]", 'x', 'y');
	SAME("%s", "");
	SAME("[%s]", "hello");
	SAME("[%10s] [%-10s]", "hi", "hi");
	SAME("[%.2s] [%.0s] [%.10s]", "hello", "hello", "hello");
	SAME("[%8.3s]", "hello");
	SAME("%%");
	SAME("100%% done");
	SAME("a%sb%dc%xd", "-", 1, 2u);
}

static void star_width_and_precision(void **state)
{
	SAME("[%*d]", 6, 42);
	SAME("[%*d]", -6, 42);	/* negative width: left-justified */
	SAME("[%.*d]", 4, 42);
	SAME("[%.*d]", -1, 42);	/* negative precision: as if omitted */
	SAME("[%*.*s]", 8, 3, "abcdef");
	SAME("[%-*s|]", 5, "ab");
	SAME("[%0*x]", 8, 0xf41u);
}

static void pointers(void **state)
{
	int x;

	SAME("%p", (void *)&x);
	SAME("[%20p] [%-20p]", (void *)0x1234, (void *)0x1234);
	SAME("%p", (void *)NULL);
}

static void null_string_prints_null(void **state)
{
	char buf[32];
	const char *nul = NULL;
	const char *fmt = "[%s]";	/* not a literal: %s of NULL is undefined in C */

	assert_int_equal(ksnprintf(buf, sizeof(buf), fmt, nul), 8);
	assert_string_equal(buf, "[(null)]");
}

static void unknown_conversion_copied(void **state)
{
	char buf[32];
	const char *fmt = "a%qb%5wc";

	ksnprintf(buf, sizeof(buf), fmt, 0);
	assert_string_equal(buf, "a%qb%5wc");
	fmt = "tail%";
	ksnprintf(buf, sizeof(buf), fmt, 0);
	assert_string_equal(buf, "tail%");
	fmt = "tail%-08l";
	ksnprintf(buf, sizeof(buf), fmt, 0);
	assert_string_equal(buf, "tail%-08l");
}

/* snprintf semantics of the size argument and the return value. */
static void truncation(void **state)
{
	char want[8], got[8];
	int wn, gn;

	memset(got, 'Z', sizeof(got));
	gn = ksnprintf(got, 5, "%s-%d", "abcdef", 123);
	wn = snprintf(want, 5, "%s-%d", "abcdef", 123);
	assert_int_equal(gn, wn);
	assert_int_equal(gn, 10);
	assert_string_equal(got, want);
	assert_int_equal(got[5], 'Z');	/* nothing beyond n */

	memset(got, 'Z', sizeof(got));
	assert_int_equal(ksnprintf(got, 0, "%d", 12345), 5);
	assert_int_equal(got[0], 'Z');
	assert_int_equal(ksnprintf(NULL, 0, "%s", "abc"), 3);

	assert_int_equal(ksnprintf(got, 1, "xyz"), 3);
	assert_string_equal(got, "");
	assert_int_equal(ksnprintf(got, 4, "xyz"), 3);
	assert_string_equal(got, "xyz");
}

struct sink {
	char buf[64];
	size_t n;
};

static void sink_put(void *ctx, char c)
{
	struct sink *s = ctx;

	if (s->n < sizeof(s->buf) - 1)
		s->buf[s->n++] = c;
}

static int cb_printf(struct sink *s, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = kvprintf_cb(sink_put, s, fmt, ap);
	va_end(ap);
	s->buf[s->n] = '\0';
	return n;
}

static void callback_counts_characters(void **state)
{
	struct sink s = { .n = 0 };

	assert_int_equal(cb_printf(&s, "MSR %XH = %016llXH", 0x1a0u, 1ULL), 28);
	assert_string_equal(s.buf, "MSR 1A0H = 0000000000000001H");
}

/* A sweep of flag/width/precision combinations over awkward values. */
static void sweep_against_libc(void **state)
{
	static const char *const flags[] = { "", "-", "0", "+", " ", "#", "-+", "0 ", "#0", "-#" };
	static const char *const widths[] = { "", "1", "7", "21" };
	static const char *const precs[] = { "", ".0", ".1", ".5", ".22" };
	static const char convs[] = "diuxXo";
	static const long long values[] = { 0, 1, -1, 9, 10, -10, 255, 4096, 0x7fffffffLL,
					    -0x80000000LL };
	char fmt[32], want[128], got[128];

	for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++)
		for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); w++)
			for (size_t p = 0; p < sizeof(precs) / sizeof(precs[0]); p++)
				for (size_t c = 0; c + 1 < sizeof(convs); c++)
					for (size_t v = 0; v < sizeof(values) / sizeof(values[0]); v++) {
						snprintf(fmt, sizeof(fmt), "[%%%s%s%sll%c]", flags[f],
							 widths[w], precs[p], convs[c]);
						int wn = snprintf(want, sizeof(want), fmt, values[v]);
						int gn = ksnprintf(got, sizeof(got), fmt, values[v]);

						if (strcmp(want, got) != 0 || wn != gn)
							fail_msg("format %s value %lld: want '%s' got '%s'",
								 fmt, values[v], want, got);
					}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(signed_decimal),
		cmocka_unit_test(length_modifiers),
		cmocka_unit_test(unsigned_and_hex),
		cmocka_unit_test(chars_and_strings),
		cmocka_unit_test(star_width_and_precision),
		cmocka_unit_test(pointers),
		cmocka_unit_test(null_string_prints_null),
		cmocka_unit_test(unknown_conversion_copied),
		cmocka_unit_test(truncation),
		cmocka_unit_test(callback_counts_characters),
		cmocka_unit_test(sweep_against_libc),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
