/*
 * workload.c - the built-in workload table and argument parsing.
 *
 * Pure data and parsing: no hardware, compiled on the host as well. The
 * bodies are in arch/x86/64/workloads.S and the runner in workload/workloads.c.
 * Each help text states the workload's exact retired-instruction count as
 * a formula read off its listing in workloads.S (counted from the first
 * instruction of the workload function to its final ret, both included);
 * the `run --step` output and the QEMU tests check those formulas.
 */
#include "lib/parse.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "pmu/p4_spec.h"
#include "workload/program.h"
#include "workload/workload.h"

#define U32_MAX		UINT64_C(0xffffffff)
#define MIB		(UINT64_C(1) << 20)

static const char *const chase_orders[] = { "linear", "random", NULL };
static const char *const fpassist_modes[] = { "ieee", "daz", NULL };
static const char *const store_modes[] = { "forward", "alias", "fill", "nt", "ntsparse", NULL };

_Static_assert(sizeof(store_modes) / sizeof(store_modes[0]) == STORES_NMODES + 1,
	       "one name per enum stores_mode");
static const char *const branch_patterns[] = { "taken", "nottaken", "alternate", "random", NULL };

_Static_assert(sizeof(branch_patterns) / sizeof(branch_patterns[0]) == BRANCH_NPATTERNS + 1,
	       "one name per enum branch_pattern");

const struct workload workload_table[WL_NWORKLOADS] = {
	[WL_EMPTY] = {
		.id = WL_EMPTY, .name = "empty",
		.exercises = "returns at once: the baseline for measurement overhead",
		.help = "Instructions: 1 (ret).\n",
	},
	[WL_LOOP] = {
		.id = WL_LOOP, .name = "loop",
		.exercises = "tight loop, 3 instructions per iteration (add, sub, jnz)",
		.help = "Instructions: 3*N + 6. Conditional branches: N-1 taken, 1 not taken;\n"
			"one ret.\n",
		.nparams = 1,
		.params = { { "N", WP_NUMBER, true, 1000, 1, U32_MAX, NULL, "iterations" } },
	},
	[WL_BRANCH] = {
		.id = WL_BRANCH, .name = "branch",
		.exercises = "one pattern-driven conditional branch per iteration",
		.help = "Each iteration computes a condition (taken, nottaken, alternate: 1 instruction;\n"
			"random: 11), runs `test; jnz` (the pattern branch) and, when it is not taken,\n"
			"one add; then the loop's closing `sub; jnz`.\n"
			"Pattern branch: taken = N, 0, N/2 (rounded down), or the number of odd\n"
			"states for random; not taken = N - taken. random: the state starts at SEED\n"
			"and each iteration steps it x ^= x << 13; x ^= x >> 7; x ^= x << 17 (64-bit\n"
			"xorshift); the branch is taken when bit 0 of the new state is 1.\n"
			"Instructions: 8 + N*(C + 4) + NT, C = 1 (11 for random), NT = not taken.\n"
			"Conditional branches: pattern ones plus the closing jnz (N-1 taken, 1 not).\n",
		.nparams = 3,
		.params = {
			{ "PATTERN", WP_CHOICE, true, BRANCH_ALTERNATE, 0, BRANCH_NPATTERNS - 1,
			  branch_patterns, "taken | nottaken | alternate | random" },
			{ "N", WP_NUMBER, true, 1000, 1, U32_MAX, NULL, "iterations" },
			{ "SEED", WP_NUMBER, true, 12345, 1, UINT64_MAX, NULL,
			  "xorshift64 start state for random (non-zero)" },
		},
	},
	[WL_CALLS] = {
		.id = WL_CALLS, .name = "calls",
		.exercises = "call chains DEPTH deep (call/ret pairs, return stack)",
		.help = "Each repetition calls a function that calls itself until DEPTH calls\n"
			"are active, then returns all the way.\n"
			"Instructions: 10 + N*(8*DEPTH + 2). Per repetition: DEPTH calls, DEPTH rets,\n"
			"DEPTH-1 not-taken and 1 taken jz; plus the closing jnz (N-1 taken, 1 not).\n",
		.nparams = 2,
		.params = {
			{ "DEPTH", WP_NUMBER, true, 8, 1, 256, NULL, "calls active at the deepest point" },
			{ "N", WP_NUMBER, true, 100, 1, U32_MAX, NULL, "repetitions" },
		},
	},
	[WL_INDIRECT] = {
		.id = WL_INDIRECT, .name = "indirect",
		.exercises = "indirect call and indirect jump through registers (FF /2, FF /4)",
		.help = "Each iteration calls a 5-instruction function through a register\n"
			"(`call *%r8`) that returns, jumps through a register (`jmp *%r9`) over a\n"
			"never executed ud2, and closes with `sub; jnz`.\n"
			"Instructions: 9*N + 8. Branches, all taken but the last jnz: N indirect\n"
			"calls, N+1 rets, N indirect jumps; the closing jnz N-1 taken, 1 not.\n",
		.nparams = 1,
		.params = { { "N", WP_NUMBER, true, 1000, 1, U32_MAX, NULL, "iterations" } },
	},
	[WL_MEMWALK] = {
		.id = WL_MEMWALK, .name = "memwalk",
		.exercises = "reads one byte every STRIDE bytes of a SIZE-byte buffer (caches, TLB)",
		.help = "The kernel allocates the buffer (zeroed, page-aligned, user-accessible\n"
			"for --ring 3) for the run. M = ceil(SIZE/STRIDE) loads per pass.\n"
			"Instructions: 6 + PASSES*(3 + 5*M). Conditional branches per pass: the\n"
			"inner jb (M-1 taken, 1 not) and the outer jnz.\n",
		.nparams = 3,
		.params = {
			{ "SIZE", WP_SIZE, true, 64 * 1024, 1, 64 * MIB, NULL, "buffer bytes (K, M suffixes)" },
			{ "STRIDE", WP_SIZE, true, 64, 1, 64 * MIB, NULL, "bytes between loads" },
			{ "PASSES", WP_NUMBER, true, 1, 1, 1000000, NULL, "walks over the buffer" },
		},
	},
	[WL_COPY] = {
		.id = WL_COPY, .name = "copy",
		.exercises = "one `rep movsb` of SIZE bytes (string operations)",
		.help = "Copies the first half of a 2*SIZE-byte kernel-allocated buffer to the\n"
			"second half with a single REP MOVSB. Instructions: 9, whatever SIZE\n"
			"(a REP string instruction retires once).\n",
		.nparams = 1,
		.params = { { "SIZE", WP_SIZE, true, 4096, 1, 32 * MIB, NULL, "bytes (K, M suffixes)" } },
	},
	[WL_SPIN] = {
		.id = WL_SPIN, .name = "spin",
		.exercises = "busy loop on RDTSC for USEC microseconds (clockticks)",
		.help = "Loops `pause; rdtsc` until USEC microseconds of TSC time have passed\n"
			"(TSC rate from the PIT calibration). The instruction count depends on time.\n",
		.nparams = 1,
		.params = { { "USEC", WP_NUMBER, true, 1000, 1, 10000000, NULL, "microseconds" } },
	},
	[WL_HALT] = {
		.id = WL_HALT, .name = "halt",
		.exercises = "HLT for USEC microseconds, woken by the local APIC timer",
		.help = "Runs `sti; hlt; cli` until USEC microseconds of TSC time have passed;\n"
			"the local APIC timer fires every 100 us to wake it. Ring 0 only.\n",
		.nparams = 1,
		.params = { { "USEC", WP_NUMBER, true, 1000, 1, 10000000, NULL, "microseconds" } },
		.ring3_refusal = "HLT is privileged: at CPL 3 it raises #GP (SDM Vol. 2, HLT)",
	},
	[WL_SYNTHETIC] = {
		.id = WL_SYNTHETIC, .name = "synthetic",
		.exercises = "N occurrences of event SPEC, one `int 0x81` each (model input)",
		.help = "Each occurrence is a software interrupt through the DPL-3 gate 0x81,\n"
			"at the workload's own CPL; the counting side turns it into one\n"
			"occurrence of SPEC (an event:mask spec) and marks the input synthetic.\n"
			"Instructions: 3*N + 5 (each int 0x81 counts as one).\n",
		.nparams = 2,
		.params = {
			{ "SPEC", WP_TEXT, false, 0, 0, 0, NULL, "event spec, e.g. bsq_cache_reference:rd_2ndl_miss" },
			{ "N", WP_NUMBER, true, 1, 1, U32_MAX, NULL, "occurrences" },
		},
	},
	[WL_FAULT_USER] = {
		.id = WL_FAULT_USER, .name = "fault-user",
		.exercises = "reads a supervisor-only kernel quadword: fine at CPL 0, #PF at CPL 3",
		.help = "Shows that a fault in a ring-3 workload is reported and the shell\n"
			"survives. Instructions at CPL 0: 4.\n",
	},
	[WL_SNIPPET] = {
		.id = WL_SNIPPET, .name = "snippet",
		.exercises = "the code `bench` last loaded into the snippet area (or just ret)",
		.help = "Runs the loop `bench` generated last (workload/snippet.h): push of RBX, RBP,\n"
			"R12-R15, INIT, mov r15 N, U snippet copies, dec r15, jnz, six pops, ret.\n"
			"Instructions: 14 + I + N*(U*K + 2), I and K the init and snippet\n"
			"instruction counts (ia32: counter on the stack, 11 + I + N*(U*K + 2));\n"
			"1 (ret) before any bench.\n",
	},
	[WL_CHASE] = {
		.id = WL_CHASE, .name = "chase",
		.exercises = "N dependent loads chasing pointers through a SIZE-byte buffer (load-to-use)",
		.help = "The kernel fills a buffer (page-aligned, user-accessible for --ring 3) with\n"
			"one pointer per 64-byte line, each to the next line (linear) or along one\n"
			"cycle through all lines that jumps across the buffer (random: line i points\n"
			"to line (a*i + c) mod lines, a full-period LCG; SIZE/64 a power of two),\n"
			"then follows N of them, each load's address the value the\n"
			"one before loaded, as the chases that measure load-to-use latency do.\n"
			"Per load: (count(2N) - count(N)) / N cancels the set-up and a cold pass.\n"
			"Instructions: 3*N + 7. Conditional branches: N-1 taken, 1 not taken.\n",
		.nparams = 3,
		.params = {
			{ "ORDER", WP_CHOICE, true, 0, 0, 1, chase_orders, "linear | random" },
			{ "SIZE", WP_SIZE, true, 4096, 64, 64 * MIB, NULL, "buffer bytes (K, M suffixes)" },
			{ "N", WP_NUMBER, true, 1000, 1, U32_MAX, NULL, "loads" },
		},
	},
	[WL_FPMIX] = {
		.id = WL_FPMIX, .name = "fpmix",
		.exercises = "x87, MMX and SSE/SSE2 arithmetic in a fixed mix (execution tagging)",
		.help = "Each iteration executes, of the classes the FIRM events count (PMU reference\n"
			"5.7): x87_FP_uop 1 (fadd), 64bit_MMX_uop 2 (paddd, psubd on MM registers),\n"
			"128bit_MMX_uop 3 (paddd, psubd, pxor on XMM), packed_SP_uop 4 (addps mulps\n"
			"subps maxps), packed_DP_uop 5 (addpd mulpd subpd maxpd minpd), scalar_SP_uop\n"
			"6 (addss mulss subss maxss minss sqrtss), scalar_DP_uop 7 (addsd mulsd subsd\n"
			"maxsd minsd sqrtsd addsd); also two FILD, two FSTP and EMMS, which are no\n"
			"arithmetic. Before the loop: LDMXCSR 1F80H, FNINIT and MOVD zeroes (moves).\n"
			"Instructions: 35*N + 15. Conditional branches: N-1 taken, 1 not taken.\n"
			"Needs x87, MMX, SSE and SSE2, enabled by the kernel on every LP\n"
			"(CR0.MP, CR4.OSFXSR/OSXMMEXCPT).\n",
		.nparams = 1,
		.params = { { "N", WP_NUMBER, true, 100, 1, U32_MAX, NULL, "iterations" } },
	},
	[WL_FPASSIST] = {
		.id = WL_FPASSIST, .name = "fpassist",
		.exercises = "x87 and SSE/SSE2 arithmetic on denormal and normal values (assists)",
		.help = "Each iteration executes 4 x87 arithmetic instructions, two on a denormal\n"
			"memory operand (fadd m32, fmul m64: x87_assist PREA 2) and two on normal\n"
			"values (fld1, fmul m32), and 9 SSE/SSE2 ones, 5 of them reading 8 denormal\n"
			"elements in all (SSE_input_assist 8 with MXCSR.DAZ clear, 0 with MODE daz)\n"
			"and 4 normal values only. Before the loop, once each: an x87 result that\n"
			"underflows (POAU), one that overflows (POAO), a stack underflow (FPSU) and\n"
			"a stack overflow (FPSO). MXCSR is 1F80H (ieee) or 1FC0H (daz) in the loop\n"
			"and 1F80H again after it.\n"
			"Instructions: 18*N + 45. Conditional branches: N-1 taken, 1 not taken.\n"
			"Needs x87, SSE and SSE2, as fpmix.\n",
		.nparams = 2,
		.params = {
			{ "N", WP_NUMBER, true, 100, 1, U32_MAX, NULL, "iterations" },
			{ "MODE", WP_CHOICE, true, 0, 0, 1, fpassist_modes, "ieee | daz" },
		},
	},
	[WL_STORES] = {
		.id = WL_STORES, .name = "stores",
		.exercises = "the store buffer: failed forwards, aliasing, a full buffer, WC buffers",
		.help = "N iterations over a kernel-allocated buffer (zeroed, page-aligned,\n"
			"user-accessible for --ring 3), by MODE:\n"
			"  forward   a 2-byte store, then a 4-byte load from the same address (the\n"
			"            load is wider: the store cannot forward it);\n"
			"  alias     a 4-byte store, then a 4-byte load 4 MiB further (the same\n"
			"            address bits 21:6: a data conflict on every NetBurst part);\n"
			"  fill      a 4-byte store every 64 bytes (each line missing L1, each\n"
			"            store leaves the buffer slowly: it fills);\n"
			"  nt        a 4-byte MOVNTI every 4 bytes (16 fill a write-combining buffer);\n"
			"  ntsparse  a 4-byte MOVNTI every 64 bytes (one per line).\n"
			"Instructions: 4*N + 9. Conditional branches: N-1 taken, 1 not taken.\n",
		.nparams = 2,
		.params = {
			{ "MODE", WP_CHOICE, true, STORES_FORWARD, 0, STORES_NMODES - 1, store_modes,
			  "forward | alias | fill | nt | ntsparse" },
			{ "N", WP_NUMBER, true, 1000, 1, 1000000, NULL, "iterations" },
		},
	},
	[WL_SMC] = {
		.id = WL_SMC, .name = "smc",
		.exercises = "self-modifying code: each iteration writes into the instruction it just ran",
		.help = "Each iteration runs `mov $imm8, %al`, then writes the loop counter's low\n"
			"byte into that instruction's immediate, then `sub; jnz`: one store into\n"
			"code the trace cache holds per iteration (on a Pentium 4 a machine clear\n"
			"that flushes the trace cache, SDM Vol. 3A 11.6). The code is the kernel's\n"
			"own and stays patched. Instructions: 4*N + 7. Conditional branches: N-1\n"
			"taken, 1 not taken; one ret. Returns N.\n",
		.nparams = 1,
		.params = { { "N", WP_NUMBER, true, 100, 1, U32_MAX, NULL, "iterations" } },
	},
};

const struct workload *workload_find(const char *name)
{
	for (unsigned i = 0; i < WL_NWORKLOADS; i++)
		if (parse_streq(workload_table[i].name, name))
			return &workload_table[i];
	const struct program *p = program_find(name);

	return p ? &p->wl : NULL;
}

int workload_default_ring(const struct workload *w)
{
	return w->id == WL_PROGRAM ? 3 : 0;
}

int workload_synopsis(const struct workload *w, char *buf, size_t n)
{
	int len = ksnprintf(buf, n, "%s", w->name);

	for (unsigned i = 0; i < w->nparams && len >= 0 && (size_t)len < n; i++) {
		const struct workload_param *p = &w->params[i];

		len += ksnprintf(buf + len, n - (size_t)len, p->optional ? " [%s]" : " %s", p->name);
	}
	return len;
}

/* Strip a K/M suffix from s into tmp; *scale receives the multiplier. */
static const char *workload_size_suffix(const char *s, char *tmp, size_t n, uint64_t *scale)
{
	size_t len = parse_strlen(s);
	char last = len ? s[len - 1] : 0;

	*scale = 1;
	if (len < 2 || len >= n || (last != 'K' && last != 'k' && last != 'M' && last != 'm'))
		return s;
	*scale = (last == 'K' || last == 'k') ? 1024 : MIB;
	for (size_t i = 0; i + 1 < len; i++)
		tmp[i] = s[i];
	tmp[len - 1] = '\0';
	return tmp;
}

static int workload_parse_number(const struct workload_param *p, const char *s, uint64_t *out,
				 char *why, size_t whylen)
{
	char tmp[32];
	uint64_t scale = 1, v;
	const char *err = NULL;

	if (p->kind == WP_SIZE)
		s = workload_size_suffix(s, tmp, sizeof(tmp), &scale);
	if (!parse_u64(s, UINT64_MAX, &v, &err)) {
		ksnprintf(why, whylen, "%s", err);
		return -1;
	}
	if (v > p->max / scale || v * scale < p->min) {
		ksnprintf(why, whylen, "must be %llu..%llu", (unsigned long long)p->min,
			  (unsigned long long)p->max);
		return -1;
	}
	*out = v * scale;
	return 0;
}

static int workload_parse_choice(const struct workload_param *p, const char *s, uint64_t *out,
				 char *why, size_t whylen)
{
	int len = ksnprintf(why, whylen, "'%s' is not one of", s);

	for (unsigned i = 0; p->choices[i]; i++) {
		if (parse_streq(p->choices[i], s)) {
			*out = i;
			return 0;
		}
		if (len >= 0 && (size_t)len < whylen)
			len += ksnprintf(why + len, whylen - (size_t)len, "%s %s", i ? "," : "",
					 p->choices[i]);
	}
	return -1;
}

static int workload_parse_one(const struct workload_param *p, const char *s,
			      struct workload_args *a, unsigned i, char *why, size_t whylen)
{
	struct p4_spec spec;
	struct p4_spec_error e;

	switch (p->kind) {
	case WP_CHOICE:
		return workload_parse_choice(p, s, &a->v[i], why, whylen);
	case WP_TEXT:
		if (parse_strlen(s) == 0 || parse_strlen(s) >= sizeof(a->spec)) {
			ksnprintf(why, whylen, "must be 1..%u characters", (unsigned)sizeof(a->spec) - 1);
			return -1;
		}
		/* The spec must parse now: a bad one would run and feed nothing. The
		 * CPU's own event set is checked by whoever feeds a model (stat). */
		if (p4_spec_parse(s, NULL, &spec, &e)) {
			ksnprintf(why, whylen, "'%s': %s", s, e.msg);
			return -1;
		}
		ksnprintf(a->spec, sizeof(a->spec), "%s", s);
		return 0;
	default:
		return workload_parse_number(p, s, &a->v[i], why, whylen);
	}
}

/* A program takes any words: argv[0] is its name, the words follow. */
static int workload_parse_program(const struct workload *w, int argc, char *const argv[],
				  struct workload_args *out, char *err, size_t errlen)
{
	struct workload_args a = { .w = w };
	size_t pos = 0;

	if (argc < 0 || argc + 1 > WORKLOAD_ARGV_MAX) {
		ksnprintf(err, errlen, "%s: at most %u arguments", w->name, WORKLOAD_ARGV_MAX - 1);
		return -1;
	}
	for (int i = -1; i < argc; i++) {
		const char *s = i < 0 ? w->name : argv[i];
		size_t n = parse_strlen(s) + 1;

		if (pos + n > sizeof(a.argbuf)) {
			ksnprintf(err, errlen, "%s: the arguments exceed %u bytes", w->name,
				  (unsigned)sizeof(a.argbuf));
			return -1;
		}
		for (size_t k = 0; k < n; k++)
			a.argbuf[pos + k] = s[k];
		pos += n;
	}
	a.argc = (uint32_t)argc + 1;
	*out = a;
	return 0;
}

int workload_parse_args(const struct workload *w, int argc, char *const argv[],
			struct workload_args *out, char *err, size_t errlen)
{
	struct workload_args a = { .w = w };
	char syn[96], why[320];

	if (w->id == WL_PROGRAM)
		return workload_parse_program(w, argc, argv, out, err, errlen);
	workload_synopsis(w, syn, sizeof(syn));
	if (argc < 0 || (unsigned)argc > w->nparams) {
		ksnprintf(err, errlen, "%s: too many arguments (usage: %s)", w->name, syn);
		return -1;
	}
	for (unsigned i = 0; i < w->nparams; i++) {
		const struct workload_param *p = &w->params[i];

		a.v[i] = p->def;
		if (i >= (unsigned)argc) {
			if (!p->optional) {
				ksnprintf(err, errlen, "%s: missing %s (usage: %s)", w->name, p->name, syn);
				return -1;
			}
			continue;
		}
		if (workload_parse_one(p, argv[i], &a, i, why, sizeof(why))) {
			ksnprintf(err, errlen, "%s: %s: %s", w->name, p->name, why);
			return -1;
		}
	}
	*out = a;
	return 0;
}

const char *workload_stop_reason(const struct workload_result *r, char *buf, size_t n)
{
	if (!r->timed_out)
		ksnprintf(buf, n, "interrupted by Ctrl-C");
	else if (r->step.instructions)
		ksnprintf(buf, n, "still running after %llu instructions: no return from main? "
			  "(programs --timeout)", (unsigned long long)r->step.instructions);
	else
		ksnprintf(buf, n, "stopped at its unstepped time limit, %u s (programs --timeout "
			  "unstepped=SECONDS)", r->limit_s);
	return buf;
}

int workload_parse_limits(char *spec, const struct program_limits *now,
			  struct program_limits *out)
{
	unsigned seen = 0;
	bool last = false;

	*out = *now;
	while (!last) {
		char *end = spec;
		unsigned unstepped = !strncmp(spec, "unstepped=", 10);
		uint64_t secs;
		const char *why;

		while (*end && *end != ',')
			end++;
		last = !*end;
		*end = '\0';
		if (unstepped)
			spec += 10;
		else if (!strncmp(spec, "stepped=", 8))
			spec += 8;
		if (!parse_u64(spec, PROGRAM_LIMIT_MAX_S, &secs, &why) || (unstepped && !secs) ||
		    (seen & (1u << unstepped))) {
			*out = *now;
			return -1;
		}
		seen |= 1u << unstepped;
		if (unstepped)
			out->unstepped_s = (unsigned)secs;
		else
			out->stepped_s = (unsigned)secs;
		spec = end + 1;
	}
	return 0;
}
