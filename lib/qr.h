/*
 * qr.h - QR Code symbols (ISO/IEC 18004:2015) made from text: one segment
 * in alphanumeric mode when every character is of its set (0-9, A-Z,
 * space, $ % * + - . / :), in byte mode otherwise; error correction level
 * L or M; versions 1 to 40; the mask of the lowest penalty (section 7.8.3).
 *
 * `selftest --qr` shows its report this way (shell/cmd_qr.c); the host
 * tests read the symbols back with the zbar decoder (tests/tools/test_qr.py).
 *
 * Portable: compiled freestanding in the kernel and on the host for tests.
 * No allocation: a struct qr holds a symbol of any version.
 */
#ifndef NBPROF_LIB_QR_H
#define NBPROF_LIB_QR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define QR_VERSION_MIN	1
#define QR_VERSION_MAX	40
#define QR_SIZE(v)	(17 + 4 * (v))		/* modules on a side */
#define QR_SIZE_MAX	QR_SIZE(QR_VERSION_MAX)
#define QR_QUIET	4			/* the light margin the standard asks for */

enum qr_ecc {
	QR_ECC_L,	/* about 7% of the codewords can be restored */
	QR_ECC_M,	/* about 15% */
};

#define QR_BITS_BYTES	((QR_SIZE_MAX * QR_SIZE_MAX + 7) / 8)
/* The codewords of the largest symbol (version 40: 3706). */
#define QR_CODEWORDS_MAX	3706

struct qr {
	int version;
	int size;			/* QR_SIZE(version) */
	int mask;			/* 0..7 */
	enum qr_ecc ecc;
	uint8_t dark[QR_BITS_BYTES];	/* module (x, y) is bit y * size + x */
	uint8_t fixed[QR_BITS_BYTES];	/* function patterns, which no mask touches */
	uint8_t cw[QR_CODEWORDS_MAX];	/* work space: the data codewords */
	uint8_t il[QR_CODEWORDS_MAX];	/* work space: every block's, interleaved */
};

/* Whether every character of text[0..n) is of the alphanumeric set. */
bool qr_is_alnum(const char *text, size_t n);

/* The most characters of the alphanumeric set (or bytes) one symbol holds. */
size_t qr_capacity_alnum(int version, enum qr_ecc ecc);
size_t qr_capacity_bytes(int version, enum qr_ecc ecc);

/*
 * text[0..n) as a symbol of the smallest version in min..max that holds it,
 * with the given mask (0..7), or the mask of the lowest penalty when mask is
 * -1. 0, or -1 when it fits no version of the range (or an argument is out
 * of range); q is then not a symbol.
 */
int qr_encode(struct qr *q, const char *text, size_t n, enum qr_ecc ecc, int min_version,
	      int max_version, int mask);

/* Whether module (x, y) is dark; (0, 0) is the top left, anything outside is light. */
bool qr_module(const struct qr *q, int x, int y);

#endif
