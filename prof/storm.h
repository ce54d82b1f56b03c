/*
 * prof/storm.h - the interrupt-storm guard of the overflow path (prof/perf.c).
 *
 * A sampler whose own overflow handler counts a whole period - CPL 0
 * counted and a period no longer than the handler's tail after its reload,
 * or an event the handler produces many of (clockticks) - overflows again
 * before the handler returns. Its OVF keeps the PMI asserted (PMU reference
 * 6), so the next PMI is taken right after the IRET, before one instruction
 * of the interrupted code: the machine makes no progress and Ctrl-C is
 * never read (the timer ranks below an NMI). pmu/p4_alloc.h refuses the
 * periods known to do this; the guard catches the rest, the same on the
 * hardware and on the model: PERF_STORM_PMIS overflow interrupts in a row
 * on one LP that each find the interrupted code exactly as the one before
 * left it (instruction and stack pointers, flags and every general
 * register; the first of them its instruction and stack pointers, see
 * perf_storm_seen) mean that nothing ran in between - and each came sooner after
 * the last handler ended than twice that handler's time (its end is
 * stamped before the counters' restart, which prof/perf.c leaves to the
 * very end of the interrupt's exit, so the restart and the way out fall
 * in between; a storm's next PMI follows them at once). Any instruction that
 * retires changes the instruction pointer or a register but in a loop that
 * jumps to itself, which the time between its PMIs tells apart. The guard then stops every counter
 * of the count, leaves the LP's LVT PC entry masked, and the command ends
 * with perf_storm_text()'s error.
 */
#ifndef NBPROF_PROF_STORM_H
#define NBPROF_PROF_STORM_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/idt.h"
#include "arch/x86/mode.h"

#define PERF_STORM_PMIS		16

/* One LP's guard state. */
struct perf_storm_lp {
	uint64_t sig;			/* the interrupted state at the LP's last PMI, if quick */
	uintptr_t rip, rsp;		/* where the LP's last PMI found it (the machine's word) */
	bool sig_valid;			/* sig is the last PMI's (it came quick) */
	uint32_t same;			/* PMIs in a row since then that found it unchanged */
	uint64_t entry, exit;		/* TSC at the last PMI handler's entry and end */
	uint64_t quick_until;		/* a PMI before this TSC comes quick (0: none yet) */
};

/*
 * The interrupted code's state, folded: the same only when no instruction
 * ran in between. In the machine's word: the 32-bit kernel's registers are
 * the low halves of its frame's slots, and it has no R8-R15.
 */
static inline uint64_t perf_frame_sig(const struct trap_frame *f)
{
	uintptr_t h = (uintptr_t)f->rip ^ ((uintptr_t)f->rsp << 7) ^ ((uintptr_t)f->rflags << 17);

	h ^= (uintptr_t)f->rax ^ ((uintptr_t)f->rcx << 3) ^ ((uintptr_t)f->rdx << 5) ^
	     ((uintptr_t)f->rbx << 9) ^ ((uintptr_t)f->rsi << 11) ^ ((uintptr_t)f->rdi << 13) ^
	     ((uintptr_t)f->rbp << 15);
#if MODE_IS_64
	h ^= f->r8 ^ (f->r9 << 19) ^ (f->r10 << 21) ^ (f->r11 << 23) ^ (f->r12 << 25) ^
	     (f->r13 << 27) ^ (f->r14 << 29) ^ (f->r15 << 31);
#endif
	return h;
}

/*
 * One PMI that interrupted f, its handler entered at TSC now: true when it
 * completes a storm (PERF_STORM_PMIS in a row). A PMI counts towards one
 * only when less time passed since the last handler ended than twice that
 * handler took: a loop that changes no register (`jmp .`)
 * is found unchanged too, but a whole period of its own runs between its
 * PMIs, where a storm's next PMI follows the IRET at once. The registers
 * are folded only for a quick PMI that finds the instruction and stack
 * pointers the last PMI found (a sampling run's PMIs, which land all over
 * its code, pay two compares and two stores; a short period's come quick
 * too): the first such one after any other compares those two pointers,
 * each later one every register. Inline in the PMI's handler and the
 * tick's alike (-Os, as the overflow path is built, would call it from
 * both).
 */
static inline __attribute__((always_inline)) bool
perf_storm_seen(struct perf_storm_lp *g, const struct trap_frame *f, uint64_t now)
{
	bool quick = now < g->quick_until;	/* perf_storm_end */
	uint64_t sig;
	bool same;

	g->entry = now;
	if (!quick || (uintptr_t)f->rip != g->rip || (uintptr_t)f->rsp != g->rsp) {
		g->rip = (uintptr_t)f->rip;
		g->rsp = (uintptr_t)f->rsp;
		g->sig_valid = false;
		g->same = 0;
		return false;
	}
	sig = perf_frame_sig(f);
	same = !g->sig_valid || sig == g->sig;
	g->sig = sig;
	g->sig_valid = true;
	if (!same) {
		g->same = 0;
		return false;
	}
	return ++g->same + 1 >= PERF_STORM_PMIS;
}

/* The handler of the LP's last PMI ends at TSC now. */
static inline __attribute__((always_inline)) void
perf_storm_end(struct perf_storm_lp *g, uint64_t now)
{
	g->exit = now;
	/* the test's bound here, where the 32-bit kernel's 64-bit arithmetic is once per handler too */
	g->quick_until = now + 2 * (now - g->entry);
}

#endif
