/*
 * screen.h - the console on the machine's own screen: the VGA text buffer
 * a legacy BIOS leaves (80x25 at B8000H) or the UEFI GOP framebuffer
 * (8x16 character cells drawn with a built-in font).
 *
 * Output goes into a character grid in RAM (cheap, so the serial console
 * is not slowed down) and reaches the screen only at screen_flush(), which
 * redraws the cells that changed. The console flushes before it waits for
 * input and now and then while a command runs (arch/x86/console.c).
 */
#ifndef NBPROF_ARCH_X86_SCREEN_H
#define NBPROF_ARCH_X86_SCREEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/bootinfo.h"
#include "lib/qr.h"

/* VGA colour text mode 3: 80x25 cells of two bytes (attribute, character) at B8000H. */
#define VGA_COLOR_TEXT		0xb8000u
#define VGA_COLS		80
#define VGA_ROWS		25

#define SCREEN_FONT_FIRST	0x20	/* the glyphs cover 20H..7EH */
#define SCREEN_FONT_GLYPHS	95
#define SCREEN_CELL_W		8
#define SCREEN_CELL_H		16	/* each 8x8 glyph row drawn twice */
#define SCREEN_MAX_COLS		240	/* 1920 pixels */
#define SCREEN_MAX_ROWS		75	/* 1200 pixels */

extern const uint8_t screen_font8x8[SCREEN_FONT_GLYPHS][8];

/*
 * The text screen of a BIOS boot: the BIOS data area's video mode (449H) must
 * be a text mode of 80 columns (mode 2 or 3 at B8000H, 7 at B0000H);
 * otherwise there is no screen. false then, with the reason in *why.
 */
bool screen_init_vga_text(const char **why);

/* The GOP framebuffer of a UEFI boot (32-bit pixels); false with the reason. */
bool screen_init_fb(const struct boot_framebuffer *fb, const char **why);

bool screen_present(void);
/* "VGA text 80x25 at 0xb8000" or "framebuffer 800x600, 100x37 characters". */
void screen_describe(char *buf, size_t len);

/*
 * One character into the grid: printable ASCII, "\n" (a new line), "\r",
 * "\b", "\t"; other control characters and ANSI escape sequences are
 * dropped. A line longer than the screen wraps; the screen scrolls.
 */
void screen_putc(char c);

/* Draw what changed since the last flush, and the cursor. */
void screen_flush(void);

/*
 * QR codes in place of the console's text (`selftest --qr`). VGA text
 * shows four modules per character cell, one above the other, with 16
 * glyphs loaded into the font for the time (light modules are the glyph,
 * dark ones the black background): up to 80 modules, the caption below;
 * where the font cannot be loaded, two per cell with the half-block glyphs
 * of code page 437 (DFH upper half, DCH lower half, DBH full block), 50
 * modules high on the left, the caption on the right. The framebuffer
 * shows square modules of SCREEN_QR_MIN_PX pixels or more below the
 * caption.
 */
#define SCREEN_QR_MIN_PX	4
#define SCREEN_QR_CAPTION_ROWS	4	/* the framebuffer's caption lines */

/* The side of the largest square of modules the screen shows beside the caption; 0: no screen. */
unsigned screen_qr_room(void);

/*
 * q with `quiet` light modules around it, and the caption (lines split at
 * '\n'). Until screen_qr_end() the console's output goes only into the
 * grid: a flush draws nothing.
 */
void screen_qr_show(const struct qr *q, unsigned quiet, const char *caption);

/* The console's text again, all of it redrawn. */
void screen_qr_end(void);

#endif
