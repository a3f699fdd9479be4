"""The HTML report of a run folder: one self-contained page that works offline.

:func:`write_report` reads the files of a run folder (``run.json``, ``assignments.csv``,
``topics.csv``, ``tree.json`` for a topic tree, ``partitions.csv`` for a cluster
ensemble) and writes ``report.html`` beside them. The page shows, per cluster, its size,
its top words as bars, its label make-up and its most representative documents with an
excerpt; a map of the documents coloured by cluster; the topic tree as nested
collapsible lists; the ``-k auto`` selection curve when the run has one; with labels, the
cluster x label table with NMI, ARI and accuracy; NPMI coherence and topic diversity;
the run's parameters and timings.

Everything is inline: CSS in a ``<style>`` element, plots as inline SVG (matplotlib,
the map's points rasterized), no script, no font, image or style sheet from elsewhere.
The texts come from the corpus named by run.json's ``source`` (re-read with
:func:`semnmf.load_dataset` and the run's input options) or from the ``corpus`` given;
when neither is available the page says so and shows what the files alone allow.
"""

import colorsys
import csv
import html
import io
import json
import os
import time

import numpy as np
import scipy.sparse as sp

from .._utils.io import atomic_write
from .._utils.progress import log
from ..metrics import clustering_scores, npmi_coherence, topic_diversity

__all__ = ["write_report", "read_run"]

TAB20 = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
         "#7f7f7f", "#bcbd22", "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896",
         "#c5b0d5", "#c49c94", "#f7b6d2", "#c7c7c7", "#dbdb8d", "#9edae5"]
OUTLIER_COLOR = "#b0b0b0"


# -- reading a run folder ----------------------------------------------------------------

def _read_csv(path):
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.reader(f))


def _float(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def _read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path} is not valid JSON ({exc}): the file is damaged; run the "
                         "command again.") from None


def read_run(run_dir):
    """The content of a run folder as one dict: ``run`` (run.json), ``ids``,
    ``clusters`` (int array), ``labels`` (list or None), ``membership`` (float array or
    None), ``topics`` ({cluster: [(term, weight), ...]}), ``tree`` (tree.json or None),
    ``partitions`` ((seeds, array) or None)."""
    run_path = os.path.join(run_dir, "run.json")
    assignments_path = os.path.join(run_dir, "assignments.csv")
    for path in (run_path, assignments_path):
        if not os.path.isfile(path):
            raise ValueError(f"{run_dir} is not a run folder: {os.path.basename(path)} is "
                             "missing (write one with semnmf cluster or semnmf tree).")
    run = _read_json(run_path)
    rows = _read_csv(assignments_path)
    if not rows or "cluster" not in rows[0]:
        raise ValueError(f"{assignments_path} has no 'cluster' column.")
    header, rows = rows[0], rows[1:]
    col = {name: i for i, name in enumerate(header)}
    clusters = []
    for number, r in enumerate(rows, 2):
        try:
            if len(r) != len(header):
                raise ValueError
            clusters.append(int(r[col["cluster"]]))
        except ValueError:
            raise ValueError(f"{assignments_path}, line {number}: {len(r)} fields where the "
                             f"header has {len(header)}, or a cluster that is not a whole "
                             "number: the file is damaged; run the command again.") from None
    expected = (run.get("data") or {}).get("n_documents")
    if isinstance(expected, int) and expected != len(rows):
        raise ValueError(f"{assignments_path} has {len(rows)} rows but run.json says the run "
                         f"had {expected} documents: the file is damaged or from another "
                         "run; run the command again.")
    ids = [r[col["doc"]] if "doc" in col else str(i) for i, r in enumerate(rows)]
    clusters = np.array(clusters, dtype=np.int64)
    labels = [r[col["label"]] for r in rows] if "label" in col else None
    # each document's strength: "strength", or "membership" in a run folder of 0.1
    strength = next((name for name in ("strength", "membership") if name in col), None)
    membership = (np.array([_float(r[col[strength]]) for r in rows])
                  if strength is not None else None)

    topics = {}
    tree = None
    tree_path = os.path.join(run_dir, "tree.json")
    if os.path.isfile(tree_path):
        tree = _read_json(tree_path)
        for node in tree.get("nodes", []):
            if node.get("leaf") and node.get("label") is not None:
                topics[int(node["label"])] = [(t["term"], float(t["weight"]))
                                              for t in node.get("top_terms", [])]
    topics_path = os.path.join(run_dir, "topics.csv")
    if not topics and os.path.isfile(topics_path):
        trows = _read_csv(topics_path)
        tcol = {name: i for i, name in enumerate(trows[0])}
        ranked = {}
        for r in trows[1:]:
            c = int(r[tcol["cluster"]])
            rank = int(r[tcol["rank"]]) if "rank" in tcol else len(ranked.get(c, []))
            ranked.setdefault(c, []).append((rank, r[tcol["term"]], _float(r[tcol["weight"]])))
        topics = {c: [(t, w) for _, t, w in sorted(v)] for c, v in ranked.items()}

    partitions = None
    partitions_path = os.path.join(run_dir, "partitions.csv")
    if os.path.isfile(partitions_path):
        prows = _read_csv(partitions_path)
        if len(prows) > 1:
            partitions = (prows[0][1:], np.array([[int(v) for v in r[1:]] for r in prows[1:]]))
    return {"run": run, "ids": ids, "clusters": clusters, "labels": labels,
            "membership": membership, "topics": topics, "tree": tree,
            "partitions": partitions}


def _load_corpus(run, ids):
    """(corpus, note): the run's corpus re-read from run.json's source, or (None, why)."""
    from ..datasets import load_dataset

    source = run.get("source")
    if not source:
        return None, "run.json names no source"
    if run.get("source_path") and os.path.exists(run["source_path"]):
        source = run["source_path"]  # the run was made in another folder
    args = run.get("cli_arguments") or {}
    options = {}
    if args.get("min_df") is not None:
        options["min_df"] = args["min_df"]
    if args.get("max_df") not in (None, 1.0):
        options["max_df"] = args["max_df"]
    if args.get("stem") is not None:
        options["stem"] = None if args["stem"] == "none" else args["stem"]
    try:
        corpus = load_dataset(source, text_column=args.get("text_column"),
                              label_column=args.get("label_column"),
                              encoding=args.get("encoding") or "utf-8", **options)
    except Exception as exc:  # any failure only means: no texts in the report
        return None, f"the source {source!r} could not be read ({' '.join(str(exc).split())})"
    return _check_corpus(corpus, ids, f"the source {source!r}")


def _check_corpus(corpus, ids, what):
    if len(corpus) != len(ids):
        return None, f"{what} has {len(corpus)} documents, the run {len(ids)}"
    if [str(i) for i in corpus.ids] != list(ids):
        return None, f"the document ids of {what} differ from the run's"
    return corpus, None


# -- small HTML helpers -------------------------------------------------------------------

def _e(value):
    return html.escape(str(value), quote=True)


def _colors(clusters):
    """A colour per cluster id: tab20 up to 20 clusters, then evenly spaced hues."""
    ids = [c for c in clusters if c >= 0]
    colors = {}
    for i, c in enumerate(ids):
        if len(ids) <= len(TAB20):
            colors[c] = TAB20[i]
        else:
            r, g, b = colorsys.hls_to_rgb((i * 0.618034) % 1.0, 0.5, 0.65)
            colors[c] = f"#{int(r * 255):02x}{int(g * 255):02x}{int(b * 255):02x}"
    colors[-1] = OUTLIER_COLOR
    return colors


def _fmt(value, digits=4):
    if value is None:
        return "–"
    if isinstance(value, float):
        if not np.isfinite(value):
            return "–"
        return f"{value:.{digits}f}"
    return str(value)


def _excerpt(text, n):
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[:n].rsplit(" ", 1)[0] + " …"


def _svg(fig, salt):
    """A matplotlib figure as an inline <svg> element (text kept as text; unique ids)."""
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": salt}):
        fig.savefig(buffer, format="svg", bbox_inches="tight",
                    metadata={"Creator": None, "Date": None, "Format": None, "Type": None})
    svg = buffer.getvalue()
    svg = svg[svg.find("<svg"):]  # no XML declaration or DTD inside HTML
    # inline SVG in HTML needs no namespace declarations: the page names no URL at all
    for declaration in (' xmlns:xlink="http://www.w3.org/1999/xlink"',
                        ' xmlns="http://www.w3.org/2000/svg"'):
        svg = svg.replace(declaration, "", 1)
    return svg


def _figure(width, height):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    fig.set_layout_engine("constrained")
    return fig


def _style_axes(ax):
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.tick_params(labelsize=9)


# -- the parts of the page ----------------------------------------------------------------

def _representatives(X, members, membership, n):
    """The n most representative members: by membership when known, else by cosine to
    the members' mean row. Returns (indices, scores, how)."""
    if membership is not None and np.isfinite(membership[members]).any():
        score = np.nan_to_num(membership[members], nan=-np.inf)
        how = "membership"
    elif X is not None:
        rows = X[members]
        mean = np.asarray(rows.mean(axis=0)).ravel()
        norms = np.sqrt(np.asarray(rows.multiply(rows).sum(axis=1)).ravel()) \
            if sp.issparse(rows) else np.linalg.norm(rows, axis=1)
        denom = np.maximum(norms * max(np.linalg.norm(mean), 1e-300), 1e-300)
        score = np.asarray(rows @ mean).ravel() / denom
        how = "cosine to the cluster's mean TF-IDF row"
    else:
        return np.array([], dtype=int), np.array([]), None
    order = np.argsort(-score, kind="stable")[:n]
    return members[order], score[order], how


def _map_coordinates(X, clusters, max_points, seed=0, sharpness=4.0):
    """2-D positions of (a sample of) the documents by cluster membership.

    Each cluster gets an anchor on the unit circle, similar clusters side by side (their
    order is the angle of a classical MDS of the cluster means); each document sits at
    the average of the anchors weighted by its cosine similarities to the cluster means,
    raised to ``sharpness`` (a document of one clear cluster near its anchor, a mixed
    one between its clusters), with a little jitter to show density. Returns (sample
    indices, n x 2 array, {cluster: anchor}); no positions (None) for fewer than two
    clusters."""
    n = X.shape[0]
    rng = np.random.default_rng(seed)
    sample = np.sort(rng.choice(n, size=max_points, replace=False)) if n > max_points \
        else np.arange(n)
    ids = np.unique(clusters[clusters >= 0])
    if ids.size < 2:
        return sample, None, None
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    Xn = sp.diags(1.0 / norms) @ X
    index = {c: i for i, c in enumerate(ids)}
    valid = clusters >= 0
    indicator = sp.csr_matrix((np.ones(valid.sum()),
                               ([index[c] for c in clusters[valid]], np.flatnonzero(valid))),
                              shape=(ids.size, n))
    means = np.asarray((indicator @ Xn).todense())
    means /= np.maximum(np.linalg.norm(means, axis=1, keepdims=True), 1e-300)
    # anchors: clusters around the circle in the angular order of a 2-D classical MDS
    gram = means @ means.T
    centred = gram - gram.mean(axis=0) - gram.mean(axis=1, keepdims=True) + gram.mean()
    values, vectors = np.linalg.eigh(centred)
    plane = vectors[:, -2:] * np.sqrt(np.maximum(values[-2:], 0))
    order = np.argsort(np.arctan2(plane[:, 1], plane[:, 0]), kind="stable")
    angles = np.empty(ids.size)
    angles[order] = 2 * np.pi * np.arange(ids.size) / ids.size + np.pi / 2
    anchors = np.column_stack([np.cos(angles), np.sin(angles)])
    S = np.maximum(np.asarray(Xn[sample] @ means.T), 0.0) ** sharpness
    total = S.sum(axis=1, keepdims=True)
    W = np.where(total > 0, S / np.maximum(total, 1e-300), 0.0)
    coords = W @ anchors
    coords += rng.normal(scale=0.035, size=coords.shape)
    return sample, coords, dict(zip(ids.tolist(), anchors))


def _map_svg(coords, clusters, colors, anchors):
    fig = _figure(6.6, 6.6)
    ax = fig.add_subplot()
    theta = np.linspace(0, 2 * np.pi, 200)
    ax.plot(np.cos(theta), np.sin(theta), color="#e3e6eb", linewidth=1, zorder=0)
    cols = [colors.get(int(c), OUTLIER_COLOR) for c in clusters]
    ax.scatter(coords[:, 0], coords[:, 1], c=cols, s=5 if len(coords) > 2000 else 10,
               alpha=0.6, linewidths=0, rasterized=True)
    for c, (x, y) in anchors.items():
        ax.annotate(str(c), (1.13 * x, 1.13 * y), ha="center", va="center", fontsize=10,
                    fontweight="bold", color="#222",
                    bbox={"boxstyle": "round,pad=0.25", "fc": "white",
                          "ec": colors.get(int(c), "#888"), "lw": 1.5})
    ax.set_xlim(-1.25, 1.25)
    ax.set_ylim(-1.25, 1.25)
    ax.set_aspect("equal")
    ax.set_axis_off()
    return _svg(fig, "map")


def _curve_svg(x, y, xlabel, ylabel, chosen=None, salt="curve"):
    fig = _figure(5.6, 2.8)
    ax = fig.add_subplot()
    ax.plot(x, y, "o-", color="#3465a4", markersize=4)
    if chosen is not None and chosen in list(x):
        i = list(x).index(chosen)
        ax.plot([x[i]], [y[i]], "o", color="#cc0000", markersize=9, fillstyle="none",
                markeredgewidth=2)
        ax.annotate(f"{xlabel.split()[0]} = {chosen}", (x[i], y[i]), textcoords="offset points",
                    xytext=(6, 8), fontsize=9, color="#cc0000")
    ax.set_xlabel(xlabel, fontsize=9)
    ax.set_ylabel(ylabel, fontsize=9)
    ax.grid(alpha=0.3)
    _style_axes(ax)
    return _svg(fig, salt)


def _word_bars(terms, n_words, color="#3465a4"):
    terms = [(t, w) for t, w in terms[:n_words]]
    if not terms:
        return '<p class="muted">no terms</p>'
    top = max((w for _, w in terms if np.isfinite(w)), default=0.0) or 1.0
    rows = []
    for term, weight in terms:
        width = 100.0 * max(weight, 0.0) / top if np.isfinite(weight) else 0.0
        rows.append(f'<div class="bar-row"><span class="bar-label">{_e(term)}</span>'
                    f'<span class="bar-track"><span class="bar" style="width:{width:.1f}%;'
                    f'background:{color}">'
                    f'</span></span><span class="bar-value">{_fmt(weight, 3)}</span></div>')
    return '<div class="bars">' + "".join(rows) + "</div>"


def _label_mix(labels, members, top=3):
    values, counts = np.unique(np.asarray(labels, dtype=object)[members].astype(str),
                               return_counts=True)
    order = np.argsort(-counts, kind="stable")[:top]
    total = counts.sum()
    return ", ".join(f"{_e(values[i])} {counts[i] / total:.0%}" for i in order)


def _table(header, rows, cls="data"):
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _contingency(clusters, labels, colors, outlier_name="outliers"):
    label_values = sorted(set(labels))
    cluster_ids = sorted(set(clusters.tolist()))
    lab = np.asarray(labels, dtype=object)
    table = np.array([[int(np.sum((clusters == c) & (lab == v))) for v in label_values]
                      for c in cluster_ids])
    # many labels: their names turned upright, so that the table keeps a readable width
    cls = ' class="vertical"' if len(label_values) > 8 else ""
    head = "<th>cluster</th>" + "".join(f"<th{cls}><span>{_e(v)}</span></th>"
                                        for v in label_values) + "<th>total</th>"
    body = []
    for c, row in zip(cluster_ids, table):
        peak = max(row.max(), 1)
        cells = "".join(
            f'<td style="background:rgba(52,101,164,{0.85 * n / peak:.2f});'
            f'{"color:#fff;" if n / peak > 0.55 else ""}">{n if n else ""}</td>' for n in row)
        name = outlier_name if c < 0 else str(c)
        body.append(f'<tr><th><span class="swatch" style="background:{colors.get(c, "#999")}">'
                    f"</span>{name}</th>{cells}<td>{row.sum()}</td></tr>")
    totals = table.sum(axis=0)
    body.append("<tr class='total'><th>total</th>" + "".join(f"<td>{n}</td>" for n in totals)
                + f"<td>{totals.sum()}</td></tr>")
    return (f'<div class="scroll"><table class="data contingency"><thead><tr>{head}</tr>'
            f'</thead><tbody>{"".join(body)}</tbody></table></div>')


def _tree_html(tree, colors, n_words, open_depth):
    nodes = {n["id"]: n for n in tree.get("nodes", [])}
    if 0 not in nodes:
        return '<p class="muted">tree.json has no root node</p>'

    n_leaves = {}

    def count(node_id):
        children = nodes[node_id].get("children") or []
        n_leaves[node_id] = sum(count(c) for c in children) if children else 1
        return n_leaves[node_id]

    count(0)

    def words(node):
        return " ".join(_e(t["term"]) for t in node.get("top_terms", [])[:n_words])

    def render(node_id):
        node = nodes[node_id]
        outliers = len(node.get("outliers") or [])
        extra = f' <span class="muted">({outliers} outliers)</span>' if outliers else ""
        if node.get("leaf") or not node.get("children"):
            c = node.get("label")
            name = f'<a href="#cluster-{c}">leaf {c}</a>' if c is not None else f"node {node_id}"
            swatch = colors.get(c, "#999") if c is not None else "#999"
            return (f'<li class="leaf"><span class="swatch" style="background:{swatch}"></span>'
                    f'<b>{name}</b> <span class="size">{node.get("n_documents", "?")} docs'
                    f'</span>{extra} <span class="words">{words(node)}</span></li>')
        depth = node.get("depth", 0)
        children = "".join(render(child) for child in node["children"])
        return (f'<li><details{" open" if depth < open_depth else ""}><summary><b>node '
                f'{node_id}</b> <span class="size">{node.get("n_documents", "?")} docs · '
                f'{n_leaves[node_id]} leaves</span>'
                f'{extra} <span class="words">{words(node)}</span></summary>'
                f"<ul>{children}</ul></details></li>")

    return f'<ul class="tree">{render(0)}</ul>'


CSS = """
:root { --fg:#1d2330; --muted:#6b7280; --line:#e3e6eb; --accent:#3465a4; --bg:#fafbfc; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--fg);
  font: 15px/1.5 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans",
  "DejaVu Sans", sans-serif; }
main { max-width: 1180px; margin: 0 auto; padding: 28px 32px 60px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 36px 0 12px; padding-bottom: 6px; border-bottom: 2px solid var(--line); }
h3 { font-size: 16px; margin: 0 0 8px; }
.muted { color: var(--muted); }
nav { margin: 10px 0 0; font-size: 14px; }
nav a { margin-right: 14px; color: var(--accent); text-decoration: none; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin: 18px 0 4px; }
.card { background:#fff; border:1px solid var(--line); border-radius:8px; padding:8px 12px;
  flex: 1 1 100px; }
.card .k { font-size: 12px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
.card .v { font-size: 20px; font-weight: 600; }
table.data { border-collapse: collapse; background:#fff; font-size: 14px; }
table.data th, table.data td { border: 1px solid var(--line); padding: 4px 9px; text-align: left;
  vertical-align: top; }
table.data thead th { background: #f1f3f6; font-weight: 600; }
table.data td.num, table.contingency td { text-align: right; font-variant-numeric: tabular-nums; }
table.contingency thead th { vertical-align: bottom; }
table.contingency th.vertical { padding: 6px 4px; }
table.contingency th.vertical span { writing-mode: vertical-rl; transform: rotate(180deg);
  white-space: nowrap; font-weight: 500; }
table.contingency tr.total td, table.contingency tr.total th { background:#f1f3f6; }
.scroll { overflow-x: auto; }
.swatch { display:inline-block; width:11px; height:11px; border-radius:2px; margin-right:6px;
  vertical-align: baseline; }
.clusters { display: grid; grid-template-columns: repeat(auto-fill, minmax(520px, 1fr)); gap: 16px; }
.cluster { background:#fff; border:1px solid var(--line); border-radius:8px; padding:14px 16px; }
.cluster .meta { font-size: 13px; color: var(--muted); margin-bottom: 8px; }
.bars { margin: 6px 0 10px; }
.bar-row { display:flex; align-items:center; font-size: 13px; line-height: 1.35; }
.bar-label { width: 130px; flex: none; overflow:hidden; text-overflow: ellipsis; white-space: nowrap; }
.bar-track { flex: 1; background: #f1f3f6; height: 11px; border-radius: 2px; margin: 0 8px; }
.bar { display:block; height: 100%; border-radius: 2px; background: var(--accent); }
.bar-value { width: 48px; text-align: right; color: var(--muted); font-variant-numeric: tabular-nums; }
.doc { border-left: 3px solid var(--line); padding: 2px 0 2px 10px; margin: 8px 0; font-size: 13.5px; }
.doc .id { font-size: 12px; color: var(--muted); }
.words { color: #374151; }
.size { color: var(--muted); font-size: 13px; margin: 0 4px; }
ul.tree, ul.tree ul { list-style: none; padding-left: 20px; margin: 2px 0; }
ul.tree { padding-left: 0; }
ul.tree li { margin: 3px 0; font-size: 14px; }
ul.tree ul { border-left: 1px dashed #c9ced6; }
summary { cursor: pointer; }
.figure { background:#fff; border:1px solid var(--line); border-radius:8px; padding: 8px;
  display:inline-block; max-width: 100%; }
.figure svg { max-width: 100%; height: auto; }
pre { background:#fff; border:1px solid var(--line); padding: 8px 10px; overflow-x:auto;
  font-size: 12.5px; }
.two { display:flex; flex-wrap: wrap; gap: 24px; align-items: flex-start; }
.side { max-width: 420px; font-size: 14px; }
footer { margin-top: 40px; font-size: 13px; color: var(--muted); }
"""


def write_report(run_dir, *, corpus=None, out=None, n_documents=3, n_words=10,
                 excerpt_chars=320, max_points=5000, load_texts=True, verbose=False):
    """Write ``report.html`` for a run folder and return its path.

    Parameters
    ----------
    run_dir : str or path-like
        A folder written by ``semnmf cluster`` or ``semnmf tree`` (or
        :func:`semnmf.report.write_results`): run.json and assignments.csv at least.
    corpus : Corpus, optional
        The run's corpus (same documents, same order). By default it is re-read from
        run.json's ``source`` with the run's input options; without it the page shows no
        texts, no map and no coherence, and says so.
    out : str, optional
        Where to write the page (default ``run_dir/report.html``).
    n_documents : int, default=3
        Representative documents shown per cluster.
    n_words : int, default=10
        Top words shown per cluster (bars) and used for NPMI coherence.
    excerpt_chars : int, default=320
        Length of each document excerpt.
    max_points : int, default=5000
        Documents drawn on the map at most (a fixed random sample beyond).
    load_texts : bool, default=True
        Re-read the corpus from the source when ``corpus`` is not given.
    verbose : bool, default=False
        Log what is done (never printed by the library otherwise).

    Returns
    -------
    str
        The path of the page.
    """
    t0 = time.perf_counter()
    run_dir = os.fspath(run_dir)
    data = read_run(run_dir)
    run, ids, clusters = data["run"], data["ids"], data["clusters"]
    labels, membership, topics = data["labels"], data["membership"], data["topics"]
    tree = data["tree"]

    note = None
    if corpus is not None:
        corpus, note = _check_corpus(corpus, ids, "the corpus given")
    elif load_texts:
        log(f"report: reading the corpus {run.get('source')!r} ...", verbose)
        corpus, note = _load_corpus(run, ids)
    else:
        note = "the corpus was not read"
    X = corpus.vectorize("tfidf") if corpus is not None else None
    texts = corpus.texts if corpus is not None else None
    if corpus is not None and texts is None:
        note = "the corpus has no raw texts (a count matrix only)"
    if labels is None and corpus is not None and corpus.labels is not None:
        labels = [str(v) for v in corpus.labels]

    cluster_ids = sorted(set(c for c in clusters.tolist() if c >= 0) | set(topics))
    colors = _colors(cluster_ids)
    sizes = {c: int(np.sum(clusters == c)) for c in cluster_ids}
    n_outliers = int(np.sum(clusters < 0))
    is_tree = tree is not None

    # topic quality: NPMI from the corpus when we have it, diversity from the files
    npmi = {}
    if corpus is not None and topics:
        vocab = [str(t) for t in corpus.vocabulary]
        order = [c for c in cluster_ids if topics.get(c)]
        values = npmi_coherence([[t for t, w in topics[c][:n_words] if w > 0] for c in order],
                                corpus.counts(), n_terms=max(n_words, 2), vocabulary=vocab,
                                average=False)
        npmi = dict(zip(order, values.tolist()))
    listed = [[t for t, w in topics[c] if w > 0] for c in cluster_ids if topics.get(c)]
    diversity_n = min(25, max((len(v) for v in listed), default=0))
    diversity = topic_diversity([v[:diversity_n] for v in listed], diversity_n) \
        if diversity_n else None
    finite_npmi = [v for v in npmi.values() if np.isfinite(v)]
    mean_npmi = float(np.mean(finite_npmi)) if finite_npmi else None
    quality = run.get("topic_quality") or {}

    scores = None
    if labels is not None and len(set(labels)) > 0:
        scores = clustering_scores(np.asarray(labels, dtype=object).astype(str), clusters)

    # ---- header and summary
    method = run.get("method", "?")
    corpus_name = run.get("corpus") or run.get("source") or os.path.basename(run_dir)
    title = (f"{'Topic tree' if is_tree else 'Clusters'} of {corpus_name} — {method}")
    parts = []
    sections = [("summary", "Summary"), ("clusters", "Clusters")]
    cards = [("documents", f"{len(ids):,}"),
             ("terms", f"{(run.get('data') or {}).get('n_terms', '–'):,}"
              if isinstance((run.get("data") or {}).get("n_terms"), int) else "–"),
             ("leaves" if is_tree else "clusters", str(len(cluster_ids)))]
    if n_outliers:
        cards.append(("outliers" if is_tree else "unassigned", str(n_outliers)))
    if scores:
        cards += [("NMI", _fmt(scores["nmi"])), ("ARI", _fmt(scores["ari"])),
                  ("accuracy", _fmt(scores["accuracy"]))]
    if mean_npmi is not None or quality.get("npmi") is not None:
        cards.append((f"NPMI (top {n_words})",
                      _fmt(mean_npmi if mean_npmi is not None else quality.get("npmi"))))
    if quality.get("diversity") is not None:
        cards.append((f"diversity (top {quality.get('diversity_top_n', '?')})",
                      _fmt(quality["diversity"], 3)))
    elif diversity is not None:
        cards.append((f"diversity (top {diversity_n})", _fmt(diversity, 3)))
    total_time = (run.get("timings_seconds") or {}).get("total")
    if total_time is not None:
        cards.append(("run time", f"{total_time:.1f} s"))
    parts.append('<section id="summary"><div class="cards">' + "".join(
        f'<div class="card"><div class="k">{_e(k)}</div><div class="v">{v}</div></div>'
        for k, v in cards) + "</div>")
    info = [f"<b>{_e(run.get('estimator', method))}</b> on <b>{_e(corpus_name)}</b>"]
    if run.get("created"):
        info.append(f"run {_e(run['created'])}")
    if run.get("consensus"):
        cons = run["consensus"]
        info.append(f"consensus: {_e(cons if isinstance(cons, str) else json.dumps(cons))}")
    if note:
        info.append(f'<span class="muted">texts not available: {_e(note)}</span>')
    parts.append("<p>" + " · ".join(info) + "</p></section>")

    # ---- overview table and per-cluster cards
    rows = []
    for c in cluster_ids:
        members = np.flatnonzero(clusters == c)
        row = [f'<a href="#cluster-{c}"><span class="swatch" style="background:{colors[c]}">'
               f"</span>{c}</a>", f'<span class="num">{sizes[c]}</span>']
        if labels is not None:
            row.append(_label_mix(labels, members, 2) if members.size else "–")
        row.append('<span class="words">' + " ".join(
            _e(t) for t, _ in topics.get(c, [])[:n_words]) + "</span>")
        if npmi:
            row.append(_fmt(npmi.get(c), 3))
        rows.append(row)
    header = ["cluster", "size"] + (["main labels"] if labels is not None else []) + \
        [f"top {n_words} words"] + (["NPMI"] if npmi else [])
    how_note = None
    cards_html = []
    for c in cluster_ids:
        members = np.flatnonzero(clusters == c)
        meta = [f"{sizes[c]} documents ({sizes[c] / max(len(ids), 1):.1%})"]
        if labels is not None and members.size:
            meta.append("labels: " + _label_mix(labels, members))
        if c in npmi:
            meta.append(f"NPMI {_fmt(npmi[c], 3)}")
        docs_html = ""
        if members.size:
            # a few more candidates than shown: corpora repeat documents (BBC does)
            picked, score, how = _representatives(X, members, membership, 3 * n_documents)
            how_note = how_note or how
            items, seen = [], set()
            for i, s in zip(picked, score):
                if texts is not None:
                    key = " ".join(str(texts[i]).split())[:excerpt_chars]
                    if key in seen:
                        continue
                    seen.add(key)
                if len(items) == n_documents:
                    break
                lab = f" · {_e(labels[i])}" if labels is not None else ""
                body = (f"<div>{_e(_excerpt(texts[i], excerpt_chars))}</div>"
                        if texts is not None else "")
                items.append(f'<div class="doc"><div class="id">{_e(ids[i])}{lab} · '
                             f"{_fmt(float(s), 3)}</div>{body}</div>")
            if items:
                docs_html = "<h4>Representative documents</h4>" + "".join(items)
        cards_html.append(
            f'<div class="cluster" id="cluster-{c}"><h3><span class="swatch" '
            f'style="background:{colors[c]}"></span>{"Leaf" if is_tree else "Cluster"} {c}</h3>'
            f'<div class="meta">{" · ".join(meta)}</div>'
            f"{_word_bars(topics.get(c, []), n_words, colors[c])}{docs_html}</div>")
    explain = ("Representative documents: the members with the highest "
               f"{how_note}." if how_note else
               "Representative documents: not available (no texts and no memberships).")
    # ---- map
    map_html = None
    if X is not None and len(cluster_ids) >= 2:
        sample, coords, anchors = _map_coordinates(X, clusters, max_points)
        if coords is not None:
            shown = (f"A random sample of {len(sample):,} of the {len(ids):,} documents"
                     if len(sample) < len(ids) else f"All {len(ids):,} documents")
            map_html = (
                '<section id="map"><h2>Map of the documents</h2><div class="two">'
                f'<div class="figure">{_map_svg(coords, clusters[sample], colors, anchors)}'
                f'</div><p class="muted side">{shown}, coloured by '
                f'{"leaf" if is_tree else "cluster"} (grey: none).<br><br>Each cluster has an '
                "anchor on the circle, similar clusters side by side. Each document sits "
                "between the anchors, pulled towards each cluster by its cosine similarity to "
                "the cluster's mean TF-IDF row: documents of one clear cluster gather near its "
                "anchor, documents that mix topics lie between their clusters.</p></div>"
                "</section>")

    parts.append(f'<section id="clusters"><h2>{"Leaves" if is_tree else "Clusters"}</h2>'
                 f"{_table(header, rows)}</section>")
    if map_html:
        sections.append(("map", "Map"))
        parts.append(map_html)
    sections.append(("details", "Details"))
    parts.append(f'<section id="details"><h2>{"Leaves" if is_tree else "Clusters"} in '
                 f'detail</h2><p class="muted">{_e(explain)} Bars: the weight of each top '
                 f'word in the {"leaf" if is_tree else "cluster"}\'s topic.</p>'
                 f'<div class="clusters">{"".join(cards_html)}</div></section>')

    # ---- tree
    if is_tree:
        sections.append(("tree", "Tree"))
        n_leaves = len(cluster_ids)
        parts.append('<section id="tree"><h2>Topic tree</h2>'
                     '<p class="muted">Each node: its documents and top words; click a node '
                     "to fold or unfold it, a leaf to see its documents.</p>"
                     f"{_tree_html(tree, colors, 8, 99 if n_leaves <= 30 else 4)}</section>")

    # ---- selection curves
    curves = []
    selection = run.get("k_selection")
    # {"criterion": name, "scores": [...]} (semnmf cluster -k auto), or the older
    # {"criterion": [...], "name": name}
    values = None
    if isinstance(selection, dict):
        values = selection.get("criterion")
        if not isinstance(values, (list, tuple)):
            values = selection.get("scores")
    if isinstance(selection, dict) and selection.get("candidates") and values:
        x = list(selection["candidates"])
        y = [float("nan") if v is None else float(v) for v in values]
        chosen = selection.get("chosen", selection.get("k", len(cluster_ids)))
        name = (selection.get("name") or selection.get("criterion_name")
                or (selection["criterion"] if isinstance(selection.get("criterion"), str)
                    else None) or "criterion")
        curves.append(f'<h3>-k auto: {_e(name)} by number of clusters</h3><div class="figure">'
                      f'{_curve_svg(x, y, "k (number of clusters)", str(name), chosen, "ksel")}'
                      "</div>")
    by_leaves = run.get("nmi_by_number_of_leaves")
    if isinstance(by_leaves, dict) and by_leaves:
        x = [int(k) for k in by_leaves]
        y = [float("nan") if v is None else float(v) for v in by_leaves.values()]
        curves.append('<h3>NMI by number of leaves</h3><div class="figure">'
                      f'{_curve_svg(x, y, "leaves", "NMI", None, "leaves")}</div>')
    if curves:
        sections.append(("selection", "Selection"))
        parts.append('<section id="selection"><h2>Selection curves</h2>' + "".join(curves)
                     + "</section>")

    # ---- labels
    if labels is not None:
        sections.append(("labels", "Labels"))
        score_line = (f"NMI {_fmt(scores['nmi'])} · ARI {_fmt(scores['ari'])} · accuracy "
                      f"{_fmt(scores['accuracy'])}" if scores else "")
        parts.append(
            '<section id="labels"><h2>Clusters and labels</h2>'
            f"<p><b>{score_line}</b> <span class=\"muted\">(from assignments.csv"
            f"{('; outliers as one cluster' if is_tree else '; unassigned documents as one cluster') if n_outliers else ''}; NMI with arithmetic "
            "normalization; accuracy under the best one-to-one matching)</span></p>"
            f"{_contingency(clusters, labels, colors, 'outliers' if is_tree else 'none')}"
            "</section>")

    # ---- topic quality
    sections.append(("quality", "Topic quality"))
    qrows = []
    for c in cluster_ids:
        qrows.append([f'<span class="swatch" style="background:{colors[c]}"></span>{c}',
                      f'<span class="num">{_fmt(npmi.get(c), 3) if npmi else "–"}</span>',
                      '<span class="words">' + " ".join(
                          _e(t) for t, _ in topics.get(c, [])[:n_words]) + "</span>"])
    qtext = (f"NPMI coherence (Bouma 2009) of each topic's top {n_words} words, from "
             "document co-occurrences in the corpus: from −1 (never together) through 0 "
             f"(independent) to 1 (always together); mean {_fmt(mean_npmi, 4)}."
             if npmi else "NPMI coherence: not available (the corpus could not be read).")
    dtext = (f"Topic diversity (Dieng et al. 2020): {_fmt(diversity, 4)}, the fraction of "
             f"unique words among the top {diversity_n} words of all topics (1: no shared "
             "words)." if diversity is not None else "Topic diversity: no topics listed.")
    if quality:
        dtext += (f" run.json: NPMI {_fmt(quality.get('npmi'))} (top "
                  f"{quality.get('npmi_top_n', '?')}), diversity "
                  f"{_fmt(quality.get('diversity'))} (top {quality.get('diversity_top_n', '?')}).")
    parts.append(f'<section id="quality"><h2>Topic quality</h2><p>{_e(qtext)}</p>'
                 f"<p>{_e(dtext)}</p>"
                 f'{_table(["cluster", "NPMI", "top words"], qrows)}</section>')

    # ---- ensemble runs
    partitions = data["partitions"]
    if partitions is not None:
        from ..metrics import nmi

        seeds, P = partitions
        sections.append(("runs", "Runs"))
        prow = [[_e(s), _fmt(nmi(P[:, j], clusters), 4),
                 str(len(np.unique(P[:, j])))] for j, s in enumerate(seeds)]
        parts.append('<section id="runs"><h2>Runs of the ensemble</h2><p class="muted">'
                     "NMI of each kept run with the final (consensus) partition.</p>"
                     f'{_table(["run", "NMI with final", "clusters"], prow)}</section>')

    # ---- parameters and timings
    sections.append(("run", "Run"))
    params = run.get("parameters") or {}
    prow = [[_e(k), f"<code>{_e(json.dumps(v) if not isinstance(v, str) else v)}</code>"]
            for k, v in params.items()]
    fields = []
    for key in ("method", "estimator", "source", "corpus", "objective", "n_iter",
                "effective_lambda", "graph_lambda", "n_leaves", "n_outliers",
                "n_factorizations"):
        if run.get(key) is not None:
            fields.append([_e(key), _e(_fmt(run[key]) if isinstance(run[key], float)
                                       else run[key])])
    for key, value in (run.get("data") or {}).items():
        fields.append([_e(f"data.{key}"), _e(value)])
    for key, value in (run.get("context") or {}).items():
        fields.append([_e(f"context.{key}"), _e(value)])
    timings = run.get("timings_seconds") or {}
    trow = [[_e(k), f'<span class="num">{v:.3f}</span>'] for k, v in timings.items()
            if isinstance(v, (int, float))]
    versions = run.get("versions") or {}
    rest = {k: v for k, v in run.items() if k in ("cli_arguments", "consensus", "refine",
                                                   "semantics", "k_selection")
            and v is not None}
    parts.append(
        '<section id="run"><h2>Run</h2><div class="two">'
        f'<div><h3>Record</h3>{_table(["field", "value"], fields)}</div>'
        f'<div><h3>Parameters</h3>{_table(["parameter", "value"], prow)}</div>'
        f'<div><h3>Timings (s)</h3>{_table(["step", "seconds"], trow)}</div></div>'
        + "".join(f"<details><summary>{_e(k)}</summary><pre>"
                  f"{_e(json.dumps(v, indent=1, default=str))}</pre></details>"
                  for k, v in rest.items())
        + "</section>")

    nav = "".join(f'<a href="#{a}">{_e(t)}</a>' for a, t in sections)
    version = " · ".join(f"{k} {v}" for k, v in versions.items())
    page = (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        '<meta name="generator" content="semnmf">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body><main>"
        f"<h1>{_e(title)}</h1><div class=\"muted\">{_e(run_dir)}</div>"
        f"<nav>{nav}</nav>{''.join(parts)}"
        f"<footer>semnmf report · {_e(version)} · written {_e(time.strftime('%Y-%m-%d %H:%M'))}"
        "</footer></main></body></html>\n")
    path = os.fspath(out) if out is not None else os.path.join(run_dir, "report.html")
    atomic_write(path, lambda f: f.write(page))
    log(f"report: {path} ({len(page.encode('utf-8')) / 1e6:.2f} MB, "
        f"{time.perf_counter() - t0:.1f} s)", verbose)
    return path
