/*
 * arch/x86/32/trampoline.S - the real-mode start of an application processor in the
 * ia32 kernel: the 32-bit twin of 64/trampoline.S, one step shorter.
 *
 * arch/x86/smp.c copies smp_tramp_size bytes from smp_tramp_start to the low page and
 * fills smp_tramp_params exactly as for 64/trampoline.S (same struct, 8-byte
 * fields; this code reads their low halves and ignores tp_efer). The LP
 * starts here in real mode with CS = low_page >> 4, IP = 0 (SDM Vol. 3A
 * 8.4.4 and 10.6.1):
 *
 *  16-bit  base = CS << 4 in ESI; patch the GDT pointer and the far
 *          pointer with it; LGDT; CR0.PE; far jump.
 *  32-bit  flat data segments; CR4 (PAE), CR3 (the BSP's PDPT), CR0 (the
 *          BSP's: PG, WP, MP...), which turns PAE paging on (SDM Vol. 3A
 *          9.9.1); ESP = the LP's stack; call entry(arg), cdecl.
 *
 * The GDT here is the trampoline's own; smp_ap_main() loads the LP's
 * (arch/x86/32/gdt.c) first thing, with the same selector numbers.
 */

#include "arch/x86/gdt.h"
#include "arch/x86/regs.h"

#define TRAMP_SEL_CODE32	0x08
#define TRAMP_SEL_DATA		0x10

#define OFF(sym)		((sym) - smp_tramp_start)

	.text
	.balign 16
	.globl smp_tramp_start
	.hidden smp_tramp_start
smp_tramp_start:
	.code16
	cli
	cld
	movw %cs, %ax
	movw %ax, %ds
	xorl %esi, %esi
	movw %ax, %si
	shll $4, %esi				/* ESI = physical base of this page */

	leal OFF(tramp_gdt)(%esi), %eax
	movl %eax, OFF(tramp_gdtr) + 2
	leal OFF(tramp_32)(%esi), %eax
	movl %eax, OFF(tramp_far32)

	lgdtl OFF(tramp_gdtr)
	movl %cr0, %eax
	orl $CR0_PE, %eax
	movl %eax, %cr0
	ljmpl *OFF(tramp_far32)

	.code32
tramp_32:
	movw $TRAMP_SEL_DATA, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	movl OFF(tp_cr4)(%esi), %eax
	movl %eax, %cr4
	movl OFF(tp_cr3)(%esi), %eax
	movl %eax, %cr3
	movl OFF(tp_cr0)(%esi), %eax
	movl %eax, %cr0				/* PG on: PAE paging, identity mapped */
	movl OFF(tp_stack)(%esi), %esp
	movl OFF(tp_arg)(%esi), %edx
	movl OFF(tp_entry)(%esi), %eax
	xorl %ebp, %ebp
	subl $12, %esp
	pushl %edx
	call *%eax				/* does not return */
1:	cli
	hlt
	jmp 1b

	.balign 8
tramp_gdt:
	.quad 0
	.quad DESC_KERNEL_CODE32		/* 08H: flat 32-bit code, as arch/x86/32/gdt.c */
	.quad DESC_KERNEL_DATA			/* 10H: flat data */
tramp_gdt_end:

	.balign 8
tramp_gdtr:
	.word tramp_gdt_end - tramp_gdt - 1
	.long 0					/* patched: base + OFF(tramp_gdt) */
	.balign 8
tramp_far32:
	.long 0					/* patched: base + OFF(tramp_32) */
	.word TRAMP_SEL_CODE32

/* struct smp_tramp_params (smp.c): keep the order and the 8-byte fields. */
	.balign 8
	.globl smp_tramp_params
	.hidden smp_tramp_params
smp_tramp_params:
tp_cr3:		.quad 0
tp_cr4:		.quad 0
tp_efer:	.quad 0				/* unused here */
tp_cr0:		.quad 0
tp_stack:	.quad 0
tp_entry:	.quad 0
tp_arg:		.quad 0
.Lsmp_tramp_end:

/*
 * The size smp.c copies, as a constant: an end label would be a symbol at the
 * address of the next file's first function, and profilers that name an
 * address by the symbols at it (elfutils, hence hotspot) would take it there.
 */
	.section .rodata
	.balign 4
	.globl smp_tramp_size
	.hidden smp_tramp_size
smp_tramp_size:	.long .Lsmp_tramp_end - smp_tramp_start

	.section .note.GNU-stack, "", @progbits
