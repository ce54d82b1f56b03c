/*
 * acpi.c - the RSDP -> XSDT/RSDT -> table walk (ACPI 6.x, 5.2.5-5.2.8).
 *
 * ACPI 2.0+ RSDPs (revision >= 2) carry a 64-bit XSDT address at offset 24
 * whose entries are 8 bytes wide; older ones only the RSDT at offset 16 with
 * 4-byte entries. The XSDT is preferred when present.
 */
#include <stdbool.h>

#include "arch/x86/acpi.h"
#include "lib/string.h"

const uint8_t *acpi_find_table(uint64_t rsdp, const char *sig)
{
	const uint8_t *r = (const uint8_t *)(uintptr_t)rsdp;
	const uint8_t *sdt;
	unsigned width;
	bool xsdt;

	if (!rsdp || memcmp(r, "RSD PTR ", 8) != 0)
		return NULL;
	xsdt = r[15] >= 2 && acpi_rd64(r + 24) != 0;
	sdt = (const uint8_t *)(uintptr_t)(xsdt ? acpi_rd64(r + 24) : acpi_rd32(r + 16));
	width = xsdt ? 8 : 4;
	if (!sdt)
		return NULL;
	for (uint32_t off = ACPI_SDT_HEADER_LEN; off + width <= acpi_rd32(sdt + 4); off += width) {
		uint64_t a = width == 8 ? acpi_rd64(sdt + off) : acpi_rd32(sdt + off);
		const uint8_t *t = (const uint8_t *)(uintptr_t)a;

		if (t && memcmp(t, sig, 4) == 0)
			return t;
	}
	return NULL;
}
