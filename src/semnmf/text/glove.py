"""GloVe word vectors trained on a sparse co-occurrence matrix, and the PGLOVE context matrix.

The Neurocomputing paper (NSF §4.1, §5.4) also tries, as the context matrix M of
Semantic-NMF, GloVe vectors (d' = 100, x_max = 100, α = 3/4, learning rate 0.15) trained on
the corpus co-occurrences, with "all negative entries [...] set to zero": PGLOVE.

GloVe (Pennington, Socher & Manning, EMNLP 2014, eq. (8)) minimizes, over the non-zero
co-occurrences X_ij,

    J = Σ_{X_ij > 0} f(X_ij) (w_iᵀ w̃_j + b_i + b̃_j − log X_ij)²,
    f(x) = (x / x_max)^α if x < x_max else 1                          (eq. (9))

by AdaGrad over the non-zeros in a random order. :func:`_adagrad_epoch` is the training
loop of the reference C code (``glove.c``, ``glove_thread``) pair for pair, including its
departures from textbook AdaGrad: accumulators start at 1 and hold squared *scaled*
gradients (η·g)², added after the step; gradients are clipped to ±``grad_clip`` and
non-finite steps skipped (GloVe 1.2). GloVe 1.2 dropped η from the bias step, which looks
like a slip (the 2014 release and the paper scale every step by η): η is applied here.

``n_jobs=1`` (default) visits the pairs in a seeded order on one thread, so equal
``random_state`` gives equal vectors; ``n_jobs > 1`` is ``glove.c``'s lock-free Hogwild
mode on contiguous slices of the order, faster and not reproducible bit for bit.

Where the paper is silent: ``max_iter=25`` is ``glove.c``'s default; ``vectors="sum"``
uses W + W̃ (``glove.c``'s output and Pennington et al.'s choice, §4.2); the counts of
:meth:`semnmf.Corpus.glove_context` are those of the 10-word window PPMI, without GloVe's
1/distance weighting.

References
----------
.. [NSF] M. Febrissy, A. Salah, M. Ailem, M. Nadif, "Improving NMF clustering by leveraging
   contextual relationships among words", Neurocomputing 495 (2022), §4.1 and §5.4.
.. [GloVe] J. Pennington, R. Socher, C. D. Manning, "GloVe: Global Vectors for Word
   Representation", EMNLP 2014, eq. (8)-(9) and §4.2; reference code ``glove.c``.
"""

import math
import numbers
import time

import numba
import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state

from .._utils.parallel import thread_pool
from .._utils.progress import log
from .._utils.validation import FLOAT_DTYPES, check_matrix, check_positive_int

__all__ = ["GloVe", "glove_context", "glove_weights"]

VECTORS = ("sum", "word")


# ----------------------------------------------------------------------------- kernels


@numba.njit(cache=True, nogil=True)
def _adagrad_epoch(rows, cols, log_x, weight, order, start, stop, W, Wc, bw, bc,
                   GW, GWc, Gbw, Gbc, eta, grad_clip):  # pragma: no cover (compiled)
    """One pass of ``glove.c``'s AdaGrad loop over the pairs ``order[start:stop]``.

    ``rows[e], cols[e], log_x[e], weight[e]`` describe non-zero ``e``: X_ij's row, column,
    log X_ij and f(X_ij). Updates W, Wc (word / context vectors), bw, bc (biases) and their
    squared-gradient accumulators in place. Returns Σ ½ f(X_ij) diff² over the visited pairs,
    each evaluated just before its own step (the cost ``glove.c`` prints).
    """
    k = W.shape[1]
    step1 = np.empty(k, dtype=W.dtype)
    step2 = np.empty(k, dtype=W.dtype)
    cost = 0.0
    for t in range(start, stop):
        e = order[t]
        i = rows[e]
        j = cols[e]
        diff = bw[i] + bc[j] - log_x[e]
        for b in range(k):
            diff += W[i, b] * Wc[j, b]
        fdiff = weight[e] * diff
        if not (math.isfinite(diff) and math.isfinite(fdiff)):
            continue
        cost += 0.5 * fdiff * diff
        total1 = 0.0
        total2 = 0.0
        for b in range(k):
            g1 = min(max(fdiff * Wc[j, b], -grad_clip), grad_clip) * eta
            g2 = min(max(fdiff * W[i, b], -grad_clip), grad_clip) * eta
            step1[b] = g1 / math.sqrt(GW[i, b])
            step2[b] = g2 / math.sqrt(GWc[j, b])
            total1 += step1[b]
            total2 += step2[b]
            GW[i, b] += g1 * g1
            GWc[j, b] += g2 * g2
        if math.isfinite(total1) and math.isfinite(total2):
            for b in range(k):
                W[i, b] -= step1[b]
                Wc[j, b] -= step2[b]
        gb = eta * fdiff
        s1 = gb / math.sqrt(Gbw[i])
        s2 = gb / math.sqrt(Gbc[j])
        if math.isfinite(s1):
            bw[i] -= s1
        if math.isfinite(s2):
            bc[j] -= s2
        Gbw[i] += gb * gb
        Gbc[j] += gb * gb
    return cost


@numba.njit(cache=True, nogil=True)
def _loss(rows, cols, log_x, weight, W, Wc, bw, bc):  # pragma: no cover (compiled)
    """J of GloVe eq. (8): Σ f(X_ij) (w_iᵀw̃_j + b_i + b̃_j − log X_ij)² at fixed parameters."""
    k = W.shape[1]
    total = 0.0
    for e in range(rows.shape[0]):
        i = rows[e]
        j = cols[e]
        diff = bw[i] + bc[j] - log_x[e]
        for b in range(k):
            diff += W[i, b] * Wc[j, b]
        total += weight[e] * diff * diff
    return total


# --------------------------------------------------------------------------- helpers


def glove_weights(x, x_max=100.0, alpha=0.75):
    """GloVe's weighting function f (Pennington et al. eq. (9)), elementwise.

    ``f(x) = (x / x_max)^α`` for ``x < x_max`` and 1 otherwise.
    """
    x = np.asarray(x, dtype=np.float64)
    return np.where(x < x_max, np.power(x / x_max, alpha), 1.0)


def _check_cooccurrence(C, dtype, estimator=None):
    """C as CSR of ``dtype`` with only positive stored entries; clear errors otherwise.

    With an ``estimator``, scikit-learn's ``validate_data`` runs first (its standard
    messages, ``n_features_in_``).
    """
    if estimator is not None:
        from sklearn.utils.validation import validate_data

        C = validate_data(estimator, C, accept_sparse=("csr", "csc", "coo"), dtype=dtype)
    C = check_matrix(C, "C", nonnegative=False, dtype=dtype)
    values = C.data if sp.issparse(C) else C
    if values.size and values.min() < 0:
        raise ValueError(
            f"Negative values in data passed to C: {int(np.count_nonzero(values < 0))} negative "
            f"value(s) (min {values.min():.3g}); C must hold co-occurrence counts >= 0. GloVe fits log C_ij on the positive "
            "counts: pass raw (or distance-weighted) counts, not PMI values.")
    C = sp.csr_matrix(C)
    C.eliminate_zeros()
    if C.nnz == 0:
        raise ValueError("C has no positive entry: GloVe needs at least one co-occurrence.")
    return C


def _check_real(value, name, *, low=0.0, low_open=True):
    ok = (not isinstance(value, bool) and isinstance(value, numbers.Real)
          and np.isfinite(value) and (value > low if low_open else value >= low))
    if not ok:
        sign = ">" if low_open else ">="
        raise ValueError(f"{name} must be a finite number {sign} {low:g}, got {value!r}.")
    return float(value)


# -------------------------------------------------------------------------- estimator


class GloVe(BaseEstimator):
    """GloVe word vectors fitted to a sparse word-context co-occurrence matrix.

    Minimizes J of Pennington et al. eq. (8) by the AdaGrad loop of the reference C code
    (module docstring). Defaults are the Neurocomputing paper's PGLOVE settings (§5.4).

    Parameters
    ----------
    n_components : int, default=100
        Vector dimension k (the paper's d').
    x_max : float, default=100
        Cut-off of the weighting function f (eq. (9)).
    alpha : float, default=0.75
        Exponent of f.
    learning_rate : float, default=0.15
        AdaGrad's initial step η (NSF §5.4 uses 0.15; ``glove.c`` defaults to 0.05).
    max_iter : int, default=25
        Number of epochs (passes over the non-zeros of C; ``glove.c``'s default).
    tol : float, default=0.0
        Stop early when an epoch lowers J by less than ``tol`` times J after the first
        epoch; 0 runs all ``max_iter`` epochs (as ``glove.c``).
    grad_clip : float, default=100.0
        Each coordinate of a vector gradient is clipped to ±``grad_clip`` (GloVe 1.2).
    n_jobs : int, default=1
        1: one thread, reproducible; more: Hogwild threads (module docstring).
    random_state : int, RandomState or None, default=None
        Seeds the initial vectors and the order of the pairs in every epoch.
    dtype : {np.float64, np.float32}, default=np.float64
        Dtype of the parameters and of the computation.
    verbose : int, default=0
        Print J after every epoch.

    Attributes
    ----------
    word_vectors_ : ndarray of shape (n_rows, n_components)
        W, one row per row of C (word).
    context_vectors_ : ndarray of shape (n_cols, n_components)
        W̃, one row per column of C (context).
    word_bias_, context_bias_ : ndarray of shape (n_rows,), (n_cols,)
    loss_history_ : list of float
        J (eq. (8), exact, at the parameters reached) after each epoch.
    loss_ : float
        The last entry of ``loss_history_``.
    n_iter_ : int
        Number of epochs run.
    fit_time_ : float
        Seconds spent in :meth:`fit`.

    Examples
    --------
    >>> import numpy as np
    >>> C = np.array([[0, 8, 1], [8, 0, 1], [1, 1, 0]])
    >>> glove = GloVe(n_components=2, max_iter=5, random_state=0).fit(C)
    >>> glove.word_vectors_.shape, len(glove.loss_history_)
    ((3, 2), 5)
    """

    def __init__(self, n_components=100, *, x_max=100.0, alpha=0.75, learning_rate=0.15,
                 max_iter=25, tol=0.0, grad_clip=100.0, n_jobs=1, random_state=None,
                 dtype=np.float64, verbose=0):
        self.n_components = n_components
        self.x_max = x_max
        self.alpha = alpha
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.tol = tol
        self.grad_clip = grad_clip
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.dtype = dtype
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.positive_only = True
        return tags

    def _check_params(self):
        k = check_positive_int(self.n_components, "n_components")
        max_iter = check_positive_int(self.max_iter, "max_iter")
        n_jobs = check_positive_int(self.n_jobs, "n_jobs")
        x_max = _check_real(self.x_max, "x_max")
        alpha = _check_real(self.alpha, "alpha", low_open=False)
        eta = _check_real(self.learning_rate, "learning_rate")
        tol = _check_real(self.tol, "tol", low_open=False)
        clip = _check_real(self.grad_clip, "grad_clip")
        try:
            dtype = np.dtype(self.dtype) if self.dtype is not None else None
        except TypeError:
            dtype = None
        if dtype not in FLOAT_DTYPES:
            raise ValueError(f"dtype must be np.float64 or np.float32, got {self.dtype!r}.")
        return k, max_iter, n_jobs, x_max, alpha, eta, tol, clip, dtype

    def fit(self, C, y=None):
        """Fit the vectors to the co-occurrence matrix C.

        Parameters
        ----------
        C : sparse matrix or array-like of shape (n_rows, n_cols)
            Non-negative co-occurrence counts X_ij (rows: words, columns: contexts; square
            and symmetric for word-word counts, where both (i, j) and (j, i) are fitted, as
            in ``glove.c``). Only the positive entries enter J.
        y : ignored

        Returns
        -------
        self
        """
        k, max_iter, n_jobs, x_max, alpha, eta, tol, clip, dtype = self._check_params()
        start_time = time.perf_counter()
        C = _check_cooccurrence(C, dtype, estimator=self)
        n_rows, n_cols = C.shape
        coo = C.tocoo()
        index = np.int32 if max(n_rows, n_cols) < np.iinfo(np.int32).max else np.int64
        rows, cols = coo.row.astype(index), coo.col.astype(index)
        log_x = np.log(coo.data).astype(dtype)
        weight = glove_weights(coo.data, x_max, alpha).astype(dtype)
        nnz = rows.size

        rng = check_random_state(self.random_state)
        # glove.c: (rand() / RAND_MAX - 0.5) / vector_size for vectors and biases
        W = ((rng.random_sample((n_rows, k)) - 0.5) / k).astype(dtype)
        Wc = ((rng.random_sample((n_cols, k)) - 0.5) / k).astype(dtype)
        bw = ((rng.random_sample(n_rows) - 0.5) / k).astype(dtype)
        bc = ((rng.random_sample(n_cols) - 0.5) / k).astype(dtype)
        GW, GWc = np.ones_like(W), np.ones_like(Wc)
        Gbw, Gbc = np.ones_like(bw), np.ones_like(bc)
        eta_, clip_ = dtype.type(eta), dtype.type(clip)

        history = []
        pool = thread_pool(n_jobs) if n_jobs > 1 and nnz >= 2 * n_jobs else None
        for epoch in range(max_iter):
            order = rng.permutation(nnz).astype(np.int64)
            if pool is None:
                _adagrad_epoch(rows, cols, log_x, weight, order, 0, nnz, W, Wc, bw, bc,
                               GW, GWc, Gbw, Gbc, eta_, clip_)
            else:  # Hogwild: threads on contiguous slices of the order, shared arrays
                bounds = np.linspace(0, nnz, n_jobs + 1).astype(np.int64)
                futures = [pool.submit(_adagrad_epoch, rows, cols, log_x, weight, order,
                                       bounds[t], bounds[t + 1], W, Wc, bw, bc, GW, GWc,
                                       Gbw, Gbc, eta_, clip_) for t in range(n_jobs)]
                for future in futures:
                    future.result()
            history.append(float(_loss(rows, cols, log_x, weight, W, Wc, bw, bc)))
            log(f"GloVe epoch {epoch + 1:02d} after {time.perf_counter() - start_time:.3f} s, "
                f"loss J = {history[-1]:.6g}", bool(self.verbose))
            if not np.isfinite(history[-1]):
                raise FloatingPointError(
                    f"GloVe diverged at epoch {epoch + 1} (loss {history[-1]}); lower "
                    f"learning_rate (now {eta}) or grad_clip (now {clip}).")
            if (tol > 0 and len(history) > 1
                    and history[-2] - history[-1] < tol * history[0]):
                break

        self.word_vectors_, self.context_vectors_ = W, Wc
        self.word_bias_, self.context_bias_ = bw, bc
        self.loss_history_ = history
        self.loss_ = history[-1]
        self.n_iter_ = len(history)
        self.fit_time_ = time.perf_counter() - start_time
        return self

    def embedding(self, vectors="sum"):
        """The fitted word embedding: W + W̃ (``vectors="sum"``, needs a square C) or W.

        Returns
        -------
        E : ndarray of shape (n_rows, n_components)
        """
        if not hasattr(self, "word_vectors_"):
            raise ValueError("this GloVe instance is not fitted yet; call fit(C) first.")
        if vectors not in VECTORS:
            raise ValueError(f"vectors must be one of {VECTORS}, got {vectors!r}.")
        if vectors == "word":
            return self.word_vectors_.copy()
        if self.word_vectors_.shape[0] != self.context_vectors_.shape[0]:
            raise ValueError(
                f"vectors='sum' adds word and context vectors of the same word, so C must be "
                f"square; it was {self.word_vectors_.shape[0]} x "
                f"{self.context_vectors_.shape[0]}. Use vectors='word'.")
        return self.word_vectors_ + self.context_vectors_


def glove_context(C, n_components=100, *, x_max=100.0, alpha=0.75, learning_rate=0.15,
                  max_iter=25, tol=0.0, grad_clip=100.0, vectors="sum", n_jobs=1,
                  random_state=None, dtype=np.float64, verbose=0, return_model=False):
    """PGLOVE: the non-negative GloVe word-context matrix M of Semantic-NMF (NSF §5.4).

    Fits :class:`GloVe` to the co-occurrence counts C and returns ::

        M = max(W + W̃, 0)        (vectors="sum", default)   or   max(W, 0)   (vectors="word")

    of shape (d, d') with d' = ``n_components``, to pass as ``SemanticNMF().fit(X, M=M)``
    (NSF eq. (4)-(5) with d' ≠ d; which vectors the paper clips: module docstring).

    Parameters
    ----------
    C : sparse matrix or array-like of shape (d, d)
        Non-negative word-word co-occurrence counts (e.g.
        :func:`semnmf.text.context.cooccurrence`).
    n_components, x_max, alpha, learning_rate, max_iter, tol, grad_clip, n_jobs, random_state,
    dtype, verbose : see :class:`GloVe`.
    vectors : {"sum", "word"}, default="sum"
    return_model : bool, default=False
        Also return the fitted :class:`GloVe` (training time, loss history).

    Returns
    -------
    M : ndarray of shape (d, n_components), non-negative
    model : GloVe, only with ``return_model=True``

    Examples
    --------
    >>> import numpy as np
    >>> C = np.array([[0, 8, 1], [8, 0, 1], [1, 1, 0]])
    >>> M = glove_context(C, n_components=4, max_iter=3, random_state=0)
    >>> M.shape, bool(M.min() >= 0)
    ((3, 4), True)
    """
    if vectors not in VECTORS:
        raise ValueError(f"vectors must be one of {VECTORS}, got {vectors!r}.")
    model = GloVe(n_components, x_max=x_max, alpha=alpha, learning_rate=learning_rate,
                  max_iter=max_iter, tol=tol, grad_clip=grad_clip, n_jobs=n_jobs,
                  random_state=random_state, dtype=dtype, verbose=verbose)
    if vectors == "sum":  # check the shape before training
        shape = C.shape if hasattr(C, "shape") else np.shape(C)
        if len(shape) == 2 and shape[0] != shape[1]:
            raise ValueError(
                f"vectors='sum' needs a square word-word matrix C, got shape {tuple(shape)}; "
                "use vectors='word' for a rectangular word-context matrix.")
    model.fit(C)
    M = np.maximum(model.embedding(vectors), 0)
    return (M, model) if return_model else M
