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
 * The bytes come from kbd_decode() (kbd_map.c).
 */
#include "arch/x86/io.h"
#include "arch/x86/kbd.h"

#define KBC_ST_AUX		0x20
#define KBC_CMD_READ_CCB	0x20
#define KBC_CMD_WRITE_CCB	0x60
#define KBC_CCB_IRQS		0x03
#define KBC_CCB_XLAT		0x40
#define KBC_SPINS		100000u
#define KBC_DRAIN_MAX		64

#define KBD_QUEUE		8

static bool present;
static struct kbd_state state;
/* Bytes decoded ahead of the reader (a key can make up to three). */
static struct {
	char buf[KBD_QUEUE];
	unsigned head, tail;
} queue;

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
	while (queue.head == queue.tail && ((st = inb(KBC_STATUS)) & KBC_ST_OBF)) {
		uint8_t code = inb(KBC_DATA);
		char out[3];
		unsigned n;

		if (st & KBC_ST_AUX)
			continue;		/* a mouse byte */
		n = kbd_decode(&state, code, out);
		for (unsigned i = 0; i < n && queue.tail - queue.head < KBD_QUEUE; i++)
			queue.buf[queue.tail++ % KBD_QUEUE] = out[i];
	}
	if (queue.head == queue.tail)
		return -1;
	return (unsigned char)queue.buf[queue.head++ % KBD_QUEUE];
}
