"""Shared helpers of the benchmark scripts: locating the shared datasets, loading them
once, and writing markdown tables."""

import os
import platform
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
DEFAULT_DATA = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "datasets"))
DATASETS = ["cstr", "classic3", "classic4", "bbc", "ng5", "ng20", "ng20_cai"]


def data_root():
    root = os.environ.get("SEMNMF_BENCH_DATA", DEFAULT_DATA)
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


def mean_sd(values):
    values = np.asarray(values, dtype=float)
    return f"{values.mean():.3f} ± {values.std():.3f}"


def machine_line():
    return (f"{platform.platform()}, Python {platform.python_version()}, {os.cpu_count()} cores, "
            f"{time.strftime('%Y-%m-%d')}")


def write_markdown(filename, title, sections):
    """sections: list of (heading or None, text)."""
    from semnmf._utils.io import atomic_write

    os.makedirs(RESULTS, exist_ok=True)
    path = os.path.join(RESULTS, filename)

    def write(f):
        f.write(f"# {title}\n\n")
        for heading, text in sections:
            if heading:
                f.write(f"## {heading}\n\n")
            f.write(text.rstrip() + "\n\n")

    atomic_write(path, write)
    print(f"wrote {path}")


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def load_cache(path):
    """The JSON cache of finished benchmark cells at ``path`` ({} when absent)."""
    import json

    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    return {}


def save_cache(path, cache):
    """Write the cache atomically, merged into what is on disk: sections (dicts) are
    updated cell by cell, so two benchmark processes sharing a file keep each other's
    cells."""
    import json

    disk = load_cache(path)
    for key, value in cache.items():
        if isinstance(value, dict) and isinstance(disk.get(key), dict):
            disk[key].update(value)
        else:
            disk[key] = value
    from semnmf._utils.io import atomic_write

    os.makedirs(os.path.dirname(path), exist_ok=True)
    atomic_write(path, lambda f: json.dump(disk, f))
