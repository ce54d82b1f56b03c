"""test_decode.py - tools/nbprof-decode against the kernel's own encoder.

Ground truth is what dumpgen stored (its `samples` listing); the decoder
must reproduce it exactly from the `dump` lines, even with other console
output around them. The perf-script checks use a parser written here from
the format stackcollapse-perf.pl documents and applies (header
"comm pid[/tid] ... time: [period] event:", frame lines
"ADDR SYMBOL[+0xOFF] (DSO)", a blank line ending each stack, only the first
event type folded, each stack weighted by its period).
"""

import base64
import os
import re
import socket
import struct
import subprocess
import threading
import tty
import xml.etree.ElementTree as ET
import zlib

import pytest

from conftest import BUILD

N = 400


def truth(dumpgen, *args):
    """Samples as dumpgen stored them: list of dicts."""
    out = []
    for line in dumpgen(*args, "samples").splitlines():
        v = [int(x, 16) for x in line.split()]
        out.append({"lp": v[0], "event": v[1], "cpl": v[2], "tsc": v[3], "ip": v[4],
                    "rflags": v[5], "rsp": v[6], "weight": v[7], "chain": v[8:]})
    return out


def noisy(lines):
    """Console text around the frames, as a terminal log would hold it."""
    text = ["\x1b[2J\x1b[HBdsDxe: loading Boot0001", "nbprof: ready", "nbprof> dump"]
    text += [l + "\r" for l in lines]
    text += ["dump: %d frames" % len(lines), "nbprof> "]
    return "\r\n".join(text) + "\r\n"


def frame_seq(line):
    raw = base64.b64decode(line[4:])
    return struct.unpack_from("<IB", raw)


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def read_csv_samples(path):
    import csv
    rows = list(csv.DictReader(open(path)))
    return [{"lp": int(r["lp"]), "event": int(r["event"]), "cpl": int(r["cpl"]),
             "tsc": int(r["tsc"]), "ip": int(r["ip"], 16), "rflags": int(r["rflags"], 16),
             "rsp": int(r["rsp"], 16), "weight": int(r["weight"]),
             "chain": [int(a, 16) for a in r["chain"].split()]}
            for r in rows]


@pytest.fixture
def nm(dumpgen, tmp_path):
    return write(tmp_path, "syms.nm", dumpgen("nm"))


def test_round_trip_is_bit_exact(dumpgen, decode, tmp_path, nm):
    lines = dumpgen("-n", N, "dump").splitlines()
    cap = write(tmp_path, "cap.log", noisy(lines))
    p = decode(cap, "--nm", nm, "--csv", "out.csv")
    assert "samples: %d of %d" % (N, N) in p.stderr
    assert read_csv_samples(str(tmp_path / "out.csv")) == truth(dumpgen, "-n", N)


def test_script_equals_kernel_script_command(dumpgen, decode, tmp_path, nm):
    cap = write(tmp_path, "cap.log", dumpgen("-n", N, "dump"))
    decode(cap, "--nm", nm, "--script", "out.perf", "-q")
    assert (tmp_path / "out.perf").read_text() == dumpgen("-n", N, "script")


def test_pair_samples_carry_each_lps_workload(dumpgen, decode, tmp_path, nm):
    # --pair A -- B: LP0's samples are A's (calls), LP1's are B's (loop)
    cap = write(tmp_path, "cap.log", dumpgen("-n", N, "--pair-comm", "dump"))
    decode(cap, "--nm", nm, "--script", "out.perf", "--folded", "out.folded", "-q")
    text = (tmp_path / "out.perf").read_text()
    assert text == dumpgen("-n", N, "--pair-comm", "script")
    heads = [l for l in text.splitlines() if l and not l.startswith("\t")]
    assert heads and all(l.startswith("calls 0/0 ") or l.startswith("loop 0/1 ") for l in heads)
    assert {l.split()[0] for l in heads} == {"calls", "loop"}
    folded = (tmp_path / "out.folded").read_text().splitlines()
    # under each LP's root frame ("[LP1 clockticks]"), that LP's workload
    assert folded and all(re.match(r"\[LP0 [^]]*\];calls;|\[LP1 [^]]*\];loop;", l)
                          for l in folded), folded


HEAD_RE = re.compile(r"^(\S.+?)\s+(\d+)/*(\d+)*\s+")
EVENT_RE = re.compile(r":\s*(\d+)*\s+(\S+):\s*$")
TIME_RE = re.compile(r"\s+(\d+\.\d+):\s+")
FRAME_RE = re.compile(r"^\s*(\w+)\s*(.+) \((\S*)\)")


def collapse(text):
    """Folded stacks of perf-script text by stackcollapse-perf.pl's rules."""
    folded, stack, pname, period, want_event = {}, [], None, 1, None
    for line in text.split("\n"):
        if line.startswith("#"):
            continue
        if line == "":
            if pname is not None and stack:
                key = ";".join([pname] + stack)
                folded[key] = folded.get(key, 0) + period
            stack, pname = [], None
            continue
        m = HEAD_RE.match(line)
        if m:
            assert TIME_RE.search(line), line       # speedscope needs the time
            e = EVENT_RE.search(line)
            assert e, line
            if want_event is None:
                want_event = e.group(2)
            if e.group(2) != want_event:
                continue
            pname, period = m.group(1).replace(" ", "_"), int(e.group(1) or 0) or 1
            continue
        m = FRAME_RE.match(line)
        assert m, "unrecognised line %r" % line
        if pname is None:
            continue
        func = re.sub(r"\+0x[\da-f]+$", "", m.group(2))
        if func == "[unknown]":
            func = "[%s]" % m.group(3)
        stack.insert(0, func)
    return folded


def test_script_folds_by_stackcollapse_rules(dumpgen, decode, tmp_path, nm):
    script = dumpgen("-n", N, "script")
    folded = collapse(script)
    samples = truth(dumpgen, "-n", N)
    first = samples[0]["event"]
    period = {0: 10007, 1: 100003}[first]               # dumpgen's events
    picked = [s for s in samples if s["event"] == first]
    # each sample weighs the events it stands for (its period plus the PMI's skid)
    assert all(period <= s["weight"] <= period + 2 for s in picked)
    assert sum(folded.values()) == sum(s["weight"] for s in picked) > len(picked) * period
    assert 0 < len(folded) <= len(picked)
    # The decoder's folding of that event is the same once the root frame
    # that names each sample's LP and event ("[LP1 instr_retired:nbogus]") is
    # taken off: stackcollapse-perf.pl merges the LPs.
    cap = write(tmp_path, "cap.log", dumpgen("-n", N, "dump"))
    ev = ["instr_retired:nbogus", "clockticks"][first]
    p = decode(cap, "--nm", nm, "--folded", "out.folded", "--event", ev, "-q")
    assert "[LP0 %s]" % ev in p.stderr and "[LP1 %s]" % ev in p.stderr
    got = {}
    for line in (tmp_path / "out.folded").read_text().splitlines():
        k, _, v = line.rpartition(" ")
        root, _, k = k.partition(";")
        assert root in ("[LP0 %s]" % ev, "[LP1 %s]" % ev)
        got[k] = got.get(k, 0) + int(v)
    assert got == folded


def test_corrupt_frame_is_reported_with_resume_command(dumpgen, decode, tmp_path, nm):
    lines = dumpgen("-n", N, "dump").splitlines()
    k = len(lines) // 2
    assert frame_seq(lines[k]) == (k, ord("S"))
    bad = list(lines)
    pos = len(bad[k]) // 2
    bad[k] = bad[k][:pos] + ("A" if bad[k][pos] != "A" else "B") + bad[k][pos + 1:]
    cap = write(tmp_path, "cap.log", noisy(bad))
    p = decode(cap, "--nm", nm, "--csv", "out.csv", ok=(1,))
    assert "corrupt frame (probably frame %d): CRC mismatch" % k in p.stderr
    assert "missing frames: %d; send them again with: dump --from %d" % (k, k) in p.stderr
    assert not (tmp_path / "out.csv").exists()          # not whole: nothing written
    p = decode(cap, "--nm", nm, "--csv", "out.csv", "--partial", ok=(1,))
    assert "PARTIAL" in p.stderr
    # Every other frame still decodes: only frame k's samples are gone.
    got = read_csv_samples(str(tmp_path / "out.csv"))
    want = truth(dumpgen, "-n", N)
    assert 0 < len(want) - len(got) < 40
    assert all(s in want for s in got)


def test_missing_frames_are_listed(dumpgen, decode, tmp_path, nm):
    lines = dumpgen("-n", N, "dump").splitlines()
    cut = [l for i, l in enumerate(lines) if i not in (3, 4, 9)]
    cap = write(tmp_path, "cap.log", "\n".join(cut))
    p = decode(cap, "--nm", nm, ok=(1,))
    assert "missing frames: 3-4, 9; send them again with: dump --from 3" in p.stderr


def test_truncated_transfer_merges_with_resumed_capture(dumpgen, decode, tmp_path, nm):
    lines = dumpgen("-n", N, "dump").splitlines()
    k = len(lines) - 5
    first = write(tmp_path, "first.log", noisy(lines[:k]))
    p = decode(first, "--nm", nm, ok=(1,))
    assert "dump --from %d" % k in p.stderr
    again = dumpgen("-n", N, "--from", k, "dump").splitlines()
    assert frame_seq(again[0])[1] == ord("H") and frame_seq(again[-1])[0] == len(lines) - 1
    second = write(tmp_path, "second.log", noisy(again))
    decode(first, second, "--nm", nm, "--csv", "out.csv")
    assert read_csv_samples(str(tmp_path / "out.csv")) == truth(dumpgen, "-n", N)


def test_captures_of_different_recordings_conflict(dumpgen, decode, tmp_path, nm):
    a = write(tmp_path, "a.log", dumpgen("-n", N, "dump"))
    b = write(tmp_path, "b.log", dumpgen("-n", N, "-s", 7, "dump"))
    p = decode(a, b, "--nm", nm, ok=(1,))
    assert "captures of different recordings" in p.stderr


def test_flamegraph_is_well_formed_svg(dumpgen, decode, tmp_path, nm):
    cap = write(tmp_path, "cap.log", dumpgen("-n", N, "dump"))
    decode(cap, "--nm", nm, "--flamegraph", "fg.svg", "--title", "a <b> & c", "-q")
    root = ET.parse(str(tmp_path / "fg.svg")).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    assert root.tag == ns + "svg"
    titles = [t.text for t in root.iter(ns + "title")]
    assert any(t.startswith("all (") for t in titles)
    for name in ("main_loop", "work_a", "work_b", "helper"):
        assert any(t.startswith(name + " (") for t in titles), name
    assert any(t.text == "a <b> & c" for t in root.iter(ns + "text"))
    rects = list(root.iter(ns + "rect"))[1:]            # after the background
    widths = [float(r.get("width")) for r in rects]
    assert len(widths) > 10 and max(widths) <= float(root.get("width"))
    assert rects[0].get("fill") and all(w > 0 for w in widths)


def test_symbol_table_mismatch_is_reported(dumpgen, decode, tmp_path, nm):
    cap = write(tmp_path, "cap.log", dumpgen("-n", 50, "dump"))
    p = decode(cap, "--nm", nm, "-q")
    assert "warning" not in p.stderr
    other = write(tmp_path, "other.nm", open(nm).read().replace("work_b", "work_c"))
    p = decode(cap, "--nm", other, "-q", ok=(2,))       # refused, not a warning
    assert "is not the recording kernel's" in p.stderr
    assert not list(tmp_path.glob("*.csv"))


def test_bad_input_gives_one_clear_error(decode, tmp_path):
    empty = write(tmp_path, "empty.log", "nbprof> help\nno frames here\n")
    p = decode(empty, ok=(2,))
    assert "nothing to decode" in p.stderr
    p = decode(ok=(2,))
    assert "usage" in p.stderr
    p = decode(str(tmp_path / "absent.log"), ok=(2,))
    assert "absent.log" in p.stderr


def test_socket_capture_sends_dump_and_saves(dumpgen, decode, tmp_path, nm):
    lines = dumpgen("-n", 60, "dump").splitlines()
    path = str(tmp_path / "console.sock")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(1)
    got = []

    def machine():
        conn, _ = srv.accept()
        buf = b""
        while not buf.endswith(b"\r"):
            buf += conn.recv(100)
        got.append(buf)
        conn.sendall(noisy(lines).encode())
        conn.recv(10)           # the decoder hangs up when it has the last frame
        conn.close()

    t = threading.Thread(target=machine)
    t.start()
    try:
        decode("--socket", path, "--command", "dump", "--save", "cap.log", "--nm", nm,
               "--csv", "out.csv", "--idle", "5", "-q")
    finally:
        t.join(10)
        srv.close()
    assert got == [b"dump\r"]
    assert read_csv_samples(str(tmp_path / "out.csv")) == truth(dumpgen, "-n", 60)
    assert lines[-1] in (tmp_path / "cap.log").read_text()


def test_serial_capture_sends_dump_and_saves(dumpgen, decode, tmp_path, nm):
    """--serial on a pseudo-terminal (pyserial, as on a USB serial adapter): the same
    capture as over the socket, at the baud rate given."""
    pytest.importorskip("serial")
    lines = dumpgen("-n", 60, "dump").splitlines()
    master, slave = os.openpty()
    tty.setraw(slave)
    got = []

    def machine():
        buf = b""
        while not buf.endswith(b"\r"):
            buf += os.read(master, 100)
        got.append(buf)
        os.write(master, noisy(lines).replace("\n", "\r\n").encode())

    t = threading.Thread(target=machine)
    t.start()
    try:
        decode("--serial", os.ttyname(slave), "--baud", "57600", "--save", "cap.log",
               "--nm", nm, "--csv", "out.csv", "--idle", "5", "-q")
    finally:
        t.join(10)
        os.close(master)
        os.close(slave)
    assert got == [b"dump\r"]
    assert read_csv_samples(str(tmp_path / "out.csv")) == truth(dumpgen, "-n", 60)
    assert lines[-1] in (tmp_path / "cap.log").read_text()


ELF = os.path.join(BUILD, "nbprof.so")


@pytest.mark.skipif(not os.path.exists(ELF), reason="no kernel ELF built")
def test_annotate_joins_samples_with_objdump(dumpgen, decode, tmp_path):
    real_nm = write(tmp_path, "real.nm", subprocess.run(
        ["nm", "-n", ELF], stdout=subprocess.PIPE, check=True, universal_newlines=True).stdout)
    cap = write(tmp_path, "cap.log", dumpgen("-n", 200, "--nm", real_nm, "dump"))
    p = decode(cap, "--elf", ELF, "--annotate", "ann.txt", "--script", "out.perf")
    assert "warning" not in p.stderr       # dump_symtab_crc == the host's checksum
    text = (tmp_path / "ann.txt").read_text()
    base = 0x3e4ec000                       # dumpgen's image base
    per_addr = {}
    for s in truth(dumpgen, "-n", 200, "--nm", real_nm):
        per_addr[s["ip"] - base] = per_addr.get(s["ip"] - base, 0) + 1
    hits = 0
    for line in text.splitlines():
        m = re.match(r"^\s*(\d+)\s+[\d.]+% \|\s*([0-9a-f]+):\t", line)
        if m:
            addr, n = int(m.group(2), 16), int(m.group(1))
            assert per_addr.get(addr) == n, line
            hits += n
    assert hits > 0
    # Samples land on instruction starts only by chance here (dumpgen picks
    # any byte), so count only those that objdump shows as an instruction.
    assert hits <= 200


@pytest.mark.parametrize("bits", [32, 64])
def test_header_says_the_ip_width(dumpgen, decode, tmp_path, nm, bits):
    """Dump format 2 carries the IP width (32 from the ia32 kernel); samples decode the same."""
    lines = dumpgen("-n", 50, "--ip-bits", bits, "dump").splitlines()
    cap = write(tmp_path, "cap.log", noisy(lines))
    p = decode(cap, "--nm", nm, "--csv", "out.csv")
    assert "%d-bit IPs" % bits in p.stderr
    assert read_csv_samples(str(tmp_path / "out.csv")) == truth(dumpgen, "-n", 50)


def test_header_with_a_bad_ip_width_is_refused(dumpgen, decode, tmp_path, nm):
    lines = dumpgen("-n", 10, "--ip-bits", 48, "dump").splitlines()
    p = decode(write(tmp_path, "cap.log", noisy(lines)), "--nm", nm, ok=(1, 2))
    assert "48-bit IPs" in p.stderr
