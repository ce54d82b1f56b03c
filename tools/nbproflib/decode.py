"""nbprof-decode - turn a captured `dump` into perf-script text, folded stacks,
CSV, a flame graph and an annotated disassembly.

    nbprof-decode CAPTURE [CAPTURE...] [outputs]
    nbprof-decode --serial /dev/ttyUSB0 [--save cap.log] [outputs]
    nbprof-decode --socket localhost:4555 [--save cap.log] [outputs]

Examples:
    nbprof-decode capture.log --flamegraph out.svg
    nbprof-decode capture.log --script out.perf --folded out.folded --csv out.csv
    nbprof-decode capture.log retry.log --annotate out.txt   # merge a `dump --from N`
    nbprof-decode capture.log --partial --csv out.csv        # what arrived of a broken one
    nbprof-decode capture.log --perf-data perf.data && perf report -i perf.data
    nbprof-decode capture.log --pprof prof.pb.gz && pprof -top prof.pb.gz
    nbprof-decode pair.log --split --flamegraph fg.svg       # fg.lp0.EVENT.svg, fg.lp1...
    nbprof-decode --serial /dev/ttyUSB0 --baud 115200 --save cap.log --flamegraph out.svg
    stackcollapse-perf.pl out.perf | flamegraph.pl > fg.svg  # the perf text works there too

With --selftest (or when the captures hold only `selftest` output) it
prints the report of the NBS: lines instead (tools/selftest-report).

A capture is any text that contains the lines `dump` printed (a terminal
log, `script` output, a QEMU serial log); everything else is ignored. A
frame may start anywhere in a line, so two frames joined by a lost newline
both decode. Each frame's CRC and number is checked; corrupt and missing
frames are listed together with the `dump --from N` command that sends
them again. Several captures of the same recording are merged, so the
second one may be the output of that command. An output name of "-" means
standard output.

Outputs are written only when the dump is provably whole: a good header,
every frame it announces, the trailer, and the trailer's frame count,
sample count and CRC of the sample data all equal to what arrived. Frame
and sample counts are checked against what the header and the frames can
hold before anything is sized by them. --partial writes the outputs of an
incomplete dump anyway and says on stderr that they are partial.

Folded stacks and the flame graph hold every sample. When the samples
come from several logical processors or events (a Hyper-Threading
recording, `record --pair`), each stack gets a root frame such as
"[LP1 instr_retired.t1]"; --split writes one file per LP and event
instead, --event keeps one event; stderr says which was done. The flame
graph is interactive, as flamegraph.pl's (plain inline JavaScript, no
network): click a frame to zoom, "Reset Zoom" (or Escape) to zoom out,
"Search" (or Ctrl-F) highlights the frames whose name matches a regular
expression and shows the share of samples under them.

Symbols come from the kernel ELF that recorded, through `nm -n`, filtered
as tools/build/gensyms does. The dump header carries that kernel's build id
(the one the boot banner and `cpu` print): --elf FILE is refused unless its
build id is the same, and without --elf the one of build/nbprof.so,
build/k32/nbprof.so and build/nbprof32.elf whose build id matches is taken
(none matching is refused, every build id named; no ELF at all leaves the
samples unnamed). A dump from an older kernel (format 4 and before) has no
build id: there the symbol table's checksum in the header picks the ELF and
refuses a mismatch, for --nm FILE (a saved `nm -n` output) too.
Sample addresses are runtime addresses; the header carries the runtime
image base, so link address = address - image base.

Exit status: 0 the dump is whole and the outputs are written; 1 it is not
(frames, the trailer or samples missing, corrupt, or inconsistent): the
problems are listed and nothing is written unless --partial; 2 nothing
usable (no header, a header that cannot describe a dump) or bad usage.
"""

import argparse
import subprocess
import sys

from nbproflib import kernelelf, selftest
from nbproflib.flamegraph import flamegraph_svg
from nbproflib.frames import PREFIX, Capture, DecodeError
from nbproflib.link import LinkError, capture_live
from nbproflib.outputs import (annotate_text, csv_text, folded_outputs, folded_text, script_text,
                               summary_text, write_perf_data, write_pprof)
from nbproflib.recording import Recording
from nbproflib.symbols import NoSymbols, Symbols, program_symbols

def write_out(path, text):
    if path == "-":
        sys.stdout.write(text)
    else:
        with open(path, "w") as f:
            f.write(text)


def load_symbols(args, rec):
    """(symbols, kernel ELF path or None) for the recording: from --nm, from --elf
    when it is the recording kernel's, else from the build's kernel ELF that is
    (nbproflib/kernelelf.py); a mismatch is refused (KernelMismatch)."""
    h = rec.header
    elf = None
    if args.nm:
        with open(args.nm) as f:
            text = f.read()
    else:
        if h.get("build_id") or args.elf:
            elf = kernelelf.choose(h, args.elf)
        else:
            elf = kernelelf.by_symtab(h, lambda p: Symbols(kernelelf.nm_text(p), h["image_base"]))
        if not elf:
            return NoSymbols(), None
        text = kernelelf.nm_text(elf)
    syms = Symbols(text, h["image_base"])
    if syms.crc != h["symtab_crc"] or syms.count != h["symtab_count"]:
        raise kernelelf.KernelMismatch(
            "the symbol table of %s (%d symbols, CRC %08x) is not the recording kernel's "
            "(%d, %08x): its names would be wrong; give the kernel that recorded"
            % (args.nm or elf, syms.count, syms.crc, h["symtab_count"], h["symtab_crc"]))
    return syms, elf


def parse_args(argv):
    p = argparse.ArgumentParser(prog="nbprof-decode", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("captures", nargs="*", metavar="CAPTURE", help="captured serial text")
    live = p.add_argument_group("live capture")
    live.add_argument("--serial", metavar="DEV", help="serial port to send `dump` to and read")
    live.add_argument("--baud", type=int, default=115200)
    live.add_argument("--socket", metavar="HOST:PORT|PATH", help="QEMU chardev socket")
    live.add_argument("--command", metavar="CMD", help="command to send (default: dump)")
    live.add_argument("--idle", type=float, default=10.0, metavar="SECONDS",
                      help="give up after this long without data (default 10)")
    live.add_argument("--save", metavar="FILE", help="keep the raw capture")
    p.add_argument("--elf", metavar="FILE", help="kernel ELF for symbols; it must have the "
                   "recording's build id (default: the build's kernel ELF that has it)")
    p.add_argument("--nm", metavar="FILE", help="saved `nm -n` output instead of an ELF")
    p.add_argument("--program", metavar="FILE", action="append", default=[],
                   help="ELF of a user program the recording ran (repeatable): its samples "
                   "are named by its functions (matched to the dump's NBP lines)")
    p.add_argument("--script", metavar="FILE", help="perf-script text")
    p.add_argument("--folded", metavar="FILE", help="folded stacks (stackcollapse format)")
    p.add_argument("--csv", metavar="FILE", help="one row per sample")
    p.add_argument("--flamegraph", metavar="FILE", help="flame graph SVG")
    p.add_argument("--annotate", metavar="FILE", help="objdump -d of the ELF with sample counts")
    p.add_argument("--perf-data", metavar="FILE",
                   help="perf.data for Linux perf (perf report/script -i FILE); needs the ELF")
    p.add_argument("--pprof", metavar="FILE",
                   help="gzipped pprof profile (profile.proto): pprof -top FILE, "
                   "pprof -http=: FILE")
    p.add_argument("--event", metavar="NAME|INDEX",
                   help="fold only this event for --folded/--flamegraph (default: every "
                   "sample; several LPs or events each get a root frame [LPn EVENT])")
    p.add_argument("--split", action="store_true",
                   help="--folded/--flamegraph: one file per LP and event, named "
                   "FILE.lpN.EVENT.EXT, instead of root frames")
    p.add_argument("--partial", action="store_true",
                   help="write the outputs even when the dump is not provably whole "
                   "(frames or the trailer missing); they are then marked partial on stderr")
    p.add_argument("--weight", choices=("period", "samples"), default="period",
                   help="folded weight per sample: its period, as stackcollapse-perf.pl "
                   "counts (default), or 1")
    p.add_argument("--title", default=None, help="flame graph title")
    p.add_argument("-q", "--quiet", action="store_true", help="no summary on stderr")
    p.add_argument("--selftest", action="store_true",
                   help="read the NBS: report of `selftest` (tools/selftest-report; chosen "
                   "by itself when the captures hold NBS: lines and no NBD: frames); "
                   "--csv then gets one row per check")
    args = p.parse_args(argv)
    if bool(args.captures) + bool(args.serial) + bool(args.socket) != 1:
        p.error("give capture files, or one of --serial / --socket")
    if args.annotate and args.nm:
        p.error("--annotate needs the ELF (--elf), not --nm")
    if args.perf_data and args.nm:
        p.error("--perf-data needs the ELF (--elf), not --nm: perf reads its symbols itself")
    if args.perf_data == "-":
        p.error("--perf-data needs a file name")
    if args.pprof == "-":
        p.error("--pprof needs a file name")
    if args.split and "-" in (args.folded, args.flamegraph):
        p.error("--split writes one file per LP and event: give file names, not -")
    return args


def report(rec, args):
    """Problems and notes on stderr; the exit status if nothing is to be written."""
    for prob in rec.problems:
        sys.stderr.write("nbprof-decode: %s\n" % prob)
    for note in rec.notes:
        sys.stderr.write("nbprof-decode: note: %s (the frame arrived intact elsewhere)\n" % note)
    if rec.header is None:
        sys.stderr.write("nbprof-decode: nothing to decode\n")
        return 2
    if not rec.whole and not args.partial:
        sys.stderr.write("nbprof-decode: the dump is not provably whole: no output written; "
                         "--partial decodes what arrived\n")
        return 1
    if not rec.whole:
        sys.stderr.write("nbprof-decode: PARTIAL output: %d of the %d samples the header announces,"
                         " not checked against the trailer\n"
                         % (len(rec.samples), rec.header["samples"]))
    return None


def write_outputs(rec, args, cap):
    syms, elf = load_symbols(args, rec)
    syms, extra = program_symbols(syms, cap, args.program)
    if args.annotate and not elf:
        raise DecodeError("--annotate needs the kernel ELF (--elf build/nbprof.so)")
    if args.perf_data and not elf:
        raise DecodeError("--perf-data needs the kernel ELF (--elf build/nbprof.so)")
    if not args.quiet:
        sys.stderr.write(summary_text(rec, syms))
        if elf:
            sys.stderr.write("kernel: %s, build id %s\n"
                             % (elf, kernelelf.hexid(rec.header.get("build_id"))))
    folds = []
    if args.folded or args.flamegraph:
        folds, notes = folded_outputs(rec, syms, args)
        for note in notes:
            sys.stderr.write("nbprof-decode: %s\n" % note)
    if args.script:
        write_out(args.script, script_text(rec, syms))
    for folded_path, svg_path, counts, what in folds:
        if folded_path:
            write_out(folded_path, folded_text(counts))
        if svg_path:
            title = args.title or "nbprof: %s, %s (%s)" % (
                rec.header["comm"], what,
                "samples" if args.weight == "samples" else "events, sample count x period")
            write_out(svg_path, flamegraph_svg(counts, title))
    if args.csv:
        write_out(args.csv, csv_text(rec, syms))
    if args.annotate:
        write_out(args.annotate, annotate_text(rec, syms, elf))
    if args.perf_data:
        write_perf_data(args.perf_data, rec, elf, syms, extra)
    if args.pprof:
        write_pprof(args.pprof, rec, syms, elf)


def main(argv):
    args = parse_args(argv)
    cap = Capture()
    try:
        if args.captures:
            texts = []
            for path in args.captures:
                with open(path, "rb") as f:
                    texts.append((path, f.read().decode("utf-8", "replace")))
            if args.selftest or not any(PREFIX in t or "NBS:" not in t for _, t in texts):
                return selftest.run(texts, args.csv)
            for path, text in texts:
                cap.add_text(text, path)
        else:
            capture_live(args, cap)
        rec = Recording(cap)
        status = report(rec, args)
        if status is not None:
            return status
        write_outputs(rec, args, cap)
    except (OSError, DecodeError, LinkError, subprocess.CalledProcessError) as e:
        sys.stderr.write("nbprof-decode: %s\n" % e)
        return 2
    return 0 if rec.whole else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
