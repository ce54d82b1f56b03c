/*
 * multiboot_mods.c - nbprof.cfg and users' programs from the Multiboot
 * modules (multiboot_mods.h).
 */
#include <stdbool.h>
#include <stddef.h>

#include "arch/x86/multiboot_mods.h"
#include "lib/string.h"

#define PROGRAM_DIR_LEN		(sizeof(MB_PROGRAM_DIR) - 1)

/* The last word of a module's command line (GRUB may put the file's path first). */
static const char *mb_module_word(const struct mb_module *m, mb_at_fn at)
{
	const char *s = m->string ? at(m->string) : NULL, *w = s;

	if (!s)
		return "";
	for (; *s; s++)
		if (*s == ' ' && s[1] && s[1] != ' ')
			w = s + 1;
	return w;
}

/* The program's name (what follows "nbprof/" in the last word), or NULL when m is no program. */
static const char *mb_program_name(const struct mb_module *m, mb_at_fn at)
{
	const char *w = mb_module_word(m, at);

	return strncmp(w, MB_PROGRAM_DIR, PROGRAM_DIR_LEN) == 0 ? w + PROGRAM_DIR_LEN : NULL;
}

/* nbprof.cfg: the first module, when it is not a program. */
static void mb_read_cfg(struct bootinfo *bi, const struct mb_module *m, uint32_t count, mb_at_fn at)
{
	uint32_t len;

	bi->cfg_status = BOOT_CFG_ABSENT;
	if (count == 0 || mb_program_name(m, at) || m->end < m->start)
		return;
	len = m->end - m->start;
	if (len > BOOT_CFG_MAX) {
		bi->cfg_status = BOOT_CFG_TOO_BIG;
		return;
	}
	if (len)
		memcpy(bi->cfg, at(m->start), len);
	bi->cfg_len = len;
	bi->cfg_status = BOOT_CFG_OK;
}

/* The programs' modules as the files kmain loads (boot/efi_main.c reads the same from the ESP). */
static void mb_read_programs(struct bootinfo *bi, const struct mb_module *m, uint32_t count,
			     mb_at_fn at)
{
	for (uint32_t i = 0; i < count; i++, m++) {
		const char *name = mb_program_name(m, at);	/* before any byte past "nbprof/" is read */
		struct boot_file *f;
		size_t n;

		if (!name)
			continue;
		n = strnlen(name, BOOT_FILE_NAME);
		if (bi->nfiles >= BOOT_MAX_FILES || n == 0 || n >= BOOT_FILE_NAME) {
			bi->files_skipped++;
			continue;
		}
		f = &bi->files[bi->nfiles];
		memcpy(f->name, name, n + 1);
		f->size = m->end >= m->start ? m->end - m->start : 0;
		f->status = f->size == 0 || f->size > BOOT_FILE_MAX ? BOOT_CFG_TOO_BIG : BOOT_CFG_OK;
		f->base = f->status == BOOT_CFG_OK ? m->start : 0;
		bi->nfiles++;
	}
}

void mb_read_modules(struct bootinfo *bi, const struct mb_module *mods, uint32_t count, mb_at_fn at)
{
	mb_read_cfg(bi, mods, count, at);
	mb_read_programs(bi, mods, count, at);
}
