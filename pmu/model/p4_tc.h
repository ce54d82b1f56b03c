/*
 * p4_tc.h - a model of the NetBurst execution trace cache: which stepped
 * instructions it delivers, which the front end must build (decode from
 * L2), and the stores into code it holds (self-modifying code), which
 * flush it (p4_tc.c cites the figures and says what is a model choice).
 *
 * Use: p4_tc_flush() once (and whenever the memory model is emptied),
 * then per retired instruction p4_tc_deliver() and, when that says no,
 * p4_tc_fetch(); per store p4_tc_store(). The same inputs always give the
 * same outputs; nothing is allocated.
 *
 * Pure: no hardware, compiled on the host for tests/host/test_tc.c.
 */
#ifndef NBPROF_PMU_MODEL_P4_TC_H
#define NBPROF_PMU_MODEL_P4_TC_H

#include <stdbool.h>
#include <stdint.h>

#define P4_TC_UOPS		12288u	/* 12K uops, every part (p4_tc.c) */
#define P4_TC_WAYS		8u
#define P4_TC_LINE_UOPS		6u	/* uop slots of a trace line */
#define P4_TC_LINES		(P4_TC_UOPS / P4_TC_LINE_UOPS)		/* 2048 */
#define P4_TC_SETS		(P4_TC_LINES / P4_TC_WAYS)		/* 256 */
#define P4_TC_SET_SHIFT		6u	/* a line's set: bits 6-13 of its head's address */
#define P4_TC_LINE_BYTES	255u	/* code bytes a line may span (offsets are 8 bits) */
#define P4_TC_NLP		2u
#define P4_TC_SUB_SHIFT		10u	/* the store filter's granule: 1 KB */
#define P4_TC_SUBS		4096u	/* its slots (a 4 MB period, aliases only cost a look) */

/* What the trace cache did with one instruction. */
enum p4_tc_outcome {
	P4_TC_NONE = 0,		/* no trace cache modelled (p4_core.c's older fetch rule) */
	P4_TC_DELIVER,		/* delivered from a line it holds */
	P4_TC_BUILD,		/* decoded from L2 into the line being built */
	P4_TC_MISS,		/* a lookup that missed: a new line is built from here */
};

/* One trace line: up to six uop slots of contiguous instructions (six at most). */
struct p4_tc_line {
	uint64_t head;			/* linear address of its first instruction */
	uint64_t stamp;			/* last use (LRU within the set) */
	struct p4_tc_line *next;	/* the line that followed it last (NULL: none) */
	uint8_t n;			/* instructions; 0: the way is empty */
	uint8_t slots;			/* uop slots used */
	uint8_t bytes;			/* its code: head .. head + bytes */
	uint8_t closed;			/* takes no more instructions */
};

/*
 * Where each LP's instruction stream is in the trace cache. A line's
 * instructions are contiguous, so the one after rip (len bytes) in it is
 * at rip + len, and the line is done when that reaches its end.
 */
struct p4_tc_cursor {
	struct p4_tc_line *line;	/* delivering from or building into, NULL: none */
	uint64_t expect;		/* delivering: where its next instruction is */
	uint64_t end;			/* delivering: head + bytes (expect == end: done) */
	bool build;			/* building line (expect and end then never match) */
};

struct p4_tc {
	struct p4_tc_line line[P4_TC_LINES];	/* set s holds line[s * P4_TC_WAYS ...] */
	struct p4_tc_cursor lp[P4_TC_NLP];
	uint16_t sub[P4_TC_SUBS];	/* lines whose code touches each 1 KB granule (hashed) */
	uint64_t clock;			/* LRU stamps */
};

/* Empty it (both LPs' cursors too): every line invalid. */
void p4_tc_flush(struct p4_tc *tc);

/*
 * The common cases, inline: the instruction at rip (len bytes) is the next
 * one of the line the LP (its cursor c) is delivering from, or, that line done, the first
 * of the line that followed it last time (still held: a lookup would find
 * it, heads are unique). True: delivered (the cursor moves on).
 */
static inline __attribute__((always_inline)) bool p4_tc_deliver(struct p4_tc *tc,
								struct p4_tc_cursor *c,
								uint64_t rip, unsigned len)
{
	uint64_t e = c->expect;
	struct p4_tc_line *l, *nx;

	if (rip == e && e < c->end) {
		c->expect = e + len;
		return true;
	}
	l = c->line;
	if (e != c->end || !l || !(nx = l->next) || !nx->n || nx->head != rip)
		return false;
	nx->stamp = ++tc->clock;
	c->line = nx;
	c->expect = rip + len;
	c->end = rip + nx->bytes;
	return true;
}

/* The cursor of an LP (0, 1). */
static inline struct p4_tc_cursor *p4_tc_cursor(struct p4_tc *tc, unsigned lp)
{
	return &tc->lp[lp & (P4_TC_NLP - 1u)];
}

/*
 * The instruction at rip (len bytes, slots uop slots: 1..6, more are
 * taken as 6) when p4_tc_deliver() said no: appended to the line the LP
 * builds (P4_TC_BUILD), delivered from a line found by a lookup
 * (P4_TC_DELIVER), or a lookup miss that starts a new line (P4_TC_MISS,
 * the LRU way of its set evicted). ends: a taken branch, the line's last.
 */
enum p4_tc_outcome p4_tc_fetch(struct p4_tc *tc, unsigned lp, uint64_t rip, unsigned len,
			       unsigned slots, bool ends);

/*
 * A store of size bytes at addr (size 1..4096). True when it wrote into
 * code a line holds: self-modifying code, the whole trace cache is
 * flushed (SDM Vol. 3A 11.6). Inline: the filter that rules out nearly
 * every store in a few instructions.
 */
bool p4_tc_store_slow(struct p4_tc *tc, uint64_t addr, uint32_t size);

static inline __attribute__((always_inline)) bool p4_tc_store(struct p4_tc *tc, uint64_t addr,
							      uint32_t size)
{
	uint64_t last = addr + size - 1u;

	if (!(tc->sub[(addr >> P4_TC_SUB_SHIFT) & (P4_TC_SUBS - 1u)] |
	      tc->sub[(last >> P4_TC_SUB_SHIFT) & (P4_TC_SUBS - 1u)]) && size <= (1u << P4_TC_SUB_SHIFT))
		return false;
	return p4_tc_store_slow(tc, addr, size);
}

/* Lines holding code (for tests and `pmu`). */
unsigned p4_tc_lines(const struct p4_tc *tc);

#endif
