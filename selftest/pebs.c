/*
 * selftest/pebs.c - the PEBS and uncore checks of `selftest`.
 *
 * PEBS (PMU reference 5). One sampling run through record_run(), the code
 * `record -e front_end_event:nbogus:pebs` runs: uop_type TAGLOADS tags the
 * load uops at ring 3 and front_end_event NBOGUS counts them at retirement
 * on counter 16 with PEBS, the counter reset at -ST_PEBS_PERIOD, into a
 * buffer of ST_PEBS_SLOTS records whose interrupt threshold sits
 * p4_ds_threshold_below() records below the maximum (prof/pebs.c). The workload is `memwalk`, whose loads
 * its assembly listing states (wl_memwalk_loads, struct selftest_loads):
 * with L tagged loads the run writes floor(L / P) records, record k holds
 * the linear IP of the (kP)-th load (5.2), and the buffer reaches its
 * threshold, and raises a PMI, every ST_PEBS_SLOTS - below records (the
 * PEBS counter has no OVF_PMI: no PMI per record). Ring 3 and
 * :u keep the kernel's own loads around the workload out of the count on
 * hardware as on the model. IA32_DS_AREA, MSR_PEBS_ENABLE, MATRIX_VERT and
 * IA32_MISC_ENABLE must read back afterwards as before. Where PEBS is not
 * available (CPUID DS, IA32_MISC_ENABLE bits 7 and 12: pebs_check) the
 * check is a SKIP with that reason. The run replaces the last recording
 * (`report`, `script`): when that recording is the user's (not one of an
 * earlier selftest), the check is a SKIP unless --replace allows it.
 *
 * Uncore (PMU reference 1.4; pmu/p4_uncore.h). On parts with the L3/FSB set
 * at 107CCH-107D3H: every register's count bits written and read back
 * with the control word 0 (not counting), RDPMC 18-25 against RDMSR (bits
 * 31:0, EDX 0; the index order is UNVERIFIED, PMU reference 1.4), and on the
 * IFSB/EFSB set IBUSQ and EFSB counting `memwalk` over two sizes S1 < S2
 * with a stride of one 128-byte sector: the difference walks (S2 - S1) /
 * 128 more sectors. The expectation, on hardware and model alike, is the
 * core's own count of L3 read misses over the same runs
 * (BSQ_cache_reference:RD_3rdL_MISS) as a lower bound: every L3 read miss
 * is a transaction of the IOQ that IBUSQ counts with all its type, snoop
 * and state bits set, and a bus read whose data the memory drives (SDM
 * 2008 Vol. 3B 18.20, Figures 18-49 and 18-51; the sub-event bit positions
 * are UNVERIFIED, p4_uncore.c). (Under the model every sector is a cold L3
 * miss, one IBUSQ transaction and two bus clocks of data, prof/backend/memfeed.c;
 * the counting window holds the kernel's zeroing of the buffers too, so
 * tests/qemu/test_selftest.py checks at least the walk's 8192 misses.)
 */
#include "lib/printf.h"
#include "lib/string.h"
#include "pmu/p4_alloc.h"
#include "pmu/p4_pebs.h"
#include "pmu/p4_regs.h"
#include "pmu/p4_tagging.h"
#include "pmu/p4_uncore.h"
#include "prof/pebs.h"
#include "prof/perf.h"
#include "prof/record.h"
#include "selftest/selftest.h"
#include "selftest/internal.h"

#define ST_PEBS_SIZE	4096		/* memwalk 4096 16: 256 loads of the buffer */
#define ST_PEBS_STRIDE	16
#define ST_PEBS_PERIOD	5
#define ST_PEBS_SLOTS	8		/* threshold 2 below the maximum: a PMI every 6 records */
#define ST_PEBS_MAXREC	256		/* the ia32 body has 3 loads an iteration: 154 records */

/*
 * The uncore walks: one load per 4 KiB page (a new L2/L3 sector each, one
 * bus read) over buffers larger than any NetBurst L2 + L3 (at most 2 MiB +
 * 8 MiB on the parts with IFSB/EFSB, models 3 and 4). The kernel zeroes the
 * buffer before the walk (mem_alloc_pages), which on hardware leaves its
 * last part in the caches; a walk from the start of a buffer that large
 * has had its lines evicted by the zeroing of the rest, so its reads miss
 * L3 and the core's RD_3rdL_MISS is real evidence. A 48 KiB buffer (as
 * before) stays in L2 after the zeroing: the core then counts no L3 misses
 * and "at least the core's count" holds for any uncore count, even 0.
 */
#define ST_UNC_STRIDE	4096
#define ST_UNC_S1	(16u << 20)
#define ST_UNC_S2	(48u << 20)

/* The loads of wl_memwalk, from its listing (arch/x86/64/workloads.S, arch/x86/32/workloads.S). */
extern const struct selftest_loads wl_memwalk_loads __attribute__((visibility("hidden")));
extern char wl_memwalk[] __attribute__((visibility("hidden")));

/* ---- PEBS ------------------------------------------------------------------- */

static struct record_cfg st_rcfg;
static struct record_result st_rres;
static struct workload_args st_wargs;
static uint64_t st_own_gen = UINT64_MAX;	/* record_generation() after our own run */

/* front_end_event NBOGUS by PEBS on LP0 at CPL 3, with its uop_type TAGLOADS tagger. */
static int st_pebs_plan(struct st *t, struct record_cfg *c)
{
	static const char *const specs[2] = { "front_end_event:NBOGUS:u", "uop_type:TAGLOADS:u" };
	const struct perf_info *pi = perf_info();
	struct p4_alloc_ctx ctx = { .caps = &pi->caps, .ht = pi->ht,
				    .split = pi->ht ? P4_SPLIT_LINUX : P4_SPLIT_GLOBAL };
	static struct p4_alloc_error aerr;
	static struct p4_spec_error e;
	struct p4_request q[2];

	for (unsigned i = 0; i < 2; i++) {
		q[i] = (struct p4_request){ .lp = P4_LP0, .pmi = P4_PMI_NONE, .role = P4_ROLE_COUNT };
		if (p4_spec_parse(specs[i], &pi->caps, &q[i].spec, &e))
			return ksnprintf(t->err, t->errlen, "pebs: '%s': %s", specs[i], e.msg), -1;
	}
	if (p4_tag_why(q, 2, t->err, t->errlen))	/* the rules stat and record apply */
		return -1;
	q[0].role = P4_ROLE_PEBS;
	q[0].pmi = P4_PMI_NONE;	/* the threshold PMI only (F4: OVF_PMI interrupts per record) */
	q[0].spec.pebs = true;
	q[0].spec.period = ST_PEBS_PERIOD;
	*c = (struct record_cfg){ .pmi = PERF_PMI_NMI, .throttle_pct = 100,
				  .pebs_records = ST_PEBS_SLOTS };
	if (p4_alloc_plan(&ctx, q, 2, &c->plan, &aerr))
		return ksnprintf(t->err, t->errlen, "pebs: %s", aerr.msg), -1;
	for (unsigned i = 0; i < c->plan.n; i++) {
		c->sampler[i] = c->plan.req[i].role == P4_ROLE_PEBS;
		ksnprintf(c->name[i], RECORD_NAME_MAX, "%s", c->sampler[i] ? "front_end_event:pebs" :
			  "uop_type");
	}
	c->job[0] = (struct record_job){ .args = &st_wargs, .ring = 3 };
	return 0;
}

/* The IPs of the PEBS samples of the last recording, in order; how many there were. */
static unsigned st_pebs_ips(uint64_t *ip, unsigned max)
{
	const struct p4_plan *plan = &st_rcfg.plan;
	unsigned ev = 0;
	const struct sample_run *run = record_last();
	struct sample_run_iter it;
	struct sample s;
	unsigned n = 0;

	if (!run)
		return 0;
	while (ev < plan->n && plan->req[ev].role != P4_ROLE_PEBS)
		ev++;
	sample_run_iter_init(&it, run);
	while (sample_run_iter_next(&it, &s))
		if (s.event == ev && n++ < max)
			ip[n - 1] = s.ip;
	return n;
}

static const uint32_t st_pebs_msrs[] = { MSR_IA32_DS_AREA, MSR_PEBS_ENABLE, MSR_PEBS_MATRIX_VERT,
					 MSR_IA32_MISC_ENABLE };
static const char *const st_pebs_msr_names[] = { "IA32_DS_AREA", "MSR_PEBS_ENABLE",
						 "MSR_PEBS_MATRIX_VERT", "IA32_MISC_ENABLE" };
#define ST_PEBS_NMSR	(sizeof(st_pebs_msrs) / sizeof(st_pebs_msrs[0]))

static void st_pebs_read(uint64_t *v)
{
	for (unsigned i = 0; i < ST_PEBS_NMSR; i++)
		if (msr_bus_read(perf_bus(), st_pebs_msrs[i], &v[i]) != 0)
			v[i] = ~0ull;
}

static void st_pebs_state(struct st *t, const uint64_t *before)
{
	struct selftest_result *r = st_new(t, "pebs");
	uint64_t after[ST_PEBS_NMSR];
	unsigned good = 0;

	st_pebs_read(after);
	for (unsigned i = 0; i < ST_PEBS_NMSR; i++) {
		size_t used = strlen(r->note);

		if (after[i] == before[i]) {
			good++;
			continue;
		}
		ksnprintf(r->note + used, sizeof(r->note) - used, "%s%s (%XH) %llXH, was %llXH",
			  used ? ", " : "differ: ", st_pebs_msr_names[i], (unsigned)st_pebs_msrs[i],
			  (unsigned long long)after[i], (unsigned long long)before[i]);
	}
	ksnprintf(r->name, sizeof(r->name), "DS area, PEBS_ENABLE, MATRIX_VERT, MISC_ENABLE as "
		  "before the run");
	selftest_judge_exact(r, good, ST_PEBS_NMSR);
	st_emit(t, r);
}

static void st_pebs_judge(struct st *t, unsigned nrec)
{
	static uint64_t ip[ST_PEBS_MAXREC];
	const uint64_t m = (ST_PEBS_SIZE + ST_PEBS_STRIDE - 1) / ST_PEBS_STRIDE;
	const uint64_t want = selftest_load_count(&wl_memwalk_loads, m, 1) / ST_PEBS_PERIOD;
	unsigned nip = st_pebs_ips(ip, ST_PEBS_MAXREC);
	struct selftest_result *r = st_new(t, "pebs");

	ksnprintf(r->name, sizeof(r->name), "counter 16 PEBS records, front_end_event tagged loads");
	selftest_judge_exact(r, nrec, want);
	ksnprintf(r->note, sizeof(r->note), "memwalk %u %u at ring 3: %llu loads / period %u",
		  ST_PEBS_SIZE, ST_PEBS_STRIDE,
		  (unsigned long long)selftest_load_count(&wl_memwalk_loads, m, 1), ST_PEBS_PERIOD);
	st_emit(t, r);
	r = st_new(t, "pebs");
	ksnprintf(r->name, sizeof(r->name), "counter 16 PEBS record IPs on the tagged load");
	selftest_judge_pebs_ips(r, &wl_memwalk_loads, m, 1, ST_PEBS_PERIOD, ip,
				nip < ST_PEBS_MAXREC ? nip : ST_PEBS_MAXREC, want, (uintptr_t)wl_memwalk);
	st_emit(t, r);
	r = st_new(t, "pebs");
	ksnprintf(r->name, sizeof(r->name), "counter 16 PEBS threshold PMIs, %u slots",
		  ST_PEBS_SLOTS);
	/*
	 * One PMI per (slots - below) records when it comes on the record that
	 * reaches the threshold; a late one lets more records in before the
	 * drain, at most `slots` (none may be lost: the record count is exact).
	 */
	selftest_judge_range(r, st_rres.pmi.interrupts, want / ST_PEBS_SLOTS,
			     want / (ST_PEBS_SLOTS - p4_ds_threshold_below(ST_PEBS_SLOTS)));
	ksnprintf(r->note, sizeof(r->note), "threshold %u records below the maximum, the PMI up to "
		  "that late; %llu drains, %llu found full", p4_ds_threshold_below(ST_PEBS_SLOTS),
		  (unsigned long long)st_rres.pebs_drains,
		  (unsigned long long)st_rres.pebs_full);
	st_emit(t, r);
}

int st_pebs(struct st *t)
{
	char num[2][16], *argv[2] = { num[0], num[1] }, why[112];
	uint64_t before[ST_PEBS_NMSR];

	if (pebs_check(why, sizeof(why))) {
		st_skip(t, "pebs", "PEBS", why);
		return 0;
	}
	if (record_last() && record_generation() != st_own_gen && !t->o->replace) {
		st_skip(t, "pebs", "PEBS", "it would replace the last recording (report, script, "
			"dump); selftest --replace checks PEBS anyway");
		return 0;
	}
	ksnprintf(num[0], sizeof(num[0]), "%u", ST_PEBS_SIZE);
	ksnprintf(num[1], sizeof(num[1]), "%u", ST_PEBS_STRIDE);
	if (st_parse_args(t, "memwalk", 2, argv, &st_wargs) || st_pebs_plan(t, &st_rcfg))
		return -1;
	st_pebs_read(before);
	if (record_run(&st_rcfg, &st_rres, t->err, t->errlen))
		return -1;
	st_own_gen = record_generation();
	if (st_rres.status != WORKLOAD_OK) {
		ksnprintf(t->err, t->errlen, "memwalk: %s", st_rres.error[0] ? st_rres.error :
			  "did not complete");
		return t->stop = st_rres.status == WORKLOAD_INTERRUPTED, -1;
	}
	st_pebs_judge(t, (unsigned)st_rres.pebs_records);
	st_pebs_state(t, before);
	return 0;
}

/* ---- uncore ------------------------------------------------------------------ */

/* A count pattern for register i (bits 31:0; CNTR7 is 64 bits), control word 0. */
static uint64_t st_unc_pattern(const struct p4_unc_reg *u, unsigned i)
{
	uint64_t low = 0x5a000000u | (i << 16) | (0x1234u + i);

	return u->role == P4_UNC_LAT_COUNT ? ((uint64_t)(0xa5 + i) << 32) | low : low;
}

static void st_unc_note(struct selftest_result *r, const char *what)
{
	size_t used = strlen(r->note);

	ksnprintf(r->note + used, sizeof(r->note) - used, "%s%s", used ? ", " : "differ: ", what);
}

/* Count bits written and read back, then RDPMC 18-25 against RDMSR, then all zero. */
static void st_unc_registers(struct st *t, enum p4_uncore set)
{
	struct msr_bus *bus = perf_bus();
	struct selftest_result *wr = st_new(t, "uncore");
	struct selftest_result rd;
	unsigned good[2] = { 0, 0 }, nwr = 0;

	rd = (struct selftest_result){ .group = "uncore" };
	for (unsigned i = 0; i < P4_UNC_NREG; i++) {
		const struct p4_unc_reg *u = p4_unc_reg_at(set, i);
		uint64_t want, got = ~0ull, pmc = ~0ull;
		char what[40];

		if (!u)
			continue;
		want = u->role == P4_UNC_LAT_CTL ? 0 : st_unc_pattern(u, i);
		nwr += u->role != P4_UNC_LAT_CTL;
		msr_bus_write(bus, u->msr, want);
		ksnprintf(what, sizeof(what), "%s (%XH)", u->name, (unsigned)u->msr);
		if (msr_bus_read(bus, u->msr, &got) == 0 && got == want)
			good[0] += u->role != P4_UNC_LAT_CTL;
		else
			st_unc_note(wr, what);
		ksnprintf(what, sizeof(what), "%u", P4_UNC_RDPMC_FIRST + i);
		if (perf_rdpmc(P4_UNC_RDPMC_FIRST + i, &pmc) == 0 && pmc == (uint32_t)got)
			good[1]++;
		else
			st_unc_note(&rd, what);
		msr_bus_write(bus, u->msr, 0);
	}
	ksnprintf(wr->name, sizeof(wr->name), "107CCH-107D3H count bits written and read back");
	selftest_judge_exact(wr, good[0], nwr);
	if (!wr->note[0])
		ksnprintf(wr->note, sizeof(wr->note), "control word 0: not counting");
	st_emit(t, wr);
	wr = st_new(t, "uncore");
	*wr = rd;
	ksnprintf(wr->name, sizeof(wr->name), "RDPMC 18-25 = RDMSR bits 31:0, EDX 0");
	selftest_judge_exact(wr, good[1], P4_UNC_NREG);
	if (!wr->note[0])
		ksnprintf(wr->note, sizeof(wr->note), "index order 18 -> 107CCH UNVERIFIED "
			  "(PMU reference 1.4)");
	st_emit(t, wr);
}

struct st_unc_ev {
	const char *spec;
	unsigned reg;		/* 0..7: 107CCH + reg */
};

static const struct st_unc_ev st_unc_evs[] = {
	{ "ibusq", 0 },
	{ "ibusq:fill=1", 1 },
	{ "efsb:other", 4 },
};
#define ST_UNC_NEV	(sizeof(st_unc_evs) / sizeof(st_unc_evs[0]))

/* The uncore events into the plan (started and stopped with its core counter). */
static int st_unc_plan(struct st *t)
{
	static struct p4_spec_error e;
	struct p4_unc_spec s;

	for (unsigned i = 0; i < ST_UNC_NEV; i++) {
		if (p4_unc_spec_parse(st_unc_evs[i].spec, &perf_info()->caps, &s, &e))
			return ksnprintf(t->err, t->errlen, "uncore: '%s': %s", st_unc_evs[i].spec,
					 e.msg), -1;
		t->plan.unc[i] = (struct p4_unc_slot){ .reg = st_unc_evs[i].reg,
						       .start = p4_unc_encode(&s, 0) };
	}
	t->plan.unc_n = ST_UNC_NEV;
	return 0;
}

/* One memwalk of `size` with the uncore events and RD_3rdL_MISS counting; their counts. */
static int st_unc_run(struct st *t, uint64_t size, uint64_t *unc, uint64_t *core)
{
	static struct perf_count sess;
	static struct workload_args a;
	char num[2][16], *argv[3] = { num[0], num[1], "1" };
	uint64_t totals[P4_MAX_REQUESTS];
	int r;

	ksnprintf(num[0], sizeof(num[0]), "%llu", (unsigned long long)size);
	ksnprintf(num[1], sizeof(num[1]), "%u", ST_UNC_STRIDE);
	if (st_parse_args(t, "memwalk", 3, argv, &a) ||
	    perf_count_start(&sess, &t->plan, 0, t->err, t->errlen))
		return -1;
	r = st_run_args(t, &a, 0, 0);
	perf_count_stop(&sess, totals);
	for (unsigned i = 0; i < ST_UNC_NEV; i++)
		unc[i] = sess.unc_total[i];
	*core = totals[0];
	return r;
}

static void st_unc_judge(struct st *t, const uint64_t *d, uint64_t core_d)
{
	for (unsigned i = 0; i < ST_UNC_NEV; i++) {
		const struct p4_unc_reg *u = p4_unc_reg_at(perf_info()->caps.uncore, st_unc_evs[i].reg);
		struct selftest_result *r = st_new(t, "uncore");

		ksnprintf(r->name, sizeof(r->name), "%s (%XH) %s, memwalk %u minus %u", u->name,
			  (unsigned)u->msr, st_unc_evs[i].spec, ST_UNC_S2, ST_UNC_S1);
		selftest_judge_uncore(r, d[i], core_d);
		if (core_d == 0)	/* "at least 0" holds for anything */
			st_no_evidence(r, "the core counted no L3 read miss over the walk");
		st_emit(t, r);
	}
}

/* IBUSQ and EFSB over two memwalk sizes (IFSB/EFSB set). */
static int st_unc_counting(struct st *t)
{
	static const struct st_ctr q = { .counter = P4_BPU_COUNTER0, .escr = P4_BSU_ESCR0,
					 .spec = "BSQ_cache_reference:RD_3rdL_MISS",
					 .from = ST_NO_FROM };
	uint64_t lo[ST_UNC_NEV], hi[ST_UNC_NEV], d[ST_UNC_NEV], core_lo, core_hi;

	if (st_plan(t, &q, 1) || st_unc_plan(t) || st_unc_run(t, ST_UNC_S1, lo, &core_lo) ||
	    st_unc_run(t, ST_UNC_S2, hi, &core_hi))
		return -1;
	for (unsigned i = 0; i < ST_UNC_NEV; i++)
		d[i] = hi[i] >= lo[i] ? hi[i] - lo[i] : 0;
	st_unc_judge(t, d, core_hi >= core_lo ? core_hi - core_lo : 0);
	return 0;
}

int st_uncore(struct st *t)
{
	const struct p4_caps *c = &perf_info()->caps;
	char why[112];
	uint64_t v;

	if (c->uncore == P4_UNCORE_NONE) {
		st_skip(t, "uncore", "uncore L3/FSB counters", "this model has no uncore counters");
		return 0;
	}
	if (msr_bus_read(perf_bus(), MSR_P4_UNCORE_FIRST, &v) != 0) {
		ksnprintf(why, sizeof(why), "this part has no uncore counters: reading 107CCH faults "
			  "(%s: %s)", c->uncore_name, c->uncore_note);
		st_skip(t, "uncore", "uncore L3/FSB counters", why);
		return 0;
	}
	st_unc_registers(t, c->uncore);
	if (c->uncore != P4_UNCORE_IFSB_EFSB) {
		st_skip(t, "uncore", "uncore counting", "checked on the IFSB/EFSB set only");
		return 0;
	}
	return st_unc_counting(t);
}
