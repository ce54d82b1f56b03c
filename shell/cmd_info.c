/*
 * cmd_info.c - `cpu` and `mem`: what the machine is.
 *
 * `cpu` prints struct cpu_info (arch/x86/cpuid.h) and, on family 0FH, the
 * model-dependent PMU capabilities from pmu/p4_caps.h. IA32_MISC_ENABLE bit
 * meanings: PMU reference 1.3 and 5.1 (bit 7 = 1: perfmon available; bit 11 = 1:
 * BTS unavailable; bit 12 = 1: PEBS unavailable).
 */
#include "arch/x86/buildid.h"
#include "arch/x86/topology.h"
#include "pmu/p4_caps.h"
#include "shell/cmds.h"
#include "shell/platform.h"

static const char *yesno(bool b)
{
	return b ? "yes" : "no";
}

static void cpu_show_topology(struct shell *sh, const struct cpu_info *ci)
{
	if (ci->htt)
		shell_printf(sh, "HTT           yes, %u logical processors per package\n",
			     ci->logical_per_package);
	else
		shell_puts(sh, "HTT           no, 1 logical processor per package\n");
	if (ci->leaf4_hidden)
		shell_printf(sh, "cores         1 per package assumed (CPUID leaf 4 not reported, max leaf %u)\n",
			     ci->max_leaf);
	else
		shell_printf(sh, "cores         %u per package, %u thread%s per core\n",
			     ci->cores_per_package, ci->threads_per_core,
			     ci->threads_per_core == 1 ? "" : "s");
	shell_printf(sh, "APIC id       %u (initial, CPUID.1:EBX[31:24])", ci->initial_apic_id);
	if (ci->lapic_ok)
		shell_printf(sh, ", local APIC %u", ci->lapic_id);
	shell_puts(sh, "\n");
}

static void cpu_show_misc(struct shell *sh, const struct cpu_info *ci)
{
	if (!ci->misc_enable_ok) {
		shell_puts(sh, "MISC_ENABLE   unreadable (rdmsr 1A0H raised #GP)\n");
		return;
	}
	shell_printf(sh, "MISC_ENABLE   1A0H = %016llXH\n", (unsigned long long)ci->misc_enable);
	shell_printf(sh, "  bit 7  perfmon available   %s\n", yesno(ci->misc_enable & CPU_MISC_PERFMON));
	shell_printf(sh, "  bit 11 BTS unavailable     %s\n",
		     yesno(ci->misc_enable & CPU_MISC_BTS_UNAVAIL));
	shell_printf(sh, "  bit 12 PEBS unavailable    %s\n",
		     yesno(ci->misc_enable & CPU_MISC_PEBS_UNAVAIL));
	if (ci->limit_cleared)
		shell_puts(sh, "  bit 22 Limit CPUID MaxVal  was set (it hides CPUID leaf 4): cleared at boot\n");
}

/*
 * What the bits add up to (PMU reference 5.1): the DS save area needs CPUID.1:
 * EDX.DS; PEBS needs DS, perfmon (bit 7 = 1) and bit 12 = 0; BTS needs DS
 * and bit 11 = 0. With IA32_MISC_ENABLE unreadable nothing is claimed.
 */
static void cpu_show_ds_pebs_bts(struct shell *sh, const struct cpu_info *ci)
{
	uint64_t m = ci->misc_enable;
	bool pebs, bts;

	if (!ci->misc_enable_ok) {
		shell_printf(sh, "DS/PEBS/BTS   %s / unknown / unknown\n", yesno(ci->ds));
		return;
	}
	pebs = ci->ds && (m & CPU_MISC_PERFMON) && !(m & CPU_MISC_PEBS_UNAVAIL);
	bts = ci->ds && !(m & CPU_MISC_BTS_UNAVAIL);
	shell_printf(sh, "DS/PEBS/BTS   %s / %s / %s\n", yesno(ci->ds), yesno(pebs), yesno(bts));
}

static void cpu_show_tsc(struct shell *sh, const struct cpu_info *ci)
{
	uint64_t khz = ci->tsc_hz / 1000;

	if (ci->tsc_hz == 0)
		shell_printf(sh, "TSC           %s\n", ci->tsc ? "present, not calibrated" : "not present");
	else
		shell_printf(sh, "TSC           %llu.%03llu MHz\n", (unsigned long long)(khz / 1000),
			     (unsigned long long)(khz % 1000));
}

/* The backend in use and, on the hardware, whether its probe saw counter 0 count. */
static void cpu_show_backend(struct shell *sh)
{
	char line[288];

	plat_pmu_backend(line, sizeof(line));
	shell_printf(sh, "  backend                 %s\n", line);
}

static void cpu_show_pmu(struct shell *sh, const struct cpu_info *ci)
{
	struct p4_sig sig = { .family = 0, .model = ci->display_model, .stepping = ci->stepping };
	struct p4_caps caps;

	sig.family = ci->display_family > 0xff ? 0xff : (uint8_t)ci->display_family;
	if (!ci->is_netburst || !p4_caps_lookup(&sig, &caps)) {
		shell_printf(sh, "PMU           not a NetBurst CPU (family %02XH, %s); the PMU support needs an Intel family 0FH part\n",
			     ci->display_family, ci->vendor);
		return;
	}
	shell_printf(sh, "PMU           NetBurst %s, stepping %u%s\n", ci->display, ci->stepping,
		     caps.known_model ? "" : " (model not documented: conservative settings)");
	shell_printf(sh, "  likely parts            %s\n", caps.part_name);
	shell_printf(sh, "  IQ_ESCR0/1              %s\n", yesno(caps.iq_escr01));
	shell_printf(sh, "  ESCRs                   %u\n", caps.nescr);
	shell_printf(sh, "  extended cascading      %s\n", yesno(caps.ext_cascade));
	shell_printf(sh, "  cascade PMI erratum     %s\n", yesno(caps.cascade_pmi_erratum));
	shell_printf(sh, "  instr_completed         %s\n", yesno(caps.instr_completed));
	shell_printf(sh, "  FSB_ESCR1 usable        %s\n", yesno(caps.fsb_escr1_ok));
	shell_printf(sh, "  OVF_PMI_T1 unreliable   %s\n", yesno(caps.pmi_t1_unreliable));
	shell_printf(sh, "  uncore (107CCH-107D3H)  %s%s%s%s\n", caps.uncore_name,
		     caps.uncore_note[0] ? " (" : "", caps.uncore_note, caps.uncore_note[0] ? ")" : "");
	cpu_show_backend(sh);
}

/* --- logical processors (arch/x86/topology.h) -------------------------------- */

/* An LP that shares package and core with an earlier LP is that LP's HT sibling. */
static bool cpu_sibling_of(const struct lp_info *lps, unsigned i, unsigned *first)
{
	for (unsigned j = 0; j < i; j++)
		if (lps[j].id.package == lps[i].id.package && lps[j].id.core == lps[i].id.core) {
			*first = lps[j].index;
			return true;
		}
	return false;
}

static void cpu_show_lps(struct shell *sh)
{
	const struct lp_ops *ops = topo_lp_ops();
	struct lp_info lps[TOPO_MAX_LPS];
	unsigned n, first, siblings = 0;

	if (!ops) {
		shell_puts(sh, "LPs           not enumerated\n");
		return;
	}
	n = ops->count();
	n = n > TOPO_MAX_LPS ? TOPO_MAX_LPS : n;
	for (unsigned i = 0; i < n; i++)
		ops->get(i, &lps[i]);
	if (n <= 1) {
		shell_puts(sh, "LPs           1 logical processor; no Hyper-Threading sibling in this topology\n");
	} else {
		shell_printf(sh, "LPs           %u logical processors (%s)\n", n, ops->source());
	}
	shell_puts(sh, "  LP  APIC  package  core  SMT  state     calls  faults  wakeups\n");
	for (unsigned i = 0; i < n; i++)
		shell_printf(sh, "  %2u  %4u  %7u  %4u  %3u  %-8s %6llu  %6llu  %7llu\n", lps[i].index,
			     lps[i].apic_id, lps[i].id.package, lps[i].id.core, lps[i].id.smt,
			     topo_state_name(lps[i].state), (unsigned long long)lps[i].calls,
			     (unsigned long long)lps[i].faults, (unsigned long long)lps[i].wakeups);
	for (unsigned i = 1; i < n; i++)
		if (cpu_sibling_of(lps, i, &first)) {
			shell_printf(sh, "  LP%u is the Hyper-Threading sibling of LP%u (same core, SMT ID %u)\n",
				     lps[i].index, first, lps[i].id.smt);
			siblings++;
		}
	if (n > 1 && siblings == 0)
		shell_puts(sh, "  no Hyper-Threading sibling in this topology: the LPs are separate cores\n");
}

static bool cpu_check_one(struct shell *sh, const struct lp_ops *ops, unsigned i)
{
	struct lp_check c = { 0 };
	int ret = ops->check(i, &c);

	if (ret < 0) {
		shell_printf(sh, "LP%u: cannot run work there (not started)\n", i);
		return false;
	}
	shell_printf(sh, "LP%u: work ran %s (it read APIC ID %u, round trip %llu us), "
		     "wake-up IPI %s, fault contained %s\n",
		     i, c.ran ? "ok" : "FAILED", c.seen_apic_id, (unsigned long long)c.us,
		     c.woke ? "ok" : "FAILED", c.isolated ? "ok" : "FAILED");
	return c.ran && c.woke && c.isolated;
}

/* `cpu selftest`: prove every other LP runs dispatched work and wakes on an IPI. */
static int cpu_selftest(struct shell *sh)
{
	const struct lp_ops *ops = topo_lp_ops();
	unsigned n = ops ? ops->count() : 1;
	bool ok = true;

	if (n <= 1) {
		shell_puts(sh, "1 logical processor; no Hyper-Threading sibling in this topology: nothing to test\n");
		return 0;
	}
	for (unsigned i = 1; i < n; i++)
		ok = cpu_check_one(sh, ops, i) && ok;
	return ok ? 0 : 1;
}

int cmd_cpu(struct shell *sh, int argc, char **argv)
{
	struct cpu_info ci;

	if (argc == 2 && parse_streq(argv[1], "selftest"))
		return cpu_selftest(sh);
	if (argc != 1)
		return shell_error(sh, "cpu takes no arguments except 'selftest'");
	plat_cpu_info(&ci);
	shell_printf(sh, "vendor        %s\n", ci.vendor);
	shell_printf(sh, "signature     %s stepping %u (CPUID.1:EAX = %08XH)\n", ci.display, ci.stepping,
		     ci.signature);
	shell_printf(sh, "brand         %s\n", ci.brand[0] ? ci.brand : "(none)");
	cpu_show_topology(sh, &ci);
	cpu_show_lps(sh);
	shell_printf(sh, "EM64T         %s\n", yesno(ci.em64t));
	if (ci.hypervisor)
		shell_puts(sh, "hypervisor    yes (CPUID.1:ECX[31] set)\n");
	if (ci.booted_by && ci.kernel_mode)
		shell_printf(sh, "boot          %s; nbprof runs in %s\n", ci.booted_by,
			     ci.kernel_mode);
	shell_printf(sh, "build id      %s\n", ci.build_id_hex);
	shell_printf(sh, "DS / DTES64   %s / %s\n", yesno(ci.ds), yesno(ci.dtes64));
	cpu_show_misc(sh, &ci);
	cpu_show_ds_pebs_bts(sh, &ci);
	cpu_show_tsc(sh, &ci);
	cpu_show_pmu(sh, &ci);
	return 0;
}

/* --- mem ------------------------------------------------------------------- */

static const char *const mem_kind_names[MEM_NKINDS] = {
	[MEM_USABLE] = "usable",
	[MEM_KERNEL] = "kernel",
	[MEM_RESERVED] = "reserved",
	[MEM_ACPI] = "ACPI",
	[MEM_MMIO] = "MMIO",
};

/* Sizes as KiB below 16 MiB, else MiB: exact enough to compare with the firmware's map. */
static void mem_size(struct shell *sh, const char *fmt_prefix, uint64_t bytes)
{
	if (bytes < (UINT64_C(16) << 20))
		shell_printf(sh, "%s%llu KiB", fmt_prefix, (unsigned long long)(bytes >> 10));
	else
		shell_printf(sh, "%s%llu MiB", fmt_prefix, (unsigned long long)(bytes >> 20));
}

static int mem_list(struct shell *sh)
{
	struct mem_region r;

	for (unsigned i = 0; plat_mem_region(i, &r); i++) {
		shell_printf(sh, "  %016llX-%016llX  %-8s", (unsigned long long)r.base,
			     (unsigned long long)(r.base + r.length - 1),
			     r.kind < MEM_NKINDS ? mem_kind_names[r.kind] : "?");
		mem_size(sh, " ", r.length);
		shell_puts(sh, "\n");
	}
	return 0;
}

int cmd_mem(struct shell *sh, int argc, char **argv)
{
	struct mem_info mi;

	if (argc > 2)
		return shell_error(sh, "usage: mem [map]");
	if (argc == 2) {
		if (!parse_streq(argv[1], "map"))
			return shell_error(sh, "unknown mem argument '%s' (expected: map)", argv[1]);
		return mem_list(sh);
	}
	plat_mem_info(&mi);
	shell_printf(sh, "memory map: %u regions, usable RAM up to %llXH\n", mi.nregions,
		     (unsigned long long)mi.highest_addr);
	for (int k = 0; k < MEM_NKINDS; k++) {
		shell_printf(sh, "  %-8s %4u regions", mem_kind_names[k], mi.regions[k]);
		mem_size(sh, "  ", mi.bytes[k]);
		shell_puts(sh, "\n");
	}
	mem_size(sh, "free RAM      ", mi.free_bytes);
	shell_puts(sh, "\n");
	return 0;
}
