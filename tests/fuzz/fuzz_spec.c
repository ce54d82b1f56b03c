/*
 * fuzz_spec.c - event specifications (pmu/p4_spec.c) and `events PATTERN`.
 *
 * Byte 0 picks the CPU model, the rest is the spec. Contract checked: an
 * error points inside the text and leaves *out untouched; an accepted spec
 * formats to a canonical text that parses back to the same spec, with a
 * threshold of 0-15 and a period within 1..2^39-1 when sampling.
 */
#include "pmu/p4_spec.h"
#include "tests/fuzz/fuzz.h"

static void spec_line(void *ctx, const char *s)
{
	fuzz_check(strlen(s) < 4096);
}

static void spec_check_same(const struct p4_spec *a, const struct p4_spec *b)
{
	fuzz_check(a->event == b->event && a->mask == b->mask && a->tag_value == b->tag_value);
	fuzz_check(a->usr == b->usr && a->os == b->os && a->thread == b->thread);
	fuzz_check(a->compare == b->compare && a->complement == b->complement);
	fuzz_check(a->edge == b->edge && a->force_ovf == b->force_ovf && a->pebs == b->pebs);
	fuzz_check(a->threshold == b->threshold && a->period == b->period && a->after == b->after);
}

static void spec_check_accepted(const struct p4_spec *spec, const struct p4_caps *caps)
{
	struct p4_spec again;
	struct p4_spec_error err;
	char canon[512];
	int n = p4_spec_format(spec, canon, sizeof(canon));

	fuzz_check(spec->event < P4_NEVENT && spec->threshold <= 15);
	fuzz_check(spec->period <= P4_PERIOD_MAX);
	fuzz_check(n > 0 && (size_t)n < sizeof(canon) && strlen(canon) == (size_t)n);
	if (p4_spec_parse(canon, caps, &again, &err) != 0) {
		fprintf(stderr, "canonical '%s' refused: %s\n", canon, err.msg);
		abort();
	}
	spec_check_same(spec, &again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct p4_caps caps;
	struct p4_spec spec, untouched;
	struct p4_spec_error err;
	char *text;

	if (size < 1)
		return 0;
	fuzz_caps(data[0], &caps);
	text = fuzz_cstr(data + 1, size - 1);
	memset(&spec, 0xa5, sizeof(spec));
	untouched = spec;
	if (p4_spec_parse(text, (data[0] & 0x80) ? NULL : &caps, &spec, &err) == 0) {
		spec_check_accepted(&spec, (data[0] & 0x80) ? NULL : &caps);
	} else {
		fuzz_check(memcmp(&spec, &untouched, sizeof(spec)) == 0);
		fuzz_check(err.pos + err.len <= strlen(text) + 1);
		fuzz_check(memchr(err.msg, '\0', sizeof(err.msg)) != NULL);
	}
	p4_events_list(text, &caps, spec_line, NULL);
	free(text);
	return 0;
}
