"""The report's second stage: what the page shows, computed from a :class:`RunRecord` and
the run's corpus (texts, TF-IDF rows, NPMI) into a :class:`Page` of plain dataclasses; no
HTML here, the templates (:mod:`._render`) lay it out.
"""

import colorsys
import json
import os
import re
import time
from dataclasses import dataclass, field

import numpy as np

from ..metrics import clustering_scores, npmi_coherence, topic_diversity

__all__ = ["Page", "build_page"]

TAB20 = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
         "#7f7f7f", "#bcbd22", "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896",
         "#c5b0d5", "#c49c94", "#f7b6d2", "#c7c7c7", "#dbdb8d", "#9edae5"]
OUTLIER_COLOR = "#b0b0b0"
# the search index of a document: its distinct words, lowercase, in the order they first
# occur, up to this many characters (a search finds a word anywhere in a text of that size)
SEARCH_CHARS = 20_000
SEARCH_TOTAL = 16_000_000  # and at most this many in all (a large corpus: less each)
_WORD = re.compile(r"\w+")


# -- the page model ----------------------------------------------------------------------

@dataclass
class Document:
    """A representative document: its id, label, score and excerpt (None: no texts)."""
    id: str
    label: str | None
    score: float
    excerpt: str | None


@dataclass
class Cluster:
    """A cluster (or a tree's leaf): its size, top words, label make-up and documents."""
    id: int
    color: str
    size: int
    share: float  # of all documents
    terms: list  # [(term, weight), ...] the top n_words
    npmi: float | None = None
    main_labels: str | None = None  # the two most frequent labels with their shares
    label_mix: str | None = None  # the three most frequent
    documents: list = field(default_factory=list)
    name: str | None = None  # given by semnmf edit --rename
    seeded: str | None = None  # guided topics: its seed words and how far it moved

    @property
    def words(self):
        return [t for t, _ in self.terms]

    @property
    def bars(self):
        """(term, weight, bar width in % of the largest weight) for the word bars."""
        top = max((w for _, w in self.terms if np.isfinite(w)), default=0.0) or 1.0
        return [(t, w, 100.0 * max(w, 0.0) / top if np.isfinite(w) else 0.0)
                for t, w in self.terms]


@dataclass
class DocumentMap:
    """The map: 2-D positions in [-1, 1] of (a sample of) the documents, and where each
    cluster's name goes."""
    rows: np.ndarray  # the documents drawn (row numbers of the run)
    coords: np.ndarray
    clusters: np.ndarray  # of the documents drawn
    anchors: dict  # {cluster: (x, y)}
    colors: dict  # {cluster: colour}, -1 included
    n_shown: int
    n_documents: int
    layout: str = "tsne"


@dataclass
class DocumentList:
    """Every document of the run, for the page's search, document list and map: in the
    order the list shows them (by cluster, then as the representatives are ranked).
    Each list holds one value per document; None: not known."""
    order: np.ndarray  # row numbers of the run, in the list's order
    ids: list
    clusters: list
    strength: list | None
    labels: list | None
    excerpts: list | None
    excerpt_chars: int = 160
    search: list | None = None  # each document's distinct words (_search_words)
    search_chars: int = SEARCH_CHARS


@dataclass
class Levels:
    """The levels of ``-k auto`` for the level picker: ``current`` is the run's k; each
    entry of ``by_k`` holds every document's cluster (run order) and the clusters'
    id, colour, size, top words and main labels."""
    current: int
    by_k: dict  # {k: {"clusters": ndarray, "views": [dict, ...]}}

    @property
    def ks(self):
        return sorted(self.by_k)


@dataclass
class Curve:
    """A selection curve: y by x, the chosen x marked."""
    title: str
    x: list
    y: list
    xlabel: str
    ylabel: str
    chosen: object = None
    salt: str = "curve"


@dataclass
class Timeline:
    """Topics over time (``topics_over_time.csv``): each cluster's share per period."""
    periods: list
    shares: dict  # cluster -> [share per period]
    colors: dict  # cluster -> colour
    period: str | None = None
    n_undated: int = 0
    by_class: bool = False  # topics_over_time_by_class.csv was written too
    names: dict = field(default_factory=dict)  # cluster -> name given by semnmf edit --rename


@dataclass
class TreeNode:
    """A node of the topic tree, with its children."""
    id: int
    label: int | None
    leaf: bool
    n_documents: object  # int, or "?" when tree.json does not say
    n_leaves: int
    n_outliers: int
    depth: int
    words: list
    color: str = "#999"
    children: list = field(default_factory=list)


@dataclass
class Tree:
    """The topic tree section: the root node (None: tree.json has none)."""
    root: TreeNode | None
    open_depth: int  # nodes above this depth are shown unfolded


@dataclass
class Summary:
    """The header: numbers as cards, and the line naming the run."""
    cards: list  # [(key, value text), ...]
    estimator: str
    corpus: str
    created: str | None = None
    consensus: str | None = None  # as text
    note: str | None = None  # why the page has no texts
    decisions: list = field(default_factory=list)  # [(name, value, why), ...] per corpus


@dataclass
class LabelTable:
    """The clusters against the true labels: the scores and the contingency table."""
    scores: dict | None  # nmi, ari, accuracy
    n_outliers: int
    labels: list
    rows: list  # [(cluster name, colour, [count per label, ...], total), ...]
    totals: list

    @property
    def vertical(self):
        """Many labels: their names turned upright, to keep a readable width."""
        return len(self.labels) > 8


@dataclass
class Quality:
    """Topic quality: the mean NPMI (each cluster's is :attr:`Cluster.npmi`) and the
    topic diversity of the files' topics; ``recorded``: run.json's ``topic_quality``."""
    has_npmi: bool
    mean_npmi: float | None
    diversity: float | None
    diversity_n: int
    recorded: dict


@dataclass
class RunDetails:
    """The run's record: fields, parameters, timings, and other fields as JSON."""
    record: list  # [(field, value text), ...]
    parameters: list  # [(name, value text), ...]
    timings: list  # [(step, seconds), ...]
    extra: list  # [(key, JSON text), ...]


@dataclass
class Page:
    """Everything the report shows, section by section."""
    title: str
    run_dir: str
    is_tree: bool
    n_words: int
    summary: Summary
    clusters: list  # of Cluster, with their representative documents
    representatives_by: str | None  # what ranks the representative documents
    has_labels: bool
    quality: Quality
    details: RunDetails
    map: DocumentMap | None = None
    tree: Tree | None = None
    curves: list = field(default_factory=list)
    labels: LabelTable | None = None
    runs: list | None = None  # [(name, NMI with the final partition, clusters), ...]
    documents: DocumentList | None = None
    levels: Levels | None = None
    timeline: Timeline | None = None
    representatives_then: str | None = None  # what breaks ties of representatives_by
    versions: str = ""
    written: str = ""

    @property
    def sections(self):
        """(anchor, title) of the page's sections, in order: the navigation."""
        shown = [("summary", "Summary", True), ("clusters", "Clusters", True),
                 ("map", "Map", self.map is not None),
                 ("documents", "Documents", self.documents is not None),
                 ("details", "Details", True),
                 ("tree", "Tree", self.tree is not None),
                 ("selection", "Selection", bool(self.curves)),
                 ("time", "Over time", self.timeline is not None),
                 ("labels", "Labels", self.labels is not None),
                 ("quality", "Topic quality", True), ("runs", "Runs", self.runs is not None),
                 ("run", "Run", True)]
        return [(anchor, title) for anchor, title, show in shown if show]


# -- computing it --------------------------------------------------------------------------

def build_page(record, corpus=None, note=None, *, n_documents=3, n_words=10,
               excerpt_chars=320, max_points=5000, list_chars=160, layout="tsne"):
    """The :class:`Page` of a run: ``record`` (:func:`._reading.read_run`), the run's
    ``corpus`` (None: no texts, map or coherence; ``note`` says why)."""
    run, clusters, topics = record.run, record.clusters, record.topics or {}
    labels = record.labels
    if labels is None and corpus is not None and corpus.labels is not None:
        labels = [str(v) for v in corpus.labels]
    X = corpus.vectorize("tfidf") if corpus is not None else None
    cluster_ids = sorted(set(c for c in clusters.tolist() if c >= 0) | set(topics))
    colors = _colors(cluster_ids)
    npmi = _npmi(corpus, topics, cluster_ids, n_words)
    views = [_cluster(c, colors[c], record, labels, topics, npmi, n_words) for c in cluster_ids]
    texts = corpus.texts if corpus is not None else None
    order, representatives_by, representatives_then, score = _ranking(
        record, X, topics, corpus.vocabulary if corpus is not None else None)
    if representatives_by is not None:
        _add_documents(views, record, order, score, texts, labels, n_documents,
                       excerpt_chars)
    scores = None
    if labels is not None and len(set(labels)) > 0:
        scores = clustering_scores(np.asarray(labels, dtype=object).astype(str), clusters)
    n_outliers = int(np.sum(clusters < 0))
    quality = _quality(npmi, topics, cluster_ids, run.get("topic_quality") or {})
    method = run.get("method", "?")
    corpus_name = run.get("corpus") or run.get("source") or os.path.basename(record.run_dir)
    page = Page(
        title=f"{'Topic tree' if record.is_tree else 'Clusters'} of {corpus_name} — {method}",
        run_dir=record.run_dir, is_tree=record.is_tree, n_words=n_words,
        summary=Summary(
            cards=_cards(record, len(cluster_ids), n_outliers, scores, quality, n_words),
            estimator=run.get("estimator") or method, corpus=corpus_name,
            created=run.get("created"), consensus=_consensus(run.get("consensus")),
            note=note, decisions=_decisions(run)),
        clusters=views, representatives_by=representatives_by,
        representatives_then=representatives_then,
        documents=_document_list(record, order, texts, labels, list_chars),
        has_labels=labels is not None, quality=quality, details=_run_details(run),
        curves=_curves(run, len(cluster_ids)),
        timeline=_timeline(record, colors, run.get("time") or {}), runs=_ensemble_runs(record.partitions, clusters),
        versions=" · ".join(f"{k} {v}" for k, v in (run.get("versions") or {}).items()),
        written=time.strftime("%Y-%m-%d %H:%M"))
    if X is not None and len(cluster_ids) >= 2:
        page.map = _document_map(X, clusters, max_points, colors, layout)
    if record.levels and len(record.levels) > 1 and not record.is_tree:
        page.levels = _levels(record, labels, len(cluster_ids))
    if record.is_tree:
        page.tree = Tree(root=_tree(record.tree, colors, 8),
                         open_depth=99 if len(cluster_ids) <= 30 else 4)
    if labels is not None:
        page.labels = _label_table(clusters, labels, colors, scores, n_outliers,
                                   "outliers" if record.is_tree else "none")
    return page


def _levels(record, labels, n_clusters):
    """The :class:`Levels` of a run with levels.csv: each level's clusters with the words
    run.json ``levels`` recorded for them."""
    words = {int(entry["k"]): entry.get("words") or []
             for entry in record.run.get("levels") or []}
    by_k = {}
    for k, clusters in record.levels.items():
        ids = sorted(set(clusters[clusters >= 0].tolist()))
        colors = _colors(ids)
        views = []
        for c in ids:
            members = np.flatnonzero(clusters == c)
            top = words.get(k, [])
            views.append({"id": c, "color": colors[c], "size": int(members.size),
                          "words": " ".join(top[c][:10]) if c < len(top) else "",
                          "labels": (_label_mix(labels, members, 2)
                                     if labels is not None else None)})
        by_k[int(k)] = {"clusters": clusters, "views": views}
    return Levels(current=n_clusters if n_clusters in by_k else max(by_k), by_k=by_k)


def _colors(cluster_ids):
    """A colour per cluster id: tab20 up to 20 clusters, then evenly spaced hues."""
    ids = [c for c in cluster_ids if c >= 0]
    colors = {}
    for i, c in enumerate(ids):
        if len(ids) <= len(TAB20):
            colors[c] = TAB20[i]
        else:
            r, g, b = colorsys.hls_to_rgb((i * 0.618034) % 1.0, 0.5, 0.65)
            colors[c] = f"#{int(r * 255):02x}{int(g * 255):02x}{int(b * 255):02x}"
    colors[-1] = OUTLIER_COLOR
    return colors


def _decisions(run):
    """What the run decided for this corpus and why (run.json's language,
    semantics_choice, method_choice): ``[(name, value, why), ...]``."""
    out = []
    language = run.get("language")
    if language and language.get("how") != "list":
        out.append(("language", language.get("language") or "none",
                    f"{language.get('how')}; "
                    f"{language.get('n_stop_words', 0)} stop words"
                    + (f" ({language['stop_words']})" if language.get("stop_words") else "")))
    if run.get("semantics_choice"):
        choice = run["semantics_choice"]
        out.append(("semantics", choice.get("value"), choice.get("how")))
    if run.get("method_choice"):
        choice = run["method_choice"]
        out.append(("method", choice.get("method"), choice.get("why")))
    low, high = run.get("k_range") or (None, None)
    levels = (f"; levels k = {low}..{high} from the same fit (the level picker of the "
              "cluster table)" if low is not None and low < high else "")
    if run.get("k_selection") and run.get("k_range"):
        out.append(("k", run.get("k_recommended"),
                    f"recommended without labels (-k auto){levels}"))
    if run.get("merged_small_clusters"):
        out.append(("min cluster size", (run.get("cli_arguments") or {}).get(
                        "min_cluster_size"),
                    f"{len(run['merged_small_clusters'])} smaller cluster(s) of the fit merged "
                    f"into their nearest: {run.get('k_recommended')} clusters{levels}"))
    if run.get("edited_from"):
        out.append(("edited", f"from {run['edited_from']}", _edits_text(run)))
    return out


def _edits_text(run):
    """The edits of an edited run, in words: ``merge 0,2; split 4; ...``."""
    parts = [f"level {run['level']}"] if run.get("level") is not None else []
    for edit in run.get("edits") or []:
        parts += [f"merge {','.join(map(str, group))}" for group in edit.get("merge", [])]
        parts += [f"split {c}" for c in edit.get("split", [])]
        parts += [f"drop {c}" for c in edit.get("drop", [])]
        parts += [f"rename {c}={name}" for c, name in (edit.get("rename") or {}).items()]
        if edit.get("stop_words"):
            parts.append(f"{len(edit['stop_words'])} stop word(s) removed")
    return "; ".join(parts) + " (no refit: semnmf edit)" if parts else "semnmf edit"


def _consensus(value):
    if not value:
        return None
    return value if isinstance(value, str) else json.dumps(value)


def _npmi(corpus, topics, cluster_ids, n_words):
    """{cluster: NPMI of its top words} from the corpus' document co-occurrences."""
    if corpus is None or not topics:
        return {}
    order = [c for c in cluster_ids if topics.get(c)]
    values = npmi_coherence([[t for t, w in topics[c][:n_words] if w > 0] for c in order],
                            corpus.counts(), n_terms=max(n_words, 2),
                            vocabulary=[str(t) for t in corpus.vocabulary], average=False)
    return dict(zip(order, values.tolist()))


def _quality(npmi, topics, cluster_ids, recorded):
    """The mean NPMI and the topic diversity (Dieng et al. 2020) of the listed topics."""
    listed = [[t for t, w in topics[c] if w > 0] for c in cluster_ids if topics.get(c)]
    diversity_n = min(25, max((len(v) for v in listed), default=0))
    diversity = (topic_diversity([v[:diversity_n] for v in listed], diversity_n)
                 if diversity_n else None)
    finite = [v for v in npmi.values() if np.isfinite(v)]
    return Quality(has_npmi=bool(npmi), mean_npmi=float(np.mean(finite)) if finite else None,
                   diversity=diversity, diversity_n=diversity_n, recorded=recorded)


def _label_mix(labels, members, top):
    values, counts = np.unique(np.asarray(labels, dtype=object)[members].astype(str),
                               return_counts=True)
    order = np.argsort(-counts, kind="stable")[:top]
    total = counts.sum()
    return ", ".join(f"{values[i]} {counts[i] / total:.0%}" for i in order)


def _cluster(c, color, record, labels, topics, npmi, n_words):
    members = np.flatnonzero(record.clusters == c)
    cluster = Cluster(id=c, color=color, size=int(members.size),
                      share=members.size / max(len(record.ids), 1),
                      terms=list(topics.get(c, [])[:n_words]), npmi=npmi.get(c))
    if labels is not None and members.size:
        cluster.main_labels = _label_mix(labels, members, 2)
        cluster.label_mix = _label_mix(labels, members, 3)
    names = record.run.get("cluster_names") or []
    if c < len(names) and names[c]:
        cluster.name = str(names[c])
    seeded = (record.run.get("seed_words") or {}).get("topics") or []
    if 0 <= c < len(seeded):
        topic = seeded[c]
        cluster.seeded = (f"seeded: {' '.join(topic.get('words', []))} (moved "
                          f"{float(topic.get('drift', 0.0)):.2f}"
                          f"{'' if topic.get('in_top_words') else '; seeds left its top words'})")
    return cluster


def _cards(record, n_clusters, n_outliers, scores, quality, n_words):
    """The header numbers: (key, value text)."""
    run = record.run
    n_terms = (run.get("data") or {}).get("n_terms")
    cards = [("documents", f"{len(record.ids):,}"),
             ("terms", f"{n_terms:,}" if isinstance(n_terms, int) else "–"),
             ("leaves" if record.is_tree else "clusters", str(n_clusters))]
    if n_outliers:
        cards.append(("outliers" if record.is_tree else "unassigned", str(n_outliers)))
    if scores:
        cards += [("NMI", fmt(scores["nmi"])), ("ARI", fmt(scores["ari"])),
                  ("accuracy", fmt(scores["accuracy"]))]
    recorded = quality.recorded
    if quality.mean_npmi is not None or recorded.get("npmi") is not None:
        cards.append((f"NPMI (top {n_words})", fmt(quality.mean_npmi if quality.mean_npmi
                                                   is not None else recorded["npmi"])))
    if recorded.get("diversity") is not None:
        cards.append((f"diversity (top {recorded.get('diversity_top_n', '?')})",
                      fmt(recorded["diversity"], 3)))
    elif quality.diversity is not None:
        cards.append((f"diversity (top {quality.diversity_n})", fmt(quality.diversity, 3)))
    total_time = (run.get("timings_seconds") or {}).get("total")
    if total_time is not None:
        cards.append(("run time", f"{total_time:.1f} s"))
    return cards


def fmt(value, digits=4):
    """A number as the page writes it: ``digits`` decimals for a float, "–" for none."""
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


def _word_similarity(record, X, topics, vocabulary):
    """Each document's cosine similarity (TF-IDF row) to its cluster's term weights (the
    weights of topics.csv / tree.json over the corpus' vocabulary; a cluster without
    listed terms: its members' mean row). None without the TF-IDF rows."""
    if X is None:
        return None
    clusters = record.clusters
    from .map_layout import normalized_rows, unit_cluster_means

    ids = np.unique(clusters[clusters >= 0])
    if not ids.size:
        return None
    Xn = normalized_rows(X)
    means = unit_cluster_means(Xn, clusters, ids)
    index = {str(t): j for j, t in enumerate(vocabulary)} if vocabulary is not None else {}
    for row, c in enumerate(ids.tolist()):
        weights = np.zeros(X.shape[1])
        for term, w in (topics or {}).get(c, []):
            j = index.get(str(term))
            if j is not None and np.isfinite(w) and w > 0:
                weights[j] = w
        norm = np.linalg.norm(weights)
        if norm > 0:
            means[row] = weights / norm
    S = np.asarray(Xn @ means.T)
    column = np.searchsorted(ids, np.clip(clusters, ids[0], None))
    similarity = S[np.arange(len(clusters)), column]
    return np.where(clusters >= 0, similarity, 0.0)


def _ranking(record, X, topics, vocabulary):
    """The run's documents in the order the page lists them: by cluster (none last), then
    by strength (as the page shows it, 3 decimals), then by the cosine of their TF-IDF row
    to the cluster's term weights, then by id. Returns (order, what ranks them first,
    what breaks its ties, the score shown per document: the strength, else the cosine;
    None when nothing ranks them)."""
    n = len(record.ids)
    clusters = record.clusters
    similarity = _word_similarity(record, X, topics, vocabulary)
    strength = record.strength
    has_strength = strength is not None and bool(np.isfinite(strength).any())
    words = "cosine of the TF-IDF row to the cluster's word weights"
    shown = strength if has_strength else similarity
    if has_strength:
        primary = np.round(np.nan_to_num(strength, nan=-np.inf), 3)
        how = record.strength_name
        then = "equal values (to the 3 decimals shown) by " + (
            f"the {words}, then by id" if similarity is not None else "id")
    elif similarity is not None:
        primary, how, then = similarity, words, "ties by id"
    else:
        primary, how, then = np.zeros(n), None, None
    secondary = similarity if (has_strength and similarity is not None) else np.zeros(n)
    id_rank = np.empty(n, dtype=np.int64)
    id_rank[sorted(range(n), key=record.ids.__getitem__)] = np.arange(n)
    cluster_key = np.where(clusters < 0, np.iinfo(np.int64).max, clusters)
    order = np.lexsort((id_rank, -secondary, -primary, cluster_key))
    return order, how, then, shown


def _add_documents(clusters, record, order, score, texts, labels, n_documents,
                   excerpt_chars):
    """Each cluster's representative documents: the first members of ``order``, a text
    repeated in the cluster shown once; ``score``, what the page shows beside each."""
    by_cluster = {}
    for i in order.tolist():
        by_cluster.setdefault(int(record.clusters[i]), []).append(i)
    for cluster in clusters:
        seen = set()
        for i in by_cluster.get(cluster.id, []):
            if len(cluster.documents) == n_documents:
                break
            if texts is not None:
                key = " ".join(str(texts[i]).split())
                if key in seen:
                    continue
                seen.add(key)
            cluster.documents.append(Document(
                id=record.ids[i], label=labels[i] if labels is not None else None,
                score=float(score[i]) if score is not None else float("nan"),
                excerpt=_excerpt(texts[i], excerpt_chars) if texts is not None else None))


def _document_list(record, order, texts, labels, chars):
    """Every document, in the list's order, for the page's script."""
    rows = order.tolist()
    strength = record.strength
    return DocumentList(
        order=order, ids=[record.ids[i] for i in rows],
        clusters=[int(record.clusters[i]) for i in rows],
        strength=([None if not np.isfinite(strength[i]) else round(float(strength[i]), 3)
                   for i in rows] if strength is not None else None),
        labels=[str(labels[i]) for i in rows] if labels is not None else None,
        excerpts=[_excerpt(texts[i], chars) for i in rows] if texts is not None else None,
        excerpt_chars=chars, search_chars=search_limit(len(rows)),
        search=([_search_words(texts[i], search_limit(len(rows))) for i in rows]
                if texts is not None else None))


def search_limit(n_documents):
    """The characters of each document's search index: :data:`SEARCH_CHARS`, less when
    ``n_documents`` of them would pass :data:`SEARCH_TOTAL` (the list's excerpt of each
    document is searched too)."""
    return min(SEARCH_CHARS, SEARCH_TOTAL // max(n_documents, 1))


def _search_words(text, limit=SEARCH_CHARS):
    """The distinct words of ``text``, lowercase, in the order they first occur, joined by
    spaces, at most ``limit`` characters: what the report's search looks in."""
    seen, size = {}, 0
    for word in _WORD.findall(str(text).lower()):
        if word not in seen:
            size += len(word) + 1
            if size > limit:
                break
            seen[word] = None
    return " ".join(seen)


def _document_map(X, clusters, max_points, colors, layout="tsne", seed=0):
    """The map of (a sample of at most ``max_points``) documents by the layout ``layout``
    of :mod:`.map_layout`."""
    from .map_layout import layout as lay_out

    n = X.shape[0]
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(n, size=max_points, replace=False)) if n > max_points \
        else np.arange(n)
    if np.unique(clusters[clusters >= 0]).size < 2:
        return None
    coords, anchors = lay_out(X, clusters, rows, layout, seed=seed)
    return DocumentMap(rows=rows, coords=coords, clusters=clusters[rows], anchors=anchors,
                       colors=colors, n_shown=len(rows), n_documents=n, layout=layout)


def _tree(tree, colors, n_words):
    """The topic tree from tree.json as :class:`TreeNode` (None: no root node)."""
    nodes = {n["id"]: n for n in tree.get("nodes", [])}
    if 0 not in nodes:
        return None

    def build(node_id):
        node = nodes[node_id]
        leaf = bool(node.get("leaf") or not node.get("children"))
        children = [] if leaf else [build(child) for child in node["children"]]
        label = node.get("label")
        return TreeNode(
            id=node_id, label=label, leaf=leaf, n_documents=node.get("n_documents", "?"),
            n_leaves=sum(c.n_leaves for c in children) if children else 1,
            n_outliers=len(node.get("outliers") or []), depth=node.get("depth", 0),
            words=[t["term"] for t in node.get("top_terms", [])[:n_words]],
            color=colors.get(label, "#999") if label is not None else "#999",
            children=children)

    return build(0)


def _curves(run, n_clusters):
    """The -k auto selection curve and the NMI by number of leaves, when the run has them."""
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
        name = (selection.get("name") or selection.get("criterion_name")
                or (selection["criterion"] if isinstance(selection.get("criterion"), str)
                    else None) or "criterion")
        curves.append(Curve(
            title=f"-k auto: {name} by number of clusters", x=list(selection["candidates"]),
            y=[float("nan") if v is None else float(v) for v in values],
            xlabel="k (number of clusters)", ylabel=str(name),
            chosen=selection.get("chosen", selection.get("k", n_clusters)), salt="ksel"))
    by_leaves = run.get("nmi_by_number_of_leaves")
    if isinstance(by_leaves, dict) and by_leaves:
        curves.append(Curve(
            title="NMI by number of leaves", x=[int(k) for k in by_leaves],
            y=[float("nan") if v is None else float(v) for v in by_leaves.values()],
            xlabel="leaves", ylabel="NMI", salt="leaves"))
    return curves


def _timeline(record, colors, time):
    """The topics-over-time view of the run's ``topics_over_time.csv``, or None."""
    rows = record.timeline
    if not rows:
        return None
    periods = sorted({row["period"] for row in rows})
    position = {p: i for i, p in enumerate(periods)}
    shares = {}
    for row in rows:
        c = int(row["cluster"])
        shares.setdefault(c, [0.0] * len(periods))[position[row["period"]]] = float(row["share"])
    return Timeline(periods=periods, shares=dict(sorted(shares.items())),
                    colors={c: colors.get(c, "#777777") for c in shares},
                    period=time.get("period"), n_undated=int(time.get("n_undated") or 0),
                    by_class=os.path.isfile(os.path.join(record.run_dir,
                                                         "topics_over_time_by_class.csv")),
                    names=_names(record))


def _names(record):
    """``{cluster: name}`` of the clusters ``semnmf edit --rename`` named."""
    return {c: str(name) for c, name in enumerate(record.run.get("cluster_names") or [])
            if name}


def _label_table(clusters, labels, colors, scores, n_outliers, outlier_name):
    label_values = sorted(set(labels))
    lab = np.asarray(labels, dtype=object)
    rows = []
    for c in sorted(set(clusters.tolist())):
        counts = [int(np.sum((clusters == c) & (lab == v))) for v in label_values]
        rows.append((outlier_name if c < 0 else str(c), colors.get(c, "#999"), counts,
                     sum(counts)))
    totals = [sum(row[2][j] for row in rows) for j in range(len(label_values))]
    return LabelTable(scores=scores, n_outliers=n_outliers, labels=label_values, rows=rows,
                      totals=totals)


def _ensemble_runs(partitions, clusters):
    """(run, NMI with the final partition, number of clusters) per kept run."""
    if partitions is None:
        return None
    from ..metrics import nmi

    seeds, P = partitions
    return [(s, nmi(P[:, j], clusters), len(np.unique(P[:, j]))) for j, s in enumerate(seeds)]


def _run_details(run):
    """The run's record, parameters, timings and other fields."""
    record = [(key, fmt(run[key])) for key in (
        "method", "estimator", "source", "corpus", "objective", "n_iter", "effective_lambda",
        "graph_lambda", "n_leaves", "n_outliers", "n_factorizations") if run.get(key) is not None]
    for group in ("data", "context"):  # as JSON writes them (null, not Python's None)
        record += [(f"{group}.{k}", v if isinstance(v, str) else json.dumps(v, default=str))
                   for k, v in (run.get(group) or {}).items()]
    return RunDetails(
        record=record,
        parameters=[(k, v if isinstance(v, str) else json.dumps(v))
                    for k, v in (run.get("parameters") or {}).items()],
        timings=[(k, v) for k, v in (run.get("timings_seconds") or {}).items()
                 if isinstance(v, (int, float))],
        extra=[(k, json.dumps(v, indent=1, default=str)) for k, v in run.items()
               if k in ("cli_arguments", "consensus", "refine", "semantics", "k_selection")
               and v is not None])
