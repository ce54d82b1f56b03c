/*
 * qrgen.c - the kernel's QR encoder, compressor and base45 (lib/qr.c,
 * lib/deflate.c, lib/base45.c) on the host, for tests/tools/test_qr.py,
 * which reads what they make with the zbar decoder and Python's zlib.
 *
 *	qrgen qr L|M MINVER MAXVER MASK SCALE   standard input as a symbol: a PGM image
 *	                                        on standard output (MASK -1: the best)
 *	qrgen info L|M MINVER MAXVER            "version mask" of the symbol it would make
 *	qrgen cap L|M VERSION                   "alnum bytes": what one symbol holds
 *	qrgen zlib                              standard input as a zlib stream
 *	qrgen base45                            standard input in base45
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base45.h"
#include "lib/deflate.h"
#include "lib/qr.h"

static unsigned char in[1 << 17];
static struct qr q;
static struct deflate_work w;

static size_t read_all(void)
{
	size_t n = fread(in, 1, sizeof(in), stdin);

	if (n == sizeof(in)) {
		fprintf(stderr, "qrgen: input too long\n");
		exit(2);
	}
	return n;
}

static enum qr_ecc level(const char *s)
{
	return s[0] == 'L' ? QR_ECC_L : QR_ECC_M;
}

static int symbol(char **argv, bool image)
{
	size_t n = read_all();
	int scale;

	if (qr_encode(&q, (const char *)in, n, level(argv[2]), atoi(argv[3]), atoi(argv[4]),
		      image ? atoi(argv[5]) : -1)) {
		fprintf(stderr, "qrgen: does not fit\n");
		return 1;
	}
	if (!image) {
		printf("%d %d\n", q.version, q.mask);
		return 0;
	}
	scale = atoi(argv[6]);
	int side = (q.size + 2 * QR_QUIET) * scale;
	printf("P5\n%d %d\n255\n", side, side);
	for (int y = 0; y < side; y++)
		for (int x = 0; x < side; x++)
			putchar(qr_module(&q, x / scale - QR_QUIET, y / scale - QR_QUIET) ? 0 : 255);
	return 0;
}

int main(int argc, char **argv)
{
	static unsigned char out[1 << 18];
	static char text[1 << 18];
	size_t n;

	if (argc == 7 && !strcmp(argv[1], "qr"))
		return symbol(argv, true);
	if (argc == 5 && !strcmp(argv[1], "info"))
		return symbol(argv, false);
	if (argc == 4 && !strcmp(argv[1], "cap")) {
		printf("%zu %zu\n", qr_capacity_alnum(atoi(argv[3]), level(argv[2])),
		       qr_capacity_bytes(atoi(argv[3]), level(argv[2])));
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "zlib")) {
		n = zlib_compress(&w, in, read_all(), out, sizeof(out));
		if (!n) {
			fprintf(stderr, "qrgen: does not compress into %zu bytes\n", sizeof(out));
			return 1;
		}
		fwrite(out, 1, n, stdout);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "base45")) {
		n = read_all();
		if (BASE45_LEN(n) >= sizeof(text))
			return 1;
		fputs(text + 0 * base45_encode(text, in, n), stdout);
		return 0;
	}
	fprintf(stderr, "usage: qrgen qr|info|cap|zlib|base45 ... (see qrgen.c)\n");
	return 2;
}
