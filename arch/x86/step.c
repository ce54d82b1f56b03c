/*
 * step.c - single-step a workload with RFLAGS.TF and report every retired
 * instruction (SDM Vol. 3A 17.3.1.4, single-step exception condition).
 *
 * With TF set, the processor raises a #DB trap after each instruction; the
 * frame's RIP is the next instruction to execute. The engine therefore
 * remembers the RIP of the previous trap (last_rip): at each #DB the
 * instruction at last_rip has retired and execution continues at the
 * frame's RIP. The branch kind comes from decoding last_rip's bytes
 * (arch/x86/insn.c), and a branch is taken when the next RIP is not the
 * fall-through (last_rip + length).
 *
 * Start: the first #DB only arms the engine; it arrives with RIP = the
 * workload's entry, before the first workload instruction. In ring 0 the
 * runner's POPFQ sets TF, which traps after the following instruction, the
 * runner's `call`. In ring 3 the runner's IRETQ sets TF, and the trap would
 * come only after the workload's first instruction, so step_begin() also
 * puts an instruction breakpoint on the entry (DR0/DR7, SDM 17.2.4: R/W0 =
 * 00, LEN0 = 00), a fault taken before that instruction; the arming #DB
 * removes it. (In ring 0 the single-step trap after the call comes first -
 * traps of the previous instruction outrank code breakpoints, SDM Table
 * 6-2 - and removes it unused.) Should the breakpoint not fire, the first
 * #DB reports the first instruction and its cycles start at step_begin().
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
 * Memory operands: where the next instruction is classified - at a trap,
 * with that trap's frame holding the registers before it runs - it is also
 * decoded with insn_mem_decode() (FS and GS bases from IA32_FS_BASE and
 * IA32_GS_BASE, read once per run; the ia32 kernel takes every segment base
 * as 0), and step_info carries its length and
 * operands. A REP string instruction is decoded before its first iteration;
 * its later iterations' operands follow from the element size and
 * RFLAGS.DF (SDM Vol. 2B, MOVS: RSI/RDI move by the size, down when DF is
 * set), so step_info gives the first iteration's operands, the stride and
 * the iteration count. The first instruction of a run whose arming
 * breakpoint did not fire, and an instruction reached through step_sync()
 * without a frame in front of it, are reported with INSN_MEM_UNKNOWN.
 *
 * Cycles: the workload's own time, as close as software can get to it.
 * entry.S reads the TSC first thing in the #DB entry path and again right
 * before the handler's IRETQ (its exit stamp, step.h). The time of a step
 * is "entry stamp minus the previous exit stamp", which leaves out the
 * handler, the dispatcher and the step hook (the model, PMIs sent from it,
 * printing), but still holds a constant part: the few instructions of
 * entry.S after the exit read and before the entry read, the IRETQ, and
 * the #DB delivery - costs the hardware running the workload unstepped
 * does not have. That part is measured once per LP (step_calibrate(), on
 * the LP's first step_begin): STEP_CAL_NOPS nops are stepped with the same
 * handler and timed the same way; the least nop step minus the cost of one
 * nop run unstepped is the overhead, subtracted from every step (never
 * below 1 cycle, see step_take()). A REP iteration pays it once per trap, and so gets it
 * subtracted once per trap.
 * What remains, and so what one clocktick of the model means: the TSC
 * cycles the instruction took when executed alone, between a serialising
 * IRETQ and the next trap - its latency with an empty pipeline and with
 * whatever the handler evicted from caches and TLBs, not its share of an
 * overlapped out-of-order stream. On a NetBurst part that is more than the
 * unstepped throughput; the sum over a loop is an upper estimate of its
 * unstepped cycles. Under QEMU -icount (shift=7) the TSC advances 128 per
 * guest instruction, the overhead is an exact number of instructions, and
 * every stepped instruction costs exactly 128 (a REP string instruction 128
 * per trap, i.e. per iteration): clockticks = 128 x retired instructions,
 * deterministic (tests/qemu/test_accuracy.py).
 * Not subtracted: handlers that interrupt the workload between two steps
 * (a vector-mode PMI, a timer) stay in the step they fall into, as on
 * hardware; an instruction reported by step_sync() is timed up to the
 * gate's C handler, so it also carries that gate's entry path (the step
 * after it starts at the gate's own exit stamp).
 *
 * Per LP: each logical processor steps its own workload (Hyper-Threading:
 * LP0 and LP1 may both be stepping), so the engine's state is one struct per
 * LP, found through percpu_this(); so is the calibration (the LPs share a
 * core but not their handlers' timing). The #DB handler is installed once
 * and stays: removing it when one LP finishes would leave the other LP's
 * next trap without a handler. A trap on an LP that is not stepping is a
 * stray one and only clears TF.
 */
#include <stddef.h>

#include "arch/x86/cpu.h"
#include "arch/x86/fpu.h"
#include "arch/x86/gdt.h"
#include "arch/x86/insn.h"
#include "arch/x86/insn_simd.h"
#include "arch/x86/lapic.h"
#include "arch/x86/mode.h"
#include "arch/x86/paging.h"
#include "arch/x86/msr.h"
#include "arch/x86/percpu.h"
#include "arch/x86/progress.h"
#include "arch/x86/regs.h"
#include "arch/x86/step.h"
#include "arch/x86/user.h"
#include "lib/string.h"

#define STEP_STR2(x)		#x
#define STEP_STR(x)		STEP_STR2(x)
#define STEP_CAL_TRAPS		(STEP_CAL_NOPS + 4)	/* the nops, then the TF-clearing sequence */
#define STEP_SEAM_MAX		24			/* instructions of a hardware bus access */
#define STEP_SEAM_READ		0
#define STEP_SEAM_WRITE		1
/*
 * The step engine's own clock inside a stepped handler
 * (step_handler_clock_stepped): the call stands for the RDTSC a Pentium 4
 * runs instead, and nothing of the function is reported (no hardware
 * instructions: seam.n 0).
 */
#define STEP_SEAM_CLOCK		2
#define STEP_SEAM_KINDS		3
/*
 * An interrupt's way in before its handler is stepped (step_entry_measure):
 * the stub, isr_common, the dispatcher up to step_handler_enter and that
 * call's return as it goes outside a window. Five paths: the NMI and the
 * LVT PC's fixed vector, from CPL 0 and from CPL 3 (the 32-bit isr_common
 * copies a frame of another size from ring 3), and the LAPIC timer's from
 * CPL 0 and 3 (a stepped tick wakes a ring-0 HLT, or comes in the model's
 * time: step_handler_begin, step_tick_every).
 */
#define STEP_ENTRY_MAX		256
#define STEP_ENTRY_PATHS	6
#define STEP_ENTRY_TICK		4			/* + 1 from CPL 3 */
#define STEP_CAL_ROUNDS		8			/* unstepped timings, the least is kept */
#define DR7_L0			UINT64_C(1)		/* DR0 enabled (local); R/W0 = LEN0 = 00: execute */
#define DR7_L1			(UINT64_C(1) << 2)	/* DR1, DR2 likewise */
#define DR7_L2			(UINT64_C(1) << 4)
#define DR7_L3			(UINT64_C(1) << 6)
#define DR6_CLEAR		UINT64_C(0xffff0ff0)	/* DR6 with no condition flagged (SDM 17.2.3) */

/*
 * Decoded instructions by RIP, per LP: what does not depend on the
 * registers (the branch class, and the whole operand decode of an
 * instruction that touches no memory) is decoded once per run. An
 * instruction with memory operands is decoded again at every step, since
 * its addresses come from the registers; so is a REP string instruction,
 * whose operands vanish when the count is 0. Emptied at step_begin.
 */
#define STEP_DCACHE		256

struct step_dcache {
	uint64_t rip;
	bool valid, regs_free;		/* regs_free: mem below holds for any registers */
	uint8_t kind;			/* enum step_text_kind: whose text rip lies in */
	struct insn_class cls;
	struct insn_mem mem;
};

/* What stepping an interrupted context keeps of its own (step_handler_enter). */
struct step_saved {
	uint64_t last_rip, cycles, rep_count;
	struct insn_class cls;
	struct insn_mem mem;
	uint32_t rep_iters;
	uint8_t last_cpl;
	bool last_wl;
	struct trap_frame *frame;
	uint64_t seam_ret, seam_rsp;	/* a seam call the handler interrupted */
	uint8_t seam_kind;
};

struct step_state {
	struct step_run run;
	bool active, started, done, aborted, bp_armed;
	bool quiet;			/* nothing counts for the rest of the run (step_quiet) */
	/*
	 * The traps step_db treats apart, read as one word on every trap:
	 * calibration, the seam's calibration, the first trap after a fault
	 * (step_fault), the entry paths' measurement.
	 */
	union {
		struct {
			bool calibrating, seam_cal, faulted, entry_cal;
		};
		uint32_t special;
	};
	/*
	 * The breakpoints on the ring-3 exit gate's stub (step_arm) and on the
	 * other gates' (step_bp_gates): while one is armed, a trap at one of
	 * their addresses (step_at_bp, a few compares) is treated apart.
	 */
	union {
		struct {
			bool exit_bp, gate_bp;
		};
		uint16_t bps;
	};
	bool h_gate;			/* the stepped handler is a gate's (step_gate_stepped): no PMI's */
	bool h_tick;			/* ... the LAPIC timer's (a HLT's or the model's tick): no PMI's */
	/*
	 * The model's tick (step_tick_every): the LAPIC timer's vector sent to
	 * this LP each tick_period TSC cycles of its workload's stepped time
	 * (each step's own, as step_take times it: the time a Pentium 4 would
	 * have taken); tick_left until the next; tick_sent while one is on its
	 * way.
	 */
	uint64_t tick_period, tick_left;
	volatile bool tick_sent;
	/*
	 * step_handler_begin is setting a handler's stepping up: a PMI stays
	 * held (step_in_handler_of) through its first trap, which comes before
	 * h_active is set - the timer's, unlike a PMI's, leaves LVT PC unmasked.
	 * Cleared at the handler's exit (step_handler_exit), not where the
	 * stepping starts: what step_handler_begin runs after TF is set is
	 * stepped and reported.
	 */
	volatile bool h_entering;
	uint64_t last_rip;
	struct insn_class cls;		/* of the instruction at last_rip */
	struct insn_mem mem;		/* its memory operands, from the registers before it ran */
	uint32_t rep_iters;		/* REP string: iterations seen so far (traps with RIP unchanged + 1) */
	uint64_t rep_count;		/* REP string: RCX before the first iteration */
	uint64_t fs_base, gs_base;	/* read at step_begin: workloads do not change them */
	struct step_dcache dcache[STEP_DCACHE];
	uint64_t resume;		/* TSC of the last exit stamp (entry.S writes it), or step_begin's */
	uint64_t cycles;		/* pending for the instruction at last_rip */
	uint64_t polls;
	/*
	 * The time of every instruction reported for this LP (step_lp_clock):
	 * each reported step's cycles, the workload's, the window's and a
	 * stepped handler's alike.
	 */
	uint64_t lp_clock;
	uint64_t emitted;		/* instructions reported this run (progress.h) */
	struct trap_frame *frame;	/* the workload's #DB frame while step_db runs */
	uint8_t last_cpl;		/* the CPL the instruction at last_rip ran at */
	bool last_wl;			/* the instruction at last_rip is the workload's: in its text, or
					   at CPL 3 (step_classify, after last_cpl is set) */

	/* the counting window (step_window_begin): kernel code is stepped too */
	bool win;
	uint8_t win_lp;
	const struct workload_hooks *win_h;	/* where kernel instructions are reported */
	struct step_counts win_counts;

	/*
	 * An interrupt handler stepped inside the counting window
	 * (step_handler_enter): the interrupted context's stepping state, put
	 * back when the handler's IRET has retired (the trap after it finds
	 * the interrupted RIP, RSP and CS again).
	 */
	bool h_active;
	uint64_t h_rip, h_rsp, h_cs;
	struct step_saved h_saved;
	uint64_t h_start, h_mark;	/* win_counts.instructions at its entry, at the last mark */
	/*
	 * The stepped handler's own time (step_handler_clock): each of its
	 * instructions as step_take times it, and each span it ran unstepped
	 * (a held region), up to the last exit stamp.
	 */
	uint64_t h_clock;
	struct step_handler_stats h_stats;

	/*
	 * Inside a seam call (step_seam_set): the model's bus function runs
	 * from the trap at its entry until the trap that finds seam_ret with
	 * the call's stack popped (seam_rsp); its traps report nothing.
	 */
	uint64_t seam_ret, seam_rsp;
	uint8_t seam_kind;		/* STEP_SEAM_READ, _WRITE or _CLOCK */
	/* the seam's calibration: stepping the hardware bus's function */
	uint64_t seam_cal_entry, seam_cal_rsp;
	unsigned seam_cal_n;
	uint64_t seam_cal_rip[STEP_SEAM_MAX];
	/* the entry paths' measurement (step_entry_measure): path, RSP inside step_handler_enter */
	uint8_t entry_cal_path;
	uint64_t entry_cal_rsp;

	/* calibration */
	unsigned cal_n;
	uint64_t cal_raw[STEP_CAL_TRAPS];
	struct step_calibration cal;
};

static struct step_state lp_state[PERCPU_MAX];

#define STEP_SEAM_GLUE_MAX	4

/* The seam (step_seam_set): the model's bus functions, and what the hardware's retire instead. */
static struct {
	uint64_t entry[STEP_SEAM_KINDS];	/* STEP_SEAM_READ, _WRITE: the model's functions */
	uint64_t glue[STEP_SEAM_GLUE_MAX];	/* step_seam_glue: reported as nothing, as the clock */
	unsigned n[STEP_SEAM_KINDS];		/* the hardware bus's instructions per access */
	unsigned at[STEP_SEAM_KINDS];		/* which of them is the RDMSR or WRMSR */
	uint64_t rip[STEP_SEAM_KINDS][STEP_SEAM_MAX];	/* where they lie, in the order they retire */
} seam;

/* The entry paths (step_entry_measure): where their instructions lie, in the order they retire. */
static struct {
	unsigned n[STEP_ENTRY_PATHS];		/* 0: not measured (nothing is reported) */
	uint64_t rip[STEP_ENTRY_PATHS][STEP_ENTRY_MAX];
} entry_path;

/* Which entry_path an interrupt took in: its vector and the CPL it interrupted. */
static unsigned step_entry_index(unsigned vector, unsigned cpl)
{
	if (vector == LAPIC_TIMER_VECTOR)
		return STEP_ENTRY_TICK + (cpl == 3 ? 1u : 0u);
	return (vector == VEC_NMI ? 0u : 2u) + (cpl == 3 ? 1u : 0u);
}

volatile uint32_t step_handlers_stepped;
/* A bit per percpu index: its counting window is open (step_window_begin). */
static volatile uint32_t step_windows;
_Static_assert(PERCPU_MAX <= 32, "step_handlers_stepped has a bit per LP");

static struct step_state *step_this(void)
{
	return &lp_state[percpu_this()->index];
}

/* The kernel's text (linker.ld, linker32.ld, linker-multiboot.ld). */
extern char _text[] __attribute__((visibility("hidden")));
extern char _etext[] __attribute__((visibility("hidden")));

/* ---- debug registers (the ring-3 arming breakpoint) --------------------------- */

static void step_write_dr7(uint64_t v)
{
	__asm__ volatile("mov %0, %%dr7" : : "r"((uintptr_t)v));
}

static void step_bp_set(struct step_state *s, uint64_t addr)
{
	__asm__ volatile("mov %0, %%dr0" : : "r"((uintptr_t)addr));
	__asm__ volatile("mov %0, %%dr6" : : "r"((uintptr_t)DR6_CLEAR));
	step_write_dr7(DR7_L0);
	s->bp_armed = true;
}

/* Where the breakpoints of step_arm and step_bp_gates lie (0: none there). */
static uint64_t step_bp_rip[4];

static inline bool step_at_bp(uint64_t rip)
{
	return rip == step_bp_rip[0] || rip == step_bp_rip[1] || rip == step_bp_rip[2] ||
	       rip == step_bp_rip[3];
}

/*
 * The gates a run calls and returns from (int 0x81, 0x82, and a Linux
 * program's SYSCALL on x86-64): DR1, DR2 and DR3 on their entries, beside
 * DR0 (step_arm) when dr0 is set (a ring-3 run's exit). Their entries
 * clear TF, from ring 3 and from ring 0 alike; from the breakpoint on, the
 * step engine steps them to their IRET as the kernel code they are
 * (step_gate_stepped). SYSCALL is armed for ring-3 runs only: a Linux
 * program runs in ring 3.
 */
static void step_bp_gates(struct step_state *s, bool dr0, bool syscall)
{
	uint64_t dr7 = (dr0 ? DR7_L0 : 0) | DR7_L1 | DR7_L2;

	step_bp_rip[0] = (uintptr_t)user_exit_entry;
	step_bp_rip[1] = idt_stub(USER_SYNTH_VECTOR);
	step_bp_rip[2] = (uintptr_t)user_call_entry;
#if MODE_IS_64
	step_bp_rip[3] = (uintptr_t)syscall_entry;
#endif

	__asm__ volatile("mov %0, %%dr1" : : "r"((uintptr_t)idt_stub(USER_SYNTH_VECTOR)));
	__asm__ volatile("mov %0, %%dr2" : : "r"((uintptr_t)user_call_entry));
#if MODE_IS_64
	if (syscall) {
		__asm__ volatile("mov %0, %%dr3" : : "r"((uintptr_t)syscall_entry));
		dr7 |= DR7_L3;
	}
#else
	(void)syscall;
#endif
	__asm__ volatile("mov %0, %%dr6" : : "r"((uintptr_t)DR6_CLEAR));
	step_write_dr7(dr7);
	s->bp_armed = true;
	s->gate_bp = true;
}

static void step_bp_clear(struct step_state *s)
{
	if (!s->bp_armed)
		return;
	step_write_dr7(0);
	__asm__ volatile("mov %0, %%dr6" : : "r"((uintptr_t)DR6_CLEAR));
	s->bp_armed = false;
	s->gate_bp = false;
}

/*
 * The per-step path, inline in each of its two users (the workload's steps
 * and the counting window's) on the x86-64 kernel; out of line once on the
 * ia32 kernel, whose image has less room (tests/tools/test_image.py).
 */
#if MODE_IS_64
#define STEP_EMIT_INLINE	static inline __attribute__((always_inline))
#else
#define STEP_EMIT_INLINE	static __attribute__((noinline))
#endif

/* ---- timing --------------------------------------------------------------------- */

/* Ask entry.S to store the TSC right before this frame's IRETQ into s->resume. */
static void step_stamp_exit(struct step_state *s, struct trap_frame *f)
{
	f->vector = TRAP_EXIT_STAMP;
	f->error = (uint64_t)(uintptr_t)&s->resume;
}

/*
 * The workload's share of the time from the last exit stamp to now, at
 * least one cycle: no instruction retires in less. Without icount the host
 * TSC makes a short step come out at or below the calibrated overhead now
 * and then; the floor keeps clockticks >= instructions there (under icount
 * every step is exactly 128 and the floor never applies).
 */
static uint64_t step_take(const struct step_state *s, uint64_t now)
{
	uint64_t raw = now - s->resume;

	return raw > s->cal.overhead + 1 ? raw - s->cal.overhead : 1;
}

/* ---- stepping ----------------------------------------------------------------- */

/* Frame f's registers in the decoder's order (a long-mode frame always holds RSP). */
static void step_regs(const struct step_state *s, const struct trap_frame *f, struct insn_regs *r)
{
	*r = (struct insn_regs){ .rip = f->rip };
	r->gpr[INSN_RAX] = f->rax;
	r->gpr[INSN_RCX] = f->rcx;
	r->gpr[INSN_RDX] = f->rdx;
	r->gpr[INSN_RBX] = f->rbx;
	r->gpr[INSN_RSP] = f->rsp;
	r->gpr[INSN_RBP] = f->rbp;
	r->gpr[INSN_RSI] = f->rsi;
	r->gpr[INSN_RDI] = f->rdi;
	r->gpr[INSN_R8] = f->r8;
	r->gpr[INSN_R9] = f->r9;
	r->gpr[INSN_R10] = f->r10;
	r->gpr[INSN_R11] = f->r11;
	r->gpr[INSN_R12] = f->r12;
	r->gpr[INSN_R13] = f->r13;
	r->gpr[INSN_R14] = f->r14;
	r->gpr[INSN_R15] = f->r15;
	r->seg_base[INSN_FS] = s->fs_base;
	r->seg_base[INSN_GS] = s->gs_base;
}

/* The operands of the instruction at rip, decoded with frame f's registers (or without: NULL). */
static void step_decode(struct step_state *s, uint64_t rip, uint64_t end, const struct trap_frame *f)
{
	const uint8_t *p = (const uint8_t *)(uintptr_t)rip;
	struct insn_regs regs;

	if (f && f->rip == rip) {
		step_regs(s, f, &regs);
		insn_mem_decode(p, end - rip, MODE_IS_64, &regs, &s->mem);
	} else {
		s->mem = (struct insn_mem){ .status = INSN_MEM_UNKNOWN };
		s->mem.len = (uint8_t)insn_length(p, end - rip, MODE_IS_64);
	}
}

/*
 * The code rip belongs to, whose bytes may be decoded: the stepped
 * workload's (up to *end), or in the counting window the kernel's text.
 */
enum step_text_kind { STEP_TEXT_NONE, STEP_TEXT_WORKLOAD, STEP_TEXT_KERNEL };

static enum step_text_kind step_text(const struct step_state *s, uint64_t rip, uint64_t *end)
{
	uint64_t k0 = (uintptr_t)_text, k1 = (uintptr_t)_etext;

	if (s->active && rip >= s->run.text_start && rip < s->run.text_end) {
		*end = s->run.text_end;
		return STEP_TEXT_WORKLOAD;
	}
	if (s->win && rip >= k0 && rip < k1) {
		*end = k1;
		return STEP_TEXT_KERNEL;
	}
	return STEP_TEXT_NONE;
}

/*
 * Classify the instruction at rip; f: the frame of the trap in front of it
 * (its registers are the instruction's inputs), or NULL when there is none.
 */
static __attribute__((noinline)) void step_classify_slow(struct step_state *s, uint64_t rip,
							  const struct trap_frame *f,
							  struct step_dcache *d)
{
	uint64_t end = 0;
	enum step_text_kind kind = step_text(s, rip, &end);
	bool inside = kind != STEP_TEXT_NONE;

	s->rep_iters = 1;
	s->rep_count = f ? f->rcx : 0;
	s->last_wl = kind == STEP_TEXT_WORKLOAD || s->last_cpl == 3;
	if (inside && d->valid && d->rip == rip) {
		s->cls = d->cls;
		if (d->regs_free)
			s->mem = d->mem;
		else
			step_decode(s, rip, end, f);
		return;
	}
	s->cls = (struct insn_class){ .branch = INSN_NOT_BRANCH };
	s->mem = (struct insn_mem){ .status = INSN_MEM_UNKNOWN };
	if (!inside)
		return;
	insn_classify((const uint8_t *)(uintptr_t)rip, end - rip, MODE_IS_64, &s->cls);
	step_decode(s, rip, end, f);
	if (!f || f->rip != rip)
		return;			/* decoded without registers: not worth keeping */
	*d = (struct step_dcache){ .rip = rip, .valid = true, .kind = (uint8_t)kind, .cls = s->cls,
				   .mem = s->mem };
	d->regs_free = !s->cls.rep_string && s->mem.status != INSN_MEM_TRUNCATED &&
		       (s->mem.status == INSN_MEM_UNKNOWN || s->mem.nops == 0);
}

/*
 * Classify the instruction at rip (f: the registers before it, or NULL).
 * Most steps find it decoded and independent of the registers in the
 * decode cache: that path is inline and copies it; the rest
 * (step_classify_slow) finds whose text rip lies in and decodes. A cache
 * entry keeps its kind: the cache is emptied when a run begins and when a
 * counting window opens or shuts, the only times the texts change.
 */
static inline __attribute__((always_inline)) void step_classify(struct step_state *s, uint64_t rip,
								 const struct trap_frame *f)
{
	struct step_dcache *d = &s->dcache[(rip ^ (rip >> 6)) % STEP_DCACHE];

	if (__builtin_expect(d->valid && d->rip == rip && d->regs_free, 1)) {
		s->rep_iters = 1;
		s->rep_count = f ? f->rcx : 0;
		s->last_wl = d->kind == STEP_TEXT_WORKLOAD || s->last_cpl == 3;
		s->cls = d->cls;
		s->mem = d->mem;
		return;
	}
	step_classify_slow(s, rip, f, d);
}

static void step_dcache_empty(struct step_state *s)
{
	for (unsigned i = 0; i < STEP_DCACHE; i++)
		s->dcache[i].valid = false;
}

/* ---- operand values for the assist events (step.h, struct step_fp) ------------- */

/*
 * Per LP: two FXSAVE images, taken in turn - the one taken in the hook of
 * an instruction is its "after" and the next instruction's "before" - and
 * the next instruction's operands while it is x87 or SSE arithmetic.
 */
struct step_fpx {
	uint8_t img[2][512] __attribute__((aligned(16)));
	unsigned b;			/* img[b]: pend's before */
	struct step_fp pend;		/* the next instruction (valid: it is x87/SSE arithmetic) */
	struct step_fp out;		/* what step_fp_step hands out */
};

static struct step_fpx lp_fpx[PERCPU_MAX];

bool step_fp_usable(void)
{
	return (read_cr4() & CR4_OSFXSR) && ((uintptr_t)lp_fpx[0].img & 15u) == 0 &&
	       sizeof(lp_fpx[0]) % 16u == 0;
}

/*
 * The instruction at rip, about to run with frame f's registers: its
 * operands into *p when it is x87 or SSE arithmetic (false otherwise).
 */
static bool step_fp_decode(struct step_state *s, uint64_t rip, const struct trap_frame *f,
			   struct step_fp *p)
{
	const uint8_t *b = (const uint8_t *)(uintptr_t)rip;
	uint64_t end = 0, addr;
	struct insn_regs regs;
	struct insn_opcode o;
	unsigned n;

	if (!f || f->rip != rip || step_text(s, rip, &end) == STEP_TEXT_NONE ||
	    !insn_opcode(b, end - rip, MODE_IS_64, &o) || !insn_fp_op(&o, &p->op))
		return false;
	p->rip = rip;
	p->mem_read = false;
	n = p4_fp_mem_bytes(&p->op);
	if (n && n <= sizeof(p->mem)) {
		step_regs(s, f, &regs);
		if (insn_rm_addr(b, end - rip, MODE_IS_64, &regs, &addr) &&
		    paging_is_mapped(addr, n, (f->cs & 3) == 3)) {
			memcpy(p->mem, (const void *)(uintptr_t)addr, n);
			p->mem_read = true;
		}
	}
	return true;
}

const struct step_fp *step_fp_step(uint64_t rip, uint64_t next_rip)
{
	struct step_state *s = step_this();
	struct step_fpx *x = &lp_fpx[percpu_this()->index];
	bool had = x->pend.valid && x->pend.rip == rip;
	bool next = step_fp_decode(s, next_rip, s->frame, &x->out);
	unsigned now = 1u - x->b;
	const struct step_fp *ret = NULL;

	if (!had && !next) {
		x->pend.valid = false;
		return NULL;		/* nothing to judge, nothing to keep: no FXSAVE */
	}
	fpu_fxsave(x->img[now]);
	if (had) {
		/* out holds next's operands: swap it with pend, whose before is img[b] */
		struct step_fp t = x->pend;

		x->pend = x->out;
		x->out = t;
		x->out.before = x->img[x->b];
		x->out.after = x->img[now];
		ret = &x->out;
	} else {
		x->pend = x->out;
	}
	x->pend.valid = next;
	x->pend.before = x->img[now];
	x->b = now;
	return ret;
}

/*
 * Iterations a REP string instruction ran: RCX counts them down (SDM Vol. 2B,
 * REP), which is exact where the traps are not - QEMU traps once more, with
 * RIP unchanged, before the iteration that finds RCX = 0 and leaves. The
 * trap count stands when RCX does not add up (an address-size prefix).
 */
static uint32_t step_rep_iters(const struct step_state *s, const struct trap_frame *f)
{
	uint64_t done = s->rep_count - f->rcx;

	return s->rep_count >= f->rcx && done <= s->rep_iters ? (uint32_t)done : s->rep_iters;
}

/* Copy the decoded operands of the instruction at last_rip into *si (f: the trap after it). */
STEP_EMIT_INLINE void step_fill_mem(const struct step_state *s, struct step_info *si,
			  const struct trap_frame *f)
{
	const struct insn_mem *m = &s->mem;

	si->len = m->len;
	si->mem_status = m->status;
	si->core = m->core;
	si->rep_iters = s->cls.rep_string ? step_rep_iters(s, f) : 1;
	if (m->status != INSN_MEM_OK)
		return;
	si->nmem = m->nops;
	for (unsigned i = 0; i < m->nops; i++)
		si->mem[i] = m->op[i];
	if (s->cls.rep_string && m->nops)
		si->mem_stride = (f->rflags & RFLAGS_DF) ? -(int32_t)m->op[0].size
							  : (int32_t)m->op[0].size;
}

STEP_EMIT_INLINE void step_count(struct step_counts *res, const struct step_info *si)
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

/*
 * The instruction at last_rip retired; execution continues at f's RIP (f:
 * that trap's frame). It is reported to h, counted in counts, as LP lp's.
 */
STEP_EMIT_INLINE void step_emit_to(struct step_state *s, const struct trap_frame *f,
				   const struct workload_hooks *h, struct step_counts *counts,
				   uint8_t lp)
{
	uint64_t next = f->rip;
	struct step_info si;	/* every field set, mem[] up to nmem: no clearing per step */

	si.rip = s->last_rip;
	si.next_rip = next;
	si.cpl = s->last_cpl;
	si.lp = lp;
	si.branch = s->cls.branch;
	si.flush_tlb = s->cls.flush_tlb;
	si.simd = s->cls.simd;
	si.cycles = s->cycles;
	si.taken = si.branch != INSN_NOT_BRANCH && next != s->last_rip + s->cls.len;
	si.nmem = 0;
	si.mem_stride = 0;
	step_fill_mem(s, &si, f);
	s->lp_clock += s->cycles;
	s->cycles = 0;
	step_count(counts, &si);
	if (h && h->step)
		h->step(h->ctx, &si);
	progress_tick(++s->emitted);
	s->last_rip = next;
	s->last_cpl = (uint8_t)(f->cs & 3);
	step_classify(s, next, f);
}

/* A workload instruction. */
static void step_emit(struct step_state *s, const struct trap_frame *f)
{
	step_emit_to(s, f, s->run.h, s->run.counts, s->run.lp);
}

/* A kernel instruction in the counting window. */
static __attribute__((noinline)) void step_emit_kernel(struct step_state *s, const struct trap_frame *f)
{
	step_emit_to(s, f, s->win_h, &s->win_counts, s->win_lp);
}


/*
 * A kernel REP STOS in the counting window (memset: 12 million iterations
 * for a 48 MiB buffer) is not stepped one iteration at a time: the handler
 * does its stores itself, as the instruction would with the registers of
 * the trap in front of it (DF = 0: ascending; EAX's low bytes, replicated
 * as STOS stores them), moves RDI, RCX and RIP past it, and reports it as
 * the one instruction it is, with all its iterations and their stores fed
 * to the memory model as for a stepped one. A PMI its events raise lands
 * after the instruction rather than between two iterations; the count is
 * the same. True when it did.
 */
static bool step_is_stos(uint64_t rip, uint8_t len)
{
	const uint8_t *p = (const uint8_t *)(uintptr_t)rip;
	unsigned i = 0;

	/* prefixes: REP (F3H), operand size (66H), REX (40H-4FH, 64-bit code only) */
	while (i + 1 < len && (p[i] == 0xf3 || p[i] == 0x66 || (MODE_IS_64 && (p[i] & 0xf0) == 0x40)))
		i++;
	return i + 1 == len && (p[i] == 0xaa || p[i] == 0xab);	/* STOSB, STOSW/D/Q */
}

static bool step_rep_stos(struct step_state *s, struct trap_frame *f)
{
	const struct insn_mem_op *op = &s->mem.op[0];
	uint64_t n = f->rcx, bytes, v = f->rax, t0 = rdtsc();
	uint64_t end = 0;

	if (!s->cls.rep_string || f->rip != s->last_rip || s->mem.status != INSN_MEM_OK ||
	    s->mem.nops != 1 || op->access != INSN_STORE || (f->rflags & RFLAGS_DF) ||
	    n == 0 || n > UINT32_MAX || s->rep_count != n || !step_text(s, f->rip, &end) ||
	    !step_is_stos(f->rip, s->mem.len) ||
	    end != (uintptr_t)_etext ||
	    (s->active && f->rip >= s->run.text_start && f->rip < s->run.text_end))
		return false;
	bytes = n * op->size;
	switch (op->size) {
	case 1:
		memset((void *)(uintptr_t)op->addr, (int)(v & 0xff), (size_t)bytes);
		break;
	case 2:
		for (uint64_t i = 0; i < n; i++)
			((volatile uint16_t *)(uintptr_t)op->addr)[i] = (uint16_t)v;
		break;
	case 4:
		for (uint64_t i = 0; i < n; i++)
			((volatile uint32_t *)(uintptr_t)op->addr)[i] = (uint32_t)v;
		break;
	case 8:
		for (uint64_t i = 0; i < n; i++)
			((volatile uint64_t *)(uintptr_t)op->addr)[i] = v;
		break;
	default:
		return false;
	}
	s->rep_iters = (uint32_t)n;	/* step_rep_iters: RCX 0 after all of them */
	s->cycles += rdtsc() - t0;	/* its time, as stepping would have measured it */
	f->rdi += bytes;
	f->rcx = 0;
	f->rip += s->mem.len;
	return true;
}

/*
 * The call that retired entered one of the model's bus functions
 * (step_seam_set): the hardware bus's instructions before its RDMSR or
 * WRMSR retire now, before the model's access; from here to the return
 * (its address on top of the stack) nothing of the model's is reported,
 * and at the return the RDMSR or WRMSR and the rest of the hardware's
 * access retire (step_seam_exit), after the model's - so a write that
 * enables a counter counts itself and what follows, as the harder reading
 * of the manual, which does not say.
 */
static void step_seam_emit(struct step_state *s, const struct trap_frame *f, unsigned k,
			   unsigned from, unsigned to)
{
	struct trap_frame g = *f;

	for (unsigned i = from; i < to; i++) {
		s->last_rip = seam.rip[k][i];
		s->last_cpl = 0;
		step_classify(s, s->last_rip, NULL);
		s->cycles = 0;
		g.rip = i + 1 < seam.n[k] ? seam.rip[k][i + 1] : f->rip;
		step_emit_kernel(s, i + 1 < seam.n[k] ? &g : f);
	}
}

static inline void step_seam_enter(struct step_state *s, const struct trap_frame *f)
{
	unsigned k;

	if (f->rip == seam.entry[STEP_SEAM_READ])
		k = STEP_SEAM_READ;
	else if (f->rip == seam.entry[STEP_SEAM_WRITE])
		k = STEP_SEAM_WRITE;
	else if (f->rip == seam.entry[STEP_SEAM_CLOCK] || f->rip == seam.glue[0] ||
		 f->rip == seam.glue[1] || f->rip == seam.glue[2] || f->rip == seam.glue[3])
		k = STEP_SEAM_CLOCK;	/* nothing of it is reported */
	else
		return;
	s->seam_kind = (uint8_t)k;
	s->seam_ret = *(const uintptr_t *)(uintptr_t)f->rsp;
	s->seam_rsp = f->rsp + sizeof(uintptr_t);
	step_seam_emit(s, f, k, 0, seam.at[k]);	/* what runs before the access */
}

/*
 * Back from a seam call. The hardware bus's instructions are reported at
 * CPL 0, classified from its own code, without memory operands (its few
 * stack accesses are not fed to the memory model). The call itself was
 * reported when it entered.
 */
static __attribute__((noinline)) void step_seam_exit(struct step_state *s, struct trap_frame *f)
{
	unsigned k = s->seam_kind;

	s->seam_ret = 0;
	step_seam_emit(s, f, k, seam.at[k], seam.n[k]);	/* the access and what follows it */
	if (!seam.n[k]) {	/* not measured: the return is where stepping goes on */
		s->last_rip = f->rip;
		s->last_cpl = (uint8_t)(f->cs & 3);
		step_classify(s, f->rip, f);
	}
	s->cycles = 0;
}

/* Kernel code in the counting window (step_window_begin), one instruction or REP iteration. */
static void step_kernel(struct step_state *s, struct trap_frame *f, uint64_t cycles)
{
	if (s->seam_ret) {
		if (f->rip == s->seam_ret && f->rsp == s->seam_rsp)
			step_seam_exit(s, f);
		return;		/* the model's own code: a Pentium 4 never runs it */
	}
	s->cycles += cycles;
	if (f->rip == s->last_rip && s->cls.rep_string) {
		s->rep_iters++;
		return;
	}
	step_emit_kernel(s, f);
	if (step_rep_stos(s, f))	/* done here: reported as it retired */
		step_emit_kernel(s, f);
	step_seam_enter(s, f);
}

/*
 * Is the instruction at last_rip the stepped workload's? Before its entry
 * it is the runner's; inside the run, kernel code is stepped only in the
 * counting window (a gate's handler that resumed stepping) and lies
 * outside the workload's text at CPL 0.
 */
static inline bool step_in_workload(const struct step_state *s)
{
	if (!s->win)
		return true;
	return s->started && s->last_wl;
}

/* The first trap of a run; true when it is the arming trap in front of the entry. */
static bool step_arm(struct step_state *s, struct trap_frame *f)
{
	uint64_t rip = f->rip;

	s->started = true;
	s->last_rip = s->run.entry;
	s->last_cpl = (uint8_t)(f->cs & 3);
	step_classify(s, s->run.entry, rip == s->run.entry ? f : NULL);
	step_bp_clear(s);
	/*
	 * A ring-3 run in the counting window leaves through the exit gate,
	 * which clears TF: a breakpoint on its entry stub lets the step engine
	 * go on there, in front of the stub's first instruction, which shuts
	 * the counting gate (user.h) - so the INT and the stub are counted as
	 * a Pentium 4 counts them, before the counters stop.
	 */
	if (s->win && (f->cs & 3) == 3) {
		step_bp_set(s, (uintptr_t)user_exit_entry);
		s->exit_bp = true;
		step_bp_gates(s, true, true);
	} else if (s->win) {
		step_bp_gates(s, false, false);	/* a ring-0 run's INT clears TF too */
	}
	if (rip != s->run.entry)
		return false;
	f->rflags |= RFLAGS_RF;	/* a breakpoint fault resumes past its breakpoint */
	return true;		/* nothing of the workload retired, the runner's time dropped */
}

static void step_advance(struct step_state *s, struct trap_frame *f, uint64_t cycles)
{
	uint64_t rip = f->rip;

	if (!s->started && step_arm(s, f))
		return;
	s->cycles += cycles;
	if (rip == s->last_rip && s->cls.rep_string) {
		s->rep_iters++;
		return;			/* one more REP iteration */
	}
	step_emit(s, f);
	if (rip == s->run.stop_rip) {
		if (!s->win)		/* in the counting window the runner is stepped on */
			f->rflags &= ~RFLAGS_TF;
		s->done = true;
		return;
	}
	if (++s->polls >= STEP_POLL_INTERVAL) {
		s->polls = 0;
		if (s->quiet) {		/* step_quiet: the rest runs as on a P4, unstepped */
			f->rflags &= ~RFLAGS_TF;
			step_bp_clear(s);
			s->exit_bp = false;
			return;
		}
		if (s->run.interrupted && s->run.interrupted()) {
			if (!s->win)
				f->rflags &= ~RFLAGS_TF;
			s->done = s->aborted = true;
			s->run.abort(f);
			s->last_rip = f->rip;	/* where the runner resumes */
			s->last_cpl = (uint8_t)(f->cs & 3);
			step_classify(s, f->rip, NULL);
		}
	}
}

/* In the counting window, outside a stepped workload or in front of its entry. */
static void step_window(struct step_state *s, struct trap_frame *f, uint64_t cycles)
{
	bool arming = s->active && !s->done && !s->started && f->rip == s->run.entry;

	step_kernel(s, f, cycles);	/* the runner's call or IRET, when arming */
	if (arming)
		step_arm(s, f);
}

/* ---- interrupt handlers in the counting window -------------------------------- */

/* The LP steps a handler (h_active), also in step_handlers_stepped for step_handler_clock. */
static inline void step_h_active(struct step_state *st, bool on)
{
	uint32_t bit = UINT32_C(1) << ((unsigned)(st - lp_state) & 31);

	__atomic_store_n(&st->h_active, on, __ATOMIC_RELEASE);
	if (on)
		__atomic_fetch_or(&step_handlers_stepped, bit, __ATOMIC_RELEASE);
	else if (step_handlers_stepped & bit)
		__atomic_fetch_and(&step_handlers_stepped, ~bit, __ATOMIC_RELEASE);
}

uint64_t step_lp_clock(void)
{
	return step_this()->lp_clock;
}

uint64_t step_handler_clock_stepped(void)
{
	const struct step_state *st = step_this();
	uint64_t now = rdtsc();

	if (!st->h_active)
		return now;
	return st->h_clock + (now > st->resume ? now - st->resume : 0);
}

static void step_save(const struct step_state *s, struct step_saved *v)
{
	*v = (struct step_saved){ .last_rip = s->last_rip, .cycles = s->cycles,
				  .rep_count = s->rep_count, .cls = s->cls, .mem = s->mem,
				  .rep_iters = s->rep_iters, .last_cpl = s->last_cpl,
				  .last_wl = s->last_wl, .frame = s->frame, .seam_ret = s->seam_ret,
				  .seam_rsp = s->seam_rsp, .seam_kind = s->seam_kind };
}

static void step_restore(struct step_state *s, const struct step_saved *v)
{
	s->last_rip = v->last_rip;
	s->cycles = v->cycles;
	s->rep_count = v->rep_count;
	s->cls = v->cls;
	s->mem = v->mem;
	s->rep_iters = v->rep_iters;
	s->last_cpl = v->last_cpl;
	s->last_wl = v->last_wl;
	s->frame = v->frame;
	s->seam_ret = v->seam_ret;
	s->seam_rsp = v->seam_rsp;
	s->seam_kind = v->seam_kind;
}

static void step_tf_on(struct step_state *st);
static void step_tf_set(void);
static void step_tf_off(void);

/*
 * The trap after a stepped handler's IRET (f: the interrupted context
 * again): the IRET is reported, and the interrupted context's stepping goes
 * on where it was, as if the handler had not been there.
 *
 * A handler that interrupted stepped code (a fixed vector) or a gate is
 * over once its IRET is reported: a PMI its restart left asserted, or one
 * the gate's synthetic events raised (held through the gate), is sent from
 * this trap's report and taken before the next instruction, as on a P4. A
 * fixed vector waits for this trap's IRET; an NMI comes at once, inside
 * the report, and its handler is stepped there with f as the workload's
 * frame (step_handler_begin), writing the handler fields and h_saved
 * anew. So what this exit needs of its own handler is taken before the
 * report: its length (the IRET included), its kind and its saved context.
 * One that the model's NMI brought into the step handler stays held
 * through the report: the step handler's own send loop takes the PMI up
 * after.
 */
static void step_handler_exit(struct step_state *st, struct trap_frame *f, uint64_t entry)
{
	const bool gate = st->h_gate, tick = st->h_tick;
	const uint64_t rip = st->h_rip, mark = st->h_mark;
	const uint64_t n = st->win_counts.instructions + 1u - st->h_start;	/* the IRET too */
	const uint64_t tail = mark != UINT64_MAX ? st->win_counts.instructions + 1u - mark : 0;
	const struct step_saved saved = st->h_saved;

	st->h_entering = false;		/* h_active has held the PMIs since the handler's first trap */
	st->cycles += step_take(st, entry);
	st->frame = f;
	if (!saved.frame)
		step_h_active(st, false);
	if (tick) {
		st->h_stats.ticks++;
		st->h_stats.tick_insns += n;
	} else if (!gate) {
		st->h_stats.handlers++;
		st->h_stats.insns += n;
	}
	if (!gate && !tick && mark != UINT64_MAX) {
		st->h_stats.tails++;
		st->h_stats.tail_sum += tail;
		if (tail > st->h_stats.tail_max)
			st->h_stats.tail_max = tail;
	}
	step_emit_kernel(st, f);	/* the IRET: a PMI may nest here (above) */
	step_restore(st, &saved);
	if (gate && f->rip != rip) {	/* sent to the exit (user_redirect_exit) */
		st->last_rip = f->rip;
		st->last_cpl = (uint8_t)(f->cs & 3);
		step_classify(st, f->rip, f);
	}
	step_h_active(st, false);
	step_stamp_exit(st, f);
}

void step_handler_mark(void)
{
	struct step_state *st = step_this();

	if (st->h_active && st->h_mark == UINT64_MAX)
		st->h_mark = st->win_counts.instructions;
}

const struct step_handler_stats *step_handler_stats_of(unsigned cpu)
{
	return cpu < PERCPU_MAX ? &lp_state[cpu].h_stats : NULL;
}

/*
 * The way in of the PMI whose handler is about to be stepped, reported as
 * CPL-0 instructions before it (step_entry_measure found them), classified
 * from their own code without memory operands (the frame's stores are not
 * fed to the memory model) and without clockticks, as the seam's are. The
 * last goes on at after, the dispatcher's next instruction. The 32-bit
 * ring-0 path assumed is the common one: an NMI in a ring-3 gate's stub
 * with a program's TLS in GS runs two instructions more.
 */
static void step_entry_emit(struct step_state *s, const struct trap_frame *f, uintptr_t after)
{
	unsigned p = step_entry_index((unsigned)f->vector, (unsigned)(f->cs & 3));
	unsigned n = entry_path.n[p];
	struct trap_frame g = *f;

	g.cs = GDT_KERNEL_CS;
	for (unsigned i = 0; i < n; i++) {
		s->last_rip = entry_path.rip[p][i];
		s->last_cpl = 0;
		step_classify(s, s->last_rip, NULL);
		s->cls.rep_string = false;	/* 32-bit isr_common's REP STOSD: one, as the model counts it */
		s->cycles = 0;
		g.rip = i + 1 < n ? entry_path.rip[p][i + 1] : after;
		step_emit_kernel(s, &g);
	}
}

/*
 * The workload's instruction at last_rip retired before an interrupt whose
 * handler runs on f, the workload's frame (step_sync, and a tick that woke
 * a HLT): reported with its time up to now. A PMI the step hook raises
 * samples the workload, not the handler.
 */
static void step_sync_report(struct step_state *st, struct trap_frame *f, uint64_t now)
{
	st->cycles += step_take(st, now);
	st->frame = f;
	step_emit(st, f);
	st->frame = NULL;
}

/*
 * Did the LAPIC timer's interrupt (frame f) wake the workload's HLT
 * (step_handler_begin)? The HLT (F4H, one byte) ends right before the
 * frame's RIP and is the instruction the last step stopped at, or the one
 * after it (a one-byte STI whose trap its interrupt shadow held back): the
 * byte read is one that ran, never one before an arbitrary RIP.
 */
static bool step_tick_woke_hlt(const struct step_state *st, const struct trap_frame *f)
{
	uint64_t hlt = f->rip - 1;

	return !st->frame && st->active && st->started && !st->done && (f->cs & 3) == 0 &&
	       (hlt == st->last_rip || hlt == st->last_rip + 1) &&
	       *(const uint8_t *)(uintptr_t)hlt == 0xf4;
}

static __attribute__((noinline)) void step_handler_begin(struct trap_frame *f, uintptr_t after)
{
	struct step_state *st = step_this();
	bool woke, sent = false;

	if (f->vector == LAPIC_TIMER_VECTOR) {	/* the model's tick came, stepped or not */
		sent = st->tick_sent;
		st->tick_sent = false;
	}
	if (!st->win || st->h_active || st->calibrating)
		return;
	/* stepped code was interrupted, or the step handler itself (an NMI the model sent from it) */
	if (!(f->rflags & RFLAGS_TF) && !st->frame)
		return;
	/*
	 * A tick is stepped when it woke the workload's HLT (`halt`, ring 0:
	 * the instruction before the frame's is a HLT that retired after the
	 * last step), as a Pentium 4 runs it there, or when the model sent it
	 * in its own time (step_tick_every). Elsewhere it runs unstepped
	 * (workload_tick's step_sync): stepping makes code hundreds of times
	 * slower than the timer, so a tick that lands between two stepped
	 * instructions is one the hardware would mostly not have taken there,
	 * and stepped it would take longer than the timer's period.
	 */
	woke = f->vector == LAPIC_TIMER_VECTOR && step_tick_woke_hlt(st, f);
	if (f->vector == LAPIC_TIMER_VECTOR && !woke && !sent)
		return;
	st->h_tick = f->vector == LAPIC_TIMER_VECTOR;
	st->h_entering = true;
	/*
	 * The HLT the tick woke retired: reported before the handler, as
	 * step_sync reports it, with a PMI it raises held (h_entering) until
	 * the tick's IRET: it samples the workload after the HLT.
	 */
	if (woke)
		step_sync_report(st, f, rdtsc());
	step_save(st, &st->h_saved);
	st->seam_ret = 0;
	st->h_gate = false;
	st->h_rip = f->rip;
	st->h_rsp = f->rsp;
	st->h_cs = f->cs;
	st->frame = NULL;
	st->h_start = st->win_counts.instructions;
	st->h_mark = UINT64_MAX;
	st->h_clock = rdtsc();		/* the clock goes on from the TSC */
	step_h_active(st, true);	/* a PMI the way in raises is held, as the handler's */
	step_entry_emit(st, f, after);
	step_h_active(st, false);	/* not yet: step_tf_on adds nothing */
	step_tf_on(st);
	step_h_active(st, true);	/* stepped from here: nothing more (h_entering ends at the exit) */
}

/*
 * What a Pentium 4 runs of it (no LP has a window open) is a load, a test
 * and the return: the PMI's way in (step_entry_measure) ends with them.
 */
void step_handler_enter(struct trap_frame *f)
{
	if (__builtin_expect(step_windows != 0, 0))
		step_handler_begin(f, (uintptr_t)__builtin_return_address(0));
}

bool step_in_handler_of(unsigned cpu)
{
	return cpu < PERCPU_MAX && (__atomic_load_n(&lp_state[cpu].h_active, __ATOMIC_ACQUIRE) ||
				    lp_state[cpu].h_entering);
}

struct trap_frame *step_handler_frame_of(unsigned cpu)
{
	const struct step_state *st = cpu < PERCPU_MAX ? &lp_state[cpu] : NULL;

	return st && __atomic_load_n(&st->h_active, __ATOMIC_ACQUIRE) ? st->h_saved.frame : NULL;
}


/*
 * The breakpoint on a gate's stub (step_bp_gates): the workload's
 * INT has retired (reported now, to the gate), and the handler is stepped
 * from this first instruction to its IRET like a PMI's (step_handler_enter),
 * its instructions the window's at CPL 0; the workload's stepping resumes
 * at the instruction after the INT. The frame the CPU pushed lies at RSP:
 * return address, CS, flags, stack pointer, SS, each a word.
 */
static void step_gate_from(struct step_state *st, struct trap_frame *f, uint64_t entry,
			   uint64_t rip, uint64_t cs, uint64_t rsp)
{
	struct trap_frame g = *f;

	g.rip = rip;
	g.cs = cs;
	g.rsp = rsp;
	st->cycles += step_take(st, entry);
	st->frame = &g;			/* a PMI its events raise samples the workload */
	step_emit(st, &g);		/* the INT */
	st->frame = NULL;
	step_save(st, &st->h_saved);
	st->seam_ret = 0;
	st->h_rip = g.rip;
	st->h_rsp = g.rsp;
	st->h_cs = g.cs;
	st->h_gate = true;
	st->h_start = st->win_counts.instructions;
	st->h_mark = UINT64_MAX;
	st->h_clock = rdtsc();
	st->last_rip = f->rip;
	st->last_cpl = 0;
	step_classify(st, f->rip, f);
	st->cycles = 0;
	step_h_active(st, true);
	f->rflags |= RFLAGS_TF | RFLAGS_RF;
	step_stamp_exit(st, f);
}

static void step_gate_stepped(struct step_state *st, struct trap_frame *f, uint64_t entry)
{
	const uintptr_t *u = (const uintptr_t *)(uintptr_t)f->rsp;
	/* an INT from ring 0 in 32-bit mode pushes no stack pointer: it returns above EFLAGS */
	uint64_t rsp = MODE_IS_64 || (u[1] & 3) ? u[3] : f->rsp + 3 * sizeof(uintptr_t);

	step_gate_from(st, f, entry, u[0], u[1], rsp);
}

/*
 * A Linux program's SYSCALL (x86-64: arch/x86/64/entry.S syscall_entry),
 * whose FMASK clears TF like a gate: RCX holds the return address and RSP
 * is still the program's; the entry's IRETQ returns with that RSP and the
 * user code selector.
 */
#if MODE_IS_64
static void step_syscall_stepped(struct step_state *st, struct trap_frame *f, uint64_t entry)
{
	step_gate_from(st, f, entry, f->rcx, GDT_USER_CS | GDT_RPL3, f->rsp);
}
#endif

/*
 * The breakpoint on the ring-3 exit gate's stub (step_arm): the INT is
 * reported as step_gate_enter reports it (falling through to the
 * interrupted context's next instruction), then the stub is stepped.
 */
static void step_exit_stepped(struct step_state *st, struct trap_frame *f, uint64_t entry)
{
	const uintptr_t *u = (const uintptr_t *)(uintptr_t)f->rsp;
	struct trap_frame g = *f;

	step_bp_clear(st);
	st->exit_bp = false;
	g.rip = u[0];
	g.cs = u[1];
	g.rsp = u[3];
	st->cycles += step_take(st, entry);
	st->frame = &g;
	step_emit_kernel(st, &g);
	st->frame = NULL;
	st->last_rip = f->rip;
	st->last_cpl = 0;
	step_classify(st, f->rip, f);
	st->cycles = 0;
	f->rflags |= RFLAGS_TF | RFLAGS_RF;
	step_stamp_exit(st, f);
}

/* Stepping the hardware bus's function (step_seam_measure): where each instruction lies. */
static void step_seam_trap(struct step_state *st, struct trap_frame *f)
{
	if (!st->seam_cal_rsp) {
		if (f->rip != st->seam_cal_entry)
			return;			/* the way to the call */
		st->seam_cal_rsp = f->rsp;
	} else if (f->rsp > st->seam_cal_rsp) {
		f->rflags &= ~RFLAGS_TF;	/* it returned */
		st->seam_cal = false;
		return;
	}
	if (st->seam_cal_n < STEP_SEAM_MAX)
		st->seam_cal_rip[st->seam_cal_n] = f->rip;
	st->seam_cal_n++;
}

/*
 * Stepping an interrupt's way in (step_entry_measure): every trap's RIP is
 * kept, from the stub's first instruction to the return of the dispatcher's
 * call of step_handler_enter; at that return the probe is left
 * (arch_guard_leave) and nothing of the handler runs. A path longer than
 * STEP_ENTRY_MAX is left there and not used.
 */
static void step_entry_trap(struct step_state *st, struct trap_frame *f)
{
	unsigned p = st->entry_cal_path, n = entry_path.n[p];

	if (n && entry_path.rip[p][n - 1] == f->rip)
		return;				/* a REP string's next iteration: one instruction */
	if (st->entry_cal_rsp && f->rsp > st->entry_cal_rsp) {
		st->entry_cal = false;		/* step_handler_enter returned */
		arch_guard_leave(0);
	}
	if (f->rip == (uintptr_t)step_handler_enter)
		st->entry_cal_rsp = f->rsp;
	if (n == STEP_ENTRY_MAX) {
		st->entry_cal = false;
		arch_guard_leave(-1);
	}
	entry_path.rip[p][n] = f->rip;
	entry_path.n[p] = n + 1;
}

/*
 * The first trap after a fault (step_fault): the instruction at last_rip
 * faulted and did not retire, and what ran since (the exception's handler,
 * the unwind) was not stepped. Nothing is reported: the engine starts over
 * at this trap's RIP, the time since the fault dropped.
 */
static void step_after_fault(struct step_state *st, struct trap_frame *f)
{
	st->faulted = false;
	st->cycles = 0;
	st->last_rip = f->rip;
	st->last_cpl = (uint8_t)(f->cs & 3);
	step_classify(st, f->rip, f);
	step_stamp_exit(st, f);
}

/* The traps of step_state.special; true when the trap was one of them and is handled. */
static __attribute__((noinline)) bool step_db_special(struct step_state *st, struct trap_frame *f,
						     uint64_t entry)
{
	if (st->seam_cal) {
		step_seam_trap(st, f);
		return true;
	}
	if (st->entry_cal) {
		step_entry_trap(st, f);
		return true;
	}
	if (st->faulted) {
		step_after_fault(st, f);
		return true;
	}
	if (st->calibrating) {
		if (st->cal_n < STEP_CAL_TRAPS)
			st->cal_raw[st->cal_n++] = entry - st->resume;
		step_stamp_exit(st, f);
		return true;
	}
#if MODE_IS_64
	if (st->gate_bp && !st->h_active && f->rip == (uintptr_t)syscall_entry && st->active &&
	    !st->done) {
		step_syscall_stepped(st, f, entry);
		return true;
	}
#endif
	if (st->gate_bp && !st->h_active && (f->rip == idt_stub(USER_SYNTH_VECTOR) ||
					      f->rip == (uintptr_t)user_call_entry) &&
	    st->active && !st->done) {
		step_gate_stepped(st, f, entry);
		return true;
	}
	if (st->exit_bp && f->rip == (uintptr_t)user_exit_entry) {
		/* the trampoline's exit; a Linux program's system call (ia32) is a gate */
		if (*(const uintptr_t *)(uintptr_t)f->rsp == (uintptr_t)wl_user_exit + USER_EXIT_INSN_LEN)
			step_exit_stepped(st, f, entry);
		else if (!st->h_active && st->active && !st->done)
			step_gate_stepped(st, f, entry);
		return true;
	}
	return false;
}

/*
 * The model's tick (step_tick_every): c more TSC cycles of the workload's
 * time, and the tick sent when they complete a period. Only the workload's
 * steps advance it: the kernel's steps in the window and in handlers carry
 * the model's own work (its register accesses run unstepped inside one
 * step), far longer than a Pentium 4's, and a tick handler timed so would
 * outlast the period and be followed by the next at its IRET. So at least
 * one instruction of the workload runs between two ticks, whatever a
 * tick's handler costs. The vector comes at the next instruction boundary
 * with IF set, as a LAPIC timer's interrupt does: right after this trap's
 * IRET, or after the STI of a section that masks interrupts. One at a time: a tick still on its way (interrupts
 * masked for longer than a period) takes the next one's place, as the
 * LAPIC's IRR holds one interrupt of a vector.
 */
static inline void step_tick_count(struct step_state *st, uint64_t c)
{
	if (__builtin_expect(!st->tick_period, 1) || !st->win)
		return;
	if (c < st->tick_left) {
		st->tick_left -= c;
		return;
	}
	st->tick_left = st->tick_period;
	if (st->tick_sent)
		return;
	st->tick_sent = true;
	lapic_self_ipi(LAPIC_TIMER_VECTOR);
}

void step_tick_every(uint64_t period)
{
	struct step_state *st = step_this();

	st->tick_period = period;
	st->tick_left = period;
	st->tick_sent = false;
}

static void step_db(struct trap_frame *f)
{
	uint64_t entry = f->error;	/* entry.S: the TSC at #DB entry */
	struct step_state *st = step_this();
	uint64_t c;
	bool run;

	if ((__builtin_expect(st->special != 0, 0) ||
	     (__builtin_expect(st->bps != 0, 0) && step_at_bp(f->rip))) &&
	    step_db_special(st, f, entry))
		return;
	if (st->h_active)
		st->h_clock += step_take(st, entry);	/* the handler's instruction, as if unstepped */
	if (st->h_active && f->rsp == st->h_rsp && f->cs == st->h_cs &&
	    (f->rip == st->h_rip || (st->h_gate && (f->cs & 3) == 3))) {
		step_handler_exit(st, f, entry);	/* a gate may send its program elsewhere */
		return;
	}
	run = st->active && !st->done;
	if (!run && !st->win) {
		f->rflags &= ~RFLAGS_TF;	/* a stray trap: stop it from repeating */
		step_bp_clear(st);
		return;
	}
	st->frame = f;
	c = step_take(st, entry);
	if (run && step_in_workload(st)) {
		step_advance(st, f, c);
		step_tick_count(st, c);
	} else {
		step_window(st, f, c);
	}
	st->frame = NULL;
	step_stamp_exit(st, f);
}

/*
 * An exception raised by the instruction the calling LP steps next (its
 * RIP is the one the last step left, step_emit_to): it did not retire, so
 * the next trap reports nothing of it (step_after_fault), and the fault is
 * reported to whoever that instruction would have been: the workload's
 * hooks, or the counting window's for kernel code. The exception's frame stands for the step's
 * (step_frame), so that a PMI the report raises samples the faulting
 * instruction. Nothing when the engine is not stepping this LP, or after
 * step_quiet.
 */
void step_fault(struct trap_frame *f)
{
	struct step_state *st = step_this();
	const struct workload_hooks *h;
	struct step_fault sf;
	bool wl = st->active && st->started && !st->done && step_in_workload(st);

	if ((!wl && !st->win) || st->h_active || f->rip != st->last_rip)
		return;
	st->faulted = true;	/* it did not retire: the next trap reports nothing of it */
	h = wl ? st->run.h : st->win_h;
	if (st->quiet || !h || !h->fault)
		return;
	sf = (struct step_fault){ .rip = f->rip, .cpl = (uint8_t)(f->cs & 3),
				  .lp = wl ? st->run.lp : st->win_lp, .vector = (uint8_t)f->vector,
				  .frame = f };
	st->frame = f;
	h->fault(h->ctx, &sf);
	st->frame = NULL;
}

struct trap_frame *step_frame_of(unsigned cpu)
{
	return lp_state[cpu].frame;
}

struct trap_frame *step_frame(void)
{
	return step_this()->frame;
}

void step_sync(struct trap_frame *f)
{
	uint64_t now = rdtsc();
	struct step_state *st = step_this();

	if (!st->active || !st->started || st->done || st->h_active)
		return;		/* a gate stepped from its stub reported its INT there */
	if (f->rip != st->last_rip)
		step_sync_report(st, f, now);
	step_stamp_exit(st, f);		/* the next step starts at this handler's IRETQ */
}

/* ---- calibration ------------------------------------------------------------- */

/* TSC of STEP_CAL_NOPS nops run unstepped, minus the same timing around nothing. */
static uint64_t step_time_nops(void)
{
	uint32_t d_nops, d_empty;

	__asm__ volatile("rdtsc\n\t"
			 "movl %%eax, %%ecx\n\t"
			 ".rept " STEP_STR(STEP_CAL_NOPS) "\n\tnop\n\t.endr\n\t"
			 "rdtsc\n\t"
			 "subl %%ecx, %%eax\n\t"
			 "movl %%eax, %0\n\t"
			 "rdtsc\n\t"
			 "movl %%eax, %%ecx\n\t"
			 "rdtsc\n\t"
			 "subl %%ecx, %%eax"
			 : "=&r"(d_nops), "=&a"(d_empty) : : "ecx", "edx", "cc");
	return d_nops > d_empty ? d_nops - d_empty : 0;
}

/* The same nops with TF set: one #DB each (recorded by step_db in calibration mode). */
static void step_nops_stepped(void)
{
	__asm__ volatile("pushf\n\t"
			 "or" MODE_OP_SUFFIX " $0x100, (" MODE_STACK_REG ")\n\t"	/* RFLAGS_TF */
			 "popf\n\t"
			 ".rept " STEP_STR(STEP_CAL_NOPS) "\n\tnop\n\t.endr\n\t"
			 "pushf\n\t"
			 "and" MODE_OP_SUFFIX " $~0x100, (" MODE_STACK_REG ")\n\t"
			 "popf"
			 : : : "memory", "cc");
}

static void step_run_calibration(struct step_state *st)
{
	uint64_t flags = read_rflags(), unstepped = UINT64_MAX, least = UINT64_MAX;

	cpu_cli();
	for (unsigned i = 0; i < STEP_CAL_ROUNDS; i++) {
		uint64_t t = step_time_nops();

		if (t < unstepped)
			unstepped = t;
	}
	st->cal_n = 0;
	st->calibrating = true;
	st->resume = rdtsc();
	step_nops_stepped();
	st->calibrating = false;
	if (flags & RFLAGS_IF)
		cpu_sti();
	/*
	 * cal_raw[0] is the trap after the first nop, with no exit stamp before
	 * it; [1 .. NOPS-1] follow nops 2 .. NOPS, each timed from the previous
	 * #DB's exit stamp; the rest are the TF-clearing instructions.
	 */
	for (unsigned i = 1; i < STEP_CAL_NOPS && i < st->cal_n; i++)
		if (st->cal_raw[i] < least)
			least = st->cal_raw[i];
	st->cal.nop = unstepped / STEP_CAL_NOPS;
	st->cal.step_nop = least == UINT64_MAX ? 0 : least;
	st->cal.overhead = st->cal.step_nop > st->cal.nop ? st->cal.step_nop - st->cal.nop : 0;
	st->cal.done = true;
}

/*
 * Step one access of the hardware bus (fn: its read or write function)
 * and keep where its instructions lie; 0 when it could not be measured
 * (it faulted, or it is longer than STEP_SEAM_MAX).
 */
typedef int seam_read_fn(struct msr_bus *, uint32_t, uint64_t *);
typedef int seam_write_fn(struct msr_bus *, uint32_t, uint64_t);

static unsigned step_seam_measure(struct step_state *st, unsigned k, uint32_t msr)
{
	seam_read_fn *volatile rd = msr_hw_bus.read;
	seam_write_fn *volatile wr = msr_hw_bus.write;
	uint64_t flags = read_rflags(), v = 0;
	int r;

	if (rd(&msr_hw_bus, msr, &v))
		return 0;
	cpu_cli();
	st->seam_cal_entry = k == STEP_SEAM_READ ? (uintptr_t)rd : (uintptr_t)wr;
	st->seam_cal_rsp = 0;
	st->seam_cal_n = 0;
	st->seam_cal = true;
	step_tf_set();
	r = k == STEP_SEAM_READ ? rd(&msr_hw_bus, msr, &v) : wr(&msr_hw_bus, msr, v);
	step_tf_off();
	st->seam_cal = false;
	if (flags & RFLAGS_IF)
		cpu_sti();
	if (r || !st->seam_cal_n || st->seam_cal_n > STEP_SEAM_MAX)
		return 0;
	seam.at[k] = st->seam_cal_n;
	for (unsigned i = 0; i < st->seam_cal_n; i++) {
		const uint8_t *p = (const uint8_t *)(uintptr_t)st->seam_cal_rip[i];

		seam.rip[k][i] = st->seam_cal_rip[i];
		if (p[0] == 0x0f && (p[1] == 0x30 || p[1] == 0x32) && seam.at[k] == st->seam_cal_n)
			seam.at[k] = i;		/* WRMSR, RDMSR */
	}
	if (seam.at[k] == st->seam_cal_n)
		return 0;
	return st->seam_cal_n;
}

/* arch/x86/{32,64}/entry.S: a vector's stub entered as the CPU enters it, with TF set. */
void step_entry_probe(uintptr_t stub, uintptr_t cs) __attribute__((noreturn));

struct step_entry_arg {
	uintptr_t stub, cs;
};

static int step_entry_fire(void *arg)
{
	const struct step_entry_arg *a = arg;

	step_entry_probe(a->stub, a->cs);
}

/*
 * Step the entry paths of a PMI (NMI and fixed vector) and of the LAPIC
 * timer's tick, from CPL 0 and 3, once: each is entered through its stub with a frame as the CPU pushes it
 * (step_entry_probe) and stepped to the return of step_handler_enter, which
 * outside a window returns at once. The 32-bit isr_common loads GS from
 * ring 3; it is put back.
 */
static void step_entry_measure(struct step_state *st)
{
	static const unsigned vecs[3] = { VEC_NMI, LAPIC_PMI_VECTOR, LAPIC_TIMER_VECTOR };
	uint64_t flags = read_rflags();

	for (unsigned v = 0; v < 3; v++)
		for (unsigned cpl = 0; cpl <= 3; cpl += 3) {
			unsigned p = step_entry_index(vecs[v], cpl);
			struct step_entry_arg a = {
				.stub = (uintptr_t)idt_stub(vecs[v]),
				.cs = cpl ? GDT_USER_CS | GDT_RPL3 : GDT_KERNEL_CS,
			};
#if !MODE_IS_64
			uint32_t gs;

			__asm__ volatile("mov %%gs, %0" : "=r"(gs));
#endif
			cpu_cli();
			entry_path.n[p] = 0;
			st->entry_cal_path = (uint8_t)p;
			st->entry_cal_rsp = 0;
			st->entry_cal = true;
			if (arch_run_guarded(step_entry_fire, &a) != 0)
				entry_path.n[p] = 0;
			st->entry_cal = false;
#if !MODE_IS_64
			__asm__ volatile("mov %0, %%gs" : : "r"(gs));
#endif
			if (flags & RFLAGS_IF)
				cpu_sti();
		}
}

void step_seam_glue(const void *fn)
{
	for (unsigned i = 0; i < STEP_SEAM_GLUE_MAX; i++)
		if (seam.glue[i] == (uintptr_t)fn || !seam.glue[i]) {
			seam.glue[i] = (uintptr_t)fn;
			return;
		}
}

unsigned step_entry_length(unsigned vector, unsigned cpl)
{
	return entry_path.n[step_entry_index(vector, cpl)];
}

void step_seam_set(const void *read, const void *write, uint32_t msr)
{
	struct step_state *st = step_this();

	idt_set_handler(VEC_DB, step_db);
	seam.entry[STEP_SEAM_READ] = seam.entry[STEP_SEAM_WRITE] = 0;
	seam.n[STEP_SEAM_READ] = step_seam_measure(st, STEP_SEAM_READ, msr);
	seam.n[STEP_SEAM_WRITE] = step_seam_measure(st, STEP_SEAM_WRITE, msr);
	seam.entry[STEP_SEAM_READ] = (uintptr_t)read;
	seam.entry[STEP_SEAM_WRITE] = (uintptr_t)write;
	step_entry_measure(st);
}

void step_seam_lengths(unsigned *read, unsigned *write)
{
	*read = seam.n[STEP_SEAM_READ];
	*write = seam.n[STEP_SEAM_WRITE];
}

const struct step_calibration *step_calibrate(void)
{
	struct step_state *st = step_this();

	idt_set_handler(VEC_DB, step_db);	/* the same handler for every LP: never removed */
	if (!st->cal.done)
		step_run_calibration(st);
	return &st->cal;
}

/* ---- the counting window ---------------------------------------------------------- */

/*
 * Set TF in the caller's RFLAGS: the instruction after the POPF is the first
 * one stepped (a POPF that sets TF traps only after the next instruction),
 * and step_tf_resume marks it, so the engine knows which instruction the
 * next trap reports. Not inlined: the label must exist once.
 */
extern char step_tf_resume[] __attribute__((visibility("hidden")));

static __attribute__((noinline)) void step_tf_set(void)
{
	__asm__ volatile("pushf\n\t"
			 "or" MODE_OP_SUFFIX " $0x100, (" MODE_STACK_REG ")\n\t"	/* RFLAGS_TF */
			 "popf\n\t"
			 ".globl step_tf_resume\n\t"
			 ".hidden step_tf_resume\n"
			 "step_tf_resume:"
			 : : : "memory", "cc");
}

static void step_tf_on(struct step_state *st)
{
	if (st->h_active)
		st->h_clock += rdtsc() - st->resume;	/* the span since the last trap ran unstepped */
	st->last_rip = (uintptr_t)step_tf_resume;
	st->last_cpl = 0;
	step_classify(st, st->last_rip, NULL);
	st->cycles = 0;
	st->resume = rdtsc();
	step_tf_set();
}

static void step_tf_off(void)
{
	__asm__ volatile("pushf\n\t"
			 "and" MODE_OP_SUFFIX " $~0x100, (" MODE_STACK_REG ")\n\t"
			 "popf"
			 : : : "memory", "cc");
}

void step_window_begin(const struct workload_hooks *h, uint8_t lp)
{
	struct step_state *st = step_this();

	if (st->win)
		return;
	step_calibrate();	/* before TF is set: calibration steps nops of its own */
	st->win = true;
	__atomic_fetch_or(&step_windows, UINT32_C(1) << ((unsigned)(st - lp_state) & 31),
			  __ATOMIC_RELEASE);
	st->faulted = false;
	st->win_h = h;
	st->win_lp = lp;
	st->win_counts = (struct step_counts){ 0 };
	st->seam_ret = 0;
	step_h_active(st, false);
	st->h_entering = false;
	st->tick_sent = false;
	st->h_stats = (struct step_handler_stats){ 0 };
	seam.entry[STEP_SEAM_CLOCK] = (uintptr_t)step_handler_clock_stepped;
	step_dcache_empty(st);		/* kernel text is classified in the window alone */
	step_tf_on(st);
}

void step_window_end(void)
{
	struct step_state *st = step_this();

	step_tf_off();
	st->win = false;
	__atomic_fetch_and(&step_windows, ~(UINT32_C(1) << ((unsigned)(st - lp_state) & 31)),
			   __ATOMIC_RELEASE);
	st->win_h = NULL;
	step_dcache_empty(st);
}

bool step_window_open(void)
{
	return step_this()->win;
}

uint64_t step_hold(void)
{
	uint64_t flags = read_rflags();

	if (flags & RFLAGS_TF)
		step_tf_off();
	return flags;
}

void step_release(uint64_t flags)
{
	struct step_state *st = step_this();

	if ((flags & RFLAGS_TF) && st->win)
		step_tf_on(st);
}

void step_gate_enter(struct trap_frame *f)
{
	struct step_state *st = step_this();

	if (!st->win || (st->active && !st->done) || (read_rflags() & RFLAGS_TF))
		return;		/* outside the window, in the run, or stepped from its stub on */
	if (f->rip != st->last_rip) {
		st->cycles += step_take(st, rdtsc());
		st->frame = f;		/* a PMI it raises samples the interrupted context */
		step_emit_kernel(st, f);
		st->frame = NULL;
	}
	step_tf_on(st);
}

/* ---- a run ---------------------------------------------------------------------- */

/*
 * step_begin and step_end are the model's own bookkeeping: a Pentium 4
 * runs its workloads unstepped and never executes them, so in the counting
 * window they run held (step_hold), like the #DB handler.
 */
void step_begin(const struct step_run *r)
{
	uint64_t held = step_hold();
	struct step_state *st = step_this();

	step_calibrate();
	st->run = *r;
	st->active = true;
	st->faulted = false;
	st->started = st->done = st->aborted = st->quiet = false;
	st->polls = st->emitted = 0;
	st->frame = NULL;
	if (!st->win) {		/* in the counting window the runner is being stepped */
		st->last_rip = 0;
		st->cycles = 0;
	}
	progress_start();
	step_dcache_empty(st);
	if (MODE_IS_64) {	/* the ia32 kernel's segments are flat but for its GS (taken as 0) */
		st->fs_base = msr_read(MSR_IA32_FS_BASE);
		st->gs_base = msr_read(MSR_IA32_GS_BASE);
	} else {
		st->fs_base = st->gs_base = 0;
	}
	step_bp_set(st, r->entry);	/* ring 3: arm before the first instruction */
	if (!st->win)
		st->resume = rdtsc();
	step_release(held);
}

void step_quiet(void)
{
	for (unsigned i = 0; i < PERCPU_MAX; i++)
		if (lp_state[i].active)
			__atomic_store_n(&lp_state[i].quiet, true, __ATOMIC_RELAXED);
}

bool step_end(void)
{
	uint64_t held = step_hold();
	struct step_state *st = step_this();
	bool aborted = st->aborted;

	step_bp_clear(st);
	st->exit_bp = false;
	st->active = false;
	progress_stop();
	step_release(held);
	return aborted;
}
