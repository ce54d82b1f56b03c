/*
 * crt0_32.S - the start file of an nbprof program for the 32-bit kernel
 * (the nbprof SDK; `nbprof-cc -m32` links it instead of crt0.S).
 *
 * The 32-bit kernel's runners call every workload, a program's _start too,
 * with four 64-bit argument slots on the stack, low half first, under the
 * i386 System V ABI: at entry (%esp) is the return address, 4(%esp) argc
 * and 12(%esp) argv (their high halves are zero). _start keeps its frame
 * pointer so nb_exit can unwind to it from any depth, calls
 * main(argc, argv) with the stack 16-byte aligned (i386 psABI 2.2.2), and
 * returns main's status in EAX to the runner, which restores everything
 * else itself. The image is position-independent without a GOT pointer:
 * nb_sp0 is reached relative to the address a call pushes.
 *
 * Every function has its own section, so the linker's --gc-sections drops
 * what a program does not call; the kernel starts counting switched off
 * only when nb_count_start (and its label nb_count_region) was kept. The
 * markers preserve EDI, which the i386 ABI makes callee-saved.
 */
	.section .text.nb_start, "ax", @progbits
	.globl _start
	.type _start, @function
_start:
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
	.size _start, . - _start

	.section .text.nb_exit, "ax", @progbits
	.globl nb_exit
	.type nb_exit, @function
nb_exit:
	movl 4(%esp), %eax		/* status */
	call 1f
1:	popl %ecx
	movl nb_sp0 - 1b(%ecx), %esp	/* back to _start's frame */
	popl %ebp
	ret
	.size nb_exit, . - nb_exit

	.section .text.nb_count_start, "ax", @progbits
	.globl nb_count_start
	.type nb_count_start, @function
	.globl nb_count_region
nb_count_region:			/* present only when nb_count_start is used */
nb_count_start:
	pushl %edi
	movl $2, %eax			/* NB_CALL_COUNT */
	movl $1, %edi
	int $0x82
	popl %edi
	ret
	.size nb_count_start, . - nb_count_start

	.section .text.nb_count_stop, "ax", @progbits
	.globl nb_count_stop
	.type nb_count_stop, @function
nb_count_stop:
	pushl %edi
	movl $2, %eax
	xorl %edi, %edi
	int $0x82
	popl %edi
	ret
	.size nb_count_stop, . - nb_count_stop

	.section .bss.nb_sp0, "aw", @nobits
	.balign 4
nb_sp0:
	.long 0

	.section .note.GNU-stack, "", @progbits
