"""test_exectag.py - execution tagging and the FIRM events over the fpmix workload.

Expected numbers come from the documents, not from running the code:
- arch/x86/64/workloads.S (arch/x86/32/workloads.S for the 32-bit kernel): wl_fpmix's
  listing, read here from `objdump -d` of the kernel ELF. Each instruction is
  put in its class by its mnemonic and operands as the SDM names them (x87
  arithmetic such as fadd; MMX integer instructions on %mm or %xmm registers;
  ...ps / ...pd / ...ss / ...sd SSE/SSE2 arithmetic), independently of
  arch/x86/insn_simd.c; moves, x87 loads/stores, EMMS, FNINIT and LDMXCSR are
  no class. The loop body is the code from the jnz's target to the jnz.
- PMU reference 5.7: an upstream FIRM ESCR with Tag enable and tag value bit n
  marks its µops, and execution_event NBOGUSn counts the marked ones at
  retirement; a tag bit nobody sets counts 0.
- PMU reference 5.2: a PEBS record holds the linear IP of the instruction that
  caused the event, and the counter is reloaded from -period after each
  record, so with period P the k-th record is the (kP)-th tagged µop.
"""

import re
import subprocess

import pytest

import conftest
from nbproflib import qemu  # tools/, put on the path by conftest.py

BOOT = {"smp_ht": True}
EVENTS = {"x87": "x87_FP_uop", "mmx64": "64bit_MMX_uop", "mmx128": "128bit_MMX_uop",
          "psp": "packed_SP_uop", "pdp": "packed_DP_uop", "ssp": "scalar_SP_uop",
          "sdp": "scalar_DP_uop"}
X87_NOT_ARITH = ("fld", "fild", "fst", "fist", "fninit", "finit", "fxch", "fnst", "fwait", "ffree")
PEBS = re.compile(r"^PEBS: (\d+) records drained", re.M)


def insn_class(mnemonic, operands):
    """The FIRM class of one instruction, by the SDM's naming, or None."""
    if mnemonic.startswith("f"):
        return None if mnemonic.startswith(X87_NOT_ARITH) else "x87"
    if mnemonic.startswith("mov") or mnemonic in ("emms", "ldmxcsr", "stmxcsr"):
        return None
    if mnemonic.startswith("p"):
        return "mmx128" if "%xmm" in operands else "mmx64" if "%mm" in operands else None
    for suffix, cls in (("ps", "psp"), ("pd", "pdp"), ("ss", "ssp"), ("sd", "sdp")):
        if mnemonic.endswith(suffix):
            return cls
    return None


def fpmix_listing(firmware, classify):
    """wl_fpmix from objdump: (loop body, code outside it), each a list of (offset, class)."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", qemu.kernel_elf(firmware)],
                         check=True, capture_output=True, text=True).stdout
    m = re.search(r"^([0-9a-f]+) <wl_fpmix>:\n(.*?)\n\n", out, re.M | re.S)
    assert m, "no wl_fpmix in the kernel ELF"
    start = int(m.group(1), 16)
    insns, target, jnz = [], None, None
    for line in m.group(2).splitlines():
        addr, _, text = line.partition(":")
        words = text.split(None, 1)
        if not words:
            continue
        off = int(addr, 16) - start
        if words[0] in ("jne", "jnz"):
            target, jnz = int(words[1].split()[0], 16) - start, off
        insns.append((off, classify(words[0], words[1] if len(words) > 1 else "")))
    body = [i for i in insns if target <= i[0] <= jnz]
    return body, [i for i in insns if not target <= i[0] <= jnz]


def per_class(insns):
    counts = dict.fromkeys(EVENTS, 0)
    for _, cls in insns:
        if cls:
            counts[cls] += 1
    return counts


@pytest.fixture(scope="module")
def mix(firmware):
    body, rest = fpmix_listing(firmware, insn_class)
    per_it = per_class(body)
    # the documented mix (workload/workload.c's help text) is what the listing holds
    assert per_it == {"x87": 1, "mmx64": 2, "mmx128": 3, "psp": 4, "pdp": 5, "ssp": 6, "sdp": 7}
    assert per_class(rest) == dict.fromkeys(EVENTS, 0)
    return body, rest


count = conftest.line_count
cmd_ok = conftest.cmd_ok


@pytest.mark.parametrize("ring", [0, 3])
def test_fpmix_retires_its_listing(nb, mix, ring):
    body, rest = mix
    n = 13
    out = cmd_ok(nb, "run --ring %d --step fpmix %d" % (ring, n))
    assert re.search(r"^instructions: %d \(CPL %d\)$" % (len(rest) + n * len(body), ring), out, re.M), out
    assert re.search(r"^conditional: taken %d, not taken 1$" % (n - 1), out, re.M), out
    assert re.search(r"^returned: %d$" % n, out, re.M), out


@pytest.mark.parametrize("ring", [0, 3])
@pytest.mark.parametrize("cls", sorted(EVENTS))
def test_firm_event_counts_its_class(nb, mix, ring, cls):
    """Each FIRM event counts exactly N x its class's instructions per iteration."""
    n = 17
    per_it = per_class(mix[0])
    out = cmd_ok(nb, "stat --ring %d -e %s fpmix %d" % (ring, EVENTS[cls], n))
    assert count(out, EVENTS[cls] + ":ALL") == n * per_it[cls]
    assert "[real: stepped]" in out


@pytest.mark.parametrize("ring", [0, 3])
@pytest.mark.parametrize("cls,bit,spec", [("x87", 0, "x87_FP_uop:TAG0"),
                                          ("sdp", 2, "scalar_DP_uop:ALL:TAG2"),
                                          ("mmx128", 3, "128bit_MMX_uop:TAG3")])
def test_execution_event_counts_the_tagged_uops(nb, mix, ring, cls, bit, spec):
    """PMU reference 5.7: NBOGUSn counts the µops tagged with bit n; a slot no request tags would
    count a silent 0, so stat refuses it with the reason."""
    n = 11
    want = n * per_class(mix[0])[cls]
    out = cmd_ok(nb, "stat --ring %d -e %s -e execution_event:NBOGUS%d fpmix %d" % (ring, spec, bit, n))
    assert count(out, EVENTS[cls] + ":ALL:TAG%d" % bit) == want
    assert count(out, "execution_event:NBOGUS%d" % bit) == want
    other = (bit + 1) % 4
    out = nb.cmd("stat --ring %d -e %s -e execution_event:NBOGUS%d fpmix %d" % (ring, spec, other, n))
    assert out.strip() == ("error: stat: execution_event counts only the uops an upstream FIRM "
                           "event tags (PMU reference 5.7): nothing tags with bit %d; add one, "
                           "e.g. -e x87_FP_uop:TAG%d" % (other, other)), out


def pebs_offsets(nb):
    """wl_fpmix offsets of the PEBS samples in `script`, in order."""
    offs = []
    for block in nb.cmd("script", timeout=60).split("\n\n"):
        lines = [l for l in block.strip().split("\n") if l.strip()]
        if not lines or "execution_event:pebs" not in lines[0]:
            continue
        sym = lines[1].split()[1]
        assert sym.startswith("wl_fpmix+0x"), block
        offs.append(int(sym.split("+0x")[1], 16))
    return offs


@pytest.mark.parametrize("ring", [0, 3])
@pytest.mark.parametrize("cls,bit,period,n", [("x87", 0, 3, 10), ("sdp", 1, 5, 9),
                                              ("psp", 3, 4, 7)])
def test_pebs_records_are_the_tagged_instructions(nb, mix, ring, cls, bit, period, n):
    """count / period PEBS records, each at the tagged instruction's own address."""
    body = mix[0]
    tagged = [off for off, c in body if c == cls] * n
    out = cmd_ok(nb, "record --throttle 100 --ring %d -e execution_event:NBOGUS%d:pebs -e %s:TAG%d "
                 "-c %d fpmix %d" % (ring, bit, EVENTS[cls], bit, period, n), timeout=180)
    assert int(PEBS.search(out).group(1)) == len(tagged) // period
    # the upstream event tags and is counted, but takes no samples of its own
    assert re.search(r"^  #1 %s:ALL:TAG%d\S* counter \d+ \(\S+\): execution tagging \(tag value %XH\), "
                     r"no samples$" % (EVENTS[cls], bit, 1 << bit), out, re.M), out
    assert re.search(r"^samples: %d stored" % (len(tagged) // period), out, re.M), out
    want = [tagged[k * period - 1] for k in range(1, len(tagged) // period + 1)]
    assert pebs_offsets(nb) == want


# ---- x87_SIMD_moves_uop: ALLP2 load µops, ALLP0 store and move µops --------------------
#
# PMU reference 4.2 names the two bits; which instructions are such moves is the model's
# reading (arch/x86/insn_simd.h, UNVERIFIED): here, independently, by the SDM's mnemonics:
# FLD/FILD/FBLD and MOV* with a memory source load; FST/FIST/FBSTP, FLD ST(i) and MOV*
# to memory or between registers are stores/moves.

X87_LOADS = ("fld", "fild", "fbld")
X87_STORES = ("fst", "fist", "fbstp")
X87_CONTROL = ("fldcw", "fldenv", "fld1", "fldz", "fldl2", "fldlg", "fldln", "fldpi", "fstcw",
               "fstenv", "fstsw")


def move_class(mnemonic, operands):
    """"load", "store" (or move), or None for one instruction of the listing."""
    src = operands.split(",")[0]
    if mnemonic.startswith(X87_CONTROL):
        return None
    if mnemonic.startswith(X87_LOADS):
        return "load" if "(" in src else "store"
    if mnemonic.startswith(X87_STORES):
        return "store"
    if mnemonic.startswith("mov") and ("%xmm" in operands or "%mm" in operands):
        return "load" if "(" in src else "store"
    return None


@pytest.fixture(scope="module")
def moves(firmware):
    body, rest = fpmix_listing(firmware, move_class)
    per_it = [c for _, c in body if c]
    # the documented moves: two FILD loads and two FSTP ST(0) an iteration
    assert sorted(per_it) == ["load", "load", "store", "store"], body
    return body, rest


@pytest.mark.parametrize("ring", [0, 3])
def test_x87_simd_moves_count_by_mask_bit(nb, moves, ring):
    body, rest = moves
    n = 11
    for bit, kind in (("ALLP2", "load"), ("ALLP0", "store")):
        want = n * sum(1 for _, c in body if c == kind) + sum(1 for _, c in rest if c == kind)
        out = cmd_ok(nb, "stat --ring %d -e x87_SIMD_moves_uop:%s fpmix %d" % (ring, bit, n))
        assert count(out, "x87_SIMD_moves_uop:%s" % bit) == want, out


def test_pebs_on_tagged_simd_loads(nb, moves):
    """Only the load µops are tagged (the ESCR holds ALLP2): records at the two FILDs in turn."""
    body = moves[0]
    n, period = 10, 3
    tagged = [off for off, c in body if c == "load"] * n
    out = cmd_ok(nb, "record --throttle 100 -e execution_event:NBOGUS0:pebs "
                 "-e x87_SIMD_moves_uop:ALLP2:TAG0 -c %d fpmix %d" % (period, n), timeout=180)
    assert int(PEBS.search(out).group(1)) == len(tagged) // period
    assert pebs_offsets(nb) == [tagged[k * period - 1] for k in range(1, len(tagged) // period + 1)]


def test_record_refuses_execution_event_without_its_tag(nb):
    """PMU reference 5.7: NBOGUS1 counts what bit 1 tags; with only TAG0 given it would record
    nothing, so record refuses before anything runs."""
    out = nb.cmd("record -e execution_event:NBOGUS1:pebs -e x87_FP_uop:TAG0 -c 3 fpmix 10").strip()
    assert out == "error: record: execution_event counts only the uops an upstream FIRM event " \
                  "tags (PMU reference 5.7): nothing tags with bit 1; add one, " \
                  "e.g. -e x87_FP_uop:TAG1", out
    out = nb.cmd("record -e execution_event:NBOGUS0:pebs -c 3 fpmix 10").strip()
    assert out.startswith("error: record: execution_event counts only") and "bit 0" in out, out


# ---- MSR_PEBS_ENABLE written from LP1 (PMU reference 5.3) -----------------------------------
#
# Registers by hand, values from the PMU reference's layouts (2.1 ESCR, 2.2 CCCR, 1.2
# addresses): LP t's upstream FIRM_ESCR<t> holds x87_FP_uop (EvSel 04H, ALL = mask bit 15)
# with Tag enable and tag value 1; CRU_ESCR<2+t> execution_event (EvSel 0CH) NBOGUS0; counter
# 16+t (IQ_COUNTER4/5, the PEBS counter of LP t, PMU reference 5.1) preset to -P, its CCCR
# enabled with ESCR select 5 and active thread 11b, no OVF_PMI bit. PMU reference 5.3:
# PEBS_ENABLE bit 25 (MY_THR) means the LP executing the WRMSR, bit 26 (OTH_THR) the other
# one, and each LP reads the bits the same way, relative to itself.

MY_THR, OTH_THR = 1 << 25, 1 << 26
T_BITS = {0: 0xC, 1: 0x3}                 # T0_OS|T0_USR, T1_OS|T1_USR
CCCR_OVF = 1 << 31


def escr(evsel, mask_bit, t, tag=None):
    v = (evsel << 25) | (1 << (9 + mask_bit)) | T_BITS[t]
    if tag is not None:
        v |= 0x10 | (tag << 5)
    return v


def program_lp(nb, t, period):
    writes = [(0x370 + t, 0),                                   # IQ_CCCR4/5 stopped first
              (0x3A4 + t, escr(0x04, 15, t, tag=1)),             # FIRM_ESCR0/1: x87_FP_uop:ALL:TAG0
              (0x3CC + t, escr(0x0C, 0, t)),                     # CRU_ESCR2/3: execution_event:NBOGUS0
              (0x310 + t, (1 << 40) - period),                   # IQ_COUNTER4/5 = -P
              (0x370 + t, (1 << 12) | (5 << 13) | (3 << 16))]    # enable, ESCR select 5, any thread
    for msr, v in writes:
        cmd_ok(nb, "msr write %XH %XH" % (msr, v))


def msr_value(nb, line):
    out = cmd_ok(nb, line)
    m = re.search(r"^MSR \S+ = ([0-9A-F]{16})H", out, re.M)
    assert m, out
    return int(m.group(1), 16)


def pebs_records(nb, lp):
    out = cmd_ok(nb, "pebs show --cpu %d" % lp)
    n = int(re.search(r"^pebs: LP%d (\d+) record\(s\)$" % lp, out, re.M).group(1))
    offs = [int(x, 16) for x in re.findall(r"^  #\d+ IP [0-9a-f]+ wl_fpmix\+0x([0-9a-f]+) ", out, re.M)]
    assert len(offs) == n, out
    return offs


@pytest.mark.parametrize("written,armed", [(MY_THR, 1), (OTH_THR, 0)])
def test_pebs_enable_written_from_lp1(nb, mix, written, armed):
    """MY_THR from LP1 arms T1, OTH_THR from LP1 arms T0; only the armed LP's counter writes
    PEBS records (each at the tagged fadd); both overflow and set OVF."""
    n, period = 10, 3
    fadd = [off for off, c in mix[0] if c == "x87"]
    assert len(fadd) == 1
    cmd_ok(nb, "pmu backend model 0F_04 ht")
    for lp in (0, 1):
        cmd_ok(nb, "pebs area --cpu %d 16 %d" % (lp, period))
        program_lp(nb, lp, period)
    out = cmd_ok(nb, "msr write --cpu 1 3F1H %XH" % written)
    assert re.search(r"^MSR 3F1H <- %016XH .* on LP1$" % written, out, re.M), out
    # read back relative to each reader: LP1 sees what it wrote, LP0 the other bit
    assert msr_value(nb, "msr read --cpu 1 3F1H") == written
    assert msr_value(nb, "msr read 3F1H") == (MY_THR | OTH_THR) ^ written
    for lp in (0, 1):
        cmd_ok(nb, "run --cpu %d --feed fpmix %d" % (lp, n))
    assert pebs_records(nb, armed) == fadd * (n // period)
    assert pebs_records(nb, 1 - armed) == []
    assert msr_value(nb, "msr read %XH" % (0x370 + 1 - armed)) & CCCR_OVF
    # a PEBS overflow is an overflow too: OVF set (the manual does not say it is not;
    # the model takes the reading that is harder on software)
    assert msr_value(nb, "msr read %XH" % (0x370 + armed)) & CCCR_OVF
    cmd_ok(nb, "msr write --cpu 1 3F1H 0")
    for lp in (0, 1):
        cmd_ok(nb, "msr write %XH 0" % (0x370 + lp))
        cmd_ok(nb, "pebs off --cpu %d" % lp)


def test_pebs_command_refuses_bad_input(nb):
    """One error line and nothing set up: no area yet, a slot count out of 2..128, no period."""
    cmd_ok(nb, "pebs off --cpu 1")
    for line, text in [("pebs show --cpu 1", "error: pebs: LP1 has no DS area (see 'pebs area')"),
                       ("pebs area --cpu 1 1 3", "error: pebs: PEBS buffer: 2 to 128 records"),
                       ("pebs area --cpu 1 129 3", "error: bad RECORDS '129'"),
                       ("pebs area --cpu 1 16 0", "error: bad PERIOD '0': must be 1 or more"),
                       ("pebs area --cpu 2 16 3", "error: --cpu wants 0 or 1, not '2'"),
                       ("pebs peek", "error: unknown pebs operation 'peek'")]:
        out = nb.cmd(line).strip()
        assert out.startswith(text) and len(out.splitlines()) == 1, (line, out)
    assert nb.cmd("pebs show --cpu 1").strip().startswith("error: pebs: LP1 has no DS area")
