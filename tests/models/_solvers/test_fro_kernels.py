"""The compiled Frobenius sweep (fro_kernels) against the scipy reference path."""

import numpy as np
import pytest
import scipy.sparse as sp

from semnmf.models._solvers import fro_kernels as fk
from semnmf.models._solvers.frobenius import FrobeniusProblem, transpose_csr
from semnmf.models._solvers.graph import GraphProblem
from semnmf.models._solvers.projective import ProjectiveProblem
from semnmf.models._solvers.senmf import SeNMFProblem

from conftest import at_offset

TOL = {np.float64: 1e-10, np.float32: 2e-3}


def _data(dtype, k, seed=0, n=120, d=90, context=True, symmetric=True):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.08, random_state=seed, format="csr").astype(dtype)
    M = None
    if context:
        M = sp.random(d, d, density=0.1, random_state=seed + 1, format="csr")
        M = (M + M.T if symmetric else M).tocsr().astype(dtype)
    Z = rng.random((n, k)).astype(dtype)
    W = rng.random((d, k)).astype(dtype)
    Q = rng.random((d, k)).astype(dtype)
    return X, M, Z, W, Q


def _run(kernels, X, M, Z, W, Q, n_iter=25, **kwargs):
    Z, W = Z.copy(), W.copy()
    Q = Q.copy() if M is not None else None
    problem = FrobeniusProblem(X, Z, W, M=M, Q=Q, lam=0.7, kernels=kernels, **kwargs)
    history = [problem.objective()] + [problem.step() for _ in range(n_iter)]
    return problem, np.array(history)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("k", [1, 4, 6, 9, 13])
@pytest.mark.parametrize("variant", ["nmf", "snmf", "snmf-asym", "orthogonal", "frozen"])
def test_fused_sweep_matches_reference(dtype, k, variant):
    context = variant.startswith("snmf") or variant == "frozen"
    X, M, Z, W, Q = _data(dtype, k, context=context, symmetric=variant != "snmf-asym")
    kwargs = {"orthogonal": variant == "orthogonal", "update_W": variant != "frozen"}
    ref, h_ref = _run(False, X, M, Z, W, Q, **kwargs)
    new, h_new = _run(True, X, M, Z, W, Q, **kwargs)
    tol = TOL[dtype]
    for a, b in [(ref.Z, new.Z), (ref.W, new.W)] + ([(ref.Q, new.Q)] if context else []):
        assert a.dtype == b.dtype == dtype          # no upcast
        np.testing.assert_allclose(b, a, rtol=tol * 10, atol=tol * np.abs(a).max())
    np.testing.assert_allclose(h_new, h_ref, rtol=tol)
    np.testing.assert_allclose(new.terms(), ref.terms(), rtol=tol * 10)
    np.testing.assert_allclose(new.XtZ, ref.XtZ, rtol=tol * 10, atol=tol * np.abs(ref.XtZ).max())


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("k", [1, 3, 6, 7, 8, 9, 20, 65])
def test_product_kernel_matches_scipy(dtype, k):
    rng = np.random.default_rng(k)
    A = sp.random(300, 250, density=0.05, random_state=k, format="csr").astype(dtype)
    R = rng.random((250, k)).astype(dtype)
    out = fk.CSRKernel(A) @ R
    assert out.dtype == dtype
    np.testing.assert_allclose(out, A @ R, rtol=TOL[dtype])
    np.testing.assert_allclose(fk.CSRKernel(A) @ R[:, 0], A @ R[:, 0], rtol=TOL[dtype])


def _reference_row_product(A, R, i):
    """The obvious loop: Σ_p a_ij R[j, :] over row i's non-zeros, in float64."""
    acc = np.zeros(R.shape[1])
    for p in range(A.indptr[i], A.indptr[i + 1]):
        acc += float(A.data[p]) * R[A.indices[p]].astype(np.float64)
    return acc


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_vector_row_product_matches_the_loop(dtype, index_dtype):
    rng = np.random.default_rng(3)
    A = sp.random(40, 70, density=0.1, random_state=3, format="csr").astype(dtype).tolil()
    A[5, :] = 0                                  # an empty row
    A = A.tocsr()
    A.indptr = A.indptr.astype(index_dtype)
    A.indices = A.indices.astype(index_dtype)
    counts = np.diff(A.indptr)
    assert (counts == 0).any() and (counts % 2 == 1).any()  # empty rows and odd tails
    for k in (1, 2, 3, 5, 8, 13, 20, 33):
        R = rng.random((70, k)).astype(dtype)
        vector = np.empty((40, k), dtype=dtype)
        loop = np.empty((40, k), dtype=dtype)
        fk.spmm_rows(A.indptr, A.indices, A.data, R, vector, 0, 40, fk._vector_width(k))
        fk.spmm_rows(A.indptr, A.indices, A.data, R, loop, 0, 40, ())
        reference = np.array([_reference_row_product(A, R, i) for i in range(40)])
        np.testing.assert_allclose(vector, reference, rtol=TOL[dtype] / 10, atol=1e-30)
        np.testing.assert_allclose(vector, loop, rtol=TOL[dtype] / 10, atol=1e-30)
        assert np.all(vector[counts == 0] == 0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("k", [2, 20, 33, 65])
def test_update_matches_numpy(dtype, k):
    """One update F ← F ⊙ (A R + c B S) / (F G + ε) with its sums, against numpy: vector
    pieces (k = 2, 20, 33), the run-time loop (k = 65), chunks of 32 rows and a rest."""
    rng = np.random.default_rng(k)
    A = sp.random(70, 50, density=0.15, random_state=k, format="csr").astype(dtype)
    B = sp.random(70, 40, density=0.1, random_state=k + 1, format="csr").astype(dtype)
    F = rng.random((70, k)).astype(dtype)
    R = rng.random((50, k)).astype(dtype)
    S = rng.random((40, k)).astype(dtype)
    G = rng.random((k, k)).astype(dtype)
    kernel = fk.CSRKernel(A, partner=fk.CSRKernel(B))
    for with_b in (False, True):
        expected = F * ((A @ R + (0.5 * (B @ S) if with_b else 0)) / (F @ G + 1e-7))
        new = F.copy()
        inner, gram = kernel.update(new, R, G, eps=1e-7, **({"S": S, "c": 0.5} if with_b else {}))
        tol = TOL[dtype]
        np.testing.assert_allclose(new, expected, rtol=tol)
        np.testing.assert_allclose(gram, new.T.astype(float) @ new.astype(float), rtol=tol)
        assert np.array_equal(gram, gram.T)
        np.testing.assert_allclose(inner, np.sum(new.astype(float) * (A @ R)), rtol=tol)


def test_strided_csr_arrays_are_read_right():
    """scipy keeps strided data and index arrays as they are given; the kernels, which
    step through them by element, work on contiguous copies."""
    rng = np.random.default_rng(4)
    A = sp.random(30, 20, density=0.2, random_state=0, format="csr")
    wide = np.empty(2 * A.nnz)
    wide[::2] = A.data
    wide[1::2] = 1e6
    wide_indices = np.zeros(2 * A.nnz, dtype=A.indices.dtype)
    wide_indices[::2] = A.indices
    strided = sp.csr_matrix((wide[::2], wide_indices[::2], A.indptr), shape=A.shape)
    assert not strided.data.flags.c_contiguous and not strided.indices.flags.c_contiguous
    R = rng.random((20, 4))
    np.testing.assert_allclose(fk.CSRKernel(strided) @ R, A @ R, rtol=1e-12)
    F, G = rng.random((30, 4)), rng.random((4, 4))
    F1, F2 = F.copy(), F.copy()
    assert fk.CSRKernel(strided).update(F1, R, G, eps=1e-7)[0] == \
        fk.CSRKernel(A).update(F2, R, G, eps=1e-7)[0]
    np.testing.assert_array_equal(F1, F2)
    from semnmf.models._solvers import skmeans_kernels
    C = rng.random((3, 20))
    labels, sims = skmeans_kernels.assign(strided, C)
    np.testing.assert_array_equal(labels, np.asarray((A @ C.T).argmax(axis=1)).ravel())
    np.testing.assert_array_equal(sims, np.asarray((A @ C.T).max(axis=1)).ravel())
    with pytest.raises(ValueError, match="C-contiguous"):
        fk.CSRKernel(A).update(np.asfortranarray(F), R, G, eps=1e-7)


def test_vector_pieces_cover_the_columns():
    from semnmf.models._solvers.simd import pieces
    for k in range(1, 70):
        parts = pieces(k)
        assert [offset for offset, _ in parts] == list(np.cumsum([0] + [w for _, w in parts])[:-1])
        assert sum(w for _, w in parts) == k
        assert all(w in (1, 2, 4, 8) for _, w in parts)
        assert [w for _, w in parts] == sorted((w for _, w in parts), reverse=True)
    assert pieces(20) == [(0, 8), (8, 8), (16, 4)]


def test_threaded_blocks_match_one_block(monkeypatch):
    monkeypatch.setattr(fk, "_WORK_PER_THREAD", 1)
    X, M, Z, W, Q = _data(np.float64, 5, context=True)
    runs = {}
    for threads in ("3", "1"):
        monkeypatch.setenv("SEMNMF_NUM_THREADS", threads)
        kernel = fk.CSRKernel(X.T.tocsr(), partner=fk.CSRKernel(M))
        workers, blocks = kernel.plan(5, pair=True)
        assert (workers, len(blocks) > 1) == ((3, True) if threads == "3" else (1, False))
        W1 = W.copy()
        inner, gram = kernel.update(W1, Z, Z.T @ Z, eps=1e-7, S=Q, c=0.5)
        runs[threads] = (W1, inner, gram)
    (W1, inner1, gram1), (W2, inner2, gram2) = runs["3"], runs["1"]
    np.testing.assert_allclose(W1, W2, rtol=1e-13)
    np.testing.assert_allclose(gram1, W1.T @ W1, rtol=1e-12)
    np.testing.assert_allclose(gram2, gram1, rtol=1e-13)
    np.testing.assert_allclose(inner1, np.sum(W1 * (X.T @ Z)), rtol=1e-12)
    np.testing.assert_allclose(inner2, inner1, rtol=1e-13)


def test_thread_plan_follows_the_work(monkeypatch):
    """One thread for a small pass, more when non-zeros x columns grow."""
    monkeypatch.setenv("SEMNMF_NUM_THREADS", "4")
    A = sp.random(400, 300, density=0.05, random_state=0, format="csr")  # 6,000 non-zeros
    kernel = fk.CSRKernel(A)
    monkeypatch.setattr(fk, "_WORK_PER_THREAD", 6_000 * 4)
    assert kernel.plan(4) == (1, [(0, 400)])
    workers, blocks = kernel.plan(12)
    assert workers == 3 and blocks[0][0] == 0 and blocks[-1][1] == 400
    assert kernel.plan(100)[0] == 4


def test_symmetric_matrix_is_not_transposed():
    A = sp.random(50, 50, density=0.2, random_state=0, format="csr")
    S = (A + A.T).tocsr()
    assert fk.is_symmetric(S) and transpose_csr(S) is S
    assert not fk.is_symmetric(A)
    assert (transpose_csr(A) != A.T).nnz == 0
    # rounding-level asymmetry (entries computed in another order) still counts
    T = S.copy()
    T.data = T.data + T.data.max() * np.finfo(float).eps * (np.arange(T.nnz) % 2)
    assert fk.is_symmetric(T)
    T.data[0] += 1e-6
    assert not fk.is_symmetric(T)
    assert not fk.is_symmetric(sp.random(5, 6, density=0.5, format="csr"))
    for bad in (np.nan, np.inf):  # never taken for its own transpose
        assert not fk.is_symmetric(sp.csr_matrix(np.array([[bad, 2.0], [5.0, 1.0]])))
        assert not fk.is_symmetric(sp.csr_matrix(np.array([[1.0, bad], [bad, 1.0]])))


def _reference_is_symmetric(A, ulps=4):
    """The obvious version: form Aᵀ, compare patterns, then values within ulps ε max|A|."""
    A = A.tocsr()
    A.sum_duplicates()
    At = A.T.tocsr()
    At.sort_indices()
    if not (np.array_equal(A.indptr, At.indptr) and np.array_equal(A.indices, At.indices)):
        return False
    if A.nnz == 0:
        return True
    tol = ulps * np.finfo(A.dtype).eps * np.abs(A.data).max()
    return bool(np.max(np.abs(A.data - At.data)) <= tol)


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_symmetry_check_matches_the_transpose(dtype, threads, monkeypatch):
    if threads > 1:  # row blocks on three threads, even for these small matrices
        monkeypatch.setattr(fk, "_WORK_PER_THREAD", 1)
        monkeypatch.setenv("SEMNMF_NUM_THREADS", str(threads))
    rng = np.random.default_rng(0)
    seen = set()
    for trial in range(200):
        n = int(rng.integers(1, 30))
        A = sp.random(n, n, density=rng.uniform(0, 0.4), random_state=trial, format="csr")
        S = (A + A.T).tocsr().astype(dtype)
        kind = trial % 5
        if kind == 1 and S.nnz:    # one entry off its mirror's value
            S.data[rng.integers(S.nnz)] *= 1.5
        elif kind == 2:            # one entry without a mirror (above or below)
            i, j = rng.integers(n, size=2)
            if i != j and S[j, i] == 0:
                S = S.tolil()
                S[i, j] = 1.0
                S = S.tocsr()
        elif kind == 3 and S.nnz:  # rounding-level noise only
            S.data = S.data + np.abs(S.data).max() * np.finfo(dtype).eps * rng.random(S.nnz)
        elif kind == 4:
            S = S.tocoo()          # unsorted, with a duplicate entry: summed first
            S = sp.coo_matrix((np.r_[S.data, 0.0], (np.r_[S.row, 0], np.r_[S.col, 0])),
                              shape=(n, n)).tocsr()
        expected = _reference_is_symmetric(S)
        assert fk.is_symmetric(S) == expected, trial
        seen.add(expected)
    assert seen == {True, False}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_other_problems_with_the_product_kernel(dtype, monkeypatch):
    X, M, Z, W, Q = _data(dtype, 4, context=True)
    A = sp.random(X.shape[0], X.shape[0], density=0.05, random_state=3, format="csr")
    A = (A + A.T).tocsr().astype(dtype)
    results = []
    for flag in ("0", "1"):
        monkeypatch.setenv("SEMNMF_KERNELS", flag)
        graph = GraphProblem(X, Z.copy(), W.copy(), A, 0.3, M=M, Q=Q.copy(), lam=0.5)
        senmf = SeNMFProblem(X, Z.copy(), W.copy(), M, lam=0.5)
        pnmf = ProjectiveProblem(X, Z.copy())
        results.append([[p.step() for _ in range(10)] for p in (graph, senmf, pnmf)])
        assert (type(pnmf.X).__name__ == "CSRKernel") == (flag == "1")
    np.testing.assert_allclose(results[1], results[0], rtol=TOL[dtype])


@pytest.mark.parametrize("loss", ["frobenius", "kl"])
@pytest.mark.parametrize("offset", [0, 16, 40])
def test_factors_sit_on_cache_lines_with_the_same_iterates(loss, offset):
    # the compiled passes load factor rows as vectors: the problems keep 64-byte-aligned
    # factors (a copy when the start is not), and alignment changes no number
    from semnmf.models._solvers.kl import KLProblem

    X, M, Z, W, Q = _data(np.float64, 4)
    make = FrobeniusProblem if loss == "frobenius" else KLProblem
    runs = []
    for shift in (lambda a: at_offset(a, offset), np.copy):
        problem = make(X, shift(Z), shift(W), M=M, Q=shift(Q), lam=0.7)
        for factor in (problem.Z, problem.W, problem.Q):
            assert factor.ctypes.data % 64 == 0 and factor.flags.c_contiguous
        runs.append([problem.step() for _ in range(5)] + [problem.Z, problem.W, problem.Q])
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)
