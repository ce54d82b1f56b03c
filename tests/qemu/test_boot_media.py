"""test_boot_media.py - the USB stick, the CD, the floppy and the network boot reach the prompt.

The stick (tools/build/mkimage) as USB mass storage under SeaBIOS. The CD
(tools/build/mkiso, `make iso`) in an ATAPI drive: SeaBIOS boots its El
Torito BIOS entry (GRUB, then nbprof32.elf), OVMF x64 (and OVMF ia32 with
NBPROF_SLOW=1) its EFI entry (the FAT image, then BOOTX64.EFI or BOOTIA32.EFI). The same file
as a disk (a stick): SeaBIOS through its hybrid MBR. The TFTP root
(tools/build/mkpxe, `make pxe`): SeaBIOS, the e1000's iPXE ROM, the iPXE script,
nbprof32.elf by Multiboot. The 1.44 MB floppy (tools/build/mkfloppy, `make
floppy`) in the board's drive A: under SeaBIOS. QEMU's user-mode network serves TFTP itself, so
nothing leaves the machine. Each test is one short boot; `cpu` says which
way the kernel came, and the boot log shows nbprof.cfg (carried as a file
on the CD's FAT or a Multiboot module) was read.
"""

import contextlib
import os
import re
import shutil
import subprocess

import pexpect
import pytest

import conftest
from conftest import BOOT_TIMEOUT, CMD_TIMEOUT, PROMPT, READY, REPO, WORK, Console, qemu

pytestmark = pytest.mark.qemu_only

CFG = "# nbprof.cfg on the CD / TFTP root\nserial.baud = 57600\n"
BIOS = "legacy BIOS (Multiboot, nbprof32.elf, loaded by GRUB "


def build(name):
    return os.path.join(qemu.BUILD, name)


@pytest.fixture(scope="module")
def media():
    """The CD image and the TFTP root, made once from the build's kernels."""
    os.makedirs(WORK, exist_ok=True)
    cfg = os.path.join(WORK, "boot_media.cfg")
    with open(cfg, "w") as f:
        f.write(CFG)
    kernels = [build("BOOTX64.EFI"), build("BOOTIA32.EFI"), build("nbprof32.elf")]
    for k in kernels:
        if not os.path.exists(k):
            pytest.fail("%s is missing: run make" % k)
    progs = [p for p in [build("sdk/hello.elf")] if os.path.exists(p)]
    if os.path.exists(build("sdk32/hello.elf")):      # nbprof-cc -m32: the 32-bit kernel's
        progs.append(os.path.join(WORK, "hello32.elf"))
        shutil.copyfile(build("sdk32/hello.elf"), progs[-1])
    iso = os.path.join(WORK, "boot_media.iso")
    subprocess.run([os.path.join(REPO, "tools", "build", "mkiso"), iso] + kernels + [cfg] + progs,
                   check=True)
    pxe = os.path.join(WORK, "boot_media-pxe")
    subprocess.run([os.path.join(REPO, "tools", "build", "mkpxe"), pxe, kernels[2], cfg], check=True)
    return {"iso": iso, "pxe": pxe, "progs": progs}


def boot(name, image, media_kind, firmware):
    """Boot once to the prompt; the Console (stopped by the caller)."""
    code, template = qemu.find_firmware(firmware)
    varstore = qemu.make_vars(template)
    argv = qemu.command(image, varstore, code, firmware=firmware, media=media_kind,
                        cpu=qemu.cpu_model(15, 2, 9, firmware=firmware))
    child = pexpect.spawn(argv[0], argv[1:], encoding="utf-8", codec_errors="replace",
                          dimensions=(50, 200), timeout=CMD_TIMEOUT)
    con = Console(child, name)
    con.varstore = varstore
    conftest._consoles[__name__] = con
    con.expect_exact(READY, BOOT_TIMEOUT)
    con.expect_exact(PROMPT, CMD_TIMEOUT)
    return con


def finish(con):
    con.stop()
    if con.varstore:
        os.unlink(con.varstore)
    with open(os.path.join(WORK, con.name + ".log"), "w") as f:
        f.write(con.transcript)


@contextlib.contextmanager
def booted(name, image, media_kind, firmware, boot_line, settle=False):
    """Boot to the prompt and check `cpu`'s boot line (boot_line: a regex its start
    matches) and that the media's nbprof.cfg set the console's rate; the console, for
    the test's own checks; stopped after them, whatever they found."""
    con = boot(name, image, media_kind, firmware)
    try:
        if settle:
            conftest.settle(con)
        assert re.match(boot_line, field(con.cmd("cpu"), "boot"))
        assert re.search(r"^console: serial 0x3f8, 57600 baud$", con.transcript, re.M)
        yield con
    finally:
        finish(con)


def field(out, name):
    m = re.search(r"^%s\s+(.*)$" % re.escape(name), out, re.M)
    assert m, out
    return m.group(1)


@pytest.mark.parametrize("firmware,boot_line", [
    ("bios", BIOS),
    ("uefi-x64", "UEFI x64 (EFI/BOOT/BOOTX64.EFI)"),
    # OVMF ia32 takes the same El Torito EFI entry (its FAT holds BOOTIA32.EFI too,
    # tests/tools/test_mkiso.py): one more 13-s boot, run with NBPROF_SLOW=1
    pytest.param("uefi-ia32", "UEFI ia32 (EFI/BOOT/BOOTIA32.EFI)",
                 marks=pytest.mark.skipif(not os.environ.get("NBPROF_SLOW"),
                                          reason="a second OVMF CD boot (NBPROF_SLOW=1)")),
])
def test_cd(media, firmware, boot_line):
    # nbprof.cfg came along: the rate it sets is the console's (booted)
    with booted("boot_media-cd-" + firmware, media["iso"], "cdrom", firmware,
                re.escape(boot_line)) as con:
        if firmware == "uefi-x64" and media["progs"]:
            # the EFI kernel reads programs from the volume it came from, the CD's FAT
            assert re.search(r"^programs: hello \(\d+ bytes\) from the stick$",
                             con.transcript, re.M), con.transcript
        if firmware == "bios" and len(media["progs"]) == 2:
            # GRUB loads them as Multiboot modules; the 32-bit kernel takes its own class
            assert re.search(r"^programs: hello32 \(\d+ bytes\) from the stick$",
                             con.transcript, re.M), con.transcript
            assert ("programs: nbprof/hello.elf: a 64-bit program: this is the 32-bit kernel; "
                    "build with nbprof-cc -m32") in con.transcript


def test_usb_stick():
    """The stick image (tools/build/mkimage --bios, the MBR with its active entry) as USB
    mass storage: SeaBIOS boots it through its USB driver, GRUB reads it by INT 13H."""
    img = conftest.make_image("boot_media-usb", cfg=CFG, firmware="bios")
    with booted("boot_media-usb-bios", img, "usb", "bios", re.escape(BIOS)):
        pass


def test_cd_image_written_to_a_stick(media):
    """The hybrid MBR: the same file as a hard disk under SeaBIOS."""
    with booted("boot_media-stick-bios", media["iso"], "disk", "bios", re.escape(BIOS)):
        pass


def test_floppy():
    """GRUB from the floppy's reserved sectors, the kernel and nbprof.cfg from its FAT12."""
    os.makedirs(WORK, exist_ok=True)
    cfg = os.path.join(WORK, "boot_media-floppy.cfg")
    with open(cfg, "w") as f:
        f.write(CFG)
    img = os.path.join(WORK, "boot_media-floppy.img")
    subprocess.run([os.path.join(REPO, "tools", "build", "mkfloppy"), img, build("nbprof32.elf"),
                    cfg], check=True)
    assert os.path.getsize(img) == 1474560
    with booted("boot_media-floppy", img, "floppy", "bios", re.escape(BIOS)):
        pass


def test_network_boot(media):
    # the NIC's iPXE ran the script and loaded the kernel, with nbprof.cfg as a module
    with booted("boot_media-pxe", media["pxe"], "net", "bios",
                r"legacy BIOS \(Multiboot, nbprof32\.elf, loaded by iPXE \S+\); "):
        pass


def test_files_copied_onto_the_stick_later():
    """An image made without CFG= or PROGRAMS=, then an nbprof.cfg and a program copied
    onto its FAT partition afterwards (mcopy, as a user copies them onto the mounted
    stick): after a BIOS boot GRUB's script finds them on the ESP and loads them as
    Multiboot modules, so the configuration runs and the program is there."""
    img = conftest.make_image("boot_media-copied", firmware="bios")
    esp = "%s@@%d" % (img, 2048 * 512)             # partition 1 (tools/build/mkimage)
    env = dict(os.environ, MTOOLS_SKIP_CHECK="1")
    cfg = os.path.join(WORK, "boot_media-copied.cfg")
    with open(cfg, "w") as f:
        f.write("# copied onto the stick after make image\nserial.baud = 57600\n"
                "run = msr read 0x1b\n")
    subprocess.run(["mcopy", "-o", "-i", esp, cfg, "::/nbprof.cfg"], check=True, env=env)
    prog = build("sdk32/hello.elf")
    if os.path.exists(prog):
        subprocess.run(["mmd", "-i", esp, "::/nbprof"], check=True, env=env)
        subprocess.run(["mcopy", "-i", esp, prog, "::/nbprof/hello32.elf"], check=True, env=env)
    with booted("boot_media-copied-bios", img, "disk", "bios", re.escape(BIOS), settle=True) as con:
        assert "config: nbprof.cfg, 1 command(s) to run" in con.transcript, con.transcript
        assert re.search(r"^MSR 1BH = 00000000FEE00900H$", conftest.clean(con.transcript),
                         re.M), con.transcript
        if os.path.exists(prog):
            assert re.search(r"^programs: hello32 \(\d+ bytes\) from the stick$",
                             con.transcript, re.M), con.transcript
