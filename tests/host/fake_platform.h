/*
 * fake_platform.h - scripted shell/platform.h for host tests.
 *
 * Present MSRs are a small table (anything else "raises #GP"), the CPU is
 * whatever struct cpu_info a test puts in fake_plat.cpu, and every call that
 * would act on the machine is counted instead.
 */
#ifndef NBPROF_TESTS_FAKE_PLATFORM_H
#define NBPROF_TESTS_FAKE_PLATFORM_H

#include "shell/platform.h"

#define FAKE_NMSRS	32
#define FAKE_NREGIONS	8

struct fake_msr {
	uint32_t msr;
	uint64_t value;
};

struct fake_platform {
	struct fake_msr msrs[FAKE_NMSRS];
	unsigned nmsrs;
	unsigned nreads, nwrites;		/* successful and failed accesses alike */
	uint32_t last_write_msr;
	uint64_t last_write_value;
	const char *msr_backend;		/* plat_msr_backend() answer, NULL = hardware */
	bool no_pmu;				/* plat_msr_trace() fails */
	const char *event_source;		/* plat_event_source() answer for every event */
	bool trace;				/* last plat_msr_trace() setting */
	struct cpu_info cpu;
	struct mem_info mem;
	struct mem_region regions[FAKE_NREGIONS];
	unsigned nregions;
	unsigned nfaults;
	unsigned nunguarded;			/* of them through plat_fault_unguarded */
	enum plat_fault_kind last_fault;
	int fault_ret;
	unsigned nreboots, npoweroffs;
	bool interrupted;
	const char *lp1_refusal;		/* plat_run_on_lp(1) fails with this reason */
	unsigned lp;				/* the LP plat_run_on_lp() is running fn on */
	unsigned lp_calls[2];			/* plat_run_on_lp() calls per LP */
	unsigned qr_room;			/* plat_qr_room() answer (0: no screen) */
	unsigned qr_shown, qr_ends;		/* plat_qr_show() and plat_qr_end() calls */
	int qr_version;				/* of the last code shown */
	unsigned qr_quiet;
	char qr_caption[160];			/* of the last code shown */
};

extern struct fake_platform fake_plat;

/* Empty MSR table, zeroed CPU and memory, no calls recorded. */
void fake_platform_reset(void);

/* Make msr present with value v (replacing an earlier value). */
void fake_msr_set(uint32_t msr, uint64_t v);

/* The value of a present msr, or `missing` when absent. */
uint64_t fake_msr_get(uint32_t msr, uint64_t missing);

#endif
