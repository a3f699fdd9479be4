"""The settings (:class:`ClusterSettings`) and the result (:class:`ClusterResult`) of a
clustering run, and the steps both engines share (:func:`build_model`, :func:`describe`).
Standard library only at import.
"""

import dataclasses
import errno
import os
import warnings
from dataclasses import dataclass, field

from .._utils.renamed import renamed
from ..models.registry import CLI_METHODS, DEFAULT_CLI_METHOD
from ..models._defaults import DEFAULT_MAX_ITER, DEFAULT_TOL
from .checks import DEFAULT_RUNS
from .flags import recorded_name
from .inputs import context_defaults, context_record, data_notes

__all__ = ["ClusterSettings", "ClusterResult", "method_defaults", "build_model", "describe",
           "attach_saved_model", "arguments_record", "DEFAULT_RUNS"]

# a term in more than this share of the documents is "very frequent" (the stop-word hint)
FREQUENT_DF = 0.5


@dataclass(frozen=True, kw_only=True)
class ClusterSettings:
    """Every setting of one clustering run (the library's parameter names), with its
    default: :func:`semnmf.cluster` and ``semnmf cluster`` both make one;
    :func:`method_defaults` fills the defaults that depend on the method, and a setting
    that does not apply to the method stays None. ``k`` is None while ``k_candidates``
    (``"auto"`` or a tuple) holds a label-free choice to make; ``source`` as
    :func:`semnmf.cluster` takes it.
    """

    source: object
    k: int | None = None
    k_candidates: str | tuple | None = None
    min_cluster_size: int | None = None
    method: str = DEFAULT_CLI_METHOD
    loss: str | None = None
    orthogonal: bool = False
    lam: float | None = None
    lam_scale: str | None = None
    graph_lam: float | None = None
    init: str | None = None
    n_init: int | None = None
    max_iter: int = DEFAULT_MAX_ITER
    tol: float = DEFAULT_TOL
    random_state: int = 0
    dtype: str | None = None
    semantics: str = "auto"
    semantics_reason: str | None = None  # why "auto" became "corpus" (the word counts)
    embed: str | None = None
    pooling: str | None = None
    partition: str | None = None
    cache_dir: str | None = None
    consensus: str | None = None
    n_runs: int | None = None
    n_keep: int | None = None
    refine: str | None = None
    context: str | None = None
    window: int | None = None
    window_given: bool = False
    association: str | None = None
    min_count: int | None = None
    top_k: int | None = None
    max_nnz: int | None = None
    text_column: str | None = None
    label_column: str | None = None
    id_column: str | None = None
    encoding: str = "utf-8"
    delimiter: str | None = None
    on_bad_lines: str = "error"
    stop_words: object = None
    stop_words_file: str | None = None
    token_pattern: str | None = None
    vocabulary: object = None
    labels: object = None
    min_df: int | None = None
    max_df: float = 1.0
    stem: str | None = None
    weighting: str = "tfidf"
    n_top: int = 10
    seed_words: object = None
    time_column: str | None = None
    time_period: str = "auto"
    date_format: str | None = None
    device: str = "cpu"
    method_reason: str | None = None  # why the method was chosen, when it was the default
    verbose: int = 0

    @property
    def spec(self):
        """The method's registry entry (:class:`semnmf.models.registry.Method`)."""
        return CLI_METHODS[self.method]

    @property
    def seed(self):
        return self.random_state

    def record(self):
        """The settings as :attr:`ClusterResult.parameters` shows them (a source that is
        not a name or path by its kind)."""
        out = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name in ("source", "vocabulary", "labels", "stop_words", "seed_words") and not (
                    value is None or isinstance(value, (str, int, float, bool))):
                value = _describe_value(value)
            out[f.name] = list(value) if isinstance(value, tuple) else value
        out.pop("window_given")
        return out


def _describe_value(value):
    if hasattr(value, "shape"):
        return f"{type(value).__name__} {tuple(int(n) for n in value.shape)}"
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    try:
        return f"{type(value).__name__} of {len(value)}"
    except TypeError:
        return type(value).__name__


def method_defaults(settings):
    """The defaults that depend on the method (those of the settings that apply to it) and
    those of the word-context settings: a dict for ``dataclasses.replace``."""
    method = settings.spec
    filled = {}
    if method.variants and settings.loss is None:
        filled["loss"] = "frobenius"
    if (method.word_context or method.graph) and settings.lam_scale is None:
        filled["lam_scale"] = "relative"
    if method.takes_init and settings.init is None:
        filled["init"] = "skmeans"
    if settings.semantics not in ("corpus", "auto") and settings.embed is None:
        filled["embed"] = "both"
    if (settings.semantics not in ("corpus", "auto", "glove") and settings.pooling is None
            and (settings.embed or filled.get("embed")) != "words"):
        filled["pooling"] = "mean"
    if settings.consensus and settings.n_runs is None:
        filled["n_runs"] = DEFAULT_RUNS
    if method.word_context and settings.lam is None:
        from ..models._defaults import DEFAULT_LAM

        filled["lam"] = method.params.get("lam", DEFAULT_LAM)
    if method.graph and settings.graph_lam is None:
        from ..models._defaults import DEFAULT_GRAPH_LAM

        filled["graph_lam"] = DEFAULT_GRAPH_LAM
    if settings.dtype is None and settings.semantics in ("corpus", "auto"):
        filled["dtype"] = method.dtype
    if method.word_context:
        filled.update(context_defaults(settings))
    return filled


@dataclass
class ClusterResult:
    """One clustering run (:func:`cluster`, ``semnmf cluster``).

    Attributes
    ----------
    labels : array of shape (n_documents,)
        Each document's cluster (-1: a document without any term; a run that keeps the
        document vectors' partition of ``semantics`` places it by its vector).
    strengths : array of shape (n_documents,)
        The strength of each document's membership (assignments.csv's ``strength``).
    topics : list of list of (term, weight)
        The ``n_top`` heaviest terms of each cluster.
    scores : dict or None
        NMI, ARI, accuracy against the corpus' labels (None without labels).
    model
        The fitted estimator (the prototype of a consensus; None when the clusters are the
        document vectors' partition of pretrained semantics, which fits none).
    k : int
        The number of clusters (chosen, with ``k="auto"``).
    method : str
    parameters : dict
        Every setting as used (defaults filled, choices made).
    choices : dict
        What the run decided and why: ``k``, ``method``, ``dtype``, ``min_df``, M's
        ``context``, ``association`` and ``top_k``, ``duplicates``, ``degenerate``,
        ``hints``; ``runs``: the seeds of the KL consensus's runs and how they were
        combined.
    timings : dict
        Seconds per stage.
    corpus, X, components, word_context, extra, saved, not_saved, partitions,
    partition_seeds, settings
        The corpus and the matrix fitted, the clusters' term weights, M, run.json's other
        entries, the model to save (or why not), a consensus' runs and their seeds, the
        :class:`ClusterSettings` used.
    folder : str or None
        Where :meth:`save` wrote the run; ``files`` the files it wrote.
    """

    settings: ClusterSettings
    corpus: object
    X: object
    model: object
    labels: object
    strengths: object
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
    timeline: dict | None = None  # topics over time (workflows.timeline), with time_column
    levels: dict | None = None  # k -> labels at every level (k="auto", min_cluster_size)
    expansion: dict | None = None  # the word graph that expanded the documents (semantics)
    folder: str | None = None
    files: list = field(default_factory=list)

    def __repr__(self):
        scores = "" if not self.scores else f", NMI {self.scores['nmi']:.3f}"
        return (f"ClusterResult({self.method}, k={self.k}, {len(self.labels)} documents"
                f"{scores}{', degenerate' if self.degenerate else ''})")

    @property
    def k(self):
        return self.settings.k

    @property
    def method(self):
        return self.settings.method

    @property
    def spec(self):
        return self.settings.spec

    @property
    def parameters(self):
        return self.settings.record()

    @property
    def strength(self):
        """Another name of :attr:`strengths`."""
        return self.strengths

    @property
    def degenerate(self):
        """Why the result is degenerate (one cluster holds every document, or there are
        fewer distinct documents than clusters), or None."""
        return self.extra.get("degenerate")

    @property
    def choices(self):
        s, wc = self.settings, self.word_context
        selection = self.extra.get("k_selection")
        choices = {"k": ({"value": s.k, "how": "given"} if selection is None else
                         {"value": s.k, "how": "chosen without labels, on the score "
                          f"{selection.get('name', selection['criterion'])}",
                          "candidates": selection["candidates"],
                          "scores": selection["scores"]}),
                   "dtype": str(getattr(self.X, "dtype", s.dtype)),
                   "min_df": getattr(self.corpus, "min_df", None),
                   "min_df_automatic": bool(getattr(self.corpus, "min_df_automatic", False)),
                   "method": ({"value": s.method, "how": s.method_reason} if s.method_reason
                              else {"value": s.method, "how": "given"})}
        if wc is not None:
            choices.update({"context": wc.context, "association": wc.association,
                            "top_k": wc.top_k, "pruned": bool(wc.pruning["budget_applied"])})
        for key in ("language", "semantics_choice", "duplicates", "degenerate", "hints",
                    "refine"):
            if self.extra.get(key):
                choices[key] = self.extra[key]
        combined = (self.extra.get("consensus") or {}).get("combined")
        if combined:  # the KL consensus's runs and how they were combined
            choices["runs"] = {"value": [r["seed"] for r in self.extra["consensus"]["runs"]],
                               "how": combined, "runs": self.extra["consensus"]["runs"]}
        semantics = self.extra.get("semantics") or {}
        if semantics.get("partition"):
            choices["partition"] = {"value": semantics["partition"],
                                    "how": semantics["partition_reason"]}
        return choices

    def run_record(self, cli_arguments=None):
        """The run.json record of this run (``cli_arguments``: the command line's options
        as given to it; default: the settings under the library's names)."""
        from ..report.results import run_record

        record = run_record(self.model, self.labels, method=self.method, corpus=self.corpus,
                            X=self.X, source=_source_name(self.settings.source),
                            weighting=self.settings.weighting,
                            word_context=self.spec.word_context,
                            cli_arguments=(cli_arguments if cli_arguments is not None
                                           else arguments_record(self.settings)),
                            context=context_record(self.settings, self.word_context),
                            scores=self.scores, extra=self.extra, timings=self.timings,
                            n_components=self.k)
        data_notes(record, self.corpus)
        if record.get("data") is not None and "duplicates" in self.extra:
            record["data"]["n_duplicate_documents"] = self.extra["duplicates"]["n_duplicates"]
        if self.saved is None:
            record["model"] = None
            record["model_not_saved"] = self.not_saved
        return record

    def save(self, out, *, overwrite=False, report=False, n_top=None, cli_arguments=None):
        """Write the run folder ``out`` as ``semnmf cluster --out`` does (``report.html``
        too with ``report``), through a temporary folder so that a failure leaves no
        partial run; an earlier run's results are refused unless ``overwrite``. Returns
        ``self`` (``self.files``: the files written)."""
        from ..report.output import check_output_folder

        out = os.fspath(out)
        try:
            check_output_folder(out, overwrite=overwrite, option="out")
        except ValueError as exc:  # the command line checked its --out before the run
            raise ValueError(str(exc).replace("pass --overwrite", "pass overwrite=True")
                             ) from None
        record = self.run_record(cli_arguments)
        n_top = max(self.settings.n_top, 20) if n_top is None else n_top
        files = _write_folder(out, self, record, n_top)
        self.folder = out
        if report:
            self.report()
            files.append("report.html")
        self.files = files
        return self

    def report(self, out=None, **options):
        """Write the HTML report of the saved run (:func:`semnmf.report.html.write_report`
        with this run's corpus) and return its path; ``options`` as write_report takes
        them (``n_documents``, ``n_words``, ``max_points``, ...)."""
        from .._utils.io import check_writable
        from ..report.html import write_report

        if self.folder is None:
            raise ValueError("save the result first (result.save(folder)): the report is "
                             "made from the run folder.")
        check_writable(os.path.dirname(os.path.abspath(out)) if out else self.folder,
                       "the report")
        return write_report(self.folder, corpus=self.corpus, out=out, **options)


def _source_name(source):
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    return None


def arguments_record(settings):
    """run.json's ``cli_arguments`` of ``settings``: each setting under its flag's word
    (:func:`~semnmf.workflows.flags.recorded_name`), a source that is not a name or path
    as None."""
    record = settings.record()
    out = {recorded_name(key): value for key, value in record.items()
           if key not in ("labels", "verbose")}
    out["source"] = _source_name(settings.source)
    return out


def _write_folder(out, result, record, n_top):
    """Write the run's files through :func:`staged_folder`: the file names."""
    from ..report.results import write_results

    def write(folder):
        files = write_results(
            folder, result.corpus, result.labels, result.components, record, n_top=n_top,
            partitions=result.partitions, partition_seeds=result.partition_seeds,
            strengths=result.strengths, model=result.saved)
        if result.timeline is not None:
            from .timeline import write_timeline
            files += write_timeline(folder, result.timeline)
        if result.levels and len(result.levels) > 1:
            from ..report.results import write_levels
            write_levels(os.path.join(folder, "levels.csv"), result.corpus.ids, result.levels)
            files.append("levels.csv")
        return files

    return staged_folder(out, write)


def staged_folder(out, write):
    """Run ``write(folder)`` on a temporary sibling of ``out``, then move its files into
    ``out`` (its earlier results removed first): a failure (a full disk) leaves nothing
    there. Returns what ``write`` returned (the file names)."""
    import shutil
    import tempfile

    from ..report.output import clear_output_folder

    parent = os.path.dirname(os.path.abspath(out))
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(dir=parent, prefix=f".{os.path.basename(os.path.abspath(out))}.tmp-")
    try:
        os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp makes 0700; a run folder is ordinary
        files = write(tmp)
        if os.path.isdir(out):
            clear_output_folder(out)  # an earlier run's files (overwrite): none may stay
            for name in os.listdir(tmp):
                os.replace(os.path.join(tmp, name), os.path.join(out, name))
            os.rmdir(tmp)
        else:
            os.replace(tmp, out)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if not isinstance(exc, OSError):
            raise
        reason = exc.strerror or str(exc)
        raise OSError(exc.errno or errno.EIO,
                      f"cannot write the results to {out}: {reason}; nothing was left "
                      "there (free some space or choose another folder)") from None
    return files


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


@renamed("k", "n_components")
def build_model(settings, n_components=None):
    """The estimator of ``settings.method`` with the run's settings (from the registry),
    for ``n_components`` clusters (default ``settings.k``)."""
    method = settings.spec
    params = method.options(init=settings.init, n_init=settings.n_init,
                            max_iter=settings.max_iter, tol=settings.tol,
                            verbose=int(settings.verbose), lam=settings.lam,
                            lam_scale=settings.lam_scale, graph_lam=settings.graph_lam,
                            loss=settings.loss, orthogonal=settings.orthogonal)
    takes_device = "device" in method.estimator_class()().get_params()
    if settings.device == "auto" and not takes_device:
        pass  # auto: the CPU for the methods the GPU engine does not run
    elif settings.device != "cpu":  # the torch engine (NMF and Semantic-NMF)
        if not takes_device:
            raise ValueError(f"device={settings.device!r} runs NMF and Semantic-NMF methods "
                             f"on the GPU engine; method {settings.method!r} runs on the CPU "
                             "only.")
        params["device"] = settings.device
    return method.build(settings.k if n_components is None else n_components,
                        settings.random_state, **params)


def describe(settings, corpus, labels, components, extra, *, quality=True):
    """The top words, the scores against the labels and (``quality``) the label-free topic
    quality of a clustering: (topics, scores); ``extra``'s ``topic_quality``,
    ``degenerate`` and ``hints`` set."""
    from ..metrics import clustering_scores, top_terms, topic_quality

    topics = top_terms(components, corpus.vocabulary, settings.n_top)
    scores = clustering_scores(corpus.labels, labels) if corpus.labels is not None else None
    # label-free topic quality: NPMI of the top 10 words in the corpus, diversity of 25
    extra["topic_quality"] = topic_quality(components, corpus.counts()) if quality else None
    extra["degenerate"] = _degenerate(labels, settings.k, extra.get("duplicates"))
    if extra["degenerate"] is not None:  # the coherence of copies of one text means nothing
        extra["topic_quality"] = None
    if quality and extra["degenerate"] is None:
        hint = _frequent_words_hint(corpus, topics, settings)
        if hint:
            warnings.warn(hint, UserWarning, stacklevel=2)
            extra["hints"] = [hint]
    return topics, scores


def _degenerate(labels, k, duplicates):
    """Why a clustering into ``k`` clusters is degenerate, or None."""
    import numpy as np

    labels = np.asarray(labels)
    used = np.unique(labels[labels >= 0]).size
    if k is None or k < 2:
        return None
    if duplicates and duplicates["n_distinct"] < k:
        return (f"the {len(labels)} documents hold only {duplicates['n_distinct']} distinct "
                f"text(s) for {k} clusters")
    if used < 2:
        return f"only {used} of the {k} clusters holds documents"
    return None


def _frequent_words_hint(corpus, topics, settings):
    """A one-line hint when the top words of most clusters are very frequent terms (in more
    than half the documents): a stop list that does not fit the language."""
    import numpy as np

    counts = corpus.counts()
    n = counts.shape[0]
    if n < 10:
        return None
    df = np.bincount(counts.indices, minlength=counts.shape[1]) / n
    index = {term: j for j, term in enumerate(corpus.vocabulary)}
    dominated, frequent = 0, set()
    for terms in topics:
        words = [term for term, weight in terms[:10] if weight > 0]
        common = [w for w in words if df[index[w]] > FREQUENT_DF]
        if words and len(common) * 2 >= len(words):
            dominated += 1
            frequent.update(common)
    if dominated * 2 <= len(topics):
        return None
    shown = " ".join(sorted(frequent, key=lambda w: -df[index[w]])[:7])
    return (f"the top words of {dominated} of {len(topics)} clusters are mostly words found "
            f"in more than half of the documents ({shown}): try max_df=0.3 (CLI: --max-df "
            "0.3), stop_words='none' with a stop-word file of the texts' language "
            "(CLI: --language none --stop-words FILE)")


def attach_saved_model(result, ensemble, step=None):
    """The model ``save`` writes (``result.saved``), or why there is none. ``step``: the
    run's centroid step (``labels`` before it, ``centers``, ``min_gain``), which the model
    makes after its own rule, as the run did."""
    from ..pipelines.saved import SavedModel

    settings = result.settings
    if settings.semantics != "corpus" and ensemble is not None:
        result.not_saved = ("a consensus of runs with --semantics has no one model to save")
        return
    if (result.extra.get("semantics") or {}).get("partition") == "documents":
        # the clusters of the document vectors: new documents go to the nearest mean TF-IDF
        # row (a word rule; `semnmf assign` does not embed documents)
        result.saved = SavedModel.from_fit(
            result.model, result.corpus, settings.weighting, labels=result.labels,
            X=result.X, method=settings.method, topics=result.components,
            consensus={"method": "document vectors' k-means", "n_clusters": settings.k})
        return
    result.saved = SavedModel.from_fit(
        result.model, result.corpus, settings.weighting,
        labels=result.labels if step is None else step["labels"], X=result.X,
        method=settings.method, topics=result.components,
        refine=result.extra.get("refine") and {"method": result.extra["refine"]["method"]},
        step=step,
        consensus=None if ensemble is None else {
            "method": settings.consensus or ensemble.consensus_["method"],
            "n_clusters": settings.k},
        expansion=result.expansion)


