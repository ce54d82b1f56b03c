"""test_stat_cpu.py - the PMU commands on a CPU that is not NetBurst.

Family 06H is not NetBurst (PMU reference 7), so no backend is chosen at boot;
stat explains why and `pmu backend model 0F_04` selects a software model,
after which a loop of N iterations retires 3N + 6 instructions
(arch/x86/64/workloads.S, wl_loop).
"""

import re

BOOT = {"sig": (6, 15, 1)}


def test_no_backend_then_model_on_request(nb):
    m = re.search(r"^pmu: backend none: (.*)$", nb.transcript, re.M)
    assert m and "not a NetBurst CPU" in m.group(1), nb.transcript
    out = nb.cmd("stat loop 10")
    assert out.startswith("error: no PMU backend") and "not a NetBurst" in out
    assert nb.cmd("pmu").startswith("backend: none")
    out = nb.cmd("pmu backend hw")
    assert out.startswith("error: cannot use the hardware PMU") and "NetBurst" in out
    assert "signature" in nb.cmd("pmu backend model")
    assert nb.cmd("pmu backend model 0F_04") == "backend: model"
    # ring 3 and :u: loop 10's 36 and its exit's int 0x80, without the kernel's window
    out = nb.cmd("stat -e instr_retired:u --ring 3 loop 10")
    assert re.search(r"^\s+37\s+instr_retired", out, re.M), out
