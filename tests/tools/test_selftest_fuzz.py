"""test_selftest_fuzz.py - a fixed-seed fuzz loop over tools/selftest-report (the code
nbprof-decode --selftest runs), in the manner of tools/dev/fuzz-decode.

A second loop damages the QR codes of `selftest --qr` (selftestgen.c `qr`): a
code dropped, a character of its payload or CRC changed, its number made
impossible, a piece cut, a code of another report or random text in its
place. Every damaged set must be refused (exit 1, "QR codes refused"), every
set merely reordered or read twice accepted, and nothing may raise.

Inputs are report blocks printed by the kernel's own formatter
(tests/tools/selftestgen.c), one run or two runs of different seeds in one
capture, then damaged: lines dropped, repeated, swapped, cut, characters
flipped, fields replaced under a correct CRC (so the parser behind the CRC
is reached: numbers that are not numbers, huge counts, missing fields),
begin lines lost. The contract checked on every case: no exception (each
case runs in-process under a 5-second alarm with the address space
limited to 1 GiB, so a runaway allocation or loop is one), an exit status
of 0, 1 or 2, not 0 when a line was lost, cut or corrupted, and no report
holding checks of both runs.
"""

import csv
import io
import os
import random
import re
import resource
import signal
import subprocess
import zlib

import pytest

from conftest import BUILD, REPO

from nbproflib import selftest as st

SELFTESTGEN = os.path.join(BUILD, "h", "tools", "selftestgen")
CASES = 600
SEED = 20261127
KINDS = ("drop", "dup", "swap", "cut", "flip", "field", "begin", "none")
FIELDS = ("group", "status", "name", "measured", "expected", "note")



@pytest.fixture(scope="module")
def runs():
    if not os.path.exists(SELFTESTGEN):
        subprocess.run(["make", "-s", "-C", REPO, os.path.relpath(SELFTESTGEN, REPO)],
                       check=True)

    def gen(seed, what):
        return subprocess.run([SELFTESTGEN, "-s", str(seed), "-n", "24", what],
                              stdout=subprocess.PIPE, check=True,
                              universal_newlines=True).stdout
    out = []
    for seed in range(1, 9):
        truth = [tuple(f.split("\t")) for f in gen(seed, "truth").splitlines()]
        out.append((gen(seed, "block").splitlines(), truth))
    return out


def framed(body):
    return "NBS:%s|%08X" % (body, zlib.crc32(body.encode()))


def nbs_indices(lines):
    return [i for i, l in enumerate(lines) if l.startswith("NBS:")]


FIELD_VALUES = ("", "x", "-1", "\u00b2", "99999999999999999999", "30000000000", "4", "0",
                "PASS", "end", "begin", "check", "|", "1e9")


def same_line(a, b):
    """The same line but for the case of its CRC's hex digits (which say the same)."""
    (ba, _, ca), (bb, _, cb) = a.rpartition("|"), b.rpartition("|")
    return ba == bb and ca.strip().lower() == cb.strip().lower()


def mutate(rng, lines, kind):
    """lines damaged by one kind of mutation; whether an NBS: line changed."""
    idx = nbs_indices(lines)
    if kind == "none" or not idx:
        return lines, False
    k = rng.choice(idx)
    lines = list(lines)
    if kind == "drop":
        del lines[k]
    elif kind == "dup":
        lines.insert(k, lines[k])
        return lines, False
    elif kind == "swap":
        j = rng.choice(idx)
        lines[k], lines[j] = lines[j], lines[k]
        return lines, False           # order alone loses nothing
    elif kind == "cut":
        lines[k] = lines[k][:rng.randrange(len(lines[k]))]
    elif kind == "flip":
        s = list(lines[k])
        p = rng.randrange(4, len(s))
        s[p] = chr((ord(s[p]) ^ (1 << rng.randrange(7))) or 65)
        old, lines[k] = lines[k], "".join(s)
        return lines, not same_line(old, lines[k])
    elif kind == "field":
        body = lines[k][4:].rsplit("|", 1)[0].split("|")
        body[rng.randrange(len(body))] = rng.choice(FIELD_VALUES)
        lines[k] = framed("|".join(body))
        return lines, False           # a CRC-valid line may say anything: no exit-1 promise
    elif kind == "begin":
        if not lines[k].startswith("NBS:0|begin|"):
            k = next(i for i in idx if lines[i].startswith("NBS:0|begin|"))
        del lines[k]
    return lines, True


def limited(fn):
    """fn() under a 5-second alarm and a 1 GiB address-space limit: a runaway
    allocation becomes MemoryError, a loop an alarm."""
    def alarm(*_):
        raise TimeoutError("selftest-report ran for more than 5 s")
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    old = signal.signal(signal.SIGALRM, alarm)
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30 if hard == resource.RLIM_INFINITY
                                            else min(1 << 30, hard), hard))
    signal.alarm(5)
    try:
        return fn()
    finally:
        signal.alarm(0)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        signal.signal(signal.SIGALRM, old)


def test_fuzz_loop_finds_nothing(runs):
    rng = random.Random(SEED)
    seen_exits, seen_kinds = set(), set()
    for case in range(CASES):
        a = rng.randrange(len(runs))
        two = rng.random() < 0.4
        b = (a + 1 + rng.randrange(len(runs) - 1)) % len(runs)
        kind = KINDS[case % len(KINDS)]
        first, second = runs[a][0], (runs[b][0] if two else [])
        if two and rng.random() < 0.5:  # damage within one run (a swap across runs is a
            second, damaged = mutate(rng, second, kind)     # line of the other run: no tool
        else:                                               # without run ids could tell)
            first, damaged = mutate(rng, first, kind)
        lines = first + second
        out, err = io.StringIO(), io.StringIO()
        try:
            status = limited(lambda: st.run([("cap", "\n".join(lines) + "\n")], "-", out, err))
        except Exception as e:       # noqa: BLE001 - any exception is the finding
            pytest.fail("case %d (%s): %s: %s" % (case, kind, type(e).__name__, e))
        assert status in (0, 1, 2), (case, status)
        if damaged:
            assert status != 0, "case %d (%s): damage not reported\n%s" % (
                case, kind, "\n".join(lines))
        text = out.getvalue()
        rows = list(csv.reader(io.StringIO(text[text.index("block,group"):]))) \
            if "block,group" in text else []
        blocks = {}
        for r in rows[1:]:
            blocks.setdefault(r[0], []).append(tuple(r[1:]))
        if two:
            ta, tb = set(runs[a][1]), set(runs[b][1])
            for n, got in blocks.items():
                only_a = [g for g in got if g in ta and g not in tb]
                only_b = [g for g in got if g in tb and g not in ta]
                assert not (only_a and only_b), "case %d (%s): block %s merges two runs" % (
                    case, kind, n)
        seen_exits.add(status)
        seen_kinds.add(kind)
    assert seen_exits == {0, 1, 2} or seen_exits == {0, 1}, seen_exits
    assert seen_kinds == set(KINDS)


# --- the QR codes of selftest --qr (nbproflib/selftest_qr.py) ------------------------------

QR_KINDS = ("drop", "dup", "swap", "cut", "flip", "number", "crc", "garbage", "foreign", "none")
ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:"


def qr_mutate(rng, codes, other):
    """codes damaged by one kind; (codes, kind, whether the set can no longer be whole)."""
    kind = rng.choice(QR_KINDS)
    codes = list(codes)
    k = rng.randrange(len(codes))
    head_end = codes[k].index(" ", 10) + 1        # after "NBQ1 k/n CRC "
    if kind == "drop":
        del codes[k]
    elif kind == "dup":
        codes.insert(k, codes[k])
        return codes, kind, False
    elif kind == "swap":
        rng.shuffle(codes)
        return codes, kind, False
    elif kind == "cut":
        codes[k] = codes[k][:rng.randrange(head_end, len(codes[k]))]
    elif kind == "flip":
        p = rng.randrange(head_end, len(codes[k]))
        c = rng.choice(ALNUM.replace(codes[k][p], ""))
        codes[k] = codes[k][:p] + c + codes[k][p + 1:]
    elif kind == "number":
        n = len(codes)
        codes[k] = codes[k].replace("/%d " % n, "/%d " % rng.choice((0, n + 1, 999999)), 1)
    elif kind == "crc":
        p = rng.randrange(head_end - 9, head_end - 1)
        c = rng.choice("0123456789ABCDEF".replace(codes[k][p], ""))
        codes[k] = codes[k][:p] + c + codes[k][p + 1:]
    elif kind == "garbage":
        codes.append("NBQ1 %d/%d %08X %s" % (rng.randrange(1, 40), rng.randrange(1, 40),
                                             rng.getrandbits(32),
                                             "".join(rng.choice(ALNUM) for _ in range(90))))
    elif kind == "foreign":
        codes[k] = rng.choice(other)
    else:
        return codes, kind, False
    return codes, kind, True


def test_qr_fuzz_loop_refuses_and_never_fails():
    gen = os.path.join(BUILD, "h", "tools", "selftestgen")
    if not os.path.exists(gen):
        subprocess.run(["make", "-s", "-C", REPO, os.path.relpath(gen, REPO)], check=True)
    sets = [subprocess.run([gen, "-s", str(seed), "-n", "30", "qr", str(chars)],
                           stdout=subprocess.PIPE, check=True,
                           universal_newlines=True).stdout.splitlines()
            for seed, chars in ((1, 120), (2, 178), (3, 400))]
    rng = random.Random(SEED)
    seen = set()
    for case in range(300):
        i = rng.randrange(len(sets))
        codes, kind, damaged = qr_mutate(rng, sets[i], sets[(i + 1) % len(sets)])
        out, err = io.StringIO(), io.StringIO()
        try:
            status = limited(lambda: st.run([("-", "\n".join(codes) + "\n")], None, out, err))
        except Exception as e:       # noqa: BLE001 - any exception is the finding
            pytest.fail("case %d (%s): %s: %s" % (case, kind, type(e).__name__, e))
        assert status in (0, 1, 2), (case, status)
        if damaged:
            assert status == 1 and "QR codes refused" in err.getvalue(), (
                case, kind, err.getvalue(), "\n".join(codes))
        else:
            assert status == 0, (case, kind, err.getvalue())
        seen.add(kind)
    assert seen == set(QR_KINDS)
