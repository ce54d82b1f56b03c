"""frames - the lines `dump` prints: base64 frames with their CRC, and NBP: program lines.

Each "NBD:" frame is seq (u32), type (u8), payload length (u16), payload and
a CRC-32 (zlib.crc32) of all before it, little-endian, base64 in the
canonical spelling (prof/dump.h). A Capture gathers the frames of one or
more captured texts of the same recording; recording.Recording assembles
them.
"""

import base64
import re
import struct
import zlib

PREFIX = "NBD:"
# dump's line per loaded user program (workload/program.h program_nbp_line): where its link
# address 0 runs, then '|' and the CRC-32 of the text between "NBP:" and '|'
PROGRAM_PREFIX = "NBP:"
PROGRAM_RE = re.compile(r"NBP:( (\S+) base=([0-9a-f]{1,16}) span=([0-9a-f]{1,16}) "
                        r"crc=([0-9a-f]{8}))\|([0-9A-F]{8})")
CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f]")
B64_RUN = re.compile(r"[A-Za-z0-9+/]*={0,2}")
HEADER, SAMPLES, TRAILER = ord("H"), ord("S"), ord("T")
CHAINS = ord("C")               # version 4: the table of call chains
# Limits of the format, from prof/dump.h and prof/samples.h.
MAX_PAYLOAD = 400               # DUMP_PAYLOAD_MAX
MAX_BLOB = 4096                 # DUMP_BLOB_MAX: header or trailer
MAX_CHAIN = 32                  # SAMPLE_MAX_CHAIN
HEADER_FIXED = 6 + 1 + 4 + 4 + 3 + 4 + 5 * 8 + 4 + 4 + 8 + 8 + 1 + 1    # no events, empty comm
TRAILER_FIXED = 4 + 8 + 4 + 1
STORE_BYTES = 1 + 5 * 8
MIN_RECORD = 3 + 4              # u8 LP, event, CPL|nchain and four one-byte varints
MIN_RECORD_V4 = 3               # head byte, TSC and IP varints
MAX_CHAINS = 256                # DUMP_CHAINS: table entries, at least one per 'C' frame


class DecodeError(Exception):
    """A dump (or an option about it) that cannot be decoded."""


# --- frames --------------------------------------------------------------------

def parse_frame(text):
    """(seq, type, payload) of one base64 frame, or a reason string."""
    if len(text) % 4:
        return "bad base64 length"
    try:
        raw = base64.b64decode(text, validate=True)
    except ValueError:
        return "bad base64"
    # Only the canonical spelling: unused bits before '=' would escape the CRC.
    if base64.b64encode(raw).decode("ascii") != text:
        return "bad base64"
    if len(raw) < 11:
        return "too short"
    seq, ftype, length = struct.unpack_from("<IBH", raw, 0)
    if length > MAX_PAYLOAD or len(raw) != 7 + length + 4:
        return "length mismatch"
    (crc,) = struct.unpack_from("<I", raw, 7 + length)
    if zlib.crc32(raw[:7 + length]) != crc:
        return "CRC mismatch"
    if ftype not in (HEADER, CHAINS, SAMPLES, TRAILER):
        return "unknown frame type"
    return seq, ftype, raw[7:7 + length]


def frame_chars(text):
    """Base64 characters of the whole frame whose first 12 characters text holds, or None."""
    try:
        head = base64.b64decode(text[:12], validate=True)
    except ValueError:
        return None
    (length,) = struct.unpack_from("<H", head, 5)
    return None if length > MAX_PAYLOAD else (7 + length + 4 + 2) // 3 * 4


def guess_seq(text):
    """The frame number a corrupt frame probably had (its first bytes)."""
    try:
        raw = base64.b64decode(text[:8] + "=" * (-len(text[:8]) % 4))
        return struct.unpack_from("<I", raw, 0)[0]
    except (ValueError, struct.error):
        return None


def frame_texts(line):
    """The base64 text after each "NBD:" in a line.

    ':' is not a base64 character, so a prefix inside a line (a lost
    newline joined two frames) always starts a new frame; the text of a
    frame ends at the first character that is not base64 or at the next
    prefix.
    """
    for part in line.split(PREFIX)[1:]:
        yield B64_RUN.match(part).group(0)


class Capture:
    """Frames gathered from one or more captures of the same recording."""

    def __init__(self):
        self.frames = {}        # seq -> (type, payload)
        self.corrupt = []       # (source, line number, reason, probable seq)
        self.conflicts = []
        self.programs = {}      # name -> (runtime base of link address 0, span, file CRC-32)
        self.bad_programs = []  # (source, line number, reason): NBP: lines not trusted

    def add_program(self, line, source, lineno):
        """An NBP: line, taken only with its CRC; a damaged or conflicting one is listed."""
        m = PROGRAM_RE.search(line)
        if not m:
            self.bad_programs.append((source, lineno, "not a whole NBP: line with its CRC"))
            return
        if zlib.crc32(m.group(1).encode()) != int(m.group(6), 16):
            self.bad_programs.append((source, lineno, "CRC mismatch"))
            return
        entry = (int(m.group(3), 16), int(m.group(4), 16), int(m.group(5), 16))
        old = self.programs.get(m.group(2))
        if old is not None and old != entry:
            self.bad_programs.append((source, lineno, "program %s differs from an earlier "
                                      "capture: captures of different recordings?" % m.group(2)))
            return
        self.programs[m.group(2)] = entry

    def add_text(self, text, source):
        for lineno, line in enumerate(text.splitlines(), 1):
            if PROGRAM_PREFIX in line:
                self.add_program(line, source, lineno)
            if PREFIX in line:
                for b64 in frame_texts(line):
                    self.add_frame(b64, source, lineno)

    def add_frame(self, b64, source, lineno):
        r = parse_frame(b64)
        if isinstance(r, str):
            # Console text run on after a frame (lost newline): the frame's
            # own length field says where it ends, and its CRC confirms it.
            n = frame_chars(b64) if len(b64) >= 12 else None
            if n is not None and n < len(b64) and not isinstance(parse_frame(b64[:n]), str):
                r = parse_frame(b64[:n])
        if isinstance(r, str):
            self.corrupt.append((source, lineno, r, guess_seq(b64)))
            return
        seq, ftype, payload = r
        old = self.frames.get(seq)
        if old is not None and old != (ftype, payload):
            self.conflicts.append((source, lineno, seq))
            return
        self.frames[seq] = (ftype, payload)

