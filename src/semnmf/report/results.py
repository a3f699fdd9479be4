"""The result files of a clustering (DESIGN.md, "CLI results"), writable from Python.

:func:`write_results` writes a flat clustering's folder: ``assignments.csv`` (``doc``,
``cluster``, and ``label`` when labels are known), ``topics.csv`` (``cluster``, ``rank``,
``term``, ``weight``), ``run.json`` (method, every parameter, data shape, scores,
timings, objective, iterations, versions) and, for a cluster ensemble,
``partitions.csv`` (one column of labels per kept run). :func:`write_tree_results`
writes a topic tree's folder: ``tree.json``, ``assignments.csv``, ``tree.png``,
``tree.svg`` and ``run.json``. :func:`run_record` builds the common part of a
``run.json``. Every file is written atomically (:func:`semnmf._utils.io.atomic_write`).
"""

import csv
import os
import platform
import time

import numpy as np

from .._utils.io import atomic_write, write_json
from .._utils.version import __version__
from ..metrics import top_terms

__all__ = ["write_results", "write_tree_results", "write_assignments", "write_topics",
           "write_partitions", "run_record", "data_record", "context_record", "versions"]

TOPICS_HEADER = ["cluster", "rank", "term", "weight"]


def versions():
    """The versions a run record names: semnmf, Python, numpy."""
    return {"semnmf": __version__, "python": platform.python_version(), "numpy": np.__version__}


def data_record(corpus, X, weighting=None):
    """The ``data`` entry of a run record: shape, non-zeros, weighting, labelled."""
    return {"n_documents": int(X.shape[0]), "n_terms": int(X.shape[1]), "nnz": int(X.nnz),
            "weighting": weighting, "labelled": corpus.labels is not None}


def context_record(M, context, *, window=None, association=None, min_count=None, top_k=None):
    """The ``context`` entry of a run record (None without a word-context matrix)."""
    if M is None:
        return None
    return {"context": context, "window": window if context == "window" else None,
            "association": association, "min_count": min_count, "top_k": top_k,
            "shape": list(M.shape), "nnz": int(M.nnz)}


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


def run_record(model, labels, *, method, corpus=None, X=None, source=None, weighting=None,
               word_context=True, cli_arguments=None, context=None, scores=None, extra=None,
               timings=None):
    """The ``run.json`` record of one clustering.

    Parameters
    ----------
    model : estimator
        The estimator (fitted, or the prototype of an ensemble): its class, parameters
        (without the start matrices), ``objective_``, ``lambda_``, ``graph_lambda_`` and
        ``n_iter_`` are recorded when present.
    labels : array-like
        The final partition (cluster sizes are recorded).
    method : str
        The method's name ("snmf", "nmf", ...).
    word_context : bool, default=True
        Whether the method has a word-context term: ``effective_lambda`` is its weight
        as used (``model.lambda_``), else None. ``graph_lambda`` is the graph weight used
        (``model.graph_lambda_``) for methods with a graph term, else None.
    corpus, X, source, weighting : the data (``corpus.name``, ``data`` entry).
    cli_arguments, context, scores, extra, timings : recorded as given (``extra``'s keys
        at the top level; ``timings`` in seconds, rounded to 0.1 ms).
    """
    params = {k: _describe(v) for k, v in model.get_params().items()
              if k not in ("Z_init", "W_init", "H_init")}
    lam = getattr(model, "lambda_", None) if word_context else None
    clusters, sizes = np.unique(np.asarray(labels), return_counts=True)
    return {
        "method": method,
        "estimator": type(model).__name__,
        "source": source,
        "corpus": None if corpus is None else corpus.name,
        "parameters": params,
        "cli_arguments": cli_arguments,
        "context": context,
        "data": None if X is None else data_record(corpus, X, weighting),
        "cluster_sizes": {str(c): int(n) for c, n in zip(clusters, sizes)},
        "scores": scores,
        "objective": _finite_or_none(getattr(model, "objective_", None)),
        "effective_lambda": _finite_or_none(lam),
        "graph_lambda": _finite_or_none(getattr(model, "graph_lambda_", None)),
        "n_iter": int(getattr(model, "n_iter_", 0) or 0),
        **(extra or {}),
        "timings_seconds": {k: round(v, 4) for k, v in (timings or {}).items()},
        "versions": versions(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def write_assignments(path, ids, labels, true_labels=None):
    """``assignments.csv``: ``doc``, ``cluster`` (-1: no cluster), and ``label`` when
    ``true_labels`` is given."""
    def write(f):
        writer = csv.writer(f)
        writer.writerow(["doc", "cluster"] + (["label"] if true_labels is not None else []))
        for i, cluster in enumerate(labels):
            row = [ids[i], int(cluster)]
            if true_labels is not None:
                row.append(true_labels[i])
            writer.writerow(row)

    atomic_write(path, write)


def write_topics(path, components, vocabulary, n_top=20):
    """``topics.csv``: the ``n_top`` heaviest terms of each row of ``components``
    (``cluster``, ``rank`` from 1, ``term``, ``weight``)."""
    def write(f):
        writer = csv.writer(f)
        writer.writerow(TOPICS_HEADER)
        for cluster, terms in enumerate(top_terms(components, vocabulary, n_top)):
            for rank, (term, weight) in enumerate(terms, 1):
                writer.writerow([cluster, rank, term, f"{weight:.6g}"])

    atomic_write(path, write)


def write_partitions(path, ids, partitions, seeds):
    """``partitions.csv``: ``doc`` and one column ``seed_<s>`` of labels per run."""
    partitions = np.asarray(partitions)

    def write(f):
        writer = csv.writer(f)
        writer.writerow(["doc"] + [f"seed_{s}" for s in seeds])
        for i in range(len(ids)):
            writer.writerow([ids[i]] + [int(v) for v in partitions[i]])

    atomic_write(path, write)


def write_results(out_dir, corpus, labels, components, record, *, partitions=None,
                  partition_seeds=None, n_top=20):
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
    """
    os.makedirs(out_dir, exist_ok=True)
    files = []
    if partitions is not None:
        seeds = partition_seeds if partition_seeds is not None else range(np.shape(partitions)[1])
        write_partitions(os.path.join(out_dir, "partitions.csv"), corpus.ids, partitions, seeds)
        files.append("partitions.csv")
    write_assignments(os.path.join(out_dir, "assignments.csv"), corpus.ids, labels,
                      corpus.labels)
    write_topics(os.path.join(out_dir, "topics.csv"), components, corpus.vocabulary, n_top)
    write_json(os.path.join(out_dir, "run.json"), record)
    return files + ["assignments.csv", "topics.csv", "run.json"]


def write_tree_results(out_dir, model, corpus, record, *, n_top=20, n_terms=6, title=None):
    """Write a topic tree's result folder: ``tree.json`` (the tree with each node's
    ``n_top`` terms), ``assignments.csv`` (leaf of each document, -1 for outliers),
    ``tree.png`` and ``tree.svg`` (:func:`semnmf.report.plot_tree`, ``n_terms`` per node)
    and ``run.json`` (``record``). Returns the file names."""
    from .tree import plot_tree, save_figure

    os.makedirs(out_dir, exist_ok=True)
    tree = model.to_dict(corpus.vocabulary, n_top, document_ids=list(corpus.ids))
    write_json(os.path.join(out_dir, "tree.json"), tree, indent=1)
    write_assignments(os.path.join(out_dir, "assignments.csv"), corpus.ids, model.labels_,
                      corpus.labels)
    figure = plot_tree(model, corpus.vocabulary, n_terms=n_terms, title=title)
    for ext in ("png", "svg"):
        save_figure(figure, os.path.join(out_dir, f"tree.{ext}"))
    write_json(os.path.join(out_dir, "run.json"), record)
    return ["tree.json", "assignments.csv", "tree.png", "tree.svg", "run.json"]
