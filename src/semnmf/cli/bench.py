"""``semnmf bench``: the papers' Table 2 (and the λ sweep) on benchmark corpora, through
:mod:`semnmf.experiments` (protocols, cache, tables)."""

import argparse
import os

from ..experiments.methods import TABLE2_ORDER

BENCH_DATASETS = ("cstr", "classic4", "ng5", "ng20", "bbc", "classic3")

EPILOG = """\
examples:
  semnmf bench                                  Table 2 on the default corpora (hours)
  semnmf bench cstr classic4 --runs 20 --best 5 --methods skmeans,nmf,snmf
  semnmf bench ng5 --protocol seeds --seeds 5 --sweep

Results: OUT/table2.md (both protocols, the published numbers beside ours, and whether
SNMF (PPMI) beats every baseline), OUT/lambda_sweep_ppmi.png and
OUT/lambda_sweep_pglove.png with --sweep. Runs already in --cache are not recomputed.
"""


def add_parser(commands):
    b = commands.add_parser(
        "bench", help="reproduce the papers' Table 2 (and the λ sweep) on benchmark corpora",
        description="Run the model family under the papers' protocol and write a markdown "
                    "table with the published numbers beside ours. Every finished run is "
                    "cached, so an interrupted benchmark resumes where it stopped.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    b.add_argument("datasets", nargs="*", metavar="DATASET",
                   help=f"dataset names or folders (default: {' '.join(BENCH_DATASETS)})")
    b.add_argument("--data", default=None,
                   help="folder holding the named datasets (default: $SEMNMF_DATA, else "
                        "../shared/datasets)")
    b.add_argument("--methods", default=",".join(TABLE2_ORDER),
                   help="comma-separated methods (default: all): " + ", ".join(TABLE2_ORDER))
    b.add_argument("--protocol", choices=("paper", "seeds", "both"), default="both",
                   help="paper: best --best of --runs shared spherical k-means starts; "
                        "seeds: each method's own start, --seeds seeds (default both)")
    b.add_argument("--runs", type=int, default=50, help="runs of the paper protocol (50)")
    b.add_argument("--best", type=int, default=10, help="runs kept by objective (10)")
    b.add_argument("--seeds", type=int, default=10, help="seeds of the plain protocol (10)")
    b.add_argument("--sweep", action="store_true",
                   help="also sweep λ (PPMI and PGLOVE) and draw the papers' Figures 2-3")
    b.add_argument("--sweep-seeds", type=int, default=3, help="seeds per λ (3)")
    b.add_argument("--out", default=os.path.join("benchmarks", "results"),
                   help="folder of table2.md and the figures (default benchmarks/results)")
    b.add_argument("--cache", default=os.path.join("benchmarks", "cache", "table2.json"),
                   help="cache of finished runs (default benchmarks/cache/table2.json)")
    b.add_argument("--report-only", action="store_true",
                   help="run nothing: write table2.md from the runs already in --cache")
    b.add_argument("--quiet", action="store_true", help="print nothing but errors")
    return b


def _sources(args):
    """(name, path) of each dataset to run; names not found are skipped with a message."""
    from .._utils.progress import log
    from ..datasets import BUILTIN

    roots = [args.data] if args.data else []
    roots += [p for p in os.environ.get("SEMNMF_DATA", "").split(os.pathsep) if p]
    roots.append(os.path.join("..", "shared", "datasets"))
    found = []
    for name in args.datasets or BENCH_DATASETS:
        if os.path.isdir(name) or name.lower() in BUILTIN:
            found.append((os.path.basename(os.path.normpath(name)), name))
            continue
        paths = [os.path.join(root, name) for root in roots]
        path = next((p for p in paths if os.path.isdir(p)), None)
        if path is None:
            log(f"[yellow]skipping {name}:[/] not found in {', '.join(roots)} "
                "(give --data or set SEMNMF_DATA)", True)
        else:
            found.append((name, path))
    return found


def run(args):
    from .._utils.progress import log
    from ..datasets import load_dataset
    from ..experiments.methods import get_method
    from ..experiments.protocol import ResultCache, run_dataset
    from ..experiments.sweep import SWEEP_TITLES, cached_sweeps, plot_sweep
    from ..experiments.tables import dataset_info, write_table2

    verbose = not args.quiet
    # unknown names fail before anything runs; a name of 0.1 warns and gives its new one
    methods = [get_method(m.strip()).name for m in args.methods.split(",") if m.strip()]
    for value, name in ((args.runs, "--runs"), (args.best, "--best"), (args.seeds, "--seeds"),
                        (args.sweep_seeds, "--sweep-seeds")):
        if value < 1:
            raise ValueError(f"{name} must be at least 1, got {value}.")
    if args.best > args.runs:
        raise ValueError(f"--best ({args.best}) cannot exceed --runs ({args.runs}).")
    sources = _sources(args)
    if not sources:
        log("no dataset found: nothing to run.", True)
        return 0
    os.makedirs(args.out, exist_ok=True)
    cache = ResultCache(args.cache)
    protocols = ("paper", "seeds") if args.protocol == "both" else (args.protocol,)
    say = (lambda message: log(message, True)) if verbose else (lambda message: None)
    table2 = os.path.join(args.out, "table2.md")
    infos, sweeps = {}, {"ppmi": {}, "pglove": {}}
    for name, path in sources:
        corpus = load_dataset(path)
        if corpus.labels is None:
            log(f"[yellow]skipping {name}:[/] it has no labels to score against", True)
            continue
        X = corpus.tfidf()
        infos[name] = dataset_info(X, corpus.n_classes)
        if not args.report_only:
            contexts = run_dataset(name, corpus, X, methods, cache, protocols=protocols,
                                   runs=args.runs, seeds=args.seeds, log=say)
            if args.sweep:
                for kind, result in cached_sweeps(name, corpus, X, contexts, cache,
                                                  seeds=args.sweep_seeds, log=say).items():
                    sweeps[kind][name] = result
        write_table2(table2, cache, infos, methods, runs=args.runs, best=args.best,
                     seeds=args.seeds)
    for kind, results in sweeps.items():
        if results:
            figure = os.path.join(args.out, f"lambda_sweep_{kind}.png")
            plot_sweep(results, figure, SWEEP_TITLES[kind])
            say(f"wrote {figure}")
    say(f"wrote {table2}")
    return 0
