/*
 * builtins.c - the libgcc helpers gcc calls for builtins the target lacks.
 *
 * The kernel links without libgcc. Without -mpopcnt (NetBurst has no
 * POPCNT), __builtin_popcount* becomes a call to __popcount?i2.
 */
#include <stdint.h>

int __popcountdi2(uint64_t x);
int __popcountsi2(uint32_t x);

int __popcountdi2(uint64_t x)
{
	/* Parallel bit count (Hacker's Delight 5-2). */
	x = x - ((x >> 1) & UINT64_C(0x5555555555555555));
	x = (x & UINT64_C(0x3333333333333333)) + ((x >> 2) & UINT64_C(0x3333333333333333));
	x = (x + (x >> 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
	return (int)((x * UINT64_C(0x0101010101010101)) >> 56);
}

int __popcountsi2(uint32_t x)
{
	return __popcountdi2(x);
}
