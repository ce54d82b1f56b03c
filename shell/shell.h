/*
 * shell.h - the nbprof serial shell: line editor, dispatcher, commands.
 *
 * The shell talks to the world only through struct shell_io (bytes in, bytes
 * out) and shell/platform.h (what commands need from the kernel), so all of
 * it runs in host tests against fakes. Line ends are written as "\n"; the
 * io's write() turns them into CRLF when the terminal needs it (the kernel's
 * serial console does).
 *
 * The kernel's loop is:
 *
 *	shell_init(&sh, &io);
 *	while (shell_readline(&sh) >= 0)
 *		guarded(shell_execute(&sh, sh.line));	// exceptions return here
 *
 * Line editor: printable characters, backspace (08H) and DEL (7FH), Ctrl-U
 * kills the line, Ctrl-C abandons it ("^C", new prompt), CR, LF or CRLF ends
 * it, ESC [ A / ESC [ B walk the history; other escape sequences (CSI and
 * SS3 with parameters of any length, OSC/DCS/SOS/PM/APC strings up to BEL
 * or ESC \) are swallowed whole. A line longer than SHELL_LINE_MAX - 1
 * characters prints "error: line too long" at its end and comes back
 * empty. Everything after the line editor sees only a NUL-terminated
 * string.
 */
#ifndef NBPROF_SHELL_SHELL_H
#define NBPROF_SHELL_SHELL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/parse.h"
#include "lib/printf.h"

#define SHELL_PROMPT		"nbprof> "
#define SHELL_LINE_MAX		256	/* including the NUL */
#define SHELL_HISTORY		16
#define SHELL_MAX_TABLES	10	/* built-ins plus tables added later */

#define SHELL_EOF		(-1)	/* shell_readline: input ended */

struct shell;

struct shell_io {
	void *ctx;
	int (*getc)(void *ctx);				/* blocking; a byte, or -1 = end */
	void (*write)(void *ctx, const char *s, size_t n);
};

/* A command. run() returns 0 on success, non-zero after printing an error. */
struct shell_cmd {
	const char *name;
	const char *synopsis;	/* "msr read ADDR | msr write ADDR VALUE [--force]" */
	const char *summary;	/* one line for `help` */
	const char *help;	/* details for `help NAME`, lines ending in "\n" */
	int (*run)(struct shell *sh, int argc, char **argv);
};

struct shell_cmd_table {
	const struct shell_cmd *cmds;
	size_t n;
};

struct shell {
	struct shell_io io;
	char line[SHELL_LINE_MAX];		/* the line shell_readline returned */
	size_t len;
	/* history: hist[(hist_head - 1) % N] is the newest of hist_count entries */
	char hist[SHELL_HISTORY][SHELL_LINE_MAX];
	unsigned hist_head, hist_count;
	unsigned hist_pos;			/* 0 = the line being typed, k = k-th newest */
	char edit[SHELL_LINE_MAX];		/* the typed line while browsing history */
	bool after_cr;				/* swallow the LF of a CRLF */
	bool overflow;				/* line too long: discard up to its end */
	struct shell_cmd_table tables[SHELL_MAX_TABLES];
	unsigned ntables;
	int last_status;			/* what the last command returned */
};

/* The built-in commands: help, cpu, mem, msr, fault, events, reboot, poweroff. */
extern const struct shell_cmd shell_builtin_cmds[];
extern const size_t shell_builtin_ncmds;

/* Set up with the built-in command table; io is copied. */
void shell_init(struct shell *sh, const struct shell_io *io);

/* Add a further command table (e.g. PMU commands); -1 when all slots are used. */
int shell_add_commands(struct shell *sh, const struct shell_cmd *cmds, size_t n);

/* Find a command by name in all tables, or NULL. */
const struct shell_cmd *shell_find(const struct shell *sh, const char *name);

/*
 * Print the prompt and edit one line. Returns its length (the text is in
 * sh->line, also added to the history when not empty and not equal to the
 * newest entry), or SHELL_EOF when getc reported the end of input. A line
 * too long for sh->line is reported with one "error: ..." line and
 * returned empty (length 0), so nothing of it runs.
 */
int shell_readline(struct shell *sh);

/*
 * Tokenise and run one line. Returns the command's status; 0 for an empty
 * line; non-zero after one "error: ..." line for an unknown command or bad
 * quoting. line is not modified.
 */
int shell_execute(struct shell *sh, const char *line);

/* readline + execute until the input ends (host tests; the kernel guards its own loop). */
void shell_run(struct shell *sh);

void shell_write(struct shell *sh, const char *s, size_t n);
void shell_puts(struct shell *sh, const char *s);
int shell_printf(struct shell *sh, const char *fmt, ...) KPRINTF_FORMAT(2, 3);
int shell_vprintf(struct shell *sh, const char *fmt, va_list ap);
/* "error: <message>\n"; always returns 1 so commands can `return shell_error(...)`. */
int shell_error(struct shell *sh, const char *fmt, ...) KPRINTF_FORMAT(2, 3);

#endif
