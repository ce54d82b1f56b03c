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
#include "workload/linux.h"
#include "workload/program.h"

static uint64_t pages_of(uint64_t bytes)
{
	return (bytes + MEM_PAGE_SIZE - 1) / MEM_PAGE_SIZE;
}

static void program_free(struct program *p)
{
	if (p->file)
		mem_free_pages((uint64_t)(uintptr_t)p->file, pages_of(p->file_len));
	if (p->base && !p->layout.fixed)
		mem_free_pages(p->base, p->pages);
	if (program_fixed_owner() == p)
		program_set_fixed_owner(NULL);
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

/* The arena of fixed-address programs' heap, mappings and stacks (linux.h): one, kept once made. */
static uint64_t fixed_arena;

/*
 * The fixed-address window (arch/x86/mem.h) must be free RAM on this
 * machine, and the arena allocated.
 */
static int program_fixed_usable(const char *name, char *err, size_t errlen)
{
	char why[80];

	if (!fixed_arena)
		fixed_arena = mem_alloc_pages(LINUX_ARENA_SIZE / MEM_PAGE_SIZE);
	if (!fixed_arena)
		return ksnprintf(err, errlen, "%s: not enough free memory for the heap and stack of a "
				 "fixed-address program (%u MiB)", name, LINUX_ARENA_SIZE >> 20), -1;
	if (mem_fixed_check(why, sizeof(why)) == 0)
		return 0;
	ksnprintf(err, errlen, "%s: a fixed-address program cannot be mapped at %#llx..%#llx: %s",
		  name, (unsigned long long)MEM_FIXED_LO,
		  (unsigned long long)(MEM_FIXED_LO + MEM_FIXED_SIZE), why);
	return -1;
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
	if (n.layout.fixed && program_fixed_usable(name, err, errlen))
		return -1;
	n.pages = pages_of(n.layout.span) + (n.layout.fixed ? 0 : PROGRAM_ARGV_PAGES);
	copy = mem_alloc_pages(pages_of(len));
	/* a fixed-address program is loaded into the window before each run, not here */
	n.base = n.layout.fixed ? n.layout.vaddr0 : mem_alloc_pages(n.pages);
	n.file = (const uint8_t *)(uintptr_t)copy;
	n.file_len = len;
	if (!copy || !n.base) {
		program_free(&n);
		return ksnprintf(err, errlen, "%s: not enough free memory", name), -1;
	}
	memcpy((void *)(uintptr_t)copy, file, len);
	if (!n.layout.fixed && program_image_load(n.file, len, &n.layout, (uint8_t *)(uintptr_t)n.base, n.base, err,
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

/* The window's one user at a time: any fixed-address program, on either LP. */
static uint32_t fixed_busy;

int program_prepare_fixed(const struct program *p, const struct workload_args *a,
			  const struct linux_ops *o, struct linux_proc *lx,
			  const uint8_t random[LINUX_RANDOM_BYTES], uint64_t hwcap,
			  uint64_t *fn, uint64_t *sp, char *err, size_t errlen)
{
	struct linux_start st = {
		.argc = a->argc, .argbuf = a->argbuf, .argbuf_len = sizeof(a->argbuf),
		.entry = p->base + p->layout.entry, .phdr = p->base + p->layout.phdr,
		.phent = p->layout.phent, .phnum = p->layout.phnum, .hwcap = hwcap,
	};

	if (program_fixed_usable(p->name, err, errlen))
		return -1;
	if (__atomic_exchange_n(&fixed_busy, 1, __ATOMIC_ACQUIRE))
		return ksnprintf(err, errlen, "%s", "a fixed-address program is running on the other "
				 "LP: they share the addresses they are linked at"), -1;
	memcpy(st.random, random, LINUX_RANDOM_BYTES);
	if (program_image_load(p->file, p->file_len, &p->layout, (uint8_t *)(uintptr_t)p->base,
			       p->base, err, errlen)) {
		program_release_fixed();
		return -1;
	}
	program_set_fixed_owner(p);
	linux_proc_init(lx, p->layout.word * 8u, MEM_FIXED_LO, MEM_FIXED_LO + MEM_FIXED_SIZE,
			fixed_arena);
	*fn = st.entry;
	*sp = linux_build_stack(lx, o, &st);
	if (*sp)
		return 0;
	program_release_fixed();
	return ksnprintf(err, errlen, "%s", "the program's stack could not be laid out"), -1;
}

void program_release_fixed(void)
{
	__atomic_store_n(&fixed_busy, 0, __ATOMIC_RELEASE);
}
