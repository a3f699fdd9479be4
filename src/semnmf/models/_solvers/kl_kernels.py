"""Numba kernels of the KL multiplicative updates (:mod:`semnmf.models._solvers.kl`).

Every KL update needs one product of the form (slides, Algorithm 2)::

    P = (A ⊘ L Rᵀ) R          A sparse (m x p), L (m x k), R (p x k)

with ``⊘`` element-wise at the non-zeros of A only. :func:`ratio_block` computes it row
by row in one fused pass (for each non-zero a_ij: s = L_i·R_j, then adds (a_ij / s)·R_j
to row i of P), O(k nnz(A)) with no temporary beyond P; :func:`ratio_logs` adds
Σ a_ij log(a_ij / s), the data-dependent part of D(A‖L Rᵀ) (slides, eq. 2). Z's update
takes A = X and W's A = Xᵀ in CSR, so every row of P is written by one thread.

:class:`RatioKernel` holds a CSR matrix cut once into row blocks of about equal numbers
of non-zeros and runs the blocks on a thread pool (the kernel releases the GIL).
"""

import math

import numba
import numpy as np
import scipy.sparse as sp

from ..._utils.parallel import map_blocks, n_threads, row_blocks
from .fro_kernels import _vector_width, canonical_csr
from .simd import ratio_row, row_dot

# Reassociation lets LLVM vectorize the k-term dot product; no flag that assumes
# finite values ("nnan", "ninf") is set, so the floor on s keeps its meaning.
_FASTMATH = {"reassoc", "contract", "nsz"}

# Below this many non-zeros one thread does the whole product (a thread hand-off costs
# more than the work).
_MIN_NNZ_FOR_THREADS = 50_000

# Blocks per thread: more blocks than threads lets a thread that is slowed down on a
# shared machine hand its remaining rows to the others.
_BLOCKS_PER_THREAD = 4

# Non-zeros whose ratios are kept at once for their logarithms (2 MB a thread in float64,
# 1 MB in float32).
_LOG_CHUNK = 1 << 18

@numba.njit(cache=True, nogil=True, fastmath=_FASTMATH, inline="always")
def _dot(L, i, R, j, k):
    """L_i · R_j over the k columns."""
    s = L[i, 0] * R[j, 0]
    for q in range(1, k):
        s += L[i, q] * R[j, q]
    return s


@numba.njit(cache=True, nogil=True, fastmath=_FASTMATH, inline="always")
def _ratio_row(indptr, indices, data, L, R, out, i, ratios, floor, shape):
    """Row i of ``out = (A ⊘ max(L Rᵀ, floor)) R``; its ratios go to ``ratios[p - first]``
    (``first = indptr[i]``). For a compile-time k (``shape``,
    :func:`~.fro_kernels._vector_width`) in vector registers
    (:func:`~semnmf.models._solvers.simd.ratio_row`)."""
    if len(shape) > 0:
        ratio_row(indptr, indices, data, L, R, out, i, ratios, floor, shape)
        return
    k = L.shape[1]
    first = np.uint64(indptr[i])
    end = np.uint64(indptr[i + 1])
    for q in range(k):
        out[i, q] = 0
    # the ratios of two non-zeros, then one update of the sums for both (the loop over
    # the columns waits for the previous store half as often)
    p = first
    while p + np.uint64(1) < end:
        j0 = np.uint64(indices[p])
        j1 = np.uint64(indices[p + np.uint64(1)])
        r0 = data[p] / max(_dot(L, i, R, j0, k), floor)
        r1 = data[p + np.uint64(1)] / max(_dot(L, i, R, j1, k), floor)
        ratios[p - first] = r0
        ratios[p + np.uint64(1) - first] = r1
        for q in range(k):
            out[i, q] += r0 * R[j0, q] + r1 * R[j1, q]
        p += np.uint64(2)
    if p < end:
        j0 = np.uint64(indices[p])
        r0 = data[p] / max(_dot(L, i, R, j0, k), floor)
        ratios[p - first] = r0
        for q in range(k):
            out[i, q] += r0 * R[j0, q]


@numba.njit(cache=True, nogil=True, fastmath=_FASTMATH)
def ratio_block(indptr, indices, data, L, R, out, start, stop, floor, shape, ratios, keep):
    """Rows ``start:stop`` of ``out = (A ⊘ max(L Rᵀ, floor)) R`` (overwritten), A =
    (indptr, indices, data) in CSR. With ``keep`` the ratios a_ij / max(L_i·R_j, floor)
    of all their non-zeros go to ``ratios`` (of length ``indptr[stop] - indptr[start]``, in
    the order of the non-zeros), for the objective's logarithms (:func:`ratio_logs`);
    else ``ratios`` is scratch of at least the longest row's length. ``shape``: see
    :func:`~.fro_kernels._vector_width`."""
    base = indptr[start]
    for i in range(start, stop):
        at = indptr[i] - base if keep else 0
        _ratio_row(indptr, indices, data, L, R, out, i, ratios[at:], floor, shape)


def ratio_logs(indptr, indices, data, L, R, out, start, stop, floor, shape):
    """:func:`ratio_block` of rows ``start:stop``, and Σ a_ij log(a_ij / max(L_i·R_j,
    floor)) over their non-zeros in float64 (entries a_ij = 0 count 0, as 0 log 0 = 0).

    The ratios are kept for about ``_LOG_CHUNK`` non-zeros at a time and their logarithms
    taken by numpy's vectorized log, cheaper than a log per non-zero in the compiled loop
    (``benchmarks/results/kl.md``), in the factors' dtype; the sum is in float64."""
    ratios = np.empty(min(_LOG_CHUNK, int(indptr[stop] - indptr[start])), dtype=L.dtype)
    total = 0.0
    while start < stop:
        end = int(np.searchsorted(indptr, indptr[start] + _LOG_CHUNK, "right")) - 1
        end = min(max(end, start + 1), stop)
        lo, hi = indptr[start], indptr[end]
        if hi - lo > ratios.size:  # one row longer than a chunk
            ratios = np.empty(hi - lo, dtype=L.dtype)
        part = ratios[:hi - lo]
        ratio_block(indptr, indices, data, L, R, out, start, end, floor, shape, part, True)
        with np.errstate(divide="ignore"):  # a ratio of 0 (a_ij = 0) is skipped
            np.log(part, out=part)
        total += weighted_logs(data[lo:hi], part)
        start = end
    return total


@numba.njit(cache=True, nogil=True, fastmath=_FASTMATH)
def weighted_logs(data, logs):
    """Σ a_p · logs_p over the entries with a_p > 0 (0 log 0 = 0), in float64."""
    total = 0.0
    for p in range(data.shape[0]):
        a = np.float64(data[p])
        total += a * logs[p] if a > 0 else 0.0
    return total


@numba.njit(cache=True, nogil=True, fastmath=_FASTMATH)
def ratio_columns(indptr, indices, data, L, R, out, floor, shape):
    """``out = (Aᵀ ⊘ max(R Lᵀ, floor)) L`` of shape (p, k), A = (indptr, indices, data) in
    CSR (m x p), read by its rows: the transposed product of :func:`ratio_block` without
    forming Aᵀ.

    For each non-zero a_ij: s = L_i·R_j (as :func:`ratio_block` computes it, so the
    engines divide by the same numbers), out_j += a_ij / max(s, floor) · L_i. One thread
    writes all of ``out``: W's numerator from a block of documents in a Dask block task
    (:mod:`semnmf.models._solvers.distributed_kl`). ``out`` is overwritten. ``shape``: see
    :func:`~.fro_kernels._vector_width`.
    """
    m, k = L.shape
    out[:] = 0
    for i in range(m):
        first = np.uint64(indptr[i])
        last = np.uint64(indptr[i + 1])
        if len(shape) > 0:
            for p in range(first, last):
                j = np.uint64(indices[p])
                s = row_dot(L, i, R, j, shape)  # the dot product of ratio_row, bitwise
                if s < floor:
                    s = floor
                r = out.dtype.type(data[p]) / s
                for q in range(len(shape)):
                    out[j, q] += r * L[i, q]
        else:
            for p in range(first, last):
                j = np.uint64(indices[p])
                r = data[p] / max(_dot(L, i, R, j, k), floor)
                for q in range(k):
                    out[j, q] += r * L[i, q]
    return out


@numba.njit(cache=True, nogil=True)
def _column_sums(F, out):
    for i in range(F.shape[0]):
        for q in range(F.shape[1]):
            out[q] += F[i, q]


def column_sums(F, dtype=None):
    """``F.sum(axis=0, dtype=dtype)`` of a 2-D float32 or float64 array F (n, k): the same
    numbers, faster.

    numpy sums the rows of a C-ordered F in order when k ≥ 2; this loop adds them in the
    same order and dtype, without reassociation, in a fraction of numpy's time
    (``benchmarks/results/kl.md``). k = 1 (summed pairwise by numpy), non-C-ordered F
    and other dtypes are left to numpy.
    """
    if (F.ndim != 2 or F.shape[1] < 2 or not F.flags.c_contiguous
            or F.dtype not in (np.float32, np.float64)):
        return F.sum(axis=0, dtype=dtype)
    out = np.zeros(F.shape[1], dtype=F.dtype if dtype is None else dtype)
    _column_sums(F, out)
    return out


def scale_free_floor(total, nnz):
    """The default floor on (L Rᵀ)_ij: ε₃₂ · the mean of A's non-zeros (``total / nnz``),
    scikit-learn's guard made scale-free; ε₃₂ alone for an empty or all-zero A."""
    mean = total / nnz if nnz else 1.0
    return float(np.finfo(np.float32).eps) * (mean if mean > 0 else 1.0)


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
        A = canonical_csr(A if sp.issparse(A) else sp.csr_matrix(A))
        self.shape = A.shape
        self.nnz = int(A.nnz)
        self.dtype = A.dtype
        self.indptr, self.indices, self.data = A.indptr, A.indices, A.data
        self.total = float(np.sum(A.data, dtype=np.float64))
        self.longest = int(np.diff(self.indptr).max(initial=0))
        self.floor = float(scale_free_floor(self.total, self.nnz) if floor is None else floor)
        workers = n_threads()
        if workers > 1 and self.nnz >= _MIN_NNZ_FOR_THREADS:
            self.blocks = row_blocks(self.indptr, workers * _BLOCKS_PER_THREAD)
        else:
            self.blocks = [(0, self.shape[0])]
        self.workers = workers

    def __call__(self, L, R, out=None, with_log=False):
        """Return ``(P, s)``: P = (A ⊘ max(L Rᵀ, floor)) R of shape (m, k) and
        s = Σ_nz a_ij log(a_ij / max((L Rᵀ)_ij, floor)) (0.0 unless ``with_log``).

        ``L`` (m, k) and ``R`` (p, k): float arrays, computed in L's dtype (C-contiguous
        copies are made when they are not); ``out`` (m, k), C-contiguous of that dtype, is
        reused when given.
        """
        m, p = self.shape
        if L.shape[0] != m or R.shape[0] != p or L.shape[1] != R.shape[1]:
            raise ValueError(f"shapes {L.shape} and {R.shape} do not match A {self.shape}.")
        L = np.ascontiguousarray(L)
        R = np.ascontiguousarray(R, dtype=L.dtype)
        if out is None:
            out = np.empty((m, L.shape[1]), dtype=L.dtype)
        floor = L.dtype.type(self.floor)
        args = (self.indptr, self.indices, self.data, L, R, out)
        shape = _vector_width(L.shape[1])
        blocks = self.blocks
        if not with_log:
            scratch = [np.empty(max(self.longest, 1), dtype=L.dtype) for _ in blocks]
            map_blocks(lambda b: ratio_block(*args, *blocks[b], floor, shape, scratch[b], False),
                       len(blocks), self.workers)
            return out, 0.0
        parts = map_blocks(lambda b: ratio_logs(*args, *blocks[b], floor, shape),
                           len(blocks), self.workers)
        return out, float(math.fsum(parts))


def warm_up():
    """Compile (or load from the disk cache) the float32 and float64 specializations."""
    A = sp.csr_matrix(np.ones((1, 1)))
    for dtype in (np.float32, np.float64):
        for k in (1, 4, 20):
            ones = np.ones((1, k), dtype=dtype)
            RatioKernel(A.astype(dtype))(ones, ones, with_log=True)
            column_sums(ones)
        column_sums(np.ones((1, 2), dtype=dtype), np.float64)


__all__ = ["RatioKernel", "column_sums", "ratio_block", "ratio_columns", "ratio_logs",
           "warm_up", "weighted_logs"]
