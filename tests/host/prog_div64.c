/* prog_div64.c - a program for tests/host/test_program.c: a 64-bit division, which i386
 * code calls libgcc's __udivdi3 for (nbprof-cc -m32 links the 32-bit libgcc). */
#include "nbprof.h"

int main(int argc, char **argv)
{
	volatile unsigned long long a = 1000000000000ull, b = (unsigned long long)argc + 7;

	(void)argv;
	return (int)(a / b % 100);
}
