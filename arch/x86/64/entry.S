/*
 * entry.S - interrupt entry stubs, the guarded-call primitives and the
 * stack switch after ExitBootServices.
 *
 * Each of the 256 vectors has a 16-byte stub at isr_stubs + 16 * vector.
 * A stub pushes a dummy error code when the CPU pushes none (every vector
 * except 8, 10-14, 17, 21, 29, 30; SDM Vol. 3A 6.13), then the vector
 * number, and jumps to isr_common, which saves the general registers in
 * the order of struct trap_frame (idt.h) and calls isr_dispatch(frame).
 * The CPU aligns RSP to 16 before pushing its frame; 5 + 2 + 15 quadwords
 * keep it aligned for the call.
 *
 * #DB (vector 1) is timestamped for the single-step engine (arch/x86/
 * step.c): its stub jumps to isr_db_entry, which reads the TSC before
 * anything else and leaves it in the frame's error-code slot (the CPU
 * pushes no error code for #DB, SDM Vol. 3A Table 6-1). On the way out,
 * any handler may ask for the TSC right before IRETQ: it sets the frame's
 * vector slot to TRAP_EXIT_STAMP (no vector has that number) and the
 * error-code slot to the address of a uint64_t, which then receives the
 * TSC (step.h). Between the two reads lie only a few instructions of this
 * file, the IRETQ, the stepped instruction and the #DB delivery; step.c
 * calibrates that and subtracts it.
 *
 * guard_call/guard_resume are setjmp/longjmp in one piece: guard_call
 * saves the callee-saved registers, RSP and RFLAGS in a struct guard_ctx
 * and calls fn(arg); guard_resume, entered from the exception handler,
 * restores them and makes that guard_call return a given value, abandoning
 * the faulting frames (which lie below the saved RSP).
 */

#include "arch/x86/gdt.h"
#include "arch/x86/mode.h"
#include "arch/x86/step.h"
#include "arch/x86/user.h"

	.text

/* Error code pushed by the CPU for these vectors; #DB takes the timestamped path. */
.macro ISR_STUB vec
	.balign 16
	.if \vec == 1
	jmp isr_db_entry
	.else
	.if (\vec == 8) || (\vec >= 10 && \vec <= 14) || (\vec == 17) || (\vec == 21) || (\vec == 29) || (\vec == 30)
	.else
	pushq $0
	.endif
	pushq $\vec
	jmp isr_common
	.endif
.endm

/* The frame's registers in three runs: the exits below restore some apart. */
.macro POP_R15_R12		/* callee-saved: a C call keeps them */
	popq %r15
	popq %r14
	popq %r13
	popq %r12
.endm

.macro POP_R11_RSI
	popq %r11
	popq %r10
	popq %r9
	popq %r8
	popq %rbp
	popq %rdi
	popq %rsi
.endm

.macro POP_RDX_RAX		/* the last four: RDTSC uses two of them */
	popq %rdx
	popq %rcx
	popq %rbx
	popq %rax
.endm

.macro POP_GPRS
	POP_R15_R12
	POP_R11_RSI
	POP_RDX_RAX
.endm

	.altmacro
	.balign 16
	.globl isr_stubs
isr_stubs:
	.set vec, 0
	.rept 256
	ISR_STUB %vec
	.set vec, vec + 1
	.endr
	/* Each stub is at most 12 bytes (pushq $0, pushq $imm32, jmp rel32). */
	.noaltmacro

isr_common:
	pushq %rax
	pushq %rbx
	pushq %rcx
	pushq %rdx
	pushq %rsi
	pushq %rdi
	pushq %rbp
	pushq %r8
	pushq %r9
	pushq %r10
	pushq %r11
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	cld
	movq %rsp, %rdi
	call isr_dispatch
	cmpq $TRAP_EXIT_STAMP, 15 * 8(%rsp)	/* the vector slot */
	je isr_exit_stamped
	cmpl $0, isr_exit_pending(%rip)
	jne isr_exit_call
isr_exit_plain:
	POP_GPRS
	addq $16, %rsp		/* vector and error code */
	iretq

/*
 * An exit call (idt.h idt_exit_call) pending on some LP: this LP's, if it
 * has one, runs after the callee-saved R15-R12 are restored (the call
 * keeps them, and RSP stays aligned), so that only the eleven other pops,
 * the frame's drop and the IRETQ follow it.
 */
isr_exit_call:
	movq %gs:PERCPU_EXIT_FN, %rax
	testq %rax, %rax
	jz isr_exit_plain
	movq $0, %gs:PERCPU_EXIT_FN
	lock decl isr_exit_pending(%rip)
	POP_R15_R12
	call *%rax
	POP_R11_RSI
	POP_RDX_RAX
	addq $16, %rsp
	iretq

/*
 * A handler asked for the TSC right before IRETQ, stored at the error-code
 * slot's address: RDX, RCX, RBX and RAX, the last four of the frame's
 * registers, are restored after the RDTSC that uses two of them.
 */
isr_exit_stamped:
	POP_R15_R12
	POP_R11_RSI
	movq 40(%rsp), %rcx	/* the error-code slot, above RDX, RCX, RBX, RAX and the vector */
	rdtsc
	movl %eax, (%rcx)
	movl %edx, 4(%rcx)
	POP_RDX_RAX
	addq $16, %rsp
	iretq

/*
 * The ring-3 exit gate (USER_EXIT_VECTOR, user.c): from ring 3, the
 * counting gate shuts first (user_gate_shut), before the common path;
 * RAX, the workload's result, is kept, the other caller-saved registers
 * are the finished workload's and are not needed. RSP is 8 mod 16 after
 * the CPU's frame, so the push aligns the call.
 */
	.globl user_exit_entry
	.hidden user_exit_entry
user_exit_entry:
	testb $3, 8(%rsp)		/* CS: from ring 3? */
	jz 1f
	pushq %rax
	movq %gs:PERCPU_GATE_CTX, %rdi
	call *%gs:PERCPU_GATE_SHUT
	popq %rax
1:	pushq $0
	pushq $USER_EXIT_VECTOR
	jmp isr_common

/*
 * The ring-3 call gate (USER_CALL_VECTOR, user.c): a counting marker from
 * ring 3 (RAX = NB_CALL_COUNT, RDI = on) first goes to the counting gate's
 * mark_fast (arch/x86/hooks.h), with nothing before it but the registers a
 * call would clobber saved (the call's contract keeps all but RAX); when it
 * did the work the call returns 0 from here, else the common path runs
 * with the registers as they came.
 */
	.globl user_call_entry
	.hidden user_call_entry
user_call_entry:
	testb $3, 8(%rsp)		/* CS: from ring 3? */
	jz 2f
	cmpl $NB_CALL_COUNT, %eax
	jne 2f
	pushq %rax
	pushq %rcx
	pushq %rdx
	pushq %rsi
	pushq %rdi
	pushq %r8
	pushq %r9
	pushq %r10
	pushq %r11
	movl %edi, %esi
	movq %gs:PERCPU_GATE_CTX, %rdi
	call *%gs:PERCPU_GATE_MARK
	testl %eax, %eax
	popq %r11
	popq %r10
	popq %r9
	popq %r8
	popq %rdi
	popq %rsi
	popq %rdx
	popq %rcx
	popq %rax
	jnz 2f
	xorl %eax, %eax
	iretq
2:	pushq $0
	pushq $USER_CALL_VECTOR
	jmp isr_common

/* #DB: the TSC first, into the error-code slot; then the common path as vector 1. */
isr_db_entry:
	pushq %rax		/* becomes the error-code slot */
	pushq %rdx		/* becomes the vector slot */
	rdtsc
	shlq $32, %rdx
	orq %rax, %rdx
	movq 8(%rsp), %rax
	movq %rdx, 8(%rsp)
	movq (%rsp), %rdx
	movq $1, (%rsp)
	jmp isr_common

/*
 * SYSCALL from a ring-3 Linux program (user.c). The processor left RIP in
 * RCX and RFLAGS in R11, cleared the RFLAGS bits IA32_FMASK names (IF and
 * TF among them, so nothing interrupts or steps this stub) and loaded CS
 * and SS from IA32_STAR, but did not switch stacks (SDM Vol. 2B SYSCALL).
 * GS still points at this LP's struct percpu (ring 3 cannot change the GS
 * base). The stub moves to the stack user_call gave TSS.RSP0 (256 bytes
 * below the kernel state it saved, 16-byte aligned; workloads.S), builds the frame an interrupt from ring 3 would have pushed
 * (SS, RSP, RFLAGS, CS, RIP, error code 0) with the vector
 * USER_SYSCALL_VECTOR, and goes the common way: the handler sees a
 * struct trap_frame and the IRETQ returns to the program with RFLAGS
 * (TF included) as it was.
 */
	.globl syscall_entry
syscall_entry:
	movq %rsp, %gs:PERCPU_SYSCALL_URSP
	movq %gs:PERCPU_USER_KERNEL_RSP, %rsp	/* TSS.RSP0 as user_call computed it */
	subq $256, %rsp
	andq $-16, %rsp
	pushq $(GDT_USER_DS | GDT_RPL3)
	pushq %gs:PERCPU_SYSCALL_URSP
	pushq %r11
	pushq $(GDT_USER_CS | GDT_RPL3)
	pushq %rcx
	pushq $0
	pushq $USER_SYSCALL_VECTOR
	jmp isr_common

/* struct guard_ctx offsets (idt.c) */
#define G_RBX		0
#define G_RBP		8
#define G_R12		16
#define G_R13		24
#define G_R14		32
#define G_R15		40
#define G_RSP		48
#define G_RFLAGS	56

/* int guard_call(struct guard_ctx *ctx, int (*fn)(void *), void *arg) */
	.globl guard_call
guard_call:
	movq %rbx, G_RBX(%rdi)
	movq %rbp, G_RBP(%rdi)
	movq %r12, G_R12(%rdi)
	movq %r13, G_R13(%rdi)
	movq %r14, G_R14(%rdi)
	movq %r15, G_R15(%rdi)
	movq %rsp, G_RSP(%rdi)
	pushfq
	popq G_RFLAGS(%rdi)
	subq $8, %rsp		/* entry RSP is 8 mod 16; make the call site 16-aligned */
	movq %rsi, %rax
	movq %rdx, %rdi
	call *%rax
	addq $8, %rsp
	ret

/* void guard_resume(struct guard_ctx *ctx, int ret) -- does not return */
	.globl guard_resume
guard_resume:
	movq G_RBX(%rdi), %rbx
	movq G_RBP(%rdi), %rbp
	movq G_R12(%rdi), %r12
	movq G_R13(%rdi), %r13
	movq G_R14(%rdi), %r14
	movq G_R15(%rdi), %r15
	movq G_RSP(%rdi), %rsp
	pushq G_RFLAGS(%rdi)
	popfq
	movl %esi, %eax
	ret			/* to guard_call's caller */

/*
 * void step_entry_probe(uint64_t stub, uint64_t cs): an interrupt's way in
 * as arch/x86/step.c measures it. The frame the CPU would push (SS, RSP,
 * RFLAGS, CS, RIP; RSP aligned to 16 first, as the CPU does), then TF set
 * and a jump to the vector's stub: the POPFQ traps after the next
 * instruction, so the first #DB finds the stub's first instruction. Never
 * returns: the #DB handler leaves it (arch_guard_leave) once the path is
 * known.
 */
	.globl step_entry_probe
step_entry_probe:
	movq %rsp, %rax
	andq $-16, %rsp
	pushq $GDT_KERNEL_DS
	pushq %rax
	pushfq
	pushq %rsi
	leaq 1f(%rip), %rax
	pushq %rax
	pushfq
	orq $0x100, (%rsp)	/* RFLAGS_TF */
	popfq
	jmp *%rdi
1:	ud2

/* void arch_call_on_stack(uint64_t top, void (*fn)(void *), void *arg) */
	.globl arch_call_on_stack
arch_call_on_stack:
	cli
	movq %rdi, %rsp
	xorl %ebp, %ebp
	movq %rdx, %rdi
	call *%rsi
1:	cli
	hlt
	jmp 1b

	.section .note.GNU-stack, "", @progbits
