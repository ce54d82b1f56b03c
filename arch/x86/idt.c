/*
 * idt.c - the IDT, the C side of interrupt entry, exception reports and
 * guarded runs.
 *
 * Vector map (exceptions: SDM Vol. 3A Table 6-1; "err" = CPU pushes an error
 * code; all gates are interrupt gates, so IF is clear in handlers; the
 * gate format is the mode's, arch/x86/64/gdt.c / 32/gdt.c):
 *
 *   vec      name  err  IST  handling
 *   0        #DE    -    -   report; unwind the guarded run, else halt
 *   1        #DB    -    -   installed handler (single step), else as #DE
 *   2        NMI    -    1   installed handler (PMI by NMI), else report, resume
 *   3        #BP    -    -   report, resume after the int3 (gate DPL 3)
 *   4-7      #OF #BR #UD #NM          as #DE
 *   8        #DF   0     2   as #DE (abort class: the guarded run is unwound,
 *                            its stack was saved before the fault)
 *   9        (coprocessor segment overrun, reserved)
 *   10-14    #TS #NP #SS #GP #PF  yes   as #DE; #PF also prints CR2
 *   16-17    #MF #AC(err)     as #DE
 *   18       #MC    -    3   report and halt, never unwound
 *   19-21    #XM #VE #CP(err) as #DE
 *   22-31    reserved (29 #VC, 30 #SX push an error code) as #DE
 *   32-47    8259 PICs, remapped and fully masked (pic.c); only spurious
 *            IRQ 7/15 can arrive: counted, no EOI
 *   48-239   free
 *   240-254  local APIC sources, see lapic.h (timer, IPIs, PMI, error):
 *            installed handler, then LAPIC EOI
 *   255      LAPIC spurious vector: ignored, no EOI (SDM Vol. 3A 10.9)
 *
 * Guarded runs and the nesting depth of reports are per logical processor
 * (struct percpu, arch/x86/percpu.h): a fault on LP1 unwinds LP1's guarded
 * run and never LP0's. Reports name the LP that faulted.
 *
 * Before any report, a #GP or #UD at an instruction listed in the exception
 * table (extable.h) resumes at its fixup address: that is how msr_read_safe
 * and rdpmc_safe survive them. No other vector is fixed up: an NMI or a #DB
 * trap taken just before a guarded instruction has that instruction as its
 * saved RIP, and must run its handler and return to it, not skip it.
 */
#include <stddef.h>

#include "arch/x86/arch.h"
#include "arch/x86/console.h"
#include "arch/x86/cpu.h"
#include "arch/x86/extable.h"
#include "arch/x86/gdt.h"
#include "arch/x86/idt.h"
#include "arch/x86/ksyms.h"
#include "arch/x86/lapic.h"
#include "arch/x86/mode.h"
#include "arch/x86/panic.h"
#include "arch/x86/percpu.h"
#include "arch/x86/pic.h"
#include "arch/x86/step.h"

#define ISR_STUB_SIZE		16

/*
 * struct guard_ctx: the layout entry.S (guard_call/guard_resume) uses;
 * arch/x86/32/entry.S keeps EBX, EBP, ESI, EDI in the rbx, rbp, r12, r13 slots.
 */
struct guard_ctx {
	uint64_t rbx, rbp, r12, r13, r14, r15, rsp, rflags;
	struct guard_ctx *prev;
};

extern char isr_stubs[] __attribute__((visibility("hidden")));
extern const int32_t __ex_table_start[] __attribute__((visibility("hidden")));
extern const int32_t __ex_table_end[] __attribute__((visibility("hidden")));

int guard_call(struct guard_ctx *ctx, int (*fn)(void *), void *arg);
void guard_resume(struct guard_ctx *ctx, int ret) __attribute__((noreturn));
void isr_dispatch(struct trap_frame *f);

static trap_handler_fn handlers[IDT_NVECTORS];
static uint64_t unhandled;

static const char *const exc_names[32] = {
	[0] = "divide error",		[1] = "debug",
	[2] = "NMI",			[3] = "breakpoint",
	[4] = "overflow",		[5] = "BOUND range exceeded",
	[6] = "invalid opcode",		[7] = "device not available",
	[8] = "double fault",		[9] = "coprocessor segment overrun",
	[10] = "invalid TSS",		[11] = "segment not present",
	[12] = "stack-segment fault",	[13] = "general protection",
	[14] = "page fault",		[15] = "reserved",
	[16] = "x87 floating-point error", [17] = "alignment check",
	[18] = "machine check",		[19] = "SIMD floating-point",
	[20] = "virtualization",	[21] = "control protection",
	[29] = "VMM communication",	[30] = "security",
};

static const char *const exc_mnemonics[32] = {
	"#DE", "#DB", "NMI", "#BP", "#OF", "#BR", "#UD", "#NM",
	"#DF", "#CSO", "#TS", "#NP", "#SS", "#GP", "#PF", "#15",
	"#MF", "#AC", "#MC", "#XM", "#VE", "#CP", "#22", "#23",
	"#24", "#25", "#26", "#27", "#28", "#VC", "#SX", "#31",
};

const char *idt_vector_mnemonic(unsigned vector)
{
	return vector < 32 ? exc_mnemonics[vector] : "INT";
}

uint64_t idt_unhandled_count(void)
{
	return unhandled;
}

static unsigned idt_ist(unsigned vec)
{
	switch (vec) {
	case VEC_NMI:	return IST_NMI;
	case VEC_DF:	return IST_DF;
	case VEC_MC:	return IST_MC;
	default:	return 0;
	}
}

void idt_load(void)
{
	idt_gate_load();
}

void idt_init(void)
{
	for (unsigned v = 0; v < IDT_NVECTORS; v++)
		idt_gate_set(v, (uint64_t)(uintptr_t)(isr_stubs + v * ISR_STUB_SIZE), idt_ist(v),
			     v == VEC_BP);
	idt_load();
}

uint64_t idt_stub(unsigned vector)
{
	return (uint64_t)(uintptr_t)(isr_stubs + (vector % IDT_NVECTORS) * ISR_STUB_SIZE);
}

void idt_set_handler(uint8_t vector, trap_handler_fn fn)
{
	handlers[vector] = fn;
}

uint64_t extable_fixup(uint64_t rip)
{
	for (const int32_t *e = __ex_table_start; e < __ex_table_end; e += 2) {
		uint64_t insn = (uint64_t)(uintptr_t)&e[0] + (int64_t)e[0];

		if (insn == rip)
			return (uint64_t)(uintptr_t)&e[1] + (int64_t)e[1];
	}
	return 0;
}

static void print_addr(const char *label, uint64_t addr)
{
	uint64_t off;
	const char *sym = ksym_lookup(addr, &off);

	if (sym)
		kprintf("  %s 0x%016llx <%s+0x%llx>\n", label, (unsigned long long)addr, sym,
			(unsigned long long)off);
	else
		kprintf("  %s 0x%016llx\n", label, (unsigned long long)addr);
}

static void print_pf_error(uint64_t err)
{
	kprintf("  (page fault: %s, %s access, %s mode%s)\n",
		err & 1 ? "protection violation" : "page not present",
		err & 2 ? "write" : (err & 16 ? "instruction fetch" : "read"),
		err & 4 ? "user" : "supervisor", err & 8 ? ", reserved bit set" : "");
}

static void exception_report(const struct trap_frame *f)
{
	unsigned v = (unsigned)f->vector;
	const char *name = v < 32 && exc_names[v] ? exc_names[v] : "reserved";

	kprintf("\n*** exception %s (vector %u) %s, error code 0x%llx on LP%u\n", exc_mnemonics[v],
		v, name, (unsigned long long)f->error, percpu_this()->index);
	print_addr("RIP", f->rip);
	if (v == VEC_PF)
		print_pf_error(f->error);
	kprintf("  CS  0x%04llx  RFLAGS 0x%016llx  RSP 0x%016llx  SS 0x%04llx\n",
		(unsigned long long)f->cs, (unsigned long long)f->rflags,
		(unsigned long long)f->rsp, (unsigned long long)f->ss);
	kprintf("  CR2 0x%016llx  CR3 0x%016llx\n", (unsigned long long)read_cr2(),
		(unsigned long long)read_cr3());
	kprintf("  RAX 0x%016llx  RBX 0x%016llx  RCX 0x%016llx\n", (unsigned long long)f->rax,
		(unsigned long long)f->rbx, (unsigned long long)f->rcx);
	kprintf("  RDX 0x%016llx  RSI 0x%016llx  RDI 0x%016llx\n", (unsigned long long)f->rdx,
		(unsigned long long)f->rsi, (unsigned long long)f->rdi);
	kprintf("  RBP 0x%016llx  R8  0x%016llx  R9  0x%016llx\n", (unsigned long long)f->rbp,
		(unsigned long long)f->r8, (unsigned long long)f->r9);
	kprintf("  R10 0x%016llx  R11 0x%016llx  R12 0x%016llx\n", (unsigned long long)f->r10,
		(unsigned long long)f->r11, (unsigned long long)f->r12);
	kprintf("  R13 0x%016llx  R14 0x%016llx  R15 0x%016llx\n", (unsigned long long)f->r13,
		(unsigned long long)f->r14, (unsigned long long)f->r15);
}

static void exception_unwind_or_halt(const struct trap_frame *f)
{
	unsigned v = (unsigned)f->vector;
	struct percpu *pc = percpu_this();
	struct guard_ctx *g = pc->guard_top;

	if (g && v != VEC_NMI && v != VEC_MC) {
		if (pc->index == 0)
			kprintf("*** command aborted by %s\n", exc_mnemonics[v]);
		else
			kprintf("*** LP%u: work aborted by %s; LP%u goes back to idle\n", pc->index,
				exc_mnemonics[v], pc->index);
		pc->guard_top = g->prev;
		pc->guard_vector = (int)v;
		pc->exception_depth = 0;
		guard_resume(g, ARCH_GUARD_FAULTED);
	}
	if (pc->index == 0) {
		kprintf("*** kernel halted\n");
	} else {
		pc->state = LP_DEAD;
		kprintf("*** LP%u halted (LP0 carries on)\n", pc->index);
	}
	arch_halt();
}

/*
 * The faults a guarded instruction raises on purpose: RDMSR/WRMSR of a
 * missing MSR or reserved bits #GP(0), RDPMC with a bad index #GP (SDM
 * Vol. 2B, RDMSR, WRMSR, RDPMC), RDPMC where the CPU lacks it #UD
 * (QEMU notes P5).
 */
static bool exception_has_fixup(unsigned v)
{
	return v == VEC_GP || v == VEC_UD;
}

/*
 * Vectors whose frame's RIP is the instruction that raised them (SDM Vol. 3A
 * 6.5, Table 6-1: faults), not the one after it (#DB, #BP, #OF are traps or
 * either) nor an interrupt's (NMI) nor #MC's (abort).
 */
static bool exception_is_fault(unsigned v)
{
	return v < VEC_FIRST_EXTERNAL && v != VEC_DB && v != VEC_NMI && v != VEC_BP && v != 4 /* #OF */ &&
	       v != VEC_MC && v != VEC_DF;
}

static void exception_dispatch(struct trap_frame *f)
{
	unsigned v = (unsigned)f->vector;
	struct percpu *pc;
	uint64_t fixup = exception_has_fixup(v) ? extable_fixup(f->rip) : 0;

	if (exception_is_fault(v))
		step_fault(f);	/* a stepped instruction's: its microcode's work counts (step.h) */
	if (fixup) {
		f->rip = fixup;
		return;
	}
	if (handlers[v]) {
		handlers[v](f);
		return;
	}
	pc = percpu_this();
	if (++pc->exception_depth > 1) {
		kprintf("\n*** nested exception %s at 0x%llx on LP%u while reporting; halted\n",
			exc_mnemonics[v], (unsigned long long)f->rip, pc->index);
		if (pc->index != 0)
			pc->state = LP_DEAD;
		arch_halt();
	}
	exception_report(f);
	if (v == VEC_BP || v == VEC_NMI) {
		/* A trap (RIP is past the int3) or an unclaimed NMI: carry on. */
		kprintf("*** %s: resuming after it\n", exc_mnemonics[v]);
		pc->exception_depth--;
		return;
	}
	exception_unwind_or_halt(f);
}

/*
 * LPs with an exit call pending (idt_exit_call): isr_common looks at the
 * LP's own slot (%gs:PERCPU_EXIT_FN) only when this is not zero, so an
 * interrupt before the percpu areas are set up never reads through GS.
 */
uint32_t isr_exit_pending;

_Static_assert(offsetof(struct percpu, exit_fn) == PERCPU_EXIT_FN, "percpu layout");

void idt_exit_call(void (*fn)(void))
{
	idt_exit_call_on(percpu_this(), fn);
}

void idt_exit_call_now(void)
{
	struct percpu *pc = percpu_this();
	void (*fn)(void) = (void (*)(void))(uintptr_t)pc->exit_fn;

	if (!fn)
		return;
	pc->exit_fn = 0;
	__atomic_fetch_sub(&isr_exit_pending, 1, __ATOMIC_RELAXED);
	fn();
}

static __attribute__((noinline)) void isr_dispatch_other(struct trap_frame *f)
{
	unsigned v = (unsigned)f->vector;

	/* an NMI with a handler went straight there (isr_dispatch) */
	if (v == VEC_NMI || v == LAPIC_PMI_VECTOR || v == LAPIC_TIMER_VECTOR)
		step_handler_enter(f);	/* in the counting window the handler counts (step.h) */
	if (v < VEC_FIRST_EXTERNAL) {
		exception_dispatch(f);
		return;
	}
	if (v == LAPIC_SPURIOUS_VECTOR || pic_is_vector(v)) {
		unhandled++;
		return;
	}
	if (handlers[v])
		handlers[v](f);
	else
		unhandled++;
	lapic_eoi();
}

/*
 * A #DB with a handler comes once per stepped instruction (arch/x86/step.c):
 * it goes straight to its handler, by a tail call from a function with no
 * frame of its own. An NMI with a handler (a PMI's, prof/perf.c) goes
 * straight to it too - no fault, no fixup, no EOI: its way in, which a
 * counter counting CPL 0 counts, is this function's test and call - and
 * every other vector to isr_dispatch_other.
 */
void isr_dispatch(struct trap_frame *f)
{
	trap_handler_fn db = handlers[VEC_DB], nmi;

	if (f->vector == VEC_DB && db) {
		db(f);
	} else if (f->vector == VEC_NMI && (nmi = handlers[VEC_NMI]) != NULL) {
		step_handler_enter(f);	/* as isr_dispatch_other's: a PMI by NMI's way in */
		nmi(f);
	} else {
		isr_dispatch_other(f);
	}
}

int arch_run_guarded(int (*fn)(void *), void *arg)
{
	struct percpu *pc = percpu_this();
	struct guard_ctx ctx = { .prev = pc->guard_top };
	int ret;

	pc->guard_top = &ctx;
	ret = guard_call(&ctx, fn, arg);
	pc->guard_top = ctx.prev;	/* also when guard_resume() brought us back */
	return ret;
}

int arch_run_unguarded(int (*fn)(void *), void *arg)
{
	struct percpu *pc = percpu_this();
	void *saved = pc->guard_top;
	int ret;

	pc->guard_top = NULL;
	ret = fn(arg);
	pc->guard_top = saved;	/* a trap (int3) comes back: guarded again */
	return ret;
}

void arch_guard_leave(int ret)
{
	struct percpu *pc = percpu_this();
	struct guard_ctx *g = pc->guard_top;

	if (!g)
		panic("arch_guard_leave outside a guarded run");
	pc->guard_top = g->prev;
	guard_resume(g, ret);
}

int arch_last_guard_vector(void)
{
	return percpu_this()->guard_vector;
}
