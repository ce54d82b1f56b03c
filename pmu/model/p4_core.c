/*
 * p4_core.c - the NetBurst core's timing, per part family: measured uops
 * latencies, a register scoreboard, the branch predictor and the counting
 * quirks of real parts (p4_core.h).
 *
 * Sources:
 *  [IL]   InstLatx64 (github InstLatx64/InstLatx64, GenuineIntel/): AIDA64/
 *         EVEREST measurements of real parts. InstLatX86 files: 0F_29
 *         Northwood (GenuineIntel0000F29_P4_Northwood_InstLatX86.txt, test
 *         numbers as "F29 #n") and 0F_43 Prescott (..0000F43_P4_Prescott_
 *         InstLatX86.txt, "F43 #n"); MemLatX86 files of 0F_24/0F_29
 *         Northwood, 0F_25 Gallatin, 0F_43 Prescott (pointer chases). The
 *         other files of each family agree on these figures (ADD 0.5 vs
 *         1.0, IMUL 15 vs 10, FADD 5 vs 6, ADDSD 4 vs 5).
 *  [CSAPP] Bryant & O'Hallaron, Computer Systems: A Programmer's
 *         Perspective, the Pentium 4 branch practice problem: about 16
 *         cycles with a predictable pattern, about 31 with a random one.
 *  [AF]   Agner Fog, microarchitecture manual, as quoted: P4/P4E recovery
 *         from a mispredict is seldom under 24 clocks.
 *  [WD]   Weaver, Terpstra, Moore, "Non-determinism and overcount on modern
 *         hardware performance counter implementations", ISPASS 2013, and
 *         its public data (github deater/deterministic): the instructions
 *         INSTR_RETIRED counts as two and the microcode memory operations
 *         the tagged load/store events count on a Pentium D (15/6/4).
 *  [OPT]  IA-32 Intel Architecture Optimization Reference Manual (248966),
 *         chapter 1 "Branch Prediction": static prediction on a BTB miss,
 *         backward taken, forward not taken; the Return Stack.
 *  [ITM]  J. Stokes, Inside the Machine, ch. 7: the Pentium 4's branch
 *         history table has "4,000 entries" (4096 taken; Stallings'
 *         textbook gives 4 ways x 512 lines, fewer: the two disagree and
 *         the model takes the larger, Intel's "4K" of its era).
 *
 * Families: models 0-2 (Willamette, Northwood, Gallatin) take the 0F_29
 * figures; models 3, 4 and 6 (Prescott, Smithfield, Cedar Mill, Presler,
 * Irwindale, Nocona) the 0F_43 figures.
 *
 * Time is counted in sixths of a clock, so that ADD's 0.5 and the retire
 * width's 1/3 are exact. Per instruction:
 *   issue   = max(front end, retirement of the instruction P4_CORE_ROB
 *             older) - the front end delivers 3 uops a clock (the trace
 *             cache "can deliver up to three uops per cycle", [OPT] 1);
 *   start   = max(issue, sources ready, flags ready when read, the data
 *             of its load: address ready + load-to-use of the level found
 *             + page walks), and a busy non-pipelined unit (divider);
 *   done    = start + latency; its destination and flags are ready then;
 *   retired = max(previous retirement + 2 sixths per uop, done) - three
 *             uops retire a clock ([OPT] 1, "retire up to three uops");
 *   a mispredicted branch holds the front end until done + the penalty;
 *   an instruction the trace cache builds (pmu/model/p4_tc.c) issues as
 *   the decoder takes it, one a clock, a trace cache miss after the code's
 *   load-to-use from L2 or further (core_build); a machine clear (a store
 *   into code the trace cache held) holds the front end the mispredict's
 *   penalty after the store retired. No source in reach gives a clear's
 *   cost: it restarts the front end from retirement, later than a
 *   mispredict does from the branch's resolution, so the same clocks from
 *   a later point are the harder reading.
 * The instruction's clockticks are the clocks its retirement moved the
 * retirement clock. Nothing loops: the step is a dozen table reads.
 *
 * Latencies ([IL] L column, clocks, Northwood / Prescott):
 *   ALU add/sub/logic/mov r,r 0.5 / 1.0 (F29 #72, F43 same test);
 *   adc/sbb 7 / 10; shl/shr/sar imm 4 / 1 (F29 #223); by CL 6 / 2 (#227);
 *   rol/ror imm 4 / 1 (#271); lea [r+r*8] 4 / 2 (#212); imul r,r 15 / 10
 *   (#328); mul r32 (edx:eax) 18 (#338) / 13 (not read for 0F_43: IMUL's
 *   10 plus Northwood's difference of 3, a reading of ours); div r32
 *   57 (#432) / 76 (F43 #432), not pipelined (T = L); cmov 6.1 / 9.5;
 *   fadd 5 / 6 (#577); fmul 7 / 8 (#580); fdiv80 43 / 45 (#586), not
 *   pipelined; fxch, fchs and other x87 moves 1 (fxch #570; the harder
 *   reading of fchs's 2 / 3 is not taken: moves are mostly fld/fst);
 *   addsd 4 / 5 (F29 #912), one every 2 clocks (T 2); mulsd 6 (#914) / 7
 *   (F43 MULSS #866: F29 gives MULSS = MULSD, so Prescott's MULSS stands
 *   for MULSD); divsd 38 / 40 (#932), not pipelined; MMX/SSE2 integer 2
 *   (#643, #1013); cpuid 266 / 340 (#556); rdtsc 80 / 102 (#555, T);
 *   mfence 100 / 124, sfence/lfence 40 / 54 (#771, #769); lock add [m],r /
 *   xchg r,[m] 125 / 89 (#64, #86); cld/std/popf 48 / 54 (#467); a string
 *   instruction without REP 6 / 8 (#529); REP MOVS 6.75 / 6.2 bytes a clock,
 *   REP STOS 4.04 / 3.33 (#533, #525), REP LODS/SCAS 4 clocks an element
 *   (0.25 B/c for bytes, #517), REP CMPS 2 an element (#509).
 * Load-to-use, pointer chases ([IL] MemLatX86, linear, stride 64):
 *   L1 2 / 4, L2 19 / 28 (every Northwood file 18-19, every Prescott file
 *   28: not Intel's Table 1-1, which gives 7 and 18-20); L3 (Xeon MP) 58,
 *   the Gallatin's lowest (58-71 across its tables); Prescott-class L3:
 *   no file, the Gallatin's highest, 71, the harder reading; memory: a
 *   random chase over 16 MiB, 365 (2.84 GHz 0F_29) / 392 (3.2 GHz 0F_43),
 *   DTLB miss included, so memory's load_lat is that less the page walk; page walk
 *   26 / 17 (random minus linear at 512 KiB, 45 - 19 / 46 - 29: a weak
 *   derivation, the only one; Northwood's may include L2 misses).
 *   Memory latency in clocks grows with the clock (293 at 1.6 GHz [IL
 *   F24]); the model takes the fastest part's, the harder reading.
 * Stores retire into the store buffer: no latency; the store buffer
 *   (p4_sbuf.c) delays an instruction when it is full and a load that
 *   forwards, fails to forward or conflicts (p4_core_in.data_ready).
 *   [IL]'s load+store chain on one dword (38.6 / 44 c) conflicts with 6 c
 *   in later 0F_43 files, so no figure is taken from it.
 * uops: one per operation of the register form, one per load, two per
 *   store (store address and store data, UNVERIFIED as before).
 * Branch predictor: a BTB of 4096 entries ([ITM]) indexed by the branch's
 *   address; on a BTB miss the static prediction, backward taken, forward
 *   not taken ([OPT]); on a hit a 2-bit counter indexed by the address
 *   XOR 16 bits of global history (the parts' global scheme is not
 *   documented; gshare is the model's choice), the static prediction
 *   while that counter is untrained. Indirect branches predict
 *   the BTB's last target; returns a 16-entry return stack (UNVERIFIED
 *   size). Prescott's changed static predictor (backward taken only over a
 *   short distance) gives no threshold in any source in reach and is not
 *   modelled. The penalty is 30 clocks: [CSAPP]'s (31 - 16) x 2 for a
 *   branch mispredicted half the time, above [AF]'s floor of 24; the same
 *   on both families (no Prescott figure in reach; its longer pipeline
 *   would make it larger, never smaller).
 */
#include "pmu/model/p4_core.h"
#include "pmu/model/p4_mem.h"
#include "pmu/model/p4_tc.h"

#define S(c)		((uint16_t)((c) * 6))		/* whole clocks in sixths */
#define R(u, l)		{ .uops = (u), .lat = (l) }

static const struct p4_core_part p4_core_northwood = {
	.name = "Northwood-class (0F_0x-0F_2x)",
	.row = {
		[P4_U_OTHER] = R(1, 3),		[P4_U_ALU] = R(1, 3),
		[P4_U_ALU_CARRY] = R(1, S(7)),	[P4_U_SHIFT] = R(1, S(4)),
		[P4_U_SHIFT_CL] = R(1, S(6)),	[P4_U_ROT] = R(1, S(4)),
		[P4_U_LEA_SCALED] = R(1, S(4)),	[P4_U_IMUL] = R(1, S(15)),
		[P4_U_MUL] = R(2, S(18)),	[P4_U_DIV] = R(4, S(57)),
		[P4_U_CMOV] = R(3, 37),		[P4_U_LOAD] = R(0, 0),
		[P4_U_STORE] = R(0, 0),		[P4_U_BRANCH] = R(1, 0),
		[P4_U_X87_ADD] = R(1, S(5)),	[P4_U_X87_MUL] = R(1, S(7)),
		[P4_U_X87_DIV] = R(1, S(43)),	[P4_U_X87_MOVE] = R(1, S(1)),
		[P4_U_SSE_ADD] = R(1, S(4)),	[P4_U_SSE_MUL] = R(1, S(6)),
		[P4_U_SSE_DIV] = R(1, S(38)),	[P4_U_SIMD_INT] = R(1, S(2)),
		[P4_U_CPUID] = R(4, S(266)),	[P4_U_RDTSC] = R(4, S(80)),
		[P4_U_MFENCE] = R(4, S(100)),	[P4_U_FENCE] = R(4, S(40)),
		[P4_U_LOCKED] = R(4, S(125)),	[P4_U_FLAGS_SLOW] = R(4, S(48)),
		[P4_U_STRING] = R(1, S(6)),
		[P4_U_REP_MOVS] = R(1, 57),	/* sixths per 64 bytes: 64 / 6.75 */
		[P4_U_REP_STOS] = R(1, 95),	/* 64 / 4.04 */
		[P4_U_REP_LODS] = R(1, S(4)),	/* per element */
		[P4_U_REP_CMPS] = R(1, S(2)),
	},
	.load_lat = { 2, 19, 58, 365 - 26 },
	.page_walk = 26, .mispredict = 30, .btb_entries = 4096, .history_bits = 16,
};

static const struct p4_core_part p4_core_prescott = {
	.name = "Prescott-class (0F_3x, 0F_4x, 0F_6x)",
	.row = {
		[P4_U_OTHER] = R(1, S(1)),	[P4_U_ALU] = R(1, S(1)),
		[P4_U_ALU_CARRY] = R(1, S(10)),	[P4_U_SHIFT] = R(1, S(1)),
		[P4_U_SHIFT_CL] = R(1, S(2)),	[P4_U_ROT] = R(1, S(1)),
		[P4_U_LEA_SCALED] = R(1, S(2)),	[P4_U_IMUL] = R(1, S(10)),
		[P4_U_MUL] = R(2, S(13)),	[P4_U_DIV] = R(4, S(76)),
		[P4_U_CMOV] = R(3, 57),		[P4_U_LOAD] = R(0, 0),
		[P4_U_STORE] = R(0, 0),		[P4_U_BRANCH] = R(1, 0),
		[P4_U_X87_ADD] = R(1, S(6)),	[P4_U_X87_MUL] = R(1, S(8)),
		[P4_U_X87_DIV] = R(1, S(45)),	[P4_U_X87_MOVE] = R(1, S(1)),
		[P4_U_SSE_ADD] = R(1, S(5)),	[P4_U_SSE_MUL] = R(1, S(7)),
		[P4_U_SSE_DIV] = R(1, S(40)),	[P4_U_SIMD_INT] = R(1, S(2)),
		[P4_U_CPUID] = R(4, S(340)),	[P4_U_RDTSC] = R(4, S(102)),
		[P4_U_MFENCE] = R(4, S(124)),	[P4_U_FENCE] = R(4, S(54)),
		[P4_U_LOCKED] = R(4, S(89)),	[P4_U_FLAGS_SLOW] = R(4, S(54)),
		[P4_U_STRING] = R(1, S(8)),
		[P4_U_REP_MOVS] = R(1, 62),	/* 64 / 6.2 */
		[P4_U_REP_STOS] = R(1, 115),	/* 64 / 3.33 */
		[P4_U_REP_LODS] = R(1, S(4)),
		[P4_U_REP_CMPS] = R(1, S(2)),
	},
	.load_lat = { 4, 28, 71, 392 - 17 },
	.page_walk = 17, .mispredict = 30, .btb_entries = 4096, .history_bits = 16,
};

const struct p4_core_part *p4_core_part_for(const struct p4_sig *sig)
{
	return sig->model <= 2 ? &p4_core_northwood : &p4_core_prescott;
}

void p4_core_init(struct p4_core *c, const struct p4_core_part *p)
{
	*c = (struct p4_core){ .p = p };
	c->ready[P4_R_NONE] = 0;
}

/* Predict the branch of *in and learn its outcome; true when it was mispredicted. */
bool p4_core_branch(struct p4_core *c, unsigned kind, bool taken, bool backward, uint64_t at,
		    uint64_t target, uint64_t next)
{
	const struct p4_core_part *p = c->p;
	uint32_t mask = p->btb_entries - 1u, rip = (uint32_t)at;
	uint32_t i = (rip ^ (rip >> 12)) & mask, tag = rip + 1u;
	bool hit = c->btb_tag[i] == tag, mis = false;

	switch (kind) {
	case P4_BR_COND: {
		uint32_t k = (rip ^ c->ghist) & mask;
		uint8_t *ctr = &c->pht[k];
		bool stat = backward;
		bool pred = hit && *ctr ? *ctr >= 3 : stat;

		mis = pred != taken;
		if (!*ctr)		/* untrained: starts weak, on the side it went */
			*ctr = taken ? 3 : 2;
		else if (taken && *ctr < 4)
			(*ctr)++;
		else if (!taken && *ctr > 1)
			(*ctr)--;
		c->ghist = ((c->ghist << 1) | taken) & ((1u << p->history_bits) - 1u);
		break;
	}
	case P4_BR_CALL:
		c->rsb[c->rsb_top++ % P4_CORE_RSB] = (uint32_t)next;
		break;
	case P4_BR_CALL_INDIRECT:
		mis = !hit || c->btb_target[i] != (uint32_t)target;
		c->rsb[c->rsb_top++ % P4_CORE_RSB] = (uint32_t)next;
		break;
	case P4_BR_INDIRECT:
		mis = !hit || c->btb_target[i] != (uint32_t)target;
		break;
	case P4_BR_RETURN:
		c->rsb_top--;
		mis = c->rsb[c->rsb_top % P4_CORE_RSB] != (uint32_t)target;
		break;
	default:		/* direct jumps: the decoder has the target; int, iret: not predicted */
		return false;
	}
	c->btb_tag[i] = tag;
	c->btb_target[i] = (uint32_t)target;
	return mis;
}

/* Clocks of a REP string of iters elements of size bytes, in sixths. */
static uint64_t core_rep_time(const struct p4_core_row *r, unsigned cls, uint32_t iters, unsigned size)
{
	if (cls == P4_U_REP_MOVS || cls == P4_U_REP_STOS)
		return ((uint64_t)iters * size * r->lat + 63u) / 64u;
	return (uint64_t)iters * r->lat;
}

/*
 * The issue of an instruction the front end builds (p4_tc.h's BUILD or
 * MISS): the single decoder takes one instruction a clock
 * ([OPT] 1, "Decoder"), and a trace cache miss first waits for the code:
 * the load-to-use latency of the level the fetch found it at, L2 at the
 * nearest (the TC's misses are served from L2, [OPT] 1). A built
 * instruction whose fetch reached L3 or memory waits for that level too.
 * A REP string's fetch (fetch_level 0xff) has its wait in its penalty.
 */
static uint64_t core_build(struct p4_core *c, const struct p4_core_in *in, uint64_t issue)
{
	const struct p4_core_part *p = c->p;
	uint8_t lvl = in->fetch_level;

	issue = p4_core_max(issue, c->decode_free);
	if (lvl <= P4_LVL_MEM && (in->tc == P4_TC_MISS || lvl >= P4_LVL_L3))
		issue += (uint64_t)p->load_lat[lvl >= P4_LVL_L2 ? lvl : P4_LVL_L2] * P4_CORE_SIXTHS;
	c->decode_free = issue + P4_CORE_SIXTHS;
	return issue;
}

void p4_core_step(struct p4_core *c, const struct p4_core_in *in, struct p4_core_out *out)
{
	const struct p4_core_part *p = c->p;
	const struct p4_insn *x = in->insn;
	const struct p4_core_row *r = &p->row[x->cls];
	uint64_t *ready = c->ready, start, lat = r->lat;
	uint32_t uops = r->uops + in->loads + 2u * in->stores, width = uops;
	uint64_t issue = p4_core_max(c->front, c->rob[c->rob_i]);

	if (x->flags & P4_IF_SERIAL)
		issue = p4_core_max(issue, c->retire);
	if (in->tc == P4_TC_NONE && (in->fetch_level == P4_LVL_L3 || in->fetch_level == P4_LVL_MEM))
		issue += (uint64_t)p->load_lat[in->fetch_level] * P4_CORE_SIXTHS;	/* no TC: as a build */
	else if (in->tc >= P4_TC_BUILD)	/* built (p4_tc.h): decoded, one instruction a clock */
		issue = core_build(c, in, issue);
	start = p4_core_max(p4_core_max(issue, ready[x->src[0]]), ready[x->src[1]]);
	if (x->flags & P4_IF_DST_READ)
		start = p4_core_max(start, ready[x->dst]);
	if (x->flags & P4_IF_FLAGS_IN)
		start = p4_core_max(start, ready[P4_R_FLAGS]);
	if (in->load_level <= P4_LVL_MEM) {
		uint64_t addr = p4_core_max(p4_core_max(issue, ready[x->addr[0]]), ready[x->addr[1]]);

		start = p4_core_max(start, addr + (uint64_t)(p->load_lat[in->load_level] +
							     in->walks * p->page_walk) * P4_CORE_SIXTHS);
	} else {
		start += (uint64_t)in->walks * p->page_walk * P4_CORE_SIXTHS;
	}
	start = p4_core_max(start, in->data_ready);	/* the store buffer's forward or conflict */
	if (x->flags & P4_IF_REP) {	/* its rate, not its uops, bounds a REP string */
		lat = core_rep_time(r, x->cls, in->iters, in->size) + in->penalty * P4_CORE_SIXTHS;
		width = 1;
	}
	if (x->flags & P4_IF_DIVIDER) {
		start = p4_core_max(start, c->divider_free);
		c->divider_free = start + lat;
	}
	p4_core_finish(c, x, issue, start, lat, uops, width, out);
	if (in->clear)		/* the machine clears at its retirement: the front end starts over */
		c->front = p4_core_max(c->front, c->retire + (uint64_t)p4_core_clear_clocks(c) *
								 P4_CORE_SIXTHS);
}

/*
 * Microcode memory operations of REP strings, as the tagged load and store
 * events count them on a Pentium D ([WD] make_summary.c, static/mov_graph
 * results.movsb): REP MOVS of n bytes n = 0-3: 3 loads; 4-8: 8; 9-63: n;
 * n >= 64: (n / 64) * 4 + n mod 64 - the byte sweep; the same count of
 * stores (16 KiB moves 1,024 of each for every element size, which the
 * formula gives), the tail counted in elements for wider moves (a reading
 * of ours: results.movsw/movsl/movsq were not read). REP STOS forward: one
 * store per 16 bytes (rounded up), backward one per element; REP LODS and
 * REP SCAS one load per element; REP CMPS two.
 */
void p4_core_rep_tags(char kind, uint32_t iters, unsigned size, bool backward, unsigned *loads,
		      unsigned *stores)
{
	uint64_t n = (uint64_t)iters * size, m;

	*loads = *stores = 0;
	switch (kind) {
	case 'm':
		if (iters == 0)
			return;
		if (n < 4)
			m = 3;
		else if (n <= 8)
			m = 8;
		else if (n < 64)
			m = n / size;
		else
			m = (n / 64) * 4 + (n % 64) / size;
		*loads = *stores = (unsigned)m;
		return;
	case 's':
		*stores = backward ? iters : (unsigned)((n + 15) / 16);
		return;
	case 'c':
		*loads = 2u * iters;
		return;
	default:		/* lods, scas */
		*loads = iters;
		return;
	}
}
