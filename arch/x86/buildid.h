/*
 * buildid.h - the kernel's build id: the GNU build-id note that ld
 * --build-id=sha1 writes into each kernel link (nbprof.so, k32/nbprof.so,
 * nbprof32.elf; the link scripts put it first in .data, so the EFI images
 * objcopy makes carry it too). The boot banner and `cpu` print it, and
 * `dump` puts it in the recording's header, so the host tools pick the
 * kernel ELF whose note holds the same bytes.
 *
 * A note is (ELF gABI "Note Section"): u32 namesz, u32 descsz, u32 type,
 * the name padded to 4 bytes, the descriptor. The build id is the
 * descriptor of the note named "GNU" (with its NUL) of type
 * NT_GNU_BUILD_ID.
 */
#ifndef NBPROF_ARCH_X86_BUILDID_H
#define NBPROF_ARCH_X86_BUILDID_H

#include <stddef.h>
#include <stdint.h>

#define BUILDID_MAX		32	/* bytes kept; sha1 gives 20 */
#define BUILDID_HEX_MAX		(2 * BUILDID_MAX + 1)
#define NT_GNU_BUILD_ID		3
#define BUILDID_OWNER_GNU	0x00554e47u	/* "GNU" and its NUL as a little-endian word */

/*
 * The build id in the note at note (len bytes): a pointer to it in the
 * note and its length in *n (1 .. BUILDID_MAX); NULL and 0 when the bytes
 * are not a GNU build-id note or the id is longer than BUILDID_MAX.
 */
const uint8_t *buildid_parse(const uint8_t *note, size_t len, unsigned *n);

/* id (n <= BUILDID_MAX bytes) as lower-case hex into out; "none" when n is 0. */
void buildid_hex(const uint8_t *id, unsigned n, char out[BUILDID_HEX_MAX]);

#endif
