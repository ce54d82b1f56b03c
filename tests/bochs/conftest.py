"""conftest.py - Bochs as a second test machine: real Pentium 4 CPUID, no PMU.

Bochs (an x86 emulator written independently of QEMU) presents real
Pentium 4 CPUID tables (cpu: model=p4_willamette, p4_prescott_celeron_336),
a Hyper-Threading sibling with count=1:1:2, and with ignore_bad_msrs=0 an
unknown MSR raises #GP as on hardware. Its NetBurst PMU registers are given
by tests/bochs/msrs.py as plain registers (msrs="FILE"): they hold what is
written, reserved bits #GP, and nothing ever counts. So the hardware
backend runs on registers that behave as registers and a PMU that is dead:
what `selftest` must then say is known exactly.

Each machine boots the image's BIOS path (Bochs' own BIOS, GRUB i386-pc,
the 32-bit kernel nbprof32.elf) from its own copy of the disk image (Bochs
locks the file). Its serial line is a TCP socket (com1 mode=socket-server);
Debian's Bochs starts in its debugger, so it is given an rc file with
`c`, and it has no headless display, so it runs the `term` display in a
pseudo-terminal whose output a thread drains. NBPROF_COUNTS names a file
that receives "PASSED FAILED" for `make check`'s summary line.
"""

import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time

import pexpect
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/
from counts import write_counts  # noqa: E402
from pexpect import fdpexpect

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
BUILD = os.path.abspath(os.environ.get("NBPROF_BUILD") or os.path.join(REPO, "build"))
WORK = os.path.join(BUILD, "bochs-test")
sys.path.insert(0, HERE)
import msrs  # noqa: E402

BIOS = "/usr/share/bochs/BIOS-bochs-latest"
VGABIOS = "/usr/share/vgabios/vgabios.bin"
PROMPT = "nbprof> "
BOOT_TIMEOUT = 60
CMD_TIMEOUT = 60
ANSI = re.compile(r"\x1b\[[0-9;=?]*[A-Za-z]")

# Bochs' CPU models and what their CPUID says (Bochs 2.7 cpu/cpudb): CPUID
# model number for the msrs file.
MODELS = {"p4_willamette": 1, "p4_prescott_celeron_336": 4}
# Bochs' generic CPU (no model=) with a NetBurst signature of our choice: cpuid=(family, model,
# stepping); the features a Northwood has (SSE2, the local APIC, no EM64T).
GENERIC = ("cpuid: family=%d, model=%d, stepping=%d, vendor_string=\"GenuineIntel\", "
           "brand_string=\"Intel(R) Pentium(R) 4 CPU\", mmx=1, sep=1, simd=sse2, "
           "apic=xapic, x86_64=0\n")


def clean(s):
    return ANSI.sub("", s).replace("\r", "")


def have_bochs():
    return shutil.which("bochs") and os.path.exists(BIOS) and os.path.exists(VGABIOS)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def base_image():
    """build/bochs-test/bios.img: the BIOS path of the image (tools/build/mkimage --bios)."""
    os.makedirs(WORK, exist_ok=True)
    img = os.path.join(WORK, "bios.img")
    elf, efi = os.path.join(BUILD, "nbprof32.elf"), os.path.join(BUILD, "BOOTX64.EFI")
    for f in (elf, efi):
        if not os.path.exists(f):
            pytest.fail("%s is missing: run make" % f)
    if not os.path.exists(img) or os.path.getmtime(img) < os.path.getmtime(elf):
        subprocess.run([os.path.join(REPO, "tools", "build", "mkimage"), "--bios", elf, img, efi],
                       check=True, stdout=subprocess.DEVNULL)
    return img


def floppy_image():
    """build/bochs-test/floppy.img: the 1.44 MB floppy (tools/build/mkfloppy)."""
    os.makedirs(WORK, exist_ok=True)
    img = os.path.join(WORK, "floppy.img")
    elf = os.path.join(BUILD, "nbprof32.elf")
    if not os.path.exists(elf):
        pytest.fail("%s is missing: run make" % elf)
    subprocess.run([os.path.join(REPO, "tools", "build", "mkfloppy"), img, elf], check=True,
                   stdout=subprocess.DEVNULL)
    return img


class Bochs:
    """One Bochs machine: its serial line (send, expect, cmd) and its process.

    floppy: boot the floppy (drive A:) instead of the disk image."""

    def __init__(self, name, model, ht=False, pmu="plain", stuck_counter0=None, floppy=False,
                 cpuid=None, ips=None):
        self.name = name
        d = os.path.join(WORK, name)
        os.makedirs(d, exist_ok=True)
        for f in os.listdir(d):
            os.unlink(os.path.join(d, f))
        img = self.img = os.path.join(d, "floppy.img" if floppy else "disk.img")
        shutil.copyfile(floppy_image() if floppy else base_image(), img)
        media = ("floppya: 1_44=%s, status=inserted\nboot: floppy\n" % img if floppy else
                 "ata0-master: type=disk, path=%s, mode=flat\nboot: disk\n" % img)
        cpu = "count=%s, ignore_bad_msrs=0" % ("1:1:2" if ht else "1")
        if model:
            cpu = "model=%s, " % model + cpu
        if ips:
            cpu += ", ips=%d" % ips
        if pmu == "plain":
            path = os.path.join(d, "msrs.txt")
            with open(path, "w") as f:
                f.write(msrs.msrs_text(MODELS[model] if model else cpuid[1], ht, stuck_counter0))
            cpu += ', msrs="%s"' % path
        self.port = free_port()
        rc = os.path.join(d, "rc")
        with open(rc, "w") as f:
            f.write("c\n")
        cfg = os.path.join(d, "bochsrc")
        with open(cfg, "w") as f:
            f.write("megs: 96\nromimage: file=%s\nvgaromimage: file=%s\n%s"
                    "cpu: %s\n%scom1: enabled=1, mode=socket-server, dev=localhost:%d\n"
                    "display_library: term\nlog: %s\nclock: sync=none\n"
                    "speaker: enabled=0\n"
                    % (BIOS, VGABIOS, media, cpu, GENERIC % cpuid if cpuid else "", self.port,
                       os.path.join(d, "bochs.log")))
        self.proc = pexpect.spawn("bochs", ["-f", cfg, "-rc", rc], cwd=d,
                                  env={"TERM": "xterm", "PATH": os.environ["PATH"]},
                                  dimensions=(25, 80), timeout=None)
        self._drain = threading.Thread(target=self._drain_screen, daemon=True)
        self._drain.start()
        self.sock = self._connect()
        self.child = fdpexpect.fdspawn(self.sock.fileno(), encoding="utf-8",
                                       codec_errors="replace", timeout=CMD_TIMEOUT)
        self.raw = []
        self.child.logfile_read = self
        self.boot = clean(self.expect_exact(PROMPT, BOOT_TIMEOUT, "the prompt"))

    def _drain_screen(self):
        """Read Bochs' terminal display, which would otherwise fill its pty and stop it."""
        while True:
            try:
                self.proc.read_nonblocking(65536, timeout=1)
            except pexpect.TIMEOUT:
                continue
            except (pexpect.EOF, OSError, ValueError):
                return

    def _connect(self):
        end = time.monotonic() + 20
        while time.monotonic() < end:
            try:
                return socket.create_connection(("127.0.0.1", self.port), timeout=5)
            except OSError:
                if not self.proc.isalive():
                    break
                time.sleep(0.1)
        pytest.fail("%s: Bochs' serial socket did not open (see %s)" % (
            self.name, os.path.join(WORK, self.name, "bochs.log")))

    # pexpect's logfile interface
    def write(self, s):
        self.raw.append(s)

    def flush(self):
        pass

    @property
    def transcript(self):
        return clean("".join(self.raw))

    def expect(self, pattern, timeout, what):
        try:
            self.child.expect(pattern, timeout=timeout)
        except pexpect.TIMEOUT:
            pytest.fail("%s: no %s within %d s" % (self.name, what, timeout))
        except pexpect.EOF:
            pytest.fail("%s: Bochs stopped while waiting for %s" % (self.name, what))
        return self.child.before

    def expect_exact(self, text, timeout, what=None):
        return self.expect(re.escape(text), timeout, what or repr(text))

    def send(self, text):
        self.sock.sendall(text.encode())

    def cmd(self, text, timeout=CMD_TIMEOUT):
        """Type one command; its output between the echo and the next prompt."""
        self.send(text + "\r")
        out = clean(self.expect_exact(PROMPT, timeout, "the prompt after %r" % text))
        echo, _, rest = out.partition("\n")
        assert echo.strip() == text.strip(), "echo %r instead of %r" % (echo, text)
        return rest.rstrip("\n")

    def stop(self):
        try:
            self.sock.close()
        except OSError:
            pass
        if self.proc.isalive():
            self.proc.terminate(force=True)
        self.proc.close()
        if os.path.exists(self.img):     # a copy of bios.img or floppy.img; bochs.log stays
            os.unlink(self.img)


ORDER = []          # machine names in the order their tests run (collection)
_next = {}          # name -> [thread, Bochs or None, error]: a boot started ahead


def _boot_ahead(name, kw):
    slot = [None, None, None]

    def run():
        try:
            slot[1] = Bochs(name, **kw)
        except BaseException as e:      # pytest.fail in a thread: reported by the fixture
            slot[2] = e
    slot[0] = threading.Thread(target=run, daemon=True)
    slot[0].start()
    _next[name] = slot


def _take(name, kw):
    slot = _next.pop(name, None)
    if slot is None:
        return Bochs(name, **kw)
    slot[0].join()
    if slot[2] is not None:
        raise slot[2]
    return slot[1]


@pytest.fixture(scope="module")
def machine(request):
    """The machine named by the test's (indirect) parameter, a key of the module's
    MACHINES. Module-scoped, with the tests sorted by machine: each machine boots
    once and is stopped before the one after the next starts; the next one boots
    meanwhile (two Bochs at most, one for each of the two cores)."""
    if not have_bochs():
        pytest.fail("Bochs is missing: install the Debian packages bochs, bochsbios, vgabios "
                    "and bochs-term (tools/build/ensure-deps)")
    machines = request.module.MACHINES
    m = _take(request.param, machines[request.param])
    k = ORDER.index(request.param) if request.param in ORDER else len(ORDER)
    if k + 1 < len(ORDER) and ORDER[k + 1] not in _next:
        _boot_ahead(ORDER[k + 1], machines[ORDER[k + 1]])
    yield m
    m.stop()


def pytest_sessionfinish(session, exitstatus):
    for name in list(_next):
        slot = _next.pop(name)
        slot[0].join()
        if slot[1] is not None:
            slot[1].stop()


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    """The tests of each machine side by side (stable), so each boots once."""
    first = {}

    def machine_of(item):
        cs = getattr(item, "callspec", None)
        name = cs.params.get("machine") if cs else None
        return first.setdefault(name, len(first))

    items[:] = sorted(items, key=machine_of)
    ORDER[:] = sorted(first, key=first.get)
    if None in ORDER:
        ORDER.remove(None)


def pytest_terminal_summary(terminalreporter):
    write_counts(terminalreporter)
