/*
 * step.c - single-step a workload with RFLAGS.TF and report every retired
 * instruction (SDM Vol. 3A 17.3.1.4, single-step exception condition).
 *
 * With TF set, the processor raises a #DB trap after each instruction; the
 * frame's RIP is the next instruction to execute. The engine therefore
 * remembers the RIP of the previous trap (last_rip): at each #DB the
 * instruction at last_rip has retired and execution continues at the
 * frame's RIP. The branch kind comes from decoding last_rip's bytes
 * (kernel/insn.c), and a branch is taken when the next RIP is not the
 * fall-through (last_rip + length).
 *
 * Start: an instruction that sets TF (POPFQ in the ring-0 runner, IRETQ for
 * ring 3) does not trap itself; the trap comes after the following
 * instruction. In ring 0 that is the runner's `call`, so the first #DB
 * arrives with RIP = workload entry and only arms last_rip; at ring 3 the
 * following instruction is the workload's first, so the first #DB already
 * reports it. Both cases are told apart by RIP == entry.
 * Stop: when the frame's RIP is the return address (the runner's label or
 * the ring-3 exit trampoline), the workload's final ret is reported and TF
 * is cleared in the frame.
 *
 * What is stepped: every instruction of the workload function and of what
 * it calls inside .wltext, from its first instruction to its final ret.
 * Not stepped: the runner (the call into the workload, POPFQ/IRETQ), the
 * int 0x80 exit trampoline, and every handler the workload enters (#DB
 * itself, the int 0x81 gate, interrupts): gates clear TF, IRETQ restores it.
 * An INT n, or a HLT woken by an interrupt, may retire without a #DB of its
 * own (the next trap comes one instruction later); the handlers entered
 * that way call step_sync(), which reports the instruction at last_rip when
 * the interrupted RIP has moved on, so each instruction counts once.
 * REP string instructions trap once per iteration with RIP unchanged; they
 * count once, when RIP finally moves, with the cycles of all iterations.
 *
 * Cycles: TSC read on entry to the handler minus TSC read at its end (right
 * before the IRETQ path) of the previous trap, so handler time is excluded
 * up to the few instructions of entry.S around those reads; the first step
 * also includes the runner's last instructions.
 *
 * Per LP: each logical processor steps its own workload (Hyper-Threading:
 * LP0 and LP1 may both be stepping), so the engine's state is one struct per
 * LP, found through percpu_this(). The #DB handler is installed once and
 * stays: removing it when one LP finishes would leave the other LP's next
 * trap without a handler. A trap on an LP that is not stepping is a stray
 * one and only clears TF.
 */
#include <stddef.h>

#include "arch/x86/cpu.h"
#include "arch/x86/step.h"
#include "kernel/insn.h"
#include "kernel/percpu.h"

struct step_state {
	struct step_run run;
	bool active, started, done, aborted;
	uint64_t last_rip;
	struct insn_class cls;		/* of the instruction at last_rip */
	uint64_t tsc_resume;
	uint64_t cycles;		/* pending for the instruction at last_rip */
	uint64_t polls;
	struct trap_frame *frame;	/* the workload's #DB frame while step_db runs */
};

static struct step_state lp_state[PERCPU_MAX];

static struct step_state *step_this(void)
{
	return &lp_state[percpu_this()->index];
}

static void step_classify(struct step_state *s, uint64_t rip)
{
	const uint8_t *p = (const uint8_t *)(uintptr_t)rip;

	s->cls = (struct insn_class){ .branch = INSN_NOT_BRANCH };
	if (rip >= s->run.text_start && rip < s->run.text_end)
		insn_classify(p, s->run.text_end - rip, true, &s->cls);
}

static void step_count(struct workload_result *res, const struct step_info *si)
{
	res->instructions++;
	res->step_cycles += si->cycles;
	if (si->branch == INSN_NOT_BRANCH)
		return;
	res->branches[si->branch]++;
	if (si->taken)
		res->taken++;
	else
		res->not_taken++;
	if (si->branch == INSN_COND) {
		if (si->taken)
			res->cond_taken++;
		else
			res->cond_not_taken++;
	}
}

/* The instruction at last_rip retired; execution continues at next. */
static void step_emit(struct step_state *s, uint64_t next, uint8_t cpl)
{
	struct step_info si = {
		.rip = s->last_rip, .next_rip = next, .cpl = cpl, .lp = s->run.lp,
		.branch = s->cls.branch, .cycles = s->cycles,
	};
	const struct workload_hooks *h = s->run.h;

	si.taken = si.branch != INSN_NOT_BRANCH && next != s->last_rip + s->cls.len;
	s->cycles = 0;
	step_count(s->run.res, &si);
	if (h && h->step)
		h->step(h->ctx, &si);
	s->last_rip = next;
	step_classify(s, next);
}

static void step_advance(struct step_state *s, struct trap_frame *f)
{
	uint64_t rip = f->rip;

	if (!s->started) {
		s->started = true;
		s->last_rip = s->run.entry;
		step_classify(s, s->run.entry);
		if (rip == s->run.entry)
			return;		/* the runner's call trapped: nothing retired yet */
	}
	if (rip == s->last_rip && s->cls.rep_string)
		return;			/* one more REP iteration */
	step_emit(s, rip, (uint8_t)(f->cs & 3));
	if (rip == s->run.stop_rip) {
		f->rflags &= ~RFLAGS_TF;
		s->done = true;
		return;
	}
	if (++s->polls >= STEP_POLL_INTERVAL) {
		s->polls = 0;
		if (s->run.interrupted && s->run.interrupted()) {
			f->rflags &= ~RFLAGS_TF;
			s->done = s->aborted = true;
			s->run.abort(f);
		}
	}
}

static void step_db(struct trap_frame *f)
{
	uint64_t now = rdtsc();
	struct step_state *st = step_this();

	if (!st->active || st->done) {
		f->rflags &= ~RFLAGS_TF;	/* a stray trap: stop it from repeating */
		return;
	}
	st->cycles += now - st->tsc_resume;
	st->frame = f;
	step_advance(st, f);
	st->frame = NULL;
	st->tsc_resume = rdtsc();
}

struct trap_frame *step_frame(void)
{
	return step_this()->frame;
}

void step_sync(const struct trap_frame *f)
{
	uint64_t now = rdtsc();
	struct step_state *st = step_this();

	if (!st->active || !st->started || st->done || f->rip == st->last_rip)
		return;
	st->cycles += now - st->tsc_resume;
	step_emit(st, f->rip, (uint8_t)(f->cs & 3));
	st->tsc_resume = rdtsc();
}

void step_begin(const struct step_run *r)
{
	struct step_state *st = step_this();

	*st = (struct step_state){ .run = *r, .active = true };
	idt_set_handler(VEC_DB, step_db);	/* the same handler for every LP: never removed */
	st->tsc_resume = rdtsc();
}

bool step_end(void)
{
	struct step_state *st = step_this();
	bool aborted = st->aborted;

	st->active = false;
	return aborted;
}
