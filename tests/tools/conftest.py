"""conftest.py - fixtures for the host tool tests (tools/nbprof-decode, tools/nbproflib).

The recordings come from build/h/tools/dumpgen (tests/tools/dumpgen.c): the
kernel's own portable sample store, `dump` encoder and `script` formatter
compiled for the host, so the decoder is checked against the real encoder.
`make tool-test` and `make check` build it first; run alone, the fixture
builds it with make. NBPROF_COUNTS names a file that receives
"PASSED FAILED" for `make check`'s summary line.
"""

import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/
from counts import write_counts  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(REPO, os.environ.get("NBPROF_BUILD", "build"))
DUMPGEN = os.path.join(BUILD, "h", "tools", "dumpgen")
DECODE = os.path.join(REPO, "tools", "nbprof-decode")
# the host tools' package (tools/nbproflib), for the tests of its units
sys.path.insert(0, os.path.join(REPO, "tools"))


@pytest.fixture(scope="module")
def dumpgen():
    if not os.path.exists(DUMPGEN):
        subprocess.run(["make", "-s", "-C", REPO, "B=" + BUILD, os.path.relpath(DUMPGEN, REPO)],
                       check=True)

    def run(*args):
        return subprocess.run([DUMPGEN] + [str(a) for a in args], stdout=subprocess.PIPE,
                              check=True, universal_newlines=True).stdout
    return run


@pytest.fixture
def decode(tmp_path):
    def run(*args, ok=(0,)):
        p = subprocess.run(["/usr/bin/python3", DECODE] + [str(a) for a in args],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, cwd=str(tmp_path))
        assert p.returncode in ok, "exit %d\n%s" % (p.returncode, p.stderr)
        return p
    return run


def pytest_terminal_summary(terminalreporter):
    write_counts(terminalreporter)
