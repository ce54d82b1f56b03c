/*
 * fuzz_editor.c - the shell's line editor (shell_readline) fed raw bytes.
 *
 * Whatever arrives (escape sequences cut anywhere, control bytes, overlong
 * lines, bytes above 7FH), every line the editor returns is shorter than
 * SHELL_LINE_MAX, its length is what it says, and it holds printable
 * characters only: no byte of an escape sequence or of a control string
 * may reach the dispatcher as typed text. The input always ends (EOF).
 */
#include "shell/shell.h"
#include "tests/fuzz/fuzz.h"

struct editor_in {
	const uint8_t *data;
	size_t size, pos;
	size_t out;
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
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
	return 0;
}
