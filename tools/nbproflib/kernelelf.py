"""kernelelf - which kernel ELF names a recording's samples.

Every kernel link carries a GNU build-id note (ld --build-id=sha1), first
in its .data section so that the EFI images objcopy makes from it carry the
note too (linker.ld, arch/x86/buildid.h). The kernel prints it at boot and
in `cpu`, and `dump` (format version 5) puts it in the recording's header.
The ELF that names the samples is the one whose note holds the same bytes:
the one given with --elf, else whichever of the kernels the build makes
(build/nbprof.so, build/k32/nbprof.so, build/nbprof32.elf) matches. A
recording from an older kernel (format 4 and before) has no build id: there
the symbol table's checksum in the header decides instead.
"""

import os
import struct
import subprocess

from nbproflib import qemu
from nbproflib.frames import DecodeError

NT_GNU_BUILD_ID = 3
SHT_NOTE = 7
# (e_shoff format and offset, e_shentsize offset, section header layout: name,
# type, offset, size in order) of each ELF class (gABI "ELF Header", "Sections").
ELF_SECTIONS = {
    1: ("<I", 0x20, 0x2E, "<IIIIII", (0, 1, 4, 5)),
    2: ("<Q", 0x28, 0x3A, "<IIQQQQ", (0, 1, 4, 5)),
}


class KernelMismatch(DecodeError):
    """The kernel ELF is not the one that made the recording."""


def candidates():
    """The kernel ELFs the build makes, the 64-bit one first."""
    return [qemu.kernel_elf(fw) for fw in ("uefi-x64", "uefi-ia32", "bios")]


def parse_note(data, off, end):
    """The build id of the GNU build-id note at data[off:end], or None."""
    if off + 16 > end:
        return None
    namesz, descsz, ntype = struct.unpack_from("<III", data, off)
    if namesz != 4 or ntype != NT_GNU_BUILD_ID or data[off + 12:off + 16] != b"GNU\0":
        return None
    if not 0 < descsz <= end - off - 16:
        return None
    return bytes(data[off + 16:off + 16 + descsz])


def elf_build_id(path):
    """The build id of the ELF file at path (bytes), or None when it has none.

    Looked for in a note section, and at the start of .data, where the
    kernel's link scripts put it."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] not in ELF_SECTIONS:
        raise DecodeError("%s: not an ELF32 or ELF64 file" % path)
    offfmt, offat, entat, fmt, order = ELF_SECTIONS[data[4]]
    try:
        shoff, = struct.unpack_from(offfmt, data, offat)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, entat)
        secs = []
        for i in range(shnum):
            sh = struct.unpack_from(fmt, data, shoff + i * shentsize)
            secs.append(tuple(sh[k] for k in order))
        stroff = secs[shstrndx][2]
    except (struct.error, IndexError):
        raise DecodeError("%s: truncated ELF file" % path) from None
    for name, stype, off, size in secs:
        end = data.find(b"\0", stroff + name)
        sname = data[stroff + name:end]
        if stype == SHT_NOTE or sname == b".data":
            bid = parse_note(data, off, min(off + size, len(data)))
            if bid:
                return bid
    return None


def hexid(bid):
    return bid.hex() if bid else "none"


def check_elf(path, want):
    """Refuse the ELF at path when its build id is not want (bytes)."""
    have = elf_build_id(path)
    if have != want:
        raise KernelMismatch(
            "%s has build id %s, but the recording's kernel has %s: it would name the "
            "samples with another kernel's functions; give the ELF of the kernel that "
            "recorded (its `cpu` prints the build id)" % (path, hexid(have), hexid(want)))


def choose(header, elf=None):
    """The kernel ELF for the recording whose header is given: elf (checked), or the
    matching one of candidates(); None when the build holds no kernel ELF at all."""
    want = header.get("build_id")
    if elf:
        if want:
            check_elf(elf, want)
        return elf
    have = [p for p in candidates() if os.path.exists(p)]
    if not have or not want:
        return have[0] if have else None
    ids = []
    for p in have:
        bid = elf_build_id(p)
        if bid == want:
            return p
        ids.append("%s: %s" % (p, hexid(bid)))
    raise KernelMismatch(
        "no kernel ELF has the recording's build id %s (%s): give the ELF of the kernel "
        "that recorded with --elf" % (hexid(want), "; ".join(ids)))


def by_symtab(header, symbols_of):
    """For a recording without a build id: the first existing candidate whose symbol
    table matches the header's checksum, else the first existing one."""
    have = [p for p in candidates() if os.path.exists(p)]
    for p in have:
        syms = symbols_of(p)
        if (syms.crc, syms.count) == (header["symtab_crc"], header["symtab_count"]):
            return p
    return have[0] if have else None


def nm_text(path):
    return subprocess.run(["nm", "-n", path], stdout=subprocess.PIPE, check=True,
                          universal_newlines=True).stdout
