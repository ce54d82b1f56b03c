/*
 * test_linux.c - a static Linux program's system calls and initial stack
 * (workload/linux.c), for both ABIs.
 *
 * The program's memory is two host buffers standing for the window
 * (WIN_LO) and the arena (ARENA_LO); the expected layouts are Linux's
 * (syscall_64.tbl and syscall_32.tbl numbers, struct iovec, timespec,
 * user_desc, the auxiliary vector's tags from include/uapi/linux/auxvec.h),
 * written out here, not taken from the code under test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "workload/linux.h"

#define WIN_LO		UINT64_C(0x400000)
#define WIN_SIZE	UINT64_C(0x400000)
#define ARENA_LO	UINT64_C(0x10000000)

struct host {
	uint8_t *win, *arena;
	char out[256];
	size_t out_n;
	uint64_t tls_base;
	uint32_t tls_limit, tls_flags, tls_calls;
};

static uint8_t *h_user(void *ctx, uint64_t addr, uint64_t len)
{
	struct host *h = ctx;

	if (addr >= WIN_LO && addr < WIN_LO + WIN_SIZE && len <= WIN_LO + WIN_SIZE - addr)
		return h->win + (addr - WIN_LO);
	if (addr >= ARENA_LO && addr < ARENA_LO + LINUX_ARENA_SIZE &&
	    len <= ARENA_LO + LINUX_ARENA_SIZE - addr)
		return h->arena + (addr - ARENA_LO);
	return NULL;
}

static void h_write(void *ctx, const char *s, size_t n)
{
	struct host *h = ctx;

	memcpy(h->out + h->out_n, s, n);
	h->out_n += n;
}

static uint64_t h_now(void *ctx)
{
	(void)ctx;
	return UINT64_C(5123456789);	/* 5 s and 123456789 ns since boot */
}

static int h_tls(void *ctx, uint64_t base, uint32_t limit, uint32_t flags, uint32_t *entry)
{
	struct host *h = ctx;

	h->tls_base = base, h->tls_limit = limit, h->tls_flags = flags, h->tls_calls++;
	if (entry)
		*entry = 7;
	return 0;
}

static struct host H;
static struct linux_ops O = { .ctx = &H, .user = h_user, .write = h_write, .now_ns = h_now,
			      .set_tls = h_tls };

static void setup(struct linux_proc *p, unsigned bits)
{
	free(H.win);
	free(H.arena);
	memset(&H, 0, sizeof(H));
	H.win = calloc(1, WIN_SIZE);
	H.arena = calloc(1, LINUX_ARENA_SIZE);
	linux_proc_init(p, bits, WIN_LO, WIN_LO + WIN_SIZE, ARENA_LO);
}

static uint64_t call(struct linux_proc *p, uint64_t nr, uint64_t a0, uint64_t a1, uint64_t a2,
		     uint64_t a3, enum linux_result want)
{
	struct linux_call c = { .nr = nr, .a = { a0, a1, a2, a3 } };

	assert_int_equal(linux_syscall(p, &O, &c), want);
	return c.ret;
}

static uint8_t *mem(uint64_t addr)
{
	return h_user(&H, addr, 1);
}

static void put(uint64_t addr, uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		mem(addr)[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get(uint64_t addr, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = bytes; i-- > 0;)
		v = v << 8 | mem(addr)[i];
	return v;
}

#define NEG(e) ((uint64_t)-(int64_t)(e))

static void names_and_unknown_calls(void **state)
{
	struct linux_proc p;

	(void)state;
	assert_string_equal(linux_call_name(64, 62), "kill");
	assert_string_equal(linux_call_name(32, 37), "kill");
	assert_string_equal(linux_call_name(64, 57), "fork");
	assert_string_equal(linux_call_name(32, 192), "mmap2");
	assert_null(linux_call_name(64, 192));		/* no mmap2 on x86-64 */
	assert_null(linux_call_name(64, 100000));
	setup(&p, 64);
	call(&p, 57, 0, 0, 0, 0, LINUX_UNKNOWN);		/* fork */
	call(&p, 100000, 0, 0, 0, 0, LINUX_UNKNOWN);
	setup(&p, 32);
	call(&p, 2, 0, 0, 0, 0, LINUX_UNKNOWN);		/* i386 fork */
	call(&p, 252, 300, 0, 0, 0, LINUX_EXIT);		/* exit_group */
	assert_int_equal(p.status, 300 & 0xff);
}

static void write_and_writev_reach_the_console(void **state)
{
	struct linux_proc p;
	uint64_t s = WIN_LO + 0x100, iov = WIN_LO + 0x200;

	(void)state;
	setup(&p, 64);
	memcpy(mem(s), "hello, world\n", 13);
	assert_int_equal(call(&p, 1, 1, s, 7, 0, LINUX_CONTINUE), 7);	/* write(1, s, 7) */
	put(iov, s + 7, 8), put(iov + 8, 6, 8);			/* { s + 7, 6 } */
	put(iov + 16, s, 5), put(iov + 24, 5, 8);			/* { s, 5 } */
	assert_int_equal(call(&p, 20, 2, iov, 2, 0, LINUX_CONTINUE), 11);	/* writev(2, ...) */
	assert_int_equal(H.out_n, 18);
	assert_memory_equal(H.out, "hello, world\nhello", 18);
	assert_int_equal(call(&p, 1, 3, s, 7, 0, LINUX_CONTINUE), NEG(LINUX_EBADF));
	assert_int_equal(call(&p, 1, 1, 0x1000, 7, 0, LINUX_CONTINUE), NEG(LINUX_EFAULT));
	/* i386: write is 4, writev 146 with 4-byte iovec fields */
	setup(&p, 32);
	memcpy(mem(s), "abcdef", 6);
	put(iov, s + 3, 4), put(iov + 4, 3, 4), put(iov + 8, s, 4), put(iov + 12, 1, 4);
	assert_int_equal(call(&p, 146, 1, iov, 2, 0, LINUX_CONTINUE), 4);
	assert_int_equal(call(&p, 4, 1, s, 2, 0, LINUX_CONTINUE), 2);
	assert_memory_equal(H.out, "defaab", 6);
}

static void brk_and_mmap_share_the_arena(void **state)
{
	struct linux_proc p;
	uint64_t a, b, top = ARENA_LO + LINUX_ARENA_SIZE - LINUX_STACK_SIZE - LINUX_PAGE;

	(void)state;
	setup(&p, 64);
	assert_int_equal(call(&p, 12, 0, 0, 0, 0, LINUX_CONTINUE), ARENA_LO);	/* brk(0) */
	memset(mem(ARENA_LO), 0xaa, 0x3000);
	p.brk = ARENA_LO;	/* as if shrunk: growing again gives zeroes */
	assert_int_equal(call(&p, 12, ARENA_LO + 0x2100, 0, 0, 0, LINUX_CONTINUE), ARENA_LO + 0x2100);
	assert_int_equal(get(ARENA_LO + 0x20f8, 8), 0);
	/* beyond the mappings: refused with the old break, as Linux does */
	assert_int_equal(call(&p, 12, top + 1, 0, 0, 0, LINUX_CONTINUE), ARENA_LO + 0x2100);
	/* mmap(NULL, 5000, RW, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0): two pages below the stack's guard */
	a = call(&p, 9, 0, 5000, 3, 0x22, LINUX_CONTINUE);
	assert_int_equal(a, top - 0x2000);
	b = call(&p, 9, 0, 4096, 3, 0x22, LINUX_CONTINUE);
	assert_int_equal(b, a - 0x1000);
	memset(mem(b), 0x55, 4096);
	assert_int_equal(call(&p, 11, b, 4096, 0, 0, LINUX_CONTINUE), 0);	/* the lowest: back */
	assert_int_equal(call(&p, 9, 0, 4096, 3, 0x22, LINUX_CONTINUE), b);
	assert_int_equal(get(b, 8), 0);						/* zeroed again */
	/* MAP_FIXED inside the heap (musl's guard page), a file mapping, too much */
	assert_int_equal(call(&p, 9, ARENA_LO + 0x1000, 4096, 0, 0x32, LINUX_CONTINUE),
			 ARENA_LO + 0x1000);
	assert_int_equal(call(&p, 9, 0, 4096, 1, 0x02, LINUX_CONTINUE), NEG(LINUX_EBADF));
	assert_int_equal(call(&p, 9, 0, LINUX_ARENA_SIZE, 3, 0x22, LINUX_CONTINUE),
			 NEG(LINUX_ENOMEM));
	/* i386 mmap2 is 192, brk 45 */
	setup(&p, 32);
	assert_int_equal(call(&p, 45, 0, 0, 0, 0, LINUX_CONTINUE), ARENA_LO);
	assert_int_equal(call(&p, 192, 0, 4096, 3, 0x22, LINUX_CONTINUE), top - 0x1000);
}

static void clocks_tls_and_the_rest(void **state)
{
	struct linux_proc p;
	uint64_t t = WIN_LO + 0x300;

	(void)state;
	setup(&p, 64);
	assert_int_equal(call(&p, 228, 1, t, 0, 0, LINUX_CONTINUE), 0);	/* clock_gettime */
	assert_int_equal(get(t, 8), 5);
	assert_int_equal(get(t + 8, 8), 123456789);
	assert_int_equal(call(&p, 96, t, 0, 0, 0, LINUX_CONTINUE), 0);	/* gettimeofday */
	assert_int_equal(get(t + 8, 8), 123456);
	assert_int_equal(call(&p, 158, 0x1002, 0x4abc00, 0, 0, LINUX_CONTINUE), 0);
	assert_int_equal(H.tls_base, 0x4abc00);					/* ARCH_SET_FS */
	assert_int_equal(call(&p, 158, 0x1001, 0, 0, 0, LINUX_CONTINUE), NEG(LINUX_EINVAL));
	assert_int_equal(call(&p, 16, 1, 0x5413, t, 0, LINUX_CONTINUE), NEG(LINUX_ENOTTY));
	assert_int_equal(call(&p, 39, 0, 0, 0, 0, LINUX_CONTINUE), 1);		/* getpid */
	assert_int_equal(call(&p, 218, t, 0, 0, 0, LINUX_CONTINUE), 1);	/* set_tid_address */
	put(t, ~UINT64_C(0), 8);
	assert_int_equal(call(&p, 14, 0, 0, t, 8, LINUX_CONTINUE), 0);	/* rt_sigprocmask */
	assert_int_equal(get(t, 8), 0);						/* old mask: none */
	assert_int_equal(call(&p, 63, t, 0, 0, 0, LINUX_CONTINUE), 0);		/* uname */
	assert_string_equal((char *)mem(t + 4 * 65), "x86_64");
	assert_int_equal(call(&p, 334, 0, 0, 0, 0, LINUX_CONTINUE), NEG(LINUX_ENOSYS)); /* rseq */
	assert_int_equal(call(&p, 257, 0, t, 0, 0, LINUX_CONTINUE), NEG(LINUX_ENOENT)); /* openat */
	/* i386: 32-bit timespec for clock_gettime (265), 64-bit for clock_gettime64 (403) */
	setup(&p, 32);
	assert_int_equal(call(&p, 265, 0, t, 0, 0, LINUX_CONTINUE), 0);
	assert_int_equal(get(t, 4), 5);
	assert_int_equal(get(t + 4, 4), 123456789);
	assert_int_equal(call(&p, 403, 0, t, 0, 0, LINUX_CONTINUE), 0);
	assert_int_equal(get(t, 8), 5);
	assert_int_equal(get(t + 8, 8), 123456789);
	/* set_thread_area({ -1, base, 0xfffff, seg_32bit|limit_in_pages|useable }) */
	put(t, 0xffffffff, 4), put(t + 4, 0x80ef000, 4), put(t + 8, 0xfffff, 4), put(t + 12, 0x51, 4);
	assert_int_equal(call(&p, 243, t, 0, 0, 0, LINUX_CONTINUE), 0);
	assert_int_equal(get(t, 4), 7);						/* the entry chosen */
	assert_int_equal(H.tls_base, 0x80ef000);
	assert_int_equal(H.tls_limit, 0xfffff);
	assert_int_equal(H.tls_flags, 0x51);
}

/* argc, argv[], NULL, envp NULL, auxv pairs up to AT_NULL: read back as a C library does. */
static void check_stack(unsigned bits)
{
	static const char args[] = "prog\0-v\0x";
	uint8_t rnd[LINUX_RANDOM_BYTES] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
	struct linux_start st = { .argc = 3, .argbuf = args, .argbuf_len = sizeof(args),
				  .entry = 0x401000, .phdr = 0x400040, .phent = 56, .phnum = 4 };
	struct linux_proc p;
	unsigned w = bits / 8, seen = 0;
	uint64_t sp, at, v[32] = { 0 };

	setup(&p, bits);
	memcpy(st.random, rnd, sizeof(rnd));
	sp = linux_build_stack(&p, &O, &st);
	assert_int_equal(sp % 16, 0);
	assert_true(sp >= p.stack_lo && sp < ARENA_LO + LINUX_ARENA_SIZE);
	assert_int_equal(get(sp, w), 3);
	assert_string_equal((char *)mem(get(sp + w, w)), "prog");
	assert_string_equal((char *)mem(get(sp + 2 * w, w)), "-v");
	assert_string_equal((char *)mem(get(sp + 3 * w, w)), "x");
	assert_int_equal(get(sp + 4 * w, w), 0);	/* argv's end */
	assert_int_equal(get(sp + 5 * w, w), 0);	/* no environment */
	for (at = sp + 6 * w; get(at, w) != 0; at += 2 * w) {
		assert_true(get(at, w) < 32);
		v[get(at, w)] = get(at + w, w);
		seen++;
	}
	assert_true(seen >= 12);
	assert_int_equal(v[3], 0x400040);	/* AT_PHDR */
	assert_int_equal(v[4], 56);		/* AT_PHENT */
	assert_int_equal(v[5], 4);		/* AT_PHNUM */
	assert_int_equal(v[6], 4096);		/* AT_PAGESZ */
	assert_int_equal(v[9], 0x401000);	/* AT_ENTRY */
	assert_memory_equal(mem(v[25]), rnd, sizeof(rnd));	/* AT_RANDOM */
	assert_string_equal((char *)mem(v[15]), bits == 64 ? "x86_64" : "i686");	/* AT_PLATFORM */
	assert_string_equal((char *)mem(v[31]), "prog");	/* AT_EXECFN */
}

static void the_initial_stack_is_laid_out_as_linux_does(void **state)
{
	(void)state;
	check_stack(64);
	check_stack(32);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(names_and_unknown_calls),
		cmocka_unit_test(write_and_writev_reach_the_console),
		cmocka_unit_test(brk_and_mmap_share_the_arena),
		cmocka_unit_test(clocks_tls_and_the_rest),
		cmocka_unit_test(the_initial_stack_is_laid_out_as_linux_does),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);

	free(H.win);
	free(H.arena);
	return r;
}
