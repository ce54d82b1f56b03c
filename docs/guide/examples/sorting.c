/*
 * sorting.c - an ordinary C program (printf, malloc, qsort) that nbprof runs
 * as it is: build it with `musl-gcc -static` (x86-64, the 64-bit kernel) or
 * `gcc -m32 -static` (i386, the 32-bit kernel). nbprof_count.h's markers
 * narrow the count to the sort; without them the whole program counts.
 */
#include <stdio.h>
#include <stdlib.h>

#include "nbprof_count.h"

static int cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	int *v = malloc(n * sizeof(*v));
	unsigned s = 1;

	if (!v)
		return 1;
	for (int i = 0; i < n; i++) {
		s = s * 1103515245u + 12345u;
		v[i] = (int)((s >> 8) % 10000);
	}
	nb_count_start();
	qsort(v, n, sizeof(*v), cmp);
	nb_count_stop();
	printf("sorted %d numbers: %d .. %d\n", n, v[0], v[n - 1]);
	free(v);
	return 0;
}
