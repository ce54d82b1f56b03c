/*
 * deflate.h - a zlib stream (RFC 1950) of one deflate block (RFC 1951) with
 * the fixed Huffman codes: LZ77 matches found through a hash of three bytes
 * over a 32 KiB window, then literals, lengths and distances in the codes
 * RFC 1951 section 3.2.6 fixes, so no code table travels with the data.
 * Any inflater reads it (Python's zlib.decompress, a phone's EU health
 * certificate reader). `selftest --qr` compresses its report this way.
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

/* The match finder's tables: about 72 KiB, kept by the caller. */
struct deflate_work {
	uint16_t head[DEFLATE_HASH_SIZE];	/* the last position of each hash */
	uint16_t prev[DEFLATE_WINDOW];		/* the one before it with the same hash */
};

/* Adler-32 (RFC 1950 section 9) of p[0..n), the zlib stream's check value. */
uint32_t adler32(const uint8_t *p, size_t n);

/*
 * in[0..n) as a zlib stream into out[0..max): its length, or 0 when it does
 * not fit in max bytes or n is more than DEFLATE_IN_MAX.
 */
size_t zlib_compress(struct deflate_work *w, const uint8_t *in, size_t n, uint8_t *out,
		     size_t max);

#endif
