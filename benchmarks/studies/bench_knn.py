"""The exact cosine kNN search of the graphs, side by side with scikit-learn's, on the CPU.

    python benchmarks/studies/bench_knn.py [--repeat 3] [--quick]

Every kNN graph of the package (the word graph of ``--semantics``, Semantic-GNMF's and
GTNMF's document graphs) is one exact cosine search (:func:`semnmf.graphs.cosine_kneighbors`).
This script times, in one process, for 10 neighbours per point:

- **compiled**: the package's search; on dense rows each pair's similarity is computed
  once (the upper half, chunk by chunk) and every point's most similar others are kept by
  the numba kernels (``semnmf.graphs._knn_kernels``);
- **numpy**: the same chunks with ``argpartition`` and a stable sort (``SEMNMF_KERNELS=0``),
  the search before the kernel, and still the search of sparse rows;
- **scikit-learn**: ``NearestNeighbors(metric="cosine", algorithm="brute").kneighbors()``;

on three matrices: unit random vectors of the shapes of NG20's MiniLM term vectors
(55,859 x 384: the word graph) and document vectors (18,846 x 384: the document graph),
and NG20's TF-IDF (sparse, from ``../shared/datasets``; skipped with a message when it is
absent). Medians of ``--repeat`` runs (scikit-learn: one run on the largest), ratios to the
compiled search, and whether each finds the compiled search's neighbours (the share of
each point's neighbours both find). ``--quick`` takes 3,000 rows of each (a check of the
script; printed, not written). Writes ``results/knn.md``; hand notes in
``results/knn_notes.md`` come after.
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # benchmarks/: _common
from _common import data_path, machine_line, neighbour_agreement, table, timed, write_markdown


HEADER = ["vectors", "size", "compiled s", "numpy s", "shared", "scikit-learn s", "shared"]


def matrices(quick):
    rng = np.random.default_rng(0)
    rows = 3000 if quick else None
    out = []
    for name, n in (("term vectors (random, NG20's shape)", 55_859),
                    ("document vectors (random, NG20's shape)", 18_846)):
        X = rng.standard_normal((rows or n, 384)).astype(np.float32)
        out.append((name, X / np.linalg.norm(X, axis=1, keepdims=True)))
    folder = os.path.join(data_path(), "ng20")
    if os.path.isdir(folder):
        from semnmf import load_dataset

        X = load_dataset(folder).tfidf()  # unit rows (a document without terms dropped)
        X = X[:rows] if rows else X
        out.append(("NG20 TF-IDF (sparse)", X[X.getnnz(axis=1) > 0]))
    else:
        print(f"NG20 not found at {folder}: its TF-IDF row is skipped.")
    return out


def run(name, X, repeat, k=10):
    from sklearn.neighbors import NearestNeighbors

    from semnmf.graphs import cosine_kneighbors

    row = {"matrix": name, "shape": X.shape}
    cosine_kneighbors(X[:50], k)  # compile (cached after the first process)
    row["compiled"], (_, ref) = timed(lambda: cosine_kneighbors(X, k), repeat)
    os.environ["SEMNMF_KERNELS"] = "0"
    try:
        row["numpy"], (_, ind) = timed(lambda: cosine_kneighbors(X, k), repeat)
    finally:
        del os.environ["SEMNMF_KERNELS"]
    row["numpy_shared"] = neighbour_agreement(ref, ind)[0]
    search = NearestNeighbors(n_neighbors=k, metric="cosine", algorithm="brute").fit(X)
    row["sklearn"], (_, ind) = timed(search.kneighbors, 1 if X.shape[0] > 30_000 else repeat)
    row["sklearn_shared"] = neighbour_agreement(ref, ind)[0]
    print(f"{name} {X.shape}: " + ", ".join(
        f"{key} {row[key]:.2f} s" for key in ("compiled", "numpy", "sklearn")), flush=True)
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    rows = [run(name, X, args.repeat) for name, X in matrices(args.quick)]
    body = []
    for r in rows:
        cells = [r["matrix"], f"{r['shape'][0]:,} x {r['shape'][1]:,}", f"{r['compiled']:.2f}"]
        for key in ("numpy", "sklearn"):
            cells += [f"{r[key]:.2f} ({r[key] / r['compiled']:.2f}x)", f"{r[key + '_shared']:.5f}"]
        body.append(cells)
    if args.quick:  # a check of the script: printed, not written
        print(table(HEADER, body))
        return
    write_markdown("knn.md",
                   "The cosine kNN search on the CPU: compiled, numpy, scikit-learn",
                   [(None, f"`benchmarks/studies/bench_knn.py --repeat {args.repeat}`; "
                           f"{machine_line()}; 10 neighbours per point; seconds (median), "
                           "the ratio to the compiled search, and the share of each point's "
                           "neighbours that the compiled search finds too."),
                    (None, table(HEADER, body))])


if __name__ == "__main__":
    main()
