/*
 * trampoline.S - the real-mode start of an application processor.
 *
 * arch/x86/smp.c copies smp_tramp_size bytes from smp_tramp_start to the 4 KiB page
 * below 1 MiB that boot/ reserved (bootinfo.low_page, 9F000H under OVMF),
 * fills the parameter block at smp_tramp_params and sends INIT-SIPI-SIPI
 * with vector low_page >> 12. The LP then starts here in real mode with
 * CS = low_page >> 4, IP = 0 (SDM Vol. 3A 8.4.4 and 10.6.1), and walks
 * 16 -> 32 -> 64 bit the way QEMU notes section 5 measured:
 *
 *  16-bit  base = CS << 4 in ESI; patch the GDT pointer and the two far
 *          pointers with the base (the code is position independent and
 *          only knows its base at run time); LGDT; CR0.PE; far jump.
 *  32-bit  flat data segments; CR4 (PAE), CR3 (below 4 GiB), EFER (LME,
 *          NXE: the BSP's value without LMA), CR0 (the BSP's: PG, WP...),
 *          which activates IA-32e mode; far jump to the 64-bit selector.
 *  64-bit  RSP = the LP's stack, RDI = its argument, call the C entry.
 *
 * Everything below is reached relative to the base, and every field of
 * the parameter block is written by smp.c before each start.
 */

#include "arch/x86/gdt.h"
#include "arch/x86/regs.h"

#define TRAMP_SEL_CODE64	0x08
#define TRAMP_SEL_DATA		0x10
#define TRAMP_SEL_CODE32	0x18

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
	leal OFF(tramp_64)(%esi), %eax
	movl %eax, OFF(tramp_far64)

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
	movl $MSR_IA32_EFER, %ecx
	movl OFF(tp_efer)(%esi), %eax
	movl OFF(tp_efer) + 4(%esi), %edx
	wrmsr
	movl OFF(tp_cr0)(%esi), %eax
	movl %eax, %cr0				/* PG on: IA-32e mode, compatibility submode */
	ljmpl *OFF(tramp_far64)(%esi)

	.code64
tramp_64:
	movl %esi, %esi				/* upper halves are undefined after the switch */
	movw $TRAMP_SEL_DATA, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	movq OFF(tp_stack)(%rsi), %rsp
	movq OFF(tp_arg)(%rsi), %rdi
	movq OFF(tp_entry)(%rsi), %rax
	xorl %ebp, %ebp
	call *%rax				/* does not return */
1:	cli
	hlt
	jmp 1b

	.balign 8
tramp_gdt:
	.quad 0
	.quad DESC_KERNEL_CODE64		/* 08H: 64-bit code, as gdt.c */
	.quad DESC_KERNEL_DATA			/* 10H: flat data */
	.quad DESC_KERNEL_CODE32		/* 18H: flat 32-bit code */
tramp_gdt_end:

	.balign 8
tramp_gdtr:
	.word tramp_gdt_end - tramp_gdt - 1
	.long 0					/* patched: base + OFF(tramp_gdt) */
	.balign 8
tramp_far32:
	.long 0					/* patched: base + OFF(tramp_32) */
	.word TRAMP_SEL_CODE32
	.balign 8
tramp_far64:
	.long 0					/* patched: base + OFF(tramp_64) */
	.word TRAMP_SEL_CODE64

/* struct smp_tramp_params (smp.c): keep the order and the 8-byte fields. */
	.balign 8
	.globl smp_tramp_params
	.hidden smp_tramp_params
smp_tramp_params:
tp_cr3:		.quad 0
tp_cr4:		.quad 0
tp_efer:	.quad 0
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
