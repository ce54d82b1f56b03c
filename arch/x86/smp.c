/*
 * smp.c - logical processors: enumeration, INIT-SIPI-SIPI start-up, the
 * idle loop and work dispatch (smp.h).
 *
 * Enumeration: the enabled local APICs of the ACPI MADT when the firmware
 * gave us an RSDP, else those of the MP table (with the packages' other LPs
 * from CPUID), else the APIC IDs CPUID describes for the BSP's package
 * (arch/x86/topology.c). Either way each APIC ID is split into package, core
 * and SMT ID with CPUID's shape (PMU reference section 7), so two cores of a
 * Pentium D are never taken for two threads.
 *
 * Start-up (SDM Vol. 3A 8.4.4.1, the MP initialization example; measured
 * recipe in QEMU notes section 5): copy trampoline.S to the low page,
 * give it the BSP's CR0/CR3/CR4/EFER and this LP's stack, send INIT, wait
 * 10 ms, send a start-up IPI with vector low_page >> 12, wait 200 us and
 * send the second SIPI only if the LP has not reported yet. LPs start one at
 * a time because they share the trampoline's parameter block. A started LP
 * loads its own GDT/TSS (with its own IST stacks), the shared IDT, its GS
 * base (percpu.h) and its local APIC (all LVTs masked, LVT PC masked with
 * LAPIC_PMI_VECTOR, timer stopped), then enters the idle loop.
 *
 * Dispatch: smp_call() writes fn/arg into the target's struct percpu, sets
 * its state to LP_RUNNING with a release store and sends SMP_WAKE_VECTOR.
 * The target checks its state with interrupts disabled and only then runs
 * `sti; hlt`: STI delays interrupts by one instruction, so an IPI that
 * arrives in between wakes the HLT instead of being lost.
 */
#include <stddef.h>

#include "arch/x86/acpi.h"
#include "arch/x86/arch.h"
#include "arch/x86/console.h"
#include "arch/x86/cpu.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/fpu.h"
#include "arch/x86/gdt.h"
#include "arch/x86/idt.h"
#include "arch/x86/lapic.h"
#include "arch/x86/mem.h"
#include "arch/x86/mode.h"
#include "arch/x86/percpu.h"
#include "arch/x86/smp.h"
#include "arch/x86/timer.h"
#include "arch/x86/topology.h"
#include "lib/string.h"

#define INIT_DELAY_US		10000	/* SDM 8.4.4.1: 10 ms after INIT */
#define SIPI_DELAY_US		200	/* SDM 8.4.4.1: 200 us after each SIPI */
#define START_TIMEOUT_US	100000	/* give up on an LP after 100 ms */
#define CHECK_TIMEOUT_US	100000
#define FAULT_TIMEOUT_US	5000000	/* the fault report is ~1 KB: about 1 s at 9600 baud */

#define AP_STACK_PAGES		(BOOT_STACK_SIZE / MEM_PAGE_SIZE)
#define AP_IST_PAGES		(BOOT_IST_SIZE / MEM_PAGE_SIZE)

/* trampoline.S's parameter block, in its order. */
struct smp_tramp_params {
	uint64_t cr3, cr4, efer, cr0;
	uint64_t stack, entry, arg;
};

extern const char smp_tramp_start[] __attribute__((visibility("hidden")));
extern const uint32_t smp_tramp_size __attribute__((visibility("hidden")));
extern const char smp_tramp_params[] __attribute__((visibility("hidden")));

bool percpu_gs_ready;
static const char *lp_source = "LP0 only";

static void smp_set_gs(struct percpu *pc)
{
	mode_set_percpu_base(pc);
}

static void smp_topology(struct topo_shape *shape, struct cpu_info *ci)
{
	struct cpuid_raw raw;

	cpu_read_cpuid(&raw);
	cpuid_decode(&raw, ci);
	topo_shape_from_cpu(ci, shape);
}

void smp_init_bsp(void)
{
	struct topo_shape shape;
	struct cpu_info ci;
	struct topo_id id;
	struct percpu *pc = percpu_boot();

	smp_topology(&shape, &ci);
	topo_decompose(&shape, ci.initial_apic_id, &id);
	if (percpu_count() == 0)
		pc = percpu_add(ci.initial_apic_id, &id);
	pc->state = LP_RUNNING;		/* LP0 runs the shell */
	smp_set_gs(pc);
	percpu_gs_ready = true;
}

unsigned smp_count(void)
{
	return percpu_count();
}

const struct percpu *smp_lp(unsigned index)
{
	return percpu_get(index);
}

unsigned smp_this_lp(void)
{
	return percpu_this()->index;
}

/* --- work dispatch ----------------------------------------------------------- */

static uint32_t lp_state(const struct percpu *pc)
{
	return __atomic_load_n(&pc->state, __ATOMIC_ACQUIRE);
}

int smp_call(unsigned lp, void (*fn)(void *arg), void *arg)
{
	struct percpu *pc = percpu_get(lp);

	if (!pc)
		return SMP_ENOLP;
	if (pc == percpu_this())
		return SMP_ESELF;
	switch (lp_state(pc)) {
	case LP_IDLE:
		break;
	case LP_RUNNING:
		return SMP_EBUSY;
	default:
		return SMP_ENOLP;
	}
	pc->work_fn = fn;
	pc->work_arg = arg;
	pc->work_vector = -1;
	__atomic_store_n(&pc->state, LP_RUNNING, __ATOMIC_RELEASE);
	lapic_send_ipi(pc->apic_id, SMP_WAKE_VECTOR);
	return 0;
}

bool smp_is_busy(unsigned lp)
{
	const struct percpu *pc = percpu_get(lp);

	return pc && pc != percpu_this() && lp_state(pc) == LP_RUNNING;
}

static int smp_wait_until(unsigned lp, uint64_t deadline)
{
	struct percpu *pc = percpu_get(lp);

	if (!pc || pc == percpu_this())
		return SMP_ENOLP;
	while (lp_state(pc) == LP_RUNNING) {
		if (deadline && rdtsc() > deadline)
			return SMP_ETIMEDOUT;
		cpu_pause();
	}
	if (lp_state(pc) != LP_IDLE)
		return SMP_ENOLP;
	return pc->work_vector < 0 ? 0 : SMP_EFAULT;
}

int smp_wait(unsigned lp)
{
	return smp_wait_until(lp, 0);
}

static uint64_t smp_deadline(uint64_t us)
{
	uint64_t hz = timer_tsc_hz() ? timer_tsc_hz() : 1000000000u;

	return rdtsc() + us * (hz / 1000000u);
}

int smp_wait_us(unsigned lp, uint64_t us)
{
	return smp_wait_until(lp, smp_deadline(us));
}

int smp_fault_vector(unsigned lp)
{
	const struct percpu *pc = percpu_get(lp);

	return pc ? pc->work_vector : -1;
}

/* --- the other LPs' side ----------------------------------------------------- */

static void smp_wake(struct trap_frame *f)
{
	(void)f;
	percpu_this()->wakeups++;
}

static int smp_run_fn(void *arg)
{
	struct percpu *pc = arg;

	pc->work_fn(pc->work_arg);
	return 0;
}

static void smp_run_work(struct percpu *pc)
{
	if (arch_run_guarded(smp_run_fn, pc) == ARCH_GUARD_FAULTED) {
		pc->work_vector = arch_last_guard_vector();
		pc->faults++;
	}
	pc->calls++;
	__atomic_store_n(&pc->state, LP_IDLE, __ATOMIC_RELEASE);
}

static void __attribute__((noreturn)) smp_idle_loop(struct percpu *pc)
{
	for (;;) {
		cpu_cli();
		if (lp_state(pc) == LP_RUNNING) {
			smp_run_work(pc);
			continue;
		}
		__asm__ volatile("sti; hlt" : : : "memory");
	}
}

/* C entry from trampoline.S, on the LP's own stack. */
static void __attribute__((noreturn)) smp_ap_main(void *arg)
{
	struct percpu *pc = arg;

	gdt_init_lp(pc->index, pc->ist_top);	/* zeroes GS: set the base after it */
	smp_set_gs(pc);
	fpu_init_lp();				/* this LP's own CR0/CR4 and x87 state */
	idt_load();
	lapic_init();				/* every LVT masked, LVT PC = masked | PMI vector */
	lapic_timer_stop();
	pc->start_tsc = rdtsc();
	__atomic_store_n(&pc->state, LP_IDLE, __ATOMIC_RELEASE);
	smp_idle_loop(pc);
}

/* --- start-up ---------------------------------------------------------------- */

static void smp_icr(uint32_t apic_id, uint32_t low)
{
	lapic_write(LAPIC_ICR_HI, apic_id << 24);
	lapic_write(LAPIC_ICR_LO, low);
	for (unsigned i = 0; i < 100000 && (lapic_read(LAPIC_ICR_LO) & ICR_DELIVERY_PENDING); i++)
		cpu_pause();
}

static bool smp_wait_state(struct percpu *pc, uint32_t st, uint64_t us)
{
	uint64_t end = smp_deadline(us);

	while (lp_state(pc) != st) {
		if (rdtsc() > end)
			return false;
		cpu_pause();
	}
	return true;
}

static bool smp_alloc_stacks(struct percpu *pc)
{
	uint64_t stack = mem_alloc_pages(AP_STACK_PAGES);

	if (!stack)
		return false;
	pc->stack_top = stack + BOOT_STACK_SIZE;
	for (int i = 0; i < PERCPU_NIST; i++) {
		uint64_t ist = mem_alloc_pages(AP_IST_PAGES);

		if (!ist)
			return false;
		pc->ist_top[i] = ist + BOOT_IST_SIZE;
	}
	return true;
}

static void smp_fill_params(uint64_t low_page, struct percpu *pc)
{
	struct smp_tramp_params *tp = (struct smp_tramp_params *)(uintptr_t)
		(low_page + (uint64_t)(smp_tramp_params - smp_tramp_start));

	tp->cr3 = read_cr3();
	tp->cr4 = read_cr4();
	tp->efer = mode_ap_efer();
	tp->cr0 = read_cr0();
	tp->stack = pc->stack_top;
	tp->entry = (uint64_t)(uintptr_t)smp_ap_main;
	tp->arg = (uint64_t)(uintptr_t)pc;
}

/* INIT-SIPI-SIPI; true when the LP reached its idle loop. */
static bool smp_start_one(uint64_t low_page, struct percpu *pc)
{
	uint32_t sipi = ICR_LEVEL_ASSERT | ICR_DELIVERY_STARTUP | (uint32_t)(low_page >> 12);

	smp_fill_params(low_page, pc);
	__atomic_store_n(&pc->state, LP_STARTING, __ATOMIC_RELEASE);
	lapic_write(LAPIC_ESR, 0);
	smp_icr(pc->apic_id, ICR_LEVEL_ASSERT | ICR_DELIVERY_INIT);
	timer_udelay(INIT_DELAY_US);
	smp_icr(pc->apic_id, sipi);
	if (smp_wait_state(pc, LP_IDLE, SIPI_DELAY_US))
		return true;
	smp_icr(pc->apic_id, sipi);
	if (smp_wait_state(pc, LP_IDLE, START_TIMEOUT_US))
		return true;
	pc->state = LP_OFFLINE;
	return false;
}

/* --- enumeration ------------------------------------------------------------- */

/* The enabled processors of the BIOS's MP table (boot/multiboot.c found it), or -1. */
static int smp_mp_lapics(const struct bootinfo *bi, uint32_t *found)
{
	const uint8_t *mpc = (const uint8_t *)(uintptr_t)bi->mp_config;

	if (!mpc)
		return -1;
	return topo_mp_lapics(mpc, (size_t)mpc[4] | (size_t)mpc[5] << 8, found, TOPO_MAX_LPS);
}

/*
 * APIC IDs to run on, LP0's first: the ACPI MADT's, else the MP table's,
 * else CPUID's candidates. A MADT with a wrong checksum is used (acpi.h), and
 * `cpu` says so. An MP table that lists the BSP alone is passed over for
 * CPUID, and one that lists more gets the other LPs of each listed package
 * from CPUID: BIOSes of the Hyper-Threading era list one logical processor
 * per package there (topo_add_package_lps).
 */
static unsigned smp_enumerate(const struct bootinfo *bi, const struct topo_shape *shape,
			      uint32_t bsp, uint32_t *ids)
{
	uint32_t madt_len = 0;
	const uint8_t *madt = acpi_find_table(bi->rsdp, "APIC", &madt_len);	/* length checked */
	uint32_t found[TOPO_MAX_LPS];
	int n = madt ? topo_madt_lapics(madt, madt_len, found, TOPO_MAX_LPS) : -1;
	bool from_mp = n <= 0;
	unsigned k = 1, listed;

	if (from_mp)
		n = smp_mp_lapics(bi, found);
	if (n <= 0 || (from_mp && n == 1)) {
		lp_source = "CPUID";
		return topo_candidates(shape, bsp, ids, TOPO_MAX_LPS);
	}
	if (from_mp)
		lp_source = "MP table";
	else
		lp_source = acpi_checksum_ok(madt, madt_len) ? "ACPI MADT" :
			    "ACPI MADT, checksum wrong: used anyway";
	ids[0] = bsp;
	for (int i = 0; i < n; i++)
		if (found[i] != bsp && k < TOPO_MAX_LPS)
			ids[k++] = found[i];
	listed = k;
	if (from_mp && (k = topo_add_package_lps(shape, ids, k, TOPO_MAX_LPS)) > listed)
		lp_source = "MP table, each package's other LPs from CPUID";
	return k;
}

/* --- what the shell sees (arch/x86/topology.h) --------------------------------- */

static unsigned smp_ops_count(void)
{
	return percpu_count();
}

static void smp_ops_get(unsigned i, struct lp_info *out)
{
	const struct percpu *pc = percpu_get(i);

	*out = (struct lp_info){ 0 };
	if (!pc)
		return;
	out->index = pc->index;
	out->apic_id = pc->apic_id;
	out->id = pc->topo;
	out->state = (enum lp_state)lp_state(pc);
	out->calls = pc->calls;
	out->faults = pc->faults;
	out->wakeups = pc->wakeups;
}

struct smp_probe {
	volatile uint32_t apic_id;
	volatile uint32_t runs;
};

static void smp_probe_work(void *arg)
{
	struct smp_probe *p = arg;

	p->apic_id = lapic_id();
	p->runs++;
}

static void smp_probe_fault(void *arg)
{
	(void)arg;
	arch_raise_ud();
}

/* Run the probe on LP i; true when it ran once and LP0 sees the APIC ID it read. */
static bool smp_probe_run(unsigned i, struct lp_check *out)
{
	struct smp_probe p = { 0xffffffffu, 0 };
	uint64_t t0 = rdtsc(), hz = timer_tsc_hz();

	if (smp_call(i, smp_probe_work, &p) != 0 || smp_wait_us(i, CHECK_TIMEOUT_US) != 0)
		return false;
	out->us = hz ? (rdtsc() - t0) * 1000000u / hz : 0;
	out->seen_apic_id = p.apic_id;
	return p.runs == 1 && p.apic_id == percpu_get(i)->apic_id;
}

static int smp_check_lp(unsigned i, struct lp_check *out, bool with_fault)
{
	const struct percpu *pc = percpu_get(i);
	uint64_t wakeups;

	*out = (struct lp_check){ 0 };
	if (!pc || pc == percpu_this() || lp_state(pc) != LP_IDLE)
		return SMP_ENOLP;
	wakeups = pc->wakeups;
	out->ran = smp_probe_run(i, out);
	/* The IPI may be taken after the work when it arrived while the LP was awake. */
	for (uint64_t end = smp_deadline(CHECK_TIMEOUT_US); pc->wakeups == wakeups && rdtsc() < end;)
		cpu_pause();
	out->woke = pc->wakeups > wakeups;
	if (with_fault) {
		struct lp_check again;

		out->isolated = smp_call(i, smp_probe_fault, NULL) == 0 &&
				smp_wait_us(i, FAULT_TIMEOUT_US) == SMP_EFAULT &&
				smp_fault_vector(i) == VEC_UD && smp_probe_run(i, &again);
	}
	return 0;
}

static int smp_ops_check(unsigned i, struct lp_check *out)
{
	return smp_check_lp(i, out, true);
}

static const char *smp_ops_source(void)
{
	return lp_source;
}

static const struct lp_ops smp_lp_ops = {
	.count = smp_ops_count,
	.get = smp_ops_get,
	.check = smp_ops_check,
	.source = smp_ops_source,
};

/* --- boot ---------------------------------------------------------------------- */

static const char *smp_cannot_start(const struct bootinfo *bi)
{
	if (!lapic_present())
		return "no local APIC";
	if (!bi->low_page || bi->low_page >= 0x100000 || (bi->low_page & 0xfff))
		return "no page below 1 MiB for the start-up code";
	if (smp_tramp_size > MEM_PAGE_SIZE)
		return "start-up code larger than a page";
	if (read_cr3() >> 32)
		return "page tables above 4 GiB (the start-up code loads CR3 in 32-bit mode)";
	if (!timer_tsc_hz())
		return "TSC not calibrated (no delays for INIT-SIPI-SIPI)";
	return NULL;
}

static void smp_report(struct percpu *pc, bool up, uint64_t t0)
{
	struct lp_check c;
	uint64_t hz = timer_tsc_hz();

	kprintf("smp: LP%u APIC ID %u (package %u, core %u, SMT %u): ", pc->index, pc->apic_id,
		pc->topo.package, pc->topo.core, pc->topo.smt);
	if (!up) {
		kprintf("did not start (no answer to INIT-SIPI-SIPI)\n");
		return;
	}
	smp_check_lp(pc->index, &c, false);
	kprintf("up in %llu us, work ran %s, wake-up IPI %s\n",
		(unsigned long long)((pc->start_tsc - t0) * 1000000u / hz), c.ran ? "ok" : "FAILED",
		c.woke ? "ok" : "FAILED");
}

static void smp_add_lps(const struct topo_shape *shape, const uint32_t *ids, unsigned n)
{
	for (unsigned i = 1; i < n; i++) {
		struct topo_id id;

		topo_decompose(shape, ids[i], &id);
		if (!percpu_add(ids[i], &id))
			break;
	}
}

unsigned smp_start(const struct bootinfo *bi)
{
	struct topo_shape shape;
	struct cpu_info ci;
	uint32_t ids[TOPO_MAX_LPS];
	unsigned n, up = 1;
	const char *why;
	struct percpu *bsp = percpu_get(0);

	smp_topology(&shape, &ci);
	bsp->apic_id = lapic_present() ? lapic_id() : ci.initial_apic_id;
	topo_decompose(&shape, bsp->apic_id, &bsp->topo);
	topo_set_lp_ops(&smp_lp_ops);
	n = smp_enumerate(bi, &shape, bsp->apic_id, ids);
	smp_add_lps(&shape, ids, n);
	kprintf("smp: %u logical processor%s (%s); CPUID: %u core%s x %u thread%s per package\n",
		percpu_count(), percpu_count() == 1 ? "" : "s", lp_source, shape.cores_per_package,
		shape.cores_per_package == 1 ? "" : "s", shape.threads_per_core,
		shape.threads_per_core == 1 ? "" : "s");
	if (percpu_count() == 1) {
		kprintf("smp: 1 logical processor; no Hyper-Threading sibling in this topology\n");
		return 1;
	}
	why = smp_cannot_start(bi);
	if (why) {
		kprintf("smp: not starting the other LPs: %s\n", why);
		return 1;
	}
	idt_set_handler(SMP_WAKE_VECTOR, smp_wake);
	memcpy((void *)(uintptr_t)bi->low_page, smp_tramp_start, smp_tramp_size);
	for (unsigned i = 1; i < percpu_count(); i++) {
		struct percpu *pc = percpu_get(i);
		uint64_t t0 = rdtsc();
		bool ok = smp_alloc_stacks(pc) && smp_start_one(bi->low_page, pc);

		smp_report(pc, ok, t0);
		if (!ok) {
			/* a late starter would share the parameter block with the next one */
			kprintf("smp: not starting the remaining LPs\n");
			break;
		}
		up++;
	}
	return up;
}
