"""The result files of a clustering (``docs/guide/outputs.md``), writable from Python.

:func:`write_results` writes a flat clustering's folder (``assignments.csv``,
``topics.csv``, ``run.json``, ``partitions.csv`` for a cluster ensemble, and the saved
model ``model/`` that ``semnmf assign`` uses), :func:`write_tree_results` a topic tree's,
:func:`write_assign_results` the folder of ``semnmf assign``; :func:`run_record` builds
the common part of a ``run.json``. Every file is written atomically.
"""

import csv
import os
import platform
import time

import numpy as np

from .._utils.io import atomic_write, write_json
from .._utils.renamed import renamed
from .._utils.version import __version__
from ..metrics import top_terms

__all__ = ["write_results", "write_tree_results", "write_assign_results",
           "write_assignments", "write_topics", "write_partitions", "run_record",
           "assign_record", "data_record", "context_record", "versions", "empty_clusters",
           "n_classes"]

TOPICS_HEADER = ["cluster", "rank", "term", "weight"]


def _stamp(timings):
    """The closing fields of a run record: timings (seconds), threads, versions, time."""
    from .._utils.parallel import n_threads

    return {"timings_seconds": {k: round(v, 4) for k, v in (timings or {}).items()},
            "threads": n_threads(), "versions": versions(),
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z")}


def versions():
    """The versions a run record names: semnmf, Python, numpy."""
    return {"semnmf": __version__, "python": platform.python_version(), "numpy": np.__version__}


def data_record(corpus, X, weighting=None):
    """The ``data`` entry of a run record: shape, non-zeros, X's dtype, weighting,
    labelled."""
    return {"n_documents": int(X.shape[0]), "n_terms": int(X.shape[1]), "nnz": int(X.nnz),
            "dtype": str(X.dtype), "weighting": weighting,
            "labelled": corpus.labels is not None}


def context_record(M, context, *, window=None, association=None, min_count=None, top_k=None):
    """The ``context`` entry of a run record (None without a word-context matrix)."""
    if M is None:
        return None
    return {"context": context, "window": window if context == "window" else None,
            "association": association, "min_count": min_count, "top_k": top_k,
            "shape": list(M.shape), "nnz": int(M.nnz)}


def n_classes(true_labels):
    """Number of distinct labels among the labelled documents (None and "" are not
    labels); None without labels."""
    if true_labels is None:
        return None
    return len({label for label in true_labels if label is not None and label != ""})


@renamed("n_clusters", "n_components")
def empty_clusters(labels, n_components):
    """The clusters of 0..n_components-1 that no document got."""
    if n_components is None:
        return []
    present = set(np.asarray(labels).tolist())
    return [c for c in range(int(n_components)) if c not in present]


def _finite_or_none(value):
    """A float for JSON, or None (null) when missing or not finite: NaN is not JSON."""
    if value is None:
        return None
    value = float(value)
    return value if np.isfinite(value) else None


def _describe(value):
    """A parameter as run.json shows it: a start matrix (``init=(Z, W)``) by its shape."""
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return f"array {tuple(int(n) for n in value.shape)}"
    if isinstance(value, tuple) and any(hasattr(v, "shape") for v in value):
        return [_describe(v) for v in value]
    return value


@renamed("n_clusters", "n_components")
def run_record(model, labels, *, method, corpus=None, X=None, source=None, weighting=None,
               word_context=True, cli_arguments=None, context=None, scores=None, extra=None,
               timings=None, n_components=None):
    """The ``run.json`` record of one clustering.

    Parameters
    ----------
    model : estimator or None
        The estimator (fitted, or the prototype of an ensemble): its class, parameters,
        ``objective_``, ``lambda_``, ``graph_lambda_`` and ``n_iter_`` when present; None
        when no estimator was fitted.
    labels : array-like
        The final partition (cluster sizes are recorded).
    method : str
        The method's name ("snmf", "nmf", ...).
    word_context : bool, default=True
        Whether the method has a word-context term (``effective_lambda`` recorded).
    corpus, X, source, weighting : the data (``corpus.name``, ``data`` entry).
    cli_arguments, context, scores, extra, timings : recorded as given (``extra``'s keys
        at the top level; ``timings`` in seconds, rounded to 0.1 ms).
    n_components : int, optional
        The number of clusters asked for (default ``model.n_components``):
        ``empty_clusters`` lists those no document got.
    """
    params = {} if model is None else {
        k: _describe(v) for k, v in model.get_params().items()}
    lam = getattr(model, "lambda_", None) if word_context else None
    clusters, sizes = np.unique(np.asarray(labels), return_counts=True)
    return {
        "method": method,
        "estimator": None if model is None else type(model).__name__,
        "source": source,
        # the source as an absolute path, so that a report made from another folder
        # finds the texts (None when the source is not a path: "bbc", a list of texts)
        "source_path": (os.path.abspath(source) if isinstance(source, str)
                        and os.path.exists(source) else None),
        "corpus": None if corpus is None else corpus.name,
        "parameters": params,
        # the command line's private notes (names starting with "_") are not arguments
        "cli_arguments": None if cli_arguments is None else {
            key: value for key, value in cli_arguments.items() if not key.startswith("_")},
        "context": context,
        "data": None if X is None else data_record(corpus, X, weighting),
        "cluster_sizes": {str(c): int(n) for c, n in zip(clusters, sizes)},
        "empty_clusters": empty_clusters(labels, n_components if n_components is not None
                                         else getattr(model, "n_components", None)),
        "n_classes": None if corpus is None else n_classes(corpus.labels),
        "scores": scores,
        "objective": _finite_or_none(getattr(model, "objective_", None)),
        "effective_lambda": _finite_or_none(lam),
        "graph_lambda": _finite_or_none(getattr(model, "graph_lambda_", None)),
        "n_iter": (int(model.n_iter_) if getattr(model, "n_iter_", None) is not None
                   else None),                   # None: no iterations (a consensus)
        **(extra or {}),
        **_stamp(timings),
    }


def write_assignments(path, ids, labels, true_labels=None, strengths=None):
    """``assignments.csv``: ``doc``, ``cluster`` (-1: no cluster), ``strength`` when
    ``strengths`` is given (the strength of the document's cluster, see
    :mod:`semnmf.pipelines.saved`), and ``label`` when ``true_labels`` is given."""
    def write(f):
        writer = csv.writer(f)
        writer.writerow(["doc", "cluster"] + (["strength"] if strengths is not None else [])
                        + (["label"] if true_labels is not None else []))
        for i, cluster in enumerate(labels):
            row = [ids[i], int(cluster)]
            if strengths is not None:
                row.append(f"{float(strengths[i]):.6g}")
            if true_labels is not None:
                row.append(true_labels[i])
            writer.writerow(row)

    atomic_write(path, write)


def write_levels(path, ids, levels):
    """``levels.csv``: ``doc``, then one column ``k<K>`` per level (the document's cluster
    at K clusters; -1: no cluster), coarsest first. ``levels`` maps K to labels."""
    ks = sorted(levels)
    _write_columns(path, ids, [f"k{k}" for k in ks], [np.asarray(levels[k]) for k in ks])


def _write_columns(path, ids, names, columns):
    """A CSV of ``doc`` and one integer column per name (``columns``: one array each)."""
    def write(f):
        writer = csv.writer(f)
        writer.writerow(["doc"] + names)
        for i, doc in enumerate(ids):
            writer.writerow([doc] + [int(column[i]) for column in columns])

    atomic_write(path, write)


def read_levels(path):
    """``(ids, {K: labels})`` of a run folder's ``levels.csv``, or None without one."""
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    return [row[0] for row in body], {
        int(name[1:]): np.array([int(row[j]) for row in body], dtype=np.int64)
        for j, name in enumerate(header) if j > 0}


def write_topics(path, components, vocabulary, n_top=20):
    """``topics.csv``: the ``n_top`` heaviest terms of each row of ``components``
    (``cluster``, ``rank`` from 1, ``term``, ``weight``); terms of weight 0 are not
    listed (a cluster with fewer positive terms has fewer rows, an empty one none)."""
    def write(f):
        writer = csv.writer(f)
        writer.writerow(TOPICS_HEADER)
        for cluster, terms in enumerate(top_terms(components, vocabulary, n_top)):
            for rank, (term, weight) in enumerate(terms, 1):
                if not weight > 0:
                    break
                writer.writerow([cluster, rank, term, f"{weight:.6g}"])

    atomic_write(path, write)


def write_partitions(path, ids, partitions, seeds):
    """``partitions.csv``: ``doc`` and one column ``seed_<s>`` of labels per run."""
    _write_columns(path, ids, [f"seed_{s}" for s in seeds], list(np.asarray(partitions).T))


def write_results(out_dir, corpus, labels, components, record, *, partitions=None,
                  partition_seeds=None, n_top=20, strengths=None, model=None):
    """Write a clustering's result folder (created if missing) and return its files.

    Parameters
    ----------
    out_dir : str
    corpus : Corpus
        Document ids, vocabulary and (when known) labels.
    labels : array-like of shape (n_documents,)
    components : array of shape (n_clusters, n_terms)
        Term weights of each cluster (``components_``, cluster centres or means).
    record : dict
        The ``run.json`` content (see :func:`run_record`); NaN is written as null.
    partitions : array of shape (n_documents, n_runs), optional
        The runs of a cluster ensemble (``partitions.csv``); ``partition_seeds`` names
        its columns.
    n_top : int, default=20
        Terms per cluster in ``topics.csv``.
    strengths : array of shape (n_documents,), optional
        The ``strength`` column of ``assignments.csv`` (each document's strength).
    model : semnmf.SavedModel, optional
        Saved (atomically) as ``model/``.
    """
    os.makedirs(out_dir, exist_ok=True)
    files = []
    if partitions is not None:
        seeds = partition_seeds if partition_seeds is not None else range(np.shape(partitions)[1])
        write_partitions(os.path.join(out_dir, "partitions.csv"), corpus.ids, partitions, seeds)
        files.append("partitions.csv")
    write_assignments(os.path.join(out_dir, "assignments.csv"), corpus.ids, labels,
                      corpus.labels, strengths)
    write_topics(os.path.join(out_dir, "topics.csv"), components, corpus.vocabulary, n_top)
    write_json(os.path.join(out_dir, "run.json"), record)
    files += ["assignments.csv", "topics.csv", "run.json"]
    if model is not None:
        model.save(os.path.join(out_dir, "model"))
        files.append("model/")
    return files


def write_tree_results(out_dir, model, corpus, record, *, n_top=20, n_terms=6, title=None,
                       strengths=None, saved_model=None):
    """Write a topic tree's result folder: ``tree.json`` (the tree with each node's
    ``n_top`` terms), ``assignments.csv`` (``model.labels_``: each document's leaf by the
    model's ``assign_labels``, -1 for no term and, by the tree's rule, for outliers; with
    ``strengths`` when given), ``tree.png`` and ``tree.svg``
    (:func:`semnmf.report.plot_tree`, ``n_terms`` per node), ``run.json`` (``record``)
    and, with ``saved_model``, ``model/``. Returns the file names."""
    from .tree import plot_tree, save_figure

    os.makedirs(out_dir, exist_ok=True)
    tree = model.to_dict(corpus.vocabulary, n_top, document_ids=list(corpus.ids))
    write_json(os.path.join(out_dir, "tree.json"), tree, indent=1)
    write_assignments(os.path.join(out_dir, "assignments.csv"), corpus.ids, model.labels_,
                      corpus.labels, strengths)
    figure = plot_tree(model, corpus.vocabulary, n_terms=n_terms, title=title)
    for ext in ("png", "svg"):
        save_figure(figure, os.path.join(out_dir, f"tree.{ext}"))
    write_json(os.path.join(out_dir, "run.json"), record)
    files = ["tree.json", "assignments.csv", "tree.png", "tree.svg", "run.json"]
    if saved_model is not None:
        saved_model.save(os.path.join(out_dir, "model"))
        files.append("model/")
    return files


def assign_record(model, labels, *, corpus, X, source, scores=None, timings=None):
    """The ``run.json`` of ``semnmf assign``: the model used (path, format, method,
    estimator), the source and its data, cluster sizes, empty clusters, scores when the
    documents have labels, threads, timings and versions."""
    info = model.info
    estimator = info.get("estimator") or {}
    clusters, sizes = np.unique(np.asarray(labels), return_counts=True)
    return {
        "command": "assign",
        "model": {"path": info.get("path"), "format": info.get("format"),
                  "format_version": info.get("format_version"),
                  "semnmf_version": info.get("semnmf_version"), "created": info.get("created"),
                  "kind": model.kind, "method": info.get("method"),
                  "estimator": estimator.get("class"), "n_clusters": model.n_clusters,
                  "assignment": info.get("assignment"),
                  "refine": info.get("refine")},
        "source": source,
        "corpus": corpus.name,
        "data": data_record(corpus, X, model.vectorizer.weighting),
        "n_documents_without_known_terms": int(np.count_nonzero(np.diff(X.indptr) == 0)),
        "cluster_sizes": {str(c): int(n) for c, n in zip(clusters, sizes)},
        "empty_clusters": empty_clusters(labels, model.n_clusters),
        "n_classes": n_classes(corpus.labels),
        "scores": scores,
        **_stamp(timings),
    }


def write_assign_results(out_dir, corpus, labels, strengths, model, record, *, n_top=20):
    """Write the folder of ``semnmf assign``: ``assignments.csv`` (with ``strength``),
    ``topics.csv`` (the model's topics) and ``run.json`` (``record``). Returns the file
    names."""
    os.makedirs(out_dir, exist_ok=True)
    write_assignments(os.path.join(out_dir, "assignments.csv"), corpus.ids, labels,
                      corpus.labels, strengths)
    write_topics(os.path.join(out_dir, "topics.csv"), model.topics,
                 model.vectorizer.vocabulary, n_top)
    write_json(os.path.join(out_dir, "run.json"), record)
    return ["assignments.csv", "topics.csv", "run.json"]
