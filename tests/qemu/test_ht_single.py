"""test_ht_single.py - the Hyper-Threading commands on a machine with one LP.

QEMU's default topology has one logical processor, so there is no sibling:
--cpu 1 and run-pair are refused with the reason, --cpu both degrades to
LP0 alone with a note, and a loop of N iterations still retires 3N + 6
instructions (arch/x86/64/workloads.S).
"""

import re

BOOT = {}


def one_error(out):
    lines = [l for l in out.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), out
    return lines[0]


def test_cpu1_and_pair_are_refused(nb):
    assert "one logical processor" in one_error(nb.cmd("run --cpu 1 loop 3"))
    assert "one logical processor" in one_error(nb.cmd("run-pair loop 3 -- loop 4"))
    assert "one logical processor" in one_error(nb.cmd("stat --cpu 1 loop 3"))
    assert "one logical processor" in one_error(nb.cmd("stat --pair loop 3 -- loop 4"))


def test_both_degrades_to_lp0(nb):
    out = nb.cmd("run --cpu both --step loop 3")
    assert re.search(r"^note: .*one logical processor; running on LP0 only$", out, re.M), out
    assert "instructions: 15 (CPL 0)" in out and "LP1" not in out
    # ring 3 and :u: the workload's 15 and its exit's int 0x80, without the kernel's window
    out = nb.cmd("stat -e instr_retired:u --ring 3 --cpu both loop 3")
    assert "counting LP0 only" in out
    assert re.search(r"^\s+16\s+instr_retired", out, re.M), out
