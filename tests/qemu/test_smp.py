"""test_smp.py - the Hyper-Threading sibling: started, listed, given work.

The module's machine has one core with two hyper-threads (-smp 2,sockets=1,
cores=1,threads=2). What to expect comes from outside the kernel:
 - QEMU gives the sibling APIC ID 1 (QEMU notes section 5);
 - with 2 logical processors per package and 1 core, threads per core is
   2, so SMT ID = APIC ID & 1 and both LPs are core 0 of package 0 (PMU
   reference section 7);
 - plain `-smp 2` in QEMU means two cores (QEMU notes P12): CPUID.4
   says 2 cores, so there is 1 thread per core, the SMT field is 0 bits
   wide, and APIC IDs 0 and 1 are cores 0 and 1, both SMT 0.
Two more machines (one LP; two cores) are booted by their own tests, one at
a time, to check that everything degrades to a clear message.
"""

import os
import re

import pytest

import conftest

BOOT = {"smp_ht": True}

ROW = re.compile(r"^\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\w+)\s+(\d+)\s+(\d+)\s+(\d+)$", re.M)


def lp_rows(out):
    """{index: dict} from the LP table of `cpu`."""
    rows = {}
    for m in ROW.finditer(out):
        idx, apic, pkg, core, smt, state, calls, faults, wakeups = m.groups()
        rows[int(idx)] = dict(apic=int(apic), package=int(pkg), core=int(core), smt=int(smt),
                              state=state, calls=int(calls), faults=int(faults),
                              wakeups=int(wakeups))
    return rows


def test_boot_log_starts_sibling(nb):
    log = nb.transcript
    assert re.search(r"^smp: 2 logical processors ", log, re.M), log
    line = re.search(r"^smp: LP1 APIC ID 1 \(package 0, core 0, SMT 1\): (.*)$", log, re.M)
    assert line, log
    assert "work ran ok" in line.group(1) and "wake-up IPI ok" in line.group(1)


def test_cpu_lists_two_threads_of_one_core(nb):
    out = nb.cmd("cpu")
    assert re.search(r"^LPs\s+2 logical processors", out, re.M), out
    rows = lp_rows(out)
    assert sorted(rows) == [0, 1], out
    assert rows[0]["apic"] == 0 and rows[1]["apic"] == 1
    assert (rows[0]["smt"], rows[1]["smt"]) == (0, 1)
    assert rows[0]["core"] == rows[1]["core"] and rows[0]["package"] == rows[1]["package"]
    assert rows[0]["state"] == "running"            # LP0 runs the shell
    assert rows[1]["state"] == "idle"               # LP1 halts between work items
    assert "LP1 is the Hyper-Threading sibling of LP0" in out
    assert "no Hyper-Threading sibling" not in out


def test_selftest_runs_work_on_lp1(nb):
    before = lp_rows(nb.cmd("cpu"))[1]
    out = nb.cmd("cpu selftest")
    # The work item read its own local APIC ID: it ran on LP1, not LP0.
    m = re.search(r"^LP1: work ran (\w+) \(it read APIC ID (\d+),", out, re.M)
    assert m and m.group(1) == "ok" and int(m.group(2)) == 1, out
    assert "wake-up IPI ok" in out
    # The deliberate #UD on LP1 is reported as LP1's and contained there.
    assert re.search(r"^\*\*\* exception #UD \(vector 6\) .* on LP1$", out, re.M), out
    assert "*** LP1: work aborted by #UD" in out
    assert "fault contained ok" in out
    after = lp_rows(nb.cmd("cpu"))[1]
    # probe, fault, probe again: three work items, one fault, one wake-up each
    assert after["calls"] == before["calls"] + 3
    assert after["faults"] == before["faults"] + 1
    assert after["wakeups"] == before["wakeups"] + 3
    assert after["state"] == "idle"


def test_lp0_unaffected_by_lp1_fault(nb):
    nb.cmd("cpu selftest")
    assert "commands:" in nb.cmd("help")
    # LP0's own guarded runs still work after LP1's fault.
    out = nb.cmd("fault ud")
    assert re.search(r"^\*\*\* exception #UD \(vector 6\) .* on LP0$", out, re.M), out
    assert "*** command aborted by #UD" in out
    assert "commands:" in nb.cmd("help")


def test_cpu_bad_argument(nb):
    out = nb.cmd("cpu frobnicate")
    assert out.startswith("error: ") and len(out.splitlines()) == 1, out


@pytest.fixture
def one_machine(request):
    """Stop this module's HT machine first: only one QEMU at a time."""
    con = conftest._consoles.get(request.module.__name__)
    if con is not None:
        con.stop()


def boot_other(name, extra, firmware, machine=None):
    """Boot another machine, return (boot log, `cpu` output, `cpu selftest` output)."""
    name += conftest.firmware_suffix(firmware)
    con = conftest.boot_qemu(name, extra=extra, firmware=firmware, machine=machine)
    try:
        con.expect_exact(conftest.READY, conftest.BOOT_TIMEOUT)
        con.expect_exact(conftest.PROMPT, conftest.CMD_TIMEOUT)
        return con.transcript, con.cmd("cpu"), con.cmd("cpu selftest")
    finally:
        con.stop()
        if con.varstore:
            os.unlink(con.varstore)
        with open(os.path.join(conftest.WORK, name + ".log"), "w") as f:
            f.write(con.transcript)


# These two come last: they stop the module's machine.
@pytest.mark.qemu_only
def test_single_lp_degrades_cleanly(one_machine, firmware):
    log, cpu, selftest = boot_other("test_smp_single", (), firmware)
    msg = "1 logical processor; no Hyper-Threading sibling in this topology"
    assert msg in log and msg in cpu and msg in selftest
    rows = lp_rows(cpu)
    assert sorted(rows) == [0] and rows[0]["smt"] == 0, cpu
    assert "error" not in selftest.lower()


@pytest.mark.qemu_only
def test_two_cores_are_not_siblings(one_machine, firmware):
    log, cpu, selftest = boot_other("test_smp_cores", ("-smp", "2"), firmware)
    assert re.search(r"^cores\s+2 per package, 1 thread per core$", cpu, re.M), cpu
    rows = lp_rows(cpu)
    assert sorted(rows) == [0, 1], cpu
    assert (rows[0]["core"], rows[1]["core"]) == (0, 1)
    assert (rows[0]["smt"], rows[1]["smt"]) == (0, 0)     # not APIC ID bit 0
    assert "no Hyper-Threading sibling in this topology" in cpu
    assert "LP1: work ran ok (it read APIC ID 1," in selftest
    assert re.search(r"^smp: LP1 APIC ID 1 \(package 0, core 1, SMT 0\): up in", log, re.M), log


@pytest.mark.qemu_only
def test_mp_table_finds_the_processors_without_acpi(one_machine, firmware):
    """BIOS path only: no ACPI tables (i440FX with acpi=off), two packages; SeaBIOS's
    MP table (MultiProcessor Specification 1.4) lists both processors."""
    if firmware != "bios":
        pytest.skip("the MP table is looked for on the legacy-BIOS path only")
    log, cpu, selftest = boot_other("test_smp_mp", ("-smp", "2,sockets=2,cores=1,threads=1"),
                                    firmware, machine="pc,acpi=off")
    assert "smp: 2 logical processors (MP table)" in log, log
    assert re.search(r"^smp: LP1 APIC ID 1 \(package 1, core 0, SMT 0\): up in", log, re.M), log
    assert "LP1: work ran ok (it read APIC ID 1," in selftest


@pytest.mark.qemu_only
def test_mp_table_of_one_package_leaves_the_sibling_to_cpuid(one_machine, firmware):
    """SeaBIOS lists one logical processor per package in its MP table, as BIOSes
    of the Hyper-Threading era did; the sibling then comes from CPUID."""
    if firmware != "bios":
        pytest.skip("the MP table is looked for on the legacy-BIOS path only")
    log, cpu, selftest = boot_other("test_smp_mp_ht", ("-smp", "2,sockets=1,cores=1,threads=2"),
                                    firmware, machine="pc,acpi=off")
    assert "smp: 2 logical processors (CPUID)" in log, log
    assert re.search(r"^smp: LP1 APIC ID 1 \(package 0, core 0, SMT 1\): up in", log, re.M), log


@pytest.mark.qemu_only
def test_mp_table_of_two_ht_packages_gets_every_sibling(one_machine, firmware):
    """G10: two packages of two threads and no ACPI. SeaBIOS's MP table lists the first
    thread of each package (APIC IDs 0 and 2); CPUID (2 logical processors per package,
    1 core) gives each package's sibling, 1 and 3, started after the listed ones."""
    if firmware != "bios":
        pytest.skip("the MP table is looked for on the legacy-BIOS path only")
    log, cpu, selftest = boot_other("test_smp_mp_2ht", ("-smp", "4,sockets=2,cores=1,threads=2"),
                                    firmware, machine="pc,acpi=off")
    assert "smp: 4 logical processors (MP table, each package's other LPs from CPUID)" in log, log
    for lp, apic, pkg, smt in ((1, 2, 1, 0), (2, 1, 0, 1), (3, 3, 1, 1)):
        assert re.search(r"^smp: LP%d APIC ID %d \(package %d, core 0, SMT %d\): up in"
                         % (lp, apic, pkg, smt), log, re.M), log
    assert "LP2 is the Hyper-Threading sibling of LP0" in cpu, cpu
    assert "LP3 is the Hyper-Threading sibling of LP1" in cpu, cpu
    assert "LP2: work ran ok (it read APIC ID 1," in selftest, selftest
