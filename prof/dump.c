/*
 * dump.c - the framed sample encoding described in dump.h.
 *
 * dump_begin() encodes the whole stream once without printing to learn
 * the frame count the header announces, then rewinds; dump_next() encodes
 * frames again in the same order and prints those asked for. Encoding is
 * a pure function of the recording, so both passes and any later
 * `dump --from N` produce identical frames.
 */
#include "prof/dump.h"

#include "lib/crc32.h"

#define DUMP_MAGIC		"NBPROF"
#define DUMP_MAGIC_LEN		6
#define DUMP_HDR_LEN_AT		(DUMP_MAGIC_LEN + 1)	/* u32 blob length */
#define DUMP_HDR_FRAMES_AT	(DUMP_HDR_LEN_AT + 4)	/* u32 total frames */
#define DUMP_STORE_BYTES	(1 + 5 * 8)
#define DUMP_TRAILER_FIXED	(4 + 8 + 4 + 1)
#define DUMP_VARINT_MAX		10
#define DUMP_RECORD_MAX		(3 + 4 * DUMP_VARINT_MAX + SAMPLE_MAX_CHAIN * DUMP_VARINT_MAX)

_Static_assert(DUMP_VARINT_MAX + DUMP_RECORD_MAX <= DUMP_PAYLOAD_MAX, "a record must fit a frame");
_Static_assert(DUMP_PAYLOAD_MAX <= 0xffff, "payload length is a u16");

static const char dump_b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

struct dump_blob {
	uint8_t *p;
	size_t len, cap;
	bool overflow;
};

static void blob_bytes(struct dump_blob *b, const void *src, size_t n)
{
	const uint8_t *s = src;

	if (b->len + n > b->cap) {
		b->overflow = true;
		return;
	}
	for (size_t i = 0; i < n; i++)
		b->p[b->len++] = s[i];
}

/* Little-endian, n bytes of v. */
static void blob_le(struct dump_blob *b, uint64_t v, unsigned n)
{
	uint8_t t[8];

	for (unsigned i = 0; i < n; i++)
		t[i] = (uint8_t)(v >> (8 * i));
	blob_bytes(b, t, n);
}

static void blob_str(struct dump_blob *b, const char *s)
{
	size_t n = 0;

	while (s && s[n] && n < 255)
		n++;
	blob_le(b, n, 1);
	blob_bytes(b, s, n);
}

static void put_le(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

size_t dump_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

uint64_t dump_zigzag(uint64_t a, uint64_t b)
{
	uint64_t d = a - b;

	/* (d << 1) ^ (d >> 63) with an arithmetic shift, spelled without signed overflow. */
	return (d << 1) ^ (0 - (d >> 63));
}

size_t dump_base64(char *out, const uint8_t *in, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16;
		size_t left = n - i;

		if (left > 1)
			v |= (uint32_t)in[i + 1] << 8;
		if (left > 2)
			v |= in[i + 2];
		out[o++] = dump_b64[(v >> 18) & 63];
		out[o++] = dump_b64[(v >> 12) & 63];
		out[o++] = left > 1 ? dump_b64[(v >> 6) & 63] : '=';
		out[o++] = left > 2 ? dump_b64[v & 63] : '=';
	}
	out[o] = '\0';
	return o;
}

static uint32_t dump_symtab_crc_add(uint32_t crc, const struct ksym *sym)
{
	uint8_t addr[8];
	size_t n = 0;

	put_le(addr, sym->addr, 8);
	crc = crc32_update(crc, addr, 8);
	while (sym->name[n])
		n++;
	return crc32_update(crc, sym->name, n + 1);
}

uint32_t dump_symtab_crc(const struct ksym *table, uint32_t count)
{
	uint32_t crc = CRC32_INIT;

	for (uint32_t i = 0; i < count; i++)
		crc = dump_symtab_crc_add(crc, &table[i]);
	return crc;
}

uint32_t dump_symtab_crc_get(struct ksym (*get)(uint32_t i), uint32_t count)
{
	uint32_t crc = CRC32_INIT;

	for (uint32_t i = 0; i < count; i++) {
		struct ksym sym = get(i);

		crc = dump_symtab_crc_add(crc, &sym);
	}
	return crc;
}

static uint8_t run_nstores(const struct sample_run *run)
{
	unsigned n = 0;

	for (uint32_t i = 0; i < run->nstores; i++)
		n += run->stores[i] != NULL;
	return (uint8_t)(n > 255 ? 255 : n);
}

static size_t dump_build_header(struct dump_enc *enc, const struct dump_info *info)
{
	const struct sample_run *run = enc->run;
	struct dump_blob b = { .p = enc->header, .cap = sizeof(enc->header) };
	struct sample_store sum;

	sample_run_totals(run, &sum);
	blob_bytes(&b, DUMP_MAGIC, DUMP_MAGIC_LEN);
	blob_le(&b, DUMP_VERSION, 1);
	blob_le(&b, 0, 4);		/* blob length, patched below */
	blob_le(&b, 0, 4);		/* total frames, patched by dump_begin */
	blob_le(&b, info->family, 1);
	blob_le(&b, info->model, 1);
	blob_le(&b, info->stepping, 1);
	blob_le(&b, info->signature, 4);
	blob_le(&b, run->tsc_hz, 8);
	blob_le(&b, run->tsc_start, 8);
	blob_le(&b, info->image_base, 8);
	blob_le(&b, info->text_start, 8);
	blob_le(&b, info->text_end, 8);
	blob_le(&b, info->symtab_crc, 4);
	blob_le(&b, info->symtab_count, 4);
	blob_le(&b, info->run_id, 8);
	blob_le(&b, sum.held, 8);
	blob_le(&b, run->nevents > 255 ? 255 : run->nevents, 1);
	for (uint32_t i = 0; i < run->nevents && i < 255; i++) {
		blob_le(&b, run->events[i].period, 8);
		blob_str(&b, run->events[i].name);
	}
	blob_str(&b, run->comm);
	blob_le(&b, info->ip_bits ? info->ip_bits : 64, 1);
	if (b.overflow)
		return 0;
	put_le(enc->header + DUMP_HDR_LEN_AT, b.len, 4);
	return b.len;
}

static void dump_build_trailer(struct dump_enc *enc)
{
	const struct sample_run *run = enc->run;
	struct dump_blob b = { .p = enc->trailer, .cap = sizeof(enc->trailer) };
	struct sample_store sum;
	unsigned n = 0;

	sample_run_totals(run, &sum);
	blob_le(&b, enc->total_frames, 4);
	blob_le(&b, sum.held, 8);
	blob_le(&b, enc->data_crc, 4);
	blob_le(&b, run_nstores(run), 1);
	for (uint32_t i = 0; i < run->nstores && n < 255; i++) {
		const struct sample_store *st = run->stores[i];

		if (!st)
			continue;
		n++;
		blob_le(&b, st->lp, 1);
		blob_le(&b, st->held, 8);
		blob_le(&b, st->stored, 8);
		blob_le(&b, st->dropped, 8);
		blob_le(&b, st->overwritten, 8);
		blob_le(&b, st->nested, 8);
	}
	/* dump_begin checked the size, so b.overflow cannot be set here. */
	enc->trailer_len = b.len;
}

/* Back to the first frame, keeping the header and total_frames. */
static void dump_rewind(struct dump_enc *enc)
{
	enc->seq = 0;
	enc->phase = DUMP_PHASE_HEADER;
	enc->blob_pos = 0;
	enc->data_crc = CRC32_INIT;
	enc->index = 0;
	sample_run_iter_init(&enc->ri, enc->run);
	enc->have_next = sample_run_iter_next(&enc->ri, &enc->next);
}

/* Seal the frame whose payload (len bytes) is in place; returns the frame size. */
static size_t dump_seal(struct dump_enc *enc, enum dump_frame_type type, size_t len)
{
	uint8_t *f = enc->frame;

	put_le(f, enc->seq++, 4);
	f[4] = (uint8_t)type;
	put_le(f + 5, len, 2);
	put_le(f + DUMP_FRAME_HEAD + len, crc32(f, DUMP_FRAME_HEAD + len), 4);
	return DUMP_FRAME_HEAD + len + 4;
}

static size_t dump_blob_frame(struct dump_enc *enc, enum dump_frame_type type,
			      const uint8_t *blob, size_t blob_len)
{
	size_t n = blob_len - enc->blob_pos;

	if (n > DUMP_FRAME_TARGET)
		n = DUMP_FRAME_TARGET;
	for (size_t i = 0; i < n; i++)
		enc->frame[DUMP_FRAME_HEAD + i] = blob[enc->blob_pos + i];
	enc->blob_pos += n;
	return dump_seal(enc, type, n);
}

struct dump_delta {
	uint64_t tsc, ip, rsp;
};

static size_t dump_record(uint8_t *p, const struct sample *s, struct dump_delta *prev)
{
	size_t n = 0;
	unsigned nchain = s->nchain > SAMPLE_MAX_CHAIN ? SAMPLE_MAX_CHAIN : s->nchain;
	uint64_t last;

	p[n++] = s->lp;
	p[n++] = s->event;
	p[n++] = (uint8_t)((s->cpl & 3) | nchain << 2);
	n += dump_varint(p + n, dump_zigzag(s->tsc, prev->tsc));
	n += dump_varint(p + n, dump_zigzag(s->ip, prev->ip));
	n += dump_varint(p + n, s->rflags);
	n += dump_varint(p + n, dump_zigzag(s->rsp, prev->rsp));
	last = s->ip;
	for (unsigned i = 0; i < nchain; i++) {
		n += dump_varint(p + n, dump_zigzag(s->chain[i], last));
		last = s->chain[i];
	}
	*prev = (struct dump_delta){ .tsc = s->tsc, .ip = s->ip, .rsp = s->rsp };
	return n;
}

/* Whole records until the frame is full or the samples end. */
static size_t dump_samples_frame(struct dump_enc *enc)
{
	uint8_t *payload = enc->frame + DUMP_FRAME_HEAD;
	uint8_t rec[DUMP_RECORD_MAX];
	struct dump_delta prev = { 0 };
	size_t len = dump_varint(payload, enc->index);
	bool empty = true;

	while (enc->have_next) {
		struct dump_delta saved = prev;
		size_t n = dump_record(rec, &enc->next, &prev);

		if (!empty && len + n > DUMP_FRAME_TARGET) {
			prev = saved;
			break;
		}
		for (size_t i = 0; i < n; i++)
			payload[len + i] = rec[i];
		len += n;
		empty = false;
		enc->index++;
		enc->have_next = sample_run_iter_next(&enc->ri, &enc->next);
	}
	enc->data_crc = crc32_update(enc->data_crc, payload, len);
	return dump_seal(enc, DUMP_SAMPLES, len);
}

/* Encode the next frame into enc->frame; returns its size, 0 at the end. */
static size_t dump_build(struct dump_enc *enc)
{
	switch (enc->phase) {
	case DUMP_PHASE_HEADER:
		if (enc->blob_pos < enc->header_len)
			return dump_blob_frame(enc, DUMP_HEADER, enc->header, enc->header_len);
		enc->header_frames = enc->seq;
		enc->phase = DUMP_PHASE_SAMPLES;
		/* fall through */
	case DUMP_PHASE_SAMPLES:
		if (enc->have_next)
			return dump_samples_frame(enc);
		dump_build_trailer(enc);
		enc->blob_pos = 0;
		enc->phase = DUMP_PHASE_TRAILER;
		/* fall through */
	case DUMP_PHASE_TRAILER:
		if (enc->blob_pos < enc->trailer_len)
			return dump_blob_frame(enc, DUMP_TRAILER, enc->trailer, enc->trailer_len);
		enc->phase = DUMP_PHASE_DONE;
		/* fall through */
	case DUMP_PHASE_DONE:
		break;
	}
	return 0;
}

int dump_begin(struct dump_enc *enc, const struct sample_run *run, const struct dump_info *info,
	       uint32_t from)
{
	uint32_t frames = 0;

	enc->run = run;
	enc->from = from;
	enc->total_frames = 0;
	enc->header_len = dump_build_header(enc, info);
	if (enc->header_len == 0 ||
	    DUMP_TRAILER_FIXED + (size_t)run_nstores(run) * DUMP_STORE_BYTES > DUMP_BLOB_MAX)
		return -1;
	dump_rewind(enc);
	while (dump_build(enc))
		frames++;
	if (from != 0 && from >= frames)
		return -2;
	enc->total_frames = frames;
	put_le(enc->header + DUMP_HDR_FRAMES_AT, frames, 4);
	dump_rewind(enc);
	return 0;
}

bool dump_next(struct dump_enc *enc, const struct report_out *out)
{
	size_t n;

	while ((n = dump_build(enc)) != 0) {
		/* seq was advanced by the frame just built. */
		if (enc->frame[4] == DUMP_HEADER || enc->seq - 1 >= enc->from) {
			size_t p = sizeof(DUMP_LINE_PREFIX) - 1;

			for (size_t i = 0; i < p; i++)
				enc->line[i] = DUMP_LINE_PREFIX[i];
			dump_base64(enc->line + p, enc->frame, n);
			out->line(out->ctx, enc->line);
			return true;
		}
	}
	return false;
}

uint32_t dump_total_frames(const struct dump_enc *enc)
{
	return enc->total_frames;
}
