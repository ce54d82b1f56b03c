/*
 * panic.h - stop the kernel with a message.
 */
#ifndef NBPROF_ARCH_X86_PANIC_H
#define NBPROF_ARCH_X86_PANIC_H

#include "lib/printf.h"

void panic(const char *fmt, ...) KPRINTF_FORMAT(1, 2) __attribute__((noreturn));

#endif
