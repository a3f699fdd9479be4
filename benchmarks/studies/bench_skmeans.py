"""Spherical k-means, the start of every NMF-family fit: the compiled Lloyd steps against
the scipy expressions they replace, and scikit-learn's KMeans, side by side in one run.

    python benchmarks/studies/bench_skmeans.py [--corpora a,b] [--repeat 3]

Per corpus (k = its number of classes), ``SphericalKMeans(k, n_init=10, random_state=0)``
on its TF-IDF X, as the NMF start runs it:

- **compiled**: the default (``skmeans_kernels``: the assignment without the n x k
  similarity matrix, the centroid sums without the membership product, on the library's
  threads);
- **scipy**: the same estimator inside ``scipy_path()`` (``X @ C.T`` and ``argmax``, a
  sparse membership matrix times X), the code before the kernels;
- **scikit-learn KMeans**: ``KMeans(k, n_init=10, random_state=0)`` on the L2-normalized X
  (Euclidean k-means on the unit sphere, centroids not renormalized: the nearest
  scikit-learn estimator, for scale; its own threads).

The three run interleaved (A B C A B C ...), ``--repeat`` rounds, median per method.
The compiled and scipy fits must give the same labels (the kernels are bitwise the scipy
expressions); the script stops if they do not. The ten k-means++ seedings of a fit are
timed alone: scikit-learn's ``kmeans_plusplus`` (the scipy path's) and ours (the compiled
path's, the same picks: ``spherical_kmeans_plusplus``), with ours' share of the compiled fit.
Writes benchmarks/results/skmeans.md.
"""

import argparse
import os
import sys
import time
import warnings

import numpy as np
from sklearn.cluster import KMeans, kmeans_plusplus
from sklearn.preprocessing import normalize

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # benchmarks/: _common
from _common import CORPORA, load, machine_line, table, write_markdown  # noqa: E402
from semnmf._utils.parallel import n_threads, scipy_path
from semnmf.metrics import nmi
from semnmf.models.skmeans import SphericalKMeans, spherical_kmeans_plusplus



def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def measure(name, repeat):
    corpus, X, k = load(name, verbose=True)
    Xn = normalize(X)

    def ours():
        return SphericalKMeans(k, n_init=10, random_state=0).fit(X)

    def scipy():
        with scipy_path():
            return SphericalKMeans(k, n_init=10, random_state=0).fit(X)

    def sklearn():
        return KMeans(k, n_init=10, random_state=0).fit(Xn)

    keep = Xn[Xn.getnnz(axis=1) > 0]

    def seeding():  # the ten k-means++ seedings of one compiled fit
        rng = np.random.RandomState(0)
        for _ in range(10):
            spherical_kmeans_plusplus(keep, k, rng)

    def sklearn_seeding():  # the same with scikit-learn's (the scipy path's)
        rng = np.random.RandomState(0)
        ones = np.ones(keep.shape[0], dtype=keep.dtype)
        for _ in range(10):
            kmeans_plusplus(keep, k, x_squared_norms=ones, random_state=rng)

    methods = {"compiled": ours, "scipy": scipy, "scikit-learn KMeans": sklearn,
               "k-means++ seeding": seeding, "scikit-learn seeding": sklearn_seeding}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours()  # compile and load the kernels for this k
        times = {m: [] for m in methods}
        fits = {}
        for _ in range(repeat):
            for m, fn in methods.items():
                sec, fits[m] = timed(fn)
                times[m].append(sec)
    if not np.array_equal(fits["compiled"].labels_, fits["scipy"].labels_):
        raise SystemExit(f"{name}: the compiled and scipy fits differ")
    med = {m: float(np.median(v)) for m, v in times.items()}
    row = [name, f"{X.shape[0]:,}", f"{X.nnz:,}", str(k),
           f"{med['scipy']:.2f}", f"{med['compiled']:.2f}",
           f"{med['scikit-learn KMeans']:.2f}",
           f"{med['scikit-learn seeding']:.2f} / {med['k-means++ seeding']:.2f}",
           f"**{med['scipy'] / med['compiled']:.2f}x**",
           f"{med['scikit-learn KMeans'] / med['compiled']:.2f}x",
           f"{med['k-means++ seeding'] / med['compiled']:.0%}",
           f"{nmi(corpus.labels, fits['compiled'].labels_):.3f} / "
           f"{nmi(corpus.labels, fits['scikit-learn KMeans'].labels_):.3f}"]
    print(" | ".join(row), flush=True)
    return row


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpora", default=",".join(CORPORA))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rows = [measure(name, args.repeat) for name in args.corpora.split(",")]
    header = ["corpus", "docs", "nnz X", "k", "scipy (s)", "compiled (s)",
              "scikit-learn KMeans (s)", "k-means++ seeding, scikit-learn / ours (s)",
              "compiled vs scipy",
              "compiled vs scikit-learn", "our seeding's share of compiled",
              "NMI ours / scikit-learn"]
    setup = (f"{machine_line()}; {n_threads()} threads. `SphericalKMeans(k, n_init=10, "
             f"random_state=0)` on each corpus's TF-IDF X, k = its classes; interleaved, "
             f"median of {args.repeat} rounds. **scipy**: the same estimator in "
             "`scipy_path()`, the code before the compiled kernels (`X @ C.T` and argmax, "
             "a membership matrix times X, scikit-learn's `kmeans_plusplus`). "
             "**scikit-learn KMeans**: Euclidean k-means on the L2-normalized X, for "
             "scale. Compiled and scipy give the same labels on every corpus (checked by "
             "the script). Reproduce: `python benchmarks/studies/bench_skmeans.py`.")
    write_markdown("skmeans.md", "Spherical k-means: compiled Lloyd steps", [
        ("Setup", setup),
        ("Per corpus", table(header, rows)),
    ])


if __name__ == "__main__":
    main()
