"""test_host_command.py - tools/nbprof --qemu against the real kernel.

The host command boots its own QEMU (on an image made here, as the other
modules' machines are), so these tests do not use the shared `nb` machine.
`stat loop 1000` must count exactly 3N+6 = 3006 retired instructions, and
`record` must leave perf.data, perf.script, stacks.folded and flamegraph.svg
in the output directory, with `perf report` naming wl_loop (skipped with
the reason when Debian's linux-perf is not installed). Under a 32-bit
firmware the command boots the same firmware (--firmware) and names the
32-bit kernel's ELF in perf.data.
"""

import json
import os
import re
import select
import shutil
import subprocess
import time
import tty
import xml.etree.ElementTree as ET

import pytest

from nbproflib import qemu  # tools/, put on the path by conftest.py
from conftest import REPO, firmware_suffix, make_image

TOOL = os.path.join(REPO, "tools", "nbprof")
TIMEOUT = 300
BOOT_WAIT = 240
FIRMWARE = os.environ.get("NBPROF_FIRMWARE") or qemu.DEFAULT_FIRMWARE

pytestmark = pytest.mark.qemu_only


@pytest.fixture(scope="module")
def image(firmware):
    return make_image("test_host_command" + firmware_suffix(firmware), firmware=firmware)


def nbprof(image, *args):
    return subprocess.run(["/usr/bin/python3", TOOL, "--qemu", "--firmware", FIRMWARE,
                           "--image", image] + list(args),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=TIMEOUT)


def test_stat_counts_loop_exactly(image):
    # at ring 3, :u counts loop 1000's 3006 instructions and its exit's int 0x80; the
    # default :u:k adds the kernel's code in the counting window, as on a Pentium 4
    p = nbprof(image, "stat", "--ring", "3", "-e", "instr_retired:u", "loop", "1000")
    assert p.returncode == 0, p.stderr
    m = re.search(r"^\s*(\d+)  instr_retired:\S+  counter", p.stdout, flags=re.M)
    assert m and int(m.group(1)) == 3 * 1000 + 6 + 1, p.stdout
    p = nbprof(image, "--json", "stat", "--ring", "3", "-e", "instr_retired:u", "loop", "1000")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["counts"] == {"instr_retired:NBOGUSNTAG:NBOGUSTAG:u": 3007}
    assert r["runs"] == 1 and r["workload"] == "loop 1000"


def test_target_error_is_exit_1(image):
    p = nbprof(image, "stat", "-e", "instr_retired:nbogus", "loop", "1")
    assert p.returncode == 1
    assert "error: 'instr_retired:nbogus'" in p.stdout


def test_record_writes_the_outputs(image, tmp_path):
    out = tmp_path / "rec"
    p = nbprof(image, "--json", "record", "--ring", "3", "-e", "instr_retired:u", "-c", "97",
               "loop", "1000", "-o", str(out))
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    # 3006 instructions and the exit's int 0x80 at CPL 3, a sample every 97 + 1 (the
    # model interrupts on the event after the overflow): 3007 // 98 = 30.
    assert r["samples"] == 3007 // 98 == 30
    assert "30 stored" in r["output"] and "wl_loop" in r["report"]
    folded = (out / "stacks.folded").read_text().split()
    # each sample weighs the 98 instructions it stands for: 2940 of the 3006
    assert folded == ["loop;wl_loop", str(30 * 98)]
    script = (out / "perf.script").read_text()
    assert script.count("instr_retired") == 30 and script.count("wl_loop+0x") == 30
    ET.parse(str(out / "flamegraph.svg"))
    if shutil.which("perf") is None:
        pytest.skip("perf is not installed (Debian linux-perf): perf.data not read back")
    rep = subprocess.run(["perf", "report", "-i", str(out / "perf.data"), "--stdio"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True)
    assert rep.returncode == 0, rep.stderr
    rows = re.findall(r"^\s+([\d.]+)%\s+[\d.]+%\s+(\S+)\s+(\S+)\s+\[\.\]\s+(\S+)",
                      rep.stdout, flags=re.M)
    dso = os.path.basename(qemu.kernel_elf(FIRMWARE))       # the ELF of the kernel that ran
    assert rows and rows[0] == ("100.00", "loop", dso, "wl_loop"), rep.stdout


def qemu_on_a_pty(image, firmware):
    """QEMU booting image with its serial port on a pseudo-terminal: (process, /dev/pts/N)."""
    argv = qemu.command(image, None, None, firmware=firmware)
    argv[argv.index("stdio,id=s0,signal=off")] = "pty,id=s0"
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, universal_newlines=True)
    line = proc.stdout.readline()       # "char device redirected to /dev/pts/N (label s0)"
    m = re.search(r"(/dev/pts/\d+)", line)
    if not m:
        proc.kill()
        pytest.fail("QEMU did not say where its pty is: %r" % line)
    return proc, m.group(1)


def wait_for_prompt(pty, timeout=BOOT_WAIT):
    """Read the pty until the booted kernel's first prompt (so that the tool meets a
    running machine, as on a Pentium 4 booted before the command)."""
    fd = os.open(pty, os.O_RDWR | os.O_NOCTTY)
    try:
        tty.setraw(fd)
        seen, deadline = b"", time.monotonic() + timeout
        while b"nbprof: ready" not in seen or not seen.endswith(b"nbprof> "):
            left = deadline - time.monotonic()
            if left <= 0:
                pytest.fail("no prompt on %s within %d s:\n%s" % (pty, timeout, seen[-2000:]))
            if select.select([fd], [], [], min(left, 1.0))[0]:
                seen += os.read(fd, 4096)
    finally:
        os.close(fd)


def test_serial_record_of_a_bios_booted_32bit_kernel_names_its_functions(tmp_path):
    """A BIOS-booted Pentium 4 runs nbprof32.elf: `record -o` over the serial line
    names the samples with that kernel's functions, the ELF its build id picks."""
    image = make_image("test_host_command-bios", firmware="bios")
    proc, pty = qemu_on_a_pty(image, "bios")
    try:
        wait_for_prompt(pty)
        out = tmp_path / "rec"
        p = subprocess.run(["/usr/bin/python3", TOOL, "--serial", pty, "--json", "record",
                            "--ring", "3", "-e", "instr_retired:u", "-c", "97", "loop", "1000",
                            "-o", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, timeout=TIMEOUT)
        assert p.returncode == 0, p.stderr
        r = json.loads(p.stdout)
        assert r["kernel_elf"] == qemu.kernel_elf("bios"), r
        script = (out / "perf.script").read_text()
        assert script.count("wl_loop+0x") == r["samples"] == 30, script[:2000]
        assert (out / "stacks.folded").read_text().split() == ["loop;wl_loop", str(30 * 98)]
        # The 64-bit kernel's ELF, as the tool took before: refused, both ids named.
        p = subprocess.run(["/usr/bin/python3", TOOL, "--serial", pty, "--elf",
                            qemu.kernel_elf("uefi-x64"), "record", "loop", "10", "-o",
                            str(tmp_path / "wrong")], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True, timeout=TIMEOUT)
        assert p.returncode == 2 and "has build id" in p.stderr, p.stderr
    finally:
        proc.kill()
        proc.wait()
