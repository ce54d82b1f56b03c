"""test_record.py - sampling on the model backend: record, report, annotate, script, dump.

Expected numbers come from the documents, not from running the code:
- workload/workload.h: a stepped `loop N` retires WL_LOOP_K * N + WL_LOOP_C
  instructions (read from the header), in the order of the listing in
  arch/x86/64/workloads.S (instruction offsets taken from `objdump -d` of the
  kernel ELF);
- pmu/model/p4_model.c (header, "Overflow, PMI, cascades"): a counter preset
  to -P overflows on the P-th event and the PMI comes on the next event
  count; the handler then reloads -P, so the event that raised the PMI is
  not counted again: one sample every P + 1 instructions, at retired
  instruction k(P + 1), and the interrupted RIP is the next instruction;
- prof/samples.h: a sample without call chain takes 40 bytes of store, and
  carries its weight: the events it stands for (P + 1 for a period-P sample);
- SDM 18.15.5.7 / PMU reference 2.3: 0F_02 parts raise no PMI from a cascaded
  counter; a cascaded counter counts from the event after its starter's
  N-th (model header), and the polled path keeps every period (record.c;
  the last ones through a poll at the workload's final step).
Runs that must give exact counts pass --throttle 100, which turns throttling
off (PMI time can never exceed all of the time).
- The kernel's own code in the counting window counts too, as on a Pentium 4
  (the model steps it, arch/x86/step.h), so `:k` samples land in the kernel.
  Exact sample positions are taken at ring 3 under `:u`, where the workload's
  instructions are followed by one more at CPL 3: the exit trampoline's
  `int 0x80` (EXIT).
"""

import csv
import io
import os
import re
import subprocess
import time

import pytest
import conftest
from nbproflib import qemu  # tools/, put on the path by conftest.py

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ELF = qemu.kernel_elf(os.environ.get("NBPROF_FIRMWARE", qemu.DEFAULT_FIRMWARE))
DECODE = os.path.join(REPO, "tools", "nbprof-decode")
WORK = os.path.join(qemu.BUILD, "qemu-test")

SAMPLES = re.compile(r"^samples: (\d+) stored, (\d+) held, (\d+) lost \((\d+) dropped: buffer full, "
                     r"(\d+) nested, (\d+) unattributed\), (\d+) overwritten$", re.M)
PMIS = re.compile(r"^PMIs: (\d+) \((\d+) taken in the step handler", re.M)
THROTTLED = re.compile(r"^throttled: (\d+)$", re.M)
HEADER = re.compile(r"^(\S.+?)\s+(\d+)/*(\d+)*\s+")      # stackcollapse-perf.pl's header match
FRAME = re.compile(r"^\s*(\w+)\s*(.+) \((\S*)\)")         # ... and its frame match


EXIT = 1                # wl_user_exit's int 0x80, at CPL 3
U3 = "--ring 3 -e instr_retired:u"
# A period for samplers that count CPL 0: above the overflow handler's own
# instructions after its reload, which count too (as on a Pentium 4), or the
# handler overflows the counter again and the storm guard stops the count.
HANDLER_PERIOD = 1999


def loop_instructions(n):
    text = open(os.path.join(REPO, "workload", "workload.h")).read()
    k = int(re.search(r"#define WL_LOOP_K\s+(\d+)", text).group(1))
    c = int(re.search(r"#define WL_LOOP_C\s+(\d+)", text).group(1))
    return k * n + c


def function_insns(name):
    """Offsets of the instructions of `name` in the kernel ELF, from objdump."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", ELF], check=True,
                         capture_output=True, text=True).stdout
    m = re.search(r"^([0-9a-f]+) <%s>:\n(.*?)\n\n" % re.escape(name), out, re.M | re.S)
    assert m, "no %s in objdump output" % name
    start = int(m.group(1), 16)
    return [int(line.split(":")[0], 16) - start for line in m.group(2).splitlines() if ":" in line]


def loop_trace(n):
    """Offsets of the instructions a stepped `loop N` retires, in order (workloads.S listing)."""
    ins = function_insns("wl_loop")
    assert len(ins) == 9, "wl_loop listing changed: %r" % ins
    return ins[:4] + ins[4:7] * n + ins[7:]


def expected_samples(events, period):
    return events // (period + 1)


def summary(out):
    m = SAMPLES.search(out)
    assert m, out
    keys = ("stored", "held", "lost", "dropped", "nested", "unattributed", "overwritten")
    return dict(zip(keys, map(int, m.groups())))


def parse_script(text):
    """Samples of perf-script text: [(header line, [(addr, symbol+off)])]."""
    samples, cur = [], None
    for line in text.split("\n"):
        if not line.strip():
            if cur is not None:
                samples.append(cur)
            cur = None
        elif cur is None:
            assert HEADER.match(line), "not a perf-script header: %r" % line
            cur = (line, [])
        else:
            m = FRAME.match(line)
            assert m, "not a perf-script frame: %r" % line
            cur[1].append((int(m.group(1), 16), m.group(2)))
    if cur is not None:
        samples.append(cur)
    return samples


def stackcollapse(text):
    """What stackcollapse-perf.pl makes of perf-script text: {"comm;outer;...;leaf": count}."""
    folded = {}
    for header, frames in parse_script(text):
        comm = HEADER.match(header).group(1)
        names = [re.sub(r"\+0x[0-9a-f]+$", "", sym) for _, sym in frames]
        key = ";".join([comm] + names[::-1])
        folded[key] = folded.get(key, 0) + 1
    return folded


def record(nb, args):
    out = nb.cmd("record " + args, timeout=120)
    assert "error" not in out, out
    return out


def test_exact_count_and_ips_nmi(nb):
    n, p = 1000, 99
    e = loop_instructions(n) + EXIT
    assert e % (p + 1) != 0        # no sample at the final ret (its next RIP is the runner)
    out = record(nb, "--throttle 100 %s -c %d loop %d" % (U3, p, n))
    s = summary(out)
    assert s["stored"] == expected_samples(e, p) and s["lost"] == 0
    pmis = PMIS.search(out)
    assert int(pmis.group(1)) == s["stored"]
    assert int(pmis.group(2)) == s["stored"]    # NMI: every one handed the workload's frame
    trace = loop_trace(n)
    want = [trace[k * (p + 1)] for k in range(1, s["stored"] + 1)]
    got = []
    for header, frames in parse_script(nb.cmd("script", timeout=60)):
        sym = frames[0][1]
        assert sym.startswith("wl_loop+0x"), sym
        got.append(int(sym.split("+0x")[1], 16))
    assert got == want


def test_exact_count_vector(nb):
    n, p = 700, 49
    e = loop_instructions(n) + EXIT
    assert e % (p + 1) != 0
    out = record(nb, "--vector --throttle 100 %s -c %d loop %d" % (U3, p, n))
    s = summary(out)
    assert s["stored"] == expected_samples(e, p)
    pmis = PMIS.search(out)
    assert int(pmis.group(1)) == s["stored"] and int(pmis.group(2)) == 0   # taken after IRETQ
    trace = loop_trace(n)
    want = [trace[k * (p + 1)] for k in range(1, s["stored"] + 1)]
    report = nb.cmd("report --sort ip")
    rows = re.findall(r"^\s+[\d.]+%\s+(\d+)\s+0x[0-9a-f]+\s+wl_loop\+0x([0-9a-f]+)$", report, re.M)
    assert sum(int(c) for c, _ in rows) == len(want)
    assert {int(o, 16): int(c) for c, o in rows} == {o: want.count(o) for o in set(want)}


WORKAROUNDS = re.compile(r"^workarounds fired: (\d+) unflagged overflow\(s\), (\d+) read-back "
                         r"mismatch\(es\)$", re.M)


@pytest.mark.parametrize("mode", ["--nmi", "--vector"])
def test_workarounds_fire_and_keep_samples_exact(nb, mode):
    """The handler's two workarounds (PMU reference 6: an overflow without CCCR.OVF is found
    by bit 39 of a counter preset negative; Intel 249199 N15: a reload that did not take
    is written again after the read-back) keep every sample where it belongs, and
    record's summary counts each one that fired. The model is told to hide OVF on 5
    overflows and to lose the double reload write 4 times (record --inject)."""
    n, p, unflagged, n15 = 1000, 99, 5, 4
    e = loop_instructions(n) + EXIT
    want_n = expected_samples(e, p)
    assert want_n > unflagged + n15
    out = record(nb, "%s --throttle 100 --inject unflagged=%d --inject n15=%d %s "
                 "-c %d loop %d" % (mode, unflagged, n15, U3, p, n))
    m = WORKAROUNDS.search(out)
    assert m and (int(m.group(1)), int(m.group(2))) == (unflagged, n15), out
    s = summary(out)
    assert s["stored"] == want_n and s["lost"] == 0, out
    trace = loop_trace(n)
    want = [trace[k * (p + 1)] for k in range(1, want_n + 1)]
    got = [int(frames[0][1].split("+0x")[1], 16)
           for _, frames in parse_script(nb.cmd("script", timeout=60))]
    assert got == want
    # without --inject nothing fires
    m = WORKAROUNDS.search(record(nb, "--throttle 100 %s -c %d loop 100" % (U3, p)))
    assert (int(m.group(1)), int(m.group(2))) == (0, 0)
    for line in ("record --inject bogus=1 loop 10", "record --inject n15=x loop 10",
                 "record --inject loop 10"):
        out = nb.cmd(line)
        assert out.count("\n") == 0 and out.startswith("error:"), (line, out)


def decode(nb, name, text, *args):
    cap = os.path.join(WORK, name)
    os.makedirs(WORK, exist_ok=True)
    with open(cap, "w") as f:
        f.write(text)
    return subprocess.run([DECODE, cap, "--elf", ELF] + list(args), capture_output=True, text=True)


@pytest.mark.parametrize("ring", [0, 3])
def test_cpl_follows_ring(nb, ring):
    # at :k the overflow handler's own instructions after its restart count too (its tail,
    # pmu/p4_alloc.h P4_PMI_TAIL_MAX at most): a period above that works
    n, p = (300, 29) if ring == 3 else (1000, 131)
    ev = "instr_retired:u" if ring == 3 else "instr_retired:k"
    out = record(nb, "--throttle 100 --ring %d -e %s -c %d loop %d" % (ring, ev, p, n))
    r = decode(nb, "cpl%d.log" % ring, nb.cmd("dump", timeout=60), "--csv", "-")
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert len(rows) == summary(out)["stored"]
    assert {row["cpl"] for row in rows} == {str(ring)}
    loop = [row for row in rows if row["symbol"] == "wl_loop"]
    if ring == 3:       # the workload alone (and its exit) under USR
        assert len(rows) == len(loop) == expected_samples(loop_instructions(n) + EXIT, p)
    else:               # OS: the workload and the kernel's window around it (the gate's
        # few instructions, docs/guide/counting.md: a sample there or none)
        assert len(rows) >= len(loop) >= expected_samples(loop_instructions(n), p) - 1


@pytest.mark.parametrize("mode,if_set", [("--nmi", 0), ("--vector", 1)])
def test_sample_fields(nb, mode, if_set):
    """TSC, LP, event index, RIP, CPL, RFLAGS and RSP of every sample (the dump, decoded).

    At ring 3 under :u, the workload's samples alone.
    RFLAGS (SDM Vol. 1 3.4.3): bit 1 always set; IF (bit 9) as the workload ran - the
    shell's IF = 0 in NMI mode, IF = 1 in vector mode (record.c); TF (bit 8) clear, the
    workload never sets it (the model's single-stepping is not the workload's). RSP:
    wl_loop's body (instructions 5-7 of its listing) touches no stack, so all its
    samples share one RSP. TSC grows from sample to sample."""
    n, p = 300, 49
    out = record(nb, "%s --throttle 100 %s -c %d loop %d" % (mode, U3, p, n))
    want_n = expected_samples(loop_instructions(n) + EXIT, p)
    assert summary(out)["stored"] == want_n, out
    r = decode(nb, "fields%s.log" % mode, nb.cmd("dump", timeout=60), "--csv", "-")
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert len(rows) == want_n
    body = set(function_insns("wl_loop")[4:7])
    tscs = [int(row["tsc"]) for row in rows]
    assert tscs == sorted(tscs) and len(set(tscs)) == len(tscs)
    rsps = set()
    for row in rows:
        assert (row["lp"], row["event"], row["event_name"], row["cpl"]) == \
            ("0", "0", "instr_retired", "3"), row
        fl = int(row["rflags"], 16)
        assert fl & 2 and not fl & (1 << 8) and (fl >> 9) & 1 == if_set, row
        if row["symbol"] == "wl_loop" and int(row["offset"], 16) in body:
            rsps.add(int(row["rsp"], 16))
    assert len(rsps) == 1, rsps


@pytest.mark.parametrize("p, n", [(1, 1000), (97, 63), (97, 1000)])
def test_sample_weights_add_up_to_the_count(nb, p, n):
    """Each sample stands for P + 1 events (the PMI comes on the event after the
    overflow); with loop N's 3N + 6 instructions and its exit (ring 3, :u) a
    multiple of P + 1 the weights in report, script and the decoded dump add up
    to all of them, else to all but the events after the last sample - unless
    those are P, the counter's last overflow, whose PMI was still owed when the
    counting gate shut: the stop finds it, a sample of P events."""
    e = loop_instructions(n) + EXIT
    k = expected_samples(e, p)
    rest = e - k * (p + 1)
    out = record(nb, "--throttle 100 %s -c %d loop %d" % (U3, p, n))
    assert summary(out)["stored"] == k + (rest == p)
    want = k * (p + 1) + (rest if rest == p else 0)
    assert want == e or e % (p + 1) != 0
    assert "\nevents: #0 %d counted, %d in its samples\n" % (e, want) in out, out
    rep = nb.cmd("report")
    assert re.search(r"^# event 0: instr_retired, period %d, %d events in its samples$" % (p, want),
                     rep, re.M), rep
    script = nb.cmd("script", timeout=60)
    periods = [int(re.search(r":\s+(\d+) instr_retired:$", h).group(1))
               for h, _ in parse_script(script)]
    assert periods == [p + 1] * k + ([rest] if rest == p else [])
    r = decode(nb, "weights-%d-%d.log" % (p, n), nb.cmd("dump", timeout=120), "--csv", "-")
    assert r.returncode == 0, r.stderr
    assert sum(int(row["weight"]) for row in csv.DictReader(io.StringIO(r.stdout))) == want


@pytest.mark.parametrize("p, n", [(97, 1000), (500, 3000)])
def test_sample_weights_with_a_late_pmi(nb, p, n):
    """The same at `pmu skid 64` (a PMI 64 events after the overflow, as a part may
    deliver it): the count stays exact, each sample now stands for the P + 1 + 64 events
    its counter counted before the handler reloaded it, the weights add up to all events
    but those after the last sample, and no sample is lost."""
    skid = 64
    e = loop_instructions(n) + EXIT
    assert "PMI skid: %d events" % skid in nb.cmd("pmu skid %d" % skid)
    try:
        out = record(nb, "--throttle 100 %s -c %d loop %d" % (U3, p, n))
    finally:
        nb.cmd("pmu skid 0")
    k = summary(out)["stored"]
    m = re.search(r"^events: #0 (\d+) counted, (\d+) in its samples$", out, re.M)
    assert m and int(m.group(1)) == e, out
    assert summary(out)["unattributed"] == 0, out
    weights = [int(re.search(r":\s+(\d+) instr_retired:$", h).group(1))
               for h, _ in parse_script(nb.cmd("script", timeout=60))]
    assert len(weights) == k and k >= e // (p + 1 + skid) - 1, out
    assert all(w == p + 1 + skid for w in weights[:-1]), weights
    assert sum(weights) == int(m.group(2)) and e - sum(weights) < p + 1 + skid, (weights, out)


def test_kernel_window_count_is_the_same_every_run(nb):
    """Sampling the kernel's own code (:k): the total is the same on every run and never
    2^32 off. The model's step handler takes the PMU lock nested after each stepped
    kernel instruction; when that freed the lock the stepped code had just taken, a PMI
    could reload the counter inside the stop, between its running and its stopped read,
    and the O9 settle (pmu/p4_apply.h) turned the reload into 2^32 more events.
    The periods are above the handler's own instructions (which count at :k); one of
    them must leave an overflow's PMI owed when the counting gate shuts - with a skid of
    64 events, which a stopped counter never counts - so that the stop finds it. Its
    sample is the stop's, not unattributed: a PMI that came late would have landed in
    the code that stopped the counter (perf_gate_shut). Those periods are recorded three
    more times."""
    assert "PMI skid: 64 events" in nb.cmd("pmu skid 64")

    def one(p):
        out = record(nb, "-e instr_retired:k -c %d calls 8 100" % p)
        m = re.search(r"^events: #0 (\d+) counted, (\d+) in its samples$", out, re.M)
        assert m, out
        counted, sampled = int(m.group(1)), int(m.group(2))
        assert sampled <= counted < 1 << 32, out
        assert summary(out)["unattributed"] == 0, out
        at_stop = re.search(r"^\s+[\d.]+%\s+(\d+)\s+perf_gate_shut$", nb.cmd("report"), re.M)
        return counted, int(at_stop.group(1)) if at_stop else 0
    try:
        first = {p: one(p) for p in range(997, 1197, 3)}
        in_stop = [p for p, (_, at_stop) in first.items() if at_stop]
        assert in_stop, first                   # the case the test is for did occur
        for p in in_stop[:3] + [min(first)]:
            for _ in range(3):
                assert one(p) == first[p], p
    finally:
        nb.cmd("pmu skid 0")


def script_ips(nb):
    """The sampled IPs, but the one a period ending on the exit trampoline's int 0x80
    leaves after it (wl_user_exit+0x2, the interrupted context at CPL 3)."""
    return [frames[0][1] for _, frames in parse_script(nb.cmd("script", timeout=60))
            if not frames[0][1].startswith("wl_user_exit")]


def test_jitter_spreads_samples_reproducibly(nb):
    """-c 10 on calls 8 aliases: a repetition is 8 * 8 + 2 = 66 instructions and
    a sample comes every 11, so only a few positions are ever sampled. With
    --jitter the periods vary (prof/jitter.h) and the samples spread; the same
    seed gives the same samples, another seed others."""
    base = "--throttle 100 %s -c 10 calls 8 100" % U3
    record(nb, base)
    fixed = script_ips(nb)
    out = record(nb, "--jitter 50 --seed 7 " + base)
    assert "period 10, jitter +-50% (seed 7)" in out, out
    a = script_ips(nb)
    record(nb, "--jitter 50 --seed 7 " + base)
    assert script_ips(nb) == a
    record(nb, "--jitter 50 --seed 8 " + base)
    assert script_ips(nb) != a
    assert len(set(fixed)) <= 6 and len(set(a)) >= 2 * len(set(fixed)), (set(fixed), set(a))
    # every instruction of wl_calls_level is sampled with jitter
    assert {"wl_calls_level+0x%x" % o for o in function_insns("wl_calls_level")} <= set(a), a
    # the weights still add up to the instructions sampled (mean period about 10 + 1)
    rep = nb.cmd("report")
    total = int(re.search(r"^# event 0: \S+, period 10, (\d+) events in its samples$", rep,
                          re.M).group(1))
    e = 6 + 100 * (8 * 8 + 2) + 4 + EXIT
    assert e - 16 <= total <= e, (total, e)


def test_tiny_buffer_stop_and_wrap(nb):
    n, p, buf = 1000, 9, 1024
    total = expected_samples(loop_instructions(n) + EXIT, p)
    fits = buf // 40
    s = summary(record(nb, "--throttle 100 --buffer %d %s -c %d loop %d" % (buf, U3, p, n)))
    assert (s["stored"], s["held"], s["dropped"], s["lost"]) == (fits, fits, total - fits, total - fits)
    s = summary(record(nb, "--wrap --throttle 100 --buffer %d %s -c %d loop %d"
                       % (buf, U3, p, n)))
    assert (s["stored"], s["held"], s["overwritten"], s["lost"]) == (total, fits, total - fits, 0)
    assert "# lost: %d dropped" % 0 in nb.cmd("report")


def test_throttle_tiny_period_finishes(nb):
    """Period 1 at :u (the handler runs at CPL 0 and adds nothing) at the default throttle
    (25 %): the handler takes most of the LP's time, as on a Pentium 4 - the model weighs
    it against the time of the instructions it stepped for the LP, as they would run
    unstepped (prof/backend.h clock), not against the stepped run's far longer time, where
    its share was about 1 % - so throttling raises the period and the run ends with fewer
    samples."""
    n = 1000
    out = record(nb, "%s -c 1 loop %d" % (U3, n))
    assert int(THROTTLED.search(out).group(1)) >= 1, out
    assert "raised by throttling" in out
    assert summary(out)["stored"] < expected_samples(loop_instructions(n) + EXIT, 1)


def test_throttle_spares_a_period_longer_than_the_handler(nb):
    """The same default share at a period far above the handler's length (hundreds of
    instructions per PMI, make bench, and on a Pentium 4 its RDMSRs and WRMSRs too, some
    thousands of cycles in all): 59 samples, more than the warm-up and two windows, and no
    throttle - the share is the handler's time against the workload's, not a stepping
    artefact either way."""
    n, p = 1000000, 50000
    out = record(nb, "%s -c %d loop %d" % (U3, p, n))
    assert int(THROTTLED.search(out).group(1)) == 0, out
    assert summary(out)["stored"] == expected_samples(loop_instructions(n) + EXIT, p), out


TAIL = int(re.search(r"#define P4_PMI_TAIL_MAX\s+(\d+)u",
                     open(os.path.join(REPO, "pmu", "p4_alloc.h")).read()).group(1))
REFUSED_TAIL = ("a period of at most %d counted at CPL 0 (:k) overflows again inside its own "
                "overflow handler" % TAIL)


def test_short_period_at_cpl0_is_refused_and_a_storm_ends_the_count(nb):
    """A sampler that counts CPL 0 runs its own overflow handler's instructions through its
    counter (as a Pentium 4 does): with a period of at most P4_PMI_TAIL_MAX the handler
    overflows it again before it returns and the PMIs never end, so record refuses it before
    anything runs, with the reason, and keeps the last recording. A longer period at :u:k
    either works or is stopped by the storm guard (16 PMIs that find the interrupted code
    unchanged) with 'interrupt storm', within seconds; the shell answers after either."""
    record(nb, "--throttle 100 %s -c 99 loop 100" % U3)
    before = nb.cmd("report")
    for line in ("record -e instr_retired -c 20 loop 100",          # :u:k, the default
                 "record --ring 3 -e instr_retired:k -c %d loop 100" % TAIL):
        out = nb.cmd(line, timeout=60)
        assert out.startswith("error: record: ") and REFUSED_TAIL in out, (line, out)
        assert len(out.splitlines()) == 1 and "samples:" not in out, (line, out)
    assert nb.cmd("report") == before
    # one more than the bound is not refused
    assert REFUSED_TAIL not in nb.cmd("record --throttle 100 -e instr_retired -c %d loop 100"
                                      % (TAIL + 1), timeout=60)
    t = time.monotonic()
    out = nb.cmd("record -e instr_retired -c 200 --throttle 100 loop 1000", timeout=60)
    took = time.monotonic() - t
    if "interrupt storm" in out:
        assert re.search(r"^error: .*interrupt storm: \d+ overflow interrupts in a row", out,
                         re.M), out
    else:
        assert "error" not in out and summary(out)["stored"] > 0, out
    assert took < 30, took
    assert re.search(r"^vendor +GenuineIntel$", nb.cmd("cpu"), re.M)


def test_script_folds_like_stackcollapse(nb):
    depth, reps = 3, 50
    out = record(nb, "-g --throttle 100 %s -c 97 calls %d %d" % (U3, depth, reps))
    stored = summary(out)["stored"]
    script = nb.cmd("script", timeout=60)
    folded = stackcollapse(script)
    assert sum(folded.values()) == stored > 0
    assert all(s.startswith("calls;") for s in folded)
    assert any(s.endswith(";wl_calls;wl_calls_level;wl_calls_level") for s in folded)
    # wl_calls_level is only ever called by wl_calls or itself (arch/x86/64/workloads.S)
    assert not any(";wl_call_ring0;wl_calls_level" in s for s in folded), folded
    in_prologue = 0
    for header, frames in parse_script(script):
        names = [re.sub(r"\+0x[0-9a-f]+$", "", sym) for _, sym in frames]
        leaf, off = frames[0][1].split("+0x")
        assert leaf in ("wl_calls", "wl_calls_level"), frames
        in_prologue += leaf == "wl_calls_level" and int(off, 16) < 4   # push %rbp; mov %rsp,%rbp
        if leaf == "wl_calls_level":
            # a complete chain at every offset, the prologue and the ret included
            # (samples.h, sample_prologue_ret): the levels, then wl_calls
            k = names.index("wl_calls")
            assert set(names[:k]) == {"wl_calls_level"} and k <= depth + 1, names
    assert in_prologue > 0      # the case the rule is for did occur


def test_dump_round_trip_and_corruption(nb, firmware):
    out = record(nb, "-g --throttle 100 -e instr_retired -c %d calls 2 400" % HANDLER_PERIOD)
    stored = summary(out)["stored"]
    script = nb.cmd("script", timeout=60)
    dump = nb.cmd("dump", timeout=120)
    lines = [l for l in dump.split("\n") if l.startswith("NBD:")]
    assert re.search(r"# dump: done, %d frames" % len(lines), dump)
    r = decode(nb, "dump.log", dump, "--script", "-")
    assert r.returncode == 0, r.stderr
    assert "not the recording kernel" not in r.stderr, "%s does not match the booted image" % ELF
    # The header says how wide the kernel's IPs are (dump format 2).
    assert "%d-bit IPs" % conftest.kernel_bits(firmware) in r.stderr, r.stderr
    assert r.stdout.rstrip("\n") == script.rstrip("\n")
    assert len(parse_script(r.stdout)) == stored
    bad = lines[len(lines) // 2]
    i = len("NBD:") + 10
    bad2 = bad[:i] + ("A" if bad[i] != "A" else "B") + bad[i + 1:]
    r = decode(nb, "dump-bad.log", dump.replace(bad, bad2), "--script", "-")
    assert r.returncode == 1
    assert "corrupt frame" in r.stderr and "dump --from" in r.stderr


def test_annotate_and_report(nb):
    n, p = 1000, 99
    total = expected_samples(loop_instructions(n) + EXIT, p)
    record(nb, "--throttle 100 %s -c %d loop %d" % (U3, p, n))
    rep = nb.cmd("report --limit 1")
    assert re.search(r"^\s+100\.00%%\s+%d\s+wl_loop$" % total, rep, re.M), rep
    # a misspelled symbol is not "no samples"; a real one without samples is
    assert nb.cmd("annotate wl_lop").startswith("error: annotate: unknown symbol 'wl_lop'")
    assert nb.cmd("annotate wl_calls").startswith("# no samples in wl_calls")
    ann = nb.cmd("annotate wl_loop")
    rows = re.findall(r"^\s+\+0x([0-9a-f]+)\s+0x[0-9a-f]+\s+(\d+)\s+[\d.]+%\s+([0-9a-f ]*)$", ann, re.M)
    ins = function_insns("wl_loop")
    assert rows and sum(int(c) for _, c, _ in rows) == total
    for off, _, hexbytes in rows:
        o = int(off, 16)
        nxt = ins[ins.index(o) + 1] if ins.index(o) + 1 < len(ins) else None
        assert nxt is None or len(hexbytes.split()) == nxt - o, (off, hexbytes)


def test_bad_input_one_line(nb):
    for line in ("record -c 0 loop 10", "record --bogus loop 10", "record -c 5 -F 10 loop 10",
                 "record -e instr_retired -F 100 loop 10", "record --buffer 100 loop 10",
                 "record", "report --sort size", "dump --from 99999", "annotate"):
        out = nb.cmd(line)
        assert out.count("\n") == 0 and out.startswith("error:"), (line, out)


def test_erratum_part_polls(nb):
    assert "backend: model" in nb.cmd("pmu backend model 0F_02:9")
    try:
        n, after, p = 1000, 100, 50
        out = record(nb, "--throttle 100 --ring 3 -e instr_retired:u -e instr_retired:u:after=%d "
                     "-c %d loop %d" % (after, p, n))
        assert "erratum:" in out and "polled" in out
        s = summary(out)
        counted = loop_instructions(n) + EXIT - after
        # every period sampled (record.c: the last step polls once more), none lost
        assert (s["stored"], s["lost"]) == (counted // p, 0), out
        assert int(PMIS.search(out).group(1)) == 0 or "polls 0" not in out
        # a poll samples where its tick landed: a loop instruction, the
        # workload's return address for the periods found by that last poll, or
        # the exit trampoline after its int 0x80 (counted at CPL 3) ended a period
        syms = {frames[0][1].split("+0x")[0]
                for _, frames in parse_script(nb.cmd("script", timeout=60))}
        assert syms <= {"wl_loop", "wl_user_trampoline", "wl_user_exit"}, syms
    finally:
        nb.cmd("pmu backend model 0F_04")


# ---- synthetic events: a PMI raised inside the int 0x81 gate -------------------------------
#
# `synthetic SPEC N` (arch/x86/64/workloads.S, wl_synthetic) executes N times
# `int 0x81; sub $1, %rcx; jnz`; each int is one occurrence of SPEC at the
# workload's CPL. With period P the counter overflows on the P-th occurrence
# and interrupts on the next (model header), so a sample comes at every
# (P + 1)-th int 0x81 - inside the gate's handler, which feeds the model. As
# on hardware the interrupted context must be the workload's: the RIP after
# the int (the sub) and the workload's CPL, not the gate's kernel code. The
# spec counts CPL 0 too (:u:k), so its period is above P4_PMI_TAIL_MAX (p4_pmi_refusal).

@pytest.mark.parametrize("mode", ["--nmi", "--vector"])
@pytest.mark.parametrize("ring", [0, 3])
def test_synthetic_samples_land_in_the_workload(nb, mode, ring):
    n, p = 1300, 129
    ev = "replay_event:NBOGUS"
    out = record(nb, "%s --throttle 100 --ring %d -e %s -c %d synthetic %s %d"
                 % (mode, ring, ev, p, ev, n))
    s = summary(out)
    assert s["stored"] == n // (p + 1) and s["lost"] == 0, out
    ins = function_insns("wl_synthetic")
    assert len(ins) == 8, "wl_synthetic listing changed: %r" % ins
    after_int = ins[4]
    r = decode(nb, "synth-%d%s.log" % (ring, mode), nb.cmd("dump", timeout=60), "--csv", "-")
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert len(rows) == n // (p + 1)
    assert {(row["symbol"], int(row["offset"], 0), row["cpl"], row["lp"]) for row in rows} == \
        {("wl_synthetic", after_int, str(ring), "0")}, rows[:3]


@pytest.mark.parametrize("mode", ["--nmi", "--vector"])
def test_halt_samples_land_in_the_workload(nb, mode):
    # halt's HLT is woken by the LAPIC timer, whose stepped handler reports the
    # HLT first (step.c step_handler_begin); a PMI raised there is held to the
    # tick's IRET and samples the workload's frame, not the step engine's code.
    # A second of halting: thousands of wake-ups, so that some overflows fall
    # on the HLT itself.
    out = record(nb, "%s --throttle 100 -e instr_retired -c %d halt 1000000"
                 % (mode, HANDLER_PERIOD))
    s = summary(out)
    # the counter counts the kernel's window too (:u:k): an overflow can fall in the
    # stop's locked section, whose PMI is held (IF = 0, or an NMI deferred to the
    # release) and found by the stop: at most that one, without a frame (unattributed)
    assert s["stored"] > 0 and s["lost"] == s["unattributed"] <= 1, out
    ips = [frames[0][1] for _, frames in parse_script(nb.cmd("script", timeout=60))]
    syms = [ip.split("+0x")[0] for ip in ips]
    # halt runs at ring 0 only: the kernel's window is sampled around it (the runner)
    # and so is the tick that woke the HLT (kernel code a Pentium 4 counts), but never
    # the step engine, which a Pentium 4 does not run: a PMI raised while it reports the
    # HLT samples halt's own frame. At a period above the overflow handler's tail
    # (HANDLER_PERIOD) the samples are too few to be sure that one falls on the HLT
    # itself; they fall in halt's loop.
    assert "wl_halt" in syms, ips
    assert not {"step_sync", "step_handler_begin", "step_db", "idt_dispatch"} & set(syms), syms


def test_lp_options_without_a_sibling(nb):
    """This machine has one LP: --cpu 1 and --pair are refused; --cpu both records LP0."""
    for line in ("record --cpu 1 loop 10", "record --pair loop 10 -- loop 10"):
        out = nb.cmd(line)
        assert len(out.splitlines()) == 1 and out.startswith("error: record: "), out
        assert "no Hyper-Threading sibling" in out, out
    out = record(nb, "--throttle 100 --cpu both %s -c 99 loop 100" % U3)
    assert out.startswith("note: no Hyper-Threading sibling"), out
    assert summary(out)["stored"] == expected_samples(loop_instructions(100) + EXIT, 99)


def test_floor_names_what_it_times(nb):
    # record_floor (prof/record.c) reads MSRs 4 times and writes 4 (O8, O9, N15: CCCR and
    # counter read, stop, counter read, two writes and a read back, restart), and appends
    # one sample to an empty store; its line must say so, with both medians measured
    out = nb.cmd("record --floor 20")
    m = re.search(r"^floor: registers (\d+) TSC cycles \(4 RDMSR, 4 WRMSR, LVT PC read\+write, "
                  r"EOI\), store (\d+) TSC cycles \(one append to an empty store\), "
                  r"medians of 20$", out, re.M)
    assert m, out
    assert int(m.group(1)) > 0 and int(m.group(2)) > 0
    assert re.search(r"^error: record --floor: N must be 1 \.\. 256$", nb.cmd("record --floor 0"),
                     re.M)


STORE = re.compile(r"^store: \d+ bytes per LP \((?:stop when full|wrap)\), (.*)$", re.M)


def test_append_time_is_a_sample_of_the_appends(nb):
    # prof/record.c RECORD_STORE_TIMED: the first append and every 16th after it are timed;
    # one sample has its append timed, a recording without any says so
    for period, n in ((loop_instructions(1000) - 1, 1), (999, 3)):
        out = record(nb, "%s --throttle 100 -c %d loop 1000" % (U3, period))
        assert summary(out)["stored"] == n, out
        m = re.fullmatch(r"append (\d+) TSC cycles per sample \(mean of 1 in 16\)",
                         STORE.search(out).group(1))
        assert m and int(m.group(1)) > 0, out
    none = record(nb, "%s --throttle 100 -c 100000 loop 1000" % U3)
    assert summary(none)["stored"] == 0, none
    assert STORE.search(none).group(1) == "no sample appended", none


@pytest.mark.parametrize("mode", ["--nmi", "--vector"])
def test_every_cost_record_prints_is_measured(nb, mode):
    # The handler's time is its own clock's (arch/x86/step.h step_handler_clock): per PMI,
    # with the model's register accesses a part of it. No line gives a cost of 0: a step
    # of the workload that a PMI follows is no longer than any other (the model steps the
    # handler apart), so a cost taken from the steps' medians, printed before, read 0.
    out = record(nb, "%s --throttle 100 %s -c 99 loop 1000" % (mode, U3))
    assert summary(out)["stored"] > 0, out
    m = re.search(r"^PMI handler: (\d+) TSC cycles per PMI from entry to exit, (\d+) of them "
                  r"in the model backend's own work$", out, re.M)
    assert m and int(m.group(1)) > int(m.group(2)) > 0, out
    costs = re.findall(r"(\d+) TSC cycles", out)
    assert len(costs) >= 3 and all(int(c) > 0 for c in costs), out
