"""test_pprof.py - tools/nbprof-decode --pprof, read back by a decoder written here.

The file must be gzip, and its content a profile.proto message (field
numbers from github.com/google/pprof proto/profile.proto) whose samples are
the recording's: in order, each with its LP label, its weight in its own
event's column, 1 in "samples", and its stack named as the decoder's own
outputs name it (callers at their call site, return address - 1).
"""

import gzip
import os
import subprocess

from conftest import BUILD

from nbproflib.frames import Capture
from nbproflib.recording import Recording
from nbproflib.symbols import Symbols, frame_symbol

ELF = os.path.join(BUILD, "nbprof.so")


# --- a minimal protobuf reader --------------------------------------------------------

def varint(b, p):
    n = shift = 0
    while True:
        c = b[p]
        p += 1
        n |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return n, p


def fields(b):
    """[(field number, int or bytes)] of one message."""
    out, p = [], 0
    while p < len(b):
        key, p = varint(b, p)
        num, wire = key >> 3, key & 7
        if wire == 0:
            v, p = varint(b, p)
        elif wire == 2:
            n, p = varint(b, p)
            v, p = b[p:p + n], p + n
        else:
            raise AssertionError("wire type %d not written by the encoder" % wire)
        out.append((num, v))
    assert p == len(b)
    return out


def packed(v):
    if isinstance(v, int):
        return [v]
    out, p = [], 0
    while p < len(v):
        n, p = varint(v, p)
        out.append(n)
    return out


def read_profile(blob):
    top = fields(gzip.decompress(blob))
    strings = [v.decode() for n, v in top if n == 6]
    assert strings[0] == ""
    types = []
    for n, v in top:
        if n == 1:
            f = dict(fields(v))
            types.append((strings[f[1]], strings[f[2]]))
    funcs = {}
    for n, v in top:
        if n == 5:
            f = dict(fields(v))
            funcs[f[1]] = strings[f[2]]
    locs = {}
    for n, v in top:
        if n == 4:
            f = fields(v)
            d = dict(f)
            (line,) = [dict(fields(x)) for k, x in f if k == 4]
            locs[d[1]] = (d.get(3, 0), funcs[line[1]])
    samples = []
    for n, v in top:
        if n == 2:
            f = fields(v)
            ids = [i for k, x in f if k == 1 for i in packed(x)]
            vals = [i for k, x in f if k == 2 for i in packed(x)]
            labels = {}
            for k, x in f:
                if k == 3:
                    d = dict(fields(x))
                    labels[strings[d[1]]] = d[3]
            samples.append(([locs[i] for i in ids], vals, labels))
    return types, samples



def test_pprof_holds_the_recordings_samples(dumpgen, decode, tmp_path):
    nm = subprocess.run(["nm", "-n", ELF], stdout=subprocess.PIPE, check=True,
                        universal_newlines=True).stdout if os.path.exists(ELF) else dumpgen("nm")
    (tmp_path / "syms.nm").write_text(nm)
    cap = dumpgen("-n", 300, "--nm", str(tmp_path / "syms.nm"), "dump")
    (tmp_path / "cap.log").write_text(cap)
    decode("cap.log", "--nm", "syms.nm", "--pprof", "prof.pb.gz", "-q")
    blob = (tmp_path / "prof.pb.gz").read_bytes()
    assert blob[:2] == b"\x1f\x8b"                              # gzip
    types, samples = read_profile(blob)

    c = Capture()
    c.add_text(cap, "cap.log")
    rec = Recording(c)
    syms = Symbols(nm, rec.header["image_base"])
    events = rec.header["events"]
    assert types == [("samples", "count")] + [(name, "events") for name, _ in events]
    assert len(samples) == len(rec.samples) == 300
    for (frames, vals, labels), s in zip(samples, rec.samples):
        assert labels["lp"] == s["lp"] and labels["cpl"] == s["cpl"]
        want = [1] + [0] * len(events)
        want[1 + s["event"]] = s.get("weight") or events[s["event"]][1]
        assert vals == want
        addrs = [s["ip"]] + [a - 1 for a in s["chain"]]
        assert [a for a, _ in frames] == addrs
        names = [frame_symbol(syms, a, i > 0)[0] or "[nbprof]"
                 for i, a in enumerate([s["ip"]] + s["chain"])]
        assert [n for _, n in frames] == names


def test_bad_pprof_name_is_refused(dumpgen, decode, tmp_path):
    (tmp_path / "cap.log").write_text(dumpgen("-n", 5, "dump"))
    p = decode("cap.log", "--pprof", "-", ok=(2,))
    assert "--pprof needs a file name" in p.stderr
