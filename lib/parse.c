/*
 * parse.c - tokens and numbers for the shell and nbprof.cfg.
 *
 * Numbers: "0x1A0" (C hex), "1A0H" / "1a0h" (the manual's hex notation,
 * which may also start with a letter, as in "FC00H") and "416" (decimal).
 * Overflow is detected before it happens, never after wrapping.
 */
#include <stddef.h>

#include "lib/parse.h"

static bool parse_is_blank(char c)
{
	return c == ' ' || c == '\t';
}

int parse_tokenize(char *buf, char **argv, int max, const char **err)
{
	char *r = buf, *w = buf;
	int argc = 0;

	for (;;) {
		bool quoted = false;

		while (parse_is_blank(*r))
			r++;
		if (*r == '\0')
			break;
		if (argc == max) {
			*err = "too many words on the line (see 'help help')";
			return -1;
		}
		argv[argc++] = w;
		for (; *r != '\0' && (quoted || !parse_is_blank(*r)); r++) {
			if (*r == '"')
				quoted = !quoted;
			else
				*w++ = *r;
		}
		if (quoted) {
			*err = "unterminated quote";
			return -1;
		}
		/* w never passes r, so ending the token here cannot clobber unread input */
		if (*r != '\0')
			r++;
		*w++ = '\0';
	}
	if (argc < max)
		argv[argc] = NULL;
	return argc;
}

int parse_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

size_t parse_strlen(const char *s)
{
	size_t n = 0;

	while (s[n] != '\0')
		n++;
	return n;
}

bool parse_streq(const char *a, const char *b)
{
	while (*a != '\0' && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

bool parse_u64(const char *s, uint64_t max, uint64_t *out, const char **err)
{
	size_t len = parse_strlen(s);
	unsigned base = 10;
	uint64_t v = 0;

	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
		len -= 2;
	} else if (len > 1 && (s[len - 1] == 'h' || s[len - 1] == 'H')) {
		base = 16;
		len--;
	}
	if (len == 0) {
		*err = "not a number";
		return false;
	}
	for (size_t i = 0; i < len; i++) {
		int d = parse_hex_digit(s[i]);

		if (d < 0 || (unsigned)d >= base) {
			*err = base == 10 && d >= 0 ? "not a number (hex needs 0x or an H suffix)"
						   : "not a number";
			return false;
		}
		/* compile-time limits: no 64-bit division, which a 32-bit build lacks */
		if (v > (base == 16 ? UINT64_MAX >> 4 : UINT64_MAX / 10) ||
		    v * base + (uint64_t)d < v * base || v * base + (uint64_t)d > max) {
			*err = "number too large";
			return false;
		}
		v = v * base + (uint64_t)d;
	}
	*out = v;
	return true;
}

bool parse_u32(const char *s, uint32_t *out, const char **err)
{
	uint64_t v;

	if (!parse_u64(s, UINT32_MAX, &v, err))
		return false;
	*out = (uint32_t)v;
	return true;
}
