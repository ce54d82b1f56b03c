"""test_refuse.py - a machine the 32-bit kernel cannot serve gets a clear message.

Legacy-BIOS path only (boot/multiboot.c, mb_refuse): before the kernel
proper starts, a CPU without a local APIC or PAE (CPUID.01H:EDX bits 9 and
6) and less than 16 MiB of RAM above 1 MiB are named on COM1 (and on the
VGA text screen), and the machine halts rather than faulting later. Each
case boots its own SeaBIOS machine with one CPU feature or the RAM taken
away (a later -cpu or -m overrides the one tools/qemu.py gives).
"""

import os

import pytest

import conftest

CPU = "qemu64,vendor=GenuineIntel,family=15,model=2,stepping=9,-lm,-syscall"


@pytest.mark.qemu_only
@pytest.mark.parametrize("extra,why", [
    (("-cpu", CPU + ",-apic"), "no local APIC (CPUID.01H:EDX.APIC = 0)"),
    (("-cpu", CPU + ",-pae"), "no PAE (CPUID.01H:EDX.PAE = 0)"),
    (("-m", "16"), "less than 16 MiB of free RAM above 1 MiB"),
], ids=["no-apic", "no-pae", "16-mib"])
def test_refused_with_a_reason(firmware, extra, why):
    if firmware != "bios":
        pytest.skip("the checks before the kernel are the legacy-BIOS path's")
    name = "test_refuse-%s" % extra[-1].rpartition(",")[2].lstrip("-")
    con = conftest.boot_qemu(name, extra=extra, firmware=firmware)
    try:
        con.expect_exact("nbprof cannot run on this machine:", conftest.BOOT_TIMEOUT)
        con.expect_exact("halted.", conftest.CMD_TIMEOUT)
        out = conftest.clean(con.child.before)
        assert why in out, out
        assert conftest.READY not in con.transcript      # the kernel never started
        assert con.child.isalive()                       # halted, not reset
    finally:
        con.stop()
        os.makedirs(conftest.WORK, exist_ok=True)
        with open(os.path.join(conftest.WORK, name + ".log"), "w") as f:
            f.write(con.transcript)
