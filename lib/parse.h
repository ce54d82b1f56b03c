/*
 * parse.h - the shell's pure parsing: tokens and numbers.
 *
 * No I/O and no state, so every rule is tested on the host. Numbers are
 * accepted in three spellings: C hex "0x1A0", the manual's notation "1A0H"
 * (either case of digits and suffix) and decimal "416". Anything else, an
 * empty string, or a value beyond the requested maximum is refused with a
 * short reason suitable for an "error: ..." line.
 */
#ifndef NBPROF_LIB_PARSE_H
#define NBPROF_LIB_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PARSE_MAX_ARGS		32

/*
 * Split buf in place at blanks (space, tab); double quotes group blanks into
 * an argument and are removed ("a b"c -> `a bc`). Returns argc (0 for a blank
 * line), or -1 with *err set for an unterminated quote or more than max
 * arguments. argv[argc] is NULL when argc < max.
 */
int parse_tokenize(char *buf, char **argv, int max, const char **err);

/* Parse s into *out when it is <= max; false with *err = reason otherwise. */
bool parse_u64(const char *s, uint64_t max, uint64_t *out, const char **err);

bool parse_u32(const char *s, uint32_t *out, const char **err);

/* String functions the shell needs (no libc on the kernel side). */
/* The value of hex digit c (0-9, a-f, A-F), or -1. */
int parse_hex_digit(char c);

size_t parse_strlen(const char *s);
bool parse_streq(const char *a, const char *b);

#endif
