"""``semnmf bench``: the papers' Table 2 (and the λ sweep) on benchmark corpora, through
:mod:`semnmf.experiments` (protocols, cache, tables)."""

import os
from dataclasses import dataclass

from ..models.registry import TABLE2_ORDER
from ._common import command_parser

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


@dataclass(frozen=True, kw_only=True)
class BenchOptions:
    """Every option of one ``semnmf bench``, defaults filled in."""

    command: str = "bench"
    datasets: tuple = ()
    data: str | None = None
    methods: str = ",".join(TABLE2_ORDER)
    protocol: str = "both"
    runs: int = 50
    best: int = 10
    seeds: int = 10
    sweep: bool = False
    sweep_seeds: int = 3
    out: str = os.path.join("benchmarks", "results")
    cache: str = os.path.join("benchmarks", "cache", "table2.json")
    report_only: bool = False
    quiet: bool = False


D = BenchOptions()


def add_parser(commands):
    b = command_parser(
        commands, "bench", "reproduce the papers' Table 2 (and the λ sweep) on benchmark corpora",
        "Run the model family under the papers' protocol and write a markdown table with the "
        "published numbers beside ours. Every finished run is cached, so an interrupted "
        "benchmark resumes where it stopped.", EPILOG)
    b.add_argument("datasets", nargs="*", metavar="DATASET",
                   help=f"dataset names or folders (default: {' '.join(BENCH_DATASETS)})")
    b.add_argument("--data",
                   help="folder holding the named datasets (default: $SEMNMF_DATA, else "
                        "../shared/datasets)")
    b.add_argument("--methods",
                   help="comma-separated methods (default: all): " + ", ".join(TABLE2_ORDER))
    b.add_argument("--protocol", choices=("paper", "seeds", "both"),
                   help="paper: best --best of --runs shared spherical k-means starts; "
                        "seeds: each method's own start, --seeds seeds (default both)")
    b.add_argument("--runs", type=int, help=f"runs of the paper protocol ({D.runs})")
    b.add_argument("--best", type=int, help=f"runs kept by objective ({D.best})")
    b.add_argument("--seeds", type=int, help=f"seeds of the plain protocol ({D.seeds})")
    b.add_argument("--sweep", action="store_true",
                   help="also sweep λ (PPMI and PGLOVE) and draw the papers' Figures 2-3")
    b.add_argument("--sweep-seeds", type=int, help=f"seeds per λ ({D.sweep_seeds})")
    b.add_argument("--out",
                   help=f"folder of table2.md and the figures (default {D.out})")
    b.add_argument("--cache",
                   help=f"cache of finished runs (default {D.cache})")
    b.add_argument("--report-only", action="store_true",
                   help="run nothing: write table2.md from the runs already in --cache")
    b.add_argument("--quiet", action="store_true", help="print nothing but errors")
    return b


def _sources(options):
    """(name, path) of each dataset to run; names not found are skipped with a message."""
    from rich.markup import escape

    from .._utils.progress import log
    from ..datasets import BUILTIN

    roots = [options.data] if options.data else []
    roots += [p for p in os.environ.get("SEMNMF_DATA", "").split(os.pathsep) if p]
    roots.append(os.path.join("..", "shared", "datasets"))
    found = []
    for name in options.datasets or BENCH_DATASETS:
        if os.path.isdir(name) or name.lower() in BUILTIN:
            found.append((os.path.basename(os.path.normpath(name)), name))
            continue
        paths = [os.path.join(root, name) for root in roots]
        path = next((p for p in paths if os.path.isdir(p)), None)
        if path is None:
            log(f"[yellow]skipping {escape(name)}:[/] not found in "
                f"{escape(', '.join(roots))} (give --data or set SEMNMF_DATA)", True,
                markup=True)
        else:
            found.append((name, path))
    return found


def run(args):
    """``semnmf bench``: the datasets found, their missing runs, Table 2 (and the sweeps)."""
    from rich.markup import escape

    from .._utils.progress import log
    from ..datasets import load_dataset
    from ..models.registry import get_method
    from ..experiments.protocol import ResultCache, run_dataset
    from ..experiments.sweep import SWEEP_TITLES, cached_sweeps, plot_sweep
    from ..experiments.tables import dataset_info, write_table2

    options = BenchOptions(**{**vars(args), "datasets": tuple(getattr(args, "datasets", ()))})
    verbose = not options.quiet
    # unknown names fail before anything runs
    methods = [get_method(m.strip()).name for m in options.methods.split(",") if m.strip()]
    for value, name in ((options.runs, "--runs"), (options.best, "--best"),
                        (options.seeds, "--seeds"), (options.sweep_seeds, "--sweep-seeds")):
        if value < 1:
            raise ValueError(f"{name} must be at least 1, got {value}.")
    if options.best > options.runs:
        raise ValueError(f"--best ({options.best}) cannot exceed --runs ({options.runs}).")
    sources = _sources(options)
    if not sources:
        log("no dataset found: nothing to run.", True)
        return 0
    os.makedirs(options.out, exist_ok=True)
    cache = ResultCache(options.cache)
    protocols = ("paper", "seeds") if options.protocol == "both" else (options.protocol,)
    say = (lambda message: log(message, True)) if verbose else (lambda message: None)
    table2 = os.path.join(options.out, "table2.md")
    infos, sweeps = {}, {"ppmi": {}, "pglove": {}}
    for name, path in sources:
        corpus = load_dataset(path)
        if corpus.labels is None:
            log(f"[yellow]skipping {escape(name)}:[/] it has no labels to score against", True,
                markup=True)
            continue
        X = corpus.tfidf()
        infos[name] = dataset_info(X, corpus.n_classes)
        if not options.report_only:
            contexts = run_dataset(name, corpus, X, methods, cache, protocols=protocols,
                                   runs=options.runs, seeds=options.seeds, log=say)
            if options.sweep:
                for kind, result in cached_sweeps(name, corpus, X, contexts, cache,
                                                  seeds=options.sweep_seeds, log=say).items():
                    sweeps[kind][name] = result
        write_table2(table2, cache, infos, methods, runs=options.runs, best=options.best,
                     seeds=options.seeds)
    for kind, results in sweeps.items():
        if results:
            figure = os.path.join(options.out, f"lambda_sweep_{kind}.png")
            plot_sweep(results, figure, SWEEP_TITLES[kind])
            say(f"wrote {figure}")
    say(f"wrote {table2}")
    return 0
