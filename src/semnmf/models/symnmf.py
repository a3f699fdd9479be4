"""SymNMF (Kuang, Yun & Park 2015) and NMF-S: clustering by NMF of a similarity graph.

Both are the baselines of the game-theoretic refinement paper (GT, Tripodi, Vascon &
Pelillo 2016, §V): instead of the document-term matrix they factorize a sparse
similarity matrix A of the documents, built as GT §V-B prescribes (after Kuang et al.):

1. cosine similarity of the L2-normalized rows for text (a self-tuning Gaussian kernel
   for dense features with ``metric="euclidean"``), ``s_ii = 0``;
2. the ``q = ⌊log₂ n⌋ + 1`` nearest neighbours of each document (GT eq. 8);
3. symmetrized: an edge when either document is among the other's neighbours;
4. normalized-cut scaling ``A = D^{-1/2} Ŝ D^{-1/2}``.

(:func:`semnmf.graphs.knn.knn_graph` and :func:`~semnmf.graphs.knn.normalized_cut_scaling`,
never an n x n dense matrix.) GT feeds this A to every method except plain NMF, and
takes each document's cluster as the argmax of its row of the factor.

- :class:`SymNMF` solves ``min_{H ≥ 0} ‖A − H Hᵀ‖²_F`` (Kuang et al.'s SymNMF) by their
  ANLS penalty method, the algorithm of the code GT ran (``symnmf_anls`` with its
  defaults, see :func:`symnmf_anls`).
- :class:`NMFS` ("NMF-S", GT §V: "same as NMF but with the similarity matrix as input
  instead of the features") is :class:`~semnmf.NMF` of A, ``A ≈ Z Wᵀ``.
"""

import warnings

import numba
import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.validation import validate_data

from .._utils.progress import progress
from .._utils.validation import (check_matrix, check_n_components, check_nonnegative_float,
                           check_positive_int)
from ..graphs.documents import check_affinity, similarity_graph
from ..graphs.knn import normalized_cut_scaling
from ._solvers.mu import RowBlocked, squared_norm
from .init import initialize
from .nmf import NMF
from ._solvers.rank2 import _projected_gradient_sq

__all__ = ["SymNMF", "NMFS", "symnmf_anls", "nnls_rows"]

SCALINGS = ("ncut", None)
SYMNMF_INITS = ("random", "skmeans", "custom")


def _check_graph_estimator_params(est):
    if est.n_neighbors is not None:
        check_positive_int(est.n_neighbors, "n_neighbors")
    if est.scaling not in SCALINGS:
        raise ValueError(f"scaling must be one of {SCALINGS}, got {est.scaling!r}.")


def _fit_graph(est, X, A):
    """Validate X (and A), build or check the graph; sets n_features_in_, affinity_matrix_,
    n_neighbors_. Returns (X, A, isolated)."""
    X = validate_data(est, X, reset=True, accept_sparse=("csr", "csc"),
                      dtype=[np.float64, np.float32], ensure_min_samples=1)
    X = check_matrix(X, "X", nonnegative=False)
    n = X.shape[0]
    check_n_components(est.n_components, n)
    _check_graph_estimator_params(est)
    if A is None:
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
            "label -1.", UserWarning)
    est.affinity_matrix_ = A
    est.n_neighbors_ = q
    return X, A, isolated


# -- non-negative least squares by block principal pivoting ---------------------------------------
@numba.njit(cache=True, nogil=True)
def _cholesky_solve(G, f, idx, m, L, z, out):
    """Solve G[idx, idx] out = f[idx] (first m entries of idx) by Cholesky, G SPD."""
    for a in range(m):
        for b in range(a + 1):
            s = G[idx[a], idx[b]]
            for c in range(b):
                s -= L[a, c] * L[b, c]
            if a == b:
                floor = 1e-14 * G[idx[a], idx[a]] + 1e-300
                L[a, a] = np.sqrt(s if s > floor else floor)
            else:
                L[a, b] = s / L[b, b]
    for a in range(m):
        s = f[idx[a]]
        for c in range(a):
            s -= L[a, c] * z[c]
        z[a] = s / L[a, a]
    for a in range(m - 1, -1, -1):
        s = z[a]
        for c in range(a + 1, m):
            s -= L[c, a] * out[c]
        out[a] = s / L[a, a]


@numba.njit(cache=True, nogil=True)
def _nnls_bpp(G, F, X):
    """Row-wise NNLS ``min_x ½ xᵀGx − fᵀx, x ≥ 0`` for each row f of F, in place on X.

    Block principal pivoting (Kim & Park 2011, "Fast nonnegative matrix factorization: an
    active-set-like method and comparisons", Algorithm 1; Júdice & Pires 1994): from the
    passive set of the warm start X, solve the unconstrained problem on the passive set,
    compute the dual ``y = G x − f`` on the others, and exchange every infeasible
    variable (x < 0 passive, y < 0 active); when the number of infeasible variables stops
    decreasing for 3 rounds, exchange only the one with the largest index (the backup rule
    that guarantees finite termination).
    """
    n, k = F.shape
    passive = np.empty(k, dtype=np.bool_)
    bad = np.empty(k, dtype=np.bool_)
    idx = np.empty(k, dtype=np.int64)
    L = np.empty((k, k))
    z = np.empty(k)
    sol = np.empty(k)
    x = np.empty(k)
    max_rounds = 10 * k + 50
    for i in range(n):
        f = F[i]
        scale = 0.0
        for j in range(k):
            passive[j] = X[i, j] > 0
            if abs(f[j]) > scale:
                scale = abs(f[j])
        threshold = 1e-12 * scale
        n_best = k + 1
        backup = 3
        for _ in range(max_rounds):
            m = 0
            for j in range(k):
                if passive[j]:
                    idx[m] = j
                    m += 1
            _cholesky_solve(G, f, idx, m, L, z, sol)
            for j in range(k):
                x[j] = 0.0
            for a in range(m):
                x[idx[a]] = sol[a]
            n_bad = 0
            last = -1
            for j in range(k):
                bad[j] = False
                if passive[j]:
                    if x[j] < 0.0:
                        bad[j] = True
                else:
                    y = -f[j]
                    for a in range(m):
                        y += G[j, idx[a]] * sol[a]
                    if y < -threshold:
                        bad[j] = True
                if bad[j]:
                    n_bad += 1
                    last = j
            if n_bad == 0:
                break
            if n_bad < n_best:
                n_best = n_bad
                backup = 3
                for j in range(k):
                    if bad[j]:
                        passive[j] = not passive[j]
            elif backup > 0:
                backup -= 1
                for j in range(k):
                    if bad[j]:
                        passive[j] = not passive[j]
            else:
                passive[last] = not passive[last]
        for j in range(k):
            X[i, j] = x[j] if x[j] > 0.0 else 0.0


def nnls_rows(G, F, X0=None):
    """``argmin_{X ≥ 0} ½ tr(X G Xᵀ) − tr(Fᵀ X)``, row by row (G symmetric positive
    definite, k x k; F (n, k)), by block principal pivoting warm-started from X0."""
    G = np.ascontiguousarray(G, dtype=np.float64)
    F = np.ascontiguousarray(F, dtype=np.float64)
    X = np.zeros_like(F) if X0 is None else np.array(X0, dtype=np.float64, order="C")
    _nnls_bpp(G, F, X)
    return X


# -- SymNMF by ANLS (Kuang, Yun & Park 2015) ----------------------------------------------
def symnmf_anls(A, H, *, alpha=None, max_iter=500, tol=1e-3, verbose=0, description="SymNMF"):
    """SymNMF ``min_{H ≥ 0} ‖A − HHᵀ‖²_F`` by alternating non-negative least squares.

    Kuang, Yun & Park (2015), their alternating non-negative least squares (ANLS)
    algorithm (the paper is not in ``papers/``; no equation numbers are cited): solve the
    penalized non-symmetric problem::

        min_{W, H ≥ 0} f(W, H) = ‖A − W Hᵀ‖²_F + α ‖W − H‖²_F

    by exact block minimization, each block a row-wise NNLS with the k x k Gram matrix::

        W ← argmin_{W ≥ 0} ‖[H; √α I] Wᵀ − [A; √α Hᵀ]‖²  (normal equations: HᵀH + α I, A H + α H)
        H ← argmin_{H ≥ 0} ‖[W; √α I] Hᵀ − [A; √α Wᵀ]‖²  (WᵀW + α I, A W + α W)

    (A symmetric; :func:`nnls_rows`, block principal pivoting). Each block is solved
    exactly, so f never increases. With α large enough the limit points have W = H and
    are stationary points of SymNMF (Kuang et al.'s convergence result for ANLS); the
    default α = max(A)² and the stopping rule (projected gradient of f below ``tol``
    times its value after the first iteration, tol = 1e-3) are those of the authors'
    ``symnmf_anls.m``, which GT ran. f is computed with trace identities, never forming
    W Hᵀ::

        f = ‖A‖² − 2 tr(Hᵀ (A W)) + tr((WᵀW)(HᵀH)) + α‖W − H‖²

    and A W, A H are the products the next updates need: two sparse x dense products per
    iteration, O(k nnz A + k² n + n k³) with the NNLS.

    Parameters
    ----------
    A : CSR (n, n), symmetric, non-negative
    H : ndarray (n, k), float64
        Start (W starts equal to H); not modified.
    alpha : float or None
        Penalty α; None: max(A)².

    Returns
    -------
    H, W : ndarray (n, k)
    AH : ndarray (n, k)
        A H at the returned H.
    history : list of float
        f at the start and after each iteration.
    n_iter : int
    converged : bool
    alpha : float
    """
    A_op = RowBlocked(A)
    if alpha is None:
        alpha = float(A.max()) ** 2 if A.nnz else 0.0
    alpha = float(alpha)
    H = np.array(H, dtype=np.float64, order="C")
    k = H.shape[1]
    W = H.copy()
    ridge = alpha * np.eye(k)
    sqA = squared_norm(A)
    HtH = H.T @ H
    AH = A_op @ H
    history = [max(sqA - 2.0 * float(np.sum(H * AH)) + float(np.sum(HtH * HtH)), 0.0)]
    converged = False
    initial = None
    n_iter = 0
    with progress(description, total=max_iter, enabled=verbose > 0) as bar:
        for n_iter in range(1, max_iter + 1):
            _nnls_bpp(HtH + ridge, AH + alpha * H, W)
            WtW = W.T @ W
            AW = A_op @ W
            _nnls_bpp(WtW + ridge, AW + alpha * W, H)
            HtH = H.T @ H
            AH = A_op @ H
            diff = H - W
            value = (sqA - 2.0 * float(np.sum(H * AW)) + float(np.sum(WtW * HtH))
                     + alpha * float(np.sum(diff * diff)))
            history.append(max(value, 0.0))
            bar.advance(1, status=f"objective {history[-1]:.6g}")
            grad_H = H @ WtW - AW + alpha * diff
            grad_W = W @ HtH - AH - alpha * diff
            norm = np.sqrt(_projected_gradient_sq(W, grad_W) + _projected_gradient_sq(H, grad_H))
            if initial is None:
                initial = norm
            elif norm <= tol * initial:
                converged = True
                break
    if not converged and tol > 0 and max_iter > 0:
        warnings.warn(
            f"Maximum number of iterations {max_iter} reached before the projected gradient "
            f"fell under tol={tol} times its first value. Increase max_iter to improve "
            "convergence.", ConvergenceWarning)
    return H, W, AH, history, n_iter, converged, alpha


def _labels(H, isolated):
    labels = np.argmax(H, axis=1).astype(np.int64)
    labels[isolated | ~np.any(H > 0, axis=1)] = -1
    return labels


class SymNMF(ClusterMixin, BaseEstimator):
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
    init : {"random", "skmeans", "custom"}, default="random"
        "random": Kuang et al.'s ``2 sqrt(mean(A)/k) · U(0, 1)`` entries (what GT ran);
        "skmeans": spherical k-means of X (one-hot labels + 0.2, scaled by the
        least-squares factor c of ‖A − c ZZᵀ‖); "custom": ``H_init``.
    n_init : int, default=1
        Restarts; the one with the lowest ‖A − HHᵀ‖ is kept.
    max_iter : int, default=500
    tol : float, default=1e-3
        Stop when the norm of the projected gradient falls under tol times its value after
        the first iteration (Kuang et al.'s rule; not the relative objective change of the
        multiplicative-update estimators).
    random_state : int, RandomState instance or None
    verbose : int, default=0
    H_init : ndarray of shape (n_documents, n_components), optional

    Attributes
    ----------
    labels_ : ndarray of shape (n_documents,)
        argmax of each row of H; -1 for documents without any neighbour.
    embedding_ : ndarray of shape (n_documents, n_components)
        H.
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

    def __init__(self, n_components=8, *, n_neighbors=None, metric="cosine", weight="auto",
                 scaling="ncut", alpha=None, init="random", n_init=1, max_iter=500, tol=1e-3,
                 random_state=None, verbose=0, H_init=None):
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
        self.H_init = H_init

    def _check_params(self):
        if self.init not in SYMNMF_INITS:
            raise ValueError(f"init must be one of {SYMNMF_INITS}, got {self.init!r}.")
        check_positive_int(self.n_init, "n_init")
        check_positive_int(self.max_iter, "max_iter", minimum=0)
        check_nonnegative_float(self.tol, "tol")
        if self.alpha is not None:
            check_nonnegative_float(self.alpha, "alpha")

    def _start(self, X, A, rng):
        n, k = A.shape[0], self.n_components
        if self.init == "custom":
            if self.H_init is None:
                raise ValueError("init='custom' needs H_init of shape (n_documents, n_components).")
            H = np.array(self.H_init, dtype=np.float64)
            if H.shape != (n, k):
                raise ValueError(f"H_init has shape {H.shape}; expected {(n, k)}.")
            if not np.isfinite(H).all() or (H < 0).any():
                raise ValueError("H_init must be finite and non-negative.")
            return H
        if self.init == "skmeans":
            Z, _ = initialize(X, k, "skmeans", rng)
            Z = Z.astype(np.float64)
            ZtZ = Z.T @ Z
            c = float(np.sum(Z * (A @ Z))) / float(np.sum(ZtZ * ZtZ))
            return Z * np.sqrt(max(c, 0.0))
        mean = float(A.sum()) / (n * n)
        return 2.0 * np.sqrt(mean / k) * rng.random_sample((n, k))

    def fit(self, X, y=None, A=None):
        """Build (or take) the similarity graph and factorize it; sets ``labels_``."""
        self._check_params()
        X, A, isolated = _fit_graph(self, X, A)
        rng = check_random_state(self.random_state)
        sqA = squared_norm(A)
        best = None
        for run in range(self.n_init):
            H0 = self._start(X, A, rng)
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
        for warning in caught:
            warnings.warn_explicit(warning.message, warning.category, warning.filename,
                                   warning.lineno)
        self.embedding_ = H
        self.labels_ = _labels(H, isolated)
        self.alpha_ = alpha
        self.objective_history_ = np.asarray(history)
        self.objective_ = history[-1]
        self.reconstruction_err_ = np.sqrt(error)
        self.n_iter_ = n_iter
        return self

    def fit_predict(self, X, y=None, A=None):
        return self.fit(X, y, A=A).labels_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class NMFS(ClusterMixin, BaseEstimator):
    """NMF-S: NMF of the document similarity graph, ``A ≈ Z Wᵀ`` (GT §V).

    GT's baseline "same as NMF but with the similarity matrix as input instead of the
    features": the sparse, normalized-cut scaled kNN graph A of GT §V-B (module
    docstring) factorized by :class:`~semnmf.NMF` (Frobenius loss, multiplicative
    updates; GT ran Kim & Park's ANLS, which reaches the same kind of stationary point);
    each document goes to the argmax of its row of Z (unit-norm columns, as NMF).

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
        Z (unit-length columns).
    components_ : ndarray of shape (n_components, n_documents)
        Wᵀ.
    affinity_matrix_, n_neighbors_
        As in SymNMF.
    objective_history_, objective_, reconstruction_err_, n_iter_
        Of the NMF of A.

    Notes
    -----
    ``fit(X, A=A)`` takes a similarity graph of one's own, as SymNMF.
    """

    def __init__(self, n_components=8, *, n_neighbors=None, metric="cosine", weight="auto",
                 scaling="ncut", init="skmeans", n_init=1, max_iter=200, tol=1e-4,
                 random_state=None, verbose=0):
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
        X, A, isolated = _fit_graph(self, X, A)
        nmf = NMF(self.n_components, init=self.init, n_init=self.n_init,
                  max_iter=self.max_iter, tol=self.tol, random_state=self.random_state,
                  verbose=self.verbose)
        with warnings.catch_warnings():
            # _fit_graph already warned about documents without neighbours
            warnings.filterwarnings("ignore", message=".*no term.*", category=UserWarning)
            Z = nmf.fit_transform(A)
        self.embedding_ = Z
        self.components_ = nmf.components_
        self.labels_ = _labels(Z, isolated)
        self.objective_history_ = nmf.objective_history_
        self.objective_ = nmf.objective_
        self.reconstruction_err_ = nmf.reconstruction_err_
        self.n_iter_ = nmf.n_iter_
        return self

    def fit_predict(self, X, y=None, A=None):
        return self.fit(X, y, A=A).labels_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
