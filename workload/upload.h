/*
 * upload.h - receiving a file over the serial line in nbprof's own frames.
 *
 * The host (tools/nbprof) cuts the file into UPLOAD_CHUNK-byte pieces and
 * sends each as one text line, "NBU:" followed by the base64 (RFC 4648,
 * with padding) of
 *
 *	u32 seq | u16 len | payload[len] | u32 crc
 *
 * little-endian, crc = CRC-32 (lib/crc32.h) of everything before it, the
 * same framing as dump's NBD lines (prof/dump.h). Frames are numbered from
 * 0; frame i holds bytes [i * UPLOAD_CHUNK, ...) of the file. "NBU:END"
 * closes a transfer. The receiver takes frames in order only: a frame with
 * a bad CRC, base64 or length, or one that skips ahead, ends the transfer
 * as broken at the first missing frame (state->next). The rest of the
 * transfer is still read up to NBU:END, so none of it reaches the shell:
 * a frame there that is next in order is kept (a stray line then costs
 * nothing), every other one is dropped, and a resumed transfer starts at
 * state->next. The whole file's CRC-32, given with the upload
 * command, is checked once every frame is in.
 *
 * Portable (host-tested); the kernel side reads lines in shell/cmd_program.c.
 */
#ifndef NBPROF_PROF_UPLOAD_H
#define NBPROF_PROF_UPLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UPLOAD_PREFIX		"NBU:"
#define UPLOAD_END		"NBU:END"
#define UPLOAD_CHUNK		192
#define UPLOAD_FRAME_MAX	(4 + 2 + UPLOAD_CHUNK + 4)
#define UPLOAD_LINE_MAX		(4 + (UPLOAD_FRAME_MAX + 2) / 3 * 4 + 1)

struct upload {
	uint8_t *buf;		/* size bytes, filled in frame order */
	size_t size;
	uint32_t crc;		/* CRC-32 the whole file must have */
	uint32_t frames;	/* upload_frames(size) */
	uint32_t next;		/* first frame not yet received */
};

enum upload_result {
	UPLOAD_TAKEN,		/* frame next was stored; next advanced */
	UPLOAD_REPEAT,		/* a frame already stored (a resend): ignored */
	UPLOAD_BROKEN,		/* bad or out of order: the transfer must resume at next */
	UPLOAD_DONE,		/* the NBU:END line */
	UPLOAD_NOT_FRAME,	/* a line that is not NBU: at all */
};

/* Frames a file of size bytes takes (at least 1). */
uint32_t upload_frames(size_t size);

/* Start receiving into buf (size bytes) a file whose CRC-32 is crc. */
void upload_init(struct upload *u, uint8_t *buf, size_t size, uint32_t crc);

/* Take one received line (without its line end); why says what was wrong. */
enum upload_result upload_line(struct upload *u, const char *line, char *why, size_t whylen);

/* Every frame is in and the whole file's CRC-32 matches. */
bool upload_complete(const struct upload *u);

/* Frame seq of file into line (UPLOAD_LINE_MAX bytes): the sender's side, for tests. */
size_t upload_encode(const uint8_t *file, size_t size, uint32_t seq, char *line);

#endif
