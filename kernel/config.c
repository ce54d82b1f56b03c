/*
 * config.c - parse nbprof.cfg (format in config.h).
 *
 * The text is parsed twice: a first pass into a scratch copy decides
 * whether the whole file is valid, and only then does a second pass write
 * the real struct, so a bad file changes nothing and no large struct is
 * copied (no memcpy needed in the freestanding build).
 */
#include <stdbool.h>

#include "kernel/config.h"
#include "lib/parse.h"
#include "lib/printf.h"

/* One line with comment and surrounding blanks removed: key and value, NUL-terminated. */
struct config_line {
	char key[32];
	char value[CONFIG_RUN_LEN];
	bool has_eq;
};

void config_defaults(struct nb_config *cfg)
{
	cfg->serial_port = CONFIG_DEFAULT_PORT;
	cfg->serial_baud = CONFIG_UART_CLOCK;
	cfg->console = CONFIG_CONSOLE_BOTH;
	cfg->nrun = 0;
	for (unsigned i = 0; i < CONFIG_MAX_RUN; i++)
		cfg->run[i][0] = '\0';
}

static bool config_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* Copy s[0..n) without surrounding blanks into dst (size cap); false if too long. */
static bool config_copy_trimmed(const char *s, size_t n, char *dst, size_t cap)
{
	size_t j = 0;

	while (n > 0 && config_blank(*s)) {
		s++;
		n--;
	}
	while (n > 0 && config_blank(s[n - 1]))
		n--;
	if (n >= cap)
		return false;
	for (; j < n; j++)
		dst[j] = s[j];
	dst[j] = '\0';
	return true;
}

/* Split one raw line; a '#' at the start or after a blank begins a comment. */
static int config_split(const char *s, size_t n, struct config_line *ln, const char **why)
{
	size_t end = 0, eq = n;

	for (; end < n; end++) {
		if (s[end] == '#' && (end == 0 || config_blank(s[end - 1])))
			break;
		if (s[end] == '=' && eq == n)
			eq = end;
	}
	ln->has_eq = eq < end;
	if (!ln->has_eq) {
		ln->value[0] = '\0';
		if (!config_copy_trimmed(s, end, ln->key, sizeof(ln->key))) {
			*why = "key too long";
			return -1;
		}
		return 0;
	}
	if (!config_copy_trimmed(s, eq, ln->key, sizeof(ln->key))) {
		*why = "key too long";
		return -1;
	}
	if (!config_copy_trimmed(s + eq + 1, end - eq - 1, ln->value, sizeof(ln->value))) {
		*why = "value too long";
		return -1;
	}
	return 0;
}

static int config_apply(const struct config_line *ln, struct nb_config *cfg, char *why, size_t whylen)
{
	const char *err;
	uint64_t v;

	if (parse_streq(ln->key, "serial.port")) {
		if (!parse_u64(ln->value, 0xffff, &v, &err)) {
			ksnprintf(why, whylen, "serial.port '%s': %s (I/O port 1..FFFFH)", ln->value, err);
			return -1;
		}
		if (v == 0) {
			ksnprintf(why, whylen, "serial.port '%s': must be 1..FFFFH", ln->value);
			return -1;
		}
		cfg->serial_port = (uint16_t)v;
	} else if (parse_streq(ln->key, "serial.baud")) {
		if (!parse_u64(ln->value, CONFIG_UART_CLOCK, &v, &err) || v == 0 ||
		    CONFIG_UART_CLOCK % (uint32_t)v != 0) {
			ksnprintf(why, whylen, "serial.baud '%s': must divide %u (e.g. 115200, 57600, 38400, 9600)",
				  ln->value, CONFIG_UART_CLOCK);
			return -1;
		}
		cfg->serial_baud = (uint32_t)v;
	} else if (parse_streq(ln->key, "console")) {
		if (parse_streq(ln->value, "serial"))
			cfg->console = CONFIG_CONSOLE_SERIAL;
		else if (parse_streq(ln->value, "screen"))
			cfg->console = CONFIG_CONSOLE_SCREEN;
		else if (parse_streq(ln->value, "both"))
			cfg->console = CONFIG_CONSOLE_BOTH;
		else {
			ksnprintf(why, whylen, "console '%s': must be serial, screen or both", ln->value);
			return -1;
		}
	} else if (parse_streq(ln->key, "run")) {
		if (ln->value[0] == '\0') {
			ksnprintf(why, whylen, "run: empty command");
			return -1;
		}
		if (cfg->nrun == CONFIG_MAX_RUN) {
			ksnprintf(why, whylen, "more than %d run lines", CONFIG_MAX_RUN);
			return -1;
		}
		config_copy_trimmed(ln->value, CONFIG_RUN_LEN - 1, cfg->run[cfg->nrun++], CONFIG_RUN_LEN);
	} else {
		ksnprintf(why, whylen, "unknown key '%s' (known: serial.port, serial.baud, console, run)", ln->key);
		return -1;
	}
	return 0;
}

/*
 * A byte a line may not hold: a NUL or another control byte (00H-1FH, 7FH),
 * but for tabs (blanks) and a CR that ends the line (CRLF files). Returns
 * its column (1-based), 0 when there is none. A NUL would end the value
 * where the shell reads it and an escape or BEL would reach the terminal.
 */
static size_t config_bad_byte(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\t' || (c == '\r' && i + 1 == n))
			continue;
		if (c < 0x20 || c == 0x7f)
			return i + 1;
	}
	return 0;
}

/* One pass over the text; returns 0 or -1 with err filled. */
static int config_pass(const char *text, size_t len, struct nb_config *cfg, char *err, size_t errlen)
{
	struct config_line ln;
	char why[160];
	const char *w;
	unsigned lineno = 0;
	size_t bad;

	for (size_t pos = 0; pos < len;) {
		size_t start = pos;

		while (pos < len && text[pos] != '\n')
			pos++;
		lineno++;
		w = NULL;
		bad = config_bad_byte(text + start, pos - start);
		if (bad) {
			unsigned char c = (unsigned char)text[start + bad - 1];

			ksnprintf(err, errlen, "nbprof.cfg line %u: %s %02XH at column %u (only tabs and "
				  "printable text)", lineno, c ? "control byte" : "NUL byte", c, (unsigned)bad);
			return -1;
		}
		if (config_split(text + start, pos - start, &ln, &w) == 0 && ln.key[0] == '\0' && !ln.has_eq) {
			pos++;
			continue;	/* blank or comment */
		}
		if (w == NULL && !ln.has_eq)
			w = "expected 'key = value'";
		if (w == NULL && ln.key[0] == '\0')
			w = "missing key before '='";
		if (w != NULL)
			ksnprintf(why, sizeof(why), "%s", w);
		else if (config_apply(&ln, cfg, why, sizeof(why)) == 0) {
			pos++;
			continue;
		}
		ksnprintf(err, errlen, "nbprof.cfg line %u: %s", lineno, why);
		return -1;
	}
	return 0;
}

int config_parse(const char *text, size_t len, struct nb_config *cfg, char *err, size_t errlen)
{
	static struct nb_config scratch;	/* one boot-time caller; keeps the stack small */

	scratch.serial_port = cfg->serial_port;
	scratch.serial_baud = cfg->serial_baud;
	scratch.nrun = cfg->nrun;
	if (errlen > 0)
		err[0] = '\0';
	if (config_pass(text, len, &scratch, err, errlen) != 0)
		return -1;
	return config_pass(text, len, cfg, err, errlen);
}
