"""Cluster quality and fit time on the shared corpora, side by side with scikit-learn.

    python benchmarks/bench_quality.py [--seeds 10] [--runs 50] [--datasets cstr,...]

Methods: SphericalKMeans, our NMF, our SemanticNMF (defaults: relative λ, 10-word window
PPMI when raw text exists, else document PPMI), scikit-learn NMF(solver="mu") and
NMF(solver="cd"), all with k = number of classes on TF-IDF + L2 rows.

Two protocols:

- *seeds* (what a user gets): each method with its own default initialization and
  random_state = 0..seeds-1; mean ± sd of NMI, ARI, accuracy and fit time.
- *paper* (Neurocomputing §5.5): `runs` spherical k-means solutions; every NMF-like method
  (ours and scikit-learn's, init="custom") starts from each of them; the 10 best runs of
  each method by its own objective are kept; mean ± sd.

Finished cells are cached in benchmarks/cache/quality.json, so an interrupted run resumes.
Writes benchmarks/results/quality.md.
"""

import argparse
import os
import time
import warnings

import numpy as np
from sklearn.decomposition import NMF as SkNMF

from _common import (CACHE_ROOT, FIRST_SEVEN, load, load_cache, machine_line, mean_sd,
                     save_cache, table, write_markdown)
from semnmf import clustering_scores
from semnmf.models.registry import get_method
from semnmf.experiments.protocol import shared_start

CACHE = os.path.join(CACHE_ROOT, "quality.json")
METHODS = ["skmeans", "nmf", "snmf", "sklearn-mu", "sklearn-cd"]
PAPER = {  # Neurocomputing 2022, Table 2 (best 10 of 50 runs): NMI, ARI
    "cstr": {"skmeans": (0.76, 0.80), "nmf": (0.73, 0.75), "snmf": (0.76, 0.80)},
    "classic4": {"skmeans": (0.60, 0.47), "nmf": (0.59, 0.47), "snmf": (0.61, 0.47)},
    "ng5": {"skmeans": (0.72, 0.60), "nmf": (0.72, 0.60), "snmf": (0.78, 0.75)},
    "ng20": {"skmeans": (0.49, 0.30), "nmf": (0.49, 0.30), "snmf": (0.49, 0.33)},
}


def fit(method, X, M, k, seed, start=None):
    """Fit one method; returns (labels, objective to minimize, seconds). Ours come from the
    method registry (semnmf.models.registry; "snmf" is `semnmf cluster`'s name of
    SNMF (PPMI)), scikit-learn's are built here."""
    t = time.perf_counter()
    if method in ("skmeans", "nmf", "snmf"):
        registered = get_method(method)
        model = registered.build(k, seed, start)
        model.fit(X, M=M) if registered.word_context else model.fit(X)
        return model.labels_, registered.objective(model), time.perf_counter() - t
    solver = method.split("-")[1]
    model = SkNMF(k, solver=solver, random_state=seed,
                  **({"init": "custom"} if start is not None else {}))
    if start is not None:
        Z = model.fit_transform(X, W=start[0].copy(), H=np.ascontiguousarray(start[1].T))
    else:
        Z = model.fit_transform(X)
    objective = 0.5 * model.reconstruction_err_ ** 2
    return Z.argmax(axis=1), objective, time.perf_counter() - t


def run_dataset(name, seeds, runs, cache):
    corpus, X, k = load(name)
    M = None
    y = corpus.labels
    for method in METHODS:
        for seed in range(seeds):
            key = f"{name}|seeds|{method}|{seed}"
            if key in cache:
                continue
            if method == "snmf" and M is None:
                M = corpus.word_context(context=corpus.default_context())
            labels, objective, seconds = fit(method, X, M, k, seed)
            cache[key] = {**clustering_scores(y, labels), "objective": objective, "seconds": seconds}
            save_cache(CACHE, cache)
            print(key, {k_: round(v, 3) for k_, v in cache[key].items()}, flush=True)
    for run in range(runs):
        if all(f"{name}|paper|{m}|{run}" in cache for m in METHODS):
            continue
        (Z0, W0), km, _ = shared_start(X, k, run)  # spherical k-means, seed 1000 + run
        cache[f"{name}|paper|skmeans|{run}"] = {**clustering_scores(y, km.labels_),
                                               "objective": km.objective_, "seconds": 0.0}
        for method in METHODS[1:]:
            if method == "snmf" and M is None:
                M = corpus.word_context(context=corpus.default_context())
            labels, objective, seconds = fit(method, X, M, k, run, start=(Z0, W0))
            cache[f"{name}|paper|{method}|{run}"] = {**clustering_scores(y, labels),
                                                    "objective": objective, "seconds": seconds}
        save_cache(CACHE, cache)
        print(name, "paper run", run, flush=True)
    return X.shape, k, corpus


def report(datasets, cache, seeds, runs):
    sections = [(None, f"Machine: {machine_line()}.\n\nk = number of classes, TF-IDF + L2 rows. "
                 f"**seeds**: each method's default start, random_state 0..{seeds - 1}, mean ± sd "
                 "(what a user gets). **paper**: the Neurocomputing protocol: "
                 f"{runs} spherical k-means starts shared by every NMF-like method, mean ± sd of "
                 "the 10 best runs of each method by its own objective. SemanticNMF uses its "
                 "defaults (relative λ, window-10 PPMI when raw text exists, else "
                 "document-level PPMI). Time = fit only (seconds; the context matrix is built "
                 "once per dataset and not included).")]
    rows = []
    for name, (shape, k) in datasets.items():
        for method in METHODS:
            plain = [cache[f"{name}|seeds|{method}|{s}"] for s in range(seeds)
                     if f"{name}|seeds|{method}|{s}" in cache]
            paper = [cache[f"{name}|paper|{method}|{r}"] for r in range(runs)
                     if f"{name}|paper|{method}|{r}" in cache]
            best = sorted(paper, key=lambda r: r["objective"])[:10]
            cell = lambda runs_, key: mean_sd([r[key] for r in runs_]) if runs_ else "-"
            anchor = PAPER.get(name, {}).get(method)
            rows.append([name, method, cell(plain, "nmi"), cell(plain, "ari"), cell(plain, "accuracy"),
                         cell(plain, "seconds"), cell(best, "nmi"), cell(best, "ari"),
                         f"{anchor[0]:.2f} / {anchor[1]:.2f}" if anchor else "",
                         f"{len(plain)}/{len(paper)}"])
    header = ["dataset", "method", "NMI (seeds)", "ARI (seeds)", "accuracy (seeds)",
              "fit s (seeds)", "NMI (paper)", "ARI (paper)", "paper's NMI / ARI", "n seeds/runs"]
    sections.append(("Results", table(header, rows)))
    write_markdown("quality.md", "Cluster quality and fit time", sections)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--datasets", default=",".join(FIRST_SEVEN))
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    cache = load_cache(CACHE)
    done = {}
    for name in args.datasets.split(","):
        shape, k, _ = run_dataset(name, args.seeds, args.runs, cache)
        done[name] = (shape, k)
        report(done, cache, args.seeds, args.runs)


if __name__ == "__main__":
    main()
