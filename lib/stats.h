/*
 * stats.h - summary statistics of repeated measurements (stat -r N).
 *
 * nanoBench style: minimum, median, the 20-80 % trimmed mean (the mean of
 * the values left after dropping the lowest and the highest fifth) and
 * maximum. Values are kept in hundredths (fixed point, int64_t) so that a
 * median of an even number of runs and a mean print exactly to two decimals
 * and a baseline can be subtracted from all four without rounding twice.
 * Pure: the caller's array is sorted in place, nothing else is touched.
 */
#ifndef NBPROF_LIB_STATS_H
#define NBPROF_LIB_STATS_H

#include <stddef.h>
#include <stdint.h>

#define STATS_SCALE	100	/* values in struct stats_summary are x 100 */

struct stats_summary {
	unsigned n;		/* values summarised */
	unsigned trimmed;	/* values dropped at each end for the trimmed mean */
	int64_t min, median, tmean, max;	/* x STATS_SCALE */
};

/* Sort v[0..n) ascending (insertion sort: n is at most a few hundred). */
void stats_sort(uint64_t *v, unsigned n);

/* Sort v and summarise it; n == 0 gives all zeroes. Values must be < 2^56. */
void stats_summarise(uint64_t *v, unsigned n, struct stats_summary *out);

/* Subtract a constant (x STATS_SCALE, e.g. a baseline median) from all four figures. */
void stats_subtract(struct stats_summary *s, int64_t centi);

/* "3005", "-2", "1502.50" (a value x STATS_SCALE); returns the length. */
int stats_format(int64_t centi, char *buf, size_t n);

#endif
