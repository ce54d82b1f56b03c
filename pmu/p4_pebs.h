/*
 * p4_pebs.h - precise event-based sampling (PEBS) and replay tagging as data
 * and pure functions (fact sheet section 5).
 *
 * - Availability (5.1): CPUID.1:EDX[21] (DS), IA32_MISC_ENABLE bit 7 set
 *   and bit 12 clear.
 * - The DS save area (5.2) in its two forms: the 32-bit one (4-byte fields,
 *   40-byte PEBS records) and the 64-bit one (8-byte fields, 144-byte
 *   records, used with DTES64 or in IA-32e mode). p4_ds_plan() places a
 *   PEBS buffer in caller memory with the threshold a whole number of
 *   records below the maximum; p4_ds_put()/p4_ds_get() write and read the
 *   area's fields little-endian, so the same code serves the kernel (its
 *   real DS area), the model (guest memory) and the host tests.
 * - MSR_PEBS_ENABLE (5.3): MY_THR / OTH_THR are relative to the LP that
 *   executes the WRMSR; p4_pebs_thr_bit() turns "PEBS for LP t, written
 *   from LP w" into the right bit and p4_pebs_thr_lps() back.
 * - The replay-tagging metrics (5.5): PEBS_ENABLE bits, MATRIX_VERT and
 *   the extra upstream ESCR event of the MOB and split metrics.
 */
#ifndef NBPROF_PMU_P4_PEBS_H
#define NBPROF_PMU_P4_PEBS_H

#include <stdbool.h>
#include <stdint.h>

#include "pmu/p4_events.h"
#include "pmu/p4_tables.h"

/* ---- availability ------------------------------------------------------- */

#define P4_CPUID1_EDX_DS	(1u << 21)	/* debug store (fact sheet 5.1) */
#define P4_CPUID1_ECX_DTES64	(1u << 2)	/* 64-bit DS layout outside IA-32e */

/* NULL when PEBS can be used, else why not (one line, no trailing period). */
const char *p4_pebs_unavailable(uint32_t cpuid1_edx, uint64_t misc_enable);

/* ---- DS save area --------------------------------------------------------- */

enum p4_ds_form { P4_DS_32, P4_DS_64 };

enum p4_ds_field {
	P4_DS_BTS_BASE, P4_DS_BTS_INDEX, P4_DS_BTS_MAX, P4_DS_BTS_THRESHOLD,
	P4_DS_PEBS_BASE, P4_DS_PEBS_INDEX, P4_DS_PEBS_MAX, P4_DS_PEBS_THRESHOLD,
	P4_DS_PEBS_RESET,		/* counter reset value: 64-bit field, 40 bits used */
	P4_DS_NFIELD
};

/* PEBS record fields in their order; the 32-bit form ends after SP. */
enum p4_pebs_reg {
	P4_PEBS_FLAGS, P4_PEBS_IP, P4_PEBS_AX, P4_PEBS_BX, P4_PEBS_CX, P4_PEBS_DX,
	P4_PEBS_SI, P4_PEBS_DI, P4_PEBS_BP, P4_PEBS_SP,
	P4_PEBS_R8, P4_PEBS_R9, P4_PEBS_R10, P4_PEBS_R11,
	P4_PEBS_R12, P4_PEBS_R13, P4_PEBS_R14, P4_PEBS_R15,
	P4_PEBS_NREG
};

struct p4_ds_layout {
	const char *name;
	uint8_t word;			/* bytes of a pointer field and of a record field */
	uint8_t field_off[P4_DS_NFIELD];
	uint8_t size;			/* bytes of the save area */
	uint8_t record_size;		/* bytes of one PEBS record */
	uint8_t record_nreg;		/* fields in one PEBS record */
	uint8_t max_slack;		/* bytes the maximum sits past whole records */
};

extern const struct p4_ds_layout p4_ds_layouts[2];

/* The layout the processor uses: 64-bit with DTES64 or in IA-32e mode (5.1). */
enum p4_ds_form p4_ds_form_for(bool dtes64, bool ia32e);

/* The PEBS half of a DS area, as addresses in the area's address space. */
struct p4_ds_pebs {
	uint64_t base, index, max, threshold;
	uint64_t reset;			/* the counter's reload value, 40 bits */
};

/*
 * Place a PEBS buffer at `buf` (`bytes` long) with its interrupt threshold
 * `below` whole records short of the last whole record that fits, and
 * counter reset `reset` (the -period preset). 0, or -1 with *why set when
 * the buffer holds fewer than below + 1 records or below is 0.
 */
int p4_ds_plan(enum p4_ds_form form, uint64_t buf, uint64_t bytes, unsigned below,
	       uint64_t reset, struct p4_ds_pebs *out, const char **why);

/*
 * How many records short of the last whole record the interrupt threshold
 * of a `records`-record buffer sits: "several records short of the PEBS
 * absolute maximum to allow a pending interrupt to be handled" (SDM
 * 253668-032 16.4.9); perfmon2 interrupted at 90 %. A tenth of the
 * buffer, at least 2, and at most records - 1 (the threshold stays past
 * the first record).
 */
unsigned p4_ds_threshold_below(unsigned records);

/* Records the buffer holds between base and max; records written so far. */
unsigned p4_ds_capacity(enum p4_ds_form form, const struct p4_ds_pebs *p);
unsigned p4_ds_written(enum p4_ds_form form, const struct p4_ds_pebs *p);

/* Field access in a save area image (little-endian, the layout's width). */
void p4_ds_put(enum p4_ds_form form, uint8_t *area, enum p4_ds_field f, uint64_t v);
uint64_t p4_ds_get(enum p4_ds_form form, const uint8_t *area, enum p4_ds_field f);

/* The PEBS fields of an area image (BTS fields zero). */
void p4_ds_put_pebs(enum p4_ds_form form, uint8_t *area, const struct p4_ds_pebs *p);
void p4_ds_get_pebs(enum p4_ds_form form, const uint8_t *area, struct p4_ds_pebs *p);

/* One PEBS record: reg[] in enum p4_pebs_reg order (R8-R15 0 in the 32-bit form). */
struct p4_pebs_record {
	uint64_t reg[P4_PEBS_NREG];
};

void p4_pebs_record_encode(enum p4_ds_form form, const struct p4_pebs_record *r, uint8_t *out);
void p4_pebs_record_decode(enum p4_ds_form form, const uint8_t *in, struct p4_pebs_record *r);

/* ---- MSR_PEBS_ENABLE thread bits ---------------------------------------- */

/* The bit that enables PEBS for LP `target` when LP `writer` writes it. */
uint64_t p4_pebs_thr_bit(unsigned writer, unsigned target);

/* The LPs (bit 0 = LP0, bit 1 = LP1) that `value` written from `writer` enables. */
unsigned p4_pebs_thr_lps(unsigned writer, uint64_t value);

/* ---- replay tagging metrics (5.5) --------------------------------------- */

struct p4_replay_metric {
	const char *name;
	uint32_t pebs_enable;		/* UOP_Tag (bit 24) plus the metric bits */
	uint32_t matrix_vert;
	enum p4_event extra;		/* upstream event on `extra_escr`, or P4_NEVENT */
	uint16_t extra_mask;
	enum p4_escr extra_escr;	/* P4_ESCR_NONE without an extra event */
	const char *note;
};

#define P4_NREPLAY_METRIC	9
extern const struct p4_replay_metric p4_replay_metrics[P4_NREPLAY_METRIC];

/* The metric named name[0..len) (case-insensitive), or NULL. */
const struct p4_replay_metric *p4_replay_metric_by_name(const char *name, unsigned len);

#endif
