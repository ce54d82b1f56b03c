/*
 * p4_tagging.h - the tagging rules that `stat`, `record` and `selftest`
 * share (fact sheet 5.6, 5.7), as pure functions over a request list:
 *
 * - front_end_event counts only µops the front end tagged: a uop_type
 *   request (TAGLOADS and/or TAGSTORES) for the same LP must be there, or
 *   the count is 0 whatever runs. p4_tag_frontend_untagged() finds a
 *   front_end_event request without one; p4_tag_frontend_tagger() builds
 *   the uop_type TAGLOADS:TAGSTORES request that `record` adds for it.
 * - execution_event NBOGUSn / BOGUSn count only µops an upstream FIRM
 *   event tags with tag bit n: p4_tag_exec_untagged() finds a slot no
 *   request tags.
 *
 * p4_tag_why() words the refusal the same way everywhere.
 */
#ifndef NBPROF_PMU_P4_TAGGING_H
#define NBPROF_PMU_P4_TAGGING_H

#include <stddef.h>

#include "pmu/p4_alloc.h"
#include "pmu/p4_caps.h"

/* Index of a front_end_event request whose LP no uop_type request tags for, or -1. */
int p4_tag_frontend_untagged(const struct p4_request *req, unsigned n);

/* *t = uop_type:TAGLOADS:TAGSTORES for q's LP, thread and privilege (never sampled); 0 or -1. */
int p4_tag_frontend_tagger(const struct p4_caps *caps, const struct p4_request *q,
			   struct p4_request *t);

/* The lowest execution_event slot (0-3) no upstream request tags, or -1. */
int p4_tag_exec_untagged(const struct p4_request *req, unsigned n);

/* Why requests would count nothing for want of tagging, into buf; false when they would not. */
bool p4_tag_why(const struct p4_request *req, unsigned n, char *buf, size_t len);

#endif
