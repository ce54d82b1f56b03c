/*
 * acpi.c - the kernel's view of ACPI tables: identity-mapped physical
 * memory, read only below the end of what a pointer reaches and never at
 * address 0; the checked walk is arch/x86/acpi_tables.c. A table taken with
 * a wrong checksum is named in the log once (acpi_check_tables looks up the
 * ones the kernel reads at boot, so the line is in the boot log).
 */
#include "arch/x86/acpi.h"
#include "arch/x86/console.h"

/* End of what a pointer reaches: 4 GiB with 32-bit pointers. */
#define ACPI_POINTER_LIMIT	(sizeof(uintptr_t) < 8 ? UINT64_C(1) << 32 : UINT64_MAX)
#define ACPI_BAD_SUM_MAX	8	/* tables remembered as already reported */

static uint64_t bad_sum_seen[ACPI_BAD_SUM_MAX];
static unsigned bad_sum_count;

static const uint8_t *acpi_identity(void *ctx, uint64_t addr, uint64_t len)
{
	(void)ctx;
	if (addr == 0 || addr >= ACPI_POINTER_LIMIT || len > ACPI_POINTER_LIMIT - addr)
		return NULL;
	return (const uint8_t *)(uintptr_t)addr;
}

static void acpi_bad_sum(void *ctx, uint64_t addr, const uint8_t *t, uint8_t sum)
{
	(void)ctx;
	for (unsigned i = 0; i < bad_sum_count; i++)
		if (bad_sum_seen[i] == addr)
			return;
	if (bad_sum_count < ACPI_BAD_SUM_MAX)
		bad_sum_seen[bad_sum_count++] = addr;
	kprintf("acpi: warning: %c%c%c%c table at %#llx has a wrong checksum (its bytes sum to "
		"%02XH, not 0); used anyway, as ACPICA does\n", t[0], t[1], t[2], t[3],
		(unsigned long long)addr, sum);
}

const struct acpi_mem acpi_kernel_mem = { .at = acpi_identity, .bad_sum = acpi_bad_sum };

const uint8_t *acpi_find_table(uint64_t rsdp, const char *sig, uint32_t *len)
{
	return acpi_find_in(&acpi_kernel_mem, rsdp, sig, len);
}

void acpi_check_tables(uint64_t rsdp)
{
	uint32_t len, flen;
	const uint8_t *fadt = rsdp ? acpi_find_table(rsdp, "FACP", &flen) : NULL;

	if (fadt)
		acpi_dsdt(&acpi_kernel_mem, fadt, flen, &len);
	if (rsdp)
		acpi_find_table(rsdp, "APIC", &len);
}
