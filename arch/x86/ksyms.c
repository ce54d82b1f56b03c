/*
 * ksyms.c - address to symbol lookup over the generated table.
 *
 * The firmware loaded the image at a base of its choosing; the table holds
 * link addresses, so a runtime address is first made relative to the
 * runtime ImageBase (a linker-script symbol, reached PC-relative).
 */
#include <stddef.h>

#include "arch/x86/ksyms.h"

extern char ImageBase[] __attribute__((visibility("hidden")));

uint64_t ksym_image_base(void)
{
	return (uint64_t)(uintptr_t)ImageBase;
}

struct ksym ksym_get(uint32_t i)
{
	return (struct ksym){ ksym_table[i].addr, ksym_names + ksym_table[i].name };
}

static ksym_fallback_fn *fallback;

void ksym_set_fallback(ksym_fallback_fn *fn)
{
	fallback = fn;
}

const char *ksym_lookup(uint64_t addr, uint64_t *offset)
{
	uint64_t rel = addr - ksym_image_base();
	uint32_t lo = 0, hi = ksym_count;

	if (addr < ksym_image_base() || rel < ksym_text_start || rel >= ksym_text_end)
		return fallback ? fallback(addr, offset) : NULL;
	/* Last entry with table address <= rel. */
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (ksym_table[mid].addr <= rel)
			lo = mid;
		else
			hi = mid;
	}
	if (ksym_count == 0 || ksym_table[lo].addr > rel)
		return NULL;
	if (offset)
		*offset = rel - ksym_table[lo].addr;
	return ksym_names + ksym_table[lo].name;
}
