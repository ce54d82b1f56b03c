"""test_memory.py - the memory-system model fed by the stepped accesses, and the cost model.

Every expected count is computed here from the workload listings
(arch/x86/64/workloads.S) and the model's documented parameters:
  part 0F_04H desktop (pmu/model/p4_mem.c): L1D 16 KB 8-way, 64-byte lines, not
      write-allocate; L2 2 MB 8-way, 128-byte sectors filled whole; DTLB and ITLB
      64 entries, LRU; L2 latency 20
  cost model (pmu/model/p4_cost.c): base max(1, ceil(uops / 3)), uops = 1 + loads
      + 2 x stores; a load found in L2 pays 20, one from memory 20 + 12 + 12 x 15
      = 212; a fetch pays nothing in L2 and 212 from memory; a store pays nothing;
      every TLB miss is a page walk of 30
The memory model is emptied when a counting run starts, so each run starts cold.
Ring 3 runs map their buffer and stack with 4 KiB pages (arch/x86/64/paging.c); ring 0
may find the buffer in a 2 MiB page, so page-sensitive counts use --ring 3.

What a workload touches besides its buffer: its stack (push %rbp is a store,
which does not allocate in L1: the pop after it misses L1 and finds the line in
L2, which the push's read-for-ownership filled; ret reads the same 64-byte line
as the pop and hits L1) and its code (memwalk's and copy's instructions lie in
one 128-byte sector: one fetch from memory, then L2 hits; one ITLB walk).
"""

import re

import pytest

import conftest

BOOT = {"icount": True}

ROW = re.compile(r"^\s*(\d+)\s+(\S+)\s+counter \d+ ", re.M)
WALK = 30
L2_LAT = 20
MEM = L2_LAT + 12 + 12 * 15         # 212
L1_SIZE = 16 * 1024
LINE = 64
SECTOR = 128
PAGE = 4096
DTLB = 64
STACK_L1_MISSES = 1                 # the pop (ret hits its line)
COLD_CODE = WALK + MEM              # the first fetch: ITLB walk + the code sector from memory
COLD_STACK = WALK + L2_LAT          # push: DTLB walk (a store pays nothing else); pop: L2 hit


def stat(nb, args):
    out = nb.cmd("stat " + args, timeout=300)
    assert "error" not in out, out
    return {m.group(2): int(m.group(1)) for m in ROW.finditer(out)}, out


def count(rows, prefix):
    hits = [v for k, v in rows.items() if k.startswith(prefix)]
    assert len(hits) == 1, (prefix, rows)
    return hits[0]


def memwalk_instr(size, stride, passes):
    return 6 + passes * (3 + 5 * -(-size // stride))


@pytest.fixture(autouse=True)
def desktop_model(nb, firmware):
    if conftest.kernel_bits(firmware) != 64:
        pytest.skip("the hand counts are for the x86-64 workload bodies (arch/x86/32/workloads.S reads "
                    "its arguments from the stack)")
    assert "backend: model" in nb.cmd("pmu backend model 0F_04")
    nb.cmd("pmu clock model")


@pytest.fixture
def replay_1stl(nb):
    """1stL_cache_load_miss_retired: PEBS_ENABLE 01000001H, MATRIX_VERT 1 (PMU reference 5.5)."""
    nb.cmd("msr write 3F1H 01000001H")
    nb.cmd("msr write 3F2H 1")
    yield
    nb.cmd("msr write 3F1H 0")
    nb.cmd("msr write 3F2H 0")


@pytest.mark.parametrize("ring", [0, 3])
def test_walk_over_twice_l1_misses_every_access(nb, replay_1stl, ring):
    """2 x L1 with a 64-byte stride: each set sees 16 lines cycling through 8 ways (LRU),
    so every load misses L1, on every pass; the replay metric counts each missing load."""
    size = 2 * L1_SIZE
    loads = size // LINE
    for passes in (1, 2, 3):
        rows, _ = stat(nb, "--ring %d -e replay_event:NBOGUS memwalk %d %d %d"
                       % (ring, size, LINE, passes))
        assert count(rows, "replay_event") == loads * passes + STACK_L1_MISSES, passes


def test_walk_within_l1_misses_only_on_the_first_pass(nb, replay_1stl):
    size = L1_SIZE // 2
    for passes in (1, 3):
        rows, _ = stat(nb, "-e replay_event:NBOGUS memwalk %d %d %d" % (size, LINE, passes))
        assert count(rows, "replay_event") == size // LINE + STACK_L1_MISSES


def test_replay_metric_counts_nothing_when_not_programmed(nb):
    rows, _ = stat(nb, "-e replay_event:NBOGUS memwalk %d %d 2" % (2 * L1_SIZE, LINE))
    assert count(rows, "replay_event") == 0


def test_one_access_per_page_beyond_the_dtlb_misses_every_time(nb):
    """128 pages > 64 DTLB entries, LRU: every load walks, on every pass; plus the stack
    page twice (its entry is evicted by the walk before the final pop)."""
    pages = 2 * DTLB
    for passes in (1, 2, 3):
        rows, _ = stat(nb, "--ring 3 -e page_walk_type:DTMISS -e page_walk_type:ITMISS "
                           "memwalk %d %d %d" % (pages * PAGE, PAGE, passes))
        assert count(rows, "page_walk_type:DTMISS") == pages * passes + 2
        assert count(rows, "page_walk_type:ITMISS") == 1


def test_pages_within_the_dtlb_walk_once(nb):
    pages = DTLB // 2
    rows, _ = stat(nb, "--ring 3 -e page_walk_type:DTMISS memwalk %d %d 3" % (pages * PAGE, PAGE))
    assert count(rows, "page_walk_type:DTMISS") == pages + 1


def test_l2_sectors_fill_both_lines(nb):
    """32 KB = 256 sectors: the first line of each misses L2, the adjacent line comes with
    it; later passes hit L2 (2 MB). Plus the code sector."""
    size = 2 * L1_SIZE
    for passes in (1, 2):
        rows, _ = stat(nb, "-e BSQ_cache_reference:RD_2ndL_MISS "
                           "-e BSQ_allocation:REQ_DEM_TYPE:noedge -e IOQ_allocation:ALL_READ:noedge "
                           "memwalk %d %d %d" % (size, LINE, passes))
        assert count(rows, "BSQ_cache_reference") == size // SECTOR + 1
        # every L2 miss leaves the package as one bus read (no L3, nothing dirty evicted),
        # and so does the push's read-for-ownership
        assert count(rows, "BSQ_allocation") == size // SECTOR + 1 + 1
        assert [v for k, v in rows.items() if k.startswith("IOQ_allocation")] == [size // SECTOR + 2]
        rows, _ = stat(nb, "-e IOQ_allocation:ALL_READ memwalk %d %d %d" % (size, LINE, passes))
        # the default Edge counts cycles that start a run of allocations: the code fetch
        # and the push's RFO come in the first instruction's cycle, one edge
        assert [v for k, v in rows.items() if k.startswith("IOQ_allocation")] == [size // SECTOR + 1]


def test_memwalk_clockticks_by_hand(nb):
    size, passes = 2 * L1_SIZE, 1
    n = memwalk_instr(size, LINE, passes)
    sectors = size // SECTOR
    expect = (n                                  # every instruction <= 3 uops: 1 cycle
              + sectors * MEM                    # first line of each sector from memory
              + sectors * L2_LAT                 # its neighbour from L2
              + (size // PAGE) * WALK            # one DTLB walk per 4 KiB page
              + COLD_CODE + COLD_STACK)
    rows, out = stat(nb, "--ring 3 memwalk %d %d %d" % (size, LINE, passes))
    assert count(rows, "instr_retired") == n
    assert count(rows, "global_power_events") == expect
    assert "[cost model]" in out and "clockticks from the cost model (a model" in out


def test_loop_clockticks_by_hand_and_identical_across_runs(nb):
    for n in (100, 1000):
        seen = set()
        for _ in range(2):
            rows, out = stat(nb, "loop %d" % n)
            seen.add(count(rows, "global_power_events"))
        assert seen == {3 * n + 6 + COLD_CODE + COLD_STACK}, (n, seen)
    rows, _ = stat(nb, "-r 5 loop 1000")
    mins = [int(x) for x in re.findall(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+global_power",
                                       _, re.M)[0]]
    assert len(set(mins)) == 1, mins


def test_copy_clockticks_and_misses_by_hand(nb, replay_1stl):
    """REP MOVSB: per byte 1 load + 1 store = 4 uops, 2 cycles; each source line misses L1
    once, each source sector comes from memory once (destination stores pay nothing)."""
    small, big = 4096, 8192
    a, _ = stat(nb, "--ring 3 -e replay_event:NBOGUS -e global_power_events copy %d" % small)
    b, _ = stat(nb, "--ring 3 -e replay_event:NBOGUS -e global_power_events copy %d" % big)
    assert count(a, "replay_event") == small // LINE + STACK_L1_MISSES
    assert count(b, "replay_event") == big // LINE + STACK_L1_MISSES
    extra = big - small
    delta = (extra * 2                                          # 2 cycles per byte
             + (extra // SECTOR) * (MEM + L2_LAT)               # source sectors
             + 2 * (extra // PAGE) * WALK)                      # source and destination pages
    assert count(b, "global_power_events") - count(a, "global_power_events") == delta


def test_xeon_mp_l3_part(nb):
    out = nb.cmd("pmu backend model 0F_04 l3")
    assert "backend: model" in out
    assert "L3 8192 KB" in nb.cmd("pmu")
    size = 2 * 1024 * 1024          # 2 x the 1 MB L2 of the L3 part: misses L2, fits L3
    rows, _ = stat(nb, "-e BSQ_cache_reference:RD_3rdL_MISS -e BSQ_cache_reference:RD_2ndL_MISS "
                       "memwalk %d %d 2" % (size, SECTOR))
    assert count(rows, "BSQ_cache_reference:RD_3rdL_MISS") == size // SECTOR + 1
    # the second pass misses L2 again (LRU over 2 x its size) and finds every sector in
    # L3; so does the final pop: the walk evicted the stack's dirty sector into L3
    assert count(rows, "BSQ_cache_reference:RD_2ndL_MISS") == 2 * (size // SECTOR) + 1 + 1


def test_l3_needs_a_part_that_has_one(nb):
    out = nb.cmd("pmu backend model 0F_05 l3")
    assert "no Xeon MP with an L3" in out


def test_unknown_clock_source_is_refused(nb):
    assert "usage: pmu clock tsc|model" in nb.cmd("pmu clock fast")
    assert "model clockticks: model" in nb.cmd("pmu clock model")


MSR_VALUE = re.compile(r"^MSR [0-9A-F]+H = ([0-9A-F]+)H", re.M)
IBUSQ_ALL = 0x00FFFFF0 << 32        # `ibusq`: t0 t1, every type, snoop and L3 state bit
IBUSQ_FILL = 0x02FFFFF0 << 32       # `ibusq:fill=1`
EFSB_OTHER = 0x00000002 << 32       # `efsb:other`


def rdmsr(nb, msr):
    out = nb.cmd("msr read %XH" % msr)
    m = MSR_VALUE.search(out)
    assert m, out
    return int(m.group(1), 16)


def test_uncore_counts_the_modelled_l3_misses(nb):
    """0F_04 with its L3: IBUSQ counts one transaction per L3 miss (loads, fetches and the
    push's RFO alike), EFSB DRDY driven by others (Other) 2 bus clocks per line read. The counts
    sit in the low 32 bits; the control word in the upper half stays as written."""
    nb.cmd("pmu backend model 0F_04 l3")
    for msr, v in ((0x107CC, IBUSQ_ALL), (0x107CD, IBUSQ_FILL), (0x107D0, EFSB_OTHER)):
        assert "<-" in nb.cmd("msr write %XH 0x%X" % (msr, v))
    size = 1024 * 1024              # = the L2 of this part, cold: every sector misses L3
    rows, _ = stat(nb, "-e BSQ_cache_reference:RD_3rdL_MISS memwalk %d %d 1" % (size, SECTOR))
    reads = count(rows, "BSQ_cache_reference")
    assert reads == size // SECTOR + 1                  # + the code sector
    misses = reads + 1                                  # + the push's RFO
    assert rdmsr(nb, 0x107CC) == IBUSQ_ALL | misses
    assert rdmsr(nb, 0x107CD) == IBUSQ_FILL | misses
    assert rdmsr(nb, 0x107D0) == EFSB_OTHER | 2 * misses


def test_uncore_low_half_wraps_at_32_bits(nb):
    nb.cmd("pmu backend model 0F_04 l3")
    start = 0xFFFFFF00
    nb.cmd("msr write 107CCH 0x%X" % (IBUSQ_ALL | start))
    stat(nb, "memwalk %d %d 1" % (1024 * 1024, SECTOR))
    misses = 1024 * 1024 // SECTOR + 2
    assert rdmsr(nb, 0x107CC) == IBUSQ_ALL | ((start + misses) & 0xFFFFFFFF)
    nb.cmd("msr write 107CCH 0")
    stat(nb, "memwalk 4096 128 1")
    assert rdmsr(nb, 0x107CC) == 0                       # upper half 0: not counting


@pytest.mark.parametrize("backend", ["0F_02 l3", "0F_04"])
def test_parts_without_the_uncore_set_refuse_its_registers(nb, backend):
    nb.cmd("pmu backend model " + backend)
    assert "#GP" in nb.cmd("msr read 107CCH")


def test_stat_counts_uncore_next_to_core_events(nb):
    nb.cmd("pmu backend model 0F_04 l3")
    size = 1024 * 1024
    rows, out = stat(nb, "-e BSQ_cache_reference:RD_3rdL_MISS -e ibusq -e ibusq:fill=1 "
                         "-e efsb:other memwalk %d %d 1" % (size, SECTOR))
    misses = count(rows, "BSQ_cache_reference") + 1         # + the push's RFO
    unc = {m.group(2): int(m.group(1)) for m in
           re.finditer(r"^\s*(\d+)\s+(\S+)\s+uncore (MSR_\w+) \(([0-9A-F]+)H, RDPMC (\d+)\)", out, re.M)}
    assert unc.get("ibusq") == misses, out
    assert [v for k, v in unc.items() if k.startswith("ibusq:") and "fill" in k] == [misses], out
    assert [v for k, v in unc.items() if k.startswith("efsb")] == [2 * misses], out
    assert "RDPMC 18)" in out and "RDPMC 19)" in out and "RDPMC 22)" in out, out
    # stopped after the run: the upper half is 0 again
    assert rdmsr(nb, 0x107CC) >> 32 == 0


def test_stat_uncore_repeats_count_alike(nb):
    nb.cmd("pmu backend model 0F_04 l3")
    out = nb.cmd("stat -r 3 -e ibusq memwalk 65536 128 1", timeout=300)
    m = re.search(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+ibusq\s", out, re.M)
    assert m and len(set(m.groups())) == 1 and int(m.group(1)) == 65536 // SECTOR + 2, out


@pytest.mark.parametrize("backend,why", [("0F_02 l3", "0F_02H has no uncore counters"),
                                         ("0F_04", "this part has no uncore counters")])
def test_stat_refuses_uncore_where_the_part_has_none(nb, backend, why):
    nb.cmd("pmu backend model " + backend)
    out = nb.cmd("stat -e ibusq loop 10")
    assert out.startswith("error:") or "\nerror:" in out, out
    assert "ibusq" in out and why in out, out
    assert rdmsr_gp_or_zero(nb)


def rdmsr_gp_or_zero(nb):
    out = nb.cmd("msr read 107CCH")
    return "#GP" in out or MSR_VALUE.search(out).group(1).lstrip("0") == ""


RDPMC = re.compile(r"^RDPMC (\d+): EDX ([0-9A-F]{8})H EAX ([0-9A-F]{8})H", re.M)


def test_rdpmc_18_to_25_read_the_uncore_low_half_with_edx_0(nb):
    nb.cmd("pmu backend model 0F_04 l3")
    nb.cmd("msr write 107CCH 0x%X" % (IBUSQ_ALL | 0x1234))
    nb.cmd("msr write 107D1H 0x%X" % (EFSB_OTHER | 0x89ABCDEF))
    for idx, low in ((18, 0x1234), (23, 0x89ABCDEF), (25, 0)):
        m = RDPMC.search(nb.cmd("pmu rdpmc %d" % idx))
        assert m and int(m.group(1)) == idx, idx
        assert (int(m.group(2), 16), int(m.group(3), 16)) == (0, low), idx
    assert "#GP" in nb.cmd("pmu rdpmc 26")
    nb.cmd("msr write 107CCH 0")
    nb.cmd("msr write 107D1H 0")
    nb.cmd("pmu backend model 0F_04")
    assert "#GP" in nb.cmd("pmu rdpmc 18")          # no uncore set on the desktop part
    assert RDPMC.search(nb.cmd("pmu rdpmc 0"))
