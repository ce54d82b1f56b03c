"""test_linux.py - unmodified static Linux programs under run, stat and record.

The programs are ordinary C with a C library, built here: with musl-gcc
-static (Debian's musl-tools) for the 64-bit kernel, with gcc -m32 -static
(glibc from gcc-multilib) for the 32-bit one. Both give a fixed-address
executable (ET_EXEC at 0x400000 or 0x8048000) that makes Linux system calls
(SYSCALL, int 0x80): workload/linux.c answers them. They go onto the stick.

- lxsort N: malloc'ed array of N numbers from a linear congruential
  generator, qsort with its own comparison function, printf of the results.
  The expected line is computed here from the same generator.
- lxloop N: a loop of exactly 2 instructions per turn (sub, jnz) between the
  markers of sdk/nbprof_count.h, so that stat counts 2N plus the markers'
  few instructions, whatever the C library does around it.
- lxbad: calls kill(), which nbprof does not answer: the run stops naming it.
"""

import os
import re
import shutil
import subprocess

import pytest

from nbproflib import qemu
from conftest import REPO, WORK, kernel_bits

FIRMWARE = os.environ.get("NBPROF_FIRMWARE") or qemu.DEFAULT_FIRMWARE
BITS = kernel_bits(FIRMWARE)
SRC = os.path.join(WORK, "linux%d" % BITS)
TOOL = os.path.join(REPO, "tools", "nbprof")

SORT_C = r"""
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) int lx_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	int *v = malloc(n * sizeof(*v));
	unsigned s = 1;
	long sum = 0;

	if (!v)
		return 1;
	for (int i = 0; i < n; i++) {
		s = s * 1103515245u + 12345u;
		v[i] = (int)((s >> 8) % 10000);
		sum += v[i];
	}
	qsort(v, n, sizeof(*v), lx_cmp);
	printf("sorted %d: min %d median %d max %d sum %ld, %d args\n", n, v[0], v[n / 2],
	       v[n - 1], sum, argc);
	free(v);
	return 7;
}
"""

LOOP_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include "nbprof_count.h"

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], 0, 10) : 1000;

	nb_count_start();
	__asm__ volatile("1:\n\tsub $1, %0\n\tjnz 1b" : "+r"(n) : : "cc");
	nb_count_stop();
	printf("looped\n");
	return 0;
}
"""

BAD_C = r"""
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	printf("before kill\n");
	fflush(stdout);
	kill(getpid(), 0);
	printf("after kill\n");
	return 0;
}
"""


def compiler():
    """musl-gcc for x86-64, gcc -m32 (glibc) for i386: both -static, fixed-address."""
    return (["musl-gcc", "-static"] if BITS == 64 else ["gcc", "-m32", "-static"])


def build(name, source):
    os.makedirs(SRC, exist_ok=True)
    src = os.path.join(SRC, name + ".c")
    with open(src, "w") as f:
        f.write(source)
    out = os.path.join(SRC, name + ".elf")
    subprocess.run(compiler() + ["-O2", "-I", os.path.join(REPO, "sdk"), src, "-o", out],
                   check=True)
    return out


def elf_type(path):
    with open(path, "rb") as f:
        head = f.read(18)
    return head[4], int.from_bytes(head[16:18], "little")


SORT, LOOP, BAD = build("lxsort", SORT_C), build("lxloop", LOOP_C), build("lxbad", BAD_C)
BOOT = {"programs": [SORT, LOOP, BAD]}


def expected_sort(n, argc):
    s, v = 1, []
    for _ in range(n):
        s = (s * 1103515245 + 12345) & 0xFFFFFFFF
        v.append((s >> 8) % 10000)
    total = sum(v)
    v.sort()
    return "sorted %d: min %d median %d max %d sum %d, %d args" % (
        n, v[0], v[n // 2], v[-1], total, argc)


def count_u(out):
    m = re.search(r"^\s+(\d+)  instr_retired:\S+:u  ", out, flags=re.M)
    assert m, out
    return int(m.group(1))


def test_programs_are_fixed_address_executables():
    # ELF class 2 (64) or 1 (32), e_type 2: ET_EXEC, what the loader once refused
    assert elf_type(SORT) == ({64: 2, 32: 1}[BITS], 2)


def test_loaded_at_the_linked_address(nb):
    out = nb.cmd("programs")
    base = {64: "0000000000400000", 32: "0000000008048000"}[BITS]
    assert re.search(r"^lxsort\s+\d+\s+[0-9a-f]{8}\s+%s\s" % base, out, flags=re.M), out


def test_printf_malloc_qsort_output_and_status(nb):
    out = nb.cmd("run lxsort 300 x y")
    assert expected_sort(300, 4) in out, out
    assert "returned: 7" in out, out


def test_ring_0_is_refused_with_the_reason(nb):
    out = nb.cmd("run --ring 0 lxsort")
    assert "a Linux program runs at ring 3 only" in out, out
    assert "sorted" not in out, out


def test_whole_program_is_counted_by_default(nb):
    # no markers: stat counts every instruction the program retires, as the stepped run
    # does, and the exit trampoline's int 0x80
    out = nb.cmd("run --step lxsort 50")
    assert expected_sort(50, 2) in out, out
    stepped = int(re.search(r"instructions: (\d+) \(CPL 3\)", out).group(1))
    out = nb.cmd("stat -e instr_retired:u lxsort 50", timeout=120)
    assert count_u(out) == stepped + 1, out


def test_markers_count_only_the_known_loop(nb):
    c1, c3 = (count_u(nb.cmd("stat -e instr_retired:u lxloop %d" % n)) for n in (1000, 3000))
    assert c3 - c1 == 2 * 2000                  # 2 instructions a turn, nothing else varies
    assert 2 * 1000 <= c1 < 2 * 1000 + 16       # the markers' own few instructions


def test_record_names_the_programs_own_functions(nb):
    # every PMI's handler is stepped too: a loaded machine may take more than the
    # stepped time limit's 10 s
    assert "error" not in nb.cmd("programs --timeout 120")
    out = nb.cmd("record -e instr_retired:u -c 503 lxsort 100", timeout=300)
    assert "error" not in out, out
    rep = nb.cmd("report")
    rows = re.findall(r"^\s+[\d.]+%\s+\d+\s+(\S+)", rep, flags=re.M)
    assert "lx_cmp" in rows and "main" in rows, rep
    dump = nb.cmd("dump", timeout=120)
    # a fixed-address program: link address 0 is at 0, its span counts from there
    m = re.search(r"^NBP: lxsort base=0 span=([0-9a-f]+) ", dump, flags=re.M)
    assert m and int(m.group(1), 16) > {64: 0x400000, 32: 0x8048000}[BITS], dump


def test_unknown_system_call_stops_the_run_with_its_name(nb):
    nr = {64: 62, 32: 37}[BITS]
    out = nb.cmd("run lxbad")
    assert "before kill" in out and "after kill" not in out, out
    assert "system call %d (kill)" % nr in out, out
    out = nb.cmd("stat -e instr_retired:u lxbad")
    assert "system call %d (kill)" % nr in out and "instr_retired" not in out.split(
        "system call")[-1], out


@pytest.mark.skipif(BITS == 32, reason="the host side is the same for both kernels; the "
                    "glibc i386 program is 700 KiB, slow to upload: the 64-bit run covers it")
def test_host_command_uploads_and_names_samples_in_perf_data(tmp_path):
    from conftest import make_image, firmware_suffix
    image = make_image("test_linux_host" + firmware_suffix(FIRMWARE), firmware=FIRMWARE)
    out = tmp_path / "out"
    p = subprocess.run(["/usr/bin/python3", TOOL, "--qemu", "--firmware", FIRMWARE, "--image",
                        image, "record", "-e", "instr_retired:u", "-c", "1009", SORT, "100",
                        "-o", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    assert expected_sort(100, 2) in p.stdout, p.stdout
    script = (out / "perf.script").read_text()
    assert " lx_cmp+0x" in script, script[:2000]
    if not shutil.which("perf"):
        pytest.skip("Debian's linux-perf is not installed: perf.data is not read back")
    rep = subprocess.run(["perf", "report", "-i", str(out / "perf.data"), "--stdio",
                          "--sort", "sym"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         universal_newlines=True, timeout=120).stdout
    assert "lx_cmp" in rep, rep
