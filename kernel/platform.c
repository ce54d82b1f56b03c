/*
 * platform.c - shell/platform.h on the real machine.
 *
 * Each call is a thin translation to arch/ and the kernel's memory map; the
 * shell never sees hardware details. Firmware memory types are folded into
 * the shell's kinds: boot-services memory counts as usable because the
 * kernel reclaims it (mem_reclaim_boot) once it runs on its own tables.
 */
#include "arch/x86/arch.h"
#include "arch/x86/console.h"
#include "arch/x86/cpu.h"
#include "arch/x86/idt.h"
#include "arch/x86/lapic.h"
#include "arch/x86/mem.h"
#include "arch/x86/msr.h"
#include "arch/x86/power.h"
#include "arch/x86/screen.h"
#include "arch/x86/smp.h"
#include "arch/x86/timer.h"
#include "kernel/kmain.h"
#include "lib/printf.h"
#include "pmu/p4_tables.h"
#include "prof/perf.h"
#include "workload/workload.h"
#include "shell/platform.h"

/* QEMU exits with (0x10 << 1) | 1 = 33: distinct from 1, which also means "QEMU could not start". */
#define POWEROFF_QEMU_STATUS	0x10

/*
 * PMU registers go through the active backend's bus (and the write trace),
 * whichever backend it is; every other MSR is the machine's.
 */
static struct msr_bus *plat_pmu_bus(uint32_t msr)
{
	return p4_msr_is_pmu(msr) ? perf_bus() : NULL;
}

int plat_msr_read(uint32_t msr, uint64_t *v)
{
	struct msr_bus *bus = plat_pmu_bus(msr);

	return bus ? msr_bus_read(bus, msr, v) : msr_read_safe(msr, v);
}

int plat_msr_write(uint32_t msr, uint64_t v)
{
	struct msr_bus *bus = plat_pmu_bus(msr);

	return bus ? msr_bus_write(bus, msr, v) : msr_write_safe(msr, v);
}

#define PLAT_LP_WAIT_US		5000000	/* a sibling call here is one register access or two */

int plat_run_on_lp(unsigned lp, void (*fn)(void *arg), void *arg, const char **why)
{
	static const char busy[] = "LP1 is busy (it still runs earlier work)";
	int sib, r;

	if (lp == 0) {
		fn(arg);
		return 0;
	}
	if (lp != 1)
		return *why = "there are LP0 and LP1 (its Hyper-Threading sibling) only", -1;
	if ((sib = workload_sibling(why)) < 0)
		return -1;
	if ((r = smp_call((unsigned)sib, fn, arg)) != 0)
		return *why = r == SMP_EBUSY ? busy : "LP1 is not running (see 'cpu')", -1;
	r = smp_wait_us((unsigned)sib, PLAT_LP_WAIT_US);
	if (r == SMP_ETIMEDOUT)
		return *why = "LP1 did not finish within 5 s (it stays busy)", -1;
	if (r != 0)
		return *why = "an exception ended the access on LP1 (reported above)", -1;
	return 0;
}

const char *plat_msr_backend(uint32_t msr)
{
	return plat_pmu_bus(msr) ? perf_msr_label() : NULL;
}

const char *plat_event_source(unsigned ev)
{
	if (perf_info()->backend == PERF_BACKEND_NONE || ev >= P4_NEVENT)
		return NULL;
	switch (perf_event_source((enum p4_event)ev, NULL)) {
	case PERF_SOURCE_HW:
		return "hardware";
	case PERF_SOURCE_STEP:
		return "stepped";
	case PERF_SOURCE_TSC:
		return "TSC";
	case PERF_SOURCE_MEMORY:
		return "memory model";
	case PERF_SOURCE_COST:
		return "cost model";
	case PERF_SOURCE_NONE:
		return "none";
	default:
		return "synthetic";
	}
}

int plat_msr_trace(bool on)
{
	if (perf_info()->backend == PERF_BACKEND_NONE)
		return -1;
	perf_set_trace(on);
	return 0;
}

void plat_cpu_info(struct cpu_info *out)
{
	perf_cpu_identify(out);		/* the PMU backend's DS, DTES64, IA32_MISC_ENABLE */
}

void plat_pmu_backend(char *buf, size_t n)
{
	const struct perf_info *pi = perf_info();

	if (pi->backend == PERF_BACKEND_HW)
		ksnprintf(buf, n, "hardware, probe %s: %s", pi->probe_failed ? "FAILED" : "passed",
			  pi->probe);
	else
		ksnprintf(buf, n, "%s (%s)", perf_backend_name(pi->backend), pi->reason);
}

static enum mem_kind plat_kind(uint32_t type)
{
	switch (type) {
	case BMEM_FREE:
	case BMEM_BOOT:		return MEM_USABLE;
	case BMEM_LOADER:	return MEM_KERNEL;
	case BMEM_ACPI:
	case BMEM_ACPI_NVS:	return MEM_ACPI;
	case BMEM_MMIO:		return MEM_MMIO;
	default:		return MEM_RESERVED;
	}
}

void plat_mem_info(struct mem_info *out)
{
	struct mem_summary s;

	*out = (struct mem_info){ 0 };
	for (uint32_t i = 0; i < mem_nregions(); i++) {
		const struct boot_region *r = mem_region(i);
		enum mem_kind k = plat_kind(r->type);

		out->bytes[k] += r->size;
		out->regions[k]++;
		if (k == MEM_USABLE && r->base + r->size > out->highest_addr)
			out->highest_addr = r->base + r->size;
	}
	out->nregions = mem_nregions();
	mem_get_summary(&s);
	out->free_bytes = s.free;
}

bool plat_mem_region(unsigned i, struct mem_region *out)
{
	const struct boot_region *r = mem_region(i);

	if (!r)
		return false;
	*out = (struct mem_region){ .base = r->base, .length = r->size, .kind = plat_kind(r->type) };
	return true;
}

int plat_fault(enum plat_fault_kind kind)
{
	switch (kind) {
	case PLAT_FAULT_DE:	arch_raise_de(); break;
	case PLAT_FAULT_UD:	arch_raise_ud(); break;
	case PLAT_FAULT_GP:	arch_raise_gp(); break;
	case PLAT_FAULT_PF:	arch_raise_pf(); break;
	case PLAT_FAULT_INT3:	arch_raise_bp(); return 0;	/* a trap: resumes here */
	default:		return -1;
	}
	return -1;	/* the exception did not happen */
}

static int plat_fault_thunk(void *arg)
{
	return plat_fault(*(const enum plat_fault_kind *)arg);
}

int plat_fault_unguarded(enum plat_fault_kind kind)
{
	return arch_run_unguarded(plat_fault_thunk, &kind);
}

void plat_reboot(void)
{
	power_reboot();
}

void plat_poweroff(void)
{
	const char *why = power_off(kmain_bootinfo()->rsdp, POWEROFF_QEMU_STATUS);

	kprintf("poweroff: %s; halting instead\n", why);
	arch_halt();
}

bool plat_interrupted(void)
{
	return console_poll_interrupt();
}

unsigned plat_qr_room(void)
{
	return screen_qr_room();
}

void plat_qr_show(const struct qr *q, unsigned quiet, const char *caption)
{
	console_flush();	/* the text up to now, for when the code goes away */
	screen_qr_show(q, quiet, caption);
}

void plat_qr_end(void)
{
	screen_qr_end();
}
