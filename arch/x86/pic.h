/*
 * pic.h - the legacy 8259 pair: remapped away from the exception vectors
 * and fully masked (the kernel uses the local APIC only).
 */
#ifndef NBPROF_ARCH_X86_PIC_H
#define NBPROF_ARCH_X86_PIC_H

#include <stdbool.h>

#define PIC_MASTER_VECTOR	0x20	/* IRQ 0-7  -> vectors 0x20-0x27 */
#define PIC_SLAVE_VECTOR	0x28	/* IRQ 8-15 -> vectors 0x28-0x2f */

void pic_disable(void);

static inline bool pic_is_vector(unsigned v)
{
	return v >= PIC_MASTER_VECTOR && v < PIC_SLAVE_VECTOR + 8;
}

#endif
