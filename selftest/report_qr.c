/*
 * report_qr.c - the selftest report as the texts of QR codes (report_qr.h).
 *
 * Portable: compiled freestanding in the kernel and on the host for tests.
 */
#include "lib/base45.h"
#include "lib/crc32.h"
#include "lib/printf.h"
#include "selftest/report_qr.h"

void selftest_qr_reset(struct selftest_qr *p)
{
	p->len = 0;
	p->zlen = 0;
	p->full = false;
	p->crc = 0;
}

void selftest_qr_line(void *ctx, const char *line)
{
	struct selftest_qr *p = ctx;
	size_t n = 0;

	while (line[n])
		n++;
	if (p->full || p->len + n + 1 > sizeof(p->text)) {
		p->full = true;
		return;
	}
	for (size_t i = 0; i < n; i++)
		p->text[p->len++] = line[i];
	p->text[p->len++] = '\n';
}

int selftest_qr_pack(struct selftest_qr *p)
{
	p->zlen = 0;
	if (p->full || !p->len)
		return -1;
	p->crc = crc32(p->text, p->len);
	p->zlen = zlib_compress(&p->work, (const uint8_t *)p->text, p->len, p->z, sizeof(p->z));
	return p->zlen ? 0 : -1;
}

static unsigned selftest_qr_digits(unsigned v)
{
	unsigned d = 1;

	while (v >= 10) {
		v /= 10;
		d++;
	}
	return d;
}

/* "NBQ1 k/n CRC " with k and n of d digits at most. */
static size_t selftest_qr_header(unsigned d)
{
	return sizeof(SELFTEST_QR_MAGIC) - 1 + 1 + d + 1 + d + 1 + 8 + 1;
}

/* Bytes of the stream per code (a whole number of base45 groups); 0 when none fits. */
static size_t selftest_qr_bytes(const struct selftest_qr *p, size_t chars, unsigned *count)
{
	for (unsigned d = 1; d < 10; d++) {
		size_t hdr = selftest_qr_header(d), per;
		unsigned n;

		if (chars < hdr + 3)
			return 0;
		per = (chars - hdr) / 3 * 2;
		n = (unsigned)((p->zlen + per - 1) / per);
		if (selftest_qr_digits(n) <= d) {
			*count = n;
			return per;
		}
	}
	return 0;
}

unsigned selftest_qr_count(const struct selftest_qr *p, size_t chars)
{
	unsigned n = 0;

	if (!p->zlen || !selftest_qr_bytes(p, chars, &n))
		return 0;
	return n;
}

int selftest_qr_code(const struct selftest_qr *p, size_t chars, unsigned k, char *out, size_t n)
{
	unsigned count = 0;
	size_t per = p->zlen ? selftest_qr_bytes(p, chars, &count) : 0, at, len;
	int hdr;

	if (!per || k < 1 || k > count)
		return -1;
	at = (size_t)(k - 1) * per;
	len = p->zlen - at < per ? p->zlen - at : per;
	hdr = ksnprintf(out, n, SELFTEST_QR_MAGIC " %u/%u %08X ", k, count, p->crc);
	if (hdr < 0 || (size_t)hdr + BASE45_LEN(len) + 1 > n || (size_t)hdr + BASE45_LEN(len) > chars)
		return -1;
	return hdr + (int)base45_encode(out + hdr, p->z + at, len);
}
