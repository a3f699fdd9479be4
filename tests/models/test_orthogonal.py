"""Orthogonal NMF and orthogonal Semantic-NMF (Neurocomputing §6.1; Ding et al. 2006).

The Z update of (7a) is replaced by Z ← Z ⊙ [XW / (Z ZᵀXW)]^½; W, Q and the objective are
unchanged. The objective is not guaranteed to decrease, so these tests check what does
hold: agreement with a dense reference, the fixed-point conditions, diag(ZᵀZ) ≤ 1 at a
fixed point, and columns of Z closer to orthogonal than plain NMF's.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from semnmf.metrics import nmi
from semnmf.models._solvers.frobenius import FrobeniusProblem
from semnmf.models.init import initialize, initialize_context_factor
from semnmf.models.nmf import NMF
from semnmf.models.semantic import SemanticNMF
from conftest import planted_corpus

EPS = 1e-30  # the updates' denominator guard (_solvers.mu.EPSILON)


def random_problem(n=40, d=30, k=3, density=0.3, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=rng, format="csr")
    C = sp.random(d, d, density=density, random_state=rng, format="csr")
    M = (C + C.T).tocsr()
    Z = rng.random((n, k)) + 0.1
    W = rng.random((d, k)) + 0.1
    Q = rng.random((d, k)) + 0.1
    return X, M, Z, W, Q


# -- slow, obvious dense reference -----------------------------------------------------
def reference_step(X, Z, W, M=None, Q=None, lam=0.0):
    """One sweep: ONMF's Z update (Ding et al. 2006), then (7b) and (7c) unchanged."""
    ZZt = Z @ Z.T                                  # n x n: fine on test-sized data
    Z = Z * np.sqrt((X @ W) / (ZZt @ X @ W + EPS))
    if M is None:
        W = W * (X.T @ Z) / (W @ Z.T @ Z + EPS)
        return Z, W, None
    W = W * (X.T @ Z + lam * M @ Q) / (W @ (Z.T @ Z + lam * Q.T @ Q) + EPS)
    Q = Q * (M.T @ W) / (Q @ W.T @ W + EPS)
    return Z, W, Q


def reference_objective(X, Z, W, M=None, Q=None, lam=0.0):
    value = 0.5 * np.sum((X - Z @ W.T) ** 2)
    if M is not None:
        value += lam / 2 * np.sum((M - W @ Q.T) ** 2)
    return value


def off_diagonal_mass(Z):
    """‖G − diag(G)‖_F / ‖G‖_F with G = ZᵀZ: 0 for orthogonal columns, scale-free."""
    G = Z.T @ Z
    return np.linalg.norm(G - np.diag(np.diag(G))) / np.linalg.norm(G)


@pytest.mark.parametrize("with_context", [False, True])
def test_step_matches_dense_reference(with_context):
    X, M, Z, W, Q = random_problem(seed=1)
    lam = 0.7 if with_context else 0.0
    problem = FrobeniusProblem(X, Z.copy(), W.copy(), M=M if with_context else None,
                               Q=Q.copy() if with_context else None, lam=lam, orthogonal=True)
    Xd, Md = X.toarray(), (M.toarray() if with_context else None)
    Zr, Wr, Qr = Z.copy(), W.copy(), (Q.copy() if with_context else None)
    for _ in range(6):
        objective = problem.step()
        Zr, Wr, Qr = reference_step(Xd, Zr, Wr, Md, Qr, lam)
        np.testing.assert_allclose(problem.Z, Zr, rtol=1e-10)
        np.testing.assert_allclose(problem.W, Wr, rtol=1e-10)
        if with_context:
            np.testing.assert_allclose(problem.Q, Qr, rtol=1e-10)
        assert objective == pytest.approx(reference_objective(Xd, Zr, Wr, Md, Qr, lam), rel=1e-9)


def test_estimator_runs_the_orthogonal_update():
    """The flag reaches the problem: NMF(orthogonal=True)'s history is the reference's."""
    X, _, Z, W, _ = random_problem(n=30, d=25, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = NMF(3, orthogonal=True, init=(Z, W), max_iter=8,
                    tol=0).fit(X)
    Xd, Zr, Wr = X.toarray(), Z.copy(), W.copy()
    expected = [reference_objective(Xd, Zr, Wr)]
    for _ in range(8):
        Zr, Wr, _ = reference_step(Xd, Zr, Wr)
        expected.append(reference_objective(Xd, Zr, Wr))
    np.testing.assert_allclose(model.objective_history_, expected, rtol=1e-9)
    # the final normalization: Z D⁻¹, W D
    np.testing.assert_allclose(model.components_.T, Wr * np.linalg.norm(Zr, axis=0), rtol=1e-9)


@pytest.mark.parametrize("with_context", [False, True])
def test_fixed_point_conditions_at_convergence(with_context):
    """Z ⊙ (Z ZᵀXW − XW) = 0, diag(ZᵀZ ZᵀXW) = diag(ZᵀXW) so diag(ZᵀZ) ≤ 1, W's KKT."""
    X, _ = planted_corpus(n_per=15, k=3, d_per=8, seed=3)
    Xd = X.toarray()
    rng = np.random.default_rng(0)
    C = sp.random(Xd.shape[1], Xd.shape[1], density=0.3, random_state=rng)
    M = (C + C.T).toarray()
    lam = 0.5 if with_context else 0.0
    Z, W = initialize(X, 3, "random", 0)
    Q = initialize_context_factor(M.T @ W, W) if with_context else None
    problem = FrobeniusProblem(Xd, Z, W, M=M if with_context else None, Q=Q, lam=lam,
                               orthogonal=True)
    for _ in range(1500 if with_context else 300):
        problem.step()
    Z, W = problem.Z, problem.W
    XW = Xd @ W
    grad_Z = Z @ (Z.T @ XW) - XW                   # the constrained gradient of the update
    assert np.abs(Z * grad_Z).max() < 1e-5 * np.abs(Z * XW).max()
    assert grad_Z.min() > -1e-5 * np.abs(XW).max()
    G, P = Z.T @ Z, Z.T @ XW
    np.testing.assert_allclose(np.diag(G @ P), np.diag(P), rtol=1e-5)
    assert np.all(np.diag(G) <= 1 + 1e-5)
    assert np.all(np.diag(G) > 0.9)                # scale fixed near the constraint ZᵀZ = I
    if with_context:
        grad_W = W @ (Z.T @ Z + lam * problem.Q.T @ problem.Q) - (Xd.T @ Z + lam * M @ problem.Q)
        scale = np.abs(W * (Xd.T @ Z + lam * M @ problem.Q)).max()
    else:
        grad_W = W @ (Z.T @ Z) - Xd.T @ Z
        scale = np.abs(W * (Xd.T @ Z)).max()
    assert np.abs(W * grad_W).max() < 1e-5 * scale
    assert grad_W.min() > -1e-5 * np.abs(Xd.T @ Z).max()


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_columns_closer_to_orthogonal_than_nmf(seed):
    """Same start, same sweeps: ONMF's ZᵀZ has less off-diagonal mass than NMF's, and less
    than at the start."""
    X, _, Z, W, _ = random_problem(n=60, d=40, k=4, seed=seed)
    common = dict(init=(Z, W), max_iter=200, tol=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        plain = NMF(4, **common).fit_transform(X)
        orthogonal = NMF(4, orthogonal=True, **common).fit_transform(X)
    assert off_diagonal_mass(orthogonal) < off_diagonal_mass(plain)
    assert off_diagonal_mass(orthogonal) < 0.5 * off_diagonal_mass(Z)


def test_semantic_lambda_zero_equals_orthogonal_nmf():
    X, M, Z, W, _ = random_problem(n=50, d=35, k=3, seed=4)
    common = dict(orthogonal=True, init=(Z, W), max_iter=60, tol=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        onmf = NMF(3, **common).fit(X)
        osnmf = SemanticNMF(3, lam=0.0, **common).fit(X, M=M)
    np.testing.assert_allclose(osnmf.objective_history_, onmf.objective_history_, rtol=1e-12)
    np.testing.assert_allclose(osnmf.components_, onmf.components_, rtol=1e-12)
    np.testing.assert_array_equal(osnmf.labels_, onmf.labels_)


def test_orthogonal_semantic_differs_from_plain_semantic():
    """λ > 0 with orthogonal=True is its own model, not silently the plain one."""
    X, M, Z, W, _ = random_problem(n=50, d=35, k=3, seed=5)
    common = dict(lam=1.0, init=(Z, W), max_iter=30, tol=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        plain = SemanticNMF(3, **common).fit(X, M=M)
        orthogonal = SemanticNMF(3, orthogonal=True, **common).fit(X, M=M)
    assert not np.allclose(plain.components_, orthogonal.components_, rtol=1e-3)
    assert orthogonal.context_components_.shape == (3, 35)


@pytest.mark.parametrize("Estimator", [NMF, SemanticNMF])
@pytest.mark.parametrize("init", ["skmeans", "random"])
def test_recovers_planted_clusters(Estimator, init):
    X, y = planted_corpus(seed=2)
    labels = Estimator(3, orthogonal=True, init=init, n_init=2, random_state=0).fit_predict(X)
    assert nmi(y, labels) > 0.95


def test_determinism_and_float32():
    X, _ = planted_corpus(seed=4)
    a = SemanticNMF(3, orthogonal=True, init="random", random_state=7).fit(X)
    b = SemanticNMF(3, orthogonal=True, init="random", random_state=7).fit(X)
    np.testing.assert_array_equal(a.components_, b.components_)
    np.testing.assert_array_equal(a.objective_history_, b.objective_history_)
    Z32 = NMF(3, orthogonal=True, random_state=0).fit_transform(X.astype(np.float32))
    Z64 = NMF(3, orthogonal=True, random_state=0).fit_transform(X)
    assert Z32.dtype == np.float32
    np.testing.assert_array_equal(Z32.argmax(axis=1), Z64.argmax(axis=1))


def test_transform_is_per_document():
    """transform uses (7a) with W frozen, so a document's row does not depend on the
    other documents transformed with it (the orthogonal update would couple them)."""
    X, y = planted_corpus(seed=5)
    model = NMF(3, orthogonal=True, random_state=0).fit(X)
    full = model.transform(X)
    part = model.transform(X[:7])
    np.testing.assert_allclose(part, full[:7], rtol=1e-6, atol=1e-12)
    assert np.mean(full.argmax(axis=1) == model.labels_) > 0.95


def test_bad_parameters():
    X, _ = planted_corpus()
    with pytest.raises(ValueError, match="Frobenius loss only"):
        SemanticNMF(3, orthogonal=True, loss="kl").fit(X)
    negative = X.copy()
    negative.data[0] = -1.0
    with pytest.raises(ValueError, match="negative"):
        NMF(3, orthogonal=True).fit(negative)
    with pytest.raises(ValueError, match="larger than the number of documents"):
        NMF(500, orthogonal=True).fit(X)
