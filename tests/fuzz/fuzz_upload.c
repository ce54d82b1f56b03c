/*
 * fuzz_upload.c - the upload frames end to end (workload/upload.c): a file
 * sent as the host sends it, through a line the input damages.
 *
 * The input's first bytes give the file's size, the rest is both the
 * file's content and the script of damage: frames dropped, repeated, sent
 * out of order, bytes changed, garbage lines between them. Contract
 * checked (upload.h): a frame is taken only in order (next moves by one),
 * a repeat only for a frame already in, next never passes the frame
 * count, a broken line leaves next alone; upload_complete never holds for
 * a buffer that is not the file; and resuming from next with clean frames
 * always completes with exactly the file. Raw input lines (the whole input
 * as one line) never overrun the buffer (ASan).
 */
#include "lib/crc32.h"
#include "workload/upload.h"
#include "tests/fuzz/fuzz.h"

static uint8_t pick(const uint8_t *d, size_t n, size_t *at)
{
	return n ? d[(*at)++ % n] : 0;
}

static void feed(struct upload *u, const char *line, uint32_t frames)
{
	uint32_t before = u->next;
	char why[96];
	enum upload_result r = upload_line(u, line, why, sizeof(why));

	fuzz_check(u->next <= frames);
	if (r == UPLOAD_TAKEN)
		fuzz_check(u->next == before + 1);
	else
		fuzz_check(u->next == before);
	if (r == UPLOAD_BROKEN)
		fuzz_check(memchr(why, 0, sizeof(why)) && why[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n = size < 2 ? 1 : 1 + ((size_t)data[0] | (size_t)data[1] << 8) % 4000, at = 2;
	uint8_t *file = malloc(n), *buf = malloc(n);
	char line[UPLOAD_LINE_MAX + 16];
	struct upload u;
	char *raw;

	for (size_t i = 0; i < n; i++)
		file[i] = size ? data[(i * 7 + 3) % size] : 0;
	memset(buf, 0, n);
	upload_init(&u, buf, n, crc32(file, n));
	for (unsigned step = 0; step < 64 && at < size; step++) {
		uint8_t op = pick(data, size, &at), arg = pick(data, size, &at);
		uint32_t seq = op & 1 ? u.next : arg % (u.frames + 2);

		upload_encode(file, n, seq < u.frames ? seq : 0, line);
		if (seq >= u.frames)
			snprintf(line, sizeof(line), "NBU:%.*s", (int)(arg % 40),
				 "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=====");
		if ((op & 6) == 2) {		/* one character changed */
			size_t len = strlen(line);

			line[4 + arg % (len > 4 ? len - 4 : 1)] ^= pick(data, size, &at) | 1;
			if (!line[4 + arg % (len > 4 ? len - 4 : 1)])
				line[4 + arg % (len > 4 ? len - 4 : 1)] = 'A';
		} else if ((op & 6) == 4) {	/* cut short */
			line[4 + arg % (strlen(line) - 3)] = 0;
		}
		feed(&u, line, u.frames);
		if (upload_complete(&u))
			fuzz_check(memcmp(buf, file, n) == 0);
	}
	feed(&u, UPLOAD_END, u.frames);
	for (uint32_t s = u.next; s < u.frames; s++) {	/* the resume, on a clean line */
		upload_encode(file, n, s, line);
		feed(&u, line, u.frames);
	}
	fuzz_check(u.next == u.frames && upload_complete(&u));
	fuzz_check(memcmp(buf, file, n) == 0);
	raw = fuzz_cstr(data, size);			/* the input as a line as it is */
	upload_init(&u, buf, n, crc32(file, n) ^ 1);
	feed(&u, raw, u.frames);
	fuzz_check(!upload_complete(&u));
	free(raw);
	free(file);
	free(buf);
	return 0;
}
