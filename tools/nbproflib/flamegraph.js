var NB = (function () {
  "use strict";
  function index(frames) {
    var byId = {}, i;
    for (i = 0; i < frames.length; i++) byId[frames[i].id] = frames[i];
    return byId;
  }
  // {id: {x, w, show, dim}} with frame `zoom` spanning [x0, x0 + width).
  function layout(frames, zoom, x0, width, minw) {
    var byId = index(frames), out = {}, inside = {}, path = {}, f, p, i, w;
    for (f = byId[zoom]; f; f = byId[f.parent]) path[f.id] = true;
    var scale = width / (byId[zoom].n || 1);
    for (i = 0; i < frames.length; i++) {
      f = frames[i];
      if (path[f.id]) {
        out[f.id] = {x: x0, w: width, show: true, dim: f.id !== zoom};
        inside[f.id] = f.id === zoom;
        continue;
      }
      p = out[f.parent];
      if (p && p.show && inside[f.parent]) {
        w = f.n * scale;
        out[f.id] = {x: p.x + f.o * scale, w: w, show: w >= minw, dim: false};
        inside[f.id] = true;
      } else {
        out[f.id] = {x: 0, w: 0, show: false, dim: false};
      }
    }
    return out;
  }
  // Frames whose name matches re, and the weight under them counted once.
  function search(frames, re) {
    var byId = index(frames), hit = {}, under = {}, ids = [], total = 0, matched = 0, i, f;
    for (i = 0; i < frames.length; i++) {
      f = frames[i];
      if (!byId[f.parent]) total += f.n;
      hit[f.id] = re.test(f.name);
      under[f.id] = byId[f.parent] ? (hit[f.parent] || under[f.parent]) : false;
      if (hit[f.id]) {
        ids.push(f.id);
        if (!under[f.id]) matched += f.n;
      }
    }
    return {ids: ids, matched: matched, total: total,
            percent: total ? 100 * matched / total : 0};
  }
  // The label that fits a frame w pixels wide (7 px a character).
  function fit(name, w) {
    var chars = Math.floor((w - 6) / 7);
    if (chars < 3) return "";
    return name.length <= chars ? name : name.slice(0, chars - 2) + "..";
  }
  return {layout: layout, search: search, fit: fit};
})();

if (typeof document !== "undefined") (function () {
  "use strict";
  var svg = document.documentElement, gs = document.getElementsByClassName("f");
  var x0 = +svg.getAttribute("data-x0"), width = +svg.getAttribute("data-width");
  var minw = +svg.getAttribute("data-minw"), frames = [], els = {}, i;
  var unzoom = document.getElementById("unzoom"), searchBtn = document.getElementById("search");
  var matchedText = document.getElementById("matched");
  var details = document.getElementById("details");
  for (i = 0; i < gs.length; i++) {
    var g = gs[i], f = {id: +g.getAttribute("data-id"), parent: +g.getAttribute("data-parent"),
                        n: +g.getAttribute("data-n"), o: +g.getAttribute("data-o"),
                        name: g.getAttribute("data-name")};
    var rect = g.getElementsByTagName("rect")[0];
    frames.push(f);
    els[f.id] = {g: g, rect: rect, text: g.getElementsByTagName("text")[0],
                 fill: rect.getAttribute("fill"), title: g.getElementsByTagName("title")[0]};
  }
  if (!frames.length) return;             // no samples: nothing to zoom or search
  var root = frames[0].id, zoomed = root, searching = null;
  function draw() {
    var L = NB.layout(frames, zoomed, x0, width, minw), k, p, e;
    for (k = 0; k < frames.length; k++) {
      p = L[frames[k].id];
      e = els[frames[k].id];
      e.g.style.display = p.show ? "" : "none";
      if (!p.show) continue;
      e.rect.setAttribute("x", p.x.toFixed(1));
      e.rect.setAttribute("width", p.w.toFixed(1));
      e.g.style.opacity = p.dim ? "0.5" : "";
      e.text.setAttribute("x", (p.x + 3).toFixed(1));
      e.text.textContent = NB.fit(frames[k].name, p.w);
    }
    unzoom.style.opacity = zoomed === root ? "0" : "1";
  }
  function highlight(re) {
    var k, r;
    for (k = 0; k < frames.length; k++)
      els[frames[k].id].rect.setAttribute("fill", els[frames[k].id].fill);
    searching = re;
    searchBtn.textContent = re ? "Reset Search" : "Search";
    matchedText.textContent = "";
    if (!re) return;
    r = NB.search(frames, re);
    for (k = 0; k < r.ids.length; k++) els[r.ids[k]].rect.setAttribute("fill", "rgb(230,0,230)");
    matchedText.textContent = "Matched: " + r.percent.toFixed(2) + "%";
  }
  function ask() {
    if (searching) return highlight(null);
    var term = window.prompt("Search for a regular expression (frame names)", "");
    if (!term) return;
    try {
      highlight(new RegExp(term));
    } catch (err) {
      matchedText.textContent = "bad regular expression";
    }
  }
  function frameOf(node) {
    while (node && node !== svg && !(node.getAttribute && node.getAttribute("class") === "f"))
      node = node.parentNode;
    return node && node !== svg ? node : null;
  }
  svg.addEventListener("click", function (ev) {
    var g = frameOf(ev.target);
    if (g) { zoomed = +g.getAttribute("data-id"); draw(); }
  });
  svg.addEventListener("mouseover", function (ev) {
    var g = frameOf(ev.target);
    details.textContent = g ? els[+g.getAttribute("data-id")].title.textContent : "";
  });
  unzoom.addEventListener("click", function (ev) {
    ev.stopPropagation();
    zoomed = root;
    draw();
  });
  searchBtn.addEventListener("click", function (ev) { ev.stopPropagation(); ask(); });
  window.addEventListener("keydown", function (ev) {
    if ((ev.ctrlKey || ev.metaKey) && ev.keyCode === 70 || ev.keyCode === 114) {
      ev.preventDefault();
      ask();
    } else if (ev.keyCode === 27) {
      zoomed = root;
      draw();
    }
  });
  draw();
})();
