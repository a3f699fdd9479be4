"""Time per iteration of our NMF and SemanticNMF against scikit-learn's NMF(solver="mu"),
at equal iterations from the same start, side by side in one run.

    python benchmarks/bench_speed.py [--iters 50] [--repeat 3] [--datasets ...]

Also reports the memory-bandwidth floor of one iteration: the time to read X, Xᵀ (and M,
Mᵀ) once at the read bandwidth measured here (numpy sum over a 512 MB array), and the
ratio of our iteration time to it. Ratios, not absolute seconds, are what to compare
across machines. Writes benchmarks/results/speed.md.
"""

import argparse
import time
import warnings

import numpy as np
from sklearn.decomposition import NMF as SkNMF

from _common import DATASETS, load, machine_line, table, write_markdown
from semnmf import NMF, SemanticNMF
from semnmf.models.init import initialize


def read_bandwidth():
    a = np.ones(64 * 1024 * 1024)  # 512 MB
    best = np.inf
    for _ in range(3):
        t = time.perf_counter()
        a.sum()
        best = min(best, time.perf_counter() - t)
    return a.nbytes / best


def matrix_bytes(A):
    return A.data.nbytes + A.indices.nbytes + A.indptr.nbytes


def best_time(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--iters", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--datasets", default=",".join(DATASETS))
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    bandwidth = read_bandwidth()
    rows = []
    for name in args.datasets.split(","):
        corpus, X, k = load(name)
        M = corpus.word_context(context=corpus.default_context())
        Z0, W0 = initialize(X, k, "random", 0)
        it = args.iters

        def ours_nmf():
            NMF(k, init=(Z0, W0), max_iter=it, tol=0).fit(X)

        def ours_snmf():
            SemanticNMF(k, init=(Z0, W0), max_iter=it, tol=0).fit(X, M=M)

        def sklearn_mu():
            SkNMF(k, solver="mu", init="custom", max_iter=it, tol=0).fit_transform(
                X, W=Z0.copy(), H=np.ascontiguousarray(W0.T))

        t_ours = best_time(ours_nmf, args.repeat) / it
        t_sk = best_time(sklearn_mu, args.repeat) / it
        t_snmf = best_time(ours_snmf, args.repeat) / it
        floor_nmf = 2 * matrix_bytes(X) / bandwidth
        floor_snmf = floor_nmf + 2 * matrix_bytes(M) / bandwidth
        rows.append([name, f"{X.shape[0]}x{X.shape[1]}", f"{X.nnz:,}", f"{M.nnz:,}", k,
                     f"{1e3 * t_sk:.2f}", f"{1e3 * t_ours:.2f}", f"**{t_sk / t_ours:.2f}x**",
                     f"{t_ours / floor_nmf:.1f}", f"{1e3 * t_snmf:.2f}",
                     f"{t_snmf / floor_snmf:.1f}", f"{t_snmf / t_sk:.2f}"])
        print(rows[-1], flush=True)
    header = ["dataset", "shape", "nnz X", "nnz M", "k", "sklearn mu ms/iter", "our NMF ms/iter",
              "speed-up vs sklearn mu", "NMF / floor", "our SNMF ms/iter", "SNMF / floor",
              "SNMF / sklearn mu"]
    text = (f"Machine: {machine_line()}; measured read bandwidth {bandwidth / 1e9:.1f} GB/s.\n\n"
            f"{args.iters} iterations from the same random start (tol=0), best of {args.repeat}; "
            "fit time divided by iterations (includes each library's setup). The floor is the "
            "time to read the sparse matrices of one iteration once (X and Xᵀ for NMF; plus M "
            "and Mᵀ for SNMF) at the measured bandwidth. M: window-10 PPMI when raw text "
            "exists, else document-level PPMI.")
    write_markdown("speed.md", "Time per iteration against scikit-learn",
                   [(None, text), ("Results", table(header, rows))])


if __name__ == "__main__":
    main()
