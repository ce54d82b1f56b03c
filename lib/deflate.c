/*
 * deflate.c - a zlib stream of one fixed-Huffman deflate block (deflate.h).
 * Section numbers are RFC 1951's.
 *
 * Portable: compiled freestanding in the kernel and on the host for tests.
 */
#include <stdbool.h>

#include "lib/deflate.h"

#define DEFLATE_NONE	0xffffu
#define DEFLATE_CHAIN	128		/* candidates tried per position */
#define DEFLATE_MIN	3
#define DEFLATE_MAX	258
#define DEFLATE_LAZY	32		/* a match this long is taken at once */

/* 3.2.5: the base length of codes 257..285 and their extra bits. */
static const uint16_t deflate_len_base[29] = {
	3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115,
	131, 163, 195, 227, 258 };
static const uint8_t deflate_len_extra[29] = {
	0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0 };
/* 3.2.5: the base distance of codes 0..29; code c has (c - 2) / 2 extra bits from code 4 on. */
static const uint16_t deflate_dist_base[30] = {
	1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
	2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577 };

uint32_t adler32(const uint8_t *p, size_t n)
{
	uint32_t a = 1, b = 0;

	for (size_t i = 0; i < n; i++) {
		a = (a + p[i]) % 65521;
		b = (b + a) % 65521;
	}
	return b << 16 | a;
}

struct deflate_out {
	uint8_t *buf;
	size_t len, max;
	uint32_t bits;		/* pending bits, the first in bit 0 (3.1.1) */
	int nbits;
	bool full;
};

static void deflate_bits(struct deflate_out *o, unsigned v, int n)
{
	o->bits |= (uint32_t)v << o->nbits;
	o->nbits += n;
	while (o->nbits >= 8) {
		if (o->len < o->max)
			o->buf[o->len++] = (uint8_t)o->bits;
		else
			o->full = true;
		o->bits >>= 8;
		o->nbits -= 8;
	}
}

/* A Huffman code goes out from its most significant bit (3.1.1). */
static void deflate_code(struct deflate_out *o, unsigned code, int n)
{
	unsigned r = 0;

	for (int i = 0; i < n; i++)
		r |= (code >> i & 1) << (n - 1 - i);
	deflate_bits(o, r, n);
}

/* Literal/length symbol 0..287 in the fixed code (3.2.6). */
static void deflate_symbol(struct deflate_out *o, unsigned s)
{
	if (s < 144)
		deflate_code(o, 0x30 + s, 8);
	else if (s < 256)
		deflate_code(o, 0x190 + s - 144, 9);
	else if (s < 280)
		deflate_code(o, s - 256, 7);
	else
		deflate_code(o, 0xc0 + s - 280, 8);
}

static void deflate_match(struct deflate_out *o, unsigned len, unsigned dist)
{
	int c = 28, d = 29;

	while (deflate_len_base[c] > len)
		c--;
	deflate_symbol(o, 257 + (unsigned)c);
	deflate_bits(o, len - deflate_len_base[c], deflate_len_extra[c]);
	while (deflate_dist_base[d] > dist)
		d--;
	deflate_code(o, (unsigned)d, 5);		/* distance codes are 5 bits fixed */
	deflate_bits(o, dist - deflate_dist_base[d], d < 4 ? 0 : (d - 2) / 2);
}

static unsigned deflate_hash(const uint8_t *p)
{
	return ((unsigned)p[0] << 8 ^ (unsigned)p[1] << 4 ^ p[2]) * 2654435761u >> 20 &
	       (DEFLATE_HASH_SIZE - 1);
}

static void deflate_insert(struct deflate_work *w, const uint8_t *in, size_t n, size_t i)
{
	unsigned h;

	if (i + DEFLATE_MIN > n)
		return;
	h = deflate_hash(in + i);
	w->prev[i & (DEFLATE_WINDOW - 1)] = w->head[h];
	w->head[h] = (uint16_t)i;
}

/* The longest earlier match of in[i..] within the window: its length (0: none), *dist. */
static unsigned deflate_longest(const struct deflate_work *w, const uint8_t *in, size_t n,
				size_t i, unsigned *dist)
{
	unsigned best = 0, limit = n - i < DEFLATE_MAX ? (unsigned)(n - i) : DEFLATE_MAX;
	unsigned c = w->head[deflate_hash(in + i)];

	for (int tries = 0; c != DEFLATE_NONE && c < i && i - c <= DEFLATE_WINDOW &&
	     tries < DEFLATE_CHAIN; tries++) {
		unsigned len = 0, next;

		while (len < limit && in[c + len] == in[i + len])
			len++;
		if (len > best) {
			best = len;
			*dist = (unsigned)(i - c);
			if (len == limit)
				break;
		}
		next = w->prev[c & (DEFLATE_WINDOW - 1)];
		if (next >= c)
			break;
		c = next;
	}
	return best >= DEFLATE_MIN ? best : 0;
}

size_t zlib_compress(struct deflate_work *w, const uint8_t *in, size_t n, uint8_t *out,
		     size_t max)
{
	struct deflate_out o = { .buf = out, .max = max };
	uint32_t check = adler32(in, n);
	size_t i = 0;

	if (n > DEFLATE_IN_MAX)
		return 0;
	for (unsigned h = 0; h < DEFLATE_HASH_SIZE; h++)
		w->head[h] = DEFLATE_NONE;
	/* CMF 78H: deflate with a 32 KiB window; FLG 01H: no dictionary, a multiple of 31 */
	deflate_bits(&o, 0x78, 8);
	deflate_bits(&o, 0x01, 8);
	deflate_bits(&o, 1, 1);		/* BFINAL */
	deflate_bits(&o, 1, 2);		/* BTYPE 01: fixed Huffman codes */
	while (i < n) {
		unsigned dist = 0, len = i + DEFLATE_MIN <= n ? deflate_longest(w, in, n, i, &dist) : 0;

		/* lazy matching: a longer match one byte on makes this byte a literal */
		while (len) {
			unsigned d2 = 0, len2 = 0;

			deflate_insert(w, in, n, i);
			if (len < DEFLATE_LAZY && i + 1 + DEFLATE_MIN <= n)
				len2 = deflate_longest(w, in, n, i + 1, &d2);
			if (len2 <= len)
				break;
			deflate_symbol(&o, in[i++]);
			len = len2;
			dist = d2;
		}
		if (len) {
			deflate_match(&o, len, dist);
			for (unsigned k = 1; k < len; k++)
				deflate_insert(w, in, n, i + k);
			i += len;
		} else {
			deflate_symbol(&o, in[i]);
			deflate_insert(w, in, n, i);
			i++;
		}
	}
	deflate_symbol(&o, 256);	/* end of block */
	deflate_bits(&o, 0, (8 - o.nbits) & 7);	/* to a byte boundary */
	for (int s = 24; s >= 0; s -= 8)
		deflate_bits(&o, check >> s & 0xff, 8);
	return o.full ? 0 : o.len;
}
