"""The estimators on row blocks: NMF / SemanticNMF fitted by the blocked (Dask) sweep of
:mod:`semnmf.models._solvers.distributed` (Frobenius loss) or
:mod:`semnmf.models._solvers.distributed_kl` (``loss="kl"``), with its start.

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
"""

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from .._utils.blocks import BlockedMatrix
from .._utils.parallel import scipy_path
from .._utils.progress import log
from ._solvers import mu as _mu
from ._solvers.distributed import (BlockedFrobeniusProblem, _assign_sums, _assign, _cut,
                                   _facts, _labels_and_strengths, _rows, _scale,
                                   _squares)
from ._solvers.distributed_kl import BlockedKLProblem

# Largest corpus (non-zeros of X) whose start is computed on the client, identical to the
# local engine's (12 bytes a non-zero: 5M non-zeros are 60 MB).
CLIENT_START_MAX_NNZ = 5_000_000
SAMPLE_DOCUMENTS = 20_000
START_LLOYD_SWEEPS = 3


def _start_block(Xb, centers):
    from .init import _factors

    labels, _ = _assign(Xb, centers)
    return _factors(labels, centers, Xb.dtype)[0]


def sample_start(X, n_components, rng, n_documents=SAMPLE_DOCUMENTS,
                 sweeps=START_LLOYD_SWEEPS, n_restarts=None):
    """Spherical k-means start computed in blocks (see the module docstring): ``(Z_blocks,
    W)``."""
    from .init import SKMEANS_RESTARTS, _factors
    from .skmeans import SphericalKMeans

    n = X.shape[0]
    size = min(n, n_documents)
    chosen = np.sort(rng.choice(n, size=size, replace=False))
    offsets = X.offsets
    picks = [chosen[(chosen >= a) & (chosen < b)] - a for a, b in zip(offsets[:-1], offsets[1:])]
    sample = sp.vstack(X.executor.gather(X.executor.map2(_rows, X.blocks, picks)), format="csr")
    sample = sample[np.diff(sample.indptr) > 0]
    with scipy_path():  # no numba on the client; the same start up to last-bit rounding
        km = SphericalKMeans(n_components, n_init=n_restarts or SKMEANS_RESTARTS,
                             random_state=rng).fit(sample)
    centers = km.cluster_centers_.astype(np.float64)
    for _ in range(sweeps):
        sums = X.executor.reduce(X.map(_assign_sums, centers))
        norms = np.linalg.norm(sums, axis=1)
        kept = norms > 0
        centers[kept] = sums[kept] / norms[kept, None]
    Z = X.map(_start_block, centers)
    return Z, _factors(np.empty(0, dtype=np.int64), centers, X.dtype)[1]


def blocked_start(X, n_components, strategy, rng, Z0=None, W0=None, n_restarts=None):
    """Starting ``(Z_blocks, W)`` of a run (see the module docstring); ``n_restarts``: of
    the spherical k-means (:func:`~semnmf.models.init.start_restarts`; default 10)."""
    from .init import SKMEANS_RESTARTS, initialize

    n_restarts = n_restarts or SKMEANS_RESTARTS

    if strategy == "custom":
        return _cut(Z0.copy(), X), W0.copy()
    nnz = X.executor.reduce(X.map(_facts))[1]
    if strategy == "skmeans" and nnz > CLIENT_START_MAX_NNZ:
        log(f"start: spherical k-means of {min(SAMPLE_DOCUMENTS, X.shape[0])} sampled "
            f"documents, then {START_LLOYD_SWEEPS} Lloyd sweeps over the blocks", False)
        return sample_start(X, n_components, rng, n_restarts=n_restarts)
    with scipy_path():  # no numba on the client; the same start up to last-bit rounding
        Z, W = initialize(X.gather(), n_components, strategy, rng, n_restarts=n_restarts)
    return _cut(Z, X), W


# -- the fit -------------------------------------------------------------------------------
class BlockedFit:
    """The result of :func:`fit_blocked`: the kept run's problem and its summary."""

    def __init__(self, problem, n_iter, history, norms, errors, labels, strengths):
        self.problem, self.n_iter, self.history = problem, n_iter, history
        self.norms, self.errors, self.labels = norms, errors, labels
        # each document's share of its cluster in its row of Z, computed on the workers
        self.strengths = strengths

    def Z(self):
        """Z (n x k) gathered on the client."""
        ex = self.problem.ex
        return np.vstack(ex.gather(self.problem.Z))


def check_blocked(X, dtype_name="X"):
    """``(‖X‖², nnz, ΣX)`` of a blocked X, refusing negative or non-finite values."""
    facts = X.executor.gather(X.map(_facts))
    if not all(f[3] for f in facts):
        raise ValueError(f"{dtype_name} contains NaN or infinity.")
    if min(f[2] for f in facts) < 0:
        raise ValueError(f"{dtype_name} has negative entries; the factorization needs a "
                         "non-negative matrix.")
    sq = total = 0.0
    for f in facts:
        sq += f[0]
        total += f[4]
    return sq, sum(f[1] for f in facts), total


def fit_blocked(X, n_components, *, M=None, lam=0.0, loss="frobenius", start=None, n_init=1,
                max_iter=200, tol=1e-4, random_state=None, verbose=0, name="NMF", sums=None,
                screen_iter=None):
    """:func:`semnmf.models.nmf._fit_factors` on a :class:`BlockedMatrix`: restarts of the
    distributed sweep (Frobenius, :mod:`._solvers.distributed`, or generalized KL,
    :mod:`._solvers.distributed_kl`), best run kept, Z normalized to unit-length columns,
    labels (argmax of each row of Z, -1 for documents without a term) computed in the
    blocks. ``lam`` is the effective (absolute) λ; ``sums`` is :func:`check_blocked`'s
    (‖X‖², nnz, ΣX), computed (and X checked) when not given."""
    from .init import initialize_context_factor, start_restarts

    rng = check_random_state(random_state)
    Mt = None
    if M is not None:
        from ._solvers.frobenius import product_operator, transpose_csr  # here: workers
        # import this module for its block tasks and need no numba (see
        # _solvers.distributed); nor does the client of a fit without M
        Mt = transpose_csr(M)
        context_product = product_operator(Mt)  # as the local engine (nmf._fit_factors)
    strategy, Z0, W0 = start if start is not None else ("skmeans", None, None)
    sqX, nnz, total = check_blocked(X) if sums is None else sums
    restarts = start_restarts(n_init, screen_iter)

    def new_problem(run):
        Z, W = blocked_start(X, n_components, strategy, rng, Z0, W0, n_restarts=restarts)
        Q = initialize_context_factor(context_product @ W, W) if M is not None else None
        if loss == "kl":
            return BlockedKLProblem(X, Z, W, M=M, Q=Q, lam=lam, Mt=Mt, total=total, nnz=nnz)
        return BlockedFrobeniusProblem(X, Z, W, M=M, Q=Q, lam=lam, Mt=Mt, sqX=sqX)

    problem, n_iter, history = _mu.best_of_runs(new_problem, n_init=n_init, max_iter=max_iter,
                                                tol=tol, verbose=verbose, name=name,
                                                screen_iter=screen_iter)
    errors = tuple(float(np.sqrt(2 * t)) for t in problem.terms())
    ex = problem.ex
    norms = np.sqrt(ex.reduce(ex.map(_squares, problem.Z)))
    norms[norms == 0] = 1.0
    problem.Z = ex.map(_scale, problem.Z, norms)
    problem.W *= norms
    if M is not None:
        problem.Q /= norms
    parts = ex.gather(ex.map2(_labels_and_strengths, problem.Z, X.blocks))
    labels = np.concatenate([part[0] for part in parts])
    strengths = np.concatenate([part[1] for part in parts])
    return BlockedFit(problem, n_iter, history, norms, errors, labels, strengths)


def fit_estimator(estimator, X, M=None, client=None, *, gather=True):
    """``estimator.fit_transform`` for X given as row blocks (NMF and SemanticNMF): sets
    the same fitted attributes as the local engine and returns Z (gathered), or with
    ``gather=False`` the :class:`BlockedFit`, whose Z stays on the workers (its
    ``labels`` and ``strengths`` are on the client: 16 bytes a document, not 8 k)."""
    from .._utils.validation import check_matrix, check_n_components
    from .init import resolve_start

    X = BlockedMatrix.from_input(X, client)
    estimator._validate_params()
    loss = getattr(estimator, "loss", "frobenius")
    if getattr(estimator, "orthogonal", False):
        raise ValueError("the blocked (Dask) engine runs the plain updates (Frobenius or KL); "
                         "orthogonal=True runs on the local engine only: pass X as one "
                         "matrix.")
    n, d = X.shape
    check_n_components(estimator.n_components, n)
    sums = check_blocked(X)
    lam = 0.0
    if hasattr(estimator, "lam"):
        from ..text.shards import blocked_word_context
        from .semantic import check_effective, check_lam

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
        else:  # semantic.effective_lambda, with X's sizes summed over the blocks
            if loss == "kl":
                size_X = sums[2]
                size_M = float(np.sum(M.data if sp.issparse(M) else M, dtype=np.float64))
            else:
                size_X, size_M = sums[0], _mu.squared_norm(M)
            lam = 0.0 if size_M == 0 else check_effective(
                float(estimator.lam) * size_X / size_M, estimator.lam)
    elif M is not None:
        raise TypeError(f"{type(estimator).__name__} takes no word-context matrix M.")
    estimator.n_features_in_ = d
    log(f"{type(estimator).__name__}: {n} documents in {len(X)} blocks, "
        f"{X.executor.name} engine", estimator.verbose > 0)
    result = fit_blocked(X, estimator.n_components, M=M, lam=lam, loss=loss,
                         start=resolve_start(estimator, (n, d), dtype=X.dtype),
                         n_init=estimator.n_init, max_iter=estimator.max_iter,
                         tol=estimator.tol, random_state=estimator.random_state,
                         verbose=estimator.verbose, name=type(estimator).__name__, sums=sums,
                         screen_iter=estimator.screen_iter)
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
    return result.Z() if gather else result
