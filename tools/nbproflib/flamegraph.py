"""flamegraph - an interactive flame graph (SVG with inline script) of folded stacks.

flamegraph_svg(counts, title) takes {"outer;...;leaf": weight}, as
outputs.folded_stacks makes it. The script that zooms and searches is
flamegraph.js in this folder, read here and put inline (no network).
"""

import os
import zlib

def xml_escape(s):
    return (s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


def flame_color(name):
    """A warm colour that depends only on the name (stable between runs)."""
    h = zlib.crc32(name.encode())
    return "rgb(%d,%d,%d)" % (205 + h % 50, 80 + (h >> 8) % 130, 30 + (h >> 16) % 50)

# The flame graph's behaviour, as flamegraph.pl's: click a frame to zoom
# (it fills the width, its ancestors span the width dimmed, everything else
# hides), Reset Zoom / Escape, Search / Ctrl-F: a regular expression whose
# matching frames turn purple, with the share of all samples that lie
# under a match. NB holds the logic on plain data (frames in drawing order,
# parents first: id, parent, n = weight, o = weight of the siblings drawn
# before it, name) so it can run without a DOM; the rest binds it to the SVG.
# The script is flamegraph.js beside this file; the SVG carries it inline.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "flamegraph.js")) as _f:
    FLAME_JS = _f.read()


def flame_tree(counts):
    root = {"n": 0, "kids": {}}
    for stack, n in counts.items():
        node = root
        node["n"] += n
        for name in stack.split(";"):
            node = node["kids"].setdefault(name, {"n": 0, "kids": {}})
            node["n"] += n
    return root


def flamegraph_svg(counts, title, width=1200, row=16, min_px=0.1):
    """An interactive flame graph (root at the bottom, children sorted by name) as SVG text.

    Each frame is a <g class="f"> whose data-* attributes (id, parent,
    weight n, offset o among its siblings, name) are what FLAME_JS needs.
    """
    root = flame_tree(counts)
    total = root["n"] or 1

    def depth(node):
        return 1 + max((depth(k) for k in node["kids"].values()), default=0)

    levels = depth(root)
    pad_top, pad_side, pad_bottom = 36, 10, 36
    height = pad_top + levels * row + pad_bottom
    span = width - 2 * pad_side
    scale = span / total
    out = ['<?xml version="1.0" standalone="no"?>',
           '<svg version="1.1" width="%d" height="%d" viewBox="0 0 %d %d" '
           'xmlns="http://www.w3.org/2000/svg" data-x0="%d" data-width="%d" data-minw="%s">'
           % (width, height, width, height, pad_side, span, min_px),
           '<style>.f:hover rect { stroke: #000; stroke-width: 0.5; cursor: pointer; } '
           '.btn { cursor: pointer; }</style>',
           '<script type="text/ecmascript"><![CDATA[\n%s]]></script>' % FLAME_JS,
           '<rect x="0" y="0" width="100%" height="100%" fill="#f8f8f0"/>',
           '<text x="%d" y="22" font-size="17" font-family="Verdana" text-anchor="middle">%s</text>'
           % (width // 2, xml_escape(title)),
           '<text id="unzoom" class="btn" x="%d" y="22" font-size="12" font-family="Verdana" '
           'style="opacity:0">Reset Zoom</text>' % pad_side,
           '<text id="search" class="btn" x="%d" y="22" font-size="12" font-family="Verdana" '
           'text-anchor="end">Search</text>' % (width - pad_side),
           '<text id="matched" x="%d" y="%d" font-size="12" font-family="Verdana" '
           'text-anchor="end"></text>' % (width - pad_side, height - 12),
           '<text id="details" x="%d" y="%d" font-size="12" font-family="Verdana"> </text>'
           % (pad_side, height - 12)]
    ids = [0]

    def draw(name, node, x, level, parent, offset):
        w = node["n"] * scale
        if w < min_px:
            return
        me = ids[0]
        ids[0] += 1
        y = height - pad_bottom - (level + 1) * row
        tip = "%s (%d samples, %.2f%%)" % (name, node["n"], 100.0 * node["n"] / total)
        chars = int((w - 6) / 7)
        label = "" if chars < 3 else name if len(name) <= chars else name[:chars - 2] + ".."
        out.append('<g class="f" data-id="%d" data-parent="%d" data-n="%d" data-o="%d" '
                   'data-name="%s"><title>%s</title><rect x="%.1f" y="%d" width="%.1f" '
                   'height="%d" fill="%s" rx="2" ry="2"/><text x="%.1f" y="%d" font-size="12" '
                   'font-family="Verdana">%s</text></g>'
                   % (me, parent, node["n"], offset, xml_escape(name), xml_escape(tip), x, y, w,
                      row - 1, "#d0d0d0" if level == 0 else flame_color(name), x + 3,
                      y + row - 4, xml_escape(label)))
        cx, co = x, 0
        for kname in sorted(node["kids"]):
            kid = node["kids"][kname]
            draw(kname, kid, cx, level + 1, me, co)
            cx += kid["n"] * scale
            co += kid["n"]

    draw("all", root, pad_side, 0, -1, 0)
    out.append("</svg>")
    return "\n".join(out) + "\n"

