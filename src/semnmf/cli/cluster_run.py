"""``semnmf cluster``'s run: the fit on the local engine, the run it makes, its writing.

:func:`run_local` (and :func:`semnmf.cli.engine.run_dask` on the Dask engine) turns a
:class:`~semnmf.cli.cluster_options.ClusterOptions` into a :class:`ClusterRun`;
:func:`write_run` writes that run's result folder. Nothing here changes the options:
what the run chose (``-k auto``'s k, the association and the dtype used) is in
``run.options``, a copy of the options with those values.

Standard library only at import (the parser loads this module's importers); the library
is imported inside the functions.
"""

import dataclasses
import time
from dataclasses import dataclass, field

from ._common import (as_dtype, context_record, data_notes, load_corpus, logged_warnings,
                      word_context)


@dataclass
class ClusterRun:
    """One ``semnmf cluster`` run, on either engine: what :func:`write_run` writes and the
    summary prints.

    Attributes
    ----------
    options : ClusterOptions
        The options the run used (k chosen, association, top_k and dtype as used).
    method : Method
        The registry entry of ``options.method``.
    corpus, X
        The corpus and the matrix fitted (on the Dask engine, a record of its shape).
    model
        The fitted estimator (the prototype of a consensus).
    labels, strength : arrays of shape (n_documents,)
        Each document's cluster (-1: none) and the strength of its membership.
    components, topics
        The clusters' term weights and their top words.
    scores : dict or None
        NMI, ARI, accuracy against the corpus' labels.
    word_context : WordContext or None
        The word-context matrix and how it was built.
    timings : dict
        Seconds per stage.
    extra : dict
        The run record's other entries (topic_quality, k_selection, semantics, consensus,
        refine, engine).
    saved, not_saved
        The model to save (:class:`semnmf.pipelines.saved.SavedModel`), or None and why.
    partitions, partition_seeds
        The runs of a consensus and their seeds (None otherwise).
    """

    options: object
    method: object
    corpus: object
    X: object
    model: object
    labels: object
    strength: object
    components: object
    topics: list
    scores: dict | None
    word_context: object
    timings: dict
    extra: dict = field(default_factory=dict)
    saved: object = None
    not_saved: str | None = None
    partitions: object = None
    partition_seeds: object = None

    @property
    def k(self):
        return self.options.k


def build_model(options, k=None):
    """The estimator of ``options.method`` with the command's options (from the registry)."""
    method = options.spec
    params = method.options(init=options.init, n_init=options.n_init,
                            max_iter=options.max_iter, tol=options.tol,
                            verbose=int(options.verbose), lam=options.lam,
                            lam_scale=options.lam_scale, graph_lam=options.graph_lam,
                            loss=options.loss, orthogonal=options.orthogonal)
    return method.build(options.k if k is None else k, options.seed, **params)


def describe(options, corpus, labels, components, extra, *, quality=True):
    """The top words, the scores against the labels and (``quality``) the label-free topic
    quality of a clustering: (topics, scores), ``extra["topic_quality"]`` set."""
    from ..metrics import clustering_scores, top_terms, topic_quality

    topics = top_terms(components, corpus.vocabulary, options.top)
    scores = clustering_scores(corpus.labels, labels) if corpus.labels is not None else None
    # label-free topic quality: NPMI of the top 10 words in the corpus, diversity of 25
    extra["topic_quality"] = topic_quality(components, corpus.counts()) if quality else None
    return topics, scores


def run_local(options, started):
    """``semnmf cluster`` on the local engine: load, (choose k,) build M, fit, (refine);
    ``started`` is when the command started (``time.perf_counter()``)."""
    from ..pipelines.saved import SavedModel

    timings, extra = {}, {}
    corpus, X = load_corpus(options, options.verbose, timings, started)
    if options.k_candidates is not None:
        t = time.perf_counter()
        k, extra["k_selection"] = _choose_k(options, corpus, X)
        options = dataclasses.replace(options, k=k)
        timings["choose_k"] = time.perf_counter() - t
    if options.k > X.shape[0]:
        raise ValueError(f"-k {options.k} is larger than the number of documents "
                         f"({X.shape[0]}).")
    method = options.spec
    wc = None
    if method.word_context:
        wc = word_context(options, corpus, options.verbose, timings,
                          association=method.association, counts_context=method.counts_context)
        options = dataclasses.replace(options, association=wc.association, top_k=wc.top_k)
    options, X, E, model, fit_params = _inputs(options, corpus, X, wc, timings, extra)
    fitted = _fit(options, model, X, fit_params, timings, extra)
    labels, strength, memberships, ensemble = fitted
    if options.refine:
        t = time.perf_counter()
        with logged_warnings():  # with embedded documents the games are played on them
            labels, extra["refine"], strength = _refine(X if E is None else E, memberships,
                                                        labels, corpus, options.verbose)
        timings["refine"] = time.perf_counter() - t
    if ensemble is not None or options.refine:
        # consensus and refined clusters have no factor of their own: their mean X row
        from ..ensemble.runs import cluster_means

        components = cluster_means(X, labels, options.k)
    else:
        components = model.cluster_centers_ if options.method == "skmeans" else model.components_
    topics, scores = describe(options, corpus, labels, components, extra)
    timings["total"] = time.perf_counter() - started
    run = ClusterRun(options, method, corpus, X, model, labels, strength, components, topics,
                     scores, wc, timings, extra)
    if ensemble is not None:
        run.partitions, run.partition_seeds = ensemble.partitions_, ensemble.kept_seeds_
    if options.semantics != "corpus":  # pretrained semantics change X: not saved (yet)
        run.not_saved = ("runs with --semantics build X with pretrained vectors, which saved "
                         "models do not hold")
        return run
    run.saved = SavedModel.from_fit(
        model, corpus, options.weighting, labels=labels, X=X, method=options.method,
        topics=components, refine=extra.get("refine") and {"method": "gt"},
        consensus=None if ensemble is None else {"method": options.consensus,
                                                 "n_clusters": options.k})
    return run


def _choose_k(options, corpus, X):
    """The label-free choice of k among ``options.k_candidates``: (k, its run.json record)."""
    from .._utils.progress import log
    from ..experiments.selection import candidate_grid, select_n_components

    candidates = (candidate_grid(X.shape[0]) if options.k_candidates == "auto"
                  else list(options.k_candidates))
    if candidates[-1] >= X.shape[0]:
        raise ValueError(f"-k: the largest candidate {candidates[-1]} needs more documents "
                         f"than the {X.shape[0]} there are.")
    log(f"choosing k among {', '.join(map(str, candidates))} (label-free: agreement of "
        "spherical k-means runs on a sample) ...", options.verbose)
    result = select_n_components(X, candidates, counts=corpus.counts(),
                                 random_state=options.seed, verbose=options.verbose)
    log(f"k = {result.best} ({result.criterion}; {result.seconds:.1f} s)", options.verbose)
    return result.best, result.record()


def _inputs(options, corpus, X, wc, timings, extra):
    """What is fitted: (options, X, E, model, fit_params); with ``--semantics`` X and M
    come from the pretrained pipeline (in its own dtype, which ``options`` then records)
    and E are the embedded documents (else None)."""
    M = None if wc is None else wc.M
    if options.semantics == "corpus":
        X, M = as_dtype(X, options.dtype), as_dtype(M, options.dtype)
        return options, X, None, build_model(options), {} if M is None else {"M": M}
    from .._utils.progress import log
    from ..pipelines.pretrained import pretrained_inputs, semantic_model

    log(f"adding pretrained semantics ({options.semantics}, embedding {options.embed}) ...",
        options.verbose)
    inputs = pretrained_inputs(corpus, X, M, options.k, options.semantics, options.embed,
                               random_state=options.seed, cache_dir=options.cache_dir,
                               verbose=int(options.verbose))
    timings.update(inputs.timings)
    options = dataclasses.replace(options, dtype=str(inputs.X.dtype))
    model = semantic_model(options.k, inputs, lam=options.lam, lam_scale=options.lam_scale,
                           n_init=options.n_init or 1, max_iter=options.max_iter,
                           tol=options.tol, random_state=options.seed,
                           verbose=int(options.verbose))
    fit_params = {"M": inputs.M} if inputs.A is None else {"M": inputs.M, "A": inputs.A}
    graph = inputs.word_graph
    extra["semantics"] = {
        "source": options.semantics, "embed": options.embed,
        "documents_expanded": graph is not None, "document_graph": inputs.A is not None,
        "word_graph_nnz": None if graph is None else int(graph.nnz),
        "document_graph_nnz": None if inputs.A is None else int(inputs.A.nnz)}
    return options, inputs.X, inputs.E, model, fit_params


def _fit(options, model, X, fit_params, timings, extra):
    """Fit one model or a consensus of ``options.runs``: (labels, strength, memberships,
    ensemble); memberships is None for a consensus, ensemble None for one model."""
    from ..pipelines.saved import memberships_from_factors, run_agreement

    t = time.perf_counter()
    with logged_warnings():
        if options.consensus:
            from ..ensemble.runs import ClusterEnsemble

            ensemble = ClusterEnsemble(model, n_runs=options.runs, n_keep=options.keep,
                                       consensus=options.consensus, random_state=options.seed,
                                       verbose=int(options.verbose))
            labels = ensemble.fit(X, **fit_params).labels_
            extra["consensus"] = ensemble.consensus_
        else:
            ensemble, memberships = None, model.fit_transform(X, **fit_params)
            labels = model.labels_
    timings["fit"] = time.perf_counter() - t
    if ensemble is not None:
        return labels, run_agreement(ensemble.partitions_, labels), None, ensemble
    strength = memberships_from_factors(memberships, labels,
                                        cosine=options.method == "skmeans")
    return labels, strength, memberships, None


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


def write_run(run, out):
    """Write the result folder of ``run`` to ``out`` (cleared of an earlier run's files
    first) and, with ``--report``, its report: the names of the files written."""
    from ..report.output import clear_output_folder
    from ..report.results import run_record, write_results

    options = run.options
    record = run_record(run.model, run.labels, method=options.method, corpus=run.corpus,
                        X=run.X, source=options.source, weighting=options.weighting,
                        word_context=run.method.word_context,
                        cli_arguments=options.record(),
                        context=context_record(options, run.word_context),
                        scores=run.scores, extra=run.extra, timings=run.timings,
                        n_clusters=options.k)
    data_notes(record, run.corpus)
    if run.saved is None:
        record["model"] = None
        record["model_not_saved"] = run.not_saved
    clear_output_folder(out)  # an earlier run's files (--overwrite): none may stay
    files = write_results(out, run.corpus, run.labels, run.components, record,
                          n_top=max(options.top, 20), partitions=run.partitions,
                          partition_seeds=run.partition_seeds, strengths=run.strength,
                          model=run.saved)
    if options.report:
        from ..report.html import write_report

        write_report(out, corpus=run.corpus)
        files.append("report.html")
    return files
