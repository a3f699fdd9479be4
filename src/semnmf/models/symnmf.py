"""SymNMF (Kuang, Yun & Park 2015) and NMF-S: clustering by NMF of a similarity graph.

Both are baselines of the game-theoretic refinement paper (GT, Tripodi, Vascon & Pelillo
2016, §V): instead of the document-term matrix they factorize the sparse kNN similarity
graph A of the documents built as GT §V-B prescribes (:mod:`semnmf.graphs.knn`: cosine,
``⌊log₂ n⌋ + 1`` neighbours, symmetrized, normalized-cut scaled), and take each document's
cluster as the argmax of its row of the factor.

- :class:`SymNMF` solves ``min_{H ≥ 0} ‖A − H Hᵀ‖²_F`` by Kuang et al.'s ANLS penalty
  method, the code GT ran (:func:`symnmf_anls`).
- :class:`NMFS` ("NMF-S", GT §V: "same as NMF but with the similarity matrix as input
  instead of the features") is :class:`~semnmf.NMF` of A, ``A ≈ Z Wᵀ``.
"""

import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import validate_data

from .._utils.validation import check_matrix, check_n_components, empty_rows
from ..graphs.documents import check_affinity, similarity_graph
from ..graphs.knn import METRICS, WEIGHTS, normalized_cut_scaling
from ._defaults import DEFAULT_MAX_ITER, DEFAULT_TOL
from ._solvers.mu import reraise, squared_norm
from ._solvers.symnmf import nnls_rows, symnmf_anls  # noqa: F401 (re-exported)
from .init import initialize, resolve_start
from .nmf import _INIT_CONSTRAINT, NMF

__all__ = ["SymNMF", "NMFS", "symnmf_anls", "nnls_rows"]

SYMNMF_INITS = ("random", "skmeans")

# The similarity graph's parameters, shared by SymNMF and NMFS.
_GRAPH_CONSTRAINTS = {
    "n_components": [Interval(numbers.Integral, 1, None, closed="left")],
    "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left"), None],
    "metric": [StrOptions(set(METRICS))],
    "weight": [StrOptions(set(WEIGHTS))],
    "scaling": [StrOptions({"ncut"}), None],
}


def _fit_graph(est, X, A):
    """Validate X (and A), build or check the graph; sets n_features_in_, affinity_matrix_,
    n_neighbors_. Returns (X, A, isolated)."""
    X = validate_data(est, X, reset=True, accept_sparse=("csr", "csc"),
                      dtype=[np.float64, np.float32], ensure_min_samples=1)
    X = check_matrix(X, "X", nonnegative=False)
    n = X.shape[0]
    check_n_components(est.n_components, n)
    if A is None:
        if empty_rows(X).all():
            raise ValueError("every row of X is zero: there is nothing to cluster.")
        if n < 2:
            raise ValueError("a similarity graph needs at least 2 samples; got 1 sample.")
        A, q = similarity_graph(X, est.n_neighbors, metric=est.metric, weight=est.weight,
                                scaling=est.scaling)
    else:
        A, q = check_affinity(A, n), None
        if est.scaling == "ncut":
            A = normalized_cut_scaling(A)
    isolated = np.diff(A.indptr) == 0
    if isolated.all():
        raise ValueError("the similarity graph has no edge: no two documents are similar "
                         "(they share no term); there is nothing to cluster.")
    if isolated.any():
        warnings.warn(
            f"{int(isolated.sum())} document(s) have no neighbour in the similarity graph "
            "(no term in common with any other document, or an empty row of A); they get "
            "label -1.", UserWarning, stacklevel=2)
    est.affinity_matrix_ = A
    est.n_neighbors_ = q
    return X, A, isolated


def _labels(H, isolated):
    labels = np.argmax(H, axis=1).astype(np.int64)
    labels[isolated | ~np.any(H > 0, axis=1)] = -1
    return labels


class _GraphClustering(ClusterMixin, BaseEstimator):
    """What SymNMF and NMFS share around their ``fit(X, y=None, A=None)``."""

    def fit_predict(self, X, y=None, A=None):
        """Fit and return ``labels_``."""
        return self.fit(X, y, A=A).labels_

    def fit_transform(self, X, y=None, A=None):
        """Fit and return the document factors (``embedding_``)."""
        return self.fit(X, y, A=A).embedding_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class SymNMF(_GraphClustering):
    """Symmetric NMF of a document similarity graph (Kuang, Yun & Park 2015).

    ``min_{H ≥ 0} ‖A − H Hᵀ‖²_F`` with A the sparse, normalized-cut scaled kNN similarity
    graph of GT §V-B (module docstring), solved by the ANLS penalty method
    (:func:`symnmf_anls`); each document goes to the argmax of its row of H (GT §V).
    A and H Hᵀ are never dense.

    Parameters
    ----------
    n_components : int, default=8
        Number of clusters k.
    n_neighbors : int or None, default=None
        Neighbours per document in the graph; None: GT eq. 8, ``⌊log₂ n⌋ + 1``.
    metric : {"cosine", "euclidean"}, default="cosine"
    weight : {"auto", "cosine", "self-tuning", "heat", "binary"}, default="auto"
        Edge weights (:func:`~semnmf.refine.knn_graph`); "auto" is GT's choice: cosine for
        text, the self-tuning kernel (7th neighbour) with metric="euclidean".
    scaling : {"ncut", None}, default="ncut"
        Normalized-cut scaling ``D^{-1/2} S D^{-1/2}`` of the graph (GT §V-B), applied to
        a user's graph too.
    alpha : float or None, default=None
        Penalty α of the ANLS method; None: max(A)² (Kuang et al.'s code).
    init : {"random", "skmeans"} or array-like of shape (n_documents, n_components), \
            default="random"
        "random": Kuang et al.'s ``2 sqrt(mean(A)/k) · U(0, 1)`` entries (what GT ran);
        "skmeans": spherical k-means of X (one-hot labels + 0.2, scaled to fit A); an
        array: the starting H itself.
    n_init : int, default=1
        Restarts; the one with the lowest ‖A − HHᵀ‖ is kept.
    max_iter : int, default=500
    tol : float, default=1e-3
        Stop when the norm of the projected gradient falls under tol times its value after
        the first iteration (Kuang et al.'s rule).
    random_state : int, RandomState instance or None
    verbose : int, default=0

    Attributes
    ----------
    labels_ : ndarray of shape (n_documents,)
        argmax of each row of H; -1 for documents without any neighbour.
    embedding_ : ndarray of shape (n_documents, n_components)
        H, the document factors (what :meth:`fit_transform` returns); there is no
        ``components_`` and no ``transform`` (new documents are not in the graph).
    affinity_matrix_ : scipy.sparse.csr_matrix of shape (n_documents, n_documents)
        The (scaled) similarity graph A.
    n_neighbors_ : int or None
        Neighbours used to build A (None for a user's graph).
    alpha_ : float
    objective_history_ : ndarray
        The penalized objective f(W, H) of :func:`symnmf_anls` at the start and after each
        iteration (non-increasing).
    objective_ : float
    reconstruction_err_ : float
        ‖A − HHᵀ‖_F at the end.
    n_iter_ : int

    Notes
    -----
    ``fit(X, A=A)`` takes a similarity graph of one's own (symmetric, non-negative,
    (n, n), ideally sparse); X then serves only for its number of rows and the "skmeans"
    start.

    References
    ----------
    D. Kuang, S. Yun, H. Park. SymNMF: nonnegative low-rank approximation of a similarity
    matrix for graph clustering. J. Global Optimization 62(3):545-574, 2015 (not in
    ``papers/``). R. Tripodi, S. Vascon, M. Pelillo, GTNMF (``papers/gtnmf-...``), §V-B.
    """

    _parameter_constraints: dict = {
        **_GRAPH_CONSTRAINTS,
        "alpha": [Interval(numbers.Real, 0, None, closed="left"), None],
        "init": [StrOptions(set(SYMNMF_INITS)), *_INIT_CONSTRAINT[1:], "array-like"],
        "n_init": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_iter": [Interval(numbers.Integral, 0, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, n_components=8, *, n_neighbors=None, metric="cosine", weight="auto",
                 scaling="ncut", alpha=None, init="random", n_init=1, max_iter=500, tol=1e-3,
                 random_state=None, verbose=0):
        self.n_components = n_components
        self.n_neighbors = n_neighbors
        self.metric = metric
        self.weight = weight
        self.scaling = scaling
        self.alpha = alpha
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.verbose = verbose

    def _start(self, X, A, rng, start):
        n, k = A.shape[0], self.n_components
        strategy, H, _ = start
        if H is not None:
            return H.copy()
        if strategy == "skmeans":
            Z, _ = initialize(X, k, "skmeans", rng)
            Z = Z.astype(np.float64)
            ZtZ = Z.T @ Z
            c = float(np.sum(Z * (A @ Z))) / float(np.sum(ZtZ * ZtZ))
            return Z * np.sqrt(max(c, 0.0))
        mean = float(A.sum()) / (n * n)
        return 2.0 * np.sqrt(mean / k) * rng.random_sample((n, k))

    def fit(self, X, y=None, A=None):
        """Build (or take) the similarity graph and factorize it; sets ``labels_``."""
        self._validate_params()
        X, A, isolated = _fit_graph(self, X, A)
        start = resolve_start(self, (A.shape[0], X.shape[1]), n_factors=1)
        rng = check_random_state(self.random_state)
        sqA = squared_norm(A)
        best = None
        for run in range(self.n_init):
            H0 = self._start(X, A, rng, start)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                H, W, AH, history, n_iter, _, alpha = symnmf_anls(
                    A, H0, alpha=self.alpha, max_iter=self.max_iter, tol=self.tol,
                    verbose=self.verbose, description=f"SymNMF run {run + 1}/{self.n_init}")
            HtH = H.T @ H
            error = max(sqA - 2.0 * float(np.sum(H * AH)) + float(np.sum(HtH * HtH)), 0.0)
            if best is None or error < best[0]:
                best = (error, H, history, n_iter, alpha, caught)
        error, H, history, n_iter, alpha, caught = best
        reraise(caught)
        self.embedding_ = H
        self.labels_ = _labels(H, isolated)
        self.alpha_ = alpha
        self.objective_history_ = np.asarray(history)
        self.objective_ = history[-1]
        self.reconstruction_err_ = np.sqrt(error)
        self.n_iter_ = n_iter
        return self


class NMFS(_GraphClustering):
    """NMF-S: NMF of the document similarity graph, ``A ≈ Z Wᵀ`` (GT §V).

    The graph A of GT §V-B (module docstring) factorized by :class:`~semnmf.NMF`
    (Frobenius loss, multiplicative updates; GT ran Kim & Park's ANLS); each document goes
    to the argmax of its row of Z (unit-norm columns, as NMF).

    Parameters
    ----------
    n_components : int, default=8
    n_neighbors, metric, weight, scaling
        The graph, as in :class:`SymNMF`.
    init, n_init, max_iter, tol, random_state, verbose
        As in :class:`~semnmf.NMF` (init="skmeans" clusters the rows of A).

    Attributes
    ----------
    labels_ : ndarray of shape (n_documents,)
        -1 for documents without any neighbour.
    embedding_ : ndarray of shape (n_documents, n_components)
        Z (unit-length columns): the document factors, what :meth:`fit_transform`
        returns.
    affinity_components_ : ndarray of shape (n_components, n_documents)
        Wᵀ, the second factor of A ≈ Z Wᵀ, indexed by documents (``components_`` before
        0.2). NMFS has no ``transform``: new documents are not in the graph.
    affinity_matrix_, n_neighbors_
        As in SymNMF.
    objective_history_, objective_, reconstruction_err_, n_iter_
        Of the NMF of A.

    Notes
    -----
    ``fit(X, A=A)`` takes a similarity graph of one's own, as SymNMF.
    """

    _parameter_constraints: dict = {
        **_GRAPH_CONSTRAINTS,
        **{name: NMF._parameter_constraints[name]
           for name in ("init", "n_init", "max_iter", "tol", "random_state", "verbose")},
    }

    def __init__(self, n_components=8, *, n_neighbors=None, metric="cosine", weight="auto",
                 scaling="ncut", init="skmeans", n_init=1, max_iter=DEFAULT_MAX_ITER,
                 tol=DEFAULT_TOL, random_state=None, verbose=0):
        self.n_components = n_components
        self.n_neighbors = n_neighbors
        self.metric = metric
        self.weight = weight
        self.scaling = scaling
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.verbose = verbose

    def fit(self, X, y=None, A=None):
        """Build (or take) the similarity graph and factorize it with NMF."""
        self._validate_params()
        X, A, isolated = _fit_graph(self, X, A)
        nmf = NMF(self.n_components, init=self.init, n_init=self.n_init,
                  max_iter=self.max_iter, tol=self.tol, random_state=self.random_state,
                  verbose=self.verbose)
        with warnings.catch_warnings():
            # _fit_graph already warned about documents without neighbours
            warnings.filterwarnings("ignore", message=".*no term.*", category=UserWarning)
            Z = nmf.fit_transform(A)
        self.embedding_ = Z
        self.affinity_components_ = nmf.components_
        self.labels_ = _labels(Z, isolated)
        self.objective_history_ = nmf.objective_history_
        self.objective_ = nmf.objective_
        self.reconstruction_err_ = nmf.reconstruction_err_
        self.n_iter_ = nmf.n_iter_
        return self
