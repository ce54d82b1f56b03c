/*
 * upload.c - the receiving side of nbprof's upload frames (see upload.h).
 *
 * Pure parsing over caller memory: no hardware, compiled on the host too.
 */
#include "lib/base64.h"
#include "lib/crc32.h"
#include "lib/printf.h"
#include "workload/upload.h"

#define PREFIX_LEN	4

uint32_t upload_frames(size_t size)
{
	return size == 0 ? 1 : (uint32_t)((size + UPLOAD_CHUNK - 1) / UPLOAD_CHUNK);
}

void upload_init(struct upload *u, uint8_t *buf, size_t size, uint32_t crc)
{
	*u = (struct upload){ .buf = buf, .size = size, .crc = crc, .frames = upload_frames(size) };
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static bool has_prefix(const char *line)
{
	for (int i = 0; i < PREFIX_LEN; i++)
		if (line[i] != UPLOAD_PREFIX[i])
			return false;
	return true;
}

static bool is_end(const char *line)
{
	const char *e = UPLOAD_END;

	while (*e && *line == *e)
		line++, e++;
	return !*e && !*line;
}

static enum upload_result upload_broken(char *why, size_t n, const char *fmt, unsigned long v)
{
	ksnprintf(why, n, fmt, v);
	return UPLOAD_BROKEN;
}

enum upload_result upload_line(struct upload *u, const char *line, char *why, size_t whylen)
{
	uint8_t f[UPLOAD_FRAME_MAX];
	long n;
	uint32_t seq, len, want;

	why[0] = '\0';
	if (!has_prefix(line))
		return UPLOAD_NOT_FRAME;
	if (is_end(line))
		return UPLOAD_DONE;
	n = base64_decode(line + PREFIX_LEN, f, sizeof(f));
	if (n < 10)
		return upload_broken(why, whylen, "frame %lu: not a frame (bad base64 or too short)",
				     u->next);
	if (crc32(f, (size_t)n - 4) != rd32(f + n - 4))
		return upload_broken(why, whylen, "frame %lu: CRC mismatch", u->next);
	seq = rd32(f);
	len = (uint32_t)f[4] | (uint32_t)f[5] << 8;
	if (seq < u->next)
		return UPLOAD_REPEAT;
	if (seq > u->next)
		return upload_broken(why, whylen, "frame %lu: missing (a later frame came)", u->next);
	if (seq >= u->frames)
		return upload_broken(why, whylen, "frame %lu: past the end of the file", seq);
	want = seq + 1 < u->frames ? UPLOAD_CHUNK : (uint32_t)(u->size - (size_t)seq * UPLOAD_CHUNK);
	if (len != want || (long)len != n - 10)
		return upload_broken(why, whylen, "frame %lu: wrong length", seq);
	for (uint32_t i = 0; i < len; i++)
		u->buf[(size_t)seq * UPLOAD_CHUNK + i] = f[6 + i];
	u->next++;
	return UPLOAD_TAKEN;
}

bool upload_complete(const struct upload *u)
{
	return u->next == u->frames && crc32(u->buf, u->size) == u->crc;
}

size_t upload_encode(const uint8_t *file, size_t size, uint32_t seq, char *line)
{
	uint8_t f[UPLOAD_FRAME_MAX];
	size_t off = (size_t)seq * UPLOAD_CHUNK;
	size_t len = off >= size ? 0 : size - off < UPLOAD_CHUNK ? size - off : UPLOAD_CHUNK;
	uint32_t crc;

	for (int k = 0; k < 4; k++)
		f[k] = (uint8_t)(seq >> (8 * k));
	f[4] = (uint8_t)len;
	f[5] = (uint8_t)(len >> 8);
	for (size_t i = 0; i < len; i++)
		f[6 + i] = file[off + i];
	crc = crc32(f, 6 + len);
	for (int k = 0; k < 4; k++)
		f[6 + len + (size_t)k] = (uint8_t)(crc >> (8 * k));
	for (int k = 0; k < PREFIX_LEN; k++)
		line[k] = UPLOAD_PREFIX[k];
	return PREFIX_LEN + base64_encode(line + PREFIX_LEN, f, 10 + len);
}
