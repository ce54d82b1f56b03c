/*
 * crt0.S - the start file of an nbprof program (the nbprof SDK), for
 * x86-64 programs and, built with -m32 (`nbprof-cc -m32`), i386 ones.
 *
 * x86-64: nbprof calls _start like a C function: RDI = argc, RSI = argv, a
 * return address on the stack (RSP = 8 mod 16, SysV ABI 3.2.2). _start
 * keeps its stack pointer so nb_exit can unwind to it from any depth,
 * calls main, and returns main's status (zero-extended to 64 bits) to the
 * kernel's runner, which restores everything else itself.
 *
 * i386: the 32-bit kernel's runners call every workload, a program's
 * _start too, with four 64-bit argument slots on the stack, low half
 * first, under the i386 System V ABI: at entry (%esp) is the return
 * address, 4(%esp) argc and 12(%esp) argv (their high halves are zero).
 * _start keeps its frame pointer so nb_exit can unwind to it from any
 * depth, calls main(argc, argv) with the stack 16-byte aligned (i386
 * psABI 2.2.2), and returns main's status in EAX to the runner, which
 * restores everything else itself. The image is position-independent
 * without a GOT pointer: nb_sp0 is reached relative to the address a call
 * pushes. The markers preserve EDI, which the i386 ABI makes callee-saved
 * (x86-64 SysV makes RDI caller-saved: nothing to keep).
 *
 * Every function has its own section, so the linker's --gc-sections drops
 * what a program does not call; the kernel starts counting switched off
 * only when nb_count_start (and its label NB_COUNT_REGION) was kept.
 */
#include "nbprof_abi.h"

#if defined(__x86_64__)
#define SAVE_EDI
#define RESTORE_EDI
#define PTR_ALIGN	8
#define PTR		.quad
#else
#define SAVE_EDI	pushl %edi
#define RESTORE_EDI	popl %edi
#define PTR_ALIGN	4
#define PTR		.long
#endif

	.section .text.nb_start, "ax", @progbits
	.globl _start
	.type _start, @function
_start:
#if defined(__x86_64__)
	pushq %rbp
	movq %rsp, %rbp			/* RSP is 16-aligned now, as main expects */
	movq %rsp, nb_sp0(%rip)
	call main
.Lnb_start_return:
	movl %eax, %eax			/* status: an int, zero-extended */
	popq %rbp
	ret
#else
	pushl %ebp
	movl %esp, %ebp
	call 1f
1:	popl %eax
	movl %ebp, nb_sp0 - 1b(%eax)	/* the frame nb_exit returns through */
	andl $-16, %esp
	subl $8, %esp
	pushl 16(%ebp)			/* argv: the second 64-bit slot's low half */
	pushl 8(%ebp)			/* argc */
	call main
.Lnb_start_return:
	leave
	ret
#endif
	.size _start, . - _start

	.section .text.nb_exit, "ax", @progbits
	.globl nb_exit
	.type nb_exit, @function
nb_exit:
#if defined(__x86_64__)
	movl %edi, %eax
	movq nb_sp0(%rip), %rsp		/* back to _start's frame */
	popq %rbp
	ret
#else
	movl 4(%esp), %eax		/* status */
	call 1f
1:	popl %ecx
	movl nb_sp0 - 1b(%ecx), %esp	/* back to _start's frame */
	popl %ebp
	ret
#endif
	.size nb_exit, . - nb_exit

	.section .text.nb_count_start, "ax", @progbits
	.globl nb_count_start
	.type nb_count_start, @function
	.globl NB_COUNT_REGION
NB_COUNT_REGION:			/* present only when nb_count_start is used */
nb_count_start:
	SAVE_EDI
	movl $NB_CALL_COUNT, %eax
	movl $1, %edi
	int $NB_CALL_VECTOR
	RESTORE_EDI
	ret
	.size nb_count_start, . - nb_count_start

	.section .text.nb_count_stop, "ax", @progbits
	.globl nb_count_stop
	.type nb_count_stop, @function
nb_count_stop:
	SAVE_EDI
	movl $NB_CALL_COUNT, %eax
	xorl %edi, %edi
	int $NB_CALL_VECTOR
	RESTORE_EDI
	ret
	.size nb_count_stop, . - nb_count_stop

	.section .bss.nb_sp0, "aw", @nobits
	.balign PTR_ALIGN
nb_sp0:
	PTR 0

	.section .note.GNU-stack, "", @progbits
