"""The Frobenius-loss problem shared by NMF (λ = 0, no M) and Semantic-NMF.

Objective (Neurocomputing paper, eq. 5)::

    F(Z, W, Q) = ½‖X − Z Wᵀ‖²_F + (λ/2)‖M − W Qᵀ‖²_F

evaluated with trace identities so that Z Wᵀ and W Qᵀ are never formed::

    ½‖X − Z Wᵀ‖² = ½(‖X‖² − 2 tr(Wᵀ (XᵀZ)) + tr((WᵀW)(ZᵀZ)))

Updates (eq. 7a-7c), one sweep in the order of Algorithm 1::

    Z ← Z ⊙ XW / (Z WᵀW)                               (7a)
    W ← W ⊙ (XᵀZ + λ M Q) / (W (ZᵀZ + λ QᵀQ))          (7b)
    Q ← Q ⊙ MᵀW / (Q WᵀW)                               (7c)

Cost per sweep O(k (nnz X + nnz M) + k² (n + d)) (Proposition 1): four sparse x dense
products (X W, Xᵀ Z, M Q, Mᵀ W) and k x k Gram matrices. After the sweep, XᵀZ and MᵀW
hold the current Z and W, so the objective at the new iterate costs only O(k² d).

Orthogonal variant (``orthogonal=True``; Neurocomputing paper §6.1: "replace the update
rule of Z (7a) by the one of Orthogonal NMF [17, 58]")::

    Z ← Z ⊙ [ XW / (Z ZᵀXW) ]^½                         (Ding et al. 2006, uni-orthogonal NMF)

computed as Z (Zᵀ(XW)), a k x k product, never the n x n matrix ZZᵀ. It comes from the
Lagrangian of min ½‖X − ZWᵀ‖² s.t. ZᵀZ = I: the KKT multiplier eliminated with ZᵀZ = I
turns the gradient into Z ZᵀXW − XW, whose positive and negative parts give the ratio;
the square root is Ding et al.'s. W, Q and the objective are those of eq. (5)-(7)
unchanged (λ = 0 gives orthogonal NMF, λ > 0 orthogonal Semantic-NMF). Why this form and
not Yoo & Choi's (2008) Stiefel-manifold rule Z ← Z ⊙ XW / (Z (XW)ᵀ Z), the other
reference of §6.1: Yoo & Choi's ratio is homogeneous of degree −2 in the scale of Z, so it
does not fix that scale (for n = d = k = 1 it maps z to 1/z and back): on CSTR and
CLASSIC4 diag(ZᵀZ) drifted to 10²-10⁴ in 200 sweeps, while Ding's square root sends the
scale to diag(ZᵀZ) ≈ 1 (measured 0.90-0.99).

What holds, and what does not (the tests check the former):

- The objective (5) is *not* guaranteed to decrease: the update descends a Lagrangian
  with the constraint folded in, not F itself (Ding et al.'s monotonicity argument is
  about that Lagrangian, and was later questioned, e.g. by Mirzal 2014). Measured on
  CSTR and CLASSIC4 from the k-means start: F falls for the first 70-90 sweeps, then
  rises in about half of the later ones, by relative amounts of 1e-8 to 1e-7.
  ``_mu.run`` stops on the absolute relative change, so a non-monotone history still
  converges.
- Fixed points satisfy Z ⊙ (Z ZᵀXW − XW) = 0 (the square root does not move them).
  Summing each column of this identity over the documents gives, with P = ZᵀXW ≥ 0
  and G = ZᵀZ,
  diag(G P) = diag(P), i.e. G_kk = 1 − Σ_{l≠k} G_kl P_lk / P_kk ≤ 1: at a fixed point
  every column of Z has norm at most 1, with equality exactly when it is orthogonal to
  the others.
- The columns of Z become closer to orthogonal than plain NMF's: the normalized
  off-diagonal mass ‖G − diag(G)‖_F / ‖G‖_F decreases (measured on the tests' data).
- With W frozen (``update_W=False``, used by ``transform`` on new documents) the plain
  update (7a) is used: orthogonality couples all the documents of a batch, so a
  per-document projection must not depend on which other documents are transformed
  with it.
"""

import numpy as np
import scipy.sparse as sp

from .mu import EPSILON, RowBlocked, squared_norm, trace_residual


def transpose_csr(A):
    """Aᵀ in CSR, computed once (never per iteration)."""
    return A.T.tocsr() if sp.issparse(A) else np.ascontiguousarray(A.T)


class FrobeniusProblem:
    """One Semantic-NMF (or NMF when ``M is None``) problem, updated in place.

    Parameters
    ----------
    X : CSR or ndarray (n, d)
    Z, W : ndarray (n, k), (d, k), modified in place
    M : CSR or ndarray (d, d') or None
    Q : ndarray (d', k) or None
    lam : float
        Effective (absolute) weight λ of the word-context term in eq. (5).
    update_W : bool
        False freezes W (used by ``transform``).
    Xt, Mt : CSR or ndarray, optional
        Xᵀ and Mᵀ when the caller already has them (restarts share one transpose).
    orthogonal : bool, default=False
        Use the orthogonal-NMF update of Z (Ding et al. 2006, see the module docstring)
        instead of (7a). Ignored when ``update_W`` is False.
    """

    def __init__(self, X, Z, W, M=None, Q=None, lam=0.0, update_W=True, Xt=None, Mt=None,
                 orthogonal=False):
        self.X = RowBlocked(X)
        self.Xt = RowBlocked(transpose_csr(X) if Xt is None else Xt)
        self.Z, self.W = Z, W
        self.sqX = squared_norm(X)
        self.update_W = update_W
        self.orthogonal = bool(orthogonal) and update_W
        self.lam = float(lam)
        self.M = None
        if M is not None:
            self.M, self.Mt = RowBlocked(M), RowBlocked(transpose_csr(M) if Mt is None else Mt)
            self.Q = Q
            self.sqM = squared_norm(M)
            self.MtW = self.Mt @ W
        self.XtZ = self.Xt @ Z

    # -- objective -------------------------------------------------------------------
    def _data_term(self, WtW, ZtZ):
        return trace_residual(self.sqX, self.W, self.XtZ, WtW, ZtZ)

    def _context_term(self, WtW):
        # ½‖M − WQᵀ‖²: the same identity with (M, W, Q) in the roles of (X, Z, W)
        return trace_residual(self.sqM, self.Q, self.MtW, WtW, self.Q.T @ self.Q)

    def objective(self):
        """F(Z, W, Q) of eq. (5); requires ``XtZ`` and ``MtW`` to match the current factors."""
        WtW = self.W.T @ self.W
        value = self._data_term(WtW, self.Z.T @ self.Z)
        if self.M is not None and self.lam > 0:
            value += self.lam * self._context_term(WtW)
        return value

    def terms(self):
        """The two terms of eq. (5) separately: (½‖X − ZWᵀ‖², ½‖M − WQᵀ‖²)."""
        WtW = self.W.T @ self.W
        data = self._data_term(WtW, self.Z.T @ self.Z)
        context = self._context_term(WtW) if self.M is not None else 0.0
        return data, context

    # -- one sweep of (7a)-(7c) ------------------------------------------------------
    def step(self):
        Z, W = self.Z, self.W
        WtW = W.T @ W
        XW = self.X @ W
        if self.orthogonal:
            Z *= np.sqrt(XW / (Z @ (Z.T @ XW) + EPSILON))                 # ONMF (Ding 2006)
        else:
            Z *= XW / (Z @ WtW + EPSILON)                                 # (7a)
        self.XtZ = self.Xt @ Z
        ZtZ = Z.T @ Z
        if self.update_W:
            use_context = self.M is not None and self.lam > 0
            if use_context:
                QtQ = self.Q.T @ self.Q
                numerator = self.XtZ + self.lam * (self.M @ self.Q)
                W *= numerator / (W @ (ZtZ + self.lam * QtQ) + EPSILON)   # (7b)
            else:
                W *= self.XtZ / (W @ ZtZ + EPSILON)                       # (7b), λ = 0
            if self.M is not None:
                WtW = W.T @ W
                self.MtW = self.Mt @ W
                self.Q *= self.MtW / (self.Q @ WtW + EPSILON)             # (7c)
        return self.objective()
