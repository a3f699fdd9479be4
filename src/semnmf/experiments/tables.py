"""Markdown of the reproduced Table 2, with the published numbers beside ours."""

from .methods import get_method
from .paper import BASELINES, PAPER, PAPER_DATASETS
from .protocol import summarize


def _cell(stats):
    if stats is None:
        return "–"
    mean, sd, _ = stats
    return f"{mean:.3f} ± {sd:.3f}"


def _markdown_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def kept_runs(available, runs, best):
    """Runs kept by objective: ``best`` of ``runs``, in proportion when fewer are done."""
    if available >= runs:
        return best
    return max(1, round(available * best / runs)) if available else 0


def table2_rows(cache, dataset, methods, *, runs, best, seeds):
    """Rows (one per method) of one dataset's table, and the per-method summaries."""
    rows, summary = [], {}
    for name in methods:
        method = get_method(name)
        paper_runs = cache.runs(dataset, "paper", name, runs)
        seed_runs = cache.runs(dataset, "seeds", name, seeds)
        kept = kept_runs(len(paper_runs), runs, best)
        stats = {
            ("paper", "nmi"): summarize(paper_runs, kept, "nmi"),
            ("paper", "ari"): summarize(paper_runs, kept, "ari"),
            ("seeds", "nmi"): summarize(seed_runs, None, "nmi"),
            ("seeds", "ari"): summarize(seed_runs, None, "ari"),
            ("seeds", "seconds"): summarize(seed_runs, None, "seconds"),
        }
        summary[name] = stats
        published = PAPER.get(dataset, {}).get(name)
        seconds = stats[("seeds", "seconds")]
        rows.append([
            method.label,
            _cell(stats[("paper", "nmi")]), _cell(stats[("paper", "ari")]),
            f"{published[0]:.2f} / {published[1]:.2f}" if published else "",
            _cell(stats[("seeds", "nmi")]), _cell(stats[("seeds", "ari")]),
            f"{seconds[0]:.2f}" if seconds else "–",
            f"{kept} of {len(paper_runs)} / {len(seed_runs)}",
        ])
    return rows, summary


def beats_baselines(summary, protocol="paper", method="snmf-ppmi", tolerance=0.0):
    """Whether ``method``'s mean NMI is at least every baseline's that was run."""
    ours = summary.get(method, {}).get((protocol, "nmi"))
    if ours is None:
        return None
    others = [summary[b][(protocol, "nmi")] for b in BASELINES
              if b in summary and summary[b][(protocol, "nmi")] is not None]
    if not others:
        return None
    return all(ours[0] + tolerance >= other[0] for other in others)


# Why rows fall below the published values, as measured (kept here so that
# `semnmf bench --report-only` rewrites the whole file).
TABLE2_NOTES = """\
- **NMF (and PNMF) below the published value on CSTR and CLASSIC4 under the paper protocol:
  the protocol keeps the most converged runs, and NMF's NMI falls as it converges.** The
  best 10 of 50 by objective are the runs that went furthest down the objective. From the
  shared spherical k-means start, NMF's NMI after a fixed number of iterations
  (`NMF(k, max_iter=T, tol=0)`, seeds 0-2, 2026-11-22):

  | iterations | 5 | 10 | 30 | 100 | 300 |
  |---|---|---|---|---|---|
  | CSTR NMI | 0.68-0.73 | 0.69-0.74 | 0.72-0.74 | 0.70-0.71 | 0.67-0.70 |
  | CLASSIC4 NMI | 0.56 | 0.53 | 0.51-0.52 | 0.52 | 0.53 |

  The published NMF values (CSTR 0.73, CLASSIC4 0.59) are what NMF gives after a few
  iterations from this start. The paper does not state its stopping rule; ours (relative
  change < 1e-4, from iteration 10) runs longer. The same early peak is measured for
  Semantic-NMF (BBC 0.882 at 5 iterations, 0.825 at 100; README).
- **SNMF (PGLOVE) 0.05-0.15 below SNMF (PPMI)**, where the paper has them level: the reason
  is not established. GloVe is trained on each corpus's own window co-occurrences with the
  paper's settings (d' = 100, x_max = 100, α = 3/4, learning rate 0.15, 25 epochs) and λ
  chosen by a sweep (0.1 / 1 / 10 → 1); more epochs and other λ were not tried.
- **Skmeans on NG5 above its published value (0.79 vs 0.72)**: probably because our
  spherical k-means keeps the best of 10 restarts by its objective (not tested further).
"""


def table2_markdown(cache, datasets, methods, *, runs, best, seeds, preamble="",
                    notes=TABLE2_NOTES):
    """The whole results file: one table per dataset and the claim check."""
    header = ["method", "NMI (paper protocol)", "ARI (paper protocol)",
              "published NMI / ARI", f"NMI ({seeds} seeds)", f"ARI ({seeds} seeds)",
              "fit s (seeds)", "paper runs kept of done / seeds"]
    parts = ["# Table 2: the model family on the shared corpora", "", preamble, ""]
    claims = []
    for dataset, info in datasets.items():
        rows, summary = table2_rows(cache, dataset, methods, runs=runs, best=best, seeds=seeds)
        parts += [f"## {dataset} ({info})", "", _markdown_table(header, rows), ""]
        if dataset in PAPER_DATASETS:
            claims.append((dataset, beats_baselines(summary, "paper"),
                           beats_baselines(summary, "seeds")))
    if claims:
        parts += ["## Claim: SNMF (PPMI) beats every baseline (Skmeans, NMF, ONMF, PNMF, "
                  "GNMF, DCN) on at least 3 of the 4 paper datasets", ""]
        fmt = {True: "yes", False: "no", None: "not run"}
        parts.append(_markdown_table(["dataset", "paper protocol", "seeds"],
                                     [[d, fmt[p], fmt[s]] for d, p, s in claims]))
        wins = sum(1 for _, p, _ in claims if p)
        parts += ["", f"Paper protocol: SNMF (PPMI) at or above every baseline on {wins} of "
                  f"{len(claims)} paper datasets run.", ""]
    if notes:
        parts += ["## Notes", "", notes.strip(), ""]
    return "\n".join(parts)
