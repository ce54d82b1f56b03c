/*
 * screen.c - the console on the machine's screen (see screen.h).
 *
 * The grid is a ring of rows: scrolling moves `top`, not the characters.
 * `shown` holds what each cell of the screen displays; a flush draws only
 * the cells whose character differs (after a scroll that is most of them,
 * but one flush draws many scrolls at once).
 *
 * VGA text mode (IBM VGA Technical Reference; the BIOS data area of the
 * IBM PC/AT BIOS listing): two bytes per cell, the character then its
 * attribute (07H: light grey on black), rows of 80 cells; the hardware
 * cursor is the CRT controller's registers 0EH/0FH (cursor location high
 * and low), reached through the index/data ports 3D4H/3D5H (3B4H/3B5H in
 * the monochrome mode 7).
 *
 * The framebuffer (UEFI 2.10 section 12.9, EFI_GRAPHICS_OUTPUT_PROTOCOL):
 * PixelRedGreenBlueReserved8BitPerColor and PixelBlueGreenRedReserved8Bit-
 * PerColor are 32 bits per pixel, PixelsPerScanLine apart; other formats
 * are refused, as is a mode whose PixelsPerScanLine is less than its width
 * or whose FrameBufferSize does not hold that many lines of 4-byte pixels
 * (only a broken firmware reports either). Light grey (AAAAAAH, the same in both byte orders) on black;
 * the cursor is the cell's bottom pixel row.
 *
 * QR codes (screen_qr_show) in VGA text: four modules a cell, one above
 * the other, drawn by 16 glyphs loaded for the time a code is shown into
 * character codes C0H-CFH of the font in plane 2 (32 bytes a character,
 * character map A at offset 0 when the sequencer's Character Map Select
 * register 03H is 0): plane 2 is reached by writing the sequencer's Map
 * Mask (02H) = 04H and Memory Mode (04H) = 07H (sequential, not odd/even)
 * and the graphics controller's Read Map Select (04H) = 02H, Graphics
 * Mode (05H) = 00H and Miscellaneous (06H) = 04H (A0000H, 64 KiB); the
 * five registers are put back afterwards, and so are the 16 glyphs when
 * the code goes. C0H-DFH is the range whose ninth pixel column repeats
 * the eighth when the attribute controller's Line Graphics Enable bit is
 * set (mode 3's default), so light modules touch. A module is 9 pixels
 * wide and 4 high, a code wider than tall, which a QR reader takes as it
 * takes a code seen at an angle. With another cell
 * height than 16 or another font map, code page 437's half blocks DFH,
 * DCH and DBH draw two modules a cell instead. The cursor is moved off
 * the screen (a location past the last cell) while a code is shown.
 */
#include "arch/x86/io.h"
#include "arch/x86/screen.h"
#include "lib/printf.h"

#define BDA_VIDEO_MODE		0x449u	/* byte: current BIOS video mode */
#define BDA_COLUMNS		0x44au	/* word: text columns */
#define VGA_MONO_TEXT		0xb0000u
#define VGA_CRTC_COLOR		0x3d4
#define VGA_CRTC_MONO		0x3b4
#define VGA_CRTC_CURSOR_HI	0x0e
#define VGA_CRTC_CURSOR_LO	0x0f
#define VGA_ATTR		0x0700u	/* light grey on black */

#define GOP_RGBX		0	/* PixelRedGreenBlueReserved8BitPerColor */
#define GOP_BGRX		1	/* PixelBlueGreenRedReserved8BitPerColor */
#define FB_FG			0x00aaaaaau
#define FB_BG			0x00000000u
#define TAB_STOP		8
#define ESC			0x1b
#define CELL_UNKNOWN		((char)0xff)	/* forces a redraw */

enum screen_kind { SCREEN_NONE, SCREEN_VGA, SCREEN_FB };
enum esc_state { ESC_NONE, ESC_SEEN, ESC_CSI, ESC_INTER };

static struct {
	enum screen_kind kind;
	unsigned cols, rows;
	unsigned top;			/* grid row shown on screen row 0 */
	unsigned col, row;		/* cursor, screen coordinates */
	bool wrap_pending;		/* col == cols: the next character wraps */
	bool dirty;			/* something changed since the last flush */
	bool frozen;			/* a QR code is shown: flushes draw nothing */
	enum esc_state esc;
	unsigned shown_cursor;		/* cell index the cursor was drawn at */
	uintptr_t base;			/* VGA text buffer or framebuffer */
	uint32_t stride;		/* framebuffer pixels per line */
	uint16_t crtc;
	uint16_t vga_mode;
	uint32_t fb_w, fb_h;
} scr;

static char grid[SCREEN_MAX_ROWS][SCREEN_MAX_COLS];
static char shown[SCREEN_MAX_ROWS][SCREEN_MAX_COLS];

static void screen_reset(void)
{
	for (unsigned r = 0; r < SCREEN_MAX_ROWS; r++)
		for (unsigned c = 0; c < SCREEN_MAX_COLS; c++) {
			grid[r][c] = ' ';
			shown[r][c] = CELL_UNKNOWN;
		}
	scr.top = scr.col = scr.row = 0;
	scr.wrap_pending = false;
	scr.esc = ESC_NONE;
	scr.shown_cursor = 0;
	scr.dirty = true;
}

/* A word of the BIOS data area (the empty asm hides the low address from gcc's bounds checks). */
static uint16_t bda_word(uintptr_t addr)
{
	const volatile uint16_t *p;

	__asm__("" : "=r"(p) : "0"(addr));
	return *p;
}

bool screen_init_vga_text(const char **why)
{
	uint8_t mode = (uint8_t)bda_word(BDA_VIDEO_MODE);
	uint16_t cols = bda_word(BDA_COLUMNS);

	if ((mode != 2 && mode != 3 && mode != 7) || cols != VGA_COLS) {
		*why = "the BIOS left no 80-column text mode (BIOS data area 449H, 44AH)";
		return false;
	}
	scr.kind = SCREEN_VGA;
	scr.vga_mode = mode;
	scr.base = mode == 7 ? VGA_MONO_TEXT : VGA_COLOR_TEXT;
	scr.crtc = mode == 7 ? VGA_CRTC_MONO : VGA_CRTC_COLOR;
	scr.cols = VGA_COLS;
	scr.rows = VGA_ROWS;
	screen_reset();
	screen_flush();
	return true;
}

bool screen_init_fb(const struct boot_framebuffer *fb, const char **why)
{
	scr.kind = SCREEN_NONE;		/* until the mode is known to be drawable */
	if (!fb->base) {
		*why = "the firmware has no GOP framebuffer";
		return false;
	}
	if (fb->format != GOP_RGBX && fb->format != GOP_BGRX) {
		*why = "the GOP pixel format is not 32-bit RGB or BGR";
		return false;
	}
	/* UEFI 2.10 12.9: PixelsPerScanLine may exceed the width (padding), never fall short */
	if (fb->stride < fb->width) {
		*why = "the GOP's pixels per scan line is less than its width";
		return false;
	}
	if (fb->stride && fb->size / 4 / fb->stride < fb->height) {
		*why = "the GOP's framebuffer size is less than 4 bytes x pixels per scan line x height";
		return false;
	}
	scr.kind = SCREEN_FB;
	scr.base = (uintptr_t)fb->base;
	scr.stride = fb->stride;
	scr.fb_w = fb->width;
	scr.fb_h = fb->height;
	scr.cols = fb->width / SCREEN_CELL_W;
	scr.rows = fb->height / SCREEN_CELL_H;
	if (scr.cols > SCREEN_MAX_COLS)
		scr.cols = SCREEN_MAX_COLS;
	if (scr.rows > SCREEN_MAX_ROWS)
		scr.rows = SCREEN_MAX_ROWS;
	if (scr.cols == 0 || scr.rows == 0) {
		scr.kind = SCREEN_NONE;
		*why = "the framebuffer is smaller than one character";
		return false;
	}
	screen_reset();
	screen_flush();
	return true;
}

bool screen_present(void)
{
	return scr.kind != SCREEN_NONE;
}

void screen_describe(char *buf, size_t len)
{
	if (scr.kind == SCREEN_VGA)
		ksnprintf(buf, len, "VGA text %ux%u at %#lx (BIOS video mode %u)", scr.cols, scr.rows,
			  (unsigned long)scr.base, scr.vga_mode);
	else if (scr.kind == SCREEN_FB)
		ksnprintf(buf, len, "framebuffer %ux%u at %#llx, %ux%u characters", scr.fb_w, scr.fb_h,
			  (unsigned long long)scr.base, scr.cols, scr.rows);
	else
		ksnprintf(buf, len, "none");
}

static char *grid_row(unsigned screen_row)
{
	return grid[(scr.top + screen_row) % scr.rows];
}

static void screen_newline(void)
{
	scr.col = 0;
	scr.wrap_pending = false;
	if (scr.row + 1 < scr.rows) {
		scr.row++;
		return;
	}
	scr.top = (scr.top + 1) % scr.rows;	/* scroll: the old top row becomes the new bottom */
	for (unsigned c = 0; c < scr.cols; c++)
		grid_row(scr.row)[c] = ' ';
}

static void screen_put_printable(char c)
{
	if (scr.wrap_pending)
		screen_newline();
	grid_row(scr.row)[scr.col] = c;
	if (++scr.col == scr.cols) {
		scr.col = scr.cols - 1;
		scr.wrap_pending = true;
	}
}

/*
 * Escape sequences (ECMA-48) are dropped, not shown: ESC [ parameters final
 * (final 40H-7EH), ESC intermediates final (intermediates 20H-2FH, final
 * 30H-7EH), ESC and one other byte. The kernel's own output has none; a
 * user's program may print some.
 */
static bool screen_in_escape(char c)
{
	if (scr.esc == ESC_SEEN) {
		scr.esc = c == '[' ? ESC_CSI : c >= 0x20 && c <= 0x2f ? ESC_INTER : ESC_NONE;
		return true;
	}
	if (scr.esc == ESC_CSI || scr.esc == ESC_INTER) {
		if (c >= (scr.esc == ESC_CSI ? 0x40 : 0x30) && c <= 0x7e)
			scr.esc = ESC_NONE;
		return true;
	}
	if (c == ESC) {
		scr.esc = ESC_SEEN;
		return true;
	}
	return false;
}

void screen_putc(char c)
{
	if (scr.kind == SCREEN_NONE || screen_in_escape(c))
		return;
	scr.dirty = true;
	if (c == '\n') {
		screen_newline();
	} else if (c == '\r') {
		scr.col = 0;
		scr.wrap_pending = false;
	} else if (c == '\b') {
		if (scr.wrap_pending)
			scr.wrap_pending = false;
		else if (scr.col > 0)
			scr.col--;
	} else if (c == '\t') {
		do
			screen_put_printable(' ');
		while (scr.col % TAB_STOP && !scr.wrap_pending);
	} else if (c >= 0x20 && c < 0x7f) {
		screen_put_printable(c);
	}
}

/* --- drawing ------------------------------------------------------------- */

static void vga_draw(unsigned row, unsigned col, char c)
{
	volatile uint16_t *cell = (volatile uint16_t *)scr.base + row * scr.cols + col;

	*cell = VGA_ATTR | (uint8_t)c;
}

static void vga_cursor(unsigned pos)
{
	outb(scr.crtc, VGA_CRTC_CURSOR_HI);
	outb(scr.crtc + 1, (uint8_t)(pos >> 8));
	outb(scr.crtc, VGA_CRTC_CURSOR_LO);
	outb(scr.crtc + 1, (uint8_t)pos);
}

/* One 8x16 cell; with `cursor` its bottom pixel row is lit. */
static void fb_draw(unsigned row, unsigned col, char c, bool cursor)
{
	const uint8_t *g = screen_font8x8[(uint8_t)c >= SCREEN_FONT_FIRST &&
					  (uint8_t)c < SCREEN_FONT_FIRST + SCREEN_FONT_GLYPHS
					  ? (uint8_t)c - SCREEN_FONT_FIRST : 0];
	volatile uint32_t *p = (volatile uint32_t *)scr.base +
			       (uintptr_t)row * SCREEN_CELL_H * scr.stride + col * SCREEN_CELL_W;

	for (unsigned y = 0; y < SCREEN_CELL_H; y++, p += scr.stride) {
		uint8_t bits = g[y / 2];

		if (cursor && y == SCREEN_CELL_H - 1)
			bits = 0xff;
		for (unsigned x = 0; x < SCREEN_CELL_W; x++)
			p[x] = bits & (0x80u >> x) ? FB_FG : FB_BG;
	}
}

static void screen_draw(unsigned row, unsigned col, char c, bool cursor)
{
	if (scr.kind == SCREEN_VGA)
		vga_draw(row, col, c);
	else
		fb_draw(row, col, c, cursor);
}

void screen_flush(void)
{
	unsigned cursor = scr.row * scr.cols + scr.col;

	if (scr.kind == SCREEN_NONE || !scr.dirty || scr.frozen)
		return;		/* nothing to compare: a byte-by-byte upload stays cheap */
	scr.dirty = false;
	if (scr.kind == SCREEN_FB && scr.shown_cursor != cursor) {
		/* redraw the cell the cursor leaves and the one it enters */
		shown[scr.shown_cursor / scr.cols][scr.shown_cursor % scr.cols] = CELL_UNKNOWN;
		shown[scr.row][scr.col] = CELL_UNKNOWN;
	}
	for (unsigned r = 0; r < scr.rows; r++) {
		const char *g = grid_row(r);

		for (unsigned c = 0; c < scr.cols; c++) {
			if (g[c] == shown[r][c])
				continue;
			screen_draw(r, c, g[c], r == scr.row && c == scr.col);
			shown[r][c] = g[c];
		}
	}
	if (scr.kind == SCREEN_VGA)
		vga_cursor(cursor);
	scr.shown_cursor = cursor;
}

/* --- QR codes ---------------------------------------------------------------- */

#define VGA_QR_ATTR		0x0f00u		/* white on black */
#define CP437_FULL_BLOCK	0xdb
#define CP437_LOWER_HALF	0xdc
#define CP437_UPPER_HALF	0xdf
#define VGA_QR_CAPTION_COLS	30		/* kept for the caption on the right (half blocks) */
#define VGA_QR_CAPTION_ROWS	4		/* kept for the caption below (loaded glyphs) */
#define VGA_QR_GLYPH0		0xc0		/* the 16 loaded glyphs: C0H-CFH */
#define VGA_QR_CELL_H		16
#define VGA_FONT		0xa0000u	/* plane 2 while it is mapped for the font */
#define VGA_FONT_STRIDE		32		/* bytes a character in the font */
#define VGA_SEQ			0x3c4
#define VGA_GC			0x3ce
#define VGA_SEQ_MAP_MASK	0x02
#define VGA_SEQ_CHARMAP		0x03
#define VGA_SEQ_MEMORY_MODE	0x04
#define VGA_GC_READ_MAP		0x04
#define VGA_GC_MODE		0x05
#define VGA_GC_MISC		0x06
#define VGA_CRTC_MAX_SCAN	0x09
#define FB_WHITE		0x00ffffffu

static uint8_t vga_reg(uint16_t port, uint8_t index)
{
	outb(port, index);
	return inb(port + 1);
}

static void vga_set_reg(uint16_t port, uint8_t index, uint8_t v)
{
	outb(port, index);
	outb(port + 1, v);
}

/* Four modules a cell with loaded glyphs: the font is 16 lines high and in map A at offset 0. */
static bool vga_qr_glyphs_usable(void)
{
	return (vga_reg(scr.crtc, VGA_CRTC_MAX_SCAN) & 0x1f) + 1 == VGA_QR_CELL_H &&
	       vga_reg(VGA_SEQ, VGA_SEQ_CHARMAP) == 0;
}

static struct {
	bool loaded;				/* glyphs C0H-CFH are the QR glyphs */
	uint8_t saved[16][VGA_QR_CELL_H];	/* the font's own glyphs C0H-CFH */
} vga_qr;

/*
 * Glyphs C0H-CFH: save (the font's to saved[]), load (glyph C0H + b: four
 * modules of four lines, bit 3 of b the top one, light where the bit is
 * set) or put back (saved[] into the font), with plane 2 mapped meanwhile.
 */
enum vga_glyph_op { VGA_GLYPHS_SAVE, VGA_GLYPHS_LOAD, VGA_GLYPHS_RESTORE };

static void vga_qr_glyphs(enum vga_glyph_op op)
{
	uint8_t seq2 = vga_reg(VGA_SEQ, VGA_SEQ_MAP_MASK), seq4 = vga_reg(VGA_SEQ, VGA_SEQ_MEMORY_MODE);
	uint8_t gc4 = vga_reg(VGA_GC, VGA_GC_READ_MAP), gc5 = vga_reg(VGA_GC, VGA_GC_MODE);
	uint8_t gc6 = vga_reg(VGA_GC, VGA_GC_MISC);

	vga_set_reg(VGA_SEQ, VGA_SEQ_MAP_MASK, 0x04);
	vga_set_reg(VGA_SEQ, VGA_SEQ_MEMORY_MODE, 0x07);
	vga_set_reg(VGA_GC, VGA_GC_READ_MAP, 0x02);
	vga_set_reg(VGA_GC, VGA_GC_MODE, 0x00);
	vga_set_reg(VGA_GC, VGA_GC_MISC, 0x04);
	for (unsigned g = 0; g < 16; g++) {
		volatile uint8_t *glyph = (volatile uint8_t *)(uintptr_t)VGA_FONT +
					  (VGA_QR_GLYPH0 + g) * VGA_FONT_STRIDE;

		for (unsigned y = 0; y < VGA_QR_CELL_H; y++) {
			if (op == VGA_GLYPHS_SAVE)
				vga_qr.saved[g][y] = glyph[y];
			else if (op == VGA_GLYPHS_RESTORE)
				glyph[y] = vga_qr.saved[g][y];
			else
				glyph[y] = g & (8u >> (y / 4)) ? 0xff : 0x00;
		}
	}
	vga_set_reg(VGA_SEQ, VGA_SEQ_MAP_MASK, seq2);
	vga_set_reg(VGA_SEQ, VGA_SEQ_MEMORY_MODE, seq4);
	vga_set_reg(VGA_GC, VGA_GC_READ_MAP, gc4);
	vga_set_reg(VGA_GC, VGA_GC_MODE, gc5);
	vga_set_reg(VGA_GC, VGA_GC_MISC, gc6);
}

unsigned screen_qr_room(void)
{
	unsigned w, h;

	if (scr.kind == SCREEN_VGA && (vga_qr.loaded || vga_qr_glyphs_usable())) {
		h = 4 * (scr.rows - VGA_QR_CAPTION_ROWS);
		w = scr.cols;
		return w < h ? w : h;
	}
	if (scr.kind == SCREEN_VGA) {
		h = 2 * scr.rows;
		w = scr.cols > VGA_QR_CAPTION_COLS ? scr.cols - VGA_QR_CAPTION_COLS - 1 : 0;
		return w < h ? w : h;
	}
	if (scr.kind == SCREEN_FB && scr.fb_h > SCREEN_QR_CAPTION_ROWS * SCREEN_CELL_H) {
		w = scr.fb_w;
		h = scr.fb_h - SCREEN_QR_CAPTION_ROWS * SCREEN_CELL_H;
		return (w < h ? w : h) / SCREEN_QR_MIN_PX;
	}
	return 0;
}

/* Module (x, y) of the square with its quiet zone; false (dark) outside the square. */
static bool screen_qr_light(const struct qr *q, unsigned quiet, int x, int y)
{
	int side = q->size + 2 * (int)quiet;

	if (x < 0 || y < 0 || x >= side || y >= side)
		return false;
	return !qr_module(q, x - (int)quiet, y - (int)quiet);
}

/* Caption line `line` (0 = the first), or NULL past the last; *len its length. */
static const char *screen_caption_line(const char *caption, unsigned line, unsigned *len)
{
	for (; line; line--) {
		while (*caption && *caption != '\n')
			caption++;
		if (!*caption)
			return NULL;
		caption++;
	}
	for (*len = 0; caption[*len] && caption[*len] != '\n'; (*len)++)
		;
	return caption;
}

/* Four modules a cell with the loaded glyphs; the caption in the rows below. */
static void vga_qr_show4(const struct qr *q, unsigned quiet, const char *caption)
{
	int side = q->size + 2 * (int)quiet, x0 = ((int)scr.cols - side) / 2;
	unsigned cap_row = ((unsigned)side + 3) / 4 + 1, len;

	if (!vga_qr.loaded) {
		vga_qr_glyphs(VGA_GLYPHS_SAVE);
		vga_qr_glyphs(VGA_GLYPHS_LOAD);
		vga_qr.loaded = true;
	}
	for (unsigned r = 0; r < scr.rows; r++) {
		const char *line = r >= cap_row ? screen_caption_line(caption, r - cap_row, &len) : NULL;

		for (unsigned c = 0; c < scr.cols; c++) {
			volatile uint16_t *cell = (volatile uint16_t *)scr.base + r * scr.cols + c;
			unsigned bits = 0;
			uint8_t ch;

			for (unsigned m = 0; m < 4; m++)
				if (screen_qr_light(q, quiet, (int)c - x0, (int)(4 * r + m)))
					bits |= 8u >> m;
			ch = bits == 0 ? ' ' : (uint8_t)(VGA_QR_GLYPH0 + bits);
			if (line && c < len)
				ch = (uint8_t)line[c];
			*cell = (uint16_t)(VGA_QR_ATTR | ch);
		}
	}
	vga_cursor(scr.rows * scr.cols);	/* past the last cell: not shown */
}

/* Two modules a cell with code page 437's half blocks; the caption on the right. */
static void vga_qr_show(const struct qr *q, unsigned quiet, const char *caption)
{
	int side = q->size + 2 * (int)quiet, x0 = 1, y0 = (int)(2 * scr.rows - (unsigned)side) / 2;
	unsigned cap_col = (unsigned)(x0 + side + 2), len;

	for (unsigned r = 0; r < scr.rows; r++) {
		const char *line = r ? screen_caption_line(caption, r - 1, &len) : NULL;

		for (unsigned c = 0; c < scr.cols; c++) {
			volatile uint16_t *cell = (volatile uint16_t *)scr.base + r * scr.cols + c;
			bool top = screen_qr_light(q, quiet, (int)c - x0, (int)(2 * r) - y0);
			bool bottom = screen_qr_light(q, quiet, (int)c - x0, (int)(2 * r + 1) - y0);
			uint8_t ch = top && bottom ? CP437_FULL_BLOCK : top ? CP437_UPPER_HALF
				   : bottom ? CP437_LOWER_HALF : ' ';

			if (line && c >= cap_col && c - cap_col < len)
				ch = (uint8_t)line[c - cap_col];
			*cell = (uint16_t)(VGA_QR_ATTR | ch);
		}
	}
	vga_cursor(scr.rows * scr.cols);	/* past the last cell: not shown */
}

static void fb_fill(unsigned x, unsigned y, unsigned w, unsigned h, uint32_t colour)
{
	for (unsigned j = 0; j < h; j++) {
		volatile uint32_t *p = (volatile uint32_t *)scr.base + (uintptr_t)(y + j) * scr.stride + x;

		for (unsigned i = 0; i < w; i++)
			p[i] = colour;
	}
}

static void fb_qr_show(const struct qr *q, unsigned quiet, const char *caption)
{
	unsigned side = (unsigned)q->size + 2 * quiet, top = SCREEN_QR_CAPTION_ROWS * SCREEN_CELL_H;
	unsigned px = scr.fb_w / side, len, x0, y0;
	const char *line;

	if ((scr.fb_h - top) / side < px)
		px = (scr.fb_h - top) / side;
	if (px == 0)
		px = 1;
	fb_fill(0, 0, scr.fb_w, scr.fb_h, FB_BG);
	for (unsigned r = 0; r < SCREEN_QR_CAPTION_ROWS &&
	     (line = screen_caption_line(caption, r, &len)); r++)
		for (unsigned c = 0; c < len && c < scr.cols; c++)
			fb_draw(r, c, line[c], false);
	x0 = (scr.fb_w - side * px) / 2;
	y0 = top + (scr.fb_h - top - side * px) / 2;
	for (unsigned y = 0; y < side; y++)
		for (unsigned x = 0; x < side; x++)
			fb_fill(x0 + x * px, y0 + y * px, px, px,
				screen_qr_light(q, quiet, (int)x, (int)y) ? FB_WHITE : FB_BG);
}

void screen_qr_show(const struct qr *q, unsigned quiet, const char *caption)
{
	if (scr.kind == SCREEN_NONE || (unsigned)q->size + 2 * quiet > screen_qr_room())
		return;
	scr.frozen = true;
	if (scr.kind == SCREEN_VGA && (vga_qr.loaded || vga_qr_glyphs_usable()))
		vga_qr_show4(q, quiet, caption);
	else if (scr.kind == SCREEN_VGA)
		vga_qr_show(q, quiet, caption);
	else
		fb_qr_show(q, quiet, caption);
}

void screen_qr_end(void)
{
	if (scr.kind == SCREEN_NONE || !scr.frozen)
		return;
	scr.frozen = false;
	if (scr.kind == SCREEN_FB)
		fb_fill(0, 0, scr.fb_w, scr.fb_h, FB_BG);
	if (scr.kind == SCREEN_VGA && vga_qr.loaded) {
		vga_qr_glyphs(VGA_GLYPHS_RESTORE);
		vga_qr.loaded = false;
	}
	for (unsigned r = 0; r < SCREEN_MAX_ROWS; r++)
		for (unsigned c = 0; c < SCREEN_MAX_COLS; c++)
			shown[r][c] = CELL_UNKNOWN;
	scr.dirty = true;
	screen_flush();
}
