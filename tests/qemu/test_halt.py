"""test_halt.py - an exception outside any command halts the kernel with its report.

Inside a shell command an exception is reported and the prompt comes back
(test_shell.py). Outside one (in the kernel itself) the report is printed
and the machine stops: `fault gp --halt` raises #GP with the command guard
taken away. #GP: SDM Vol. 3A Table 6-1, vector 13; a load through the
non-canonical 8000000000000000H raises #GP(0) (SDM Vol. 3A 3.3.7.1). This
module's machine is left halted; its last test checks that nothing answers.
"""

import re

import pexpect
import pytest

import conftest

pytestmark = pytest.mark.qemu_only        # the machine is halted on purpose


def test_halt_outside_a_command(nb, firmware):
    nb.send("fault gp --halt\r")
    nb.expect_exact("*** kernel halted", 10)
    out = nb.transcript
    report = out[out.rindex("fault gp --halt"):]
    head = re.search(r"^\*\*\* exception #GP \(vector 13\) general protection, error code 0x0\b",
                     report, re.M)
    assert head, report
    assert re.search(r"^  RIP 0x[0-9a-f]{16} <\w*gp\w*\+0x[0-9a-f]+>$", report, re.M), report
    if conftest.kernel_bits(firmware) == 32:     # arch/x86/32/mode.c: SS loaded with the null selector in EAX
        assert re.search(r"\bRAX 0x0000000000000000\b", report), report
    else:                           # arch/x86/64/mode.c: a load through RCX = 8000000000000000H
        assert re.search(r"\bRCX 0x8000000000000000\b", report), report
    assert "command aborted" not in report


def test_nothing_answers_after_the_halt(nb):
    nb.send("help\r")
    with pytest.raises(pexpect.TIMEOUT):
        nb.child.expect_exact("nbprof> ", timeout=3)
    assert nb.child.isalive()                  # halted, not reset or powered off
