/*
 * jitter.c - randomized sampling periods: xorshift64* seeded by
 * splitmix64, uniform draws around the period (see jitter.h).
 */
#include "prof/jitter.h"

/* splitmix64 (Steele, Lea, Flood 2014): spreads any seed, 0 included, over the state. */
static uint64_t jitter_mix(uint64_t x)
{
	x += UINT64_C(0x9e3779b97f4a7c15);
	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

static uint64_t jitter_next(struct period_jitter *j)
{
	uint64_t x = j->state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	j->state = x;
	return x * UINT64_C(0x2545f4914f6cdd1d);
}

void jitter_init(struct period_jitter *j, uint64_t seed, unsigned stream, unsigned pct)
{
	j->state = jitter_mix(seed ^ jitter_mix(stream));
	if (j->state == 0)
		j->state = 1;		/* xorshift's one fixed point */
	j->pct = pct > JITTER_PCT_MAX ? JITTER_PCT_MAX : pct;
}

uint64_t jitter_period(struct period_jitter *j, uint64_t period, uint64_t max)
{
	uint64_t d, p;

	if (j->pct == 0 || period == 0)
		return period;
	d = period / 100 * j->pct + period % 100 * j->pct / 100;	/* period * pct / 100 */
	p = period - d + jitter_next(j) % (2 * d + 1);
	if (p < 1)
		p = 1;
	return p > max ? max : p;
}
