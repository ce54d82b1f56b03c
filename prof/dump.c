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

#include "lib/base64.h"
#include "lib/crc32.h"
#include "pmu/p4_regs.h"

#define DUMP_MAGIC		"NBPROF"
#define DUMP_MAGIC_LEN		6
#define DUMP_HDR_LEN_AT		(DUMP_MAGIC_LEN + 1)	/* u32 blob length */
#define DUMP_HDR_FRAMES_AT	(DUMP_HDR_LEN_AT + 4)	/* u32 total frames */
#define DUMP_STORE_BYTES	(1 + 5 * 8)
#define DUMP_TRAILER_FIXED	(4 + 8 + 4 + 1)
#define DUMP_VARINT_MAX		10
#define DUMP_RECORD_MAX		(3 + 6 * DUMP_VARINT_MAX + SAMPLE_MAX_CHAIN * DUMP_VARINT_MAX)
#define DUMP_CHAIN_MAX		((1 + SAMPLE_MAX_CHAIN) * DUMP_VARINT_MAX)
#define DUMP_HEAD_LP		BIT(2)
#define DUMP_HEAD_EVENT		BITS(4, 3)
#define DUMP_HEAD_EVENT_ESC	3
#define DUMP_HEAD_FLAGS_SAME	BIT(5)
#define DUMP_HEAD_RSP_SAME	BIT(6)
#define DUMP_HEAD_WEIGHT_SAME	BIT(7)
#define DUMP_REF_NONE		0
#define DUMP_REF_INLINE		1
#define DUMP_REF_TABLE		2	/* + entry */

_Static_assert(DUMP_VARINT_MAX + DUMP_RECORD_MAX <= DUMP_PAYLOAD_MAX, "a record must fit a frame");
_Static_assert(DUMP_VARINT_MAX + DUMP_CHAIN_MAX <= DUMP_PAYLOAD_MAX, "a chain must fit a frame");
_Static_assert(DUMP_CHAINS + DUMP_REF_TABLE < 16384, "a table reference is at most 2 bytes");
_Static_assert(DUMP_PAYLOAD_MAX <= 0xffff, "payload length is a u16");


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

/* u8 k, then k times {u8 LP, comm}: the LPs whose samples carry their own workload's name. */
static void dump_lp_comms(struct dump_blob *b, const struct sample_run *run)
{
	unsigned k = (run->lp_comm[0] != NULL) + (run->lp_comm[1] != NULL);

	blob_le(b, k, 1);
	for (unsigned lp = 0; lp < 2; lp++) {
		if (!run->lp_comm[lp])
			continue;
		blob_le(b, lp, 1);
		blob_str(b, run->lp_comm[lp]);
	}
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
	unsigned id_len;

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
	dump_lp_comms(&b, run);
	blob_le(&b, enc->chains.any ? 1 : 0, 1);	/* flags: chain references */
	id_len = info->build_id_len <= BUILDID_MAX ? info->build_id_len : 0;
	blob_le(&b, id_len, 1);
	if (id_len)
		blob_bytes(&b, info->build_id, id_len);
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
	enc->chain_next = 0;
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

/* ---- the table of call chains ---------------------------------------------------- */

static unsigned sample_nchain(const struct sample *s)
{
	return s->nchain > SAMPLE_MAX_CHAIN ? SAMPLE_MAX_CHAIN : s->nchain;
}

static uint32_t chain_hash(const uint64_t *w, unsigned n)
{
	uint32_t h = 2166136261u;	/* FNV-1a over the addresses' bytes */

	for (unsigned i = 0; i < n; i++)
		for (unsigned b = 0; b < 8; b++)
			h = (h ^ (uint8_t)(w[i] >> (8 * b))) * 16777619u;
	return h;
}

static bool chain_is(const struct dump_chains *t, unsigned k, const uint64_t *w, unsigned n)
{
	if ((unsigned)(t->at[k + 1] - t->at[k]) != n)
		return false;
	for (unsigned i = 0; i < n; i++)
		if (t->word[t->at[k] + i] != w[i])
			return false;
	return true;
}

/* The slot that holds chain w[0..n) or the free one where it would go; -1 when full. */
static int chain_slot(const struct dump_chains *t, const uint64_t *w, unsigned n)
{
	uint32_t h = chain_hash(w, n);

	for (unsigned probe = 0; probe < DUMP_CHAIN_SLOTS; probe++) {
		unsigned i = (h + probe) & (DUMP_CHAIN_SLOTS - 1);

		if (t->slot[i] == 0 || chain_is(t, t->slot[i] - 1u, w, n))
			return (int)i;
	}
	return -1;
}

/* Table entry of a sample's chain, or -1 (no chain, or not in the table). */
static int chain_find(const struct dump_chains *t, const struct sample *s)
{
	int i;

	if (sample_nchain(s) == 0)
		return -1;
	i = chain_slot(t, s->chain, sample_nchain(s));
	return i < 0 || t->slot[i] == 0 ? -1 : t->slot[i] - 1;
}

static void chain_add(struct dump_chains *t, const struct sample *s)
{
	unsigned n = sample_nchain(s);
	int i;

	if (n == 0)
		return;
	t->any = true;
	i = chain_slot(t, s->chain, n);
	if (i < 0 || t->slot[i] != 0 || t->n >= DUMP_CHAINS ||
	    t->at[t->n] + n > DUMP_CHAIN_WORDS)
		return;			/* known, or no room: it goes inline */
	for (unsigned k = 0; k < n; k++)
		t->word[t->at[t->n] + k] = s->chain[k];
	t->at[t->n + 1] = (uint16_t)(t->at[t->n] + n);
	t->slot[i] = (uint16_t)(++t->n);
}

/* The distinct chains of the run, in run order, as far as the table holds them. */
static void dump_build_chains(struct dump_enc *enc)
{
	struct dump_chains *t = &enc->chains;
	struct sample_run_iter ri;
	struct sample s;

	t->any = false;
	t->n = 0;
	t->at[0] = 0;
	for (unsigned i = 0; i < DUMP_CHAIN_SLOTS; i++)
		t->slot[i] = 0;
	sample_run_iter_init(&ri, enc->run);
	while (sample_run_iter_next(&ri, &s))
		chain_add(t, &s);
}

/* Whole table entries until the frame is full. */
static size_t dump_chains_frame(struct dump_enc *enc)
{
	const struct dump_chains *t = &enc->chains;
	uint8_t *payload = enc->frame + DUMP_FRAME_HEAD;
	size_t len = dump_varint(payload, enc->chain_next);
	uint64_t first = 0;
	bool empty = true;

	while (enc->chain_next < t->n) {
		const uint64_t *w = &t->word[t->at[enc->chain_next]];
		unsigned n = (unsigned)(t->at[enc->chain_next + 1] - t->at[enc->chain_next]);
		uint8_t rec[DUMP_CHAIN_MAX];
		size_t k = dump_varint(rec, n);

		k += dump_varint(rec + k, dump_zigzag(w[0], first));
		for (unsigned i = 1; i < n; i++)
			k += dump_varint(rec + k, dump_zigzag(w[i], w[i - 1]));
		if (!empty && len + k > DUMP_FRAME_TARGET)
			break;
		empty = false;
		for (size_t i = 0; i < k; i++)
			payload[len + i] = rec[i];
		len += k;
		first = w[0];
		enc->chain_next++;
	}
	enc->data_crc = crc32_update(enc->data_crc, payload, len);
	return dump_seal(enc, DUMP_CHAIN, len);
}

/* ---- sample records ---------------------------------------------------------------- */

#define DUMP_STEP_SLOTS		16

/*
 * "Previous" values of a frame's records. step_at[] keeps the TSC step last
 * seen at an IP (by a hash of it): a loop's samples recur at the same IPs
 * with the same timing, so that is the prediction, else the last step.
 */
struct dump_delta {
	uint64_t tsc, step, ip, rflags, rsp, weight;
	uint64_t step_at[DUMP_STEP_SLOTS];
	uint16_t step_seen;			/* bit k: step_at[k] is set */
	bool started;				/* a record before: step is a step */
};

static unsigned dump_step_slot(uint64_t ip)
{
	return (unsigned)(ip ^ ip >> 4 ^ ip >> 8) & (DUMP_STEP_SLOTS - 1);
}

static uint64_t dump_step_guess(const struct dump_delta *prev, uint64_t ip)
{
	unsigned k = dump_step_slot(ip);

	return prev->step_seen & (1u << k) ? prev->step_at[k] : prev->step;
}

static size_t dump_chain_ref(const struct dump_enc *enc, uint8_t *p, const struct sample *s)
{
	unsigned nchain = sample_nchain(s);
	int k = chain_find(&enc->chains, s);
	uint64_t last = s->ip;
	size_t n;

	if (nchain == 0)
		return dump_varint(p, DUMP_REF_NONE);
	if (k >= 0)
		return dump_varint(p, DUMP_REF_TABLE + (uint64_t)k);
	n = dump_varint(p, DUMP_REF_INLINE);
	n += dump_varint(p + n, nchain);
	for (unsigned i = 0; i < nchain; i++) {
		n += dump_varint(p + n, dump_zigzag(s->chain[i], last));
		last = s->chain[i];
	}
	return n;
}

static size_t dump_record(const struct dump_enc *enc, uint8_t *p, const struct sample *s,
			  struct dump_delta *prev)
{
	bool esc = s->lp > 1 || s->event >= DUMP_HEAD_EVENT_ESC;
	uint64_t step = s->tsc - prev->tsc;
	size_t n = 1;

	p[0] = (uint8_t)((s->cpl & 3) | (s->lp & 1 ? DUMP_HEAD_LP : 0) |
			 field_prep(DUMP_HEAD_EVENT, esc ? DUMP_HEAD_EVENT_ESC : s->event) |
			 (s->rflags == prev->rflags ? DUMP_HEAD_FLAGS_SAME : 0) |
			 (s->rsp == prev->rsp ? DUMP_HEAD_RSP_SAME : 0) |
			 (s->weight == prev->weight ? DUMP_HEAD_WEIGHT_SAME : 0));
	if (esc) {
		p[n++] = s->lp;
		p[n++] = s->event;
	}
	n += dump_varint(p + n, dump_zigzag(s->ip, prev->ip));
	n += dump_varint(p + n, dump_zigzag(step, dump_step_guess(prev, s->ip)));
	if (s->rflags != prev->rflags)		/* the bits that changed: often one byte */
		n += dump_varint(p + n, s->rflags ^ prev->rflags);
	if (s->rsp != prev->rsp)
		n += dump_varint(p + n, dump_zigzag(s->rsp, prev->rsp));
	if (s->weight != prev->weight)
		n += dump_varint(p + n, s->weight);
	if (enc->chains.any)
		n += dump_chain_ref(enc, p + n, s);
	if (prev->started) {		/* the frame's first "step" is its first TSC */
		prev->step_at[dump_step_slot(s->ip)] = step;
		prev->step_seen |= (uint16_t)(1u << dump_step_slot(s->ip));
	}
	prev->tsc = s->tsc;
	prev->step = prev->started ? step : 0;
	prev->started = true;
	prev->ip = s->ip;
	prev->rflags = s->rflags;
	prev->rsp = s->rsp;
	prev->weight = s->weight;
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
		size_t n = dump_record(enc, rec, &enc->next, &prev);

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
		enc->phase = DUMP_PHASE_CHAINS;
		/* fall through */
	case DUMP_PHASE_CHAINS:
		if (enc->chain_next < enc->chains.n)
			return dump_chains_frame(enc);
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
	dump_build_chains(enc);
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
			base64_encode(enc->line + p, enc->frame, n);
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
