"""GTNMF (game-theoretic refinement): a per-player loop of GT eq. 5-7 against the
vectorized replicator dynamics, the game-theoretic properties (simplex invariance, Nash
equilibria are rest points, Baum-Eagon monotonicity of the total payoff), recovery of
planted mislabelled points, and input errors. Its kNN graphs are tested in tests/graphs."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from semnmf import NMF, accuracy

from conftest import blobs, random_symmetric_graph, text_like, transcribed_q
from semnmf.refine import (GTNMF, knn_graph, normalized_cut_scaling, refine, replicator_dynamics)


# -- data -----------------------------------------------------------------------------
def planted_memberships(y, k, flip=0.10, seed=0):
    """Soft memberships agreeing with y except for a fraction ``flip`` of documents,
    whose argmax is a wrong cluster (the right one keeps a smaller weight)."""
    rng = np.random.default_rng(seed)
    n = y.size
    Z = 0.05 + 0.1 * rng.random((n, k))
    Z[np.arange(n), y] += 0.6
    flipped = rng.choice(n, int(round(flip * n)), replace=False)
    wrong = (y[flipped] + rng.integers(1, k, flipped.size)) % k
    Z[flipped, wrong] += 0.9
    return Z, flipped


def cliques(sizes, weight=1.0):
    """Block-diagonal graph of disconnected cliques (no self-loops)."""
    blocks = [weight * (np.ones((s, s)) - np.eye(s)) for s in sizes]
    return sp.csr_matrix(sp.block_diag(blocks))


# -- naive references -----------------------------------------------------------------
def reference_replicator_step(A, X):
    """One step of GT eq. 5-7, player by player, pure strategy by pure strategy."""
    A = A.toarray() if sp.issparse(A) else np.asarray(A)
    n, k = X.shape
    new = X.copy()
    for i in range(n):
        pure = [sum(A[i, j] * X[j, h] for j in range(n)) for h in range(k)]   # eq. 6
        mean = sum(X[i, h] * pure[h] for h in range(k))                       # eq. 7
        if mean > 0:
            new[i] = [X[i, h] * pure[h] / mean for h in range(k)]             # eq. 5
    return new


# -- replicator dynamics ----------------------------------------------------------------
def test_replicator_step_matches_player_by_player_reference():
    rng = np.random.default_rng(1)
    A = random_symmetric_graph(25, seed=1)
    A = sp.csr_matrix(A + sp.random(25, 25, density=0.05, random_state=rng))  # non-symmetric too
    Z = rng.random((25, 4))
    Z[3, :2] = 0.0                                     # zeros stay zero (eq. 5 is multiplicative)
    X0 = Z / Z.sum(axis=1, keepdims=True)
    X1, n_iter, history, _ = replicator_dynamics(A, Z, tol=0, max_iter=1)
    np.testing.assert_allclose(X1, reference_replicator_step(A, X0), rtol=1e-12, atol=1e-15)
    assert n_iter == 1 and history.shape == (1,)
    assert np.isclose(history[0], np.linalg.norm(X1 - X0))
    X3, *_ = replicator_dynamics(A, Z, tol=0, max_iter=3)
    expected = X0
    for _ in range(3):
        expected = reference_replicator_step(A, expected)
    np.testing.assert_allclose(X3, expected, rtol=1e-10, atol=1e-14)


def test_replicator_keeps_strategies_on_simplex_every_iteration():
    rng = np.random.default_rng(2)
    A = normalized_cut_scaling(random_symmetric_graph(80, seed=2))
    Z = rng.random((80, 5)) ** 3                       # far from uniform, some tiny entries
    Z[rng.random((80, 5)) < 0.2] = 0.0
    Z[7] = 0.0                                          # all-zero row: uniform start
    seen = []

    def check(t, X):
        assert np.all(X >= 0)
        np.testing.assert_allclose(X.sum(axis=1), 1.0, atol=1e-12)
        seen.append(t)

    X, n_iter, _, _ = replicator_dynamics(A, Z, tol=0, max_iter=60, callback=check)
    assert seen == list(range(1, 61)) and n_iter == 60
    nonempty = Z.sum(axis=1) > 0                         # zeros of non-empty rows stay 0
    assert np.all(X[nonempty][Z[nonempty] == 0] == 0)
    # the dynamics did move: strategies became far more decided than at the start
    assert X.max(axis=1).mean() > (Z[nonempty] / Z[nonempty].sum(1, keepdims=True)).max(1).mean() + 0.1


def test_isolated_player_and_zero_payoff_keep_their_strategy():
    W = np.zeros((6, 6))
    W[:3, :3] = 1 - np.eye(3)            # clique 0-1-2
    W[3, 4] = W[4, 3] = 1.0              # 3-4 play opposite pure strategies: zero payoff
    A = sp.csr_matrix(W)                 # player 5 is isolated
    X0 = np.array([[1.0, 0.0], [.6, .4], [.7, .3], [1.0, 0.0], [0.0, 1.0], [.3, .7]])
    X, *_ = replicator_dynamics(A, X0, tol=0, max_iter=5)
    np.testing.assert_array_equal(X[3:], X0[3:])       # guarded division: nothing moves
    np.testing.assert_array_equal(X[0], [1.0, 0.0])    # pure strategies are rest points
    assert X[2, 0] > 0.9 and X[1, 0] > 0.9             # ...but the mixed players moved
    assert np.all(np.isfinite(X))


def test_nash_equilibria_are_rest_points():
    # disconnected cliques, every player of a clique plays its clique's cluster
    A = normalized_cut_scaling(cliques([4, 5, 6]))
    labels = np.repeat([0, 1, 2], [4, 5, 6])
    pure = np.eye(3)[labels]
    X, n_iter, history, converged = replicator_dynamics(A, pure, tol=1e-12, max_iter=50)
    np.testing.assert_array_equal(X, pure)
    assert converged and n_iter == 1 and history[0] == 0.0
    # a mixed Nash equilibrium: each clique plays the uniform mix over two clusters, so
    # both pure strategies of the support earn the same payoff (and the third earns 0)
    mixed = np.zeros((15, 3))
    mixed[:4, [0, 1]] = 0.5
    mixed[4:9, [1, 2]] = 0.5
    mixed[9:, [0, 2]] = 0.5
    X, n_iter, history, converged = replicator_dynamics(A, mixed, tol=1e-12, max_iter=50)
    np.testing.assert_allclose(X, mixed, atol=1e-15)
    assert converged and n_iter == 1
    # contrast: a non-equilibrium mixed profile moves
    tilted = mixed.copy()
    tilted[:4, [0, 1]] = [0.6, 0.4]
    X, *_ = replicator_dynamics(A, tilted, tol=1e-12, max_iter=50)
    assert np.abs(X - tilted).max() > 0.1


def test_strict_nash_equilibrium_attracts_nearby_strategies():
    """Pure clique labels with weak cross-clique edges are strict Nash equilibria, hence
    asymptotically stable: a perturbed profile returns to them. A pure profile that is not
    Nash (a player against its whole clique) is a rest point but not stable."""
    W = cliques([6, 6]).tolil()
    W[0, 6] = W[6, 0] = 0.2
    A = normalized_cut_scaling(sp.csr_matrix(W))
    labels = np.repeat([0, 1], 6)
    near = 0.7 * np.eye(2)[labels] + 0.15
    X, *_ = replicator_dynamics(A, near, tol=1e-10, max_iter=2000)
    np.testing.assert_allclose(X, np.eye(2)[labels], atol=1e-6)
    traitor = np.eye(2)[labels]
    traitor[2] = [0.0, 1.0]
    X, n_iter, *_ = replicator_dynamics(A, traitor, tol=1e-12, max_iter=10)
    np.testing.assert_array_equal(X, traitor)
    traitor[2] = [0.01, 0.99]         # the smallest push brings it back to its clique
    X, *_ = replicator_dynamics(A, traitor, tol=1e-10, max_iter=2000)
    assert X[2].argmax() == 0


@pytest.mark.parametrize("scaled", [True, False])
def test_total_payoff_never_decreases_on_symmetric_graph(scaled):
    """Baum-Eagon: for symmetric A, F(X) = tr(Xᵀ A X) grows along the replicator dynamics."""
    X, y = text_like(n_per=40, k=4, noise=0.4, seed=3)
    W = knn_graph(X, 6)
    A = normalized_cut_scaling(W) if scaled else W
    assert (A != A.T).nnz == 0
    rng = np.random.default_rng(3)
    Z = rng.random((X.shape[0], 4))
    payoffs = [float(np.sum((Z / Z.sum(1, keepdims=True)) * (A @ (Z / Z.sum(1, keepdims=True)))))]

    def record(t, S):
        payoffs.append(float(np.sum(S * (A @ S))))

    replicator_dynamics(A, Z, tol=0, max_iter=100, callback=record)
    steps = np.diff(payoffs)
    assert np.all(steps >= -1e-12 * payoffs[-1])
    assert payoffs[-1] > 1.5 * payoffs[0]              # and it really grew


# -- GTNMF on planted data --------------------------------------------------------------
def test_gtnmf_corrects_mislabelled_points_in_gaussian_blobs():
    X, y = blobs(n_per=100, k=3)
    Z, flipped = planted_memberships(y, 3, flip=0.10, seed=4)
    before = accuracy(y, Z.argmax(axis=1))
    model = GTNMF(metric="euclidean").fit(X, memberships=Z)
    after = accuracy(y, model.labels_)
    assert before <= 0.91
    assert after >= 0.98 and after > before
    assert model.n_changed_ >= 0.9 * flipped.size
    assert model.converged_ and model.n_iter_ == model.history_.size
    assert model.history_[-1] < model.tol


def test_gtnmf_corrects_mislabelled_sparse_text():
    X, y = text_like(n_per=80, k=4, seed=5)
    Z, flipped = planted_memberships(y, 4, flip=0.10, seed=5)
    before = accuracy(y, Z.argmax(axis=1))
    labels, strategies = refine(X, Z)
    after = accuracy(y, labels)
    assert before <= 0.91
    assert after >= 0.98 and after > before
    np.testing.assert_allclose(strategies.sum(axis=1), 1.0)
    assert np.mean(labels[flipped] == y[flipped]) >= 0.9


def test_gtnmf_uses_eq9_neighbour_counts_and_the_gt_graph():
    X, y = text_like(n_per=30, k=3, seed=6)
    sizes = np.array([60, 20, 10])                     # unbalanced NMF partition
    initial = np.repeat([0, 1, 2], sizes)
    Z = 0.1 + np.eye(3)[initial]
    model = GTNMF().fit(X, memberships=Z)
    expected_q = np.repeat([transcribed_q(60), transcribed_q(20), transcribed_q(10)], sizes)
    np.testing.assert_array_equal(model.n_neighbors_, expected_q)
    expected_A = normalized_cut_scaling(knn_graph(X, expected_q, metric="cosine", symmetrize="max"))
    np.testing.assert_allclose(model.payoff_.toarray(), expected_A.toarray())
    global_q = GTNMF(n_neighbors="log2").fit(X, memberships=Z).n_neighbors_
    np.testing.assert_array_equal(global_q, transcribed_q(90))


def test_gtnmf_is_deterministic_and_functional_form_agrees():
    X, y = text_like(seed=7)
    Z, _ = planted_memberships(y, 4, seed=7)
    a = GTNMF().fit(X, memberships=Z)
    b = clone(a).fit(X, memberships=Z.copy())
    np.testing.assert_array_equal(a.strategies_, b.strategies_)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_array_equal(a.history_, b.history_)
    labels, strategies = refine(X, Z)
    np.testing.assert_array_equal(labels, a.labels_)
    np.testing.assert_array_equal(strategies, a.strategies_)
    np.testing.assert_array_equal(GTNMF().fit_predict(X, memberships=Z), a.labels_)
    assert GTNMF(n_neighbors=5, tol=1e-3).get_params()["n_neighbors"] == 5


def test_gtnmf_does_not_modify_its_inputs():
    X, y = text_like(seed=8)
    Z, _ = planted_memberships(y, 4, seed=8)
    X0, Z0 = X.copy(), Z.copy()
    GTNMF().fit(X, memberships=Z)
    np.testing.assert_array_equal(Z, Z0)
    assert (X != X0).nnz == 0


def test_zero_membership_rows_start_uniform_and_follow_their_neighbours():
    X, y = text_like(n_per=40, k=3, seed=9)
    X = sp.vstack([X, sp.csr_matrix((1, X.shape[1]))]).tocsr()     # a document without terms
    y = np.append(y, -1)
    Z, _ = planted_memberships(y[:-1], 3, flip=0.0, seed=9)
    Z = np.vstack([Z, np.zeros((1, 3))])
    Z[5] = 0.0                                          # a normal document, no membership
    model = GTNMF().fit(X, memberships=Z)
    assert model.initial_labels_[5] == -1 and model.labels_[5] == y[5]
    assert model.initial_labels_[-1] == -1 and model.labels_[-1] == -1   # isolated: no cluster
    np.testing.assert_allclose(model.strategies_[-1], 1 / 3)
    assert model.n_neighbors_[5] == transcribed_q(X.shape[0])            # label -1: eq. 8


def test_gtnmf_accepts_nmf_estimators():
    X, y = text_like(n_per=30, k=3, seed=10)
    nmf = NMF(3, random_state=0, max_iter=50)
    model = GTNMF().fit(X, memberships=nmf)                         # unfitted: fit_transform(X)
    assert hasattr(nmf, "labels_")
    np.testing.assert_array_equal(model.initial_labels_, nmf.labels_)
    again = GTNMF().fit(X, memberships=nmf)                         # fitted: transform(X)
    assert accuracy(y, again.labels_) >= accuracy(y, nmf.labels_)
    assert accuracy(y, again.labels_) >= 0.95


def test_hard_memberships_warn_and_smoothing_makes_them_refinable():
    X, y = blobs(n_per=50, k=3, seed=11)
    Z, flipped = planted_memberships(y, 3, flip=0.1, seed=11)
    hard = np.eye(3)[Z.argmax(axis=1)]
    with pytest.warns(UserWarning, match="pure strategies are fixed points"):
        stuck = GTNMF(metric="euclidean").fit(X, memberships=hard)
    assert stuck.n_changed_ == 0
    smoothed = GTNMF(metric="euclidean", smoothing=0.3).fit(X, memberships=hard)
    assert accuracy(y, smoothed.labels_) > accuracy(y, hard.argmax(1))


def test_precomputed_graph_and_convergence_warning():
    A = cliques([5, 5])
    labels = np.repeat([0, 1], 5)
    Z = 0.6 * np.eye(2)[labels] + 0.2
    Z[0] = [0.3, 0.7]                                   # one mislabelled player
    model = GTNMF(metric="precomputed").fit(A, memberships=Z)
    np.testing.assert_array_equal(model.labels_, labels)
    assert model.n_changed_ == 1 and model.n_neighbors_ is None
    with pytest.warns(ConvergenceWarning, match="Maximum number of iterations 2"):
        GTNMF(metric="precomputed", max_iter=2, tol=0).fit(A, memberships=Z)


# -- errors --------------------------------------------------------------------------------
@pytest.fixture
def small():
    X, y = blobs(n_per=10, k=2, seed=17)
    Z = 0.1 + np.eye(2)[y]
    return X, Z


@pytest.mark.parametrize("make_z,match", [
    (lambda Z: Z[:-1], "memberships has 19 rows but X has 20 documents"),
    (lambda Z: Z - 0.5, "memberships must be non-negative"),
    (lambda Z: np.where(np.arange(Z.size).reshape(Z.shape) == 3, np.nan, Z), "NaN or infinite"),
    (lambda Z: Z[:, :1], "at least 2 clusters are needed"),
    (lambda Z: Z.argmax(axis=1), "must be 2-D"),
    (lambda Z: None, "GTNMF needs memberships"),
    (lambda Z: np.zeros_like(Z), "memberships are all zero"),   # gave one cluster silently
])
def test_bad_memberships(small, make_z, match):
    X, Z = small
    with pytest.raises(ValueError, match=match):
        GTNMF(metric="euclidean").fit(X, memberships=make_z(Z))


@pytest.mark.parametrize("params,match", [
    ({"n_neighbors": 20}, r"n_neighbors=20 must be smaller than the number of documents \(20\)"),
    ({"weight": "cosine"}, 'weight="cosine" needs metric="cosine"'),
])  # the other bad values: one table for every estimator in tests/test_common.py
def test_bad_parameters(small, params, match):
    X, Z = small
    with pytest.raises(ValueError, match=match):
        GTNMF(**{"metric": "euclidean", **params}).fit(X, memberships=Z)


def test_bad_data(small):
    X, Z = small
    bad = X.copy()
    bad[2, 1] = np.inf
    with pytest.raises(ValueError, match="X contains 1 NaN or infinite"):
        GTNMF(metric="euclidean").fit(bad, memberships=Z)
    with pytest.raises(ValueError, match="must be square"):
        GTNMF(metric="precomputed").fit(np.ones((20, 3)), memberships=Z)
    with pytest.raises(ValueError, match="must be non-negative"):
        GTNMF(metric="precomputed").fit(-np.ones((20, 20)), memberships=Z)
    with pytest.raises(ValueError, match="at least 2 documents"):
        GTNMF(metric="euclidean").fit(X[:1], memberships=Z[:1])
    with pytest.raises(ValueError, match="has 20 rows but there are 19 players"):
        replicator_dynamics(np.ones((20, 20)), Z[:19])


def test_fitted_estimator_whose_transform_is_not_memberships_is_refused():
    from sklearn.cluster import KMeans
    X, y = blobs(n_per=30, k=3, seed=19)
    km = KMeans(3, n_init=1, random_state=0).fit(X)   # transform = distances to centres
    with pytest.raises(ValueError, match="does not look like memberships"):
        GTNMF(metric="euclidean").fit(X, memberships=km)
    with pytest.raises(ValueError, match="not an estimator"):
        GTNMF(metric="precomputed").fit(cliques([3, 3]), memberships=km)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        GTNMF(metric="euclidean").fit(X, memberships=0.1 + np.eye(3)[y])
