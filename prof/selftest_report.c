/*
 * selftest_report.c - the portable half of `selftest`: judging a
 * measurement, the line people read, and the CRC-checked `NBS:` lines
 * tools/nbprof-decode reads (format in selftest.h).
 *
 * Portable: compiled freestanding in the kernel and on the host for tests.
 */
#include "lib/crc32.h"
#include "lib/printf.h"
#include "prof/selftest.h"

static const char *const selftest_status_names[] = {
	[SELFTEST_PASS] = "PASS",
	[SELFTEST_FAIL] = "FAIL",
	[SELFTEST_SKIP] = "SKIP",
};

const char *selftest_status_name(enum selftest_status s)
{
	return s <= SELFTEST_SKIP ? selftest_status_names[s] : "????";
}

void selftest_judge_exact(struct selftest_result *r, uint64_t measured, uint64_t expected)
{
	r->status = measured == expected ? SELFTEST_PASS : SELFTEST_FAIL;
	ksnprintf(r->measured, sizeof(r->measured), "%llu", (unsigned long long)measured);
	ksnprintf(r->expected, sizeof(r->expected), "%llu", (unsigned long long)expected);
}

void selftest_judge_range(struct selftest_result *r, uint64_t measured, uint64_t lo, uint64_t hi)
{
	r->status = measured >= lo && measured <= hi ? SELFTEST_PASS : SELFTEST_FAIL;
	ksnprintf(r->measured, sizeof(r->measured), "%llu", (unsigned long long)measured);
	ksnprintf(r->expected, sizeof(r->expected), "%llu..%llu", (unsigned long long)lo,
		  (unsigned long long)hi);
}

void selftest_skip(struct selftest_result *r, const char *why)
{
	r->status = SELFTEST_SKIP;
	r->measured[0] = '\0';
	ksnprintf(r->expected, sizeof(r->expected), "-");
	ksnprintf(r->note, sizeof(r->note), "%s", why);
}

void selftest_count(struct selftest_totals *t, const struct selftest_result *r)
{
	if (r->status == SELFTEST_PASS)
		t->passed++;
	else if (r->status == SELFTEST_FAIL)
		t->failed++;
	else
		t->skipped++;
}

int selftest_format(const struct selftest_result *r, bool verbose, char *buf, size_t n)
{
	if (r->status == SELFTEST_SKIP)
		return ksnprintf(buf, n, "SKIP  %-10s %s: %s", r->group, r->name, r->note);
	return ksnprintf(buf, n, "%s  %-10s %s: measured %s, expected %s%s%s%s",
			 selftest_status_name(r->status), r->group, r->name, r->measured,
			 r->expected, r->note[0] && (verbose || r->status == SELFTEST_FAIL) ? " (" : "",
			 r->note[0] && (verbose || r->status == SELFTEST_FAIL) ? r->note : "",
			 r->note[0] && (verbose || r->status == SELFTEST_FAIL) ? ")" : "");
}

/* Append s to buf at *pos as one field: '|' -> '/', control characters -> '?'. */
static bool selftest_put_field(char *buf, size_t n, size_t *pos, const char *s)
{
	for (; *s; s++) {
		char c = *s == '|' ? '/' : (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s;

		if (*pos + 1 >= n)
			return false;
		buf[(*pos)++] = c;
	}
	return true;
}

static bool selftest_put_char(char *buf, size_t n, size_t *pos, char c)
{
	if (*pos + 1 >= n)
		return false;
	buf[(*pos)++] = c;
	return true;
}

int selftest_frame(char *buf, size_t n, unsigned seq, const char *const *fields, unsigned nfields)
{
	static const char prefix[] = SELFTEST_PREFIX;
	size_t pos = 0, body;
	char num[16];

	if (n < sizeof(prefix) + 10)
		return -1;
	for (body = 0; prefix[body]; body++)
		buf[body] = prefix[body];
	pos = body;
	ksnprintf(num, sizeof(num), "%u", seq);
	if (!selftest_put_field(buf, n, &pos, num))
		return -1;
	for (unsigned i = 0; i < nfields; i++)
		if (!selftest_put_char(buf, n, &pos, '|') ||
		    !selftest_put_field(buf, n, &pos, fields[i] ? fields[i] : ""))
			return -1;
	if (pos + 10 >= n)
		return -1;
	ksnprintf(buf + pos, n - pos, "|%08X", crc32(buf + body, pos - body));
	return (int)(pos + 9);
}

int selftest_frame_result(char *buf, size_t n, unsigned seq, const struct selftest_result *r)
{
	const char *fields[] = { "check", r->group, selftest_status_name(r->status), r->name,
				 r->measured, r->expected, r->note };

	return selftest_frame(buf, n, seq, fields, sizeof(fields) / sizeof(fields[0]));
}
