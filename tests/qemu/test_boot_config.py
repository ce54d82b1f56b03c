"""test_boot_config.py - a second machine: nbprof.cfg batch mode, 0F_02H, HT.

The ESP carries an nbprof.cfg whose run lines must execute at boot, before
the first interactive prompt. The CPU is a Northwood-like signature (family
0FH, model 2, stepping 9) with one core and two hyper-threads, so `cpu`
must show the other rows of the capability table (PMU reference sections 1.2,
2.3, 4.3, 7) and the HT topology (SDM Vol. 2A CPUID: CPUID.1:EDX[28] HTT,
CPUID.1:EBX[23:16] logical processors, CPUID.4:EAX[31:26] cores - 1).
The last test reboots the machine, which -no-reboot turns into QEMU's exit.
"""

import re

import pytest

pytestmark = pytest.mark.qemu_only        # the machine and its ESP are made here

BOOT = {
    "sig": (15, 2, 9),
    "smp_ht": True,
    "cfg": "# nbprof.cfg for the QEMU tests\n"
           "serial.port = 0x3f8\n"
           "serial.baud = 57600     # QEMU ignores the rate; the kernel must not\n"
           "\n"
           "run = msr read 0x1b\n"
           "run = help fault\n"
           "run = frobnicate\n",
}


def test_run_lines_executed_at_boot(nb):
    out = nb.boot_output
    apic = re.search(r"^MSR 1BH = 00000000FEE00900H$", out, re.M)
    usage = re.search(r"^usage: fault de\|ud\|gp\|pf\|int3 \[--halt\]$", out, re.M)
    bad = re.search(r"^error: unknown command 'frobnicate'", out, re.M)
    assert apic and usage and bad, out
    # In the order of the file.
    assert apic.start() < usage.start() < bad.start()


def test_serial_speed_from_config(nb):
    # The kernel reports the rate from the divisor it programmed into the
    # 16550 (115200 / divisor, divisor 2 for 57600), before the ready marker.
    assert re.search(r"^console: serial 0x3f8, 57600 baud$", nb.transcript, re.M), nb.transcript
    assert "config: nbprof.cfg, 3 command(s) to run" in nb.transcript


def test_prompt_works_after_batch(nb):
    assert "commands:" in nb.cmd("help")


def test_cpu_signature_0f_02(nb):
    out = nb.cmd("cpu")
    sig = re.search(r"^signature\s+(.*)$", out, re.M).group(1)
    assert "0F_02H" in sig and "%08XH" % ((0xF << 8) | (2 << 4) | 9) in sig


def test_cpu_hyperthreading(nb):
    out = nb.cmd("cpu")
    assert re.search(r"^HTT\s+yes, 2 logical processors per package$", out, re.M), out
    assert re.search(r"^cores\s+1 per package, 2 threads per core$", out, re.M), out


def test_cpu_model2_capabilities(nb):
    out = nb.cmd("cpu")

    def cap(name):
        return re.search(r"^  %s\s+(\S+)" % re.escape(name), out, re.M).group(1)

    assert cap("IQ_ESCR0/1") == "yes"             # models 0-2
    assert cap("extended cascading") == "yes"     # 0F_02/03/04/06
    assert cap("cascade PMI erratum") == "yes"    # all of 0F_02
    assert cap("instr_completed") == "no"         # models 3, 4, 6 only
    assert cap("FSB_ESCR1 usable") == "yes"       # signature F29H >= F27H
    assert cap("uncore (107CCH-107D3H)") == "none"


@pytest.mark.qemu_only     # under QEMU the PMU registers are the software model's
def test_iq_escr0_present_on_model_2(nb):
    # The same read that #GPs on the 0F_04H boot works here: models 0-2 have IQ_ESCR0.
    assert nb.cmd("msr write 3BAH 0400060CH") == \
        "MSR 3BAH <- 000000000400060CH (IQ_ESCR0) [model 0F_02H]"
    assert nb.cmd("msr read 3BAH") == "MSR 3BAH = 000000000400060CH (IQ_ESCR0) [model 0F_02H]"
    nb.cmd("msr write 3BAH 0")


def test_reboot_resets_machine(nb):
    nb.send("reboot\r")
    nb.expect_exact("rebooting", 10)
    # A reset under -no-reboot ends QEMU with status 0; nbprof's poweroff
    # path (isa-debug-exit) would give an odd status instead.
    assert nb.wait_exit() == 0
