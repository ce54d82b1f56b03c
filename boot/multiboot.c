/*
 * multiboot.c - the ia32 kernel's start from a legacy BIOS: GRUB (i386-pc)
 * loads nbprof32.elf with the Multiboot protocol and jumps to
 * multiboot_entry.S, which calls multiboot_main().
 *
 * What boot/efi_main.c gets from UEFI comes from elsewhere here:
 *  - the memory map from the Multiboot information (Multiboot 0.6.96
 *    section 3.3, flags bit 6: mmap_addr/mmap_length, entries of size,
 *    base, length, type with type 1 = RAM, 3 = ACPI reclaimable, 4 = ACPI
 *    NVS), read and normalised by arch/x86/memmap.c (a firmware map may
 *    overlap itself); the kernel image [__image_start, __image_end) is
 *    listed as loader memory, which wins over the RAM it lies in;
 *  - the ACPI RSDP by the BIOS-area scan (ACPI 6.x 5.2.5.1): the first KiB
 *    of the EBDA (segment at 40EH), then E0000H-FFFFFH, on 16-byte
 *    boundaries, "RSD PTR " with valid checksums (arch/x86/acpi.h);
 *  - the MP configuration table (MultiProcessor Specification 1.4, 4.1) by
 *    the same kind of scan for the floating pointer "_MP_": the first KiB of
 *    the EBDA, the last KiB of base memory, F0000H-FFFFFH; arch/x86/smp.c
 *    falls back on it to find the sibling when there is no ACPI MADT;
 *  - nbprof.cfg as the first Multiboot module (flags bit 3), copied whole;
 *  - users' programs (the ESP's nbprof/ folder under UEFI) as the modules
 *    whose command line ends in a word "nbprof/NAME" (tools/build/mkimage's
 *    GRUB script); their memory is kept out of the free RAM, as the image is,
 *    until kmain has loaded them (both read by arch/x86/multiboot_mods.c);
 *  - stacks from the image's own .bss; the sibling's start-up page is the
 *    highest free page below 9F000H, below the EBDA (segment at 40EH) and
 *    below the base memory size at 413H, whatever E820 says of them
 *    (arch/x86/memmap.h, memmap_low_page).
 *
 * Before any of that, mb_refuse() checks what the 32-bit kernel cannot do
 * without - CPUID, a local APIC and PAE (CPUID.01H:EDX bits 9 and 6),
 * MB_MIN_RAM of RAM above 1 MiB - and on a machine that lacks one prints
 * why on COM1 and on the VGA text screen GRUB leaves behind (B8000H, 80x25)
 * and halts, instead of faulting later. A CPU that is not a NetBurst part
 * is not refused: the kernel says so and the shell still works.
 *
 * Nothing here calls the BIOS: GRUB has left real mode for good.
 */
#include <stdbool.h>
#include <stddef.h>

#include "arch/x86/acpi.h"
#include "arch/x86/arch.h"
#include "arch/x86/bootinfo.h"
#include "arch/x86/cpu.h"
#include "arch/x86/memmap.h"
#include "arch/x86/multiboot_mods.h"
#include "arch/x86/screen.h"
#include "arch/x86/serial.h"
#include "lib/string.h"

#define MB_BOOTLOADER_MAGIC	0x2badb002u
#define MB_INFO_MODS		(1u << 3)
#define MB_INFO_MMAP		(1u << 6)
#define MB_INFO_LOADER_NAME	(1u << 9)
#define MB_MIN_RAM		(16u << 20)	/* kernel, page tables, stacks, sample store */

#define CPUID_EDX_PAE		(1u << 6)
#define CPUID_EDX_APIC		(1u << 9)
#define EFLAGS_ID		(1u << 21)
#define VGA_ATTR		0x4f00u		/* white on red */
#define COM1			0x3f8

#define PAGE			0x1000u
#define EBDA_SEG_PTR		0x40e
#define BASE_MEM_KIB_PTR	0x413
#define BIOS_ROM_START		0xe0000u
#define BIOS_ROM_END		0x100000u
#define RSDP_CHECKSUM_LEN	20
#define MP_FP_LEN		16
#define BASE_MEM_LAST_KIB	0x9fc00u
#define BIOS_F_SEGMENT		0xf0000u

struct mb_info {
	uint32_t flags;
	uint32_t mem_lower, mem_upper;
	uint32_t boot_device;
	uint32_t cmdline;
	uint32_t mods_count, mods_addr;
	uint32_t syms[4];
	uint32_t mmap_length, mmap_addr;
	uint32_t drives_length, drives_addr;
	uint32_t config_table;
	uint32_t boot_loader_name;	/* flags bit 9: a C string */
} __attribute__((packed));

void multiboot_main(uint32_t magic, const struct mb_info *mbi) __attribute__((noreturn));

extern char __image_start[] __attribute__((visibility("hidden")));
extern char __image_end[] __attribute__((visibility("hidden")));

static struct bootinfo bootinfo;
static uint8_t boot_stack[BOOT_STACK_SIZE] __attribute__((aligned(4096)));
static uint8_t boot_ist[BOOT_NIST][BOOT_IST_SIZE] __attribute__((aligned(4096)));

/* The firmware's map as read, before memmap_normalize; the image is one more region. */
static struct boot_region mb_raw[BOOT_MAX_REGIONS];

/*
 * The map is read by memmap_multiboot (entry sizes checked, the walk
 * bounded) and normalised: overlapping RAM entries merged, a reserved or
 * ACPI entry wins over RAM that covers it, and the kernel image
 * [__image_start, __image_end) and the programs' modules are loader memory,
 * which wins over RAM too.
 */
static void mb_memory_map(struct bootinfo *bi, const struct mb_info *mbi)
{
	uint64_t lo = (uintptr_t)__image_start & ~(uint64_t)(PAGE - 1);
	uint64_t hi = ((uintptr_t)__image_end + PAGE - 1) & ~(uint64_t)(PAGE - 1);
	uint32_t n = memmap_multiboot((const uint8_t *)(uintptr_t)mbi->mmap_addr, mbi->mmap_length,
				      mb_raw, BOOT_MAX_REGIONS - 1 - BOOT_MAX_FILES, &bi->efi_map_entries);

	mb_raw[n++] = (struct boot_region){ .base = lo, .size = hi - lo, .type = BMEM_LOADER };
	for (uint32_t i = 0; i < bi->nfiles; i++) {
		const struct boot_file *f = &bi->files[i];

		if (f->base == 0)
			continue;
		lo = f->base & ~(uint64_t)(PAGE - 1);
		hi = (f->base + f->size + PAGE - 1) & ~(uint64_t)(PAGE - 1);
		mb_raw[n++] = (struct boot_region){ .base = lo, .size = hi - lo, .type = BMEM_LOADER };
	}
	bi->nregions = memmap_normalize(mb_raw, n, bi->regions, BOOT_MAX_REGIONS);
}

static uint64_t mb_scan_rsdp(uintptr_t start, uintptr_t end)
{
	for (uintptr_t a = start & ~(uintptr_t)15; a + RSDP_CHECKSUM_LEN <= end; a += 16)
		if (acpi_rsdp_valid((const uint8_t *)a, end - a))
			return a;
	return 0;
}

/* A 16-bit word of the BIOS data area (low addresses GCC would take for a NULL offset). */
static uint16_t mb_bda_word(uintptr_t addr)
{
	const volatile uint16_t *p;

	__asm__("" : "=r"(p) : "0"(addr));
	return *p;
}

/*
 * The sibling's start-up page: free in the map and below the EBDA and the
 * BDA's base memory size (memmap_low_page), which E820 may not report.
 */
static uint64_t mb_low_page(const struct bootinfo *bi)
{
	struct bda_low bda = { .ebda_seg = mb_bda_word(EBDA_SEG_PTR),
			       .base_kib = mb_bda_word(BASE_MEM_KIB_PTR) };

	return memmap_low_page(bi->regions, bi->nregions, &bda);
}

static void mb_find_rsdp(struct bootinfo *bi)
{
	uintptr_t ebda = (uintptr_t)mb_bda_word(EBDA_SEG_PTR) << 4;
	uint64_t rsdp = 0;

	if (ebda >= 0x80000 && ebda < 0xa0000)
		rsdp = mb_scan_rsdp(ebda, ebda + 1024);
	if (!rsdp)
		rsdp = mb_scan_rsdp(BIOS_ROM_START, BIOS_ROM_END);
	bi->rsdp = rsdp;
	/* RSDP byte 15: revision, 2 or more with an XSDT (ACPI 6.x Table 5.3) */
	bi->rsdp_revision = rsdp && ((const uint8_t *)(uintptr_t)rsdp)[15] >= 2 ? 2 : 0;
}

/* The MP floating pointer at a: "_MP_", the table's address, length in 16-byte units, checksum. */
static uint64_t mb_mp_config_at(uintptr_t a)
{
	const uint8_t *p = (const uint8_t *)a;
	uint8_t sum = 0;
	uint32_t table;

	if (memcmp(p, "_MP_", 4) != 0 || p[8] != 1)
		return 0;
	for (unsigned i = 0; i < MP_FP_LEN; i++)
		sum += p[i];
	memcpy(&table, p + 4, sizeof(table));
	return sum == 0 ? table : 0;
}

static uint64_t mb_scan_mp(uintptr_t start, uintptr_t end)
{
	for (uintptr_t a = start; a + MP_FP_LEN <= end; a += 16) {
		uint64_t t = mb_mp_config_at(a);

		if (t)
			return t;
	}
	return 0;
}

static void mb_find_mp(struct bootinfo *bi)
{
	uintptr_t ebda = (uintptr_t)mb_bda_word(EBDA_SEG_PTR) << 4;
	uint64_t t = 0;

	if (ebda >= 0x80000 && ebda < 0xa0000)
		t = mb_scan_mp(ebda, ebda + 1024);
	if (!t)
		t = mb_scan_mp(BASE_MEM_LAST_KIB, BASE_MEM_LAST_KIB + 1024);
	if (!t)
		t = mb_scan_mp(BIOS_F_SEGMENT, BIOS_ROM_END);
	bi->mp_config = t;
}

/* Loader addresses are addresses: the kernel runs identity mapped, paging still off. */
static const void *mb_at(uint32_t addr)
{
	return (const void *)(uintptr_t)addr;
}

/*
 * The loader's name (GRUB: "GNU GRUB 2.06", iPXE: "iPXE 1.0.0+"), for `cpu`:
 * printable ASCII only, cut to fit; anything else ends it.
 */
static void mb_read_loader_name(struct bootinfo *bi, const struct mb_info *mbi)
{
	const char *s = (const char *)(uintptr_t)mbi->boot_loader_name;
	unsigned i = 0;

	if ((mbi->flags & MB_INFO_LOADER_NAME) && s)
		for (; i + 1 < sizeof(bi->loader_name) && s[i] >= 0x20 && s[i] < 0x7f; i++)
			bi->loader_name[i] = s[i];
	bi->loader_name[i] = '\0';
}

/* --- machines the kernel cannot serve --------------------------------------- */

/* One line on COM1 and on the VGA text screen (row `row`). */
static void mb_say(unsigned row, const char *msg)
{
	volatile uint16_t *vga = (volatile uint16_t *)(uintptr_t)VGA_COLOR_TEXT + row * VGA_COLS;
	unsigned i = 0;

	for (const char *p = msg; *p; p++) {
		serial_putc(*p);
		if (i < VGA_COLS)
			vga[i++] = VGA_ATTR | (uint8_t)*p;
	}
	serial_putc('\r');
	serial_putc('\n');
	while (i < VGA_COLS)
		vga[i++] = VGA_ATTR | ' ';
}

/* CPUID exists when EFLAGS.ID can be toggled (SDM Vol. 1 20.1.1, ID flag). */
static bool mb_has_cpuid(void)
{
	uint32_t a, b;

	__asm__ volatile("pushfl\n\t"
			 "pushfl\n\t"
			 "popl %0\n\t"
			 "movl %0, %1\n\t"
			 "xorl %2, %0\n\t"
			 "pushl %0\n\t"
			 "popfl\n\t"
			 "pushfl\n\t"
			 "popl %0\n\t"
			 "popfl"
			 : "=&r"(a), "=&r"(b) : "i"(EFLAGS_ID) : "cc");
	return ((a ^ b) & EFLAGS_ID) != 0;
}

static uint64_t mb_free_ram(const struct bootinfo *bi)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < bi->nregions; i++)
		if (bi->regions[i].type == BMEM_FREE && bi->regions[i].base >= 0x100000)
			n += bi->regions[i].size;
	return n;
}

/* Why this machine cannot run the kernel, or NULL. */
static const char *mb_refuse(const struct bootinfo *bi)
{
	uint32_t edx;

	if (!mb_has_cpuid())
		return "no CPUID instruction: not a Pentium 4 or later";
	edx = cpuid_count(1, 0).edx;
	if (!(edx & CPUID_EDX_APIC))
		return "no local APIC (CPUID.01H:EDX.APIC = 0): nbprof needs one for its interrupts";
	if (!(edx & CPUID_EDX_PAE))
		return "no PAE (CPUID.01H:EDX.PAE = 0): the 32-bit kernel pages with PAE";
	if (mb_free_ram(bi) < MB_MIN_RAM)
		return "less than 16 MiB of free RAM above 1 MiB";
	return NULL;
}

static void __attribute__((noreturn)) mb_stop(unsigned row, const char *why)
{
	mb_say(row, "nbprof cannot run on this machine:");
	mb_say(row + 1, why);
	mb_say(row + 2, "halted.");
	arch_halt();
}

static void mb_enter_kernel(void *arg)
{
	kmain(arg);
}

void multiboot_main(uint32_t magic, const struct mb_info *mbi)
{
	struct bootinfo *bi = &bootinfo;

	const char *why;

	serial_init(COM1, 115200);	/* for mb_say(); kmain sets the console up again */
	if (magic != MB_BOOTLOADER_MAGIC || !(mbi->flags & MB_INFO_MMAP))
		mb_stop(0, "not started by a Multiboot loader that passes a memory map");
	bi->boot_method = BOOT_METHOD_MULTIBOOT;
	bi->image_base = 0;	/* linked where it runs: link addresses are addresses */
	bi->image_size = (uintptr_t)__image_end - (uintptr_t)__image_start;
	bi->stack_base = (uintptr_t)boot_stack;
	for (int i = 0; i < BOOT_NIST; i++)
		bi->ist_base[i] = (uintptr_t)boot_ist[i];
	/* before the modules' memory counts as free: the programs' is kept out of it */
	mb_read_modules(bi, (const struct mb_module *)(uintptr_t)mbi->mods_addr,
			mbi->flags & MB_INFO_MODS ? mbi->mods_count : 0, mb_at);
	mb_read_loader_name(bi, mbi);
	mb_memory_map(bi, mbi);
	bi->low_page = mb_low_page(bi);
	mb_find_rsdp(bi);
	mb_find_mp(bi);
	why = mb_refuse(bi);
	if (why)
		mb_stop(0, why);
	arch_call_on_stack(bi->stack_base + BOOT_STACK_SIZE, mb_enter_kernel, bi);
}
