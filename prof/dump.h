/*
 * dump.h - a recording as framed, checksummed text lines for the serial link.
 *
 * Every line a dump prints is one frame: "NBD:" followed by the base64
 * (RFC 4648, with padding) of
 *
 *	u32 seq | u8 type | u16 len | payload[len] | u32 crc
 *
 * little-endian, crc = CRC-32 (lib/crc32.h) of everything before it.
 * Frames are numbered from 0 without gaps. Types:
 *
 *	'H' header   the header blob, cut into frames 0..h-1
 *	'C' chains   the table of call chains (version 4, below)
 *	'S' samples  varint first sample index, then whole sample records
 *	'T' trailer  the trailer blob, cut into the last frames
 *
 * Header blob: "NBPROF", u8 version (3), u32 blob length, u32 total frames,
 * u8 family, model, stepping, u32 CPUID.1:EAX, u64 TSC Hz, u64 TSC at
 * start, u64 runtime image base, u64 text start, u64 text end (link
 * addresses, i.e. offsets from the image base, as tools/build/gensyms writes
 * them), u32 symbol table CRC (dump_symtab_crc), u32 symbol count, u64 run
 * id, u64 samples, u8 events, per event {u64 period, u8 n, n name bytes},
 * u8 n, n bytes of comm, u8 IP bits: 64 from the x86-64 kernel, 32 from the
 * ia32 kernel, whose IPs, stack pointers and return addresses are 32-bit
 * values (recorded zero-extended; the varints are the same), u8 k, k times
 * {u8 LP, u8 n, n bytes of that LP's comm} (the workload each LP ran, when
 * it differs by LP: `--pair`). Version 1 had no IP-bits byte and always
 * 64-bit IPs, versions 1 and 2 no per-LP comms and no sample weights;
 * tools/nbprof-decode reads all three.
 *
 * Version 4 makes a sample a few bytes:
 *
 *	'C' chains   after the header, before the samples: the recording's
 *	             table of call chains, whole entries per frame: varint
 *	             first entry index, then per entry varint n (1..32) and n
 *	             zigzag deltas (the first against the previous entry's
 *	             first in the frame, 0 at the frame's start; the others
 *	             against the address before them). Entries are the
 *	             distinct chains in run order, up to DUMP_CHAINS of them.
 *	header       ends with u8 flags: bit 0 = every record carries a chain
 *	             reference (the recording has call chains).
 *	record       u8 head: CPL (bits 1:0), LP (bit 2), event (bits 4:3; 3 =
 *	             escape: u8 LP and u8 event follow), RFLAGS as the previous
 *	             record's (bit 5), RSP as the previous (bit 6), weight as
 *	             the previous (bit 7); then varints: zigzag(IP - previous
 *	             IP), zigzag(TSC step - its guess), where the TSC step is TSC
 *	             - previous TSC and the guess the step of the frame's last
 *	             record but the first whose IP hashed alike ((IP ^ IP >> 4 ^
 *	             IP >> 8) & 15), else the previous record's step (0 after the first) (a loop's samples recur at
 *	             the same IPs with the same timing), RFLAGS XOR the previous RFLAGS unless bit 5
 *	             (the flags that changed), zigzag(RSP - previous
 *	             RSP) unless bit 6, the weight unless bit 7, and with flags
 *	             bit 0 the chain reference: 0 none, 1 inline (varint n, then
 *	             n deltas as in version 3), k >= 2 table entry k - 2.
 *
 * Version 5 (what this kernel writes) is version 4 with the kernel's build
 * id at the end of the header, after the flags byte: u8 n, n bytes (the
 * descriptor of the GNU build-id note, arch/x86/buildid.h; n = 0: none).
 * tools/nbprof-decode names samples only from the kernel ELF whose note
 * holds the same bytes.
 *
 * "Previous" values (TSC, TSC step, IP, RFLAGS, RSP, weight) are 0 at the
 * start of each frame, so a frame decodes with the table alone. The 'C'
 * payloads count in the trailer's data CRC like the 'S' ones.
 *
 * Version 3 sample record: u8 LP, u8 event, u8 CPL | nchain << 2, then unsigned
 * LEB128 varints: zigzag(TSC - previous TSC), zigzag(IP - previous IP),
 * RFLAGS, zigzag(RSP - previous RSP), the weight (the events the sample
 * stands for; version 3, versions 1 and 2 had none), and per return address zigzag(addr -
 * the address before it in the stack, the IP for the first). "Previous"
 * restarts at 0 in every frame, so each frame decodes on its own and a lost
 * frame loses only its own samples. zigzag(d) = (d << 1) ^ (d >> 63) on the
 * 64-bit two's-complement difference.
 *
 * Trailer blob: u32 total frames, u64 samples, u32 CRC-32 of all 'S'
 * payloads in order, u8 stores, per store {u8 LP, u64 held, stored,
 * dropped, overwritten, nested}.
 *
 * `dump --from N` re-encodes the same recording and prints the header
 * frames and then frames N onwards; the encoding is deterministic, so the
 * frames match the first transfer's byte for byte and tools/nbprof-decode
 * merges the two captures.
 *
 * The encoder is incremental: dump_next() prints one frame per call, so the
 * caller can show progress or stop on Ctrl-C between frames.
 *
 * Portable: compiled freestanding in the kernel and on the host for tests.
 */
#ifndef NBPROF_PROF_DUMP_H
#define NBPROF_PROF_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/buildid.h"
#include "arch/x86/ksyms.h"
#include "prof/report.h"
#include "prof/samples.h"

#define DUMP_LINE_PREFIX	"NBD:"
#define DUMP_VERSION		5
#define DUMP_FRAME_HEAD		7	/* seq, type, len */
#define DUMP_FRAME_TARGET	240	/* payload bytes a frame is filled up to */
#define DUMP_PAYLOAD_MAX	400	/* one record with a full chain always fits */
#define DUMP_FRAME_MAX		(DUMP_FRAME_HEAD + DUMP_PAYLOAD_MAX + 4)
#define DUMP_LINE_MAX		(sizeof(DUMP_LINE_PREFIX) + (DUMP_FRAME_MAX + 2) / 3 * 4)
#define DUMP_BLOB_MAX		4096	/* header or trailer */
#define DUMP_CHAINS		256	/* call chains in the table */
#define DUMP_CHAIN_WORDS	4096	/* their return addresses */
#define DUMP_CHAIN_SLOTS	512	/* hash slots (a power of two) */

enum dump_frame_type {
	DUMP_HEADER = 'H',
	DUMP_CHAIN = 'C',
	DUMP_SAMPLES = 'S',
	DUMP_TRAILER = 'T',
};

/* What the header says about the machine and the image, besides the run. */
struct dump_info {
	uint8_t family, model, stepping;	/* DisplayFamily/DisplayModel/stepping */
	uint32_t signature;			/* CPUID.1:EAX */
	uint64_t image_base;			/* runtime ImageBase */
	uint64_t text_start, text_end;		/* link addresses (ksym_text_start/end) */
	uint32_t symtab_crc;			/* dump_symtab_crc_get(ksym_get, ksym_count) */
	uint32_t symtab_count;
	uint64_t run_id;			/* anything that tells runs apart (start TSC) */
	uint8_t ip_bits;			/* 32 or 64 (mode.h MODE_BITS); 0 means 64 */
	const uint8_t *build_id;		/* the kernel's (arch/x86/buildid.h) */
	unsigned build_id_len;			/* bytes at build_id (at most BUILDID_MAX; 0: none) */
};

enum dump_phase {
	DUMP_PHASE_HEADER, DUMP_PHASE_CHAINS, DUMP_PHASE_SAMPLES, DUMP_PHASE_TRAILER,
	DUMP_PHASE_DONE
};

/* The per-recording table of call chains ('C' frames). */
struct dump_chains {
	bool any;				/* some sample has a call chain */
	uint16_t n;				/* entries */
	uint16_t at[DUMP_CHAINS + 1];		/* entry k is word[at[k] .. at[k + 1]) */
	uint16_t slot[DUMP_CHAIN_SLOTS];	/* 1 + entry, 0 = free */
	uint64_t word[DUMP_CHAIN_WORDS];
};

struct dump_enc {
	const struct sample_run *run;
	uint32_t from;			/* first non-header frame to print */
	uint32_t seq;			/* next frame number */
	uint32_t total_frames;
	uint32_t header_frames;
	enum dump_phase phase;
	size_t header_len, trailer_len, blob_pos;
	uint32_t data_crc;		/* CRC of 'C' and 'S' payloads so far */
	uint64_t index;			/* run-order index of the next sample */
	uint32_t chain_next;		/* next table entry to send */
	struct dump_chains chains;
	struct sample_run_iter ri;
	struct sample next;
	bool have_next;
	uint8_t header[DUMP_BLOB_MAX];
	uint8_t trailer[DUMP_BLOB_MAX];
	uint8_t frame[DUMP_FRAME_MAX];
	char line[DUMP_LINE_MAX];
};

/*
 * Prepare a dump of run (which must not change until the dump is done);
 * frames before `from` other than the header are encoded but not printed.
 * Returns 0; -1 when the header or trailer would exceed DUMP_BLOB_MAX, -2
 * when from is past the last frame (nothing printed either way).
 */
int dump_begin(struct dump_enc *enc, const struct sample_run *run, const struct dump_info *info,
	       uint32_t from);

/* Print the next frame through out->line; false when the dump is complete. */
bool dump_next(struct dump_enc *enc, const struct report_out *out);

/* Frames of the whole dump (header, samples, trailer). */
uint32_t dump_total_frames(const struct dump_enc *enc);

/*
 * CRC-32 of the symbol table: per entry, its link address as 8 bytes
 * little-endian, then its name and a NUL. The host recomputes it from
 * `nm -n` of the ELF to check that it symbolises with the right image.
 */
uint32_t dump_symtab_crc(const struct ksym *table, uint32_t count);
/* The same over symbols 0..count-1 as get(i) returns them (the kernel: ksym_get). */
uint32_t dump_symtab_crc_get(struct ksym (*get)(uint32_t i), uint32_t count);

/* Unsigned LEB128 of v into p (at most 10 bytes); returns the length. */
size_t dump_varint(uint8_t *p, uint64_t v);
uint64_t dump_zigzag(uint64_t a, uint64_t b);	/* zigzag(a - b) */

#endif
