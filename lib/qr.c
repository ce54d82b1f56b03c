/*
 * qr.c - QR Code symbols (qr.h). Section and table numbers are those of
 * ISO/IEC 18004:2015.
 *
 * Portable: compiled freestanding in the kernel and on the host for tests.
 */
#include "lib/qr.h"

/* Table 9: error correction codewords per block, and blocks, by level and version. */
static const uint8_t qr_ecc_per_block[2][QR_VERSION_MAX + 1] = {
	[QR_ECC_L] = { 0, 7, 10, 15, 20, 26, 18, 20, 24, 30, 18, 20, 24, 26, 30, 22, 24, 28, 30, 28,
		       28, 28, 28, 30, 30, 26, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30,
		       30, 30 },
	[QR_ECC_M] = { 0, 10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26,
		       26, 26, 26, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28,
		       28, 28, 28 },
};
static const uint8_t qr_blocks[2][QR_VERSION_MAX + 1] = {
	[QR_ECC_L] = { 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 4, 4, 6, 6, 6, 6, 7, 8, 8, 9, 9, 10,
		       12, 12, 12, 13, 14, 15, 16, 17, 18, 19, 19, 20, 21, 22, 24, 25 },
	[QR_ECC_M] = { 0, 1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16, 17,
		       17, 18, 20, 21, 23, 25, 26, 28, 29, 31, 33, 35, 37, 38, 40, 43, 45, 47, 49 },
};

/* ---- sizes ----------------------------------------------------------------- */

/* Modules left for codewords and remainder bits: all but the function patterns (6.4). */
static int qr_raw_modules(int v)
{
	int n = (16 * v + 128) * v + 64;

	if (v >= 2) {
		int na = v / 7 + 2;	/* alignment patterns per row (Annex E) */

		n -= (25 * na - 10) * na - 55;
		if (v >= 7)
			n -= 36;	/* the two version information blocks */
	}
	return n;
}

static int qr_data_codewords(int v, enum qr_ecc e)
{
	return qr_raw_modules(v) / 8 - qr_ecc_per_block[e][v] * qr_blocks[e][v];
}

/* Table 3: bits of the character count indicator. */
static int qr_count_bits(int v, bool alnum)
{
	if (alnum)
		return v <= 9 ? 9 : v <= 26 ? 11 : 13;
	return v <= 9 ? 8 : 16;
}

static int qr_alnum_value(char c)
{
	static const char extra[] = " $%*+-./:";

	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'Z')
		return c - 'A' + 10;
	for (int i = 0; extra[i]; i++)
		if (c == extra[i])
			return 36 + i;
	return -1;
}

bool qr_is_alnum(const char *text, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (qr_alnum_value(text[i]) < 0)
			return false;
	return true;
}

size_t qr_capacity_alnum(int v, enum qr_ecc e)
{
	int bits;

	if (v < QR_VERSION_MIN || v > QR_VERSION_MAX || (e != QR_ECC_L && e != QR_ECC_M))
		return 0;
	bits = qr_data_codewords(v, e) * 8 - 4 - qr_count_bits(v, true);
	return (size_t)(bits / 11 * 2 + (bits % 11 >= 6));
}

size_t qr_capacity_bytes(int v, enum qr_ecc e)
{
	if (v < QR_VERSION_MIN || v > QR_VERSION_MAX || (e != QR_ECC_L && e != QR_ECC_M))
		return 0;
	return (size_t)((qr_data_codewords(v, e) * 8 - 4 - qr_count_bits(v, false)) / 8);
}

/* ---- modules ---------------------------------------------------------------- */

static bool qr_get(const uint8_t *bits, const struct qr *q, int x, int y)
{
	int i = y * q->size + x;

	return bits[i >> 3] >> (i & 7) & 1;
}

static void qr_set(uint8_t *bits, const struct qr *q, int x, int y, bool on)
{
	int i = y * q->size + x;

	if (on)
		bits[i >> 3] |= (uint8_t)(1u << (i & 7));
	else
		bits[i >> 3] &= (uint8_t)~(1u << (i & 7));
}

bool qr_module(const struct qr *q, int x, int y)
{
	if (x < 0 || y < 0 || x >= q->size || y >= q->size)
		return false;
	return qr_get(q->dark, q, x, y);
}

/* A function module: drawn now, never masked, never holding data. */
static void qr_fixed(struct qr *q, int x, int y, bool dark)
{
	qr_set(q->dark, q, x, y, dark);
	qr_set(q->fixed, q, x, y, true);
}

/* Finder pattern centred on (cx, cy) with its light separator (6.3.3, 6.3.4). */
static void qr_finder(struct qr *q, int cx, int cy)
{
	for (int dy = -4; dy <= 4; dy++)
		for (int dx = -4; dx <= 4; dx++) {
			int x = cx + dx, y = cy + dy;
			int d = dx < 0 ? -dx : dx, e = dy < 0 ? -dy : dy;

			if (e > d)
				d = e;
			if (x >= 0 && y >= 0 && x < q->size && y < q->size)
				qr_fixed(q, x, y, d != 2 && d != 4);
		}
}

static void qr_alignment(struct qr *q, int cx, int cy)
{
	for (int dy = -2; dy <= 2; dy++)
		for (int dx = -2; dx <= 2; dx++) {
			int d = dx < 0 ? -dx : dx, e = dy < 0 ? -dy : dy;

			qr_fixed(q, cx + dx, cy + dy, (e > d ? e : d) != 1);
		}
}

/* Centres of the alignment patterns on one axis (Annex E): 6, then evenly to size - 7. */
static int qr_alignment_centres(int v, int *pos)
{
	int n, step, size = QR_SIZE(v);

	if (v == 1)
		return 0;
	n = v / 7 + 2;
	step = v == 32 ? 26 : (v * 4 + n * 2 + 1) / (n * 2 - 2) * 2;
	pos[0] = 6;
	for (int i = n - 1, p = size - 7; i >= 1; i--, p -= step)
		pos[i] = p;
	return n;
}

/* The 15 bits of format information for level and mask (7.9.1, Annex C). */
static unsigned qr_format_bits(enum qr_ecc e, int mask)
{
	unsigned data = (e == QR_ECC_L ? 1u : 0u) << 3 | (unsigned)mask, rem = data;

	for (int i = 0; i < 10; i++)
		rem = rem << 1 ^ (rem >> 9) * 0x537u;
	return (data << 10 | (rem & 0x3ff)) ^ 0x5412u;
}

static void qr_draw_format(struct qr *q, int mask)
{
	unsigned f = qr_format_bits(q->ecc, mask);
	int s = q->size;

	for (int i = 0; i <= 5; i++)
		qr_fixed(q, 8, i, f >> i & 1);
	qr_fixed(q, 8, 7, f >> 6 & 1);
	qr_fixed(q, 8, 8, f >> 7 & 1);
	qr_fixed(q, 7, 8, f >> 8 & 1);
	for (int i = 9; i < 15; i++)
		qr_fixed(q, 14 - i, 8, f >> i & 1);
	for (int i = 0; i < 8; i++)
		qr_fixed(q, s - 1 - i, 8, f >> i & 1);
	for (int i = 8; i < 15; i++)
		qr_fixed(q, 8, s - 15 + i, f >> i & 1);
	qr_fixed(q, 8, s - 8, true);	/* the dark module (7.9.1) */
}

/* Version information, versions 7 and up: 6 bits and a BCH(18,6) code (7.10, Annex D). */
static void qr_draw_version(struct qr *q)
{
	unsigned rem = (unsigned)q->version, bits;

	if (q->version < 7)
		return;
	for (int i = 0; i < 12; i++)
		rem = rem << 1 ^ (rem >> 11) * 0x1f25u;
	bits = (unsigned)q->version << 12 | (rem & 0xfff);
	for (int i = 0; i < 18; i++) {
		int a = q->size - 11 + i % 3, b = i / 3;

		qr_fixed(q, a, b, bits >> i & 1);
		qr_fixed(q, b, a, bits >> i & 1);
	}
}

static void qr_draw_functions(struct qr *q)
{
	int pos[7], n = qr_alignment_centres(q->version, pos), s = q->size;

	for (int i = 0; i < s; i++) {
		qr_fixed(q, 6, i, i % 2 == 0);	/* timing patterns (6.3.5) */
		qr_fixed(q, i, 6, i % 2 == 0);
	}
	qr_finder(q, 3, 3);
	qr_finder(q, s - 4, 3);
	qr_finder(q, 3, s - 4);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			if (!((i == 0 && j == 0) || (i == 0 && j == n - 1) || (i == n - 1 && j == 0)))
				qr_alignment(q, pos[i], pos[j]);
	qr_draw_format(q, 0);		/* reserves the areas; drawn again with the mask */
	qr_draw_version(q);
}

/* ---- codewords --------------------------------------------------------------- */

struct qr_bitbuf {
	uint8_t *buf;
	int len;	/* bits */
};

static void qr_put(struct qr_bitbuf *b, unsigned v, int n)
{
	for (int i = n - 1; i >= 0; i--, b->len++)
		if (v >> i & 1)
			b->buf[b->len >> 3] |= (uint8_t)(0x80u >> (b->len & 7));
}

/* GF(256) with the field's polynomial x^8 + x^4 + x^3 + x^2 + 1 (11DH, 7.5.2). */
static uint8_t qr_gf_mul(uint8_t a, uint8_t b)
{
	unsigned r = 0;

	for (int i = 7; i >= 0; i--) {
		r = r << 1 ^ (r >> 7) * 0x11du;
		if (b >> i & 1)
			r ^= a;
	}
	return (uint8_t)r;
}

/*
 * The n error correction codewords of data[0..len) into out: the remainder
 * of data(x) x^n divided by the generator polynomial, the product of
 * (x - 2^i) for i = 0..n-1 (7.5.2, Annex A).
 */
static void qr_rs(const uint8_t *data, int len, int n, uint8_t *out, int stride)
{
	uint8_t gen[32] = { 0 }, rem[32] = { 0 }, root = 1;

	gen[n - 1] = 1;		/* gen[j]: the coefficient of x^(n-1-j); x^n's is 1 */
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < n; j++) {
			gen[j] = qr_gf_mul(gen[j], root);
			if (j + 1 < n)
				gen[j] ^= gen[j + 1];
		}
		root = qr_gf_mul(root, 2);
	}
	for (int i = 0; i < len; i++) {
		uint8_t f = data[i] ^ rem[0];

		for (int j = 0; j + 1 < n; j++)
			rem[j] = rem[j + 1] ^ qr_gf_mul(gen[j], f);
		rem[n - 1] = qr_gf_mul(gen[n - 1], f);
	}
	for (int j = 0; j < n; j++)
		out[j * stride] = rem[j];
}

/* The data bit stream (7.4) into q->cw[0..dc): mode, count, data, terminator, padding. */
static void qr_data(struct qr *q, const char *text, size_t n, bool alnum, int dc)
{
	struct qr_bitbuf b = { q->cw, 0 };
	int cap = dc * 8;

	for (int i = 0; i < dc; i++)
		q->cw[i] = 0;
	qr_put(&b, alnum ? 2 : 4, 4);
	qr_put(&b, (unsigned)n, qr_count_bits(q->version, alnum));
	if (alnum) {
		size_t i = 0;

		for (; i + 1 < n; i += 2)
			qr_put(&b, (unsigned)(qr_alnum_value(text[i]) * 45 + qr_alnum_value(text[i + 1])),
			       11);
		if (i < n)
			qr_put(&b, (unsigned)qr_alnum_value(text[i]), 6);
	} else {
		for (size_t i = 0; i < n; i++)
			qr_put(&b, (uint8_t)text[i], 8);
	}
	qr_put(&b, 0, cap - b.len < 4 ? cap - b.len : 4);	/* terminator */
	b.len = (b.len + 7) & ~7;
	for (int pad = 0xec; b.len < cap; pad ^= 0xec ^ 0x11)
		qr_put(&b, (unsigned)pad, 8);
}

/*
 * Split q->cw[0..dc) into blocks, add each block's error correction and
 * interleave them (7.6): the result into out[0..raw).
 */
static void qr_interleave(struct qr *q, uint8_t *out, int dc)
{
	int nb = qr_blocks[q->ecc][q->version], ne = qr_ecc_per_block[q->ecc][q->version];
	int raw = qr_raw_modules(q->version) / 8;
	int nshort = nb - raw % nb, short_data = raw / nb - ne;
	int at = 0;

	for (int b = 0; b < nb; b++) {
		int len = short_data + (b >= nshort);

		qr_rs(q->cw + at, len, ne, out + dc + b, nb);
		for (int i = 0; i < len; i++)
			out[i < short_data ? i * nb + b : short_data * nb + (b - nshort)] = q->cw[at + i];
		at += len;
	}
}

/* The codewords into the modules that no function pattern holds, two columns at a time (7.7.3). */
static void qr_place(struct qr *q, const uint8_t *cw, int raw)
{
	int i = 0, s = q->size;

	for (int right = s - 1; right >= 1; right -= 2) {
		if (right == 6)
			right = 5;	/* the vertical timing pattern */
		for (int vert = 0; vert < s; vert++)
			for (int j = 0; j < 2; j++) {
				int x = right - j, up = ((right + 1) & 2) == 0;
				int y = up ? s - 1 - vert : vert;

				if (qr_get(q->fixed, q, x, y))
					continue;
				qr_set(q->dark, q, x, y, i < raw * 8 && (cw[i >> 3] >> (7 - (i & 7)) & 1));
				i++;
			}
	}
}

/* ---- masks (7.8) ------------------------------------------------------------- */

static bool qr_mask_at(int mask, int x, int y)
{
	switch (mask) {
	case 0: return (x + y) % 2 == 0;
	case 1: return y % 2 == 0;
	case 2: return x % 3 == 0;
	case 3: return (x + y) % 3 == 0;
	case 4: return (x / 3 + y / 2) % 2 == 0;
	case 5: return x * y % 2 + x * y % 3 == 0;
	case 6: return (x * y % 2 + x * y % 3) % 2 == 0;
	default: return ((x + y) % 2 + x * y % 3) % 2 == 0;
	}
}

static void qr_apply_mask(struct qr *q, int mask)
{
	for (int y = 0; y < q->size; y++)
		for (int x = 0; x < q->size; x++)
			if (!qr_get(q->fixed, q, x, y) && qr_mask_at(mask, x, y))
				qr_set(q->dark, q, x, y, !qr_get(q->dark, q, x, y));
}

/* Module i of row (or column) k; outside the symbol is light. */
static bool qr_line_at(const struct qr *q, bool column, int k, int i)
{
	if (i < 0 || i >= q->size)
		return false;
	return column ? qr_module(q, k, i) : qr_module(q, i, k);
}

/* N1 and N3 of one row or column (Table 11). */
static long qr_penalty_line(const struct qr *q, bool column, int k)
{
	static const char finder[] = "1011101";
	long p = 0;
	int run = 1;

	for (int i = 1; i <= q->size; i++) {
		if (i < q->size && qr_line_at(q, column, k, i) == qr_line_at(q, column, k, i - 1)) {
			run++;
			continue;
		}
		if (run >= 5)
			p += 3 + (run - 5);
		run = 1;
	}
	/* 1:1:3:1:1 with four light modules before or after it */
	for (int i = 0; i + 7 <= q->size; i++) {
		bool match = true, before = true, after = true;

		for (int j = 0; j < 7 && match; j++)
			match = qr_line_at(q, column, k, i + j) == (finder[j] == '1');
		if (!match)
			continue;
		for (int j = 1; j <= 4; j++) {
			before = before && !qr_line_at(q, column, k, i - j);
			after = after && !qr_line_at(q, column, k, i + 6 + j);
		}
		p += 40 * (before + after);
	}
	return p;
}

static long qr_penalty(const struct qr *q)
{
	long p = 0, dark = 0, total = (long)q->size * q->size, k;

	for (int i = 0; i < q->size; i++)
		p += qr_penalty_line(q, false, i) + qr_penalty_line(q, true, i);
	for (int y = 0; y < q->size; y++)
		for (int x = 0; x < q->size; x++) {
			bool c = qr_module(q, x, y);

			dark += c;
			if (x + 1 < q->size && y + 1 < q->size && c == qr_module(q, x + 1, y) &&
			    c == qr_module(q, x, y + 1) && c == qr_module(q, x + 1, y + 1))
				p += 3;		/* N2: a 2 x 2 block of one colour */
		}
	k = (dark * 20 - total * 10) / total;	/* N4: each 5% away from half dark */
	return p + 10 * (k < 0 ? -k : k);
}

/* ---- the symbol ---------------------------------------------------------------- */

int qr_encode(struct qr *q, const char *text, size_t n, enum qr_ecc ecc, int min_version,
	      int max_version, int mask)
{
	bool alnum = qr_is_alnum(text, n);
	int v, best = mask;

	if ((ecc != QR_ECC_L && ecc != QR_ECC_M) || mask < -1 || mask > 7 ||
	    min_version < QR_VERSION_MIN || max_version > QR_VERSION_MAX)
		return -1;
	for (v = min_version; v <= max_version; v++)
		if (n <= (alnum ? qr_capacity_alnum(v, ecc) : qr_capacity_bytes(v, ecc)))
			break;
	if (v > max_version)
		return -1;
	q->version = v;
	q->size = QR_SIZE(v);
	q->ecc = ecc;
	for (size_t i = 0; i < sizeof(q->dark); i++)
		q->dark[i] = q->fixed[i] = 0;
	qr_draw_functions(q);
	qr_data(q, text, n, alnum, qr_data_codewords(v, ecc));
	qr_interleave(q, q->il, qr_data_codewords(v, ecc));
	qr_place(q, q->il, qr_raw_modules(v) / 8);
	if (best < 0) {
		long least = -1;

		for (int m = 0; m < 8; m++) {
			long p;

			qr_apply_mask(q, m);
			qr_draw_format(q, m);
			p = qr_penalty(q);
			if (least < 0 || p < least) {
				least = p;
				best = m;
			}
			qr_apply_mask(q, m);
		}
	}
	qr_apply_mask(q, best);
	qr_draw_format(q, best);
	q->mask = best;
	return 0;
}
