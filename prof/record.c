/*
 * record.c - sampling: the sample sink of the overflow path
 * (docs/dev/sampling-path.md tells the path once), per-LP sample stores, polling on
 * the erratum parts, throttling, and the cost figures of `make bench`.
 *
 * Erratum path. On parts with the cascade-PMI erratum (0F_02, and 0F_00/01
 * stepping > 09H; SDM 18.15.5.7, PMU reference 2.3) a cascaded counter raises
 * no PMI, so a sampling request on one is planned without OVF_PMI and its
 * OVF flag is polled from a tick in the workload's time (RECORD_POLL_HZ:
 * the LAPIC timer on a Pentium 4, the step engine's tick under the model;
 * the backend's, perf_tick) through perf_poll(). A poll finds the counter
 * some events past its overflow: it stores one sample per period that
 * ended (all at the poll's IP) and
 * reloads -(period - excess), so the periods keep their phase. A stepped
 * job polls once more at its last step (record_tick explains why); periods
 * that still end after the last poll are counted as "unattributed", never
 * dropped silently.
 *
 * Throttling. Every RECORD_THROTTLE_WINDOW samples of an LP, the time that
 * LP spent in its own PMI handlers and polls since its last check
 * (perf_info()->pmi.lp_tsc[LP] less the backend's own work: the sibling's
 * handlers run on the other LP, in parallel, and are not this LP's time)
 * is compared with the LP's time that passed (perf_clock: the TSC on a
 * Pentium 4; under the model the time of what it stepped for the LP, as it
 * would run unstepped, where the stepped run's TSC would make any handler's
 * share look tiny); above the configured share in two windows in a row every
 * interrupt-sampled period the LP owns is doubled (a PEBS counter's is the
 * DS area's counter reset and stays) and the throttle counted; a share
 * of 100 % never throttles. One window alone is not enough: a single slow
 * handler (the host descheduling QEMU, where the TSC is host time) can
 * fill a whole window's share. A period of 1 thus
 * grows until the workload makes progress again (pitfall 9.8: tiny reload
 * values can otherwise starve the interrupted code). The first window of
 * each LP's run is a warm-up that is measured but never counts: its
 * handlers run cold (caches, TLBs, and under QEMU the first translation of
 * the overflow path's code), which made the first `record` after boot
 * throttle (61 samples of docs/guide/sampling.md's 106) while every later run took all.
 *
 * Stores. At the first record, all free RAM the memory map reports minus
 * RECORD_KERNEL_RESERVE (what the kernel still allocates: the workloads'
 * buffers of up to 64 MiB, user stacks, page tables) is taken in one piece
 * and split evenly between the logical processors; each LP's samples go to
 * its own part (prof/samples.h), stopping or wrapping when full.
 *
 * Two logical processors (Hyper-Threading). A run has a job per LP: LP0's
 * (the shell's LP) and its sibling's, either of which may be idle
 * (`record --cpu 1`, `--pair A -- B`). Each job has its own set of hooks
 * (its own perf inputs and throttle window) and each LP its
 * own store. A counter's overflow is handled by the LP its CCCR's
 * OVF_PMI_T0/T1 names (pmu/p4_encode.h: p4_cccr_pmi_lp), which is the LP whose
 * events the counter counts (cmd_record.c splits a sampling event that
 * would count both LPs into one request per LP), so record_overflow() runs
 * on that LP, with that LP's interrupted frame, and appends to that LP's
 * store only: every store has a single producer, as samples.h requires.
 * Throttling raises only the periods of the counters the calling LP owns.
 * Polling (the erratum path) runs from LP0's LAPIC timer: a counter without
 * PMI is LP0's, so a polled sampler may only count LP0's events (the
 * sibling runs its job with interrupts masked, smp.h, and takes no timer).
 */
#include "arch/x86/console.h"
#include "arch/x86/cpu.h"
#include "arch/x86/idt.h"
#include "arch/x86/ksyms.h"
#include "arch/x86/lapic.h"
#include "arch/x86/mem.h"
#include "arch/x86/msr.h"
#include "arch/x86/paging.h"
#include "arch/x86/percpu.h"
#include "arch/x86/smp.h"
#include "arch/x86/step.h"
#include "arch/x86/timer.h"
#include "arch/x86/user.h"
#include "lib/stats.h"
#include "pmu/p4_apply.h"
#include "pmu/p4_encode.h"
#include "pmu/p4_regs.h"
#include "prof/jitter.h"
#include "prof/pebs.h"
#include "workload/program.h"
#include "prof/record.h"

#define RECORD_KERNEL_RESERVE	(UINT64_C(80) << 20)
#define RECORD_FLOOR_MAX	256u
/*
 * One append in this many is timed (record_result store_tsc): the first
 * and every this many after it. The mean of that sample stands for all of
 * them, and the others are spared two clock reads (an RDTSC each on a
 * Pentium 4) and their sums.
 */
#define RECORD_STORE_TIMED	16u

_Static_assert(P4_MAX_REQUESTS <= 32, "record_state.sampled has a bit per request");

struct record_state;

/* One job's hooks and the counts its LP's handlers keep. */
struct record_lp {
	struct record_state *r;
	unsigned k;			/* job index: 0 = LP0, 1 = the sibling */
	unsigned smt;			/* the LP's SMT ID (T0/T1), set by the begin hook */
	struct perf_inputs in;
	struct workload_hooks perf_h, h;
	struct workload_job job;

	uint64_t unattributed, throttled;
	uint64_t win_t0, win_cost0;
	unsigned win_n;
	bool warm;			/* the first (warm-up) window has passed */
	struct period_jitter jit;	/* this LP's stream of jittered periods */
	bool over;			/* the last window was above the share */
	uint64_t store_tsc, store_n;	/* the timed appends (RECORD_STORE_TIMED) */
	unsigned store_seen;		/* the appends, to pick those timed */
	bool poll_exit;			/* poll once more when the workload returns */
};

/*
 * Where LP lp's PEBS records go (record_pebs_start): its job, its store
 * (NULL: not kept) and the plan index of its PEBS request - the same for
 * every record of a recording, so not looked up again in a drain.
 */
struct record_pebs_sink {
	const struct record_lp *l;
	struct sample_store *st;
	uint8_t idx;
};

struct record_state {
	struct record_cfg cfg;
	struct perf_count sess;
	struct record_lp lp[2];
	struct record_lp *lp_at[PERCPU_MAX];	/* percpu index -> its job, or NULL */
	struct sample_store store[PERCPU_MAX];
	const struct sample_store *stores[PERCPU_MAX];
	struct sample_event events[P4_MAX_REQUESTS];
	struct sample_run run;
	uint64_t period[P4_MAX_REQUESTS];
	uint32_t sampled;		/* the requests that take samples: a bit each */
	struct record_pebs_sink pebs_sink[2];	/* by SMT ID */
	bool valid;
};

static struct record_state rs;
static uint64_t record_gen;		/* record_generation() */
static struct trap_frame record_no_frame;	/* "no context": the final poll after the workload */
/* The sample stores' memory, taken once: nlp equal parts, one per LP. */
static struct {
	uint64_t base;
	size_t per_lp;
} arena;

const struct sample_run *record_last(void)
{
	return rs.valid ? &rs.run : NULL;
}

uint64_t record_generation(void)
{
	return record_gen;
}

size_t record_store_bytes(void)
{
	return arena.per_lp;
}

/* ---- store memory ------------------------------------------------------- */

static int record_arena(char *err, size_t n)
{
	struct mem_summary m;
	unsigned nlp = percpu_count() ? percpu_count() : 1;
	uint64_t take, pages;

	if (arena.base)
		return 0;
	mem_get_summary(&m);
	take = m.free > 2 * RECORD_KERNEL_RESERVE ? m.free - RECORD_KERNEL_RESERVE : m.free / 2;
	if (take > m.largest_free)
		take = m.largest_free;
	pages = take / MEM_PAGE_SIZE / nlp * nlp;
	if (pages < nlp || (arena.base = mem_alloc_pages((size_t)pages)) == 0)
		return ksnprintf(err, n, "no memory for the sample stores (%llu bytes free)",
				 (unsigned long long)m.free), -1;
	arena.per_lp = (size_t)(pages / nlp * MEM_PAGE_SIZE);
	return 0;
}

/* ---- the overflow hook ------------------------------------------------------ */

/*
 * Frame walker's "mapped?": present in the live page tables; a ring-3 chain
 * (ctx non-NULL) must also stay on user pages, so it stops at the user/kernel
 * boundary as a user-mode unwinder would.
 */
static bool record_mapped(void *ctx, uint64_t addr, uint64_t len)
{
	return paging_is_mapped(addr, len, ctx != NULL);
}

/*
 * A polled counter, raw = some events past its overflow: the periods that
 * ended, and in *next the reload that keeps the phase.
 */
static uint64_t record_poll_periods(struct record_state *r, const struct perf_overflow *ov,
				    uint64_t *next)
{
	uint64_t p = r->period[ov->idx], since = ov->raw & P4_COUNTER_MASK;

	if (since & BIT(39))
		since = 0;		/* not past the wrap: an unflagged overflow */
	*next = p4_counter_preset(p - since % p);
	return 1 + since / p;
}

/*
 * Double the periods of the interrupt-sampled counters the calling LP (SMT
 * ID smt) owns. A PEBS counter is not one: the assist reloads it from the
 * DS area's counter reset (PMU reference 5.2), which stays, and its records
 * weigh the period the run keeps for it; its buffer interrupts only at the
 * threshold.
 */
static void record_raise_periods(struct record_state *r, struct record_lp *l)
{
	for (unsigned i = 0; i < r->cfg.plan.n; i++) {
		if (!r->cfg.sampler[i] || r->cfg.plan.req[i].role == P4_ROLE_PEBS ||
		    r->period[i] >= P4_PERIOD_MAX ||
		    p4_cccr_pmi_lp(r->sess.plan.slot[i].cccr_value) != l->smt)
			continue;
		/* taken by the counter at its next overflow (record_overflow) */
		r->period[i] = r->period[i] * 2 > P4_PERIOD_MAX ? P4_PERIOD_MAX : r->period[i] * 2;
	}
	l->throttled++;
}

/*
 * The time LP lp has spent in its own PMI handlers and polls, less the
 * backend's own work there (the model's register accesses: a Pentium 4's
 * take one instruction each).
 */
static uint64_t record_pmi_time(unsigned lp)
{
	const struct perf_pmi_stats *p = &perf_info()->pmi;

	return p->lp_tsc[lp & 1] - p->lp_backend_tsc[lp & 1];
}

static void record_throttle(struct record_state *r, struct record_lp *l)
{
	uint64_t cost, now, span;
	bool over;

	if (r->cfg.throttle_pct >= 100 || ++l->win_n < RECORD_THROTTLE_WINDOW)
		return;
	now = perf_clock();
	span = now - l->win_t0;
	cost = record_pmi_time(l->smt) - l->win_cost0;
	over = cost * 100 > (uint64_t)r->cfg.throttle_pct * span;
	if (l->warm && over && l->over)
		record_raise_periods(r, l);
	l->over = l->warm && over && !l->over;	/* a raise starts a new pair */
	l->warm = true;
	l->win_n = 0;
	l->win_t0 = now;
	l->win_cost0 = record_pmi_time(l->smt);
}

/*
 * Where the return address is when the sample lands in a prologue or on a
 * ret (sample_prologue_ret): the function's bytes from the kernel's symbol
 * table up to the IP's instruction (the workloads run from kernel text at
 * either CPL, so the code is mapped); -1 outside known functions.
 */
static int record_ret_at(uint64_t ip)
{
	const uint8_t *code;
	uint64_t off;
	int at;

	if (!ksym_lookup(ip, &off))
		return -1;
	code = (const uint8_t *)(uintptr_t)(ip - off);
	at = sample_prologue_ret(code, off + 4, off);
	if (at < 0 && program_at(ip))		/* a program's frameless leaf */
		at = sample_leaf_ret(code, off, sizeof(uintptr_t) == 8);
	return at;
}

/*
 * The weight of the first of the k samples of one overflow: the events
 * since the counter was loaded, the PMI's own one included (the model
 * interrupts on the event after the overflow, so with -c P a sample
 * usually stands for P + 1); an interrupt's one sample takes them all
 * (record_overflow). A poll's k samples share them: every one a full
 * period but the first, which takes the rest; the events past the last
 * whole period belong to the next one (record_poll_periods).
 */
static uint64_t record_poll_weight(const struct record_state *r, const struct perf_overflow *ov,
				   uint64_t k)
{
	uint64_t p = r->period[ov->idx], w = ov->events;

	w -= (k - 1) * p;
	if (!(ov->raw & BIT(39)))
		w -= (ov->raw & P4_COUNTER_MASK) % p;
	return w == 0 || w > ov->events ? p : w;	/* never 0, whatever the counter did */
}

/*
 * The sample sink (perf_sink_fn): interrupts off, maybe in an NMI, on the LP
 * that owns counter ov->idx; f is that LP's interrupted workload (or
 * record_no_frame). Returns the counter's reload: the next period.
 */
/* The call chain of a sample whose registers are f's (record -g). */
static __attribute__((noinline)) void record_chain(struct sample *s, const struct trap_frame *f)
{
	s->nchain = (uint8_t)sample_walk_stack(f->rsp, f->rbp, record_ret_at(f->rip), s->chain,
					       SAMPLE_MAX_CHAIN, record_mapped,
					       s->cpl == 3 ? s : NULL);
}

/* A poll's k samples of one overflow: s as it is, then k - 1 of one period each. */
static __attribute__((noinline)) void record_poll_appends(struct sample_store *st,
							  struct sample *s, uint64_t period,
							  uint64_t k)
{
	sample_store_append(st, s);
	s->weight = period;
	for (uint64_t j = 1; j < k; j++)
		sample_store_append(st, s);
}

/*
 * Store s in st (k samples of a poll, record_poll_appends), timing the
 * LP's first append and every RECORD_STORE_TIMED-th after it by a stepped
 * handler's own clock: the overflow sink's and the PEBS drain's alike.
 */
static inline __attribute__((always_inline)) void
record_append(struct record_lp *l, struct sample_store *st, struct sample *s, uint64_t period,
	      uint64_t k)
{
	bool timed = !(l->store_seen++ % RECORD_STORE_TIMED);
	uint64_t t = timed ? step_handler_clock() : 0;

	if (k == 1)
		sample_store_append(st, s);
	else
		record_poll_appends(st, s, period, k);
	if (timed) {
		l->store_tsc += step_handler_clock() - t;
		l->store_n++;
	}
}

static uint64_t record_overflow(void *ctx, struct trap_frame *f, const struct perf_overflow *ov)
{
	struct record_state *r = ctx;
	unsigned me = ov->cpu, idx = ov->idx;
	struct record_lp *l = r->lp_at[me];
	struct sample_store *st = &r->store[me];
	struct sample s;
	uint64_t k = 1, next, period, w;

	if (!l || !((r->sampled >> idx) & 1u))	/* idx < plan.n: set for the plan's samplers only */
		return ov->reload;
	period = r->period[idx];
	next = p4_counter_preset(l->jit.pct ? jitter_period(&l->jit, period, P4_PERIOD_MAX) : period);
	if (r->cfg.polled[idx]) {
		k = record_poll_periods(r, ov, &next);
		w = record_poll_weight(r, ov, k);
	} else {
		w = ov->events ? ov->events : period;	/* never 0 (record_poll_weight) */
	}
	if (!f || f == &record_no_frame || !st->buf) {	/* no context: counted, not dropped */
		l->unattributed += k;
		return next;
	}
	s.ip = f->rip;
	s.rflags = f->rflags;
	if (l->job.step)
		s.rflags &= ~RFLAGS_TF;	/* the stepper's trap flag, not the workload's */
	s.rsp = f->rsp;
	s.event = (uint8_t)idx;
	s.cpl = (uint8_t)(f->cs & 3);
	s.nchain = 0;
	if (r->cfg.callchain)
		record_chain(&s, f);
	s.weight = w;
	s.tsc = rdtsc();
	record_append(l, st, &s, period, k);
	record_throttle(r, l);
	return next;
}

/* ---- PEBS: samples from the records (precise IPs) -------------------------------- */

/* The job whose LP has SMT ID lp, and the percpu index of its store; NULL when none. */
static struct record_lp *record_lp_of(const struct record_state *r, unsigned lp,
				      unsigned *store)
{
	for (unsigned idx = 0; idx < PERCPU_MAX; idx++) {
		struct record_lp *l = r->lp_at[idx];

		if (l && l->smt == lp) {
			*store = idx;
			return l;
		}
	}
	return NULL;
}

/* The kernel's text (linker.ld; arch/x86/step.c tells kernel code by it too). */
extern char _text[] __attribute__((visibility("hidden")));
extern char _etext[] __attribute__((visibility("hidden")));

/*
 * The CPL a PEBS record's instruction ran at. The record holds no CS (PMU
 * reference 5.2), so it is taken from where the IP lies: in a ring-3 run,
 * the kernel's text outside the workload pages (the counting window, the
 * handlers, the gates: supervisor-only, recorded by a :k event) ran at CPL
 * 0, and the workload pages and a program's, opened to ring 3 (user.c),
 * at CPL 3. A ring-0 run has no CPL-3 code at all. By the addresses, not
 * by the page tables: records drained after the run find the pages closed.
 */
static uint8_t record_pebs_cpl(const struct record_lp *l, uint64_t ip)
{
	bool kernel = ip >= (uintptr_t)_text && ip < (uintptr_t)_etext &&
		      (ip < (uintptr_t)__workload_text_start || ip >= (uintptr_t)__workload_text_end);

	return (l->job.ring & 3) == 3 && !kernel ? 3 : 0;
}

/*
 * One PEBS record becomes one sample of LP lp's store (ctx: its
 * record_pebs_sink): the record's linear IP, flags and stack pointer, not
 * the interrupted frame's (PMU reference 5.2), and the CPL its IP's page
 * says (record_pebs_cpl); call chains are walked from the record's RBP.
 */
static void record_pebs_sample(void *ctx, unsigned lp, const struct p4_pebs_record *rec)
{
	const struct record_pebs_sink *k = ctx;
	struct sample s;	/* every field the store keeps is set below */

	(void)lp;
	if (!k->st)
		return;
	s.tsc = rdtsc();
	s.weight = 0;		/* one period */
	s.ip = rec->reg[P4_PEBS_IP];
	s.rflags = rec->reg[P4_PEBS_FLAGS] & ~RFLAGS_TF;
	s.rsp = rec->reg[P4_PEBS_SP];
	s.event = k->idx;
	s.cpl = record_pebs_cpl(k->l, s.ip);
	s.nchain = 0;
	if (k->l->r->cfg.callchain)
		s.nchain = (uint8_t)sample_walk_frames(rec->reg[P4_PEBS_BP], s.chain, SAMPLE_MAX_CHAIN,
							record_mapped, s.cpl == 3 ? &s : NULL);
	sample_store_append(k->st, &s);
}

/* The PMI handler's hook: drain the interrupted LP's buffer; the records drained. */
static unsigned record_pebs_hook(void *ctx, unsigned lp, struct trap_frame *f)
{
	struct record_state *r = ctx;

	(void)f;
	return r->cfg.pebs_drain_end ? 0 : pebs_drain_live(&r->cfg.plan, lp, record_pebs_sample,
							    &r->pebs_sink[lp & 1]);
}

static int record_sibling(char *err, size_t n);

/* The PEBS buffers' size as pebs_prepare plans them; NULL without PEBS. */
static const struct perf_pebs_size *record_pebs_size(const struct record_state *r,
						     struct perf_pebs_size *z)
{
	z->slots = r->cfg.pebs_records ? r->cfg.pebs_records : PEBS_RECORDS_DEFAULT;
	z->threshold = z->slots - p4_ds_threshold_below(z->slots);
	return r->cfg.plan.pebs ? z : NULL;
}

/*
 * IA32_DS_AREA belongs to the LP that writes it (believed per LP, PMU
 * reference 1.3), so LP1's is written on LP1: before its PEBS counter is
 * enabled, and cleared only after the count stopped. In between, an
 * assist on LP1 (the kernel's own tagged stores count too) finds its area.
 */
#define RECORD_DS_WAIT_US	5000000u

static volatile int ds_write_status;

static void record_ds_load_fn(void *arg)
{
	(void)arg;
	ds_write_status = pebs_load(percpu_this()->topo.smt & 1);
}

static void record_ds_clear_fn(void *arg)
{
	(void)arg;
	pebs_unload();
	ds_write_status = 0;
}

static int record_ds_on_sibling(void (*fn)(void *), char *err, size_t n)
{
	int sib = record_sibling(err, n);

	if (sib < 0)
		return -1;
	ds_write_status = -1;
	if (smp_call((unsigned)sib, fn, NULL) != 0 ||
	    smp_wait_us((unsigned)sib, RECORD_DS_WAIT_US) != 0 || ds_write_status != 0)
		return ksnprintf(err, n, "PEBS: LP1 could not write its IA32_DS_AREA"), -1;
	return 0;
}

/* Availability, each PEBS LP's DS area, and the plan's promise that they are in place. */
static int record_pebs_start(struct record_state *r, char *err, size_t n)
{
	struct p4_plan *plan = &r->cfg.plan;
	unsigned me = percpu_this()->topo.smt & 1;

	pebs_release();
	pebs_reset_stats();
	if (!plan->pebs)
		return 0;
	if (pebs_check(err, n))
		return -1;
	r->pebs_sink[0].st = r->pebs_sink[1].st = NULL;	/* an LP without PEBS keeps none */
	for (unsigned i = 0; i < plan->n; i++) {
		unsigned lp = plan->req[i].lp == P4_LP1 ? 1 : 0, at = 0;
		struct record_pebs_sink *k = &r->pebs_sink[lp];

		if (plan->req[i].role != P4_ROLE_PEBS)
			continue;
		if (pebs_prepare(lp, r->cfg.pebs_records ? r->cfg.pebs_records : PEBS_RECORDS_DEFAULT,
				 plan->req[i].spec.period, err, n))
			return -1;
		k->l = record_lp_of(r, lp, &at);
		k->st = k->l && r->store[at].buf ? &r->store[at] : NULL;
		k->idx = (uint8_t)i;
	}
	/* This LP's area, and the sibling's on the sibling, before any PEBS counter runs. */
	if (pebs_armed(me) && pebs_load(me))
		return ksnprintf(err, n, "PEBS: writing IA32_DS_AREA faulted"), -1;
	if (pebs_armed(me ^ 1) && record_ds_on_sibling(record_ds_load_fn, err, n))
		return -1;
	plan->writer_lp = (uint8_t)me;
	plan->ds_area_set = true;
	perf_set_pebs_hook(record_pebs_hook, pebs_refilled, r);
	return 0;
}

/* After the count stopped: what is left in the buffers, then PEBS off for our LPs. */
static void record_pebs_stop(struct record_state *r, struct record_result *res)
{
	const struct pebs_stats *ps = pebs_stats();
	unsigned lps = 0;

	if (!r->cfg.plan.pebs)
		return;
	perf_set_pebs_hook(NULL, NULL, NULL);
	for (unsigned lp = 0; lp < PEBS_NLP; lp++) {
		if (!pebs_armed(lp))
			continue;
		pebs_drain(lp, record_pebs_sample, &r->pebs_sink[lp & 1]);
		lps |= 1u << lp;
	}
	pebs_disable(lps);
	if (pebs_armed(1)) {
		char why[64];

		record_ds_on_sibling(record_ds_clear_fn, why, sizeof(why));
	}
	pebs_release();
	pebs_unload();
	for (unsigned lp = 0; lp < PEBS_NLP; lp++) {
		res->pebs_records += ps->records[lp];
		res->pebs_drains += ps->drains[lp];
		res->pebs_full += ps->full[lp];
	}
	/*
	 * A PEBS counter is reloaded from the DS counter reset by the assist,
	 * not by the overflow path (PMU reference 5.2), so the count read at the
	 * stop is only what came after the last reload: each record stands for
	 * one period before it. Records a full buffer lost are not known, so
	 * then the total is a lower bound.
	 */
	for (unsigned i = 0; i < r->cfg.plan.n; i++) {
		const struct p4_request *q = &r->cfg.plan.req[i];
		unsigned lp = q->lp == P4_LP1 ? 1 : 0;

		if (q->role != P4_ROLE_PEBS)
			continue;
		res->counted[i] += ps->records[lp] * q->spec.period;
		res->counted_low[i] = ps->full[lp] != 0;
	}
}

/* ---- workload hooks: perf's, plus the throttle window and the last poll ---------- */

static void record_h_begin(void *ctx, uint8_t lp)
{
	struct record_lp *l = ctx;

	l->smt = lp;
	l->perf_h.begin(l->perf_h.ctx, lp);
	l->win_t0 = perf_clock();
	l->win_cost0 = record_pmi_time(lp);
}

static void record_h_end(void *ctx, uint8_t lp)
{
	struct record_lp *l = ctx;

	l->perf_h.end(l->perf_h.ctx, lp);
}

static void record_h_step(void *ctx, const struct step_info *s)
{
	struct record_lp *l = ctx;

	l->perf_h.step(l->perf_h.ctx, s);
	if (l->poll_exit && (s->next_rip == (uintptr_t)wl_ring0_return ||
			     s->next_rip == (uintptr_t)wl_user_exit))
		perf_poll(step_frame());	/* the workload's last moment: see record_tick */
}

static void record_h_synthetic(void *ctx, uint8_t lp, uint8_t cpl, const char *spec, uint64_t n)
{
	struct record_lp *l = ctx;

	l->perf_h.synthetic(l->perf_h.ctx, lp, cpl, spec, n);
}

static void record_h_fault(void *ctx, const struct step_fault *f)
{
	struct record_lp *l = ctx;

	if (l->perf_h.fault)
		l->perf_h.fault(l->perf_h.ctx, f);
}

static void record_hooks(struct record_lp *l)
{
	perf_hooks(&l->in, &l->perf_h);
	l->h = (struct workload_hooks){
		.ctx = l, .begin = record_h_begin, .end = record_h_end,
		.step = record_h_step, .synthetic = record_h_synthetic, .fault = record_h_fault,
		.open = l->perf_h.open, .shut = l->perf_h.shut, .gate_ctx = l->perf_h.gate_ctx,
	};
}

/* ---- a run ------------------------------------------------------------------- */

/*
 * A poll samples where the tick landed, as a hardware poll would: each
 * sample of the periods that ended since the previous tick carries the
 * tick's IP (polling skid). The periods that end after the workload's last
 * tick would be found only by the final poll, which has no context, and
 * be "unattributed" - with ticks every 100 us (and gaps of milliseconds
 * when TCG is descheduled) that happened in about half the runs of a short
 * workload. So a stepped LP0 job polls once more at its last step, in the
 * #DB handler with the workload's frame (RIP = its return address): those
 * periods get the workload's exit as IP, like a tick landing right there.
 * Unstepped (hardware), they stay unattributed.
 */
static void record_tick(struct trap_frame *f)
{
	perf_poll_tick(f);
}

static bool record_polling(const struct record_cfg *c)
{
	for (unsigned i = 0; i < c->plan.n; i++)
		if (c->sampler[i] && c->polled[i])
			return true;
	return false;
}

/* Some request of the plan interrupts LP1: OVF_PMI_T1, or LP1's PEBS threshold. */
static bool record_lp1_interrupts(const struct record_cfg *c)
{
	for (unsigned i = 0; i < c->plan.n; i++)
		if ((c->plan.slot[i].cccr_value & CCCR_OVF_PMI_T1) ||
		    (c->plan.req[i].role == P4_ROLE_PEBS && c->plan.req[i].lp == P4_LP1))
			return true;
	return false;
}

/* The percpu index of LP0's sibling, or -1 with err. */
static int record_sibling(char *err, size_t n)
{
	const char *why = "";
	int sib = workload_sibling(&why);

	if (sib < 0)
		return ksnprintf(err, n, "%s", why), -1;
	if (sib >= PERCPU_MAX)
		return ksnprintf(err, n, "LP0's sibling is LP index %d, past %d", sib, PERCPU_MAX), -1;
	return sib;
}

static int record_check(const struct record_cfg *c, int *sib, char *err, size_t n)
{
	const struct workload_args *a0 = c->job[0].args;

	*sib = -1;
	if (!perf_bus())
		return ksnprintf(err, n, "no PMU backend"), -1;
	if (percpu_this()->index != 0)
		return ksnprintf(err, n, "recording is started from LP0"), -1;
	if (!a0 && !c->job[1].args)
		return ksnprintf(err, n, "no workload"), -1;
	if (c->job[1].args && (*sib = record_sibling(err, n)) < 0)
		return -1;
	if (record_polling(c) && !a0)
		return ksnprintf(err, n, "the erratum path polls from LP0's LAPIC timer, and LP0 runs "
				 "no workload"), -1;
	if (c->job[1].args && c->pmi == PERF_PMI_FIXED && record_lp1_interrupts(c))
		return ksnprintf(err, n, "--vector: LP1 runs its stepped jobs with interrupts masked (IF = 0), "
				 "and a fixed-vector PMI waits for IF = 1 (SDM Vol. 3A 6.8.1): LP1 "
				 "would take no sample; sample LP1 by NMI (the default)"), -1;
	for (unsigned i = 0; i < c->plan.n; i++)
		if (c->sampler[i] && c->polled[i] && c->plan.req[i].lp != P4_LP0)
			return ksnprintf(err, n, "#%u: this part raises no PMI from a cascaded counter "
					 "and the sibling takes no timer polls (it runs with "
					 "interrupts masked): sample LP0's events (:t0) only", i), -1;
	if (record_polling(c) && (!lapic_present() || timer_lapic_hz() < RECORD_POLL_HZ))
		return ksnprintf(err, n, "the erratum path polls with the LAPIC timer, which is not "
				 "calibrated"), -1;
	if (record_polling(c) && c->jitter_pct)
		return ksnprintf(err, n, "--jitter: not on this part's polled path"), -1;
	if (record_polling(c) && a0->w->id == WL_HALT)
		return ksnprintf(err, n, "the halt workload uses the LAPIC timer that polling needs"), -1;
	if (c->plan.pebs && pebs_check(err, n))
		return -1;	/* before record_setup: a refused record keeps the last recording */
	if (record_arena(err, n))
		return -1;
	if (c->buffer > arena.per_lp)
		return ksnprintf(err, n, "--buffer: at most %zu bytes per LP", arena.per_lp), -1;
	return 0;
}

static void record_store(struct record_state *r, const struct record_cfg *c, unsigned idx,
			 uint8_t smt)
{
	void *mem = (void *)(uintptr_t)(arena.base + (uint64_t)idx * arena.per_lp);

	sample_store_init(&r->store[idx], mem, c->buffer ? c->buffer : arena.per_lp,
			  c->wrap ? SAMPLE_WRAP : SAMPLE_STOP_WHEN_FULL, smt);
	r->stores[idx] = &r->store[idx];
}

static void record_setup(struct record_state *r, const struct record_cfg *c, int sib)
{
	bool step = perf_steps_workloads();

	r->cfg = *c;
	r->valid = false;
	for (unsigned i = 0; i < PERCPU_MAX; i++) {
		r->stores[i] = NULL;
		r->lp_at[i] = NULL;
	}
	for (unsigned k = 0; k < 2; k++) {
		struct record_lp *l = &r->lp[k];
		int idx = k == 0 ? 0 : sib;

		*l = (struct record_lp){ .r = r, .k = k };
		jitter_init(&l->jit, c->seed, k, c->jitter_pct);
		record_hooks(l);
		l->job = (struct workload_job){ .a = c->job[k].args, .ring = c->job[k].ring,
						.step = step, .h = &l->h };
		if (!c->job[k].args || idx < 0)
			continue;
		l->smt = (uint8_t)percpu_get((unsigned)idx)->topo.smt;
		l->poll_exit = idx == 0 && step && record_polling(c);
		r->lp_at[idx] = l;
		record_store(r, &r->cfg, (unsigned)idx, (uint8_t)l->smt);
	}
	r->sampled = 0;
	for (unsigned i = 0; i < c->plan.n; i++) {
		r->period[i] = c->plan.req[i].spec.period;
		if (c->sampler[i])
			r->sampled |= UINT32_C(1) << i;
		r->events[i] = (struct sample_event){ .name = r->cfg.name[i], .period = r->period[i] };
	}
	r->run = (struct sample_run){
		.stores = r->stores, .nstores = percpu_count() ? percpu_count() : 1,
		.events = r->events, .nevents = c->plan.n,
		.comm = (c->job[0].args ? c->job[0].args : c->job[1].args)->w->name,
		.tsc_hz = timer_tsc_hz(),
	};
	/* with a job on each LP, each LP's samples carry its own workload's name */
	for (unsigned k = 0; k < 2; k++)
		if (c->job[k].args && (k == 0 || sib >= 0))
			r->run.lp_comm[r->lp[k].smt & 1] = c->job[k].args->w->name;
}

/*
 * The poll's tick, in the workload's own time: the backend keeps it
 * (prof/backend.h tick), so that a stepped run takes it as often as the
 * run would on a Pentium 4, stepped and counted at CPL 0 like the PMI
 * handler, where a LAPIC timer would fire by the stepping's far longer
 * time.
 */
static void record_timer(bool on)
{
	if (on) {
		idt_set_handler(LAPIC_TIMER_VECTOR, record_tick);
		perf_tick(RECORD_POLL_HZ);
	} else {
		perf_tick(0);
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
		.lp_interrupts = { b->lp_interrupts[0] - a->lp_interrupts[0],
				   b->lp_interrupts[1] - a->lp_interrupts[1] },
		.tsc_total = b->tsc_total - a->tsc_total,
		.lp_tsc = { b->lp_tsc[0] - a->lp_tsc[0], b->lp_tsc[1] - a->lp_tsc[1] },
		.backend_tsc = b->backend_tsc - a->backend_tsc,
		.lp_backend_tsc = { b->lp_backend_tsc[0] - a->lp_backend_tsc[0],
				    b->lp_backend_tsc[1] - a->lp_backend_tsc[1] },
		.by_vector = b->by_vector - a->by_vector, .by_nmi = b->by_nmi - a->by_nmi,
	};
}

static uint64_t record_median(uint64_t *v, unsigned n)
{
	struct stats_summary s;

	stats_summarise(v, n, &s);
	return (uint64_t)(s.median / STATS_SCALE);
}

/* The first job that did not end OK sets status, vector and error. */
static void record_status(const struct record_state *r, struct record_result *res)
{
	for (unsigned k = 0; k < 2; k++) {
		const struct workload_job *j = &r->lp[k].job;

		res->job_status[k] = j->a ? (int)j->res.status : -1;
		res->job_lp[k] = (uint8_t)r->lp[k].smt;
		if (!j->a || j->res.status == WORKLOAD_OK || res->status != WORKLOAD_OK)
			continue;
		res->status = (int)j->res.status;
		res->fault_vector = j->res.fault_vector;
		if (j->res.status == WORKLOAD_INTERRUPTED)	/* Ctrl-C, or a program's limit */
			workload_stop_reason(&j->res, res->error, sizeof(res->error));
		else
			ksnprintf(res->error, sizeof(res->error), "%s", j->res.error);
	}
}

static void record_finish(struct record_state *r, struct record_result *res,
			  const struct perf_pmi_stats *before)
{
	record_status(r, res);
	sample_run_totals(&r->run, &res->totals);
	for (unsigned k = 0; k < 2; k++) {
		const struct record_lp *l = &r->lp[k];

		for (unsigned idx = 0; idx < PERCPU_MAX; idx++)
			if (r->lp_at[idx] == l)
				res->lp_stored[k] = r->store[idx].stored;
		res->unattributed += l->unattributed;
		res->throttled += l->throttled;
		res->lp_throttled[k] = l->throttled;
		res->store_tsc += l->store_tsc;
		res->store_n += l->store_n;
		res->steps += l->in.steps;
	}
	for (unsigned i = 0; i < r->cfg.plan.n; i++) {
		res->period[i] = r->period[i];
		r->events[i].period = r->period[i];	/* the period at the end */
	}
	res->polling = record_polling(&r->cfg);
	record_pmi_delta(&res->pmi, before, &perf_info()->pmi);
	for (unsigned idx = 0; idx < PERCPU_MAX; idx++)
		if (r->stores[idx])
			res->buffer = r->store[idx].cap * 8;
}

/* Both jobs (workload_run_lps wants them side by side); -1 when LP1's could not start. */
static int record_jobs(struct record_state *r)
{
	struct workload_job jobs[2] = { r->lp[0].job, r->lp[1].job };
	int ret = workload_run_lps(jobs, r->cfg.stagger ? WORKLOAD_LP1_AFTER : WORKLOAD_TOGETHER);

	r->lp[0].job.res = jobs[0].res;
	r->lp[1].job.res = jobs[1].res;
	return ret;
}

int record_run(const struct record_cfg *cfg, struct record_result *res, char *err, size_t n)
{
	struct record_state *r = &rs;
	struct perf_pmi_stats before = (perf_take_pending(), perf_info()->pmi);
	enum perf_pmi_mode mode = perf_info()->pmi_mode;
	bool polling = record_polling(cfg), irq = cfg->pmi == PERF_PMI_FIXED || polling;
	uint64_t flags = read_rflags(), t0;
	int sib, lps;

	*res = (struct record_result){ .fault_vector = -1, .job_status = { -1, -1 } };
	if (record_check(cfg, &sib, err, n))
		return -1;
	record_setup(r, cfg, sib);
	perf_set_pmi_mode(cfg->pmi);
	perf_set_sink(record_overflow, r);
	if (cfg->inject_stuck_ovf &&
	    perf_inject_fault(PERF_FAULT_STUCK_OVF, (UINT32_C(1) << P4_NCOUNTER) - 1, err, n)) {
		perf_set_sink(NULL, NULL);
		perf_set_pmi_mode(mode);
		return -1;
	}
	/* One LP's workload: the counters count from its runner's gate (perf_count_arm). */
	if (record_pebs_start(r, err, n) ||
	    (!r->lp[0].job.a || !r->lp[1].job.a ? perf_count_arm : perf_count_start)(
		    &r->sess, &r->cfg.plan, PERF_RELOAD_DEFAULT, err, n)) {
		if (cfg->inject_stuck_ovf)
			perf_inject_fault(PERF_FAULT_STUCK_OVF, 0, err, n);
		record_pebs_stop(r, res);
		perf_set_sink(NULL, NULL);
		perf_set_pmi_mode(mode);
		return -1;
	}
	if ((cfg->inject_unflagged || cfg->inject_n15) &&
	    perf_inject(cfg->inject_unflagged, cfg->inject_n15, err, n)) {
		perf_count_stop(&r->sess, NULL);
		perf_set_sink(NULL, NULL);
		perf_set_pmi_mode(mode);
		return -1;
	}
	t0 = rdtsc();
	r->run.tsc_start = t0;
	if (polling)
		record_timer(true);
	if (irq)
		cpu_sti();	/* LP0's workload runs with IF = 1; the sibling's never does (smp.h) */
	lps = record_jobs(r);
	if (!(flags & RFLAGS_IF))
		cpu_cli();
	res->tsc_cycles = rdtsc() - t0;
	if (polling) {
		record_timer(false);
		perf_poll(&record_no_frame);	/* periods that ended after the last tick */
	}
	perf_count_stop(&r->sess, res->counted);
	if (cfg->inject_stuck_ovf) {		/* the fault lasts one run; OVF is then cleared */
		char ignored[8];

		perf_inject_fault(PERF_FAULT_STUCK_OVF, 0, ignored, sizeof(ignored));
		p4_stop(perf_bus(), &r->sess.plan, &(struct p4_apply_result){ 0 });
	}
	record_pebs_stop(r, res);
	perf_set_sink(NULL, NULL);
	perf_set_pmi_mode(mode);
	record_finish(r, res, &before);
	if (perf_machine_fault(err, n)) {	/* a real machine would not have come back */
		r->valid = false;
		record_gen++;
		return -1;
	}
	if (r->sess.storm) {		/* its samples stand for no period: not a recording */
		perf_storm_text(&r->sess, p4_events[r->cfg.plan.req[r->sess.storm_idx].spec.event].name,
				record_pebs_size(r, &(struct perf_pebs_size){ 0 }), err, n);
		r->valid = false;
		record_gen++;
		return -1;
	}
	if (lps < 0 && res->status == WORKLOAD_OK) {
		res->status = WORKLOAD_REFUSED;
		ksnprintf(res->error, sizeof(res->error), "%s", r->lp[1].job.res.error);
	}
	r->valid = res->status != WORKLOAD_REFUSED;
	record_gen++;
	return 0;
}

/* ---- the floor of the overflow path -------------------------------------------- */

/*
 * The register accesses of one overflow that no handler can avoid (counter
 * 0, left disabled): the CCCR's OVF and the counter read, the counter
 * stopped and read again (O8, O9), written twice and read back (N15: the
 * double write is the erratum's workaround, and the PMU reference records that
 * it did not always help, so only a read-back makes a count exact),
 * restarted, the LVT PC unmasked and the EOI.
 */
static void record_floor_regs(void)
{
	uint64_t v;

	msr_read_safe(MSR_BPU_CCCR0, &v);
	msr_read_safe(MSR_BPU_COUNTER0, &v);
	msr_write_safe(MSR_BPU_CCCR0, 0);
	msr_read_safe(MSR_BPU_COUNTER0, &v);
	msr_write_safe(MSR_BPU_COUNTER0, 0);
	msr_write_safe(MSR_BPU_COUNTER0, 0);
	msr_read_safe(MSR_BPU_COUNTER0, &v);
	msr_write_safe(MSR_BPU_CCCR0, 0);
	lapic_write(LAPIC_LVT_PMC, lapic_read(LAPIC_LVT_PMC) | LAPIC_LVT_MASKED);
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
	sample_store_init(&st, buf, sizeof(buf), SAMPLE_STOP_WHEN_FULL, 0);
	for (unsigned i = 0; i < n; i++) {
		uint64_t a, b, c;

		/*
		 * An empty store each time: the handler's append into record's
		 * store (stop when full, room to spare), not one that must first
		 * evict the oldest record, as a small wrapping store would.
		 */
		sample_store_reset(&st);
		a = rdtsc();

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
