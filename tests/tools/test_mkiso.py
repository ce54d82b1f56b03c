"""test_mkiso.py - tools/build/mkiso writes a CD that BIOS and UEFI boot, tools/build/mkpxe a
TFTP root and tools/build/mkfloppy a 1.44 MB floppy.

The CD is read byte by byte where the standards fix the layout: ISO 9660
(ECMA-119) puts the volume descriptors from sector 16 (2048-byte sectors),
the El Torito boot record descriptor ("EL TORITO SPECIFICATION", El
Torito 1.0 section 2.0) names the boot catalog's sector at byte 47; the
catalog holds a validation entry, the initial entry (platform 0 = 80x86)
and a section header for platform EFH = EFI (UEFI 2.10 section 13.3.2.1)
with its entry; each entry: boot indicator 88H, media type 0 (no
emulation), sector count at byte 6, start sector at byte 8. The MBR (hybrid,
for sticks) is read as in test_mkimage.py. The FAT image behind the EFI
entry is read with mtools. The floppy's boot sector is read as the FAT
specification puts its BIOS parameter block (bytes per sector at byte 11,
..., sectors per track at 24, heads at 26, "FAT12" at 54) and GRUB 2.06's
boot.S its own fields (the kernel sector at 5CH; diskboot's block list at
1F4H of core.img's first sector).
"""

import os
import struct
import subprocess

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(REPO, os.environ.get("NBPROF_BUILD", "build"))
MKISO = os.path.join(REPO, "tools", "build", "mkiso")
MKPXE = os.path.join(REPO, "tools", "build", "mkpxe")
CD_SECTOR = 2048
SBIN = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"
GRUB_DIR = "/usr/lib/grub/i386-pc"


@pytest.fixture(scope="module")
def iso(tmp_path_factory):
    if not os.path.exists(os.path.join(GRUB_DIR, "cdboot.img")):
        pytest.skip("grub-pc-bin is not installed")
    d = tmp_path_factory.mktemp("iso")
    files = {"efi": d / "BOOTX64.EFI", "efi32": d / "BOOTIA32.EFI", "elf": d / "nbprof32.elf",
             "cfg": d / "nbprof.cfg", "prog": d / "work.elf"}
    files["efi"].write_bytes(b"MZ" + os.urandom(60000))
    files["efi32"].write_bytes(b"MZ" + os.urandom(50000))
    files["elf"].write_bytes(b"\x7fELF" + os.urandom(80000))
    files["cfg"].write_text("run = cpu\n")
    files["prog"].write_bytes(b"\x7fELF" + os.urandom(3000))
    out = d / "nbprof.iso"
    argv = [MKISO, str(out), str(files["efi"]), str(files["efi32"]), str(files["elf"]),
            str(files["cfg"]), str(files["prog"])]
    subprocess.run(argv, check=True)
    return dict(files, iso=out, data=out.read_bytes(), dir=d, argv=argv)


def catalog(data):
    """The El Torito boot catalog's entries: [(platform, indicator, media, count, lba)]."""
    for n in range(16, 32):
        vd = data[n * CD_SECTOR:(n + 1) * CD_SECTOR]
        if vd[0] == 255:
            break
        if vd[0] == 0 and vd[7:30] == b"EL TORITO SPECIFICATION":
            lba = struct.unpack_from("<I", vd, 71)[0]
            break
    else:
        raise AssertionError("no El Torito boot record")
    cat = data[lba * CD_SECTOR:(lba + 1) * CD_SECTOR]
    assert cat[0] == 1 and cat[30:32] == b"\x55\xaa"      # validation entry
    assert sum(struct.unpack("<16H", cat[:32])) & 0xFFFF == 0
    entries, platform = [], cat[1]
    for off in range(32, CD_SECTOR, 32):
        e = cat[off:off + 32]
        if e[0] in (0x90, 0x91):                           # section header
            platform = e[1]
        elif e[0] in (0x88, 0x00) and e != bytes(32):
            count, start = struct.unpack_from("<HI", e, 6)
            entries.append((platform, e[0], e[1], count, start))
        elif e == bytes(32):
            break
    return entries


def test_two_boot_entries_bios_and_efi(iso):
    entries = catalog(iso["data"])
    assert [(p, ind, media) for p, ind, media, _, _ in entries] == [(0, 0x88, 0), (0xEF, 0x88, 0)]
    bios = entries[0]
    assert bios[3] == 4                                    # -boot-load-size 4: cdboot.img loads the rest
    cdboot = open(os.path.join(GRUB_DIR, "cdboot.img"), "rb").read()
    start = bios[4] * CD_SECTOR
    # GRUB's El Torito image starts with cdboot.img (except the boot-info table at 8..63)
    img = iso["data"][start:start + len(cdboot)]
    assert img[:8] == cdboot[:8] and img[64:] == cdboot[64:]
    pvd_lba, = struct.unpack_from("<I", img, 8)            # boot-info table: the PVD's sector
    assert pvd_lba == 16


def efi_fat(iso):
    entries = catalog(iso["data"])
    _, _, _, count, lba = entries[1]
    return "%s@@%d" % (iso["iso"], lba * CD_SECTOR), count


def mtype(img, path):
    env = dict(os.environ, MTOOLS_SKIP_CHECK="1", PATH=SBIN)
    return subprocess.run(["mtype", "-i", img, path], stdout=subprocess.PIPE, check=True,
                          env=env).stdout


def test_efi_image_holds_both_kernels_cfg_and_programs(iso):
    img, _ = efi_fat(iso)
    assert mtype(img, "::/EFI/BOOT/BOOTX64.EFI") == iso["efi"].read_bytes()
    assert mtype(img, "::/EFI/BOOT/BOOTIA32.EFI") == iso["efi32"].read_bytes()
    assert mtype(img, "::/nbprof.cfg") == iso["cfg"].read_bytes()
    assert mtype(img, "::/nbprof/work.elf") == iso["prog"].read_bytes()


def test_iso9660_holds_the_multiboot_kernel_cfg_and_programs(iso):
    p = subprocess.run(["xorriso", "-osirrox", "on", "-indev", str(iso["iso"]), "-extract", "/",
                        str(iso["dir"] / "x")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       check=True)
    assert p.returncode == 0
    x = iso["dir"] / "x"
    assert (x / "boot" / "nbprof32.elf").read_bytes() == iso["elf"].read_bytes()
    assert (x / "nbprof.cfg").read_bytes() == iso["cfg"].read_bytes()
    assert (x / "nbprof" / "work.elf").read_bytes() == iso["prog"].read_bytes()


def test_hybrid_mbr_for_a_stick(iso):
    """GRUB's boot_hybrid.img code, partition 1 (the ISO) active, partition 2
    the EFI FAT (type EFH) at the sectors the EFI El Torito entry names."""
    data = iso["data"]
    assert data[510:512] == b"\x55\xaa"
    hybrid = open(os.path.join(GRUB_DIR, "boot_hybrid.img"), "rb").read()
    assert data[:0x5C] == hybrid[:0x5C]                    # code before GRUB's patched fields
    recs = [data[446 + 16 * i:462 + 16 * i] for i in range(4)]
    assert recs[0][0] == 0x80 and struct.unpack_from("<I", recs[0], 8)[0] == 0
    assert recs[1][0] == 0x00 and recs[1][4] == 0xEF
    _, _, _, count, lba = catalog(data)[1]
    assert struct.unpack_from("<II", recs[1], 8) == (lba * 4, count)
    assert [r[0] for r in recs].count(0x80) == 1


def test_same_inputs_same_bytes(iso):
    again = iso["dir"] / "again.iso"
    subprocess.run([MKISO, str(again)] + iso["argv"][2:], check=True)
    assert again.read_bytes() == iso["data"]


def test_missing_input_changes_nothing(tmp_path):
    out = tmp_path / "x.iso"
    p = subprocess.run([MKISO, str(out), str(tmp_path / "a"), str(tmp_path / "b"),
                        str(tmp_path / "c")], stderr=subprocess.PIPE, universal_newlines=True)
    assert p.returncode == 1 and "no such file" in p.stderr and not out.exists()
    p = subprocess.run([MKISO, str(out)], stderr=subprocess.PIPE, universal_newlines=True)
    assert p.returncode == 2 and p.stderr.startswith("usage:")


# --- tools/build/mkpxe ---------------------------------------------------------------

def test_pxe_root(tmp_path):
    elf, cfg, out = tmp_path / "k.elf", tmp_path / "c.cfg", tmp_path / "pxe"
    elf.write_bytes(b"\x7fELF" + os.urandom(5000))
    cfg.write_text("run = cpu\n")
    subprocess.run([MKPXE, str(out), str(elf), str(cfg)], check=True)
    assert (out / "nbprof32.elf").read_bytes() == elf.read_bytes()
    assert (out / "nbprof.cfg").read_bytes() == cfg.read_bytes()
    script = (out / "nbprof.ipxe").read_text().splitlines()
    assert script[0] == "#!ipxe"
    cmds = [ln for ln in script if ln and not ln.startswith("#")]
    menu = ["menu nbprof || goto nbprof", "item nbprof nbprof", "item selftest nbprof: selftest",
            "choose --default nbprof --timeout 5000 entry || goto nbprof", "goto ${entry}"]
    selftest = [":selftest", "kernel nbprof32.elf", "module selftest.cfg", "boot"]
    assert cmds == menu + [":nbprof", "kernel nbprof32.elf", "module nbprof.cfg", "boot"] + selftest
    assert "run = selftest --qr" in (out / "selftest.cfg").read_text()
    pxelinux = (out / "pxelinux.cfg" / "default").read_text()
    assert "KERNEL mboot.c32" in pxelinux and "APPEND nbprof32.elf --- nbprof.cfg" in pxelinux
    assert "DEFAULT nbprof" in pxelinux and "APPEND nbprof32.elf --- selftest.cfg" in pxelinux
    # without a configuration: no module line, and a stale nbprof.cfg goes
    subprocess.run([MKPXE, str(out), str(elf)], check=True)
    assert not (out / "nbprof.cfg").exists()
    cmds = [ln for ln in (out / "nbprof.ipxe").read_text().splitlines()
            if ln and not ln.startswith("#")]
    assert cmds == menu + [":nbprof", "kernel nbprof32.elf", "boot"] + selftest


def test_pxe_refuses_what_is_not_an_elf(tmp_path):
    bad = tmp_path / "k.efi"
    bad.write_bytes(b"MZ" + bytes(100))
    out = tmp_path / "pxe"
    p = subprocess.run([MKPXE, str(out), str(bad)], stderr=subprocess.PIPE,
                       universal_newlines=True)
    assert p.returncode == 1 and "not an ELF" in p.stderr and not out.exists()


# N5: as tools/build/mkimage (test_mkimage.py): a name GRUB's configuration cannot
# hold unquoted is refused before anything is written.
@pytest.mark.parametrize("name", ["a;echo INJECTED", "b c", "c|d"])
def test_program_names_grub_cannot_take_are_refused(tmp_path, name):
    files = [tmp_path / n for n in ("BOOTX64.EFI", "BOOTIA32.EFI", "nbprof32.elf", name)]
    for f in files:
        f.write_bytes(b"\x7fELF" + bytes(100))
    out = tmp_path / "x.iso"
    p = subprocess.run([MKISO, str(out)] + [str(f) for f in files[:3]] + ["", str(files[3])],
                       stderr=subprocess.PIPE, universal_newlines=True)
    assert p.returncode == 1, p.stderr
    assert "program %s: the name '%s' may hold only" % (files[3], name) in p.stderr
    assert not out.exists()


# --- tools/build/mkfloppy ------------------------------------------------------------

MKFLOPPY = os.path.join(REPO, "tools", "build", "mkfloppy")
ELF32 = os.path.join(BUILD, "nbprof32.elf")


@pytest.mark.skipif(not os.path.exists(ELF32), reason="needs build/nbprof32.elf (make)")
def test_floppy_layout(tmp_path):
    """A 1.44 MB FAT12 whose reserved sectors hold GRUB: boot.img with the file system's
    parameter block, pointing at core.img in sector 1; the kernel and nbprof.cfg in the FAT."""
    cfg, out = tmp_path / "c.cfg", tmp_path / "f.img"
    cfg.write_text("run = cpu\n")
    subprocess.run([MKFLOPPY, str(out), ELF32, str(cfg)], check=True)
    data = out.read_bytes()
    assert len(data) == 1474560
    boot = open("/usr/lib/grub/i386-pc/boot.img", "rb").read()
    s0 = data[:512]
    bps, spc, reserved, nfats, roots, total, media = struct.unpack_from("<HBHBHHB", s0, 11)
    spt, heads = struct.unpack_from("<HH", s0, 24)
    assert (bps, spc, nfats, roots, total, media, spt, heads) == (512, 1, 2, 224, 2880, 0xf0,
                                                                   18, 2)
    assert s0[54:62] == b"FAT12   " and s0[510:] == b"\x55\xaa"
    # GRUB's code around the parameter block; the kernel sector is 1
    assert s0[:3] == boot[:3] and s0[0x64:0x1b8] == boot[0x64:0x1b8]
    assert struct.unpack_from("<Q", s0, 0x5c)[0] == 1
    # diskboot's block list: the rest of core.img from sector 2, all within the reserved ones
    start, count = struct.unpack_from("<QH", data, 512 + 0x1f4)
    assert start == 2 and 1 + 1 + count <= reserved
    listing = subprocess.run(["mdir", "-b", "-i", str(out), "::/", "::/boot"],
                             stdout=subprocess.PIPE, universal_newlines=True,
                             env=dict(os.environ, MTOOLS_SKIP_CHECK="1"), check=True).stdout
    assert "::/NBPROF.CFG" in listing.upper() and "::/BOOT/NBPROF32.ELF" in listing.upper()
    got = subprocess.run(["mtype", "-i", str(out), "::/nbprof.cfg"], stdout=subprocess.PIPE,
                         env=dict(os.environ, MTOOLS_SKIP_CHECK="1"), check=True).stdout
    assert got == b"run = cpu\n"
    # the same inputs give the same bytes
    again = tmp_path / "g.img"
    subprocess.run([MKFLOPPY, str(again), ELF32, str(cfg)], check=True)
    assert again.read_bytes() == data


def test_floppy_refuses_what_does_not_fit(tmp_path):
    big, out = tmp_path / "big.elf", tmp_path / "f.img"
    subprocess.run(["cp", ELF32 if os.path.exists(ELF32) else "/bin/ls", str(big)], check=True)
    # a 2 MB section that objcopy --strip-debug keeps
    subprocess.run(["objcopy", "--add-section", ".blob=/dev/stdin", str(big)],
                   input=os.urandom(2 << 20), check=True)
    p = subprocess.run([MKFLOPPY, str(out), str(big)], stderr=subprocess.PIPE,
                       universal_newlines=True)
    assert p.returncode == 1 and "do not fit" in p.stderr and not out.exists()
    p = subprocess.run([MKFLOPPY, str(out), str(tmp_path / "none.elf")], stderr=subprocess.PIPE,
                       universal_newlines=True)
    assert p.returncode == 1 and "no such file" in p.stderr and not out.exists()
