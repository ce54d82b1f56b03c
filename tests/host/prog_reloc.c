/* prog_reloc.c - a program for tests/host/test_program.c: a pointer table (R_X86_64_RELATIVE). */
#include "nbprof.h"

static int one(void) { return 1; }
static int two(void) { return 2; }

int (*const table[])(void) = { one, two };
const char *const words[] = { "alpha", "beta" };

int main(int argc, char **argv)
{
	return table[argc & 1]() + words[1][0];
}
