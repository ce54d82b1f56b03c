/*
 * arch/x86/32/workloads.S - the built-in workload bodies and their runners for the
 * ia32 kernel: the 32-bit twin of 64/workloads.S.
 *
 * Same names, same exact instruction counts (workload/workload.c documents
 * them; the numbers in the right-hand column are those of workloads.S),
 * same branches of the same kinds, same results, so every count the tests
 * expect holds in both kernels. Bodies live in .wltext (linker32.ld) and
 * run unchanged at CPL 0 and CPL 3.
 *
 * Calling convention: the runners below are the only callers. They push
 * the four arguments of struct wl_call as four 64-bit stack slots, as the
 * i386 System V ABI passes uint64_t arguments, so argument k is at
 * 8 + 8k(%ebp) once a body has its frame (low half; the high halves are 0
 * for every value the shell accepts but the random seed). The result is
 * EAX; the runners return it zero-extended. The runners save EBX, ESI,
 * EDI and EBP around the call, so bodies may use EBX, ESI and EDI without
 * saving them, and they may write their own argument slots: both are
 * needed to keep the counts of the 64-bit bodies with eight registers.
 *
 * Where the 64-bit bodies use RIP-relative LEAs (indirect), these use
 * absolute addresses, which crt0-efi-ia32 relocates at load time like any
 * other R_386_RELATIVE entry. `branch random` steps its xorshift64 state in
 * MMX registers (64-bit shifts and XOR in one instruction each, SDM Vol. 2
 * PSLLQ/PSRLQ/PXOR); arch/x86/32/paging.c clears CR0.EM and CR0.TS for them. No EMMS:
 * nothing in the kernel uses x87 state.
 */
#include "arch/x86/fpassist_body.h"
#include "arch/x86/fpmix_body.h"
#include "arch/x86/user.h"

	.section .wltext, "ax", @progbits

#define ARG0	8(%ebp)
#define ARG0_HI	12(%ebp)
#define ARG1	16(%ebp)
#define ARG2	24(%ebp)
#define ARG3	32(%ebp)

/* uint64_t wl_empty(void) -- 1 instruction */
	.globl wl_empty
	.hidden wl_empty
	.type wl_empty, @function
wl_empty:
	ret					/* 1 */
	.size wl_empty, . - wl_empty

/* uint64_t wl_loop(uint64_t n) -- 3n + 6 instructions, as workloads.S */
	.globl wl_loop
	.hidden wl_loop
	.type wl_loop, @function
wl_loop:
	pushl %ebp				/* 1 */
	movl %esp, %ebp				/* 2 */
	movl ARG0, %ecx				/* 3 */
	xorl %eax, %eax				/* 4 */
1:	addl $1, %eax				/* 1/it */
	subl $1, %ecx				/* 2/it */
	jnz 1b					/* 3/it */
	popl %ebp				/* 5 */
	ret					/* 6 */
	.size wl_loop, . - wl_loop

/*
 * uint64_t wl_branch_<pattern>(uint64_t n, uint64_t seed): 8 + n * (C + 4)
 * + (not taken) instructions, C = 1, or 11 for random; returns the number
 * of iterations whose pattern branch was not taken. EDX plays R8 (the
 * condition), MM1 R9 (the xorshift64 state) and MM2 R10.
 */
.macro WL_BRANCH name, pattern
	.globl \name
	.hidden \name
	.type \name, @function
\name:
	pushl %ebp				/* 1 */
	movl %esp, %ebp				/* 2 */
	movl ARG0, %ecx				/* 3: iterations left */
	xorl %eax, %eax				/* 4: not-taken count */
	movq ARG1, %mm1				/* 5: xorshift state, all 64 bits */
	movl $1, %edx				/* 6: alternate starts from 1 */
1:
	.if \pattern == 0			/* taken: C = 1 */
	movl $1, %edx
	.elseif \pattern == 1			/* nottaken: C = 1 */
	xorl %edx, %edx
	.elseif \pattern == 2			/* alternate: C = 1 (0, 1, 0, 1, ...) */
	xorl $1, %edx
	.else					/* random: C = 11, xorshift64 13/7/17 */
	movq %mm1, %mm2
	psllq $13, %mm2
	pxor %mm2, %mm1
	movq %mm1, %mm2
	psrlq $7, %mm2
	pxor %mm2, %mm1
	movq %mm1, %mm2
	psllq $17, %mm2
	pxor %mm2, %mm1
	movd %mm1, %edx
	andl $1, %edx
	.endif
	testl %edx, %edx			/* C+1 */
	jnz 2f					/* C+2: the pattern branch */
	addl $1, %eax				/* only when not taken */
2:	subl $1, %ecx				/* C+3 */
	jnz 1b					/* C+4 */
	popl %ebp
	ret
	.size \name, . - \name
.endm

	WL_BRANCH wl_branch_taken, 0
	WL_BRANCH wl_branch_nottaken, 1
	WL_BRANCH wl_branch_alternate, 2
	WL_BRANCH wl_branch_random, 3

/*
 * uint64_t wl_calls(uint64_t depth, uint64_t n): 6 + n * (8 * depth + 2)
 * + 4 instructions. wl_calls_level takes its depth in EAX (an internal
 * call), level(d) = 8d + 6 as in workloads.S.
 */
	.globl wl_calls
	.hidden wl_calls
	.type wl_calls, @function
wl_calls:
	pushl %ebp				/* 1 */
	movl %esp, %ebp				/* 2 */
	pushl %ebx				/* 3 */
	pushl %esi				/* 4 */
	movl ARG0, %ebx				/* 5 */
	movl ARG1, %esi				/* 6 */
1:	leal -1(%ebx), %eax			/* 1/rep */
	call wl_calls_level			/* 2/rep */
	subl $1, %esi				/* 3/rep */
	jnz 1b					/* 4/rep */
	popl %esi
	popl %ebx
	popl %ebp
	ret					/* 4 */
	.size wl_calls, . - wl_calls

	.type wl_calls_level, @function
wl_calls_level:
	pushl %ebp
	movl %esp, %ebp
	testl %eax, %eax
	jz 2f					/* taken at the deepest level only */
	subl $1, %eax
	call wl_calls_level
2:	popl %ebp
	ret
	.size wl_calls_level, . - wl_calls_level

/*
 * uint64_t wl_indirect(uint64_t n): 9n + 8 instructions; per iteration an
 * indirect CALL through EDX (FF /2) to the 5-instruction leaf and an
 * indirect JMP (FF /4) through the argument's high-half slot, which holds
 * the target, over a never executed ud2. Returns n.
 */
	.globl wl_indirect
	.hidden wl_indirect
	.type wl_indirect, @function
wl_indirect:
	pushl %ebp				/* 1 */
	movl %esp, %ebp				/* 2 */
	movl ARG0, %ecx				/* 3: iterations left */
	xorl %eax, %eax				/* 4 */
	movl $wl_indirect_leaf, %edx		/* 5: the call's target */
	movl $2f, ARG0_HI			/* 6: the jump's target */
1:	call *%edx				/* 1/it: FF /2, then 2-6/it in the leaf */
	jmp *ARG0_HI				/* 7/it: FF /4 */
	ud2					/* never executed */
2:	subl $1, %ecx				/* 8/it */
	jnz 1b					/* 9/it */
	popl %ebp				/* 7 */
	ret					/* 8 */
	.size wl_indirect, . - wl_indirect

	.type wl_indirect_leaf, @function
wl_indirect_leaf:
	pushl %ebp				/* 2/it */
	movl %esp, %ebp				/* 3/it */
	addl $1, %eax				/* 4/it */
	popl %ebp				/* 5/it */
	ret					/* 6/it */
	.size wl_indirect_leaf, . - wl_indirect_leaf

/*
 * uint64_t wl_memwalk(const uint8_t *buf, uint64_t size, uint64_t stride,
 *                     uint64_t passes): 6 + passes * (3 + 5M) instructions,
 * M = ceil(size / stride); returns the byte sum (32 bits). Stride and size
 * are read from their slots, the pass count is kept in its own.
 */
	.globl wl_memwalk
	.hidden wl_memwalk
	.type wl_memwalk, @function
wl_memwalk:
	pushl %ebp				/* 1 */
	movl %esp, %ebp				/* 2 */
	xorl %eax, %eax				/* 3 */
.Lmw_arg0:
	movl ARG0, %esi				/* 4: buf */
1:	xorl %ecx, %ecx				/* 1/pass: offset */
2:
.Lmw_load:
	movzbl (%esi,%ecx), %edx		/* 1/load */
	addl %edx, %eax				/* 2/load */
.Lmw_arg2:
	addl ARG2, %ecx				/* 3/load */
.Lmw_arg1:
	cmpl ARG1, %ecx				/* 4/load */
	jb 2b					/* 5/load */
.Lmw_arg3:
	subl $1, ARG3				/* 2/pass */
	jnz 1b					/* 3/pass */
.Lmw_pop:
	popl %ebp
.Lmw_ret:
	ret
	.size wl_memwalk, . - wl_memwalk

/*
 * The loads wl_memwalk retires, in the order of struct selftest_loads
 * (selftest/selftest.h): the buffer argument; per iteration the movzbl and
 * the stride and size arguments; per pass the pass count (read, then
 * written); then the pop and the ret.
 */
	.pushsection .rodata
	.globl wl_memwalk_loads
	.hidden wl_memwalk_loads
	.balign 4
wl_memwalk_loads:
	.long 1, 3, 1, 2
	.long .Lmw_arg0 - wl_memwalk, .Lmw_load - wl_memwalk, .Lmw_arg2 - wl_memwalk
	.long .Lmw_arg1 - wl_memwalk, .Lmw_arg3 - wl_memwalk, .Lmw_pop - wl_memwalk
	.long .Lmw_ret - wl_memwalk, 0
	.size wl_memwalk_loads, . - wl_memwalk_loads
	.popsection

/* uint64_t wl_chase(void *start, uint64_t n): n dependent loads, 3n + 7 instructions (workloads.S) */
	.globl wl_chase
	.hidden wl_chase
	.type wl_chase, @function
wl_chase:
	pushl %ebp				/* 1 */
	movl %esp, %ebp				/* 2 */
	movl ARG0, %eax				/* 3 */
	movl ARG1, %ecx				/* 4 */
1:	movl (%eax), %eax			/* 1/load */
	subl $1, %ecx				/* 2/load */
	jnz 1b					/* 3/load */
	xorl %edx, %edx				/* 5 */
	popl %ebp				/* 6 */
	ret					/* 7 */
	.size wl_chase, . - wl_chase

/* The store buffer's cases (workloads.S): n iterations each, 4n + 9 instructions, returning 0. */
.macro WL_STORES name, first, second
	.globl \name
	.hidden \name
	.type \name, @function
\name:
	pushl %ebp				/* 1 */
	movl %esp, %ebp				/* 2 */
	movl ARG1, %ecx				/* 3: iterations */
	movl ARG2, %edx				/* 4: stride */
	movl ARG0, %eax				/* 5: buf */
1:	\first					/* 1/it */
	\second					/* 2/it */
	subl $1, %ecx				/* 3/it */
	jnz 1b					/* 4/it */
	xorl %eax, %eax				/* 6 */
	xorl %edx, %edx				/* 7 */
	popl %ebp				/* 8 */
	ret					/* 9 */
	.size \name, . - \name
.endm

	WL_STORES wl_st_forward, "movw %cx, (%eax)", "movl (%eax), %edx"
	WL_STORES wl_st_alias, "movl %ecx, (%eax)", "movl 0x400000(%eax), %edx"
	WL_STORES wl_st_stride, "movl %ecx, (%eax)", "addl %edx, %eax"
	WL_STORES wl_st_nt, "movnti %ecx, (%eax)", "addl %edx, %eax"

/* uint64_t wl_copy(uint8_t *buf, uint64_t size): one REP MOVSB, 9 instructions */
	.globl wl_copy
	.hidden wl_copy
	.type wl_copy, @function
wl_copy:
	pushl %ebp				/* 1 */
	movl %esp, %ebp				/* 2 */
	movl ARG1, %ecx				/* 3: count */
	movl ARG0, %esi				/* 4: source = buf */
	leal (%esi,%ecx), %edi			/* 5: destination = buf + size */
	rep movsb				/* 6 */
	movl %ecx, %eax				/* 7 */
	popl %ebp				/* 8 */
	ret					/* 9 */
	.size wl_copy, . - wl_copy

/*
 * uint64_t wl_spin(uint64_t ticks): spins until ticks TSC cycles passed;
 * returns them. The difference is taken in 32 bits, so spins stay below
 * 2^32 cycles (about a second at 4 GHz).
 */
	.globl wl_spin
	.hidden wl_spin
	.type wl_spin, @function
wl_spin:
	pushl %ebp
	movl %esp, %ebp
	rdtsc
	movl %eax, %esi				/* start */
1:	pause
	rdtsc
	subl %esi, %eax
	cmpl ARG0, %eax
	jb 1b
	popl %ebp
	ret
	.size wl_spin, . - wl_spin

/* uint64_t wl_halt(uint64_t ticks) -- CPL 0 only, as workloads.S; 32-bit difference as wl_spin */
	.globl wl_halt
	.hidden wl_halt
	.type wl_halt, @function
wl_halt:
	pushl %ebp
	movl %esp, %ebp
	pushfl
	rdtsc
	movl %eax, %esi
1:	sti
	hlt
	cli
	rdtsc
	subl %esi, %eax
	cmpl ARG0, %eax
	jb 1b
	popfl
	popl %ebp
	ret
	.size wl_halt, . - wl_halt

/* uint64_t wl_synthetic(uint64_t n) -- n times `int 0x81`; 3n + 5 instructions */
	.globl wl_synthetic
	.hidden wl_synthetic
	.type wl_synthetic, @function
wl_synthetic:
	pushl %ebp				/* 1 */
	movl %esp, %ebp				/* 2 */
	movl ARG0, %ecx				/* 3 */
1:	int $USER_SYNTH_VECTOR			/* 1/it */
	subl $1, %ecx				/* 2/it */
	jnz 1b					/* 3/it */
	popl %ebp				/* 4 */
	ret					/* 5 */
	.size wl_synthetic, . - wl_synthetic

/*
 * uint64_t wl_fault_user(const uint64_t *kernel_word) -- #PF at CPL 3.
 * One instruction more than workloads.S: the pointer is on the stack.
 */
	.globl wl_fault_user
	.hidden wl_fault_user
	.type wl_fault_user, @function
wl_fault_user:
	pushl %ebp
	movl %esp, %ebp
	movl ARG0, %eax
	movl (%eax), %eax
	popl %ebp
	ret
	.size wl_fault_user, . - wl_fault_user

/*
 * uint64_t wl_fpmix(uint64_t n) -- n >= 1; returns n (as workloads.S).
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
	pushl %ebp				/* 1 */
	movl %esp, %ebp				/* 2 */
	movl ARG0, %ecx				/* 3 */
	pushl $0x1f80				/* 4: MXCSR's reset value, FILD's integer */
	ldmxcsr (%esp)				/* 5 */
	fninit					/* 6 */
	xorl %eax, %eax				/* 7 */
	movd %eax, %mm0				/* 8 */
	movd %eax, %mm1				/* 9 */
	movd %eax, %xmm0			/* 10 */
	movd %eax, %xmm1			/* 11 */
1:	fildl (%esp)				/* 1/it */
	fildl (%esp)				/* 2/it */
	FPMIX_BODY				/* 3/it .. 33/it: arch/x86/fpmix_body.h */
	subl $1, %ecx				/* 34/it */
	jnz 1b					/* 35/it */
	popl %eax				/* 12 */
	movl ARG0, %eax				/* 13 */
	popl %ebp				/* 14 */
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
	pushl %ebp				/* 1 */
	movl %esp, %ebp				/* 2 */
	movl ARG0, %ecx				/* 3 */
	subl $32, %esp				/* 4: the constant block */
	movl $1, (%esp)				/* 5 */
	movl $0x3f800000, 4(%esp)		/* 6 */
	movl $1, 8(%esp)			/* 7 */
	movl $0, 12(%esp)			/* 8 */
	movl $0, 16(%esp)			/* 9 */
	movl $0x3ff00000, 20(%esp)		/* 10 */
	movl ARG1, %eax				/* 11 */
	movl %eax, 24(%esp)			/* 12 */
	movl $-20000, 28(%esp)			/* 13 */
	FPASSIST_EDGES %esp			/* 14 .. 32: arch/x86/fpassist_body.h */
	FPASSIST_SETUP %esp			/* 33 .. 40 */
1:	FPASSIST_BODY %esp			/* 1/it .. 16/it */
	subl $1, %ecx				/* 17/it */
	jnz 1b					/* 18/it */
	movl $0x1f80, 24(%esp)			/* 41 */
	ldmxcsr 24(%esp)			/* 42: MXCSR's reset value again */
	movl ARG0, %eax				/* 43 */
	leave					/* 44 */
	ret					/* 45 */
	.size wl_fpassist, . - wl_fpassist

/* uint64_t wl_smc(uint64_t n) -- 4n + 7 instructions, as workloads.S (an absolute address) */
	.globl wl_smc
	.hidden wl_smc
	.type wl_smc, @function
wl_smc:
	pushl %ebp				/* 1 */
	movl %esp, %ebp				/* 2 */
	movl ARG0, %ecx				/* 3 */
	xorl %eax, %eax				/* 4 */
1:	movb $0, %al				/* 1/it: B0 ib, patched below */
	movb %cl, 1b+1				/* 2/it: into its immediate */
	subl $1, %ecx				/* 3/it */
	jnz 1b					/* 4/it */
	movl ARG0, %eax				/* 5 */
	popl %ebp				/* 6 */
	ret					/* 7 */
	.size wl_smc, . - wl_smc

/* The ring-3 exit trampoline, as in workloads.S. */
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

/* Push c's four arguments as 64-bit slots, last first; c in EBX. */
.macro PUSH_ARGS
	pushl WC_ARG3 + 4(%ebx)
	pushl WC_ARG3(%ebx)
	pushl WC_ARG2 + 4(%ebx)
	pushl WC_ARG2(%ebx)
	pushl WC_ARG1 + 4(%ebx)
	pushl WC_ARG1(%ebx)
	pushl WC_ARG0 + 4(%ebx)
	pushl WC_ARG0(%ebx)
.endm

/* uint64_t wl_call_ring0(const struct wl_call *c) */
	.globl wl_call_ring0
	.type wl_call_ring0, @function
wl_call_ring0:
	pushl %ebp
	movl %esp, %ebp
	pushl %ebx
	pushl %esi
	pushl %edi
	pushfl					/* the caller's EFLAGS */
	movl %esp, %gs:PERCPU_WL_RING0_RSP	/* per LP: both LPs may run a workload */
	movl 8(%ebp), %ebx
	/*
	 * The 32 bytes of arguments fill the upper half of one 64-byte line
	 * (the NetBurst L1 data line), the return address and a pushed frame
	 * pointer its lower half: a workload's first stack accesses touch one
	 * line whatever the callers' frames, so the memory model's cold start
	 * is the same in every build (tests/qemu/test_stat.py).
	 */
	andl $-64, %esp
	PUSH_ARGS
	pushl WC_RFLAGS(%ebx)
	movl WC_FN(%ebx), %esi			/* kept across the gate's call, as EBX */
	movl %gs:PERCPU_GATE_CTX, %eax
	call *%gs:PERCPU_GATE_OPEN		/* the counting gate, right before the call */
	popfl					/* a TF set here traps after the call */
	call *%esi
	.globl wl_ring0_return
	.hidden wl_ring0_return
wl_ring0_return:				/* step.c stops stepping at this address */
	movl %eax, %ebx
	movl %gs:PERCPU_GATE_CTX, %eax
	call *%gs:PERCPU_GATE_SHUT		/* first thing after it (ESP is reset below) */
	movl %ebx, %eax
	movl %gs:PERCPU_WL_RING0_RSP, %esp	/* drops the arguments */
	xorl %edx, %edx				/* the result is EAX */
	popfl
	popl %edi
	popl %esi
	popl %ebx
	popl %ebp
	ret
	.globl wl_ring0_abort
	.hidden wl_ring0_abort
wl_ring0_abort:				/* step.c sends an interrupted run here */
	jmp wl_ring0_return
	.size wl_call_ring0, . - wl_call_ring0

/*
 * uint64_t user_call(const struct wl_call *c): see user.h. The user stack
 * gets the workload's frame: user_prepare() left the exit trampoline's
 * address at c->rsp; it moves 32 bytes down, under the four argument slots.
 * DS and ES are loaded with the user data selector before the IRET, which
 * would otherwise null the kernel's (DPL 0) ones (SDM Vol. 3A 6.12.1).
 */
	.globl user_call
	.type user_call, @function
user_call:
	pushl %ebp
	movl %esp, %ebp
	pushl %ebx
	pushl %esi
	pushl %edi
	pushfl
	movl %esp, %gs:PERCPU_USER_KERNEL_RSP
	movl 8(%ebp), %ebx
	leal -256(%esp), %eax			/* ESP0: free stack below the saved state */
	andl $-16, %eax
	pushl $0
	pushl %eax
	call tss_set_rsp0			/* (uint64_t) */
	addl $8, %esp
	movl WC_RSP(%ebx), %edi
	cmpl $0, WC_RAW(%ebx)			/* a Linux process's stack: as it is */
	jne 2f
	movl (%edi), %eax			/* the exit trampoline */
	subl $32, %edi
	movl %eax, (%edi)
	movl $0, %ecx
1:	movl WC_ARG0(%ebx,%ecx,8), %eax
	movl %eax, 4(%edi,%ecx,8)
	movl WC_ARG0 + 4(%ebx,%ecx,8), %eax
	movl %eax, 8(%edi,%ecx,8)
	addl $1, %ecx
	cmpl $4, %ecx
	jb 1b
2:	pushl WC_SS(%ebx)			/* IRET frame (SDM Vol. 3A Figure 6-4) */
	pushl %edi
	pushl WC_RFLAGS(%ebx)
	pushl WC_CS(%ebx)
	pushl WC_FN(%ebx)
	movl WC_SS(%ebx), %eax
	movl %eax, %ds
	movl %eax, %es
	movl %gs:PERCPU_GATE_CTX, %eax		/* the counting gate: the IRET follows (the flat */
	call *%gs:PERCPU_GATE_OPEN		/* user data selector serves the C code as well) */
	xorl %eax, %eax				/* leave no kernel values in registers */
	xorl %ebx, %ebx
	xorl %ecx, %ecx
	xorl %edx, %edx
	xorl %esi, %esi
	xorl %edi, %edi
	xorl %ebp, %ebp
	iret
	.size user_call, . - user_call

/* void user_return(uint64_t rax, uint64_t kernel_ds) -- from the int 0x80 gate */
	.globl user_return
	.type user_return, @function
user_return:
	movl 4(%esp), %eax
	movl 12(%esp), %ecx
	movl %gs:PERCPU_USER_KERNEL_RSP, %esp
	movl %ecx, %ds
	movl %ecx, %es
	movl %ecx, %ss
	xorl %edx, %edx
	popfl
	popl %edi
	popl %esi
	popl %ebx
	popl %ebp
	ret
	.size user_return, . - user_return

	.section .note.GNU-stack, "", @progbits
