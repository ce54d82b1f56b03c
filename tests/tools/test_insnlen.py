"""test_insnlen.py - the kernel's x86 decoder against objdump on the kernel itself.

Every instruction that objdump shows inside a function of build/nbprof.so's
.text (FUNC symbols with their sizes, from readelf) is decoded by
arch/x86/insn.c on the host (build/h/tools/insnlen); its length must be
objdump's, or 0 for an opcode the decoder does not know. Few may be unknown.
"""

import os
import re
import subprocess

import pytest

from conftest import BUILD, REPO

ELF = os.path.join(BUILD, "nbprof.so")
INSNLEN = os.path.join(BUILD, "h", "tools", "insnlen")
LINE = re.compile(r"^\s*([0-9a-f]+):\t([0-9a-f ]+)\t(.*)$")


def run(*args, **kw):
    return subprocess.run(list(args), stdout=subprocess.PIPE, check=True,
                          universal_newlines=True, **kw).stdout


def functions():
    """(start, end) of every FUNC symbol with a size."""
    out = []
    for line in run("readelf", "-sW", ELF).splitlines():
        f = line.split()
        if len(f) >= 8 and f[3] == "FUNC" and f[6] != "UND" and int(f[2], 0) > 0:
            start = int(f[1], 16)
            out.append((start, start + int(f[2], 0)))
    return sorted(set(out))


def instructions():
    """objdump's instruction starts and lengths: no zero-run elision, one line each."""
    insns = []
    for line in run("objdump", "-d", "-z", "--insn-width=16", "-j", ".text", ELF).splitlines():
        m = LINE.match(line)
        if m:
            insns.append((int(m.group(1), 16), len(m.group(2).split()), m.group(3)))
    return insns


@pytest.mark.skipif(not os.path.exists(ELF), reason="no kernel ELF built")
def test_lengths_match_objdump_on_the_kernel(tmp_path):
    if not os.path.exists(INSNLEN):
        subprocess.run(["make", "-s", "-C", REPO, "B=" + BUILD, os.path.relpath(INSNLEN, REPO)],
                       check=True)
    text = tmp_path / "text.bin"
    run("objcopy", "-O", "binary", "-j", ".text", ELF, str(text))
    base = next(int(f[3], 16) for f in (l.split() for l in run("objdump", "-h", ELF).splitlines())
                if len(f) > 3 and f[1] == ".text")
    funcs = functions()
    insns = [(a, n, t) for a, n, t in instructions()
             if any(s <= a and a + n <= e for s, e in funcs)]
    assert len(insns) > 1000
    out = run(INSNLEN, str(text), input="".join("%x\n" % (a - base) for a, _, _ in insns))
    got = [l.split() for l in out.splitlines()]
    assert len(got) == len(insns)
    wrong, unknown = [], 0
    for (a, n, t), (_, length, status) in zip(insns, got):
        if int(length) == 0:
            unknown += 1
        elif int(length) != n:
            wrong.append("%x %s: decoder %s, objdump %d" % (a, t, length, n))
    assert not wrong, "\n".join(wrong[:20])
    assert unknown <= len(insns) // 100, "%d of %d unknown" % (unknown, len(insns))
    ok = sum(1 for g in got if g[2] == "ok")
    assert ok >= len(insns) * 95 // 100    # memory operands known for nearly all
