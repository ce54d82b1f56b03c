"""test_bench.py - `bench`, the snippet benchmark, under the PMU model.

Under the model the counts come from single-stepping the generated loop, so
per-iteration values are exact: k single-uop instructions give k.00 retired
instructions per iteration, whatever the unroll, and a snippet's branches
are counted as branches. Bad input is refused before anything runs; the
snippet workload then still holds the code of the last good bench (or its
initial ret), which `run --step snippet` shows by its instruction count.
"""

import json
import os
import re
import subprocess

import pytest

from nbproflib import qemu  # noqa: E402  on the path conftest sets
from conftest import REPO, make_image

ROW = re.compile(r"^ *(-?\d+\.\d\d) +(-?\d+\.\d\d) +(-?\d+\.\d\d)  (\S+)  group (\d+)", re.M)
ADD_EAX_EBX = "01d8"            # add eax, ebx (SDM Vol. 2, ADD 01 /r)
# add eax,ebx; add ecx,edx; xor esi,esi; or eax,ecx; sub ebx,edx: no REX, so the same
# instructions in the 64-bit and the ia32 kernel (--nbprof-firmware=uefi-ia32)
SINGLE_UOP = ["01d8", "01d1", "31f6", "09c8", "29d3"]


def rows(out):
    """[(spec, (min, median, tmean), group)] in printed order."""
    return [(m.group(4), m.group(1, 2, 3), int(m.group(5))) for m in ROW.finditer(out)]


def row(out, spec):
    """The figures of the first row whose spec starts with spec (the target adds :u:k)."""
    for name, figs, _ in rows(out):
        if name == spec or name.startswith(spec + ":"):
            return figs
    raise AssertionError("no row for %s in:\n%s" % (spec, out))


def bench(nb, args):
    out = nb.cmd("bench " + args)
    assert "error:" not in out, out
    return out


INSTR = "instr_retired:NBOGUSNTAG"


def test_one_add_is_one_instruction(nb):
    out = bench(nb, "-e instr_retired:NBOGUSNTAG " + ADD_EAX_EBX)
    assert row(out, INSTR) == ("1.00", "1.00", "1.00")
    assert len(rows(out)) == 1
    assert re.search(r"^interference: none \(PMIs 0, NMIs 0 during the runs; all runs agree\)$",
                     out, re.M)


@pytest.mark.parametrize("ring", [0, 3])
@pytest.mark.parametrize("u", [1, 4])
@pytest.mark.parametrize("k", [1, 2, 5])
def test_k_instructions_give_k(nb, k, u, ring):
    code = "".join(SINGLE_UOP[:k])
    out = bench(nb, "-e instr_retired:NBOGUSNTAG -u %d -n 20 -r 3 --ring %d %s" % (u, ring, code))
    assert row(out, INSTR) == ("%d.00" % k,) * 3
    assert "unroll %d and %d, loop 20" % (u, 2 * u) in out


def test_branch_snippet_counts_its_branches(nb):
    # jmp over a never executed nop (EB 01 90), add (01 D8), jz +0 (74 00): three
    # instructions, two branches, counted by direction whether the model's predictor got
    # them right or not (MMxP, MMxM); the jmp is taken, the jz +0 lands on the next
    # instruction either way: retired not taken.
    out = bench(nb, "-e instr_retired:NBOGUSNTAG -e branch_retired:MMTP:MMTM "
                    "-e branch_retired:MMNP:MMNM -u 2 -n 10 eb019001d87400")
    assert row(out, INSTR) == ("3.00",) * 3
    assert row(out, "branch_retired:MMTP:MMTM") == ("1.00",) * 3
    assert row(out, "branch_retired:MMNP:MMNM") == ("1.00",) * 3


def test_instructions_real_parts_count_twice(nb):
    """INSTR_RETIRED counts MFENCE, SFENCE and EMMS as two instructions on a Pentium D
    (the ISPASS 2013 data, pmu/model/p4_core.c); LFENCE and an add as one."""
    for code, want in (("0faef0", "2.00"), ("0faef8", "2.00"), ("0f77", "2.00"),
                       ("0faee8", "1.00"), (ADD_EAX_EBX, "1.00")):
        out = bench(nb, "-e instr_retired:NBOGUSNTAG " + code)
        assert row(out, INSTR)[1] == want, (code, out)


def test_init_code_cancels(nb):
    # five init instructions run once per call: they cancel in the difference
    out = bench(nb, "-e instr_retired:NBOGUSNTAG --init 01d801d801d801d801d8 -n 7 01d8")
    assert row(out, INSTR)[1] == "1.00"


def test_more_events_than_fit_are_grouped(nb):
    # instr_retired counts only through CRU_ESCR0/1, which reach the six IQ counters
    # 12-17 (PMU reference 1, counter and ESCR tables): a seventh copy needs a second group
    ev = " ".join(["-e instr_retired:NBOGUSNTAG"] * 7)
    out = bench(nb, ev + " 01d8")          # 16 words: the shell's limit
    assert [g for _, _, g in rows(out)] == [1] * 6 + [2], out
    assert all(figs == ("1.00",) * 3 for _, figs, _ in rows(out))


def snippet_steps(nb):
    out = nb.cmd("run --step snippet")
    m = re.search(r"^instructions: (\d+)", out, re.M)
    assert m, out
    return int(m.group(1))


@pytest.mark.parametrize("args, msg", [
    ("01d", r"odd number of hex digits"),
    ("01zz", r"'z' at position 3 is not a hex digit"),
    ("--init 0g 01d8", r"--init: 'g' at position 2"),
    ('""', r"the snippet is empty"),
    ("01d883c0", r"CODEHEX: the instruction at byte 2 is cut off \(needs 3 bytes, has 2\)"),
    ("--init 01 01d8", r"--init: the instruction at byte 0 is cut off"),
    # 2U = 2048 copies of 2 bytes and the loop: 37 bytes in x86-64 (10 push, 7 mov, 3 dec,
    # 6 jnz, 11 pop+ret), 26 in ia32 (4 push, 5 push N, 3 dec, 6 jnz, 3 add, 5 pop+ret)
    ("-u 1024 9090", r"\((4133|4122) bytes: 2048 x 2 snippet bytes, 0 init and (37|26) of loop\) "
                     r"does not fit the 3072-byte snippet area"),
    ("-u 1025 01d8", r"-u: must be 1\.\.1024"),
    ("-e no_such_event 01d8", r"no_such_event"),
    ("-r 0 01d8", r"-r: must be 1\.\.64"),
    ("--ring 2 01d8", r"--ring: must be 0 or 3"),
    ("", r"no CODEHEX"),
])
def test_bad_input_runs_nothing(nb, firmware, args, msg):
    bench(nb, "-e instr_retired:NBOGUSNTAG -n 3 01d801d8")
    # 14 + I + N*(U*K + 2), ia32 11 + ... (the snippet workload's help): 2U = 2 ran last
    before = snippet_steps(nb)
    assert before == (14 if firmware == qemu.DEFAULT_FIRMWARE else 11) + 0 + 3 * (2 * 2 + 2)
    out = nb.cmd("bench " + args)
    assert re.search(r"^error: .*" + msg, out, re.M), out
    assert "interference" not in out
    assert snippet_steps(nb) == before


@pytest.mark.qemu_only
def test_host_command_prints_one_per_iteration():
    """tools/nbprof --qemu assembles the text, runs bench on its own machine, prints the table."""
    image = make_image("test_bench_host")
    tool = os.path.join(REPO, "tools", "nbprof")
    p = subprocess.run(["/usr/bin/python3", tool, "--qemu", "--image", image, "bench", "--asm",
                        "add eax, ebx", "-e", "instr_retired"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert row(p.stdout, "instr_retired") == ("1.00",) * 3
    p = subprocess.run(["/usr/bin/python3", tool, "--qemu", "--image", image, "--json", "bench",
                        "--asm", "add eax, ebx; sub ecx, edx", "-u", "4", "-e", "instr_retired"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                       timeout=300)
    res = json.loads(p.stdout)
    assert res["status"] == 0 and res["command"].endswith(" 01d829d1")
    assert [e["median"] for e in res["events"]] == [2.0]
    assert res["interference"] is False and res["unroll"] == 4


@pytest.mark.parametrize("args, vector", [("0f0b", 6),             # ud2: #UD
                                          ("--ring 3 fa", 13)])    # cli at CPL 3: #GP
def test_faulting_snippet_is_reported_and_the_shell_lives(nb, args, vector):
    out = nb.cmd("bench -e instr_retired " + args)
    assert re.search(r"^error: the snippet faulted \(vector %d\); nothing measured$" % vector,
                     out, re.M), out
    assert "interference" not in out
    assert row(bench(nb, "-e instr_retired -n 5 01d8"), "instr_retired") == ("1.00",) * 3


def test_help_describes_bench(nb):
    out = nb.cmd("help bench")
    assert out.splitlines()[0] == ("usage: bench [-e SPEC]... [--init HEX] [-u U] [-n N] [-w W] "
                                   "[-r R] [--ring 0|3] CODEHEX")
    assert "counter in R15" in out and "3 KiB snippet area" in out
    assert re.search(r"^  bench +measure a code snippet per iteration", nb.cmd("help"), re.M)
