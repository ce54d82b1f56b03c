/*
 * crc32.h - CRC-32 as IEEE 802.3 defines it (the CRC of Ethernet, zlib, PNG).
 *
 * Polynomial 04C11DB7H processed bit-reversed (EDB88320H), register preset
 * to FFFFFFFFH and inverted at the end; the standard check value of the
 * ASCII string "123456789" is CBF43926H. Python's zlib.crc32() computes the
 * same function, which is what tools/nbprof-decode uses to verify frames.
 *
 * Portable: compiled freestanding in the kernel and on the host for tests.
 */
#ifndef NBPROF_LIB_CRC32_H
#define NBPROF_LIB_CRC32_H

#include <stddef.h>
#include <stdint.h>

#define CRC32_INIT	0u	/* the CRC of no bytes; pass it to start a chain */

/*
 * CRC of buf[0..n) continued from crc, the CRC of the bytes before it:
 * crc32_update(crc32_update(CRC32_INIT, a, na), b, nb) == CRC of a then b.
 */
uint32_t crc32_update(uint32_t crc, const void *buf, size_t n);

/* One-shot form: crc32_update(CRC32_INIT, buf, n). */
uint32_t crc32(const void *buf, size_t n);

#endif
