"""Row blocks of a matrix and the engines that run work on them: in this process, one block
after the other, or on a Dask cluster (``distributed``), one task per block.

Everything out-of-core or distributed in semnmf is written against the small interface
of an *executor*:

- ``ex.map(func, blocks, *shared)`` applies ``func(block, *shared)`` to every block (and
  ``ex.map2(func, a, b, *shared)`` to pairs of blocks); the results stay where they were
  computed;
- ``ex.reduce(parts)`` sums them (elementwise for tuples): here from left to right, on
  Dask as a tree of fan-in :data:`FAN_IN`;
- ``ex.fold(func, blocks, *shared, then=None)`` is ``reduce(map(...))`` for large parts,
  added to a running total as they are made; ``then(total)`` runs where the total is;
- ``ex.share(value)`` sends a broadcast value once; ``ex.gather(parts)`` brings results
  back to the caller.

:class:`BlockedMatrix` is a matrix held as row blocks (scipy.sparse CSR) with its
executor: what the estimators receive when given a Dask array of CSR chunks, a list of
CSR blocks, or the blocks of a :class:`~semnmf.text.shards.ShardedCorpus`. Dask
(``pip install "semnmf[dask]"``) is imported only when a Dask object or cluster is used.
"""

import numpy as np
import scipy.sparse as sp

FAN_IN = 8


def _add(*parts):
    """Elementwise sum of results (arrays, sparse matrices, numbers or tuples of them),
    from left to right."""
    first = parts[0]
    if isinstance(first, tuple):
        return tuple(_add(*items) for items in zip(*parts))
    total = first.copy() if hasattr(first, "copy") else first
    for part in parts[1:]:
        total = total + part
    return total


def _merge(total, part):
    """``total + part`` for :meth:`fold`: in place when the total is an accumulator with a
    ``merge(other)`` method (made by the fold's own tasks), else a new sum."""
    if total is None:
        return part
    if hasattr(total, "merge"):
        return total.merge(part)
    return _add(total, part)


def _fold_step(total, block, func, *shared):
    return _merge(total, func(block, *shared))


def _merge_all(*parts):
    total = None
    for part in parts:
        total = _merge(total, part)
    return total


def _nnz(block):
    return int(block.nnz)


class SerialExecutor:
    """Blocks in this process, processed one after the other (the reference engine: the
    same arithmetic as the Dask engine, in the same order within a block)."""

    name = "serial"

    def map(self, func, blocks, *shared):
        return [func(block, *shared) for block in blocks]

    def map2(self, func, a, b, *shared):
        return [func(x, y, *shared) for x, y in zip(a, b)]

    def reduce(self, parts):
        return _add(*parts)

    def fold(self, func, blocks, *shared, then=None):
        total = None
        for block in blocks:
            total = _fold_step(total, block, func, *shared)
        return total if then is None else then(total)

    def share(self, value):
        return value

    def gather(self, parts):
        return list(parts)

    def release(self, parts):
        pass


class DaskExecutor:
    """Blocks as futures on the workers of a ``distributed.Client``.

    Each task reads its block where it lives (no block is moved); reductions are a tree
    of :data:`FAN_IN`-way sums on the workers, whose root alone comes back."""

    name = "dask"

    def __init__(self, client):
        self.client = client

    def map(self, func, blocks, *shared):
        return [self.client.submit(func, block, *shared, pure=False) for block in blocks]

    def map2(self, func, a, b, *shared):
        return [self.client.submit(func, x, y, *shared, pure=False) for x, y in zip(a, b)]

    def _tree(self, parts, combine=_add):
        parts = list(parts)
        while len(parts) > 1:
            parts = [self.client.submit(combine, *parts[i:i + FAN_IN], pure=False)
                     for i in range(0, len(parts), FAN_IN)]
        return parts[0]

    def reduce(self, parts):
        root = self._tree(parts)
        return root.result() if hasattr(root, "result") else root

    def fold(self, func, blocks, *shared, then=None):
        """One chain of tasks per worker thread: each task adds its block's part to the
        total the chain's previous task left (usually on the same worker, where the total
        lies: the scheduler may move a task, and the total with it), then the chains'
        totals are summed as :meth:`reduce` does and ``then`` runs on the worker holding
        the sum. The chains' totals are released as soon as their sum exists."""
        blocks = list(blocks)
        if not blocks:
            return None if then is None else then(None)
        n_chains = min(len(blocks), self.n_threads())
        chains = [None] * n_chains
        for i, block in enumerate(blocks):
            chains[i % n_chains] = self.client.submit(_fold_step, chains[i % n_chains], block,
                                                      func, *shared, pure=False)
        root = self._tree(chains, _merge_all)
        del chains  # only the sum is needed now: the workers may free the chains' totals
        if then is not None:
            root = self.client.submit(then, root, pure=False)
        return root.result()

    def n_threads(self):
        """Threads over all the workers (at least 1)."""
        return max(1, sum(self.client.nthreads().values()))

    def share(self, value):
        # in a list: scatter would send each item of a dict or tuple apart
        return self.client.scatter([value], broadcast=True, hash=False)[0]

    def gather(self, parts):
        return self.client.gather(list(parts))

    def release(self, parts):
        for part in parts:
            if hasattr(part, "release"):
                part.release()


def dask_client(client=None):
    """The ``distributed.Client`` to use: ``client`` itself, else the current default one,
    else None."""
    if client is not None:
        return client
    try:
        from distributed import default_client
    except ImportError:
        return None
    try:
        return default_client()
    except ValueError:
        return None


def start_client(workers=None, scheduler=None, threads_per_worker=1, processes=True,
                 memory_limit="auto"):
    """A ``distributed.Client`` on a new ``LocalCluster`` of ``workers`` workers, or
    connected to the scheduler at ``scheduler`` (an address such as tcp://host:8786).
    Raises ImportError with the install line when Dask is missing."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ImportError('the Dask engine needs Dask: pip install "semnmf[dask]" '
                          '(dask[array] and distributed)') from None
    if scheduler is not None:
        return Client(scheduler)
    cluster = LocalCluster(n_workers=workers or 1, threads_per_worker=threads_per_worker,
                           processes=processes, memory_limit=memory_limit,
                           dashboard_address=":0")
    return Client(cluster)


def trim_memory():
    """Give freed heap memory back to the operating system (glibc's ``malloc_trim``;
    nothing elsewhere): after tokenizing, the freed strings of a pass otherwise stay in
    the process's resident memory. Returns whether it ran."""
    import ctypes
    import gc

    gc.collect()
    try:
        return bool(ctypes.CDLL("libc.so.6").malloc_trim(0) >= 0)
    except (OSError, AttributeError):
        return False


def trim_workers(client):
    """:func:`trim_memory` on every worker of ``client`` and here."""
    client.run(trim_memory)
    trim_memory()


def is_dask_array(X):
    return type(X).__module__.startswith("dask.array") and hasattr(X, "to_delayed")


def is_blocked(X):
    """Whether ``X`` is matrix given as row blocks: a :class:`BlockedMatrix`, a Dask array,
    or a list / tuple of scipy.sparse matrices."""
    if isinstance(X, BlockedMatrix) or is_dask_array(X):
        return True
    return (isinstance(X, (list, tuple)) and len(X) > 0
            and all(sp.issparse(block) for block in X))


class BlockedMatrix:
    """A matrix of shape (n_rows, n_cols) held as consecutive row blocks.

    Parameters
    ----------
    blocks : list
        The blocks (scipy.sparse CSR matrices, or futures of them for Dask), in row order.
    n_rows_per_block : list of int
    n_cols : int
    executor : SerialExecutor or DaskExecutor
    dtype : numpy dtype
    """

    def __init__(self, blocks, n_rows_per_block, n_cols, executor=None, dtype=np.float64):
        self.blocks = list(blocks)
        self.sizes = [int(n) for n in n_rows_per_block]
        self.n_cols = int(n_cols)
        self.executor = executor or SerialExecutor()
        self.dtype = np.dtype(dtype)

    @property
    def shape(self):
        return (sum(self.sizes), self.n_cols)

    @property
    def offsets(self):
        return np.concatenate([[0], np.cumsum(self.sizes)]).astype(np.int64)

    def __len__(self):
        return len(self.blocks)

    def __repr__(self):
        return (f"BlockedMatrix({self.shape[0]} x {self.shape[1]}, {len(self.blocks)} blocks, "
                f"{self.executor.name} engine)")

    def map(self, func, *shared):
        return self.executor.map(func, self.blocks, *shared)

    @property
    def nnz(self):
        """Stored entries over all the blocks (one small task per block)."""
        return int(sum(self.executor.gather(self.map(_nnz))))

    def gather(self):
        """The whole matrix as one CSR matrix on the caller (small data only)."""
        return sp.vstack(self.executor.gather(self.blocks), format="csr")

    @classmethod
    def from_csr(cls, X, n_blocks=None, block_rows=None, client=None):
        """Cut a CSR matrix into row blocks (balanced by non-zeros), scattered to the
        workers of ``client`` when one is given."""
        X = sp.csr_matrix(X)
        if block_rows is not None:
            bounds = list(range(0, X.shape[0], block_rows)) + [X.shape[0]]
            bounds = [(a, b) for a, b in zip(bounds[:-1], bounds[1:])]
        else:
            from .parallel import row_blocks
            bounds = row_blocks(X.indptr, n_blocks or 1)
        blocks = [X[a:b].copy() for a, b in bounds]
        sizes = [b - a for a, b in bounds]
        if client is None:
            return cls(blocks, sizes, X.shape[1], SerialExecutor(), X.dtype)
        futures = client.scatter(blocks, hash=False)
        return cls(futures, sizes, X.shape[1], DaskExecutor(client), X.dtype)

    @classmethod
    def from_input(cls, X, client=None):
        """The :class:`BlockedMatrix` of what the estimators accept as row blocks.

        - a :class:`BlockedMatrix`: itself;
        - a list / tuple of scipy.sparse matrices: the blocks, processed here (or
          scattered to ``client``);
        - a Dask array of scipy.sparse chunks (one chunk along the columns): computed on
          the workers of the current (or ``client``'s) cluster and kept there, else here.
        """
        if isinstance(X, BlockedMatrix):
            return X
        client = dask_client(client) if (client is not None or is_dask_array(X)) else None
        if is_dask_array(X):
            if len(X.chunks) != 2 or len(X.chunks[1]) != 1:
                raise ValueError("a Dask array given to an estimator must be chunked along the "
                                 "rows only (one chunk of columns): rechunk it with "
                                 "X.rechunk({1: -1}).")
            sizes = list(X.chunks[0])
            if any(np.isnan(s) for s in sizes):
                raise ValueError("the row chunk sizes of the Dask array are unknown; call "
                                 "X.compute_chunk_sizes() first.")
            parts = list(X.to_delayed().ravel())
            if client is not None:
                futures = client.compute(parts)
                return cls(futures, sizes, X.shape[1], DaskExecutor(client), X.dtype)
            import dask

            blocks = [sp.csr_matrix(b) for b in dask.compute(*parts)]
            return cls(blocks, sizes, X.shape[1], SerialExecutor(), X.dtype)
        blocks = [sp.csr_matrix(b) for b in X]
        n_cols = {b.shape[1] for b in blocks}
        if len(n_cols) != 1:
            raise ValueError(f"the row blocks have different numbers of columns: "
                             f"{sorted(n_cols)}.")
        dtypes = {b.dtype for b in blocks}
        dtype = np.float32 if dtypes == {np.dtype(np.float32)} else np.float64
        blocks = [b.astype(dtype, copy=False) for b in blocks]
        sizes = [b.shape[0] for b in blocks]
        if client is not None:
            futures = client.scatter(blocks, hash=False)
            return cls(futures, sizes, n_cols.pop(), DaskExecutor(client), dtype)
        return cls(blocks, sizes, n_cols.pop(), SerialExecutor(), dtype)
