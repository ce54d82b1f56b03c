/*
 * kmain.c - bring the machine up and run the shell.
 *
 * Order matters:
 *  1. parse nbprof.cfg (pure) so the console starts on the configured port;
 *  2. console, then GDT/TSS and IDT, so every later fault is reported;
 *  3. PICs remapped and masked;
 *  4. memory map, own page tables (CR3), then reclaim boot-services memory:
 *     we already run on our own stack (boot/ switched), GDT and IDT, so
 *     nothing of ours lives in firmware memory any more (QEMU notes P4);
 *  5. local APIC, TSC/APIC-timer calibration against the PIT;
 *     then the other logical processors (arch/x86/smp.c), which halt until
 *     work is dispatched to them; LP0 keeps the shell;
 *  6. banner, "nbprof: ready", the batch commands from nbprof.cfg, then the
 *     interactive shell. Each command runs guarded: an exception inside it
 *     is reported and the shell prompt comes back.
 * Interrupts stay disabled: the console is polled.
 */
#include "arch/x86/acpi.h"
#include "arch/x86/arch.h"
#include "arch/x86/buildid.h"
#include "arch/x86/console.h"
#include "arch/x86/cpu.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/fpu.h"
#include "arch/x86/gdt.h"
#include "arch/x86/idt.h"
#include "arch/x86/kbd.h"
#include "arch/x86/lapic.h"
#include "arch/x86/mem.h"
#include "arch/x86/paging.h"
#include "arch/x86/panic.h"
#include "arch/x86/pic.h"
#include "arch/x86/screen.h"
#include "arch/x86/selftest.h"
#include "arch/x86/serial.h"
#include "arch/x86/smp.h"
#include "arch/x86/timer.h"
#include "kernel/config.h"
#include "kernel/kmain.h"
#include "lib/string.h"
#include "prof/perf.h"
#include "workload/program.h"
#include "prof/record.h"
#include "workload/workload.h"
#include "shell/cmds.h"
#include "shell/platform.h"
#include "shell/shell.h"

#define MIB	(UINT64_C(1) << 20)

static struct bootinfo *bootinfo;
static struct nb_config config;
static struct shell shell;

const struct bootinfo *kmain_bootinfo(void)
{
	return bootinfo;
}

static int kmain_getc(void *ctx)
{
	(void)ctx;
	return console_getc();
}

static void kmain_write(void *ctx, const char *s, size_t n)
{
	(void)ctx;
	console_write(s, n);
}

static int kmain_run_line(void *line)
{
	return shell_execute(&shell, line);
}

/* Parse nbprof.cfg; on any problem keep the defaults and return the message. */
static const char *kmain_config(const struct bootinfo *bi, char *err, size_t errlen)
{
	config_defaults(&config);
	switch (bi->cfg_status) {
	case BOOT_CFG_OK:
		return config_parse(bi->cfg, bi->cfg_len, &config, err, errlen) ? err : NULL;
	case BOOT_CFG_TOO_BIG:
		return "nbprof.cfg is larger than 8 KiB; ignored";
	case BOOT_CFG_READ_ERROR:
		return "nbprof.cfg could not be read; ignored";
	default:
		return NULL;
	}
}

static void kmain_cpu_tables(const struct bootinfo *bi)
{
	uint64_t ist_top[BOOT_NIST];

	for (int i = 0; i < BOOT_NIST; i++)
		ist_top[i] = bi->ist_base[i] + BOOT_IST_SIZE;
	gdt_init(ist_top);
	idt_init();
	pic_disable();
}

static void kmain_memory(const struct bootinfo *bi)
{
	struct mem_summary s;
	uint64_t top;

	mem_init(bi);
	mem_get_summary(&s);
	top = s.top;
	if (bi->fb.base + bi->fb.size > top)
		top = bi->fb.base + bi->fb.size;
	if (paging_init(top, mem_alloc_page) != 0) {
		kprintf("mem: cannot build page tables; boot-services memory stays unused\n");
		return;
	}
	mem_reclaim_boot();
}

static const char *screen_why;	/* why there is no screen, or NULL */

/*
 * The screen console: VGA text after a BIOS boot, the GOP framebuffer after
 * a UEFI one, and the keyboard, unless nbprof.cfg says console = serial.
 * Early, so that the boot messages reach the screen too.
 */
static void kmain_screen(const struct bootinfo *bi)
{
	bool screen = false, keyboard = false;

	if (config.console & CONFIG_CONSOLE_SCREEN) {
		screen = bi->boot_method == BOOT_METHOD_MULTIBOOT ? screen_init_vga_text(&screen_why)
								  : screen_init_fb(&bi->fb, &screen_why);
		keyboard = kbd_init();
	} else {
		screen_why = "nbprof.cfg console = serial";
	}
	console_use(config.console & CONFIG_CONSOLE_SERIAL, screen, keyboard);
}

static void kmain_screen_line(void)
{
	const char *kbd = kbd_present() ? "keyboard i8042"
			  : config.console & CONFIG_CONSOLE_SCREEN ? "no keyboard (no i8042 controller answered)"
			  : "keyboard off";
	char what[96];

	if (!screen_present()) {
		kprintf("console: no screen (%s); %s\n", screen_why, kbd);
		return;
	}
	screen_describe(what, sizeof(what));
	kprintf("console: screen %s; %s\n", what, kbd);
}

static void kmain_banner(void)
{
	struct cpu_info ci;
	struct mem_summary s;
	uint64_t tsc = timer_tsc_hz(), apic = timer_lapic_hz();

	plat_cpu_info(&ci);
	mem_get_summary(&s);
	kprintf("\nnbprof %s - profiling kernel for Intel NetBurst\nbuild id: %s\n", NBPROF_VERSION,
		ci.build_id_hex);
	kprintf("cpu: %s %s stepping %u, %s%s\n", ci.vendor, ci.display, ci.stepping,
		ci.brand[0] ? ci.brand : "(no brand string)",
		ci.is_netburst ? "" : " - not a NetBurst CPU (family 0FH)");
	if (tsc)
		kprintf("tsc: %llu.%03llu MHz, lapic timer %llu.%03llu MHz (PIT calibrated)\n",
			(unsigned long long)(tsc / 1000000), (unsigned long long)(tsc / 1000 % 1000),
			(unsigned long long)(apic / 1000000), (unsigned long long)(apic / 1000 % 1000));
	else
		kprintf("tsc: calibration failed (PIT channel 2 did not count)\n");
	kprintf("mem: %llu MiB RAM, %llu MiB free (%llu MiB boot services reclaimed), "
		"largest free run %llu MiB\n",
		(unsigned long long)(s.total / MIB), (unsigned long long)(s.free / MIB),
		(unsigned long long)(s.boot_reclaimed / MIB), (unsigned long long)(s.largest_free / MIB));
	if (bootinfo->low_page)
		kprintf("mem: page %#llx below 1 MiB kept for AP start-up\n",
			(unsigned long long)bootinfo->low_page);
	if (bootinfo->fb.base)
		kprintf("fb: %ux%u, %u pixels per line, at %#llx\n", bootinfo->fb.width,
			bootinfo->fb.height, bootinfo->fb.stride, (unsigned long long)bootinfo->fb.base);
	if (console_has_serial())
		kprintf("console: serial %#x, %u baud\n", serial_port(), (unsigned)serial_baud());
	kmain_screen_line();
}

/*
 * The programs boot/ read from the stick's nbprof/ folder: "name.elf" (or
 * any other name) is an ELF program called "name", "name.bin" a flat
 * binary entered at offset 0. A bad file is reported and skipped.
 */
static void kmain_programs(const struct bootinfo *bi)
{
	char name[BOOT_FILE_NAME], err[160];

	for (uint32_t i = 0; i < bi->nfiles; i++) {
		const struct boot_file *f = &bi->files[i];
		size_t n = strlen(f->name);
		bool flat = n > 4 && strcmp(f->name + n - 4, ".bin") == 0;

		memcpy(name, f->name, n + 1);
		if (n > 4 && (flat || strcmp(name + n - 4, ".elf") == 0))
			name[n - 4] = '\0';
		if (f->status != BOOT_CFG_OK)
			kprintf("programs: nbprof/%s: %s\n", f->name, f->status == BOOT_CFG_TOO_BIG ?
				"empty or larger than 4 MiB" : "could not be read");
		else if (program_add(name, (const uint8_t *)(uintptr_t)f->base, f->size, flat, 0,
				     "stick", err, sizeof(err)))
			kprintf("programs: nbprof/%s: %s\n", f->name, err);
		else
			kprintf("programs: %s (%llu bytes) from the stick\n", name,
				(unsigned long long)f->size);
	}
	if (bi->files_skipped)
		kprintf("programs: %u file(s) in nbprof/ skipped (more than %u, or a name longer "
			"than %u ASCII characters)\n", bi->files_skipped, BOOT_MAX_FILES,
			BOOT_FILE_NAME - 1);
}

static void kmain_run_batch(void)
{
	for (unsigned i = 0; i < config.nrun; i++) {
		kprintf("%s%s\n", SHELL_PROMPT, config.run[i]);
		arch_run_guarded(kmain_run_line, config.run[i]);
	}
}

void kmain(struct bootinfo *bi)
{
	static const struct shell_io io = { NULL, kmain_getc, kmain_write };
	char err[128];
	const char *cfg_err;
	bool uart_fallback = false;

	bootinfo = bi;
	cfg_err = kmain_config(bi, err, sizeof(err));
	if (!console_init(config.serial_port, config.serial_baud)) {
		uart_fallback = true;
		console_init(SERIAL_COM1, SERIAL_CLOCK_BAUD);
	}
	kmain_screen(bi);
	cpu_set_boot_method(bi->boot_method, bi->loader_name);
	kmain_cpu_tables(bi);
	smp_init_bsp();		/* GS base -> LP0's per-CPU data, right after the GDT load */
	fpu_init_lp();		/* x87/MMX/SSE for the fpmix workload (arch/x86/fpu.h) */
	kmain_memory(bi);
	if (!lapic_init())
		kprintf("lapic: no local APIC (CPUID.1:EDX.APIC = 0)\n");
	timer_calibrate();
	kmain_banner();
	arch_selftest_interrupts();
	acpi_check_tables(bi->rsdp);	/* a wrong checksum is a boot-log warning */
	smp_start(bi);
	workload_init();
	perf_init();
	if (uart_fallback)
		kprintf("console: no UART at %#x (nbprof.cfg serial.port); using COM1\n",
			config.serial_port);
	if (cfg_err)
		kprintf("config: %s\n", cfg_err);
	else if (bi->cfg_status == BOOT_CFG_OK)
		kprintf("config: nbprof.cfg, %u command(s) to run\n", config.nrun);
	kmain_programs(bi);
	kprintf("nbprof: ready\n");

	shell_init(&shell, &io);
	/* A table that does not fit would leave its commands "unknown": stop instead. */
	if (workload_add_commands(&shell) || program_add_commands(&shell) ||
	    perf_add_commands(&shell) || record_add_commands(&shell) ||
	    selftest_add_commands(&shell) || bench_add_commands(&shell) ||
	    pebs_add_commands(&shell))
		panic("shell: more command tables than SHELL_MAX_TABLES (shell/shell.h)");
	kmain_run_batch();
	while (shell_readline(&shell) >= 0)
		shell.last_status = arch_run_guarded(kmain_run_line, shell.line);
	kprintf("console input ended\n");
	arch_halt();
}
