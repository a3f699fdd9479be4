"""How the default's screened starts were chosen (``n_init=5, screen_iter=1``).

    python benchmarks/studies/bench_screening.py trace independent [--corpora a,b] [--seeds 10]
    python benchmarks/studies/bench_screening.py trace pool        [--corpora a,b] [--seeds 10]
    python benchmarks/studies/bench_screening.py trace shared      [--corpora a,b] [--seeds 10]
    python benchmarks/studies/bench_screening.py trace weighting   [--corpora a,b] [--seeds 5]
    python benchmarks/studies/bench_screening.py report

The method is the default's: ``SemanticNMF(k, lam=1, loss="kl")``, window-10 PPMI when the
corpus has raw text, else document SPPMI pruned to 50 contexts per word (as in
``defaults_study.py``; k = number of classes, X = TF-IDF). Per seed s, five starts drawn from
one generator seeded with s:

- ``independent``: each start is spherical k-means, best of 10 restarts (``n_init=5``
  without screening); every start is fitted to convergence and its objective recorded after
  every sweep, so any screening rule (how many starts, how many sweeps) is scored offline.
- ``pool``: the 5 best of one pool of 10 single k-means restarts (cheap starts), each fitted
  to convergence with its trace.
- ``shared``: the default's design: each start the best of 10 // 5 = 2 restarts; every
  start makes 3 sweeps, and the starts with the lowest objective after 1 and after 3 sweeps
  are continued to convergence.
- ``weighting``: the one-start default on X with sublinear tf (1 + log tf) instead of tf,
  and with L1 rows (a pilot on another lever).

Margins are against the best of spherical k-means, NMF and NMF-KL (10-seed means from
``defaults_study.py``'s cache, which ``report`` needs). Traces are cached in
benchmarks/cache/screening/<design>_<corpus>.json. ``report`` writes
benchmarks/results/defaults_screening.md.
"""

import argparse
import json
import os
import sys
import time
import warnings

for _v in ("SEMNMF_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
           "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # benchmarks/: _common
from _common import CACHE_ROOT, CORPORA, machine_line, write_markdown  # noqa: E402
from defaults_study import BASELINES, Data, load_cache  # noqa: E402

CACHE = os.path.join(CACHE_ROOT, "screening")
STARTS = 5
SWEEPS = (0, 1, 2, 3, 5, 10, 20, None)   # None: at convergence


def path_of(design, name):
    return os.path.join(CACHE, f"{design}_{name}.json")


def load(design, name):
    path = path_of(design, name)
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    return {}


def save(design, name, res):
    os.makedirs(CACHE, exist_ok=True)
    tmp = path_of(design, name) + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(res, f)
    os.replace(tmp, path_of(design, name))


def _labels(problem):
    Z = problem.Z / np.maximum(np.linalg.norm(problem.Z, axis=0), 1e-300)
    return np.argmax(Z, axis=1)


def _nmi(data, labels):
    from semnmf.metrics import nmi

    return float(nmi(data.y, labels))


def trace_seed(design, data, M, seed):
    """One seed of ``design`` (see the module docstring): a JSON-ready record."""
    import semnmf
    import semnmf.models._solvers.mu as mu
    from semnmf.models.init import factors_from_skmeans
    from sklearn.utils import check_random_state

    k, X = data.k, data.X
    model = dict(lam=1.0, loss="kl")
    original = mu.best_of_runs
    runs, record = [], {}

    def full_runs(new_problem, *, n_init, max_iter, tol, verbose=0, name="fit",
                  screen_iter=None):
        best = None
        for index in range(n_init):
            t = time.perf_counter()
            problem = new_problem(index)
            start_sec = time.perf_counter() - t
            t = time.perf_counter()
            n_iter, history, _ = mu.run(problem, max_iter=max_iter, tol=tol)
            runs.append({"history": history, "nmi": _nmi(data, _labels(problem)),
                         "sec": time.perf_counter() - t, "start_sec": start_sec})
            if best is None or history[-1] < best[2][-1]:
                best = (problem, n_iter, history)
        return best

    def screened(new_problem, *, n_init, max_iter, tol, verbose=0, name="fit",
                 screen_iter=None):
        starts = []
        for index in range(n_init):
            problem = new_problem(index)
            history = [problem.objective()] + [problem.step() for _ in range(3)]
            starts.append((problem, history))
        for t in (1, 3):
            i = int(np.argmin([h[t] for _, h in starts]))
            if str(i) not in record:
                problem, history = starts[i]
                n_iter, full, _ = mu.run(problem, max_iter=max_iter, tol=tol, history=history)
                record[str(i)] = {"nmi": _nmi(data, _labels(problem)), "n_iter": n_iter}
            record[f"t{t}"] = i
        return starts[0][0], 1, starts[0][1]

    warnings.simplefilter("ignore")
    t0 = time.perf_counter()
    try:
        if design == "independent":
            mu.best_of_runs = full_runs
            semnmf.SemanticNMF(k, n_init=STARTS, random_state=seed, **model).fit(X, M=M)
        elif design == "shared":
            mu.best_of_runs = screened
            semnmf.SemanticNMF(k, n_init=STARTS, screen_iter=1, random_state=seed,
                               **model).fit(X, M=M)
            return {"chosen": {t: record[t] for t in ("t1", "t3")},
                    "runs": {i: v for i, v in record.items() if not i.startswith("t")},
                    "sec": time.perf_counter() - t0}
        elif design == "pool":
            mu.best_of_runs = full_runs
            rng = check_random_state(seed)
            pool = [semnmf.SphericalKMeans(k, n_init=1, random_state=rng).fit(X)
                    for _ in range(10)]
            for km in sorted(pool, key=lambda km: km.objective_)[:STARTS]:
                semnmf.SemanticNMF(k, init=factors_from_skmeans(km), **model).fit(X, M=M)
        else:
            raise ValueError(design)
    finally:
        mu.best_of_runs = original
    return {"runs": runs, "sec": time.perf_counter() - t0}


def weighting_seed(data, M, seed, variant):
    import semnmf
    from sklearn.feature_extraction.text import TfidfTransformer
    from sklearn.preprocessing import normalize

    counts = data.corpus.counts()
    X = {"sublinear": lambda: TfidfTransformer(sublinear_tf=True).fit_transform(counts),
         "l1": lambda: normalize(data.X, "l1"),
         "tf": lambda: data.X}[variant]().tocsr()
    warnings.simplefilter("ignore")
    model = semnmf.SemanticNMF(data.k, lam=1.0, loss="kl", random_state=seed).fit(X, M=M)
    return {"nmi": _nmi(data, model.labels_)}


def cmd_trace(args):
    corpora = args.corpora.split(",") if args.corpora else CORPORA
    for name in corpora:
        res = load(args.design, name)
        data = Data(name, {"meta": {}, "fits": {}, "cons": {}})
        M = data.context("win" if data.corpus.texts is not None else "top50")
        for seed in range(args.seeds):
            if args.design == "weighting":
                for variant in ("tf", "sublinear", "l1"):
                    key = f"{variant}|{seed}"
                    if key not in res:
                        res[key] = weighting_seed(data, M, seed, variant)
                        print(name, key, round(res[key]["nmi"], 4), flush=True)
                        save(args.design, name, res)
                continue
            if str(seed) in res:
                continue
            res[str(seed)] = trace_seed(args.design, data, M, seed)
            print(name, args.design, seed, round(res[str(seed)]["sec"], 1), flush=True)
            save(args.design, name, res)


# -- report -----------------------------------------------------------------------------
def baselines(name):
    fits = load_cache(name)["fits"]
    default = "snmfkl-win-l1" if "snmfkl-win-l1|0" in fits else "snmfkl-top50-l1"
    best = max(np.mean([fits[f"{b}|{s}"]["nmi"] for s in range(10)]) for b in BASELINES)
    return best, lambda seeds: float(np.mean([fits[f"{default}|{s}"]["nmi"] for s in seeds]))


def pick(runs, n, t):
    """NMI of the run kept among the first ``n`` when screening after ``t`` sweeps."""
    runs = runs[:n]
    objective = [r["history"][-1 if t is None else min(t, len(r["history"]) - 1)]
                 for r in runs]
    return runs[int(np.argmin(objective))]["nmi"]


def full_table(design):
    """Rows per corpus: margin of the kept run per number of sweeps (5 starts), per number
    of starts (one sweep), and the paired gain over the first start."""
    by_t, by_n, lines = {}, {}, []
    for name in CORPORA:
        res = load(design, name)
        if not res:
            continue
        best, _ = baselines(name)
        seeds = sorted(res, key=int)
        first = np.mean([res[s]["runs"][0]["nmi"] for s in seeds])
        cells = []
        for t in SWEEPS:
            v = np.mean([pick(res[s]["runs"], STARTS, t) for s in seeds]) - best
            by_t.setdefault(t, []).append(v)
            cells.append(f"{v:+.3f}")
        for n in range(1, STARTS + 1):
            v = np.mean([pick(res[s]["runs"], n, 1) for s in seeds]) - best
            by_n.setdefault(n, []).append(v)
            cells.append(f"{v:+.3f}")
        gain = np.mean([pick(res[s]["runs"], STARTS, 1) for s in seeds]) - first
        lines.append(f"| {name} | {len(seeds)} | " + " | ".join(cells) + f" | {gain:+.3f} |")
    head = ([f"t = {'end' if t is None else t}" for t in SWEEPS]
            + [f"{n} start{'s' if n > 1 else ''}" for n in range(1, STARTS + 1)])
    table = ["| corpus | seeds | " + " | ".join(head) + " | gain over the first start |",
             "|---|---|" + "---|" * (len(head) + 1), *lines]
    mean = ("| **mean** | | " + " | ".join(f"**{np.mean(by_t[t]):+.4f}**" for t in SWEEPS)
            + " | " + " | ".join(f"**{np.mean(by_n[n]):+.4f}**" for n in by_n) + " | |")
    return "\n".join(table + [mean])


def cost_table():
    lines = ["| corpus | one start: k-means (s) | one start: its sweeps (s) | seconds per sweep | "
             "5 independent starts screened after 1 sweep / one start |",
             "|---|---|---|---|---|"]
    for name in CORPORA:
        res = load("independent", name)
        if not res:
            continue
        start = np.median([r["start_sec"] for v in res.values() for r in v["runs"]])
        run = np.median([v["runs"][0]["sec"] for v in res.values()])
        sweep = np.median([r["sec"] / (len(r["history"]) - 1) for v in res.values()
                           for r in v["runs"]])
        ratio = (STARTS * start + (STARTS - 1) * sweep + run) / (start + run)
        lines.append(f"| {name} | {start:.3f} | {run:.3f} | {sweep:.4f} | {ratio:.2f}× |")
    return "\n".join(lines)


def shared_table():
    """The design the default uses: the traces (1 and 3 sweeps) and, with every seed, the
    default's own fits (``snmfkl-*-l1-s5`` in defaults_study.py's cache)."""
    lines = ["| corpus | one start (10 seeds) | the default: 5 screened starts (10 seeds) | gain | "
             "traced seeds | traced, t = 1 | traced, t = 3 |", "|---|---|---|---|---|---|---|"]
    gains, margins = [], []
    for name in CORPORA:
        res = load("shared", name)
        fits = load_cache(name)["fits"]
        best, single = baselines(name)
        method = "snmfkl-win-l1-s5" if "snmfkl-win-l1-s5|0" in fits else "snmfkl-top50-l1-s5"
        seeds = [s for s in range(10) if f"{method}|{s}" in fits]
        if not seeds:
            continue
        one = single(seeds) - best
        default = np.mean([fits[f"{method}|{s}"]["nmi"] for s in seeds]) - best
        gains.append(default - one)
        margins.append(default)
        traced = sorted(res, key=int)
        t1, t3 = ([np.mean([res[s]["runs"][str(res[s]["chosen"][t])]["nmi"] for s in traced])
                   - best if traced else np.nan for t in ("t1", "t3")])
        lines.append(f"| {name} | {one:+.3f} | {default:+.3f} | {default - one:+.3f} | "
                     f"{len(traced)} | {t1:+.3f} | {t3:+.3f} |")
    lines.append(f"| **mean** | | **{np.mean(margins):+.4f}** | **{np.mean(gains):+.4f}** | "
                 "| | |")
    return "\n".join(lines)


def weighting_table():
    lines = ["| corpus | seeds | tf (the default) | sublinear tf | L1 rows |", "|---|---|---|---|---|"]
    cols = {"tf": [], "sublinear": [], "l1": []}
    for name in CORPORA:
        res = load("weighting", name)
        if not res:
            continue
        best, _ = baselines(name)
        seeds = sorted({k.split("|")[1] for k in res if k.startswith("tf|")}, key=int)
        cells = []
        for v in cols:
            values = [res[f"{v}|{s}"]["nmi"] for s in seeds if f"{v}|{s}" in res]
            m = np.mean(values) - best if values else np.nan
            cols[v].append(m)
            cells.append(f"{m:+.3f}" if values else "—")
        lines.append(f"| {name} | {len(seeds)} | " + " | ".join(cells) + " |")
    lines.append("| **mean** | | " + " | ".join(
        f"**{np.nanmean(v):+.4f}** ({np.sum(~np.isnan(v))} corpora)" for v in cols.values())
        + " |")
    return "\n".join(lines)


def cmd_report(args):
    sections = [
        (None, f"Machine: {machine_line()}; one thread per fit, two fits at a time. "
               "Produced by `benchmarks/studies/bench_screening.py` (see its docstring). Cells: mean "
               "NMI over the seeds minus the best of spherical k-means, NMF and NMF-KL (their "
               "10-seed means); k = number of classes."),
        ("Independent starts (each the best of 10 k-means restarts), fitted to convergence",
         "Margin of the run kept by the lowest objective: with 5 starts after t sweeps "
         "(t = 0: the start itself; end: at convergence, `n_init=5` without screening), and "
         "with the first n starts after one sweep.\n\n" + full_table("independent")),
        ("What independent starts cost", "From the same runs (one thread; medians).\n\n"
         + cost_table()),
        ("The 5 best of one pool of 10 restarts", "Cheap starts, but the pool's best start "
         "also wins the screening.\n\n" + full_table("pool")),
        ("The default's design: 5 starts of 2 restarts each", "The k-means restarts of one "
         "start shared by the five. Margin of the start kept after 1 and after 3 sweeps, "
         "against the one-start default on the same seeds (`defaults_study.py`'s cache).\n\n"
         + shared_table()),
        ("Another lever, not kept: the weighting of X", "The one-start default on X with "
         "sublinear tf or L1 rows.\n\n" + weighting_table()),
    ]
    write_markdown("defaults_screening.md", "Screened starts for the default", sections)


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="command", required=True)
    t = sub.add_parser("trace")
    t.add_argument("design", choices=["independent", "pool", "shared", "weighting"])
    t.add_argument("--corpora")
    t.add_argument("--seeds", type=int, default=10)
    sub.add_parser("report")
    args = p.parse_args()
    {"trace": cmd_trace, "report": cmd_report}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
