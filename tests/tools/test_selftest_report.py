"""test_selftest_report.py - tools/selftest-report and nbprof-decode --selftest
against report blocks printed by the kernel's own formatter
(tests/tools/selftestgen.c, selftest/report.c).

The round trip compares every check the decoder reads back with the
results before framing, cleaned as selftest/selftest.h says ('|' -> '/',
control characters -> '?'); corrupt, missing and cut-off lines must be
reported with exit status 1, and a capture without a block with 2.
"""

import csv
import io
import os
import re
import subprocess

import pytest

from conftest import BUILD, DECODE, REPO

SELFTESTGEN = os.path.join(BUILD, "h", "tools", "selftestgen")
REPORT = os.path.join(REPO, "tools", "selftest-report")
FIELDS = ("group", "status", "name", "measured", "expected", "note")


@pytest.fixture(scope="module")
def gen():
    if not os.path.exists(SELFTESTGEN):
        subprocess.run(["make", "-s", "-C", REPO, "B=" + BUILD,
                        os.path.relpath(SELFTESTGEN, REPO)], check=True)

    def run(*args):
        return subprocess.run([SELFTESTGEN] + [str(a) for a in args], stdout=subprocess.PIPE,
                              check=True, universal_newlines=True).stdout
    return run


def cleaned(s):
    return re.sub(r"[\x00-\x1f\x7f]", "?", s.replace("|", "/"))


def truth(gen, *args):
    rows = []
    for line in gen(*args, "truth").splitlines():
        rows.append(dict(zip(FIELDS, (cleaned(f) for f in line.split("\t")))))
    return rows


def report(tmp_path, text, *extra, tool=REPORT, ok=(0,)):
    cap = tmp_path / "cap.log"
    cap.write_text(text)
    p = subprocess.run(["/usr/bin/python3", tool, str(cap)] + list(extra),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, cwd=str(tmp_path))
    assert p.returncode in ok, "exit %d\n%s" % (p.returncode, p.stderr)
    return p


def rows_of(csv_text):
    return [{k: r[k] for k in FIELDS} for r in csv.DictReader(io.StringIO(csv_text))]


@pytest.mark.parametrize("seed", [1, 7, 99])
def test_round_trip_every_check(gen, tmp_path, seed):
    want = truth(gen, "-s", seed, "-n", 60)
    p = report(tmp_path, gen("-s", seed, "-n", 60, "block"), "--csv", "-")
    got = rows_of(p.stdout[p.stdout.index("block,group"):])
    assert got == want
    counts = [sum(r["status"] == s for r in want) for s in ("PASS", "FAIL", "SKIP")]
    assert "selftest: %d passed, %d failed, %d skipped" % tuple(counts) in p.stdout
    assert "incomplete" not in p.stdout
    assert "0F_02H, CPUID 00000F29 stepping 9" in p.stdout
    assert "microcode 0000002E" in p.stdout


@pytest.mark.parametrize("seed", [2, 5])
def test_later_checks_decode(gen, tmp_path, seed):
    """PEBS, uncore, the wait cell and the restore check as the kernel judges them."""
    want = truth(gen, "-s", seed, "-n", 40)
    later = want[-6:]
    assert [r["group"] for r in later] == ["pebs", "pebs", "uncore", "uncore", "threads",
                                           "restore"]
    p = report(tmp_path, gen("-s", seed, "-n", 40, "block"), "--csv", "-")
    got = rows_of(p.stdout[p.stdout.index("block,group"):])
    assert got[-6:] == later
    for r in later:
        line = "  %s  %s: measured %s, expected %s" % (r["status"], r["name"], r["measured"],
                                                       r["expected"])
        assert line in p.stdout, (line, p.stdout)
    failed = [r for r in later if r["status"] == "FAIL"]
    if failed:      # this seed's variant: a skidded record, a lost register
        assert "record 21 at +10H, the load is at +CH" in p.stdout
        assert "(differ: MSR_ALF_ESCR0 (3CAH))" in p.stdout
    assert "\nuncore:\n" in p.stdout and "\nrestore:\n" in p.stdout


def test_decoder_detects_and_forwards(gen, tmp_path):
    block = gen("-s", 3, "block")
    auto = report(tmp_path, block, tool=DECODE)
    forced = report(tmp_path, block, "--selftest", tool=DECODE)
    direct = report(tmp_path, block)
    assert auto.stdout == forced.stdout == direct.stdout
    assert "nbprof selftest report" in auto.stdout


def test_corrupt_line_is_named(gen, tmp_path):
    lines = gen("-s", 5, "block").splitlines()
    k = next(i for i, l in enumerate(lines) if l.startswith("NBS:7|"))
    lines[k] = lines[k].replace("check", "chack", 1)
    p = report(tmp_path, "\n".join(lines) + "\n", ok=(1,))
    assert "cap.log:%d: corrupt NBS: line (CRC mismatch)" % (k + 1) in p.stderr
    assert "incomplete: missing line(s): 7" in p.stdout


def test_cut_off_block(gen, tmp_path):
    lines = [l for l in gen("-s", 5, "block").splitlines() if not re.match(r"NBS:\d+\|end\|", l)]
    p = report(tmp_path, "\n".join(lines) + "\n", ok=(1,))
    assert "incomplete: the end line is missing" in p.stdout


def test_totals_must_agree(gen, tmp_path):
    import zlib
    out = []
    for line in gen("-s", 9, "block").splitlines():
        m = re.match(r"NBS:(\d+\|end\|)(\d+)(\|.*)\|[0-9A-F]{8}\s*$", line)
        if m:   # a well-formed end line that claims one more PASS
            body = m.group(1) + str(int(m.group(2)) + 1) + m.group(3)
            line = "NBS:%s|%08X" % (body, zlib.crc32(body.encode()))
        out.append(line)
    p = report(tmp_path, "\n".join(out) + "\n", ok=(1,))
    assert "incomplete: the end line says" in p.stdout


def test_no_block(tmp_path):
    p = report(tmp_path, "nbprof> cpu\nnothing here\n", ok=(2,))
    assert "no selftest report block" in p.stderr


def framed(body):
    import zlib
    return "NBS:%s|%08X" % (body, zlib.crc32(body.encode()))


def test_a_lost_begin_line_does_not_merge_two_runs(gen, tmp_path):
    """D3b: two runs in one capture, the second's begin line lost: its lines were
    merged into the first run's report, replacing the first run's results."""
    one = gen("-s", 3, "block").splitlines()
    two = [l for l in gen("-s", 4, "block").splitlines() if not l.startswith("NBS:0|begin|")]
    assert one != two
    for tool in (REPORT, DECODE):
        extra = ("--selftest",) if tool == DECODE else ()
        p = report(tmp_path, "\n".join(one + two) + "\n", "--csv", "-", *extra, tool=tool,
                   ok=(1,))
        assert "nbprof selftest report 1 of 2" in p.stdout
        assert "nbprof selftest report 2 of 2" in p.stdout
        first, second = p.stdout.split("nbprof selftest report 2 of 2")
        assert "incomplete" not in first                 # the first run, whole
        assert "incomplete: the begin line is missing" in second
        rows = rows_of(p.stdout[p.stdout.index("block,group"):])
        assert [r for r in rows] == truth(gen, "-s", 3) + truth(gen, "-s", 4)


def test_same_line_twice_is_one_run(gen, tmp_path):
    """Two captures of one run (the same lines twice) stay one block each, as before,
    and a line repeated inside one capture changes nothing."""
    lines = gen("-s", 3, "block").splitlines()
    doubled = lines[:5] + lines[4:]
    p = report(tmp_path, "\n".join(doubled) + "\n")
    assert "report 1 of" not in p.stdout and "incomplete" not in p.stdout


@pytest.mark.parametrize("end,why", [
    ("12|x|0|40", "malformed end line"),
    ("1|2|3", "malformed end line"),
    ("1|0|0|30000000000", "malformed end line"),          # more than 9 digits
    ("1|0|0|999999999", "more than a report holds"),
    ("\u00b2|0|0|5", "malformed end line"),                # a Unicode digit: int() raised
])
def test_a_malformed_end_line_is_reported_not_a_traceback(gen, tmp_path, end, why):
    """D4: a CRC-valid end line with a non-number raised a traceback from int(), and a
    line count of 3e10 made the tool try range(30000000000)."""
    lines = gen("-s", 5, "block").splitlines()
    k = next(i for i, l in enumerate(lines) if re.match(r"NBS:\d+\|end\|", l))
    seq = lines[k][4:].split("|")[0]
    lines[k] = framed("%s|end|%s" % (seq, end))
    for tool in (REPORT, DECODE):
        extra = ("--selftest",) if tool == DECODE else ()
        p = report(tmp_path, "\n".join(lines) + "\n", *extra, tool=tool, ok=(1,))
        assert "Traceback" not in p.stderr
        assert "incomplete: " in p.stdout and why in p.stdout, p.stdout


def test_a_unicode_digit_sequence_number_is_corrupt(tmp_path):
    p = report(tmp_path, framed("\u00b9|begin|1|5") + "\n", ok=(1, 2))
    assert "Traceback" not in p.stderr
    assert "no sequence number" in p.stderr


def framed_seq(seq, body):
    return framed("%d|%s" % (seq, body))


def small_block(backend, first):
    """begin, machine (with `backend`), two checks (`first` FAIL, one PASS), end."""
    lines = [framed_seq(0, "begin|1|3"),
             framed_seq(1, "machine|cpuid=00000F12|sig=0F_01H|stepping=2|brand=x|microcode=unreadable|"
                       "misc_enable=0000000000000881|backend=" + backend),
             framed_seq(2, "check|counters|FAIL|%s|all 0|cycles|why" % first),
             framed_seq(3, "check|restore|PASS|PMU registers as before the selftest|85|85|"),
             framed_seq(4, "end|1|1|0|5")]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("tool", [REPORT, DECODE])
def test_summary_flags_model_and_nothing_counted(tmp_path, tool):
    extra = ("--selftest",) if tool == DECODE else ()
    # a report made on the model says so; one from hardware does not
    p = report(tmp_path, small_block("model 0F_01H stepping 2 without HT", "counter 0"),
               *extra, tool=tool)
    assert "\nselftest: 1 passed, 1 failed, 0 skipped; on the software model, not this " \
           "machine's PMU\n" in p.stdout, p.stdout
    p = report(tmp_path, small_block("hardware 0F_01H stepping 2 without HT",
                                     "no counter counted: counters 0-17, loop 150 minus loop 50"),
               *extra, tool=tool)
    assert "\nselftest: 1 passed, 1 failed, 0 skipped; no counter counted\n" in p.stdout, p.stdout
