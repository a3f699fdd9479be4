"""Rank-2 NMF by alternating non-negative least squares (Kuang & Park, KDD 2013, §2-3).

Notation. The paper factorizes a term x document matrix ``X ≈ W H`` (W: m x 2, H: 2 x n);
this package keeps documents in rows, ``X ≈ Z Wᵀ`` with Z (n_documents x 2) and W
(n_terms x 2), so the paper's H is our Zᵀ. Both ANLS sub-problems (paper eq. 2-3) are
non-negative least squares with a two-column basis ``B`` and many right-hand sides::

    min_{G ≥ 0} ‖B Gᵀ − Y‖²_F ,  B: m x 2,  Y: m x n                         (4)

:func:`nnls_rank2` solves all n right-hand sides at once by enumerating the active sets
(Algorithm 2): with only four candidate active sets (Table 1), the optimum is the
unconstrained solution when it is feasible, and otherwise the better of the two
one-column solutions g*_j = yᵀb_j / ‖b_j‖² (eq. 9), i.e. the one with the larger
g*_j ‖b_j‖ (eq. 10-11). Everything works on BᵀB (2 x 2) and YᵀB (n x 2), so after the one
sparse product YᵀB a solve costs O(n) (the paper's O(N) overall).

:func:`rank2_nmf` alternates the two solves (two-block coordinate descent, which converges
to a stationary point) and stops when the projected gradient norm falls under
``tol`` times its value after the first iteration (Lin 2007; the paper uses 1e-4).
"""

import numpy as np
from sklearn.utils import check_random_state

from ._mu import RowBlocked, squared_norm

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
        Row i is the optimal g for right-hand side yᵢ.

    Notes
    -----
    Where the unconstrained solution is feasible it is optimal (§3.1). Otherwise the
    empty passive set is never better than a one-column solution (eq. 10), and of the two
    one-column solutions the one with the larger ``g*_j ‖b_j‖`` has the smaller residual
    (eq. 11). A zero column b_j gets g_j = 0; a singular BᵀB (collinear columns) skips
    the unconstrained candidate. No loop over right-hand sides.
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


def rank2_nmf(X, *, W_init=None, max_iter=500, tol=1e-4, random_state=None):
    """Rank-2 NMF ``X ≈ Z Wᵀ`` by alternating rank-2 NNLS (paper §3, Algorithm 2 twice).

    Parameters
    ----------
    X : CSR matrix or ndarray of shape (n_documents, n_terms), non-negative, validated
    W_init : array of shape (n_terms, 2) or None
        Starting word factors; None draws them uniformly at random.
    max_iter : int
    tol : float
        Stop when ‖∇ᴾF(Z, W)‖ ≤ tol · ‖∇ᴾF‖ after the first iteration (projected
        gradient, Lin 2007; the paper's ε = 1e-4).
    random_state : int, RandomState or None

    Returns
    -------
    Rank2Result

    Notes
    -----
    One iteration: W ← NNLS(ZᵀZ, XᵀZ), columns of W scaled to unit norm, then
    Z ← NNLS(WᵀW, XW) (each block solved exactly, so ½‖X − Z Wᵀ‖² never increases
    across iterations; the rescaling of W is absorbed by the exact Z solve). Two sparse
    x dense(2) products per iteration (X W and Xᵀ Z, threaded by row blocks, without a
    transposed copy of X): O(nnz X) time, O(n + d) extra memory.
    """
    n, d = X.shape
    dtype = X.dtype if X.dtype in (np.float32, np.float64) else np.float64
    A = RowBlocked(X)
    if W_init is None:
        rng = check_random_state(random_state)
        W = rng.uniform(size=(d, 2)).astype(dtype)
    else:
        W = np.array(W_init, dtype=dtype, copy=True)
    sqX = squared_norm(X)
    Z = nnls_rank2(W.T @ W, A @ W)
    XtZ = A.rmatmul(Z)
    history = []
    converged = False
    init_grad = None
    rel = np.inf
    it = 0
    for it in range(1, max_iter + 1):
        ZtZ = Z.T @ Z
        W = nnls_rank2(ZtZ, XtZ)
        WtW = W.T @ W
        norms = np.sqrt(np.diag(WtW))
        norms[norms == 0] = 1.0
        W /= norms
        WtW /= np.outer(norms, norms)
        XW = A @ W
        Z = nnls_rank2(WtW, XW)
        grad_Z = Z @ WtW - XW
        ZtZ = Z.T @ Z
        XtZ = A.rmatmul(Z)
        grad_W = W @ ZtZ - XtZ
        history.append(0.5 * (sqX - 2.0 * float(np.einsum("ij,ij->", W, XtZ)) + float(np.sum(WtW * ZtZ))))
        pg = np.sqrt(_projected_gradient_sq(Z, grad_Z) + _projected_gradient_sq(W, grad_W))
        if init_grad is None:
            init_grad = pg
        rel = pg / init_grad if init_grad > 0 else 0.0
        if rel <= tol:
            converged = True
            break
    return Rank2Result(Z, W, it, history, converged, rel)

