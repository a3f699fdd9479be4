"""The Frobenius problem (NMF, Semantic-NMF) on a matrix held as row blocks: the same
sweep as :mod:`.frobenius`, distributed by documents (the Dask engine).

One sweep of updates (7a)-(7c) (see :mod:`.frobenius` for the equations) splits as::

    on the workers, block b (documents of the block, X_b of shape (n_b, d)):
        Z_b ← Z_b ⊙ X_b W / (Z_b WᵀW + ε)                        (7a), local to the block
        S_b = X_bᵀ Z_b  (d x k),   G_b = Z_bᵀ Z_b  (k x k)         partial statistics
    tree reduction (fan-in 8):   XᵀZ = Σ_b S_b,   ZᵀZ = Σ_b G_b
    on the client (d x k and k x k quantities, and the word-context matrix M):
        W ← W ⊙ (XᵀZ + λ M Q) / (W (ZᵀZ + λ QᵀQ) + ε)            (7b)
        Q ← Q ⊙ MᵀW / (Q WᵀW + ε)                                 (7c)
    broadcast W (and WᵀW) to the workers for the next sweep.

The objective (5) comes from the same trace identity as the local engine,
½(‖X‖² − 2 tr(Wᵀ XᵀZ) + tr(WᵀW ZᵀZ)), with ‖X‖² = Σ_b ‖X_b‖² computed once: no sweep
ever forms Z Wᵀ, and the only traffic per sweep is W out (d x k) and one d x k + k x k
partial per block back. The word-context term lives on the client: M (d x d') is a word
matrix, as large as the vocabulary, not as the corpus.

These are the iterates of the local engine: every operation is the one of
:class:`~.frobenius.FrobeniusProblem` in the same order; only the sums over documents
(XᵀZ, ZᵀZ, ‖X‖²) are associated differently (block partial sums, then the sum of the
partials), which changes the last bits of the iterates, not the algorithm.

Start. ``init="skmeans"`` (the default) starts from spherical k-means, as the local
engine. When the corpus is small enough to be brought to the client (at most
:data:`CLIENT_START_MAX_NNZ` non-zeros), the blocks are gathered and the start is computed
there by :func:`semnmf.models.init.initialize` with the same random generator: the same
start as the local engine, so the same iterates. Above that size the start is computed in
blocks: spherical k-means (10 restarts) on a uniform sample of :data:`SAMPLE_DOCUMENTS`
documents, then :data:`START_LLOYD_SWEEPS` Lloyd sweeps over all the blocks (assignments
local to a block, centroid sums reduced), then Z_b = one-hot + 0.2 and W = centroids as in
:func:`semnmf.models.init.factors_from_skmeans`. ``init="random"`` / ``"nndsvda"`` gather X
to the client (small corpora only); ``init=(Z, W)`` is cut into the blocks.

Not distributed: ``loss="kl"`` and ``orthogonal=True`` (refused with a clear message).
"""

import numpy as np
import scipy.sparse as sp
from sklearn.preprocessing import normalize
from sklearn.utils import check_random_state

from ..._utils.blocks import BlockedMatrix
from ..._utils.parallel import RowBlocked
from ..._utils.progress import log
from ..._utils.validation import empty_rows
from . import mu as _mu
from .frobenius import transpose_csr
from .mu import EPSILON, trace_residual

# Largest corpus (non-zeros of X) whose start is computed on the client, identical to the
# local engine's (12 bytes a non-zero: 20M non-zeros are 240 MB).
CLIENT_START_MAX_NNZ = 20_000_000
SAMPLE_DOCUMENTS = 20_000
START_LLOYD_SWEEPS = 3


# -- block tasks (module level: they travel to the workers) -----------------------------
def _facts(Xb):
    """(‖X_b‖², nnz, smallest value, all finite) of a block."""
    data = np.asarray(Xb.data, dtype=np.float64)
    return (float(data @ data), int(Xb.nnz), float(data.min()) if data.size else 0.0,
            bool(np.isfinite(data).all()))


def _z_update(Xb, Zb, shared):
    W, WtW = shared
    XW = np.asarray(Xb @ W)
    return Zb * (XW / (Zb @ WtW + EPSILON))                          # (7a)


def _statistics(Xb, Zb):
    return np.asarray(Xb.T @ Zb), Zb.T @ Zb


def _scale(Zb, norms):
    return Zb / norms


def _squares(Zb):
    return np.sum(Zb * Zb, axis=0)


def _labels(Zb, Xb):
    labels = np.argmax(Zb, axis=1).astype(np.int64)
    labels[empty_rows(Xb)] = -1
    return labels


def _split(Zb, *_):
    return Zb


def _rows(Xb, index):
    return Xb[index]


def _assign(Xb, centers):
    """Spherical assignment of a block: labels (-1 for empty rows) and the sums of the
    normalized rows per cluster."""
    Xn = normalize(Xb, norm="l2", axis=1)
    similarity = np.asarray(Xn @ centers.T)
    labels = np.argmax(similarity, axis=1).astype(np.int64)
    labels[np.diff(Xn.indptr) == 0] = -1
    assigned = np.flatnonzero(labels >= 0)
    H = sp.csr_matrix((np.ones(assigned.size), (labels[assigned], assigned)),
                      shape=(centers.shape[0], Xb.shape[0]))
    return labels, np.asarray((H @ Xn).todense())


def _assign_sums(Xb, centers):
    return _assign(Xb, centers)[1]


def _start_block(Xb, centers):
    from ..init import _factors

    labels, _ = _assign(Xb, centers)
    return _factors(labels, centers, Xb.dtype)[0]


# -- the problem -------------------------------------------------------------------------
class BlockedFrobeniusProblem:
    """:class:`~.frobenius.FrobeniusProblem` (plain updates, ``orthogonal=False``) on a
    :class:`~semnmf._utils.blocks.BlockedMatrix`: ``Z`` is the list of the blocks' Z_b
    (arrays or futures), W and Q live here."""

    def __init__(self, X, Z, W, M=None, Q=None, lam=0.0, Mt=None, sqX=None):
        self.X = X
        self.ex = X.executor
        self.Z, self.W = list(Z), W
        self.sqX = sqX if sqX is not None else self.ex.reduce(X.map(_facts))[0]
        self.lam = float(lam)
        self.M = None
        if M is not None:
            self.M = RowBlocked(M)
            self.Mt = RowBlocked(transpose_csr(M) if Mt is None else Mt)
            self.Q = Q
            self.sqM = _mu.squared_norm(M)
            self.MtW = self.Mt @ W
        self.XtZ, self.ZtZ = self.ex.reduce(self.ex.map2(_statistics, X.blocks, self.Z))

    def _data_term(self, WtW):
        return trace_residual(self.sqX, self.W, self.XtZ, WtW, self.ZtZ)

    def _context_term(self, WtW):
        return trace_residual(self.sqM, self.Q, self.MtW, WtW, self.Q.T @ self.Q)

    def objective(self):
        WtW = self.W.T @ self.W
        value = self._data_term(WtW)
        if self.M is not None and self.lam > 0:
            value += self.lam * self._context_term(WtW)
        return value

    def terms(self):
        WtW = self.W.T @ self.W
        return self._data_term(WtW), (self._context_term(WtW) if self.M is not None else 0.0)

    def step(self):
        W = self.W
        shared = self.ex.share((W, W.T @ W))
        old, self.Z = self.Z, self.ex.map2(_z_update, self.X.blocks, self.Z, shared)   # (7a)
        self.ex.release(old)
        self.XtZ, self.ZtZ = self.ex.reduce(self.ex.map2(_statistics, self.X.blocks, self.Z))
        ZtZ = self.ZtZ
        if self.M is not None and self.lam > 0:
            numerator = self.XtZ + self.lam * (self.M @ self.Q)
            W *= numerator / (W @ (ZtZ + self.lam * (self.Q.T @ self.Q)) + EPSILON)  # (7b)
        else:
            W *= self.XtZ / (W @ ZtZ + EPSILON)                                     # (7b)
        if self.M is not None:
            WtW = W.T @ W
            self.MtW = self.Mt @ W
            self.Q *= self.MtW / (self.Q @ WtW + EPSILON)                           # (7c)
        return self.objective()


# -- starts --------------------------------------------------------------------------------
def _cut(Z, X):
    offsets = X.offsets
    parts = [np.ascontiguousarray(Z[a:b]) for a, b in zip(offsets[:-1], offsets[1:])]
    if X.executor.name == "dask":
        return X.executor.client.scatter(parts, hash=False)
    return parts


def sample_start(X, n_components, rng, n_documents=SAMPLE_DOCUMENTS,
                 sweeps=START_LLOYD_SWEEPS):
    """Spherical k-means start computed in blocks (see the module docstring): ``(Z_blocks,
    W)``."""
    from ..init import SKMEANS_RESTARTS, _factors
    from ..skmeans import SphericalKMeans

    n = X.shape[0]
    size = min(n, n_documents)
    chosen = np.sort(rng.choice(n, size=size, replace=False))
    offsets = X.offsets
    picks = [chosen[(chosen >= a) & (chosen < b)] - a for a, b in zip(offsets[:-1], offsets[1:])]
    sample = sp.vstack(X.executor.gather(X.executor.map2(_rows, X.blocks, picks)), format="csr")
    sample = sample[np.diff(sample.indptr) > 0]
    km = SphericalKMeans(n_components, n_init=SKMEANS_RESTARTS, random_state=rng).fit(sample)
    centers = km.cluster_centers_.astype(np.float64)
    for _ in range(sweeps):
        sums = X.executor.reduce(X.map(_assign_sums, centers))
        norms = np.linalg.norm(sums, axis=1)
        kept = norms > 0
        centers[kept] = sums[kept] / norms[kept, None]
    Z = X.map(_start_block, centers)
    return Z, _factors(np.empty(0, dtype=np.int64), centers, X.dtype)[1]


def blocked_start(X, n_components, strategy, rng, Z0=None, W0=None):
    """Starting ``(Z_blocks, W)`` of a run (see the module docstring)."""
    from ..init import initialize

    if strategy == "custom":
        return _cut(Z0.copy(), X), W0.copy()
    nnz = X.executor.reduce(X.map(_facts))[1]
    if strategy == "skmeans" and nnz > CLIENT_START_MAX_NNZ:
        log(f"start: spherical k-means of {min(SAMPLE_DOCUMENTS, X.shape[0])} sampled "
            f"documents, then {START_LLOYD_SWEEPS} Lloyd sweeps over the blocks", False)
        return sample_start(X, n_components, rng)
    Z, W = initialize(X.gather(), n_components, strategy, rng)
    return _cut(Z, X), W


# -- the fit -------------------------------------------------------------------------------
class BlockedFit:
    """The result of :func:`fit_blocked`: the kept run's problem and its summary."""

    def __init__(self, problem, n_iter, history, norms, errors, labels):
        self.problem, self.n_iter, self.history = problem, n_iter, history
        self.norms, self.errors, self.labels = norms, errors, labels

    def Z(self):
        """Z (n x k) gathered on the client."""
        ex = self.problem.ex
        return np.vstack(ex.gather(self.problem.Z))


def check_blocked(X, dtype_name="X"):
    """``(‖X‖², nnz)`` of a blocked X, refusing negative or non-finite values."""
    facts = X.executor.gather(X.map(_facts))
    if not all(f[3] for f in facts):
        raise ValueError(f"{dtype_name} contains NaN or infinity.")
    if min(f[2] for f in facts) < 0:
        raise ValueError(f"{dtype_name} has negative entries; the factorization needs a "
                         "non-negative matrix.")
    sq = 0.0
    for f in facts:
        sq += f[0]
    return sq, sum(f[1] for f in facts)


def fit_blocked(X, n_components, *, M=None, lam=0.0, start=None, n_init=1, max_iter=200,
                tol=1e-4, random_state=None, verbose=0, name="NMF", sqX=None):
    """:func:`semnmf.models.nmf._fit_factors` on a :class:`BlockedMatrix`: restarts of the
    distributed sweep, best run kept, Z normalized to unit-length columns, labels (argmax
    of each row of Z, -1 for documents without a term) computed in the blocks."""
    rng = check_random_state(random_state)
    Mt = transpose_csr(M) if M is not None else None
    strategy, Z0, W0 = start if start is not None else ("skmeans", None, None)
    if sqX is None:
        sqX = check_blocked(X)[0]

    def new_problem(run):
        from ..init import initialize_context_factor

        Z, W = blocked_start(X, n_components, strategy, rng, Z0, W0)
        Q = initialize_context_factor(Mt @ W, W) if M is not None else None
        return BlockedFrobeniusProblem(X, Z, W, M=M, Q=Q, lam=lam, Mt=Mt, sqX=sqX)

    problem, n_iter, history = _mu.best_of_runs(new_problem, n_init=n_init, max_iter=max_iter,
                                                tol=tol, verbose=verbose, name=name)
    errors = tuple(float(np.sqrt(2 * t)) for t in problem.terms())
    ex = problem.ex
    norms = np.sqrt(ex.reduce(ex.map(_squares, problem.Z)))
    norms[norms == 0] = 1.0
    problem.Z = ex.map(_scale, problem.Z, norms)
    problem.W *= norms
    if M is not None:
        problem.Q /= norms
    labels = np.concatenate(ex.gather(ex.map2(_labels, problem.Z, X.blocks)))
    return BlockedFit(problem, n_iter, history, norms, errors, labels)


def fit_estimator(estimator, X, M=None, client=None):
    """``estimator.fit_transform`` for X given as row blocks (NMF and SemanticNMF): sets
    the same fitted attributes as the local engine and returns Z (gathered)."""
    from ..._utils.validation import check_matrix, check_n_components
    from ..init import resolve_start

    X = BlockedMatrix.from_input(X, client)
    estimator._validate_params()
    if getattr(estimator, "loss", "frobenius") != "frobenius" or getattr(
            estimator, "orthogonal", False):
        raise ValueError("the blocked (Dask) engine runs the Frobenius updates (7a)-(7c); "
                         "loss='kl' and orthogonal=True run on the local engine only: pass X "
                         "as one matrix.")
    n, d = X.shape
    check_n_components(estimator.n_components, n)
    sqX, _ = check_blocked(X)
    lam = 0.0
    if hasattr(estimator, "lam"):
        from ...text.shards import blocked_word_context
        from ..semantic import check_effective, check_lam

        check_lam(estimator.lam, estimator.lam_scale)
        if M is None:
            M = blocked_word_context(X)
        else:
            M = check_matrix(M, "M", dtype=X.dtype)
            if M.shape[0] != d:
                raise ValueError(f"M has {M.shape[0]} rows but X has {d} terms: M must be "
                                 "(n_terms, n_contexts) over the same vocabulary as X's "
                                 "columns.")
        if estimator.lam_scale == "absolute":
            lam = float(estimator.lam)
        else:
            sqM = _mu.squared_norm(M)
            lam = 0.0 if sqM == 0 else check_effective(float(estimator.lam) * sqX / sqM,
                                                       estimator.lam)
    elif M is not None:
        raise TypeError(f"{type(estimator).__name__} takes no word-context matrix M.")
    estimator.n_features_in_ = d
    log(f"{type(estimator).__name__}: {n} documents in {len(X)} blocks, "
        f"{X.executor.name} engine", estimator.verbose > 0)
    result = fit_blocked(X, estimator.n_components, M=M, lam=lam,
                         start=resolve_start(estimator, (n, d), dtype=X.dtype),
                         n_init=estimator.n_init, max_iter=estimator.max_iter,
                         tol=estimator.tol, random_state=estimator.random_state,
                         verbose=estimator.verbose, name=type(estimator).__name__, sqX=sqX)
    problem = result.problem
    estimator.reconstruction_err_, estimator.context_err_ = result.errors
    estimator.components_ = problem.W.T.copy()
    if M is not None:
        estimator.context_components_ = problem.Q.T.copy()
    estimator.n_components_ = estimator.n_components
    estimator.n_iter_ = result.n_iter
    estimator.objective_ = result.history[-1]
    estimator.objective_history_ = np.asarray(result.history)
    estimator.lambda_ = lam
    estimator.labels_ = result.labels
    estimator.engine_ = X.executor.name
    return result.Z()
