/*
 * insnlen.c - the kernel's x86 decoder (arch/x86/insn.c) run over a raw code
 * image on the host, for tests/tools/test_insnlen.py to compare with objdump.
 *
 *	insnlen FILE < offsets
 *
 * FILE holds raw code bytes (objcopy -O binary -j .text). Each line of
 * standard input is a hexadecimal offset into FILE; for each, one line
 * "offset length status" is printed: insn_length() at that offset and the
 * status insn_mem_decode() gives there with all registers zero ("ok",
 * "unknown" or "truncated").
 */
#include <stdio.h>
#include <stdlib.h>

#include "arch/x86/insn.h"

#define INSNLEN_MAX	(16u << 20)

static uint8_t image[INSNLEN_MAX];

static const char *insnlen_status(enum insn_mem_status st)
{
	switch (st) {
	case INSN_MEM_OK: return "ok";
	case INSN_MEM_UNKNOWN: return "unknown";
	default: return "truncated";
	}
}

int main(int argc, char **argv)
{
	static const struct insn_regs zero;
	unsigned long long off;
	struct insn_mem m;
	size_t n;
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: insnlen FILE < offsets\n");
		return 2;
	}
	if (!(f = fopen(argv[1], "rb"))) {
		perror(argv[1]);
		return 1;
	}
	n = fread(image, 1, sizeof(image), f);
	fclose(f);
	while (scanf("%llx", &off) == 1) {
		if (off >= n) {
			fprintf(stderr, "insnlen: offset %llx beyond the %zu-byte image\n", off, n);
			return 1;
		}
		enum insn_mem_status st = insn_mem_decode(&image[off], n - off, true, &zero, &m);

		printf("%llx %zu %s\n", off, insn_length(&image[off], n - off, true), insnlen_status(st));
	}
	return 0;
}
