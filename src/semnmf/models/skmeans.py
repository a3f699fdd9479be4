"""Spherical k-means (Dhillon & Modha, 2001).

K-means on the unit sphere: documents are L2-normalized term vectors, centroids are unit
"concept vectors", and documents go to the centroid of largest cosine similarity. It is
the classical baseline of the NMF document-clustering papers.
"""

import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClusterMixin, TransformerMixin, _fit_context
from sklearn.cluster import kmeans_plusplus
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import normalize
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._utils.progress import log
from .._utils.validation import (FLOAT_DTYPES, check_matrix, check_n_components, empty_rows,
                                 unit_rows)
from .._utils.parallel import compiled_kernels

from sklearn.utils.validation import validate_data as _sk_validate_data

__all__ = ["SphericalKMeans"]


class SphericalKMeans(ClusterMixin, TransformerMixin, BaseEstimator):
    """Spherical k-means clustering of documents (Dhillon & Modha, 2001).

    Lloyd iterations on unit-length documents alternate between assigning every document
    to the centroid of largest cosine similarity and replacing every centroid by the
    normalized sum (the "concept vector") of its documents, which can only increase the
    cosine sum (Dhillon & Modha 2001, eq. 5)

    .. math:: Q = \\sum_i \\max_j \\; x_i^\\top c_j, \\quad \\|x_i\\| = \\|c_j\\| = 1.

    Parameters
    ----------
    n_components : int, default=8
        Number of clusters k (called ``n_clusters`` before 0.2).
    init : {"k-means++", "random"} or array-like of shape (n_components, n_features), \
            default="k-means++"
        How the centroids start:

        - ``"k-means++"``: :func:`sklearn.cluster.kmeans_plusplus` on the normalized
          documents (on the unit sphere, k-means++ seeding for cosine);
        - ``"random"``: ``n_components`` distinct documents drawn at random;
        - an array: these centroids (normalized to unit length); ``n_init`` is then 1.
    n_init : int, default=10
        Number of runs from different starting centroids; the run with the best
        objective is kept.
    max_iter : int, default=100
        Maximum number of Lloyd iterations of a run.
    tol : float, default=1e-4
        A run stops when the relative change of Q between two iterations falls below
        ``tol``, or when the assignment no longer changes.
    random_state : int, RandomState instance or None, default=None
        Seeds the initializations (one generator shared by the ``n_init`` runs).
    verbose : int, default=0
        Print the objective at every iteration when > 0.

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_components, n_features)
        Unit-norm centroids (concept vectors), in the dtype of ``X``.
    labels_ : ndarray of shape (n_samples,)
        Cluster of each training document; ``-1`` for all-zero documents, which have
        no direction and are assigned nowhere.
    objective_ : float
        -Q (lower is better, as for every semnmf estimator; before 0.2 it was Q).
    similarity_ : float
        The cosine sum Q itself (higher is better).
    inertia_ : float
        ``n_nonzero_documents - similarity_``: half the sum of squared Euclidean distances
        between the normalized documents and their centroid, as for ``KMeans``.
    n_iter_ : int
        Number of Lloyd iterations of the best run.
    objective_history_ : ndarray of shape (n_iter_ + 1,)
        ``objective_`` (= -Q) of the best run after the initial assignment and after
        every iteration; non-increasing (up to rounding).
    n_features_in_ : int
        Number of features (terms) seen during :meth:`fit`.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features, when ``X`` has string column names.

    See Also
    --------
    sklearn.cluster.KMeans : Euclidean k-means.

    Notes
    -----
    Sparse input is never densified. A cluster that becomes empty is re-seeded with the
    document least similar to its own centroid (from a cluster of at least two
    documents), which keeps Q non-decreasing.

    References
    ----------
    I. S. Dhillon and D. S. Modha, "Concept decompositions for large sparse text data
    using clustering", Machine Learning 42(1), 143-175, 2001.

    Examples
    --------
    >>> import numpy as np
    >>> from semnmf.models.skmeans import SphericalKMeans
    >>> X = np.array([[3., 1., 0., 0.], [2., 1., 0., 0.], [0., 0., 1., 4.], [0., 0., 1., 2.]])
    >>> model = SphericalKMeans(n_components=2, random_state=0).fit(X)
    >>> bool(model.labels_[0] == model.labels_[1] != model.labels_[2] == model.labels_[3])
    True
    """

    _parameter_constraints: dict = {
        "n_components": [Interval(numbers.Integral, 1, None, closed="left")],
        "init": [StrOptions({"k-means++", "random"}), "array-like"],
        "n_init": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        n_components=8,
        *,
        init="k-means++",
        n_init=10,
        max_iter=100,
        tol=1e-4,
        random_state=None,
        verbose=0,
    ):
        self.n_components = n_components
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.positive_only = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    # ------------------------------------------------------------------ input
    def _check_X(self, X, *, reset):
        """Validate X, record/check n_features_in_, return it L2-normalized.

        Returns the normalized matrix (CSR or C-ordered ndarray, float32 or float64)
        and the boolean mask of its all-zero rows.
        """
        X = _sk_validate_data(self, X, reset=reset, accept_sparse="csr",
                              dtype=list(FLOAT_DTYPES),
                              ensure_all_finite=False)  # check_matrix says it better
        X = check_matrix(X, nonnegative=False)
        values = X.data if sp.issparse(X) else X
        if values.size and values.min() < 0:
            # same check as check_matrix(nonnegative=True), worded as scikit-learn's
            # check_non_negative so that generic tooling recognises it
            n_neg = int(np.count_nonzero(values < 0))
            raise ValueError(
                f"Negative values in data passed to {type(self).__name__}: X contains "
                f"{n_neg} negative value(s) (min {values.min():.3g}). Spherical k-means "
                "in semnmf expects non-negative document-term weights (counts, TF-IDF); "
                "clip with np.maximum(X, 0).")
        zero = empty_rows(X)
        return _normalize_rows(X, zero), zero

    @staticmethod
    def _warn_zero_rows(zero, where):
        n_zero = int(zero.sum())
        if n_zero:
            warnings.warn(
                f"{n_zero} document(s) {where} have no term (all-zero rows); they get "
                "label -1 and count 0 in the objective. Remove them or lower min_df to "
                "give them terms.", UserWarning, stacklevel=3)

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Compute the spherical k-means clustering.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Non-negative document-term matrix (counts or TF-IDF), rows of any norm.
        y : Ignored

        Returns
        -------
        self : SphericalKMeans
        """
        Xn, zero = self._check_X(X, reset=True)
        n_samples, n_features = Xn.shape
        k = check_n_components(self.n_components, n_samples)
        nonzero_idx = np.flatnonzero(~zero)
        if nonzero_idx.size == 0:
            raise ValueError(
                "All documents of X are all-zero (no term): there is nothing to cluster.")
        if nonzero_idx.size < k:
            raise ValueError(
                f"n_components={k} is larger than the number of non-empty documents "
                f"({nonzero_idx.size} of {n_samples}; the others are all-zero); ask for "
                f"at most {nonzero_idx.size} clusters.")
        self._warn_zero_rows(zero, "passed to fit")

        rng = check_random_state(self.random_state)
        n_init = self.n_init
        init = self.init
        if not isinstance(init, str):
            init = _check_init_array(init, k, n_features, Xn.dtype)
            if n_init != 1:
                warnings.warn(
                    "Explicit initial centroids were passed (init is an array): "
                    f"performing only one init instead of n_init={n_init}.",
                    RuntimeWarning, stacklevel=2)
                n_init = 1

        best = None
        seeding = {}  # what every restart's k-means++ reads, made by the first
        for run in range(n_init):
            centers = self._init_centers(Xn, nonzero_idx, k, init, rng, seeding)
            result = _lloyd(Xn, zero, centers, self.max_iter, self.tol, self.verbose, run)
            if best is None or result[2] > best[2]:
                best = result
        labels, centers, objective, n_iter, history = best

        n_distinct = np.unique(labels[labels >= 0]).size
        if n_distinct < k:
            warnings.warn(
                f"Number of distinct clusters ({n_distinct}) found smaller than "
                f"n_components ({k}). Possibly due to duplicate documents in X.",
                ConvergenceWarning, stacklevel=2)

        self.labels_ = labels
        self.cluster_centers_ = centers
        self.similarity_ = float(objective)
        self.objective_ = -self.similarity_
        self.inertia_ = float(nonzero_idx.size - objective)
        self.n_iter_ = int(n_iter)
        self.objective_history_ = -np.asarray(history, dtype=np.float64)
        return self

    def _init_centers(self, Xn, nonzero_idx, k, init, rng, seeding):
        """One restart's starting centroids. ``seeding``: a dict shared by the restarts
        of one fit, where the first k-means++ leaves the rows it seeds from (and their
        float64 product and norms) for the others."""
        if not isinstance(init, str):
            return init.copy()
        if init == "random":
            seeds = rng.choice(nonzero_idx, size=k, replace=False)
            centers = Xn[seeds]
            centers = centers.toarray() if sp.issparse(centers) else np.array(centers)
        elif _compiled(Xn) or (sp.issparse(Xn) and Xn.dtype != np.float64):
            # k-means++ on the unit-norm (non-zero) documents; float32 on either path
            if not seeding:
                rows = Xn if nonzero_idx.size == Xn.shape[0] else Xn[nonzero_idx]
                seeding["rows"] = rows
                seeding["prepared"] = _seeding_arrays(rows)
            centers = spherical_kmeans_plusplus(seeding["rows"], k, rng, seeding["prepared"])
        else:
            centers, _ = kmeans_plusplus(
                Xn[nonzero_idx], k, x_squared_norms=np.ones(nonzero_idx.size, dtype=Xn.dtype),
                random_state=rng)
        centers = np.ascontiguousarray(centers, dtype=Xn.dtype)
        return _normalize_rows(centers, ~np.any(centers != 0, axis=1))

    # ------------------------------------------------------------------ inference
    def transform(self, X):
        """Cosine similarity of each document to each centroid.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Non-negative document-term matrix.

        Returns
        -------
        similarities : ndarray of shape (n_samples, n_components)
            In ``[0, 1]`` for non-negative data; rows of all-zero documents are 0.
        """
        check_is_fitted(self)
        Xn, _ = self._check_X(X, reset=False)
        return _similarities(Xn, self.cluster_centers_)

    def predict(self, X):
        """Index of the most cosine-similar centroid of each document.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Non-negative document-term matrix.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Cluster of each document; ``-1`` (with a warning) for all-zero documents.
        """
        check_is_fitted(self)
        Xn, zero = self._check_X(X, reset=False)
        self._warn_zero_rows(zero, "passed to predict")
        labels, _ = _assign(Xn, zero, self.cluster_centers_)
        return labels

    def score(self, X, y=None):
        """Objective on X: sum of the cosine similarities to the closest centroid.

        Higher is better (unlike ``inertia_`` and ``objective_``), as scikit-learn's ``score``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Non-negative document-term matrix.
        y : Ignored

        Returns
        -------
        score : float
            Between 0 and the number of non-empty documents of X.
        """
        check_is_fitted(self)
        Xn, zero = self._check_X(X, reset=False)
        _, sims = _assign(Xn, zero, self.cluster_centers_)
        return float(sims.sum(dtype=np.float64))


# ---------------------------------------------------------------------- helpers
def _row_sq_norms(X):
    """Squared L2 norm of each row. For sparse X, bitwise ``X.multiply(X).sum(axis=1)``
    (scipy's ``np.add.reduceat`` over the squares of X's own values, without the
    element-wise sparse product: ``benchmarks/results/default_cost.md``); where the two
    could differ (zero squares, duplicate entries, integers) the product itself."""
    if not sp.issparse(X):
        return np.einsum("ij,ij->i", X, X)
    X = X.tocsr()
    if X.dtype.kind == "f" and X.has_canonical_format:
        squares = X.data * X.data
        if squares.all():
            out = np.zeros(X.shape[0], dtype=squares.dtype)
            rows = np.flatnonzero(np.diff(X.indptr))
            if rows.size:
                out[rows] = np.add.reduceat(squares, X.indptr[rows])
            return out
    return np.asarray(X.multiply(X).sum(axis=1)).ravel()


def _normalize_rows(X, zero):
    """Return X with unit-L2 rows (zero rows stay zero); X itself if already so."""
    norms = np.sqrt(_row_sq_norms(X).astype(np.float64))
    atol = 1e-5 if X.dtype == np.float32 else 1e-12
    if np.all(np.abs(norms[~zero] - 1.0) <= atol):
        return X
    return unit_rows(X)


def _check_init_array(init, k, n_features, dtype):
    if sp.issparse(init):
        init = init.toarray()
    try:
        init = np.asarray(init, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"init could not be read as a numeric array: {exc}") from None
    if init.shape != (k, n_features):
        raise ValueError(
            f"init has shape {init.shape}; an explicit init must be an array of shape "
            f"(n_components, n_features) = ({k}, {n_features}).")
    if not np.all(np.isfinite(init)):
        raise ValueError("init contains NaN or infinite values.")
    zero = ~np.any(init != 0, axis=1)
    if zero.any():
        raise ValueError(
            f"init row(s) {np.flatnonzero(zero).tolist()} are all-zero; centroids need a "
            "direction.")
    return np.ascontiguousarray(normalize(init, norm="l2"), dtype=dtype)


def _compiled(Xn):
    """Whether the compiled Lloyd steps serve Xn: sparse, and compiled kernels allowed
    (:func:`~semnmf._utils.parallel.compiled_kernels`). They are imported on first use:
    a process that only ever takes the scipy path (the Dask client of a fit without M)
    does not load numba."""
    return sp.issparse(Xn) and compiled_kernels()


def _seeding_arrays(X):
    """What :func:`spherical_kmeans_plusplus` reads besides X, the same for every restart:
    ``(product, norms)``, the float64 operator for ``X @ candidates`` (compiled, or
    scipy's on the scipy path) and the rows' squared norms (1.0 for float64 X, whose
    rows are unit)."""
    if compiled_kernels():
        from ._solvers.fro_kernels import CSRKernel

        product = CSRKernel(X, dtype=np.float64)
        rows = product.A
    else:
        rows = X.astype(np.float64)
        product = rows
    if X.dtype == np.float64:
        norms = 1.0  # as passed to scikit-learn
    else:
        norms = _row_sq_norms(rows)
    return product, norms


def spherical_kmeans_plusplus(X, k, rng, prepared=None):
    """Greedy k-means++ seeding (Arthur & Vassilvitskii 2007) of the unit-norm rows of X
    (CSR, no all-zero row): :func:`sklearn.cluster.kmeans_plusplus` (its draws, candidates
    and arithmetic; the tests check the same centres), the squared distances to the
    candidates from one compiled sparse x dense pass over X. Float32 X is seeded in
    float64, as scikit-learn seeds ``X.astype(np.float64)``, on the scipy path too, so
    that the Dask engine starts where the local one does. ``prepared``:
    :func:`_seeding_arrays` of X, made once for all the restarts of a fit.
    """
    n = X.shape[0]
    weights = np.ones(n)
    trials = 2 + int(np.log(k))
    product, norms = _seeding_arrays(X) if prepared is None else prepared

    def distances(ids):
        candidates = X[ids].toarray().astype(np.float64, copy=False)
        if sp.issparse(product):
            out = -2 * np.asarray(product @ candidates.T).T
        else:  # CSRKernel: one compiled loop for any number of candidates
            out = -2 * product.matmul(candidates.T, exact_k=False).T
        out += np.einsum("ij,ij->i", candidates, candidates)[:, None]
        out += norms
        np.maximum(out, 0, out=out)
        return out

    # the shapes of scikit-learn's products: closest starts as (1, n), the potentials
    # are (trials, 1)
    chosen = [rng.choice(n, p=weights / weights.sum())]
    closest = distances(chosen)
    potential = closest @ weights
    for _ in range(1, k):
        draws = rng.uniform(size=trials) * potential
        ids = np.searchsorted(np.cumsum(weights * closest), draws)
        np.clip(ids, None, n - 1, out=ids)
        candidate = distances(ids)
        np.minimum(closest, candidate, out=candidate)
        potentials = candidate @ weights.reshape(-1, 1)
        best = np.argmin(potentials)
        potential = potentials[best]
        closest = candidate[best]
        chosen.append(ids[best])
    return X[chosen].toarray()


def _similarities(Xn, centers):
    """Dense (n, k) matrix of dot products; X stays sparse if it is."""
    S = Xn @ centers.T
    return np.asarray(S)


def _assign(Xn, zero, centers):
    """Labels (argmax similarity, -1 for zero rows) and each row's best similarity.

    Sparse X: the compiled pass of :func:`.skmeans_kernels.assign`, which never forms
    the (n, k) similarities and gives bitwise the labels and similarities of the scipy
    expression below (the path taken for dense X, or without compiled kernels).
    """
    if _compiled(Xn):
        from ._solvers import skmeans_kernels

        labels, sims = skmeans_kernels.assign(Xn, centers)
    else:
        S = _similarities(Xn, centers)
        labels = np.argmax(S, axis=1).astype(np.intp)
        sims = S[np.arange(S.shape[0]), labels]
    labels[zero] = -1
    sims = np.where(zero, 0, sims)
    return labels, sims


def _update_centers(Xn, labels, sims, centers_old):
    """Concept vectors of the clusters; empty clusters are re-seeded.

    ``labels`` is modified in place when documents move to re-seeded clusters.
    """
    k, n_features = centers_old.shape
    n = Xn.shape[0]
    valid = labels >= 0
    counts = np.bincount(labels[valid], minlength=k)
    empty = np.flatnonzero(counts == 0)
    if empty.size:
        # candidates: non-zero documents by increasing similarity to their centroid
        # (stable sort, so ties go to the lowest index: deterministic)
        order = np.flatnonzero(valid)[np.argsort(sims[valid], kind="stable")]
        pos = 0
        for j in empty:
            while pos < order.size and counts[labels[order[pos]]] < 2:
                pos += 1
            if pos == order.size:  # fewer movable documents than empty clusters
                break
            doc = order[pos]
            counts[labels[doc]] -= 1
            labels[doc] = j
            counts[j] += 1
            pos += 1
        valid = labels >= 0

    if _compiled(Xn):  # bitwise the membership product below, in one pass over X
        from ._solvers import skmeans_kernels

        sums = skmeans_kernels.sums(Xn, labels, k)
    else:
        idx = np.flatnonzero(valid)
        member = sp.csr_matrix((np.ones(idx.size, dtype=Xn.dtype), (labels[idx], idx)),
                               shape=(k, n))
        sums = member @ Xn
        sums = sums.toarray() if sp.issparse(sums) else sums
        sums = np.ascontiguousarray(sums, dtype=Xn.dtype)
    norms = np.sqrt(np.einsum("ij,ij->i", sums, sums))
    keep = norms == 0  # still-empty cluster: keep the old centroid
    norms[keep] = 1
    centers = sums / norms[:, None]
    centers[keep] = centers_old[keep]
    return centers


def _lloyd(Xn, zero, centers, max_iter, tol, verbose, run):
    """One spherical k-means run from ``centers``.

    Returns (labels, centers, objective, n_iter, objective_history).
    """
    labels, sims = _assign(Xn, zero, centers)
    objective = float(sims.sum(dtype=np.float64))
    history = [objective]
    n_iter = 0
    log(f"[SphericalKMeans] init {run}: objective {objective:.6f}", bool(verbose))
    for it in range(1, max_iter + 1):
        centers = _update_centers(Xn, labels, sims, centers)
        new_labels, sims = _assign(Xn, zero, centers)
        new_objective = float(sims.sum(dtype=np.float64))
        history.append(new_objective)
        n_iter = it
        log(f"[SphericalKMeans] init {run}, iteration {it}: objective {new_objective:.6f}",
            bool(verbose))
        stable = np.array_equal(new_labels, labels)
        change = abs(new_objective - objective) / max(abs(objective), np.finfo(np.float64).tiny)
        labels, objective = new_labels, new_objective
        if stable:
            log(f"[SphericalKMeans] init {run}: converged (assignment stable) at iteration {it}",
                bool(verbose))
            break
        if change < tol:
            log(f"[SphericalKMeans] init {run}: converged (relative change {change:.2e} < tol) "
                f"at iteration {it}", bool(verbose))
            break
    return labels, centers, objective, n_iter, history
