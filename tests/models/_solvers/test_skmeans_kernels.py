"""The compiled Lloyd steps of spherical k-means against the scipy expressions they
replace: bitwise equal, whatever the number of threads."""

import platform

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.cluster import kmeans_plusplus
from sklearn.preprocessing import normalize

from semnmf._utils.parallel import scipy_path
from semnmf.models import skmeans as skmeans_module
from semnmf.models._solvers import skmeans_kernels as kk
from semnmf.models.skmeans import SphericalKMeans


# scipy's x86-64 builds never fuse a multiply and an add (see skmeans_kernels)
EXACT = platform.machine().lower() in ("x86_64", "amd64")


def _scipy_assign(X, centers):
    """The reference: the dense similarity matrix and its row-wise argmax."""
    S = np.asarray(X @ centers.T)
    labels = np.argmax(S, axis=1)
    return labels, S[np.arange(S.shape[0]), labels]


def _scipy_sums(X, labels, k):
    """The reference: the k x n membership matrix times X."""
    idx = np.flatnonzero(labels >= 0)
    member = sp.csr_matrix((np.ones(idx.size, dtype=X.dtype), (labels[idx], idx)),
                           shape=(k, X.shape[0]))
    return (member @ X).toarray()


def _matrix(dtype, seed, n=400, d=300, canonical=True, index_dtype=np.int32):
    X = sp.random(n, d, density=0.04, random_state=seed, format="csr", dtype=np.float64)
    X = normalize(X).astype(dtype)
    if not canonical:  # reversed column order within rows, and a duplicate entry
        rows = np.repeat(np.arange(n), np.diff(X.indptr))
        order = np.lexsort((-X.indices, rows))
        X = sp.csr_matrix((X.data[order], X.indices[order], X.indptr), shape=X.shape)
        row = int(np.argmax(np.diff(X.indptr)))
        data = np.insert(X.data, X.indptr[row], dtype(0.25))
        indices = np.insert(X.indices, X.indptr[row], X.indices[X.indptr[row]])
        indptr = X.indptr.copy()
        indptr[row + 1:] += 1
        X = sp.csr_matrix((data, indices, indptr), shape=X.shape)
        assert not X.has_canonical_format
    X.indices = X.indices.astype(index_dtype)
    X.indptr = X.indptr.astype(index_dtype)
    return X


@pytest.fixture(params=[1, 2], ids=["1 thread", "2 threads"])
def threads(request, monkeypatch):
    monkeypatch.setenv("SEMNMF_NUM_THREADS", str(request.param))
    monkeypatch.setattr(kk, "_MIN_NNZ_FOR_THREADS", 100)  # several blocks on small X
    return request.param


def _assert_same_sums(ours, scipy_sums):
    """Bitwise where scipy's loops do not fuse multiply and add (x86-64, see the kernels'
    module docstring); elsewhere to the last bits."""
    if EXACT:
        np.testing.assert_array_equal(ours, scipy_sums)
    else:
        np.testing.assert_allclose(ours, scipy_sums, rtol=1e-5 if ours.dtype == np.float32
                                   else 1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("k", [1, 3, 4, 5, 8, 9, 20, 65])
@pytest.mark.parametrize("canonical", [True, False])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_assign_is_bitwise_scipy(dtype, k, canonical, index_dtype, threads):
    X = _matrix(dtype, seed=k, canonical=canonical, index_dtype=index_dtype)
    centers = normalize(np.random.default_rng(k).random((k, X.shape[1]))).astype(dtype)
    labels, sims = kk.assign(X, centers)
    ref_labels, ref_sims = _scipy_assign(X, centers)
    assert sims.dtype == dtype
    np.testing.assert_array_equal(labels, ref_labels)
    _assert_same_sums(sims, ref_sims)


def test_assign_computes_in_the_wider_dtype():
    """float32 documents against float64 centroids (predict after a float64 fit): in
    float64, as scipy's product."""
    X = sp.csr_matrix(np.array([[1.0, 1.0]], dtype=np.float32))
    centers = np.array([[1.0, 0.0], [1.0, 1e-10]])
    labels, sims = kk.assign(X, centers)
    assert sims.dtype == np.float64
    np.testing.assert_array_equal(labels, [1])   # 1 + 1e-10 > 1 only in float64
    X = _matrix(np.float32, seed=5)
    centers = normalize(np.random.default_rng(5).random((6, X.shape[1])))
    labels, sims = kk.assign(X, centers)
    ref_labels, ref_sims = _scipy_assign(X, centers)
    np.testing.assert_array_equal(labels, ref_labels)
    _assert_same_sums(sims, ref_sims)


def test_assign_ties_go_to_the_first_centroid():
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]))
    centers = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    labels, sims = kk.assign(X, centers)
    np.testing.assert_array_equal(labels, [1, 0, 0])   # the zero row: 0, as np.argmax
    np.testing.assert_array_equal(sims, [1.0, 1.0, 0.0])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("k", [1, 2, 7])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_sums_are_bitwise_scipy(dtype, k, index_dtype, threads):
    X = _matrix(dtype, seed=10 + k, canonical=False, index_dtype=index_dtype)
    labels = np.random.default_rng(k).integers(-1, k, size=X.shape[0])
    sums = kk.sums(X, labels, k)
    assert sums.dtype == dtype
    np.testing.assert_array_equal(sums, _scipy_sums(X, labels, k))   # adds only: exact


@pytest.mark.parametrize("k", [3, 12])
def test_fit_is_bitwise_the_scipy_lloyd(k, threads, monkeypatch):
    """A whole fit (k-means++ starts, empty-cluster re-seeding, n_init runs) gives the
    same labels, centroids and objectives as on the scipy path ($SEMNMF_KERNELS=0).
    (Float32: the seedings differ by design, see ``spherical_kmeans_plusplus``; the Lloyd steps
    are checked bitwise above.)"""
    X = _matrix(np.float64, seed=3, n=600)
    fitted = SphericalKMeans(n_components=k, n_init=3, random_state=0).fit(X)
    monkeypatch.setenv("SEMNMF_KERNELS", "0")
    monkeypatch.setattr(kk, "assign", None)  # never called
    monkeypatch.setattr(kk, "sums", None)
    reference = SphericalKMeans(n_components=k, n_init=3, random_state=0).fit(X)
    np.testing.assert_array_equal(fitted.labels_, reference.labels_)
    _assert_same_sums(fitted.cluster_centers_, reference.cluster_centers_)
    _assert_same_sums(fitted.objective_history_, reference.objective_history_)
    assert fitted.n_iter_ == reference.n_iter_ > 1


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fit_with_reseeding_and_zero_rows_is_bitwise_the_scipy_lloyd(dtype, threads,
                                                                     monkeypatch):
    """An explicit start with a centroid no document is near (an empty cluster, re-seeded
    in the first iteration), duplicate documents and all-zero rows (label -1)."""
    X = _matrix(dtype, seed=6, n=300, d=120)
    X = sp.vstack([X, X[:40], sp.csr_matrix((5, X.shape[1]), dtype=dtype)], format="csr")
    X = sp.hstack([X, sp.csr_matrix((X.shape[0], 1), dtype=dtype)], format="csr")
    init = np.zeros((5, X.shape[1]))
    init[:4, :120] = np.random.default_rng(6).random((4, 120))
    init[4, -1] = 1.0                        # the unused last term: an empty cluster
    with pytest.warns(UserWarning, match="all-zero"):
        fitted = SphericalKMeans(n_components=5, init=init, n_init=1).fit(X)
    monkeypatch.setenv("SEMNMF_KERNELS", "0")
    with pytest.warns(UserWarning, match="all-zero"):
        reference = SphericalKMeans(n_components=5, init=init, n_init=1).fit(X)
    assert (fitted.labels_ == -1).sum() == (X.getnnz(axis=1) == 0).sum() >= 5
    assert np.bincount(fitted.labels_[fitted.labels_ >= 0], minlength=5).min() > 0
    np.testing.assert_array_equal(fitted.labels_, reference.labels_)
    _assert_same_sums(fitted.cluster_centers_, reference.cluster_centers_)
    _assert_same_sums(fitted.objective_history_, reference.objective_history_)


def test_float32_seeding_is_the_same_on_the_scipy_path():
    """Float32 X is seeded by ``spherical_kmeans_plusplus`` on both paths (the Dask client takes
    the scipy one): the same start, so the same fit."""
    X = _matrix(np.float32, seed=8, n=500)
    fitted = SphericalKMeans(n_components=6, n_init=3, random_state=2).fit(X)
    with scipy_path():
        reference = SphericalKMeans(n_components=6, n_init=3, random_state=2).fit(X)
    np.testing.assert_array_equal(fitted.labels_, reference.labels_)
    _assert_same_sums(fitted.cluster_centers_, reference.cluster_centers_)


def test_scipy_path_block_takes_the_scipy_expressions(monkeypatch):
    X = _matrix(np.float64, seed=4)
    fitted = SphericalKMeans(n_components=4, n_init=2, random_state=1).fit(X)
    monkeypatch.setattr(kk, "assign", None)  # a call would fail
    monkeypatch.setattr(kk, "sums", None)
    with scipy_path():
        reference = SphericalKMeans(n_components=4, n_init=2, random_state=1).fit(X)
    np.testing.assert_array_equal(fitted.labels_, reference.labels_)
    np.testing.assert_array_equal(fitted.cluster_centers_, reference.cluster_centers_)
    with pytest.raises(TypeError):  # outside the block the compiled path is back
        SphericalKMeans(n_components=4, n_init=2, random_state=1).fit(X)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("k", [1, 2, 5, 12])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kmeans_plusplus_picks_scikit_learns_centres(dtype, k, seed, threads):
    """The compiled seeding draws what scikit-learn draws and picks the same documents:
    only last-bit rounding of the distances differs. Float32 X is seeded as
    scikit-learn seeds its float64 copy, given the rows' own squared norms."""
    X = _matrix(dtype, seed=20 + seed, n=500)
    X = X[X.getnnz(axis=1) > 0]
    rng = np.random.RandomState(seed)
    ours = skmeans_module.spherical_kmeans_plusplus(X, k, rng)
    reference = np.random.RandomState(seed)
    X64 = X.astype(np.float64)
    norms = np.ones(X.shape[0]) if dtype == np.float64 else np.asarray(
        X64.multiply(X64).sum(axis=1)).ravel()
    theirs, _ = kmeans_plusplus(X64, k, x_squared_norms=norms, random_state=reference)
    assert ours.dtype == dtype
    np.testing.assert_array_equal(ours, theirs.astype(dtype))
    assert rng.randint(10**9) == reference.randint(10**9)   # as many draws
