"""Projective NMF X ≈ Z ZᵀX (Yuan & Oja 2005; Yang & Oja 2010): properties, reference, API."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from semnmf.metrics import nmi
from semnmf.models.init import initialize
from semnmf.models.pnmf import ProjectiveNMF, ProjectiveProblem
from conftest import planted_corpus

EPS = 1e-30  # the updates' denominator guard (_solvers.mu.EPSILON)


def random_problem(n=40, d=30, k=3, density=0.3, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=rng, format="csr")
    return X, rng.random((n, k)) + 0.1


# -- slow, obvious dense reference (forms A = X Xᵀ, n x n) ------------------------------
def reference_objective(X, Z):
    return 0.5 * np.sum((X - Z @ Z.T @ X) ** 2)


def reference_rescale(X, Z):
    A = X @ X.T
    return Z * np.sqrt(np.trace(Z.T @ A @ Z) / np.trace(Z.T @ Z @ Z.T @ A @ Z))


def reference_step(X, Z):
    A = X @ X.T
    return Z * np.cbrt(2 * A @ Z / (Z @ Z.T @ A @ Z + A @ Z @ Z.T @ Z + EPS))


def gradient(X, Z):
    """∇ of ½‖X − ZZᵀX‖²: Z ZᵀAZ + AZ ZᵀZ − 2AZ."""
    A = X @ X.T
    return Z @ Z.T @ A @ Z + A @ Z @ Z.T @ Z - 2 * A @ Z


@pytest.mark.parametrize("sparse", [True, False])
def test_step_matches_dense_reference(sparse):
    X, Z = random_problem(seed=1)
    Xd = X.toarray()
    problem = ProjectiveProblem(X if sparse else Xd, Z.copy())
    Zr = reference_rescale(Xd, Z)
    np.testing.assert_allclose(problem.Z, Zr, rtol=1e-12)
    assert problem.objective() == pytest.approx(reference_objective(Xd, Zr), rel=1e-10)
    for _ in range(6):
        objective = problem.step()
        Zr = reference_step(Xd, Zr)
        np.testing.assert_allclose(problem.Z, Zr, rtol=1e-10)
        assert objective == pytest.approx(reference_objective(Xd, Zr), rel=1e-9)
    np.testing.assert_allclose(problem.W, Xd.T @ Zr, rtol=1e-10)


def test_objective_is_kmeans_at_normalized_indicators():
    """With Z the normalized cluster indicator, ½‖X − ZZᵀX‖² is half the k-means SSE."""
    X, y = planted_corpus(n_per=10, seed=1)
    Xd = X.toarray()
    labels = np.random.default_rng(0).permutation(y)     # any partition
    Z = np.zeros((Xd.shape[0], 3))
    Z[np.arange(Xd.shape[0]), labels] = 1.0
    Z /= np.sqrt(Z.sum(axis=0))
    sse = sum(np.sum((Xd[labels == c] - Xd[labels == c].mean(axis=0)) ** 2) for c in range(3))
    assert ProjectiveProblem(X, Z.copy(), rescale=False).objective() == pytest.approx(sse / 2)


def test_rescale_is_the_least_squares_scalar():
    X, Z = random_problem(seed=2)
    Xd = X.toarray()
    Zs = ProjectiveProblem(X, Z.copy()).Z
    best = reference_objective(Xd, Zs)
    assert best <= reference_objective(Xd, Z)
    for factor in (0.99, 1.01):
        assert reference_objective(Xd, factor * Zs) > best


@pytest.mark.parametrize("init", ["random", "skmeans"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_objective_non_increasing_every_iteration(init, seed):
    """The η = 1/3 update minimizes an auxiliary function (pnmf module docstring)."""
    X, _ = random_problem(n=60, d=40, k=4, seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = ProjectiveNMF(4, init=init, max_iter=150, tol=0, random_state=seed).fit(X)
    history = model.objective_history_
    assert len(history) == 151
    assert np.all(np.diff(history) <= 1e-12 * history[:-1]), np.diff(history).max()
    assert history[-1] < history[0]


def test_kkt_conditions_at_convergence():
    """Z ⊙ ∇F ≈ 0 and ∇F ≳ 0 at convergence."""
    X, _ = planted_corpus(n_per=12, k=3, d_per=8, seed=3)
    Xd = X.toarray()
    Z, _ = initialize(X, 3, "random", 0)
    problem = ProjectiveProblem(Xd, Z)
    for _ in range(2000):
        problem.step()
    Z = problem.Z
    grad = gradient(Xd, Z)
    AZ = Xd @ (Xd.T @ Z)
    assert np.abs(Z * grad).max() < 1e-6 * np.abs(Z * AZ).max()
    assert grad.min() > -1e-6 * np.abs(AZ).max()


def test_fit_reconstruction_and_components():
    """components_ = (XᵀZ)ᵀ rescaled with Z's normalization, so Z_norm · components_ = Z ZᵀX."""
    X, y = planted_corpus(seed=4)
    model = ProjectiveNMF(3, random_state=0)
    Z = model.fit_transform(X)
    np.testing.assert_allclose(np.linalg.norm(Z, axis=0), 1.0)
    reconstruction = Z @ model.components_
    error = np.linalg.norm(X.toarray() - reconstruction)
    assert error == pytest.approx(model.reconstruction_err_, rel=1e-6)
    assert model.objective_ == pytest.approx(model.reconstruction_err_ ** 2 / 2, rel=1e-9)
    np.testing.assert_array_equal(model.labels_, Z.argmax(axis=1))
    assert (Z >= 0).all() and (model.components_ >= 0).all()


@pytest.mark.parametrize("init", ["skmeans", "random", "nndsvda"])
def test_recovers_planted_clusters(init):
    X, y = planted_corpus(seed=2)
    model = ProjectiveNMF(3, init=init, n_init=2, random_state=0)
    Z = model.fit_transform(X)
    assert nmi(y, model.labels_) > 0.95
    # PNMF's factor comes out nearly orthogonal (Yuan, Yang & Oja 2009)
    G = Z.T @ Z
    assert np.linalg.norm(G - np.diag(np.diag(G))) < 0.1 * np.linalg.norm(G)


def test_custom_start_and_n_init():
    X, y = planted_corpus(seed=5)
    Z0 = np.full((X.shape[0], 3), 0.2)
    Z0[np.arange(X.shape[0]), y] += 1.0
    model = ProjectiveNMF(3, init=Z0).fit(X)
    assert nmi(y, model.labels_) == pytest.approx(1.0)
    Xd = X.toarray()
    assert model.objective_history_[0] == pytest.approx(
        reference_objective(Xd, reference_rescale(Xd, Z0)), rel=1e-10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        single = ProjectiveNMF(3, init="random", max_iter=20,
                               random_state=np.random.RandomState(0)).fit(X)
        best = ProjectiveNMF(3, init="random", max_iter=20, n_init=4,
                             random_state=np.random.RandomState(0)).fit(X)
    # the first restart draws the single run's start from the shared RNG; the best is kept
    assert best.objective_ <= single.objective_


def test_determinism_and_float32():
    X, _ = planted_corpus(seed=6)
    a = ProjectiveNMF(3, init="random", random_state=3).fit(X)
    b = ProjectiveNMF(3, init="random", random_state=3).fit(X)
    np.testing.assert_array_equal(a.components_, b.components_)
    np.testing.assert_array_equal(a.objective_history_, b.objective_history_)
    Z32 = ProjectiveNMF(3, random_state=0).fit_transform(X.astype(np.float32))
    Z64 = ProjectiveNMF(3, random_state=0).fit_transform(X)
    assert Z32.dtype == np.float32
    np.testing.assert_allclose(Z32, Z64, rtol=1e-3, atol=1e-4)


def test_transform_and_predict():
    X, y = planted_corpus(seed=7)
    model = ProjectiveNMF(3, random_state=0).fit(X)
    Z_new = model.transform(X)
    assert Z_new.shape == (X.shape[0], 3) and (Z_new >= 0).all()
    assert np.mean(Z_new.argmax(axis=1) == model.labels_) > 0.95
    np.testing.assert_array_equal(model.predict(X[:5]), Z_new[:5].argmax(axis=1))
    with pytest.raises(ValueError, match="features, but ProjectiveNMF is expecting"):
        model.transform(X[:, :10])


def test_empty_documents_get_minus_one():
    X, _ = planted_corpus(seed=8)
    X = sp.vstack([X, sp.csr_matrix((2, X.shape[1]))]).tocsr()
    with pytest.warns(UserWarning, match="no term"):
        labels = ProjectiveNMF(3, random_state=0).fit_predict(X)
    assert (labels[-2:] == -1).all() and (labels[:-2] >= 0).all()


# Bad parameter values: one table for every estimator in tests/test_common.py.
@pytest.mark.parametrize("bad,match", [
    (dict(n_components=1000), "larger than the number of documents"),
    (dict(n_components=3, init=np.ones((5, 3))), r"init \(Z\) has shape \(5, 3\)"),
    (dict(n_components=3, init=-np.ones((90, 3))), "finite and non-negative"),
])
def test_bad_starts(bad, match):
    X, _ = planted_corpus()
    with pytest.raises(ValueError, match=match):
        ProjectiveNMF(**bad).fit(X)


def test_bad_input_matrices():
    X, _ = planted_corpus()
    negative = X.copy()
    negative.data[0] = -1.0
    with pytest.raises(ValueError, match="negative"):
        ProjectiveNMF(3).fit(negative)
    nan = X.toarray()
    nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN|infinity"):
        ProjectiveNMF(3).fit(nan)
    with pytest.raises(ValueError, match="every row of X is zero"):
        ProjectiveNMF(2).fit(sp.csr_matrix((5, 4)))
