/*
 * p4_tagging.c - the front-end and execution tagging rules (see
 * p4_tagging.h; fact sheet 5.6 and 5.7).
 */
#include "lib/printf.h"
#include "pmu/p4_events.h"
#include "pmu/p4_spec.h"
#include "pmu/p4_tagging.h"

static bool p4_tag_has_uop_type(const struct p4_request *req, unsigned n, enum p4_lp lp)
{
	for (unsigned i = 0; i < n; i++)
		if (req[i].spec.event == P4_EV_UOP_TYPE && req[i].lp == lp)
			return true;
	return false;
}

int p4_tag_frontend_untagged(const struct p4_request *req, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (req[i].spec.event == P4_EV_FRONT_END_EVENT &&
		    !p4_tag_has_uop_type(req, n, req[i].lp))
			return (int)i;
	return -1;
}

int p4_tag_frontend_tagger(const struct p4_caps *caps, const struct p4_request *q,
			   struct p4_request *t)
{
	struct p4_spec_error e;

	*t = (struct p4_request){ .lp = q->lp, .pmi = P4_PMI_NONE, .role = P4_ROLE_COUNT };
	if (p4_spec_parse("uop_type:TAGLOADS:TAGSTORES", caps, &t->spec, &e))
		return -1;
	t->spec.thread = q->spec.thread;
	t->spec.os = q->spec.os;
	t->spec.usr = q->spec.usr;
	return 0;
}

int p4_tag_exec_untagged(const struct p4_request *req, unsigned n)
{
	unsigned tags = 0, want = 0;

	for (unsigned i = 0; i < n; i++) {
		const struct p4_spec *s = &req[i].spec;

		if (p4_events[s->event].flags & P4_EVF_UPSTREAM_TAG)
			tags |= s->tag_value;
		if (s->event == P4_EV_EXECUTION_EVENT)
			want |= (s->mask | s->mask >> 4) & 0xfu;	/* NBOGUSn bit n, BOGUSn bit 4+n */
	}
	for (int bit = 0; bit < 4; bit++)
		if ((want & ~tags) & (1u << bit))
			return bit;
	return -1;
}

bool p4_tag_why(const struct p4_request *req, unsigned n, char *buf, size_t len)
{
	int k;

	if ((k = p4_tag_frontend_untagged(req, n)) >= 0) {
		ksnprintf(buf, len, "#%d front_end_event counts only the uops the front end tags "
			  "(fact sheet 5.6), and no uop_type request tags for its LP: it would "
			  "count 0; add -e uop_type:TAGLOADS:TAGSTORES", k + 1);
		return true;
	}
	if ((k = p4_tag_exec_untagged(req, n)) >= 0) {
		ksnprintf(buf, len, "execution_event counts only the uops an upstream FIRM event "
			  "tags (fact sheet 5.7): nothing tags with bit %d; add one, e.g. "
			  "-e x87_FP_uop:TAG%d", k, k);
		return true;
	}
	return false;
}
