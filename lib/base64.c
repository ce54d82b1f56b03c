/*
 * base64.c - RFC 4648 base64 with padding, both directions.
 */
#include <stdbool.h>

#include "lib/base64.h"

static const char base64_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t base64_encode(char *out, const uint8_t *in, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16;
		size_t left = n - i;

		if (left > 1)
			v |= (uint32_t)in[i + 1] << 8;
		if (left > 2)
			v |= in[i + 2];
		out[o++] = base64_alphabet[(v >> 18) & 63];
		out[o++] = base64_alphabet[(v >> 12) & 63];
		out[o++] = left > 1 ? base64_alphabet[(v >> 6) & 63] : '=';
		out[o++] = left > 2 ? base64_alphabet[v & 63] : '=';
	}
	out[o] = '\0';
	return o;
}

static int base64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

long base64_decode(const char *s, uint8_t *out, size_t max)
{
	size_t n = 0, len = 0;

	while (s[len])
		len++;
	if (len % 4)
		return -1;
	for (size_t i = 0; i < len; i += 4) {
		int v[4], pad = 0;

		for (int k = 0; k < 4; k++) {
			bool last = i + 4 == len;

			if (s[i + k] == '=' && last && k >= 2 && (k == 3 || s[i + 3] == '=')) {
				v[k] = 0;
				pad++;
				continue;
			}
			if (pad || (v[k] = base64_value(s[i + k])) < 0)
				return -1;
		}
		uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];

		for (int k = 0; k < 3 - pad; k++) {
			if (n >= max)
				return -1;
			out[n++] = (uint8_t)(w >> (16 - 8 * k));
		}
	}
	return (long)n;
}
