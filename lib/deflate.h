/*
 * deflate.h - a zlib stream (RFC 1950) of one deflate block (RFC 1951):
 * LZ77 matches found through a hash of three bytes over a 32 KiB window,
 * then literals, lengths and distances in Huffman codes made for the data
 * (a dynamic block, 3.2.7) or in the fixed codes (3.2.6), whichever is
 * shorter. Any inflater reads it (Python's zlib.decompress, a phone's EU
 * health certificate reader). `selftest --qr` compresses its report this
 * way.
 *
 * Portable: compiled freestanding in the kernel and on the host for tests.
 */
#ifndef NBPROF_LIB_DEFLATE_H
#define NBPROF_LIB_DEFLATE_H

#include <stddef.h>
#include <stdint.h>

#define DEFLATE_WINDOW		32768
#define DEFLATE_HASH_SIZE	4096
#define DEFLATE_IN_MAX		65534	/* positions are 16 bits; FFFFH marks none */

#define DEFLATE_NLIT		288	/* literal/length symbols, 286 and 287 unused */
#define DEFLATE_NDIST		30
#define DEFLATE_NCL		19	/* code length symbols */

/* One Huffman code: each symbol's bits and length (0: not used). */
struct deflate_code {
	uint16_t bits[DEFLATE_NLIT];
	uint8_t len[DEFLATE_NLIT];
};

/* The match finder's tables and the codes' work space: about 90 KiB, kept by the caller. */
struct deflate_work {
	uint16_t head[DEFLATE_HASH_SIZE];	/* the last position of each hash */
	uint16_t prev[DEFLATE_WINDOW];		/* the one before it with the same hash */
	uint32_t lit_freq[DEFLATE_NLIT], dist_freq[DEFLATE_NDIST], cl_freq[DEFLATE_NCL];
	struct deflate_code lit, dist, cl;
	uint8_t cl_sym[DEFLATE_NLIT + DEFLATE_NDIST], cl_extra[DEFLATE_NLIT + DEFLATE_NDIST];
	unsigned ncl;				/* run-length coded code lengths */
	uint32_t weight[2 * DEFLATE_NLIT];	/* building a tree */
	uint16_t parent[2 * DEFLATE_NLIT];
	uint8_t alive[2 * DEFLATE_NLIT];
};

/* Adler-32 (RFC 1950 section 9) of p[0..n), the zlib stream's check value. */
uint32_t adler32(const uint8_t *p, size_t n);

/*
 * The Huffman code of freq[0..n) (n <= DEFLATE_NLIT) into c, no code
 * longer than limit (at most 15): lengths and canonical bits (RFC 1951
 * 3.2.2). At least two symbols get a code (freq[] of unused ones is made
 * 1), so that the code is complete: an inflater may refuse one that is not.
 */
void deflate_lengths(struct deflate_work *w, uint32_t *freq, unsigned n, unsigned limit,
		     struct deflate_code *c);

/*
 * in[0..n) as a zlib stream into out[0..max): its length, or 0 when it does
 * not fit in max bytes or n is more than DEFLATE_IN_MAX.
 */
size_t zlib_compress(struct deflate_work *w, const uint8_t *in, size_t n, uint8_t *out,
		     size_t max);

#endif
