/*
 * report.c - top list, per-instruction annotation and perf-script text.
 *
 * Aggregation is a hash table in the caller's scratch array (open
 * addressing, linear probing, a row is free while its count is 0); the
 * rows are then packed to the front and heap-sorted, so a report costs
 * O(samples + rows log rows) time and no memory of its own. Percentages
 * are integer hundredths, rounded to nearest. No 64-bit division runs per
 * sample: the table index comes from a multiply-shift.
 */
#include "lib/parse.h"
#include "prof/report.h"

#include "lib/printf.h"

#define REPORT_UNKNOWN	"[unknown]"
#define REPORT_OTHER	"[other]"

struct report_table {
	struct report_entry *e;
	size_t cap;
	uint64_t other;		/* samples whose key found no free row */
};

static void report_printf(const struct report_out *out, const char *fmt, ...) KPRINTF_FORMAT(2, 3);

static void report_printf(const struct report_out *out, const char *fmt, ...)
{
	char buf[REPORT_LINE_MAX];
	va_list ap;

	va_start(ap, fmt);
	kvsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	out->line(out->ctx, buf);
}

static bool report_stopped(const struct report_out *out)
{
	return out->stop && out->stop(out->ctx);
}

static const char *report_lookup(const struct report_syms *syms, uint64_t addr, uint64_t *off)
{
	*off = 0;
	return syms && syms->lookup ? syms->lookup(syms->ctx, addr, off) : NULL;
}

static void table_init(struct report_table *t, struct report_entry *e, size_t cap)
{
	t->e = e;
	t->cap = cap > UINT32_MAX ? UINT32_MAX : cap;
	t->other = 0;
	for (size_t i = 0; i < t->cap; i++)
		e[i] = (struct report_entry){ 0 };
}

static void table_add(struct report_table *t, uint64_t key, const char *name)
{
	uint64_t h = key * UINT64_C(0x9e3779b97f4a7c15);
	/* Multiply-shift maps the hash onto [0, cap) without a division. */
	size_t i = (size_t)(((h >> 32) * (uint64_t)t->cap) >> 32);

	for (size_t n = 0; n < t->cap; n++) {
		struct report_entry *e = &t->e[i];

		if (e->count == 0) {
			*e = (struct report_entry){ .key = key, .name = name, .count = 1 };
			return;
		}
		if (e->key == key) {
			e->count++;
			return;
		}
		if (++i == t->cap)
			i = 0;
	}
	t->other++;
}

/* Move used rows to the front; returns how many there are. */
static size_t table_pack(struct report_table *t)
{
	size_t n = 0;

	for (size_t i = 0; i < t->cap; i++)
		if (t->e[i].count)
			t->e[n++] = t->e[i];
	return n;
}

/* Order: by_count puts more samples first (ties by address), else by address. */
static bool entry_before(const struct report_entry *a, const struct report_entry *b, bool by_count)
{
	if (by_count && a->count != b->count)
		return a->count > b->count;
	return a->key < b->key;
}

static void heap_sift(struct report_entry *e, size_t root, size_t n, bool by_count)
{
	for (;;) {
		size_t child = 2 * root + 1, last = root;
		struct report_entry tmp;

		/* A max-heap of the "after" order, so popping yields ascending "before" order. */
		if (child < n && entry_before(&e[last], &e[child], by_count))
			last = child;
		if (child + 1 < n && entry_before(&e[last], &e[child + 1], by_count))
			last = child + 1;
		if (last == root)
			return;
		tmp = e[root];
		e[root] = e[last];
		e[last] = tmp;
		root = last;
	}
}

static void entries_sort(struct report_entry *e, size_t n, bool by_count)
{
	for (size_t i = n / 2; i-- > 0;)
		heap_sift(e, i, n, by_count);
	for (size_t end = n; end > 1; end--) {
		struct report_entry tmp = e[0];

		e[0] = e[end - 1];
		e[end - 1] = tmp;
		heap_sift(e, 0, end - 1, by_count);
	}
}

/* count/total as a percentage in hundredths, rounded. */
static uint64_t report_pct100(uint64_t count, uint64_t total)
{
	return total ? (count * 10000 + total / 2) / total : 0;
}

static bool event_selected(int event, const struct sample *s)
{
	return event == REPORT_ALL_EVENTS || s->event == (unsigned)event;
}

static void report_top_header(const struct sample_run *run, const struct report_opts *o,
			      uint64_t total, const struct report_out *out)
{
	struct sample_store sum;

	sample_run_totals(run, &sum);
	report_printf(out, "# %llu samples, sorted by %s", (unsigned long long)total,
		      o->sort == REPORT_SORT_IP ? "ip" : "symbol");
	for (uint32_t i = 0; i < run->nevents; i++)
		if (o->event == REPORT_ALL_EVENTS || (uint32_t)o->event == i)
			report_printf(out, "# event %u: %s, period %llu", i, run->events[i].name,
				      (unsigned long long)run->events[i].period);
	report_printf(out, "# lost: %llu dropped (buffer full), %llu overwritten, %llu nested",
		      (unsigned long long)sum.dropped, (unsigned long long)sum.overwritten,
		      (unsigned long long)sum.nested);
	report_printf(out, "# %7s %9s  %s", "Percent", "Samples", o->sort == REPORT_SORT_IP ? "Address             Symbol" : "Symbol");
}

static void report_top_row(const struct report_entry *e, enum report_sort sort, uint64_t total,
			   const struct report_syms *syms, const struct report_out *out)
{
	uint64_t pct = report_pct100(e->count, total), off;
	unsigned long long whole = pct / 100, frac = pct % 100, n = e->count;

	if (sort == REPORT_SORT_SYM) {
		if (e->name)
			report_printf(out, "  %3llu.%02llu%% %9llu  %s", whole, frac, n, e->name);
		else
			report_printf(out, "  %3llu.%02llu%% %9llu  0x%llx", whole, frac, n,
				      (unsigned long long)e->key);
		return;
	}
	if (e->name && report_lookup(syms, e->key, &off))
		report_printf(out, "  %3llu.%02llu%% %9llu  0x%016llx  %s+0x%llx", whole, frac, n,
			      (unsigned long long)e->key, e->name, (unsigned long long)off);
	else
		report_printf(out, "  %3llu.%02llu%% %9llu  0x%016llx  %s", whole, frac, n,
			      (unsigned long long)e->key, REPORT_UNKNOWN);
}

int64_t report_top(const struct sample_run *run, const struct report_opts *o,
		   const struct report_syms *syms, struct report_entry *scratch, size_t cap,
		   const struct report_out *out)
{
	struct report_table t;
	struct sample_run_iter ri;
	struct sample s;
	uint64_t total = 0;
	size_t n, shown;

	if (cap == 0)
		return -1;
	table_init(&t, scratch, cap);
	sample_run_iter_init(&ri, run);
	while (sample_run_iter_next(&ri, &s)) {
		uint64_t off;
		const char *name;

		if (!event_selected(o->event, &s))
			continue;
		total++;
		name = report_lookup(syms, s.ip, &off);
		if (o->sort == REPORT_SORT_SYM && name)
			table_add(&t, s.ip - off, name);
		else
			table_add(&t, s.ip, name);
	}
	n = table_pack(&t);
	entries_sort(scratch, n, true);
	report_top_header(run, o, total, out);
	shown = o->limit && o->limit < n ? o->limit : n;
	for (size_t i = 0; i < shown && !report_stopped(out); i++)
		report_top_row(&scratch[i], o->sort, total, syms, out);
	if (t.other) {
		uint64_t pct = report_pct100(t.other, total);

		report_printf(out, "  %3llu.%02llu%% %9llu  %s (table of %zu rows full)",
			      (unsigned long long)(pct / 100), (unsigned long long)(pct % 100),
			      (unsigned long long)t.other, REPORT_OTHER, cap);
	}
	if (shown < n)
		report_printf(out, "# %zu more rows not shown (limit %u)", n - shown, (unsigned)o->limit);
	return (int64_t)total;
}

static void report_annotate_row(const struct report_entry *e, uint64_t start, uint64_t total,
				const struct report_bytes *bytes, const struct report_out *out)
{
	uint64_t pct = report_pct100(e->count, total);
	char hex[15 * 3 + 1];
	uint8_t b[15];
	unsigned nb = bytes && bytes->read ? bytes->read(bytes->ctx, e->key, b, sizeof(b)) : 0;
	size_t pos = 0;

	hex[0] = '\0';
	if (nb > sizeof(b))
		nb = sizeof(b);
	for (unsigned i = 0; i < nb; i++)
		pos += (size_t)ksnprintf(hex + pos, sizeof(hex) - pos, i ? " %02x" : "%02x", b[i]);
	report_printf(out, "  +0x%04llx  0x%016llx %9llu %4llu.%02llu%%  %s",
		      (unsigned long long)(e->key - start), (unsigned long long)e->key,
		      (unsigned long long)e->count, (unsigned long long)(pct / 100),
		      (unsigned long long)(pct % 100), hex);
}

int64_t report_annotate(const struct sample_run *run, const char *symbol, int event,
			const struct report_syms *syms, const struct report_bytes *bytes,
			struct report_entry *scratch, size_t cap, const struct report_out *out)
{
	struct report_table t;
	struct sample_run_iter ri;
	struct sample s;
	uint64_t total = 0, all = 0, start = 0;
	size_t n;

	if (cap == 0)
		return -1;
	table_init(&t, scratch, cap);
	sample_run_iter_init(&ri, run);
	while (sample_run_iter_next(&ri, &s)) {
		uint64_t off;
		const char *name;

		if (!event_selected(event, &s))
			continue;
		all++;
		name = report_lookup(syms, s.ip, &off);
		if (!name || !parse_streq(name, symbol))
			continue;
		start = s.ip - off;
		total++;
		table_add(&t, s.ip, name);
	}
	if (total == 0) {
		report_printf(out, "# no samples in %s (%llu samples in all)", symbol,
			      (unsigned long long)all);
		return 0;
	}
	n = table_pack(&t);
	entries_sort(scratch, n, false);
	report_printf(out, "# %s at 0x%llx: %llu of %llu samples, %zu addresses", symbol,
		      (unsigned long long)start, (unsigned long long)total,
		      (unsigned long long)all, n);
	report_printf(out, "# %7s  %-18s %9s %8s  %s", "Offset", "Address", "Samples", "Percent", "Bytes");
	for (size_t i = 0; i < n && !report_stopped(out); i++)
		report_annotate_row(&scratch[i], start, total, bytes, out);
	if (t.other)
		report_printf(out, "# %llu samples at further addresses (table of %zu rows full)",
			      (unsigned long long)t.other, cap);
	return (int64_t)total;
}

/* Copy src to dst without blanks (perf's fields are blank-separated). */
static void report_token(char *dst, size_t n, const char *src, const char *fallback, size_t min_len)
{
	size_t i = 0;

	for (; src && src[i] && i + 1 < n; i++)
		dst[i] = (src[i] == ' ' || src[i] == '\t') ? '_' : src[i];
	dst[i] = '\0';
	if (i < min_len)
		ksnprintf(dst, n, "%s", fallback);
}

static void report_script_frame(uint64_t addr, bool is_return, const struct report_syms *syms,
				const struct report_out *out)
{
	uint64_t off;
	/* A return address may be one past the call at the end of a function. */
	const char *name = report_lookup(syms, is_return ? addr - 1 : addr, &off);

	if (name)
		report_printf(out, "\t%16llx %s+0x%llx (%s)", (unsigned long long)addr, name,
			      (unsigned long long)(off + (is_return ? 1 : 0)), REPORT_DSO);
	else
		report_printf(out, "\t%16llx %s (%s)", (unsigned long long)addr, REPORT_UNKNOWN, REPORT_DSO);
}

void report_script_sample(const struct sample_run *run, const struct sample *s,
			  const struct report_syms *syms, const struct report_out *out)
{
	/* Without a known TSC rate, 1 GHz: the time field then counts TSC ticks / 10^9. */
	uint64_t hz = run->tsc_hz ? run->tsc_hz : UINT64_C(1000000000);
	uint64_t d = s->tsc > run->tsc_start ? s->tsc - run->tsc_start : 0;
	unsigned long long sec = d / hz, usec = (d % hz) * 1000000 / hz;
	char comm[32], ev[64];
	uint64_t period = 0;

	report_token(comm, sizeof(comm), run->comm, REPORT_DSO, 2);
	if (s->event < run->nevents) {
		report_token(ev, sizeof(ev), run->events[s->event].name, "event", 1);
		period = run->events[s->event].period;
	} else {
		ksnprintf(ev, sizeof(ev), "event%u", s->event);
	}
	report_printf(out, "%s 0/%u [%03u] %llu.%06llu: %llu %s:", comm, s->lp, s->lp, sec, usec,
		      (unsigned long long)period, ev);
	report_script_frame(s->ip, false, syms, out);
	for (unsigned i = 0; i < s->nchain && i < SAMPLE_MAX_CHAIN; i++)
		report_script_frame(s->chain[i], true, syms, out);
	out->line(out->ctx, "");
}

uint64_t report_script(const struct sample_run *run, const struct report_syms *syms,
		       const struct report_out *out)
{
	struct sample_run_iter ri;
	struct sample s;
	uint64_t n = 0;

	sample_run_iter_init(&ri, run);
	while (!report_stopped(out) && sample_run_iter_next(&ri, &s)) {
		report_script_sample(run, &s, syms, out);
		n++;
	}
	return n;
}
