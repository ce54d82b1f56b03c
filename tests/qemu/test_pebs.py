"""test_pebs.py - PEBS sampling on the model backend (PMU reference section 5).

Expected numbers come from the documents, not from running the code:
- wl_memwalk's listing in the kernel under test (`objdump -d` of the ELF the
  firmware boots: x86-64, or the 32-bit kernel of uefi-ia32 and bios): which
  of its instructions read or write memory, and in what order a stepped run
  retires them (its two backward branches are the per-load and per-pass
  loops, workloads.S: 6 + passes * (3 + 5M) instructions, M =
  ceil(SIZE/STRIDE)). The x86-64 walk keeps its arguments in registers (one
  load per element, the movzbl); the 32-bit walk reads stride and size from
  their stack slots on every element (three loads an element) and the pass
  count once a pass (a read-modify-write: a load and a store); both pop
  %ebp/%rbp and return (two loads) and push it (one store);
- PMU reference 5.6: uop_type TAGLOADS tags load uops and front_end_event
  counts them at retirement; 5.2: a PEBS record holds the linear IP of the
  instruction that caused the event, and the counter is reloaded from the
  counter-reset field (-period) after each record, so with period P the
  k-th record is the (kP)-th tagged load;
- PMU reference 5.1/5.2: the DS layout is 64-bit with DTES64 (0F_03 and
  later) or in IA-32e mode, else 32-bit with 40-byte records (a 0F_02 part
  under the 32-bit kernel);
- SDM 18.16.3: MY_THR / OTH_THR are relative to the LP that writes
  MSR_PEBS_ENABLE (the shell's LP0 programs the PMU).
The kernel's own loads in the counting window are tagged and counted too, as
on a Pentium 4 (the model steps kernel code, arch/x86/step.h; the front end
tags the uops of every CPL): the workload's alone are counted at ring 3 under
`:u` (its exit trampoline's int 0x80 loads nothing).
"""

import csv
import io
import os
import re
import subprocess

import pytest
from nbproflib import qemu  # tools/, put on the path by conftest.py
from conftest import kernel_bits

FIRMWARE = os.environ.get("NBPROF_FIRMWARE") or qemu.DEFAULT_FIRMWARE
ELF = qemu.kernel_elf(FIRMWARE)
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DECODE = os.path.join(REPO, "tools", "nbprof-decode")
WORK = os.path.join(qemu.BUILD, "qemu-test")
BOOT = {"smp_ht": True}
# loads of wl_memwalk before the walk, per element, per pass, after it (workloads.S)
WALK_LOADS = {64: (0, 1, 0, 2), 32: (1, 3, 1, 2)}
PEBS = re.compile(r"^PEBS: (\d+) records drained in (\d+) drains \((\d+) slots per LP, "
                  r"threshold (?:\d+) records below the maximum\), buffer found full (\d+) time",
                  re.M)


def below(slots):
    """SDM: the threshold "several records short of the absolute maximum" (perfmon2: 90 %)."""
    return min(max(2, slots // 10), slots - 1)
SAMPLES = re.compile(r"^samples: (\d+) stored, (\d+) held, (\d+) lost", re.M)
SKID = re.compile(r"^skid: #(\d+) \(interrupt\) (\d+) samples, (\d+) at a PEBS IP, mean (\d+) bytes, "
                  r"max (\d+) bytes from the nearest; #(\d+) \(PEBS\) (\d+) samples at (\d+) distinct",
                  re.M)
BACKEND = re.compile(r"PEBS records written (\d+), lost to a full buffer (\d+)")


def function_insns(name):
    """Offsets of the instructions of `name` in the kernel ELF, with their text, from objdump."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", ELF], check=True,
                         capture_output=True, text=True).stdout
    m = re.search(r"^([0-9a-f]+) <%s>:\n(.*?)\n\n" % re.escape(name), out, re.M | re.S)
    assert m, "no %s in objdump output" % name
    start = int(m.group(1), 16)
    insns = []
    for line in m.group(2).splitlines():
        if ":" in line:
            addr, text = line.split(":", 1)
            insns.append((int(addr, 16) - start, text.strip()))
    return insns


def operands(text):
    """The AT&T operands of one instruction, split at the commas outside parentheses."""
    ops, depth, cur = [], 0, ""
    for ch in text.partition(" ")[2].strip().split("<")[0].strip():
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            ops.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return ops + [cur.strip()] if cur.strip() else ops


def mem_uops(text):
    """(loads, stores) one instruction of the walk retires (AT&T: the destination last).
    Only the forms wl_memwalk uses are known; any other fails rather than guess."""
    op = text.split()[0]
    mem = [i for i, o in enumerate(operands(text)) if "(" in o]
    if op in ("push", "call"):
        return (len(mem), 1)
    if op == "pop":
        return (1, len(mem))
    if op == "ret":
        return (1, 0)
    if re.match(r"j[a-z]+$", op):
        return (0, 0)
    assert re.match(r"(mov|movz[bw]l|add|sub|cmp|xor)[bwlq]?$", op), text
    if not mem:
        return (0, 0)
    dest = mem[0] == len(operands(text)) - 1
    if op.startswith("cmp") or not dest:
        return (1, 0)                    # a source operand in memory is read
    return (0, 1) if op.startswith("mov") else (1, 1)   # arithmetic on memory: read-modify-write


def memwalk_trace(size, stride, passes=1):
    """The instructions a stepped wl_memwalk retires, in order: (offset, loads, stores).
    Its two backward branches close the per-element loop (inner) and the per-pass loop."""
    ins = function_insns("wl_memwalk")
    back = []
    for i, (off, text) in enumerate(ins):
        t = re.search(r"<wl_memwalk\+0x([0-9a-f]+)>", text)
        if t and int(t.group(1), 16) < off:
            back.append((i, [k for k, (o, _) in enumerate(ins) if o == int(t.group(1), 16)][0]))
    assert len(back) == 2 and back[1][1] < back[0][1] < back[0][0] < back[1][0], ins
    (jin, tin), (jout, tout) = back
    m = -(-size // stride)
    order = (ins[:tout] + (ins[tout:tin] + ins[tin:jin + 1] * m + ins[jin + 1:jout + 1]) * passes
             + ins[jout + 1:])
    trace = [(off,) + mem_uops(text) for off, text in order]
    assert len(trace) == 6 + passes * (3 + 5 * m), trace      # workloads.S
    # workloads.S (wl_memwalk_loads): loads before the walk, per element, per pass, after it
    got = tuple(sum(mem_uops(text)[0] for _, text in seq)
                for seq in (ins[:tout], ins[tin:jin + 1], ins[tout:tin] + ins[jin + 1:jout + 1],
                            ins[jout + 1:]))
    assert got == WALK_LOADS[kernel_bits(FIRMWARE)], (got, ins)
    return trace


def memwalk_loads(size, stride, passes=1):
    """Offsets of the loads a stepped wl_memwalk retires, in order (one per load uop)."""
    return [off for off, nl, _ in memwalk_trace(size, stride, passes) for _ in range(nl)]


def memwalk_tagged(size, stride, passes=1):
    """Offsets of the loads and stores (TAGLOADS:TAGSTORES) in retirement order."""
    return [off for off, nl, ns in memwalk_trace(size, stride, passes) for _ in range(nl + ns)]


def script_samples(nb, event):
    """(weight, `symbol+0xoff`) of each `script` sample of `event` (its name exactly), in order."""
    samples = []
    for block in nb.cmd("script", timeout=60).split("\n\n"):
        lines = [l for l in block.strip().split("\n") if l.strip()]
        if lines and lines[0].endswith(" %s:" % event):
            samples.append((int(lines[0].split()[-2]), lines[1].split()[1]))
    return samples


def script_syms(nb, event):
    """The `symbol+0xoff` of each `script` sample of `event` (its name exactly), in order."""
    return [sym for _, sym in script_samples(nb, event)]


def script_ips(nb, event):
    """wl_memwalk offsets of the `script` samples of `event`."""
    syms = script_syms(nb, event)
    assert all(sym.startswith("wl_memwalk+0x") for sym in syms), syms
    return [int(sym.split("+0x")[1], 16) for sym in syms]


def record(nb, args):
    out = nb.cmd("record " + args, timeout=180)
    assert "error" not in out, out
    return out


def test_pebs_samples_are_the_tagged_loads(nb):
    size, stride, p = 4096, 16, 5
    loads = memwalk_loads(size, stride)
    out = record(nb, "--throttle 100 --ring 3 -e uop_type:tagloads -e front_end_event:nbogus:u:pebs "
                 "-c %d memwalk %d %d" % (p, size, stride))
    m = PEBS.search(out)
    assert m, out
    assert int(m.group(1)) == len(loads) // p      # records == count / period, exactly
    assert int(m.group(4)) == 0
    s = SAMPLES.search(out)
    assert int(s.group(1)) == len(loads) // p and int(s.group(3)) == 0
    want = [loads[k * p - 1] for k in range(1, len(loads) // p + 1)]
    assert script_ips(nb, "front_end_event:pebs") == want
    # the count over the run is every tagged load: one period per record plus the
    # remainder after the last reload (the assist reloads the counter, PMU reference 5.2)
    m = re.search(r"^events: #1 (\d+) counted, (\d+) in its samples", out, re.M)
    assert m and (int(m.group(1)), int(m.group(2))) == (len(loads), len(loads) // p * p), out


# wl_fault_user before its #PF (workloads.S): instructions retired, their loads and stores.
# x86-64: push %rbp (a store), mov %rsp,%rbp; the 32-bit kernel also loads its argument from
# the stack. The faulting load does not retire.
FAULT_USER = {64: (2, 0, 1), 32: (3, 1, 1)}
PF_LOADS = 5    # real parts tag 5 loads a page fault (ISPASS 2013 data; pmu/model/p4_core.h)


def fault_user_count(nb, args):
    out = nb.cmd("record --ring 3 %s -c 1000 fault-user" % args, timeout=120)
    assert "error: record: the workload faulted (vector 14); samples kept" in out, out
    m = re.search(r"^events: #0 (\d+) counted", out, re.M)
    assert m, out
    return int(m.group(1))


def test_page_fault_tags_its_loads_and_does_not_retire(nb):
    """A page fault's microcode loads are tagged as real parts count them, at the faulting
    instruction's CPL; the faulting instruction itself neither retires nor tags its load (a
    fault used to be reported as the instruction retiring, at the next trap)."""
    insns, loads, stores = FAULT_USER[kernel_bits(FIRMWARE)]
    assert fault_user_count(nb, "-e instr_retired:u") == insns
    assert fault_user_count(nb, "-e front_end_event:nbogus:u -e uop_type:tagloads:u") \
        == loads + PF_LOADS
    assert fault_user_count(nb, "-e front_end_event:nbogus:u -e uop_type:tagstores:u") == stores
    assert fault_user_count(nb, "-e front_end_event:nbogus:u") == loads + stores + PF_LOADS
    # at a period the fault's loads reach, the sample is taken (nothing waits for a next step)
    out = nb.cmd("record --ring 3 -e front_end_event:nbogus:u -c %d fault-user"
                 % (loads + stores + PF_LOADS), timeout=120)
    assert re.search(r"^samples: 1 stored", out, re.M), out


def test_pebs_cpl_is_where_the_ip_lies(nb):
    """A PEBS record holds no CS (PMU reference 5.2): its sample's CPL is where its IP lies. At
    ring 3 with front_end_event and the tagger both :u:k (the default) the kernel's own tagged
    loads in the counting window are recorded too: those samples carry CPL 0, the walk's CPL 3,
    in the PMI's drains and in the one after the run alike. The overflow handler's own
    tagged loads count at :k too (the model steps it, as a Pentium 4 counts it), so the
    period and the buffer leave the walk room: at -c 3 and 8 slots the handler's records
    alone filled the buffer before the walk's next load."""
    size, stride, p = 65536, 16, 50
    out = record(nb, "--throttle 100 --pebs-buffer 64 --ring 3 -e front_end_event:nbogus:pebs "
                 "-e uop_type:tagloads -c %d memwalk %d %d" % (p, size, stride))
    m = PEBS.search(out)
    assert m and int(m.group(2)) > 1, out           # drained in the PMI too
    cap = os.path.join(WORK, "pebs_cpl.log")
    os.makedirs(WORK, exist_ok=True)
    with open(cap, "w") as f:
        f.write(nb.cmd("dump", timeout=60))
    r = subprocess.run([DECODE, cap, "--elf", ELF, "--csv", "-"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rows = [row for row in csv.DictReader(io.StringIO(r.stdout))
            if row["event_name"].startswith("front_end_event")]
    walk = [row for row in rows if row["symbol"] == "wl_memwalk"]
    kernel = [row for row in rows if row["symbol"] != "wl_memwalk"]
    assert walk and kernel, [(row["symbol"], row["cpl"]) for row in rows]
    assert {row["cpl"] for row in walk} == {"3"}
    assert {row["cpl"] for row in kernel} == {"0"}, [(row["symbol"], row["cpl"]) for row in kernel]


def test_threshold_pmi_drains(nb):
    """8 slots, threshold 2 below the maximum: a PMI (and a drain) every 6 records, and none
    per record (the PEBS counter has no OVF_PMI); each drain runs with PEBS off (the SDM's
    DS interrupt service routine): MY_THR cleared before it, set again after."""
    size, stride, p, slots = 4096, 16, 3, 8
    loads = memwalk_loads(size, stride)
    records = len(loads) // p
    every = slots - below(slots)
    nb.cmd("msr trace on")
    try:
        # --quiet: a progress line of the slower 32-bit kernel would cut a traced write's line
        out = record(nb, "--throttle 100 --quiet --ring 3 --pebs-buffer %d "
                     "-e front_end_event:nbogus:u:pebs -e uop_type:tagloads -c %d memwalk %d %d"
                     % (slots, p, size, stride))
    finally:
        nb.cmd("msr trace off")
    m = PEBS.search(out)
    assert m, out
    assert "threshold 2 records below the maximum" in out, out
    assert int(m.group(1)) == records and int(m.group(4)) == 0
    pmis = int(re.search(r"^PMIs: (\d+)", out, re.M).group(1))
    assert pmis == records // every
    drains = records // every + (1 if records % every else 0)
    assert int(m.group(2)) == drains
    pe = re.findall(r"^wrmsr 3F1H <- ([0-9A-F]+)H", out, re.M)
    off = [i for i, v in enumerate(pe) if int(v, 16) == 0x01000000]
    assert len(off) == pmis, pe
    assert all(i + 1 < len(pe) and int(pe[i + 1], 16) == 0x03000000 for i in off), pe
    want = [loads[k * p - 1] for k in range(1, records + 1)]
    assert script_ips(nb, "front_end_event:pebs") == want


HANDLER = re.compile(r"^PMI handler on LP0 in the last count \(model, stepped\): (\d+) PMIs, (\d+) "
                     r"instructions at CPL 0 per PMI", re.M)
# What a threshold PMI may retire at CPL 0 (a Pentium 4 counts it, :k events included):
# the handler of any PMI (make bench: under 1,000 instructions on both kernels) and the
# drain's register accesses, then a bounded cost a record - its decode (a copy of the
# record's words), the sample's fields and one append. Decoded a byte at a time, a
# 64-bit record's 18 registers took about 1,300 instructions alone.
DRAIN_FIXED, DRAIN_PER_RECORD = 1500, 300


def test_threshold_pmi_drain_costs_a_bounded_amount_a_record(nb):
    """64 slots, threshold 6 below the maximum: each threshold PMI drains 58 records (the
    workload's loads alone are counted, :u at ring 3); the handler the model steps retires at
    most DRAIN_FIXED + 58 x DRAIN_PER_RECORD instructions a PMI, and record's store line says
    that the drain's appends are not timed (it said "no sample appended")."""
    size, stride, p, slots = 65536, 16, 3, 64
    records = len(memwalk_loads(size, stride)) // p
    every = slots - below(slots)
    out = record(nb, "--throttle 100 --quiet --ring 3 --pebs-buffer %d "
                 "-e front_end_event:nbogus:u:pebs -e uop_type:tagloads -c %d memwalk %d %d"
                 % (slots, p, size, stride))
    m = PEBS.search(out)
    assert m and int(m.group(1)) == records and int(m.group(4)) == 0, out
    pmis = int(re.search(r"^PMIs: (\d+)", out, re.M).group(1))
    assert pmis == records // every and pmis >= 2, out
    pmu = nb.cmd("pmu")
    h = HANDLER.search(pmu)
    assert h and int(h.group(1)) == pmis, out
    assert int(h.group(2)) <= DRAIN_FIXED + every * DRAIN_PER_RECORD, h.group(0)
    # no sampler restarted: the PEBS counter the drain restarts interrupts at the threshold,
    # not on overflow, so no tail is held to the sampler's limit (it read 160 "of 32")
    line = re.search(r"^PMI handler on LP0 .*$", pmu, re.M).group(0)
    assert "restart" not in line, line
    # the drain's appends are not timed, and record says so (it said "no sample appended")
    assert re.search(r"^store: .*, appends not timed \(PEBS records\)$", out, re.M), out


STORM = re.compile(r"^error: record: interrupt storm: the PEBS buffer of #0 front_end_event\S* "
                   r"\(period (\d+)\) reached its threshold \((\d+) records\) again from the "
                   r"handler's own tagged uops at CPL 0: (\d+) records (after its drain|between "
                   r"two drains), (at least|at most) (\d+) uops( \(the buffer was full\))?; "
                   r"counting stopped\. A period above (\d+) (works|is needed, maybe more)", re.M)


def test_pebs_storm_names_its_request_and_a_period_that_works(nb):
    """At the default :u:k and a small period the threshold PMI's handler writes records
    enough of its own tagged uops (every load and store of the handler is tagged) to reach
    the threshold again: after its drain, before it returns, its LVT PC entry masked (the
    buffer's interrupt is lost, and PEBS would record nothing more until the end: before,
    16 of a walk's 512 records at period 2 and 8 slots, 645 lost), or between its drain and
    the next PMI's with nothing else run. The count stops with an error that names the PEBS
    request (not its tagging partner, which never overflows), the records and the uops they
    stand for at least, and a period: one that works from a whole cycle's records, one that
    is needed from part of them. Following the errors (where only a lower bound is given,
    doubling the period at least), a few steps record the same walk to its end, a period
    said to work does, and the shell answers."""
    for period, slots in ((1, 64), (2, 8)):
        args = "-e front_end_event:pebs --pebs-buffer %d memwalk 64K 64" % slots
        threshold = slots - below(slots)
        promised = False
        for step in range(8):
            out = nb.cmd("record -c %d %s" % (period, args), timeout=600)
            m = STORM.search(out)
            if not m:
                break
            assert step < 7 and not promised, out     # a period said to work must
            assert int(m.group(1)) == period and int(m.group(2)) == threshold, out
            records, uops, above = int(m.group(3)), int(m.group(6)), int(m.group(8))
            early = m.group(4) == "after its drain"
            full = records >= slots
            assert records >= (threshold if early else 1), out
            part = early or full
            assert (m.group(5) == "at least") == part and (m.group(7) is not None) == full, out
            assert m.group(9).startswith("is") == part, out
            assert uops == records * period + (0 if part else period - 1)
            assert above == uops // threshold and above >= period, out
            promised = not part
            # a bound from part of the uops: at least that, and twice the period that stormed
            period = above + 1 if promised else max(above + 1, 2 * period)
        p = PEBS.search(out)
        assert p and int(p.group(1)) > 0 and "error" not in out, out
        assert "PMI by LP" in nb.cmd("pmu")      # the shell answers


def test_full_buffer_reports_its_loss(nb):
    """Drained only after the run: 6 slots hold 6 records, the rest are lost and counted."""
    size, stride, p, slots = 4096, 16, 5, 6
    loads = memwalk_loads(size, stride)
    before = BACKEND.search(nb.cmd("pmu")) if "PEBS records" in nb.cmd("pmu") else None
    lost0 = int(before.group(2)) if before else 0
    # (no PMI before the end: nothing to throttle; the shell takes 16 words)
    out = record(nb, "--ring 3 --pebs-buffer %d --pebs-drain-at-end "
                 "-e front_end_event:nbogus:u:pebs -e uop_type:tagloads -c %d memwalk %d %d"
                 % (slots, p, size, stride))
    m = PEBS.search(out)
    assert int(m.group(1)) == slots and int(m.group(4)) == 1
    b = BACKEND.search(out)
    assert int(b.group(2)) - lost0 == len(loads) // p - slots
    assert script_ips(nb, "front_end_event:pebs") == [loads[k * p - 1] for k in range(1, slots + 1)]
    # records lost to the full buffer are unknown on hardware: the count is a lower bound
    # (the records held, plus what came after the last reload)
    assert re.search(r"^events: #0 at least %d counted, %d in its samples"
                     % (slots * p + len(loads) % p, slots * p), out, re.M), out


def test_skid_interrupt_vs_pebs(nb):
    """The same event sampled both ways on one run: PEBS lands on the load, the PMI after it:
    on the instruction that follows a tagged load (the PMI is taken between instructions),
    which on the 32-bit walk can be another load (add, then cmp, both read the stack).

    The interrupt twin takes fewer samples than the PEBS counter, and none is lost. Both
    counters are preset to -P. The PMI comes on the event after the one that overflowed the
    counter (PMU reference 2.2; the SDM's CCCR OVF_PMI bit), and the handler adds those P + 1
    events and reloads -P, so the k-th interrupt sample is at the k(P+1)-th tagged load. The
    PEBS assist writes its record as the counter overflows and resets it to -P itself (PMU
    reference 5.2; SDM 18.15.7), so the k-th record is the kP-th tagged load. memwalk 1024 16
    retires 66 loads on the x86-64 walk (64 elements, pop, ret) and 196 on the 32-bit one
    (the buffer address, three per element, the pass count, pop, ret): with P = 4,
    13 interrupt samples of weight 5 against 16 records (32-bit: 39 against 49), one PMI and
    one overflow per interrupt sample, none coalesced, throttled or unattributed."""
    size, stride, p = 1024, 16, 4
    trace = memwalk_trace(size, stride)
    loads = memwalk_loads(size, stride)
    # the instruction (index into trace) that retires each load, in order
    load_insn = [i for i, (_, nl, _) in enumerate(trace) for _ in range(nl)]
    after_load = {"wl_memwalk+0x%x" % trace[i + 1][0] for i in range(len(trace) - 1)
                  if trace[i][1]}
    out = record(nb, "--throttle 100 --ring 3 -e front_end_event:nbogus:u -e front_end_event:nbogus:u:pebs "
                 "-e uop_type:tagloads -c %d memwalk %d %d" % (p, size, stride))
    m = SKID.search(out)
    assert m, out
    nq, zero, mean = int(m.group(2)), int(m.group(3)), int(m.group(4))
    n_irq, n_pebs = len(loads) // (p + 1), len(loads) // p
    assert len(loads) == {64: 66, 32: 196}[kernel_bits(FIRMWARE)]      # the count by hand
    assert (nq, int(m.group(7))) == (n_irq, n_pebs), out
    s = SAMPLES.search(out)
    assert s and (int(s.group(1)), int(s.group(3))) == (n_irq + n_pebs, 0), out
    assert "(0 dropped: buffer full, 0 nested, 0 unattributed)" in out, out
    assert re.search(r"^throttled: 0$", out, re.M), out
    pmi = re.search(r"^PMIs: (\d+) .*, overflows (\d+), polls 0, late 0$", out, re.M)
    assert pmi and (int(pmi.group(1)), int(pmi.group(2))) == (n_irq, n_irq), out
    assert re.search(r"^events: #0 %d counted, %d in its samples$" % (len(loads), n_irq * (p + 1)),
                     out, re.M), out
    assert re.search(r"^events: #1 %d counted, %d in its samples$" % (len(loads), n_pebs * p),
                     out, re.M), out
    pebs_ips = script_ips(nb, "front_end_event:pebs")
    assert pebs_ips == [loads[k * p - 1] for k in range(1, n_pebs + 1)]
    assert int(m.group(8)) == len(set(pebs_ips))
    irq_samples = script_samples(nb, "front_end_event")
    assert [w for w, _ in irq_samples] == [p + 1] * n_irq, irq_samples
    irq = [sym for _, sym in irq_samples]
    # each one at the instruction after the one that retired load k(P+1)
    assert irq == ["wl_memwalk+0x%x" % trace[load_insn[k * (p + 1) - 1] + 1][0]
                   for k in range(1, n_irq + 1)], irq
    assert nq == len(irq) > 0 and mean > 0, (out, irq)
    inside = [s for s in irq if s.startswith("wl_memwalk+0x")]
    assert inside and set(inside) <= after_load, (irq, sorted(after_load))   # never the load itself
    at_pebs = [s for s in inside if int(s.split("+0x")[1], 16) in set(pebs_ips)]
    assert zero == len(at_pebs), (out, irq)
    if kernel_bits(FIRMWARE) == 64:
        assert zero == 0          # the x86-64 walk has no two loads in a row


def test_throttle_leaves_the_pebs_period(nb):
    """Throttling doubles the periods of the interrupt-sampled counters (docs/guide/sampling.md);
    a PEBS counter is reloaded by the assist from the DS area's counter reset (PMU reference
    5.2), which the throttle does not write, so its records stay one every P events and each
    weighs P. The throttle doubled the PEBS request's period too: `record` said "period 8
    (raised by throttling)" for it, and its records weighed 8 each (1552 events in its samples
    of 388 counted). At period 2 the PMI handler takes most of the LP's time (the model
    weighs it against the stepped instructions' own time, prof/backend.h clock), so the
    default throttle (25 %) acts as on a Pentium 4."""
    size, stride, p = 4096, 16, 2
    loads = memwalk_loads(size, stride)
    out = record(nb, "--ring 3 -e front_end_event:nbogus:u -e front_end_event:nbogus:u:pebs "
                 "-e uop_type:tagloads -c %d memwalk %d %d" % (p, size, stride))
    throttled = int(re.search(r"^throttled: (\d+)", out, re.M).group(1))
    assert throttled >= 1, out
    raised = re.search(r"^  #0 front_end_event:NBOGUS:u:period=%d .*: period (\d+) \(raised by "
                       r"throttling\)$" % p, out, re.M)
    assert raised and int(raised.group(1)) == p << throttled, out
    assert re.search(r"^  #1 front_end_event:NBOGUS:u:pebs:period=%d .*: period %d$" % (p, p),
                     out, re.M), out
    m = PEBS.search(out)
    assert m and int(m.group(1)) == len(loads) // p and int(m.group(4)) == 0, out
    assert re.search(r"^events: #1 %d counted, %d in its samples$" % (len(loads), len(loads) // p * p),
                     out, re.M), out
    w = [weight for weight, _ in script_samples(nb, "front_end_event:pebs")]
    assert w == [p] * (len(loads) // p), w
    # the interrupt twin's weights add up to its count, less the events after its last sample
    e = re.search(r"^events: #0 (\d+) counted, (\d+) in its samples$", out, re.M)
    assert e and int(e.group(1)) == len(loads), out
    assert 0 <= int(e.group(1)) - int(e.group(2)) <= (p << throttled), out


def test_ds_layout_follows_dtes64_and_the_mode(nb):
    """PMU reference 5.1/5.2: with DTES64 (0F_04) or in IA-32e mode the DS area has the 64-bit
    layout (144-byte records); a part without DTES64 (0F_02) outside IA-32e mode, i.e. under
    the 32-bit kernel, has the 32-bit one: 40-byte records, the absolute maximum one byte past
    the last whole record. A record run on that part decodes its 40-byte records: the IPs are
    the tagged loads, the count the records written."""
    size, stride, p, slots = 1024, 16, 5, 8
    loads = memwalk_loads(size, stride)
    area = re.compile(r"^pebs: LP0 IA32_DS_AREA <- [0-9A-F]+H: (\d+) record slots of (\d+) bytes "
                      r"from ([0-9A-F]+)H, interrupt threshold ([0-9A-F]+)H", re.M)
    legacy = 40 if kernel_bits(FIRMWARE) == 32 else 144
    try:
        for sig, size_rec in (("0F_04 ht", 144), ("0F_02:9 ht", legacy)):
            assert "error" not in nb.cmd("pmu backend model " + sig)
            out = nb.cmd("pebs area %d %d" % (slots, p))
            m = area.search(out)
            assert m and (int(m.group(1)), int(m.group(2))) == (slots, size_rec), (sig, out)
            base, thr = int(m.group(3), 16), int(m.group(4), 16)
            assert thr - base == (slots - below(slots)) * size_rec, (sig, out)
            show = nb.cmd("pebs show")
            mx = re.search(r"maximum ([0-9A-F]+)H", show)
            assert mx and int(mx.group(1), 16) - base == slots * size_rec + (size_rec == 40), show
            assert "error" not in nb.cmd("pebs off")
            # ring 3 :u: the walk's own loads (the kernel's tagged loads count under OS)
            out = record(nb, "--throttle 100 --pebs-buffer %d --ring 3 -e front_end_event:nbogus:u:pebs "
                         "-e uop_type:tagloads -c %d memwalk %d %d" % (slots, p, size, stride))
            m = PEBS.search(out)
            assert m and int(m.group(1)) == len(loads) // p and int(m.group(4)) == 0, (sig, out)
            assert script_ips(nb, "front_end_event:pebs") == \
                [loads[k * p - 1] for k in range(1, len(loads) // p + 1)], sig
    finally:
        nb.cmd("pmu backend model 0F_04 ht")


def test_pebs_refused_for_other_events(nb):
    out = nb.cmd("record -e instr_retired:pebs -c 100 loop 10", timeout=60)
    assert "PEBS works only with front_end_event, execution_event and replay_event" in out
    out = nb.cmd("record --pebs-buffer 8 -e instr_retired -c 1999 loop 10", timeout=60)
    assert "need a PEBS event" in out


def test_lp1_pebs_written_from_lp0_is_oth_thr(nb):
    """SDM 18.16.3: LP0 programs the PMU, so LP1's PEBS is OTH_THR (bit 26), on counter 17."""
    size, stride, p = 2048, 16, 7
    loads = memwalk_loads(size, stride)
    nb.cmd("pmu backend model 0F_04 ht")
    nb.cmd("msr trace on")
    out = nb.cmd("record --throttle 100 --ring 3 --cpu 1 -e front_end_event:nbogus:u:pebs "
                 "-c %d memwalk %d %d" % (p, size, stride), timeout=180)
    nb.cmd("msr trace off")
    assert "error" not in out, out
    assert re.search(r"wrmsr 3F1H <- 05000000H", out), out        # OTH_THR, and bit 24
    assert not re.search(r"wrmsr 3F1H <- 0*3000000H \(MSR_PEBS_ENABLE\)$", out, re.M), out
    # LP1's own IA32_DS_AREA, written on LP1 before counter 17 starts and cleared on LP1
    # only after it stopped: an assist never finds DS_AREA 0
    lines = [l for l in out.splitlines() if l.startswith("wrmsr ")]
    ds1 = [i for i, l in enumerate(lines) if l.startswith("wrmsr 600H") and l.endswith(" on LP1")]
    load = [i for i in ds1 if not lines[i].startswith("wrmsr 600H <- 00000000H")]
    clear = [i for i in ds1 if lines[i].startswith("wrmsr 600H <- 00000000H")]
    cccr5 = [(i, int(v, 16)) for i, l in enumerate(lines)
             for v in re.findall(r"^wrmsr 371H <- ([0-9A-F]+)H", l)]
    started = [i for i, v in cccr5 if v & (1 << 12)]
    stopped = [i for i, v in cccr5 if v == 0]
    assert load and started and min(load) < min(started), lines
    assert clear and stopped and max(clear) > max(stopped), lines
    assert "counter 17 (MSR_IQ_COUNTER5)" in out
    m = PEBS.search(out)
    assert int(m.group(1)) == len(loads) // p
    # TAGLOADS:TAGSTORES by default: the push of %rbp (and the 32-bit walk's
    # pass count, read and written back) are tagged stores too
    tagged = memwalk_tagged(size, stride)
    assert len(tagged) > len(loads)
    want = [tagged[k * p - 1] for k in range(1, len(tagged) // p + 1)]
    got = []
    for block in nb.cmd("script", timeout=60).split("\n\n"):
        lines = [l for l in block.strip().split("\n") if l.strip()]
        if lines and "front_end_event" in lines[0]:
            assert " 0/1 " in lines[0], lines[0]         # LP1's store
            got.append(int(lines[1].split()[1].split("+0x")[1], 16))
    assert got == want


def test_pebs_refused_where_unavailable(nb):
    """PMU reference 5.1: IA32_MISC_ENABLE bit 12 set -> no PEBS, refused before anything runs."""
    assert "error" not in nb.cmd("pmu backend model 0F_04 ht nopebs")
    out = nb.cmd("record -e front_end_event:nbogus:u:pebs -c 5 memwalk 1024 16", timeout=60)
    assert "error: record: PEBS is not available: IA32_MISC_ENABLE bit 12 (PEBS unavailable) " \
           "is set" in out, out
    assert "samples:" not in out
    assert "error" not in nb.cmd("pmu backend model 0F_04 ht")
    out = record(nb, "--ring 3 -e front_end_event:nbogus:u:pebs -e uop_type:tagloads -c 5 "
                 "memwalk 1024 16")
    assert int(PEBS.search(out).group(1)) == len(memwalk_loads(1024, 16)) // 5


def test_refused_record_keeps_the_last_recording(nb):
    """A record refused for PEBS (a part without it) reset the sample stores before the
    refusal, so the last recording was gone ("no recording yet"). It is checked first now."""
    out = nb.cmd("record -c 1000 loop 20000", timeout=60)
    assert "error" not in out, out
    before = nb.cmd("report")
    assert "no recording" not in before and "wl_loop" in before, before
    assert "error" not in nb.cmd("pmu backend model 0F_04 ht nopebs")
    out = nb.cmd("record -e front_end_event:nbogus:pebs -c 5 memwalk 1024 16", timeout=60)
    assert "error: record: PEBS is not available" in out, out
    assert nb.cmd("report") == before
    assert "error" not in nb.cmd("pmu backend model 0F_04 ht")


def test_replay_metric_counts_with_its_tagging(nb):
    """PMU reference 5.5: 1stL_cache_load_miss_retired = replay_event NBOGUS with PEBS_ENABLE
    01000001H and MATRIX_VERT 1H; in the model its input is synthetic replay_event NBOGUS."""
    out = nb.cmd("events 1stL_cache_load_miss_retired")
    assert "PEBS_ENABLE 01000001H, MATRIX_VERT 1H" in out, out
    nb.cmd("msr trace on")
    out = nb.cmd("stat --ring 3 -e 1stL_cache_load_miss_retired:u synthetic replay_event:NBOGUS 7",
                 timeout=60)
    nb.cmd("msr trace off")
    assert "error" not in out, out
    # the memory model may feed the metric from the workload's own missing loads too
    # (prof/backend/memfeed.c; under the 32-bit kernel at ring 3 it feeds none), the same on every
    # run; the synthetic input adds one per int 0x81
    row = r"^\s+(\d+)\s+1stL_cache_load_miss_retired:NBOGUS:u\s.*\[(?:memory model \+ )?synthetic\]"
    seven = int(re.search(row, out, re.M).group(1))
    out14 = nb.cmd("stat --ring 3 -e 1stL_cache_load_miss_retired:u synthetic replay_event:NBOGUS 14",
                   timeout=60)
    assert int(re.search(row, out14, re.M).group(1)) - seven == 7, (out, out14)
    assert "wrmsr 3F1H <- 01000001H (MSR_PEBS_ENABLE)" in out
    assert "wrmsr 3F2H <- 00000001H (MSR_PEBS_MATRIX_VERT)" in out
    out = nb.cmd("explain 3F1H=01000400H 3F2H=2H")
    assert "replay metric split_load_retired | split_store_retired" in out, out
    assert "as for DTLB_store_miss_retired | split_store_retired" in out, out
    out = nb.cmd("stat -e split_store_retired -e store_port_replay:split_st loop 10", timeout=60)
    assert "upstream ESCR is taken" in out, out


def test_instr_retired_tag_bits_follow_front_end_tagging(nb):
    """PMU reference 5.6: instr_retired NBOGUSTAG counts the instructions the front end tagged:
    with uop_type TAGLOADS, memwalk's instructions that load (x86-64: the movzbl per stride, pop,
    ret; 32-bit: also the stride, size and pass-count reads); the rest NBOGUSNTAG."""
    size, stride = 1024, 16
    trace = memwalk_trace(size, stride)
    n = len([off for off, nl, _ in trace if nl])     # instructions with a load
    total = 6 + (3 + 5 * (size // stride))          # workloads.S: 6 + passes * (3 + 5M)
    got = {}
    for mask in ("nbogustag", "nbogusntag"):     # one CRU ESCR per LP: one setting per run
        out = nb.cmd("stat --ring 3 -e uop_type:tagloads -e instr_retired:%s:u memwalk %d %d"
                     % (mask, size, stride), timeout=60)
        assert "error" not in out, out
        got.update((name, int(v)) for v, name in
                   re.findall(r"^\s+(\d+)\s+(instr_retired:\w+):u\s", out, re.M))
    # the exit trampoline's int 0x80 (CPL 3) loads nothing: one more untagged instruction
    assert got == {"instr_retired:NBOGUSTAG": n, "instr_retired:NBOGUSNTAG": total - n + 1}, got


def test_assist_without_ds_area_is_a_machine_fault(nb):
    """SDM: PEBS needs a valid DS save area; an assist that finds IA32_DS_AREA = 0 faults
    inside the microcode on hardware, so the model reports a machine fault, not a silently
    dropped record. Counter 16 with front_end_event NBOGUS (CRU_ESCR2, select 5) and
    uop_type TAGLOADS (RAT_ESCR0) written by hand, PEBS on, no DS area."""
    assert "error" not in nb.cmd("pmu backend model 0F_04 ht")
    for line in ("pebs off", "msr write 3CCH 1000020CH", "msr write 3BCH 0400040CH",
                 "msr write 310H FFFFFFFFFEH", "msr write 3F1H 03000000H",
                 "msr write 370H 0003B000H"):
        assert "error" not in nb.cmd(line), line
    try:
        out = nb.cmd("run --feed memwalk 1024 16", timeout=60)
    finally:
        for line in ("msr write 370H 0", "msr write 3F1H 0", "msr write 3CCH 0",
                     "msr write 3BCH 0"):
            nb.cmd(line)
    assert out.strip().startswith("error: run: machine fault: the PEBS assist of LP0 could not "
                                  "reach its DS save area or buffer at 0H (IA32_DS_AREA 0)"), out
    assert "error" not in nb.cmd("run --feed memwalk 1024 16", timeout=60)    # reported once


def test_stat_refuses_untagged_front_end_event(nb):
    """PMU reference 5.6: front_end_event counts only what uop_type tagged; stat alone would count
    a silent 0, so it is refused with the reason (record adds the tagger itself); with the
    tagger, stat counts memwalk's tagged loads."""
    out = nb.cmd("stat -e front_end_event:nbogus memwalk 1024 16", timeout=60)
    assert out.strip() == ("error: stat: #1 front_end_event counts only the uops the front end "
                           "tags (PMU reference 5.6), and no uop_type request tags for its LP: it "
                           "would count 0; add -e uop_type:TAGLOADS:TAGSTORES"), out
    out = nb.cmd("stat -e execution_event:nbogus0 fpmix 1", timeout=60)
    assert "nothing tags with bit 0; add one, e.g. -e x87_FP_uop:TAG0" in out, out
    out = nb.cmd("stat --ring 3 -e front_end_event:nbogus:u -e uop_type:tagloads memwalk 1024 16",
                 timeout=60)
    m = re.search(r"^\s+(\d+)\s+front_end_event:NBOGUS", out, re.M)
    assert m and int(m.group(1)) == len(memwalk_loads(1024, 16)), out
