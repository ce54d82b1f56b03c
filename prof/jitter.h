/*
 * jitter.h - randomized sampling periods (`record --jitter PCT --seed N`).
 *
 * A fixed period samples a loop whose length divides (or shares a factor
 * with) the period at the same few instructions every time: the samples
 * alias with the loop instead of spreading over it. With jitter each
 * reload draws the next period uniformly from PERIOD +- PCT percent, so
 * the mean stays PERIOD and the positions spread. The generator is
 * xorshift64* (Vigna, "An experimental exploration of Marsaglia's xorshift
 * generators, scrambled", 2016) seeded through splitmix64, so the same
 * seed gives the same periods, and with a deterministic workload the same
 * samples. Each LP draws from its own stream (the seed and the stream
 * number), so the two LPs' handlers share no state.
 *
 * Portable: compiled freestanding in the kernel and on the host for tests.
 */
#ifndef NBPROF_PROF_JITTER_H
#define NBPROF_PROF_JITTER_H

#include <stdint.h>

#define JITTER_PCT_MAX	90u	/* keeps every period at least a tenth of PERIOD */

struct period_jitter {
	uint64_t state;
	unsigned pct;		/* 0: no jitter, periods as given */
};

/* Stream `stream` of `seed`, drawing periods within +- pct percent (clamped to JITTER_PCT_MAX). */
void jitter_init(struct period_jitter *j, uint64_t seed, unsigned stream, unsigned pct);

/* The next period around `period`: uniform in period -+ period * pct / 100, within 1 .. max. */
uint64_t jitter_period(struct period_jitter *j, uint64_t period, uint64_t max);

#endif
