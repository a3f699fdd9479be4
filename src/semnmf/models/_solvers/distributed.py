"""The Frobenius problem (NMF, Semantic-NMF) on a matrix held as row blocks: the same
sweep as :mod:`.frobenius`, distributed by documents (the Dask engine).

One sweep of updates (7a)-(7c) (see :mod:`.frobenius` for the equations) splits as::

    on the workers, block b (documents of the block, X_b of shape (n_b, d)):
        Z_b ← Z_b ⊙ X_b W / (Z_b WᵀW + ε)                        (7a), local to the block
        S_b = X_bᵀ Z_b  (d x k),   G_b = Z_bᵀ Z_b  (k x k)         partial statistics
    tree reduction (fan-in 8):   XᵀZ = Σ_b S_b,   ZᵀZ = Σ_b G_b
    on the client (d x k and k x k quantities, and the word-context matrix M):
        W ← W ⊙ (XᵀZ + λ M Q) / (W (ZᵀZ + λ QᵀQ) + ε)            (7b)
        Q ← Q ⊙ MᵀW / (Q WᵀW + ε)                                 (7c)
    broadcast W (and WᵀW) to the workers for the next sweep.

The objective (5) comes from the local engine's trace identity, with ‖X‖² = Σ_b ‖X_b‖²
computed once. These are the local engine's iterates, in the same order; only the sums
over documents are associated differently (the last bits). The start and the estimators'
glue: :mod:`semnmf.models.blocked`; the KL loss: :mod:`.distributed_kl`. Not distributed:
``orthogonal=True`` (refused with a clear message).
"""

import numpy as np
import scipy.sparse as sp
from sklearn.preprocessing import normalize

from ..._utils.labels import argmax_labels, strengths_from_factors
from ..._utils.parallel import ThreadedProduct
from ..._utils.validation import empty_rows
from . import mu as _mu
from .mu import EPSILON, trace_residual



# -- block tasks (module level: they travel to the workers) -----------------------------
def _facts(Xb):
    """(‖X_b‖², nnz, smallest value, all finite, Σ x) of a block, in float64."""
    data = np.asarray(Xb.data, dtype=np.float64)
    return (float(data @ data), int(Xb.nnz), float(data.min()) if data.size else 0.0,
            bool(np.isfinite(data).all()), float(data.sum()))


def block_z_update(Xb, Zb, shared):
    W, WtW = shared
    XW = np.asarray(Xb @ W)
    return Zb * (XW / (Zb @ WtW + EPSILON))                          # (7a)


def block_statistics(Xb, Zb):
    return np.asarray(Xb.T @ Zb), Zb.T @ Zb


def _scale(Zb, norms):
    return Zb / norms


def _squares(Zb):
    return np.sum(Zb * Zb, axis=0)


def _labels_and_strengths(Zb, Xb):
    """(labels, strength) of a block's documents: the argmax of each row of Z (-1 for a
    document without a term) and that entry's share of the row's sum
    (:func:`~semnmf._utils.labels.strengths_from_factors`); only these two vectors leave
    the worker."""
    labels = argmax_labels(Zb, empty_rows(Xb))
    return labels, strengths_from_factors(Zb, labels)


def _rows(Xb, index):
    return Xb[index]


def _assign(Xb, centers):
    """Spherical assignment of a block: labels (-1 for empty rows) and the sums of the
    normalized rows per cluster."""
    Xn = normalize(Xb, norm="l2", axis=1)
    similarity = np.asarray(Xn @ centers.T)
    labels = argmax_labels(similarity, np.diff(Xn.indptr) == 0)
    assigned = np.flatnonzero(labels >= 0)
    H = sp.csr_matrix((np.ones(assigned.size), (labels[assigned], assigned)),
                      shape=(centers.shape[0], Xb.shape[0]))
    return labels, np.asarray((H @ Xn).todense())


def _assign_sums(Xb, centers):
    return _assign(Xb, centers)[1]


# -- the problem -------------------------------------------------------------------------
class BlockedFrobeniusProblem:
    """:class:`~.frobenius.FrobeniusProblem` (plain updates, ``orthogonal=False``) on a
    :class:`~semnmf._utils.blocks.BlockedMatrix`: ``Z`` is the list of the blocks' Z_b
    (arrays or futures), W and Q live here."""

    def __init__(self, X, Z, W, M=None, Q=None, lam=0.0, Mt=None, sqX=None):
        self.X = X
        self.ex = X.executor
        self.Z, self.W = list(Z), W
        self.sqX = sqX if sqX is not None else self.ex.reduce(X.map(_facts))[0]
        self.lam = float(lam)
        self.M = None
        if M is not None:
            self.M = ThreadedProduct(M)
            from .sparse import transpose_csr  # here, not at import: the workers that
            # run this module's block tasks then never load numba (about 55 MB each)
            self.Mt = ThreadedProduct(transpose_csr(M) if Mt is None else Mt)
            self.Q = Q
            self.sqM = _mu.squared_norm(M)
            self.MtW = self.Mt @ W
        self.XtZ, self.ZtZ = self.ex.reduce(self.ex.map2(block_statistics, X.blocks, self.Z))

    def _data_term(self, WtW):
        return trace_residual(self.sqX, self.W, self.XtZ, WtW, self.ZtZ)

    def _context_term(self, WtW):
        return trace_residual(self.sqM, self.Q, self.MtW, WtW, self.Q.T @ self.Q)

    def objective(self):
        WtW = self.W.T @ self.W
        value = self._data_term(WtW)
        if self.M is not None and self.lam > 0:
            value += self.lam * self._context_term(WtW)
        return value

    def terms(self):
        WtW = self.W.T @ self.W
        return self._data_term(WtW), (self._context_term(WtW) if self.M is not None else 0.0)

    def step(self):
        W = self.W
        shared = self.ex.share((W, W.T @ W))
        old, self.Z = self.Z, self.ex.map2(block_z_update, self.X.blocks, self.Z, shared)   # (7a)
        self.ex.release(old)
        self.XtZ, self.ZtZ = self.ex.reduce(self.ex.map2(block_statistics, self.X.blocks, self.Z))
        _mu.update_W_and_Q(self, self.ZtZ)                                          # (7b), (7c)
        return self.objective()


# -- helpers -------------------------------------------------------------------------------
def _cut(Z, X):
    offsets = X.offsets
    parts = [np.ascontiguousarray(Z[a:b]) for a, b in zip(offsets[:-1], offsets[1:])]
    if X.executor.name == "dask":
        return X.executor.client.scatter(parts, hash=False)
    return parts


