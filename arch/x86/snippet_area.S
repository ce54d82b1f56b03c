/*
 * snippet_area.S - the code area `bench` writes its generated loop into
 * (prof/snippet.h, prof/snippet_run.c).
 *
 * It lives in .wltext, the workload text (linker.ld), so the step engine
 * decodes and counts it and a ring-3 run can execute it exactly like a
 * built-in workload. It is whole pages (SNIPPET_AREA_SIZE bytes, checked
 * below) starting with a ret, so the `snippet` workload returns at once
 * until a snippet is loaded; the rest is int3 (CC).
 */
#define SNIPPET_AREA_BYTES 16384	/* SNIPPET_AREA_SIZE in prof/snippet.h */

	.section .wltext, "ax", @progbits
	.balign 4096
	.globl snippet_area
	.hidden snippet_area
	.type snippet_area, @function
snippet_area:
	ret
	.fill SNIPPET_AREA_BYTES - 1, 1, 0xcc
	.size snippet_area, . - snippet_area

	.section .note.GNU-stack, "", @progbits
