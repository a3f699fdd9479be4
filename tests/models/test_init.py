"""Starts of the NMF family: our NNDSVDa against a slow reference and scikit-learn's."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils.extmath import randomized_svd

import semnmf
from semnmf.models.init import check_start, initialize, nndsvda


def nndsvda_reference(X, k, random_state, eps=1e-6):
    """Boutsidis & Gallopoulos (2008), NNDSVD written entry by entry, zeros -> mean(X)."""
    U, S, V = randomized_svd(X, k, random_state=random_state)
    Xd = X.toarray() if sp.issparse(X) else np.asarray(X)
    n, d = Xd.shape
    Z = np.zeros((n, k))
    H = np.zeros((k, d))
    for j in range(k):
        u, v = U[:, j], V[j]
        if j == 0:
            for i in range(n):
                Z[i, 0] = np.sqrt(S[0]) * abs(u[i])
            for t in range(d):
                H[0, t] = np.sqrt(S[0]) * abs(v[t])
            continue
        up = [max(x, 0.0) for x in u]
        un = [max(-x, 0.0) for x in u]
        vp = [max(x, 0.0) for x in v]
        vn = [max(-x, 0.0) for x in v]
        norm = lambda a: sum(x * x for x in a) ** 0.5  # noqa: E731
        mp, mn = norm(up) * norm(vp), norm(un) * norm(vn)
        a, b, m = (up, vp, mp) if mp > mn else (un, vn, mn)
        na, nb = norm(a), norm(b)
        scale = (S[j] * m) ** 0.5
        for i in range(n):
            Z[i, j] = scale * a[i] / na
        for t in range(d):
            H[j, t] = scale * b[t] / nb
    mean = Xd.mean()
    Z[Z < eps] = mean
    H[H < eps] = mean
    return Z, H


def matrices():
    rng = np.random.default_rng(0)
    dense = rng.random((30, 20)) * (rng.random((30, 20)) < 0.4)
    return [("dense", dense), ("csr", sp.csr_matrix(dense)),
            ("wide", rng.random((8, 40))), ("sparse-big", sp.random(60, 45, density=0.1,
                                                                   random_state=1, format="csr"))]


@pytest.mark.parametrize("name, X", matrices())
@pytest.mark.parametrize("k", [1, 3, 5])
def test_nndsvda_matches_reference_and_scikit_learn(name, X, k):
    from sklearn.decomposition._nmf import _initialize_nmf  # the test may; the library not

    Z, H = nndsvda(X, k, random_state=0)
    Zr, Hr = nndsvda_reference(X, k, 0)
    np.testing.assert_allclose(Z, Zr, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(H, Hr, rtol=1e-10, atol=1e-12)
    Zs, Hs = _initialize_nmf(X, k, init="nndsvda", random_state=0)
    np.testing.assert_array_equal(Z, Zs)
    np.testing.assert_array_equal(H, Hs)
    assert np.all(Z > 0) and np.all(H > 0)


def test_initialize_nndsvda_shapes_and_dtype():
    X = sp.random(20, 15, density=0.3, random_state=2, format="csr", dtype=np.float32)
    Z, W = initialize(X, 4, "nndsvda", 0)
    assert Z.shape == (20, 4) and W.shape == (15, 4)
    assert Z.dtype == W.dtype == np.float32
    with pytest.raises(ValueError, match="n_components <= min"):
        initialize(X, 16, "nndsvda", 0)


def test_library_does_not_import_sklearn_private_nmf():
    import inspect

    import semnmf.models.init as init

    assert "_initialize_nmf" not in inspect.getsource(init)


def test_check_start():
    A = check_start([[1, 2], [3, 4]], (2, 2), "Z", np.float32)
    assert A.dtype == np.float32 and A.flags.c_contiguous
    with pytest.raises(ValueError, match=r"Z has shape \(2, 2\); expected \(3, 2\)"):
        check_start(A, (3, 2), "Z")
    with pytest.raises(ValueError, match="finite and non-negative"):
        check_start([[1, -1]], (1, 2), "Z")
    with pytest.raises(ValueError, match="finite and non-negative"):
        check_start([[1, np.nan]], (1, 2), "Z")
    with pytest.raises(ValueError, match=r"Z has 1 all-zero column\(s\) \(the first: 1\)"):
        check_start([[1, 0], [2, 0]], (2, 2), "Z")


def _small_problem(n=30, d=12, k=3, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.5, random_state=seed, format="csr") + sp.eye(n, d, format="csr")
    return X.tocsr(), rng.random((n, k)) + 0.1, rng.random((d, k)) + 0.1


def test_one_factor_models_take_the_pair_as_a_list_and_check_its_w():
    X, Z, W = _small_problem()
    as_tuple = semnmf.ProjectiveNMF(3, init=(Z, W), max_iter=5).fit(X)
    as_list = semnmf.ProjectiveNMF(3, init=[Z, W], max_iter=5).fit(X)
    np.testing.assert_array_equal(as_list.components_, as_tuple.components_)
    np.testing.assert_array_equal(
        as_tuple.components_, semnmf.ProjectiveNMF(3, init=Z, max_iter=5).fit(X).components_)
    for model in (semnmf.ProjectiveNMF(3, init=(Z, W[:5]), max_iter=5),
                  semnmf.SymNMF(3, init=(Z, W[:5]), max_iter=5)):
        with pytest.raises(ValueError, match=r"init \(W\) has shape \(5, 3\); expected \(12, 3\)"):
            model.fit(X)
    # a Z of two documents given as a nested list is a Z, not a pair
    two = semnmf.ProjectiveNMF(2, init=[[1.0, 0.1], [0.1, 1.0]], max_iter=5).fit(X[:2])
    assert two.labels_.shape == (2,)


def test_an_all_zero_start_is_refused():
    """An all-zero start gave one cluster silently."""
    X, Z, W = _small_problem()
    with pytest.raises(ValueError, match=r"init \(Z\) has 3 all-zero column"):
        semnmf.NMF(3, init=(np.zeros_like(Z), W)).fit(X)
