"""Initializations of the factors Z (documents x k) and W (terms x k).

The papers start every NMF-like method from the same spherical k-means solution
(Neurocomputing paper §5.4); random and NNDSVDa starts and user arrays are also offered.
"""

import warnings
from math import sqrt

import numpy as np
import scipy.sparse as sp
from sklearn.preprocessing import normalize
from sklearn.utils import check_random_state
from sklearn.utils.extmath import randomized_svd

from .skmeans import SphericalKMeans

INITS = ("skmeans", "random", "nndsvda")

# Offset added to the one-hot membership of the k-means start: a zero entry never moves
# under multiplicative updates, so a hard 0/1 start would freeze the partition. 0.2 is
# the value of Ding et al. (2006), used by the papers' lineage.
SKMEANS_OFFSET = 0.2

# Restarts of the spherical k-means start (the best cosine objective is kept;
# benchmarks/results/design_notes.md).
SKMEANS_RESTARTS = 10


def start_restarts(n_init, screen_iter):
    """Spherical k-means restarts behind each start of a fit with ``n_init`` starts.

    Screened restarts (``screen_iter`` set) share the ``SKMEANS_RESTARTS`` of one start:
    each of the ``n_init`` starts is the best of ``max(1, SKMEANS_RESTARTS // n_init)``
    restarts, so the k-means part costs what one start costs, and the screening sweeps
    choose among several good starts. Without screening every start has its own 10.
    """
    if screen_iter is None or n_init <= 1:
        return SKMEANS_RESTARTS
    return max(1, SKMEANS_RESTARTS // n_init)


def check_start(array, shape, name, dtype=np.float64):
    """A user's starting factor: a finite, non-negative array of ``shape``, copied to
    ``dtype`` (C order). The one check of every start array of the package."""
    if sp.issparse(array):
        array = array.toarray()                      # a k-column factor: small
    try:
        array = np.array(array, dtype=dtype, order="C", copy=True)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} could not be read as a numeric array: {exc}") from None
    if array.shape != tuple(shape):
        raise ValueError(f"{name} has shape {array.shape}; expected {tuple(shape)}.")
    if not np.isfinite(array).all() or (array < 0).any():
        raise ValueError(f"{name} must be finite and non-negative.")
    zero = np.flatnonzero(~array.any(axis=0))
    if zero.size:
        raise ValueError(
            f"{name} has {zero.size} all-zero column(s) (the first: {zero[0]}): the "
            "multiplicative updates never move a zero column, so that cluster could never "
            "be used. Start every column from positive values.")
    return array


def resolve_start(estimator, X_shape, *, n_factors=2, dtype=np.float64):
    """The start of a fit: ``(strategy, Z, W)``, with ``Z, W`` None for a strategy.

    ``init`` is a strategy name or the starting value itself (as scikit-learn's KMeans):
    ``(Z, W)`` with Z (n_documents, k) and W (n_terms, k); for the one-factor models
    (``n_factors=1``: ProjectiveNMF's Z, SymNMF's H) ``Z``, or a pair whose W is
    shape-checked and unused. Every start is checked by :func:`check_start`.
    """
    n, d = X_shape
    k = estimator.n_components
    init = estimator.init
    if isinstance(init, str):
        return init, None, None
    pair = isinstance(init, (tuple, list)) and len(init) == 2 and np.ndim(init[0]) == 2
    if n_factors == 1:
        if pair:                        # (Z, W): the shared start of every model, W unused
            check_start(init[1], (d, k), "init (W)", dtype)
            init = init[0]
        return "custom", check_start(init, (n, k), "init (Z)", dtype), None
    if not pair:
        raise ValueError("init must be a strategy name or the pair (Z, W) of starting "
                         f"factors of shapes {(n, k)} and {(d, k)}.")
    return ("custom", check_start(init[0], (n, k), "init (Z)", dtype),
            check_start(init[1], (d, k), "init (W)", dtype))


def nndsvda(X, n_components, random_state=None, eps=1e-6):
    """NNDSVD start with zeros filled by the mean of X ("NNDSVDa").

    Boutsidis & Gallopoulos (2008), "SVD based initialization: a head start for
    nonnegative matrix factorization", Pattern Recognition 41(4), Algorithm NNDSVD: from
    the rank-k truncated SVD X ≈ Σ_j s_j u_j v_jᵀ (randomized), the leading pair is
    taken as |u_1|, |v_1|; for j ≥ 2 the positive or the negative parts of (u_j, v_j),
    whichever has the larger product of norms m, scaled by √(s_j m). Entries below
    ``eps`` are zeroed, then (variant "a") every zero is set to the mean of X.

    Returns ``(Z, H)`` of shapes (n, k) and (k, d), in X's dtype (as scikit-learn's).
    """
    U, S, V = randomized_svd(X, n_components, random_state=random_state)
    Z = np.zeros_like(U)
    H = np.zeros_like(V)
    Z[:, 0] = np.sqrt(S[0]) * np.abs(U[:, 0])
    H[0, :] = np.sqrt(S[0]) * np.abs(V[0, :])
    for j in range(1, n_components):
        x, y = U[:, j], V[j, :]
        x_p, y_p = np.maximum(x, 0), np.maximum(y, 0)
        x_n, y_n = np.abs(np.minimum(x, 0)), np.abs(np.minimum(y, 0))
        x_p_nrm, y_p_nrm = sqrt(np.dot(x_p, x_p)), sqrt(np.dot(y_p, y_p))
        x_n_nrm, y_n_nrm = sqrt(np.dot(x_n, x_n)), sqrt(np.dot(y_n, y_n))
        m_p, m_n = x_p_nrm * y_p_nrm, x_n_nrm * y_n_nrm
        if m_p > m_n:
            u, v, sigma = x_p / x_p_nrm, y_p / y_p_nrm, m_p
        else:
            u, v, sigma = x_n / x_n_nrm, y_n / y_n_nrm, m_n
        scale = np.sqrt(S[j] * sigma)
        Z[:, j] = scale * u
        H[j, :] = scale * v
    Z[Z < eps] = 0
    H[H < eps] = 0
    mean = X.mean()
    Z[Z == 0] = mean
    H[H == 0] = mean
    return Z, H


def initialize(X, n_components, init="skmeans", random_state=None, Z=None, W=None,
               n_restarts=SKMEANS_RESTARTS):
    """Return starting factors ``(Z, W)`` of shapes (n, k) and (d, k), in X's dtype.

    Parameters
    ----------
    X : sparse or dense matrix of shape (n_documents, n_terms), non-negative
    n_components : int
    init : {"skmeans", "random", "nndsvda", "custom"}
        "skmeans": spherical k-means (best of ``n_restarts`` restarts, by default
        ``SKMEANS_RESTARTS`` = 10); Z = one-hot labels + 0.2, W = centroids.
        "random": scaled absolute Gaussian entries (as scikit-learn's "random").
        "nndsvda": NNDSVD with zeros filled by the mean (:func:`nndsvda`).
        "custom": use the arrays ``Z`` and ``W`` (checked by :func:`check_start`).
    random_state : int, RandomState or None
    """
    n, d = X.shape
    k = n_components
    dtype = X.dtype
    rng = check_random_state(random_state)
    if init == "custom":
        if Z is None or W is None:
            raise ValueError("init='custom' needs both Z (n_documents, k) and W (n_terms, k).")
        return check_start(Z, (n, k), "Z", dtype), check_start(W, (d, k), "W", dtype)
    if init == "skmeans":
        return factors_from_skmeans(skmeans_start(X, k, rng, n_restarts), dtype)
    if init == "random":
        mean = X.sum() / (n * d)
        scale = np.sqrt(max(mean, 1e-12) / k)
        Z = (scale * np.abs(rng.standard_normal((n, k)))).astype(dtype)
        W = (scale * np.abs(rng.standard_normal((d, k)))).astype(dtype)
        return Z, W
    if init == "nndsvda":
        if k > min(n, d):
            raise ValueError(f"init='nndsvda' needs n_components <= min(n_documents, n_terms) = {min(n, d)}.")
        Z, H = nndsvda(X, k, random_state=rng)
        return np.ascontiguousarray(Z, dtype=dtype), np.ascontiguousarray(H.T, dtype=dtype)
    raise ValueError(f"init must be one of {INITS}, got {init!r}.")


def seeded_start(X, n_components, seeds, random_state=None, n_restarts=SKMEANS_RESTARTS):
    """Starting ``(Z, W)`` with topics guided by seed words: one topic per list of
    ``seeds`` (term indices), the other ``n_components - len(seeds)`` found freely.

    The papers' spherical k-means start with some of its centroids given. Seeded topic j:
    the spherical centroid of the documents whose seed mass Σ_{t ∈ seeds_j} x̂_it (x̂ the
    unit-length rows) is positive and largest for j, each seed term raised to the
    centroid's largest weight (a topic whose seeds no document holds: its seed terms
    alone). Free topics: spherical k-means of the documents no seed reaches (of all when
    fewer remain than free topics). Then Z and W as :func:`factors_from_skmeans`.
    """
    n, d = X.shape
    k = n_components
    seeds = [np.unique(np.asarray(list(terms), dtype=np.int64)) for terms in seeds]
    if not 1 <= len(seeds) <= k:
        raise ValueError(f"give between 1 and n_components={k} seed lists, got {len(seeds)}.")
    for j, terms in enumerate(seeds):
        if terms.size == 0:
            raise ValueError(f"seed list {j} is empty: give at least one word per seeded topic.")
        if terms.min() < 0 or terms.max() >= d:
            raise ValueError(f"seed list {j} holds term indices outside 0..{d - 1}.")
    rng = check_random_state(random_state)
    Xn = normalize(sp.csr_matrix(X, dtype=np.float64), norm="l2", axis=1)
    mass = np.column_stack([np.asarray(Xn[:, terms].sum(axis=1)).ravel() for terms in seeds])
    reached = mass.max(axis=1) > 0
    owner = np.where(reached, np.argmax(mass, axis=1), -1)
    centers = np.zeros((k, d))
    for j, terms in enumerate(seeds):
        members = np.flatnonzero(owner == j)
        center = np.asarray(Xn[members].sum(axis=0)).ravel() if members.size else np.zeros(d)
        center[terms] = max(center.max(), 1.0 if not members.size else 0.0)
        centers[j] = center / np.linalg.norm(center)
    free = k - len(seeds)
    if free:
        rows = np.flatnonzero(~reached & (np.diff(Xn.indptr) > 0))
        if rows.size < free:
            rows = np.flatnonzero(np.diff(Xn.indptr) > 0)
        centers[len(seeds):] = skmeans_start(Xn[rows], free, rng, n_restarts).cluster_centers_
    similarity = np.asarray(Xn @ centers.T)
    labels = np.where(np.diff(Xn.indptr) > 0, np.argmax(similarity, axis=1), -1)
    return _factors(labels, centers, X.dtype)


def topic_drift(W_start, W):
    """How far each topic moved during a fit: 1 − cos(w_start_j, w_j) per column (0: the
    topic kept its direction; 1: it ended orthogonal to where it started)."""
    A = normalize(np.asarray(W_start, dtype=np.float64).T, norm="l2", axis=1)
    B = normalize(np.asarray(W, dtype=np.float64).T, norm="l2", axis=1)
    return 1.0 - np.sum(A * B, axis=1)


def skmeans_start(X, n_components, random_state=None, n_restarts=SKMEANS_RESTARTS):
    """The fitted :class:`~semnmf.models.skmeans.SphericalKMeans` behind ``init="skmeans"``
    (the best of ``n_restarts`` restarts, drawn from ``random_state``); its factors are
    :func:`factors_from_skmeans`."""
    with warnings.catch_warnings():
        # the estimator being initialized already warns about empty documents
        warnings.filterwarnings("ignore", message=".*all-zero.*", category=UserWarning)
        return SphericalKMeans(n_components=n_components, n_init=n_restarts,
                               random_state=random_state).fit(X)


def factors_from_skmeans(km, dtype=np.float64):
    """Starting (Z, W) from a fitted SphericalKMeans: Z = one-hot labels + 0.2, W = centroids.

    Documents labelled -1 (no term) keep the flat 0.2 row. Terms absent from every centroid
    would stay at exactly zero under multiplicative updates, so W gets a small floor.
    """
    return _factors(km.labels_, km.cluster_centers_, dtype)


def factors_from_labels(X, labels, n_components, dtype=np.float64):
    """Starting (Z, W) from any hard partition of X's rows (e.g. k-means of document
    embeddings): as :func:`factors_from_skmeans`, with W the spherical centroids of X's
    rows in each cluster (L2-normalized sums of the L2-normalized rows)."""
    labels = np.asarray(labels)
    if labels.shape != (X.shape[0],):
        raise ValueError(f"labels has shape {labels.shape}; give one label per row of X "
                         f"({X.shape[0]}).")
    if labels.size and (labels.max() >= n_components or labels.min() < -1):
        raise ValueError(f"labels must be in -1..{n_components - 1} (-1: no cluster), got "
                         f"{labels.min()}..{labels.max()}.")
    Xn = normalize(X, norm="l2", axis=1)
    assigned = np.flatnonzero(labels >= 0)
    H = sp.csr_matrix((np.ones(assigned.size), (labels[assigned], assigned)),
                      shape=(n_components, X.shape[0]))
    centers = np.asarray((H @ Xn).todense() if sp.issparse(Xn) else H @ Xn)
    centers = normalize(centers, norm="l2", axis=1)
    return _factors(labels, centers, dtype)


def _factors(labels, centers, dtype):
    dtype = np.dtype(dtype)
    Z = np.full((labels.size, centers.shape[0]), SKMEANS_OFFSET, dtype=dtype)
    assigned = labels >= 0
    Z[np.flatnonzero(assigned), labels[assigned]] += 1.0
    W = np.maximum(np.asarray(centers, dtype=dtype).T, 0)
    W += dtype.type(1e-3) * W.mean()
    return Z, np.ascontiguousarray(W)


def initialize_context_factor(M_dot_W, W):
    """Start Q (d' x k) for M ~ W Qᵀ given W: Q = s·MᵀW with the least-squares scalar s.

    ``M_dot_W`` is MᵀW (non-negative since M and W are). The scalar s minimizes
    ‖M - s W (MᵀW)ᵀ‖²_F: s = ‖MᵀW‖²_F / tr(WᵀW (MᵀW)ᵀ(MᵀW)).
    """
    Q = np.asarray(M_dot_W)
    denominator = float(np.sum((W.T @ W) * (Q.T @ Q)))
    scale = float(np.sum(Q * Q)) / denominator if denominator > 0 else 1.0
    Q = Q * Q.dtype.type(scale)
    floor = Q.mean() * 1e-3 if Q.size and Q.mean() > 0 else 1e-6
    return np.ascontiguousarray(Q + Q.dtype.type(floor))
