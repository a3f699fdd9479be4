"""The Dask engine of a clustering run (``engine="dask"``, ``--engine dask``): NMF or
Semantic-NMF on a ``distributed`` cluster, a sharded dataset folder read on the workers
shard by shard, any other source loaded here and its X cut into row blocks
(docs/guide/large-corpora.md). Standard library only at import.
"""

import time

from .._utils.words import LIBRARY, check_number

ENGINES = ("local", "dask")
DASK_METHODS = ("snmf-robust", "nmf", "snmf")


def check_dask(settings, workers=None, scheduler=None, *, words=LIBRARY):
    """Refuse (ValueError) what the Dask engine cannot run, before reading any data,
    naming the settings in ``words`` (:class:`~semnmf._utils.words.Words`)."""
    w = words
    on_dask, on_local = w.set("engine", "dask"), w.set("engine", "local")
    if workers is not None and scheduler is not None:
        raise ValueError(f"{w('workers')} starts a local cluster and {w('scheduler')} joins "
                         "a running one: give one of them.")
    check_number(workers, "workers", w, low=1, integer=True)
    if settings.method not in DASK_METHODS:
        raise ValueError(f"{on_dask} runs {w('method')} {' or '.join(DASK_METHODS)}; "
                         f"{w.set('method', settings.method)} runs on the local engine only.")
    for name, value in (("orthogonal", settings.orthogonal),
                        ("consensus", settings.consensus),
                        ("refine", settings.refine not in (None, "none")),
                        ("semantics", settings.semantics != "corpus"),
                        ("min_cluster_size", settings.min_cluster_size is not None)):
        if value:
            raise ValueError(f"{w(name)} runs on the local engine only; drop it or use "
                             f"{on_local}.")
    if settings.k_candidates is not None:
        raise ValueError(f"{w.set('k', 'auto')} (or candidates) chooses k on the local "
                         f"engine only; give one number with {on_dask}, or use {on_local}.")
    try:
        import dask  # noqa: F401
        import distributed  # noqa: F401
    except ImportError:
        raise ValueError(f'{on_dask} needs Dask: pip install "semnmf[dask]"') from None


def _sharded(source):
    import os

    from ..text.shards import is_sharded_folder

    return isinstance(source, str) and os.path.isdir(source) and is_sharded_folder(source)


def run_dask(settings, *, workers=None, scheduler=None, started=None):
    """The run of ``settings`` (filled) on Dask workers: the
    :class:`~semnmf.workflows.ClusterResult` the local engine makes (without a saved model
    for a sharded corpus, whose vectorizer lives in shards). ``workers``: the processes
    of a local cluster (default 2); ``scheduler``: the address of a running one instead;
    ``started``: when the run started (``time.perf_counter()``; default now)."""
    from .._utils.blocks import start_client
    from .._utils.progress import log
    from ..pipelines.saved import SavedModel
    from .inputs import language_record
    from .result import ClusterResult, describe

    started = time.perf_counter() if started is None else started
    check_dask(settings, workers, scheduler)
    log(f"starting Dask ({scheduler or f'{workers or 2} local workers'}) ...",
        settings.verbose)
    client = start_client(workers=workers or 2, scheduler=scheduler)
    timings = {}
    try:
        settings, fitted = _fit_on_workers(settings, client, timings, started)
    finally:
        client.close()
        cluster = getattr(client, "cluster", None)
        if cluster is not None and scheduler is None:
            cluster.close()
    corpus, X_local, X_record, model, strength, wc, sharded = fitted
    labels = model.labels_
    extra = {"engine": {"name": "dask", "workers": workers or (None if scheduler else 2),
                        "scheduler": scheduler, "sharded": sharded}}
    language_record(corpus, extra, settings.verbose)
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
        run.saved = SavedModel.from_fit(model, corpus, settings.weighting, labels=labels,
                                        X=X_local, method=settings.method,
                                        topics=model.components_)
    return run


def _fit_on_workers(settings, client, timings, started):
    """Read the corpus (a sharded one on the workers), build M, fit on X's blocks:
    (settings, (corpus, X_local, X_record, model, strength, word_context, sharded))."""
    import dataclasses

    from .._utils.blocks import BlockedMatrix, trim_workers
    from .._utils.progress import log, timed
    from ..models.nmf import fit_record
    from ..text.shards import ShardedCorpus
    from .result import build_model
    from .inputs import (as_dtype, build_word_context, collected_warnings, corpus_options,
                         read_corpus)

    method, sharded, X_local = settings.spec, _sharded(settings.source), None
    if sharded:
        log(f"reading the shards of {settings.source} on the workers ...", settings.verbose)
        corpus = ShardedCorpus(settings.source, text_column=settings.text_column,
                               label_column=settings.label_column, encoding=settings.encoding,
                               client=client, **corpus_options(settings))
        timings["load"] = time.perf_counter() - started
        log(f"{corpus}", settings.verbose)
    else:
        corpus, X_local = read_corpus(settings, timings, started)
    if settings.k > corpus.n_documents:
        raise ValueError(f"n_components {settings.k} is larger than the number of documents "
                         f"({corpus.n_documents}).")
    wc, M = None, None
    if method.word_context:
        # before X's blocks: the workers count the co-occurrences without holding X
        wc = build_word_context(settings, corpus, timings, association=method.association,
                                counts_context=method.counts_context)
        settings = dataclasses.replace(settings, association=wc.association, top_k=wc.top_k)
        if sharded:
            trim_workers(client)  # the counting pass's freed strings and counts
        M = as_dtype(wc.M, settings.dtype)
    if sharded:
        with timed(timings, "vectorize"):
            X = corpus.blocks(settings.weighting, settings.dtype)  # each block cast when made
            trim_workers(client)  # the tokenizing passes' freed strings
    else:
        n_blocks = 4 * len(client.scheduler_info().get("workers", {}) or [0])
        X = BlockedMatrix.from_csr(as_dtype(X_local, settings.dtype),
                                   n_blocks=max(n_blocks, 2), client=client)
    model = build_model(settings)
    with timed(timings, "fit"), collected_warnings():
        # Z stays on the workers: only the labels and strengths come back
        strength = fit_record(model, X, **({} if M is None else {"M": M})).strengths
    X_record = type("Shape", (), {"shape": X.shape, "nnz": X.nnz, "dtype": X.dtype})()
    return settings, (corpus, X_local, X_record, model, strength, wc, sharded)
