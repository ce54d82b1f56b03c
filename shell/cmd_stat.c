/*
 * cmd_stat.c - the counting commands: `stat`, `pmu` and `explain`.
 *
 * stat parses everything first (shell/stat_opts.c: options, requests,
 * cascades), plans the counters (p4_alloc; its diagnosis is the error when
 * the events do not fit), then runs the workload once per repeat inside a
 * counting run (prof/perf.c). Under the model the workload is
 * single-stepped so that its instructions, branches and TSC cycles feed
 * the model; on the hardware PMU it runs at full speed.
 *
 * Hyper-Threading: --cpu 1 runs the workload on LP0's sibling, --cpu both
 * on both LPs, --pair A -- B runs A on LP0 and B on LP1 together (or, with
 * --stagger, B after A). One plan covers both LPs. With HT the planner uses
 * the PMU reference's per-thread split (3.2, Linux perf's halves: LP0 the
 * ESCR0 side with counters 0,1/4,5/8,9/12,13,16, LP1 the ESCR1 side with
 * 2,3/6,7/10,11/14,15,17), so each LP's events sit on its own ESCRs and
 * counters and an ESCR is shared only by identical settings. Each request's
 * OVF_PMI names the LP it counts, whose own handler extends that counter.
 * Thread-independent events (TI) are flagged with what their T-bits mean
 * for them: they count while T0 or T1 is at a CPL the bits name, whichever
 * thread caused them (SDM Table 18-67).
 */
#include "arch/x86/console.h"
#include "arch/x86/cpu.h"
#include "arch/x86/lapic.h"
#include "arch/x86/progress.h"
#include "arch/x86/smp.h"
#include "arch/x86/step.h"
#include "lib/parse.h"
#include "lib/stats.h"
#include "pmu/p4_encode.h"
#include "pmu/p4_events.h"
#include "pmu/p4_explain.h"
#include "pmu/p4_tagging.h"
#include "pmu/p4_regs.h"
#include "prof/backend/model.h"
#include "prof/perf.h"
#include "shell/cmds.h"
#include "shell/platform.h"
#include "shell/shell.h"
#include "shell/stat_opts.h"
#include "shell/stat_uncore.h"

#define STAT_ERR_MAX	600

struct stat_state {
	struct stat_opts o;
	struct stat_reqs reqs;
	struct p4_plan plan;
	struct workload_args args, empty, args_b;
	uint64_t runs[P4_MAX_REQUESTS][STAT_MAX_REPEATS];
	int64_t baseline[P4_MAX_REQUESTS];	/* median x STATS_SCALE */
	struct perf_inputs in;			/* both LPs' inputs together (source tags) */
	struct perf_inputs in_lp[2];		/* LP0's, LP1's */
	uint64_t interrupts, overflows;
	uint64_t ticks;			/* watchdog ticks in the measured runs */
	uint64_t wall_tsc;		/* the last run's TSC from begin to end (stepping included) */
	struct stat_unc unc;		/* uncore events (stat_uncore.c) */
	uint64_t unc_runs[P4_UNC_NREG][STAT_MAX_REPEATS];
	char err[STAT_ERR_MAX];
};

static struct stat_state st;

/* ---- running ------------------------------------------------------------ */

static int stat_status(struct shell *sh, int status, const struct workload_result *res)
{
	switch (status) {
	case WORKLOAD_OK:
		return 0;
	case WORKLOAD_FAULTED:
		return shell_error(sh, "the workload faulted (vector %d); counts discarded",
				   res->fault_vector);
	case WORKLOAD_INTERRUPTED: {
		char why[160];

		return shell_error(sh, "%s; counts discarded", workload_stop_reason(res, why, sizeof(why)));
	}
	default:
		return shell_error(sh, "%s", res->error[0] ? res->error : "workload refused");
	}
}

/* The LPs' inputs as one (for the source tags). */
static void stat_merge_inputs(void)
{
	const struct perf_inputs *b = &st.in_lp[1];

	st.in = st.in_lp[0];
	st.in.steps += b->steps;
	st.in.branches += b->branches;
	st.in.cycles += b->cycles;
	st.in.synthetic_bad += b->synthetic_bad;
	st.in.mem_unknown += b->mem_unknown;
	for (unsigned w = 0; w < sizeof(st.in.mem_fed) / sizeof(st.in.mem_fed[0]); w++)
		st.in.mem_fed[w] |= b->mem_fed[w];
	if (b->synthetic && st.in.synthetic && b->synthetic_event != st.in.synthetic_event)
		st.in.synthetic_mixed = true;
	if (b->synthetic && !st.in.synthetic) {
		st.in.synthetic_event = b->synthetic_event;
		for (unsigned k = 0; k < sizeof(st.in.synthetic_spec); k++)
			st.in.synthetic_spec[k] = b->synthetic_spec[k];
	}
	st.in.synthetic += b->synthetic;
	st.in.synthetic_mixed |= b->synthetic_mixed;
}

/* Which LPs run what: LP0 a (unless --cpu 1), LP1 B of a pair, or a with --cpu 1/both. */
static void stat_jobs(const struct workload_args *a, struct workload_job *jobs,
		      struct workload_hooks *h)
{
	bool step = perf_steps_workloads();
	const struct workload_args *w[2] = {
		st.o.cpu != STAT_CPU_1 ? a : NULL,
		st.o.pair > 0 && a == &st.args ? &st.args_b : st.o.cpu != STAT_CPU_0 ? a : NULL,
	};

	for (int k = 0; k < 2; k++) {
		perf_hooks(&st.in_lp[k], &h[k]);
		jobs[k] = (struct workload_job){ .a = w[k], .step = step, .h = &h[k],
						 .ring = k == 1 && st.o.pair > 0 ? st.o.ring_pair : st.o.ring };
	}
}

/* One measured run of a (and B of a pair); totals[plan.n]. */
static int stat_once(struct shell *sh, const struct workload_args *a, uint64_t *totals)
{
	static struct perf_count sess;
	static struct workload_job jobs[2];
	struct workload_hooks h[2];
	uint64_t before = (perf_take_pending(), perf_info()->pmi.interrupts), flags = read_rflags();
	bool irq = perf_info()->pmi_mode == PERF_PMI_FIXED && !(flags & RFLAGS_IF);
	int r;

	stat_jobs(a, jobs, h);
	/* One LP's workload: the counters count from its runner's gate (perf_count_arm). */
	if ((!jobs[0].a || !jobs[1].a ? perf_count_arm : perf_count_start)(
		    &sess, &st.plan, st.o.preset_set ? st.o.preset : PERF_RELOAD_DEFAULT,
		    st.err, sizeof(st.err))) {
		if (sess.unc_failed >= 0)
			stat_unc_start_error(&st.unc, sess.unc_failed, st.err, sizeof(st.err));
		return shell_error(sh, "%s", st.err);
	}
	progress_set_quiet(st.o.quiet);
	workload_set_watchdog(!st.o.no_watchdog);
	/*
	 * As record: a fixed-vector PMI waits while IF = 0 (SDM Vol. 3A 6.8.1),
	 * so LP0's workload runs with IF = 1 to take its overflows by vector;
	 * the sibling's never does (smp.h), its overflows are found at the stop.
	 */
	if (irq)
		cpu_sti();
	r = workload_run_lps(jobs, st.o.stagger ? WORKLOAD_LP1_AFTER : WORKLOAD_TOGETHER);
	if (irq)
		cpu_cli();
	progress_set_quiet(false);
	workload_set_watchdog(true);
	perf_count_stop(&sess, totals);
	for (unsigned i = 0; i < st.unc.n; i++)
		st.unc.ev[i].total = sess.unc_total[i];
	st.wall_tsc = jobs[0].a ? jobs[0].res.tsc_cycles : jobs[1].res.tsc_cycles;
	stat_merge_inputs();
	st.interrupts += perf_info()->pmi.interrupts - before;
	for (int k = 0; k < 2; k++)
		if (jobs[k].a)
			st.ticks += jobs[k].res.ticks;
	for (unsigned i = 0; i < st.plan.n; i++)
		st.overflows += sess.overflows[i];
	if (sess.storm) {
		perf_storm_text(&sess, p4_events[st.plan.req[sess.storm_idx].spec.event].name, NULL, st.err,
				sizeof(st.err));
		return shell_error(sh, "%s", st.err);
	}
	for (int k = 0; k < 2; k++)
		if (jobs[k].a && (r || jobs[k].res.status != WORKLOAD_OK))
			return stat_status(sh, jobs[k].res.status, &jobs[k].res);
	return 0;
}

static int stat_repeat(struct shell *sh, const struct workload_args *a)
{
	uint64_t totals[P4_MAX_REQUESTS];

	st.interrupts = st.overflows = st.ticks = 0;
	for (unsigned r = 0; r < st.o.repeats; r++) {
		if (r > 0 && plat_interrupted())
			return shell_error(sh, "interrupted after %u run(s)", r);
		if (stat_once(sh, a, totals))
			return 1;
		for (unsigned i = 0; i < st.plan.n; i++)
			st.runs[i][r] = totals[i];
		for (unsigned i = 0; i < st.unc.n; i++)
			st.unc_runs[i][r] = st.unc.ev[i].total;
	}
	return 0;
}

static int stat_baseline(struct shell *sh)
{
	const struct workload *w = workload_find("empty");
	struct stats_summary s;

	if (!w || workload_parse_args(w, 0, NULL, &st.empty, st.err, sizeof(st.err)))
		return shell_error(sh, "--baseline: no 'empty' workload");
	if (stat_repeat(sh, &st.empty))
		return 1;
	for (unsigned i = 0; i < st.plan.n; i++) {
		stats_summarise(st.runs[i], st.o.repeats, &s);
		st.baseline[i] = s.median;
	}
	return 0;
}

/* ---- printing ------------------------------------------------------------ */

/*
 * Where a count's events came from. An event with a real source can also be
 * emitted by `synthetic` (e.g. `synthetic instr_retired:NBOGUSNTAG N`): then
 * the count mixes both and says so, as every count with synthetic input must.
 */
static const char *stat_source_tag(const struct p4_request *r)
{
	enum p4_event ev = r->spec.event;
	bool syn = st.in.synthetic && (st.in.synthetic_mixed || st.in.synthetic_event == ev);

	switch (perf_event_source(ev, &st.in)) {
	case PERF_SOURCE_HW:		return "";
	case PERF_SOURCE_STEP:		return syn ? "[real: stepped + synthetic]" : "[real: stepped]";
	case PERF_SOURCE_TSC:		return syn ? "[real: TSC + synthetic]" : "[real: TSC]";
	case PERF_SOURCE_SYNTHETIC:	return "[synthetic]";
	case PERF_SOURCE_MEMORY:	return syn ? "[memory model + synthetic]" : "[memory model]";
	case PERF_SOURCE_COST:		return syn ? "[cost model + synthetic]" : "[cost model]";
	default:			return "[no model input]";
	}
}

/* Whose events the ESCR's T bits count (Table 18-66's rule). */
static const char *stat_lp_tag(uint64_t escr)
{
	bool t0 = (escr & (ESCR_T0_OS | ESCR_T0_USR)) != 0, t1 = (escr & (ESCR_T1_OS | ESCR_T1_USR)) != 0;

	return t0 && t1 ? "[T0+T1]" : t1 ? "[T1]" : t0 ? "[T0]" : "[no thread]";
}

/* When a thread-independent event counts (Table 18-67, p4_encode.h). */
static const char *stat_ti_cpls(uint64_t escr)
{
	static const char *const when[4] = { "never (no OS/USR bit)", "in OS", "in USR",
					     "at any CPL" };

	return when[p4_ti_cpls(escr)];
}

static void stat_event_line(struct shell *sh, unsigned i, const char *counts)
{
	const struct p4_request *r = &st.plan.req[i];
	const struct p4_slot *slot = &st.plan.slot[i];
	char spec[128];

	p4_spec_format(&r->spec, spec, sizeof(spec));
	shell_printf(sh, "%s  %s  counter %u (%s) ESCR %s %s", counts, spec, slot->counter,
		     p4_counters[slot->counter].name, p4_escrs[slot->escr].name, stat_source_tag(r));
	if (st.reqs.tbits[i].given)
		shell_printf(sh, " T-bits %llXH", (unsigned long long)(slot->escr_value & BITS(3, 0)));
	if (st.plan.ht && (p4_events[r->spec.event].flags & P4_EVF_TI))
		shell_printf(sh, " [TI: thread independent, counts while T0 or T1 is %s (SDM Table 18-67)]",
			     stat_ti_cpls(slot->escr_value));
	else if (st.plan.ht)
		shell_printf(sh, " %s", stat_lp_tag(slot->escr_value));
	if (st.reqs.starter[i])
		shell_printf(sh, " (starter: overflows after %llu)", (unsigned long long)r->spec.period);
	if (r->role == P4_ROLE_CASCADE)
		shell_printf(sh, " (counts after #%u's %lluth event, %s%s)", r->started_by + 1,
			     (unsigned long long)st.plan.req[r->started_by].spec.period,
			     slot->link && slot->link->extended ? slot->link->name : "bit 30 cascade",
			     st.reqs.pmi_lost[i] ? "; no PMI on this part: 40 bits only" : "");
	shell_puts(sh, "\n");
}

static void stat_summary(unsigned i, struct stats_summary *s)
{
	uint64_t copy[STAT_MAX_REPEATS];

	for (unsigned r = 0; r < st.o.repeats; r++)
		copy[r] = st.runs[i][r];
	stats_summarise(copy, st.o.repeats, s);
	if (st.o.baseline)
		stats_subtract(s, st.baseline[i]);
}

/*
 * The first plain count of ev: not a cascaded counter (it starts late) and
 * not a compare-mode one (that counts cycles meeting a threshold, not events).
 */
static int stat_find(enum p4_event ev)
{
	for (unsigned i = 0; i < st.plan.n; i++) {
		const struct p4_spec *sp = &st.plan.req[i].spec;

		if (sp->event == ev && st.plan.req[i].role != P4_ROLE_CASCADE && !sp->compare)
			return (int)i;
	}
	return -1;
}

static void stat_ipc(struct shell *sh)
{
	int ins = stat_find(P4_EV_INSTR_RETIRED), clk = stat_find(P4_EV_GLOBAL_POWER_EVENTS);
	struct stats_summary a, b;
	uint64_t micro;

	if (ins < 0 || clk < 0)
		return;
	stat_summary((unsigned)ins, &a);
	stat_summary((unsigned)clk, &b);
	if (b.median <= 0 || a.median < 0)
		return;
	/* Six decimals: under the model in QEMU -icount one clocktick is 1/128 instruction. */
	micro = (uint64_t)a.median * 1000000 / (uint64_t)b.median;
	shell_printf(sh, "IPC %llu.%06llu (instr_retired / global_power_events%s)\n",
		     (unsigned long long)(micro / 1000000), (unsigned long long)(micro % 1000000),
		     st.o.repeats > 1 ? ", medians" : "");
}

/*
 * The kernel's own code the model stepped in the last run's counting
 * window (arch/x86/step.h): a P4 counts it at CPL 0 as it counts the
 * workload, and the model, which has no other way to see it, steps it.
 * Only the model feeds it (perf_window_inputs is NULL otherwise); per LP,
 * the share fed while a counter ran, by CPL (struct perf_window).
 */
static void stat_window(struct shell *sh)
{
	const struct perf_window *w[2] = { perf_window_inputs(0), perf_window_inputs(1) };
	struct perf_inputs sum = { 0 };

	if (!w[0])
		return;
	for (unsigned lp = 0; lp < 2; lp++) {
		sum.steps += w[lp] ? w[lp]->in.steps : 0;
		sum.branches += w[lp] ? w[lp]->in.branches : 0;
		sum.cycles += w[lp] ? w[lp]->in.cycles : 0;
	}
	shell_printf(sh, "model: kernel code in the counting window: %llu stepped instructions, "
		     "%llu branches, %llu cycles (the model steps it as a P4 counts it); while a "
		     "counter ran: LP0 %llu at CPL 0, %llu at CPL 3",
		     (unsigned long long)sum.steps, (unsigned long long)sum.branches,
		     (unsigned long long)sum.cycles, (unsigned long long)w[0]->running_cpl0,
		     (unsigned long long)w[0]->running_cpl3);
	if (w[1] && w[1]->in.steps)
		shell_printf(sh, "; LP1 %llu at CPL 0, %llu at CPL 3",
			     (unsigned long long)w[1]->running_cpl0,
			     (unsigned long long)w[1]->running_cpl3);
	shell_puts(sh, "\n");
}

static void stat_inputs(struct shell *sh)
{
	const struct perf_info *pi = perf_info();
	char sig[8];

	p4_sig_format(&pi->sig, sig, sizeof(sig));
	shell_printf(sh, "backend: %s %s%s%s", perf_backend_name(pi->backend), sig,
		     pi->ht ? " with HT" : "", pi->probe_failed ? " (probe FAILED)" : "");
	if (!perf_steps_workloads()) {
		shell_printf(sh, "; the workload ran unstepped%s\n",
			     st.in.synthetic ? "; synthetic events are not counted by hardware" : "");
		return;
	}
	shell_printf(sh, "; inputs (last run): real: %llu stepped instructions, %llu branches, %llu "
		     "%s; ", (unsigned long long)st.in.steps,
		     (unsigned long long)st.in.branches, (unsigned long long)st.in.cycles,
		     perf_event_source(P4_EV_GLOBAL_POWER_EVENTS, &st.in) == PERF_SOURCE_COST ?
		     "clockticks from the cost model (a model, not measured)" : "TSC cycles");
	shell_puts(sh, "synthetic: ");
	if (st.in_lp[1].steps || st.in_lp[1].synthetic)
		shell_printf(sh, "(LP0 %llu steps %llu synthetic, LP1 %llu steps %llu synthetic) ",
			     (unsigned long long)st.in_lp[0].steps,
			     (unsigned long long)st.in_lp[0].synthetic,
			     (unsigned long long)st.in_lp[1].steps,
			     (unsigned long long)st.in_lp[1].synthetic);
	if (st.in.synthetic)
		shell_printf(sh, "%llu x %s%s\n", (unsigned long long)st.in.synthetic,
			     st.in.synthetic_spec, st.in.synthetic_mixed ? " (and others)" : "");
	else
		shell_puts(sh, "none\n");
	if (st.in.synthetic_bad)
		shell_printf(sh, "warning: %llu synthetic occurrence(s) had a spec the model rejects\n",
			     (unsigned long long)st.in.synthetic_bad);
	if (st.in.mem_unknown)
		shell_printf(sh, "memory model: %llu stepped instruction(s) with operands the decoder does "
			     "not know: only their fetch was modelled\n",
			     (unsigned long long)st.in.mem_unknown);
	stat_window(sh);
	shell_printf(sh, "wall: %llu TSC cycles (last run, stepping and the model included)\n",
		     (unsigned long long)st.wall_tsc);
}

/* The uncore counts (package-wide; --baseline is not subtracted from them). */
static void stat_unc_lines(struct shell *sh)
{
	char buf[4][24], spec[96];

	for (unsigned i = 0; i < st.unc.n; i++) {
		const struct stat_unc_event *e = &st.unc.ev[i];
		const struct p4_unc_reg *r = p4_unc_reg_at(perf_info()->caps.uncore, e->reg);
		struct stats_summary s;

		stats_summarise(st.unc_runs[i], st.o.repeats, &s);
		stats_format(s.median, buf[1], sizeof(buf[1]));
		p4_unc_spec_format(&e->spec, spec, sizeof(spec));
		if (st.o.repeats > 1) {
			stats_format(s.min, buf[0], sizeof(buf[0]));
			stats_format(s.tmean, buf[2], sizeof(buf[2]));
			stats_format(s.max, buf[3], sizeof(buf[3]));
			shell_printf(sh, "%14s %14s %14s %14s", buf[0], buf[1], buf[2], buf[3]);
		} else {
			shell_printf(sh, "%14s", buf[1]);
		}
		shell_printf(sh, "  %s  uncore %s (%XH, RDPMC %u) [package]%s%s\n", spec,
			     r ? r->name : "?", MSR_P4_UNCORE_FIRST + e->reg, P4_UNC_RDPMC_FIRST + e->reg,
			     perf_info()->backend == PERF_BACKEND_MODEL ? " [memory model]" : "",
			     st.o.baseline ? " (no baseline subtracted)" : "");
	}
}

static void stat_print(struct shell *sh, int argc, char **argv)
{
	char buf[4][24], line[128];

	static const char *const where[] = { "LP0", "LP1", "LP0 and LP1" };

	shell_puts(sh, "stat:");
	for (int k = st.o.workload; k < argc; k++)
		shell_printf(sh, " %s", argv[k]);
	shell_printf(sh, " (ring %d, %u run%s%s, %s)\n", st.o.ring, st.o.repeats,
		     st.o.repeats > 1 ? "s" : "",
		     st.o.baseline ? ", baseline 'empty' median subtracted" : "",
		     st.o.pair > 0 ? (st.o.stagger ? "A on LP0, then B on LP1" : "A on LP0, B on LP1")
				   : where[st.o.cpu]);
	if (st.o.repeats > 1)
		shell_printf(sh, "%14s %14s %14s %14s  event\n", "min", "median", "tmean", "max");
	for (unsigned i = 0; i < st.plan.n; i++) {
		struct stats_summary s;

		stat_summary(i, &s);
		stats_format(s.median, buf[1], sizeof(buf[1]));
		if (st.o.repeats > 1) {
			stats_format(s.min, buf[0], sizeof(buf[0]));
			stats_format(s.tmean, buf[2], sizeof(buf[2]));
			stats_format(s.max, buf[3], sizeof(buf[3]));
			ksnprintf(line, sizeof(line), "%14s %14s %14s %14s", buf[0], buf[1], buf[2], buf[3]);
		} else {
			ksnprintf(line, sizeof(line), "%14s", buf[1]);
		}
		stat_event_line(sh, i, line);
	}
	stat_unc_lines(sh);
	stat_ipc(sh);
	stat_inputs(sh);
	shell_printf(sh, "overflow interrupts: %llu (counters reloaded: %llu)\n",
		     (unsigned long long)st.interrupts, (unsigned long long)st.overflows);
	if (st.ticks)	/* an unstepped run's Ctrl-C watchdog (workload/workloads.c) */
		shell_printf(sh, "watchdog ticks: %llu in the runs (kernel code: counted at :k)\n",
			     (unsigned long long)st.ticks);
}

/* ---- stat ---------------------------------------------------------------- */

/* --cpu / --pair need LP0's sibling and a PMU shared by two LPs; both degrades to LP0. */
static int stat_prepare_lps(struct shell *sh)
{
	const char *why = "";

	if (st.o.cpu == STAT_CPU_0 && st.o.pair == 0)
		return 0;
	if (workload_sibling(&why) < 0) {
		if (st.o.cpu != STAT_CPU_BOTH)
			return shell_error(sh, "%s: %s", st.o.pair > 0 ? "--pair" : "--cpu 1", why);
		shell_printf(sh, "note: %s; counting LP0 only\n", why);
		st.o.cpu = STAT_CPU_0;
		return 0;
	}
	if (!perf_info()->ht)
		return shell_error(sh, "the PMU backend is not shared by two LPs (no Hyper-Threading): "
				   "try 'pmu backend model 0F_04 ht'");
	return 0;
}

/* A synthetic spec must name an event this model has (else it would feed nothing). */
static int stat_check_synthetic(struct shell *sh, const struct workload_args *a)
{
	static struct p4_spec_error e;
	struct p4_spec spec;

	if (a->w->id != WL_SYNTHETIC ||
	    p4_spec_parse(a->spec, &perf_info()->caps, &spec, &e) == 0)
		return 0;
	return shell_error(sh, "synthetic: '%s': %s", a->spec, e.msg);
}

static int stat_parse_b(struct shell *sh, int argc, char **argv)
{
	const struct workload *w = workload_find(argv[st.o.pair]);

	if (!w)
		return shell_error(sh, "unknown workload '%s' (try 'workloads')", argv[st.o.pair]);
	if (workload_parse_args(w, argc - st.o.pair - 1, argv + st.o.pair + 1, &st.args_b,
				st.err, sizeof(st.err)))
		return shell_error(sh, "%s", st.err);
	return stat_check_synthetic(sh, &st.args_b);
}

/*
 * --preset V reloads every counter with V at each overflow: a period of
 * 2^40 - V events. The rule for samplers (pmu/p4_alloc.h p4_pmi_refusal)
 * holds for it too: a counter that interrupts and counts CPL 0 (its ESCR's
 * OS bits, :t0=/:t1= included) with so short a period would overflow again
 * inside its own handler, for ever.
 */
static int stat_preset_check(struct shell *sh)
{
	uint64_t dist = (P4_COUNTER_MASK - (st.o.preset & P4_COUNTER_MASK)) + 1;

	unsigned k = 0;
	char text[320];

	if (!st.o.preset_set)
		return 0;
	for (unsigned i = 0; i < st.plan.n; i++)	/* the CPL-0 samplers, whose tails add up */
		k += (st.plan.slot[i].escr_value & (ESCR_T0_OS | ESCR_T1_OS)) &&
		     (st.plan.slot[i].cccr_value & (CCCR_OVF_PMI_T0 | CCCR_OVF_PMI_T1));
	for (unsigned i = 0; i < st.plan.n; i++) {
		struct p4_spec spec = st.plan.req[i].spec;
		const char *why;

		spec.period = dist;
		spec.os = (st.plan.slot[i].escr_value & (ESCR_T0_OS | ESCR_T1_OS)) != 0;
		why = p4_pmi_refusal(&spec, (st.plan.slot[i].cccr_value &
					     (CCCR_OVF_PMI_T0 | CCCR_OVF_PMI_T1)) != 0, k, text,
				     sizeof(text));
		if (why)
			return shell_error(sh, "stat: --preset %llXH reloads #%u every %llu events: %s",
					   (unsigned long long)st.o.preset, i, (unsigned long long)dist, why);
	}
	return 0;
}

static int stat_prepare(struct shell *sh, int argc, char **argv)
{
	const struct perf_info *pi = perf_info();
	const struct workload *w;
	/* PMU reference 3.2: with HT each LP's events go on its own half (see the top) */
	struct p4_alloc_ctx ctx = { .caps = &pi->caps, .ht = pi->ht,
				    .split = pi->ht ? P4_SPLIT_LINUX : P4_SPLIT_GLOBAL };
	static struct p4_alloc_error aerr;

	if (stat_opts_parse(argc, argv, &st.o, st.err, sizeof(st.err)))
		return shell_error(sh, "%s", st.err);
	if (pi->backend == PERF_BACKEND_NONE)
		return shell_error(sh, "no PMU backend: %s", pi->reason);
	if (stat_unc_take(&st.o, &pi->caps, &st.unc, st.err, sizeof(st.err)))
		return shell_error(sh, "%s", st.err);
	if (stat_prepare_lps(sh))
		return 1;
	w = workload_find(argv[st.o.workload]);
	if (!w)
		return shell_error(sh, "unknown workload '%s' (try 'workloads')", argv[st.o.workload]);
	if (workload_parse_args(w, st.o.workload_end - st.o.workload - 1, argv + st.o.workload + 1,
				&st.args, st.err, sizeof(st.err)))
		return shell_error(sh, "%s", st.err);
	if (stat_check_synthetic(sh, &st.args))
		return 1;
	if (st.o.pair > 0 && stat_parse_b(sh, argc, argv))
		return 1;
	stat_opts_rings(&st.o, st.args.w, st.o.pair > 0 ? st.args_b.w : NULL);
	if (stat_build_requests(&st.o, &pi->caps, &st.reqs, st.err, sizeof(st.err)))
		return shell_error(sh, "%s", st.err);
	/* never a silent 0: tagged events without their tagging are refused (p4_tagging.h) */
	if (p4_tag_why(st.reqs.req, st.reqs.n, st.err, sizeof(st.err)))
		return shell_error(sh, "stat: %s", st.err);
	if (p4_alloc_plan(&ctx, st.reqs.req, st.reqs.n, &st.plan, &aerr))
		return shell_error(sh, "%s", aerr.msg);
	if (stat_apply_tbits(&st.reqs, &st.plan, st.err, sizeof(st.err)))
		return shell_error(sh, "%s", st.err);
	if (stat_preset_check(sh))
		return 1;
	stat_unc_plan(&st.unc, &st.plan);
	return 0;
}

static int cmd_stat(struct shell *sh, int argc, char **argv)
{
	if (stat_prepare(sh, argc, argv))
		return 1;
	if (st.o.baseline && stat_baseline(sh))
		return 1;
	if (stat_repeat(sh, &st.args))
		return 1;
	stat_print(sh, argc, argv);
	return 0;
}

/* ---- pmu ----------------------------------------------------------------- */

/* Under the model: the events of each input kind, one line per kind. */
static void pmu_sources(struct shell *sh)
{
	static const struct { enum perf_source src; const char *what; } kinds[] = {
		{ PERF_SOURCE_STEP, "stepped instructions" },
		{ PERF_SOURCE_MEMORY, "the memory model" },
		{ PERF_SOURCE_COST, "the cost model" },
		{ PERF_SOURCE_TSC, "TSC time" },
		{ PERF_SOURCE_NONE, "nothing (counts 0 unless the synthetic workload emits them)" },
	};

	if (perf_info()->backend != PERF_BACKEND_MODEL)
		return;
	for (unsigned k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		unsigned n = 0;

		for (unsigned ev = 0; ev < P4_NEVENT; ev++) {
			if (perf_event_source((enum p4_event)ev, NULL) != kinds[k].src)
				continue;
			if (n++ == 0)
				shell_printf(sh, "model input from %s:", kinds[k].what);
			shell_printf(sh, " %s", p4_events[ev].name);
		}
		if (n)
			shell_puts(sh, "\n");
	}
}

/*
 * The model steps the PMI handler (arch/x86/step.h): what it retired at
 * CPL 0 in the last count, and its tail after a counter's restart, which a
 * sampler counting CPL 0 counts again (pmu/p4_alloc.h P4_PMI_TAIL_MAX,
 * `make bench`, tests/qemu/test_storm.py).
 */
static void pmu_print_handler(struct shell *sh)
{
	const struct step_handler_stats *h = step_handler_stats_of(0);

	if (!h || perf_info()->backend != PERF_BACKEND_MODEL)
		return;
	if (h->ticks)	/* a workload's HLT woke, or the model's tick (step.h step_tick_every) */
		shell_printf(sh, "timer ticks on LP0 in the last count (model, stepped): %llu, %llu "
			     "instructions at CPL 0 per tick from its entry to its IRET (way in %u / %u "
			     "from CPL 0 / 3)\n",
			     (unsigned long long)h->ticks, (unsigned long long)(h->tick_insns / h->ticks),
			     step_entry_length(LAPIC_TIMER_VECTOR, 0), step_entry_length(LAPIC_TIMER_VECTOR, 3));
	if (!h->handlers)
		return;
	shell_printf(sh, "PMI handler on LP0 in the last count (model, stepped): %llu PMIs, %llu "
		     "instructions at CPL 0 per PMI from its entry to its IRET",
		     (unsigned long long)h->handlers, (unsigned long long)(h->insns / h->handlers));
	if (h->tails)
		shell_printf(sh, "; after a counter's restart %llu at most (the limit is %u)",
			     (unsigned long long)h->tail_max, P4_PMI_TAIL_MAX);
	shell_puts(sh, "\n");
	shell_printf(sh, "PMI way in, counted with it (stub, isr_common, dispatcher): NMI %u / %u, "
		     "vector %XH %u / %u instructions from CPL 0 / 3\n",
		     step_entry_length(VEC_NMI, 0), step_entry_length(VEC_NMI, 3), LAPIC_PMI_VECTOR,
		     step_entry_length(LAPIC_PMI_VECTOR, 0), step_entry_length(LAPIC_PMI_VECTOR, 3));
}

static void pmu_show(struct shell *sh)
{
	const struct perf_info *pi = perf_info();
	const struct p4_caps *c = &pi->caps;
	const struct perf_pmi_stats *p = &pi->pmi;
	struct msr_bus *bus = perf_bus();
	char sig[8], detail[256];	/* the model's sentence is up to ~210 characters */
	unsigned used = 0;

	shell_printf(sh, "backend: %s (%s)\n", perf_backend_name(pi->backend), pi->reason);
	if (!bus)
		return;
	p4_sig_format(&pi->sig, sig, sizeof(sig));
	const char *why = "";
	int sib = workload_sibling(&why);

	shell_printf(sh, "signature: %s stepping %u, %s%s\n", sig, pi->sig.stepping,
		     pi->ht ? "Hyper-Threading (2 LPs share the PMU; LP1 " : "no Hyper-Threading",
		     !pi->ht ? "" : sib < 0 ? "not started)" : smp_is_busy((unsigned)sib) ?
		     "running work)" : "halted)");
	shell_printf(sh, "caps: %u ESCRs, IQ_ESCR0/1 %s, extended cascading %s, cascade PMI erratum "
		     "%s, instr_completed %s, uncore %s\n", c->nescr, c->iq_escr01 ? "yes" : "no",
		     c->ext_cascade ? "yes" : "no", c->cascade_pmi_erratum ? "yes" : "no",
		     c->instr_completed ? "yes" : "no", c->uncore_name ? c->uncore_name : "none");
	if (pi->backend == PERF_BACKEND_MODEL) {
		char mem[360];

		perf_model_mem_describe(mem, sizeof(mem));
		if (mem[0])
			shell_printf(sh, "%s\n", mem);
		pmu_sources(sh);
	}
	shell_printf(sh, "PMI: %s; interrupts %llu, overflows %llu, unflagged %llu, re-raised %llu, "
		     "deferred %llu, dropped %llu, late %llu\n",
		     pi->pmi_mode == PERF_PMI_NMI ? "LVT PC NMI" : "LVT PC vector F8H (fixed)",
		     (unsigned long long)p->interrupts, (unsigned long long)p->overflows,
		     (unsigned long long)p->unflagged, (unsigned long long)p->reraised,
		     (unsigned long long)p->deferred, (unsigned long long)p->dropped,
		     (unsigned long long)p->late);
	if (pi->backend == PERF_BACKEND_MODEL)
		shell_printf(sh, "PMI skid: %u events (the PMI comes on event %u after the overflow; "
			     "'pmu skid N' sets it)\n", (unsigned)perf_model_skid(),
			     (unsigned)perf_model_skid() + 1);
	shell_printf(sh, "PMI entries: vector %02XH %llu, NMI %llu\n", LAPIC_PMI_VECTOR,
		     (unsigned long long)p->by_vector, (unsigned long long)p->by_nmi);
	shell_printf(sh, "PMI by LP: handled on LP0 %llu, on LP1 %llu",
		     (unsigned long long)p->lp_interrupts[0], (unsigned long long)p->lp_interrupts[1]);
	perf_describe(detail, sizeof(detail));
	if (detail[0])
		shell_printf(sh, "; %s", detail);
	shell_puts(sh, "\n");
	pmu_print_handler(sh);
	shell_printf(sh, "trace: %s\ncounters in use:", pi->trace ? "on" : "off");
	for (unsigned n = 0; n < P4_NCOUNTER; n++) {
		uint64_t v = 0;

		if (msr_bus_read(bus, p4_counters[n].cccr_msr, &v) == 0 &&
		    (v & (CCCR_ENABLE | CCCR_CASCADE | CCCR_EXT_CASCADE))) {
			shell_printf(sh, " %u (%s = %08llXH)", n, p4_counters[n].cccr_name,
				     (unsigned long long)v);
			used++;
		}
	}
	shell_puts(sh, used ? "\n" : " none\n");
}

static int pmu_onoff(struct shell *sh, int argc, char **argv, bool *on)
{
	if (argc == 3 && parse_streq(argv[2], "on"))
		*on = true;
	else if (argc == 3 && parse_streq(argv[2], "off"))
		*on = false;
	else
		return shell_error(sh, "usage: %s %s on|off", argv[0], argv[1]);
	return 0;
}

static int pmu_backend(struct shell *sh, int argc, char **argv)
{
	struct p4_sig sig = perf_info()->sig;
	bool ht = perf_info()->ht, l3 = false;
	char err[192];

	if (argc == 3 && parse_streq(argv[2], "hw")) {
		if (perf_select_hw(err, sizeof(err)))
			return shell_error(sh, "cannot use the hardware PMU: %s", err);
	} else if (argc >= 3 && argc <= 7 && parse_streq(argv[2], "model")) {
		bool nopebs = false;

		for (int k = 3; k < argc; k++) {
			if (parse_streq(argv[k], "ht"))
				ht = true;
			else if (parse_streq(argv[k], "noht"))
				ht = false;
			else if (parse_streq(argv[k], "l3"))
				l3 = true;
			else if (parse_streq(argv[k], "nopebs"))
				nopebs = true;	/* IA32_MISC_ENABLE bit 12 set (PMU reference 5.1) */
			else if (stat_parse_sig(argv[k], &sig))
				return shell_error(sh, "bad signature '%s' (e.g. 0F_04, 0F_02H:9)", argv[k]);
		}
		if (sig.family == 0)
			return shell_error(sh, "this CPU is not NetBurst: name a model signature, e.g. "
					   "'pmu backend model 0F_04'");
		perf_model_set_l3(l3);
		perf_model_set_pebs_unavailable(nopebs);
		if (perf_select_model(&sig, ht, err, sizeof(err)))
			return shell_error(sh, "%s", err);
	} else {
		return shell_error(sh, "usage: pmu backend hw | pmu backend model [SIG] [ht|noht] [l3] "
				   "[nopebs]");
	}
	shell_printf(sh, "backend: %s\n", perf_backend_name(perf_info()->backend));
	if (perf_info()->probe_failed)
		shell_printf(sh, "warning: probe FAILED: %s\n", perf_info()->probe);
	return 0;
}

/*
 * `pmu bench [N]`: TSC cycles of stat's counting sequence around a
 * workload - perf_count_start (plan applied: CCCRs off, ESCRs, counters
 * written twice, CCCRs on, read back) and perf_count_stop (counters read,
 * CCCRs off, totals) - for the default pair, N times. Under QEMU with
 * -icount shift=7 a TSC cycle is 1 ns of virtual time and an instruction
 * 128 of them (tools/dev/bench.py).
 */
static int pmu_bench(struct shell *sh, int argc, char **argv)
{
	static struct perf_count sess;
	static uint64_t t[STAT_MAX_REPEATS];
	uint64_t n = 100, totals[P4_MAX_REQUESTS];
	char *words[] = { "stat", "empty" };
	struct stats_summary s;
	const char *why;
	char buf[4][24];

	if (argc > 3 || (argc == 3 && !parse_u64(argv[2], STAT_MAX_REPEATS, &n, &why)) || n == 0)
		return shell_error(sh, "usage: pmu bench [N] (1 .. %d)", STAT_MAX_REPEATS);
	if (stat_prepare(sh, 2, words))
		return 1;
	for (unsigned i = 0; i < n; i++) {
		uint64_t t0 = rdtsc();

		if (perf_count_start(&sess, &st.plan, PERF_RELOAD_DEFAULT, st.err, sizeof(st.err)))
			return shell_error(sh, "%s", st.err);
		perf_count_stop(&sess, totals);
		t[i] = rdtsc() - t0;
	}
	stats_summarise(t, (unsigned)n, &s);
	stats_format(s.min, buf[0], sizeof(buf[0]));
	stats_format(s.median, buf[1], sizeof(buf[1]));
	stats_format(s.tmean, buf[2], sizeof(buf[2]));
	stats_format(s.max, buf[3], sizeof(buf[3]));
	shell_printf(sh, "start+stop+read, %llu runs, TSC cycles: min %s median %s tmean %s max %s\n",
		     (unsigned long long)n, buf[0], buf[1], buf[2], buf[3]);
	return 0;
}

/*
 * `pmu rdpmc N`: RDPMC with ECX = N through the backend - the model answers
 * for its registers (0-17: 40-bit counters; 18-25: the uncore counters'
 * low 32 bits with EDX 0, SDM 18.20). Bit 31 of N asks for the fast read.
 */
static int pmu_rdpmc(struct shell *sh, int argc, char **argv)
{
	uint64_t ecx, v;
	const char *why;

	if (argc != 3 || !parse_u64(argv[2], UINT32_MAX, &ecx, &why))
		return shell_error(sh, "usage: pmu rdpmc N (ECX: 0-17 counters, 18-25 uncore)");
	if (perf_rdpmc((uint32_t)ecx, &v))
		return shell_error(sh, "RDPMC %llu: #GP (no such counter on this part)",
				   (unsigned long long)ecx);
	shell_printf(sh, "RDPMC %llu: EDX %08llXH EAX %08llXH = %llu\n", (unsigned long long)ecx,
		     (unsigned long long)(v >> 32), (unsigned long long)(v & 0xffffffffu),
		     (unsigned long long)v);
	return 0;
}

/*
 * `pmu skid [N]`: the model's PMI skid (prof/backend/model.h). The manual
 * gives no figure for the latency between an overflow's PMI event and the
 * interrupt, so software must hold for any: the model lets a test choose.
 */
static int pmu_skid(struct shell *sh, int argc, char **argv)
{
	uint64_t v;
	const char *why;

	if (perf_info()->backend != PERF_BACKEND_MODEL)
		return shell_error(sh, "pmu skid: only the model's PMI latency can be set (a processor "
				   "has its own)");
	if (argc == 3 && !parse_u64(argv[2], PERF_MODEL_SKID_MAX, &v, &why))
		return shell_error(sh, "pmu skid: '%s' %s (0 .. %u events)", argv[2], why,
				   (unsigned)PERF_MODEL_SKID_MAX);
	if (argc > 3)
		return shell_error(sh, "usage: pmu skid [N] (0 .. %u events)", (unsigned)PERF_MODEL_SKID_MAX);
	if (argc == 3 && perf_model_set_skid((uint32_t)v))
		return shell_error(sh, "pmu skid: %llu is over %u", (unsigned long long)v,
				   (unsigned)PERF_MODEL_SKID_MAX);
	shell_printf(sh, "PMI skid: %u events\n", (unsigned)perf_model_skid());
	return 0;
}

static int cmd_pmu(struct shell *sh, int argc, char **argv)
{
	bool on = false;

	if (argc == 1) {
		pmu_show(sh);
		return 0;
	}
	if (parse_streq(argv[1], "backend"))
		return pmu_backend(sh, argc, argv);
	if (parse_streq(argv[1], "trace")) {
		if (pmu_onoff(sh, argc, argv, &on))
			return 1;
		perf_set_trace(on);
		shell_printf(sh, "trace: %s\n", on ? "on" : "off");
		return 0;
	}
	if (parse_streq(argv[1], "pmi")) {
		if (argc != 3 || !(parse_streq(argv[2], "fixed") || parse_streq(argv[2], "nmi")))
			return shell_error(sh, "usage: pmu pmi fixed|nmi");
		perf_set_pmi_mode(parse_streq(argv[2], "nmi") ? PERF_PMI_NMI : PERF_PMI_FIXED);
		shell_printf(sh, "PMI delivery: %s\n", argv[2]);
		return 0;
	}
	if (parse_streq(argv[1], "bench"))
		return pmu_bench(sh, argc, argv);
	if (parse_streq(argv[1], "rdpmc"))
		return pmu_rdpmc(sh, argc, argv);
	if (parse_streq(argv[1], "clock")) {
		if (argc != 3 || !(parse_streq(argv[2], "tsc") || parse_streq(argv[2], "model")))
			return shell_error(sh, "usage: pmu clock tsc|model");
		perf_model_set_clock(parse_streq(argv[2], "tsc") ? PERF_CLOCK_TSC : PERF_CLOCK_MODEL);
		shell_printf(sh, "model clockticks: %s\n", perf_model_clock_name(perf_model_clock()));
		return 0;
	}
	if (parse_streq(argv[1], "skid"))
		return pmu_skid(sh, argc, argv);
	return shell_error(sh, "unknown pmu operation '%s' (backend, trace, pmi, bench, clock, skid, "
			   "rdpmc)",
			   argv[1]);
}

/* ---- explain ------------------------------------------------------------- */

static void explain_line(void *ctx, const char *s)
{
	shell_printf(ctx, "%s\n", s);
}

static int cmd_explain(struct shell *sh, int argc, char **argv)
{
	struct p4_msr_write w[16];
	const struct perf_info *pi = perf_info();
	struct p4_caps caps;
	const struct p4_caps *cp = &pi->caps;
	unsigned n;
	int problems;

	if (stat_parse_writes(argc - 1, argv + 1, w, 16, &n, st.err, sizeof(st.err)))
		return shell_error(sh, "%s", st.err);
	if (pi->backend == PERF_BACKEND_NONE) {
		struct p4_sig sig = { 0x0f, 4, 1 };

		p4_caps_lookup(&sig, &caps);
		cp = &caps;
		shell_puts(sh, "(not a NetBurst CPU: explaining for 0F_04H)\n");
	}
	problems = p4_explain(w, n, cp, pi->ht || pi->backend == PERF_BACKEND_NONE, explain_line, sh);
	shell_printf(sh, "%d problem(s)\n", problems);
	return 0;
}

const struct shell_cmd perf_shell_cmds[] = {
	{ "stat", "stat [-e SPEC [--after N:SPEC]]... [-r N] [--ring 0|3] [--baseline] "
		  "[--preset VALUE] [--quiet] [--no-watchdog] [--cpu 0|1|both] [--] WORKLOAD [ARGS] | "
		  "stat ... [--stagger] "
		  "--pair A [ARGS] -- [--ring 0|3] B [ARGS]",
	  "count events over a workload (perf stat style)",
	  "Counts the events over one run of WORKLOAD (see 'workloads') and prints each\n"
	  "count with its canonical spec, the counter and ESCR used, and IPC when both\n"
	  "instr_retired and global_power_events are counted. Counts are 64-bit: each\n"
	  "counter interrupts on overflow and is extended in software.\n"
	  "  -e SPEC        event spec (see 'events'), or perf's generic name (cycles,\n"
	  "                 instructions, cache-references, cache-misses, branches,\n"
	  "                 branch-misses, bus-cycles; clockticks) with modifiers;\n"
	  "                 default: global_power_events:RUNNING\n"
	  "                 and instr_retired. :t0=P and :t1=P (P = u, k, uk or -) set the\n"
	  "                 ESCR's T0/T1 OS/USR bits directly (SDM Table 18-66).\n"
	  "                 An uncore spec (ibusq, isnpq, efsb[:FIELD=N]..., see 'events\n"
	  "                 ibusq') counts the package's L3/FSB counters 107CCH-107D3H next\n"
	  "                 to the core events (0F_03/0F_04 with an L3: 'pmu backend model\n"
	  "                 0F_04 l3'); 32-bit counts extended to 64 bits by polling.\n"
	  "  --after N:SPEC the -e before it counts only after SPEC has occurred N times\n"
	  "                 (cascading: bit 30 within a block, or bit 11 from counters\n"
	  "                 16/17 on 0F_02/03/04/06); SPEC is counted and shown too.\n"
	  "                 Same: -e A -e B:after=N. Refused where no link exists.\n"
	  "  -r N           repeat N times (1-256): min, median, 20-80% trimmed mean, max\n"
	  "  --ring 0|3     run the workload in ring 0 (default) or ring 3\n"
	  "  --baseline     subtract the median of the same events over 'empty'\n"
	  "  --quiet        no '# stepped N' progress line (runs over 1 s, model)\n"
	  "  --no-watchdog  an unstepped run (the hardware's) without its Ctrl-C tick\n"
	  "                 every 100 ms, whose kernel code counts at :k (stat says how\n"
	  "                 many ticks fell in the runs): Ctrl-C and a program's time\n"
	  "                 limit then do not work, a run that never ends needs a reset\n"
	  "  --preset V     test aid: counters start at V (40 bits, bit 39 set) and are\n"
	  "                 reloaded with V on every overflow, forcing wraps every\n"
	  "                 2^40 - V events; totals stay exact (at CPL 0 only with\n"
	  "                 more than 128 events to the wrap, as for record's -c)\n"
	  "  --cpu 0|1|both run the workload on LP0, its Hyper-Threading sibling LP1, or\n"
	  "                 both; specs without :t0/:t1 count those LPs\n"
	  "  --pair A ARGS -- [--ring R] B ARGS   run A on LP0 and B on LP1 together\n"
	  "                 (last option); --stagger starts B when A has ended\n"
	  "With Hyper-Threading each count is tagged [T0], [T1] or [T0+T1] (its ESCR's\n"
	  "thread bits); a thread-independent (TI) event cannot be put on one thread: it\n"
	  "counts while T0 or T1 is at a CPL its bits name (SDM Table 18-67).\n"
	  "Under the model backend the workload is single-stepped: instructions and\n"
	  "branches (a predictor marks mispredicts) are real inputs; its loads, stores\n"
	  "and fetches drive a model of the caches, TLBs and bus ([memory model]);\n"
	  "clockticks come from a timing model of the core ([cost model]; 'pmu clock\n"
	  "tsc': TSC cycles); the synthetic workload injects any other event. Each\n"
	  "count is tagged with its source; '[no model input]' marks events nothing\n"
	  "feeds.\n",
	  cmd_stat },
	{ "pmu", "pmu | pmu backend hw | pmu backend model [SIG] [ht|noht] [l3] [nopebs] | "
		 "pmu trace on|off | pmu pmi fixed|nmi | pmu bench [N] | pmu clock tsc|model | "
		 "pmu skid [N] | pmu rdpmc N",
	  "show or choose the PMU backend",
	  "Without arguments: the backend (hardware PMU or software model) and why,\n"
	  "the signature, capabilities, PMI statistics and the counters in use.\n"
	  "'pmu backend hw' uses the hardware PMU (refused with the reason when it\n"
	  "does not count); 'pmu backend model 0F_02H:9 ht' selects a model with that\n"
	  "DisplayFamily_DisplayModel[:stepping], with or without Hyper-Threading;\n"
	  "with 'l3' the model is the Xeon MP of that model with its L3 (models 0-4\n"
	  "and 6), and on 0F_03/0F_04 the IFSB/EFSB uncore counters count its L3\n"
	  "misses and bus traffic. The model's memory system (caches, TLBs: a model,\n"
	  "docs/guide/model.md) is fed by the stepped loads, stores and\n"
	  "fetches. 'pmu clock model' (default) takes clockticks from the cost\n"
	  "model (uops and miss penalties, the same on every run); 'pmu clock tsc'\n"
	  "from the TSC cycles each stepped instruction took. 'pmu rdpmc N' runs\n"
	  "RDPMC with ECX = N through the backend (18-25: the uncore counters, EDX 0).\n"
	  "'nopebs' gives it IA32_MISC_ENABLE bit 12 set (PEBS unavailable).\n"
	  "'pmu trace on' prints every PMU register write as\n"
	  "'wrmsr 36CH <- 04038800H (MSR_IQ_CCCR0)'. 'pmu pmi nmi' delivers\n"
	  "overflow interrupts as NMIs instead of vector F8H. 'pmu skid N' makes the\n"
	  "model raise each overflow's PMI N events after the manual's next event\n"
	  "(0 .. 1024; 0 by default), as a part with a longer PMI latency would.\n"
	  "'pmu bench N' times stat's start/stop/read sequence N times (TSC cycles).\n",
	  cmd_pmu },
	{ "explain", "explain MSR=VALUE ...", "decode PMU register writes and find their flaws",
	  "Decodes each write (numbers as 3B8H, 0x3b8 or decimal) and analyses the\n"
	  "final state: what each counter counts, cascades, PMI routing and problems\n"
	  "(lines starting with '!'). Example 18-2 of the SDM:\n"
	  "  explain 30CH=0 3B8H=04000603H 36CH=04038800H 310H=FFFFF000H\n"
	  "          3CCH=0400060CH 370H=00039000H\n",
	  cmd_explain },
};

const size_t perf_shell_ncmds = sizeof(perf_shell_cmds) / sizeof(perf_shell_cmds[0]);

int perf_add_commands(struct shell *sh)
{
	return shell_add_commands(sh, perf_shell_cmds, perf_shell_ncmds);
}
