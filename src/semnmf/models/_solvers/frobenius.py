"""The Frobenius-loss problem shared by NMF (λ = 0, no M) and Semantic-NMF.

Objective (Neurocomputing paper, eq. 5)::

    F(Z, W, Q) = ½‖X − Z Wᵀ‖²_F + (λ/2)‖M − W Qᵀ‖²_F

evaluated with trace identities so that Z Wᵀ and W Qᵀ are never formed::

    ½‖X − Z Wᵀ‖² = ½(‖X‖² − 2 tr(Wᵀ (XᵀZ)) + tr((WᵀW)(ZᵀZ)))

Updates (eq. 7a-7c), one sweep in the order of Algorithm 1::

    Z ← Z ⊙ XW / (Z WᵀW)                               (7a)
    W ← W ⊙ (XᵀZ + λ M Q) / (W (ZᵀZ + λ QᵀQ))          (7b)
    Q ← Q ⊙ MᵀW / (Q WᵀW)                               (7c)

Cost per sweep O(k (nnz X + nnz M) + k² (n + d)) (Proposition 1); after the sweep, XᵀZ
and MᵀW hold the current Z and W, so the objective at the new iterate costs O(k² d).

Orthogonal variant (``orthogonal=True``; Neurocomputing paper §6.1) replaces (7a) by
Ding et al.'s (2006) uni-orthogonal NMF update::

    Z ← Z ⊙ [ XW / (Z ZᵀXW) ]^½

computed as Z (Zᵀ(XW)), never the n x n ZZᵀ; W, Q and the objective are unchanged.
Ding's square root fixes the scale of Z (diag(ZᵀZ) ≈ 1), which Yoo & Choi's (2008)
Stiefel rule, the other reference of §6.1, does not (``benchmarks/results/design_notes.md``).
The objective (5) is *not* guaranteed to decrease (the update descends a Lagrangian, not
F); fixed points satisfy Z ⊙ (Z ZᵀXW − XW) = 0, whence every column of Z has norm at
most 1. With W frozen (``transform``) the plain update (7a) is used, so that a
document's projection does not depend on the other documents of its batch.

Compiled sweep (:mod:`semnmf.models._solvers.fro_kernels`). When X (and M) are sparse,
each update is one fused pass over the rows of its sparse matrix ((7a) streams X, (7b)
Xᵀ and M together, (7c) Mᵀ), which also returns the updated factor's Gram matrix and
the objective's trace term. The iterates are those of the plain scipy path
(``kernels=False``, kept as the reference) up to the order of floating-point summation;
XᵀZ and MᵀW are formed on demand (``XtZ``, ``MtW``).
"""

import numpy as np

from ..._utils.parallel import cache_aligned
from .fro_kernels import CSRKernel
from .mu import EPSILON, ThreadedProduct, squared_norm, trace_residual, update_W_and_Q
# the sparse operators every loss uses (re-exported here for the callers of 0.1)
from .sparse import product_operator, transpose_csr, use_kernels  # noqa: F401


class FrobeniusProblem:
    """One Semantic-NMF (or NMF when ``M is None``) problem, updated in place.

    Parameters
    ----------
    X : CSR or ndarray (n, d)
    Z, W : ndarray (n, k), (d, k), modified in place (the compiled sweep works on a
        64-byte-aligned copy when they are not aligned: read the result from ``.Z``, ``.W``)
    M : CSR or ndarray (d, d') or None
    Q : ndarray (d', k) or None
    lam : float
        Effective (absolute) weight λ of the word-context term in eq. (5).
    update_W : bool
        False freezes W (used by ``transform``).
    update_Z : bool, default=True
        False freezes Z: (7b)-(7c) only, the word and context factors of a given
        partition (:func:`semnmf.models.semantic.partition_topics`).
    Xt, Mt : CSR or ndarray, optional
        Xᵀ and Mᵀ when the caller already has them (``Mt is M`` for a symmetric M).
    orthogonal : bool, default=False
        The orthogonal-NMF update of Z (module docstring) instead of (7a), unless W is held.
    kernels : bool, optional
        Use the compiled sweep (default: when X and M are sparse, see :func:`use_kernels`);
        False runs the scipy reference path.
    """

    def __init__(self, X, Z, W, M=None, Q=None, lam=0.0, update_W=True, Xt=None, Mt=None,
                 orthogonal=False, kernels=None, update_Z=True):
        if not (update_W or update_Z):
            raise ValueError("update_W and update_Z are both False: nothing to update.")
        self.kernels = use_kernels(X, M) if kernels is None else bool(kernels)
        if self.kernels:  # the compiled passes load the factors' rows as whole vectors
            Z, W = cache_aligned(Z), cache_aligned(W)
            Q = None if Q is None else cache_aligned(Q)
        self.Z, self.W = Z, W
        # WᵀW of the current W when the last fused step computed it (with the W update);
        # W is only changed by step() while the problem runs
        self._WtW = None
        # QᵀQ likewise (from the last Q update): a BLAS product here would start BLAS
        # threads that keep spinning while the compiled passes run
        self._QtQ = None
        # the two terms of eq. (5) at the last fused step's iterate, when it formed both
        self._terms = None
        self.sqX = squared_norm(X)
        self.update_W = update_W
        self.update_Z = bool(update_Z)
        self.orthogonal = bool(orthogonal) and update_W and self.update_Z
        self._ZtZ = None if self.update_Z else (Z.T @ Z).astype(np.float64)  # frozen Z
        self.lam = float(lam)
        self.M = None
        Xt = transpose_csr(X) if Xt is None else Xt
        if self.kernels:
            dtype = Z.dtype
            self.X = CSRKernel(X, dtype=dtype)
            if M is not None:
                self.M = CSRKernel(M, dtype=dtype)
                Mt = transpose_csr(M) if Mt is None else Mt
                self.Mt = self.M if Mt is M else CSRKernel(Mt, dtype=dtype)
            self.Xt = CSRKernel(Xt, dtype=dtype, partner=self.M)
        else:
            self.X, self.Xt = ThreadedProduct(X), ThreadedProduct(Xt)
            if M is not None:
                self.M = ThreadedProduct(M)
                self.Mt = ThreadedProduct(transpose_csr(M) if Mt is None else Mt)
        if M is not None:
            self.Q = Q
            self.sqM = squared_norm(M)
            self._MtW = self.Mt @ W
        self._XtZ = self.Xt @ Z

    # XᵀZ and MᵀW at the current factors; the compiled sweep forms them only on demand
    @property
    def XtZ(self):
        if self._XtZ is None:
            self._XtZ = self.Xt @ self.Z
        return self._XtZ

    @XtZ.setter
    def XtZ(self, value):
        self._XtZ = value

    @property
    def MtW(self):
        if self._MtW is None:
            self._MtW = self.Mt @ self.W
        return self._MtW

    @MtW.setter
    def MtW(self, value):
        self._MtW = value

    # -- objective -------------------------------------------------------------------
    def _data_term(self, WtW, ZtZ):
        return trace_residual(self.sqX, self.W, self.XtZ, WtW, ZtZ)

    def _context_term(self, WtW):
        # ½‖M − WQᵀ‖²: the same identity with (M, W, Q) in the roles of (X, Z, W)
        return trace_residual(self.sqM, self.Q, self.MtW, WtW, self.Q.T @ self.Q)

    def objective(self):
        """F(Z, W, Q) of eq. (5) at the current factors."""
        WtW = self.W.T @ self.W
        value = self._data_term(WtW, self.Z.T @ self.Z)
        if self.M is not None and self.lam > 0:
            value += self.lam * self._context_term(WtW)
        return value

    def terms(self):
        """The two terms of eq. (5) separately: (½‖X − ZWᵀ‖², ½‖M − WQᵀ‖²).

        After a compiled step that formed both, they are that step's (no product over X
        or M again; the factors belong to the problem while it runs, as for ``_WtW``)."""
        if self._terms is not None:
            return self._terms
        WtW = self.W.T @ self.W
        data = self._data_term(WtW, self.Z.T @ self.Z)
        context = self._context_term(WtW) if self.M is not None else 0.0
        return data, context

    # -- one sweep of (7a)-(7c) ------------------------------------------------------
    def step(self):
        self._terms = None
        if self.kernels:
            return self._fused_step()
        Z, W = self.Z, self.W
        WtW = W.T @ W
        if not self.update_Z:
            pass                                                          # Z frozen
        elif self.orthogonal:
            XW = self.X @ W
            Z *= np.sqrt(XW / (Z @ (Z.T @ XW) + EPSILON))                 # ONMF (Ding 2006)
        else:
            Z *= (self.X @ W) / (Z @ WtW + EPSILON)                       # (7a)
        self.XtZ = self.Xt @ Z
        if self.update_W:
            update_W_and_Q(self, Z.T @ Z)                                 # (7b), (7c)
        return self.objective()

    def _fused_step(self):
        """The same sweep as :meth:`step`'s reference path, one fused pass per update."""
        Z, W, dtype = self.Z, self.W, self.Z.dtype
        WtW = W.T @ W if self._WtW is None else self._WtW
        if not self.update_W:
            self._WtW = WtW  # W is frozen
        if not self.update_Z:                                             # Z frozen
            ZtZ, inner_X = self._ZtZ, None
        elif self.orthogonal:
            XW = self.X @ W
            Z *= np.sqrt(XW / (Z @ (Z.T @ XW) + EPSILON))                 # ONMF (Ding 2006)
            ZtZ = (Z.T @ Z).astype(np.float64)
            inner_X = None
        else:
            # (7a); inner_X = tr(Zᵀ X W) = tr(Wᵀ XᵀZ) at the new Z and the current W
            inner_X, ZtZ = self.X.update(Z, W, WtW, eps=EPSILON)
        self.XtZ = None
        use_context = self.M is not None and self.lam > 0
        if self.update_W:
            if use_context:
                QtQ = self.Q.T @ self.Q if self._QtQ is None else self._QtQ
                gram = (ZtZ.astype(dtype) + self.lam * QtQ)
                inner_X, WtW = self.Xt.update(W, Z, gram, eps=EPSILON, S=self.Q,
                                               c=self.lam)                 # (7b)
            else:
                inner_X, WtW = self.Xt.update(W, Z, ZtZ, eps=EPSILON)      # (7b), λ = 0
            self._WtW = WtW.astype(dtype)  # the next step's Z update needs it
            if self.M is not None:
                inner_M, QtQ = self.Mt.update(self.Q, W, WtW, eps=EPSILON)  # (7c)
                self._QtQ = QtQ.astype(dtype)
                self.MtW = None
        elif inner_X is None:
            return self.objective()
        else:
            WtW = WtW.astype(np.float64)
        data = 0.5 * max(self.sqX - 2.0 * inner_X + float(np.sum(WtW * ZtZ)), 0.0)
        value = data
        if use_context:
            if self.update_W:
                context = 0.5 * max(self.sqM - 2.0 * inner_M + float(np.sum(WtW * QtQ)), 0.0)
            else:
                context = self._context_term(self.W.T @ self.W)
            value += self.lam * context
            self._terms = (data, context)
        elif self.M is None:
            self._terms = (data, 0.0)
        return value
