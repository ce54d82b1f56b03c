/*
 * panic.c - print "*** panic: ..." on the console and halt this CPU.
 */
#include <stdarg.h>

#include "arch/x86/arch.h"
#include "arch/x86/console.h"
#include "arch/x86/panic.h"

void panic(const char *fmt, ...)
{
	va_list ap;

	kprintf("\n*** panic: ");
	va_start(ap, fmt);
	kvprintf(fmt, ap);
	va_end(ap);
	kprintf("\n*** kernel halted\n");
	console_flush();
	arch_halt();
}
