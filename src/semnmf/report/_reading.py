"""The report's first stage: a run folder read into a typed :class:`RunRecord`, and the
run's corpus found again (:func:`find_corpus`).

Only reading and checking happen here; what the page shows is computed in :mod:`._page`.
"""

import csv
import json
import os
from dataclasses import dataclass

import numpy as np

__all__ = ["RunRecord", "read_run", "find_corpus"]

# the per-document strength of its cluster in assignments.csv: "strength", or "membership"
# as written before the column was renamed (both are read; "strength" first)
STRENGTH_COLUMNS = ("strength", "membership")


@dataclass(frozen=True)
class RunRecord:
    """The files of a run folder ``run_dir``: ``run`` (run.json as written), from
    assignments.csv the document ``ids`` (row numbers without a ``doc`` column), their
    ``clusters`` (-1 for none), true ``labels`` (or None) and ``strength`` (NaN where not a
    number; ``strength_name``: the column it was read from, ``membership`` in older
    folders), ``topics`` (``{cluster: [(term, weight), ...]}``, best first: the leaves' of
    tree.json, else topics.csv), the ``tree`` (tree.json or None) and ``partitions``
    (``(run names, n_documents x n_runs array)`` of partitions.csv, or None)."""

    run_dir: str
    run: dict
    ids: list
    clusters: np.ndarray
    labels: list | None = None
    strength: np.ndarray | None = None
    strength_name: str | None = None
    topics: dict | None = None
    tree: dict | None = None
    partitions: tuple | None = None
    timeline: list | None = None  # rows of topics_over_time.csv
    levels: dict | None = None  # {k: clusters} of levels.csv (-k auto)

    @property
    def is_tree(self):
        return self.tree is not None

    @property
    def source(self):
        return self.run.get("source")


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
    """The files of a run folder as a :class:`RunRecord` (run.json and assignments.csv at
    least; topics.csv, tree.json and partitions.csv when present). A missing or damaged
    file is a ``ValueError`` naming it."""
    run_dir = os.fspath(run_dir)
    run_path = os.path.join(run_dir, "run.json")
    assignments_path = os.path.join(run_dir, "assignments.csv")
    for path in (run_path, assignments_path):
        if not os.path.isfile(path):
            raise ValueError(f"{run_dir} is not a run folder: {os.path.basename(path)} is "
                             "missing (write one with semnmf cluster or semnmf tree).")
    run = _read_json(run_path)
    assignments = _read_assignments(assignments_path, (run.get("data") or {}).get("n_documents"))
    tree = None
    tree_path = os.path.join(run_dir, "tree.json")
    if os.path.isfile(tree_path):
        tree = _read_json(tree_path)
    topics = _tree_topics(tree) if tree is not None else {}
    topics_path = os.path.join(run_dir, "topics.csv")
    if not topics and os.path.isfile(topics_path):
        topics = _read_topics(topics_path)
    timeline_path = os.path.join(run_dir, "topics_over_time.csv")
    return RunRecord(run_dir=run_dir, run=run, topics=topics, tree=tree,
                     timeline=_read_timeline(timeline_path),
                     partitions=_read_partitions(os.path.join(run_dir, "partitions.csv")),
                     levels=_read_levels(os.path.join(run_dir, "levels.csv"),
                                         assignments["ids"]),
                     **assignments)


def _read_levels(path, ids):
    """levels.csv as ``{k: clusters}`` (None without one); a file whose documents are not
    assignments.csv's ``ids``, in their order, is a ValueError naming it."""
    from .results import read_levels

    try:
        read = read_levels(path)
    except (ValueError, IndexError) as exc:
        raise ValueError(f"{path} is damaged ({exc}): run the command again.") from None
    if read is None:
        return None
    if read[0] != [str(i) for i in ids]:
        raise ValueError(f"{path} does not list the documents of assignments.csv: run the "
                         "command again.")
    return read[1]


def _read_assignments(path, expected=None):
    """The columns of assignments.csv: ids, clusters, labels, strength (and its name)."""
    rows = _read_csv(path)
    if not rows or "cluster" not in rows[0]:
        raise ValueError(f"{path} has no 'cluster' column.")
    header, rows = rows[0], rows[1:]
    col = {name: i for i, name in enumerate(header)}
    clusters = []
    for number, r in enumerate(rows, 2):
        try:
            if len(r) != len(header):
                raise ValueError
            clusters.append(int(r[col["cluster"]]))
        except ValueError:
            raise ValueError(f"{path}, line {number}: {len(r)} fields where the "
                             f"header has {len(header)}, or a cluster that is not a whole "
                             "number: the file is damaged; run the command again.") from None
    if isinstance(expected, int) and expected != len(rows):
        raise ValueError(f"{path} has {len(rows)} rows but run.json says the run "
                         f"had {expected} documents: the file is damaged or from another "
                         "run; run the command again.")
    strength_name = next((name for name in STRENGTH_COLUMNS if name in col), None)
    return {
        "ids": [r[col["doc"]] if "doc" in col else str(i) for i, r in enumerate(rows)],
        "clusters": np.array(clusters, dtype=np.int64),
        "labels": [r[col["label"]] for r in rows] if "label" in col else None,
        "strength": (np.array([_float(r[col[strength_name]]) for r in rows])
                     if strength_name else None),
        "strength_name": strength_name,
    }


def _tree_topics(tree):
    """{leaf label: [(term, weight), ...]} from tree.json's leaves."""
    return {int(node["label"]): [(t["term"], float(t["weight"]))
                                 for t in node.get("top_terms", [])]
            for node in tree.get("nodes", [])
            if node.get("leaf") and node.get("label") is not None}


def _read_topics(path):
    """{cluster: [(term, weight), ...]} from topics.csv, in rank order."""
    rows = _read_csv(path)
    col = {name: i for i, name in enumerate(rows[0])}
    ranked = {}
    for r in rows[1:]:
        c = int(r[col["cluster"]])
        rank = int(r[col["rank"]]) if "rank" in col else len(ranked.get(c, []))
        ranked.setdefault(c, []).append((rank, r[col["term"]], _float(r[col["weight"]])))
    return {c: [(t, w) for _, t, w in sorted(v)] for c, v in ranked.items()}


def _read_timeline(path):
    """The rows of topics_over_time.csv as dicts, or None."""
    if not os.path.isfile(path):
        return None
    rows = _read_csv(path)
    return [dict(zip(rows[0], r)) for r in rows[1:]] if rows else None


def _read_partitions(path):
    """(run names, n_documents x n_runs array) from partitions.csv, or None."""
    if not os.path.isfile(path):
        return None
    rows = _read_csv(path)
    if len(rows) <= 1:
        return None
    return rows[0][1:], np.array([[int(v) for v in r[1:]] for r in rows[1:]])


# -- the run's corpus ------------------------------------------------------------------------

def find_corpus(record, corpus=None, load_texts=True):
    """``(corpus, note)``: the run's corpus, or None and why the page has no texts.

    ``corpus`` given: it is used when its ids are the run's. Otherwise, with
    ``load_texts``, the corpus is re-read from run.json's source with the run's input
    options."""
    if corpus is not None:
        corpus, note = _check_corpus(corpus, record.ids, "the corpus given")
    elif load_texts:
        corpus, note = _load_corpus(record.run, record.ids)
    else:
        return None, "the corpus was not read"
    if corpus is not None and corpus.texts is None:
        note = "the corpus has no raw texts (a count matrix only)"
    return corpus, note


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
    language = args.get("language")  # as the run: a language, auto (None) or none
    options["stop_words"] = language if isinstance(language, str) and (
        language in ("auto", "english", "none") or len(language) == 2) else "auto"
    try:
        corpus = load_dataset(source, text_column=args.get("text_column"),
                              label_column=args.get("label_column"),
                              id_column=args.get("id_column"),
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
