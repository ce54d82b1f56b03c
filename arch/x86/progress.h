/*
 * progress.h - a sign of life during long stepped runs.
 *
 * Under the PMU model every workload instruction is single-stepped, and a
 * long run (`stat loop 1000000`) takes many seconds. While LP0 steps a
 * workload, about once a second (by the TSC) the console shows how many
 * instructions were stepped so far, on one line that starts with a CR,
 * "\r# stepped N instructions"; when the run ends that line is overwritten
 * with spaces and the cursor returned to its start, so the command's own
 * output follows as if nothing had been printed. A run shorter than a
 * second prints nothing at all. Commands that print while a workload runs
 * do not step (dump, script), so the line never lands inside their output.
 */
#ifndef NBPROF_ARCH_X86_PROGRESS_H
#define NBPROF_ARCH_X86_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#define PROGRESS_CHECK_MASK	255u	/* look at the TSC every 256 instructions */

/* --quiet: no progress for the runs that follow until it is turned off again. */
void progress_set_quiet(bool quiet);

/* On the LP that steps: a run begins, n instructions have been stepped, the run ended. */
void progress_start(void);
void progress_tick_now(uint64_t n);
static inline void progress_tick(uint64_t n)
{
	if (!(n & PROGRESS_CHECK_MASK))		/* inline: every stepped instruction comes here */
		progress_tick_now(n);
}
void progress_stop(void);

#endif
