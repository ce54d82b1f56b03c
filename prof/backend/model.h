/*
 * prof/backend/model.h - the model backend's own settings (prof/backend/model.c):
 * which memory-system variant the next `pmu backend model` builds, and
 * where the model's clockticks come from.
 */
#ifndef NBPROF_PROF_BACKEND_MODEL_H
#define NBPROF_PROF_BACKEND_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum perf_model_clock {
	PERF_CLOCK_MODEL,	/* the cost model (pmu/model/p4_cost.c): the default */
	PERF_CLOCK_TSC,		/* the TSC cycles the step engine measured */
};

/*
 * The Xeon MP variant with its L3 (and, on 0F_03/0F_04, the IFSB/EFSB
 * uncore counters) for the next model selection; false: the desktop part.
 */
void perf_model_set_l3(bool l3);
bool perf_model_l3(void);

void perf_model_set_clock(enum perf_model_clock c);

/*
 * The model's PMI skid (pmu/model/p4_model.h p4_model_set_skid): the PMI an
 * overflow owes comes skid events after the manual's "next event". -1 when
 * skid is over P4_MODEL_SKID_MAX (nothing changed).
 */
#define PERF_MODEL_SKID_MAX	1024u	/* P4_MODEL_SKID_MAX (pmu/model/p4_model.h) */
int perf_model_set_skid(uint32_t skid);
uint32_t perf_model_skid(void);
enum perf_model_clock perf_model_clock(void);
const char *perf_model_clock_name(enum perf_model_clock c);

/* One line on the memory model of the selected part ("L1D 16 KB 8-way, ..."), or "". */
void perf_model_mem_describe(char *buf, size_t n);

#endif
