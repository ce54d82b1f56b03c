/* prog_printf.c - a program for the QEMU tests (tests/qemu/test_programs.py): numbers
 * through nb_printf and nb_snprintf, at the edges of each width, built for both
 * kernels (nbprof-cc, nbprof-cc -m32). The test formats the same values with the
 * host's printf rules and compares the lines. */
#include "nbprof.h"

int main(int argc, char **argv)
{
	char buf[16];
	int n;

	nb_printf("ints: %d %i %d %u %d\n", 0, -1, -2147483647 - 1, 4294967295u, argc);
	nb_printf("longs: %ld %lu %lld %llu\n", -1234567890L, 4000000000UL,
		  -9223372036854775807LL - 1, 18446744073709551615ULL);
	nb_printf("hex: %x %X %#x %08x %llx %o\n", 0xbeefu, 0xbeefu, 255u, 0x2au,
		  0x123456789abcdefULL, 8u);
	nb_printf("widths: [%5d] [%-5d] [%05d] [%+d] [% d] [%.3d] [%*d] [%-*d]\n",
		  42, 42, -42, 7, 7, 5, 6, 99, 4, 1);
	nb_printf("small: %hhd %hd %hhu %zu %c %%\n", 300, 70000, 511, (unsigned long)12345, 'Z');
	nb_printf("strings: [%s] [%8s] [%-8s] [%.2s] [%s]\n", argv[0], "ab", "ab", "abcdef",
		  argc > 1 ? argv[1] : "-");
	n = nb_snprintf(buf, sizeof(buf), "%d+%d=%d, and more", 40, 2, 42);
	nb_printf("snprintf: %d [%s]\n", n, buf);
	return 0;
}
