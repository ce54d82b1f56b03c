"""The selftest report read back from QR codes (selftest/report_qr.h).

`selftest --qr` shows the NBS: lines as QR codes, each holding the text

    NBQ1 <k>/<n> <CRC> <base45>

where the pieces of base45 (RFC 9285) joined in the order of k are a zlib
stream of the NBS: lines, each followed by a newline, and CRC is the
CRC-32 of those lines in 8 hex digits. The codes come from photos or
screenshots (read with zbar's zbarimg, Debian's zbar-tools) or from the
text a phone's QR reader shows, pasted. A missing, doubled or altered
code refuses the whole report with the reason: never a silent merge.
"""

import re
import shutil
import subprocess
import zlib

MAGIC = "NBQ1"
ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:"
CODE_RE = re.compile(r"NBQ1 ([0-9]{1,6})/([0-9]{1,6}) ([0-9A-F]{8}) ([0-9A-Z $%*+\-./:]*)")
IMAGE_EXT = (".png", ".jpg", ".jpeg", ".ppm", ".pgm", ".pnm", ".gif", ".bmp", ".tif", ".tiff",
             ".webp")
IMAGE_MAGIC = (b"\x89PNG", b"\xff\xd8\xff", b"GIF8", b"BM", b"P5", b"P6", b"II*\0", b"MM\0*")


class Refused(Exception):
    """The codes cannot give the report; the message says why."""


def is_image(path, head):
    return path.lower().endswith(IMAGE_EXT) or head.startswith(IMAGE_MAGIC)


def read_image(path):
    """The text of every QR code zbarimg finds in the image, one per line."""
    zbarimg = shutil.which("zbarimg")
    if not zbarimg:
        raise Refused("zbarimg is not installed (Debian: apt-get install zbar-tools)")
    p = subprocess.run([zbarimg, "--quiet", "--raw", "-Sdisable", "-Sqrcode.enable", path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode == 4 or (p.returncode == 0 and not p.stdout.strip()):
        raise Refused("%s: zbarimg found no QR code in the image" % path)
    if p.returncode:
        raise Refused("%s: zbarimg failed (status %d): %s" % (
            path, p.returncode, p.stderr.decode(errors="replace").strip()[:200]))
    return p.stdout.decode("utf-8", "replace")


def base45_decode(text):
    """bytes of base45 text; ValueError when it is not base45."""
    if len(text) % 3 == 1:
        raise ValueError("a length of 1 modulo 3")
    out = bytearray()
    for i in range(0, len(text), 3):
        group = text[i:i + 3]
        v = sum(ALNUM.index(c) * 45 ** k for k, c in enumerate(group))
        if v > (0xffff if len(group) == 3 else 0xff):
            raise ValueError("the group %r is worth more than it can be" % group)
        out += v.to_bytes(len(group) - 1, "big")
    return bytes(out)


def find_codes(texts):
    """[(source, k, n, crc, payload)] of every code text in the captures."""
    codes = []
    for source, text in texts:
        for line in text.splitlines():
            for m in CODE_RE.finditer(line):
                codes.append((source, int(m.group(1)), int(m.group(2)), m.group(3),
                              m.group(4).rstrip(" ")))
    return codes


def reassemble(codes):
    """[(crc, text of NBS: lines)] of each report the codes make; Refused if any cannot."""
    reports = {}
    for source, k, n, crc, payload in codes:
        if n < 1 or not 1 <= k <= n:
            raise Refused("%s: code %d of %d: no such number" % (source, k, n))
        rep = reports.setdefault(crc, {"n": n, "parts": {}})
        if rep["n"] != n:
            raise Refused("codes of report %s say %d and %d codes in all (altered?)"
                          % (crc, rep["n"], n))
        if k in rep["parts"] and rep["parts"][k] != payload:
            raise Refused("code %d of %d of report %s appears twice with different text "
                          "(altered?)" % (k, n, crc))
        rep["parts"][k] = payload
    out = []
    for crc, rep in reports.items():
        n, parts = rep["n"], rep["parts"]
        missing = [k for k in range(1, n + 1) if k not in parts]
        if missing:
            raise Refused("report %s: code(s) %s of %d missing" % (
                crc, ", ".join(map(str, missing)), n))
        data = b""
        for k in range(1, n + 1):
            if k < n and len(parts[k]) % 3:
                raise Refused("report %s: code %d of %d is cut short (%d characters)"
                              % (crc, k, n, len(parts[k])))
            try:
                data += base45_decode(parts[k])
            except ValueError as e:
                raise Refused("report %s: code %d of %d is not base45 (%s; altered?)"
                              % (crc, k, n, e))
        try:
            text = zlib.decompress(data)
        except zlib.error as e:
            raise Refused("report %s: the codes do not inflate (%s; altered?)" % (crc, e))
        if "%08X" % zlib.crc32(text) != crc:
            raise Refused("report %s: the lines' CRC-32 is %08X (altered?)"
                          % (crc, zlib.crc32(text)))
        out.append((crc, text.decode("utf-8", "replace")))
    return out


def read_capture(path, stdin):
    """(source, text) of one capture: a file of text, an image, or '-' for standard input."""
    if path == "-":
        return ("-", stdin.read())
    with open(path, "rb") as f:
        data = f.read()
    if is_image(path, data[:8]):
        return (path, read_image(path))
    return (path, data.decode("utf-8", "replace"))


def expand(texts):
    """The captures with every report's codes turned back into its NBS: lines."""
    codes = find_codes(texts)
    if not codes:
        return texts
    return [t for t in texts if "NBQ1 " not in t[1]] + [
        ("QR codes of report %s" % crc, text) for crc, text in reassemble(codes)]
