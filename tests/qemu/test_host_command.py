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
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest

from nbproflib import qemu  # tools/, put on the path by conftest.py
from conftest import REPO, firmware_suffix, make_image

TOOL = os.path.join(REPO, "tools", "nbprof")
TIMEOUT = 300
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
