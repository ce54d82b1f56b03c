/*
 * snippet.c - the code generator and the difference arithmetic of `bench`
 * (see workload/snippet.h for the generated function's listing).
 *
 * Encodings from the SDM Vol. 2 instruction pages: PUSH r64 50+rd and POP
 * r64 58+rd (REX.B = 41 for R8-R15), MOV r/m64, imm32 REX.W C7 /0, DEC r/m64
 * REX.W FF /1, JNZ rel32 0F 85 cd, RET C3; ia32: PUSH imm32 68 id, DEC r/m32
 * FF /1 with [esp] (ModRM 0C, SIB 24), ADD r/m32, imm8 83 /0 ib.
 */
#include "arch/x86/insn.h"
#include "lib/parse.h"
#include "lib/printf.h"
#include "workload/snippet.h"

static const uint8_t snippet_prologue[] = {
	0x53, 0x55, 0x41, 0x54, 0x41, 0x55, 0x41, 0x56, 0x41, 0x57,	/* push rbx..r15 */
};
static const uint8_t snippet_epilogue[] = {
	0x41, 0x5f, 0x41, 0x5e, 0x41, 0x5d, 0x41, 0x5c, 0x5d, 0x5b,	/* pop r15..rbx */
	0xc3,								/* ret */
};
static const uint8_t snippet_prologue32[] = { 0x53, 0x55, 0x56, 0x57 };	/* push ebx..edi */
static const uint8_t snippet_epilogue32[] = {
	0x83, 0xc4, 0x04,						/* add esp, 4 */
	0x5f, 0x5e, 0x5d, 0x5b, 0xc3,					/* pop edi..ebx; ret */
};

/* The mode's fixed pieces: prologue, counter set-up opcode, decrement, epilogue. */
struct snippet_frame {
	const uint8_t *pro, *set, *dec, *epi;
	size_t npro, nset, ndec, nepi;
};

static const uint8_t set64[] = { 0x49, 0xc7, 0xc7 }, dec64[] = { 0x49, 0xff, 0xcf };	/* r15 */
static const uint8_t set32[] = { 0x68 }, dec32[] = { 0xff, 0x0c, 0x24 };		/* [esp] */

static const struct snippet_frame snippet_frames[2] = {
	{ snippet_prologue32, set32, dec32, snippet_epilogue32, sizeof(snippet_prologue32),
	  sizeof(set32), sizeof(dec32), sizeof(snippet_epilogue32) },
	{ snippet_prologue, set64, dec64, snippet_epilogue, sizeof(snippet_prologue),
	  sizeof(set64), sizeof(dec64), sizeof(snippet_epilogue) },
};
#define SNIPPET_JNZ_LEN		6	/* 0F 85 rel32 */

int snippet_parse_hex(const char *s, uint8_t *out, size_t max, size_t *n, char *err,
		      size_t errlen)
{
	size_t len = 0;

	while (s[len])
		len++;
	for (size_t i = 0; i < len; i++)
		if (parse_hex_digit(s[i]) < 0) {
			ksnprintf(err, errlen, "'%c' at position %u is not a hex digit", s[i],
				  (unsigned)i + 1);
			return -1;
		}
	if (len % 2) {
		ksnprintf(err, errlen, "odd number of hex digits (%u): bytes are two digits each",
			  (unsigned)len);
		return -1;
	}
	if (len / 2 > max) {
		ksnprintf(err, errlen, "%u bytes, at most %u", (unsigned)(len / 2), (unsigned)max);
		return -1;
	}
	for (size_t i = 0; i < len; i += 2)
		out[i / 2] = (uint8_t)(parse_hex_digit(s[i]) << 4 | parse_hex_digit(s[i + 1]));
	*n = len / 2;
	return 0;
}

#define INSN_MAX	15	/* SDM Vol. 2 2.3.11: an instruction is at most 15 bytes */

int snippet_check_boundary(const uint8_t *code, size_t n, bool mode64, char *err, size_t errlen)
{
	size_t at = 0;

	while (at < n) {
		size_t len = insn_length(code + at, n - at, mode64), left = n - at, need;
		uint8_t pad[2 * INSN_MAX] = { 0 };

		if (len) {
			at += len;
			continue;
		}
		if (left >= INSN_MAX)
			return 1;	/* a whole instruction's worth of bytes: unknown opcode */
		for (size_t i = 0; i < left; i++)
			pad[i] = code[at + i];
		/* with bytes to spare the decoder knows it: the bytes ran out */
		need = insn_length(pad, sizeof(pad), mode64);
		if (!need)
			return 1;
		ksnprintf(err, errlen, "the instruction at byte %u is cut off (needs %u bytes, has %u)",
			  (unsigned)at, (unsigned)need, (unsigned)left);
		return -1;
	}
	return 0;
}

size_t snippet_size(const struct snippet_code *c, unsigned u)
{
	const struct snippet_frame *f = &snippet_frames[c->mode64];

	return f->npro + c->ninit + f->nset + 4 + (size_t)u * c->nbody + f->ndec + SNIPPET_JNZ_LEN +
	       f->nepi;
}

static size_t snippet_put(uint8_t *out, size_t at, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[at + i] = b[i];
	return at + n;
}

static size_t snippet_put32(uint8_t *out, size_t at, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		out[at + (size_t)i] = (uint8_t)(v >> (8 * i));
	return at + 4;
}

size_t snippet_build(const struct snippet_code *c, unsigned u, uint64_t n, uint8_t *out,
		     size_t max, char *err, size_t errlen)
{
	static const uint8_t jnz[] = { 0x0f, 0x85 };
	const struct snippet_frame *f = &snippet_frames[c->mode64];
	size_t at, loop, need;

	if (n < 1 || n > SNIPPET_N_MAX || u < 1 || u > SNIPPET_U_MAX) {
		ksnprintf(err, errlen, "loop count must be 1..%llu and unroll 1..%u",
			  (unsigned long long)SNIPPET_N_MAX, SNIPPET_U_MAX);
		return 0;
	}
	need = snippet_size(c, u);
	if (need > max) {
		ksnprintf(err, errlen, "the generated code (%u bytes: %u x %u snippet bytes, %u init "
			  "and %u of loop) does not fit the %u-byte snippet area", (unsigned)need,
			  u, (unsigned)c->nbody, (unsigned)c->ninit,
			  (unsigned)(need - u * c->nbody - c->ninit), (unsigned)max);
		return 0;
	}
	at = snippet_put(out, 0, f->pro, f->npro);
	at = snippet_put(out, at, c->init, c->ninit);
	at = snippet_put(out, at, f->set, f->nset);
	at = snippet_put32(out, at, (uint32_t)n);
	loop = at;
	for (unsigned k = 0; k < u; k++)
		at = snippet_put(out, at, c->body, c->nbody);
	at = snippet_put(out, at, f->dec, f->ndec);
	at = snippet_put(out, at, jnz, sizeof(jnz));
	/* rel32 counts from the end of the jnz */
	at = snippet_put32(out, at, (uint32_t)(int32_t)-(int32_t)(at + 4 - loop));
	return snippet_put(out, at, f->epi, f->nepi);
}

int64_t snippet_per_iter(uint64_t c1, uint64_t c2, uint64_t n, unsigned u)
{
	uint64_t d = n * u, diff = c2 >= c1 ? c2 - c1 : c1 - c2;
	/* round half away from zero, to the hundredth */
	int64_t v = (int64_t)((diff * 100 + d / 2) / d);

	return c2 >= c1 ? v : -v;
}
