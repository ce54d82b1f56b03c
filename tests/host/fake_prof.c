/*
 * fake_prof.c - the profiling runtime behind the shell's profiling commands
 * (stat, pmu, explain, record, report, run: shell/cmd_*.c), for host tests.
 *
 * The PMU is the real software model (pmu/model/) programmed by the real
 * apply sequence; a workload "runs" by feeding the model a known stream
 * through the same hooks the kernel's step engine calls: fake_prof.steps
 * retired instructions, every fake_prof.branch_every-th of them a taken
 * conditional branch. So a command's whole pipeline - options, plan,
 * programming, reading, printing - runs on the host and its printed counts
 * can be checked against the stream. What only the target can do (taking
 * samples, timing the floor) answers with an error, so that the commands'
 * argument checks, which come first, are tested too.
 */
#include <string.h>

#include "arch/x86/ksyms.h"
#include "arch/x86/progress.h"
#include "arch/x86/smp.h"
#include "arch/x86/step.h"
#include "arch/x86/timer.h"
#include "lib/printf.h"
#include "pmu/model/p4_model.h"
#include "pmu/p4_apply.h"
#include "pmu/p4_regs.h"
#include "prof/backend/model.h"
#include "prof/perf.h"
#include "prof/record.h"
#include "tests/host/fake_prof.h"

struct fake_prof fake_prof;

static struct p4_model model;
static struct perf_info info;
static struct perf_count *active;

void fake_prof_reset(void)
{
	memset(&fake_prof, 0, sizeof(fake_prof));
	fake_prof.steps = 1000;
	fake_prof.branch_every = 4;
	active = NULL;
	info = (struct perf_info){ .backend = PERF_BACKEND_NONE, .pmi_mode = PERF_PMI_FIXED };
	ksnprintf(info.reason, sizeof(info.reason), "host test");
}

/* ---- backend ---------------------------------------------------------------- */

const struct perf_info *perf_info(void)
{
	return &info;
}

const char *perf_backend_name(enum perf_backend b)
{
	return b == PERF_BACKEND_MODEL ? "model" : b == PERF_BACKEND_HW ? "hardware" : "none";
}

int perf_select_hw(char *err, size_t n)
{
	return ksnprintf(err, n, "the host has no NetBurst PMU"), -1;
}

int perf_rdpmc(uint32_t ecx, uint64_t *value)
{
	return info.backend == PERF_BACKEND_MODEL ? p4_model_rdpmc(&model, ecx, value) : -1;
}

/* The model backend's settings (prof/backend/model.h), kept as set. */
static bool model_l3;
static enum perf_model_clock model_clock_src = PERF_CLOCK_MODEL;

void perf_model_set_l3(bool l3)
{
	model_l3 = l3;
}

bool perf_model_l3(void)
{
	return model_l3;
}

void perf_model_set_clock(enum perf_model_clock c)
{
	model_clock_src = c;
}

enum perf_model_clock perf_model_clock(void)
{
	return model_clock_src;
}

const char *perf_model_clock_name(enum perf_model_clock c)
{
	return c == PERF_CLOCK_TSC ? "tsc" : "model";
}

static uint32_t model_skid;

int perf_model_set_skid(uint32_t skid)
{
	if (skid > P4_MODEL_SKID_MAX)
		return -1;
	model_skid = skid;
	p4_model_set_skid(&model, skid);
	return 0;
}

uint32_t perf_model_skid(void)
{
	return model_skid;
}

void perf_model_mem_describe(char *buf, size_t n)
{
	ksnprintf(buf, n, "memory model: %s; clockticks: %s", model_l3 ? "Xeon MP with L3" : "desktop",
		  perf_model_clock_name(model_clock_src));
}

static bool model_no_pebs;

void perf_model_set_pebs_unavailable(bool unavailable)
{
	model_no_pebs = unavailable;
}

int perf_select_model(const struct p4_sig *sig, bool ht, char *err, size_t n)
{
	struct p4_model_config cfg = { .sig = *sig, .ht = ht, .pebs_unavailable = model_no_pebs };
	struct p4_apply_result res;

	if (!p4_caps_lookup(sig, &info.caps) || p4_model_init(&model, &cfg) != 0)
		return ksnprintf(err, n, "the model needs a family 0FH signature such as 0F_04"), -1;
	p4_model_set_active(&model, 0, true);
	info.backend = PERF_BACKEND_MODEL;
	info.sig = *sig;
	info.ht = ht;
	p4_pmu_reset(&model.bus, &info.caps, &res);
	return 0;
}

struct msr_bus *perf_bus(void)
{
	return info.backend == PERF_BACKEND_NONE ? NULL : &model.bus;
}

const struct perf_window *perf_window_inputs(unsigned lp)
{
	(void)lp;
	return NULL;
}

bool perf_machine_fault(char *buf, size_t n)
{
	(void)buf;
	(void)n;
	return false;
}

bool perf_steps_workloads(void)
{
	return info.backend != PERF_BACKEND_NONE;
}

const char *perf_msr_label(void)
{
	return NULL;
}

/* The model's sentence (prof/backend/model.c model_describe) at its longest: every count 2^64 - 1. */
void perf_describe(char *buf, size_t n)
{
	unsigned long long m = UINT64_MAX;

	ksnprintf(buf, n, "model requests OVF_PMI_T0 %llu, OVF_PMI_T1 %llu; PEBS records written "
		  "%llu, lost to a full buffer %llu (since the model was selected)", m, m, m, m);
}

void perf_set_trace(bool on)
{
	info.trace = on;
}

void perf_set_pmi_mode(enum perf_pmi_mode mode)
{
	info.pmi_mode = mode;
}

bool perf_can_inject(void)
{
	return info.backend == PERF_BACKEND_MODEL;
}

int perf_inject(unsigned unflagged, unsigned reloads, char *err, size_t n)
{
	return 0;
}

enum perf_source perf_event_source(enum p4_event ev, const struct perf_inputs *in)
{
	switch (ev) {
	case P4_EV_INSTR_RETIRED:
	case P4_EV_BRANCH_RETIRED:
		return PERF_SOURCE_STEP;
	default:
		return PERF_SOURCE_NONE;
	}
}

/* ---- counting runs: the apply sequence on the model ------------------------------ */

int perf_count_start(struct perf_count *s, const struct p4_plan *plan, uint64_t reload,
		       char *err, size_t n)
{
	struct p4_apply_result res;

	if (!perf_bus())
		return ksnprintf(err, n, "no PMU backend"), -1;
	*s = (struct perf_count){ .plan = *plan, .running = true };
	for (unsigned i = 0; i < plan->n; i++) {
		s->start[i] = plan->req[i].spec.period ? plan->slot[i].preset : reload & P4_COUNTER_MASK;
		s->reload[i] = s->start[i];
		s->plan.slot[i].preset = s->start[i];
	}
	p4_apply(&model.bus, &s->plan, &res);
	fake_prof.starts++;
	active = s;
	return 0;
}

/* The fake runs no runner, so nothing opens a gate: an armed count counts from the start. */
int perf_count_arm(struct perf_count *s, const struct p4_plan *plan, uint64_t reload,
		   char *err, size_t n)
{
	return perf_count_start(s, plan, reload, err, n);
}

void perf_take_pending(void)
{
}

void perf_count_stop(struct perf_count *s, uint64_t *totals)
{
	struct p4_apply_result res;

	for (unsigned i = 0; i < s->plan.n; i++) {
		uint64_t raw = s->start[i];

		p4_counter_read(&model.bus, s->plan.slot[i].counter, &raw);
		if (totals)
			totals[i] = (raw - s->start[i]) & P4_COUNTER_MASK;
	}
	p4_stop(&model.bus, &s->plan, &res);
	s->running = false;
	active = NULL;
}

/* ---- the workload runner: a known stream through the hooks ----------------------- */

static void fake_step(void *ctx, const struct step_info *s)
{
	struct perf_inputs *in = ctx;

	in->steps++;
	p4_model_event(&model, s->lp, s->cpl, P4_EV_INSTR_RETIRED,
		       P4_EVMASK(P4_INSTR_RETIRED_NBOGUSNTAG), 1);
	if (s->branch != INSN_NOT_BRANCH) {
		in->branches++;
		p4_model_event(&model, s->lp, s->cpl, P4_EV_BRANCH_RETIRED,
			       P4_EVMASK(P4_BRANCH_RETIRED_MMTP), 1);
	}
}

void perf_hooks(struct perf_inputs *in, struct workload_hooks *h)
{
	*in = (struct perf_inputs){ 0 };
	*h = (struct workload_hooks){ .ctx = in, .step = fake_step };
}

static void fake_run(struct workload_job *j, uint8_t lp)
{
	struct step_info si = { .lp = lp, .cpl = (uint8_t)(j->ring ? 3 : 0) };

	j->res = (struct workload_result){ .status = WORKLOAD_OK, .fault_vector = -1, .lp = lp,
					   .cpl = si.cpl };
	fake_prof.runs++;
	fake_prof.last_ring = j->ring;
	fake_prof.last_step = j->step;
	fake_prof.last_quiet = fake_prof.quiet;
	if (j->h && j->h->begin)
		j->h->begin(j->h->ctx, lp);
	for (uint64_t k = 1; k <= fake_prof.steps; k++) {
		si.branch = fake_prof.branch_every && k % fake_prof.branch_every == 0 ? INSN_COND
										 : INSN_NOT_BRANCH;
		si.taken = si.branch != INSN_NOT_BRANCH;
		if (j->h && j->h->step && j->step)
			j->h->step(j->h->ctx, &si);
		j->res.step.instructions += j->step;
	}
	if (j->h && j->h->end)
		j->h->end(j->h->ctx, lp);
}

int workload_sibling(const char **why)
{
	if (fake_prof.sibling)
		return 1;
	*why = "no Hyper-Threading sibling: this machine has one logical processor";
	return -1;
}

/* The fake runs nothing unstepped: no watchdog to switch. */
void workload_set_watchdog(bool on)
{
	(void)on;
}

int workload_run_lps(struct workload_job jobs[2], enum workload_start start)
{
	for (unsigned k = 0; k < 2; k++)
		if (jobs[k].a)
			fake_run(&jobs[k], (uint8_t)k);
	return 0;
}

bool smp_is_busy(unsigned lp)
{
	return false;
}

uint64_t timer_tsc_hz(void)
{
	return UINT64_C(2000000000);
}

/* ---- what only the target can do ------------------------------------------------------ */

void progress_set_quiet(bool quiet)
{
	fake_prof.quiet = quiet;
	fake_prof.quiet_calls++;
}

int record_run(const struct record_cfg *cfg, struct record_result *res, char *err, size_t n)
{
	fake_prof.records++;
	return ksnprintf(err, n, "sampling needs the target's interrupts"), -1;
}

const struct sample_run *record_last(void)
{
	return NULL;
}

uint64_t record_generation(void)
{
	return fake_prof.records;
}

int record_floor(unsigned n, uint64_t *regs_tsc, uint64_t *store_tsc, char *err, size_t errlen)
{
	return ksnprintf(err, errlen, "the floor is timed on the target"), -1;
}

const char *ksym_lookup(uint64_t addr, uint64_t *offset)
{
	return NULL;
}

/* An empty kernel symbol table: nothing the host runs is in a kernel image. */
const struct ksym_entry ksym_table[1];
const char ksym_names[1];
const uint32_t ksym_count = 0;
const uint64_t ksym_text_start = 0, ksym_text_end = 0;

struct ksym ksym_get(uint32_t i)
{
	return (struct ksym){ 0 };
}

uint64_t ksym_image_base(void)
{
	return 0;
}

/* No stepped handler on the host. */
const struct step_handler_stats *step_handler_stats_of(unsigned cpu)
{
	(void)cpu;
	return NULL;
}

/* No way in measured on the host (the model is not selected there). */
unsigned step_entry_length(unsigned vector, unsigned cpl)
{
	(void)vector;
	(void)cpl;
	return 0;
}
