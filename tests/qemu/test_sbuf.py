"""test_sbuf.py - the store buffer's events (pmu/model/p4_sbuf.c) from the `stores` workload.

Every expected count is the workload's own (arch/x86/64/workloads.S wl_st_*, and the
ia32 twins): N iterations of a 4-instruction loop. Counted at `:u` in ring 3, the
difference between runs of 2N and N iterations cancels the prologue's push, the pop,
the ret and the exit trampoline, so each difference is what N iterations do (two MOB
or DAC ESCRs: at most two of an event's masks a run), on the model's 0F_04H
(Prescott-class: 32 store buffers, 8 WC buffers, bits 21:6 alias):
  forward   a 2-byte store and a 4-byte load from it: the load is wider, so it
            cannot forward (PARTIAL_DATA), one replay per iteration;
  alias     a store and a load 4 MiB further: the same bits 21:6, another line, one
            64K_CONF per iteration;
  fill      a store every 64 bytes: each to a line not in L1, found in L2 (the
            kernel's zeroing put the buffer there, dirty), so each commits in L2's
            28 clocks (168 sixths) while the loop issues one every 10 sixths (the
            store's 2 uops, add, sub, jnz: 5 uops, 3 a clock): the buffer stays full,
            every store waits for one (ST_RB_FULL), 158 sixths each (SBFULL counts
            the whole clocks of their sum), and the loop runs at the commits' pace,
            28 clocks an iteration;
  nt        MOVNTI every 4 bytes: 16 fill a line's WC buffer, evicted at once;
  ntsparse  MOVNTI every 64 bytes: every line takes a buffer, and with all 8 in use
            each one evicts the oldest (WCB_FULL_EVICT, and WCB_EVICTS).
"""

import re

import pytest

import conftest

N = 1024                            # a multiple of 16: nt fills whole lines


@pytest.fixture(autouse=True)
def prescott_model(nb):
    assert "backend: model" in nb.cmd("pmu backend model 0F_04")
    nb.cmd("pmu clock model")


def counts(nb, events, mode, n):
    args = " ".join("-e %s:u" % e for e in events)
    out = nb.cmd("stat --ring 3 %s stores %s %d" % (args, mode, n), timeout=300)
    assert "error" not in out, out
    rows = conftest.stat_rows(out)
    assert len(rows) == len(events), out
    assert "[memory model]" in out, out
    return [next(v for k, v in rows.items() if k.lower().startswith(e.lower()))
            for e in events]


def per_n(nb, events, mode):
    """What N more iterations add to each event."""
    one, two = counts(nb, events, mode, N), counts(nb, events, mode, 2 * N)
    return [b - a for a, b in zip(one, two)]


def test_wider_load_after_a_store_replays(nb):
    partial, = per_n(nb, ["MOB_load_replay:PARTIAL_DATA"], "forward")
    unalgn, std = per_n(nb, ["MOB_load_replay:UNALGN_ADDR", "MOB_load_replay:NO_STD"], "forward")
    assert (partial, unalgn, std) == (N, 0, 0)


def test_a_load_4mib_from_a_store_conflicts(nb):
    conf, full = per_n(nb, ["memory_cancel:64K_CONF", "memory_cancel:ST_RB_FULL"], "alias")
    assert (conf, full) == (N, 0)
    partial, = per_n(nb, ["MOB_load_replay:PARTIAL_DATA"], "alias")
    assert partial == 0


def test_stores_missing_l1_fill_the_store_buffer(nb):
    full, = per_n(nb, ["memory_cancel:ST_RB_FULL"], "fill")
    stall, clk = per_n(nb, ["resource_stall:SBFULL", "global_power_events:RUNNING"], "fill")
    assert full == N
    assert abs(stall - 158 * N / 6) <= 1, stall
    assert abs(clk - 28 * N) <= 1, clk     # whole clocks of a time kept in sixths


def test_movnti_fills_and_evicts_write_combining_buffers(nb):
    evicts, full = per_n(nb, ["WC_Buffer:WCB_EVICTS", "WC_Buffer:WCB_FULL_EVICT"], "nt")
    assert (evicts, full) == (N // 16, 0)
    evicts, full = per_n(nb, ["WC_Buffer:WCB_EVICTS", "WC_Buffer:WCB_FULL_EVICT"], "ntsparse")
    assert (evicts, full) == (N, N)


def test_ordinary_stores_leave_the_wc_buffers_alone(nb):
    evicts, = per_n(nb, ["WC_Buffer:WCB_EVICTS"], "fill")
    assert evicts == 0


@pytest.mark.parametrize("mode", ["forward", "alias", "fill", "nt", "ntsparse"])
def test_stores_retires_4n_plus_9(nb, mode):
    out = nb.cmd("run --step --ring 3 stores %s 10" % mode)
    assert re.search(r"^instructions: 49 \(CPL 3\)", out, re.M), out


def test_stores_refuses_bad_arguments(nb):
    assert "error: stores: N: must be 1..1000000" in nb.cmd("run stores fill 0")
    out = nb.cmd("run stores sideways 10")
    assert "error: stores: MODE: 'sideways' is not one of forward, alias, fill, nt, ntsparse" in out, out
