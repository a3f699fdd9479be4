"""Game-theoretic refinement of a soft clustering (GTNMF; Tripodi, Vascon & Pelillo 2016).

Every document is a player whose pure strategies are the k clusters. Its mixed strategy
``x_i`` (a point of the simplex Δ_k) starts at its NMF membership, normalized; the
players play games with their neighbours on a kNN similarity graph, the payoff of
player i for cluster h being ``u_i(e_h) = Σ_j a_ij x_jh`` (GT eq. 6) and its mean payoff
``u_i(x) = Σ_j x_iᵀ a_ij x_j`` (eq. 7). The discrete replicator dynamics (eq. 5)

    x_ih(t+1) = x_ih(t) · u_i(e_h) / u_i(x),   i.e.   X ← X ∘ (A X) / rowsum(X ∘ (A X)),

let clusters that do better than average among a document's neighbours grow, until a
Nash equilibrium: each document then goes to the cluster its similar documents chose.

One iteration is one sparse x dense product ``A X`` (A: n x n with nnz(A) ≈ 2qn
non-zeros, X: n x k) plus O(nk) element-wise work, i.e. O(nnz(A)·k).
"""

import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClusterMixin, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import get_tags
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import validate_data

from .._utils.progress import progress
from .._utils.validation import (check_matrix, check_nonnegative_float, check_positive_int,
                                 check_square_nonnegative)
from .._utils.parallel import ThreadedProduct
from ..graphs.knn import (METRICS, SYMMETRIZE, WEIGHTS, cluster_log2_neighbors, knn_graph,
                    log2_neighbors, normalized_cut_scaling)

__all__ = ["GTNMF", "refine", "replicator_dynamics"]

# Strategy entries below the smallest normal float64 are flushed to 0: replicator
# dynamics drives losing strategies to 0 geometrically, and subnormal numbers make every
# later product much slower. Such an entry can never become an argmax.
_TINY = np.finfo(np.float64).tiny


def _to_simplex(Z, smoothing=0.0):
    """Rows of non-negative Z scaled to sum 1; all-zero rows get the uniform strategy.

    ``smoothing`` = α mixes every row with the barycentre: ``(1 − α) x_i + α/k``.
    """
    Z = np.array(Z, dtype=np.float64)      # a copy: the caller's array is never touched
    k = Z.shape[1]
    sums = Z.sum(axis=1)
    zero = sums == 0
    Z[~zero] /= sums[~zero, None]
    Z[zero] = 1.0 / k
    if smoothing:
        Z = (1.0 - smoothing) * Z + smoothing / k
    return Z


def _check_payoff(A, n_players=None, name="the payoff matrix A"):
    """A square, non-negative, finite payoff matrix as CSR (or dense ndarray) float64."""
    if A is None:
        raise ValueError(f"{name} is None: pass a (sparse) matrix of shape (n_players, n_players).")
    A = check_square_nonnegative(
        A, name, square_as="square (one row and column per player)",
        nonnegative_as="be non-negative (replicator dynamics needs non-negative payoffs)")
    if n_players is not None and A.shape[0] != n_players:
        raise ValueError(f"{name} has {A.shape[0]} rows but there are {n_players} players (rows of the strategies).")
    return A


def _check_memberships(Z, n_samples=None, name="memberships"):
    """A finite, non-negative (n_samples, k) float64 ndarray with k >= 2."""
    if Z is None:
        raise ValueError(
            f"{name} is None: pass the soft memberships Z of shape (n_documents, n_clusters), "
            "e.g. NMF(k).fit_transform(X), or an NMF-like estimator.")
    if sp.issparse(Z):
        Z = Z.toarray()
    try:
        Z = np.asarray(Z)
    except Exception as exc:
        raise ValueError(f"{name} could not be read as a 2-D numeric array: {exc}") from None
    if Z.ndim != 2:
        raise ValueError(
            f"{name} must be 2-D (n_documents, n_clusters); got an array with {Z.ndim} "
            "dimension(s). To refine hard labels, one-hot encode them and pass smoothing > 0.")
    Z = check_matrix(Z, name, nonnegative=False, dtype=np.float64)
    if Z.min() < 0:
        raise ValueError(
            f"{name} must be non-negative (a membership is a weight of a cluster); found "
            f"{int(np.count_nonzero(Z < 0))} negative value(s) (min {Z.min():.3g}).")
    if Z.size and not Z.any():
        raise ValueError(
            f"{name} are all zero: no document has a cluster to start from. Pass the "
            "soft memberships of a fit, e.g. NMF(k).fit_transform(X).")
    if Z.shape[1] < 2:
        raise ValueError(
            f"{name} has {Z.shape[1]} column: at least 2 clusters are needed, with a single "
            "cluster there is nothing to refine.")
    if n_samples is not None and Z.shape[0] != n_samples:
        raise ValueError(
            f"{name} has {Z.shape[0]} rows but X has {n_samples} documents: pass one row of "
            "memberships per document.")
    return Z


def replicator_dynamics(A, strategies, *, tol=1e-4, max_iter=10000, callback=None, verbose=0):
    """Discrete replicator dynamics on a graph of players (GT eq. 5-7).

    Every player i plays against its neighbours j with payoff matrix ``a_ij · I_k``:

    - payoff of pure strategy h (eq. 6): ``u_i(e_h) = Σ_j a_ij x_jh = (A X)_ih``;
    - mean payoff (eq. 7): ``u_i(x) = Σ_j x_iᵀ a_ij x_j = x_iᵀ (A X)_i``;
    - update (eq. 5): ``x_ih ← x_ih · u_i(e_h) / u_i(x)`` for every player at once.

    A player with zero mean payoff (no neighbour, or its support disjoint from its
    neighbours' choices) keeps its strategy. For symmetric A the total payoff
    ``tr(Xᵀ A X)`` never decreases (the update is its Baum-Eagon growth transform).

    Parameters
    ----------
    A : sparse matrix or ndarray of shape (n_players, n_players)
        Non-negative payoff weights ``a_ij`` (the scaled similarity graph).
    strategies : array-like of shape (n_players, k)
        Non-negative starting strategies; rows are scaled to sum 1 and all-zero rows start
        at the barycentre ``1/k``. Entries that are 0 stay 0 (eq. 5 is multiplicative).
    tol : float, default=1e-4
        Stop when ``‖X(t) − X(t−1)‖_F`` falls under tol (GT §IV).
    max_iter : int, default=10000
    callback : callable, optional
        Called as ``callback(t, X)`` after iteration t with the current strategies
        (read-only use: do not modify X).
    verbose : int, default=0
        Show a progress bar.

    Returns
    -------
    X : ndarray of shape (n_players, k)
        Final strategies, rows on the simplex.
    n_iter : int
    history : ndarray of shape (n_iter,)
        ``‖X(t) − X(t−1)‖_F`` for t = 1..n_iter.
    converged : bool
    """
    check_nonnegative_float(tol, "tol")
    check_positive_int(max_iter, "max_iter")
    X = _to_simplex(_check_memberships(strategies, name="strategies"))
    A = _check_payoff(A, X.shape[0])
    return _replicate(A, X, tol=tol, max_iter=max_iter, callback=callback, verbose=verbose)


def _replicate(A, X, *, tol, max_iter, callback=None, verbose=0):
    """:func:`replicator_dynamics` on validated input; X (on the simplex) is updated in a copy."""
    product = ThreadedProduct(A)             # A X by row blocks over threads (sparse A)
    history = []
    converged = False
    n_iter = 0
    with progress("GTNMF replicator dynamics", total=max_iter, enabled=verbose > 0) as bar:
        for n_iter in range(1, max_iter + 1):
            Y = product @ X                         # (A X)_ih = u_i(e_h), eq. 6
            Y *= X                                  # x_ih u_i(e_h)
            mean = Y.sum(axis=1)                    # u_i(x), eq. 7
            idle = ~(mean > 0)
            mean[idle] = 1.0
            Y /= mean[:, None]                      # eq. 5
            Y[idle] = X[idle]                       # zero payoff: keep the strategy
            Y[Y < _TINY] = 0.0
            D = Y - X
            np.multiply(D, D, out=D)                # not np.linalg.norm: a BLAS dot on a
            change = float(np.sqrt(D.sum()))        # busy machine wakes its thread pool
            X = Y
            history.append(change)
            if callback is not None:
                callback(n_iter, X)
            bar.advance(1, status=f"change {change:.3g}")
            if change < tol:
                converged = True
                break
    return X, n_iter, np.asarray(history, dtype=np.float64), converged


def _memberships_from_estimator(estimator, X):
    """Soft memberships of the training documents from an NMF-like estimator.

    Unfitted (no ``labels_``): ``estimator.fit_transform(X)``, the NMF pipeline of GT.
    Fitted: ``estimator.transform(X)``, which must return memberships (large = belongs),
    as semnmf's NMF, SemanticNMF (Z with W fixed) and SphericalKMeans (cosine to the
    centroids) do; a transform whose argmax disagrees with ``labels_`` on most documents
    (distances, as scikit-learn's KMeans returns) is refused.
    """
    name = type(estimator).__name__
    if not hasattr(estimator, "labels_"):
        if not hasattr(estimator, "fit_transform"):
            raise ValueError(f"{name} has neither labels_ nor fit_transform: pass the memberships Z as an array.")
        return estimator.fit_transform(X)
    if not hasattr(estimator, "transform"):
        raise ValueError(
            f"fitted {name} has no transform() to give soft memberships (hard labels_ alone are a "
            "fixed point of the replicator dynamics): pass its memberships Z as an array.")
    Z = np.asarray(estimator.transform(X))
    labels = np.asarray(estimator.labels_)
    if Z.ndim == 2 and labels.shape == (Z.shape[0],):
        valid = labels >= 0
        if valid.any() and np.mean(np.argmax(Z[valid], axis=1) == labels[valid]) < 0.5:
            raise ValueError(
                f"{name}.transform(X) does not look like memberships: its argmax agrees with "
                f"labels_ on fewer than half of the documents (distances?). Pass Z explicitly.")
    return Z


class GTNMF(ClusterMixin, BaseEstimator):
    """Game-theoretic refinement of an NMF (or any soft) clustering (GTNMF).

    Tripodi, Vascon & Pelillo (2016), "Context aware nonnegative matrix factorization
    clustering" (GT): the replicator dynamics of :func:`replicator_dynamics` from the
    normalized memberships, on the kNN payoff graph of GT §V-B/C with per-document
    neighbour counts ``q_i = ⌊log₂ |C_i|⌋ + 1`` from the input partition (GT eq. 9).

    Decisions where the paper is silent or ambiguous:

    - the q_i neighbours of document i are its nearest among *all* documents;
    - documents with all-zero memberships start at the uniform strategy; they count as
      the label -1 in eq. 9 (and get the q of eq. 8) and in ``initial_labels_``, and keep
      it if they have no neighbour at all;
    - rule-derived neighbour counts above n − 1 (only possible for n = 2) are clipped.

    Parameters
    ----------
    n_neighbors : int, "log2" or None, default=None
        Neighbours per document. None: GT's per-cluster rule (eq. 9); "log2": one global
        ``⌊log₂ n⌋ + 1`` (eq. 8, the SymNMF graph of GT §V-B); an int: that many.
    metric : {"cosine", "euclidean", "precomputed"}, default="cosine"
        Neighbour search of :func:`knn_graph`; "precomputed" takes X as the n x n
        non-negative similarity graph Ŝ itself (already sparsified), to which only
        ``scaling`` is applied.
    weight : {"auto", "cosine", "self-tuning", "heat", "binary"}, default="auto"
        Edge weights (see :func:`knn_graph`); "auto" is GT's choice: cosine similarity for
        metric="cosine", self-tuning Gaussian kernel for "euclidean".
    symmetrize : {"max", "mean", "min"} or None, default="max"
        "max" is GT's union rule. None keeps the directed kNN graph (player i then only
        listens to its own neighbours).
    scaling : {"ncut"} or None, default="ncut"
        "ncut": ``A = D^{-1/2} Ŝ D^{-1/2}`` (GT §V-B); None: A = Ŝ.
    smoothing : float in [0, 1), default=0.0
        Start from ``(1 − α) x_i + α/k`` instead of x_i, so that a document can choose a
        cluster of zero membership (hard memberships become refinable). 0 is the paper.
    tol : float, default=1e-4
        ε of GT §IV: stop when ``‖X(t) − X(t−1)‖_F < tol`` over the whole profile.
    max_iter : int, default=10000
        Maximum number of replicator iterations.
    verbose : int, default=0
        Show a progress bar on stderr.
    estimator : estimator or None, default=None
        Where the memberships come from when ``fit`` gets none (GTNMF as the last step of
        a :class:`~sklearn.pipeline.Pipeline`): an unfitted estimator is cloned and
        fitted with ``fit_transform(X)``, a fitted one gives ``transform(X)``. k is the
        number of columns of the memberships.

    Attributes
    ----------
    labels_ : ndarray of int64, shape (n_documents,)
        Refined cluster of each document: argmax of its final strategy (-1 see above).
    strategies_ : ndarray of shape (n_documents, k)
        Final mixed strategies (rows on the simplex).
    initial_labels_ : ndarray of int64, shape (n_documents,)
        argmax of the input memberships (-1 for all-zero rows).
    n_changed_ : int
        Number of documents with ``labels_ != initial_labels_``.
    n_iter_ : int
        Replicator iterations run.
    objective_ : float
        Minus the total payoff ``Σ_i x_iᵀ (A X)_i`` of the final strategy profile (lower
        is better), which the dynamics never increase for a symmetric A.
    estimator_ : estimator or None
        The fitted estimator the memberships came from (None when they were given).
    history_ : ndarray of shape (n_iter_,)
        ``‖X(t) − X(t−1)‖_F`` after each iteration.
    converged_ : bool
    payoff_ : scipy.sparse.csr_matrix of shape (n_documents, n_documents)
        The payoff matrix A the games were played on.
    n_neighbors_ : ndarray of int64, shape (n_documents,) or None
        Neighbour count of each document (None for metric="precomputed").
    n_features_in_ : int
        Number of features of X (not set for metric="precomputed").

    Examples
    --------
    >>> from semnmf import NMF, load_dataset
    >>> from semnmf.refine import GTNMF
    >>> X = load_dataset("bbc").tfidf()                       # doctest: +SKIP
    >>> Z = NMF(5, random_state=0).fit_transform(X)           # doctest: +SKIP
    >>> GTNMF().fit(X, memberships=Z).labels_                 # doctest: +SKIP
    >>> from sklearn.pipeline import make_pipeline
    >>> make_pipeline(GTNMF(estimator=NMF(5))).fit(X)       # doctest: +SKIP
    """

    _parameter_constraints: dict = {
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left"),
                        StrOptions({"log2"}), None],
        "metric": [StrOptions(set(METRICS) | {"precomputed"})],
        "weight": [StrOptions(set(WEIGHTS))],
        "symmetrize": [StrOptions({s for s in SYMMETRIZE if s is not None}), None],
        "scaling": [StrOptions({"ncut"}), None],
        "smoothing": [Interval(numbers.Real, 0, 1, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "verbose": ["verbose"],
        "estimator": [HasMethods(["fit_transform"]), HasMethods(["transform"]), None],
    }

    def __init__(self, n_neighbors=None, *, metric="cosine", weight="auto", symmetrize="max",
                 scaling="ncut", smoothing=0.0, tol=1e-4, max_iter=10000, verbose=0,
                 estimator=None):
        self.n_neighbors = n_neighbors
        self.metric = metric
        self.weight = weight
        self.symmetrize = symmetrize
        self.scaling = scaling
        self.smoothing = smoothing
        self.tol = tol
        self.max_iter = max_iter
        self.verbose = verbose
        self.estimator = estimator

    def fit(self, X, y=None, *, memberships=None):
        """Refine ``memberships`` on the similarity graph of X.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_documents, n_features)
            The documents (TF-IDF rows for text), or the n x n similarity graph for
            metric="precomputed".
        y : ignored
            Not used (a Pipeline passes it). In 0.1 the second positional argument was
            ``memberships``: pass them by name, ``fit(X, memberships=Z)``.
        memberships : array-like of shape (n_documents, k), or an estimator
            Non-negative soft memberships, e.g. ``NMF(k).fit_transform(X)`` (rows are
            normalized to the simplex, GT §IV), or an estimator as for ``estimator`` (a
            fitted one's ``transform`` must be memberships: one whose argmax disagrees with
            ``labels_`` on most documents is refused). None: from ``estimator``.

        Returns
        -------
        self
        """
        self._validate_params()
        self.estimator_ = None
        if memberships is None:
            if self.estimator is None:
                raise ValueError("GTNMF needs memberships: pass fit(X, memberships=Z) or "
                                 "set GTNMF(estimator=NMF(k)) to compute them.")
            memberships = self.estimator
            if not hasattr(memberships, "labels_"):       # unfitted: never fit the parameter
                memberships = clone(memberships)
            self.estimator_ = memberships
        if self.metric == "precomputed":
            S = _check_payoff(X, name="X (precomputed similarity graph)")
            n = S.shape[0]
            if hasattr(memberships, "fit_transform") or hasattr(memberships, "labels_"):
                raise ValueError('with metric="precomputed" pass the memberships as an array, not an estimator.')
        else:
            X = validate_data(self, X, reset=True, accept_sparse=("csr", "csc"),
                              dtype=[np.float64, np.float32], ensure_all_finite=False)
            X = check_matrix(X, "X", nonnegative=False)
            n = X.shape[0]
            if memberships is not None and (hasattr(memberships, "fit_transform")
                                            or hasattr(memberships, "labels_")):
                memberships = _memberships_from_estimator(memberships, X)
        Z = _check_memberships(memberships, n)
        if n < 2:
            raise ValueError("at least 2 documents are needed to play games between them.")
        zero = ~np.any(Z > 0, axis=1)
        initial = np.argmax(Z, axis=1).astype(np.int64)
        initial[zero] = -1
        strategies = _to_simplex(Z, self.smoothing)
        if np.all(np.isclose(strategies.max(axis=1), 1.0)):
            warnings.warn(
                "all memberships are hard (one-hot): pure strategies are fixed points of the "
                "replicator dynamics, so nothing can change. Pass soft memberships or smoothing > 0.",
                UserWarning, stacklevel=2)

        if self.metric == "precomputed":
            self.n_neighbors_ = None
            W = S
        else:
            if self.n_neighbors is None:
                q = np.minimum(cluster_log2_neighbors(initial), n - 1)        # eq. 9
            elif self.n_neighbors == "log2":
                q = np.full(n, min(log2_neighbors(n), n - 1), dtype=np.int64)  # eq. 8
            else:
                q = np.full(n, int(self.n_neighbors), dtype=np.int64)
                if self.n_neighbors >= n:
                    raise ValueError(
                        f"n_neighbors={self.n_neighbors} must be smaller than the number of "
                        f"documents ({n}): a document is never its own neighbour.")
            self.n_neighbors_ = q
            W = knn_graph(X, q, metric=self.metric, weight=self.weight, symmetrize=self.symmetrize)
        A = normalized_cut_scaling(W) if self.scaling == "ncut" else sp.csr_matrix(W, dtype=np.float64)
        if not sp.issparse(A):
            A = sp.csr_matrix(A)

        strategies, n_iter, history, converged = _replicate(
            A, strategies, tol=self.tol, max_iter=self.max_iter, verbose=self.verbose)
        if not converged:
            warnings.warn(
                f"Maximum number of iterations {self.max_iter} reached before the change of the "
                f"strategies fell under tol={self.tol} (last change {history[-1]:.3g}). "
                "Increase max_iter to improve convergence.", ConvergenceWarning, stacklevel=2)
        labels = np.argmax(strategies, axis=1).astype(np.int64)
        isolated = np.diff(A.indptr) == 0
        labels[zero & isolated] = -1           # no membership and no neighbour: no cluster

        self.payoff_ = A
        self.strategies_ = strategies
        self.labels_ = labels
        self.initial_labels_ = initial
        self.n_changed_ = int(np.count_nonzero(labels != initial))
        self.n_iter_ = n_iter
        self.objective_ = -float(np.sum(strategies * (A @ strategies)))
        self.history_ = history
        self.converged_ = converged
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        if self.estimator is not None:        # its memberships need what it needs
            tags.input_tags.positive_only = get_tags(self.estimator).input_tags.positive_only
        return tags

    def fit_predict(self, X, y=None, *, memberships=None):
        """Refine and return ``labels_``."""
        return self.fit(X, y, memberships=memberships).labels_

    def fit_transform(self, X, y=None, *, memberships=None):
        """Refine and return ``strategies_`` (n_documents, k): the refined memberships."""
        return self.fit(X, y, memberships=memberships).strategies_


def refine(X, memberships, **params):
    """Function form of :class:`GTNMF`: refine soft memberships on the graph of X.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_documents, n_features)
    memberships : array-like of shape (n_documents, k), or an NMF-like estimator
    **params
        Any :class:`GTNMF` parameter (n_neighbors, metric, weight, symmetrize, scaling,
        smoothing, tol, max_iter, verbose).

    Returns
    -------
    labels : ndarray of int64, shape (n_documents,)
    strategies : ndarray of shape (n_documents, k)
    """
    model = GTNMF(**params).fit(X, memberships=memberships)
    return model.labels_, model.strategies_
