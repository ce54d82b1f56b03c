/*
 * multiboot_mods.h - the Multiboot modules (0.6.96 section 3.3, flags bit 3)
 * as nbprof.cfg and users' programs, for boot/multiboot.c.
 *
 * tools/build/mkimage's grub.cfg loads nbprof.cfg and then each program as
 * a module whose command line ends in the word "nbprof/NAME". A module's
 * command line is not trusted: it may be missing (address 0), empty, or
 * any string the loader's configuration gave; nothing is read past its NUL.
 *
 * Portable (host-tested, fuzzed): the addresses the loader passes are
 * turned into pointers by `at` (the identity on the target).
 */
#ifndef NBPROF_ARCH_X86_MULTIBOOT_MODS_H
#define NBPROF_ARCH_X86_MULTIBOOT_MODS_H

#include <stdint.h>

#include "arch/x86/bootinfo.h"

#define MB_PROGRAM_DIR		"nbprof/"

/* One entry of the module list (mods_addr): physical addresses. */
struct mb_module {
	uint32_t start, end;
	uint32_t string;	/* the command line, a C string; 0 when none */
	uint32_t reserved;
} __attribute__((packed));

/* A physical address the loader passed, as a pointer. */
typedef const void *(*mb_at_fn)(uint32_t addr);

/*
 * mods[0..count) into bi: the first module, unless it is a program, is
 * nbprof.cfg (copied into bi->cfg, cfg_status says whether it fit); every
 * module whose command line's last word is "nbprof/NAME" is a program
 * (bi->files: NAME, its memory, status; files_skipped counts those past
 * BOOT_MAX_FILES or whose NAME is empty or BOOT_FILE_NAME long or more).
 */
void mb_read_modules(struct bootinfo *bi, const struct mb_module *mods, uint32_t count, mb_at_fn at);

#endif
