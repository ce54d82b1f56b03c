/*
 * nmiprobe.S - selftest_nmi_probe and selftest_nmi_labels for the x86-64
 * kernel (the contract is in arch/x86/selftest.c; the ia32 twin is
 * arch/x86/32/nmiprobe.S). Moved out of selftest.c unchanged so that each mode has
 * its own.
 *
 * int selftest_nmi_probe(uint32_t msr, uint64_t *value,
 *                        volatile uint32_t *icr_lo, uint32_t icr)
 * void selftest_nmi_labels(uint64_t *spin, uint64_t *spin_end, uint64_t *rdmsr)
 */

	.text
	.globl selftest_nmi_probe
	.hidden selftest_nmi_probe
	.type selftest_nmi_probe, @function
selftest_nmi_probe:
	movl %ecx, %r9d
	movl %edi, %ecx			/* RDMSR's index, set before the NMI */
	movl $0x1000000, %r8d
	movl %r9d, (%rdx)		/* the ICR write sends the NMI */
.Lnmi_spin:
	pause
	decl %r8d
	jnz .Lnmi_spin
.Lnmi_spin_end:
	movl $2, %eax			/* NMI_PROBE_NO_NMI */
	ret
.Lnmi_rdmsr:
	rdmsr
	movl %eax, (%rsi)
	movl %edx, 4(%rsi)
	xorl %eax, %eax			/* NMI_PROBE_OK */
	ret
.Lnmi_fixup:
	movl $1, %eax			/* NMI_PROBE_SKIPPED */
	ret
	.pushsection .ex_table, "aw"	/* extable.h's EXTABLE_ENTRY */
	.balign 4
	.long .Lnmi_rdmsr - .
	.long .Lnmi_fixup - .
	.popsection
	.size selftest_nmi_probe, . - selftest_nmi_probe

	.globl selftest_nmi_labels
	.hidden selftest_nmi_labels
	.type selftest_nmi_labels, @function
selftest_nmi_labels:
	leaq .Lnmi_spin(%rip), %rax
	movq %rax, (%rdi)
	leaq .Lnmi_spin_end(%rip), %rax
	movq %rax, (%rsi)
	leaq .Lnmi_rdmsr(%rip), %rax
	movq %rax, (%rdx)
	ret
	.size selftest_nmi_labels, . - selftest_nmi_labels

	.section .note.GNU-stack, "", @progbits
