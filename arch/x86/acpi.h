/*
 * acpi.h - finding ACPI tables from the RSDP that boot/ recorded.
 *
 * The kernel reads ACPI tables in place (they are identity-mapped) and
 * never runs AML: power.c wants the FADT and the DSDT's \_S5 package,
 * smp.c the MADT's local APIC entries.
 */
#ifndef NBPROF_ARCH_X86_ACPI_H
#define NBPROF_ARCH_X86_ACPI_H

#include <stdint.h>

#define ACPI_SDT_HEADER_LEN	36	/* ACPI 6.x, 5.2.6: signature .. creator revision */

/* Little-endian fields at any alignment. */
static inline uint32_t acpi_rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t acpi_rd64(const uint8_t *p)
{
	return acpi_rd32(p) | (uint64_t)acpi_rd32(p + 4) << 32;
}

/* The table with this 4-byte signature ("FACP", "APIC", ...), or NULL. rsdp may be 0. */
const uint8_t *acpi_find_table(uint64_t rsdp, const char *sig);

#endif
