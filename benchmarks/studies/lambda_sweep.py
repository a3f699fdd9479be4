"""Sweep of Semantic-NMF's relative λ (and of the word-context) on the shared corpora.

    python benchmarks/studies/lambda_sweep.py [--seeds 5] [--datasets cstr,classic4,...]

For each dataset, k = number of classes, TF-IDF + L2 rows, the default initialization
(spherical k-means); NMI / ARI as mean ± sd over seeds for relative λ in LAMBDAS, with the
document-level PPMI and (when raw text exists) the 10-word-window PPMI. Writes
benchmarks/results/lambda_sweep.md. This is where SemanticNMF's default λ comes from.
"""

import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # benchmarks/: _common
from _common import LAMBDA_SWEEP, load, machine_line, mean_sd, table, write_markdown  # noqa: E402
from semnmf import SemanticNMF, ari, nmi
from semnmf.models._solvers.mu import squared_norm

LAMBDAS = [0, 0.01, 0.1, 1, 3, 10, 30, 100, 1000]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--datasets", default=",".join(LAMBDA_SWEEP))
    parser.add_argument("--lambdas", default=",".join(str(x) for x in LAMBDAS))
    parser.add_argument("--contexts", choices=("default", "both"), default="default",
                        help="default: the CLI's context (window if raw text, else document); "
                             "both: also document-level PPMI where raw text exists")
    args = parser.parse_args()
    lambdas = [float(x) for x in args.lambdas.split(",")]
    warnings.filterwarnings("ignore")
    sections = [(None, f"Machine: {machine_line()}. Seeds per cell: {args.seeds}. "
                       "Cells: NMI (mean ± sd over seeds); ARI below. λ is the relative "
                       "weight (`lam_scale='relative'`); λ = 0 is plain NMF.")]
    summary = {}
    for name in args.datasets.split(","):
        corpus, X, k = load(name)
        contexts = [corpus.default_context()]
        if args.contexts == "both" and corpus.texts is not None:
            contexts.insert(0, "document")
        rows_nmi, rows_ari = [], []
        for context in contexts:
            t = time.perf_counter()
            M = corpus.word_context(context=context)
            built = time.perf_counter() - t
            ratio = squared_norm(M) / squared_norm(X)
            cells_nmi, cells_ari = [], []
            for lam in lambdas:
                scores = []
                for seed in range(args.seeds):
                    labels = SemanticNMF(k, lam=lam, random_state=seed).fit_predict(X, M=M)
                    scores.append((nmi(corpus.labels, labels), ari(corpus.labels, labels)))
                scores = np.array(scores)
                cells_nmi.append(mean_sd(scores[:, 0]))
                cells_ari.append(mean_sd(scores[:, 1]))
                summary.setdefault((name, context), []).append(scores[:, 0].mean())
                print(name, context, lam, cells_nmi[-1], flush=True)
            label = f"{context} (nnz {M.nnz:,}, ‖M‖²/‖X‖² = {ratio:.3g}, built in {built:.1f} s)"
            rows_nmi.append([label] + cells_nmi)
            rows_ari.append([label] + cells_ari)
        header = ["context"] + [f"λ={lam:g}" for lam in lambdas]
        sections.append((f"{name} (n={X.shape[0]}, d={X.shape[1]}, k={k})",
                         "NMI\n\n" + table(header, rows_nmi) + "\n\nARI\n\n" + table(header, rows_ari)))
    # Rank of each λ averaged over dataset/context pairs: the basis for the default.
    ranks = []
    for scores in summary.values():
        order = np.argsort(np.argsort(-np.asarray(scores)))
        ranks.append(order + 1)
    mean_rank = np.mean(ranks, axis=0)
    mean_nmi = np.mean(list(summary.values()), axis=0)
    sections.append(("Summary over datasets and contexts", table(
        ["λ", "mean NMI", "mean rank (1 = best)"],
        [[f"{lam:g}", f"{m:.3f}", f"{r:.2f}"] for lam, m, r in zip(lambdas, mean_nmi, mean_rank)])))
    write_markdown("lambda_sweep.md", "Semantic-NMF: sweep of the relative λ", sections)


if __name__ == "__main__":
    main()
