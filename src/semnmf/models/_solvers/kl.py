"""The generalized Kullback-Leibler problem: NMF-KL (λ = 0, no M) and SNMF-KL.

Objective (slides SFC 2019, eq. 2; the slides print (ZW)_ij for (ZWᵀ)_ij)::

    F(Z, W, Q) = D(X‖Z Wᵀ) + λ D(M‖W Qᵀ),    D(A‖B) = Σ_ij a_ij log(a_ij / b_ij) − a_ij + b_ij

Only the non-zeros of A enter the logarithm (0 log 0 = 0), and the sum of B is a product
of column sums, so the n x d matrix Z Wᵀ is never formed::

    D(X‖ZWᵀ) = Σ_{x_ij > 0} x_ij log(x_ij / (ZWᵀ)_ij) − Σ_ij x_ij + (1ᵀZ)(1ᵀW)ᵀ

Multiplicative updates from the auxiliary function of Lee & Seung (2001, Lemma 3): for
a column h ≥ 0 and a term D(x‖B h), Jensen with weights π_ja = B_ja hᵗ_a / (B hᵗ)_j gives

    D(x‖B h) ≤ G(h, hᵗ) = Σ_j [x_j log x_j − x_j] + Σ_ja B_ja h_a
                          − Σ_ja x_j π_ja log(B_ja h_a / π_ja),

which separates into pieces c_a h_a − e_a log h_a, minimized at h_a = e_a / c_a; summing
the bounds of both terms that contain W keeps that form, so F never increases. With ⊘
element-wise division at the non-zeros only and 1 a vector of ones::

    Z ← Z ⊙ [(X ⊘ ZWᵀ) W] ⊘ 1(1ᵀW)                                    (Alg. 2, step 2)
    W ← W ⊙ [(X ⊘ ZWᵀ)ᵀ Z + λ (M ⊘ WQᵀ) Q] ⊘ 1(1ᵀZ + λ 1ᵀQ)           (Alg. 2, step 3)
    Q ← Q ⊙ [(M ⊘ WQᵀ)ᵀ W] ⊘ 1(1ᵀW)                                    (Alg. 2, step 4)

(λ cancels from the Q update; with λ = 0 Q is still fitted to M, W fixed, so that
``context_components_`` and ``context_err_`` mean the same as for the Frobenius loss.)
The slides' printed updates take the ratios in the wrong place; these are derived from
eq. 2.

KKT conditions (what a fixed point satisfies; tested in ``tests/test_kl.py``)::

    ∇_Z F = 1(1ᵀW) − (X ⊘ ZWᵀ) W,    Z ⊙ ∇_Z F = 0,  ∇_Z F ≥ 0 where Z = 0
    ∇_W F = 1(1ᵀZ) − (X ⊘ ZWᵀ)ᵀ Z + λ [1(1ᵀQ) − (M ⊘ WQᵀ) Q]
    ∇_Q F = λ [1(1ᵀW) − (M ⊘ WQᵀ)ᵀ W]

After the Z update Σ_ij (ZWᵀ)_ij = Σ_ij x_ij exactly (the model keeps the mass of X).

Cost. Each bracket is one fused O(k nnz) pass of
:class:`~semnmf.models._solvers.kl_kernels.RatioKernel` over X, Xᵀ, M or Mᵀ; a sweep is
four passes. The passes that give the next step's numerators are evaluated at the
iterate the objective needs, so :meth:`step` ends with them (with the logarithms) and
the objective comes for free.

Guards. A zero column sum in a denominator is replaced by 1 (its numerator is zero too,
F is unchanged). (ZWᵀ)_ij is floored at ε·mean(x_ij > 0) (ε = float32 machine epsilon)
so a degenerate start stays finite; F is the floored objective, and the floor is
inactive in practice (``benchmarks/results/design_notes.md``).

With λ = 0 these are scikit-learn's ``NMF(solver="mu", beta_loss="kullback-leibler")``
updates without its two heuristics (a fixed 1.2e-7 clamp and zeroing entries below
2.2e-16, which can increase F); with both added the two agree to rounding
(``benchmarks/results/kl.md``).
"""

import numpy as np

from ..._utils.parallel import cache_aligned
from .mu import safe_denominator as _safe


def _sums(F, dtype=None):
    """``F.sum(axis=0, dtype=dtype)``, the same numbers by a compiled loop
    (:func:`.kl_kernels.column_sums`; imported here, on use, as the other kernels)."""
    from .kl_kernels import column_sums

    return column_sums(F, dtype)


class _KLObjective:
    """F of eq. (2) from the two passes that also give the next step's products, for
    :class:`KLProblem`, the Dask engine's :class:`~.distributed_kl.BlockedKLProblem` and
    the torch engine's :class:`~.torch_problems.TorchKL` (whose passes give tensors).

    A subclass provides ``_data_pass()`` (sets ``_data`` = D(X‖ZWᵀ) at the current
    iterate) and the attributes ``M`` and ``Mt`` (:class:`~.kl_kernels.RatioKernel`, or
    ``M`` None), ``W``, ``Q``, ``lam``, ``dtype``, ``_C`` and ``_E`` (out buffers of
    (M ⊘ WQᵀ)Q and (Mᵀ ⊘ QWᵀ)W), ``_data``, ``_context``.
    """

    @property
    def _use_context(self):
        return self.M is not None and self.lam > 0

    def _context_pass(self):
        """_C ← (M ⊘ WQᵀ) Q and D(M‖WQᵀ) at the current (W, Q)."""
        _, mlog = self.M(self.W, self.Q, out=self._C, with_log=True)
        mass = float(_sums(self.W, np.float64) @ _sums(self.Q, np.float64))
        self._context = max(mlog - self.M.total + mass, 0.0)

    def _update_W_and_Q(self, B, denominator):
        """Steps 3 and 4 given the data part of W's update: ``B`` = (X ⊘ ZWᵀ)ᵀZ at the new
        Z and ``denominator`` = 1ᵀZ (both overwritten); W and Q change in place."""
        W = self.W
        if self._use_context:
            # step 3: W ← W ⊙ [(X ⊘ ZWᵀ)ᵀZ + λ(M ⊘ WQᵀ)Q] ⊘ 1(1ᵀZ + λ1ᵀQ), new Z, old W, Q
            C = self._C
            C *= self.dtype.type(self.lam)
            B += C
            denominator = denominator + self.dtype.type(self.lam) * _sums(self.Q)
        B /= _safe(denominator)
        W *= B
        self._context = None
        if self.M is not None:
            # step 4: Q ← Q ⊙ (M ⊘ WQᵀ)ᵀW ⊘ 1(1ᵀW), new W
            E, _ = self.Mt(self.Q, W, out=self._E)
            E /= _safe(_sums(W))
            self.Q *= E

    def objective(self):
        """F(Z, W, Q) of eq. (2) at the current iterate."""
        if self._data is None:
            self._data_pass()
        value = self._data
        if self._use_context:
            if self._context is None:
                self._context_pass()
            value = value + self.lam * self._context
        return value

    def terms(self):
        """The two divergences of eq. (2) separately: (D(X‖ZWᵀ), D(M‖WQᵀ))."""
        if self._data is None:
            self._data_pass()
        if self.M is None:
            return self._data, 0.0
        if self._context is None:
            self._context_pass()
        return self._data, self._context


class KLProblem(_KLObjective):
    """One SNMF-KL (or NMF-KL when ``M is None``) problem, updated in place: the parameters
    of :class:`~.frobenius.FrobeniusProblem` (X non-negative; ``lam`` the effective λ of
    eq. 2; ``update_W=False`` freezes W and Q), read the factors from ``.Z``, ``.W``.
    """

    def __init__(self, X, Z, W, M=None, Q=None, lam=0.0, update_W=True, Xt=None, Mt=None):
        from .sparse import transpose_csr  # compiled modules imported here, not with
        from .kl_kernels import RatioKernel  # this module (the Dask workers import it)

        # the passes load the factors' rows as whole vectors: on 64-byte boundaries
        self.Z = cache_aligned(Z)
        self.W = cache_aligned(np.asarray(W, dtype=self.Z.dtype))
        self.dtype = self.Z.dtype
        self.lam = float(lam)
        self.update_W = bool(update_W)
        self.X = RatioKernel(X)
        self.Xt = None
        if self.update_W:
            self.Xt = RatioKernel(transpose_csr(X) if Xt is None else Xt, floor=self.X.floor)
        self.M = None
        self.Q = Q
        if M is not None:
            self.Q = cache_aligned(np.asarray(Q, dtype=self.dtype))
            self.M = RatioKernel(M)
            self.Mt = None
            if self.update_W:
                self.Mt = RatioKernel(transpose_csr(M) if Mt is None else Mt, floor=self.M.floor)
        n, k = self.Z.shape
        d = self.W.shape[0]
        # products of the passes, reused from one iteration to the next
        self._A = np.empty((n, k), dtype=self.dtype)        # (X ⊘ ZWᵀ) W
        self._B = np.empty((d, k), dtype=self.dtype) if self.update_W else None
        self._C = None                                        # (M ⊘ WQᵀ) Q
        self._E = None                                        # (Mᵀ ⊘ QWᵀ) W
        if self.M is not None:
            self._C = np.empty((d, k), dtype=self.dtype)
            if self.update_W:
                self._E = np.empty((self.Q.shape[0], k), dtype=self.dtype)
        self._data = None       # D(X‖ZWᵀ) at the current iterate, with _A valid
        self._context = None    # D(M‖WQᵀ) at the current iterate, with _C valid

    # -- the two passes that give the objective ------------------------------------
    def _data_pass(self):
        """_A ← (X ⊘ ZWᵀ) W and D(X‖ZWᵀ) at the current (Z, W)."""
        _, xlog = self.X(self.Z, self.W, out=self._A, with_log=True)
        mass = float(_sums(self.Z, np.float64) @ _sums(self.W, np.float64))
        self._data = max(xlog - self.X.total + mass, 0.0)

    # -- one sweep of Algorithm 2 (steps 2-4, corrected) -------------------------------
    def step(self):
        Z, W = self.Z, self.W
        if self._data is None:
            self._data_pass()
        if self._use_context and self._context is None:
            self._context_pass()
        # step 2: Z ← Z ⊙ (X ⊘ ZWᵀ)W ⊘ 1(1ᵀW); _A holds the ratios at the current iterate
        A = self._A
        A /= _safe(_sums(W))
        Z *= A
        self._data = None
        if self.update_W:
            B, _ = self.Xt(W, Z, out=self._B)      # (X ⊘ ZWᵀ)ᵀZ: new Z, old W
            self._update_W_and_Q(B, _sums(Z))
        return self.objective()
