"""The medoid or the MMM of a few runs of the default, on every shared corpus and 15 seeds.

Five seeds hid how badly one run of the default can go: on cluto_mm (two classes) seeds 0-4
of the KL consensus were 0.009 below the best baseline on average, and seed 9 collapsed
(0.80 below; the other seeds within 0.03). A run
that fell into a poor local optimum agrees little with other runs; the medoid of R runs
(the run whose partition has the largest mean NMI with the others':
:func:`semnmf.ensemble.consensus.medoid`, SN eq. 12's criterion over the runs' own
partitions) avoids it without labels, for R times the fit; so does their multinomial-mixture
consensus (MMM, SN eq. 13), which can also combine what each run got right.

For every corpus of ``../shared/datasets``, k = the number of classes, the single-run
default without its centroid step is made for seeds 0-16 and cached:

- raw text: ``semnmf.cluster(path, k, random_state=s, refine="none")`` (snmf-robust);
- counts only: :func:`semnmf.ensemble.portfolio.kl_consensus` with ``n_runs=1`` on the
  run's own X (the library's default since this study makes it ``n_runs=3``).

For each evaluation seed s = 0..14 the candidates are then computed from those labels:

- ``single``: run s, then the centroid step (the default before this study);
- ``medoid of R``: the medoid of runs s, s+1, ..., s+R-1, then the centroid step; R = 3, 5;
- ``MMM of 3``: the MMM consensus of runs s, s+1, s+2 (seeded s: what
  ``kl_consensus(n_runs=3, random_state=s)`` returns), then the centroid step;
- ``library``: the library's default as shipped: the MMM of 3 for counts only, the
  single run for raw text (cost: three runs triple the fit).

Each is scored by its margin over the best of spherical k-means, NMF and NMF-KL on that
corpus (their mean NMI over seeds 0-4 in ``results/portfolio.json``, as every study of
the per-kind default). Seconds: on seed 0, the library's default run's wall time, that of today's default
(``method="snmf-robust"``, the default before the per-kind default, on every corpus), that of
three runs combined by the MMM for raw text (``consensus="mmm", n_runs=3``, which the step
follows: the ``MMM of 3`` candidate, whose runs ClusterEnsemble orders by objective) and
the single run's fit, each the best of three, interleaved, each after a garbage collection
(without it, a collection of the previous run's objects fell on the next run's time:
+5-9 % on some corpora). On seed 0 the library's default labels are checked against the
``library`` candidate's.

Labels are cached in ``benchmarks/cache/default_medoid/`` (resumable); the results are
written to ``benchmarks/results/default_medoid.md``.

Reproduce: ``PYTHONPATH=src python benchmarks/studies/bench_default_medoid.py`` (``--corpora`` to
restrict the measuring, ``--report`` to rewrite the results from the cache).
"""

import argparse
import gc
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

CACHE = os.path.join(CACHE_ROOT, "default_medoid")
TIMES = os.path.join(CACHE, "times.json")
SEEDS = tuple(range(15))
RUNS = (3, 5)
BASELINES = ("skmeans", "nmf", "nmf-kl")
CANDIDATES = ("single", *(f"medoid of {r}" for r in RUNS), "MMM of 3", "library")
# how the counts-only runs are combined, chosen again by leave-one-corpus-out over the
# counts-only corpora
COMBINATIONS = ("single", "medoid of 3", "MMM of 3")
# seconds: the best of this many runs of each, the library's and today's interleaved
REPEATS = 3
# the centroid step's margins chosen again by leave-one-corpus-out after the library's fit
# (None: no step), as refine_centroid.md chose it after the single run on 5 seeds
STEP_GAINS = (None, 0.0, 0.05, 0.1, 0.2, 0.5)


def label_file(name, seed):
    return os.path.join(CACHE, f"{name}_{seed}.npy")


def quiet(call, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call(*args, **kwargs)


def measure(names):
    """The single runs of seeds 0..max(SEEDS) + max(RUNS) - 1 of every corpus."""
    import semnmf
    from semnmf.ensemble.portfolio import kl_consensus

    os.makedirs(CACHE, exist_ok=True)
    root = data_root()
    for name in names:
        path, seeds = os.path.join(root, name), range(max(SEEDS) + max(RUNS))
        todo = [s for s in seeds if not os.path.exists(label_file(name, s))]
        if not todo:
            continue
        k = n_classes(path)
        first = quiet(semnmf.cluster, path, k, random_state=todo[0], refine="none")
        for seed in todo:
            t = time.perf_counter()
            if first.method == "kl-consensus":
                labels = quiet(kl_consensus, first.X, k, random_state=seed, n_runs=1).labels_
            else:
                labels = quiet(semnmf.cluster, path, k, random_state=seed,
                               refine="none").labels
            np.save(label_file(name, seed), np.asarray(labels))
            print(f"{name} seed {seed}: {first.method}, {time.perf_counter() - t:.1f} s",
                  flush=True)


def measure_times(names):
    """Seed 0's seconds (best of :data:`REPEATS`, interleaved): the library's default,
    today's default, the single run's fit; and whether the library's default labels are
    the ``library`` candidate's."""
    import semnmf

    times = load_cache(TIMES)
    root = data_root()
    for name in names:
        if name in times:
            continue
        path = os.path.join(root, name)
        k = n_classes(path)
        cell, walls = {}, {"library": [], "today": [], "three": []}
        for _ in range(REPEATS):  # interleaved, so that a slow spell hits all
            for tag, kwargs in (("library", {}), ("today", {"method": "snmf-robust"}),
                                ("three", {"consensus": "mmm", "n_runs": 3})):
                if tag == "three" and cell["method"] == "kl-consensus":
                    continue  # counts only: the library's default is three runs
                run = None
                gc.collect()  # the previous run's garbage is not collected on this one's time
                t = time.perf_counter()
                run = quiet(semnmf.cluster, path, k, random_state=0, **kwargs)
                walls[tag].append(time.perf_counter() - t)
                if tag == "library":
                    cell["method"], cell["fit_s"] = run.method, run.timings["fit"]
                    cell["labels"] = np.asarray(run.labels).tolist()
                    cell["X"] = run.X
        walls["three"] = walls["three"] or walls["library"]
        for tag, values in walls.items():
            cell[f"{tag}_s"] = min(values)
        if cell["method"] == "kl-consensus":  # one consensus' fit: a third of the three's
            cell["single_fit_s"] = cell["fit_s"] / 3
        else:
            cell["single_fit_s"] = cell["fit_s"]
        X = cell.pop("X")
        cell["library_equal"] = bool(np.array_equal(
            np.asarray(cell.pop("labels")), candidates(name, 0, X, k, cell["method"])["library"]))
        times[name] = cell
        save_cache(TIMES, {name: cell})
        print(f"{name}: library {cell['library_s']:.2f} s, today {cell['today_s']:.2f} s, "
              f"labels as simulated: {cell['library_equal']}", flush=True)
    return times


def candidates(name, seed, X, k, method):
    """Every candidate's labels at ``seed`` from the cached single runs."""
    from semnmf.ensemble import combine
    from semnmf.ensemble.consensus import medoid
    from semnmf.refine import centroid_refine
    from semnmf.workflows.cluster import CENTROID_MIN_GAIN

    def step(labels):
        return centroid_refine(X, labels, k, min_gain=CENTROID_MIN_GAIN)[0]

    runs = [np.load(label_file(name, seed + r)) for r in range(max(RUNS))]
    out = {"single": step(runs[0])}
    for r in RUNS:
        index, _ = medoid(np.column_stack(runs[:r]))
        out[f"medoid of {r}"] = step(runs[index])
    mmm = combine(np.column_stack(runs[:3]), k, "mmm", random_state=seed)[0]
    out["MMM of 3"] = step(mmm)
    out["library"] = out["MMM of 3"] if method == "kl-consensus" else out["single"]
    fit = mmm if method == "kl-consensus" else runs[0]
    for gain in STEP_GAINS:
        out[step_name(gain)] = (fit if gain is None
                                else centroid_refine(X, fit, k, min_gain=gain)[0])
    return out


def step_name(gain):
    return "no step" if gain is None else f"step > {round(100 * gain)} %"


def scores(names):
    """``{corpus: {candidate: [NMI per seed]}}`` and each corpus's default method."""
    import semnmf
    from semnmf.metrics import clustering_scores

    root = data_root()
    out, methods = {}, {}
    for name in names:
        path = os.path.join(root, name)
        k = n_classes(path)
        run = quiet(semnmf.cluster, path, k, random_state=0, refine="none", max_iter=1)
        y, X = run.corpus.labels, run.X
        methods[name] = run.method
        out[name] = {}
        for seed in SEEDS:
            for c, labels in candidates(name, seed, X, k, run.method).items():
                out[name].setdefault(c, []).append(clustering_scores(y, labels)["nmi"])
    return out, methods


def report(names):
    with open(os.path.join(RESULTS, "portfolio.json"), encoding="utf-8") as f:
        portfolio = json.load(f)["nmi"]
    best = {c: max((portfolio[m][c], m) for m in BASELINES) for c in names}
    nmis, methods = scores(names)
    times = load_cache(TIMES)

    def margin(c, name):
        return float(np.mean(nmis[name][c])) - best[name][0]

    def summary(c, subset):
        v = {n: margin(c, n) for n in subset}
        worst = min(v, key=v.get)
        return [c, f"{v[worst]:+.3f}", worst, f"{np.mean(list(v.values())):+.4f}",
                f"{sum(x >= -0.02 for x in v.values())} / {len(v)}"]

    kinds = {"all": names,
             "raw text": [n for n in names if methods[n] != "kl-consensus"],
             "counts only": [n for n in names if methods[n] == "kl-consensus"]}
    sections = []
    head = ["candidate", "worst margin", "worst on", "mean margin", "corpora ≥ −0.02"]
    for kind, subset in kinds.items():
        sections.append((f"Summary: {kind} ({len(subset)} corpora)",
                         table(head, [summary(c, subset) for c in CANDIDATES])))

    def cell(value):
        return f"**{value:+.3f}**" if value < -0.02 else f"{value:+.3f}"

    score = worst_then_mean(lambda c, n: margin(c, n))

    def held_out(folds, choices):
        """Which of ``choices`` leave-one-corpus-out picks over ``folds`` (how often), and
        the table of each choice and of the held-out picks."""
        chosen = leave_one_out(folds, choices, score)
        held = {n: margin(chosen[n], n) for n in folds}
        picks = {}
        for n in folds:
            picks[chosen[n]] = picks.get(chosen[n], 0) + 1
        rows = [summary(c, folds) for c in choices]
        rows.append(["**leave-one-corpus-out**", f"{min(held.values()):+.3f}",
                     min(held, key=held.get), f"{np.mean(list(held.values())):+.4f}",
                     f"{sum(v >= -0.02 for v in held.values())} / {len(held)}"])
        said = ", ".join(f"`{c}` on {v} fold{'s' if v > 1 else ''}"
                         for c, v in sorted(picks.items(), key=lambda kv: -kv[1]))
        return said, table(head, rows)

    said, rows = held_out(names, [step_name(g) for g in STEP_GAINS])
    sections.append((
        "Held out: the centroid step chosen again after the library's fit",
        "The step's margin (no step, or a move when the new centroid is more than g % more "
        "similar) chosen for each held-out corpus on the other 24 (worst corpus first, then "
        f"the mean), after the library's fit (the MMM of 3 for counts only). Chosen: {said}."
        "\n\n" + rows))
    counts = kinds["counts only"]
    if len(counts) > 1:
        said, rows = held_out(counts, COMBINATIONS)
        sections.append((
            "Held out: how the counts-only runs are combined",
            "One run, the medoid of three or their MMM, chosen for each held-out counts-only "
            "corpus on the other counts-only corpora (worst first, then the mean). Chosen: "
            f"{said}.\n\n" + rows))

    order = sorted(names, key=lambda n: margin("library", n))
    rows = []
    for n in order:
        seeds = np.asarray(nmis[n]["single"]) - best[n][0]
        rows.append([n, "counts" if methods[n] == "kl-consensus" else "text",
                     f"{best[n][1]} {best[n][0]:.3f}",
                     *[cell(margin(c, n)) for c in CANDIDATES],
                     f"{seeds.min():+.3f} / {seeds.max():+.3f}"])
    sections.append(("Every corpus, losses first (by the library's margin; bold: below "
                     "−0.02)",
                     table(["corpus", "kind", "best baseline", *CANDIDATES,
                            "single: worst / best seed"], rows)))

    timed = [n for n in names if n in times]
    if timed:
        lib = {n: times[n]["library_s"] / times[n]["today_s"] for n in timed}
        med_all = {n: times[n]["three_s"] / times[n]["today_s"] for n in timed}
        single = {n: (times[n]["library_s"] - (2 * times[n]["single_fit_s"]
                                                if times[n]["method"] == "kl-consensus"
                                                else 0.0)) / times[n]["today_s"]
                  for n in timed}
        rows = [[n, times[n]["method"], f"{times[n]['today_s']:.2f}",
                 f"{times[n]['library_s']:.2f}", f"{single[n]:.2f}", f"{lib[n]:.2f}",
                 f"{med_all[n]:.2f}", "yes" if times[n]["library_equal"] else "**no**"]
                for n in timed]
        rows.append(["**median**", "", "", "", f"{np.median(list(single.values())):.2f}",
                     f"{np.median(list(lib.values())):.2f}",
                     f"{np.median(list(med_all.values())):.2f}", ""])
        sections.append((
            f"Seconds (seed 0, best of {REPEATS}, interleaved; ratios to today's default, "
            "`method=\"snmf-robust\"`)",
            "The single run's wall is the library's less two thirds of its fit for counts "
            "(an estimate from the same run's timings); three runs everywhere: the library's "
            "for counts only, `consensus=\"mmm\", n_runs=3` (then the step) measured for "
            "raw text.\n\n"
            + table(["corpus", "default method", "today's s", "library s",
                     "single run / today's", "library / today's",
                     "three runs everywhere / today's", "library labels = simulated"],
                    rows)))
    intro = (f"{len(names)} shared corpora, evaluation seeds {SEEDS[0]}-{SEEDS[-1]} (the medoid "
             "of R and the MMM of 3 use the runs of seeds s..s+R-1), k = the number of "
             "classes. Margin = mean NMI over the seeds minus the best of spherical k-means, "
             "NMF and NMF-KL on that corpus (their mean over seeds 0-4, `portfolio.json`). "
             "Every candidate ends with the default's centroid step. The medoid and the MMM "
             "have no constant fitted to the corpora: R = 3 is set by its cost.\n\n"
             f"{machine_line()}\n\nReproduce: `PYTHONPATH=src python "
             "benchmarks/studies/bench_default_medoid.py`.")
    write_markdown("default_medoid.md",
                   "The medoid or the MMM of a few runs of the default",
                   [(None, intro), *sections])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpora", nargs="*")
    parser.add_argument("--report", action="store_true", help="only rewrite the results")
    args = parser.parse_args(argv)
    names = args.corpora or all_corpora()
    if not args.report:
        measure(names)
        measure_times(names)
    report(names)


if __name__ == "__main__":
    main()
