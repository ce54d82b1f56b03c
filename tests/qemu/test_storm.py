"""test_storm.py - no livelock from the overflow interrupt, whatever is asked.

A sampler that counts CPL 0 counts its own overflow handler: a Pentium 4
retires the handler's instructions while the counter runs, and the model
steps them (arch/x86/step.h step_handler_enter). What the counter counts of
the handler after its restart - the tail - overflows it again before the
handler returns when the period is no longer than the tail, and then the
next PMI follows the IRET at once, for ever (a real machine hangs; nothing
reads Ctrl-C). So:
- pmu/p4_alloc.h P4_PMI_TAIL_MAX bounds the tail, and the allocator refuses
  CPL-0 samplers with a period up to it: the measured tail of this kernel
  must stay within it (`pmu` shows the model's measurement of the last count);
- the handler's instructions really are counted at :k: two runs of one
  ring-3 loop that differ only in their period differ in their :u:k count by
  what their extra PMIs retired at CPL 0, which lies between the tail and the
  whole handler (the counter is stopped in between, as the handler stops it);
- the way in of a PMI before its handler is stepped (the vector's stub,
  isr_common, the dispatcher) is counted with it: the model steps it once
  and reports it at every PMI;
- a storm the rule cannot foresee (here a CCCR.OVF that cannot be cleared,
  `record --inject stuck-ovf`, as stale counter state does) is stopped by
  the storm guard (prof/storm.h) with an error within seconds, by NMI and by
  vector, and the next command answers.
This module runs on the 64-bit kernel and in the BIOS subset on the 32-bit one.
"""

import os
import re
import time

import pytest

from conftest import REPO, kernel_bits

HANDLER = re.compile(r"^PMI handler on LP0 in the last count \(model, stepped\): (\d+) PMIs, (\d+) instructions "
                     r"at CPL 0 per PMI "
                     r"from its entry to its IRET; after a counter's restart (\d+) at most "
                     r"\(the limit is (\d+)\)$", re.M)
WAY_IN = re.compile(r"^PMI way in, counted with it \(stub, isr_common, dispatcher\): NMI (\d+) / (\d+), "
                    r"vector F8H (\d+) / (\d+) instructions from CPL 0 / 3$", re.M)
EVENTS = re.compile(r"^events: #0 (\d+) counted", re.M)
PMIS = re.compile(r"^PMIs: (\d+) ", re.M)


def tail_max():
    text = open(os.path.join(REPO, "pmu", "p4_alloc.h")).read()
    return int(re.search(r"#define P4_PMI_TAIL_MAX\s+(\d+)u", text).group(1))


def record(nb, args):
    """(events, PMIs, handler instructions per PMI, tail, tail limit) of one LP0 record; every
    PMI's handler was stepped (pmu counts the handlers it stepped)."""
    out = nb.cmd("record " + args, timeout=120)
    assert not out.startswith("error"), out
    pmu = nb.cmd("pmu")
    h = HANDLER.search(pmu)
    assert h, pmu
    pmis = int(PMIS.search(out).group(1))
    assert int(h.group(1)) == pmis, (out, pmu)
    return (int(EVENTS.search(out).group(1)), pmis, int(h.group(2)), int(h.group(3)),
            int(h.group(4)))


@pytest.mark.parametrize("mode", ["--nmi", "--vector"])
@pytest.mark.parametrize("run", ["-e replay_event:NBOGUS:u -c 9 --ring 3 synthetic replay_event:NBOGUS 30",
                                 "-e instr_retired -c 200 loop 3000"])
def test_every_pmis_handler_is_stepped_once(nb, mode, run):
    """Each PMI's handler is stepped and counted once, whatever delivers it: an NMI that the
    end of a ring-3 gate sends (the synthetic events' PMIs, held through the gate) lands
    inside the step handler's report of the gate's IRET, and its handler was counted twice
    there - once as itself and once in the gate's place, with its length - while the gate's
    saved context was overwritten (3 PMIs, 6 handlers)."""
    record(nb, "%s %s" % (mode, run))


def test_the_tail_is_within_the_bound_and_the_handler_counts(nb):
    bound = tail_max()
    e1, p1, per1, tail1, limit = record(nb, "-e instr_retired -c 5000 --ring 3 loop 100000")
    e2, p2, per2, tail2, _ = record(nb, "-e instr_retired -c 10000 --ring 3 loop 100000")
    assert limit == bound
    assert 0 < tail1 <= bound and 0 < tail2 <= bound
    assert p1 > p2 > 0
    # the :u part is the same loop in both; the difference is the extra PMIs' CPL-0 instructions
    per_pmi = (e1 - e2) / (p1 - p2)
    assert min(tail1, tail2) <= per_pmi <= max(per1, per2), (e1, e2, p1, p2, per1, per2)


def straight_entry(bits):
    """The instructions of a stub and of isr_common's first run without a branch: a floor."""
    text = open(os.path.join(REPO, "arch", "x86", "%d" % bits, "entry.S")).read()
    body = text.split("\nisr_common:\n", 1)[1].splitlines()
    n = 0
    for line in body:
        insn = line.split("/*")[0].split(":")[-1].strip()
        if not insn:
            continue
        n += 1
        if insn.startswith("j") or insn.startswith("call"):
            break
    stub = 3 if bits == 64 else 4      # pushes of the error code (and its high half), the vector; jmp
    return stub + n


def test_the_way_in_is_counted(nb, firmware):
    e1, p1, per1, tail1, _ = record(nb, "-e instr_retired -c 5000 --ring 3 loop 20000")
    way = [int(x) for x in WAY_IN.search(nb.cmd("pmu")).groups()]
    floor = straight_entry(kernel_bits(firmware))
    # every path measured, each at least the straight-line part and a dispatcher's instruction
    assert all(w > floor for w in way), (way, floor)
    # the NMI's path was this run's; the handler's count per PMI holds it and more
    assert per1 > way[1] + tail1, (per1, way)


TICKS = re.compile(r"^timer ticks on LP0 in the last count \(model, stepped\): (\d+), (\d+) instructions "
                   r"at CPL 0 per tick from its entry to its IRET \(way in (\d+) / (\d+) from CPL 0 / 3\)$",
                   re.M)
WINDOW = re.compile(r"while a counter ran: LP0 (\d+) at CPL 0, (\d+) at CPL 3")


def test_halt_ticks_are_counted(nb, firmware):
    """`halt`'s HLT wakes on the LAPIC timer: that tick's way in and handler are kernel code
    a Pentium 4 counts at CPL 0 while the counter runs. The model steps them: the CPL-0
    instructions of halt's window exceed those of `empty`'s (the runner's own) by at least
    one tick - the one that woke the HLT, inside the workload - and `pmu` says how many
    ticks the last count stepped and how long they were (more than their way in, which is
    longer than the stub and isr_common's straight-line part)."""
    base = WINDOW.search(nb.cmd("stat -e instr_retired empty"))
    out = nb.cmd("stat -e instr_retired halt 2000", timeout=300)
    m = WINDOW.search(out)
    ticks = TICKS.search(nb.cmd("pmu"))
    assert base and m and ticks, out
    n, per, way, _ = (int(x) for x in ticks.groups())
    assert n >= 1 and way > straight_entry(kernel_bits(firmware)) and per > way, ticks.group(0)
    assert int(m.group(1)) - int(base.group(1)) >= per - 16, (m.group(0), base.group(0), per)
    assert "backend" in nb.cmd("cpu")        # the shell answers


POLLS = re.compile(r"^PMIs: \d+ .*, polls (\d+), late \d+$", re.M)
POLLED = ("--throttle 100 --ring 3 -e instr_retired:u -e instr_retired:u:after=100 -c 500 "
          "loop 30000")


def test_erratum_poll_ticks_are_counted(nb, firmware):
    """On a part with the cascade-PMI erratum `record` polls a cascaded sampler from the
    LAPIC timer (prof/record.c). A Pentium 4 takes that tick every 100 us of the run and
    counts its handler at CPL 0 like the PMI's. The model sends it in that time, the
    workload's as a Pentium 4 would run it (arch/x86/step.h step_tick_every), and steps
    its handler: `pmu` says how many ticks the last count stepped and how long they were,
    and each of them polled - with the poll at the workload's last step and the one after
    the stop, the polls are the ticks + 2. Before, the LAPIC timer fired by the stepped
    run's own time, hundreds of times too often, and its handler ran unstepped: no tick
    was counted."""
    assert "backend: model" in nb.cmd("pmu backend model 0F_02:9")
    try:
        out = nb.cmd("record " + POLLED, timeout=300)
        assert "error" not in out and "polled" in out, out
        polls = int(POLLS.search(out).group(1))
        ticks = TICKS.search(nb.cmd("pmu"))
        assert ticks, out
        n, per, way0, way3 = (int(x) for x in ticks.groups())
        # 90006 instructions of ring-3 loop: several 100 us on any clock QEMU gives
        assert n >= 1 and polls == n + 2, (n, polls)
        floor = straight_entry(kernel_bits(firmware))
        assert way0 > floor and way3 > floor and per > way3, ticks.group(0)
    finally:
        nb.cmd("pmu backend model 0F_04")
    assert "backend" in nb.cmd("cpu")        # the shell answers


@pytest.mark.parametrize("spec", ["instr_retired", "instr_retired:k", "global_power_events"])
def test_short_kernel_periods_are_refused(nb, spec):
    bound = tail_max()
    out = nb.cmd("record -e %s -c %d loop 100" % (spec, bound))
    assert out.startswith("error: "), out
    assert "a period of at most %d counted at CPL 0 (:k)" % bound in out
    assert "or count at :u" in out
    assert "backend" in nb.cmd("cpu")        # the shell answers


@pytest.mark.parametrize("pmi", ["--nmi", "--vector"])
def test_a_storm_ends_with_its_error_and_the_shell_answers(nb, pmi):
    t0 = time.monotonic()
    out = nb.cmd("record %s --inject stuck-ovf -e instr_retired:u -c 1000 --ring 3 loop 1000000"
                 % pmi, timeout=60)
    took = time.monotonic() - t0
    assert out.startswith("error: record: interrupt storm: 16 overflow interrupts in a row on LP0"), out
    assert "its PMI request stayed asserted" in out and "counting stopped" in out
    assert took < 20, "the storm took %.1f s to stop" % took
    assert "no recording" in nb.cmd("report")
    # the fault lasted one run: the same sampling works again
    ok = nb.cmd("record %s -e instr_retired:u -c 1000 --ring 3 loop 1000" % pmi)
    assert re.search(r"^samples: 3 stored", ok, re.M), ok
