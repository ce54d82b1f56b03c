"""conftest.py - boot the machines the documentation's examples name.

The machines are those of the QEMU tests (tests/qemu/conftest.py: OVMF or
SeaBIOS, a NetBurst CPUID signature, the image made from the build), always
under -icount (shift=7: 128 TSC cycles per guest instruction, no sleep), so
that every count, cycle and TSC figure an example shows comes out the same
on every run. One machine runs at a time: the examples are ordered by boot
(page, or `boot=` group, and machine), and a machine is switched off when the
next example needs another one. Transcripts are kept in
build/doc-test/NAME.log.
"""

import importlib.util
import os
import re
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/
from counts import write_counts  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

_spec = importlib.util.spec_from_file_location(
    "nbprof_qemu_conftest", os.path.join(REPO, "tests", "qemu", "conftest.py"))
qc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(qc)

WORK = os.path.join(qc.qemu.BUILD, "doc-test")
BOOT_TIMEOUT = qc.BOOT_TIMEOUT


def boot_name(boot):
    """A file name for a boot: the page or group, and the machine."""
    group, (firmware, sig, ht) = boot
    base = re.sub(r"[^A-Za-z0-9]+", "-", group.replace(".md", "")).strip("-")
    return "%s-%s-%d_%d_%d%s" % (base, firmware, sig[0], sig[1], sig[2], "-ht" if ht else "")


class Machines:
    """The one running machine, switched when an example needs another."""

    def __init__(self):
        self.boot = None
        self.con = None
        self.boot_times = []

    def get(self, boot):
        if boot != self.boot:
            self.stop()
            group, (firmware, sig, ht) = boot
            name = boot_name(boot)
            t0 = time.monotonic()
            os.makedirs(WORK, exist_ok=True)
            self.boot, self.name = boot, name
            self.con = qc.boot_qemu("doc-" + name, sig=sig, smp_ht=ht, icount=True,
                                    firmware=firmware)
            self.con.expect_exact(qc.READY, BOOT_TIMEOUT)
            self.con.expect_exact(qc.PROMPT, qc.CMD_TIMEOUT)
            self.boot_times.append((name, time.monotonic() - t0))
        return self.con

    def stop(self):
        if self.con is None:
            return
        self.con.stop()
        if self.con.varstore:
            os.unlink(self.con.varstore)
        with open(os.path.join(WORK, self.name + ".log"), "w") as f:
            f.write(self.con.transcript)
        self.con = self.boot = None


_machines = Machines()


@pytest.fixture(scope="session")
def machines():
    yield _machines
    _machines.stop()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.failed and _machines.con is not None and "machines" in item.fixturenames:
        rep.sections.append(("serial transcript (%s)" % _machines.name,
                             _machines.con.transcript[-20000:]))


def pytest_terminal_summary(terminalreporter):
    for name, secs in _machines.boot_times:
        terminalreporter.write_line("boot %-40s %5.2f s" % (name, secs))
    write_counts(terminalreporter)
