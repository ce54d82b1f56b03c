/*
 * kmain.h - what the kernel keeps from boot.
 */
#ifndef NBPROF_KERNEL_KMAIN_H
#define NBPROF_KERNEL_KMAIN_H

#include "arch/x86/bootinfo.h"

#define NBPROF_VERSION	"0.1"

/* The struct boot/ handed over (lives in the kernel image). */
const struct bootinfo *kmain_bootinfo(void);

#endif
