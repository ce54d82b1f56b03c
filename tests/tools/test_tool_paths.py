"""test_tool_paths.py - every tools/... path the tree names exists, and no host tool
loads another by its file path.

The host tools live in three folders by who runs them (tools/, tools/build/,
tools/dev/; docs/dev/tools.md) and share one package, tools/nbproflib. A
script that moves leaves its old path behind in Makefile recipes, test
fixtures, comments and the documentation; this test reads every tracked
text file and fails on a "tools/NAME" (or a Python os.path.join(REPO,
"tools", ...)) that is not in the tree. Paths of
other projects' trees that happen to start with tools/ are listed in
FOREIGN with where they come from.
"""

import os
import re
import subprocess

import pytest

from conftest import REPO

PATH = re.compile(r"(?<![A-Za-z0-9_./-])tools/[A-Za-z0-9_./-]*")
# the same path built in Python: os.path.join(REPO, "tools", "build", "mkimage")
JOINED = re.compile(r'os\.path\.join\(REPO, "tools"((?:, "[^"]+")+)\)')
FOREIGN = (
    "tools/perf/",      # Linux's tools/perf/util/header.h, the perf.data layout (perfdata.py)
)
# the one deliberate file-path load: fuzz-decode --decoder FILE, a stand-in decoder
# that checks the fuzzer itself (tests/tools/test_decode_fuzz.py)
PATH_LOADERS = re.compile(r"SourceFileLoader|spec_from_file_location|\bexec\(|load_source")
MAY_LOAD = {"tools/dev/fuzz-decode"}
SELF = os.path.relpath(os.path.abspath(__file__), REPO)


def tracked_files():
    try:
        out = subprocess.run(["git", "-C", REPO, "ls-files", "-z"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        pytest.fail("cannot list the tracked files (%s): this test needs the git checkout" % e)
    return [p for p in out.decode().split("\0") if p]


def text(path):
    try:
        with open(os.path.join(REPO, path), encoding="utf-8") as f:
            return f.read()
    except (UnicodeDecodeError, FileNotFoundError):
        return None             # a binary file; a tracked file deleted in the work tree


def named_paths():
    """[(file, line number, tools/... path)] of every tracked text file."""
    found = []
    for name in tracked_files():
        if name == SELF:
            continue            # it names stale paths on purpose
        body = text(name)
        for lineno, line in enumerate((body or "").splitlines(), 1):
            for m in PATH.finditer(line):
                found.append((name, lineno, m.group(0).rstrip(".,:")))
            for m in JOINED.finditer(line):
                found.append((name, lineno, "tools/" + "/".join(re.findall(r'"([^"]+)"',
                                                                          m.group(1)))))
    return found


def test_every_named_tools_path_exists():
    found = named_paths()
    assert len(found) > 100, "only %d tools/ paths found: is this the tree?" % len(found)
    missing = ["%s:%d: %s" % f for f in found
               if not f[2].startswith(FOREIGN) and not os.path.exists(os.path.join(REPO, f[2]))]
    assert not missing, "paths that are not in the tree:\n" + "\n".join(missing)


def test_the_check_sees_a_stale_path():
    """The pattern finds a path in prose, code and a Makefile recipe alike."""
    line = "run `tools/gensyms` or $(PYTHON) tools/dev/run-fuzz, (tools/nbprof-decode)."
    assert [m.group(0).rstrip(".,:") for m in PATH.finditer(line)] == \
        ["tools/gensyms", "tools/dev/run-fuzz", "tools/nbprof-decode"]
    assert not os.path.exists(os.path.join(REPO, "tools/gensyms"))
    assert not list(PATH.finditer("tests/tools/dumpgen.c build/h/tools/insnlen"))
    m = JOINED.search('x = [os.path.join(REPO, "tools", "build", "mkimage")] + extra')
    assert m and re.findall(r'"([^"]+)"', m.group(1)) == ["build", "mkimage"]
    assert not JOINED.search('os.path.join(BUILD, "h", "tools", "dumpgen")')


def test_no_tool_loads_another_by_path():
    tools = [p for p in tracked_files() if p.startswith("tools/")
             and (p.endswith(".py") or (text(p) or "").startswith("#!/usr/bin/python3"))]
    assert len(tools) > 20
    loaders = sorted(p for p in tools if PATH_LOADERS.search(text(p)))
    assert loaders == sorted(MAY_LOAD)
