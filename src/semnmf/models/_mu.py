"""Shared multiplicative-update machinery for the NMF family.

The estimators in this package (:class:`~semnmf.NMF`, :class:`~semnmf.SemanticNMF`)
describe one iteration of their updates in a small "problem" object; this module runs
the loop (stopping rule, objective history, progress, convergence warning) and provides
the one kernel every update needs: a sparse x dense(k columns) product, split by row
blocks over threads (scipy's sparse kernels release the GIL, so two cores give ~1.6x).
"""

import os
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from .._progress import progress

# Denominator guard of the multiplicative updates (as in scikit-learn's _nmf.py).
# Adding a positive constant to the denominator of a multiplicative update keeps the
# auxiliary-function argument of Lee & Seung valid (a larger curvature still majorizes),
# so the objective remains non-increasing.
EPSILON = np.finfo(np.float32).eps

_MIN_NNZ_FOR_THREADS = 200_000
_executor = None


def n_threads():
    """Number of threads for sparse products: $SEMNMF_NUM_THREADS or the CPU count."""
    env = os.environ.get("SEMNMF_NUM_THREADS")
    if env:
        return max(1, int(env))
    return os.cpu_count() or 1


def _pool(workers):
    global _executor
    if _executor is None or _executor._max_workers != workers:
        _executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="semnmf")
    return _executor


def row_blocks(indptr, n_blocks):
    """Row bounds of at most ``n_blocks`` consecutive blocks of about equal non-zeros."""
    n_rows, nnz = len(indptr) - 1, int(indptr[-1])
    cuts = np.searchsorted(indptr, np.linspace(0, nnz, n_blocks + 1)[1:-1])
    bounds = np.unique(np.concatenate([[0], cuts, [n_rows]]))
    return [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


class RowBlocked:
    """A CSR matrix cut once into row blocks, multiplied by dense matrices in parallel.

    ``A @ B`` with ``B`` dense of shape (n_cols, k) returns the same as the plain scipy
    product, computed by ``n_threads()`` threads on disjoint row blocks of ``A`` (blocks
    balanced by number of non-zeros). Dense ``A`` is multiplied by BLAS directly.
    """

    def __init__(self, A):
        self.A = A
        self.shape = A.shape
        self.dtype = A.dtype
        self.blocks = None
        workers = n_threads()
        if sp.issparse(A) and workers > 1 and A.nnz >= _MIN_NNZ_FOR_THREADS:
            A = A.tocsr()
            self.blocks = [(a, b, A[a:b]) for a, b in row_blocks(A.indptr, workers)]

    def __matmul__(self, B):
        if self.blocks is None:
            out = self.A @ B
            return np.asarray(out) if not isinstance(out, np.ndarray) else out
        out = np.empty((self.shape[0], B.shape[1]), dtype=np.result_type(self.dtype, B.dtype))

        def work(block):
            a, b, Ab = block
            out[a:b] = Ab @ B

        list(_pool(len(self.blocks)).map(work, self.blocks))
        return out


def squared_norm(A):
    """Squared Frobenius norm of a sparse or dense matrix, in float64."""
    values = A.data if sp.issparse(A) else A
    values = np.asarray(values, dtype=np.float64).ravel()
    return float(values @ values)


# Multiplicative updates crawl along plateaus at the start: from a random start the
# relative change drops to 6e-5 at the third iteration, then climbs back to 1e-3 as the
# factors leave the plateau (Semantic-NMF on NG5). So convergence is not tested before
# MIN_ITER iterations.
MIN_ITER = 10


def run(problem, *, max_iter, tol, verbose=0, description="fit"):
    """Iterate ``problem.step()`` until the relative objective change falls under ``tol``.

    ``problem.step()`` performs one full sweep of the multiplicative updates in place and
    returns the objective at the new iterate (every update shares its products with the
    objective, so the objective comes for free: see the problems' docstrings).

    Stopping rule: from iteration ``MIN_ITER`` = 10 on, stop at the first iteration whose
    relative decrease ``(F(t − 1) − F(t)) / F(t − 1)`` is below ``tol``.

    Returns
    -------
    n_iter : int
    history : list of float
        Objective at the initialization followed by the objective after each iteration.
    converged : bool
    """
    history = [problem.objective()]
    converged = False
    n_iter = 0
    with progress(description, total=max_iter, enabled=verbose > 0) as bar:
        for n_iter in range(1, max_iter + 1):
            history.append(problem.step())
            bar.advance(1, status=f"objective {history[-1]:.6g}")
            if n_iter >= MIN_ITER:
                previous, current = history[-2], history[-1]
                change = (previous - current) / max(abs(previous), np.finfo(float).tiny)
                if abs(change) < tol:
                    converged = True
                    break
    if not converged and tol > 0 and max_iter > 0:
        warnings.warn(
            f"Maximum number of iterations {max_iter} reached before the relative objective "
            f"change fell under tol={tol}. "
            "Increase max_iter to improve convergence.",
            ConvergenceWarning,
        )
    return n_iter, history, converged
