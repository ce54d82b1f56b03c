/*
 * crt0.S - the start file of an nbprof program (the nbprof SDK).
 *
 * nbprof calls _start like a C function: RDI = argc, RSI = argv, a return
 * address on the stack (RSP = 8 mod 16, SysV ABI 3.2.2). _start keeps its
 * stack pointer so nb_exit can unwind to it from any depth, calls main,
 * and returns main's status (zero-extended to 64 bits) to the kernel's
 * runner, which restores everything else itself.
 *
 * Every function has its own section, so the linker's --gc-sections drops
 * what a program does not call; the kernel starts counting switched off
 * only when nb_count_start (and its label nb_count_region) was kept.
 */
	.section .text.nb_start, "ax", @progbits
	.globl _start
	.type _start, @function
_start:
	pushq %rbp
	movq %rsp, %rbp			/* RSP is 16-aligned now, as main expects */
	movq %rsp, nb_sp0(%rip)
	call main
.Lnb_start_return:
	movl %eax, %eax			/* status: an int, zero-extended */
	popq %rbp
	ret
	.size _start, . - _start

	.section .text.nb_exit, "ax", @progbits
	.globl nb_exit
	.type nb_exit, @function
nb_exit:
	movl %edi, %eax
	movq nb_sp0(%rip), %rsp		/* back to _start's frame */
	popq %rbp
	ret
	.size nb_exit, . - nb_exit

	.section .text.nb_count_start, "ax", @progbits
	.globl nb_count_start
	.type nb_count_start, @function
	.globl nb_count_region
nb_count_region:			/* present only when nb_count_start is used */
nb_count_start:
	movl $2, %eax			/* NB_CALL_COUNT */
	movl $1, %edi
	int $0x82
	ret
	.size nb_count_start, . - nb_count_start

	.section .text.nb_count_stop, "ax", @progbits
	.globl nb_count_stop
	.type nb_count_stop, @function
nb_count_stop:
	movl $2, %eax
	xorl %edi, %edi
	int $0x82
	ret
	.size nb_count_stop, . - nb_count_stop

	.section .bss.nb_sp0, "aw", @nobits
	.balign 8
nb_sp0:
	.quad 0

	.section .note.GNU-stack, "", @progbits
