"""test_symbols.py - nbproflib/symbols.py: which kernel symbols count and how an
address is named.

The kernel's own table (tools/build/gensyms, test_gensyms.py) and the host
tools use the same parse_nm; the CRC-32 and count of that list go in the
dump header (prof/dump.c dump_symtab_crc), so the first test compares the
host's figure with the kernel's code through dumpgen. Lookups take runtime
addresses: link address + the image base the header gives.
"""

import struct
import zlib

import pytest

from nbproflib.frames import Capture
from nbproflib.recording import Recording
from nbproflib.symbols import NoSymbols, Symbols, frame_symbol, parse_nm

NM = """\
0000000000000000 A ImageBase
0000000000001000 T _text
0000000000001000 T _start
0000000000001010 t .Llocal
0000000000001020 t helper
0000000000001040 W weak_thing
0000000000001080 D data_thing
00000000000010c0 T odd-name
0000000000001100 T last
0000000000001200 T _etext
0000000000001300 T after_text
                 U undefined
"""
BASE = 0x3e4ec000


def test_parse_nm_keeps_code_symbols_in_the_text_only():
    lo, hi, syms = parse_nm(NM.splitlines())
    assert (lo, hi) == (0x1000, 0x1200)
    assert syms == [(0x1000, "_start"), (0x1020, "helper"), (0x1040, "weak_thing"),
                    (0x1100, "last")]
    assert parse_nm(reversed(NM.splitlines()))[2] == syms        # sorted whatever the order


def test_parse_nm_needs_the_text_bounds():
    with pytest.raises(SystemExit, match="_text/_etext not found"):
        parse_nm([l for l in NM.splitlines() if "_etext" not in l])


def test_crc_and_count_are_the_kernels(dumpgen):
    """dumpgen's header carries dump_symtab_crc of the same nm list, computed by the kernel's code."""
    nm = dumpgen("nm")
    cap = Capture()
    cap.add_text(dumpgen("-n", 5, "dump"), "dump")
    h = Recording(cap).header
    syms = Symbols(nm, h["image_base"])
    assert (syms.crc, syms.count) == (h["symtab_crc"], h["symtab_count"])
    assert syms.count == len(parse_nm(nm.splitlines())[2]) > 0


def test_crc_covers_each_address_and_name():
    syms = Symbols(NM, BASE)
    crc = 0
    for a, n in parse_nm(NM.splitlines())[2]:
        crc = zlib.crc32(struct.pack("<Q", a) + n.encode() + b"\0", crc)
    assert syms.crc == crc
    moved = Symbols(NM.replace("0000000000001020 t helper", "0000000000001024 t helper"), BASE)
    assert moved.crc != syms.crc and moved.count == syms.count


@pytest.mark.parametrize("addr, want", [
    (BASE + 0x1000, ("_start", 0)),
    (BASE + 0x101f, ("_start", 0x1f)),         # .Llocal names nothing: still _start
    (BASE + 0x1020, ("helper", 0)),
    (BASE + 0x10d0, ("weak_thing", 0x90)),     # neither data nor unsafe names count
    (BASE + 0x11ff, ("last", 0xff)),
    (BASE + 0x1200, (None, 0)),                # _etext and beyond: not the kernel's text
    (BASE + 0xfff, (None, 0)),
    (0x1000, (None, 0)),                       # a link address is not a runtime address
])
def test_lookup_takes_runtime_addresses(addr, want):
    assert Symbols(NM, BASE).lookup(addr) == want


def test_image_base_symbol_is_read():
    assert Symbols(NM.replace("0000000000000000 A ImageBase", "0000000000400000 A ImageBase"),
                   BASE).image_base == 0x400000
    assert Symbols(NM, BASE).image_base == 0


def test_return_addresses_name_the_call_site():
    """A call that ends its function returns into the next one: looked up at addr - 1."""
    syms = Symbols(NM, BASE)
    assert frame_symbol(syms, BASE + 0x1020, False) == ("helper", 0)
    assert frame_symbol(syms, BASE + 0x1020, True) == ("_start", 0x20)
    assert frame_symbol(syms, BASE + 0x1200, True) == ("last", 0x100)
    assert frame_symbol(NoSymbols(), BASE + 0x1020, True) == (None, 0)

