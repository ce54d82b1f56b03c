"""test_programs_ht.py - a user's program on either logical processor.

One core with two hyper-threads; the assembly program of test_programs.py
(15010 retired instructions with the x86-64 start file, 15015 with the
i386 one, all at CPL 3 by default) is on the stick. It
runs on LP1 alone, and on both LPs at once through `stat --pair`, where
each LP's count is its own (:t0 / :t1, PMU reference 3.2).
"""

import os
import re
import shutil

from test_programs import SPIN, SPIN_INSNS

SPIN2 = os.path.join(os.path.dirname(SPIN), "asmloop2.elf")
shutil.copyfile(SPIN, SPIN2)
BOOT = {"smp_ht": True, "programs": [SPIN, SPIN2]}


def test_program_on_the_sibling(nb):
    out = nb.cmd("run --cpu 1 --step asmloop")
    assert "instructions: %d (CPL 3)" % SPIN_INSNS in out, out
    assert re.search(r"workload: asmloop, ring 3, lp 1", out), out


def test_program_on_both_lps_counted_per_lp(nb):
    out = nb.cmd("stat -e instr_retired:t0:u -e instr_retired:t1:u --pair asmloop -- asmloop2",
                 timeout=120)
    counts = re.findall(r"^\s+(\d+)  instr_retired:\S+:(t[01])", out, flags=re.M)
    # each LP's program and its exit trampoline's int 0x80, at CPL 3
    assert sorted(counts, key=lambda c: c[1]) == [(str(SPIN_INSNS + 1), "t0"),
                                                  (str(SPIN_INSNS + 1), "t1")], out
    out = nb.cmd("run-pair asmloop -- --ring 0 asmloop2")
    assert "error" not in out, out
    assert re.search(r"workload: asmloop, ring 3, lp 0", out), out
    assert re.search(r"workload: asmloop2, ring 0, lp 1", out), out


def test_one_program_runs_on_one_lp_at_a_time(nb):
    # one .data and .bss: the same program on both LPs at once is refused with the reason
    out = nb.cmd("run-pair forever_is_not_here -- asmloop")
    assert "unknown workload" in out
    # stepped, each run lasts far longer than the sibling's wake-up, so the two overlap in
    # every kernel (unstepped, the 32-bit kernel's LP0 can finish before LP1 starts)
    out = nb.cmd("run --cpu both --step asmloop", timeout=60)
    assert "running on the other LP" in out, out
    # one after the other is fine
    out = nb.cmd("stat -e instr_retired:t0:u -e instr_retired:t1:u --stagger --pair asmloop -- "
                 "asmloop", timeout=120)
    assert len(re.findall(r"^\s+%d  instr_retired" % (SPIN_INSNS + 1), out, flags=re.M)) == 2, out
