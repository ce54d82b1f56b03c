/*
 * buildid.c - read the GNU build-id note (buildid.h). Portable: the kernel
 * reads its own note, the host tests read made-up ones.
 */
#include "arch/x86/buildid.h"

#include "lib/printf.h"
#include "lib/string.h"

static uint32_t note_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

unsigned buildid_parse(const uint8_t *note, size_t len, uint8_t *id)
{
	uint32_t namesz, descsz;

	if (len < 16)
		return 0;
	namesz = note_u32(note);
	descsz = note_u32(note + 4);
	if (namesz != 4 || note_u32(note + 8) != NT_GNU_BUILD_ID || memcmp(note + 12, "GNU", 4))
		return 0;
	if (descsz == 0 || descsz > BUILDID_MAX || descsz > len - 16)
		return 0;
	memcpy(id, note + 16, descsz);
	return descsz;
}

void buildid_hex(const uint8_t *id, unsigned n, char *out, size_t cap)
{
	size_t at = 0;

	if (!n) {
		ksnprintf(out, cap, "none");
		return;
	}
	out[0] = '\0';
	for (unsigned i = 0; i < n && at + 3 <= cap; i++, at += 2)
		ksnprintf(out + at, cap - at, "%02x", id[i]);
}
