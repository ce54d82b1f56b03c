"""test_qr.py - `selftest --qr`: the report as QR codes on the machine's own
screen, read back the way an owner without a serial cable sends it.

Two machines with a VGA card: SeaBIOS (GRUB leaves VGA text mode 3; the
codes are four modules a cell, drawn by glyphs loaded into the font) and
OVMF x64 (the GOP framebuffer). `selftest --quick --qr` runs; for each code "k of n" the
screen is taken with the QEMU monitor's screendump, read with zbar's
zbarimg, and a key on the serial line shows the next. tools/selftest-report
must rebuild from the screenshots exactly the report it makes from the
serial NBS: lines (every check, its values and the verdict), refuse the
screenshots with one left out, and refuse the codes' text with one
character changed. `qr` shows the same codes again; the keyboard's Esc
key ends it early, and the console's text comes back.

Under UEFI, where there is no boot menu, nbprof.cfg's `run = selftest
--quick --qr` does the same on the framebuffer.

The floppy (tools/build/mkfloppy), the CD (tools/build/mkiso) and the
network boot (tools/build/mkpxe) with a screen: the boot menu (GRUB's, iPXE's) shows "nbprof: selftest"
below the default entry; chosen with the keyboard, it runs the whole
`selftest` by itself and ends on the first code, which zbarimg reads.
"""

import os
import re
import subprocess
import time

import pexpect
import pytest

import conftest
from conftest import BOOT_TIMEOUT, CMD_TIMEOUT, PROMPT, REPO, WORK, Console, qemu
from test_screen import Monitor, screen_machine, vga_text

pytestmark = pytest.mark.qemu_only

SELFTEST_TIMEOUT = 120
FULL_SELFTEST_TIMEOUT = 600     # the whole selftest, not --quick
REPORT = os.path.join(REPO, "tools", "selftest-report")
SHOWN = re.compile(r"the report is on the screen as (\d+) QR codes?;")


@pytest.fixture(scope="module", params=["bios", "uefi-x64"])
def machine(request):
    for con, mon in screen_machine("qr-" + request.param, request.param, __name__):
        yield {"con": con, "mon": mon}


def screenshot(machine, path):
    if os.path.exists(path):
        os.unlink(path)
    machine["mon"].cmd("screendump " + path)
    assert os.path.getsize(path) > 1000
    return path


def zbar(path):
    p = subprocess.run(["/usr/bin/zbarimg", "--quiet", "--raw", "-Sdisable", "-Sqrcode.enable",
                        path], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                       universal_newlines=True)
    return p.stdout.strip() if p.returncode == 0 else None


def show_codes(machine, tmp_path, command, timeout, keys=None):
    """Run command, take a screenshot of each code; (serial output, [screenshot paths])."""
    con = machine["con"]
    start = len(con.raw)
    con.send(command + "\r")
    n = int(con.expect(SHOWN, timeout, "the codes").group(1))
    shots = []
    for k in range(1, n + 1):
        con.expect_exact("code %d of %d on the screen" % (k, n), CMD_TIMEOUT)
        shots.append(screenshot(machine, str(tmp_path / ("code%d.ppm" % k))))
        if keys is not None and k == len(keys):
            if keys[-1] == "\x1b":      # the Esc key of the keyboard (i8042)
                machine["mon"].cmd("sendkey esc")
            else:
                con.send(keys[-1])
            break
        con.send(" ")
    con.expect_exact(PROMPT, CMD_TIMEOUT)
    return conftest.clean("".join(con.raw[start:])), shots


def report(*args, stdin=None, ok=(0,)):
    p = subprocess.run(["/usr/bin/python3", REPORT] + [str(a) for a in args], input=stdin,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    assert p.returncode in ok, "exit %d\n%s" % (p.returncode, p.stderr)
    return p


def test_codes_on_the_screen_give_the_serial_report(machine, tmp_path):
    out, shots = show_codes(machine, tmp_path, "selftest --quick --qr", SELFTEST_TIMEOUT)
    assert "NBS:0|begin|" in out                    # the serial report as before
    serial = tmp_path / "serial.log"
    serial.write_text(out)
    want = report(serial).stdout
    assert re.search(r"^selftest: \d+ passed, 0 failed", want, re.M), want
    texts = [zbar(s) for s in shots]
    assert None not in texts, "zbarimg read no code in %s" % shots[texts.index(None)]
    assert report(*shots).stdout == want
    # one screenshot left out
    if len(shots) > 1:
        p = report(*shots[1:], ok=(1,))
        assert "code(s) 1 of %d missing" % len(shots) in p.stderr and p.stdout == ""
    # the text a phone shows, pasted, with one character changed
    assert report("-", stdin="\n".join(texts) + "\n").stdout == want
    i = len(texts[0]) - 5
    bad = texts[0][:i] + ("A" if texts[0][i] != "A" else "B") + texts[0][i + 1:]
    p = report("-", stdin="\n".join([bad] + texts[1:]) + "\n", ok=(1,))
    assert "QR codes refused" in p.stderr and p.stdout == ""
    machine["want"] = want


def test_qr_shows_them_again_and_esc_ends(machine, tmp_path):
    want = machine.get("want")
    if want is None:
        pytest.skip("needs the selftest of the test before")
    out, shots = show_codes(machine, tmp_path, "qr", CMD_TIMEOUT)
    assert report(*shots).stdout == want
    out, shots = show_codes(machine, tmp_path, "qr", CMD_TIMEOUT, keys="\x1b")
    assert len(shots) == 1
    # the console's text is back on the screen: the prompt, no code
    assert zbar(screenshot(machine, str(tmp_path / "after.ppm"))) is None


def menu_entries(mon):
    """The entries of the boot menu on the VGA text screen, top down."""
    rows = vga_text(mon)
    if any("GNU GRUB" in r for r in rows):      # inside the menu's box
        entries = [r.strip(" \xb3*") for r in rows if r.strip().startswith("\xb3")]
    else:                                       # iPXE: the default's countdown "(5)" after it
        entries = [re.sub(r"\s+\(\d+\)$", "", r.strip()) for r in rows]
    return [e for e in entries if e]


@pytest.mark.parametrize("media", ["floppy", "cdrom", "net"])
def test_boot_entry_runs_selftest_to_the_codes(tmp_path, media):
    name = "qr-" + media
    elf = os.path.join(qemu.BUILD, "nbprof32.elf")
    if media == "floppy":
        img = os.path.join(WORK, name + ".img")
        subprocess.run([os.path.join(REPO, "tools", "build", "mkfloppy"), img, elf], check=True)
    elif media == "cdrom":
        img = os.path.join(WORK, name + ".iso")
        subprocess.run([os.path.join(REPO, "tools", "build", "mkiso"), img,
                        os.path.join(qemu.BUILD, "BOOTX64.EFI"),
                        os.path.join(qemu.BUILD, "BOOTIA32.EFI"), elf], check=True)
    else:
        img = os.path.join(WORK, name)
        subprocess.run([os.path.join(REPO, "tools", "build", "mkpxe"), img, elf], check=True)
    sock = os.path.join(WORK, name + ".mon")
    if os.path.exists(sock):
        os.unlink(sock)
    argv = qemu.command(img, None, None, firmware="bios", media=media, screen=True,
                        monitor=sock, cpu=qemu.cpu_model(15, 2, 9, firmware="bios"))
    child = pexpect.spawn(argv[0], argv[1:], encoding="utf-8", codec_errors="replace",
                          dimensions=(50, 200), timeout=CMD_TIMEOUT)
    con = Console(child, name)
    conftest._consoles[__name__] = con
    mon = Monitor(sock)
    try:
        deadline = time.monotonic() + BOOT_TIMEOUT
        while "nbprof: selftest" not in menu_entries(mon):
            assert time.monotonic() < deadline, "no boot menu:\n" + "\n".join(vga_text(mon))
            time.sleep(0.2)
        # the shell first (the default), then selftest
        entries = menu_entries(mon)
        i = entries.index("nbprof: selftest")
        assert i > 0 and entries[i - 1] == "nbprof", entries
        mon.cmd("sendkey down")
        mon.cmd("sendkey ret")
        con.expect_exact("selftest: PMU conformance test", BOOT_TIMEOUT)
        n = int(con.expect(SHOWN, FULL_SELFTEST_TIMEOUT, "the codes").group(1))
        con.expect_exact("code 1 of %d on the screen" % n, CMD_TIMEOUT)
        assert re.search(r"^selftest: \d+ passed, 0 failed", con.transcript, re.M)
        text = zbar(screenshot({"mon": mon}, str(tmp_path / "code1.ppm")))
        assert text and text.startswith("NBQ1 1/%d " % n), text
        con.send("\x1b")
        con.expect_exact(PROMPT, CMD_TIMEOUT)
    finally:
        mon.close()
        con.stop()
        with open(os.path.join(WORK, name + ".log"), "w") as f:
            f.write(con.transcript)


def test_nbprof_cfg_runs_selftest_to_the_codes_under_uefi(tmp_path):
    for con, mon in screen_machine("qr-cfg", "uefi-x64", __name__,
                                   cfg="run = selftest --quick --qr\n"):
        n = int(con.expect(SHOWN, SELFTEST_TIMEOUT, "the codes").group(1))
        con.expect_exact("code 1 of %d on the screen" % n, CMD_TIMEOUT)
        text = zbar(screenshot({"mon": mon}, str(tmp_path / "code1.ppm")))
        assert text and text.startswith("NBQ1 1/%d " % n), text
        con.send("\x1b")
        con.expect_exact(PROMPT, CMD_TIMEOUT)
