/*
 * arch/x86/32/nmiprobe.S - selftest_nmi_probe and selftest_nmi_labels for the ia32
 * kernel: the 32-bit twin of 64/nmiprobe.S (contract in arch/x86/selftest.c).
 * cdecl: the arguments are on the stack; ESI keeps the value pointer and
 * EDI the spin count, both saved, so every way out pops them.
 */

	.text
	.globl selftest_nmi_probe
	.hidden selftest_nmi_probe
	.type selftest_nmi_probe, @function
selftest_nmi_probe:
	pushl %esi
	pushl %edi
	movl 12(%esp), %ecx		/* RDMSR's index, set before the NMI */
	movl 16(%esp), %esi		/* value */
	movl 20(%esp), %edx		/* icr_lo */
	movl 24(%esp), %eax		/* icr */
	movl $0x1000000, %edi
	movl %eax, (%edx)		/* the ICR write sends the NMI */
.Lnmi_spin:
	pause
	decl %edi
	jnz .Lnmi_spin
.Lnmi_spin_end:
	movl $2, %eax			/* NMI_PROBE_NO_NMI */
	jmp .Lnmi_out
.Lnmi_rdmsr:
	rdmsr
	movl %eax, (%esi)
	movl %edx, 4(%esi)
	xorl %eax, %eax			/* NMI_PROBE_OK */
	jmp .Lnmi_out
.Lnmi_fixup:
	movl $1, %eax			/* NMI_PROBE_SKIPPED */
.Lnmi_out:
	popl %edi
	popl %esi
	ret
	.pushsection .ex_table, "aw"	/* extable.h's EXTABLE_ENTRY */
	.balign 4
	.long .Lnmi_rdmsr - .
	.long .Lnmi_fixup - .
	.popsection
	.size selftest_nmi_probe, . - selftest_nmi_probe

/* The labels' run-time addresses, found from this function's own (PIC, no relocation). */
	.globl selftest_nmi_labels
	.hidden selftest_nmi_labels
	.type selftest_nmi_labels, @function
selftest_nmi_labels:
	call 1f
1:	popl %ecx
	movl 4(%esp), %edx
	leal .Lnmi_spin - 1b(%ecx), %eax
	movl %eax, (%edx)
	movl $0, 4(%edx)
	movl 8(%esp), %edx
	leal .Lnmi_spin_end - 1b(%ecx), %eax
	movl %eax, (%edx)
	movl $0, 4(%edx)
	movl 12(%esp), %edx
	leal .Lnmi_rdmsr - 1b(%ecx), %eax
	movl %eax, (%edx)
	movl $0, 4(%edx)
	ret
	.size selftest_nmi_labels, . - selftest_nmi_labels

	.section .note.GNU-stack, "", @progbits
