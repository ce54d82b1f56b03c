/*
 * fpassist_body.h - the set-up and the arithmetic of one wl_fpassist
 * iteration, shared by the 64-bit and the 32-bit kernel's workloads
 * (arch/x86/64/workloads.S, arch/x86/32/workloads.S): the same
 * instructions in either mode, with the constant block's base register as
 * the macros' argument. The block (built by the caller on its stack):
 *   0: single 00000001H (the smallest denormal)   4: single 1.0
 *   8: double 1 (the smallest denormal, 16 bytes) 16: double 1.0
 *  24: the MXCSR value to run with             28: the integer -20000
 * What each instruction counts as: the comment above wl_fpassist.
 */
#ifndef NBPROF_ARCH_X86_FPASSIST_BODY_H
#define NBPROF_ARCH_X86_FPASSIST_BODY_H

#ifdef __ASSEMBLER__
/* 8 instructions: MXCSR, FNINIT, the registers the loop reads (moves, no arithmetic). */
.macro FPASSIST_SETUP b
	ldmxcsr 24(\b)
	fninit
	movss 0(\b), %xmm1			/* { denormal, 0, 0, 0 } */
	movss 4(\b), %xmm2			/* { 1.0, 0, 0, 0 } */
	movsd 8(\b), %xmm3			/* { denormal, 0 } */
	movsd 16(\b), %xmm4			/* { 1.0, 0 } */
	movaps %xmm1, %xmm6
	shufps $0, %xmm6, %xmm6			/* four denormals */
.endm

/*
 * 19 instructions, run once: one x87 instruction of each of the other
 * assists (none on a denormal input), the stack empty again after them.
 */
.macro FPASSIST_EDGES b
	fildl 28(\b)				/* a load: -20000 */
	fld1					/* 1.0 above it */
	fscale					/* 2^-20000: underflows to 0 (POAU) */
	fstp %st(0)				/* a move */
	fchs					/* 20000: no assist */
	fld1
	fscale					/* 2^20000: overflows to infinity (POAO) */
	fninit					/* the stack empty */
	fld1
	fadd %st(1), %st			/* ST(1) is empty: stack underflow (FPSU) */
	fld1					/* 2 registers */
	fld1
	fld1
	fld1
	fld1
	fld1
	fld1					/* 8: the stack is full */
	fld1					/* a push onto a full stack: overflow (FPSO) */
	fninit
.endm

/* 16 instructions; the SSE_input_assist requests of each in brackets. */
.macro FPASSIST_BODY b
	fld1					/* 1/it: x87, normal */
	fadds 0(\b)				/* 2/it: x87, denormal single (PREA) */
	fmuls 4(\b)				/* 3/it: x87, normal */
	fmull 8(\b)				/* 4/it: x87, denormal double (PREA) */
	fstp %st(0)				/* 5/it: a move */
	movaps %xmm2, %xmm0			/* 6/it: a move */
	addss %xmm1, %xmm0			/* 7/it: [1] */
	addps %xmm1, %xmm0			/* 8/it: [1] */
	mulss %xmm2, %xmm0			/* 9/it: [0] */
	mulps %xmm2, %xmm0			/* 10/it: [0] */
	addps %xmm6, %xmm0			/* 11/it: [4] */
	movapd %xmm4, %xmm5			/* 12/it: a move */
	addsd %xmm3, %xmm5			/* 13/it: [1] */
	addpd %xmm3, %xmm5			/* 14/it: [1] */
	mulsd %xmm4, %xmm5			/* 15/it: [0] */
	mulpd %xmm4, %xmm5			/* 16/it: [0] */
.endm
#endif

#endif
