"""test_ht_record.py - sampling on either logical processor, and Example 18-2 with samples.

Machine: one Hyper-Threaded core (threads=2), signature 0F_04 (extended
cascading, no cascade-PMI erratum: SDM 18.15.5.7, PMU reference 2.3), model
backend with HT. Expected numbers come from the documents:
  loop N        retires WL_LOOP_K * N + WL_LOOP_C instructions (workload/workload.h;
                3N + 6), in the order of the wl_loop listing (arch/x86/64/workloads.S,
                offsets from `objdump -d`)
  PMI timing    pmu/model/p4_model.c header ("Overflow, PMI, cascades"): a counter
                preset to -P overflows on the P-th event and interrupts on the next
                one; the handler reloads -P, so one sample every P + 1 events, at
                event k(P + 1), with the next instruction as interrupted RIP
  cascade       a started counter counts from the event after its source's
                overflow; a source preset to -N overflows on its N-th event
  routing       PMU reference 2.2/8: OVF_PMI_T0 (CCCR bit 26) / OVF_PMI_T1 (bit 27)
                send the PMI to LP0 / LP1; an event without :t0/:t1 is split by
                record into one counter per LP (shell/cmd_record.c), each
                interrupting its own LP
  Example 18-2  counter 16 (CRU_ESCR0, LP0's instr_retired, preset -4096) starts
                counter 17 (CRU_ESCR1, LP1's) with CASCNT4INTO5 (IQ_CCCR5 bit 11);
                ESCR values 0400060CH / 04000603H (instr_retired NBOGUSNTAG|NBOGUSTAG,
                T0_OS|T0_USR and T1_OS|T1_USR: PMU reference 2.1, the manual's step 2)
--stagger runs LP1's workload once LP0's has ended (workload_run_lps), so the
order of the two LPs' instructions, and with it the sample count, is exact.
The kernel's own code in each LP's counting window counts too (arch/x86/
step.h): exact counts are taken at ring 3 under :u, where each workload adds
its exit trampoline's int 0x80 (EXIT). (The shell takes 16 words, so the
Example 18-2 runs leave out --throttle 100 - LP0 takes no PMI and LP1 one
every 20 instructions, far from the default 25 % share - and give --ring
once: B's ring follows A's.)
"""

import csv
import io
import os
import re

import pytest

from test_record import (PMIS, decode, function_insns, loop_instructions, loop_trace,
                         parse_script, summary)

BOOT = {"smp_ht": True}

BY_LP = re.compile(r"^samples by LP: LP0 \(T0\) (\d+) \((\w+)\) LP1 \(T1\) (\d+) \((\w+)\); "
                   r"PMIs handled on LP0 (\d+), on LP1 (\d+)$", re.M)
BY_LP1 = re.compile(r"^samples by LP: LP1 \(T1\) (\d+) \((\w+)\); "
                    r"PMIs handled on LP0 (\d+), on LP1 (\d+)$", re.M)
SCRIPT_HEADER = re.compile(r"^(\S+) 0/(\d+) \[(\d{3})\] ")

EX_18_2 = "-e instr_retired:t1:u -c %d --after %d:instr_retired:t0:u"
EXIT = 1


def loop3(n):
    """loop N at ring 3 under :u: its instructions and its exit's int 0x80."""
    return loop_instructions(n) + EXIT


def samples(events, period):
    return events // (period + 1)


def record(nb, args):
    out = nb.cmd("record " + args, timeout=180)
    assert "error" not in out, out
    return out


def script_samples(nb, extra=""):
    """[(lp from tid, lp from [cpu], leaf symbol)] of `script`."""
    rows = []
    for header, frames in parse_script(nb.cmd(("script " + extra).strip(), timeout=60)):
        m = SCRIPT_HEADER.match(header)
        assert m, header
        rows.append((int(m.group(2)), int(m.group(3)), frames[0][1]))
    return rows


def loop_offsets(rows):
    out = []
    for _, _, sym in rows:
        assert sym.startswith("wl_loop+0x"), sym
        out.append(int(sym.split("+0x")[1], 16))
    return out


def want_offsets(n, p, count):
    trace = loop_trace(n)
    return [trace[k * (p + 1)] for k in range(1, count + 1)]


@pytest.fixture(autouse=True)
def ht_model(nb):
    assert "backend: model" in nb.cmd("pmu backend model 0F_04 ht")
    nb.cmd("pmu pmi fixed")
    nb.cmd("msr trace off")


# ---- record --cpu 1 ---------------------------------------------------------------------

def test_cpu1_samples_lp1_exactly(nb):
    n, p = 400, 29
    e = loop3(n)
    assert e % (p + 1) != 0
    out = record(nb, "--nmi --throttle 100 --cpu 1 --ring 3 -e instr_retired:u -c %d loop %d"
                 % (p, n))
    assert re.search(r"^record: loop %d \(ring 3, LP1, PMI by" % n, out, re.M), out
    s = summary(out)
    assert s["stored"] == samples(e, p) and s["lost"] == 0, out
    m = BY_LP1.search(out)
    assert m and int(m.group(1)) == s["stored"] and m.group(2) == "ok", out
    # OVF_PMI_T1: every PMI on LP1, none on LP0
    assert (int(m.group(3)), int(m.group(4))) == (0, s["stored"]), out
    rows = script_samples(nb)
    assert {(a, b) for a, b, _ in rows} == {(1, 1)}
    assert loop_offsets(rows) == want_offsets(n, p, s["stored"])


def test_cpu1_by_vector_is_refused(nb):
    """LP1 runs its jobs with IF = 0 (smp.h), and a CPU holds a fixed-vector interrupt while
    IF = 0 (SDM Vol. 3A 6.8.1): LP1 would never take its PMI, so --vector with LP1 sampling
    is refused with the reason; LP0's samples by vector with LP1 only counting are fine."""
    # periods above the overflow handler's own instructions, which count at :k
    for args in ("--vector --cpu 1 -e instr_retired -c 1999 loop 400",
                 "--vector -e instr_retired -c 1999 --pair loop 400 -- loop 400"):
        out = nb.cmd("record " + args, timeout=60)
        assert out.strip() == ("error: record: --vector: LP1 runs its stepped jobs with "
                               "interrupts masked (IF = 0), and a fixed-vector PMI waits for IF = 1 (SDM Vol. 3A "
                               "6.8.1): LP1 would take no sample; sample LP1 by NMI (the "
                               "default)"), out
    out = record(nb, "--vector --throttle 100 --cpu 0 -e instr_retired -c 1999 loop 400")
    assert "PMI by vector F8H" in out, out


# ---- record --pair: one counter and one store per LP --------------------------------------

def test_pair_each_lp_samples_its_own_workload(nb):
    n0, n1, p = 300, 500, 29
    e0, e1 = loop3(n0), loop3(n1)
    assert e0 % (p + 1) and e1 % (p + 1)
    out = record(nb, "--throttle 100 --ring 3 -e instr_retired:u -c %d --pair loop %d -- loop %d" % (p, n0, n1))
    # the spec without :t0/:t1 became one counter per LP, each interrupting its own LP
    events = re.findall(r"^  #(\d) (\S+) counter (\d+) .*: period (\d+)$", out, re.M)
    assert [(spec.split(":")[-2], int(c) in (12, 13, 16), int(c) in (14, 15, 17))
            for _, spec, c, _ in events] == [("t0", True, False), ("t1", False, True)], out
    m = BY_LP.search(out)
    assert m, out
    assert (int(m.group(1)), int(m.group(3))) == (samples(e0, p), samples(e1, p)), out
    assert (int(m.group(5)), int(m.group(6))) == (samples(e0, p), samples(e1, p)), out
    assert summary(out)["lost"] == 0
    rows = script_samples(nb)
    assert loop_offsets([r for r in rows if r[0] == 0]) == want_offsets(n0, p, samples(e0, p))
    assert loop_offsets([r for r in rows if r[0] == 1]) == want_offsets(n1, p, samples(e1, p))
    assert all(a == b for a, b, _ in rows)              # tid and [cpu] both name the LP
    # dump carries LP and CPL of every sample
    dump = nb.cmd("dump", timeout=60)
    r = decode(nb, "ht-pair.log", dump, "--csv", "-")
    assert r.returncode == 0, r.stderr
    seen = {(row["lp"], row["cpl"], row["symbol"]) for row in csv.DictReader(io.StringIO(r.stdout))}
    assert seen == {("0", "3", "wl_loop"), ("1", "3", "wl_loop")}
    # folded stacks keep both LPs' samples, each under its LP and event
    r = decode(nb, "ht-pair.log", dump, "--folded", "-", "--weight", "samples", "-q")
    assert r.returncode == 0, r.stderr
    per_root = {}
    for line in r.stdout.splitlines():
        stack, _, n = line.rpartition(" ")
        root = stack.split(";")[0]
        per_root[root] = per_root.get(root, 0) + int(n)
    assert {k.split(" ")[0]: v for k, v in per_root.items()} == \
        {"[LP0": samples(e0, p), "[LP1": samples(e1, p)}, per_root
    assert all(k.endswith("t0]") if k.startswith("[LP0") else k.endswith("t1]")
               for k in per_root), per_root
    # report counts each LP and filters by LP
    rep = nb.cmd("report")
    assert "# samples by LP: LP0 %d held, LP1 %d held" % (samples(e0, p), samples(e1, p)) in rep
    rep1 = nb.cmd("report --cpu 1")
    assert re.search(r"^# %d samples, sorted by symbol$" % samples(e1, p), rep1, re.M), rep1
    assert [r[0] for r in script_samples(nb, "--cpu 1")] == [1] * samples(e1, p)


def test_pair_samples_carry_each_lps_workload_name(nb):
    """--pair A -- B: LP0's samples are named after A, LP1's after B (script and dump)."""
    record(nb, "--throttle 100 --ring 3 -e instr_retired:u -c 29 --pair calls 2 100 -- loop 300")
    heads = [SCRIPT_HEADER.match(l) for l in nb.cmd("script", timeout=60).splitlines()]
    names = {(m.group(1), int(m.group(2))) for m in heads if m}
    assert names == {("calls", 0), ("loop", 1)}, names
    r = decode(nb, "ht-pair-comm.log", nb.cmd("dump", timeout=60), "--script", "-")
    assert r.returncode == 0, r.stderr
    heads = [SCRIPT_HEADER.match(l) for l in r.stdout.splitlines()]
    assert {(m.group(1), int(m.group(2))) for m in heads if m} == names


ANNOTATE_ROW = re.compile(r"^\s+\+0x([0-9a-f]+)\s+0x[0-9a-f]+\s+(\d+)\s+[\d.]+%\s+[0-9a-f ]*$", re.M)


def test_annotate_cpu_counts_one_lps_samples(nb):
    """annotate --cpu N: per-instruction counts of the samples LP N took, and only those."""
    n0, n1, p = 300, 500, 29
    e0, e1 = loop3(n0), loop3(n1)
    out = record(nb, "--throttle 100 --ring 3 -e instr_retired:u -c %d --pair loop %d -- loop %d" % (p, n0, n1))
    assert summary(out)["lost"] == 0, out
    for lp, n, e in ((0, n0, e0), (1, n1, e1)):
        want = want_offsets(n, p, samples(e, p))
        ann = nb.cmd("annotate --cpu %d wl_loop" % lp)
        got = {int(o, 16): int(c) for o, c in ANNOTATE_ROW.findall(ann)}
        assert got == {o: want.count(o) for o in set(want)}, (lp, ann)
    both = {int(o, 16): int(c) for o, c in ANNOTATE_ROW.findall(nb.cmd("annotate wl_loop"))}
    assert sum(both.values()) == samples(e0, p) + samples(e1, p)
    for line in ("annotate --cpu 2 wl_loop", "annotate --cpu 1", "annotate wl_loop --cpu 1"):
        out = nb.cmd(line)
        assert len(out.splitlines()) == 1 and out.startswith("error:"), (line, out)


THROTTLED_BY_LP = re.compile(r"^throttled by LP: LP0 (\d+) \(PMI time (\d+) TSC cycles\) "
                             r"LP1 (\d+) \(PMI time (\d+) TSC cycles\)$", re.M)


@pytest.mark.parametrize("busy", [0, 1])
def test_throttle_weighs_each_lps_own_pmi_time(nb, busy):
    """Period 1 on one LP only (:u at ring 3: the handler adds nothing) at the default
    throttle (25 %): that LP throttles, its handlers taking most of its time as on a
    Pentium 4 (the model weighs them against the LP's stepped instructions' own time,
    prof/backend.h clock, not the stepped run's far longer one); the other LP took no PMI,
    spent no PMI time, and is never throttled for its sibling's handlers (record.c: each
    LP compares its own handlers' time with its own)."""
    n = 1000
    idle = 1 - busy
    out = record(nb, "--ring 3 -e instr_retired:t%d:u -c 1 --pair loop %d -- loop %d"
                 % (busy, n, n))
    m = THROTTLED_BY_LP.search(out)
    assert m, out
    throttled = (int(m.group(1)), int(m.group(3)))
    pmi_time = (int(m.group(2)), int(m.group(4)))
    assert pmi_time[busy] > 0 and throttled[busy] >= 1, out
    assert throttled[idle] == 0 and pmi_time[idle] == 0, out
    assert int(re.search(r"^throttled: (\d+)$", out, re.M).group(1)) == throttled[busy]
    b = BY_LP.search(out)
    assert b and int(b.group(5 + idle)) == 0, out


# ---- Example 18-2 with samples ------------------------------------------------------------

@pytest.mark.parametrize("n0,after,sampled", [
    (1364, 4096, True),     # 4099 LP0 instructions: LP1's counter starts on LP0's 4096th
    (1363, 4097, False),    # 4096: counter 16 never overflows, LP1 is never sampled
    (1364, 4099, True),     # starts on LP0's very last instruction (its exit's int 0x80)
    (1364, 4100, False),    # one short
])
def test_example_18_2_samples_lp1_after_lp0s_nth(nb, n0, after, sampled):
    n1, p = 100, 19
    e1 = loop3(n1)
    assert e1 % (p + 1) != 0
    out = record(nb, "%s --ring 3 --stagger --pair loop %d -- loop %d"
                 % (EX_18_2 % (p, after), n0, n1))
    assert "A on LP0 (ring 3), then B on LP1 (ring 3)" in out
    assert re.search(r"#0 instr_retired:\S+:t0:period=%d counter 16 .*cascade starter" % after,
                     out), out
    assert re.search(r"#1 instr_retired:\S+:t1:period=%d counter 17 .*: period %d$" % (p, p),
                     out, re.M), out
    want = samples(e1, p) if sampled else 0
    s = summary(out)
    assert s["stored"] == want and s["lost"] == 0, out
    rows = script_samples(nb)
    assert {(a, b) for a, b, _ in rows} <= {(1, 1)}
    assert loop_offsets(rows) == want_offsets(n1, p, want)


def test_example_18_2_together_never_samples_early(nb):
    """Both LPs at once: LP1 is sampled only after LP0's 4096th instruction.

    With 4095 LP0 instructions nothing is sampled whatever the interleaving;
    with 4098, at most what all of LP1's loop gives, and only LP1's IPs.
    """
    n1, p = 100, 19
    out = record(nb, "%s --ring 3 --pair loop 1363 -- loop %d" % (EX_18_2 % (p, 4097), n1))
    assert summary(out)["stored"] == 0, out
    out = record(nb, "%s --ring 3 --pair loop 1364 -- loop %d" % (EX_18_2 % (p, 4096), n1))
    s = summary(out)
    assert s["stored"] <= samples(loop3(n1), p) and s["lost"] == 0
    rows = script_samples(nb)
    assert {(a, b) for a, b, _ in rows} <= {(1, 1)}
    trace = set(loop_trace(n1))
    assert set(loop_offsets(rows)) <= trace


def test_example_18_2_trace_shows_the_plan(nb):
    p = 19
    assert nb.cmd("msr trace on") == "msr trace: on"
    try:
        out = nb.cmd("record %s --ring 3 --stagger --pair loop 1364 -- loop 100"
                     % (EX_18_2 % (p, 4096)), timeout=180)
    finally:
        nb.cmd("msr trace off")
    writes = re.findall(r"^wrmsr ([0-9A-F]+)H <- ([0-9A-F]+)H", out, re.M)
    last = dict((int(a, 16), int(v, 16)) for a, v in writes)
    assert last[0x3B8] == 0x04000604            # CRU_ESCR0: LP0's instr_retired (T0_USR)
    assert last[0x3B9] == 0x04000601            # CRU_ESCR1: LP1's (T1_USR; the manual's step 2
                                                # has T1_OS|T1_USR, 04000603H)
    assert "wrmsr 310H <- FFFFFFF000H" in out    # counter 16 = -4096 in 40 bits
    assert "wrmsr 311H <- %XH" % ((1 << 40) - p) in out     # counter 17 = -P
    all5 = [int(v, 16) for a, v in writes if a == "371"]
    cccr5 = [v for v in all5 if (v >> 13) & 7 == 4]
    # every other write stops counter 17 on a null event (Xeon MP erratum O8):
    # Enable and Compare (18) clear, an ESCR select other than the plan's
    quiet5 = [v for v in all5 if (v >> 13) & 7 != 4]
    assert quiet5 and all(not v & (1 << 12) and not v & (1 << 18) for v in quiet5), quiet5
    # IQ_CCCR5 as programmed: CASCNT4INTO5 (bit 11), Enable (12) clear, select 4 (15:13,
    # CRU_ESCR1), OVF_PMI_T1 (27) and not OVF_PMI_T0 (26): LP1 takes its samples; after
    # each of its overflows the handler restarts it with Enable set and bit 11 clear
    # (SDM Example 18-1: a started counter is "automatically enabled")
    assert cccr5 and all(bool(v & (1 << 11)) != bool(v & (1 << 12)) and (v >> 13) & 7 == 4 and
                         v & (1 << 27) and not v & (1 << 26) for v in cccr5), cccr5
    assert not cccr5[0] & (1 << 12) and any(v & (1 << 12) for v in cccr5), cccr5
    cccr4 = [int(v, 16) for a, v in writes if a == "370"]
    assert any(v & (1 << 12) and v & (1 << 26) for v in cccr4), cccr4
    s = summary(out)
    assert s["stored"] == samples(loop3(100), p)


# ---- refusals -----------------------------------------------------------------------------

def test_bad_lp_input_is_one_error(nb):
    for line in ("record --cpu 2 loop 10", "record --pair loop 10", "record --pair loop 10 --",
                 "record --stagger loop 10", "record --pair loop 1 -- loop 1 -- loop 1",
                 "record --cpu 1 --pair loop 1 -- loop 1",
                 "record -e instr_retired:t0=u:t1=k --pair loop 1 -- loop 1",
                 "record -e instr_retired --after 10:instr_retired --pair loop 1 -- loop 1"):
        out = nb.cmd(line)
        assert len(out.splitlines()) == 1 and out.startswith("error: record: "), (line, out)


def test_erratum_part_cannot_poll_lp1(nb):
    assert "backend: model" in nb.cmd("pmu backend model 0F_02:9 ht")
    out = nb.cmd("record %s --stagger --pair loop 1364 -- loop 100" % (EX_18_2 % (19, 4096)))
    assert len(out.splitlines()) == 1 and out.startswith("error: record: "), out
    assert "no PMI from a cascaded counter" in out
