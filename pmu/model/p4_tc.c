/*
 * p4_tc.c - the execution trace cache, as a deterministic model (p4_tc.h).
 *
 * Sources:
 *  [OPT]  IA-32 Intel Architecture Optimization Reference Manual (248966),
 *         chapter 1, "Execution Trace Cache": the TC "can hold up to 12K
 *         uops and can deliver up to three uops per cycle"; "Decoder": a
 *         single decoder, "at the maximum rate of one instruction per
 *         clock"; complex instructions enlist the microcode ROM. Table 1-1
 *         gives the trace cache as 12K uops, 8 ways, on every model it
 *         covers (0-4, 6): one geometry for all parts.
 *  [SMC]  SDM Vol. 3A 11.6 "Self-Modifying Code": on the Pentium 4 and
 *         Xeon, "a write or a snoop of an instruction in a code segment,
 *         where the target instruction is already decoded and resident in
 *         the trace cache, invalidates the entire trace cache".
 *
 * Model decisions (no source in reach settles them):
 * - A trace line holds 6 uop slots: the TC delivers 3 uops a clock [OPT],
 *   read as one 6-uop line every two clocks (UNVERIFIED: no source in
 *   reach states the line size). 12K uops are then 2048 lines, 256 sets
 *   of 8 ways, on every part family (Prescott's changes to the trace
 *   cache, which no source in reach quantifies, are not modelled).
 * - A line holds contiguous instructions, in program order, up to 6 uop
 *   slots and 6 instructions, and ends after a taken branch. Real traces
 *   go on along the predicted path; ending at a taken branch leaves lines
 *   part empty, so the model holds less code than a part does - the
 *   harder reading. An instruction's slots are its uops (p4_core.c's:
 *   one per operation, one per load, two per store; more than 6 take a
 *   line alone); a microcode-ROM instruction takes one slot (the TC holds
 *   a pointer into the ROM, [OPT] "Microcode ROM"). A line never spans
 *   more than 255 bytes of code.
 * - Lines are found by the linear address of their first instruction
 *   (their head): set = bits 6-13 of the head, LRU within the set. One
 *   lookup per new line: the first instruction after a line's last, or
 *   after the stream left the line's path (a branch that went the other
 *   way, an interrupt). Each lookup that misses is one TC miss and starts
 *   a line; the instructions after it are built into that line (decoded
 *   one a clock from L2, p4_core.c) until it is full or ends, then the
 *   next lookup. The LPs share the lines (the thread bits real entries
 *   carry are not modelled), each LP with its own place in them.
 * - Self-modifying code: a store into bytes a line holds flushes the whole
 *   TC [SMC]. The check is by linear address (the parts check physical
 *   addresses; a store through another mapping of the code is missed).
 *   A store into code the TC does not hold (never executed, or executed
 *   before the last flush) changes nothing.
 */
#include "pmu/model/p4_tc.h"

#define TC_SUB_MASK	(P4_TC_SUBS - 1u)

static unsigned tc_set(uint64_t head)
{
	return (unsigned)(head >> P4_TC_SET_SHIFT) & (P4_TC_SETS - 1u);
}

static uint16_t *tc_sub(struct p4_tc *tc, uint64_t addr)
{
	return &tc->sub[(addr >> P4_TC_SUB_SHIFT) & TC_SUB_MASK];
}

void p4_tc_flush(struct p4_tc *tc)
{
	for (unsigned i = 0; i < P4_TC_LINES; i++)
		tc->line[i].n = 0;
	for (unsigned i = 0; i < P4_TC_SUBS; i++)
		tc->sub[i] = 0;
	for (unsigned i = 0; i < P4_TC_NLP; i++)
		tc->lp[i] = (struct p4_tc_cursor){ 0 };
	tc->clock = 0;
}

/* The filter's counts for the granules of head .. head + bytes (at most two: bytes < 1 KB). */
static void tc_sub_add(struct p4_tc *tc, uint64_t head, unsigned bytes, int d)
{
	uint64_t last = head + (bytes ? bytes - 1u : 0);

	*tc_sub(tc, head) += (uint16_t)d;
	if ((last >> P4_TC_SUB_SHIFT) != (head >> P4_TC_SUB_SHIFT))
		*tc_sub(tc, last) += (uint16_t)d;
}

/* A line's code grew from old to new bytes: count a granule it reaches for the first time. */
static void tc_sub_grow(struct p4_tc *tc, const struct p4_tc_line *l, unsigned old)
{
	uint64_t a = l->head + old - 1u, b = l->head + l->bytes - 1u;

	if ((a >> P4_TC_SUB_SHIFT) != (b >> P4_TC_SUB_SHIFT))
		(*tc_sub(tc, b))++;
}

static struct p4_tc_line *tc_lookup(struct p4_tc *tc, const struct p4_tc_line *from, uint64_t rip)
{
	struct p4_tc_line *w;

	if (from && from->next) {		/* the line that followed last time, if still there */
		w = from->next;
		if (w->n && w->head == rip)
			return w;
	}
	w = &tc->line[tc_set(rip) * P4_TC_WAYS];
	for (unsigned i = 0; i < P4_TC_WAYS; i++)
		if (w[i].n && w[i].head == rip)
			return &w[i];
	return 0;
}

/* The way a new line at rip takes: an empty one, else the least recently used. */
static struct p4_tc_line *tc_victim(struct p4_tc *tc, uint64_t rip)
{
	struct p4_tc_line *w = &tc->line[tc_set(rip) * P4_TC_WAYS], *v = w;

	for (unsigned i = 0; i < P4_TC_WAYS; i++) {
		if (!w[i].n)
			return &w[i];
		if (w[i].stamp < v->stamp)
			v = &w[i];
	}
	tc_sub_add(tc, v->head, v->bytes, -1);
	for (unsigned i = 0; i < P4_TC_NLP; i++)
		if (tc->lp[i].line == v)
			tc->lp[i] = (struct p4_tc_cursor){ 0 };
	v->n = 0;
	return v;
}

enum p4_tc_outcome p4_tc_fetch(struct p4_tc *tc, unsigned lp, uint64_t rip, unsigned len,
			       unsigned slots, bool ends)
{
	struct p4_tc_cursor *c = &tc->lp[lp & (P4_TC_NLP - 1u)];
	struct p4_tc_line *l = c->line, *hit;

	slots = slots < 1u ? 1u : slots > P4_TC_LINE_UOPS ? P4_TC_LINE_UOPS : slots;
	if (l && c->build && !l->closed && l->slots + slots <= P4_TC_LINE_UOPS &&
	    rip == l->head + l->bytes && l->bytes + len <= P4_TC_LINE_BYTES) {
		unsigned old = l->bytes;

		l->n++;
		l->slots = (uint8_t)(l->slots + slots);
		l->bytes = (uint8_t)(old + len);
		l->closed = ends || l->slots == P4_TC_LINE_UOPS || l->n == P4_TC_LINE_UOPS;
		tc_sub_grow(tc, l, old);
		return P4_TC_BUILD;
	}
	if (l && c->build)
		l->closed = 1;			/* the stream left it: nothing more goes in */
	hit = tc_lookup(tc, l, rip);
	if (hit) {
		hit->stamp = ++tc->clock;
		if (l)
			l->next = hit;
		*c = (struct p4_tc_cursor){ .line = hit, .expect = rip + len, .end = rip + hit->bytes };
		return P4_TC_DELIVER;
	}
	hit = tc_victim(tc, rip);
	l = c->line;				/* tc_victim may have taken the LP's own line */
	len = len > P4_TC_LINE_BYTES ? P4_TC_LINE_BYTES : len;
	*hit = (struct p4_tc_line){
		.head = rip, .stamp = ++tc->clock, .n = 1, .slots = (uint8_t)slots,
		.bytes = (uint8_t)len, .closed = ends || slots == P4_TC_LINE_UOPS,
	};
	tc_sub_add(tc, rip, hit->bytes, +1);
	if (l)
		l->next = hit;
	*c = (struct p4_tc_cursor){ .line = hit, .expect = 1, .build = true };
	return P4_TC_MISS;
}

bool p4_tc_store_slow(struct p4_tc *tc, uint64_t addr, uint32_t size)
{
	uint64_t last = addr + size - 1u;
	uint64_t first = addr > P4_TC_LINE_BYTES ? addr - P4_TC_LINE_BYTES : 0;
	uint64_t blocks = (last >> P4_TC_SET_SHIFT) - (first >> P4_TC_SET_SHIFT) + 1u;

	/* a line that holds a byte of the store has its head at most 255 bytes before it */
	for (uint64_t b = 0; b < blocks && b < P4_TC_SETS; b++) {
		const struct p4_tc_line *w =
			&tc->line[tc_set(first + (b << P4_TC_SET_SHIFT)) * P4_TC_WAYS];

		for (unsigned i = 0; i < P4_TC_WAYS; i++)
			if (w[i].n && w[i].head <= last && w[i].head + w[i].bytes > addr) {
				p4_tc_flush(tc);
				return true;
			}
	}
	return false;
}

unsigned p4_tc_lines(const struct p4_tc *tc)
{
	unsigned n = 0;

	for (unsigned i = 0; i < P4_TC_LINES; i++)
		n += tc->line[i].n != 0;
	return n;
}
