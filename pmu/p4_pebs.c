/*
 * p4_pebs.c - PEBS availability, the DS save area and PEBS record layouts,
 * the PEBS_ENABLE thread bits and the replay-tagging metric table (see
 * p4_pebs.h; every number is from PMU reference section 5).
 */
#include <stddef.h>

#include "pmu/p4_pebs.h"
#include "pmu/p4_regs.h"

/* ---- availability (PMU reference 5.1) -------------------------------------- */

const char *p4_pebs_unavailable(uint32_t cpuid1_edx, uint64_t misc_enable)
{
	if (!(cpuid1_edx & P4_CPUID1_EDX_DS))
		return "PEBS is not available: CPUID.1:EDX[21] (DS) is clear, no debug store";
	if (!(misc_enable & MISC_ENABLE_PERFMON))
		return "PEBS is not available: IA32_MISC_ENABLE bit 7 (performance monitoring "
		       "available) is clear";
	if (misc_enable & MISC_ENABLE_PEBS_UNAVAIL)
		return "PEBS is not available: IA32_MISC_ENABLE bit 12 (PEBS unavailable) is set";
	return NULL;
}

/* ---- layouts (PMU reference 5.2) ------------------------------------------- */

/*
 * 32-bit: BTS base/index/maximum/threshold at 00H-0CH, PEBS at 10H-1CH,
 * counter reset at 20H (8 bytes), area ends at 30H; records of 40 bytes
 * (EFLAGS, linear IP, EAX..ESP), absolute maximum one byte past a whole
 * number of records (the 32-bit text). 64-bit: every pointer 8 bytes
 * (PEBS at 20H-38H, reset at 40H, end at 50H); records of 144 bytes
 * (RFLAGS, RIP, RAX..RSP, R8..R15).
 */
const struct p4_ds_layout p4_ds_layouts[2] = {
	[P4_DS_32] = {
		.name = "32-bit", .word = 4,
		.field_off = { 0x00, 0x04, 0x08, 0x0c, 0x10, 0x14, 0x18, 0x1c, 0x20 },
		.size = 0x30, .record_size = 40, .record_nreg = 10, .max_slack = 1,
	},
	[P4_DS_64] = {
		.name = "64-bit", .word = 8,
		.field_off = { 0x00, 0x08, 0x10, 0x18, 0x20, 0x28, 0x30, 0x38, 0x40 },
		.size = 0x50, .record_size = 144, .record_nreg = 18, .max_slack = 0,
	},
};

enum p4_ds_form p4_ds_form_for(bool dtes64, bool ia32e)
{
	return dtes64 || ia32e ? P4_DS_64 : P4_DS_32;
}

/*
 * The DS area and the PEBS records are little-endian words of 4 or 8 bytes
 * (PMU reference 5.2). On a little-endian machine - the target, and
 * the host that tests this file - a word is one copy of its width: the
 * drain of a PMI decodes up to a buffer of records at CPL 0, where a
 * Pentium 4 counts every instruction it retires (a byte at a time, a
 * 64-bit record's 18 registers took over 1,000 instructions, `pmu`'s PMI
 * handler line).
 */
#define DS_WORD_NATIVE (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)

/* Writes are few (a drain's index reset): a byte at a time. */
static void put_le(uint8_t *p, unsigned bytes, uint64_t v)
{
	for (unsigned i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, unsigned bytes)
{
	uint64_t v = 0;

#if DS_WORD_NATIVE
	__builtin_memcpy(&v, p, bytes);		/* 4 or 8: v's low bytes */
#else
	for (unsigned i = 0; i < bytes; i++)
		v |= (uint64_t)p[i] << (8 * i);
#endif
	return v;
}

/* The counter reset field is 64 bits wide in both forms. */
static unsigned field_bytes(enum p4_ds_form form, enum p4_ds_field f)
{
	return f == P4_DS_PEBS_RESET ? 8 : p4_ds_layouts[form].word;
}

void p4_ds_put(enum p4_ds_form form, uint8_t *area, enum p4_ds_field f, uint64_t v)
{
	if (f == P4_DS_PEBS_RESET)
		v &= P4_COUNTER_MASK;
	put_le(area + p4_ds_layouts[form].field_off[f], field_bytes(form, f), v);
}

uint64_t p4_ds_get(enum p4_ds_form form, const uint8_t *area, enum p4_ds_field f)
{
	return get_le(area + p4_ds_layouts[form].field_off[f], field_bytes(form, f));
}

void p4_ds_put_pebs(enum p4_ds_form form, uint8_t *area, const struct p4_ds_pebs *p)
{
	for (unsigned i = 0; i < p4_ds_layouts[form].size; i++)
		area[i] = 0;
	p4_ds_put(form, area, P4_DS_PEBS_BASE, p->base);
	p4_ds_put(form, area, P4_DS_PEBS_INDEX, p->index);
	p4_ds_put(form, area, P4_DS_PEBS_MAX, p->max);
	p4_ds_put(form, area, P4_DS_PEBS_THRESHOLD, p->threshold);
	p4_ds_put(form, area, P4_DS_PEBS_RESET, p->reset);
}

void p4_ds_get_pebs(enum p4_ds_form form, const uint8_t *area, struct p4_ds_pebs *p)
{
	p->base = p4_ds_get(form, area, P4_DS_PEBS_BASE);
	p->index = p4_ds_get(form, area, P4_DS_PEBS_INDEX);
	p->max = p4_ds_get(form, area, P4_DS_PEBS_MAX);
	p->threshold = p4_ds_get(form, area, P4_DS_PEBS_THRESHOLD);
	p->reset = p4_ds_get(form, area, P4_DS_PEBS_RESET);
}

int p4_ds_plan(enum p4_ds_form form, uint64_t buf, uint64_t bytes, unsigned below,
	       uint64_t reset, struct p4_ds_pebs *out, const char **why)
{
	const struct p4_ds_layout *l = &p4_ds_layouts[form];
	uint64_t n = bytes >= l->max_slack ? (bytes - l->max_slack) / l->record_size : 0;

	if (below == 0) {
		*why = "the PEBS threshold must be at least one record below the maximum";
		return -1;
	}
	if (n < (uint64_t)below + 1) {
		*why = "the PEBS buffer is too small for its threshold";
		return -1;
	}
	out->base = buf;
	out->index = buf;
	out->max = buf + n * l->record_size + l->max_slack;
	out->threshold = buf + (n - below) * l->record_size;
	out->reset = reset & P4_COUNTER_MASK;
	return 0;
}

unsigned p4_ds_threshold_below(unsigned records)
{
	unsigned below = records / 10 > 2 ? records / 10 : 2;

	return records < 2 ? 1 : below < records ? below : records - 1;
}

unsigned p4_ds_capacity(enum p4_ds_form form, const struct p4_ds_pebs *p)
{
	return (unsigned)((p->max - p->base) / p4_ds_layouts[form].record_size);
}

unsigned p4_ds_written(enum p4_ds_form form, const struct p4_ds_pebs *p)
{
	return (unsigned)((p->index - p->base) / p4_ds_layouts[form].record_size);
}

void p4_pebs_record_encode(enum p4_ds_form form, const struct p4_pebs_record *r, uint8_t *out)
{
	const struct p4_ds_layout *l = &p4_ds_layouts[form];

	for (unsigned k = 0; k < l->record_nreg; k++)
		put_le(out + k * l->word, l->word, r->reg[k]);
}

void p4_pebs_record_decode(enum p4_ds_form form, const uint8_t *in, struct p4_pebs_record *r)
{
	const struct p4_ds_layout *l = &p4_ds_layouts[form];

	unsigned k = 0;

	/* a whole record in one copy, or a word at a time (DS_WORD_NATIVE) */
	if (DS_WORD_NATIVE && l->word == 8) {
		__builtin_memcpy(r->reg, in, (size_t)l->record_nreg * 8);
		k = l->record_nreg;
	} else {
		for (; k < l->record_nreg; k++)
			r->reg[k] = get_le(in + k * l->word, l->word);
	}
	for (; k < P4_PEBS_NREG; k++)
		r->reg[k] = 0;
}

/* ---- PEBS_ENABLE thread bits (PMU reference 5.3, SDM 18.16.3) -------------- */

uint64_t p4_pebs_thr_bit(unsigned writer, unsigned target)
{
	return writer == target ? PEBS_ENABLE_MY_THR : PEBS_ENABLE_OTH_THR;
}

unsigned p4_pebs_thr_lps(unsigned writer, uint64_t value)
{
	unsigned lps = 0;

	if (value & PEBS_ENABLE_MY_THR)
		lps |= 1u << (writer & 1);
	if (value & PEBS_ENABLE_OTH_THR)
		lps |= 1u << ((writer & 1) ^ 1);
	return lps;
}

/* ---- replay tagging metrics (PMU reference 5.5) ---------------------------- */

#define UOP_TAG		0x01000000u	/* PEBS_ENABLE bit 24 */
#define NO_EXTRA	.extra = P4_NEVENT, .extra_escr = P4_ESCR_NONE

/*
 * The PEBS_ENABLE values are the ones Linux writes (bit 24 plus the
 * metric bits, no bit 25: that is added only for PEBS records). For
 * Tagged_mispred_branch libpfm3 also sets bit 0 (DISPUTED); Linux's value
 * is used. The PMU reference names the upstream ESCR of the split metrics
 * (SAAT_ESCR1 loads, SAAT_ESCR0 stores) but no side for MOB_load_replay;
 * MOB_ESCR0 is a choice.
 */
const struct p4_replay_metric p4_replay_metrics[P4_NREPLAY_METRIC] = {
	{ "1stL_cache_load_miss_retired", UOP_TAG | 0x1, 0x1, NO_EXTRA,
	  .note = "loads that miss the first-level cache, at retirement" },
	{ "2ndL_cache_load_miss_retired", UOP_TAG | 0x2, 0x1, NO_EXTRA,
	  .note = "loads that miss the second-level cache (fast detection only)" },
	{ "DTLB_load_miss_retired", UOP_TAG | 0x4, 0x1, NO_EXTRA,
	  .note = "loads that miss the DTLB" },
	{ "DTLB_store_miss_retired", UOP_TAG | 0x4, 0x2, NO_EXTRA,
	  .note = "stores that miss the DTLB" },
	{ "DTLB_all_miss_retired", UOP_TAG | 0x4, 0x3, NO_EXTRA,
	  .note = "loads and stores that miss the DTLB" },
	{ "Tagged_mispred_branch", UOP_TAG | 0x18000, 0x10, NO_EXTRA,
	  .note = "mispredicted branches (libpfm3 also sets bit 0: disputed)" },
	{ "MOB_load_replay_retired", UOP_TAG | 0x200, 0x1, .extra = P4_EV_MOB_LOAD_REPLAY,
	  .extra_mask = P4_EVMASK(P4_MOB_LOAD_REPLAY_PARTIAL_DATA) |
			P4_EVMASK(P4_MOB_LOAD_REPLAY_UNALGN_ADDR),
	  .extra_escr = P4_MOB_ESCR0,
	  .note = "loads replayed by the MOB (partial data, unaligned address)" },
	{ "split_load_retired", UOP_TAG | 0x400, 0x1, .extra = P4_EV_LOAD_PORT_REPLAY,
	  .extra_mask = P4_EVMASK(P4_LOAD_PORT_REPLAY_SPLIT_LD), .extra_escr = P4_SAAT_ESCR1,
	  .note = "split loads" },
	{ "split_store_retired", UOP_TAG | 0x400, 0x2, .extra = P4_EV_STORE_PORT_REPLAY,
	  .extra_mask = P4_EVMASK(P4_STORE_PORT_REPLAY_SPLIT_ST), .extra_escr = P4_SAAT_ESCR0,
	  .note = "split stores" },
};

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool name_eq(const char *name, const char *s, unsigned len)
{
	unsigned i;

	for (i = 0; i < len; i++)
		if (name[i] == '\0' || lower(name[i]) != lower(s[i]))
			return false;
	return name[i] == '\0';
}

const struct p4_replay_metric *p4_replay_metric_by_name(const char *name, unsigned len)
{
	for (unsigned i = 0; i < P4_NREPLAY_METRIC; i++)
		if (name_eq(p4_replay_metrics[i].name, name, len))
			return &p4_replay_metrics[i];
	return NULL;
}
