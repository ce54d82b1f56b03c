"""test_decode_trust.py - tools/nbprof-decode on damaged and hostile dumps.

Each test here is a way the decoder once lost data or trusted a dump it
could not prove whole: frame numbers and counts that made it allocate
lists of their size, a missing or retyped trailer accepted with exit 0,
two frames on one line both dropped, and Hyper-Threading recordings
whose folded stacks kept one event only. Frames are re-encoded with a
correct CRC where the damage must get past the per-frame check.
"""

import base64
import resource
import struct
import subprocess
import zlib

import pytest

from conftest import DECODE
from test_decode import noisy, read_csv_samples, truth, write

N = 400


def unframe(line):
    """(seq, type, payload) of one "NBD:" line."""
    raw = base64.b64decode(line[4:])
    seq, ftype, length = struct.unpack_from("<IBH", raw)
    return seq, ftype, raw[7:7 + length]


def frame(seq, ftype, payload):
    """An "NBD:" line with a correct CRC, as prof/dump.c seals it."""
    head = struct.pack("<IBH", seq, ftype, len(payload)) + payload
    return "NBD:" + base64.b64encode(head + struct.pack("<I", zlib.crc32(head))).decode()


def limited(mb):
    def set_limit():
        resource.setrlimit(resource.RLIMIT_AS, (mb << 20, mb << 20))
    return set_limit


def run_bounded(tmp_path, *args):
    """The decoder under a 400 MB address-space limit and a 20 s timeout."""
    return subprocess.run(["/usr/bin/python3", DECODE] + [str(a) for a in args],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          cwd=str(tmp_path), preexec_fn=limited(400), timeout=20)


@pytest.fixture
def nm(dumpgen, tmp_path):
    return write(tmp_path, "syms.nm", dumpgen("nm"))


# --- 1. sizes bounded by what the header and the data can hold -----------------

def test_huge_frame_number_alone_allocates_nothing(tmp_path):
    seq, ftype, payload = unframe("NBD://///1MBAACENYUn")     # CRC-valid, frame 2^32 - 1
    assert (seq, ftype) == (0xFFFFFFFF, ord("S"))
    cap = write(tmp_path, "cap.log", "NBD://///1MBAACENYUn\n")
    p = run_bounded(tmp_path, cap)
    assert "Traceback" not in p.stderr and "MemoryError" not in p.stderr, p.stderr
    assert p.returncode == 2
    assert "no dump header" in p.stderr


def test_stray_huge_frame_number_in_a_good_dump(dumpgen, tmp_path, nm):
    lines = dumpgen("-n", N, "dump").splitlines()
    stray = frame(0xFFFFFFF0, ord("S"), b"\x00")
    cap = write(tmp_path, "cap.log", "\n".join(lines + [stray]) + "\n")
    p = run_bounded(tmp_path, cap, "--nm", nm, "-q")
    assert "Traceback" not in p.stderr, p.stderr
    assert p.returncode == 1
    assert "beyond the announced %d" % len(lines) in p.stderr


@pytest.mark.parametrize("frames", [0xFFFFFFFF, 0x7FFFFFFF, 3])
def test_header_frame_count_checked_against_samples(dumpgen, tmp_path, nm, frames):
    lines = dumpgen("-n", N, "dump").splitlines()
    seq, ftype, payload = unframe(lines[0])
    payload = payload[:11] + struct.pack("<I", frames) + payload[15:]
    lines[0] = frame(seq, ftype, payload)
    cap = write(tmp_path, "cap.log", "\n".join(lines) + "\n")
    p = run_bounded(tmp_path, cap, "--nm", nm, "--csv", "out.csv", "-q")
    assert "Traceback" not in p.stderr and "MemoryError" not in p.stderr, p.stderr
    assert p.returncode == 2, p.stderr
    assert "bad dump header" in p.stderr and "%d frames" % frames in p.stderr
    assert not (tmp_path / "out.csv").exists()


def test_header_length_beyond_the_format_limit(dumpgen, tmp_path, nm):
    lines = dumpgen("-n", 50, "dump").splitlines()
    seq, ftype, payload = unframe(lines[0])
    lines[0] = frame(seq, ftype, payload[:7] + struct.pack("<I", 0xFFFFFFF0) + payload[11:])
    p = run_bounded(tmp_path, write(tmp_path, "cap.log", "\n".join(lines)), "--nm", nm)
    assert "Traceback" not in p.stderr, p.stderr
    assert p.returncode == 2 and "bad dump header" in p.stderr


# --- 2. no trailer, no exit 0 --------------------------------------------------

def retype_last(lines, ftype, payload=None):
    seq, _, old = unframe(lines[-1])
    return lines[:-1] + [frame(seq, ftype, old if payload is None else payload)]


def shorten_header(lines):
    """The header announces one frame less, and the trailer line is gone."""
    seq, ftype, payload = unframe(lines[0])
    (total,) = struct.unpack_from("<I", payload, 11)
    payload = payload[:11] + struct.pack("<I", total - 1) + payload[15:]
    return [frame(seq, ftype, payload)] + lines[1:-1]


def damaged_trailers(lines):
    s_payload = unframe(lines[-2])[2]
    return {
        "header type": retype_last(lines, ord("H")),
        "samples type": retype_last(lines, ord("S"), s_payload),
        "header shortened": shorten_header(lines),
    }


@pytest.mark.parametrize("kind", ["header type", "samples type", "header shortened"])
def test_missing_trailer_is_an_error(dumpgen, decode, tmp_path, nm, kind):
    lines = dumpgen("-n", N, "dump").splitlines()
    assert unframe(lines[-1])[1] == ord("T") and unframe(lines[-2])[1] == ord("S")
    cap = write(tmp_path, "cap.log", noisy(damaged_trailers(lines)[kind]))
    p = decode(cap, "--nm", nm, "--csv", "out.csv", "--folded", "out.folded", ok=(1,))
    assert "trailer" in p.stderr
    if kind == "header shortened":
        assert "dump --from" in p.stderr
    else:
        assert "dump --from %d" % (len(lines) - 1) in p.stderr
    assert "--partial" in p.stderr
    assert not (tmp_path / "out.csv").exists() and not (tmp_path / "out.folded").exists()


def test_partial_decodes_and_says_so(dumpgen, decode, tmp_path, nm):
    lines = dumpgen("-n", N, "dump").splitlines()
    cap = write(tmp_path, "cap.log", noisy(lines[:-1]))
    p = decode(cap, "--nm", nm, "--csv", "out.csv", "--partial", ok=(1,))
    assert "partial" in p.stderr.lower()
    got = read_csv_samples(str(tmp_path / "out.csv"))
    assert got == truth(dumpgen, "-n", N)       # all samples arrived, only the trailer did not
    p = decode(cap, "--nm", nm, "--csv", "out2.csv", ok=(1,))
    assert not (tmp_path / "out2.csv").exists()
    assert "dump --from %d" % (len(lines) - 1) in p.stderr


def test_whole_dump_still_exits_zero(dumpgen, decode, tmp_path, nm):
    lines = dumpgen("-n", N, "dump").splitlines()
    p = decode(write(tmp_path, "cap.log", noisy(lines)), "--nm", nm, "-q")
    assert p.stderr == ""


def test_trailer_sample_count_disagreeing_with_header(dumpgen, decode, tmp_path, nm):
    lines = dumpgen("-n", N, "dump").splitlines()
    seq, ftype, payload = unframe(lines[-1])
    payload = payload[:4] + struct.pack("<Q", N + 1) + payload[12:]
    cap = write(tmp_path, "cap.log", "\n".join(lines[:-1] + [frame(seq, ftype, payload)]))
    p = decode(cap, "--nm", nm, "-q", ok=(1,))
    assert "trailer says %d samples" % (N + 1) in p.stderr


def test_resent_frame_supersedes_a_corrupt_copy(dumpgen, decode, tmp_path, nm):
    lines = dumpgen("-n", N, "dump").splitlines()
    k = len(lines) // 2
    bad = list(lines)
    bad[k] = bad[k][:20] + ("A" if bad[k][20] != "A" else "B") + bad[k][21:]
    first = write(tmp_path, "first.log", noisy(bad))
    again = write(tmp_path, "again.log", dumpgen("-n", N, "--from", k, "dump"))
    p = decode(first, again, "--nm", nm, "--csv", "out.csv", "-q")
    assert "CRC mismatch" in p.stderr               # still reported, but the dump is whole
    assert read_csv_samples(str(tmp_path / "out.csv")) == truth(dumpgen, "-n", N)


# --- 3. frames joined on one line ------------------------------------------------

def test_joined_frames_both_decode(dumpgen, decode, tmp_path, nm):
    lines = dumpgen("-n", N, "dump").splitlines()
    # a frame without "=" padding runs straight into the next one's prefix
    k = next(i for i in range(2, len(lines) - 2) if not lines[i].endswith("="))
    joined = lines[:k] + [lines[k] + lines[k + 1]] + lines[k + 2:]
    cap = write(tmp_path, "cap.log", noisy(joined))
    decode(cap, "--nm", nm, "--csv", "out.csv", "-q")
    assert read_csv_samples(str(tmp_path / "out.csv")) == truth(dumpgen, "-n", N)


def test_joined_line_loses_only_the_damaged_frame(dumpgen, decode, tmp_path, nm):
    lines = dumpgen("-n", N, "dump").splitlines()
    k = 5
    cut = lines[k][:len(lines[k]) // 2]                 # frame k lost its end and the newline
    joined = lines[:k] + ["prompt> " + cut + lines[k + 1] + "nbprof"] + lines[k + 2:]
    cap = write(tmp_path, "cap.log", noisy(joined))
    p = decode(cap, "--nm", nm, "-q", ok=(1,))
    assert "missing frames: %d;" % k in p.stderr


# --- 4. Hyper-Threading: several LPs and events in folded stacks -------------------

def folded(path):
    out = {}
    for line in open(path).read().splitlines():
        k, _, v = line.rpartition(" ")
        out[k] = int(v)
    return out


def test_pair_recording_folds_every_sample(dumpgen, decode, tmp_path, nm):
    cap = write(tmp_path, "cap.log", dumpgen("-n", N, "--pair", "dump"))
    samples = truth(dumpgen, "-n", N, "--pair")
    assert {(s["lp"], s["event"]) for s in samples} == {(0, 0), (1, 1)}
    p = decode(cap, "--nm", nm, "--folded", "out.folded", "--weight", "samples", "-q")
    got = folded(str(tmp_path / "out.folded"))
    assert sum(got.values()) == len(samples)
    for lp, ev in ((0, "instr_retired.t0"), (1, "instr_retired.t1")):
        root = "[LP%d %s]" % (lp, ev)
        mine = [s for s in samples if s["lp"] == lp]
        assert sum(v for k, v in got.items() if k.startswith(root + ";")) == len(mine)
        assert root in p.stderr
    # the frames below the root are each sample's own stack
    assert sum(v * k.count(";") for k, v in got.items()) == \
        sum(2 + len(s["chain"]) for s in samples)


def test_pair_recording_split_per_lp_and_event(dumpgen, decode, tmp_path, nm):
    cap = write(tmp_path, "cap.log", dumpgen("-n", N, "--pair", "dump"))
    samples = truth(dumpgen, "-n", N, "--pair")
    p = decode(cap, "--nm", nm, "--folded", "out.folded", "--flamegraph", "fg.svg", "--split",
               "-q")
    for lp in (0, 1):
        f = tmp_path / ("out.lp%d.instr_retired_t%d.folded" % (lp, lp))
        assert f.name in p.stderr
        got = folded(str(f))
        # each sample weighs the events it stands for: period 29 plus the PMI's skid
        assert sum(got.values()) == sum(s["weight"] for s in samples if s["lp"] == lp)
        assert all(k.startswith("calls;") for k in got)
        assert (tmp_path / ("fg.lp%d.instr_retired_t%d.svg" % (lp, lp))).exists()
    assert not (tmp_path / "out.folded").exists()


def test_event_choice_says_what_it_leaves_out(dumpgen, decode, tmp_path, nm):
    cap = write(tmp_path, "cap.log", dumpgen("-n", N, "dump"))
    samples = truth(dumpgen, "-n", N)
    p = decode(cap, "--nm", nm, "--folded", "out.folded", "--event", "clockticks",
               "--weight", "samples", "-q")
    other = sum(1 for s in samples if s["event"] != 1)
    assert "%d samples of other events left out" % other in p.stderr
    got = folded(str(tmp_path / "out.folded"))
    assert sum(got.values()) == len(samples) - other


# --- names from the dump reach CSV and the terminal ---------------------------------

def test_control_characters_in_names_are_escaped(dumpgen, decode, tmp_path, nm):
    """Found by tools/dev/fuzz-decode (seed 11, case 1920): a CRC-valid header whose
    event name held a carriage return split CSV rows (csv quotes only "\\n")
    and could send escape sequences to the terminal."""
    lines = dumpgen("-n", 60, "dump").splitlines()
    seq, ftype, payload = unframe(lines[0])
    assert b"clockticks" in payload and b"calls" in payload
    payload = payload.replace(b"clockticks", b"clock\rt\x1bks").replace(b"calls", b"c\x1b[2J")
    lines[0] = frame(seq, ftype, payload)
    cap = write(tmp_path, "cap.log", "\n".join(lines))
    p = decode(cap, "--nm", nm, "--csv", "out.csv", "--script", "out.perf")
    assert "\x1b" not in p.stderr and "\r" not in p.stderr
    assert "clock\\x0dt\\x1bks" in p.stderr and "c\\x1b[2J" in p.stderr
    got = read_csv_samples(str(tmp_path / "out.csv"))
    assert got == truth(dumpgen, "-n", 60)
    assert "\x1b" not in (tmp_path / "out.perf").read_text()


def test_trailer_store_counts_must_add_up(dumpgen, decode, tmp_path, nm):
    lines = dumpgen("-n", N, "dump").splitlines()
    seq, ftype, payload = unframe(lines[-1])
    assert payload[16] == 2                             # two stores, LP0 first
    (held,) = struct.unpack_from("<Q", payload, 18)
    payload = payload[:18] + struct.pack("<Q", held + 5) + payload[26:]
    cap = write(tmp_path, "cap.log", "\n".join(lines[:-1] + [frame(seq, ftype, payload)]))
    p = decode(cap, "--nm", nm, "--csv", "out.csv", ok=(1,))
    assert "trailer's stores hold %d samples, it says %d" % (N + 5, N) in p.stderr
    assert not (tmp_path / "out.csv").exists()
