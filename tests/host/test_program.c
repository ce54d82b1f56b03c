/*
 * test_program.c - the user-program loader (workload/program.c), program
 * arguments, and the upload frame parser (workload/upload.c).
 *
 * The ELF files are real programs built with the SDK (sdk/nbprof-cc, see
 * the Makefile; SDK32_ELF_DIR holds the same built with -m32, ELF32 i386);
 * the expected addresses come from binutils' nm, not from the loader, and
 * the broken files are those programs with one field changed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/crc32.h"
#include "workload/program.h"
#include "workload/upload.h"
#include "workload/workload.h"

struct file {
	uint8_t *b;
	size_t n;
};

/* name in SDK_ELF_DIR, or "32/name" in SDK32_ELF_DIR */
static const char *sdk_path(const char *name, char *path, size_t n)
{
	if (strncmp(name, "32/", 3) == 0)
		snprintf(path, n, "%s/%s", SDK32_ELF_DIR, name + 3);
	else
		snprintf(path, n, "%s/%s", SDK_ELF_DIR, name);
	return path;
}

static struct file load(const char *name)
{
	char path[256];
	struct file f = { 0 };
	FILE *fp;

	sdk_path(name, path, sizeof(path));
	fp = fopen(path, "rb");
	assert_non_null(fp);
	f.b = malloc(1 << 20);
	f.n = fread(f.b, 1, 1 << 20, fp);
	fclose(fp);
	assert_true(f.n > 64);
	return f;
}

/* The value of symbol sym in nm's listing of the file (the oracle). */
static uint64_t nm_value(const char *name, const char *sym)
{
	char cmd[300], path[256], line[256], s[128], t;
	unsigned long long v;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm %s", sdk_path(name, path, sizeof(path)));
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, "%llx %c %127s", &v, &t, s) == 3 && strcmp(s, sym) == 0) {
			pclose(p);
			return v;
		}
	pclose(p);
	fail_msg("no symbol %s in %s", sym, name);
	return 0;
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static void sdk_program_layout_and_symbols(void **state)
{
	struct file f = load("hello.elf");
	struct program_layout l;
	char err[160];
	uint64_t off, main_at = nm_value("hello.elf", "main"), work;

	(void)state;
	assert_int_equal(program_elf_check(f.b, f.n, &l, err, sizeof(err)), 0);
	assert_int_equal(l.entry, nm_value("hello.elf", "_start"));
	assert_false(l.flat);
	assert_true(l.text_lo <= main_at && main_at < l.text_hi);
	assert_true(nm_value("hello.elf", "nb_sp0") < l.span);
	assert_int_equal(l.span % PROGRAM_PAGE, 0);
	assert_string_equal(program_elf_symbol(f.b, f.n, main_at, &off), "main");
	assert_int_equal(off, 0);
	assert_string_equal(program_elf_symbol(f.b, f.n, main_at + 5, &off), "main");
	assert_int_equal(off, 5);
	work = nm_value("hello.elf", "nb_count_start");
	assert_string_equal(program_elf_symbol(f.b, f.n, work + 1, &off), "nb_count_start");
	free(f.b);
}

static void relocations_add_the_load_base(void **state)
{
	struct file f = load("prog_reloc.elf");
	struct program_layout l;
	char err[160];
	const uint64_t base = 0x7a000000;
	uint8_t *img;
	uint64_t table = nm_value("prog_reloc.elf", "table");
	uint64_t words = nm_value("prog_reloc.elf", "words");

	(void)state;
	assert_int_equal(program_elf_check(f.b, f.n, &l, err, sizeof(err)), 0);
	img = malloc(l.span);
	memset(img, 0xee, l.span);
	assert_int_equal(program_image_load(f.b, f.n, &l, img, base, err, sizeof(err)), 0);
	assert_int_equal(rd64(img + table), base + nm_value("prog_reloc.elf", "one"));
	assert_int_equal(rd64(img + table + 8), base + nm_value("prog_reloc.elf", "two"));
	/* words[1] points at "beta" inside the image */
	assert_string_equal((const char *)img + (rd64(img + words + 8) - base), "beta");
	/* .bss (nb_sp0) is zeroed over the 0xee fill */
	assert_int_equal(rd64(img + nm_value("prog_reloc.elf", "nb_sp0")), 0);
	free(img);
	free(f.b);
}

/* Each broken copy is refused with a reason and leaves the layout alone. */
static void expect_refused(struct file *f, const char *reason)
{
	struct program_layout l = { .span = 12345 };
	char err[200] = "";

	if (program_elf_check(f->b, f->n, &l, err, sizeof(err)) != -1)
		fail_msg("accepted, expected a refusal saying '%s'", reason);
	if (!strstr(err, reason))
		fail_msg("error '%s' does not say '%s'", err, reason);
	assert_int_equal(l.span, 12345);
}

static void broken_files_are_refused(void **state)
{
	struct file f = load("hello.elf");
	struct file c = { malloc(f.n), f.n };
	uint64_t phoff;

	(void)state;
	memcpy(c.b, f.b, f.n);
	c.n = 40;
	expect_refused(&c, "shorter than an ELF header");
	c.n = f.n;
	c.b[1] = 'X';
	expect_refused(&c, "magic");
	memcpy(c.b, f.b, f.n);
	c.b[4] = 3;		/* no such class */
	expect_refused(&c, "not a little-endian ELF32 or ELF64 file");
	memcpy(c.b, f.b, f.n);
	c.b[18] = 3;		/* EM_386 in an ELF64 file */
	expect_refused(&c, "an ELF64 file for machine 3, not x86-64");
	memcpy(c.b, f.b, f.n);
	c.b[16] = 2;		/* ET_EXEC, linked at 0: outside the fixed-address window */
	expect_refused(&c, "linked at 0..0x2000: a fixed-address program must lie in "
		       "0x400000..0x800000");
	memcpy(c.b, f.b, f.n);
	phoff = rd64(c.b + 32);
	c.b[phoff] = 3;		/* the first program header becomes PT_INTERP */
	expect_refused(&c, "PT_INTERP");
	memcpy(c.b, f.b, f.n);
	c.b[phoff + 32] = 0xff, c.b[phoff + 33] = 0xff, c.b[phoff + 34] = 0xff;	/* filesz */
	expect_refused(&c, "outside the file");
	memcpy(c.b, f.b, f.n);
	memset(c.b + 24, 0x70, 4);	/* entry far outside any segment */
	expect_refused(&c, "entry point");
	free(c.b);
	free(f.b);
}

static void wr64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* Program header i's field at byte off (Elf64_Phdr: 8 offset, 16 vaddr, 32 filesz, 40 memsz). */
static uint8_t *phdr(struct file *f, unsigned i, unsigned off)
{
	return f->b + rd64(f->b + 32) + (uint64_t)i * 56 + off;
}

#define GUARD		0x10000u	/* bytes of guard before and after the image */
#define FILL		0xa5

/*
 * program_image_load of c with the good file's layout l into an image with
 * guards on both sides: refused, and not one byte written anywhere.
 */
static void expect_load_refused(struct file *c, const struct program_layout *l)
{
	size_t n = GUARD + l->span + GUARD;
	uint8_t *mem = malloc(n);
	char err[200] = "";

	memset(mem, FILL, n);
	assert_int_equal(program_image_load(c->b, c->n, l, mem + GUARD, 0x40000000, err,
					    sizeof(err)), -1);
	assert_true(err[0] != 0);
	for (size_t i = 0; i < n; i++)
		if (mem[i] != FILL)
			fail_msg("byte %zd from the image written after a refusal", (ssize_t)(i - GUARD));
	free(mem);
}

/*
 * D1: a PT_LOAD with p_memsz 0 was skipped by the checks but copied by the
 * loader: hello.elf's second program header (its .data, 0xD0 file bytes)
 * with p_vaddr -0xB000 or 2^47 and p_memsz 0 wrote before the image or
 * faulted. Every malformed PT_LOAD is refused, before anything is written.
 */
static void malformed_load_segments_are_refused_before_any_copy(void **state)
{
	static const struct {
		unsigned ph, field;
		uint64_t value;		/* AT_END: the file's length */
		bool memsz0;
		const char *reason;
	} cases[] = {
		{ 1, 16, -UINT64_C(0xb000), true, "p_filesz > p_memsz" },	/* the reported file */
		{ 1, 16, UINT64_C(1) << 47, true, "p_filesz > p_memsz" },	/* the #GP */
		{ 1, 16, 0x1000, true, "p_filesz > p_memsz" },
		{ 1, 32, 0xe1, false, "p_filesz > p_memsz" },			/* memsz is 0xe0 */
		{ 1, 8, UINT64_MAX, false, "outside the file" },		/* AT_END */
		{ 1, 8, UINT64_MAX - 8, false, "outside the file" },
		{ 1, 16, UINT64_MAX - 0x10, false, "wrap" },
		{ 1, 16, UINT64_C(1) << 47, false, "64 MiB" },
		{ 1, 16, 0x100, false, "overlap" },		/* .data inside the text segment */
		{ 0, 40, 0x1001, false, "overlap" },		/* text's memory over .data's first byte */
	};
	struct file f = load("hello.elf");
	struct file c = { malloc(f.n), f.n };
	struct program_layout l;
	char err[200];

	(void)state;
	assert_int_equal(program_elf_check(f.b, f.n, &l, err, sizeof(err)), 0);
	/* the SDK's layout, as readelf -l shows it: text at 0, .data+.bss at 0x1000, 0xd0/0xe0 */
	assert_int_equal(rd64(phdr(&f, 1, 16)), 0x1000);
	assert_int_equal(rd64(phdr(&f, 1, 32)), 0xd0);
	assert_int_equal(rd64(phdr(&f, 1, 40)), 0xe0);
	for (unsigned k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		uint64_t v = cases[k].value == UINT64_MAX ? f.n : cases[k].value;

		memcpy(c.b, f.b, f.n);
		wr64(phdr(&c, cases[k].ph, cases[k].field), v);
		if (cases[k].memsz0)
			wr64(phdr(&c, cases[k].ph, 40), 0);
		expect_refused(&c, cases[k].reason);
		expect_load_refused(&c, &l);
	}
	free(c.b);
	free(f.b);
}

/* An empty PT_LOAD (p_memsz 0, p_filesz 0) holds nothing: accepted wherever it claims to be. */
static void empty_load_segment_is_harmless(void **state)
{
	struct file f = load("hello.elf");
	struct program_layout l, le;
	char err[200];
	uint8_t *a, *b;

	(void)state;
	assert_int_equal(program_elf_check(f.b, f.n, &l, err, sizeof(err)), 0);
	a = malloc(l.span);
	b = malloc(l.span);
	assert_int_equal(program_image_load(f.b, f.n, &l, a, 0x40000000, err, sizeof(err)), 0);
	assert_int_equal(rd64(phdr(&f, 3, 0)) & 0xffffffff, 0x6474e551);	/* PT_GNU_STACK */
	wr64(phdr(&f, 3, 0), 1 | (uint64_t)6 << 32);	/* PT_LOAD, RW */
	wr64(phdr(&f, 3, 16), -UINT64_C(0xb000));
	assert_int_equal(program_elf_check(f.b, f.n, &le, err, sizeof(err)), 0);
	assert_memory_equal(&le, &l, sizeof(l));
	assert_int_equal(program_image_load(f.b, f.n, &l, b, 0x40000000, err, sizeof(err)), 0);
	/* the image holds the ELF headers (sdk/program.ld): all but the changed header agree */
	memcpy(a + rd64(f.b + 32) + 3 * 56, phdr(&f, 3, 0), 56);
	assert_memory_equal(a, b, l.span);
	wr64(phdr(&f, 3, 8), f.n + 1);		/* its offset past the end: malformed */
	expect_refused(&f, "outside the file");
	free(a);
	free(b);
	free(f.b);
}

/* The loader checks the file again: one that does not give the caller's layout writes nothing. */
static void load_refuses_a_file_that_is_not_the_checked_one(void **state)
{
	struct file f = load("hello.elf"), g = load("prog_reloc.elf");
	struct program_layout l;
	char err[200];

	(void)state;
	assert_int_equal(program_elf_check(f.b, f.n, &l, err, sizeof(err)), 0);
	l.span -= PROGRAM_PAGE;		/* a layout one page short of what the file needs */
	expect_load_refused(&f, &l);
	l.span += PROGRAM_PAGE;
	f.b[1] = 'X';			/* not an ELF file any more */
	expect_load_refused(&f, &l);
	(void)g;
	free(f.b);
	free(g.b);
}

/* psABI: only RELATIVE relocations can be applied without a symbol table. */
static void other_relocation_types_are_refused(void **state)
{
	struct file f = load("prog_reloc.elf");
	uint64_t shoff = rd64(f.b + 40);
	unsigned shnum = f.b[60] | f.b[61] << 8;

	(void)state;
	for (unsigned i = 0; i < shnum; i++) {
		uint8_t *sh = f.b + shoff + (uint64_t)i * 64;

		if (sh[4] == 4) {	/* SHT_RELA: first entry's type becomes R_X86_64_64 */
			f.b[rd64(sh + 24) + 8] = 1;
			expect_refused(&f, "relocation type 1");
			free(f.b);
			return;
		}
	}
	fail_msg("prog_reloc.elf has no SHT_RELA section");
}

/* The image prog_reloc.elf loads to at base, checked as relocations_add_the_load_base does. */
static void expect_relocated(struct file *f)
{
	struct program_layout l;
	char err[200] = "";
	const uint64_t base = 0x7a000000;
	uint64_t table = nm_value("prog_reloc.elf", "table");
	uint8_t *img;

	if (program_elf_check(f->b, f->n, &l, err, sizeof(err)))
		fail_msg("refused: %s", err);
	img = malloc(l.span);
	assert_int_equal(program_image_load(f->b, f->n, &l, img, base, err, sizeof(err)), 0);
	assert_int_equal(rd64(img + table), base + nm_value("prog_reloc.elf", "one"));
	assert_int_equal(rd64(img + table + 8), base + nm_value("prog_reloc.elf", "two"));
	free(img);
}

/* Section header k of type type (the first), or NULL. */
static uint8_t *section_of_type(struct file *f, unsigned type)
{
	uint64_t shoff = rd64(f->b + 40);
	unsigned shnum = f->b[60] | f->b[61] << 8;

	for (unsigned i = 0; i < shnum; i++)
		if (f->b[shoff + (uint64_t)i * 64 + 4] == type)
			return f->b + shoff + (uint64_t)i * 64;
	return NULL;
}

/* The file offset of dynamic entry tag in prog_reloc.elf's PT_DYNAMIC (phdr 2). */
static uint8_t *dyn_entry(struct file *f, uint64_t tag)
{
	uint8_t *dyn = f->b + rd64(phdr(f, 2, 8));

	assert_int_equal(rd64(phdr(f, 2, 0)) & 0xffffffff, 2);	/* PT_DYNAMIC */
	for (uint64_t k = 0; rd64(dyn + k) != 0; k += 16)
		if (rd64(dyn + k) == tag)
			return dyn + k;
	fail_msg("no dynamic tag %llu", (unsigned long long)tag);
	return NULL;
}

/*
 * D5: relocations are the table PT_DYNAMIC's DT_RELA names, as a dynamic
 * loader finds them. Without section headers (what --strip-sections
 * leaves) or with .rela.dyn's SHF_ALLOC cleared they were silently not
 * applied; a relocation section DT_RELA does not name, DT_RELR, DT_REL,
 * DT_NEEDED and PLT relocations are refused with the reason.
 */
static void relocations_come_from_the_dynamic_section(void **state)
{
	struct file f = load("prog_reloc.elf");
	struct file c = { malloc(f.n), f.n };
	uint8_t *sh;

	(void)state;
	expect_relocated(&f);
	memcpy(c.b, f.b, f.n);
	memset(c.b + 40, 0, 8);		/* e_shoff */
	memset(c.b + 58, 0, 6);		/* e_shentsize, e_shnum, e_shstrndx */
	expect_relocated(&c);

	memcpy(c.b, f.b, f.n);
	sh = section_of_type(&c, 4);	/* .rela.dyn */
	assert_non_null(sh);
	sh[8] &= (uint8_t)~2;		/* SHF_ALLOC cleared */
	expect_relocated(&c);

	memcpy(c.b, f.b, f.n);
	memset(dyn_entry(&c, 8) + 8, 0, 8);	/* DT_RELASZ 0: .rela.dyn named by nothing */
	expect_refused(&c, "does not name");

	static const struct {
		uint64_t tag, value;
		const char *reason;
	} tags[] = {
		{ 36, 0x100, "DT_RELR" },
		{ 17, 0xa8, "DT_REL" },
		{ 1, 1, "DT_NEEDED" },
		{ 23, 0xa8, "DT_JMPREL" },
	};
	for (unsigned k = 0; k < sizeof(tags) / sizeof(tags[0]); k++) {
		uint8_t *d;

		memcpy(c.b, f.b, f.n);
		d = dyn_entry(&c, 0x15);	/* DT_DEBUG, which the loader does not read */
		wr64(d, tags[k].tag);
		wr64(d + 8, tags[k].value);
		expect_refused(&c, tags[k].reason);
	}
	memcpy(c.b, f.b, f.n);
	wr64(dyn_entry(&c, 9) + 8, 16);		/* DT_RELAENT */
	expect_refused(&c, "24-byte");
	memcpy(c.b, f.b, f.n);
	wr64(dyn_entry(&c, 7) + 8, 0x1000 - 0x30);	/* DT_RELA across the end of the text bytes */
	expect_refused(&c, "not in a PT_LOAD");
	free(c.b);
	free(f.b);
}

static void flat_binaries(void **state)
{
	struct program_layout l = { 0 };
	uint8_t code[] = { 0x90, 0xb8, 7, 0, 0, 0, 0xc3 }, img[PROGRAM_PAGE];
	char err[100];

	(void)state;
	assert_int_equal(program_flat_check(sizeof(code), 1, &l, err, sizeof(err)), 0);
	assert_int_equal(l.entry, 1);
	assert_int_equal(l.span, PROGRAM_PAGE);
	assert_int_equal(program_image_load(code, sizeof(code), &l, img, 0x1000, err, sizeof(err)), 0);
	assert_memory_equal(img, code, sizeof(code));
	assert_int_equal(img[sizeof(code)], 0);
	assert_int_equal(program_flat_check(sizeof(code), sizeof(code), &l, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "entry offset"));
}

/* D3: dump's NBP: line carries the CRC-32 of its text, as NBS: lines do. */
static void nbp_line_is_crc_framed(void **state)
{
	struct program p = { .base = 0x7a001000, .pages = 3, .crc = 0x1234abcd,
			     .layout = { .vaddr0 = 0x1000 } };
	char line[PROGRAM_NBP_LINE_MAX], want[16];
	/* the span counts from base, the runtime address of link address 0: vaddr0 + 3 pages */
	const char *body = "NBP: hello base=7a000000 span=4000 crc=1234abcd";
	int n;

	(void)state;
	strcpy(p.name, "hello");
	n = program_nbp_line(&p, line, sizeof(line));
	assert_int_equal(n, (int)strlen(line));
	assert_memory_equal(line, body, strlen(body));
	snprintf(want, sizeof(want), "|%08X", crc32(body + 4, strlen(body) - 4));
	assert_string_equal(line + strlen(body), want);
	assert_int_equal(program_nbp_line(&p, line, strlen(body) + 9), -1);	/* no room */
	strcpy(p.name, "abcdefghijklmnopqrstuvw");	/* the longest name fits */
	p.base = UINT64_MAX, p.pages = UINT64_MAX / PROGRAM_PAGE;
	assert_true(program_nbp_line(&p, line, sizeof(line)) > 0);
}

static void names_are_checked(void **state)
{
	char err[120];

	(void)state;
	assert_int_equal(program_name_check("hello.elf", err, sizeof(err)), 0);
	assert_int_equal(program_name_check("loop", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "built-in"));
	assert_int_equal(program_name_check("a b", err, sizeof(err)), -1);
	assert_int_equal(program_name_check("", err, sizeof(err)), -1);
	assert_int_equal(program_name_check("abcdefghijklmnopqrstuvwxyz", err, sizeof(err)), -1);
}

/* A program in the table is a workload: found by name, takes any words, named in lookups. */
static void a_loaded_program_is_a_workload(void **state)
{
	struct file f = load("hello.elf");
	struct program *p = program_slot(2);
	struct workload_args a;
	char err[160], *argv[] = { "12", "x y" };
	uint8_t page[PROGRAM_PAGE];
	uint64_t off, main_at = nm_value("hello.elf", "main");
	const uint64_t base = 0x40000000;

	(void)state;
	assert_null(workload_find("hello"));
	*p = (struct program){ .file = f.b, .file_len = f.n, .base = base, .used = true };
	assert_int_equal(program_elf_check(f.b, f.n, &p->layout, err, sizeof(err)), 0);
	p->pages = p->layout.span / PROGRAM_PAGE + PROGRAM_ARGV_PAGES;
	strcpy(p->name, "hello");
	p->wl = (struct workload){ .id = WL_PROGRAM, .name = p->name };
	assert_ptr_equal(workload_find("hello"), &p->wl);
	assert_ptr_equal(program_of(&p->wl), p);
	assert_string_equal(program_lookup(base + main_at + 3, &off), "main");
	assert_int_equal(off, 3);
	assert_null(program_lookup(base + p->layout.text_hi, &off));	/* data, not code */
	assert_null(program_lookup(base - 1, &off));

	assert_int_equal(workload_parse_args(&p->wl, 2, argv, &a, err, sizeof(err)), 0);
	assert_int_equal(a.argc, 3);
	assert_int_equal(program_build_argv(&a, 8, page, 0x9000), 0x9000);
	for (unsigned i = 0; i < 3; i++) {
		static const char *const want[] = { "hello", "12", "x y" };
		uint64_t ptr = rd64(page + 8 * i);

		assert_true(ptr >= 0x9000 && ptr < 0x9000 + PROGRAM_PAGE);
		assert_string_equal((const char *)page + (ptr - 0x9000), want[i]);
	}
	assert_int_equal(rd64(page + 24), 0);	/* argv[argc] == NULL */
	*p = (struct program){ 0 };
	assert_null(workload_find("hello"));
	free(f.b);
}

static void too_many_program_arguments(void **state)
{
	struct workload w = { .id = WL_PROGRAM, .name = "p" };
	struct workload_args a = { .argc = 77 };
	char err[160], *argv[WORKLOAD_ARGV_MAX], big[200];

	(void)state;
	for (unsigned i = 0; i < WORKLOAD_ARGV_MAX; i++)
		argv[i] = "1";
	assert_int_equal(workload_parse_args(&w, WORKLOAD_ARGV_MAX, argv, &a, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "at most"));
	memset(big, 'z', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	argv[0] = big;
	assert_int_equal(workload_parse_args(&w, 1, argv, &a, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "exceed"));
	assert_int_equal(a.argc, 77);	/* untouched */
}

/* --- ELF32 i386 programs (nbprof-cc -m32) for the 32-bit kernel ---------------------- */

/* Refused by a kernel of kernel_bits with a reason that says reason. */
static void expect_refused_by(unsigned kernel_bits, struct file *f, const char *reason)
{
	struct program_layout l = { .span = 12345 };
	char err[200] = "";

	assert_int_equal(program_elf_check_for(kernel_bits, f->b, f->n, &l, err, sizeof(err)), -1);
	if (!strstr(err, reason))
		fail_msg("error '%s' does not say '%s'", err, reason);
	assert_int_equal(l.span, 12345);
}

/* Each kernel runs only its own class and says which build it wants. */
static void each_kernel_refuses_the_other_class(void **state)
{
	struct file f64 = load("hello.elf"), f32 = load("32/hello.elf");
	struct program_layout l;
	char err[200];

	(void)state;
	expect_refused_by(32, &f64, "a 64-bit program: this is the 32-bit kernel; build with "
			  "nbprof-cc -m32");
	expect_refused_by(64, &f32, "a 32-bit program: this is the 64-bit kernel; build with "
			  "nbprof-cc without -m32");
	/* the host's own build is the 64-bit kernel's check */
	assert_int_equal(program_elf_check(f32.b, f32.n, &l, err, sizeof(err)), -1);
	assert_int_equal(program_elf_check_for(32, f32.b, f32.n, &l, err, sizeof(err)), 0);
	assert_int_equal(program_elf_check_for(64, f64.b, f64.n, &l, err, sizeof(err)), 0);
	assert_int_equal(l.word, 8);
	free(f64.b);
	free(f32.b);
}

static void sdk32_program_layout_and_symbols(void **state)
{
	struct file f = load("32/hello.elf");
	struct program_layout l;
	char err[160];
	uint64_t off, main_at = nm_value("32/hello.elf", "main");

	(void)state;
	assert_int_equal(f.b[4], 1);		/* ELFCLASS32 */
	assert_int_equal(program_elf_check_for(32, f.b, f.n, &l, err, sizeof(err)), 0);
	assert_int_equal(l.word, 4);
	assert_int_equal(l.entry, nm_value("32/hello.elf", "_start"));
	assert_true(l.text_lo <= main_at && main_at < l.text_hi);
	assert_true(nm_value("32/hello.elf", "nb_sp0") < l.span);
	assert_string_equal(program_elf_symbol(f.b, f.n, main_at + 5, &off), "main");
	assert_int_equal(off, 5);
	assert_string_equal(program_elf_symbol(f.b, f.n, nm_value("32/hello.elf", "work") + 2, &off),
			    "work");
	assert_int_equal(off, 2);
	free(f.b);
}

/* R_386_RELATIVE: the addend is the word in the image (i386 psABI); base is added to it. */
static void relocations32_add_the_load_base(void **state)
{
	struct file f = load("32/prog_reloc.elf");
	struct program_layout l;
	char err[160];
	const uint64_t base = 0x7a000000;
	uint8_t *img;
	uint64_t table = nm_value("32/prog_reloc.elf", "table");
	uint64_t words = nm_value("32/prog_reloc.elf", "words");

	(void)state;
	assert_int_equal(program_elf_check_for(32, f.b, f.n, &l, err, sizeof(err)), 0);
	img = malloc(l.span);
	for (unsigned run = 0; run < 2; run++) {	/* reloaded before every run: the same image */
		memset(img, 0xee, l.span);
		assert_int_equal(program_image_load(f.b, f.n, &l, img, base, err, sizeof(err)), 0);
		assert_int_equal(rd32(img + table), base + nm_value("32/prog_reloc.elf", "one"));
		assert_int_equal(rd32(img + table + 4), base + nm_value("32/prog_reloc.elf", "two"));
		assert_string_equal((const char *)img + (rd32(img + words + 4) - base), "beta");
		assert_int_equal(rd32(img + nm_value("32/prog_reloc.elf", "nb_sp0")), 0);
	}
	free(img);
	free(f.b);
}

static void other_relocation_types32_are_refused(void **state)
{
	struct file f = load("32/prog_reloc.elf");
	uint32_t shoff = rd32(f.b + 32);
	unsigned shnum = f.b[48] | f.b[49] << 8;

	(void)state;
	for (unsigned i = 0; i < shnum; i++) {
		uint8_t *sh = f.b + shoff + (uint64_t)i * 40;

		if (sh[4] == 9) {	/* SHT_REL: first entry's type becomes R_386_32 */
			f.b[rd32(sh + 16) + 4] = 1;
			expect_refused_by(32, &f, "relocation type 1: only R_386_RELATIVE");
			sh[4] = 4;	/* SHT_RELA in an i386 file */
			expect_refused_by(32, &f, "SHT_RELA relocations (i386 uses REL)");
			free(f.b);
			return;
		}
	}
	fail_msg("32/prog_reloc.elf has no SHT_REL section");
}

/*
 * R_NONE asks for nothing, so its place is never checked: the loader must
 * not read it either (a REL entry's addend is the word at its place; an
 * R_NONE pointing 4 GiB away once made the loader read there).
 */
static void r_none_anywhere_is_skipped32(void **state)
{
	struct file f = load("32/prog_reloc.elf");
	uint32_t shoff = rd32(f.b + 32);
	unsigned shnum = f.b[48] | f.b[49] << 8;
	uint64_t table = nm_value("32/prog_reloc.elf", "table");
	const uint32_t base = 0x7a000000;
	struct program_layout l;
	char err[160];
	uint8_t *img;

	(void)state;
	for (unsigned i = 0; i < shnum; i++) {
		uint8_t *sh = f.b + shoff + (uint64_t)i * 40;
		uint8_t *rel;

		if (sh[4] != 9)		/* SHT_REL */
			continue;
		rel = f.b + rd32(sh + 16);
		/* the first entry: R_386_NONE at the last word below 4 GiB */
		rel[0] = 0xfc, rel[1] = 0xff, rel[2] = 0xff, rel[3] = 0xff;
		rel[4] = 0;
		assert_int_equal(program_elf_check_for(32, f.b, f.n, &l, err, sizeof(err)), 0);
		img = malloc(l.span);
		assert_int_equal(program_image_load(f.b, f.n, &l, img, base, err, sizeof(err)), 0);
		/* the other entries are still applied */
		assert_int_equal(rd32(img + table + 4), base + nm_value("32/prog_reloc.elf", "two"));
		free(img);
		free(f.b);
		return;
	}
	fail_msg("32/prog_reloc.elf has no SHT_REL section");
}

/* prog_reloc.elf -m32's dynamic entry tag (Elf32_Dyn: d_tag, d_val), found through PT_DYNAMIC. */
static uint8_t *dyn32_entry(struct file *f, uint32_t tag)
{
	uint32_t phoff = rd32(f->b + 28);
	unsigned phnum = f->b[44] | f->b[45] << 8;

	for (unsigned i = 0; i < phnum; i++) {
		const uint8_t *ph = f->b + phoff + i * 32;

		if (rd32(ph) != 2)	/* PT_DYNAMIC */
			continue;
		for (uint8_t *d = f->b + rd32(ph + 4); rd32(d) != 0; d += 8)
			if (rd32(d) == tag)
				return d;
	}
	fail_msg("no dynamic tag %u", tag);
	return NULL;
}

/* The i386 table is DT_REL's, found without section headers too; DT_RELA is refused. */
static void relocations32_come_from_the_dynamic_section(void **state)
{
	struct file f = load("32/prog_reloc.elf");
	struct program_layout l;
	char err[200];
	const uint64_t base = 0x7a000000;
	uint8_t *img, *d;
	uint64_t table = nm_value("32/prog_reloc.elf", "table");

	(void)state;
	memset(f.b + 32, 0, 4);		/* e_shoff */
	memset(f.b + 46, 0, 6);		/* e_shentsize, e_shnum, e_shstrndx */
	assert_int_equal(program_elf_check_for(32, f.b, f.n, &l, err, sizeof(err)), 0);
	img = malloc(l.span);
	assert_int_equal(program_image_load(f.b, f.n, &l, img, base, err, sizeof(err)), 0);
	assert_int_equal(rd32(img + table + 4), base + nm_value("32/prog_reloc.elf", "two"));
	assert_int_equal(rd32(dyn32_entry(&f, 19) + 4), 8);	/* DT_RELENT: Elf32_Rel */
	d = dyn32_entry(&f, 0x15);	/* DT_DEBUG becomes DT_RELA */
	memset(d, 0, 4);
	d[0] = 7;
	expect_refused_by(32, &f, "DT_RELA relocations (i386 uses REL)");
	d[0] = 0x15;			/* DT_DEBUG again */
	dyn32_entry(&f, 19)[4] = 16;	/* DT_RELENT 16: not an Elf32_Rel */
	expect_refused_by(32, &f, "8-byte Elf32_Rel entries");
	free(img);
	free(f.b);
}

/*
 * hello.elf made a fixed-address executable: ET_EXEC, every PT_LOAD and the
 * entry moved by shift. Its first PT_LOAD holds the ELF and program headers.
 */
static struct file fixed_copy(const struct file *f, uint64_t shift)
{
	struct file c = { malloc(f->n), f->n };
	uint64_t phoff = rd64(f->b + 32);
	unsigned phnum = f->b[56];

	memcpy(c.b, f->b, f->n);
	c.b[16] = 2;
	wr64(c.b + 24, rd64(c.b + 24) + shift);
	for (unsigned i = 0; i < phnum; i++) {
		uint8_t *ph = c.b + phoff + (uint64_t)i * 56;

		if (ph[0] == 1 || ph[0] == 2) {		/* PT_LOAD, PT_DYNAMIC */
			wr64(ph + 16, rd64(ph + 16) + shift);
			wr64(ph + 24, rd64(ph + 24) + shift);
		}
	}
	return c;
}

static void fixed_address_executables_are_loaded_where_linked(void **state)
{
	struct file f = load("hello.elf");
	struct file c = fixed_copy(&f, 0x400000), far = fixed_copy(&f, 0x7ff000);
	struct program_layout pie, l;
	char err[200] = "";
	uint8_t *img;

	(void)state;
	assert_int_equal(program_elf_check(f.b, f.n, &pie, err, sizeof(err)), 0);
	assert_int_equal(program_elf_check(c.b, c.n, &l, err, sizeof(err)), 0);
	assert_true(l.fixed && !pie.fixed);
	assert_int_equal(l.vaddr0, 0x400000);
	assert_int_equal(l.span, pie.span);
	assert_int_equal(l.entry, pie.entry);
	assert_int_equal(l.phdr, rd64(f.b + 32));	/* the headers at file offset 0 + e_phoff */
	assert_int_equal(l.phnum, f.b[56]);
	assert_int_equal(l.phent, 56);
	/* copied as linked: no relocation is applied, whatever the base */
	img = malloc(l.span);
	assert_int_equal(program_image_load(c.b, c.n, &l, img, 0x400000, err, sizeof(err)), 0);
	assert_memory_equal(img, c.b, 0x100);
	free(img);
	/* one page past the window's end */
	expect_refused(&far, "a fixed-address program must lie in 0x400000..0x800000");
	/* the 32-bit kernel keeps another window */
	expect_refused_by(32, &c, "a 64-bit program");
	free(c.b);
	free(far.b);
	free(f.b);
}

/* The class-generic checks refuse a broken ELF32 file as they refuse an ELF64 one. */
static void broken_elf32_files_are_refused(void **state)
{
	struct file f = load("32/hello.elf");
	struct file c = { malloc(f.n), f.n };
	uint32_t phoff = rd32(f.b + 28);

	(void)state;
	memcpy(c.b, f.b, f.n);
	c.n = 40;		/* more than e_ident, less than an Elf32_Ehdr (52) */
	expect_refused_by(32, &c, "shorter than an ELF header");
	c.n = f.n;
	c.b[18] = 62;		/* EM_X86_64 in an ELF32 file */
	expect_refused_by(32, &c, "an ELF32 file for machine 62, not i386");
	memcpy(c.b, f.b, f.n);
	c.b[16] = 2;		/* ET_EXEC, linked at 0 */
	expect_refused_by(32, &c, "a fixed-address program must lie in 0x8000000..0x8400000");
	memcpy(c.b, f.b, f.n);
	c.b[phoff] = 3;		/* PT_INTERP */
	expect_refused_by(32, &c, "PT_INTERP");
	memcpy(c.b, f.b, f.n);
	memset(c.b + phoff + 16, 0xff, 3);	/* p_filesz */
	expect_refused_by(32, &c, "outside the file");
	memcpy(c.b, f.b, f.n);
	memset(c.b + 24, 0x70, 4);	/* e_entry */
	expect_refused_by(32, &c, "entry point");
	free(c.b);
	free(f.b);
}

/* -m32 links libgcc: a 64-bit division calls its __udivdi3 inside the image, no new relocation. */
static void elf32_with_libgcc_loads(void **state)
{
	struct file f = load("32/prog_div64.elf");
	struct program_layout l;
	char err[160];
	uint64_t off, div = nm_value("32/prog_div64.elf", "__udivdi3");

	(void)state;
	assert_int_equal(program_elf_check_for(32, f.b, f.n, &l, err, sizeof(err)), 0);
	assert_true(l.text_lo <= div && div < l.text_hi);
	assert_string_equal(program_elf_symbol(f.b, f.n, div, &off), "__udivdi3");
	free(f.b);
}

/* argv of a 32-bit program: 4-byte pointers, NULL-terminated. */
static void argv32_has_4_byte_pointers(void **state)
{
	struct workload w = { .id = WL_PROGRAM, .name = "p" };
	struct workload_args a;
	char err[160], *argv[] = { "7", "zz" };
	uint8_t page[PROGRAM_PAGE];

	(void)state;
	assert_int_equal(workload_parse_args(&w, 2, argv, &a, err, sizeof(err)), 0);
	memset(page, 0xee, sizeof(page));
	assert_int_equal(program_build_argv(&a, 4, page, 0x9000), 0x9000);
	for (unsigned i = 0; i < 3; i++) {
		static const char *const want[] = { "p", "7", "zz" };
		uint32_t ptr = rd32(page + 4 * i);

		assert_true(ptr >= 0x9000 && ptr < 0x9000 + PROGRAM_PAGE);
		assert_string_equal((const char *)page + (ptr - 0x9000), want[i]);
	}
	assert_int_equal(rd32(page + 12), 0);	/* argv[argc] == NULL */
}

/* --- upload frames ---------------------------------------------------------------- */

static uint8_t file[1000], buf[1000];

static void fill_file(void)
{
	for (size_t i = 0; i < sizeof(file); i++)
		file[i] = (uint8_t)(i * 7 + 3);
}

static enum upload_result feed(struct upload *u, uint32_t seq)
{
	char line[UPLOAD_LINE_MAX], why[96];

	upload_encode(file, sizeof(file), seq, line);
	return upload_line(u, line, why, sizeof(why));
}

static void upload_whole_file(void **state)
{
	struct upload u;
	char why[96];

	(void)state;
	fill_file();
	memset(buf, 0, sizeof(buf));
	upload_init(&u, buf, sizeof(buf), crc32(file, sizeof(file)));
	assert_int_equal(u.frames, (sizeof(file) + UPLOAD_CHUNK - 1) / UPLOAD_CHUNK);
	for (uint32_t i = 0; i < u.frames; i++)
		assert_int_equal(feed(&u, i), UPLOAD_TAKEN);
	assert_int_equal(upload_line(&u, UPLOAD_END, why, sizeof(why)), UPLOAD_DONE);
	assert_true(upload_complete(&u));
	assert_memory_equal(buf, file, sizeof(file));
	assert_int_equal(upload_line(&u, "nbprof> ", why, sizeof(why)), UPLOAD_NOT_FRAME);
}

static void corrupted_frame_is_detected_and_resumed(void **state)
{
	struct upload u;
	char line[UPLOAD_LINE_MAX], why[96];

	(void)state;
	fill_file();
	upload_init(&u, buf, sizeof(buf), crc32(file, sizeof(file)));
	assert_int_equal(feed(&u, 0), UPLOAD_TAKEN);
	assert_int_equal(feed(&u, 1), UPLOAD_TAKEN);
	upload_encode(file, sizeof(file), 2, line);
	line[20] = line[20] == 'A' ? 'B' : 'A';		/* one payload character changed */
	assert_int_equal(upload_line(&u, line, why, sizeof(why)), UPLOAD_BROKEN);
	assert_non_null(strstr(why, "frame 2: CRC mismatch"));
	assert_int_equal(u.next, 2);
	assert_int_equal(feed(&u, 3), UPLOAD_BROKEN);	/* a later frame: 2 is missing */
	assert_int_equal(u.next, 2);
	assert_int_equal(feed(&u, 1), UPLOAD_REPEAT);	/* a resend of what is in */
	for (uint32_t i = 2; i < u.frames; i++)		/* the resumed transfer */
		assert_int_equal(feed(&u, i), UPLOAD_TAKEN);
	assert_true(upload_complete(&u));
	assert_memory_equal(buf, file, sizeof(file));
}

/* D9, as upload.h says: after a broken line, a frame that is next in order is kept. */
static void in_order_frames_after_a_broken_line_are_kept(void **state)
{
	struct upload u;
	char why[96];

	(void)state;
	fill_file();
	memset(buf, 0, sizeof(buf));
	upload_init(&u, buf, sizeof(buf), crc32(file, sizeof(file)));
	assert_int_equal(feed(&u, 0), UPLOAD_TAKEN);
	assert_int_equal(upload_line(&u, "NBU:!!!!", why, sizeof(why)), UPLOAD_BROKEN);	/* noise */
	assert_int_equal(u.next, 1);
	assert_int_equal(feed(&u, 2), UPLOAD_BROKEN);	/* out of order: dropped */
	assert_int_equal(feed(&u, 1), UPLOAD_TAKEN);	/* next in order: kept */
	for (uint32_t i = 2; i < u.frames; i++)
		assert_int_equal(feed(&u, i), UPLOAD_TAKEN);
	assert_true(upload_complete(&u));
	assert_memory_equal(buf, file, sizeof(file));
}

static void bad_lines_and_wrong_file_crc(void **state)
{
	struct upload u;
	char why[96];

	(void)state;
	fill_file();
	upload_init(&u, buf, sizeof(buf), crc32(file, sizeof(file)) ^ 1);
	assert_int_equal(upload_line(&u, "NBU:!!!!", why, sizeof(why)), UPLOAD_BROKEN);
	assert_int_equal(upload_line(&u, "NBU:QUJD", why, sizeof(why)), UPLOAD_BROKEN);	/* too short */
	for (uint32_t i = 0; i < u.frames; i++)
		assert_int_equal(feed(&u, i), UPLOAD_TAKEN);
	assert_false(upload_complete(&u));	/* every frame, but not the file that was announced */
	assert_int_equal(feed(&u, u.frames), UPLOAD_BROKEN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sdk_program_layout_and_symbols),
		cmocka_unit_test(relocations_add_the_load_base),
		cmocka_unit_test(broken_files_are_refused),
		cmocka_unit_test(malformed_load_segments_are_refused_before_any_copy),
		cmocka_unit_test(empty_load_segment_is_harmless),
		cmocka_unit_test(load_refuses_a_file_that_is_not_the_checked_one),
		cmocka_unit_test(other_relocation_types_are_refused),
		cmocka_unit_test(relocations_come_from_the_dynamic_section),
		cmocka_unit_test(flat_binaries),
		cmocka_unit_test(nbp_line_is_crc_framed),
		cmocka_unit_test(fixed_address_executables_are_loaded_where_linked),
		cmocka_unit_test(names_are_checked),
		cmocka_unit_test(a_loaded_program_is_a_workload),
		cmocka_unit_test(too_many_program_arguments),
		cmocka_unit_test(each_kernel_refuses_the_other_class),
		cmocka_unit_test(sdk32_program_layout_and_symbols),
		cmocka_unit_test(relocations32_add_the_load_base),
		cmocka_unit_test(other_relocation_types32_are_refused),
		cmocka_unit_test(r_none_anywhere_is_skipped32),
		cmocka_unit_test(relocations32_come_from_the_dynamic_section),
		cmocka_unit_test(broken_elf32_files_are_refused),
		cmocka_unit_test(argv32_has_4_byte_pointers),
		cmocka_unit_test(elf32_with_libgcc_loads),
		cmocka_unit_test(upload_whole_file),
		cmocka_unit_test(corrupted_frame_is_detected_and_resumed),
		cmocka_unit_test(in_order_frames_after_a_broken_line_are_kept),
		cmocka_unit_test(bad_lines_and_wrong_file_crc),
	};

	return cmocka_run_group_tests_name("program", tests, NULL, NULL);
}
