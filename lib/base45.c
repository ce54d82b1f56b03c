/*
 * base45.c - base45 (base45.h, RFC 9285 section 4).
 *
 * Portable: compiled freestanding in the kernel and on the host for tests.
 */
#include "lib/base45.h"

static const char base45_set[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:";

size_t base45_encode(char *out, const uint8_t *in, size_t n)
{
	size_t o = 0, i = 0;

	for (; i + 1 < n; i += 2) {
		unsigned v = (unsigned)in[i] << 8 | in[i + 1];	/* c + d*45 + e*45*45 */

		out[o++] = base45_set[v % 45];
		out[o++] = base45_set[v / 45 % 45];
		out[o++] = base45_set[v / 2025];
	}
	if (i < n) {
		out[o++] = base45_set[in[i] % 45];
		out[o++] = base45_set[in[i] / 45];
	}
	out[o] = '\0';
	return o;
}

static int base45_value(char c)
{
	for (int i = 0; i < 45; i++)
		if (base45_set[i] == c)
			return i;
	return -1;
}

long base45_decode(const char *s, size_t len, uint8_t *out, size_t max)
{
	size_t o = 0;

	if (len % 3 == 1)
		return -1;
	for (size_t i = 0; i < len; i += 3) {
		int c = base45_value(s[i]), d = base45_value(s[i + 1]);
		int e = i + 2 < len ? base45_value(s[i + 2]) : 0;
		unsigned v;

		if (c < 0 || d < 0 || e < 0)
			return -1;
		v = (unsigned)(c + d * 45 + e * 2025);
		if (i + 2 < len) {
			if (v > 0xffff || o + 2 > max)
				return -1;
			out[o++] = (uint8_t)(v >> 8);
			out[o++] = (uint8_t)v;
		} else {
			if (v > 0xff || o + 1 > max)
				return -1;
			out[o++] = (uint8_t)v;
		}
	}
	return (long)o;
}
