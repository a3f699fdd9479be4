"""The one threading layer: thread count, a shared thread pool, row blocks of a CSR matrix,
and the memory layout the compiled passes read dense factors in (:func:`cache_aligned`).

scipy's sparse kernels and numba's compiled loops release the GIL, so a sparse x dense
product split by row blocks runs faster on several threads
(``benchmarks/results/threads.md``). Every part of semnmf that runs work on threads takes
them from here.
"""

import contextlib
import contextvars
import functools
import itertools
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp

# Below this many non-zeros one thread does the whole scipy product (a thread hand-off
# costs more than the work).
MIN_NNZ_FOR_THREADS = 200_000

_SCIPY_PATH = contextvars.ContextVar("semnmf_scipy_path", default=False)

_executor = None
_executor_workers = 0


@functools.lru_cache(maxsize=1)
def _cpu_count():
    # os.cpu_count() is not free, and every compiled pass asks
    return os.cpu_count() or 1


def n_threads():
    """Number of threads for sparse products: $SEMNMF_NUM_THREADS or the CPU count."""
    env = os.environ.get("SEMNMF_NUM_THREADS")
    if env:
        return max(1, int(env))
    return _cpu_count()


def threads_for(nnz, nnz_per_thread):
    """Threads for a pass over ``nnz`` non-zeros: ``n_threads()``, but at most one per
    ``nnz_per_thread`` non-zeros (a thread hand-off costs more than a small share)."""
    return min(n_threads(), max(1, -(-int(nnz) // nnz_per_thread)))


def compiled_kernels():
    """Whether the compiled (numba) kernels may serve a computation: not when
    $SEMNMF_KERNELS is "0" (the reference scipy path, for comparisons), nor inside
    :func:`scipy_path`."""
    return os.environ.get("SEMNMF_KERNELS", "1") != "0" and not _SCIPY_PATH.get()


@contextlib.contextmanager
def scipy_path():
    """Within this block (this thread or task), computations that have a scipy path take
    it, so they do not import numba (about 50-100 MB in a process): the Dask client of a
    fit without a word-context matrix. Results are the same where the compiled kernel is
    bitwise the scipy expression (spherical k-means)."""
    token = _SCIPY_PATH.set(True)
    try:
        yield
    finally:
        _SCIPY_PATH.reset(token)


def thread_pool(workers):
    """The shared thread pool with ``workers`` threads.

    Re-created only when the number of workers changes; an old pool is left to finish
    whatever another thread still runs on it.
    """
    global _executor, _executor_workers
    if _executor is None or _executor_workers != workers:
        _executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="semnmf")
        _executor_workers = workers
    return _executor


def map_blocks(func, n_items, workers):
    """``[func(0), ..., func(n_items - 1)]``, run on ``workers`` threads of which the
    calling thread is one.

    The threads take the next index from a shared counter until none is left; the caller
    works instead of waiting (``benchmarks/results/design_notes.md``). Results are in
    index order, so sums over them do not depend on which thread ran what. When ``func``
    raises, no thread starts a new index, every thread has stopped before this returns,
    and the first exception raised is re-raised.
    """
    if workers <= 1 or n_items <= 1:
        return [func(i) for i in range(n_items)]
    results = [None] * n_items
    # next() on a count is atomic under the GIL; a free-threaded build would need a lock
    counter = itertools.count()
    errors = []

    def drain():
        while not errors and (i := next(counter)) < n_items:
            try:
                results[i] = func(i)
            except BaseException as error:  # noqa: BLE001 - re-raised below
                errors.append(error)

    pool = thread_pool(workers)
    futures = [pool.submit(drain) for _ in range(min(workers, n_items) - 1)]
    drain()
    for future in futures:
        if not future.cancel():  # not started: nothing left for it
            future.result()
    if errors:
        raise errors[0]
    return results


CACHE_LINE = 64


def cache_aligned(array):
    """``array`` itself when it is C-contiguous and starts on a 64-byte boundary, else such
    a copy.

    The compiled passes load rows of the dense factors as whole vectors; numpy only
    promises 16-byte alignment (``benchmarks/results/speed.md``).
    """
    array = np.asarray(array)
    if array.flags.c_contiguous and array.ctypes.data % CACHE_LINE == 0:
        return array
    buffer = np.empty(array.nbytes + CACHE_LINE, dtype=np.uint8)
    start = -buffer.ctypes.data % CACHE_LINE
    out = buffer[start:start + array.nbytes].view(array.dtype).reshape(array.shape)
    out[...] = array
    return out


def row_blocks(indptr, n_blocks):
    """Row bounds of at most ``n_blocks`` consecutive blocks of about equal non-zeros."""
    n_rows, nnz = len(indptr) - 1, int(indptr[-1])
    cuts = np.searchsorted(indptr, np.linspace(0, nnz, n_blocks + 1)[1:-1])
    bounds = np.unique(np.concatenate([[0], cuts, [n_rows]]))
    return [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


class ThreadedProduct:
    """A CSR matrix multiplied by dense matrices by several threads (the scipy reference
    path of the solvers; formerly ``RowBlocked``): ``A @ B`` is the plain scipy product,
    computed by ``n_threads()`` threads on row blocks of ``A`` balanced by non-zeros (a
    dense ``A``: BLAS directly).
    """

    def __init__(self, A):
        self.A = A
        self.shape = A.shape
        self.dtype = A.dtype
        self.blocks = None
        workers = n_threads()
        if sp.issparse(A) and workers > 1 and A.nnz >= MIN_NNZ_FOR_THREADS:
            A = A.tocsr()
            self.blocks = [(a, b, A[a:b]) for a, b in row_blocks(A.indptr, workers)]

    def __matmul__(self, B):
        if self.blocks is None:
            out = self.A @ B
            return np.asarray(out) if not isinstance(out, np.ndarray) else out
        out = np.empty((self.shape[0], B.shape[1]), dtype=np.result_type(self.dtype, B.dtype))

        def work(block):
            a, b, Ab = block
            out[a:b] = Ab @ B

        list(thread_pool(len(self.blocks)).map(work, self.blocks))
        return out
