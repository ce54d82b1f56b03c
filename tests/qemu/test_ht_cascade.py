"""test_ht_cascade.py - the manual's cross-thread cascading scenarios, live.

Machine: one Hyper-Threaded core (threads=2), signature 0F_04 (extended
cascading present, no cascade-PMI erratum: SDM 18.15.5.7, PMU reference 2.3).
Expectations come from the SDM and the PMU reference:
  loop N        retires 3N + 6 instructions (arch/x86/64/workloads.S)
  synthetic S N delivers N occurrences of S at the workload's CPL and LP
  cascade       a started counter counts from the event after its source's
                overflow; a source preset to -N overflows on its N-th event
                (Example 18-1, PMU reference 2.2)
  Table 18-65   bit 11 of IQ_CCCR0/3/4/5 = CASCNT4INTO0 (16 starts 12),
                CASCNT5INTO3 (17 starts 15), CASCNT5INTO4 (17 starts 16),
                CASCNT4INTO5 (16 starts 17); reserved on 0F_00/0F_01
  Example 18-2  instr_retired reaches counters 12, 13, 16 only through
                CRU_ESCR0 and 14, 15, 17 only through CRU_ESCR1; the
                manual's own values are inconsistent (PMU reference 2.3), the
                working plan is 16 (LP0, CRU_ESCR0) cascading into 17 (LP1,
                CRU_ESCR1) with CASCNT4INTO5
"""

import re

import pytest

BOOT = {"smp_ht": True}

ROW = re.compile(r"^\s*(\d+)\s+(\S+)\s+counter (\d+) \((\S+)\) ESCR (\S+) (.*)$", re.M)


def loop_instr(n):
    return 3 * n + 6


def stat(nb, args):
    out = nb.cmd("stat " + args, timeout=180)
    assert "error" not in out, out
    return [(int(m.group(1)), m.group(2), int(m.group(3)), m.group(5), m.group(6))
            for m in ROW.finditer(out)], out


def msr(nb, addr):
    m = re.search(r"= ([0-9A-F]+)H", nb.cmd("msr read %s" % addr))
    assert m
    return int(m.group(1), 16)


@pytest.fixture(autouse=True)
def ht_model(nb):
    assert "backend: model" in nb.cmd("pmu backend model 0F_04 ht")
    nb.cmd("pmu pmi fixed")
    nb.cmd("msr trace off")


# ---- Example 18-2: LP1's instructions after LP0's first 4096 ----------------------------

EX_18_2 = "-e instr_retired:t1 --after 4096:instr_retired:t0"
# The same counted at ring 3 only (:u), both loops at ring 3: the kernel's own code
# in the counting window counts under OS (as on a real P4), and how much of it each
# LP retires before or after the start depends on the timing of the two LPs. At
# ring 3 a loop N retires 3N + 6 instructions plus its exit trampoline's int 0x80.
EX_18_2_U = "-e instr_retired:t1:u --after 4096:instr_retired:t0:u --ring 3"
EXIT = 1


def ring3_instr(n):
    return loop_instr(n) + EXIT


@pytest.mark.parametrize("n0,lp1_counted", [(1362, 0), (1363, ring3_instr(100))])
def test_example_18_2_staggered(nb, n0, lp1_counted):
    """LP0 runs first (--stagger), then LP1's loop 100 (306 instructions and its exit).

    loop 1362 retires 4093 instructions at ring 3: counter 16 never overflows
    and LP1 counts nothing; loop 1363 retires 4096: the cascade starts on
    LP0's 4096th instruction (its exit) and all of LP1's later ones count.
    """
    rows, out = stat(nb, "%s --stagger --pair loop %d -- --ring 3 loop 100" % (EX_18_2_U, n0))
    (c0, _, ctr0, escr0, _), (c1, _, ctr1, escr1, rest1) = rows
    assert (ctr0, escr0, ctr1, escr1) == (16, "CRU_ESCR0", 17, "CRU_ESCR1"), out
    assert "CASCNT4INTO5" in rest1 and "[T1]" in rest1
    assert c0 == ring3_instr(n0) and c1 == lp1_counted, out


@pytest.mark.parametrize("period,lp1_counted", [(4099, ring3_instr(100)), (4100, 0)])
def test_example_18_2_starts_exactly_at_the_nth_instruction(nb, period, lp1_counted):
    """loop 1364 retires exactly 4099 at ring 3: period 4099 starts LP1's counter at LP0's last."""
    rows, out = stat(nb, "-e instr_retired:t1:u --after %d:instr_retired:t0:u --ring 3 --stagger "
                         "--pair loop 1364 -- --ring 3 loop 100" % period)
    assert rows[1][0] == lp1_counted, out


def test_example_18_2_together(nb):
    """Both LPs at once: LP1's count is what it retired after LP0's 4096th instruction.

    With 4093 LP0 instructions that is nothing whatever the interleaving;
    with 4099 it is at most LP1's 307.
    """
    rows, out = stat(nb, "%s --pair loop 1362 -- --ring 3 loop 100" % EX_18_2_U)
    assert rows[1][0] == 0 and rows[0][0] == ring3_instr(1362), out
    rows, out = stat(nb, "%s --pair loop 1364 -- --ring 3 loop 100" % EX_18_2_U)
    assert 0 <= rows[1][0] <= ring3_instr(100) and rows[0][0] == ring3_instr(1364), out


def test_example_18_2_trace_shows_the_working_pair(nb):
    assert nb.cmd("msr trace on") == "msr trace: on"
    out = nb.cmd("stat %s --stagger --pair loop 1364 -- loop 100" % EX_18_2, timeout=180)
    nb.cmd("msr trace off")
    writes = dict((int(a, 16), int(v, 16)) for a, v in
                  re.findall(r"^wrmsr ([0-9A-F]+)H <- ([0-9A-F]+)H", out, re.M))
    # LP1's ESCR is the manual's step 2 value: instr_retired NBOGUSNTAG|NBOGUSTAG, T1_OS|T1_USR
    assert writes[0x3B9] == 0x04000603
    assert writes[0x3B8] == 0x0400060C          # LP0's: the same with T0_OS|T0_USR
    cccr5 = [int(v, 16) for v in re.findall(r"^wrmsr 371H <- ([0-9A-F]+)H", out, re.M)]
    assert any(v & (1 << 11) and not v & (1 << 12) and (v >> 13) & 7 == 4 for v in cccr5)
    # counter 16 preset to -4096 in 40 bits (not the manual's FFFFF000H)
    assert "wrmsr 310H <- FFFFFFF000H" in out


def test_example_18_2_printed_values_are_flawed(nb):
    out = nb.cmd("explain 30CH=0 3B8H=04000603H 36CH=04038800H 310H=FFFFF000H "
                 "3CCH=0400060CH 370H=00039000H")
    problems = "\n".join(l for l in out.splitlines() if l.startswith("! "))
    assert "FFFFFFF000H" in problems                     # FFFFF000H is not -4096 in 40 bits
    assert "CRU_ESCR2" in problems and "select 5" in problems
    assert "machine_clear" in out                        # event select 2 on CRU_ESCR2


# ---- the MOB-replay stall scenario ---------------------------------------------------------
#
# "Set up counter B to count MOB replays on thread B; counter A to count
# resource stalls on thread A; set its force overflow bit and the appropriate
# CASCNTxINTOy bit." Cascading never leaves a block (SDM 18.15.5.6):
# MOB_load_replay lives in the BPU block (MOB_ESCR0/1, counters 0-3, PMU
# reference 4.1) and resource_stall in the IQ block (ALF_ESCR0/1, counters 12-17),
# so no counter counting MOB_load_replay can start the stall counter - the
# planner must refuse that. MOB replays reach the IQ block only as retired,
# replay-tagged uops: replay_event (CRU_ESCR2/3, counters 12,13,16 / 14,15,17,
# PMU reference 4.2, 5.5 MOB_load_replay_retired). On LP0's half (PMU reference 3.2)
# replay_event can sit on 12, 13 or 16 and LP1's stall counter on 14, 15 or 17;
# bit-30 links 12->14 and 13->15 exist too, but counters 16/17 are the ones
# the manual names ("CASCNTxINTOy") and the planner tries them first for a
# cascade, so it picks 16 -> 17 with CASCNT4INTO5. Replays and stalls are
# synthetic here (no source in QEMU): `synthetic replay_event:NBOGUS N` stands
# for N tagged MOB replays retired.

# FORCE_OVF with its PMI counts at :u only (F3: at CPL 0 the handler's own events would
# overflow the counter again after every reload, endless PMIs on a real P4), so both
# workloads run at ring 3.
MOB = "--ring 3 -e resource_stall:t1:u:force_ovf --after 3:replay_event:NBOGUS:t0"


def test_mob_load_replay_cannot_start_a_stall_counter(nb):
    out = nb.cmd("stat -e resource_stall:t1:u:force_ovf --after 3:MOB_load_replay:t0 "
                 "--pair synthetic MOB_load_replay 5 -- synthetic resource_stall 10")
    assert out.startswith("error: cannot place together") and len(out.splitlines()) == 1, out
    assert "no pair of their counters is linked for cascading" in out


def test_mob_replay_stall_scenario(nb):
    before = re.search(r"OVF_PMI_T1 (\d+)", nb.cmd("pmu")).group(1)
    rows, out = stat(nb, "%s --stagger --pair synthetic replay_event:NBOGUS 5 -- "
                         "synthetic resource_stall 10" % MOB)
    (b, spec_b, ctr_b, escr_b, _), (a, spec_a, ctr_a, escr_a, rest_a) = rows
    assert (ctr_b, escr_b, ctr_a, escr_a) == (16, "CRU_ESCR2", 17, "ALF_ESCR1"), out
    assert "CASCNT4INTO5" in rest_a and "force_ovf" in spec_a and "[T1]" in rest_a
    # all 5 replays counted; the 3rd started counter A, which then saw all 10 stalls
    assert (b, a) == (5, 10)
    # FORCE_OVF: every stall overflows, and OVF_PMI_T1 sends the PMIs to the stalled LP1
    after = re.search(r"OVF_PMI_T1 (\d+)", nb.cmd("pmu")).group(1)
    assert int(after) > int(before)


def test_mob_scenario_stalls_before_the_replays_do_not_count(nb):
    """LP1 stalls first (LP0 idle): nothing has started counter A yet."""
    rows, _ = stat(nb, "%s --pair empty -- synthetic resource_stall 10" % MOB)
    assert rows[1][0] == 0


# ---- Table 18-65: each extended-cascade bit starts the right counter ----------------------
#
# Source counter preset to -10 counting LP0's instr_retired (OS+USR, CCCR
# select 4 = CRU_ESCR0 on 12/13/16, CRU_ESCR1 on 14/15/17), destination
# counting the same with bit 11 set and Enable clear. `run --feed loop 10`
# retires 36 instructions: the source overflows on the 10th, so the started
# destination counts the remaining 26.

COUNTER = {12: 0x30C, 15: 0x30F, 16: 0x310, 17: 0x311}
CCCR = {12: 0x36C, 15: 0x36F, 16: 0x370, 17: 0x371}
LINKS = [("CASCNT4INTO0", 16, 12), ("CASCNT5INTO3", 17, 15),
         ("CASCNT5INTO4", 17, 16), ("CASCNT4INTO5", 16, 17)]


def cascade_run(nb, src, dst, bit11=True):
    nb.cmd("msr write 3B8H 0400060CH")             # CRU_ESCR0: instr_retired, T0_OS|T0_USR
    nb.cmd("msr write 3B9H 0400060CH")             # CRU_ESCR1: the same
    nb.cmd("msr write %XH FFFFFFFFF6H" % COUNTER[src])
    nb.cmd("msr write %XH 0" % COUNTER[dst])
    nb.cmd("msr write %XH %XH" % (CCCR[dst], 0x38000 | (0x800 if bit11 else 0)))
    nb.cmd("msr write %XH 39000H" % CCCR[src])     # select 4, active thread 11, Enable
    nb.cmd("run --feed loop 10")
    counted = msr(nb, "%XH" % COUNTER[dst])
    nb.cmd("msr write %XH 0" % CCCR[src])
    nb.cmd("msr write %XH 0" % CCCR[dst])
    return counted


@pytest.mark.parametrize("name,src,dst", LINKS)
def test_table_18_65_link_starts_its_counter(nb, name, src, dst):
    assert cascade_run(nb, src, dst) == loop_instr(10) - 10
    assert cascade_run(nb, src, dst, bit11=False) == 0


def test_table_18_65_bit_names_only_its_source(nb):
    # CASCNT5INTO3 is "counter 5 (17) into 3 (15)": counter 16 overflowing does not start 15
    assert cascade_run(nb, 16, 15) == 0
    # CASCNT4INTO0 is "4 (16) into 0 (12)": 17 overflowing does not start 12
    assert cascade_run(nb, 17, 12) == 0


@pytest.mark.parametrize("sig", ["0F_00", "0F_01"])
def test_table_18_65_refused_without_extended_cascading(nb, sig):
    assert "backend: model" in nb.cmd("pmu backend model %s ht" % sig)
    for _, _, dst in LINKS:
        out = nb.cmd("msr write %XH 38800H" % CCCR[dst])
        assert out.startswith("error: wrmsr") and "#GP" in out, out
        out = nb.cmd("explain %XH=38800H" % CCCR[dst])
        assert "no extended cascading on this model (bit 11 reserved)" in out, out
