"""SymNMF's solver: row-wise NNLS by block principal pivoting and the ANLS penalty method.

Kuang, Yun & Park (2015); Kim & Park (2011). The estimators are in
:mod:`semnmf.models.symnmf`.
"""

import warnings

import numba
import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ..._utils.progress import progress
from .sparse import product_operator
from .mu import squared_norm
from .rank2 import _projected_gradient_sq

# -- non-negative least squares by block principal pivoting ---------------------------------------
@numba.njit(cache=True, nogil=True)
def _cholesky_solve(G, f, idx, m, L, z, out):
    """Solve G[idx, idx] out = f[idx] (first m entries of idx) by Cholesky, G SPD."""
    for a in range(m):
        for b in range(a + 1):
            s = G[idx[a], idx[b]]
            for c in range(b):
                s -= L[a, c] * L[b, c]
            if a == b:
                floor = 1e-14 * G[idx[a], idx[a]] + 1e-300
                L[a, a] = np.sqrt(s if s > floor else floor)
            else:
                L[a, b] = s / L[b, b]
    for a in range(m):
        s = f[idx[a]]
        for c in range(a):
            s -= L[a, c] * z[c]
        z[a] = s / L[a, a]
    for a in range(m - 1, -1, -1):
        s = z[a]
        for c in range(a + 1, m):
            s -= L[c, a] * out[c]
        out[a] = s / L[a, a]


@numba.njit(cache=True, nogil=True)
def _nnls_bpp(G, F, X):
    """Row-wise NNLS ``min_x ½ xᵀGx − fᵀx, x ≥ 0`` for each row f of F, in place on X.

    Block principal pivoting (Kim & Park 2011, "Fast nonnegative matrix factorization: an
    active-set-like method and comparisons", Algorithm 1; Júdice & Pires 1994): from the
    passive set of the warm start X, solve the unconstrained problem on the passive set,
    compute the dual ``y = G x − f`` on the others, and exchange every infeasible
    variable (x < 0 passive, y < 0 active); when the number of infeasible variables stops
    decreasing for 3 rounds, exchange only the one with the largest index (the backup rule
    that guarantees finite termination).
    """
    n, k = F.shape
    passive = np.empty(k, dtype=np.bool_)
    bad = np.empty(k, dtype=np.bool_)
    idx = np.empty(k, dtype=np.int64)
    L = np.empty((k, k))
    z = np.empty(k)
    sol = np.empty(k)
    x = np.empty(k)
    max_rounds = 10 * k + 50
    for i in range(n):
        f = F[i]
        scale = 0.0
        for j in range(k):
            passive[j] = X[i, j] > 0
            if abs(f[j]) > scale:
                scale = abs(f[j])
        threshold = 1e-12 * scale
        n_best = k + 1
        backup = 3
        for _ in range(max_rounds):
            m = 0
            for j in range(k):
                if passive[j]:
                    idx[m] = j
                    m += 1
            _cholesky_solve(G, f, idx, m, L, z, sol)
            for j in range(k):
                x[j] = 0.0
            for a in range(m):
                x[idx[a]] = sol[a]
            n_bad = 0
            last = -1
            for j in range(k):
                bad[j] = False
                if passive[j]:
                    if x[j] < 0.0:
                        bad[j] = True
                else:
                    y = -f[j]
                    for a in range(m):
                        y += G[j, idx[a]] * sol[a]
                    if y < -threshold:
                        bad[j] = True
                if bad[j]:
                    n_bad += 1
                    last = j
            if n_bad == 0:
                break
            if n_bad < n_best:
                n_best = n_bad
                backup = 3
                for j in range(k):
                    if bad[j]:
                        passive[j] = not passive[j]
            elif backup > 0:
                backup -= 1
                for j in range(k):
                    if bad[j]:
                        passive[j] = not passive[j]
            else:
                passive[last] = not passive[last]
        for j in range(k):
            X[i, j] = x[j] if x[j] > 0.0 else 0.0


def nnls_rows(G, F, X0=None):
    """``argmin_{X ≥ 0} ½ tr(X G Xᵀ) − tr(Fᵀ X)``, row by row (G symmetric positive
    definite, k x k; F (n, k)), by block principal pivoting warm-started from X0."""
    G = np.ascontiguousarray(G, dtype=np.float64)
    F = np.ascontiguousarray(F, dtype=np.float64)
    X = np.zeros_like(F) if X0 is None else np.array(X0, dtype=np.float64, order="C")
    _nnls_bpp(G, F, X)
    return X


# -- SymNMF by ANLS (Kuang, Yun & Park 2015) ----------------------------------------------
def symnmf_anls(A, H, *, alpha=None, max_iter=500, tol=1e-3, verbose=0, description="SymNMF"):
    """SymNMF ``min_{H ≥ 0} ‖A − HHᵀ‖²_F`` by alternating non-negative least squares.

    Kuang, Yun & Park (2015)'s ANLS algorithm (not in ``papers/``): solve the penalized
    non-symmetric problem::

        min_{W, H ≥ 0} f(W, H) = ‖A − W Hᵀ‖²_F + α ‖W − H‖²_F

    by exact block minimization, each block a row-wise NNLS with the k x k Gram matrix::

        W ← argmin_{W ≥ 0} ‖[H; √α I] Wᵀ − [A; √α Hᵀ]‖²  (normal equations: HᵀH + α I, A H + α H)
        H ← argmin_{H ≥ 0} ‖[W; √α I] Hᵀ − [A; √α Wᵀ]‖²  (WᵀW + α I, A W + α W)

    (A symmetric; :func:`nnls_rows`). Each block is solved exactly, so f never increases;
    with α large enough the limit points have W = H. The default α = max(A)² and the
    stopping rule are those of the authors' ``symnmf_anls.m``, which GT ran; f comes from
    trace identities with the products A W, A H the next updates need.

    Parameters
    ----------
    A : CSR (n, n), symmetric, non-negative
    H : ndarray (n, k), float64
        Start (W starts equal to H); not modified.
    alpha : float or None
        Penalty α; None: max(A)².

    Returns
    -------
    H, W : ndarray (n, k)
    AH : ndarray (n, k)
        A H at the returned H.
    history : list of float
        f at the start and after each iteration.
    n_iter : int
    converged : bool
    alpha : float
    """
    A_op = product_operator(A)
    if alpha is None:
        alpha = float(A.max()) ** 2 if A.nnz else 0.0
    alpha = float(alpha)
    H = np.array(H, dtype=np.float64, order="C")
    k = H.shape[1]
    W = H.copy()
    ridge = alpha * np.eye(k)
    sqA = squared_norm(A)
    HtH = H.T @ H
    AH = A_op @ H
    history = [max(sqA - 2.0 * float(np.sum(H * AH)) + float(np.sum(HtH * HtH)), 0.0)]
    converged = False
    initial = None
    n_iter = 0
    with progress(description, total=max_iter, enabled=verbose > 0) as bar:
        for n_iter in range(1, max_iter + 1):
            _nnls_bpp(HtH + ridge, AH + alpha * H, W)
            WtW = W.T @ W
            AW = A_op @ W
            _nnls_bpp(WtW + ridge, AW + alpha * W, H)
            HtH = H.T @ H
            AH = A_op @ H
            diff = H - W
            value = (sqA - 2.0 * float(np.sum(H * AW)) + float(np.sum(WtW * HtH))
                     + alpha * float(np.sum(diff * diff)))
            history.append(max(value, 0.0))
            bar.advance(1, status=f"objective {history[-1]:.6g}")
            grad_H = H @ WtW - AW + alpha * diff
            grad_W = W @ HtH - AH - alpha * diff
            norm = np.sqrt(_projected_gradient_sq(W, grad_W) + _projected_gradient_sq(H, grad_H))
            if initial is None:
                initial = norm
            elif norm <= tol * initial:
                converged = True
                break
    if not converged and tol > 0 and max_iter > 0:
        warnings.warn(
            f"Maximum number of iterations {max_iter} reached before the projected gradient "
            f"fell under tol={tol} times its first value. Increase max_iter to improve "
            "convergence.", ConvergenceWarning, stacklevel=2)
    return H, W, AH, history, n_iter, converged, alpha
