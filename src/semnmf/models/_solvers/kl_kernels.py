"""Numba kernels of the KL multiplicative updates (:mod:`semnmf.models._solvers.kl`).

Every KL update needs one product of the form (slides, Algorithm 2, written out in
:mod:`semnmf.models._solvers.kl`)::

    P = (A ⊘ L Rᵀ) R          A sparse (m x p), L (m x k), R (p x k)

where ``⊘`` divides element-wise at the non-zeros of A only (the zeros of A contribute
nothing to P). :func:`ratio_rows` computes it row by row in one fused pass: for each
non-zero a_ij it forms the k-term dot product s = L_i·R_j, the ratio r = a_ij / s and
adds r·R_j to row i of P. Cost O(k nnz(A)), no temporary beyond P itself (no nnz x k
gather, no n x d product). The same pass returns Σ a_ij log(a_ij / s), the data-dependent
part of the generalized KL divergence D(A‖L Rᵀ) (slides, eq. 2), so the objective
costs one logarithm per non-zero and nothing else.

Both factors of a term use the same kernel: Z's update takes A = X (L = Z, R = W) and
W's takes A = Xᵀ in CSR (L = W, R = Z), so rows are always owned by one thread and no
two threads ever write the same row of P (no atomics, no reduction of partial P).

:class:`RatioKernel` holds a CSR matrix cut once into row blocks of about equal
numbers of non-zeros and runs the blocks on a thread pool (the kernel releases the GIL).
Float32 and float64 factors are both served by the same source: numba compiles one
specialization per dtype on first use (and caches it on disk).
"""

import math

import numba
import numpy as np
import scipy.sparse as sp

from ..._utils.parallel import n_threads, row_blocks, thread_pool

# Reassociation lets LLVM vectorize the k-term dot product; no flag that assumes
# finite values ("nnan", "ninf") is set, so the floor on s keeps its meaning.
_FASTMATH = {"reassoc", "contract", "nsz"}

# Below this many non-zeros one thread does the whole product (a thread hand-off costs
# more than the work).
_MIN_NNZ_FOR_THREADS = 50_000

# Blocks per thread: more blocks than threads lets a thread that is slowed down on a
# shared machine hand its remaining rows to the others.
_BLOCKS_PER_THREAD = 4

@numba.njit(cache=True, nogil=True, fastmath=_FASTMATH)
def ratio_rows(indptr, indices, data, L, R, out, start, stop, floor, with_log):
    """Rows ``start:stop`` of ``out = (A ⊘ max(L Rᵀ, floor)) R``, A = (indptr, indices, data) in CSR.

    ``out`` rows are overwritten. Returns Σ a_ij log(a_ij / max(L_i·R_j, floor)) over
    the non-zeros of these rows, in float64 (0 unless ``with_log``; entries a_ij = 0
    count 0, as 0 log 0 = 0). The ratios of a row are kept in a small buffer and their
    logarithms taken in a second loop, so that the main loop stays free of calls and
    vectorizes (a log call inside it made the pass about 1.3x slower here).
    """
    k = L.shape[1]
    total = 0.0
    longest = 0
    for i in range(start, stop):
        longest = max(longest, indptr[i + 1] - indptr[i])
    ratios = np.empty(longest, dtype=out.dtype)
    for i in range(start, stop):
        for q in range(k):
            out[i, q] = 0
        first, last = indptr[i], indptr[i + 1]
        for p in range(first, last):
            j = indices[p]
            s = L[i, 0] * R[j, 0]
            for q in range(1, k):
                s += L[i, q] * R[j, q]
            if s < floor:
                s = floor
            r = data[p] / s
            ratios[p - first] = r
            for q in range(k):
                out[i, q] += r * R[j, q]
        if with_log:
            for p in range(first, last):
                a = data[p]
                if a > 0:
                    total += np.float64(a) * math.log(np.float64(ratios[p - first]))
    return total


class RatioKernel:
    """The fused product ``(A ⊘ max(L Rᵀ, floor)) R`` for one sparse matrix A, by row blocks.

    Parameters
    ----------
    A : sparse matrix or ndarray of shape (m, p), non-negative
        Converted to CSR once (dense input: its non-zeros only; zero entries of A never
        enter the products, which is exactly what the KL updates need).
    floor : float or None
        Lower bound on (L Rᵀ)_ij before dividing (keeps a degenerate start with
        (L Rᵀ)_ij = 0 at a non-zero a_ij finite). None: ``ε · mean of the non-zeros``
        with ε the float32 machine epsilon, i.e. scikit-learn's guard made scale-free.
    """

    def __init__(self, A, floor=None):
        A = sp.csr_matrix(A) if not sp.issparse(A) else A.tocsr()
        if not A.has_canonical_format:
            A = A.copy()
            A.sum_duplicates()
        self.shape = A.shape
        self.nnz = int(A.nnz)
        self.dtype = A.dtype
        self.indptr, self.indices, self.data = A.indptr, A.indices, A.data
        self.total = float(np.sum(A.data, dtype=np.float64))
        if floor is None:
            mean = self.total / self.nnz if self.nnz else 1.0
            floor = float(np.finfo(np.float32).eps) * (mean if mean > 0 else 1.0)
        self.floor = float(floor)
        workers = n_threads()
        if workers > 1 and self.nnz >= _MIN_NNZ_FOR_THREADS:
            self.blocks = row_blocks(self.indptr, workers * _BLOCKS_PER_THREAD)
        else:
            self.blocks = [(0, self.shape[0])]
        self.workers = workers

    def __call__(self, L, R, out=None, with_log=False):
        """Return ``(P, s)``: P = (A ⊘ max(L Rᵀ, floor)) R of shape (m, k) and
        s = Σ_nz a_ij log(a_ij / max((L Rᵀ)_ij, floor)) (0.0 unless ``with_log``).

        ``L`` (m, k) and ``R`` (p, k) must be C-contiguous and of one float dtype; ``out``
        (m, k) of that dtype is reused when given.
        """
        m, p = self.shape
        if L.shape[0] != m or R.shape[0] != p or L.shape[1] != R.shape[1]:
            raise ValueError(f"shapes {L.shape} and {R.shape} do not match A {self.shape}.")
        if out is None:
            out = np.empty((m, L.shape[1]), dtype=L.dtype)
        floor = L.dtype.type(self.floor)
        args = (self.indptr, self.indices, self.data, L, R, out)
        if len(self.blocks) == 1:
            total = ratio_rows(*args, 0, m, floor, with_log)
        else:
            parts = list(thread_pool(self.workers).map(
                lambda block: ratio_rows(*args, block[0], block[1], floor, with_log),
                self.blocks))
            total = math.fsum(parts)
        return out, float(total)


def warm_up():
    """Compile (or load from the disk cache) the float32 and float64 specializations."""
    A = sp.csr_matrix(np.ones((1, 1)))
    for dtype in (np.float32, np.float64):
        ones = np.ones((1, 1), dtype=dtype)
        RatioKernel(A.astype(dtype))(ones, ones, with_log=True)


__all__ = ["RatioKernel", "ratio_rows", "warm_up"]
