/*
 * test_qr.c - lib/qr.c, lib/base45.c and lib/deflate.c on their own:
 * the capacities ISO/IEC 18004 Table 7 lists, the function patterns and
 * format information where the standard puts them, RFC 9285's base45
 * examples both ways, and Adler-32 and the zlib header. That the symbols
 * and streams are read back by real decoders (zbar, Python's zlib) is
 * tests/tools/test_qr.py.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "lib/base45.h"
#include "lib/deflate.h"
#include "lib/qr.h"

static struct qr q;

static void capacities_of_table_7(void **state)
{
	/* version, alphanumeric L, bytes L, alphanumeric M, bytes M */
	static const unsigned t[][5] = {
		{ 1, 25, 17, 20, 14 }, { 2, 47, 32, 38, 26 }, { 6, 195, 134, 154, 106 },
		{ 7, 224, 154, 178, 122 }, { 10, 395, 271, 311, 213 }, { 20, 1249, 858, 970, 666 },
		{ 40, 4296, 2953, 3391, 2331 },
	};

	(void)state;
	for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		assert_int_equal(qr_capacity_alnum((int)t[i][0], QR_ECC_L), t[i][1]);
		assert_int_equal(qr_capacity_bytes((int)t[i][0], QR_ECC_L), t[i][2]);
		assert_int_equal(qr_capacity_alnum((int)t[i][0], QR_ECC_M), t[i][3]);
		assert_int_equal(qr_capacity_bytes((int)t[i][0], QR_ECC_M), t[i][4]);
	}
	assert_int_equal(qr_capacity_alnum(0, QR_ECC_L), 0);
	assert_int_equal(qr_capacity_bytes(41, QR_ECC_M), 0);
}

static void smallest_version_that_holds_the_text(void **state)
{
	char text[400];

	(void)state;
	memset(text, 'A', sizeof(text));
	assert_int_equal(qr_encode(&q, text, 20, QR_ECC_M, 1, 40, -1), 0);
	assert_int_equal(q.version, 1);
	assert_int_equal(qr_encode(&q, text, 21, QR_ECC_M, 1, 40, -1), 0);
	assert_int_equal(q.version, 2);
	assert_int_equal(qr_encode(&q, text, 21, QR_ECC_M, 5, 40, -1), 0);
	assert_int_equal(q.version, 5);
	text[0] = 'a';		/* not alphanumeric: byte mode, 14 bytes in version 1-M */
	assert_int_equal(qr_encode(&q, text, 15, QR_ECC_M, 1, 40, -1), 0);
	assert_int_equal(q.version, 2);
	assert_int_equal(qr_encode(&q, text, 400, QR_ECC_M, 1, 9, -1), -1);
	assert_int_equal(qr_encode(&q, text, 10, QR_ECC_M, 0, 9, -1), -1);
	assert_int_equal(qr_encode(&q, text, 10, QR_ECC_M, 1, 9, 8), -1);
	assert_true(qr_is_alnum("NBQ 1/2 $%*+-.:", 15));
	assert_false(qr_is_alnum("nbq", 3));
}

/* The finder pattern's rings: dark, light, dark 3 x 3 (6.3.3). */
static void assert_finder(int cx, int cy)
{
	for (int d = -3; d <= 3; d++) {
		assert_true(qr_module(&q, cx + d, cy - 3));
		assert_true(qr_module(&q, cx - 3, cy + d));
		assert_true(qr_module(&q, cx + d, cy + 3));
		assert_true(qr_module(&q, cx + 3, cy + d));
	}
	for (int d = -2; d <= 2; d++) {
		assert_false(qr_module(&q, cx + d, cy - 2));
		assert_false(qr_module(&q, cx + d, cy + 2));
	}
	for (int dy = -1; dy <= 1; dy++)
		for (int dx = -1; dx <= 1; dx++)
			assert_true(qr_module(&q, cx + dx, cy + dy));
}

static void function_patterns(void **state)
{
	(void)state;
	for (int v = 1; v <= 40; v += 13) {
		assert_int_equal(qr_encode(&q, "NBPROF", 6, QR_ECC_L, v, v, -1), 0);
		assert_int_equal(q.size, 17 + 4 * v);
		assert_finder(3, 3);
		assert_finder(q.size - 4, 3);
		assert_finder(3, q.size - 4);
		for (int i = 8; i < q.size - 8; i++) {
			assert_int_equal(qr_module(&q, i, 6), i % 2 == 0);
			assert_int_equal(qr_module(&q, 6, i), i % 2 == 0);
		}
		assert_true(qr_module(&q, 8, q.size - 8));	/* the dark module */
		assert_false(qr_module(&q, -1, 0));
		assert_false(qr_module(&q, q.size, 0));
	}
}

/* The format information read back from beside the top left finder, bit 14 first. */
static unsigned format_read(void)
{
	unsigned f = 0;

	for (int i = 0; i <= 5; i++)
		f |= (unsigned)qr_module(&q, 8, i) << i;
	f |= (unsigned)qr_module(&q, 8, 7) << 6 | (unsigned)qr_module(&q, 8, 8) << 7 |
	     (unsigned)qr_module(&q, 7, 8) << 8;
	for (int i = 9; i < 15; i++)
		f |= (unsigned)qr_module(&q, 14 - i, 8) << i;
	return f;
}

static void format_information_of_annex_c(void **state)
{
	(void)state;
	/* Annex C: level M (00) mask 0 is 101010000010010 (the XOR mask alone) */
	assert_int_equal(qr_encode(&q, "A", 1, QR_ECC_M, 1, 1, 0), 0);
	assert_int_equal(format_read(), 0x5412);
	/* level L (01), mask 4: 110011000101111 */
	assert_int_equal(qr_encode(&q, "A", 1, QR_ECC_L, 1, 1, 4), 0);
	assert_int_equal(format_read(), 0x662f);
	assert_int_equal(q.mask, 4);
}

static void base45_rfc9285_examples(void **state)
{
	static const char *const plain[] = { "AB", "Hello!!", "base-45", "ietf!", "" };
	static const char *const coded[] = { "BB8", "%69 VD92EX0", "UJCLQE7W581", "QED8WEX0", "" };
	char out[32];
	uint8_t back[32];

	(void)state;
	for (int i = 0; i < 5; i++) {
		size_t n = strlen(plain[i]);

		assert_int_equal(base45_encode(out, (const uint8_t *)plain[i], n), strlen(coded[i]));
		assert_int_equal(BASE45_LEN(n), strlen(coded[i]));
		assert_string_equal(out, coded[i]);
		assert_int_equal(base45_decode(coded[i], strlen(coded[i]), back, sizeof(back)),
				 (long)n);
		assert_memory_equal(back, plain[i], n);
	}
	/* RFC 9285 section 6: "GGW" is 65535 + 1 */
	assert_int_equal(base45_decode("GGW", 3, back, sizeof(back)), -1);
	assert_int_equal(base45_decode("FGW", 3, back, sizeof(back)), 2);
	assert_int_equal(base45_decode("K1", 2, back, sizeof(back)), 1);	/* 'A' */
	assert_int_equal(back[0], 'A');
	assert_int_equal(base45_decode("ZZ", 2, back, sizeof(back)), -1);	/* 1610 > FFH */
	assert_int_equal(base45_decode("BB8B", 4, back, sizeof(back)), -1);
	assert_int_equal(base45_decode("bb8", 3, back, sizeof(back)), -1);
	assert_int_equal(base45_decode("BB8BB8", 6, back, 3), -1);
}

static void adler32_and_zlib_header(void **state)
{
	static struct deflate_work w;
	static const uint8_t text[] = "Wikipedia";
	uint8_t out[64];
	size_t n;

	(void)state;
	assert_int_equal(adler32(text, 9), 0x11e60398);		/* RFC 1950's example value */
	assert_int_equal(adler32(text, 0), 1);
	n = zlib_compress(&w, text, 9, out, sizeof(out));
	assert_true(n > 6);
	assert_int_equal(out[0], 0x78);
	assert_int_equal((out[0] << 8 | out[1]) % 31, 0);
	assert_int_equal(out[2] & 7, 3);			/* BFINAL, fixed codes */
	assert_int_equal(out[n - 4] << 24 | out[n - 3] << 16 | out[n - 2] << 8 | out[n - 1],
			 0x11e60398);
	assert_int_equal(zlib_compress(&w, text, 9, out, n - 1), 0);	/* does not fit */
}

/* Kraft's sum of the lengths, in units of 2^-15: 32768 when the code is complete. */
static unsigned kraft(const struct deflate_code *c, unsigned n)
{
	unsigned sum = 0;

	for (unsigned i = 0; i < n; i++)
		if (c->len[i])
			sum += 32768u >> c->len[i];
	return sum;
}

static void huffman_lengths_are_limited_and_complete(void **state)
{
	static struct deflate_work w;
	static struct deflate_code c;
	uint32_t freq[30], f[30];
	unsigned max = 0;

	(void)state;
	/* Fibonacci counts: the Huffman tree of 30 symbols is 29 deep */
	freq[0] = freq[1] = 1;
	for (unsigned i = 2; i < 30; i++)
		freq[i] = freq[i - 1] + freq[i - 2];
	memcpy(f, freq, sizeof(f));
	deflate_lengths(&w, f, 30, 15, &c);
	for (unsigned i = 0; i < 30; i++) {
		assert_true(c.len[i] >= 1 && c.len[i] <= 15);
		max = c.len[i] > max ? c.len[i] : max;
		if (i)			/* a more frequent symbol never has a longer code */
			assert_true(c.len[i] <= c.len[i - 1]);
	}
	assert_int_equal(max, 15);
	assert_int_equal(kraft(&c, 30), 32768);
	/* canonical: codes of one length count up in symbol order, and none is the prefix of another */
	for (unsigned i = 0; i < 30; i++)
		for (unsigned j = 0; j < 30; j++)
			if (i != j && c.len[i] <= c.len[j])
				assert_int_not_equal(c.bits[j] >> (c.len[j] - c.len[i]), c.bits[i]);
	/* the code length code's limit, 7 */
	memcpy(f, freq, sizeof(f));
	deflate_lengths(&w, f, 19, 7, &c);
	for (unsigned i = 0; i < 19; i++)
		assert_true(c.len[i] >= 1 && c.len[i] <= 7);
	assert_int_equal(kraft(&c, 19), 32768);
	/* one symbol used: a second gets a code, so that the code is complete */
	memset(f, 0, sizeof(f));
	f[7] = 100;
	deflate_lengths(&w, f, 30, 15, &c);
	assert_int_equal(c.len[7], 1);
	assert_int_equal(kraft(&c, 30), 32768);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(capacities_of_table_7),
		cmocka_unit_test(smallest_version_that_holds_the_text),
		cmocka_unit_test(function_patterns),
		cmocka_unit_test(format_information_of_annex_c),
		cmocka_unit_test(base45_rfc9285_examples),
		cmocka_unit_test(adler32_and_zlib_header),
		cmocka_unit_test(huffman_lengths_are_limited_and_complete),
	};

	return cmocka_run_group_tests_name("qr", tests, NULL, NULL);
}
