"""The compiled rank-2 ANLS kernels (semnmf.models._solvers.rank2_kernels) against numpy references.

The numpy reference of one NNLS solve is :func:`nnls_rank2` (Algorithm 2, itself tested
against scipy's NNLS and Algorithm 1 in test_hierarchical.py); the reference of the
whole iteration is :func:`reference_rank2_nmf` below, the straightforward numpy loop
(two products, two solves, gradients and projected-gradient norm on full arrays).
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from conftest import random_rank2_problem
from semnmf.models._solvers import rank2_kernels as K
from semnmf.models._solvers import rank2 as r2
from semnmf.models._solvers.rank2 import nnls_rank2, rank2_nmf

DTYPES = [np.float32, np.float64]
KINDS = ["generic", "collinear", "zero column", "zero columns", "zero rhs", "orthogonal",
         "near tie"]


# -- references -------------------------------------------------------------------------
def projected_gradient_sq(F, grad):
    g = np.where(F > 0, grad, np.minimum(grad, 0))
    return float(np.sum(g.astype(np.float64) ** 2))


def reference_rank2_nmf(X, W, max_iter, tol):
    """The ANLS loop of rank2_nmf written plainly with numpy (dense X), in float64."""
    X = X.toarray() if sp.issparse(X) else X
    X = X.astype(np.float64)
    W = W.astype(np.float64)
    Z = nnls_rank2(W.T @ W, X @ W)
    history, init, rel, it, converged = [], None, np.inf, 0, False
    for it in range(1, max_iter + 1):
        W = nnls_rank2(Z.T @ Z, X.T @ Z)
        norms = np.linalg.norm(W, axis=0)
        norms[norms == 0] = 1.0
        W = W / norms
        Z = nnls_rank2(W.T @ W, X @ W)
        history.append(0.5 * np.sum((X - Z @ W.T) ** 2))
        pg = math.sqrt(projected_gradient_sq(Z, Z @ (W.T @ W) - X @ W)
                       + projected_gradient_sq(W, W @ (Z.T @ Z) - X.T @ Z))
        init = pg if init is None else init
        rel = pg / init if init > 0 else 0.0
        if rel <= tol:
            converged = True
            break
    return Z, W, it, history, converged, rel


def random_rhs(seed, kind, dtype, n=300):
    """(BᵀB, YᵀB) of a random rank-2 NNLS problem of the given kind."""
    B, Y = random_rank2_problem(seed, kind, n=n, max_m=15, density=0.6)
    return B.T @ B, (Y.T @ B).astype(dtype)


def run_nnls_rows(BtB, YtB, prev=None, scales=(1.0, 1.0, 1.0, 1.0)):
    gram, tcoef = r2._coefficients(BtB, YtB.dtype)
    G = np.empty_like(YtB)
    out = K.nnls_rows(np.ascontiguousarray(YtB)[None], gram, tcoef, np.array(scales, float),
                      G, G if prev is None else prev, prev is not None)
    return G, out


# -- the fused NNLS pass ----------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(3))
def test_nnls_rows_is_algorithm2_exactly(dtype, kind, seed):
    """Same arithmetic as the numpy reference: bit-identical G, ties included."""
    BtB, YtB = random_rhs(seed, kind, dtype)
    G, _ = run_nnls_rows(BtB, YtB)
    reference = nnls_rank2(BtB, YtB)
    assert G.dtype == reference.dtype == dtype
    np.testing.assert_array_equal(G, reference)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["generic", "zero column", "zero rhs", "collinear"])
def test_nnls_rows_by_products(dtype, kind):
    """GᵀG, ‖∇ᴾ‖² of G and of a previous iterate, ⟨G, YᵀB⟩, as numpy computes them."""
    BtB, YtB = random_rhs(7, kind, dtype)
    rng = np.random.default_rng(1)
    prev = (rng.random(YtB.shape) * (rng.random(YtB.shape) < 0.5)).astype(dtype)
    G, (s11, s12, s22, pg, gy, pg_prev) = run_nnls_rows(BtB, YtB, prev)
    G64, Y64, P64 = G.astype(float), YtB.astype(float), prev.astype(float)
    rtol = 1e-12
    np.testing.assert_allclose([[s11, s12], [s12, s22]], G64.T @ G64, rtol=rtol, atol=1e-300)
    np.testing.assert_allclose(gy, np.sum(G64 * Y64), rtol=rtol)
    np.testing.assert_allclose(pg, projected_gradient_sq(G64, G64 @ BtB - Y64), rtol=1e-9,
                               atol=1e-20 * max(1.0, np.abs(Y64).max()) ** 2)
    np.testing.assert_allclose(pg_prev, projected_gradient_sq(P64, P64 @ BtB - Y64), rtol=rtol)
    _, out = run_nnls_rows(BtB, YtB)  # without a previous iterate: 0
    assert out[5] == 0.0


def test_nnls_rows_sums_parts_and_scales():
    """Partial sums are added and column scales applied before rounding to G's dtype."""
    BtB, YtB = random_rhs(3, "generic", np.float64)
    parts = np.stack([0.25 * YtB, 0.75 * YtB])
    gram, tcoef = r2._coefficients(BtB, np.float64)
    G = np.empty_like(YtB)
    prev = np.abs(np.random.default_rng(0).standard_normal(YtB.shape))
    scales = np.array([2.0, 0.5, 3.0, 0.25])
    out = K.nnls_rows(parts, gram, tcoef, scales, G, prev, True)
    Y = YtB * scales[:2]
    np.testing.assert_allclose(G, nnls_rank2(BtB, Y), rtol=1e-12)
    P = prev * scales[2:]
    np.testing.assert_allclose(out[5], projected_gradient_sq(P, P @ BtB - Y), rtol=1e-12)


# -- the fused sparse Z pass ------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_z_rows_fuses_both_products_and_the_solve(dtype):
    rng = np.random.default_rng(0)
    X = sp.random(120, 70, density=0.2, random_state=1, format="csr", dtype=dtype)
    X.data += 0.1
    W = rng.random((70, 2)).astype(dtype)
    scale = np.array([0.5, 2.0])
    Ws = W.astype(float) * scale
    WtW = Ws.T @ Ws
    gram, tcoef = r2._coefficients(WtW, dtype)
    Z = np.full((120, 2), -1.0, dtype=dtype)
    parts = np.full((2, 70, 2), np.nan)  # stale content must be overwritten
    args = (X.indptr, X.indices, X.data, W, np.array([*scale, 1.0, 1.0]), gram, tcoef, Z)
    sums = [K.z_rows(*args, parts[0], 0, 50), K.z_rows(*args, parts[1], 50, 120)]
    s11, s12, s22, pg, zy = (sum(v) for v in zip(*sums))
    Xd = X.toarray().astype(float)
    XW = (Xd @ Ws).astype(dtype)
    Zref = nnls_rank2(WtW, XW)
    tol = 1e-12 if dtype == np.float64 else 2e-6
    np.testing.assert_allclose(Z, Zref, rtol=tol, atol=tol * np.abs(Zref).max())
    Z64 = Z.astype(float)
    np.testing.assert_allclose(parts.sum(axis=0), Xd.T @ Z64, rtol=1e-12)
    np.testing.assert_allclose([[s11, s12], [s12, s22]], Z64.T @ Z64, rtol=1e-12)
    np.testing.assert_allclose(zy, np.sum(Z64 * XW.astype(float)), rtol=1e-12)
    np.testing.assert_allclose(pg, projected_gradient_sq(Z64, Z64 @ WtW - XW.astype(float)),
                               rtol=1e-6, atol=1e-12 * zy)


def test_sum_squares():
    x = np.random.default_rng(0).random(1001).astype(np.float32)
    assert math.isclose(K.sum_squares(x), float(x.astype(float) @ x.astype(float)), rel_tol=1e-12)


# -- rank2_nmf against the numpy loop ---------------------------------------------------
def random_matrix(seed, dtype=np.float64, sparse=True, n=80, d=50):
    X = sp.random(n, d, density=0.25, random_state=seed, format="csr", dtype=dtype)
    return X if sparse else X.toarray()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.parametrize("seed", range(3))
def test_rank2_nmf_matches_numpy_loop(dtype, sparse, seed):
    X = random_matrix(seed, dtype, sparse)
    W0 = np.random.default_rng(seed).random((X.shape[1], 2))
    res = rank2_nmf(X, W_init=W0, max_iter=300, tol=1e-4)
    Z, W, n_iter, history, converged, rel = reference_rank2_nmf(X, W0.astype(dtype), 300, 1e-4)
    assert res.Z.dtype == res.W.dtype == dtype
    assert res.n_iter == n_iter and res.converged == converged
    rtol = 1e-9 if dtype == np.float64 else 1e-4
    np.testing.assert_allclose(res.objective_history, history, rtol=rtol)
    np.testing.assert_allclose(res.W, W, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(res.Z, Z, rtol=rtol, atol=rtol * np.abs(Z).max())
    assert math.isclose(res.projected_gradient, rel, rel_tol=1e-6 if dtype == np.float64 else 0.05)


@pytest.mark.parametrize("dtype", DTYPES)
def test_rank2_nmf_objective_non_increasing_and_reported_exactly(dtype):
    X = random_matrix(4, dtype, n=200, d=90)
    res = rank2_nmf(X, max_iter=80, tol=0, random_state=0)
    history = np.asarray(res.objective_history)
    slack = (1e-12 if dtype == np.float64 else 1e-6) * history[0]
    assert res.n_iter == 80 and np.all(np.diff(history) <= slack)
    Xd = X.toarray().astype(float)
    direct = 0.5 * np.sum((Xd - res.Z.astype(float) @ res.W.astype(float).T) ** 2)
    assert math.isclose(history[-1], direct, rel_tol=1e-9 if dtype == np.float64 else 1e-4)
    np.testing.assert_allclose(np.linalg.norm(res.W.astype(float), axis=0), 1.0, rtol=1e-6)


def test_rank2_nmf_kkt_at_convergence_float32():
    rng = np.random.default_rng(0)
    X = np.zeros((60, 40))
    X[:30, :20] = rng.random((30, 20))
    X[30:, 20:] = rng.random((30, 20))
    X = sp.csr_matrix(X + 0.05 * rng.random((60, 40)), dtype=np.float32)
    res = rank2_nmf(X, max_iter=2000, tol=1e-5, random_state=0)
    assert res.converged
    Xd = X.toarray().astype(float)
    Z, W = res.Z.astype(float), res.W.astype(float)
    scale = np.abs(Xd.T @ Z).max()
    for F, grad in ((W, W @ (Z.T @ Z) - Xd.T @ Z), (Z, Z @ (W.T @ W) - Xd @ W)):
        assert F.min() >= 0 and grad.min() >= -1e-4 * scale
        assert np.abs(F * grad).max() <= 1e-4 * scale * max(F.max(), 1)


def test_rank2_nmf_threaded_equals_single_thread(monkeypatch):
    """Row blocks on threads give the same iterates (up to the order of float64 sums)."""
    X = random_matrix(5, np.float64, n=300, d=120)
    single = rank2_nmf(X, max_iter=200, random_state=2)
    monkeypatch.setattr(r2, "_MIN_NNZ_FOR_THREADS", 0)
    monkeypatch.setenv("SEMNMF_NUM_THREADS", "3")
    threaded = rank2_nmf(X, max_iter=200, random_state=2)
    again = rank2_nmf(X, max_iter=200, random_state=2)
    assert threaded.n_iter == single.n_iter
    np.testing.assert_allclose(threaded.Z, single.Z, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(threaded.W, single.W, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(threaded.Z, again.Z)  # deterministic


def test_rank2_nmf_degenerate_inputs():
    # rank-1 data: the second factor dies out; everything stays finite and matches numpy
    u = np.random.default_rng(0).random(30)
    v = np.random.default_rng(1).random(20)
    X = sp.csr_matrix(np.outer(u, v))
    W0 = np.random.default_rng(2).random((20, 2))
    res = rank2_nmf(X, W_init=W0, max_iter=50, tol=1e-6)
    Z, W, n_iter, history, _, _ = reference_rank2_nmf(X, W0, 50, 1e-6)
    assert res.n_iter == n_iter
    assert np.all(np.isfinite(res.Z)) and np.all(np.isfinite(res.W))
    np.testing.assert_allclose(res.objective_history, history, rtol=1e-9, atol=1e-12)
    # an all-zero start column and empty documents and terms
    X = sp.random(40, 30, density=0.2, random_state=3, format="csr")
    X = sp.csr_matrix(X.multiply(np.arange(40)[:, None] % 5 != 0))
    W0 = np.random.default_rng(3).random((30, 2))
    W0[:, 1] = 0.0
    res = rank2_nmf(X, W_init=W0, max_iter=40, tol=1e-6)
    Z, W, n_iter, history, _, _ = reference_rank2_nmf(X, W0, 40, 1e-6)
    assert res.n_iter == n_iter and np.all(res.Z[::5] == 0)
    np.testing.assert_allclose(res.objective_history, history, rtol=1e-9)


def test_rank2_nmf_other_inputs_and_edge_iterations():
    X = random_matrix(6)
    W0 = np.random.default_rng(6).random((X.shape[1], 2))
    base = rank2_nmf(X, W_init=W0, max_iter=20, tol=0)
    # CSC, integer-valued counts: converted, not rejected
    csc = rank2_nmf(X.tocsc(), W_init=W0, max_iter=20, tol=0)
    np.testing.assert_allclose(csc.Z, base.Z, rtol=1e-12)
    counts = sp.csr_matrix((X > 0.5).astype(np.int64))
    res = rank2_nmf(counts, W_init=W0, max_iter=20, tol=0)
    assert res.Z.dtype == np.float64
    np.testing.assert_allclose(res.objective_history,
                               reference_rank2_nmf(counts, W0, 20, 0)[3], rtol=1e-9)
    # one iteration: unit-norm W; no iteration: W_init back untouched, Z solved from it
    one = rank2_nmf(X, W_init=W0, max_iter=1)
    assert one.n_iter == 1 and len(one.objective_history) == 1
    np.testing.assert_allclose(np.linalg.norm(one.W, axis=0), 1.0)
    zero = rank2_nmf(X, W_init=W0, max_iter=0)
    assert zero.n_iter == 0 and zero.objective_history == []
    np.testing.assert_array_equal(zero.W, W0)
    np.testing.assert_allclose(zero.Z, nnls_rank2(W0.T @ W0, X @ W0), rtol=1e-12)
