/*
 * mode.h - the few constants that differ between the x86-64 kernel
 * (BOOTX64.EFI, long mode) and the ia32 kernel (BOOTIA32.EFI, 32-bit
 * protected mode with PAE paging), in one place.
 *
 * Everything else that depends on the CPU mode is in files of its own, side
 * by side in arch/x86/64/ and arch/x86/32/: entry.S (interrupt stubs,
 * guarded calls), gdt.c (GDT, TSS, IDT gates, the per-LP base), paging.c,
 * trampoline.S (the sibling's start-up), workloads.S (bodies and
 * ring-0/ring-3 runners), nmiprobe.S and mode.c. Both kernels hand the portable C code the same
 * struct trap_frame (idt.h): the 32-bit entry path widens its frame to it
 * and writes the changed fields back (arch/x86/32/entry.S).
 */
#ifndef NBPROF_ARCH_X86_MODE_H
#define NBPROF_ARCH_X86_MODE_H

#if defined(__x86_64__)
#define MODE_BITS		64
#define MODE_NAME		"64-bit mode (IA-32e)"
#define MODE_STACK_REG		"%%rsp"		/* for inline assembly */
#define MODE_OP_SUFFIX		"q"
/* struct percpu offsets (percpu.h) that workloads.S and entry.S read through %gs */
#define PERCPU_WL_RING0_RSP	136
#define PERCPU_USER_KERNEL_RSP	144
#define PERCPU_GATE_OPEN	152
#define PERCPU_GATE_SHUT	160
#define PERCPU_GATE_CTX		168
#define PERCPU_GATE_MARK	176
#define PERCPU_SYSCALL_URSP	192
#define PERCPU_EXIT_FN		200
/* canonical, never mapped (above the identity map's 512 GiB at most) */
#define MODE_UNMAPPED_ADDR	0x00007ffffffff000
#else
#define MODE_BITS		32
#define MODE_NAME		"32-bit protected mode with PAE paging"
#define MODE_STACK_REG		"%%esp"
#define MODE_OP_SUFFIX		"l"
#define PERCPU_WL_RING0_RSP	116
#define PERCPU_USER_KERNEL_RSP	124
#define PERCPU_GATE_OPEN	132
#define PERCPU_GATE_SHUT	140
#define PERCPU_GATE_CTX		148
#define PERCPU_GATE_MARK	156
#define PERCPU_EXIT_FN		176
/* page 0, which both kernels leave unmapped (arch/x86/64/paging.c, 32/paging.c) */
#define MODE_UNMAPPED_ADDR	0x00000ff0
#endif

#define MODE_IS_64		(MODE_BITS == 64)

#ifndef __ASSEMBLY__
#include <stdint.h>

struct percpu;

/*
 * Point this LP's GS base at pc (percpu.h: `mov %gs:0` then yields pc).
 * x86-64: IA32_GS_BASE; ia32: a GS descriptor in the LP's own GDT (the MSR
 * exists only with EM64T).
 */
void mode_set_percpu_base(struct percpu *pc);

/*
 * A ring-3 Linux program's thread pointer, on this LP: x86-64 IA32_FS_BASE
 * = base (limit and flags unused, *entry untouched); ia32 the GDT's TLS
 * entry (gdt.h GDT_USER_TLS) as set_thread_area's struct user_desc asks
 * (Linux arch/x86/include/uapi/asm/ldt.h: flags bit 0 seg_32bit, 1-2
 * contents, 3 read_exec_only, 4 limit_in_pages, 5 seg_not_present, 6
 * useable), *entry its index, when *entry is that index or -1. 0, or -1
 * for a descriptor it does not make. mode_user_tls_clear() undoes it.
 */
int mode_user_tls(uint64_t base, uint32_t limit, uint32_t flags, uint32_t *entry);
void mode_user_tls_clear(void);

/* IA32_EFER for the sibling's start-up (trampoline.S), 0 where it has none. */
uint64_t mode_ap_efer(void);
#endif

#endif
