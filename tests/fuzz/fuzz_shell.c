/*
 * fuzz_shell.c - the shell's dispatcher and built-in commands over the host
 * fake platform (tests/host/fake_platform.c).
 *
 * The input is a list of command lines separated by LF, each run through
 * shell_execute() on a Prescott (0F_04H) with a few PMU MSRs present, so
 * `msr`, `events`, `cpu`, `mem`, `fault` and `help` see every argument
 * the fuzzer invents. Contract checked: a command that fails printed an
 * "error: " line and changed no MSR value.
 */
#include "arch/x86/cpuid.h"
#include "pmu/p4_regs.h"
#include "shell/shell.h"
#include "tests/fuzz/fuzz.h"
#include "tests/host/fake_platform.h"

struct shell_out {
	size_t len;
	bool has_error;
	char tail[7];		/* last bytes written, to find "error: " across writes */
};

static void shell_out_write(void *ctx, const char *s, size_t n)
{
	struct shell_out *o = ctx;

	for (size_t i = 0; i < n; i++) {
		memmove(o->tail, o->tail + 1, sizeof(o->tail) - 1);
		o->tail[sizeof(o->tail) - 1] = s[i];
		if (memcmp(o->tail, "error: ", sizeof(o->tail)) == 0)
			o->has_error = true;
	}
	o->len += n;
}

static int shell_no_input(void *ctx)
{
	return -1;
}

static uint32_t pack4(const char *s)
{
	return (uint32_t)s[0] | (uint32_t)s[1] << 8 | (uint32_t)s[2] << 16 | (uint32_t)s[3] << 24;
}

/* A Prescott with Hyper-Threading, as test_shell.c sets it up. */
static void shell_fake_machine(void)
{
	struct cpuid_raw r = { 0 };

	fake_platform_reset();
	r.leaf0.eax = 5;
	r.leaf0.ebx = pack4("Genu");
	r.leaf0.edx = pack4("ineI");
	r.leaf0.ecx = pack4("ntel");
	r.leaf1.eax = 0xf41;
	r.leaf1.ebx = 2u << 16;
	r.leaf1.edx = CPUID_1_EDX_HTT | CPUID_1_EDX_DS | CPUID_1_EDX_TSC;
	r.leaf1.ecx = CPUID_1_ECX_DTES64;
	r.ext[0].eax = CPUID_EXT_BASE + 1;
	r.ext[1].edx = CPUID_81_EDX_LM;
	cpuid_decode(&r, &fake_plat.cpu);
	fake_plat.cpu.misc_enable_ok = true;
	fake_msr_set(MSR_IA32_MISC_ENABLE, 0x1);
	fake_msr_set(MSR_BPU_COUNTER0, 0);
	fake_msr_set(MSR_BPU_CCCR0, 0);
	fake_msr_set(MSR_IQ_CCCR0, 0);
	fake_msr_set(0x3b8, 0);		// MSR_CRU_ESCR0
	fake_plat.mem.nregions = 2;
	fake_plat.mem.bytes[MEM_USABLE] = 0xa0000;
	fake_plat.mem.regions[MEM_USABLE] = 1;
	fake_plat.regions[0] = (struct mem_region){ 0, 0xa0000, MEM_USABLE };
	fake_plat.regions[1] = (struct mem_region){ 0xf0000, 0x10000, MEM_RESERVED };
	fake_plat.nregions = 2;
}

static void shell_run_line(struct shell *sh, struct shell_out *out, const char *line)
{
	struct fake_platform before = fake_plat;
	int status;

	out->has_error = false;
	status = shell_execute(sh, line);
	if (status == 0)
		return;
	fuzz_check(out->has_error);
	fuzz_check(memcmp(fake_plat.msrs, before.msrs, sizeof(before.msrs)) == 0);
	/* `reboot` and `poweroff` fail after trying once, when the machine stays up */
	fuzz_check(fake_plat.nreboots - before.nreboots + fake_plat.npoweroffs - before.npoweroffs <= 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct shell sh;
	struct shell_out out = { 0 };
	struct shell_io io = { .ctx = &out, .getc = shell_no_input, .write = shell_out_write };
	char *text = fuzz_cstr(data, size);

	shell_fake_machine();
	shell_init(&sh, &io);
	for (char *line = text, *next; line != NULL; line = next) {
		next = strchr(line, '\n');
		if (next != NULL)
			*next++ = '\0';
		shell_run_line(&sh, &out, line);
	}
	free(text);
	return 0;
}
