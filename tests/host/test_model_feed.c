/*
 * test_model_feed.c - prof/backend/model_feed.c's model_feed_source(), the
 * input stat and pmu name for each event under the software model, on the
 * host. The rest of the feed needs the stepping machinery: those calls are
 * stubbed here and never reached.
 *
 * What the file promises: an event is tagged as stepped only when the step
 * feed (or the tagging feed, prof/backend/tagfeed.c, or the assist feed,
 * prof/backend/assistfeed.c) counts it; an event that nothing feeds has no
 * model input, or `synthetic` when that workload emitted it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "arch/x86/percpu.h"
#include "arch/x86/step.h"
#include "pmu/p4_events.h"
#include "prof/backend.h"
#include "prof/backend/assistfeed.h"
#include "prof/backend/model_adapter.h"
#include "prof/backend/tagfeed.h"
#include "prof/perf.h"

/* ---- what model_feed.c links against, unused by model_feed_source ---------------- */

struct model_adapter model_adapter;
bool percpu_gs_ready;

struct percpu *percpu_boot(void) { fail(); return NULL; }
void model_pmi_flush_now(struct model_pmi *p) { (void)p; fail(); }
bool perf_counting(void) { fail(); return false; }
uint64_t perf_feed_chunk(void) { fail(); return 0; }
void perf_lock(void) { fail(); }
void perf_unlock(void) { fail(); }
struct trap_frame *step_frame(void) { fail(); return NULL; }
uint64_t step_hold(void) { fail(); return 0; }
void step_release(uint64_t flags) { (void)flags; fail(); }
void step_window_begin(const struct workload_hooks *h, uint8_t lp) { (void)h; (void)lp; fail(); }
void step_window_end(void) { fail(); }
bool step_window_open(void) { fail(); return false; }

bool step_fp_usable(void) { fail(); return false; }

bool assistfeed_step(const struct step_info *s, struct assistfeed *out)
{
	(void)s, (void)out;
	fail();
	return false;
}

void tagfeed_step(const struct step_info *s, const struct trap_frame *f, struct p4_step_batch *b,
		  struct p4_pebs_record *regs)
{
	(void)s, (void)f, (void)b, (void)regs;
	fail();
}

bool tagfeed_fault(const struct step_fault *f, struct p4_step_batch *b,
		   struct p4_pebs_record *regs)
{
	(void)f, (void)b, (void)regs;
	fail();
	return false;
}

/* ---- tests ----------------------------------------------------------------------- */

static int setup(void **state)
{
	(void)state;
	memset(&model_adapter, 0, sizeof(model_adapter));
	return 0;
}

/* The eight FIRM events tagfeed.c counts (an instruction's x87/SIMD class, its moves). */
static void firm_classes_are_stepped(void **state)
{
	static const enum p4_event fed[] = {
		P4_EV_X87_FP_UOP, P4_EV_64BIT_MMX_UOP, P4_EV_128BIT_MMX_UOP, P4_EV_PACKED_SP_UOP,
		P4_EV_PACKED_DP_UOP, P4_EV_SCALAR_SP_UOP, P4_EV_SCALAR_DP_UOP,
		P4_EV_X87_SIMD_MOVES_UOP,
	};

	(void)state;
	for (unsigned i = 0; i < sizeof(fed) / sizeof(fed[0]); i++) {
		assert_true(p4_events[fed[i]].flags & P4_EVF_UPSTREAM_TAG);
		assert_int_equal(model_feed_source(fed[i], NULL), PERF_SOURCE_STEP);
	}
}

/*
 * SSE_input_assist is a FIRM event too (upstream tagging, PMU reference 5.7),
 * not counted by the tagging feed: the assist feed judges it, and x87_assist,
 * from the stepped instructions' operand values; `synthetic` when that
 * workload emitted it.
 */
static void assists_are_stepped(void **state)
{
	static const enum p4_event ev[] = { P4_EV_SSE_INPUT_ASSIST, P4_EV_X87_ASSIST };
	struct perf_inputs in = { 0 };

	(void)state;
	assert_true(p4_events[P4_EV_SSE_INPUT_ASSIST].flags & P4_EVF_UPSTREAM_TAG);
	for (unsigned i = 0; i < 2; i++) {
		in.synthetic = 0;
		assert_int_equal(model_feed_source(ev[i], NULL), PERF_SOURCE_STEP);
		assert_int_equal(model_feed_source(ev[i], &in), PERF_SOURCE_STEP);
		in.synthetic = 1000;
		in.synthetic_event = ev[i];
		assert_int_equal(model_feed_source(ev[i], &in), PERF_SOURCE_SYNTHETIC);
		in.synthetic_event = ev[1 - i];
		assert_int_equal(model_feed_source(ev[i], &in), PERF_SOURCE_STEP);
	}
}

/* The step feed's own events, and clockticks from the TSC before the memory model is ready. */
static void step_and_clock_sources(void **state)
{
	(void)state;
	assert_int_equal(model_feed_source(P4_EV_INSTR_RETIRED, NULL), PERF_SOURCE_STEP);
	assert_int_equal(model_feed_source(P4_EV_BRANCH_RETIRED, NULL), PERF_SOURCE_STEP);
	assert_int_equal(model_feed_source(P4_EV_EXECUTION_EVENT, NULL), PERF_SOURCE_STEP);
	assert_int_equal(model_feed_source(P4_EV_GLOBAL_POWER_EVENTS, NULL), PERF_SOURCE_TSC);
	model_adapter.mem_ready = true;
	assert_int_equal(model_feed_source(P4_EV_GLOBAL_POWER_EVENTS, NULL), PERF_SOURCE_COST);
	assert_int_equal(model_feed_source(P4_EV_BNR, NULL), PERF_SOURCE_NONE);
}

/*
 * The store buffer's events (pmu/model/p4_sbuf.c through memfeed.c) come from
 * the memory model once it is ready; `synthetic` alone marks them synthetic.
 */
static void store_buffer_events_are_the_memory_models(void **state)
{
	static const enum p4_event sb[] = {
		P4_EV_MOB_LOAD_REPLAY, P4_EV_MEMORY_CANCEL, P4_EV_RESOURCE_STALL, P4_EV_WC_BUFFER,
	};
	struct perf_inputs in = { 0 };

	(void)state;
	for (unsigned i = 0; i < sizeof(sb) / sizeof(sb[0]); i++) {
		model_adapter.mem_ready = false;
		assert_int_equal(model_feed_source(sb[i], &in), PERF_SOURCE_NONE);
		model_adapter.mem_ready = true;
		assert_int_equal(model_feed_source(sb[i], &in), PERF_SOURCE_MEMORY);
		in.synthetic = 1;
		in.synthetic_event = sb[i];
		assert_int_equal(model_feed_source(sb[i], &in), PERF_SOURCE_SYNTHETIC);
		in.mem_fed[sb[i] / 64] |= UINT64_C(1) << (sb[i] % 64);
		assert_int_equal(model_feed_source(sb[i], &in), PERF_SOURCE_MEMORY);
		in = (struct perf_inputs){ 0 };
	}
}

/* The trace cache's events (memfeed.c, pmu/model/p4_tc.c) come with the memory model. */
static void trace_cache_events_have_the_memory_model(void **state)
{
	static const enum p4_event tc[] = {
		P4_EV_BPU_FETCH_REQUEST, P4_EV_TC_MISC, P4_EV_MACHINE_CLEAR,
	};

	(void)state;
	for (unsigned i = 0; i < sizeof(tc) / sizeof(tc[0]); i++) {
		model_adapter.mem_ready = false;
		assert_int_equal(model_feed_source(tc[i], NULL), PERF_SOURCE_NONE);
		model_adapter.mem_ready = true;
		assert_int_equal(model_feed_source(tc[i], NULL), PERF_SOURCE_MEMORY);
	}
	assert_int_equal(model_feed_source(P4_EV_TC_DELIVER_MODE, NULL), PERF_SOURCE_COST);
}

/*
 * With the memory model ready, every core event has an input but five
 * (docs/guide/model.md says why): the bus signals of other agents
 * (b2b_cycles, bnr, snoop, response) and uop_type, which only tags. The
 * goal is at most five; this names them, so that a sixth fails here.
 */
static void five_events_have_no_input(void **state)
{
	static const enum p4_event none[] = {
		P4_EV_B2B_CYCLES, P4_EV_BNR, P4_EV_SNOOP, P4_EV_RESPONSE, P4_EV_UOP_TYPE,
	};
	unsigned n = 0;

	(void)state;
	model_adapter.mem_ready = true;
	for (unsigned ev = 0; ev < P4_NEVENT; ev++) {
		bool listed = false;

		for (unsigned k = 0; k < sizeof(none) / sizeof(none[0]); k++)
			listed |= none[k] == ev;
		if (model_feed_source((enum p4_event)ev, NULL) != PERF_SOURCE_NONE) {
			assert_false(listed);
			continue;
		}
		if (!listed)
			print_message("no model input: %s\n", p4_events[ev].name);
		assert_true(listed);
		n++;
	}
	assert_int_equal(n, sizeof(none) / sizeof(none[0]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(firm_classes_are_stepped, setup),
		cmocka_unit_test_setup(assists_are_stepped, setup),
		cmocka_unit_test_setup(step_and_clock_sources, setup),
		cmocka_unit_test_setup(store_buffer_events_are_the_memory_models, setup),
		cmocka_unit_test_setup(trace_cache_events_have_the_memory_model, setup),
		cmocka_unit_test_setup(five_events_have_no_input, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
