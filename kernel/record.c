/*
 * record.c - sampling: overflow interrupts become samples in per-LP stores.
 *
 * The overflow path is kernel/perf.c's PMI handler, in the order the
 * hardware needs (fact sheet 6, 9.1-9.4): scan every counter of the run
 * (CCCR.OVF, or bit 39 clear on a counter preset negative: "unflagged"),
 * call the overflow hook - record_overflow(), which takes the sample -
 * then clear OVF, reload -period (40 bits, written twice, Intel 249199
 * N15; a read-back mismatch is written again and counted), restart,
 * unmask LVT PC, and the dispatcher sends the EOI for a vector (an NMI
 * needs none). Model PMIs reach the same handler as real interrupts, with
 * the workload's frame as the interrupted one (perf.c explains how).
 *
 * Interrupt flag. With a fixed vector the PMI can only be taken where
 * RFLAGS.IF = 1, so a vector-mode recording runs the workload with
 * interrupts enabled; NMI mode (the default) keeps the shell's IF = 0, so
 * the samples land in interrupt-masked code, as NMIs do on hardware.
 *
 * Erratum path. On parts with the cascade-PMI erratum (0F_02, and 0F_00/01
 * stepping > 09H; SDM 18.15.5.7, fact sheet 2.3) a cascaded counter raises
 * no PMI, so a sampling request on one is planned without OVF_PMI and its
 * OVF flag is polled from the LAPIC timer (RECORD_POLL_HZ) through
 * perf_poll(). A poll finds the counter some events past its overflow: it
 * stores one sample per period that ended (all at the poll's IP) and
 * reloads -(period - excess), so the periods keep their phase. Periods that
 * end after the last poll are counted as "unattributed", never dropped
 * silently.
 *
 * Throttling. Every RECORD_THROTTLE_WINDOW samples, the TSC spent in PMI
 * handlers and polls since the last check (perf_info()->pmi.tsc_total) is
 * compared with the TSC that passed; above the configured share every
 * sampling period is doubled and the throttle counted. A period of 1 thus
 * grows until the workload makes progress again (pitfall 9.8: tiny reload
 * values can otherwise starve the interrupted code).
 *
 * Stores. At the first record, all free RAM the memory map reports minus
 * RECORD_KERNEL_RESERVE (what the kernel still allocates: the workloads'
 * buffers of up to 64 MiB, user stacks, page tables) is taken in one piece
 * and split evenly between the logical processors; each LP's samples go to
 * its own part (kernel/samples.h), stopping or wrapping when full.
 *
 * Cost. In vector mode under the model the PMI is taken between two
 * stepped instructions, so the step that contains it is longer by exactly
 * the handler's cost from entry to IRETQ; record compares the median step
 * with and without a PMI (record_result.step_pmi / step_plain).
 */
#include "arch/x86/cpu.h"
#include "arch/x86/idt.h"
#include "arch/x86/lapic.h"
#include "arch/x86/msr.h"
#include "arch/x86/paging.h"
#include "arch/x86/timer.h"
#include "kernel/console.h"
#include "kernel/mem.h"
#include "kernel/percpu.h"
#include "kernel/record.h"
#include "pmu/p4_apply.h"
#include "pmu/p4_encode.h"
#include "pmu/p4_regs.h"
#include "pmu/stats.h"

#define RECORD_KERNEL_RESERVE	(UINT64_C(80) << 20)
#define RECORD_STEP_KEEP	512u	/* step timings kept for the cost medians */
#define RECORD_FLOOR_MAX	256u

struct record_state {
	struct record_cfg cfg;
	struct perf_count sess;
	struct perf_inputs in;
	struct workload_hooks perf_h, h;
	struct sample_store store[PERCPU_MAX];
	const struct sample_store *stores[PERCPU_MAX];
	struct sample_event events[P4_MAX_REQUESTS];
	struct sample_run run;
	uint64_t period[P4_MAX_REQUESTS];
	bool valid;

	/* during a run */
	uint64_t unattributed, throttled;
	uint64_t win_t0, win_cost0;
	unsigned win_n;
	uint64_t store_tsc, store_n;
	uint64_t irq_seen;
	uint64_t plain[RECORD_STEP_KEEP], with_pmi[RECORD_STEP_KEEP];
	unsigned nplain, npmi;
};

static struct record_state rs;
static struct trap_frame record_no_frame;	/* "no context": the final poll after the workload */
static uint64_t arena;
static size_t arena_per_lp;

const struct sample_run *record_last(void)
{
	return rs.valid ? &rs.run : NULL;
}

size_t record_store_bytes(void)
{
	return arena_per_lp;
}

/* ---- store memory ------------------------------------------------------- */

static int record_arena(char *err, size_t n)
{
	struct mem_summary m;
	unsigned nlp = percpu_count() ? percpu_count() : 1;
	uint64_t take, pages;

	if (arena)
		return 0;
	mem_get_summary(&m);
	take = m.free > 2 * RECORD_KERNEL_RESERVE ? m.free - RECORD_KERNEL_RESERVE : m.free / 2;
	if (take > m.largest_free)
		take = m.largest_free;
	pages = take / MEM_PAGE_SIZE / nlp * nlp;
	if (pages < nlp || (arena = mem_alloc_pages((size_t)pages)) == 0)
		return ksnprintf(err, n, "no memory for the sample stores (%llu bytes free)",
				 (unsigned long long)m.free), -1;
	arena_per_lp = (size_t)(pages / nlp * MEM_PAGE_SIZE);
	return 0;
}

/* ---- the overflow hook ------------------------------------------------------ */

/* Frame walker's "mapped?": inside the identity map the page tables hold, not page 0. */
static bool record_mapped(void *ctx, uint64_t addr, uint64_t len)
{
	(void)ctx;
	return addr >= MEM_PAGE_SIZE && addr + len > addr && addr + len <= paging_mapped_top();
}

/* A polled counter, some events past its overflow: periods ended; keep the phase. */
static uint64_t record_poll_periods(struct record_state *r, unsigned idx)
{
	uint64_t raw = 0, p = r->period[idx], since;

	if (p4_counter_read(perf_bus(), r->sess.plan.slot[idx].counter, &raw))
		return 1;
	since = raw & P4_COUNTER_MASK;
	if (since & BIT(39))
		since = 0;		/* not past the wrap: an unflagged overflow */
	r->sess.reload[idx] = p4_counter_preset(p - since % p);
	return 1 + since / p;
}

static void record_raise_periods(struct record_state *r)
{
	for (unsigned i = 0; i < r->cfg.plan.n; i++) {
		if (!r->cfg.sampler[i] || r->period[i] >= P4_PERIOD_MAX)
			continue;
		r->period[i] = r->period[i] * 2 > P4_PERIOD_MAX ? P4_PERIOD_MAX : r->period[i] * 2;
		if (!r->cfg.polled[i])
			r->sess.reload[i] = p4_counter_preset(r->period[i]);
	}
	r->throttled++;
}

static void record_throttle(struct record_state *r, uint64_t now)
{
	uint64_t cost = perf_info()->pmi.tsc_total - r->win_cost0, span = now - r->win_t0;

	if (++r->win_n < RECORD_THROTTLE_WINDOW)
		return;
	if (cost * 100 > (uint64_t)r->cfg.throttle_pct * span)
		record_raise_periods(r);
	r->win_n = 0;
	r->win_t0 = now;
	r->win_cost0 = perf_info()->pmi.tsc_total;
}

/* perf_overflow_fn: interrupts off, maybe in an NMI; f is the interrupted workload (or NULL). */
static void record_overflow(void *ctx, struct trap_frame *f, unsigned idx)
{
	struct record_state *r = ctx;
	struct sample_store *st = &r->store[percpu_this()->index];
	struct sample s;
	uint64_t k = 1, t0;

	if (idx >= r->cfg.plan.n || !r->cfg.sampler[idx])
		return;
	if (r->cfg.polled[idx])
		k = record_poll_periods(r, idx);
	if (!f || f == &record_no_frame || !st->buf) {
		r->unattributed += k;
		return;
	}
	s.tsc = rdtsc();
	s.ip = f->rip;
	s.rflags = f->rflags;
	s.rsp = f->rsp;
	s.event = (uint8_t)idx;
	s.cpl = (uint8_t)(f->cs & 3);
	s.nchain = 0;
	if (r->cfg.callchain)
		s.nchain = (uint8_t)sample_walk_frames(f->rbp, s.chain, SAMPLE_MAX_CHAIN,
							record_mapped, NULL);
	t0 = rdtsc();
	while (k--)
		sample_store_append(st, &s);
	r->store_tsc += rdtsc() - t0;
	r->store_n++;
	record_throttle(r, s.tsc);
}

/* ---- workload hooks: perf's, plus step timing for the PMI cost ---------------- */

static void record_h_begin(void *ctx, uint8_t lp)
{
	struct record_state *r = ctx;

	r->perf_h.begin(r->perf_h.ctx, lp);
	r->irq_seen = perf_info()->pmi.interrupts;
}

static void record_h_end(void *ctx, uint8_t lp)
{
	struct record_state *r = ctx;

	r->perf_h.end(r->perf_h.ctx, lp);
}

static void record_h_step(void *ctx, const struct step_info *s)
{
	struct record_state *r = ctx;

	if (perf_info()->pmi.interrupts != r->irq_seen) {
		if (r->npmi < RECORD_STEP_KEEP)
			r->with_pmi[r->npmi++] = s->cycles;
	} else if (r->nplain < RECORD_STEP_KEEP) {
		r->plain[r->nplain++] = s->cycles;
	}
	r->perf_h.step(r->perf_h.ctx, s);
	r->irq_seen = perf_info()->pmi.interrupts;
}

static void record_h_synthetic(void *ctx, uint8_t lp, uint8_t cpl, const char *spec, uint64_t n)
{
	struct record_state *r = ctx;

	r->perf_h.synthetic(r->perf_h.ctx, lp, cpl, spec, n);
}

static void record_hooks(struct record_state *r)
{
	perf_hooks(&r->in, &r->perf_h);
	r->h = (struct workload_hooks){
		.ctx = r, .begin = record_h_begin, .end = record_h_end,
		.step = record_h_step, .synthetic = record_h_synthetic,
	};
}

/* ---- a run ------------------------------------------------------------------- */

static void record_tick(struct trap_frame *f)
{
	perf_poll(f);
}

static bool record_polling(const struct record_cfg *c)
{
	for (unsigned i = 0; i < c->plan.n; i++)
		if (c->sampler[i] && c->polled[i])
			return true;
	return false;
}

static int record_check(const struct record_cfg *c, char *err, size_t n)
{
	if (!perf_bus())
		return ksnprintf(err, n, "no PMU backend"), -1;
	if (c->lp != percpu_this()->index)
		return ksnprintf(err, n, "recording runs on LP%u; LP%u is not available here",
				 percpu_this()->index, c->lp), -1;
	if (record_polling(c) && (!lapic_present() || timer_lapic_hz() < RECORD_POLL_HZ))
		return ksnprintf(err, n, "the erratum path polls with the LAPIC timer, which is not "
				 "calibrated"), -1;
	if (record_polling(c) && c->args->w->id == WL_HALT)
		return ksnprintf(err, n, "the halt workload uses the LAPIC timer that polling needs"), -1;
	if (record_arena(err, n))
		return -1;
	if (c->buffer > arena_per_lp)
		return ksnprintf(err, n, "--buffer: at most %zu bytes per LP", arena_per_lp), -1;
	return 0;
}

static void record_setup(struct record_state *r, const struct record_cfg *c)
{
	unsigned lp = c->lp;
	void *mem = (void *)(uintptr_t)(arena + (uint64_t)lp * arena_per_lp);

	r->cfg = *c;
	r->valid = false;
	r->unattributed = r->throttled = r->store_tsc = r->store_n = 0;
	r->win_n = 0;
	r->nplain = r->npmi = 0;
	for (unsigned i = 0; i < PERCPU_MAX; i++)
		r->stores[i] = NULL;
	sample_store_init(&r->store[lp], mem, c->buffer ? c->buffer : arena_per_lp,
			  c->wrap ? SAMPLE_WRAP : SAMPLE_STOP_WHEN_FULL, (uint8_t)lp);
	r->stores[lp] = &r->store[lp];
	for (unsigned i = 0; i < c->plan.n; i++) {
		r->period[i] = c->plan.req[i].spec.period;
		r->events[i] = (struct sample_event){ .name = r->cfg.name[i], .period = r->period[i] };
	}
	r->run = (struct sample_run){
		.stores = r->stores, .nstores = percpu_count() ? percpu_count() : 1,
		.events = r->events, .nevents = c->plan.n, .comm = c->args->w->name,
		.tsc_hz = timer_tsc_hz(),
	};
	record_hooks(r);
}

static void record_timer(bool on)
{
	if (on) {
		idt_set_handler(LAPIC_TIMER_VECTOR, record_tick);
		lapic_timer_start((uint32_t)(timer_lapic_hz() / RECORD_POLL_HZ), LAPIC_TIMER_VECTOR, true);
	} else {
		lapic_timer_stop();
		idt_set_handler(LAPIC_TIMER_VECTOR, NULL);
	}
}

static void record_pmi_delta(struct perf_pmi_stats *d, const struct perf_pmi_stats *a,
			     const struct perf_pmi_stats *b)
{
	*d = (struct perf_pmi_stats){
		.interrupts = b->interrupts - a->interrupts, .overflows = b->overflows - a->overflows,
		.unflagged = b->unflagged - a->unflagged, .reraised = b->reraised - a->reraised,
		.deferred = b->deferred - a->deferred, .dropped = b->dropped - a->dropped,
		.late = b->late - a->late, .mismatches = b->mismatches - a->mismatches,
		.handoffs = b->handoffs - a->handoffs, .polls = b->polls - a->polls,
		.tsc_total = b->tsc_total - a->tsc_total,
	};
}

static uint64_t record_median(uint64_t *v, unsigned n)
{
	struct stats_summary s;

	stats_summarise(v, n, &s);
	return (uint64_t)(s.median / STATS_SCALE);
}

static void record_finish(struct record_state *r, struct record_result *res,
			  const struct perf_pmi_stats *before)
{
	sample_run_totals(&r->run, &res->totals);
	res->unattributed = r->unattributed;
	res->throttled = r->throttled;
	for (unsigned i = 0; i < r->cfg.plan.n; i++) {
		res->period[i] = r->period[i];
		r->events[i].period = r->period[i];	/* the period at the end */
	}
	res->polling = record_polling(&r->cfg);
	record_pmi_delta(&res->pmi, before, &perf_info()->pmi);
	res->store_tsc = r->store_tsc;
	res->store_n = r->store_n;
	res->cost_known = r->cfg.pmi == PERF_PMI_FIXED && !res->polling && r->npmi > 0 &&
			  r->nplain > 0;
	if (res->cost_known) {
		res->step_pmi = record_median(r->with_pmi, r->npmi);
		res->step_plain = record_median(r->plain, r->nplain);
	}
	res->buffer = r->store[r->cfg.lp].cap * 8;
	res->steps = r->in.steps;
}

int record_run(const struct record_cfg *cfg, struct record_result *res, char *err, size_t n)
{
	struct record_state *r = &rs;
	struct workload_result wres;
	struct perf_pmi_stats before = perf_info()->pmi;
	enum perf_pmi_mode mode = perf_info()->pmi_mode;
	bool polling = record_polling(cfg), irq = cfg->pmi == PERF_PMI_FIXED || polling;
	uint64_t flags = read_rflags(), t0;

	*res = (struct record_result){ .fault_vector = -1 };
	if (record_check(cfg, err, n))
		return -1;
	record_setup(r, cfg);
	perf_set_pmi_mode(cfg->pmi);
	perf_set_overflow_hook(record_overflow, r);
	if (perf_count_start(&r->sess, &r->cfg.plan, PERF_RELOAD_DEFAULT, err, n)) {
		perf_set_overflow_hook(NULL, NULL);
		perf_set_pmi_mode(mode);
		return -1;
	}
	t0 = rdtsc();
	r->run.tsc_start = t0;
	r->win_t0 = t0;
	r->win_cost0 = perf_info()->pmi.tsc_total;
	if (polling)
		record_timer(true);
	if (irq)
		cpu_sti();
	res->status = workload_run(cfg->args, cfg->ring, perf_model() != NULL, &r->h, &wres);
	if (!(flags & RFLAGS_IF))
		cpu_cli();
	res->tsc_cycles = rdtsc() - t0;
	if (polling) {
		record_timer(false);
		perf_poll(&record_no_frame);	/* periods that ended after the last tick */
	}
	perf_count_stop(&r->sess, NULL);
	perf_set_overflow_hook(NULL, NULL);
	perf_set_pmi_mode(mode);
	res->fault_vector = wres.fault_vector;
	ksnprintf(res->error, sizeof(res->error), "%s", wres.error);
	record_finish(r, res, &before);
	r->valid = res->status != WORKLOAD_REFUSED;
	return 0;
}

/* ---- the floor of the overflow path -------------------------------------------- */

/* The register accesses of one overflow that no handler can avoid (counter 0, left disabled). */
static void record_floor_regs(void)
{
	uint64_t v;

	msr_read_safe(MSR_BPU_CCCR0, &v);
	msr_read_safe(MSR_BPU_COUNTER0, &v);
	msr_write_safe(MSR_BPU_CCCR0, 0);
	msr_write_safe(MSR_BPU_COUNTER0, 0);
	msr_write_safe(MSR_BPU_COUNTER0, 0);
	msr_write_safe(MSR_BPU_CCCR0, 0);
	lapic_write(LAPIC_LVT_PMC, lapic_read(LAPIC_LVT_PMC));
	lapic_eoi();
}

int record_floor(unsigned n, uint64_t *regs_tsc, uint64_t *store_tsc, char *err, size_t errlen)
{
	static uint64_t t[RECORD_FLOOR_MAX], u[RECORD_FLOOR_MAX];
	static uint64_t buf[SAMPLE_MAX_WORDS * 4];
	struct sample_store st;
	struct sample s = { .ip = (uintptr_t)record_floor, .cpl = 0 };

	if (n == 0 || n > RECORD_FLOOR_MAX)
		return ksnprintf(err, errlen, "N must be 1 .. %u", RECORD_FLOOR_MAX), -1;
	if (!lapic_present())
		return ksnprintf(err, errlen, "no local APIC"), -1;
	sample_store_init(&st, buf, sizeof(buf), SAMPLE_WRAP, 0);
	for (unsigned i = 0; i < n; i++) {
		uint64_t a = rdtsc(), b, c;

		record_floor_regs();
		b = rdtsc();
		s.tsc = b;
		sample_store_append(&st, &s);
		c = rdtsc();
		t[i] = b - a;
		u[i] = c - b;
	}
	*regs_tsc = record_median(t, n);
	*store_tsc = record_median(u, n);
	return 0;
}
