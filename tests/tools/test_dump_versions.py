"""test_dump_versions.py - the decoder reads the old dump format as well as the new.

The kernel writes dump version 5 (prof/dump.h: a chain table in 'C' frames,
compact records, the kernel's build id at the end of the header). Version
4 is the same without the build id; a capture made by an older kernel
still holds version 3: the same header without the flags byte, no 'C' frames and the older records
(u8 LP, event, CPL | nchain << 2, then zigzag varints of TSC, IP, the raw
RFLAGS, RSP, the weight and each return address). The same recording is
written here in version 3 by an encoder of this file, from dumpgen's own
ground truth, and both captures must decode to the same samples.
"""

import base64
import struct
import zlib

from test_decode import read_csv_samples, truth, write

N = 300


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def zig(a, b):
    d = (a - b) & 0xFFFFFFFFFFFFFFFF
    return ((d << 1) ^ (0xFFFFFFFFFFFFFFFF if d >> 63 else 0)) & 0xFFFFFFFFFFFFFFFF


def frame_line(seq, ftype, payload):
    raw = struct.pack("<IBH", seq, ftype, len(payload)) + payload
    raw += struct.pack("<I", zlib.crc32(raw))
    return "NBD:" + base64.b64encode(raw).decode()


def frames_of(text):
    out = {}
    for line in text.splitlines():
        if line.startswith("NBD:"):
            raw = base64.b64decode(line[4:])
            seq, ftype, n = struct.unpack_from("<IBH", raw)
            out[seq] = (ftype, raw[7:7 + n])
    return [out[k] for k in sorted(out)]


def v3_record(s, prev):
    rec = bytes([s["lp"], s["event"], s["cpl"] | len(s["chain"]) << 2])
    rec += varint(zig(s["tsc"], prev["tsc"])) + varint(zig(s["ip"], prev["ip"]))
    rec += varint(s["rflags"]) + varint(zig(s["rsp"], prev["rsp"])) + varint(s["weight"])
    last = s["ip"]
    for a in s["chain"]:
        rec += varint(zig(a, last))
        last = a
    return rec


def as_version3(v5_text, samples):
    """The recording of a version-5 capture (without a build id) as a version-3 capture."""
    frames = frames_of(v5_text)
    header = b"".join(p for t, p in frames if t == ord("H"))
    trailer = b"".join(p for t, p in frames if t == ord("T"))
    assert header[6] == 5 and header[-1] == 0 and header[-2] & 1   # chain references, no id
    header = bytearray(header[:-2])                  # no flags byte, no build id
    header[6] = 3
    payloads, cur, prev, first = [], b"", None, 0
    for i, s in enumerate(samples):
        if prev is None:
            cur, first, prev = varint(i), i, {"tsc": 0, "ip": 0, "rsp": 0}
        rec = v3_record(s, prev)
        if len(cur) + len(rec) > 240 and i > first:
            payloads.append(cur)
            cur, first, prev = varint(i), i, {"tsc": 0, "ip": 0, "rsp": 0}
            rec = v3_record(s, prev)
        cur += rec
        prev = s
    payloads.append(cur)
    hframes = [bytes(header[k:k + 240]) for k in range(0, len(header), 240)]
    total = len(hframes) + len(payloads) + (len(trailer) + 239) // 240
    struct.pack_into("<II", header, 7, len(header), total)
    hframes = [bytes(header[k:k + 240]) for k in range(0, len(header), 240)]
    crc = 0
    for p in payloads:
        crc = zlib.crc32(p, crc)
    trailer = struct.pack("<I", total) + trailer[4:12] + struct.pack("<I", crc) + trailer[16:]
    lines, seq = [], 0
    for ftype, parts in ((ord("H"), hframes), (ord("S"), payloads),
                         (ord("T"), [trailer[k:k + 240] for k in range(0, len(trailer), 240)])):
        for p in parts:
            lines.append(frame_line(seq, ftype, p))
            seq += 1
    return "\n".join(lines) + "\n"


def as_version4(v5_text):
    """A version-5 capture without a build id as the version-4 capture it was."""
    frames = frames_of(v5_text)
    header = bytearray(b"".join(p for t, p in frames if t == ord("H")))
    assert header[6] == 5 and header[-1] == 0
    header = header[:-1]                             # no build id
    header[6] = 4
    struct.pack_into("<I", header, 7, len(header))
    hframes = [bytes(header[k:k + 240]) for k in range(0, len(header), 240)]
    rest = [(t, p) for t, p in frames if t != ord("H")]
    assert len(hframes) == len(frames) - len(rest)   # the frame numbers stay
    lines = [frame_line(i, t, p) for i, (t, p) in enumerate([(ord("H"), h) for h in hframes] + rest)]
    return "\n".join(lines) + "\n"


def test_versions_3_4_and_5_decode_to_the_same_samples(dumpgen, decode, tmp_path):
    nm = write(tmp_path, "syms.nm", dumpgen("nm"))
    want = truth(dumpgen, "-n", N)
    v5 = dumpgen("-n", N, "dump")
    assert "NBD:" in v5 and any(t == ord("C") for t, _ in frames_of(v5))
    write(tmp_path, "v5.log", v5)
    write(tmp_path, "v4.log", as_version4(v5))
    write(tmp_path, "v3.log", as_version3(v5, want))
    for v in (5, 4, 3):
        decode("v%d.log" % v, "--nm", nm, "--csv", "v%d.csv" % v, "-q")
        assert read_csv_samples(str(tmp_path / ("v%d.csv" % v))) == want, v
    # the compact encoding is the smaller one even on dumpgen's random stacks (make
    # bench measures it on real recordings)
    assert len(v5) < len((tmp_path / "v3.log").read_text())
