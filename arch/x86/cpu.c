/*
 * cpu.c - CPU identification, IA32_MISC_ENABLE, deliberate faults, halt.
 *
 * cpu_read_cpuid() only executes CPUID; decoding (DisplayFamily/Model,
 * HTT, brand) is arch/x86/cpuid.c's job so it can be tested on the host.
 * The arch_raise_* functions each execute one faulting instruction for the
 * shell's `fault` command; the exception handler either unwinds the
 * guarded command or, for int3, resumes after it.
 */
#include <stddef.h>

#include "arch/x86/arch.h"
#include "arch/x86/bootinfo.h"
#include "arch/x86/cpu.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/lapic.h"
#include "arch/x86/msr.h"
#include "arch/x86/timer.h"
#include "lib/printf.h"

static struct cpuid_regs cpu_cpuid(uint32_t leaf, uint32_t subleaf)
{
	return cpuid_count(leaf, subleaf);
}

static const struct cpuid_source cpu_source = {
	.cpuid = cpu_cpuid, .rdmsr = msr_read_safe, .wrmsr = msr_write_safe,
};

static bool limit_cleared;	/* IA32_MISC_ENABLE[22] was set and is cleared */

/* Leaf 4 unhidden first (cpuid_fill_unlimited): topology and `cpu` see the cores. */
void cpu_read_cpuid(struct cpuid_raw *raw)
{
	if (cpuid_fill_unlimited(&cpu_source, raw))
		limit_cleared = true;
}

int cpu_read_misc_enable(uint64_t *value)
{
	return msr_read_safe(MSR_IA32_MISC_ENABLE, value);
}

bool cpu_in_hypervisor(void)
{
	return (cpuid_count(1, 0).ecx & CPUID_1_ECX_HYPERVISOR) != 0;
}

void arch_halt(void)
{
	for (;;)
		__asm__ volatile("cli; hlt");
}

void arch_raise_de(void)
{
	__asm__ volatile("xorl %%ecx, %%ecx\n\t"
			 "movl $1, %%eax\n\t"
			 "xorl %%edx, %%edx\n\t"
			 "divl %%ecx"
			 : : : "eax", "ecx", "edx", "memory");
}

void arch_raise_ud(void)
{
	__asm__ volatile("ud2" : : : "memory");
}

/* arch_raise_gp() depends on the mode: arch/x86/64/mode.c, arch/x86/32/mode.c. */

void arch_raise_pf(void)
{
	__asm__ volatile("mov (%0), %%eax" : : "r"((uintptr_t)ARCH_UNMAPPED_ADDR) : "eax", "memory");
}

void arch_raise_bp(void)
{
	__asm__ volatile("int3" : : : "memory");
}

static const char *booted_by;

/* The build-id note, first in .data (linker.ld, linker32.ld, linker-multiboot.ld). */
extern const uint8_t __build_id_start[], __build_id_end[];

void cpu_identify(struct cpu_info *out)
{
	struct cpuid_raw raw;

	cpu_read_cpuid(&raw);
	cpuid_decode(&raw, out);
	out->limit_cleared = limit_cleared;
	out->misc_enable_ok = cpu_read_misc_enable(&out->misc_enable) == 0;
	if (!out->misc_enable_ok)
		out->misc_enable = 0;
	out->tsc_hz = timer_tsc_hz();
	out->lapic_ok = lapic_present();
	out->lapic_id = out->lapic_ok ? lapic_id() : 0;
	out->booted_by = booted_by;
	out->kernel_mode = MODE_NAME;
	out->build_id = buildid_parse(__build_id_start, (size_t)(__build_id_end - __build_id_start),
				      &out->build_id_len);
	buildid_hex(out->build_id, out->build_id_len, out->build_id_hex);
}

/*
 * UEFI firmware starts only applications of its own width, so under UEFI
 * the kernel's mode says which firmware booted it; GRUB from a BIOS starts
 * the ia32 kernel's Multiboot build.
 */
void cpu_set_boot_method(uint32_t method, const char *loader_name)
{
	static char mb[96];	/* the text below and a 31-character name */

	if (method == BOOT_METHOD_MULTIBOOT) {
		if (loader_name[0])
			ksnprintf(mb, sizeof(mb), "legacy BIOS (Multiboot, nbprof32.elf, loaded by %s)",
				  loader_name);
		else
			ksnprintf(mb, sizeof(mb), "legacy BIOS (Multiboot, nbprof32.elf)");
		booted_by = mb;
	} else
		booted_by = MODE_IS_64 ? "UEFI x64 (EFI/BOOT/BOOTX64.EFI)"
				       : "UEFI ia32 (EFI/BOOT/BOOTIA32.EFI)";
}
