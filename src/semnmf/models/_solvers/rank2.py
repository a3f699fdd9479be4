"""Rank-2 NMF by alternating non-negative least squares (Kuang & Park, KDD 2013, §2-3).

The paper factorizes a term x document matrix ``X ≈ W H``; here ``X ≈ Z Wᵀ`` with
documents in rows, so the paper's H is our Zᵀ. Both ANLS sub-problems (paper eq. 2-3)
are non-negative least squares with a two-column basis ``B`` and many right-hand sides::

    min_{G ≥ 0} ‖B Gᵀ − Y‖²_F ,  B: m x 2,  Y: m x n                         (4)

:func:`nnls_rank2` solves all n right-hand sides at once by enumerating the active sets
(Algorithm 2): the optimum is the unconstrained solution when it is feasible, and
otherwise the better of the two one-column solutions g*_j = yᵀb_j / ‖b_j‖² (eq. 9), the
one with the larger g*_j ‖b_j‖ (eq. 10-11). Everything works on BᵀB and YᵀB, so after the
sparse product YᵀB a solve costs O(n).

:func:`rank2_nmf` alternates the two solves and stops when the projected gradient norm
falls under ``tol`` times its value after the first iteration (Lin 2007; the paper uses
1e-4). It runs the kernels of :mod:`~semnmf.models._solvers.rank2_kernels`: the solutions
of :func:`nnls_rank2` (the numpy reference) one row at a time, fused with what the
iteration needs next (one pass over X, one over XᵀZ); the objective is
½(‖X‖² − 2⟨Z, X W⟩ + ⟨WᵀW, ZᵀZ⟩) (eq. 1 expanded), its by-products summed in float64.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from . import rank2_kernels as _k
from ..._utils.parallel import MIN_NNZ_FOR_THREADS, map_blocks, n_threads, row_blocks

_MIN_NNZ_FOR_THREADS = MIN_NNZ_FOR_THREADS

# A 2 x 2 Gram matrix with det(BᵀB) <= _SINGULAR * b11 * b22 (cosine of the angle between
# b1 and b2 above 1 - 5e-11) is treated as singular: its unconstrained solution is not
# computed (it would be unreliable) and the one-column solutions, which are then optimal
# up to rounding, are used.
_SINGULAR = 1e-10


def nnls_rank2(BtB, YtB):
    """Solve ``min_{G ≥ 0} ‖B Gᵀ − Y‖²_F`` for a two-column B (Algorithm 2, vectorized).

    Parameters
    ----------
    BtB : array of shape (2, 2)
        The Gram matrix BᵀB.
    YtB : array of shape (n, 2)
        YᵀB: row i holds (yᵢᵀb₁, yᵢᵀb₂) for the i-th right-hand side.

    Returns
    -------
    G : ndarray of shape (n, 2), non-negative, in YtB's dtype
        Row i is the optimal g for right-hand side yᵢ (the module docstring's rule; a zero
        column b_j gets g_j = 0, a singular BᵀB skips the unconstrained candidate).
    """
    BtB = np.asarray(BtB, dtype=np.float64)
    YtB = np.asarray(YtB)
    dtype = YtB.dtype if YtB.dtype in (np.float32, np.float64) else np.float64
    a, b, c = float(BtB[0, 0]), float(BtB[0, 1]), float(BtB[1, 1])
    y1, y2 = YtB[:, 0], YtB[:, 1]
    G = np.zeros(YtB.shape, dtype=dtype)
    # one-column solutions (eq. 9), chosen by eq. (11): g*_j ‖b_j‖ = y_j / ‖b_j‖
    r1 = 1.0 / np.sqrt(a) if a > 0 else 0.0
    r2 = 1.0 / np.sqrt(c) if c > 0 else 0.0
    first = y1 * r1 >= y2 * r2
    if a > 0:
        np.divide(y1, a, out=G[:, 0], where=first)
    if c > 0:
        np.divide(y2, c, out=G[:, 1], where=~first)
    det = a * c - b * b
    if a > 0 and c > 0 and det > _SINGULAR * a * c:
        g1 = (c / det) * y1 - (b / det) * y2
        g2 = (a / det) * y2 - (b / det) * y1
        feasible = (g1 >= 0) & (g2 >= 0)
        np.copyto(G[:, 0], g1, where=feasible)
        np.copyto(G[:, 1], g2, where=feasible)
    return G


def _projected_gradient_sq(F, grad):
    """Squared norm of the projected gradient: entries where F > 0 or the gradient < 0."""
    g = np.where(F > 0, grad, np.minimum(grad, 0))
    return float(np.einsum("ij,ij->", g, g))


class Rank2Result:
    """Result of :func:`rank2_nmf`: ``Z`` (n x 2), ``W`` (d x 2, unit columns),
    ``n_iter``, ``objective_history`` (½‖X − Z Wᵀ‖² after each iteration), ``converged``
    and ``projected_gradient`` (relative to the first iteration's)."""

    __slots__ = ("Z", "W", "n_iter", "objective_history", "converged", "projected_gradient")

    def __init__(self, Z, W, n_iter, objective_history, converged, projected_gradient):
        self.Z, self.W = Z, W
        self.n_iter = n_iter
        self.objective_history = objective_history
        self.converged = converged
        self.projected_gradient = projected_gradient

    def labels(self):
        """Hard split: 0 where z_i1 ≥ z_i2, else 1 (paper: "hard clustering")."""
        return (self.Z[:, 1] > self.Z[:, 0]).astype(np.int64)


def _coefficients(BtB, dtype):
    """What the kernels need of a 2 x 2 Gram matrix, computed as :func:`nnls_rank2` does.

    Returns ``gram`` (float64: a, b, c, 1/‖b1‖, 1/‖b2‖, 1.0 if BᵀB is regular else 0.0) and
    ``tcoef`` (in ``dtype``: a, c with 1 for a zero column, c/det, b/det, a/det), see
    :func:`~semnmf.models._solvers.rank2_kernels.nnls_rows`.
    """
    a, b, c = float(BtB[0, 0]), float(BtB[0, 1]), float(BtB[1, 1])
    r1 = 1.0 / np.sqrt(a) if a > 0 else 0.0
    r2 = 1.0 / np.sqrt(c) if c > 0 else 0.0
    det = a * c - b * b
    regular = a > 0 and c > 0 and det > _SINGULAR * a * c
    gram = np.array([a, b, c, r1, r2, 1.0 if regular else 0.0])
    unconstrained = [c / det, b / det, a / det] if regular else [0.0, 0.0, 0.0]
    return gram, np.array([a if a > 0 else 1.0, c if c > 0 else 1.0] + unconstrained, dtype=dtype)


class _ZStep:
    """The Z half-step of one iteration, fused with both products of X (see
    :mod:`~semnmf.models._solvers.rank2_kernels`).

    ``self(W, scale, WtW)`` overwrites ``self.Z`` with NNLS(WᵀW, X W) for the column-scaled
    W · diag(scale) (WtW is its Gram matrix) and ``self.parts`` with
    Xᵀ Z (as per-thread partial sums, shape (n_parts, d, 2)); returns (ZᵀZ, squared
    projected gradient of Z, ⟨Z, X W⟩). Sparse X: one pass over its non-zeros, by row
    blocks on threads (:func:`~semnmf.models._solvers.rank2_kernels.z_rows`). Dense X: the two
    BLAS products around the fused solve.
    """

    def __init__(self, X, dtype):
        n, d = X.shape
        self.dtype = dtype
        self.Z = np.zeros((n, 2), dtype=dtype)
        self.sparse = sp.issparse(X)
        if self.sparse:
            X = X.tocsr()
            if X.dtype != dtype:
                X = X.astype(dtype)
            self.X = X
            workers = n_threads()
            if workers > 1 and X.nnz >= _MIN_NNZ_FOR_THREADS:
                self.blocks = row_blocks(X.indptr, workers)
            else:
                self.blocks = [(0, n)]
            self.parts = np.zeros((len(self.blocks), d, 2))
        else:
            self.X = np.asarray(X, dtype=dtype)
            self.parts = None

    def __call__(self, W, scale, WtW):
        gram, tcoef = _coefficients(WtW, self.dtype)
        scales = np.array([scale[0], scale[1], 1.0, 1.0])
        Z = self.Z
        if not self.sparse:
            XW = self.X @ W
            s11, s12, s22, pg, zy, _ = _k.nnls_rows(XW[None], gram, tcoef, scales, Z, Z, False)
            self.parts = (self.X.T @ Z)[None]
        else:
            X = self.X
            args = (X.indptr, X.indices, X.data, W, scales, gram, tcoef, Z)
            sums = map_blocks(lambda q: _k.z_rows(*args, self.parts[q], *self.blocks[q]),
                              len(self.blocks), len(self.blocks))
            s11, s12, s22, pg, zy = (sum(values) for values in zip(*sums))
        return np.array([[s11, s12], [s12, s22]]), pg, zy


STOP_RULES = ("pg", "partition")


# stop="partition": the relative objective decrease of the last iteration must be at most
# this too (a guard against stopping during a slow drift of the objective while the split
# happens to hold still; on NG20 it is below 1e-4 long before the split settles).
PARTITION_OBJECTIVE_TOL = 1e-4


def rank2_nmf(X, *, W_init=None, max_iter=500, tol=1e-4, random_state=None, stop="pg",
              partition_tol=3e-3, patience=2, _trace=None):
    """Rank-2 NMF ``X ≈ Z Wᵀ`` by alternating rank-2 NNLS (paper §3, Algorithm 2 twice).

    Parameters
    ----------
    X : CSR matrix or ndarray of shape (n_documents, n_terms), non-negative, validated
    W_init : array of shape (n_terms, 2) or None
        Starting word factors; None draws them uniformly at random.
    max_iter : int
    tol : float
        ``stop="pg"``: stop when ‖∇ᴾF(Z, W)‖ ≤ tol · ‖∇ᴾF‖ after the first iteration
        (projected gradient, Lin 2007; the paper's ε = 1e-4).
    random_state : int, RandomState or None
    stop : {"pg", "partition"}, default="pg"
        "pg": the paper's projected-gradient rule above. "partition": stop when the hard
        split (:meth:`Rank2Result.labels`) has moved at most ``partition_tol`` of the
        documents in each of ``patience`` consecutive iterations and the objective
        decreased by at most ``PARTITION_OBJECTIVE_TOL`` (relative) in the last one.
    partition_tol : float, default=3e-3
        Fraction of the documents allowed to change side per iteration (``"partition"``).
    patience : int, default=2
        Consecutive settled iterations ``stop="partition"`` waits for.

    Returns
    -------
    Rank2Result

    Notes
    -----
    One iteration: W ← NNLS(ZᵀZ, XᵀZ), columns of W scaled to unit norm, then
    Z ← NNLS(WᵀW, XW) (each block solved exactly, so ½‖X − Z Wᵀ‖² never increases).

    Compiled and fused (module docstring): iteration t's stopping test completes during
    iteration t + 1's W pass, whose W is discarded when the test stops the loop. W is
    stored unnormalized, its column scaling applied as it is read (and to the W
    returned).
    """
    if stop not in STOP_RULES:
        raise ValueError(f"stop must be one of {STOP_RULES}, got {stop!r}.")
    n, d = X.shape
    dtype = X.dtype if X.dtype in (np.float32, np.float64) else np.float64
    if W_init is None:
        rng = check_random_state(random_state)
        W = rng.uniform(size=(d, 2)).astype(dtype)
    else:
        W = np.array(W_init, dtype=dtype, order="C", copy=True)
    z_step = _ZStep(X, dtype)
    sqX = _k.sum_squares(z_step.X.data if z_step.sparse else z_step.X.ravel(order="K"))
    ZtZ, pg_Z, _ = z_step(W, (1.0, 1.0), (W.T @ W).astype(np.float64))
    # W is kept unnormalized: ``scale`` (1 / column norms) is applied by the kernels as
    # they read W, and to the W returned
    buffers = (np.empty((d, 2), dtype=dtype), np.empty((d, 2), dtype=dtype))
    W_prev = None
    scale = np.ones(2)
    history = []
    converged = False
    init_grad = None
    rel = np.inf
    it = 0
    by_partition = stop == "partition"
    if by_partition:
        side = z_step.Z[:, 1] > z_step.Z[:, 0]
        stable = 0
    while True:
        # W solve of iteration it + 1, with the W-part of iteration it's projected gradient
        W_new = buffers[it % 2]
        gram, tcoef = _coefficients(ZtZ, dtype)
        scales = np.array([1.0, 1.0, scale[0], scale[1]])
        s11, s12, s22, _, _, pg_W = _k.nnls_rows(
            z_step.parts, gram, tcoef, scales, W_new, W_new if W_prev is None else W_prev,
            W_prev is not None)
        if W_prev is not None:
            pg = np.sqrt(pg_Z + pg_W)
            if init_grad is None:
                init_grad = pg
            rel = pg / init_grad if init_grad > 0 else 0.0
            if rel <= tol:
                converged = True
                break
        if it >= max_iter:
            break
        it += 1
        norms = np.sqrt([s11, s22])
        norms[norms == 0] = 1.0
        scale = 1.0 / norms
        WtW = np.array([[s11, s12], [s12, s22]]) / np.outer(norms, norms)
        ZtZ, pg_Z, zy = z_step(W_new, scale, WtW)
        history.append(0.5 * (sqX - 2.0 * zy + float(np.sum(WtW * ZtZ))))
        W_prev = W_new
        if by_partition:
            new_side = z_step.Z[:, 1] > z_step.Z[:, 0]
            changed = int(np.count_nonzero(new_side != side))
            side = new_side
            stable = stable + 1 if changed <= partition_tol * n else 0
            decrease = (history[-2] - history[-1]) / max(abs(history[-1]), 1e-300) \
                if len(history) > 1 else np.inf
            if _trace is not None:
                _trace.append((it, changed, decrease))
            if stable >= patience and decrease <= PARTITION_OBJECTIVE_TOL:
                converged = True
                break
    if W_prev is not None:
        W = W_prev
        W /= norms
    return Rank2Result(z_step.Z, W, it, history, converged, rel)
