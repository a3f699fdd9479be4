"""Time per iteration of our NMF and SemanticNMF, side by side in one run.

    python benchmarks/bench_speed.py [--iters 50] [--repeat 5] [--snmf-iters 10]

1. NMF on CLASSIC4 (k = 4) and NG20 (k = 20): our ``NMF`` (compiled sweep, float64 and
   float32; and the scipy reference path, ``SEMNMF_KERNELS=0``) against scikit-learn's
   ``NMF(solver="mu")`` and ``solver="cd"``, all from the same random start, ``--iters``
   iterations (tol=0), whole ``fit`` divided by the iterations (setup included, as
   scikit-learn's). The methods run interleaved (A B C A B C ...), ``--repeat`` rounds,
   median per method: the machine is shared, so compare the ratios.
2. SemanticNMF on NG20 with the window-10 PPMI: per-iteration time of the sweep
   (``problem.step()``, the compiled sweep and the scipy reference) against the
   memory-bandwidth floor, the time of one compiled pass that reads the values and column
   indices of X, Xᵀ, M and Mᵀ once (M is read twice when it is its own transpose: the
   sweep needs two passes over it). Interleaved likewise.

Writes benchmarks/results/speed.md.
"""

import argparse
import os
import time
import warnings

import numba
import numpy as np
from sklearn.decomposition import NMF as SkNMF

from _common import SPEED, load, machine_line, table, write_markdown
from semnmf import NMF
from semnmf.metrics import nmi
from semnmf.models._solvers.fro_kernels import warm_up
from semnmf.models._solvers.frobenius import FrobeniusProblem, transpose_csr
from semnmf.models.init import initialize, initialize_context_factor


@numba.njit(nogil=True, cache=True)
def _stream(indices, data):
    s = 0.0
    t = 0
    for p in range(data.shape[0]):
        s += data[p]
        t += indices[p]
    return s + t


def stream_time(matrices):
    t = time.perf_counter()
    for A in matrices:
        _stream(A.indices, A.data)
    return time.perf_counter() - t


def timed(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def interleaved(fns, repeat):
    """Median time of each function, run in turn ``repeat`` rounds."""
    times = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            times[name].append(timed(fn))
    return {name: float(np.median(v)) for name, v in times.items()}


class reference_path:
    def __enter__(self):
        os.environ["SEMNMF_KERNELS"] = "0"

    def __exit__(self, *exc):
        os.environ.pop("SEMNMF_KERNELS", None)


def nmf_rows(name, it, repeat, log):
    corpus, X, k = load(name)
    X = X.tocsr()
    X32 = X.astype(np.float32)
    Z0, W0 = initialize(X, k, "random", 0)

    def ours(X=X, dtype=np.float64):
        return NMF(k, init=(Z0.astype(dtype), W0.astype(dtype)), max_iter=it, tol=0).fit(X)

    def reference():
        with reference_path():
            ours()

    def sk(solver):
        return lambda: SkNMF(k, solver=solver, init="custom", max_iter=it, tol=0).fit_transform(
            X, W=Z0.copy(), H=np.ascontiguousarray(W0.T))

    fns = {"ours": ours, "ours float32": lambda: ours(X32, np.float32),
           "ours reference (scipy)": reference, "sklearn mu": sk("mu"), "sklearn cd": sk("cd")}
    for fn in fns.values():
        fn()                                    # warm-up (compilation, caches)
    t = interleaved(fns, repeat)
    per = {m: 1e3 * v / it for m, v in t.items()}
    log(f"{name}: {per}")
    # NMI of the float64 and float32 fits at the default settings (skmeans start, tol)
    labels = corpus.labels
    nmi64 = nmi(labels, NMF(k, random_state=0).fit(X).labels_)
    nmi32 = nmi(labels, NMF(k, random_state=0).fit(X32).labels_)
    return [name, f"{X.shape[0]}x{X.shape[1]}", f"{X.nnz:,}", k,
            f"{per['sklearn mu']:.2f}", f"{per['sklearn cd']:.2f}",
            f"{per['ours reference (scipy)']:.2f}", f"{per['ours']:.2f}",
            f"{per['ours float32']:.2f}",
            f"**{per['sklearn mu'] / per['ours']:.2f}x**",
            f"{per['sklearn mu'] / per['ours float32']:.2f}x",
            f"{per['ours reference (scipy)'] / per['ours']:.2f}x",
            f"{nmi64:.4f} / {nmi32:.4f}"]


def snmf_row(it, repeat, log):
    corpus, X, k = load("ng20")
    X = X.tocsr()
    M = corpus.word_context(context="window", window=10).tocsr()
    rows = []
    for dtype in (np.float64, np.float32):
        Xd, Md = X.astype(dtype), M.astype(dtype)
        Xt = transpose_csr(Xd)
        Mt = transpose_csr(Md)
        symmetric = Mt is Md
        Z0, W0 = initialize(Xd, k, "random", 0)
        Q0 = initialize_context_factor(Mt @ W0, W0)
        lam = 10.0 * float(Xd.sum()) / float(Md.sum())

        def problem(kernels, Mt_=Mt):
            return FrobeniusProblem(Xd, Z0.copy(), W0.copy(), M=Md, Q=Q0.copy(), lam=lam,
                                    Xt=Xt, Mt=Mt_, kernels=kernels)

        fast, ref = problem(True), problem(False)
        fast.step(), ref.step()
        fns = {"compiled": lambda: [fast.step() for _ in range(it)],
               "reference": lambda: [ref.step() for _ in range(it)],
               "floor": lambda: [stream_time([Xd, Xt, Md, Mt if not symmetric else Md])
                                 for _ in range(it)]}
        t = {m: v / it for m, v in interleaved(fns, repeat).items()}
        log(f"snmf {np.dtype(dtype).name}: {t}")
        rows.append(["ng20", np.dtype(dtype).name, f"{M.nnz:,}", "yes" if symmetric else "no",
                     f"{1e3 * t['reference']:.1f}", f"{1e3 * t['compiled']:.1f}",
                     f"{1e3 * t['floor']:.1f}", f"{t['reference'] / t['floor']:.1f}",
                     f"**{t['compiled'] / t['floor']:.1f}**",
                     f"{t['reference'] / t['compiled']:.1f}x"])
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--iters", type=int, default=50)
    parser.add_argument("--snmf-iters", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--datasets", default=",".join(SPEED))
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    warm_up((4, 20))
    lines = []

    def log(text):
        print(text, flush=True)
        lines.append(text)

    nmf = [nmf_rows(name, args.iters, args.repeat, log) for name in args.datasets.split(",")]
    snmf = snmf_row(args.snmf_iters, args.repeat, log)
    header = ["dataset", "shape", "nnz X", "k", "sklearn mu ms/iter", "sklearn cd ms/iter",
              "ours, scipy path ms/iter", "ours ms/iter", "ours float32 ms/iter",
              "speed-up vs sklearn mu", "float32 speed-up vs sklearn mu",
              "speed-up vs scipy path", "NMI float64 / float32"]
    snmf_header = ["dataset", "dtype", "nnz M", "M symmetric (Mᵀ = M)", "scipy path ms/iter",
                   "compiled ms/iter", "floor ms", "scipy path / floor", "compiled / floor",
                   "speed-up"]
    text = (f"Machine: {machine_line()}. The machine is shared with other jobs: the methods "
            "run interleaved and each figure is a median; compare the ratios, not the seconds.")
    write_markdown("speed.md", "Time per iteration", [
        (None, text),
        ("NMF against scikit-learn",
         f"{args.iters} iterations from the same random start (tol=0), whole fit divided by "
         f"the iterations (each library's setup included), median of {args.repeat} "
         "interleaved rounds. NMI: default settings (skmeans start, tol=1e-4, random_state=0) "
         "with X in float64 and in float32.\n\n" + table(header, nmf)),
        ("Semantic-NMF against the memory-bandwidth floor",
         f"NG20, M = window-10 PPMI, λ = 10 (relative), k = 20; {args.snmf_iters} sweeps "
         "(`problem.step()`, the objective included) per round, median of "
         f"{args.repeat} interleaved rounds. Floor: one compiled pass reading the values "
         "and column indices of X, Xᵀ, M and Mᵀ once.\n\n" + table(snmf_header, snmf)),
        ("Log", "```\n" + "\n".join(lines) + "\n```"),
    ])


if __name__ == "__main__":
    main()
