"""test_perfdata.py - tools/nbprof-decode --perf-data read back by Linux perf.

A recording made by dumpgen over the real kernel ELF's symbols (so perf has
an ELF to name them from) is written as perf.data; Debian's `perf script`
must list the same samples (time, LP, event, period, every frame's address
and symbol) as the decoder's own --script text, and `perf report` must put
the function with the most samples first. The file's structure is checked
without perf too. perf refuses to read a file owned by another non-root user
unless given -f (--force); perf_argv() adds it then, and a test checks both
sides when run as root.
"""

import collections
import os
import re
import shutil
import struct
import subprocess
import tempfile

import pytest

from conftest import BUILD

from nbproflib import perfdata as pd
from nbproflib.flamegraph import flamegraph_svg
from nbproflib.outputs import folded_stacks, script_text
from nbproflib.symbols import Symbols

ELF = os.path.join(BUILD, "nbprof.so")
PERF = shutil.which("perf")
BASE = 0x3e4ec000                       # dumpgen's image base
N = 300

need_elf = pytest.mark.skipif(not os.path.exists(ELF),
                              reason="no kernel ELF built (make): perf needs it for symbols")
need_perf = pytest.mark.skipif(PERF is None, reason="perf not installed (Debian linux-perf)")


@pytest.fixture
def recording(dumpgen, decode, tmp_path):
    """(capture path, perf.data path, decoder's script text) of one dumpgen recording."""
    nm = subprocess.run(["nm", "-n", ELF], stdout=subprocess.PIPE, check=True,
                        universal_newlines=True).stdout
    (tmp_path / "real.nm").write_text(nm)
    cap = tmp_path / "cap.log"
    cap.write_text(dumpgen("-n", N, "--nm", str(tmp_path / "real.nm"), "dump"))
    p = decode(str(cap), "--elf", ELF, "--perf-data", "perf.data", "--script", "out.perf", "-q")
    assert "warning" not in p.stderr
    return str(cap), str(tmp_path / "perf.data"), (tmp_path / "out.perf").read_text()


def perf_argv(sub, path, *args):
    """perf SUB -i PATH ..., with -f when perf would refuse the file's owner."""
    st = os.stat(path)
    force = ["-f"] if st.st_uid not in (0, os.geteuid()) else []
    return [PERF, sub] + force + ["-i", path] + list(args)


def perf(sub, path, *args, user=None):
    argv = perf_argv(sub, path, *args)
    if user is not None:
        argv = ["setpriv", "--reuid=%d" % user, "--regid=%d" % user, "--clear-groups"] + argv
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, env=dict(os.environ, PAGER="cat"))
    return p


HEAD_RE = re.compile(r"^(\S+)\s+(\d+)(?:/(\d+))?\s+\[(\d+)\]\s+(\d+\.\d+):\s+(\d+)\s+(\S+):\s*$")
FRAME_RE = re.compile(r"^\s+([0-9a-f]+) (\S+?)(?:\+0x([0-9a-f]+))? \((.*)\)$")


def parse_script(text, elf_dso):
    """[(lp, time, period, event, ((runtime addr, symbol, offset), ...))].

    elf_dso: the DSO name that marks an ELF-relative address (perf prints a
    mapped address relative to its DSO, the decoder the runtime address).
    """
    out, cur = [], None
    for line in text.splitlines():
        if not line.strip():
            if cur:
                out.append((cur[0], cur[1], cur[2], cur[3], tuple(cur[4])))
            cur = None
            continue
        m = HEAD_RE.match(line)
        if m:
            cur = (int(m.group(4)), m.group(5), int(m.group(6)), m.group(7), [])
            continue
        m = FRAME_RE.match(line)
        assert m and cur, "unexpected line %r" % line
        addr = int(m.group(1), 16)
        if elf_dso and m.group(4) == elf_dso:
            addr += BASE
        sym = None if m.group(2) == "[unknown]" else m.group(2)
        cur[4].append((addr, sym, int(m.group(3) or "0", 16)))
    if cur:
        out.append((cur[0], cur[1], cur[2], cur[3], tuple(cur[4])))
    return out


def records(blob):
    """[(type, misc, body)] of the data section of a perf.data file."""
    assert blob[:8] == b"PERFILE2"
    data_off, data_size = struct.unpack_from("<QQ", blob, 40)
    out, p = [], data_off
    while p < data_off + data_size:
        rtype, misc, size = struct.unpack_from("<IHH", blob, p)
        assert size >= 8
        out.append((rtype, misc, blob[p + 8:p + size]))
        p += size
    assert p == data_off + data_size
    return out


@need_elf
def test_file_structure(recording):
    _, path, _ = recording
    blob = open(path, "rb").read()
    size, attr_size = struct.unpack_from("<QQ", blob, 8)
    attrs_off, attrs_len = struct.unpack_from("<QQ", blob, 24)
    assert (size, attr_size) == (104, 144) and attrs_len == 2 * 144    # two events
    periods = [struct.unpack_from("<Q", blob, attrs_off + i * 144 + 16)[0] for i in range(2)]
    assert periods == [10007, 100003]
    recs = records(blob)
    kinds = collections.Counter(r[0] for r in recs)
    assert kinds[pd.PERF_RECORD_SAMPLE] == N
    assert kinds[pd.PERF_RECORD_COMM] == 2                 # one thread per LP
    mmaps = [r for r in recs if r[0] == pd.PERF_RECORD_MMAP2]
    assert len(mmaps) == 1
    pid, tid, addr, length, pgoff, _, _, _, _, prot, flags = struct.unpack_from(
        "<IIQQQIIQQII", mmaps[0][2])
    assert (prot, flags) == (5, 2)          # PROT_READ | PROT_EXEC, MAP_PRIVATE: r-xp
    # the executable segment holds the ELF's headers and .text (at link 1000H)
    assert addr == BASE and pgoff == 0 and length > 0x1000
    assert mmaps[0][2][64:].split(b"\0")[0].decode() == os.path.abspath(ELF)


class ElfSyms:
    """Sizes and addresses of the kernel ELF's symbols (`nm -S`)."""

    def __init__(self):
        out = subprocess.run(["nm", "-S", ELF], stdout=subprocess.PIPE, check=True,
                             universal_newlines=True).stdout
        self.size, self.addr, self.dup = {}, {}, set()
        for line in out.splitlines():
            f = line.split()
            if len(f) in (3, 4):
                if self.addr.get(f[-1], int(f[0], 16)) != int(f[0], 16):
                    self.dup.add(f[-1])     # e.g. a static inline emitted in two objects
                self.addr[f[-1]] = int(f[0], 16)
                self.size[f[-1]] = int(f[1], 16) if len(f) == 4 else 0

        # a symbol inside a sized one - a label with a .size inside its
        # function, or one without (step.c's step_tf_resume inside
        # step_tf_set): perf names the outer one
        sized = sorted((a, self.size[n], n) for n, a in self.addr.items() if self.size.get(n))
        self.outer = {}
        for n, a in self.addr.items():
            sz = self.size.get(n, 0)
            for b, bsz, m in sized:
                if b < a and a + sz <= b + bsz and a < b + bsz:
                    self.outer[n] = m
                    break

    def get(self, name, default):
        return self.size.get(name, default)

    def key(self, name):
        """Aliases (symbols at one address) are one function: perf shows one of them.

        A name that two functions share (local symbols of two objects) is a
        tuple key: perf lists the two on rows of their own with one name, so
        the per-function comparisons leave it out.
        """
        if name in self.dup:
            return ("shared name", name)
        return self.addr.get(name, name)


def perf_view(frame, sizes):
    """A decoder frame as perf names it: perf knows each function's ELF size, so
    an address in the alignment padding after a function is [unknown] there
    (the decoder, like the kernel, names it by the preceding symbol)."""
    addr, sym, off = frame
    if sym and 0 < sizes.get(sym, 0) <= off:
        return (addr, None, 0)
    if sym in sizes.outer:
        outer = sizes.outer[sym]
        return (addr, outer, addr - BASE - sizes.addr[outer])
    return frame


def call_site(frame):
    """A caller frame as perf.data holds it: the return address - 1 (the call)."""
    addr, sym, off = frame
    return (addr - 1, sym, off - 1 if sym else 0)


def same_frame(p, d, first, sizes):
    d = perf_view(d if first else call_site(d), sizes)
    return p == d or (p[0], p[2]) == (d[0], d[2]) and p[1] and d[1] and \
        sizes.key(p[1]) == sizes.key(d[1])


@need_elf
@need_perf
def test_perf_script_lists_the_decoders_samples(recording):
    _, path, script = recording
    p = perf("script", path, "-F", "comm,tid,cpu,time,period,event,ip,sym,symoff,dso")
    assert p.returncode == 0, p.stderr
    got = sorted(parse_script(p.stdout, os.path.abspath(ELF)))
    want = sorted(parse_script(script, None))
    assert len(got) == len(want) == N
    # perf orders samples by time across LPs, the decoder by LP store: compare sorted.
    sizes = ElfSyms()
    exact = frames = 0
    for g, w in zip(got, want):
        assert g[:4] == w[:4]                                   # LP, time, period, event
        # every frame's address: the sampled IP, then each caller's call site
        assert [f[0] for f in g[4]] == [w[4][0][0]] + [f[0] - 1 for f in w[4][1:]]
        for i, (pf, df) in enumerate(zip(g[4], w[4])):
            assert same_frame(pf, df, i == 0, sizes), (g, w)
            d = perf_view(df if i == 0 else call_site(df), sizes)
            exact += pf[1] is not None and (pf == d or sizes.key(pf[1]) == sizes.key(d[1]))
            frames += 1
    # every frame agrees (above); most are named alike (a function or an
    # alias at its address), the rest are addresses in the padding after a
    # function, whose share depends on the kernel's layout
    assert exact > 0.5 * frames, (exact, frames)
    assert sum(1 for s in got for f in s[4] if f[1]) > N        # symbols were resolved


def self_weights(script, event, sizes):
    """{symbol: summed period} of the sampled IPs (perf report's self overhead)."""
    w = collections.Counter()
    for lp, t, period, ev, frames in parse_script(script, None):
        if ev == event:
            addr, name, _ = perf_view(frames[0], sizes)
            # perf report lists each unnamed address on its own row.
            w[sizes.key(name) if name else ("[unknown]", addr)] += period
    return w


@need_elf
@need_perf
def test_perf_report_lists_the_hottest_function_first(recording):
    _, path, script = recording
    p = perf("report", path, "--stdio", "--no-children", "--sort", "sym", "-g", "none")
    assert p.returncode == 0, p.stderr
    assert "Kernel address maps" not in p.stdout + p.stderr
    sections = re.split(r"^# Samples: ", p.stdout, flags=re.M)[1:]
    assert len(sections) == 2
    sizes = ElfSyms()
    for sec in sections:
        event = re.match(r"\d+\s+of event '([^']+)'", sec).group(1)
        rows = re.findall(r"^\s+([\d.]+)%\s+\[\.\]\s+(\S+)", sec, flags=re.M)
        w = self_weights(script, event, sizes)
        total = sum(w.values())
        top = max(w.values())
        assert not rows[0][1].startswith("0x")
        assert w[sizes.key(rows[0][1])] == top          # the hottest (or one tied with it)
        assert abs(float(rows[0][0]) - 100.0 * top / total) < 0.01
        named = {sizes.key(name): float(pct) for pct, name in rows if not name.startswith("0x")}
        assert len(named) > 10
        for key, n in w.items():
            if not isinstance(key, tuple):
                assert abs(named[key] - 100.0 * n / total) < 0.01, key


@need_elf
@need_perf
@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="needs root to change a file's owner and to run perf as another user")
def test_perf_as_root_and_as_another_user(recording, tmp_path):
    _, path, _ = recording
    nobody = 65534
    shared = tempfile.mkdtemp(prefix="nbprof-perf-")
    try:
        os.chmod(shared, 0o755)
        mine = os.path.join(shared, "perf.data")
        shutil.copy(path, mine)
        # A root-owned file: another user's perf reads it without -f.
        p = perf("script", mine, user=nobody)
    finally:
        shutil.rmtree(shared)
    assert p.returncode == 0 and p.stdout.count("instr_retired") > 0, p.stderr
    # A file owned by someone else: root's perf refuses it unless forced.
    other = str(tmp_path / "theirs.data")
    shutil.copy(path, other)
    os.chown(other, nobody, nobody)
    p = subprocess.run([PERF, "script", "-i", other], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    assert p.returncode != 0 and "not owned by current user or root" in p.stderr
    p = perf("script", other)
    assert p.returncode == 0 and p.stdout.count("instr_retired") > 0, p.stderr


def test_perf_data_needs_an_elf_and_a_file(dumpgen, decode, tmp_path):
    (tmp_path / "cap.log").write_text(dumpgen("-n", 20, "dump"))
    (tmp_path / "syms.nm").write_text(dumpgen("nm"))
    p = decode("cap.log", "--nm", "syms.nm", "--perf-data", "x.data", ok=(2,))
    assert "--perf-data needs the ELF" in p.stderr
    p = decode("cap.log", "--elf", "syms.nm", "--perf-data", "x.data", ok=(2,))
    assert "syms.nm" in p.stderr
    assert not (tmp_path / "x.data").exists()
    p = decode("cap.log", "--perf-data", "-", ok=(2,))
    assert "needs a file name" in p.stderr


def test_writer_refuses_unknown_event(tmp_path):
    bad = tmp_path / "bad.elf"
    bad.write_bytes(b"MZ" + bytes(100))
    with pytest.raises(pd.PerfDataError, match="bad.elf: not an ELF file"):
        pd.elf_dso(str(bad), 0)
    s = {"lp": 0, "event": 2, "tsc": 10, "ip": 0x1000, "chain": [], "index": 7}
    with pytest.raises(pd.PerfDataError, match="sample 7 names event 2"):
        pd.perf_data_bytes([s], [("a", 1), ("b", 2)], "w", [], 1000, 0)
    with pytest.raises(pd.PerfDataError, match="names no event"):
        pd.perf_data_bytes([], [], "w", [], 1000, 0)


def test_several_dsos_are_mapped(tmp_path):
    """A user's program beside the kernel: one MMAP per executable segment of each."""
    exe = str(tmp_path / "prog")
    src = tmp_path / "prog.c"
    src.write_text("void _start(void) { for (;;) ; }\n")
    subprocess.run(["gcc", "-static", "-nostdlib", "-Wl,--build-id", "-o", exe, str(src)],
                   check=True)
    d = pd.elf_dso(exe, 0)
    assert d.build_id and len(d.build_id) == 20
    blob = pd.perf_data_bytes([{"lp": 1, "event": 0, "tsc": 2000, "ip": d.segments[0][0],
                                "chain": []}], [("ev", 5)], "prog",
                              [pd.elf_dso(exe, 0), pd.elf_dso(exe, 0x400000)], 1000, 1000)
    recs = records(blob)
    mm = [struct.unpack_from("<IIQQQ", r[2]) for r in recs if r[0] == pd.PERF_RECORD_MMAP2]
    assert len(mm) == 2 * len(d.segments)
    assert {m[2] for m in mm} == {d.segments[0][0], d.segments[0][0] + 0x400000}
    (sample,) = [r[2] for r in recs if r[0] == pd.PERF_RECORD_SAMPLE]
    ident, ip, pid, tid, time, cpu = struct.unpack_from("<QQIIQI", sample)
    assert (ident, ip, tid - pid, time, cpu) == (1, d.segments[0][0], 1, 1000000000, 1)


def test_sample_period_is_its_weight_and_each_lp_has_its_comm():
    """A sample's period field is the events it stands for (its weight; the
    event's period when it has none); with {lp: comm} each LP's thread is named."""
    ss = [{"lp": 0, "event": 0, "tsc": 10, "ip": 0x1000, "chain": [], "weight": 98},
          {"lp": 1, "event": 0, "tsc": 20, "ip": 0x1004, "chain": []}]
    blob = pd.perf_data_bytes(ss, [("ev", 97)], {0: "calls", 1: "loop"}, [], 1000, 0)
    recs = records(blob)
    samples = [r[2] for r in recs if r[0] == pd.PERF_RECORD_SAMPLE]
    # ident, ip, pid, tid, time, cpu, res, period
    assert [struct.unpack_from("<QQIIQIIQ", s)[7] for s in samples] == [98, 97]
    comms = [r[2] for r in recs if r[0] == pd.PERF_RECORD_COMM]
    names = {struct.unpack_from("<II", c)[1] - struct.unpack_from("<II", c)[0]:
             c[8:].split(b"\0")[0].decode() for c in comms}
    assert names == {0: "calls", 1: "loop"}



class OneSample:
    """A recording of one sample, as the decoder's outputs read it."""

    def __init__(self, ip, chain):
        self.header = {"tsc_hz": 1000000, "tsc_start": 0, "events": [("clockticks", 1000)],
                       "comm": "calls", "image_base": BASE}
        self.samples = [{"lp": 0, "event": 0, "tsc": 5, "ip": ip, "chain": chain}]

    def event(self, i):
        return self.header["events"][i]


@need_elf
@need_perf
def test_a_call_that_ends_its_function_is_named_at_the_call(tmp_path):
    """wl_call_ring0's `call *%rax` is its last instruction before the label
    wl_ring0_return, so the return address is that label's first byte: every
    output names the caller wl_call_ring0, at the call."""
    nm = subprocess.run(["nm", "-n", ELF], stdout=subprocess.PIPE, check=True,
                        universal_newlines=True).stdout
    addr = {f[2]: int(f[0], 16) for f in (l.split() for l in nm.splitlines()) if len(f) == 3}
    ret = addr["wl_ring0_return"]
    dis = subprocess.run(["objdump", "-d", "--start-address=%#x" % (ret - 2),
                          "--stop-address=%#x" % ret, ELF], stdout=subprocess.PIPE,
                         check=True, universal_newlines=True).stdout
    assert re.search(r"%x:\s+ff d0\s+call\s+\*%%rax" % (ret - 2), dis), dis
    off = ret - addr["wl_call_ring0"]
    leaf = BASE + addr["lapic_read"] + 2
    rec = OneSample(leaf, [BASE + ret])
    syms = Symbols(nm, BASE)
    script = script_text(rec, syms)
    assert "wl_call_ring0+0x%x (nbprof)" % off in script and "wl_ring0_return" not in script
    counts = folded_stacks(rec, syms, rec.samples)
    assert counts == {"calls;wl_call_ring0;lapic_read": 1000}
    svg = flamegraph_svg(counts, "t")
    assert "wl_call_ring0" in svg and "wl_ring0_return" not in svg
    path = str(tmp_path / "perf.data")
    pd.write_perf_data(path, rec.samples, rec.header["events"], "calls",
                       [pd.elf_dso(ELF, BASE)], 1000000, 0)
    p = perf("script", path, "-F", "ip,sym,symoff")
    assert p.returncode == 0, p.stderr
    frames = [l.split() for l in p.stdout.splitlines() if l.strip()]
    # perf prints an address in a mapped ELF relative to the ELF
    assert frames == [["%x" % (leaf - BASE), "lapic_read+0x2"],
                      ["%x" % (ret - 1), "wl_call_ring0+0x%x" % (off - 1)]], p.stdout
