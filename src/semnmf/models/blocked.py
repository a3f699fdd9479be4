"""The blocked engine: a fit on row blocks (threads in this process or Dask workers) by the sweep of
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

from .._utils.blocks import BlockedMatrix
from .._utils.parallel import scipy_path
from .._utils.progress import log
from ._solvers.distributed import (BlockedFrobeniusProblem, _assign_sums, _assign, _cut,
                                   _facts, _labels_and_strengths, _rows, _scale,
                                   _squares)
from ._solvers.distributed_kl import BlockedKLProblem
from .engine import Backend, run_engine

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


# -- the engine ----------------------------------------------------------------------------
def check_blocked(X, name="X"):
    """``(‖X‖², nnz, ΣX)`` of a blocked X, refusing negative or non-finite values."""
    facts = X.executor.gather(X.map(_facts))
    if not all(f[3] for f in facts):
        raise ValueError(f"{name} contains NaN or infinity.")
    if min(f[2] for f in facts) < 0:
        raise ValueError(f"{name} has negative entries; the factorization needs a "
                         "non-negative matrix.")
    sq = total = 0.0
    for f in facts:
        sq += f[0]
        total += f[4]
    return sq, sum(f[1] for f in facts), total


class BlockedBackend(Backend):
    """Row blocks (threads or Dask workers, by the matrix's executor): the distributed
    sweep of ``problem.loss``, the start of :func:`blocked_start`; normalization, labels
    and strengths computed in the blocks."""

    def __init__(self, problem):
        from .init import initialize_context_factor

        self.problem = problem
        X, M = problem.X, problem.M
        self.name = f"blocked:{X.executor.name}"
        self.initialize_context_factor = initialize_context_factor
        self.Mt = None
        if M is not None:
            from ._solvers.sparse import product_operator, transpose_csr  # here: workers
            # import this module for its block tasks and need no numba (see
            # _solvers.distributed); nor does the client of a fit without M
            self.Mt = transpose_csr(M)
            self.context_product = product_operator(self.Mt)  # as the local engine
        self.sizes = check_blocked(X) if problem.data_sizes is None else problem.data_sizes

    def start(self, rng, restarts):
        problem = self.problem
        strategy, Z0, W0 = problem.start
        return blocked_start(problem.X, problem.n_components, strategy, rng, Z0, W0,
                             n_restarts=restarts)

    def new_run(self, Z, W):
        X, M, lam = self.problem.X, self.problem.M, self.problem.effective_lambda
        sqX, nnz, total = self.sizes
        Q = (self.initialize_context_factor(self.context_product @ W, W) if M is not None
             else None)
        if self.problem.loss == "kl":
            return BlockedKLProblem(X, Z, W, M=M, Q=Q, lam=lam, Mt=self.Mt, total=total,
                                    nnz=nnz)
        return BlockedFrobeniusProblem(X, Z, W, M=M, Q=Q, lam=lam, Mt=self.Mt, sqX=sqX)

    def finish(self, run):
        ex = run.ex
        norms = np.sqrt(ex.reduce(ex.map(_squares, run.Z)))
        norms[norms == 0] = 1.0
        run.Z = ex.map(_scale, run.Z, norms)
        run.W *= norms
        if self.problem.M is not None:
            run.Q /= norms
        parts = ex.gather(ex.map2(_labels_and_strengths, run.Z, self.problem.X.blocks))
        return dict(W=run.W, Q=run.Q if self.problem.M is not None else None,
                    labels=np.concatenate([part[0] for part in parts]),
                    strengths=np.concatenate([part[1] for part in parts]),
                    norms=norms, gather=lambda: np.vstack(ex.gather(run.Z)))


def fit_blocked(problem, options):
    """The blocked engine: :func:`semnmf.models.local.fit_local`'s restarts on a
    :class:`~semnmf._utils.blocks.BlockedMatrix` ``problem.X`` (:class:`BlockedBackend`);
    the FitResult's Z stays in the blocks (``document_factors()`` gathers it)."""
    return run_engine(problem, options, BlockedBackend(problem))
