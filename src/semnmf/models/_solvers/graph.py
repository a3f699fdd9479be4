"""GNMF's and Semantic-GNMF's problem: the graph-regularized multiplicative updates.

The objective, the scale-invariant graph term and the monotonicity argument are in
:mod:`semnmf.models.gnmf`; this is the private solver its estimators run through
:func:`semnmf.models._solvers.mu.run`.
"""

import numpy as np

from .frobenius import FrobeniusProblem
from .sparse import product_operator
from .mu import EPSILON, update_W_and_Q

# -- the problem -----------------------------------------------------------------------------
class GraphProblem(FrobeniusProblem):
    """GNMF (``M is None``) or Semantic-GNMF, updated in place: the F of :mod:`semnmf.models.gnmf`.

    Parameters
    ----------
    X, Z, W, M, Q, lam, update_W, Xt, Mt
        As in :class:`~semnmf.models._solvers.frobenius.FrobeniusProblem`.
    A : CSR (n, n), symmetric, non-negative
        Document graph.
    mu : float
        Effective weight μ of the graph term.

    Updates (one sweep; ``ν_k = ‖w_k‖²``, ``s_k = z_kᵀ L z_k``, ``d = A 1``)::

        Z ← Z ⊙ (X W + μ (A Z) diag(ν)) / (Z WᵀW + μ (d ⊙ Z) diag(ν))      (Cai et al. V update)
        W ← W ⊙ (XᵀZ + λ M Q) / (W (ZᵀZ + λ QᵀQ + μ diag(s)))              (eq. 7b + graph)
        Q ← Q ⊙ MᵀW / (Q WᵀW)                                               (eq. 7c)

    Why they are monotone. For fixed W, F(Z) is the quadratic
    ``½‖X − ZWᵀ‖² + (μ/2) Σ_k ν_k z_kᵀ (D − A) z_k``: Cai et al.'s Theorem 1 (their
    auxiliary function, with their λ replaced by μ ν_k in column k, ν_k > 0 fixed) gives
    the Z update, which is their V update ``V ⊙ (XᵀU + λ W V)/(V UᵀU + λ D V)`` with
    unit-norm U. For fixed Z, the graph term is ``(μ/2) Σ_k s_k ‖w_k‖²``, a ridge penalty
    on the columns of W with non-negative weights (s_k ≥ 0 because L is positive
    semi-definite): it adds ``μ W diag(s)`` to the non-negative part of the gradient,
    so Lee & Seung's auxiliary function for (7b) still applies (as in Theorem 1 of the
    Neurocomputing paper). Q's update is (7c) unchanged. Each block update does not
    increase F, so neither does the sweep.

    Cost per sweep: Semantic-NMF's plus one product ``A Z`` (O(k nnz A)), whose result
    serves the next Z update, the s_k of the W update and the objective:
    ``s_k = Σ_i d_i z_ik² − Σ_i z_ik (A Z)_ik`` (trace identity, A Z never densifies A).
    """

    def __init__(self, X, Z, W, A, mu, M=None, Q=None, lam=0.0, update_W=True, Xt=None,
                 Mt=None):
        super().__init__(X, Z, W, M=M, Q=Q, lam=lam, update_W=update_W, Xt=Xt, Mt=Mt)
        self.mu = float(mu)
        self.A = product_operator(A, Z.dtype, kernels=self.kernels)
        self.degree = np.asarray(A.sum(axis=1), dtype=Z.dtype).ravel()
        self._update_graph_products()

    def _update_graph_products(self):
        """A Z and s_k = z_kᵀ L z_k at the current Z."""
        Z = self.Z
        self.AZ = self.A @ Z
        self.s = (np.einsum("i,ik,ik->k", self.degree, Z, Z, dtype=np.float64)
                  - np.einsum("ik,ik->k", Z, self.AZ, dtype=np.float64))

    def _graph_term(self, WtW):
        """½ Tr(Ẑᵀ L Ẑ) = ½ Σ_k ‖w_k‖² s_k (:mod:`semnmf.models.gnmf`)."""
        return 0.5 * max(float(np.diag(WtW) @ self.s), 0.0)

    def objective(self):
        """F of :mod:`semnmf.models.gnmf`; requires XtZ, MtW and AZ to match the factors."""
        WtW = self.W.T @ self.W
        value = self._data_term(WtW, self.Z.T @ self.Z)
        if self.M is not None and self.lam > 0:
            value += self.lam * self._context_term(WtW)
        if self.mu > 0:
            value += self.mu * self._graph_term(WtW)
        return value

    def graph_term(self):
        """½ Tr(Ẑᵀ L Ẑ) at the current factors (without the weight μ)."""
        return self._graph_term(self.W.T @ self.W)

    def step(self):
        if self.mu <= 0 and self.kernels:
            return self._fused_step()          # no graph term: Semantic-NMF's sweep
        Z, W = self.Z, self.W
        WtW = W.T @ W
        XW = self.X @ W
        if self.mu > 0:
            nu = np.diag(WtW).astype(Z.dtype)
            numerator = XW + self.mu * (self.AZ * nu)
            denominator = Z @ WtW + self.mu * (self.degree[:, None] * Z * nu)
            Z *= numerator / (denominator + EPSILON)                      # Cai et al., V
            self._update_graph_products()
        else:
            Z *= XW / (Z @ WtW + EPSILON)                                 # (7a)
        self.XtZ = self.Xt @ Z
        if self.update_W:
            gram = Z.T @ Z
            if self.mu > 0:
                gram = gram + np.diag(self.mu * np.maximum(self.s, 0.0)).astype(Z.dtype)
            update_W_and_Q(self, gram)                                    # (7b) + graph, (7c)
        return self.objective()
