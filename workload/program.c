/*
 * program.c - load a user's program (static-PIE ELF or flat binary), keep
 * the table of loaded programs and name addresses inside them.
 *
 * ELF32 and ELF64 layouts and constants from the System V ABI (gABI,
 * "Object Files"), its x86-64 supplement (psABI 4.4: R_X86_64_RELATIVE = 8
 * in RELA entries, computed as B + A) and its i386 supplement (psABI
 * "Relocation": R_386_RELATIVE = 8 in REL entries, B + A with the addend A
 * held in the relocated word). The two classes differ only in field widths
 * and offsets: each header is read through its class's table (elf_fmts)
 * into one common form, so every check below applies to both. Every field
 * is read byte by byte, little-endian, and checked against the file's
 * length before use: the file came over a serial line.
 * The relocations are the table PT_DYNAMIC's DT_RELA (ELF64) or DT_REL
 * (ELF32) names (gABI "Dynamic Section"), as a dynamic loader finds them,
 * so a file without section headers loads the same; section headers are
 * read only for the symbols and to refuse relocations that table would
 * leave out.
 * Portable: compiled for the kernel and for the host tests.
 */
#include "lib/crc32.h"
#include "lib/parse.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "workload/program.h"

#define EI_NIDENT	16
#define ELFCLASS32	1
#define ELFCLASS64	2
#define ELFDATA2LSB	1
#define ET_EXEC		2
#define ET_DYN		3
#define EM_386		3
#define EM_X86_64	62
#define PT_LOAD		1
#define PT_DYNAMIC	2
#define PT_INTERP	3
#define PT_TLS		7
#define DT_NULL		0
#define DT_NEEDED	1
#define DT_PLTRELSZ	2
#define DT_RELA		7
#define DT_RELASZ	8
#define DT_RELAENT	9
#define DT_REL		17
#define DT_RELSZ	18
#define DT_RELENT	19
#define DT_JMPREL	23
#define DT_RELR		36
#define PF_X		1
#define SHT_SYMTAB	2
#define SHT_RELA	4
#define SHT_REL		9
#define SHF_ALLOC	2
#define STT_NOTYPE	0
#define STT_FUNC	2
#define SHN_LORESERVE	0xff00
#define R_NONE		0	/* R_X86_64_NONE, R_386_NONE */
#define R_RELATIVE	8	/* R_X86_64_RELATIVE, R_386_RELATIVE: B + A */

#define PROGRAM_SPAN_MAX (64u << 20)

static struct program programs[PROGRAM_MAX];
static const struct program *fixed_owner;

const struct program *program_fixed_owner(void)
{
	return fixed_owner;
}

void program_set_fixed_owner(const struct program *p)
{
	fixed_owner = p;
}

/*
 * A little-endian field of n bytes (ELFDATA2LSB, checked at the ELF
 * header): one load for the usual sizes, so a program's relocation (in
 * the counting window, before it runs) costs a few instructions a field.
 */
static uint64_t rd(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	uint32_t w;
	uint16_t h;

	switch (n) {
	case 8:
		__builtin_memcpy(&v, p, 8);
		return v;
	case 4:
		__builtin_memcpy(&w, p, 4);
		return w;
	case 2:
		__builtin_memcpy(&h, p, 2);
		return h;
	default:
		for (unsigned i = n; i-- > 0;)
			v = v << 8 | p[i];
		return v;
	}
}

static bool in_file(size_t len, uint64_t off, uint64_t n)
{
	return off <= len && n <= len - off;
}

static int fail(char *err, size_t errlen, const char *why)
{
	ksnprintf(err, errlen, "%s", why);
	return -1;
}

/*
 * One ELF class: the kernel that runs it, its machine and relocations, and
 * where its headers keep each field (gABI Figures "ELF Header", "Program
 * Header", "Section Header", "Symbol Table Entry", "Relocation Entries",
 * "Dynamic Structure"). A word is an address, offset or size: 4 bytes in
 * ELF32, 8 in ELF64. ELF32 i386 uses REL (DT_REL), ELF64 x86-64 RELA.
 */
struct elf_fmt {
	uint8_t ident, word, bits;		/* e_ident[EI_CLASS]; word bytes; kernel */
	uint16_t machine;
	const char *machine_name, *relative_name, *rel_name, *other_rel_name;
	uint32_t rel_sht, other_rel_sht;	/* its relocation sections; the other kind */
	uint32_t dt_rel, dt_relsz, dt_relent;	/* its table's dynamic tags */
	uint32_t dt_other, dt_other_sz;		/* the other kind's */
	uint8_t rel_size, rel_type_bits;	/* r_info's type: ELF32 low 8, ELF64 low 32 bits */
	bool rela;				/* explicit addend at 2 words (RELA) */
	uint8_t ehdr, e_phoff, e_shoff, e_phentsize, e_phnum, e_shentsize, e_shnum;
	uint8_t phdr, p_flags, p_offset, p_vaddr, p_filesz, p_memsz;
	uint8_t shdr, sh_flags, sh_offset, sh_size, sh_link, sh_info;
	uint8_t sym, st_value, st_size, st_info, st_shndx;
	uint8_t dyn;				/* d_tag, d_val: one word each */
};

static const struct elf_fmt elf_fmts[] = {
	{ .ident = ELFCLASS32, .word = 4, .bits = 32, .machine = EM_386, .machine_name = "i386",
	  .relative_name = "R_386_RELATIVE", .rel_name = "REL", .other_rel_name = "RELA",
	  .rel_sht = SHT_REL, .other_rel_sht = SHT_RELA,
	  .dt_rel = DT_REL, .dt_relsz = DT_RELSZ, .dt_relent = DT_RELENT,
	  .dt_other = DT_RELA, .dt_other_sz = DT_RELASZ,
	  .rel_size = 8, .rel_type_bits = 8, .rela = false,
	  .ehdr = 52, .e_phoff = 28, .e_shoff = 32, .e_phentsize = 42, .e_phnum = 44,
	  .e_shentsize = 46, .e_shnum = 48,
	  .phdr = 32, .p_flags = 24, .p_offset = 4, .p_vaddr = 8, .p_filesz = 16, .p_memsz = 20,
	  .shdr = 40, .sh_flags = 8, .sh_offset = 16, .sh_size = 20, .sh_link = 24, .sh_info = 28,
	  .sym = 16, .st_value = 4, .st_size = 8, .st_info = 12, .st_shndx = 14, .dyn = 8 },
	{ .ident = ELFCLASS64, .word = 8, .bits = 64, .machine = EM_X86_64, .machine_name = "x86-64",
	  .relative_name = "R_X86_64_RELATIVE", .rel_name = "RELA", .other_rel_name = "REL",
	  .rel_sht = SHT_RELA, .other_rel_sht = SHT_REL,
	  .dt_rel = DT_RELA, .dt_relsz = DT_RELASZ, .dt_relent = DT_RELAENT,
	  .dt_other = DT_REL, .dt_other_sz = DT_RELSZ,
	  .rel_size = 24, .rel_type_bits = 32, .rela = true,
	  .ehdr = 64, .e_phoff = 32, .e_shoff = 40, .e_phentsize = 54, .e_phnum = 56,
	  .e_shentsize = 58, .e_shnum = 60,
	  .phdr = 56, .p_flags = 4, .p_offset = 8, .p_vaddr = 16, .p_filesz = 32, .p_memsz = 40,
	  .shdr = 64, .sh_flags = 8, .sh_offset = 24, .sh_size = 32, .sh_link = 40, .sh_info = 44,
	  .sym = 24, .st_value = 8, .st_size = 16, .st_info = 4, .st_shndx = 6, .dyn = 16 },
};

#define E_TYPE		16	/* e_type, e_machine: the same place in both classes */
#define E_MACHINE	18
#define E_ENTRY		24

struct elf {
	const struct elf_fmt *fmt;
	const uint8_t *f;
	size_t len;
	uint64_t phoff, shoff;
	unsigned phnum, shnum;
	uint64_t rela_off, rela_size;	/* the DT_RELA (DT_REL) table, file offset and bytes */
};

static uint64_t elf_word(const struct elf *e, const uint8_t *p)
{
	return rd(p, e->fmt->word);
}

/* Section header i's fields, whatever the file's class. */
struct elf_sect {
	uint64_t type, flags, off, size, link, info;
};

static void elf_sect(const struct elf *e, unsigned i, struct elf_sect *s)
{
	const struct elf_fmt *t = e->fmt;
	const uint8_t *sh = e->f + e->shoff + (uint64_t)i * t->shdr;

	*s = (struct elf_sect){ .type = rd(sh + 4, 4), .flags = elf_word(e, sh + t->sh_flags),
				.off = elf_word(e, sh + t->sh_offset), .size = elf_word(e, sh + t->sh_size),
				.link = rd(sh + t->sh_link, 4), .info = rd(sh + t->sh_info, 4) };
}

/* Relocation entry r (inside the file) in one form: RELA's addend, 0 for REL's. */
struct elf_rel {
	uint64_t at, type, addend;
};

static struct elf_rel elf_rel(const struct elf *e, const uint8_t *r)
{
	const struct elf_fmt *t = e->fmt;
	uint64_t info = elf_word(e, r + t->word);

	return (struct elf_rel){ .at = elf_word(e, r),
				 .type = info & ((UINT64_C(1) << t->rel_type_bits) - 1),
				 .addend = t->rela ? elf_word(e, r + 2 * t->word) : 0 };
}

static const struct elf_fmt *elf_fmt_of(uint8_t ident)
{
	for (unsigned i = 0; i < sizeof(elf_fmts) / sizeof(elf_fmts[0]); i++)
		if (elf_fmts[i].ident == ident)
			return &elf_fmts[i];
	return NULL;
}

static int elf_open(const uint8_t *f, size_t len, struct elf *e, char *err, size_t errlen)
{
	static const uint8_t magic[4] = { 0x7f, 'E', 'L', 'F' };
	const struct elf_fmt *t;

	if (len < EI_NIDENT)
		return fail(err, errlen, "not an ELF file (shorter than an ELF header)");
	for (unsigned i = 0; i < 4; i++)
		if (f[i] != magic[i])
			return fail(err, errlen, "not an ELF file (no 7FH 'ELF' magic)");
	t = elf_fmt_of(f[4]);
	if (!t || f[5] != ELFDATA2LSB)
		return fail(err, errlen, "not a little-endian ELF32 or ELF64 file");
	if (len < t->ehdr)
		return fail(err, errlen, "not an ELF file (shorter than an ELF header)");
	if (rd(f + E_MACHINE, 2) != t->machine) {
		ksnprintf(err, errlen, "an ELF%u file for machine %llu, not %s", t->bits,
			  (unsigned long long)rd(f + E_MACHINE, 2), t->machine_name);
		return -1;
	}
	*e = (struct elf){ .fmt = t, .f = f, .len = len, .phoff = rd(f + t->e_phoff, t->word),
			   .shoff = rd(f + t->e_shoff, t->word), .phnum = (unsigned)rd(f + t->e_phnum, 2),
			   .shnum = (unsigned)rd(f + t->e_shnum, 2) };
	if (rd(f + t->e_phentsize, 2) != t->phdr ||
	    !in_file(len, e->phoff, (uint64_t)e->phnum * t->phdr))
		return fail(err, errlen, "program headers outside the file");
	if (e->shnum && (rd(f + t->e_shentsize, 2) != t->shdr ||
			 !in_file(len, e->shoff, (uint64_t)e->shnum * t->shdr)))
		return fail(err, errlen, "section headers outside the file");
	return 0;
}

/* Program header i's fields, whatever the file's class. */
struct elf_seg {
	uint64_t type, flags, off, va, fsz, msz;
};

static void elf_seg(const struct elf *e, unsigned i, struct elf_seg *s)
{
	const struct elf_fmt *t = e->fmt;
	const uint8_t *ph = e->f + e->phoff + (uint64_t)i * t->phdr;

	*s = (struct elf_seg){ .type = rd(ph, 4), .flags = rd(ph + t->p_flags, 4),
			       .off = elf_word(e, ph + t->p_offset), .va = elf_word(e, ph + t->p_vaddr),
			       .fsz = elf_word(e, ph + t->p_filesz), .msz = elf_word(e, ph + t->p_memsz) };
}

/*
 * Every PT_LOAD is checked, empty or not: its file bytes inside the file and
 * no more of them than its memory size, its addresses not wrapping. An
 * empty one (p_memsz 0, p_filesz 0) holds nothing and is then ignored.
 */
static int elf_check_load(const struct elf *e, const struct elf_seg *s, char *err, size_t errlen)
{
	if (!in_file(e->len, s->off, s->fsz))
		return fail(err, errlen, "a PT_LOAD segment lies outside the file");
	if (s->fsz > s->msz)
		return fail(err, errlen, "a PT_LOAD segment holds more file bytes than memory "
			    "(p_filesz > p_memsz)");
	if (s->va + s->msz < s->va)
		return fail(err, errlen, "a PT_LOAD segment's addresses wrap around");
	return 0;
}

/* No two non-empty PT_LOADs share an address: a later one would overwrite an earlier one. */
static int elf_check_overlap(const struct elf *e, unsigned i, const struct elf_seg *s, char *err,
			     size_t errlen)
{
	for (unsigned j = 0; j < i; j++) {
		struct elf_seg t;

		elf_seg(e, j, &t);
		if (t.type == PT_LOAD && t.msz && s->va < t.va + t.msz && t.va < s->va + s->msz)
			return fail(err, errlen, "two PT_LOAD segments overlap");
	}
	return 0;
}

static int elf_check_segments(const struct elf *e, struct program_layout *l, char *err,
			      size_t errlen)
{
	bool exec = rd(e->f + E_TYPE, 2) == ET_EXEC;
	uint64_t lo = UINT64_MAX, hi = 0, xlo = UINT64_MAX, xhi = 0;
	unsigned loads = 0;

	for (unsigned i = 0; i < e->phnum; i++) {
		struct elf_seg s;

		elf_seg(e, i, &s);
		if (s.type == PT_INTERP)
			return fail(err, errlen, exec ? "dynamically linked (PT_INTERP): link it -static"
					     : "dynamically linked (PT_INTERP): link it -static-pie");
		if (s.type == PT_TLS && !exec)	/* a Linux program's C library sets up its own */
			return fail(err, errlen, "thread-local storage (PT_TLS) is not supported");
		if (s.type != PT_LOAD)
			continue;
		if (elf_check_load(e, &s, err, errlen))
			return -1;
		if (s.msz == 0)
			continue;
		if (++loads > PROGRAM_LOADS_MAX) {
			ksnprintf(err, errlen, "more than %u PT_LOAD segments", PROGRAM_LOADS_MAX);
			return -1;
		}
		if (elf_check_overlap(e, i, &s, err, errlen))
			return -1;
		lo = s.va < lo ? s.va : lo;
		hi = s.va + s.msz > hi ? s.va + s.msz : hi;
		if (s.flags & PF_X) {
			xlo = s.va < xlo ? s.va : xlo;
			xhi = s.va + s.msz > xhi ? s.va + s.msz : xhi;
		}
	}
	if (hi == 0 || xhi == 0)
		return fail(err, errlen, "no executable PT_LOAD segment");
	l->vaddr0 = lo & ~(uint64_t)(PROGRAM_PAGE - 1);
	if (hi - l->vaddr0 > PROGRAM_SPAN_MAX)
		return fail(err, errlen, "the image spans more than 64 MiB");
	l->span = (hi - l->vaddr0 + PROGRAM_PAGE - 1) & ~(uint64_t)(PROGRAM_PAGE - 1);
	l->text_lo = xlo - l->vaddr0;
	l->text_hi = xhi - l->vaddr0;
	return 0;
}

/* --- relocations: what PT_DYNAMIC's DT_RELA names, as a dynamic loader reads them -------- */

/* The file offset of image address va .. va + n, inside one PT_LOAD's file bytes; 0 when none. */
static bool elf_va_to_off(const struct elf *e, uint64_t va, uint64_t n, uint64_t *off)
{
	for (unsigned i = 0; i < e->phnum; i++) {
		struct elf_seg s;

		elf_seg(e, i, &s);
		if (s.type == PT_LOAD && va >= s.va && va - s.va <= s.fsz && n <= s.fsz - (va - s.va)) {
			*off = s.off + (va - s.va);
			return true;
		}
	}
	return false;
}

/* The address where file bytes [off, off + n) are loaded, if a PT_LOAD holds them all. */
static bool elf_va_of_off(const struct elf *e, uint64_t off, uint64_t n, uint64_t *va)
{
	for (unsigned i = 0; i < e->phnum; i++) {
		struct elf_seg s;

		elf_seg(e, i, &s);
		if (s.type == PT_LOAD && off >= s.off && off - s.off <= s.fsz &&
		    n <= s.fsz - (off - s.off)) {
			*va = s.va + (off - s.off);
			return true;
		}
	}
	return false;
}

/* The dynamic tags the loader reads; any other tag of a static PIE is ignored. */
struct elf_dyn {
	uint64_t rela, relasz, relaent;		/* the class's table: DT_RELA.. or DT_REL.. */
	bool has_rela;
};

static int elf_dyn_tag(const struct elf_fmt *t, struct elf_dyn *d, uint64_t tag, uint64_t val,
		       char *err, size_t errlen)
{
	if (tag == t->dt_other || tag == t->dt_other_sz) {
		ksnprintf(err, errlen, "DT_%s relocations (%s uses %s)", t->other_rel_name,
			  t->machine_name, t->rel_name);
		return -1;
	}
	if (tag == t->dt_rel)
		d->rela = val, d->has_rela = true;
	else if (tag == t->dt_relsz)
		d->relasz = val;
	else if (tag == t->dt_relent)
		d->relaent = val;
	switch (tag) {
	case DT_NEEDED:
		return fail(err, errlen, "needs a shared library (DT_NEEDED): link it -static-pie");
	case DT_RELR:
		return fail(err, errlen, "packed relocations (DT_RELR): link without "
			    "-z pack-relative-relocs");
	case DT_JMPREL:
	case DT_PLTRELSZ:
		if (val)
			return fail(err, errlen, "PLT relocations (DT_JMPREL): a static PIE has none");
		return 0;
	}
	return 0;
}

/* Walk PT_DYNAMIC (at most one) up to DT_NULL, inside its file bytes. */
static int elf_read_dynamic(const struct elf *e, struct elf_dyn *d, char *err, size_t errlen)
{
	unsigned found = 0;

	*d = (struct elf_dyn){ .relaent = e->fmt->rel_size };
	for (unsigned i = 0; i < e->phnum; i++) {
		struct elf_seg s;

		elf_seg(e, i, &s);
		if (s.type != PT_DYNAMIC)
			continue;
		if (++found > 1)
			return fail(err, errlen, "more than one PT_DYNAMIC segment");
		if (!in_file(e->len, s.off, s.fsz))
			return fail(err, errlen, "the PT_DYNAMIC segment lies outside the file");
		for (uint64_t k = 0; k + e->fmt->dyn <= s.fsz; k += e->fmt->dyn) {
			const uint8_t *dyn = e->f + s.off + k;
			uint64_t tag = elf_word(e, dyn), val = elf_word(e, dyn + e->fmt->word);

			if (tag == DT_NULL)
				break;
			if (elf_dyn_tag(e->fmt, d, tag, val, err, errlen))
				return -1;
		}
	}
	return 0;
}

/*
 * A relocation section for the whole image (sh_info 0, like .rela.dyn) or
 * one the image holds (SHF_ALLOC) must be the table DT_RELA names: one the
 * dynamic section does not name would be silently not applied. A section
 * of link-time relocations (--emit-relocs: not allocated, sh_info the
 * section it applied to) was applied by the linker and is not read.
 */
static int elf_check_rela_sections(const struct elf *e, char *err, size_t errlen)
{
	const struct elf_fmt *t = e->fmt;

	for (unsigned i = 0; i < e->shnum; i++) {
		struct elf_sect sh;
		uint64_t off, size;

		elf_sect(e, i, &sh);
		off = sh.off, size = sh.size;
		if (sh.type == t->other_rel_sht) {
			ksnprintf(err, errlen, "SHT_%s relocations (%s uses %s)", t->other_rel_name,
				  t->machine_name, t->rel_name);
			return -1;
		}
		if (sh.type != t->rel_sht || size == 0 || (!(sh.flags & SHF_ALLOC) && sh.info != 0))
			continue;
		if (off < e->rela_off || off - e->rela_off > e->rela_size ||
		    size > e->rela_size - (off - e->rela_off))
			return fail(err, errlen, t->rela ? "a relocation section that PT_DYNAMIC (DT_RELA) "
				    "does not name: it would not be applied" : "a relocation section that "
				    "PT_DYNAMIC (DT_REL) does not name: it would not be applied");
	}
	return 0;
}

/* Find the DT_RELA table in the file: e->rela_off, e->rela_size. */
static int elf_find_relocs(struct elf *e, char *err, size_t errlen)
{
	const struct elf_fmt *t = e->fmt;
	struct elf_dyn d;

	e->rela_off = e->rela_size = 0;
	if (elf_read_dynamic(e, &d, err, errlen))
		return -1;
	if (d.relasz && !d.has_rela)
		return fail(err, errlen, t->rela ? "DT_RELASZ without DT_RELA" : "DT_RELSZ without DT_REL");
	if (d.relasz) {
		if (d.relaent != t->rel_size || d.relasz % t->rel_size) {
			ksnprintf(err, errlen, "DT_%sENT or DT_%sSZ is not a whole number of %u-byte "
				  "Elf%u_%s entries", t->rel_name, t->rel_name, t->rel_size, t->bits,
				  t->rela ? "Rela" : "Rel");
			return -1;
		}
		if (!elf_va_to_off(e, d.rela, d.relasz, &e->rela_off)) {
			ksnprintf(err, errlen, "the DT_%s table is not in a PT_LOAD segment's file bytes",
				  t->rel_name);
			return -1;
		}
		e->rela_size = d.relasz;
	}
	return elf_check_rela_sections(e, err, errlen);
}

/* Every relocation must be RELATIVE (or NONE) with its word inside the image. */
static int elf_check_relocs(struct elf *e, const struct program_layout *l, char *err,
			    size_t errlen)
{
	const struct elf_fmt *t = e->fmt;

	if (elf_find_relocs(e, err, errlen))
		return -1;
	for (uint64_t k = 0; k < e->rela_size; k += t->rel_size) {
		struct elf_rel r = elf_rel(e, e->f + e->rela_off + k);
		uint64_t at = r.at - l->vaddr0;

		if (r.type == R_NONE)
			continue;
		if (r.type != R_RELATIVE) {
			ksnprintf(err, errlen, "relocation type %llu: only %s (static-pie) is supported",
				  (unsigned long long)r.type, t->relative_name);
			return -1;
		}
		if (at > l->span - t->word || l->span < t->word)
			return fail(err, errlen, "a relocation points outside the image");
	}
	return 0;
}

/* A program of the other kernel's class: refused before anything of it runs. */
static int elf_check_kernel(const struct elf *e, unsigned kernel_bits, char *err, size_t errlen)
{
	if (e->fmt->bits == kernel_bits)
		return 0;
	ksnprintf(err, errlen, "a %u-bit program: this is the %u-bit kernel; build with nbprof-cc%s",
		  e->fmt->bits, kernel_bits, kernel_bits == 32 ? " -m32" : " without -m32");
	return -1;
}

/*
 * A fixed-address executable (ET_EXEC, a static Linux program): its image
 * must lie in the addresses this kernel keeps for such programs
 * (PROGRAM_FIXED_LO/HI). The
 * linker has resolved every address, so no relocation is read (glibc's
 * IRELATIVE ones in .rel.plt are applied by the program itself). The
 * program headers must be in the image: the C library finds its TLS
 * segment through AT_PHDR.
 */
static int elf_check_fixed(const struct elf *e, unsigned kernel_bits, struct program_layout *l,
			   char *err, size_t errlen)
{
	uint64_t lo = PROGRAM_FIXED_LO(kernel_bits), hi = PROGRAM_FIXED_HI(kernel_bits);
	uint64_t phsize = (uint64_t)e->phnum * e->fmt->phdr;

	if (l->vaddr0 < lo || l->span > hi - lo || l->vaddr0 - lo > hi - lo - l->span) {
		ksnprintf(err, errlen, "linked at %#llx..%#llx: a fixed-address program must lie in "
			  "%#llx..%#llx", (unsigned long long)l->vaddr0,
			  (unsigned long long)(l->vaddr0 + l->span), (unsigned long long)lo,
			  (unsigned long long)hi);
		return -1;
	}
	if (!elf_va_of_off(e, e->phoff, phsize, &l->phdr))
		return fail(err, errlen, "the program headers are not in a PT_LOAD segment "
			    "(AT_PHDR would point at nothing)");
	l->phdr -= l->vaddr0;
	l->phnum = (uint16_t)e->phnum;
	l->phent = e->fmt->phdr;
	l->fixed = true;
	return 0;
}

int program_elf_check_for(unsigned kernel_bits, const uint8_t *file, size_t len,
			  struct program_layout *l, char *err, size_t errlen)
{
	struct program_layout t = { 0 };
	struct elf e;
	uint64_t type, entry;

	if (elf_open(file, len, &e, err, errlen) || elf_check_kernel(&e, kernel_bits, err, errlen))
		return -1;
	type = rd(file + E_TYPE, 2);
	if (type != ET_DYN && type != ET_EXEC)
		return fail(err, errlen, "not an executable (e_type is neither ET_EXEC nor ET_DYN)");
	if (elf_check_segments(&e, &t, err, errlen))
		return -1;
	if (type == ET_EXEC ? elf_check_fixed(&e, kernel_bits, &t, err, errlen)
			    : elf_check_relocs(&e, &t, err, errlen))
		return -1;
	entry = elf_word(&e, file + E_ENTRY);
	if (entry < t.vaddr0 + t.text_lo || entry >= t.vaddr0 + t.text_hi)
		return fail(err, errlen, "the entry point is not in an executable segment");
	t.entry = entry - t.vaddr0;
	t.word = e.fmt->word;
	*l = t;
	return 0;
}

int program_elf_check(const uint8_t *file, size_t len, struct program_layout *l,
		      char *err, size_t errlen)
{
	return program_elf_check_for(PROGRAM_KERNEL_BITS, file, len, l, err, errlen);
}

int program_flat_check(size_t len, uint64_t entry_off, struct program_layout *l,
		       char *err, size_t errlen)
{
	if (len == 0 || len > PROGRAM_SPAN_MAX)
		return fail(err, errlen, "a flat binary must hold 1 byte .. 64 MiB");
	if (entry_off >= len)
		return fail(err, errlen, "the entry offset is past the end of the binary");
	*l = (struct program_layout){
		.span = (len + PROGRAM_PAGE - 1) & ~(uint64_t)(PROGRAM_PAGE - 1),
		.entry = entry_off, .text_lo = 0, .text_hi = len, .flat = true,
		.word = PROGRAM_KERNEL_BITS / 8,
	};
	return 0;
}

/* Add the load bias to every RELATIVE word: B + A (RELA: A in the entry; REL: in the word). */
static void elf_relocate(const struct elf *e, const struct program_layout *l, uint8_t *dst,
			 uint64_t base)
{
	const struct elf_fmt *t = e->fmt;

	for (uint64_t k = 0; k < e->rela_size; k += t->rel_size) {
		struct elf_rel r = elf_rel(e, e->f + e->rela_off + k);
		uint64_t at = r.at - l->vaddr0, v;

		/* only a RELATIVE entry's place was checked to lie in the image: R_NONE's is anything */
		if (r.type != R_RELATIVE)
			continue;
		v = base + (t->rela ? r.addend : rd(dst + at, t->word)) - l->vaddr0;
		for (unsigned b = 0; b < t->word; b++)
			dst[at + b] = (uint8_t)(v >> (8 * b));
	}
}

/*
 * The file is checked again before a byte is written, and must give the
 * layout the caller holds: nothing is copied from a file that was never
 * checked, or that changed since.
 */
int program_image_load(const uint8_t *file, size_t len, const struct program_layout *l,
		       uint8_t *dst, uint64_t base, char *err, size_t errlen)
{
	struct program_layout t;
	struct elf e;

	if (l->flat ? len > l->span
		    : program_elf_check_for(l->word * 8u, file, len, &t, err, errlen))
		return l->flat ? fail(err, errlen, "the binary is larger than its image") : -1;
	if (!l->flat && (t.span != l->span || t.vaddr0 != l->vaddr0))
		return fail(err, errlen, "the file does not give the image it was checked for");
	memset(dst, 0, (size_t)l->span);
	if (l->flat) {
		memcpy(dst, file, len);
		return 0;
	}
	elf_open(file, len, &e, err, errlen);
	if (!l->fixed)
		elf_find_relocs(&e, err, errlen);
	for (unsigned i = 0; i < e.phnum; i++) {
		struct elf_seg s;

		elf_seg(&e, i, &s);
		if (s.type != PT_LOAD || s.msz == 0)
			continue;
		memcpy(dst + (s.va - l->vaddr0), file + s.off, (size_t)s.fsz);
	}
	if (!l->fixed)
		elf_relocate(&e, l, dst, base);
	return 0;
}

/* --- symbols ------------------------------------------------------------------------ */

struct sym_view {
	struct elf e;
	uint64_t off, size, str_off, str_size, vaddr0;
};

static bool sym_view_open(const uint8_t *file, size_t len, struct sym_view *v)
{
	char err[8];
	struct program_layout l;

	if (elf_open(file, len, &v->e, err, sizeof(err)) || elf_check_segments(&v->e, &l, err, sizeof(err)))
		return false;
	v->vaddr0 = l.vaddr0;
	for (unsigned i = 0; i < v->e.shnum; i++) {
		struct elf_sect sh, str;

		elf_sect(&v->e, i, &sh);
		if (sh.type != SHT_SYMTAB || sh.link >= v->e.shnum)
			continue;
		elf_sect(&v->e, (unsigned)sh.link, &str);
		v->off = sh.off;
		v->size = sh.size;
		v->str_off = str.off;
		v->str_size = str.size;
		return in_file(len, v->off, v->size) && in_file(len, v->str_off, v->str_size) &&
		       v->str_size > 0 && file[v->str_off + v->str_size - 1] == 0;
	}
	return false;
}

/* Symbol k if it names code: FUNC or NOTYPE, defined, with a usable name. */
static const char *sym_get(const struct sym_view *v, uint64_t k, uint64_t *value, uint64_t *size)
{
	const struct elf_fmt *t = v->e.fmt;
	const uint8_t *s = v->e.f + v->off + k * t->sym;
	uint64_t name = rd(s, 4), type = s[t->st_info] & 0xf, shndx = rd(s + t->st_shndx, 2);
	uint64_t val = elf_word(&v->e, s + t->st_value);
	const char *n;

	if ((type != STT_FUNC && type != STT_NOTYPE) || shndx == 0 || shndx >= SHN_LORESERVE ||
	    name == 0 || name >= v->str_size)
		return NULL;
	n = (const char *)v->e.f + v->str_off + name;
	if (n[0] == '.' || n[0] == '$' || val < v->vaddr0)
		return NULL;
	*value = val - v->vaddr0;
	*size = elf_word(&v->e, s + t->st_size);
	return n;
}

const char *program_elf_symbol(const uint8_t *file, size_t len, uint64_t off, uint64_t *symoff)
{
	struct sym_view v;
	const char *best = NULL, *below = NULL;
	uint64_t best_v = 0, best_sz = UINT64_MAX, below_v = 0;

	if (!sym_view_open(file, len, &v))
		return NULL;
	for (uint64_t k = 1; k < v.size / v.e.fmt->sym; k++) {
		uint64_t val, sz;
		const char *n = sym_get(&v, k, &val, &sz);

		if (!n || val > off)
			continue;
		if (sz && off - val < sz && sz < best_sz) {
			best = n, best_v = val, best_sz = sz;
		} else if (!sz && (!below || val > below_v)) {
			below = n, below_v = val;
		}
	}
	if (!best && below) {
		best = below;
		best_v = below_v;
	}
	if (best && symoff)
		*symoff = off - best_v;
	return best;
}

unsigned program_elf_symbols(const uint8_t *file, size_t len,
			     void (*fn)(void *ctx, uint64_t value, uint64_t size, const char *name),
			     void *ctx)
{
	struct sym_view v;
	unsigned n = 0;

	if (!sym_view_open(file, len, &v))
		return 0;
	for (uint64_t k = 1; k < v.size / v.e.fmt->sym; k++) {
		uint64_t val, sz;
		const char *name = sym_get(&v, k, &val, &sz);

		if (name) {
			fn(ctx, val, sz, name);
			n++;
		}
	}
	return n;
}

/* --- the table ------------------------------------------------------------------------ */

int program_name_check(const char *name, char *err, size_t errlen)
{
	size_t n = parse_strlen(name);

	if (n == 0 || n >= PROGRAM_NAME_MAX) {
		ksnprintf(err, errlen, "program name '%s': must be 1..%u characters", name,
			  PROGRAM_NAME_MAX - 1);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-')) {
			ksnprintf(err, errlen, "program name '%s': only letters, digits, '.', '_' "
				  "and '-'", name);
			return -1;
		}
	}
	for (unsigned i = 0; i < WL_NWORKLOADS; i++)
		if (parse_streq(workload_table[i].name, name)) {
			ksnprintf(err, errlen, "program name '%s' is a built-in workload's", name);
			return -1;
		}
	return 0;
}

struct program *program_slot(unsigned i)
{
	return i < PROGRAM_MAX ? &programs[i] : NULL;
}

struct program *program_find(const char *name)
{
	for (unsigned i = 0; i < PROGRAM_MAX; i++)
		if (programs[i].used && parse_streq(programs[i].name, name))
			return &programs[i];
	return NULL;
}

const struct program *program_at(uint64_t addr)
{
	for (unsigned i = 0; i < PROGRAM_MAX; i++) {
		const struct program *p = &programs[i];

		/* the window holds one fixed-address program's image at a time: the last one run */
		if (p->layout.fixed && fixed_owner && p != fixed_owner)
			continue;
		if (p->used && addr >= p->base && addr - p->base < p->pages * PROGRAM_PAGE)
			return p;
	}
	return NULL;
}

const struct program *program_of(const struct workload *w)
{
	for (unsigned i = 0; i < PROGRAM_MAX; i++)
		if (programs[i].used && w == &programs[i].wl)
			return &programs[i];
	return NULL;
}

const char *program_lookup(uint64_t addr, uint64_t *offset)
{
	const struct program *p = program_at(addr);
	uint64_t off;

	if (!p || addr - p->base < p->layout.text_lo || addr - p->base >= p->layout.text_hi)
		return NULL;
	off = addr - p->base;
	if (!p->layout.flat) {
		const char *n = program_elf_symbol(p->file, p->file_len, off, offset);

		if (n)
			return n;
	}
	if (offset)
		*offset = off;
	return p->name;		/* no symbol: "program+0xOFFSET" */
}

uint64_t program_build_argv(const struct workload_args *a, unsigned word, uint8_t *dst,
			    uint64_t base_rt)
{
	uint64_t strings = (uint64_t)(WORKLOAD_ARGV_MAX + 1) * 8;
	size_t pos = 0;

	for (uint32_t i = 0; i <= a->argc && i <= WORKLOAD_ARGV_MAX; i++) {
		uint64_t ptr = i < a->argc ? base_rt + strings + pos : 0;

		for (unsigned b = 0; b < word; b++)
			dst[i * word + b] = (uint8_t)(ptr >> (8 * b));
		if (i == a->argc)
			break;
		while (pos < sizeof(a->argbuf) && a->argbuf[pos])
			pos++;
		pos++;
	}
	for (size_t k = 0; k < sizeof(a->argbuf); k++)
		dst[strings + k] = (uint8_t)a->argbuf[k];
	return base_rt;
}

int program_nbp_line(const struct program *p, char *buf, size_t n)
{
	int len = ksnprintf(buf, n, "NBP: %s base=%llx span=%llx crc=%08x", p->name,
			    (unsigned long long)(p->base - p->layout.vaddr0),
			    (unsigned long long)(p->layout.vaddr0 + p->pages * PROGRAM_PAGE), p->crc);

	if (len < 0 || (size_t)len + 10 > n)
		return -1;
	return len + ksnprintf(buf + len, n - (size_t)len, "|%08X",
			       crc32(buf + 4, (size_t)len - 4));
}
