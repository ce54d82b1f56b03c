/*
 * workloads.S - the built-in workload bodies and the code that enters them.
 *
 * Bodies live in .wltext, which linker.ld places on whole pages of their
 * own (__workload_text_start/_end): a ring-3 run makes exactly those pages
 * user-accessible. They use no data of their own and call nothing outside
 * .wltext, so they run unchanged at CPL 0 and CPL 3. Each follows the SysV
 * ABI (arguments in RDI, RSI, RDX, RCX; result in RAX; RBX, RBP, R12-R15
 * preserved) and, except `empty`, keeps a frame pointer.
 *
 * Every body is written so its retired-instruction count is exact; the
 * numbers in the right-hand column are the counts that workload/workload.c
 * documents (per call, per iteration "/it", per repetition "/rep").
 *
 * The runners (wl_call_ring0, user_call, user_return) are ordinary kernel
 * text; see arch/x86/user.h. The stack pointers they save live in this
 * LP's struct percpu (%gs-relative, arch/x86/percpu.h), so LP0 and LP1 can
 * each be inside a workload at the same time.
 */
#include "arch/x86/fpassist_body.h"
#include "arch/x86/fpmix_body.h"
#include "arch/x86/user.h"

	.section .wltext, "ax", @progbits

/* uint64_t wl_empty(void) -- 1 instruction */
	.globl wl_empty
	.hidden wl_empty
	.type wl_empty, @function
wl_empty:
	ret					/* 1 */
	.size wl_empty, . - wl_empty

/*
 * uint64_t wl_loop(uint64_t n) -- n >= 1; returns n.
 * 4 + 3n + 2 = 3n + 6 instructions (WL_LOOP_K = 3, WL_LOOP_C = 6);
 * the jnz is taken n - 1 times and falls through once.
 */
	.globl wl_loop
	.hidden wl_loop
	.type wl_loop, @function
wl_loop:
	pushq %rbp				/* 1 */
	movq %rsp, %rbp				/* 2 */
	movq %rdi, %rcx				/* 3 */
	xorl %eax, %eax				/* 4 */
1:	addq $1, %rax				/* 1/it */
	subq $1, %rcx				/* 2/it */
	jnz 1b					/* 3/it */
	popq %rbp				/* 5 */
	ret					/* 6 */
	.size wl_loop, . - wl_loop

/*
 * uint64_t wl_smc(uint64_t n) -- n >= 1; returns n.
 * Self-modifying code: each iteration runs `movb $imm8, %al` (B0 ib) and
 * then stores CL into that instruction's immediate, a write into code the
 * iteration has just executed (so the trace cache holds it: a machine
 * clear on a Pentium 4, SDM Vol. 3A 11.6). .wltext is writable (the
 * kernel maps itself read-write, arch/x86/64/paging.c), at CPL 3 too.
 * 4 + 4n + 3 = 4n + 7 instructions; the jnz is taken n - 1 times.
 */
	.globl wl_smc
	.hidden wl_smc
	.type wl_smc, @function
wl_smc:
	pushq %rbp				/* 1 */
	movq %rsp, %rbp				/* 2 */
	movq %rdi, %rcx				/* 3 */
	xorl %eax, %eax				/* 4 */
1:	movb $0, %al				/* 1/it: B0 ib, patched below */
	movb %cl, 1b+1(%rip)			/* 2/it: into its immediate */
	subq $1, %rcx				/* 3/it */
	jnz 1b					/* 4/it */
	movq %rdi, %rax				/* 5 */
	popq %rbp				/* 6 */
	ret					/* 7 */
	.size wl_smc, . - wl_smc

/*
 * uint64_t wl_branch_<pattern>(uint64_t n, uint64_t seed) -- n >= 1.
 * Returns the number of iterations whose pattern branch was NOT taken.
 * 6 + n * (C + 4) + (not taken) + 2 instructions, C = instructions that
 * compute the condition into R8 (1, or 11 for random). The pattern branch
 * is the `jnz 2f`; the loop's own `jnz 1b` closes each iteration.
 */
.macro WL_BRANCH name, pattern
	.globl \name
	.hidden \name
	.type \name, @function
\name:
	pushq %rbp				/* 1 */
	movq %rsp, %rbp				/* 2 */
	movq %rdi, %rcx				/* 3: iterations left */
	xorl %eax, %eax				/* 4: not-taken count */
	movq %rsi, %r9				/* 5: xorshift state */
	movl $1, %r8d				/* 6: alternate starts from 1 */
1:
	.if \pattern == 0			/* taken: C = 1 */
	movl $1, %r8d
	.elseif \pattern == 1			/* nottaken: C = 1 */
	xorl %r8d, %r8d
	.elseif \pattern == 2			/* alternate: C = 1 (0, 1, 0, 1, ...) */
	xorl $1, %r8d
	.else					/* random: C = 11, xorshift64 13/7/17 */
	movq %r9, %r10
	shlq $13, %r10
	xorq %r10, %r9
	movq %r9, %r10
	shrq $7, %r10
	xorq %r10, %r9
	movq %r9, %r10
	shlq $17, %r10
	xorq %r10, %r9
	movq %r9, %r8
	andl $1, %r8d
	.endif
	testq %r8, %r8				/* C+1 */
	jnz 2f					/* C+2: the pattern branch */
	addq $1, %rax				/* only when not taken */
2:	subq $1, %rcx				/* C+3 */
	jnz 1b					/* C+4 */
	popq %rbp
	ret
	.size \name, . - \name
.endm

	WL_BRANCH wl_branch_taken, 0
	WL_BRANCH wl_branch_nottaken, 1
	WL_BRANCH wl_branch_alternate, 2
	WL_BRANCH wl_branch_random, 3

/*
 * uint64_t wl_calls(uint64_t depth, uint64_t n) -- depth, n >= 1.
 * Per repetition: lea, call, sub, jnz (4) + wl_calls_level(depth - 1).
 * wl_calls_level(0) = 6 instructions, wl_calls_level(d) = 8 + level(d - 1),
 * so level(d) = 8d + 6 and a repetition is 8 * depth + 2 instructions:
 * 6 + n * (8 * depth + 2) + 4 in all.
 */
	.globl wl_calls
	.hidden wl_calls
	.type wl_calls, @function
wl_calls:
	pushq %rbp				/* 1 */
	movq %rsp, %rbp				/* 2 */
	pushq %rbx				/* 3 */
	pushq %r12				/* 4 */
	movq %rdi, %rbx				/* 5 */
	movq %rsi, %r12				/* 6 */
1:	leaq -1(%rbx), %rdi			/* 1/rep */
	call wl_calls_level			/* 2/rep */
	subq $1, %r12				/* 3/rep */
	jnz 1b					/* 4/rep */
	popq %r12
	popq %rbx
	popq %rbp
	ret					/* 4 */
	.size wl_calls, . - wl_calls

	.type wl_calls_level, @function
wl_calls_level:
	pushq %rbp
	movq %rsp, %rbp
	testq %rdi, %rdi
	jz 2f					/* taken at the deepest level only */
	subq $1, %rdi
	call wl_calls_level
2:	popq %rbp
	ret
	.size wl_calls_level, . - wl_calls_level

/*
 * uint64_t wl_indirect(uint64_t n) -- n >= 1; returns n.
 * Per iteration: an indirect CALL through R8 (FF /2) to wl_indirect_leaf,
 * which keeps a frame pointer, adds 1 to RAX and returns (5 instructions);
 * an indirect JMP through R9 (FF /4) over a never executed ud2, so the
 * jump's target is not its fall-through and it counts as taken; then the
 * closing sub; jnz. Both targets come from RIP-relative LEAs: the same
 * bytes work at CPL 0 and 3 and need no relocation.
 * 6 + 9n + 2 = 9n + 8 instructions (K = 9, C = 8). Branches: n indirect
 * calls, n + 1 rets and n indirect jumps, all taken; the jnz is taken
 * n - 1 times and falls through once.
 */
	.globl wl_indirect
	.hidden wl_indirect
	.type wl_indirect, @function
wl_indirect:
	pushq %rbp				/* 1 */
	movq %rsp, %rbp				/* 2 */
	movq %rdi, %rcx				/* 3: iterations left */
	xorl %eax, %eax				/* 4 */
	leaq wl_indirect_leaf(%rip), %r8	/* 5: the call's target */
	leaq 2f(%rip), %r9			/* 6: the jump's target */
1:	call *%r8				/* 1/it: FF /2, then 2-6/it in the leaf */
	jmp *%r9				/* 7/it: FF /4 */
	ud2					/* never executed */
2:	subq $1, %rcx				/* 8/it */
	jnz 1b					/* 9/it */
	popq %rbp				/* 7 */
	ret					/* 8 */
	.size wl_indirect, . - wl_indirect

	.type wl_indirect_leaf, @function
wl_indirect_leaf:
	pushq %rbp				/* 2/it */
	movq %rsp, %rbp				/* 3/it */
	addq $1, %rax				/* 4/it */
	popq %rbp				/* 5/it */
	ret					/* 6/it */
	.size wl_indirect_leaf, . - wl_indirect_leaf

/*
 * uint64_t wl_memwalk(const uint8_t *buf, uint64_t size, uint64_t stride,
 *                     uint64_t passes) -- all >= 1; returns the byte sum.
 * M = ceil(size / stride) loads per pass:
 * 4 + passes * (1 + 5M + 2) + 2 = 6 + passes * (3 + 5M) instructions.
 */
	.globl wl_memwalk
	.hidden wl_memwalk
	.type wl_memwalk, @function
wl_memwalk:
	pushq %rbp				/* 1 */
	movq %rsp, %rbp				/* 2 */
	xorl %eax, %eax				/* 3 */
	movq %rcx, %r11				/* 4: passes left */
1:	xorl %r10d, %r10d			/* 1/pass: offset */
2:
.Lmw_load:
	movzbl (%rdi,%r10), %r8d		/* 1/load */
	addq %r8, %rax				/* 2/load */
	addq %rdx, %r10				/* 3/load */
	cmpq %rsi, %r10				/* 4/load */
	jb 2b					/* 5/load */
	subq $1, %r11				/* 2/pass */
	jnz 1b					/* 3/pass */
.Lmw_pop:
	popq %rbp
.Lmw_ret:
	ret
	.size wl_memwalk, . - wl_memwalk

/*
 * The loads wl_memwalk retires, in the order of struct selftest_loads
 * (selftest/selftest.h): none before the walk, one per iteration (the movzbl),
 * none per pass, then the pop and the ret. selftest's PEBS check names
 * the instruction each record must point at from it.
 */
	.pushsection .rodata
	.globl wl_memwalk_loads
	.hidden wl_memwalk_loads
	.balign 4
wl_memwalk_loads:
	.long 0, 1, 0, 2
	.long .Lmw_load - wl_memwalk, .Lmw_pop - wl_memwalk, .Lmw_ret - wl_memwalk
	.long 0, 0, 0, 0, 0
	.size wl_memwalk_loads, . - wl_memwalk_loads
	.popsection

/*
 * uint64_t wl_chase(void *start, uint64_t n) -- n >= 1: follows n pointers
 * from start, each load's address the value the one before loaded (the
 * chain is built by workloads.c); returns the last pointer. 4 + 3n + 3
 * instructions.
 */
	.globl wl_chase
	.hidden wl_chase
	.type wl_chase, @function
wl_chase:
	pushq %rbp				/* 1 */
	movq %rsp, %rbp				/* 2 */
	movq %rdi, %rax				/* 3 */
	movq %rsi, %rcx				/* 4 */
1:	movq (%rax), %rax			/* 1/load */
	subq $1, %rcx				/* 2/load */
	jnz 1b					/* 3/load */
	xorl %edx, %edx				/* 5 */
	popq %rbp				/* 6 */
	ret					/* 7 */
	.size wl_chase, . - wl_chase

/*
 * The store buffer's cases (workload `stores`, pmu/model/p4_sbuf.c): n >= 1
 * iterations over buf, 5 + 4n + 4 = 4n + 9 instructions; each returns 0.
 * uint64_t wl_st_forward(uint8_t *buf, uint64_t n, uint64_t stride): a
 *   2-byte store and a 4-byte load from the same address (a forward that
 *   fails: the load is wider than the store);
 * uint64_t wl_st_alias(uint8_t *buf, uint64_t n, uint64_t stride): a store
 *   at buf and a load 4 MiB further (the same bits 21:6, so 15:6 too);
 * uint64_t wl_st_stride(uint8_t *buf, uint64_t n, uint64_t stride): a
 *   4-byte store every stride bytes;
 * uint64_t wl_st_nt(uint8_t *buf, uint64_t n, uint64_t stride): a 4-byte
 *   MOVNTI every stride bytes.
 */
.macro WL_STORES name, first, second
	.globl \name
	.hidden \name
	.type \name, @function
\name:
	pushq %rbp				/* 1 */
	movq %rsp, %rbp				/* 2 */
	movq %rsi, %rcx				/* 3: iterations */
	movq %rdx, %r8				/* 4: stride */
	movq %rdi, %rax				/* 5: buf */
1:	\first					/* 1/it */
	\second					/* 2/it */
	subq $1, %rcx				/* 3/it */
	jnz 1b					/* 4/it */
	xorl %eax, %eax				/* 6 */
	xorl %edx, %edx				/* 7 */
	popq %rbp				/* 8 */
	ret					/* 9 */
	.size \name, . - \name
.endm

	WL_STORES wl_st_forward, "movw %cx, (%rax)", "movl (%rax), %edx"
	WL_STORES wl_st_alias, "movl %ecx, (%rax)", "movl 0x400000(%rax), %edx"
	WL_STORES wl_st_stride, "movl %ecx, (%rax)", "addq %r8, %rax"
	WL_STORES wl_st_nt, "movnti %ecx, (%rax)", "addq %r8, %rax"

/*
 * uint64_t wl_copy(uint8_t *buf, uint64_t size) -- size >= 1: copies
 * buf[0, size) to buf[size, 2 * size) with one REP MOVSB (DF is clear, as
 * the SysV ABI guarantees at a call). 9 instructions for any size; returns 0.
 */
	.globl wl_copy
	.hidden wl_copy
	.type wl_copy, @function
wl_copy:
	pushq %rbp				/* 1 */
	movq %rsp, %rbp				/* 2 */
	movq %rsi, %rcx				/* 3: count */
	movq %rdi, %rsi				/* 4: source = buf */
	addq %rcx, %rdi				/* 5: destination = buf + size */
	rep movsb				/* 6 */
	movq %rcx, %rax				/* 7 */
	popq %rbp				/* 8 */
	ret					/* 9 */
	.size wl_copy, . - wl_copy

/* uint64_t wl_spin(uint64_t ticks) -- spins until ticks TSC cycles passed; returns them. */
	.globl wl_spin
	.hidden wl_spin
	.type wl_spin, @function
wl_spin:
	pushq %rbp
	movq %rsp, %rbp
	rdtsc
	shlq $32, %rdx
	orq %rdx, %rax
	movq %rax, %r9				/* start */
1:	pause
	rdtsc
	shlq $32, %rdx
	orq %rdx, %rax
	subq %r9, %rax
	cmpq %rdi, %rax
	jb 1b
	popq %rbp
	ret
	.size wl_spin, . - wl_spin

/*
 * uint64_t wl_halt(uint64_t ticks) -- CPL 0 only. HLT with interrupts
 * enabled until ticks TSC cycles passed (the runner keeps a periodic LAPIC
 * timer going as the wake-up); RFLAGS.IF is restored on return.
 */
	.globl wl_halt
	.hidden wl_halt
	.type wl_halt, @function
wl_halt:
	pushq %rbp
	movq %rsp, %rbp
	pushfq
	rdtsc
	shlq $32, %rdx
	orq %rdx, %rax
	movq %rax, %r9
1:	sti
	hlt
	cli
	rdtsc
	shlq $32, %rdx
	orq %rdx, %rax
	subq %r9, %rax
	cmpq %rdi, %rax
	jb 1b
	popfq
	popq %rbp
	ret
	.size wl_halt, . - wl_halt

/* uint64_t wl_synthetic(uint64_t n) -- n >= 1: n times `int 0x81`; 3n + 5 instructions. */
	.globl wl_synthetic
	.hidden wl_synthetic
	.type wl_synthetic, @function
wl_synthetic:
	pushq %rbp				/* 1 */
	movq %rsp, %rbp				/* 2 */
	movq %rdi, %rcx				/* 3 */
1:	int $USER_SYNTH_VECTOR			/* 1/it */
	subq $1, %rcx				/* 2/it */
	jnz 1b					/* 3/it */
	popq %rbp				/* 4 */
	ret					/* 5 */
	.size wl_synthetic, . - wl_synthetic

/* uint64_t wl_fault_user(const uint64_t *kernel_word) -- 4 instructions at CPL 0; #PF at CPL 3. */
	.globl wl_fault_user
	.hidden wl_fault_user
	.type wl_fault_user, @function
wl_fault_user:
	pushq %rbp
	movq %rsp, %rbp
	movq (%rdi), %rax
	popq %rbp
	ret
	.size wl_fault_user, . - wl_fault_user

/*
 * uint64_t wl_fpmix(uint64_t n) -- n >= 1; returns n.
 * Each iteration executes a fixed mix of the x87 and SIMD arithmetic the
 * FIRM events count (PMU reference 5.7; the classes of arch/x86/insn_simd.h):
 *   x87_FP_uop 1 (fadd), 64bit_MMX_uop 2 (paddd, psubd on MM registers),
 *   128bit_MMX_uop 3 (paddd, psubd, pxor on XMM), packed_SP_uop 4,
 *   packed_DP_uop 5, scalar_SP_uop 6, scalar_DP_uop 7,
 * and nothing else of those classes: the two FILD, two FSTP (x87 loads and
 * stores), EMMS, LDMXCSR, FNINIT and the MOVD moves are not arithmetic.
 * All operands are 0 (or the integer 8064 for the x87 part), so nothing
 * raises an exception; MXCSR is loaded with its reset value 1F80H (every
 * SIMD exception masked) and FNINIT masks the x87 ones. EMMS empties the
 * x87 tags after the MMX part, so each iteration's FILDs find room.
 * 11 + 35n + 4 = 35n + 15 instructions; the jnz is taken n - 1 times.
 */
	.globl wl_fpmix
	.hidden wl_fpmix
	.type wl_fpmix, @function
wl_fpmix:
	pushq %rbp				/* 1 */
	movq %rsp, %rbp				/* 2 */
	movq %rdi, %rcx				/* 3 */
	pushq $0x1f80				/* 4: MXCSR's reset value, FILD's integer */
	ldmxcsr (%rsp)				/* 5 */
	fninit					/* 6 */
	xorl %eax, %eax				/* 7 */
	movd %eax, %mm0				/* 8 */
	movd %eax, %mm1				/* 9 */
	movd %eax, %xmm0			/* 10 */
	movd %eax, %xmm1			/* 11 */
1:	fildl (%rsp)				/* 1/it */
	fildl (%rsp)				/* 2/it */
	FPMIX_BODY				/* 3/it .. 33/it: arch/x86/fpmix_body.h */
	subq $1, %rcx				/* 34/it */
	jnz 1b					/* 35/it */
	popq %rax				/* 12 */
	movq %rdi, %rax				/* 13 */
	popq %rbp				/* 14 */
	ret					/* 15 */
	.size wl_fpmix, . - wl_fpmix

/*
 * uint64_t wl_fpassist(uint64_t n, uint64_t mxcsr) -- n >= 1; returns n.
 * Floating-point assists in known numbers (pmu/model/p4_assist.c): each
 * iteration runs 4 x87 arithmetic instructions, two of them on a denormal
 * memory operand (FADD m32, FMUL m64: x87_assist PREA, 2 per iteration)
 * and two on normal ones (FLD1, FMUL m32), and 9 SSE/SSE2 arithmetic
 * ones: 5 with denormal inputs, 8 denormal elements in all (SSE_input_
 * assist 8 per iteration with MXCSR.DAZ clear, 0 with it set), and 4 on
 * normal values; no result of the loop underflows or overflows and its
 * x87 stack never faults (one push, one pop). Before the loop, once each:
 * an FSCALE that underflows (POAU), one that overflows (POAO), a stack
 * underflow (FPSU) and overflow (FPSO) (FPASSIST_EDGES). MXCSR is loaded
 * from the argument (1F80H, or 1FC0H with DAZ) and set back to 1F80H
 * before the return.
 * 40 + 18n + 5 = 18n + 45 instructions; the jnz is taken n - 1 times.
 */
	.globl wl_fpassist
	.hidden wl_fpassist
	.type wl_fpassist, @function
wl_fpassist:
	pushq %rbp				/* 1 */
	movq %rsp, %rbp				/* 2 */
	movq %rdi, %rcx				/* 3 */
	subq $32, %rsp				/* 4: the constant block */
	movl $1, (%rsp)				/* 5 */
	movl $0x3f800000, 4(%rsp)		/* 6 */
	movl $1, 8(%rsp)			/* 7 */
	movl $0, 12(%rsp)			/* 8 */
	movl $0, 16(%rsp)			/* 9 */
	movl $0x3ff00000, 20(%rsp)		/* 10 */
	movl %esi, %eax				/* 11 */
	movl %eax, 24(%rsp)			/* 12 */
	movl $-20000, 28(%rsp)			/* 13 */
	FPASSIST_EDGES %rsp			/* 14 .. 32: arch/x86/fpassist_body.h */
	FPASSIST_SETUP %rsp			/* 33 .. 40 */
1:	FPASSIST_BODY %rsp			/* 1/it .. 16/it */
	subq $1, %rcx				/* 17/it */
	jnz 1b					/* 18/it */
	movl $0x1f80, 24(%rsp)			/* 41 */
	ldmxcsr 24(%rsp)			/* 42: MXCSR's reset value again */
	movq %rdi, %rax				/* 43 */
	leave					/* 44 */
	ret					/* 45 */
	.size wl_fpassist, . - wl_fpassist

/*
 * Ring-3 workloads return to wl_user_exit: leave through the DPL-3 exit gate.
 * user_call() puts wl_user_exit on the user stack as the workload's return
 * address, so it ends every ring-3 call chain. Unwinders look a return
 * address up at address - 1 (where the call would be), so that byte belongs
 * to the trampoline too: a never executed int3 that starts
 * wl_user_trampoline, and ring-3 chains end in "wl_user_trampoline+0x1"
 * rather than one past the end of the function placed before it.
 */
	.globl wl_user_trampoline
	.hidden wl_user_trampoline
	.type wl_user_trampoline, @function
wl_user_trampoline:
	int3					/* never executed */
	.globl wl_user_exit
	.hidden wl_user_exit
	.type wl_user_exit, @function
wl_user_exit:
	int $USER_EXIT_VECTOR
	ud2					/* user_return() never comes back here */
	.size wl_user_exit, . - wl_user_exit
	.size wl_user_trampoline, . - wl_user_trampoline

/* --- runners (kernel text) ------------------------------------------------ */

	.text

/* uint64_t wl_call_ring0(const struct wl_call *c) */
	.globl wl_call_ring0
	.type wl_call_ring0, @function
wl_call_ring0:
	pushq %rbp
	movq %rsp, %rbp
	pushq %rbx
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	pushfq					/* the caller's RFLAGS; RSP is now 16-aligned */
	movq %rsp, %gs:PERCPU_WL_RING0_RSP	/* per LP: both LPs may run a workload */
	movq %rdi, %rbx
	pushq WC_RFLAGS(%rbx)
	movq %gs:PERCPU_GATE_CTX, %rdi
	call *%gs:PERCPU_GATE_OPEN		/* the counting gate: right before the call */
	movq WC_ARG1(%rbx), %rsi
	movq WC_ARG2(%rbx), %rdx
	movq WC_ARG3(%rbx), %rcx
	movq WC_ARG0(%rbx), %rdi
	movq WC_FN(%rbx), %rax
	popfq					/* a TF set here traps after the call */
	call *%rax
	.globl wl_ring0_return
	.hidden wl_ring0_return
wl_ring0_return:				/* step.c stops stepping at this address */
	movq %rax, %rbx
	movq %gs:PERCPU_GATE_CTX, %rdi
	call *%gs:PERCPU_GATE_SHUT		/* first thing after it (RSP as saved: aligned) */
	movq %rbx, %rax
	popfq
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbx
	popq %rbp
	ret
	.globl wl_ring0_abort
	.hidden wl_ring0_abort
wl_ring0_abort:				/* step.c sends an interrupted run here */
	movq %gs:PERCPU_WL_RING0_RSP, %rsp
	jmp wl_ring0_return
	.size wl_call_ring0, . - wl_call_ring0

/* uint64_t user_call(const struct wl_call *c): see user.h */
	.globl user_call
	.type user_call, @function
user_call:
	pushq %rbp
	movq %rsp, %rbp
	pushq %rbx
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	pushfq
	movq %rsp, %gs:PERCPU_USER_KERNEL_RSP
	movq %rdi, %rbx
	leaq -256(%rsp), %rdi			/* RSP0: free stack below the saved state */
	andq $-16, %rdi
	call tss_set_rsp0
	movq %rbx, %rax
	pushq WC_SS(%rax)			/* IRETQ frame (SDM Vol. 3A Figure 6-9) */
	pushq WC_RSP(%rax)
	pushq WC_RFLAGS(%rax)
	pushq WC_CS(%rax)
	pushq WC_FN(%rax)
	movq %gs:PERCPU_GATE_CTX, %rdi
	call *%gs:PERCPU_GATE_OPEN		/* the counting gate: the IRETQ follows */
	movq %rbx, %rax
	movq WC_ARG1(%rax), %rsi
	movq WC_ARG2(%rax), %rdx
	movq WC_ARG3(%rax), %rcx
	movq WC_ARG0(%rax), %rdi
	xorl %eax, %eax				/* leave no kernel values in registers */
	xorl %ebx, %ebx
	xorl %ebp, %ebp
	xorl %r8d, %r8d
	xorl %r9d, %r9d
	xorl %r10d, %r10d
	xorl %r11d, %r11d
	xorl %r12d, %r12d
	xorl %r13d, %r13d
	xorl %r14d, %r14d
	xorl %r15d, %r15d
	iretq
	.size user_call, . - user_call

/* void user_return(uint64_t rax, uint64_t kernel_ds) -- from the int 0x80 gate */
	.globl user_return
	.type user_return, @function
user_return:
	movq %rdi, %rax
	movq %gs:PERCPU_USER_KERNEL_RSP, %rsp
	movl %esi, %ds
	movl %esi, %es
	movl %esi, %ss
	popfq
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbx
	popq %rbp
	ret
	.size user_return, . - user_return

	.section .note.GNU-stack, "", @progbits
