/*
 * linux.c - answer a static Linux program's system calls (linux.h).
 *
 * The call numbers are Linux's (arch/x86/entry/syscalls/syscall_64.tbl and
 * syscall_32.tbl), one row per call with both numbers, NONE where the ABI
 * has no such call. The structures a call reads or writes are laid out as
 * Linux's uapi headers give them for each ABI: struct iovec and struct
 * timeval are two words, struct timespec two words on x86-64 and for i386's
 * clock_gettime, two 64-bit fields for i386's clock_gettime64; struct
 * user_desc (set_thread_area) four 32-bit fields; struct utsname six
 * 65-byte strings. Every pointer is checked through o->user before use.
 */
#include "lib/printf.h"
#include "lib/string.h"
#include "workload/linux.h"

#define NONE		0xffff
#define ARCH_SET_FS	0x1002
#define RLIMIT_STACK	3
#define LINUX_EPERM	1
#define MAP_FIXED	0x10
#define MAP_ANONYMOUS	0x20
#define MADV_DONTNEED	4
#define UTS_LEN		65
#define NS_PER_S	UINT64_C(1000000000)

/* Auxiliary vector tags (Linux include/uapi/linux/auxvec.h). */
#define AT_NULL		0
#define AT_PHDR		3
#define AT_PHENT	4
#define AT_PHNUM	5
#define AT_PAGESZ	6
#define AT_BASE		7
#define AT_ENTRY	9
#define AT_UID		11
#define AT_EUID		12
#define AT_GID		13
#define AT_EGID		14
#define AT_PLATFORM	15
#define AT_HWCAP	16
#define AT_CLKTCK	17
#define AT_SECURE	23
#define AT_RANDOM	25
#define AT_EXECFN	31

enum linux_op {
	OP_NONE,		/* named only, for the message that stops the run */
	OP_WRITE, OP_WRITEV, OP_EXIT, OP_BRK, OP_MMAP, OP_MUNMAP, OP_ZERO, OP_MADVISE,
	OP_NOMEM, OP_ARCH_PRCTL, OP_SET_THREAD_AREA, OP_ONE, OP_CLOCK, OP_CLOCK64,
	OP_TIMEOFDAY, OP_TIME, OP_IOCTL, OP_SIGNAL, OP_UNAME, OP_NOSYS, OP_RLIMIT, OP_PRLIMIT, OP_NOENT,
	OP_RANDOM, OP_SYSINFO,
};

struct linux_row {
	const char *name;
	uint16_t nr64, nr32;
	uint8_t op;
};

static const struct linux_row linux_rows[] = {
	{ "read", 0, 3, OP_NONE },		{ "write", 1, 4, OP_WRITE },
	{ "open", 2, 5, OP_NOENT },		{ "close", 3, 6, OP_NONE },
	{ "stat", 4, 106, OP_NOENT },		{ "fstat", 5, 108, OP_NOSYS },
	{ "lstat", 6, 107, OP_NOENT },		{ "poll", 7, 168, OP_NONE },
	{ "lseek", 8, 19, OP_NONE },		{ "mmap", 9, NONE, OP_MMAP },
	{ "mmap2", NONE, 192, OP_MMAP },	{ "old_mmap", NONE, 90, OP_NONE },
	{ "mprotect", 10, 125, OP_ZERO },	{ "munmap", 11, 91, OP_MUNMAP },
	{ "brk", 12, 45, OP_BRK },		{ "rt_sigaction", 13, 174, OP_SIGNAL },
	{ "rt_sigprocmask", 14, 175, OP_SIGNAL }, { "ioctl", 16, 54, OP_IOCTL },
	{ "pread64", 17, 180, OP_NONE },	{ "pwrite64", 18, 181, OP_NONE },
	{ "readv", 19, 145, OP_NONE },		{ "writev", 20, 146, OP_WRITEV },
	{ "access", 21, 33, OP_NOENT },		{ "pipe", 22, 42, OP_NONE },
	{ "select", 23, 82, OP_NONE },		{ "sched_yield", 24, 158, OP_NONE },
	{ "mremap", 25, 163, OP_NOMEM },	{ "madvise", 28, 219, OP_MADVISE },
	{ "dup", 32, 41, OP_NONE },		{ "dup2", 33, 63, OP_NONE },
	{ "nanosleep", 35, 162, OP_NONE },	{ "getpid", 39, 20, OP_ONE },
	{ "socket", 41, 359, OP_NONE },		{ "clone", 56, 120, OP_NONE },
	{ "fork", 57, 2, OP_NONE },		{ "vfork", 58, 190, OP_NONE },
	{ "execve", 59, 11, OP_NONE },		{ "exit", 60, 1, OP_EXIT },
	{ "wait4", 61, 114, OP_NONE },		{ "kill", 62, 37, OP_NONE },
	{ "uname", 63, 122, OP_UNAME },		{ "fcntl", 72, 55, OP_NONE },
	{ "fcntl64", NONE, 221, OP_NONE },	{ "getcwd", 79, 183, OP_NONE },
	{ "mkdir", 83, 39, OP_NONE },		{ "unlink", 87, 10, OP_NONE },
	{ "readlink", 89, 85, OP_NOENT },	{ "gettimeofday", 96, 78, OP_TIMEOFDAY },
	{ "getrlimit", 97, 76, OP_RLIMIT },	{ "ugetrlimit", NONE, 191, OP_RLIMIT },	{ "getrusage", 98, 77, OP_NONE },
	{ "sysinfo", 99, 116, OP_SYSINFO },	{ "times", 100, 43, OP_NONE },
	{ "getuid", 102, 24, OP_NONE },		{ "getgid", 104, 47, OP_NONE },
	{ "geteuid", 107, 49, OP_NONE },	{ "getppid", 110, 64, OP_NONE },
	{ "sigaltstack", 131, 186, OP_NONE },	{ "arch_prctl", 158, 384, OP_ARCH_PRCTL },
	{ "gettid", 186, 224, OP_ONE },		{ "time", 201, 13, OP_TIME },
	{ "futex", 202, 240, OP_NONE },		{ "sched_getaffinity", 204, 242, OP_NONE },
	{ "set_thread_area", 205, 243, OP_SET_THREAD_AREA },
	{ "set_tid_address", 218, 258, OP_ONE }, { "clock_gettime", 228, 265, OP_CLOCK },
	{ "clock_nanosleep", 230, 267, OP_NONE }, { "exit_group", 231, 252, OP_EXIT },
	{ "tgkill", 234, 270, OP_NONE },	{ "openat", 257, 295, OP_NOENT },
	{ "newfstatat", 262, NONE, OP_NOSYS },	{ "fstatat64", NONE, 300, OP_NOSYS },
	{ "fstat64", NONE, 197, OP_NOSYS },	{ "set_robust_list", 273, 311, OP_NOSYS },
	{ "prlimit64", 302, 340, OP_PRLIMIT },	{ "getrandom", 318, 355, OP_RANDOM },
	{ "statx", 332, 383, OP_NOSYS },	{ "rseq", 334, 386, OP_NOSYS },
	{ "clock_gettime64", NONE, 403, OP_CLOCK64 },
};

static const struct linux_row *linux_row(unsigned bits, uint64_t nr)
{
	for (size_t i = 0; i < sizeof(linux_rows) / sizeof(linux_rows[0]); i++)
		if ((bits == 64 ? linux_rows[i].nr64 : linux_rows[i].nr32) == nr)
			return &linux_rows[i];
	return NULL;
}

const char *linux_call_name(unsigned bits, uint64_t nr)
{
	const struct linux_row *r = linux_row(bits, nr);

	return r ? r->name : NULL;
}

static uint64_t err(int e)
{
	return (uint64_t)-(int64_t)e;
}

static uint64_t page_up(uint64_t v)
{
	return (v + LINUX_PAGE - 1) & ~(uint64_t)(LINUX_PAGE - 1);
}

/* A little-endian word of the program's width. */
static uint64_t get_word(const struct linux_proc *p, const uint8_t *b)
{
	uint64_t v = 0;

	for (unsigned i = p->bits / 8; i-- > 0;)
		v = v << 8 | b[i];
	return v;
}

static void put(uint8_t *b, uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

void linux_proc_init(struct linux_proc *p, unsigned bits, uint64_t lo, uint64_t hi, uint64_t alo)
{
	*p = (struct linux_proc){ .bits = bits, .lo = lo, .hi = hi, .arena_lo = alo,
				  .arena_hi = alo + LINUX_ARENA_SIZE };
	p->brk_lo = p->brk = alo;
	p->stack_lo = p->arena_hi - LINUX_STACK_SIZE;
	p->mmap_lo = p->stack_lo - LINUX_PAGE;	/* a page between the mappings and the stack */
}

static bool in(uint64_t lo, uint64_t hi, uint64_t addr, uint64_t len)
{
	return addr >= lo && addr < hi && len <= hi - addr;
}

bool linux_owns(const struct linux_proc *p, uint64_t addr, uint64_t len)
{
	return in(p->lo, p->hi, addr, len) || in(p->arena_lo, p->arena_hi, addr, len);
}

static uint64_t sys_write(const struct linux_proc *p, const struct linux_ops *o, uint64_t fd,
			  uint64_t buf, uint64_t n)
{
	uint8_t *b;

	(void)p;
	if (fd != 1 && fd != 2)
		return err(LINUX_EBADF);
	if (n == 0)
		return 0;
	if (!(b = o->user(o->ctx, buf, n)))
		return err(LINUX_EFAULT);
	o->write(o->ctx, (const char *)b, (size_t)n);
	return n;
}

static uint64_t sys_writev(const struct linux_proc *p, const struct linux_ops *o, uint64_t fd,
			   uint64_t iov, uint64_t cnt)
{
	unsigned w = p->bits / 8;
	uint8_t *v = NULL;
	uint64_t total = 0;

	if (cnt > 1024)
		return err(LINUX_EINVAL);
	if (cnt && !(v = o->user(o->ctx, iov, cnt * 2 * w)))
		return err(LINUX_EFAULT);
	for (uint64_t i = 0; i < cnt; i++) {
		uint64_t r = sys_write(p, o, fd, get_word(p, v + 2 * w * i),
				       get_word(p, v + 2 * w * i + w));

		if ((int64_t)r < 0)
			return r;
		total += r;
	}
	return total;
}

/* brk(addr): the break moves within [brk_lo, mmap_lo); new memory reads as zero. */
static uint64_t sys_brk(struct linux_proc *p, const struct linux_ops *o, uint64_t addr)
{
	uint8_t *m;

	if (addr < p->brk_lo || addr > p->mmap_lo)
		return p->brk;		/* Linux answers a failed brk with the old break */
	if (addr > p->brk && (m = o->user(o->ctx, p->brk, addr - p->brk)))
		memset(m, 0, (size_t)(addr - p->brk));
	p->brk = addr;
	return p->brk;
}

/* Anonymous private memory only: down from the last mapping, or MAP_FIXED inside the heap or mappings. */
static uint64_t sys_mmap(struct linux_proc *p, const struct linux_ops *o, const uint64_t *a)
{
	uint64_t len = page_up(a[1]), at;
	uint8_t *m;

	if (!(a[3] & MAP_ANONYMOUS))
		return err(LINUX_EBADF);	/* no files */
	if (a[1] == 0 || len < a[1])
		return err(LINUX_EINVAL);
	if (a[3] & MAP_FIXED) {
		at = a[0];
		if (at % LINUX_PAGE || at < p->brk_lo || at > p->stack_lo || len > p->stack_lo - at)
			return err(LINUX_ENOMEM);
	} else {
		if (len > p->mmap_lo - p->brk)
			return err(LINUX_ENOMEM);
		at = p->mmap_lo - len;
		p->mmap_lo = at;
	}
	if (!(m = o->user(o->ctx, at, len)))
		return err(LINUX_ENOMEM);
	memset(m, 0, (size_t)len);
	return at;
}

/* The lowest mapping's memory comes back; any other stays taken until the run ends. */
static uint64_t sys_munmap(struct linux_proc *p, uint64_t addr, uint64_t len)
{
	if (addr % LINUX_PAGE || len == 0)
		return err(LINUX_EINVAL);
	if (addr == p->mmap_lo && page_up(len) <= p->stack_lo - LINUX_PAGE - addr)
		p->mmap_lo += page_up(len);
	return 0;
}

/* MADV_DONTNEED on private anonymous memory makes it read as zero again (madvise(2)). */
static uint64_t sys_madvise(const struct linux_ops *o, uint64_t addr, uint64_t len, uint64_t advice)
{
	uint8_t *m;

	if (advice != MADV_DONTNEED || len == 0)
		return 0;
	if (!(m = o->user(o->ctx, addr, len)))
		return err(LINUX_ENOMEM);
	memset(m, 0, (size_t)len);
	return 0;
}

/* set_thread_area(struct user_desc *): entry_number -1 asks for a free entry. */
static uint64_t sys_set_thread_area(const struct linux_proc *p, const struct linux_ops *o,
				    uint64_t desc)
{
	uint8_t *d = o->user(o->ctx, desc, 16);
	uint32_t entry;

	if (p->bits != 32)
		return err(LINUX_ENOSYS);
	if (!d)
		return err(LINUX_EFAULT);
	entry = (uint32_t)get_word(p, d);
	if (o->set_tls(o->ctx, get_word(p, d + 4), (uint32_t)get_word(p, d + 8),
		       (uint32_t)get_word(p, d + 12), &entry))
		return err(LINUX_EINVAL);
	put(d, entry, 4);
	return 0;
}

/* A timespec or timeval: seconds and the fraction, in fields of bytes each. */
static uint64_t sys_time_pair(const struct linux_ops *o, uint64_t at, unsigned bytes,
			      uint64_t unit_ns)
{
	uint64_t ns = o->now_ns(o->ctx);
	uint8_t *t;

	if (!at)
		return 0;
	if (!(t = o->user(o->ctx, at, 2 * bytes)))
		return err(LINUX_EFAULT);
	put(t, ns / NS_PER_S, bytes);
	put(t + bytes, ns % NS_PER_S / unit_ns, bytes);
	return 0;
}

static uint64_t sys_uname(const struct linux_proc *p, const struct linux_ops *o, uint64_t at)
{
	static const char *const fields[6] = { "nbprof", "nbprof", "1.0", "nbprof", NULL, "" };
	uint8_t *u = o->user(o->ctx, at, 6 * UTS_LEN);

	if (!u)
		return err(LINUX_EFAULT);
	memset(u, 0, 6 * UTS_LEN);
	for (unsigned i = 0; i < 6; i++)
		ksnprintf((char *)u + i * UTS_LEN, UTS_LEN, "%s",
			  fields[i] ? fields[i] : p->bits == 64 ? "x86_64" : "i686");
	return 0;
}

/* Zero the old-value buffer a call was given (the old action, the old mask). */
static uint64_t sys_signal(const struct linux_ops *o, uint64_t old, uint64_t len)
{
	uint8_t *m;

	if (old && len && len <= 256 && (m = o->user(o->ctx, old, len)))
		memset(m, 0, (size_t)len);
	return 0;
}

static uint64_t sys_time(const struct linux_proc *p, const struct linux_ops *o, uint64_t at)
{
	uint64_t s = o->now_ns(o->ctx) / NS_PER_S;
	uint8_t *t;

	if (at && (t = o->user(o->ctx, at, p->bits / 8)))
		put(t, s, p->bits / 8);
	return s;
}

/*
 * getrlimit (fields of the program's word) and prlimit64 (64-bit fields):
 * the stack's size for RLIMIT_STACK, no limit (all ones) for the others.
 * Limits are read, never set: a new one is refused with -EPERM.
 */
static uint64_t sys_rlimit(const struct linux_ops *o, uint64_t res, uint64_t newp, uint64_t old,
			   unsigned bytes)
{
	uint64_t v = res == RLIMIT_STACK ? LINUX_STACK_SIZE : UINT64_MAX;
	uint8_t *m;

	if (newp)
		return err(LINUX_EPERM);
	if (!old)
		return 0;
	if (!(m = o->user(o->ctx, old, 2 * bytes)))
		return err(LINUX_EFAULT);
	put(m, v, bytes);
	put(m + bytes, v, bytes);
	return 0;
}

/* getrandom: bytes of a generator seeded from the clock (splitmix64): varied, not secret. */
static uint64_t sys_random(const struct linux_ops *o, uint64_t buf, uint64_t len)
{
	uint64_t x = o->now_ns(o->ctx);
	uint8_t *m;

	if (len > 256)
		len = 256;	/* as Linux may, return fewer bytes than asked */
	if (len && !(m = o->user(o->ctx, buf, len)))
		return err(LINUX_EFAULT);
	for (uint64_t i = 0; i < len; i++) {
		uint64_t z = (x += UINT64_C(0x9e3779b97f4a7c15));

		z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
		z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
		m[i] = (uint8_t)(z ^ (z >> 31));
	}
	return len;
}

/*
 * sysinfo (struct sysinfo of Linux include/uapi/linux/sysinfo.h: 14 words
 * of the program's width, procs a u16 in the 11th, mem_unit a u32 in the
 * 14th; 112 bytes on x86-64, 64 on i386): uptime, and as RAM the arena,
 * free what lies between the break and the mappings.
 */
static uint64_t sys_sysinfo(const struct linux_proc *p, const struct linux_ops *o, uint64_t at)
{
	unsigned w = p->bits / 8, size = p->bits == 64 ? 112 : 64;
	uint8_t *m = o->user(o->ctx, at, size);

	if (!m)
		return err(LINUX_EFAULT);
	memset(m, 0, size);
	put(m, o->now_ns(o->ctx) / NS_PER_S, w);
	put(m + 4 * w, LINUX_ARENA_SIZE, w);
	put(m + 5 * w, p->mmap_lo - p->brk, w);
	put(m + 10 * w, 1, 2);
	put(m + 13 * w, 1, 4);
	return 0;
}

static uint64_t sys_arch_prctl(const struct linux_ops *o, uint64_t code, uint64_t addr)
{
	if (code != ARCH_SET_FS)
		return err(LINUX_EINVAL);
	return o->set_tls(o->ctx, addr, 0, 0, NULL) ? err(LINUX_EINVAL) : 0;
}

enum linux_result linux_syscall(struct linux_proc *p, const struct linux_ops *o,
				struct linux_call *c)
{
	const struct linux_row *r = linux_row(p->bits, c->nr);
	const uint64_t *a = c->a;
	unsigned w = p->bits / 8;

	switch (r ? r->op : OP_NONE) {
	case OP_WRITE:		c->ret = sys_write(p, o, a[0], a[1], a[2]); break;
	case OP_WRITEV:		c->ret = sys_writev(p, o, a[0], a[1], a[2]); break;
	case OP_EXIT:
		p->status = (int)(a[0] & 0xff);
		return LINUX_EXIT;
	case OP_BRK:		c->ret = sys_brk(p, o, a[0]); break;
	case OP_MMAP:		c->ret = sys_mmap(p, o, a); break;
	case OP_MUNMAP:		c->ret = sys_munmap(p, a[0], a[1]); break;
	case OP_ZERO:		c->ret = 0; break;
	case OP_MADVISE:	c->ret = sys_madvise(o, a[0], a[1], a[2]); break;
	case OP_NOMEM:		c->ret = err(LINUX_ENOMEM); break;
	case OP_ARCH_PRCTL:	c->ret = p->bits == 64 ? sys_arch_prctl(o, a[0], a[1])
						       : err(LINUX_ENOSYS); break;
	case OP_SET_THREAD_AREA: c->ret = sys_set_thread_area(p, o, a[0]); break;
	case OP_ONE:
		if (r->nr64 == 218)	/* set_tid_address */
			p->tid_addr = a[0];
		c->ret = 1;
		break;
	case OP_CLOCK:		c->ret = sys_time_pair(o, a[1], w, 1); break;
	case OP_CLOCK64:	c->ret = sys_time_pair(o, a[1], 8, 1); break;
	case OP_TIMEOFDAY:	c->ret = sys_time_pair(o, a[0], w, 1000); break;
	case OP_TIME:		c->ret = sys_time(p, o, a[0]); break;
	case OP_IOCTL:		c->ret = err(a[0] <= 2 ? LINUX_ENOTTY : LINUX_EBADF); break;
	case OP_SIGNAL:		/* rt_sigaction's old action is 3 words before its mask */
		c->ret = sys_signal(o, a[2], a[3] + (r->nr64 == 13 ? 3 * w : 0));
		break;
	case OP_UNAME:		c->ret = sys_uname(p, o, a[0]); break;
	case OP_NOSYS:		c->ret = err(LINUX_ENOSYS); break;
	case OP_RANDOM:		c->ret = sys_random(o, a[0], a[1]); break;
	case OP_SYSINFO:	c->ret = sys_sysinfo(p, o, a[0]); break;
	case OP_NOENT:		c->ret = err(LINUX_ENOENT); break;	/* no file system: no path exists */
	case OP_RLIMIT:		c->ret = sys_rlimit(o, a[0], 0, a[1], w); break;
	case OP_PRLIMIT:	c->ret = a[0] ? err(LINUX_EPERM) : sys_rlimit(o, a[1], a[2], a[3], 8); break;
	default:
		return LINUX_UNKNOWN;
	}
	return LINUX_CONTINUE;
}

/* --- the new process's stack ------------------------------------------------------ */

struct stack_writer {
	uint8_t *base;			/* the stack's memory, for address stack_lo */
	uint64_t lo;
	unsigned w;
};

static void sw_word(const struct stack_writer *s, uint64_t at, uint64_t v)
{
	put(s->base + (at - s->lo), v, s->w);
}

uint64_t linux_build_stack(const struct linux_proc *p, const struct linux_ops *o,
			   const struct linux_start *st)
{
	static const unsigned naux = 18;	/* the pairs below, AT_NULL included */
	struct stack_writer s = { .lo = p->stack_lo, .w = p->bits / 8 };
	const char *platform = p->bits == 64 ? "x86_64" : "i686";
	uint64_t top = p->arena_hi, strings, rnd, plat, sp, at;
	size_t plen = strlen(platform) + 1;

	if (!(s.base = o->user(o->ctx, p->stack_lo, LINUX_STACK_SIZE)) || st->argbuf_len > 4096)
		return 0;
	memset(s.base, 0, LINUX_STACK_SIZE);
	strings = top - 16 - st->argbuf_len;		/* argv's strings, then the platform */
	memcpy(s.base + (strings - s.lo), st->argbuf, st->argbuf_len);
	plat = strings - plen;
	memcpy(s.base + (plat - s.lo), platform, plen);
	rnd = (plat - LINUX_RANDOM_BYTES) & ~(uint64_t)15;
	memcpy(s.base + (rnd - s.lo), st->random, LINUX_RANDOM_BYTES);
	/* argc, argv + NULL, envp NULL, auxv: 1 + argc + 1 + 1 + 2 * naux words, then align */
	sp = (rnd - (uint64_t)(3 + st->argc + 2 * naux) * s.w) & ~(uint64_t)15;
	at = sp;
	sw_word(&s, at, st->argc);
	at += s.w;
	for (uint32_t i = 0, pos = 0; i < st->argc; i++) {
		sw_word(&s, at, strings + pos);
		at += s.w;
		while (pos < st->argbuf_len && st->argbuf[pos])
			pos++;
		pos++;
	}
	at += 2 * s.w;		/* argv's NULL, envp's NULL (the stack was zeroed) */
	const uint64_t aux[18][2] = {
		{ AT_PHDR, st->phdr }, { AT_PHENT, st->phent }, { AT_PHNUM, st->phnum },
		{ AT_PAGESZ, LINUX_PAGE }, { AT_BASE, 0 }, { AT_ENTRY, st->entry },
		{ AT_UID, 0 }, { AT_EUID, 0 }, { AT_GID, 0 }, { AT_EGID, 0 },
		{ AT_HWCAP, st->hwcap }, { AT_CLKTCK, 100 }, { AT_SECURE, 0 },
		{ AT_RANDOM, rnd }, { AT_PLATFORM, plat }, { AT_EXECFN, strings },
		{ AT_NULL, 0 }, { AT_NULL, 0 },
	};
	for (unsigned i = 0; i < naux; i++, at += 2 * s.w) {
		sw_word(&s, at, aux[i][0]);
		sw_word(&s, at + s.w, aux[i][1]);
	}
	return sp;
}
