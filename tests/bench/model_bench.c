/*
 * model_bench.c - host timing of the software PMU's event input.
 *
 * Programs the model as `stat` does by default (global_power_events:RUNNING
 * and instr_retired, planned by p4_alloc_plan and written by p4_apply) on a
 * 0F_04H part and feeds it what one stepped instruction produces in the
 * kernel's step hook: instr_retired, instr_completed, branch_retired,
 * retired_branch_type, global_power_events and a clock tick. Prints the
 * time per p4_model_event call and per step. Built without sanitizers
 * (make model-bench) so that the numbers mean something; it checks the
 * final counts so that a broken model cannot post a good time.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "pmu/model/p4_model.h"
#include "pmu/p4_alloc.h"
#include "pmu/p4_apply.h"
#include "pmu/p4_spec.h"

#define STEPS		2000000u
#define EVENTS_PER_STEP	5u

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void program(struct p4_model *m, struct p4_plan *plan)
{
	static const char *const specs[] = { "global_power_events:RUNNING", "instr_retired" };
	struct p4_alloc_ctx ctx = { .caps = &m->caps, .ht = false, .split = P4_SPLIT_GLOBAL };
	struct p4_request reqs[2] = { 0 };
	struct p4_alloc_error aerr;
	struct p4_spec_error serr;
	struct p4_apply_result res = { 0 };

	for (unsigned i = 0; i < 2; i++) {
		if (p4_spec_parse(specs[i], &m->caps, &reqs[i].spec, &serr)) {
			fprintf(stderr, "model_bench: %s: %s\n", specs[i], serr.msg);
			exit(1);
		}
		reqs[i].lp = P4_LP0;
		reqs[i].pmi = P4_PMI_NONE;
	}
	if (p4_alloc_plan(&ctx, reqs, 2, plan, &aerr)) {
		fprintf(stderr, "model_bench: %s\n", aerr.msg);
		exit(1);
	}
	p4_pmu_reset(&m->bus, &m->caps, &res);
	p4_apply(&m->bus, plan, &res);
	if (res.faults || res.mismatches) {
		fprintf(stderr, "model_bench: apply: %u faults, %u mismatches\n", res.faults,
			res.mismatches);
		exit(1);
	}
}

static void step(struct p4_model *m, unsigned i)
{
	p4_model_event(m, 0, 3, P4_EV_INSTR_RETIRED, P4_EVMASK(P4_INSTR_RETIRED_NBOGUSNTAG), 1);
	p4_model_event(m, 0, 3, P4_EV_INSTR_COMPLETED, P4_EVMASK(P4_INSTR_COMPLETED_NBOGUS), 1);
	p4_model_event(m, 0, 3, P4_EV_BRANCH_RETIRED, P4_EVMASK(P4_BRANCH_RETIRED_MMTP), i & 1);
	p4_model_event(m, 0, 3, P4_EV_RETIRED_BRANCH_TYPE,
		       P4_EVMASK(P4_RETIRED_BRANCH_TYPE_CONDITIONAL), i & 1);
	p4_model_event(m, 0, 3, P4_EV_GLOBAL_POWER_EVENTS,
		       P4_EVMASK(P4_GLOBAL_POWER_EVENTS_RUNNING), 3);
	p4_model_tick(m, 3);
}

int main(void)
{
	struct p4_model_config cfg = { .sig = { 0x0f, 4, 1 } };
	static struct p4_model m;
	struct p4_plan plan;
	uint64_t v[2];
	double t0, t1, t2;

	if (p4_model_init(&m, &cfg)) {
		fprintf(stderr, "model_bench: p4_model_init failed\n");
		return 1;
	}
	program(&m, &plan);
	t0 = now_ns();
	for (unsigned i = 0; i < STEPS; i++)
		p4_model_event(&m, 0, 3, P4_EV_INSTR_RETIRED,
			       P4_EVMASK(P4_INSTR_RETIRED_NBOGUSNTAG), 1);
	t1 = now_ns();
	for (unsigned i = 0; i < STEPS; i++)
		step(&m, i);
	t2 = now_ns();
	for (unsigned i = 0; i < 2; i++)
		p4_counter_read(&m.bus, plan.slot[i].counter, &v[i]);
	if (v[0] != 3ull * STEPS || v[1] != 2ull * STEPS) {
		fprintf(stderr, "model_bench: wrong counts %llu %llu\n", (unsigned long long)v[0],
			(unsigned long long)v[1]);
		return 1;
	}
	printf("model_bench: %.1f ns per p4_model_event (instr_retired, %u calls)\n",
	       (t1 - t0) / STEPS, STEPS);
	printf("model_bench: %.1f ns per stepped instruction (%u events + 1 tick, %u steps)\n",
	       (t2 - t1) / STEPS, EVENTS_PER_STEP, STEPS);
	return 0;
}
