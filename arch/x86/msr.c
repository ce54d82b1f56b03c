/*
 * msr.c - RDMSR/WRMSR/RDPMC with fault recovery, and the hardware msr_bus.
 *
 * RDMSR or WRMSR of an MSR the processor does not implement, or a WRMSR
 * setting reserved bits, raises #GP(0) (SDM Vol. 2B, RDMSR/WRMSR). RDPMC
 * with an invalid index raises #GP, and #UD where the CPU lacks it
 * (QEMU TCG: QEMU notes P5). Each faulting instruction has an
 * exception-table entry whose fixup sets the error and jumps back past it.
 * Note that QEMU 7.2 TCG faults on no RDMSR at all, not even the x2APIC
 * range in xAPIC mode (QEMU notes P5, checked): the QEMU tests exercise
 * the fixup with WRMSR of IA32_PKRS (6E1H) with reserved bits 63:32 set,
 * which does #GP.
 */
#include "arch/x86/extable.h"
#include "arch/x86/mode.h"
#include "arch/x86/msr.h"

/*
 * One instruction that may fault: on an exception the fixup stores
 * MSR_BUS_EFAULT in operand %[err] and resumes after the instruction.
 */
#define SAFE_INSN(insn)					\
	"1: " insn "\n"					\
	"2:\n\t"					\
	EXTABLE_ENTRY(1b, 3f)				\
	".pushsection .text.fixup, \"ax\"\n"		\
	"3: movl %[efault], %[err]\n\t"			\
	"jmp 2b\n\t"					\
	".popsection"

int msr_read_safe(uint32_t msr, uint64_t *value)
{
	uint32_t lo = 0, hi = 0;
	int err = 0;

	__asm__ volatile(SAFE_INSN("rdmsr")
			 : [err] "+r"(err), "+a"(lo), "+d"(hi)
			 : "c"(msr), [efault] "i"(MSR_BUS_EFAULT)
			 : "memory");
	if (!err)
		*value = ((uint64_t)hi << 32) | lo;
	return err;
}

int msr_write_safe(uint32_t msr, uint64_t value)
{
	int err = 0;

	__asm__ volatile(SAFE_INSN("wrmsr")
			 : [err] "+r"(err)
			 : "c"(msr), "a"((uint32_t)value), "d"((uint32_t)(value >> 32)),
			   [efault] "i"(MSR_BUS_EFAULT)
			 : "memory");
	return err;
}

int rdpmc_safe(uint32_t index, uint64_t *value)
{
	uint32_t lo = 0, hi = 0;
	int err = 0;

	__asm__ volatile(SAFE_INSN("rdpmc")
			 : [err] "+r"(err), "+a"(lo), "+d"(hi)
			 : "c"(index), [efault] "i"(MSR_BUS_EFAULT)
			 : "memory");
	if (!err)
		*value = ((uint64_t)hi << 32) | lo;
	return err;
}

uint64_t msr_read(uint32_t msr)
{
	uint32_t lo, hi;

	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return ((uint64_t)hi << 32) | lo;
}

void msr_write(uint32_t msr, uint64_t value)
{
	__asm__ volatile("wrmsr"
			 :
			 : "c"(msr), "a"((uint32_t)value), "d"((uint32_t)(value >> 32))
			 : "memory");
}

#if MODE_IS_64
static int msr_hw_read(struct msr_bus *bus, uint32_t msr, uint64_t *value)
{
	(void)bus;
	return msr_read_safe(msr, value);
}

static int msr_hw_write(struct msr_bus *bus, uint32_t msr, uint64_t value)
{
	(void)bus;
	return msr_write_safe(msr, value);
}
#else
/*
 * The 32-bit kernel's hardware bus, in assembly: the arguments come on the
 * stack (cdecl), and the C version's frame and its error register cost
 * seven instructions before each WRMSR and four after it - instructions a
 * Pentium 4 counts around the counting gate's writes (prof/perf.c
 * perf_gate_open, perf_gate_shut). Here three before, two after.
 */
_Static_assert(MSR_BUS_EFAULT == -14, "msr_hw_write's fixup returns -14");
int msr_hw_read(struct msr_bus *bus, uint32_t msr, uint64_t *value) __attribute__((visibility("hidden")));
int msr_hw_write(struct msr_bus *bus, uint32_t msr, uint64_t value) __attribute__((visibility("hidden")));
__asm__(".pushsection .text.msr_hw, \"ax\"\n\t"
	".globl msr_hw_write\n\t"
	".hidden msr_hw_write\n\t"
	".type msr_hw_write, @function\n"
	"msr_hw_write:\n\t"
	"movl 8(%esp), %ecx\n\t"
	"movl 12(%esp), %eax\n\t"
	"movl 16(%esp), %edx\n"
	"1: wrmsr\n\t"
	"xorl %eax, %eax\n\t"
	"ret\n"
	"2: movl $-14, %eax\n\t"
	"ret\n\t"
	EXTABLE_ENTRY(1b, 2b)
	".size msr_hw_write, . - msr_hw_write\n\t"
	".globl msr_hw_read\n\t"
	".hidden msr_hw_read\n\t"
	".type msr_hw_read, @function\n"
	"msr_hw_read:\n\t"
	"movl 8(%esp), %ecx\n"
	"1: rdmsr\n\t"
	"movl 12(%esp), %ecx\n\t"
	"movl %eax, (%ecx)\n\t"
	"movl %edx, 4(%ecx)\n\t"
	"xorl %eax, %eax\n\t"
	"ret\n"
	"2: movl $-14, %eax\n\t"
	"ret\n\t"
	EXTABLE_ENTRY(1b, 2b)
	".size msr_hw_read, . - msr_hw_read\n\t"
	".popsection");
#endif

struct msr_bus msr_hw_bus = {
	.read = msr_hw_read,
	.write = msr_hw_write,
};
