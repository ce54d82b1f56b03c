/*
 * prof/backend/hw.c - the processor's own PMU: RDMSR/WRMSR with #GP recovery
 * (arch/x86/msr.c), real overflow interrupts through each LP's LVT PC, no
 * event feed. Selected for any NetBurst signature: the probe
 * (pmu/p4_probe.c: IA32_MISC_ENABLE bit 7, then counter 0 read around
 * known work) is taken once and kept, and its verdict is reported
 * (perf_hw_probe) rather than hidden behind another backend; prof/perf.c
 * decides what a failed probe means (perf_init). `pmu backend hw` does not
 * program the PMU again to learn it (unless IA32_MISC_ENABLE has changed).
 */
#include "arch/x86/cpu.h"
#include "arch/x86/lapic.h"
#include "arch/x86/msr.h"
#include "arch/x86/timer.h"
#include "lib/printf.h"
#include "pmu/p4_probe.h"
#include "prof/backend.h"

#define HW_PROBE_TSC	200000u		/* cycles the probe lets counter 0 run */

static bool hw_probed;
static uint64_t hw_probed_misc;		/* IA32_MISC_ENABLE when the verdict was taken */
static enum p4_probe_verdict hw_verdict;
static char hw_why[160];

static void hw_wait(void *ctx)
{
	uint64_t end = rdtsc() + HW_PROBE_TSC;

	(void)ctx;
	while (rdtsc() < end)
		cpu_pause();
}

static uint64_t hw_now(void *ctx)
{
	(void)ctx;
	return rdtsc();
}

static int hw_select(const struct p4_sig *sig, bool ht, struct p4_caps *caps, char *err, size_t n)
{
	struct p4_probe_env env = { .bus = &msr_hw_bus, .ht = ht, .wait = hw_wait, .now = hw_now };

	if (sig->family != 0x0f || !p4_caps_lookup(sig, caps))
		return ksnprintf(err, n, "not a NetBurst CPU (family 0FH)"), -1;
	/* Once, unless IA32_MISC_ENABLE has changed since (`msr write 1A0H`). */
	env.misc_ok = cpu_read_misc_enable(&env.misc_enable) == 0;
	if (!hw_probed || env.misc_enable != hw_probed_misc) {
		hw_verdict = p4_probe(&env, hw_why, sizeof(hw_why));
		hw_probed_misc = env.misc_enable;
		hw_probed = true;
	}
	/*
	 * No NetBurst PMU exists at all (the rule of perf_init): the probe found
	 * none claimed and CPUID.1:ECX[31], 0 on every Intel processor, says a
	 * hypervisor runs us. Only then is the hardware refused.
	 */
	if (hw_verdict == P4_PROBE_ABSENT && cpu_in_hypervisor())
		return ksnprintf(err, n, "%s; a hypervisor (CPUID.1:ECX[31]) without a NetBurst PMU",
				 hw_why), -1;
	return 0;
}

enum p4_probe_verdict perf_hw_probe(char *why, size_t n)
{
	if (!hw_probed)
		return ksnprintf(why, n, "not probed (not a NetBurst CPU)"), P4_PROBE_ABSENT;
	ksnprintf(why, n, "%s", hw_verdict == P4_PROBE_COUNTS ? "counter 0 counted in the probe" :
		  hw_why);
	return hw_verdict;
}

static struct msr_bus *hw_bus(void)
{
	return &msr_hw_bus;
}

static enum perf_source hw_source(enum p4_event ev, const struct perf_inputs *in)
{
	(void)ev;
	(void)in;
	return PERF_SOURCE_HW;
}

static int hw_rdpmc(uint32_t ecx, uint64_t *value)
{
	return rdpmc_safe(ecx, value);
}

/* The LAPIC timer, periodic: on the machine wall time is the workload's. */
static void hw_tick(unsigned hz)
{
	if (hz)
		lapic_timer_start((uint32_t)(timer_lapic_hz() / hz), LAPIC_TIMER_VECTOR, true);
	else
		lapic_timer_stop();
}

static void hw_describe(char *buf, size_t n)
{
	if (n)
		buf[0] = '\0';
}

const struct perf_backend_ops perf_backend_hw = {
	.name = "hardware",
	.steps_workloads = false,
	.select = hw_select,
	.bus = hw_bus,
	.source = hw_source,
	.tick = hw_tick,
	.rdpmc = hw_rdpmc,
	.describe = hw_describe,
};
