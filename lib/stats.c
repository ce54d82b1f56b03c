/*
 * stats.c - min, median, 20-80 % trimmed mean and max (see stats.h).
 *
 * Trimming follows nanoBench's "-avg" option: sort, drop floor(n / 5)
 * values at each end, average the rest. With fewer than five values
 * nothing is dropped. The mean is rounded to the nearest hundredth
 * (halves away from zero).
 */
#include "lib/printf.h"
#include "lib/stats.h"

void stats_sort(uint64_t *v, unsigned n)
{
	for (unsigned i = 1; i < n; i++) {
		uint64_t x = v[i];
		unsigned j = i;

		while (j > 0 && v[j - 1] > x) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = x;
	}
}

/* sum / cnt in hundredths, rounded; sum < 2^63 / STATS_SCALE is not needed. */
static int64_t stats_centi_mean(uint64_t sum, uint64_t cnt)
{
	uint64_t q = sum / cnt, r = sum % cnt;

	return (int64_t)(q * STATS_SCALE + (r * STATS_SCALE + cnt / 2) / cnt);
}

void stats_summarise(uint64_t *v, unsigned n, struct stats_summary *out)
{
	uint64_t sum = 0;

	*out = (struct stats_summary){ .n = n };
	if (n == 0)
		return;
	stats_sort(v, n);
	out->min = (int64_t)v[0] * STATS_SCALE;
	out->max = (int64_t)v[n - 1] * STATS_SCALE;
	if (n % 2)
		out->median = (int64_t)v[n / 2] * STATS_SCALE;
	else
		out->median = (int64_t)(v[n / 2 - 1] + v[n / 2]) * (STATS_SCALE / 2);
	out->trimmed = n / 5;
	for (unsigned i = out->trimmed; i < n - out->trimmed; i++)
		sum += v[i];
	out->tmean = stats_centi_mean(sum, n - 2 * out->trimmed);
}

void stats_subtract(struct stats_summary *s, int64_t centi)
{
	s->min -= centi;
	s->median -= centi;
	s->tmean -= centi;
	s->max -= centi;
}

int stats_format(int64_t centi, char *buf, size_t n)
{
	uint64_t mag = centi < 0 ? (uint64_t)(-(centi + 1)) + 1 : (uint64_t)centi;
	const char *sign = centi < 0 ? "-" : "";

	if (mag % STATS_SCALE == 0)
		return ksnprintf(buf, n, "%s%llu", sign, (unsigned long long)(mag / STATS_SCALE));
	return ksnprintf(buf, n, "%s%llu.%02llu", sign, (unsigned long long)(mag / STATS_SCALE),
			 (unsigned long long)(mag % STATS_SCALE));
}
