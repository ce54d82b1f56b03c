/*
 * shell.c - line editor, history, dispatcher and output of the shell.
 *
 * The editor appends at the end of the line only (no cursor movement), so
 * every edit is echoed with plain characters and "\b \b"; that works on any
 * serial terminal. History is a ring of SHELL_HISTORY lines; browsing it
 * keeps the line being typed in sh->edit so ESC [ B brings it back.
 * A line longer than SHELL_LINE_MAX - 1 characters is refused whole, never
 * cut and run; escape sequences never leave bytes in the line.
 */
#include "shell/shell.h"

#define KEY_CTRL_C	0x03
#define KEY_BS		0x08
#define KEY_LF		0x0a
#define KEY_CR		0x0d
#define KEY_CTRL_U	0x15
#define KEY_ESC		0x1b
#define KEY_DEL		0x7f

static void shell_strlcpy(char *dst, const char *src, size_t cap)
{
	size_t i = 0;

	for (; i + 1 < cap && src[i] != '\0'; i++)
		dst[i] = src[i];
	dst[i] = '\0';
}

void shell_init(struct shell *sh, const struct shell_io *io)
{
	sh->io = *io;
	sh->line[0] = '\0';
	sh->len = 0;
	sh->hist_head = 0;
	sh->hist_count = 0;
	sh->hist_pos = 0;
	sh->edit[0] = '\0';
	sh->after_cr = false;
	sh->ntables = 0;
	sh->last_status = 0;
	shell_add_commands(sh, shell_builtin_cmds, shell_builtin_ncmds);
}

int shell_add_commands(struct shell *sh, const struct shell_cmd *cmds, size_t n)
{
	if (sh->ntables == SHELL_MAX_TABLES)
		return -1;
	sh->tables[sh->ntables].cmds = cmds;
	sh->tables[sh->ntables].n = n;
	sh->ntables++;
	return 0;
}

const struct shell_cmd *shell_find(const struct shell *sh, const char *name)
{
	for (unsigned t = 0; t < sh->ntables; t++)
		for (size_t i = 0; i < sh->tables[t].n; i++)
			if (parse_streq(sh->tables[t].cmds[i].name, name))
				return &sh->tables[t].cmds[i];
	return NULL;
}

/* --- output ---------------------------------------------------------------- */

void shell_write(struct shell *sh, const char *s, size_t n)
{
	if (n > 0)
		sh->io.write(sh->io.ctx, s, n);
}

void shell_puts(struct shell *sh, const char *s)
{
	shell_write(sh, s, parse_strlen(s));
}

/* printf output is gathered in chunks so the io sees few, larger writes. */
struct shell_outbuf {
	struct shell *sh;
	size_t n;
	char buf[64];
};

static void shell_outbuf_putc(void *ctx, char c)
{
	struct shell_outbuf *ob = ctx;

	ob->buf[ob->n++] = c;
	if (ob->n == sizeof(ob->buf)) {
		shell_write(ob->sh, ob->buf, ob->n);
		ob->n = 0;
	}
}

int shell_vprintf(struct shell *sh, const char *fmt, va_list ap)
{
	struct shell_outbuf ob = { .sh = sh, .n = 0 };
	int n = kvprintf_cb(shell_outbuf_putc, &ob, fmt, ap);

	shell_write(sh, ob.buf, ob.n);
	return n;
}

int shell_printf(struct shell *sh, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = shell_vprintf(sh, fmt, ap);
	va_end(ap);
	return n;
}

int shell_error(struct shell *sh, const char *fmt, ...)
{
	va_list ap;

	shell_puts(sh, "error: ");
	va_start(ap, fmt);
	shell_vprintf(sh, fmt, ap);
	va_end(ap);
	shell_puts(sh, "\n");
	return 1;
}

/* --- line editor ----------------------------------------------------------- */

static void shell_erase(struct shell *sh, size_t n)
{
	while (n-- > 0)
		shell_write(sh, "\b \b", 3);
}

/* Replace the visible line with text. */
static void shell_show(struct shell *sh, const char *text)
{
	shell_erase(sh, sh->len);
	shell_strlcpy(sh->line, text, sizeof(sh->line));
	sh->len = parse_strlen(sh->line);
	shell_write(sh, sh->line, sh->len);
}

static const char *shell_hist_entry(const struct shell *sh, unsigned k)
{
	return sh->hist[(sh->hist_head + SHELL_HISTORY - 1 - k) % SHELL_HISTORY];
}

static void shell_hist_add(struct shell *sh)
{
	if (sh->len == 0 || (sh->hist_count > 0 && parse_streq(shell_hist_entry(sh, 0), sh->line)))
		return;
	shell_strlcpy(sh->hist[sh->hist_head], sh->line, SHELL_LINE_MAX);
	sh->hist_head = (sh->hist_head + 1) % SHELL_HISTORY;
	if (sh->hist_count < SHELL_HISTORY)
		sh->hist_count++;
}

/* ESC [ A: older entry; ESC [ B: newer, down to the line being typed. */
static void shell_hist_move(struct shell *sh, bool older)
{
	if (older && sh->hist_pos < sh->hist_count) {
		if (sh->hist_pos == 0)
			shell_strlcpy(sh->edit, sh->line, sizeof(sh->edit));
		sh->hist_pos++;
		shell_show(sh, shell_hist_entry(sh, sh->hist_pos - 1));
	} else if (!older && sh->hist_pos > 0) {
		sh->hist_pos--;
		shell_show(sh, sh->hist_pos == 0 ? sh->edit : shell_hist_entry(sh, sh->hist_pos - 1));
	}
}

/*
 * Escape sequences (ECMA-48 section 5.3, as VT100-family terminals send
 * them). After ESC comes one of:
 *   [ (CSI) or O (SS3): parameter and intermediate bytes 20H..3FH, of any
 *     number, then a final byte 40H..7EH; only ESC [ A and ESC [ B mean
 *     something here (history);
 *   ] (OSC), P (DCS), X (SOS), ^ (PM), _ (APC): a control string, ended by
 *     BEL or by ST (ESC \); nothing of it is typed into the line;
 *   intermediate bytes 20H..2FH then one final byte (e.g. ESC ( B);
 *   any other byte 30H..7EH (e.g. Alt-x): both dropped.
 * A control byte where a sequence expects a parameter or a final byte ends
 * the sequence and then counts as the key it is, so ESC followed by Enter
 * still ends the line; ESC starts a new sequence. In a control string,
 * CAN, SUB and Ctrl-C end it, so a stray ESC ] never holds the shell.
 * Each function returns ESC_DONE, ESC_EOF or a byte to treat as a key.
 */
#define ESC_DONE	(-2)	/* sequence swallowed */
#define ESC_EOF		(-1)	/* input ended inside it */
#define ESC_AGAIN	(-3)	/* another ESC: *next is the byte after it */
#define KEY_BEL		0x07
#define KEY_CAN		0x18
#define KEY_SUB		0x1a

/* The byte after an ESC inside a sequence; ESC_EOF at end of input. */
static int shell_escape_restart(struct shell *sh, int *next)
{
	*next = sh->io.getc(sh->io.ctx);
	return *next < 0 ? ESC_EOF : ESC_AGAIN;
}

/* CSI / SS3 after the introducer: parameters of any length, then a final byte. */
static int shell_escape_csi(struct shell *sh, bool csi, int *next)
{
	for (unsigned params = 0;; params++) {
		int c = sh->io.getc(sh->io.ctx);

		if (c < 0)
			return ESC_EOF;
		if (c >= 0x40 && c <= 0x7e) {
			if (csi && params == 0 && (c == 'A' || c == 'B') && !sh->overflow)
				shell_hist_move(sh, c == 'A');
			return ESC_DONE;
		}
		if (c == KEY_ESC)
			return shell_escape_restart(sh, next);
		if (c < 0x20)
			return c;		/* malformed: the control byte is a key */
		if (c > 0x7e)
			return ESC_DONE;	/* malformed: swallowed */
	}
}

/* OSC, DCS, SOS, PM, APC: swallow the control string up to BEL or ST. */
static int shell_escape_string(struct shell *sh, int *next)
{
	for (;;) {
		int c = sh->io.getc(sh->io.ctx);

		if (c < 0)
			return ESC_EOF;
		if (c == KEY_BEL || c == KEY_CAN || c == KEY_SUB)
			return ESC_DONE;
		if (c == KEY_CTRL_C)
			return c;
		if (c != KEY_ESC)
			continue;
		c = sh->io.getc(sh->io.ctx);
		if (c < 0)
			return ESC_EOF;
		if (c == '\\')
			return ESC_DONE;	/* ST */
		*next = c;			/* ESC + another byte: a new sequence */
		return ESC_AGAIN;
	}
}

/* nF sequences: intermediate bytes 20H..2FH, then one final byte. */
static int shell_escape_nf(struct shell *sh, int *next)
{
	for (;;) {
		int c = sh->io.getc(sh->io.ctx);

		if (c < 0)
			return ESC_EOF;
		if (c == KEY_ESC)
			return shell_escape_restart(sh, next);
		if (c < 0x20)
			return c;
		if (c > 0x2f)
			return ESC_DONE;
	}
}

/* What follows one ESC whose next byte is c. */
static int shell_escape_one(struct shell *sh, int c, int *next)
{
	switch (c) {
	case '[':
	case 'O':
		return shell_escape_csi(sh, c == '[', next);
	case ']':
	case 'P':
	case 'X':
	case '^':
	case '_':
		return shell_escape_string(sh, next);
	case KEY_ESC:
		return shell_escape_restart(sh, next);
	}
	if (c < 0x20)
		return c;		/* ESC then Enter, Ctrl-C, ...: the key counts */
	if (c < 0x30)
		return shell_escape_nf(sh, next);
	return ESC_DONE;		/* ESC + one byte (e.g. Alt-x): both dropped */
}

/* After ESC: returns ESC_DONE, ESC_EOF, or a control byte to handle as a key. */
static int shell_escape(struct shell *sh)
{
	int c = sh->io.getc(sh->io.ctx);

	/* A loop, not recursion: a run of ESC bytes must not grow the stack. */
	while (c >= 0) {
		int r = shell_escape_one(sh, c, &c);

		if (r != ESC_AGAIN)
			return r;
	}
	return ESC_EOF;
}

static void shell_prompt(struct shell *sh)
{
	shell_puts(sh, SHELL_PROMPT);
}

/*
 * A printable byte. A line that does not fit is not cut: from the first
 * byte too many (signalled with one bell) input is discarded up to the end
 * of the line, which then reports the error and runs nothing.
 */
static void shell_type(struct shell *sh, char ch)
{
	if (sh->overflow)
		return;
	if (sh->len + 1 < SHELL_LINE_MAX) {
		sh->line[sh->len++] = ch;
		shell_write(sh, &ch, 1);
		return;
	}
	sh->overflow = true;
	shell_write(sh, "\a", 1);
}

/* End of line; an overlong one becomes an empty line after its error. */
static int shell_enter(struct shell *sh)
{
	shell_puts(sh, "\n");
	if (sh->overflow) {
		shell_error(sh, "line too long (max %u characters)", SHELL_LINE_MAX - 1);
		sh->overflow = false;
		sh->len = 0;
	}
	return 1;
}

/* One input byte; returns 1 when the line is complete, -1 at end of input, else 0. */
static int shell_key(struct shell *sh, int c)
{
	bool was_cr = sh->after_cr;

	sh->after_cr = false;
	switch (c) {
	case KEY_LF:
		if (was_cr)
			return 0;	/* second half of CRLF */
		/* fall through */
	case KEY_CR:
		sh->after_cr = c == KEY_CR;
		return shell_enter(sh);
	case KEY_BS:
	case KEY_DEL:
		if (sh->len > 0 && !sh->overflow) {
			sh->len--;
			shell_erase(sh, 1);
		}
		return 0;
	case KEY_CTRL_U:
		shell_erase(sh, sh->len);
		sh->len = 0;
		sh->overflow = false;
		return 0;
	case KEY_CTRL_C:
		shell_puts(sh, "^C\n");
		sh->len = 0;
		sh->hist_pos = 0;
		sh->overflow = false;
		shell_prompt(sh);
		return 0;
	case KEY_ESC:
		c = shell_escape(sh);
		if (c == ESC_EOF)
			return -1;
		/* the control byte that ended a sequence (never ESC: that restarts one) */
		return c == ESC_DONE ? 0 : shell_key(sh, c);
	}
	if (c >= 0x20 && c < 0x7f)
		shell_type(sh, (char)c);
	return 0;	/* other control bytes are ignored */
}

int shell_readline(struct shell *sh)
{
	sh->len = 0;
	sh->hist_pos = 0;
	sh->overflow = false;
	shell_prompt(sh);
	for (;;) {
		int c = sh->io.getc(sh->io.ctx);
		int r;

		if (c < 0)
			return SHELL_EOF;
		sh->line[sh->len] = '\0';	// shell_hist_move copies the line
		r = shell_key(sh, c);
		if (r < 0)
			return SHELL_EOF;
		if (r > 0)
			break;
	}
	sh->line[sh->len] = '\0';
	shell_hist_add(sh);
	return (int)sh->len;
}

/* --- dispatcher ------------------------------------------------------------ */

int shell_execute(struct shell *sh, const char *line)
{
	char buf[SHELL_LINE_MAX];
	char *argv[PARSE_MAX_ARGS + 1];
	const struct shell_cmd *cmd;
	const char *err;
	int argc;

	shell_strlcpy(buf, line, sizeof(buf));
	argc = parse_tokenize(buf, argv, PARSE_MAX_ARGS, &err);
	if (argc < 0)
		return sh->last_status = shell_error(sh, "%s", err);
	if (argc == 0)
		return sh->last_status = 0;
	argv[argc] = NULL;
	cmd = shell_find(sh, argv[0]);
	if (cmd == NULL)
		return sh->last_status = shell_error(sh, "unknown command '%s' (try 'help')", argv[0]);
	return sh->last_status = cmd->run(sh, argc, argv);
}

void shell_run(struct shell *sh)
{
	while (shell_readline(sh) >= 0)
		shell_execute(sh, sh->line);
}
