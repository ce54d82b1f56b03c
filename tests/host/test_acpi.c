/*
 * test_acpi.c - the ACPI table walk (arch/x86/acpi_tables.c) on the tables
 * QEMU's firmware builds (SeaBIOS on q35 and pc, OVMF; dumped from the
 * guest's memory by tests/fuzz/firmware_tables.py), and on those tables
 * with one field broken: a table with a wrong signature or length is not
 * there, one with a wrong checksum is taken and reported (as ACPICA does),
 * no read leaves the memory the tables are in, a truncated DSDT is not read
 * past its end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "arch/x86/acpi.h"
#include "arch/x86/topology.h"
#include "tests/fuzz/acpi_image.h"

#define CORPUS	"tests/fuzz/corpus/"

static void load_image(struct acpi_image *im, const char *name)
{
	static uint8_t buf[1 << 16];
	char path[200];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), CORPUS "acpi/%s", name);
	f = fopen(path, "rb");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	acpi_image_parse(im, buf, n);
	assert_true(im->n >= 4);
}

/* The chunk whose table has signature sig. */
static uint8_t *chunk_of(struct acpi_image *im, const char *sig, unsigned *k)
{
	for (unsigned i = 0; i < im->n; i++)
		if (im->len[i] >= 4 && memcmp(im->data[i], sig, 4) == 0) {
			if (k)
				*k = i;
			return im->data[i];
		}
	fail_msg("no %s in the image", sig);
	return NULL;
}

static void wr32(uint8_t *p, uint32_t v)
{
	for (unsigned i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Make the bytes of a table (len) sum to 0 again through its checksum byte at cs. */
static void fix_sum(uint8_t *t, uint32_t len, uint32_t cs)
{
	uint8_t s = 0;

	t[cs] = 0;
	for (uint32_t i = 0; i < len; i++)
		s = (uint8_t)(s + t[i]);
	t[cs] = (uint8_t)-s;
}

static const uint8_t *find(struct acpi_image *im, const char *sig)
{
	uint32_t len = 0;

	return acpi_find_in(&im->mem, im->rsdp, sig, &len);
}

/* What each firmware's tables hold: the FADT, the MADT's processors, \_S5_ = {0, 0}. */
static void real_tables_are_found(void **state)
{
	static const struct {
		const char *image;
		int lps;
	} fw[] = { { "qemu-q35-seabios", 2 }, { "qemu-pc-seabios", 2 }, { "qemu-q35-ovmf", 1 } };

	(void)state;
	for (unsigned k = 0; k < sizeof(fw) / sizeof(fw[0]); k++) {
		struct acpi_image im;
		const uint8_t *fadt, *madt, *dsdt;
		uint32_t flen, mlen, dlen, ids[8];
		int a = -1, b = -1;

		load_image(&im, fw[k].image);
		fadt = acpi_find_in(&im.mem, im.rsdp, "FACP", &flen);
		madt = acpi_find_in(&im.mem, im.rsdp, "APIC", &mlen);
		assert_non_null(fadt);
		assert_non_null(madt);
		assert_null(find(&im, "XXXX"));
		dsdt = acpi_dsdt(&im.mem, fadt, flen, &dlen);
		assert_non_null(dsdt);
		assert_ptr_equal(dsdt, chunk_of(&im, "DSDT", NULL));
		assert_true(acpi_s5(dsdt, dlen, &a, &b));
		/* QEMU's DSDT: Name (_S5, Package (0x04) { Zero, Zero, Zero, Zero }) */
		assert_int_equal(a, 0);
		assert_int_equal(b, 0);
		assert_int_equal(topo_madt_lapics(madt, mlen, ids, 8), fw[k].lps);
		assert_true(acpi_checksum_ok(madt, mlen) && acpi_checksum_ok(fadt, flen));
		assert_int_equal(im.bad_sums, 0);	/* nothing to warn of */
		acpi_image_free(&im);
	}
}

/* D8: the RSDT's signature and length are checked; a length near 2^32 does not wrap. */
static void broken_root_table_is_not_read(void **state)
{
	static const struct {
		unsigned off;
		uint32_t value;
		bool fix;
	} cases[] = {
		{ 0, 0x54445358, true },	/* "XSDT" in an RSDP revision 0's RSDT slot */
		{ 4, 0xfffffff0, true },	/* length near 2^32: off + width wrapped */
		{ 4, 0xfffffffc, false },
		{ 4, 35, true },		/* shorter than its header */
		{ 4, 4096, true },		/* longer than the memory it is in */
	};

	(void)state;
	for (unsigned k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct acpi_image im;
		unsigned c;
		uint8_t *rsdt;

		load_image(&im, "qemu-q35-seabios");
		assert_non_null(find(&im, "APIC"));
		rsdt = chunk_of(&im, "RSDT", &c);
		wr32(rsdt + cases[k].off, cases[k].value);
		if (cases[k].fix && cases[k].value <= im.len[c])
			fix_sum(rsdt, cases[k].value < 36 || cases[k].off != 4 ? im.len[c] : cases[k].value, 9);
		assert_null(find(&im, "APIC"));
		assert_null(find(&im, "FACP"));
		acpi_image_free(&im);
	}
}

/*
 * G10: a MADT whose checksum is wrong (real BIOSes ship them) is taken, as
 * ACPICA takes it, and reported with its address and sum; one longer than
 * its memory, or with another signature, is still not there.
 */
static void madt_with_a_wrong_checksum_is_taken_and_reported(void **state)
{
	struct acpi_image im;
	const uint8_t *t;
	uint32_t len = 0, ids[8];
	unsigned c;
	uint8_t *madt;

	(void)state;
	load_image(&im, "qemu-q35-seabios");
	madt = chunk_of(&im, "APIC", &c);
	madt[44 + 8 + 3] ^= 4;			/* LP1's APIC ID 1 -> 5, checksum not fixed */
	t = acpi_find_in(&im.mem, im.rsdp, "APIC", &len);
	assert_ptr_equal(t, madt);
	assert_int_equal(len, im.len[c]);
	assert_false(acpi_checksum_ok(t, len));
	assert_int_equal(im.bad_sums, 1);
	assert_ptr_equal(im.bad_table, madt);
	assert_int_equal(im.bad_addr, im.addr[c]);
	assert_int_equal(im.bad_sum, 4);	/* the bytes now sum to what was added */
	assert_int_equal(topo_madt_lapics(t, len, ids, 8), 2);
	assert_int_equal(ids[1], 5);		/* the table as it is */
	assert_non_null(find(&im, "FACP"));	/* the others: nothing reported */
	assert_int_equal(im.bad_sums, 1);
	fix_sum(madt, im.len[c], 9);
	im.bad_sums = 0;
	assert_non_null(find(&im, "APIC"));	/* the same change with its checksum: taken */
	assert_int_equal(im.bad_sums, 0);	/* and not reported */
	wr32(madt + 4, im.len[c] + 8);		/* longer than the table's memory */
	fix_sum(madt, im.len[c], 9);
	assert_null(find(&im, "APIC"));
	wr32(madt + 4, 35);			/* shorter than its header */
	assert_null(find(&im, "APIC"));
	wr32(madt + 4, im.len[c]);
	madt[0] = 'X';				/* a wrong signature, checksum wrong too */
	assert_null(find(&im, "APIC"));
	assert_int_equal(im.bad_sums, 0);
	acpi_image_free(&im);
}

/* G10: a root table (RSDT) with a wrong checksum is walked too, and reported. */
static void root_table_with_a_wrong_checksum_is_walked(void **state)
{
	struct acpi_image im;
	unsigned c;
	uint8_t *rsdt, was;

	(void)state;
	load_image(&im, "qemu-q35-seabios");
	rsdt = chunk_of(&im, "RSDT", &c);
	was = rsdt[9];
	rsdt[9] ^= 0x5a;			/* the checksum byte itself */
	assert_non_null(find(&im, "APIC"));
	assert_int_equal(im.bad_sums, 1);
	assert_ptr_equal(im.bad_table, rsdt);
	assert_int_equal(im.bad_sum, (uint8_t)(rsdt[9] - was));
	acpi_image_free(&im);
}

/* Two views of one address: the header read alone, and the whole table read. */
static uint8_t view_head[36], view_whole[64];

static const uint8_t *two_views(void *ctx, uint64_t addr, uint64_t len)
{
	(void)ctx;
	if (addr != 0x1000)
		return NULL;
	return len <= sizeof(view_head) ? view_head : len <= sizeof(view_whole) ? view_whole : NULL;
}

/*
 * With checksums not deciding, the table as read whole must still carry the
 * signature and length its header gave (memory that changed, or a view
 * that maps the two reads differently); else it is not there.
 */
static void table_must_say_what_its_header_said(void **state)
{
	const struct acpi_mem m = { .at = two_views };
	uint32_t len = 0;

	(void)state;
	memcpy(view_head, "APIC", 4);
	wr32(view_head + 4, 64);
	memcpy(view_whole, "APIC", 4);
	wr32(view_whole + 4, 64);
	assert_ptr_equal(acpi_table_at(&m, 0x1000, "APIC", &len), view_whole);
	assert_int_equal(len, 64);
	wr32(view_whole + 4, 48);		/* the whole table says 48 */
	assert_null(acpi_table_at(&m, 0x1000, "APIC", &len));
	wr32(view_whole + 4, 64);
	memcpy(view_whole, "FACP", 4);		/* another signature */
	assert_null(acpi_table_at(&m, 0x1000, "APIC", &len));
}

/*
 * An ACPI 2.0 RSDP: 36 bytes, the extended checksum over all of them, an
 * XSDT of 8-byte entries. Built from the q35 tables (their RSDT's entries
 * as an XSDT), since QEMU's firmware gives revision 0.
 */
static void rsdp_revision_2_and_xsdt(void **state)
{
	struct acpi_image im;
	uint8_t *rsdp, *rsdt, *xsdt;
	unsigned c, r, entries;

	(void)state;
	load_image(&im, "qemu-q35-seabios");
	rsdt = chunk_of(&im, "RSDT", &c);
	entries = (im.len[c] - 36) / 4;
	xsdt = calloc(1, 36 + 8 * entries);
	memcpy(xsdt, rsdt, 36);
	memcpy(xsdt, "XSDT", 4);
	wr32(xsdt + 4, 36 + 8 * entries);
	for (unsigned i = 0; i < entries; i++)
		memcpy(xsdt + 36 + 8 * i, rsdt + 36 + 4 * i, 4);
	fix_sum(xsdt, 36 + 8 * entries, 9);
	im.addr[im.n] = 0x7fff0000;
	im.len[im.n] = 36 + 8 * entries;
	im.data[im.n++] = xsdt;
	rsdp = chunk_of(&im, "RSD PTR ", &r);
	free(im.data[r]);
	im.data[r] = rsdp = calloc(1, 36);
	im.len[r] = 36;
	memcpy(rsdp, "RSD PTR ", 8);
	rsdp[15] = 2;
	wr32(rsdp + 16, 0x12345678);		/* no RSDT there: only the XSDT can work */
	wr32(rsdp + 20, 36);
	wr32(rsdp + 24, 0x7fff0000);
	fix_sum(rsdp, 20, 8);
	fix_sum(rsdp, 36, 32);
	assert_true(acpi_rsdp_valid(rsdp, 36));
	assert_false(acpi_rsdp_valid(rsdp, 35));	/* revision 2 needs all 36 bytes */
	assert_non_null(find(&im, "APIC"));
	rsdp[33] ^= 1;				/* a reserved byte: only the extended checksum sees it */
	assert_true(acpi_rsdp_valid(rsdp, 20) == false);
	assert_false(acpi_rsdp_valid(rsdp, 36));
	assert_null(find(&im, "APIC"));
	rsdp[33] ^= 1;
	wr32(rsdp + 20, 0xffffffff);		/* its length past the memory */
	fix_sum(rsdp, 20, 8);
	assert_false(acpi_rsdp_valid(rsdp, 36));
	assert_null(find(&im, "APIC"));
	acpi_image_free(&im);
}

/*
 * D6: the \_S5_ search read up to 8 bytes past a DSDT that ends inside the
 * package. Each DSDT below is a heap block of exactly its length.
 */
static void truncated_dsdt_is_not_read_past(void **state)
{
	static const uint8_t tails[][12] = {
		{ 8, 0x08, '\\', '_', 'S', '5', '_', 0x12, 0xc0 },	/* PkgLength of 4 bytes, cut */
		{ 9, 0x08, '_', 'S', '5', '_', 0x12, 0xc0, 0, 0 },	/* the same, one byte on */
		{ 7, 0x08, '_', 'S', '5', '_', 0x12, 0x06 },		/* cut after PkgLength */
		{ 9, 0x08, '_', 'S', '5', '_', 0x12, 0x06, 0x04, 0x0a },	/* BytePrefix, no byte */
		{ 4, 0x08, '_', 'S', '5' },				/* cut inside the name */
		{ 10, 0x08, '_', 'S', '5', '_', 0x12, 0x06, 0x04, 0x0a, 0x05 },	/* only SLP_TYPa */
	};
	int a, b;

	(void)state;
	for (unsigned k = 0; k < sizeof(tails) / sizeof(tails[0]); k++) {
		uint32_t len = 36 + tails[k][0];
		uint8_t *d = calloc(1, len);

		memcpy(d, "DSDT", 4);
		wr32(d + 4, len);
		memcpy(d + 36, tails[k] + 1, tails[k][0]);
		assert_false(acpi_s5(d, len, &a, &b));
		free(d);
	}
	{
		static const uint8_t whole[] = { 0x08, '_', 'S', '5', '_', 0x12, 0x06, 0x04,
						 0x0a, 0x05, 0x01 };
		uint8_t *d = calloc(1, 36 + sizeof(whole));

		memcpy(d + 36, whole, sizeof(whole));
		assert_true(acpi_s5(d, 36 + sizeof(whole), &a, &b));
		assert_int_equal(a, 5);
		assert_int_equal(b, 1);
		free(d);
	}
}

/*
 * The MP table SeaBIOS builds (QEMU -smp 2): one processor entry, the BSP
 * (the MADT lists both), and a broken checksum refused.
 */
static void mp_table_from_seabios(void **state)
{
	uint8_t buf[1024];
	uint32_t ids[8];
	FILE *f = fopen(CORPUS "mptable/qemu-q35-seabios", "rb");
	size_t n;

	(void)state;
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	assert_int_equal(topo_mp_lapics(buf, n, ids, 8), 1);
	assert_int_equal(ids[0], 0);
	buf[44 + 1] ^= 1;
	assert_int_equal(topo_mp_lapics(buf, n, ids, 8), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(real_tables_are_found),
		cmocka_unit_test(broken_root_table_is_not_read),
		cmocka_unit_test(madt_with_a_wrong_checksum_is_taken_and_reported),
		cmocka_unit_test(root_table_with_a_wrong_checksum_is_walked),
		cmocka_unit_test(table_must_say_what_its_header_said),
		cmocka_unit_test(rsdp_revision_2_and_xsdt),
		cmocka_unit_test(truncated_dsdt_is_not_read_past),
		cmocka_unit_test(mp_table_from_seabios),
	};

	return cmocka_run_group_tests_name("acpi", tests, NULL, NULL);
}
