/*
 * cpuid.h - CPU identification from raw CPUID register values.
 *
 * arch/x86/cpu.c executes CPUID and stores the registers in struct
 * cpuid_raw; cpuid_decode() turns them into struct cpu_info without touching
 * hardware, so the decoding is tested on the host with the register values
 * of real parts. The platform then adds what CPUID cannot say: the
 * IA32_MISC_ENABLE bits (read through the #GP-safe path), the TSC frequency
 * and the local APIC id.
 *
 * Rules (SDM Vol. 2A, CPUID, "Family/Model/Stepping"; PMU reference section 7):
 * DisplayFamily = Family, plus ExtendedFamily only when Family == 0FH;
 * DisplayModel = Model, plus ExtendedModel << 4 when Family is 06H or 0FH.
 * The manual writes the pair as "0F_04H".
 */
#ifndef NBPROF_ARCH_X86_CPUID_H
#define NBPROF_ARCH_X86_CPUID_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/buildid.h"

struct cpuid_regs {
	uint32_t eax, ebx, ecx, edx;
};

#define CPUID_EXT_BASE		0x80000000u
#define CPUID_NEXT		5	/* leaves 80000000H..80000004H */

/*
 * Raw CPUID output. A leaf above the reported maximum is left zero by the
 * filler and ignored by the decoder (leaf 4 needs leaf0.eax >= 4; the brand
 * string needs ext[0].eax >= 80000004H). leaf4 is sub-leaf 0.
 */
struct cpuid_raw {
	struct cpuid_regs leaf0;		/* max basic leaf, vendor */
	struct cpuid_regs leaf1;		/* signature, features */
	struct cpuid_regs leaf4;		/* deterministic cache params, cores */
	struct cpuid_regs ext[CPUID_NEXT];	/* ext[i] = leaf 80000000H + i */
};

/* CPUID.1:EDX / ECX and CPUID.80000001H:EDX bits the decoder reads. */
#define CPUID_1_EDX_FPU		(1u << 0)
#define CPUID_1_EDX_TSC		(1u << 4)
#define CPUID_1_EDX_MSR		(1u << 5)
#define CPUID_1_EDX_APIC	(1u << 9)
#define CPUID_1_EDX_DS		(1u << 21)
#define CPUID_1_EDX_ACPI	(1u << 22)
#define CPUID_1_EDX_MMX		(1u << 23)
#define CPUID_1_EDX_FXSR	(1u << 24)
#define CPUID_1_EDX_SSE		(1u << 25)
#define CPUID_1_EDX_SSE2	(1u << 26)
#define CPUID_1_EDX_HTT		(1u << 28)
#define CPUID_1_ECX_DTES64	(1u << 2)
#define CPUID_1_ECX_PDCM	(1u << 15)
#define CPUID_1_ECX_HYPERVISOR	(1u << 31)	/* reserved (0) on Intel parts, set by hypervisors */
#define CPUID_81_EDX_LM		(1u << 29)

/* IA32_MISC_ENABLE (1A0H) bits shown by `cpu` (PMU reference 1.3). */
#define CPU_MISC_PERFMON	(UINT64_C(1) << 7)
#define CPU_MISC_BTS_UNAVAIL	(UINT64_C(1) << 11)
#define CPU_MISC_PEBS_UNAVAIL	(UINT64_C(1) << 12)

struct cpu_info {
	/* filled by cpuid_decode() */
	char vendor[13];		/* "GenuineIntel" */
	char brand[49];			/* leading blanks removed; "" if absent */
	uint32_t max_leaf;
	uint32_t max_ext_leaf;		/* 0 when 80000000H is not implemented */
	uint32_t signature;		/* CPUID.1:EAX */
	uint8_t family, model, stepping;	/* the raw 4-bit fields */
	uint8_t ext_family, ext_model;
	uint16_t display_family;	/* up to 0FH + FFH */
	uint8_t display_model;
	char display[10];		/* "0F_04H" */
	bool is_netburst;		/* GenuineIntel and DisplayFamily == 0FH */
	bool htt;			/* CPUID.1:EDX[28] */
	uint8_t logical_per_package;	/* CPUID.1:EBX[23:16] when HTT, else 1 */
	uint8_t cores_per_package;	/* CPUID.4:EAX[31:26] + 1 when leaf 4 exists, else 1 */
	uint8_t threads_per_core;	/* logical_per_package / cores_per_package, at least 1 */
	uint8_t initial_apic_id;	/* CPUID.1:EBX[31:24] */
	bool leaf4_hidden;		/* max leaf < 4: core count is assumed, not read */
	bool tsc, msr, apic, ds, dtes64, pdcm, acpi;
	bool hypervisor;		/* CPUID.1:ECX[31]: set by hypervisors, 0 on processors */
	bool em64t;			/* CPUID.80000001H:EDX[29] (LM) */

	/* filled by the platform (plat_cpu_info), not by cpuid_decode() */
	bool misc_enable_ok;		/* false: reading 1A0H faulted */
	bool limit_cleared;		/* IA32_MISC_ENABLE[22] was set; nbprof cleared it */
	uint64_t misc_enable;
	uint64_t tsc_hz;		/* 0 when not calibrated */
	uint32_t lapic_id;		/* from the local APIC ID register */
	bool lapic_ok;
	/* on the target (cpu_identify), else NULL */
	const char *booted_by;		/* firmware and boot file, e.g. "UEFI ia32 (BOOTIA32.EFI)" */
	const char *kernel_mode;	/* the mode nbprof runs in (mode.h MODE_NAME) */
	const uint8_t *build_id;	/* the running kernel's build id (buildid.h), or NULL */
	unsigned build_id_len;		/* 0: none */
	char build_id_hex[BUILDID_HEX_MAX];	/* the same in hex, "none" when there is none */
};

/*
 * Where CPUID and the MSRs come from: the instructions on the target, a
 * table in the host tests.
 */
struct cpuid_source {
	struct cpuid_regs (*cpuid)(uint32_t leaf, uint32_t subleaf);
	int (*rdmsr)(uint32_t msr, uint64_t *value);	/* 0, or nonzero on #GP */
	int (*wrmsr)(uint32_t msr, uint64_t value);
};

#define CPU_MISC_LIMIT_CPUID	(UINT64_C(1) << 22)	/* Limit CPUID MaxVal */

/* Every leaf struct cpuid_raw records, as the source reports them. */
void cpuid_fill(const struct cpuid_source *s, struct cpuid_raw *raw);

/*
 * cpuid_fill with IA32_MISC_ENABLE bit 22 (Limit CPUID MaxVal) cleared
 * first where it exists, as Linux's early Intel set-up does (family 0FH,
 * and 06H from model 0DH): set by a BIOS option, it makes CPUID.0 report
 * a small maximum leaf that hides leaf 4, and a dual-core Pentium D would
 * look like one core with Hyper-Threading (PMU reference 7). True when the
 * bit was set and is now clear (CPUID read again).
 */
bool cpuid_fill_unlimited(const struct cpuid_source *s, struct cpuid_raw *raw);

/* Decode raw CPUID values; every field of *out that cpuid_decode owns is written. */
void cpuid_decode(const struct cpuid_raw *raw, struct cpu_info *out);

/* "0F_04H" for (0x0f, 0x04) into buf (n >= 7); returns buf. */
char *cpuid_format_display(uint16_t family, uint8_t model, char *buf, unsigned n);

#endif
