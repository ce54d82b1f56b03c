"""outputs - what the host tools write from a recording: perf-script text, folded
stacks, CSV, the summary, an annotated disassembly, perf.data and pprof.

Each takes a recording.Recording and a symbol table (symbols.Symbols or one
that looks up the same way). The flame graph is flamegraph.py.
"""

import csv
import io
import os
import re
import subprocess

from nbproflib import perfdata as pd
from nbproflib import pprof
from nbproflib.frames import DecodeError
from nbproflib.recording import sample_comm
from nbproflib.symbols import frame_symbol

DSO = "nbprof"


def token(s, fallback, min_len):
    s = s.replace(" ", "_").replace("\t", "_")
    return s if len(s) >= min_len else fallback


def script_text(rec, syms):
    """The same text as the kernel's `script` command (prof/report.c)."""
    h = rec.header
    hz = h["tsc_hz"] or 1000000000
    out = []
    for s in rec.samples:
        comm = token(sample_comm(h, s["lp"]), DSO, 2)
        d = max(s["tsc"] - h["tsc_start"], 0)
        name, period = rec.event(s["event"])
        period = s.get("weight") or period
        if s["event"] >= len(h["events"]):
            ev = "event%d" % s["event"]
        else:
            ev = token(name, "event", 1)
        out.append("%s 0/%d [%03d] %d.%06d: %d %s:" % (comm, s["lp"], s["lp"], d // hz,
                                                       (d % hz) * 1000000 // hz, period, ev))
        for i, addr in enumerate([s["ip"]] + s["chain"]):
            fname, off = frame_symbol(syms, addr, i > 0)
            if fname:
                out.append("\t%16x %s+0x%x (%s)" % (addr, fname, off, DSO))
            else:
                out.append("\t%16x [unknown] (%s)" % (addr, DSO))
        out.append("")
    return "\n".join(out) + ("\n" if out else "")


def folded_event(rec, choice):
    """Event index of --event NAME or INDEX."""
    names = [name for name, _ in rec.header["events"]]
    if choice in names:
        return names.index(choice)
    if choice.isdigit() and int(choice) < len(names):
        return int(choice)
    raise DecodeError("--event %s: the recording has events %s" % (choice, ", ".join(names)))


def fold_groups(rec, choice):
    """{(LP, event index): [samples]} to fold: every sample, or those of --event.

    A Hyper-Threading recording (`record --pair`, `--cpu`) holds samples of
    several LPs and events; none is left out unless --event asks for it.
    """
    want = None if choice is None else folded_event(rec, choice)
    groups = {}
    for s in rec.samples:
        if want is None or s["event"] == want:
            groups.setdefault((s["lp"], s["event"]), []).append(s)
    return groups


def group_label(rec, group):
    lp, ev = group
    return "[LP%d %s]" % (lp, rec.event(ev)[0].replace(";", ":"))


def group_suffix(rec, group):
    """File name part of one LP and event: "lp1.instr_retired_t1"."""
    lp, ev = group
    return "lp%d.%s" % (lp, re.sub(r"[^A-Za-z0-9_-]", "_", rec.event(ev)[0]) or "event")


def split_path(path, suffix):
    root, ext = os.path.splitext(path)
    return "%s.%s%s" % (root, suffix, ext)


def folded_stacks(rec, syms, samples, weight="period", root=None):
    """{"comm;outer;...;leaf": weight}: what stackcollapse-perf.pl makes of script_text.

    Each sample weighs its own event's period (1 when the period is 0), as
    stackcollapse-perf.pl counts; weight="samples" counts samples instead.
    root(sample), when given, names a frame below comm: the LP and event,
    so samples of several LPs and events never mix unseen.
    """
    counts = {}
    for s in samples:
        names = [root(s)] if root else []
        names.append(token(sample_comm(rec.header, s["lp"]), DSO, 2))
        stack = []
        for i, addr in enumerate([s["ip"]] + s["chain"]):
            fname, _ = frame_symbol(syms, addr, i > 0)
            stack.append((fname or "[%s]" % DSO).replace(";", ":"))
        key = ";".join(names + stack[::-1])
        n = (s.get("weight") or rec.event(s["event"])[1] or 1) if weight == "period" else 1
        counts[key] = counts.get(key, 0) + n
    return counts


def folded_outputs(rec, syms, args):
    """[(folded path or None, svg path or None, counts, title part)] and a note for stderr.

    One group (LP, event): plain stacks. Several: merged under a root frame
    per group, or with --split one output per group.
    """
    groups = fold_groups(rec, args.event)
    keys = sorted(groups)
    sizes = ", ".join("%s %d samples" % (group_label(rec, g), len(groups[g])) for g in keys)
    notes = []
    if args.event is not None:
        other = len(rec.samples) - sum(len(v) for v in groups.values())
        if other:
            notes.append("--event %s: %d samples of other events left out" % (args.event, other))
    outs = []
    if args.split:
        for g in keys:
            sfx = group_suffix(rec, g)
            outs.append((args.folded and split_path(args.folded, sfx),
                         args.flamegraph and split_path(args.flamegraph, sfx),
                         folded_stacks(rec, syms, groups[g], args.weight),
                         group_label(rec, g)[1:-1]))
        notes.append("one output per LP and event: " + ", ".join(
            "%s (%d samples)" % (" and ".join(p for p in o[:2] if p), len(groups[g]))
            for o, g in zip(outs, keys)))
        return outs, notes
    counts, what = fold_merged(rec, syms, groups, args.weight)
    if len(keys) > 1:
        notes.append("folded %d LPs/events, each under a root frame: %s (--split: one output "
                     "each)" % (len(keys), sizes))
    outs.append((args.folded, args.flamegraph, counts, what))
    return outs, notes


def fold_merged(rec, syms, groups, weight="period"):
    """(counts, title part) of the groups in one set of stacks, root frames when several."""
    keys = sorted(groups)
    samples = [s for g in keys for s in groups[g]]
    if len(keys) <= 1:
        what = group_label(rec, keys[0])[1:-1] if keys else "no samples"
        return folded_stacks(rec, syms, samples, weight), what
    labels = {g: group_label(rec, g) for g in keys}
    counts = folded_stacks(rec, syms, samples, weight, lambda s: labels[(s["lp"], s["event"])])
    return counts, " + ".join(labels[g][1:-1] for g in keys)


def fold_all(rec, syms, weight="period"):
    """(counts, title part) of every sample: the folding tools/nbprof writes."""
    return fold_merged(rec, syms, fold_groups(rec, None), weight)


def folded_text(counts):
    return "".join("%s %d\n" % (k, counts[k]) for k in sorted(counts))


def csv_text(rec, syms):
    f = io.StringIO()
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["index", "lp", "event", "event_name", "cpl", "tsc", "ip", "symbol", "offset",
                "rflags", "rsp", "chain", "weight"])
    for s in rec.samples:
        name, off = syms.lookup(s["ip"])
        w.writerow([s["index"], s["lp"], s["event"], rec.event(s["event"])[0], s["cpl"],
                    s["tsc"], "0x%x" % s["ip"], name or "", "0x%x" % off if name else "",
                    "0x%x" % s["rflags"], "0x%x" % s["rsp"],
                    " ".join("0x%x" % a for a in s["chain"]),
                    s.get("weight") or rec.event(s["event"])[1]])
    return f.getvalue()


def summary_text(rec, syms):
    h, t = rec.header, rec.trailer
    lines = ["recording: %s, CPU %02X_%02XH stepping %d (CPUID.1:EAX %08XH), TSC %d Hz, "
             "%d-bit IPs"
             % (h["comm"] or "?", h["family"], h["model"], h["stepping"], h["signature"],
                h["tsc_hz"], h["ip_bits"])]
    for i, (name, period) in enumerate(h["events"]):
        lines.append("event %d: %s, period %d" % (i, name, period))
    lines.append("frames: %d, samples: %d of %d" % (h["frames"], len(rec.samples), h["samples"]))
    if t:
        for st in t["stores"]:
            lines.append("LP %d: %d held, %d stored, %d dropped (full), %d overwritten, %d nested"
                         % (st["lp"], st["held"], st["stored"], st["dropped"],
                            st["overwritten"], st["nested"]))
    return "\n".join(lines) + "\n"


def objdump_lines(elf):
    """[(link address or None, text)] of `objdump -d` output."""
    out = subprocess.run(["objdump", "-d", "-w", elf], stdout=subprocess.PIPE, check=True,
                         universal_newlines=True).stdout
    res = []
    for line in out.splitlines():
        m = re.match(r"^\s*([0-9a-f]+):\t", line)
        res.append((int(m.group(1), 16) if m else None, line))
    return res


def annotate_text(rec, syms, elf):
    """Per-function disassembly with the samples at each instruction."""
    counts = {}
    for s in rec.samples:
        rel = s["ip"] - rec.header["image_base"] + syms.image_base
        counts[rel] = counts.get(rel, 0) + 1
    total = len(rec.samples) or 1
    by_func = {}
    for s in rec.samples:
        name, _ = syms.lookup(s["ip"])
        if name:
            by_func[name] = by_func.get(name, 0) + 1
    # Split the disassembly into functions ("<name>:" headers).
    funcs, cur = {}, None
    for addr, text in objdump_lines(elf):
        m = re.match(r"^[0-9a-f]+ <([^>]+)>:$", text)
        if m:
            cur = funcs.setdefault(m.group(1), [])
        elif cur is not None and addr is not None:
            cur.append((addr, text))
    out = ["# annotate: %d samples; columns: samples, percent of all samples, objdump -d line"
           % len(rec.samples)]
    for name in sorted(by_func, key=lambda n: (-by_func[n], n)):
        out.append("")
        out.append("## %s: %d samples (%.2f%%)" % (name, by_func[name], 100.0 * by_func[name] / total))
        body = funcs.get(name)
        if body is None:
            out.append("   (not found in the disassembly)")
            continue
        for addr, text in body:
            n = counts.get(addr, 0)
            col = "%8d %6.2f%%" % (n, 100.0 * n / total) if n else " " * 16
            out.append("%s |%s" % (col, text))
    return "\n".join(out) + "\n"


def perf_data_dsos(rec, elf, syms, extra=()):
    """The DSOs of a recording: the kernel ELF at the dump's image base, then extra ones.

    extra: (path, runtime base) of other ELF files, e.g. a user's program.
    The ELF's own ImageBase symbol (the PE link base) is its link address 0.
    """
    base = rec.header["image_base"] - getattr(syms, "image_base", 0)
    return [pd.elf_dso(elf, base)] + [pd.elf_dso(p, b) for p, b in extra]


def write_perf_data(path, rec, elf, syms, extra=()):
    h = rec.header
    try:
        dsos = perf_data_dsos(rec, elf, syms, extra)
        meta = {"cpuid": "GenuineIntel,%d,%d,%d" % (h["family"], h["model"], h["stepping"]),
                "cpudesc": "NetBurst %02X_%02XH stepping %d" % (h["family"], h["model"],
                                                                 h["stepping"]),
                "cmdline": ["nbprof", h["comm"] or DSO]}
        comm = token(h["comm"], DSO, 2)
        if h.get("lp_comm"):
            lps = {s["lp"] for s in rec.samples} | set(h["lp_comm"])
            comm = {lp: token(sample_comm(h, lp), DSO, 2) for lp in lps}
        return pd.write_perf_data(path, rec.samples, h["events"], comm,
                                  dsos, h["tsc_hz"], h["tsc_start"], meta)
    except pd.PerfDataError as e:
        raise DecodeError(str(e)) from None


def write_pprof(path, rec, syms, elf):
    """--pprof: a gzipped pprof profile (nbproflib/pprof.py)."""
    h = rec.header
    k = getattr(syms, "kernel", syms)
    mapping = None
    if hasattr(k, "hi"):
        mapping = (k.base + k.lo, k.base + k.hi, elf or DSO)
    last = max((s["tsc"] for s in rec.samples), default=h["tsc_start"])
    duration = max(last - h["tsc_start"], 0) * 1000000000 // (h["tsc_hz"] or 1000000000)
    blob = pprof.pprof_gzip(rec.samples, h["events"], syms.lookup, mapping, duration,
                                   "[%s]" % DSO)
    with open(path, "wb") as f:
        f.write(blob)


