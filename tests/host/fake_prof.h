/*
 * fake_prof.h - the host's stand-in for the profiling runtime (see
 * fake_prof.c): what a test sets, and what it can check afterwards.
 */
#ifndef NBPROF_TESTS_FAKE_PROF_H
#define NBPROF_TESTS_FAKE_PROF_H

#include <stdbool.h>
#include <stdint.h>

struct fake_prof {
	/* set by the test */
	uint64_t steps;			/* retired instructions a workload run feeds */
	unsigned branch_every;		/* every n-th of them a taken Jcc (0: none) */
	bool sibling;			/* a Hyper-Threading sibling exists */
	/* seen by the test */
	unsigned runs, starts, records;
	int last_ring;
	bool last_step;
};

extern struct fake_prof fake_prof;

void fake_prof_reset(void);

#endif
