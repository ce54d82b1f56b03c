"""test_docs.py - every example in the documentation that shows output is run.

Shell examples (`nbprof> ` blocks) run on the machine their page names,
under QEMU -icount, one boot per page (or `boot=` group) and machine, in
page order; host examples (`$ ` blocks) run with /bin/sh in a scratch
directory that holds the tree's sdk/ and tools/ and the build directory
(as build/), after the shell examples. Each command's output is compared with
the lines the page shows (mdexamples.matches: `...` and doctest-vary
fields). The syntax is in docs/dev/testing.md.

test_command_pages: every shell command (`help`) has a page
docs/commands/CMD.md whose synopsis and first paragraph are `help CMD`'s
usage line and summary, and a link from docs/commands/index.md; every page
there is a command's. It runs in the command pages' boot, before their
examples.
"""

import difflib
import os
import re
import subprocess
import tempfile

import pytest

import mdexamples
from conftest import REPO, qc

DOCS = os.path.join(REPO, "docs")
COMMANDS = os.path.join(DOCS, "commands")
COMMANDS_BOOT = ("commands", ("uefi-x64", mdexamples.DEFAULT_SIG, False))
HOST_TIMEOUT = 300


def pages():
    """README.md and every docs/**/*.md, relative to the tree, sorted."""
    found = ["README.md"]
    for root, _, files in os.walk(DOCS):
        found += [os.path.relpath(os.path.join(root, f), REPO) for f in files if f.endswith(".md")]
    return sorted(found)


def collect():
    examples = []
    for page in pages():
        with open(os.path.join(REPO, page), encoding="utf-8") as f:
            examples += mdexamples.parse(f.read(), page)
    return examples


def order(examples):
    """Shell examples grouped by boot (the command pages' first), in page order; host last."""
    first = {}
    for i, ex in enumerate(examples):
        first.setdefault(ex.boot, i)

    def key(ex):
        if ex.kind != "shell":
            return (2 if ex.kind == "host" else -1, 0, ex.page, ex.line)
        return (0 if ex.boot == COMMANDS_BOOT else 1, first[ex.boot], ex.page, ex.line)
    return sorted(examples, key=key)


EXAMPLES = order(collect())


def report(ex, step, actual):
    diff = "\n".join(difflib.unified_diff(step.expected, actual, "the page", "the output",
                                          lineterm="", n=2))
    return ("%s:%d: `%s` printed something else than the page shows\n%s\n%s"
            % (ex.page, step.line, step.command,
               mdexamples.first_difference(step.expected, actual, ex.vary), diff))


def test_examples_found():
    """A stage that found nothing checked nothing: that is a failure, not a pass."""
    kinds = {ex.kind for ex in EXAMPLES}
    assert "shell" in kinds and "host" in kinds, "no shell or no host example in the docs"


def help_texts(con):
    out = con.cmd("help")
    names = [l.split()[0] for l in out.splitlines() if l.startswith("  ")]
    assert names, out
    texts = {}
    for n in names:
        texts[n] = con.cmd("help " + n)
    return texts


def page_synopsis(text):
    """The first code block under '## Synopsis', and the page's first paragraph."""
    m = re.search(r"^## Synopsis\s*\n+```\w*\n(.*?)\n```", text, re.M | re.S)
    para = re.search(r"^# .*\n+((?:[^\n]+\n)+)", text)
    return (m.group(1) if m else None), (" ".join(para.group(1).split()) if para else None)


def test_command_pages(machines):
    con = machines.get(COMMANDS_BOOT)
    texts = help_texts(con)
    have = sorted(f[:-3] for f in os.listdir(COMMANDS) if f.endswith(".md") and f != "index.md")
    problems = []
    for name in sorted(set(have) - set(texts)):
        problems.append("docs/commands/%s.md: no shell command '%s' (help lists %s)"
                        % (name, name, " ".join(sorted(texts))))
    for name, text in sorted(texts.items()):
        if name not in have:
            problems.append("shell command '%s' has no page docs/commands/%s.md" % (name, name))
            continue
        usage, summary = text.split("\n")[0], text.split("\n")[1]
        assert usage.startswith("usage: "), text
        with open(os.path.join(COMMANDS, name + ".md"), encoding="utf-8") as f:
            syn, para = page_synopsis(f.read())
        if syn is None:
            problems.append("docs/commands/%s.md: no '## Synopsis' code block" % name)
        elif syn != usage[len("usage: "):]:
            problems.append("docs/commands/%s.md: synopsis\n    %s\n  but `help %s` says\n    %s"
                            % (name, syn, name, usage[len("usage: "):]))
        want = summary[0].upper() + summary[1:] + "."
        if para != want:
            problems.append("docs/commands/%s.md: first paragraph %r, but `help %s`'s summary "
                            "is %r" % (name, para, name, want))
    with open(os.path.join(COMMANDS, "index.md"), encoding="utf-8") as f:
        index = f.read()
    for name in texts:
        if "(%s.md)" % name not in index:
            problems.append("docs/commands/index.md: no link to %s.md" % name)
    assert not problems, "\n".join(problems)


def run_shell(ex, machines):
    con = machines.get(ex.boot)
    timeout = ex.opts.get("timeout", mdexamples.DEFAULT_TIMEOUT)
    for step in ex.steps:
        actual = con.cmd(step.command, timeout=timeout).split("\n")
        if actual == [""]:
            actual = []
        if not mdexamples.matches(step.expected, actual, ex.vary):
            pytest.fail(report(ex, step, actual), pytrace=False)


@pytest.fixture(scope="session")
def scratch():
    """A directory with the tree's sdk/, tools/ and docs/ (its example sources) and the
    build as build/."""
    with tempfile.TemporaryDirectory(prefix="nbprof-doc-") as d:
        os.symlink(os.path.join(REPO, "sdk"), os.path.join(d, "sdk"))
        os.symlink(os.path.join(REPO, "docs"), os.path.join(d, "docs"))
        os.symlink(os.path.join(REPO, "tools"), os.path.join(d, "tools"))
        os.symlink(qc.qemu.BUILD, os.path.join(d, "build"))
        yield d


def run_host(ex, machines, scratch):
    machines.stop()
    env = dict(os.environ, NBPROF_BUILD=qc.qemu.BUILD)
    for step in ex.steps:
        p = subprocess.run(["/bin/sh", "-c", step.command], cwd=scratch, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=ex.opts.get("timeout", HOST_TIMEOUT))
        out, err = (b.decode("utf-8", "replace") for b in (p.stdout, p.stderr))
        actual = (mdexamples.terminal(err) + out).rstrip("\n").split("\n")
        if actual == [""]:
            actual = []
        assert p.returncode == 0, "%s:%d: `%s` exited with status %d\n%s" % (
            ex.page, step.line, step.command, p.returncode, "\n".join(actual))
        if not mdexamples.matches(step.expected, actual, ex.vary):
            pytest.fail(report(ex, step, actual), pytrace=False)


def check_listing(ex):
    step = ex.steps[0]
    path = os.path.join(REPO, step.command)
    assert os.path.isfile(path), "%s:%d: file=%s: no such file in the tree" % (
        ex.page, ex.line, step.command)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    assert "\n".join(step.expected) + "\n" in text, (
        "%s:%d: the listing is not a part of %s as it is now" % (ex.page, ex.line, step.command))


@pytest.mark.parametrize("ex", EXAMPLES, ids=[e.name for e in EXAMPLES])
def test_example(ex, machines, scratch):
    if "skip" in ex.opts:
        pytest.skip(ex.opts["skip"])
    if ex.kind == "file":
        check_listing(ex)
    elif ex.kind == "shell":
        run_shell(ex, machines)
    else:
        run_host(ex, machines, scratch)
