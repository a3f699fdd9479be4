"""New label-free rules for ``-k auto`` from the cached curves of ``bench_k.py`` (issue 14,
item 2): no clustering is refitted.

Each family below turns the curves of :func:`semnmf.experiments.selection.measure_candidates`
(cached in ``results/k_selection_curves.json``) into a k, with at most one constant. Three
honest scores per family, hits = k within ±30 % of the number of classes, as in bench_k.py:

- *alone*: leave-one-corpus-out (LOCO) over the family's constants only (the family itself
  was fixed by looking at all corpora: optimistic);
- *pool*: LOCO over bench_k.py's pool (every criterion of ``CRITERIA`` and its constants)
  plus this family: what bench_k.py would report with the family added to ``CRITERIA``;
- *pool, cross-seed*: the same, the rule chosen on the other 9 corpora's seed-s curves and
  applied to the held-out corpus's other seed (a check of seed noise in the choice).

    python benchmarks/bench_k_rules.py

Writes results/k_selection_rules.md.
"""

import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_k as B
from _common import write_markdown

PEN = B.PENALTIES
RAW_PEN = [-0.2, -0.15, -0.1, -0.07, -0.05, -0.03, -0.02, -0.01, 0.0, 0.01, 0.02]
LOG_PEN = [-1.0, -0.75, -0.5, -0.3, -0.2, -0.1, 0.0, 0.1, 0.2, 0.3, 0.5]
FRACTIONS = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
KNEE_SHIFTS = [-0.3, -0.2, -0.1, 0.0, 0.1, 0.2, 0.3]
PRIOR = [0.0, 0.25, 0.5, 1.0, 2.0, 4.0]
GAP_STEPS = [0.0, 0.005, 0.01, 0.015, 0.02, 0.03, 0.04]


def ks(c):
    return np.asarray(c["candidates"], dtype=float)


def raw(c, name):
    """A curve over the candidates; besides the measured ones: ``gap`` (log null dispersion
    minus log data dispersion), ``npmi_diversity`` and ``dnorm``, the consensus dispersion
    corrected for chance: (D - D0) / (1 - D0), D0 that of R = 5 independent random
    partitions into k equal clusters, 4 (p (1 - p) / R + (p - 1/2)^2) with p = 1/k."""
    a = lambda key: np.asarray(c[key], dtype=float)
    if name == "gap":
        return (np.log(np.maximum(1 - a("null_cosine"), 1e-12))
                - np.log(np.maximum(1 - a("cosine"), 1e-12)))
    if name == "npmi_diversity":
        return a("npmi") * a("diversity")
    if name == "dnorm":
        p = 1 / ks(c)
        d0 = 4 * (p * (1 - p) / 5 + (p - 0.5) ** 2)
        return (a("dispersion") - d0) / (1 - d0)
    return a(name)


def scale01(x):
    f = x[np.isfinite(x)]
    span = f.max() - f.min() if f.size else 0.0
    return (x - f.min()) / span if span > 0 else np.zeros_like(x)


def argmax(score):
    return int(np.argmax(np.where(np.isfinite(score), score, -np.inf)))


def local_maxima(x):
    out = []
    for i in range(len(x)):
        left = x[i - 1] if i > 0 else -np.inf
        right = x[i + 1] if i < len(x) - 1 else -np.inf
        if x[i] >= left and x[i] >= right:
            out.append(i)
    return out


def families():
    """name -> (description, function(curves, constant) -> candidate index, constants)."""
    fam = {}
    for crit in ("stability", "stability_nmi", "dnorm"):
        fam[f"pen:{crit}"] = (
            f"{crit} in [0, 1] + a log k" + (" (dnorm: consensus dispersion corrected for "
                                              "chance)" if crit == "dnorm" else ""),
            lambda c, a, crit=crit: argmax(scale01(raw(c, crit)) + a * np.log(ks(c))), PEN)
        fam[f"pen3:{crit}"] = (
            "the same over k ≥ 3 only (k = 2 dropped, the curve rescaled on k ≥ 3)",
            lambda c, a, crit=crit: 1 + argmax(scale01(raw(c, crit)[1:])
                                               + a * np.log(ks(c)[1:])), PEN)
        fam[f"rawpen:{crit}"] = (
            f"{crit} unscaled + a log k",
            lambda c, a, crit=crit: argmax(raw(c, crit) + a * np.log(ks(c))), RAW_PEN)
        fam[f"lastpeak:{crit}"] = (
            f"largest k that is a local maximum of {crit} at ≥ f × its maximum",
            lambda c, f, crit=crit: max(i for i in local_maxima(raw(c, crit))
                                        if raw(c, crit)[i] >= f * np.nanmax(raw(c, crit))),
            FRACTIONS)
        fam[f"firstpeak3:{crit}"] = (
            f"first local maximum of {crit} after k = 2 (no constant)",
            lambda c, _, crit=crit: 1 + min(local_maxima(raw(c, crit)[1:])), [0.0])
    fam["logpen:stability"] = ("log stability + a log k (stability × k^a)",
                               lambda c, a: argmax(np.log(np.maximum(raw(c, "stability"), 1e-3))
                                                   + a * np.log(ks(c))), LOG_PEN)

    def smooth(c, a):
        x = raw(c, "stability")
        y = x.copy()
        y[1:-1] = (x[:-2] + 2 * x[1:-1] + x[2:]) / 4
        y[0], y[-1] = (2 * x[0] + x[1]) / 3, (2 * x[-1] + x[-2]) / 3
        return argmax(scale01(y) + a * np.log(ks(c)))

    fam["smooth:stability"] = ("stability smoothed (1-2-1 over neighbours) in [0, 1] + a log k",
                               smooth, PEN)
    for curve in ("cosine", "gap", "dispersion"):
        def knee(c, s, curve=curve):
            x = np.log(ks(c))
            x = (x - x[0]) / (x[-1] - x[0])
            return argmax(scale01(raw(c, curve)) - x + s * x)

        fam[f"kneedle:{curve}"] = (
            f"kneedle: k farthest above the chord of {curve} vs log k (+ s × log k shift)",
            knee, KNEE_SHIFTS)

    def gap_first(c, t):
        d = np.diff(raw(c, "gap")) / np.diff(np.log(ks(c)))
        below = np.flatnonzero(d < t)
        return int(below[0]) if below.size else len(d)

    fam["gapfirst"] = ("first k whose gap rises by less than t per unit of log k", gap_first,
                       GAP_STEPS)
    for first, second in (("stability", "gap"), ("stability", "dispersion"),
                          ("stability_nmi", "gap"), ("stability", "silhouette"),
                          ("stability", "npmi_diversity")):
        fam[f"sum:{first}+{second}"] = (
            f"{first} + {second}, each in [0, 1], + a log k",
            lambda c, a, p=(first, second): argmax(scale01(raw(c, p[0])) + scale01(raw(c, p[1]))
                                                   + a * np.log(ks(c))), PEN)

        def ranks(c, a, p=(first, second)):
            r = sum(np.argsort(np.argsort(raw(c, q))) for q in p) / (2 * (len(ks(c)) - 1))
            return argmax(r + a * np.log(ks(c)))

        fam[f"ranksum:{first}+{second}"] = (f"rank of {first} + rank of {second} + a log k",
                                           ranks, PEN)
    for crit in ("stability", "stability_nmi"):
        def prior_mid(c, a, crit=crit):
            lk = np.log(ks(c))
            z = (lk - lk.mean()) / (lk.max() - lk.min())
            return argmax(scale01(raw(c, crit)) - a * z ** 2)

        def prior_n(c, a, crit=crit):
            lk = np.log(ks(c))
            z = (lk - np.log(c["n_documents"]) / 3) / (lk.max() - lk.min())
            return argmax(scale01(raw(c, crit)) - a * z ** 2)

        fam[f"prior_mid:{crit}"] = (
            f"{crit} in [0, 1] − a z², z: log k from the grid's middle (both ends penalized)",
            prior_mid, PRIOR)
        fam[f"prior_n:{crit}"] = ("the same, centred on k = n^(1/3) (n documents)", prior_n,
                                  PRIOR)
    return fam


def quality(found_combo, truth, names, seed_index=None):
    hits, errors = 0, []
    for name in names:
        ks_ = found_combo[name] if seed_index is None else [found_combo[name][seed_index]]
        for k in ks_:
            hits += B.hit(k, truth[name])
            errors.append(abs(math.log(k / truth[name])))
    return hits, -float(np.mean(errors))


def choose(found, truth, names, seed_index=None):
    return max(found, key=lambda cb: quality(found[cb], truth, names, seed_index)
               + (-abs(cb[1]),))


def loco(found, truth, names, seeds, cross_seed=False):
    """{held-out corpus: [k per seed]}, the rule chosen on the other corpora (and, with
    cross_seed, on their other seed)."""
    out = {}
    for held in names:
        others = [n for n in names if n != held]
        if cross_seed:
            out[held] = [found[choose(found, truth, others, 1 - s)][held][s]
                         for s in range(len(seeds))]
        else:
            out[held] = found[choose(found, truth, others)][held]
    return out


def score(ks_by_name, truth):
    hits = sum(B.hit(k, truth[n]) for n, ks_ in ks_by_name.items() for k in ks_)
    rel = [abs(k / truth[n] - 1) for n, ks_ in ks_by_name.items() for k in ks_]
    return hits, float(np.mean(rel))


def main():
    cache = B.load_cache()
    seeds = [0, 1]
    names = [n for n in B.DATASETS if all(f"{n}/{s}" in cache for s in seeds)]
    truth = {n: cache[f"{n}/{seeds[0]}"]["n_classes"] for n in names}
    n_total = len(names) * len(seeds)
    base = B.evaluate(cache, names, seeds)

    def run(found, **kw):
        picks = loco(found, truth, names, seeds, **kw)
        return picks, *score(picks, truth)

    base_picks, base_hits, base_rel = run(base)
    _, base_x, base_xrel = run(base, cross_seed=True)

    rows = []
    for name, (text, fn, params) in families().items():
        found = {(name, p): {n: [int(cache[f"{n}/{s}"]["candidates"][fn(cache[f"{n}/{s}"], p)])
                                 for s in seeds] for n in names} for p in params}
        alone, a_hits, a_rel = run(found)
        pool = dict(base)
        pool.update(found)
        _, p_hits, p_rel = run(pool)
        _, x_hits, x_rel = run(pool, cross_seed=True)
        best = choose(found, truth, names)
        rows.append((name, text, a_hits, a_rel, p_hits, p_rel, x_hits, x_rel, best[1],
                     quality(found[best], truth, names)[0], alone))

    head = ("| family | rule | alone | pool | pool, cross-seed | in-sample best (hits) | "
            + " | ".join(f"{n} ({truth[n]})" for n in names) + " |")
    lines = [head, "|---|---|---:|---:|---:|---:|" + "---:|" * len(names)]
    lines.append(f"| bench_k pool (reference) | every criterion of CRITERIA | – | "
                 f"{base_hits}/{n_total} ({base_rel:.0%}) | {base_x}/{n_total} ({base_xrel:.0%})"
                 " | – | " + " | ".join("/".join(map(str, base_picks[n])) for n in names) + " |")
    for (name, text, a_hits, a_rel, p_hits, p_rel, x_hits, x_rel, best_p, best_h,
         alone) in rows:
        cells = []
        for n in names:
            cell = "/".join(map(str, alone[n]))
            cells.append(cell if all(B.hit(k, truth[n]) for k in alone[n]) else f"*{cell}*")
        lines.append(f"| {name} | {text} | {a_hits}/{n_total} ({a_rel:.0%}) | "
                     f"{p_hits}/{n_total} ({p_rel:.0%}) | {x_hits}/{n_total} ({x_rel:.0%}) | "
                     f"{best_p:g} ({best_h}) | " + " | ".join(cells) + " |")

    intro = (
        "Every rule reads only the curves cached by `bench_k.py` "
        "(`results/k_selection_curves.json`, 10 corpora × 2 seeds); nothing is refitted. "
        "A hit: k within ±30 % of the number of classes. Each family has at most one "
        "constant. Columns: LOCO hits out of 20 (mean relative error |k − true| / true):\n\n"
        "- **alone**: LOCO over the family's own constants (the family itself was picked "
        "knowing every corpus: optimistic);\n"
        "- **pool**: LOCO over bench_k.py's pool (every criterion and constant of "
        "k_selection.md) plus the family, i.e. what k_selection.md would report with it "
        "added to `CRITERIA`;\n"
        "- **pool, cross-seed**: the pool's rule chosen on the other 9 corpora's seed-s "
        "curves, applied to the held-out corpus's other seed;\n"
        "- **in-sample best**: the family's best constant on all 20 (optimistic).\n\n"
        "Per corpus: k found per seed by the family alone under LOCO (*italic*: a miss on "
        "some seed). Reproduce: `python benchmarks/bench_k_rules.py`.")
    reading = (
        f"The reference, bench_k.py's LOCO, hits {base_hits}/{n_total} (mean relative "
        f"error {base_rel:.0%}). No family reaches the ±30 %-on-75 % target (15/20). "
        "No curve has a feature near k = 20 on 20 Newsgroups (either matrix): stability "
        "(ARI or NMI) is highest at the coarse 2-way split and flat or falling from 3 to "
        "50, the chance-corrected consensus dispersion likewise, the gap statistic and "
        "the cosine gains flatten near 10-12; every rule that does not pick k = 2 there "
        "picks 3 to 6 (k ≥ 3 rules) or 8 to 12 (gap, kneedle on gap, NPMI), which costs the "
        "few-class corpora. The one family that adds 3 hits in the pool, `pen3:stability` "
        "(ARI over k ≥ 3, a = −0.3), wins them on SearchSnippets (2) and one seed of M10, "
        "not on 20 Newsgroups (3-4 found for 20), at a constant at the edge of the grid "
        "whose neighbours lose 1-2 hits (−0.35: 13, −0.25: 13, −0.2: 12), and only +1 "
        "under the cross-seed check; it also can never return k = 2. It is therefore not "
        "adopted: the difference is within the seed and constant noise of the current "
        "choice. Most of the gap between the pool (11/20) and stability alone (13/20) is "
        "the pool switching between stability and stability_nmi from one held-out corpus "
        "to the next, not a better curve.")
    write_markdown("k_selection_rules.md", "Label-free choice of k: new rules from the cached "
                   "curves", [(None, intro), ("Families", "\n".join(lines)),
                              ("Reading", reading)])


if __name__ == "__main__":
    import argparse

    argparse.ArgumentParser(description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
