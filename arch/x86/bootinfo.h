/*
 * bootinfo.h - the one structure that crosses from boot/ (UEFI) to the kernel.
 *
 * boot/efi_main.c fills it before and right after ExitBootServices (or
 * boot/multiboot.c from what GRUB passes, ia32 kernel only) and hands
 * it to kmain(); after that nothing in the kernel calls or trusts firmware.
 * The memory map is converted to our own region types (enum boot_mem_type) and
 * normalised (arch/x86/memmap.h): sorted, no overlaps, the stricter type wins
 * where firmware entries overlap, adjacent regions of the same type merged. Physical addresses are identity
 * mapped. Everything here is fixed-width so that the struct reads the same in
 * a later ia32 build.
 */
#ifndef NBPROF_ARCH_X86_BOOTINFO_H
#define NBPROF_ARCH_X86_BOOTINFO_H

#include <stdint.h>

enum boot_mem_type {
	BMEM_FREE,		/* conventional memory, ours to use */
	BMEM_BOOT,		/* firmware boot-services code/data: reclaimable once we
				   run on our own stack and page tables */
	BMEM_LOADER,		/* the kernel image and what boot/ allocated */
	BMEM_ACPI,		/* ACPI tables (reclaimable after parsing; kept) */
	BMEM_ACPI_NVS,		/* ACPI non-volatile storage: never touch */
	BMEM_RUNTIME,		/* firmware runtime services: never touch */
	BMEM_MMIO,		/* memory-mapped I/O the firmware reported */
	BMEM_RESERVED,		/* reserved, unusable, anything unknown */
	BMEM_NTYPES,
};

struct boot_region {
	uint64_t base;
	uint64_t size;		/* bytes, a multiple of 4 KiB */
	uint32_t type;		/* enum boot_mem_type */
	uint32_t pad;
};

struct boot_framebuffer {
	uint64_t base;		/* 0 when there is no GOP framebuffer */
	uint64_t size;
	uint32_t width, height;
	uint32_t stride;	/* pixels per scan line */
	uint32_t format;	/* EFI_GRAPHICS_PIXEL_FORMAT */
};

#define BOOT_MAX_REGIONS	512
#define BOOT_CFG_MAX		8192
#define BOOT_STACK_SIZE		(64 * 1024)
#define BOOT_IST_SIZE		(16 * 1024)

#define BOOT_MAX_FILES		8	/* files read from the ESP's nbprof/ folder */
#define BOOT_FILE_NAME		32	/* ASCII, NUL-terminated */
#define BOOT_FILE_MAX		(4u << 20)

/* A file of the nbprof/ folder (a user's program), in EfiLoaderData pages. */
struct boot_file {
	uint64_t base;			/* 0 when it could not be read (status says why) */
	uint64_t size;
	int32_t status;			/* 0, or enum boot_cfg_status */
	uint32_t pad;
	char name[BOOT_FILE_NAME];
};

enum boot_ist {
	BOOT_IST_NMI,
	BOOT_IST_DF,
	BOOT_IST_MC,
	BOOT_NIST,
};

struct bootinfo {
	uint64_t image_base;		/* where the firmware loaded us */
	uint64_t image_size;
	uint64_t stack_base;		/* BSP kernel stack, BOOT_STACK_SIZE bytes */
	uint64_t ist_base[BOOT_NIST];	/* IST stacks, BOOT_IST_SIZE bytes each */
	uint64_t low_page;		/* one 4 KiB page below 1 MiB (AP trampoline), 0 if none */
	uint64_t rsdp;			/* ACPI RSDP physical address, 0 if none */
	uint32_t rsdp_revision;		/* 0 = ACPI 1.0 (RSDT only), 2 = XSDT present */
	uint32_t efi_map_entries;	/* descriptors in the firmware map */
	uint32_t ebs_attempts;		/* ExitBootServices calls until it succeeded */
	uint32_t nregions;
	struct boot_framebuffer fb;
	struct boot_region regions[BOOT_MAX_REGIONS];
	uint32_t cfg_len;		/* bytes of nbprof.cfg, 0 if absent */
	int32_t cfg_status;		/* 0, or why it could not be read (see boot_cfg_error) */
	char cfg[BOOT_CFG_MAX];		/* raw file text, not terminated */
	uint32_t nfiles;		/* entries of files[] */
	uint32_t files_skipped;		/* files past BOOT_MAX_FILES, or with too long a name */
	struct boot_file files[BOOT_MAX_FILES];
	uint32_t boot_method;		/* enum boot_method */
	uint32_t pad;
	uint64_t mp_config;		/* MP configuration table ("PCMP"), 0 if none (BIOS only) */
	char loader_name[32];		/* Multiboot loader's name, "" if none (BIOS only) */
};

/* How the kernel was started: by UEFI (boot/efi_main.c) or GRUB (boot/multiboot.c). */
enum boot_method {
	BOOT_METHOD_UEFI,
	BOOT_METHOD_MULTIBOOT,
};

/* cfg_status values */
enum boot_cfg_status {
	BOOT_CFG_OK,
	BOOT_CFG_ABSENT,
	BOOT_CFG_TOO_BIG,
	BOOT_CFG_READ_ERROR,
};

/* The kernel's entry point, called on the kernel's own stack. */
void kmain(struct bootinfo *bi) __attribute__((noreturn));

#endif
