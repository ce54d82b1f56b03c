"""test_bench_figures.py - a figure `make bench` measures is quoted as benchmarks.md shows it.

docs/dev/benchmarks.md holds `make bench`'s output (tools/dev/bench.py): the
one place its figures are typed in. Prose elsewhere (README.md and every
docs/**/*.md, benchmarks.md's own text around the output too) that states
one of them - bytes per dump sample, samples a second at 115200 baud, the
stepped instruction's guest instructions, the PMI handler against its floor,
the handler's tail after a counter's restart and its way in on each kernel - must state the value that output shows, so a page cannot keep an old
run's figure after benchmarks.md is brought up to date. No machine needed.
"""

import os
import re

import pytest

from test_docs import REPO, pages

BENCH_PAGE = "docs/dev/benchmarks.md"
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
NUM = r"(\d[\d,]*(?:\.\d+)?)"

# What make bench prints (the block after "$ make bench"): figure -> regex of its row.
BENCH = {
    "bytes_g": r"^bytes per sample: script \| dump +\S+ +(\S+) +\(\d+ samples, -g",
    "bytes": r"^bytes per sample: dump +- +(\S+) +\(\d+ samples, no -g",
    "rate": r"at 115200 baud: (\d+) samples/s",
    "rate_g": r"at 115200 baud: \d+ samples/s, (\d+) with -g",
    "step": r"^stepped instruction under stat .*: (\S+) guest instructions",
    "floor": r"\((\S+) x the floor;",
    "floor_insns": r"^PMI handler: instructions per PMI .*x86-64: (\S+) x the floor total",
    "tail64": r"^PMI handler: tail after a counter's restart +(\d+) +\d+",
    "tail32": r"^PMI handler: tail after a counter's restart +\d+ +(\d+)",
    "way64": r"^  of which its way in \(stub to dispatcher\) +(\d+) +\d+",
    "way32": r"^  of which its way in \(stub to dispatcher\) +\d+ +(\d+)",
}

# How prose states each figure: (regex, the figure of each group in order).
PROSE = [
    (r"a -g sample costs " + NUM + r" bytes", ["bytes_g"]),
    (r"one without a call chain " + NUM + r"(?! in version)", ["bytes"]),
    (NUM + r" bytes (?:on the line )?(?:per|a) -g sample", ["bytes_g"]),
    (NUM + r" bytes (?:on the line )?(?:per|a) sample without a call chain", ["bytes"]),
    (NUM + r" -g samples or " + NUM + r" plain ones a second", ["rate_g", "rate"]),
    (NUM + r" -g samples (?:a second|per second|/s)", ["rate_g"]),
    (NUM + r" (?:plain )?samples (?:a second|per second|/s)", ["rate"]),
    (NUM + r" guest instructions", ["step"]),
    (NUM + r" ?x the floor(?! total)", ["floor"]),
    (NUM + r" ?x the floor total", ["floor_insns"]),
    (r"tail: [^.]*?IRET: " + NUM + r" instructions on the x86-64 kernel, " + NUM
     + r" on the 32-bit one", ["tail64", "tail32"]),
    (r"way in [^.]*?: " + NUM + r" instructions on the x86-64 kernel, " + NUM
     + r" on the 32-bit one", ["way64", "way32"]),
]

# A duration worked out from a rate: "100,000 call-chain samples in about 165 s".
DERIVED = r"([\d,]+) call-chain samples in about (\d+) s\b"


def bench_block():
    with open(os.path.join(REPO, BENCH_PAGE), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^```\n\$ make bench\n(.*?)^```", text, re.M | re.S)
    assert m, "%s: no ```-block starting with '$ make bench'" % BENCH_PAGE
    return m.group(1)


def bench_figures(block):
    out = {}
    for name, rx in BENCH.items():
        m = re.search(rx, block, re.M)
        assert m, "%s: make bench's output has no row for %s (%s)" % (BENCH_PAGE, name, rx)
        out[name] = m.group(1)
    return out


def prose_lines(text):
    """(line number, line) outside code blocks, inline-code backticks dropped."""
    fenced = False
    for n, line in enumerate(text.split("\n"), 1):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            yield n, line.replace("`", "")


def prose_text(text):
    """The prose joined into one string (a figure may sit across a line break), and for
    each character its line number."""
    parts, where = [], []
    for n, line in prose_lines(text):
        parts.append(line)
        where += [n] * (len(line) + 1)
    return " ".join(parts), where


def search(rx, joined):
    """re.finditer with each blank of rx standing for any run of white space."""
    return re.finditer(re.sub(r" ", r"\\s+", rx), joined)


def stated(text):
    """Every bench figure the prose states: (line, figure, value as written)."""
    joined, where = prose_text(text)
    found = {}
    for rx, names in PROSE:
        for m in search(rx, joined):
            for i, name in enumerate(names, 1):
                found.setdefault(m.start(i), (where[m.start(i)], name, m.group(i)))
    return sorted(found.values())


def value(s):
    return float(s.replace(",", ""))


def stale(text, figures):
    """The figures in text that differ from make bench's: (line, figure, written, measured)."""
    bad = [(line, name, got, figures[name]) for line, name, got in stated(text)
           if value(got) != value(figures[name])]
    joined, where = prose_text(text)
    for m in search(DERIVED, joined):
        n, secs = value(m.group(1)), int(m.group(2))
        want = round(n / value(figures["rate_g"]))
        if secs != want:
            bad.append((where[m.start()], "call-chain samples' time", "%d s" % secs, "%d s" % want))
    return bad


def read(page):
    with open(os.path.join(REPO, page), encoding="utf-8") as f:
        return f.read()


def test_bench_output_has_every_figure():
    bench_figures(bench_block())


@pytest.mark.parametrize("page", pages())
def test_bench_figures_quoted_as_measured(page):
    figures = bench_figures(bench_block())
    bad = stale(read(page), figures)
    assert not bad, "\n".join("%s:%d: %s %s, but %s shows %s (make bench)"
                              % (page, line, name, got, BENCH_PAGE, want)
                              for line, name, got, want in bad)


def test_formats_page_quotes_the_link_figures():
    """The wire format's page states the dump figures (the reason the test exists)."""
    names = {name for _, name, _ in stated(read("docs/dev/formats.md"))}
    assert {"bytes_g", "bytes", "rate_g", "rate"} <= names, names


def test_sampling_page_quotes_the_tail():
    """The sampling guide states the handler's tail on both kernels (why CPL-0 periods are
    refused at the bound they are), so a new tail cannot leave it behind."""
    names = {name for _, name, _ in stated(read("docs/guide/sampling.md"))}
    assert {"tail64", "tail32"} <= names, names


def test_a_stale_figure_is_found():
    figures = bench_figures(bench_block())
    good = ("a -g sample costs %s bytes on the line and one without a call chain %s, so\n"
            "115200 baud carries about %s -g samples or %s plain ones a second:\n"
            "100,000 call-chain samples in about %d s; %s x the floor.\n"
            % (figures["bytes_g"], figures["bytes"], figures["rate_g"], figures["rate"],
               round(100000 / value(figures["rate_g"])), figures["floor"]))
    assert len(stated(good)) == 5 and stale(good, figures) == []
    other = "%.1f" % (value(figures["bytes_g"]) + 2.8)     # a figure bench did not print
    assert [b[1] for b in stale(good.replace(figures["bytes_g"], other), figures)] == ["bytes_g"]
    other = " %d " % (value(figures["rate_g"]) + 101)
    assert [b[1] for b in stale(good.replace(" %s " % figures["rate_g"], other), figures)] \
        == ["rate_g"]
    assert [b[1] for b in stale(good.replace("in about ", "in about 1"), figures)] \
        == ["call-chain samples' time"]
    assert stale("```\n$ make bench\nabout 710 -g samples a second\n```\n", figures) == []
