"""Shared helpers of the benchmark scripts: the corpus list, the leave-one-corpus-out
routine, locating the shared datasets and loading them once, caches and markdown tables.

Every script of the suite (``benchmarks/*.py``) and of the studies
(``benchmarks/studies/*.py``, which put this folder on ``sys.path``) reads the corpora from
:func:`data_path`, keeps its resumable cells under :data:`CACHE_ROOT` and writes its page to
:data:`RESULTS`."""

import gzip
import io
import json
import os
import platform
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
# The one cache folder (gitignored): finished cells, labels and traces that let a rerun
# resume. A result page never needs it; deleting it only makes the next run measure again.
CACHE_ROOT = os.path.join(HERE, "cache")
DEFAULT_DATA = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "datasets"))

# ------------------------------------------------------------------ corpora
# The ten shared corpora the results were measured on, in the order of their tables.
CORPORA = ("cstr", "classic3", "bbc", "ng5", "classic4", "agnews", "searchsnippets", "m10",
           "ng20_cai", "ng20")
# The ones without raw text (counts only): they have no "-doc" row in the studies of the default.
COUNTS_ONLY = ("cstr", "classic3", "ng20_cai")


def subset(*names):
    """A named subset of :data:`CORPORA`, in the order given (its results' row order)."""
    unknown = [name for name in names if name not in CORPORA]
    if unknown:
        raise ValueError(f"not among the shared corpora: {', '.join(unknown)}")
    return names


def raw_text_corpora(root):
    """The dataset folders under ``root`` with raw text (docs.jsonl and labels.txt),
    smallest docs.jsonl first."""
    names = [n for n in os.listdir(root)
             if os.path.isfile(os.path.join(root, n, "docs.jsonl"))
             and os.path.isfile(os.path.join(root, n, "labels.txt"))]
    return sorted(names, key=lambda n: os.path.getsize(os.path.join(root, n, "docs.jsonl")))


# Named subsets: the corpora, in their order, that a results file was measured on, so that
# its "Reproduce" line gives it again.
K_ORDER = subset("cstr", "classic3", "classic4", "bbc", "ng5", "ng20", "ng20_cai", "agnews",
                 "m10", "searchsnippets")             # k_selection*.md, defaults_kinds.md
FIRST_SEVEN = subset("cstr", "classic3", "classic4", "bbc", "ng5", "ng20",
                     "ng20_cai")                      # quality.md; refine.md without ng20_cai
PRUNING = subset("cstr", "classic3", "classic4", "bbc", "ng5", "agnews",
                 "ng20_cai")                          # pruning.md
TREE = subset("cstr", "bbc", "classic3", "ng5", "classic4", "agnews", "m10", "searchsnippets",
              "ng20_cai")                             # tree.md
TABLE3 = subset("cstr", "classic4", "ng5", "ng20")    # ensemble.md: SN Table 3's corpora
SEMANTICS = subset("classic4", "ng5", "bbc", "ng20", "cstr")        # semantics.md
LAMBDA_SWEEP = subset("cstr", "classic3", "classic4", "bbc", "ng5")  # lambda_sweep.md
GOLDEN_CORPORA = subset("cstr", "classic4", "bbc")     # golden.json
SPEED = subset("classic4", "ng20")                    # speed.md; scale.md's agreement
GPU = subset("bbc", "ng20")                           # gpu.md


def all_corpora(root=None):
    """Every corpus folder present in the shared datasets (``root``, default
    :func:`data_root`): those of :data:`CORPORA` first, in its order, then the others
    alphabetically. A corpus folder holds ``labels.txt`` and ``counts.mtx`` or
    ``docs.jsonl``."""
    root = data_root() if root is None else root

    def is_corpus(name):
        folder = os.path.join(root, name)
        return (os.path.isfile(os.path.join(folder, "labels.txt"))
                and any(os.path.isfile(os.path.join(folder, f))
                        for f in ("counts.mtx", "docs.jsonl")))

    present = sorted(name for name in os.listdir(root) if is_corpus(name))
    return [n for n in CORPORA if n in present] + [n for n in present if n not in CORPORA]


# ------------------------------------------------------------------ leave-one-corpus-out
def leave_one_out(folds, candidates, score):
    """Leave-one-corpus-out: for each held-out fold, the candidate chosen without it.

    Parameters
    ----------
    folds : sequence
        The folds (corpora, or groups of rows held out together).
    candidates : sequence
        What is chosen (settings, methods, criteria).
    score : callable
        ``score(candidate, training_folds)``: how good the candidate is on the folds it
        may be chosen on; larger is better. :func:`worst_then_mean` builds the score of
        new studies from one value per fold.

    Returns
    -------
    dict
        ``{held-out fold: chosen candidate}`` in the folds' order. Ties go to the earlier
        candidate: order the candidates by preference.
    """
    folds, candidates = list(folds), list(candidates)
    return {held: max(candidates, key=lambda c: score(c, [f for f in folds if f != held]))
            for held in folds}


def worst_then_mean(value, tolerance=0.0):
    """The score of a candidate on its training folds: its worst fold first, its mean over
    the folds second (a mean hides a collapse on one fold).

    ``value(candidate, fold)``: the candidate's result on one fold, larger is better (a
    margin over the best baseline, an NMI). ``tolerance``: a worst fold within this of 0
    counts as 0 (a loss the seeds cannot tell from none), so that the mean decides."""
    def score(candidate, folds):
        values = [value(candidate, fold) for fold in folds]
        worst = min(values)
        return (0.0 if -tolerance <= worst < 0 else worst), float(np.mean(values))

    return score


# ------------------------------------------------------------------ data
def data_path():
    """Where the shared datasets are looked for: ``$SEMNMF_BENCH_DATA``, else
    ``../shared/datasets`` beside the repository (the folder may be absent)."""
    return os.environ.get("SEMNMF_BENCH_DATA", DEFAULT_DATA)


def data_root():
    """The shared datasets' folder; the script exits (status 0) with a message when it is
    absent."""
    root = data_path()
    if not os.path.isdir(root):
        print(f"shared datasets not found at {root}: set SEMNMF_BENCH_DATA; skipping.")
        sys.exit(0)
    return root


def load(name, verbose=False):
    """(corpus, X tf-idf, k) for a shared dataset folder; ``verbose``: say its shape and
    how long loading took."""
    from semnmf import load_dataset

    t = time.perf_counter()
    corpus = load_dataset(os.path.join(data_root(), name))
    X = corpus.tfidf()
    if verbose:
        print(f"{name}: {X.shape}, {corpus.n_classes} classes, loaded in "
              f"{time.perf_counter() - t:.1f} s", flush=True)
    return corpus, X, corpus.n_classes


def pending(names, todo_of, verbose=True):
    """``(name, corpus, X, todo)`` for each corpus whose ``todo_of(name)`` is not empty:
    the cells a resumed benchmark still has to measure. A corpus is loaded only then."""
    for name in names:
        todo = todo_of(name)
        if todo:
            corpus, X, _ = load(name, verbose=verbose)
            yield name, corpus, X, todo


def n_classes(path):
    """The number of distinct labels in a corpus folder's ``labels.txt`` (k of the
    studies that cluster at the number of classes)."""
    with open(os.path.join(path, "labels.txt"), encoding="utf-8") as f:
        return len({line.strip() for line in f if line.strip()})


def mean_sd(values):
    values = np.asarray(values, dtype=float)
    return f"{values.mean():.3f} ± {values.std():.3f}"


def machine_line():
    return (f"{platform.platform()}, Python {platform.python_version()}, {os.cpu_count()} cores, "
            f"{time.strftime('%Y-%m-%d')}")


def write_markdown(filename, title, sections):
    """sections: list of (heading or None, text). Notes written by hand live beside the
    results, in ``<name>_notes.md``, and are appended to every rewrite of ``<name>.md`` (a
    rerun of the script keeps them)."""
    os.makedirs(RESULTS, exist_ok=True)
    path = os.path.join(RESULTS, filename)
    notes = os.path.join(RESULTS, os.path.splitext(filename)[0] + "_notes.md")
    if os.path.exists(notes):
        with open(notes, encoding="utf-8") as f:
            sections = [*sections, (None, f.read())]

    def write(f):
        f.write(f"# {title}\n\n")
        for heading, text in sections:
            if heading:
                f.write(f"## {heading}\n\n")
            f.write(text.rstrip() + "\n\n")

    atomic_write(path, write)
    print(f"wrote {path}")


def timed(fn, repeat=1):
    """(median seconds of ``repeat`` calls of ``fn``, the last call's result)."""
    seconds, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        seconds.append(time.perf_counter() - t)
    return float(np.median(seconds)), out


def notes_first(lines, name, at=4):
    """A results page's markdown lines with the hand notes of ``results/<name>_notes.md``
    (kept on reruns) inserted at line ``at`` (after the title and the machine line)."""
    notes = os.path.join(RESULTS, f"{name}_notes.md")
    if os.path.exists(notes):
        with open(notes, encoding="utf-8") as f:
            lines[at:at] = [f.read(), ""]
    return lines


def write_page(out, name, lines):
    """``lines`` as ``<out>/<name>.md``, atomically, with the hand notes first
    (:func:`notes_first`)."""
    os.makedirs(out, exist_ok=True)
    text = "\n".join(notes_first(lines, name))
    atomic_write(os.path.join(out, f"{name}.md"), lambda f: f.write(text))


def neighbour_agreement(a, b):
    """Share of each row's neighbours (rows of indices ``a`` and ``b``, k each) that both
    searches found: (mean, min) over the rows."""
    k = a.shape[1]
    shared = np.array([np.intersect1d(x, y).size / k for x, y in zip(a, b)])
    return float(shared.mean()), float(shared.min())


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def atomic_write(path, write):
    """Write the text file ``path`` through a temporary file renamed into place; a ``.gz``
    path is gzip-compressed (no name or time stamp in its header: the same text gives the
    same bytes)."""
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        if path.endswith(".gz"):
            text = io.StringIO()
            write(text)
            with open(tmp, "wb") as f:
                f.write(gzip.compress(text.getvalue().encode("utf-8"), mtime=0))
        else:
            with open(tmp, "w", encoding="utf-8") as f:
                write(f)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def load_cache(path):
    """The JSON cache of finished benchmark cells at ``path`` ({} when absent; a ``.gz``
    path is read through gzip)."""
    if os.path.exists(path):
        with (gzip.open(path, "rt", encoding="utf-8") if path.endswith(".gz")
              else open(path, encoding="utf-8")) as f:
            return json.load(f)
    return {}


def save_cache(path, cache):
    """Write the cache atomically, merged into what is on disk: sections (dicts) are
    updated cell by cell, so two benchmark processes sharing a file keep each other's
    cells."""
    disk = load_cache(path)
    for key, value in cache.items():
        if isinstance(value, dict) and isinstance(disk.get(key), dict):
            disk[key].update(value)
        else:
            disk[key] = value
    os.makedirs(os.path.dirname(path), exist_ok=True)
    atomic_write(path, lambda f: json.dump(disk, f))
