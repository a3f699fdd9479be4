"""The kNN similarity graphs (semnmf.graphs): a dense brute-force reference graph and a
line-by-line transcription of GT eq. 8-9 against the vectorized, chunked code, the
normalized-cut scaling, and input errors."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from semnmf.graphs import (cluster_log2_neighbors, cosine_kneighbors, knn_graph, log2_neighbors,
                           normalized_cut_scaling)

from conftest import blobs, random_symmetric_graph, text_like, transcribed_q


def reference_knn_graph(X, q, metric, weight, symmetrize, scale_neighbor=7, bandwidth=None):
    """Dense brute force: all pairwise distances, per-row sort, self excluded."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)
    n = X.shape[0]
    q = np.full(n, q) if np.isscalar(q) else np.asarray(q)
    if metric == "cosine":
        U = X / np.linalg.norm(X, axis=1, keepdims=True)
        D = 1.0 - U @ U.T
    else:
        D = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    np.fill_diagonal(D, np.inf)
    order = np.argsort(D, axis=1, kind="stable")
    sigma = D[np.arange(n), order[:, scale_neighbor - 1]]
    S = np.zeros((n, n))
    pairs = [(i, j) for i in range(n) for j in order[i, :q[i]]]
    t = bandwidth if bandwidth is not None else np.mean([D[i, j] ** 2 for i, j in pairs])
    for i, j in pairs:
        d = D[i, j]
        if weight == "cosine":
            w = 1.0 - d
        elif weight == "self-tuning":
            w = math.exp(-d * d / (sigma[i] * sigma[j]))
        elif weight == "heat":
            w = math.exp(-d * d / t)
        else:
            w = 1.0
        if metric == "cosine" and d >= 1.0:
            w = 0.0
        S[i, j] = w
    if symmetrize == "max":
        S = np.maximum(S, S.T)
    elif symmetrize == "mean":
        S = (S + S.T) / 2
    elif symmetrize == "min":
        S = np.minimum(S, S.T)
    return S


# -- graphs ------------------------------------------------------------------------------
@pytest.mark.parametrize("metric,weight", [
    ("cosine", "cosine"), ("cosine", "binary"), ("cosine", "heat"),
    ("euclidean", "self-tuning"), ("euclidean", "heat"), ("euclidean", "binary"),
])
@pytest.mark.parametrize("symmetrize", ["max", "mean", "min", None])
@pytest.mark.parametrize("sparse", [False, True])
def test_knn_graph_matches_dense_brute_force(metric, weight, symmetrize, sparse):
    rng = np.random.default_rng(12)
    X = rng.random((40, 8)) * (rng.random((40, 8)) < 0.7)
    X[:, 0] += 0.01                                     # no empty rows, no ties
    q = rng.integers(1, 9, 40)
    W = knn_graph(sp.csr_matrix(X) if sparse else X, q, metric=metric, weight=weight,
                  symmetrize=symmetrize)
    S = reference_knn_graph(X, q, metric, weight, symmetrize)
    assert sp.isspmatrix_csr(W) and W.has_sorted_indices
    np.testing.assert_allclose(W.toarray(), S, rtol=1e-10, atol=1e-12)
    assert W.diagonal().max() == 0 and np.all(W.data > 0)
    if symmetrize is not None:
        assert abs(W - W.T).max() == 0
    else:
        np.testing.assert_array_equal(np.diff(W.indptr) <= q, True)


def test_knn_graph_self_loops_only_when_asked_and_bandwidth():
    X, _ = blobs(n_per=10, k=2, seed=13)
    W = knn_graph(X, 3, metric="euclidean", weight="heat", bandwidth=2.0, self_loops=True)
    np.testing.assert_array_equal(W.diagonal(), 1.0)
    S = reference_knn_graph(X, 3, "euclidean", "heat", "max", bandwidth=2.0)
    np.fill_diagonal(S, 1.0)
    np.testing.assert_allclose(W.toarray(), S, rtol=1e-10)
    # duplicated points: still no self-pair, but duplicates are neighbours at distance 0
    D = np.vstack([X, X[:3]])
    G = knn_graph(D, 2, metric="euclidean", weight="binary")
    assert G.diagonal().max() == 0 and G[0, 20] == 1 and G[20, 0] == 1


def test_cosine_graph_ignores_empty_rows_and_orthogonal_pairs():
    X = sp.csr_matrix(np.array([
        [1, 1, 0, 0], [1, 0.8, 0, 0], [0.9, 1, 0, 0],     # a group
        [0, 0, 1, 1], [0, 0, 1, 0.7],                     # another, orthogonal to it
        [0, 0, 0, 0],                                     # no term
    ], dtype=float))
    for weight in ("cosine", "binary", "heat"):       # 4 neighbours asked, 2 share a term
        W = knn_graph(X, 4, weight=weight)
        assert W[5].nnz == 0 and W[:, 5].nnz == 0
        A = W.toarray()
        assert np.all(A[:3, 3:] == 0) and np.all(A[:3, :3][~np.eye(3, dtype=bool)] > 0)


def test_cosine_search_is_chunked_across_threads(monkeypatch):
    """Many small chunks on two threads give exactly the one-chunk result."""
    import sklearn
    X, _ = text_like(n_per=60, k=4, seed=14)
    one = knn_graph(X, 7, n_jobs=1)
    with sklearn.config_context(working_memory=1e-3):     # ~ a few rows per chunk
        many = knn_graph(X, 7, n_jobs=2)
    assert (one != many).nnz == 0


@pytest.mark.parametrize("sparse,dtype", [(False, np.float64), (False, np.float32),
                                          (True, np.float64)])
def test_compiled_search_keeps_the_lower_index_among_ties(sparse, dtype, monkeypatch):
    """Rows of four ones: the cosines are exact multiples of 1/4, so ties abound. On dense
    rows the compiled search (each pair's similarity once, merged from the lists of every
    chunk and thread) is the stable reference (most similar first, the lower index first
    among equals); the numpy path (sparse rows, or SEMNMF_KERNELS=0) finds the same
    distances (which tied index it keeps at the k-th place may differ)."""
    from semnmf.graphs.knn import _cosine_kneighbors

    monkeypatch.setenv("SEMNMF_KERNELS", "1")
    rng = np.random.default_rng(23)
    X = np.zeros((60, 12), dtype=dtype)
    for row in X:
        row[rng.choice(12, 4, replace=False)] = 0.5          # unit norm, exactly
    S = X @ X.T
    np.fill_diagonal(S, -np.inf)
    ref = np.argsort(-S, axis=1, kind="stable")[:, :7]
    Xs = sp.csr_matrix(X) if sparse else X
    dist, ind = _cosine_kneighbors(Xs, 7)
    np.testing.assert_array_equal(dist, 1.0 - np.take_along_axis(S, ref, axis=1))
    np.testing.assert_array_equal(np.take_along_axis(S, ind, axis=1), 1.0 - dist)
    if not sparse:
        np.testing.assert_array_equal(ind, ref)
        import sklearn
        for memory in (1e-3, 0.02):    # 1 row per chunk (the last: fewer than 7 columns); 7
            with sklearn.config_context(working_memory=memory):
                dist2, ind2 = _cosine_kneighbors(Xs, 7, n_jobs=2)
            np.testing.assert_array_equal(ind2, ref)         # chunk offsets and threads
            np.testing.assert_array_equal(dist2, dist)
    monkeypatch.setenv("SEMNMF_KERNELS", "0")
    dist0, ind0 = _cosine_kneighbors(Xs, 7)
    np.testing.assert_array_equal(dist0, dist)
    np.testing.assert_array_equal(np.take_along_axis(S, ind0, axis=1), 1.0 - dist)
    if sparse:                                               # sparse rows: the numpy path
        np.testing.assert_array_equal(ind0, ind)


@pytest.mark.parametrize("sparse", [False, True])
def test_cosine_kneighbors_is_the_brute_force_search(sparse):
    rng = np.random.default_rng(24)
    X = rng.random((50, 9)) * (rng.random((50, 9)) < 0.6)
    X[:, 0] += 0.01                                        # a direction, no ties
    U = X / np.linalg.norm(X, axis=1, keepdims=True)
    D = 1.0 - U @ U.T
    np.fill_diagonal(D, np.inf)
    ref = np.argsort(D, axis=1, kind="stable")[:, :6]
    dist, ind = cosine_kneighbors(sp.csr_matrix(X * 3.0) if sparse else X * 3.0, 6)
    np.testing.assert_array_equal(ind, ref)                # the scale does not matter
    np.testing.assert_allclose(dist, np.take_along_axis(D, ref, axis=1), atol=1e-12)
    # knn_graph is made of this search: its edges are the first neighbours' pairs
    W = knn_graph(X, 6, symmetrize=None)
    assert all(set(W[i].indices) == set(ind[i]) for i in range(50))


def test_cosine_kneighbors_refuses_what_has_no_neighbours():
    X = np.random.default_rng(25).random((8, 3))
    X[5] = 0.0
    with pytest.raises(ValueError, match=r"1 row\(s\) of X are all zeros .*row 5.*knn_graph"):
        cosine_kneighbors(X, 2)
    for bad in (True, 2.5, [2] * 8):
        with pytest.raises(ValueError, match="n_neighbors must be an integer"):
            cosine_kneighbors(X[:5], bad)
    with pytest.raises(ValueError, match=r"between 1 and n_samples - 1 = 4"):
        cosine_kneighbors(X[:5], 5)
    with pytest.raises(ValueError, match="device must be"):
        cosine_kneighbors(X[:5], 2, device="gpu")


# -- the search on a GPU (run here on PyTorch's CPU build: the same code) -------------------
@pytest.mark.parametrize("memory", [None, 1e-3])        # one chunk; a few rows per chunk
def test_torch_cosine_search_is_the_cpu_search(memory):
    """The torch search finds the CPU search's neighbours at the same distances, also in
    many chunks, on data with negative entries and no ties."""
    pytest.importorskip("torch")
    import sklearn
    from semnmf.graphs.knn import _cosine_kneighbors, _cosine_kneighbors_torch
    from semnmf._utils.validation import unit_rows

    X = unit_rows(np.random.default_rng(19).standard_normal((300, 16)).astype(np.float32))
    with sklearn.config_context(working_memory=memory or 1024):
        dist, ind = _cosine_kneighbors_torch(X, 9, "cpu")
    ref_dist, ref_ind = _cosine_kneighbors(X, 9)
    np.testing.assert_array_equal(ind, ref_ind)
    np.testing.assert_allclose(dist, ref_dist, atol=1e-6)
    assert np.all(np.diff(dist, axis=1) >= 0) and not np.any(ind == np.arange(300)[:, None])
    D = 1.0 - X.astype(float) @ X.T.astype(float)      # dense brute force
    np.fill_diagonal(D, np.inf)
    np.testing.assert_array_equal(ind, np.argsort(D, axis=1, kind="stable")[:, :9])


def test_knn_graph_runs_the_cosine_search_of_dense_rows_on_the_device(monkeypatch):
    """device="cuda" sends dense cosine searches to the torch search with that device, and
    gives the CPU's graph; sparse rows and the Euclidean search stay on the CPU."""
    pytest.importorskip("torch")
    from semnmf.graphs import knn

    asked = []

    def on_cpu(Xn, n_neighbors, device):                 # stands in for the GPU
        asked.append(device)
        return real(Xn, n_neighbors, "cpu")

    real = knn._cosine_kneighbors_torch
    monkeypatch.setattr(knn, "check_device", lambda device: None)   # "a GPU is there"
    monkeypatch.setattr(knn, "_cosine_kneighbors_torch", on_cpu)
    X = np.random.default_rng(20).standard_normal((60, 8))
    X[5] = 0.0                                           # no direction: no edges
    W = knn_graph(X, 4, device="cuda:1")
    assert asked == ["cuda:1"]
    np.testing.assert_allclose(W.toarray(), knn_graph(X, 4).toarray(), atol=1e-6)
    assert W[5].nnz == 0
    knn_graph(sp.csr_matrix(np.abs(X)), 4, device="cuda")
    knn_graph(X, 4, metric="euclidean", device="cuda")
    assert asked == ["cuda:1"]
    dist, ind = cosine_kneighbors(np.delete(X, 5, axis=0), 4, device="cuda:0")
    assert asked == ["cuda:1", "cuda:0"]
    np.testing.assert_array_equal(ind, cosine_kneighbors(np.delete(X, 5, axis=0), 4)[1])


def test_knn_graph_on_a_real_gpu_is_the_cpu_graph():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    X = np.random.default_rng(22).standard_normal((2000, 32))
    cpu = knn_graph(X.astype(np.float32), 10)
    gpu = knn_graph(X.astype(np.float32), 10, device="cuda")
    assert (cpu.astype(bool) != gpu.astype(bool)).nnz == 0     # the same edges
    np.testing.assert_allclose(gpu.data, cpu.data, atol=1e-5)


def test_knn_graph_device_is_checked_first():
    X = np.random.default_rng(21).random((10, 3))
    with pytest.raises(ValueError, match=r'device must be "cpu", "cuda", "cuda:N" or "auto", '
                                         r"got 'gpu'"):
        knn_graph(X, 3, device="gpu")
    from semnmf._utils.devices import gpu_usable
    if not gpu_usable():
        with pytest.raises((ValueError, ImportError), match=r"device=.cuda."):
            knn_graph(X, 3, device="cuda")
        assert (knn_graph(X, 3, device="auto") != knn_graph(X, 3)).nnz == 0


def test_normalized_cut_scaling_matches_definition():
    W = random_symmetric_graph(30, seed=15).tolil()
    W[4, :] = 0
    W[:, 4] = 0
    W = sp.csr_matrix(W)
    A = normalized_cut_scaling(W)
    Wd = W.toarray()
    d = Wd.sum(axis=1)
    inv = np.where(d > 0, 1 / np.sqrt(np.where(d > 0, d, 1)), 0)
    np.testing.assert_allclose(A.toarray(), inv[:, None] * Wd * inv[None, :], rtol=1e-12)
    assert A[4].nnz == 0
    np.testing.assert_allclose(normalized_cut_scaling(Wd), A.toarray(), rtol=1e-12)
    assert np.isclose(np.linalg.eigvalsh(A.toarray()).max(), 1.0)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 1000, 1023, 1024, 1025,
                               2 ** 20 - 1, 2 ** 20, 2 ** 20 + 1, 2 ** 40])
def test_log2_neighbors_is_eq8(n):
    assert log2_neighbors(n) == transcribed_q(n)


def test_cluster_log2_neighbors_is_eq9():
    rng = np.random.default_rng(16)
    sizes = [1, 2, 3, 7, 8, 9, 31, 32, 33, 100]
    labels = rng.permutation(np.repeat(np.arange(len(sizes)) * 3 + 1, sizes))   # labels 1, 4, 7, ...
    labels[:2] = -1
    q = cluster_log2_neighbors(labels)
    n = labels.size
    for i in range(n):                                   # q_i = ⌊log₂(|C|)⌋ + 1, C = cluster of i
        if labels[i] < 0:
            assert q[i] == transcribed_q(n)
        else:
            size = int(np.sum(labels == labels[i]))
            assert q[i] == math.floor(math.log2(size)) + 1
            assert q[i] <= transcribed_q(n)


def test_bad_graph_arguments():
    X = np.random.default_rng(18).random((10, 3))
    with pytest.raises(ValueError, match=r"between 1 and n_samples - 1 = 9.*got 10"):
        knn_graph(X, 10)
    with pytest.raises(ValueError, match=r"one integer per point \(shape \(10,\)\)"):
        knn_graph(X, [3, 3])
    with pytest.raises(ValueError, match="bandwidth must be a finite number > 0"):
        knn_graph(X, 3, weight="heat", bandwidth=0.0)
    with pytest.raises(ValueError, match="W must hold non-negative similarities"):
        normalized_cut_scaling(-np.eye(3))
    with pytest.raises(ValueError, match="n_samples must be an integer >= 1"):
        log2_neighbors(0)
    with pytest.raises(ValueError, match="labels must be integers"):
        cluster_log2_neighbors(np.array([0.5, 1.0]))
