#!/usr/bin/python3
"""bench.py - what counting costs, measured in QEMU with -icount shift=7.

    tools/dev/bench.py [--repeats N] [--image build/nbprof.img]
    tools/dev/bench.py --serial /dev/ttyUSB0    (a real machine: boot it after starting)

Boots the image once (model backend) with a deterministic clock: under
-icount shift=7 QEMU's TSC advances 128 per guest instruction, so a TSC
delta divided by 128 is an instruction count. Then it runs
  pmu bench N        stat's start/stop/read sequence, N times (TSC cycles)
  stat -r N empty    the spread of an empty measurement (clockticks and
                     instructions over the stepped `empty` workload)
  stat -r N -e instr_retired loop 100
  stat loop 10000 / 20000 (model backend only) the cost of one stepped
                     instruction under stat with the default events and the
                     memory model on: the difference of the two runs' wall
                     TSC (stat's `wall:` line) over the 30000 extra stepped
                     instructions, in guest instructions (TSC / 128); the
                     goal is at most 700
and then the sampling figures:
  record --vector ... loop 3000   the handler's own time per PMI from entry
                     to exit with the part spent inside the model's
                     register accesses: the handler with the model excluded
                     is what a real Pentium 4 would run
  record --floor N   the floor: the register accesses no handler can avoid
                     (4 RDMSR: OVF, the counter running, stopped (O9) and
                     read back after the reload (N15); 4 WRMSR: stop on a
                     null event (O8), the counter twice (N15), restart;
                     LVT PC read + write, EOI) and one
                     store append (to an empty store, as the handler's
                     appends to record's store: no eviction), timed on
                     the guest; plus the 38
                     instructions of the interrupt stub and isr_common
                     (3 + 15 pushes + cld + mov + call + 15 pops + add + iretq,
                     counted in arch/x86/64/entry.S)
  script / dump      bytes per sample of both encodings of one -g recording
                     (an NBD: line with its CR LF, over the samples)
  dump (large)       bytes per sample without call chains, samples per second
                     the serial link carried (host wall clock around the
                     command), and what 115200 baud allows with and without -g
and then, on each kernel (the x86-64 one after OVMF, the 32-bit one after
SeaBIOS and GRUB, each booted from an image that also holds the SDK's
`sumloop` and `hello` built for it), what a Pentium 4 counts of the kernel
itself:
  stat -e instr_retired empty    the counting window around `empty` at :u:k
                     (goal at most 32 instructions)
  stat -e instr_retired sumloop  a program's window, counted whole (no
                     markers): the CPL-0 instructions while a counter ran
                     (stat's `model:` line; goal at most 64)
  stat -e instr_retired hello    the same with the SDK's markers around its
                     work: their two gates' CPL-0 instructions (goal at most 64)
  record -e instr_retired -c 5000 --ring 3 loop 100000   the PMI handler's
                     tail: the instructions it retires at CPL 0 after a
                     counter's restart, up to its IRET (`pmu`'s `PMI
                     handler on LP0` line after it; goal at most 24; a CPL-0 sampler
                     with a period up to pmu/p4_alloc.h P4_PMI_TAIL_MAX is
                     refused)
and prints small tables. `make bench` runs it. Exit status 1 when the
machine does not boot or a command fails.

With --serial the same counting figures come from a real machine over its
serial line (115200 8N1), on whatever backend it chose at boot (the
hardware PMU on a NetBurst CPU that passes the probe): TSC cycles only, as
there a TSC cycle is not a fixed number of instructions. The sampling
figures, which rely on the model's stepped timing, are left out.
"""

import argparse
import os
import re
import subprocess
import sys

import time

import pexpect

# tools/, where the host tools' package is (docs/dev/tools.md)
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
from nbproflib import qemu  # noqa: E402
from nbproflib.link import ANSI, PROMPT, READY  # noqa: E402

TSC_PER_INSN = 128      # -icount shift=7
STATS = re.compile(r"^\s*(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\w+)\S*\s+counter", re.M)
BENCH = re.compile(r"min (\S+) median (\S+) tmean (\S+) max (\S+)")
HANDLER = re.compile(r"PMI handler: (\d+) TSC cycles per PMI from entry to exit, (\d+) of them")
FLOOR = re.compile(r"floor: registers (\d+) TSC cycles .*store (\d+) TSC cycles")
STORED = re.compile(r"samples: (\d+) stored")
WALL = re.compile(r"^wall: (\d+) TSC cycles", re.M)
STEP_LOOPS = (10000, 20000)     # loop N: 3N + 6 instructions
STEP_GOAL = 700                 # guest instructions per stepped instruction under stat (with the core model)
HANDLER_GOAL = 1.5              # the handler, model excluded, over the floor
ENTRY_INSNS = 38        # arch/x86/64/entry.S: stub (3) + isr_common (35), see the docstring
BAUD_BYTES = 115200 // 10   # 8N1: 10 bits per byte
WINDOW = re.compile(r"while a counter ran: LP0 (\d+) at CPL 0")
COUNT = re.compile(r"^\s*(\d+)\s+instr_retired", re.M)
WAY_IN = re.compile(r"^PMI way in, counted with it .*: NMI \d+ / (\d+), ", re.M)
TAIL = re.compile(r"^PMI handler on LP0 in the last count \(model, stepped\): \d+ PMIs, (\d+) instructions .*after a "
                  r"counter's restart (\d+) at most \(the limit is (\d+)\)", re.M)
WINDOW_GOALS = (32, 64, 24)     # empty at :u:k, a program's CPL-0 window, the handler's tail
KERNELS = (("x86-64", "uefi-x64", "sdk"), ("32-bit", "bios", "sdk32"))
DUMP_GOAL_G, DUMP_GOAL = 25, 8  # dump bytes per sample on the line, with and without -g


def run(child, line, timeout=600):
    child.send(line + "\r")
    child.expect_exact(PROMPT, timeout=timeout)
    out = ANSI.sub("", child.before).replace("\r", "")
    if "error:" in out:
        raise SystemExit("bench: '%s' failed:\n%s" % (line, out))
    return out


def row(name, unit, figures):
    print("%-34s %-13s %12s %12s %12s %12s" % ((name, unit) + tuple(figures)))


def insns(figures):
    return ["%.1f" % (float(f) / TSC_PER_INSN) for f in figures]


def sampling(child):
    """The sampling figures: (cost, floor regs, floor store, script/dump bytes, link rate)."""
    out = run(child, "record --vector --throttle 100 --ring 3 -e instr_retired:u -c 99 loop 3000")
    cost = tuple(map(int, HANDLER.search(out).groups()))
    regs, store = map(int, FLOOR.search(run(child, "record --floor 200")).groups())
    out = run(child, "record -g --throttle 100 --ring 3 -e instr_retired:u -c 97 calls 3 400")
    n = int(STORED.search(out).group(1))
    script = run(child, "script")
    dump = run(child, "dump")
    # the bytes on the line: each NBD: line and its CR LF
    frames = sum(len(l) + 2 for l in dump.split("\n") if l.startswith("NBD:"))
    sizes = (len(script.split("\n", 1)[1]) / n, frames / n, n)
    out = run(child, "record --throttle 100 --ring 3 -e instr_retired:u -c 3 loop 20000")
    big = int(STORED.search(out).group(1))
    t0 = time.monotonic()
    dump = run(child, "dump")
    secs = time.monotonic() - t0
    nbytes = sum(len(l) + 2 for l in dump.split("\n") if l.startswith("NBD:"))
    return cost, regs, store, sizes, (big, nbytes, secs)


def step_cost(child):
    """Guest instructions one stepped instruction costs under `stat` (default events)."""
    walls = []
    for n in STEP_LOOPS:
        m = WALL.search(run(child, "stat loop %d" % n))
        if not m:
            raise SystemExit("bench: stat printed no wall line")
        walls.append(int(m.group(1)))
    extra = 3 * (STEP_LOOPS[1] - STEP_LOOPS[0])
    return (walls[1] - walls[0]) / TSC_PER_INSN / extra


def print_sampling(cost, regs, store, sizes, link):
    floor = regs / TSC_PER_INSN + store / TSC_PER_INSN + ENTRY_INSNS
    handler, model = cost
    own = (handler - model) / TSC_PER_INSN + ENTRY_INSNS
    print()
    print("%-44s %12s %12s" % ("sampling (model backend)", "TSC", "instructions"))
    print("%-44s %12d %12.1f" % ("PMI handler with the model (mean, + entry)", handler,
                                 handler / TSC_PER_INSN + ENTRY_INSNS))
    print("%-44s %12d %12.1f" % ("  of which the model's register accesses", model,
                                 model / TSC_PER_INSN))
    if handler > model:
        print("%-44s %12d %12.1f  (%.2f x the floor; goal <= %.1f)"
              % ("PMI handler, model excluded (+ entry)", handler - model, own, own / floor,
                 HANDLER_GOAL))
    else:   # the model steps the handler: its batch work lands in the handler's accesses
        print("%-44s %12s %12s  (not separable while the model steps the handler; goal <= %.1f)"
              % ("PMI handler, model excluded (+ entry)", "-", "-", HANDLER_GOAL))
    print("%-44s %12d %12.1f" % ("floor: MSR/APIC accesses", regs, regs / TSC_PER_INSN))
    print("%-44s %12d %12.1f" % ("floor: one store append", store, store / TSC_PER_INSN))
    print("%-44s %12s %12d" % ("floor: interrupt entry/exit (counted)", "-", ENTRY_INSNS))
    print("%-44s %12s %12.1f" % ("floor total", "-", floor))
    print("%-44s %12.1f %12.1f  (%d samples, -g; goal <= %d)"
          % ("bytes per sample: script | dump", sizes[0], sizes[1], sizes[2], DUMP_GOAL_G))
    big, nbytes, secs = link
    print("%-44s %12s %12.1f  (%d samples, no -g; goal <= %d)"
          % ("bytes per sample: dump", "-", nbytes / big, big, DUMP_GOAL))
    print("serial link: dump of %d samples, %d bytes in %.2f s: %.0f samples/s, %.0f bytes/s "
          "(QEMU); at 115200 baud: %.0f samples/s, %.0f with -g"
          % (big, nbytes, secs, big / secs, nbytes / secs, BAUD_BYTES / (nbytes / big),
             BAUD_BYTES / sizes[1]))
    return floor


def kernel_figures(firmware, sdk, timeout):
    """(empty's :u:k count, sumloop's and hello's CPL-0 windows, handler insns per PMI, tail,
    bound) on a kernel."""
    import tempfile
    work = tempfile.mkdtemp(prefix="nbprof-bench-")
    img = os.path.join(work, "bench.img")
    extra = ["--bios", os.path.join(qemu.BUILD, "nbprof32.elf")] if firmware == "bios" else []
    subprocess.run([os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))),
                                 "build", "mkimage")] + extra +
                   [img, os.path.join(qemu.BUILD, "BOOTX64.EFI"), "",
                    os.path.join(qemu.BUILD, sdk, "hello.elf"),
                    os.path.join(qemu.BUILD, sdk, "sumloop.elf")],
                   check=True, stdout=subprocess.DEVNULL)
    code, template = qemu.find_firmware(firmware)
    varstore = qemu.make_vars(template) if template else None
    argv = qemu.command(img, varstore, code, icount=True, firmware=firmware)
    child = pexpect.spawn(argv[0], argv[1:], encoding="utf-8", codec_errors="replace",
                          timeout=timeout)
    try:
        child.expect_exact(READY, timeout=300)
        child.expect_exact(PROMPT, timeout=60)
        empty = COUNT.search(run(child, "stat -e instr_retired empty"))
        window = WINDOW.search(run(child, "stat -e instr_retired sumloop"))
        marked = WINDOW.search(run(child, "stat -e instr_retired hello"))
        run(child, "record -e instr_retired -c 5000 --ring 3 loop 100000")
        pmu = run(child, "pmu")
        tail, way = TAIL.search(pmu), WAY_IN.search(pmu)
    finally:
        child.terminate(force=True)
        if varstore:
            os.unlink(varstore)
        os.unlink(img)
        os.rmdir(work)
    if not (empty and window and marked and tail and way):
        raise SystemExit("bench: %s: a kernel-window figure is missing" % firmware)
    return (int(empty.group(1)), int(window.group(1)), int(marked.group(1)), int(tail.group(1)),
            int(tail.group(2)), int(tail.group(3)), int(way.group(1)))


def print_kernel_figures(figs, floor=None):
    print()
    print("%-50s %12s %12s" % ("the kernel's own code a Pentium 4 counts (model)",
                                KERNELS[0][0], KERNELS[1][0]))
    names = ("stat -e instr_retired empty: :u:k count", "a program's window: CPL-0 instructions",
             "  with the SDK's markers (hello)", "PMI handler: instructions per PMI",
             "PMI handler: tail after a counter's restart")
    goals = ("goal <= %d" % WINDOW_GOALS[0], "goal <= %d" % WINDOW_GOALS[1],
             "goal <= %d" % WINDOW_GOALS[1], "",
             "goal <= %d; refused at <= %d" % (WINDOW_GOALS[2], figs[0][5]))
    if floor:   # the floor is the x86-64 kernel's (sampling)
        goals = goals[:3] + ("x86-64: %.1f x the floor total; goal <= %.1f"
                             % (figs[0][3] / floor, HANDLER_GOAL),) + goals[4:]
    for k, (name, goal) in enumerate(zip(names, goals)):
        print("%-50s %12d %12d  %s" % (name, figs[0][k], figs[1][k], goal))
        if k == 3:  # the way in the model reports with the handler (pmu, NMI from CPL 3)
            print("%-50s %12d %12d" % ("  of which its way in (stub to dispatcher)",
                                       figs[0][6], figs[1][6]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=100)
    ap.add_argument("--image", default=os.path.join(qemu.BUILD, "nbprof.img"))
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--serial", metavar="DEV", help="a real machine on this serial port")
    args = ap.parse_args()

    varstore = port = copy = None
    if args.serial:
        import serial
        from pexpect import fdpexpect
        port = serial.Serial(args.serial, 115200, bytesize=8, parity="N", stopbits=1, timeout=0)
        child = fdpexpect.fdspawn(port.fileno(), encoding="utf-8", codec_errors="replace",
                                  timeout=args.timeout)
    else:
        code, template = qemu.find_firmware()
        varstore = qemu.make_vars(template)
        image, left_out = qemu.image_without_cfg(args.image)
        if left_out:        # its run = lines would run first (make run CFG=x.cfg leaves them)
            copy = image
            sys.stderr.write("bench: booting a copy of the image without its nbprof.cfg (%s)\n"
                             % "; ".join(left_out))
        argv = qemu.command(image, varstore, code, icount=True)
        child = pexpect.spawn(argv[0], argv[1:], encoding="utf-8", codec_errors="replace",
                              timeout=args.timeout)
    try:
        child.expect_exact(READY, timeout=300)
        child.expect_exact(PROMPT, timeout=60)
        backend = re.search(r"^backend: (\S+)", run(child, "pmu"), re.M)
        n = args.repeats
        bench = BENCH.search(run(child, "pmu bench %d" % n))
        empty = STATS.findall(run(child, "stat -r %d empty" % n))
        loop = STATS.findall(run(child, "stat -r %d -e instr_retired loop 100" % n))
        samp = None if port else sampling(child)
        per_step = None if port else step_cost(child)
        child.terminate(force=True)
        kfigs = None if port else [kernel_figures(fw, sdk, args.timeout) for _, fw, sdk in KERNELS]
    except (pexpect.TIMEOUT, pexpect.EOF) as e:
        raise SystemExit("bench: the machine did not answer (%s)" % type(e).__name__)
    finally:
        if port:
            port.close()
        else:
            child.terminate(force=True)
            os.unlink(varstore)
            if copy:
                os.unlink(copy)
    where = ("serial %s" % args.serial if port else
             "QEMU TCG -icount shift=7 (1 instruction = %d TSC)" % TSC_PER_INSN)
    print("nbprof bench: %s, %s backend, %d runs"
          % (where, backend.group(1) if backend else "unknown", n))
    row("", "", ["min", "median", "tmean", "max"])
    row("stat start+stop+read", "TSC", bench.groups())
    if not port:
        row("stat start+stop+read", "instructions", insns(bench.groups()))
    for r in empty:
        row("stat empty: " + r[4], "count", r[:4])
    for r in loop:
        row("stat loop 100: " + r[4], "count", r[:4])
    if per_step is not None:
        print()
        print("stepped instruction under stat (default events, memory model on): %.1f guest "
              "instructions (goal <= %d)" % (per_step, STEP_GOAL))
    floor = print_sampling(*samp) if samp else None
    if kfigs:
        print_kernel_figures(kfigs, floor)
    return 0


if __name__ == "__main__":
    sys.exit(main())
