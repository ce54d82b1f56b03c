"""test_image.py - the PE files build/BOOTX64.EFI and build/BOOTIA32.EFI that the firmware loads.

The zero-initialised data (.bss, about 254 KiB) must not be stored in the
file: it is a section with SizeOfRawData 0 that the loader zero-fills up to
its VirtualSize, and the whole file stays within 512 KiB (256 KiB was the
goal when .bss stopped being stored; `selftest` then added about 29 KiB of
code and text, user programs - the ELF loader, upload, the program gate and
their symbols - about 14 KiB, snippet benchmarks - `bench`, its loop
generator and messages; the snippet area shares the workload page - about
8 KiB, a page of it where the kernel text crossed a page boundary; sample
weights, period jitter, the progress line of long runs, per-LP workload
names and prologue unwinding - about 7 KiB; the stepped feed of the
memory-system model - the operand decoder, the caches and TLBs, the cost
model - with the uncore counters under `stat` about 20 KiB; PEBS, tagging
and the replay metrics about 17 KiB; the PEBS and uncore checks of
`selftest` and its naming of unrestored registers about 11 KiB; the COFF
symbol table, which no loader reads, is no longer stored; 384 KiB held
until the model's PMI skid, the interrupt-storm guard, the handler's
counting window and the firmware-quirk and owner-path fixes came, which
took the ia32 image past it; 448 KiB until selftest's QR codes - the
encoder, deflate, base45 and their screen - static Linux programs' system
calls and the core timing model came, about 40 KiB together). The ia32 image
keeps the same budget: its .bss (about 490 KiB) is not stored either, its
files are compiled -Os or -O2 as the x86-64 kernel's, and its overflow
path, stepper and model feed -Os (Makefile K32_OS_OBJS). The layout read
here is the PE/COFF one (Microsoft PE Format: MS-DOS stub with e_lfanew at
3CH, "PE\\0\\0", COFF file header, PE32+ optional header with magic 20BH,
PE32 with 10BH for ia32, 40-byte section headers) and the ELF64 Rela entry
(System V x86-64 ABI: r_offset, r_info with the type in its low 32 bits,
r_addend; type 8 is R_X86_64_RELATIVE) or the ELF32 Rel entry (System V
i386 ABI: r_offset, r_info with the type in its low 8 bits; type 8 is
R_386_RELATIVE), which gnu-efi's _relocate applies at start-up.
"""

import os
import struct
import subprocess

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(REPO, os.environ.get("NBPROF_BUILD", "build"))
MAX_FILE = 512 * 1024
PE32PLUS = 0x20B
PE32 = 0x10B
SCN_UNINITIALIZED_DATA = 0x80      # IMAGE_SCN_CNT_UNINITIALIZED_DATA
R_X86_64_RELATIVE = 8
R_386_RELATIVE = 8

# The two EFI images: file, linked ELF, PE optional-header magic, relocation
# section, entry size and format (ELF64 Rela: offset, info, addend; ELF32 Rel:
# offset, info with the type in its low 8 bits), the RELATIVE type.
IMAGES = {
    "x64": dict(efi="BOOTX64.EFI", elf="nbprof.so", magic=PE32PLUS, rel=".rela",
                fmt="<QQq", type_mask=0xffffffff, relative=R_X86_64_RELATIVE),
    "ia32": dict(efi="BOOTIA32.EFI", elf="k32/nbprof.so", magic=PE32, rel=".rel",
                 fmt="<II", type_mask=0xff, relative=R_386_RELATIVE),
}


def parse_pe(data, want_magic=PE32PLUS):
    """(optional-header fields, {name: section}) of a PE32+ (or, with PE32, a PE32) image."""
    if data[:2] != b"MZ":
        raise ValueError("no MZ signature")
    pe = struct.unpack_from("<I", data, 0x3C)[0]
    if data[pe:pe + 4] != b"PE\0\0":
        raise ValueError("no PE signature at 0x%x" % pe)
    _machine, nsec, _, _, _, opt_size, _ = struct.unpack_from("<HHIIIHH", data, pe + 4)
    opt = pe + 24
    magic = struct.unpack_from("<H", data, opt)[0]
    if magic != want_magic:
        raise ValueError("optional header magic 0x%x, not 0x%x" % (magic, want_magic))
    # SectionAlignment, FileAlignment and SizeOfImage sit at the same offsets in
    # PE32 (BaseOfData + a 32-bit ImageBase) and PE32+ (a 64-bit ImageBase).
    header = {
        "SectionAlignment": struct.unpack_from("<I", data, opt + 32)[0],
        "FileAlignment": struct.unpack_from("<I", data, opt + 36)[0],
        "SizeOfImage": struct.unpack_from("<I", data, opt + 56)[0],
    }
    sections = {}
    for i in range(nsec):
        off = opt + opt_size + 40 * i
        name = data[off:off + 8].rstrip(b"\0").decode()
        vsize, va, raw_size, raw_ptr = struct.unpack_from("<IIII", data, off + 8)
        flags = struct.unpack_from("<I", data, off + 36)[0]
        sections[name] = {"VirtualSize": vsize, "VirtualAddress": va,
                          "SizeOfRawData": raw_size, "PointerToRawData": raw_ptr,
                          "Characteristics": flags}
    return header, sections


def symbols(elf, *names):
    nm = subprocess.run(["nm", elf], stdout=subprocess.PIPE, check=True,
                        universal_newlines=True).stdout
    found = {}
    for line in nm.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] in names:
            found[parts[2]] = int(parts[0], 16)
    assert set(found) == set(names), found
    return found


@pytest.fixture(scope="module", params=sorted(IMAGES))
def kind(request):
    k = dict(IMAGES[request.param])
    k["efi"], k["elf"] = os.path.join(BUILD, k["efi"]), os.path.join(BUILD, k["elf"])
    if not (os.path.exists(k["efi"]) and os.path.exists(k["elf"])):
        pytest.skip("no kernel build in %s (make)" % BUILD)
    return k


@pytest.fixture(scope="module")
def image(kind):
    with open(kind["efi"], "rb") as f:
        data = f.read()
    header, sections = parse_pe(data, kind["magic"])
    return data, header, sections


def test_bss_takes_no_room_in_the_file(image, kind):
    _, header, sec = image
    assert ".bss" in sec, sorted(sec)
    bss = sec[".bss"]
    assert bss["SizeOfRawData"] == 0 and bss["PointerToRawData"] == 0, bss
    assert bss["Characteristics"] & SCN_UNINITIALIZED_DATA, bss
    # It covers what the linker put between __bss_start and __bss_end
    # (link addresses are offsets from ImageBase 0, i.e. RVAs) ...
    s = symbols(kind["elf"], "__bss_start", "__bss_end")
    assert bss["VirtualAddress"] <= s["__bss_start"] < s["__bss_end"]
    assert s["__bss_end"] <= bss["VirtualAddress"] + bss["VirtualSize"]
    assert s["__bss_end"] - s["__bss_start"] >= 64 * 1024   # the kernel's big zeroed arrays
    # ... the image the loader allocates includes it, and it follows .data
    assert bss["VirtualAddress"] + bss["VirtualSize"] <= header["SizeOfImage"]
    assert bss["VirtualAddress"] % header["SectionAlignment"] == 0
    data = sec[".data"]
    assert data["VirtualAddress"] + data["VirtualSize"] <= bss["VirtualAddress"]


def test_no_stored_section_is_mostly_trailing_zeros(image):
    """Zeros that belong in .bss are not stored at the end of another section."""
    raw, _, sec = image
    for name, s in sec.items():
        body = raw[s["PointerToRawData"]:s["PointerToRawData"] + min(s["SizeOfRawData"],
                                                                    s["VirtualSize"])]
        trailing = len(body) - len(body.rstrip(b"\0"))
        assert trailing < 8192, "%s ends in %d zero bytes" % (name, trailing)


def test_image_keeps_what_the_loader_needs(image, kind):
    """An EFI application with a base-relocation directory: OVMF refuses an image
    linked at 0 without one (the unused-section collection must keep crt0's .reloc)."""
    raw, header, sec = image
    assert ".reloc" in sec and sec[".reloc"]["SizeOfRawData"] > 0, sorted(sec)
    assert ".text" in sec and ".dynamic" in sec and kind["rel"] in sec, sorted(sec)


def test_file_is_at_most_512_kib(image, kind):
    raw, _, sec = image
    assert len(raw) <= MAX_FILE, "%s is %d bytes" % (kind["efi"], len(raw))
    # every stored section lies inside the file
    for name, s in sec.items():
        assert s["PointerToRawData"] + s["SizeOfRawData"] <= len(raw), name


def test_relocations_are_relative_and_none_lands_in_bss(image, kind):
    """_relocate handles the RELATIVE type only and needs no .dynsym; a
    relocation into .bss would be undone when efi_main clears it. All of
    them lie in the one section .dynamic's DT_REL(A)SZ covers."""
    raw, _, sec = image
    assert ".dynsym" not in sec
    assert not [n for n in sec if n.startswith(kind["rel"] + ".")], sorted(sec)
    size = struct.calcsize(kind["fmt"])
    rels = [s for name, s in sec.items() if name == kind["rel"] or
            name.startswith(kind["rel"] + ".")]
    bss = sec[".bss"]
    lo, hi = bss["VirtualAddress"], bss["VirtualAddress"] + bss["VirtualSize"]
    n = 0
    for rel in rels:
        body = raw[rel["PointerToRawData"]:rel["PointerToRawData"] + rel["VirtualSize"]]
        assert len(body) % size == 0
        for off in range(0, len(body), size):
            r_offset, r_info = struct.unpack_from(kind["fmt"], body, off)[:2]
            assert r_info & kind["type_mask"] == kind["relative"], hex(r_info)
            assert not lo <= r_offset < hi, hex(r_offset)
            n += 1
    assert n > 0


def test_parser_rejects_what_is_not_the_expected_pe(image, kind):
    raw, _, _ = image
    with pytest.raises(ValueError):
        parse_pe(b"\x7fELF" + raw[4:], kind["magic"])
    pe = struct.unpack_from("<I", raw, 0x3C)[0]
    bad = bytearray(raw)
    other = PE32 if kind["magic"] == PE32PLUS else PE32PLUS
    bad[pe + 24:pe + 26] = struct.pack("<H", other)     # PE32 for PE32+ and back
    with pytest.raises(ValueError):
        parse_pe(bytes(bad), kind["magic"])
