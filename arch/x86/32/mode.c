/*
 * arch/x86/32/mode.c - what the ia32 kernel does its own way (mode.h; the x86-64 twin
 * is arch/x86/64/mode.c; the per-LP GS base is arch/x86/32/gdt.c's).
 */
#include <stdint.h>

#include "arch/x86/arch.h"
#include "arch/x86/mode.h"

/* The 32-bit start-up (arch/x86/32/trampoline.S) writes no EFER: parts without EM64T have none. */
uint64_t mode_ap_efer(void)
{
	return 0;
}

void arch_raise_gp(void)
{
	/*
	 * 32-bit mode has no non-canonical addresses; loading SS with a null
	 * selector raises #GP(0) instead (SDM Vol. 2B MOV, protected-mode
	 * exceptions: "#GP(0) if attempt is made to load SS register with NULL
	 * segment selector"). SS is unchanged when the load faults.
	 */
	__asm__ volatile("xorl %%eax, %%eax\n\t"
			 "movw %%ax, %%ss"
			 : : : "eax", "memory");
}

/*
 * 64-bit atomic add for the compiler. GCC inlines 64-bit atomics on i686
 * with LOCK CMPXCHG8B only for objects it knows to be 8-byte aligned; a
 * uint64_t member is 4-byte aligned in the i386 ABI, so for those it calls
 * this libatomic entry point, which the freestanding kernel provides. A
 * locked CMPXCHG8B is atomic at any alignment (SDM Vol. 3A 8.1.2.2).
 */
uint64_t __atomic_fetch_add_8(volatile void *ptr, uint64_t val, int order);

uint64_t __atomic_fetch_add_8(volatile void *ptr, uint64_t val, int order)
{
	volatile uint64_t *p = ptr;
	uint32_t lo = (uint32_t)*p, hi = (uint32_t)(*p >> 32);
	uint8_t done;

	(void)order;	/* a locked instruction is a full barrier */
	do {
		uint64_t old = ((uint64_t)hi << 32) | lo, new = old + val;

		__asm__ volatile("lock cmpxchg8b %1\n\t"
				 "sete %0"
				 : "=q"(done), "+m"(*p), "+a"(lo), "+d"(hi)
				 : "b"((uint32_t)new), "c"((uint32_t)(new >> 32))
				 : "memory", "cc");
	} while (!done);
	return ((uint64_t)hi << 32) | lo;
}
