/*
 * kbd.c - the polled i8042 keyboard (see kbd.h).
 *
 * The 8042 interface (IBM PC/AT Technical Reference; the same registers in
 * every later keyboard controller and in QEMU's i8042): status register at
 * 64H (bit 0 output buffer full, bit 1 input buffer full, bit 5 the byte
 * is from the auxiliary (mouse) port), data at 60H; command 20H reads and
 * 60H writes the controller's command byte, whose bit 6 translates the
 * keyboard's scan code set 2 into set 1 and bits 0-1 enable the keyboard
 * and mouse interrupts. nbprof sets bit 6 and clears bits 0-1: it polls,
 * and the interrupt controller is masked anyway. A missing controller
 * reads FFH from port 64H.
 *
 * Scan code set 1 (the IBM PC/XT key numbers): a key's make code, its
 * break code with bit 7 set; E0H prefixes the keys added by the 101-key
 * keyboard (right Ctrl, the cursor keys, keypad Enter and /).
 */
#include <stddef.h>

#include "arch/x86/io.h"
#include "arch/x86/kbd.h"

#define KBC_DATA		0x60
#define KBC_STATUS		0x64
#define KBC_CMD			0x64
#define KBC_ST_OBF		0x01
#define KBC_ST_IBF		0x02
#define KBC_ST_AUX		0x20
#define KBC_CMD_READ_CCB	0x20
#define KBC_CMD_WRITE_CCB	0x60
#define KBC_CCB_IRQS		0x03
#define KBC_CCB_XLAT		0x40
#define KBC_SPINS		100000u
#define KBC_DRAIN_MAX		64

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
#define KBD_QUEUE		8

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

static bool present;
static struct kbd_state state;
static char queue[KBD_QUEUE];
static unsigned q_head, q_tail;

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

static bool kbd_wait_input_empty(void)
{
	for (unsigned i = 0; i < KBC_SPINS; i++)
		if (!(inb(KBC_STATUS) & KBC_ST_IBF))
			return true;
	return false;
}

static bool kbd_wait_output(void)
{
	for (unsigned i = 0; i < KBC_SPINS; i++)
		if (inb(KBC_STATUS) & KBC_ST_OBF)
			return true;
	return false;
}

static void kbd_drain(void)
{
	for (unsigned i = 0; i < KBC_DRAIN_MAX && (inb(KBC_STATUS) & KBC_ST_OBF); i++)
		(void)inb(KBC_DATA);
}

bool kbd_init(void)
{
	uint8_t ccb;

	if (inb(KBC_STATUS) == 0xff)
		return false;
	kbd_drain();
	if (!kbd_wait_input_empty())
		return false;
	outb(KBC_CMD, KBC_CMD_READ_CCB);
	if (!kbd_wait_output())
		return false;
	ccb = inb(KBC_DATA);
	ccb = (uint8_t)((ccb | KBC_CCB_XLAT) & ~KBC_CCB_IRQS);
	if (!kbd_wait_input_empty())
		return false;
	outb(KBC_CMD, KBC_CMD_WRITE_CCB);
	if (!kbd_wait_input_empty())
		return false;
	outb(KBC_DATA, ccb);
	kbd_drain();
	present = true;
	return true;
}

bool kbd_present(void)
{
	return present;
}

int kbd_getc_nowait(void)
{
	uint8_t st;

	if (!present)
		return -1;
	while (q_head == q_tail && ((st = inb(KBC_STATUS)) & KBC_ST_OBF)) {
		uint8_t code = inb(KBC_DATA);
		char out[3];
		unsigned n;

		if (st & KBC_ST_AUX)
			continue;		/* a mouse byte */
		n = kbd_decode(&state, code, out);
		for (unsigned i = 0; i < n && q_tail - q_head < KBD_QUEUE; i++)
			queue[q_tail++ % KBD_QUEUE] = out[i];
	}
	if (q_head == q_tail)
		return -1;
	return (unsigned char)queue[q_head++ % KBD_QUEUE];
}
