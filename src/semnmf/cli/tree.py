"""``semnmf tree``: a topic tree by rank-2 NMF splits (HierNMF2), printed and written
with :func:`semnmf.report.write_tree_results`."""

import argparse
import time

from ..models._defaults import DEFAULT_LAM, MAX_LAM
from ._common import (add_context_arguments, add_input_arguments, add_output_arguments,
                      check_context_arguments, check_input_arguments, check_number, check_seed,
                      context_record, data_notes, load_corpus, logged_warnings, output_folder,
                      source_name, word_context)

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
    t = commands.add_parser(
        "tree", help="grow a topic tree by rank-2 NMF splits (HierNMF2)",
        description="Hierarchical clustering: a binary tree of topics with outliers set apart.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    t.add_argument("source", metavar="SOURCE", help="corpus (as for semnmf cluster)")
    t.add_argument("--leaves", type=int, required=True, help="number of leaves of the tree")
    split = t.add_argument_group("splitting")
    split.add_argument("--splitter", choices=("rank2", "semantic", "kmeans"), default="rank2",
                       help="rank2: rank-2 NMF (default, the paper); semantic: rank-2 "
                            "Semantic-NMF with the word-context term; kmeans: spherical 2-means")
    split.add_argument("--lam", type=float, default=None,
                       help=f"word-context weight for --splitter semantic, 0 to {MAX_LAM:g} "
                            f"(default {DEFAULT_LAM:g})")
    split.add_argument("--beta", type=float, default=9.0,
                       help="outlier rule |N1| >= beta |N2| (default 9, the paper's)")
    split.add_argument("--trials", type=int, default=3,
                       help="tentative splits per node, T (default 3, the paper's)")
    split.add_argument("--score-threshold", type=float, default=0.0,
                       help="stop when no leaf scores above it (default 0)")
    split.add_argument("--max-iter", type=int, default=500,
                       help="iterations per split (default 500)")
    split.add_argument("--tol", type=float, default=1e-4,
                       help="projected-gradient tolerance of each split (default 1e-4)")
    split.add_argument("--stop", choices=("pg", "partition"), default="pg",
                       help="when a split's ANLS stops: pg, the paper's projected-gradient "
                            "rule with --tol (default); partition, once the split of the "
                            "node's documents has settled (about 3x fewer iterations)")
    split.add_argument("--assign-labels", choices=("topics", "tree"), default="topics",
                       help="each document's cluster: topics, its best leaf topic over all "
                            "leaves (default; higher NMI on 9 of 10 shared corpora); tree, the "
                            "leaf the splits routed it to, outliers -1 (the paper's)")
    split.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    add_context_arguments(split)
    add_input_arguments(t)
    add_output_arguments(t, "semnmf_results/<source>_tree<N>")
    t.add_argument("--report", action="store_true",
                   help="also write report.html, a self-contained page (semnmf report)")
    return t


def check_arguments(args):
    """Refuse option values and combinations that cannot work, before reading any data."""
    check_number(args.leaves, "--leaves", low=1, integer=True)
    check_seed(args.seed)
    check_number(args.lam, "--lam", low=0, high=MAX_LAM)
    check_number(args.beta, "--beta")
    if args.beta <= 1:
        raise ValueError(f"--beta must be greater than 1, got {args.beta:g}.")
    check_number(args.trials, "--trials", low=1, integer=True)
    check_number(args.score_threshold, "--score-threshold")
    check_number(args.max_iter, "--max-iter", low=1, integer=True)
    check_number(args.tol, "--tol", low=0)
    check_input_arguments(args)
    semantic = args.splitter == "semantic"
    if args.lam is not None and not semantic:
        raise ValueError(f"--lam weighs the word-context term of --splitter semantic; "
                         f"--splitter {args.splitter} has none: drop --lam or use --splitter "
                         "semantic.")
    check_context_arguments(args, semantic, "for --splitter semantic")
    if args.lam is None:
        args.lam = DEFAULT_LAM


def run(args):
    from ..metrics import clustering_scores, nmi, topic_quality
    from ..models import HierarchicalNMF
    from ..pipelines.saved import SavedModel
    from ..report.results import run_record, write_tree_results

    from ..report.output import clear_output_folder

    verbose = not args.quiet
    timings = {}
    t0 = time.perf_counter()
    check_arguments(args)
    out = output_folder(args, f"{source_name(args.source)}_tree{args.leaves}")
    corpus, X = load_corpus(args, verbose, timings, t0)
    if args.leaves > X.shape[0]:
        raise ValueError(f"--leaves {args.leaves} is larger than the number of documents ({X.shape[0]}).")
    M, context = None, None
    if args.splitter == "semantic":
        M, context = word_context(args, corpus, verbose, timings)
    model = HierarchicalNMF(args.leaves, score_threshold=args.score_threshold, beta=args.beta,
                            n_trials=args.trials, splitter=args.splitter, lam=args.lam,
                            max_iter=args.max_iter, tol=args.tol, stop=args.stop,
                            assign_labels=args.assign_labels, random_state=args.seed,
                            verbose=int(verbose))
    t = time.perf_counter()
    with logged_warnings():
        model.fit(X, M=M)
    timings["fit"] = time.perf_counter() - t

    scores, snapshots = None, None
    if corpus.labels is not None:
        # the labels written; with --assign-labels tree the outliers are one more
        # cluster, as the paper evaluates. The snapshots are the tree's own partitions.
        labels = model.labels_.copy()
        labels[labels < 0] = model.n_leaves_
        scores = clustering_scores(corpus.labels, labels)
        snapshots = {str(t): round(nmi(corpus.labels, model.partition(t, outliers="cluster")), 6)
                     for t in range(2, model.n_leaves_ + 1)}
    timings["total"] = time.perf_counter() - t0

    common = run_record(model, model.labels_, method="hiernmf2", corpus=corpus, X=X,
                        source=args.source, weighting=args.weighting,
                        cli_arguments=vars(args), context=context_record(args, M, context),
                        scores=scores, timings=timings)
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
    # strength of each document's leaf (see HierarchicalNMF.predict_membership); with
    # --assign-labels tree the outliers' is 0
    strength = model.predict_membership(X)[1] * (model.labels_ >= 0)
    clear_output_folder(out)  # an earlier run's files (--overwrite): none may stay
    files = write_tree_results(out, model, corpus, record, n_top=max(args.top, 20), n_terms=6,
                               title=f"{corpus.name}: {model.n_leaves_} leaves",
                               memberships=strength,
                               saved_model=SavedModel.from_fit(model, corpus, args.weighting,
                                                               method="hiernmf2"))
    if args.report:
        from ..report.html import write_report

        write_report(out, corpus=corpus)
        files.append("report.html")

    print(model.export_text(corpus.vocabulary, n_terms=min(args.top, 8)))
    if scores:
        how = ("outliers as one cluster" if args.assign_labels == "tree"
               else "each document's best leaf topic")
        print(f"NMI {scores['nmi']:.4f}   ARI {scores['ari']:.4f}   accuracy "
              f"{scores['accuracy']:.4f}   ({how})")
    print(f"{model.n_leaves_} leaves, {model.outliers_.size} outliers; results written to "
          f"{out}/ ({', '.join(files)})")
    return 0
