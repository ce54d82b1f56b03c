"""test_fpu_state.py - the kernel never touches the x87/MMX/SSE state but where it means to.

The assist events' operand values (arch/x86/step.h, struct step_fp) are FXSAVE
images taken in the #DB handler: they are the workload's state only if no kernel
code in between executes an x87, MMX or SSE instruction (the C code is built with
-mgeneral-regs-only, arch/x86/fpu.h). Here every instruction objdump shows in both
kernels is checked: only the workloads (wl_*), fpu_init_lp (CR0/CR4 and FNINIT at
start-up) and step_fp_step (its FXSAVE, which leaves the state as it was, SDM
Vol. 2A FXSAVE) may touch it.
"""

import os
import re
import subprocess

import pytest

from conftest import BUILD

ALLOWED = ("fpu_init_lp", "step_fp_step")
# The sibling's start-up code begins in real mode (arch/x86/*/trampoline.S): objdump decodes
# its 16-bit bytes as the ELF's mode, and what it shows there is not what runs.
MISREAD = ("smp_tramp_",)
STATE_OPERAND = re.compile(r"%(xmm\d+|mm[0-7]|st)\b")
STATE_MNEMONIC = {"ldmxcsr", "stmxcsr", "emms", "fxsave", "fxrstor", "fxsave64", "fxrstor64"}
FUNC = re.compile(r"^[0-9a-f]+ <([^>]+)>:$")
INSN = re.compile(r"^\s*[0-9a-f]+:\t(\S+)\s*(.*)$")


def touching(elf):
    """{function: [instruction, ...]} of the functions that execute x87/MMX/SSE instructions."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", elf], check=True,
                         capture_output=True, text=True).stdout
    found, fn = {}, None
    for line in out.splitlines():
        m = FUNC.match(line)
        if m:
            fn = m.group(1)
            continue
        m = INSN.match(line)
        if not m or fn is None:
            continue
        mnemonic, operands = m.group(1), m.group(2)
        if mnemonic.startswith("f") or mnemonic in STATE_MNEMONIC or STATE_OPERAND.search(operands):
            found.setdefault(fn, []).append(mnemonic + " " + operands)
    return found


@pytest.mark.parametrize("elf", ["nbprof.so", "nbprof32.elf"])
def test_only_workloads_and_the_fxsave_touch_the_fpu(elf):
    path = os.path.join(BUILD, elf)
    if not os.path.exists(path):
        pytest.skip("%s not built" % elf)
    found = touching(path)
    stray = {fn: insns for fn, insns in found.items()
             if not fn.startswith(("wl_",) + MISREAD) and fn not in ALLOWED}
    assert not stray, stray
    # the check sees what it should: the workloads' arithmetic and the handler's FXSAVE
    assert "wl_fpassist" in found and "wl_fpmix" in found
    assert any(i.startswith("fxsave") for i in found["step_fp_step"])
