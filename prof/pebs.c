/*
 * pebs.c - the kernel's DS save areas and PEBS buffers (see pebs.h).
 *
 * Memory: static, one area and one buffer per LP, in the layout the
 * processor uses (`form`, set at each pebs_check). The processor (or the
 * model) writes records into the buffer and advances the index in the
 * area; the drain reads them and rewinds the index. Both happen on the LP
 * that owns the buffer, the drain under the PMU lock (the PMI handler),
 * with that LP's PEBS counter stopped meanwhile and, on LP0, its PEBS
 * enable bit clear (the SDM's DS interrupt service routine disables PEBS
 * while it empties the buffer).
 */
#include "arch/x86/cpu.h"
#include "arch/x86/mode.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "pmu/p4_apply.h"
#include "pmu/p4_regs.h"
#include "prof/backend.h"
#include "prof/pebs.h"

/*
 * The layout the processor uses (PMU reference 5.1; Linux's old ds.c sized
 * the DS fields `cpu_has(DTES64) ? 8 : 4`): 64-bit when CPUID.1:ECX[2]
 * DTES64 is set, whatever the mode, or in IA-32e mode; 32-bit only on a
 * part without DTES64 outside IA-32e mode (Willamette, Northwood). Taken
 * from the CPU at each pebs_check; buffers are sized for the larger record.
 */
static enum p4_ds_form form = MODE_IS_64 ? P4_DS_64 : P4_DS_32;
#define PEBS_FORM	form
#define PEBS_REC	((unsigned)p4_ds_layouts[PEBS_FORM].record_size)
#define PEBS_REC_MAX	144u

struct pebs_lp {
	uint8_t area[0x50] __attribute__((aligned(64)));
	uint8_t buf[PEBS_RECORDS_MAX * PEBS_REC_MAX + 1] __attribute__((aligned(64)));
	bool armed;
};

static struct pebs_lp bufs[PEBS_NLP];
static struct pebs_stats stats;

int pebs_check(char *err, size_t n)
{
	struct msr_bus *bus = perf_bus();
	struct cpu_info ci;
	uint64_t misc = 0;
	const char *why;

	if (!bus)
		return ksnprintf(err, n, "PEBS needs a PMU backend"), -1;
	perf_cpu_identify(&ci);
	if (msr_bus_read(bus, MSR_IA32_MISC_ENABLE, &misc) != 0)
		return ksnprintf(err, n, "PEBS: IA32_MISC_ENABLE cannot be read"), -1;
	if ((why = p4_pebs_unavailable(ci.ds ? P4_CPUID1_EDX_DS : 0, misc)) != NULL)
		return ksnprintf(err, n, "%s", why), -1;
	form = p4_ds_form_for(ci.dtes64, MODE_IS_64);
	return 0;
}

int pebs_prepare(unsigned lp, unsigned records, uint64_t period, char *err, size_t n)
{
	struct p4_ds_pebs p;
	const char *why;

	if (lp >= PEBS_NLP)
		return ksnprintf(err, n, "PEBS: no logical processor %u", lp), -1;
	if (records < 2 || records > PEBS_RECORDS_MAX)
		return ksnprintf(err, n, "PEBS buffer: 2 to %u records", PEBS_RECORDS_MAX), -1;
	if (p4_ds_plan(PEBS_FORM, (uint64_t)(uintptr_t)bufs[lp].buf,
		       (uint64_t)records * PEBS_REC + p4_ds_layouts[PEBS_FORM].max_slack,
		       p4_ds_threshold_below(records), 0 - period, &p, &why))
		return ksnprintf(err, n, "PEBS buffer: %s", why), -1;
	p4_ds_put_pebs(PEBS_FORM, bufs[lp].area, &p);
	bufs[lp].armed = true;
	return 0;
}

int pebs_load(unsigned lp)
{
	struct msr_bus *bus = perf_bus();
	uint64_t v = lp < PEBS_NLP && bufs[lp].armed ? (uint64_t)(uintptr_t)bufs[lp].area : 0;

	if (!bus)
		return -1;
	return msr_bus_write(bus, MSR_IA32_DS_AREA, v) == 0 ? 0 : -1;
}

void pebs_unload(void)
{
	struct msr_bus *bus = perf_bus();

	if (bus)
		msr_bus_write(bus, MSR_IA32_DS_AREA, 0);
}

void pebs_disable(unsigned lps)
{
	struct msr_bus *bus = perf_bus();
	uint64_t v, clear = 0;

	for (unsigned lp = 0; lp < PEBS_NLP; lp++)
		if (lps & (1u << lp))
			clear |= p4_pebs_thr_bit(perf_this_lp(), lp);
	if (!bus || !clear || msr_bus_read(bus, MSR_PEBS_ENABLE, &v) != 0 || !(v & clear))
		return;
	v &= ~clear;
	/* bit 24 went with the thread bits (p4_apply); a replay metric keeps it */
	if (!(v & (PEBS_ENABLE_MY_THR | PEBS_ENABLE_OTH_THR | PEBS_ENABLE_METRICS)))
		v &= ~PEBS_ENABLE_UOP_TAG;
	msr_bus_write(bus, MSR_PEBS_ENABLE, v);
}

bool pebs_armed(unsigned lp)
{
	return lp < PEBS_NLP && bufs[lp].armed;
}

void pebs_release(void)
{
	for (unsigned lp = 0; lp < PEBS_NLP; lp++)
		bufs[lp].armed = false;
}

void pebs_reset_stats(void)
{
	memset(&stats, 0, sizeof(stats));
}

unsigned pebs_drain(unsigned lp, pebs_record_fn *fn, void *ctx)
{
	struct p4_ds_pebs p;
	struct p4_pebs_record r;
	unsigned k, n;

	if (!pebs_armed(lp))
		return 0;
	p4_ds_get_pebs(PEBS_FORM, bufs[lp].area, &p);
	if (p.index < p.base || p.index > p.max)
		return 0;
	n = p4_ds_written(PEBS_FORM, &p);
	if (p.index + PEBS_REC > p.max)
		stats.full[lp]++;
	for (k = 0; k < n; k++) {
		p4_pebs_record_decode(PEBS_FORM, bufs[lp].buf + (size_t)k * PEBS_REC, &r);
		fn(ctx, lp, &r);
	}
	p4_ds_put(PEBS_FORM, bufs[lp].area, P4_DS_PEBS_INDEX, p.base);
	if (n) {
		stats.drains[lp]++;
		stats.records[lp] += n;
	}
	return n;
}

/* Records are waiting in LP lp's buffer. */
static bool pebs_waiting(unsigned lp)
{
	struct p4_ds_pebs p;

	if (!pebs_armed(lp))
		return false;
	p4_ds_get_pebs(PEBS_FORM, bufs[lp].area, &p);
	return p.index > p.base && p.index <= p.max;
}

unsigned pebs_refilled(void *ctx, unsigned lp)
{
	struct p4_ds_pebs p;

	(void)ctx;
	if (!pebs_armed(lp))
		return 0;
	p4_ds_get_pebs(PEBS_FORM, bufs[lp].area, &p);
	if (p.index < p.threshold || p.index > p.max)
		return 0;
	return p4_ds_written(PEBS_FORM, &p);
}

unsigned pebs_drain_live(const struct p4_plan *plan, unsigned lp, pebs_record_fn *fn, void *ctx)
{
	struct msr_bus *bus = perf_bus();
	unsigned me = perf_this_lp();
	uint64_t v = 0, cccr = 0, bit = p4_pebs_thr_bit(me, lp);
	int i = p4_plan_pebs_idx(plan, lp);
	uint32_t cccr_msr = 0;
	bool stopped = false, off;
	unsigned n;

	if (!pebs_waiting(lp))
		return 0;
	/*
	 * The PEBS counter stopped through its CCCR (its null event, OVF
	 * clear): the drain's own loads and stores are tagged too (:k), and a
	 * counter that overflowed on them while PEBS is off would wrap with no
	 * record and no reload, and write no record for ~2^40 events. The
	 * counter's value is not touched; its CCCR is written back as it was.
	 * A counter found disabled (a program's counting marker) stays so.
	 */
	if (bus && i >= 0) {
		cccr_msr = p4_counters[plan->slot[i].counter].cccr_msr;
		stopped = msr_bus_read(bus, cccr_msr, &cccr) == 0 && (cccr & CCCR_ENABLE) &&
			  p4_counter_quiet(bus, plan, (unsigned)i) == 0;
	}
	/*
	 * PEBS_ENABLE is shared and its thread bits are writer-relative (SDM
	 * 18.16.3, which asks that the code modifying them be bound to one LP):
	 * only LP0 clears and sets its bit; LP1 relies on the stopped counter.
	 */
	off = me == 0 && bus && msr_bus_read(bus, MSR_PEBS_ENABLE, &v) == 0 && (v & bit);
	if (off)
		msr_bus_write(bus, MSR_PEBS_ENABLE, v & ~bit);
	n = pebs_drain(lp, fn, ctx);
	if (off && msr_bus_read(bus, MSR_PEBS_ENABLE, &v) == 0)
		msr_bus_write(bus, MSR_PEBS_ENABLE, v | bit);
	if (stopped)
		msr_bus_write(bus, cccr_msr, cccr & ~CCCR_OVF);
	return n;
}

const struct pebs_stats *pebs_stats(void)
{
	return &stats;
}

static bool pebs_inside(const void *obj, size_t size, uint64_t addr, unsigned len)
{
	uint64_t lo = (uint64_t)(uintptr_t)obj;

	return addr >= lo && addr + len >= addr && addr + len <= lo + size;
}

int pebs_mem(void *ctx, uint64_t addr, void *buf, unsigned len, bool write)
{
	(void)ctx;
	for (unsigned lp = 0; lp < PEBS_NLP; lp++) {
		if (!pebs_inside(bufs[lp].area, sizeof(bufs[lp].area), addr, len) &&
		    !pebs_inside(bufs[lp].buf, sizeof(bufs[lp].buf), addr, len))
			continue;
		if (write)
			memcpy((void *)(uintptr_t)addr, buf, len);
		else
			memcpy(buf, (const void *)(uintptr_t)addr, len);
		return 0;
	}
	return -1;
}

/* ---- raw set-ups: the shell's `pebs` command ----------------------------------- */

uint64_t pebs_area_addr(unsigned lp)
{
	return pebs_armed(lp) ? (uint64_t)(uintptr_t)bufs[lp].area : 0;
}

int pebs_fields(unsigned lp, struct p4_ds_pebs *p)
{
	if (!pebs_armed(lp))
		return -1;
	p4_ds_get_pebs(PEBS_FORM, bufs[lp].area, p);
	return 0;
}

int pebs_record_at(unsigned lp, unsigned k, struct p4_pebs_record *r)
{
	struct p4_ds_pebs p;

	if (pebs_fields(lp, &p) || p.index < p.base || p.index > p.max ||
	    k >= p4_ds_written(PEBS_FORM, &p))
		return -1;
	p4_pebs_record_decode(PEBS_FORM, bufs[lp].buf + (size_t)k * PEBS_REC, r);
	return 0;
}

void pebs_forget(unsigned lp)
{
	if (lp < PEBS_NLP)
		bufs[lp].armed = false;
}

unsigned pebs_record_bytes(void)
{
	return PEBS_REC;
}
