/*
 * test_paging.c - the page-table walk behind paging_is_mapped() over
 * hand-built paging structures.
 *
 * The tables follow SDM Vol. 3A 4.5 (4-level paging): entry bits P (0),
 * U/S (2) and PS (7, a 1 GiB page in a PDPTE, a 2 MiB page in a PDE, the
 * PAT bit in a PTE), addresses in bits 51:12, the index of each level in
 * linear-address bits 47:39, 38:30, 29:21 and 20:12. Expected answers come
 * from those rules, not from running the walker.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "arch/x86/paging.h"

#define P	UINT64_C(0x1)
#define RW	UINT64_C(0x2)
#define US	UINT64_C(0x4)
#define PS	UINT64_C(0x80)
#define K4	UINT64_C(0x1000)
#define M2	UINT64_C(0x200000)
#define G1	UINT64_C(0x40000000)
#define NTAB	8
#define TBASE	UINT64_C(0x100000)	/* "physical" address of table 0 */

struct mem {
	uint64_t t[NTAB][512];
	unsigned reads;
};

enum { PML4, PDPT, PD, PT, PDPT_HI, PD_HI, PT2 };

static uint64_t tab(unsigned i)
{
	return TBASE + i * K4;
}

static uint64_t mem_read(void *ctx, uint64_t table, unsigned index)
{
	struct mem *m = ctx;
	uint64_t i = (table - TBASE) / K4;

	assert_true(table >= TBASE && (table - TBASE) % K4 == 0 && i < NTAB);
	assert_true(index < 512);
	m->reads++;
	return m->t[i][index];
}

/*
 * The layout used by most tests:
 *   [0, 4 KiB)           absent (PT entry 0 clear)
 *   [4 KiB, 12 KiB)      4 KiB pages, user (PT entries 1, 2)
 *   [12 KiB, 16 KiB)     4 KiB page, supervisor only (PT entry 3)
 *   [16 KiB, 20 KiB)     4 KiB page with bit 7 (PAT) set, user (PT entry 4)
 *   [2 MiB, 4 MiB)       one 2 MiB page, user
 *   [4 MiB, 6 MiB)       one 2 MiB page, supervisor only
 *   [6 MiB, 8 MiB)       absent PDE
 *   [1 GiB, 2 GiB)       one 1 GiB page, user
 *   0xffff800000000000   PML4 entry 256 -> a 2 MiB page, supervisor (a high canonical address)
 * PML4 entry 0 and PDPT entry 0 have U/S set.
 */
static void layout(struct mem *m)
{
	memset(m, 0, sizeof(*m));
	m->t[PML4][0] = tab(PDPT) | P | RW | US;
	m->t[PDPT][0] = tab(PD) | P | RW | US;
	m->t[PDPT][1] = 1 * G1 | P | RW | US | PS;
	m->t[PD][0] = tab(PT) | P | RW | US;
	m->t[PD][1] = 1 * M2 | P | RW | US | PS;
	m->t[PD][2] = 2 * M2 | P | RW | PS;
	m->t[PT][1] = 1 * K4 | P | RW | US;
	m->t[PT][2] = 2 * K4 | P | RW | US;
	m->t[PT][3] = 3 * K4 | P | RW;
	m->t[PT][4] = 4 * K4 | P | RW | US | PS;
	m->t[PML4][256] = tab(PDPT_HI) | P | RW;
	m->t[PDPT_HI][0] = tab(PD_HI) | P | RW;
	m->t[PD_HI][0] = 0x200000 | P | RW | PS;
}

static bool mapped(struct mem *m, uint64_t addr, uint64_t len, bool user)
{
	return paging_walk_mapped(tab(PML4), addr, len, user, mem_read, m);
}

static void test_4k_pages(void **state)
{
	struct mem m;

	layout(&m);
	assert_false(mapped(&m, 0, 8, false));			/* page 0 absent */
	assert_false(mapped(&m, 0xff8, 8, false));
	assert_true(mapped(&m, 0x1000, 8, false));
	assert_true(mapped(&m, 0x1ff8, 16, true));		/* across pages 1 and 2 */
	assert_true(mapped(&m, 0x1000, 2 * K4, true));		/* exactly pages 1-2 */
	assert_true(mapped(&m, 0x3000, 8, false));
	assert_false(mapped(&m, 0x5000, 8, false));		/* PT entry 5 absent */
	assert_false(mapped(&m, 0x4ff8, 16, false));		/* ends in the absent page 5 */
}

static void test_pat_bit_in_pte_is_not_a_large_page(void **state)
{
	struct mem m;

	layout(&m);
	assert_true(mapped(&m, 0x4000, K4, true));
	assert_false(mapped(&m, 0x4000, K4 + 1, true));		/* PTE bit 7 maps 4 KiB only */
}

static void test_2m_and_1g_pages(void **state)
{
	struct mem m;

	layout(&m);
	assert_true(mapped(&m, M2, M2, true));
	assert_true(mapped(&m, 2 * M2 - 8, 16, false));		/* across two 2 MiB pages */
	assert_false(mapped(&m, 2 * M2 - 8, 16, true));		/* the second is supervisor-only */
	assert_true(mapped(&m, 2 * M2, M2, false));
	assert_false(mapped(&m, 3 * M2 - 8, 16, false));	/* runs into the absent PDE 3 */
	assert_true(mapped(&m, G1, G1, true));			/* the whole 1 GiB page */
	assert_true(mapped(&m, G1 + 12345, 100, true));
	assert_false(mapped(&m, 2 * G1 - 8, 16, true));		/* PDPT entry 2 absent */
}

static void test_large_range_takes_big_steps(void **state)
{
	struct mem m;

	layout(&m);
	m.reads = 0;
	assert_true(mapped(&m, G1, G1, true));
	assert_int_equal(m.reads, 2);				/* PML4E, PDPTE: one page */
	m.reads = 0;
	assert_true(mapped(&m, M2, M2, true));
	assert_int_equal(m.reads, 3);
}

static void test_user_needs_us_at_every_level(void **state)
{
	struct mem m;

	layout(&m);
	assert_false(mapped(&m, 0x3000, 8, true));		/* PTE lacks U/S */
	assert_true(mapped(&m, 0x3000, 8, false));
	assert_false(mapped(&m, 0x2ff8, 16, true));		/* user page 2 then supervisor page 3 */
	m.t[PD][0] &= ~US;					/* PDE lacks U/S: its PTEs do not help */
	assert_false(mapped(&m, 0x1000, 8, true));
	assert_true(mapped(&m, 0x1000, 8, false));
	layout(&m);
	m.t[PML4][0] &= ~US;					/* top level lacks U/S */
	assert_false(mapped(&m, G1, 8, true));
	assert_false(mapped(&m, M2, 8, true));
	assert_true(mapped(&m, G1, 8, false));
	layout(&m);
	m.t[PDPT][0] &= ~US;
	assert_false(mapped(&m, M2, 8, true));
	assert_true(mapped(&m, G1, 8, true));			/* PDPT entry 1 still has it */
}

static void test_absent_upper_levels(void **state)
{
	struct mem m;

	layout(&m);
	assert_false(mapped(&m, UINT64_C(512) << 30, 8, false));	/* PML4 entry 1 absent */
	assert_false(mapped(&m, 3 * G1, 8, false));			/* PDPT entry 3 absent */
	m.t[PML4][0] &= ~P;
	assert_false(mapped(&m, 0x1000, 8, false));
	assert_false(mapped(&m, G1, 8, false));
	layout(&m);
	m.t[PD][0] &= ~P;					/* not present: its PT is not consulted */
	assert_false(mapped(&m, 0x1000, 8, false));
}

static void test_canonical_and_wrap(void **state)
{
	struct mem m;

	layout(&m);
	assert_true(mapped(&m, UINT64_C(0xffff800000000000), 8, false));
	assert_false(mapped(&m, UINT64_C(0xffff800000000000), 8, true));
	assert_false(mapped(&m, UINT64_C(0x0000800000000000), 8, false));	/* not canonical */
	assert_false(mapped(&m, UINT64_C(0x00007ffffffffff8), 16, false));	/* runs past 47 bits */
	assert_false(mapped(&m, UINT64_C(0xfffffffffffffff8), 16, false));	/* wraps */
	assert_false(mapped(&m, UINT64_C(0xfffffffffffffff8), 8, false));	/* PML4 511 absent */
}

static void test_zero_length_is_one_byte(void **state)
{
	struct mem m;

	layout(&m);
	assert_true(mapped(&m, 0x1fff, 0, true));
	assert_false(mapped(&m, 0xfff, 0, false));
	assert_true(mapped(&m, 0xfff + 1, 0, false));
}

static void test_root_low_bits_ignored(void **state)
{
	struct mem m;

	layout(&m);
	/* CR3 carries PCD/PWT (bits 4:3) and, with PCIDs, bits 11:0: the table address is 51:12. */
	assert_true(paging_walk_mapped(tab(PML4) | 0x18, 0x1000, 8, true, mem_read, &m));
}

/*
 * PAE paging (SDM Vol. 3A 4.4, the ia32 kernel's): four PDPTEs at CR3
 * bits 31:5 (index: linear bits 31:30), then a PD (29:21, PS = 2 MiB) and a
 * PT (20:12). PDPTEs have no U/S bit, so only the PDE and PTE decide a
 * user access. Layout:
 *   PDPTE 0 -> PD: PDE 0 -> PT (page 0 absent, page 1 user, page 2
 *   supervisor), PDE 1 a 2 MiB user page, PDE 2 a 2 MiB supervisor page;
 *   PDPTE 3 -> PD_HI: PDE 511 a 2 MiB user page at FFE00000H;
 *   PDPTEs 1 and 2 absent.
 */
static void pae_layout(struct mem *m)
{
	memset(m, 0, sizeof(*m));
	m->t[PDPT][0] = tab(PD) | P;
	m->t[PDPT][3] = tab(PD_HI) | P;
	m->t[PD][0] = tab(PT) | P | RW | US;
	m->t[PD][1] = 1 * M2 | P | RW | US | PS;
	m->t[PD][2] = 2 * M2 | P | RW | PS;
	m->t[PT][1] = 1 * K4 | P | RW | US;
	m->t[PT][2] = 2 * K4 | P | RW;
	m->t[PD_HI][511] = UINT64_C(0xffe00000) | P | RW | US | PS;
}

static bool pae_mapped(struct mem *m, uint64_t addr, uint64_t len, bool user)
{
	return paging_walk_mapped_pae(tab(PDPT), addr, len, user, mem_read, m);
}

static void test_pae_pages_and_user_bits(void **state)
{
	struct mem m;

	pae_layout(&m);
	assert_false(pae_mapped(&m, 0, 1, false));			/* page 0 absent */
	assert_true(pae_mapped(&m, 0x1000, 4096, true));
	assert_false(pae_mapped(&m, 0x2000, 8, true));		/* supervisor PTE */
	assert_true(pae_mapped(&m, 0x2000, 8, false));
	assert_true(pae_mapped(&m, 0x1000, 2 * K4, false));
	assert_false(pae_mapped(&m, 0x1000, 2 * K4, true));	/* runs into page 2 */
	assert_true(pae_mapped(&m, M2, M2, true));		/* whole 2 MiB user page */
	assert_false(pae_mapped(&m, M2, M2 + 1, true));		/* into the supervisor one */
	assert_true(pae_mapped(&m, M2, 2 * M2, false));
	assert_false(pae_mapped(&m, 3 * M2, 1, false));		/* PDE 3 absent */
}

/*
 * paging_split_2m: the 2 MiB page at 40200000H (P, RW, US, PCD, PS, and the
 * 2 MiB PAT bit 12 clear) becomes 512 4 KiB entries 40200000H + i * 4 KiB
 * with P, RW, US, PCD (no PS: bit 7 of a PTE is PAT); the PDE then points at
 * the table with P, RW, US only.
 */
static void test_split_2m_keeps_the_bits(void **state)
{
	static uint64_t pt[512] __attribute__((aligned(4096)));
	uint64_t pde = UINT64_C(0x40200000) | P | RW | US | UINT64_C(0x10) | PS;

	(void)state;
	memset(pt, 0xff, sizeof(pt));
	paging_split_2m(&pde, pt);
	for (unsigned i = 0; i < 512; i++)
		assert_int_equal(pt[i], (UINT64_C(0x40200000) + i * K4) | P | RW | US | UINT64_C(0x10));
	assert_int_equal(pde, (uint64_t)(uintptr_t)pt | P | RW | US);
	/* a supervisor read-only page stays so, page by page */
	pde = UINT64_C(0x600000) | P | PS;
	paging_split_2m(&pde, pt);
	assert_int_equal(pt[0], UINT64_C(0x600000) | P);
	assert_int_equal(pt[511], (UINT64_C(0x600000) + 511 * K4) | P);
	assert_int_equal(pde, (uint64_t)(uintptr_t)pt | P);
}

static void test_pae_pdpt_index_and_4g_limit(void **state)
{
	struct mem m;

	pae_layout(&m);
	assert_false(pae_mapped(&m, G1, 8, false));			/* PDPTE 1 absent */
	assert_false(pae_mapped(&m, 2 * G1, 8, false));		/* PDPTE 2 absent */
	assert_true(pae_mapped(&m, UINT64_C(0xfffffff8), 8, true));	/* PDPTE 3, PDE 511 */
	assert_false(pae_mapped(&m, UINT64_C(0xfffffff8), 9, false));	/* ends above 4 GiB */
	assert_false(pae_mapped(&m, UINT64_C(0x100000000), 1, false));
	/* CR3 bits 4:3 (PWT, PCD) are not part of the PDPT address. */
	assert_true(paging_walk_mapped_pae(tab(PDPT) | 0x18, 0x1000, 8, true, mem_read, &m));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_4k_pages),
		cmocka_unit_test(test_split_2m_keeps_the_bits),
		cmocka_unit_test(test_pat_bit_in_pte_is_not_a_large_page),
		cmocka_unit_test(test_2m_and_1g_pages),
		cmocka_unit_test(test_large_range_takes_big_steps),
		cmocka_unit_test(test_user_needs_us_at_every_level),
		cmocka_unit_test(test_absent_upper_levels),
		cmocka_unit_test(test_canonical_and_wrap),
		cmocka_unit_test(test_zero_length_is_one_byte),
		cmocka_unit_test(test_root_low_bits_ignored),
		cmocka_unit_test(test_pae_pages_and_user_bits),
		cmocka_unit_test(test_pae_pdpt_index_and_4g_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
