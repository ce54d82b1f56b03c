/*
 * arch/x86/32/gdt.c - the ia32 kernel's GDT, TSS and IDT gates: the 32-bit
 * twin of 64/gdt.c (selector map in gdt.h).
 *
 * Flat 4 GiB code and data segments (base 0, limit FFFFFH pages, SDM Vol.
 * 3A 3.4.5), 32-bit code (D = 1). The 32-bit TSS (SDM Vol. 3A 7.2.1,
 * Figure 7-2) holds SS0:ESP0, the stack an interrupt from ring 3 switches
 * to; 32-bit mode has no interrupt stack table, so the IST tops gdt_init_lp
 * receives are not used (arch/x86/32/entry.S says what that costs).
 *
 * Entry 0x30 is the per-LP data segment: its base is the LP's struct percpu,
 * and GS holds it, so `mov %gs:0` finds the LP's data as IA32_GS_BASE does
 * in the 64-bit kernel (that MSR exists only with EM64T). It has DPL 3: an
 * IRET to ring 3 loads a null selector into every data segment register
 * whose DPL is below the new CPL (SDM Vol. 3A 6.12.1, IRET), and GS must
 * keep pointing at the per-LP data when a ring-3 workload is interrupted.
 *
 * IDT gates are 8 bytes (SDM Vol. 3A Figure 6-2): offset 15:0, selector,
 * a zero byte, P | DPL | type 0EH (32-bit interrupt gate), offset 31:16.
 */
#include <stddef.h>

#include "arch/x86/gdt.h"
#include "arch/x86/mode.h"
#include "arch/x86/percpu.h"

struct tss32 {
	uint16_t link, reserved0;
	uint32_t esp0;
	uint16_t ss0, reserved1;
	uint32_t esp1;
	uint16_t ss1, reserved2;
	uint32_t esp2;
	uint16_t ss2, reserved3;
	uint32_t cr3, eip, eflags, eax, ecx, edx, ebx, esp, ebp, esi, edi;
	uint16_t es, reserved4, cs, reserved5, ss, reserved6, ds, reserved7;
	uint16_t fs, reserved8, gs, reserved9, ldt, reserved10;
	uint16_t trap, iomap_base;
} __attribute__((packed));

_Static_assert(sizeof(struct tss32) == 104, "TSS layout");

#define GDT_ENTRIES		8
#define TLS_SEG_32BIT		0x01	/* struct user_desc's flags (mode.h) */
#define TLS_CONTENTS		0x06
#define TLS_READ_EXEC_ONLY	0x08
#define TLS_LIMIT_IN_PAGES	0x10
#define TLS_NOT_PRESENT		0x20
#define TLS_USEABLE		0x40
/* The descriptor's flags nibble, bits 55:52 (SDM Vol. 3A Figure 3-8): G, D/B, L, AVL. */
#define DESC_G			(UINT64_C(1) << 55)
#define DESC_DB			(UINT64_C(1) << 54)
#define DESC_AVL		(UINT64_C(1) << 52)

#define DESC_PERCPU_ACCESS	UINT64_C(0xf2)			/* P, DPL3, data read/write */

struct idt_gate32 {
	uint16_t offset_lo;
	uint16_t selector;
	uint8_t zero;
	uint8_t type_attr;
	uint16_t offset_hi;
} __attribute__((packed));

_Static_assert(sizeof(struct idt_gate32) == 8, "IDT gate layout");

struct desc_ptr32 {
	uint16_t limit;
	uint32_t base;
} __attribute__((packed));

static struct tss32 tss[PERCPU_MAX] __attribute__((aligned(16)));
static uint64_t gdt[PERCPU_MAX][GDT_ENTRIES] __attribute__((aligned(16)));
static struct idt_gate32 idt[IDT_NVECTORS] __attribute__((aligned(16)));

/* A byte-granular segment descriptor: base, limit, access byte (SDM Vol. 3A Figure 3-8). */
static uint64_t gdt_desc(uint32_t base, uint32_t limit, uint64_t access)
{
	return (limit & 0xffff) | ((uint64_t)(base & 0xffffff) << 16) | (access << 40) |
	       ((uint64_t)((limit >> 16) & 0xf) << 48) | ((uint64_t)(base >> 24) << 56);
}

static void gdt_load(uint64_t *g)
{
	struct desc_ptr32 p = { sizeof(gdt[0]) - 1, (uint32_t)(uintptr_t)g };

	/* Reload CS with a far return, then the data segments and the task register. */
	__asm__ volatile("lgdt %0\n\t"
			 "pushl %1\n\t"
			 "call 1f\n"		/* EIP of 1 on the stack: the far return's target */
			 "1:\n\t"
			 "addl $(2f - 1b), (%%esp)\n\t"
			 "lretl\n"
			 "2:\n\t"
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
			 : "eax", "memory");
}

int gdt_init_lp(unsigned lp, const uint64_t ist_top[3])
{
	uint64_t *g;
	struct tss32 *t;

	(void)ist_top;
	if (lp >= PERCPU_MAX)
		return -1;
	g = gdt[lp];
	t = &tss[lp];
	g[0] = 0;
	g[GDT_KERNEL_CS / 8] = DESC_KERNEL_CODE32;
	g[GDT_KERNEL_DS / 8] = DESC_KERNEL_DATA;
	g[GDT_USER_DS / 8] = DESC_USER_DATA;
	g[GDT_USER_CS / 8] = DESC_USER_CODE32;
	g[GDT_PERCPU / 8] = 0;		/* mode_set_percpu_base() fills it */
	g[GDT_USER_TLS / 8] = 0;	/* mode_user_tls() fills it */
	t->ss0 = GDT_KERNEL_DS;
	t->iomap_base = sizeof(*t);	/* no I/O bitmap: ring 3 gets no port access */
	g[GDT_TSS / 8] = gdt_desc((uint32_t)(uintptr_t)t, sizeof(*t) - 1, TSS_TYPE_AVAILABLE);
	gdt_load(g);
	return 0;
}

void gdt_init(const uint64_t ist_top[3])
{
	gdt_init_lp(0, ist_top);
}

void mode_set_percpu_base(struct percpu *pc)
{
	uint16_t sel = GDT_PERCPU | GDT_RPL3;

	gdt[pc->index][GDT_PERCPU / 8] = gdt_desc((uint32_t)(uintptr_t)pc, sizeof(*pc) - 1,
						  DESC_PERCPU_ACCESS);
	__asm__ volatile("movw %0, %%gs" : : "r"(sel) : "memory");
}

void tss_set_rsp0(uint64_t rsp0)
{
	tss[percpu_this()->index].esp0 = (uint32_t)rsp0;
}

/* --- IDT gates ----------------------------------------------------------------- */

void idt_gate_set(unsigned vec, uint64_t addr, unsigned ist, bool user)
{
	struct idt_gate32 *g = &idt[vec % IDT_NVECTORS];

	(void)ist;
	g->offset_lo = addr & 0xffff;
	g->selector = GDT_KERNEL_CS;
	g->zero = 0;
	g->type_attr = GATE_INTERRUPT | (user ? GATE_DPL3 : 0);
	g->offset_hi = (addr >> 16) & 0xffff;
}

void idt_gate_user(unsigned vec)
{
	idt[vec % IDT_NVECTORS].type_attr |= GATE_DPL3;
}

void idt_gate_load(void)
{
	struct desc_ptr32 p = { sizeof(idt) - 1, (uint32_t)(uintptr_t)idt };

	__asm__ volatile("lidt %0" : : "m"(p));
}

/* A present, writable DPL-3 data segment only: what a C library's TLS is. */
int mode_user_tls(uint64_t base, uint32_t limit, uint32_t flags, uint32_t *entry)
{
	uint64_t d;

	if (!entry || (*entry != GDT_USER_TLS / 8 && *entry != UINT32_MAX) || base > UINT32_MAX ||
	    (flags & (TLS_CONTENTS | TLS_READ_EXEC_ONLY | TLS_NOT_PRESENT)) || limit > 0xfffff)
		return -1;
	d = gdt_desc((uint32_t)base, limit, DESC_PERCPU_ACCESS);
	if (flags & TLS_LIMIT_IN_PAGES)
		d |= DESC_G;
	if (flags & TLS_SEG_32BIT)
		d |= DESC_DB;
	if (flags & TLS_USEABLE)
		d |= DESC_AVL;
	gdt[percpu_this()->index][GDT_USER_TLS / 8] = d;
	*entry = GDT_USER_TLS / 8;
	return 0;
}

void mode_user_tls_clear(void)
{
	gdt[percpu_this()->index][GDT_USER_TLS / 8] = 0;
}
