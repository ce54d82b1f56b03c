/*
 * kbd_map.c - scan codes to the bytes a terminal sends (kbd_decode, kbd.h).
 *
 * Scan code set 1 (the IBM PC/XT key numbers, which the i8042 delivers
 * with translation on): a key's make code, its break code with bit 7 set;
 * E0H prefixes the keys added by the 101-key keyboard (right Ctrl, the
 * cursor keys, keypad Enter and /) and the fake shifts it sends around
 * them (E0 2A, E0 36), which are ignored. US layout. Pure: the host tests
 * run it (tests/host/test_screen.c).
 */
#include <stddef.h>

#include "arch/x86/kbd.h"

#define SC_BREAK		0x80
#define SC_E0			0xe0
#define SC_CTRL			0x1d
#define SC_SHIFT_L		0x2a
#define SC_SHIFT_R		0x36
#define SC_CAPS			0x3a
#define SC_UP			0x48
#define SC_DOWN			0x50
#define SC_ENTER		0x1c
#define SC_SLASH		0x35
#define KEY_ESC			0x1b
#define KEY_DEL			0x7f
#define CTRL_MASK		0x1f

/* Set 1 make codes 00H-39H: without and with Shift (0: no character). */
static const char keymap[2][0x3a] = {
	{ 0, KEY_ESC, '1', '2', '3', '4', '5', '6', '7', '8', '9', '0', '-', '=', KEY_DEL, '\t',
	  'q', 'w', 'e', 'r', 't', 'y', 'u', 'i', 'o', 'p', '[', ']', '\r', 0, 'a', 's',
	  'd', 'f', 'g', 'h', 'j', 'k', 'l', ';', '\'', '`', 0, '\\', 'z', 'x', 'c', 'v',
	  'b', 'n', 'm', ',', '.', '/', 0, '*', 0, ' ' },
	{ 0, KEY_ESC, '!', '@', '#', '$', '%', '^', '&', '*', '(', ')', '_', '+', KEY_DEL, '\t',
	  'Q', 'W', 'E', 'R', 'T', 'Y', 'U', 'I', 'O', 'P', '{', '}', '\r', 0, 'A', 'S',
	  'D', 'F', 'G', 'H', 'J', 'K', 'L', ':', '"', '~', 0, '|', 'Z', 'X', 'C', 'V',
	  'B', 'N', 'M', '<', '>', '?', 0, '*', 0, ' ' },
};

static bool kbd_letter(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* A key with the E0H prefix: the cursor keys the shell knows, keypad Enter and /. */
static unsigned kbd_extended(uint8_t code, char out[3])
{
	if (code == SC_UP || code == SC_DOWN) {
		out[0] = KEY_ESC;
		out[1] = '[';
		out[2] = code == SC_UP ? 'A' : 'B';
		return 3;
	}
	if (code == SC_ENTER || code == SC_SLASH) {
		out[0] = code == SC_ENTER ? '\r' : '/';
		return 1;
	}
	return 0;
}

static void kbd_modifier(struct kbd_state *st, uint8_t key, bool down)
{
	if (key == SC_SHIFT_L)
		st->shift_l = down;
	else if (key == SC_SHIFT_R)
		st->shift_r = down;
	else if (key == SC_CTRL)
		st->ctrl = down;		/* left, or right with E0H */
	else if (key == SC_CAPS && down)
		st->caps = !st->caps;
}

unsigned kbd_decode(struct kbd_state *st, uint8_t code, char out[3])
{
	uint8_t key = code & (uint8_t)~SC_BREAK;
	bool e0 = st->e0, shift;
	char c;

	if (code == SC_E0) {
		st->e0 = true;
		return 0;
	}
	st->e0 = false;
	if (key == SC_SHIFT_L || key == SC_SHIFT_R || key == SC_CTRL || key == SC_CAPS) {
		if (!(e0 && key != SC_CTRL))	/* E0 2A/E0 36: fake shifts of the 101-key board */
			kbd_modifier(st, key, !(code & SC_BREAK));
		return 0;
	}
	if (code & SC_BREAK)
		return 0;
	if (e0)
		return kbd_extended(key, out);
	if (key >= sizeof(keymap[0]))
		return 0;
	shift = st->shift_l || st->shift_r;
	c = keymap[shift][key];
	if (kbd_letter(c) && st->caps)
		c = keymap[!shift][key];
	if (c && st->ctrl && kbd_letter(c))
		c = (char)(c & CTRL_MASK);
	out[0] = c;
	return c != 0;
}

