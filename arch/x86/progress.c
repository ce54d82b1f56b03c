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

static bool quiet, shown, armed;
static uint64_t next_tsc, every;
static unsigned width;

void progress_set_quiet(bool q)
{
	quiet = q;
}

static bool progress_mine(void)
{
	return percpu_this()->index == 0;
}

void progress_start(void)
{
	if (!progress_mine())
		return;
	every = timer_tsc_hz() ? timer_tsc_hz() : PROGRESS_DEFAULT_HZ;
	next_tsc = rdtsc() + every;
	shown = false;
	armed = !quiet;
}

void progress_tick_now(uint64_t n)
{
	uint64_t now;
	int len;

	if (!armed || (n & PROGRESS_CHECK_MASK) || !progress_mine())
		return;
	now = rdtsc();
	if (now < next_tsc)
		return;
	next_tsc = now + every;
	len = kprintf("\r# stepped %llu instructions", (unsigned long long)n);
	if (len > 0 && (unsigned)len > width)
		width = (unsigned)len;
	shown = true;
}

void progress_stop(void)
{
	if (!progress_mine())
		return;
	armed = false;
	if (!shown)
		return;
	console_putc('\r');
	for (unsigned i = 1; i < width; i++)
		console_putc(' ');
	console_putc('\r');
	shown = false;
	width = 0;
}
