/*
 * selftest/report.c - the portable half of `selftest`: judging a
 * measurement, the line people read, and the CRC-checked `NBS:` lines
 * tools/nbprof-decode reads (format in selftest.h).
 *
 * Portable: compiled freestanding in the kernel and on the host for tests.
 */
#include "lib/crc32.h"
#include "lib/printf.h"
#include "selftest/selftest.h"

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
	if (hi == UINT64_MAX)
		ksnprintf(r->expected, sizeof(r->expected), ">= %llu", (unsigned long long)lo);
	else
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

/* ---- the report block ------------------------------------------------------ */

typedef void selftest_line_fn(void *ctx, const char *line);

static unsigned selftest_put(char *line, size_t n, unsigned seq, const char *const *f,
			     unsigned nf, selftest_line_fn *out, void *ctx)
{
	if (selftest_frame(line, n, seq, f, nf) > 0)
		out(ctx, line);
	return seq + 1;
}

static unsigned selftest_machine_line(char *line, size_t n, unsigned seq,
				      const struct selftest_machine *m, const char *backend,
				      selftest_line_fn *out, void *ctx)
{
	char f[7][80];
	const char *fields[8] = { "machine", f[0], f[1], f[2], f[3], f[4], f[5], f[6] };

	ksnprintf(f[0], sizeof(f[0]), "cpuid=%08X", m->signature);
	ksnprintf(f[1], sizeof(f[1]), "sig=%s", m->display);
	ksnprintf(f[2], sizeof(f[2]), "stepping=%u", m->stepping);
	ksnprintf(f[3], sizeof(f[3]), "brand=%s", m->brand);
	if (m->ucode_ok)
		ksnprintf(f[4], sizeof(f[4]), "microcode=%08X", m->ucode);
	else
		ksnprintf(f[4], sizeof(f[4]), "microcode=unreadable");
	if (m->misc_ok)
		ksnprintf(f[5], sizeof(f[5]), "misc_enable=%016llX",
			  (unsigned long long)m->misc_enable);
	else
		ksnprintf(f[5], sizeof(f[5]), "misc_enable=unreadable");
	ksnprintf(f[6], sizeof(f[6]), "backend=%s", backend);
	return selftest_put(line, n, seq, fields, 8, out, ctx);
}

unsigned selftest_block(const struct selftest_machine *m, const char *backend,
			const struct selftest_result *r, unsigned nres,
			selftest_line_fn *out, void *ctx)
{
	char line[SELFTEST_LINE_MAX], a[4][16];
	const char *begin[] = { "begin", a[0], a[1] };
	const char *end[] = { "end", a[0], a[1], a[2], a[3] };
	struct selftest_totals t = { 0 };
	unsigned seq = 0;

	ksnprintf(a[0], sizeof(a[0]), "%u", SELFTEST_VERSION);
	ksnprintf(a[1], sizeof(a[1]), "%u", nres);
	seq = selftest_put(line, sizeof(line), seq, begin, 3, out, ctx);
	seq = selftest_machine_line(line, sizeof(line), seq, m, backend, out, ctx);
	for (unsigned i = 0; i < nres; i++) {
		selftest_count(&t, &r[i]);
		if (selftest_frame_result(line, sizeof(line), seq++, &r[i]) > 0)
			out(ctx, line);
	}
	ksnprintf(a[0], sizeof(a[0]), "%u", t.passed);
	ksnprintf(a[1], sizeof(a[1]), "%u", t.failed);
	ksnprintf(a[2], sizeof(a[2]), "%u", t.skipped);
	ksnprintf(a[3], sizeof(a[3]), "%u", seq + 1);
	return selftest_put(line, sizeof(line), seq, end, 5, out, ctx);
}
