/*
 * progress.c - the "# stepped N instructions" line of long stepped runs
 * (see progress.h). Only LP0, the LP that owns the console, prints; its
 * step handler calls progress_tick with interrupts off, so the state needs
 * no lock.
 */
#include "arch/x86/console.h"
#include "arch/x86/cpu.h"
#include "arch/x86/percpu.h"
#include "arch/x86/progress.h"
#include "arch/x86/timer.h"

#define PROGRESS_DEFAULT_HZ	UINT64_C(1000000000)	/* TSC rate when uncalibrated */

/* The line's state (LP0's alone, see the top). */
static struct {
	bool quiet, shown, armed;
	uint64_t next_tsc, every;
	unsigned width;
} prog;

void progress_set_quiet(bool q)
{
	prog.quiet = q;
}

static bool progress_mine(void)
{
	return percpu_this()->index == 0;
}

void progress_start(void)
{
	if (!progress_mine())
		return;
	prog.every = timer_tsc_hz() ? timer_tsc_hz() : PROGRESS_DEFAULT_HZ;
	prog.next_tsc = rdtsc() + prog.every;
	prog.shown = false;
	prog.armed = !prog.quiet;
}

void progress_tick_now(uint64_t n)
{
	uint64_t now;
	int len;

	if (!prog.armed || (n & PROGRESS_CHECK_MASK) || !progress_mine())
		return;
	now = rdtsc();
	if (now < prog.next_tsc)
		return;
	prog.next_tsc = now + prog.every;
	len = kprintf("\r# stepped %llu instructions", (unsigned long long)n);
	if (len > 0 && (unsigned)len > prog.width)
		prog.width = (unsigned)len;
	prog.shown = true;
}

void progress_stop(void)
{
	if (!progress_mine())
		return;
	prog.armed = false;
	if (!prog.shown)
		return;
	console_putc('\r');
	for (unsigned i = 1; i < prog.width; i++)
		console_putc(' ');
	console_putc('\r');
	prog.shown = false;
	prog.width = 0;
}
