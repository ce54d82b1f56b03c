"""test_stat.py - `stat`, `pmu` and `explain` on the model backend.

Every expected count is derived from the workload definitions (prof/
workload.c help texts, arch/x86/64/workloads.S listings), the manual and the
PMU reference - never from a run:
  loop N      3N + 6 instructions; jnz taken N-1 times, not taken once; one ret
  empty       1 instruction (ret)
  branch P N  pattern jnz taken N (taken), 0 (nottaken), N/2 (alternate);
              closing jnz N-1 taken, 1 not; one ret
  calls D N   N*D calls and N*D rets (+1 final ret); jz: N*(D-1) not taken,
              N taken; closing jnz N-1 taken, 1 not
  indirect N  9N + 8 instructions; N indirect calls (FF /2), N + 1 rets, N
              indirect jumps (FF /4), all taken; closing jnz N-1 taken, 1 not
  synthetic S N   3N + 5 instructions, N occurrences of S
The model counts every branch as predicted (prof/perf.c): MMTP when taken,
MMNP when not. PMI timing: the interrupt comes on the event after the
overflow (SDM CCCR text, PMU reference 2.2), so with counters reloaded to
2^40 - P an interrupt arrives every P + 1 events.

The kernel's own code counts too, as on a Pentium 4 (the model steps it from
the start of a counting run to its end, arch/x86/step.h): a `:k` count (and
the default `:u:k`) holds the runner, argument parsing and the ring
transitions around the workload, whose length no listing gives. So an exact
count of the workload alone is taken at ring 3 under `:u`, where it adds the
one instruction of the exit trampoline that runs at CPL 3: its `int 0x80`
(arch/x86/64/workloads.S wl_user_exit), a branch the model reports as not taken
(EXIT below). Counts that include the kernel are checked against what the
model says it stepped, and for being the same on every run.
"""

import re

import pytest


from conftest import clean, kernel_bits

ROW = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s+(\S+)\s+counter (\d+) \((\S+)\) ESCR (\S+) (.*)$")
ROW_R = re.compile(r"^\s*(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+counter (\d+) ", re.M)
IRQ = re.compile(r"overflow interrupts: (\d+)")


EXIT = 1                # wl_user_exit's int 0x80, at CPL 3
KERNEL = re.compile(r"kernel code in the counting window: (\d+) stepped instructions, "
                    r"(\d+) branches, (\d+) cycles")
REAL = re.compile(r"real: (\d+) stepped instructions, (\d+) branches, (\d+) ")


def loop_instr(n):
    return 3 * n + 6


def stat(nb, args):
    """Run stat; the list of (count, spec, counter, rest) rows and the whole output."""
    out = nb.cmd("stat " + args, timeout=120)
    assert "error" not in out, out
    rows = []
    for line in out.splitlines():
        m = ROW.match(line)
        if m:
            rows.append((int(m.group(1)), m.group(2), int(m.group(3)), m.group(6)))
    return rows, out


def counts(nb, args):
    return [r[0] for r in stat(nb, args)[0]]


def error(nb, line):
    out = nb.cmd(line, timeout=60)
    lines = [l for l in out.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), out
    return lines[0]


@pytest.fixture(autouse=True)
def plain_model(nb):
    """Each test starts on the boot-time model (0F_04, no HT) with fixed PMIs."""
    assert "backend: model" in nb.cmd("pmu backend model 0F_04 noht")
    nb.cmd("pmu pmi fixed")
    nb.cmd("pmu trace off")


def test_boot_chooses_model_and_says_why(nb):
    m = re.search(r"^pmu: backend (\S+) (\S+) (with|without) HT: (.*)$", nb.transcript, re.M)
    assert m, nb.transcript
    assert m.group(1) == "model" and m.group(2) == "0F_04H"
    # QEMU leaves IA32_MISC_ENABLE bit 7 clear: the hardware probe must not
    # have programmed a PMU register at all (it is not there, PMU reference 1)
    assert "bit 7" in m.group(4) and "no PMU register touched" in m.group(4)
    assert "probe:" not in m.group(4)
    out = nb.cmd("pmu")
    assert out.startswith("backend: model")
    assert "0F_04H" in out and "extended cascading yes" in out
    assert "counters in use: none" in out


def test_pmu_backend_hw_is_refused_with_reason(nb):
    line = error(nb, "pmu backend hw")
    assert "bit 7" in line and "no PMU register touched" in line
    assert "backend: model" in nb.cmd("pmu")


@pytest.mark.parametrize("n", [1, 10, 1000, 5000])
def test_loop_retires_3n_plus_6(nb, n):
    rows, out = stat(nb, "--ring 3 -e instr_retired:u loop %d" % n)
    assert [r[0] for r in rows] == [loop_instr(n) + EXIT]
    assert "[real: stepped]" in rows[0][3]
    assert int(REAL.search(out).group(1)) == loop_instr(n)


def test_kernel_code_counts_under_k_the_same_every_run(nb):
    """`stat -e instr_retired:k --ring 3 loop 1000` counts the kernel's window, not 0: the
    ring-3 entry after the counting gate opens and the exit gate up to its shut (the runner's
    set-up and the stop are outside it: at most 64 instructions, docs/guide/counting.md), far
    less than the model stepped, and the same on every run (the first of a boot included:
    what one run would allocate is allocated at boot, workload/workloads.c workload_init)."""
    seen = set()
    for _ in range(3):
        rows, out = stat(nb, "-e instr_retired:k --ring 3 loop 1000")
        k = rows[0][0]
        stepped = int(KERNEL.search(out).group(1))
        assert 10 < k <= 64 and k < stepped // 10, out
        # its own line, which says it is the model's stepping; with one counter programmed
        # the share while it ran is exactly what :k counted (the exit's int 0x80: CPL 3)
        m = re.search(r"^model: kernel code in the counting window: \d+ stepped instructions, "
                      r"\d+ branches, \d+ cycles \(the model steps it as a P4 counts it\); while "
                      r"a counter ran: LP0 (\d+) at CPL 0, (\d+) at CPL 3$", out, re.M)
        assert m and (int(m.group(1)), int(m.group(2))) == (k, EXIT), out
        seen.add(k)
    assert len(seen) == 1, seen
    # at ring 0 the workload's own instructions are kernel instructions too
    rows, out = stat(nb, "-e instr_retired:u -e instr_retired:k loop 1000")
    assert rows[0][0] == 0 and rows[1][0] > loop_instr(1000), out


def test_the_counting_window_is_the_gate(nb):
    """The counters are armed before the workload's runner and opened by it right before
    the workload, shut first thing after it (prof/perf.h perf_count_arm): `empty` (one
    instruction) at the default :u:k counts at most 32 at ring 0, and the ring-3 entry and
    exit gates at most 64 kernel instructions (docs/guide/counting.md lists them)."""
    rows, out = stat(nb, "-e instr_retired empty")
    assert 1 < rows[0][0] <= 32, out
    rows, out = stat(nb, "--ring 3 -e instr_retired:k empty")
    assert 1 < rows[0][0] <= 64, out


def test_default_events_and_ipc(nb, firmware):
    rows, out = stat(nb, "loop 100")
    assert [r[1].split(":")[0] for r in rows] == ["global_power_events", "instr_retired"]
    # the kernel's window counts too (:u:k): more than the workload, at most all it stepped
    kernel = int(KERNEL.search(out).group(1))
    assert loop_instr(100) < rows[1][0] <= loop_instr(100) + kernel
    assert "[cost model]" in rows[0][3]
    assert re.search(r"^IPC \d+\.\d{6} ", out, re.M)
    assert "backend: model 0F_04H" in out
    assert "real: %d stepped instructions" % loop_instr(100) in out
    assert "synthetic: none" in out
    # the workload's clockticks from the core model (p4_core.c): wl_loop's iteration (add,
    # sub, jnz) waits for the sub's one-clock counter on the Prescott-class core and
    # retires its three uops in that clock, so 100 more iterations are 100 more clockticks
    m = re.search(r"(\d+) clockticks from the cost model", out)
    _, out200 = stat(nb, "loop 200")
    m200 = re.search(r"(\d+) clockticks from the cost model", out200)
    assert int(m200.group(1)) - int(m.group(1)) == 100, (out, out200)
    rows, out = stat(nb, "--ring 3 -e global_power_events:u -e instr_retired:u loop 100")
    m = re.search(r"(\d+) clockticks from the cost model", out)
    assert rows[1][0] == loop_instr(100) + EXIT
    # at ring 3 the exit trampoline's int 0x80 adds its fetch from memory, which holds the
    # front end 375 clocks (Prescott's memory load-to-use), and a few clocks of its page's
    # walk and its own work that do not overlap the workload's tail (7 on the x86-64
    # kernel, 31 on the ia32 one, whose exit path is longer)
    extra = rows[0][0] - int(m.group(1))
    assert 375 <= extra <= 375 + 40, out


@pytest.mark.parametrize("ring", [0, 3])
def test_privilege_filters(nb, ring):
    rows, out = stat(nb, "--ring %d -e instr_retired:u -e instr_retired:k loop 50" % ring)
    u, k = rows[0][0], rows[1][0]
    if ring == 3:
        assert u == loop_instr(50) + EXIT and 0 < k, out
    else:
        assert u == 0 and k > loop_instr(50), out


# SDM Table 18-66 with LP0 running and LP1 not started: a TS event on T0
# counts exactly when T0_OS (CPL 0) or T0_USR (CPL 3) is set; the T1 bits
# have no effect on T0's events, so T1-only cells count zero.
PRIV = ["-", "u", "k", "uk"]


@pytest.mark.parametrize("t0", PRIV)
@pytest.mark.parametrize("t1", PRIV)
def test_table_18_66_cells_for_lp0(nb, t0, t1):
    assert "backend: model" in nb.cmd("pmu backend model 0F_04 ht")
    # at ring 3: the workload (and its exit) under USR, the kernel's window under OS
    rows, out = stat(nb, "--ring 3 -e instr_retired:t0=%s:t1=%s loop 10" % (t0, t1))
    kernel = int(KERNEL.search(out).group(1))
    got = rows[0][0]
    if t0 == "uk":
        assert loop_instr(10) + EXIT < got <= loop_instr(10) + EXIT + kernel, (t0, t1, out)
    elif t0 == "u":
        assert got == loop_instr(10) + EXIT, (t0, t1, out)
    elif t0 == "k":
        assert 0 < got <= kernel, (t0, t1, out)
    else:
        assert got == 0, (t0, t1, out)


def test_t1_bits_need_hyper_threading(nb):
    line = error(nb, "stat -e instr_retired:t1=u loop 1")
    assert "Hyper-Threading" in line


@pytest.mark.parametrize("pattern,n,taken", [("taken", 20, 20), ("nottaken", 20, 0),
                                             ("alternate", 21, 10)])
def test_branch_pattern_counts(nb, pattern, n, taken):
    # by direction, predicted (P) or mispredicted (M) by the core model's predictor
    rows, _ = stat(nb, "--ring 3 -e branch_retired:MMTP:MMTM:u -e branch_retired:MMNP:MMNM:u "
                       "-e retired_branch_type:CONDITIONAL:u -e retired_branch_type:RETURN:u "
                       "branch %s %d" % (pattern, n))
    mmtp, mmnp, cond, ret = [r[0] for r in rows]
    assert mmtp == taken + (n - 1) + 1          # pattern + closing jnz + ret
    assert mmnp == (n - taken) + 1 + EXIT
    assert cond == 2 * n
    assert ret == 1


def test_call_chain_branch_types(nb):
    d, n = 4, 6
    mmtp, mmnp, call, ret = counts(nb, "--ring 3 -e branch_retired:MMTP:MMTM:u "
                                       "-e branch_retired:MMNP:MMNM:u "
                                       "-e retired_branch_type:CALL:u -e retired_branch_type:RETURN:u "
                                       "calls %d %d" % (d, n))
    assert call == n * d
    assert ret == n * d + 1
    assert mmnp == n * (d - 1) + 1 + EXIT
    assert mmtp == n * d + (n * d + 1) + n + (n - 1)


@pytest.mark.parametrize("n,after", [(100, 1), (1000, 100), (1000, 3006)])
def test_cascade_starts_after_nth_event(nb, n, after):
    rows, out = stat(nb, "--ring 3 -e instr_retired:u --after %d:instr_retired:u loop %d" % (after, n))
    assert [r[0] for r in rows] == [loop_instr(n) + EXIT, loop_instr(n) + EXIT - after]
    assert "starter" in rows[0][3] and "counts after #1" in rows[1][3]
    # 0F_04 has extended cascading (SDM 18.15.5.7) and a cascade starter is placed on
    # counters 16/17 first (pmu/p4_alloc.h): CASCNT5INTO4 / CASCNT4INTO5, the IQ block
    assert rows[0][2] in (16, 17) and 12 <= rows[1][2] <= 17, rows
    assert "CASCNT%dINTO%d" % (rows[0][2] - 12, rows[1][2] - 12) in rows[1][3], rows


def test_cascade_spec_form_and_bit30_on_model_without_extended(nb):
    assert "backend: model" in nb.cmd("pmu backend model 0F_01")   # no bit 11 (SDM 18.15.5.7)
    rows, _ = stat(nb, "--ring 3 -e instr_retired:u -e instr_retired:u:after=200 loop 300")
    assert [r[0] for r in rows] == [loop_instr(300) + EXIT, loop_instr(300) + EXIT - 200]
    assert "bit 30 cascade" in rows[1][3]
    # SDM 18.15.5.6: bit-30 pairs 12<->14, 13<->15, 14->16, 15->17
    assert (rows[0][2], rows[1][2]) in [(12, 14), (14, 12), (13, 15), (15, 13), (14, 16), (15, 17)]


def test_cascade_without_pmi_on_erratum_part(nb):
    assert "backend: model" in nb.cmd("pmu backend model 0F_02")
    rows, _ = stat(nb, "--ring 3 -e instr_retired:u --after 50:instr_retired:u loop 100")
    assert [r[0] for r in rows] == [loop_instr(100) + EXIT, loop_instr(100) + EXIT - 50]
    assert "40 bits only" in rows[1][3]


def test_cascade_across_blocks_is_refused(nb):
    # global_power_events counts on BPU counters 0-3, instr_retired on IQ 12-17
    line = error(nb, "stat -e global_power_events --after 10:instr_retired loop 10")
    assert "cascad" in line and "#1" in line and "#2" in line


@pytest.mark.parametrize("mode", ["fixed", "nmi"])
@pytest.mark.parametrize("preset,n", [(0xFFFFFFFF00, 1000), (0xFFFFFFFFF0, 100)])
def test_preset_wraps_and_64bit_total_is_exact(nb, mode, preset, n):
    nb.cmd("pmu pmi " + mode)
    period = (1 << 40) - preset
    rows, out = stat(nb, "--ring 3 --preset %#x -e instr_retired:u loop %d" % (preset, n))
    assert rows[0][0] == loop_instr(n) + EXIT
    assert int(IRQ.search(out).group(1)) == (loop_instr(n) + EXIT) // (period + 1)
    pmu = nb.cmd("pmu")
    assert re.search(r"late 0\b", pmu), pmu


def test_repeats_and_baseline(nb):
    out = nb.cmd("stat -r 5 --baseline --ring 3 -e instr_retired:u loop 20", timeout=120)
    m = ROW_R.search(out)
    assert m, out
    # stepped counts are exact: every statistic is the same, minus empty's 1 (both runs
    # end with the same exit trampoline)
    assert [m.group(i) for i in range(1, 5)] == [str(loop_instr(20) - 1)] * 4
    assert "5 runs" in out
    # with the kernel (:k) the baseline cannot cancel it: the kernel parses "20" and
    # runs loop's set-up, which empty has not; still the same on every run
    out = nb.cmd("stat -r 3 --baseline -e instr_retired loop 20", timeout=120)
    m = ROW_R.search(out)
    assert m and m.group(1) == m.group(4) and int(m.group(1)) >= loop_instr(20) - 1, out


def test_a_ring0_gate_counts_as_a_ring3_one(nb, firmware):
    """`synthetic` calls its gate (int 0x81) once an occurrence. The gate clears TF from
    either ring, and the model steps it from its stub to its IRET at CPL 0 either way (a
    debug-register breakpoint on the stub, arch/x86/step.c step_bp_gates), as a Pentium 4
    counts it: each occurrence adds the same kernel instructions at ring 0 as at ring 3,
    plus the loop's own three (int, sub, jnz), kernel instructions at ring 0. Before the
    ring-0 gate was stepped, an occurrence added those three alone.
    The 32-bit isr_common (arch/x86/32/entry.S) runs 4 instructions more from ring 3
    than from ring 0: loading GS is 4 against ring 0's check of 5, the interrupted
    stack's two fields 7 against 6, written back 6 against 2 (its test and branch)."""
    def per(ring):
        a, = counts(nb, "--ring %d -e instr_retired:k synthetic resource_stall 10" % ring)
        b, = counts(nb, "--ring %d -e instr_retired:k synthetic resource_stall 20" % ring)
        assert (b - a) % 10 == 0, (ring, a, b)
        return (b - a) // 10

    gate = per(3) - (4 if kernel_bits(firmware) == 32 else 0)
    assert gate > 20, gate      # stub, dispatcher, the model's callback, IRET
    assert per(0) == gate + 3


def test_synthetic_input_is_marked(nb):
    rows, out = stat(nb, "--ring 3 -e replay_event:NBOGUS:u -e instr_retired:u "
                         "synthetic replay_event:NBOGUS 7")
    assert rows[0][0] == 7 and "[synthetic]" in rows[0][3]
    assert rows[1][0] == 3 * 7 + 5 + EXIT and "[real: stepped]" in rows[1][3]
    assert "synthetic: 7 x replay_event:NBOGUS" in out


def test_synthetic_input_to_an_event_with_a_real_source_is_marked(nb):
    # synthetic S N steps 3N + 5 instructions and emits N instr_retired:NBOGUSNTAG, which the
    # default instr_retired mask (NBOGUSNTAG, NBOGUSTAG) also counts: 4N + 5, half-synthetic
    rows, out = stat(nb, "--ring 3 -e instr_retired:u synthetic instr_retired:NBOGUSNTAG 5")
    assert rows[0][0] == 3 * 5 + 5 + 5 + EXIT
    assert "[real: stepped + synthetic]" in rows[0][3], out
    assert "synthetic: 5 x instr_retired:NBOGUSNTAG" in out


def test_synthetic_spec_is_checked_before_running(nb):
    line = error(nb, "stat -e instr_retired synthetic nosuch 5")
    assert "synthetic" in line and "'nosuch'" in line
    # instr_completed exists on models 3, 4 and 6 only (PMU reference 4): not for a 0F_02 model
    assert "backend: model" in nb.cmd("pmu backend model 0F_02")
    line = error(nb, "stat -e instr_retired synthetic instr_completed:NBOGUS 5")
    assert "synthetic" in line and "instr_completed" in line
    assert "counters in use: none" in nb.cmd("pmu")


@pytest.mark.parametrize("n", [10, 1000])
def test_instr_completed_counts_each_stepped_instruction(nb, n):
    # 0F_04 has instr_completed (PMU reference 4); the model feeds NBOGUS once per retired
    # (stepped) instruction, like instr_retired's NBOGUSNTAG
    rows, _ = stat(nb, "--ring 3 -e instr_completed:NBOGUS:u -e instr_retired:u loop %d" % n)
    assert [r[0] for r in rows] == [loop_instr(n) + EXIT, loop_instr(n) + EXIT]
    assert "[real: stepped]" in rows[0][3]
    assert "backend: model" in nb.cmd("pmu backend model 0F_02")
    assert "instr_completed" in error(nb, "stat -e instr_completed loop %d" % n)


def test_indirect_branch_type_counts_returns(nb):
    # SDM retired_branch_type INDIRECT: returns, indirect calls and indirect jumps. calls D N
    # has only direct calls and jumps: INDIRECT = its N*D + 1 rets, and RETURN the same
    d, n = 3, 7
    # retired_branch_type has two ESCRs (TBPU_ESCR0/1, PMU reference 4): two masks per run
    ind, ret = counts(nb, "--ring 3 -e retired_branch_type:INDIRECT:u -e retired_branch_type:RETURN:u "
                          "calls %d %d" % (d, n))
    assert ind == n * d + 1
    assert ret == n * d + 1
    # jz per level (N*D) and the closing jnz (N); CALL:INDIRECT in one ESCR is one or the other
    cond, both = counts(nb, "--ring 3 -e retired_branch_type:CONDITIONAL:u "
                            "-e retired_branch_type:CALL:INDIRECT:u calls %d %d" % (d, n))
    assert cond == n * d + n
    assert both == n * d + (n * d + 1)


@pytest.mark.parametrize("n", [1, 5, 300])
def test_indirect_call_and_jump_branch_types(nb, n):
    # retired_branch_type bits per the SDM event table (prof/perf.c, perf_branch_type):
    # CONDITIONAL conditional jumps, CALL direct or indirect calls, RETURN returns,
    # INDIRECT returns, indirect calls or indirect jumps. indirect N: N indirect calls,
    # N indirect jumps, N + 1 rets (the leaf's and the final one), N jnz. At ring 3 under
    # :u, the workload alone (its exit's int 0x80 sets no type bit)
    # two ESCRs (TBPU_ESCR0/1, PMU reference 4.1) hold two masks per run
    ind, call = counts(nb, "--ring 3 -e retired_branch_type:INDIRECT:u "
                           "-e retired_branch_type:CALL:u indirect %d" % n)
    assert ind == n + n + (n + 1)
    assert call == n
    ret, cond = counts(nb, "--ring 3 -e retired_branch_type:RETURN:u "
                           "-e retired_branch_type:CONDITIONAL:u indirect %d" % n)
    assert ret == n + 1
    assert cond == n
    # an indirect call sets CALL and INDIRECT but is one branch: CALL:INDIRECT counts it once
    both, none = counts(nb, "--ring 3 -e retired_branch_type:CALL:INDIRECT:u "
                            "-e retired_branch_type:CONDITIONAL:u indirect %d" % n)
    assert both == n + n + (n + 1)
    # at ring 0 the workload's branches are the kernel's: none under :u, all under :k,
    # with the kernel's own around them
    none, kern = counts(nb, "-e retired_branch_type:CALL:INDIRECT:u "
                            "-e retired_branch_type:CONDITIONAL:k indirect %d" % n)
    assert none == 0 and kern > n
    # branch_retired by direction (predicted or not): the calls, jumps and rets are taken,
    # and the jnz is taken N - 1 times and falls through once
    mmtp, mmnp, instr = counts(nb, "--ring 3 -e branch_retired:MMTP:MMTM:u "
                                   "-e branch_retired:MMNP:MMNM:u -e instr_retired:u indirect %d" % n)
    assert mmtp == n + n + (n + 1) + (n - 1)
    assert mmnp == 1 + EXIT
    assert instr == 9 * n + 8 + EXIT


def test_four_branch_type_masks_need_two_runs(nb):
    # retired_branch_type lives only in TBPU_ESCR0/1 (PMU reference 4.1): a third and fourth
    # mask cannot be held at once, and stat says so instead of multiplexing
    line = error(nb, "stat -e retired_branch_type:INDIRECT -e retired_branch_type:CALL "
                     "-e retired_branch_type:RETURN -e retired_branch_type:CONDITIONAL indirect 5")
    assert "retired_branch_type" in line


PMI_ENTRIES = re.compile(r"^PMI entries: vector F8H (\d+), NMI (\d+)$", re.M)


@pytest.mark.parametrize("mode", ["fixed", "nmi"])
def test_pmi_arrives_the_way_the_lvt_entry_says(nb, mode):
    nb.cmd("pmu pmi " + mode)
    vec0, nmi0 = map(int, PMI_ENTRIES.search(nb.cmd("pmu")).groups())
    preset, n = 0xFFFFFFFFF0, 100
    rows, out = stat(nb, "--ring 3 --preset %#x -e instr_retired:u loop %d" % (preset, n))
    irq = int(IRQ.search(out).group(1))
    assert irq == (loop_instr(n) + EXIT) // ((1 << 40) - preset + 1)
    vec1, nmi1 = map(int, PMI_ENTRIES.search(nb.cmd("pmu")).groups())
    if mode == "fixed":
        assert (vec1 - vec0, nmi1 - nmi0) == (irq, 0)
    else:
        assert (vec1 - vec0, nmi1 - nmi0) == (0, irq)


def test_hw_with_a_failed_probe_is_kept_and_says_so(nb):
    # IA32_MISC_ENABLE bit 7 set is not enough: the probe must see counter 0 count
    # the work between two reads, and QEMU's PMU MSRs read 0 (QEMU notes P5). The
    # hardware backend is then what the machine has: selected, with the failure shown
    # in `pmu backend hw`, `pmu` and `cpu`, never replaced by the model unasked.
    old = int(re.search(r"= ([0-9A-F]+)H", nb.cmd("msr read 1A0H")).group(1), 16)
    nb.cmd("msr write 1A0H %XH --force" % (old | 0x80))
    try:
        out = nb.cmd("pmu backend hw")
        pmu = nb.cmd("pmu")
        cpu = nb.cmd("cpu")
    finally:
        nb.cmd("msr write 1A0H %XH --force" % old)
        nb.cmd("pmu backend model 0F_04 noht")
    assert out.startswith("backend: hardware"), out
    assert "warning: probe FAILED: probe: counter 0 read 0H before and after" in out, out
    assert "it does not count" in out
    assert pmu.startswith("backend: hardware (probe FAILED: probe: counter 0 read 0H"), pmu
    assert re.search(r"^  backend +hardware, probe FAILED: probe: counter 0", cpu, re.M), cpu


BENCH = re.compile(r"^start\+stop\+read, (\d+) runs, TSC cycles: min (\d+(?:\.\d+)?) "
                   r"median (\d+(?:\.\d+)?) tmean (\d+(?:\.\d+)?) max (\d+(?:\.\d+)?)$", re.M)


def test_pmu_bench_reports_the_spread_and_leaves_the_pmu_idle(nb):
    m = BENCH.search(nb.cmd("pmu bench 20", timeout=120))
    assert m and int(m.group(1)) == 20
    lo, med, tmean, hi = (float(m.group(i)) for i in range(2, 6))
    assert 0 < lo <= med <= hi and lo <= tmean <= hi
    assert "counters in use: none" in nb.cmd("pmu")
    assert "usage" in error(nb, "pmu bench 0")
    assert "usage" in error(nb, "pmu bench 257")


def test_ring3_fault_under_stat_is_reported_and_counting_goes_on(nb):
    out = nb.cmd("stat -e instr_retired --ring 3 fault-user", timeout=60)
    assert "exception #PF (vector 14)" in out
    assert re.search(r"^error: the workload faulted \(vector 14\); counts discarded$", out, re.M), out
    assert not any(ROW.match(l) for l in out.splitlines()), out
    assert "counters in use: none" in nb.cmd("pmu")
    assert counts(nb, "-e instr_retired:u --ring 3 -- loop 10") == [loop_instr(10) + EXIT]


def test_help_stat_documents_cascading(nb):
    out = nb.cmd("help stat")
    assert "--after N:SPEC" in out and "B:after=N" in out
    assert "bit 30" in out and "16/17" in out and "Refused" in out
    assert "synthetic" in out


def test_event_without_model_source_counts_zero_and_says_so(nb):
    rows, _ = stat(nb, "-e bnr loop 10")        # another agent's bus signal: nothing feeds it
    assert rows[0][0] == 0 and "[no model input]" in rows[0][3]
    # an event with an input that loop never produces counts 0 from that input
    rows, _ = stat(nb, "-e x87_assist loop 10")
    assert rows[0][0] == 0 and "[real: stepped]" in rows[0][3]
    # the memory model feeds BSQ_cache_reference: loop's one code line comes from memory,
    # and so does the exit trampoline's (its stack push is a store, which the event does
    # not count: prof/backend/memfeed.c; the user stack's line is in L2 from the kernel's store)
    rows, _ = stat(nb, "--ring 3 -e BSQ_cache_reference:RD_2NDL_MISS:u loop 10")
    assert rows[0][0] == 2 and "[memory model]" in rows[0][3]


def test_bad_input_gives_one_error_line(nb):
    assert "unknown event" in error(nb, "stat -e nosuch loop 1")
    assert "column" in error(nb, "stat -e instr_retired:NOSUCHBIT loop 1")
    assert "unknown workload" in error(nb, "stat nosuch")
    assert "0 or 3" in error(nb, "stat --ring 2 loop 1")
    assert "sampling" in error(nb, "stat -e instr_retired:period=10 loop 1")
    assert "HLT" in error(nb, "stat --ring 3 halt 10")
    # three ESCR settings for instr_retired, but only CRU_ESCR0/1 hold it (PMU reference 3.1)
    line = error(nb, "stat -e instr_retired:u -e instr_retired:k -e instr_retired:NBOGUSTAG loop 1")
    assert "#1" in line and "#2" in line and "#3" in line and "CRU_ESCR0" in line
    assert "usage" in error(nb, "pmu backend")
    assert "signature" in error(nb, "pmu backend model 0F_4")


def test_trace_shows_pmu_writes(nb):
    nb.cmd("pmu trace on")
    out = nb.cmd("stat -e instr_retired loop 1")
    nb.cmd("pmu trace off")
    # PMU reference 2.4: instr_retired NBOGUSNTAG|NBOGUSTAG, T0 OS+USR = 0400060CH on CRU_ESCR0,
    # its CCCR (select 4, active thread 11b, Enable, OVF_PMI_T0) 04039000H
    assert re.search(r"^wrmsr 3B8H <- 0400060CH \(MSR_CRU_ESCR0\)$", out, re.M), out
    assert re.search(r"^wrmsr 3[67][0-9A-F]H <- 04039000H \(MSR_IQ_CCCR\d\)$", out, re.M), out
    assert re.search(r"^wrmsr 3[01][0-9A-F]H <- 8000000000H \(MSR_IQ_COUNTER\d\)$", out, re.M), out
    assert "wrmsr" not in nb.cmd("stat -e instr_retired loop 1")


def test_msr_trace_alias(nb):
    assert nb.cmd("msr trace on") == "msr trace: on"
    assert "wrmsr 3B8H" in nb.cmd("stat -e instr_retired loop 1")
    assert nb.cmd("msr trace off") == "msr trace: off"
    assert "wrmsr" not in nb.cmd("stat -e instr_retired loop 1")


def test_explain_example_18_2_flaws(nb):
    assert "backend: model" in nb.cmd("pmu backend model 0F_04 ht")
    out = nb.cmd("explain 30CH=0 3B8H=04000603H 36CH=04038800H 310H=FFFFF000H "
                 "3CCH=0400060CH 370H=00039000H")
    problems = [l for l in out.splitlines() if l.startswith("! ")]
    assert len(problems) >= 4
    text = "\n".join(problems)
    # PMU reference 2.3: FFFFF000H is not -4096 in 40 bits; select 4 on counter 16 is CRU_ESCR0,
    # not CRU_ESCR2; counters 12 and 16 share CRU_ESCR0; event select 2 on CRU_ESCR2 is machine_clear
    assert "FFFFFFF000H" in text
    assert "CRU_ESCR2" in text and "select 5" in text
    assert "12 and 16" in text and "CRU_ESCR0" in text
    assert "machine_clear" in out
    assert re.search(r"^\d+ problem\(s\)$", out, re.M)
    assert "MSR=VALUE" in error(nb, "explain 36CH")


def raw_cmd(nb, text, timeout):
    """A command's serial text as it came, CRs included (nb.cmd cleans it)."""
    nb.send(text + "\r")
    nb.expect_exact("nbprof> ", timeout)
    return nb.child.before


def test_long_run_shows_progress_and_leaves_no_trace(nb):
    """arch/x86/progress.h: a stepped run over a second prints '\\r# stepped N
    instructions' about once a second, then clears the line with spaces and a
    CR; --quiet prints none; short runs print none. The counts do not change."""
    n = 1000000
    raw = raw_cmd(nb, "stat --ring 3 -e instr_retired:u loop %d" % n, 300)
    ticks = [int(x) for x in re.findall(r"\r# stepped (\d+) instructions", raw)]
    assert ticks and ticks == sorted(ticks) and ticks[-1] <= loop_instr(n) + 10000, raw
    assert re.search(r"# stepped \d+ instructions\r +\r", raw), raw
    first = raw.split("\n")[1]       # after the echo: progress, cleared, then stat's first line
    assert re.match(r"(\r# stepped \d+ instructions)+\r +\rstat: loop %d " % n, first), first
    shown = clean(raw)
    assert "# stepped" not in shown
    assert re.search(r"^\s+%d  instr_retired:" % (loop_instr(n) + EXIT), shown, re.M), shown
    quiet = raw_cmd(nb, "stat --quiet --ring 3 -e instr_retired:u loop %d" % n, 300)
    assert "# stepped" not in quiet and "%d  instr_retired:" % (loop_instr(n) + EXIT) in quiet
    short = raw_cmd(nb, "stat -e instr_retired loop 1000", 60)
    assert "# stepped" not in short


def test_perf_generic_names(nb):
    # perf's names bind as Linux's P4 backend binds them (p4_general_events):
    # instructions = instr_retired:NBOGUSNTAG:BOGUSNTAG, cycles = global_power_events:RUNNING
    rows, _ = stat(nb, "-e instructions:u -e instr_retired:NBOGUSNTAG:BOGUSNTAG:u -e cycles "
                   "--ring 3 -- loop 10")
    assert [r[1] for r in rows] == ["instr_retired:NBOGUSNTAG:BOGUSNTAG:u"] * 2 + \
        ["global_power_events:RUNNING:u:k"], rows
    assert rows[0][0] == rows[1][0] > 0, rows
    out = nb.cmd("events clockticks")
    assert re.match(r"clockticks\s+global_power_events:RUNNING\s+\(", out), out
    assert "cycles the processor is not stopped" in out
    line = error(nb, "stat -e cycle loop 10")
    assert "unknown event 'cycle'" in line and " cycles" in line and "bus-cycles" in line, line
