"""``semnmf cluster``: cluster a corpus, print the clusters, write the result folder.

Parses the options, builds the estimator from the method registry
(:mod:`semnmf.experiments.methods`), fits it (or a :class:`semnmf.ClusterEnsemble` of
it), refines with GTNMF if asked, and writes the results with
:func:`semnmf.report.write_results`.
"""

import argparse
import time

from ..experiments.methods import CLI_METHODS, CONSENSUS_METHODS, DEFAULT_CLI_METHOD
from ..models._defaults import DEFAULT_GRAPH_LAM, DEFAULT_LAM, MAX_LAM
from ._common import (MAX_SEED, add_context_arguments, add_input_arguments,
                      add_output_arguments, as_dtype, check_context_arguments,
                      check_input_arguments, check_number, check_seed, context_record,
                      data_notes, load_corpus, logged_warnings, output_folder, source_name,
                      word_context)
from .engine import add_engine_arguments, check_engine_arguments, run_dask

EPILOG = """\
examples:
  semnmf cluster bbc -k 5                       Semantic-NMF on the built-in BBC News corpus
  semnmf cluster bbc -k 5 --method nmf          plain NMF for comparison
  semnmf cluster docs.csv -k 10 --text-column body --out results/
  semnmf cluster my_folder/ -k 4 --context window --window 10
  semnmf cluster bbc -k 5 --consensus mmm --runs 10 --keep 5   consensus of the 5 best of 10 runs
  semnmf cluster bbc -k 5 --refine gt                          refine with GTNMF
  semnmf cluster bbc -k 5 --semantics minilm                   with pretrained semantics
  semnmf cluster shards/ -k 20 --method nmf --engine dask --workers 2   on Dask workers

SOURCE is "bbc", a dataset name found in $SEMNMF_DATA, a dataset folder (counts.mtx,
vocab.txt, labels.txt, docs.jsonl; or shards docs-00000.jsonl / .parquet, ...), a folder of .txt files (one sub-folder per label, or
flat), or a .csv / .tsv / .jsonl file with a text column (and optional label column).
Results go to --out: assignments.csv, topics.csv, run.json, and model/ (the saved model
that "semnmf assign DIR SOURCE" uses to assign new documents); report.html with --report.
A folder holding an earlier run's results is refused unless --overwrite (which removes
them first).

Choosing K: there is no single right number of clusters. Start from the number of topics
you expect (the number of classes of a labelled corpus), then try a few values around it
(e.g. -k 4, -k 6, -k 8) and read the top words: too small a K mixes topics in one cluster,
too large a K splits a topic into near-duplicate clusters. -k auto chooses K without labels
among 2 .. min(50, documents/10) (a geometric grid; -k 2:40 or -k 5,10,20 give the
candidates): the K whose spherical k-means partitions of a sample of the documents agree
best across runs (NMI stability, slightly penalized in log K); run.json "k_selection" holds
the curve. It found the number of classes within 30 % on about half of the benchmark
corpora and tends to choose too few clusters when there are many (20 Newsgroups: 2;
benchmarks/results/k_selection.md): read the top words.
"""


def parse_k(text):
    """The ``-k`` of the command line: an int, ``"auto"``, a range ``"a:b"`` (every integer;
    ``"a:b:s"`` every s-th) or a list ``"5,10,20"``.

    Returns
    -------
    int, or ("auto", None), or ("grid", [k, ...])
    """
    text = str(text).strip().lower()
    if text == "auto":
        return ("auto", None)
    try:
        if ":" in text:
            parts = [int(p) for p in text.split(":")]
            if len(parts) not in (2, 3):
                raise ValueError
            step = parts[2] if len(parts) == 3 else 1
            if step < 1 or parts[0] < 1 or parts[1] < parts[0]:
                raise ValueError
            grid = list(range(parts[0], parts[1] + 1, step))
        elif "," in text:
            grid = sorted({int(p) for p in text.split(",") if p.strip()})
            if not grid or grid[0] < 1:
                raise ValueError
        else:
            return int(text)
    except ValueError:
        raise ValueError(f"-k must be a number of clusters (e.g. 5), auto, a range a:b "
                         f"(e.g. 2:40) or a list (e.g. 5,10,20), got {text!r}.") from None
    return ("grid", grid)


def _k_argument(text):
    try:
        return parse_k(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _names(test):
    return ", ".join(name for name, m in CLI_METHODS.items() if test(m))


def add_parser(commands):
    c = commands.add_parser(
        "cluster", help="cluster a corpus and write assignments, topics and run record",
        description="Cluster a corpus into K groups and show the top words of each.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    c.add_argument("source", metavar="SOURCE", help="corpus to cluster (see below)")
    c.add_argument("-k", "--n-clusters", required=True, dest="k", type=_k_argument,
                   help="number of clusters; auto (chosen without labels), a range 2:40 or "
                        "a list 5,10,20 to choose from (required; see \"Choosing K\" below)")
    c.add_argument("--method", choices=list(CLI_METHODS), default=None,
                   help="; ".join(f"{name}: {m.description}" for name, m in CLI_METHODS.items())
                   + f" (default {DEFAULT_CLI_METHOD}; snmf with --semantics, which runs the "
                   "Frobenius updates)")
    c.add_argument("--loss", choices=("frobenius", "kl"), default=None,
                   help=f"loss of {' / '.join(n for n, m in CLI_METHODS.items() if m.variants)}: "
                        "Frobenius (default) or generalized KL")
    c.add_argument("--orthogonal", action="store_true",
                   help="orthogonal updates of the document factors "
                        f"({' / '.join(n for n, m in CLI_METHODS.items() if m.variants)}, "
                        "Frobenius)")
    model = c.add_argument_group("Semantic-NMF")
    model.add_argument("--lam", type=float, default=None,
                       help=f"weight of the word-context term, 0 to {MAX_LAM:g} (default "
                            f"1 for snmf-kl, {DEFAULT_LAM:g} otherwise; relative to the "
                            "document term unless --lam-scale "
                            f"absolute); for {_names(lambda m: m.word_context)} only")
    model.add_argument("--lam-scale", choices=("relative", "absolute"), default=None,
                       help="relative: lam weighs the relative errors of both terms (same "
                            "meaning on every corpus); absolute: the paper's raw lambda "
                            "(default relative)")
    model.add_argument("--graph-lam", type=float, default=None,
                       help=f"weight of the document-graph term, 0 to {MAX_LAM:g} (default "
                            f"{DEFAULT_GRAPH_LAM:g}, relative); for {_names(lambda m: m.graph)} "
                            "only")
    add_context_arguments(model)
    fit = c.add_argument_group("fitting")
    fit.add_argument("--init", choices=("skmeans", "random", "nndsvda"), default=None,
                     help="starting point of the NMF methods (default: skmeans, spherical "
                          "k-means, as in the papers)")
    fit.add_argument("--n-init", type=int, default=None,
                     help="starts; the best objective is kept (default 5 for snmf-kl, each "
                          "start screened by one sweep and the best continued; 1 otherwise)")
    fit.add_argument("--max-iter", type=int, default=200,
                     help="most iterations of a fit (default 200)")
    fit.add_argument("--tol", type=float, default=1e-4,
                     help="stop when the objective changes by less than this, relative "
                          "(default 1e-4)")
    fit.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    fit.add_argument("--dtype", choices=("float32", "float64"), default=None,
                     help="floating-point type of X, M and the factors during the fit "
                          "(default float32 for snmf-kl, whose labels were float64's on 9 "
                          "of 10 shared corpora and 99.97 %% of them on the tenth, else "
                          "float64); not with --semantics, whose pipeline sets its own")
    pre = c.add_argument_group("pretrained semantics (needs the [embeddings] extra)")
    pre.add_argument("--semantics", default="corpus", metavar="SOURCE",
                     help="corpus: word contexts of this corpus only (default); glove: GloVe "
                          "6B word vectors; minilm: all-MiniLM-L6-v2 (offline); or any "
                          "sentence-transformers model name")
    pre.add_argument("--embed", choices=("words", "documents", "both"), default=None,
                     help="what the pretrained model reads: the vocabulary terms (a word graph "
                          "that expands the documents), the documents (chunked, in full: a "
                          "document graph and the start), or both (default both)")
    pre.add_argument("--cache-dir", default=None, metavar="DIR",
                     help="embedding cache (default $SEMNMF_CACHE or ~/.cache/semnmf)")
    combine = c.add_argument_group("many runs and refinement")
    combine.add_argument("--consensus", choices=CONSENSUS_METHODS, default=None,
                         help="combine --runs runs into one partition: cspa / hgpa / mcla "
                              "(Strehl & Ghosh), anmi (the best of the three by ANMI), mmm "
                              "(multinomial-mixture consensus) (default: none, one run)")
    combine.add_argument("--runs", type=int, default=None,
                         help="runs for --consensus, seeds SEED..SEED+RUNS-1 (default 10)")
    combine.add_argument("--keep", type=int, default=None,
                         help="keep the best KEEP runs by objective, for --consensus "
                              "(default: all)")
    combine.add_argument("--refine", choices=("gt",), default=None,
                         help="gt: game-theoretic refinement (GTNMF) of the memberships "
                              "(default: none)")
    add_engine_arguments(c)
    add_input_arguments(c)
    add_output_arguments(c, "semnmf_results/<source>_<method>_k<K>")
    c.add_argument("--report", action="store_true",
                   help="also write report.html, a self-contained page (semnmf report)")
    return c


def resolve_method(args):
    """The method when ``--method`` is not given: the default (chosen by leave-one-corpus-
    out, benchmarks/results/defaults.md) on either engine, or Semantic-NMF with the papers'
    settings where only the Frobenius updates run (``--semantics``)."""
    if args.method is None:
        frobenius_only = args.semantics not in (None, "corpus")
        args.method = "snmf" if frobenius_only else DEFAULT_CLI_METHOD
    return CLI_METHODS[args.method]


def check_arguments(args):
    """Refuse option values and combinations that cannot work, before reading any data
    (one line naming the option), then fill in the defaults of the options that apply."""
    method = resolve_method(args)
    _parse_k(args)
    if args.k_candidates is None and args.k < 1:
        raise ValueError(f"-k must be at least 1, got {args.k}.")
    check_seed(args.seed)
    check_number(args.lam, "--lam", low=0, high=MAX_LAM)
    check_number(args.graph_lam, "--graph-lam", low=0, high=MAX_LAM)
    check_number(args.max_iter, "--max-iter", low=1, integer=True)
    check_number(args.tol, "--tol", low=0)
    check_number(args.n_init, "--n-init", low=1, integer=True)
    check_input_arguments(args)
    if args.lam is not None and not method.word_context:
        raise ValueError(f"--lam weighs the word-context term, which --method {args.method} "
                         f"does not have; use it with {_names(lambda m: m.word_context)}.")
    if args.graph_lam is not None and not method.graph:
        raise ValueError(f"--graph-lam weighs the document-graph term, which --method "
                         f"{args.method} does not have; use it with "
                         f"{_names(lambda m: m.graph)}.")
    if args.lam_scale is not None and not (method.word_context or method.graph):
        raise ValueError(f"--lam-scale sets the scale of --lam and --graph-lam, which --method "
                         f"{args.method} does not have; drop --lam-scale.")
    if args.init is not None and not method.takes_init:
        raise ValueError(f"--init sets the start of the NMF methods; --method {args.method} "
                         "starts from its own (random) centres: drop --init (use --seed or "
                         "--n-init).")
    check_context_arguments(args, method.word_context,
                            f"for {_names(lambda m: m.word_context)}")
    if args.semantics == "corpus":
        if args.embed is not None or args.cache_dir is not None:
            raise ValueError(f"{'--embed' if args.embed is not None else '--cache-dir'} "
                             "applies to pretrained semantics: use it with --semantics "
                             "glove, minilm or a model name.")
    else:
        if not args.semantics.strip():
            raise ValueError("--semantics needs a source: corpus, glove, minilm or a "
                             "sentence-transformers model name.")
        if args.method != "snmf" or args.loss not in (None, "frobenius") or args.orthogonal:
            raise ValueError("--semantics adds pretrained knowledge to Semantic-NMF: use it "
                             "with the default --method snmf (Frobenius loss, not orthogonal).")
        if args.init not in (None, "skmeans"):
            raise ValueError("--semantics chooses its own start (spherical k-means, or k-means "
                             "of the document vectors); drop --init.")
        if args.dtype is not None:
            raise ValueError("--semantics builds X and M with pretrained vectors in the "
                             "pipeline's own dtype; drop --dtype.")
        embed = args.embed or "both"
        embeds_documents = embed != "words" and args.semantics.strip().lower() != "glove"
        if embeds_documents and (args.consensus or (args.n_init or 1) > 1):
            raise ValueError("with embedded documents every run starts from the same k-means "
                             "of the document vectors, so --consensus and --n-init would repeat "
                             "one run; use --embed words, or drop them.")
        from ..pipelines.pretrained import check_available

        check_available(args.semantics)
    if (args.loss is not None or args.orthogonal) and not method.variants:
        with_variants = " or ".join(sorted(n for n, m in CLI_METHODS.items() if m.variants))
        raise ValueError(f"--loss and --orthogonal apply to --method {with_variants} only"
                         + (f" (--method {args.method} already uses the KL loss)"
                            if args.loss == "kl" and args.method.endswith("-kl") else "")
                         + ".")
    if args.loss == "kl" and args.orthogonal:
        raise ValueError("--orthogonal is derived for the Frobenius loss; drop --loss kl or "
                         "--orthogonal.")
    if args.consensus and args.refine:
        raise ValueError("--refine gt needs the soft memberships of one run; a consensus "
                         "partition has none. Use --consensus or --refine, not both.")
    if args.refine and args.k == 1:
        raise ValueError("--refine gt needs at least 2 clusters: with -k 1 there is nothing "
                         "to refine.")
    if args.refine and args.method == "skmeans":
        raise ValueError("--refine gt needs soft memberships (NMF or Semantic-NMF); "
                         "spherical k-means gives hard labels. Use --method nmf or snmf.")
    if args.consensus:
        runs = 10 if args.runs is None else args.runs
        if runs < 2:
            raise ValueError(f"--runs must be at least 2 for a consensus, got {runs}.")
        keep = runs if args.keep is None else args.keep
        if not 2 <= keep <= runs:
            raise ValueError(f"--keep must be between 2 and --runs ({runs}), got {keep}.")
        if args.seed + runs - 1 > MAX_SEED:
            raise ValueError(f"--seed {args.seed} with --runs {runs} needs the seeds up to "
                             f"{args.seed + runs - 1}, above the largest seed ({MAX_SEED}); "
                             f"use a --seed of at most {MAX_SEED - runs + 1}.")
        args.runs = runs
    elif args.runs is not None or args.keep is not None:
        raise ValueError(f"{'--runs' if args.runs is not None else '--keep'} applies to many "
                         "runs combined by --consensus; add --consensus (e.g. --consensus "
                         "mmm) or drop it.")
    # the defaults of the options that apply, as the run record shows them
    if method.variants and args.loss is None:
        args.loss = "frobenius"
    if (method.word_context or method.graph) and args.lam_scale is None:
        args.lam_scale = "relative"
    if method.takes_init and args.init is None:
        args.init = "skmeans"
    if args.semantics != "corpus" and args.embed is None:
        args.embed = "both"


def _parse_k(args):
    """``-k``: a number, or the candidates of a label-free choice (args.k_candidates:
    "auto" or a list; args.k is then set once the choice is made)."""
    if args.k is None and getattr(args, "k_candidates", None) is not None:
        return  # already parsed
    value = args.k if isinstance(args.k, (int, tuple)) else parse_k(args.k)
    args.k_candidates = None
    if isinstance(value, int):
        args.k = value
        return
    kind, grid = value
    if kind == "grid" and len(grid) == 1:
        args.k = grid[0]
        return
    if kind == "grid" and grid[0] < 2:
        shown = ", ".join(map(str, grid[:4])) + (", ..." if len(grid) > 4 else "")
        raise ValueError(f"-k: the candidates must be at least 2 (one cluster needs no "
                         f"choice); got {shown}.")
    args.k_label = "auto" if kind == "auto" else f"{grid[0]}-{grid[-1]}"
    args.k_candidates = "auto" if kind == "auto" else grid
    args.k = None


def _choose_k(args, corpus, X, verbose):
    """Set args.k by the label-free choice among args.k_candidates; its run.json record."""
    from .._utils.progress import log
    from ..experiments.selection import candidate_grid, select_n_components

    candidates = (candidate_grid(X.shape[0]) if args.k_candidates == "auto"
                  else args.k_candidates)
    if candidates[-1] >= X.shape[0]:
        raise ValueError(f"-k: the largest candidate {candidates[-1]} needs more documents "
                         f"than the {X.shape[0]} there are.")
    log(f"choosing k among {', '.join(map(str, candidates))} (label-free: agreement of "
        "spherical k-means runs on a sample) ...", verbose)
    result = select_n_components(X, candidates, counts=corpus.counts(),
                                 random_state=args.seed, verbose=verbose)
    args.k = result.best
    log(f"k = {args.k} ({result.criterion}; {result.seconds:.1f} s)", verbose)
    return result.record()


def build_model(args, verbose):
    """The estimator of ``--method`` with the command's options (from the registry)."""
    method = CLI_METHODS[args.method]
    options = method.options(init=args.init, n_init=args.n_init, max_iter=args.max_iter,
                             tol=args.tol, verbose=int(verbose), lam=args.lam,
                             lam_scale=args.lam_scale, graph_lam=args.graph_lam,
                             loss=args.loss, orthogonal=args.orthogonal)
    return method.build(args.k, args.seed, **options)


def run(args):
    from .._utils.progress import log
    from ..metrics import clustering_scores, top_terms, topic_quality
    from ..pipelines.saved import SavedModel, memberships_from_factors, run_agreement

    verbose = not args.quiet
    method = resolve_method(args)
    timings = {}
    t0 = time.perf_counter()
    check_arguments(args)
    check_engine_arguments(args)
    k_name = args.k if args.k_candidates is None else args.k_label
    out = output_folder(args, f"{source_name(args.source)}_{args.method}_k{k_name}")
    # the weights used, as the run record shows them
    if method.word_context and args.lam is None:
        args.lam = method.params.get("lam", DEFAULT_LAM)
    if method.graph and args.graph_lam is None:
        args.graph_lam = DEFAULT_GRAPH_LAM
    if args.dtype is None:
        args.dtype = method.dtype
    if args.engine == "dask":
        return run_dask(args, out, verbose, timings, t0)
    corpus, X = load_corpus(args, verbose, timings, t0)
    selection = None
    if args.k_candidates is not None:
        t = time.perf_counter()
        selection = _choose_k(args, corpus, X, verbose)
        timings["choose_k"] = time.perf_counter() - t
    if args.k > X.shape[0]:
        raise ValueError(f"-k {args.k} is larger than the number of documents ({X.shape[0]}).")

    M, context = None, None
    if method.word_context:
        M, context = word_context(args, corpus, verbose, timings, association=method.context,
                                  counts_context=method.counts_context)
    extra = {}
    if selection is not None:
        extra["k_selection"] = selection
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
        args.dtype = str(X.dtype)  # the pipeline's own (the record says what was fitted)
        model = semantic_model(args.k, inputs, lam=args.lam, lam_scale=args.lam_scale,
                               n_init=args.n_init or 1, max_iter=args.max_iter, tol=args.tol,
                               random_state=args.seed, verbose=int(verbose))
        fit_params = {"M": M} if inputs.A is None else {"M": M, "A": inputs.A}
        extra["semantics"] = {
            "source": args.semantics, "embed": args.embed,
            "documents_expanded": inputs.word_graph is not None,
            "document_graph": inputs.A is not None,
            "word_graph_nnz": None if inputs.word_graph is None else int(inputs.word_graph.nnz),
            "document_graph_nnz": None if inputs.A is None else int(inputs.A.nnz)}
    else:
        X, M = as_dtype(X, args.dtype), as_dtype(M, args.dtype)
        model = build_model(args, verbose)
        fit_params = {"M": M} if M is not None else {}
    ensemble = None
    t = time.perf_counter()
    with logged_warnings():
        if args.consensus:
            from ..ensemble.runs import ClusterEnsemble

            ensemble = ClusterEnsemble(model, n_runs=args.runs, n_keep=args.keep,
                                       consensus=args.consensus, random_state=args.seed,
                                       verbose=int(verbose))
            labels = ensemble.fit(X, **fit_params).labels_
            extra["consensus"] = ensemble.consensus_
        else:
            memberships = model.fit_transform(X, **fit_params)
            labels = model.labels_
    timings["fit"] = time.perf_counter() - t
    if ensemble is not None:
        strength = run_agreement(ensemble.partitions_, labels)
    else:
        strength = memberships_from_factors(memberships, labels,
                                            cosine=args.method == "skmeans")
    if args.refine:
        t = time.perf_counter()
        # with embedded documents the games are played on their vectors
        with logged_warnings():
            labels, extra["refine"], strength = _refine(X if E is None else E, memberships,
                                                        labels, corpus, verbose)
        timings["refine"] = time.perf_counter() - t

    if ensemble is not None or args.refine:
        # consensus and refined clusters have no factor of their own: their mean X row
        from ..ensemble.runs import cluster_means

        components = cluster_means(X, labels, args.k)
    else:
        components = model.cluster_centers_ if args.method == "skmeans" else model.components_
    topics = top_terms(components, corpus.vocabulary, args.top)
    scores = clustering_scores(corpus.labels, labels) if corpus.labels is not None else None
    # label-free topic quality: NPMI of the top 10 words in the corpus, diversity of 25
    extra["topic_quality"] = topic_quality(components, corpus.counts())
    timings["total"] = time.perf_counter() - t0

    saved, not_saved = None, None
    if args.semantics == "corpus":  # pretrained semantics change X: not saved (yet)
        saved = SavedModel.from_fit(
            model, corpus, args.weighting, labels=labels, X=X, method=args.method,
            topics=components, refine=extra.get("refine") and {"method": "gt"},
            consensus=None if ensemble is None else {"method": args.consensus,
                                                     "n_clusters": args.k})
    else:
        not_saved = ("runs with --semantics build X with pretrained vectors, which saved "
                     "models do not hold")
    return write_run(args, out, method, model, corpus, X, labels, components, topics,
                     scores, M, context, extra, timings, strength, saved, not_saved,
                     partitions=None if ensemble is None else ensemble.partitions_,
                     partition_seeds=None if ensemble is None else ensemble.kept_seeds_)


def write_run(args, out, method, model, corpus, X, labels, components, topics, scores, M,
              context, extra, timings, memberships, saved, not_saved=None, *,
              partitions=None, partition_seeds=None):
    """The end of a cluster run on either engine: the run record, the result folder
    (cleared of an earlier run's files first), the report if asked, the printed summary.
    ``saved`` is the model to save, or None with the reason ``not_saved``."""
    from ..report.output import clear_output_folder
    from ..report.results import run_record, write_results

    record = run_record(model, labels, method=args.method, corpus=corpus, X=X,
                        source=args.source, weighting=args.weighting,
                        word_context=method.word_context, cli_arguments=vars(args),
                        context=context_record(args, M, context), scores=scores, extra=extra,
                        timings=timings, n_clusters=args.k)
    data_notes(record, corpus)
    if saved is None:
        record["model"] = None
        record["model_not_saved"] = not_saved
    clear_output_folder(out)  # an earlier run's files (--overwrite): none may stay
    files = write_results(out, corpus, labels, components, record, n_top=max(args.top, 20),
                          partitions=partitions, partition_seeds=partition_seeds,
                          memberships=memberships, model=saved)
    if args.report:
        from ..report.html import write_report

        write_report(out, corpus=corpus)
        files.append("report.html")
    _print_summary(corpus, labels, topics, scores, args, out, files, extra["topic_quality"])
    return 0


def _refine(X, memberships, labels, corpus, verbose):
    from .._utils.progress import log
    from ..metrics import clustering_scores
    from ..pipelines.saved import memberships_from_factors
    from ..refine import GTNMF

    log("refining with GTNMF (replicator dynamics on a kNN graph) ...", verbose)
    gt = GTNMF(verbose=int(verbose)).fit(X, memberships=memberships)
    record = {"method": "gt", "n_changed": int(gt.n_changed_), "n_iter": int(gt.n_iter_),
              "converged": bool(gt.converged_), "parameters": gt.get_params()}
    if corpus.labels is not None:
        record["scores_before"] = clustering_scores(corpus.labels, labels)
    strength = memberships_from_factors(gt.strategies_, gt.labels_)
    return gt.labels_, record, strength


def _print_summary(corpus, labels, topics, scores, args, out, files, quality=None):
    import numpy as np
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
    names = [f for f in files if f != "partitions.csv"] + [f for f in files if f == "partitions.csv"]
    console.print(f"results written to {out}/ ({', '.join(names)})")
