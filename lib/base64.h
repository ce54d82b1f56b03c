/*
 * base64.h - base64 as RFC 4648 section 4 defines it: the alphabet A-Z a-z
 * 0-9 + /, with '=' padding to a whole group of four characters.
 *
 * The serial link's frames are base64 both ways: `dump` sends NBD: lines
 * (prof/dump.h), `upload` receives NBU: lines (workload/upload.h).
 *
 * Portable: compiled freestanding in the kernel and on the host for tests.
 */
#ifndef NBPROF_LIB_BASE64_H
#define NBPROF_LIB_BASE64_H

#include <stddef.h>
#include <stdint.h>

/* The characters base64_encode writes for n bytes, without the final NUL. */
#define BASE64_LEN(n)	(((n) + 2) / 3 * 4)

/* in[0..n) into out (BASE64_LEN(n) + 1 bytes, NUL-terminated); returns BASE64_LEN(n). */
size_t base64_encode(char *out, const uint8_t *in, size_t n);

/*
 * The NUL-terminated s into out (at most max bytes); the number of bytes,
 * or -1 when s is not base64 (a length not a multiple of 4, a character
 * outside the alphabet, '=' anywhere but the last one or two places) or
 * decodes to more than max bytes.
 */
long base64_decode(const char *s, uint8_t *out, size_t max);

#endif
