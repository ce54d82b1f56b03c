"""selftest-report - turn the NBS: lines of nbprof's `selftest` into a report.

    selftest-report CAPTURE [CAPTURE...] [--csv FILE]
    nbprof-decode --selftest CAPTURE ...      (the same, through the decoder)

A capture is any text holding the lines `selftest` printed (a terminal log,
a QEMU serial log, an e-mail); everything else is ignored. It may also be
a photo or screenshot of the QR codes `selftest --qr` shows (read with
zbarimg), or "-": standard input, e.g. the texts a phone's QR reader
shows, pasted; the codes are put back together (nbproflib/selftest_qr.py)
and a missing, doubled or altered code refuses them with the reason. Each line is
"NBS:" seq "|" kind "|" fields... "|" CRC, the CRC-32 (zlib.crc32) of the
text between "NBS:" and the last "|" in 8 hex digits (selftest/selftest.h).
A block runs from its "begin" line (seq 0) to its "end" line, which gives
the PASS/FAIL/SKIP totals and the number of lines; each block in the
captures becomes one report. Two runs are never merged: a line after an
"end" line, or a line whose number the block already holds with other
text, starts a new block (whose begin line is then reported missing).
Corrupt lines, missing lines, malformed begin/end lines and totals that
disagree with the check lines are listed; the report then says it is
incomplete.

Exit status: 0 every block complete, 1 something missing or corrupt (or
codes refused), 2 no report block found.
"""

import argparse
import csv
import io
import re
import sys
import zlib

from nbproflib import selftest_qr

LINE_RE = re.compile(r"NBS:([^\r\n]*)\|([0-9A-Fa-f]{8})\s*$")
CHECK_FIELDS = ("group", "status", "name", "measured", "expected", "note")
SEQ_RE = re.compile(r"[0-9]{1,9}\Z")
# A block claims at most this many lines: `selftest` prints a few hundred, and
# a damaged count must not make the tool allocate for it.
MAX_LINES = 100000


def parse_line(text):
    """(seq, kind, fields) of one NBS: line, or a reason string; None if not one."""
    m = LINE_RE.search(text)
    if not m:
        return "no CRC" if "NBS:" in text else None
    body, crc = m.group(1), int(m.group(2), 16)
    if zlib.crc32(body.encode("utf-8", "replace")) != crc:
        return "CRC mismatch"
    parts = body.split("|")
    if len(parts) < 2 or not SEQ_RE.match(parts[0]):
        return "no sequence number"
    return int(parts[0]), parts[1], parts[2:]


def end_counts(fields):
    """(passed, failed, skipped, lines) of an end line's fields, or a reason string."""
    if len(fields) < 4 or not all(SEQ_RE.match(f) for f in fields[:4]):
        return "malformed end line (4 counts expected): %s" % "|".join(fields)[:80]
    counts = [int(f) for f in fields[:4]]
    if counts[3] > MAX_LINES:
        return "the end line says %d lines, more than a report holds (%d)" % (counts[3], MAX_LINES)
    return counts


class Block:
    """One run of `selftest`: its lines by sequence number."""

    def __init__(self):
        self.lines = {}
        self.problems = []

    def takes(self, seq, kind, fields):
        """Whether this line belongs here: not after the end line, no other text at seq."""
        if self.has_end():
            return seq in self.lines and self.lines[seq] == (kind, fields)
        return seq not in self.lines or self.lines[seq] == (kind, fields)

    def add(self, seq, kind, fields):
        self.lines[seq] = (kind, fields)

    def has_end(self):
        return any(kind == "end" for kind, _ in self.lines.values())

    @property
    def end(self):
        """The end line's counts; None when there is none or it is malformed."""
        for kind, fields in self.lines.values():
            if kind == "end":
                counts = end_counts(fields)
                return None if isinstance(counts, str) else counts
        return None

    def machine(self):
        for kind, fields in self.lines.values():
            if kind == "machine":
                return dict(f.split("=", 1) for f in fields if "=" in f)
        return {}

    def checks(self):
        out = []
        for seq in sorted(self.lines):
            kind, fields = self.lines[seq]
            if kind == "check":
                out.append(dict(zip(CHECK_FIELDS, fields + [""] * 6)))
        return out

    def verify(self):
        end = self.end
        if 0 not in self.lines or self.lines[0][0] != "begin":
            self.problems.append("the begin line is missing")
        for kind, fields in self.lines.values():
            if kind == "end" and isinstance(end_counts(fields), str):
                self.problems.append(end_counts(fields))
                return
        if end is None:
            self.problems.append("the end line is missing (cut off?)")
            return
        missing = [s for s in range(end[3]) if s not in self.lines]
        if missing:
            self.problems.append("missing line(s): %s" % ", ".join(map(str, missing)))
        got = [sum(c["status"] == s for c in self.checks()) for s in ("PASS", "FAIL", "SKIP")]
        if not missing and got != end[:3]:
            self.problems.append("the end line says %d/%d/%d passed/failed/skipped, the check "
                                 "lines %d/%d/%d" % tuple(end[:3] + got))


def read_blocks(texts):
    """Blocks from capture texts, and corrupt-line reports (source, line, reason)."""
    blocks, corrupt, cur = [], [], None
    for source, text in texts:
        for lineno, line in enumerate(text.splitlines(), 1):
            r = parse_line(line)
            if r is None:
                continue
            if isinstance(r, str):
                corrupt.append((source, lineno, r))
                continue
            seq, kind, fields = r
            if kind == "begin" or cur is None or not cur.takes(seq, kind, fields):
                cur = Block()
                blocks.append(cur)
            cur.add(seq, kind, fields)
    for b in blocks:
        b.verify()
    return blocks, corrupt


def verdict_flags(block):
    """What the summary must add: nothing counted; a report made on the model."""
    flags = []
    if any(c["status"] == "FAIL" and c["name"].startswith("no counter counted")
           for c in block.checks()):
        flags.append("; no counter counted")
    if block.machine().get("backend", "").startswith("model"):
        flags.append("; on the software model, not this machine's PMU")
    return flags


def report_text(block, index, count):
    m = block.machine()
    out = ["nbprof selftest report%s" % (" %d of %d" % (index, count) if count > 1 else "")]
    out.append("machine: %s, CPUID %s stepping %s, \"%s\"" % (
        m.get("sig", "?"), m.get("cpuid", "?"), m.get("stepping", "?"), m.get("brand", "")))
    out.append("microcode %s, IA32_MISC_ENABLE %s, PMU backend %s" % (
        m.get("microcode", "?"), m.get("misc_enable", "?"), m.get("backend", "?")))
    group = None
    for c in block.checks():
        if c["group"] != group:
            group = c["group"]
            out.append("%s:" % group)
        if c["status"] == "SKIP":
            out.append("  SKIP  %s: %s" % (c["name"], c["note"]))
        else:
            out.append("  %s  %s: measured %s, expected %s%s" % (
                c["status"], c["name"], c["measured"], c["expected"],
                " (%s)" % c["note"] if c["note"] else ""))
    end = block.end
    if end:
        out.append("selftest: %d passed, %d failed, %d skipped%s" % (tuple(end[:3]) + (
            "".join(verdict_flags(block)),)))
    for p in block.problems:
        out.append("incomplete: %s" % p)
    return "\n".join(out) + "\n"


def csv_text(blocks):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(("block",) + CHECK_FIELDS)
    for i, b in enumerate(blocks, 1):
        for c in b.checks():
            w.writerow((i,) + tuple(c[k] for k in CHECK_FIELDS))
    return buf.getvalue()


def run(texts, csv_path=None, out=sys.stdout, err=sys.stderr):
    """Print the reports; the exit status of the module's docstring."""
    try:
        texts = selftest_qr.expand(texts)
    except selftest_qr.Refused as e:
        err.write("selftest-report: QR codes refused: %s\n" % e)
        return 1
    blocks, corrupt = read_blocks(texts)
    for source, lineno, why in corrupt:
        err.write("selftest-report: %s:%d: corrupt NBS: line (%s)\n" % (source, lineno, why))
    if not blocks:
        err.write("selftest-report: no selftest report block found\n")
        return 2
    for i, b in enumerate(blocks, 1):
        out.write(report_text(b, i, len(blocks)))
    if csv_path:
        text = csv_text(blocks)
        if csv_path == "-":
            out.write(text)
        else:
            with open(csv_path, "w") as f:
                f.write(text)
    return 1 if corrupt or any(b.problems for b in blocks) else 0


def main(argv):
    p = argparse.ArgumentParser(prog="selftest-report", description=__doc__.split("\n\n")[0])
    p.add_argument("captures", nargs="+", metavar="CAPTURE",
                   help="a text capture, a photo or screenshot of QR codes, or - (standard input)")
    p.add_argument("--csv", metavar="FILE", help="one row per check (\"-\": standard output)")
    args = p.parse_args(argv)
    texts = []
    try:
        for path in args.captures:
            texts.append(selftest_qr.read_capture(path, sys.stdin))
    except selftest_qr.Refused as e:
        sys.stderr.write("selftest-report: %s\n" % e)
        return 1
    return run(texts, args.csv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
