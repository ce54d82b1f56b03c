/*
 * pic.c - remap and mask the 8259A pair.
 *
 * The firmware may leave the PICs at their power-on vectors 08H-0FH, which
 * collide with #DF..#GP. ICW1-ICW4 (Intel 8259A data sheet) move them to
 * 20H/28H; then OCW1 masks every line. A spurious IRQ 7/15 can still arrive
 * and is ignored by the dispatcher.
 */
#include "arch/x86/io.h"
#include "arch/x86/pic.h"

#define PIC1_CMD	0x20
#define PIC1_DATA	0x21
#define PIC2_CMD	0xa0
#define PIC2_DATA	0xa1

#define ICW1_INIT_ICW4	0x11	/* edge triggered, cascade, ICW4 follows */
#define ICW3_MASTER	0x04	/* slave on IRQ 2 */
#define ICW3_SLAVE	0x02	/* slave identity 2 */
#define ICW4_8086	0x01
#define OCW1_MASK_ALL	0xff

void pic_disable(void)
{
	outb(PIC1_CMD, ICW1_INIT_ICW4);
	io_delay();
	outb(PIC2_CMD, ICW1_INIT_ICW4);
	io_delay();
	outb(PIC1_DATA, PIC_MASTER_VECTOR);
	io_delay();
	outb(PIC2_DATA, PIC_SLAVE_VECTOR);
	io_delay();
	outb(PIC1_DATA, ICW3_MASTER);
	io_delay();
	outb(PIC2_DATA, ICW3_SLAVE);
	io_delay();
	outb(PIC1_DATA, ICW4_8086);
	io_delay();
	outb(PIC2_DATA, ICW4_8086);
	io_delay();
	outb(PIC1_DATA, OCW1_MASK_ALL);
	outb(PIC2_DATA, OCW1_MASK_ALL);
}
