"""The static parts of the HTML tree viewer: page skeleton, style sheet and script (no external resources).

Kept apart from :mod:`opttrees.viz.html`, which computes the data, so each can be read on its own. The script
reads the JSON document in ``#opttrees-data`` and writes every text with ``textContent``.
"""

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy"
      content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<meta name="generator" content="opttrees">
<title>{title}</title>
<style>{css}</style>
</head>
<body>
<header>
  <h1 id="title">{title}</h1>
  <div id="facts" class="facts"></div>
  <dl id="summary" class="summary"></dl>
  <div id="legend" class="legend"></div>
</header>
<section class="controls">
  <button type="button" id="expand-all">Expand all</button>
  <button type="button" id="collapse-all">Collapse all</button>
  <span class="hint">Click a node to fold or unfold it. Left branch: split is true (a&middot;x &lt; b).</span>
  <div id="row-panel" class="row-panel" hidden>
    <label for="row-select">Follow a row:</label>
    <select id="row-select"><option value="">(none)</option></select>
    <span id="row-note" class="note"></span>
    <div id="row-info" class="row-info"></div>
  </div>
</section>
<main id="tree-wrap" class="tree-wrap"><div id="tree" class="tree"></div></main>
<noscript><pre>{text}</pre></noscript>
<script type="application/json" id="opttrees-data">{data}</script>
<script>{js}</script>
</body>
</html>
"""

CSS = r"""
:root { --line: #9aa3ad; --path: #d62728; --ink: #1f2328; --muted: #5b6470; --branch: #f6f8fa; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
       color: var(--ink); background: #fff; }
header { padding: 14px 20px 8px; border-bottom: 1px solid #e1e4e8; background: #fbfcfd; }
h1 { font-size: 20px; margin: 0 0 4px; }
.facts { color: var(--muted); margin-bottom: 6px; }
.summary { display: flex; flex-wrap: wrap; gap: 6px; margin: 0; }
.summary div { border: 1px solid #d0d7de; border-radius: 6px; padding: 2px 8px; background: #fff; }
.summary dt { display: inline; color: var(--muted); margin-right: 4px; }
.summary dd { display: inline; margin: 0; font-weight: 600; }
.status-optimal dd { color: #1a7f37; }
.status-limit dd { color: #9a6700; }
.status-bad dd { color: #cf222e; }
.legend { display: flex; flex-wrap: wrap; gap: 12px; margin-top: 8px; color: var(--muted); }
.legend span::before { content: ""; display: inline-block; width: 11px; height: 11px; border-radius: 2px;
                       margin-right: 5px; vertical-align: -1px; background: var(--swatch); }
.controls { padding: 8px 20px; border-bottom: 1px solid #e1e4e8; display: flex; flex-wrap: wrap; gap: 8px;
            align-items: center; }
.controls button, .controls select { font: inherit; padding: 3px 10px; border: 1px solid #d0d7de;
                                     border-radius: 6px; background: #f6f8fa; cursor: pointer; }
.hint, .note { color: var(--muted); font-size: 12px; }
.row-panel { flex-basis: 100%; display: flex; flex-wrap: wrap; gap: 8px; align-items: center; }
.row-panel[hidden] { display: none; }
.row-info { flex-basis: 100%; font-size: 12px; color: var(--muted); }
.row-info b { color: var(--ink); }
.tree-wrap { overflow: auto; padding: 16px 12px 40px; }
.tree { position: relative; margin: 0 auto; }
.tree svg { position: absolute; left: 0; top: 0; overflow: visible; }
.tree svg path { fill: none; stroke: var(--line); stroke-width: 1.5; }
.tree svg path.on-path { stroke: var(--path); stroke-width: 3; }
.tree svg text { font-size: 10px; font-style: italic; fill: var(--muted); }
.node { position: absolute; width: 190px; padding: 5px 8px; border: 1px solid #c4cbd3;
        border-radius: 8px; background: var(--branch); font-size: 12px; text-align: center; cursor: pointer;
        box-shadow: 0 1px 2px rgba(0, 0, 0, .06); }
.node.leaf { cursor: default; border-color: #8c959f; background: var(--tint, #eef5ff); }
.node:focus-visible { outline: 2px solid #0969da; outline-offset: 2px; }
.node.on-path { outline: 3px solid var(--path); outline-offset: 1px; }
.node .head { font-weight: 600; overflow-wrap: anywhere; white-space: pre-line; }
.node .meta { color: var(--muted); font-size: 11px; }
.node .counts { font-size: 11px; overflow-wrap: anywhere; }
.node .bar { display: flex; height: 6px; margin: 4px 0 2px; border-radius: 3px; overflow: hidden;
             background: #e6e9ed; }
.node .bar span { display: block; height: 100%; }
.node .folded { display: none; margin-top: 3px; font-size: 11px; color: #0969da; }
.node.collapsed .folded { display: block; }
.node.collapsed { border-style: dashed; }
table.values { border-collapse: collapse; margin-top: 4px; }
table.values td, table.values th { border: 1px solid #e1e4e8; padding: 1px 6px; font-size: 12px; }
"""

JS = r"""
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("opttrees-data").textContent);
  var PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
                 "#9c755f", "#bab0ac"];
  var SVG = "http://www.w3.org/2000/svg", BOX_W = 190, H_GAP = 18, V_GAP = 46;
  var nodes = DATA.nodes, boxes = [], collapsed = [], path = [];
  var treeEl = document.getElementById("tree"), svg = document.createElementNS(SVG, "svg");
  var leafValues = nodes.filter(function (nd) { return nd.value !== undefined && nd.value !== null; })
    .map(function (nd) { return nd.value; });
  var valueRange = leafValues.length ? [Math.min.apply(null, leafValues), Math.max.apply(null, leafValues)] : [0, 0];

  function make(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = text; }
    return e;
  }
  function num(v) {
    if (v === null || v === undefined || !isFinite(v)) { return "-"; }
    return String(Number(Number(v).toPrecision(DATA.precision)));
  }
  // a row's feature value as stored (shortest round-trip text): rounding it could put it on the wrong side of a
  // printed threshold, which is itself the shortest text that routes every training value as the tree does
  function exact(v) { return v === null || v === undefined ? "-" : String(v); }
  function colour(k) { return PALETTE[k % PALETTE.length]; }
  function isLeaf(t) { return nodes[t].left === null; }
  function subtreeSize(t) { return isLeaf(t) ? 1 : 1 + subtreeSize(nodes[t].left) + subtreeSize(nodes[t].right); }

  function header() {
    var tr = DATA.tree, facts = [DATA.task + " tree", "depth " + tr.depth, tr.n_leaves + " leaves",
                                 tr.n_nodes + " nodes", tr.n_features + " features"];
    if (DATA.source === "data") { facts.push("counts from the rows given"); }
    document.getElementById("facts").textContent = facts.join(" \u00b7 ");
    var dl = document.getElementById("summary");
    DATA.summary.forEach(function (pair) {
      var div = make("div");
      if (pair[0] === "status") {
        div.className = pair[1] === "optimal" ? "status-optimal" :
          /limit|interrupted|completed/.test(pair[1]) ? "status-limit" : "status-bad";
      }
      div.appendChild(make("dt", null, pair[0]));
      div.appendChild(make("dd", null, pair[1]));
      dl.appendChild(div);
    });
    var legend = document.getElementById("legend");
    if (DATA.classes && DATA.task === "classification") {
      DATA.classes.forEach(function (name, k) {
        var s = make("span", null, name);
        s.style.setProperty("--swatch", colour(k));
        legend.appendChild(s);
      });
    }
  }

  function box(nd) {
    var leaf = nd.left === null, div = make("div", leaf ? "node leaf" : "node branch");
    div.dataset.node = nd.id;
    div.title = "node " + nd.id;
    if (!leaf) {
      div.tabIndex = 0;
      div.setAttribute("role", "button");
      div.setAttribute("aria-expanded", "true");
    }
    var head = leaf ? (DATA.task === "regression" ? "predict " + nd.pred : nd.pred) : nd.split;
    div.appendChild(make("div", "head", head || ("node " + nd.id)));
    var meta = [];
    if (nd.n !== null) { meta.push("n = " + num(nd.n)); }
    if (!leaf && nd.pred && DATA.task === "classification") { meta.push("majority " + nd.pred); }
    if (nd.mean !== undefined && nd.mean !== null) {
      meta.push("mean " + num(nd.mean) + ", sd " + num(nd.std) + ", median " + num(nd.median));
    }
    if (meta.length) { div.appendChild(make("div", "meta", meta.join(" \u00b7 "))); }
    if (nd.counts && DATA.classes) {
      var total = nd.counts.reduce(function (a, b) { return a + b; }, 0), bar = make("div", "bar"), parts = [];
      nd.counts.forEach(function (c, k) {
        if (c > 0 && total > 0) {
          var seg = make("span");
          seg.style.width = (100 * c / total) + "%";
          seg.style.background = colour(k);
          seg.title = DATA.classes[k] + ": " + num(c);
          bar.appendChild(seg);
        }
        parts.push(DATA.classes[k] + " " + num(c));
      });
      div.appendChild(bar);
      if (leaf || DATA.classes.length <= 4) { div.appendChild(make("div", "counts", parts.join(" \u00b7 "))); }
    }
    if (leaf && nd.cls !== null && nd.cls >= 0 && DATA.classes) {
      div.style.setProperty("--tint", colour(nd.cls) + "3a");
    }
    if (leaf && nd.value !== undefined && nd.value !== null && valueRange[1] > valueRange[0]) {
      var share = (nd.value - valueRange[0]) / (valueRange[1] - valueRange[0]);
      div.style.setProperty("--tint", "hsl(212, 60%, " + (94 - 22 * share) + "%)");
    }
    if (!leaf) {
      div.appendChild(make("div", "folded", "+ " + (subtreeSize(nd.id) - 1) + " nodes folded"));
      div.addEventListener("click", function () { toggle(nd.id); });
      div.addEventListener("keydown", function (ev) {
        if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); toggle(nd.id); }
      });
    }
    return div;
  }

  // Tidy layout of the visible nodes: shown leaves and folded nodes take equal slots left to right,
  // every other node sits centred over its two children; each depth is one row as tall as its tallest box.
  function layout() {
    var visible = [], ends = [], stack = [0], seen = [];
    while (stack.length) {
      var t = stack.pop();
      visible.push(t);
      seen[t] = true;
      if (isLeaf(t) || collapsed[t]) { ends.push(t); } else { stack.push(nodes[t].right, nodes[t].left); }
    }
    nodes.forEach(function (nd) { boxes[nd.id].style.display = seen[nd.id] ? "" : "none"; });
    var rowH = [], x = [], top = [], h = [];
    visible.forEach(function (t) {   // read every height before any write: one reflow, not one per node
      var d = nodes[t].depth;
      h[t] = boxes[t].offsetHeight;
      rowH[d] = Math.max(rowH[d] || 0, h[t]);
    });
    var rowTop = [0];
    for (var d = 1; d < rowH.length; d++) { rowTop[d] = rowTop[d - 1] + rowH[d - 1] + V_GAP; }
    ends.forEach(function (t, i) { x[t] = i * (BOX_W + H_GAP); });
    for (var i = visible.length - 1; i >= 0; i--) {
      var u = visible[i];
      if (x[u] === undefined) { x[u] = (x[nodes[u].left] + x[nodes[u].right]) / 2; }
      top[u] = rowTop[nodes[u].depth];
      boxes[u].style.left = x[u] + "px";
      boxes[u].style.top = top[u] + "px";
    }
    var width = ends.length * (BOX_W + H_GAP) - H_GAP, last = rowH.length - 1;
    var height = rowTop[last] + rowH[last];
    treeEl.style.width = width + "px";
    treeEl.style.height = height + "px";
    svg.setAttribute("width", width);
    svg.setAttribute("height", height);
    drawEdges(visible, x, top, h);
  }

  function drawEdges(visible, x, top, h) {
    while (svg.firstChild) { svg.removeChild(svg.firstChild); }
    var onPath = {};
    path.forEach(function (t, k) { if (k > 0) { onPath[t] = true; } });
    visible.forEach(function (t) {
      if (isLeaf(t) || collapsed[t]) { return; }
      var px = x[t] + BOX_W / 2, py = top[t] + h[t];
      [[nodes[t].left, "true"], [nodes[t].right, "false"]].forEach(function (pair) {
        var c = pair[0], cx = x[c] + BOX_W / 2, cy = top[c], mid = py + (cy - py) / 2;
        var line = document.createElementNS(SVG, "path");
        line.setAttribute("d", "M" + px + "," + py + " V" + mid + " H" + cx + " V" + cy);
        if (onPath[c]) { line.setAttribute("class", "on-path"); }
        line.dataset.child = c;
        svg.appendChild(line);
        var label = document.createElementNS(SVG, "text");
        label.textContent = pair[1];
        label.setAttribute("x", cx + (pair[1] === "true" ? -6 : 6));
        label.setAttribute("y", cy - 6);
        label.setAttribute("text-anchor", pair[1] === "true" ? "end" : "start");
        svg.appendChild(label);
      });
    });
  }

  function setCollapsed(t, on) {
    if (isLeaf(t)) { return; }
    collapsed[t] = on;
    boxes[t].classList.toggle("collapsed", on);
    boxes[t].setAttribute("aria-expanded", on ? "false" : "true");
  }
  function reveal(t) { boxes[t].scrollIntoView({block: "nearest", inline: "center"}); }
  function toggle(t) { setCollapsed(t, !collapsed[t]); layout(); reveal(t); }

  function showRow(i) {
    boxes.forEach(function (b) { b.classList.remove("on-path"); });
    var info = document.getElementById("row-info");
    info.textContent = "";
    path = i === "" ? [] : DATA.rows.paths[i];
    path.forEach(function (t, k) {
      boxes[t].classList.add("on-path");
      if (k < path.length - 1) { setCollapsed(t, false); }
    });
    layout();
    if (!path.length) { return; }
    var rows = DATA.rows, leaf = nodes[path[path.length - 1]];
    info.appendChild(document.createTextNode("Row "));
    info.appendChild(make("b", null, rows.names[i]));
    info.appendChild(document.createTextNode(" reaches leaf " + leaf.id + ": predicted "));
    info.appendChild(make("b", null, leaf.pred || "-"));
    if (rows.actual) {
      info.appendChild(document.createTextNode(", actual "));
      info.appendChild(make("b", null, rows.actual[i]));
    }
    if (rows.features.length) {
      var table = make("table", "values"), h = make("tr"), v = make("tr");
      rows.features.forEach(function (name, j) {
        h.appendChild(make("th", null, name));
        v.appendChild(make("td", null, exact(rows.values[i][j])));
      });
      table.appendChild(h);
      table.appendChild(v);
      info.appendChild(table);
    }
    reveal(leaf.id);
  }

  function rowPanel() {
    var rows = DATA.rows;
    if (!rows) { return; }
    document.getElementById("row-panel").hidden = false;
    var select = document.getElementById("row-select"), frag = document.createDocumentFragment();
    rows.names.forEach(function (name, i) {
      var opt = make("option", null, name);
      opt.value = String(i);
      frag.appendChild(opt);
    });
    select.appendChild(frag);
    if (rows.shown < rows.total) {
      document.getElementById("row-note").textContent =
        "the first " + rows.shown + " of " + rows.total + " rows are included";
    }
    select.addEventListener("change", function () { showRow(select.value === "" ? "" : Number(select.value)); });
  }

  header();
  treeEl.appendChild(svg);
  nodes.forEach(function (nd) {
    boxes[nd.id] = box(nd);
    treeEl.appendChild(boxes[nd.id]);
    if (nd.left !== null && nd.depth >= DATA.collapse_depth) { setCollapsed(nd.id, true); }
  });
  layout();
  rowPanel();
  document.getElementById("expand-all").addEventListener("click", function () {
    nodes.forEach(function (nd) { setCollapsed(nd.id, false); });
    layout();
    reveal(0);
  });
  document.getElementById("collapse-all").addEventListener("click", function () {
    nodes.forEach(function (nd) { setCollapsed(nd.id, true); });
    layout();
    reveal(0);
  });
  document.body.dataset.ready = "true";
})();
"""
