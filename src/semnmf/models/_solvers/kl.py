"""The generalized Kullback-Leibler problem: NMF-KL (λ = 0, no M) and SNMF-KL.

Objective (slides SFC 2019, eq. 2)::

    F(Z, W, Q) = D(X‖Z Wᵀ) + λ D(M‖W Qᵀ),    D(A‖B) = Σ_ij a_ij log(a_ij / b_ij) − a_ij + b_ij

(the slides print (ZW)_ij in the last term of the first sum: it is (ZWᵀ)_ij). Only the
non-zeros of A enter the logarithm (0 log 0 = 0), and the sum of B over all entries is
a product of column sums, so the n x d matrix Z Wᵀ is never formed::

    D(X‖ZWᵀ) = Σ_{x_ij > 0} x_ij log(x_ij / (ZWᵀ)_ij) − Σ_ij x_ij + (1ᵀZ)(1ᵀW)ᵀ

Multiplicative updates, derived by the auxiliary function of Lee & Seung (2001, Lemma 3).
For a column h ≥ 0 (any column of any factor) and a term D(x‖B h), concavity of log
(Jensen, with weights π_ja = B_ja hᵗ_a / (B hᵗ)_j) gives

    D(x‖B h) ≤ G(h, hᵗ) = Σ_j [x_j log x_j − x_j] + Σ_ja B_ja h_a
                          − Σ_ja x_j π_ja log(B_ja h_a / π_ja),

with equality at h = hᵗ. G separates over the entries h_a and each piece has the form
c_a h_a − e_a log h_a, minimized at h_a = e_a / c_a. Summing the bounds of the two terms
of F that contain W (W is the right factor of the first and the left factor of the
second) keeps an auxiliary function of the same form, so each factor has a closed-form
minimizer of its bound and F never increases (Lee & Seung's Theorem 2 argument). With ⊘
element-wise division at the non-zeros only and 1 a vector of ones::

    Z ← Z ⊙ [(X ⊘ ZWᵀ) W] ⊘ 1(1ᵀW)                                    (Alg. 2, step 2)
    W ← W ⊙ [(X ⊘ ZWᵀ)ᵀ Z + λ (M ⊘ WQᵀ) Q] ⊘ 1(1ᵀZ + λ 1ᵀQ)           (Alg. 2, step 3)
    Q ← Q ⊙ [(M ⊘ WQᵀ)ᵀ W] ⊘ 1(1ᵀW)                                    (Alg. 2, step 4)

(λ cancels from the Q update; with λ = 0 Q is still fitted to M, W fixed, so that
``context_components_`` and ``context_err_`` mean the same as for the Frobenius loss.)
The slides' printed updates are garbled: step 2 reads Z ⊙ X / (ZWᵀW) / Σ_j W_jk (the
ratio must be taken element-wise, X ⊘ ZWᵀ, *then* multiplied by W: ZWᵀW is the
Frobenius denominator); step 3 reads W ⊙ (XᵀZ / (WZᵀZ) + λ M / (WQᵀQ)) / Σ_i Z_ik +
λ Σ_j' Q_j'k (same misplaced ratios, and the denominator is the whole sum
Σ_i Z_ik + λ Σ_j' Q_j'k, not Σ_i Z_ik alone); step 4 reads Q ⊙ Mᵀ / (QWᵀW) / Σ_j W_jk
(should be (M ⊘ WQᵀ)ᵀ W). The formulas above are the ones derived from eq. 2.

KKT conditions (what a fixed point satisfies; tested in ``tests/test_kl.py``)::

    ∇_Z F = 1(1ᵀW) − (X ⊘ ZWᵀ) W,    Z ⊙ ∇_Z F = 0,  ∇_Z F ≥ 0 where Z = 0
    ∇_W F = 1(1ᵀZ) − (X ⊘ ZWᵀ)ᵀ Z + λ [1(1ᵀQ) − (M ⊘ WQᵀ) Q]
    ∇_Q F = λ [1(1ᵀW) − (M ⊘ WQᵀ)ᵀ W]

A side effect of the Z update worth knowing: afterwards Σ_ij (ZWᵀ)_ij = Σ_ij x_ij
exactly (the model keeps the mass of X).

Cost. Each bracket is one fused pass of :class:`~semnmf.models._solvers.kl_kernels.RatioKernel`
over a CSR matrix (X, Xᵀ, M, Mᵀ kept once per fit), O(k nnz) with no nnz x k or n x d
temporary. One sweep is four passes, the minimum (each factor needs the ratios at the
current values of the others). The objective comes for free: the pass over X that
gives Z's next numerator is evaluated at the iterate (Zᵗ, Wᵗ) the objective needs, and
likewise the pass over M that gives the next W's context numerator. So :meth:`step`
ends by running those two passes (with the logarithms) and keeps their products for
the next step; the driver :func:`semnmf.models._solvers.mu.run` is unchanged.

Guards. A column sum 1ᵀW (or 1ᵀZ + λ1ᵀQ) that is zero makes the numerator zero too;
it is replaced by 1 (the factor column stays zero, F is unchanged, so monotonicity is
kept exactly). (ZWᵀ)_ij is floored at ε·mean(x_ij > 0) (ε = float32 machine epsilon:
scikit-learn's guard, made scale-free) before dividing and in the objective, so a
degenerate start with (ZWᵀ)_ij = 0 at a non-zero x_ij stays finite. F is the floored
objective, and the updates are exact MU for it wherever the floor is inactive, which is
the case in practice: a tiny (ZWᵀ)_ij at a non-zero costs x_ij log(x_ij / (ZWᵀ)_ij) in F,
so the fit keeps it above the floor (``benchmarks/results/design_notes.md``).

Against scikit-learn. With λ = 0 these are the updates of scikit-learn's
``NMF(solver="mu", beta_loss="kullback-leibler")`` (its W is our Z, its H our Wᵀ), with two
heuristics of scikit-learn left out: it clamps (ZWᵀ)_ij at 1.2e-7 whatever the scale of
X, and after each update it sets the entries of H below 2.2e-16 to zero
(``_fit_multiplicative_update``, "necessary for stability with beta_loss < 1", applied
for beta_loss <= 1). The zeroing is not a step of the auxiliary-function argument and
can increase F; KL updates do drive most word weights of a topic towards 0, so the two
runs part (scikit-learn's divergence ends a little higher); with both heuristics added to
our kernel the two agree to rounding (``benchmarks/studies/bench_kl.py``,
``benchmarks/results/kl.md``, ``benchmarks/results/design_notes.md``). Shrinking entries do
reach the subnormal range, but a pass over W with them costs no more than over W with them
flushed to zero, so they are left alone.
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
    :class:`KLProblem` and the Dask engine's :class:`~.distributed_kl.BlockedKLProblem`.

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
            value += self.lam * self._context
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
    """One SNMF-KL (or NMF-KL when ``M is None``) problem, updated in place.

    Parameters
    ----------
    X : CSR or ndarray (n, d), non-negative
    Z, W : ndarray (n, k), (d, k), modified in place (or a 64-byte-aligned copy when they
        are not aligned, see :func:`~semnmf._utils.parallel.cache_aligned`: read ``.Z``, ``.W``)
    M : CSR or ndarray (d, d') or None
    Q : ndarray (d', k) or None
    lam : float
        Effective (absolute) λ of eq. (2) (see :func:`semnmf.models.semantic.effective_lambda`).
    update_W : bool
        False freezes W (and Q): only the Z update runs (``transform``).
    Xt, Mt : CSR or ndarray, optional
        Xᵀ and Mᵀ when the caller already has them (restarts share one transpose).

    ``objective()`` is F at the current iterate; ``step()`` performs one sweep (Z, W, Q)
    and returns F at the new iterate; ``terms()`` returns (D(X‖ZWᵀ), D(M‖WQᵀ)).
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
