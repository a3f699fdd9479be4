"""GNMF and Semantic-GNMF: a naive dense reference, the objective's properties, reductions
to NMF / Semantic-NMF, the graph plumbing and the estimator API."""

import time
import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from semnmf import NMF, SemanticNMF, nmi
from semnmf.models.gnmf import (GNMF, GraphProblem, SemanticGNMF, effective_graph_lambda)
from semnmf.models.init import initialize, initialize_context_factor
from semnmf.graphs.knn import knn_graph
from conftest import planted_corpus

EPS = 1e-30  # the updates' denominator guard (_solvers.mu.EPSILON)


# -- naive dense reference (module docstring of semnmf.models.gnmf) ------------------------
def reference_objective(X, Z, W, L, mu, M=None, Q=None, lam=0.0):
    """½‖X − ZWᵀ‖² + (λ/2)‖M − WQᵀ‖² + (μ/2) tr(Ẑᵀ L Ẑ), Ẑ = Z diag(‖w_k‖), all dense."""
    Zhat = Z * np.linalg.norm(W, axis=0)
    value = 0.5 * np.sum((X - Z @ W.T) ** 2) + 0.5 * mu * np.trace(Zhat.T @ L @ Zhat)
    if M is not None:
        value += 0.5 * lam * np.sum((M - W @ Q.T) ** 2)
    return value


def reference_gradients(X, Z, W, L, mu, M=None, Q=None, lam=0.0):
    """∇_Z F and ∇_W F of the reference objective, dense."""
    nu = np.sum(W * W, axis=0)
    s = np.einsum("ik,ik->k", Z, L @ Z)
    grad_Z = Z @ W.T @ W - X @ W + mu * (L @ Z) * nu
    grad_W = W @ (Z.T @ Z) - X.T @ Z + mu * W * s
    if M is not None:
        grad_W += lam * (W @ Q.T @ Q - M @ Q)
    return grad_Z, grad_W


def reference_step(X, Z, W, A, mu, M=None, Q=None, lam=0.0):
    """One sweep written from the formulas, with the Laplacian's parts D and A dense."""
    D = np.diag(A.sum(axis=1))
    nu = np.sum(W * W, axis=0)
    Z = Z * (X @ W + mu * (A @ Z) * nu) / (Z @ W.T @ W + mu * (D @ Z) * nu + EPS)
    s = np.einsum("ik,ik->k", Z, (D - A) @ Z)
    gram = Z.T @ Z + mu * np.diag(s)
    numerator = X.T @ Z
    if M is not None:
        gram = gram + lam * Q.T @ Q
        numerator = numerator + lam * M @ Q
    W = W * numerator / (W @ gram + EPS)
    if M is not None:
        Q = Q * (M.T @ W) / (Q @ W.T @ W + EPS)
    return Z, W, Q


def random_graph(n, density=0.15, seed=0):
    rng = np.random.default_rng(seed)
    B = sp.random(n, n, density=density, random_state=rng, format="csr")
    A = B.maximum(B.T).tocsr()
    A.setdiag(0)
    A.eliminate_zeros()
    return A


def random_problem(n=40, d=30, k=3, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.3, random_state=rng, format="csr")
    C = sp.random(d, d, density=0.3, random_state=rng, format="csr")
    M = (C + C.T).tocsr()
    Z = rng.random((n, k)) + 0.1
    W = rng.random((d, k)) + 0.1
    Q = rng.random((d, k)) + 0.1
    return X, M, Z, W, Q, random_graph(n, seed=seed + 100)


def quiet_fit(estimator, X, **fit_params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return estimator.fit(X, **fit_params)


# -- the problem against the dense reference -----------------------------------------------
@pytest.mark.parametrize("with_context", [False, True])
def test_step_and_objective_match_dense_reference(with_context):
    X, M, Z, W, Q, A = random_problem()
    mu, lam = 0.8, (0.6 if with_context else 0.0)
    problem = GraphProblem(X, Z.copy(), W.copy(), A, mu, M=M if with_context else None,
                           Q=Q.copy() if with_context else None, lam=lam)
    Xd, Md, Ad = X.toarray(), M.toarray(), A.toarray()
    L = np.diag(Ad.sum(axis=1)) - Ad
    Md_or_none = Md if with_context else None
    Zr, Wr, Qr = Z.copy(), W.copy(), (Q.copy() if with_context else None)
    assert problem.objective() == pytest.approx(
        reference_objective(Xd, Zr, Wr, L, mu, Md_or_none, Qr, lam), rel=1e-10)
    for _ in range(5):
        objective = problem.step()
        Zr, Wr, Qr = reference_step(Xd, Zr, Wr, Ad, mu, Md_or_none, Qr, lam)
        np.testing.assert_allclose(problem.Z, Zr, rtol=1e-10)
        np.testing.assert_allclose(problem.W, Wr, rtol=1e-10)
        if with_context:
            np.testing.assert_allclose(problem.Q, Qr, rtol=1e-10)
        assert objective == pytest.approx(
            reference_objective(Xd, Zr, Wr, L, mu, Md_or_none, Qr, lam), rel=1e-9)
    Zhat = problem.Z * np.linalg.norm(problem.W, axis=0)
    assert problem.graph_term() == pytest.approx(0.5 * np.trace(Zhat.T @ L @ Zhat), rel=1e-9)


def test_objective_is_invariant_to_the_scaling_of_the_factors():
    """F(Z C⁻¹, W C) = F(Z, W): Cai et al.'s unit-norm constraint built into F, so F has
    minimizers (the unconstrained GNMF objective shrinks along this path)."""
    X, M, Z, W, Q, A = random_problem(seed=1)
    c = np.array([4.0, 10.0, 25.0])
    values = []
    for Zs, Ws in [(Z, W), (Z / c, W * c)]:
        values.append(GraphProblem(X, Zs.copy(), Ws.copy(), A, 2.0).objective())
    assert values[1] == pytest.approx(values[0], rel=1e-10)
    # the unconstrained graph term tr(ZᵀLZ) of Cai et al. is not invariant
    L = sp.diags(np.asarray(A.sum(axis=1)).ravel()) - A
    assert np.trace((Z / c).T @ (L @ (Z / c))) < 0.1 * np.trace(Z.T @ (L @ Z))


@pytest.mark.parametrize("Estimator,kwargs", [
    (GNMF, {"graph_lam": 1.0}), (GNMF, {"graph_lam": 100.0}),
    (SemanticGNMF, {"lam": 1.0, "graph_lam": 10.0}),
    (SemanticGNMF, {"lam": 30.0, "graph_lam": 300.0})])
@pytest.mark.parametrize("seed", [0, 1])
def test_objective_non_increasing_every_iteration(Estimator, kwargs, seed):
    X, M, *_ , A = random_problem(n=60, d=40, k=4, seed=seed)
    fit_kwargs = {"A": A}
    if Estimator is SemanticGNMF:
        fit_kwargs["M"] = M
    model = quiet_fit(Estimator(4, init="random", max_iter=150, tol=0, random_state=seed,
                                **kwargs), X, **fit_kwargs)
    history = model.objective_history_
    assert len(history) == 151
    assert np.all(np.diff(history) <= 1e-10 * history[:-1]), np.diff(history).max()
    assert history[-1] < 0.9 * history[0]


@pytest.mark.parametrize("with_context", [False, True])
def test_kkt_conditions_at_convergence(with_context):
    """Z ⊙ ∇_Z F ≈ 0, W ⊙ ∇_W F ≈ 0 and ∇F ≳ 0 at the limit of the updates."""
    X, y = planted_corpus(n_per=12, k=3, d_per=8, seed=3)
    Xd = X.toarray()
    A = knn_graph(X, 4, weight="binary")
    Ad = A.toarray()
    L = np.diag(Ad.sum(axis=1)) - Ad
    rng = np.random.default_rng(0)
    C = sp.random(X.shape[1], X.shape[1], density=0.3, random_state=rng)
    M = (C + C.T).toarray() if with_context else None
    lam, mu = (0.5 if with_context else 0.0), 0.3
    Z, W = initialize(X, 3, "random", 0)
    Q = initialize_context_factor(M.T @ W, W) if with_context else None
    problem = GraphProblem(Xd, Z, W, A, mu, M=M, Q=Q, lam=lam)
    for _ in range(4000):
        problem.step()
    Q = problem.Q if with_context else None
    grad_Z, grad_W = reference_gradients(Xd, problem.Z, problem.W, L, mu, M, Q, lam)
    scale_Z = np.abs(problem.Z * (Xd @ problem.W)).max()
    scale_W = np.abs(problem.W * (Xd.T @ problem.Z)).max()
    assert np.abs(problem.Z * grad_Z).max() / scale_Z < 1e-3
    assert np.abs(problem.W * grad_W).max() / scale_W < 1e-3
    assert grad_Z.min() / np.abs(Xd @ problem.W).max() > -1e-3
    assert grad_W.min() / np.abs(Xd.T @ problem.Z).max() > -1e-3
    # the graph term is active: the solution is not plain NMF's
    assert problem.graph_term() > 0


# -- reductions -------------------------------------------------------------------------------
def test_lambda_zero_gives_nmf():
    X, M, Z, W, _, A = random_problem(n=50, d=35, k=3, seed=4)
    common = dict(init=(Z, W), max_iter=60, tol=0)
    nmf = quiet_fit(NMF(3, **common), X)
    gnmf = quiet_fit(GNMF(3, graph_lam=0.0, **common), X, A=A)
    np.testing.assert_array_equal(gnmf.components_, nmf.components_)
    np.testing.assert_array_equal(gnmf.objective_history_, nmf.objective_history_)
    np.testing.assert_array_equal(gnmf.labels_, nmf.labels_)


def test_graph_weight_zero_gives_semantic_nmf_and_lam_zero_gives_gnmf():
    X, M, Z, W, _, A = random_problem(n=50, d=35, k=3, seed=5)
    common = dict(init=(Z, W), max_iter=60, tol=0)
    snmf = quiet_fit(SemanticNMF(3, lam=2.0, **common), X, M=M)
    sgnmf = quiet_fit(SemanticGNMF(3, lam=2.0, graph_lam=0.0, **common), X, M=M, A=A)
    np.testing.assert_array_equal(sgnmf.components_, snmf.components_)
    np.testing.assert_array_equal(sgnmf.context_components_, snmf.context_components_)
    np.testing.assert_array_equal(sgnmf.objective_history_, snmf.objective_history_)
    gnmf = quiet_fit(GNMF(3, graph_lam=5.0, **common), X, A=A)
    sgnmf = quiet_fit(SemanticGNMF(3, lam=0.0, graph_lam=5.0, **common), X, M=M, A=A)
    np.testing.assert_allclose(sgnmf.components_, gnmf.components_, rtol=1e-12)
    np.testing.assert_allclose(sgnmf.objective_history_, gnmf.objective_history_, rtol=1e-12)


def test_relative_lambda_is_scale_free():
    """With lam_scale='relative' multiplying the graph by a constant changes nothing."""
    X, M, Z, W, _, A = random_problem(n=45, d=30, k=3, seed=6)
    common = dict(graph_lam=20.0, init=(Z, W), max_iter=40, tol=0)
    a = quiet_fit(GNMF(3, **common), X, A=A)
    b = quiet_fit(GNMF(3, **common), X, A=1000.0 * A)
    np.testing.assert_allclose(a.components_, b.components_, rtol=1e-6)
    assert b.graph_lambda_ == pytest.approx(a.graph_lambda_ / 1000)
    assert a.graph_lambda_ == pytest.approx(20.0 * A.shape[0] / A.sum())
    assert effective_graph_lambda(3.0, A, "absolute") == 3.0
    c = quiet_fit(GNMF(3, lam_scale="absolute", **common), X, A=A)
    assert c.graph_lambda_ == 20.0


def test_default_graph_is_the_binary_5nn_graph():
    X, y = planted_corpus(seed=7)
    built = GNMF(3, random_state=0).fit(X)
    expected = knn_graph(X, 5, weight="binary", symmetrize="max")
    assert (built.affinity_matrix_ != expected).nnz == 0
    given = GNMF(3, random_state=0).fit(X, A=expected)
    np.testing.assert_array_equal(given.components_, built.components_)
    heat = GNMF(3, weight="heat", n_neighbors=4, random_state=0).fit(X)
    np.testing.assert_allclose(heat.affinity_matrix_.toarray(),
                               knn_graph(X, 4, weight="heat").toarray())


@pytest.mark.parametrize("Estimator", [GNMF, SemanticGNMF])
@pytest.mark.parametrize("n_documents", [2, 4, 5])
def test_a_corpus_of_n_neighbors_documents_or_fewer_links_every_pair(Estimator, n_documents):
    X, _ = planted_corpus(seed=7)
    X = X[[0, 11, 22, 1, 12][:n_documents]]  # documents of the planted clusters, all with terms
    model = Estimator(2, random_state=0).fit(X)  # n_neighbors=5 >= n_documents
    expected = np.ones((n_documents, n_documents)) - np.eye(n_documents)
    np.testing.assert_array_equal(model.affinity_matrix_.toarray(), expected)
    assert np.isfinite(model.objective_) and set(model.labels_) <= {0, 1}


# -- behaviour --------------------------------------------------------------------------------
@pytest.mark.parametrize("Estimator", [GNMF, SemanticGNMF])
def test_recovers_planted_clusters(Estimator):
    X, y = planted_corpus(seed=2)
    model = Estimator(3, random_state=0).fit(X)
    assert nmi(y, model.labels_) > 0.95
    Z = model.fit_transform(X)
    np.testing.assert_allclose(np.linalg.norm(Z, axis=0), 1.0)
    np.testing.assert_array_equal(model.labels_, Z.argmax(axis=1))


def test_graph_term_helps_when_the_graph_knows_the_clusters():
    """Documents whose words are shared across topics (X alone is ambiguous) but whose
    graph, e.g. from document embeddings, links each document to its own topic."""
    rng = np.random.default_rng(0)
    k, n_per, d = 2, 30, 40
    y = np.repeat(np.arange(k), n_per)
    # weak topic signal in X: 2 topic words among 8 random shared words
    X = np.zeros((k * n_per, d))
    for i, c in enumerate(y):
        X[i, rng.choice(np.arange(10, d), 8, replace=False)] = 1.0
        X[i, c * 5 + rng.choice(5, 2, replace=False)] = 1.0
    X = sp.csr_matrix(X / np.linalg.norm(X, axis=1, keepdims=True))
    # ring graph inside each topic
    rows, cols = [], []
    for c in range(k):
        members = np.flatnonzero(y == c)
        for a, b in zip(members, np.roll(members, 1)):
            rows += [a, b]
            cols += [b, a]
    A = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(k * n_per,) * 2)
    plain, graph = [], []
    for seed in range(4):
        plain.append(nmi(y, NMF(k, init="random", random_state=seed).fit_predict(X)))
        graph.append(nmi(y, GNMF(k, graph_lam=100.0, init="random", random_state=seed)
                         .fit_predict(X, A=A)))
    assert np.mean(graph) > 0.9
    assert np.mean(graph) > np.mean(plain) + 0.3


def test_determinism_and_float32():
    X, y = planted_corpus(seed=4)
    a = SemanticGNMF(3, init="random", random_state=7).fit(X)
    b = SemanticGNMF(3, init="random", random_state=7).fit(X)
    np.testing.assert_array_equal(a.components_, b.components_)
    np.testing.assert_array_equal(a.objective_history_, b.objective_history_)
    model32 = GNMF(3, random_state=0)
    Z = model32.fit_transform(X.astype(np.float32))
    assert Z.dtype == np.float32 and model32.components_.dtype == np.float32
    model64 = GNMF(3, random_state=0).fit(X)
    assert nmi(model64.labels_, model32.labels_) == pytest.approx(1.0)
    np.testing.assert_allclose(model32.components_, model64.components_, rtol=1e-3, atol=1e-4)


def test_transform_uses_no_graph():
    X, y = planted_corpus(seed=5)
    model = GNMF(3, random_state=0).fit(X)
    Z_new = model.transform(X[:7])
    reference = NMF(3, random_state=0).fit(X)
    reference.components_ = model.components_     # same W: transform is NMF's
    np.testing.assert_allclose(Z_new, reference.transform(X[:7]), rtol=1e-10)
    assert np.mean(model.transform(X).argmax(axis=1) == model.labels_) > 0.95


def test_no_dense_n_by_n():
    """20,000 documents: memory stays O(nnz + n k), far below one n x n array (3.2 GB)."""
    n, d, k = 20_000, 300, 3
    rng = np.random.default_rng(0)
    X = sp.random(n, d, density=0.01, random_state=rng, format="csr")
    X.data[:] = 1.0
    i = np.arange(n)
    ring = (np.r_[i, (i + 1) % n], np.r_[(i + 1) % n, i])
    A = sp.csr_matrix((np.ones(2 * n), ring), shape=(n, n))
    start = time.perf_counter()
    tracemalloc.start()
    quiet_fit(SemanticGNMF(k, init="random", max_iter=5, random_state=0), X, A=A)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 100 * 2 ** 20, peak
    assert time.perf_counter() - start < 10


# -- bad input --------------------------------------------------------------------------------
def test_bad_graphs_and_parameters():
    X, _ = planted_corpus()
    n = X.shape[0]
    A = knn_graph(X, 3)
    with pytest.raises(ValueError, match=r"A has shape \(10, 10\) but X has 90 documents"):
        GNMF(3).fit(X, A=sp.eye(10))
    with pytest.raises(ValueError, match="A must be a square"):
        GNMF(3).fit(X, A=sp.random(n, n + 1, density=0.1))
    negative = A.copy()
    negative.data[0] = -1.0
    with pytest.raises(ValueError, match="non-negative similarities"):
        GNMF(3).fit(X, A=negative)
    with pytest.raises(ValueError, match="symmetric"):
        GNMF(3).fit(X, A=sp.triu(A).tocsr())
    nan = A.copy()
    nan.data[0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        SemanticGNMF(3).fit(X, A=nan)
    # n_neighbors >= n documents: the neighbours are all the others (not an error)
    every = GNMF(3, n_neighbors=n, max_iter=5).fit(X).affinity_matrix_
    assert (every != knn_graph(X, n - 1, weight="binary", symmetrize="max")).nnz == 0
    with pytest.raises(ValueError, match="graph_lam"):
        SemanticGNMF(3, graph_lam=np.inf).fit(X)
    with pytest.raises(ValueError, match="larger than the number of documents"):
        GNMF(n + 1).fit(X)
    bad_X = X.copy()
    bad_X.data[0] = -1.0
    with pytest.raises(ValueError, match="Negative values"):
        GNMF(3).fit(bad_X)


def test_isolated_documents_are_reported():
    X, _ = planted_corpus(seed=8)
    X = sp.vstack([X, sp.csr_matrix((1, X.shape[1]))]).tocsr()
    A = knn_graph(X, 3)
    A = A.tolil()
    A[0, :] = 0
    A[:, 0] = 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        labels = GNMF(3, random_state=0).fit_predict(X, A=A.tocsr())
    messages = [str(w.message) for w in caught]
    # document 0 lost its edges; the empty last document is reported once, as having no term
    assert any(m.startswith("1 document(s) have no neighbour in the graph") for m in messages)
    assert any(m.startswith("1 document(s) have no term") for m in messages)
    assert len(messages) == 2
    assert labels[-1] == -1 and labels[0] >= 0


def test_graph_models_have_no_partial_fit_nor_row_blocks():
    """SemanticGNMF inherited SemanticNMF's partial_fit and row-block engine, which fitted
    without the graph term (the same W for any graph_lam)."""
    X = sp.random(30, 20, density=0.3, random_state=0, format="csr")
    for Estimator in (GNMF, SemanticGNMF):
        assert not hasattr(Estimator(3), "partial_fit")
        with pytest.raises(TypeError, match="row blocks"):
            Estimator(3).fit([X[:15], X[15:]])
