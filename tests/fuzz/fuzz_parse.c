/*
 * fuzz_parse.c - the shell's tokenizer and number parser (lib/parse.c).
 *
 * Contract checked: at most PARSE_MAX_ARGS arguments, each inside the
 * buffer and with the quotes removed; an
 * error is one of the documented reasons. Every number that parses in one
 * spelling reads back the same in the other two (0x.., ..H, decimal), and
 * parse_u32 agrees with parse_u64 below 2^32.
 */
#include <inttypes.h>

#include "lib/parse.h"
#include "tests/fuzz/fuzz.h"

static void parse_check_number(const char *tok)
{
	const char *err = NULL;
	uint64_t v, back;
	uint32_t w;
	char spelled[3][32];
	bool ok64 = parse_u64(tok, UINT64_MAX, &v, &err);
	bool ok32 = parse_u32(tok, &w, &err);

	if (!ok64) {
		fuzz_check(!ok32 && err != NULL);
		return;
	}
	fuzz_check(ok32 == (v <= UINT32_MAX));
	fuzz_check(!ok32 || w == v);
	snprintf(spelled[0], sizeof(spelled[0]), "%" PRIu64, v);
	snprintf(spelled[1], sizeof(spelled[1]), "0x%" PRIx64, v);
	snprintf(spelled[2], sizeof(spelled[2]), "0%" PRIX64 "H", v);
	for (int i = 0; i < 3; i++) {
		fuzz_check(parse_u64(spelled[i], UINT64_MAX, &back, &err));
		fuzz_check(back == v);
	}
	if (v > 0)
		fuzz_check(!parse_u64(tok, v - 1, &back, &err));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_cstr(data, size);
	char *end = buf + strlen(buf);
	char *argv[PARSE_MAX_ARGS + 1];
	const char *err = NULL;
	int argc = parse_tokenize(buf, argv, PARSE_MAX_ARGS, &err);

	if (argc < 0) {
		fuzz_check(err != NULL);
		fuzz_check(strcmp(err, "too many words on the line (see 'help help')") == 0 ||
			   strcmp(err, "unterminated quote") == 0);
	}
	fuzz_check(argc <= PARSE_MAX_ARGS);
	for (int i = 0; i < argc; i++) {
		fuzz_check(argv[i] >= buf && argv[i] + strlen(argv[i]) <= end);
		fuzz_check(strchr(argv[i], '"') == NULL);
		parse_check_number(argv[i]);
	}
	fuzz_check(argc < 0 || argc == PARSE_MAX_ARGS || argv[argc] == NULL);
	free(buf);
	return 0;
}
