"""test_accuracy.py - what the step engine's TSC timing measures, under QEMU -icount.

The model's clockticks come from the cost model by default (p4_cost.c,
hand-computed counts in test_memory.py); `pmu clock tsc` feeds the TSC
cycles the step engine measured instead, and that is what this module
checks (every test runs with it).
With `-icount shift=7,sleep=off` (tools/qemu.py --icount) QEMU's TSC is its
virtual clock, which advances 2^7 = 128 per guest instruction. The stepper
(arch/x86/step.c) times each stepped instruction from the TSC read right
before the previous #DB's IRETQ to the TSC read first thing in the next #DB,
and subtracts the trap path's own cost, calibrated per LP by stepping nops.
That cost is a fixed number of guest instructions, so under icount every
stepped instruction must come out at exactly one guest instruction:
TSC_PER_INSN clockticks, no more (the trap path leaking back in adds at
least one instruction, 128, per step) and no less. The band is therefore
exact. Instruction counts come from the workload listings
(arch/x86/64/workloads.S, as in test_stat.py):
  loop N        3N + 6
  calls D N     6 + N (8D + 2) + 4
  memwalk S T P 6 + P (3 + 5 ceil(S / T))
  copy N        9 instructions; its REP MOVSB traps once per byte copied (SDM
                Vol. 3A 17.3.1.4), and QEMU counts each iteration as one
                instruction, so N more bytes cost N x 128 more.
The compare-mode spec `:cmp=15:compl` counts every cycle of the model's
clock (a cycle's event input is at most 15, PMU reference 9.12), which is
what the model ticks: one clock for the core, however many LPs step.

The machine has Hyper-Threading for the paired runs; LP1 idles in HLT
while LP0 runs alone, which adds no guest instructions to LP0's TSC.

The model steps the kernel's own code in the counting window too (arch/x86/
step.h), and a kernel step's time includes the unstepped code that stands
for one instruction (the model's register accesses): the exact band holds
for the workload's own steps, which stat reports apart ("real: N stepped
instructions, B branches, C TSC cycles"); the counts hold those and the
kernel's.
"""

import re

import pytest

BOOT = {"icount": True, "smp_ht": True}

TSC_PER_INSN = 128      # -icount shift=7
CYCLES = "instr_retired:cmp=15:compl"
ROW = re.compile(r"^\s*(\d+)\s+(\S+)\s+counter \d+ ", re.M)
IPC = re.compile(r"^IPC (\d+)\.(\d{6}) ", re.M)
FRAME = re.compile(r"^\t\s*[0-9a-f]+ (\S+?)(?:\+0x([0-9a-f]+))? \(", re.M)


def stat(nb, args):
    """{spec as printed: count} and the whole output."""
    out = nb.cmd("stat " + args, timeout=180)
    assert "error" not in out, out
    return {m.group(2): int(m.group(1)) for m in ROW.finditer(out)}, out


REAL = re.compile(r"real: (\d+) stepped instructions, (\d+) branches, (\d+) TSC cycles")
TICKS = re.compile(r"^timer ticks on LP0 in the last count \(model, stepped\): (\d+), (\d+) instructions ", re.M)
WINDOW_CYCLES = re.compile(r"^model: kernel code in the counting window: \d+ stepped instructions, "
                           r"\d+ branches, (\d+) cycles", re.M)


def workload(out):
    """The workload's own stepped instructions and TSC cycles, as stat reports them."""
    m = REAL.search(out)
    assert m, out
    return int(m.group(3)), int(m.group(1))


def clk_instr(rows):
    clk = [v for k, v in rows.items() if k.startswith("global_power_events:RUNNING")]
    ins = [v for k, v in rows.items() if k.startswith("instr_retired") and ":cmp=" not in k]
    assert len(clk) == 1 and len(ins) == 1, rows
    return clk[0], ins[0]


def one(rows, prefix):
    if prefix == CYCLES:
        hits = [v for k, v in rows.items() if k.startswith("instr_retired") and ":cmp=15:compl" in k]
    else:
        hits = [v for k, v in rows.items() if k == prefix or (k.startswith(prefix) and
                                                              ":t" not in k[len(prefix):])]
    assert len(hits) == 1, (prefix, rows)
    return hits[0]


@pytest.fixture(autouse=True)
def plain_model(nb):
    assert "backend: model" in nb.cmd("pmu backend model 0F_04")
    nb.cmd("pmu pmi fixed")
    assert "model clockticks: tsc" in nb.cmd("pmu clock tsc")


@pytest.mark.parametrize("ring", [0, 3])
def test_loop_costs_one_guest_instruction_per_instruction(nb, ring):
    for n in (1, 10, 1000):
        rows, out = stat(nb, "--ring %d loop %d" % (ring, n))
        clk, ins = workload(out)
        assert ins == 3 * n + 6
        assert clk == TSC_PER_INSN * ins, (n, clk, ins, clk / ins)
        # the counts hold the workload's and the kernel's window: more, never less
        kclk, kins = clk_instr(rows)
        assert kins > ins and kclk > clk, out


def test_other_workloads_exact(nb):
    for args, n in (("calls 3 10", 6 + 10 * (8 * 3 + 2) + 4),
                    ("--ring 3 calls 2 5", 6 + 5 * (8 * 2 + 2) + 4),
                    ("memwalk 4096 64 2", 6 + 2 * (3 + 5 * 64)),
                    ("empty", 1),
                    ("--ring 3 empty", 1)):
        clk, ins = workload(stat(nb, args)[1])
        assert ins == n, args
        assert clk == TSC_PER_INSN * n, (args, clk, ins)


def test_branch_workload_exact(nb):
    clk, ins = workload(stat(nb, "branch random 300 12345")[1])
    # 6 + n (11 + 4) + (not taken) + 2, the not-taken count between 0 and n
    assert 6 + 300 * 15 + 2 <= ins <= 6 + 300 * 16 + 2
    assert clk == TSC_PER_INSN * ins


def test_rep_iterations_cost_one_instruction_each(nb):
    a, ia = workload(stat(nb, "copy 100")[1])
    b, ib = workload(stat(nb, "copy 300")[1])
    assert ia == ib == 9
    assert b - a == 200 * TSC_PER_INSN


def test_trap_path_is_not_in_the_clock(nb):
    """The same run's wall-clock TSC (what the old per-handler timing measured) is many times
    the model's clockticks: the #DB path alone is dozens of guest instructions per step."""
    rows, out = stat(nb, "loop 1000")
    clk, ins = workload(out)
    assert ins == 3006
    run = nb.cmd("run --step loop 1000")
    work = re.search(r"^workload cycles: (\d+) ", run, re.M)
    wall = re.search(r"^tsc cycles: (\d+)$", run, re.M)
    assert work and wall, run
    assert int(work.group(1)) == clk
    assert int(wall.group(1)) > 10 * clk, run


def test_ipc_is_printed_from_the_counts(nb):
    rows, out = stat(nb, "--ring 3 -e global_power_events:u -e instr_retired:u loop 1000")
    clk, ins = clk_instr(rows)
    m = IPC.search(out)
    assert m, out
    micro = int(m.group(1)) * 1000000 + int(m.group(2))
    assert micro == ins * 1000000 // clk
    # the workload's 3006 at 128 TSC cycles each, and the exit trampoline's int 0x80,
    # timed up to the gate's handler: IPC just under 1/128 = 0.007812
    assert 0 < micro <= 1000000 // TSC_PER_INSN


def test_ipc_ignores_a_compare_mode_instr_retired(nb):
    # With Compare set, instr_retired counts cycles that meet the threshold,
    # not instructions (CCCR compare, PMU reference 2.2): no IPC from it.
    _, out = stat(nb, "-e instr_retired:cmp=0 -e global_power_events loop 100")
    assert not IPC.search(out), out


def test_compare_mode_cycles_follow_the_clock(nb):
    rows, out = stat(nb, "-e %s -e global_power_events loop 1000" % CYCLES)
    # every cycle of the clock, the kernel's window included; the two counters are enabled
    # one after the other, so they differ by what lies between their enabling writes
    cyc, clk = one(rows, CYCLES), one(rows, "global_power_events")
    assert cyc > TSC_PER_INSN * 3006 and clk > TSC_PER_INSN * 3006
    assert abs(cyc - clk) < TSC_PER_INSN * 3006 // 10, (cyc, clk)


def test_staggered_pair_ticks_one_after_the_other(nb):
    rows, _ = stat(nb, "-e %s -e global_power_events:t0 -e global_power_events:t1 "
                       "--stagger --pair loop 1000 -- loop 2000" % CYCLES)
    t0 = one(rows, "global_power_events:RUNNING:u:k:t0")
    t1 = one(rows, "global_power_events:RUNNING:u:k:t1")
    assert t0 > TSC_PER_INSN * 3006
    assert t1 > TSC_PER_INSN * 6006
    # one after the other, but each LP's counting window (its kernel code) reaches into
    # the other's run: between the longer and the sum
    assert max(t0, t1) <= one(rows, CYCLES) <= t0 + t1


def test_paired_run_ticks_shared_time_once(nb):
    """Both LPs step at once: the core's clock must not run at the sum of the two.

    LP0 runs `halt`, whose HLTs idle its vCPU, and QEMU (-icount runs the vCPUs in
    turns) runs LP1's loop in the meantime: LP1's cycles lie inside LP0's run. The
    core's clock then advances by about the longer of the two, not by the sum
    (the old per-LP ticking gave exactly t0 + t1). LP1 can start at the earliest
    when LP0 first halts, i.e. after at most all 154 of halt's instructions and
    the wake-up ticks LP0 stepped before it (kernel code the model counts: at
    most all of the count's ticks, as `pmu` gives them).
    The three counters start and stop one after the other, with the kernel's
    code in the counting window between their writes: they may differ by at
    most the window's cycles (stat's `model:` line)."""
    for _ in range(2):
        rows, out = stat(nb, "-e %s -e global_power_events:t0 -e global_power_events:t1 "
                             "--pair halt 100000 -- loop 1000" % CYCLES)
        t0 = one(rows, "global_power_events:RUNNING:u:k:t0")
        t1 = one(rows, "global_power_events:RUNNING:u:k:t1")
        cyc = one(rows, CYCLES)
        m = WINDOW_CYCLES.search(out)
        assert m, out
        win = int(m.group(1))
        ticks = TICKS.search(nb.cmd("pmu"))
        before = 154 + (int(ticks.group(1)) * int(ticks.group(2)) if ticks else 0)
        assert t1 >= TSC_PER_INSN * 3006
        assert max(t0, t1) - win <= cyc <= max(t0, t1) + TSC_PER_INSN * before + win, \
            (cyc, t0, t1, win, before)
        assert cyc < t0 + t1
    # two loops at once: however QEMU interleaves them, between the longer and the sum
    rows, _ = stat(nb, "-e %s -e global_power_events:t0 -e global_power_events:t1 "
                       "--pair loop 3000 -- loop 3000" % CYCLES)
    t0 = one(rows, "global_power_events:RUNNING:u:k:t0")
    t1 = one(rows, "global_power_events:RUNNING:u:k:t1")
    assert max(t0, t1) <= one(rows, CYCLES) <= t0 + t1


def test_a_paired_run_counts_alike_whatever_ran_before(nb):
    """Each LP starts a run on the core's clock (prof/backend/model.c model_run_begin).

    A pair run in which LP1 ran further than LP0 used to leave LP0 behind the core's
    clock; the next run's first LP0 cycles then filled that gap without moving the
    clock, and its cycles counter came out below LP0's own (by 345216 of 1659904
    before the fix, about LP1's lead). LP0's cycles all lie within the core's: the
    counters start one after the other a few instructions apart, so the cycles
    counter may trail LP0's RUNNING count by those alone."""
    def run(args):
        rows, _ = stat(nb, "-e %s -e global_power_events:t0 -e global_power_events:t1 %s"
                           % (CYCLES, args))
        return (one(rows, CYCLES), one(rows, "global_power_events:RUNNING:u:k:t0"),
                one(rows, "global_power_events:RUNNING:u:k:t1"))

    long0 = "--pair loop 3000 -- loop 1"
    for before in (long0, "--pair loop 1 -- loop 3000"):	# LP0 ahead, then LP1 ahead
        _, b0, b1 = run(before)
        cyc, t0, t1 = run(long0)
        assert t0 > t1 and (before == long0 or b1 > b0), (before, b0, b1, t0, t1)
        assert cyc >= t0 - TSC_PER_INSN * 8, (before, cyc, t0, t1)
        assert cyc < t0 + t1


def test_the_model_ticks_in_the_workloads_time(nb):
    """The erratum path's polling tick (prof/record.c, RECORD_POLL_HZ = 10000) comes in the
    model's time: each 100 us of TSC the workload's steps took, as step_take times them
    (arch/x86/step.h step_tick_every). Under -icount a step is one guest instruction, 128
    TSC cycles, so a ring-3 `loop 30000` (90006 instructions) takes 90006 x 128 TSC cycles,
    and the ticks are that over the TSC's 100 us (`cpu` gives its rate), rounded down;
    each polls, and two polls more come at the workload's last step and after the stop."""
    mhz = float(re.search(r"^TSC\s+(\d+\.\d+) MHz$", nb.cmd("cpu"), re.M).group(1))
    period = mhz * 1e6 / 10000
    assert "backend: model" in nb.cmd("pmu backend model 0F_02:9")
    out = nb.cmd("record --throttle 100 --ring 3 -e instr_retired:u -e instr_retired:u:after=100 "
                 "-c 500 loop 30000", timeout=300)
    assert "error" not in out and "polled" in out, out
    polls = int(re.search(r"^PMIs: \d+ .*, polls (\d+), late \d+$", out, re.M).group(1))
    ticks = TICKS.search(nb.cmd("pmu"))
    assert ticks, out
    want = 90006 * TSC_PER_INSN / period
    assert want - int(want) > 0.05        # not at a rounding edge (the TSC's rate is to 1 kHz)
    assert int(ticks.group(1)) == int(want), (ticks.group(0), want)
    assert polls == int(want) + 2, (polls, want)


def script_chains(nb):
    out = nb.cmd("script", timeout=60)
    return [FRAME.findall(block) for block in out.split("\n\n") if block.strip()]


def test_ring3_chain_ends_at_the_exit_trampoline(nb):
    out = nb.cmd("record -g --throttle 100 -e instr_retired:u -c 37 --ring 3 calls 2 20", timeout=120)
    assert "error" not in out and "exception" not in out, out
    chains = script_chains(nb)
    assert chains
    for frames in chains:
        names = [name for name, _ in frames]
        # the leaf is the sample's IP; callers follow; user_call's return address ends it,
        # looked up at address - 1 (the call site convention) inside the trampoline
        assert frames[-1] == ("wl_user_trampoline", "1"), frames
        assert all(n.startswith("wl_") for n in names), frames


def test_ring0_chain_walks_on_into_the_kernel(nb):
    # at :k the overflow handler's own instructions count too: a period above them
    out = nb.cmd("record -g --throttle 100 -e instr_retired -c 1999 calls 2 400", timeout=120)
    assert "error" not in out, out
    # the kernel's own code is sampled too (its window counts at CPL 0): the workload's
    # samples are those whose leaf is workload code
    chains = [c for c in script_chains(nb) if c and c[0][0].startswith("wl_")]
    assert chains
    for frames in chains:
        names = [name for name, _ in frames]
        assert "wl_call_ring0" in names and "workload_guarded" in names, frames
        assert "wl_user_trampoline" not in names
