/*
 * p4_cost.c - the memory model's access penalties: a model, not a measurement.
 *
 * Clockticks come from the core's timing model (p4_core.c), which takes
 * measured load-to-use latencies; what is left here is the penalty
 * p4_mem_access() records in each result (r->cycles), which the core model
 * charges a REP string instruction for its misses and walks (its rate is
 * measured, its misses are not), and p4_cost_insn() for callers that want
 * the older whole-instruction estimate:
 *
 * clockticks(instruction) = base + sum of its accesses' penalties, where
 *
 *   base      = max(1, ceil(uops / uops_per_cycle))
 *   load      : L1 hit 0, L2 hit l2_latency, L3 hit l3_latency,
 *               memory: latency of the last cache level looked up +
 *               bus_round_trip + bus_cycles_memory * core_per_bus_clock;
 *               each piece found at a level pays that level's penalty
 *   store     : 0 whatever the level - the store buffer lets the
 *               instruction retire before the line arrives; an RFO costs
 *               bus bandwidth, which this model does not charge
 *   fetch     : L2 hit 0 (the trace cache's misses are p4_core.c's:
 *               pmu/model/p4_tc.c), L3 and memory as for loads
 *   every kind: page_walk per TLB miss
 *
 * Where the caller has no uop count, p4_cost_uops() estimates one from the
 * accesses: 1 for the operation, 1 per load, 2 per store. NetBurst splits
 * a store into store-address and store-data uops (UNVERIFIED: no source
 * in reach states it), and a read-modify-write
 * ALU instruction is then 1 + 1 + 2 = 4. Real decodings differ (a plain
 * load is 1 uop, not 2); for clockticks at 3 uops per cycle the
 * difference is at most one cycle per instruction.
 *
 * Everything is an integer function of the inputs: the same instruction
 * stream gives the same clockticks on every run, with or without QEMU's
 * -icount. Out-of-order overlap, replays, bus contention and the second
 * logical processor are not modelled; neither are the cache latencies of
 * the page walk's own loads.
 *
 * The parameters, with their reasoning (sources as in p4_mem.c):
 * - uops_per_cycle = 3: the trace cache "can deliver up to three uops per
 *   cycle" ([OPT] section 1, "Execution Trace Cache"); the model takes the
 *   front end as the limit.
 * - bus_round_trip = 12: "on the order of 12 processor cycles to get to
 *   the bus and back within the processor" [OPT, after Table 1-1; the same
 *   sentence in Intel's "A Detailed Look Inside the Intel NetBurst Micro-
 *   Architecture of the Intel Pentium 4 Processor" (2000), "Caches"].
 * - bus_cycles_memory = 12: "and 6-12 bus cycles to access memory if there
 *   is no bus congestion" (same two sources); the model takes the upper end.
 * - core_per_bus_clock = 15: the sources say only that "each bus cycle
 *   equals several processor cycles"; 15 is a 3.0 GHz core on a 200 MHz bus clock
 *   (800 MT/s quad-pumped), a common Prescott pairing. A model choice.
 * - page_walk = 30: UNVERIFIED, no source in reach gives a walk's cost.
 *   Taken as roughly two dependent L2-latency loads (the upper levels of
 *   the walk assumed cached) on models 3/4.
 * Cache latencies come from the part's row (p4_mem.c, [OPT] Table 1-1).
 */
#include "pmu/model/p4_mem.h"

const struct p4_cost_params p4_cost_params = {
	.uops_per_cycle = 3,
	.bus_round_trip = 12,
	.bus_cycles_memory = 12,
	.core_per_bus_clock = 15,
	.page_walk = 30,
};

/* Core clocks for a line from memory, behind the part's last cache level. */
static uint32_t cost_memory(const struct p4_mem_part *p)
{
	const struct p4_cost_params *c = &p4_cost_params;
	uint32_t last = p->l3.size ? p->l3_latency : p->l2_latency;

	return last + c->bus_round_trip + (uint32_t)c->bus_cycles_memory * c->core_per_bus_clock;
}

uint32_t p4_cost_access(const struct p4_mem *m, const struct p4_mem_result *r)
{
	const struct p4_mem_part *p = m->part;
	uint32_t cycles = (uint32_t)r->page_walks * p4_cost_params.page_walk;

	if (r->kind == P4_MEM_STORE)
		return cycles;
	if (r->kind == P4_MEM_LOAD)
		cycles += (uint32_t)r->hit[P4_LVL_L2] * p->l2_latency;
	cycles += (uint32_t)r->hit[P4_LVL_L3] * p->l3_latency;
	cycles += (uint32_t)r->hit[P4_LVL_MEM] * cost_memory(p);
	return cycles;
}

uint64_t p4_cost_insn(unsigned uops, const struct p4_mem_result *acc, size_t nacc)
{
	uint64_t cycles = p4_cost_base(uops);

	for (size_t i = 0; i < nacc; i++)
		cycles += acc[i].cycles;
	return cycles;
}
