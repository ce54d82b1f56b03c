/*
 * report.h - turning a recording into text: `report`, `annotate`, `script`.
 *
 * All three read a struct sample_run (prof/samples.h) and write whole
 * lines, without the newline, through struct report_out. Symbols come from
 * a lookup callback (the kernel passes ksym_lookup), so the same code runs
 * in host tests over a made-up symbol table. The aggregating commands need
 * scratch memory for their table; the caller provides it and nothing here
 * allocates. A table too small for the distinct keys folds the rest into
 * one "[other]" row: every sample is counted somewhere.
 *
 * `script` writes the text `perf script` prints for callchain samples:
 *
 *	loop 0/1 [001] 12.000345: 1000 instr_retired:
 *		    ffff8000001234 loop_body+0x12 (nbprof)
 *		    ffff8000001500 run_workload+0x40 (nbprof)
 *	(blank line)
 *
 * Header: comm, pid 0 / tid = LP, [cpu] = LP, seconds since recording
 * started with 6 decimals, period, event name and a colon. Frames: tab,
 * address in hex without 0x, symbol+0xoffset (lower-case hex) and the DSO
 * in parentheses, innermost first. FlameGraph's stackcollapse-perf.pl needs
 * the header to start with a non-blank comm of at least two characters
 * followed by pid/tid; it strips "+0x..." from symbols, and a blank line
 * ends each stack. speedscope's importer also needs the "seconds.micros:"
 * time field and takes the event name from the last "name:" on the line
 * (it shows one event per profile).
 *
 * Portable: compiled freestanding in the kernel and on the host for tests.
 */
#ifndef NBPROF_PROF_REPORT_H
#define NBPROF_PROF_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prof/samples.h"

#define REPORT_DSO		"nbprof"
#define REPORT_LINE_MAX		320	/* longer lines (huge symbol names) are cut */
#define REPORT_ALL_EVENTS	(-1)

struct report_syms {
	void *ctx;
	/* Function holding addr and addr's offset into it; NULL when unknown. */
	const char *(*lookup)(void *ctx, uint64_t addr, uint64_t *offset);
};

struct report_out {
	void *ctx;
	void (*line)(void *ctx, const char *text);
	bool (*stop)(void *ctx);	/* optional: true ends the output early (Ctrl-C) */
};

enum report_sort {
	REPORT_SORT_SYM,	/* one row per function */
	REPORT_SORT_IP,		/* one row per instruction address */
};

struct report_opts {
	enum report_sort sort;
	uint32_t limit;		/* rows to print; 0 = all */
	int event;		/* event index, or REPORT_ALL_EVENTS */
};

/* One row of an aggregation (scratch memory for report_top/report_annotate). */
struct report_entry {
	uint64_t key;		/* function start or instruction address */
	const char *name;	/* NULL: no symbol */
	uint64_t count;
};

/*
 * Top list: header lines starting with '#', then one row per function or
 * address, most samples first, with percentages of the samples shown.
 * Returns the number of samples counted, or -1 when cap is 0 (nothing
 * printed).
 */
int64_t report_top(const struct sample_run *run, const struct report_opts *opts,
		   const struct report_syms *syms, struct report_entry *scratch, size_t cap,
		   const struct report_out *out);

/*
 * Instruction bytes at addr for `annotate`: fills buf with up to max bytes
 * of the instruction starting there, returns how many (0 when unknown).
 */
struct report_bytes {
	void *ctx;
	unsigned (*read)(void *ctx, uint64_t addr, uint8_t *buf, unsigned max);
};

/*
 * Per-address sample counts of one function (every sample whose IP the
 * lookup places in `symbol`), by ascending address: offset, address,
 * samples, percent of the function's samples, and the instruction bytes
 * when `bytes` is given. Returns the number of samples in the function
 * (0 prints one "# no samples" line), or -1 when cap is 0.
 */
int64_t report_annotate(const struct sample_run *run, const char *symbol, int event,
			const struct report_syms *syms, const struct report_bytes *bytes,
			struct report_entry *scratch, size_t cap, const struct report_out *out);

/* perf-script text of one sample (header, frames, blank line). */
void report_script_sample(const struct sample_run *run, const struct sample *s,
			  const struct report_syms *syms, const struct report_out *out);

/* All samples of the run; returns how many were written. */
uint64_t report_script(const struct sample_run *run, const struct report_syms *syms,
		       const struct report_out *out);

#endif
