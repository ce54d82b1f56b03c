/*
 * selftest.h - a conformance test of the PMU nbprof runs on: each check
 * programs a few counters, runs a built-in workload whose counts are known
 * (workload/workload.h) and compares what the PMU counted with what the manual
 * says it must count.
 *
 * Two halves. The portable half (selftest/report.c, host-tested) judges a
 * measurement against an exact value or documented bounds, formats a
 * result for people, and frames results as CRC-checked `NBS:` lines for
 * tools/nbprof-decode. The kernel half (selftest.c) holds the checks as a
 * const table and runs them through the counting API of prof/perf.h.
 *
 * Report block: every line is
 *
 *	NBS:<seq>|<kind>|<field>|...|<CRC>
 *
 * where CRC is the CRC-32 (lib/crc32.h) of the text between "NBS:" and the
 * last '|', as 8 upper-case hex digits. seq counts from 0 in each block.
 * Kinds: "begin" (seq 0: format version, number of check lines to follow),
 * "machine" (key=value fields), "check" (group, PASS/FAIL/SKIP, name,
 * measured, expected, note) and "end" (passed, failed, skipped, lines in
 * the block including this one). A field never holds '|' or a control
 * character: they are replaced by '/' and '?' when the line is made.
 */
#ifndef NBPROF_PROF_SELFTEST_H
#define NBPROF_PROF_SELFTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SELFTEST_PREFIX		"NBS:"
#define SELFTEST_VERSION	1
#define SELFTEST_LINE_MAX	320
#define SELFTEST_MAX_RESULTS	192	/* 0F_02 with HT makes 127 */

enum selftest_status {
	SELFTEST_PASS,
	SELFTEST_FAIL,
	SELFTEST_SKIP,
};

struct selftest_result {
	const char *group;		/* "counters", "privilege", "threads", ... */
	char name[80];			/* what was checked, naming the counter */
	enum selftest_status status;
	char measured[48];
	char expected[64];
	char note[112];			/* the reason for a SKIP, or a detail */
};

struct selftest_totals {
	unsigned passed, failed, skipped;
};

/* ---- judging (portable) ------------------------------------------------- */

/* PASS when measured == expected; the values go into r->measured/expected. */
void selftest_judge_exact(struct selftest_result *r, uint64_t measured, uint64_t expected);

/* PASS when lo <= measured <= hi: "lo..hi" (">= lo" when hi is UINT64_MAX) as the expectation. */
void selftest_judge_range(struct selftest_result *r, uint64_t measured, uint64_t lo, uint64_t hi);

/* A SKIP with its reason. */
void selftest_skip(struct selftest_result *r, const char *why);

void selftest_count(struct selftest_totals *t, const struct selftest_result *r);

const char *selftest_status_name(enum selftest_status s);

/* ---- bounds and listings (portable, selftest/judge.c) ------------------- */

/* Cycles of a run of `instructions`: instructions/3 .. TSC ticks. */
void selftest_judge_cycles(struct selftest_result *r, uint64_t cycles, uint64_t instructions,
			   uint64_t tsc);

/*
 * A cycle counter over two runs of one workload, the second `instructions`
 * longer, read `added` more cycles: PASS from half of instructions/3 up
 * (judge.c says why not the whole), else FAIL with the two values.
 */
void selftest_judge_cycles_added(struct selftest_result *r, uint64_t added, uint64_t instructions);

/* uops_retired or uop_queue_writes: at least the instructions retired meanwhile. */
void selftest_judge_uops(struct selftest_result *r, uint64_t uops, uint64_t instructions);

/*
 * A cascade partner counting its starter's retirement event, against want
 * (the starter's count minus its period): exact when at most one event
 * happens a cycle (per_cycle 1), else want - (per_cycle - 1) .. want, as
 * the start may come a cycle after the overflow (judge.c).
 */
/*
 * PMIs of a sampler with period `period` over `events` events: the PMI
 * comes on the event after the overflow (PMU reference 2.2), or up to
 * skid_max events later ("events and PMIs are separated by
 * microarchitectural latency", PMU reference 6, with no figure), and the
 * handler's reload starts the next period after it. So the k-th PMI comes
 * on event k(period + 1 + S) for the part's skid S: between
 * events / (period + 1 + skid_max) and events / (period + 1) of them.
 */
void selftest_judge_pmis(struct selftest_result *r, uint64_t measured, uint64_t events,
			 uint64_t period, uint64_t skid_max);

void selftest_judge_partner(struct selftest_result *r, uint64_t measured, uint64_t want,
			    unsigned per_cycle);

/* T0_OS while LP0 waits at CPL 0 for LP1 (hardware): 1 .. 3 per TSC cycle. */
void selftest_judge_wait_cell(struct selftest_result *r, uint64_t count, uint64_t tsc);

/*
 * The loads of a workload body that loops `per_pass` times per pass, as its
 * listing gives them: `before` loads, then per pass `per_load` loads per
 * iteration and `per_pass` more at the end of each pass, then `after`.
 * offset[] holds the instruction of each, from the function's start, in
 * that order. The workload's assembly file emits it next to the body.
 */
#define SELFTEST_MAX_LOADS	8
struct selftest_loads {
	uint32_t before, per_load, per_pass, after;
	uint32_t offset[SELFTEST_MAX_LOADS];
};

uint64_t selftest_load_count(const struct selftest_loads *l, uint64_t per_pass, uint64_t passes);

/* Which entry of offset[] the n-th load (from 1) is; -1 past the last. */
int selftest_nth_load(const struct selftest_loads *l, uint64_t per_pass, uint64_t passes,
		      uint64_t n);

/*
 * PEBS: record k (from 1) of ip[0..nip) must hold the IP of tagged load
 * k x period (base: the function's address); PASS when `want` records do.
 */
void selftest_judge_pebs_ips(struct selftest_result *r, const struct selftest_loads *l,
			     uint64_t per_pass, uint64_t passes, uint64_t period,
			     const uint64_t *ip, unsigned nip, uint64_t want, uint64_t base);

/* An uncore count over the same runs: at least the core's count of L3 read misses. */
void selftest_judge_uncore(struct selftest_result *r, uint64_t measured, uint64_t l3_misses);

/* ---- printing (portable) ------------------------------------------------ */

/* "PASS  counters   counter 12 ...  measured 300  expected 300  (note)" */
int selftest_format(const struct selftest_result *r, bool verbose, char *buf, size_t n);

/*
 * One report line: "NBS:" seq "|" fields joined by '|' "|" CRC. Fields are
 * cleaned (see the top). Returns the length, or -1 when it does not fit.
 */
int selftest_frame(char *buf, size_t n, unsigned seq, const char *const *fields, unsigned nfields);

/* The check line of r as a frame. */
int selftest_frame_result(char *buf, size_t n, unsigned seq, const struct selftest_result *r);

/*
 * The whole report block (begin, machine, one check line per result, end)
 * through out(), one NBS: line per call; backend names the PMU backend
 * ("hardware 0F_02H stepping 9 with HT"). Returns the number of lines.
 */
struct selftest_machine;
unsigned selftest_block(const struct selftest_machine *m, const char *backend,
			const struct selftest_result *r, unsigned nres,
			void (*out)(void *ctx, const char *line), void *ctx);

/* ---- running (kernel) ---------------------------------------------------- */

enum selftest_inject {
	SELFTEST_INJECT_NONE,
	SELFTEST_INJECT_UNFLAGGED,	/* overflows leave CCCR.OVF clear (model) */
	SELFTEST_INJECT_N15,		/* reloads lose their counter writes (model) */
	SELFTEST_INJECT_DEAD,		/* counter `arg` never counts (model) */
	SELFTEST_INJECT_RDPMC,		/* RDPMC of counter `arg` differs from RDMSR (model) */
	SELFTEST_INJECT_NOMASK,		/* `arg` PMIs leave LVT PC unmasked (model) */
	SELFTEST_INJECT_ERRATUM,	/* the cascade-PMI erratum the other way round (model) */
	SELFTEST_INJECT_STUCK,		/* ESCR at MSR `arg`: set bits stick at 1 (model) */
};

struct selftest_opts {
	bool quick;			/* fewer workload runs: the exact checks only once */
	bool verbose;
	bool replace;			/* the PEBS check may replace the user's recording */
	enum selftest_inject inject;
	unsigned inject_arg;		/* how many, which counter, or which MSR */
	/* called with each result as it is made */
	void (*emit)(void *ctx, const struct selftest_result *r);
	bool (*interrupted)(void *ctx);	/* Ctrl-C: stop between workload runs */
	void *ctx;
};

struct selftest_machine {
	uint32_t signature;		/* CPUID.1:EAX */
	char display[10];		/* "0F_04H" */
	uint8_t stepping;
	char brand[49];
	bool ucode_ok;
	uint32_t ucode;			/* IA32_BIOS_SIGN_ID[63:32] */
	bool misc_ok;
	uint64_t misc_enable;
};

/* CPUID and the microcode revision (IA32_BIOS_SIGN_ID 8BH, read as the SDM says). */
void selftest_machine(struct selftest_machine *m);

/*
 * Run every check; results go to opts->emit and into out[] (at most max).
 * Returns the number of results, or -1 with err when nothing could run (no
 * PMU backend, a bad injection). *interrupted tells whether Ctrl-C ended it.
 * Whatever happens, the PMU registers are put back as they were.
 */
int selftest_run(const struct selftest_opts *opts, struct selftest_result *out, unsigned max,
		 bool *interrupted, char *err, size_t n);

#endif
