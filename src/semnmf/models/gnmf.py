"""Graph-regularized NMF (GNMF, Cai, He, Han & Huang, TPAMI 2011) and Semantic-GNMF.

GNMF adds to NMF a document-graph term that pulls the factors of neighbouring documents
together (Cai et al. 2011, §3: ``O = ‖X − UVᵀ‖² + λ Tr(Vᵀ L V)``, X terms x documents;
here X is documents x terms, Z = V, W = U)::

    F(Z, W) = ½‖X − Z Wᵀ‖²_F + (μ/2) Tr(Ẑᵀ L Ẑ),    L = D − A,  D = diag(A 1)

over a sparse symmetric k-nearest-neighbour graph A of the documents built by
:func:`semnmf.graphs.knn.knn_graph`; ``Tr(Ẑᵀ L Ẑ) = ½ Σ_ij a_ij ‖ẑ_i − ẑ_j‖²``.

Semantic-GNMF (:class:`SemanticGNMF`), proposed in the Neurocomputing paper's conclusion
(§7), adds Semantic-NMF's word-context term (eq. 5)::

    F(Z, W, Q) = ½‖X − Z Wᵀ‖² + (λ/2)‖M − W Qᵀ‖² + (μ/2) Tr(Ẑᵀ L Ẑ)

so one sweep is GNMF's Z update followed by Semantic-NMF's updates (7b) and (7c).

The scale of Z (a deviation from Cai et al.). ``Z Wᵀ`` is unchanged under
``Z → Z C⁻¹, W → W C`` while ``Tr(Zᵀ L Z)`` shrinks as ``C⁻²``, so Cai et al.'s
unconstrained objective has no minimizer and their iterates drift (they normalize W's
columns only at the start and the end). Here the graph acts on
``Ẑ = Z diag(‖w_1‖, ..., ‖w_k‖)``, which is their unit-column constrained problem written
without a constraint: ``Tr(Ẑᵀ L Ẑ) = Σ_k ‖w_k‖² z_kᵀ L z_k`` is invariant to the scaling,
and the updates are monotone and reach the KKT conditions (derivation under
:class:`GraphProblem`; ``tests/test_gnmf.py``). With μ = 0 everything is exactly (bit for
bit) NMF / Semantic-NMF.
"""

import numbers
import warnings

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from .._utils.validation import empty_rows
from ..graphs.documents import check_affinity, document_graph  # noqa: F401
from ..graphs.knn import METRICS
from ._defaults import DEFAULT_GRAPH_LAM, DEFAULT_LAM, DEFAULT_MAX_ITER, DEFAULT_TOL
from ._solvers.frobenius import FrobeniusProblem
from ._solvers.graph import GraphProblem
from .nmf import _BaseNMF
from .context_term import check_effective, check_lam
from .semantic import SemanticNMF

__all__ = ["GNMF", "SemanticGNMF", "GraphProblem", "effective_graph_lambda"]


GRAPH_WEIGHTS = ("binary", "heat", "cosine")


def effective_graph_lambda(lam, A, scale="relative"):
    """The weight μ of the graph term for a user-facing ``lam``.

    With ``scale="relative"`` the graph term is measured per unit of neighbour weight:
    ``μ = lam / d̄`` with ``d̄ = Σ_ij a_ij / n`` the mean (weighted) degree, so that::

        F = ½‖X − ZWᵀ‖² + (lam/2) · ½ Σ_ij (a_ij / d̄) ‖ẑ_i − ẑ_j‖²

    Both terms are then in the units of ‖X‖², whatever the number of documents or
    neighbours. ``scale="absolute"`` uses ``lam`` as Cai et al.'s λ directly.
    """
    if scale == "absolute":
        return float(lam)
    total = float(A.sum())
    if total <= 0:
        return 0.0
    return check_effective(float(lam) * A.shape[0] / total, lam, "graph_lam")


# -- the estimators --------------------------------------------------------------------------
class _GraphRegularized:
    """Shared part of GNMF and Semantic-GNMF: the graph's parameters, its construction at
    fit time and the problem class. Subclasses call ``_prepare_graph`` from
    ``_prepare_context``."""

    # The graph couples every pair of neighbouring documents: neither row blocks (the
    # Dask engine) nor mini-batches (partial_fit) hold it, and SemanticNMF's would
    # silently drop it.
    _supports_blocks = False

    def _prepare_graph(self, X, A):
        """Build (or check) the graph, set ``affinity_matrix_`` and ``graph_lambda_``."""
        graph_lam = self.graph_lam
        check_lam(graph_lam, self.lam_scale, "graph_lam")
        if A is None:
            if X.shape[0] < 2:
                raise ValueError("a document graph needs at least 2 documents; got 1 sample.")
            # a corpus of n_neighbors documents or fewer: every other document
            A = document_graph(X, min(self.n_neighbors, X.shape[0] - 1), weight=self.weight,
                               metric=self.metric, bandwidth=self.bandwidth)
        else:
            A = check_affinity(A, X.shape[0])
        A = A.astype(X.dtype)
        # documents with terms but no edge (documents without terms get their own warning)
        isolated = (np.diff(A.indptr) == 0) & ~empty_rows(X)
        if isolated.any() and graph_lam > 0:
            warnings.warn(
                f"{int(isolated.sum())} document(s) have no neighbour in the graph (no term "
                "in common with any other document, or an empty row of A); the graph term "
                "does not constrain them.", UserWarning, stacklevel=2)
        self.affinity_matrix_ = A
        self.graph_lambda_ = effective_graph_lambda(graph_lam, A, self.lam_scale)

    def _make_problem(self, X, Z, W, M=None, Q=None, lam=0.0, update_W=True, Xt=None, Mt=None):
        if not update_W:
            # transform(): new documents have no graph; W is fixed and Z solves the data
            # term alone, as for NMF (the graph of the training documents does not apply).
            return FrobeniusProblem(X, Z, W, M=M, Q=Q, lam=lam, update_W=False, Xt=Xt, Mt=Mt)
        return GraphProblem(X, Z, W, self.affinity_matrix_, self.graph_lambda_, M=M, Q=Q,
                            lam=lam, update_W=True, Xt=Xt, Mt=Mt)


class GNMF(_GraphRegularized, _BaseNMF):
    """Graph-regularized NMF (Cai, He, Han & Huang, TPAMI 2011) for document clustering.

    Minimizes (module docstring; Cai et al. §3 with Frobenius loss)::

        F(Z, W) = ½‖X − Z Wᵀ‖²_F + (μ/2) Tr(Ẑᵀ (D − A) Ẑ),   Z, W ≥ 0

    A: a sparse symmetric k-nearest-neighbour graph of the documents, ``Ẑ = Z
    diag(‖w_k‖)``; by multiplicative updates that never increase F
    (:class:`GraphProblem`). With ``graph_lam=0`` it is exactly :class:`~semnmf.NMF`.

    Parameters
    ----------
    n_components : int, default=8
        Number of clusters k.
    graph_lam : float, default=3.0
        Weight of the document-graph term (``lam`` in 0.1; ``lam`` is the
        word-context weight of the semantic estimators). With ``lam_scale="relative"``
        (default) the paper's λ is ``μ = graph_lam / d̄``, d̄ the mean degree of the graph
        (:func:`effective_graph_lambda`), the same weight on every corpus and graph (the
        default: ``benchmarks/results/design_notes.md``).
    lam_scale : {"relative", "absolute"}, default="relative"
        "absolute" uses ``graph_lam`` as Cai et al.'s λ directly.
    n_neighbors : int, default=5
        Neighbours per document in the graph (Cai et al. use p = 5); an edge is kept when
        either document is among the other's neighbours.
    weight : {"binary", "heat", "cosine"}, default="binary"
        Edge weights, Cai et al.'s three schemes: 0/1, the heat kernel ``exp(−d²/t)``
        (t = ``bandwidth``, d the distance of ``metric``), or the cosine similarity.
    metric : {"cosine", "euclidean"}, default="cosine"
        Distance of the neighbour search (see :func:`~semnmf.refine.knn_graph`).
    bandwidth : float or None, default=None
        t of the heat kernel; None: the mean squared distance over the kNN pairs.
    init, n_init, max_iter, tol, random_state, verbose
        As in :class:`~semnmf.NMF`.

    Attributes
    ----------
    labels_, components_, objective_history_, objective_, n_iter_, reconstruction_err_
        As in NMF.
    affinity_matrix_ : scipy.sparse.csr_matrix of shape (n_documents, n_documents)
        The document graph A used.
    graph_lambda_ : float
        The effective μ (the paper's λ) of the graph term.

    Notes
    -----
    ``fit(X, A=A)`` takes a document graph of one's own (symmetric, non-negative,
    (n_documents, n_documents), ideally sparse) instead of the kNN graph. ``transform``
    solves Z for new documents with W fixed and no graph, as NMF's.

    References
    ----------
    D. Cai, X. He, J. Han, T. S. Huang. Graph regularized nonnegative matrix factorization
    for data representation. IEEE TPAMI 33(8):1548-1560, 2011.
    """

    _parameter_constraints: dict = {
        **_BaseNMF._parameter_constraints,
        "graph_lam": [Interval(numbers.Real, 0, None, closed="left")],
        "lam_scale": [StrOptions({"relative", "absolute"})],
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
        "weight": [StrOptions(set(GRAPH_WEIGHTS))],
        "metric": [StrOptions(set(METRICS))],
        "bandwidth": [Interval(numbers.Real, 0, None, closed="neither"), None],
    }

    def __init__(self, n_components=8, *, graph_lam=DEFAULT_GRAPH_LAM, lam_scale="relative",
                 n_neighbors=5, weight="binary", metric="cosine", bandwidth=None,
                 init="skmeans", n_init=1, max_iter=DEFAULT_MAX_ITER, tol=DEFAULT_TOL,
                 random_state=None, verbose=0):
        super().__init__(n_components, init=init, n_init=n_init, max_iter=max_iter, tol=tol,
                         random_state=random_state, verbose=verbose)
        self.graph_lam = graph_lam
        self.lam_scale = lam_scale
        self.n_neighbors = n_neighbors
        self.weight = weight
        self.metric = metric
        self.bandwidth = bandwidth

    _fit_inputs = ("A",)

    def fit(self, X, y=None, *, A=None):
        """Fit the model to X (and the document graph A, n_documents x n_documents; None
        builds the kNN graph of X) and set ``labels_``."""
        self._fit(X, y, A=A)
        return self

    def fit_transform(self, X, y=None, *, A=None):
        """Fit (as :meth:`fit`) and return Z (n_documents, n_components), unit-norm columns."""
        return self._fit(X, y, A=A).document_factors()

    def _prepare_context(self, X, A=None):
        self._prepare_graph(X, A)
        return None, 0.0


class SemanticGNMF(_GraphRegularized, SemanticNMF):
    """Semantic-GNMF: Semantic-NMF with GNMF's document graph (Neurocomputing paper, §7).

    Minimizes (module docstring)::

        F(Z, W, Q) = ½‖X − Z Wᵀ‖² + (λ/2)‖M − W Qᵀ‖² + (μ/2) Tr(Ẑᵀ (D − A) Ẑ)

    One sweep is GNMF's Z update followed by (7b), with the graph's ridge term on W, and
    (7c); F never increases (:class:`GraphProblem`). With ``graph_lam=0`` it is exactly
    :class:`~semnmf.SemanticNMF`; with ``lam=0`` it is :class:`GNMF`.

    Parameters
    ----------
    n_components : int, default=8
    lam : float, default=10.0
        Weight of the word-context term, as in :class:`~semnmf.SemanticNMF`.
    graph_lam : float, default=3.0
        Weight of the document-graph term, as GNMF's ``graph_lam``; the same default
        suits it beside the word-context term (``benchmarks/results/design_notes.md``).
    lam_scale : {"relative", "absolute"}, default="relative"
        Applies to both weights: "relative" makes each term relative
        (:func:`~semnmf.models.semantic.effective_lambda`, :func:`effective_graph_lambda`),
        "absolute" passes both as the papers' raw λ.
    n_neighbors, weight, metric, bandwidth
        The document graph, as in :class:`GNMF`.
    init, n_init, max_iter, tol, random_state, verbose
        As in :class:`~semnmf.NMF`.

    Attributes
    ----------
    labels_, components_, context_components_, objective_history_, objective_, n_iter_,
    lambda_, reconstruction_err_, context_err_
        As in SemanticNMF.
    affinity_matrix_, graph_lambda_
        As in GNMF.

    Notes
    -----
    ``fit(X, M=M, A=A)``: M is the word-context matrix (built from X when omitted, as in
    SemanticNMF), A a document graph of one's own (the kNN graph of X when omitted).
    """

    _parameter_constraints: dict = {
        **GNMF._parameter_constraints,
        "lam": [Interval(numbers.Real, 0, None, closed="left")],
    }

    def __init__(self, n_components=8, *, lam=DEFAULT_LAM, graph_lam=DEFAULT_GRAPH_LAM,
                 lam_scale="relative", n_neighbors=5, weight="binary", metric="cosine",
                 bandwidth=None, init="skmeans", n_init=1, max_iter=DEFAULT_MAX_ITER,
                 tol=DEFAULT_TOL, random_state=None, verbose=0):
        super().__init__(n_components, lam=lam, lam_scale=lam_scale, init=init, n_init=n_init,
                         max_iter=max_iter, tol=tol, random_state=random_state,
                         verbose=verbose)
        self.graph_lam = graph_lam
        self.n_neighbors = n_neighbors
        self.weight = weight
        self.metric = metric
        self.bandwidth = bandwidth

    _fit_inputs = ("M", "A")

    def fit(self, X, y=None, *, M=None, A=None):
        """Fit the model to X, the word-context matrix M and the document graph A (each
        built from X when None) and set ``labels_``."""
        self._fit(X, y, M=M, A=A)
        return self

    def fit_transform(self, X, y=None, *, M=None, A=None):
        """Fit (as :meth:`fit`) and return Z (n_documents, n_components), unit-norm columns."""
        return self._fit(X, y, M=M, A=A).document_factors()

    def _prepare_context(self, X, M=None, A=None):
        M, lam = super()._prepare_context(X, M)
        self._prepare_graph(X, A)
        return M, lam
