"""test_workloads.py - the built-in workloads, ring 3 and the single-step engine.

Expected instruction and branch counts are read off the workload listings in
arch/x86/64/workloads.S (and stated in each workload's help text), e.g. `loop N`
is 4 set-up instructions, 3 per iteration (add, sub, jnz) and pop + ret:
3N + 6. Nothing here was copied from a run's output.
"""

import re
import time

import pytest

LOOP_K, LOOP_C = 3, 6           # arch/x86/64/workloads.S, wl_loop
U64 = (1 << 64) - 1

INDIRECT_K, INDIRECT_C = 9, 8   # arch/x86/64/workloads.S, wl_indirect
NAMES = ["empty", "loop", "branch", "calls", "indirect", "memwalk", "copy", "spin", "halt",
         "synthetic", "fault-user", "snippet", "fpmix", "chase", "fpassist", "stores",
         "smc"]


def field(out, name):
    """The integer after 'name:' on its line."""
    m = re.search(r"^%s: (\d+)" % re.escape(name), out, re.M)
    assert m, "no '%s:' line in:\n%s" % (name, out)
    return int(m.group(1))


def pair(out, name):
    """(taken, not taken) of a 'name: taken X, not taken Y' line."""
    m = re.search(r"^%s: taken (\d+), not taken (\d+)$" % name, out, re.M)
    assert m, "no '%s:' line in:\n%s" % (name, out)
    return int(m.group(1)), int(m.group(2))


def kinds(out):
    m = re.search(r"^by kind:(.*)$", out, re.M)
    assert m, out
    words = m.group(1).split()
    return {words[i]: int(words[i + 1]) for i in range(0, len(words), 2)}


def run(nb, line, ring=0):
    out = nb.cmd("run --ring %d --step %s" % (ring, line), timeout=120)
    assert "error:" not in out, out
    assert "instructions: " in out and "(CPL %d)" % ring in out, out
    return out


def one_error(out):
    lines = [l for l in out.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), out
    return lines[0]


def test_workloads_lists_every_workload(nb):
    out = nb.cmd("workloads")
    listed = re.findall(r"^  (\S+)", out, re.M)
    assert listed == NAMES
    assert re.search(r"^  loop \[N\] +tight loop", out, re.M)
    assert re.search(r"^  branch \[PATTERN\] \[N\] \[SEED\] ", out, re.M)
    assert re.search(r"^      N +iterations: 1\.\.4294967295, default 1000$", out, re.M)
    assert "Instructions: 3*N + 6." in out
    assert re.search(r"^  indirect \[N\] +indirect call and indirect jump", out, re.M)
    assert "Instructions: 9*N + 8." in out
    assert re.search(r"^      ring 0 only: HLT is privileged", out, re.M)
    assert "Instructions: 35*N + 15." in out
    assert "Instructions: 4*N + 7." in out


@pytest.mark.parametrize("ring", [0, 3])
@pytest.mark.parametrize("n", [1, 50])
def test_fpmix_retires_35n_plus_15(nb, ring, n):
    """wl_fpmix: 11 set-up instructions, 35 per iteration (x87, MMX, SSE/SSE2 and the loop's
    sub/jnz), 4 after: it runs in both rings without #UD or #NM (CR0/CR4 set up, SDM 13.1.4)."""
    out = run(nb, "fpmix %d" % n, ring)
    assert field(out, "instructions") == 35 * n + 15
    assert pair(out, "conditional") == (n - 1, 1)
    assert field(out, "returned") == n


@pytest.mark.parametrize("ring", [0, 3])
@pytest.mark.parametrize("order", ["linear", "random"])
def test_chase_retires_3n_plus_7_and_follows_its_pointers(nb, ring, order):
    """wl_chase: 4 set-up instructions, 3 per load, 3 after; it returns the last pointer
    it loaded, inside the buffer (a chain the kernel built: a wrong pointer would fault)."""
    for n in (1, 100):
        out = run(nb, "chase %s 64K %d" % (order, n), ring)
        assert field(out, "instructions") == 3 * n + 7
        assert pair(out, "conditional") == (n - 1, 1)
        assert field(out, "returned") != 0


@pytest.mark.parametrize("ring", [0, 3])
@pytest.mark.parametrize("n", [1, 50])
def test_smc_retires_4n_plus_7_writing_its_own_code(nb, ring, n):
    """wl_smc: 4 set-up instructions, 4 per iteration (the movb it patches, the store into
    its immediate, sub, jnz), 3 after. The store runs in both rings: .wltext is mapped
    writable, and the patched code goes on running (and still retires as counted)."""
    out = run(nb, "smc %d" % n, ring)
    assert field(out, "instructions") == 4 * n + 7
    assert pair(out, "conditional") == (n - 1, 1)
    assert field(out, "returned") == n


def test_chase_random_needs_a_power_of_two_of_lines(nb):
    out = nb.cmd("run --step chase random 96K 10")
    assert "random needs SIZE / 64 to be a power of two" in out, out


@pytest.mark.parametrize("ring", [0, 3])
@pytest.mark.parametrize("n", [1, 2, 10, 1000])
def test_loop_retires_k_n_plus_c(nb, ring, n):
    out = run(nb, "loop %d" % n, ring)
    assert field(out, "instructions") == LOOP_K * n + LOOP_C
    assert pair(out, "conditional") == (n - 1, 1)
    assert kinds(out) == {"cond": n, "jmp": 0, "jmp-ind": 0, "call": 0, "call-ind": 0,
                          "ret": 1, "other": 0}
    assert field(out, "returned") == n


def test_loop_k_is_the_slope(nb):
    """Two runs far apart give the slope k exactly, whatever c is."""
    a = field(run(nb, "loop 5000"), "instructions")
    b = field(run(nb, "loop 2000"), "instructions")
    assert (a - b) == LOOP_K * 3000


def test_empty_is_one_ret(nb):
    out = run(nb, "empty")
    assert field(out, "instructions") == 1
    assert pair(out, "branches") == (1, 0)


def xorshift_taken(seed, n):
    """Pattern bits of `branch random`: xorshift64 13/7/17, taken when bit 0 is 1."""
    x, taken = seed, 0
    for _ in range(n):
        x ^= (x << 13) & U64
        x ^= x >> 7
        x ^= (x << 17) & U64
        taken += x & 1
    return taken


@pytest.mark.parametrize("ring", [0, 3])
@pytest.mark.parametrize("pattern,n,seed", [
    ("taken", 50, None), ("nottaken", 50, None), ("alternate", 51, None),
    ("alternate", 40, None), ("random", 64, 1), ("random", 100, 0x2545F4914F6CDD1D),
])
def test_branch_pattern_counts(nb, ring, pattern, n, seed):
    if pattern == "taken":
        t = n
    elif pattern == "nottaken":
        t = 0
    elif pattern == "alternate":
        t = n // 2              # 1st not taken, 2nd taken, ...
    else:
        t = xorshift_taken(seed, n)
    nt = n - t
    c = 11 if pattern == "random" else 1
    out = run(nb, "branch %s %d%s" % (pattern, n, "" if seed is None else " %#x" % seed), ring)
    # pattern branches plus the closing jnz (n - 1 taken, 1 not taken)
    assert pair(out, "conditional") == (t + n - 1, nt + 1)
    assert field(out, "instructions") == 8 + n * (c + 4) + nt
    assert field(out, "returned") == nt


@pytest.mark.parametrize("depth,n", [(1, 1), (3, 2), (16, 5)])
def test_call_chain(nb, depth, n):
    out = run(nb, "calls %d %d" % (depth, n), 3)
    assert field(out, "instructions") == 10 + n * (8 * depth + 2)
    k = kinds(out)
    assert k["call"] == depth * n
    assert k["ret"] == depth * n + 1
    # per repetition: depth-1 not-taken jz, 1 taken jz; closing jnz n-1 / 1
    assert pair(out, "conditional") == (n + n - 1, n * (depth - 1) + 1)


@pytest.mark.parametrize("ring", [0, 3])
@pytest.mark.parametrize("n", [1, 2, 7, 500])
def test_indirect_call_and_jump(nb, ring, n):
    """wl_indirect: per iteration `call *%r8` (FF /2) into a 5-instruction leaf that
    returns, `jmp *%r9` (FF /4) over a ud2, `sub; jnz`; 6 set-up, pop + ret."""
    out = run(nb, "indirect %d" % n, ring)
    assert field(out, "instructions") == INDIRECT_K * n + INDIRECT_C
    assert kinds(out) == {"cond": n, "jmp": 0, "jmp-ind": n, "call": 0, "call-ind": n,
                          "ret": n + 1, "other": 0}
    # every call, jump and ret is taken (none lands on its fall-through); the jnz n-1 / 1
    assert pair(out, "branches") == (n + n + (n + 1) + (n - 1), 1)
    assert pair(out, "conditional") == (n - 1, 1)
    assert field(out, "returned") == n     # the leaf adds 1 to RAX per call


@pytest.mark.parametrize("ring", [0, 3])
def test_memwalk(nb, ring):
    size, stride, passes = 4096, 100, 3
    m = -(-size // stride)
    out = run(nb, "memwalk 4K %d %d" % (stride, passes), ring)
    assert field(out, "instructions") == 6 + passes * (3 + 5 * m)
    assert pair(out, "conditional") == (passes * (m - 1) + passes - 1, passes + 1)


@pytest.mark.parametrize("ring", [0, 3])
@pytest.mark.parametrize("size", ["1", "100", "8K"])
def test_rep_string_counts_once(nb, ring, size):
    out = run(nb, "copy %s" % size, ring)
    assert field(out, "instructions") == 9


@pytest.mark.parametrize("ring", [0, 3])
def test_synthetic_emits_n_int81(nb, ring):
    out = run(nb, "synthetic bsq_cache_reference:rd_2ndl_miss 7", ring)
    assert field(out, "instructions") == 3 * 7 + 5
    assert kinds(out)["other"] == 7
    assert re.search(r"^synthetic: 7 x bsq_cache_reference:rd_2ndl_miss \(int 0x81\)$", out, re.M)


def tsc_mhz(nb):
    m = re.search(r"^tsc: (\d+)\.\d+ MHz", nb.transcript, re.M)   # the boot banner
    if not m:
        pytest.skip("TSC not calibrated")
    return int(m.group(1))


def test_spin_lasts_usec(nb):
    out = nb.cmd("run --ring 3 spin 2000")
    assert field(out, "returned") >= 2000 * tsc_mhz(nb)


def test_halt_ring0_wakes_up(nb):
    out = nb.cmd("run halt 2000")
    assert "error:" not in out, out
    assert field(out, "returned") >= 2000 * tsc_mhz(nb)


def test_halt_is_refused_at_ring3(nb):
    line = one_error(nb.cmd("run --ring 3 halt 100"))
    assert "ring 3" in line and "HLT is privileged" in line


def test_ring3_fault_is_reported_and_shell_survives(nb):
    out = nb.cmd("run --ring 3 fault-user")
    assert "exception #PF (vector 14)" in out
    assert "<wl_fault_user+" in out
    assert "user mode" in out
    assert "CS  0x0023" in out            # the user code selector, RPL 3
    assert re.search(r"^error: fault-user faulted at ring 3: vector 14", out, re.M)
    # the same workload is fine at ring 0, and ring 3 works again afterwards
    assert "error:" not in nb.cmd("run fault-user")
    out = run(nb, "loop 4", 3)
    assert field(out, "instructions") == LOOP_K * 4 + LOOP_C


def test_ring3_cannot_touch_the_kernel_after_a_run(nb):
    """The pages opened for a ring-3 run are closed again: a ring-0 run is unaffected
    and a second ring-3 fault is still a fault (not a stale user mapping)."""
    for _ in range(2):
        assert "faulted at ring 3" in nb.cmd("run --ring 3 fault-user")


@pytest.mark.parametrize("ring", [0, 3])
def test_ctrl_c_stops_a_stepped_run(nb, ring):
    nb.send("run --ring %d --step loop 100000000\r" % ring)
    nb.expect_exact("loop 100000000", 10)
    time.sleep(2)
    nb.send("\x03")
    nb.expect_exact("nbprof> ", 60)
    out = nb.child.before
    assert "interrupted by Ctrl-C" in out
    assert field(run(nb, "loop 2", ring), "instructions") == LOOP_K * 2 + LOOP_C


@pytest.mark.parametrize("ring", [0, 3])
def test_ctrl_c_stops_an_unstepped_run(nb, ring):
    # the LAPIC timer polls the serial port during unstepped runs: loop 2^32-1 (about
    # 13 G instructions) stops within a tick or two of Ctrl-C, not when it ends
    nb.send("run --ring %d loop 4294967295\r" % ring)
    nb.expect_exact("loop 4294967295", 10)
    time.sleep(1)
    t0 = time.monotonic()
    nb.send("\x03")
    nb.expect_exact("nbprof> ", 30)
    took = time.monotonic() - t0
    out = nb.child.before
    assert "interrupted by Ctrl-C" in out, out
    assert took < 5, "Ctrl-C took %.1f s" % took
    assert field(run(nb, "loop 2", ring), "instructions") == LOOP_K * 2 + LOOP_C


@pytest.mark.parametrize("line,words", [
    ("run loop 0", "loop: N: must be 1..4294967295"),
    ("run loop many", "loop: N: "),
    ("run loop 1 2", "too many arguments"),
    ("run branch sometimes", "'sometimes' is not one of taken, nottaken, alternate, random"),
    ("run calls 999", "calls: DEPTH: must be 1..256"),
    ("run memwalk 65M", "memwalk: SIZE: must be 1..67108864"),
    ("run memwalk 1G", "memwalk: SIZE: not a number"),
    ("run synthetic", "synthetic: missing SPEC"),
    ("run synthetic nosuch 5", "synthetic: SPEC: 'nosuch': "),
    ("run synthetic replay_event:NOSUCHBIT 5", "synthetic: SPEC: 'replay_event:NOSUCHBIT': "),
    ("run --ring 2 loop", "--ring: '2' is not 0 or 3"),
    ("run --fast loop", "unknown option '--fast'"),
    ("run", "missing WORKLOAD"),
    ("run nosuch", "unknown workload 'nosuch'"),
    ("workloads extra", "takes no arguments"),
])
def test_bad_arguments_give_one_error_line(nb, line, words):
    assert words in one_error(nb.cmd(line))


def test_unstepped_run_counts_its_watchdog_ticks_and_can_go_without(nb):
    """An unstepped run's Ctrl-C watchdog ticks every 100 ms (workload/workloads.c), and its
    kernel code is what a Pentium 4 counts at :k: run says how many ticks fell in the run.
    --no-watchdog runs it without (stat and record take the option too)."""
    out = nb.cmd("run loop 300000000", timeout=120)
    m = re.search(r"^watchdog ticks: (\d+) \(kernel code: counted at :k\)$", out, re.M)
    assert m and int(m.group(1)) >= 1, out
    out = nb.cmd("run --no-watchdog loop 300000000", timeout=120)
    assert "returned: 300000000" in out and "watchdog" not in out, out
    for cmd in ("stat", "record"):
        assert "error" not in nb.cmd("%s --no-watchdog -e instr_retired:u --ring 3 loop 10" % cmd)
