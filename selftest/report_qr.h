/*
 * report_qr.h - the selftest report as the texts of QR codes, for the
 * owner who has no serial cable: `selftest --qr` shows them on the
 * screen, a phone or tools/selftest-report reads them back.
 *
 * The report's text is every NBS: line (selftest.h) with a '\n' after it.
 * It is compressed into a zlib stream (lib/deflate.h), written in base45
 * (lib/base45.h) and cut into pieces; each piece is the text of one code:
 *
 *	NBQ1 <k>/<n> <CRC> <base45>
 *
 * k counts from 1 to n, CRC is the CRC-32 of the whole text in 8 upper-case
 * hex digits, the same in every code of one report (so codes of two
 * reports are never joined), and the pieces joined in the order of k are
 * the stream in base45. Each piece but the last is a multiple of three
 * characters, so each decodes on its own. Every character is of the QR
 * alphanumeric set, which packs 45 of them in the room of 33 bytes.
 *
 * Portable: compiled freestanding in the kernel and on the host for tests.
 */
#ifndef NBPROF_SELFTEST_REPORT_QR_H
#define NBPROF_SELFTEST_REPORT_QR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/deflate.h"

#define SELFTEST_QR_MAGIC	"NBQ1"
#define SELFTEST_QR_TEXT_MAX	49152	/* 192 check lines of 250 characters */
#define SELFTEST_QR_Z_MAX	49152

struct selftest_qr {
	char text[SELFTEST_QR_TEXT_MAX];
	size_t len;
	bool full;			/* a line did not fit: no codes */
	uint8_t z[SELFTEST_QR_Z_MAX];	/* the zlib stream, once packed */
	size_t zlen;
	uint32_t crc;
	struct deflate_work work;
};

void selftest_qr_reset(struct selftest_qr *p);

/* Add one NBS: line (ctx is the struct selftest_qr): selftest_block's out(). */
void selftest_qr_line(void *ctx, const char *line);

/* Compress the lines: 0, or -1 when they did not fit or there are none. */
int selftest_qr_pack(struct selftest_qr *p);

/* How many codes of at most `chars` characters the packed report takes; 0 when none fits. */
unsigned selftest_qr_count(const struct selftest_qr *p, size_t chars);

/*
 * The text of code k (1..count) when each holds at most `chars` characters,
 * into out (n bytes, NUL-terminated): its length, or -1.
 */
int selftest_qr_code(const struct selftest_qr *p, size_t chars, unsigned k, char *out, size_t n);

#endif
