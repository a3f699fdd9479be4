"""Can the levels of one fit recommend a better k than the fit's own k? A study of
label-free rules read from the levels' cohesion curve.

For every shared corpus (seed 0): ``semnmf.cluster(corpus, "auto")`` (word counts), then
the levels of its model from 2 to ``min(3 k, n/10, 40)`` clusters
(:func:`semnmf.pipelines.levels.build_levels`), each with its cohesion (the spherical
k-means objective per document) and its NMI (labels only score). Rules replayed on them:
the fit's k (today's recommendation), and "the largest k up to which every level's
relative cohesion gain is at least ``max(rho * the first gain, tau)``" (an elbow), for a
grid of ``rho`` and ``tau``. Each rule is judged by the NMI at its k over the NMI of the
same method at the number of classes (``bench_levels.py``'s ``nmi_classes``, seed 0): the
worst corpus first, then the mean; leave-one-corpus-out over the rules.

Reproduce: ``python benchmarks/bench_levels.py --seeds 0`` (the flat runs at the number of
classes), then ``python benchmarks/studies/levels_rule.py`` (writes
``results/levels_rule.md``; resumable, cache ``cache/levels_rule.json``).
"""

import json
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _common import (CACHE_ROOT, RESULTS, all_corpora, atomic_write, load,  # noqa: E402
                     load_cache, machine_line, table)

CACHE = os.path.join(CACHE_ROOT, "levels_rule.json")
FLAT = os.path.join(CACHE_ROOT, "levels.json")  # bench_levels.py's cells
RHOS = (0, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5)
TAUS = (0, 0.005, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04)


def measure(name):
    import semnmf
    from semnmf.pipelines.levels import build_levels
    from sklearn.metrics import normalized_mutual_info_score as nmi

    corpus, _, n_classes = load(name)
    y, m = np.asarray(corpus.labels), np.asarray(corpus.labelled, bool)
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = semnmf.cluster(corpus, "auto", semantics="none", random_state=0)
        X = result.saved.vectorize(result.corpus)
        _, levels = build_levels(result.saved, X, 2, min(3 * result.k, X.shape[0] // 10, 40),
                                 random_state=0)
    return {"n_classes": int(n_classes), "k0": int(result.k),
            "seconds": time.perf_counter() - t,
            "levels": {str(level.k): {"nmi": float(nmi(y[m], level.labels[m])),
                                      "cohesion": level.cohesion} for level in levels}}


def elbow(cells, rho, tau):
    """The largest k up to which every level's relative cohesion gain is at least
    ``max(rho * first gain, tau)``."""
    ks = sorted(map(int, cells["levels"]))
    c = np.array([cells["levels"][str(k)]["cohesion"] for k in ks])
    gain = (c[1:] - c[:-1]) / c[:-1]
    floor = max(rho * gain[0], tau) if gain.size else 0.0
    i = 0
    while i < gain.size and gain[i] >= floor:
        i += 1
    return ks[i]


def page(cache, flat):
    names = [n for n in cache if n in flat]
    rules = {"the fit's k (today)": lambda cells: cells["k0"]}
    for rho in RHOS:
        for tau in TAUS:
            rules[f"elbow rho={rho:g} tau={tau:g}"] = (
                lambda cells, rho=rho, tau=tau: elbow(cells, rho, tau))
    ratio = {r: {n: cache[n]["levels"][str(f(cache[n]))]["nmi"] / flat[n] for n in names}
             for r, f in rules.items()}

    def score(rule, without=None):
        values = [v for n, v in ratio[rule].items() if n != without]
        return min(values), float(np.mean(values))

    held = []
    for n in names:
        rule = max(ratio, key=lambda r: score(r, n))
        held.append((ratio[rule][n], n, rule))
    held.sort()
    today = "the fit's k (today)"
    best = sorted(ratio, key=score, reverse=True)[:6]
    rows = [[r, f"{score(r)[0]:.3f}", f"{score(r)[1]:.3f}",
             sum(v >= 0.85 for v in ratio[r].values())] for r in [today] + best]
    lines = ["# Recommending k from the levels' cohesion (a study)", "",
             machine_line() + f", seed 0, {len(names)} corpora.", "",
             __doc__.split("\n\n")[1].replace("\n", " "), "",
             "**Finding**: no elbow of the cohesion curve beats the fit's own k held out: "
             f"leave-one-corpus-out worst {held[0][0]:.3f} ({held[0][1]}), mean "
             f"{np.mean([h[0] for h in held]):.3f}, against {score(today)[0]:.3f} and "
             f"{score(today)[1]:.3f} for the fit's k. The recommendation stays the fit's k.",
             "", "## The fit's k and the best rules in sample", "",
             table(["rule", "worst ratio", "mean ratio", "corpora >= 0.85"], rows), "",
             "## Held out (leave-one-corpus-out), the worst first", "",
             table(["corpus", "classes", "fit's k", "rule chosen without it", "its k", "ratio"],
                   [[n, cache[n]["n_classes"], cache[n]["k0"], r, rules[r](cache[n]),
                     f"{v:.3f}"] for v, n, r in held])]
    atomic_write(os.path.join(RESULTS, "levels_rule.md"),
                 lambda f: f.write("\n".join(lines) + "\n"))
    print("\n".join(lines[:12]))


def main():
    cache = load_cache(CACHE)
    for name in all_corpora():
        if name not in cache:
            cache[name] = measure(name)
            atomic_write(CACHE, lambda f: json.dump(cache, f))
            print(f"  {name}: k {cache[name]['k0']}, {cache[name]['seconds']:.0f} s", flush=True)
    flat = {key.split("/")[0]: cells["nmi_classes"]
            for key, cells in load_cache(FLAT).items() if key.endswith("/0")}
    if not flat:
        print("run python benchmarks/bench_levels.py --seeds 0 first (the flat runs).")
        return
    page(cache, flat)


if __name__ == "__main__":
    main()
