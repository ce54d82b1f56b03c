/*
 * fuzz_editor.c - the shell's line editor (shell_readline).
 *
 * Byte 0 picks one of two ways to use the rest:
 *   raw        the bytes as they are. Whatever arrives (escape sequences
 *              cut anywhere, control bytes, overlong lines, bytes above
 *              7FH), every line returned is shorter than SHELL_LINE_MAX,
 *              its length is what it says, and it holds printable
 *              characters only. The input always ends (EOF).
 *   composed   the bytes drive a generator of one line: printable
 *              characters mixed with complete escape sequences of every
 *              kind ECMA-48 defines (CSI and SS3 with any number of
 *              parameter and intermediate bytes, OSC/DCS/SOS/PM/APC strings
 *              holding anything but their terminators, ended by BEL or ST,
 *              nF and Fp sequences, ESC ESC), then CR. The line returned
 *              must be exactly the printable characters (none of an escape
 *              sequence leaks in), or empty after "error: line too long"
 *              when there are more than SHELL_LINE_MAX - 1 of them.
 */
#include "shell/shell.h"
#include "tests/fuzz/fuzz.h"

struct editor_in {
	const uint8_t *data;
	size_t size, pos;
	size_t out;
	char tail[20];		/* the last bytes written */
	bool too_long;		/* "error: line too long" was written */
};

static int editor_getc(void *ctx)
{
	struct editor_in *in = ctx;

	return in->pos < in->size ? in->data[in->pos++] : -1;
}

static void editor_write(void *ctx, const char *s, size_t n)
{
	struct editor_in *in = ctx;

	in->out += n;
	for (size_t i = 0; i < n; i++) {
		memmove(in->tail, in->tail + 1, sizeof(in->tail) - 1);
		in->tail[sizeof(in->tail) - 1] = s[i];
		if (memcmp(in->tail, "error: line too long", sizeof(in->tail)) == 0)
			in->too_long = true;
	}
}

static void editor_check_line(const struct shell *sh, int len)
{
	fuzz_check(len >= 0 && len < SHELL_LINE_MAX);
	fuzz_check((size_t)len == sh->len);
	fuzz_check(strlen(sh->line) == (size_t)len);
	for (int i = 0; i < len; i++)
		fuzz_check(sh->line[i] >= 0x20 && sh->line[i] < 0x7f);
	fuzz_check(sh->hist_count <= SHELL_HISTORY);
}

/* --- composed lines ---------------------------------------------------------- */

struct composer {
	const uint8_t *d;
	size_t n, pos;
	uint8_t *out;		/* bytes to type */
	size_t len, cap;
	char want[4096];	/* the printable characters among them */
	size_t nwant;
};

static uint8_t next(struct composer *c)
{
	return c->pos < c->n ? c->d[c->pos++] : 0;
}

static void emit(struct composer *c, uint8_t b)
{
	if (c->len == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 256;
		c->out = realloc(c->out, c->cap);
		if (c->out == NULL)
			abort();
	}
	c->out[c->len++] = b;
}

/* A byte in lo..hi picked by the input. */
static uint8_t pick(struct composer *c, uint8_t lo, uint8_t hi)
{
	return (uint8_t)(lo + next(c) % (hi - lo + 1));
}

static void compose_csi(struct composer *c, uint8_t intro)
{
	unsigned nparam = next(c) % 48, ninter = next(c) % 3;
	uint8_t final = pick(c, 0x40, 0x7e);

	emit(c, 0x1b);
	emit(c, intro);
	for (unsigned i = 0; i < nparam; i++)
		emit(c, pick(c, 0x30, 0x3f));
	for (unsigned i = 0; i < ninter; i++)
		emit(c, pick(c, 0x20, 0x2f));
	if (intro == '[' && nparam + ninter == 0 && (final == 'A' || final == 'B'))
		final = 'C';		/* up/down arrows walk the history */
	emit(c, final);
}

/* A control string: anything but its terminators (BEL, ESC) and its aborts. */
static void compose_string(struct composer *c, uint8_t intro)
{
	unsigned len = next(c) % 64;

	emit(c, 0x1b);
	emit(c, intro);
	for (unsigned i = 0; i < len; i++) {
		uint8_t b = next(c);

		if (b == 0x07 || b == 0x1b || b == 0x18 || b == 0x1a || b == 0x03)
			b = 'x';
		emit(c, b);
	}
	if (next(c) & 1) {
		emit(c, 0x07);
	} else {
		emit(c, 0x1b);
		emit(c, '\\');
	}
}

static void compose_escape(struct composer *c, uint8_t kind)
{
	static const uint8_t strings[] = { ']', 'P', 'X', '^', '_' };
	static const uint8_t fp[] = "0123456789:;<=>?@ABCDEFGHIJKLMNQRSTUVWYZ`abcdefghijklmnopqrstuvwxyz{|}~";
	unsigned ninter;

	switch (kind % 6) {
	case 0:
	case 1:
		compose_csi(c, kind % 6 ? 'O' : '[');
		break;
	case 2:
		compose_string(c, strings[next(c) % sizeof(strings)]);
		break;
	case 3:
		ninter = 1 + next(c) % 3;
		emit(c, 0x1b);
		for (unsigned i = 0; i < ninter; i++)
			emit(c, pick(c, 0x20, 0x2f));
		emit(c, pick(c, 0x30, 0x7e));
		break;
	case 4:
		emit(c, 0x1b);
		emit(c, fp[next(c) % (sizeof(fp) - 1)]);
		break;
	default:
		emit(c, 0x1b);		/* ESC ESC [ C: the first ESC is dropped */
		compose_csi(c, '[');
		break;
	}
}

static void editor_composed(const uint8_t *data, size_t size)
{
	static struct shell sh;
	struct composer c = { .d = data, .n = size };
	struct editor_in in = { 0 };
	struct shell_io io = { .ctx = &in, .getc = editor_getc, .write = editor_write };
	int len;

	while (c.pos < c.n && c.nwant < sizeof(c.want)) {
		uint8_t op = next(&c);

		if (op < 0xa0) {
			c.want[c.nwant++] = (char)(0x20 + op % 95);
			emit(&c, (uint8_t)c.want[c.nwant - 1]);
		} else {
			compose_escape(&c, op);
		}
	}
	emit(&c, '\r');
	in.data = c.out;
	in.size = c.len;
	shell_init(&sh, &io);
	len = shell_readline(&sh);
	editor_check_line(&sh, len);
	if (c.nwant < SHELL_LINE_MAX) {
		fuzz_check((size_t)len == c.nwant && memcmp(sh.line, c.want, c.nwant) == 0);
		fuzz_check(!in.too_long);
	} else {
		fuzz_check(len == 0 && in.too_long);
	}
	fuzz_check(in.pos == in.size);
	free(c.out);
}

/* --- raw bytes --------------------------------------------------------------- */

static void editor_raw(const uint8_t *data, size_t size)
{
	static struct shell sh;
	struct editor_in in = { .data = data, .size = size };
	struct shell_io io = { .ctx = &in, .getc = editor_getc, .write = editor_write };
	size_t lines = 0;
	int len;

	shell_init(&sh, &io);
	while ((len = shell_readline(&sh)) != SHELL_EOF) {
		editor_check_line(&sh, len);
		fuzz_check(++lines <= size);	/* each line consumes input */
	}
	fuzz_check(in.pos == size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] & 1)
		editor_composed(data + 1, size - 1);
	else
		editor_raw(data + 1, size - 1);
	return 0;
}
