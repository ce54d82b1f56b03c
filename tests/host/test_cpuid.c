/*
 * test_cpuid.c - arch/x86/cpuid.c decoding, from register values built with
 * the SDM's CPUID encoding (Vol. 2A, CPUID leaf 1 EAX: stepping 3:0, model
 * 7:4, family 11:8, type 13:12, extended model 19:16, extended family 27:20;
 * EBX 23:16 logical processors, 31:24 initial APIC id; EDX 28 HTT, 21 DS;
 * ECX 2 DTES64; leaf 4 EAX 31:26 cores - 1; 80000001H EDX 29 LM). The
 * expected DisplayFamily/DisplayModel follow the manual's rules, not the code.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "arch/x86/buildid.h"
#include "arch/x86/cpuid.h"

#define SIG(xfam, xmod, fam, mod, step) \
	(((uint32_t)(xfam) << 20) | ((uint32_t)(xmod) << 16) | ((uint32_t)(fam) << 8) | \
	 ((uint32_t)(mod) << 4) | (uint32_t)(step))
#define EBX1(apic, logical)	(((uint32_t)(apic) << 24) | ((uint32_t)(logical) << 16))
#define LEAF4_CORES(n)		((uint32_t)((n) - 1) << 26)

static uint32_t pack4(const char *s)
{
	return (uint32_t)(uint8_t)s[0] | (uint32_t)(uint8_t)s[1] << 8 |
	       (uint32_t)(uint8_t)s[2] << 16 | (uint32_t)(uint8_t)s[3] << 24;
}

/* Vendor string: EBX, EDX, ECX hold its three 4-byte parts. */
static void set_vendor(struct cpuid_raw *r, const char *v, uint32_t max_leaf)
{
	r->leaf0.eax = max_leaf;
	r->leaf0.ebx = pack4(v);
	r->leaf0.edx = pack4(v + 4);
	r->leaf0.ecx = pack4(v + 8);
}

/* Brand string: 48 bytes in EAX, EBX, ECX, EDX of 80000002H..80000004H. */
static void set_brand(struct cpuid_raw *r, const char *brand)
{
	char b[48] = { 0 };

	strncpy(b, brand, sizeof(b));
	for (int leaf = 2; leaf <= 4; leaf++) {
		const char *p = b + 16 * (leaf - 2);

		r->ext[leaf].eax = pack4(p);
		r->ext[leaf].ebx = pack4(p + 4);
		r->ext[leaf].ecx = pack4(p + 8);
		r->ext[leaf].edx = pack4(p + 12);
	}
	if (r->ext[0].eax < CPUID_EXT_BASE + 4)
		r->ext[0].eax = CPUID_EXT_BASE + 4;
}

static void prescott_0f41(void **state)
{
	struct cpuid_raw r = { 0 };
	struct cpu_info ci;

	set_vendor(&r, "GenuineIntel", 5);
	r.leaf1.eax = SIG(0, 0, 0xf, 4, 1);
	r.leaf1.ebx = EBX1(1, 2);
	r.leaf1.edx = CPUID_1_EDX_HTT | CPUID_1_EDX_DS | CPUID_1_EDX_TSC | CPUID_1_EDX_MSR |
		      CPUID_1_EDX_APIC;
	r.leaf1.ecx = CPUID_1_ECX_DTES64;
	r.leaf4.eax = LEAF4_CORES(1);
	r.ext[0].eax = CPUID_EXT_BASE + 8;
	r.ext[1].edx = CPUID_81_EDX_LM;
	set_brand(&r, "              Intel(R) Pentium(R) 4 CPU 3.40GHz");
	cpuid_decode(&r, &ci);

	assert_string_equal(ci.vendor, "GenuineIntel");
	assert_int_equal(ci.signature, 0xf41);
	assert_int_equal(ci.family, 0xf);
	assert_int_equal(ci.model, 4);
	assert_int_equal(ci.stepping, 1);
	assert_int_equal(ci.display_family, 0x0f);
	assert_int_equal(ci.display_model, 0x04);
	assert_string_equal(ci.display, "0F_04H");
	assert_true(ci.is_netburst);
	assert_true(ci.htt);
	assert_int_equal(ci.logical_per_package, 2);
	assert_int_equal(ci.cores_per_package, 1);
	assert_int_equal(ci.threads_per_core, 2);
	assert_false(ci.leaf4_hidden);
	assert_int_equal(ci.initial_apic_id, 1);
	assert_true(ci.ds);
	assert_true(ci.dtes64);
	assert_true(ci.em64t);
	assert_true(ci.tsc && ci.msr && ci.apic);
	assert_string_equal(ci.brand, "Intel(R) Pentium(R) 4 CPU 3.40GHz");
}

static void northwood_0f29(void **state)
{
	struct cpuid_raw r = { 0 };
	struct cpu_info ci;

	set_vendor(&r, "GenuineIntel", 2);	/* Northwood: max basic leaf 2, no leaf 4 */
	r.leaf1.eax = SIG(0, 0, 0xf, 2, 9);
	r.leaf1.ebx = EBX1(0, 1);
	r.leaf1.edx = CPUID_1_EDX_DS;
	r.leaf4.eax = LEAF4_CORES(4);		/* garbage above max leaf: must be ignored */
	set_brand(&r, "Intel(R) Pentium(R) 4 CPU 2.80GHz  ");
	cpuid_decode(&r, &ci);

	assert_string_equal(ci.display, "0F_02H");
	assert_int_equal(ci.stepping, 9);
	assert_true(ci.is_netburst);
	assert_false(ci.htt);
	assert_int_equal(ci.logical_per_package, 1);
	assert_true(ci.leaf4_hidden);
	assert_int_equal(ci.cores_per_package, 1);
	assert_true(ci.ds);
	assert_false(ci.dtes64);
	assert_string_equal(ci.brand, "Intel(R) Pentium(R) 4 CPU 2.80GHz");
}

static void northwood_without_lm(void **state)
{
	struct cpuid_raw r = { 0 };
	struct cpu_info ci;

	set_vendor(&r, "GenuineIntel", 2);
	r.leaf1.eax = SIG(0, 0, 0xf, 2, 9);
	r.ext[0].eax = CPUID_EXT_BASE + 4;
	cpuid_decode(&r, &ci);
	assert_false(ci.em64t);
	assert_int_equal(ci.max_ext_leaf, CPUID_EXT_BASE + 4);
}

static void core2_060f_is_not_netburst(void **state)
{
	struct cpuid_raw r = { 0 };
	struct cpu_info ci;

	set_vendor(&r, "GenuineIntel", 10);
	r.leaf1.eax = SIG(0, 0, 6, 0xf, 6);	/* 06_0FH stepping 6 (Merom/Conroe) */
	r.leaf1.ebx = EBX1(0, 2);
	r.leaf1.edx = CPUID_1_EDX_HTT;
	r.leaf4.eax = LEAF4_CORES(2);
	cpuid_decode(&r, &ci);

	assert_int_equal(ci.display_family, 0x06);
	assert_int_equal(ci.display_model, 0x0f);
	assert_string_equal(ci.display, "06_0FH");
	assert_false(ci.is_netburst);
	assert_int_equal(ci.logical_per_package, 2);
	assert_int_equal(ci.cores_per_package, 2);
	assert_int_equal(ci.threads_per_core, 1);
}

static void family6_adds_extended_model(void **state)
{
	struct cpuid_raw r = { 0 };
	struct cpu_info ci;

	set_vendor(&r, "GenuineIntel", 13);
	r.leaf1.eax = SIG(0, 1, 6, 7, 6);	/* Penryn: 06_17H */
	cpuid_decode(&r, &ci);
	assert_int_equal(ci.display_model, 0x17);
	assert_string_equal(ci.display, "06_17H");
}

static void extended_family_only_for_family_0f(void **state)
{
	struct cpuid_raw r = { 0 };
	struct cpu_info ci;

	set_vendor(&r, "GenuineIntel", 1);
	r.leaf1.eax = SIG(0xf, 0, 6, 6, 5);	/* ext family must not be added to family 6 */
	cpuid_decode(&r, &ci);
	assert_int_equal(ci.display_family, 0x06);

	r.leaf1.eax = SIG(0, 1, 5, 4, 3);	/* ext model must not be added to family 5 */
	cpuid_decode(&r, &ci);
	assert_string_equal(ci.display, "05_04H");
}

static void amd_k8_family_0f_is_not_netburst(void **state)
{
	struct cpuid_raw r = { 0 };
	struct cpu_info ci;

	set_vendor(&r, "AuthenticAMD", 1);
	r.leaf1.eax = SIG(0, 4, 0xf, 3, 3);	/* Athlon 64 X2 rev F: 0F_43H */
	r.ext[0].eax = CPUID_EXT_BASE + 0x18;
	r.ext[1].edx = CPUID_81_EDX_LM;
	set_brand(&r, "AMD Athlon(tm) 64 X2 Dual Core Processor 4200+");
	cpuid_decode(&r, &ci);

	assert_string_equal(ci.vendor, "AuthenticAMD");
	assert_int_equal(ci.display_family, 0x0f);
	assert_int_equal(ci.display_model, 0x43);
	assert_string_equal(ci.display, "0F_43H");
	assert_false(ci.is_netburst);
	assert_true(ci.em64t);
	assert_true(ci.leaf4_hidden);
	assert_string_equal(ci.brand, "AMD Athlon(tm) 64 X2 Dual Core Processor 4200+");
}

static void amd_family_10h_and_17h(void **state)
{
	struct cpuid_raw r = { 0 };
	struct cpu_info ci;

	set_vendor(&r, "AuthenticAMD", 5);
	r.leaf1.eax = SIG(1, 0, 0xf, 4, 2);	/* Phenom: 0FH + 1 = 10H, model 04H */
	cpuid_decode(&r, &ci);
	assert_int_equal(ci.display_family, 0x10);
	assert_string_equal(ci.display, "10_04H");
	assert_false(ci.is_netburst);

	r.leaf1.eax = SIG(8, 0, 0xf, 1, 1);	/* Zen: 0FH + 8 = 17H */
	cpuid_decode(&r, &ci);
	assert_string_equal(ci.display, "17_01H");
}

static void missing_extended_leaves(void **state)
{
	struct cpuid_raw r = { 0 };
	struct cpu_info ci;

	set_vendor(&r, "GenuineIntel", 2);
	r.leaf1.eax = SIG(0, 0, 0xf, 1, 2);
	r.ext[0].eax = 0x00000002;	/* Intel returns basic-leaf data for unknown leaves */
	r.ext[1].edx = CPUID_81_EDX_LM;
	cpuid_decode(&r, &ci);
	assert_int_equal(ci.max_ext_leaf, 0);
	assert_false(ci.em64t);
	assert_string_equal(ci.brand, "");
	assert_string_equal(ci.display, "0F_01H");
}

static void htt_without_count_means_one(void **state)
{
	struct cpuid_raw r = { 0 };
	struct cpu_info ci;

	set_vendor(&r, "GenuineIntel", 2);
	r.leaf1.eax = SIG(0, 0, 0xf, 2, 7);
	r.leaf1.ebx = EBX1(6, 2);
	cpuid_decode(&r, &ci);			/* EBX[23:16] counts only when HTT is set */
	assert_false(ci.htt);
	assert_int_equal(ci.logical_per_package, 1);
	assert_int_equal(ci.initial_apic_id, 6);
}

static void format_display(void **state)
{
	char buf[10];

	assert_string_equal(cpuid_format_display(0x0f, 0x06, buf, sizeof(buf)), "0F_06H");
	assert_string_equal(cpuid_format_display(0x10e, 0xff, buf, sizeof(buf)), "10E_FFH");
	assert_string_equal(cpuid_format_display(0x0f, 0x04, buf, 4), "0F_");
}

/*
 * F9: a Pentium D 8xx (0F_04, two cores, no Hyper-Threading: CPUID.1 HTT
 * with 2 logical processors, leaf 4 EAX[31:26] = 1) whose BIOS set
 * IA32_MISC_ENABLE bit 22 (Limit CPUID MaxVal): CPUID.0 then reports a
 * maximum leaf of 3 and leaf 4 is hidden. Read as it is, the part looks
 * like one core with two threads; cleared first (as Linux does), it shows
 * two cores of one thread each.
 */
static uint64_t pd_misc = UINT64_C(1) << 22 | UINT64_C(1) << 7;
static unsigned pd_writes;

static struct cpuid_regs pd_cpuid(uint32_t leaf, uint32_t sub)
{
	uint32_t max = (pd_misc & (UINT64_C(1) << 22)) ? 3 : 5;
	struct cpuid_regs r = { 0 };

	(void)sub;
	if (leaf == 0) {
		r.eax = max;
		r.ebx = pack4("Genu");
		r.edx = pack4("ineI");
		r.ecx = pack4("ntel");
	} else if (leaf == 1) {
		r.eax = SIG(0, 0, 0xf, 4, 7);
		r.ebx = EBX1(1, 2);
		r.edx = CPUID_1_EDX_HTT | CPUID_1_EDX_DS | CPUID_1_EDX_MSR;
		r.ecx = CPUID_1_ECX_DTES64;
	} else if (leaf == 4 && leaf <= max) {
		r.eax = LEAF4_CORES(2);
	}
	return r;
}

static int pd_rdmsr(uint32_t msr, uint64_t *v)
{
	if (msr != 0x1a0)
		return -1;
	*v = pd_misc;
	return 0;
}

static int pd_wrmsr(uint32_t msr, uint64_t v)
{
	if (msr != 0x1a0)
		return -1;
	pd_writes++;
	pd_misc = v;
	return 0;
}

static void pentium_d_with_limit_cpuid_maxval(void **state)
{
	static const struct cpuid_source src = { pd_cpuid, pd_rdmsr, pd_wrmsr };
	struct cpuid_raw raw;
	struct cpu_info ci;

	(void)state;
	cpuid_fill(&src, &raw);			/* as read with the bit set */
	cpuid_decode(&raw, &ci);
	assert_true(ci.leaf4_hidden);
	assert_int_equal(ci.threads_per_core, 2);	/* the second core taken for a sibling */
	assert_true(cpuid_fill_unlimited(&src, &raw));
	assert_int_equal(pd_writes, 1);
	assert_true(pd_misc == UINT64_C(1) << 7);	/* bit 22 alone cleared */
	cpuid_decode(&raw, &ci);
	assert_false(ci.leaf4_hidden);
	assert_int_equal(ci.cores_per_package, 2);
	assert_int_equal(ci.threads_per_core, 1);
	assert_false(cpuid_fill_unlimited(&src, &raw));	/* clear now: nothing written */
	assert_int_equal(pd_writes, 1);
}

/* The GNU build-id note ld --build-id writes (gABI "Note Section"), and what is not one. */
static void build_id_note(void **state)
{
	static const uint8_t note[] = {
		4, 0, 0, 0, 5, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0, 0xd6, 0xe6, 0x7f, 0xa4, 0x21,
	};
	uint8_t bad[sizeof(note)];
	char hex[BUILDID_HEX_MAX];
	const uint8_t *id;
	unsigned n;

	(void)state;
	id = buildid_parse(note, sizeof(note), &n);
	assert_ptr_equal(id, note + 16);
	assert_int_equal(n, 5);
	buildid_hex(id, n, hex);
	assert_string_equal(hex, "d6e67fa421");
	assert_null(buildid_parse(note, sizeof(note) - 1, &n));	/* cut short */
	assert_int_equal(n, 0);
	memcpy(bad, note, sizeof(note));
	bad[8] = 1;							/* another type */
	assert_null(buildid_parse(bad, sizeof(bad), &n));
	memcpy(bad, note, sizeof(note));
	bad[12] = 'X';							/* another owner */
	assert_null(buildid_parse(bad, sizeof(bad), &n));
	memcpy(bad, note, sizeof(note));
	bad[4] = 0;							/* an empty id */
	assert_null(buildid_parse(bad, sizeof(bad), &n));
	memset(bad, 0, sizeof(bad));					/* no note: no id */
	assert_null(buildid_parse(bad, sizeof(bad), &n));
	buildid_hex(NULL, 0, hex);
	assert_string_equal(hex, "none");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(build_id_note),
		cmocka_unit_test(pentium_d_with_limit_cpuid_maxval),
		cmocka_unit_test(prescott_0f41),
		cmocka_unit_test(northwood_0f29),
		cmocka_unit_test(northwood_without_lm),
		cmocka_unit_test(core2_060f_is_not_netburst),
		cmocka_unit_test(family6_adds_extended_model),
		cmocka_unit_test(extended_family_only_for_family_0f),
		cmocka_unit_test(amd_k8_family_0f_is_not_netburst),
		cmocka_unit_test(amd_family_10h_and_17h),
		cmocka_unit_test(missing_extended_leaves),
		cmocka_unit_test(htt_without_count_means_one),
		cmocka_unit_test(format_display),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
