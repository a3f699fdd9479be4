"""Sparse similarity graphs between documents (or any samples).

The graphs are built as in the game-theoretic refinement paper (GT, Tripodi, Vascon &
Pelillo 2016, §V-B) and SymNMF (Kuang, Yun & Park 2015):

1. a similarity ``s_ij`` with ``s_ii = 0``: the cosine of L2-normalized rows for text, a
   self-tuning Gaussian kernel ``exp(-‖x_i − x_j‖² / (σ_i σ_j))`` with ``σ_i`` the
   distance of ``x_i`` to its 7th nearest neighbour (Zelnik-Manor & Perona 2004) for
   dense features;
2. sparsified to the ``q`` nearest neighbours of each point, ``q = ⌊log₂ n⌋ + 1``
   (GT eq. 8), or ``q_i = ⌊log₂ |C_i|⌋ + 1`` from a partition (GT eq. 9);
3. symmetrized: the element-wise maximum of the directed kNN matrix and its transpose;
4. scaled in a normalized-cut fashion, ``A = D^{-1/2} Ŝ D^{-1/2}``, ``D = diag(Ŝ 1)``.

:func:`knn_graph` does steps 1-3 with an exact search whose memory is bounded by row
chunks (``sklearn.get_config()["working_memory"]``), never n x n: scikit-learn's for the
euclidean metric, our own for the cosine (:func:`_cosine_kneighbors`,
``benchmarks/results/knn.md``; on a GPU for dense rows, :func:`_cosine_kneighbors_torch`);
:func:`normalized_cut_scaling` does step 4.
"""

import numbers
import threading

import numpy as np
import scipy.sparse as sp
from joblib import effective_n_jobs
from sklearn import get_config
from sklearn.neighbors import NearestNeighbors
from sklearn.utils.extmath import safe_sparse_dot

from .._utils.devices import check_device, is_device_name, require_torch, resolve_device
from .._utils.validation import (check_matrix, check_positive_int, check_square_nonnegative,
                                 empty_rows, unit_rows)
from .._utils.parallel import compiled_kernels, n_threads, thread_pool

__all__ = ["knn_graph", "cosine_kneighbors", "normalized_cut_scaling", "log2_neighbors",
           "cluster_log2_neighbors"]

METRICS = ("cosine", "euclidean")
WEIGHTS = ("auto", "cosine", "self-tuning", "heat", "binary")
SYMMETRIZE = ("max", "mean", "min", None)


def log2_neighbors(n_samples):
    """Number of neighbours that keeps a kNN graph connected, GT eq. 8:
    ``q = ⌊log₂ n⌋ + 1`` for ``n_samples`` = n >= 1 (after von Luxburg 2007)."""
    n_samples = check_positive_int(n_samples, "n_samples")
    return int(_floor_log2(np.asarray([n_samples]))[0]) + 1


def cluster_log2_neighbors(labels):
    """Per-point neighbour counts from a partition: GT eq. 9.

    ``q_i = ⌊log₂ |C_i|⌋ + 1`` where ``C_i`` is the cluster of point i (GT §V-C): eq. 8
    applied to the point's cluster (the neighbours are still searched among all points).

    Parameters
    ----------
    labels : array-like of int, shape (n_samples,)
        Cluster of each point; a negative label (no cluster) gets the global ``q`` of eq. 8.

    Returns
    -------
    q : ndarray of int64, shape (n_samples,)
    """
    labels = np.asarray(labels)
    if labels.ndim != 1 or labels.size == 0:
        raise ValueError(
            f"labels must be a non-empty 1-D array with one cluster per point; got shape {labels.shape}.")
    if not np.issubdtype(labels.dtype, np.integer):
        raise ValueError(f"labels must be integers, got dtype {labels.dtype}.")
    assigned = labels >= 0
    q = np.full(labels.shape[0], log2_neighbors(labels.shape[0]), dtype=np.int64)
    if assigned.any():
        _, inverse, sizes = np.unique(labels[assigned], return_inverse=True, return_counts=True)
        q[assigned] = _floor_log2(sizes)[inverse] + 1
    return q


def _floor_log2(m):
    """⌊log₂ m⌋ for integers m >= 1, exactly (frexp, no floating-point log)."""
    _, exponent = np.frexp(np.asarray(m, dtype=np.float64))
    return exponent.astype(np.int64) - 1


def _check_n_neighbors(n_neighbors, n_samples):
    """An int or one int per point, each in [1, n_samples - 1]; returned as int64 array."""
    if isinstance(n_neighbors, bool):
        raise ValueError(f"n_neighbors must be an integer or an array of integers, got {n_neighbors!r}.")
    if isinstance(n_neighbors, numbers.Integral):
        q = np.full(n_samples, int(n_neighbors), dtype=np.int64)
    else:
        q = np.asarray(n_neighbors)
        if q.ndim != 1 or q.shape[0] != n_samples:
            raise ValueError(
                f"n_neighbors must be an integer or one integer per point (shape ({n_samples},)); "
                f"got shape {q.shape}.")
        if not np.issubdtype(q.dtype, np.integer):
            raise ValueError(f"n_neighbors must hold integers, got dtype {q.dtype}.")
        q = q.astype(np.int64)
    if n_samples < 2:
        raise ValueError(f"a neighbour graph needs at least 2 points; got {n_samples}.")
    if q.min() < 1 or q.max() >= n_samples:
        bad = q.min() if q.min() < 1 else q.max()
        raise ValueError(
            f"n_neighbors must be between 1 and n_samples - 1 = {n_samples - 1} (a point is "
            f"never its own neighbour); got {bad}.")
    return q


def knn_graph(X, n_neighbors, *, metric="cosine", weight="auto", symmetrize="max",
              self_loops=False, scale_neighbor=7, bandwidth=None, n_jobs=None,
              device="cpu"):
    """Sparse k-nearest-neighbour similarity graph (GT §V-B, steps 1-3).

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
        Points as rows (documents as TF-IDF rows for text).
    n_neighbors : int or array-like of int of shape (n_samples,)
        Nearest neighbours kept for each point (its out-edges before symmetrization), in
        [1, n_samples - 1]; one count per point gives GT's per-cluster rule (eq. 9). A
        point is never its own neighbour (duplicates of it are).
    metric : {"cosine", "euclidean"}, default="cosine"
        Distance of the neighbour search. "cosine" compares L2-normalized rows; rows of
        all zeros have no direction, so they get no edges and are never anyone's neighbour.
    weight : {"auto", "cosine", "self-tuning", "heat", "binary"}, default="auto"
        Edge weight ``s_ij`` of a kept neighbour pair, with ``d_ij`` the metric's distance:

        - "cosine": the cosine similarity ``1 − d_ij`` (metric="cosine" only, where
          ``d_ij = 1 − cos(x_i, x_j)`` is the cosine distance);
        - "self-tuning": ``exp(−d_ij² / (σ_i σ_j))``, σ_i the distance of point i to its
          ``scale_neighbor``-th nearest neighbour (GT §V-B for image data, after
          Zelnik-Manor & Perona 2004);
        - "heat": ``exp(−d_ij² / t)`` with ``t = bandwidth`` (heat kernel of GNMF);
        - "binary": 1 for every kept pair;
        - "auto": "cosine" for metric="cosine" and "self-tuning" for "euclidean", the two
          choices of GT §V-B.

        Under metric="cosine" pairs with cosine similarity <= 0 are never edges, whatever
        the weighting. Only positive weights are stored.
    symmetrize : {"max", "mean", "min"} or None, default="max"
        How the directed kNN matrix S becomes symmetric: "max" keeps a pair if either
        point is among the other's neighbours (GT's rule); "mean" is ``(S + Sᵀ)/2``; "min"
        keeps mutual neighbours only; None returns the directed graph.
    self_loops : bool, default=False
        Put the self-similarity 1 on the diagonal (by default ``s_ii = 0``, as in GT).
    scale_neighbor : int, default=7
        For weight="self-tuning": the rank of the neighbour whose distance is σ_i (7 in
        GT and Zelnik-Manor & Perona; the farthest when there are fewer points).
    bandwidth : float or None, default=None
        ``t`` of weight="heat"; None uses the mean of ``d_ij²`` over the kNN pairs.
    n_jobs : int or None, default=None
        Passed to :class:`~sklearn.neighbors.NearestNeighbors` (the Euclidean search is
        multi-threaded by OpenMP in any case).
    device : {"cpu", "cuda", "cuda:N", "auto"}, default="cpu"
        Where the cosine search of dense rows runs: "cuda" on that GPU with PyTorch
        (float32 similarities), "auto" on a GPU when PyTorch sees one. The Euclidean
        search and sparse rows run on the CPU.

    Returns
    -------
    W : scipy.sparse.csr_matrix of shape (n_samples, n_samples), float64
        Non-negative similarities with sorted indices and no explicit zeros; symmetric
        unless ``symmetrize=None``.

    Notes
    -----
    The search is exact and deterministic, its memory bounded by row chunks (module
    docstring).

    Examples
    --------
    >>> import numpy as np
    >>> from semnmf.refine import knn_graph, normalized_cut_scaling
    >>> X = np.array([[1., 0.], [.9, .1], [0., 1.], [.1, .9]])
    >>> W = knn_graph(X, 1)
    >>> W.nnz, bool((W != W.T).nnz == 0)
    (4, True)
    """
    weight = _check_options(metric, weight, symmetrize, scale_neighbor, bandwidth)
    device = search_device(device)
    X = check_matrix(X, "X", nonnegative=False)
    n = X.shape[0]
    q = _check_n_neighbors(n_neighbors, n)
    keep, q_keep, dist, ind = _neighbors(X, q, metric, weight, scale_neighbor, n_jobs, device)
    if dist is None:        # at most one point with a direction: no pair at all
        W = sp.csr_matrix((n, n), dtype=np.float64)
        return _add_self_loops(W) if self_loops else W
    values = _edge_weights(dist, ind, q_keep, metric, weight, scale_neighbor, bandwidth)
    return _graph(values, ind, keep, q_keep, n, symmetrize, self_loops)


def _check_options(metric, weight, symmetrize, scale_neighbor, bandwidth):
    """Refuse a bad option of :func:`knn_graph`; return the weight ("auto" resolved)."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}.")
    if weight not in WEIGHTS:
        raise ValueError(f"weight must be one of {WEIGHTS}, got {weight!r}.")
    if symmetrize not in SYMMETRIZE:
        raise ValueError(f"symmetrize must be one of {SYMMETRIZE}, got {symmetrize!r}.")
    if weight == "auto":
        weight = "cosine" if metric == "cosine" else "self-tuning"
    if weight == "cosine" and metric != "cosine":
        raise ValueError('weight="cosine" needs metric="cosine"; use "self-tuning", "heat" or '
                         '"binary" with metric="euclidean".')
    check_positive_int(scale_neighbor, "scale_neighbor")
    if bandwidth is not None and (isinstance(bandwidth, bool) or not isinstance(bandwidth, numbers.Real)
                                  or not np.isfinite(bandwidth) or bandwidth <= 0):
        raise ValueError(f"bandwidth must be a finite number > 0 or None, got {bandwidth!r}.")
    return weight


def search_device(device):
    """The device a cosine search runs on: ``"cpu"``, ``"cuda"``/``"cuda:N"`` (checked:
    one line when PyTorch or the GPU is missing) or ``"auto"`` (a GPU when PyTorch sees
    one, else the CPU)."""
    if not is_device_name(device):
        raise ValueError(f'device must be "cpu", "cuda", "cuda:N" or "auto", got {device!r}.')
    check_device(device)
    return resolve_device(device)


def _neighbors(X, q, metric, weight, scale_neighbor, n_jobs, device="cpu"):
    """The neighbour search of :func:`knn_graph`: ``(keep, q_keep, dist, ind)``.

    ``keep``: the candidate points (all of them, or for cosine the rows that have a
    direction); ``q_keep``: each candidate's neighbour count, at most the other
    candidates; ``dist``, ``ind`` (candidates x searched): each candidate's nearest other
    candidates, nearest first, as positions in ``keep`` -- enough for ``q_keep`` and for
    the self-tuning scale. ``dist`` and ``ind`` are None when no pair exists.
    """
    if metric == "cosine":
        keep = np.flatnonzero(~empty_rows(X))
        Xs = unit_rows(X[keep])
    else:
        keep = np.arange(X.shape[0])
        Xs = X
    m = keep.size
    q_keep = np.minimum(q[keep], m - 1)     # fewer candidates than asked: take them all
    n_search = int(q_keep.max()) if m > 1 else 0
    if weight == "self-tuning":
        n_search = max(n_search, min(int(scale_neighbor), m - 1))
    if n_search == 0:
        return keep, q_keep, None, None
    if metric == "cosine":
        dist, ind = _cosine_search(Xs, n_search, device, n_jobs)
    else:
        search = NearestNeighbors(n_neighbors=n_search, metric="euclidean", algorithm="brute",
                                  n_jobs=n_jobs).fit(Xs)
        dist, ind = search.kneighbors()     # query = training points: self excluded, sorted
        dist = dist.astype(np.float64, copy=False)
    return keep, q_keep, dist, ind


def _edge_weights(dist, ind, q_keep, metric, weight, scale_neighbor, bandwidth):
    """Weight ``s_ij`` of every searched pair (see :func:`knn_graph`'s ``weight``); for
    cosine, 0 for a pair sharing no direction."""
    n_search = dist.shape[1]
    if weight == "cosine":
        values = 1.0 - dist
    elif weight == "self-tuning":
        sigma = dist[:, min(int(scale_neighbor), n_search) - 1]
        denom = sigma[:, None] * sigma[ind]
        with np.errstate(divide="ignore", invalid="ignore"):
            values = np.where(dist == 0, 1.0, np.exp(-dist ** 2 / denom))
        values[(denom == 0) & (dist > 0)] = 0.0
    elif weight == "heat":
        rank = np.arange(n_search)[None, :] < q_keep[:, None]
        t = bandwidth if bandwidth is not None else float(np.mean(dist[rank] ** 2))
        values = np.exp(-dist ** 2 / t) if t > 0 else (dist == 0).astype(np.float64)
    else:
        values = np.ones_like(dist)
    if metric == "cosine":                 # no edge between documents sharing no term
        values = np.where(dist < 1.0, np.maximum(values, 0.0), 0.0)
    return values


def _graph(values, ind, keep, q_keep, n, symmetrize, self_loops):
    """The n x n graph of each candidate's first ``q_keep`` weighted neighbours,
    symmetrized, with sorted indices and no explicit zeros."""
    kept = np.arange(ind.shape[1])[None, :] < q_keep[:, None]     # first q_i neighbours of i
    rows = np.broadcast_to(keep[:, None], ind.shape)[kept]
    cols = keep[ind[kept]]
    W = sp.csr_matrix((values[kept], (rows, cols)), shape=(n, n))
    W.eliminate_zeros()
    if symmetrize == "max":
        W = W.maximum(W.T)
    elif symmetrize == "mean":
        W = (W + W.T) * 0.5
    elif symmetrize == "min":
        W = W.minimum(W.T)
    W = sp.csr_matrix(W)
    if self_loops:
        W = _add_self_loops(W)
    W.eliminate_zeros()
    W.sort_indices()
    return W


def cosine_kneighbors(X, n_neighbors, *, device="cpu", n_jobs=None):
    """Exact cosine nearest neighbours of the rows of X among themselves: the search of
    :func:`knn_graph` (metric="cosine"), before any graph is made of it.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
        Rows with a direction (no row of zeros: such a row has no cosine to anything;
        :func:`knn_graph` gives it no edges). They are L2-normalized here.
    n_neighbors : int
        Neighbours of each row, in [1, n_samples - 1]; a row is never its own neighbour
        (a duplicate of it is).
    device : {"cpu", "cuda", "cuda:N", "auto"}, default="cpu"
        Where the search of dense rows runs (as in :func:`knn_graph`).
    n_jobs : int or None, default=None
        Threads of the CPU search (default: ``$SEMNMF_NUM_THREADS`` or the CPU count).

    Returns
    -------
    dist : ndarray of shape (n_samples, n_neighbors), float64
        Cosine distances ``1 − cos``, increasing along each row.
    ind : ndarray of int64, shape (n_samples, n_neighbors)
        The neighbours' rows.
    """
    device = search_device(device)
    X = check_matrix(X, "X", nonnegative=False)
    if isinstance(n_neighbors, bool) or not isinstance(n_neighbors, numbers.Integral):
        raise ValueError(f"n_neighbors must be an integer, got {n_neighbors!r}.")
    k = int(_check_n_neighbors(n_neighbors, X.shape[0])[0])
    empty = empty_rows(X)
    if empty.any():
        raise ValueError(f"{int(empty.sum())} row(s) of X are all zeros and have no cosine "
                         f"to any other (the first is row {int(np.flatnonzero(empty)[0])}): "
                         "drop them, or use knn_graph, which gives them no edges.")
    return _cosine_search(unit_rows(X), k, device, n_jobs)


def _cosine_search(Xn, n_neighbors, device, n_jobs):
    """The cosine search of unit rows on ``device`` (resolved): dense rows on a GPU with
    PyTorch, sparse rows and the CPU's by :func:`_cosine_kneighbors`."""
    if device != "cpu" and not sp.issparse(Xn):
        return _cosine_kneighbors_torch(Xn, n_neighbors, device)
    return _cosine_kneighbors(Xn, n_neighbors, n_jobs)


def _cosine_kneighbors(Xn, n_neighbors, n_jobs=None):
    """Exact cosine kNN of the L2-normalized rows of Xn among themselves, self excluded:
    ``(dist, ind)`` as :func:`cosine_kneighbors` returns them.

    Brute force by row chunks, within scikit-learn's ``working_memory`` on ``n_jobs``
    threads. Dense rows: each chunk ``a..b`` computes the upper half of its similarities,
    ``Xn[a:b] Xn[a:]ᵀ`` (each pair once: half the products), and the compiled kernels
    (:mod:`~._knn_kernels`; ties by the lower index) keep every point's most similar
    others. Sparse rows (and dense ones with ``SEMNMF_KERNELS=0``): each chunk computes
    ``Xn[a:b] Xnᵀ`` and keeps each row's n_neighbors largest by ``argpartition`` and a
    stable sort (``benchmarks/results/knn.md``).
    """
    n = Xn.shape[0]
    workers = max(1, min(n_threads() if n_jobs is None else effective_n_jobs(n_jobs), n))
    budget = get_config()["working_memory"] * 2 ** 20
    rows = int(max(1, min(n, budget // (3 * 8 * n * workers))))
    starts = range(0, n, rows)
    if compiled_kernels() and not sp.issparse(Xn):  # sparse rows: the product is the cost
        return _cosine_kneighbors_upper(np.ascontiguousarray(Xn), n_neighbors, rows, workers,
                                        budget)
    XnT = Xn.T if sp.issparse(Xn) else np.ascontiguousarray(Xn.T)
    dist = np.empty((n, n_neighbors), dtype=np.float64)
    ind = np.empty((n, n_neighbors), dtype=np.int64)

    def work(start):
        stop = min(n, start + rows)
        # sparse x sparse straight into a dense chunk (scikit-learn's kernel from 1.9;
        # bitwise scipy's product made dense), else BLAS
        S = np.asarray(safe_sparse_dot(Xn[start:stop], XnT, dense_output=True))
        S = np.asarray(S, dtype=np.float64)
        r = np.arange(stop - start)
        S[r, r + start] = -np.inf                    # a point is not its own neighbour
        np.negative(S, out=S)                        # smallest = most similar
        part = np.argpartition(S, n_neighbors - 1, axis=1)[:, :n_neighbors]
        values = S[r[:, None], part]
        order = np.argsort(values, axis=1, kind="stable")
        ind[start:stop] = part[r[:, None], order]
        dist[start:stop] = 1.0 + values[r[:, None], order]     # 1 − cos

    if workers == 1 or len(starts) == 1:
        for start in starts:
            work(start)
    else:
        list(thread_pool(workers).map(work, starts))
    return dist, ind


def _cosine_kneighbors_upper(Xn, n_neighbors, rows, workers, budget):
    """:func:`_cosine_kneighbors` of dense unit rows by the compiled kernels: chunks of
    ``rows`` rows against the columns from their first row on (BLAS into each thread's own
    buffer: no fresh pages per chunk), each thread with its own running lists of the
    columns' most similar earlier rows (``16 n k`` bytes; as many threads as the memory
    ``budget`` holds lists for, at least one), merged at the end."""
    from ._knn_kernels import merge_lists, top_similar_upper

    n, k = Xn.shape[0], n_neighbors
    starts = range(0, n, rows)
    workers = max(1, min(workers, len(starts), int(budget // (16 * n * k))))
    dtype = np.result_type(Xn.dtype, np.float32)
    Xn = Xn.astype(dtype, copy=False)
    vals = np.empty((n, k), dtype=np.float64)
    cols = np.empty((n, k), dtype=np.int64)
    fill = np.zeros(n, dtype=np.int64)
    tvals = np.empty((workers, n, k), dtype=np.float64)
    tcols = np.empty((workers, n, k), dtype=np.int64)
    tfill = np.zeros((workers, n), dtype=np.int64)
    tmin = np.full((workers, n), -np.inf)
    local, slots, lock = threading.local(), iter(range(workers)), threading.Lock()

    def work(start):
        if not hasattr(local, "slot"):      # this thread's lists and buffer
            with lock:
                local.slot = next(slots)
            local.S = np.empty(rows * n, dtype=dtype)
        stop, w = min(n, start + rows), local.slot
        S = local.S[:(stop - start) * (n - start)].reshape(stop - start, n - start)
        np.dot(Xn[start:stop], Xn[start:].T, out=S)
        top_similar_upper(S, k, start, vals, cols, fill, tvals[w], tcols[w], tfill[w], tmin[w])

    if workers == 1:
        for start in starts:
            work(start)
    else:
        list(thread_pool(workers).map(work, starts))
    dist = np.empty((n, k), dtype=np.float64)
    ind = np.empty((n, k), dtype=np.int64)
    merge_lists(vals, cols, fill, tvals, tcols, tfill, k, dist, ind)
    return dist, ind


def _cosine_kneighbors_torch(Xn, n_neighbors, device="cuda"):
    """:func:`_cosine_kneighbors` of dense rows with PyTorch on ``device`` (``"cpu"``:
    PyTorch's CPU build, for the tests), in float32: each chunk of rows computes its
    similarities in one product and keeps its ``n_neighbors`` largest with ``torch.topk``;
    a tie may be broken otherwise than by the CPU's stable sort.
    """
    torch = require_torch()
    n = Xn.shape[0]
    Y = torch.from_numpy(np.ascontiguousarray(Xn, dtype=np.float32)).to(device)
    budget = get_config()["working_memory"] * 2 ** 20
    rows = int(max(1, min(n, budget // (2 * 4 * n))))
    dist = np.empty((n, n_neighbors), dtype=np.float64)
    ind = np.empty((n, n_neighbors), dtype=np.int64)
    with torch.no_grad():
        for start in range(0, n, rows):
            stop = min(n, start + rows)
            S = Y[start:stop] @ Y.T
            r = torch.arange(stop - start, device=S.device)
            S[r, r + start] = -torch.inf                # a point is not its own neighbour
            values, part = torch.topk(S, n_neighbors, dim=1, largest=True, sorted=True)
            dist[start:stop] = 1.0 - values.double().cpu().numpy()      # 1 − cos
            ind[start:stop] = part.cpu().numpy()
    return dist, ind


def _add_self_loops(W):
    """Unit diagonal on a graph without one (kNN graphs never hold self-pairs)."""
    return sp.csr_matrix(W + sp.identity(W.shape[0], dtype=W.dtype, format="csr"))


def normalized_cut_scaling(W):
    """Normalized-cut scaling ``A = D^{-1/2} W D^{-1/2}`` (GT §V-B, step 4).

    ``D = diag(d_1, ..., d_n)`` with ``d_i = Σ_j w_ij`` the degree of point i. For a
    symmetric W the result is symmetric with largest eigenvalue 1 (``I − A`` is the
    normalized Laplacian). An isolated point keeps a zero row and column.

    Parameters
    ----------
    W : sparse matrix or ndarray of shape (n, n)
        Non-negative similarities.

    Returns
    -------
    A : scipy.sparse.csr_matrix (sparse input) or ndarray (dense input), float64
    """
    W = check_square_nonnegative(W, "W", square_as="a square similarity matrix",
                                 nonnegative_as="hold non-negative similarities")
    degree = np.asarray(W.sum(axis=1), dtype=np.float64).ravel()
    scale = np.zeros_like(degree)
    positive = degree > 0
    scale[positive] = 1.0 / np.sqrt(degree[positive])
    # w_ij (s_i s_j), not (s_i w_ij) s_j: a symmetric W gives an exactly symmetric A
    if sp.issparse(W):
        A = sp.csr_matrix(W, copy=True)
        rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
        A.data *= scale[rows] * scale[A.indices]
        A.eliminate_zeros()
        A.sort_indices()
        return A
    return W * (scale[:, None] * scale[None, :])
