/*
 * percpu.c - the table of logical processors (see percpu.h).
 *
 * Entries are added on LP0 during boot, before any other LP starts, and
 * never removed; after that only their state and counters change.
 */
#include <stddef.h>

#include "arch/x86/percpu.h"

/*
 * Entry 0 is usable (by idt.c) before LP0 is added: boot code runs as LP0
 * from the start. Zeroed (.bss, not stored in the image): its one field
 * with another start, guard_vector, is read only after a guarded run that
 * faulted has set it.
 */
static struct percpu percpu_table[PERCPU_MAX] __attribute__((aligned(64)));
static unsigned percpu_n;

struct percpu *percpu_add(uint32_t apic_id, const struct topo_id *id)
{
	struct percpu *p;

	if (percpu_n == PERCPU_MAX)
		return NULL;
	p = &percpu_table[percpu_n];
	p->self = p;
	p->index = percpu_n++;
	p->apic_id = apic_id;
	p->topo = *id;
	p->state = LP_OFFLINE;
	p->guard_vector = -1;	/* LP0's guard may be in use already: its frames are kept */
	return p;
}

unsigned percpu_count(void)
{
	return percpu_n;
}

struct percpu *percpu_get(unsigned index)
{
	return index < percpu_n ? &percpu_table[index] : NULL;
}

struct percpu *percpu_boot(void)
{
	return &percpu_table[0];
}
