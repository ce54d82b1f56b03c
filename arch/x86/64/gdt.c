/*
 * gdt.c - the GDT, the TSS and their loading.
 *
 * In long mode the code and data descriptors matter only for their
 * L/D, DPL, type and present bits; base and limit are ignored. The TSS holds
 * RSP0 (for a later ring-3 workload) and three IST stacks, so NMI, #DF and
 * #MC always run on a known-good stack even when the kernel stack is broken
 * (SDM Vol. 3A 6.14.5). See gdt.h for the selector map.
 *
 * Every logical processor has its own GDT and TSS (a TSS descriptor is
 * marked busy by LTR, so two LPs cannot load the same one), indexed by LP
 * number (arch/x86/percpu.h); the descriptors are the same in all of them.
 */
#include <stddef.h>

#include "arch/x86/gdt.h"
#include "arch/x86/percpu.h"

struct tss64 {
	uint32_t reserved0;
	uint64_t rsp[3];
	uint64_t reserved1;
	uint64_t ist[7];
	uint64_t reserved2;
	uint16_t reserved3;
	uint16_t iomap_base;
} __attribute__((packed));

_Static_assert(sizeof(struct tss64) == 104, "TSS layout");

/* Flat descriptors: G=1, limit 0xfffff; access byte and L/DB flags vary. */

static struct tss64 tss[PERCPU_MAX] __attribute__((aligned(16)));
static uint64_t gdt[PERCPU_MAX][7] __attribute__((aligned(16)));

struct desc_ptr {
	uint16_t limit;
	uint64_t base;
} __attribute__((packed));

static void gdt_set_tss(uint64_t *g, uint64_t base, uint32_t limit)
{
	g[GDT_TSS / 8] = (limit & 0xffff) | ((base & 0xffffff) << 16) |
			 ((uint64_t)TSS_TYPE_AVAILABLE << 40) | ((uint64_t)(limit >> 16) << 48) |
			 (((base >> 24) & 0xff) << 56);
	g[GDT_TSS / 8 + 1] = base >> 32;
}

static void gdt_load(uint64_t *g)
{
	struct desc_ptr p = { sizeof(gdt[0]) - 1, (uint64_t)(uintptr_t)g };

	/* Reload CS with a far return, then the data segments and the task register. */
	__asm__ volatile("lgdt %0\n\t"
			 "pushq %1\n\t"
			 "leaq 1f(%%rip), %%rax\n\t"
			 "pushq %%rax\n\t"
			 "lretq\n"
			 "1:\n\t"
			 "movw %w2, %%ax\n\t"
			 "movw %%ax, %%ds\n\t"
			 "movw %%ax, %%es\n\t"
			 "movw %%ax, %%ss\n\t"
			 "xorl %%eax, %%eax\n\t"
			 "movw %%ax, %%fs\n\t"
			 "movw %%ax, %%gs\n\t"
			 "movw %w3, %%ax\n\t"
			 "ltr %%ax"
			 :
			 : "m"(p), "i"(GDT_KERNEL_CS), "i"(GDT_KERNEL_DS), "i"(GDT_TSS)
			 : "rax", "memory");
}

int gdt_init_lp(unsigned lp, const uint64_t ist_top[3])
{
	uint64_t *g;
	struct tss64 *t;

	if (lp >= PERCPU_MAX)
		return -1;
	g = gdt[lp];
	t = &tss[lp];
	g[0] = 0;
	g[GDT_KERNEL_CS / 8] = DESC_KERNEL_CODE64;
	g[GDT_KERNEL_DS / 8] = DESC_KERNEL_DATA;
	g[GDT_USER_DS / 8] = DESC_USER_DATA;
	g[GDT_USER_CS / 8] = DESC_USER_CODE64;
	t->ist[IST_NMI - 1] = ist_top[0];
	t->ist[IST_DF - 1] = ist_top[1];
	t->ist[IST_MC - 1] = ist_top[2];
	t->iomap_base = sizeof(*t);	/* no I/O bitmap: ring 3 gets no port access */
	gdt_set_tss(g, (uint64_t)(uintptr_t)t, sizeof(*t) - 1);
	gdt_load(g);
	return 0;
}

void gdt_init(const uint64_t ist_top[3])
{
	gdt_init_lp(0, ist_top);
}

/* --- IDT gates: 16 bytes in IA-32e mode (SDM Vol. 3A Figure 6-8) ------------ */

struct idt_gate {
	uint16_t offset_lo;
	uint16_t selector;
	uint8_t ist;
	uint8_t type_attr;
	uint16_t offset_mid;
	uint32_t offset_hi;
	uint32_t reserved;
} __attribute__((packed));

_Static_assert(sizeof(struct idt_gate) == 16, "IDT gate layout");

static struct idt_gate idt[IDT_NVECTORS] __attribute__((aligned(16)));

void idt_gate_set(unsigned vec, uint64_t addr, unsigned ist, bool user)
{
	struct idt_gate *g = &idt[vec % IDT_NVECTORS];

	g->offset_lo = addr & 0xffff;
	g->selector = GDT_KERNEL_CS;
	g->ist = (uint8_t)ist;
	g->type_attr = GATE_INTERRUPT | (user ? GATE_DPL3 : 0);
	g->offset_mid = (addr >> 16) & 0xffff;
	g->offset_hi = (uint32_t)(addr >> 32);
	g->reserved = 0;
}

void idt_gate_user(unsigned vec)
{
	idt[vec % IDT_NVECTORS].type_attr |= GATE_DPL3;
}

void idt_gate_load(void)
{
	struct desc_ptr p = { sizeof(idt) - 1, (uint64_t)(uintptr_t)idt };

	__asm__ volatile("lidt %0" : : "m"(p));
}

void tss_set_rsp0(uint64_t rsp0)
{
	tss[percpu_this()->index].rsp[0] = rsp0;
}
