/*
 * test_dump.c - lib/crc32.c and prof/dump.c.
 *
 * CRC-32 against the standard check value ("123456789" -> CBF43926H) and
 * its defining bitwise algorithm; LEB128 against the DWARF example
 * (624485 -> E5 8E 26); zigzag against the protobuf encoding table (base64
 * is test_base64.c's). The round trip decodes the printed
 * lines with a decoder written here from dump.h's format description, so a
 * mismatch between description and encoder fails.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/base64.h"
#include "lib/crc32.h"
#include "prof/dump.h"

/* --- CRC, varint, zigzag -------------------------------------------- */

static uint32_t crc_bitwise(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffff;

	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (c & 1 ? 0xedb88320 : 0);
	}
	return ~c;
}

static void crc32_check_values(void **state)
{
	uint8_t buf[256];

	assert_int_equal(crc32("123456789", 9), 0xcbf43926);
	assert_int_equal(crc32("", 0), 0);
	/* Chaining equals one pass. */
	assert_int_equal(crc32_update(crc32("1234", 4), "56789", 5), 0xcbf43926);
	for (int i = 0; i < 256; i++)
		buf[i] = (uint8_t)(i * 7 + 3);
	for (size_t n = 0; n <= sizeof(buf); n += 17)
		assert_int_equal(crc32(buf, n), crc_bitwise(buf, n));
	/* Every single byte value exercises every nibble-table entry. */
	for (int i = 0; i < 256; i++) {
		uint8_t b = (uint8_t)i;

		assert_int_equal(crc32(&b, 1), crc_bitwise(&b, 1));
	}
}

static void varint_and_zigzag(void **state)
{
	uint8_t p[10];

	assert_int_equal(dump_varint(p, 624485), 3);
	assert_memory_equal(p, "\xe5\x8e\x26", 3);
	assert_int_equal(dump_varint(p, 0), 1);
	assert_int_equal(p[0], 0);
	assert_int_equal(dump_varint(p, UINT64_MAX), 10);
	assert_int_equal(p[9], 1);
	/* zigzag(a - b): 0, -1, 1, -2, 2147483647, -2147483648 -> 0, 1, 2, 3, 4294967294, 4294967295 */
	assert_int_equal(dump_zigzag(5, 5), 0);
	assert_int_equal(dump_zigzag(4, 5), 1);
	assert_int_equal(dump_zigzag(6, 5), 2);
	assert_int_equal(dump_zigzag(3, 5), 3);
	assert_int_equal(dump_zigzag(2147483647, 0), 4294967294u);
	assert_int_equal(dump_zigzag(0, 2147483648u), 4294967295u);
	assert_int_equal(dump_zigzag(0, UINT64_MAX), 2);	/* wraps: 0 - (-1) = 1 */
}

static const struct ksym crc_syms[] = { { 0x1234, "ab" }, { 0x10000, "c" } };

static struct ksym crc_sym_get(uint32_t i)
{
	return crc_syms[i];
}

static void symtab_crc_covers_address_and_name(void **state)
{
	const struct ksym *t = crc_syms;
	static const uint8_t bytes[] = {
		0x34, 0x12, 0, 0, 0, 0, 0, 0, 'a', 'b', 0,
		0, 0, 1, 0, 0, 0, 0, 0, 'c', 0,
	};

	assert_int_equal(dump_symtab_crc(t, 2), crc_bitwise(bytes, sizeof(bytes)));
	assert_int_equal(dump_symtab_crc(t, 0), 0);
	/* the kernel's form, one symbol at a time (ksym_get) */
	assert_int_equal(dump_symtab_crc_get(crc_sym_get, 2), crc_bitwise(bytes, sizeof(bytes)));
	assert_int_equal(dump_symtab_crc_get(crc_sym_get, 1), crc_bitwise(bytes, 11));
	assert_int_equal(dump_symtab_crc_get(crc_sym_get, 0), 0);
}

/* --- a decoder written from dump.h -------------------------------------------- */

#define MAXL 4096

static char *lines[MAXL];
static int nlines;

static void collect(void *ctx, const char *text)
{
	assert_true(nlines < MAXL);
	lines[nlines++] = strdup(text);
}

static void clear_lines(void)
{
	for (int i = 0; i < nlines; i++)
		free(lines[i]);
	nlines = 0;
}

static int b64val(char c)
{
	const char *a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const char *p = c ? strchr(a, c) : NULL;

	return p ? (int)(p - a) : -1;
}

/* Decoded bytes, or -1 on a bad character or length. */
static long b64dec(const char *s, uint8_t *out)
{
	size_t n = strlen(s), o = 0;

	if (n % 4)
		return -1;
	for (size_t i = 0; i < n; i += 4) {
		int v[4], pad = 0;

		for (int k = 0; k < 4; k++) {
			v[k] = s[i + k] == '=' ? (pad++, 0) : b64val(s[i + k]);
			if (v[k] < 0)
				return -1;
		}
		out[o++] = (uint8_t)(v[0] << 2 | v[1] >> 4);
		if (pad < 2)
			out[o++] = (uint8_t)(v[1] << 4 | v[2] >> 2);
		if (pad < 1)
			out[o++] = (uint8_t)(v[2] << 6 | v[3]);
	}
	return (long)o;
}

static uint64_t le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

struct frame {
	uint32_t seq;
	char type;
	uint16_t len;
	uint8_t payload[DUMP_PAYLOAD_MAX];
};

/* 0, or -1 when the line is not a well-formed frame with a good CRC. */
static int parse_frame(const char *line, struct frame *f)
{
	uint8_t raw[DUMP_FRAME_MAX + 3];
	long n;

	if (strncmp(line, "NBD:", 4) != 0 || strlen(line + 4) > (DUMP_FRAME_MAX + 2) / 3 * 4)
		return -1;
	n = b64dec(line + 4, raw);
	if (n < 11)
		return -1;
	/* Canonical base64 only: unused bits before '=' would escape the CRC. */
	{
		char again[DUMP_LINE_MAX];

		base64_encode(again, raw, (size_t)n);
		if (strcmp(again, line + 4) != 0)
			return -1;
	}
	f->seq = (uint32_t)le(raw, 4);
	f->type = (char)raw[4];
	f->len = (uint16_t)le(raw + 5, 2);
	if (n != 7 + f->len + 4 || le(raw + 7 + f->len, 4) != crc_bitwise(raw, 7 + f->len))
		return -1;
	memcpy(f->payload, raw + 7, f->len);
	return 0;
}

static uint64_t get_varint(const uint8_t *p, size_t *pos)
{
	uint64_t v = 0;

	for (int shift = 0;; shift += 7) {
		uint8_t b = p[(*pos)++];

		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
}

static uint64_t unzig(uint64_t z, uint64_t prev)
{
	return prev + ((z >> 1) ^ (0 - (z & 1)));
}

struct decoded {
	uint8_t header[DUMP_BLOB_MAX], trailer[DUMP_BLOB_MAX];
	size_t hlen, tlen;
	struct sample s[1024];
	uint64_t first_index[256];
	int nsamples, nframes;
	uint64_t table[DUMP_CHAIN_WORDS];	/* version 4's chain table */
	unsigned at[DUMP_CHAINS + 1], nchains;
};

/* A 'C' frame: whole table entries (prof/dump.h, version 4). */
static void decode_chains(struct decoded *d, const struct frame *f)
{
	size_t pos = 0;
	uint64_t first = 0;

	assert_int_equal(get_varint(f->payload, &pos), d->nchains);
	while (pos < f->len) {
		unsigned n = (unsigned)get_varint(f->payload, &pos), k = d->at[d->nchains];

		assert_true(n >= 1 && n <= SAMPLE_MAX_CHAIN);
		d->table[k] = first = unzig(get_varint(f->payload, &pos), first);
		for (unsigned i = 1; i < n; i++)
			d->table[k + i] = unzig(get_varint(f->payload, &pos), d->table[k + i - 1]);
		d->at[++d->nchains] = k + n;
	}
	assert_int_equal(pos, f->len);
}

static void decode_chain_ref(struct decoded *d, const struct frame *f, size_t *pos,
			     struct sample *s)
{
	uint64_t ref = get_varint(f->payload, pos), last = s->ip;

	if (ref == 0)
		return;
	if (ref == 1) {
		s->nchain = (uint8_t)get_varint(f->payload, pos);
		for (int i = 0; i < s->nchain; i++)
			s->chain[i] = last = unzig(get_varint(f->payload, pos), last);
		return;
	}
	assert_true(ref - 2 < d->nchains);
	s->nchain = (uint8_t)(d->at[ref - 1] - d->at[ref - 2]);
	memcpy(s->chain, &d->table[d->at[ref - 2]], s->nchain * sizeof(uint64_t));
}

static void decode_samples(struct decoded *d, const struct frame *f, bool chain_refs)
{
	size_t pos = 0;
	uint64_t tsc = 0, step = 0, ip = 0, rflags = 0, rsp = 0, weight = 0, step_at[16];
	unsigned seen = 0;

	d->first_index[f->seq] = get_varint(f->payload, &pos);
	assert_int_equal(d->first_index[f->seq], d->nsamples);
	while (pos < f->len) {
		struct sample *s = &d->s[d->nsamples++];
		uint8_t head = f->payload[pos++];

		memset(s, 0, sizeof(*s));
		s->cpl = head & 3;
		s->lp = head >> 2 & 1;
		s->event = head >> 3 & 3;
		if (s->event == 3) {
			s->lp = f->payload[pos++];
			s->event = f->payload[pos++];
		}
		unsigned k;

		s->ip = ip = unzig(get_varint(f->payload, &pos), ip);
		k = (unsigned)(ip ^ ip >> 4 ^ ip >> 8) & 15;
		step = unzig(get_varint(f->payload, &pos), seen & 1u << k ? step_at[k] : step);
		s->tsc = tsc = tsc + step;
		if (s != &d->s[d->first_index[f->seq]]) {	/* not the frame's first */
			step_at[k] = step;
			seen |= 1u << k;
		} else {
			step = 0;
		}
		if (!(head & 0x20))
			rflags ^= get_varint(f->payload, &pos);
		if (!(head & 0x40))
			rsp = unzig(get_varint(f->payload, &pos), rsp);
		if (!(head & 0x80))
			weight = get_varint(f->payload, &pos);
		s->rflags = rflags;
		s->rsp = rsp;
		s->weight = weight;
		if (chain_refs)
			decode_chain_ref(d, f, &pos, s);
	}
	assert_int_equal(pos, f->len);
}

static void decode_all(struct decoded *d)
{
	memset(d, 0, sizeof(*d));
	for (int i = 0; i < nlines; i++) {
		struct frame f;

		assert_int_equal(parse_frame(lines[i], &f), 0);
		assert_int_equal(f.seq, i);	/* numbered without gaps */
		assert_true(f.len <= DUMP_PAYLOAD_MAX);
		if (f.type == 'H') {
			memcpy(d->header + d->hlen, f.payload, f.len);
			d->hlen += f.len;
		} else if (f.type == 'C') {
			assert_int_equal(d->nsamples, 0);	/* the table comes first */
			decode_chains(d, &f);
		} else if (f.type == 'S') {
			assert_true(f.len <= DUMP_FRAME_TARGET || d->hlen);
			decode_samples(d, &f, d->header[d->hlen - 1] & 1);
		} else {
			assert_int_equal(f.type, 'T');
			memcpy(d->trailer + d->tlen, f.payload, f.len);
			d->tlen += f.len;
		}
		d->nframes++;
	}
}

/* --- round trips ------------------------------------------------------------- */

static uint64_t m0[8192], m1[8192];
static struct sample_store st0, st1;
static const struct sample_store *stores[] = { &st0, &st1 };
static const struct sample_event events[] = { { "instr_retired:nbogus", 997 }, { "clockticks", 100003 } };
static struct sample_run run = {
	.stores = stores, .nstores = 2, .events = events, .nevents = 2,
	.comm = "calls", .tsc_hz = 2800000000u, .tsc_start = 123456789,
};
static const struct dump_info info = {
	.family = 0x0f, .model = 4, .stepping = 1, .signature = 0xf41,
	.image_base = UINT64_C(0x3e4ec000), .text_start = 0x1000, .text_end = 0x2f000,
	.symtab_crc = 0xdeadbeef, .symtab_count = 321, .run_id = 42, .ip_bits = 32,
	.build_id = (const uint8_t *)"\xd6\xe6\x7f\xa4\x21", .build_id_len = 5,
};
static struct sample want[1024];
static int nwant;
static struct dump_enc enc;
static struct decoded dec;
static const struct report_out out = { .line = collect };

/* Samples with every field exercised: backwards TSC between LPs, high
 * addresses, negative deltas, chains of every length 0..32. */
static void fill(int n0, int n1)
{
	uint32_t x = 99;

	assert_int_equal(sample_store_init(&st0, m0, sizeof(m0), SAMPLE_STOP_WHEN_FULL, 0), 0);
	assert_int_equal(sample_store_init(&st1, m1, sizeof(m1), SAMPLE_WRAP, 1), 0);
	nwant = 0;
	for (int i = 0; i < n0 + n1; i++) {
		struct sample s = { 0 };
		struct sample_store *st = i < n0 ? &st0 : &st1;

		x = x * 1664525u + 1013904223u;
		s.tsc = 123456789 + (uint64_t)(i < n0 ? i : i - n0) * 1000 + (x >> 20);
		s.ip = (x & 1 ? UINT64_C(0xffff800000000000) : UINT64_C(0x3e4ec000)) + (x >> 8) % 0x30000;
		s.rflags = (x >> 3) & 0x3f7fd5;
		s.rsp = UINT64_C(0x7ff0000) - (x >> 12) % 4096;
		s.cpl = (x >> 5) & 1 ? 3 : 0;
		s.event = (x >> 6) & 1;
		s.weight = (x >> 7) % 3 == 0 ? UINT64_C(0xffffffffff) : 98 + (x >> 9) % 4;
		s.nchain = (uint8_t)(i % (SAMPLE_MAX_CHAIN + 1));
		for (int k = 0; k < s.nchain; k++)
			s.chain[k] = s.ip + 0x40 * (uint64_t)k - (k & 1 ? UINT64_C(0x100000000) : 0);
		assert_int_equal(sample_store_append(st, &s), SAMPLE_STORED);
		s.lp = st->lp;
		want[nwant++] = s;
	}
}

static void assert_same_sample(const struct sample *a, const struct sample *b)
{
	assert_int_equal(a->tsc, b->tsc);
	assert_int_equal(a->ip, b->ip);
	assert_int_equal(a->rflags, b->rflags);
	assert_int_equal(a->rsp, b->rsp);
	assert_int_equal(a->weight, b->weight);
	assert_int_equal(a->lp, b->lp);
	assert_int_equal(a->event, b->event);
	assert_int_equal(a->cpl, b->cpl);
	assert_int_equal(a->nchain, b->nchain);
	assert_memory_equal(a->chain, b->chain, a->nchain * sizeof(uint64_t));
}

static void dump_everything(uint32_t from)
{
	clear_lines();
	assert_int_equal(dump_begin(&enc, &run, &info, from), 0);
	while (dump_next(&enc, &out))
		;
}

static void round_trip_is_exact(void **state)
{
	const uint8_t *h = dec.header, *t;
	size_t p;

	fill(150, 120);
	dump_everything(0);
	decode_all(&dec);
	assert_int_equal(dec.nframes, nlines);
	assert_int_equal(dump_total_frames(&enc), nlines);
	assert_int_equal(dec.nsamples, nwant);
	for (int i = 0; i < nwant; i++)
		assert_same_sample(&dec.s[i], &want[i]);
	/* Header fields at the offsets dump.h lists. */
	assert_memory_equal(h, "NBPROF\x05", 7);
	assert_int_equal(le(h + 7, 4), dec.hlen);
	assert_int_equal(le(h + 11, 4), nlines);
	assert_memory_equal(h + 15, "\x0f\x04\x01", 3);
	assert_int_equal(le(h + 18, 4), 0xf41);
	assert_int_equal(le(h + 22, 8), 2800000000u);
	assert_int_equal(le(h + 30, 8), 123456789);
	assert_int_equal(le(h + 38, 8), 0x3e4ec000);
	assert_int_equal(le(h + 46, 8), 0x1000);
	assert_int_equal(le(h + 54, 8), 0x2f000);
	assert_int_equal(le(h + 62, 4), 0xdeadbeef);
	assert_int_equal(le(h + 66, 4), 321);
	assert_int_equal(le(h + 70, 8), 42);
	assert_int_equal(le(h + 78, 8), 270);
	assert_int_equal(h[86], 2);
	assert_int_equal(le(h + 87, 8), 997);
	assert_int_equal(h[95], 20);
	assert_memory_equal(h + 96, "instr_retired:nbogus", 20);
	p = 116;
	assert_int_equal(le(h + p, 8), 100003);
	assert_int_equal(h[p + 8], 10);
	p += 9 + 10;
	assert_int_equal(h[p], 5);
	assert_memory_equal(h + p + 1, "calls", 5);
	assert_int_equal(h[p + 6], 32);		/* IP bits, as info says (the ia32 kernel's) */
	assert_int_equal(h[p + 7], 0);		/* no LP ran a workload of its own */
	assert_int_equal(h[p + 8], 1);		/* flags: the samples have call chains */
	assert_int_equal(h[p + 9], 5);		/* the kernel's build id (version 5) */
	assert_memory_equal(h + p + 10, "\xd6\xe6\x7f\xa4\x21", 5);
	assert_int_equal(dec.hlen, p + 15);
	/* the chains that repeat are in the table, once each, the others inline */
	assert_true(dec.nchains > 0);
	/* Trailer: totals and per-store counts. */
	t = dec.trailer;
	assert_int_equal(le(t, 4), nlines);
	assert_int_equal(le(t + 4, 8), 270);
	assert_int_equal(t[16], 2);
	assert_int_equal(t[17], 0);
	assert_int_equal(le(t + 18, 8), 150);
	assert_int_equal(t[17 + 41], 1);
	assert_int_equal(le(t + 17 + 41 + 1 + 8, 8), 120);
	assert_int_equal(dec.tlen, 17 + 2 * 41);
}

/*
 * Version 4's compact records: a loop's samples repeat their RFLAGS, RSP,
 * weight and call chain, so each costs its head byte, a TSC step delta, an
 * IP delta and a one-byte table reference; an event past 2 takes the
 * escape (explicit LP and event bytes). Still an exact round trip.
 */
static void repeated_chains_make_small_records(void **state)
{
	size_t payload = 0;
	uint64_t t = 1000000;
	int sframes = 0;

	(void)state;
	assert_int_equal(sample_store_init(&st0, m0, sizeof(m0), SAMPLE_STOP_WHEN_FULL, 0), 0);
	assert_int_equal(sample_store_init(&st1, m1, sizeof(m1), SAMPLE_WRAP, 1), 0);
	nwant = 0;
	for (int i = 0; i < 300; i++) {
		/* a loop of three instructions: each IP's samples come the same time apart */
		struct sample s = { .tsc = t += 2900 + 100 * (uint64_t)(i % 3),
				    .ip = 0x3e4ee2a0 + 4 * (i % 3), .rflags = 0x246, .rsp = 0x7ff0f00,
				    .weight = 98, .event = i % 50 == 7 ? 4 : 0, .nchain = 12 };

		for (int k = 0; k < 12; k++)
			s.chain[k] = 0x3e4f0000 + 0x1234 * (uint64_t)k + (i % 2 ? 0 : 0x10);
		assert_int_equal(sample_store_append(&st0, &s), SAMPLE_STORED);
		want[nwant++] = s;
	}
	dump_everything(0);
	decode_all(&dec);
	assert_int_equal(dec.nsamples, 300);
	for (int i = 0; i < nwant; i++)
		assert_same_sample(&dec.s[i], &want[i]);
	assert_int_equal(dec.nchains, 2);		/* the two distinct chains, once each */
	for (int i = 0; i < nlines; i++) {
		struct frame f;

		assert_int_equal(parse_frame(lines[i], &f), 0);
		if (f.type == 'S') {
			payload += f.len;
			sframes++;
		}
	}
	/* head 1 + TSC 1 + IP 1 + reference 1, and the frames' index varints */
	/* and a frame's first records, whose deltas start from 0: at most 24 bytes more */
	assert_true(payload <= 300 * 4 + 300 / 50 * 2 + (size_t)sframes * 24);
	assert_true(payload < 300 * 5);
}

/* The trailer's CRC covers the chain table's and the samples' payloads, in order. */
static void data_crc_covers_sample_payloads(void **state)
{
	uint32_t crc = 0;

	fill(40, 0);
	dump_everything(0);
	for (int i = 0; i < nlines; i++) {
		struct frame f;

		assert_int_equal(parse_frame(lines[i], &f), 0);
		if (f.type == 'S' || f.type == 'C')
			crc = crc32_update(crc, f.payload, f.len);
	}
	decode_all(&dec);
	assert_int_equal(le(dec.trailer + 12, 4), crc);
}

static void resume_repeats_frames_exactly(void **state)
{
	char *full[MAXL];
	int nfull, from, hframes = 0;
	struct frame f;

	fill(200, 50);
	dump_everything(0);
	nfull = nlines;
	for (int i = 0; i < nlines; i++) {
		full[i] = lines[i];
		assert_int_equal(parse_frame(lines[i], &f), 0);
		hframes += f.type == 'H';
	}
	nlines = 0;
	from = nfull / 2;
	dump_everything((uint32_t)from);
	/* Header frames again, then frames from..end, byte for byte. */
	assert_int_equal(nlines, hframes + nfull - from);
	for (int i = 0; i < hframes; i++)
		assert_string_equal(lines[i], full[i]);
	for (int i = hframes; i < nlines; i++)
		assert_string_equal(lines[i], full[from + i - hframes]);
	for (int i = 0; i < nfull; i++)
		free(full[i]);
	/* Past the end: refused, nothing printed. */
	clear_lines();
	assert_int_equal(dump_begin(&enc, &run, &info, (uint32_t)nfull), -2);
	assert_int_equal(nlines, 0);
}

static void corruption_is_detected(void **state)
{
	struct frame f;

	fill(30, 0);
	dump_everything(0);
	for (int i = 0; i < nlines; i++) {
		size_t n = strlen(lines[i]);

		for (size_t k = 4; k < n; k += 7) {
			char *c = &lines[i][k], was = *c;

			if (was == '=')
				continue;
			*c = was == 'A' ? 'B' : 'A';
			assert_int_equal(parse_frame(lines[i], &f), -1);
			*c = was;
		}
		assert_int_equal(parse_frame(lines[i], &f), 0);
	}
}

static void empty_run_has_header_and_trailer(void **state)
{
	fill(0, 0);
	dump_everything(0);
	decode_all(&dec);
	assert_int_equal(dec.nsamples, 0);
	assert_true(dec.hlen > 0);
	assert_int_equal(dec.tlen, 17 + 2 * 41);
	assert_int_equal(le(dec.trailer, 4), nlines);
	assert_int_equal(dump_begin(&enc, &run, &info, 1), 0);	/* the trailer frame */
}

static void header_spanning_frames_and_limits(void **state)
{
	static struct sample_event many[40];
	static char names[40][200];
	struct sample_run big = run;

	for (int i = 0; i < 40; i++) {
		memset(names[i], 'a' + i % 26, 199);
		many[i] = (struct sample_event){ names[i], (uint64_t)i };
	}
	fill(5, 0);
	big.events = many;
	big.nevents = 15;	/* 15 * 208 bytes: several header frames */
	run = big;
	dump_everything(0);
	decode_all(&dec);
	assert_int_equal(dec.nsamples, 5);
	assert_int_equal(dec.header[86], 15);
	assert_true(dec.hlen > 2 * DUMP_FRAME_TARGET);
	big.nevents = 40;	/* over DUMP_BLOB_MAX */
	assert_int_equal(dump_begin(&enc, &big, &info, 0), -1);
	run.events = events;
	run.nevents = 2;
}

static int teardown(void **state)
{
	clear_lines();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(crc32_check_values),
		cmocka_unit_test(varint_and_zigzag),
		cmocka_unit_test(repeated_chains_make_small_records),
		cmocka_unit_test(symtab_crc_covers_address_and_name),
		cmocka_unit_test_teardown(round_trip_is_exact, teardown),
		cmocka_unit_test_teardown(data_crc_covers_sample_payloads, teardown),
		cmocka_unit_test_teardown(resume_repeats_frames_exactly, teardown),
		cmocka_unit_test_teardown(corruption_is_detected, teardown),
		cmocka_unit_test_teardown(empty_run_has_header_and_trailer, teardown),
		cmocka_unit_test_teardown(header_spanning_frames_and_limits, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
