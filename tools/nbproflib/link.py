"""link - the serial line to a target and the shell on it.

QemuLink (a QEMU this process starts, its serial port on a pipe) and
SerialLink (a serial port, 8N1) carry bytes; Target types commands into
the target's shell and reads their output back (tools/nbprof).
LineSource and capture_live are the decoder's live capture (nbprof-decode
--serial/--socket, a serial port or a QEMU chardev socket): send `dump`,
collect frames until the last one or silence.
"""

import os
import re
import select
import socket
import struct
import sys
import time

from nbproflib import qemu
from nbproflib.frames import DecodeError

READY = "nbprof: ready"
PROMPT = "nbprof> "
ANSI = re.compile(r"\x1b(\[[0-9;=?]*[A-Za-z]|[()][0-9A-Za-z]|[=>])")
DEFAULT_BAUD = 115200
BUILT_CFG = os.path.join(qemu.BUILD, "image.cfg")     # the Makefile's copy of the last CFG=


class UsageError(Exception):
    """Bad command line: exit status 2."""


class LinkError(Exception):
    """Connection, boot or transfer problem: exit status 2."""


# a long run's progress line (arch/x86/progress.h): CR-started updates, cleared by spaces
PROGRESS = re.compile(r"(?:\r# stepped \d+ instructions)+\r *\r")


def clean(text):
    """Serial text without terminal escapes, with plain \\n line ends."""
    text = PROGRESS.sub("", ANSI.sub("", text))
    text = re.sub(r"\r+\n", "\n", text)
    return text.replace("\r", "")


# --- links: bytes to and from the target ------------------------------------------

class QemuLink:
    """A QEMU this command starts, its serial port on a pipe."""

    def __init__(self, args):
        import subprocess
        try:
            qemu.check_host(qemu.default_image(args), args.firmware, args.media)
            code, template = qemu.find_firmware(args.firmware)
        except SystemExit as e:
            raise LinkError(str(e)) from None
        self.copy = None
        if args.media == "disk" and not args.keep_cfg:
            try:
                image, left_out = qemu.image_without_cfg(args.image)
            except SystemExit as e:
                raise LinkError("%s; boot it with --keep-cfg" % e) from None
            if left_out:
                self.copy = args.image = image
                sys.stderr.write("nbprof: booting a copy of the image without its nbprof.cfg "
                                 "(%s; --keep-cfg boots it as it is)\n" % "; ".join(left_out))
        elif args.media != "disk" and os.path.exists(BUILT_CFG) and os.path.getsize(BUILT_CFG):
            sys.stderr.write("nbprof: note: the %s may hold the nbprof.cfg it was made with "
                             "(make ... CFG=); its commands run at boot\n" % args.media)
        self.varstore = qemu.make_vars(template)
        argv = qemu.machine_command(args, self.varstore, code)
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     bufsize=0)
        self.name = "QEMU"
        self.needs_boot = True

    def fileno(self):
        return self.proc.stdout.fileno()

    def write(self, data):
        try:
            self.proc.stdin.write(data)
        except BrokenPipeError:
            raise LinkError(self.gone()) from None

    def read(self, timeout):
        r, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not r:
            return b""
        data = os.read(self.proc.stdout.fileno(), 4096)
        if not data:
            raise LinkError(self.gone())
        return data

    def gone(self):
        rc = self.proc.wait()
        return "QEMU exited: status %d: %s" % (rc, qemu.exit_meaning(rc))

    def close(self):
        try:
            self.proc.wait(5)           # after poweroff, QEMU ends by itself
        except Exception:
            pass
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except Exception:
                self.proc.kill()
                self.proc.wait()
        if self.varstore and os.path.exists(self.varstore):
            os.unlink(self.varstore)
        if self.copy and os.path.exists(self.copy):
            os.unlink(self.copy)


def parse_serial(text):
    """DEV[:BAUD] -> (dev, baud)."""
    dev, sep, baud = text.rpartition(":")
    if not sep or not baud.isdigit():
        return text, DEFAULT_BAUD
    if int(baud) <= 0:
        raise UsageError("--serial %s: bad baud rate" % text)
    return dev, int(baud)


class SerialLink:
    """A serial port (pyserial, Debian python3-serial), 8N1, no flow control."""

    def __init__(self, spec):
        try:
            import serial
        except ImportError:
            raise LinkError("--serial needs python3-serial (apt-get install python3-serial)")
        dev, baud = parse_serial(spec)
        try:
            self.port = serial.Serial(dev, baud, bytesize=8, parity="N", stopbits=1, timeout=0)
        except (serial.SerialException, OSError) as e:
            raise LinkError("cannot open %s: %s" % (dev, e)) from None
        self.name = dev
        self.needs_boot = False

    def fileno(self):
        return self.port.fileno()

    def write(self, data):
        self.port.write(data)

    def read(self, timeout):
        r, _, _ = select.select([self.port.fileno()], [], [], timeout)
        if not r:
            return b""
        data = self.port.read(4096)
        if not data:
            raise LinkError("%s: the line was closed" % self.name)
        return data

    def close(self):
        self.port.close()


# --- the target's shell -----------------------------------------------------------------

class Target:
    """Commands typed into the target's shell and their output read back."""

    def __init__(self, link, timeout):
        self.link, self.timeout = link, timeout
        self.buf = ""

    def _fill(self, deadline, what):
        left = deadline - time.monotonic()
        if left <= 0:
            raise LinkError("%s: no %s within %.0f s" % (self.link.name, what, self.timeout))
        data = self.link.read(min(left, 0.5))
        self.buf += data.decode("utf-8", "replace")
        return bool(data)

    def wait_for(self, text, timeout, what=None):
        """Text up to and including the first `text`, consumed from the buffer."""
        deadline = time.monotonic() + timeout
        while text not in self.buf:
            self._fill(deadline, what or repr(text))
        i = self.buf.index(text) + len(text)
        got, self.buf = self.buf[:i], self.buf[i:]
        return got

    def wait_re(self, pattern, timeout, what):
        """(text up to the end of the first match of pattern, the match), consumed."""
        deadline = time.monotonic() + timeout
        rx = re.compile(pattern)
        while True:
            m = rx.search(self.buf.replace("\r", ""))
            if m:
                raw = self.buf.replace("\r", "")
                self.buf = raw[m.end():]
                return raw[:m.end()], m
            self._fill(deadline, what)

    def boot(self, boot_timeout):
        """Wait until the shell takes commands."""
        if self.link.needs_boot:
            self.wait_for(READY, boot_timeout, "'%s' (boot)" % READY)
            self.wait_for(PROMPT, self.timeout, "prompt")
            return
        # A running target answers an empty line with a prompt; else it is booting.
        self.link.write(b"\r")
        deadline = time.monotonic() + 3
        while PROMPT not in self.buf and time.monotonic() < deadline:
            self.buf += self.link.read(0.2).decode("utf-8", "replace")
        if PROMPT not in self.buf:
            self.wait_for(READY, boot_timeout, "prompt or '%s'" % READY)
            self.wait_for(PROMPT, self.timeout, "prompt")
        self.settle()

    def settle(self):
        """Drop what arrived up to now (further prompts of a booting target)."""
        time.sleep(0.3)
        self.buf += self.link.read(0.1).decode("utf-8", "replace")
        self.buf = ""

    def command(self, line, on_line=None, timeout=None):
        """Type one command; its output (between the echo and the next prompt).

        on_line(text) sees each output line as it arrives (for progress).
        """
        self.link.write(line.encode() + b"\r")
        deadline = time.monotonic() + (timeout or self.timeout)
        end = "\n" + PROMPT
        seen = 0
        while end not in self.buf.replace("\r", ""):
            self._fill(deadline, "prompt after '%s'" % line)
            if on_line:
                lines = self.buf.split("\n")
                for l in lines[seen:-1]:
                    on_line(clean(l))
                seen = max(seen, len(lines) - 1)
        raw = PROGRESS.sub("", self.buf).replace("\r", "")
        i = raw.index(end)
        self.buf = raw[i + len(end):]
        out = clean(raw[:i])
        echo, _, rest = out.partition("\n")
        if echo.strip() != line.strip():
            raise LinkError("%s: echo %r instead of %r: is another program using the line, "
                            "or an nbprof.cfg running commands at boot?"
                            % (self.link.name, echo, line))
        return rest

    def poweroff(self):
        try:
            self.link.write(b"poweroff\r")
        except LinkError:
            pass


def errors_in(output):
    return [l for l in output.splitlines() if l.startswith("error:")]


# --- the decoder's live capture ---------------------------------------------------

class LineSource:
    """Lines from a serial port or a socket, with an idle timeout."""

    def __init__(self, args):
        self.buf = b""
        if args.serial:
            try:
                import serial  # Debian python3-serial
            except ImportError:
                raise DecodeError("--serial needs python3-serial (apt-get install python3-serial)")
            self.port = serial.Serial(args.serial, args.baud, timeout=0.2)
            self.send_raw, self.recv = self.port.write, lambda: self.port.read(4096)
        else:
            self.sock = self._connect(args.socket)
            self.sock.settimeout(0.2)
            self.send_raw = self.sock.sendall
            self.recv = self._sock_recv

    @staticmethod
    def _connect(where):
        if os.path.exists(where):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(where)
            return s
        host, _, port = where.rpartition(":")
        return socket.create_connection((host or "localhost", int(port)))

    def _sock_recv(self):
        try:
            data = self.sock.recv(4096)
        except socket.timeout:
            return b""
        if not data:
            raise EOFError
        return data

    def send(self, line):
        self.send_raw((line + "\r").encode())

    def lines(self, idle):
        last = time.monotonic()
        while time.monotonic() - last < idle:
            try:
                data = self.recv()
            except EOFError:
                break
            if data:
                last = time.monotonic()
                self.buf += data
                *done, self.buf = self.buf.split(b"\n")
                for d in done:
                    yield d.decode("utf-8", "replace").rstrip("\r")
        if self.buf:
            yield self.buf.decode("utf-8", "replace")


def capture_live(args, cap):
    """Send the dump command and collect frames until the last one or silence."""
    src = LineSource(args)
    src.send(args.command or "dump")
    saved, total = [], None
    for line in src.lines(args.idle):
        saved.append(line)
        cap.add_text(line, args.serial or args.socket)
        if total is None and 0 in cap.frames:
            blob = cap.frames[0][1]
            total = struct.unpack_from("<I", blob, 11)[0] if len(blob) >= 15 else None
        if total is not None and total - 1 in cap.frames:
            break
    if args.save:
        with open(args.save, "w") as f:
            f.write("\n".join(saved) + "\n")

