"""``-k auto`` at several resolutions, on every shared corpus: the partition at the
recommended k, the range, the levels, the cost.

For every corpus and seed, four runs of ``semnmf.cluster`` on word counts (``semantics=
"none"``; ``-k auto`` runs on them): ``k="auto"`` (the recommended k, its range and every
level), the same method at the number of classes, at the recommended k (the cost unit:
"today's default run") and at the constant k = 8 (the constant with the best worst corpus
on the replayed curves of ``studies/bench_k_auto.py``). Labels only score.

Targets (the page lists every corpus, the worst first):

- NMI at the recommended k >= 0.85 x the NMI at the number of classes on every corpus,
  >= 0.95 x on average, and above the constant's;
- the range covers the number of classes on >= 18 of 25 corpora, ends <= 3x apart;
- cost: the ``k="auto"`` run <= 3x the run at the recommended k.

Reproduce: ``python benchmarks/bench_levels.py --seeds 0 1 2`` (resumable: the cache
``cache/levels.json`` keeps every finished corpus and seed), then ``--page-only``.
"""

import argparse
import json
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (CACHE_ROOT, RESULTS, all_corpora, atomic_write, load,  # noqa: E402
                     load_cache, machine_line, table)

CACHE = os.path.join(CACHE_ROOT, "levels.json")
CONSTANT = 8


def nmi(y, labels, labelled):
    from sklearn.metrics import normalized_mutual_info_score

    return float(normalized_mutual_info_score(y[labelled], np.asarray(labels)[labelled]))


def measure(name, seed):
    import semnmf

    corpus, _, n_classes = load(name, verbose=True)
    y, m = np.asarray(corpus.labels), np.asarray(corpus.labelled, bool)
    run = lambda k: semnmf.cluster(corpus, k, semantics="none", random_state=seed)  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        auto = run("auto")
        t_auto = time.perf_counter() - t
        cells = {"n_classes": int(n_classes), "n_documents": int(corpus.n_documents),
                 "method": auto.method, "k": int(auto.k), "k_range": auto.extra["k_range"],
                 "seconds_auto": t_auto, "timings_auto": auto.timings,
                 "levels": {str(k): nmi(y, v, m) for k, v in auto.levels.items()}}
        for key, k in (("classes", n_classes), ("recommended", auto.k), ("constant", CONSTANT)):
            t = time.perf_counter()
            result = run(int(k))
            cells[f"seconds_{key}"] = time.perf_counter() - t
            cells[f"nmi_{key}"] = nmi(y, result.labels, m)
    return cells


def page(cache):
    rows, summary = [], {}
    by_corpus = {}
    for key, cells in cache.items():
        name, _ = key.rsplit("/", 1)
        by_corpus.setdefault(name, []).append(cells)
    for name, runs in by_corpus.items():
        mean = lambda f: float(np.mean([f(c) for c in runs]))  # noqa: E731
        ratio = mean(lambda c: c["levels"][str(c["k"])] / max(c["nmi_classes"], 1e-12))
        ratio_const = mean(lambda c: c["nmi_constant"] / max(c["nmi_classes"], 1e-12))
        covered = mean(lambda c: c["k_range"][0] <= c["n_classes"] <= c["k_range"][1])
        cost = mean(lambda c: c["seconds_auto"] / c["seconds_recommended"])
        best_level = mean(lambda c: max(c["levels"].values()) / max(c["nmi_classes"], 1e-12))
        rows.append((ratio, name, runs[0]["n_classes"],
                     "/".join(str(c["k"]) for c in runs),
                     "/".join(f"{c['k_range'][0]}-{c['k_range'][1]}" for c in runs),
                     covered, ratio_const, best_level, cost, len(runs)))
    rows.sort()
    share = lambda step: [c["timings_auto"].get(step, 0.0) / c["seconds_recommended"]  # noqa: E731
                          for c in cache.values()]
    ratios = [r[0] for r in rows]
    consts = [r[6] for r in rows]
    lines = [f"# -k auto at several resolutions", "",
             machine_line() + ".", "",
             "Every shared corpus, word counts (the runs -k auto makes), seeds as listed. "
             "Per corpus: the NMI at the recommended k (the fit) over the NMI of the same "
             "method at the number of classes (**ratio**); the same for the constant "
             f"k = {CONSTANT}; whether the range covers the number of classes (share of "
             "seeds); the best level of the range over the NMI at the classes; the cost of "
             "the k=\"auto\" run (choice of k, fit, every level) over a run at the "
             "recommended k. Reproduce: `python benchmarks/bench_levels.py --seeds 0 1 2`.",
             "", "## Summary", "",
             table(["", "worst corpus", "mean", "corpora >= 0.85"],
                   [["ratio at the recommended k", f"{min(ratios):.3f}",
                     f"{np.mean(ratios):.3f}", f"{sum(r >= 0.85 for r in ratios)} of {len(rows)}"],
                    [f"ratio at the constant k = {CONSTANT}", f"{min(consts):.3f}",
                     f"{np.mean(consts):.3f}", f"{sum(r >= 0.85 for r in consts)} of {len(rows)}"]]),
             "", f"Range covers the number of classes on {sum(r[5] for r in rows):.1f} of "
             f"{len(rows)} corpora (mean over seeds); cost of k=\"auto\" over a run at the "
             f"recommended k: median {np.median([r[8] for r in rows]):.1f}x, max "
             f"{max(r[8] for r in rows):.1f}x.", "",
             "## Targets", "",
             f"- NMI at the recommended k >= 0.85 x at the number of classes on every corpus: "
             f"**missed** (worst {min(ratios):.3f}; {sum(r >= 0.85 for r in ratios)} of "
             f"{len(rows)} corpora reach it); >= 0.95 x on average: "
             f"{'met' if np.mean(ratios) >= 0.95 else '**missed**'} ({np.mean(ratios):.3f}).",
             f"- Better than the constant k = {CONSTANT} (the constant with the best worst "
             "corpus when replayed on the k study's curves, `studies/bench_k_auto.py`): worst "
             f"{min(ratios):.3f} against {min(consts):.3f}, mean {np.mean(ratios):.3f} against "
             f"{np.mean(consts):.3f}.",
             f"- The range covers the number of classes on >= 18 of 25 corpora: "
             f"{'met' if sum(r[5] for r in rows) >= 18 else '**missed**'} "
             f"({sum(r[5] for r in rows):.1f}); its ends are at most 3x apart (by construction).",
             f"- Cost <= 3x a run at the recommended k: **missed** (median "
             f"{np.median([r[8] for r in rows]):.1f}x): the label-free choice of k (spherical "
             f"k-means runs at every candidate on a sample) costs median "
             f"{np.median(share('choose_k')):.1f}x a run; the levels median "
             f"{np.median(share('levels')):.2f}x (max {max(share('levels')):.1f}x).",
             "- Recommending another level of the same fit by an elbow of its cohesion curve "
             "did not do better held out (`studies/levels_rule.py`, "
             "[levels_rule.md](levels_rule.md)).", "",
             "## Every corpus, the worst ratio first", "",
             table(["corpus", "classes", "recommended k", "range", "range covers",
                    "ratio", f"ratio k = {CONSTANT}", "best level / classes", "cost", "seeds"],
                   [[r[1], r[2], r[3], r[4], f"{r[5]:.2f}", f"{r[0]:.3f}", f"{r[6]:.3f}",
                     f"{r[7]:.3f}", f"{r[8]:.1f}x", r[9]] for r in rows])]
    atomic_write(os.path.join(RESULTS, "levels.md"),
                 lambda f: f.write("\n".join(lines) + "\n"))
    print("\n".join(lines[-len(rows) - 3:]))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--corpora", nargs="+")
    parser.add_argument("--page-only", action="store_true")
    args = parser.parse_args(argv)
    cache = load_cache(CACHE)
    if not args.page_only:
        for seed in args.seeds:
            for name in args.corpora or all_corpora():
                key = f"{name}/{seed}"
                if key in cache:
                    continue
                cache[key] = measure(name, seed)
                atomic_write(CACHE, lambda f: json.dump(cache, f))
                c = cache[key]
                print(f"  {key}: k {c['k']} range {c['k_range']} ratio "
                      f"{c['levels'][str(c['k'])] / max(c['nmi_classes'], 1e-12):.3f} cost "
                      f"{c['seconds_auto'] / c['seconds_recommended']:.1f}x", flush=True)
    if cache:
        page(cache)


if __name__ == "__main__":
    main()
