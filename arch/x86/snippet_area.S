/*
 * snippet_area.S - the code area `bench` writes its generated loop into
 * (workload/snippet.h, workload/snippet_run.c).
 *
 * It lives in .wltext, the workload text (linker.ld), so the step engine
 * decodes and counts it and a ring-3 run can execute it exactly like a
 * built-in workload. It is SNIPPET_AREA_SIZE bytes of ret (C3), so the
 * `snippet` workload returns at once until a snippet is loaded. It is
 * stored in the image (the whole kernel file has a size budget,
 * tests/tools/test_image.py): 3 KiB keeps it and the workload bodies on
 * one page. It starts a 128-byte L2 sector, so that a benchmark's code lies
 * in the same sectors whatever the size of the workload bodies before it
 * (the first pass fetches each sector from memory: a loop of 2U copies that
 * reaches one sector more than the loop of U pays that fetch in bench's
 * difference).
 */
#define SNIPPET_AREA_BYTES 3072		/* SNIPPET_AREA_SIZE in workload/snippet.h */

	.section .wltext, "ax", @progbits
	.balign 128
	.globl snippet_area
	.hidden snippet_area
	.type snippet_area, @function
snippet_area:
	.fill SNIPPET_AREA_BYTES, 1, 0xc3
	.size snippet_area, . - snippet_area
	.globl snippet_area_end
	.hidden snippet_area_end
snippet_area_end:

	.section .note.GNU-stack, "", @progbits
