/*
 * programs_k.c - the kernel side of user programs: pages for a program's
 * file and image, loading and replacing, and a fresh image before each run.
 *
 * Pages come from the kernel's page allocator (arch/x86/mem.c), which hands
 * out identity-mapped memory, so an image's runtime address is where its
 * pages are. Program symbols are registered as ksym_lookup's fallback
 * (arch/x86/ksyms.h), so fault reports, report, annotate and script name
 * addresses inside programs by the program's own functions.
 */
#include "arch/x86/ksyms.h"
#include "arch/x86/mem.h"
#include "lib/crc32.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "workload/program.h"

static uint64_t pages_of(uint64_t bytes)
{
	return (bytes + MEM_PAGE_SIZE - 1) / MEM_PAGE_SIZE;
}

static void program_free(struct program *p)
{
	if (p->file)
		mem_free_pages((uint64_t)(uintptr_t)p->file, pages_of(p->file_len));
	if (p->base)
		mem_free_pages(p->base, p->pages);
	*p = (struct program){ 0 };
}

static struct program *program_free_slot(const char *name)
{
	struct program *same = program_find(name);

	if (same)
		return same;
	for (unsigned i = 0; i < PROGRAM_MAX; i++)
		if (!program_slot(i)->used)
			return program_slot(i);
	return NULL;
}

int program_add(const char *name, const uint8_t *file, size_t len, bool flat, uint64_t entry_off,
		const char *origin, char *err, size_t errlen)
{
	struct program n = { 0 }, *slot;
	uint64_t copy;

	if (program_name_check(name, err, errlen))
		return -1;
	if (len == 0 || len > PROGRAM_FILE_MAX)
		return ksnprintf(err, errlen, "%s: %lu bytes: a program is 1 .. %u bytes", name,
				 (unsigned long)len, PROGRAM_FILE_MAX), -1;
	if (flat ? program_flat_check(len, entry_off, &n.layout, err, errlen)
		 : program_elf_check(file, len, &n.layout, err, errlen))
		return -1;
	if (!(slot = program_free_slot(name)))
		return ksnprintf(err, errlen, "%s: the program table is full (%u programs); "
				 "nothing was changed", name, PROGRAM_MAX), -1;
	n.pages = pages_of(n.layout.span) + PROGRAM_ARGV_PAGES;
	copy = mem_alloc_pages(pages_of(len));
	n.base = mem_alloc_pages(n.pages);
	n.file = (const uint8_t *)(uintptr_t)copy;
	n.file_len = len;
	if (!copy || !n.base) {
		program_free(&n);
		return ksnprintf(err, errlen, "%s: not enough free memory", name), -1;
	}
	memcpy((void *)(uintptr_t)copy, file, len);
	if (program_image_load(n.file, len, &n.layout, (uint8_t *)(uintptr_t)n.base, n.base, err,
			       errlen)) {
		program_free(&n);
		return -1;
	}
	ksnprintf(n.name, sizeof(n.name), "%s", name);
	n.crc = crc32(file, len);
	n.origin = origin;
	n.used = true;
	if (slot->used)
		program_free(slot);
	*slot = n;
	slot->wl = (struct workload){ .id = WL_PROGRAM, .name = slot->name,
				      .exercises = "a user's program (see 'programs')" };
	ksym_set_fallback(program_lookup);
	return 0;
}

int program_remove(const char *name)
{
	struct program *p = program_find(name);

	if (!p)
		return -1;
	program_free(p);
	return 0;
}

int program_prepare(const struct program *p, const struct workload_args *a, uint64_t *fn,
		    uint64_t *argv, char *err, size_t errlen)
{
	uint64_t argv_at = p->base + p->pages * MEM_PAGE_SIZE - PROGRAM_ARGV_PAGES * MEM_PAGE_SIZE;

	if (program_image_load(p->file, p->file_len, &p->layout, (uint8_t *)(uintptr_t)p->base,
			       p->base, err, errlen))
		return -1;
	*argv = program_build_argv(a, p->layout.word, (uint8_t *)(uintptr_t)argv_at, argv_at);
	*fn = p->base + p->layout.entry;
	return 0;
}

static void program_sym_match(void *ctx, uint64_t value, uint64_t size, const char *name)
{
	const char **want = ctx;

	(void)value, (void)size;
	if (*want && strcmp(*want, name) == 0)
		*want = NULL;
}

bool program_has_symbol(const struct program *p, const char *name)
{
	const char *want = name;

	if (p->layout.flat)
		return false;
	program_elf_symbols(p->file, p->file_len, program_sym_match, &want);
	return want == NULL;
}
