/*
 * p4_core.h - a timing model of the NetBurst core: uops, latencies,
 * register dependencies, the branch predictor, and the counting quirks
 * of real parts, per part family (p4_core.c cites every figure).
 *
 * The step engine's decoder (arch/x86/insn.c) describes each instruction
 * once as a struct p4_insn: its uop class, the registers it reads and
 * writes, its address registers and its quirks. The memory model
 * (p4_mem.c) says where its loads were found. p4_core_step() turns both,
 * with the branch outcome, into the instruction's clockticks, its uops
 * and whether its branch was mispredicted: one step of data, one way.
 *
 * Pure: no hardware, compiled on the host for tests/host/test_core.c.
 */
#ifndef NBPROF_PMU_MODEL_P4_CORE_H
#define NBPROF_PMU_MODEL_P4_CORE_H

#include <stdbool.h>
#include <stdint.h>

#include "pmu/p4_caps.h"

/* Uop classes: each a row of the part family's table (p4_core.c). */
enum p4_uclass {
	P4_U_OTHER,		/* not classified: one simple uop, as an ALU op */
	P4_U_ALU,		/* add sub and or xor cmp test inc dec neg not mov-reg lea-simple */
	P4_U_ALU_CARRY,		/* adc sbb */
	P4_U_SHIFT,		/* shl shr sar by 1 or imm8 */
	P4_U_SHIFT_CL,		/* shifts and rotates by CL */
	P4_U_ROT,		/* rol ror by 1 or imm8 */
	P4_U_LEA_SCALED,	/* lea with an index register */
	P4_U_IMUL,		/* imul r, r/m (and imm forms) */
	P4_U_MUL,		/* mul/imul r/m: EDX:EAX */
	P4_U_DIV,		/* div idiv */
	P4_U_CMOV,
	P4_U_LOAD,		/* mov r, m; pop; movzx/movsx from memory */
	P4_U_STORE,		/* mov m, r; push */
	P4_U_BRANCH,		/* jcc jmp call ret */
	P4_U_X87_ADD,		/* fadd fsub fcom ... */
	P4_U_X87_MUL,
	P4_U_X87_DIV,		/* fdiv fsqrt */
	P4_U_X87_MOVE,		/* fld fst fxch fchs ... */
	P4_U_SSE_ADD,		/* addsd addss addpd subsd ... cmpsd maxsd */
	P4_U_SSE_MUL,
	P4_U_SSE_DIV,		/* divsd sqrtsd ... */
	P4_U_SIMD_INT,		/* MMX/SSE2 integer and logic ops, SIMD moves */
	P4_U_CPUID,
	P4_U_RDTSC,
	P4_U_MFENCE,
	P4_U_FENCE,		/* lfence sfence */
	P4_U_LOCKED,		/* a LOCK prefix, xchg with memory */
	P4_U_FLAGS_SLOW,	/* popf cld std */
	P4_U_STRING,		/* movs stos lods cmps scas without REP */
	P4_U_REP_MOVS,		/* REP classes last: their time depends on the length */
	P4_U_REP_STOS,
	P4_U_REP_LODS,		/* and REP SCAS */
	P4_U_REP_CMPS,
	P4_U_NCLASS
};

/*
 * Registers of the scoreboard: none (always ready, so that a zeroed
 * struct p4_insn reads and writes nothing), the 16 general registers
 * (enum insn_reg order from P4_R_GPR), the flags, the x87 stack as one
 * register (a chain on ST(0) is a chain), XMM0-15 and MM0-7.
 */
enum {
	P4_R_NONE = 0,
	P4_R_GPR = 1,
	P4_R_FLAGS = 17,
	P4_R_ST = 18,
	P4_R_XMM = 19,
	P4_R_MM = 35,
	P4_R_NREGS = 43
};

/* struct p4_insn flags */
#define P4_IF_DST_READ		0x01u	/* dst is also a source (add r, r) */
#define P4_IF_FLAGS_IN		0x02u	/* reads the flags (jcc, adc, cmov) */
#define P4_IF_FLAGS_OUT		0x04u	/* writes the flags */
#define P4_IF_RETIRES_TWO	0x08u	/* instr_retired counts it twice (p4_core.c, quirks) */
#define P4_IF_SERIAL		0x10u	/* waits for everything older to complete */
#define P4_IF_BACKWARD		0x20u	/* a relative branch to a lower address */
#define P4_IF_DIVIDER		0x40u	/* runs on a unit that is not pipelined (div, fdiv, divsd...) */
#define P4_IF_REP		0x80u	/* a REP string: timed by its length */
#define P4_IF_SLOW		(P4_IF_DST_READ | P4_IF_FLAGS_IN | P4_IF_SERIAL | P4_IF_DIVIDER | P4_IF_REP)

/* One instruction as the decoder sees it (arch/x86/insn.c fills it). */
struct p4_insn {
	uint8_t cls;			/* enum p4_uclass */
	uint8_t flags;			/* P4_IF_* */
	uint8_t dst;			/* register written, or P4_R_NONE */
	uint8_t src[2];			/* registers read, or P4_R_NONE */
	uint8_t addr[2];		/* base and index of a memory operand, or P4_R_NONE */
	uint8_t uc_loads, uc_stores;	/* microcode memory operations tagging counts, 0: the operands' */
	uint8_t nt;			/* a non-temporal store (MOVNTI, MOVNTPS...): to the WC buffers */
};

/* A zeroed struct p4_insn is an instruction the decoder did not describe: one simple uop. */

/* One uop class of a part family: uops and latency (sixths of a clock, so that 0.5 is exact). */
struct p4_core_row {
	uint8_t uops;
	uint16_t lat;			/* sixths of a core clock */
};

#define P4_CORE_SIXTHS		6u	/* time unit per clock */

/* A part family's figures (p4_core.c). */
struct p4_core_part {
	const char *name;		/* "Northwood-class", "Prescott-class" */
	struct p4_core_row row[P4_U_NCLASS];
	uint16_t load_lat[4];		/* load-to-use by enum p4_mem_level (L1 L2 L3 memory), clocks */
	uint16_t page_walk;		/* clocks per DTLB/ITLB miss */
	uint16_t mispredict;		/* clocks from a mispredicted branch's resolution */
	uint16_t btb_entries;		/* power of two */
	uint8_t history_bits;		/* global history length */
};

#define P4_CORE_ROB		32u	/* instructions in flight (power of two) */
#define P4_CORE_BTB_MAX		4096u

enum p4_core_branch {
	P4_BR_NONE,
	P4_BR_COND,
	P4_BR_DIRECT,			/* jmp: the decoder has the target */
	P4_BR_CALL,			/* direct call: pushes the return stack */
	P4_BR_INDIRECT,			/* jmp through a register or memory: the BTB's target */
	P4_BR_CALL_INDIRECT,
	P4_BR_RETURN,			/* predicted by the return stack */
	P4_BR_OTHER,			/* int, iret, syscall, loop: not predicted, never mispredicted */
};

#define P4_CORE_RSB		16u	/* return stack entries */

struct p4_core {
	const struct p4_core_part *p;
	uint64_t ready[P4_R_NREGS];	/* when each register's value is ready (sixths) */
	uint64_t front;			/* when the next instruction may issue */
	uint64_t retire;		/* when the last instruction retired */
	uint64_t clocks;		/* whole clocks handed out: retire / 6, rounded down */
	uint64_t divider_free;
	uint64_t decode_free;		/* when the decoder takes its next instruction (p4_tc.h builds) */
	uint64_t rob[P4_CORE_ROB];	/* retire times of the last P4_CORE_ROB instructions */
	unsigned rob_i;
	uint32_t ghist;
	uint32_t btb_tag[P4_CORE_BTB_MAX];	/* rip + 1 of the branch held, 0: empty */
	uint32_t btb_target[P4_CORE_BTB_MAX];
	uint8_t pht[P4_CORE_BTB_MAX];	/* 2-bit counters 1-4 (0: untrained), by rip ^ history */
	uint32_t rsb[P4_CORE_RSB];	/* return stack */
	uint32_t rsb_top;
};

/* Where the instruction's loads were found, and what else the memory model says. */
struct p4_core_in {
	const struct p4_insn *insn;
	uint8_t load_level;		/* deepest level a load reached (enum p4_mem_level), or 0xff */
	uint32_t walks;			/* page walks of its operands and fetch */
	uint8_t fetch_level;		/* where the fetch was found (0xff: not fetched) */
	bool slow;			/* a load, a walk or a fetch from L3 or memory */
	uint32_t iters;			/* REP iterations (1 otherwise) */
	uint16_t size;			/* a REP string's element size */
	uint32_t loads, stores;		/* memory operands accessed (all iterations) */
	uint64_t penalty;		/* a REP string's miss penalties (clocks, p4_cost.c's) */
	uint64_t data_ready;		/* the loads' data no sooner (sixths; the store buffer's, p4_sbuf.c) */
	uint8_t tc;			/* enum p4_tc_outcome (p4_tc.h); 0: no trace cache modelled */
	bool clear;			/* its store wrote into code the trace cache held: a machine clear */
};

struct p4_core_out {
	uint32_t cycles;		/* clockticks this instruction adds */
	uint32_t uops;
	uint64_t done;			/* when its result is ready (sixths) */
};

/* The family for a signature: Northwood-class (models 0-2) or Prescott-class (3, 4, 6). */
const struct p4_core_part *p4_core_part_for(const struct p4_sig *sig);

/* Empty state for part p (all registers ready, empty predictor). */
void p4_core_init(struct p4_core *c, const struct p4_core_part *p);

/* Predict a branch of kind (enum p4_core_branch) at `at` and learn its outcome; true: mispredicted. */
bool p4_core_branch(struct p4_core *c, unsigned kind, bool taken, bool backward, uint64_t at,
		    uint64_t target, uint64_t next);

static inline uint64_t p4_core_max(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* Issue, the result's readiness, retirement: what every step does, from start and lat. */
static inline __attribute__((always_inline)) void p4_core_finish(struct p4_core *c,
								 const struct p4_insn *x,
								 uint64_t issue, uint64_t start,
								 uint64_t lat, uint32_t uops,
								 uint32_t width,
								 struct p4_core_out *out)
{
	uint64_t *ready = c->ready, done = start + lat, retired;

	ready[x->dst] = done;		/* P4_R_NONE's slot is written and never read as a source... */
	ready[P4_R_NONE] = 0;		/* ...but kept at 0 */
	if (x->flags & P4_IF_FLAGS_OUT)
		ready[P4_R_FLAGS] = done;
	retired = p4_core_max(c->retire + 2u * width, done);
	c->front = issue + 2u * width;
	out->done = done;
	out->cycles = (uint32_t)(retired / P4_CORE_SIXTHS - c->clocks);
	c->clocks += out->cycles;
	out->uops = uops ? uops : 1;
	c->retire = retired;
	c->rob[c->rob_i] = retired;
	c->rob_i = (c->rob_i + 1u) % P4_CORE_ROB;
}

/*
 * One retired instruction (p4_core.c tells the model); out->done is when
 * its result is ready. p4_core_fast() is the same for an instruction that
 * loaded nothing, walked no page, was fetched from L2 and has none of the
 * flags in P4_IF_SLOW (p4_core_needs_slow false): inline, the step feed's
 * common case. The branch is predicted apart (p4_core_predict).
 */
void p4_core_step(struct p4_core *c, const struct p4_core_in *in, struct p4_core_out *out);

/* When the next instruction would issue (serial: after everything older retired). */
static inline uint64_t p4_core_issue(const struct p4_core *c, const struct p4_insn *x)
{
	uint64_t issue = p4_core_max(c->front, c->rob[c->rob_i]);

	return (x->flags & P4_IF_SERIAL) ? p4_core_max(issue, c->retire) : issue;
}

static inline __attribute__((always_inline)) void p4_core_fast(struct p4_core *c,
							       const struct p4_insn *x,
							       uint32_t stores,
							       struct p4_core_out *out)
{
	const struct p4_core_row *r = &c->p->row[x->cls];
	uint32_t uops = r->uops + 2u * stores;
	uint64_t issue = p4_core_max(c->front, c->rob[c->rob_i]);
	uint64_t start = p4_core_max(p4_core_max(issue, c->ready[x->src[0]]), c->ready[x->src[1]]);

	p4_core_finish(c, x, issue, start, r->lat, uops, uops, out);
}

/*
 * Is it delivered from the microcode ROM (tc_ms_xfer, uop_queue_writes
 * FROM_ROM)? Instructions of more than four uops come from the ROM ([OPT]
 * 1, "Microcode ROM"); the model takes its long-flow classes (CPUID and
 * after in enum p4_uclass: serializing, locked, string, fence, POPF) as
 * those, the others from the trace cache.
 */
static inline bool p4_core_microcoded(const struct p4_insn *x)
{
	return x->cls >= P4_U_CPUID;
}

/* Does a step need p4_core_step rather than p4_core_fast? (fetch_level 2, 3: L3, memory) */
static inline bool p4_core_needs_slow(const struct p4_insn *x, uint32_t loads, uint32_t walks,
				      uint8_t fetch_level)
{
	return (loads | walks) != 0 || (uint8_t)(fetch_level - 2u) < 2u || (x->flags & P4_IF_SLOW);
}

/* Clocks a machine clear holds the front end after the instruction that caused it retired. */
static inline unsigned p4_core_clear_clocks(const struct p4_core *c)
{
	return c->p->mispredict;
}

/*
 * The branch of the instruction p4_core_step just took (kind: enum
 * p4_core_branch, not P4_BR_NONE): predicted and learnt; a mispredict holds
 * the front end until the branch resolved (done) and the penalty passed.
 * True when mispredicted.
 */
static inline bool p4_core_predict(struct p4_core *c, const struct p4_insn *x, unsigned kind,
				   bool taken, uint64_t at, uint64_t target, uint64_t next,
				   uint64_t done)
{
	if (!p4_core_branch(c, kind, taken, (x->flags & P4_IF_BACKWARD) != 0, at, target, next))
		return false;
	c->front = p4_core_max(c->front, done + (uint64_t)c->p->mispredict * P4_CORE_SIXTHS);
	return true;
}

/*
 * The loads the tagged load event counts for one page fault on a Pentium D
 * (p4_core.c [WD]: its microcode's memory operations, 5 a fault), though
 * the faulting instruction does not retire.
 */
#define P4_CORE_PF_LOADS	5u

/*
 * Front-end tagged loads and stores of a REP string instruction of `iters`
 * elements of `size` bytes (real parts count microcode operations, p4_core.c).
 * kind: 'm' movs, 's' stos, 'l' lods, 'c' cmps, 'a' scas; backward: DF set.
 */
void p4_core_rep_tags(char kind, uint32_t iters, unsigned size, bool backward, unsigned *loads,
		      unsigned *stores);

#endif
