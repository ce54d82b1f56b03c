/*
 * p4_explain.h - decode a sequence of raw PMU MSR writes.
 *
 * Each write is decoded on its own (counter value, ESCR event/mask/thread
 * bits, CCCR fields), then the final register state is analysed: which
 * counter counts what for which logical processor, cascades (bit 30 and
 * Table 18-65's bit 11), PMI routing, and inconsistencies - ESCRs written
 * but selected by no live CCCR, CCCR selects that name another ESCR than
 * intended, counters sharing one ESCR setting, cascades whose starter is
 * idle or counts the same thing, counter presets that are not negative in
 * 40 bits, reserved bits, MSRs the model lacks, the cascade PMI erratum.
 * Problem lines start with "! "; the return value is their number.
 */
#ifndef NBPROF_PMU_P4_EXPLAIN_H
#define NBPROF_PMU_P4_EXPLAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "pmu/p4_caps.h"

struct p4_msr_write {
	uint32_t msr;
	uint64_t value;
};

int p4_explain(const struct p4_msr_write *w, unsigned n, const struct p4_caps *caps, bool ht,
	       void (*line)(void *ctx, const char *s), void *ctx);

#endif
