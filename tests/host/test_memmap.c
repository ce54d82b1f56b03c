/*
 * test_memmap.c - the firmware memory map normalised and the free-range
 * list (arch/x86/memmap.c): overlapping entries, non-RAM inside RAM, the
 * Multiboot map walk's entry sizes, and no page handed out twice; and the
 * Multiboot modules as nbprof.cfg and programs (arch/x86/multiboot_mods.c).
 */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "arch/x86/memmap.h"
#include "arch/x86/multiboot_mods.h"

#define MiB	(UINT64_C(1) << 20)
#define R(b, s, t)	((struct boot_region){ .base = (b), .size = (s), .type = (t) })

static struct boot_region out[BOOT_MAX_REGIONS];

static void expect_region(uint32_t i, uint64_t base, uint64_t size, uint32_t type)
{
	if (out[i].base != base || out[i].size != size || out[i].type != type)
		fail_msg("region %u: %llx+%llx type %u, expected %llx+%llx type %u", i,
			 (unsigned long long)out[i].base, (unsigned long long)out[i].size, out[i].type,
			 (unsigned long long)base, (unsigned long long)size, type);
}

/* D2: two overlapping RAM entries (as BIOS E820 maps report) become one. */
static void overlapping_ram_is_merged(void **state)
{
	const struct boot_region in[] = { R(2 * MiB, 16 * MiB, BMEM_FREE), R(MiB, 16 * MiB, BMEM_FREE) };

	(void)state;
	assert_int_equal(memmap_normalize(in, 2, out, BOOT_MAX_REGIONS), 1);
	expect_region(0, MiB, 17 * MiB, BMEM_FREE);
}

/* D2: RAM reported over ACPI NVS and reserved memory: the stricter type wins, the RAM is cut. */
static void non_ram_wins_over_ram(void **state)
{
	const struct boot_region in[] = {
		R(0, 64 * MiB, BMEM_FREE),
		R(48 * MiB, 64 * 1024, BMEM_ACPI_NVS),
		R(60 * MiB, 8 * MiB, BMEM_RESERVED),		/* reaches past the RAM */
		R(32 * MiB, 4096, 77),				/* an unknown type: reserved */
	};

	(void)state;
	assert_int_equal(memmap_normalize(in, 4, out, BOOT_MAX_REGIONS), 6);
	expect_region(0, 0, 32 * MiB, BMEM_FREE);
	expect_region(1, 32 * MiB, 4096, BMEM_RESERVED);
	expect_region(2, 32 * MiB + 4096, 16 * MiB - 4096, BMEM_FREE);
	expect_region(3, 48 * MiB, 64 * 1024, BMEM_ACPI_NVS);
	expect_region(4, 48 * MiB + 64 * 1024, 12 * MiB - 64 * 1024, BMEM_FREE);
	expect_region(5, 60 * MiB, 8 * MiB, BMEM_RESERVED);
}

/* Unsorted input comes out sorted; free RAM only in whole pages; a wrapping entry is clipped. */
static void sorted_whole_pages_no_wrap(void **state)
{
	const struct boot_region in[] = {
		R(16 * MiB + 0x10, 0x3000, BMEM_FREE),		/* 16M+0x1000 .. 16M+0x3000 */
		R(MiB, 0x800, BMEM_FREE),			/* less than a page: nothing */
		R(UINT64_MAX - 0xfff, 0x10000, BMEM_RESERVED),	/* wraps: to the top */
		R(8 * MiB, 0, BMEM_RESERVED),			/* empty: nothing */
	};

	(void)state;
	assert_int_equal(memmap_normalize(in, 4, out, BOOT_MAX_REGIONS), 2);
	expect_region(0, 16 * MiB + 0x1000, 0x2000, BMEM_FREE);
	expect_region(1, UINT64_MAX - 0xfff, 0xfff, BMEM_RESERVED);
}

static void wr(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* One Multiboot map entry at p: size, base, length, type. */
static unsigned mb_entry(uint8_t *p, uint32_t size, uint64_t base, uint64_t len, uint32_t type)
{
	wr(p, size, 4);
	wr(p + 4, base, 8);
	wr(p + 12, len, 8);
	wr(p + 20, type, 4);
	return 24;
}

/*
 * D7: an entry whose size field is 0xFFFFFFFC made the 32-bit walk add 0
 * (size + 4 wraps) and loop for ever; a size below 20 overlapped the next
 * entry. The walk stops at either and keeps what came before.
 */
static void multiboot_walk_checks_entry_sizes(void **state)
{
	static const uint32_t bad[] = { 0xfffffffcu, 0xffffffffu, 0, 4, 19, 1000 };
	uint8_t map[96];
	uint32_t entries;

	(void)state;
	for (unsigned k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		unsigned n = mb_entry(map, 20, MiB, 8 * MiB, 1);

		n += mb_entry(map + n, bad[k], 32 * MiB, 8 * MiB, 1);
		n += mb_entry(map + n, 20, 64 * MiB, 8 * MiB, 1);
		assert_int_equal(memmap_multiboot(map, n, out, BOOT_MAX_REGIONS, &entries), 1);
		assert_int_equal(entries, 1);
		expect_region(0, MiB, 8 * MiB, BMEM_FREE);
	}
	/* a larger size is allowed (the spec's size field): the extra bytes are skipped */
	unsigned n = mb_entry(map, 24, MiB, 8 * MiB, 3);
	n += 4;
	n += mb_entry(map + n, 20, 64 * MiB, 8 * MiB, 4);
	assert_int_equal(memmap_multiboot(map, n, out, BOOT_MAX_REGIONS, &entries), 2);
	expect_region(0, MiB, 8 * MiB, BMEM_ACPI);
	expect_region(1, 64 * MiB, 8 * MiB, BMEM_ACPI_NVS);
	/* a map cut inside an entry: that entry is not read */
	assert_int_equal(memmap_multiboot(map, n - 1, out, BOOT_MAX_REGIONS, &entries), 1);
	assert_int_equal(entries, 1);
}

/* A range already free is refused: a double free cannot make a page go out twice. */
static void free_list_refuses_overlaps(void **state)
{
	static struct mem_free f = { .lo = MiB, .hi = UINT64_C(1) << 32 };

	(void)state;
	assert_true(memfree_add(&f, 0, 4 * MiB));		/* clipped to [1M, 4M) */
	assert_int_equal(f.n, 1);
	assert_int_equal(f.r[0].base, MiB);
	assert_false(memfree_add(&f, 2 * MiB, 4096));
	assert_false(memfree_add(&f, 3 * MiB, 2 * MiB));	/* overlaps the tail */
	assert_true(memfree_add(&f, 4 * MiB, MiB));		/* adjacent: merged */
	assert_int_equal(f.n, 1);
	assert_int_equal(f.r[0].size, 4 * MiB);
	assert_true(memfree_add(&f, (UINT64_C(1) << 32) - 4096, 1 << 20));	/* clipped at hi */
	assert_int_equal(f.n, 2);
	assert_int_equal(f.r[1].size, 4096);
	assert_int_equal(memfree_take(&f, 4 * MiB), MiB);
	assert_int_equal(memfree_take(&f, 4096), (UINT64_C(1) << 32) - 4096);
	assert_int_equal(memfree_take(&f, 4096), 0);
	assert_int_equal(memfree_take(&f, 100), 0);		/* not whole pages */
}

/*
 * The page at a is RAM in the raw map: no non-RAM entry touches it and RAM
 * entries cover every byte (the maps below are in 0x800-byte steps).
 */
/*
 * N2: a map longer than the table (boot/multiboot.c keeps
 * BOOT_MAX_REGIONS - 1 - BOOT_MAX_FILES = 503 entries): entry 0 is RAM
 * over [1 MiB, 128 MiB), 502 fillers of RAM above 4 GiB, and entry 503
 * reserves [64 MiB, 65 MiB). Leaving the reserved entry out handed that
 * memory out as RAM; a full table must lose RAM instead.
 */
static void full_table_loses_ram_not_reserved(void **state)
{
	static uint8_t map[24 * 505];
	static struct boot_region raw[BOOT_MAX_REGIONS];
	const uint32_t max = BOOT_MAX_REGIONS - 1 - 8;
	uint32_t entries, n, k, len = 0;
	bool reserved_seen = false;

	(void)state;
	len += mb_entry(map + len, 20, MiB, 127 * MiB, 1);
	for (uint32_t i = 1; i < 503; i++)
		len += mb_entry(map + len, 20, (UINT64_C(4) << 30) + i * 0x10000, 0x10000, 1);
	len += mb_entry(map + len, 20, 64 * MiB, MiB, 2);
	len += mb_entry(map + len, 20, (UINT64_C(8) << 30), MiB, 1);	/* RAM past a full table */
	n = memmap_multiboot(map, len, raw, max, &entries);
	assert_int_equal(entries, 505);
	assert_int_equal(n, max);
	k = memmap_normalize(raw, n, out, BOOT_MAX_REGIONS);
	for (uint32_t i = 0; i < k; i++) {
		uint64_t e = out[i].base + out[i].size;

		if (out[i].type == BMEM_FREE && out[i].base < 65 * MiB && e > 64 * MiB)
			fail_msg("[%llx,%llx) is free RAM over the reserved entry 503",
				 (unsigned long long)out[i].base, (unsigned long long)e);
		if (out[i].type == BMEM_RESERVED && out[i].base <= 64 * MiB && e >= 65 * MiB)
			reserved_seen = true;
		assert_true(out[i].base < (UINT64_C(8) << 30));	/* the RAM past the table is lost */
	}
	assert_true(reserved_seen);
	expect_region(0, MiB, 63 * MiB, BMEM_FREE);		/* entry 0 is kept around the hole */
}

/* Loader addresses in the module tests: 1 + an index into mod_mem. */
static const void *mod_mem[8];

static const void *mod_at(uint32_t addr)
{
	assert_true(addr >= 1 && addr <= 8 && mod_mem[addr - 1] != NULL);
	return mod_mem[addr - 1];
}

/*
 * N1: a module whose command line is shorter than "nbprof/" (none at all,
 * "", or "/a.cfg") had strlen start past its NUL. The command lines are
 * heap blocks of their exact length, so a read past one is an ASan report.
 */
static void modules_with_short_command_lines(void **state)
{
	static const char *lines[] = {
		"", "/a.cfg", "/nbprof/prog nbprof/prog", "nbprof/", "x nbprof/0123456789012345678901234567890x",
		"nbprof/b",
	};
	static const char cfg[] = "run = cpu\n";
	static struct bootinfo bi;
	struct mb_module mods[8] = { { 0 } };
	char *copy[8] = { 0 };

	(void)state;
	mod_mem[7] = cfg;
	for (unsigned i = 0; i < 6; i++) {
		copy[i] = strdup(lines[i]);
		mod_mem[i] = copy[i];
		mods[i] = (struct mb_module){ .start = 8, .end = 8 + (uint32_t)strlen(cfg), .string = i + 1 };
	}
	mods[6] = (struct mb_module){ .start = 8, .end = 8, .string = 0 };	/* no command line */
	memset(&bi, 0, sizeof(bi));
	mb_read_modules(&bi, mods, 7, mod_at);
	assert_int_equal(bi.cfg_status, BOOT_CFG_OK);		/* module 0 (command line "") */
	assert_int_equal(bi.cfg_len, strlen(cfg));
	assert_memory_equal(bi.cfg, cfg, strlen(cfg));
	assert_int_equal(bi.nfiles, 2);
	assert_string_equal(bi.files[0].name, "prog");
	assert_string_equal(bi.files[1].name, "b");
	assert_int_equal(bi.files[1].base, 8);
	assert_int_equal(bi.files_skipped, 2);		/* "nbprof/" and a 32-character name */
	/* the same with module 1 ("/a.cfg") first, and with a first module that has no command line */
	memset(&bi, 0, sizeof(bi));
	mb_read_modules(&bi, mods + 1, 1, mod_at);
	assert_int_equal(bi.cfg_status, BOOT_CFG_OK);
	assert_int_equal(bi.nfiles, 0);
	memset(&bi, 0, sizeof(bi));
	mb_read_modules(&bi, mods + 6, 1, mod_at);
	assert_int_equal(bi.cfg_status, BOOT_CFG_OK);
	assert_int_equal(bi.cfg_len, 0);
	for (unsigned i = 0; i < 8; i++)
		free(copy[i]);
}

static int page_is_ram(const struct boot_region *in, uint32_t n, uint64_t a)
{
	for (uint64_t c = a; c < a + 4096; c += 0x800) {
		int ram = 0;

		for (uint32_t i = 0; i < n; i++) {
			uint64_t b = in[i].base, e = in[i].base + in[i].size;

			if (!in[i].size || e <= c || b >= c + 0x800)
				continue;
			if (in[i].type != BMEM_FREE)
				return 0;
			ram = 1;
		}
		if (!ram)
			return 0;
	}
	return 1;
}

/*
 * Random overlapping maps, normalised and handed to the allocator: every
 * page it gives out is RAM in the raw map, and none is given out twice.
 */
static void allocator_never_hands_out_non_ram_or_twice(void **state)
{
	static struct mem_free f;
	static uint64_t got[4096];
	struct boot_region in[12];

	(void)state;
	srand(7);
	for (unsigned round = 0; round < 300; round++) {
		uint32_t n = 1 + (uint32_t)rand() % 12, k, m = 0;
		uint64_t a;

		for (uint32_t i = 0; i < n; i++)
			in[i] = R((uint64_t)(rand() % 64) * 0x800, (uint64_t)(rand() % 32) * 0x800,
				  rand() % 3 ? BMEM_FREE : (uint32_t)(rand() % BMEM_NTYPES));
		k = memmap_normalize(in, n, out, BOOT_MAX_REGIONS);
		f = (struct mem_free){ .lo = 0x1000, .hi = UINT64_MAX };
		for (uint32_t i = 0; i < k; i++) {
			if (i)
				assert_true(out[i].base >= out[i - 1].base + out[i - 1].size);
			if (out[i].type == BMEM_FREE)
				assert_true(memfree_add(&f, out[i].base, out[i].size));
		}
		while ((a = memfree_take(&f, 4096)) != 0) {
			assert_true(page_is_ram(in, n, a));
			for (uint32_t j = 0; j < m; j++)
				assert_true(got[j] != a);
			got[m++] = a;
		}
		/* every RAM page of the raw map from lo up was handed out */
		for (uint64_t p = 0x1000; p < 64 * 0x800 + 32 * 0x800; p += 4096) {
			uint32_t j = 0;

			while (j < m && got[j] != p)
				j++;
			assert_int_equal(page_is_ram(in, n, p), j < m);
		}
	}
}

/* A BIOS E820 map of the era: 639 KiB of conventional memory, the BIOS ROM, RAM from 1 MiB. */
static const struct boot_region bios_map[] = {
	R(0, 0x9fc00, BMEM_FREE),
	R(0x9fc00, 0x400, BMEM_RESERVED),
	R(0xf0000, 0x10000, BMEM_RESERVED),
	R(MiB, 63 * MiB, BMEM_FREE),
};

static uint64_t low_page(const struct boot_region *in, uint32_t n, uint16_t ebda_seg,
			 uint16_t base_kib)
{
	struct bda_low bda = { .ebda_seg = ebda_seg, .base_kib = base_kib };
	uint32_t k = memmap_normalize(in, n, out, BOOT_MAX_REGIONS);

	return memmap_low_page(out, k, &bda);
}

/*
 * G9: an EBDA at 9D000H that E820 lists as RAM (Dell BIOSes: Linux's
 * ebda.c) and 413H lowered to 600 KiB (a resident PXE stack) keep the
 * sibling's start-up page below them; the lower of the two wins.
 */
static void low_page_stays_below_the_ebda_and_base_memory(void **state)
{
	(void)state;
	/* E820 alone: the highest page below 9F000H */
	assert_int_equal(memmap_low_page(bios_map, 4, NULL), 0x9e000);
	assert_int_equal(low_page(bios_map, 4, 0x9fc0, 639), 0x9e000);	/* SeaBIOS under QEMU */
	/* EBDA at 9D000H, listed as RAM, 413H not lowered for it */
	assert_int_equal(low_page(bios_map, 4, 0x9d00, 639), 0x9c000);
	assert_int_equal(low_page(bios_map, 4, 0x9d80, 639), 0x9c000);	/* inside a page */
	/* 413H = 600 KiB (96000H), the EBDA above it */
	assert_int_equal(low_page(bios_map, 4, 0x9fc0, 600), 0x95000);
	/* both: the lower one */
	assert_int_equal(low_page(bios_map, 4, 0x9a00, 630), 0x99000);
	assert_int_equal(low_page(bios_map, 4, 0x9d00, 600), 0x95000);
	/* the cap does not make non-RAM usable: RAM only up to 90000H */
	{
		const struct boot_region small[] = { R(0, 0x90000, BMEM_FREE),
						     R(0x90000, 0x10000, BMEM_RESERVED) };

		assert_int_equal(low_page(small, 2, 0x9d00, 639), 0x8f000);
	}
}

/* G9: BDA words no PC would hold are not believed: the E820 rule alone. */
static void low_page_ignores_implausible_bda_values(void **state)
{
	static const uint16_t bad[][2] = {
		{ 0, 0 },		/* no BDA filled in */
		{ 0xffff, 0xffff },	/* EBDA FFFF0H, 64 MiB of base memory */
		{ 0x1000, 100 },	/* EBDA at 64 KiB, 100 KiB: under 128 KiB (ebda.c) */
		{ 0xa000, 640 },	/* at or above A0000H: above 9F000H */
		{ 0xc000, 1024 },
	};

	(void)state;
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(low_page(bios_map, 4, bad[i][0], bad[i][1]), 0x9e000);
	/* one believable word is enough: 128 KiB exactly is believed */
	assert_int_equal(low_page(bios_map, 4, 0, 128), 0x1f000);
	assert_int_equal(low_page(bios_map, 4, 0x9d00, 0), 0x9c000);
	/* no free page under the cap (page 0 is never taken): none */
	{
		const struct boot_region tiny[] = { R(0, 0x1000, BMEM_FREE), R(0x40000, 0x60000, BMEM_FREE) };

		assert_int_equal(low_page(tiny, 2, 0x3000, 639), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(overlapping_ram_is_merged),
		cmocka_unit_test(non_ram_wins_over_ram),
		cmocka_unit_test(sorted_whole_pages_no_wrap),
		cmocka_unit_test(multiboot_walk_checks_entry_sizes),
		cmocka_unit_test(full_table_loses_ram_not_reserved),
		cmocka_unit_test(modules_with_short_command_lines),
		cmocka_unit_test(free_list_refuses_overlaps),
		cmocka_unit_test(allocator_never_hands_out_non_ram_or_twice),
		cmocka_unit_test(low_page_stays_below_the_ebda_and_base_memory),
		cmocka_unit_test(low_page_ignores_implausible_bda_values),
	};

	alarm(20);	/* a walk that never ends fails the test instead of hanging it */
	return cmocka_run_group_tests_name("memmap", tests, NULL, NULL);
}
