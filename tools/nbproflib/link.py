"""link - the serial line to a target and the shell on it.

QemuLink (a QEMU this process starts, its serial port on a pipe),
SerialLink (a serial port, 8N1) and SocketLink (a QEMU chardev socket)
carry bytes. Target is the one reader of the target's serial line: it
types commands into the shell and reads their output back up to the next
prompt (tools/nbprof), or hands over the lines that arrive until the line
falls silent (capture_live, the decoder's live capture: nbprof-decode
--serial/--socket sends `dump` and collects frames until the last one or
silence). Whatever the caller, the text it gets is decoded the same way:
UTF-8 across reads, terminal escapes and progress lines removed, \n line
ends.
"""

import codecs

import os
import re
import select
import socket
import struct
import sys
import time

from nbproflib import qemu

READY = "nbprof: ready"
PROMPT = "nbprof> "
ANSI = re.compile(r"\x1b(\[[0-9;=?]*[A-Za-z]|[()][0-9A-Za-z]|[=>])")
DEFAULT_BAUD = 115200
BUILT_CFG = os.path.join(qemu.BUILD, "image.cfg")     # the Makefile's copy of the last CFG=


class UsageError(Exception):
    """Bad command line: exit status 2."""


class LinkError(Exception):
    """Connection, boot or transfer problem: exit status 2."""


class LinkClosed(LinkError):
    """The other end closed the line (QEMU exited, the socket or port was closed)."""


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
            raise LinkClosed(self.gone())
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
    """A serial port (pyserial, Debian python3-serial), 8N1, no flow control.

    spec is DEV[:BAUD]; a baud given apart (nbprof-decode --baud) wins.
    """

    def __init__(self, spec, baud=None):
        try:
            import serial
        except ImportError:
            raise LinkError("--serial needs python3-serial (apt-get install python3-serial)")
        dev, spec_baud = parse_serial(spec)
        baud = baud or spec_baud
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
            raise LinkClosed("%s: the line was closed" % self.name)
        return data

    def close(self):
        self.port.close()


class SocketLink:
    """A QEMU chardev socket: a Unix socket's PATH, or HOST:PORT for TCP."""

    def __init__(self, where):
        try:
            if os.path.exists(where):
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.connect(where)
            else:
                host, sep, port = where.rpartition(":")
                if not sep or not port.isdigit():
                    raise LinkError("--socket %s: neither an existing socket file nor HOST:PORT"
                                    % where)
                self.sock = socket.create_connection((host or "localhost", int(port)))
        except OSError as e:
            raise LinkError("cannot connect to %s: %s" % (where, e)) from None
        self.name = where
        self.needs_boot = False

    def fileno(self):
        return self.sock.fileno()

    def write(self, data):
        try:
            self.sock.sendall(data)
        except OSError as e:
            raise LinkClosed("%s: %s" % (self.name, e)) from None

    def read(self, timeout):
        r, _, _ = select.select([self.sock], [], [], timeout)
        if not r:
            return b""
        try:
            data = self.sock.recv(4096)
        except OSError as e:
            raise LinkClosed("%s: %s" % (self.name, e)) from None
        if not data:
            raise LinkClosed("%s: the other end closed the socket" % self.name)
        return data

    def close(self):
        self.sock.close()


# --- the target's shell -----------------------------------------------------------------

class Target:
    """The target's serial line read: commands typed into its shell and their
    output read back, or the lines that arrive until it falls silent."""

    def __init__(self, link, timeout):
        self.link, self.timeout = link, timeout
        self.buf = ""
        # a character split between two reads is decoded whole, not as two U+FFFD
        self.utf8 = codecs.getincrementaldecoder("utf-8")("replace")

    def _take(self, timeout):
        """Read what arrives within timeout into the buffer; whether anything did."""
        data = self.link.read(timeout)
        self.buf += self.utf8.decode(data)
        return bool(data)

    def _fill(self, deadline, what):
        left = deadline - time.monotonic()
        if left <= 0:
            raise LinkError("%s: no %s within %.0f s" % (self.link.name, what, self.timeout))
        return self._take(min(left, 0.5))

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
            self._take(0.2)
        if PROMPT not in self.buf:
            self.wait_for(READY, boot_timeout, "prompt or '%s'" % READY)
            self.wait_for(PROMPT, self.timeout, "prompt")
        self.settle()

    def settle(self):
        """Drop what arrived up to now (further prompts of a booting target)."""
        time.sleep(0.3)
        self._take(0.1)
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

    def lines(self, idle):
        """Each line as it arrives, cleaned, until idle seconds pass without a
        byte or the other end closes; then the unfinished last line, if any."""
        last = time.monotonic()
        while True:
            left = idle - (time.monotonic() - last)
            if left <= 0:
                break
            try:
                got = self._take(min(left, 0.5))
            except LinkClosed:
                break
            if got:
                last = time.monotonic()
            *done, self.buf = self.buf.split("\n")
            for line in done:
                yield clean(line)
        if self.buf:
            line, self.buf = self.buf, ""
            yield clean(line)

    def poweroff(self):
        try:
            self.link.write(b"poweroff\r")
        except LinkError:
            pass


def errors_in(output):
    return [l for l in output.splitlines() if l.startswith("error:")]


# --- the decoder's live capture ---------------------------------------------------

def collect_frames(target, command, idle, cap):
    """Type command; add the lines that follow to cap until its last frame or idle s of silence."""
    target.link.write(command.encode() + b"\r")
    saved, total = [], None
    for line in target.lines(idle):
        saved.append(line)
        cap.add_text(line, target.link.name)
        if total is None and 0 in cap.frames:
            blob = cap.frames[0][1]
            total = struct.unpack_from("<I", blob, 11)[0] if len(blob) >= 15 else None
        if total is not None and total - 1 in cap.frames:
            break
    return saved


def capture_live(args, cap):
    """Send the dump command and collect frames until the last one or silence."""
    link = SerialLink(args.serial, args.baud) if args.serial else SocketLink(args.socket)
    try:
        saved = collect_frames(Target(link, args.idle), args.command or "dump", args.idle, cap)
    finally:
        link.close()
    if args.save:
        with open(args.save, "w") as f:
            f.write("\n".join(saved) + "\n")

