/*
 * fpmix_body.h - the arithmetic of one wl_fpmix iteration, shared by the
 * 64-bit and the 32-bit kernel's workloads (arch/x86/64/workloads.S, arch/x86/32/workloads.S):
 * the same instructions in either mode, and nothing in them names a
 * mode's registers. What each one counts as: the comment above wl_fpmix.
 * The numbers continue the loop's own count of instructions per iteration
 * (the two FILDs before it are 1/it and 2/it).
 */
#ifndef NBPROF_ARCH_X86_FPMIX_BODY_H
#define NBPROF_ARCH_X86_FPMIX_BODY_H

#ifdef __ASSEMBLER__
.macro FPMIX_BODY
	fadd %st(1), %st			/* 3/it: x87 */
	fstp %st(0)				/* 4/it */
	fstp %st(0)				/* 5/it */
	paddd %mm1, %mm0			/* 6/it: 64-bit MMX */
	psubd %mm1, %mm0			/* 7/it: 64-bit MMX */
	emms					/* 8/it */
	paddd %xmm1, %xmm0			/* 9/it: 128-bit MMX */
	psubd %xmm1, %xmm0			/* 10/it: 128-bit MMX */
	pxor %xmm1, %xmm0			/* 11/it: 128-bit MMX */
	addps %xmm1, %xmm0			/* 12/it: packed SP */
	mulps %xmm1, %xmm0			/* 13/it: packed SP */
	subps %xmm1, %xmm0			/* 14/it: packed SP */
	maxps %xmm1, %xmm0			/* 15/it: packed SP */
	addpd %xmm1, %xmm0			/* 16/it: packed DP */
	mulpd %xmm1, %xmm0			/* 17/it: packed DP */
	subpd %xmm1, %xmm0			/* 18/it: packed DP */
	maxpd %xmm1, %xmm0			/* 19/it: packed DP */
	minpd %xmm1, %xmm0			/* 20/it: packed DP */
	addss %xmm1, %xmm0			/* 21/it: scalar SP */
	mulss %xmm1, %xmm0			/* 22/it: scalar SP */
	subss %xmm1, %xmm0			/* 23/it: scalar SP */
	maxss %xmm1, %xmm0			/* 24/it: scalar SP */
	minss %xmm1, %xmm0			/* 25/it: scalar SP */
	sqrtss %xmm1, %xmm0			/* 26/it: scalar SP */
	addsd %xmm1, %xmm0			/* 27/it: scalar DP */
	mulsd %xmm1, %xmm0			/* 28/it: scalar DP */
	subsd %xmm1, %xmm0			/* 29/it: scalar DP */
	maxsd %xmm1, %xmm0			/* 30/it: scalar DP */
	minsd %xmm1, %xmm0			/* 31/it: scalar DP */
	sqrtsd %xmm1, %xmm0			/* 32/it: scalar DP */
	addsd %xmm1, %xmm0			/* 33/it: scalar DP */
.endm
#endif

#endif
