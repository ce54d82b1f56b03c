/*
 * config.h - the optional nbprof.cfg on the ESP.
 *
 * boot/ reads the raw file before ExitBootServices; kmain parses it with
 * config_parse(). The format is line based:
 *
 *	# a comment (also after a value, when preceded by a blank)
 *	serial.port = 0x3f8		# I/O port: 0x.., ..H or decimal, 1..FFFFH
 *	serial.baud = 115200		# must divide 115200 (16550 divisor)
 *	run = cpu			# shell commands run at boot, in order
 *	console = both			# serial, screen (VGA/GOP + keyboard) or both
 *
 * Blanks are spaces and tabs; a line may end in CR (CRLF files). Any other
 * control byte (00H-1FH, 7FH), a NUL included, is an error anywhere in a
 * line, comments too: a value never carries an escape sequence to the
 * terminal, nor is it cut short by a NUL.
 * An unknown key, a bad value, a control byte or too many run lines is an
 * error naming the line; on error *cfg is left exactly as it was.
 */
#ifndef NBPROF_KERNEL_CONFIG_H
#define NBPROF_KERNEL_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#define CONFIG_MAX_RUN		16
#define CONFIG_RUN_LEN		128	/* including the NUL */
#define CONFIG_UART_CLOCK	115200	/* 16550 base rate: baud = 115200 / divisor */
#define CONFIG_DEFAULT_PORT	0x3f8	/* COM1 */

/* Where the shell talks (console = ...): bits, both by default. */
enum config_console {
	CONFIG_CONSOLE_SERIAL = 1,	/* the UART */
	CONFIG_CONSOLE_SCREEN = 2,	/* the machine's screen and i8042 keyboard */
	CONFIG_CONSOLE_BOTH = 3,
};

struct nb_config {
	uint16_t serial_port;
	uint32_t serial_baud;
	unsigned console;		/* enum config_console */
	unsigned nrun;
	char run[CONFIG_MAX_RUN][CONFIG_RUN_LEN];
};

/* COM1, 115200, console on both, no run lines. */
void config_defaults(struct nb_config *cfg);

/*
 * Parse text[0..len) on top of *cfg (start from config_defaults). Returns 0,
 * or -1 with a one-line message such as "nbprof.cfg line 3: unknown key
 * 'foo'" in err (always NUL-terminated when errlen > 0).
 */
int config_parse(const char *text, size_t len, struct nb_config *cfg, char *err, size_t errlen);

#endif
