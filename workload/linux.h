/*
 * linux.h - the Linux system calls an unmodified static program makes, and
 * the stack a new Linux process starts with.
 *
 * A static Linux executable (workload/program.h: ET_EXEC) runs at ring 3
 * with its image in the fixed-address window and the rest in an arena of
 * LINUX_ARENA_SIZE which holds, from low to high, its heap (brk, growing
 * up from the arena's start), its anonymous mappings (mmap, growing down
 * from below the stack) and its stack (LINUX_STACK_SIZE at the top). It
 * enters the kernel with
 * `syscall` (x86-64, numbers of arch/x86/entry/syscalls/syscall_64.tbl in
 * Linux) or `int 0x80` (i386, syscall_32.tbl), arguments in RDI, RSI, RDX,
 * R10, R8, R9 or EBX, ECX, EDX, ESI, EDI, EBP, the result in RAX/EAX as a
 * value or -errno.
 *
 * Answered: write and writev to the console (fds 1 and 2), exit and
 * exit_group, brk, anonymous mmap (mmap2 on i386) and munmap, mprotect
 * and madvise (accepted; memory stays readable and writable), mremap
 * (-ENOMEM: the C library copies instead), arch_prctl(ARCH_SET_FS) and
 * set_thread_area (TLS), set_tid_address, getpid and gettid (1),
 * clock_gettime, gettimeofday and time from the TSC (the clock starts at
 * boot, the epoch being 1970 for want of a real-time clock), ioctl (every
 * request on fds 0-2 is -ENOTTY: not a terminal), rt_sigaction and
 * rt_sigprocmask (accepted, no signal is ever delivered), uname; and
 * sysinfo (the arena as the machine's RAM); getrandom (from a generator seeded by the clock: not secret);
 * getrlimit and prlimit64 (read only: the stack's size, else no limit);
 * -ENOENT for the calls that name a path (open, openat, stat, lstat,
 * access, readlink: there is no file system, so no path exists); and
 * -ENOSYS for the optional calls a C library tolerates losing
 * (set_robust_list, rseq, the fstat family). Any other call stops the run:
 * linux_syscall() returns LINUX_UNKNOWN and linux_call_name() names it.
 *
 * Portable (host-tested): the caller hands in the access to user memory,
 * the console, the clock and the TLS setter (struct linux_ops).
 */
#ifndef NBPROF_WORKLOAD_LINUX_H
#define NBPROF_WORKLOAD_LINUX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LINUX_STACK_SIZE	(256u << 10)
#define LINUX_ARENA_SIZE	(16u << 20)
#define LINUX_PAGE		4096u
#define LINUX_RANDOM_BYTES	16	/* AT_RANDOM */

/* errno values (Linux include/uapi/asm-generic/errno-base.h, errno.h) */
#define LINUX_ENOENT	2
#define LINUX_EBADF	9
#define LINUX_ENOMEM	12
#define LINUX_EFAULT	14
#define LINUX_EINVAL	22
#define LINUX_ENOTTY	25
#define LINUX_ENOSYS	38

/* One program's run: its window and where its heap and mappings have got to. */
struct linux_proc {
	unsigned bits;			/* 64: x86-64 calls and layouts, 32: i386 */
	uint64_t lo, hi;		/* the image's window */
	uint64_t arena_lo, arena_hi;	/* heap, mappings and stack */
	uint64_t brk_lo, brk;		/* the heap: its start and the break */
	uint64_t mmap_lo;		/* the lowest mapping; mappings grow down to the break */
	uint64_t stack_lo;		/* the stack's lowest address */
	uint64_t tid_addr;		/* set_tid_address's pointer (never written: no threads) */
	int status;			/* exit status, after LINUX_EXIT */
};

/* What the kernel lends the calls; ctx is passed back to each. */
struct linux_ops {
	void *ctx;
	/* A pointer to [addr, addr + len) of the program's memory, or NULL when it is not its own. */
	uint8_t *(*user)(void *ctx, uint64_t addr, uint64_t len);
	void (*write)(void *ctx, const char *s, size_t n);
	uint64_t (*now_ns)(void *ctx);	/* nanoseconds since boot */
	/*
	 * The thread pointer: x86-64 FS base (entry NULL), i386 a TLS segment
	 * of base, limit and the user_desc flags, whose GDT entry it returns
	 * in *entry. 0, or -1 when it cannot.
	 */
	int (*set_tls)(void *ctx, uint64_t base, uint32_t limit, uint32_t flags, uint32_t *entry);
};

struct linux_call {
	uint64_t nr;
	uint64_t a[6];
	uint64_t ret;			/* the value for RAX/EAX */
};

enum linux_result {
	LINUX_CONTINUE,			/* return c->ret to the program */
	LINUX_EXIT,			/* the program ended: status in p->status */
	LINUX_UNKNOWN,			/* a call nbprof does not answer: stop the run */
};

/* Start a run: the image's window [lo, hi) and the arena [alo, alo + LINUX_ARENA_SIZE), for bits 32 or 64. */
void linux_proc_init(struct linux_proc *p, unsigned bits, uint64_t lo, uint64_t hi, uint64_t alo);

/* Is [addr, addr + len) the program's own memory (window or arena)? */
bool linux_owns(const struct linux_proc *p, uint64_t addr, uint64_t len);

enum linux_result linux_syscall(struct linux_proc *p, const struct linux_ops *o,
				struct linux_call *c);

/* The call's name ("open", "clone"...), or NULL when nbprof knows none for nr. */
const char *linux_call_name(unsigned bits, uint64_t nr);

/* What the new process's stack holds besides argv (System V ABI, Process Initialization). */
struct linux_start {
	uint32_t argc;
	const char *argbuf;		/* argv's strings, NUL-separated */
	size_t argbuf_len;
	uint64_t entry, phdr;		/* AT_ENTRY, AT_PHDR */
	uint16_t phent, phnum;		/* AT_PHENT, AT_PHNUM */
	uint64_t hwcap;			/* AT_HWCAP: CPUID.1:EDX */
	uint8_t random[LINUX_RANDOM_BYTES];
};

/*
 * Zero the stack and lay out at its top, as Linux does for a new process
 * (the x86-64 psABI 3.4.1's Figure "Initial Process Stack", the i386 psABI
 * 2.3.x the same with 4-byte words): argc, argv[], NULL, envp[] (empty),
 * NULL, the auxiliary vector (AT_PHDR, AT_PHENT, AT_PHNUM, AT_PAGESZ,
 * AT_ENTRY, AT_UID.., AT_HWCAP, AT_CLKTCK, AT_SECURE, AT_RANDOM,
 * AT_PLATFORM, AT_EXECFN, AT_NULL), then the strings and AT_RANDOM's bytes.
 * Returns the stack pointer at entry (16-byte aligned, pointing at argc),
 * or 0 when the stack is not the program's (o->user).
 */
uint64_t linux_build_stack(const struct linux_proc *p, const struct linux_ops *o,
			   const struct linux_start *s);

#endif
