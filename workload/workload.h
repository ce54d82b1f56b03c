/*
 * workload.h - built-in workloads: what they are, how their arguments are
 * parsed, and how the kernel runs one (ring 0 or 3, optionally stepped).
 *
 * A workload is a plain function in the kernel image (workload/workloads.c,
 * arch/x86/64/workloads.S), built with frame pointers so its symbol is known.
 * Its code and data are self-contained (no calls into the kernel), so the
 * same bytes run at CPL 0 or, with their pages user-accessible, at CPL 3.
 *
 * The table part (workload_table, workload_find, workload_parse_args) is
 * portable and host-tested; workload_run() is the kernel side.
 *
 * Event sources for a PMU model come through struct workload_hooks:
 *  - begin/end bracket the workload (TSC deltas give clockticks);
 *  - step is called once per retired workload instruction when stepping
 *    (RFLAGS.TF; arch/x86/step.c): instr_retired, branch_retired,
 *    retired_branch_type come from it;
 *  - synthetic is called once per `int 0x81` that the synthetic workload
 *    executes, at the workload's own CPL.
 * Kernel code outside the workload (the runner, interrupt handlers, the
 * #DB handler itself, the int 0x80/0x81 gate bodies) is never stepped.
 */
#ifndef NBPROF_PROF_WORKLOAD_H
#define NBPROF_PROF_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/hooks.h"
#include "arch/x86/insn.h"

/* --- the table --------------------------------------------------------------- */

#define WORKLOAD_MAX_PARAMS	3
#define WORKLOAD_SPEC_MAX	64	/* synthetic SPEC, including the NUL */
#define WORKLOAD_ARGV_MAX	16	/* a program's argv entries, its name included */
#define WORKLOAD_ARGBUF		160	/* a program's argv strings, NULs included */

enum workload_id {
	WL_EMPTY,
	WL_LOOP,
	WL_BRANCH,
	WL_CALLS,
	WL_INDIRECT,
	WL_MEMWALK,
	WL_COPY,
	WL_SPIN,
	WL_HALT,
	WL_SYNTHETIC,
	WL_FAULT_USER,
	WL_SNIPPET,
	WL_FPMIX,
	WL_CHASE,
	WL_FPASSIST,
	WL_STORES,
	WL_SMC,
	WL_NWORKLOADS,
	WL_PROGRAM = WL_NWORKLOADS,	/* a user's program (workload/program.h), not in the table */
};

enum workload_param_kind {
	WP_NUMBER,		/* parse_u64 spellings: 1000, 0x3E8, 3E8H */
	WP_SIZE,		/* a number, optionally followed by K or M (x 1024, x 1048576) */
	WP_CHOICE,		/* one of choices[], value = index */
	WP_TEXT,		/* copied into workload_args.spec */
};

enum branch_pattern {
	BRANCH_TAKEN,		/* every iteration's branch is taken */
	BRANCH_NOT_TAKEN,	/* never taken */
	BRANCH_ALTERNATE,	/* 1st iteration not taken, 2nd taken, 3rd not taken, ... */
	BRANCH_RANDOM,		/* taken when bit 0 of the next xorshift64 state is 1 (see help) */
	BRANCH_NPATTERNS
};

/* `stores` modes (workload.c's help, arch/x86/64/workloads.S wl_st_*). */
enum stores_mode {
	STORES_FORWARD,		/* 2-byte store, 4-byte load from it */
	STORES_ALIAS,		/* store, load 4 MiB further */
	STORES_FILL,		/* a store every 64 bytes */
	STORES_NT,		/* MOVNTI every 4 bytes */
	STORES_NTSPARSE,	/* MOVNTI every 64 bytes */
	STORES_NMODES
};

struct workload_param {
	const char *name;		/* "N", "PATTERN", ... */
	enum workload_param_kind kind;
	bool optional;			/* may be omitted (then def) */
	uint64_t def, min, max;		/* WP_NUMBER/WP_SIZE (def also for an omitted WP_CHOICE) */
	const char *const *choices;	/* WP_CHOICE: NULL-terminated */
	const char *help;
};

struct workload {
	enum workload_id id;
	const char *name;
	const char *exercises;		/* one line: what it exercises */
	const char *help;		/* details, lines ending in "\n" (exact instruction counts) */
	unsigned nparams;
	struct workload_param params[WORKLOAD_MAX_PARAMS];
	const char *ring3_refusal;	/* NULL when it may run at CPL 3, else the reason */
};

extern const struct workload workload_table[WL_NWORKLOADS];

/* The workload called name (a built-in one, else a loaded program), or NULL. */
const struct workload *workload_find(const char *name);

struct workload_args {
	const struct workload *w;
	uint64_t v[WORKLOAD_MAX_PARAMS];	/* parameter values in table order, defaults filled */
	char spec[WORKLOAD_SPEC_MAX];		/* WP_TEXT parameter */
	/* WL_PROGRAM: argv[0] (the program's name) .. argv[argc-1], NUL-separated */
	uint32_t argc;
	char argbuf[WORKLOAD_ARGBUF];
};

/*
 * Parse argv[0..argc) (the words after the workload's name) into *out.
 * Returns 0, or -1 with one reason in err ("loop: N: ... ") for the first
 * bad, missing or surplus argument. *out is untouched on error.
 */
int workload_parse_args(const struct workload *w, int argc, char *const argv[],
			struct workload_args *out, char *err, size_t errlen);

/*
 * The watchdog of unstepped runs (a LAPIC timer tick every 100 ms that
 * polls Ctrl-C and a program's time limit; its instructions count at :k on
 * a Pentium 4): on by default; off for the runs until it is set on again
 * (`--no-watchdog`: a run that never ends then needs a reset).
 */
void workload_set_watchdog(bool on);

/* The ring w runs in when none is asked for: 3 for a user's program, 0 for the rest. */
int workload_default_ring(const struct workload *w);

/* "loop N" style synopsis, with [OPTIONAL] parameters bracketed. */
int workload_synopsis(const struct workload *w, char *buf, size_t n);

/*
 * Exact instruction counts of the loop workload (arch/x86/64/workloads.S,
 * wl_loop): a stepped `loop N` retires WL_LOOP_K * N + WL_LOOP_C
 * instructions (N >= 1), with exactly N - 1 taken and 1 not-taken
 * conditional branch, plus the final ret. The listing in workloads.S shows
 * the derivation; every workload's help text gives its own formula.
 */
#define WL_LOOP_K	3
#define WL_LOOP_C	6

/*
 * A ring-3 run returns through the exit trampoline (arch/x86/user.c,
 * wl_user_exit): its `int 0x80` is fetched and retired at CPL 3, so it is
 * one more instruction under :u (USR) after the workload's own.
 */
#define WL_USER_EXIT_INSTR	1

/* --- running (kernel side, workload/workloads.c) -------------------------------- */

enum workload_status {
	WORKLOAD_OK,
	WORKLOAD_FAULTED,	/* an exception ended it (reported already) */
	WORKLOAD_INTERRUPTED,	/* Ctrl-C while stepping or in a long workload, or a program's
				   time limit (timed_out) */
	WORKLOAD_REFUSED,	/* not started: see error[] */
};

struct workload_result {
	enum workload_status status;
	int fault_vector;		/* WORKLOAD_FAULTED: the vector, else -1 */
	uint8_t cpl, lp;		/* where it ran */
	uint64_t ret;			/* the workload function's return value */
	uint64_t tsc_cycles;		/* TSC from begin to end (includes trap time when stepping) */
	struct step_counts step;	/* when stepping (else 0) */
	/* always: */
	uint64_t synthetic;		/* int 0x81 occurrences delivered to hooks->synthetic */
	bool timed_out;			/* WORKLOAD_INTERRUPTED by a program's time limit, not Ctrl-C */
	uint64_t ticks;			/* watchdog ticks taken during the run (kernel code, :k) */
	unsigned limit_s;		/* timed_out unstepped: the limit it reached, in seconds */
	char error[96];			/* WORKLOAD_REFUSED: the reason */
};

/*
 * Run the workload once at CPL ring (0 or 3), single-stepped when step, on
 * the calling LP. Returns res->status. h may be NULL. One run at a time per
 * LP: the step engine and the ring-3 exit state are per LP.
 */
/* At boot, after the LPs are known: what runs would otherwise allocate (workloads.c). */
void workload_init(void);

int workload_run(const struct workload_args *a, int ring, bool step,
		 const struct workload_hooks *h, struct workload_result *res);

/*
 * Two logical processors (Hyper-Threading). LP0 runs the shell; its sibling
 * (same package and core, other SMT ID) idles in HLT until given work.
 * workload_sibling(): the sibling's LP index, or -1 with a one-line reason.
 * workload_run_lps(): called on LP0; jobs[0] runs on LP0 and jobs[1] on the
 * sibling (a NULL `a` leaves that LP idle). WORKLOAD_TOGETHER wakes the
 * sibling first and then runs LP0's job, so both run at the same time;
 * WORKLOAD_LP1_AFTER starts the sibling's job when LP0's has ended (a
 * deterministic order, for exact cross-thread cascades). Ctrl-C (seen by
 * LP0) stops both. Returns 0 when the jobs ran (each job's res says how),
 * -1 when the sibling's job could not start (jobs[1].res: REFUSED, why).
 * A result's lp is the SMT ID the PMU knows the LP as (T0/T1).
 */
struct workload_job {
	const struct workload_args *a;
	int ring;
	bool step;
	const struct workload_hooks *h;
	struct workload_result res;
};

enum workload_start {
	WORKLOAD_TOGETHER,
	WORKLOAD_LP1_AFTER,
};

int workload_sibling(const char **why);
int workload_run_lps(struct workload_job jobs[2], enum workload_start start);

/*
 * A program's time limits, in seconds: stepped, of stepping before it is
 * stopped as never returning (0: no limit; PROGRAM_STEP_LIMIT_S at boot);
 * unstepped (on the hardware backend, or `run` without --step), of running
 * before the watchdog stops it (1 .. PROGRAM_LIMIT_MAX_S, never unbounded:
 * PROGRAM_TIME_LIMIT_S at boot).
 */
struct program_limits {
	unsigned stepped_s;
	unsigned unstepped_s;
};

void workload_set_limits(const struct program_limits *l);
void workload_get_limits(struct program_limits *l);

/*
 * `programs --timeout SPEC`: SECONDS (the stepped limit, as before) or a
 * comma-separated list of stepped=SECONDS and unstepped=SECONDS, each at
 * most once, in range (numbers as parse_u64 reads them). *out is *now with
 * the limits SPEC names; 0, or -1 (a bad SPEC: *out is *now) - the
 * caller's error names the rules. SPEC is cut at its commas.
 */
int workload_parse_limits(char *spec, const struct program_limits *now,
			  struct program_limits *out);

/*
 * Why a WORKLOAD_INTERRUPTED run stopped, for its error line: Ctrl-C, an
 * unstepped program's time limit (with the limit and the command that
 * raises it), or "still running after N instructions: no return from
 * main?" for a stepped one. Returns buf.
 */
const char *workload_stop_reason(const struct workload_result *r, char *buf, size_t n);


#endif
