/*
 * fuzz_config.c - nbprof.cfg (kernel/config.c).
 *
 * The file's bytes are handed over as a block of exactly their length, as
 * boot/ reads them (no NUL after the end). Contract checked (config.h): an
 * error leaves the configuration exactly as it was and says which line;
 * an accepted file gives a port in 1..FFFFH, a baud rate that divides
 * 115200, at most CONFIG_MAX_RUN NUL-terminated run lines of printable
 * bytes and tabs (a file with another control byte, a NUL included, is
 * refused), and parsing the same file again on top of the defaults gives
 * the same result.
 */
#include "kernel/config.h"
#include "tests/fuzz/fuzz.h"

static void config_check_ok(const struct nb_config *cfg)
{
	fuzz_check(cfg->serial_port != 0);
	fuzz_check(cfg->serial_baud != 0 && CONFIG_UART_CLOCK % cfg->serial_baud == 0);
	fuzz_check(cfg->nrun <= CONFIG_MAX_RUN);
	for (unsigned i = 0; i < cfg->nrun; i++) {
		fuzz_check(memchr(cfg->run[i], '\0', CONFIG_RUN_LEN) != NULL);
		for (const char *p = cfg->run[i]; *p; p++)
			fuzz_check(*p == '\t' || ((unsigned char)*p >= 0x20 && *p != 0x7f));
	}
}

/* An accepted file holds no control byte but tabs and a CR before a line's end. */
static void config_check_text(const char *text, size_t size)
{
	for (size_t i = 0; i < size; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c == '\n' || c == '\t' || (c == '\r' && (i + 1 == size || text[i + 1] == '\n')))
			continue;
		fuzz_check(c >= 0x20 && c != 0x7f);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct nb_config cfg, before, again;
	char *text = malloc(size ? size : 1);
	char err[160];

	if (text == NULL)
		abort();
	memcpy(text, data, size);
	config_defaults(&cfg);
	before = cfg;
	if (config_parse(text, size, &cfg, err, sizeof(err)) == 0) {
		config_check_ok(&cfg);
		config_check_text(text, size);
		config_defaults(&again);
		fuzz_check(config_parse(text, size, &again, err, sizeof(err)) == 0);
		fuzz_check(memcmp(&cfg, &again, sizeof(cfg)) == 0);
	} else {
		fuzz_check(memcmp(&cfg, &before, sizeof(cfg)) == 0);
		fuzz_check(memchr(err, '\0', sizeof(err)) != NULL);
		fuzz_check(strncmp(err, "nbprof.cfg", 10) == 0);
	}
	free(text);
	return 0;
}
