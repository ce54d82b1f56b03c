"""test_program_symbols.py - naming samples in a user's program on the host.

`dump` prints one NBP line per loaded program (its name, the runtime address
of its link address 0, its span and its file's CRC-32); tools/nbprof-decode
--program FILE matches an SDK-built ELF to that line and names addresses in
it from the file's own symbols, and the perf.data writer gets the program as
a second DSO at that address. Expected values come from binutils' nm.
"""

import os
import subprocess
import zlib

import pytest

from conftest import BUILD, REPO

from nbproflib import frames, perfdata, recording, symbols

HELLO = os.path.join(BUILD, "sdk", "hello.elf")
BASE = 0x10b000



@pytest.fixture(scope="module")
def hello():
    if not os.path.exists(HELLO):
        subprocess.run(["make", "-s", "-C", REPO, "B=" + BUILD,
                        os.path.relpath(HELLO, REPO)], check=True)
    nm = subprocess.run(["nm", HELLO], stdout=subprocess.PIPE, check=True,
                        universal_newlines=True).stdout
    syms = {f[2]: int(f[0], 16) for f in (l.split() for l in nm.splitlines()) if len(f) == 3}
    with open(HELLO, "rb") as f:
        crc = zlib.crc32(f.read())
    return syms, crc


def nbp_line(name, base, crc):
    """dump's NBP: line as workload/program.c program_nbp_line frames it (CRC-32 of the body)."""
    body = " %s base=%x span=4000 crc=%08x" % (name, base, crc)
    return "NBP:%s|%08X" % (body, zlib.crc32(body.encode()))


def capture(crc, name="hello"):
    cap = frames.Capture()
    cap.add_text("# dump: 3 frames, frames 0.. follow\n" + nbp_line(name, BASE, crc) + "\n",
                 "dump")
    return cap


def test_a_damaged_nbp_line_is_not_used(hello):
    """D3: one changed digit of base= renamed every program sample (hello;work became
    hello;main) with no warning. A line whose CRC does not match, one without a CRC and
    two captures that disagree are not used, and each is a problem of the recording."""
    _, crc = hello
    good = nbp_line("hello", BASE, crc)
    damaged = good.replace("base=%x" % BASE, "base=%x" % (BASE + 0x100))
    assert damaged != good
    old_style = good.split("|")[0]
    for text, why in ((damaged, "CRC mismatch"), (old_style, "not a whole NBP: line")):
        cap = frames.Capture()
        cap.add_text(text + "\n", "cap")
        assert cap.programs == {}
        assert [(s, n) for s, n, _ in cap.bad_programs] == [("cap", 1)]
        assert why in cap.bad_programs[0][2]
        problems = recording.Recording(cap).problems
        assert any("cap:1: NBP: program line not used (%s" % why in p for p in problems), problems
    cap = frames.Capture()
    cap.add_text(good + "\n", "a")
    cap.add_text(nbp_line("hello", BASE + 0x1000, crc) + "\n", "b")
    assert cap.programs == {"hello": (BASE, 0x4000, crc)}
    assert "differs from an earlier capture" in cap.bad_programs[0][2]
    cap = frames.Capture()
    cap.add_text(good + "\n" + good + "\n", "a")        # the same line twice: fine
    assert cap.bad_programs == [] and cap.programs == {"hello": (BASE, 0x4000, crc)}


class NoKernel:
    def lookup(self, addr):
        return None, 0


def test_nbp_lines_name_addresses_in_the_program(hello):
    syms, crc = hello
    cap = capture(crc)
    assert cap.programs == {"hello": (BASE, 0x4000, crc)}
    named, extra = symbols.program_symbols(NoKernel(), cap, [HELLO])
    assert extra == [(HELLO, BASE)]
    assert named.lookup(BASE + syms["work"] + 3) == ("work", 3)
    assert named.lookup(BASE + syms["main"]) == ("main", 0)
    assert named.lookup(BASE + 0x4000) == (None, 0)           # past the program
    assert named.lookup(BASE - 1) == (None, 0)


def test_a_file_that_is_not_the_loaded_one_is_named_with_a_warning(hello, capsys):
    syms, crc = hello
    named, extra = symbols.program_symbols(NoKernel(), capture(crc ^ 1), [HELLO])
    assert "is not the file program hello was loaded from" in capsys.readouterr().err
    assert named.lookup(BASE + syms["work"]) == ("work", 0)
    named, extra = symbols.program_symbols(NoKernel(), capture(crc ^ 1, "other"), [HELLO])
    assert "none of the dump's programs" in capsys.readouterr().err
    assert extra == [] and named.lookup(BASE + syms["work"]) == (None, 0)


def test_perf_data_gets_the_program_as_a_dso(hello):
    syms, _ = hello
    dso = perfdata.elf_dso(HELLO, BASE)
    assert dso.base == BASE
    # an executable segment (mapped at base + vaddr in an MMAP record) holds work()
    assert any(vaddr <= syms["work"] < vaddr + memsz for vaddr, memsz, _ in dso.segments)


def test_perf_data_takes_an_elf32_program():
    # nbprof-cc -m32, for the 32-bit kernel: its executable PT_LOAD read from Elf32_Phdr
    hello32 = os.path.join(BUILD, "sdk32", "hello.elf")
    if not os.path.exists(hello32):
        subprocess.run(["make", "-s", "-C", REPO, "B=" + BUILD, hello32], check=True)
    work = int(next(l.split()[0] for l in subprocess.run(
        ["nm", hello32], stdout=subprocess.PIPE, check=True,
        universal_newlines=True).stdout.splitlines() if l.endswith(" work")), 16)
    dso = perfdata.elf_dso(hello32, BASE)
    assert len(dso.segments) == 1
    vaddr, memsz, offset = dso.segments[0]
    assert vaddr <= work < vaddr + memsz and offset % 4096 == 0
