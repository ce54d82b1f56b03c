/*
 * sumloop.S - an nbprof program in assembly: main(argc, argv) runs a 3-instruction
 * loop 1000 times. Retired instructions, from main's first to its ret:
 * 2 (mov, mov) + 3 * 1000 (add, sub, jnz) + 1 (ret) = 3003.
 */
	.text
	.globl main
	.type main, @function
main:
	movl $1000, %ecx
	xorl %eax, %eax
1:	addl $1, %eax
	subl $1, %ecx
	jnz 1b
	ret
	.size main, . - main
	.section .note.GNU-stack, "", @progbits
