"""conftest.py - boot nbprof once per test module and talk to its shell.

In the manner of U-Boot's test/py: the module-scoped fixture `nb` boots one
machine (firmware start-up costs seconds, so tests share it), waits for the
kernel's `nbprof: ready` marker (anything typed earlier is eaten by the
firmware's serial console), and hands out a Console whose cmd() types a
line and returns what the command printed. Every wait has a time limit. When
a test fails, the whole serial transcript of its machine is attached to the
report; every transcript is also kept in build/qemu-test/MODULE.log.

A module configures its machine with a dict named BOOT:
    BOOT = {"sig": (15, 2, 9), "smp_ht": True, "cfg": "run = cpu\\n"}
sig is the CPUID family/model/stepping, cfg the text of an nbprof.cfg put
on the ESP. Images are made with tools/build/mkimage from build/BOOTX64.EFI
(NBPROF_BUILD names another build directory).

--nbprof-firmware=uefi-ia32 (or NBPROF_FIRMWARE=uefi-ia32) runs the same
modules against the 32-bit kernel: the image also carries
build/BOOTIA32.EFI, and QEMU boots it with OVMF ia32 and a CPU without
long mode (tools/qemu.py FIRMWARES). --nbprof-firmware=bios boots the
32-bit kernel from SeaBIOS through GRUB (build/nbprof32.elf, Multiboot).
Images and transcripts then carry the suffix -ia32 or -bios. The fixture `firmware` names the configuration, for the few
assertions that differ between the kernels (address widths).

With --nbprof-serial=/dev/ttyUSB0 the same tests talk to a real machine
(115200 8N1) instead; boot it after starting pytest. Tests that need
QEMU itself (exit status, a second image) are skipped there.
"""

import os
import re
import subprocess
import sys
import time

import pexpect
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/
from counts import write_counts  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "tools"))     # the host tools' package
from nbproflib import qemu  # noqa: E402

READY = "nbprof: ready"
PROMPT = "nbprof> "
BOOT_TIMEOUT = 90       # OVMF alone takes about 4 s on an idle 2-core host
CMD_TIMEOUT = 20
EXIT_TIMEOUT = 20
ANSI = re.compile(r"\x1b(\[[0-9;=?]*[A-Za-z]|[()][0-9A-Za-z]|[=>])")
WORK = os.path.join(qemu.BUILD, "qemu-test")

_consoles = {}          # module name -> Console, for the failure report
_boot_times = []        # (module, seconds from start to the ready marker)


# a long run's progress line (arch/x86/progress.h): CR-started updates, cleared by spaces;
# a terminal shows nothing of it once it is cleared
PROGRESS = re.compile(r"(?:\r# stepped \d+ instructions)+\r *\r")


# ---- reading stat's output (the tests of the model's events share these) -------------

STAT_ROW = re.compile(r"^\s*(\d+)\s+(\S+)\s+counter \d+ ", re.M)


def stat_rows(out):
    """stat's counts by their full event spec."""
    return {m.group(2): int(m.group(1)) for m in STAT_ROW.finditer(out)}


def stat_count(rows, prefix):
    """The one count of rows whose spec starts with prefix."""
    hits = [v for k, v in rows.items() if k.startswith(prefix)]
    assert len(hits) == 1, (prefix, rows)
    return hits[0]


def line_count(out, spec_start):
    """The count on the line of a command's output whose spec starts with spec_start."""
    m = re.search(r"^ +(\d+)  %s\S*" % re.escape(spec_start), out, re.M)
    assert m, out
    return int(m.group(1))


def cmd_ok(nb, line, timeout=120):
    """A command that must not fail, and its output."""
    out = nb.cmd(line, timeout=timeout)
    assert "error" not in out, out
    return out


def clean(text):
    """Serial text without terminal escapes, with plain \\n line ends.

    The firmware clears the screen and positions the cursor with ANSI
    sequences before nbprof starts; the tty adds a CR to every CRLF.
    """
    text = PROGRESS.sub("", ANSI.sub("", text))
    text = re.sub(r"\r+\n", "\n", text)
    return text.replace("\r", "")


class Console:
    """One machine's serial line: send lines, wait for text, read replies."""

    def __init__(self, child, name):
        self.child = child
        self.name = name
        self.raw = []
        self.rc = None
        child.logfile_read = self

    # pexpect's logfile interface: keep everything the machine printed.
    def write(self, s):
        self.raw.append(s)

    def flush(self):
        pass

    @property
    def transcript(self):
        return clean("".join(self.raw))

    def expect(self, pattern, timeout, what=None):
        """Wait for a regex; fail with a clear message on timeout or exit."""
        try:
            self.child.expect(pattern, timeout=timeout)
        except pexpect.TIMEOUT:
            pytest.fail("%s: no %s within %d s" % (self.name, what or repr(pattern), timeout))
        except pexpect.EOF:
            self._reap()
            pytest.fail("%s: the machine stopped (QEMU status %s) while waiting for %s"
                        % (self.name, self.rc, what or repr(pattern)))
        return self.child.match

    def expect_exact(self, text, timeout):
        return self.expect(re.escape(text), timeout, repr(text))

    def send(self, text):
        self.child.send(text)

    def cmd(self, text, timeout=CMD_TIMEOUT):
        """Type one command; return its output (between the echo and the next prompt)."""
        self.send(text + "\r")
        self.expect_exact(PROMPT, timeout)
        out = clean(self.child.before)
        echo, _, rest = out.partition("\n")
        assert echo.strip() == text.strip(), "echo %r instead of %r" % (echo, text)
        return rest.rstrip("\n")

    def wait_exit(self, timeout=EXIT_TIMEOUT):
        """Wait until QEMU exits; its exit status."""
        self.expect(pexpect.EOF, timeout, "QEMU exit")
        self._reap()
        return self.rc

    def _reap(self):
        if self.rc is None and isinstance(self.child, pexpect.spawn):
            self.child.close()
            self.rc = self.child.exitstatus

    def stop(self):
        if isinstance(self.child, pexpect.spawn) and self.child.isalive():
            self.child.terminate(force=True)
        self._reap()


def pytest_addoption(parser):
    parser.addoption("--nbprof-serial", metavar="DEV",
                     help="talk to a real machine on this serial port instead of QEMU")
    parser.addoption("--nbprof-firmware", choices=sorted(qemu.FIRMWARES),
                     default=os.environ.get("NBPROF_FIRMWARE") or qemu.DEFAULT_FIRMWARE,
                     help="boot configuration: uefi-x64 (64-bit kernel, default) or "
                          "uefi-ia32 (32-bit kernel)")


def pytest_configure(config):
    # Modules that read the kernel ELF at import time (test_record.py) see
    # the configuration through the environment.
    os.environ["NBPROF_FIRMWARE"] = config.getoption("--nbprof-firmware")
    config.addinivalue_line("markers", "qemu_only: needs QEMU itself, not a real serial line")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--nbprof-serial"):
        skip = pytest.mark.skip(reason="needs QEMU")
        for item in items:
            if "qemu_only" in item.keywords:
                item.add_marker(skip)


def make_image(name, cfg=None, firmware=qemu.DEFAULT_FIRMWARE, programs=()):
    """build/qemu-test/NAME.img from build/BOOTX64.EFI (and an nbprof.cfg text).

    Under uefi-ia32 build/BOOTIA32.EFI goes in as well (tools/build/mkimage --ia32),
    under bios GRUB and build/nbprof32.elf (--bios).
    programs: files for the ESP's nbprof/ folder (users' programs read at boot).
    """
    os.makedirs(WORK, exist_ok=True)
    efi = os.path.join(qemu.BUILD, "BOOTX64.EFI")
    efi32 = os.path.join(qemu.BUILD, "BOOTIA32.EFI")
    elf32 = os.path.join(qemu.BUILD, "nbprof32.elf")
    extra = {"uefi-ia32": ["--ia32", efi32], "bios": ["--bios", elf32]}.get(firmware, [])
    for f in [efi] + extra[1:]:
        if not os.path.exists(f):
            pytest.fail("%s is missing: run make (or make qemu-test)" % f)
    img = os.path.join(WORK, name + ".img")
    argv = [os.path.join(REPO, "tools", "build", "mkimage")] + extra + [img, efi]
    if cfg is not None:
        cfg_path = os.path.join(WORK, name + ".cfg")
        with open(cfg_path, "w") as f:
            f.write(cfg)
        argv.append(cfg_path)
    elif programs:
        argv.append("")
    argv += list(programs)
    subprocess.run(argv, check=True)
    return img


def boot_qemu(name, sig=qemu.DEFAULT_SIG, smp_ht=False, cfg=None, icount=False, extra=(),
              firmware=qemu.DEFAULT_FIRMWARE, machine=None, programs=()):
    """Start QEMU on a fresh image; a Console that has not yet waited for anything.

    extra: more QEMU arguments, e.g. ("-smp", "2") for two cores without HT.
    firmware: a tools/qemu.py FIRMWARES key (uefi-ia32: the 32-bit kernel).
    """
    img = make_image(name, cfg, firmware, programs)
    code, template = qemu.find_firmware(firmware)
    varstore = qemu.make_vars(template)
    argv = qemu.command(img, varstore, code, cpu=qemu.cpu_model(*sig, firmware=firmware),
                        smp_ht=smp_ht, icount=icount, extra=extra, firmware=firmware,
                        machine=machine)
    child = pexpect.spawn(argv[0], argv[1:], encoding="utf-8", codec_errors="replace",
                          dimensions=(50, 200), timeout=CMD_TIMEOUT)
    con = Console(child, name)
    con.varstore = varstore
    return con


def open_serial(dev):
    import serial
    from pexpect import fdpexpect
    port = serial.Serial(dev, 115200, bytesize=8, parity="N", stopbits=1, timeout=0)
    child = fdpexpect.fdspawn(port.fileno(), encoding="utf-8", codec_errors="replace")
    con = Console(child, dev)
    con.port = port
    con.varstore = None
    return con


def settle(con, quiet=1.0):
    """After nbprof.cfg's run lines: wait until a prompt is followed by silence.

    Returns whatever arrived after the first prompt (later prompts included).
    """
    seen = ""
    deadline = time.monotonic() + BOOT_TIMEOUT
    while time.monotonic() < deadline:
        try:
            con.child.expect_exact(PROMPT, timeout=quiet)
            seen += PROMPT + con.child.before
        except pexpect.TIMEOUT:
            if not con.child.buffer:
                return seen
        except pexpect.EOF:
            con._reap()
            pytest.fail("%s: the machine stopped (QEMU status %s) during the batch commands"
                        % (con.name, con.rc))
    pytest.fail("%s: the batch commands did not finish within %d s" % (con.name, BOOT_TIMEOUT))


def kernel_bits(firmware):
    """64 for the x86-64 kernel (uefi-x64), 32 for the ia32 kernel (uefi-ia32, bios)."""
    return 64 if firmware == "uefi-x64" else 32


def firmware_suffix(firmware):
    """"" for the default configuration, else "-ia32" etc. for image and log names."""
    return "" if firmware == qemu.DEFAULT_FIRMWARE else "-" + firmware.rpartition("-")[2]


@pytest.fixture(scope="session")
def firmware(request):
    """The boot configuration the QEMU tests run against (--nbprof-firmware)."""
    return request.config.getoption("--nbprof-firmware")


@pytest.fixture(scope="module")
def nb(request, firmware):
    """A booted machine at its first prompt, shared by the tests of one module."""
    name = request.module.__name__.rpartition(".")[2] + firmware_suffix(firmware)
    opts = dict(getattr(request.module, "BOOT", {}))
    opts.setdefault("firmware", firmware)
    dev = request.config.getoption("--nbprof-serial")
    t0 = time.monotonic()
    con = open_serial(dev) if dev else boot_qemu(name, **opts)
    _consoles[request.module.__name__] = con
    try:
        con.expect_exact(READY, BOOT_TIMEOUT if not dev else 600)
        _boot_times.append((name, time.monotonic() - t0))
        con.expect_exact(PROMPT, CMD_TIMEOUT)
        boot_output = con.child.before
        if opts.get("cfg") and "run" in opts["cfg"]:
            boot_output += settle(con)
        con.boot_output = clean(boot_output)
        yield con
    finally:
        con.stop()
        if con.varstore:
            os.unlink(con.varstore)
        os.makedirs(WORK, exist_ok=True)
        with open(os.path.join(WORK, name + ".log"), "w") as f:
            f.write(con.transcript)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.failed:
        con = _consoles.get(item.module.__name__)
        if con is not None:
            rep.sections.append(("serial transcript (%s)" % con.name, con.transcript))


def pytest_terminal_summary(terminalreporter):
    for name, secs in _boot_times:
        terminalreporter.write_line("boot %-20s %5.2f s to '%s'" % (name, secs, READY))
    write_counts(terminalreporter)
