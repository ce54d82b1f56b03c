/*
 * arch/x86/32/entry.S - the ia32 kernel's interrupt entry stubs, guarded-call
 * primitives and stack switch: the 32-bit twin of 64/entry.S.
 *
 * The IDT gates (arch/x86/32/gdt.c) point at 16-byte stubs, isr_stubs + 16 * vector,
 * as in entry.S. In 32-bit protected mode the CPU pushes EFLAGS, CS, EIP
 * and, only on a change of privilege (from ring 3), ESP and SS before them
 * (SDM Vol. 3A 6.12.1, Figure 6-4); an error code follows for vectors 8,
 * 10-14, 17, 21, 29, 30. A stub pushes a zero error code when the CPU
 * pushes none, then a zero high half of the error code, then the vector,
 * and jumps to isr_common, which pushes the general registers, DS, ES and
 * GS (the raw frame, R_* below) and loads the kernel's data segments and,
 * from ring 3, its per-LP GS (an i386 Linux program points GS at its own
 * TLS segment, gdt.h; kernel code always runs with the per-LP one, also
 * before its descriptor is filled in); the IRET path restores all three.
 *
 * The C code sees the same struct trap_frame as in the 64-bit kernel
 * (idt.h, 64-bit fields): isr_common builds one below the raw frame, each
 * register zero-extended, R8-R15 zero, RSP/SS the interrupted stack (the
 * pushed ESP/SS from ring 3; from ring 0 the address just above EFLAGS
 * and the current SS), calls isr_dispatch(frame) and writes the fields a
 * handler may change back into the raw frame before IRET: EIP, EFLAGS, the
 * general registers (not after an NMI, T_VEC_NMI below) and, from ring 3,
 * ESP and SS. EIP and EFLAGS changes are what the handlers make (fixups,
 * TF, unwinding to an exit); a gate's system call sets EAX.
 *
 * #DB: the TSC first, as in entry.S: isr_db_entry leaves it in the error
 * code slots (low and high half) before anything else. The exit stamp
 * works the same way too: a handler sets the frame's vector to
 * TRAP_EXIT_STAMP and its error code to the address of a uint64_t, which
 * receives the TSC right before the IRET (only that exit writes the error
 * code back).
 *
 * guard_call/guard_resume keep the i386 System V callee-saved registers
 * EBX, EBP, ESI, EDI in the rbx, rbp, r12, r13 slots of struct guard_ctx
 * (idt.c), ESP and EFLAGS in rsp and rflags.
 *
 * No IST in 32-bit mode: NMI, #DF and #MC run on the stack they
 * interrupted (or TSS.ESP0 from ring 3), so a broken kernel stack is not
 * survived here as in the 64-bit kernel.
 */

#include "arch/x86/gdt.h"
#include "arch/x86/step.h"
#include "arch/x86/user.h"

	.text

.macro ISR_STUB vec
	.balign 16
	.if \vec == 1
	jmp isr_db_entry
	.else
	.if (\vec == 8) || (\vec >= 10 && \vec <= 14) || (\vec == 17) || (\vec == 21) || (\vec == 29) || (\vec == 30)
	.else
	pushl $0		/* error code */
	.endif
	pushl $0		/* its high half */
	pushl $\vec
	jmp isr_common
	.endif
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
	/* At most 14 bytes a stub (pushl $0 twice, pushl $imm32, jmp rel32). */
	.noaltmacro

/*
 * The raw frame: offsets from ESP after isr_common's pushes - PUSHAL's
 * eight slots (the ESP it pushes is not used: POPAL skips it), then DS,
 * ES and GS. One instruction each way for the general registers: every
 * interrupt's way in and out is counted at CPL 0 when a counter runs.
 */
#define R_GS		0
#define R_ES		4
#define R_DS		8
#define R_EDI		12
#define R_ESI		16
#define R_EBP		20
#define R_EBX		28
#define R_EDX		32
#define R_ECX		36
#define R_EAX		40
#define R_VEC		44
#define R_ERR_HI	48
#define R_ERR		52
#define R_EIP		56
#define R_CS		60
#define R_EFLAGS	64
#define R_ESP		68	/* only from ring 3 */
#define R_SS		72	/* only from ring 3 */

/* struct trap_frame (idt.h): offsets of its 64-bit fields. */
#define T_R15		0
#define T_RBP		64
#define T_RDI		72
#define T_RSI		80
#define T_RDX		88
#define T_RCX		96
#define T_RBX		104
#define T_RAX		112
#define T_VEC		120
#define T_ERR		128
#define T_RIP		136
#define T_CS		144
#define T_RFLAGS	152
#define T_RSP		160
#define T_SS		168
#define T_SIZE		176

/*
 * idt.h VEC_NMI. Its handlers (prof/perf.c the PMI's, arch/x86/selftest.c
 * the probe's) write no general register of the frame, only EIP or
 * EFLAGS: the NMI's way out skips the other seven write-backs, 14
 * instructions of every PMI by NMI, which a counter counting CPL 0 counts.
 */
#define T_VEC_NMI	2

/* T field (low half) <- 32-bit register; the high half is 0 already (isr_common zeroes the frame). */
.macro WIDEN reg, t
	movl \reg, \t(%edi)
.endm

/* raw slot -> T field, through EAX */
.macro WIDEN_RAW r, t
	movl \r(%esi), %eax
	WIDEN %eax, \t
.endm

/* T field (low half) -> raw slot, through EAX */
.macro NARROW t, r
	movl \t(%edi), %eax
	movl %eax, \r(%esi)
.endm

/* The raw frame's segment registers, in the reverse of isr_common's pushes. */
.macro POP_RAW_SEGS
	popl %gs
	popl %es
	popl %ds
.endm

.macro POP_RAW
	POP_RAW_SEGS
	popal
.endm

isr_common:
	pushal
	pushl %ds
	pushl %es
	pushl %gs
	movl $GDT_KERNEL_DS, %eax
	movl %eax, %ds
	movl %eax, %es
	testl $3, R_CS(%esp)
	jnz 6f
	movl %gs, %eax			/* ring 0 with a program's TLS in GS: a trap */
	cmpl $(GDT_USER_TLS | GDT_RPL3), %eax	/* (#DB, NMI) in a ring-3 gate's stub */
	jne 5f
6:	movl $(GDT_PERCPU | GDT_RPL3), %eax	/* from ring 3: a Linux program's GS holds its TLS */
	movl %eax, %gs
5:	cld
	movl %esp, %esi			/* the raw frame */
	subl $T_SIZE, %esp
	andl $-16, %esp
	movl %esp, %edi			/* the trap frame, zeroed: R15..R8 and every high half */
	xorl %eax, %eax
	movl $(T_SIZE / 4), %ecx
	rep stosl			/* one instruction (a loop of 16 stores was 33 of every entry) */
	movl %esp, %edi
	WIDEN_RAW R_EBP, T_RBP
	WIDEN_RAW R_EDI, T_RDI
	WIDEN_RAW R_ESI, T_RSI
	WIDEN_RAW R_EDX, T_RDX
	WIDEN_RAW R_ECX, T_RCX
	WIDEN_RAW R_EBX, T_RBX
	WIDEN_RAW R_EAX, T_RAX
	WIDEN_RAW R_VEC, T_VEC
	movl R_ERR(%esi), %eax
	movl %eax, T_ERR(%edi)
	movl R_ERR_HI(%esi), %eax
	movl %eax, T_ERR + 4(%edi)
	WIDEN_RAW R_EIP, T_RIP
	WIDEN_RAW R_CS, T_CS
	WIDEN_RAW R_EFLAGS, T_RFLAGS
	testl $3, R_CS(%esi)
	jz 2f
	WIDEN_RAW R_ESP, T_RSP		/* from ring 3: the CPU pushed ESP and SS */
	WIDEN_RAW R_SS, T_SS
	jmp 3f
2:	leal R_ESP(%esi), %eax		/* from ring 0: ESP was just above EFLAGS */
	WIDEN %eax, T_RSP
	movl %ss, %eax
	WIDEN %eax, T_SS
3:	subl $12, %esp
	pushl %edi
	call isr_dispatch
	addl $16, %esp
	cmpl $T_VEC_NMI, T_VEC(%edi)	/* an NMI's handlers change no general register */
	je 7f
	NARROW T_RBP, R_EBP
	NARROW T_RDI, R_EDI
	NARROW T_RSI, R_ESI
	NARROW T_RDX, R_EDX
	NARROW T_RCX, R_ECX
	NARROW T_RBX, R_EBX
	NARROW T_RAX, R_EAX
7:	NARROW T_RIP, R_EIP
	NARROW T_RFLAGS, R_EFLAGS
	testl $3, R_CS(%esi)
	jz 4f
	NARROW T_RSP, R_ESP
	NARROW T_SS, R_SS
4:	cmpl $TRAP_EXIT_STAMP, T_VEC(%edi)
	je isr_exit_stamp_at
	movl %esi, %esp
	cmpl $0, isr_exit_pending
	jne isr_exit_call
isr_exit_plain:
	POP_RAW
	addl $12, %esp			/* vector, error code high and low */
	iret

/*
 * An exit call (idt.h idt_exit_call) pending on some LP: this LP's, if it
 * has one (GS is the kernel's here: isr_common loaded it when it was not),
 * runs on the trap frame's aligned stack, with the raw frame already
 * written back, so that only the pops, the frame's drop and the IRET
 * follow it. EDI and ESI survive the call (cdecl).
 */
isr_exit_call:
	movl %gs:PERCPU_EXIT_FN, %eax
	testl %eax, %eax
	jz isr_exit_plain
	movl $0, %gs:PERCPU_EXIT_FN
	lock decl isr_exit_pending
	leal -16(%edi), %esp		/* as at isr_dispatch's call */
	call *%eax
	movl %esi, %esp
	POP_RAW
	addl $12, %esp
	iret

/*
 * A handler asked for the TSC right before IRET, stored at the error code's
 * address: the RDTSC and the stores use EAX, EDX and ECX, which POPAL
 * restores after them.
 */
isr_exit_stamp_at:		/* the error code is the address: the only exit that reads it */
	NARROW T_ERR, R_ERR
	movl %esi, %esp
	POP_RAW_SEGS
	movl (R_ERR - R_EDI)(%esp), %ecx	/* the error code, above POPAL's eight slots */
	rdtsc
	movl %eax, (%ecx)
	movl %edx, 4(%ecx)
	popal
	addl $12, %esp
	iret

/* #DB: the TSC first, into the error code (low) and its high half; then vector 1. */
/*
 * The ring-3 exit gate (USER_EXIT_VECTOR, user.c): from the exit trampoline
 * (a Linux program's system calls come through the same vector, and go
 * straight to the common path), the counting gate shuts first, before the
 * common path; EAX, the workload's result, is kept (EDX and ECX are the
 * finished workload's), GS is the kernel's per-LP one from here on (the
 * run ends: isr_common saves it as the program's). DS and ES are still the
 * user's flat data selector, which the C code can use as the kernel's.
 */
	.globl user_exit_entry
	.hidden user_exit_entry
user_exit_entry:
	testb $3, 4(%esp)		/* CS: from ring 3? */
	jz 2f
	pushl %ecx			/* from the trampoline, not a Linux program's call? */
	call 1f
1:	popl %ecx
	leal (wl_user_exit + USER_EXIT_INSN_LEN - 1b)(%ecx), %ecx
	cmpl %ecx, 4(%esp)
	popl %ecx
	jne 2f
	pushl %eax
	movl $(GDT_PERCPU | GDT_RPL3), %eax	/* a Linux program's GS holds its TLS */
	movl %eax, %gs
	movl %gs:PERCPU_GATE_CTX, %eax
	call *%gs:PERCPU_GATE_SHUT
	popl %eax
2:	pushl $0
	pushl $0
	pushl $USER_EXIT_VECTOR
	jmp isr_common

/*
 * The ring-3 call gate (USER_CALL_VECTOR, user.c): a counting marker from
 * ring 3 (EAX = NB_CALL_COUNT, EDI = on) first goes to the counting gate's
 * mark_fast (arch/x86/hooks.h, regparm(2)), with ECX, EDX and GS saved
 * (the call's contract keeps all but EAX; the C code keeps the rest; GS is
 * the kernel's per-LP one meanwhile, a Linux program's TLS); when it
 * did the work the call returns 0 from here, else the common path runs
 * with the registers as they came.
 */
	.globl user_call_entry
	.hidden user_call_entry
user_call_entry:
	testb $3, 4(%esp)		/* CS: from ring 3? */
	jz 2f
	cmpl $NB_CALL_COUNT, %eax
	jne 2f
	pushl %eax
	pushl %ecx
	pushl %edx
	pushl %gs			/* a Linux program's TLS: put back below */
	movl $(GDT_PERCPU | GDT_RPL3), %eax
	movl %eax, %gs
	movl %edi, %edx
	movl %gs:PERCPU_GATE_CTX, %eax
	call *%gs:PERCPU_GATE_MARK
	popl %gs
	testl %eax, %eax
	popl %edx
	popl %ecx
	popl %eax
	jnz 2f
	xorl %eax, %eax
	iret
2:	pushl $0
	pushl $0
	pushl $USER_CALL_VECTOR
	jmp isr_common

isr_db_entry:
	pushl %eax			/* becomes the error code: TSC low */
	pushl %edx			/* becomes the high half: TSC high */
	rdtsc
	xchgl %eax, 4(%esp)
	xchgl %edx, (%esp)
	pushl $1
	jmp isr_common

/* struct guard_ctx offsets (idt.c) */
#define G_EBX		0
#define G_EBP		8
#define G_ESI		16
#define G_EDI		24
#define G_ESP		48
#define G_EFLAGS	56

/* int guard_call(struct guard_ctx *ctx, int (*fn)(void *), void *arg) */
	.globl guard_call
guard_call:
	movl 4(%esp), %ecx
	movl %ebx, G_EBX(%ecx)
	movl %ebp, G_EBP(%ecx)
	movl %esi, G_ESI(%ecx)
	movl %edi, G_EDI(%ecx)
	movl %esp, G_ESP(%ecx)
	pushfl
	popl G_EFLAGS(%ecx)
	movl 8(%esp), %eax
	movl 12(%esp), %edx
	subl $12, %esp			/* the call site 16-aligned, as after a call from C */
	pushl %edx
	call *%eax
	addl $16, %esp
	ret

/* void guard_resume(struct guard_ctx *ctx, int ret) -- does not return */
	.globl guard_resume
guard_resume:
	movl 4(%esp), %ecx
	movl 8(%esp), %eax
	movl G_EBX(%ecx), %ebx
	movl G_EBP(%ecx), %ebp
	movl G_ESI(%ecx), %esi
	movl G_EDI(%ecx), %edi
	movl G_ESP(%ecx), %esp
	pushl G_EFLAGS(%ecx)
	popfl
	ret				/* to guard_call's caller */

/*
 * void step_entry_probe(uint32_t stub, uint32_t cs): an interrupt's way in
 * as arch/x86/step.c measures it. The frame the CPU would push (SS and ESP
 * only for a CS of RPL 3, then EFLAGS, CS, EIP), then TF set and a jump to
 * the vector's stub: the POPFL traps after the next instruction, so the
 * first #DB finds the stub's first instruction. Never returns: the #DB
 * handler leaves it (arch_guard_leave) once the path is known.
 */
	.globl step_entry_probe
step_entry_probe:
	movl 4(%esp), %ecx		/* stub */
	movl 8(%esp), %edx		/* cs */
	movl %esp, %eax
	testl $3, %edx
	jz 1f
	pushl $(GDT_USER_DS | GDT_RPL3)
	pushl %eax
1:	pushfl
	pushl %edx
	pushl $2f
	pushfl
	orl $0x100, (%esp)		/* EFLAGS_TF */
	popfl
	jmp *%ecx
2:	ud2

/* void arch_call_on_stack(uint64_t top, void (*fn)(void *), void *arg) */
	.globl arch_call_on_stack
arch_call_on_stack:
	cli
	movl 12(%esp), %eax		/* fn (top takes two slots) */
	movl 16(%esp), %edx		/* arg */
	movl 4(%esp), %esp		/* top, low half: the kernel lives below 4 GiB */
	xorl %ebp, %ebp
	subl $12, %esp
	pushl %edx
	call *%eax
1:	cli
	hlt
	jmp 1b

	.section .note.GNU-stack, "", @progbits
