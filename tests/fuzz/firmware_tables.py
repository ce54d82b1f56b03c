#!/usr/bin/python3
"""firmware_tables.py - the ACPI and MP tables a firmware builds, as seeds.

    firmware_tables.py RAM.bin OUT_ACPI OUT_MP
    firmware_tables.py --e820 SEABIOS_DEBUG.log OUT_MMAP

RAM.bin is a guest's memory from address 0 (QEMU monitor: `pmemsave 0
0x8000000 RAM.bin` once the firmware has built its tables). Writes

  OUT_ACPI: u64 RSDP address, then chunks {u64 address, u32 length, bytes}:
            the RSDP, the RSDT/XSDT, every table they name and the FADT's
            DSDT - the input of tests/fuzz/fuzz_acpi.c and tests/host/test_acpi.c;
  OUT_MP:   the MP configuration table the floating pointer "_MP_" names
            (MultiProcessor Specification 1.4, 4.1/4.2), as is - the input
            of tests/fuzz/fuzz_mptable.c.

With --e820: SeaBIOS's debug output (QEMU -chardev file,id=d,path=LOG
-device isa-debugcon,iobase=0x402,chardev=d) lists the E820 map it hands
to the loader ("e820 map has N items:"); OUT_MMAP gets it as the Multiboot
memory map GRUB passes on (0.6.96 3.3: size 20, base, length, type per
entry) - the input of tests/fuzz/fuzz_memmap.c.

The tables are the firmware's own: nothing is built or changed here.
"""
import re
import struct
import sys


def find_rsdp(ram):
    """The BIOS area first (ACPI 5.2.5.1), then anywhere (UEFI keeps it in its own
    memory, an ACPI 1.0 and a 2.0 one): the highest revision found."""
    for lo, hi in ((0xE0000, 0x100000), (0, len(ram))):
        found = []
        at = ram.find(b"RSD PTR ", lo, hi)
        while at >= 0:
            if at % 16 == 0 and sum(ram[at:at + 20]) % 256 == 0:
                found.append((ram[at + 15], at))
            at = ram.find(b"RSD PTR ", at + 1, hi)
        if found:
            return max(found)[1]
    raise SystemExit("no RSDP in the guest's memory")


def table(ram, addr):
    length = struct.unpack_from("<I", ram, addr + 4)[0]
    return ram[addr:addr + length]


def acpi_chunks(ram, rsdp):
    rev = ram[rsdp + 15]
    rlen = struct.unpack_from("<I", ram, rsdp + 20)[0] if rev >= 2 else 20
    chunks = [(rsdp, ram[rsdp:rsdp + rlen])]
    roots = [(struct.unpack_from("<I", ram, rsdp + 16)[0], 4)]
    if rev >= 2:
        roots.insert(0, (struct.unpack_from("<Q", ram, rsdp + 24)[0], 8))
    seen = set()
    for root, width in roots:
        if not root or root in seen:
            continue
        seen.add(root)
        sdt = table(ram, root)
        chunks.append((root, sdt))
        for off in range(36, len(sdt) - width + 1, width):
            addr = int.from_bytes(sdt[off:off + width], "little")
            if addr in seen or not addr:
                continue
            seen.add(addr)
            t = table(ram, addr)
            chunks.append((addr, t))
            if t[:4] == b"FACP":
                dsdt = struct.unpack_from("<I", t, 40)[0]
                if len(t) >= 148 and struct.unpack_from("<Q", t, 140)[0]:
                    dsdt = struct.unpack_from("<Q", t, 140)[0]
                if dsdt not in seen:
                    seen.add(dsdt)
                    chunks.append((dsdt, table(ram, dsdt)))
    out = struct.pack("<Q", rsdp)
    for addr, data in chunks:
        out += struct.pack("<QI", addr, len(data)) + data
    return out


def mp_table(ram):
    for base in range(0xE0000, 0x100000, 16):
        if ram[base:base + 4] == b"_MP_" and sum(ram[base:base + 16]) % 256 == 0:
            addr = struct.unpack_from("<I", ram, base + 4)[0]
            length = struct.unpack_from("<H", ram, addr + 4)[0]
            return ram[addr:addr + length]
    return None


def e820_map(log):
    """The Multiboot map of the E820 entries in a SeaBIOS debug log."""
    out = b""
    for m in re.finditer(r"^\s*\d+: ([0-9a-f]{16}) - ([0-9a-f]{16}) = (\d+)", log, re.M):
        base, end, typ = int(m.group(1), 16), int(m.group(2), 16), int(m.group(3))
        out += struct.pack("<IQQI", 20, base, end - base, typ)
    if not out:
        raise SystemExit("no 'e820 map' entries in the log")
    return out


def main():
    if sys.argv[1] == "--e820":
        with open(sys.argv[2]) as f, open(sys.argv[3], "wb") as out:
            out.write(e820_map(f.read()))
        return
    ram = open(sys.argv[1], "rb").read()
    rsdp = find_rsdp(ram)
    with open(sys.argv[2], "wb") as f:
        f.write(acpi_chunks(ram, rsdp))
    mp = mp_table(ram)
    if mp:
        with open(sys.argv[3], "wb") as f:
            f.write(mp)


if __name__ == "__main__":
    main()
