"""SeNMF (SIGIR 2017): X ≈ ZWᵀ and M ≈ WSWᵀ with shared W, updates (7a)-(7c)."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from semnmf.metrics import nmi
from semnmf.models.init import initialize
from semnmf.models.nmf import NMF
from semnmf.models.semantic import effective_lambda
from semnmf.models.senmf import MAX_DAMPING, SeNMF, SeNMFProblem, initial_core
from semnmf.text.context import word_context
from conftest import planted_corpus

EPS = 1e-30  # the updates' denominator guard (_solvers.mu.EPSILON)


def random_problem(n=40, d=30, k=3, density=0.3, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=rng, format="csr")
    C = sp.random(d, d, density=density, random_state=rng, format="csr")
    M = (C + C.T).tocsr()
    Z = scale * (rng.random((n, k)) + 0.1)
    W = scale * (rng.random((d, k)) + 0.1)
    S = rng.random((k, k))
    return X, M, Z, W, S + S.T


# -- slow, obvious dense reference of eq. (3) and (7a)-(7c) ------------------------------
def reference_objective(X, M, Z, W, S, lam):
    return 0.5 * np.sum((X - Z @ W.T) ** 2) + lam / 2 * np.sum((M - W @ S @ W.T) ** 2)


def update_Z(X, Z, W):                                              # (7a)
    return Z * (X @ W) / (Z @ W.T @ W + EPS)


def update_S(M, W, S):                                              # (7c)
    return S * (W.T @ M @ W) / (W.T @ W @ S @ W.T @ W + EPS)


def update_W(X, M, Z, W, S, lam, damped=True):                      # (7b), safeguarded
    ratio = (X.T @ Z + 2 * lam * M @ W @ S) / (W @ (Z.T @ Z + 2 * lam * S @ W.T @ W @ S) + EPS)
    if not damped:
        return W * ratio
    before = reference_objective(X, M, Z, W, S, lam)
    slack = 64 * np.finfo(float).eps * (np.sum(X ** 2) + lam * np.sum(M ** 2))
    for eta in 0.5 ** np.arange(MAX_DAMPING + 1):
        if reference_objective(X, M, Z, W * ratio ** eta, S, lam) <= before + slack:
            return W * ratio ** eta
    return W


def reference_step(X, M, Z, W, S, lam, damped=True):
    Z = update_Z(X, Z, W)
    W = update_W(X, M, Z, W, S, lam, damped)
    return Z, W, update_S(M, W, S)


def reference_core(M, W):
    """S = α (I + 10⁻³ 11ᵀ), α = argmin ‖M − α W S Wᵀ‖²."""
    S = np.eye(W.shape[1]) + 1e-3
    WSW = W @ S @ W.T
    return S * np.sum(M * WSW) / np.sum(WSW * WSW)


@pytest.mark.parametrize("case", ["plain", "damped"])
def test_step_matches_dense_reference(case):
    """Sweep by sweep against the reference; the "damped" case starts where the full
    step (7b) raises F (λ = 100, factors 10x too small), so the safeguard runs."""
    if case == "plain":
        X, M, Z, W, S = random_problem(seed=1)
        lam = 0.8
    else:
        X, M, Z, W, S = random_problem(n=20, d=15, k=3, seed=0, scale=0.1)
        lam = 100.0
    Xd, Md = X.toarray(), M.toarray()
    problem = SeNMFProblem(X, Z.copy(), W.copy(), M, lam=lam, S=S.copy())
    Zr, Wr, Sr = Z.copy(), W.copy(), S.copy()
    undamped_rises = 0
    for _ in range(8):
        before = reference_objective(Xd, Md, Zr, Wr, Sr, lam)
        Zu = update_Z(Xd, Zr, Wr)
        undamped = update_W(Xd, Md, Zu, Wr, Sr, lam, damped=False)
        undamped_rises += reference_objective(Xd, Md, Zu, undamped, Sr, lam) > \
            reference_objective(Xd, Md, Zu, Wr, Sr, lam)
        objective = problem.step()
        Zr, Wr, Sr = reference_step(Xd, Md, Zr, Wr, Sr, lam)
        np.testing.assert_allclose(problem.Z, Zr, rtol=1e-9)
        np.testing.assert_allclose(problem.W, Wr, rtol=1e-9)
        np.testing.assert_allclose(problem.S, Sr, rtol=1e-9)
        assert objective == pytest.approx(reference_objective(Xd, Md, Zr, Wr, Sr, lam), rel=1e-9)
        assert objective <= before * (1 + 1e-12)
    if case == "damped":
        assert undamped_rises > 0 and problem.n_damped == undamped_rises
    else:
        assert undamped_rises == 0 and problem.n_damped == 0


def test_initial_core_is_the_least_squares_scaled_identity():
    X, M, Z, W, _ = random_problem(seed=2)
    Md = M.toarray()
    S = initial_core(W.T @ (Md @ W), W.T @ W)
    np.testing.assert_allclose(S, reference_core(Md, W), rtol=1e-10)
    assert (S > 0).all() and np.all(np.diag(S) > 100 * (S - np.diag(np.diag(S))).max())
    error = [np.sum((Md - f * W @ S @ W.T) ** 2) for f in (0.99, 1.0, 1.01)]
    assert error[1] < error[0] and error[1] < error[2]


def test_random_start_is_not_trapped():
    """From random starts SeNMF finds the planted partition (the unconstrained
    least-squares start of S, tried first, stalled there at NMI < 0.7)."""
    X, y = planted_corpus(seed=2)
    for seed in range(3):
        assert nmi(y, SeNMF(3, init="random", random_state=seed).fit_predict(X)) > 0.95


@pytest.mark.parametrize("scale", [0.01, 1.0, 30.0])
@pytest.mark.parametrize("lam", [0.1, 10.0, 1e4])
def test_z_and_s_updates_never_increase_the_objective(scale, lam):
    """SIGIR's proof: (7a) (Lee & Seung) and (7c) (Ding et al. 2006, Thm 7) each decrease F,
    from any start; checked on the reference updates, which the fast ones match."""
    X, M, Z, W, S = random_problem(n=20, d=15, k=3, seed=int(lam) % 7, scale=scale)
    Xd, Md = X.toarray(), M.toarray()
    for _ in range(60):
        f0 = reference_objective(Xd, Md, Z, W, S, lam)
        Z = update_Z(Xd, Z, W)
        f1 = reference_objective(Xd, Md, Z, W, S, lam)
        W = update_W(Xd, Md, Z, W, S, lam)
        f2 = reference_objective(Xd, Md, Z, W, S, lam)
        S = update_S(Md, W, S)
        f3 = reference_objective(Xd, Md, Z, W, S, lam)
        assert f1 <= f0 * (1 + 1e-12) and f3 <= f2 * (1 + 1e-12)


@pytest.mark.parametrize("lam", [1.0, 10.0, 1000.0])
@pytest.mark.parametrize("seed", [0, 1])
def test_objective_non_increasing_every_iteration(lam, seed):
    X, M, *_ = random_problem(n=60, d=40, k=4, seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = SeNMF(4, lam=lam, init="random", max_iter=120, tol=0, random_state=seed).fit(X, M=M)
    history = model.objective_history_
    assert len(history) == 121
    assert np.all(np.diff(history) <= 1e-12 * history[:-1]), np.diff(history).max()
    assert history[-1] < history[0]


def test_kkt_conditions_at_convergence():
    """Z ⊙ ∇_Z F, W ⊙ ∇_W F, S ⊙ ∇_S F ≈ 0 and the gradients ≳ 0 (eq. 6a-6c)."""
    X, _ = planted_corpus(n_per=12, k=3, d_per=8, seed=3)
    Xd = X.toarray()
    occurrence = X.copy()
    occurrence.data[:] = 1
    M = word_context(counts=occurrence, context="document", association="sppmi").toarray()
    lam = effective_lambda(1.0, Xd, M)
    Z, W = initialize(X, 3, "random", 0)
    problem = SeNMFProblem(Xd, Z, W, M, lam=lam)
    for _ in range(400):
        problem.step()
    Z, W, S = problem.Z, problem.W, problem.S
    G = W.T @ W
    grads = {
        "Z": (Z, Z @ G - Xd @ W, Xd @ W),
        "W": (W, W @ (Z.T @ Z + 2 * lam * S @ G @ S) - (Xd.T @ Z + 2 * lam * M @ W @ S),
              Xd.T @ Z + 2 * lam * M @ W @ S),
        "S": (S, G @ S @ G - W.T @ M @ W, W.T @ M @ W),
    }
    for name, (factor, grad, positive_part) in grads.items():
        assert np.abs(factor * grad).max() < 1e-6 * np.abs(factor * positive_part).max(), name
        assert grad.min() > -1e-6 * np.abs(positive_part).max(), name
    np.testing.assert_allclose(S, S.T, rtol=1e-12)


def test_lambda_zero_gives_nmf():
    X, M, Z, W, _ = random_problem(n=50, d=35, k=3, seed=4)
    common = dict(init=(Z, W), max_iter=60, tol=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        nmf = NMF(3, **common).fit(X)
        senmf = SeNMF(3, lam=0.0, **common).fit(X, M=M)
    np.testing.assert_allclose(senmf.objective_history_, nmf.objective_history_, rtol=1e-12)
    np.testing.assert_allclose(senmf.components_, nmf.components_, rtol=1e-12)
    np.testing.assert_array_equal(senmf.labels_, nmf.labels_)


def test_fitted_factors_reconstruct_both_matrices():
    """After the final normalization Z Wᵀ and W S Wᵀ are unchanged: the reported errors
    are those of (Z, components_.T, context_core_)."""
    X, y = planted_corpus(seed=5)
    occurrence = X.copy()
    occurrence.data[:] = 1
    M = word_context(counts=occurrence, context="document", association="sppmi", shift=2)
    model = SeNMF(3, random_state=0)
    Z = model.fit_transform(X, M=M)
    W, S = model.components_.T, model.context_core_
    np.testing.assert_allclose(np.linalg.norm(Z, axis=0), 1.0)
    np.testing.assert_allclose(S, S.T, rtol=1e-12)
    assert S.shape == (3, 3) and (S >= 0).all()
    error = np.linalg.norm(X.toarray() - Z @ W.T)
    assert error == pytest.approx(model.reconstruction_err_, rel=1e-6)
    assert np.linalg.norm(M.toarray() - W @ S @ W.T) == pytest.approx(model.context_err_, rel=1e-6)
    assert model.objective_ == pytest.approx(
        model.reconstruction_err_ ** 2 / 2 + model.lambda_ * model.context_err_ ** 2 / 2, rel=1e-9)
    assert model.lambda_ == pytest.approx(10.0 * X.multiply(X).sum() / M.multiply(M).sum())
    np.testing.assert_array_equal(model.labels_, Z.argmax(axis=1))


def test_default_context_is_document_level_sppmi():
    X, y = planted_corpus(seed=6)
    occurrence = X.copy()
    occurrence.data[:] = 1
    M = word_context(counts=occurrence, context="document", association="sppmi", shift=3)
    implicit = SeNMF(3, shift=3, random_state=0).fit(X)
    explicit = SeNMF(3, shift=3, random_state=0).fit(X, M=M)
    np.testing.assert_array_equal(implicit.components_, explicit.components_)
    assert implicit.lambda_ == explicit.lambda_
    assert nmi(y, implicit.labels_) > 0.95


def test_non_symmetric_context_uses_its_symmetric_part():
    """‖M − WSWᵀ‖² = ‖(M + Mᵀ)/2 − WSWᵀ‖² + const: same factors as with the symmetric part."""
    X, _, Z, W, _ = random_problem(n=40, d=30, seed=7)
    rng = np.random.default_rng(7)
    M = sp.random(30, 30, density=0.3, random_state=rng, format="csr")
    common = dict(lam=1.0, lam_scale="absolute", init=(Z, W),
                  max_iter=20, tol=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        raw = SeNMF(3, **common).fit(X, M=M)
        symmetric = SeNMF(3, **common).fit(X, M=(M + M.T) / 2)
    np.testing.assert_allclose(raw.components_, symmetric.components_, rtol=1e-12)
    np.testing.assert_allclose(raw.context_core_, symmetric.context_core_, rtol=1e-12)


@pytest.mark.parametrize("init", ["skmeans", "random", "nndsvda"])
def test_recovers_planted_clusters(init):
    X, y = planted_corpus(seed=2)
    labels = SeNMF(3, init=init, n_init=2, random_state=0).fit_predict(X)
    assert nmi(y, labels) > 0.95


def test_determinism_and_float32():
    X, _ = planted_corpus(seed=8)
    a = SeNMF(3, init="random", random_state=7).fit(X)
    b = SeNMF(3, init="random", random_state=7).fit(X)
    np.testing.assert_array_equal(a.components_, b.components_)
    np.testing.assert_array_equal(a.context_core_, b.context_core_)
    model32 = SeNMF(3, random_state=0)
    Z32 = model32.fit_transform(X.astype(np.float32))
    assert Z32.dtype == np.float32 and model32.components_.dtype == np.float32
    assert model32.context_core_.dtype == np.float32
    model64 = SeNMF(3, random_state=0).fit(X)
    np.testing.assert_array_equal(model32.labels_, model64.labels_)
    np.testing.assert_allclose(model32.components_, model64.components_, rtol=1e-3, atol=1e-4)


def test_transform_and_predict():
    X, _ = planted_corpus(seed=9)
    model = SeNMF(3, random_state=0).fit(X)
    Z_new = model.transform(X)
    assert np.mean(Z_new.argmax(axis=1) == model.labels_) > 0.95
    np.testing.assert_array_equal(model.predict(X[:5]), Z_new[:5].argmax(axis=1))


# Bad parameter values: one table for every estimator in tests/test_common.py; these
# need the data or are not finite.
@pytest.mark.parametrize("bad,match", [
    (dict(n_components=1000), "larger than the number of documents"),
    (dict(n_components=3, lam=np.nan), "lam"),
    (dict(n_components=3, shift=np.inf), "shift"),
])
def test_bad_parameters(bad, match):
    X, _ = planted_corpus()
    with pytest.raises(ValueError, match=match):
        SeNMF(**bad).fit(X)


def test_bad_context_matrices():
    X, _ = planted_corpus()
    d = X.shape[1]
    with pytest.raises(ValueError, match=r"M has shape \(45, 30\).*square word-word"):
        SeNMF(3).fit(X, M=sp.random(d, 30, density=0.2, format="csr"))
    with pytest.raises(ValueError, match="M has shape"):
        SeNMF(3).fit(X, M=sp.eye(d + 1))
    negative = sp.eye(d, format="csr")
    negative.data[0] = -1.0
    with pytest.raises(ValueError, match="negative"):
        SeNMF(3).fit(X, M=negative)
    nan = np.eye(d)
    nan[1, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        SeNMF(3).fit(X, M=nan)
    with pytest.warns(UserWarning, match="M is all zero"):
        model = SeNMF(3, random_state=0).fit(X, M=sp.csr_matrix((d, d)))
    assert model.lambda_ == 0.0
