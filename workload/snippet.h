/*
 * snippet.h - snippet benchmarks (`bench`, nanoBench's protocol): the user's
 * code as hex, the loop the kernel wraps around it, and the arithmetic that
 * turns two measurements into per-iteration counts.
 *
 * The generated function (SysV ABI, called like any workload):
 *
 *   push rbx; push rbp; push r12; push r13; push r14; push r15
 *   INIT                               once
 *   mov r15, N                         the loop counter (49 C7 C7 imm32)
 * L: SNIPPET x U                       the body: U copies back to back
 *   dec r15                            (49 FF CF)
 *   jnz L                              (0F 85 rel32)
 *   pop r15; pop r14; pop r13; pop r12; pop rbp; pop rbx; ret
 *
 * The ia32 kernel (mode64 false) keeps the counter on the stack instead,
 * as 32-bit mode has no spare register (and 40-4F are INC/DEC there):
 *
 *   push ebx; push ebp; push esi; push edi; INIT; push N (68 imm32)
 * L: SNIPPET x U; dec dword [esp] (FF 0C 24); jnz L (0F 85 rel32)
 *   add esp, 4 (83 C4 04); pop edi; pop esi; pop ebp; pop ebx; ret
 *
 * In 64-bit mode R15 is reserved: the snippet must not change it (nor RSP, nor leave
 * unbalanced pushes). The target cannot tell reliably from the bytes
 * whether a snippet writes R15; the host command (`tools/nbprof bench
 * --asm`) refuses assembly text that names r15.
 *
 * Running the function with unroll U and 2U and subtracting cancels every
 * instruction outside the body (prologue, init, loop control, epilogue and
 * the measurement's own start/stop): (count(2U) - count(U)) / (N * U) is
 * what one copy of the snippet costs.
 *
 * Pure: no hardware, compiled on the host for tests/host/test_snippet.c.
 */
#ifndef NBPROF_PROF_SNIPPET_H
#define NBPROF_PROF_SNIPPET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The snippet area in .wltext (arch/x86/snippet_area.S): the generated code's limit. */
#define SNIPPET_AREA_SIZE	3072u
#define SNIPPET_HEX_MAX		2048u		/* bytes of snippet or init code */
#define SNIPPET_N_MAX		UINT64_C(0x7fffffff)	/* mov r15, imm32 sign-extends */
#define SNIPPET_U_MAX		2048u

struct snippet_code {
	bool mode64;			/* x86-64 code, else ia32 */
	const uint8_t *init;
	size_t ninit;
	const uint8_t *body;
	size_t nbody;
};

/*
 * Parse hex digits (either case; pairs, no separators) into out[0..max).
 * 0 with *n set, or -1 with one reason in err (odd length, a non-hex
 * character and where, more than max bytes). Empty text is 0 bytes; the
 * caller decides whether that is allowed.
 */
int snippet_parse_hex(const char *s, uint8_t *out, size_t max, size_t *n, char *err,
		      size_t errlen);

/*
 * Whether code[0..n) ends on an instruction boundary, walked with the step
 * engine's decoder (insn_length): 0 it does, -1 with err when the last
 * instruction is cut off (its opcode needs more bytes than are left: the
 * next copy would be decoded into it), 1 when an opcode the decoder does
 * not know stops the walk (nothing can be said; the code is not refused).
 */
int snippet_check_boundary(const uint8_t *code, size_t n, bool mode64, char *err, size_t errlen);

/* Bytes of the generated function for unroll u (no overflow for the limits above). */
size_t snippet_size(const struct snippet_code *c, unsigned u);

/*
 * Write the function above into out[0..max). Returns its length, or 0 with
 * err when N or U is out of range or it does not fit in max bytes.
 */
size_t snippet_build(const struct snippet_code *c, unsigned u, uint64_t n, uint8_t *out,
		     size_t max, char *err, size_t errlen);

/*
 * Per-iteration count x 100 (lib/stats.h's fixed point), rounded to the
 * nearest hundredth: (c2 - c1) / (n * u). Negative when c2 < c1.
 */
int64_t snippet_per_iter(uint64_t c1, uint64_t c2, uint64_t n, unsigned u);

#endif
