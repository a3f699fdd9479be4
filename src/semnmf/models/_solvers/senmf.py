"""SeNMF's problem (SIGIR 2017, eq. 3): the updates (7a)-(7c), (7b) safeguarded.

The derivation, the safeguard and the start of S are in :mod:`semnmf.models.senmf`;
this is the private solver that :class:`~semnmf.models.senmf.SeNMF` runs through
:func:`semnmf.models._solvers.mu.run`.
"""

import numpy as np

from .sparse import product_operator, transpose_csr
from .mu import EPSILON, squared_norm, trace_residual

# damped tries of (7b) before W is left unchanged: η = 2⁻¹, ..., 2⁻¹⁰
MAX_DAMPING = 10


def _sym(A):
    return 0.5 * (A + A.T)


def initial_core(WtMW, WtW):
    """Starting S (k x k): α (I + 10⁻³ 11ᵀ), α = ⟨WᵀMW, S⟩ / tr(S G S G) the least-squares
    scalar of ‖M − α W S Wᵀ‖² (see :mod:`semnmf.models.senmf`). ``WtMW`` = WᵀMW, ``WtW`` = G."""
    k = WtW.shape[0]
    S = np.eye(k) + 1e-3
    G = WtW.astype(np.float64)
    denominator = float(np.sum((S @ G) * (G @ S)))        # ‖W S Wᵀ‖² = tr(S G S G)
    alpha = float(np.sum(WtMW * S)) / denominator if denominator > 0 else 0.0
    S *= alpha if alpha > 0 else 1e-6
    return np.ascontiguousarray(S, dtype=WtMW.dtype)


class SeNMFProblem:
    """One SeNMF problem (eq. 3), updated in place by (7a)-(7c) (the ``_mu.run`` protocol).

    Parameters
    ----------
    X : CSR or ndarray (n, d)
    Z, W : ndarray (n, k), (d, k), modified in place
    M : CSR or ndarray (d, d), symmetric
    lam : float
        Effective (absolute) λ.
    S : ndarray (k, k), optional
        Starting S; by default the scaled identity of :func:`initial_core`.
    Xt : CSR or ndarray, optional
        Xᵀ when the caller already has it.

    Attributes
    ----------
    S : ndarray (k, k)
    n_damped : int
        Number of sweeps in which the full step (7b) would have raised F.
    Q : None
        No context factor (the estimator base class reads ``Q``).
    """

    Q = None

    def __init__(self, X, Z, W, M, lam=1.0, S=None, Xt=None):
        self.X = product_operator(X, Z.dtype)
        self.Xt = product_operator(transpose_csr(X) if Xt is None else Xt, Z.dtype)
        self.M = product_operator(M, Z.dtype)
        self.Z, self.W = Z, W
        self.sqX = squared_norm(X)
        self.sqM = squared_norm(M)
        self.lam = float(lam)
        self.XtZ = self.Xt @ Z
        self.MW = self.M @ W
        self.S = initial_core(W.T @ self.MW, W.T @ W) if S is None else S
        self.n_damped = 0
        self._slack = 64 * np.finfo(Z.dtype).eps * (self.sqX + self.lam * self.sqM)

    # -- objective -------------------------------------------------------------------
    def _data_term(self, W, XtZ, ZtZ):
        return trace_residual(self.sqX, W, XtZ, W.T @ W, ZtZ)

    def _context_term(self, W, MW, S):
        SG = S @ (W.T @ W)
        value = self.sqM - 2.0 * float(np.sum((W.T @ MW) * S.T)) + float(np.sum(SG * SG.T))
        return 0.5 * max(value, 0.0)

    def _F(self, W, XtZ, ZtZ, MW, S):
        value = self._data_term(W, XtZ, ZtZ)
        if self.lam > 0:
            value += self.lam * self._context_term(W, MW, S)
        return value

    def objective(self):
        """F(Z, W, S) of eq. (3); ``XtZ`` and ``MW`` always match the current factors."""
        return self._F(self.W, self.XtZ, self.Z.T @ self.Z, self.MW, self.S)

    def terms(self):
        """(½‖X − ZWᵀ‖², ½‖M − WSWᵀ‖²)."""
        return (self._data_term(self.W, self.XtZ, self.Z.T @ self.Z),
                self._context_term(self.W, self.MW, self.S))

    # -- one sweep of (7a)-(7c) ------------------------------------------------------
    def step(self):
        Z, W, S, lam = self.Z, self.W, self.S, self.lam
        WtW = W.T @ W
        Z *= (self.X @ W) / (Z @ WtW + EPSILON)                            # (7a)
        self.XtZ = XtZ = self.Xt @ Z
        ZtZ = Z.T @ Z

        numerator = XtZ + (2.0 * lam) * (self.MW @ S)
        denominator = W @ (ZtZ + (2.0 * lam) * _sym(S @ WtW @ S)) + EPSILON
        ratio = numerator / denominator                                    # (7b)
        before = self._F(W, XtZ, ZtZ, self.MW, S)
        W_new = W * ratio
        MW_new = self.M @ W_new
        if self._F(W_new, XtZ, ZtZ, MW_new, S) > before + self._slack:
            self.n_damped += 1
            eta = 1.0
            for _ in range(MAX_DAMPING):
                eta /= 2
                W_new = W * ratio ** eta
                MW_new = self.M @ W_new
                if self._F(W_new, XtZ, ZtZ, MW_new, S) <= before + self._slack:
                    break
            else:
                W_new, MW_new = W, self.MW
        W[...] = W_new
        self.MW = MW_new

        WtW = W.T @ W
        S *= _sym(W.T @ self.MW) / (_sym(WtW @ S @ WtW) + EPSILON)         # (7c)
        return self.objective()
