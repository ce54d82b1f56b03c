/*
 * test_perf.c - prof/perf.c, the overflow path every backend shares, on the
 * host: the real model behind a test backend whose bus can let events (and
 * an NMI) arrive between two register accesses, two simulated logical
 * processors with a local APIC each, and the handlers perf.c installs.
 *
 * The hardware-path defects of the one-path change, as scenarios:
 * - H5: events that arrive while the handler runs, between its counter read
 *   and its stop, are counted;
 * - H4: an NMI that lands inside a count's stop does not corrupt the totals;
 * - H2: the sibling's LVT PC is unmasked (by the sibling itself) when its
 *   workload begins, whichever backend is in use;
 * and the one-way path: the sink is called once per overflow and its return
 * value is what the counter is reloaded with.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "arch/x86/console.h"
#include "arch/x86/cpu.h"
#include "arch/x86/idt.h"
#include "arch/x86/lapic.h"
#include "arch/x86/percpu.h"
#include "arch/x86/step.h"
#include "arch/x86/timer.h"
#include "arch/x86/user.h"
#include "lib/printf.h"
#include "pmu/model/p4_model.h"
#include "pmu/p4_alloc.h"
#include "pmu/p4_apply.h"
#include "pmu/p4_encode.h"
#include "pmu/p4_regs.h"
#include "pmu/p4_spec.h"
#include "prof/backend.h"
#include "prof/pebs.h"
#include "prof/perf.h"
#include "prof/storm.h"

/* ---- two logical processors with a local APIC each ----------------------------- */

static struct percpu lps[2];
static unsigned cur;			/* the LP "running" now */
static uint32_t lvt_pc[2];		/* each LP's real LVT PC register */
static trap_handler_fn handlers[256];
bool percpu_gs_ready;			/* false: percpu_this() asks percpu_boot() */

struct percpu *percpu_boot(void)
{
	return &lps[cur];
}

unsigned percpu_count(void)
{
	return 2;
}

struct percpu *percpu_get(unsigned index)
{
	return index < 2 ? &lps[index] : NULL;
}

bool lapic_present(void)
{
	return true;
}

uint64_t timer_tsc_hz(void)		/* the poll tick's period in TSC cycles (perf_tick) */
{
	return 3000000000u;
}

bool lapic_irr_pending(uint8_t vector)
{
	return false;
}

void lapic_write(enum lapic_reg reg, uint32_t v)
{
	if (reg == LAPIC_LVT_PMC)
		lvt_pc[cur] = v;
}

void idt_set_handler(uint8_t vector, trap_handler_fn fn)
{
	handlers[vector] = fn;
}

uint32_t isr_exit_pending;	/* idt_exit_call_on's (arch/x86/idt.h): LPs with an exit call */

void idt_exit_call(void (*fn)(void))
{
	idt_exit_call_on(percpu_this(), fn);
}

/* The calling LP's exit call, run at the end of interrupt() (isr_common's). */
void idt_exit_call_now(void)
{
	struct percpu *pc = percpu_this();
	void (*fn)(void) = (void (*)(void))(uintptr_t)pc->exit_fn;

	if (!fn)
		return;
	pc->exit_fn = 0;
	isr_exit_pending--;
	fn();
}

/* An interrupt on vector v, as isr_common takes it: the handler, then its exit call. */
static void interrupt(unsigned v, struct trap_frame *f)
{
	handlers[v](f);
	idt_exit_call_now();
}

struct trap_frame *step_frame(void)
{
	return NULL;
}

volatile uint32_t step_handlers_stepped;	/* no handler stepped: step_handler_clock is the TSC */

uint64_t step_handler_clock_stepped(void)
{
	fail();		/* reached only with step_handlers_stepped set */
	return 0;
}

static unsigned step_quiets;	/* step_quiet calls: the storm guard's word to the step engine */

void step_quiet(void)
{
	step_quiets++;
}

uint64_t step_hold(void)
{
	return 0;
}

void step_release(uint64_t flags)
{
	(void)flags;
}

void step_seam_glue(const void *fn)
{
	(void)fn;		/* nothing is stepped here */
}

struct trap_frame *user_gate_frame(void)
{
	return NULL;
}

struct trap_frame *step_frame_of(unsigned cpu)
{
	(void)cpu;
	return NULL;
}

struct trap_frame *step_handler_frame_of(unsigned cpu)
{
	(void)cpu;
	return NULL;
}

struct trap_frame *user_gate_frame_of(unsigned cpu)
{
	(void)cpu;
	return NULL;
}

void cpu_identify(struct cpu_info *out)
{
	memset(out, 0, sizeof(*out));
	out->display_family = 0x0f;
	out->display_model = 4;
	out->stepping = 1;
	out->is_netburst = true;
	out->threads_per_core = 2;
	out->ds = true;
}

int kprintf(const char *fmt, ...)
{
	return 0;
}

/* ---- a backend: the model, with something to happen during a bus access ---------- */

static struct p4_model model;
static bool enable_hidden;		/* the model's reading of a cascade start */
static unsigned pmi_requests[2];
static void (*during)(uint32_t msr);	/* called before a bus access, once */
static bool during_writes_only;		/* ... before a register write only */

static void raise(struct p4_model *m, unsigned lp, void *ctx)
{
	pmi_requests[lp]++;
}

static void maybe_during(uint32_t msr)
{
	void (*fn)(uint32_t) = during;

	if (fn) {
		during = NULL;
		fn(msr);
	}
}

static int test_read(struct msr_bus *bus, uint32_t msr, uint64_t *v)
{
	if (!during_writes_only)
		maybe_during(msr);
	p4_model_set_bus_lp(&model, cur);
	return msr_bus_read(&model.bus, msr, v);
}

/* Every write of the test bus, in order (wlog_n counts past the end too). */
#define WLOG_MAX	64
struct wlog_entry {
	uint32_t msr;
	uint64_t value;
	unsigned lp;
};
static struct wlog_entry wlog[WLOG_MAX];
static unsigned wlog_n;

static bool uncore_faults;		/* writes to the uncore registers fault (a part without them) */

static int test_write(struct msr_bus *bus, uint32_t msr, uint64_t v)
{
	maybe_during(msr);
	if (wlog_n < WLOG_MAX)
		wlog[wlog_n] = (struct wlog_entry){ msr, v, cur };
	wlog_n++;
	p4_model_set_bus_lp(&model, cur);
	if (uncore_faults && msr >= MSR_P4_UNCORE_FIRST && msr < MSR_P4_UNCORE_FIRST + P4_UNC_NREG)
		return MSR_BUS_EFAULT;
	return msr_bus_write(&model.bus, msr, v);
}

static struct msr_bus test_bus = { .read = test_read, .write = test_write };

static int test_select(const struct p4_sig *sig, bool ht, struct p4_caps *caps, char *err, size_t n)
{
	struct p4_model_config cfg = { .sig = *sig, .ht = ht, .raise_pmi = raise,
				       .cascade_enable_hidden = enable_hidden, .uncore = true,
				       .mem = pebs_mem };

	if (!p4_caps_lookup(sig, caps) || p4_model_init(&model, &cfg))
		return -1;
	p4_model_set_active(&model, 0, true);
	p4_model_set_active(&model, 1, true);
	*caps = model.caps;
	return 0;
}

static struct msr_bus *test_get_bus(void)
{
	return &test_bus;
}

static enum perf_source test_source(enum p4_event ev, const struct perf_inputs *in)
{
	return PERF_SOURCE_STEP;
}

static void test_describe(char *buf, size_t n)
{
	buf[0] = '\0';
}

static unsigned tick_rate;		/* the backend's tick (perf_tick): its last rate */

static void test_tick(unsigned hz)
{
	tick_rate = hz;
}

const struct perf_backend_ops perf_backend_model = {
	.name = "model", .steps_workloads = true, .select = test_select, .bus = test_get_bus,
	.source = test_source, .tick = test_tick, .describe = test_describe,
};

static int hw_refuse(const struct p4_sig *sig, bool ht, struct p4_caps *caps, char *err, size_t n)
{
	return ksnprintf(err, n, "no hardware PMU on the host"), -1;
}

enum p4_probe_verdict perf_hw_probe(char *why, size_t n)
{
	return ksnprintf(why, n, "not probed on the host"), P4_PROBE_ABSENT;
}

const struct perf_backend_ops perf_backend_hw = {
	.name = "hardware", .select = hw_refuse, .bus = test_get_bus, .source = test_source,
	.describe = test_describe,
};

/* ---- helpers ------------------------------------------------------------------------ */

static struct trap_frame frame;
static unsigned sinks;
static uint64_t sink_reload;		/* 0: return ov->reload */

static uint64_t sink(void *ctx, struct trap_frame *f, const struct perf_overflow *ov)
{
	sinks++;
	return sink_reload ? sink_reload : ov->reload;
}

static void instr(unsigned lp, uint64_t n)
{
	p4_model_event(&model, lp, 3, P4_EV_INSTR_RETIRED, P4_EVMASK(P4_INSTR_RETIRED_NBOGUSNTAG), n);
}

/*
 * A plan of one instr_retired counter for lp, sampling every period events
 * (0: counting), at :u: periods this short counted at CPL 0 are refused
 * (pmu/p4_alloc.h P4_PMI_TAIL_MAX), and instr() feeds CPL 3.
 */
static struct p4_plan plan_of(unsigned lp, uint64_t period)
{
	const struct perf_info *pi = perf_info();
	struct p4_alloc_ctx ctx = { &pi->caps, pi->ht, P4_SPLIT_GLOBAL };
	struct p4_request r = { 0 };
	struct p4_spec_error serr;
	struct p4_alloc_error err;
	struct p4_plan plan;

	assert_int_equal(p4_spec_parse(lp ? "instr_retired:t1:u" : "instr_retired:t0:u", &pi->caps,
				       &r.spec, &serr), 0);
	r.spec.period = period;
	r.lp = lp ? P4_LP1 : P4_LP0;
	r.pmi = lp ? P4_PMI_LP1 : P4_PMI_LP0;
	if (p4_alloc_plan(&ctx, &r, 1, &plan, &err))
		fail_msg("%s", err.msg);
	return plan;
}

static int setup(void **state)
{
	char err[96];

	memset(lps, 0, sizeof(lps));
	lps[0].index = 0;
	lps[1].index = 1;
	lps[1].topo.smt = 1;
	cur = 0;
	lvt_pc[0] = lvt_pc[1] = LAPIC_LVT_MASKED;
	during = NULL;
	during_writes_only = false;
	uncore_faults = false;
	sinks = 0;
	sink_reload = 0;
	pmi_requests[0] = pmi_requests[1] = 0;
	wlog_n = 0;
	pebs_release();
	perf_init();
	assert_int_equal(perf_select_model(&(struct p4_sig){ 0x0f, 4, 1 }, true, err, sizeof(err)), 0);
	perf_set_sink(sink, NULL);
	return 0;
}

static void pmi(void)
{
	interrupt(LAPIC_PMI_VECTOR, &frame);
}

/* ---- H5: events during the handler ---------------------------------------------------- */

static void five_more(uint32_t msr)
{
	instr(0, 5);
}

static void events_during_the_handler_are_counted(void **state)
{
	static struct perf_count s;
	struct p4_plan plan = plan_of(0, 100);
	uint64_t total = 0;
	char err[96];

	assert_int_equal(perf_count_start(&s, &plan, PERF_RELOAD_DEFAULT, err, sizeof(err)), 0);
	instr(0, 101);			/* overflow on the 100th; the PMI is due */
	assert_true(pmi_requests[0] > 0);
	/* 5 events arrive after the handler has read the counter, before it stops it */
	during = five_more;
	during_writes_only = true;
	pmi();
	assert_int_equal(sinks, 1);
	instr(0, 10);
	perf_count_stop(&s, &total);
	assert_int_equal(total, 101 + 5 + 10);
}

/*
 * Two samplers that overflow on one PMI restart at its exit, the one that
 * counts CPL 0 last (its tail then holds only the way out, pmu/p4_alloc.h
 * P4_PMI_TAIL_MAX): the request order does not matter.
 */
static void restarts_leave_the_cpl0_sampler_last(void **state)
{
	static const char *const specs[2][2] = {
		{ "instr_retired:t0:u:k", "instr_retired:t0:u" },
		{ "instr_retired:t0:u", "instr_retired:t0:u:k" },
	};
	const struct perf_info *pi = perf_info();
	struct p4_alloc_ctx ctx = { &pi->caps, pi->ht, P4_SPLIT_GLOBAL };

	(void)state;
	for (unsigned order = 0; order < 2; order++) {
		static struct perf_count s;
		const struct perf_restarts *rs = &s.restarts[0];
		struct p4_request r[2];
		struct p4_spec_error serr;
		struct p4_alloc_error aerr;
		struct p4_plan plan;
		unsigned k = order == 0 ? 0 : 1, u = 1 - k, last = 0, nlast = 0;
		char err[96];

		memset(r, 0, sizeof(r));
		for (unsigned i = 0; i < 2; i++) {
			assert_int_equal(p4_spec_parse(specs[order][i], &pi->caps, &r[i].spec, &serr), 0);
			r[i].spec.period = 100;
			r[i].lp = P4_LP0;
			r[i].pmi = P4_PMI_LP0;
		}
		if (p4_alloc_plan(&ctx, r, 2, &plan, &aerr))
			fail_msg("%s", aerr.msg);
		assert_int_equal(perf_count_start(&s, &plan, PERF_RELOAD_DEFAULT, err, sizeof(err)), 0);
		sinks = 0;
		instr(0, 100);		/* both overflow on the 100th */
		wlog_n = 0;
		pmi();
		assert_int_equal(sinks, 2);
		/* the exit's CCCR writes that restart them: the :u one, then the :u:k one */
		for (unsigned w = 0; w < wlog_n && w < WLOG_MAX; w++)
			if (wlog[w].value == rs->on[0] && wlog[w].msr == rs->msr[0])
				last = 1, nlast++;
			else if (wlog[w].value == rs->on[1] && wlog[w].msr == rs->msr[1])
				last = 2, nlast++;
		assert_int_equal(nlast, 2);
		assert_int_equal(last, 2);
		assert_int_equal(rs->n, 2);
		assert_int_equal(rs->idx[0], u);
		assert_int_equal(rs->idx[1], k);
		assert_int_equal(rs->msr[1], p4_counters[plan.slot[k].counter].cccr_msr);
		assert_int_equal(s.restarts[1].n, 0);	/* LP1 scans nothing */
		perf_count_stop(&s, NULL);
	}
}

/* A PMI, and how often its exit restarted each of two requests (seen[request]). */
static void pmi_restarts(const struct perf_restarts *rs, unsigned seen[2])
{
	wlog_n = 0;
	seen[0] = seen[1] = 0;
	pmi();
	for (unsigned w = 0; w < wlog_n && w < WLOG_MAX; w++)
		for (unsigned j = 0; j < rs->n; j++)
			if (wlog[w].value == rs->on[j] && wlog[w].msr == rs->msr[j])
				seen[rs->idx[j]]++;
}

/*
 * Of two samplers on one LP, the one that overflowed alone restarts at the
 * exit, and only it: the other was never stopped. Then both at once, from
 * the list worked out at the start.
 */
static void the_exit_restarts_only_what_overflowed(void **state)
{
	const struct perf_info *pi = perf_info();
	struct p4_alloc_ctx ctx = { &pi->caps, pi->ht, P4_SPLIT_GLOBAL };
	static struct perf_count s;
	struct p4_request r[2];
	struct p4_spec_error serr;
	struct p4_alloc_error aerr;
	struct p4_plan plan;
	const struct perf_restarts *rs = &s.restarts[0];
	unsigned seen[2];
	char err[96];

	(void)state;
	memset(r, 0, sizeof(r));
	for (unsigned i = 0; i < 2; i++) {
		assert_int_equal(p4_spec_parse("instr_retired:t0:u", &pi->caps, &r[i].spec, &serr), 0);
		r[i].spec.period = 100 * (i + 1);	/* the first overflows on the 100th, the second on the 200th */
		r[i].lp = P4_LP0;
		r[i].pmi = P4_PMI_LP0;
	}
	if (p4_alloc_plan(&ctx, r, 2, &plan, &aerr))
		fail_msg("%s", aerr.msg);
	assert_int_equal(perf_count_start(&s, &plan, PERF_RELOAD_DEFAULT, err, sizeof(err)), 0);
	assert_int_equal(rs->n, 2);
	sinks = 0;
	instr(0, 100);
	pmi_restarts(rs, seen);
	assert_int_equal(sinks, 1);
	assert_int_equal(seen[0], 1);
	assert_int_equal(seen[1], 0);
	instr(0, 100);		/* the first's second period and the second's first */
	pmi_restarts(rs, seen);
	assert_int_equal(sinks, 3);
	assert_int_equal(seen[0], 1);
	assert_int_equal(seen[1], 1);
	perf_count_stop(&s, NULL);
}

/* perf_count_arm: nothing counts until the gate opens, nothing after it shuts; a PMI after it
 * leaves the counter stopped, and the stop still finds its overflow. */
static void the_gate_counts_only_between_open_and_shut(void **state)
{
	static struct perf_count s;
	struct p4_plan plan = plan_of(0, 100);
	struct workload_hooks h;
	struct perf_inputs in;
	uint64_t total = 0;
	char err[96];

	perf_hooks(&in, &h);
	assert_int_equal(perf_count_arm(&s, &plan, PERF_RELOAD_DEFAULT, err, sizeof(err)), 0);
	instr(0, 1000);			/* armed: not counted */
	h.open(h.gate_ctx);
	instr(0, 150);			/* one overflow, 50 after it */
	assert_true(pmi_requests[0] > 0);
	h.shut(h.gate_ctx);
	instr(0, 1000);			/* shut: not counted */
	pmi();				/* the PMI comes after the shut */
	assert_int_equal(sinks, 1);
	instr(0, 1000);			/* the handler did not restart it */
	perf_count_stop(&s, &total);
	assert_int_equal(total, 150);
}

static struct trap_frame *sink_frame;
static uint64_t sink_rip;

static uint64_t frame_sink(void *ctx, struct trap_frame *f, const struct perf_overflow *ov)
{
	sinks++;
	sink_frame = f;
	sink_rip = f ? f->rip : 0;
	return ov->reload;
}

/* ---- H4: an NMI inside a count's stop ---------------------------------------------------- */

static void overflow_and_nmi(uint32_t msr)
{
	instr(0, 3);			/* 49 + 3: the counter overflows now */
	interrupt(VEC_NMI, &frame);	/* and its NMI lands in the middle of the stop */
}

static void nmi_during_stop_keeps_the_totals(void **state)
{
	static struct perf_count s;
	struct p4_plan plan = plan_of(0, 50);
	uint64_t total = 0;
	char err[96];

	uint64_t nmis = perf_info()->pmi.lp_interrupts[0];

	perf_set_pmi_mode(PERF_PMI_NMI);
	assert_int_equal(perf_count_start(&s, &plan, PERF_RELOAD_DEFAULT, err, sizeof(err)), 0);
	instr(0, 49);
	during = overflow_and_nmi;
	perf_count_stop(&s, &total);
	assert_int_equal(total, 52);
	assert_false(s.running);
	/* the stop found the overflow itself (its sink call once); the NMI, taken once the
	 * stop had finished, had nothing left to handle */
	assert_int_equal(perf_info()->pmi.lp_interrupts[0], nmis + 1);
	assert_int_equal(sinks, 1);
}

/*
 * Item 2: a fixed-vector PMI is held while its LP runs with IF = 0 (SDM Vol.
 * 3A 6.8.1), possibly until the count has stopped. The stop finds the
 * overflow itself: its events are in the total and its sample reaches the
 * sink, not lost, as the stop's: a late PMI would have landed in the code
 * that stopped the counter (perf_count_stop; the gate's shut for an armed
 * count), so that is its IP.
 */
static void held_pmi_is_found_at_the_stop(void **state)
{
	static struct perf_count s;
	struct p4_plan plan = plan_of(0, 100);
	uint64_t total = 0;
	char err[96];

	perf_set_sink(frame_sink, NULL);
	sink_frame = &frame;
	assert_int_equal(perf_count_start(&s, &plan, PERF_RELOAD_DEFAULT, err, sizeof(err)), 0);
	instr(0, 150);			/* overflow on the 100th; its PMI never taken */
	perf_count_stop(&s, &total);
	assert_int_equal(total, 150);
	assert_int_equal(sinks, 1);
	assert_non_null(sink_frame);
	assert_int_equal(sink_rip, (uint64_t)(uintptr_t)perf_count_stop);
}

/* ---- H2: each LP unmasks its own LVT PC ------------------------------------------------------ */

static void sibling_programs_its_own_lvt_pc(void **state)
{
	static struct perf_count s;
	struct p4_plan plan = plan_of(1, 100);
	struct perf_inputs in;
	struct workload_hooks h;
	char err[96];

	perf_set_pmi_mode(PERF_PMI_NMI);
	assert_int_equal(perf_count_start(&s, &plan, PERF_RELOAD_DEFAULT, err, sizeof(err)), 0);
	/* LP0 started the count: its own entry is live, LP1's is not touched from LP0 */
	assert_int_equal(lvt_pc[0], LAPIC_LVT_DELIVERY_NMI);
	assert_int_equal(lvt_pc[1], LAPIC_LVT_MASKED);
	/* LP1 begins its workload and writes its own entry */
	perf_hooks(&in, &h);
	cur = 1;
	h.begin(h.ctx, 1);
	assert_int_equal(lvt_pc[1], LAPIC_LVT_DELIVERY_NMI);
	/* its PMI is handled on LP1 and unmasks LP1's entry again after the auto-mask */
	instr(1, 101);
	lvt_pc[1] |= LAPIC_LVT_MASKED;		/* what the processor does on delivery */
	interrupt(VEC_NMI, &frame);
	assert_int_equal(sinks, 1);
	assert_int_equal(lvt_pc[1], LAPIC_LVT_DELIVERY_NMI);
	assert_int_equal(perf_info()->pmi.lp_interrupts[1], 1);
	cur = 0;
	perf_count_stop(&s, NULL);
}

/* ---- the one-way path: the sink's return is the reload ------------------------------------------ */

static void sink_return_is_the_next_period(void **state)
{
	static struct perf_count s;
	struct p4_plan plan = plan_of(0, 100);
	uint64_t total = 0, raw = 0;
	char err[96];

	assert_int_equal(perf_count_start(&s, &plan, PERF_RELOAD_DEFAULT, err, sizeof(err)), 0);
	sink_reload = p4_counter_preset(30);
	instr(0, 101);
	pmi();
	assert_int_equal(sinks, 1);
	assert_int_equal(p4_counter_read(perf_bus(), plan.slot[0].counter, &raw), 0);
	assert_int_equal(raw, p4_counter_preset(30));
	instr(0, 31);			/* the next overflow comes after 30 */
	pmi();
	assert_int_equal(sinks, 2);
	perf_count_stop(&s, &total);
	assert_int_equal(total, 101 + 31);
}

/*
 * The erratum path's poll (perf_poll, from the backend's tick: the hardware
 * backend's LAPIC timer): an overflow it finds is sampled once and the
 * counter reloaded and restarted right there, for no interrupt exit
 * follows a tick's poll that would restart it. A poll that finds none
 * writes nothing; the totals hold every event either way.
 */
static void poll_finds_an_overflow_and_restarts_in_place(void **state)
{
	static struct perf_count s;
	struct p4_plan plan = plan_of(0, 100);
	const struct p4_counter_desc *d = &p4_counters[plan.slot[0].counter];
	uint64_t total = 0, raw = 0, cccr = 0, polls0 = perf_pmi_stats()->polls;
	bool loaded = false, restarted = false;
	char err[96];

	(void)state;
	assert_int_equal(perf_count_start(&s, &plan, PERF_RELOAD_DEFAULT, err, sizeof(err)), 0);
	instr(0, 40);
	wlog_n = 0;
	perf_poll(&frame);		/* nothing overflowed */
	assert_int_equal(sinks, 0);
	assert_int_equal(wlog_n, 0);
	sink_reload = p4_counter_preset(30);
	instr(0, 61);			/* the 100th event and one more */
	perf_poll(&frame);
	assert_int_equal(sinks, 1);
	assert_int_equal(perf_pmi_stats()->polls - polls0, 2);
	assert_int_equal(lps[0].exit_fn, 0);	/* nothing left for an exit */
	for (unsigned w = 0; w < wlog_n && w < WLOG_MAX; w++) {
		loaded |= wlog[w].msr == d->msr && wlog[w].value == p4_counter_preset(30);
		restarted |= loaded && wlog[w].msr == d->cccr_msr &&
			     wlog[w].value == p4_cccr_restart(&s.plan, 0);
	}
	assert_true(loaded);
	assert_true(restarted);		/* after the load, not before */
	assert_int_equal(p4_counter_read(perf_bus(), plan.slot[0].counter, &raw), 0);
	assert_int_equal(raw, p4_counter_preset(30));
	assert_int_equal(msr_bus_read(perf_bus(), d->cccr_msr, &cccr), 0);
	assert_true(cccr & CCCR_ENABLE);
	assert_false(cccr & CCCR_OVF);
	instr(0, 31);			/* counted after the restart: the next overflow */
	perf_poll(&frame);
	assert_int_equal(sinks, 2);
	perf_count_stop(&s, &total);
	assert_int_equal(total, 40 + 61 + 31);
}

/* ---- F13: an NMI deferred under the PMU lock still reaches the sink ----------------------- */

/*
 * The counter overflows and its NMI lands while this LP holds the PMU lock
 * (a model call, a poll): the handler runs at perf_unlock, without the
 * workload's frame. The overflow must reach the sink (with f NULL, which
 * record counts as unattributed), not vanish.
 */
static void deferred_nmi_reaches_the_sink(void **state)
{
	static struct perf_count s;
	struct p4_plan plan = plan_of(0, 100);
	uint64_t total = 0;
	char err[96];

	perf_set_pmi_mode(PERF_PMI_NMI);
	perf_set_sink(frame_sink, NULL);
	sink_frame = &frame;
	assert_int_equal(perf_count_start(&s, &plan, PERF_RELOAD_DEFAULT, err, sizeof(err)), 0);
	perf_lock();
	instr(0, 101);
	interrupt(VEC_NMI, &frame);	/* deferred: this LP holds the lock */
	assert_int_equal(sinks, 0);
	perf_unlock();			/* handled now, with no frame */
	assert_int_equal(sinks, 1);
	assert_null(sink_frame);
	perf_count_stop(&s, &total);
	assert_int_equal(total, 101);
}

/* ---- F6: a cascaded sampler under both readings of a cascade start ------------------------ */

/*
 * Counter 12 (instr_retired, period 10, no PMI) starts counter 14 (instr
 * retired too, sampling every 50) on its first overflow (SDM 18.15.5.6,
 * bit 30). Counter 14's overflows are handled and it is restarted; its
 * total must be every event after the start, whether the start set its
 * Enable bit (SDM Example 18-1 "automatically enabled") or left the CCCR
 * reading as written.
 */
/*
 * Start a count of two LP0 requests, a starter without a PMI and its
 * cascaded partner (partner_pmi), planned as stat plans them.
 */
static void cascade_start(struct perf_count *s, const char *starter, const char *partner,
			  enum p4_pmi partner_pmi)
{
	const struct perf_info *pi = perf_info();
	struct p4_alloc_ctx ctx = { &pi->caps, pi->ht, P4_SPLIT_GLOBAL };
	struct p4_request r[2];
	struct p4_spec_error serr;
	struct p4_alloc_error aerr;
	static struct p4_plan plan;
	char err[96];

	memset(r, 0, sizeof(r));
	assert_int_equal(p4_spec_parse(starter, &pi->caps, &r[0].spec, &serr), 0);
	assert_int_equal(p4_spec_parse(partner, &pi->caps, &r[1].spec, &serr), 0);
	r[0].lp = r[1].lp = P4_LP0;
	r[0].pmi = P4_PMI_NONE;
	r[1].pmi = partner_pmi;
	r[1].role = P4_ROLE_CASCADE;
	r[1].started_by = 0;
	if (p4_alloc_plan(&ctx, r, 2, &plan, &aerr))
		fail_msg("%s", aerr.msg);
	assert_non_null(plan.slot[1].link);
	assert_int_equal(perf_count_start(s, &plan, PERF_RELOAD_DEFAULT, err, sizeof(err)), 0);
}

static void cascaded_sampler_runs_on(bool hidden)
{
	static struct perf_count s;
	uint64_t total[2] = { 0, 0 };

	enable_hidden = hidden;
	setup(NULL);
	cascade_start(&s, "instr_retired:t0:u:period=10", "instr_retired:t0:u:period=50", P4_PMI_LP0);
	instr(0, 10);			/* the starter overflows: the partner starts */
	instr(0, 51);			/* the partner overflows on the 50th, its PMI on the 51st */
	pmi();
	assert_int_equal(sinks, 2);	/* the partner's overflow, and the starter's OVF */
	instr(0, 30);			/* counted after the restart */
	perf_count_stop(&s, total);
	assert_int_equal(total[1], 51 + 30);
	enable_hidden = false;
}

static void cascaded_sampler_enable_set_by_the_start(void **state)
{
	cascaded_sampler_runs_on(false);
}

static void cascaded_sampler_enable_hidden(void **state)
{
	cascaded_sampler_runs_on(true);
}

/*
 * A cascade starter without a PMI overflows to start its partner: that
 * overflow is no sample and owes no interrupt, so the stop's poll leaves it
 * alone. Stopping and reloading it there would lose its events of those
 * instructions while the partner, still running, counted them (on the
 * model, which steps that kernel code, the selftest's partners came out
 * 129 instructions above their starters).
 */
static void cascade_starter_without_pmi_is_not_polled(void **state)
{
	static struct perf_count s;
	uint64_t total[2] = { 0, 0 };

	cascade_start(&s, "instr_retired:t0:u:period=10", "instr_retired:t0:u", P4_PMI_NONE);
	instr(0, 25);			/* the starter overflows on the 10th: the partner starts */
	perf_count_stop(&s, total);
	assert_int_equal(sinks, 0);
	assert_int_equal(s.overflows[0], 0);
	assert_int_equal(total[0], 25);
	assert_int_equal(total[1], 15);
}

/*
 * G8: a program's counting markers around a started partner. Off stops
 * both counters, on restarts both: the partner counts again, under either
 * reading of a start, and nothing while off (its programmed CCCR, Cascade
 * set and Enable clear, would arm it again for a start its reloaded
 * starter will not give; under the hidden reading it would not stop).
 * A partner not yet started stays armed through the markers.
 */
static void markers_on(bool hidden)
{
	static struct perf_count s;
	uint64_t total[2] = { 0, 0 };
	struct perf_inputs in;
	struct workload_hooks h;

	enable_hidden = hidden;
	setup(NULL);
	perf_hooks(&in, &h);
	cascade_start(&s, "instr_retired:t0:period=10", "instr_retired:t0", P4_PMI_NONE);
	h.mark(h.ctx, 0, false);
	h.mark(h.ctx, 0, true);
	instr(0, 25);			/* the starter overflows on the 10th: 15 for the partner */
	h.mark(h.ctx, 0, false);	/* clears the starter's OVF, the sign of the start */
	instr(0, 5);			/* counted by neither */
	h.mark(h.ctx, 0, true);
	instr(0, 7);
	h.mark(h.ctx, 0, false);
	h.mark(h.ctx, 0, true);
	instr(0, 4);
	perf_count_stop(&s, total);
	assert_int_equal(total[1], 15 + 7 + 4);
	assert_int_equal(total[0], 25 + 7 + 4);
	enable_hidden = false;
}

static void markers_restart_a_started_partner(void **state)
{
	markers_on(false);
}

static void markers_restart_a_started_partner_hidden(void **state)
{
	markers_on(true);
}

/* ---- F4: a PEBS counter is not an ordinary sampler ---------------------------------------- */

/*
 * Counter 16 under PEBS overflows (the model sets OVF, as the harder
 * reading of the manual has it) and the LP takes a PMI for another
 * reason: the handler must neither sample counter 16 nor add its events
 * (its records are counted apart, record_pebs_stop).
 */
static void pebs_counter_is_not_sampled(void **state)
{
	static struct perf_count s;
	const struct perf_info *pi = perf_info();
	struct p4_alloc_ctx ctx = { &pi->caps, pi->ht, P4_SPLIT_GLOBAL };
	struct p4_request r = { .lp = P4_LP0, .pmi = P4_PMI_LP0, .role = P4_ROLE_PEBS };
	struct p4_spec_error serr;
	struct p4_alloc_error aerr;
	struct p4_plan plan;
	uint64_t cccr = 0;
	char err[96];

	assert_int_equal(p4_spec_parse("front_end_event:nbogus:t0", &pi->caps, &r.spec, &serr), 0);
	r.spec.period = 10;
	r.spec.pebs = true;
	if (p4_alloc_plan(&ctx, &r, 1, &plan, &aerr))
		fail_msg("%s", aerr.msg);
	plan.ds_area_set = true;
	assert_int_equal(perf_count_start(&s, &plan, PERF_RELOAD_DEFAULT, err, sizeof(err)), 0);
	p4_model_event(&model, 0, 0, P4_EV_FRONT_END_EVENT, P4_EVMASK(P4_FRONT_END_EVENT_NBOGUS), 10);
	assert_int_equal(msr_bus_read(&model.bus, p4_counters[P4_IQ_COUNTER4].cccr_msr, &cccr), 0);
	assert_true(cccr & CCCR_OVF);
	pmi();
	assert_int_equal(sinks, 0);
	assert_int_equal(s.overflows[0], 0);
	perf_count_stop(&s, NULL);
}

/* ---- G2, G5: the PMI's drain stops the PEBS counter, and LP1 leaves PEBS_ENABLE alone -------- */

static void nbogus(unsigned lp, uint64_t n)
{
	p4_model_event(&model, lp, 0, P4_EV_FRONT_END_EVENT, P4_EVMASK(P4_FRONT_END_EVENT_NBOGUS), n);
}

static unsigned drained;

/* Each drained record: the drain's own tagged loads and stores, 25 of them (:k counts them). */
static void drain_counts(void *ctx, unsigned lp, const struct p4_pebs_record *r)
{
	drained++;
	nbogus(lp, 25);
}

/*
 * LP lp counts front_end_event nbogus under PEBS, period 10, and records
 * one; LP lp then drains its buffer with 25 tagged events per record
 * arriving during the drain. Returns the PEBS slot's index (0).
 */
static void pebs_drain_on(unsigned lp, struct perf_count *s, struct p4_plan *plan)
{
	const struct perf_info *pi = perf_info();
	struct p4_alloc_ctx ctx = { &pi->caps, pi->ht, P4_SPLIT_GLOBAL };
	struct p4_request r = { .lp = lp ? P4_LP1 : P4_LP0, .pmi = lp ? P4_PMI_LP1 : P4_PMI_LP0,
				.role = P4_ROLE_PEBS };
	const struct p4_counter_desc *d;
	struct p4_spec_error serr;
	struct p4_alloc_error aerr;
	uint64_t before = 0, after = 0, cccr = 0;
	char err[96];

	assert_int_equal(p4_spec_parse(lp ? "front_end_event:nbogus:t1" : "front_end_event:nbogus:t0",
				       &pi->caps, &r.spec, &serr), 0);
	r.spec.period = 10;
	r.spec.pebs = true;
	if (p4_alloc_plan(&ctx, &r, 1, plan, &aerr))
		fail_msg("%s", aerr.msg);
	d = &p4_counters[plan->slot[0].counter];
	assert_int_equal(pebs_check(err, sizeof(err)), 0);
	assert_int_equal(pebs_prepare(lp, 4, 10, err, sizeof(err)), 0);
	cur = lp;				/* each LP writes its own IA32_DS_AREA */
	assert_int_equal(pebs_load(lp), 0);
	cur = 0;
	plan->ds_area_set = true;
	plan->writer_lp = 0;
	assert_int_equal(perf_count_start(s, plan, PERF_RELOAD_DEFAULT, err, sizeof(err)), 0);
	nbogus(lp, 13);				/* a record at the 10th; 3 counted since the reload */
	assert_int_equal(pebs_stats()->records[lp], 0);
	cur = lp;				/* the drain runs on the interrupted LP */
	assert_int_equal(msr_bus_read(&model.bus, d->msr, &before), 0);
	wlog_n = 0;
	drained = 0;
	assert_int_equal(pebs_drain_live(plan, lp, drain_counts, NULL), 1);
	assert_int_equal(drained, 1);
	assert_int_equal(msr_bus_read(&model.bus, d->msr, &after), 0);
	assert_int_equal(after, before);	/* no event of the drain counted, the value untouched */
	assert_int_equal(msr_bus_read(&model.bus, d->cccr_msr, &cccr), 0);
	assert_int_equal(cccr, plan->slot[0].cccr_value);	/* running again, as programmed */
	/* stopped first, on its null event, restarted last */
	assert_true(wlog_n >= 2 && wlog_n <= WLOG_MAX);
	assert_int_equal(wlog[0].msr, d->cccr_msr);
	assert_int_equal(wlog[0].value, plan->slot[0].cccr_quiet);
	assert_int_equal(wlog[0].value & CCCR_ENABLE, 0);
	assert_int_equal(wlog[wlog_n - 1].msr, d->cccr_msr);
	assert_int_equal(wlog[wlog_n - 1].value, plan->slot[0].cccr_value);
	for (unsigned k = 0; k < wlog_n; k++)
		assert_int_not_equal(wlog[k].msr, d->msr);	/* the counter is never written */
	nbogus(lp, 7);				/* counting again: 3 + 7, the next record */
	assert_int_equal(pebs_drain_live(plan, lp, drain_counts, NULL), 1);
	cur = 0;
}

static void pebs_drain_stops_the_counter_on_lp0(void **state)
{
	static struct perf_count s;
	struct p4_plan plan;
	unsigned pebs_writes = 0;

	pebs_drain_on(0, &s, &plan);
	perf_count_stop(&s, NULL);
	/* LP0 also clears its PEBS enable bit while it drains (the SDM's DS ISR): set again after */
	for (unsigned k = 0; k < wlog_n && k < WLOG_MAX; k++)
		pebs_writes += wlog[k].msr == MSR_PEBS_ENABLE;
	assert_true(pebs_writes > 0);
}

static void pebs_drain_on_lp1_leaves_pebs_enable(void **state)
{
	static struct perf_count s;
	struct p4_plan plan;
	uint64_t v = 0;

	pebs_drain_on(1, &s, &plan);
	for (unsigned k = 0; k < wlog_n && k < WLOG_MAX; k++)
		assert_int_not_equal(wlog[k].msr, MSR_PEBS_ENABLE);
	assert_int_equal(plan.slot[0].counter, P4_IQ_COUNTER5);
	assert_int_equal(p4_model_set_bus_lp(&model, 0), 0);
	assert_int_equal(msr_bus_read(&model.bus, MSR_PEBS_ENABLE, &v), 0);
	assert_true(v & PEBS_ENABLE_OTH_THR);	/* LP0's view: LP1's PEBS still on */
	perf_count_stop(&s, NULL);
}

/* ---- the uncore counters start and stop with the count, under the PMU lock ------------------ */

#define IBUSQ_T0_FILL	((UINT64_C(1) << 36) | (UINT64_C(0xff) << 38) | (UINT64_C(1) << 46) | \
			 (UINT64_C(0x7f) << 49) | (UINT64_C(1) << 57))

static uint64_t nmis_before, nmis_inside;

/* At the first uncore register access: an overflow and its NMI. */
static void nmi_at_the_uncore(uint32_t msr)
{
	if (msr < MSR_P4_UNCORE_FIRST || msr >= MSR_P4_UNCORE_FIRST + P4_UNC_NREG) {
		during = nmi_at_the_uncore;		/* not yet */
		return;
	}
	interrupt(VEC_NMI, &frame);
	nmis_inside = perf_info()->pmi.lp_interrupts[0] - nmis_before;
}

/* plan_of(0, 0) with the ibusq uncore event on register reg. */
static struct p4_plan plan_with_uncore(unsigned reg)
{
	struct p4_plan plan = plan_of(0, 0);
	struct p4_unc_spec spec;
	struct p4_spec_error serr;

	assert_int_equal(p4_unc_spec_parse("ibusq", &perf_info()->caps, &spec, &serr), 0);
	plan.unc_n = 1;
	plan.unc[0] = (struct p4_unc_slot){ .reg = (uint8_t)reg, .start = p4_unc_encode(&spec, 0) };
	return plan;
}

static void uncore_counts_with_the_core_counters(void **state)
{
	static struct perf_count s;
	struct p4_plan plan = plan_with_uncore(1);
	uint64_t total = 0, v;
	char err[96];

	perf_set_pmi_mode(PERF_PMI_NMI);
	nmis_before = perf_info()->pmi.lp_interrupts[0];
	during = nmi_at_the_uncore;
	assert_int_equal(perf_count_start(&s, &plan, PERF_RELOAD_DEFAULT, err, sizeof(err)), 0);
	assert_int_equal(nmis_inside, 0);	/* held: the uncore is written under the PMU lock */
	assert_int_equal(perf_info()->pmi.lp_interrupts[0], nmis_before + 1);	/* taken at the unlock */
	assert_int_equal(s.unc_failed, -1);
	instr(0, 40);
	assert_int_equal(p4_model_uncore_event(&model, P4_UNC_IBUSQ, IBUSQ_T0_FILL, 9), 0);
	nmis_before = perf_info()->pmi.lp_interrupts[0];
	during = nmi_at_the_uncore;
	perf_count_stop(&s, &total);
	assert_int_equal(nmis_inside, 0);	/* the stop too */
	assert_int_equal(total, 40);
	assert_int_equal(s.unc_total[0], 9);
	assert_int_equal(msr_bus_read(&model.bus, MSR_P4_UNCORE_FIRST + 1, &v), 0);
	assert_int_equal(v, 0);			/* stopped: upper half 0 */
	assert_int_equal(p4_model_uncore_event(&model, P4_UNC_IBUSQ, IBUSQ_T0_FILL, 5), 0);
	assert_int_equal(msr_bus_read(&model.bus, MSR_P4_UNCORE_FIRST + 1, &v), 0);
	assert_int_equal(v, 0);
}

/*
 * G6: an uncore count is 32 bits; the watchdog's tick (workload_hooks.tick)
 * reads and extends it, so a run of more than 2^32 events between the
 * start and the stop keeps every one as long as fewer pass between ticks.
 */
static void uncore_ticks_extend_across_wraps(void **state)
{
	static struct perf_count s;
	struct p4_plan plan = plan_with_uncore(1);
	const uint64_t chunk = UINT64_C(3000000000);	/* < 2^32, and 2 of them > 2^32 */
	struct perf_inputs in;
	struct workload_hooks h;
	uint64_t total = 0;
	char err[96];

	perf_hooks(&in, &h);
	assert_non_null(h.tick);
	assert_int_equal(perf_count_start(&s, &plan, PERF_RELOAD_DEFAULT, err, sizeof(err)), 0);
	for (int k = 0; k < 3; k++) {
		assert_int_equal(p4_model_uncore_event(&model, P4_UNC_IBUSQ, IBUSQ_T0_FILL, chunk), 0);
		h.tick(h.ctx, 0);
	}
	assert_int_equal(p4_model_uncore_event(&model, P4_UNC_IBUSQ, IBUSQ_T0_FILL, 7), 0);
	instr(0, 4);
	perf_count_stop(&s, &total);
	assert_int_equal(s.unc_total[0], 3 * chunk + 7);
	assert_int_equal(total, 4);
	/* a tick outside a count touches nothing */
	h.tick(h.ctx, 0);
	assert_int_equal(s.unc_total[0], 3 * chunk + 7);
}

/* An uncore register that cannot be written: nothing is programmed, and the count says which. */
static void uncore_fault_programs_nothing(void **state)
{
	static struct perf_count s;
	struct p4_plan plan = plan_with_uncore(0);
	uint64_t cccr;
	char err[96];

	uncore_faults = true;
	assert_int_equal(perf_count_start(&s, &plan, PERF_RELOAD_DEFAULT, err, sizeof(err)), -1);
	assert_string_equal(err, "writing uncore register 107CCH failed");
	assert_int_equal(s.unc_failed, 0);
	assert_false(s.running);
	assert_false(perf_counting());
	assert_int_equal(msr_bus_read(&model.bus, p4_counters[plan.slot[0].counter].cccr_msr, &cccr), 0);
	assert_int_equal(cccr & CCCR_ENABLE, 0);	/* the core counter was never started */
}

/* ---- the storm guard (prof/storm.h) ------------------------------------------------ */

/*
 * PERF_STORM_PMIS PMIs in a row, each after the counter overflowed again,
 * that find the interrupted registers unchanged: the 16th stops the count
 * (every CCCR quiet, the LVT PC left masked) and keeps the evidence.
 * Fifteen are not enough, and a frame that moves (a loop's counter
 * register) never makes one, nor one that stays put for longer than a
 * handler between PMIs (a loop that jumps to itself).
 */
static void storm_stops_the_count(void **state)
{
	static struct perf_count s;
	struct p4_plan plan = plan_of(0, 10);
	uint64_t cccr, total = 0;
	char err[96], text[600];

	(void)state;
	perf_set_pmi_mode(PERF_PMI_NMI);
	for (unsigned moving = 0; moving < 3; moving++) {
		uint64_t took = 0;

		frame = (struct trap_frame){ .rip = 0x1000, .rsp = 0x8000, .rcx = 77 };
		step_quiets = 0;
		assert_int_equal(perf_count_start(&s, &plan, PERF_RELOAD_DEFAULT, err, sizeof(err)), 0);
		for (unsigned k = 1; k <= 40; k++) {
			uint64_t t0;

			instr(0, 11);		/* the handler's own 11 events: a period and the PMI's */
			if (moving == 1)
				frame.rcx++;	/* one instruction of the interrupted code ran */
			if (moving == 2)	/* `jmp .`: unchanged, but for longer than a handler */
				for (uint64_t w = rdtsc(); rdtsc() - w < 4 * took + 1000;)
					;
			perf_lvt_automask(0);	/* as the delivery does (PMU reference 6) */
			t0 = rdtsc();
			interrupt(VEC_NMI, &frame);
			took = rdtsc() - t0;
			if (!moving && k == PERF_STORM_PMIS - 1)
				assert_false(s.storm);
			if (s.storm)
				break;
		}
		assert_int_equal(s.storm, moving == 0);
		assert_int_equal(step_quiets, moving == 0);	/* nothing left to step for */
		if (moving == 0) {
			assert_int_equal(s.storm_pmis, PERF_STORM_PMIS);
			assert_int_equal(s.storm_events, 11);
			assert_int_equal(s.storm_idx, 0);
			assert_true(lvt_pc[0] & LAPIC_LVT_MASKED);
			assert_int_equal(msr_bus_read(&model.bus, p4_counters[plan.slot[0].counter].cccr_msr,
						      &cccr), 0);
			assert_int_equal(cccr & (CCCR_ENABLE | CCCR_OVF), 0);
			assert_false(p4_model_pmi_asserted(&model, 0));
			perf_storm_text(&s, "instr_retired", NULL, text, sizeof(text));
			assert_non_null(strstr(text, "interrupt storm: 16 overflow interrupts"));
			assert_non_null(strstr(text, "A period above 11 works"));
			s.storm_events = 3;	/* fewer than the period: a request that stayed */
			perf_storm_text(&s, "instr_retired", NULL, text, sizeof(text));
			assert_non_null(strstr(text, "its PMI request stayed asserted"));
			/* a PEBS buffer's: 60 records between drains at period 10, 64 slots, threshold 58 */
			s.storm_pebs = 60;
			perf_storm_text(&s, "front_end_event", &(struct perf_pebs_size){ 64, 58 }, text,
					sizeof(text));
			assert_non_null(strstr(text, "interrupt storm: the PEBS buffer of #0 front_end_event "
						     "(period 10) reached its threshold (58 records) again "
						     "from the handler's own tagged uops at CPL 0: 60 records "
						     "between two drains, at most 609 uops; counting "
						     "stopped. A period above 10 works"));
			s.storm_pebs_early = true;	/* found after the drain: part of the cycle */
			perf_storm_text(&s, "front_end_event", &(struct perf_pebs_size){ 64, 58 }, text,
					sizeof(text));
			assert_non_null(strstr(text, "60 records after its drain, at least 600 uops; "
						     "counting stopped. A period above 10 is needed, maybe "
						     "more"));
			s.storm_pebs_early = false;
			s.storm_pebs = 64;	/* the buffer full: a lower bound */
			perf_storm_text(&s, "front_end_event", &(struct perf_pebs_size){ 64, 58 }, text,
					sizeof(text));
			assert_non_null(strstr(text, "64 records between two drains, at least 640 uops "
						     "(the buffer was full); counting stopped. A period above "
						     "11 is needed, maybe more"));
			perf_storm_text(&s, "front_end_event", NULL, text, sizeof(text));
			assert_non_null(strstr(text, "A period above 649 works"));
			s.storm_pebs = 0;
		} else {
			assert_false(lvt_pc[0] & LAPIC_LVT_MASKED);
		}
		perf_count_stop(&s, &total);
	}
}

/*
 * The poll tick's own guard (perf_poll_tick): PERF_STORM_PMIS ticks in a
 * row, each right after the last one's end, that find the interrupted
 * registers unchanged stop the count and the tick, and the error names the
 * tick, its period (timer_tsc_hz above: 3 GHz) and its poll's time; ticks
 * between which the interrupted code ran never do.
 */
static void tick_storm_stops_the_count_and_the_tick(void **state)
{
	static struct perf_count s;
	struct p4_plan plan = plan_of(0, 10);
	uint64_t total = 0;
	char err[96], text[500];

	(void)state;
	for (unsigned moving = 0; moving < 2; moving++) {
		frame = (struct trap_frame){ .rip = 0x1000, .rsp = 0x8000, .rcx = 77 };
		assert_int_equal(perf_count_start(&s, &plan, PERF_RELOAD_DEFAULT, err, sizeof(err)), 0);
		assert_true(perf_tick(10000));
		for (unsigned k = 1; k <= 40 && !s.storm; k++) {
			if (moving)
				frame.rcx++;	/* one instruction of the interrupted code ran */
			perf_poll_tick(&frame);
			if (!moving && k == PERF_STORM_PMIS - 1)
				assert_false(s.storm);
		}
		assert_int_equal(s.storm, moving == 0);
		assert_int_equal(tick_rate, moving ? 10000 : 0);	/* the storm stopped the tick */
		if (moving == 0) {
			assert_int_equal(s.storm_pmis, PERF_STORM_PMIS);
			assert_int_equal(s.storm_tick_hz, 10000);
			assert_int_equal(s.storm_tick_period, 300000);
			assert_true(s.storm_tick_tsc > 0);
			perf_storm_text(&s, "instr_retired", NULL, text, sizeof(text));
			assert_non_null(strstr(text, "interrupt storm: 16 timer ticks in a row on LP0 "));
			assert_true(s.storm_tick_every >= s.storm_tick_tsc);
			assert_non_null(strstr(text, "poll tick (10000 Hz, every 300000 TSC cycles) came "
						     "every "));
			assert_non_null(strstr(text, "counting and the tick stopped"));
		}
		perf_tick(0);
		perf_count_stop(&s, &total);
	}
}

/*
 * The guard folds the interrupted registers only for a PMI that comes
 * quick (within twice the last handler's time of its end) and finds the
 * instruction and stack pointers the last one found: a slow one, or one
 * that moved, keeps the two pointers, which the first quick one after it
 * compares; each later quick one compares every register. Times in TSC
 * cycles, each handler 100 long.
 */
static void storm_guard_folds_only_quick_pmis(void **state)
{
	struct perf_storm_lp g = { 0 };
	struct trap_frame f = { .rip = 0x1000, .rsp = 0x8000 };
	uint64_t t = 1000;

	(void)state;
	assert_false(perf_storm_seen(&g, &f, t));	/* the first: nothing to be quick after */
	assert_false(g.sig_valid);
	assert_int_equal(g.rip, 0x1000);
	perf_storm_end(&g, t += 100);
	f.rax = 5;			/* not compared on the first quick one */
	assert_false(perf_storm_seen(&g, &f, t += 50));
	assert_true(g.sig_valid);
	assert_int_equal(g.same, 1);
	perf_storm_end(&g, t += 100);
	f.rax = 6;			/* every register on the next */
	assert_false(perf_storm_seen(&g, &f, t += 50));
	assert_int_equal(g.same, 0);
	for (unsigned k = 1; k < PERF_STORM_PMIS; k++) {
		perf_storm_end(&g, t += 100);
		assert_int_equal(perf_storm_seen(&g, &f, t += 50), k + 1 == PERF_STORM_PMIS);
	}
	perf_storm_end(&g, t += 100);
	assert_false(perf_storm_seen(&g, &f, t += 1000));	/* slow: a period ran */
	assert_false(g.sig_valid);
	assert_int_equal(g.same, 0);
	perf_storm_end(&g, t += 100);
	f.rsp -= 8;			/* the first quick one after it moved: no storm link */
	assert_false(perf_storm_seen(&g, &f, t += 50));
	assert_int_equal(g.same, 0);
	assert_false(g.sig_valid);	/* it moved: nothing folded */
	perf_storm_end(&g, t += 100);
	f.rbx = 7;			/* the next one where it was: the pointers only */
	assert_false(perf_storm_seen(&g, &f, t += 50));
	assert_int_equal(g.same, 1);
	assert_true(g.sig_valid);
	for (unsigned k = 0; k < 2 * PERF_STORM_PMIS; k++) {	/* two IPs, by turns: never */
		perf_storm_end(&g, t += 100);
		f.rip = k & 1 ? 0x1000 : 0x1004;
		assert_false(perf_storm_seen(&g, &f, t += 50));
		assert_int_equal(g.same, 0);
		assert_false(g.sig_valid);
	}
	for (unsigned k = 0; k < 2 * PERF_STORM_PMIS; k++) {	/* one IP, a register moving: never */
		perf_storm_end(&g, t += 100);
		f.r11 = k;
		assert_false(perf_storm_seen(&g, &f, t += 50));
		assert_true(g.same <= 1);
	}
}

#define T(f) cmocka_unit_test_setup(f, setup)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(events_during_the_handler_are_counted),
		T(the_gate_counts_only_between_open_and_shut),
		T(nmi_during_stop_keeps_the_totals),
		T(sibling_programs_its_own_lvt_pc),
		T(pebs_counter_is_not_sampled),
		T(pebs_drain_stops_the_counter_on_lp0),
		T(pebs_drain_on_lp1_leaves_pebs_enable),
		T(deferred_nmi_reaches_the_sink),
		T(held_pmi_is_found_at_the_stop),
		T(cascaded_sampler_enable_set_by_the_start),
		T(cascade_starter_without_pmi_is_not_polled),
		T(cascaded_sampler_enable_hidden),
		T(markers_restart_a_started_partner),
		T(markers_restart_a_started_partner_hidden),
		T(sink_return_is_the_next_period),
		T(poll_finds_an_overflow_and_restarts_in_place),
		T(uncore_counts_with_the_core_counters),
		T(uncore_fault_programs_nothing),
		T(restarts_leave_the_cpl0_sampler_last),
		T(the_exit_restarts_only_what_overflowed),
		T(storm_stops_the_count),
		T(storm_guard_folds_only_quick_pmis),
		T(tick_storm_stops_the_count_and_the_tick),
		T(uncore_ticks_extend_across_wraps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
