/*
 * acpi_image.h - firmware tables as physical memory for the ACPI parsers,
 * shared by tests/host/test_acpi.c and tests/fuzz/fuzz_acpi.c.
 *
 * An image (tests/fuzz/firmware_tables.py writes them from a guest's RAM)
 * is a u64 RSDP address, then chunks {u64 address, u32 length, bytes}.
 * Each chunk is its own heap block of exactly its length, so a read past a
 * chunk is an AddressSanitizer report; the struct acpi_mem hands out only
 * ranges inside one chunk and records the tables reported with a wrong
 * checksum.
 */
#ifndef NBPROF_TESTS_FUZZ_ACPI_IMAGE_H
#define NBPROF_TESTS_FUZZ_ACPI_IMAGE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/acpi.h"

#define ACPI_IMAGE_CHUNKS	32

struct acpi_image {
	uint64_t rsdp;
	unsigned n;
	uint64_t addr[ACPI_IMAGE_CHUNKS];
	uint32_t len[ACPI_IMAGE_CHUNKS];
	uint8_t *data[ACPI_IMAGE_CHUNKS];
	struct acpi_mem mem;
	/* what the walk reported through bad_sum: how often, and the last table */
	unsigned bad_sums;
	uint64_t bad_addr;
	const uint8_t *bad_table;
	uint8_t bad_sum;
};

static inline uint64_t acpi_image_rd(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = n; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

static inline const uint8_t *acpi_image_at(void *ctx, uint64_t addr, uint64_t len)
{
	struct acpi_image *im = ctx;

	for (unsigned i = 0; i < im->n; i++)
		if (addr >= im->addr[i] && addr - im->addr[i] <= im->len[i] &&
		    len <= im->len[i] - (addr - im->addr[i]))
			return im->data[i] + (addr - im->addr[i]);
	return NULL;
}

static inline void acpi_image_bad_sum(void *ctx, uint64_t addr, const uint8_t *table, uint8_t sum)
{
	struct acpi_image *im = ctx;

	im->bad_sums++;
	im->bad_addr = addr;
	im->bad_table = table;
	im->bad_sum = sum;
}

/* Read an image from b[0..n); chunks cut short by the end are kept as far as they go. */
static inline void acpi_image_parse(struct acpi_image *im, const uint8_t *b, size_t n)
{
	size_t off = 8;

	memset(im, 0, sizeof(*im));
	im->mem = (struct acpi_mem){ .at = acpi_image_at, .ctx = im, .bad_sum = acpi_image_bad_sum };
	if (n < 8)
		return;
	im->rsdp = acpi_image_rd(b, 8);
	while (off + 12 <= n && im->n < ACPI_IMAGE_CHUNKS) {
		uint64_t a = acpi_image_rd(b + off, 8), l = acpi_image_rd(b + off + 8, 4);

		off += 12;
		if (l > n - off)
			l = n - off;
		im->addr[im->n] = a;
		im->len[im->n] = (uint32_t)l;
		im->data[im->n] = malloc(l ? l : 1);
		memcpy(im->data[im->n], b + off, l);
		im->n++;
		off += l;
	}
}

static inline void acpi_image_free(struct acpi_image *im)
{
	for (unsigned i = 0; i < im->n; i++)
		free(im->data[i]);
	im->n = 0;
}

/* The chunk holding addr, or -1. */
static inline int acpi_image_chunk(const struct acpi_image *im, uint64_t addr)
{
	for (unsigned i = 0; i < im->n; i++)
		if (addr >= im->addr[i] && addr - im->addr[i] < im->len[i])
			return (int)i;
	return -1;
}

#endif
