"""What the default `semnmf cluster SOURCE -k K` costs, against one NMF fit (the
target: wall time <= 3x one NMF fit plus building X and M; peak memory <= 1 GB on NG20).

    python benchmarks/bench_default_cost.py [--corpora a,b] [--repeats 3]

Per corpus, in one process and one after the other (medians of ``--repeats``): building X
(TF-IDF), building the default word-context matrix M exactly as the command line does
(window PPMI when raw text exists, else document SPPMI pruned to 50 contexts per word; the
5,000,000-non-zero budget), one fit of the default (SemanticNMF, KL loss, λ = 1, 5
screened starts, in float32 as the command line: the cast counted in the fit), the same in
float64 (its time, and the share of labels the two agree on), one fit
of our NMF (Frobenius, spherical k-means start, the unit of the target), and one fit of
scikit-learn's NMF (its default solver and init) for reference. Then the peak resident
memory of the whole command `semnmf cluster SOURCE -k K` (a child process, its maximum RSS).
Writes benchmarks/results/default_cost.md.
"""

import argparse
import os
import subprocess
import sys
import warnings

import numpy as np

from _common import CORPORA, data_root, machine_line, timed, write_markdown



def measure(name, repeats):
    from sklearn.decomposition import NMF as SkNMF

    from semnmf import NMF, load_dataset
    from semnmf.models.registry import CLI_METHODS, DEFAULT_CLI_METHOD
    from semnmf.metrics import nmi

    corpus = load_dataset(os.path.join(data_root(), name))
    k = corpus.n_classes
    x_sec, X = timed(corpus.tfidf, repeats)
    method = CLI_METHODS[DEFAULT_CLI_METHOD]  # what `semnmf cluster` runs by default
    if corpus.texts is not None:
        options = dict(context="window", window=10)
    else:
        options = dict(context="document", **method.counts_context)
    m_sec, M = timed(lambda: corpus.word_context(max_nnz=5_000_000, **options), repeats)
    dtype = method.dtype  # the command line casts X and M to it (float32) before the fit
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        d_sec, model = timed(lambda: method.build(k, 0)
                             .fit(X.astype(dtype), M=M.astype(dtype)), repeats)
        # the same in float64: what float32 saves, and whether it changes the clusters
        d64_sec, model64 = timed(lambda: method.build(k, 0).fit(X, M=M), repeats)
        # the same method with one start: what the screened starts add
        one_sec, _ = timed(lambda: method.build(k, 0, n_init=1)
                           .fit(X.astype(dtype), M=M.astype(dtype)), repeats)
        n_sec, nmf = timed(lambda: NMF(k, random_state=0).fit(X), repeats)
        s_sec, _ = timed(lambda: SkNMF(k, random_state=0).fit(X), repeats)
    y = corpus.labels
    return {"name": name, "n": X.shape[0], "k": k, "ctx": options["context"],
            "nnz_M": int(M.nnz), "X": x_sec, "M": m_sec, "default": d_sec, "nmf": n_sec,
            "one": one_sec, "float64": d64_sec,
            "same": float(np.mean(model.labels_ == model64.labels_)),
            "sk": s_sec, "nmi_default": nmi(y, model.labels_), "nmi_nmf": nmi(y, nmf.labels_),
            "iters": int(model.n_iter_)}


def peak_rss_mb(name, k, tmp):
    """Peak RSS (MB) and wall seconds of `semnmf cluster`, run by a small intermediate
    Python process (a child forked from this large process would report this process's
    memory as its own peak)."""
    cmd = [sys.executable, "-m", "semnmf", "cluster", os.path.join(data_root(), name),
           "-k", str(k), "--out", os.path.join(tmp, f"run-{name}"), "--quiet"]
    probe = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
             "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "
             "time.perf_counter() - t)")
    out = subprocess.run([sys.executable, "-c", probe, *cmd], check=True,
                         capture_output=True, text=True).stdout.split()
    return int(out[0]) / 1024, float(out[1])


def main(argv=None):
    import tempfile

    p = argparse.ArgumentParser()
    p.add_argument("--corpora", default=",".join(CORPORA))
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args(argv)
    rows, names = [], args.corpora.split(",")
    for name in names:
        r = measure(name, args.repeats)
        print(r, flush=True)
        rows.append(r)
    lines = ["| corpus | docs | k | M (nnz) | X (s) | M (s) | default fit (s) | one start (s) | "
             "default in float64 (s) | labels as float64's | "
             "NMF fit (s) | scikit-learn NMF (s) | default fit / NMF fit | default fit / "
             "scikit-learn NMF | (X + M + default) / (3 NMF + X + M) | NMI default / NMF |",
             "|---|" + "---|" * 15]
    for r in rows:
        target = (r["X"] + r["M"] + r["default"]) / (3 * r["nmf"] + r["X"] + r["M"])
        lines.append(f"| {r['name']} | {r['n']:,} | {r['k']} | {r['ctx']} {r['nnz_M']:,} | "
                     f"{r['X']:.2f} | {r['M']:.2f} | {r['default']:.2f} ({r['iters']} it) | "
                     f"{r['one']:.2f} | {r['float64']:.2f} | {100 * r['same']:.2f} % | "
                     f"{r['nmf']:.2f} | {r['sk']:.2f} | {r['default'] / r['nmf']:.1f}× | "
                     f"{r['default'] / r['sk']:.1f}× | "
                     f"{target:.2f} | {r['nmi_default']:.3f} / {r['nmi_nmf']:.3f} |")
    ratios = [r["default"] / r["nmf"] for r in rows]
    targets = [(r["X"] + r["M"] + r["default"]) / (3 * r["nmf"] + r["X"] + r["M"]) for r in rows]
    sk_targets = [(r["X"] + r["M"] + r["default"]) / (3 * r["sk"] + r["X"] + r["M"])
                  for r in rows]
    with tempfile.TemporaryDirectory() as tmp:
        rss, sec = peak_rss_mb("ng20", 20, tmp) if "ng20" in names else (None, None)
    added = [r["default"] / r["one"] for r in rows]
    saved = [r["default"] / r["float64"] for r in rows]
    summary = (f"The default's five screened starts cost {np.median(added):.2f}× one start "
               f"(median; {min(added):.2f}-{max(added):.2f}×). "
               f"Default fit / NMF fit: median {np.median(ratios):.1f}×, largest "
               f"{max(ratios):.1f}×. Target ratio (X + M + default fit) / (3 NMF fits + X + M) "
               f"≤ 1 on {sum(t <= 1 for t in targets)}/{len(targets)} corpora (largest "
               f"{max(targets):.2f}). With scikit-learn's NMF as the unit instead (its own "
               f"start, no spherical k-means): ≤ 1 on {sum(t <= 1 for t in sk_targets)}/"
               f"{len(sk_targets)} (largest {max(sk_targets):.2f}). Our NMF fit includes the "
               "spherical k-means start (10 restarts), which the default also uses. "
               f"The default fits in float32 (as the command line): "
               f"{np.median(saved):.2f}× the float64 fit's time (median; "
               f"{min(saved):.2f}-{max(saved):.2f}×), labels equal to float64's on "
               f"{sum(r['same'] == 1.0 for r in rows)}/{len(rows)} corpora (lowest "
               f"{100 * min(r['same'] for r in rows):.2f} %).")
    if rss is not None:
        summary += (f" Peak memory of `semnmf cluster ng20 -k 20` (the whole command: loading, "
                    f"X, M, fit, topics, files): {rss:,.0f} MB, {sec:.0f} s wall.")
    write_markdown("default_cost.md", "What the default costs", [
        (None, f"Machine: {machine_line()}; threads: the library's default "
               f"({os.environ.get('SEMNMF_NUM_THREADS') or os.cpu_count()}). Medians of "
               f"{args.repeats} runs. Reproduce: `python benchmarks/bench_default_cost.py`."),
        ("Summary", summary), ("Per corpus", "\n".join(lines))])


if __name__ == "__main__":
    sys.exit(main())
