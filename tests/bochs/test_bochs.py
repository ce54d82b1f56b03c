"""test_bochs.py - nbprof on Bochs' Pentium 4 models, the BIOS path, a dead PMU.

Four machines boot one after the other: p4_willamette (0F_01H, no EM64T) and
p4_prescott_celeron_336 (0F_04H, EM64T), each with and without a Hyper-Threading
sibling (count=1:1:2), their PMU registers plain (tests/bochs/msrs.py); on the
Celeron without the sibling BPU_COUNTER0 is stuck at 1000H. Checked: `cpu` and the topology
against Bochs' CPUID, the boot line of the BIOS path, reserved-bit writes
that #GP, the probe that fails because nothing counts (also on the stuck
counter, which a probe that took any non-zero read accepted), `selftest` on the hardware backend
(the probe's FAIL first, "no counter counted", every counting check FAILs
naming it, the registers and the restore still checked, never a report of
success and never the model in its place), and Ctrl-C of an unstepped run.
Two more are Bochs' generic CPU with a Northwood's signature (0F_02H
stepping 9, the cascade-PMI erratum), at 40 MHz and at Bochs' default 4 MHz:
`record`'s erratum path polls with the hardware backend's periodic LAPIC
timer, and where the tick outlasts its period the tick's storm guard ends it.
Another boots the 1.44 MB floppy (make floppy) from drive A: to the prompt.
"""

import re

import pytest

from conftest import Bochs, have_bochs

MACHINES = {
    "willamette": {"model": "p4_willamette"},
    "willamette-ht": {"model": "p4_willamette", "ht": True},
    "celeron336": {"model": "p4_prescott_celeron_336", "stuck_counter0": 0x1000},
    "celeron336-ht": {"model": "p4_prescott_celeron_336", "ht": True},
    # Bochs' generic CPU as a Northwood with the cascade-PMI erratum (0F_02H), so that
    # `record` polls with the hardware backend's periodic LAPIC timer. Bochs' clocks count
    # instructions: its TSC and LAPIC timer run at ips Hz, so a 10 kHz tick is ips / 10000
    # instructions apart (4000 here; 400 at Bochs' default 4 MHz, shorter than the poll).
    "northwood": {"model": None, "cpuid": (15, 2, 9), "ips": 40000000},
    "northwood-4mhz": {"model": None, "cpuid": (15, 2, 9)},
}
# what Bochs' CPUID tables say (Bochs 2.7 cpu/cpudb/intel/p4_*.cc)
SIG = {"willamette": ("0F_01H", 2, "00000F12H"), "celeron336": ("0F_04H", 1, "00000F41H"),
       "northwood": ("0F_02H", 9, "00000F29H")}     # the generic CPU's cpuid= (MACHINES)
POLLED = ("record --throttle 100 --ring 3 -e instr_retired:u -e instr_retired:u:after=100 "
          "-c 500 loop %d")
SELFTEST_TIMEOUT = 300
SUMMARY = re.compile(r"^selftest: (\d+) passed, (\d+) failed, (\d+) skipped(.*)$", re.M)
RESULT = re.compile(r"^(PASS|FAIL|SKIP)  (\S+)\s+(.*)$", re.M)
COUNTING = {"counters", "escrs", "uops", "privilege", "threads", "overflow", "cascade"}


def kind(name):
    return name.split("-")[0]


@pytest.mark.parametrize("machine", list(MACHINES), indirect=True)
def test_cpu_and_topology_match_bochs_cpuid(machine):
    m = machine
    name = m.name
    sig, stepping, eax = SIG[kind(name)]
    out = m.cmd("cpu")
    assert re.search(r"^signature +%s stepping %d \(CPUID.1:EAX = %s\)$" % (sig, stepping, eax),
                     out, re.M), out
    assert ("\nEM64T         %s\n" % ("yes" if kind(name) == "celeron336" else "no")) in out, out
    assert "hypervisor" not in out
    assert re.search(r"^boot +legacy BIOS \(Multiboot, nbprof32\.elf, loaded by GRUB[^)]*\); "
                     r"nbprof runs in 32-bit protected mode", out, re.M), out
    if name.endswith("-ht"):
        assert "LP1 is the Hyper-Threading sibling of LP0" in out, out
        assert "pmu: backend hardware %s with HT" % sig in m.boot
    else:
        assert "1 logical processor; no Hyper-Threading sibling" in out, out
        assert "pmu: backend hardware %s without HT" % sig in m.boot
    # the probe failed and says why, everywhere: boot line, cpu, pmu (the stuck counter
    # reads 1000H: the old probe took any non-zero read for a counting PMU)
    read = "%XH" % MACHINES[name].get("stuck_counter0", 0)
    why = "probe FAILED: probe: counter 0 read %s before and after" % read
    assert why in m.boot and "it does not count" in m.boot, m.boot
    assert re.search(r"^  backend +hardware, probe FAILED: probe: counter 0 read %s" % read,
                     out, re.M), out
    assert m.cmd("pmu").startswith("backend: hardware (" + why)


@pytest.mark.parametrize("machine", ["willamette", "celeron336-ht"], indirect=True)
def test_reserved_bits_raise_gp(machine):
    m = machine
    name = m.name
    # CCCR bits 11:0 (bit 11 on models 0-1) and ESCR bit 31 are reserved; a plain
    # register write goes through; the value stays as it was after a #GP
    for msr, value in (("360H", 0x1), ("3B8H", 1 << 31)):
        out = m.cmd("msr write %s %XH --force" % (msr, value))
        assert "#GP" in out, out
        assert "= 0000000000000000H" in m.cmd("msr read " + msr)
    if kind(name) == "willamette":
        assert "#GP" in m.cmd("msr write 360H 800H --force")    # no CASCNTxINTOy below model 2
        assert "#GP" in m.cmd("msr write 3B8H 1H --force")      # T1_USR without HT
    out = m.cmd("msr write 300H 1234H --force")
    assert "#GP" not in out, out
    assert "= 0000000000001234H" in m.cmd("msr read 300H")
    m.cmd("msr write 300H 0H --force")


def selftest(m):
    out = m.cmd("selftest --quick", timeout=SELFTEST_TIMEOUT)
    s = SUMMARY.search(out)
    assert s, out
    return out, [(st, g, rest) for st, g, rest in RESULT.findall(out)], s


@pytest.mark.parametrize("machine", ["willamette", "celeron336", "celeron336-ht"],
                         indirect=True)
def test_selftest_on_a_dead_pmu_passes_nothing_that_counts(machine):
    m = machine
    out, res, s = selftest(m)
    assert re.search(r"^boot: legacy BIOS \(Multiboot, nbprof32\.elf, loaded by GRUB[^)]*\); "
                     r"nbprof runs in 32-bit protected mode", out, re.M), out
    assert re.search(r"^PMU backend hardware ", out, re.M), out
    # the probe's FAIL first, then the cause, once
    assert res[0][:2] == ("FAIL", "probe"), res[:2]
    assert res[1][0] == "FAIL" and res[1][2].startswith("no counter counted: counters 0-17"), res[1]
    assert sum(1 for r in res if r[2].startswith("no counter counted")) == 1
    for st, g, rest in res[2:]:
        if g in COUNTING:
            assert st != "PASS", rest
            if st == "FAIL":
                assert "(no counter counted; " in rest, rest
    assert ("PASS", "restore") in [(st, g) for st, g, rest in res], res[-3:]
    assert int(s.group(2)) > 0
    # never a report of success, never the model's
    assert s.group(4) == "; no counter counted", s.group(0)
    assert "on the software model" not in out
    assert re.search(r"^NBS:\d+\|machine\|.*\|backend=hardware ", out, re.M), out
    # afterwards the registers are as before and nothing is left programmed
    assert "counters in use: none" in m.cmd("pmu")


@pytest.mark.parametrize("machine", ["willamette-ht", "celeron336"], indirect=True)
def test_ctrl_c_stops_an_unstepped_run(machine):
    # loop 2^32-1 is about 13 G instructions: minutes in Bochs, unless Ctrl-C stops it
    m = machine
    m.send("run loop 4294967295\r")
    m.expect_exact("loop 4294967295", 10)
    m.send("\x03")
    out = m.expect_exact("nbprof> ", 30, "the prompt after Ctrl-C")
    assert "interrupted by Ctrl-C" in out, out


@pytest.mark.parametrize("machine", ["willamette-ht"], indirect=True)
def test_ctrl_c_stops_an_unstepped_run_pair(machine):
    m = machine
    m.send("run-pair loop 4294967295 -- loop 4294967295\r")
    m.expect_exact("run-pair loop 4294967295", 10)
    m.send("\x03")
    out = m.expect_exact("nbprof> ", 30, "the prompt after Ctrl-C")
    assert out.count("interrupted by Ctrl-C") == 2, out


def test_the_floppy_boots_to_the_prompt():
    """GRUB from the floppy's reserved sectors by Bochs' BIOS (INT 13H, CHS), its menu's
    default entry, the kernel from the FAT12."""
    if not have_bochs():
        pytest.fail("Bochs is missing (tools/build/ensure-deps)")
    m = Bochs("floppy", "p4_willamette", floppy=True)
    try:
        assert re.search(r"^boot\s+legacy BIOS \(Multiboot, nbprof32\.elf, loaded by GRUB ",
                         m.cmd("cpu"), re.M)
    finally:
        m.stop()


@pytest.mark.parametrize("machine", ["northwood"], indirect=True)
def test_the_erratum_path_polls_with_the_lapic_timer(machine):
    """The hardware backend's poll tick (prof/backend/hw.c hw_tick: the LAPIC timer,
    periodic, RECORD_POLL_HZ): on a dead PMU nothing overflows, but every tick polls, so
    the polls are the run's TSC cycles over the tick's period (TSC = LAPIC clock = ips,
    4000 cycles a tick), plus the poll after the stop; and the timer stops with the run."""
    m = machine
    assert re.search(r"^signature +0F_02H stepping 9 ", m.cmd("cpu"), re.M)
    out = m.cmd(POLLED % 300000, timeout=120)
    assert "erratum: 0F_02H stepping 9 raises no PMI from a cascaded counter" in out, out
    assert "polled by the LAPIC timer at 10000 Hz" in out, out
    polls = int(re.search(r"^PMIs: 0 .*, polls (\d+), late 0$", out, re.M).group(1))
    tsc = int(re.search(r"^duration: (\d+) TSC cycles", out, re.M).group(1))
    period = 40000000 // 10000
    # loop 300000 is 900006 instructions at ring 3, a cycle each, and the ticks' own
    # handlers add theirs: more than 225 periods, and each poll far shorter than a period
    assert 900006 // period <= tsc // period <= 900006 * 3 // 2 // period, out
    # the first tick comes a period after the timer starts, which is before the run's
    # clock starts; the last poll is the stop's
    assert tsc // period <= polls <= tsc // period + 2, (polls, tsc // period)
    # the timer stopped with the run: an unstepped run of about as long takes no poll
    assert "polls 0," in m.cmd("record --ring 3 -e instr_retired:u -c 500 loop 300000",
                               timeout=120)


@pytest.mark.parametrize("machine", ["northwood-4mhz"], indirect=True)
def test_a_poll_tick_that_outlasts_its_period_is_stopped(machine):
    """At Bochs' default 4 MHz the 10 kHz tick is 400 instructions apart, fewer than its
    poll: each tick is pending again at the IRET and the workload never runs (before the
    tick's storm guard, `record` hung there for good). The guard (prof/perf.c
    perf_poll_tick) stops the count and the tick, the command ends with the reason, and
    the next one answers."""
    m = machine
    out = m.cmd(POLLED % 300, timeout=60)
    assert out.startswith("error: record: interrupt storm: 16 timer ticks in a row on LP0 "), out
    # the TSC's rate is calibrated against the PIT: 4 MHz within 1 %, a period of 400
    m_ = re.search(r"poll tick \(10000 Hz, every (\d+) TSC cycles\) came every (\d+) TSC "
                   r"cycles, its poll (\d+) of them - ", out)
    assert m_, out
    period, every, poll = map(int, m_.groups())
    assert 396 <= period <= 404, out
    # back to back: a tick's whole interrupt is at least a period, its poll a part of it
    assert every >= period * 95 // 100 and 0 < poll < every, out
    assert "counting and the tick stopped" in out, out
    out = m.cmd("stat -e instr_retired loop 10", timeout=60)
    assert "overflow interrupts: 0" in out, out
    assert "counters in use: none" in m.cmd("pmu")
