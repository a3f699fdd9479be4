"""The centroid step after the default fit, on every shared corpus.

Does moving every document to its most cosine-similar cluster centroid
(:func:`semnmf.refine.centroid_refine`, one assignment step of spherical k-means from the
fitted partition) lift the default where it loses, without giving back where it leads?

For every corpus of ``../shared/datasets`` (:func:`_common.all_corpora`), k = the number of
classes, seeds 0-4, the default run is made once without the step
(``semnmf.cluster(path, k, random_state=seed, refine="none")``: snmf-robust with raw text,
kl-consensus for counts only) and the candidates are computed from its labels, strengths
and X:

- ``none``: the default's labels;
- ``centroid``: one centroid step;
- ``gain > g %``: one centroid step where a document moves only if its cosine to the new
  centroid exceeds its cosine to its own cluster's by g % (``min_gain``);
- ``centroid x3`` / ``centroid x100``: the step repeated (3 times; until no document moves,
  at most 100: spherical k-means started from the default's partition);
- ``weakest 25/50/75 %``: the step applied only to that share of the documents with the
  weakest strength (the share of a document's factor row at its cluster; the consensus'
  agreement for kl-consensus), the others keep their cluster.

Each is scored by its margin over the best of spherical k-means, NMF and NMF-KL on that
corpus (their mean NMI over seeds 0-4 in ``results/portfolio.json``, as every study of
the per-kind default), chosen by leave-one-corpus-out with :func:`_common.worst_then_mean`. On seed 0 the
library's default run (with the step) is made too; the report says which candidates'
labels it equals.
The step's seconds are compared with the fit's (the run without the step), per corpus.

Cells are cached in ``benchmarks/cache/refine_centroid.json`` (resumable); the results are
written to ``benchmarks/results/refine_centroid.md``.

Reproduce: ``PYTHONPATH=src python benchmarks/studies/bench_refine_centroid.py`` (``--corpora`` to
restrict the measuring, ``--report`` to rewrite the results from the cache).
"""

import argparse
import json
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # benchmarks/: _common
from _common import (CACHE_ROOT, RESULTS, all_corpora, data_root, leave_one_out,  # noqa: E402
                     load_cache, machine_line, n_classes, save_cache, table,
                     worst_then_mean, write_markdown)

CACHE = os.path.join(CACHE_ROOT, "refine_centroid.json")
SEEDS = (0, 1, 2, 3, 4)
BASELINES = ("skmeans", "nmf", "nmf-kl")
SHARES = (0.25, 0.5, 0.75)
GAINS = (0.05, 0.1, 0.2, 0.5)
CANDIDATES = ("none", "centroid", *(f"gain > {round(100 * g)} %" for g in GAINS),
              "centroid x3", "centroid x100",
              *(f"weakest {round(100 * s)} %" for s in SHARES))


def steps(X, labels, k, n_steps):
    """The centroid step repeated up to ``n_steps`` times (stops when no document moves)."""
    from semnmf.refine import centroid_refine

    for _ in range(n_steps):
        new = centroid_refine(X, labels, k)[0]
        if np.array_equal(new, labels):
            break
        labels = new
    return labels


def measure_cell(path, k, seed, check):
    import semnmf
    from semnmf.metrics import clustering_scores
    from semnmf.refine import centroid_refine

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        run = semnmf.cluster(path, k, random_state=seed, refine="none")
        fit_s = time.perf_counter() - t
    y = run.corpus.labels
    labels, strength, X = np.asarray(run.labels), np.asarray(run.strengths), run.X
    t = time.perf_counter()
    one, _, _ = centroid_refine(X, labels, k)
    step_s = time.perf_counter() - t
    variants = {"none": labels, "centroid": one,
                **{f"gain > {round(100 * g)} %": centroid_refine(X, labels, k, min_gain=g)[0]
                   for g in GAINS},
                "centroid x3": steps(X, labels, k, 3),
                "centroid x100": steps(X, labels, k, 100)}
    order = np.argsort(strength, kind="stable")
    for share in SHARES:
        moved = labels.copy()
        weakest = order[: int(round(share * len(labels)))]
        moved[weakest] = one[weakest]
        variants[f"weakest {round(100 * share)} %"] = moved
    cell = {"method": run.method, "fit_s": fit_s, "step_s": step_s,
            "moved": float(np.mean(one != labels)),
            "n_clusters_after": int(np.unique(one[one >= 0]).size),
            "nmi": {name: clustering_scores(y, v)["nmi"] for name, v in variants.items()}}
    if check:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            default = semnmf.cluster(path, k, random_state=seed)
        cell["library_equal"] = [name for name, v in variants.items()
                                 if np.array_equal(np.asarray(default.labels), v)]
    return cell


def measure(names, cache):
    root = data_root()
    for name in names:
        path = os.path.join(root, name)
        k = n_classes(path)
        for seed in SEEDS:
            key = f"{name}/{seed}"
            if key in cache:
                continue
            cache[key] = measure_cell(path, k, seed, check=seed == 0)
            save_cache(CACHE, {key: cache[key]})
            c = cache[key]
            print(f"{key}: {c['method']} none {c['nmi']['none']:.3f} centroid "
                  f"{c['nmi']['centroid']:.3f} moved {c['moved']:.1%} step "
                  f"{c['step_s']:.2f}s fit {c['fit_s']:.1f}s", flush=True)


def best_baselines():
    with open(os.path.join(RESULTS, "portfolio.json"), encoding="utf-8") as f:
        nmi = json.load(f)["nmi"]
    return {c: max((nmi[m][c], m) for m in BASELINES) for c in nmi["skmeans"]}


def report(cache):
    best = best_baselines()
    corpora = [c for c in all_corpora() if all(f"{c}/{s}" in cache for s in SEEDS)]

    def mean(c, field):
        return float(np.mean([cache[f"{c}/{s}"][field] for s in SEEDS]))

    def margin(candidate, c):
        return float(np.mean([cache[f"{c}/{s}"]["nmi"][candidate] for s in SEEDS])) - best[c][0]

    score = worst_then_mean(margin)
    chosen = leave_one_out(corpora, CANDIDATES, score)
    held = {c: margin(chosen[c], c) for c in corpora}

    def summary(name, values):
        v = list(values)
        worst = min(range(len(v)), key=v.__getitem__)
        return [name, f"{v[worst]:+.3f}", corpora[worst], f"{np.mean(v):+.3f}",
                f"{sum(x >= -0.02 for x in v)} / {len(v)}"]

    rows = [summary(c, [margin(c, f) for f in corpora]) for c in CANDIDATES]
    rows.append(summary("**leave-one-corpus-out**", [held[f] for f in corpora]))
    picks = {}
    for c in corpora:
        picks[chosen[c]] = picks.get(chosen[c], 0) + 1
    on_all = max(CANDIDATES, key=lambda c: score(c, corpora))

    order = sorted(corpora, key=lambda c: margin(on_all, c))
    per_corpus = []
    for c in order:
        kind = cache[f"{c}/0"]["method"]
        per_corpus.append([c, kind, f"{best[c][1]} {best[c][0]:.3f}"]
                          + [f"{margin(x, c):+.3f}" if margin(x, c) >= -0.02
                             else f"**{margin(x, c):+.3f}**" for x in CANDIDATES]
                          + [f"{mean(c, 'moved'):.1%}",
                             f"{mean(c, 'step_s') / mean(c, 'fit_s'):.3f}"])
    ratios = [mean(c, "step_s") / mean(c, "fit_s") for c in corpora]
    library = {}
    for c in corpora:
        for name in cache[f"{c}/0"].get("library_equal", []):
            library[name] = library.get(name, 0) + 1
    fewer = [f"{key.split('/')[0]} seed {key.split('/')[1]} ({cell['n_clusters_after']})"
             for key, cell in cache.items() if key.split("/")[0] in corpora
             and cell["n_clusters_after"] < n_classes(os.path.join(data_root(),
                                                                    key.split("/")[0]))]
    gains = {c: margin(on_all, c) - margin("none", c) for c in corpora}
    top = max(gains, key=gains.get)
    rest = np.mean([g for c, g in gains.items() if c != top])

    def against_chosen(x):
        below = [f"{c} ({margin(x, c) - margin(on_all, c):+.3f})" for c in corpora
                 if margin(x, c) < margin(on_all, c) - 0.01]
        return (f"- `{x}`: worst {min(margin(x, c) for c in corpora):+.3f}, mean "
                f"{np.mean([margin(x, c) for c in corpora]):+.3f}; below `{on_all}` by more "
                f"than 0.01 on {', '.join(below) or 'no corpus'}.\n")

    verdict = (
        f"Chosen on all {len(corpora)} corpora (worst fold, then mean): **{on_all}**. "
        "Leave-one-corpus-out chooses "
        + ", ".join(f"`{k}` on {v} folds" for k, v in sorted(picks.items(), key=lambda kv: -kv[1]))
        + f"; held out: worst {min(held.values()):+.3f} ({min(held, key=held.get)}), mean "
        f"{np.mean(list(held.values())):+.3f}, {sum(v >= -0.02 for v in held.values())} of "
        f"{len(corpora)} corpora ≥ −0.02 (the default without the step: worst "
        f"{min(margin('none', c) for c in corpora):+.3f}, mean "
        f"{np.mean([margin('none', c) for c in corpora]):+.3f}).\n\n"
        f"- `{on_all}`'s mean gain over the default without a step is "
        f"{np.mean(list(gains.values())):+.3f}; without its largest gain ({top}, "
        f"{gains[top]:+.3f}) it is {rest:+.3f}. It gains on "
        f"{sum(g > 0.002 for g in gains.values())} corpora and loses on "
        f"{sum(g < -0.002 for g in gains.values())} (beyond ±0.002): worst "
        f"{min(gains.values()):+.3f} ({min(gains, key=gains.get)}). By more than 0.01 it "
        f"gains on {', '.join(f'{c} ({g:+.3f})' for c, g in sorted(gains.items(), key=lambda cg: -cg[1]) if g > 0.01)} "
        f"and loses on {', '.join(f'{c} ({g:+.3f})' for c, g in sorted(gains.items(), key=lambda cg: cg[1]) if g < -0.01)}: "
        "it moves the default towards spherical k-means, which is the best baseline on "
        f"{sum(best[c][1] == 'skmeans' for c in corpora)} of the corpora.\n"
        f"- The targets (≥ −0.02 on every corpus, ≥ +0.02 on average): worst "
        f"{'met' if min(held.values()) >= -0.02 else 'not met'}, mean "
        f"{'met' if np.mean(list(held.values())) >= 0.02 else 'not met'}.\n"
        + "".join(against_chosen(x) for x in CANDIDATES if x not in ("none", on_all)) +
        f"- Cost: the step takes {np.median(ratios):.3f}x the fit's seconds (median over "
        f"the corpora; largest {max(ratios):.3f}x).\n"
        "- The library's default run (seed 0) gives the labels of "
        + ", ".join(f"`{name}` on {n}" for name, n in library.items())
        + f" of the {len(corpora)} corpora.\n"
        f"- Runs where the step left fewer than k non-empty clusters: "
        f"{', '.join(fewer) if fewer else 'none'}.")
    header = (["candidate", "worst margin", "worst on", "mean margin", "corpora ≥ −0.02"])
    sections = [
        (None, f"{len(corpora)} shared corpora, seeds {SEEDS[0]}-{SEEDS[-1]}, k = number of "
               "classes. Margin = mean NMI over the seeds minus the best of spherical "
               "k-means, NMF and NMF-KL on that corpus (their means over the same seeds, from "
               "`portfolio.json`). The default run is made once per corpus and seed without "
               "the step (`refine=\"none\"`); every candidate is computed from its labels, "
               "strengths and X (see the script's docstring).\n\n"
               f"{machine_line()}; 2 cores shared with other work, so seconds are noisy.\n\n"
               "Reproduce: `PYTHONPATH=src python benchmarks/studies/bench_refine_centroid.py`."),
        ("Verdict", verdict),
        ("Summary per candidate", table(header, rows)),
        (f"Every corpus, losses first (sorted by {on_all}'s margin; bold: below −0.02)",
         table(["corpus", "default", "best baseline"] + list(CANDIDATES)
               + ["moved by the plain step", "step s / fit s"], per_corpus)),
        ("Leave-one-corpus-out, per held-out corpus",
         table(["held-out corpus", "chosen on the others", "held-out margin"],
               [[c, chosen[c], f"{held[c]:+.3f}"]
                for c in sorted(corpora, key=held.get)])),
    ]
    write_markdown("refine_centroid.md", "The centroid step after the default fit, on the "
                   "25 shared corpora", sections)
    print(verdict)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpora", nargs="*", help="measure these corpora only")
    parser.add_argument("--report", action="store_true", help="rewrite the results only")
    args = parser.parse_args()
    cache = load_cache(CACHE)
    if not args.report:
        measure(args.corpora or all_corpora(), cache)
    report(cache)


if __name__ == "__main__":
    main()
