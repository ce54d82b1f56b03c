/*
 * platform.h - what shell commands need from the kernel.
 *
 * kernel/platform.c implements these on the machine; tests/host/
 * fake_platform.c implements them with scripted values so every command runs
 * in a host test. Nothing here exposes hardware details to the shell beyond
 * plain values: MSR access returns an error code instead of faulting, and the
 * CPU and memory facts arrive as structs.
 */
#ifndef NBPROF_SHELL_PLATFORM_H
#define NBPROF_SHELL_PLATFORM_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpuid.h"
#include "lib/qr.h"
#include "pmu/msr_bus.h"

/*
 * 0, or MSR_BUS_EFAULT when RDMSR/WRMSR raised #GP (*v unchanged on a failed
 * read). PMU registers go through the active PMU backend's bus, so with the
 * software model they read and write the model (and its #GP for MSRs the
 * configured CPU model lacks); everything else goes to the hardware.
 */
int plat_msr_read(uint32_t msr, uint64_t *v);
int plat_msr_write(uint32_t msr, uint64_t v);

/*
 * Run fn(arg) on logical processor lp and wait for it: lp 0 is LP0 (the
 * shell's own, a plain call), lp 1 LP0's Hyper-Threading sibling (the
 * sibling call of arch/x86/smp.c). 0, or -1 with *why: no such LP (no
 * Hyper-Threading sibling), the sibling is busy, it did not finish in time,
 * or an exception ended fn there. For registers that are per LP or read
 * relative to the LP (IA32_DS_AREA, MSR_PEBS_ENABLE's MY_THR / OTH_THR).
 */
int plat_run_on_lp(unsigned lp, void (*fn)(void *arg), void *arg, const char **why);

/* Name of the backend that serves msr (e.g. "model 0F_04H"), or NULL for the hardware. */
const char *plat_msr_backend(uint32_t msr);

/*
 * Where the active PMU backend takes event ev (enum p4_event) from, for the
 * `events` listing: "hardware", "stepped" or "TSC" (the model, from what the
 * workload really does), "synthetic" (the model, only from `synthetic`),
 * or NULL when there is no backend.
 */
const char *plat_event_source(unsigned ev);

/* `msr trace on|off`: log every PMU register write. -1 when there is no PMU backend. */
int plat_msr_trace(bool on);

/* Decoded CPUID plus IA32_MISC_ENABLE (read safely), TSC frequency and APIC id. */
void plat_cpu_info(struct cpu_info *out);
/* The PMU backend in use and, on the hardware, its probe's verdict: one line of text. */
void plat_pmu_backend(char *buf, size_t n);

/* Memory map, summarised by kind. Firmware types are folded into these. */
enum mem_kind {
	MEM_USABLE,		/* free for the kernel (conventional + boot services) */
	MEM_KERNEL,		/* the loaded image and what boot/ allocated for it */
	MEM_RESERVED,		/* reserved, unusable, firmware runtime */
	MEM_ACPI,		/* ACPI reclaim and NVS */
	MEM_MMIO,		/* memory-mapped I/O */
	MEM_NKINDS
};

struct mem_region {
	uint64_t base;
	uint64_t length;
	enum mem_kind kind;
};

struct mem_info {
	uint64_t bytes[MEM_NKINDS];
	uint32_t regions[MEM_NKINDS];
	uint32_t nregions;		/* entries in the (firmware) map */
	uint64_t free_bytes;		/* not yet handed out by the kernel's allocator */
	uint64_t highest_addr;		/* end of the highest usable region */
};

void plat_mem_info(struct mem_info *out);

/* Region i of the map, in address order; false when i is past the end. */
bool plat_mem_region(unsigned i, struct mem_region *out);

/* Raise an exception on purpose; returns only if the handler resumed (int3). */
enum plat_fault_kind {
	PLAT_FAULT_DE,		/* divide error, vector 0 */
	PLAT_FAULT_UD,		/* invalid opcode, vector 6 */
	PLAT_FAULT_GP,		/* general protection, vector 13 */
	PLAT_FAULT_PF,		/* page fault, vector 14 */
	PLAT_FAULT_INT3,	/* breakpoint, vector 3 */
	PLAT_NFAULTS
};

int plat_fault(enum plat_fault_kind kind);

/*
 * The same outside the guard that protects shell commands: the exception is
 * reported and the kernel halts (what happens to an exception outside a
 * command). Returns only if the handler resumed (int3).
 */
int plat_fault_unguarded(enum plat_fault_kind kind);

/* Do not return on the machine; a return means the method failed. */
void plat_reboot(void);
void plat_poweroff(void);

/* True once Ctrl-C arrived while a command runs; reading clears it. */
bool plat_interrupted(void);

/*
 * QR codes on the machine's own screen (arch/x86/screen.h): the side, in
 * modules, of the largest square the screen shows (0: no screen, or the
 * console does not use it); q with `quiet` light modules around it and
 * the caption, in place of the console's text; the text again.
 */
unsigned plat_qr_room(void);
void plat_qr_show(const struct qr *q, unsigned quiet, const char *caption);
void plat_qr_end(void);

#endif
