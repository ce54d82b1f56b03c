/*
 * fuzz_samples.c - the sample store (prof/samples.c) and the dump
 * encoder (prof/dump.c) over fuzzer-made recordings.
 *
 * Input: 4 bytes of set-up (each store's size, mode and alignment, the
 * events, dump --from), then samples of 32 bytes plus 2 per return address (an offset from the IP).
 * Contract checked (samples.h): offered = stored + dropped + nested and
 * stored = held + overwritten; iteration yields exactly the held samples,
 * the oldest first (stop mode: the first ones; wrap mode: the last ones),
 * field for field; dump prints frames numbered without gaps, each line
 * "NBD:" + base64 within DUMP_LINE_MAX, each frame's CRC right, its length
 * field equal to its payload, and, from frame 0, dump_total_frames() lines
 * ending with a trailer.
 */
#include "lib/crc32.h"
#include "prof/dump.h"
#include "tests/fuzz/fuzz.h"

#define SHADOW_MAX	2048

struct shadow {
	struct sample s[SHADOW_MAX];
	unsigned n;
};

static uint64_t take(const uint8_t **d, size_t *left, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes && *left > 0; i++, (*d)++, (*left)--)
		v |= (uint64_t)**d << (8 * i);
	return v;
}

static bool same_sample(const struct sample *a, const struct sample *b)
{
	if (a->tsc != b->tsc || a->ip != b->ip || a->rflags != b->rflags || a->rsp != b->rsp ||
	    a->lp != b->lp || a->event != b->event || a->cpl != b->cpl || a->nchain != b->nchain)
		return false;
	return memcmp(a->chain, b->chain, a->nchain * sizeof(a->chain[0])) == 0;
}

/* The sample as the store gives it back: own LP, 2-bit CPL, low RFLAGS, clamped chain. */
static struct sample as_stored(const struct sample *s, uint8_t lp)
{
	struct sample r = *s;

	r.lp = lp;
	r.cpl &= 3;
	r.rflags &= 0xffffffffu;
	if (r.nchain > SAMPLE_MAX_CHAIN)
		r.nchain = SAMPLE_MAX_CHAIN;
	return r;
}

static void check_store(const struct sample_store *st, const struct shadow *sh)
{
	struct sample_iter it;
	struct sample got;
	unsigned first, k = 0;

	fuzz_check(sample_store_offered(st) == st->stored + st->dropped + st->nested);
	fuzz_check(st->stored == st->held + st->overwritten);
	fuzz_check(st->stored == sh->n);
	first = st->mode == SAMPLE_WRAP ? sh->n - (unsigned)st->held : 0;
	sample_iter_init(&it, st);
	while (sample_iter_next(&it, &got)) {
		fuzz_check(k < st->held);
		fuzz_check(same_sample(&got, &sh->s[first + k]));
		k++;
	}
	fuzz_check(k == st->held);
}

static int b64val(char c)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const char *p = c ? strchr(tab, c) : NULL;

	return p ? (int)(p - tab) : -1;
}

/* Base64 of line into out; returns the byte count, or -1 when it is not base64. */
static int unbase64(const char *s, uint8_t *out, size_t cap)
{
	size_t n = strlen(s), o = 0;

	if (n % 4 != 0)
		return -1;
	for (size_t i = 0; i < n; i += 4) {
		int v[4], pad = 0;

		for (int j = 0; j < 4; j++) {
			v[j] = s[i + j] == '=' && i + 4 == n && j >= 2 ? (pad++, 0) : b64val(s[i + j]);
			if (v[j] < 0)
				return -1;
		}
		uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
		for (int j = 0; j < 3 - pad; j++) {
			if (o == cap)
				return -1;
			out[o++] = (uint8_t)(w >> (16 - 8 * j));
		}
	}
	return (int)o;
}

struct dump_check {
	uint32_t frames, from, header_frames;
	int64_t last_seq;
	uint8_t last_type;
};

static void dump_line(void *ctx, const char *text)
{
	struct dump_check *dc = ctx;
	uint8_t f[DUMP_FRAME_MAX + 3];
	int n;
	uint32_t seq, crc;
	uint16_t len;

	fuzz_check(strlen(text) < DUMP_LINE_MAX);
	fuzz_check(strncmp(text, DUMP_LINE_PREFIX, 4) == 0);
	n = unbase64(text + 4, f, sizeof(f));
	fuzz_check(n >= DUMP_FRAME_HEAD + 4);
	seq = (uint32_t)f[0] | (uint32_t)f[1] << 8 | (uint32_t)f[2] << 16 | (uint32_t)f[3] << 24;
	len = (uint16_t)(f[5] | f[6] << 8);
	fuzz_check(len <= DUMP_PAYLOAD_MAX && (int)len == n - DUMP_FRAME_HEAD - 4);
	crc = (uint32_t)f[n - 4] | (uint32_t)f[n - 3] << 8 | (uint32_t)f[n - 2] << 16 |
	      (uint32_t)f[n - 1] << 24;
	fuzz_check(crc == crc32(f, (size_t)n - 4));
	fuzz_check(f[4] == DUMP_HEADER || f[4] == DUMP_CHAIN || f[4] == DUMP_SAMPLES ||
		   f[4] == DUMP_TRAILER);
	/* header frames 0..h-1, then from `from` on without gaps */
	if (dc->last_seq + 1 != (int64_t)seq)
		fuzz_check(dc->last_seq + 1 == (int64_t)dc->header_frames && seq == dc->from);
	dc->last_seq = seq;
	dc->last_type = f[4];
	dc->frames++;
}

static void check_dump(const struct sample_run *run, uint32_t from)
{
	static struct dump_enc enc;
	static const struct dump_info info = {
		.family = 0x0f, .model = 4, .stepping = 1, .signature = 0xf41,
		.image_base = 0x3e4ec000, .text_start = 0x1000, .text_end = 0x2f000, .run_id = 7,
	};
	struct dump_check dc = { .from = from, .last_seq = -1 };
	const struct report_out out = { .ctx = &dc, .line = dump_line };
	int r = dump_begin(&enc, run, &info, from);

	fuzz_check(r == 0 || r == -2);
	if (r != 0) {
		fuzz_check(dump_begin(&enc, run, &info, 0) == 0 && from >= dump_total_frames(&enc));
		return;
	}
	dc.header_frames = enc.header_frames;
	if (from < dc.header_frames)
		dc.from = dc.header_frames;
	while (dump_next(&enc, &out))
		fuzz_check(dc.frames <= dump_total_frames(&enc));
	fuzz_check(dc.last_type == DUMP_TRAILER);
	fuzz_check(dc.last_seq + 1 == (int64_t)dump_total_frames(&enc));
	if (from == 0)
		fuzz_check(dc.frames == dump_total_frames(&enc));
}

/* One sample from the input into store k (chosen by the input). */
static void feed_sample(const uint8_t **d, size_t *left, struct sample_store *st, struct shadow *sh,
			uint32_t nevents)
{
	struct sample s = { 0 };
	uint8_t head = (uint8_t)take(d, left, 1);

	s.nchain = head & 0x3f;			/* up to 63: the store clamps to 32 */
	s.cpl = (uint8_t)take(d, left, 1);
	s.event = (uint8_t)(take(d, left, 1) % nevents);
	s.lp = (uint8_t)take(d, left, 1);	/* ignored: the store's own LP is used */
	s.tsc = take(d, left, 8);
	s.ip = take(d, left, 8);
	s.rflags = take(d, left, 4) | (uint64_t)take(d, left, 2) << 40;
	s.rsp = take(d, left, 6);
	for (unsigned i = 0; i < s.nchain && i < SAMPLE_MAX_CHAIN; i++)
		s.chain[i] = s.ip + take(d, left, 2) * 8;
	if (sample_store_append(st, &s) == SAMPLE_STORED) {
		fuzz_check(sh->n < SHADOW_MAX);
		sh->s[sh->n++] = as_stored(&s, st->lp);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct shadow shadows[2];
	static struct sample_store st[2];
	static const struct sample_event events[4] = {
		{ "instr_retired:nbogus", 997 }, { "clockticks", 100003 },
		{ "branch_retired", 1 }, { "uops_retired:t1", (UINT64_C(1) << 39) - 1 },
	};
	const struct sample_store *stores[2] = { &st[0], &st[1] };
	struct sample_run run = { .stores = stores, .nstores = 2, .events = events,
				  .comm = "calls", .tsc_hz = 2800000000u };
	uint8_t *mem[2];

	if (size < 4)
		return 0;
	run.nevents = 1 + data[2] % 4;
	for (int k = 0; k < 2; k++) {
		size_t bytes = sample_record_bytes(SAMPLE_MAX_CHAIN) + 8 * (data[k] & 0x7f) + 7;

		mem[k] = malloc(bytes + 8);
		shadows[k].n = 0;
		fuzz_check(sample_store_init(&st[k], mem[k] + (data[k] >> 7) * 3, bytes,
					     (data[2] >> (6 + k)) & 1 ? SAMPLE_WRAP : SAMPLE_STOP_WHEN_FULL,
					     (uint8_t)k) == 0);
	}
	for (const uint8_t *d = data + 4; d < data + size;) {
		size_t left = (size_t)(data + size - d);
		int k = *d & 0x40 ? 1 : 0;

		if (shadows[k].n == SHADOW_MAX)
			break;
		feed_sample(&d, &left, &st[k], &shadows[k], run.nevents);
	}
	check_store(&st[0], &shadows[0]);
	check_store(&st[1], &shadows[1]);
	check_dump(&run, data[3]);
	free(mem[0]);
	free(mem[1]);
	return 0;
}
