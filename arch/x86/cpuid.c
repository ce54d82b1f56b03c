/*
 * cpuid.c - decode raw CPUID registers into struct cpu_info.
 *
 * Pure: arch/x86/cpu.c runs CPUID, this file only interprets the values, so
 * host tests feed it the registers of real parts. Field positions are the
 * SDM's (Vol. 2A, CPUID): leaf 0 vendor in EBX, EDX, ECX; leaf 1 EAX
 * stepping 3:0, model 7:4, family 11:8, extended model 19:16, extended
 * family 27:20; EBX logical processors 23:16, initial APIC id 31:24; leaf 4
 * EAX 31:26 cores per package - 1; leaves 80000002H-80000004H the brand
 * string. Hyper-Threading facts: fact sheet section 7.
 */
#include "arch/x86/cpuid.h"

static uint32_t cpuid_bits(uint32_t v, unsigned hi, unsigned lo)
{
	return (v >> lo) & ((hi - lo == 31) ? ~0u : ((1u << (hi - lo + 1)) - 1));
}

static void cpuid_put_reg(char *dst, uint32_t r)
{
	for (int i = 0; i < 4; i++)
		dst[i] = (char)(r >> (8 * i));
}

static void cpuid_vendor(const struct cpuid_raw *raw, struct cpu_info *out)
{
	cpuid_put_reg(out->vendor, raw->leaf0.ebx);
	cpuid_put_reg(out->vendor + 4, raw->leaf0.edx);
	cpuid_put_reg(out->vendor + 8, raw->leaf0.ecx);
	out->vendor[12] = '\0';
}

/* Brand string from 80000002H-80000004H, without the leading blanks Intel pads it with. */
static void cpuid_brand(const struct cpuid_raw *raw, struct cpu_info *out)
{
	char tmp[49];
	int i = 0, j = 0;

	out->brand[0] = '\0';
	if (out->max_ext_leaf < CPUID_EXT_BASE + 4)
		return;
	for (int leaf = 2; leaf <= 4; leaf++) {
		const struct cpuid_regs *r = &raw->ext[leaf];

		cpuid_put_reg(tmp + 16 * (leaf - 2), r->eax);
		cpuid_put_reg(tmp + 16 * (leaf - 2) + 4, r->ebx);
		cpuid_put_reg(tmp + 16 * (leaf - 2) + 8, r->ecx);
		cpuid_put_reg(tmp + 16 * (leaf - 2) + 12, r->edx);
	}
	tmp[48] = '\0';
	while (tmp[i] == ' ')
		i++;
	while (tmp[i] != '\0')
		out->brand[j++] = tmp[i++];
	while (j > 0 && out->brand[j - 1] == ' ')
		j--;
	out->brand[j] = '\0';
}

static bool cpuid_is_intel(const char *vendor)
{
	static const char intel[] = "GenuineIntel";

	for (int i = 0; i < 13; i++)
		if (vendor[i] != intel[i])
			return false;
	return true;
}

static void cpuid_signature(const struct cpuid_raw *raw, struct cpu_info *out)
{
	uint32_t eax = raw->leaf1.eax;

	out->signature = eax;
	out->stepping = (uint8_t)cpuid_bits(eax, 3, 0);
	out->model = (uint8_t)cpuid_bits(eax, 7, 4);
	out->family = (uint8_t)cpuid_bits(eax, 11, 8);
	out->ext_model = (uint8_t)cpuid_bits(eax, 19, 16);
	out->ext_family = (uint8_t)cpuid_bits(eax, 27, 20);
	out->display_family = out->family;
	if (out->family == 0x0f)
		out->display_family = (uint16_t)(out->family + out->ext_family);
	out->display_model = out->model;
	if (out->family == 0x06 || out->family == 0x0f)
		out->display_model = (uint8_t)(out->model + (out->ext_model << 4));
	/* AMD's K8 also reports family 0FH: NetBurst means an Intel part */
	out->is_netburst = out->display_family == 0x0f && cpuid_is_intel(out->vendor);
	cpuid_format_display(out->display_family, out->display_model, out->display,
			     sizeof(out->display));
}

/* Logical processors and cores per package (fact sheet section 7, perfctr's algorithm). */
static void cpuid_topology(const struct cpuid_raw *raw, struct cpu_info *out)
{
	uint32_t ebx = raw->leaf1.ebx;

	out->htt = (raw->leaf1.edx & CPUID_1_EDX_HTT) != 0;
	out->initial_apic_id = (uint8_t)cpuid_bits(ebx, 31, 24);
	out->logical_per_package = 1;
	if (out->htt && cpuid_bits(ebx, 23, 16) != 0)
		out->logical_per_package = (uint8_t)cpuid_bits(ebx, 23, 16);
	out->leaf4_hidden = out->max_leaf < 4;
	out->cores_per_package = 1;
	if (!out->leaf4_hidden)
		out->cores_per_package = (uint8_t)(cpuid_bits(raw->leaf4.eax, 31, 26) + 1);
	out->threads_per_core = out->logical_per_package / out->cores_per_package;
	if (out->threads_per_core == 0)
		out->threads_per_core = 1;
}

void cpuid_decode(const struct cpuid_raw *raw, struct cpu_info *out)
{
	uint32_t edx = raw->leaf1.edx, ecx = raw->leaf1.ecx;

	out->max_leaf = raw->leaf0.eax;
	out->max_ext_leaf = 0;
	if (raw->ext[0].eax >= CPUID_EXT_BASE && raw->ext[0].eax < CPUID_EXT_BASE + 0x10000)
		out->max_ext_leaf = raw->ext[0].eax;
	cpuid_vendor(raw, out);
	cpuid_brand(raw, out);
	cpuid_signature(raw, out);
	cpuid_topology(raw, out);
	out->tsc = (edx & CPUID_1_EDX_TSC) != 0;
	out->msr = (edx & CPUID_1_EDX_MSR) != 0;
	out->apic = (edx & CPUID_1_EDX_APIC) != 0;
	out->ds = (edx & CPUID_1_EDX_DS) != 0;
	out->acpi = (edx & CPUID_1_EDX_ACPI) != 0;
	out->dtes64 = (ecx & CPUID_1_ECX_DTES64) != 0;
	out->pdcm = (ecx & CPUID_1_ECX_PDCM) != 0;
	out->hypervisor = (ecx & CPUID_1_ECX_HYPERVISOR) != 0;
	out->em64t = out->max_ext_leaf >= CPUID_EXT_BASE + 1 &&
		     (raw->ext[1].edx & CPUID_81_EDX_LM) != 0;
}

void cpuid_fill(const struct cpuid_source *s, struct cpuid_raw *raw)
{
	*raw = (struct cpuid_raw){ 0 };
	raw->leaf0 = s->cpuid(0, 0);
	if (raw->leaf0.eax >= 1)
		raw->leaf1 = s->cpuid(1, 0);
	if (raw->leaf0.eax >= 4)
		raw->leaf4 = s->cpuid(4, 0);
	raw->ext[0] = s->cpuid(CPUID_EXT_BASE, 0);
	if (raw->ext[0].eax < CPUID_EXT_BASE || raw->ext[0].eax > CPUID_EXT_BASE + 0xff) {
		raw->ext[0] = (struct cpuid_regs){ 0 };	/* no extended leaves */
		return;
	}
	for (uint32_t i = 1; i < CPUID_NEXT && CPUID_EXT_BASE + i <= raw->ext[0].eax; i++)
		raw->ext[i] = s->cpuid(CPUID_EXT_BASE + i, 0);
}

/* Parts with IA32_MISC_ENABLE bit 22 by Linux's rule: Intel family 0FH, or 06H model >= 0DH. */
static bool cpuid_has_limit_bit(const struct cpu_info *ci)
{
	return cpuid_is_intel(ci->vendor) &&
	       (ci->display_family == 0x0f || (ci->display_family == 0x06 && ci->display_model >= 0x0d));
}

bool cpuid_fill_unlimited(const struct cpuid_source *s, struct cpuid_raw *raw)
{
	struct cpu_info ci;
	uint64_t misc;

	cpuid_fill(s, raw);
	cpuid_decode(raw, &ci);
	if (!cpuid_has_limit_bit(&ci) || s->rdmsr(0x1a0, &misc) != 0 ||
	    !(misc & CPU_MISC_LIMIT_CPUID) || s->wrmsr(0x1a0, misc & ~CPU_MISC_LIMIT_CPUID) != 0)
		return false;
	cpuid_fill(s, raw);
	return true;
}

char *cpuid_format_display(uint16_t family, uint8_t model, char *buf, unsigned n)
{
	static const char hex[] = "0123456789ABCDEF";
	char tmp[10];
	unsigned i = 0;

	if (family > 0xff)
		tmp[i++] = hex[(family >> 8) & 0xf];
	tmp[i++] = hex[(family >> 4) & 0xf];
	tmp[i++] = hex[family & 0xf];
	tmp[i++] = '_';
	tmp[i++] = hex[model >> 4];
	tmp[i++] = hex[model & 0xf];
	tmp[i++] = 'H';
	if (n == 0)
		return buf;
	for (unsigned j = 0; j < i && j < n - 1; j++)
		buf[j] = tmp[j];
	buf[i < n - 1 ? i : n - 1] = '\0';
	return buf;
}
