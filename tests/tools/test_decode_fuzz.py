"""test_decode_fuzz.py - a short deterministic pass of tools/dev/fuzz-decode.

The pass runs a fixed number of cases of a fixed seed over dumpgen's dumps
against tools/nbprof-decode and must find nothing, having produced every
exit status and used every kind of mutation. Decoders broken on purpose
(exit 0 on anything, an exception, a runaway allocation, a hang, a bad
exit status) show that each invariant is checked, and that a failure
prints a reproducer that exists.
"""

import os
import re
import subprocess

import pytest

from conftest import DUMPGEN, REPO

FUZZ = os.path.join(REPO, "tools", "dev", "fuzz-decode")
KINDS = ("field", "raw", "flip", "cut", "drop", "dup", "swap", "shuffle", "join", "noise")


def fuzz(*args, timeout=120):
    return subprocess.run(["/usr/bin/python3", FUZZ, "--dumpgen", DUMPGEN] + [str(a) for a in args],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=timeout)


@pytest.fixture(scope="module", autouse=True)
def built(dumpgen):
    return dumpgen


def test_short_pass_finds_nothing():
    p = fuzz("--seed", 20261125, "--cases", 400, "--seconds", 60)
    assert p.returncode == 0, p.stdout + p.stderr
    m = re.search(r"(\d+) cases in [\d.]+ s \(seed 20261125\), no failure; exits (.*); "
                  r"mutations (.*)$", p.stdout, re.M)
    assert m, p.stdout
    assert int(m.group(1)) == 400
    exits = dict(kv.split(":") for kv in m.group(2).split())
    assert set(exits) == {"0", "1", "2"}, exits        # whole, damaged and hopeless dumps
    kinds = dict(kv.split(":") for kv in m.group(3).split())
    assert set(kinds) == set(KINDS), kinds


def test_case_is_reproducible():
    a = fuzz("--seed", 5, "--case", 17, "-v")
    b = fuzz("--seed", 5, "--case", 17, "-v")
    assert a.returncode == b.returncode == 0
    assert a.stdout.splitlines()[0] == b.stdout.splitlines()[0]
    assert a.stdout.startswith("case 17: exit ")


BROKEN = {                      # kind: (decoder source, what the fuzzer must say)
    "trusting": ("def main(argv):\n    return 0\n", "exit 0, but the CSV"),
    "raising": ("def main(argv):\n    raise ValueError('boom')\n", "uncaught exception"),
    "allocating": ("def main(argv):\n    x = [0] * (1 << 31)\n    return len(x)\n",
                   "uncaught exception"),
    "hanging": ("import time\ndef main(argv):\n    time.sleep(60)\n", "timed out"),
    "bad status": ("def main(argv):\n    return 3\n", "exit status 3"),
}


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_broken_decoder_is_caught(tmp_path, kind):
    source, why = BROKEN[kind]
    dec = tmp_path / "decoder"
    dec.write_text(source)
    out = tmp_path / "crashes"
    p = fuzz("--seed", 3, "--seconds", 20, "--decoder", dec, "--timeout", 1, "--out", out)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "FAILURE in case" in p.stdout and why in p.stdout, p.stdout
    m = re.search(r"reproducer: (\S+)", p.stdout)
    assert m and os.path.exists(m.group(1)) and "NBD:" in open(m.group(1), errors="replace").read()
    assert re.search(r"replay: tools/nbprof-decode \S+", p.stdout)


def test_missing_dumpgen_is_a_clear_error(tmp_path):
    p = subprocess.run(["/usr/bin/python3", FUZZ, "--dumpgen", str(tmp_path / "none"),
                        "--seconds", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    assert p.returncode == 2 and "no dumpgen binary" in p.stderr
