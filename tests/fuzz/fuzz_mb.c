/*
 * fuzz_mb.c - the Multiboot modules as nbprof.cfg and programs
 * (arch/x86/multiboot_mods.c), as boot/multiboot.c reads what GRUB passes.
 *
 * Input: the number of modules (byte 0, up to 16); per module two bytes,
 * the offset and length of its contents in the input (bit 7 of the offset
 * byte: no command line, address 0; length FFH: an end below the start);
 * the rest is the modules' command
 * lines, one after another, each ended by a NUL (a missing one is ""). Each
 * command line is a heap block of its exact length, the contents one copy
 * of the input, so a byte read past either is an ASan report. Contract
 * checked (multiboot_mods.h): the first module is nbprof.cfg, copied
 * whole, unless it is a program; every file is a module whose command line
 * ends in the word "nbprof/NAME", in module order, with NAME of 1..31
 * bytes, its memory and status as the module says; no more than
 * BOOT_MAX_FILES files, and files plus skipped ones no more than modules.
 */
#include <stdbool.h>

#include "arch/x86/multiboot_mods.h"
#include "tests/fuzz/fuzz.h"

#define MAX_MODS	16
#define STR_BASE	0x10000u	/* command line i at (i + 1) << 16 */
#define MEM_BASE	0x1000000u	/* the contents: input byte k at MEM_BASE + k */

static char *lines[MAX_MODS];
static uint8_t *mem;
static size_t mem_len;

static const void *at(uint32_t addr)
{
	if (addr >= MEM_BASE) {
		fuzz_check(addr - MEM_BASE <= mem_len);
		return mem + (addr - MEM_BASE);
	}
	fuzz_check(addr % STR_BASE == 0 && addr / STR_BASE >= 1 && addr / STR_BASE <= MAX_MODS);
	fuzz_check(lines[addr / STR_BASE - 1] != NULL);
	return lines[addr / STR_BASE - 1];
}

/* s ends in the word "nbprof/NAME": the word starts s or follows a blank. */
static bool ends_in_program(const char *s, const char *name)
{
	size_t ls = strlen(s), ln = strlen(name), lp = strlen(MB_PROGRAM_DIR);

	if (ls < lp + ln || strcmp(s + ls - ln, name) != 0 ||
	    strncmp(s + ls - ln - lp, MB_PROGRAM_DIR, lp) != 0)
		return false;
	return ls == lp + ln || s[ls - ln - lp - 1] == ' ';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct bootinfo bi;
	struct mb_module mods[MAX_MODS];
	uint32_t count, j = 0;
	size_t pos;

	if (size < 1)
		return 0;
	count = data[0] % (MAX_MODS + 1);
	if (size < 1 + 2 * (size_t)count)
		return 0;
	mem_len = size;
	mem = malloc(size);
	if (mem == NULL)
		abort();
	memcpy(mem, data, size);
	pos = 1 + 2 * (size_t)count;
	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *nul = memchr(data + pos, 0, size - pos);
		size_t n = nul ? (size_t)(nul - (data + pos)) : size - pos;
		uint32_t off = data[1 + 2 * i] & 0x7f, len = data[2 + 2 * i];

		lines[i] = fuzz_cstr(data + pos, n);
		pos += nul ? n + 1 : n;
		if (off > size)
			off = (uint32_t)size;
		if (len != 0xff && len > size - off)
			len = (uint32_t)(size - off);
		mods[i] = (struct mb_module){	/* length FFH: the end below the start */
			.start = MEM_BASE + off,
			.end = len == 0xff ? MEM_BASE + off - 1 : MEM_BASE + off + len,
			.string = data[1 + 2 * i] & 0x80 ? 0 : (i + 1) * STR_BASE,
		};
	}
	memset(&bi, 0, sizeof(bi));
	mb_read_modules(&bi, mods, count, at);

	if (count == 0)
		fuzz_check(bi.cfg_status == BOOT_CFG_ABSENT);
	else if (bi.cfg_status == BOOT_CFG_ABSENT && mods[0].end >= mods[0].start)
		fuzz_check(mods[0].string && strstr(lines[0], MB_PROGRAM_DIR));
	if (bi.cfg_status == BOOT_CFG_OK) {
		fuzz_check(count > 0 && mods[0].end >= mods[0].start);
		fuzz_check(bi.cfg_len == mods[0].end - mods[0].start);
		fuzz_check(memcmp(bi.cfg, at(mods[0].start), bi.cfg_len) == 0);
	}
	fuzz_check(bi.nfiles <= BOOT_MAX_FILES && bi.nfiles + bi.files_skipped <= count);
	for (uint32_t k = 0; k < bi.nfiles; k++) {
		const struct boot_file *f = &bi.files[k];
		size_t n = strnlen(f->name, BOOT_FILE_NAME);

		fuzz_check(n >= 1 && n < BOOT_FILE_NAME);
		while (j < count && !(mods[j].string && ends_in_program(lines[j], f->name)))
			j++;
		fuzz_check(j < count);
		fuzz_check(f->size == (mods[j].end >= mods[j].start ? mods[j].end - mods[j].start : 0));
		fuzz_check(f->status == (f->size && f->size <= BOOT_FILE_MAX ? BOOT_CFG_OK : BOOT_CFG_TOO_BIG));
		fuzz_check(f->base == (f->status == BOOT_CFG_OK ? mods[j].start : 0));
		if (k == 0 && j == 0)
			fuzz_check(bi.cfg_status == BOOT_CFG_ABSENT);	/* a program is never nbprof.cfg */
		j++;
	}
	for (uint32_t i = 0; i < count; i++) {
		free(lines[i]);
		lines[i] = NULL;
	}
	free(mem);
	return 0;
}
