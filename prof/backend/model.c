/*
 * prof/backend/model.c - the software model of the PMU (pmu/model/) as a
 * backend: everything the model needs and the hardware does not, in one
 * adapter behind the ops of prof/backend.h. Its state is one struct
 * (prof/backend/model_adapter.h); its parts:
 *
 * - Its bus (this file): the model's registers under the PMU lock (both LPs
 *   feed and program one model), plus the quirk and fault injection of
 *   `record --inject`. Every access first hands the batched events to the
 *   model, so reads see exact counts.
 * - Its event feed (prof/backend/model_feed.c, batched by prof/backend/model_batch.c): the
 *   workload hooks. Kernel code outside the workload is never seen.
 * - Its interrupts (prof/backend/model_pmi.c): the model's PMI requests become real
 *   interrupts, after the model call that raised them.
 * - The memory model is emptied when a counting run starts, so each run
 *   starts cold and two runs of one workload count alike.
 *
 * docs/dev/sampling-path.md tells which context a model PMI
 * interrupts (the workload's, through the step handler's frame).
 */
#include "arch/x86/cpu.h"
#include "arch/x86/mem.h"
#include "arch/x86/mode.h"
#include "arch/x86/paging.h"
#include "arch/x86/step.h"
#include "arch/x86/timer.h"
#include "lib/printf.h"
#include "pmu/p4_regs.h"
#include "pmu/p4_tables.h"
#include "prof/backend.h"
#include "prof/backend/model_adapter.h"
#include "prof/pebs.h"

struct model_adapter model_adapter = {
	.batch = { .budget_dirty = true },
	.pmi = { .lp_apic = { MODEL_NO_APIC, MODEL_NO_APIC } },
	.live = { .dirty = true },
	.khooks = {
		{ .ctx = &model_adapter.kin[0], .step = model_feed_kernel_step,
		  .fault = model_feed_fault },
		{ .ctx = &model_adapter.kin[1], .step = model_feed_kernel_step,
		  .fault = model_feed_fault },
	},
	.clock_src = PERF_CLOCK_MODEL,
};

/* ---- the bus, and quirk injection ------------------------------------------- */

/*
 * `record --inject` (running count only): the next `unflagged` reads of a
 * CCCR with OVF set return it without OVF, as on the parts that overflow
 * without setting the flag (PMU reference 6); the next `reloads` reloads
 * lose their counter writes until the handler reads the counter back, as
 * erratum N15 would. The model's state is unchanged otherwise, so the
 * handler's workarounds are what keeps counts exact.
 */
static void model_inject_read(struct model_inject *inj, uint32_t msr, uint64_t *value)
{
	enum p4_counter c;

	if (inj->unflagged && (*value & CCCR_OVF) && p4_cccr_by_msr(msr, &c)) {
		inj->unflagged--;
		*value &= ~CCCR_OVF;
	} else if (inj->dropping && p4_counter_by_msr(msr, &c)) {
		inj->dropping = false;
		inj->retry = true;
		inj->reloads--;
	}
}

static bool model_inject_drops(struct model_inject *inj, uint32_t msr)
{
	enum p4_counter c;

	if (!inj->reloads || !p4_counter_by_msr(msr, &c))
		return false;
	if (inj->retry) {
		inj->retry = false;
		return false;
	}
	inj->dropping = true;
	return true;
}

static int model_bus_read(struct msr_bus *bus, uint32_t msr, uint64_t *value)
{
	struct model_adapter *a = &model_adapter;
	uint64_t held = step_hold(), t = rdtsc();
	int r;

	(void)bus;
	perf_lock();
	model_batch_flush(&a->batch, &a->model);
	p4_model_set_bus_lp(&a->model, perf_this_lp());	/* DS_AREA, PEBS_ENABLE: per LP */
	r = msr_bus_read(&a->model.bus, msr, value);
	if (r == 0 && (a->inj.unflagged | a->inj.reloads))
		model_inject_read(&a->inj, msr, value);
	perf_unlock();
	a->bus_tsc[percpu_this()->index] += rdtsc() - t + a->bus_call_tsc;
	step_release(held);
	return r;
}

static int model_bus_write(struct msr_bus *bus, uint32_t msr, uint64_t value)
{
	struct model_adapter *a = &model_adapter;
	uint64_t held = step_hold(), t = rdtsc();
	enum p4_counter c;
	int r = 0;

	(void)bus;
	perf_lock();
	model_batch_flush(&a->batch, &a->model);
	p4_model_set_bus_lp(&a->model, perf_this_lp());
	if (p4_cccr_by_msr(msr, &c)) {
		bool was[P4_MODEL_NLP];

		for (unsigned lp = 0; lp < P4_MODEL_NLP; lp++)
			was[lp] = p4_model_pmi_asserted(&a->model, lp);
		if (!model_inject_drops(&a->inj, msr))
			r = msr_bus_write(&a->model.bus, msr, value);
		/*
		 * The PMI request is a level (PMU reference 6): a CCCR write that
		 * asserts it - OVF still set under OVF_PMI - raises a PMI as an
		 * overflow does, even after the handler's unmask.
		 */
		for (unsigned lp = 0; lp < P4_MODEL_NLP; lp++)
			if (!was[lp] && p4_model_pmi_asserted(&a->model, lp))
				model_raise(&a->model, lp, &a->pmi);
		/*
		 * A sampler (re)started: a handler's tail begins. Only a counter
		 * whose overflow interrupts (OVF_PMI): the tail is what such a
		 * counter counts of its own handler (pmu/p4_alloc.h
		 * P4_PMI_TAIL_MAX); a PEBS counter, restarted by the drain
		 * mid-handler, interrupts at its buffer's threshold instead
		 * (prof/perf.c perf_pebs_refilled).
		 */
		if ((value & CCCR_ENABLE) && (value & (CCCR_OVF_PMI_T0 | CCCR_OVF_PMI_T1)))
			step_handler_mark();
	} else if (!model_inject_drops(&a->inj, msr)) {
		r = msr_bus_write(&a->model.bus, msr, value);
	}
	a->live.dirty = true;
	a->batch.budget_dirty = true;
	perf_unlock();
	a->bus_tsc[percpu_this()->index] += rdtsc() - t + a->bus_call_tsc;
	step_release(held);
	return r;
}

static uint64_t model_bus_tsc_raw(void)
{
	return model_adapter.bus_tsc[percpu_this()->index];
}

/*
 * What a bus call costs outside the part the wrappers time (the call, the
 * prologue and epilogue, the bookkeeping), so that bus_tsc covers whole
 * calls: the least over a few timed reads.
 */
static void model_calibrate(struct model_adapter *a)
{
	uint64_t v, best = UINT64_MAX;

	a->bus_call_tsc = 0;
	for (unsigned k = 0; k < 8; k++) {
		uint64_t in = model_bus_tsc_raw(), t = rdtsc();

		msr_bus_read(&a->bus, MSR_BPU_COUNTER0, &v);
		t = rdtsc() - t - (model_bus_tsc_raw() - in);
		best = t < best ? t : best;
	}
	a->bus_call_tsc = best;
}

static struct msr_bus *model_get_bus(void)
{
	return &model_adapter.bus;
}

static int model_inject(unsigned unflagged, unsigned reloads, char *err, size_t n)
{
	struct model_inject *inj = &model_adapter.inj;

	if (!perf_counting())
		return ksnprintf(err, n, "quirks are injected into the model's running count only"), -1;
	perf_lock();
	*inj = (struct model_inject){ .unflagged = unflagged, .reloads = reloads };
	perf_unlock();
	return 0;
}

static int model_inject_fault(enum perf_fault kind, uint32_t arg, char *err, size_t n)
{
	struct model_adapter *a = &model_adapter;
	struct p4_model_faults f;

	perf_lock();
	f = a->model.faults;
	switch (kind) {
	case PERF_FAULT_DEAD:
		f.dead = arg;
		break;
	case PERF_FAULT_RDPMC:
		f.rdpmc = arg;
		break;
	case PERF_FAULT_ERRATUM:
		f.erratum_flip = arg != 0;
		break;
	case PERF_FAULT_NOMASK:
		a->pmi.nomask = arg;
		break;
	case PERF_FAULT_STUCK:
		f.stuck_escr = arg;
		break;
	case PERF_FAULT_STUCK_OVF:
		f.stuck_ovf = arg;
		break;
	}
	p4_model_set_faults(&a->model, &f);
	perf_unlock();
	return 0;
}

static int model_rdpmc(uint32_t ecx, uint64_t *value)
{
	struct model_adapter *a = &model_adapter;
	uint64_t held = step_hold();	/* RDPMC: one instruction */
	int r;

	perf_lock();
	model_batch_flush(&a->batch, &a->model);	/* the counts read must include the batched events */
	r = p4_model_rdpmc(&a->model, ecx, value);
	perf_unlock();
	step_release(held);
	return r;
}

/* ---- interrupts and runs --------------------------------------------------------- */

/* After the handler unmasked: a model still asserting (sticky OVF) interrupts again. */
static void model_unmasked(unsigned lp)
{
	struct model_adapter *a = &model_adapter;
	uint64_t held = step_hold();	/* the model's own work: a P4 never runs it */
	uint64_t t = rdtsc();
	bool again;

	perf_lock();
	model_batch_flush(&a->batch, &a->model);
	again = p4_model_pmi_asserted(&a->model, lp);
	perf_unlock();
	if (again) {
		perf_pmi_stats()->reraised++;
		model_pmi_resend(&a->pmi, lp);
	}
	a->bus_tsc[percpu_this()->index] += rdtsc() - t + a->bus_call_tsc;
	step_release(held);
}

/*
 * A counting run starts: the memory model is emptied (each run starts from
 * the same state, so two runs of one command count alike), and the
 * counting window opens on this LP - from here to model_run_end its kernel
 * code is stepped too, as a P4 counts it at CPL 0 (arch/x86/step.h).
 */
static void model_run_begin(void)
{
	struct model_adapter *a = &model_adapter;

	model_pmi_reset(&a->pmi);
	a->fault.set = false;
	if (a->mem_ready && a->mem_touched) {
		p4_mem_flush(a->mem);
		memfeed_reset(&a->feed);
		a->mem_touched = false;
	}
	for (unsigned lp = 0; lp < P4_MODEL_NLP; lp++) {
		a->kin[lp] = (struct perf_window){ .in = { 0 } };
		/*
		 * Each LP starts the run on the core's clock: left behind by the
		 * last run (its sibling ran further), its first cycles would fill
		 * that gap and not move the clock, and a run's counts would
		 * depend on the run before it.
		 */
		a->lp_clock[lp] = a->clock;
	}
	step_window_begin(&a->khooks[perf_this_lp()], (uint8_t)perf_this_lp());
}

static void model_run_end(void)
{
	struct model_adapter *a = &model_adapter;

	step_hold();
	step_window_end();
	perf_lock();
	model_batch_flush(&a->batch, &a->model);
	perf_unlock();
	model_pmi_reset(&a->pmi);
	a->inj = (struct model_inject){ 0 };
}

/* ---- selection and status -------------------------------------------------------- */

static unsigned model_page_shift(void *ctx, uint64_t addr)
{
	(void)ctx;
	return paging_page_shift(addr);
}

/*
 * The memory model's state (1.3 MB, sized for the largest part) from the
 * page allocator at the first selection, not in .bss: the ia32 image stores
 * its .bss in the file. NULL when there is no memory for it (then no memory
 * model: clockticks from the TSC, and its events have no input).
 */
static struct p4_mem *model_mem_get(struct model_adapter *a)
{
	if (!a->mem) {
		uint64_t p = mem_alloc_pages((sizeof(struct p4_mem) + MEM_PAGE_SIZE - 1) / MEM_PAGE_SIZE);

		a->mem = (struct p4_mem *)(uintptr_t)p;
	}
	return a->mem;
}

/* The first PEBS assist that could not reach its DS area since the run began. */
static void model_machine_fault(struct p4_model *m, unsigned lp, uint64_t addr, void *ctx)
{
	struct model_adapter *a = &model_adapter;

	(void)m;
	(void)ctx;
	if (a->fault.set)
		return;
	a->fault.set = true;
	a->fault.lp = lp;
	a->fault.addr = addr;
}

static bool model_fault_text(char *buf, size_t n)
{
	struct model_adapter *a = &model_adapter;

	if (!a->fault.set)
		return false;
	ksnprintf(buf, n, "machine fault: the PEBS assist of LP%u could not reach its DS save area "
		  "or buffer at %llXH (IA32_DS_AREA %s); a real machine faults inside the assist",
		  a->fault.lp, (unsigned long long)a->fault.addr,
		  a->model.ds_area[a->fault.lp] ? "unmapped" : "0");
	a->fault.set = false;	/* reported once */
	return true;
}

/*
 * The CPU as the model's signature is (caps): CPUID.1 DS on every NetBurst
 * part, DTES64 on models 3, 4 and 6, and IA32_MISC_ENABLE as the model
 * reads it (bit 7 set, bit 12 as `nopebs` says, bit 11 set: the model has
 * no branch trace store). QEMU's own CPUID has neither DS nor DTES64.
 */
static void model_cpu_view(struct cpu_info *ci)
{
	ci->ds = true;
	ci->dtes64 = model_adapter.model.caps.dtes64;
	ci->misc_enable_ok = model_bus_read(NULL, MSR_IA32_MISC_ENABLE, &ci->misc_enable) == 0;
	if (!ci->misc_enable_ok)
		ci->misc_enable = 0;
}

static int model_select(const struct p4_sig *sig, bool ht, struct p4_caps *caps, char *err, size_t n)
{
	struct model_adapter *a = &model_adapter;
	struct p4_model_config cfg = { .sig = *sig, .ht = ht, .raise_pmi = model_raise, .ctx = &a->pmi,
				       .mem = pebs_mem, .pebs_unavailable = a->no_pebs,
				       .bts_unavailable = true,	/* no BTS in the model */
				       .legacy_mode = !MODE_IS_64,
				       .machine_fault = model_machine_fault };
	char sigtext[8];

	if (!p4_caps_lookup(sig, caps))
		return ksnprintf(err, n, "the model needs a family 0FH signature such as 0F_04"), -1;
	if (a->want_l3 && !p4_mem_part_lookup(sig, P4_MEM_XEON_MP_L3))
		return ksnprintf(err, n, "no Xeon MP with an L3 has signature %02X_%02X (the L3 parts are "
				 "models 0-4 and 6)", sig->family, sig->model), -1;
	cfg.uncore = a->want_l3 && caps->uncore != P4_UNCORE_NONE;
	if (p4_model_init(&a->model, &cfg) != 0 || p4_model_set_skid(&a->model, a->skid) != 0)
		return ksnprintf(err, n, "the model needs a family 0FH signature such as 0F_04"), -1;
	a->mem_ready = model_mem_get(a) && p4_mem_init(a->mem, sig, a->want_l3 ? P4_MEM_XEON_MP_L3
										 : P4_MEM_DESKTOP,
							 model_page_shift, NULL) == 0;
	memfeed_init(&a->feed, a->mem, ht);
	a->mem_touched = false;
	a->bus = (struct msr_bus){ .read = model_bus_read, .write = model_bus_write };
	/* in the counting window an access counts as the hardware bus's (arch/x86/step.h) */
	step_seam_set(model_bus_read, model_bus_write, MSR_BPU_CCCR0);
	model_calibrate(a);
	p4_model_set_active(&a->model, 0, true);	/* LP0 runs the shell */
	p4_model_set_active(&a->model, 1, false);	/* the sibling halts until it runs a workload */
	*caps = a->model.caps;
	model_pmi_reset(&a->pmi);
	a->live.dirty = true;
	p4_sig_format(sig, sigtext, sizeof(sigtext));
	ksnprintf(a->label, sizeof(a->label), "model %s%s", sigtext, a->want_l3 ? " L3" : "");
	return 0;
}

/* ---- settings (prof/backend/model.h) -------------------------------------------------- */

void perf_model_set_l3(bool l3)
{
	model_adapter.want_l3 = l3;
}

bool perf_model_l3(void)
{
	return model_adapter.want_l3;
}

void perf_model_set_clock(enum perf_model_clock c)
{
	model_adapter.clock_src = c;
}

_Static_assert(PERF_MODEL_SKID_MAX == P4_MODEL_SKID_MAX, "one skid bound");

int perf_model_set_skid(uint32_t skid)
{
	struct model_adapter *a = &model_adapter;

	if (skid > P4_MODEL_SKID_MAX)
		return -1;
	perf_lock();
	a->skid = skid;
	p4_model_set_skid(&a->model, skid);
	perf_unlock();
	return 0;
}

uint32_t perf_model_skid(void)
{
	return model_adapter.skid;
}

enum perf_model_clock perf_model_clock(void)
{
	return model_adapter.clock_src;
}

const char *perf_model_clock_name(enum perf_model_clock c)
{
	return c == PERF_CLOCK_TSC ? "tsc" : "model";
}

static void model_geom(char *buf, size_t n, const char *what, const struct p4_cache_geom *g)
{
	if (g->size)
		ksnprintf(buf, n, ", %s %u KB %u-way", what, (unsigned)(g->size / 1024u),
			  (unsigned)g->ways);
	else
		ksnprintf(buf, n, "%s", "");
}

void perf_model_mem_describe(char *buf, size_t n)
{
	const struct model_adapter *a = &model_adapter;
	const struct p4_mem_part *p = a->mem ? a->mem->part : NULL;
	char l1[32], l2[32], l3[32];

	if (!a->mem_ready || !p) {
		ksnprintf(buf, n, "%s", "");
		return;
	}
	model_geom(l1, sizeof(l1), "L1D", &p->l1d);
	model_geom(l2, sizeof(l2), "L2", &p->l2);
	model_geom(l3, sizeof(l3), "L3", &p->l3);
	const struct p4_core_part *c = a->feed.core.p;
	int len = ksnprintf(buf, n, "memory model: %s%s%s%s, DTLB %u, ITLB %u; clockticks: %s",
			    p->name, l1, l2, l3, (unsigned)p->dtlb.entries,
			    (unsigned)p->itlb.entries,
			    a->clock_src == PERF_CLOCK_TSC ? "TSC (measured)" : "cost model (a model)");

	if (c && len > 0 && (size_t)len < n)	/* the core model's figures (pmu/model/p4_core.c) */
		ksnprintf(buf + len, n - (size_t)len, "\ncore model: %s; load-to-use L1 %u, L2 %u, "
			  "L3 %u, memory %u; page walk %u; mispredict %u; BTB %u",
			  c->name, c->load_lat[0], c->load_lat[1], c->load_lat[2], c->load_lat[3],
			  c->page_walk, c->mispredict, c->btb_entries);
}

void perf_model_set_pebs_unavailable(bool unavailable)
{
	model_adapter.no_pebs = unavailable;
}

static const char *model_msr_label(void)
{
	return model_adapter.label;
}

static const struct perf_window *model_window_inputs(unsigned lp)
{
	return lp < P4_MODEL_NLP ? &model_adapter.kin[lp] : NULL;
}

/*
 * The tick in the stepped workload's own time (arch/x86/step.h
 * step_tick_every), stepped and counted at CPL 0 like a PMI's handler: the
 * LAPIC timer would fire by the stepping's own, far longer time, hundreds
 * of times per period of the workload.
 */
static void model_tick(unsigned hz)
{
	uint64_t period = hz ? timer_tsc_hz() / hz : 0;

	step_tick_every(hz && !period ? 1 : period);
}

static void model_describe(char *buf, size_t n)
{
	const struct p4_model *m = &model_adapter.model;

	ksnprintf(buf, n, "model requests OVF_PMI_T0 %llu, OVF_PMI_T1 %llu; PEBS records written "
		  "%llu, lost to a full buffer %llu (since the model was selected)",
		  (unsigned long long)m->pmi_count[0], (unsigned long long)m->pmi_count[1],
		  (unsigned long long)(m->pebs_records[0] + m->pebs_records[1]),
		  (unsigned long long)(m->pebs_lost[0] + m->pebs_lost[1]));
}

const struct perf_backend_ops perf_backend_model = {
	.name = "model",
	.steps_workloads = true,
	.select = model_select,
	.bus = model_get_bus,
	.msr_label = model_msr_label,
	.begin = model_feed_begin,
	.end = model_feed_end,
	.step = model_feed_step,
	.synthetic = model_feed_synthetic,
	.fault = model_feed_fault,
	.window_inputs = model_window_inputs,
	.run_begin = model_run_begin,
	.run_end = model_run_end,
	.tick = model_tick,
	.clock = step_lp_clock,
	.unmasked = model_unmasked,
	.source = model_feed_source,
	.inject = model_inject,
	.inject_fault = model_inject_fault,
	.rdpmc = model_rdpmc,
	.bus_tsc = model_adapter.bus_tsc,
	.describe = model_describe,
	.cpu_view = model_cpu_view,
	.machine_fault = model_fault_text,
};
