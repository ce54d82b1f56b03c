/*
 * cmds.h - the built-in commands' entry points (shared between the shell's
 * command files; not for other modules, which use shell_find/shell_execute).
 */
#ifndef NBPROF_SHELL_CMDS_H
#define NBPROF_SHELL_CMDS_H

#include "shell/shell.h"

int cmd_help(struct shell *sh, int argc, char **argv);
int cmd_cpu(struct shell *sh, int argc, char **argv);
int cmd_mem(struct shell *sh, int argc, char **argv);
int cmd_msr(struct shell *sh, int argc, char **argv);
int cmd_fault(struct shell *sh, int argc, char **argv);
int cmd_reboot(struct shell *sh, int argc, char **argv);
int cmd_poweroff(struct shell *sh, int argc, char **argv);
int cmd_events(struct shell *sh, int argc, char **argv);

/* The profiling commands; each returns -1 when no table slot is left. */
int perf_add_commands(struct shell *sh);		/* stat, pmu, explain (cmd_stat.c) */
int record_add_commands(struct shell *sh);	/* record, report, annotate, script, dump */
int workload_add_commands(struct shell *sh);	/* workloads, run, run-pair */
int program_add_commands(struct shell *sh);	/* programs, upload (cmd_program.c) */
int selftest_add_commands(struct shell *sh);	/* selftest (cmd_selftest.c) */
int bench_add_commands(struct shell *sh);	/* bench (cmd_bench.c) */
int pebs_add_commands(struct shell *sh);	/* pebs (cmd_pebs.c) */

#endif
