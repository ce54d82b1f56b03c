"""test_flamegraph.py - the interactive flame graph of tools/nbprof-decode.

The SVG must be well-formed, carry its script inline (no network), and
give each frame the data the script works on: id, parent, weight, offset
among its siblings and name. With node installed, the script's own logic
runs on the frames read back from the SVG: the search percentage must
equal the share of folded samples whose stack contains a match (computed
here from the --folded output), and a zoomed frame must fill the width
with its descendants laid out inside it and everything else hidden.
"""

import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest

from test_decode import write

N = 400
NS = "{http://www.w3.org/2000/svg}"
NODE = shutil.which("node") or shutil.which("nodejs")


@pytest.fixture
def graph(dumpgen, decode, tmp_path):
    """(svg root element, folded counts) of one recording, weighted by samples."""
    nm = write(tmp_path, "syms.nm", dumpgen("nm"))
    cap = write(tmp_path, "cap.log", dumpgen("-n", N, "--pair", "dump"))
    decode(cap, "--nm", nm, "--flamegraph", "fg.svg", "--folded", "out.folded",
           "--weight", "samples", "-q")
    folded = {}
    for line in (tmp_path / "out.folded").read_text().splitlines():
        k, _, v = line.rpartition(" ")
        folded[k] = int(v)
    return ET.parse(str(tmp_path / "fg.svg")).getroot(), folded


def frames_of(svg):
    out = []
    for g in svg.iter(NS + "g"):
        if g.get("class") == "f":
            out.append({"id": int(g.get("data-id")), "parent": int(g.get("data-parent")),
                        "n": int(g.get("data-n")), "o": int(g.get("data-o")),
                        "name": g.get("data-name")})
    return out


def script_of(svg):
    scripts = list(svg.iter(NS + "script"))
    assert len(scripts) == 1
    return scripts[0].text


def test_svg_carries_script_and_frame_data(graph):
    svg, folded = graph
    js = script_of(svg)
    assert "function layout" in js and "function search" in js and "new RegExp" in js
    assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", ET.tostring(svg).decode())
    assert svg.get("data-x0") and svg.get("data-width")
    for ident in ("unzoom", "search", "matched", "details"):
        assert any(e.get("id") == ident for e in svg.iter()), ident
    frames = frames_of(svg)
    by_id = {f["id"]: f for f in frames}
    assert len(by_id) == len(frames) > 10
    assert frames[0]["parent"] == -1 and frames[0]["name"] == "all"
    assert frames[0]["n"] == sum(folded.values()) == N
    seen = {0}
    for f in frames[1:]:
        parent = by_id[f["parent"]]
        assert f["parent"] in seen                      # parents come first
        assert 0 <= f["o"] and f["o"] + f["n"] <= parent["n"]
        seen.add(f["id"])
    # siblings do not overlap: offsets in drawing order grow by each one's weight
    kids = {}
    for f in frames[1:]:
        kids.setdefault(f["parent"], []).append(f)
    for group in kids.values():
        for a, b in zip(group, group[1:]):
            assert b["o"] >= a["o"] + a["n"]
    # the LP/event root frames of a --pair recording are there
    assert {f["name"] for f in frames if f["parent"] == 0} == \
        {"[LP0 instr_retired:t0]", "[LP1 instr_retired:t1]"}


def run_js(svg, calls):
    prog = script_of(svg) + "\nvar frames = %s;\nconsole.log(JSON.stringify(%s));\n" % (
        json.dumps(frames_of(svg)), calls)
    p = subprocess.run([NODE, "-e", prog], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=30)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


@pytest.mark.skipif(not NODE, reason="node is not installed: the JavaScript is not run")
def test_script_parses(graph, tmp_path):
    path = tmp_path / "fg.js"
    path.write_text(script_of(graph[0]))
    p = subprocess.run([NODE, "--check", str(path)], stderr=subprocess.PIPE,
                       universal_newlines=True)
    assert p.returncode == 0, p.stderr


@pytest.mark.skipif(not NODE, reason="node is not installed: the JavaScript is not run")
@pytest.mark.parametrize("pattern", ["^work_a$", "work_", "LP1", "help.r", "^nothing$"])
def test_search_percentage_matches_folded_stacks(graph, pattern):
    svg, folded = graph
    got = run_js(svg, "NB.search(frames, new RegExp(%s))" % json.dumps(pattern))
    total = sum(folded.values())
    rx = re.compile(pattern)
    want = sum(v for k, v in folded.items() if any(rx.search(x) for x in k.split(";")))
    assert got["total"] == total
    assert got["matched"] == want
    assert abs(got["percent"] - 100.0 * want / total) < 1e-9
    names = {f["id"]: f["name"] for f in frames_of(svg)}
    assert sorted(names[i] for i in got["ids"]) == \
        sorted(n for n in names.values() if rx.search(n))


@pytest.mark.skipif(not NODE, reason="node is not installed: the JavaScript is not run")
def test_zoom_fills_width_with_the_subtree(graph):
    svg, _ = graph
    frames = frames_of(svg)
    by_id = {f["id"]: f for f in frames}
    # a frame two levels up with children: [LPn ...] -> calls -> X
    target = next(f for f in frames if f["parent"] in by_id and by_id[f["parent"]]["parent"] in
                  by_id and by_id[by_id[f["parent"]]["parent"]]["parent"] == 0
                  and any(g["parent"] == f["id"] for g in frames))
    x0, width = float(svg.get("data-x0")), float(svg.get("data-width"))
    lay = run_js(svg, "NB.layout(frames, %d, %s, %s, 0.1)" % (target["id"], x0, width))
    path, f = set(), target
    while f:
        path.add(f["id"])
        f = by_id.get(f["parent"])

    def inside(f):
        while f and f["id"] != target["id"]:
            f = by_id.get(f["parent"])
        return f is not None

    for f in frames:
        p = lay[str(f["id"])]
        if f["id"] in path:
            assert p["show"] and p["x"] == x0 and p["w"] == width
            assert p["dim"] == (f["id"] != target["id"])
        elif inside(f):
            assert abs(p["w"] - f["n"] * width / target["n"]) < 1e-6
            assert x0 - 1e-6 <= p["x"] and p["x"] + p["w"] <= x0 + width + 1e-6
            parent = lay[str(f["parent"])]
            assert parent["x"] - 1e-6 <= p["x"] <= parent["x"] + parent["w"]
        else:
            assert not p["show"], f
    # zooming on the root is the unzoomed graph: the SVG's own rectangles
    lay = run_js(svg, "NB.layout(frames, 0, %s, %s, 0.1)" % (x0, width))
    rects = {int(g.get("data-id")): g.find(NS + "rect") for g in svg.iter(NS + "g")
             if g.get("class") == "f"}
    for i, r in rects.items():
        assert abs(lay[str(i)]["x"] - float(r.get("x"))) < 0.06
        assert abs(lay[str(i)]["w"] - float(r.get("width"))) < 0.06


@pytest.mark.skipif(not NODE, reason="node is not installed: the JavaScript is not run")
def test_labels_fit(graph):
    got = run_js(graph[0], "[NB.fit('main_loop', 200), NB.fit('main_loop', 50), "
                           "NB.fit('main_loop', 20)]")
    assert got == ["main_loop", "main..", ""]          # 44 px: 6 characters, 2 of them dots
