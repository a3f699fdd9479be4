"""``semnmf tree``: a topic tree by rank-2 NMF splits (HierNMF2), printed and written
with :func:`semnmf.report.write_tree_results`."""

import dataclasses
import time
from dataclasses import dataclass

from ..models._defaults import DEFAULT_LAM, MAX_LAM
from ..workflows.checks import check_context
from ..workflows.inputs import context_defaults
from ._common import (ContextOptions, OutputOptions, ReadOptions, VectorizeOptions,
                      add_context_arguments, add_input_arguments, add_output_arguments,
                      check_input_arguments, check_number, check_seed, command_parser,
                      library_view, load_corpus, options_record, output_folder, word_context)
from .flags import CLI_WORDS, flag

EPILOG = """\
examples:
  semnmf tree bbc --leaves 8                    topic tree of the built-in BBC corpus
  semnmf tree docs.csv --leaves 20 --out tree/  tree of the "text" column of a CSV

Hierarchical clustering by rank-2 NMF (Kuang & Park, KDD 2013): the leaf whose split
scores best is split next; small low-scoring groups are set apart as outliers. Each
document's cluster is then its best leaf topic over all leaves (--assign-labels topics),
or, as in the paper, the leaf the splits routed it to, outliers -1 (--assign-labels tree).
Results go to --out: tree.json, assignments.csv, tree.png, tree.svg, run.json, and model/
(the saved tree that "semnmf assign DIR SOURCE" uses to assign new documents); a folder
holding an earlier run's results is refused unless --overwrite).
SOURCE is read as for "semnmf cluster".
"""


def add_parser(commands):
    t = command_parser(
        commands, "tree", "grow a topic tree by rank-2 NMF splits (HierNMF2)",
        "Hierarchical clustering: a binary tree of topics with outliers set apart.", EPILOG)
    t.add_argument("source", metavar="SOURCE", help="corpus (as for semnmf cluster)")
    t.add_argument("--leaves", type=int, required=True, dest="n_leaves", metavar="LEAVES",
                   help="number of leaves of the tree")
    split = t.add_argument_group("splitting")
    split.add_argument("--splitter", choices=("rank2", "semantic", "kmeans"),
                       help="rank2: rank-2 NMF (default, the paper); semantic: rank-2 "
                            "Semantic-NMF with the word-context term; kmeans: spherical 2-means")
    split.add_argument("--lam", type=float,
                       help=f"word-context weight for --splitter semantic, 0 to {MAX_LAM:g} "
                            f"(default {DEFAULT_LAM:g})")
    split.add_argument("--beta", type=float,
                       help="outlier rule |N1| >= beta |N2| (default 9, the paper's)")
    split.add_argument("--trials", type=int, dest="n_trials", metavar="TRIALS",
                       help="tentative splits per node, T (default 3, the paper's)")
    split.add_argument("--score-threshold", type=float,
                       help="stop when no leaf scores above it (default 0)")
    split.add_argument("--max-iter", type=int,
                       help="iterations per split (default 500)")
    split.add_argument("--tol", type=float,
                       help="projected-gradient tolerance of each split (default 1e-4)")
    split.add_argument("--stop", choices=("pg", "partition"),
                       help="when a split's ANLS stops: pg, the paper's projected-gradient "
                            "rule with --tol (default); partition, once the split of the "
                            "node's documents has settled (about 3x fewer iterations)")
    split.add_argument("--assign-labels", choices=("topics", "tree"),
                       help="each document's cluster: topics, its best leaf topic over all "
                            "leaves (default; higher NMI on 9 of 10 shared corpora); tree, the "
                            "leaf the splits routed it to, outliers -1 (the paper's)")
    split.add_argument("--seed", type=int, dest="random_state", metavar="SEED",
                       help="random seed (default 0)")
    add_context_arguments(split)
    add_input_arguments(t)
    add_output_arguments(t, "semnmf_results/<source>_tree<N>")
    t.add_argument("--report", action="store_true",
                   help="also write report.html, a self-contained page (semnmf report)")
    return t


@dataclass(frozen=True, kw_only=True)
class TreeOptions(ReadOptions, VectorizeOptions, ContextOptions, OutputOptions):
    """Every option of one ``semnmf tree`` run, defaults filled in (the parameters'
    names; run.json records them under their flags' words)."""

    command: str = "tree"
    n_leaves: int
    splitter: str = "rank2"
    lam: float | None = None
    beta: float = 9.0
    n_trials: int = 3
    score_threshold: float = 0.0
    max_iter: int = 500
    tol: float = 1e-4
    stop: str = "pg"
    assign_labels: str = "topics"
    random_state: int = 0
    report: bool = False


def tree_options(args):
    """The :class:`TreeOptions` of the parsed command line (the options given only),
    checked before any data is read, then filled."""
    options = TreeOptions(**vars(args))
    check_number(options.n_leaves, flag("n_leaves"), low=1, integer=True)
    check_seed(options.random_state)
    check_number(options.lam, flag("lam"), low=0, high=MAX_LAM)
    check_number(options.beta, flag("beta"))
    if options.beta <= 1:
        raise ValueError(f"--beta must be greater than 1, got {options.beta:g}.")
    check_number(options.n_trials, flag("n_trials"), low=1, integer=True)
    check_number(options.score_threshold, flag("score_threshold"))
    check_number(options.max_iter, flag("max_iter"), low=1, integer=True)
    check_number(options.tol, flag("tol"), low=0)
    check_input_arguments(options)
    semantic = options.splitter == "semantic"
    if options.lam is not None and not semantic:
        raise ValueError(f"--lam weighs the word-context term of --splitter semantic; "
                         f"--splitter {options.splitter} has none: drop --lam or use "
                         "--splitter semantic.")
    check_context(options, CLI_WORDS, semantic, "for --splitter semantic")
    lam = DEFAULT_LAM if options.lam is None else options.lam
    return dataclasses.replace(options, lam=lam, **context_defaults(options))


def run(args):
    """``semnmf tree``: options, the tree, its result folder, the printed tree."""
    from ..datasets import source_name
    from ..pipelines.saved import SavedModel
    from ..report.output import clear_output_folder
    from ..report.results import write_tree_results

    t0 = time.perf_counter()
    options = tree_options(args)
    out = output_folder(options, f"{source_name(options.source)}_tree{options.n_leaves}")
    timings = {}
    corpus, X = load_corpus(options, options.verbose, timings, t0)
    if options.n_leaves > X.shape[0]:
        raise ValueError(f"--leaves {options.n_leaves} is larger than the number of documents "
                         f"({X.shape[0]}).")
    wc = None
    if options.splitter == "semantic":
        wc = word_context(options, corpus, options.verbose, timings)
        options = dataclasses.replace(options, association=wc.association, top_k=wc.top_k)
    model = _fit(options, X, wc, timings)
    scores, snapshots = _scores(model, corpus)
    timings["total"] = time.perf_counter() - t0
    record = _record(options, model, corpus, X, wc, scores, snapshots, timings)
    # strength of each document's leaf (see HierarchicalNMF.predict_membership); with
    # --assign-labels tree the outliers' is 0
    strength = model.predict_membership(X)[1] * (model.labels_ >= 0)
    clear_output_folder(out)  # an earlier run's files (--overwrite): none may stay
    files = write_tree_results(out, model, corpus, record, n_top=max(options.n_top, 20),
                               n_terms=6, title=f"{corpus.name}: {model.n_leaves_} leaves",
                               strengths=strength,
                               saved_model=SavedModel.from_fit(model, corpus,
                                                               options.weighting,
                                                               method="hiernmf2"))
    if options.report:
        from ..report.html import write_report

        write_report(out, corpus=corpus)
        files.append("report.html")
    print(model.export_text(corpus.vocabulary, n_terms=min(options.n_top, 8)))
    if scores:
        how = ("outliers as one cluster" if options.assign_labels == "tree"
               else "each document's best leaf topic")
        print(f"NMI {scores['nmi']:.4f}   ARI {scores['ari']:.4f}   accuracy "
              f"{scores['accuracy']:.4f}   ({how})")
    print(f"{model.n_leaves_} leaves, {model.outliers_.size} outliers; results written to "
          f"{out}/ ({', '.join(files)})")
    return 0


def _fit(options, X, wc, timings):
    """The fitted :class:`semnmf.HierarchicalNMF` of the options."""
    from .._utils.progress import timed
    from ..models import HierarchicalNMF
    from ..workflows.inputs import collected_warnings

    model = HierarchicalNMF(options.n_leaves, score_threshold=options.score_threshold,
                            beta=options.beta, n_trials=options.n_trials,
                            splitter=options.splitter, lam=options.lam,
                            max_iter=options.max_iter, tol=options.tol, stop=options.stop,
                            assign_labels=options.assign_labels, random_state=options.random_state,
                            verbose=int(options.verbose))
    with timed(timings, "fit"), collected_warnings():
        model.fit(X, M=None if wc is None else wc.M)
    return model


def _scores(model, corpus):
    """(scores, NMI per number of leaves) against the corpus' labels, or (None, None)."""
    from ..metrics import clustering_scores, nmi

    if corpus.labels is None:
        return None, None
    # the labels written; with --assign-labels tree the outliers are one more
    # cluster, as the paper evaluates. The snapshots are the tree's own partitions.
    labels = model.labels_.copy()
    labels[labels < 0] = model.n_leaves_
    snapshots = {str(t): round(nmi(corpus.labels, model.partition(t, outliers="cluster")), 6)
                 for t in range(2, model.n_leaves_ + 1)}
    return clustering_scores(corpus.labels, labels), snapshots


def _record(options, model, corpus, X, wc, scores, snapshots, timings):
    """The tree's run.json."""
    from ..metrics import topic_quality
    from ..report.results import run_record
    from ..workflows.inputs import context_record, data_notes

    common = run_record(model, model.labels_, method="hiernmf2", corpus=corpus, X=X,
                        source=options.source, weighting=options.weighting,
                        cli_arguments=options_record(options),
                        context=context_record(library_view(options), wc), scores=scores,
                        timings=timings)
    data_notes(common, corpus)
    record = {key: common[key] for key in ("method", "estimator", "source", "corpus",
                                           "parameters", "cli_arguments", "context", "data",
                                           "n_classes")}
    record.update({
        "n_leaves": model.n_leaves_, "n_outliers": int(model.outliers_.size),
        "splits": model.splits_, "n_factorizations": model.n_factorizations_,
        "scores": scores, "nmi_by_number_of_leaves": snapshots,
        # label-free quality of the leaves' topics, as `semnmf cluster` records it
        "topic_quality": topic_quality(model.components_, corpus.counts()),
        **{key: common[key] for key in ("timings_seconds", "threads", "versions",
                                        "created")}})
    return record
