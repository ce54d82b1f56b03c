/*
 * snippet_run.c - loads `bench`'s generated code into the snippet area
 * (arch/x86/snippet_area.S), a buffer inside the workload text, so that
 * the `snippet` workload (workload/workload.c) runs it at CPL 0 or 3, stepped
 * or not, on either LP, like any built-in workload. The pages are mapped
 * writable by the kernel (arch/x86/64/paging.c); x86 keeps instruction fetch
 * coherent with stores to code (SDM Vol. 3A 11.6, self-modifying code), and
 * the store happens before the workload's call instruction.
 */
#include "workload/snippet.h"
#include "workload/snippet_run.h"
#include "lib/printf.h"

extern char snippet_area[] __attribute__((visibility("hidden")));
extern char snippet_area_end[] __attribute__((visibility("hidden")));

int snippet_load(const uint8_t *code, size_t n, char *err, size_t errlen)
{
	volatile uint8_t *dst = (volatile uint8_t *)snippet_area;

	/* the area as linked, should the .S and the header ever disagree */
	if (n == 0 || n > SNIPPET_AREA_SIZE || n > (size_t)(snippet_area_end - snippet_area)) {
		ksnprintf(err, errlen, "generated code of %u bytes: the snippet area holds 1..%u",
			  (unsigned)n, SNIPPET_AREA_SIZE);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		dst[i] = code[i];
	return 0;
}

uintptr_t snippet_entry(void)
{
	return (uintptr_t)snippet_area;
}
