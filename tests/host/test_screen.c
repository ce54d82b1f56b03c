/*
 * test_screen.c - the screen console's grid and drawing (arch/x86/screen.c)
 * on a framebuffer in host memory, and the keyboard's scan-code decoder
 * (arch/x86/kbd_map.c).
 *
 * The framebuffer is read back cell by cell and matched against the font
 * (every glyph differs), so a test sees the characters a user would see.
 * Scan codes are set 1 (IBM PC/XT key numbers: 1EH = A, 2AH = left Shift,
 * 1DH = Ctrl, 3AH = Caps Lock, 1CH = Enter, 0EH = Backspace, E0 48 = Up);
 * a break code is the make code with bit 7 set.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "arch/x86/kbd.h"
#include "arch/x86/screen.h"

#define COLS	20
#define ROWS	4
#define W	(COLS * SCREEN_CELL_W + 3)	/* a few pixels that belong to no cell */
#define H	(ROWS * SCREEN_CELL_H + 5)
#define STRIDE	(W + 7)

static uint32_t fbmem[STRIDE * H];

static void fb_open(void)
{
	struct boot_framebuffer fb = {
		.base = (uintptr_t)fbmem, .size = sizeof(fbmem), .width = W, .height = H,
		.stride = STRIDE, .format = 1,
	};
	const char *why = NULL;

	memset(fbmem, 0x5a, sizeof(fbmem));
	assert_true(screen_init_fb(&fb, &why));
	assert_true(screen_present());
}

/* The character a cell shows ('?' when it matches no glyph). */
static char cell(unsigned row, unsigned col)
{
	uint8_t rows[8];

	for (unsigned y = 0; y < 8; y++) {
		const uint32_t *p = fbmem + (row * SCREEN_CELL_H + 2 * y) * STRIDE + col * SCREEN_CELL_W;

		rows[y] = 0;
		for (unsigned x = 0; x < 8; x++)
			if (p[x])
				rows[y] |= (uint8_t)(0x80u >> x);
	}
	for (unsigned g = 0; g < SCREEN_FONT_GLYPHS; g++)
		if (memcmp(rows, screen_font8x8[g], 8) == 0)
			return (char)(SCREEN_FONT_FIRST + g);
	return '?';
}

/* One screen row as text, trailing blanks cut. */
static const char *line(unsigned row)
{
	static char buf[COLS + 1];
	int n = 0;

	for (unsigned c = 0; c < COLS; c++)
		buf[c] = cell(row, c);
	buf[COLS] = '\0';
	for (n = COLS; n > 0 && buf[n - 1] == ' '; n--)
		;
	buf[n] = '\0';
	return buf;
}

static void put(const char *s)
{
	while (*s)
		screen_putc(*s++);
	screen_flush();
}

static void glyphs_all_differ(void **state)
{
	for (unsigned a = 0; a < SCREEN_FONT_GLYPHS; a++)
		for (unsigned b = a + 1; b < SCREEN_FONT_GLYPHS; b++)
			assert_memory_not_equal(screen_font8x8[a], screen_font8x8[b], 8);
}

static void text_appears_and_the_frame_is_cleared(void **state)
{
	char what[96];

	fb_open();
	put("nbprof> cpu\n");
	assert_string_equal(line(0), "nbprof> cpu");
	assert_string_equal(line(1), "");
	/* pixels outside the cells are left alone */
	assert_int_equal(fbmem[(ROWS * SCREEN_CELL_H + 2) * STRIDE], 0x5a5a5a5a);
	assert_int_equal(fbmem[COLS * SCREEN_CELL_W + 1], 0x5a5a5a5a);
	screen_describe(what, sizeof(what));
	assert_non_null(strstr(what, "20x4 characters"));
}

static void long_lines_wrap_and_the_screen_scrolls(void **state)
{
	fb_open();
	put("0123456789abcdefghijKLM\n");	/* 23 characters: 20, then 3 */
	assert_string_equal(line(0), "0123456789abcdefghij");
	assert_string_equal(line(1), "KLM");
	put("exactly-twenty-chars\nnext\n");	/* 20 characters then \n: one row, no blank one;
						   the \n after "next" scrolls */
	assert_string_equal(line(0), "KLM");
	assert_string_equal(line(1), "exactly-twenty-chars");
	assert_string_equal(line(2), "next");
	assert_string_equal(line(3), "");
	put("last");
	assert_string_equal(line(0), "KLM");
	assert_string_equal(line(1), "exactly-twenty-chars");
	assert_string_equal(line(2), "next");
	assert_string_equal(line(3), "last");
	put("\n\n\nz");				/* three scrolls in one flush: nothing stale */
	assert_string_equal(line(0), "last");
	assert_string_equal(line(1), "");
	assert_string_equal(line(2), "");
	assert_string_equal(line(3), "z");
}

static void control_characters_and_escapes(void **state)
{
	fb_open();
	put("abx\b \bc\n");			/* the shell's erase: "\b \b" */
	assert_string_equal(line(0), "abc");
	put("a\tb\n");
	assert_string_equal(line(1), "a       b");
	put("\x1b[2Jred\x1b[31m!\x1b(B\x07\n");	/* ESC [ ... final dropped; ESC ( dropped with its
						   next byte; BEL dropped */
	assert_string_equal(line(2), "red!");
	put("12345\rX");
	assert_string_equal(line(3), "X2345");
}

static void cursor_is_the_bottom_pixel_row(void **state)
{
	const uint32_t *bottom;

	fb_open();
	put("ab");
	bottom = fbmem + (SCREEN_CELL_H - 1) * STRIDE + 2 * SCREEN_CELL_W;
	for (unsigned x = 0; x < 8; x++)
		assert_int_not_equal(bottom[x], 0);	/* under column 2 */
	assert_int_equal(bottom[-8], 0);		/* not under 'b' any more */
	assert_int_equal(cell(0, 2), ' ');	/* the even pixel rows still read a blank */
	put("c");
	assert_int_equal(bottom[0], 0);
}

static void refuses_what_it_cannot_draw(void **state)
{
	struct boot_framebuffer fb = { .base = (uintptr_t)fbmem, .width = W, .height = H,
				       .stride = STRIDE, .format = 2 };
	const char *why = NULL;

	assert_false(screen_init_fb(&fb, &why));
	assert_non_null(strstr(why, "pixel format"));
	fb.format = 0;
	fb.base = 0;
	assert_false(screen_init_fb(&fb, &why));
	assert_non_null(strstr(why, "no GOP framebuffer"));
	fb.base = (uintptr_t)fbmem;
	fb.height = 10;
	assert_false(screen_init_fb(&fb, &why));
	assert_false(screen_present());
}

/* --- the keyboard --------------------------------------------------------- */

static unsigned feed(struct kbd_state *st, const uint8_t *codes, size_t n, char *out)
{
	unsigned total = 0;

	for (size_t i = 0; i < n; i++)
		total += kbd_decode(st, codes[i], out + total);
	out[total] = '\0';
	return total;
}

#define FEED(st, out, ...) ({ static const uint8_t c_[] = { __VA_ARGS__ }; \
			      feed(st, c_, sizeof(c_), out); })

/*
 * N3: a mode whose PixelsPerScanLine is less than its width, or whose
 * FrameBufferSize is short of stride x height pixels, is refused: drawing
 * on it would write past the framebuffer (here a heap block of exactly
 * that size, where ASan sees any write past it).
 */
static void refuses_a_framebuffer_too_small_for_its_mode(void **state)
{
	const uint32_t w = 800, h = 592, stride = 736;
	uint32_t *mem = malloc((size_t)stride * h * 4);
	struct boot_framebuffer fb = { .base = (uintptr_t)mem, .size = (uint64_t)stride * h * 4,
				       .width = w, .height = h, .stride = stride, .format = 1 };
	const char *why = NULL;

	assert_non_null(mem);
	assert_false(screen_init_fb(&fb, &why));
	assert_false(screen_present());
	assert_non_null(strstr(why, "pixels per scan line is less than its width"));
	for (unsigned i = 0; i < 3000; i++)	/* nothing is drawn: no screen */
		screen_putc((char)('a' + i % 26));
	screen_flush();
	fb.width = stride;			/* a valid mode, one byte short */
	fb.size -= 1;
	assert_false(screen_init_fb(&fb, &why));
	assert_non_null(strstr(why, "framebuffer size is less than"));
	fb.size = UINT64_C(1) << 40;		/* larger than needed is fine */
	assert_true(screen_init_fb(&fb, &why));
	fb.size = (uint64_t)stride * h * 4;	/* exactly: every cell drawn, nothing past the end */
	assert_true(screen_init_fb(&fb, &why));
	for (unsigned i = 0; i < 100 * 37 + 50; i++)
		screen_putc((char)('a' + i % 26));
	screen_flush();
	free(mem);
}

static void keys_become_terminal_bytes(void **state)
{
	struct kbd_state st = { 0 };
	char out[32];

	FEED(&st, out, 0x2e, 0xae, 0x19, 0x99, 0x16, 0x96, 0x1c, 0x9c);	/* c p u Enter */
	assert_string_equal(out, "cpu\r");
	FEED(&st, out, 0x2a, 0x1e, 0x9e, 0x02, 0x82, 0xaa, 0x1e, 0x9e);	/* Shift a 1, a */
	assert_string_equal(out, "A!a");
	FEED(&st, out, 0x3a, 0xba, 0x1e, 0x02, 0x36, 0x1e, 0xb6, 0x3a, 0x1e);	/* Caps: letters only */
	assert_string_equal(out, "A1aa");
	FEED(&st, out, 0x1d, 0x2e, 0xae, 0x9d, 0x2e);				/* Ctrl-C, then c */
	assert_int_equal(out[0], 0x03);
	assert_string_equal(out + 1, "c");
	FEED(&st, out, 0x0e, 0x0f, 0x01, 0x39, 0x2b, 0x0c, 0x34);	/* BS Tab Esc space \ - . */
	assert_string_equal(out, "\x7f\t\x1b \\-.");
}

static void extended_keys(void **state)
{
	struct kbd_state st = { 0 };
	char out[32];

	FEED(&st, out, 0xe0, 0x48, 0xe0, 0xc8, 0xe0, 0x50, 0xe0, 0xd0);	/* Up, Down */
	assert_string_equal(out, "\x1b[A\x1b[B");
	FEED(&st, out, 0xe0, 0x1c, 0xe0, 0x35, 0xe0, 0x4b);		/* keypad Enter, /, Left */
	assert_string_equal(out, "\r/");
	/* E0 2A: the 101-key board's fake Shift around a cursor key changes nothing */
	FEED(&st, out, 0xe0, 0x2a, 0x1e, 0xe0, 0xaa);
	assert_string_equal(out, "a");
	FEED(&st, out, 0xe0, 0x1d, 0x2e, 0xe0, 0x9d, 0x2e);		/* right Ctrl-C */
	assert_int_equal(out[0], 0x03);
	assert_string_equal(out + 1, "c");
	FEED(&st, out, 0x3b, 0x58, 0x45, 0x7f);			/* F1, F12, Num Lock, unknown */
	assert_string_equal(out, "");
}

/* A QR code on a 400x300 framebuffer: every module where it belongs, the text back after. */
static void qr_code_modules_and_the_text_after(void **state)
{
	static uint32_t big[400 * 300];
	static struct qr q;
	struct boot_framebuffer fb = {
		.base = (uintptr_t)big, .size = sizeof(big), .width = 400, .height = 300,
		.stride = 400, .format = 1,
	};
	const char *why = NULL;
	unsigned top = SCREEN_QR_CAPTION_ROWS * SCREEN_CELL_H, side, px, x0, y0;

	assert_true(screen_init_fb(&fb, &why));
	for (const char *s = "nbprof> qr\n"; *s; s++)
		screen_putc(*s);
	screen_flush();
	assert_int_equal(screen_qr_room(), (300 - top) / SCREEN_QR_MIN_PX);
	assert_int_equal(qr_encode(&q, "NBQ1 1/1 0", 10, QR_ECC_M, 1, 1, -1), 0);
	screen_qr_show(&q, 4, "nbprof selftest report\nQR code 1 of 1");
	side = (unsigned)q.size + 8;
	px = (300 - top) / side;
	x0 = (400 - side * px) / 2;
	y0 = top + (300 - top - side * px) / 2;
	for (unsigned y = 0; y < side; y++)
		for (unsigned x = 0; x < side; x++) {
			uint32_t want = qr_module(&q, (int)x - 4, (int)y - 4) ? 0 : 0xffffff;

			assert_int_equal(big[(y0 + y * px + px / 2) * 400 + x0 + x * px + px / 2], want);
			assert_int_equal(big[(y0 + y * px) * 400 + x0 + x * px], want);
			assert_int_equal(big[(y0 + y * px + px - 1) * 400 + x0 + x * px + px - 1], want);
		}
	assert_int_equal(big[(y0 - 1) * 400 + 200], 0);		/* outside the quiet zone: black */
	/* output meanwhile goes into the grid, not onto the code */
	screen_putc('x');
	screen_flush();
	assert_int_equal(big[(y0 + 4 * px) * 400 + x0 + 4 * px], 0);	/* the finder's corner */
	screen_qr_end();
	for (unsigned y = top; y < 300; y++)
		for (unsigned x = 0; x < 400; x++)
			assert_int_equal(big[y * 400 + x], 0);
	screen_qr_show(&q, 200, "too big");		/* does not fit: nothing happens */
	assert_int_equal(big[(y0 + 4 * px) * 400 + x0 + 4 * px], 0);
	assert_int_equal(big[(y0 + 5 * px) * 400 + x0 + 5 * px], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(glyphs_all_differ),
		cmocka_unit_test(qr_code_modules_and_the_text_after),
		cmocka_unit_test(text_appears_and_the_frame_is_cleared),
		cmocka_unit_test(long_lines_wrap_and_the_screen_scrolls),
		cmocka_unit_test(control_characters_and_escapes),
		cmocka_unit_test(cursor_is_the_bottom_pixel_row),
		cmocka_unit_test(refuses_what_it_cannot_draw),
		cmocka_unit_test(refuses_a_framebuffer_too_small_for_its_mode),
		cmocka_unit_test(keys_become_terminal_bytes),
		cmocka_unit_test(extended_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
