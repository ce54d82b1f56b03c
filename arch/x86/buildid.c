/*
 * buildid.c - read the GNU build-id note (buildid.h). Portable: the kernel
 * reads its own note, the host tests read made-up ones.
 */
#include "arch/x86/buildid.h"

#include "lib/string.h"

const uint8_t *buildid_parse(const uint8_t *note, size_t len, unsigned *n)
{
	uint32_t w[4];		/* namesz, descsz, type, name: little-endian, as x86 is */

	*n = 0;
	if (len < sizeof(w))
		return NULL;
	memcpy(w, note, sizeof(w));
	if (w[0] != 4 || w[2] != NT_GNU_BUILD_ID || w[3] != BUILDID_OWNER_GNU ||
	    w[1] - 1 >= BUILDID_MAX || w[1] > len - sizeof(w))
		return NULL;
	*n = w[1];
	return note + sizeof(w);
}

void buildid_hex(const uint8_t *id, unsigned n, char out[BUILDID_HEX_MAX])
{
	static const char digits[16] = "0123456789abcdef";

	if (!n) {
		memcpy(out, "none", 5);
		return;
	}
	for (unsigned i = 0; i < n; i++, out += 2) {
		out[0] = digits[id[i] >> 4];
		out[1] = digits[id[i] & 15];
	}
	*out = '\0';
}
