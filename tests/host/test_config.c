/*
 * test_config.c - nbprof.cfg parsing (format in kernel/config.h).
 *
 * The baud rate must divide the 16550's 115200 base rate (divisor latch =
 * 115200 / baud), so 57600 and 9600 are accepted and 100000 is not.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/config.h"

static int parse(const char *text, struct nb_config *cfg, char *err, size_t errlen)
{
	return config_parse(text, strlen(text), cfg, err, errlen);
}

static void defaults_are_com1_115200(void **state)
{
	struct nb_config cfg;

	config_defaults(&cfg);
	assert_int_equal(cfg.serial_port, 0x3f8);
	assert_int_equal(cfg.serial_baud, 115200);
	assert_int_equal(cfg.console, CONFIG_CONSOLE_BOTH);
	assert_int_equal(cfg.nrun, 0);
}

/* console = serial|screen|both; anything else is an error that changes nothing. */
static void console_choice(void **state)
{
	static const struct { const char *text; unsigned want; } ok[] = {
		{ "console = serial\n", CONFIG_CONSOLE_SERIAL },
		{ "console = screen   # no UART on this laptop\n", CONFIG_CONSOLE_SCREEN },
		{ "console=both\n", CONFIG_CONSOLE_BOTH },
	};
	struct nb_config cfg;
	char err[128];

	for (unsigned i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		config_defaults(&cfg);
		cfg.console = 0;
		assert_int_equal(parse(ok[i].text, &cfg, err, sizeof(err)), 0);
		assert_int_equal(cfg.console, ok[i].want);
	}
	config_defaults(&cfg);
	assert_int_equal(parse("console = serial\nconsole = vga\n", &cfg, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "line 2: console 'vga': must be serial, screen or both"));
	assert_int_equal(cfg.console, CONFIG_CONSOLE_BOTH);
	assert_int_equal(parse("console =\n", &cfg, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "line 1: console ''"));
}

static void full_file(void **state)
{
	static const char text[] =
		"# nbprof configuration\n"
		"\n"
		"serial.port = 0x2f8\n"
		"  serial.baud=57600   # COM2 at half speed\n"
		"run = cpu\r\n"
		"run =   msr read 1A0H  \n"
		"run = help \"msr\"\n";
	struct nb_config cfg;
	char err[128];

	config_defaults(&cfg);
	assert_int_equal(parse(text, &cfg, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_int_equal(cfg.serial_port, 0x2f8);
	assert_int_equal(cfg.serial_baud, 57600);
	assert_int_equal(cfg.nrun, 3);
	assert_string_equal(cfg.run[0], "cpu");
	assert_string_equal(cfg.run[1], "msr read 1A0H");
	assert_string_equal(cfg.run[2], "help \"msr\"");
}

static void number_notations(void **state)
{
	struct nb_config cfg;
	char err[128];

	config_defaults(&cfg);
	assert_int_equal(parse("serial.port = 2F8H", &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.serial_port, 0x2f8);
	assert_int_equal(parse("serial.port = 1016", &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.serial_port, 0x3f8);
	assert_int_equal(parse("serial.baud = 9600\n", &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.serial_baud, 9600);
}

/* Each bad file: -1, an error naming the line, and the config unchanged. */
static void expect_error(const char *text, const char *want_substring)
{
	struct nb_config cfg;
	char err[160];

	config_defaults(&cfg);
	assert_int_equal(parse("run = cpu\n", &cfg, err, sizeof(err)), 0);
	assert_int_equal(parse(text, &cfg, err, sizeof(err)), -1);
	if (strstr(err, want_substring) == NULL)
		fail_msg("error '%s' does not contain '%s'", err, want_substring);
	assert_int_equal(cfg.serial_port, 0x3f8);
	assert_int_equal(cfg.serial_baud, 115200);
	assert_int_equal(cfg.nrun, 1);
	assert_string_equal(cfg.run[0], "cpu");
}

static void unknown_key_names_line(void **state)
{
	expect_error("# x\nserial.port = 0x3f8\nserial.speed = 9600\n", "line 3: unknown key 'serial.speed'");
}

static void bad_values(void **state)
{
	expect_error("serial.baud = 100000\n", "line 1: serial.baud '100000'");
	expect_error("serial.baud = 0\n", "line 1: serial.baud");
	expect_error("serial.baud = 230400\n", "line 1: serial.baud");
	expect_error("serial.baud = fast\n", "line 1: serial.baud");
	expect_error("serial.port = 0x10000\n", "line 1: serial.port '0x10000': number too large");
	expect_error("serial.port = 0\n", "line 1: serial.port '0'");
	expect_error("serial.port = com1\n", "line 1: serial.port 'com1'");
	expect_error("serial.port =\n", "line 1: serial.port");
	expect_error("\n\nrun =\n", "line 3: run: empty command");
}

static void malformed_lines(void **state)
{
	expect_error("serial.port 0x3f8\n", "line 1: expected 'key = value'");
	expect_error("run = cpu\n= 5\n", "line 2: missing key");
}

static void changes_nothing_when_a_later_line_is_bad(void **state)
{
	expect_error("serial.port = 0x2f8\nrun = mem\nrun = help\nbogus = 1\n", "line 4: unknown key 'bogus'");
}

static void too_many_run_lines(void **state)
{
	char text[CONFIG_MAX_RUN * 16 + 32] = "";
	struct nb_config cfg;
	char err[128];

	for (int i = 0; i < CONFIG_MAX_RUN; i++)
		strcat(text, "run = cpu\n");
	config_defaults(&cfg);
	assert_int_equal(parse(text, &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.nrun, CONFIG_MAX_RUN);
	strcat(text, "run = mem\n");
	config_defaults(&cfg);
	assert_int_equal(parse(text, &cfg, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "line 17"));
	assert_int_equal(cfg.nrun, 0);
}

static void too_long_command(void **state)
{
	char text[CONFIG_RUN_LEN + 32] = "run = ";
	struct nb_config cfg;
	char err[128];

	memset(text + 6, 'x', CONFIG_RUN_LEN);
	text[6 + CONFIG_RUN_LEN] = '\0';
	config_defaults(&cfg);
	assert_int_equal(parse(text, &cfg, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "line 1: value too long"));
}

static void hash_inside_a_word_is_kept(void **state)
{
	struct nb_config cfg;
	char err[128];

	config_defaults(&cfg);
	assert_int_equal(parse("run = echo a#b # comment\n", &cfg, err, sizeof(err)), 0);
	assert_string_equal(cfg.run[0], "echo a#b");
}

/* Text with NULs in it: config_parse takes a length, not a C string. */
static void expect_error_n(const char *text, size_t len, const char *want_substring)
{
	struct nb_config cfg;
	char err[160];

	config_defaults(&cfg);
	assert_int_equal(parse("run = cpu\nconsole = serial\n", &cfg, err, sizeof(err)), 0);
	assert_int_equal(config_parse(text, len, &cfg, err, sizeof(err)), -1);
	if (strstr(err, want_substring) == NULL)
		fail_msg("error '%s' does not contain '%s'", err, want_substring);
	assert_int_equal(cfg.nrun, 1);
	assert_string_equal(cfg.run[0], "cpu");
	assert_int_equal(cfg.console, CONFIG_CONSOLE_SERIAL);
}

/* N6: a NUL or another control byte in a line is refused, and nothing changes; tabs and CRLF are blanks. */
static void control_bytes_are_refused(void **state)
{
	static const char nul_run[] = "run = help\nrun = cpu\0poweroff\n";
	static const char nul_console[] = "console = both\0garbage\n";
	struct nb_config cfg;
	char err[160];

	expect_error_n(nul_run, sizeof(nul_run) - 1, "line 2: NUL byte 00H at column 10");
	expect_error_n(nul_console, sizeof(nul_console) - 1, "line 1: NUL byte 00H at column 15");
	expect_error("run = help\x1b[2J\x07x\n", "line 1: control byte 1BH at column 11");
	expect_error("run = mem\n# a bell \x07\n", "line 2: control byte 07H at column 10");
	expect_error("run = cpu\r mem\r\n", "line 1: control byte 0DH at column 10");
	expect_error("run = cpu\x7f\n", "line 1: control byte 7FH at column 10");
	config_defaults(&cfg);
	assert_int_equal(parse("run\t=\tstat -e x\t# tabs\r\nconsole = screen\r\n", &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.nrun, 1);
	assert_string_equal(cfg.run[0], "stat -e x");
	assert_int_equal(cfg.console, CONFIG_CONSOLE_SCREEN);
}

static void empty_text_and_small_err(void **state)
{
	struct nb_config cfg;
	char err[8];

	config_defaults(&cfg);
	assert_int_equal(config_parse("", 0, &cfg, err, sizeof(err)), 0);
	assert_int_equal(parse("nope = 1\n", &cfg, err, sizeof(err)), -1);
	assert_int_equal(strlen(err), sizeof(err) - 1);	/* truncated, still terminated */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults_are_com1_115200),
		cmocka_unit_test(console_choice),
		cmocka_unit_test(full_file),
		cmocka_unit_test(number_notations),
		cmocka_unit_test(unknown_key_names_line),
		cmocka_unit_test(bad_values),
		cmocka_unit_test(malformed_lines),
		cmocka_unit_test(changes_nothing_when_a_later_line_is_bad),
		cmocka_unit_test(too_many_run_lines),
		cmocka_unit_test(too_long_command),
		cmocka_unit_test(hash_inside_a_word_is_kept),
		cmocka_unit_test(control_bytes_are_refused),
		cmocka_unit_test(empty_text_and_small_err),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
