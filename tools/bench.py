#!/usr/bin/python3
"""bench.py - what counting costs, measured in QEMU with -icount shift=7.

    tools/bench.py [--repeats N] [--image build/nbprof.img]

Boots the image once (model backend) with a deterministic clock: under
-icount shift=7 QEMU's TSC advances 128 per guest instruction, so a TSC
delta divided by 128 is an instruction count. Then it runs
  pmu bench N        stat's start/stop/read sequence, N times (TSC cycles)
  stat -r N empty    the spread of an empty measurement (clockticks and
                     instructions over the stepped `empty` workload)
  stat -r N -e instr_retired loop 100
and prints one small table. `make bench` runs it. Exit status 1 when the
machine does not boot or a command fails.
"""

import argparse
import os
import re
import subprocess
import sys

import pexpect

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qemu  # noqa: E402

PROMPT = "nbprof> "
READY = "nbprof: ready"
TSC_PER_INSN = 128      # -icount shift=7
ANSI = re.compile(r"\x1b(\[[0-9;=?]*[A-Za-z]|[()][0-9A-Za-z]|[=>])")
STATS = re.compile(r"^\s*(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\w+)\S*\s+counter", re.M)
BENCH = re.compile(r"min (\S+) median (\S+) tmean (\S+) max (\S+)")


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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=100)
    ap.add_argument("--image", default=os.path.join(qemu.BUILD, "nbprof.img"))
    ap.add_argument("--timeout", type=int, default=900)
    args = ap.parse_args()

    code, template = qemu.find_firmware()
    varstore = qemu.make_vars(template)
    argv = qemu.command(args.image, varstore, code, icount=True)
    child = pexpect.spawn(argv[0], argv[1:], encoding="utf-8", codec_errors="replace",
                          timeout=args.timeout)
    try:
        child.expect_exact(READY, timeout=300)
        child.expect_exact(PROMPT, timeout=60)
        n = args.repeats
        bench = BENCH.search(run(child, "pmu bench %d" % n))
        empty = STATS.findall(run(child, "stat -r %d empty" % n))
        loop = STATS.findall(run(child, "stat -r %d -e instr_retired loop 100" % n))
    except (pexpect.TIMEOUT, pexpect.EOF) as e:
        raise SystemExit("bench: the machine did not answer (%s)" % type(e).__name__)
    finally:
        child.terminate(force=True)
        os.unlink(varstore)
    print("nbprof bench: QEMU TCG -icount shift=7 (1 instruction = %d TSC), model backend, %d runs"
          % (TSC_PER_INSN, n))
    row("", "", ["min", "median", "tmean", "max"])
    row("stat start+stop+read", "TSC", bench.groups())
    row("stat start+stop+read", "instructions", insns(bench.groups()))
    for r in empty:
        row("stat empty: " + r[4], "count", r[:4])
    for r in loop:
        row("stat loop 100: " + r[4], "count", r[:4])
    return 0


if __name__ == "__main__":
    sys.exit(main())
