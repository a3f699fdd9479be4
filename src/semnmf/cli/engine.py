"""``semnmf cluster --engine dask``: the fit distributed over Dask workers.

``--engine local`` (the default) is the ordinary in-process fit. ``--engine dask`` runs
NMF or Semantic-NMF (Frobenius or KL loss, the default method included) on a
``distributed`` cluster: ``--workers N`` starts a LocalCluster of
N worker processes (one thread each), ``--scheduler ADDRESS`` joins a running one. A
dataset folder of shards (``docs-00000.jsonl`` / ``.parquet``, ...) is read on the
workers shard by shard (:class:`semnmf.text.shards.ShardedCorpus`): the vocabulary and
document frequencies are reduced from per-shard counts, X stays on the workers in one
block per shard, and the word-context counts are reduced from per-shard counts. Any other
SOURCE is loaded as usual and its X cut into row blocks scattered to the workers.
"""

import time

ENGINES = ("local", "dask")
DASK_METHODS = ("snmf-kl", "nmf", "snmf")


def add_engine_arguments(parser):
    group = parser.add_argument_group("engine (needs the [dask] extra for dask)")
    group.add_argument("--engine", choices=ENGINES, default="local",
                       help="local: fit in this process (default); dask: distribute the "
                            "updates over Dask workers by blocks of documents (snmf-kl, "
                            "nmf, snmf)")
    group.add_argument("--workers", type=int, default=None, metavar="N",
                       help="with --engine dask: start a local cluster of N worker "
                            "processes (default 2)")
    group.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help="with --engine dask: the address of a running Dask scheduler "
                            "(tcp://host:8786) instead of a local cluster (default: none, "
                            "a local cluster of --workers)")


def check_engine_arguments(args):
    """Refuse the engine options that cannot work, before reading any data."""
    engine = getattr(args, "engine", "local")
    if engine == "local":
        if args.workers is not None or args.scheduler is not None:
            raise ValueError(f"{'--workers' if args.workers is not None else '--scheduler'} "
                             "applies to --engine dask; add --engine dask or drop it.")
        return
    if args.workers is not None and args.scheduler is not None:
        raise ValueError("--workers starts a local cluster and --scheduler joins a running "
                         "one: give one of them.")
    if args.workers is not None and args.workers < 1:
        raise ValueError(f"--workers must be at least 1, got {args.workers}.")
    if args.method not in DASK_METHODS:
        raise ValueError(f"--engine dask runs --method {' or '.join(DASK_METHODS)}; "
                         f"--method {args.method} runs on the local engine only.")
    if args.orthogonal:
        raise ValueError("--orthogonal runs on the local engine only; drop it or use "
                         "--engine local.")
    for option, value in (("--consensus", args.consensus), ("--refine", args.refine),
                          ("--report", args.report)):
        if value:
            raise ValueError(f"{option} runs on the local engine only; drop it or use "
                             "--engine local.")
    if args.semantics != "corpus":
        raise ValueError("--semantics runs on the local engine only; drop it or use "
                         "--engine local.")
    if getattr(args, "k_candidates", None) is not None:
        raise ValueError("-k auto (or a range) chooses k on the local engine only; give one "
                         "number with --engine dask, or use --engine local.")
    if args.n_init is not None and args.n_init < 1:
        raise ValueError(f"--n-init must be at least 1, got {args.n_init}.")
    try:
        import dask  # noqa: F401
        import distributed  # noqa: F401
    except ImportError:
        raise ValueError('--engine dask needs Dask: pip install "semnmf[dask]"') from None


def _sharded(source):
    import os

    from ..text.shards import is_sharded_folder

    return isinstance(source, str) and os.path.isdir(source) and is_sharded_folder(source)


def run_dask(args, out, verbose, timings, t0):
    """The ``cluster`` command on the Dask engine; writes the result folder (without a
    saved model for a sharded corpus, whose vectorizer lives in shards)."""
    from .._utils.blocks import BlockedMatrix, start_client, trim_workers
    from .._utils.progress import log
    from ..experiments.methods import CLI_METHODS
    from ..metrics import clustering_scores, top_terms, topic_quality
    from ..models.blocked import fit_estimator
    from ..pipelines.saved import SavedModel
    from ..text.shards import ShardedCorpus
    from ._common import as_dtype, corpus_options, load_corpus, logged_warnings, word_context
    from .cluster import build_model, write_run

    method = CLI_METHODS[args.method]
    log(f"starting Dask ({args.scheduler or f'{args.workers or 2} local workers'}) ...",
        verbose)
    client = start_client(workers=args.workers or 2, scheduler=args.scheduler)
    try:
        sharded = _sharded(args.source)
        if sharded:
            options = corpus_options(args)
            log(f"reading the shards of {args.source} on the workers ...", verbose)
            corpus = ShardedCorpus(args.source, text_column=args.text_column,
                                   label_column=args.label_column, encoding=args.encoding,
                                   client=client, **options)
            timings["load"] = time.perf_counter() - t0
            log(f"{corpus}", verbose)
        else:
            corpus, X_local = load_corpus(args, verbose, timings, t0)
        if args.k > corpus.n_documents:
            raise ValueError(f"-k {args.k} is larger than the number of documents "
                             f"({corpus.n_documents}).")
        M, context = None, None
        if method.word_context:
            # before X's blocks: the workers count the co-occurrences without holding X
            M, context = word_context(args, corpus, verbose, timings,
                                      association=method.context,
                                      counts_context=method.counts_context)
            if sharded:
                trim_workers(client)  # the counting pass's freed strings and counts
            M = as_dtype(M, args.dtype)
        if sharded:
            t = time.perf_counter()
            X = corpus.blocks(args.weighting, args.dtype)  # each block cast as it is made
            trim_workers(client)  # the tokenizing passes' freed strings
            timings["vectorize"] = time.perf_counter() - t
        else:
            n_blocks = 4 * len(client.scheduler_info().get("workers", {}) or [0])
            X = BlockedMatrix.from_csr(as_dtype(X_local, args.dtype), n_blocks=max(n_blocks, 2),
                                       client=client)
        model = build_model(args, verbose)
        t = time.perf_counter()
        with logged_warnings():
            # Z stays on the workers: only the labels and strengths come back
            strength = fit_estimator(model, X, M=M, gather=False).strengths
        labels = model.labels_
        timings["fit"] = time.perf_counter() - t
        nnz = X.nnz
        X_record = type("Shape", (), {"shape": X.shape, "nnz": nnz, "dtype": X.dtype})()
        del X
    finally:
        client.close()
        cluster = getattr(client, "cluster", None)
        if cluster is not None and args.scheduler is None:
            cluster.close()
    components = model.components_
    topics = top_terms(components, corpus.vocabulary, args.top)
    scores = clustering_scores(corpus.labels, labels) if corpus.labels is not None else None
    extra = {"engine": {"name": "dask", "workers": args.workers or (None if args.scheduler
                                                                    else 2),
                        "scheduler": args.scheduler, "sharded": sharded}}
    if sharded:
        extra["topic_quality"] = None  # NPMI needs the whole count matrix on the client
    else:
        extra["topic_quality"] = topic_quality(components, corpus.counts())
    timings["total"] = time.perf_counter() - t0
    saved, not_saved = None, None
    if sharded:
        not_saved = ("a sharded corpus keeps its texts in shards; saved models hold an "
                     "in-memory corpus's vectorizer")
    else:
        saved = SavedModel.from_fit(model, corpus, args.weighting, labels=labels,
                                    X=X_local, method=args.method, topics=components)
    return write_run(args, out, method, model, corpus, X_record, labels, components, topics,
                     scores, M, context, extra, timings, strength, saved, not_saved)
