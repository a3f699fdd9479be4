"""The generalized KL problem (NMF-KL, SNMF-KL) on a matrix held as row blocks: the sweep
of :class:`~.kl.KLProblem`, distributed by documents (the Dask engine).

One sweep of the KL updates (slides, Algorithm 2, steps 2-4 as derived in :mod:`.kl`)
splits as::

    on the workers, block b (documents of the block, X_b of shape (n_b, d)):
        A_b = (X_b ⊘ Z_bWᵀ) W,  ℓ_b = Σ x log(x / (Z_bWᵀ)),  1ᵀZ_b        the data pass
        Z_b ← Z_b ⊙ A_b ⊘ 1(1ᵀW)                                        step 2, local
        B_b = (X_bᵀ ⊘ W Z_bᵀ) Z_b  (d x k),  1ᵀZ_b                      partial statistics
    tree reduction (fan-in 8):   B = Σ_b B_b,   1ᵀZ = Σ_b 1ᵀZ_b
    on the client (d x k quantities and the word-context matrix M):
        W ← W ⊙ [B + λ (M ⊘ WQᵀ) Q] ⊘ 1(1ᵀZ + λ 1ᵀQ)                    step 3
        Q ← Q ⊙ [(M ⊘ WQᵀ)ᵀ W] ⊘ 1(1ᵀW)                                 step 4
    broadcast W; the data pass at the new (Z, W) gives F and the next A_b.

Each block computes B_b from X_b as stored (:func:`~.kl_kernels.ratio_columns`), so no
block keeps a transposed copy; the objective is D(X‖ZWᵀ) = Σ_b ℓ_b − ΣX + (Σ_b 1ᵀZ_b)(1ᵀW)ᵀ,
and the floor on (ZWᵀ)_ij is the local engine's, from the blocks' sums.

These are the local engine's iterates, in the same order; only the sums over documents
are associated differently (the last bits; with float32 factors the block tasks' float64
logarithms move the objective by a few 1e-9). The block tasks import numba inside the
tasks, so a worker that runs only Frobenius fits never loads it.
"""

import numpy as np

from .distributed import _facts
from .kl import _KLObjective, _sums
from .mu import safe_denominator as _safe


# -- block tasks (module level: they travel to the workers) -----------------------------
def block_data_pass(Xb, Zb, shared):
    """``(Z_b, A_b, (ℓ_b, 1ᵀZ_b in float64))`` at the current (Z_b, W)."""
    from .fro_kernels import _vector_width
    from .kl_kernels import ratio_logs

    W, floor = shared
    Zb = np.ascontiguousarray(Zb)
    A = np.empty(Zb.shape, dtype=Zb.dtype)
    log_sum = ratio_logs(Xb.indptr, Xb.indices, Xb.data, Zb, W, A, 0, Zb.shape[0],
                         Zb.dtype.type(floor), _vector_width(Zb.shape[1]))
    return Zb, A, (float(log_sum), _sums(Zb, np.float64))


def block_statistics(state):
    return state[-1]


def block_z_and_numerator(Xb, state, shared):
    """Step 2 on the block, then its part of step 3's numerator at the new Z_b:
    ``(Z_b, (B_b, 1ᵀZ_b))``."""
    from .fro_kernels import _vector_width
    from .kl_kernels import ratio_columns

    W, w_sums, floor = shared
    Zb, A, _ = state
    Zb = Zb * (A / w_sums)          # step 2, as KLProblem.step (a new array: a task
    # never changes its inputs, which Dask may still hold or run again)
    B = np.empty(W.shape, dtype=Zb.dtype)
    ratio_columns(Xb.indptr, Xb.indices, Xb.data, Zb, W, B, Zb.dtype.type(floor),
                  _vector_width(Zb.shape[1]))
    return Zb, (B, _sums(Zb))


def _first(state):
    return state[0]


# -- the problem -------------------------------------------------------------------------
class BlockedKLProblem(_KLObjective):
    """:class:`~.kl.KLProblem` on a :class:`~semnmf._utils.blocks.BlockedMatrix`: ``Z`` is
    the list of the blocks' Z_b (arrays or futures), W and Q live here.

    ``objective()``, ``terms()`` and ``step()`` mean what they mean for the local
    problem, so :func:`~.mu.best_of_runs` drives both."""

    def __init__(self, X, Z, W, M=None, Q=None, lam=0.0, Mt=None, total=None, nnz=None):
        from .kl_kernels import RatioKernel, scale_free_floor  # the client's (M lives here)

        self.X = X
        self.ex = X.executor
        self.Z = list(Z)
        self.W = np.ascontiguousarray(W, dtype=X.dtype)
        self.dtype = self.W.dtype
        self.lam = float(lam)
        if total is None or nnz is None:  # ΣX and nnz(X), summed over the blocks
            facts = self.ex.reduce(X.map(_facts))
            nnz, total = facts[1], facts[4]
        self.total = float(total)
        self.floor = scale_free_floor(self.total, nnz)   # the local engine's floor on X
        self.M = self.Q = None
        if M is not None:
            from .sparse import transpose_csr

            self.Q = np.ascontiguousarray(Q, dtype=self.dtype)
            self.M = RatioKernel(M)
            self.Mt = RatioKernel(transpose_csr(M) if Mt is None else Mt, floor=self.M.floor)
            self._C = np.empty(self.W.shape, dtype=self.dtype)    # (M ⊘ WQᵀ) Q
            self._E = np.empty(self.Q.shape, dtype=self.dtype)    # (Mᵀ ⊘ QWᵀ) W
        self._state = None      # per block (Z_b, A_b, statistics) at the current iterate
        self._data = None       # D(X‖ZWᵀ) at the current iterate
        self._context = None    # D(M‖WQᵀ) at the current iterate, with _C valid

    # -- the data pass, on the blocks (the context pass is the local engine's) -------
    def _data_pass(self):
        shared = self.ex.share((self.W, self.floor))
        self._state = self.ex.map2(block_data_pass, self.X.blocks, self.Z, shared)
        log_sum, z_sums = self.ex.reduce(self.ex.map(block_statistics, self._state))
        mass = float(z_sums @ _sums(self.W, np.float64))
        self._data = max(log_sum - self.total + mass, 0.0)

    # -- one sweep (steps 2-4 of Algorithm 2, corrected in .kl) ----------------------
    def step(self):
        W = self.W
        if self._data is None:
            self._data_pass()
        if self._use_context and self._context is None:
            self._context_pass()
        shared = self.ex.share((W, _safe(_sums(W)), self.floor))
        results = self.ex.map2(block_z_and_numerator, self.X.blocks, self._state, shared)
        old, self.Z = self.Z, self.ex.map(_first, results)                      # step 2
        self.ex.release(old)
        self.ex.release(self._state)
        self._state, self._data = None, None
        B, denominator = self.ex.reduce(self.ex.map(block_statistics, results))
        self.ex.release(results)
        self._update_W_and_Q(B, denominator)                              # steps 3 and 4
        return self.objective()
