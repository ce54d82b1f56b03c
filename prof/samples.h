/*
 * samples.h - the sample record and the per-logical-processor sample store.
 *
 * A sample is what the overflow handler saw when a counter overflowed: the
 * TSC, the logical processor, which of the run's events overflowed, the
 * interrupted RIP, CPL, RFLAGS and RSP, and optionally the return addresses
 * found by walking the interrupted code's frame-pointer chain.
 *
 * Each LP owns one store, a ring of 64-bit words over memory the caller
 * hands in (the kernel carves it from free RAM). Records are variable
 * length, 5 words plus one per return address, so a sample without a call
 * chain costs 40 bytes. When the ring is full the store either stops taking
 * samples (SAMPLE_STOP_WHEN_FULL) or overwrites the oldest ones
 * (SAMPLE_WRAP); every sample offered is accounted for:
 *
 *	offered = stored + dropped + nested
 *	stored  = held + overwritten
 *
 * Concurrency: one producer per store, the overflow handler of the store's
 * own LP, which may be an NMI. sample_store_append() takes no lock and
 * finishes in bounded time (at most SAMPLE_MAX_WORDS / SAMPLE_MIN_WORDS + 1
 * evictions). If an append is interrupted by another append on the same LP
 * (an NMI arriving inside a vector-mode PMI handler), the inner one is
 * refused and counted in `nested`, never interleaved. Readers (report,
 * script, dump) look at a store only while its LP no longer appends:
 * recording stopped and that LP's PMI masked, with the usual ordering of
 * the IPI or flag that told the reader so.
 *
 * Portable: compiled freestanding in the kernel and on the host for tests.
 */
#ifndef NBPROF_PROF_SAMPLES_H
#define NBPROF_PROF_SAMPLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SAMPLE_MAX_CHAIN	32	/* return addresses kept per sample */
#define SAMPLE_MIN_WORDS	5	/* a record without call chain */
#define SAMPLE_MAX_WORDS	(SAMPLE_MIN_WORDS + SAMPLE_MAX_CHAIN)
#define SAMPLE_MAX_EVENTS	256	/* event index is one byte */

struct sample {
	uint64_t tsc;
	uint64_t ip;		/* interrupted RIP */
	uint64_t rflags;	/* bits 63:32 are reserved (zero) and not stored */
	uint64_t rsp;
	uint64_t weight;	/* events the sample stands for (0: its event's period) */
	uint8_t lp;		/* logical processor that took the sample */
	uint8_t event;		/* index into the run's events (struct sample_event) */
	uint8_t cpl;		/* 0..3 */
	uint8_t nchain;		/* valid entries in chain[], innermost caller first */
	uint64_t chain[SAMPLE_MAX_CHAIN];	/* return addresses */
};

/*
 * One event of a run: its spec as the user wrote it, and its sampling
 * period. A sample's own weight says how many events it stands for; the
 * period is what was asked for (the PMI comes on the event after the
 * overflow, so a period-P sample usually stands for P + 1 events).
 */
struct sample_event {
	const char *name;
	uint64_t period;
};

enum sample_mode {
	SAMPLE_STOP_WHEN_FULL,	/* keep the first samples, refuse the rest */
	SAMPLE_WRAP,		/* keep the latest samples, overwrite the oldest */
};

enum sample_status {
	SAMPLE_STORED,
	SAMPLE_DROPPED,		/* stop mode and no room: the store has stopped */
	SAMPLE_NESTED,		/* append re-entered on the same LP */
};

struct sample_store {
	uint64_t *buf;
	size_t cap;		/* words in buf */
	size_t head;		/* where the next record goes */
	size_t tail;		/* oldest record */
	size_t used;		/* words occupied, padding included */
	enum sample_mode mode;
	uint8_t lp;
	bool stopped;		/* stop mode: filled up, refuses everything now */
	volatile uint8_t busy;	/* an append is running on this LP */
	uint64_t held;		/* samples in the store now */
	uint64_t stored;	/* samples ever accepted */
	uint64_t dropped;	/* refused because full (stop mode) */
	uint64_t overwritten;	/* accepted, later evicted by newer ones (wrap mode) */
	uint64_t nested;	/* refused because an append was already running */
};

/*
 * Set up a store over mem[0..bytes) for logical processor lp. The memory is
 * used from the first 8-byte boundary. Returns 0, or -1 when the region
 * cannot hold even one record with a full call chain (nothing changed).
 */
int sample_store_init(struct sample_store *st, void *mem, size_t bytes,
		      enum sample_mode mode, uint8_t lp);

/* Forget all samples and counts; keeps memory, mode and LP. */
void sample_store_reset(struct sample_store *st);

/*
 * Append one sample (s->nchain is clamped to SAMPLE_MAX_CHAIN; s->lp is
 * taken from the store). Safe in an NMI handler on the store's own LP.
 */
enum sample_status sample_store_append(struct sample_store *st, const struct sample *s);

/* Bytes one sample with nchain return addresses occupies in a store. */
size_t sample_record_bytes(unsigned nchain);

/* Samples offered to the store: stored + dropped + nested. */
uint64_t sample_store_offered(const struct sample_store *st);

/* Oldest-to-newest iteration over a store that no longer changes. */
struct sample_iter {
	const struct sample_store *st;
	size_t pos;
	uint64_t left;
};

void sample_iter_init(struct sample_iter *it, const struct sample_store *st);
bool sample_iter_next(struct sample_iter *it, struct sample *out);

/*
 * A recording as the readers (report, script, dump) see it: one store per
 * LP (NULL entries are skipped), the events by index, and what the clock
 * was. Samples are visited store by store, each oldest first.
 */
struct sample_run {
	const struct sample_store *const *stores;
	uint32_t nstores;
	const struct sample_event *events;
	uint32_t nevents;
	const char *comm;	/* what ran (the workload's name), for script */
	const char *lp_comm[2];	/* by SMT ID (T0/T1): each LP's own workload, NULL: comm */
	uint64_t tsc_hz;	/* TSC frequency, 0 when unknown */
	uint64_t tsc_start;	/* TSC when recording started */
};

struct sample_run_iter {
	const struct sample_run *run;
	uint32_t store;
	struct sample_iter it;
};

void sample_run_iter_init(struct sample_run_iter *ri, const struct sample_run *run);
bool sample_run_iter_next(struct sample_run_iter *ri, struct sample *out);

/* The events sample s stands for: its weight, else its event's period (0 when unknown). */
uint64_t sample_weight(const struct sample_run *run, const struct sample *s);

/* The workload name of the samples of LP (SMT ID) lp: its own (lp_comm), else comm. */
const char *sample_run_comm(const struct sample_run *run, uint8_t lp);

/* The counts of all stores of a run added up (buf/cap/head/... are zero). */
void sample_run_totals(const struct sample_run *run, struct sample_store *sum);

/*
 * Memory check for the frame walker: true when [addr, addr + len) may be
 * read without a fault (the kernel asks its page tables; tests use arrays).
 */
typedef bool (*sample_readable_fn)(void *ctx, uint64_t addr, uint64_t len);

/*
 * Walk saved frame pointers from fp (the interrupted RBP): each frame holds
 * the caller's frame pointer at fp and the return address one word above
 * it (word = the native pointer size, so the same walker serves an ia32
 * build). Stops at max (clamped to SAMPLE_MAX_CHAIN) addresses, at a frame
 * the callback refuses, a misaligned or null frame pointer, a zero return
 * address, or a frame pointer that does not move up the stack (which also
 * ends any cycle). Returns the number of addresses written to chain[].
 *
 * Interrupted before its prologue saved RBP, a function's own caller is
 * missing from the chain: the usual limit of frame-pointer unwinding,
 * which sample_walk_stack() below closes for the standard prologue.
 */
unsigned sample_walk_frames(uint64_t fp, uint64_t *chain, unsigned max,
			    sample_readable_fn readable, void *ctx);

/*
 * Where the interrupted function's return address is when RBP is not yet
 * (or no longer) its frame pointer: code points at the function's first
 * byte and off is the IP's offset into it (avail readable bytes from code;
 * at least off + 4 are needed). At the prologue's `push rbp` (the first
 * instruction, after an optional endbr64) or at a `ret` the return address
 * is at RSP: 0; right after `push rbp`, at `mov rbp, rsp`, it is one word
 * above RSP: the word size. Otherwise -1: RBP is the function's own frame
 * pointer and the walk from RBP finds its caller. The same rule perf's
 * frame-pointer unwinders apply to prologues.
 */
int sample_prologue_ret(const uint8_t *code, uint64_t avail, uint64_t off);

/*
 * A frameless leaf's return address: gcc gives a function that needs no
 * stack no frame even with -fno-omit-frame-pointer, so RBP is still its
 * caller's and a walk from RBP skips the caller. code points at the
 * function's first byte and off is the IP's offset into it. When the
 * function does not begin with `push rbp` (after an optional endbr) and no
 * instruction from its first byte up to off can change RSP (decoded one by
 * one: no push, pop, call, enter, leave, nor a write to RSP), the return
 * address is still at RSP: 0. Otherwise -1. The instructions before off in
 * address order stand for the path taken: a frameless leaf with a stack
 * adjustment after off that a loop runs before it is not recognised.
 */
int sample_leaf_ret(const uint8_t *code, uint64_t off, bool mode64);

/*
 * The call chain of an interrupted context: with ret_at >= 0 (from
 * sample_prologue_ret) the return address at RSP + ret_at first, then the
 * frame-pointer walk from RBP (which is still the caller's frame). Same
 * bounds and checks as sample_walk_frames.
 */
unsigned sample_walk_stack(uint64_t rsp, uint64_t fp, int ret_at, uint64_t *chain, unsigned max,
			   sample_readable_fn readable, void *ctx);

#endif
