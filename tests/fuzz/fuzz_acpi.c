/*
 * fuzz_acpi.c - the ACPI table walk (arch/x86/acpi_tables.c) over tables
 * as physical memory (tests/fuzz/acpi_image.h: an RSDP address, then
 * chunks of address, length and bytes; the seeds are the tables QEMU's
 * SeaBIOS and OVMF build, dumped by tests/fuzz/firmware_tables.py).
 *
 * When the input's last byte is odd, every
 * table's checksum (and the RSDP's two) is made right before the walk, so
 * the fuzzer gets past the checksums to the structure behind them.
 * Contract checked (acpi.h): every table handed back lies whole inside one
 * chunk (and each chunk is a heap block of its size, so no read strays),
 * carries the signature asked for, is at least its header long, and sums
 * to 0 or was the last table reported through bad_sum, with its sum; every
 * table reported lies inside one chunk and its bytes sum to the sum
 * reported, never 0; the DSDT is one too; the \_S5_ search and the MADT
 * walk stay inside their tables and give at most as many processors as
 * asked, no APIC ID twice.
 */
#include "arch/x86/topology.h"
#include "tests/fuzz/acpi_image.h"
#include "tests/fuzz/fuzz.h"

static void fix_sum(uint8_t *t, uint32_t len, uint32_t cs)
{
	uint8_t s = 0;

	if (cs >= len)
		return;
	t[cs] = 0;
	for (uint32_t i = 0; i < len; i++)
		s = (uint8_t)(s + t[i]);
	t[cs] = (uint8_t)-s;
}

static void fix_checksums(struct acpi_image *im)
{
	for (unsigned i = 0; i < im->n; i++) {
		uint8_t *t = im->data[i];
		uint32_t n = im->len[i];

		if (n >= 36 && memcmp(t, "RSD PTR ", 8) == 0) {
			fix_sum(t, 20, 8);
			if (t[15] >= 2 && acpi_rd32(t + 20) <= n)
				fix_sum(t, acpi_rd32(t + 20), 32);
		} else if (n >= 20 && memcmp(t, "RSD PTR ", 8) == 0) {
			fix_sum(t, 20, 8);
		} else if (n >= 36) {
			fix_sum(t, acpi_rd32(t + 4) <= n ? acpi_rd32(t + 4) : n, 9);
		}
	}
}

static bool inside_a_chunk(const struct acpi_image *im, const uint8_t *t, uint32_t len)
{
	for (unsigned i = 0; i < im->n; i++)
		if (t >= im->data[i] && t + len <= im->data[i] + im->len[i] && len <= im->len[i])
			return true;
	return false;
}

static uint8_t sum_of(const uint8_t *t, uint32_t len)
{
	uint8_t s = 0;

	for (uint32_t i = 0; i < len; i++)
		s = (uint8_t)(s + t[i]);
	return s;
}

/* A table reported with a wrong checksum: inside a chunk, and its bytes sum to what is said. */
static void on_bad_sum(void *ctx, uint64_t addr, const uint8_t *t, uint8_t sum)
{
	struct acpi_image *im = ctx;
	uint32_t len = acpi_rd32(t + 4);

	fuzz_check(inside_a_chunk(im, t, len) && len >= ACPI_SDT_HEADER_LEN);
	fuzz_check(sum != 0 && sum_of(t, len) == sum);
	acpi_image_bad_sum(ctx, addr, t, sum);
}

/*
 * A table the walk handed back: whole inside one chunk, its signature and
 * length; a wrong checksum only if it was reported, last, with that sum.
 */
static void check_table(const struct acpi_image *im, const uint8_t *t, uint32_t len,
			const char *sig)
{
	uint8_t s = sum_of(t, len);

	fuzz_check(inside_a_chunk(im, t, len));
	fuzz_check(len >= ACPI_SDT_HEADER_LEN && memcmp(t, sig, 4) == 0 && acpi_rd32(t + 4) == len);
	fuzz_check(acpi_checksum_ok(t, len) == (s == 0));
	if (s != 0)
		fuzz_check(im->bad_sums > 0 && im->bad_table == t && im->bad_sum == s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const sigs[] = { "FACP", "APIC", "HPET", "MCFG", "XXXX" };
	struct acpi_image im;
	const uint8_t *fadt = NULL, *t;
	uint32_t len, flen = 0;

	acpi_image_parse(&im, data, size);
	im.mem.bad_sum = on_bad_sum;
	if (size && (data[size - 1] & 1))
		fix_checksums(&im);
	for (unsigned k = 0; k < sizeof(sigs) / sizeof(sigs[0]); k++) {
		len = 0;
		t = acpi_find_in(&im.mem, im.rsdp, sigs[k], &len);
		if (!t)
			continue;
		check_table(&im, t, len, sigs[k]);
		if (k == 0)
			fadt = t, flen = len;
		if (k == 1) {
			uint32_t ids[TOPO_MAX_LPS];
			int n = topo_madt_lapics(t, len, ids, TOPO_MAX_LPS);

			fuzz_check(n <= TOPO_MAX_LPS);
			for (int i = 0; i < n; i++)
				for (int j = 0; j < i; j++)
					fuzz_check(ids[i] != ids[j]);
		}
	}
	if (fadt) {
		t = acpi_dsdt(&im.mem, fadt, flen, &len);
		if (t) {
			int a = -1, b = -1;

			check_table(&im, t, len, "DSDT");
			if (acpi_s5(t, len, &a, &b))
				fuzz_check(a >= 0 && a <= 255 && b >= 0 && b <= 255);
		}
	}
	for (unsigned i = 0; i < im.n; i++)
		acpi_rsdp_valid(im.data[i], im.len[i]);
	acpi_image_free(&im);
	return 0;
}
