/* The report's interactions, plain JavaScript written for this page (no library, nothing
   fetched): the document list (search, filter by cluster, paging), the map drawn from the
   embedded coordinates (hover: the document; click: its cluster). Every text of the data
   goes into the page as text (textContent), never as markup. */
(function () {
  "use strict";
  var source = document.getElementById("semnmf-data");
  if (!source) return;
  var D = JSON.parse(source.textContent);
  var n = D.ids.length, PER = 20;
  var state = { cluster: null, query: "", page: 0 };
  var colors = {}, names = {}, given = {};
  D.clusters.forEach(function (c) {
    colors[c.id] = c.color; names[c.id] = c.words; given[c.id] = c.name;
  });
  colors[-1] = D.none_color;
  var unit = D.leaf ? "leaf" : "cluster";
  function label(i) { return D.labels ? D.label_names[D.labels[i]] : ""; }
  var hay = new Array(n);
  for (var i = 0; i < n; i++) {
    hay[i] = (D.ids[i] + " " + label(i) + " " + (D.text ? D.text[i] : "") + " " +
              (D.search ? D.search[i] : "")).toLowerCase();
  }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function swatch(c) {
    var s = el("span", "swatch");
    s.style.background = colors[c] || D.none_color;
    return s;
  }
  function thousands(v) { return String(v).replace(/\B(?=(\d{3})+(?!\d))/g, ","); }
  function clusterName(c) {
    return c < 0 ? D.none_name : String(c) + (given[c] ? " " + given[c] : "");
  }
  function terms() {
    return state.query.split(/\s+/).filter(function (t) { return t.length > 0; });
  }
  function visible(i, words) {
    if (state.cluster !== null && D.cluster[i] !== state.cluster) return false;
    for (var j = 0; j < words.length; j++) if (hay[i].indexOf(words[j]) < 0) return false;
    return true;
  }

  /* -- the document list ----------------------------------------------------------- */
  var body = document.querySelector("#doc-table tbody");
  var count = document.getElementById("doc-count");
  var pageText = document.getElementById("doc-page");
  var prev = document.getElementById("doc-prev"), next = document.getElementById("doc-next");
  var search = document.getElementById("doc-search");
  var shown = [];

  function renderList() {
    var words = terms();
    shown = [];
    for (var i = 0; i < n; i++) if (visible(i, words)) shown.push(i);
    var pages = Math.max(1, Math.ceil(shown.length / PER));
    state.page = Math.min(state.page, pages - 1);
    body.textContent = "";
    shown.slice(state.page * PER, state.page * PER + PER).forEach(function (i) {
      var tr = el("tr");
      tr.dataset.doc = D.ids[i];
      var c = D.cluster[i];
      var cell = el("td", "pick");
      cell.dataset.cluster = String(c);
      cell.title = "show only this " + unit;
      cell.appendChild(swatch(c));
      cell.appendChild(document.createTextNode(clusterName(c)));
      tr.appendChild(cell);
      tr.appendChild(el("td", "doc-id", D.ids[i]));
      if (D.labels) tr.appendChild(el("td", null, label(i)));
      if (D.strength) {
        var s = D.strength[i];
        tr.appendChild(el("td", "num", s === null ? "–" : s.toFixed(3)));
      }
      if (D.text) tr.appendChild(el("td", "excerpt", D.text[i]));
      body.appendChild(tr);
    });
    var what = thousands(shown.length) + " of " + thousands(n) + " documents";
    if (state.cluster !== null) what += " · " + unit + " " + clusterName(state.cluster);
    if (words.length) what += " · matching \u201c" + state.query.trim() + "\u201d";
    count.textContent = what;
    pageText.textContent = "page " + (state.page + 1) + " of " + pages;
    prev.disabled = state.page === 0;
    next.disabled = state.page >= pages - 1;
  }

  /* -- the map --------------------------------------------------------------------- */
  var svg = document.getElementById("map-svg");
  var tip = document.getElementById("map-tip");
  var points = [];
  if (svg && D.map) {
    var NS = svg.namespaceURI, r = D.map.i.length > 2000 ? 0.010 : 0.016;
    var layer = document.createElementNS(NS, "g");
    for (var p = 0; p < D.map.i.length; p++) {
      var doc = D.map.i[p], dot = document.createElementNS(NS, "circle");
      dot.setAttribute("cx", (D.map.x[p] / 1000).toFixed(3));
      dot.setAttribute("cy", (-D.map.y[p] / 1000).toFixed(3));
      dot.setAttribute("r", r);
      dot.setAttribute("fill", colors[D.cluster[doc]] || D.none_color);
      dot.setAttribute("data-i", doc);
      dot.setAttribute("class", "pt");
      layer.appendChild(dot);
      points.push(dot);
    }
    svg.appendChild(layer);
    D.map.anchors.forEach(function (a) {
      var t = document.createElementNS(NS, "text");
      t.setAttribute("x", (a[1] / 1000).toFixed(3));
      t.setAttribute("y", (-a[2] / 1000).toFixed(3));
      t.setAttribute("class", "anchor");
      t.textContent = clusterName(a[0]);
      svg.appendChild(t);
    });
    svg.addEventListener("mouseover", function (e) {
      var i = e.target.getAttribute && e.target.getAttribute("data-i");
      if (i === null || i === undefined) return;
      i = +i;
      tip.textContent = "";
      var head = el("div", "tip-head");
      head.appendChild(swatch(D.cluster[i]));
      head.appendChild(document.createTextNode(unit + " " + clusterName(D.cluster[i]) +
        " · " + D.ids[i] + (D.labels ? " · " + label(i) : "")));
      tip.appendChild(head);
      if (D.text) tip.appendChild(el("div", null, D.text[i]));
      var box = svg.parentNode.getBoundingClientRect();
      tip.style.left = Math.min(e.clientX - box.left + 12, box.width - 260) + "px";
      tip.style.top = (e.clientY - box.top + 12) + "px";
      tip.hidden = false;
    });
    svg.addEventListener("mouseout", function (e) {
      if (e.target.getAttribute && e.target.getAttribute("data-i") !== null) tip.hidden = true;
    });
    svg.addEventListener("click", function (e) {
      var i = e.target.getAttribute && e.target.getAttribute("data-i");
      if (i !== null && i !== undefined) select(D.cluster[+i], false);
    });
  }
  function renderMap() {
    var words = terms();
    points.forEach(function (dot) {
      dot.classList.toggle("off", !visible(+dot.getAttribute("data-i"), words));
    });
  }

  /* -- filters --------------------------------------------------------------------- */
  function renderChips() {
    document.querySelectorAll(".chip").forEach(function (chip) {
      var c = chip.dataset.cluster;
      chip.classList.toggle("on", c === "all" ? state.cluster === null
        : state.cluster !== null && +c === state.cluster);
    });
  }
  function render() { renderList(); renderMap(); renderChips(); }
  function select(c, toggle) {
    state.cluster = (c === "all" || c === null || (toggle && +c === state.cluster)) ? null : +c;
    state.page = 0;
    render();
  }
  document.addEventListener("click", function (e) {
    if (e.target.closest("a")) return;
    var picked = e.target.closest("[data-cluster]");
    if (picked) select(picked.dataset.cluster, true);
  });
  search.addEventListener("input", function () {
    state.query = search.value.toLowerCase();
    state.page = 0;
    render();
  });
  /* -- levels (-k auto): another resolution redraws the table, map and list -------- */
  var pick = document.getElementById("level-pick");
  if (pick && D.levels) {
    var table = document.getElementById("cluster-rows");
    var heads = [].map.call(document.querySelectorAll("#cluster-table thead th"),
                            function (th) { return th.textContent; });
    var runRows = [].slice.call(table.children);
    var runChips = [].map.call(document.querySelectorAll(".chips"), function (box) {
      return [].slice.call(box.children);
    });
    var runLevel = { cluster: D.cluster, clusters: D.clusters };
    var levelRow = function (c) {
      var tr = el("tr", "pick");
      tr.dataset.cluster = String(c.id);
      tr.title = "click: show only this cluster on the map and in the document list";
      var first = el("td");
      first.appendChild(swatch(c.id));
      first.appendChild(document.createTextNode(String(c.id)));
      tr.appendChild(first);
      var size = el("td");
      size.appendChild(el("span", "num", c.size));
      tr.appendChild(size);
      if (heads.indexOf("main labels") >= 0) tr.appendChild(el("td", null, c.labels || "–"));
      var words = el("td");
      words.appendChild(el("span", "words", c.words));
      tr.appendChild(words);
      if (heads.indexOf("NPMI") >= 0) tr.appendChild(el("td", null, "–"));
      return tr;
    };
    var levelChip = function (c) {
      var chip = el("button", "chip");
      chip.type = "button";
      chip.dataset.cluster = String(c.id);
      chip.title = c.words.split(" ").slice(0, 5).join(" ");
      chip.appendChild(swatch(c.id));
      chip.appendChild(document.createTextNode(String(c.id)));
      return chip;
    };
    var setLevel = function (k) {
      var atRun = +k === D.levels.current, level = D.levels.by_k[String(k)];
      var shown = atRun ? runLevel : { cluster: level.cluster, clusters: level.clusters };
      D.cluster = shown.cluster;
      colors = {}; names = {}; given = {};
      shown.clusters.forEach(function (c) {
        colors[c.id] = c.color; names[c.id] = c.words; given[c.id] = c.name;
      });
      colors[-1] = D.none_color;
      table.textContent = "";
      (atRun ? runRows : level.clusters.map(levelRow)).forEach(function (row) {
        table.appendChild(row);
      });
      document.querySelectorAll(".chips").forEach(function (box, b) {
        box.textContent = "";
        (atRun ? runChips[b] : [runChips[b][0]].concat(level.clusters.map(levelChip)))
          .forEach(function (chip) { box.appendChild(chip); });
      });
      points.forEach(function (dot) {
        dot.setAttribute("fill", colors[D.cluster[+dot.getAttribute("data-i")]] || D.none_color);
      });
      if (svg) svg.querySelectorAll("text.anchor").forEach(function (t) {
        t.style.display = atRun ? "" : "none";
      });
      state.cluster = null;
      state.page = 0;
      render();
    };
    pick.addEventListener("change", function () { setLevel(pick.value); });
    document.getElementById("level-tools").hidden = false;
  }
  prev.addEventListener("click", function () { state.page -= 1; renderList(); });
  next.addEventListener("click", function () { state.page += 1; renderList(); });
  document.getElementById("doc-tools").hidden = false;
  render();
})();
