"""test_links.py - every link between the documentation's pages leads somewhere.

Relative links in README.md and docs/**/*.md must name a file of the tree,
and a #fragment a heading of that page (GitHub's anchors: the heading in
lower case, punctuation other than '-' and '_' dropped, spaces as '-').
"""

import os
import re

import pytest

from test_docs import REPO, pages

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


def prose(text):
    """The page without its code blocks and inline code."""
    out, fenced = [], False
    for line in text.split("\n"):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            out.append(re.sub(r"`[^`]*`", "", line))
    return "\n".join(out)


def raw_anchors(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    found, fenced = set(), False
    for line in lines:
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            m = re.match(r"^#{1,6}\s+(.*?)\s*$", line)
            if m:
                slug = re.sub(r"[^\w\- ]", "", m.group(1).lower())
                found.add(slug.replace(" ", "-"))
    return found


@pytest.mark.parametrize("page", pages())
def test_links_resolve(page):
    with open(os.path.join(REPO, page), encoding="utf-8") as f:
        text = f.read()
    bad = []
    for target in LINK.findall(prose(text)):
        if re.match(r"^[a-z]+:", target):
            continue                    # http:, https:, mailto:
        path, _, frag = target.partition("#")
        dest = os.path.normpath(os.path.join(REPO, os.path.dirname(page), path)) if path \
            else os.path.join(REPO, page)
        if not os.path.exists(dest):
            bad.append("%s: no such file %s" % (target, os.path.relpath(dest, REPO)))
        elif frag and dest.endswith(".md") and frag not in raw_anchors(dest):
            bad.append("%s: no heading '#%s' in %s" % (target, frag, os.path.relpath(dest, REPO)))
    assert not bad, "%s:\n  %s" % (page, "\n  ".join(bad))


SOURCE = re.compile(r"(?<![\w./-])((?:lib|pmu|arch|prof|workload|selftest|shell|kernel|boot|sdk|"
                    r"tools|tests)/[\w./-]*\.(?:c|h|S|py|ld))\b")


@pytest.mark.parametrize("page", [p for p in pages() if not p.startswith("docs/reference/")])
def test_source_files_named_exist(page):
    """A page that names a source file (prof/perf.c) names one the tree has.

    The reference pages are left out: they name files of Linux, libpfm4 and
    FreeBSD too.
    """
    with open(os.path.join(REPO, page), encoding="utf-8") as f:
        text = f.read()
    missing = sorted({m for m in SOURCE.findall(text) if not os.path.exists(os.path.join(REPO, m))})
    assert not missing, "%s names files the tree does not have: %s" % (page, ", ".join(missing))
