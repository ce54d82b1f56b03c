"""symbols - names for sample addresses: the kernel's text symbols and user programs'.

Which kernel symbols count is defined once, here (parse_nm): the kernel's
own embedded table (tools/build/gensyms) and the host tools' lookups use
the same list, so the CRC-32 and count the kernel puts in a dump header
can be compared with the ELF the decoder reads.

Which symbols: every code symbol nm reports (types T, t, W, w), global or
local, typed as a function or a plain label - so assembly entry points
such as isr_common, wl_calls_level, wl_ring0_return and the ring-3 exit
trampoline (wl_user_trampoline, wl_user_exit) name the code after them.
Not kept: the assembler's local labels (.L*, which only appear when an
object keeps them) and numeric labels, which name no function; absolute
and data symbols; the section bounds _text/_etext.
"""

import bisect
import os
import re
import struct
import subprocess
import sys
import zlib

TEXT_TYPES = set("TtWw")
SAFE_NAME = re.compile(r"^[A-Za-z0-9_.$@]+$")
LOCAL_LABEL = re.compile(r"^\.L")   # the assembler's local labels: .Lfoo, .L123


def parse_nm(lines):
    """Return (text_start, text_end, [(addr, name)]) from `nm -n` lines."""
    syms = []
    bounds = {}
    for line in lines:
        parts = line.split()
        if len(parts) != 3:
            continue  # undefined symbols have no address
        addr_s, kind, name = parts
        try:
            addr = int(addr_s, 16)
        except ValueError:
            continue
        if name in ("_text", "_etext"):
            bounds[name] = addr
        if kind in TEXT_TYPES:
            syms.append((addr, name))
    if "_text" not in bounds or "_etext" not in bounds:
        sys.exit("gensyms: _text/_etext not found in nm output")
    lo, hi = bounds["_text"], bounds["_etext"]
    keep = [(a, n) for a, n in syms
            if lo <= a < hi and n not in ("_text", "_etext") and SAFE_NAME.match(n)
            and not LOCAL_LABEL.match(n)]
    keep.sort()
    return lo, hi, keep


class Symbols:
    """Link-address symbol table from `nm -n` text, as the kernel's own table holds it."""

    def __init__(self, nm_text, base):
        lo, hi, syms = parse_nm(nm_text.splitlines())
        self.lo, self.hi, self.base = lo, hi, base
        self.addrs = [a for a, _ in syms]
        self.names = [n for _, n in syms]
        crc = 0
        for a, n in syms:
            crc = zlib.crc32(struct.pack("<Q", a) + n.encode() + b"\0", crc)
        self.crc, self.count = crc, len(syms)
        self.image_base = 0
        for line in nm_text.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[2] == "ImageBase":
                self.image_base = int(parts[0], 16)

    def lookup(self, addr):
        """(name, offset) of a runtime address, or (None, 0)."""
        rel = (addr - self.base) & 0xFFFFFFFFFFFFFFFF
        if addr < self.base or not self.lo <= rel < self.hi:
            return None, 0
        i = bisect.bisect_right(self.addrs, rel) - 1
        if i < 0:
            return None, 0
        return self.names[i], rel - self.addrs[i]


class ProgramSymbols:
    """A user program's function symbols (`nm -n` of its ELF) at its runtime base."""

    def __init__(self, path, base, span):
        text = subprocess.run(["nm", "-n", path], stdout=subprocess.PIPE, check=True,
                              universal_newlines=True).stdout
        self.base, self.span, self.path = base, span, path
        self.addrs, self.names = [], []
        for line in text.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "TtWw" and not parts[2].startswith("."):
                self.addrs.append(int(parts[0], 16))
                self.names.append(parts[2])

    def lookup(self, addr):
        if not self.base <= addr < self.base + self.span:
            return None, 0
        i = bisect.bisect_right(self.addrs, addr - self.base) - 1
        if i < 0:
            return None, 0
        return self.names[i], addr - self.base - self.addrs[i]


class WithPrograms:
    """The kernel's symbols, then each user program's."""

    def __init__(self, kernel, programs):
        self.kernel, self.programs = kernel, programs
        for attr in ("crc", "count", "image_base", "base"):
            if hasattr(kernel, attr):
                setattr(self, attr, getattr(kernel, attr))

    def lookup(self, addr):
        name, off = self.kernel.lookup(addr)
        for p in self.programs:
            if name is not None:
                break
            name, off = p.lookup(addr)
        return name, off


def program_symbols(syms, cap, files):
    """(symbols with the programs', [(ELF path, runtime base)]) for the program ELF files.

    Each file is matched to a dump's NBP line by its CRC-32, else by its name.
    """
    progs, extra = [], []
    for path in files:
        with open(path, "rb") as f:
            crc = zlib.crc32(f.read())
        stem = os.path.basename(path).rsplit(".", 1)[0]
        match = [n for n, (_, _, c) in cap.programs.items() if c == crc] or \
            [n for n in cap.programs if n == stem]
        if not match:
            sys.stderr.write("nbprof-decode: warning: %s is none of the dump's programs (%s)\n"
                             % (path, ", ".join(sorted(cap.programs)) or "none"))
            continue
        base, span, c = cap.programs[match[0]]
        if c != crc:
            sys.stderr.write("nbprof-decode: warning: %s is not the file program %s was loaded "
                             "from (CRC-32 %08x, target %08x)\n" % (path, match[0], crc, c))
        progs.append(ProgramSymbols(path, base, span))
        extra.append((path, base))
    return (WithPrograms(syms, progs) if progs else syms), extra


class NoSymbols:
    crc = count = None

    def lookup(self, addr):
        return None, 0


def frame_symbol(syms, addr, is_return):
    """(name, offset) as `script` shows a frame: return addresses are looked up at addr - 1."""
    name, off = syms.lookup(addr - 1 if is_return else addr)
    return name, (off + 1 if is_return and name else off)

