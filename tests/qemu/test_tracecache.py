"""test_tracecache.py - the trace cache model (pmu/model/p4_tc.c) fed by stepped fetches and stores.

The expected counts are worked out here from the workload listings
(arch/x86/64/workloads.S and its ia32 twin, which retire the same instructions with
the same uops) and the model's rules (p4_tc.c): a trace line holds at most 6 uop
slots of contiguous instructions and ends after a taken branch; an instruction takes
its core-model uops (p4_core.c: one per operation, one per load, two per store); a
line is looked up by its first instruction, and every lookup that misses is one
BPU_fetch_request TCMISS; a store into bytes a line holds flushes the whole trace cache
(SDM Vol. 3A 11.6) and is one machine_clear SMCLEAR, 30 clocks of CLEAR (the
mispredict's restart, from the store's retirement) and TC_misc FLUSH 2 (the event
counts each flush twice). The memory model, the trace cache with it, is emptied when a
count starts. Runs are at ring 3 and counted at `:u`: a ring-3 run is the body and the
`int` of its exit trampoline (wl_user_exit), a line of its own.

loop N (wl_loop): push (a store: 2 slots), mov, mov, xor and the first add fill one
line (6 slots); sub and the taken jnz a second; the second pass starts at add, where
no line starts: a third line, add, sub, jnz, which every later pass finds; pop and ret
a fourth, the trampoline's int a fifth. 5 misses whatever N >= 3: from the second pass
on, nothing misses. (N = 2: the second pass's jnz falls through, so its line goes on
with pop and ret, 6 slots: 4 misses.)

smc N (wl_smc): push, mov, mov, xor and `movb $imm, %al` fill one line; each iteration
then stores into that movb's immediate, which a line holds (it has just run): a clear
and a flush. Iteration 1: the store starts a line (its predecessor was full), the
clear, then sub and jnz a line. Iteration k > 1: movb starts a line (flushed), the
store joins it, the clear, then sub and jnz a line. The last iteration's jnz falls
through, so its line goes on with mov, pop and ret (6 slots); then the trampoline.
Misses 1 + 2N + 1, clears N.
"""


import pytest

import conftest

BOOT = {"icount": True}

CLEAR_CLOCKS = 30           # p4_core.c: the clear restarts the front end as a mispredict does
FLUSH_COUNTS = 2            # TC_misc FLUSH counts each flush twice (PMU reference 4.1)
LOOP_LINES = 5              # the docstring's five lines of a ring-3 `loop N`, N >= 3


def stat(nb, args):
    out = nb.cmd("stat --ring 3 " + args, timeout=300)
    assert "error" not in out, out
    return conftest.stat_rows(out), out


count = conftest.stat_count


@pytest.mark.parametrize("n, lines", [(2, LOOP_LINES - 1), (3, LOOP_LINES), (1000, LOOP_LINES)])
def test_cold_loop_misses_its_lines_once(nb, n, lines):
    rows, _ = stat(nb, "-e BPU_fetch_request:TCMISS:u -e machine_clear:SMCLEAR:u loop %d" % n)
    assert count(rows, "BPU_fetch_request") == lines
    assert count(rows, "machine_clear") == 0


def test_later_passes_are_delivered(nb):
    """Build mode lasts only while the cold lines are built: the clockticks of the
    extra 1000 passes are all in deliver mode (DI: LP0 delivers, LP1 inactive); every
    clocktick is in one mode or the other."""
    runs = {}
    for n in (1000, 2000):
        rows, out = stat(nb, "-e TC_deliver_mode:DI:u -e TC_deliver_mode:BI:u "
                             "-e global_power_events:RUNNING:u loop %d" % n)
        di, bi = count(rows, "TC_deliver_mode:DI"), count(rows, "TC_deliver_mode:BI")
        clk = count(rows, "global_power_events")
        assert di + bi == clk, out
        assert bi > 0, out
        runs[n] = (di, bi, clk)
    assert runs[2000][1] == runs[1000][1]
    assert runs[2000][0] - runs[1000][0] == runs[2000][2] - runs[1000][2]


def test_built_uops_come_from_the_build_path(nb):
    """uop_queue_writes FROM_TC_BUILD: the uops of the built instructions, the same
    whatever N; FROM_TC_DELIVER grows by the extra passes' 3 uops each."""
    runs = {}
    for n in (1000, 2000):
        rows, _ = stat(nb, "-e uop_queue_writes:FROM_TC_BUILD:u "
                           "-e uop_queue_writes:FROM_TC_DELIVER:u loop %d" % n)
        runs[n] = (count(rows, "uop_queue_writes:FROM_TC_BUILD"),
                   count(rows, "uop_queue_writes:FROM_TC_DELIVER"))
    assert runs[1000][0] == runs[2000][0] > 0
    assert runs[2000][1] - runs[1000][1] == 3 * 1000


@pytest.mark.parametrize("n", [1, 10, 300])
def test_each_write_into_live_code_clears_the_machine(nb, n):
    rows, out = stat(nb, "-e machine_clear:SMCLEAR:u -e TC_misc:FLUSH:u "
                         "-e BPU_fetch_request:TCMISS:u -e machine_clear:CLEAR:u smc %d" % n)
    assert count(rows, "machine_clear:SMCLEAR") == n, out
    assert count(rows, "TC_misc:FLUSH") == FLUSH_COUNTS * n, out
    assert count(rows, "BPU_fetch_request") == 2 * n + 2, out
    assert count(rows, "machine_clear:CLEAR") == CLEAR_CLOCKS * n, out


def test_clear_with_edge_counts_occurrences(nb):
    """The optimization manual's metric: CLEAR with Edge counts clears, not cycles.
    MOCLEAR needs another agent's store into a line loaded speculatively, which a
    stepped run never has: 0."""
    rows, out = stat(nb, "-e machine_clear:CLEAR:edge:u -e machine_clear:MOCLEAR:u smc 50")
    assert count(rows, "machine_clear:CLEAR") == 50, out
    assert count(rows, "machine_clear:MOCLEAR") == 0, out


def test_clears_cost_clockticks(nb):
    """Each further iteration of smc pays at least its clear and the rebuild of its two
    lines from L2 (p4_core.c: 28 clocks load-to-use on Prescott-class 0F_04H)."""
    clk = {}
    for n in (100, 200):
        rows, _ = stat(nb, "-e global_power_events:RUNNING:u smc %d" % n)
        clk[n] = count(rows, "global_power_events")
    assert clk[200] - clk[100] >= 100 * (CLEAR_CLOCKS + 2 * 28)
