"""What the default budget of non-zeros of M (``--max-nnz``, word_context(max_nnz=...))
costs in NMI and saves in time and memory.

For each corpus, the default word-context matrix of ``semnmf cluster`` (window context when
raw text exists, else document; PPMI) is built unpruned and with each budget, then
SemanticNMF (the CLI defaults) is fitted with 3 seeds. Each (corpus, budget) runs in its own
process, so that its peak resident memory is its own. Results are cached in
``results/pruning_runs.json`` (a rerun resumes) and written to ``results/pruning.md``.

    SEMNMF_NUM_THREADS=1 nice python benchmarks/studies/bench_pruning.py
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # benchmarks/: _common
from _common import PRUNING, RESULTS, data_root, machine_line, write_markdown  # noqa: E402

CACHE = os.path.join(RESULTS, "pruning_runs.json")
BUDGETS = [0, 5_000_000, 1_000_000]  # 0: no budget; 5M: the default
SEEDS = [0, 1, 2]
# unpruned, the document context of ng20_cai needs many GB: only its bound is reported
SKIP = {("ng20_cai", 0)}


def one(name, budget, seeds):
    from semnmf import SemanticNMF, load_dataset
    from semnmf.metrics import nmi

    corpus = load_dataset(os.path.join(data_root(), name))
    X = corpus.tfidf()
    context = corpus.default_context()
    t = time.perf_counter()
    M, info = corpus.word_context(context=context, max_nnz=budget or None, return_info=True)
    t_context = time.perf_counter() - t
    rss_context = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    scores, fit_seconds = [], []
    for seed in seeds:
        t = time.perf_counter()
        model = SemanticNMF(corpus.n_classes, random_state=seed).fit(X, M=M)
        fit_seconds.append(time.perf_counter() - t)
        scores.append(nmi(corpus.labels, model.labels_))
    return {"context": context, "nnz_before": info["nnz_before"], "nnz": info["nnz"],
            "upper": info["estimated_nnz_upper"], "top_k": info["top_k"],
            "rule": info["rule"], "context_seconds": t_context, "fit_seconds": fit_seconds,
            "nmi": scores, "peak_rss_mb_context": rss_context,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--one", nargs=2, metavar=("NAME", "BUDGET"))
    parser.add_argument("--datasets", nargs="*", default=list(PRUNING))
    parser.add_argument("--budgets", nargs="*", type=int, default=BUDGETS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(one(args.one[0], int(args.one[1]), SEEDS)))
        return
    cache = json.load(open(CACHE)) if os.path.exists(CACHE) else {}
    for name in args.datasets:
        for budget in args.budgets:
            key = f"{name}/{budget}"
            if key in cache or (name, budget) in SKIP:
                continue
            t = time.perf_counter()
            out = subprocess.run([sys.executable, __file__, "--one", name, str(budget)],
                                 capture_output=True, text=True)
            if out.returncode != 0:
                print(out.stderr[-2000:])
                continue
            cache[key] = json.loads(out.stdout.strip().splitlines()[-1])
            with open(CACHE, "w") as f:
                json.dump(cache, f, indent=0)
            print(f"{key}: {time.perf_counter() - t:.0f} s", flush=True)
    rows = ["| corpus | context | budget | nnz(M) unpruned → kept | top_k | build s | "
            "fit s (mean) | peak RSS MB | NMI (3 seeds) |",
            "|---|---|---:|---|---:|---:|---:|---:|---|"]
    for name in args.datasets:
        for budget in args.budgets:
            r = cache.get(f"{name}/{budget}")
            if r is None:
                continue
            kept = (f"{r['nnz_before']:,} → {r['nnz']:,}" if r["nnz"] != r["nnz_before"]
                    else f"{r['nnz']:,} (not pruned)")
            rows.append(f"| {name} | {r['context']} | {budget:,} | {kept} | "
                        f"{r['top_k'] if r['top_k'] else '–'} | {r['context_seconds']:.1f} | "
                        f"{np.mean(r['fit_seconds']):.1f} | {r['peak_rss_mb']:.0f} | "
                        f"{np.mean(r['nmi']):.3f} ± {np.std(r['nmi']):.3f} |")
    write_markdown("pruning.md", "Budget of non-zeros of the word-context matrix", [
        (None, f"Machine: {machine_line()}, single-threaded. Reproduce: "
               "`python benchmarks/studies/bench_pruning.py` (cached in `results/pruning_runs.json`)."
               "\n\nBudget 0: no budget (the library default); 5,000,000: the default of "
               "`semnmf cluster --max-nnz`. Rule: when the bound of `estimate_nnz` exceeds "
               "the budget, keep the `top_k` strongest contexts per word (pattern "
               "symmetrized) with the largest `top_k` such that twice the sum of "
               "`min(row bound, top_k)` fits; the document context is then built and "
               "pruned block by block. SemanticNMF with the library defaults, k = number of "
               "classes, seeds 0, 1, 2; peak RSS of the whole process (load, M, 3 fits)."),
        (None, "\n".join(rows)),
        ("Reading", "ng20_cai unpruned (document context, 26,214 terms) is not run: "
         "`estimate_nnz` bounds its C by 166,342,356 non-zeros (sampled estimate "
         "74.8 M); the block-wise build counts 49.3 M positive PPMI entries unpruned (about "
         "0.6 GB per CSR copy, several GB at the peak: a reported 9.4k-document "
         "corpus had 64 M non-zeros, 3 minutes and 3.6 GB). With the default budget it is "
         "built block by block to at most 5 M non-zeros. Below the budget (CSTR, CLASSIC4, "
         "BBC) nothing changes. Pruning is not free in NMI: at 1 M non-zeros CLASSIC4 loses "
         "0.10 NMI (top 100 contexts per word), BBC 0.02, NG5 0.01 (NG5 at 5 M: 0.785 → 0.765, within its seed spread ± 0.05); ng20_cai runs in 1.1 GB peak for load, M and 3 fits; the default 5 M budget "
         "leaves every corpus here but NG5 and ng20_cai untouched. The window context is "
         "built in full before pruning (its count is bounded by 2 x window x tokens), so its "
         "peak memory is not reduced; the document context's is.")])


if __name__ == "__main__":
    main()
