"""Projective NMF's problem X ≈ Z ZᵀX: the η = 1/3 multiplicative update.

The derivation (why η = 1/3 makes the objective non-increasing) is in
:mod:`semnmf.models.pnmf`; this is the private solver that
:class:`~semnmf.models.pnmf.ProjectiveNMF` runs through :func:`semnmf.models._solvers.mu.run`.
"""

import numpy as np

from .sparse import product_operator, transpose_csr
from .mu import EPSILON, squared_norm

class ProjectiveProblem:
    """One PNMF problem X ≈ Z ZᵀX, updated in place (the ``_mu.run`` protocol).

    Parameters
    ----------
    X : CSR or ndarray (n, d)
    Z : ndarray (n, k), modified in place (rescaled at construction, see ``rescale``)
    Xt : CSR or ndarray (d, n), optional
        Xᵀ when the caller already has it.
    rescale : bool, default=True
        Multiply Z by the least-squares scalar first (F only decreases).
    """

    def __init__(self, X, Z, Xt=None, rescale=True):
        self.X = product_operator(X, Z.dtype)
        self.Xt = product_operator(transpose_csr(X) if Xt is None else Xt, Z.dtype)
        self.Z = Z
        self.sqX = squared_norm(X)
        self.B = self.Xt @ Z                               # XᵀZ, kept for the current Z
        if rescale:
            self._rescale()

    def _rescale(self):
        """Z ← sZ with s² = tr(ZᵀAZ) / tr(ZᵀZ ZᵀAZ), the minimizer of F(sZ)."""
        BtB = self.B.T @ self.B
        t1 = float(np.trace(BtB))
        t2 = float(np.sum((self.Z.T @ self.Z) * BtB))
        if t1 > 0 and t2 > 0:
            s = self.Z.dtype.type(np.sqrt(t1 / t2))
            self.Z *= s
            self.B *= s

    @property
    def W(self):
        """XᵀZ (d x k): X ≈ Z Wᵀ, the term weights of each cluster (a fresh array)."""
        return np.array(self.B, copy=True)

    def objective(self):
        """½‖X − Z ZᵀX‖² by the trace identity of :mod:`semnmf.models.pnmf`."""
        BtB = self.B.T @ self.B
        value = self.sqX - 2.0 * float(np.trace(BtB)) + float(np.sum((self.Z.T @ self.Z) * BtB))
        return 0.5 * max(value, 0.0)

    def terms(self):
        """(½‖X − Z ZᵀX‖², 0): the estimator API's (data, context) pair."""
        return self.objective(), 0.0

    def step(self):
        Z, B = self.Z, self.B
        AZ = self.X @ B                                    # X Xᵀ Z, n x k
        denominator = Z @ (B.T @ B) + AZ @ (Z.T @ Z)      # Z ZᵀAZ + AZ ZᵀZ
        Z *= np.cbrt(2.0 * AZ / (denominator + EPSILON))   # η = 1/3
        self.B = self.Xt @ Z
        return self.objective()
