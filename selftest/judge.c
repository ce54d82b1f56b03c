/*
 * selftest/judge.c - the judgements of `selftest` whose expectation is a
 * documented bound or a count worked out from a workload's listing:
 * measured values in, PASS/FAIL with both values and the reason out.
 * Pure and portable, so that each bound's failure is tested on the host
 * (tests/host/test_selftest.c) with values on both sides of it.
 *
 * Bounds and where they come from:
 * - cycles: NetBurst retires at most three uops a cycle (IA-32
 *   Optimization Reference Manual 248966, chapter 1, "Up to three uops may
 *   be retired per cycle") and every instruction is at least one uop, so a
 *   run of I instructions takes at least I/3 cycles; it takes no more core
 *   cycles than TSC ticks (the TSC ticks with the core clock, or at its
 *   highest rate on later models: SDM Vol. 3B, "Time-Stamp Counter").
 * - cycles added by a longer run: its extra I instructions retire in at
 *   least I/3 cycles, but the difference of two runs' counts is not bound
 *   by that. The counted span holds the window's own code around the
 *   workload, and a stall of that code in the shorter run (a miss or a
 *   store buffer drain whose latency the loop's retirement hid only in
 *   part) can be hidden whole by the longer run's extra iterations; each
 *   count is also read at a cycle's granularity at both ends. Seen on the
 *   model: loop 150 minus loop 50 (I = 300) 99 cycles on a counter that
 *   starts after the others, where the loop's iterations took 100. The
 *   check is that a cycle counter counts (a dead or stuck one adds
 *   nothing): at least half of I/3.
 * - uops: every instruction is at least one uop and every retired uop went
 *   through the uop queue, so uops_retired and uop_queue_writes grow at
 *   least as much as instr_retired; the manual gives no upper bound.
 * - the T0_OS cell while LP1 works (Table 18-66): LP0 spins in the
 *   kernel's wait loop at CPL 0 meanwhile, so T0_OS counts at least one
 *   instruction, and at most three per TSC cycle (the retire limit above).
 *   There is no lower bound per TSC cycle: the loop waits in RDTSC and
 *   PAUSE, whose latencies the manuals do not bound, so one instruction per
 *   cycle (or any other rate) would fail a correct PMU.
 * - PEBS (PMU reference 5.2, 5.6): with the counter reset at -P, the k-th
 *   record is written by the (kP)-th tagged load, and holds its linear IP.
 *   selftest_nth_load() says which load of a workload body that is.
 * - a cascade partner that counts the same retirement event as its
 *   starter: SDM Example 18-1 says only that the partner "is automatically
 *   enabled and begins counting", not whether it counts events of the
 *   cycle its starter overflowed in. When up to `per_cycle` events can
 *   happen in one cycle (instr_retired: three, the retire limit above),
 *   the partner may miss up to per_cycle - 1 of them: want - (per_cycle -
 *   1) .. want; it never counts more than its starter's events past the
 *   period.
 * - uncore: exact under the model (its documented feed); on hardware at
 *   least the core's count of the same transactions (see selftest.h).
 */
#include "lib/printf.h"
#include "selftest/selftest.h"

void selftest_judge_cycles(struct selftest_result *r, uint64_t cycles, uint64_t instructions,
			   uint64_t tsc)
{
	selftest_judge_range(r, cycles, instructions / 3, tsc);
	ksnprintf(r->note, sizeof(r->note), "cycles: %llu instructions/3 .. TSC",
		  (unsigned long long)instructions);
}

void selftest_judge_cycles_added(struct selftest_result *r, uint64_t added, uint64_t instructions)
{
	selftest_judge_range(r, added, instructions / 6, UINT64_MAX);
	ksnprintf(r->note, sizeof(r->note), "%llu more instructions: at least half of their "
		  "%llu cycles at 3 a cycle", (unsigned long long)instructions,
		  (unsigned long long)(instructions / 3));
}

void selftest_judge_uops(struct selftest_result *r, uint64_t uops, uint64_t instructions)
{
	selftest_judge_range(r, uops, instructions, UINT64_MAX);
	ksnprintf(r->note, sizeof(r->note), "at least one uop per instruction: instr_retired's %llu",
		  (unsigned long long)instructions);
}

void selftest_judge_pmis(struct selftest_result *r, uint64_t measured, uint64_t events,
			 uint64_t period, uint64_t skid_max)
{
	selftest_judge_range(r, measured, events / (period + 1 + skid_max), events / (period + 1));
}

void selftest_judge_partner(struct selftest_result *r, uint64_t measured, uint64_t want,
			    unsigned per_cycle)
{
	uint64_t miss = per_cycle > 1 ? per_cycle - 1 : 0;

	if (!miss)
		selftest_judge_exact(r, measured, want);
	else
		selftest_judge_range(r, measured, want > miss ? want - miss : 0, want);
}

void selftest_judge_wait_cell(struct selftest_result *r, uint64_t count, uint64_t tsc)
{
	selftest_judge_range(r, count, 1, tsc > UINT64_MAX / 3 ? UINT64_MAX : 3 * tsc);
	ksnprintf(r->note, sizeof(r->note), "LP0's wait loop at CPL 0: at least 1, at most 3 per "
		  "TSC cycle (%llu)", (unsigned long long)tsc);
}

uint64_t selftest_load_count(const struct selftest_loads *l, uint64_t per_pass, uint64_t passes)
{
	return l->before + passes * (per_pass * l->per_load + l->per_pass) + l->after;
}

int selftest_nth_load(const struct selftest_loads *l, uint64_t per_pass, uint64_t passes,
		      uint64_t n)
{
	uint64_t pass_loads = per_pass * l->per_load + l->per_pass, k;

	if (n == 0 || n > selftest_load_count(l, per_pass, passes))
		return -1;
	k = n - 1;
	if (k < l->before)
		return (int)k;
	k -= l->before;
	if (k < passes * pass_loads) {
		k %= pass_loads;
		if (k < per_pass * l->per_load)
			return (int)(l->before + k % l->per_load);
		return (int)(l->before + l->per_load + (k - per_pass * l->per_load));
	}
	k -= passes * pass_loads;
	return (int)(l->before + l->per_load + l->per_pass + k);
}

void selftest_judge_pebs_ips(struct selftest_result *r, const struct selftest_loads *l,
			     uint64_t per_pass, uint64_t passes, uint64_t period,
			     const uint64_t *ip, unsigned nip, uint64_t want, uint64_t base)
{
	unsigned good = 0, first_bad = nip;

	for (unsigned k = 0; k < nip; k++) {
		int at = selftest_nth_load(l, per_pass, passes, (k + 1) * period);

		if (at >= 0 && ip[k] == base + l->offset[at])
			good++;
		else if (first_bad == nip)
			first_bad = k;
	}
	selftest_judge_exact(r, good, want);
	if (first_bad < nip) {
		int at = selftest_nth_load(l, per_pass, passes, (first_bad + 1) * period);

		ksnprintf(r->note, sizeof(r->note), "record %u at +%llXH, the load is at +%XH",
			  first_bad + 1, (unsigned long long)(ip[first_bad] - base),
			  at >= 0 ? l->offset[at] : 0u);
	} else {
		ksnprintf(r->note, sizeof(r->note), "record k at tagged load k x %llu of the listing; "
			  "%u records", (unsigned long long)period, nip);
	}
}

void selftest_judge_uncore(struct selftest_result *r, uint64_t measured, uint64_t l3_misses)
{
	selftest_judge_range(r, measured, l3_misses, UINT64_MAX);
	ksnprintf(r->note, sizeof(r->note), "at least the core's L3 read misses "
		  "(BSQ_cache_reference:RD_3rdL_MISS %llu), SDM 18.20", (unsigned long long)l3_misses);
}
