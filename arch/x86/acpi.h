/*
 * acpi.h - finding ACPI tables from the RSDP that boot/ recorded.
 *
 * The kernel reads ACPI tables in place (they are identity-mapped) and
 * never runs AML: power.c wants the FADT and the DSDT's \_S5 package,
 * smp.c the MADT's local APIC entries.
 *
 * Firmware tables are not trusted. The parsers (arch/x86/acpi_tables.c,
 * portable: host-tested and fuzzed) read memory only through a struct
 * acpi_mem, which says whether a range of physical addresses may be read,
 * and check what ACPI 6.x 5.2 gives them to check: the RSDP's signature,
 * its checksum over the first 20 bytes and, from revision 2 on, its length
 * and extended checksum over the whole structure (5.2.5.3); every other
 * table's signature and a length of at least its 36-byte header that lies
 * in readable memory (5.2.6). A table that fails is not there.
 *
 * A table's own checksum (5.2.6: all its bytes sum to 0) is checked but
 * does not decide: BIOSes of the era ship tables, the MADT among them,
 * whose checksum is wrong, and ACPICA (Linux's table code) warns "Incorrect
 * checksum in table" and uses the table unless it is built with
 * ACPI_CHECKSUM_ABORT, which is off by default (utcksum.c,
 * AcpiUtVerifyChecksum; acconfig.h). Such a table is handed back and
 * reported through acpi_mem's bad_sum. The RSDP's checksums still decide:
 * they are what tells an RSDP from stray bytes in the BIOS-area scan, and
 * ACPICA refuses a bad one too.
 */
#ifndef NBPROF_ARCH_X86_ACPI_H
#define NBPROF_ARCH_X86_ACPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ACPI_SDT_HEADER_LEN	36	/* ACPI 6.x, 5.2.6: signature .. creator revision */
#define ACPI_RSDP_V1_LEN	20	/* ACPI 1.0 RSDP, covered by the first checksum */
#define ACPI_RSDP_V2_LEN	36	/* revision 2: up to the reserved bytes */

/* Little-endian fields at any alignment. */
static inline uint32_t acpi_rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t acpi_rd64(const uint8_t *p)
{
	return acpi_rd32(p) | (uint64_t)acpi_rd32(p + 4) << 32;
}

/*
 * Physical memory as the parsers may read it: at(ctx, addr, len) or NULL
 * when it may not. bad_sum (may be NULL) hears of each table handed back
 * whose bytes sum to `sum`, not 0: its address and the table.
 */
struct acpi_mem {
	const uint8_t *(*at)(void *ctx, uint64_t addr, uint64_t len);
	void *ctx;
	void (*bad_sum)(void *ctx, uint64_t addr, const uint8_t *table, uint8_t sum);
};

/* The bytes of a table of len bytes sum to 0 (ACPI 6.x 5.2.6). */
bool acpi_checksum_ok(const uint8_t *table, uint32_t len);

/* A valid RSDP at p, of which avail bytes may be read (checksums, revision 2's length). */
bool acpi_rsdp_valid(const uint8_t *p, uint64_t avail);

/*
 * The table with signature sig at addr (its length in *len), or NULL: a
 * wrong checksum is reported (bad_sum), not refused.
 */
const uint8_t *acpi_table_at(const struct acpi_mem *m, uint64_t addr, const char *sig,
			     uint32_t *len);

/*
 * The first table with this signature ("FACP", "APIC", ...), checked as above, that
 * the XSDT names (the RSDT when the RSDP has no valid XSDT), or NULL.
 */
const uint8_t *acpi_find_in(const struct acpi_mem *m, uint64_t rsdp, const char *sig,
			    uint32_t *len);

/* The FADT's DSDT (X_DSDT when the FADT is long enough and it is set), checked as above, or NULL. */
const uint8_t *acpi_dsdt(const struct acpi_mem *m, const uint8_t *fadt, uint32_t fadt_len,
			 uint32_t *len);

/* SLP_TYPa/b from Name(\_S5_, Package() {a, b, ...}) in a DSDT of len bytes. */
bool acpi_s5(const uint8_t *dsdt, uint32_t len, int *typa, int *typb);

/* --- the kernel's view (arch/x86/acpi.c): identity-mapped memory ---------------- */

/* acpi_find_in over the kernel's memory. rsdp may be 0. */
const uint8_t *acpi_find_table(uint64_t rsdp, const char *sig, uint32_t *len);

/* The kernel's memory view, for acpi_dsdt; it prints a wrong checksum once per table. */
extern const struct acpi_mem acpi_kernel_mem;

/*
 * At boot: look up the tables the kernel reads (FACP, its DSDT, APIC), so
 * that a wrong checksum among them is printed in the boot log.
 */
void acpi_check_tables(uint64_t rsdp);

#endif
