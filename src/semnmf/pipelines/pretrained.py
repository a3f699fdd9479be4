"""Pretrained semantics for Semantic-NMF: word and document knowledge from outside the corpus.

The Neurocomputing paper lets M be any word-context or word-embedding matrix (§4.1, §5.4) and
names "huge external corpora" as its main future direction (§6.3); this module takes it in
two ways, both keeping NMF's word topics (rows of W):

**Word semantics**. Every vocabulary term gets a vector (static GloVe 6B, ``"glove"``, or a
sentence-transformers model reading the term; a stem as its most frequent surface form),
and the vectors become a sparse kNN word-similarity graph S (d x d, cosine weights):

- ``word_mode="expand"`` (default): ``x ← x + a·x D⁻¹S`` (:func:`expand_documents`), so two
  documents that say the same thing in other words share terms;
- ``word_mode="context"``: S joins the corpus PPMI P as a second block of the word-context
  matrix (the paper's route, §4.1), ``M = [P/‖P‖_F, β·S/‖S‖_F]`` (d x 2d).

**Document semantics**. Every document is embedded in full
(:func:`semnmf.text.encoders.embed_documents`). k-means of the document vectors is the
start (:func:`document_start`), and their kNN graph is the document graph of
:class:`~semnmf.SemanticGNMF` (weight chosen per corpus by :func:`document_graph_lam`)
and, optionally, the similarity graph of :class:`~semnmf.refine.GTNMF`. Below
:data:`FEW_TOKENS_PER_CLUSTER` corpus tokens per cluster the run keeps the document
vectors' k-means partition and describes it by Semantic-NMF's word factors
(:func:`document_partition`, :func:`semnmf.models.semantic.partition_topics`).
Measurements behind these choices: ``benchmarks/results/semantics.md``,
``benchmarks/results/design_notes.md``.

:class:`PretrainedSemanticNMF` puts it together behind ``semantics=``, as ``semnmf cluster
--semantics`` does (the sentence models need the ``[embeddings]`` extra).
"""

import numbers
import os
from dataclasses import dataclass, field

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils._param_validation import Interval, StrOptions

from .._utils.devices import check_device
from .._utils.progress import timed
from .._utils.renamed import renamed
from .._utils.validation import check_positive_int
from .._utils.words import LIBRARY
from ..graphs.semantic import semantic_document_graph, word_graph
from ..models._defaults import DEFAULT_MAX_ITER, DEFAULT_TOL
from ..models.nmf import DeviceOptions
from ..text.pretrained import (EMBED, SEMANTICS, _check_source, check_available,
                                    combined_context, document_vectors, expand_documents,
                                    word_vectors)

__all__ = ["PretrainedSemanticNMF", "SemanticInputs", "SEMANTICS", "EMBED", "WORD_MODES",
           "pretrained_inputs", "semantic_model", "fit_semantic_model", "document_start",
           "document_graph_lam", "document_partition", "check_partition", "choose_partition",
           "partition_strengths", "PARTITIONS"]


@renamed("n_clusters", "n_components")
def document_start(E, n_components, random_state=None):
    """Labels of k-means on the document vectors (unit rows, 10 restarts): the start of
    the document-semantics pipeline, so that NMF begins where sentence-embedding k-means
    ends and the document graph keeps it close while W learns word topics."""
    from sklearn.cluster import KMeans

    n_components = check_positive_int(n_components, "n_components")
    E = np.asarray(E, dtype=np.float64)
    keep = np.linalg.norm(E, axis=1) > 0
    labels = np.full(E.shape[0], -1, dtype=np.int64)
    if keep.sum() < n_components:
        raise ValueError(f"only {int(keep.sum())} document(s) have a vector, fewer than the "
                         f"{n_components} clusters asked for.")
    unit = E[keep] / np.linalg.norm(E[keep], axis=1, keepdims=True)  # cosine geometry
    km = KMeans(n_components, n_init=10, random_state=random_state).fit(unit)
    labels[keep] = km.labels_
    return labels


@dataclass
class SemanticInputs:
    """What :func:`pretrained_inputs` built: X (expanded by the word graph when words are
    embedded), M (the corpus PPMI, beside the word graph with ``word_mode="context"``), the
    document graph A, the document vectors E and the k-means ``start`` of E (when documents
    are embedded), the ``word_graph`` and the number of terms with a vector
    (``terms_embedded``), and the seconds per stage (``timings``)."""

    X: object
    M: object
    A: object = None
    E: object = None
    start: object = None
    word_graph: object = None
    terms_embedded: int = None
    timings: dict = field(default_factory=dict)


WORD_MODES = ("expand", "context")

#: Terms a sentence model embeds per document of the corpus, those in the most documents
#: first: at most about a tenth of the word pieces of the documents' first chunks (a term
#: is about four pieces with its markers), so that a large vocabulary of rare terms does not
#: outweigh the documents' encoding (``benchmarks/results/term_budget.md``).
WORD_TERMS_PER_DOCUMENT = 6

#: Relative weight of the document graph in the pipeline (Semantic-GNMF's ``graph_lam``)
#: when each cluster has many documents (at least :data:`FEW_DOCUMENTS_PER_CLUSTER`).
#: Chosen on BBC and CLASSIC4 with NG5 and NG20 held out:
#: ``benchmarks/results/semantics.md``.
DOCUMENT_GRAPH_LAM = 1.0
#: The weight when the clusters have few documents each (n / k below
#: :data:`FEW_DOCUMENTS_PER_CLUSTER`), so that the document vectors' graph leads
#: (``benchmarks/results/minilm.md``).
DOCUMENT_GRAPH_LAM_FEW = 128.0
FEW_DOCUMENTS_PER_CLUSTER = 150


def document_graph_lam(n_documents, n_components):
    """The pipeline's document-graph weight for ``n_documents`` in ``n_components``
    clusters, and why: :data:`DOCUMENT_GRAPH_LAM_FEW` below
    :data:`FEW_DOCUMENTS_PER_CLUSTER` documents per cluster on average (n / k), else
    :data:`DOCUMENT_GRAPH_LAM`. The threshold lies in the gap between the shared corpora
    that needed the heavy graph and those that did not
    (``benchmarks/results/minilm.md``)."""
    per_cluster = n_documents / max(int(n_components), 1)
    if per_cluster < FEW_DOCUMENTS_PER_CLUSTER:
        return DOCUMENT_GRAPH_LAM_FEW, (
            f"{per_cluster:.0f} documents per cluster (below {FEW_DOCUMENTS_PER_CLUSTER}): the "
            "document vectors' graph leads")
    return DOCUMENT_GRAPH_LAM, (
        f"{per_cluster:.0f} documents per cluster (at least {FEW_DOCUMENTS_PER_CLUSTER})")


#: Below this many corpus tokens per cluster (the in-vocabulary word occurrences of the
#: corpus over k) the run keeps the document vectors' k-means partition (its start) instead
#: of the Semantic-GNMF fit's: too few tokens to estimate the word topics
#: (``benchmarks/results/minilm.md``).
FEW_TOKENS_PER_CLUSTER = 1750
#: What the run's partition is: "fit" (Semantic-GNMF's), "documents" (k-means of the
#: document vectors, its start), or "auto" (:func:`document_partition`).
PARTITIONS = ("auto", "fit", "documents")


@renamed("n_clusters", "n_components")
def document_partition(n_tokens, n_components, partition="auto"):
    """Which partition a run with embedded documents returns, and why: ``("documents",
    why)`` when ``partition`` says so or, for "auto", below :data:`FEW_TOKENS_PER_CLUSTER`
    corpus tokens per cluster (``n_tokens / n_components``); else ``("fit", why)``."""
    if partition not in PARTITIONS:
        raise ValueError(f"partition must be one of {', '.join(PARTITIONS)}, got "
                         f"{partition!r}.")
    if partition != "auto":
        return partition, "asked for"
    per_cluster = n_tokens / max(int(n_components), 1)
    if per_cluster < FEW_TOKENS_PER_CLUSTER:
        return "documents", (
            f"{per_cluster:.0f} corpus tokens per cluster (below {FEW_TOKENS_PER_CLUSTER}): "
            "too few for word topics to move documents, so the clusters are the document "
            "vectors' k-means partition, described by Semantic-NMF's word factors for it")
    return "fit", (f"{per_cluster:.0f} corpus tokens per cluster (at least "
                   f"{FEW_TOKENS_PER_CLUSTER})")


def check_partition(partition, semantics, embed, refine=None, words=LIBRARY):
    """Whether a run of ``semantics`` / ``embed`` embeds its documents with a sentence
    model (so that ``partition`` has a choice to make); refuses a ``partition`` that
    cannot apply, naming the settings in ``words`` (:class:`~semnmf._utils.words.Words`).
    ``refine``: how the run names its GTNMF refinement (``"refine='gt'"``,
    ``"refine=True"``), None without one."""
    if partition not in PARTITIONS:
        raise ValueError(f"{words('partition')} must be one of {', '.join(PARTITIONS)}, got "
                         f"{partition!r}.")
    embedded = embed != "words" and _check_source(semantics) not in ("corpus", "glove")
    if partition != "auto" and not embedded:
        raise ValueError(f"{words('partition')} chooses between the fit and the k-means "
                         "partition of embedded documents; use it with a sentence model "
                         f"({words.set('semantics', 'minilm')}) and "
                         f"{words.set('embed', 'documents')} (or both).")
    if partition == "documents" and refine:
        raise ValueError(f"{refine} plays the games from the fit's memberships; "
                         f"{words.set('partition', 'documents')} makes no fit: drop one of "
                         "them.")
    return embedded


@renamed("n_clusters", "n_components")
def choose_partition(corpus, n_components, partition="auto", *, semantics, embed,
                     refine=None):
    """(partition, why) of a run with pretrained semantics, the one rule of the estimator
    and of :func:`semnmf.cluster`: (None, None) without documents embedded by a sentence
    model; "fit" with a GTNMF refinement (``refine``, as :func:`check_partition`), whose
    games start from the fit's memberships; else :func:`document_partition` of the
    corpus's tokens."""
    if not check_partition(partition, semantics, embed, refine):
        return None, None
    if refine and partition == "auto":
        return "fit", f"{refine} plays the games from the fit's memberships"
    return document_partition(float(corpus.counts().sum()), n_components, partition)


@renamed("n_clusters", "n_components")
def partition_strengths(E, labels, n_components):
    """Cosine of each document vector to its cluster's mean direction (the strength of a
    document-partition run, as spherical k-means' strengths are); 0 for label -1."""
    from .._utils.labels import cluster_means, strengths_from_factors

    E = np.asarray(E, dtype=np.float64)
    norms = np.linalg.norm(E, axis=1, keepdims=True)
    unit = np.divide(E, norms, out=np.zeros_like(E), where=norms > 0)
    centers = cluster_means(unit, labels, n_components)
    lengths = np.linalg.norm(centers, axis=1, keepdims=True)
    centers = np.divide(centers, lengths, out=np.zeros_like(centers), where=lengths > 0)
    return strengths_from_factors(unit @ centers.T, labels, cosine=True)


@renamed("n_clusters", "n_components")
def pretrained_inputs(corpus, X, M, n_components, semantics="minilm", embed="both", *,
                      word_mode="expand", expand=1.0, word_weight=0.3, word_neighbors=10,
                      max_word_terms="auto", n_neighbors=10, document_graph=True,
                      pooling="mean", random_state=None, cache_dir=None, device="cpu",
                      verbose=0):
    """Add pretrained word and document semantics to the inputs of Semantic-NMF.

    Parameters
    ----------
    corpus : semnmf.Corpus
    X, M : the corpus's document-term and word-context matrices
    n_components : int
    semantics : str
        "corpus" (nothing added), "glove", "minilm" or a sentence-transformers model.
    embed : {"words", "documents", "both"}
        "glove" always embeds words only (its document vectors, for "documents"/"both",
        are the TF-IDF-weighted means of its word vectors).
    word_mode : {"expand", "context"}
        How the word graph enters: expand the documents (:func:`expand_documents`), or
        join the PPMI in M (:func:`combined_context`, the paper's §4.1 route).
    expand, word_weight : float
        Strength of the expansion; weight of the word graph in M.
    word_neighbors, n_neighbors : int
        Neighbours per term in the word graph; per document in the document graph.
    max_word_terms : int, "auto" or None, default="auto"
        A sentence model embeds at most this many terms, those in the most documents; the
        others have no edge in the word graph (:func:`~semnmf.text.pretrained.word_vectors`).
        "auto": :data:`WORD_TERMS_PER_DOCUMENT` per document, so that the terms cost a
        fraction of the documents' encoding; None: every term.
    document_graph : bool, default=True
        Build the document graph A (not needed when the run keeps the start:
        :func:`document_partition`).
    pooling : {"mean", "first"}, default="mean"
        How a sentence model reads a document longer than its window: every chunk, their
        vectors averaged, or the first chunk only
        (:func:`semnmf.text.encoders.embed_documents`).
    device : {"cpu", "cuda", "cuda:N", "auto"}, default="cpu"
        Where the sentence model encodes (:func:`semnmf._utils.devices.resolve_device`)
        and where the kNN searches of the word and document graphs run
        (:func:`semnmf.graphs.knn.knn_graph`).

    Returns
    -------
    SemanticInputs
    """
    source = _check_source(semantics)
    if embed not in EMBED:
        raise ValueError(f"embed must be one of {EMBED}, got {embed!r}.")
    check_device(device)  # a GPU asked for and missing: said first
    if word_mode not in WORD_MODES:
        raise ValueError(f"word_mode must be one of {WORD_MODES}, got {word_mode!r}.")
    if max_word_terms is not None and max_word_terms != "auto":
        check_positive_int(max_word_terms, 'max_word_terms (or "auto", or None)')
    inputs = SemanticInputs(X=X, M=M)
    if source == "corpus":
        return inputs
    words = embed in ("words", "both")
    documents = embed in ("documents", "both")
    if documents and source != "glove" and corpus.texts is None:
        raise ValueError(
            f"corpus {corpus.name!r} has no raw text, so its documents cannot be embedded "
            f"with {source!r}; use embed='words'.")
    check_available(source)
    V = found = None
    if words or source == "glove":
        with timed(inputs.timings, "words"):
            if max_word_terms == "auto":
                max_word_terms = WORD_TERMS_PER_DOCUMENT * corpus.n_documents
            V, found = word_vectors(corpus, source, max_terms=max_word_terms,
                                    cache_dir=cache_dir, device=device, verbose=verbose)
            if words:
                S = word_graph(V, found, word_neighbors, device=device)
                inputs.word_graph, inputs.terms_embedded = S, int(found.sum())
                if word_mode == "expand":
                    inputs.X = expand_documents(X, S, expand)
                else:
                    inputs.M = combined_context(M, S, word_weight)
    if documents:
        with timed(inputs.timings, "documents"):
            if source == "glove":
                E = document_vectors(corpus, X=X, V=V)
            else:
                E = document_vectors(corpus, source, pooling=pooling, cache_dir=cache_dir,
                                     device=device, verbose=verbose)
            inputs.E = E
            inputs.A = (semantic_document_graph(E, n_neighbors, device=device)
                        if document_graph else None)
            inputs.start = document_start(E, n_components, random_state)
    return inputs


# -- the estimator --------------------------------------------------------------------------
class PretrainedSemanticNMF(ClusterMixin, BaseEstimator):
    """Semantic-NMF with pretrained word and document semantics, behind one switch: the
    inputs of :func:`pretrained_inputs` (module docstring) fitted by Semantic-NMF, or by
    Semantic-GNMF when documents are embedded; the word topics are the rows of
    ``components_`` (W), on the corpus vocabulary.

    Parameters
    ----------
    n_components : int, default=8
    semantics : str, default="minilm"
        ``"corpus"`` (plain Semantic-NMF with the window PPMI), ``"glove"`` (GloVe 6B word
        vectors, offline), ``"minilm"`` (all-MiniLM-L6-v2, offline) or any
        sentence-transformers model name or folder.
    embed : {"words", "documents", "both"}, default="both"
    lam : float, default=10.0
        Relative weight of the word-context term (as :class:`~semnmf.SemanticNMF`).
    graph_lam : float or "auto", default="auto"
        Relative weight of the document-graph term (as :class:`~semnmf.SemanticGNMF`).
        "auto": :func:`document_graph_lam` (1, or 128 below 150 documents per cluster on
        average, n / k).
    word_mode : {"expand", "context"}, default="expand"
    expand : float, default=1.0
        Strength of the document expansion by the word graph.
    word_weight : float, default=0.3
        Weight of the word graph beside the PPMI in M (``word_mode="context"``).
    word_neighbors : int, default=10
        Neighbours of each term in the word graph (the expansion multiplies the non-zeros
        of X by about this).
    n_neighbors : int, default=10
    partition : {"auto", "fit", "documents"}, default="auto"
        The partition returned when documents are embedded: the Semantic-GNMF fit's
        ("fit"), or the document vectors' k-means partition ("documents": no fit; the
        topics from :func:`semnmf.models.semantic.partition_topics`). "auto":
        :func:`document_partition`, "fit" with ``refine=True``.
    refine : bool, default=False
        Refine the memberships by GTNMF's replicator dynamics on the document vectors.
    context, window
        The corpus word context (as :meth:`semnmf.Corpus.word_context`; document context
        for a corpus without raw text).
    n_init, max_iter, tol, random_state
        As in :class:`~semnmf.SemanticNMF` (the start is spherical k-means of X unless
        documents are embedded).
    cache_dir : str, None or False
        Embedding cache (default ``~/.cache/semnmf``; False: none).
    device : {"cpu", "cuda", "cuda:N", "auto"}, default="cpu"
        Where the sentence model encodes (``benchmarks/results/gpu_semantics.md``) and,
        with ``embed="words"``, where Semantic-NMF fits; Semantic-GNMF fits on the CPU.
    verbose : int, default=0

    Attributes
    ----------
    labels_ : ndarray of shape (n_documents,)
    components_ : ndarray of shape (n_components, n_terms)
        Word topics W.
    objective_ : float or None
        The fitted model's ``objective_`` (lower is better); None without a fit.
    model_ : SemanticNMF, SemanticGNMF or None
        The fitted model; None when the partition is the document vectors'.
    partition_ : str
        "fit" or "documents": where ``labels_`` come from.
    partition_reason_ : str or None
        Why (None without embedded documents).
    inputs_ : SemanticInputs
        The matrices fitted, the document vectors and the word graph.
    timings_ : dict
        Seconds per stage.
    """

    _parameter_constraints: dict = {
        "n_components": [Interval(numbers.Integral, 1, None, closed="left")],
        "semantics": [str],
        "embed": [StrOptions({"words", "documents", "both"})],
        "lam": [Interval(numbers.Real, 0, None, closed="left")],
        "graph_lam": [Interval(numbers.Real, 0, None, closed="left"), StrOptions({"auto"})],
        "word_mode": [StrOptions({"expand", "context"})],
        "expand": [Interval(numbers.Real, 0, None, closed="left")],
        "word_weight": [Interval(numbers.Real, 0, None, closed="left")],
        "word_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
        "partition": [StrOptions(set(PARTITIONS))],
        "refine": ["boolean"],
        "context": [str],
        "window": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_init": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_iter": [Interval(numbers.Integral, 0, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "random_state": ["random_state"],
        "cache_dir": [str, os.PathLike, bool, None],
        "device": [DeviceOptions()],
        "verbose": ["verbose"],
    }

    def __init__(self, n_components=8, *, semantics="minilm", embed="both", lam=10.0,
                 graph_lam="auto", word_mode="expand", expand=1.0, word_weight=0.3,
                 word_neighbors=10, n_neighbors=10, partition="auto", refine=False,
                 context="window",
                 window=10, n_init=1, max_iter=DEFAULT_MAX_ITER, tol=DEFAULT_TOL,
                 random_state=None, cache_dir=None, device="cpu", verbose=0):
        self.n_components = n_components
        self.semantics = semantics
        self.embed = embed
        self.lam = lam
        self.graph_lam = graph_lam
        self.word_mode = word_mode
        self.expand = expand
        self.word_weight = word_weight
        self.word_neighbors = word_neighbors
        self.n_neighbors = n_neighbors
        self.partition = partition
        self.refine = refine
        self.context = context
        self.window = window
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.cache_dir = cache_dir
        self.device = device
        self.verbose = verbose

    def fit(self, corpus, y=None):
        """Build the inputs from ``corpus`` (a :class:`~semnmf.Corpus` or a list of texts)
        and fit."""
        from ..text.corpus import Corpus

        self._validate_params()
        if not isinstance(corpus, Corpus):
            if isinstance(corpus, str) or not hasattr(corpus, "__len__"):
                raise ValueError("fit takes a semnmf.Corpus or a list of document texts.")
            corpus = Corpus(list(corpus))
        if self.refine and (self.embed == "words" or _check_source(self.semantics) == "corpus"):
            raise ValueError("refine=True plays the games on the document vectors; use "
                             "embed='documents' or 'both' with a pretrained source.")
        check_device(self.device)  # a GPU asked for and missing: said first
        partition, why = choose_partition(  # its errors before any expensive work
            corpus, self.n_components, self.partition, semantics=self.semantics,
            embed=self.embed, refine="refine=True" if self.refine else None)
        partition = partition or "fit"
        timings = {}
        with timed(timings, "corpus"):
            X = corpus.tfidf()
            context = self.context if corpus.texts is not None else "document"
            M = corpus.word_context(context=context, window=self.window)
        inputs = pretrained_inputs(
            corpus, X, M, self.n_components, self.semantics,
            "documents" if partition == "documents" else self.embed,
            word_mode=self.word_mode, expand=self.expand, word_weight=self.word_weight,
            word_neighbors=self.word_neighbors, n_neighbors=self.n_neighbors,
            document_graph=partition != "documents",
            random_state=self.random_state, cache_dir=self.cache_dir, device=self.device,
            verbose=self.verbose)
        timings.update(inputs.timings)
        self.partition_, self.partition_reason_ = partition, why
        if partition == "documents":
            from ..models.semantic import partition_topics

            self.model_, self.objective_ = None, None
            # a document without a term keeps its vector's cluster (a fit gives it -1)
            self.labels_ = np.asarray(inputs.start)
            with timed(timings, "topics"):
                self.components_, _ = partition_topics(X, self.labels_, self.n_components,
                                                       inputs.M, verbose=self.verbose)
        else:
            with timed(timings, "fit"):
                model = semantic_model(self.n_components, inputs, lam=self.lam,
                                       graph_lam=self.graph_lam, n_init=self.n_init,
                                       max_iter=self.max_iter, tol=self.tol,
                                       random_state=self.random_state, device=self.device,
                                       verbose=self.verbose)
                Z = fit_semantic_model(model, inputs)
            labels = model.labels_
            if self.refine:
                from ..refine import GTNMF

                with timed(timings, "refine"):
                    labels = GTNMF(verbose=self.verbose).fit(inputs.E, memberships=Z).labels_
            self.model_ = model
            self.labels_ = labels
            self.components_ = model.components_
            self.objective_ = model.objective_
        self.inputs_ = inputs
        self.n_features_in_ = X.shape[1]
        self.timings_ = timings
        return self

def semantic_model(n_components, inputs, **params):
    """The estimator for ``inputs``: SemanticGNMF with a document graph (started from the
    document partition), SemanticNMF otherwise. ``params`` as theirs (``graph_lam`` is
    dropped without a graph; "auto" or absent: :func:`document_graph_lam`; ``device`` is
    SemanticNMF's: SemanticGNMF fits on the CPU)."""
    from ..models import SemanticGNMF, SemanticNMF
    from ..models.init import factors_from_labels

    device = params.pop("device", "cpu")
    graph_lam = params.pop("graph_lam", "auto")
    if graph_lam == "auto":
        graph_lam = document_graph_lam(inputs.X.shape[0], n_components)[0]
    if inputs.A is None:
        return SemanticNMF(n_components, device=device, **params)
    Z0, W0 = factors_from_labels(inputs.X, inputs.start, n_components, dtype=inputs.X.dtype)
    return SemanticGNMF(n_components, graph_lam=graph_lam, init=(Z0, W0), **params)


def fit_semantic_model(model, inputs):
    """``model.fit_transform`` on the inputs; returns the memberships Z."""
    if inputs.A is None:
        return model.fit_transform(inputs.X, M=inputs.M)
    return model.fit_transform(inputs.X, M=inputs.M, A=inputs.A)
