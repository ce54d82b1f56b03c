/*
 * kbd.h - the PC keyboard through the i8042 controller (ports 60H/64H),
 * polled; also what a BIOS's USB legacy emulation presents for a USB
 * keyboard. Keys become the bytes a serial terminal would send (US layout).
 */
#ifndef NBPROF_ARCH_X86_KBD_H
#define NBPROF_ARCH_X86_KBD_H

#include <stdbool.h>
#include <stdint.h>

/* The i8042's ports and status bits (also power.c's reset through it). */
#define KBC_DATA		0x60
#define KBC_STATUS		0x64	/* read: status */
#define KBC_CMD			0x64	/* write: a command */
#define KBC_ST_OBF		0x01	/* output buffer full: a byte to read */
#define KBC_ST_IBF		0x02	/* input buffer full: wait before writing */

/* Find the controller and turn on scan-code translation; false if none answers. */
bool kbd_init(void);
bool kbd_present(void);

/* The next byte typed, or -1 when none is waiting. */
int kbd_getc_nowait(void);

/*
 * Scan code set 1 (what the controller delivers with translation on) to
 * bytes: letters, digits and US punctuation with Shift and Caps Lock, Ctrl
 * with a letter (Ctrl-C = 03H), Enter = CR, Backspace = DEL (7FH), Tab, Esc,
 * cursor up and down as ESC [ A / ESC [ B. Returns how many bytes went
 * into out (0..3). Pure: the state is the modifiers and a pending E0H.
 */
struct kbd_state {
	bool shift_l, shift_r, ctrl, caps, e0;
};
unsigned kbd_decode(struct kbd_state *st, uint8_t code, char out[3]);

#endif
