"""NMF-KL and SNMF-KL (slides eq. 2, Algorithm 2 corrected in semnmf.models._solvers.kl): the fused
kernel against dense arithmetic, the updates against a slow dense reference, monotonicity,
KKT conditions, and the estimator API with loss="kl"."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.decomposition import NMF as SkNMF
from sklearn.exceptions import ConvergenceWarning

from semnmf import NMF, SemanticNMF, nmi
from semnmf.models._solvers import kl_kernels as _kernels
from semnmf.models._solvers.kl import KLProblem
from semnmf.models.init import initialize, initialize_context_factor
from semnmf.models.semantic import effective_lambda

from test_nmf import planted_corpus, random_problem


# -- slow, obvious dense reference of eq. (2) and the updates of semnmf.models._solvers.kl -------
def dense_kl(A, B):
    """Generalized KL divergence D(A‖B) = Σ a log(a/b) − a + b over all entries."""
    mask = A > 0
    return np.sum(A[mask] * np.log(A[mask] / B[mask])) - A.sum() + B.sum()


def ratio(A, B):
    """A ⊘ B at the non-zeros of A, 0 elsewhere."""
    out = np.zeros_like(A)
    mask = A > 0
    out[mask] = A[mask] / B[mask]
    return out


def reference_objective(X, Z, W, M=None, Q=None, lam=0.0):
    value = dense_kl(X, Z @ W.T)
    if M is not None and lam > 0:
        value += lam * dense_kl(M, W @ Q.T)
    return value


def reference_step(X, Z, W, M=None, Q=None, lam=0.0):
    Z = Z * (ratio(X, Z @ W.T) @ W) / W.sum(axis=0)
    if M is None:
        W = W * (ratio(X, Z @ W.T).T @ Z) / Z.sum(axis=0)
        return Z, W, None
    numerator = ratio(X, Z @ W.T).T @ Z + lam * ratio(M, W @ Q.T) @ Q
    W = W * numerator / (Z.sum(axis=0) + lam * Q.sum(axis=0))
    Q = Q * (ratio(M, W @ Q.T).T @ W) / W.sum(axis=0)
    return Z, W, Q


def fit_quietly(model, X, **fit_params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(X, **fit_params)


# -- the kernel -------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("k", [1, 4, 7, 9, 20, 65])  # vector registers up to 64, then a loop
def test_kernel_matches_dense(dtype, index_dtype, threads, k, monkeypatch):
    monkeypatch.setenv("SEMNMF_NUM_THREADS", str(threads))
    monkeypatch.setattr(_kernels, "_MIN_NNZ_FOR_THREADS", 0)
    rng = np.random.default_rng(0)
    A = sp.random(37, 23, density=0.3, random_state=rng, dtype=dtype).toarray()
    A[5, :] = 0                       # an empty row
    A = sp.csr_matrix(A)
    A.data[3] = 0                     # an explicit zero: contributes nothing
    A.indices = A.indices.astype(index_dtype)
    A.indptr = A.indptr.astype(index_dtype)
    L = rng.random((37, k)).astype(dtype) + dtype(0.1)
    R = rng.random((23, k)).astype(dtype) + dtype(0.1)
    kernel = _kernels.RatioKernel(A)
    assert len(kernel.blocks) == (1 if threads == 1 else min(37, 3 * _kernels._BLOCKS_PER_THREAD))
    out, xlog = kernel(L, R, with_log=True)
    Ad = A.toarray().astype(np.float64)
    LR = L.astype(np.float64) @ R.astype(np.float64).T
    expected = ratio(Ad, LR) @ R.astype(np.float64)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    assert out.dtype == dtype
    np.testing.assert_allclose(out, expected, rtol=rtol, atol=0)
    mask = Ad > 0
    assert xlog == pytest.approx(np.sum(Ad[mask] * np.log(Ad[mask] / LR[mask])), rel=rtol)
    assert kernel(L, R)[1] == 0.0     # no logarithms unless asked


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("k", [2, 3, 5, 9, 17, 20, 33])
def test_both_kl_products_divide_by_the_same_numbers(dtype, k):
    """ratio_columns (the Dask engine's transposed product) and the row kernel form the
    same dot products bitwise, whatever the mix of vector widths: a permutation matrix
    with L[:, 0] = 1 puts each ratio alone in column 0 of the transposed product."""
    from semnmf.models._solvers.fro_kernels import _vector_width

    rng = np.random.default_rng(k)
    m = 300
    # rows of 0 to 20 non-zeros (the row kernel divides 8 at a time, then the rest one
    # by one), each column holding one non-zero
    lengths = np.arange(m) % 21
    p = int(lengths.sum())
    perm = rng.permutation(p)
    A = sp.csr_matrix((rng.random(p) + 0.5, perm, np.r_[0, np.cumsum(lengths)]),
                      shape=(m, p))
    L = rng.random((m, k)).astype(dtype)
    L[:, 0] = 1
    R = rng.random((p, k)).astype(dtype)
    floor = dtype(1e-30)
    ratios = np.empty(p)
    _kernels.ratio_block(A.indptr, A.indices, A.data, L, R, np.empty((m, k), dtype), 0, m,
                         floor, _vector_width(k), ratios, True)
    columns = np.empty((p, k), dtype)
    _kernels.ratio_columns(A.indptr, A.indices, A.data, L, R, columns, floor, _vector_width(k))
    np.testing.assert_array_equal(columns[perm, 0], ratios.astype(dtype))


def test_kernel_reads_strided_and_fortran_inputs():
    """A CSR matrix with strided arrays (scipy keeps them) and F-ordered factors give the
    results of their contiguous copies."""
    rng = np.random.default_rng(2)
    A = sp.random(40, 30, density=0.2, random_state=2, format="csr")
    wide = np.empty(2 * A.nnz)
    wide[::2] = A.data
    wide[1::2] = 1e6
    strided = sp.csr_matrix((wide[::2], A.indices, A.indptr), shape=A.shape)
    assert not strided.data.flags.c_contiguous
    L, R = rng.random((40, 5)) + 0.1, rng.random((30, 5)) + 0.1
    expected, xlog = _kernels.RatioKernel(A)(L, R, with_log=True)
    out, xlog2 = _kernels.RatioKernel(strided)(np.asfortranarray(L), np.asfortranarray(R),
                                               with_log=True)
    np.testing.assert_array_equal(out, expected)
    assert xlog2 == xlog


@pytest.mark.parametrize("k", [4, 20])
def test_kernel_reads_the_data_in_the_factors_dtype(k):
    """float64 data with float32 factors (a float64 M in a float32 fit): the values are
    read as float32, as the Frobenius kernels convert them; the result is float32."""
    rng = np.random.default_rng(1)
    A = sp.random(30, 25, density=0.3, random_state=1, format="csr")
    L = rng.random((30, k)).astype(np.float32) + np.float32(0.1)
    R = rng.random((25, k)).astype(np.float32) + np.float32(0.1)
    out, xlog = _kernels.RatioKernel(A)(L, R, with_log=True)
    A32 = A.astype(np.float32)
    out32, xlog32 = _kernels.RatioKernel(A32)(L, R, with_log=True)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, out32)
    expected = ratio(A.toarray(), L.astype(float) @ R.astype(float).T) @ R.astype(float)
    np.testing.assert_allclose(out, expected, rtol=1e-5)
    assert xlog == pytest.approx(xlog32, rel=1e-6)


@pytest.mark.parametrize("chunk", [1, 3, 7, 10_000])
def test_kernel_logarithms_in_chunks(chunk, monkeypatch):
    """The ratios whose logarithms numpy takes are kept a chunk of rows at a time; a row
    longer than a chunk is a chunk of its own."""
    monkeypatch.setattr(_kernels, "_LOG_CHUNK", chunk)
    monkeypatch.setattr(_kernels, "_MIN_NNZ_FOR_THREADS", 0)
    rng = np.random.default_rng(4)
    A = sp.random(40, 30, density=0.25, random_state=rng, format="csr")
    A.data[::7] = 0                   # explicit zeros: 0 log 0 = 0
    L = rng.random((40, 5)) + 0.1
    R = rng.random((30, 5)) + 0.1
    out, xlog = _kernels.RatioKernel(A)(L, R, with_log=True)
    Ad = A.toarray()
    LR = L @ R.T
    mask = Ad > 0
    assert np.diff(A.indptr).max() > chunk or chunk == 10_000
    assert xlog == pytest.approx(np.sum(Ad[mask] * np.log(Ad[mask] / LR[mask])), rel=1e-12)
    np.testing.assert_allclose(out, ratio(Ad, LR) @ R, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sum_dtype", [None, np.float64])
@pytest.mark.parametrize("k", [1, 2, 4, 20])
@pytest.mark.parametrize("order", ["C", "F"])
def test_column_sums_are_numpys(dtype, sum_dtype, k, order):
    """The sweep's column sums (1ᵀZ, 1ᵀW, 1ᵀQ) are bitwise numpy's ``sum(axis=0)``:
    rows of magnitudes 1e-6 .. 1e6 make any other order of the additions show."""
    rng = np.random.default_rng(k)
    n = 3001
    F = rng.random((n, k)) * 10.0 ** rng.uniform(-6, 6, size=(n, 1))
    F = np.asarray(F.astype(dtype), order=order)
    ours = _kernels.column_sums(F, sum_dtype)
    theirs = F.sum(axis=0, dtype=sum_dtype)
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)
    for part in (F[::2], F[:0]):       # strided rows, no rows
        np.testing.assert_array_equal(_kernels.column_sums(part, sum_dtype),
                                      part.sum(axis=0, dtype=sum_dtype))
    F.flags.writeable = False
    np.testing.assert_array_equal(_kernels.column_sums(F, sum_dtype), theirs)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k", [1, 4, 8, 9, 20])
def test_transposed_kernel_matches_dense(dtype, k):
    """ratio_columns: (Aᵀ ⊘ R Lᵀ) L from A's rows, the block task of the Dask engine's
    W numerator; the floor applies as in ratio_block."""
    from semnmf.models._solvers.fro_kernels import _vector_width

    rng = np.random.default_rng(1)
    A = sp.random(31, 17, density=0.3, random_state=rng, dtype=dtype, format="csr")
    L = rng.random((31, k)).astype(dtype) + dtype(0.1)
    R = rng.random((17, k)).astype(dtype) + dtype(0.1)
    L[2] = 0                          # (L Rᵀ) = 0 on row 2: the floor keeps it finite
    out = np.full((17, k), np.nan, dtype=dtype)
    floor = dtype(1e-3)
    _kernels.ratio_columns(A.indptr, A.indices, A.data, L, R, out, floor, _vector_width(k))
    Ad = A.toarray().astype(np.float64)
    LR = np.maximum(L.astype(np.float64) @ R.astype(np.float64).T, float(floor))
    expected = ratio(Ad, LR).T @ L.astype(np.float64)
    np.testing.assert_allclose(out, expected, rtol=1e-5 if dtype == np.float32 else 1e-12,
                               atol=0)


def test_kernel_floor_and_shape_check():
    A = sp.csr_matrix(np.array([[2.0, 0.0], [0.0, 1.0]]))
    L = np.array([[0.0], [1.0]])        # (L Rᵀ)_00 = 0 at a non-zero of A
    R = np.array([[1.0], [1.0]])
    kernel = _kernels.RatioKernel(A)
    out, _ = kernel(L, R, with_log=True)
    assert np.isfinite(out).all()
    assert out[0, 0] == pytest.approx(2.0 / kernel.floor)
    assert kernel.floor == pytest.approx(np.finfo(np.float32).eps * 1.5)
    with pytest.raises(ValueError, match="do not match"):
        kernel(L, np.ones((3, 1)))


# -- the updates against the dense reference -----------------------------------------------
@pytest.mark.parametrize("with_context", [False, True])
@pytest.mark.parametrize("sparse", [True, False])
def test_step_matches_reference(with_context, sparse):
    X, M, Z, W, Q = random_problem(sparse=sparse)
    lam = 0.7 if with_context else 0.0
    problem = KLProblem(X, Z.copy(), W.copy(), M=M if with_context else None,
                        Q=Q.copy() if with_context else None, lam=lam)
    Xd = X.toarray() if sparse else X
    Md = M.toarray() if sparse else M
    Mr = Md if with_context else None
    Zr, Wr, Qr = Z.copy(), W.copy(), (Q.copy() if with_context else None)
    assert problem.objective() == pytest.approx(reference_objective(Xd, Zr, Wr, Mr, Qr, lam), rel=1e-12)
    for _ in range(6):
        objective = problem.step()
        Zr, Wr, Qr = reference_step(Xd, Zr, Wr, Mr, Qr, lam)
        np.testing.assert_allclose(problem.Z, Zr, rtol=1e-10)
        np.testing.assert_allclose(problem.W, Wr, rtol=1e-10)
        if with_context:
            np.testing.assert_allclose(problem.Q, Qr, rtol=1e-10)
        assert objective == pytest.approx(reference_objective(Xd, Zr, Wr, Mr, Qr, lam), rel=1e-10)
    data, context = problem.terms()
    assert data == pytest.approx(dense_kl(Xd, Zr @ Wr.T), rel=1e-10)
    if with_context:
        assert context == pytest.approx(dense_kl(Md, Wr @ Qr.T), rel=1e-10)


def test_matches_scikit_learn_kl_mu():
    """NMF-KL is scikit-learn's NMF(solver="mu", beta_loss="kullback-leibler"): same start,
    same iterates (the guards differ but are inactive), same reconstruction_err_."""
    X, _, Z, W, _ = random_problem(n=50, d=35, k=3, seed=9)
    ours = NMF(3, loss="kl", init=(Z, W), max_iter=30, tol=0)
    sk = SkNMF(3, solver="mu", beta_loss="kullback-leibler", init="custom", max_iter=30, tol=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        Z_ours = ours.fit_transform(X)
        Z_sk = sk.fit_transform(X, W=Z.copy(), H=np.ascontiguousarray(W.T))
    assert ours.reconstruction_err_ == pytest.approx(sk.reconstruction_err_, rel=1e-9)
    assert ours.n_iter_ == sk.n_iter_ == 30
    # our Z has unit columns (W rescaled to match): the products Z Wᵀ agree
    np.testing.assert_allclose(Z_ours @ ours.components_, Z_sk @ sk.components_, rtol=1e-8)


# -- monotonicity (auxiliary-function argument of Lee & Seung) ------------------------------
@pytest.mark.parametrize("Estimator,kwargs", [(NMF, {}), (SemanticNMF, {"lam": 1.0}),
                                              (SemanticNMF, {"lam": 50.0})])
@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.parametrize("seed", [0, 1])
def test_objective_non_increasing_every_iteration(Estimator, kwargs, sparse, seed):
    X, M, *_ = random_problem(n=60, d=40, k=4, seed=seed, sparse=sparse)
    fit_kwargs = {"M": M} if Estimator is SemanticNMF else {}
    model = fit_quietly(Estimator(4, loss="kl", init="random", max_iter=150, tol=0,
                                  random_state=seed, **kwargs), X, **fit_kwargs)
    history = model.objective_history_
    assert len(history) == 151 and np.isfinite(history).all()
    increases = np.diff(history)
    assert np.all(increases <= 1e-12 * history[:-1]), increases.max()
    assert history[-1] < 0.8 * history[0]


def test_z_update_keeps_the_mass_of_X():
    """After the Z update Σ ZWᵀ = ΣX exactly (and after the W update too when λ = 0)."""
    X, _, Z, W, _ = random_problem(n=40, d=30, k=3, seed=2)
    X = X * 7.0
    problem = KLProblem(X, Z.copy(), W.copy())
    assert problem.Z.sum(axis=0) @ problem.W.sum(axis=0) != pytest.approx(X.sum(), rel=1e-3)
    problem.step()
    assert problem.Z.sum(axis=0) @ problem.W.sum(axis=0) == pytest.approx(X.sum(), rel=1e-12)
    frozen = KLProblem(X, Z.copy(), W.copy(), update_W=False)
    frozen.step()
    np.testing.assert_array_equal(frozen.W, W)
    assert frozen.Z.sum(axis=0) @ W.sum(axis=0) == pytest.approx(X.sum(), rel=1e-12)


# -- KKT conditions at convergence ---------------------------------------------------------
def _kkt(X, Z, W, M=None, Q=None, lam=0.0):
    """Complementarity Z ⊙ ∇F and min ∇F of each factor, relative to the gradient's scale."""
    R = ratio(X, Z @ W.T)
    grads = [(Z, W.sum(axis=0) - R @ W, np.abs(R @ W))]
    grad_W = Z.sum(axis=0) - R.T @ Z
    scale_W = np.abs(R.T @ Z)
    if M is not None:
        S = ratio(M, W @ Q.T)
        grad_W = grad_W + lam * (Q.sum(axis=0) - S @ Q)
        scale_W = scale_W + lam * np.abs(S @ Q)
        grads.append((Q, lam * (W.sum(axis=0) - S.T @ W), lam * np.abs(S.T @ W)))
    grads.append((W, grad_W, scale_W))
    complementarity = max(np.abs(F * g).max() / np.abs(F * s).max() for F, g, s in grads)
    min_gradient = min((g / s.max()).min() for _, g, s in grads)
    return complementarity, min_gradient


@pytest.mark.parametrize("with_context", [False, True])
def test_kkt_conditions_at_convergence(with_context):
    """At convergence Z ⊙ ∇_Z F ≈ 0 and ∇F ≥ 0 (likewise for W, Q).

    Planted topics converge fast. On unstructured random data MU can crawl for thousands
    of iterations with entries near 0 whose gradient is still negative (they grow back
    geometrically), so "convergence" there is not a fixed iteration count."""
    X, _ = planted_corpus(n_per=12, k=3, d_per=6, seed=3)
    Xd = X.toarray()
    rng = np.random.default_rng(0)
    C = sp.random(X.shape[1], X.shape[1], density=0.3, random_state=rng)
    M = (C + C.T).toarray()
    lam = 0.5 if with_context else 0.0
    Z, W = initialize(X, 3, "random", 0)
    Q = initialize_context_factor(M.T @ W, W) if with_context else None
    problem = KLProblem(X, Z, W, M=M if with_context else None, Q=Q, lam=lam)
    previous = problem.objective()
    for _ in range(1000):
        current = problem.step()
    assert current <= previous
    complementarity, min_gradient = _kkt(Xd, problem.Z, problem.W, M if with_context else None,
                                         problem.Q, lam)
    # (both are about 0.3 and -0.6 after 10 iterations, below 1e-8 after 300)
    assert complementarity < 1e-6
    assert min_gradient > -1e-6


# -- estimator-level behaviour -------------------------------------------------------------
def test_lambda_zero_gives_nmf_kl():
    X, M, Z, W, _ = random_problem(n=50, d=35, k=3, seed=4)
    common = dict(loss="kl", init=(Z, W), max_iter=60, tol=0)
    nmf = fit_quietly(NMF(3, **common), X)
    snmf = fit_quietly(SemanticNMF(3, lam=0.0, **common), X, M=M)
    np.testing.assert_allclose(snmf.components_, nmf.components_, rtol=1e-12)
    np.testing.assert_allclose(snmf.objective_history_, nmf.objective_history_, rtol=1e-12)
    np.testing.assert_array_equal(snmf.labels_, nmf.labels_)
    assert snmf.context_err_ > 0 and nmf.context_err_ == 0


def test_context_term_changes_the_fit():
    X, M, Z, W, _ = random_problem(n=50, d=35, k=3, seed=4)
    common = dict(loss="kl", init=(Z, W), max_iter=60, tol=0)
    plain = fit_quietly(SemanticNMF(3, lam=0.0, **common), X, M=M)
    semantic = fit_quietly(SemanticNMF(3, lam=1.0, **common), X, M=M)
    assert semantic.context_err_ < plain.context_err_
    assert semantic.reconstruction_err_ > plain.reconstruction_err_


def test_relative_lambda_is_scale_free_for_kl():
    """D is homogeneous of degree 1: λ = lam·ΣX/ΣM makes M → cM change nothing in Z, W."""
    X, M, Z, W, _ = random_problem(n=45, d=30, k=3, seed=6)
    common = dict(loss="kl", lam=1.0, init=(Z, W), max_iter=30, tol=0)
    a = fit_quietly(SemanticNMF(3, **common), X, M=M)
    b = fit_quietly(SemanticNMF(3, **common), X, M=1000.0 * M)
    np.testing.assert_allclose(a.components_, b.components_, rtol=1e-9)
    np.testing.assert_allclose(b.context_components_, 1000.0 * a.context_components_, rtol=1e-9)
    assert a.lambda_ == pytest.approx(X.sum() / M.sum())
    assert b.lambda_ == pytest.approx(a.lambda_ / 1000.0)
    assert effective_lambda(2.0, X, M, "relative", loss="kl") == pytest.approx(2.0 * X.sum() / M.sum())
    assert effective_lambda(3.0, X, M, "absolute", loss="kl") == 3.0
    # the Frobenius scaling is untouched
    assert effective_lambda(2.0, X, M) == pytest.approx(
        2.0 * np.sum(X.data ** 2) / np.sum(M.data ** 2))


@pytest.mark.parametrize("Estimator", [NMF, SemanticNMF])
def test_recovers_planted_clusters(Estimator):
    X, y = planted_corpus(seed=2)
    labels = Estimator(3, loss="kl", random_state=0).fit_predict(X)
    assert nmi(y, labels) > 0.95


def test_transform_with_fixed_components():
    X, y = planted_corpus(seed=5)
    model = SemanticNMF(3, loss="kl", random_state=0).fit(X)
    components = model.components_.copy()
    Z_new = model.transform(X)
    np.testing.assert_array_equal(model.components_, components)
    assert Z_new.shape == (X.shape[0], 3) and (Z_new >= 0).all()
    assert np.mean(Z_new.argmax(axis=1) == model.labels_) > 0.95
    # the transformed Z satisfies the Z part of the KKT conditions for the fixed W
    W = model.components_.T
    R = ratio(X.toarray(), Z_new @ W.T)
    grad = W.sum(axis=0) - R @ W
    assert np.abs(Z_new * grad).max() < 1e-2 * np.abs(Z_new * (R @ W)).max()


def test_determinism_threads_and_float32(monkeypatch):
    X, y = planted_corpus(seed=4)
    a = SemanticNMF(3, loss="kl", init="random", random_state=7).fit(X)
    b = SemanticNMF(3, loss="kl", init="random", random_state=7).fit(X)
    np.testing.assert_array_equal(a.components_, b.components_)
    # rows are owned by one thread: splitting into blocks changes no bit of the factors
    monkeypatch.setenv("SEMNMF_NUM_THREADS", "3")
    monkeypatch.setattr(_kernels, "_MIN_NNZ_FOR_THREADS", 0)
    c = SemanticNMF(3, loss="kl", init="random", random_state=7).fit(X)
    np.testing.assert_array_equal(a.components_, c.components_)
    np.testing.assert_array_equal(a.labels_, c.labels_)
    monkeypatch.undo()
    model32 = SemanticNMF(3, loss="kl", random_state=0)
    Z32 = model32.fit_transform(X.astype(np.float32))
    assert Z32.dtype == np.float32 and model32.components_.dtype == np.float32
    model64 = SemanticNMF(3, loss="kl", random_state=0).fit(X)
    assert nmi(model64.labels_, model32.labels_) == pytest.approx(1.0)
    np.testing.assert_allclose(model32.components_, model64.components_, rtol=1e-3, atol=1e-4)


def test_reconstruction_error_is_scikit_learn_style():
    """reconstruction_err_ = sqrt(2 D(X‖ZWᵀ)), as scikit-learn reports beta-divergences."""
    X, _ = planted_corpus(seed=1)
    model = SemanticNMF(3, loss="kl", random_state=0, max_iter=20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        Z = model.fit_transform(X)
    assert model.reconstruction_err_ == pytest.approx(
        np.sqrt(2 * dense_kl(X.toarray(), Z @ model.components_)), rel=1e-8)
    assert model.objective_ == pytest.approx(
        model.reconstruction_err_ ** 2 / 2 + model.lambda_ * model.context_err_ ** 2 / 2, rel=1e-9)


# -- bad input ----------------------------------------------------------------------------------
def test_bad_input():
    X, _ = planted_corpus()
    with pytest.raises(ValueError, match="orthogonal=True is derived for the Frobenius loss"):
        NMF(3, loss="kl", orthogonal=True).fit(X)
    with pytest.raises(ValueError, match="orthogonal=True is derived for the Frobenius loss"):
        SemanticNMF(3, loss="kl", orthogonal=True).fit(X)
    negative = X.copy()
    negative.data[0] = -1.0
    with pytest.raises(ValueError, match="negative"):
        NMF(3, loss="kl").fit(negative)
    with pytest.raises(ValueError, match="negative"):
        SemanticNMF(3, loss="kl").fit(X, M=-sp.eye(X.shape[1], format="csr"))
    with pytest.raises(ValueError, match="larger than the number of documents"):
        NMF(1000, loss="kl").fit(X)
