"""test_screen.py - the shell on the machine's own screen and keyboard.

Two machines with a VGA card and no keys typed on the serial line: SeaBIOS
(GRUB leaves VGA text mode 3; nbprof writes B8000H) and OVMF x64 (the GOP
framebuffer, 8x16 cells drawn with arch/x86/font8x8.c). Keys are typed
with the QEMU monitor's sendkey, which goes through the i8042 as on a PC;
the serial console sees the same echo and output. The screen is read back
through the monitor: VGA text memory with `xp` (character bytes at even
addresses), the framebuffer with `screendump` (a PPM), whose 8x16 cells are
decoded by matching their even pixel rows against the kernel's own glyph
table (every glyph differs). What the screen must show is the serial
transcript since the kernel's banner, each line wrapped at the screen's
width, its last rows. A third, short SeaBIOS boot with nbprof.cfg
`console = screen` is driven through the screen and keyboard alone and
must print nothing on the serial port.
"""

import os
import re
import socket
import time

import pexpect
import pytest

import conftest
from conftest import BOOT_TIMEOUT, CMD_TIMEOUT, PROMPT, READY, REPO, WORK, Console, clean, qemu

pytestmark = pytest.mark.qemu_only

FONT_C = os.path.join(REPO, "arch", "x86", "font8x8.c")
BANNER = "\nnbprof "


def font():
    """{8 glyph rows: character} from the kernel's font table."""
    text = open(FONT_C).read()
    rows = [tuple(int(x, 16) for x in m.group(1).split(","))
            for m in re.finditer(r"\{ (0x[0-9a-f, x]*) \}", text)]
    assert len(rows) == 95 and len(set(rows)) == 95
    return {g: chr(0x20 + i) for i, g in enumerate(rows)}


class Monitor:
    """The QEMU monitor on a Unix socket: one command, its reply."""

    def __init__(self, path):
        deadline = time.monotonic() + 10
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX)
                self.sock.connect(path)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        self.sock.settimeout(CMD_TIMEOUT)
        self._read_until(b"(qemu) ")                      # the greeting and first prompt

    def _read_until(self, tail, after=b""):
        """Bytes up to a buffer that ends in tail, with `after` somewhere before it."""
        buf = b""
        while not (buf.endswith(tail) and after in buf[:len(buf) - len(tail)]):
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("monitor closed")
            buf += chunk
        return buf

    def cmd(self, line):
        """The reply to one command: the monitor echoes the line, answers, prompts again."""
        self.sock.sendall((line + "\n").encode())
        return self._read_until(b"(qemu) ", line.encode()).decode(errors="replace")

    def close(self):
        self.sock.close()


KEYS = {" ": "spc", "\r": "ret", "-": "minus", ".": "dot", "/": "slash", "\b": "backspace"}


def keys_for(text):
    """sendkey names for text (lower case, digits, upper case with shift)."""
    out = []
    for ch in text:
        if ch in KEYS:
            out.append(KEYS[ch])
        elif ch.isupper():
            out.append("shift-" + ch.lower())
        else:
            out.append(ch)
    return out


def type_line(con, mon, text):
    """Type text and Enter on the keyboard; the command's output from the serial line."""
    for k in keys_for(text + "\r"):
        mon.cmd("sendkey " + k)
    con.expect_exact(PROMPT, CMD_TIMEOUT)
    return clean(con.child.before)


def vga_text(mon):
    """The 25 rows of the VGA text buffer (character bytes of B8000H..B8F9FH)."""
    out = mon.cmd("xp /4000bx 0xb8000")
    data = []
    for line in out.splitlines():
        if re.match(r"^[0-9a-f]+:", line):
            data += [int(x, 16) for x in re.findall(r"0x([0-9a-f]{2})", line.split(":", 1)[1])]
    assert len(data) == 4000, out[:200]
    chars = bytes(data[0::2]).decode("latin-1")
    return [chars[r * 80:(r + 1) * 80] for r in range(25)]


def fb_text(mon, path):
    """The framebuffer's character cells, decoded with the kernel's font."""
    if os.path.exists(path):
        os.unlink(path)
    mon.cmd("screendump " + path)
    data = open(path, "rb").read()
    m = re.match(rb"P6\s+(\d+)\s+(\d+)\s+255\s", data)
    assert m, data[:20]
    w, h = int(m.group(1)), int(m.group(2))
    px = data[m.end():]
    glyphs = font()
    rows = []
    for r in range(h // 16):
        line = ""
        for c in range(w // 8):
            g = []
            for y in range(0, 16, 2):
                off = ((r * 16 + y) * w + c * 8) * 3
                bits = 0
                for x in range(8):
                    if any(px[off + 3 * x:off + 3 * x + 3]):
                        bits |= 0x80 >> x
                g.append(bits)
            line += glyphs.get(tuple(g), "\0")
        rows.append(line)
    return rows


def wrapped(transcript, cols):
    """The transcript since the banner as screen rows: lines cut every `cols` characters."""
    text = transcript[transcript.rindex(BANNER):]
    rows = []
    for line in text.split("\n"):
        rows += [line[i:i + cols] for i in range(0, max(len(line), 1), cols)]
    return rows


def expected_screen(con, cols, nrows):
    """The last nrows rows, or all of them and blank rows below while the screen is not full."""
    rows = [r.rstrip() for r in wrapped(con.transcript, cols)]
    return rows[-nrows:] if len(rows) >= nrows else rows + [""] * (nrows - len(rows))


def screen_machine(name, firmware, module, cfg=None):
    """A machine with a VGA card and the QEMU monitor, at its first prompt: yields
    (Console, Monitor); the transcript goes to WORK/NAME.log. Also test_qr.py's.
    cfg: the text of its nbprof.cfg."""
    img = conftest.make_image(name, cfg=cfg, firmware=firmware)
    code, template = qemu.find_firmware(firmware)
    varstore = qemu.make_vars(template)
    sock = os.path.join(WORK, name + ".mon")
    if os.path.exists(sock):
        os.unlink(sock)
    argv = qemu.command(img, varstore, code, firmware=firmware, screen=True, monitor=sock,
                        cpu=qemu.cpu_model(15, 2, 9, firmware=firmware))
    child = pexpect.spawn(argv[0], argv[1:], encoding="utf-8", codec_errors="replace",
                          dimensions=(50, 200), timeout=CMD_TIMEOUT)
    con = Console(child, name)
    conftest._consoles[module] = con
    mon = None
    try:
        con.expect_exact(READY, BOOT_TIMEOUT)
        con.expect_exact(PROMPT, CMD_TIMEOUT)
        mon = Monitor(sock)
        yield con, mon
    finally:
        if mon:
            mon.close()
        con.stop()
        if varstore:
            os.unlink(varstore)
        with open(os.path.join(WORK, name + ".log"), "w") as f:
            f.write(con.transcript)


@pytest.fixture(scope="module", params=["bios", "uefi-x64"])
def machine(request):
    firmware = request.param
    name = "screen-" + firmware
    for con, mon in screen_machine(name, firmware, __name__):
        m = {"con": con, "mon": mon, "firmware": firmware,
             "read": (lambda: vga_text(mon)) if firmware == "bios"
             else (lambda: fb_text(mon, os.path.join(WORK, name + ".ppm")))}
        m["cols"] = len(m["read"]()[0])
        yield m


def settled_screen(machine, timeout=10):
    """The screen rows once two reads agree (the kernel draws after the serial prompt
    went out, while it starts waiting for a key) and the expected rows."""
    deadline = time.monotonic() + timeout
    before = None
    while True:
        screen = [r.rstrip("\0 ") for r in machine["read"]()]
        want = expected_screen(machine["con"], machine["cols"], len(screen))
        if screen == want or (screen == before and time.monotonic() > deadline):
            return screen, want
        before = screen
        time.sleep(0.2)


def test_console_line_names_the_screen_and_keyboard(machine):
    t = machine["con"].transcript
    if machine["firmware"] == "bios":
        want = r"^console: screen VGA text 80x25 at 0xb8000 \(BIOS video mode 3\); keyboard i8042$"
    else:
        want = (r"^console: screen framebuffer (\d+)x(\d+) at 0x[0-9a-f]+, (\d+)x(\d+) characters; "
                r"keyboard i8042$")
    m = re.search(want, t, re.M)
    assert m, t
    if machine["firmware"] != "bios":
        w, h, cols, rows = map(int, m.groups())
        assert (cols, rows) == (w // 8, h // 16)


def test_boot_messages_on_the_screen(machine):
    screen, want = settled_screen(machine)
    assert "nbprof: ready" in screen, "\n".join(screen)
    assert screen == want


def test_typed_command_runs_and_shows_on_both(machine):
    con, mon = machine["con"], machine["mon"]
    out = type_line(con, mon, "cpu")
    echo, _, rest = out.partition("\n")
    assert echo.strip() == "cpu"                     # echoed on the serial line too
    assert re.search(r"^signature\s+0F_02H stepping 9", rest, re.M), rest
    screen, want = settled_screen(machine)
    assert screen == want
    # 80 columns: long lines of `cpu` wrap, nothing is lost
    if machine["firmware"] == "bios":
        longest = max(len(line) for line in rest.split("\n"))
        assert longest > 80


def test_shift_and_backspace(machine):
    con, mon = machine["con"], machine["mon"]
    # "msr read 0x1B" with Shift for B, after a typo erased with Backspace
    out = type_line(con, mon, "msr reaq\bd 0x1B")
    echo = out.partition("\n")[0]
    assert echo == "msr reaq\b \bd 0x1B", repr(echo)     # Backspace erased, Shift gave 'B'
    assert re.search(r"^MSR 1BH = [0-9A-F]{16}H$", out, re.M), out


def test_console_screen_only_keeps_the_serial_port_silent():
    """nbprof.cfg console = screen: the shell is on the screen and keyboard only."""
    name = "screen-only-bios"
    img = conftest.make_image(name, cfg="console = screen\n", firmware="bios")
    sock = os.path.join(WORK, name + ".mon")
    if os.path.exists(sock):
        os.unlink(sock)
    argv = qemu.command(img, None, None, firmware="bios", screen=True, monitor=sock,
                        cpu=qemu.cpu_model(15, 2, 9, firmware="bios"))
    child = pexpect.spawn(argv[0], argv[1:], encoding="utf-8", codec_errors="replace",
                          dimensions=(50, 200), timeout=CMD_TIMEOUT)
    con = Console(child, name)
    mon = None
    try:
        mon = Monitor(sock)
        deadline = time.monotonic() + BOOT_TIMEOUT
        screen = []
        while time.monotonic() < deadline:
            screen = [r.rstrip() for r in vga_text(mon)]
            if "nbprof: ready" in screen and screen[screen.index("nbprof: ready") + 1] == "nbprof>":
                break
            time.sleep(0.5)
        assert "nbprof: ready" in screen, "\n".join(screen)
        assert not [r for r in screen if r.startswith("console: serial")], "\n".join(screen)
        assert [r for r in screen if r.startswith("console: screen VGA text 80x25")]
        for k in keys_for("msr read 0x1B\r"):
            mon.cmd("sendkey " + k)
        deadline = time.monotonic() + CMD_TIMEOUT
        while time.monotonic() < deadline:
            screen = [r.rstrip() for r in vga_text(mon)]
            if any(re.match(r"^MSR 1BH = [0-9A-F]{16}H$", r) for r in screen):
                break
            time.sleep(0.2)
        assert any(re.match(r"^MSR 1BH = [0-9A-F]{16}H$", r) for r in screen), "\n".join(screen)
        try:
            con.child.expect(r"\S", timeout=0.5)
            pytest.fail("the serial port printed %r" % (con.child.before + con.child.after))
        except pexpect.TIMEOUT:
            pass
    finally:
        if mon:
            mon.close()
        con.stop()
