/* squares.c - an nbprof program that prints numbers with nb_printf
 * (docs/guide/programs.md). */
#include "nbprof.h"

int main(int argc, char **argv)
{
	unsigned long long sum = 0;
	unsigned n = 1000;

	for (unsigned i = 1; i <= n; i++)
		sum += (unsigned long long)i * i;
	nb_printf("%s: the squares of 1..%u add up to %llu (%#llx)\n", argv[0], n, sum, sum);
	nb_printf("%-8s|%8s|\n%-8d|%8x|\n", "left", "right", -42, 0xbeefu);
	return 0;
}
