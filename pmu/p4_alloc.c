/*
 * p4_alloc.c - exhaustive (ESCR, counter) assignment with pruning.
 *
 * Each request gets a candidate list of (ESCR, counter) pairs in preference
 * order, built from the tables, the CPU's capabilities, the HT split and
 * the quirk rows below. A depth-first search then places requests one at
 * a time (most constrained first), checking counter exclusivity, ESCR
 * sharing and cascade links as it goes. When no assignment exists, a
 * deletion pass shrinks the request set to a minimal conflicting subset,
 * and the error names those requests and the rule they collide on.
 */
#include "pmu/p4_alloc.h"
#include "pmu/p4_pebs.h"
#include "pmu/p4_regs.h"
#include "pmu/p4_text.h"

#define P4_MAX_CAND	16
#define P4_NODE_BUDGET	2000000u

enum p4_quirk_kind {
	P4_QUIRK_AVOID_COUNTER,		/* never offer this counter */
	P4_QUIRK_NEEDS_FSB_ESCR1_OK,	/* offer this ESCR only when caps->fsb_escr1_ok */
};

struct p4_quirk {
	enum p4_quirk_kind kind;
	unsigned id;			/* enum p4_counter or enum p4_escr */
	const char *why;
};

static const struct p4_quirk p4_quirks[] = {
	{ P4_QUIRK_AVOID_COUNTER, P4_BPU_COUNTER1,
	  "Linux p4.c never uses BPU_CCCR1, saying its Enable bit is unreliable "
	  "(erratum not named; UNVERIFIED, PMU reference 9.5)" },
	{ P4_QUIRK_NEEDS_FSB_ESCR1_OK, P4_FSB_ESCR1,
	  "below signature F27H only FSB_ESCR0 exists for IOQ_allocation (SDM); other events "
	  "UNVERIFIED, so FSB_ESCR1 is avoided (PMU reference 1.2 note 2)" },
};

#define P4_NQUIRKS (sizeof(p4_quirks) / sizeof(p4_quirks[0]))

/* Counter preference inside a group: samplers and cascades try 16/17 first. */
static const uint8_t p4_pref_plain[P4_NCOUNTER] = {
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17
};
static const uint8_t p4_pref_iq_first[P4_NCOUNTER] = {
	16, 17, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
};

struct p4_cand {
	enum p4_escr escr;
	enum p4_counter counter;
};

struct p4_search {
	const struct p4_alloc_ctx *ctx;
	const struct p4_request *req;
	unsigned n;
	uint32_t active;			/* requests taking part (bit i) */
	uint64_t escr_value[P4_MAX_REQUESTS];
	struct p4_cand cand[P4_MAX_REQUESTS][P4_MAX_CAND];
	unsigned ncand[P4_MAX_REQUESTS];
	uint8_t order[P4_MAX_REQUESTS];
	/* state of the current partial assignment */
	int chosen[P4_MAX_REQUESTS];		/* index into cand[i], or -1 */
	uint32_t used_counters;
	unsigned escr_users[P4_NESCR];
	uint64_t escr_held[P4_NESCR];
	unsigned long nodes;
};

static bool p4_quirk_blocks_counter(enum p4_counter c)
{
	for (unsigned q = 0; q < P4_NQUIRKS; q++)
		if (p4_quirks[q].kind == P4_QUIRK_AVOID_COUNTER && p4_quirks[q].id == c)
			return true;
	return false;
}

static bool p4_quirk_blocks_escr(const struct p4_caps *caps, enum p4_escr e)
{
	for (unsigned q = 0; q < P4_NQUIRKS; q++)
		if (p4_quirks[q].kind == P4_QUIRK_NEEDS_FSB_ESCR1_OK && p4_quirks[q].id == e &&
		    !caps->fsb_escr1_ok)
			return true;
	return false;
}

static bool p4_is_starter(const struct p4_request *req, unsigned n, unsigned i)
{
	for (unsigned k = 0; k < n; k++)
		if (k != i && req[k].role == P4_ROLE_CASCADE && req[k].started_by == i)
			return true;
	return false;
}

static enum p4_lp p4_req_lp(const struct p4_alloc_ctx *ctx, const struct p4_request *r)
{
	return ctx->ht ? r->lp : P4_LP0;
}

/* The PMI routing a request ends up with. */
static enum p4_pmi p4_req_pmi(const struct p4_alloc_ctx *ctx, const struct p4_request *req,
			      unsigned n, unsigned i)
{
	const struct p4_request *r = &req[i];

	/*
	 * A PEBS counter gets no OVF_PMI whatever was asked: its overflows are
	 * the assist's, and with OVF_PMI set the hardware interrupts on every
	 * one of them (perfmon2 programs IQ_CCCR4 without OVF_PMI and saw "a
	 * spurious interrupt for every counter overflow" with it). The DS
	 * threshold interrupt is the PEBS PMI.
	 */
	if (r->role == P4_ROLE_PEBS)
		return P4_PMI_NONE;
	if (r->pmi != P4_PMI_AUTO)
		return r->pmi;
	if (!r->spec.period || p4_is_starter(req, n, i))
		return P4_PMI_NONE;
	return p4_req_lp(ctx, r) == P4_LP1 ? P4_PMI_LP1 : P4_PMI_LP0;
}

/* Does the HT split let request r use the ESCR on `side`? */
static bool p4_split_allows(const struct p4_alloc_ctx *ctx, const struct p4_request *r, int side)
{
	const struct p4_event_desc *ev = &p4_events[r->spec.event];
	bool single = ev->escrs[0] == P4_ESCR_NONE || ev->escrs[1] == P4_ESCR_NONE;

	if (!ctx->ht || ctx->split == P4_SPLIT_GLOBAL || single)
		return true;
	if (r->lp == P4_LP_BOTH)
		return side == 0;
	return side == (r->lp == P4_LP1);
}

/*
 * Under the Linux split the ESCR side already fixes the counter half; events
 * with a single ESCR are shared by both LPs and use that ESCR's counters.
 */
static bool p4_counter_allowed(const struct p4_alloc_ctx *ctx, const struct p4_request *r,
			       enum p4_counter c)
{
	if (p4_quirk_blocks_counter(c))
		return false;
	if (r->role == P4_ROLE_PEBS)
		return c == (p4_req_lp(ctx, r) == P4_LP1 ? P4_IQ_COUNTER5 : P4_IQ_COUNTER4);
	return true;
}

static void p4_build_candidates(struct p4_search *s, unsigned i)
{
	const struct p4_alloc_ctx *ctx = s->ctx;
	const struct p4_request *r = &s->req[i];
	const struct p4_event_desc *ev = &p4_events[r->spec.event];
	bool iq_first = r->role != P4_ROLE_COUNT || p4_is_starter(s->req, s->n, i) ||
			p4_req_pmi(ctx, s->req, s->n, i) != P4_PMI_NONE;
	const uint8_t *pref = iq_first ? p4_pref_iq_first : p4_pref_plain;

	s->ncand[i] = 0;
	for (int side = 0; side < 2; side++) {
		enum p4_escr e = ev->escrs[side];

		if (e == P4_ESCR_NONE || !(p4_escrs[e].models & ctx->caps->escr_models) ||
		    p4_quirk_blocks_escr(ctx->caps, e) || !p4_split_allows(ctx, r, side))
			continue;
		for (unsigned k = 0; k < P4_NCOUNTER; k++) {
			enum p4_counter c = (enum p4_counter)pref[k];

			if ((p4_escrs[e].counters & P4_CTR(c)) && p4_counter_allowed(ctx, r, c) &&
			    s->ncand[i] < P4_MAX_CAND)
				s->cand[i][s->ncand[i]++] = (struct p4_cand){ e, c };
		}
	}
}

static const struct p4_cascade_link *p4_link(const struct p4_caps *caps, enum p4_counter from,
					     enum p4_counter to)
{
	const struct p4_cascade_link *l = p4_cascade_find(from, to);

	if (l && l->extended && !caps->ext_cascade)
		return NULL;
	return l;
}

/* Cascade constraints between i (placed at c) and already placed requests. */
static bool p4_cascade_ok(const struct p4_search *s, unsigned i, enum p4_counter c)
{
	const struct p4_request *r = &s->req[i];

	if (r->role == P4_ROLE_CASCADE && s->chosen[r->started_by] >= 0) {
		enum p4_counter from = s->cand[r->started_by][s->chosen[r->started_by]].counter;

		if (!p4_link(s->ctx->caps, from, c))
			return false;
	}
	for (unsigned k = 0; k < s->n; k++) {
		if (!(s->active & (1u << k)) || s->chosen[k] < 0 || k == i)
			continue;
		if (s->req[k].role == P4_ROLE_CASCADE && s->req[k].started_by == i &&
		    !p4_link(s->ctx->caps, c, s->cand[k][s->chosen[k]].counter))
			return false;
	}
	return true;
}

static bool p4_place(struct p4_search *s, unsigned depth)
{
	unsigned i;

	while (depth < s->n && !(s->active & (1u << s->order[depth])))
		depth++;
	if (depth == s->n)
		return true;
	if (++s->nodes > P4_NODE_BUDGET)
		return false;
	i = s->order[depth];
	for (unsigned k = 0; k < s->ncand[i]; k++) {
		struct p4_cand cd = s->cand[i][k];

		if (s->used_counters & P4_CTR(cd.counter))
			continue;
		if (s->escr_users[cd.escr] && s->escr_held[cd.escr] != s->escr_value[i])
			continue;
		if (!p4_cascade_ok(s, i, cd.counter))
			continue;
		s->chosen[i] = (int)k;
		s->used_counters |= P4_CTR(cd.counter);
		s->escr_users[cd.escr]++;
		s->escr_held[cd.escr] = s->escr_value[i];
		if (p4_place(s, depth + 1))
			return true;
		s->escr_users[cd.escr]--;
		s->used_counters &= ~P4_CTR(cd.counter);
		s->chosen[i] = -1;
	}
	return false;
}

static bool p4_search_run(struct p4_search *s, uint32_t active)
{
	s->active = active;
	s->used_counters = 0;
	s->nodes = 0;
	for (unsigned i = 0; i < P4_MAX_REQUESTS; i++)
		s->chosen[i] = -1;
	for (unsigned e = 0; e < P4_NESCR; e++)
		s->escr_users[e] = 0;
	return p4_place(s, 0);
}

/*
 * Most constrained first: PEBS, cascaded counters (they get first pick of
 * 16/17, the sampling pair), their starters, then the rest; ties by the
 * number of candidates.
 */
static unsigned p4_rank(const struct p4_search *s, unsigned i)
{
	unsigned rank = s->ncand[i];

	if (s->req[i].role == P4_ROLE_PEBS)
		return rank;
	if (s->req[i].role == P4_ROLE_CASCADE)
		return 100 + rank;
	if (p4_is_starter(s->req, s->n, i))
		return 200 + rank;
	return 300 + rank;
}

static void p4_order(struct p4_search *s)
{
	for (unsigned i = 0; i < s->n; i++)
		s->order[i] = (uint8_t)i;
	for (unsigned a = 1; a < s->n; a++) {	/* insertion sort, stable */
		uint8_t v = s->order[a];
		unsigned b = a;

		while (b > 0 && p4_rank(s, s->order[b - 1]) > p4_rank(s, v)) {
			s->order[b] = s->order[b - 1];
			b--;
		}
		s->order[b] = v;
	}
}

static void p4_describe_req(struct p4_text *t, const struct p4_alloc_ctx *ctx,
			    const struct p4_request *r, unsigned i)
{
	static const char *const lps[] = { "LP0", "LP1", "LP0+LP1" };
	char buf[160];

	p4_spec_format(&r->spec, buf, sizeof(buf));
	p4_text_add(t, "#%u %s on %s", i + 1, buf, lps[p4_req_lp(ctx, r)]);
}

static int p4_alloc_fail1(struct p4_alloc_error *err, const struct p4_alloc_ctx *ctx,
			  const struct p4_request *req, unsigned i, const char *why)
{
	struct p4_text t;

	p4_text_init(&t, err->msg, sizeof(err->msg));
	p4_describe_req(&t, ctx, &req[i], i);
	p4_text_add(&t, ": %s", why);
	err->nconflict = 1;
	err->conflict[0] = (uint8_t)i;
	return -1;
}

/*
 * F3: with FORCE_OVF every increment overflows (SDM CCCR text); with a PMI
 * and CPL 0 counted, the handler's own instructions after the reload
 * overflow the counter again and the next PMI follows the IRET at once: the
 * workload never runs again (perfctr insists on reload -1 and warns of
 * endless PMIs, PMU reference 9.8). A period no longer than the handler's
 * tail does the same (P4_PMI_TAIL_MAX). At CPL > 0 only (:u) the handler
 * adds nothing.
 */
const char *p4_pmi_refusal(const struct p4_spec *spec, bool pmi, unsigned ksamplers, char *buf,
			   size_t n)
{
	uint64_t bound = p4_pmi_tail_bound(ksamplers);
	struct p4_text t;

	if (!pmi || !spec->os)
		return NULL;
	if (spec->force_ovf)
		return "FORCE_OVF with an overflow PMI counts at CPL 0 too: the handler's own events "
		       "would overflow it again after every reload and the PMIs never end; count it "
		       "at :u only";
	if (!spec->period || spec->period > bound)
		return NULL;
	p4_text_init(&t, buf, n);
	p4_text_add(&t, "a period of at most %llu counted at CPL 0 (:k) overflows again inside its own "
		    "overflow handler (its tail after the reload is up to %llu instructions at CPL 0",
		    (unsigned long long)bound, (unsigned long long)bound);
	if (ksamplers > 1)
		p4_text_add(&t, ", with %u counters that count CPL 0 and interrupt in the plan", ksamplers);
	p4_text_add(&t, "), and the PMIs never end: use a period above %llu, or count at :u",
		    (unsigned long long)bound);
	return buf;
}

/* The requests of a plan that count CPL 0 and interrupt (not a cascade's starter): the tail's. */
static unsigned p4_ksamplers(const struct p4_alloc_ctx *ctx, const struct p4_request *req, unsigned n)
{
	unsigned k = 0;

	for (unsigned j = 0; j < n; j++)
		k += req[j].spec.os && !p4_is_starter(req, n, j) &&
		     p4_req_pmi(ctx, req, n, j) != P4_PMI_NONE;
	return k;
}

/* Checks of one request on its own; returns 0 or fails with a reason. */
static int p4_check_one(const struct p4_alloc_ctx *ctx, const struct p4_request *req, unsigned n,
			unsigned i, struct p4_alloc_error *err)
{
	const struct p4_request *r = &req[i];
	const struct p4_event_desc *ev = &p4_events[r->spec.event];
	enum p4_pmi pmi = p4_req_pmi(ctx, req, n, i);
	char text[320];
	const char *why;

	if ((unsigned)r->spec.event >= P4_NEVENT)
		return p4_alloc_fail1(err, ctx, req, 0, "unknown event");
	if (ev->need == P4_NEED_INSTR_COMPLETED && !ctx->caps->instr_completed)
		return p4_alloc_fail1(err, ctx, req, i, "instr_completed exists on models 3, 4, 6 only");
	if (!ctx->ht && r->lp != P4_LP0)
		return p4_alloc_fail1(err, ctx, req, i, "LP1 exists only with Hyper-Threading");
	if (!ctx->ht && (pmi == P4_PMI_LP1 || pmi == P4_PMI_BOTH))
		return p4_alloc_fail1(err, ctx, req, i, "OVF_PMI_T1 exists only with Hyper-Threading");
	if (r->role == P4_ROLE_PEBS && !(ev->flags & P4_EVF_PEBS))
		return p4_alloc_fail1(err, ctx, req, i, "PEBS works only with front_end_event, "
					   "execution_event and replay_event (SDM 18.16.3)");
	if (r->role == P4_ROLE_PEBS && r->lp == P4_LP_BOTH)
		return p4_alloc_fail1(err, ctx, req, i, "PEBS samples one LP (IQ_CCCR4 LP0, IQ_CCCR5 LP1)");
	/* a cascade starter's period is "after N": it overflows once, then counts on (prof/perf.c) */
	why = p4_is_starter(req, n, i) ? NULL : p4_pmi_refusal(&r->spec, pmi != P4_PMI_NONE,
							       p4_ksamplers(ctx, req, n), text,
							       sizeof(text));
	if (why)
		return p4_alloc_fail1(err, ctx, req, i, why);
	if (r->role == P4_ROLE_CASCADE && (r->started_by >= n || r->started_by == i))
		return p4_alloc_fail1(err, ctx, req, i, "cascade start names no other request");
	if (r->role == P4_ROLE_CASCADE && pmi != P4_PMI_NONE && ctx->caps->cascade_pmi_erratum)
		return p4_alloc_fail1(err, ctx, req, i, "no PMI from a counter in cascade mode on this "
					   "part (erratum, SDM 18.15.5.7)");
	return 0;
}

/* Union of the candidate counters / ESCRs of the requests in `set`. */
static void p4_union(const struct p4_search *s, uint32_t set, uint32_t *ctrs, uint64_t *escrs)
{
	*ctrs = 0;
	*escrs = 0;
	for (unsigned i = 0; i < s->n; i++) {
		if (!(set & (1u << i)))
			continue;
		for (unsigned k = 0; k < s->ncand[i]; k++) {
			*ctrs |= P4_CTR(s->cand[i][k].counter);
			*escrs |= UINT64_C(1) << s->cand[i][k].escr;
		}
	}
}

static void p4_conflict_reason(struct p4_text *t, const struct p4_search *s, uint32_t set)
{
	uint32_t ctrs;
	uint64_t escrs;
	unsigned members = (unsigned)__builtin_popcount(set);
	bool cascade = false;

	p4_union(s, set, &ctrs, &escrs);
	for (unsigned i = 0; i < s->n; i++)
		if ((set & (1u << i)) && s->req[i].role == P4_ROLE_CASCADE &&
		    (set & (1u << s->req[i].started_by)))
			cascade = true;
	if (members > (unsigned)__builtin_popcount(ctrs)) {
		p4_text_add(t, "; only %d counters can count them:", __builtin_popcount(ctrs));
		for (unsigned c = 0; c < P4_NCOUNTER; c++)
			if (ctrs & P4_CTR(c))
				p4_text_add(t, " %u", c);
		return;
	}
	if (cascade) {
		p4_text_add(t, "; no pair of their counters is linked for cascading (bit 30: 0<->2, "
			       "1<->3 per block, 14->16, 15->17%s)",
			    s->ctx->caps->ext_cascade ? "; bit 11: 16->12, 17->15, 17->16, 16->17"
						      : "; no extended cascading on this model");
		return;
	}
	p4_text_add(t, "; they compete for");
	for (unsigned e = 0; e < P4_NESCR; e++)
		if (escrs & (UINT64_C(1) << e))
			p4_text_add(t, " %s", p4_escrs[e].name);
	p4_text_add(t, " with different settings (an ESCR holds one event setting) and counters");
	for (unsigned c = 0; c < P4_NCOUNTER; c++)
		if (ctrs & P4_CTR(c))
			p4_text_add(t, " %u", c);
}

static int p4_alloc_conflict(struct p4_search *s, struct p4_alloc_error *err)
{
	uint32_t set = s->active;
	struct p4_text t;
	unsigned m = 0;

	/* Deletion filter: drop every request whose removal keeps the set infeasible. */
	for (unsigned i = 0; i < s->n; i++)
		if ((set & (1u << i)) && !p4_search_run(s, set & ~(1u << i)) &&
		    s->nodes <= P4_NODE_BUDGET)
			set &= ~(1u << i);
	p4_text_init(&t, err->msg, sizeof(err->msg));
	p4_text_add(&t, "cannot place together:");
	for (unsigned i = 0; i < s->n; i++) {
		if (!(set & (1u << i)))
			continue;
		err->conflict[m++] = (uint8_t)i;
		p4_text_add(&t, m > 1 ? "," : "");
		p4_text_add(&t, " ");
		p4_describe_req(&t, s->ctx, &s->req[i], i);
	}
	err->nconflict = m;
	if (m == 1 && s->ncand[err->conflict[0]] == 0)
		p4_text_add(&t, "; none of its ESCRs is usable on this CPU");
	else
		p4_conflict_reason(&t, s, set);
	return -1;
}

static void p4_fill_slot(const struct p4_search *s, unsigned i, struct p4_plan *plan)
{
	const struct p4_request *r = &s->req[i];
	struct p4_slot *slot = &plan->slot[i];
	struct p4_cccr_cfg cfg = { 0 };
	enum p4_pmi pmi = p4_req_pmi(s->ctx, s->req, s->n, i);
	struct p4_cand cd = s->cand[i][s->chosen[i]];

	slot->escr = cd.escr;
	slot->counter = cd.counter;
	slot->escr_value = s->escr_value[i];
	slot->link = NULL;
	if (r->role == P4_ROLE_CASCADE) {
		struct p4_cand from = s->cand[r->started_by][s->chosen[r->started_by]];

		slot->link = p4_link(s->ctx->caps, from.counter, cd.counter);
	}
	p4_cccr_from_spec(&r->spec, &cfg);
	cfg.escr_select = p4_escrs[cd.escr].select;
	cfg.enable = slot->link == NULL;	/* a cascaded counter waits, disabled */
	cfg.cascade = slot->link && !slot->link->extended;
	cfg.ext_cascade = slot->link && slot->link->extended;
	cfg.pmi_t0 = pmi == P4_PMI_LP0 || pmi == P4_PMI_BOTH;
	cfg.pmi_t1 = pmi == P4_PMI_LP1 || pmi == P4_PMI_BOTH;
	slot->cccr_value = p4_cccr_encode(&cfg, s->ctx->ht);
	slot->preset = r->spec.period ? p4_counter_preset(r->spec.period) : 0;
}

static int p4_alloc_metric(const struct p4_alloc_ctx *ctx, const struct p4_request *reqs,
			   unsigned n, struct p4_plan *plan, struct p4_alloc_error *err);

int p4_alloc_plan(const struct p4_alloc_ctx *ctx, const struct p4_request *reqs, unsigned n,
		  struct p4_plan *plan, struct p4_alloc_error *err)
{
	static struct p4_search s;	/* large; the planner is not re-entrant */

	err->nconflict = 0;
	err->msg[0] = '\0';
	if (n > P4_MAX_REQUESTS) {
		struct p4_text t;

		p4_text_init(&t, err->msg, sizeof(err->msg));
		p4_text_add(&t, "%u requests: at most %d counters exist", n, P4_NCOUNTER);
		return -1;
	}
	for (unsigned i = 0; i < n; i++)
		if (p4_check_one(ctx, reqs, n, i, err))
			return -1;
	s.ctx = ctx;
	s.req = reqs;
	s.n = n;
	for (unsigned i = 0; i < n; i++) {
		s.escr_value[i] = p4_escr_encode(&reqs[i].spec, p4_req_lp(ctx, &reqs[i]), ctx->ht);
		p4_build_candidates(&s, i);
	}
	p4_order(&s);
	if (!p4_search_run(&s, (1u << n) - 1))
		return p4_alloc_conflict(&s, err);
	plan->n = n;
	plan->unc_n = 0;		/* the caller adds uncore counters (p4_alloc.h) */
	plan->ht = ctx->ht;
	plan->pebs = false;
	plan->writer_lp = 0;
	plan->ds_area_set = false;
	plan->pebs_metric = 0;
	plan->matrix_vert = 0;
	for (unsigned i = 0; i < n; i++) {
		plan->req[i] = reqs[i];
		p4_fill_slot(&s, i, plan);
		if (reqs[i].role == P4_ROLE_PEBS)
			plan->pebs = true;
	}
	if (p4_alloc_metric(ctx, reqs, n, plan, err))
		return -1;
	for (unsigned i = 0; i < n; i++)	/* once every slot's and the metric's ESCR is known */
		plan->slot[i].cccr_quiet = p4_cccr_quiet(plan, i);
	return 0;
}


/*
 * Replay-tagging metrics (PMU reference 5.5): PEBS_ENABLE and MATRIX_VERT are
 * shared by every counter (and both LPs), so a plan holds one metric;
 * its extra upstream ESCR must exist on the model and be free of slots.
 */
static int p4_alloc_metric(const struct p4_alloc_ctx *ctx, const struct p4_request *reqs,
			   unsigned n, struct p4_plan *plan, struct p4_alloc_error *err)
{
	const struct p4_replay_metric *m = NULL;

	plan->metric_escr = P4_ESCR_NONE;
	plan->metric_escr_value = 0;
	for (unsigned i = 0; i < n; i++) {
		const struct p4_replay_metric *mi;
		struct p4_spec up = reqs[i].spec;

		if (!reqs[i].spec.metric)
			continue;
		mi = &p4_replay_metrics[reqs[i].spec.metric - 1];
		if (m && m != mi)
			return p4_alloc_fail1(err, ctx, reqs, i, "one replay-tagging metric at a time: "
					      "PEBS_ENABLE and PEBS_MATRIX_VERT are shared");
		m = mi;
		plan->pebs_metric = m->pebs_enable;
		plan->matrix_vert = m->matrix_vert;
		if (m->extra == P4_NEVENT)
			continue;
		if (!(p4_escrs[m->extra_escr].models & ctx->caps->escr_models) ||
		    p4_plan_uses(plan, m->extra_escr))
			return p4_alloc_fail1(err, ctx, reqs, i, "the metric's upstream ESCR is taken "
					      "by another event (PMU reference 5.5)");
		up.event = m->extra;
		up.mask = m->extra_mask;
		up.metric = 0;
		up.tag_value = 0;
		plan->metric_escr = m->extra_escr;
		plan->metric_escr_value = p4_escr_encode(&up, p4_req_lp(ctx, &reqs[i]), ctx->ht);
	}
	return 0;
}

bool p4_plan_uses(const struct p4_plan *plan, enum p4_escr e)
{
	if (plan->metric_escr_value && plan->metric_escr == e)
		return true;
	for (unsigned k = 0; k < plan->n; k++)
		if (plan->slot[k].escr == e)
			return true;
	return false;
}

int p4_plan_pebs_idx(const struct p4_plan *plan, unsigned lp)
{
	for (unsigned i = 0; plan && i < plan->n; i++)
		if (plan->req[i].role == P4_ROLE_PEBS && (plan->req[i].lp == P4_LP1) == (lp == 1))
			return (int)i;
	return -1;
}

uint64_t p4_cccr_quiet(const struct p4_plan *plan, unsigned i)
{
	enum p4_counter c = plan->slot[i].counter;

	for (unsigned sel = 0; sel <= CCCR_ESCR_SELECT >> 13; sel++) {
		enum p4_escr e = p4_escr_for_select(c, sel);

		/* An ESCR every model has (the IQ_ESCRs are gone from model 3 on). */
		if (e != P4_ESCR_NONE && p4_escrs[e].models == P4_MODELS_ALL && !p4_plan_uses(plan, e))
			return (uint64_t)sel << 13;
	}
	return 0;
}
