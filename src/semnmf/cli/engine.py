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
DASK_METHODS = ("snmf-robust", "nmf", "snmf")


def add_engine_arguments(parser):
    group = parser.add_argument_group("engine (needs the [dask] extra for dask)")
    group.add_argument("--engine", choices=ENGINES,
                       help="local: fit in this process (default); dask: distribute the "
                            "updates over Dask workers by blocks of documents "
                            f"({', '.join(DASK_METHODS)})")
    group.add_argument("--workers", type=int, metavar="N",
                       help="with --engine dask: start a local cluster of N worker "
                            "processes (default 2)")
    group.add_argument("--scheduler", metavar="ADDRESS",
                       help="with --engine dask: the address of a running Dask scheduler "
                            "(tcp://host:8786) instead of a local cluster (default: none, "
                            "a local cluster of --workers)")


def check_engine_options(options):
    """Refuse the engine options that cannot work, before reading any data."""
    if options.engine == "local":
        if options.workers is not None or options.scheduler is not None:
            raise ValueError(f"{'--workers' if options.workers is not None else '--scheduler'} "
                             "applies to --engine dask; add --engine dask or drop it.")
        return
    if options.workers is not None and options.scheduler is not None:
        raise ValueError("--workers starts a local cluster and --scheduler joins a running "
                         "one: give one of them.")
    if options.workers is not None and options.workers < 1:
        raise ValueError(f"--workers must be at least 1, got {options.workers}.")
    if options.method not in DASK_METHODS:
        raise ValueError(f"--engine dask runs --method {' or '.join(DASK_METHODS)}; "
                         f"--method {options.method} runs on the local engine only.")
    for option, value in (("--orthogonal", options.orthogonal),
                          ("--consensus", options.consensus), ("--refine", options.refine),
                          ("--report", options.report),
                          ("--semantics", options.semantics != "corpus")):
        if value:
            raise ValueError(f"{option} runs on the local engine only; drop it or use "
                             "--engine local.")
    if options.k_candidates is not None:
        raise ValueError("-k auto (or a range) chooses k on the local engine only; give one "
                         "number with --engine dask, or use --engine local.")
    try:
        import dask  # noqa: F401
        import distributed  # noqa: F401
    except ImportError:
        raise ValueError('--engine dask needs Dask: pip install "semnmf[dask]"') from None


def _sharded(source):
    import os

    from ..text.shards import is_sharded_folder

    return isinstance(source, str) and os.path.isdir(source) and is_sharded_folder(source)


def run_dask(options, started):
    """``semnmf cluster`` on the Dask engine: the :class:`~semnmf.workflows.ClusterResult`
    the local engine makes (without a saved model for a sharded corpus, whose vectorizer
    lives in shards); ``started`` is when the command started."""
    from .._utils.blocks import start_client
    from .._utils.progress import log
    from ..pipelines.saved import SavedModel
    from ..workflows.cluster import ClusterResult, describe

    log(f"starting Dask ({options.scheduler or f'{options.workers or 2} local workers'}) ...",
        options.verbose)
    client = start_client(workers=options.workers or 2, scheduler=options.scheduler)
    timings = {}
    try:
        settings, fitted = _fit_on_workers(options, client, timings, started)
    finally:
        client.close()
        cluster = getattr(client, "cluster", None)
        if cluster is not None and options.scheduler is None:
            cluster.close()
    corpus, X_local, X_record, model, strength, wc, sharded = fitted
    labels = model.labels_
    extra = {"engine": {"name": "dask",
                        "workers": options.workers or (None if options.scheduler else 2),
                        "scheduler": options.scheduler, "sharded": sharded}}
    # NPMI needs the whole count matrix on the client: none for a sharded corpus
    topics, scores = describe(settings, corpus, labels, model.components_, extra,
                              quality=not sharded)
    timings["total"] = time.perf_counter() - started
    run = ClusterResult(settings, corpus, X_record, model, labels, strength,
                        model.components_, topics, scores, wc, timings, extra)
    if sharded:
        run.not_saved = ("a sharded corpus keeps its texts in shards; saved models hold an "
                         "in-memory corpus's vectorizer")
    else:
        run.saved = SavedModel.from_fit(model, corpus, options.weighting, labels=labels,
                                        X=X_local, method=options.method,
                                        topics=model.components_)
    return run


def _fit_on_workers(options, client, timings, started):
    """Read the corpus (a sharded one on the workers), build M, fit on X's blocks:
    (settings, (corpus, X_local, X_record, model, strength, word_context, sharded))."""
    import dataclasses

    from .._utils.blocks import BlockedMatrix, trim_workers
    from .._utils.progress import log
    from ..models.nmf import fit_record
    from ..text.shards import ShardedCorpus
    from ..workflows.cluster import build_model
    from ..workflows.inputs import (as_dtype, build_word_context, collected_warnings,
                                    corpus_options, read_corpus)

    settings = options.settings()
    method, sharded, X_local = options.spec, _sharded(options.source), None
    if sharded:
        log(f"reading the shards of {options.source} on the workers ...", options.verbose)
        corpus = ShardedCorpus(options.source, text_column=options.text_column,
                               label_column=options.label_column, encoding=options.encoding,
                               client=client, **corpus_options(settings))
        timings["load"] = time.perf_counter() - started
        log(f"{corpus}", options.verbose)
    else:
        corpus, X_local = read_corpus(settings, timings, started)
    if options.k > corpus.n_documents:
        raise ValueError(f"-k {options.k} is larger than the number of documents "
                         f"({corpus.n_documents}).")
    wc, M = None, None
    if method.word_context:
        # before X's blocks: the workers count the co-occurrences without holding X
        wc = build_word_context(settings, corpus, timings, association=method.association,
                                counts_context=method.counts_context)
        settings = dataclasses.replace(settings, association=wc.association, top_k=wc.top_k)
        if sharded:
            trim_workers(client)  # the counting pass's freed strings and counts
        M = as_dtype(wc.M, options.dtype)
    t = time.perf_counter()
    if sharded:
        X = corpus.blocks(options.weighting, options.dtype)  # each block cast as it is made
        trim_workers(client)  # the tokenizing passes' freed strings
        timings["vectorize"] = time.perf_counter() - t
    else:
        n_blocks = 4 * len(client.scheduler_info().get("workers", {}) or [0])
        X = BlockedMatrix.from_csr(as_dtype(X_local, options.dtype),
                                   n_blocks=max(n_blocks, 2), client=client)
    model = build_model(settings)
    t = time.perf_counter()
    with collected_warnings():
        # Z stays on the workers: only the labels and strengths come back
        inputs = {} if M is None else {"M": M}
        strength = fit_record(model, X, **inputs).strengths
    timings["fit"] = time.perf_counter() - t
    X_record = type("Shape", (), {"shape": X.shape, "nnz": X.nnz, "dtype": X.dtype})()
    return settings, (corpus, X_local, X_record, model, strength, wc, sharded)
