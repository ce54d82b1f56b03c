"""nbprof - run nbprof commands on a target from the host: count, sample, pull
the samples and write the files people's tools read.

    nbprof (--serial DEV[:BAUD] | --qemu [QEMU OPTIONS]) [--json] COMMAND ...

Commands:
    stat [STAT OPTIONS] WORKLOAD [ARGS]          count events (the target's `stat`)
                                                 (WORKLOAD may be a program file:
                                                 prog.elf, see below)
    record [RECORD OPTIONS] WORKLOAD [ARGS] -o DIR
                                                 sample, pull the samples with `dump`
                                                 and write DIR/perf.data, perf.script,
                                                 stacks.folded, flamegraph.svg,
                                                 profile.pb.gz (pprof), dump.log;
                                                 then print the target's `report`
    bench (--asm TEXT | CODEHEX) [--init-asm TEXT] [-e EVENT]... [-u U] [-n N] [-w W] [-r R]
                                                 measure a code snippet per iteration (the
                                                 target's `bench`; --asm is Intel syntax,
                                                 assembled here with GNU as)
    run CMDLINE...                               any shell command, e.g. `run cpu`
    shell                                        the target's shell on this terminal
                                                 (leave with Ctrl-]; with --qemu the
                                                 machine is switched off then)

Examples:
    nbprof --qemu --icount stat loop 1000
    nbprof --qemu record -g -e instr_retired -c 97 calls 3 400 -o out
    perf report -i out/perf.data
    nbprof --serial /dev/ttyUSB0:115200 --json stat -e instr_retired loop 1000
    nbprof --qemu --smp-ht shell
    nbprof --qemu bench --asm "add eax, ebx; add ecx, edx" -e instr_retired

--qemu boots build/nbprof.img (--image) in QEMU as tools/qemu.py does, with
the same machine options (--sig, --cpu, --smp-ht, --icount, --mem), and
switches it off at the end. An image whose nbprof.cfg holds commands (`make
run CFG=x.cfg` leaves x.cfg in it) boots as a temporary copy without them,
which the tool says on stderr; --keep-cfg boots the image as it is. --serial talks to a machine that is booted or
booting (115200 8N1 unless :BAUD is given). The command waits for the
`nbprof> ` prompt, runs the command and prints what the target printed.
`record` pulls the samples with `dump`, progress on stderr; frames lost or
corrupted on the way are sent again with `dump --from N` (as the decoder,
tools/nbprof-decode, whose code this uses, reports them). perf.data names
samples from the kernel ELF that recorded: the dump names its build id (as
the target's `cpu` prints it), and the one of build/nbprof.so,
build/k32/nbprof.so and build/nbprof32.elf with that id is taken, or --elf
FILE, refused (exit status 2) when its build id is another; perf refuses
to read a file owned by another user unless given -f (root reading a user's
file, too).

A word of the command that names an ELF file on the host (a program built
with sdk/nbprof-cc) is uploaded first, in CRC-checked frames with resume,
progress on stderr, as the program named after the file (prog.elf -> prog),
and that name takes the word's place; a program already loaded with the
same CRC-32 is not sent again. samples in it are named by its symbols.
The target's `programs` says which kernel runs (32-bit: ELF32 programs from
`sdk/nbprof-cc -m32`; 64-bit: ELF64 ones); a program of the other class is
refused with that reason before anything is sent (exit status 2).

--json prints one JSON object instead: the command, the target's output,
for stat the counts by event (and min/median/tmean/max with -r), for bench
the per-iteration min/median/tmean by event and whether anything interfered,
for record the files written, the sample counts and the kernel ELF that
named the samples (kernel_elf).

Exit status: 0 ok, 1 the target reported an error (an `error:` line),
2 bad usage, a connection or boot problem, an incomplete transfer, or a
kernel ELF that is not the recording kernel's.
"""

import argparse
import json
import os
import re
import select
import sys
import time
import zlib

from nbproflib import bench as nbprof_bench
from nbproflib import qemu
from nbproflib.decode import load_symbols, write_out
from nbproflib.flamegraph import flamegraph_svg
from nbproflib.kernelelf import KernelMismatch
from nbproflib.frames import Capture, DecodeError
from nbproflib.link import (PROMPT, LinkError, QemuLink, SerialLink, Target, UsageError,
                            errors_in)
from nbproflib.outputs import fold_all, folded_text, script_text, write_perf_data, write_pprof
from nbproflib.recording import Recording
from nbproflib.symbols import program_symbols
from nbproflib.upload import (ProgramRefused, check_program_class, loaded_programs, program_name,
                              program_words, upload_program)

ESCAPE = b"\x1d"                # Ctrl-]: leave `shell`
BOOT_TIMEOUT = 120.0
DUMP_RETRIES = 3


# --- stat --------------------------------------------------------------------------

NUM = r"-?\d+(?:\.\d+)?"
STAT_LINE = re.compile(r"^\s*(%s)(?:\s+(%s)\s+(%s)\s+(%s))?  (\S+)  counter (\d+) \((\w+)\) "
                       r"ESCR (\w+)(.*)$" % (NUM, NUM, NUM, NUM))
STAT_HEAD = re.compile(r"^stat: (.*) \(ring (\d), (\d+) runs?(.*)\)$")


def number(text):
    return float(text) if "." in text else int(text)


def parse_stat(output):
    """The target's stat output as a dict: counts by event spec, and the details."""
    res = {"events": [], "counts": {}}
    for line in output.splitlines():
        m = STAT_HEAD.match(line)
        if m:
            res.update(workload=m.group(1), ring=int(m.group(2)), runs=int(m.group(3)))
            continue
        m = STAT_LINE.match(line)
        if m:
            ev = {"event": m.group(5), "counter": int(m.group(6)), "counter_msr": m.group(7),
                  "escr": m.group(8), "notes": m.group(9).strip()}
            if m.group(2) is not None:
                for k, g in zip(("min", "median", "tmean", "max"), (1, 2, 3, 4)):
                    ev[k] = number(m.group(g))
                ev["count"] = ev["median"]
            else:
                ev["count"] = number(m.group(1))
            res["events"].append(ev)
            nbprof_bench.add_count(res, ev["event"], ev["count"])
            continue
        m = re.match(r"^IPC (%s) " % NUM, line)
        if m:
            res["ipc"] = float(m.group(1))
        m = re.match(r"^overflow interrupts: (\d+) \(counters reloaded: (\d+)\)", line)
        if m:
            res["overflow_interrupts"], res["counters_reloaded"] = int(m.group(1)), int(m.group(2))
    return res


# --- record ------------------------------------------------------------------------

class Progress:
    """`dump` frames as they arrive, into a decoder Capture, with a progress line."""

    def __init__(self, cap, quiet):
        self.cap, self.quiet = cap, quiet
        self.lines, self.total, self.last = [], None, 0.0
        self.tty = sys.stderr.isatty()

    def line(self, text):
        self.lines.append(text)
        self.cap.add_text(text, "dump")
        m = re.match(r"^# dump: (\d+) frames", text)
        if m:
            self.total = int(m.group(1))
        now = time.monotonic()
        if not self.quiet and self.tty and self.total and now - self.last > 0.2:
            self.last = now
            have = len(self.cap.frames)
            sys.stderr.write("\rnbprof: dump: %d/%d frames (%d%%)" % (have, self.total,
                                                                     100 * have // self.total))
            sys.stderr.flush()

    def end(self):
        if not self.quiet and self.total:
            sys.stderr.write("%snbprof: dump: %d/%d frames%s\n"
                             % ("\r" if self.tty else "", len(self.cap.frames), self.total,
                                " " * 6 if self.tty else ""))


def pull_samples(target, quiet):
    """Run `dump` (and `dump --from N` for what was lost); the Recording and capture text."""
    cap = Capture()
    prog = Progress(cap, quiet)
    cmd, resends = "dump", []
    for attempt in range(DUMP_RETRIES + 1):
        out = target.command(cmd, on_line=prog.line, timeout=max(target.timeout, 600))
        if errors_in(out):
            prog.end()
            return None, out, resends
        rec = Recording(cap)
        if rec.header is not None and not rec.missing or attempt == DUMP_RETRIES:
            break
        first = rec.missing[0][0] if rec.header is not None and rec.missing else 0
        cmd = "dump --from %d" % first
        resends.append(first)
        if not quiet:
            sys.stderr.write("\nnbprof: %s; resending with '%s'\n"
                             % ("; ".join(rec.problems) or "incomplete", cmd))
    prog.end()
    # Judge the frames that arrived intact: a corrupt copy that was sent
    # again is no longer a problem (one that was not shows up as missing).
    good = Capture()
    good.frames, good.conflicts = dict(cap.frames), cap.conflicts
    good.programs = dict(cap.programs)
    return Recording(good), "\n".join(prog.lines) + "\n", resends


def write_record_outputs(rec, outdir, elf, capture, programs=()):
    """DIR/perf.data, perf.script, stacks.folded, flamegraph.svg, profile.pb.gz, dump.log;
    ({kind: path}, the kernel ELF that named the samples or None).

    elf: the kernel ELF given, None to take the build's one with the recording's
    build id (nbproflib/kernelelf.py).
    programs: ELF files of the user programs the command ran (named by their symbols).
    """
    os.makedirs(outdir, exist_ok=True)
    syms_args = argparse.Namespace(nm=None, elf=elf)
    syms, elf_path = load_symbols(syms_args, rec)
    if elf_path is None:
        raise KernelMismatch("no kernel ELF in %s to name the samples (build/nbprof.so, "
                             "build/k32/nbprof.so, build/nbprof32.elf): give --elf" % qemu.BUILD)
    cap = Capture()
    cap.add_text(capture, "dump")
    syms, extra = program_symbols(syms, cap, list(programs))
    files = {k: os.path.join(outdir, n) for k, n in (
        ("perf_data", "perf.data"), ("script", "perf.script"), ("folded", "stacks.folded"),
        ("flamegraph", "flamegraph.svg"), ("pprof", "profile.pb.gz"), ("capture", "dump.log"))}
    write_out(files["capture"], capture)
    write_out(files["script"], script_text(rec, syms))
    counts, what = fold_all(rec, syms)      # every LP and event, root frames when several
    write_out(files["folded"], folded_text(counts))
    title = "nbprof: %s, %s (events, sample count x period)" % (rec.header["comm"], what)
    write_out(files["flamegraph"], flamegraph_svg(counts, title))
    write_perf_data(files["perf_data"], rec, elf_path, syms, extra)
    write_pprof(files["pprof"], rec, syms, elf_path)
    return files, elf_path


def split_output_dir(argv):
    """(record arguments without -o DIR, DIR)."""
    rest, outdir, i = [], None, 0
    while i < len(argv):
        a = argv[i]
        if a in ("-o", "--output"):
            if i + 1 >= len(argv):
                raise UsageError("record: %s needs a directory" % a)
            if outdir is not None:
                raise UsageError("record: -o given twice")
            outdir = argv[i + 1]
            i += 2
            continue
        rest.append(a)
        i += 1
    if outdir is None:
        raise UsageError("record: -o DIR is required (where perf.data and the rest go)")
    return rest, outdir


# --- upload (nbproflib/upload.py) ----------------------------------------------------

def step_upload(ctx, res):
    """Upload every program file the command names, and put its name in its place."""
    idx = program_words(ctx.cmd_args)
    if not idx:
        return
    have, kernel_bits = loaded_programs(ctx.target)
    res["programs"] = {}
    for i in idx:
        with open(ctx.cmd_args[i], "rb") as f:
            check_program_class(ctx.cmd_args[i], f.read(), kernel_bits)
    for i in idx:
        path = ctx.cmd_args[i]
        name = program_name(path)
        with open(path, "rb") as f:
            crc = zlib.crc32(f.read())
        if have.get(name) != crc:
            upload_program(ctx.target, path, name, ctx.args.json)
            have[name] = crc
        ctx.cmd_args[i] = name
        ctx.programs[name] = path
        res["programs"][name] = {"file": path, "crc32": "%08x" % crc}


# --- commands ---------------------------------------------------------------------
#
# Each command is a list of steps run on one Target; a step may add to the
# result dict. An `upload` step (sending a user's program before `stat` or
# `record` names it) slots in front of the command's first step.

def shell_line(words):
    for w in words:
        if not w or any(c.isspace() or ord(c) < 32 for c in w):
            raise UsageError("argument %r: the target's shell splits on spaces and takes "
                             "no quoting" % w)
    return " ".join(words)


def step_command(name):
    def run(ctx, res):
        line = shell_line([name] + ctx.cmd_args) if name else shell_line(ctx.cmd_args)
        res["command"] = line
        out = ctx.target.command(line)
        res["output"] = out
        ctx.echo(out)
        res["errors"] = errors_in(out)
    return run


def step_parse_stat(ctx, res):
    if not res["errors"]:
        res.update(parse_stat(res["output"]))


def step_parse_bench(ctx, res):
    if not res["errors"]:
        res.update(nbprof_bench.parse_bench(res["output"]))


def step_dump(ctx, res):
    if res["errors"]:
        return
    rec, capture, resends = pull_samples(ctx.target, ctx.args.json)
    res["resends"] = resends
    if rec is None:
        res["errors"] = errors_in(capture)
        ctx.echo(capture)
        return
    if rec.header is None or rec.missing or rec.problems:
        raise LinkError("dump incomplete after %d resends: %s"
                        % (len(resends), "; ".join(rec.problems)))
    try:
        files, res["kernel_elf"] = write_record_outputs(rec, ctx.outdir, ctx.args.elf, capture,
                                                        ctx.programs.values())
    except KernelMismatch as e:
        raise LinkError("record: %s" % e) from None
    except (OSError, DecodeError) as e:
        raise LinkError("writing %s: %s" % (ctx.outdir, e)) from None
    res["files"] = files
    res["samples"] = len(rec.samples)
    res["samples_by_event"] = {}
    for s in rec.samples:
        name = rec.event(s["event"])[0]
        res["samples_by_event"][name] = res["samples_by_event"].get(name, 0) + 1
    res["frames"] = rec.header["frames"]
    if not ctx.args.json:
        sys.stderr.write("nbprof: %d samples written to %s (perf.data, perf.script, "
                         "stacks.folded, flamegraph.svg, profile.pb.gz)\n" % (len(rec.samples), ctx.outdir))


def step_report(ctx, res):
    if res["errors"]:
        return
    out = ctx.target.command("report")
    res["report"] = out
    ctx.echo(out)
    res["errors"] = errors_in(out)


COMMANDS = {
    "stat": [step_upload, step_command("stat"), step_parse_stat],
    "record": [step_upload, step_command("record"), step_dump, step_report],
    "run": [step_upload, step_command(None)],
    "bench": [step_command(None), step_parse_bench],
}


class Context:
    def __init__(self, args, target):
        self.args, self.target = args, target
        self.cmd_args = list(args.cmd_args)
        self.outdir = None
        self.programs = {}          # name on the target -> ELF file on the host

    def echo(self, text):
        if not self.args.json and text:
            sys.stdout.write(text.rstrip("\n") + "\n")
            sys.stdout.flush()


def interactive_shell(link, target):
    """Bridge this terminal and the target's shell until Ctrl-] or end of input.

    With piped input, each line is a command, sent once the one before it
    has given its prompt back: the target reads its serial port only
    between commands, and a 16550's receive FIFO holds 16 bytes, so lines
    typed ahead of a long command would be lost. At the end of the input
    the bridge waits until every command has given its prompt back.
    """
    import termios
    import tty
    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd) if os.isatty(fd) else None
    if saved is not None:
        sys.stderr.write("nbprof: connected to %s; leave with Ctrl-]\r\n" % link.name)
        tty.setraw(fd)
    out = sys.stdout.buffer
    out.write(PROMPT.encode())
    out.flush()
    sent, prompts, queued, eof = 0, Prompts(), b"", False
    deadline = None
    try:
        while True:
            if saved is None:
                while b"\r" in queued and prompts.n >= sent:
                    line, _, queued = queued.partition(b"\r")
                    link.write(line + b"\r")
                    sent += 1
                    deadline = time.monotonic() + target.timeout
                if eof and b"\r" not in queued:
                    if queued:          # a last line without its newline: typed, not entered
                        link.write(queued)
                    finish_piped(link, target, out, sent, prompts)
                    break
                if prompts.n < sent and time.monotonic() > deadline:
                    raise LinkError("%s: no prompt within %.0f s" % (link.name, target.timeout))
            wait = [link.fileno()] if eof else [fd, link.fileno()]
            r, _, _ = select.select(wait, [], [], 0.5 if saved is None else None)
            if link.fileno() in r:
                data = link.read(0)
                prompts.feed(data)
                out.write(data)
                out.flush()
            if fd in r:
                data = os.read(fd, 1024)
                if saved is not None and (not data or ESCAPE in data):
                    break
                if saved is None:
                    eof = not data
                    queued += data.replace(b"\n", b"\r")
                    continue
                link.write(data)
    finally:
        if saved is not None:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)
            sys.stderr.write("\nnbprof: disconnected\n")
    return 0


class Prompts:
    """Counts the target's prompts in its output as it comes, a piece at a time."""

    def __init__(self):
        self.n, self.tail = 0, ""

    def feed(self, data):
        text = self.tail + data.decode("utf-8", "replace").replace("\r", "")
        self.n += text.count("\n" + PROMPT)
        self.tail = text[-len(PROMPT):]     # shorter than a match: none is counted twice


def finish_piped(link, target, out, sent, prompts):
    """Copy the target's output until `sent` commands have given their prompts back."""
    deadline = time.monotonic() + target.timeout
    while prompts.n < sent:
        if time.monotonic() > deadline:
            raise LinkError("%s: no prompt within %.0f s" % (link.name, target.timeout))
        data = link.read(0.5)
        prompts.feed(data)
        out.write(data)
        out.flush()


# --- main ----------------------------------------------------------------------------

def parse_args(argv):
    doc = __doc__.split("\n\n")
    p = argparse.ArgumentParser(prog="nbprof", description=doc[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(doc[1:]))
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--serial", metavar="DEV[:BAUD]", help="the target's serial port")
    where.add_argument("--qemu", action="store_true", help="start QEMU and use its machine")
    mach = p.add_argument_group("QEMU machine (with --qemu; as tools/qemu.py)")
    qemu.add_machine_options(mach)
    p.add_argument("--keep-cfg", action="store_true",
                   help="with --qemu, boot the image with its nbprof.cfg (by default a copy "
                        "without the cfg's commands boots)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--elf", help="kernel ELF for symbols (default: the one of build/nbprof.so, "
                                 "build/k32/nbprof.so, build/nbprof32.elf whose build id is the "
                                 "recording's)")
    p.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS",
                   help="longest wait for one command (default 120)")
    p.add_argument("--boot-timeout", type=float, default=BOOT_TIMEOUT, metavar="SECONDS",
                   help="longest wait for the boot (default %d)" % BOOT_TIMEOUT)
    p.add_argument("command", choices=sorted(list(COMMANDS) + ["shell"]))
    p.add_argument("cmd_args", nargs=argparse.REMAINDER, metavar="ARGS")
    args = p.parse_args(argv)
    if not args.qemu:
        defaults = p.parse_args(["--qemu", "run"])
        for opt in ("image", "sig", "cpu", "smp_ht", "icount", "mem", "gdb", "keep_cfg"):
            if getattr(args, opt) != getattr(defaults, opt):
                p.error("--%s is a QEMU option: it needs --qemu" % opt.replace("_", "-"))
    if args.gdb:
        p.error("--gdb would stop the machine before it boots; use tools/qemu.py --gdb")
    try:
        check_command_args(args)
    except UsageError as e:
        p.error(str(e))
    return args


def check_command_args(args):
    if args.command == "shell":
        if args.cmd_args:
            raise UsageError("shell takes no arguments")
        if args.json:
            raise UsageError("--json does not go with shell")
        return
    if args.command == "record":
        args.cmd_args, args.outdir = split_output_dir(args.cmd_args)
    if args.command == "bench":
        try:
            args.cmd_args = nbprof_bench.translate(args.cmd_args)
        except nbprof_bench.BenchError as e:
            raise UsageError(str(e)) from None
    if not args.cmd_args:
        raise UsageError("%s: nothing to run (e.g. %s)" % (
            args.command, {"stat": "stat loop 1000", "record": "record loop 1000 -o out",
                           "run": "run cpu"}[args.command]))
    shell_line(args.cmd_args)
    if args.command == "record" and os.path.exists(args.outdir) and \
            not os.path.isdir(args.outdir):
        raise UsageError("record: -o %s exists and is not a directory" % args.outdir)


def main(argv):
    args = parse_args(argv)
    link = None
    res = {"command": None, "target": "qemu" if args.qemu else args.serial}
    try:
        link = QemuLink(args) if args.qemu else SerialLink(args.serial)
        target = Target(link, args.timeout)
        target.boot(args.boot_timeout)
        if args.command == "shell":
            return interactive_shell(link, target)
        ctx = Context(args, target)
        ctx.outdir = getattr(args, "outdir", None)
        for step in COMMANDS[args.command]:
            step(ctx, res)
        status = 1 if res.get("errors") else 0
    except (LinkError, ProgramRefused) as e:
        res["errors"] = ["nbprof: %s" % e]
        sys.stderr.write("nbprof: %s\n" % e)
        status = 2
    except BrokenPipeError:
        # Our reader went away (e.g. `| head`): stop quietly.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        status = 0
    except KeyboardInterrupt:
        if link is not None:
            link.write(b"\x03")
        sys.stderr.write("nbprof: interrupted\n")
        status = 2
    finally:
        if link is not None:
            if args.qemu:
                Target(link, 2).poweroff()
            link.close()
    res["status"] = status
    if args.json:
        json.dump(res, sys.stdout, indent=1, sort_keys=True)
        sys.stdout.write("\n")
    elif status == 1:
        sys.stderr.write("nbprof: the target reported an error\n")
    return status


