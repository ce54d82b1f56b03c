"""test_check_layers.py - tools/dev/check-layers, the check that every folder
includes only from itself and the layers below it.

A small fake tree that keeps every rule passes; then each rule is broken
once, in a copy of it, and the check must name that file and line and exit
1; then the real tree, which must pass.
"""

import os
import subprocess

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECK = os.path.join(REPO, "tools", "dev", "check-layers")

# A tree that keeps every rule: one file per layer, each including the one below.
GOOD = {
    "sdk/nbprof_abi.h": "#define NB_CALL_WRITE 1\n",
    "sdk/nbprof.h": '#include <stdint.h>\n#include "nbprof_abi.h"\n',
    "sdk/crt0.S": '#include "nbprof_abi.h"\n',
    "sdk/examples/hello.c": '#include "nbprof.h"\n',
    "tests/host/prog_reloc.c": '#include "nbprof.h"\n',
    "tests/host/test_x.c": "#include <stdio.h>\n#include <cmocka.h>\n",   # not kernel code
    # not kernel code (written in two parts: test_tool_paths takes a whole tools/ path for a real file)
    "tools" "/gen.c": '#include "shell/shell.h"\n',
    "lib/printf.h": "#include <stdarg.h>\n#include <stddef.h>\n",
    "pmu/p4_regs.h": '#include "lib/printf.h"\n',
    "pmu/model/p4_model.h": '#include "pmu/p4_regs.h"\n',
    "arch/x86/cpu.h": '#include "pmu/model/p4_model.h"\n',
    "arch/x86/64/entry.S": '#include "arch/x86/cpu.h"\n',
    "arch/x86/32/entry.S": '#include "arch/x86/cpu.h"\n',
    "workload/program.h": '#include "sdk/nbprof_abi.h"\n#include "arch/x86/cpu.h"\n',
    "prof/backend.h": '#include "workload/program.h"\n',
    "prof/perf.c": '#include "prof/backend.h"\n',
    "prof/backend/hw.c": '#include "prof/backend.h"\n',
    "prof/backend/model.h": "#include <stdbool.h>\n",
    "selftest/selftest.h": '#include "prof/backend.h"\n',
    "shell/shell.h": '#include "selftest/selftest.h"\n#include "prof/backend/model.h"\n',
    "kernel/kmain.c": '#include "shell/shell.h"\n',
    "boot/efi_main.c": '#include <efi.h>\n#include <efilib.h>\n#include "kernel/kmain.c"\n',
}


def make_tree(root, files):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def run(root):
    p = subprocess.run(["/usr/bin/python3", CHECK, "--root", str(root)],
                       capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def test_good_tree_passes(tmp_path):
    make_tree(tmp_path, GOOD)
    rc, out = run(tmp_path)
    assert rc == 0, out
    # 20 files are kernel code or programs (tests/host/test_x.c and tools/ + gen.c are not)
    assert out.startswith("check-layers: 20 files, 25 includes, all within the order sdk < lib < "), out


# Each case: the files that change from GOOD, and what the one violation line must say.
BROKEN = {
    "an include that points up": (
        {"pmu/p4_regs.h": '#include "prof/backend.h"\n'},
        'pmu/p4_regs.h:1: pmu/ includes "prof/backend.h" of prof/, a higher layer'),
    "an include that points up from a subfolder (walked)": (
        {"arch/x86/32/entry.S": '#include "arch/x86/cpu.h"\n#include "shell/shell.h"\n'},
        'arch/x86/32/entry.S:2: arch/x86/ includes "shell/shell.h" of shell/, a higher layer'),
    "a subfolder that is a layer of its own": (
        {"prof/perf.c": '#include "prof/backend/model.h"\n'},
        'prof/perf.c:1: prof/ includes "prof/backend/model.h" of prof/backend/, a higher layer'),
    "a folder in no layer": (
        {"net/e1000.c": '#include "lib/printf.h"\n'},
        "net/e1000.c: in no layer; the order is sdk < lib < "),
    "an include of a file that does not exist": (
        {"prof/perf.c": '#include "prof/backend_model.h"\n'},
        'prof/perf.c:1: includes "prof/backend_model.h", which does not exist'),
    "a firmware header outside boot/": (
        {"kernel/kmain.c": "#include <efi.h>\n"},
        "kernel/kmain.c:1: kernel/ includes firmware header <efi.h>; only boot/ may"),
    "a C library header in the kernel": (
        {"lib/printf.h": "#include <stdio.h>\n"},
        "lib/printf.h:1: includes <stdio.h>, not a freestanding C header"),
    "the ABI header including the project": (
        {"sdk/nbprof_abi.h": '#define NB_CALL_WRITE 1\n#include <stdint.h>\n'},
        "sdk/nbprof_abi.h:2: the ABI header includes stdint.h; it includes nothing"),
    "the SDK including the kernel": (
        {"sdk/crt0.S": '#include "nbprof_abi.h"\n#include "lib/printf.h"\n'},
        'sdk/crt0.S:2: includes "lib/printf.h"; the SDK and users\' programs include only'),
    "a program including the kernel": (
        {"tests/host/prog_reloc.c": '#include "workload/program.h"\n'},
        'tests/host/prog_reloc.c:1: includes "workload/program.h"; the SDK and users\' programs'),
    "a program including what the SDK does not have": (
        {"sdk/examples/hello.c": '#include "stdio_nb.h"\n'},
        'sdk/examples/hello.c:1: includes "stdio_nb.h", which is not in sdk/'),
    "a folder with more than a quarter of the kernel": (
        {"prof/record.c": '#include "prof/backend.h"\n' + "int x;\n" * 40},
        "prof/: 43 of the kernel's 61 lines (70%), more than a quarter"),
    "the kernel including more of sdk/ than the ABI header": (
        {"workload/program.h": '#include "sdk/nbprof.h"\n'},
        'workload/program.h:1: includes "sdk/nbprof.h"; of sdk/ only the ABI header sdk/nbprof_abi.h'),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_each_rule_fails(tmp_path, case):
    change, want = BROKEN[case]
    make_tree(tmp_path, {**GOOD, **change})
    rc, out = run(tmp_path)
    assert rc == 1, out
    lines = out.splitlines()
    assert len(lines) == 2, out                      # the violation and the count
    assert lines[0].startswith(want), out
    assert lines[1].startswith("check-layers: 1 violation(s) of the layer order sdk < lib"), out


def test_no_source_is_no_pass(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "x.c").write_text('#include "y.h"\n')   # docs/ is not walked
    rc, out = run(tmp_path)
    assert rc == 1
    assert "nothing checked" in out


def test_bad_root(tmp_path):
    rc, out = run(tmp_path / "missing")
    assert rc == 2
    assert "not a folder" in out


def test_the_tree_passes():
    rc, out = run(REPO)
    assert rc == 0, out
    assert "all within the order" in out
