/* hello.c - an nbprof program in C (docs/guide/programs.md): prints its
 * arguments and counts only work(), between the markers. */
#include "nbprof.h"

static volatile unsigned long sink;

__attribute__((noinline)) unsigned long work(unsigned long n)
{
	unsigned long s = 0;

	for (unsigned long i = 0; i < n; i++)
		s += i ^ (s >> 3);
	return s;
}

int main(int argc, char **argv)
{
	unsigned long n = 1000;

	for (int i = 0; i < argc; i++) {		/* "hello 1000" on the console */
		nb_puts(argv[i]);
		nb_puts(i + 1 < argc ? " " : "\n");
	}
	if (argc > 1) {
		n = 0;
		for (const char *p = argv[1]; *p >= '0' && *p <= '9'; p++)
			n = n * 10 + (unsigned long)(*p - '0');
	}
	nb_count_start();			/* count only work() */
	sink = work(n);
	nb_count_stop();
	return (int)(sink & 0x7f);		/* the run's status */
}
