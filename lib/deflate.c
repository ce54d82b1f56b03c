/*
 * deflate.c - a zlib stream of one deflate block, dynamic or fixed (deflate.h).
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

/* Where the LZ77 pass goes: counted into w's frequencies (o NULL), or written in w's codes. */
struct deflate_sink {
	struct deflate_work *w;
	struct deflate_out *o;
};

static void deflate_symbol(struct deflate_sink *k, unsigned s)
{
	if (k->o)
		deflate_code(k->o, k->w->lit.bits[s], k->w->lit.len[s]);
	else
		k->w->lit_freq[s]++;
}

static void deflate_match(struct deflate_sink *k, unsigned len, unsigned dist)
{
	int c = 28, d = 29;

	while (deflate_len_base[c] > len)
		c--;
	while (deflate_dist_base[d] > dist)
		d--;
	if (!k->o) {
		k->w->lit_freq[257 + c]++;
		k->w->dist_freq[d]++;
		return;
	}
	deflate_symbol(k, 257 + (unsigned)c);
	deflate_bits(k->o, len - deflate_len_base[c], deflate_len_extra[c]);
	deflate_code(k->o, k->w->dist.bits[d], k->w->dist.len[d]);
	deflate_bits(k->o, dist - deflate_dist_base[d], d < 4 ? 0 : (d - 2) / 2);
}

/* ---- codes ---------------------------------------------------------------------- */

/* The canonical code of the lengths (3.2.2): shorter codes first, in symbol order. */
static void deflate_canonical(struct deflate_code *c, unsigned n)
{
	unsigned count[16] = { 0 }, next[16] = { 0 }, code = 0;

	for (unsigned i = 0; i < n; i++)
		count[c->len[i]]++;
	count[0] = 0;
	for (unsigned bits = 1; bits < 16; bits++) {
		code = (code + count[bits - 1]) << 1;
		next[bits] = code;
	}
	for (unsigned i = 0; i < n; i++)
		c->bits[i] = c->len[i] ? (uint16_t)next[c->len[i]]++ : 0;
}

/* The fixed code (3.2.6): literal/length 8, 9, 7 and 8 bits; distances 5 bits. */
static void deflate_fixed(struct deflate_work *w)
{
	for (unsigned i = 0; i < DEFLATE_NLIT; i++)
		w->lit.len[i] = i < 144 ? 8 : i < 256 ? 9 : i < 280 ? 7 : 8;
	for (unsigned i = 0; i < DEFLATE_NDIST; i++)
		w->dist.len[i] = 5;
	deflate_canonical(&w->lit, DEFLATE_NLIT);
	deflate_canonical(&w->dist, DEFLATE_NDIST);
}

/*
 * A Huffman tree, and while it is too deep, the same with every frequency
 * halved (a used symbol keeps 1), which flattens it.
 */
void deflate_lengths(struct deflate_work *w, uint32_t *freq, unsigned n, unsigned limit,
		     struct deflate_code *c)
{
	unsigned used = 0;

	for (unsigned i = 0; i < n; i++)
		used += freq[i] != 0;
	for (unsigned i = 0; i < n && used < 2; i++)
		if (!freq[i]) {
			freq[i] = 1;
			used++;
		}
	for (;;) {
		unsigned nodes = n, depth_max = 0;

		for (unsigned i = 0; i < n; i++) {
			w->weight[i] = freq[i];
			w->alive[i] = freq[i] != 0;
		}
		for (;;) {
			unsigned a = 0, b = 0;
			bool have_a = false, have_b = false;

			for (unsigned i = 0; i < nodes; i++) {
				if (!w->alive[i])
					continue;
				if (!have_a || w->weight[i] < w->weight[a]) {
					b = a;
					have_b = have_a;
					a = i;
					have_a = true;
				} else if (!have_b || w->weight[i] < w->weight[b]) {
					b = i;
					have_b = true;
				}
			}
			if (!have_b)
				break;		/* a is the root */
			w->weight[nodes] = w->weight[a] + w->weight[b];
			w->alive[nodes] = 1;
			w->alive[a] = w->alive[b] = 0;
			w->parent[a] = w->parent[b] = (uint16_t)nodes;
			nodes++;
		}
		for (unsigned i = 0; i < n; i++) {
			unsigned d = 0;

			if (freq[i])
				for (unsigned j = i; j != nodes - 1; j = w->parent[j])
					d++;
			c->len[i] = (uint8_t)d;
			if (d > depth_max)
				depth_max = d;
		}
		if (depth_max <= limit)
			break;
		for (unsigned i = 0; i < n; i++)
			if (freq[i])
				freq[i] = freq[i] / 2 + 1;
	}
	deflate_canonical(c, n);
}

/* The literal/length and distance code lengths, run-length coded (3.2.7): 16, 17, 18. */
static void deflate_runs(struct deflate_work *w, const uint8_t *lens, unsigned n)
{
	w->ncl = 0;
	for (unsigned i = 0; i < n;) {
		unsigned run = 1;

		while (i + run < n && lens[i + run] == lens[i])
			run++;
		if (lens[i] == 0 && run >= 3) {
			run = run > 138 ? 138 : run;
			w->cl_sym[w->ncl] = run >= 11 ? 18 : 17;
			w->cl_extra[w->ncl++] = (uint8_t)(run - (run >= 11 ? 11 : 3));
		} else if (run >= 4) {
			run = run > 7 ? 7 : run;	/* the length, then 16: 3-6 more of it */
			w->cl_sym[w->ncl] = lens[i];
			w->cl_extra[w->ncl++] = 0;
			w->cl_sym[w->ncl] = 16;
			w->cl_extra[w->ncl++] = (uint8_t)(run - 1 - 3);
		} else {
			run = 1;
			w->cl_sym[w->ncl] = lens[i];
			w->cl_extra[w->ncl++] = 0;
		}
		i += run;
	}
}

static const uint8_t deflate_cl_order[DEFLATE_NCL] = {
	16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15 };

static unsigned deflate_cl_extra_bits(unsigned sym)
{
	return sym == 16 ? 2 : sym == 17 ? 3 : sym == 18 ? 7 : 0;
}

/*
 * The dynamic codes of the counted frequencies, with the header that
 * carries them: its size in bits, and hlit, hdist, hclen. Returns the bits
 * of the whole block in those codes, to compare with the fixed ones.
 */
static uint64_t deflate_dynamic(struct deflate_work *w, unsigned *hlit, unsigned *hdist,
				unsigned *hclen)
{
	uint8_t lens[DEFLATE_NLIT + DEFLATE_NDIST];
	uint64_t bits = 5 + 5 + 4;

	deflate_lengths(w, w->lit_freq, 286, 15, &w->lit);
	deflate_lengths(w, w->dist_freq, DEFLATE_NDIST, 15, &w->dist);
	for (*hlit = 286; *hlit > 257 && !w->lit.len[*hlit - 1]; (*hlit)--)
		;
	for (*hdist = DEFLATE_NDIST; *hdist > 1 && !w->dist.len[*hdist - 1]; (*hdist)--)
		;
	for (unsigned i = 0; i < *hlit; i++)
		lens[i] = w->lit.len[i];
	for (unsigned i = 0; i < *hdist; i++)
		lens[*hlit + i] = w->dist.len[i];
	deflate_runs(w, lens, *hlit + *hdist);
	for (unsigned i = 0; i < DEFLATE_NCL; i++)
		w->cl_freq[i] = 0;
	for (unsigned i = 0; i < w->ncl; i++)
		w->cl_freq[w->cl_sym[i]]++;
	deflate_lengths(w, w->cl_freq, DEFLATE_NCL, 7, &w->cl);
	for (*hclen = DEFLATE_NCL; *hclen > 4 && !w->cl.len[deflate_cl_order[*hclen - 1]]; (*hclen)--)
		;
	bits += 3 * *hclen;
	for (unsigned i = 0; i < w->ncl; i++)
		bits += w->cl.len[w->cl_sym[i]] + deflate_cl_extra_bits(w->cl_sym[i]);
	for (unsigned i = 0; i < DEFLATE_NLIT; i++)
		bits += (uint64_t)w->lit_freq[i] * w->lit.len[i];
	for (unsigned i = 0; i < DEFLATE_NDIST; i++)
		bits += (uint64_t)w->dist_freq[i] * w->dist.len[i];
	return bits;
}

static void deflate_dynamic_header(struct deflate_out *o, const struct deflate_work *w,
				   unsigned hlit, unsigned hdist, unsigned hclen)
{
	deflate_bits(o, hlit - 257, 5);
	deflate_bits(o, hdist - 1, 5);
	deflate_bits(o, hclen - 4, 4);
	for (unsigned i = 0; i < hclen; i++)
		deflate_bits(o, w->cl.len[deflate_cl_order[i]], 3);
	for (unsigned i = 0; i < w->ncl; i++) {
		deflate_code(o, w->cl.bits[w->cl_sym[i]], w->cl.len[w->cl_sym[i]]);
		deflate_bits(o, w->cl_extra[i], (int)deflate_cl_extra_bits(w->cl_sym[i]));
	}
}

/* ---- LZ77 ------------------------------------------------------------------------ */

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

/* The whole input as literals and matches into k; the same each time for the same input. */
static void deflate_lz77(struct deflate_work *w, const uint8_t *in, size_t n,
			 struct deflate_sink *k)
{
	size_t i = 0;

	for (unsigned h = 0; h < DEFLATE_HASH_SIZE; h++)
		w->head[h] = DEFLATE_NONE;
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
			deflate_symbol(k, in[i++]);
			len = len2;
			dist = d2;
		}
		if (len) {
			deflate_match(k, len, dist);
			for (unsigned j = 1; j < len; j++)
				deflate_insert(w, in, n, i + j);
			i += len;
		} else {
			deflate_symbol(k, in[i]);
			deflate_insert(w, in, n, i);
			i++;
		}
	}
	deflate_symbol(k, 256);		/* end of block */
}

size_t zlib_compress(struct deflate_work *w, const uint8_t *in, size_t n, uint8_t *out,
		     size_t max)
{
	struct deflate_out o = { .buf = out, .max = max };
	struct deflate_sink count = { w, NULL }, write = { w, &o };
	uint32_t check = adler32(in, n);
	unsigned hlit, hdist, hclen;
	uint64_t dynamic, fixed = 0;

	if (n > DEFLATE_IN_MAX)
		return 0;
	for (unsigned i = 0; i < DEFLATE_NLIT; i++)
		w->lit_freq[i] = 0;
	for (unsigned i = 0; i < DEFLATE_NDIST; i++)
		w->dist_freq[i] = 0;
	deflate_lz77(w, in, n, &count);
	deflate_fixed(w);
	for (unsigned i = 0; i < DEFLATE_NLIT; i++)
		fixed += (uint64_t)w->lit_freq[i] * w->lit.len[i];
	for (unsigned i = 0; i < DEFLATE_NDIST; i++)
		fixed += (uint64_t)w->dist_freq[i] * w->dist.len[i];
	dynamic = deflate_dynamic(w, &hlit, &hdist, &hclen);
	/* CMF 78H: deflate with a 32 KiB window; FLG 01H: no dictionary, a multiple of 31 */
	deflate_bits(&o, 0x78, 8);
	deflate_bits(&o, 0x01, 8);
	deflate_bits(&o, 1, 1);		/* BFINAL */
	if (dynamic < fixed) {
		deflate_bits(&o, 2, 2);	/* BTYPE 10: dynamic Huffman codes */
		deflate_dynamic_header(&o, w, hlit, hdist, hclen);
	} else {
		deflate_bits(&o, 1, 2);	/* BTYPE 01: fixed Huffman codes */
		deflate_fixed(w);
	}
	deflate_lz77(w, in, n, &write);
	deflate_bits(&o, 0, (8 - o.nbits) & 7);	/* to a byte boundary */
	for (int s = 24; s >= 0; s -= 8)
		deflate_bits(&o, check >> s & 0xff, 8);
	return o.full ? 0 : o.len;
}
