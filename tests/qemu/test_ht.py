"""test_ht.py - two logical processors sharing one PMU (Hyper-Threading).

The machine has one core with two hyper-threads (-smp 2,sockets=1,cores=1,
threads=2) and the NetBurst signature 0F_04, so the boot-time backend is the
model with HT (prof/perf.c: HT when CPUID says 2 threads per core). What
each test expects comes from outside the kernel:
  loop N      retires 3N + 6 instructions (arch/x86/64/workloads.S, wl_loop)
  SMT ID      APIC ID & 1 here (test_smp.py's reasoning, PMU reference 7), so
              LP1 is T1 in the ESCR's thread bits (PMU reference 8)
  split       PMU reference 3.2 (Linux perf's halves): LP0's events on the
              ESCR0 side and counters 0,1/4,5/8,9/12,13,16, LP1's on the
              ESCR1 side and 2,3/6,7/10,11/14,15,17
  rule        SDM text above Table 18-66: a TS event on Tn at CPL c counts
              exactly when Tn_OS (c = 0) or Tn_USR (c = 3) is set; the other
              thread's bits have no effect on it
  active      CCCR bits 17:16 (PMU reference 2.2): 00 none, 01 single, 10 both,
              11 any active LP; a halted LP is inactive. LP0 runs the shell
              (always active); the sibling halts unless it runs a workload.
  kernel      the kernel's own code in each LP's counting window counts at
              CPL 0 as on a P4 (the model steps it, arch/x86/step.h); how much
              of LP0's depends on how long it waits for LP1, so the expected
              counts add each LP's share as stat prints it ("while a counter
              ran"), which with one counter programmed is exactly what it
              could see; a ring-3 run's exit trampoline adds its int 0x80 at
              CPL 3. Tests with two counters count ring-3 :u, which holds no
              kernel code.
"""

import re
import time

import pytest

BOOT = {"smp_ht": True}

ROW = re.compile(r"^\s*(\d+)\s+(\S+)\s+counter (\d+) \((\S+)\) ESCR (\S+) (.*)$", re.M)
PMI_LP = re.compile(r"handled on LP0 (\d+), on LP1 (\d+); model requests OVF_PMI_T0 (\d+), "
                    r"OVF_PMI_T1 (\d+)")

WINDOW = re.compile(r"^model: kernel code in the counting window: .*; while a counter ran: "
                    r"LP0 (\d+) at CPL 0, (\d+) at CPL 3(?:; LP1 (\d+) at CPL 0, (\d+) at CPL 3)?$",
                    re.M)

LP0_COUNTERS = {0, 1, 4, 5, 8, 9, 12, 13, 16}
LP1_COUNTERS = {2, 3, 6, 7, 10, 11, 14, 15, 17}

EXIT = 1                # wl_user_exit's int 0x80, at CPL 3 (workload/workload.h WL_USER_EXIT_INSTR)


def loop_instr(n):
    return 3 * n + 6


def kernel_share(out):
    """Each LP's kernel instructions fed while a counter ran: ((LP0 CPL 0, CPL 3), (LP1 ...))."""
    m = WINDOW.search(out)
    assert m, out
    v = [int(x or 0) for x in m.groups()]
    return (v[0], v[1]), (v[2], v[3])


def stat(nb, args):
    out = nb.cmd("stat " + args, timeout=180)
    assert "error" not in out, out
    return [(int(m.group(1)), m.group(2), int(m.group(3)), m.group(5), m.group(6))
            for m in ROW.finditer(out)], out


def pmi_by_lp(nb):
    m = PMI_LP.search(nb.cmd("pmu"))
    assert m, "no per-LP PMI line in 'pmu'"
    return [int(x) for x in m.groups()]


@pytest.fixture(autouse=True)
def ht_model(nb):
    assert "backend: model" in nb.cmd("pmu backend model 0F_04 ht")
    nb.cmd("pmu pmi fixed")
    nb.cmd("msr trace off")


# ---- running on either LP ---------------------------------------------------------

def test_run_cpu1_runs_on_the_sibling(nb):
    before = nb.cmd("cpu")
    out = nb.cmd("run --cpu 1 --step loop 10")
    assert re.search(r"^workload: loop, ring 0, lp 1, stepped$", out, re.M), out
    assert re.search(r"^instructions: %d \(CPL 0\)$" % loop_instr(10), out, re.M), out
    calls = lambda text: int(re.search(r"^\s+1\s+1\s+0\s+0\s+1\s+\w+\s+(\d+)", text, re.M).group(1))
    assert calls(nb.cmd("cpu")) == calls(before) + 1
    assert "idle" in re.search(r"^\s+1\s+1\s+.*$", nb.cmd("cpu"), re.M).group(0)


def test_run_both_and_run_pair(nb):
    out = nb.cmd("run --cpu both --ring 3 --step loop 5")
    assert out.count("instructions: %d (CPL 3)" % loop_instr(5)) == 2, out
    assert "lp 0" in out and "lp 1" in out
    out = nb.cmd("run-pair --step loop 7 -- --ring 3 loop 20")
    lp0, lp1 = out.split("LP1:")
    assert "workload: loop, ring 0, lp 0" in lp0 and "instructions: %d (CPL 0)" % loop_instr(7) in lp0
    assert "workload: loop, ring 3, lp 1" in lp1 and "instructions: %d (CPL 3)" % loop_instr(20) in lp1


def test_run_pair_bad_input_is_one_error(nb):
    for line in ("run-pair loop 5", "run-pair loop 5 --", "run-pair nosuch -- loop 1",
                 "run-pair loop 1 -- loop 1 -- loop 1", "run --cpu 2 loop 1"):
        out = nb.cmd(line)
        assert len(out.splitlines()) == 1 and out.startswith("error: "), (line, out)


def test_ctrl_c_stops_both_unstepped(nb):
    # unstepped: each LP's LAPIC timer polls (LP0 the serial port, LP1 LP0's flag)
    nb.send("run-pair loop 4294967295 -- loop 4294967295\r")
    time.sleep(2)
    t0 = time.monotonic()
    nb.send("\x03")
    nb.expect_exact("nbprof> ", 30)
    took = time.monotonic() - t0
    out = nb.child.before
    assert out.count("interrupted by Ctrl-C") == 2, out
    assert "LP1: loop: interrupted" in out
    assert took < 5, "Ctrl-C took %.1f s" % took


def test_ctrl_c_stops_both(nb):
    nb.send("run-pair --step loop 4000000 -- --step loop 4000000\r")
    time.sleep(3)
    nb.send("\x03")
    nb.expect_exact("nbprof> ", 120)
    out = nb.child.before
    assert out.count("interrupted by Ctrl-C") == 2, out
    assert "LP1: loop: interrupted" in out


# ---- shared PMU, two threads --------------------------------------------------------

def test_stat_cpu1_counts_lp1_on_its_half(nb):
    rows, out = stat(nb, "-e instr_retired --cpu 1 loop 10")
    count, _, counter, escr, rest = rows[0]
    (k0, _), (k1, _) = kernel_share(out)
    # T1 only: LP1's loop and its own kernel code, none of LP0's (which waited meanwhile;
    # LP1's runner opens and shuts the counting gate, so how much of LP0's stepped kernel
    # code falls between the two depends on when the LPs meet)
    assert k1 > 0, out
    assert count == loop_instr(10) + k1, out
    assert counter in LP1_COUNTERS and escr in ("CRU_ESCR1", "CRU_ESCR3"), out
    assert "[T1]" in rest
    rows, out = stat(nb, "-e instr_retired --cpu 0 loop 10")
    (k0, _), (k1, _) = kernel_share(out)
    assert k1 == 0, out     # LP1 halted: no window, nothing stepped
    assert rows[0][0] == loop_instr(10) + k0 and rows[0][2] in LP0_COUNTERS and "[T0]" in rows[0][4]


def test_stat_pair_attributes_each_lp(nb):
    rows, out = stat(nb, "-e instr_retired:t0:u -e instr_retired:t1:u --ring 3 --pair loop 10 -- "
                         "--ring 3 loop 40")
    assert [r[0] for r in rows] == [loop_instr(10) + EXIT, loop_instr(40) + EXIT], out
    assert rows[0][2] in LP0_COUNTERS and rows[1][2] in LP1_COUNTERS
    assert rows[0][3] != rows[1][3]     # each thread on its own ESCR (PMU reference 3.2)
    rows, out = stat(nb, "-e instr_retired --pair loop 10 -- loop 40")
    (k0, u0), (k1, u1) = kernel_share(out)
    assert (u0, u1) == (0, 0) and k0 > 0 and k1 > 0, out
    assert rows[0][0] == loop_instr(10) + loop_instr(40) + k0 + k1 and "[T0+T1]" in rows[0][4]


@pytest.mark.parametrize("mode", ["fixed", "nmi"])
def test_pmis_go_to_the_owning_lp(nb, mode):
    """Counters wrapping every 17 events: each LP's handler extends its own counter.

    --preset 2^40-16 reloads both counters so they overflow every 16 events
    and interrupt on the 17th (PMI after the overflow, PMU reference 2.2);
    totals stay exact only if no overflow is lost or taken twice. LP1 runs
    its jobs with IF = 0, and a CPU holds a fixed-vector interrupt while
    IF = 0 (SDM Vol. 3A 6.8.1): by vector, LP1 takes no PMI during the run
    (at most the one held, taken in its idle loop), and its total is still
    exact (the stop finds its last overflow); LP0 runs with IF = 1 and takes
    its own. By NMI every overflow is taken on its LP.
    """
    nb.cmd("pmu pmi " + mode)
    before = pmi_by_lp(nb)
    rows, out = stat(nb, "-e instr_retired:t0:u -e instr_retired:t1:u --preset 0xFFFFFFFFF0 "
                         "--ring 3 --pair loop 100 -- loop 200")     # B at A's ring
    a, b = loop_instr(100) + EXIT, loop_instr(200) + EXIT
    assert [r[0] for r in rows] == [a, b], out
    after = pmi_by_lp(nb)
    lp0, lp1, t0, t1 = [a - b for a, b in zip(after, before)]
    if mode == "fixed":
        assert lp0 >= a // 17 - 1 and lp1 <= 1, (lp0, lp1)
    else:
        assert lp0 >= a // 17 - 1 and lp1 >= b // 17 - 1, (lp0, lp1)
        assert t0 > 0 and t1 > 0
        # LP0's count overflows far less often than LP1's: more PMIs were taken on LP1
        assert lp1 > lp0
    nb.cmd("pmu pmi fixed")


def test_sibling_events_interrupt_the_owner(nb):
    """One counter for both threads: OVF_PMI_T0, so LP0 takes every PMI, also for LP1's events.
    At ring 3 under :u: the handler's own instructions (CPL 0) would count at :k."""
    before = pmi_by_lp(nb)
    rows, out = stat(nb, "-e instr_retired:u --preset 0xFFFFFFFFF0 --ring 3 "
                         "--pair loop 100 -- loop 200")
    assert rows[0][0] == loop_instr(100) + EXIT + loop_instr(200) + EXIT, out
    lp0, lp1, t0, t1 = [a - b for a, b in zip(pmi_by_lp(nb), before)]
    assert lp1 == 0 and t1 == 0 and lp0 > 0 and t0 > 0, (lp0, lp1, t0, t1)


def test_ti_events_are_flagged(nb):
    rows, out = stat(nb, "-e FSB_data_activity:DRDY_DRV --cpu 1 loop 3")
    assert "[TI: thread independent" in rows[0][4], out
    rows, out = stat(nb, "-e instr_retired --cpu 1 loop 3")
    assert "[TI" not in out
    assert re.search(r"^FSB_data_activity\s.*\bTI\b", nb.cmd("events FSB_data"), re.M)


@pytest.mark.parametrize("field,alone,both", [(0, 0, 0), (1, 1, 0), (2, 0, 1), (3, 1, 1)])
def test_active_thread_field(nb, field, alone, both):
    """IQ_CCCR0 counts instr_retired of both threads, gated by CCCR bits 17:16.

    `run --feed` feeds the model without programming it. On LP0 alone one LP
    is active (LP1 halted); with --cpu 1 both are (LP0 runs the shell while
    LP1 runs the loop). Expected counts in units of one loop 10 (36).
    """
    nb.cmd("msr write 3B8H 0400060FH")             # CRU_ESCR0: instr_retired, T0+T1, OS+USR
    nb.cmd("msr write 30CH 0")
    nb.cmd("msr write 36CH %XH" % (0x9000 | field << 16))   # select 4, Enable, active thread
    nb.cmd("run --feed loop 10")
    a = int(re.search(r"= ([0-9A-F]+)H", nb.cmd("msr read 30CH")).group(1), 16)
    nb.cmd("msr write 30CH 0")
    nb.cmd("run --feed --cpu 1 loop 10")
    b = int(re.search(r"= ([0-9A-F]+)H", nb.cmd("msr read 30CH")).group(1), 16)
    nb.cmd("msr write 36CH 0")
    assert (a, b) == (alone * loop_instr(10), both * loop_instr(10))


# ---- SDM Table 18-66, live ---------------------------------------------------------------
#
# Every cell, with LP0 and LP1 both running at once. Four distinct counts make
# each of the four ESCR bits visible on its own:
#   run X: LP0 `loop 10` at ring 0 (36, T0 in OS),  LP1 `loop 40` at ring 3 (126, T1 in USR)
#   run Y: LP0 `loop 20` at ring 3 (66, T0 in USR), LP1 `loop 80` at ring 0 (246, T1 in OS)
# Each LP's kernel code (its share as stat prints it) is "in OS" too, on T0 or T1,
# and a ring-3 run's exit trampoline "in USR".
# By the rule above the table a cell counts T0's OS/USR events per T0_OS/T0_USR
# and T1's per T1_OS/T1_USR. The printed cell T0_OS/T0_USR = 01, T1_OS/T1_USR =
# 10 reads "(a) T0 in OS or (b) T1 in OS", which contradicts that rule (01
# sets T0_USR, not T0_OS) and its own row ("T0 in USR" everywhere else); the
# model follows the rule, so that cell expects "T0 in USR or T1 in OS".

CELLS = {  # (T0_OS T0_USR, T1_OS T1_USR) -> the table's text, as (T0 in OS, T0 in USR, T1 in OS, T1 in USR)
    ("00", "00"): (0, 0, 0, 0), ("00", "01"): (0, 0, 0, 1), ("00", "11"): (0, 0, 1, 1),
    ("00", "10"): (0, 0, 1, 0),
    ("01", "00"): (0, 1, 0, 0), ("01", "01"): (0, 1, 0, 1), ("01", "11"): (0, 1, 1, 1),
    ("01", "10"): (0, 1, 1, 0),     # printed "(a) T0 in OS or (b) T1 in OS": see above
    ("11", "00"): (1, 1, 0, 0), ("11", "01"): (1, 1, 0, 1), ("11", "11"): (1, 1, 1, 1),
    ("11", "10"): (1, 1, 1, 0),
    ("10", "00"): (1, 0, 0, 0), ("10", "01"): (1, 0, 0, 1), ("10", "11"): (1, 0, 1, 1),
    ("10", "10"): (1, 0, 1, 0),
}


def priv(bits):
    """ESCR OS/USR pair "10" -> stat's :tN= letters ("k" = OS, "u" = USR)."""
    return ("k" if bits[0] == "1" else "") + ("u" if bits[1] == "1" else "") or "-"


@pytest.mark.parametrize("t0,t1", sorted(CELLS))
def test_table_18_66_cell(nb, t0, t1):
    t0_os, t0_usr, t1_os, t1_usr = CELLS[(t0, t1)]
    spec = "-e instr_retired:t0=%s:t1=%s" % (priv(t0), priv(t1))
    rows, out = stat(nb, "%s --ring 0 --pair loop 10 -- --ring 3 loop 40" % spec)
    (k0, u0), (k1, u1) = kernel_share(out)
    assert k0 > 0 and k1 > 0 and (u0, u1) == (0, EXIT), out
    assert rows[0][0] == t0_os * (loop_instr(10) + k0) + \
        t1_os * k1 + t1_usr * (loop_instr(40) + u1), out
    rows, out = stat(nb, "%s --ring 3 --pair loop 20 -- --ring 0 loop 80" % spec)
    (k0, u0), (k1, u1) = kernel_share(out)
    assert k0 > 0 and k1 > 0 and (u0, u1) == (EXIT, 0), out
    assert rows[0][0] == t0_os * k0 + t0_usr * (loop_instr(20) + u0) + \
        t1_os * (loop_instr(80) + k1), out


# ---- SDM Table 18-67 (TI events), live ---------------------------------------------------
#
# A thread-independent event is not put on a thread: the table says when it
# counts, by the CPLs of both threads at the time, whichever caused it. Its
# cells as printed (rows T0_OS/T0_USR, columns T1_OS/T1_USR, order 00 01 11
# 10; the current edition labels the last row "0", the row order makes it
# 10): Z zero count, U "(a) T0 in USR or (b) T1 in USR", O "(a) T0 in OS or
# (b) T1 in OS", A "irrespective of CPL, T0, T1".
#
# WC_Buffer (TI in p4_events: FreeBSD, Linux) is fed by non-temporal stores
# (pmu/model/p4_sbuf.c), which neither the kernel nor the `synthetic` workload
# makes, so the counts are exactly what the workloads feed.
# --stagger makes each LP's state known while the other feeds: LP1 is halted
# in the kernel (OS) while A runs on LP0, and LP0 waits in the kernel (OS)
# while B runs on LP1.

TI_TABLE = {
    "00": {"00": "Z", "01": "U", "11": "A", "10": "O"},
    "01": {"00": "U", "01": "U", "11": "A", "10": "A"},
    "11": {"00": "A", "01": "A", "11": "A", "10": "A"},
    "10": {"00": "O", "01": "A", "11": "A", "10": "O"},
}


def ti_counts(cell, t0_cpl, t1_cpl):
    user0, user1 = t0_cpl != 0, t1_cpl != 0
    return {"Z": False, "U": user0 or user1, "O": not user0 or not user1, "A": True}[cell]


@pytest.mark.parametrize("t0,t1", sorted(CELLS))
def test_table_18_67_cell(nb, t0, t1):
    cell = TI_TABLE[t0][t1]
    spec = "-e WC_Buffer:WCB_EVICTS:t0=%s:t1=%s" % (priv(t0), priv(t1))
    for ring_a, ring_b, n_a, n_b in ((0, 3, 10, 1000), (3, 0, 20, 3000), (3, 3, 40, 5000)):
        rows, out = stat(nb, "%s --stagger --ring %d --pair synthetic WC_Buffer:WCB_EVICTS %d -- "
                             "--ring %d synthetic WC_Buffer:WCB_EVICTS %d"
                         % (spec, ring_a, n_a, ring_b, n_b))
        expect = (n_a if ti_counts(cell, ring_a, 0) else 0) + \
                 (n_b if ti_counts(cell, 0, ring_b) else 0)
        assert rows[0][0] == expect, (cell, ring_a, ring_b, out)
        if cell != "Z":
            assert "[TI: thread independent, counts while T0 or T1 is" in rows[0][4], out
