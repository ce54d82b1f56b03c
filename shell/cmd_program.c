/*
 * cmd_program.c - the `programs` and `upload` shell commands: a user's own
 * programs, loaded from the stick at boot (boot/efi_main.c, the nbprof/
 * folder) or received over the serial line.
 *
 * `upload programs SIZE NAME CRC` receives a file in nbprof's CRC-checked
 * frames (workload/upload.h) into a staging buffer. Progress is printed every
 * UPLOAD_PROGRESS frames, which the host waits for before it sends more
 * (flow control over a line without handshake wires). A broken transfer
 * keeps what arrived; `upload --resume programs` asks for the rest from
 * the first missing frame. Nothing already loaded changes until the whole
 * file is in, its CRC-32 matches and it loads as a program.
 */
#include "arch/x86/console.h"
#include "arch/x86/cpu.h"
#include "arch/x86/mem.h"
#include "arch/x86/timer.h"
#include "lib/parse.h"
#include "workload/program.h"
#include "workload/upload.h"
#include "shell/cmds.h"
#include "shell/shell.h"

#define PROGRAMS_USAGE	"programs [rm NAME | --timeout [SECONDS | stepped=S,unstepped=S]]"
#define UPLOAD_USAGE	"upload programs SIZE NAME CRC32 [--flat ENTRY] | upload --resume programs"
#define UPLOAD_PROGRESS	16		/* frames between progress lines */
#define UPLOAD_IDLE_S	10		/* a silent line for this long breaks the transfer */
#define CTRL_C		3

/* The staged transfer, kept for --resume. */
static struct {
	struct upload u;
	uint64_t pages;
	char name[PROGRAM_NAME_MAX];
	bool flat;
	uint64_t entry;
	bool active;
} st;

static void upload_drop(void)
{
	if (st.u.buf)
		mem_free_pages((uint64_t)(uintptr_t)st.u.buf, st.pages);
	st.u.buf = NULL;
	st.active = false;
}

/* One line into buf; -1 on silence or Ctrl-C (why says which). */
static int upload_read_line(char *buf, size_t n, const char **why)
{
	uint64_t hz = timer_tsc_hz() ? timer_tsc_hz() : UINT64_C(1000000000);
	size_t len = 0;

	for (;;) {
		int c = console_getc_until(rdtsc() + hz * UPLOAD_IDLE_S);

		if (c < 0 || c == CTRL_C) {
			*why = c < 0 ? "the line went silent" : "Ctrl-C";
			return -1;
		}
		if (c == '\r' || c == '\n') {
			if (len == 0)
				continue;
			buf[len < n ? len : n - 1] = '\0';
			return 0;
		}
		if (len + 1 < n)
			buf[len] = (char)c;
		len++;
	}
}

/*
 * Read lines up to NBU:END (or silence), so none reaches the shell; a frame
 * that is next in order is still kept, every other one dropped (upload.h).
 */
static void upload_drain(void)
{
	char line[UPLOAD_LINE_MAX + 8], why[8];
	const char *w;

	while (upload_read_line(line, sizeof(line), &w) == 0)
		if (upload_line(&st.u, line, why, sizeof(why)) == UPLOAD_DONE)
			return;
}

static int upload_finish(struct shell *sh)
{
	char err[160];
	uint32_t crc;

	if (!upload_complete(&st.u)) {
		upload_drop();
		return shell_error(sh, "upload: %s: the file's CRC-32 does not match; nothing was "
				   "changed, upload it again", st.name);
	}
	crc = st.u.crc;
	if (program_add(st.name, st.u.buf, st.u.size, st.flat, st.entry, "serial", err, sizeof(err))) {
		upload_drop();
		return shell_error(sh, "upload: %s; nothing was changed", err);
	}
	shell_printf(sh, "upload: %s: %lu bytes, CRC-32 %08x, loaded\n", st.name,
		     (unsigned long)st.u.size, crc);
	upload_drop();
	return 0;
}

/* Receive frames from st.u.next on; 0 when the upload is complete and loaded. */
static int upload_receive(struct shell *sh)
{
	char line[UPLOAD_LINE_MAX + 8], why[96];
	const char *w;

	shell_printf(sh, "upload: %s: %lu bytes, %u frames, send from frame %u\n", st.name,
		     (unsigned long)st.u.size, st.u.frames, st.u.next);
	for (;;) {
		if (upload_read_line(line, sizeof(line), &w))
			return shell_error(sh, "upload: %s after frame %u of %u: resume with 'upload "
					   "--resume programs'", w, st.u.next, st.u.frames);
		switch (upload_line(&st.u, line, why, sizeof(why))) {
		case UPLOAD_TAKEN:
			if (st.u.next % UPLOAD_PROGRESS == 0 || st.u.next == st.u.frames)
				shell_printf(sh, "upload: %u/%u frames\n", st.u.next, st.u.frames);
			break;
		case UPLOAD_REPEAT:
		case UPLOAD_NOT_FRAME:
			break;
		case UPLOAD_BROKEN:
			shell_printf(sh, "upload: %s\n", why);
			upload_drain();
			return shell_error(sh, "upload: broken at frame %u of %u: resume with 'upload "
					   "--resume programs'", st.u.next, st.u.frames);
		case UPLOAD_DONE:
			if (st.u.next < st.u.frames)
				return shell_error(sh, "upload: ended at frame %u of %u: resume with "
						   "'upload --resume programs'", st.u.next, st.u.frames);
			return upload_finish(sh);
		}
	}
}

static int upload_start(struct shell *sh, int argc, char **argv)
{
	uint64_t size, crc, entry = 0;
	const char *why;
	char err[96];
	bool flat = argc == 7;

	if ((argc != 5 && argc != 7) || !parse_streq(argv[1], "programs") ||
	    (flat && !parse_streq(argv[5], "--flat")))
		return shell_error(sh, "usage: " UPLOAD_USAGE);
	if (!parse_u64(argv[2], PROGRAM_FILE_MAX, &size, &why) || size == 0)
		return shell_error(sh, "upload: SIZE '%s': must be 1..%u bytes", argv[2], PROGRAM_FILE_MAX);
	if (!parse_u64(argv[4], UINT32_MAX, &crc, &why))
		return shell_error(sh, "upload: CRC32 '%s': %s", argv[4], why);
	if (flat && !parse_u64(argv[6], size - 1, &entry, &why))
		return shell_error(sh, "upload: --flat ENTRY '%s': an offset into the binary", argv[6]);
	if (program_name_check(argv[3], err, sizeof(err)))
		return shell_error(sh, "upload: %s", err);
	upload_drop();
	st.pages = (size + MEM_PAGE_SIZE - 1) / MEM_PAGE_SIZE;
	uint8_t *buf = (uint8_t *)(uintptr_t)mem_alloc_pages(st.pages);

	if (!buf)
		return shell_error(sh, "upload: %s: not enough free memory for %llu bytes", argv[3],
				   (unsigned long long)size);
	upload_init(&st.u, buf, size, (uint32_t)crc);
	ksnprintf(st.name, sizeof(st.name), "%s", argv[3]);
	st.flat = flat;
	st.entry = entry;
	st.active = true;
	return upload_receive(sh);
}

static int cmd_upload(struct shell *sh, int argc, char **argv)
{
	if (argc >= 2 && parse_streq(argv[1], "--resume")) {
		if (argc != 3 || !parse_streq(argv[2], "programs"))
			return shell_error(sh, "usage: " UPLOAD_USAGE);
		if (!st.active)
			return shell_error(sh, "upload --resume: no broken upload to resume");
		return upload_receive(sh);
	}
	return upload_start(sh, argc, argv);
}

static void programs_list(struct shell *sh)
{
	unsigned n = 0;

	for (unsigned i = 0; i < PROGRAM_MAX; i++) {
		const struct program *p = program_slot(i);

		if (!p->used)
			continue;
		if (n++ == 0)
			shell_puts(sh, "name                     bytes     crc32     base              "
				       "entry             from\n");
		shell_printf(sh, "%-23s %7lu  %08x  %016llx  %016llx  %s%s\n", p->name,
			     (unsigned long)p->file_len, p->crc, (unsigned long long)p->base,
			     (unsigned long long)(p->base + p->layout.entry), p->origin,
			     p->layout.flat ? " (flat)" : "");
	}
	if (!n)
		shell_puts(sh, "no programs loaded (put them in nbprof/ on the stick, or 'upload')\n");
	/* tools/nbprof reads this line to refuse a program of the other class before sending it */
	shell_printf(sh, "kernel: %u-bit: it runs ELF%u %s programs (sdk/nbprof-cc%s)\n",
		     PROGRAM_KERNEL_BITS, PROGRAM_KERNEL_BITS, PROGRAM_KERNEL_BITS == 32 ? "i386" : "x86-64",
		     PROGRAM_KERNEL_BITS == 32 ? " -m32" : "");
}

/* `programs --timeout [SPEC]`: set the limits SPEC names (workload_parse_limits), show both. */
static int programs_timeout(struct shell *sh, char *spec)
{
	struct program_limits now, l;

	workload_get_limits(&now);
	l = now;
	if (spec && workload_parse_limits(spec, &now, &l))
		return shell_error(sh, "programs --timeout: SECONDS or stepped=S,unstepped=S "
				   "(0..86400, 0: none; unstepped 1..86400)");
	workload_set_limits(&l);
	shell_printf(sh, "stepped programs stop after %u s of stepping (0: no limit), unstepped "
		     "ones after %u s\n", l.stepped_s, l.unstepped_s);
	return 0;
}

static int cmd_programs(struct shell *sh, int argc, char **argv)
{
	if (argc == 1) {
		programs_list(sh);
		return 0;
	}
	if (argc <= 3 && parse_streq(argv[1], "--timeout"))
		return programs_timeout(sh, argc == 3 ? argv[2] : NULL);
	if (argc == 3 && parse_streq(argv[1], "rm")) {
		if (program_remove(argv[2]))
			return shell_error(sh, "programs rm: no program '%s'", argv[2]);
		shell_printf(sh, "removed %s\n", argv[2]);
		return 0;
	}
	return shell_error(sh, "usage: " PROGRAMS_USAGE);
}

static const struct shell_cmd program_cmds[] = {
	{ "programs", PROGRAMS_USAGE,
	  "list the loaded user programs (or unload one)",
	  "A program runs wherever a workload name goes (run, stat, record, run-pair,\n"
	  "--pair), with its arguments after its name; ring 3 unless --ring 0.\n"
	  "Static Linux programs (musl-gcc -static; gcc -m32 -static) run at ring 3\n"
	  "and make Linux system calls, a subset: others stop the run by name.\n"
	  "--timeout S (stepped=S): stop a program after S s of stepping (default\n"
	  "10; 0: none); unstepped=S: unstepped (hardware), after S s (default 60).\n"
	  "Programs come from the nbprof/ folder of the stick (loaded at boot) or\n"
	  "from 'upload' (tools/nbprof does it). See sdk/ for how to build one.\n",
	  cmd_programs },
	{ "upload", UPLOAD_USAGE, "receive a program over the serial line (CRC-checked frames)",
	  "SIZE bytes in NBU: frames (workload/upload.h), then the whole file's CRC32.\n"
	  "A broken transfer is resumed with 'upload --resume programs'; a failed\n"
	  "upload changes nothing already loaded. --flat ENTRY: a flat binary of\n"
	  "position-independent code, entered at offset ENTRY.\n",
	  cmd_upload },
};

int program_add_commands(struct shell *sh)
{
	return shell_add_commands(sh, program_cmds, sizeof(program_cmds) / sizeof(program_cmds[0]));
}
