"""test_frames.py - nbproflib/frames.py, the lines `dump` prints, unit by unit.

A frame is seq (u32), type (u8), payload length (u16), the payload and the
CRC-32 of everything before it, little-endian, in canonical base64 after
"NBD:" (prof/dump.h). The frames here are built by hand from that layout
with zlib's CRC-32 (the same polynomial and initial value as lib/crc32.c,
which the first test checks against the kernel's own encoder through
dumpgen); test_decode.py and test_decode_trust.py drive the whole decoder.
"""

import base64
import struct
import zlib

import pytest

from nbproflib import frames
from nbproflib.frames import Capture, frame_chars, frame_texts, guess_seq, parse_frame


def raw_frame(seq, ftype, payload, crc=None):
    body = struct.pack("<IBH", seq, ftype, len(payload)) + payload
    return body + struct.pack("<I", zlib.crc32(body) if crc is None else crc)


def frame(seq, ftype, payload, crc=None):
    return base64.b64encode(raw_frame(seq, ftype, payload, crc)).decode()


def test_every_frame_of_the_kernels_encoder_parses(dumpgen):
    """The kernel's CRC-32 and framing (prof/dump.c through dumpgen) are what parse_frame checks."""
    texts = [t for line in dumpgen("-n", 60, "dump").splitlines() for t in frame_texts(line)]
    assert len(texts) > 3
    got = [parse_frame(t) for t in texts]
    assert all(not isinstance(g, str) for g in got), [g for g in got if isinstance(g, str)]
    assert [g[0] for g in got] == list(range(len(texts)))
    assert got[0][1] == frames.HEADER and got[-1][1] == frames.TRAILER


def test_a_frame_round_trips():
    assert parse_frame(frame(7, frames.SAMPLES, b"\x01\x02\x03")) == (7, frames.SAMPLES,
                                                                      b"\x01\x02\x03")
    assert parse_frame(frame(0, frames.HEADER, b"")) == (0, frames.HEADER, b"")


@pytest.mark.parametrize("spoil, why", [
    (lambda r: r[:8] + bytes([r[8] ^ 1]) + r[9:], "CRC mismatch"),     # a payload bit
    (lambda r: r[:-1] + bytes([r[-1] ^ 0x80]), "CRC mismatch"),          # a CRC bit
    (lambda r: r[:-5] + r[-4:], "length mismatch"),                      # a payload byte lost
    (lambda r: r[:10], "too short"),
])
def test_damage_is_named(spoil, why):
    raw = raw_frame(3, frames.SAMPLES, b"abcdef")
    assert parse_frame(base64.b64encode(spoil(raw)).decode()) == why


def test_length_over_the_format_limit_is_refused_even_with_a_good_crc():
    big = b"x" * (frames.MAX_PAYLOAD + 1)
    assert parse_frame(frame(1, frames.SAMPLES, big)) == "length mismatch"
    assert not isinstance(parse_frame(frame(1, frames.SAMPLES, big[:-1])), str)


def test_unknown_type_is_refused_even_with_a_good_crc():
    assert parse_frame(frame(1, ord("Z"), b"ab")) == "unknown frame type"


def test_only_canonical_base64_is_taken():
    """Unused bits before '=' are outside the CRC: a frame that sets them is refused."""
    text = frame(2, frames.SAMPLES, b"abc")              # 14 bytes: one '=' of padding
    assert text.endswith("=") and not text.endswith("==")
    i = len(text) - 2                                   # the character holding 2 unused bits
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    odd = alphabet[alphabet.index(text[i]) | 1]
    assert odd != text[i]
    spoiled = text[:i] + odd + text[i + 1:]
    assert base64.b64decode(spoiled) == base64.b64decode(text)     # same bytes, other text
    assert parse_frame(spoiled) == "bad base64"
    assert parse_frame(text[:-1]) == "bad base64 length"
    assert parse_frame(text[:-4] + "!!!=") == "bad base64"


def test_frames_joined_on_one_line_are_each_found():
    a, b = frame(0, frames.HEADER, b"h"), frame(1, frames.SAMPLES, b"s")
    line = "nbprof> NBD:%sNBD:%s trailing text" % (a, b)
    assert list(frame_texts(line)) == [a, b]


def test_console_text_run_on_is_cut_at_the_frames_own_length():
    a = frame(4, frames.SAMPLES, b"payload!")
    assert frame_chars(a[:12]) == len(a)
    cap = Capture()
    cap.add_text("NBD:%sabcXYZ\n" % a, "log")                # a lost newline: base64-like text
    assert cap.frames == {4: (frames.SAMPLES, b"payload!")} and cap.corrupt == []


def test_a_corrupt_frame_is_listed_with_its_probable_number():
    raw = bytearray(raw_frame(9, frames.SAMPLES, b"abc"))
    raw[9] ^= 4
    text = base64.b64encode(bytes(raw)).decode()
    assert guess_seq(text) == 9
    cap = Capture()
    cap.add_text("junk\nNBD:%s\n" % text, "cap.log")
    assert cap.frames == {} and cap.corrupt == [("cap.log", 2, "CRC mismatch", 9)]


def test_a_second_copy_must_agree():
    cap = Capture()
    cap.add_text("NBD:%s\n" % frame(5, frames.SAMPLES, b"one"), "a.log")
    cap.add_text("NBD:%s\n" % frame(5, frames.SAMPLES, b"one"), "b.log")
    assert cap.conflicts == []
    cap.add_text("x\nNBD:%s\n" % frame(5, frames.SAMPLES, b"two"), "c.log")
    assert cap.conflicts == [("c.log", 2, 5)] and cap.frames[5] == (frames.SAMPLES, b"one")


def nbp(body, crc=None):
    return "NBP:%s|%08X" % (body, zlib.crc32(body.encode()) if crc is None else crc)


def test_program_lines_are_taken_only_with_their_crc():
    body = " hello base=10b000 span=4000 crc=1234abcd"
    cap = Capture()
    cap.add_text(nbp(body) + "\n", "d.log")
    assert cap.programs == {"hello": (0x10b000, 0x4000, 0x1234abcd)} and cap.bad_programs == []
    cap.add_text(nbp(body.replace("10b000", "10c000"), zlib.crc32(body.encode())) + "\n", "e.log")
    assert cap.bad_programs == [("e.log", 1, "CRC mismatch")]
    cap.add_text(nbp(body.replace("10b000", "10c000")) + "\n", "f.log")
    assert cap.bad_programs[-1][:2] == ("f.log", 1) and "differs" in cap.bad_programs[-1][2]
    assert cap.programs["hello"][0] == 0x10b000
    cap.add_text("NBP: hello base=10b000\n", "g.log")
    assert cap.bad_programs[-1] == ("g.log", 1, "not a whole NBP: line with its CRC")
