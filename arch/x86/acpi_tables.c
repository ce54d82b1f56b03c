/*
 * acpi_tables.c - the RSDP -> XSDT/RSDT -> table walk and the DSDT's \_S5_
 * package (ACPI 6.x, 5.2.5-5.2.9 and 16.1), every read bounded (acpi.h).
 *
 * ACPI 2.0+ RSDPs (revision >= 2) carry a 64-bit XSDT address at offset 24
 * whose entries are 8 bytes wide; older ones only the RSDT at offset 16 with
 * 4-byte entries. The XSDT is preferred when it is there (signature and
 * length right; a wrong checksum is reported, as for every table).
 */
#include "arch/x86/acpi.h"

#define RSDP_REVISION	15
#define RSDP_RSDT	16
#define RSDP_LENGTH	20
#define RSDP_XSDT	24
#define FADT_DSDT	40
#define FADT_X_DSDT	140	/* ACPI 2.0+ FADT (6.x Table 5.9) */
#define AML_NAME_OP	0x08
#define AML_PACKAGE_OP	0x12
#define AML_ZERO_OP	0x00
#define AML_ONE_OP	0x01
#define AML_BYTE_PREFIX	0x0a
/*
 * Larger tables are refused: the specification sets no limit, but a length
 * near 4 GiB would have the checksum read memory that is not there. Real
 * DSDTs of the era are tens of KiB.
 */
#define ACPI_TABLE_MAX	(4u << 20)

static uint8_t sum8(const uint8_t *p, uint64_t n)
{
	uint8_t s = 0;

	for (uint64_t i = 0; i < n; i++)
		s = (uint8_t)(s + p[i]);
	return s;
}

static bool sig_is(const uint8_t *p, const char *sig, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (p[i] != (uint8_t)sig[i])
			return false;
	return true;
}

bool acpi_rsdp_valid(const uint8_t *p, uint64_t avail)
{
	uint32_t len;

	if (avail < ACPI_RSDP_V1_LEN || !sig_is(p, "RSD PTR ", 8) || sum8(p, ACPI_RSDP_V1_LEN))
		return false;
	if (p[RSDP_REVISION] < 2)
		return true;
	if (avail < ACPI_RSDP_V2_LEN)
		return false;
	len = acpi_rd32(p + RSDP_LENGTH);
	return len >= ACPI_RSDP_V2_LEN && len <= avail && len <= ACPI_TABLE_MAX && sum8(p, len) == 0;
}

const uint8_t *acpi_table_at(const struct acpi_mem *m, uint64_t addr, const char *sig,
			     uint32_t *len)
{
	const uint8_t *h = addr ? m->at(m->ctx, addr, ACPI_SDT_HEADER_LEN) : NULL;
	const uint8_t *t;
	uint32_t n;

	if (!h || !sig_is(h, sig, 4))
		return NULL;
	n = acpi_rd32(h + 4);
	if (n < ACPI_SDT_HEADER_LEN || n > ACPI_TABLE_MAX || !(t = m->at(m->ctx, addr, n)))
		return NULL;
	/* the whole table as mapped must still say what its header said */
	if (!sig_is(t, sig, 4) || acpi_rd32(t + 4) != n)
		return NULL;
	/* a wrong checksum is reported, not refused (acpi.h: ACPICA does the same) */
	if (sum8(t, n) && m->bad_sum)
		m->bad_sum(m->ctx, addr, t, sum8(t, n));
	*len = n;
	return t;
}

bool acpi_checksum_ok(const uint8_t *table, uint32_t len)
{
	return sum8(table, len) == 0;
}

/* The RSDP at rsdp, checked; NULL when there is none. */
static const uint8_t *rsdp_at(const struct acpi_mem *m, uint64_t rsdp)
{
	const uint8_t *p = rsdp ? m->at(m->ctx, rsdp, ACPI_RSDP_V1_LEN) : NULL;

	if (p && p[RSDP_REVISION] >= 2) {
		const uint8_t *h = m->at(m->ctx, rsdp, ACPI_RSDP_V2_LEN);
		uint32_t len = h ? acpi_rd32(h + RSDP_LENGTH) : 0;

		p = len >= ACPI_RSDP_V2_LEN && len <= ACPI_TABLE_MAX ? m->at(m->ctx, rsdp, len) : NULL;
		return p && acpi_rsdp_valid(p, len) ? p : NULL;
	}
	return p && acpi_rsdp_valid(p, ACPI_RSDP_V1_LEN) ? p : NULL;
}

const uint8_t *acpi_find_in(const struct acpi_mem *m, uint64_t rsdp, const char *sig,
			    uint32_t *len)
{
	const uint8_t *r = rsdp_at(m, rsdp), *sdt = NULL;
	uint32_t sdt_len = 0;
	unsigned width = 8;

	if (!r)
		return NULL;
	if (r[RSDP_REVISION] >= 2)
		sdt = acpi_table_at(m, acpi_rd64(r + RSDP_XSDT), "XSDT", &sdt_len);
	if (!sdt) {
		sdt = acpi_table_at(m, acpi_rd32(r + RSDP_RSDT), "RSDT", &sdt_len);
		width = 4;
	}
	if (!sdt)
		return NULL;
	for (uint32_t off = ACPI_SDT_HEADER_LEN; sdt_len - off >= width; off += width) {
		uint64_t a = width == 8 ? acpi_rd64(sdt + off) : acpi_rd32(sdt + off);
		const uint8_t *t = acpi_table_at(m, a, sig, len);

		if (t)
			return t;
	}
	return NULL;
}

const uint8_t *acpi_dsdt(const struct acpi_mem *m, const uint8_t *fadt, uint32_t fadt_len,
			 uint32_t *len)
{
	uint64_t x = fadt_len >= FADT_X_DSDT + 8 ? acpi_rd64(fadt + FADT_X_DSDT) : 0;

	if (!x && fadt_len < FADT_DSDT + 4)
		return NULL;
	return acpi_table_at(m, x ? x : acpi_rd32(fadt + FADT_DSDT), "DSDT", len);
}

/* One AML integer of a package element: ZeroOp, OneOp, BytePrefix n; -1 otherwise. */
static int aml_small_int(const uint8_t *p, uint32_t end, uint32_t *i)
{
	uint8_t op;

	if (*i >= end)
		return -1;
	op = p[(*i)++];
	if (op == AML_ZERO_OP || op == AML_ONE_OP)
		return op;
	if (op == AML_BYTE_PREFIX && *i < end)
		return p[(*i)++];
	return -1;
}

/* The package's first two elements, from just after PackageOp at i. */
static bool s5_package(const uint8_t *p, uint32_t len, uint32_t i, int *typa, int *typb)
{
	if (i >= len)
		return false;
	i += 1 + (p[i] >> 6);	/* PkgLength: bits 7:6 count the extra bytes */
	i++;			/* NumElements */
	*typa = aml_small_int(p, len, &i);
	*typb = aml_small_int(p, len, &i);
	return *typa >= 0 && *typb >= 0;
}

bool acpi_s5(const uint8_t *dsdt, uint32_t len, int *typa, int *typb)
{
	for (uint32_t i = ACPI_SDT_HEADER_LEN; i < len; i++) {
		uint32_t k = i + 1;

		if (dsdt[i] != AML_NAME_OP)
			continue;
		if (k < len && dsdt[k] == '\\')
			k++;		/* root prefix */
		if (len - k < 5 || !sig_is(dsdt + k, "_S5_", 4) || dsdt[k + 4] != AML_PACKAGE_OP)
			continue;
		if (s5_package(dsdt, len, k + 5, typa, typb))
			return true;
	}
	return false;
}
