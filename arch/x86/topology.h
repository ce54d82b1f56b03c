/*
 * topology.h - logical processors: APIC ID -> package / core / SMT ID,
 * the list of APIC IDs to start, and the LP list the `cpu` command shows.
 *
 * Pure and portable (built on the host too). The shape of a package comes
 * from CPUID (arch/x86/cpuid.h): CPUID.1:EBX[23:16] logical processors per
 * package, CPUID.4:EAX[31:26] + 1 cores per package, their quotient threads
 * per core (PMU reference section 7). An initial APIC ID then splits into
 *
 *	| package | core | SMT |      SMT width  = order(threads per core)
 *	                              core width = order(cores per package)
 *
 * where order(n) is the number of bits of the next power of two >= n. The
 * SMT ID is the APIC ID masked by the SMT width, never bit 0 by assumption:
 * a Pentium D 8xx (2 cores, 1 thread each) has SMT width 0, so APIC IDs 0
 * and 1 are two cores, not two threads.
 *
 * The kernel registers a struct lp_ops (topo_set_lp_ops) so that the shell
 * can list logical processors without knowing how they were started.
 */
#ifndef NBPROF_ARCH_X86_TOPOLOGY_H
#define NBPROF_ARCH_X86_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/cpuid.h"

#define TOPO_MAX_LPS	16	/* 4 packages x 2 cores x 2 threads (Xeon MP, Paxville) */

/* What CPUID says about one package. */
struct topo_shape {
	uint8_t logical_per_package;	/* >= 1 */
	uint8_t cores_per_package;	/* >= 1 */
	uint8_t threads_per_core;	/* >= 1 */
};

struct topo_id {
	uint32_t package, core, smt;
};

/* The shape from decoded CPUID; every count is at least 1. */
void topo_shape_from_cpu(const struct cpu_info *ci, struct topo_shape *out);

/* Bits of the APIC ID that number threads within a core / cores within a package. */
unsigned topo_smt_bits(const struct topo_shape *s);
unsigned topo_core_bits(const struct topo_shape *s);

/* Split an (initial) APIC ID. */
void topo_decompose(const struct topo_shape *s, uint32_t apic_id, struct topo_id *out);

/*
 * Without an ACPI MADT: the APIC IDs of the package that holds bsp_apic_id,
 * BSP first, then ascending. Returns how many were written (at most max);
 * 1 (the BSP alone) on a package with one logical processor.
 */
unsigned topo_candidates(const struct topo_shape *s, uint32_t bsp_apic_id, uint32_t *ids,
			 unsigned max);

/*
 * The enabled local APICs of an ACPI MADT ("APIC" table, ACPI spec 5.2.12:
 * 44-byte header, then entries of type, length; type 0 = Processor Local
 * APIC with the APIC ID at byte 3 and flags at byte 4, bit 0 = enabled).
 * Returns how many IDs were written (at most max, duplicates dropped), or
 * -1 when the table is malformed.
 */
int topo_madt_lapics(const uint8_t *madt, size_t len, uint32_t *ids, unsigned max);

/*
 * The same from a MultiProcessor Specification 1.4 configuration table
 * (MP spec 4.2-4.3.1: "PCMP", u16 base table length, checksum over it,
 * u16 entry count at byte 34, entries from byte 44; a processor entry (type
 * 0) is 20 bytes with the local APIC ID at byte 1 and CPU flags at byte 3,
 * bit 0 = enabled; the other base entry types are 8 bytes). The fallback
 * when there is no MADT, as memtest86+ does it. Returns how many IDs were
 * written, or -1 when the table is malformed or its checksum is wrong.
 */
int topo_mp_lapics(const uint8_t *mpc, size_t len, uint32_t *ids, unsigned max);

/*
 * BIOSes of the Hyper-Threading era list one logical processor per package
 * in the MP table (SeaBIOS still does). Append to ids[0..n) every APIC ID of
 * each listed package (topo_candidates with CPUID's shape, taken to be the
 * same in every package) that is not there yet, after the listed ones, so a
 * sibling that does not answer cannot keep a listed processor from starting.
 * Returns the new count (at most max); n when a package has one LP.
 */
unsigned topo_add_package_lps(const struct topo_shape *s, uint32_t *ids, unsigned n,
			      unsigned max);

/* --- the list `cpu` prints --------------------------------------------------- */

enum lp_state {
	LP_OFFLINE,	/* listed, not started (start failed or not attempted) */
	LP_STARTING,	/* INIT-SIPI-SIPI sent, not yet alive */
	LP_IDLE,	/* halted, waiting for an IPI */
	LP_RUNNING,	/* running dispatched work (or the shell, on LP0) */
	LP_DEAD,	/* stopped for good after an exception outside a guarded run */
	LP_NSTATES
};

const char *topo_state_name(enum lp_state st);

struct lp_info {
	unsigned index;			/* LP0 is the BSP, which runs the shell */
	uint32_t apic_id;
	struct topo_id id;
	enum lp_state state;
	uint64_t calls;			/* work items finished (dispatched with smp_call) */
	uint64_t faults;		/* ... of them ended by an exception */
	uint64_t wakeups;		/* wake-up IPIs taken */
};

struct lp_check {
	bool ran;			/* a work item ran on the LP and LP0 saw its effect */
	bool woke;			/* a wake-up IPI reached the LP's handler */
	bool isolated;			/* a fault there was contained and the LP came back idle */
	uint32_t seen_apic_id;		/* what the work item read from its own local APIC */
	uint64_t us;			/* round trip of the work item, microseconds */
};

struct lp_ops {
	unsigned (*count)(void);
	void (*get)(unsigned index, struct lp_info *out);
	int (*check)(unsigned index, struct lp_check *out);	/* 0, or < 0: cannot run */
	const char *(*source)(void);	/* where the list came from: "ACPI MADT", ... */
};

/* Registered by the kernel once the LPs are known; NULL until then (host tests: a fake). */
void topo_set_lp_ops(const struct lp_ops *ops);
const struct lp_ops *topo_lp_ops(void);

#endif
