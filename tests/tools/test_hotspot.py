"""test_hotspot.py - hotspot's parser names the functions of nbprof's perf.data.

hotspot (the perf GUI) reads perf.data through hotspot-perfparser, which
maps addresses to files with elfutils, not with perf's code. The parser's
output stream (QPERFSTREAM: a magic, a QDataStream version, then messages
of a little-endian length and a QDataStream body: strings, locations,
symbols, samples; perfparser's perfunwind.cpp) is decoded here, and every
frame of every sample must be named as the ELF's symbol table names it: the
kernel's functions (a dumpgen recording over build/nbprof.so) and a user's
program (hello.elf from the SDK beside the kernel). elfutils names an
address only inside a symbol's size, so frames in the padding after a
function or in a sizeless assembly label are left out of the comparison,
and an inlined function counts as the function it was inlined into.
"""

import os
import shutil
import struct
import subprocess

import pytest

from conftest import BUILD

from nbproflib import perfdata as pd

PARSER = next((p for p in ("/usr/lib/x86_64-linux-gnu/libexec/hotspot-perfparser",
                           shutil.which("hotspot-perfparser") or "")
               if p and os.access(p, os.X_OK)), None)
ELF = os.path.join(BUILD, "nbprof.so")
HELLO = os.path.join(BUILD, "sdk", "hello.elf")
BASE = 0x3e4ec000                       # dumpgen's image base

pytestmark = [
    pytest.mark.skipif(PARSER is None, reason="hotspot-perfparser not installed (Debian hotspot)"),
    pytest.mark.skipif(not os.path.exists(ELF), reason="no kernel ELF built (make)"),
]

# perfparser's PerfUnwind::EventType
LOCATION, SYMBOL, STRING, SAMPLE = 3, 4, 5, 13


def qbytes(m, p):
    n, = struct.unpack_from(">I", m, p)
    return (None, p + 4) if n == 0xFFFFFFFF else (m[p + 4:p + 4 + n], p + 4 + n)


def read_stream(blob):
    """[(tid, [names of the frames, innermost first; None when unnamed])]."""
    assert blob[:12] == b"QPERFSTREAM\0", blob[:16]
    strings, locs, syms, samples = {}, {}, {}, []
    p = 16
    while p < len(blob):
        size, = struct.unpack_from("<i", blob, p)
        m = blob[p + 4:p + 4 + size]
        assert len(m) == size, "truncated message"
        p += 4 + size
        if m[0] == STRING:
            i, = struct.unpack_from(">i", m, 1)
            strings[i] = qbytes(m, 5)[0].decode()
        elif m[0] == LOCATION:
            i, addr, _, _, _, _, parent = struct.unpack_from(">iQiIiii", m, 1)
            locs[i] = (addr, parent)
        elif m[0] == SYMBOL:
            i, name = struct.unpack_from(">ii", m, 1)
            syms[i] = name
        elif m[0] == SAMPLE:
            _, tid, _, _, n = struct.unpack_from(">iiQII", m, 1)
            samples.append((tid, list(struct.unpack_from(">%di" % n, m, 25))))

    def frame(loc):
        addr = locs[loc][0]
        while locs[loc][1] != -1:          # an inlined function: the one it is in
            loc = locs[loc][1]
        name = strings.get(syms[loc]) if loc in syms else None
        return addr, name
    return [(tid, [frame(f) for f in frames]) for tid, frames in samples]


def parse(path, tmp_path):
    out = str(tmp_path / "parsed.qt")
    p = subprocess.run([PARSER, "--input", path, "--output", out], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
    assert p.returncode == 0, p.stderr
    with open(out, "rb") as f:
        return read_stream(f.read())


class SizedSymbols:
    """The functions of an ELF with their sizes (`nm -S`), at a runtime base."""

    def __init__(self, path, base):
        out = subprocess.run(["nm", "-S", path], stdout=subprocess.PIPE, check=True,
                             universal_newlines=True).stdout
        self.base, self.funcs, self.starts = base, [], []
        for f in (line.split() for line in out.splitlines()):
            if len(f) == 4 and f[2] in "TtWw":
                self.funcs.append((int(f[0], 16), int(f[1], 16), f[3]))
            if len(f) in (3, 4) and f[-2] not in "Uv":    # any defined symbol: elfutils
                self.starts.append(int(f[0], 16))            # may name the address by it

    def names(self, addr):
        """The names of the sized functions that hold addr (aliases: several),
        unless another symbol lies between them and addr: a sizeless label
        inside the function, or a linker-script value such as _data_size
        that happens to fall there (elfutils then names it or nothing)."""
        rel = addr - self.base
        last = max((a for a in self.starts if a <= rel), default=None)
        if not any(a == last and rel < a + s for a, s, _ in self.funcs):
            return set()
        # a sized label inside a sized function (wl_user_exit in
        # wl_user_trampoline): elfutils may name either
        return {n.split(".")[0] for a, s, n in self.funcs if a <= rel < a + s}


def check_named(samples, symtabs, want_frames):
    """Every frame inside a sized function is named with it; how many were."""
    named = 0
    for _, frames in samples:
        for addr, name in frames:
            names = set().union(*(t.names(addr) for t in symtabs))
            if not names:
                continue
            assert name is not None and name.split(".")[0] in names, (hex(addr), name, names)
            named += 1
    assert named >= want_frames, named
    return named


def test_the_kernels_functions(dumpgen, decode, tmp_path):
    nm = subprocess.run(["nm", "-n", ELF], stdout=subprocess.PIPE, check=True,
                        universal_newlines=True).stdout
    (tmp_path / "real.nm").write_text(nm)
    (tmp_path / "cap.log").write_text(dumpgen("-n", 200, "--nm", str(tmp_path / "real.nm"),
                                              "dump"))
    decode("cap.log", "--elf", ELF, "--perf-data", "perf.data", "-q")
    samples = parse(str(tmp_path / "perf.data"), tmp_path)
    assert len(samples) == 200
    kernel = SizedSymbols(ELF, BASE)
    # dumpgen's addresses fall anywhere up to the next symbol, so many are in
    # padding or after a label; still, more than one frame a sample is checked
    check_named(samples, [kernel], 200)


@pytest.mark.skipif(not os.path.exists(HELLO), reason="no SDK program built (make check builds it)")
def test_a_users_program_beside_the_kernel(tmp_path):
    """Samples in hello.elf's work() called from main() called from _start,
    called from the kernel's runner: each frame named from its own ELF."""
    prog_base = 0x251000
    hello = SizedSymbols(HELLO, prog_base)
    kernel = SizedSymbols(ELF, BASE)
    at = {n: prog_base + a for a, _, n in hello.funcs}
    kat = {n: BASE + a for a, _, n in kernel.funcs}
    runner = next(n for n in ("user_call", "wl_call_ring0") if n in kat)
    samples = []
    for k in range(20):
        samples.append({"lp": 0, "event": 0, "tsc": 100 * k, "ip": at["work"] + 4 + k % 8,
                        "chain": [at["main"] + 0x20, at["_start"] + 0x10, kat[runner] + 8]})
    path = str(tmp_path / "perf.data")
    pd.write_perf_data(path, samples, [("instr_retired", 1000)], "hello",
                       [pd.elf_dso(ELF, BASE), pd.elf_dso(HELLO, prog_base)], 1000000, 0)
    got = parse(path, tmp_path)
    assert len(got) == 20
    check_named(got, [hello, kernel], 20 * 3)
    for _, frames in got:
        assert [n for _, n in frames[:2]] == ["work", "main"], frames
