"""test_mkimage.py - tools/build/mkimage writes a disk a UEFI firmware boots from.

Expectations come from the UEFI specification (2.10, section 5 "GUID
Partition Table Disk Layout": protective MBR, GPT header and partition
entry fields, CRC32 over the header with its CRC field zeroed and over the
entry array, backup header in the last LBA; section 13.3.1.3: the removable
media path \\EFI\\BOOT\\BOOTX64.EFI) and Microsoft's FAT specification (boot
sector fields). The image is read with struct/zlib here, then checked once
more with sgdisk -v and mtools.
"""

import os
import struct
import subprocess
import uuid
import zlib

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MKIMAGE = os.path.join(REPO, "tools", "build", "mkimage")
SECTOR = 512
ESP_TYPE = uuid.UUID("C12A7328-F81F-11D2-BA4B-00A0C93EC93B")
SBIN = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    d = tmp_path_factory.mktemp("img")
    efi, cfg = d / "BOOTX64.EFI", d / "nbprof.cfg"
    efi.write_bytes(b"MZ" + os.urandom(70000))
    cfg.write_text("serial.baud = 57600\nrun = cpu\n")
    img = d / "nbprof.img"
    subprocess.run([MKIMAGE, str(img), str(efi), str(cfg)], check=True)
    return {"img": img, "efi": efi, "cfg": cfg, "data": img.read_bytes(), "dir": d}


def header(data, lba):
    h = data[lba * SECTOR:lba * SECTOR + 92]
    (sig, rev, size, crc, _res, my, alt, first, last, disk_guid, entries_lba, n, esize,
     entries_crc) = struct.unpack("<8sIIIIQQQQ16sQIII", h)
    return dict(sig=sig, rev=rev, size=size, crc=crc, my=my, alt=alt, first=first, last=last,
                guid=disk_guid, entries_lba=entries_lba, n=n, esize=esize,
                entries_crc=entries_crc, raw=h)


def test_protective_mbr(image):
    data = image["data"]
    assert len(data) % SECTOR == 0
    lbas = len(data) // SECTOR
    assert data[510:512] == b"\x55\xaa"
    rec = data[446:462]
    status, ptype = rec[0], rec[4]
    start, count = struct.unpack("<II", rec[8:16])
    assert (status, ptype, start) == (0, 0xEE, 1)
    assert count == min(lbas - 1, 0xFFFFFFFF)
    assert data[478:510] == bytes(32)             # records 3 and 4 are empty


def test_mbr_has_an_active_entry_covering_only_the_mbr(image):
    """Entry 2: type 00H, status 80H, LBA 0 for one sector (xorriso's
    --mbr-force-bootable layout), for BIOSes that boot only a disk with an
    active MBR entry; the 0xEE entry itself stays inactive (UEFI 2.10 5.2.3)."""
    data = image["data"]
    rec = data[462:478]
    status, ptype = rec[0], rec[4]
    start, count = struct.unpack("<II", rec[8:16])
    assert (status, ptype, start, count) == (0x80, 0x00, 0, 1)
    # CHS first and last sector: head 0, sector 1, cylinder 0 (= LBA 0)
    assert rec[1:4] == b"\x00\x01\x00" and rec[5:8] == b"\x00\x01\x00"
    assert data[446] == 0                         # the 0xEE entry is not active
    actives = [i for i in range(4) if data[446 + 16 * i] == 0x80]
    assert actives == [1]


@pytest.mark.parametrize("which", ["primary", "backup"])
def test_gpt_header(image, which):
    data = image["data"]
    last_lba = len(data) // SECTOR - 1
    h = header(data, 1 if which == "primary" else last_lba)
    assert h["sig"] == b"EFI PART" and h["rev"] == 0x00010000 and h["size"] == 92
    raw = bytearray(h["raw"])
    raw[16:20] = bytes(4)
    assert zlib.crc32(bytes(raw)) == h["crc"]
    if which == "primary":
        assert (h["my"], h["alt"], h["entries_lba"]) == (1, last_lba, 2)
    else:
        assert (h["my"], h["alt"]) == (last_lba, 1)
        assert h["entries_lba"] + (h["n"] * h["esize"]) // SECTOR == last_lba
    assert h["esize"] == 128 and h["n"] * h["esize"] >= 16384     # at least 16 KiB of entries
    array = data[h["entries_lba"] * SECTOR:h["entries_lba"] * SECTOR + h["n"] * h["esize"]]
    assert zlib.crc32(array) == h["entries_crc"]
    assert h["first"] >= 2 + (h["n"] * h["esize"]) // SECTOR
    assert h["last"] < last_lba - (h["n"] * h["esize"]) // SECTOR


def test_one_efi_system_partition(image):
    data = image["data"]
    h = header(data, 1)
    base = h["entries_lba"] * SECTOR
    entries = [data[base + i * 128:base + (i + 1) * 128] for i in range(h["n"])]
    used = [e for e in entries if e[:16] != bytes(16)]
    assert len(used) == 1
    e = used[0]
    assert uuid.UUID(bytes_le=e[:16]) == ESP_TYPE
    assert e[16:32] != bytes(16)                  # a unique partition GUID
    first, last = struct.unpack("<QQ", e[32:48])
    assert h["first"] <= first <= last <= h["last"]
    assert first % 2048 == 0                      # 1 MiB aligned


def test_esp_is_fat32_holding_the_kernel(image):
    data = image["data"]
    h = header(data, 1)
    e = data[h["entries_lba"] * SECTOR:h["entries_lba"] * SECTOR + 128]
    first, last = struct.unpack("<QQ", e[32:48])
    bs = data[first * SECTOR:(first + 1) * SECTOR]
    assert bs[510:512] == b"\x55\xaa"
    bytes_per_sector, = struct.unpack("<H", bs[11:13])
    hidden, total = struct.unpack("<II", bs[28:36])
    assert bytes_per_sector == 512
    assert hidden == first                        # BPB_HiddSec: sectors before the volume
    assert 0 < total <= last - first + 1
    assert bs[82:90] == b"FAT32   "
    img = "%s@@%d" % (image["img"], first * SECTOR)
    env = dict(os.environ, MTOOLS_SKIP_CHECK="1", PATH=SBIN)

    def mtype(path):
        return subprocess.run(["mtype", "-i", img, path], stdout=subprocess.PIPE,
                              check=True, env=env).stdout
    assert mtype("::/EFI/BOOT/BOOTX64.EFI") == image["efi"].read_bytes()
    assert mtype("::/nbprof.cfg") == image["cfg"].read_bytes()


def test_sgdisk_finds_no_problems(image):
    p = subprocess.run(["sgdisk", "-v", str(image["img"])], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True,
                       env=dict(os.environ, PATH=SBIN))
    assert p.returncode == 0 and "No problems found" in p.stdout, p.stdout


def test_same_inputs_same_bytes(image):
    again = image["dir"] / "again.img"
    subprocess.run([MKIMAGE, str(again), str(image["efi"]), str(image["cfg"])], check=True)
    assert again.read_bytes() == image["data"]


# --- the full image: both kernels and GRUB for legacy BIOS --------------------
# GRUB 2.06 (grub-pc-bin): boot.img keeps the LBA of core.img's first sector
# at 5CH (GRUB_BOOT_MACHINE_KERNEL_SECTOR) and the hard-disk check at 66H
# (GRUB_BOOT_MACHINE_DRIVE_CHECK, NOPed for disks); diskboot.img, core.img's
# first sector, ends with its block list at 1F4H: u64 start, u16 sectors.
GRUB_DIR = "/usr/lib/grub/i386-pc"
BIOS_BOOT_TYPE = uuid.UUID("21686148-6449-6E6F-744E-656564454649")


@pytest.fixture(scope="module")
def full_image(tmp_path_factory):
    if not os.path.exists(os.path.join(GRUB_DIR, "boot.img")):
        pytest.skip("grub-pc-bin is not installed")
    d = tmp_path_factory.mktemp("full")
    efi, efi32, elf = d / "BOOTX64.EFI", d / "BOOTIA32.EFI", d / "nbprof32.elf"
    efi.write_bytes(b"MZ" + os.urandom(60000))
    efi32.write_bytes(b"MZ" + os.urandom(50000))
    elf.write_bytes(b"\x7fELF" + os.urandom(80000))
    img = d / "nbprof.img"
    argv = [MKIMAGE, "--ia32", str(efi32), "--bios", str(elf), str(img), str(efi)]
    subprocess.run(argv, check=True)
    return {"img": img, "efi": efi, "efi32": efi32, "elf": elf, "data": img.read_bytes(),
            "dir": d, "argv": argv}


def partitions(data):
    h = header(data, 1)
    base = h["entries_lba"] * SECTOR
    out = []
    for i in range(h["n"]):
        e = data[base + i * 128:base + (i + 1) * 128]
        if e[:16] != bytes(16):
            out.append((uuid.UUID(bytes_le=e[:16]),) + struct.unpack("<QQ", e[32:48]))
    return out


def test_full_image_partitions(full_image):
    parts = partitions(full_image["data"])
    assert [p[0] for p in parts] == [ESP_TYPE, BIOS_BOOT_TYPE]    # the ESP stays partition 1
    assert parts[1][1:] == (34, 2047)


def test_mbr_holds_grub_boot_code_pointing_at_core(full_image):
    data = full_image["data"]
    boot = open(os.path.join(GRUB_DIR, "boot.img"), "rb").read()
    assert struct.unpack_from("<Q", data, 0x5C)[0] == 34
    assert data[0x66:0x68] == b"\x90\x90"
    patched = {range(0x5C, 0x64), range(0x66, 0x68)}
    for i in range(440):
        if not any(i in r for r in patched):
            assert data[i] == boot[i], "MBR byte %#x differs from boot.img" % i
    assert data[446 + 4] == 0xEE and data[510:512] == b"\x55\xaa"  # still a protective MBR
    assert data[462:478] == bytes.fromhex("80000100" "00000100" "00000000" "01000000")  # active entry kept


def test_core_img_block_list(full_image):
    data = full_image["data"]
    core = data[34 * SECTOR:2048 * SECTOR]
    diskboot = open(os.path.join(GRUB_DIR, "diskboot.img"), "rb").read()
    assert core[:0x1F4] == diskboot[:0x1F4]
    start, count = struct.unpack_from("<QH", core, 0x1F4)
    assert start == 35 and 0 < count < 2047 - 34
    assert core[SECTOR:(count + 1) * SECTOR].rstrip(b"\0")          # GRUB's kernel is there
    assert core[(count + 1) * SECTOR:] == bytes(len(core) - (count + 1) * SECTOR)


def test_full_image_files(full_image):
    data = full_image["data"]
    first = partitions(data)[0][1]
    img = "%s@@%d" % (full_image["img"], first * SECTOR)
    env = dict(os.environ, MTOOLS_SKIP_CHECK="1", PATH=SBIN)

    def mtype(path):
        return subprocess.run(["mtype", "-i", img, path], stdout=subprocess.PIPE,
                              check=True, env=env).stdout
    assert mtype("::/EFI/BOOT/BOOTX64.EFI") == full_image["efi"].read_bytes()
    assert mtype("::/EFI/BOOT/BOOTIA32.EFI") == full_image["efi32"].read_bytes()
    assert mtype("::/boot/nbprof32.elf") == full_image["elf"].read_bytes()


def test_full_image_sgdisk_and_reproducible(full_image):
    p = subprocess.run(["sgdisk", "-v", str(full_image["img"])], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True,
                       env=dict(os.environ, PATH=SBIN))
    assert p.returncode == 0 and "No problems found" in p.stdout, p.stdout
    again = full_image["dir"] / "again.img"
    subprocess.run(full_image["argv"][:-2] + [str(again), full_image["argv"][-1]], check=True)
    assert again.read_bytes() == full_image["data"]


def test_bad_option_changes_nothing(tmp_path):
    out = tmp_path / "x.img"
    p = subprocess.run([MKIMAGE, "--bios", str(tmp_path / "missing.elf"), str(out),
                        str(tmp_path / "missing.efi")], stderr=subprocess.PIPE,
                       universal_newlines=True)
    assert p.returncode != 0 and "no such file" in p.stderr
    assert not out.exists()


# N5: a program's file name goes unquoted into grub.cfg's `module` line and is
# the last word of the module's command line; a name GRUB would split or run
# as script syntax is refused before anything is written.
@pytest.mark.parametrize("name", ["a;echo INJECTED", "b c", "d$x", "e'f", "g\n"])
@pytest.mark.parametrize("bios", [False, True])
def test_program_names_grub_cannot_take_are_refused(tmp_path, name, bios):
    efi, elf, prog = tmp_path / "BOOTX64.EFI", tmp_path / "nbprof32.elf", tmp_path / name
    efi.write_bytes(b"MZ" + bytes(1000))
    elf.write_bytes(b"\x7fELF" + bytes(1000))
    prog.write_bytes(b"\x7fELF" + bytes(100))
    ok = tmp_path / "ok_1.2-x.elf"
    ok.write_bytes(b"\x7fELF" + bytes(100))
    out = tmp_path / "x.img"
    argv = [MKIMAGE] + (["--bios", str(elf)] if bios else []) + [str(out), str(efi), "",
                                                                  str(ok), str(prog)]
    p = subprocess.run(argv, stderr=subprocess.PIPE, universal_newlines=True)
    assert p.returncode == 1, p.stderr
    assert "program %s: the name '%s' may hold only letters, digits and . _ -" % (prog, name) \
        in p.stderr
    assert not out.exists()
