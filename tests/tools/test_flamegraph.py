"""test_flamegraph.py - the interactive flame graph of tools/nbprof-decode.

The SVG must be well-formed, carry its script (tools/nbproflib/flamegraph.js) inline (no network), and
give each frame the data the script works on: id, parent, weight, offset
among its siblings and name. With node installed, the script's own logic
runs on the frames read back from the SVG: the search percentage must
equal the share of folded samples whose stack contains a match (computed
here from the --folded output), and a zoomed frame must fill the width
with its descendants laid out inside it and everything else hidden.
"""

import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest

from conftest import REPO
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
    with open(os.path.join(REPO, "tools", "nbproflib", "flamegraph.js")) as f:
        assert js.strip("\n") == f.read().strip("\n")     # the file, inline as it is
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
        {"[LP0 instr_retired.t0]", "[LP1 instr_retired.t1]"}


def run_js(svg, calls):
    prog = script_of(svg) + "\nvar frames = %s;\nconsole.log(JSON.stringify(%s));\n" % (
        json.dumps(frames_of(svg)), calls)
    p = subprocess.run([NODE, "-"], input=prog, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
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


# A DOM just large enough for the script's glue: elements with attributes,
# children, style, textContent and listeners, built from the parsed SVG.
FAKE_DOM = r"""
function El(tag, attrs, text) {
  this.tag = tag; this.attrs = attrs; this.children = []; this.parentNode = null;
  this.style = {}; this.textContent = text || ""; this.listeners = {};
}
El.prototype.getAttribute = function (k) { return k in this.attrs ? this.attrs[k] : null; };
El.prototype.setAttribute = function (k, v) { this.attrs[k] = String(v); };
El.prototype.addEventListener = function (ev, fn) { this.listeners[ev] = fn; };
El.prototype.all = function () {
  var out = [];
  (function walk(e) { e.children.forEach(function (c) { out.push(c); walk(c); }); })(this);
  return out;
};
El.prototype.getElementsByTagName = function (t) {
  return this.all().filter(function (e) { return e.tag === t; });
};
function build(j, parent) {
  var e = new El(j.tag, j.attrs, j.text);
  e.parentNode = parent;
  e.children = j.children.map(function (c) { return build(c, e); });
  return e;
}
var svgEl = build(TREE, null), prompts = [];
var document = {
  documentElement: svgEl,
  getElementsByClassName: function (c) {
    return svgEl.all().filter(function (e) { return e.getAttribute("class") === c; });
  },
  getElementById: function (id) {
    return svgEl.all().filter(function (e) { return e.getAttribute("id") === id; })[0];
  }
};
var window = { listeners: {}, addEventListener: function (ev, fn) { this.listeners[ev] = fn; },
               prompt: function () { return prompts.shift(); } };
new Function("document", "window", SCRIPT)(document, window);
function state() {
  var out = {};
  document.getElementsByClassName("f").forEach(function (g) {
    var r = g.getElementsByTagName("rect")[0];
    out[g.getAttribute("data-id")] = {x: +r.getAttribute("x"), w: +r.getAttribute("width"),
      shown: g.style.display !== "none", fill: r.getAttribute("fill"),
      label: g.getElementsByTagName("text")[0].textContent};
  });
  return {frames: out, unzoom: document.getElementById("unzoom").style.opacity,
          matched: document.getElementById("matched").textContent,
          search: document.getElementById("search").textContent};
}
var noStop = { stopPropagation: function () {} }, steps = [state()];
function rectOf(id) {
  return document.getElementsByClassName("f").filter(function (g) {
    return g.getAttribute("data-id") === String(id); })[0].getElementsByTagName("rect")[0];
}
svgEl.listeners.click({ target: rectOf(ZOOM) });
steps.push(state());
prompts.push(PATTERN);
document.getElementById("search").listeners.click(noStop);
steps.push(state());
document.getElementById("unzoom").listeners.click(noStop);
document.getElementById("search").listeners.click(noStop);
steps.push(state());
prompts.push("(");
document.getElementById("search").listeners.click(noStop);
steps.push(state());
console.log(JSON.stringify(steps));
"""


def tree_json(e):
    tag = e.tag.split("}")[-1]
    return {"tag": tag, "attrs": dict(e.attrib), "text": e.text or "",
            "children": [tree_json(c) for c in e if c.tag.split("}")[-1] != "script"]}


@pytest.mark.skipif(not NODE, reason="node is not installed: the JavaScript is not run")
def test_clicks_and_search_in_a_fake_dom(graph):
    svg, folded = graph
    frames = frames_of(svg)
    by_id = {f["id"]: f for f in frames}
    zoom = next(f for f in frames if f["name"] == "calls" and f["parent"] != -1)
    pattern = "^work_a$"
    prog = FAKE_DOM.replace("TREE", json.dumps(tree_json(svg))) \
        .replace("SCRIPT", json.dumps(script_of(svg))).replace("ZOOM", str(zoom["id"])) \
        .replace("PATTERN", json.dumps(pattern))
    p = subprocess.run([NODE, "-"], input=prog, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=30)
    assert p.returncode == 0, p.stderr
    loaded, zoomed, searched, reset, bad = json.loads(p.stdout)
    x0, width = float(svg.get("data-x0")), float(svg.get("data-width"))
    # loaded: the SVG as drawn, nothing zoomed
    assert loaded["unzoom"] == "0" and all(s["shown"] for s in loaded["frames"].values())
    # zoomed on one LP's comm frame: it fills the width, the other LP's frames are hidden
    z = zoomed["frames"][str(zoom["id"])]
    assert (z["x"], z["w"]) == (round(x0, 1), round(width, 1)) and zoomed["unzoom"] == "1"
    assert z["label"] == "calls"

    def under(f, anc):
        while f is not None and f["id"] != anc:
            f = by_id.get(f["parent"])
        return f is not None

    for f in frames:
        shown = zoomed["frames"][str(f["id"])]["shown"]
        assert shown == (under(f, zoom["id"]) or under(zoom, f["id"])), f
    # search: matches purple, the share of samples under them shown
    total = sum(folded.values())
    want = sum(v for k, v in folded.items() if "work_a" in k.split(";"))
    assert searched["matched"] == "Matched: %.2f%%" % (100.0 * want / total)
    assert searched["search"] == "Reset Search"
    purple = {int(i) for i, s in searched["frames"].items() if s["fill"] == "rgb(230,0,230)"}
    assert purple == {f["id"] for f in frames if f["name"] == "work_a"} and purple
    # reset zoom and search: back to the SVG as drawn
    assert reset["frames"] == loaded["frames"] and reset["unzoom"] == "0"
    assert reset["matched"] == "" and reset["search"] == "Search"
    # a bad regular expression is reported, not thrown
    assert bad["matched"] == "bad regular expression"
