"""test_pebs.py - PEBS sampling on the model backend (fact sheet section 5).

Expected numbers come from the documents, not from running the code:
- arch/x86/workloads.S: wl_memwalk's listing; one `movzbl (%rdi,%r10)` load
  per STRIDE bytes, M = ceil(SIZE/STRIDE) per pass; besides them the
  function pops %rbp and returns (two more loads) and pushes %rbp (one
  store); offsets of its instructions from `objdump -d` of the kernel ELF;
- fact sheet 5.6: uop_type TAGLOADS tags load uops and front_end_event
  counts them at retirement; 5.2: a PEBS record holds the linear IP of the
  instruction that caused the event, and the counter is reloaded from the
  counter-reset field (-period) after each record, so with period P the
  k-th record is the (kP)-th tagged load;
- SDM 18.16.3: MY_THR / OTH_THR are relative to the LP that writes
  MSR_PEBS_ENABLE (the shell's LP0 programs the PMU).
"""

import os
import re
import subprocess

import pytest
import qemu  # tools/, put on the path by conftest.py

ELF = os.path.join(qemu.BUILD, "nbprof.so")
PEBS = re.compile(r"^PEBS: (\d+) records drained in (\d+) drains \((\d+) slots per LP, "
                  r"threshold 1 record below the maximum\), buffer found full (\d+) time", re.M)
SAMPLES = re.compile(r"^samples: (\d+) stored, (\d+) held, (\d+) lost", re.M)
SKID = re.compile(r"^skid: #(\d+) \(interrupt\) vs #(\d+) \(PEBS\): (\d+) sample pairs, (\d+) at "
                  r"the PEBS IP, mean (\d+) bytes, max (\d+) bytes", re.M)
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


def memwalk_loads(size, stride, passes=1):
    """Offsets of the loads a stepped wl_memwalk retires, in order."""
    ins = function_insns("wl_memwalk")
    load = [off for off, text in ins if text.startswith("movzbl")]
    pop = [off for off, text in ins if text.startswith("pop")]
    ret = [off for off, text in ins if text.startswith("ret")]
    assert len(load) == 1 and len(pop) == 1 and len(ret) == 1, ins
    m = -(-size // stride)
    return load * (m * passes) + pop + ret


def script_ips(nb, event):
    """wl_memwalk offsets of the `script` samples of events whose name starts with `event`."""
    ips = []
    for block in nb.cmd("script", timeout=60).split("\n\n"):
        lines = [l for l in block.strip().split("\n") if l.strip()]
        if not lines or (" %s" % event) not in lines[0]:
            continue
        sym = lines[1].split()[1]
        assert sym.startswith("wl_memwalk+0x"), block
        ips.append(int(sym.split("+0x")[1].split()[0], 16))
    return ips


def record(nb, args):
    out = nb.cmd("record " + args, timeout=180)
    assert "error" not in out, out
    return out


def test_pebs_samples_are_the_tagged_loads(nb):
    size, stride, p = 4096, 16, 5
    loads = memwalk_loads(size, stride)
    out = record(nb, "--throttle 100 -e uop_type:tagloads -e front_end_event:nbogus:pebs "
                 "-c %d memwalk %d %d" % (p, size, stride))
    m = PEBS.search(out)
    assert m, out
    assert int(m.group(1)) == len(loads) // p      # records == count / period, exactly
    assert int(m.group(4)) == 0
    s = SAMPLES.search(out)
    assert int(s.group(1)) == len(loads) // p and int(s.group(3)) == 0
    want = [loads[k * p - 1] for k in range(1, len(loads) // p + 1)]
    assert script_ips(nb, "front_end_event:pebs") == want
