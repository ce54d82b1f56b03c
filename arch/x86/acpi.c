/*
 * acpi.c - the kernel's view of ACPI tables: identity-mapped physical
 * memory, read only below the end of what a pointer reaches and never at
 * address 0; the checked walk is arch/x86/acpi_tables.c.
 */
#include "arch/x86/acpi.h"

/* End of what a pointer reaches: 4 GiB with 32-bit pointers. */
#define ACPI_POINTER_LIMIT	(sizeof(uintptr_t) < 8 ? UINT64_C(1) << 32 : UINT64_MAX)

static const uint8_t *acpi_identity(void *ctx, uint64_t addr, uint64_t len)
{
	(void)ctx;
	if (addr == 0 || addr >= ACPI_POINTER_LIMIT || len > ACPI_POINTER_LIMIT - addr)
		return NULL;
	return (const uint8_t *)(uintptr_t)addr;
}

const struct acpi_mem acpi_kernel_mem = { .at = acpi_identity };

const uint8_t *acpi_find_table(uint64_t rsdp, const char *sig, uint32_t *len)
{
	return acpi_find_in(&acpi_kernel_mem, rsdp, sig, len);
}
