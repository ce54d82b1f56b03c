/*
 * test_topology.c - APIC ID -> package/core/SMT, candidate APIC IDs, the
 * MADT walk, and the LP list of the `cpu` command.
 *
 * CPUID inputs are register values as the SDM defines them (CPUID.1:EBX
 * [23:16] logical processors per package, [31:24] initial APIC ID, EDX[28]
 * HTT; CPUID.4:EAX[31:26] cores per package - 1). Expected IDs follow the
 * PMU reference's section 7 rule: threads per core = logical / cores, SMT ID =
 * APIC ID & (next power of two of threads per core - 1); the core field
 * sits above it, the package above both.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "arch/x86/cpuid.h"
#include "arch/x86/topology.h"
#include "shell/shell.h"
#include "tests/host/fake_platform.h"

/* One part's CPUID: max basic leaf, EBX[23:16], HTT, cores per package (0 = no leaf 4). */
static void part_shape(uint32_t max_leaf, unsigned logical, bool htt, unsigned cores,
		       uint8_t apic_id, struct topo_shape *out)
{
	struct cpuid_raw r;
	struct cpu_info ci;

	memset(&r, 0, sizeof(r));
	memset(&ci, 0, sizeof(ci));
	r.leaf0.eax = max_leaf;
	r.leaf1.eax = 0xf41;
	r.leaf1.ebx = (uint32_t)apic_id << 24 | logical << 16;
	r.leaf1.edx = htt ? CPUID_1_EDX_HTT : 0;
	if (cores)
		r.leaf4.eax = (uint32_t)(cores - 1) << 26;
	cpuid_decode(&r, &ci);
	topo_shape_from_cpu(&ci, out);
}

static void expect_id(const struct topo_shape *s, uint32_t apic, uint32_t pkg, uint32_t core,
		      uint32_t smt)
{
	struct topo_id id;

	topo_decompose(s, apic, &id);
	assert_int_equal(id.package, pkg);
	assert_int_equal(id.core, core);
	assert_int_equal(id.smt, smt);
}

/* Pentium 4 with HT (Northwood: max basic leaf 2, so no leaf 4): 1 core, 2 threads. */
static void ht_pentium4(void **state)
{
	struct topo_shape s;
	uint32_t ids[8];

	part_shape(2, 2, true, 0, 0, &s);
	assert_int_equal(s.cores_per_package, 1);
	assert_int_equal(s.threads_per_core, 2);
	assert_int_equal(topo_smt_bits(&s), 1);
	assert_int_equal(topo_core_bits(&s), 0);
	expect_id(&s, 0, 0, 0, 0);
	expect_id(&s, 1, 0, 0, 1);
	assert_int_equal(topo_candidates(&s, 0, ids, 8), 2);
	assert_int_equal(ids[0], 0);
	assert_int_equal(ids[1], 1);
}

/* Prescott HT with leaf 4 (max leaf 5, cores - 1 = 0): the same answer through leaf 4. */
static void ht_prescott_leaf4(void **state)
{
	struct topo_shape s;

	part_shape(5, 2, true, 1, 1, &s);
	assert_int_equal(s.threads_per_core, 2);
	expect_id(&s, 1, 0, 0, 1);
}

/* Pentium D 8xx (Smithfield): HTT set, 2 logical, 2 cores -> 1 thread per core. */
static void pentium_d_smithfield(void **state)
{
	struct topo_shape s;
	uint32_t ids[8];

	part_shape(5, 2, true, 2, 0, &s);
	assert_int_equal(s.threads_per_core, 1);
	assert_int_equal(topo_smt_bits(&s), 0);
	assert_int_equal(topo_core_bits(&s), 1);
	/* APIC ID bit 0 is the core here, not a thread: both are SMT 0 */
	expect_id(&s, 0, 0, 0, 0);
	expect_id(&s, 1, 0, 1, 0);
	assert_int_equal(topo_candidates(&s, 0, ids, 8), 2);
	assert_int_equal(ids[1], 1);
}

/* Pentium Extreme Edition 955/965 (Presler): 2 cores x 2 threads. */
static void presler_xe(void **state)
{
	struct topo_shape s;
	uint32_t ids[8];

	part_shape(6, 4, true, 2, 0, &s);
	assert_int_equal(s.threads_per_core, 2);
	expect_id(&s, 0, 0, 0, 0);
	expect_id(&s, 1, 0, 0, 1);
	expect_id(&s, 2, 0, 1, 0);
	expect_id(&s, 3, 0, 1, 1);
	expect_id(&s, 5, 1, 0, 1);	/* a second package starts at APIC ID 4 */
	assert_int_equal(topo_candidates(&s, 0, ids, 8), 4);
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(ids[i], i);
}

/* Pentium 4 without HT (Willamette): HTT clear, EBX[23:16] = 0. */
static void non_ht_pentium4(void **state)
{
	struct topo_shape s;
	uint32_t ids[8];

	part_shape(2, 0, false, 0, 0, &s);
	assert_int_equal(s.logical_per_package, 1);
	assert_int_equal(s.threads_per_core, 1);
	assert_int_equal(topo_smt_bits(&s), 0);
	expect_id(&s, 0, 0, 0, 0);
	assert_int_equal(topo_candidates(&s, 0, ids, 8), 1);
	assert_int_equal(ids[0], 0);
}

/* The BSP need not be APIC ID 0 (a Xeon DP whose BSP is in package 3): BSP first. */
static void bsp_in_second_package(void **state)
{
	struct topo_shape s;
	uint32_t ids[8];

	part_shape(2, 2, true, 0, 7, &s);
	expect_id(&s, 7, 3, 0, 1);
	assert_int_equal(topo_candidates(&s, 7, ids, 8), 2);
	assert_int_equal(ids[0], 7);
	assert_int_equal(ids[1], 6);
}

/* Three threads per core (not a NetBurst part): the mask still covers a power of two. */
static void non_power_of_two(void **state)
{
	struct topo_shape s = { .logical_per_package = 6, .cores_per_package = 2,
				.threads_per_core = 3 };

	assert_int_equal(topo_smt_bits(&s), 2);
	expect_id(&s, 6, 0, 1, 2);
	expect_id(&s, 8, 1, 0, 0);
}

static void candidates_respect_max(void **state)
{
	struct topo_shape s = { 4, 2, 2 };
	uint32_t ids[2];

	assert_int_equal(topo_candidates(&s, 0, ids, 2), 2);
	assert_int_equal(topo_candidates(&s, 0, ids, 0), 0);
}

/* --- MADT ------------------------------------------------------------------ */

static size_t madt_build(uint8_t *t, const uint8_t (*ents)[8], unsigned n)
{
	size_t len = 44 + 8 * n;

	memset(t, 0, len);
	memcpy(t, "APIC", 4);
	t[4] = (uint8_t)len;
	t[5] = (uint8_t)(len >> 8);
	for (unsigned i = 0; i < n; i++)
		memcpy(t + 44 + 8 * i, ents[i], 8);
	return len;
}

static void madt_enabled_lapics(void **state)
{
	/* type 0, len 8, UID, APIC ID, flags (bit 0 enabled) */
	static const uint8_t ents[][8] = {
		{ 0, 8, 0, 0, 1, 0, 0, 0 },
		{ 1, 8, 0, 0, 0, 0, 0, 0 },	/* an I/O APIC entry (type 1) */
		{ 0, 8, 1, 1, 1, 0, 0, 0 },
		{ 0, 8, 2, 6, 0, 0, 0, 0 },	/* disabled (HT off in setup): not listed */
		{ 0, 8, 3, 1, 1, 0, 0, 0 },	/* duplicate ID */
	};
	uint8_t t[128];
	uint32_t ids[8];
	size_t len = madt_build(t, ents, 5);

	assert_int_equal(topo_madt_lapics(t, len, ids, 8), 2);
	assert_int_equal(ids[0], 0);
	assert_int_equal(ids[1], 1);
	assert_int_equal(topo_madt_lapics(t, len, ids, 1), 1);
}

static void madt_malformed(void **state)
{
	static const uint8_t ents[][8] = { { 0, 0, 0, 0, 1, 0, 0, 0 } };	/* length 0 */
	uint8_t t[128];
	uint32_t ids[8];
	size_t len = madt_build(t, ents, 1);

	assert_int_equal(topo_madt_lapics(t, len, ids, 8), -1);
	madt_build(t, ents, 0);
	assert_int_equal(topo_madt_lapics(t, 43, ids, 8), -1);	/* shorter than the header */
	t[0] = 'X';
	assert_int_equal(topo_madt_lapics(t, 44, ids, 8), -1);
	memcpy(t, "APIC", 4);
	t[4] = 200;						/* claims more than there is */
	assert_int_equal(topo_madt_lapics(t, 44, ids, 8), -1);
}

/* --- MP configuration table ----------------------------------------------- */

/* A table of n entries (20-byte processors, 8-byte others), checksum fixed. */
static size_t mpc_build(uint8_t *t, const uint8_t *const *ents, const size_t *lens, unsigned n)
{
	size_t len = 44;
	uint8_t sum = 0;

	memset(t, 0, 256);
	memcpy(t, "PCMP", 4);
	t[6] = 4;				/* spec revision 1.4 */
	for (unsigned i = 0; i < n; i++) {
		memcpy(t + len, ents[i], lens[i]);
		len += lens[i];
	}
	t[4] = (uint8_t)len;
	t[34] = (uint8_t)n;
	for (size_t i = 0; i < len; i++)
		sum += t[i];
	t[7] = (uint8_t)-sum;			/* the whole base table sums to 0 */
	return len;
}

static void mp_enabled_processors(void **state)
{
	/* processor: type 0, APIC ID, APIC version, flags (bit 0 EN, bit 1 BP), ... */
	static const uint8_t bsp[20] = { 0, 0, 0x14, 3 };
	static const uint8_t ap[20] = { 0, 6, 0x14, 1 };
	static const uint8_t off[20] = { 0, 7, 0x14, 0 };	/* disabled: not listed */
	static const uint8_t bus[8] = { 1, 0, 'I', 'S', 'A' };
	static const uint8_t ioapic[8] = { 2, 8, 0x11, 1 };
	const uint8_t *const ents[] = { bsp, bus, ap, ioapic, off, ap };
	const size_t lens[] = { 20, 8, 20, 8, 20, 20 };
	uint8_t t[256];
	uint32_t ids[8];
	size_t len = mpc_build(t, ents, lens, 6);

	assert_int_equal(topo_mp_lapics(t, len, ids, 8), 2);	/* the duplicate AP once */
	assert_int_equal(ids[0], 0);
	assert_int_equal(ids[1], 6);
	assert_int_equal(topo_mp_lapics(t, len, ids, 1), 1);
}

static void mp_malformed(void **state)
{
	static const uint8_t bsp[20] = { 0, 0, 0x14, 3 };
	static const uint8_t bad[8] = { 9 };			/* no such base entry type */
	const uint8_t *const ents[] = { bsp, bad };
	const size_t lens[] = { 20, 8 };
	uint8_t t[256];
	uint32_t ids[8];
	size_t len = mpc_build(t, ents, lens, 1);

	assert_int_equal(topo_mp_lapics(t, len, ids, 8), 1);
	t[50] ^= 1;						/* checksum now wrong */
	assert_int_equal(topo_mp_lapics(t, len, ids, 8), -1);
	len = mpc_build(t, ents, lens, 1);
	assert_int_equal(topo_mp_lapics(t, len - 1, ids, 8), -1);	/* shorter than it says */
	t[34] = 2;						/* one entry more than the table holds */
	t[7] -= 1;
	assert_int_equal(topo_mp_lapics(t, len, ids, 8), -1);
	len = mpc_build(t, ents, lens, 2);
	assert_int_equal(topo_mp_lapics(t, len, ids, 8), -1);
	memcpy(t, "PCMX", 4);
	assert_int_equal(topo_mp_lapics(t, len, ids, 8), -1);
}

/*
 * G10: an MP table of the Hyper-Threading era lists one LP per package (two
 * Xeon packages, APIC IDs 0 and 6); CPUID's shape gives each its sibling,
 * LP0's (1) too, after the listed ones.
 */
static void mp_list_gets_each_packages_siblings(void **state)
{
	struct topo_shape ht, one, smithfield;
	uint32_t ids[TOPO_MAX_LPS] = { 0, 6 };

	part_shape(2, 2, true, 0, 0, &ht);		/* Xeon (Prestonia): 1 core, 2 threads */
	assert_int_equal(topo_add_package_lps(&ht, ids, 2, TOPO_MAX_LPS), 4);
	assert_int_equal(ids[0], 0);
	assert_int_equal(ids[1], 6);
	assert_int_equal(ids[2], 1);
	assert_int_equal(ids[3], 7);
	/* a list that has them already gets nothing twice */
	assert_int_equal(topo_add_package_lps(&ht, ids, 4, TOPO_MAX_LPS), 4);
	/* the BSP need not be the package's first LP */
	ids[0] = 7, ids[1] = 0;
	assert_int_equal(topo_add_package_lps(&ht, ids, 2, TOPO_MAX_LPS), 4);
	assert_int_equal(ids[2], 6);
	assert_int_equal(ids[3], 1);
	/* no more than max */
	ids[0] = 0, ids[1] = 6;
	assert_int_equal(topo_add_package_lps(&ht, ids, 2, 3), 3);
	assert_int_equal(ids[2], 1);
	/* one LP per package (no HTT): the list as it is */
	part_shape(2, 1, false, 0, 0, &one);
	ids[0] = 0, ids[1] = 6;
	assert_int_equal(topo_add_package_lps(&one, ids, 2, TOPO_MAX_LPS), 2);
	/* Pentium D: the other core of each package */
	part_shape(4, 2, true, 2, 0, &smithfield);
	ids[0] = 0, ids[1] = 2;
	assert_int_equal(topo_add_package_lps(&smithfield, ids, 2, TOPO_MAX_LPS), 4);
	assert_int_equal(ids[2], 1);
	assert_int_equal(ids[3], 3);
}

/* --- the `cpu` LP list, through the shell -------------------------------- */

static char out[16384];
static size_t out_len;
static struct lp_info fake_lps[4];
static unsigned fake_nlps;
static struct lp_check fake_chk;
static int fake_check_ret;
static unsigned fake_checked;

static int io_getc(void *ctx)
{
	return -1;
}

static void io_write(void *ctx, const char *s, size_t n)
{
	assert_true(out_len + n < sizeof(out));
	memcpy(out + out_len, s, n);
	out_len += n;
	out[out_len] = '\0';
}

static unsigned fake_count(void)
{
	return fake_nlps;
}

static void fake_get(unsigned i, struct lp_info *o)
{
	*o = fake_lps[i];
}

static int fake_check(unsigned i, struct lp_check *o)
{
	fake_checked++;
	*o = fake_chk;
	return fake_check_ret;
}

static const char *fake_source(void)
{
	return "ACPI MADT";
}

static const struct lp_ops fake_ops = { fake_count, fake_get, fake_check, fake_source };

static int run_cpu(const char *line)
{
	static struct shell sh;
	struct shell_io io = { NULL, io_getc, io_write };

	out_len = 0;
	out[0] = '\0';
	shell_init(&sh, &io);
	return shell_execute(&sh, line);
}

static void add_lp(unsigned i, uint32_t apic, uint32_t core, uint32_t smt, enum lp_state st)
{
	fake_lps[i] = (struct lp_info){ .index = i, .apic_id = apic,
					.id = { .package = 0, .core = core, .smt = smt },
					.state = st };
	fake_nlps = i + 1;
}

static int lp_setup(void **state)
{
	fake_platform_reset();
	fake_nlps = 0;
	fake_checked = 0;
	fake_check_ret = 0;
	memset(&fake_chk, 0, sizeof(fake_chk));
	topo_set_lp_ops(&fake_ops);
	return 0;
}

static int lp_teardown(void **state)
{
	topo_set_lp_ops(NULL);
	return 0;
}

static void cpu_lists_two_threads(void **state)
{
	add_lp(0, 0, 0, 0, LP_RUNNING);
	add_lp(1, 1, 0, 1, LP_IDLE);
	fake_lps[1].calls = 3;
	assert_int_equal(run_cpu("cpu"), 0);
	assert_non_null(strstr(out, "2 logical processors (ACPI MADT)"));
	assert_non_null(strstr(out, "LP1 is the Hyper-Threading sibling of LP0"));
	/* one row per LP: index, APIC ID, package, core, SMT, state */
	assert_non_null(strstr(out, "\n   0     0        0     0    0  running"));
	assert_non_null(strstr(out, "\n   1     1        0     0    1  idle"));
	assert_null(strstr(out, "no Hyper-Threading sibling"));
}

static void cpu_one_lp_says_no_sibling(void **state)
{
	add_lp(0, 0, 0, 0, LP_RUNNING);
	assert_int_equal(run_cpu("cpu"), 0);
	assert_non_null(strstr(out, "1 logical processor; no Hyper-Threading sibling in this topology"));
}

static void cpu_two_cores_are_not_siblings(void **state)
{
	add_lp(0, 0, 0, 0, LP_RUNNING);
	add_lp(1, 1, 1, 0, LP_IDLE);
	assert_int_equal(run_cpu("cpu"), 0);
	assert_non_null(strstr(out, "no Hyper-Threading sibling in this topology"));
	assert_non_null(strstr(out, "separate cores"));
}

static void cpu_selftest_reports_each_sibling(void **state)
{
	add_lp(0, 0, 0, 0, LP_RUNNING);
	add_lp(1, 1, 0, 1, LP_IDLE);
	fake_chk = (struct lp_check){ .ran = true, .woke = true, .isolated = true,
				      .seen_apic_id = 1, .us = 12 };
	assert_int_equal(run_cpu("cpu selftest"), 0);
	assert_int_equal(fake_checked, 1);	/* LP0 itself is not checked */
	assert_non_null(strstr(out, "LP1: work ran ok"));
	assert_non_null(strstr(out, "wake-up IPI ok"));
	assert_non_null(strstr(out, "fault contained ok"));

	fake_chk.woke = false;
	assert_int_not_equal(run_cpu("cpu selftest"), 0);
	assert_non_null(strstr(out, "wake-up IPI FAILED"));
}

static void cpu_selftest_single_lp(void **state)
{
	add_lp(0, 0, 0, 0, LP_RUNNING);
	assert_int_equal(run_cpu("cpu selftest"), 0);
	assert_int_equal(fake_checked, 0);
	assert_non_null(strstr(out, "no Hyper-Threading sibling"));
}

static void cpu_bad_argument(void **state)
{
	add_lp(0, 0, 0, 0, LP_RUNNING);
	assert_int_not_equal(run_cpu("cpu bogus"), 0);
	assert_int_equal(strncmp(out, "error: ", 7), 0);
	assert_int_equal(strchr(out, '\n')[1], '\0');
	assert_int_equal(fake_checked, 0);
}

static void state_names(void **state)
{
	assert_string_equal(topo_state_name(LP_IDLE), "idle");
	assert_string_equal(topo_state_name(LP_RUNNING), "running");
	assert_string_equal(topo_state_name((enum lp_state)99), "?");
}

#define L(f) cmocka_unit_test_setup_teardown(f, lp_setup, lp_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ht_pentium4),
		cmocka_unit_test(ht_prescott_leaf4),
		cmocka_unit_test(pentium_d_smithfield),
		cmocka_unit_test(presler_xe),
		cmocka_unit_test(non_ht_pentium4),
		cmocka_unit_test(bsp_in_second_package),
		cmocka_unit_test(non_power_of_two),
		cmocka_unit_test(candidates_respect_max),
		cmocka_unit_test(madt_enabled_lapics),
		cmocka_unit_test(madt_malformed),
		cmocka_unit_test(mp_enabled_processors),
		cmocka_unit_test(mp_malformed),
		cmocka_unit_test(mp_list_gets_each_packages_siblings),
		L(cpu_lists_two_threads),
		L(cpu_one_lp_says_no_sibling),
		L(cpu_two_cores_are_not_siblings),
		L(cpu_selftest_reports_each_sibling),
		L(cpu_selftest_single_lp),
		L(cpu_bad_argument),
		cmocka_unit_test(state_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
