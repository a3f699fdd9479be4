"""The default's stopping rule: what a looser ``tol`` would save and what it would cost.

    python benchmarks/studies/bench_stopping.py [--corpora a,b] [--seeds 5]

For every shared corpus (window PPMI when it has raw text) and the counts-only version of
the raw-text ones (``-doc``: document SPPMI pruned to 50 contexts per word, what a corpus
without text gets), the command line's default (``--method snmf-robust``, ``snmf-kl`` in 0.1) is fitted once per
seed at its own ``tol`` = 1e-4 (in its dtype, float32, as the command line), recording
the labels after every sweep of the kept start. Because the relative change is tested
every sweep, the iteration at which a looser tol would have stopped is read off the same
objective history (the first iteration ≥ ``MIN_ITER`` whose relative change is below
it), and so is the NMI there. Labels are read
only to score. Traces are cached in ``benchmarks/cache/stopping/``.

Leave-one-corpus-out: for each row, the tol with the best mean NMI on the other rows.
Also read off the same traces: a partition rule added to tol = 1e-4 (stop as well when
fewer than a fraction δ of the documents changed cluster in each of the last m sweeps).
Writes benchmarks/results/defaults_stopping.md.
"""

import argparse
import json
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # benchmarks/: _common
from _common import CACHE_ROOT, CORPORA, COUNTS_ONLY, leave_one_out, load, machine_line, write_markdown

# every shared corpus, then the counts-only row of each one with raw text
ROWS = [*CORPORA, *(f"{name}-doc" for name in CORPORA if name not in COUNTS_ONLY)]
TOLS = [1e-4, 2e-4, 3e-4, 5e-4, 1e-3, 2e-3]
PARTITION_RULES = [(delta, m) for delta in (0.001, 0.002, 0.005, 0.01) for m in (1, 2, 3)]
CACHE = os.path.join(CACHE_ROOT, "stopping")


def trace_row(row, seeds):
    """{seed: {"history", "nmi" (after each sweep from "first" on), "first", "seconds"}}"""
    import semnmf.models._solvers.mu as mu
    from semnmf.models.registry import CLI_METHODS, DEFAULT_CLI_METHOD
    from semnmf.metrics import nmi

    os.makedirs(CACHE, exist_ok=True)
    path = os.path.join(CACHE, f"{row}.json")
    traces = json.load(open(path)) if os.path.exists(path) else {}
    if all(str(s) in traces for s in range(seeds)):
        return traces
    name, doc = row.removesuffix("-doc"), row.endswith("-doc")
    corpus, X, k = load(name, verbose=True)
    y = np.asarray(corpus.labels)
    method = CLI_METHODS[DEFAULT_CLI_METHOD]
    if corpus.texts is not None and not doc:
        M = corpus.word_context(max_nnz=5_000_000, context="window", window=10)
    else:
        M = corpus.word_context(max_nnz=5_000_000, context="document", **method.counts_context)
    X, M = X.astype(method.dtype), M.astype(method.dtype)  # as the command line fits
    run, current = mu.run, {}

    def recording_run(problem, **options):
        """mu.run on the kept start, with the labels after each sweep recorded"""
        def labels():
            Z = problem.Z / np.maximum(np.linalg.norm(problem.Z, axis=0), 1e-300)
            out = np.argmax(Z, axis=1)
            out[problem.Z.sum(axis=1) == 0] = -1
            return out

        step, seen = problem.step, [labels()]

        def recording_step():
            value = step()
            seen.append(labels())
            return value

        problem.step = recording_step
        n_iter, history, converged = run(problem, **options)
        current.update(history=[float(h) for h in history],
                       nmi=[float(nmi(y, lab)) for lab in seen],
                       changed=[float(np.mean(a != b)) for a, b in zip(seen[:-1], seen[1:])],
                       first=len(options.get("history") or [0]) - 1)
        return n_iter, history, converged

    mu.run = recording_run  # best_of_runs calls the module's run for the kept start
    try:
        for seed in range(seeds):
            if str(seed) in traces:
                continue
            t = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = method.build(k, seed).fit(X, M=M)
            final = float(nmi(y, model.labels_))
            assert abs(final - current["nmi"][-1]) < 1e-12, "the trace missed the kept run"
            traces[str(seed)] = dict(current, seconds=time.perf_counter() - t)
            print(f"{row} seed {seed}: {len(current['history']) - 1} iterations, NMI "
                  f"{final:.4f}", flush=True)
            json.dump(traces, open(path, "w"))
    finally:
        mu.run = run
    return traces


def stop_at(trace, tol, delta=0.0, m=1):
    """The iteration at which ``mu.run``'s rule with ``tol`` stops on this trace; with
    ``delta`` > 0, or earlier, at the first iteration after m sweeps in a row that each
    moved fewer than a fraction ``delta`` of the documents to another cluster."""
    from semnmf.models._solvers.mu import MIN_ITER

    history, first, changed = trace["history"], trace["first"], trace["changed"]
    end = len(history) - 1
    for n in range(max(MIN_ITER, first + 1), end + 1):
        if abs(history[n - 1] - history[n]) / abs(history[n - 1]) < tol:
            return n
        last = n - first - 1  # changed[last]: the sweep that ended at iteration n
        if delta > 0 and last + 1 >= m and max(changed[last - m + 1:last + 1]) < delta:
            return n
    return end


def read_off(traces, seeds, tol, delta=0.0, m=1):
    """(mean NMI, mean iterations) over the seeds at the rule's stopping iteration."""
    nmis, iters = [], []
    for seed in range(seeds):
        trace = traces[str(seed)]
        n = stop_at(trace, tol, delta, m)
        nmis.append(trace["nmi"][n - trace["first"]])
        iters.append(n)
    return float(np.mean(nmis)), float(np.mean(iters))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", default=",".join(ROWS))
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    rows = args.corpora.split(",")
    table = {}   # row -> tol -> (mean NMI, mean iterations)
    partition = {}  # row -> (delta, m) -> (mean NMI, mean iterations), with tol = 1e-4
    for row in rows:
        traces = trace_row(row, args.seeds)
        table[row] = {tol: read_off(traces, args.seeds, tol) for tol in TOLS}
        partition[row] = {rule: read_off(traces, args.seeds, TOLS[0], *rule)
                          for rule in PARTITION_RULES}

    base = TOLS[0]
    lines = ["| row | " + " | ".join(f"tol {t:g}: NMI (iterations)" for t in TOLS) + " |",
             "|---|" + "---|" * len(TOLS)]
    for row, cells in table.items():
        lines.append(f"| {row} | " + " | ".join(
            f"{cells[t][0]:.4f} ({cells[t][1]:.1f})" for t in TOLS) + " |")
    summary = ["| tol | mean NMI change vs 1e-4 | worst row | rows lower by > 0.002 | "
               "mean iterations / those at 1e-4 |", "|---|---|---|---|---|"]
    for tol in TOLS:
        diffs = [table[r][tol][0] - table[r][base][0] for r in rows]
        ratio = np.mean([table[r][tol][1] / table[r][base][1] for r in rows])
        summary.append(f"| {tol:g} | {np.mean(diffs):+.4f} | {min(diffs):+.4f} | "
                       f"{sum(d < -0.002 for d in diffs)}/{len(rows)} | {ratio:.2f} |")
    moved = ["| δ (fraction of documents moved) | m (sweeps in a row) | mean NMI change | "
             "worst row | rows lower by > 0.002 | mean iterations / those of tol alone |",
             "|---|---|---|---|---|---|"]
    for rule in PARTITION_RULES:
        diffs = [partition[r][rule][0] - table[r][base][0] for r in rows]
        ratio = np.mean([partition[r][rule][1] / table[r][base][1] for r in rows])
        moved.append(f"| {rule[0]:g} | {rule[1]} | {np.mean(diffs):+.4f} | {min(diffs):+.4f} | "
                     f"{sum(d < -0.002 for d in diffs)}/{len(rows)} | {ratio:.2f} |")
    # the tol with the best mean NMI on the other rows (ties: the larger tol)
    picks = leave_one_out(rows, sorted(TOLS, reverse=True), lambda t, others: np.mean(
        [table[r][t][0] for r in others]))
    chosen = sorted(set(picks.values()))
    loco = (f"The tol with the best mean NMI on the other {len(rows) - 1} rows, for each "
            f"held-out row: {', '.join(f'{r}: {picks[r]:g}' for r in rows)}. "
            f"Chosen: {', '.join(f'{t:g}' for t in chosen)}.")
    write_markdown("defaults_stopping.md", "The default's stopping rule", [
        (None, f"Machine: {machine_line()}. Seeds 0..{args.seeds - 1} per row. Reproduce: "
               "`python benchmarks/studies/bench_stopping.py` (see its docstring for the method)."),
        ("Summary", "\n".join(summary)),
        ("Leave-one-corpus-out", loco),
        ("A partition rule besides tol = 1e-4", "\n".join(moved)),
        ("Per row (mean over seeds)", "\n".join(lines)),
    ])


if __name__ == "__main__":
    main()
