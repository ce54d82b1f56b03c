"""test_bench_host.py - the host side of `bench` (tools/nbproflib/bench.py).

Assembly with GNU as, checked against encodings from the SDM Vol. 2 pages
(ADD 01 /r, JMP EB cb); the R15 refusal found by disassembling the machine
code (so hex snippets are checked too); the shell's line limits; and the
parser of the target's table. The command line is checked before anything
boots: `tools/nbprof --qemu bench` with a bad snippet exits with status 2
without starting QEMU (the image named does not even exist).
"""

import os
import subprocess

import pytest

from conftest import REPO

from nbproflib import bench as nb

TOOL = os.path.join(REPO, "tools", "nbprof")


def test_assembles_intel_syntax_statements():
    assert nb.assemble("add eax, ebx") == bytes.fromhex("01d8")
    assert nb.assemble("add eax, ebx; add ecx, edx") == bytes.fromhex("01d801d1")
    # a local label stays inside the snippet: jmp over one nop
    assert nb.assemble("jmp 1f; nop; 1:") == bytes.fromhex("eb0190")


def test_translate_builds_the_target_line():
    words = nb.translate(["--asm", "add eax, ebx", "-e", "instr_retired", "-u", "4",
                          "--init-asm", "xor eax, eax"])
    assert words == ["bench", "-e", "instr_retired", "-u", "4", "--init", "31c0", "01d8"]
    assert nb.translate(["01D8", "-n", "7"]) == ["bench", "-n", "7", "01d8"]


@pytest.mark.parametrize("argv, msg", [
    (["--asm", "add r15, 1"], "'add    r15,0x1' uses R15"),
    (["--asm", "mov r15d, eax"], "uses R15"),
    (["4983c701"], "uses R15"),                                  # add r15, 1 as hex
    (["--init-asm", "xor r15b, r15b", "--asm", "nop"], "init code: 'xor    r15b,r15b' uses R15"),
    (["--asm", "bogus eax"], "--asm: line 1: Error: no such instruction: `bogus eax'"),
    (["--asm", " "], "--asm: no instructions"),
    (["--asm", "nop", "--asm", "nop"], "one snippet only"),
    (["01d"], "'01d' is not hex bytes"),
    ([], "no snippet"),
    (["--asm", "nop", "-u"], "-u needs a value"),
    (["--asm", "nop", "--bogus", "1"], "unknown option --bogus"),
    (["--asm", "; ".join(["add eax, ebx"] * 70)], "the target's command line would be 286 "
     "characters in 2 words; its shell takes 255 and 16"),
    (["--asm", "nop"] + ["-e", "instr_retired"] * 8, "in 18 words"),
])
def test_bad_arguments_are_refused(argv, msg):
    with pytest.raises(nb.BenchError) as e:
        nb.translate(argv)
    assert msg in str(e.value)


def test_bad_snippet_is_refused_before_booting(tmp_path):
    p = subprocess.run(["/usr/bin/python3", TOOL, "--qemu", "--image", str(tmp_path / "none.img"),
                        "bench", "--asm", "add r15, 1"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True, timeout=60)
    assert p.returncode == 2
    assert "uses R15, the loop counter" in p.stderr
    assert p.stderr.startswith("usage: nbprof")   # the command-line check, before any boot


TABLE = """bench: 4 snippet bytes, 0 init bytes, unroll 2 and 4, loop 10, 1 warm-up + 5 measured runs, ring 3
backend: model 0F_04H (stepped: counts come from the executed instructions); per iteration = (count(2U) - count(U)) / (N*U)
         min       median        tmean  event
        2.00         2.00         2.00  instr_retired:NBOGUSNTAG:u:k  group 1 counter 16
        0.50         1.25        -0.75  instr_retired:NBOGUSNTAG:u:k  group 2 counter 12 [runs disagree]
interference: yes (PMIs 3, NMIs 0 during the runs; runs disagree)
"""


def test_parse_bench_reads_the_table():
    r = nb.parse_bench(TABLE)
    assert (r["snippet_bytes"], r["unroll"], r["loop"], r["warmup"], r["runs"], r["ring"]) == \
        (4, 2, 10, 1, 5, 3)
    assert r["counts"] == {"instr_retired:NBOGUSNTAG:u:k": 2.0,
                           "instr_retired:NBOGUSNTAG:u:k#2": 1.25}
    assert r["events"][1]["min"] == 0.5 and r["events"][1]["tmean"] == -0.75
    assert r["events"][1]["group"] == 2 and r["events"][1]["notes"] == "[runs disagree]"
    assert r["interference"] is True and r["pmis"] == 3 and r["runs_agree"] is False
