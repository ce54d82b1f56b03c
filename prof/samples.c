/*
 * samples.c - the per-LP sample ring and the frame-pointer walker.
 *
 * Record layout in the ring (64-bit words):
 *
 *	word 0	 7:0  length in words (5 + nchain); 0 marks padding to the
 *		      end of the ring (a record never wraps around)
 *		15:8  logical processor
 *		23:16 event index
 *		25:24 CPL
 *		31:26 nchain (0..32)
 *		63:32 RFLAGS 31:0 (RFLAGS 63:32 are reserved, SDM Vol. 1 3.4.3.4)
 *	word 1	TSC
 *	word 2	RIP
 *	word 3	RSP
 *	word 4	weight: the events the sample stands for
 *	word 5+	return addresses, innermost first
 *
 * The occupied words are [tail, head) around the ring, `used` of them,
 * padding included. An empty ring restarts at word 0. Appending needs
 * `len` contiguous words at head, or padding to the end plus `len` words
 * at 0; in wrap mode the oldest records are evicted until that fits.
 */
#include "prof/samples.h"
#include "arch/x86/insn.h"

#include "pmu/p4_regs.h"

#define REC_LEN		BITS(7, 0)
#define REC_LP		BITS(15, 8)
#define REC_EVENT	BITS(23, 16)
#define REC_CPL		BITS(25, 24)
#define REC_NCHAIN	BITS(31, 26)
#define REC_RFLAGS	BITS(63, 32)

_Static_assert(SAMPLE_MAX_WORDS <= (REC_LEN >> 0), "record length field too small");
_Static_assert(SAMPLE_MAX_CHAIN <= (REC_NCHAIN >> 26), "nchain field too small");
#define REC_LOW_HALF	BITS(31, 0)
_Static_assert(((REC_LEN | REC_LP | REC_EVENT | REC_CPL | REC_NCHAIN) & ~REC_LOW_HALF) == 0,
	       "store_write builds these fields with field_prep32");

enum { REC_WORD_TSC = 1, REC_WORD_IP, REC_WORD_RSP, REC_WORD_WEIGHT, REC_WORD_CHAIN };

/* Keep the compiler from moving ring accesses across the busy flag. */
static inline void samples_barrier(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

int sample_store_init(struct sample_store *st, void *mem, size_t bytes,
		      enum sample_mode mode, uint8_t lp)
{
	uintptr_t p = (uintptr_t)mem;
	size_t skip = (size_t)((8 - (p & 7)) & 7);

	if (mem == NULL || bytes < skip || (bytes - skip) / 8 < SAMPLE_MAX_WORDS)
		return -1;
	*st = (struct sample_store){
		.buf = (uint64_t *)(p + skip),
		.cap = (bytes - skip) / 8,
		.mode = mode,
		.lp = lp,
	};
	return 0;
}

void sample_store_reset(struct sample_store *st)
{
	*st = (struct sample_store){ .buf = st->buf, .cap = st->cap, .mode = st->mode, .lp = st->lp };
}

size_t sample_record_bytes(unsigned nchain)
{
	if (nchain > SAMPLE_MAX_CHAIN)
		nchain = SAMPLE_MAX_CHAIN;
	return 8 * (SAMPLE_MIN_WORDS + (size_t)nchain);
}

uint64_t sample_store_offered(const struct sample_store *st)
{
	return st->stored + st->dropped + st->nested;
}

/* Words the record (or padding) at pos occupies. */
static size_t store_rec_len(const struct sample_store *st, size_t pos)
{
	size_t len = (size_t)field_get(REC_LEN, st->buf[pos]);

	return len ? len : st->cap - pos;
}

/* Remove the oldest record (wrap mode). */
static void store_evict(struct sample_store *st)
{
	uint64_t w0 = st->buf[st->tail];
	size_t len = store_rec_len(st, st->tail);

	if (field_get(REC_LEN, w0) != 0) {
		st->held--;
		st->overwritten++;
	}
	st->tail += len;
	if (st->tail == st->cap)
		st->tail = 0;
	st->used -= len;
	if (st->used == 0)
		st->head = st->tail = 0;
}

/* Make len contiguous words available at head; false when stop mode is full. */
static bool store_make_room(struct sample_store *st, size_t len)
{
	for (;;) {
		size_t to_end = st->cap - st->head;
		size_t need = to_end >= len ? len : to_end + len;

		if (st->cap - st->used >= need)
			break;
		if (st->mode == SAMPLE_STOP_WHEN_FULL)
			return false;
		store_evict(st);
	}
	if (st->cap - st->head < len) {
		/* Pad to the end; the record starts again at word 0. */
		st->buf[st->head] = 0;
		st->used += st->cap - st->head;
		st->head = 0;
	}
	return true;
}

/* Inline in both paths: the usual one stays a leaf. */
static inline __attribute__((always_inline)) void
store_write(struct sample_store *st, const struct sample *s, unsigned nchain)
{
	uint64_t *w = st->buf + st->head;
	size_t len = SAMPLE_MIN_WORDS + nchain;

	/* The low half's fields in 32-bit arithmetic (field_prep32: below REC_LOW_HALF). */
	w[0] = field_prep(REC_RFLAGS, (uint32_t)s->rflags) |
	       (field_prep32(REC_LEN, (uint32_t)len) | field_prep32(REC_LP, st->lp) |
		field_prep32(REC_EVENT, s->event) | field_prep32(REC_CPL, s->cpl & 3u) |
		field_prep32(REC_NCHAIN, nchain));
	w[REC_WORD_TSC] = s->tsc;
	w[REC_WORD_IP] = s->ip;
	w[REC_WORD_RSP] = s->rsp;
	w[REC_WORD_WEIGHT] = s->weight;
	for (unsigned i = 0; i < nchain; i++)
		w[REC_WORD_CHAIN + i] = s->chain[i];
	st->head += len;
	if (st->head == st->cap)
		st->head = 0;
	st->used += len;
	st->held++;
	st->stored++;
}

/*
 * The rare cases of an append, out of the usual case's straight line: stop
 * mode stopped or full, padding to the end of the ring, evicting in wrap
 * mode. Entered with busy set; leaves it clear.
 */
static __attribute__((noinline)) enum sample_status
store_append_slow(struct sample_store *st, const struct sample *s, unsigned nchain)
{
	enum sample_status ret = SAMPLE_STORED;

	if (st->stopped || !store_make_room(st, SAMPLE_MIN_WORDS + nchain)) {
		st->stopped = true;
		st->dropped++;
		ret = SAMPLE_DROPPED;
	} else {
		store_write(st, s, nchain);
	}
	samples_barrier();
	st->busy = 0;
	return ret;
}

enum sample_status sample_store_append(struct sample_store *st, const struct sample *s)
{
	unsigned nchain = s->nchain > SAMPLE_MAX_CHAIN ? SAMPLE_MAX_CHAIN : s->nchain;
	size_t len = SAMPLE_MIN_WORDS + nchain;

	/*
	 * Only this LP appends here, so a plain flag detects re-entry: an NMI
	 * that lands between the test and the set cannot itself be inside an
	 * append it interrupted, and it leaves busy as it found it.
	 */
	if (st->busy) {
		st->nested++;
		return SAMPLE_NESTED;
	}
	st->busy = 1;
	samples_barrier();
	/*
	 * The usual case stays a leaf: len free words at head before the end
	 * of the ring (store_make_room's first test, no padding, no eviction).
	 */
	if (st->stopped || st->cap - st->head < len || st->cap - st->used < len)
		return store_append_slow(st, s, nchain);
	store_write(st, s, nchain);
	samples_barrier();
	st->busy = 0;
	return SAMPLE_STORED;
}

void sample_iter_init(struct sample_iter *it, const struct sample_store *st)
{
	it->st = st;
	it->pos = st->tail;
	it->left = st->held;
}

bool sample_iter_next(struct sample_iter *it, struct sample *out)
{
	const struct sample_store *st = it->st;
	const uint64_t *w;
	size_t len;

	if (it->left == 0)
		return false;
	if (field_get(REC_LEN, st->buf[it->pos]) == 0)
		it->pos = 0;		/* padding: the record is at the start */
	w = st->buf + it->pos;
	len = (size_t)field_get(REC_LEN, w[0]);
	out->lp = (uint8_t)field_get(REC_LP, w[0]);
	out->event = (uint8_t)field_get(REC_EVENT, w[0]);
	out->cpl = (uint8_t)field_get(REC_CPL, w[0]);
	out->nchain = (uint8_t)field_get(REC_NCHAIN, w[0]);
	out->rflags = field_get(REC_RFLAGS, w[0]);
	out->tsc = w[REC_WORD_TSC];
	out->ip = w[REC_WORD_IP];
	out->rsp = w[REC_WORD_RSP];
	out->weight = w[REC_WORD_WEIGHT];
	for (unsigned i = 0; i < out->nchain; i++)
		out->chain[i] = w[REC_WORD_CHAIN + i];
	it->pos += len;
	if (it->pos == st->cap)
		it->pos = 0;
	it->left--;
	return true;
}

unsigned sample_walk_frames(uint64_t fp, uint64_t *chain, unsigned max,
			    sample_readable_fn readable, void *ctx)
{
	const uint64_t word = sizeof(uintptr_t);
	unsigned n = 0;

	if (max > SAMPLE_MAX_CHAIN)
		max = SAMPLE_MAX_CHAIN;
	while (n < max) {
		const uintptr_t *frame;
		uint64_t next, ret;

		if (fp == 0 || fp % word != 0 || fp > UINT64_MAX - 2 * word ||
		    fp > (uint64_t)UINTPTR_MAX || !readable(ctx, fp, 2 * word))
			break;
		frame = (const uintptr_t *)(uintptr_t)fp;
		next = frame[0];
		ret = frame[1];
		if (ret == 0)
			break;
		chain[n++] = ret;
		/* The caller's frame lies above ours; anything else is garbage or a cycle. */
		if (next <= fp)
			break;
		fp = next;
	}
	return n;
}

/* mov rbp, rsp (89 /r and 8B /r forms), with REX.W in 64-bit code. */
static bool samples_is_mov_fp(const uint8_t *b, uint64_t avail)
{
	unsigned k = 0;

	if (avail >= 1 && b[0] == 0x48)
		k = 1;
	if (avail < k + 2)
		return false;
	return (b[k] == 0x89 && b[k + 1] == 0xe5) || (b[k] == 0x8b && b[k + 1] == 0xec);
}

int sample_prologue_ret(const uint8_t *code, uint64_t avail, uint64_t off)
{
	static const uint8_t endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	uint64_t start = 0;

	if (!code || off >= avail)
		return -1;
	if (code[off] == 0xc3 || code[off] == 0xc2 ||
	    (code[off] == 0xf3 && off + 1 < avail && code[off + 1] == 0xc3))
		return 0;				/* ret: the frame is gone */
	if (avail >= 4 && code[0] == endbr64[0] && code[1] == endbr64[1] &&
	    code[2] == endbr64[2] && code[3] == endbr64[3])
		start = 4;
	if (start >= avail || code[start] != 0x55)	/* push rbp */
		return -1;
	if (off == start)
		return 0;				/* at push rbp: nothing pushed yet */
	if (off == start + 1 && samples_is_mov_fp(code + off, avail - off))
		return (int)sizeof(uintptr_t);		/* RBP pushed, not yet moved */
	return -1;
}

/* One-byte opcodes with a ModRM byte (SDM Vol. 2, Table A-2): bit n of word n / 32. */
static const uint32_t samples_modrm1[8] = {
	0x0f0f0f0f, 0x0f0f0f0f,		/* 00-3F: the ALU r/m forms */
	0,				/* 40-5F: REX, push, pop */
	0x00000a0c,			/* 62, 63, 69, 6B */
	0x0000ffff,			/* 80-8F */
	0,				/* A0-BF */
	0xff0f00f3,			/* C0, C1, C4-C7, D0-D3, D8-DF */
	0xc0c00000,			/* F6, F7, FE, FF */
};

static bool samples_has_modrm1(uint8_t op)
{
	return (samples_modrm1[op / 32] >> (op % 32)) & 1;
}

/*
 * Could the instruction at b (len bytes) change RSP? Conservative: anything
 * that pushes, pops, calls, enters or leaves, and any ModRM form that names
 * RSP as its r/m register or, for the opcodes whose reg field is the
 * destination, as reg. A false "yes" only costs the leaf's caller.
 */
static bool samples_moves_sp(const uint8_t *b, size_t len, bool mode64)
{
	size_t i = 0;
	uint8_t rex = 0, op, m;

	while (i < len && (b[i] == 0x66 || b[i] == 0x67 || b[i] == 0xf0 || b[i] == 0xf2 ||
			   b[i] == 0xf3 || b[i] == 0x2e || b[i] == 0x36 || b[i] == 0x3e ||
			   b[i] == 0x26 || b[i] == 0x64 || b[i] == 0x65))
		i++;
	if (mode64 && i < len && (b[i] & 0xf0) == 0x40)
		rex = b[i++];
	if (i >= len)
		return true;
	op = b[i];
	if ((op >= 0x50 && op <= 0x61) || op == 0x68 || op == 0x6a || op == 0x8f || op == 0x9c ||
	    op == 0x9d || op == 0xc8 || op == 0xc9 || op == 0xe8 || op == 0xcc || op == 0xcd)
		return true;
	if (op == 0x0f) {
		if (i + 1 >= len)
			return true;
		op = b[++i];
		if (op >= 0x80 && op <= 0x8f)		/* Jcc rel32 */
			return false;
		if (op == 0x38 || op == 0x3a)
			i++;
		if (i + 1 >= len)
			return op == 0x0b || op == 0xa0 || op == 0xa1 || op == 0xa8 || op == 0xa9;
		m = b[i + 1];
		return op == 0xa0 || op == 0xa1 || op == 0xa8 || op == 0xa9 ||
		       (!(rex & 4) && ((m >> 3) & 7) == 4) || (!(rex & 1) && (m & 0xc7) == 0xc4);
	}
	if (!samples_has_modrm1(op) || i + 1 >= len)
		return false;
	m = b[i + 1];
	if (op == 0xff && (((m >> 3) & 7) == 2 || ((m >> 3) & 7) == 3 || ((m >> 3) & 7) == 6))
		return true;				/* call, far call, push */
	if (!(rex & 1) && (m & 0xc7) == 0xc4)		/* mod 11, r/m = RSP */
		return true;
	/* reg is the destination: ALU r, r/m (d = 1), MOV/LEA/XCHG/MOVSXD/IMUL */
	if (((op < 0x40 && (op & 7) >= 2 && (op & 7) <= 3) || op == 0x63 || op == 0x69 ||
	     op == 0x6b || op == 0x86 || op == 0x87 || op == 0x8a || op == 0x8b || op == 0x8d) &&
	    !(rex & 4) && ((m >> 3) & 7) == 4)
		return true;
	return false;
}

int sample_leaf_ret(const uint8_t *code, uint64_t off, bool mode64)
{
	uint64_t at = 0;

	if (!code)
		return -1;
	if (off >= 4 && code[0] == 0xf3 && code[1] == 0x0f && code[2] == 0x1e &&
	    (code[3] == 0xfa || code[3] == 0xfb))
		at = 4;					/* endbr64 / endbr32 */
	if (at < off && code[at] == 0x55)
		return -1;				/* a frame function: RBP is its frame */
	while (at < off) {
		size_t n = insn_length(code + at, (size_t)(off - at), mode64);

		if (n == 0 || samples_moves_sp(code + at, n, mode64))
			return -1;
		at += n;
	}
	return at == off ? 0 : -1;
}

unsigned sample_walk_stack(uint64_t rsp, uint64_t fp, int ret_at, uint64_t *chain, unsigned max,
			   sample_readable_fn readable, void *ctx)
{
	const uint64_t word = sizeof(uintptr_t);
	uint64_t at = rsp + (uint64_t)(ret_at < 0 ? 0 : ret_at);
	unsigned n = 0;

	if (max > SAMPLE_MAX_CHAIN)
		max = SAMPLE_MAX_CHAIN;
	if (ret_at >= 0 && max > 0 && at >= rsp && at % word == 0 && at <= (uint64_t)UINTPTR_MAX &&
	    readable(ctx, at, word)) {
		uint64_t ret = *(const uintptr_t *)(uintptr_t)at;

		if (ret != 0)
			chain[n++] = ret;
	}
	return n + sample_walk_frames(fp, chain + n, max - n, readable, ctx);
}

void sample_run_iter_init(struct sample_run_iter *ri, const struct sample_run *run)
{
	ri->run = run;
	ri->store = 0;
	ri->it.left = 0;
}

bool sample_run_iter_next(struct sample_run_iter *ri, struct sample *out)
{
	while (!sample_iter_next(&ri->it, out)) {
		const struct sample_store *st;

		if (ri->store >= ri->run->nstores)
			return false;
		st = ri->run->stores[ri->store++];
		if (st)
			sample_iter_init(&ri->it, st);
	}
	return true;
}

uint64_t sample_weight(const struct sample_run *run, const struct sample *s)
{
	if (s->weight)
		return s->weight;
	return s->event < run->nevents ? run->events[s->event].period : 0;
}

const char *sample_run_comm(const struct sample_run *run, uint8_t lp)
{
	const char *c = lp < 2 ? run->lp_comm[lp] : NULL;

	return c ? c : run->comm;
}

void sample_run_totals(const struct sample_run *run, struct sample_store *sum)
{
	*sum = (struct sample_store){ 0 };
	for (uint32_t i = 0; i < run->nstores; i++) {
		const struct sample_store *st = run->stores[i];

		if (!st)
			continue;
		sum->held += st->held;
		sum->stored += st->stored;
		sum->dropped += st->dropped;
		sum->overwritten += st->overwritten;
		sum->nested += st->nested;
		sum->stopped |= st->stopped;
	}
}
