/*
 * power.c - reset and power-off without firmware services.
 *
 * Reset: pulse the CPU reset line through the 8042 keyboard controller
 * (command FEH to port 64H), then the chipset's Reset Control Register at
 * CF9H (bit 1 "system reset", bit 2 "reset CPU", bit 3 "full reset"; Intel
 * ICH data sheets), which QEMU's q35 also implements.
 *
 * Power-off under QEMU: the fw_cfg selector/data ports 510H/511H return
 * "QEMU" for key 0 (QEMU docs, fw_cfg.rst), and a write to the
 * isa-debug-exit port ends QEMU. On hardware: ACPI S5 (ACPI 6.x, 7.4.2 and
 * 16.1): find the FADT through the RSDP's XSDT (or RSDT), find the \_S5_
 * package in the DSDT's AML to get SLP_TYPa/SLP_TYPb, enable ACPI mode
 * through SMI_CMD if SCI_EN is clear, and write SLP_TYP | SLP_EN to PM1a_CNT
 * (and PM1b_CNT when present).
 */
#include <stddef.h>

#include "arch/x86/acpi.h"
#include "arch/x86/cpu.h"
#include "arch/x86/io.h"
#include "arch/x86/kbd.h"
#include "arch/x86/power.h"
#include "arch/x86/timer.h"
#include "lib/string.h"

#define KBC_CMD_RESET		0xfe
#define RST_CNT			0xcf9
#define RST_CNT_SYS_RST		0x02
#define RST_CNT_RST_CPU		0x04
#define RST_CNT_FULL_RST	0x08
#define FW_CFG_SELECTOR		0x510
#define FW_CFG_DATA		0x511
#define FW_CFG_SIGNATURE	0x0000

#define PM1_SCI_EN		(1u << 0)
#define PM1_SLP_TYP_SHIFT	10
#define PM1_SLP_TYP_MASK	(7u << 10)
#define PM1_SLP_EN		(1u << 13)

/* FADT field offsets (ACPI 6.x Table 5.9). */
#define FADT_SMI_CMD		48
#define FADT_ACPI_ENABLE	52
#define FADT_PM1A_CNT		64
#define FADT_PM1B_CNT		68

bool power_is_qemu(void)
{
	char sig[4];

	outw(FW_CFG_SELECTOR, FW_CFG_SIGNATURE);
	for (int i = 0; i < 4; i++)
		sig[i] = (char)inb(FW_CFG_DATA);
	return memcmp(sig, "QEMU", 4) == 0;
}

void power_reboot(void)
{
	for (int i = 0; i < 100000 && (inb(KBC_STATUS) & KBC_ST_IBF); i++)
		io_delay();
	outb(KBC_CMD, KBC_CMD_RESET);
	timer_udelay(100000);
	outb(RST_CNT, RST_CNT_SYS_RST);
	outb(RST_CNT, RST_CNT_SYS_RST | RST_CNT_RST_CPU | RST_CNT_FULL_RST);
	timer_udelay(100000);
}

static const char *power_off_acpi(uint64_t rsdp)
{
	const uint8_t *fadt, *dsdt;
	uint32_t pm1a, pm1b, smi_cmd, fadt_len, dsdt_len;
	int typa, typb;

	if (!rsdp)
		return "no ACPI RSDP from the firmware";
	fadt = acpi_find_table(rsdp, "FACP", &fadt_len);
	if (!fadt || fadt_len < FADT_PM1B_CNT + 4)
		return "no valid ACPI FADT";
	dsdt = acpi_dsdt(&acpi_kernel_mem, fadt, fadt_len, &dsdt_len);
	if (!dsdt || !acpi_s5(dsdt, dsdt_len, &typa, &typb))
		return "no \\_S5_ sleep state in the DSDT";
	pm1a = acpi_rd32(fadt + FADT_PM1A_CNT);
	pm1b = acpi_rd32(fadt + FADT_PM1B_CNT);
	smi_cmd = acpi_rd32(fadt + FADT_SMI_CMD);
	if (!pm1a)
		return "FADT has no PM1a control block";
	if (!(inw(pm1a) & PM1_SCI_EN) && smi_cmd && fadt[FADT_ACPI_ENABLE]) {
		outb(smi_cmd, fadt[FADT_ACPI_ENABLE]);
		for (int i = 0; i < 300 && !(inw(pm1a) & PM1_SCI_EN); i++)
			timer_udelay(10000);
	}
	outw(pm1a, (uint16_t)((inw(pm1a) & ~PM1_SLP_TYP_MASK) | typa << PM1_SLP_TYP_SHIFT | PM1_SLP_EN));
	if (pm1b)
		outw(pm1b, (uint16_t)((inw(pm1b) & ~PM1_SLP_TYP_MASK) | typb << PM1_SLP_TYP_SHIFT |
				      PM1_SLP_EN));
	timer_udelay(1000000);
	return "the machine did not power off after the ACPI S5 request";
}

const char *power_off(uint64_t rsdp, uint8_t qemu_status)
{
	if (power_is_qemu()) {
		outb(QEMU_DEBUG_EXIT_PORT, qemu_status);
		/* Without the isa-debug-exit device QEMU ignores the write: try ACPI. */
	}
	return power_off_acpi(rsdp);
}
