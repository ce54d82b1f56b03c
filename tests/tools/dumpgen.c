/*
 * dumpgen.c - a recording made on the host, printed by the kernel's own
 * formatters, for the tests of tools/nbprof-decode.
 *
 *	dumpgen [-n N] [-s SEED] [--nm FILE] [--from F] [--pair] [--ip-bits 32|64]
 *	        [--build-id HEX] dump|samples|script|report
 *
 * Samples are pseudo-random (fixed seed) over the text symbols of an `nm -n`
 * listing (FILE, e.g. of build/nbprof.so; a small built-in table without
 * it), filtered as tools/build/gensyms filters them, with call chains that walk
 * up through other functions. Two logical processors, two events. The
 * dump's header names the build id HEX (none without --build-id).
 *   dump     the lines `dump` prints (prof/dump.c)
 *   samples  ground truth, one line per sample in run order:
 *            lp event cpl tsc ip rflags rsp chain... (hex)
 *   script   the `script` text (prof/report.c)
 *   report   the `report` top list
 *   nm       the built-in table as `nm -n` lines (for the decoder's --nm)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof/dump.h"
#include "prof/report.h"

#define MAXSYMS		100000
#define IMAGE_BASE	UINT64_C(0x3e4ec000)

static struct ksym syms[MAXSYMS];
static char names[MAXSYMS * 16];	/* symbol names from --nm, packed */
static uint32_t nsyms;
static uint64_t text_start = 0x1000, text_end = 0x1400;
static uint32_t rng = 1;
/*
 * --pair: each LP samples only its own event, as `record --pair` makes
 * them (one counter per LP, named "instr_retired.t0" on LP0 and ".t1" on LP1); without
 * it each LP samples both events.
 */
static int pair;

static uint32_t next_rand(void)
{
	rng = rng * 1103515245u + 12345u;
	return rng >> 8;
}

static void builtin_syms(void)
{
	static const struct ksym fake[] = {
		{ 0x1000, "main_loop" }, { 0x1100, "work_a" }, { 0x1200, "work_b" }, { 0x1300, "helper" },
	};

	memcpy(syms, fake, sizeof(fake));
	nsyms = 4;
}

static int safe_name(const char *s)
{
	for (; *s; s++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.$@", *s))
			return 0;
	return 1;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * The rules of tools/build/gensyms: T/t/W/w symbols in [_text, _etext), safe names but
 * not the assembler's local labels (.L...), sorted.
 */
static int load_nm(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[1024], name[1000], kind;
	unsigned long long a;
	uint32_t n = 0;
	size_t used = 0;
	int have_lo = 0, have_hi = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f) && n < MAXSYMS) {
		if (sscanf(line, "%llx %c %999s", &a, &kind, name) != 3)
			continue;
		if (!strcmp(name, "_text"))
			text_start = a, have_lo = 1;
		if (!strcmp(name, "_etext"))
			text_end = a, have_hi = 1;
		if (strchr("TtWw", kind) && used + strlen(name) + 1 <= sizeof(names)) {
			syms[n++] = (struct ksym){ a, strcpy(names + used, name) };
			used += strlen(name) + 1;
		}
	}
	fclose(f);
	if (!have_lo || !have_hi)
		return -1;
	nsyms = 0;
	for (uint32_t i = 0; i < n; i++)
		if (syms[i].addr >= text_start && syms[i].addr < text_end &&
		    strcmp(syms[i].name, "_text") && strcmp(syms[i].name, "_etext") && safe_name(syms[i].name) &&
		    strncmp(syms[i].name, ".L", 2))
			syms[nsyms++] = syms[i];
	qsort(syms, nsyms, sizeof(syms[0]), ksym_cmp);
	return nsyms ? 0 : -1;
}

static const char *lookup(void *ctx, uint64_t addr, uint64_t *off)
{
	uint64_t rel = addr - IMAGE_BASE;
	uint32_t lo = 0, hi = nsyms;

	if (addr < IMAGE_BASE || rel < text_start || rel >= text_end || nsyms == 0)
		return NULL;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (syms[mid].addr <= rel)
			lo = mid;
		else
			hi = mid;
	}
	if (syms[lo].addr > rel)
		return NULL;
	*off = rel - syms[lo].addr;
	return syms[lo].name;
}

/* A runtime address inside symbol i (or past the text for i == nsyms). */
static uint64_t addr_in(uint32_t i)
{
	uint64_t end = i + 1 < nsyms ? syms[i + 1].addr : text_end;

	if (i >= nsyms)
		return IMAGE_BASE + text_end + 0x40 + next_rand() % 64;
	/* Aliases share an address: their span is empty. */
	return IMAGE_BASE + syms[i].addr + (end > syms[i].addr ? next_rand() % (end - syms[i].addr) : 0);
}

static void make_samples(struct sample_store *st, int n, uint8_t lp)
{
	/* A few hot functions, so the top list and flame graph have structure. */
	uint32_t hot[4];

	for (int k = 0; k < 4; k++)
		hot[k] = (uint32_t)((k * 7919u) % nsyms);
	for (int i = 0; i < n; i++) {
		struct sample s = { 0 };
		uint32_t r = next_rand();

		s.tsc = UINT64_C(5000000000) + (uint64_t)i * 28000 + r % 1000 + lp * 7;
		s.ip = r % 10 == 0 ? addr_in(nsyms) : addr_in(r % 10 < 7 ? hot[r % 4] : r % nsyms);
		s.rflags = r & 1 ? 0x246 : 0x202;
		s.rsp = UINT64_C(0x7fff0000) - (r % 512) * 8;
		s.cpl = r % 3 == 0 ? 3 : 0;
		s.event = pair ? lp : (r >> 4) % 2;
		/* the events a sample stands for: the period plus the PMI's skid */
		s.weight = (pair ? 29 : s.event ? 100003 : 10007) + (r >> 20) % 3;
		s.nchain = (uint8_t)((r >> 6) % 5 == 0 ? 0 : (r >> 9) % 6);
		if (i % 97 == 0)
			s.nchain = SAMPLE_MAX_CHAIN;
		for (int k = 0; k < s.nchain; k++)
			s.chain[k] = addr_in(hot[(uint32_t)(k + (r >> 12)) % 4] ^ (k == 3 ? 1 : 0)) + 1;
		sample_store_append(st, &s);
	}
}

static void print_line(void *ctx, const char *text)
{
	puts(text);
}

static void print_samples(const struct sample_run *run)
{
	struct sample_run_iter ri;
	struct sample s;

	sample_run_iter_init(&ri, run);
	while (sample_run_iter_next(&ri, &s)) {
		printf("%x %x %x %llx %llx %llx %llx %llx", s.lp, s.event, s.cpl,
		       (unsigned long long)s.tsc, (unsigned long long)s.ip, (unsigned long long)s.rflags,
		       (unsigned long long)s.rsp, (unsigned long long)s.weight);
		for (int k = 0; k < s.nchain; k++)
			printf(" %llx", (unsigned long long)s.chain[k]);
		putchar('\n');
	}
}

static int usage(void)
{
	fprintf(stderr, "usage: dumpgen [-n N] [-s SEED] [--nm FILE] [--from F] [--pair] "
		"[--ip-bits 32|64] [--pair-comm] dump|samples|script|report|nm\n");
	return 2;
}

int main(int argc, char **argv)
{
	static uint64_t m0[1 << 18], m1[1 << 18];
	static struct sample_store st0, st1;
	static struct report_entry scratch[4096];
	static struct dump_enc enc;
	const struct sample_store *stores[] = { &st0, &st1 };
	static const struct sample_event events[] = {
		{ "instr_retired:nbogus", 10007 }, { "clockticks", 100003 },
	};
	static const struct sample_event pair_events[] = {
		{ "instr_retired.t0", 29 }, { "instr_retired.t1", 29 },
	};
	struct sample_run run = {
		.stores = stores, .nstores = 2, .events = events, .nevents = 2,
		.comm = "calls", .tsc_hz = 2800000000u, .tsc_start = UINT64_C(5000000000),
	};
	const struct report_syms rs = { .lookup = lookup };
	const struct report_out out = { .line = print_line };
	const char *nm = NULL, *what = NULL;
	int n = 500;
	unsigned long from = 0;
	unsigned ip_bits = 64;
	uint8_t build_id[BUILDID_MAX];
	unsigned build_id_len = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			n = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-s") && i + 1 < argc)
			rng = (uint32_t)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--nm") && i + 1 < argc)
			nm = argv[++i];
		else if (!strcmp(argv[i], "--pair-comm"))	/* LP1 ran its own workload */
			run.lp_comm[0] = "calls", run.lp_comm[1] = "loop";
		else if (!strcmp(argv[i], "--from") && i + 1 < argc)
			from = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--pair"))
			pair = 1;
		else if (!strcmp(argv[i], "--ip-bits") && i + 1 < argc)
			ip_bits = (unsigned)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--build-id") && i + 1 < argc) {
			const char *h = argv[++i];

			for (build_id_len = 0; h[0] && h[1] && build_id_len < BUILDID_MAX; h += 2) {
				char byte[3] = { h[0], h[1], 0 };

				build_id[build_id_len++] = (uint8_t)strtoul(byte, NULL, 16);
			}
		}
		else if (argv[i][0] != '-' && !what)
			what = argv[i];
		else
			return usage();
	}
	if (!what || n < 0)
		return usage();
	if (nm ? load_nm(nm) : (builtin_syms(), 0)) {
		fprintf(stderr, "dumpgen: no text symbols in %s\n", nm);
		return 1;
	}
	if (!strcmp(what, "nm")) {
		printf("%016llx T _text\n", (unsigned long long)text_start);
		for (uint32_t i = 0; i < nsyms; i++)
			printf("%016llx T %s\n", (unsigned long long)syms[i].addr, syms[i].name);
		printf("%016llx T _etext\n", (unsigned long long)text_end);
		return 0;
	}
	if (pair)
		run.events = pair_events;
	sample_store_init(&st0, m0, sizeof(m0), SAMPLE_STOP_WHEN_FULL, 0);
	sample_store_init(&st1, m1, sizeof(m1), SAMPLE_WRAP, 1);
	make_samples(&st0, n - n / 3, 0);
	make_samples(&st1, n / 3, 1);
	if (!strcmp(what, "samples")) {
		print_samples(&run);
	} else if (!strcmp(what, "script")) {
		report_script(&run, &rs, &out);
	} else if (!strcmp(what, "report")) {
		const struct report_opts o = { .sort = REPORT_SORT_SYM, .event = REPORT_ALL_EVENTS };

		report_top(&run, &o, &rs, scratch, 4096, &out);
	} else if (!strcmp(what, "dump")) {
		const struct dump_info info = {
			.family = 0x0f, .model = 4, .stepping = 1, .signature = 0xf41,
			.image_base = IMAGE_BASE, .text_start = text_start, .text_end = text_end,
			.symtab_crc = dump_symtab_crc(syms, nsyms), .symtab_count = nsyms,
			.run_id = UINT64_C(5000000000) + rng, .ip_bits = (uint8_t)ip_bits,
			.build_id = build_id, .build_id_len = build_id_len,
		};
		int rc = dump_begin(&enc, &run, &info, (uint32_t)from);

		if (rc) {
			fprintf(stderr, "dumpgen: dump_begin failed (%d)\n", rc);
			return 1;
		}
		while (dump_next(&enc, &out))
			;
	} else {
		return usage();
	}
	return 0;
}
