/*
 * prof/storm.c - the storm guard's error (prof/storm.h), for every command
 * that counts: what stopped, on what evidence, and the period that works.
 */
#include "lib/printf.h"
#include "prof/perf.h"

void perf_storm_text(const struct perf_count *s, const char *spec,
		     const struct perf_pebs_size *pebs, char *buf, size_t n)
{
	if (!s->storm) {
		if (n)
			buf[0] = '\0';
		return;
	}
	uint64_t period = s->plan.req[s->storm_idx].spec.period;
	int k;

	if (s->storm_tick_hz) {	/* the poll tick's guard (perf_poll_tick) */
		ksnprintf(buf, n, "interrupt storm: %llu timer ticks in a row on LP%u found the "
			  "interrupted code where the one before had left it: the cascade-PMI "
			  "erratum's poll tick (%u Hz, every %llu TSC cycles) came every %llu TSC "
			  "cycles, its poll %llu of them - the interrupt outlasts its period, so the "
			  "next tick was pending at its IRET and the workload made no progress; "
			  "counting and the tick stopped. This machine's timer outpaces its "
			  "processor: sample without a cascaded request (no after=) here",
			  (unsigned long long)s->storm_pmis, s->storm_lp, s->storm_tick_hz,
			  (unsigned long long)s->storm_tick_period,
			  (unsigned long long)s->storm_tick_every,
			  (unsigned long long)s->storm_tick_tsc);
		return;
	}
	if (s->storm_pebs && period) {
		/*
		 * The buffer's interrupt, no overflow: since the last drain only the
		 * handler ran, so the records stand for the handler's own tagged
		 * uops, at least records x period of them (at most one period
		 * more). Where they are a whole cycle's - from one drain to the
		 * next, the PMIs that found the interrupted code unchanged - a
		 * period above what they need over the threshold's records writes
		 * fewer than those, and the threshold is not reached again. Found
		 * early (the records after the drain, at the unmask) or in a full
		 * buffer (more were lost), they are part of the uops only: the
		 * period is a lower bound.
		 */
		bool full = pebs && s->storm_pebs >= pebs->slots;
		bool part = full || s->storm_pebs_early;
		/* 32 bits: the handler's uops are thousands, so is a period that storms */
		unsigned p = (unsigned)period, uops = s->storm_pebs * p + (part ? 0 : p - 1);
		unsigned threshold = pebs && pebs->threshold ? pebs->threshold : 1;

		ksnprintf(buf, n, "interrupt storm: the PEBS buffer of #%u %s (period %u) reached its "
			  "threshold (%u records) again from the handler's own tagged uops at CPL 0: "
			  "%u records %s, %s %u uops%s; counting stopped. A period above %u %s (or "
			  "count at :u: the handler runs at CPL 0)", s->storm_idx, spec ? spec : "", p,
			  threshold, s->storm_pebs,
			  s->storm_pebs_early ? "after its drain" : "between two drains",
			  part ? "at least" : "at most", uops, full ? " (the buffer was full)" : "",
			  uops / threshold, part ? "is needed, maybe more" : "works");
		return;
	}
	k = ksnprintf(buf, n, "interrupt storm: %llu overflow interrupts in a row on LP%u found the "
		      "interrupted code where the one before had left it, ",
		      (unsigned long long)s->storm_pmis, s->storm_lp);

	if ((size_t)k >= n)
		return;
	if (period && s->storm_events < period) {
		/* no new overflow between them: the request itself never went away */
		ksnprintf(buf + k, n - (size_t)k, "with %llu events of #%u %s (counter %u) between two "
			  "of them, fewer than its period %llu: its PMI request stayed asserted (a "
			  "CCCR.OVF that does not clear: stale or faulty counter state); counting stopped",
			  (unsigned long long)s->storm_events, s->storm_idx, spec ? spec : "",
			  (unsigned)s->plan.slot[s->storm_idx].counter, (unsigned long long)period);
		return;
	}
	ksnprintf(buf + k, n - (size_t)k, "#%u %s (counter %u) having overflowed again before its "
		  "handler returned, %llu of its events between two of them being the handler's own; "
		  "counting stopped. A period above %llu works (or count at :u: the handler runs at "
		  "CPL 0)", s->storm_idx, spec ? spec : "", (unsigned)s->plan.slot[s->storm_idx].counter,
		  (unsigned long long)s->storm_events, (unsigned long long)s->storm_events);
}
