"""``semnmf.cluster``: what ``semnmf cluster SOURCE -k K`` computes, in one call.

:func:`cluster` fills a :class:`~.result.ClusterSettings` and :func:`run_cluster` turns it
into a :class:`ClusterResult`: read, choose k, build M, fit, refine, describe. Nothing
here prints. Standard library only at import (the command line's parser loads this module).
"""

import dataclasses
import time
import warnings

from ..models.registry import CLI_METHODS, DEFAULT_CLI_METHOD, DEFAULT_COUNTS_METHOD
from .._utils.progress import timed
from .._utils.renamed import renamed
from .checks import check_settings, semantics_source
from .semantics import decide_semantics, plan_semantics
from .inputs import as_dtype, build_word_context, collected_warnings, language_record, read_corpus
from .result import (ClusterResult, ClusterSettings, attach_saved_model, build_model,
                     describe, method_defaults)

__all__ = ["cluster", "run_cluster", "ClusterSettings", "ClusterResult", "method_defaults",
           "build_model", "describe"]


def _k_settings(k):
    """``k`` (an int, "auto", or a sequence of candidates) as the settings hold it."""
    if isinstance(k, str):
        if k.strip().lower() != "auto":
            raise ValueError(f"n_components must be a number of clusters, 'auto' or a list of "
                             f"candidates, got {k!r}.")
        return {"k": None, "k_candidates": "auto"}
    if isinstance(k, (list, tuple, range)):
        grid = sorted({int(c) for c in k})
        if not grid or grid[0] < 1:
            raise ValueError(f"n_components: the candidates must be positive, got {list(k)}.")
        if len(grid) == 1:
            return {"k": grid[0]}
        if grid[0] < 2:
            raise ValueError("n_components: the candidates must be at least 2 (one cluster "
                             "needs no choice).")
        return {"k": None, "k_candidates": tuple(grid)}
    if k is None or isinstance(k, bool) or int(k) != k or int(k) < 1:
        raise ValueError(f"n_components must be a positive number of clusters (or 'auto'), "
                         f"got {k!r}.")
    return {"k": int(k)}


COUNTS_REASON = ("the corpus has no raw text (counts only): the KL consensus, chosen by "
                 "leave-one-corpus-out on the 14 shared counts-only corpora (worst margin "
                 "over the best baseline -0.022 against -0.082 for snmf-robust; "
                 "benchmarks/results/default_kinds25.md), made three times and the runs "
                 "combined by the MMM (over 15 seeds worst -0.012 and mean +0.005 on them, "
                 "against -0.061 and -0.008 for one run; "
                 "benchmarks/results/default_medoid.md)")


# settings that ask for Semantic-NMF's word-context term or its starts: given without a
# method, they keep snmf-robust on a corpus of counts only
SNMF_SETTINGS = ("context", "window", "association", "min_count", "top_k", "max_nnz", "lam",
                 "lam_scale", "loss", "orthogonal", "init", "n_init", "consensus", "refine",
                 "seed_words", "device")


def asked_for(settings):
    """The names among ``settings`` (name: value) given a value, ``refine`` only as "gt"
    (which needs one run's memberships): :func:`default_method` looks for
    :data:`SNMF_SETTINGS` among them."""
    return [name for name, value in settings.items() if value is not None
            and not (name == "refine" and value != "gt")]


TEXT_REASON = ("the default (Semantic-NMF, KL loss), chosen by leave-one-corpus-out on the "
               "shared corpora (benchmarks/results/defaults.md); without raw text, or with a "
               "word-context setting given, it builds M from document contexts")

def default_method(source, semantics="corpus", engine="local", given=()):
    """The default method for ``source``, chosen before reading it, and why: ``(name,
    reason)``: snmf-robust, but kl-consensus for a corpus of counts only on the local
    engine without a setting of :data:`SNMF_SETTINGS` given, and the papers' snmf with
    pretrained semantics."""
    from ..datasets import has_raw_text

    if semantics not in (None, "corpus", "auto"):  # auto: decided on the corpus
        return "snmf", None
    if engine == "local" and not set(given) & set(SNMF_SETTINGS) and not has_raw_text(source):
        return DEFAULT_COUNTS_METHOD, COUNTS_REASON
    return DEFAULT_CLI_METHOD, TEXT_REASON


def resolve_method(method, semantics, source=None, engine="local", given=()):
    """``(method, reason)``: the method asked for, else the default for the source
    (:func:`default_method`), with why."""
    if method is None:
        return default_method(source, semantics, engine, given)
    if method not in CLI_METHODS:
        raise ValueError(f"method must be one of {', '.join(CLI_METHODS)}, got {method!r}.")
    return method, None


@renamed("k", "n_components")
def cluster(source, n_components=None, *, method=None, random_state=0, verbose=0,
            engine="local", workers=None, scheduler=None, **settings):
    """Cluster ``source`` into ``n_components`` clusters as ``semnmf cluster SOURCE -k K``
    does.

    Parameters
    ----------
    source : str, path, list of str, Corpus, or matrix
        A dataset name ("bbc", a name in ``$SEMNMF_DATA``), a dataset folder, a folder of
        ``.txt`` files, a CSV/TSV/JSONL file, a list of texts, a :class:`~semnmf.Corpus`,
        or a document-term count matrix (scipy sparse or 2-D array; ``vocabulary=`` names
        its columns and ``labels=`` gives its documents' classes).
    n_components : int, "auto" or sequence of int
        The number of clusters (``k=``, its name before 0.3, warns until 0.4); "auto" (or
        candidates) chooses it without labels and gives the clusters at every k of a range
        around it (``result.levels``). None with ``min_cluster_size=N`` means "auto".
    method : str or None, default=None
        The command line's ``--method``: "snmf-robust" (Semantic-NMF, KL loss, lam 1, five
        screened starts, float32), "kl-consensus" (the MMM consensus of NMF-KL and
        spherical k-means runs), "snmf" (the papers'), "snmf-kl" (the slides' SNMF-KL),
        "nmf", "skmeans", "senmf", "gnmf", "sgnmf", "pnmf". None: the default for the
        source (:func:`default_method`): snmf-robust with raw text, kl-consensus for
        counts only; ``result.choices`` records the choice and why.
    random_state : int, default=0
        The seed (the command line's ``--seed``).
    verbose : int, default=0
        Log the steps and draw progress bars on stderr.
    engine : {"local", "dask"}, default="local"
        "dask" fits on Dask workers (:func:`semnmf.workflows.dask.run_dask`; methods
        snmf-robust, nmf, snmf): ``workers`` processes of a local cluster (default 2), or
        the running ``scheduler`` at that address.
    **settings
        Any field of :class:`ClusterSettings`, by its library name (the signature lists
        them): the estimator's (``lam``, ``loss``, ``init``, ...), the word-context
        matrix's (``context``, ``window``, ...), ``consensus``, ``refine`` ("gt",
        "centroid", "none"; None: the centroid step for the default method),
        ``semantics``, and reading and vectorizing (``text_column``, ``stop_words``,
        ``min_df``, ...); docs/guide/python.md.

    Returns
    -------
    ClusterResult

    Examples
    --------
    >>> import semnmf
    >>> result = semnmf.cluster("bbc", 5)          # doctest: +SKIP
    >>> result.scores["nmi"], result.topics[0][:3]  # doctest: +SKIP
    >>> result.save("runs/bbc").report()            # doctest: +SKIP
    """
    names = {f.name for f in dataclasses.fields(ClusterSettings)}
    unknown = sorted(set(settings) - names)
    if unknown:
        raise TypeError(f"cluster() got an unexpected keyword argument {unknown[0]!r}")
    k = n_components
    if k is None and settings.get("min_cluster_size") is not None:
        k = "auto"  # a minimum cluster size states the granularity: the levels of k="auto"
    if k is None:
        raise ValueError("n_components (k) is required: a number of clusters or 'auto' (or "
                         "give min_cluster_size, which implies 'auto').")
    if "semantics" in settings:
        settings["semantics"] = semantics_source(settings["semantics"])
    semantics = settings.get("semantics", "auto")
    method, reason = resolve_method(method, semantics, source, engine, asked_for(settings))
    base = ClusterSettings(source=source, method=method, method_reason=reason,
                           random_state=random_state, verbose=int(verbose), **settings,
                           **_k_settings(k))
    check_settings(base)
    base = plan_semantics(base, engine)
    filled = dataclasses.replace(base, **method_defaults(base))
    if engine == "dask":
        from .dask import run_dask

        return run_dask(filled, workers=workers, scheduler=scheduler)
    if engine != "local" or workers is not None or scheduler is not None:
        raise ValueError(f"engine must be 'local' or 'dask' (workers and scheduler apply to "
                         f"'dask'), got {engine!r}.")
    return run_cluster(filled)


def _duplicates(corpus):
    """The exact duplicate documents of ``corpus`` (same text; same counts without texts):
    ``{"n_duplicates", "n_distinct"}``, or None when there are none."""
    import numpy as np

    if corpus.texts is not None:
        n_distinct = len(set(corpus.texts))
    else:
        counts = corpus.counts()
        rows = {(tuple(counts.indices[a:b]), tuple(np.round(counts.data[a:b], 12)))
                for a, b in zip(counts.indptr[:-1], counts.indptr[1:])}
        n_distinct = len(rows)
    n_duplicates = corpus.n_documents - n_distinct
    if not n_duplicates:
        return None
    return {"n_duplicates": int(n_duplicates), "n_distinct": int(n_distinct)}


def _signature():
    """:func:`cluster`'s signature with every setting named (``help(semnmf.cluster)``,
    editors), from :class:`ClusterSettings`' fields."""
    import inspect

    own = inspect.signature(cluster)
    params = [p for p in own.parameters.values() if p.kind is not p.VAR_KEYWORD]
    skip = {"source", "k", "k_candidates", "method", "random_state", "verbose",
            "window_given"}
    params += [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default)
               for f in dataclasses.fields(ClusterSettings) if f.name not in skip]
    return own.replace(parameters=params)


cluster.__signature__ = _signature()


def run_cluster(settings, started=None):
    """The run of ``settings`` (filled: :func:`method_defaults`) on this process: load,
    (choose k,) build M, fit, (refine), describe: a :class:`ClusterResult`. ``started`` is
    when the run started (``time.perf_counter()``; default now)."""
    started = time.perf_counter() if started is None else started
    timings, extra = {}, {}
    corpus, X = read_corpus(settings, timings, started)
    if settings.min_cluster_size is not None and 2 * settings.min_cluster_size > X.shape[0]:
        raise ValueError(f"min_cluster_size {settings.min_cluster_size} leaves no room for two "
                         f"clusters in {X.shape[0]} documents: give at most "
                         f"{X.shape[0] // 2}.")
    language_record(corpus, extra, settings.verbose)
    settings, choice = decide_semantics(settings, corpus)
    if choice is not None:
        from .._utils.progress import log

        log(f"semantics {choice['value']}: {choice['how']}", settings.verbose)
        extra["semantics_choice"] = choice
    times = _times(settings, corpus)  # the column is read (and checked) before the fit
    duplicates = _duplicates(corpus)  # said once the fit has run (a failure says one line)
    if duplicates:
        extra["duplicates"] = duplicates
    if settings.k_candidates is not None:
        with timed(timings, "choose_k"):
            k, extra["k_selection"] = _choose_k(settings, corpus, X)
        settings = dataclasses.replace(settings, k=k)
    if settings.k > X.shape[0]:
        raise ValueError(f"n_components {settings.k} is larger than the number of documents "
                         f"({X.shape[0]}).")
    method, wc = settings.spec, None
    if method.word_context:
        wc = build_word_context(settings, corpus, timings, association=method.association,
                                counts_context=method.counts_context)
        settings = dataclasses.replace(settings, association=wc.association, top_k=wc.top_k)
    settings, X, E, model, fit_params = _inputs(settings, corpus, X, wc, timings, extra)
    if settings.method_reason:
        from .._utils.progress import log

        log(f"method {settings.method}: {settings.method_reason}", settings.verbose)
        extra["method_choice"] = {"method": settings.method, "why": settings.method_reason}
    document_labels = extra.pop("_document_partition", None)
    components = None
    if settings.seed_words is not None:
        labels, strength, memberships = _fit_guided(settings, corpus, model, X, fit_params,
                                                    timings, extra)
        ensemble = None
    elif document_labels is not None:  # no fit: the document vectors' partition
        labels, strength, components = _fit_document_partition(
            settings, document_labels, E, X, fit_params.get("M"), timings)
        memberships = ensemble = None
    elif settings.method == "kl-consensus":
        labels, strength, memberships, ensemble = _fit_kl_consensus(settings, X, timings,
                                                                    extra)
    else:
        labels, strength, memberships, ensemble = _fit(settings, model, X, fit_params,
                                                       timings, extra)
    refine, step = refinement(settings), None
    if refine == "gt":  # with embedded documents the games are played on them
        with timed(timings, "refine"), collected_warnings():
            labels, extra["refine"], strength = _refine(X if E is None else E, memberships,
                                                        labels, corpus, settings.verbose)
    elif refine == "centroid":
        step = {"labels": labels, "min_gain": CENTROID_MIN_GAIN}
        with timed(timings, "refine"):
            labels, strength, step["centers"], extra["refine"] = _centroid_refine(
                settings, X, labels, corpus)
    if components is None and (ensemble is not None or refine == "gt"):
        # consensus and GTNMF clusters have no factor of their own: their mean X row (the
        # centroid step moves few documents: the topics stay the factorization's W, whose
        # words are more coherent and more diverse than the mean rows)
        from .._utils.labels import cluster_means

        components = cluster_means(X, labels, settings.k)
    elif components is None:
        components = (model.cluster_centers_ if settings.method == "skmeans"
                      else model.components_)
    if duplicates:
        warnings.warn(f"{duplicates['n_duplicates']} of the {corpus.n_documents} documents "
                      f"repeat another exactly ({duplicates['n_distinct']} distinct); "
                      "duplicates always share a cluster", UserWarning, stacklevel=3)
    topics, scores = describe(settings, corpus, labels, components, extra)
    timings["total"] = time.perf_counter() - started
    expansion = extra.pop("_expansion", None)
    result = ClusterResult(settings, corpus, X, model, labels, strength, components, topics,
                           scores, wc, timings, extra)
    result.expansion = expansion
    if ensemble is not None:
        result.partitions, result.partition_seeds = ensemble.partitions_, ensemble.kept_seeds_
    attach_saved_model(result, ensemble, step)
    if settings.k_candidates is not None or settings.min_cluster_size is not None:
        result = _add_levels(result)
    if times is not None:
        _add_timeline(result, result.settings, corpus, result.labels, times)
    return result


def _add_levels(result):
    """The run's levels (:mod:`semnmf.pipelines.levels`): with ``k="auto"`` every level of
    the recommended range, with ``min_cluster_size`` the fit's small clusters merged (that
    level becomes the run's clusters); ``result.levels`` maps k to the labels."""
    from .._utils.progress import log
    from ..pipelines.levels import build_levels, k_range

    settings = result.settings
    if result.saved is None:
        warnings.warn(f"no levels: they are made from the run's model, and this run has none "
                      f"({result.not_saved}); its clusters are the fit's.", UserWarning,
                      stacklevel=3)
        return result
    t = time.perf_counter()
    X = result.saved.vectorize(result.corpus)
    low, high = (k_range(settings.k, X.shape[0]) if settings.k_candidates is not None
                 else (None, None))  # a k given: its clusters, small ones merged
    built = build_levels(result.saved, X, low, high, labels=result.labels,
                         min_cluster_size=settings.min_cluster_size,
                         random_state=settings.random_state)
    start = built.start
    if built.merged:  # small clusters merged: the run's clusters are the start level
        from .result import describe

        settings = dataclasses.replace(settings, k=start.k)
        components = built.model.topics
        topics, scores = describe(settings, result.corpus, start.labels, components,
                                  result.extra)
        result = dataclasses.replace(result, settings=settings, labels=start.labels,
                                     strengths=built.model.assign_matrix(X)[1],
                                     components=components, topics=topics, scores=scores,
                                     saved=built.model)
        result.extra["merged_small_clusters"] = [step["merge"][0] for step in built.merged]
        log(f"{len(built.merged)} cluster(s) under {settings.min_cluster_size} documents "
            f"merged into their nearest: {start.k} clusters", settings.verbose)
    small = min(start.record()["sizes"])
    if settings.min_cluster_size and small < settings.min_cluster_size:
        warnings.warn(f"a cluster of {small} documents stays under min_cluster_size "
                      f"{settings.min_cluster_size}: two clusters are the fewest a run has.",
                      UserWarning, stacklevel=3)
    result.levels = {level.k: level.labels for level in built.levels}
    result.extra["k_recommended"] = int(start.k)
    ks = sorted(result.levels)
    result.extra["k_range"] = [int(ks[0]), int(ks[-1])]
    result.extra["levels"] = [level.record() for level in built.levels]
    result.timings["levels"] = time.perf_counter() - t
    if len(ks) > 1:
        log(f"recommended k = {start.k}; levels k = {ks[0]}..{ks[-1]} in levels.csv "
            "(semnmf edit RUN --level K makes one the run's clusters)", settings.verbose)
    return result


def _times(settings, corpus):
    """The values of the source's ``time_column``, one per document (None without one)."""
    if settings.time_column is None:
        return None
    from ..datasets import read_column
    from .timeline import check_dates

    values = read_column(settings.source, settings.time_column, settings.encoding,
                         settings.delimiter, settings.on_bad_lines)
    if len(values) != corpus.n_documents:
        raise ValueError(f"time_column {settings.time_column!r} has {len(values)} values for "
                         f"{corpus.n_documents} documents.")
    check_dates(values, settings.time_column, settings.date_format)  # said before the fit
    return values


def _add_timeline(result, settings, corpus, labels, values):
    """Topics over time (:mod:`.timeline`) from the source's ``time_column``; run.json's
    ``time`` says which period was chosen and how many documents had no date."""
    from .timeline import timeline

    result.timeline = timeline(values, labels, corpus.labels, settings.time_period,
                               settings.date_format)
    line = result.timeline
    result.extra["time"] = {"column": settings.time_column, "date_format": settings.date_format,
                            "period": line["period"], "n_undated": line["n_undated"],
                            "n_unreadable": line["n_unreadable"],
                            "n_periods": len({row[0] for row in line["rows"]})}
    if line["n_undated"]:
        empty = line["n_undated"] - line["n_unreadable"]
        parts = ([f"{empty} have no value"] if empty else []) + (
            [f"{line['n_unreadable']} have a value that is not a date (e.g. "
             f"{line['unreadable']!r}{'' if settings.date_format else '; a format of your own: --date-format'})"]
            if line["n_unreadable"] else [])
        warnings.warn(f"{line['n_undated']} document(s) have no date in "
                      f"{settings.time_column!r} ({', '.join(parts)}); they are left out of "
                      "the topics over time", UserWarning, stacklevel=3)


def _choose_k(settings, corpus, X):
    """The label-free choice of k among ``settings.k_candidates``: (k, its run.json
    record), each candidate's score logged."""
    from .._utils.progress import log
    from ..models.selection import candidate_grid, select_n_components

    candidates = (candidate_grid(X.shape[0]) if settings.k_candidates == "auto"
                  else list(settings.k_candidates))
    if candidates[-1] >= X.shape[0]:
        raise ValueError(f"n_components: the largest candidate {candidates[-1]} needs more "
                         f"documents than the {X.shape[0]} there are.")
    log(f"choosing k among {', '.join(map(str, candidates))} (label-free: agreement of "
        "spherical k-means runs on a sample) ...", settings.verbose)
    result = select_n_components(X, candidates, counts=corpus.counts(),
                                 random_state=settings.random_state, verbose=settings.verbose)
    record = result.record()
    for line in selection_lines(record):
        log(line, settings.verbose)
    return result.best, record


def selection_lines(record):
    """The lines that show a ``k_selection`` record: the score the choice is made on at
    every candidate (and the criterion's raw curve), the chosen k marked."""
    name = record["criterion"]
    curve = (record.get("curves") or {}).get(name)
    lines = [f"k chosen on the score {record.get('name', name)} "
             f"({record['seconds']:.1f} s):"]
    for i, (k, score) in enumerate(zip(record["candidates"], record["scores"])):
        raw = "" if curve is None or curve[i] is None else f" ({name} {curve[i]:.3f})"
        shown = "-" if score is None else f"{score:.3f}"
        mark = "  <- chosen" if k == record["chosen"] else ""
        lines.append(f"  k={k}: score {shown}{raw}{mark}")
    return lines


def _inputs(settings, corpus, X, wc, timings, extra):
    """What is fitted: (settings, X, E, model, fit_params); with pretrained semantics X and
    M come from the pretrained pipeline, E are the embedded documents (else None)."""
    M = None if wc is None else wc.M
    if settings.semantics == "corpus":
        X, M = as_dtype(X, settings.dtype), as_dtype(M, settings.dtype)
        return settings, X, None, build_model(settings), {} if M is None else {"M": M}
    from .._utils.devices import resolve_device
    from .._utils.progress import log
    from ..pipelines.pretrained import pretrained_inputs, semantic_model

    partition, partition_why = run_partition(settings, corpus)
    embed = "documents" if partition == "documents" else settings.embed  # no word vectors
    log(f"adding pretrained semantics ({settings.semantics}, embedding {embed}) ...",
        settings.verbose)
    inputs = pretrained_inputs(corpus, X, M, settings.k, settings.semantics, embed,
                               document_graph=partition != "documents",
                               pooling=settings.pooling or "mean",
                               random_state=settings.random_state,
                               cache_dir=settings.cache_dir, device=settings.device,
                               verbose=int(settings.verbose))
    timings.update(inputs.timings)
    settings = dataclasses.replace(settings, dtype=str(inputs.X.dtype))
    # no estimator when the run keeps the document vectors' partition (nothing is fitted)
    model = None if partition == "documents" else semantic_model(
        settings.k, inputs, lam=settings.lam, lam_scale=settings.lam_scale,
        n_init=settings.n_init or 1, max_iter=settings.max_iter, tol=settings.tol,
        random_state=settings.random_state, device=settings.device,
        verbose=int(settings.verbose))
    fit_params = {"M": inputs.M} if inputs.A is None else {"M": inputs.M, "A": inputs.A}
    graph = inputs.word_graph
    if graph is not None and inputs.X is not X:  # the documents were expanded by the graph
        # (kept for the saved model, which expands new documents the same way)
        extra["_expansion"] = {"word_graph": graph, "strength": 1.0,
                               "semantics": settings.semantics}
    encoder = None if settings.semantics == "glove" else resolve_device(settings.device)
    graphs = graph is not None or inputs.A is not None
    # where the kNN searches ran (the device was checked with the settings)
    graph_device = resolve_device(settings.device) if graphs else None
    fit_device = None if model is None else getattr(model, "device", "cpu")
    if settings.device != "cpu":
        fit = ("no fit" if fit_device is None else
               "the fit on the CPU (Semantic-GNMF has no GPU engine)" if inputs.A is not None
               else f"the fit on {fit_device}")
        log(f"device={settings.device!r}: the sentence model on {encoder or 'none'}, the kNN "
            f"graphs on {graph_device or 'none'}, {fit}", settings.verbose)
    if encoder is not None:
        from ..text.encoders import load_encoder

        runtime = load_encoder(settings.semantics, settings.device).runtime
    extra["semantics"] = {
        "source": settings.semantics, "embed": embed, "pooling": settings.pooling,
        "encoder_device": encoder,
        "encoder_runtime": None if encoder is None else runtime or "read from the cache",
        "graph_device": graph_device, "fit_device": fit_device,
        "documents_expanded": graph is not None, "document_graph": inputs.A is not None,
        "terms_embedded": inputs.terms_embedded,
        "word_graph_nnz": None if graph is None else int(graph.nnz),
        "document_graph_nnz": None if inputs.A is None else int(inputs.A.nnz)}
    if partition is not None:
        extra["semantics"].update(partition=partition, partition_reason=partition_why)
        log(f"partition {partition}: {partition_why}", settings.verbose)
    if partition == "documents":
        extra["_document_partition"] = inputs.start
    elif inputs.A is not None:
        from ..pipelines.pretrained import document_graph_lam

        why = document_graph_lam(inputs.X.shape[0], settings.k)[1]
        extra["semantics"].update(graph_lam=float(model.graph_lam), graph_lam_reason=why)
        log(f"document-graph weight {model.graph_lam:g}: {why}", settings.verbose)
    return settings, inputs.X, inputs.E, model, fit_params


def run_partition(settings, corpus):
    """(partition, why) of a run with pretrained semantics
    (:func:`semnmf.pipelines.pretrained.choose_partition` of its settings)."""
    from ..pipelines.pretrained import choose_partition

    return choose_partition(corpus, settings.k, settings.partition or "auto",
                            semantics=settings.semantics, embed=settings.embed,
                            refine="refine='gt'" if settings.refine == "gt" else None)


def _fit_document_partition(settings, labels, E, X, M, timings):
    """The document vectors' k-means partition as the run's (:func:`run_partition`):
    (labels, strengths in the vectors' space, the word topics Semantic-NMF gives the
    partition, :func:`semnmf.models.semantic.partition_topics`)."""
    from ..models.semantic import partition_topics
    from ..pipelines.pretrained import partition_strengths

    with timed(timings, "topics"):
        strength = partition_strengths(E, labels, settings.k)
        with collected_warnings():
            components, _ = partition_topics(X, labels, settings.k, M,
                                             verbose=int(settings.verbose))
    return labels, strength, components


def _fit(settings, model, X, fit_params, timings, extra):
    """Fit one model or a consensus of ``settings.n_runs``: (labels, strength, memberships,
    ensemble); memberships is None for a consensus, ensemble None for one model."""
    from .._utils.labels import strengths_from_factors
    from ..pipelines.saved import run_agreement

    with timed(timings, "fit"), collected_warnings():
        if settings.consensus:
            from ..ensemble.runs import ClusterEnsemble

            ensemble = ClusterEnsemble(model, n_runs=settings.n_runs, n_keep=settings.n_keep,
                                       consensus=settings.consensus,
                                       random_state=settings.random_state,
                                       verbose=int(settings.verbose))
            labels = ensemble.fit(X, **fit_params).labels_
            extra["consensus"] = ensemble.consensus_
        else:
            ensemble, memberships = None, model.fit_transform(X, **fit_params)
            labels = model.labels_
    if ensemble is not None:
        return labels, run_agreement(ensemble.partitions_, labels), None, ensemble
    strength = strengths_from_factors(memberships, labels,
                                        cosine=settings.method == "skmeans")
    return labels, strength, memberships, None


def _fit_guided(settings, corpus, model, X, fit_params, timings, extra):
    """One run with guided topics (:func:`semnmf.models.guided.fit_guided`): (labels,
    strength, memberships); run.json's ``seed_words`` records the seeded topics' terms,
    drift and whether the seeds stayed in the top words."""
    import numpy as np

    from ..models.guided import DEFAULT_STRENGTH, fit_guided
    from .._utils.labels import strengths_from_factors
    from .inputs import seed_terms

    seeds, record = seed_terms(settings.seed_words, corpus, settings.k)
    with timed(timings, "fit"), collected_warnings():
        found = fit_guided(model, X, seeds, random_state=settings.random_state, **fit_params)
    top = np.argsort(-model.components_, axis=1)[:, :max(settings.n_top, 10)]
    for j, topic in enumerate(record):
        topic["drift"] = round(float(found.drift[j]), 4)
        topic["in_top_words"] = bool(set(seeds[j]) <= set(top[j].tolist()))
    extra["seed_words"] = {"topics": record, "strength": DEFAULT_STRENGTH,
                           "drift_unseeded": [round(float(d), 4)
                                              for d in found.drift[len(seeds):]]}
    labels = model.labels_
    return labels, strengths_from_factors(found.Z, labels), found.Z


def _fit_kl_consensus(settings, X, timings, extra):
    """The KL consensus (:func:`semnmf.ensemble.portfolio.kl_consensus`): (labels,
    strength, None, the fitted consensus); the strength is the share of the members (three
    per run) that agree with the document's consensus cluster."""
    from ..ensemble.portfolio import kl_consensus
    from ..pipelines.saved import run_agreement

    with timed(timings, "fit"), collected_warnings():
        fitted = kl_consensus(X, settings.k, random_state=settings.random_state,
                              max_iter=settings.max_iter, tol=settings.tol,
                              verbose=int(settings.verbose))
    extra["consensus"] = fitted.consensus_
    labels = fitted.labels_
    return labels, run_agreement(fitted.members_, labels), None, fitted


# a document moves to another cluster's centroid when it is 5 % more cosine-similar to it
# than to its own (semnmf.refine.centroid_refine's min_gain; benchmarks/results/
# refine_centroid.md)
CENTROID_MIN_GAIN = 0.05
CENTROID_REASON = ("the default's last step: each document moves to the cluster centroid it "
                   "is most cosine-similar to, when 5 % more than to its own (one spherical "
                   "k-means assignment), chosen by leave-one-corpus-out on the 25 shared "
                   "corpora (worst margin over the best baseline -0.020 held out, -0.013 in "
                   "sample, against -0.065 without it; "
                   "benchmarks/results/refine_centroid.md); refine='none' (--refine none) "
                   "skips it")


def refinement(settings):
    """The refinement the run makes after its fit: "gt", "centroid" or None. ``refine``
    None: the centroid step (:data:`CENTROID_REASON`) for the default method with the
    corpus's own semantics, k > 1, no seed words and one run or an MMM consensus
    (benchmarks/results/refine_centroid.md); nothing for a method named."""
    if settings.refine is not None:
        return None if settings.refine == "none" else settings.refine
    if (settings.method_reason is not None and settings.semantics == "corpus"
            and settings.seed_words is None and settings.consensus in (None, "mmm")
            and (settings.k or 0) > 1):
        return "centroid"
    return None


def _centroid_refine(settings, X, labels, corpus):
    """(labels, strength, centers, record) of :func:`semnmf.refine.centroid_refine`."""
    import numpy as np

    from .._utils.progress import log
    from ..metrics import clustering_scores
    from ..refine import centroid_refine

    new, centers, similarity = centroid_refine(X, labels, settings.k,
                                               min_gain=CENTROID_MIN_GAIN)
    record = {"method": "centroid", "min_gain": CENTROID_MIN_GAIN,
              "n_changed": int(np.sum(new != labels))}
    if settings.refine is None:
        record["why"] = CENTROID_REASON
    log(f"refined: {record['n_changed']} of {len(new)} documents moved to the cluster "
        f"centroid they are most cosine-similar to (by more than {CENTROID_MIN_GAIN:.0%})",
        settings.verbose)
    if corpus.labels is not None:
        record["scores_before"] = clustering_scores(corpus.labels, labels)
    return new, similarity, centers, record


def _refine(X, memberships, labels, corpus, verbose):
    from .._utils.progress import log
    from ..metrics import clustering_scores
    from .._utils.labels import strengths_from_factors
    from ..refine import GTNMF

    log("refining with GTNMF (replicator dynamics on a kNN graph) ...", verbose)
    gt = GTNMF(verbose=int(verbose)).fit(X, memberships=memberships)
    record = {"method": "gt", "n_changed": int(gt.n_changed_), "n_iter": int(gt.n_iter_),
              "converged": bool(gt.converged_), "parameters": gt.get_params()}
    if corpus.labels is not None:
        record["scores_before"] = clustering_scores(corpus.labels, labels)
    strength = strengths_from_factors(gt.strategies_, gt.labels_)
    return gt.labels_, record, strength
