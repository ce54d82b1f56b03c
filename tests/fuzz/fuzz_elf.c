/*
 * fuzz_elf.c - the user-program ELF loader (workload/program.c), for both
 * kernels (ELF64 x86-64 and ELF32 i386 programs).
 *
 * Contract checked (program.h): a refused file leaves the layout exactly
 * as it was, says why, and program_image_load refuses it too without
 * writing a byte (the image sits between guards); an accepted file has a
 * page-rounded span of at most 64 MiB holding its executable bounds and
 * entry, loads into exactly span bytes (a heap block of that size, so a
 * write outside is an ASan report) and loads the same twice; its symbol
 * names lie inside the file. Once at start, the SDK's own programs
 * (SDK_ELF_DIR, the Makefile's) load as binutils says: the entry is nm's
 * _start and every R_*_RELATIVE slot readelf lists holds the load base
 * plus its addend (in the image at base 0 for ELF32's implicit addends),
 * no other byte depending on the base.
 *
 * Half the mutations are libFuzzer's own; the other half set one field of
 * a program header (offset, address, file or memory size, type) to a value
 * loaders get wrong: 0, 1, the file's length, near 2^32 and 2^64, an
 * address before the image, another header's value. Without them a
 * one-field defect such as p_memsz 0 with file bytes takes the byte
 * mutator minutes to reach in a 10 KB file.
 */
#include "workload/program.h"
#include "tests/fuzz/fuzz.h"

#define GUARD		4096
#define FILL		0xa5
#define LOAD_MAX	(8u << 20)	/* larger images are checked but not loaded (speed) */
#define BASE1		UINT64_C(0x40000000)
#define BASE2		UINT64_C(0x7a123000)

static struct program_layout sdk_layout[2];	/* hello.elf's, for ELF32 and ELF64 */

static uint64_t rd(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = n; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

static uint8_t *read_file(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b;

	if (!f)
		return NULL;
	b = malloc(1 << 20);
	*n = fread(b, 1, 1 << 20, f);
	fclose(f);
	return b;
}

/* nm's value of sym in path. */
static uint64_t nm_value(const char *path, const char *sym)
{
	char cmd[400], line[300], s[200], t;
	unsigned long long v;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm %s", path);
	p = popen(cmd, "r");
	fuzz_check(p != NULL);
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, "%llx %c %199s", &v, &t, s) == 3 && strcmp(s, sym) == 0) {
			pclose(p);
			return v;
		}
	pclose(p);
	fuzz_check(!"symbol missing from nm's listing");
	return 0;
}

/* An SDK program against binutils: entry, and every RELATIVE relocation readelf lists. */
static void check_sdk_file(const char *path, unsigned bits)
{
	size_t n;
	uint8_t *f = read_file(path, &n), *a, *b;
	struct program_layout l;
	char err[200], cmd[400], line[400];
	unsigned word = bits / 8, slots = 0;
	FILE *p;

	if (!f) {
		fprintf(stderr, "fuzz_elf: %s missing (make it first); SDK check skipped\n", path);
		return;
	}
	fuzz_check(program_elf_check_for(bits, f, n, &l, err, sizeof(err)) == 0);
	fuzz_check(l.entry == nm_value(path, "_start"));
	a = calloc(1, l.span);
	b = calloc(1, l.span);
	fuzz_check(program_image_load(f, n, &l, a, 0, err, sizeof(err)) == 0);
	fuzz_check(program_image_load(f, n, &l, b, BASE2, err, sizeof(err)) == 0);
	snprintf(cmd, sizeof(cmd), "readelf -rW %s", path);
	p = popen(cmd, "r");
	fuzz_check(p != NULL);
	while (fgets(line, sizeof(line), p)) {
		unsigned long long off, info, addend = 0;
		char type[64];
		const char *plus = strstr(line, " + ");

		if (sscanf(line, "%llx %llx %63s", &off, &info, type) != 3 || !strstr(type, "RELATIVE"))
			continue;
		if (plus)
			sscanf(plus + 3, "%llx", &addend);
		else
			addend = rd(a + off, word);	/* REL: the addend is the word in place */
		fuzz_check(rd(a + off, word) == addend);
		fuzz_check(rd(b + off, word) == ((BASE2 + addend) & (word == 4 ? 0xffffffffu : UINT64_MAX)));
		memset(a + off, 0, word);
		memset(b + off, 0, word);
		slots++;
	}
	pclose(p);
	fuzz_check(memcmp(a, b, l.span) == 0);	/* nothing else depends on the base */
	if (strstr(path, "prog_reloc"))
		fuzz_check(slots >= 4);
	if (strstr(path, "hello"))
		sdk_layout[bits == 64] = l;
	free(a);
	free(b);
	free(f);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const names[] = { "hello", "sumloop", "prog_reloc", "prog_div64" };
	char path[300];

	(void)argc, (void)argv;
	for (unsigned k = 0; k < 2; k++)
		for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			snprintf(path, sizeof(path), "%s%s/%s.elf", SDK_ELF_DIR, k ? "" : "32", names[i]);
			check_sdk_file(path, k ? 64 : 32);
		}
	for (unsigned k = 0; k < 2; k++)
		if (!sdk_layout[k].span)	/* no SDK build: a plausible layout of that class */
			sdk_layout[k] = (struct program_layout){ .span = 0x2000, .text_hi = 0x100,
								 .word = k ? 8 : 4 };
	return 0;
}

/* A refused file: image_load with a real layout of that class refuses and writes nothing. */
static void check_refused(const uint8_t *f, size_t n, unsigned bits, const char *err)
{
	const struct program_layout *l = &sdk_layout[bits == 64];
	size_t total = GUARD + l->span + GUARD;
	uint8_t *mem = malloc(total);
	char e2[200];

	fuzz_check(err[0] != 0 && memchr(err, 0, 200) != NULL);
	memset(mem, FILL, total);
	fuzz_check(program_image_load(f, n, l, mem + GUARD, BASE1, e2, sizeof(e2)) == -1);
	for (size_t i = 0; i < total; i++)
		fuzz_check(mem[i] == FILL);
	free(mem);
}

struct names {
	const uint8_t *f;
	size_t n;
};

static void name_inside(void *ctx, uint64_t value, uint64_t size, const char *name)
{
	const struct names *w = ctx;

	(void)value, (void)size;
	fuzz_check((const uint8_t *)name >= w->f && (const uint8_t *)name < w->f + w->n);
	fuzz_check(memchr(name, 0, (size_t)(w->f + w->n - (const uint8_t *)name)) != NULL);
}

static void check_accepted(const uint8_t *f, size_t n, unsigned bits,
			   const struct program_layout *l)
{
	struct names w = { f, n };
	uint8_t *a, *b;
	char err[200];
	uint64_t off;

	fuzz_check(l->span && l->span % PROGRAM_PAGE == 0 && l->span <= (64u << 20));
	fuzz_check(l->text_lo <= l->entry && l->entry < l->text_hi && l->text_hi <= l->span);
	fuzz_check(l->word == bits / 8 && !l->flat);
	program_elf_symbols(f, n, name_inside, &w);
	program_elf_symbol(f, n, l->entry, &off);
	if (l->span > LOAD_MAX)
		return;
	a = malloc(l->span);
	b = malloc(l->span);
	fuzz_check(program_image_load(f, n, l, a, BASE1, err, sizeof(err)) == 0);
	memset(b, 0x5a, l->span);
	fuzz_check(program_image_load(f, n, l, b, BASE1, err, sizeof(err)) == 0);
	fuzz_check(memcmp(a, b, l->span) == 0);
	free(a);
	free(b);
}

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

static void put(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* One program header field set to a value loaders get wrong (see the top). */
static bool mutate_phdr(uint8_t *d, size_t size, unsigned seed)
{
	static const unsigned f64[] = { 0, 8, 16, 32, 40 }, f32[] = { 0, 4, 8, 16, 20 };
	bool wide = size > 5 && d[4] == 2;
	unsigned w = wide ? 8 : 4, esz = wide ? 56 : 32, nph, k, field;
	uint64_t phoff, v, other;
	const uint64_t vals[] = { 0, 1, size, size - 1, (uint64_t)-0xb000, UINT64_C(1) << 47,
				  0xffffffffu, UINT64_MAX - 0x10, 0x1000, 0x100, 2 };

	if (size < (wide ? 64u : 52u) || memcmp(d, "\x7f" "ELF", 4) != 0)
		return false;
	phoff = rd(d + (wide ? 32 : 28), w);
	nph = (unsigned)rd(d + (wide ? 56 : 44), 2);
	if (!nph || phoff > size || (uint64_t)nph * esz > size - phoff)
		return false;
	k = seed % nph;
	field = (seed / 8) % 5;
	field = wide ? f64[field] : f32[field];
	other = rd(d + phoff + (uint64_t)((seed / 64) % nph) * esz + field, field ? w : 4);
	v = (seed / 512) % 3 == 0 ? other : vals[(seed / 2048) % (sizeof(vals) / sizeof(vals[0]))];
	put(d + phoff + (uint64_t)k * esz + field, v, field ? w : 4);
	return true;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	if (seed % 2 == 0 && mutate_phdr(data, size, seed / 2))
		return size;
	return LLVMFuzzerMutate(data, size, max_size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *f = malloc(size ? size : 1);
	unsigned accepted = 0;

	memcpy(f, data, size);
	for (unsigned bits = 32; bits <= 64; bits += 32) {
		struct program_layout l, before;
		char err[200] = "";

		memset(&l, 0x77, sizeof(l));
		before = l;
		if (program_elf_check_for(bits, f, size, &l, err, sizeof(err)) == 0) {
			check_accepted(f, size, bits, &l);
			accepted++;
		} else {
			fuzz_check(memcmp(&l, &before, sizeof(l)) == 0);
			check_refused(f, size, bits, err);
		}
	}
	fuzz_check(accepted <= 1);	/* one class, one kernel */
	fuzz_check(memcmp(f, data, size) == 0);	/* the file is only read */
	free(f);
	return 0;
}
