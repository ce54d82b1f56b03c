/*
 * fuzz_console.c - the screen console on a GOP framebuffer
 * (arch/x86/screen.c) as a firmware describes it and as the kernel's
 * output fills it.
 *
 * Input: width (u16, up to 2047), height (u16, up to 511), pixels per
 * scan line (u16, up to 2047), a signed u16 added to the size a mode of
 * that geometry needs (stride x height x 4 bytes), the pixel format (u8),
 * then the bytes written to the console, flushed at every '\n'. The
 * framebuffer is a heap block of exactly the size the firmware reports, so
 * a pixel drawn past it is an ASan report. Contract checked (screen.h):
 * a mode is taken only with a 32-bit format, pixels per scan line at least
 * the width and a size that holds height lines of them; then no pixel is
 * written outside the block and the description is a terminated string;
 * a refused mode leaves no screen and says why.
 */
#include "arch/x86/screen.h"
#include "tests/fuzz/fuzz.h"

#define HDR	9

static unsigned rd16(const uint8_t *p)
{
	return (unsigned)p[0] | (unsigned)p[1] << 8;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct boot_framebuffer fb = { 0 };
	const char *why = NULL;
	uint64_t need, fbsize;
	int64_t delta;
	uint8_t *mem;
	char what[96];
	bool ok;

	if (size < HDR)
		return 0;
	fb.width = rd16(data) & 0x7ff;
	fb.height = rd16(data + 2) & 0x1ff;
	fb.stride = rd16(data + 4) & 0x7ff;
	need = (uint64_t)fb.stride * fb.height * 4;
	delta = (int16_t)rd16(data + 6);
	fbsize = delta < 0 && need < (uint64_t)-delta ? 0 : need + (uint64_t)delta;
	fb.format = data[8] % 4;
	mem = malloc(fbsize ? fbsize : 1);
	if (mem == NULL)
		abort();
	fb.base = (uintptr_t)mem;
	fb.size = fbsize;
	ok = screen_init_fb(&fb, &why);
	fuzz_check(ok == screen_present());
	if (ok) {
		fuzz_check(fb.format <= 1 && fb.stride >= fb.width && fbsize >= need);
		fuzz_check(fb.width >= SCREEN_CELL_W && fb.height >= SCREEN_CELL_H);
		screen_describe(what, sizeof(what));
		fuzz_check(memchr(what, '\0', sizeof(what)) != NULL);
		for (size_t i = HDR; i < size; i++) {
			screen_putc((char)data[i]);
			if (data[i] == '\n')
				screen_flush();
		}
		screen_flush();
	} else {
		fuzz_check(why != NULL && why[0] != '\0');
	}
	free(mem);
	return 0;
}
