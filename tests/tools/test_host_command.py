"""test_host_command.py - tools/nbprof without QEMU.

Option checking, the parser of the target's `stat` output, and whole runs
against a stand-in target on a pseudo-terminal (--serial /dev/pts/N): a
small shell that echoes what is typed, answers `stat`, `record`, `report`
and `dump` (with the frames dumpgen, the kernel's own encoder, makes; the
first `dump` loses a frame on purpose so that `dump --from N` must resume),
and prints an `error:` line for anything else. tests/qemu/test_host_command.py
runs the same command against the real kernel in QEMU.
"""

import base64
import json
import os
import struct
import subprocess
import threading
import tty

import pytest

from conftest import BUILD, REPO

from nbproflib import host, kernelelf, link, qemu

TOOL = os.path.join(REPO, "tools", "nbprof")
ELF = os.path.join(BUILD, "nbprof.so")



def run_tool(*args, cwd=None, stdin=None):
    return subprocess.run(["/usr/bin/python3", TOOL] + [str(a) for a in args],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, input=stdin,
                          universal_newlines=True, cwd=cwd, timeout=60)


# --- options ---------------------------------------------------------------------

@pytest.mark.parametrize("argv, message", [
    (["stat", "loop", "1"], "one of the arguments --serial --qemu is required"),
    (["--qemu", "--serial", "/dev/null", "stat", "loop"], "not allowed with argument"),
    (["--serial", "/dev/null", "--icount", "stat", "loop", "1"], "--icount is a QEMU option"),
    (["--qemu", "record", "loop", "1"], "-o DIR is required"),
    (["--qemu", "record", "loop", "1", "-o"], "-o needs a directory"),
    (["--qemu", "record", "-o", "a", "loop", "-o", "b"], "-o given twice"),
    (["--qemu", "stat"], "stat: nothing to run"),
    (["--qemu", "run", "msr read", "0x1a0"], "takes no quoting"),
    (["--qemu", "shell", "cpu"], "shell takes no arguments"),
    (["--qemu", "--json", "shell"], "--json does not go with shell"),
    (["--qemu", "frobnicate"], "invalid choice"),
])
def test_usage_errors_exit_2(argv, message):
    p = run_tool(*argv)
    assert p.returncode == 2, p.stderr
    assert message in p.stderr
    assert p.stdout == ""


def esp_image(tmp, cfg):
    """A disk image laid out as tools/build/mkimage lays it out where it matters here: a FAT
    file system at the ESP's offset, holding nbprof.cfg when cfg is not None."""
    fat = tmp / "fat.img"
    subprocess.run(["mkfs.fat", "-C", str(fat), "2048"], check=True, stdout=subprocess.PIPE)
    if cfg is not None:
        (tmp / "nbprof.cfg").write_bytes(cfg)
        subprocess.run(["mcopy", "-i", str(fat), str(tmp / "nbprof.cfg"), "::/nbprof.cfg"],
                       check=True)
    img = tmp / "disk.img"
    img.write_bytes(b"\0" * qemu.ESP_OFFSET + fat.read_bytes())
    return str(img)


def test_qemu_boots_a_copy_without_the_images_cfg(tmp_path):
    """`make run CFG=x.cfg` leaves x.cfg in build/nbprof.img; its `run =` lines (even
    poweroff) ran before the tool's commands, which then saw the wrong echo."""
    img = esp_image(tmp_path, b"# a note\nrun = stat loop 5\n\nrun = poweroff\n")
    before = open(img, "rb").read()
    copy, left_out = qemu.image_without_cfg(img)
    try:
        assert copy != img and left_out == ["run = stat loop 5", "run = poweroff"]
        assert qemu.cfg_commands(qemu.image_cfg(copy)) == []
        assert qemu.image_cfg(copy) == qemu.EMPTY_CFG
        assert open(img, "rb").read() == before            # the user's image is untouched
    finally:
        os.unlink(copy)
    for cfg in (None, b"# only comments\n\n"):
        sub = tmp_path / ("none" if cfg is None else "comments")
        sub.mkdir()
        img = esp_image(sub, cfg)
        assert qemu.image_without_cfg(img) == (img, [])     # nothing to leave out: no copy


def test_keep_cfg_is_a_qemu_option():
    p = run_tool("--serial", "/dev/null", "--keep-cfg", "stat", "loop", "1")
    assert p.returncode == 2 and "--keep-cfg is a QEMU option" in p.stderr


def test_record_output_must_be_a_directory(tmp_path):
    f = tmp_path / "file"
    f.write_text("keep")
    p = run_tool("--qemu", "record", "loop", "1", "-o", str(f))
    assert p.returncode == 2 and "is not a directory" in p.stderr
    assert f.read_text() == "keep"


def test_record_splits_output_dir():
    assert host.split_output_dir(["-e", "x", "-o", "d", "loop", "5"]) == (["-e", "x", "loop", "5"],
                                                                        "d")
    assert host.split_output_dir(["loop", "--output", "d"]) == (["loop"], "d")


def test_serial_spec():
    assert link.parse_serial("/dev/ttyUSB0") == ("/dev/ttyUSB0", 115200)
    assert link.parse_serial("/dev/ttyS1:57600") == ("/dev/ttyS1", 57600)
    with pytest.raises(link.UsageError):
        link.parse_serial("/dev/ttyS1:0")


def test_missing_serial_port_exits_2(tmp_path):
    p = run_tool("--serial", str(tmp_path / "nope"), "--json", "run", "cpu")
    assert p.returncode == 2
    assert "cannot open" in p.stderr
    assert json.loads(p.stdout)["status"] == 2


# --- stat output -------------------------------------------------------------------

def stat_text(counts, runs=1):
    """stat output in shell/cmd_stat.c's format."""
    lines = ["stat: loop 1000 (ring 0, %d run%s, LP0)" % (runs, "s" if runs > 1 else "")]
    if runs > 1:
        lines.append("%14s %14s %14s %14s  event" % ("min", "median", "tmean", "max"))
    specs = ["global_power_events:RUNNING:u:k", "instr_retired:NBOGUSNTAG:NBOGUSTAG:u:k"]
    where = ["counter 0 (MSR_BPU_COUNTER0) ESCR FSB_ESCR0 [real: TSC]",
             "counter 16 (MSR_IQ_COUNTER4) ESCR CRU_ESCR0 [real: stepped]"]
    for spec, w, c in zip(specs, where, counts):
        cols = "%14s %14s %14s %14s" % c if runs > 1 else "%14s" % c
        lines.append("%s  %s  %s" % (cols, spec, w))
    lines.append("IPC 0.007812 (instr_retired / global_power_events)")
    lines.append("backend: model 0F_04H; inputs (last run): real: 3006 stepped instructions, "
                 "1001 branches, 384768 TSC cycles; synthetic: none")
    lines.append("overflow interrupts: 2 (counters reloaded: 1)")
    return "\n".join(lines)


def test_parse_stat_single_run():
    r = host.parse_stat(stat_text([384768, 3006]))
    assert r["counts"] == {"global_power_events:RUNNING:u:k": 384768,
                           "instr_retired:NBOGUSNTAG:NBOGUSTAG:u:k": 3006}
    assert (r["workload"], r["ring"], r["runs"]) == ("loop 1000", 0, 1)
    assert r["events"][1]["counter"] == 16 and r["events"][1]["escr"] == "CRU_ESCR0"
    assert r["events"][1]["notes"] == "[real: stepped]"
    assert r["ipc"] == 0.007812
    assert (r["overflow_interrupts"], r["counters_reloaded"]) == (2, 1)


def test_parse_stat_repeats_and_baseline_decimals():
    r = host.parse_stat(stat_text([("10", "12.50", "-3.25", "40"), ("5507", "5507", "5507", "5508")],
                                runs=20))
    ev = r["events"][0]
    assert (ev["min"], ev["median"], ev["tmean"], ev["max"]) == (10, 12.5, -3.25, 40)
    assert r["counts"] == {"global_power_events:RUNNING:u:k": 12.5,
                           "instr_retired:NBOGUSNTAG:NBOGUSTAG:u:k": 5507}
    assert r["runs"] == 20


def test_parse_stat_same_spec_twice_keeps_both():
    text = stat_text([1, 2]).replace("global_power_events:RUNNING:u:k",
                                     "instr_retired:NBOGUSNTAG:NBOGUSTAG:u:k")
    r = host.parse_stat(text)
    assert r["counts"] == {"instr_retired:NBOGUSNTAG:NBOGUSTAG:u:k": 1,
                           "instr_retired:NBOGUSNTAG:NBOGUSTAG:u:k#2": 2}


# --- a stand-in target on a pseudo-terminal ---------------------------------------------

def frame_seq(line):
    return struct.unpack_from("<I", base64.b64decode(line[4:12]))[0]


class FakeTarget:
    """A shell that speaks nbprof's prompt protocol over the master side of a pty."""

    def __init__(self, dumpgen, nm):
        self.master, slave = os.openpty()
        tty.setraw(slave)
        self.path = os.ttyname(slave)
        self.slave = slave
        self.dumpgen, self.nm = dumpgen, nm
        self.commands, self.dumps = [], 0
        self.always_corrupt = False
        self.kernel_bits = 64
        self.typed_ahead = 0        # bytes that came before the prompt they should wait for
        self.dump_args = []         # e.g. the build id the fake kernel's dumps name
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def out(self, text):
        os.write(self.master, text.replace("\n", "\r\n").encode())

    def serve(self):
        line = b""
        try:
            while True:
                data = os.read(self.master, 1024)
                for i, c in enumerate(data):
                    if c == 13:
                        os.write(self.master, b"\r\n")
                        self.answer(line.decode())
                        line = b""
                        # sent before this command's prompt came back: a real target's
                        # UART would have dropped what did not fit its FIFO
                        self.typed_ahead += len(data) - i - 1
                    else:
                        os.write(self.master, bytes([c]))
                        line += bytes([c])
        except OSError:
            return

    def answer(self, cmd):
        self.commands.append(cmd)
        words = cmd.split()
        if not words:
            pass
        elif words[:1] == ["stat"] and words[-2:] == ["loop", "1000"]:
            self.out(stat_text([384768, 3006]) + "\n")
        elif words[:1] == ["record"] and words[-1] != "bad":
            self.out("record: %s (ring 0, LP0, PMI by NMI)\nsamples: 400 stored\n"
                     % " ".join(words[1:]))
        elif words == ["report"]:
            self.out("# 400 samples, sorted by symbol\n")
        elif words[:1] == ["dump"]:
            self.dump(words)
        elif words == ["programs"]:             # shell/cmd_program.c's last line
            self.out("no programs loaded (put them in nbprof/ on the stick, or 'upload')\n"
                     "kernel: %d-bit: it runs ELF%d programs\n" % (self.kernel_bits,
                                                                  self.kernel_bits))
        else:
            self.out("error: unknown command or workload in '%s'\n" % cmd)
        self.out("nbprof> ")

    def dump(self, words):
        frm = int(words[2]) if words[1:2] == ["--from"] else 0
        lines = self.dumpgen("-n", 400, "--nm", self.nm, "--from", frm, *self.dump_args,
                             "dump").splitlines()
        self.dumps += 1
        if self.dumps == 1:
            self.lost = len(lines) // 2
        for i, l in enumerate(lines):
            if frame_seq(l) == self.lost and (self.dumps == 1 or self.always_corrupt):
                lines[i] = l[:-6] + "AAAA=="                        # a corrupt frame
        self.out("# dump: %d frames, frames %d.. follow\n" % (len(lines) if not frm else 0, frm))
        self.out("\n".join(lines) + "\n# dump: done\n")

    def close(self):
        os.close(self.slave)
        os.close(self.master)


@pytest.fixture
def target(dumpgen, tmp_path):
    nm = tmp_path / "real.nm"
    nm.write_text(subprocess.run(["nm", "-n", ELF], stdout=subprocess.PIPE, check=True,
                                 universal_newlines=True).stdout if os.path.exists(ELF)
                  else dumpgen("nm"))
    t = FakeTarget(dumpgen, str(nm))
    yield t
    t.close()


def test_stat_over_serial(target):
    p = run_tool("--serial", target.path, "stat", "loop", "1000")
    assert p.returncode == 0, p.stderr
    assert "3006  instr_retired:NBOGUSNTAG:NBOGUSTAG:u:k  counter 16" in p.stdout
    assert target.commands[-1] == "stat loop 1000"


def test_stat_json(target):
    p = run_tool("--serial", target.path + ":115200", "--json", "stat", "loop", "1000")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["status"] == 0 and r["command"] == "stat loop 1000"
    assert r["counts"]["instr_retired:NBOGUSNTAG:NBOGUSTAG:u:k"] == 3006
    assert r["output"].startswith("stat: loop 1000")


def test_target_error_exits_1(target):
    p = run_tool("--serial", target.path, "--json", "run", "frob", "7")
    assert p.returncode == 1
    r = json.loads(p.stdout)
    assert r["errors"] == ["error: unknown command or workload in 'frob 7'"]
    p = run_tool("--serial", target.path, "record", "bad", "-o", "x")
    assert p.returncode == 1 and "error:" in p.stdout
    assert "dump" not in target.commands            # no dump after a failed record


@pytest.mark.skipif(not os.path.exists(ELF), reason="no kernel ELF built (make): "
                    "perf.data needs it")
def test_record_resumes_dump_and_writes_outputs(target, dumpgen, tmp_path):
    out = tmp_path / "out"
    p = run_tool("--serial", target.path, "--json", "--elf", ELF, "record", "-e", "instr_retired",
                 "loop", "1000", "-o", str(out))
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert target.commands[1:] == ["record -e instr_retired loop 1000", "dump",
                                   "dump --from %d" % target.lost, "report"]
    assert r["resends"] == [target.lost]
    assert r["samples"] == 400 and sum(r["samples_by_event"].values()) == 400
    assert r["report"] == "# 400 samples, sorted by symbol"
    for name in ("perf.data", "perf.script", "stacks.folded", "flamegraph.svg", "profile.pb.gz",
                 "dump.log"):
        assert (out / name).stat().st_size > 0, name
    assert r["files"]["perf_data"] == str(out / "perf.data")
    # The script text is the kernel's own `script` output for the same recording.
    assert (out / "perf.script").read_text() == dumpgen("-n", 400, "--nm", target.nm, "script")
    assert (out / "perf.data").read_bytes()[:8] == b"PERFILE2"


KERNELS = [qemu.kernel_elf(fw) for fw in ("uefi-x64", "uefi-ia32", "bios")]


def nm_of(path):
    return subprocess.run(["nm", "-n", path], stdout=subprocess.PIPE, check=True,
                          universal_newlines=True).stdout


@pytest.mark.skipif(not all(map(os.path.exists, KERNELS)), reason="no kernel ELFs built (make)")
def test_record_names_samples_with_the_kernel_whose_build_id_the_dump_names(target, dumpgen,
                                                                            tmp_path):
    """A BIOS-booted Pentium 4 runs nbprof32.elf: its dump's build id picks that ELF."""
    elf32 = qemu.kernel_elf("bios")
    target.nm = str(tmp_path / "k32.nm")
    (tmp_path / "k32.nm").write_text(nm_of(elf32))
    bid = kernelelf.elf_build_id(elf32)
    target.dump_args = ["--ip-bits", 32, "--build-id", bid.hex()]
    out = tmp_path / "out"
    p = run_tool("--serial", target.path, "--json", "record", "loop", "1000", "-o", str(out))
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["kernel_elf"] == elf32
    script = (out / "perf.script").read_text()
    assert script == dumpgen("-n", 400, "--nm", target.nm, "--ip-bits", 32, "script")
    # Given the 64-bit kernel's ELF instead: refused, both build ids named, nothing written.
    out2 = tmp_path / "out2"
    p = run_tool("--serial", target.path, "--elf", ELF, "record", "loop", "1000", "-o", str(out2))
    assert p.returncode == 2
    assert bid.hex() in p.stderr and kernelelf.elf_build_id(ELF).hex() in p.stderr, p.stderr
    assert not (out2 / "perf.data").exists()


def test_run_prints_target_output(target):
    p = run_tool("--serial", target.path, "run", "report")
    assert p.returncode == 0, p.stderr
    assert p.stdout == "# 400 samples, sorted by symbol\n"


@pytest.mark.skipif(not os.path.exists(ELF), reason="no kernel ELF built (make)")
def test_dump_that_never_completes_exits_2(target, tmp_path):
    target.always_corrupt = True
    out = tmp_path / "out"
    p = run_tool("--serial", target.path, "--elf", ELF, "record", "loop", "1000", "-o", str(out))
    assert p.returncode == 2
    assert "dump incomplete after 3 resends" in p.stderr
    assert target.commands.count("dump --from %d" % target.lost) == 3
    assert not out.exists()                     # nothing half-written


def test_shell_bridges_piped_input(target):
    p = run_tool("--serial", target.path, "shell", stdin="report\nfrob\n")
    assert p.returncode == 0, p.stderr
    assert target.commands[-2:] == ["report", "frob"]
    assert "# 400 samples, sorted by symbol" in p.stdout
    assert "error: unknown command or workload in 'frob'" in p.stdout


def test_shell_sends_piped_lines_one_prompt_at_a_time(target):
    """Piped commands arrive in one read of stdin; each goes out only after the one before
    it has its prompt back (nothing typed ahead for the target's 16-byte FIFO to drop)."""
    lines = ["report", "record loop 1000", "frob", "report"]
    p = run_tool("--serial", target.path, "shell", stdin="\n".join(lines) + "\n")
    assert p.returncode == 0, p.stderr
    assert target.commands[-4:] == lines
    assert target.typed_ahead == 0
    assert p.stdout.count("# 400 samples, sorted by symbol") == 2


@pytest.mark.parametrize("kernel, build, why", [
    (32, "sdk", "a 64-bit program: this is the 32-bit kernel; build with nbprof-cc -m32"),
    (64, "sdk32", "a 32-bit program: this is the 64-bit kernel; build with nbprof-cc without -m32"),
])
def test_a_program_of_the_other_class_is_refused_before_upload(target, kernel, build, why):
    hello = os.path.join(BUILD, build, "hello.elf")
    if not os.path.exists(hello):
        subprocess.run(["make", "-s", "-C", REPO, "B=" + BUILD, hello], check=True)
    target.kernel_bits = kernel
    p = run_tool("--serial", target.path, "stat", "-e", "instr_retired", hello, "1000")
    assert p.returncode == 2, p.stderr
    assert p.stderr == "nbprof: %s: %s\n" % (hello, why)
    assert target.commands[-1] == "programs"        # asked, then nothing sent
    assert not any(c.startswith("upload") for c in target.commands)
