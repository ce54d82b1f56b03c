/*
 * base45.h - base45 as RFC 9285 defines it: two bytes become three
 * characters of the QR Code alphanumeric set (0-9 A-Z space $ % * + - . / :),
 * a last odd byte two. A QR code holds 45 such characters in about the
 * room of 33 bytes (lib/qr.h), which is why `selftest --qr` sends its
 * compressed report this way.
 *
 * Portable: compiled freestanding in the kernel and on the host for tests.
 */
#ifndef NBPROF_LIB_BASE45_H
#define NBPROF_LIB_BASE45_H

#include <stddef.h>
#include <stdint.h>

/* The characters base45_encode writes for n bytes, without the final NUL. */
#define BASE45_LEN(n)	((n) / 2 * 3 + (n) % 2 * 2)

/* in[0..n) into out (BASE45_LEN(n) + 1 bytes, NUL-terminated); returns BASE45_LEN(n). */
size_t base45_encode(char *out, const uint8_t *in, size_t n);

/*
 * s[0..len) into out (at most max bytes); the number of bytes, or -1 when s
 * is not base45 (a length of 1 modulo 3, a character outside the set, a
 * group worth more than FFFFH or a last pair more than FFH) or decodes to
 * more than max bytes.
 */
long base45_decode(const char *s, size_t len, uint8_t *out, size_t max);

#endif
