/*
 * test_base64.c - lib/base64.c: the RFC 4648 section 10 test vectors both
 * ways, every padding form the decoder must refuse, and a round trip of
 * every length up to 64 bytes of every byte value.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "lib/base64.h"

static const char *const plain[] = { "", "f", "fo", "foo", "foob", "fooba", "foobar" };
static const char *const coded[] = { "", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy" };

static void rfc4648_vectors_encode(void **state)
{
	char out[16];

	(void)state;
	for (int i = 0; i < 7; i++) {
		size_t n = strlen(plain[i]);

		assert_int_equal(base64_encode(out, (const uint8_t *)plain[i], n), strlen(coded[i]));
		assert_int_equal(BASE64_LEN(n), strlen(coded[i]));
		assert_string_equal(out, coded[i]);
	}
}

static void rfc4648_vectors_decode(void **state)
{
	uint8_t out[8];

	(void)state;
	for (int i = 0; i < 7; i++) {
		assert_int_equal(base64_decode(coded[i], out, sizeof(out)), (long)strlen(plain[i]));
		assert_memory_equal(out, plain[i], strlen(plain[i]));
	}
	assert_int_equal(base64_decode("TWFu", out, sizeof(out)), 3);
	assert_memory_equal(out, "Man", 3);
}

static void decode_refuses_what_is_not_base64(void **state)
{
	uint8_t out[8];

	(void)state;
	assert_int_equal(base64_decode("TQ=A", out, sizeof(out)), -1);	/* data after '=' */
	assert_int_equal(base64_decode("T===", out, sizeof(out)), -1);	/* three '=' */
	assert_int_equal(base64_decode("TQ==TWFu", out, sizeof(out)), -1);	/* '=' before the last group */
	assert_int_equal(base64_decode("TWF", out, sizeof(out)), -1);	/* not a multiple of 4 */
	assert_int_equal(base64_decode("TW-u", out, sizeof(out)), -1);	/* outside the alphabet */
	assert_int_equal(base64_decode("TWFuTWFuTWFu", out, sizeof(out)), -1);	/* 9 bytes into 8 */
	assert_int_equal(base64_decode("TWFuTWE=", out, sizeof(out)), 5);
}

static void round_trip_every_length(void **state)
{
	uint8_t in[64], back[64];
	char text[BASE64_LEN(sizeof(in)) + 1];

	(void)state;
	for (int seed = 0; seed < 8; seed++) {
		for (size_t i = 0; i < sizeof(in); i++)
			in[i] = (uint8_t)(i * 37 + seed * 101 + (i >> 3));
		for (size_t n = 0; n <= sizeof(in); n++) {
			assert_int_equal(base64_encode(text, in, n), BASE64_LEN(n));
			assert_int_equal(base64_decode(text, back, sizeof(back)), (long)n);
			assert_memory_equal(back, in, n);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rfc4648_vectors_encode),
		cmocka_unit_test(rfc4648_vectors_decode),
		cmocka_unit_test(decode_refuses_what_is_not_base64),
		cmocka_unit_test(round_trip_every_length),
	};

	return cmocka_run_group_tests_name("base64", tests, NULL, NULL);
}
