"""test_programs.py - users' programs as workloads (issue 12, the kernel side).

The programs are built here, from C and assembly sources in this file, with
the SDK (sdk/nbprof-cc: sdk/crt0.S, sdk/program.ld, sdk/nbprof.h). One of
them goes onto the stick (the ESP's nbprof/ folder) and is loaded at boot;
the others are uploaded over the serial line in nbprof's CRC-checked frames
(tools/nbprof's own encoder), one of them with a frame spoilt on purpose.

Under a 32-bit firmware (uefi-ia32, bios) the same sources are built with
`nbprof-cc -m32` (ELF32 i386) for the 32-bit kernel; a program of the other
class (wrongclass) goes onto the stick and over the line too, and is
refused with the reason both times.

Exact counts: asmloop.S's main retires 2 + 3 * 5000 + 1 = 15003 instructions
(listing below) and crt0.S's _start adds 7 (push, mov, mov, call; then mov,
pop, ret), so a stepped run retires 15010, all at CPL 3 unless --ring 0;
crt0.S's i386 _start adds 12 (push, mov, call, pop, mov, and, sub, push, push,
call; then leave, ret): 15015.
"""

import os
import re
import shutil
import struct
import subprocess
import time
import zlib

import pytest

from nbproflib import qemu
from nbproflib import upload as host_upload  # the frames tools/nbprof sends
from conftest import REPO, WORK, firmware_suffix, kernel_bits, make_image

TOOL = os.path.join(REPO, "tools", "nbprof")
SDK_CC = os.path.join(REPO, "sdk", "nbprof-cc")
FIRMWARE = os.environ.get("NBPROF_FIRMWARE") or qemu.DEFAULT_FIRMWARE
BITS = kernel_bits(FIRMWARE)            # the kernel's mode: the class of its programs
SRC = os.path.join(WORK, "programs" if BITS == 64 else "programs32")
CRT0_INSNS = {64: 7, 32: 12}[BITS]

SPIN_S = r"""
	.text
	.globl main
	.type main, @function
main:
	movl $5000, %ecx
	xorl %eax, %eax
1:	addl $3, %eax
	subl $1, %ecx
	jnz 1b
	ret
	.size main, . - main
	.section .note.GNU-stack, "", @progbits
"""
SPIN_INSNS = 2 + 3 * 5000 + 1 + CRT0_INSNS

WORK_C = r"""
#include "nbprof.h"

static volatile unsigned long sink;

__attribute__((noinline)) unsigned long work(unsigned long n)
{
	unsigned long s = 1;

	for (unsigned long i = 0; i < n; i++)
		s = s * 3 + (i ^ (s >> 7));
	return s;
}

__attribute__((noinline)) unsigned long light(unsigned long n)
{
	return n + 1;
}

static unsigned long number(const char *p)
{
	unsigned long n = 0;

	while (*p >= '0' && *p <= '9')
		n = n * 10 + (unsigned long)(*p++ - '0');
	return n;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? number(argv[1]) : 10;

	nb_puts("args:");
	for (int i = 0; i < argc; i++) {
		nb_puts(" ");
		nb_puts(argv[i]);
	}
	nb_puts("\n");
	nb_count_start();
	sink = work(n);
	nb_count_stop();
	sink += light(n);
	return 40 + argc;
}
"""

CRASH_C = r"""
#include "nbprof.h"

__attribute__((noinline)) void crash(void)
{
	__builtin_trap();	/* ud2: #UD, vector 6 */
}

int main(int argc, char **argv)
{
	nb_puts("about to crash\n");
	crash();
	return 0;
}
"""

FOREVER_S = r"""
	.text
	.globl main
	.type main, @function
main:
1:	jmp 1b
	.size main, . - main
	.section .note.GNU-stack, "", @progbits
"""


def build(name, source, suffix, bits=BITS):
    os.makedirs(SRC, exist_ok=True)
    src = os.path.join(SRC, name + suffix)
    with open(src, "w") as f:
        f.write(source)
    out = os.path.join(SRC, name + ".elf")
    subprocess.run([SDK_CC] + (["-m32"] if bits == 32 else []) + [src, "-o", out], check=True)
    return out


def class_refusal(bits, kernel):
    """workload/program.c's reason for a program of the other class."""
    return "a %d-bit program: this is the %d-bit kernel; build with nbprof-cc%s" % (
        bits, kernel, " -m32" if kernel == 32 else " without -m32")


SPIN = build("asmloop", SPIN_S, ".S")
WORKP = build("work", WORK_C, ".c")
CRASH = build("crash", CRASH_C, ".c")
FOREVER = build("forever", FOREVER_S, ".S")
WRONG = build("wrongclass", SPIN_S, ".S", bits=96 - BITS)
STICK = os.path.join(SRC, "stickwork.elf")
shutil.copyfile(WORKP, STICK)

BOOT = {"programs": [STICK, WRONG]}

# The upload protocol and the program table are portable code (workload/upload.c,
# workload/program.c, shell/cmd_program.c), the same in both kernels: the 64-bit
# run covers them, and make check's 32-bit subsets save their time.
portable_only = pytest.mark.skipif(
    BITS == 32, reason="portable code the same in both kernels: checked by the 64-bit run")



def data(path):
    with open(path, "rb") as f:
        return f.read()


def programs_listed(nb):
    out = nb.cmd("programs")
    return {m.group(1): int(m.group(2), 16)
            for m in re.finditer(r"^(\S+)\s+\d+\s+([0-9a-f]{8})\s", out, flags=re.M)}


def send_frames(nb, t, blob, first, last, spoil=None):
    """Frames first..last-1 (spoil: one of them with a changed character)."""
    for seq in range(first, last):
        line = t.upload_frame(blob, seq)
        if seq == spoil:
            i = len(line) // 2
            line = line[:i] + ("A" if line[i] != "A" else "B") + line[i + 1:]
        nb.send(line + "\r")


def upload_in_blocks(nb, t, blob, start):
    total = t.upload_frames(blob)
    k = start
    while k < total:
        end = min(total, (k // 16 + 1) * 16)
        send_frames(nb, t, blob, k, end)
        nb.expect(r"upload: %d/%d frames" % (end, total), 20)
        k = end


def test_program_loaded_from_the_stick(nb):
    assert "programs: stickwork (%d bytes) from the stick" % len(data(STICK)) in nb.transcript
    assert programs_listed(nb)["stickwork"] == zlib.crc32(data(STICK))
    out = nb.cmd("run stickwork 5 x")
    assert "args: stickwork 5 x" in out
    assert "workload: stickwork, ring 3" in out
    assert "returned: 43" in out


def test_a_program_of_the_other_class_is_refused_before_it_runs(nb):
    why = class_refusal(96 - BITS, BITS)
    assert "programs: nbprof/wrongclass.elf: %s" % why in nb.transcript
    before = programs_listed(nb)
    assert "wrongclass" not in before
    t = host_upload
    blob = data(WRONG)
    nb.send("upload programs %d wrongclass 0x%08x\r" % (len(blob), zlib.crc32(blob)))
    nb.expect(r"send from frame 0", 20)
    upload_in_blocks(nb, t, blob, 0)
    nb.send("NBU:END\r")
    nb.expect(r"error: upload: %s; nothing was changed" % re.escape(why), 20)
    nb.expect_exact("nbprof> ", 20)
    out = nb.cmd("programs")
    assert "kernel: %d-bit: it runs ELF%d" % (BITS, BITS) in out     # what tools/nbprof reads
    assert programs_listed(nb) == before
    assert "unknown workload" in nb.cmd("run wrongclass")


@portable_only
def test_corrupted_upload_is_detected_and_resumed(nb):
    t = host_upload
    blob = data(WORKP)
    total = t.upload_frames(blob)
    assert total > 20
    crc = zlib.crc32(blob)
    nb.send("upload programs %d work 0x%08x\r" % (len(blob), crc))
    nb.expect(r"send from frame 0", 20)
    send_frames(nb, t, blob, 0, 16, spoil=5)
    nb.expect(r"upload: frame 5: CRC mismatch", 20)
    nb.send("NBU:END\r")
    nb.expect(r"error: upload: broken at frame 5 of %d: resume with 'upload --resume "
              r"programs'" % total, 20)
    nb.expect_exact("nbprof> ", 20)
    assert "work" not in programs_listed(nb)          # nothing changed
    nb.send("upload --resume programs\r")
    nb.expect(r"send from frame 5", 20)
    upload_in_blocks(nb, t, blob, 5)
    nb.send("NBU:END\r")
    nb.expect(r"upload: work: %d bytes, CRC-32 %08x, loaded" % (len(blob), crc), 20)
    nb.expect_exact("nbprof> ", 20)
    assert programs_listed(nb)["work"] == crc
    assert "args: work 3" in nb.cmd("run work 3")


@portable_only
def test_bad_uploads_change_nothing(nb):
    t = host_upload
    blob = data(WORKP)
    before = programs_listed(nb)
    # the whole file's CRC-32 is not the announced one
    nb.send("upload programs %d stickwork 0x%08x\r" % (len(blob), zlib.crc32(blob) ^ 1))
    nb.expect(r"send from frame 0", 20)
    upload_in_blocks(nb, t, blob, 0)
    nb.send("NBU:END\r")
    nb.expect(r"error: upload: stickwork: the file's CRC-32 does not match; nothing was "
              r"changed", 20)
    nb.expect_exact("nbprof> ", 20)
    # a built-in workload's name is refused before anything is received
    assert "is a built-in workload's" in nb.cmd("upload programs 100 loop 0x1")
    assert programs_listed(nb) == before
    assert "no broken upload" in nb.cmd("upload --resume programs")


def upload(nb, path, name):
    t = host_upload
    blob = data(path)
    nb.send("upload programs %d %s 0x%08x\r" % (len(blob), name, zlib.crc32(blob)))
    nb.expect(r"send from frame 0", 20)
    upload_in_blocks(nb, t, blob, 0)
    nb.send("NBU:END\r")
    nb.expect(r"upload: %s: .* loaded" % name, 20)
    nb.expect_exact("nbprof> ", 20)


def empty_segment_over_memory(blob):
    """The D1 file: the second PT_LOAD (.data, with file bytes) given p_memsz 0 and an
    address 0xB000 before the image; the loader used to copy its bytes there."""
    b = bytearray(blob)
    wide = b[4] == 2
    phoff = struct.unpack_from("<Q" if wide else "<I", b, 32 if wide else 28)[0]
    size, (va, memsz) = (56, (16, 40)) if wide else (32, (8, 20))
    loads = [phoff + i * size for i in range(struct.unpack_from("<H", b, 56 if wide else 44)[0])
             if struct.unpack_from("<I", b, phoff + i * size)[0] == 1]
    ph = loads[1]
    struct.pack_into("<q" if wide else "<i", b, ph + va, -0xB000)
    struct.pack_into("<Q" if wide else "<I", b, ph + memsz, 0)
    return bytes(b)


def free_ram(nb):
    return re.search(r"^free RAM\s+(.*)$", nb.cmd("mem"), re.M).group(1)


def test_a_malformed_program_is_refused_and_frees_what_it_took(nb):
    """D1: a program whose .data header says p_memsz 0 at -0xB000 uploaded as "loaded"
    and overwrote memory before its image; it is refused, nothing changes."""
    t = host_upload
    blob = empty_segment_over_memory(data(WORKP))
    before, free0 = programs_listed(nb), free_ram(nb)
    nb.send("upload programs %d badseg 0x%08x\r" % (len(blob), zlib.crc32(blob)))
    nb.expect(r"send from frame 0", 20)
    upload_in_blocks(nb, t, blob, 0)
    nb.send("NBU:END\r")
    nb.expect(r"error: upload: .*p_filesz > p_memsz.*nothing was changed", 20)
    nb.expect_exact("nbprof> ", 20)
    assert programs_listed(nb) == before
    assert free_ram(nb) == free0


def test_a_program_that_never_returns_is_stopped_with_the_reason(nb):
    """Stepped, a program that never returns was stepped until the host gave up, with
    no hint of why; it stops after its stepping limit (programs --timeout) and says so."""
    t = host_upload
    blob = b"\xeb\xfe"                  # jmp $ (either kernel): main never returns
    nb.send("upload programs %d neverret 0x%08x --flat 0\r" % (len(blob), zlib.crc32(blob)))
    nb.expect(r"send from frame 0", 20)
    upload_in_blocks(nb, t, blob, 0)
    nb.send("NBU:END\r")
    nb.expect(r"upload: neverret: .* loaded", 20)
    nb.expect_exact("nbprof> ", 20)
    assert "error" in nb.cmd("programs --timeout x")
    assert "stepped programs stop after 2 s of stepping" in nb.cmd("programs --timeout 2")
    t0 = time.monotonic()
    out = nb.cmd("stat -e instr_retired neverret", timeout=90)
    took = time.monotonic() - t0
    m = re.search(r"error: still running after (\d+) instructions: no return from main\?", out)
    assert m and int(m.group(1)) > 1000, out
    assert took < 60, took
    # :u: at CPL 0 the overflow handler's own clockticks would count too
    out = nb.cmd("record -e instr_retired:u -c 100000 neverret", timeout=90)
    assert re.search(r"error: record: still running after \d+ instructions: no return from "
                     r"main\? \(programs --timeout\); samples so far kept", out), out
    assert "stop after 10 s" in nb.cmd("programs --timeout 10")
    nb.cmd("programs rm neverret")


def test_stepped_counts_exact_in_both_rings(nb):
    upload(nb, SPIN, "asmloop")
    out = nb.cmd("run --step asmloop")
    assert "instructions: %d (CPL 3)" % SPIN_INSNS in out
    assert "conditional: taken 4999, not taken 1" in out
    out = nb.cmd("run --step --ring 0 asmloop")
    assert "instructions: %d (CPL 0)" % SPIN_INSNS in out
    out = nb.cmd("stat -e instr_retired:u -e instr_retired:k asmloop")
    # :u is the program and its exit trampoline's int 0x80 (CPL 3); :k the kernel's own
    # code in the counting window, at most what the model stepped of it
    assert re.search(r"^\s+%d  instr_retired:\S+:u  " % (SPIN_INSNS + 1), out, flags=re.M), out
    k = int(re.search(r"^\s+(\d+)  instr_retired:\S+:k  ", out, flags=re.M).group(1))
    stepped = int(re.search(r"kernel code in the counting window: (\d+) stepped", out).group(1))
    assert 0 < k <= stepped, out


def region_count(nb, n):
    # :u: the kernel's own code in the counting window (the markers' gates) counts under OS
    out = nb.cmd("stat -e instr_retired:u stickwork %d" % n)
    m = re.search(r"^\s+(\d+)  instr_retired", out, flags=re.M)
    assert m, out
    return int(m.group(1))


def test_markers_count_only_the_region(nb):
    c100, c200, c300 = (region_count(nb, n) for n in (100, 200, 300))
    assert c300 - c200 == c200 - c100 > 0           # linear in the loop: only work() counted
    whole = nb.cmd("run --step stickwork 100")
    total = int(re.search(r"instructions: (\d+)", whole).group(1))
    assert c100 < total - 100                         # printing and light() are left out


def test_samples_named_by_the_programs_functions(nb):
    # :u: the program's own instructions (the loader's kernel code in the window counts under OS)
    out = nb.cmd("record -e instr_retired:u -c 101 stickwork 3000", timeout=120)
    assert "error" not in out, out
    rep = nb.cmd("report")
    rows = re.findall(r"^\s+[\d.]+%\s+\d+\s+(\S+)", rep, flags=re.M)
    assert rows and rows[0] == "work", rep
    assert re.search(r"^\s+[0-9a-f]+ work\+0x[0-9a-f]+ \(nbprof\)$", nb.cmd("script"),
                     flags=re.M)
    ann = nb.cmd("annotate work")
    assert "work" in ann and "error" not in ann
    dump = nb.cmd("dump", timeout=120)
    m = re.search(r"^NBP:( stickwork base=[0-9a-f]+ span=[0-9a-f]+ crc=%08x)\|([0-9A-F]{8})$"
                  % zlib.crc32(data(STICK)), dump, flags=re.M)
    assert m, dump
    assert int(m.group(2), 16) == zlib.crc32(m.group(1).encode())     # the line's own CRC


def has_frame(path, func):
    """Does func start with push %rbp / %ebp (a frame of its own), by objdump?"""
    at = int(next(l.split()[0] for l in subprocess.run(
        ["nm", path], stdout=subprocess.PIPE, check=True,
        universal_newlines=True).stdout.splitlines() if l.endswith(" " + func)), 16)
    dis = subprocess.run(["objdump", "-d", "--start-address=%d" % at,
                          "--stop-address=%d" % (at + 1), path], stdout=subprocess.PIPE,
                         check=True, universal_newlines=True).stdout
    return re.search(r"push\s+%[re]bp", dis) is not None


def moves_sp(path, func):
    """Does func touch the stack pointer anywhere (push, pop, call, rsp/esp)?"""
    dis = subprocess.run(["objdump", "-d", path], stdout=subprocess.PIPE, check=True,
                         universal_newlines=True).stdout
    body = dis.split("<%s>:" % func)[1].split("\n\n")[0]
    return re.search(r"\b(push|pop|call|enter|leave)|%[re]sp\b", body) is not None


def test_call_chains_walk_the_programs_frames(nb):
    # record -g: the frame-pointer walk of the program's own width, work <- main <- _start;
    # a leaf without a frame of its own that never moves the stack pointer (x86-64 work:
    # gcc gives a function that needs no stack no frame) has its return address at the
    # stack pointer (prof/samples.c sample_leaf_ret), so main is not left out
    frame, leaf = has_frame(STICK, "work"), not moves_sp(STICK, "work")
    assert frame or leaf or BITS == 32, "x86-64 work() is a frameless leaf"
    out = nb.cmd("record -g -e instr_retired:u -c 101 stickwork 1000", timeout=120)
    assert "error" not in out, out
    chains = [re.findall(r"^\s+[0-9a-f]+ (\S+?)\+0x[0-9a-f]+ ", block, flags=re.M)
              for block in nb.cmd("script", timeout=60).split("\n\n")]
    in_work = [c for c in chains if c and c[0] == "work"]
    assert len(in_work) > 20, chains
    want = (["main"] if frame or leaf else []) + ["_start"]
    assert all(c[1:1 + len(want)] == want for c in in_work), in_work


def test_fault_is_reported_and_the_shell_lives(nb):
    upload(nb, CRASH, "crash")
    for ring in ("3", "0"):
        out = nb.cmd("run --ring %s crash" % ring)
        assert "about to crash" in out
        assert re.search(r"crash\+0x[0-9a-f]+", out), out
        assert re.search(r"error: crash faulted at ring %s: vector 6" % ring, out), out
    assert "vendor" in nb.cmd("cpu").lower()


def test_ctrl_c_stops_a_runaway_stepped_program(nb):
    upload(nb, FOREVER, "forever")
    nb.send("run --step forever\r")
    nb.expect(r"run --step forever", 10)
    import time
    time.sleep(2)
    nb.send("\x03")
    nb.expect(r"interrupted by Ctrl-C", 30)
    nb.expect_exact("nbprof> ", 20)
    assert "vendor" in nb.cmd("cpu").lower()


def test_ctrl_c_stops_a_runaway_unstepped_program(nb):
    # unstepped, the program runs with interrupts on and the LAPIC timer as watchdog
    for ring in ("3", "0"):
        nb.send("run --ring %s forever\r" % ring)
        nb.expect(r"run --ring %s forever" % ring, 10)
        import time
        time.sleep(1)
        nb.send("\x03")
        nb.expect(r"error: forever: interrupted by Ctrl-C", 30)
        nb.expect_exact("nbprof> ", 20)
    assert "returned: 43" in nb.cmd("run stickwork 1 2")


def test_the_unstepped_limit_is_settable_and_named_when_it_fires(nb):
    """N9: a program running unstepped (as every program does on a Pentium 4's PMU) was
    stopped after a fixed 60 s; `programs --timeout unstepped=S` sets that limit, and
    the error says which limit stopped the program and how to raise it."""
    upload(nb, FOREVER, "forever")
    for bad in ("unstepped=0", "unstepped=86401", "hw=5", "5,stepped=6", "unstepped=5,"):
        out = nb.cmd("programs --timeout %s" % bad)
        assert "error: programs --timeout: SECONDS or stepped=S,unstepped=S" in out, out
    assert "unstepped ones after 60 s" in nb.cmd("programs --timeout")   # unchanged
    assert "stop after 10 s of stepping (0: no limit), unstepped ones after 3 s" in \
        nb.cmd("programs --timeout unstepped=3")
    for ring in ("3", "0"):
        t0 = time.monotonic()
        out = nb.cmd("run --ring %s forever" % ring, timeout=60)
        took = time.monotonic() - t0
        assert "error: forever: stopped at its unstepped time limit, 3 s (programs --timeout " \
               "unstepped=SECONDS)" in out, out
        assert 2.5 < took < 30, took
    assert "unstepped ones after 60 s" in nb.cmd("programs --timeout stepped=10,unstepped=60")


def printf_lines(argv):
    """What tests/host/prog_printf.c prints for argv, by the C rules its nb_printf and
    nb_snprintf follow, written with Python's % (which follows them too): the hh/h
    conversions' truncation and snprintf's cut are spelt out."""
    def s8(v):
        return (v & 0xFF) - 0x100 if v & 0x80 else v & 0xFF
    def s16(v):
        return (v & 0xFFFF) - 0x10000 if v & 0x8000 else v & 0xFFFF
    text = "%d+%d=%d, and more" % (40, 2, 42)
    return [
        "ints: %d %i %d %u %d" % (0, -1, -2 ** 31, 2 ** 32 - 1, len(argv)),
        "longs: %d %d %d %d" % (-1234567890, 4000000000, -2 ** 63, 2 ** 64 - 1),
        "hex: %x %X %#x %08x %x %o" % (0xbeef, 0xbeef, 255, 0x2a, 0x123456789abcdef, 8),
        "widths: [%5d] [%-5d] [%05d] [%+d] [% d] [%.3d] [%*d] [%-*d]"
        % (42, 42, -42, 7, 7, 5, 6, 99, 4, 1),
        "small: %d %d %d %d %c %%" % (s8(300), s16(70000), 511 & 0xFF, 12345, "Z"),
        "strings: [%s] [%8s] [%-8s] [%.2s] [%s]"
        % (argv[0], "ab", "ab", "abcdef", argv[1] if len(argv) > 1 else "-"),
        "snprintf: %d [%s]" % (len(text), text[:15]),
    ]


def test_nb_printf_prints_numbers(nb):
    """The SDK's nb_printf (formatted in the program, written through the gate), in
    the kernel's own program class (-m32 for the 32-bit kernel)."""
    with open(os.path.join(REPO, "tests", "host", "prog_printf.c")) as f:
        path = build("prog_printf", f.read(), ".c")
    upload(nb, path, "prog_printf")
    for ring in ("3", "0"):
        out = nb.cmd("run --ring %s prog_printf x7" % ring)
        lines = out.splitlines()
        want = printf_lines(["prog_printf", "x7"])
        assert lines[:len(want)] == want, out
        assert "returned: 0" in out
    assert "removed prog_printf" in nb.cmd("programs rm prog_printf")


@portable_only
def test_full_program_table_is_an_error_that_changes_nothing(nb):
    have = programs_listed(nb)
    extra = ["fill%d" % i for i in range(8 - len(have))]
    for name in extra:
        upload(nb, SPIN, name)
    before = programs_listed(nb)
    assert len(before) == 8
    t = host_upload
    blob = data(SPIN)
    nb.send("upload programs %d onemore 0x%08x\r" % (len(blob), zlib.crc32(blob)))
    nb.expect(r"send from frame 0", 20)
    upload_in_blocks(nb, t, blob, 0)
    nb.send("NBU:END\r")
    nb.expect(r"error: upload: onemore: the program table is full \(8 programs\); nothing was "
              r"changed", 20)
    nb.expect_exact("nbprof> ", 20)
    assert programs_listed(nb) == before
    for name in extra:
        assert "removed %s" % name in nb.cmd("programs rm %s" % name)
    assert "no program 'fill0'" in nb.cmd("programs rm fill0")
    assert sorted(programs_listed(nb)) == sorted(have)


# --- through the host command (its own QEMU) -------------------------------------------

@pytest.fixture(scope="module")
def image(firmware):
    return make_image("test_programs_host" + firmware_suffix(firmware), firmware=firmware)


def nbprof(image, *args):
    return subprocess.run(["/usr/bin/python3", TOOL, "--qemu", "--firmware", FIRMWARE,
                           "--image", image] + list(args),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=300)


@pytest.mark.qemu_only
@portable_only
def test_host_command_uploads_and_counts_exactly(image):
    p = nbprof(image, "--icount", "stat", "-e", "instr_retired:u", "-e", "instr_retired:k", SPIN)
    assert p.returncode == 0, p.stdout + p.stderr
    # :u the program and its exit's int 0x80; :k the kernel's window, at most what was stepped
    assert re.search(r"^\s+%d  instr_retired:\S+:u  " % (SPIN_INSNS + 1), p.stdout, flags=re.M), \
        p.stdout
    k = int(re.search(r"^\s+(\d+)  instr_retired:\S+:k  ", p.stdout, flags=re.M).group(1))
    stepped = int(re.search(r"kernel code in the counting window: (\d+) stepped", p.stdout).group(1))
    assert 0 < k <= stepped, p.stdout
    assert "upload asmloop: " in p.stderr
    p = nbprof(image, "stat", "--ring", "0", "-e", "instr_retired:k", SPIN)
    k = int(re.search(r"^\s+(\d+)  instr_retired:\S+:k  ", p.stdout, flags=re.M).group(1))
    stepped = int(re.search(r"kernel code in the counting window: (\d+) stepped", p.stdout).group(1))
    assert SPIN_INSNS < k <= SPIN_INSNS + stepped, p.stdout


@pytest.mark.qemu_only
def test_perf_report_lists_the_hottest_function_first(image, tmp_path):
    out = tmp_path / "rec"
    p = nbprof(image, "record", "-e", "instr_retired:u", "-c", "101", WORKP, "3000", "-o", str(out))
    assert p.returncode == 0, p.stdout + p.stderr
    script = (out / "perf.script").read_text()
    assert re.search(r" work\+0x[0-9a-f]+ \(nbprof\)", script)
    folded = [l.rsplit(" ", 1) for l in (out / "stacks.folded").read_text().splitlines()]
    heaviest = max(folded, key=lambda kv: int(kv[1]))[0]
    assert heaviest.split(";")[-1] == "work", folded    # comm;leaf, the leaf is work()
    perf = shutil.which("perf")
    if not perf:
        pytest.skip("linux-perf is not installed (Debian package linux-perf)")
    r = subprocess.run([perf, "report", "-f", "-i", str(out / "perf.data"), "--stdio",
                        "--sort", "sym"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    rows = [l for l in r.stdout.splitlines() if re.match(r"^\s+[\d.]+%", l)]
    assert rows and rows[0].split()[-1] == "work", r.stdout + r.stderr
