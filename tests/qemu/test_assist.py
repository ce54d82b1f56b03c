"""test_assist.py - x87_assist and SSE_input_assist over the fpassist workload.

Expected numbers come from the documents, not from running the code:
- arch/x86/fpassist_body.h and wl_fpassist (arch/x86/64/workloads.S, 32/ for the
  32-bit kernel): per iteration two x87 instructions on a denormal memory operand
  (fadds of 00000001H, fmull of the double 1) and two on normal values (fld1, fmuls
  1.0), no result that underflows or overflows and a balanced stack; SSE/SSE2:
  addss and addps of { denormal, 0, 0, 0 } (1 element each), addps of four
  denormals (4), addsd and addpd of { denormal, 0 } (1 each), and four mul*s of
  1.0 and zeros. Zero is no denormal (SDM Vol. 1 4.8.3.2, Table 4-3). Before the
  loop (FPASSIST_EDGES), once each: FSCALE of 1.0 by -20000 (2^-20000 is below the
  extended format's smallest denormal 2^-16445, SDM Vol. 1 Table 4-2: underflow to
  0), by +20000 (above its largest 2^16384: overflow), FADD with ST(1) empty (stack
  underflow) and a ninth FLD1 (stack overflow, SDM Vol. 1 8.5.1.1).
- SDM Vol. 1 10.2.3.4: with MXCSR.DAZ set, denormal source operands are taken
  as zeros - no assist; x87 has no such mode.
- pmu/model/p4_assist.c: x87_assist counts once per instruction, SSE_input_assist
  once per denormal source element; each assist adds 200 clockticks.
"""

import re

import pytest

import conftest

X87_PER_IT = 2          # fadds, fmull on a denormal (PREA)
SSE_PER_IT = 1 + 1 + 4 + 1 + 1
EDGES = 4               # POAU, POAO, FPSU, FPSO once each, before the loop
ASSIST_CLOCKS = 200


count = conftest.line_count
cmd_ok = conftest.cmd_ok


@pytest.mark.parametrize("ring", [0, 3])
def test_fpassist_retires_18n_plus_45(nb, ring):
    n = 9
    out = cmd_ok(nb, "run --ring %d --step fpassist %d" % (ring, n))
    assert re.search(r"^instructions: %d \(CPL %d\)$" % (18 * n + 45, ring), out, re.M), out
    assert re.search(r"^conditional: taken %d, not taken 1$" % (n - 1), out, re.M), out
    assert re.search(r"^returned: %d$" % n, out, re.M), out


@pytest.mark.parametrize("ring", [0, 3])
def test_assists_count_the_denormal_operations_exactly(nb, ring):
    n = 13
    out = cmd_ok(nb, "stat --ring %d -e x87_assist -e SSE_input_assist fpassist %d" % (ring, n))
    assert count(out, "x87_assist:FPSU:FPSO:POAO:POAU:PREA") == X87_PER_IT * n + EDGES
    assert count(out, "SSE_input_assist:ALL") == SSE_PER_IT * n
    assert out.count("[real: stepped]") == 2, out
    # each mask bit alone: the loop's are denormal inputs, the others once each before it
    for bit, want in (("PREA", X87_PER_IT * n), ("POAU", 1), ("POAO", 1), ("FPSU", 1),
                      ("FPSO", 1)):
        out = cmd_ok(nb, "stat --ring %d -e x87_assist:%s fpassist %d" % (ring, bit, n))
        assert count(out, "x87_assist:%s" % bit) == want, (bit, out)


def test_daz_takes_the_sse_assists_away_and_their_clockticks(nb):
    """MXCSR.DAZ (ldmxcsr 1FC0H): no SSE assist; x87 is unaffected. The runs differ in
    nothing else, so the workload's clockticks differ by exactly 200 per SSE assist."""
    n = 10
    line = "stat -e x87_assist -e SSE_input_assist -e global_power_events fpassist %d" % n
    ieee = cmd_ok(nb, line)
    daz = cmd_ok(nb, line + " daz")
    assert count(daz, "SSE_input_assist:ALL") == 0
    assert count(daz, "x87_assist:FPSU:FPSO:POAO:POAU:PREA") == X87_PER_IT * n + EDGES
    assert count(ieee, "SSE_input_assist:ALL") == SSE_PER_IT * n
    # the workload's own clockticks (the counting window's kernel code may differ by a
    # rounding of the core model's sixths between two runs)
    clk = [int(re.search(r"^backend: model .* (\d+) clockticks from the cost model", o, re.M).group(1))
           for o in (ieee, daz)]
    assert clk[0] - clk[1] == ASSIST_CLOCKS * SSE_PER_IT * n
    assert count(ieee, "global_power_events:RUNNING") - count(daz, "global_power_events:RUNNING") \
        in range(clk[0] - clk[1] - 2, clk[0] - clk[1] + 3)


def test_zero_operands_need_no_assist(nb):
    """fpmix's x87 and SSE arithmetic runs on zeros and small integers: no assist."""
    out = cmd_ok(nb, "stat -e x87_assist -e SSE_input_assist fpmix 20")
    assert count(out, "x87_assist:FPSU:FPSO:POAO:POAU:PREA") == 0
    assert count(out, "SSE_input_assist:ALL") == 0
