/*
 * panic.h - stop the kernel with a message.
 */
#ifndef NBPROF_KERNEL_PANIC_H
#define NBPROF_KERNEL_PANIC_H

#include "kernel/printf.h"

void panic(const char *fmt, ...) KPRINTF_FORMAT(1, 2) __attribute__((noreturn));

#endif
