/*
 * crc32.c - CRC-32 (IEEE 802.3), four bits at a time.
 *
 * The reflected algorithm shifts the register right and folds in the
 * polynomial's reversed form EDB88320H. Processing a nibble per step with a
 * 16-entry table keeps the table small (64 bytes of .rodata) and still runs
 * at two table lookups per byte, far faster than the serial line it guards.
 * crc32_nibble[i] is the register after shifting the value i through four
 * bit steps; tests/host/test_dump.c recomputes every entry bit by bit.
 */
#include "lib/crc32.h"

static const uint32_t crc32_nibble[16] = {
	0x00000000, 0x1db71064, 0x3b6e20c8, 0x26d930ac,
	0x76dc4190, 0x6b6b51f4, 0x4db26158, 0x5005713c,
	0xedb88320, 0xf00f9344, 0xd6d6a3e8, 0xcb61b38c,
	0x9b64c2b0, 0x86d3d2d4, 0xa00ae278, 0xbdbdf21c,
};

uint32_t crc32_update(uint32_t crc, const void *buf, size_t n)
{
	const uint8_t *p = buf;

	/* The register holds the inverted CRC while bytes are folded in. */
	crc = ~crc;
	while (n--) {
		crc ^= *p++;
		crc = (crc >> 4) ^ crc32_nibble[crc & 0xf];
		crc = (crc >> 4) ^ crc32_nibble[crc & 0xf];
	}
	return ~crc;
}

uint32_t crc32(const void *buf, size_t n)
{
	return crc32_update(CRC32_INIT, buf, n);
}
