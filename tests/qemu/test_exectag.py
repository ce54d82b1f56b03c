"""test_exectag.py - execution tagging and the FIRM events over the fpmix workload.

Expected numbers come from the documents, not from running the code:
- arch/x86/workloads.S (workloads32.S for the 32-bit kernel): wl_fpmix's
  listing, read here from `objdump -d` of the kernel ELF. Each instruction is
  put in its class by its mnemonic and operands as the SDM names them (x87
  arithmetic such as fadd; MMX integer instructions on %mm or %xmm registers;
  ...ps / ...pd / ...ss / ...sd SSE/SSE2 arithmetic), independently of
  arch/x86/insn_simd.c; moves, x87 loads/stores, EMMS, FNINIT and LDMXCSR are
  no class. The loop body is the code from the jnz's target to the jnz.
- fact sheet 5.7: an upstream FIRM ESCR with Tag enable and tag value bit n
  marks its µops, and execution_event NBOGUSn counts the marked ones at
  retirement; a tag bit nobody sets counts 0.
- fact sheet 5.2: a PEBS record holds the linear IP of the instruction that
  caused the event, and the counter is reloaded from -period after each
  record, so with period P the k-th record is the (kP)-th tagged µop.
"""

import re
import subprocess

import pytest
import qemu  # tools/, put on the path by conftest.py

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


def fpmix(firmware):
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
        insns.append((off, insn_class(words[0], words[1] if len(words) > 1 else "")))
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
    body, rest = fpmix(firmware)
    per_it = per_class(body)
    # the documented mix (prof/workload.c's help text) is what the listing holds
    assert per_it == {"x87": 1, "mmx64": 2, "mmx128": 3, "psp": 4, "pdp": 5, "ssp": 6, "sdp": 7}
    assert per_class(rest) == dict.fromkeys(EVENTS, 0)
    return body, rest


def count(out, spec_start):
    m = re.search(r"^ +(\d+)  %s\S*" % re.escape(spec_start), out, re.M)
    assert m, out
    return int(m.group(1))


def cmd_ok(nb, line, timeout=120):
    out = nb.cmd(line, timeout=timeout)
    assert "error" not in out, out
    return out


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
    """Fact sheet 5.7: NBOGUSn counts the µops tagged with bit n, and an unused bit counts 0."""
    n = 11
    want = n * per_class(mix[0])[cls]
    out = cmd_ok(nb, "stat --ring %d -e %s -e execution_event:NBOGUS%d fpmix %d" % (ring, spec, bit, n))
    assert count(out, EVENTS[cls] + ":ALL:TAG%d" % bit) == want
    assert count(out, "execution_event:NBOGUS%d" % bit) == want
    other = (bit + 1) % 4
    out = cmd_ok(nb, "stat --ring %d -e %s -e execution_event:NBOGUS%d fpmix %d" % (ring, spec, other, n))
    assert count(out, EVENTS[cls] + ":ALL:TAG%d" % bit) == want
    assert count(out, "execution_event:NBOGUS%d" % other) == 0


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
    want = [tagged[k * period - 1] for k in range(1, len(tagged) // period + 1)]
    assert pebs_offsets(nb) == want
