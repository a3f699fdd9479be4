"""``semnmf cluster``: cluster a corpus, print the clusters, write the result folder.

The options become :class:`~semnmf.workflows.ClusterSettings` and a
:class:`~semnmf.cli.cluster_options.ClusterCommand`; the library's run
(:func:`semnmf.workflows.cluster.run_cluster`, or the Dask engine's) makes the
:class:`~semnmf.workflows.ClusterResult`, which saves itself; this module prints it.
"""

import argparse
import time

from ..models.registry import CLI_METHODS, CONSENSUS_METHODS, DEFAULT_CLI_METHOD
from ..models._defaults import DEFAULT_GRAPH_LAM, DEFAULT_LAM, MAX_LAM
from ._common import (add_context_arguments, add_input_arguments, add_output_arguments,
                      command_parser, output_folder)
from ..workflows.checks import DEFAULT_RUNS, DTYPES, INITS, LAM_SCALES, names
from .cluster_options import cluster_options, default, parse_k
from .engine import add_engine_arguments, run_dask

__all__ = ["add_parser", "run", "parse_k"]

EPILOG = """\
examples:
  semnmf cluster bbc -k 5                       the built-in BBC News corpus: the language's stop
                                                words; sentence semantics when installed (auto)
  semnmf cluster bbc -k 5 --method nmf          plain NMF for comparison
  semnmf cluster bbc -k auto                    a recommended k, a range, and every level of it
  semnmf cluster docs.csv -k 10 --text-column body --out results/
  semnmf cluster my_folder/ -k 4 --context window --window 10
  semnmf cluster bbc -k 5 --consensus mmm --runs 3             three runs: better, 1.4-2.2x time
  semnmf cluster bbc -k 5 --consensus mmm --runs 10 --keep 5   consensus of the 5 best of 10 runs
  semnmf cluster bbc -k 5 --refine gt                          refine with GTNMF
  semnmf cluster bbc -k 5 --semantics minilm                   sentence semantics, every chunk
  semnmf cluster bbc -k 5 --semantics none                     word counts only
  semnmf cluster avis.csv -k 5 --language fr                   French stop words, named
  semnmf cluster posts.csv -k 8 --id-column post_id            ids of your own in assignments.csv
  semnmf cluster shards/ -k 20 --method nmf --engine dask --workers 2   on Dask workers

SOURCE is "bbc", a dataset name found in $SEMNMF_DATA, a dataset folder (counts.mtx,
vocab.txt, labels.txt, docs.jsonl; or shards docs-00000.jsonl / .parquet, ...), a folder of .txt files (one sub-folder per label, or
flat), or a .csv / .tsv / .jsonl file with a text column (and optional label column).
Results go to --out: assignments.csv, topics.csv, run.json, and model/ (the saved model
that "semnmf assign DIR SOURCE" uses to assign new documents); report.html with --report.
A folder holding an earlier run's results is refused unless --overwrite (which removes
them first).

Choosing K: there is no single right number of clusters. Start from the number of topics
you expect, try a few values around it and read the top words: too small a K mixes topics,
too large a K splits a topic into near-duplicates. -k auto answers at several resolutions:
it fits at a recommended K (the K whose spherical k-means partitions of a sample agree best
across runs, pulled towards 8), then merges and splits those clusters, without refitting,
into a level for every K of a range within sqrt(3) of it. levels.csv holds every level,
run.json "k_range" and "levels" the range and how each level was made, the report a level
picker; "semnmf edit RUN --level K" makes a level the run's clusters. --min-cluster-size N
states the granularity instead (no cluster under N documents, at every level).
"""


def _k_argument(text):
    try:
        return parse_k(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def add_parser(commands):
    c = command_parser(commands, "cluster",
                       "cluster a corpus and write assignments, topics and run record",
                       "Cluster a corpus into K groups and show the top words of each.", EPILOG)
    c.add_argument("source", metavar="SOURCE", help="corpus to cluster (see below)")
    c.add_argument("-k", "--n-components", "--n-clusters", dest="k", type=_k_argument,
                   help="number of clusters (--n-clusters: its name before 0.3); auto (a "
                        "recommended k, a range and the clusters "
                        "at every k of the range, all without labels), a range 2:40 or a "
                        "list 5,10,20 to choose from (no default: required unless "
                        "--min-cluster-size; see \"Choosing K\" below)")
    c.add_argument("--min-cluster-size", type=int, metavar="N",
                   help="no cluster of fewer than N documents: smaller ones are merged into "
                        "their nearest, at every level of -k auto; alone, it implies -k auto "
                        "(default: no minimum)")
    c.add_argument("--method", choices=tuple(CLI_METHODS),
                   help="; ".join(f"{name}: {m.description}" for name, m in CLI_METHODS.items())
                   + f" (default {DEFAULT_CLI_METHOD}; snmf with --semantics, which runs the "
                   "Frobenius updates)")
    c.add_argument("--loss", choices=("frobenius", "kl"),
                   help=f"loss of {' / '.join(n for n, m in CLI_METHODS.items() if m.variants)}: "
                        "Frobenius (default) or generalized KL")
    c.add_argument("--orthogonal", action="store_true",
                   help="orthogonal updates of the document factors "
                        f"({' / '.join(n for n, m in CLI_METHODS.items() if m.variants)}, "
                        "Frobenius)")
    model = c.add_argument_group("Semantic-NMF")
    model.add_argument("--lam", type=float,
                       help=f"weight of the word-context term, 0 to {MAX_LAM:g} (default "
                            f"1 for {DEFAULT_CLI_METHOD}, {DEFAULT_LAM:g} otherwise; "
                            "relative to the "
                            "document term unless --lam-scale "
                            f"absolute); for {names(lambda m: m.word_context)} only")
    model.add_argument("--lam-scale", choices=LAM_SCALES,
                       help="relative: lam weighs the relative errors of both terms (same "
                            "meaning on every corpus); absolute: the paper's raw lambda "
                            "(default relative)")
    model.add_argument("--graph-lam", type=float,
                       help=f"weight of the document-graph term, 0 to {MAX_LAM:g} (default "
                            f"{DEFAULT_GRAPH_LAM:g}, relative); for {names(lambda m: m.graph)} "
                            "only")
    add_context_arguments(model)
    _add_fit_arguments(c)
    add_engine_arguments(c)
    add_input_arguments(c)
    add_output_arguments(c, "semnmf_results/<source>_<method>_k<K>")
    c.add_argument("--report", action="store_true",
                   help="also write report.html, a self-contained page (semnmf report)")
    return c


def _add_semantics_arguments(c):
    """The options of pretrained semantics (sentence models, GloVe)."""
    pre = c.add_argument_group("pretrained semantics (a sentence model needs the [embeddings] "
                               "extra)")
    pre.add_argument("--semantics", metavar="SOURCE",
                     help="auto (default): all-MiniLM-L6-v2 on raw text in a language it "
                          "reads, when the [embeddings] extra is installed, word counts "
                          "otherwise (the run says which and why); none (or corpus): word "
                          "contexts of this corpus only; glove: GloVe 6B word vectors; "
                          "minilm: all-MiniLM-L6-v2 (offline), every chunk read; or any "
                          "sentence-transformers model name")
    pre.add_argument("--embed", choices=("words", "documents", "both"),
                     help="what the pretrained model reads: the vocabulary terms (a word graph "
                          "that expands the documents), the documents (chunked, in full: a "
                          "document graph and the start), or both (default both)")
    pre.add_argument("--pooling", choices=("mean", "first"),
                     help="how the sentence model reads a document longer than its 256 word "
                          "pieces: every chunk, their vectors averaged (mean: the default "
                          "with --semantics minilm), or the first chunk only (first: one "
                          "forward pass per document, as sentence-transformers reads it; "
                          "the default when --semantics auto picks the model)")
    pre.add_argument("--partition", choices=("auto", "fit", "documents"),
                     help="with embedded documents, the clusters: the Semantic-NMF fit's "
                          "(fit), or the document vectors' k-means partition, its start, "
                          "with the word topics Semantic-NMF gives it (documents); auto "
                          "(default): documents below 1750 corpus tokens per cluster, the "
                          "fit with --refine gt")
    pre.add_argument("--cache-dir", metavar="DIR",
                     help="embedding cache (default $SEMNMF_CACHE or ~/.cache/semnmf)")


def _add_fit_arguments(c):
    """The fitting options, pretrained semantics, consensus and refinement."""
    fit = c.add_argument_group("fitting")
    fit.add_argument("--init", choices=INITS,
                     help="starting point of the NMF methods (default: skmeans, spherical "
                          "k-means, as in the papers)")
    fit.add_argument("--n-init", type=int,
                     help="starts; the best objective is kept (default 5 for "
                          f"{DEFAULT_CLI_METHOD}, each "
                          "start screened by one sweep and the best continued; 1 otherwise)")
    fit.add_argument("--max-iter", type=int,
                     help=f"most iterations of a fit (default {default('max_iter')})")
    fit.add_argument("--tol", type=float,
                     help="stop when the objective changes by less than this, relative "
                          f"(default {default('tol'):g})")
    fit.add_argument("--seed", type=int, dest="random_state", metavar="SEED",
                     help=f"random seed (default {default('random_state')})")
    fit.add_argument("--dtype", choices=DTYPES,
                     help="floating-point type of X, M and the factors during the fit "
                          f"(default float32 for {DEFAULT_CLI_METHOD}, whose labels "
                          "were float64's on 9 "
                          "of 10 shared corpora and 99.97 %% of them on the tenth, else "
                          "float64); not with --semantics, whose pipeline sets its own")
    _add_semantics_arguments(c)
    combine = c.add_argument_group("many runs and refinement")
    combine.add_argument("--consensus", choices=CONSENSUS_METHODS,
                         help="combine --runs runs into one partition: cspa / hgpa / mcla "
                              "(Strehl & Ghosh), anmi (the best of the three by ANMI), mmm "
                              "(multinomial-mixture consensus), medoid (the run that agrees "
                              "most with the others) (default: none, one run)")
    combine.add_argument("--runs", type=int, dest="n_runs", metavar="RUNS",
                         help="runs for --consensus, seeds SEED..SEED+RUNS-1 (default "
                              f"{DEFAULT_RUNS})")
    combine.add_argument("--keep", type=int, dest="n_keep", metavar="KEEP",
                         help="keep the best KEEP runs by objective, for --consensus "
                              "(default: all)")
    combine.add_argument("--refine", choices=("gt", "centroid", "none"),
                         help="gt: game-theoretic refinement (GTNMF) of the memberships; "
                              "centroid: each document to the cluster centroid it is most "
                              "cosine-similar to, by a 5%% margin; none (default: centroid "
                              "for the default method, also after --consensus mmm, except "
                              "with --semantics, another --consensus, --seed-words or -k 1; "
                              "none for a method named)")
    c.add_argument("--device", metavar="DEVICE",
                   help="cpu (default: the compiled CPU engine), cuda / cuda:N (the PyTorch "
                        "engine on a GPU: pip install \"semnmf[gpu]\"), or auto (a GPU when "
                        "one is usable, said in the log); NMF and Semantic-NMF methods, and "
                        "the sentence model of --semantics")
    c.add_argument("--time-column", metavar="NAME",
                   help="a date column (CSV) or field (JSONL): each topic's share per period "
                        "is written to topics_over_time.csv (by class too when labelled) "
                        "and drawn in the report (default: none)")
    c.add_argument("--time-period", choices=("auto", "year", "month", "day"),
                   help="the periods of --time-column (default auto: the finest with at "
                        "most 60 periods)")
    c.add_argument("--date-format", metavar="FORMAT",
                   help="how --time-column writes its dates, as strptime reads them, e.g. "
                        "%%d/%%m/%%Y (default: ISO dates 2024-03-05, 2024-03 or 2024)")
    c.add_argument("--seed-words", metavar="FILE",
                   help="guided topics: one topic per line, a few words each (spaces or "
                        "commas); those topics start from and are held near their words, "
                        "the others are found freely (default: none, every topic free)")


def run(args):
    """``semnmf cluster``: options, the library's run (or the Dask engine's), the result
    folder, the summary."""
    started = time.perf_counter()
    settings, command = cluster_options(args)
    out = output_folder(command, command.folder_name(settings))
    if command.engine == "dask":
        result = run_dask(settings, command, started)
    else:
        from ..workflows.cluster import run_cluster

        result = run_cluster(settings, started)
    result.save(out, overwrite=command.overwrite, report=command.report,
                cli_arguments=command.record(settings, result.settings))
    _print_summary(result, out, result.files)
    return 0


def _print_summary(run, out, files):
    """The clusters of ``run`` (size, main label, top words), its scores, the files."""
    import numpy as np
    from rich.table import Table

    from .._utils.progress import stdout_console

    corpus, labels, top = run.corpus, run.labels, run.settings.n_top
    console = stdout_console()
    clusters, sizes = np.unique(labels, return_counts=True)
    size = dict(zip(clusters.tolist(), sizes.tolist()))
    table = Table(title=f"{run.method} on {corpus.name}: {len(corpus)} documents, "
                        f"k={run.k}")
    table.add_column("cluster", justify="right")
    table.add_column("size", justify="right")
    if corpus.labels is not None:
        table.add_column("main label")
    table.add_column(f"top {top} words")
    for c, terms in enumerate(run.topics):
        row = [str(c), str(size.get(c, 0))]
        terms = [(term, weight) for term, weight in terms if weight > 0]
        if corpus.labels is not None:
            members = corpus.labels[(labels == c) & corpus.labelled]
            if len(members):
                values, counts = np.unique(members.astype(str), return_counts=True)
                row.append(f"{values[counts.argmax()]} ({counts.max() / len(members):.0%})")
            else:
                row.append("-")
        row.append(" ".join(term for term, _ in terms) if size.get(c, 0) else "(empty)")
        table.add_row(*row)
    if -1 in size:
        table.add_row("-1", str(size[-1]), *([""] if corpus.labels is not None else []),
                      "(documents without any term)")
    console.print(table)
    scores, quality = run.scores, run.extra.get("topic_quality")
    if run.degenerate:
        console.print(f"the result is degenerate: {run.degenerate} (no topic quality is "
                      "shown; choose a smaller -k)")
        quality = None
    if scores:
        console.print(f"NMI {scores['nmi']:.4f}   ARI {scores['ari']:.4f}   "
                      f"accuracy {scores['accuracy']:.4f}")
    if quality and not np.isfinite(quality["npmi"]):
        console.print("NPMI -   diversity -   (every topic is empty: no cluster has a word)")
    elif quality:
        console.print(f"NPMI {quality['npmi']:.4f}   diversity {quality['diversity']:.4f}   "
                      f"(topic coherence of the top {quality['npmi_top_n']} words, unique "
                      f"share of the top {quality['diversity_top_n']})")
    # the files in the order users know: the three results, then the ensemble's runs
    shown = sorted(files, key=lambda f: f == "partitions.csv")  # stable: the others first
    console.print(f"results written to {out}/ ({', '.join(shown)})")
