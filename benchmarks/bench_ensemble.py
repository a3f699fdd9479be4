"""Cluster ensembles of SemanticNMF runs: Table 3 of the Neurocomputing paper (SN §5.6).

    python benchmarks/bench_ensemble.py [--runs 20] [--datasets cstr,classic4,ng5,ng20]
                                        [--bic-range 2] [--cspa-max-samples 25000]
                                        [--inits skmeans,random] [--supplement-runs N]

For each dataset, k = number of classes, TF-IDF + L2 rows, M = window-10 PPMI (document
PPMI for a counts-only corpus, as `semnmf cluster` does):

- `runs` SemanticNMF fits started from spherical k-means (init="skmeans", random_state
  0..runs-1) and `runs` started at random (init="random", same seeds);
- three ensembles, as SN: "Skmeans" = the 10 best skmeans-started runs by objective,
  "Random" = the 10 best random-started runs, "Skmeans & Random" = the 5 best of each;
- for each ensemble: mean ± sd of NMI / ARI of its members, the CE consensus
  (`consensus(..., method="anmi")`: the best of CSPA / HGPA / MCLA by ANMI), the MMM
  consensus (`mixture_consensus(..., n_components=k)`: Rmixmod's 10 qualitative models,
  BIC), the diversity (mean pairwise NMI / ARI, SN Figure 7), and the number of
  clusters that BIC picks when n_clusters ranges over k ± bic_range;
- the GTNMF refinement (semnmf.refine) of the MMM consensus, from its posteriors;
- cost: time of the fits vs time of the consensus functions and the refinement.

`--inits random-tol1e-6 [--supplement-runs N]` adds random starts with tol=1e-6 and the
strategies built on them (the default tol stops NG5 / NG20 random starts at iteration 3).

Every fitted run (labels, objective, seconds) and every consensus is cached in
benchmarks/cache/ensemble.json, so an interrupted run resumes. Writes
benchmarks/results/ensemble.md, keeping its hand-written "What we see" section.
"""

import argparse
import os
import re
import time
import warnings

import numpy as np

from _common import (CACHE_ROOT, RESULTS, TABLE3, load, load_cache, machine_line,
                     mean_sd, save_cache, table, write_markdown)
from semnmf import SemanticNMF, ari, nmi
from semnmf.ensemble import consensus, mixture_consensus, pairwise_agreement
from semnmf.refine import refine

CACHE = os.path.join(CACHE_ROOT, "ensemble.json")
# start name -> SemanticNMF parameters. "random-tol1e-6" is a supplement: with the default
# tol=1e-4 the random starts of NG5 stop after 3 iterations (see the results file).
INITS = {"skmeans": {"init": "skmeans"}, "random": {"init": "random"},
         "random-tol1e-6": {"init": "random", "tol": 1e-6}}
MAIN_INITS = ["skmeans", "random"]
STRATEGIES = {  # name -> [(start, how many of its best runs)]
    "Skmeans": [("skmeans", 10)],
    "Random": [("random", 10)],
    "Skmeans & Random": [("skmeans", 5), ("random", 5)],
    "Random (tol 1e-6)": [("random-tol1e-6", 10)],
    "Skmeans & Random (tol 1e-6)": [("skmeans", 5), ("random-tol1e-6", 5)],
}
PAPER_STRATEGY = {"Random (tol 1e-6)": "Random",
                  "Skmeans & Random (tol 1e-6)": "Skmeans & Random"}
# Neurocomputing 2022, Table 3: {dataset: {strategy: (mean NMI, sd NMI, CE NMI, MMM NMI,
#                                                    mean ARI, sd ARI, CE ARI, MMM ARI)}}
PAPER = {
    "cstr": {"Skmeans": (0.76, 0.01, 0.76, 0.76, 0.80, 0.01, 0.80, 0.80),
             "Random": (0.75, 0.00, 0.75, 0.75, 0.80, 0.00, 0.80, 0.80),
             "Skmeans & Random": (0.75, 0.00, 0.75, 0.77, 0.80, 0.00, 0.80, 0.81)},
    "classic4": {"Skmeans": (0.61, 0.03, 0.60, 0.60, 0.47, 0.00, 0.47, 0.47),
                 "Random": (0.54, 0.00, 0.49, 0.54, 0.38, 0.00, 0.31, 0.38),
                 "Skmeans & Random": (0.58, 0.05, 0.57, 0.65, 0.48, 0.05, 0.40, 0.47)},
    "ng5": {"Skmeans": (0.78, 0.00, 0.78, 0.78, 0.75, 0.01, 0.75, 0.74),
            "Random": (0.67, 0.00, 0.67, 0.67, 0.64, 0.00, 0.64, 0.64),
            "Skmeans & Random": (0.73, 0.06, 0.67, 0.77, 0.69, 0.06, 0.60, 0.79)},
    "ng20": {"Skmeans": (0.49, 0.02, 0.50, 0.50, 0.33, 0.03, 0.33, 0.30),
             "Random": (0.47, 0.01, 0.47, 0.47, 0.32, 0.02, 0.33, 0.33),
             "Skmeans & Random": (0.48, 0.02, 0.50, 0.52, 0.32, 0.02, 0.34, 0.37)},
}
NAMES = {"cstr": "CSTR", "classic4": "CLASSIC4", "ng5": "NG5", "ng20": "NG20"}


def fit_runs(name, runs, inits, cache, supplement_runs=None):
    """Fit (or find in the cache) the `runs` SemanticNMF runs of each start
    (`supplement_runs` for the supplementary starts, default `runs`)."""
    corpus, X, k = load(name)
    M = None
    for init in inits:
        count = runs if init in MAIN_INITS or supplement_runs is None else supplement_runs
        for seed in range(count):
            key = f"{name}|{init}|{seed}"
            if key in cache:
                continue
            if M is None:
                t = time.perf_counter()
                M = corpus.word_context(context=corpus.default_context(), window=10)
                cache[f"{name}|context_seconds"] = time.perf_counter() - t
            t = time.perf_counter()
            model = SemanticNMF(k, random_state=seed, **INITS[init]).fit(X, M=M)
            seconds = time.perf_counter() - t
            cache[key] = {"labels": model.labels_.tolist(), "objective": float(model.objective_),
                          "seconds": seconds, "n_iter": int(getattr(model, "n_iter_", -1))}
            save_cache(CACHE, cache)
            print(f"{key}: NMI {nmi(corpus.labels, model.labels_):.3f} "
                  f"obj {model.objective_:.6g} {seconds:.1f}s", flush=True)
    return corpus.labels, k, X, corpus.default_context()


def n_runs(name, init, runs, cache):
    """How many runs of a start are used: `runs` for the main starts; for a supplementary
    one, the seeds 0, 1, ... found in the cache (at most `runs`)."""
    if init in MAIN_INITS:
        return runs
    count = 0
    while count < runs and f"{name}|{init}|{count}" in cache:
        count += 1
    return count


def available(name, runs, strategy, cache):
    """Whether every start of a strategy has its runs (at least `top` of them)."""
    return all(all(f"{name}|{i}|{r}" in cache for r in range(runs)) if i in MAIN_INITS
               else n_runs(name, i, runs, cache) >= top for i, top in STRATEGIES[strategy])


def kept(name, runs, strategy, cache):
    """The runs of an ensemble: the best `top` of each start by objective."""
    members = []
    for init, top in STRATEGIES[strategy]:
        fitted = [cache[f"{name}|{init}|{s}"] for s in range(n_runs(name, init, runs, cache))]
        members += sorted(fitted, key=lambda r: r["objective"])[:top]
    return members


def combine(name, runs, strategy, y, k, bic_range, cspa_max, cache):
    """Consensus cells of one ensemble (cached)."""
    key = f"{name}|consensus|{strategy}|R={runs}|bic={bic_range}|cspa_max={cspa_max}"
    key += "".join(f"|{i}:R={n_runs(name, i, runs, cache)}" for i, _ in STRATEGIES[strategy]
                   if i not in MAIN_INITS)
    if key in cache:
        return cache[key]
    members = kept(name, runs, strategy, cache)
    L = np.column_stack([np.asarray(r["labels"]) for r in members])
    # SemanticNMF labels a document without any term -1 in every run; the consensus
    # functions refuse such rows, so they are left out and keep -1 in the consensus too
    # (as in the members, whose NMI / ARI count them as one more cluster).
    rows = ~(L == -1).all(axis=1)
    t = time.perf_counter()
    ce = consensus(L[rows], k, method="anmi", max_samples=cspa_max, random_state=0)
    ce_seconds = time.perf_counter() - t
    t = time.perf_counter()
    mmm, model = mixture_consensus(L[rows], n_components=k, random_state=0, return_model=True)
    mmm_seconds = time.perf_counter() - t
    ce.labels, mmm = _fill(ce.labels, rows), _fill(mmm, rows)
    ce.candidates = {m: _fill(c, rows) for m, c in ce.candidates.items()}
    cell = {
        "nmi": [nmi(y, np.asarray(r["labels"])) for r in members],
        "ari": [ari(y, np.asarray(r["labels"])) for r in members],
        "ce_nmi": nmi(y, ce.labels), "ce_ari": ari(y, ce.labels), "ce_method": ce.method,
        "ce_anmi": ce.scores, "ce_skipped": ce.skipped,
        "ce_candidates": {m: [nmi(y, c), ari(y, c)] for m, c in ce.candidates.items()},
        "ce_seconds": ce_seconds,
        "mmm_nmi": nmi(y, mmm), "mmm_ari": ari(y, mmm), "mmm_model": model.model_,
        "mmm_clusters": int(np.unique(mmm[mmm >= 0]).size), "mmm_seconds": mmm_seconds,
        "pair_nmi": float(_upper_mean(pairwise_agreement(L, "nmi"))),
        "pair_ari": float(_upper_mean(pairwise_agreement(L, "ari"))),
        "members_seconds": float(sum(r["seconds"] for r in members)),
        "unlabelled_documents": int((~rows).sum()),
    }
    if bic_range:
        grid = range(max(2, k - bic_range), k + bic_range + 1)
        t = time.perf_counter()
        free, fmodel = mixture_consensus(L[rows], n_components=grid, random_state=0,
                                         return_model=True)
        free = _fill(free, rows)
        cell.update(bic_seconds=time.perf_counter() - t, bic_k=int(fmodel.n_components_),
                    bic_model=fmodel.model_, bic_clusters=int(np.unique(free[free >= 0]).size),
                    bic_nmi=nmi(y, free), bic_ari=ari(y, free))
    cache[key] = cell
    save_cache(CACHE, cache)
    print(key, {k_: (round(v, 3) if isinstance(v, float) else v) for k_, v in cell.items()
                if not isinstance(v, (list, dict))}, flush=True)
    return cell


def refine_cell(name, runs, strategy, X, y, k, cache):
    """GTNMF refinement (semnmf.refine) of the MMM consensus: the kNN replicator dynamics
    started from the latent class posteriors (cached)."""
    key = f"{name}|refine|{strategy}|R={runs}" + "".join(
        f"|{i}:R={n_runs(name, i, runs, cache)}" for i, _ in STRATEGIES[strategy]
        if i not in MAIN_INITS)
    if key in cache:
        return cache[key]
    L = np.column_stack([np.asarray(r["labels"]) for r in kept(name, runs, strategy, cache)])
    rows = ~(L == -1).all(axis=1)
    t = time.perf_counter()
    _, model = mixture_consensus(L[rows], n_components=k, random_state=0, return_model=True)
    P = np.full((L.shape[0], model.n_components_), 1.0 / model.n_components_)
    P[rows] = model.predict_proba(L[rows])
    mmm_seconds = time.perf_counter() - t
    t = time.perf_counter()
    labels, _ = refine(X, P)
    cell = {"seconds": time.perf_counter() - t, "mmm_seconds": mmm_seconds,
            "nmi": nmi(y, labels), "ari": ari(y, labels)}
    cache[key] = cell
    save_cache(CACHE, cache)
    print(key, {k_: round(v, 3) for k_, v in cell.items()}, flush=True)
    return cell


def _fill(labels, rows):
    """Consensus labels of the kept rows, -1 for the others."""
    out = np.full(rows.shape[0], -1, dtype=np.int64)
    out[rows] = labels
    return out


def _upper_mean(A):
    return np.nanmean(A[np.triu_indices(A.shape[0], 1)])


def label(name, runs, strategy, cache):
    """Strategy name, with the number of supplementary runs when it is not R."""
    extra = [n_runs(name, i, runs, cache) for i, _ in STRATEGIES[strategy]
             if i not in MAIN_INITS]
    return strategy + (f" [R = {extra[0]}]" if extra and extra[0] != runs else "")


def f2(x):
    return f"{x:.2f}"


def report(done, runs, bic_range, cspa_max, cache):
    intro = (
        f"Machine: {machine_line()}.\n\n"
        "**Protocol** (SN §5.6, Table 3). For each dataset: k = number of classes, TF-IDF + "
        "L2 rows, SemanticNMF with its defaults (relative λ, max_iter 200) and M = "
        "window-10 PPMI (document-level PPMI for CSTR, which ships counts only). "
        f"**R = {runs}** runs started from spherical k-means (`init=\"skmeans\"`, "
        f"random_state 0..{runs - 1}) and R runs started at random (`init=\"random\"`, "
        f"same seeds); the paper uses R = 50. Ensembles: *Skmeans* = the 10 runs of lowest "
        "objective among the skmeans-started ones, *Random* = the same among the random "
        "ones, *Skmeans & Random* = the 5 best of each. For each ensemble: mean ± sd of the "
        "members' NMI / ARI against the true classes; **CE** = `consensus(L, k, "
        "method=\"anmi\", random_state=0)` (the best of CSPA / HGPA / MCLA by ANMI with the "
        "ensemble; the winner is named); **MMM** = `mixture_consensus(L, n_components=k, "
        "random_state=0)` (latent class model, Rmixmod's 10 qualitative models, BIC "
        "chooses the model; k fixed as in the paper). NMI is the arithmetic-mean "
        "normalization (`semnmf.nmi` default); the diversity columns use the geometric one "
        "(`pairwise_agreement`, Strehl & Ghosh's). CSPA builds an n x n graph and the "
        f"library skips it above 10000 documents; here `max_samples={cspa_max}` so that CE "
        "includes it on NG20 too, as in the paper. Documents without any term (1 in "
        "CLASSIC4) get label -1 from SemanticNMF in every run; the consensus functions "
        "refuse such rows, so they are left out of the consensus and keep -1 (counted as "
        "one more cluster by NMI / ARI, as for the members). The *paper* columns are "
        "transcribed from Table 3 (R = 50; the parentheses of the CE / MMM cells dropped). "
        "*MMM + GTNMF* (not in the paper) refines the MMM consensus with "
        "`semnmf.refine.refine(X, P)` (defaults), P = the latent class posteriors.\n\n"
        "*Supplement*: with SemanticNMF's default `tol=1e-4` the random starts of NG5 stop "
        "after 3 iterations, far from a minimum (see below); the strategies marked "
        "*(tol 1e-6)* use R random starts with `tol=1e-6` instead (same seeds, still "
        "`max_iter=200`), on the datasets where they were run "
        "(`--inits random-tol1e-6`); they are compared with the paper's Random and "
        "Skmeans & Random columns.")
    sections = [(None, intro)]
    rows, div_rows, bic_rows, cost_rows, ratio_rows = [], [], [], [], []
    for name, (y, k, X, context) in done.items():
        shape = X.shape
        cells = {s: combine(name, runs, s, y, k, bic_range, cspa_max, cache)
                 for s in STRATEGIES if available(name, runs, s, cache)}
        refined = {s: refine_cell(name, runs, s, X, y, k, cache) for s in cells}
        for s, c in cells.items():
            p = PAPER.get(name, {}).get(PAPER_STRATEGY.get(s, s))
            for metric, idx in (("NMI", 0), ("ARI", 4)):
                m = metric.lower()
                rows.append([
                    NAMES.get(name, name) if (s == "Skmeans" and metric == "NMI") else "",
                    label(name, runs, s, cache) if metric == "NMI" else "", metric,
                    mean_sd(c[m]),
                    f2(c[f"ce_{m}"]) + (f" ({c['ce_method']})" if metric == "NMI" else ""),
                    f2(c[f"mmm_{m}"]),
                    f"{p[idx]:.2f} ± {p[idx + 1]:.2f}" if p else "", f2(p[idx + 2]) if p else "",
                    f2(p[idx + 3]) if p else "", f2(refined[s][m])])
            div_rows.append([NAMES.get(name, name), label(name, runs, s, cache),
                             f"{c['pair_nmi']:.3f}",
                             f"{c['pair_ari']:.3f}",
                             ", ".join(f"{m} {v:.3f}" for m, v in c["ce_anmi"].items()),
                             ", ".join(f"{m} {v[0]:.2f}/{v[1]:.2f}"
                                       for m, v in c["ce_candidates"].items())])
            if "bic_k" in c:
                bic_rows.append([NAMES.get(name, name), label(name, runs, s, cache),
                                 c["mmm_model"], c["mmm_clusters"],
                                 f"{c['bic_k']} ({c['bic_model']}, {c['bic_clusters']} non-empty)",
                                 f"{c['bic_nmi']:.2f} / {c['bic_ari']:.2f}",
                                 f"{c['bic_seconds']:.1f}"])
        fits = [cache[f"{name}|{i}|{s}"]["seconds"] for i in MAIN_INITS for s in range(runs)]
        counts = {i: n_runs(name, i, runs, cache) for i in INITS}
        per_init = {i: np.mean([cache[f"{name}|{i}|{s}"]["seconds"] for s in range(c)])
                    for i, c in counts.items() if c}
        iters = {i: np.mean([cache[f"{name}|{i}|{s}"]["n_iter"] for s in range(counts[i])])
                 for i in per_init}
        cost_rows.append([NAMES.get(name, name), f"{shape[0]} x {shape[1]}", k, context,
                          f"{cache.get(f'{name}|context_seconds', float('nan')):.1f}",
                          " / ".join(f"{per_init[i]:.2f} ({iters[i]:.0f} it)" for i in per_init),
                          f"{sum(fits):.0f}"])
        for s, c in cells.items():
            starts = [i for i, _ in STRATEGIES[s]]
            drawn = sum(cache[f"{name}|{i}|{r}"]["seconds"] for i in starts
                        for r in range(counts[i]))
            both = c["ce_seconds"] + c["mmm_seconds"] + refined[s]["seconds"]
            ratio_rows.append([NAMES.get(name, name), label(name, runs, s, cache),
                               f"{c['members_seconds']:.1f}", f"{drawn:.0f}",
                               f"{c['ce_seconds']:.2f}", f"{c['mmm_seconds']:.2f}",
                               f"{refined[s]['seconds']:.2f}",
                               f"{both:.2f}", f"{both / c['members_seconds']:.3f}",
                               f"{both / drawn:.4f}"])
    header = ["dataset", "strategy", "metric", "ours mean ± sd", "ours CE (winner)", "ours MMM",
              "paper mean ± sd", "paper CE", "paper MMM", "ours MMM + GTNMF"]
    sections.append(("Table 3: members, CE and MMM consensus", table(header, rows)))
    sections.append(("Diversity of the kept solutions (SN Figure 7) and the CE candidates",
                     "Mean pairwise agreement between the 10 kept partitions of each strategy "
                     "(1 = no diversity), the ANMI of each CE candidate with the ensemble, "
                     "and each candidate's NMI / ARI with the true classes.\n\n"
                     + table(["dataset", "strategy", "pairwise NMI", "pairwise ARI",
                              "ANMI of candidates", "candidates' NMI / ARI"], div_rows)))
    if bic_rows:
        sections.append((f"MMM with the number of clusters chosen by BIC (k ± {bic_range})",
                         table(["dataset", "strategy", "model at n_components=k",
                                "non-empty at k", "BIC's choice",
                                "NMI / ARI of BIC's choice", "seconds"], bic_rows)))
    sections.append(("Cost: runs vs consensus", (
        "Wall-clock seconds on the shared 2-core machine (other jobs were running, so "
        "times are inflated and noisy). *s per fit*: mean SemanticNMF fit time and mean "
        "iterations, for the skmeans start (including its spherical k-means) / the random "
        "start / the random start with tol 1e-6. *2R fits*: all the fits of the main "
        "protocol (R skmeans + R default random). Context = building M, once per dataset, "
        "not in the fits.\n\n"
        + table(["dataset", "n x terms", "k", "M", "context s", "s per fit",
                 "2R fits s"], cost_rows)
        + "\n\nPer ensemble: *kept fits* = fit time of the 10 runs it combines; *all its "
        "runs* = fit time of all the runs its members were chosen from (R or 2R); *CE* = "
        "CSPA + HGPA + MCLA + ANMI selection; *MMM* = 10 models x 5 EM starts at "
        "n_clusters = k (the BIC sweep of the previous section is extra and not counted); "
        "*GTNMF* = `semnmf.refine.refine(X, P)` with its defaults, P the MMM posteriors. "
        "The ratios divide CE + MMM + GTNMF by those fit times.\n\n"
        + table(["dataset", "strategy", "kept fits s", "all its runs s", "CE s", "MMM s",
                 "GTNMF s", "total s", "ratio / kept fits", "ratio / all its runs"],
                ratio_rows))))
    return sections


def previous_notes():
    """The hand-written "What we see" section of the current results file, kept on rewrite."""
    path = os.path.join(RESULTS, "ensemble.md")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        text = f.read()
    match = re.search(r"^## What we see\n(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
    return match.group(1).strip() if match else None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--datasets", default=",".join(TABLE3))
    parser.add_argument("--bic-range", type=int, default=2,
                        help="also let BIC choose n_clusters in k ± this (0: skip)")
    parser.add_argument("--cspa-max-samples", type=int, default=25000,
                        help="max_samples of cspa (its O(n^2) co-association graph); the "
                             "library default 10000 would leave CSPA out of CE on NG20")
    parser.add_argument("--inits", default=",".join(MAIN_INITS),
                        help=f"starts to fit, among {list(INITS)} (random-tol1e-6: the "
                             "supplementary random starts with tol=1e-6)")
    parser.add_argument("--supplement-runs", type=int, default=None,
                        help="number of runs of the supplementary starts (default --runs)")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    cache = load_cache(CACHE)
    done = {}
    for name in args.datasets.split(","):
        done[name] = fit_runs(name, args.runs, args.inits.split(","), cache,
                              args.supplement_runs)
        sections = report(done, args.runs, args.bic_range, args.cspa_max_samples, cache)
        notes = previous_notes()
        if notes:
            sections.append(("What we see", notes))
        write_markdown("ensemble.md", "Cluster ensembles of SemanticNMF runs (SN Table 3)",
                       sections)


if __name__ == "__main__":
    main()
